"""Learned backfilling: the compiled RLBackfilling episodes against their plain-Python reference, the
Gymnasium environment, RLBackfilling's published EASY figures, the learned backfill order in
replays, and training (with torch)."""
import numpy as np
import pytest

import pbf
from pbf import _rlsim
from pbf.errors import ConfigError
from pbf.reference.rlbackfilling import ReferenceBackfillEnv
from pbf.rl.backfill_env import BASELINES, ORDERS, REQ_SCALE
from pbf.rl.kernel import KernelPolicy
from pbf.rl.trace import RLTrace
from pbf.studies.rlbackfilling import learned_value, rlb_test_starts

from helpers import write_small_swf

gym = pytest.importorskip("gymnasium", reason="the rl extra (gymnasium) is not installed")
from pbf.rl.backfill_env import BackfillEnv, VecBackfill  # noqa: E402

SDSC_STARTS = (10173, 25552, 19140, 8850, 11508, 2714, 46188, 12214, 39853, 43214)


@pytest.fixture(scope="module")
def small_trace(tmp_path_factory):
    return write_small_swf(tmp_path_factory.mktemp("rlbf") / "small.swf", n=2000, procs=64, seed=3)


@pytest.fixture(scope="module")
def loaded(small_trace):
    return RLTrace.load(small_trace, compat="rlbackfilling")


def _sim(t, head="fcfs", guarded=False, compat=True, stop=False, req=None, cap=600):
    return _rlsim.BackfillSim(t.submit, t.run, t.req if req is None else req, t.nodes, t.procs, t.total_nodes,
                              t.procs_per_node, float(t.max_procs),
                              float(t.norm["req"]) if compat else REQ_SCALE, cap, ORDERS[head], guarded, 0.0,
                              compat, 0 if stop else 1, stop)


# ---------------------------------------------------------------- compiled == reference
@pytest.mark.parametrize("compat,guarded,stop,head", [(True, False, False, "fcfs"), (True, True, False, "fcfs"),
                                                      (True, False, False, "sjf"), (False, False, True, "fcfs"),
                                                      (False, True, True, "sjf"), (False, False, False, "f1")])
def test_compiled_episodes_equal_the_python_reference(loaded, compat, guarded, stop, head):
    t = loaded
    ref = ReferenceBackfillEnv(t, head=head, guarded=guarded, compat=compat, baselines=False, stop=stop,
                               act_size=0 if stop else 1, req_scale=None if compat else REQ_SCALE)
    sim = _sim(t, head, guarded, compat, stop)
    obs, mask = np.zeros(768, np.float32), np.zeros(128, np.int8)
    rng = np.random.default_rng(7)
    decisions = 0
    for first in (0, 300, 900, 1390):
        o = ref.reset(first, 500)
        sim.reset(first, 500)
        sim.observe(obs, mask)
        while o is not None:
            assert np.allclose(o, obs, atol=1e-6)
            rows = len(ref.visible) + (1 if stop else 0)
            assert int(mask.sum()) == rows and mask[:rows].all()
            r = int(rng.integers(rows))
            o = ref.step(r)
            sim.step(r, obs, mask)
            decisions += 1
        assert sim.done
        assert ref.starts().tolist() == sim.starts().tolist()
        assert sim.value() == pytest.approx(ref.value(), rel=1e-12)
    assert decisions > 50, "the windows must offer choices for the comparison to mean anything"


@pytest.mark.parametrize("compat", [True, False])
def test_heuristics_equal_the_python_reference(loaded, compat):
    ref = ReferenceBackfillEnv(loaded, compat=compat, baselines=False)
    sim = _sim(loaded, compat=compat)
    for first in (0, 700):
        for head in ORDERS:
            for order in ("fcfs", "sjf", "largest"):
                assert sim.run_heuristic(first, 500, ORDERS[head], ORDERS[order]) == \
                    pytest.approx(ref.heuristic(first, 500, head, order), rel=1e-12)


