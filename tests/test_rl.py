"""The learned-policy layer: compiled RLScheduler episodes, the Gymnasium environment, the kernel
policy (numpy/compiled, .npz files), replays with a learned priority, and training (with torch)."""
import json
import os

import numpy as np
import pytest

import pbf
from pbf.errors import ConfigError
from pbf.rl.evaluate import RLSCHEDULER_TABLE, evaluate_windows
from pbf.rl.kernel import FORMAT, LAYERS, VERSION, KernelPolicy
from pbf.rl.trace import RLTrace

from helpers import write_small_swf

PAD = np.array([0, 1, 1, 1, 1, 1, 1, 0], dtype=np.float32)


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory):
    return write_small_swf(tmp_path_factory.mktemp("rl") / "small.swf")


def _sim_of(trace, window, backfill=False, compat=False, skip=False, metric=0):
    from pbf import _rlsim
    return _rlsim.Sim(trace.submit, trace.run, trace.req, trace.nodes, trace.procs, trace.features,
                      total_nodes=trace.total_nodes, ppn=trace.procs_per_node, max_procs=trace.max_procs,
                      cap=window, compat=compat, backfill=backfill, skip=skip, skip_time=360, metric=metric)


# ---------------------------------------------------------------- RLScheduler's published heuristics
@pytest.mark.parametrize("backfill", [False, True])
@pytest.mark.parametrize("name,file", [("lublin-1", "rlsched_lublin_256.swf.gz"),
                                       ("sdsc-sp2", "SDSC-SP2-1998-4.2-cln.swf.gz")])
def test_heuristics_reproduce_rlscheduler_table(shared_trace, name, file, backfill):
    # compat mode is RLScheduler's simulator: its README's heuristic means to the printed digit
    got = evaluate_windows(str(shared_trace(file)), {h: h for h in ("fcfs", "wfp3", "unicep", "sjf", "f1")},
                           backfill=backfill)
    for h, values in got.items():
        assert round(float(np.mean(values)), 2) == pytest.approx(RLSCHEDULER_TABLE[name][backfill][h], abs=0.006)


def test_compat_loading_follows_rlscheduler(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 8\n; MaxNodes: 8\n"
                    "2 10 -1 0 1 -1 -1 1 100 -1 1 1 1 1 1 1 -1 -1\n"        # run 0: dropped
                    "1 5 -1 50 2 -1 -1 4 -1 -1 1 1 1 1 1 1 -1 -1\n"         # no request: request = run
                    "3 20 -1 -1 1 -1 -1 1 -1 -1 1 1 1 1 1 1 -1 -1\n")       # run -1: 10 s
    t = RLTrace.load(path, compat=True)
    assert list(t.job_id) == [1, 3]            # sorted by id, the zero-length job dropped
    assert list(t.procs) == [4, 1]             # max(requested, allocated)
    assert list(t.req) == [50, -1] and list(t.run) == [50, 10]
    assert t.dropped["nonpositive_runtime"] == 1
    d = RLTrace.load(path)                     # pbf's rules: cleaned (both jobs without a run time go)
    assert list(d.job_id) == [1]


@pytest.mark.parametrize("compat,backfill", [(True, False), (True, True), (False, False), (False, True)])
def test_compiled_episodes_equal_the_python_reference(small_trace, compat, backfill):
    # pbf.reference.rlscheduler (RLScheduler's loop in plain Python) and the compiled episodes give
    # the same observations, masks, start times and bounded slowdowns under random picks, and the
    # same heuristic figures
    from pbf.reference.rlscheduler import HEURISTICS, ReferenceJobSelectionEnv
    from pbf.rl.env import HEURISTICS as CODES
    t = RLTrace.load(small_trace, compat=compat)
    ref = ReferenceJobSelectionEnv(t, compat=compat, backfill=backfill, baselines=False)
    sim = _sim_of(t, 600, backfill=backfill, compat=compat)
    obs, mask = np.zeros(1024, np.float32), np.zeros(128, np.int8)
    rng = np.random.default_rng(11)
    decisions = crowded = 0
    for first in (0, 450, 880):
        o = ref.reset(first, 600)
        sim.reset(first, 600)
        sim.observe(obs, mask)
        while o is not None:
            assert np.array_equal(o, obs)
            assert np.array_equal(ref.action_masks(), mask.astype(bool))
            crowded += len(ref.queue) > 128
            r = int(rng.integers(len(ref.visible)))
            o = ref.step(r)
            sim.step(r, obs, mask)
            decisions += 1
        assert sim.done
        assert ref.starts().tolist() == sim.starts().tolist()
        assert sim.value() == pytest.approx(ref.value(), rel=1e-12)
        for name in HEURISTICS:
            sim.reset(first, 600)
            assert sim.run_heuristic(CODES[name]) == pytest.approx(ref.heuristic(first, 600, name), rel=1e-12)
    assert decisions > 300 and crowded > 50, "the windows must show more than 128 queued jobs at times"


def test_episode_scores_are_the_engines():
    # The episodes sort by the engine's priority keys (ext/policy.pxd, whose Python twins are
    # pbf.plugins.priorities); in compat mode only RLScheduler's quirks differ (docs/engine.md).
    import math

    from pbf import _rlsim
    from pbf.plugins import priorities as P
    from pbf.rl.env import HEURISTICS
    rng = np.random.default_rng(5)
    twins = {"sjf": P.SJF(), "smallest": P.Smallest(), "f1": P.F1(), "f2": P.F2(), "wfp3": P.WFP3(),
             "unicep": P.UNICEP()}
    cases = 0
    for _ in range(400):
        req, procs = int(rng.integers(1, 10**6)), int(rng.integers(1, 2049))
        submit = 0 if rng.random() < 0.1 else int(rng.integers(1, 10**8))
        now = submit + int(rng.integers(0, 10**6))
        for name, twin in twins.items():
            code = HEURISTICS[name]
            assert _rlsim.heuristic_score(code, req, procs, submit, now) == twin.key(req, procs, submit, now), name
            compat = _rlsim.heuristic_score(code, req, procs, submit, now, compat=True)
            if name in ("wfp3", "unicep"):
                # RLScheduler reads a waiting job's start time (-1) as the current time
                assert compat == twin.key(req, procs, submit, -1), name
            elif name == "f2" and submit == 0:
                assert compat == -math.inf      # log10(0), unguarded as in RLScheduler
            else:
                assert compat == twin.key(req, procs, submit, now), name
            cases += 1
        # FCFS: the engine's key is 0 with the submit time as first tie-break, the episodes' the submit time
        assert _rlsim.heuristic_score(HEURISTICS["fcfs"], req, procs, submit, now) == submit
    assert cases == 400 * len(twins)
    # a requested time of 0 (kept by RLScheduler's loader, rejected by the engine) reads as 0.1 in F1
    assert _rlsim.heuristic_score(HEURISTICS["f1"], 0, 4, 100, 200, compat=True) == \
        math.log10(0.1) * 4 + 870 * math.log10(100)
    with pytest.raises(ValueError):
        _rlsim.heuristic_score(7, 1, 1, 1, 1)


# ---------------------------------------------------------------- the environment
gym = pytest.importorskip("gymnasium", reason="the rl extra (gymnasium) is not installed")
from pbf.rl.env import JobSelectionEnv, VecJobSelection  # noqa: E402


@pytest.mark.parametrize("kw", [{}, {"compat": "rlscheduler"}, {"backfill": True}, {"skip": True},
                                {"compat": "rlscheduler", "backfill": True, "skip": True},
                                {"metric": "utilisation"}])
def test_check_env(small_trace, kw):
    from gymnasium.utils.env_checker import check_env
    check_env(JobSelectionEnv(small_trace, window=64, **kw), skip_render_check=True)


def _episode(env, seed, actions_seed, picks=None):
    rng = np.random.default_rng(actions_seed)
    obs, info = env.reset(seed=seed)
    rewards, observations = [], [obs]
    done = False
    while not done:
        a = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, r, done, trunc, step_info = env.step(a)
        if picks is not None:
            picks.append(step_info["job"])
        rewards.append(r)
        observations.append(obs)
    return env.schedule(), rewards, observations, dict(info, **step_info)