# ---------------------------------------------------------------- RLBackfilling's published figures
def test_test_windows_follow_gym_seeding(shared_trace):
    t = RLTrace.load(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"), compat="rlbackfilling")
    assert len(t) == 59705
    assert rlb_test_starts(len(t)) == SDSC_STARTS
    from pbf.rl.evaluate import RLS_TEST_STARTS
    assert rlb_test_starts(10_000) == RLS_TEST_STARTS     # RLScheduler's windows come the same way


def test_easy_columns_near_table4(shared_trace):
    # FCFS+EASY and F1+EASY land within 5% of Table 4; the others are explained in docs/validation.md
    t = RLTrace.load(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"), compat="rlbackfilling")
    sim = _sim(t, cap=1024)
    mean = lambda head: float(np.mean([sim.run_heuristic(s, 1024, ORDERS[head], 0) for s in SDSC_STARTS]))
    assert mean("fcfs") == pytest.approx(292.82, rel=0.05)
    assert mean("f1") == pytest.approx(162.33, rel=0.05)
    assert round(mean("fcfs"), 2) == 289.21 and round(mean("sjf"), 2) == 207.24


# ---------------------------------------------------------------- the Gymnasium environment
@pytest.mark.parametrize("kw", [dict(compat="rlbackfilling"), dict(), dict(guarded=True),
                                dict(head="sjf", compat="rlbackfilling", guarded=True)])
def test_check_env(small_trace, kw):
    from gymnasium.utils.env_checker import check_env
    env = BackfillEnv(small_trace, window=128, **kw)
    check_env(env, skip_render_check=True)


def _episode(env, seed, start=None):
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options=None if start is None else {"start": start})
    total, steps, jobs = 0.0, 0, []
    while True:
        m = env.action_masks()
        obs, r, done, _, step_info = env.step(int(rng.choice(np.flatnonzero(m))))
        jobs.append(step_info["job"])
        total += r
        steps += 1
        if done:
            return env.schedule(), total, steps, step_info, jobs


def test_deterministic_under_a_seed(small_trace):
    a = _episode(BackfillEnv(small_trace, window=200), 5)
    b = _episode(BackfillEnv(small_trace, window=200), 5)
    assert a[0].tolist() == b[0].tolist() and a[1] == b[1] and a[4] == b[4]


def test_reward_is_terminal_and_relative_to_easy_sjbf(small_trace):
    env = BackfillEnv(small_trace, window=200, compat="rlbackfilling", baselines=("easy",))
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=2)
    assert set(info["baselines"]) == {"easy-sjbf", "easy"}
    rewards = []
    while True:
        obs, r, done, _, step_info = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        rewards.append(r)
        if done:
            break
    assert all(r == 0.0 for r in rewards[:-1])
    base = info["baselines"]["easy-sjbf"]
    assert rewards[-1] == pytest.approx((base - step_info["metric"]) / base)
    assert base == pytest.approx(env.baseline_of(info["start"], "easy-sjbf"))


def test_masks_pads_and_the_stop_row(small_trace):
    for compat, stop in (("rlbackfilling", False), (None, True)):
        env = BackfillEnv(small_trace, window=200, compat=compat)
        obs, _ = env.reset(seed=1)
        rows = obs.reshape(128, 6)
        m = env.action_masks()
        n = int(m.sum())
        assert m[:n].all() and not m[n:].any()
        assert (rows[n:] == np.array([0, 1, 1, 1, 1, 0], np.float32)).all()
        visible = env.sim.visible()
        assert len(visible) == n
        if stop:
            assert visible[-1] == -1 and rows[n - 1].tolist() == [0, 0, 0, 0, 0, 1]
            assert (rows[:n - 1, 5] == 0).all()
        else:
            assert (visible >= 0).all() and n >= 2      # compat asks only with two candidates


def test_invalid_action_falls_back_without_raising(small_trace):
    env = BackfillEnv(small_trace, window=200)
    env.reset(seed=4)
    _, _, _, _, info = env.step(127 if not env.action_masks()[127] else -5)
    assert info["invalid_action"]
    with pytest.raises(ConfigError):
        BackfillEnv(small_trace, window=200, head="nope")
    with pytest.raises(ConfigError):
        BackfillEnv(small_trace, window=200, compat="rlbackfilling", act_size=0)