@pytest.mark.parametrize("kw", [{}, {"backfill": True}, {"compat": "rlscheduler", "skip": True}])
def test_deterministic_under_a_seed(small_trace, kw):
    env = JobSelectionEnv(small_trace, window=100, **kw)
    a = _episode(env, 7, 1)
    b = _episode(env, 7, 1)
    assert a[0].tolist() == b[0].tolist() and a[1] == b[1] and a[3]["start"] == b[3]["start"]
    assert all(np.array_equal(x, y) for x, y in zip(a[2], b[2]))
    c = _episode(env, 8, 1)
    assert c[3]["start"] != a[3]["start"] or c[0].tolist() != a[0].tolist()


def test_reward_is_terminal_and_matches_the_metric(small_trace):
    env = JobSelectionEnv(small_trace, window=80)
    starts, rewards, _, info = _episode(env, 3, 2)
    assert all(r == 0.0 for r in rewards[:-1])
    t = env.trace
    first = info["start"]
    sub, run = t.submit[first:first + 80], t.run[first:first + 80]
    bsld = np.maximum(1.0, (starts - sub + run) / np.maximum(run, 10))
    assert (starts >= sub).all()
    assert rewards[-1] == pytest.approx(-bsld.mean())


def test_masks_never_admit_a_pad_row(small_trace):
    for kw in ({}, {"skip": True}, {"compat": "rlscheduler", "backfill": True}):
        env = JobSelectionEnv(small_trace, window=300, **kw)
        rng = np.random.default_rng(0)
        obs, _ = env.reset(seed=11)
        done = False
        while not done:
            m = env.action_masks()
            rows = obs.reshape(128, 8)
            pad = (rows == PAD).all(axis=1)
            assert not (m & pad).any()
            assert m.sum() == min(env.sim.queued, 128) + (1 if kw.get("skip") and env.sim.queued < 128 else 0) \
                or (kw.get("skip") and m.sum() == env.sim.queued)   # a masked (pivot) skip row
            obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(m))))


def test_invalid_action_falls_back_without_raising(small_trace):
    env = JobSelectionEnv(small_trace, window=50)
    env.reset(seed=0)
    masked = int(np.flatnonzero(~env.action_masks())[0])
    same = JobSelectionEnv(small_trace, window=50)
    same.reset(seed=0)
    for bad in (masked, -3, 999):
        _, _, _, _, info = env.step(bad)
        assert info["invalid_action"] is True
        _, _, _, _, info2 = same.step(int(np.argmax(same.action_masks())))    # the documented fallback
        assert info2["invalid_action"] is False
    assert env.schedule().tolist() == same.schedule().tolist()
    with pytest.raises(ConfigError):
        JobSelectionEnv(small_trace, window=50, metric="nope")


def test_vector_env_equals_single_envs(small_trace):
    vec = VecJobSelection(small_trace, 3, seed=5, window=60, backfill=True)
    obs = vec.reset()
    singles = []
    for i in range(3):
        e = JobSelectionEnv(small_trace, window=60, backfill=True)
        o, _ = e.reset(options={"start": int(vec.starts[i])})
        assert np.array_equal(o, obs[i])
        singles.append(e)
    rng = np.random.default_rng(0)
    active = [True] * 3
    while any(active):        # until each first window ends (then the vector env starts another)
        acts = np.array([int(rng.choice(np.flatnonzero(m))) for m in vec.action_masks()])
        before = [vec.sims[i].starts() for i in range(3)]
        obs, rewards, dones, infos = vec.step(acts)
        for i, e in enumerate(singles):
            if not active[i]:
                continue
            o, r, d, _, _ = e.step(int(acts[i]))
            assert d == dones[i] and r == pytest.approx(rewards[i])
            if d:
                assert np.array_equal(o, infos[i]["terminal_observation"])
                assert infos[i]["metric"] == pytest.approx(-r)
                active[i] = False
            else:
                assert np.array_equal(o, obs[i])
                assert len(before[i]) == len(e.schedule())