def test_step_after_the_end_raises(small_trace):
    env = BackfillEnv(small_trace, window=100)
    _episode(env, 3)
    with pytest.raises(ConfigError):
        env.step(0)


def test_vector_env_equals_single_envs(small_trace):
    vec = VecBackfill(small_trace, 3, seed=11, window=150)
    obs = vec.reset()
    starts = [info["start"] for info in vec.reset_infos]
    envs = [BackfillEnv(small_trace, window=150) for _ in range(3)]
    for e, s, o in zip(envs, starts, obs):
        o1, _ = e.reset(options={"start": s})
        assert np.array_equal(o1, o)
    rng = np.random.default_rng(1)
    for _ in range(300):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in vec.action_masks()])
        obs, rewards, dones, infos = vec.step(acts)
        for i, e in enumerate(envs):
            o, r, d, _, info = e.step(int(acts[i]))
            assert d == dones[i] and r == pytest.approx(rewards[i], abs=1e-6)
            if d:
                assert np.array_equal(o, infos[i]["terminal_observation"])
                e.reset(options={"start": infos[i]["next"]["start"]})
            else:
                assert np.array_equal(o, obs[i])


def test_guarded_candidates_end_before_the_shadow(loaded):
    # guarded, relax 0: every candidate offered ends (by its request) before the head's shadow time
    sim = _sim(loaded, guarded=True, compat=False, stop=True)
    obs, mask = np.zeros(768, np.float32), np.zeros(128, np.int8)
    sim.reset(100, 500)
    sim.observe(obs, mask)
    seen = 0
    while not sim.done:
        rows = obs.reshape(128, 6)
        n = int(mask.sum()) - 1
        assert (rows[:n, 3] < 1.0 - 1e-6).all()     # requested / (gap + 1) < 1: ends in the window
        seen += n
        sim.step(0, obs, mask)
    assert seen > 0


# ---------------------------------------------------------------- learned policies and replays
def test_run_backfill_policy_equals_a_python_greedy_loop(loaded):
    k = KernelPolicy.random(3, {"kind": "backfilling", "compat": False})
    sim = _sim(loaded, compat=False, stop=True)
    sim.reset(200, 500)
    fast = _rlsim.run_backfill_policy(sim, k.compiled)
    sim.reset(200, 500)
    obs, mask = np.zeros(768, np.float32), np.zeros(128, np.int8)
    sim.observe(obs, mask)
    while not sim.done:
        sim.step(k.act(obs, mask), obs, mask)
    assert sim.value() == fast
    assert learned_value(loaded, k, 200, window=500) == fast


def test_kernel_kinds_and_files(tmp_path):
    k = KernelPolicy.random(1, {"kind": "backfilling"})
    assert k.nf == 6 and k.weights[0][0].shape == (6, 32)
    k.save(tmp_path / "bf.npz")
    back = KernelPolicy.load(tmp_path / "bf.npz")
    assert back.kind == "backfilling" and np.array_equal(back.weights[0][0], k.weights[0][0])
    x = np.random.default_rng(0).random((200, 6)).astype(np.float32)
    assert np.allclose(back.scores(x), back.scores_numpy(x), atol=1e-5)
    with pytest.raises(ConfigError, match="backfill order"):
        pbf.ReplayConfig(units=64, priority=f"learned:{tmp_path / 'bf.npz'}").scoring()
    js = KernelPolicy.random(1)
    js.save(tmp_path / "js.npz")
    with pytest.raises(ConfigError, match="priority"):
        pbf.ReplayConfig(units=64, backfill=pbf.Backfill(order=f"learned:{tmp_path / 'js.npz'}")).scoring()


def _table(small_trace):
    return pbf.read_swf(small_trace)


@pytest.mark.parametrize("priority", ["fcfs", "sjf"])
def test_replay_with_a_learned_order_never_delays_a_reservation(small_trace, tmp_path, priority):
    k = KernelPolicy.random(5, {"kind": "backfilling", "compat": False})
    k.save(tmp_path / "bf.npz")
    table = _table(small_trace)
    res = {}
    for workers in (1, 3):
        cfg = pbf.ReplayConfig(units=64, priority=priority, workers=workers,
                               backfill=pbf.Backfill(order=f"learned:{tmp_path / 'bf.npz'}"))
        res[workers] = pbf.replay(table, cfg)
    jobs = res[1].jobs
    start, planned = np.asarray(jobs["start"]), np.asarray(jobs["first_reservation"])
    had = planned >= 0
    assert had.sum() > 20
    if priority == "fcfs":
        assert (start[had] <= planned[had]).all(), "a reservation was delayed"
    assert res[1].summary["jobs"]["backfilled"] > 0
    for col in ("start", "end", "how"):
        assert np.array_equal(np.asarray(res[1].jobs[col]), np.asarray(res[3].jobs[col]))
    # the order matters: the same replay in queue order differs
    plain = pbf.replay(table, pbf.ReplayConfig(units=64, priority=priority))
    assert not np.array_equal(np.asarray(plain.jobs["start"]), start)


def test_learned_order_in_the_engine():
    # 2 units free while job 2 waits: jobs 3 (1 unit) and 4 (2 units) cannot both start; the one the
    # model scores higher does, and the negated model picks the other
    from pbf.rl.chooser import LearnedBackfill
    k = KernelPolicy.random(2, {"kind": "backfilling"})
    flipped = KernelPolicy([(w, b) for w, b in k.weights[:3]] + [(-k.weights[3][0], -k.weights[3][1])], k.meta)
    picked = []
    for policy in (k, flipped):
        eng = pbf.Engine(pbf.Cluster(units=8), backfill=pbf.Backfill(order=LearnedBackfill(policy)))
        jobs = [pbf.Job(id=1, submit=0, units=6, requested=100), pbf.Job(id=2, submit=0, units=8, requested=100),
                pbf.Job(id=3, submit=0, units=1, requested=50), pbf.Job(id=4, submit=0, units=2, requested=30)]
        started = {s.job_id for s in eng.advance(0, [pbf.Submit(j) for j in jobs])}
        assert 1 in started and 2 not in started and len(started & {3, 4}) == 1
        picked.append(started & {3, 4})
    assert picked[0] != picked[1]


def test_torch_kernel_equals_numpy_kernel():
    th = pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed")
    from pbf.rl.train import KernelExtractor, _export_actor
    ex = KernelExtractor(features=6, critic="flat")
    x = th.rand(3, 128 * 6)
    logits = ex.forward_actor(x).detach().numpy()
    assert ex.forward_critic(x).shape == (3, 8)
    k = _export_actor(ex, {"kind": "backfilling"})
    assert np.allclose(k.scores(x.numpy().reshape(-1, 6)).reshape(3, 128), logits, atol=1e-5)