def test_env_schedule_equals_an_engine_replay_of_its_decisions(small_trace):
    # without backfilling, a decision sequence is a strict priority order: replaying the window
    # with the env's start order as the priority gives the env's start times
    env = JobSelectionEnv(small_trace, window=200)
    picks = []
    starts, _, _, info = _episode(env, 4, 9, picks)
    t = env.trace
    first = info["start"]
    sl = slice(first, first + 200)
    rank = np.empty(200, dtype=np.float64)
    rank[np.asarray(picks) - first] = np.arange(200)
    neg = np.full(200, -1)
    table = pbf.JobTable.from_arrays(
        job_id=np.arange(200), submit=t.submit[sl], wait=neg, run=t.run[sl], alloc_procs=t.nodes[sl],
        avg_cpu=neg.astype(float), used_mem=neg.astype(float), req_procs=t.nodes[sl], req_time=t.req[sl],
        req_mem=neg.astype(float), status=np.ones(200), user=neg, group=neg, executable=neg, queue=neg,
        partition=neg, prev_job=neg, think_time=neg)
    cfg = pbf.ReplayConfig(units=t.total_nodes, priority=lambda jobs, now: rank[jobs.index],
                           backfill=pbf.Backfill(enabled=False))
    res = pbf.replay(table, cfg)
    got = np.asarray(res.jobs["start"])[np.argsort(np.asarray(res.jobs["id"]))]
    assert got.tolist() == starts.tolist()


# ---------------------------------------------------------------- the kernel policy
def test_compiled_kernel_equals_numpy():
    k = KernelPolicy.random(4)
    x = np.random.default_rng(1).random((300, 8)).astype(np.float32)
    assert np.allclose(k.scores(x), k.scores_numpy(x), atol=1e-5)
    # a row's score does not depend on the other rows (blocks of 128)
    assert np.allclose(k.scores(x[:7]), k.scores(x)[:7], atol=0)


def test_run_policy_equals_a_python_greedy_loop(small_trace):
    from pbf import _rlsim
    k = KernelPolicy.random(2)
    t = RLTrace.load(small_trace)
    sim = _sim_of(t, 150, backfill=True)
    sim.reset(400, 150)
    fast = _rlsim.run_policy(sim, k.compiled)
    fast_starts = sim.starts()
    sim.reset(400, 150)
    obs, mask = np.zeros(1024, np.float32), np.zeros(128, np.int8)
    sim.observe(obs, mask)
    done = False
    while not done:
        done = sim.step(k.act(obs, mask), obs, mask)
    assert sim.value() == pytest.approx(fast)
    assert sim.starts().tolist() == fast_starts.tolist()


def test_npz_round_trip_and_malformed_files(tmp_path):
    k = KernelPolicy.random(0, meta={"name": "x", "norm": {"req": 100.0}})
    path = tmp_path / "m.npz"
    k.save(path)
    back = KernelPolicy.load(path)
    assert back.meta == k.meta and all(np.array_equal(a[0], b[0]) for a, b in zip(k.weights, back.weights))

    def bad(name, **arrays):
        p = tmp_path / name
        base = {"format": np.array(FORMAT), "version": np.array(VERSION), "meta": np.array("{}")}
        for i, (w, b) in enumerate(k.weights):
            base[f"w{i}"], base[f"b{i}"] = w, b
        base.update(arrays)
        np.savez(p, **{key: v for key, v in base.items() if v is not None})
        return p

    cases = [(bad("v.npz", version=np.array(99)), "version 99"),
             (bad("f.npz", format=np.array("other")), "format"),
             (bad("s.npz", w1=np.zeros((16, 32), np.float32)), "'w1' has shape (16, 32)"),
             (bad("m.npz", b2=None), "'b2' is missing"),
             (bad("n.npz", w0=np.full((8, 32), np.nan, np.float32)), "finite"),
             (bad("j.npz", meta=np.array("{not json")), "not JSON"),
             (bad("o.npz", w3=np.array([[object()]] * 8, dtype=object)), "not a readable .npz")]
    not_zip = tmp_path / "z.npz"
    not_zip.write_text("hello")
    cases.append((not_zip, "not a readable .npz"))
    for p, text in cases:
        with pytest.raises(ConfigError, match=text.replace("(", r"\(").replace(")", r"\)")):
            KernelPolicy.load(p)
    with pytest.raises(ConfigError, match="no such file"):
        KernelPolicy.load(tmp_path / "missing.npz")
    assert len(LAYERS) == 4


def test_sampled_act_is_seeded_and_masked():
    k = KernelPolicy.random(1)
    obs = np.random.default_rng(0).random(1024).astype(np.float32)
    mask = np.zeros(128, bool)
    mask[[3, 9, 40]] = True
    a = KernelPolicy(k.weights, sample=True, seed=5)
    b = KernelPolicy(k.weights, sample=True, seed=5)
    picks = [a.act(obs, mask) for _ in range(50)]
    assert picks == [b.act(obs, mask) for _ in range(50)]
    assert set(picks) <= {3, 9, 40}
    assert k.act(obs, mask) in (3, 9, 40)