def test_training_writes_a_loadable_model(small_trace, tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("sb3_contrib", reason="sb3-contrib is not installed")
    from pbf.rl.train import TrainConfig, train_backfilling
    cfg = TrainConfig(str(small_trace), str(tmp_path / "out"), epochs=2, trajectories=4, window=128, envs=2,
                      batch_size=64, checkpoint_every=1)
    policy = train_backfilling(cfg)
    back = KernelPolicy.load(tmp_path / "out" / "model.npz")
    assert back.kind == "backfilling" and back.meta["stop"] and back.meta["req_scale"] == REQ_SCALE
    assert np.allclose(back.weights[0][0], policy.weights[0][0])
    assert (tmp_path / "out" / "training.csv").read_text().splitlines()[0].startswith(
        "epoch,steps,episodes,metric_mean,easy_sjbf_mean")


@pytest.mark.parametrize("trace,file", [("sdsc-sp2", "SDSC-SP2-1998-4.2-cln.swf.gz"),
                                        ("lublin-1", "rlsched_lublin_256.swf.gz"),
                                        ("hpc2n", "HPC2N-2002-2.2-cln.swf.gz")])
def test_shipped_models_beat_easy_with_actual_run_times(shared_trace, trace, file):
    # on RLBackfilling's test windows, greedy: below FCFS+EASY and below FCFS+EASY with every job's
    # actual run time as its request (EASY proper, the default mode's; on the Lublin traces, which
    # have no requests, RLBackfilling's EASY is that already)
    from pbf.rl.kernel import shipped_models
    from pbf.studies.rlbackfilling import SHIPPED
    if SHIPPED[trace] not in shipped_models():
        pytest.skip(f"no shipped backfilling model for {trace}")
    t = RLTrace.load(shared_trace(file), compat="rlbackfilling")
    starts = rlb_test_starts(len(t))
    policy = KernelPolicy.load(SHIPPED[trace])
    learned = np.mean([learned_value(t, policy, s) for s in starts])
    easy = np.mean([_sim(t, cap=1024).run_heuristic(s, 1024, 0, 0) for s in starts])
    assert learned < easy
    if trace != "lublin-1":
        proper_ar = _sim(t, cap=1024, req=t.run, compat=False)
        assert learned < np.mean([proper_ar.run_heuristic(s, 1024, 0, 0) for s in starts])
    else:
        assert (t.req == t.run).all()       # no requests: EASY is EASY-AR


def test_select_chooses_a_backfilling_checkpoint_on_windows_apart_from_the_tests(shared_trace, tmp_path):
    # python -m pbf.rl.select on a backfilling run: validation windows overlap no test window, the
    # lower validation mean is chosen, and the test figures are those of the experiment
    import shutil

    from pbf.rl.select import select_backfilling_run
    path = shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz")
    (tmp_path / "checkpoints").mkdir()
    shutil.copy(_shipped("rlbf-sdsc-sp2"), tmp_path / "model.npz")
    KernelPolicy.random(0, {"kind": "backfilling", "name": "random"}).save(tmp_path / "checkpoints" / "epoch0001.npz")
    r = select_backfilling_run(tmp_path, path)
    assert len(r["validation"]["starts"]) == 10
    assert all(abs(v - u) >= 1024 for v in r["validation"]["starts"] for u in r["test_starts"])
    assert r["chosen"] == min(r["val"], key=r["val"].get) == str(tmp_path / "model.npz")
    assert r["test"]["fcfs+rlbf"][r["chosen"]] == pytest.approx(139.77, abs=0.01)
    assert r["heuristics"]["test"]["fcfs+pbf-easy-ar"] == pytest.approx(169.40, abs=0.01)


def test_select_refuses_backfilling_candidates_of_different_heads(shared_trace, tmp_path):
    import shutil

    from pbf.rl.select import select_backfilling_run
    (tmp_path / "checkpoints").mkdir()
    shutil.copy(_shipped("rlbf-sdsc-sp2"), tmp_path / "model.npz")
    KernelPolicy.random(0, {"kind": "backfilling", "head": "sjf"}).save(tmp_path / "checkpoints" / "epoch0001.npz")
    with pytest.raises(ConfigError, match="different heads"):
        select_backfilling_run(tmp_path, shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))


def _shipped(name):
    from pbf.rl.kernel import shipped_models
    return shipped_models()[name]


def test_baseline_names():
    assert set(BASELINES) >= {"easy", "easy-sjbf", "easy-largest"}


def test_env_schedule_equals_a_replay_of_its_decisions(tmp_path):
    # default mode, guarded: the candidates are EASY's (end by the shadow time or fit in the extra
    # nodes). An agent that always starts the candidate of best rank makes, pass after pass, the
    # decisions of pbf's EASY pass trying the jobs after the reservation in rank order; with no two
    # events at the same instant (the environment takes events one at a time) the schedules agree.
    n, units = 400, 32
    rng = np.random.default_rng(5)
    submit = np.cumsum(rng.integers(1, 4000, n)) * 7 + 11
    run = rng.integers(1, 60_000, n) * 3 + 1
    req = run + rng.integers(0, 90_000, n)
    size = rng.choice([1, 2, 3, 4, 8, 16, 32], n)
    lines = [f"; MaxProcs: {units}", f"; MaxNodes: {units}"]
    lines += [f"{i + 1} {submit[i]} -1 {run[i]} {size[i]} -1 -1 {size[i]} {req[i]} -1 1 1 1 1 1 1 -1 -1"
              for i in range(n)]
    path = tmp_path / "no-ties.swf"
    path.write_text("\n".join(lines) + "\n")
    t = RLTrace.load(path, compat="rlbackfilling")
    rank = rng.permutation(n).astype(float)
    sim = _sim(t, guarded=True, compat=False, stop=True, cap=n)
    sim.reset(0, n)
    obs, mask = np.zeros(768, np.float32), np.zeros(128, np.int8)
    sim.observe(obs, mask)
    choices = 0
    while not sim.done:
        jobs = sim.visible()[:-1]                  # the last row is the stop row: never taken
        sim.step(int(np.argmin(rank[jobs])), obs, mask)
        choices += 1
    assert choices > 30
    cfg = pbf.ReplayConfig(units=units, priority="fcfs",
                           backfill=pbf.Backfill(order=lambda jobs, now: rank[jobs.index]))
    res = pbf.replay(pbf.read_swf(path), cfg)
    got = np.asarray(res.jobs["start"])[np.argsort(np.asarray(res.jobs["id"]))]
    assert got.tolist() == sim.starts().tolist()
    plain = pbf.replay(pbf.read_swf(path), pbf.ReplayConfig(units=units, priority="fcfs"))
    assert np.asarray(plain.jobs["start"]).tolist() != got.tolist(), "the rank must change the schedule"


def test_experiment_rlbackfilling(shared_trace, tmp_path, capsys):
    import json

    from pbf.cli import main
    path = shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz")
    k = KernelPolicy.random(4, {"kind": "backfilling", "compat": False, "name": "random-bf"})
    k.save(tmp_path / "bf.npz")
    out = tmp_path / "table.json"
    assert main(["experiment", "rlbackfilling", "--trace", str(path.parent), "--policy", str(tmp_path / "bf.npz"),
                 "--samples", "1", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "289.21 / 292.82" in text and "random-bf" in text
    result = json.loads(out.read_text())
    sdsc = result["rows"][0]
    assert sdsc["starts"] == list(SDSC_STARTS) and sdsc["model"] == "random-bf"
    t = RLTrace.load(path, compat="rlbackfilling")
    assert sdsc["pbf"]["fcfs+rlbf"] == pytest.approx(np.mean([learned_value(t, k, s) for s in SDSC_STARTS]))
    assert {"fcfs+rlbf~sampled", "sjf+rlbf~sampled"} <= set(sdsc["pbf"])
    with pytest.raises(ConfigError, match="not a backfilling"):
        from pbf.studies.rlbackfilling import rlbackfilling_table
        rlbackfilling_table(str(path.parent), model=KernelPolicy.random(1))


def test_learned_backfill_shadow():
    # two running jobs ending at 100 (4 units) and 300 (4 units), 2 free; the head needs 8
    from pbf.plugins import JobsView
    from pbf.rl.chooser import LearnedBackfill
    lb = LearnedBackfill(KernelPolicy.random(0, {"kind": "backfilling"}))
    cols = {"id": np.arange(5), "submit": np.array([0, 0, 10, 10, 20]), "units": np.array([4, 4, 8, 1, 2]),
            "requested": np.array([100, 300, 50, 40, 400]), "user": np.zeros(5, int)}
    running = JobsView.of(cols, [0, 1], start=np.array([0, 0]))
    jobs = JobsView.of(cols, [2, 3, 4], free_units=2, running=running)
    assert lb.shadow(jobs, 50) == (300, 290.0)
    x = lb.features(jobs, 50)
    assert x[1, 3] == pytest.approx(40 / (300 + 1 - 50 + 1))
    assert x[2, 4] == pytest.approx(1 - 1e-5) and x[1, 4] == pytest.approx(0.5)
    assert x[:, 1] == pytest.approx(np.array([50, 40, 400]) / 86400)