def test_replay_with_a_learned_priority(small_trace, tmp_path):
    from pbf.cli import main
    k = KernelPolicy.random(3, meta={"name": "r"})
    path = tmp_path / "r.npz"
    k.save(path)
    table = pbf.read_swf(small_trace)
    res = pbf.replay(table, pbf.ReplayConfig(priority=f"learned:{path}"))
    assert res.summary["jobs"]["completed"] == len(table)
    assert res.summary["config"]["priority"] == f"learned:{path}"
    again = pbf.replay(table, pbf.ReplayConfig(priority=KernelPolicy.load(path)))
    assert np.array_equal(np.asarray(again.jobs["start"]), np.asarray(res.jobs["start"]))
    assert main(["replay", str(small_trace), "--priority", f"learned:{path}", "--json"]) == 0
    assert main(["replay", str(small_trace), "--priority", "learned:" + str(tmp_path / "none.npz")]) == 2


def test_learned_priority_in_the_engine():
    k = KernelPolicy.random(3)
    eng = pbf.Engine(pbf.Cluster(units=8), priority=k, backfill=pbf.Backfill(enabled=False))
    jobs = [pbf.Job(id=i, submit=0, units=u, requested=r) for i, (u, r) in enumerate([(8, 100), (1, 10), (2, 50)])]
    starts = eng.advance(0, [pbf.Submit(j) for j in jobs])
    keys = k.keys(pbf.plugins.JobsView.of({"id": np.arange(3), "submit": np.zeros(3, int),
                                           "units": np.array([8, 1, 2]), "requested": np.array([100, 10, 50]),
                                           "user": np.zeros(3, int)}, np.arange(3), free_units=8), 0)
    first = int(np.lexsort((np.arange(3), keys))[0])
    assert starts[0].job_id == first


# ---------------------------------------------------------------- training (torch)
def test_torch_kernel_equals_numpy_kernel():
    pytest.importorskip("torch", reason="torch is not installed (the rl extra's training part)")
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed")
    import torch

    from pbf.rl.train import KernelExtractor, _export_actor
    torch.manual_seed(0)
    ext = KernelExtractor()
    x = torch.rand(5, 1024)
    with torch.no_grad():
        logits = ext.forward_actor(x).numpy()
    k = _export_actor(ext, {})
    assert np.allclose(k.scores(x.numpy().reshape(-1, 8)).reshape(5, 128), logits, atol=1e-5)


def test_training_writes_a_loadable_model(small_trace, tmp_path):
    pytest.importorskip("torch", reason="torch is not installed (the rl extra's training part)")
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed")
    from pbf.cli import main
    out = tmp_path / "run"
    assert main(["train", "job-selection", "--trace", str(small_trace), "--out", str(out), "--epochs", "2",
                 "--trajectories", "4", "--envs", "2", "--window", "32", "--batch-size", "64",
                 "--checkpoint-every", "1", "--quiet"]) == 0
    k = KernelPolicy.load(out / "model.npz")
    assert k.meta["kind"] == "job-selection" and k.meta["window"] == 32
    rows = (out / "training.csv").read_text().splitlines()
    assert len(rows) == 3 and rows[0].startswith("epoch,")
    assert sorted(os.listdir(out / "checkpoints")) == ["epoch0001.npz", "epoch0002.npz"]
    assert json.loads((out / "config.json").read_text())["epochs"] == 2


def test_warm_start_clones_a_heuristic_before_ppo(small_trace, tmp_path):
    pytest.importorskip("torch", reason="torch is not installed (the rl extra's training part)")
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed")
    from pbf.rl.train import TrainConfig, train_job_selection
    cfg = TrainConfig(small_trace, tmp_path / "ws", epochs=1, trajectories=4, envs=2, window=32, batch_size=64,
                      warm_start="f1", reward_scale="f1", checkpoint_every=1)
    k = train_job_selection(cfg)
    ws = k.meta["warm_start"]
    assert ws["teacher"] == "f1" and ws["decisions"] > 1000 and ws["agreement"] > 0.5
    assert sorted(os.listdir(tmp_path / "ws" / "checkpoints")) == ["epoch0000.npz", "epoch0001.npz"]
    with pytest.raises(ConfigError):
        TrainConfig(small_trace, tmp_path / "x", warm_start="fcfs")


def test_validation_windows_are_apart_from_test_and_held_out_windows():
    from pbf.rl.evaluate import RLS_TEST_STARTS, held_out_starts, validation_starts
    assert held_out_starts(10_000) is None
    n = 202_871
    taken = list(RLS_TEST_STARTS) + list(held_out_starts(n))
    for window, after, count in ((1024, 10_000, 10), (1024, 0, 10)):
        v = validation_starts(n, window=window, after=after, count=count)
        assert len(set(v)) == count and all(s >= after for s in v)
        assert all(s + window <= t or s >= t + 1024 for s in v for t in taken)
    v = validation_starts(10_000, window=256, count=20)          # the Lublin traces: gaps between test windows
    assert all(s + 256 <= t or s >= t + 1024 for s in v for t in RLS_TEST_STARTS)
    with pytest.raises(ConfigError):
        validation_starts(10_000, window=1024, count=10, after=7000)


def test_avoided_job_ranges_are_never_drawn(small_trace):
    from pbf.rl.env import WindowFilter
    avoid = [(300, 420), (700, 701), (1000, 1100)]
    env = VecJobSelection(small_trace, 4, seed=3, window=40, avoid_jobs=avoid)
    starts = {env._draw_start(env.rng, None)[0] for _ in range(40_000)}
    assert all(s + 40 <= a or s >= b for s in starts for a, b in avoid)
    # every start that touches no avoided job is drawn: the gaps are not shrunk
    free = {s for s in range(env.start_lo, env.start_hi) if all(s + 40 <= a or s >= b for a, b in avoid)}
    assert starts == free
    wf = WindowFilter("quantile", sample=100, seed=0)
    single = JobSelectionEnv(small_trace, window=40, avoid_jobs=avoid, window_filter=wf)
    for seed in range(10):
        _, info = single.reset(seed=seed)
        assert all(info["start"] + 40 <= a or info["start"] >= b for a, b in avoid)
    # without ranges the draws are the ones of earlier versions (same seed, same windows)
    plain, rng = VecJobSelection(small_trace, 1, seed=5, window=40), np.random.default_rng(5)
    assert [plain._draw_start(plain.rng, None)[0] for _ in range(50)] == \
        [int(rng.integers(plain.start_lo, plain.start_hi)) for _ in range(50)]
    for bad in ([(5, 5)], [(-1, 4)], [(1, 2, 3)], ["ab"]):
        with pytest.raises(ConfigError, match="avoid_jobs"):
            VecJobSelection(small_trace, 1, window=40, avoid_jobs=bad)
    with pytest.raises(ConfigError, match="misses"):
        VecJobSelection(small_trace, 1, window=40, avoid_jobs=[(0, 1500)])


def test_held_apart_ranges_are_the_held_out_and_validation_windows():
    from pbf.rl.evaluate import held_apart_ranges, held_out_starts, validation_starts
    n = 59_715
    r = held_apart_ranges(n, 30)
    assert [a for a, _ in r] == list(held_out_starts(n)) + list(validation_starts(n, window=1024, count=30))
    assert all(b - a == 1024 for a, b in r)
    with pytest.raises(ConfigError, match="held-out"):
        held_apart_ranges(10_000, 10)


def test_training_holds_apart_its_validation_and_held_out_windows(tmp_path, capsys):
    pytest.importorskip("torch", reason="torch is not installed (the rl extra's training part)")
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed")
    from pbf.cli import main
    from pbf.rl.evaluate import held_apart_ranges
    trace = write_small_swf(tmp_path / "long.swf", n=12_000)
    out = tmp_path / "apart"
    assert main(["train", "job-selection", "--trace", str(trace), "--out", str(out), "--epochs", "1",
                 "--trajectories", "4", "--envs", "2", "--window", "32", "--batch-size", "64",
                 "--checkpoint-every", "0", "--hold-apart", "3", "--quiet"]) == 0
    k = KernelPolicy.load(out / "model.npz")
    assert k.meta["held_apart"] == {"held_out_windows": 10, "validation_windows": 3, "window": 1024}
    assert json.loads((out / "config.json").read_text())["hold_apart"] == 3
    # pbf experiment rlscheduler says which held-out windows such a model may have trained on
    from pbf.rl.evaluate import held_out_starts
    from pbf.studies.rlscheduler import _windows_trained_on
    assert _windows_trained_on(k.meta, str(trace), held_out_starts(12_000)) == 0
    kept = held_apart_ranges(12_000, 3)
    probes = [s for s in range(0, 10_900, 97) if all(s + 1024 <= a or s >= b for a, b in kept)][:5]
    assert len(probes) == 5 and _windows_trained_on(k.meta, str(trace), probes) == 5
    from pbf.rl.train import TrainConfig, train_backfilling
    with pytest.raises(ConfigError, match="hold_apart"):
        TrainConfig(trace, tmp_path / "x", hold_apart=-1)
    with pytest.raises(ConfigError, match="backfilling"):
        train_backfilling(TrainConfig(trace, tmp_path / "y", hold_apart=3, reward_scale="none"))
    assert not (tmp_path / "y").exists()
    short = write_small_swf(tmp_path / "short.swf", n=3000)
    assert _windows_trained_on(k.meta, str(short), probes) == 0       # another trace: none of its jobs
    assert main(["train", "job-selection", "--trace", str(short), "--out", str(tmp_path / "z"), "--hold-apart", "3",
                 "--quiet"]) != 0
    assert "no held-out windows" in capsys.readouterr().err
    assert not (tmp_path / "z").exists()


def test_window_filter_keeps_windows_in_range(small_trace):
    from pbf.rl.env import WindowFilter
    wf = WindowFilter("quantile", sample=200, seed=0)
    env = JobSelectionEnv(small_trace, window=40, window_filter=wf)
    lo, hi = wf.bounds(env)
    assert 0 < lo < hi
    for seed in range(20):
        _, info = env.reset(seed=seed)
        assert lo < info["baselines"]["sjf"] < hi
        assert info["baselines"]["sjf"] == pytest.approx(env.baseline_of(info["start"], "sjf"))
    with pytest.raises(ConfigError, match="no window"):
        JobSelectionEnv(small_trace, window=40, window_filter=WindowFilter("absolute", 1e9, 2e9)).reset(seed=0)
    with pytest.raises(ConfigError):
        WindowFilter("median")


def test_shipped_models_load():
    from pbf.rl.kernel import shipped_models
    models = shipped_models()
    assert {"lublin-1", "lublin-1-backfill", "sdsc-sp2", "sdsc-sp2-backfill"} <= set(models)
    for name in models:
        k = KernelPolicy.load(name)
        assert k.kind in ("job-selection", "backfilling")
        if k.kind == "job-selection":
            # most are trained in compat mode; hpc2n-backfill in the default mode (docs/rl.md says so)
            assert isinstance(k.meta["compat"], bool) and k.meta["name"] == name


@pytest.mark.parametrize("trace,backfill", [(t, b) for t in ("lublin-1", "sdsc-sp2", "hpc2n", "lublin-2")
                                            for b in (False, True)])
def test_shipped_model_beats_the_best_heuristic_on_its_row(shared_trace, trace, backfill):
    # Every shipped job-selection model, greedy on all 10 of RLScheduler's test windows of its Table V
    # row (compat rules, as `pbf experiment rlscheduler`), must be below the best of the five heuristics
    # of that row (FCFS, WFP3, UNICEP, SJF, F1). A row takes under a second, so no window is left out.
    # Rows without a shipped model are skipped (docs/rl.md lists them).
    from pbf.rl.evaluate import RLS_TRACES
    from pbf.studies.rlscheduler import HEURISTIC_COLUMNS, rlscheduler_table, shipped_model_for
    name = shipped_model_for(trace, backfill)
    if name is None:
        pytest.skip(f"no shipped model for {trace} {'with' if backfill else 'without'} backfilling")
    path = shared_trace(RLS_TRACES[trace])
    (row,) = rlscheduler_table(trace_dir=os.path.dirname(path), traces=(trace,), backfill=(backfill,))["rows"]
    assert row["model"] == name
    best = min(HEURISTIC_COLUMNS, key=lambda h: row["pbf"][h])
    assert row["pbf"]["rl"] < row["pbf"][best], (name, row["pbf"])
