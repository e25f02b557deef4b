"""Co-allocation: the reference's seven tests (a = 0 identity, the analytic 2/3 rate, work
conservation, rates and capacity at every event, determinism, Hedge's convergence and bound, no
slowdown when the lent cores cannot overload a node), the policies and the CLI."""
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import replayer
from pbf._coalloc import Coalloc
from pbf.coalloc import CoAllocation, Hedge, cpu_use, hedge_regret_bound
from pbf.codes import How, JobState
from pbf.errors import ConfigError

SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"


def table_of(submit, units, run, req=None, cpu=None):
    submit, units, run = (np.asarray(x, dtype=np.int64) for x in (submit, units, run))
    cols = dict(submit=submit, units=units, run=run, req_time=run if req is None else np.asarray(req))
    if cpu is not None:
        cols["avg_cpu"] = np.asarray(cpu, dtype=np.float64) * run
    return pbf.JobTable.from_arrays(**cols)


@st.composite
def traces(draw):
    n = draw(st.integers(1, 40))
    units = draw(st.integers(2, 48))
    submit = np.cumsum(draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)))
    size = np.array([draw(st.integers(1, units)) for _ in range(n)])
    run = np.array(draw(st.lists(st.integers(1, 400), min_size=n, max_size=n)))
    req = run + np.array(draw(st.lists(st.integers(0, 200), min_size=n, max_size=n)))
    cpu = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)))
    node = draw(st.sampled_from([1, 2, 4, 8]))
    backfill = pbf.Backfill(reservations=draw(st.sampled_from([1, 2, None])))
    trigger = draw(st.sampled_from(["event", "interval"]))
    return table_of(submit, size, run, req, cpu), units, node, backfill, trigger


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_lending_nothing_reproduces_the_plain_schedule(tr):
    table, units, node, backfill, trigger = tr
    cfg = dict(units=units, backfill=backfill, trigger=trigger)
    plain = pbf.replay(table, pbf.ReplayConfig(**cfg))
    co = pbf.replay(table, pbf.ReplayConfig(**cfg, coalloc=CoAllocation("fixed", 0.0, node_cores=node)))
    for key in ("start", "end", "how", "state"):
        assert np.array_equal(co.jobs[key], plain.jobs[key]), key


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces(), st.sampled_from(["fixed", "asax", "hedge", "exp3"]), st.floats(0, 0.5), st.integers(0, 3))
def test_work_is_conserved_and_nodes_never_overloaded(tr, policy, beta, seed):
    table, units, node, backfill, trigger = tr
    co = CoAllocation(policy, 0.6 if policy == "fixed" else 0.0, beta=beta, seed=seed, node_cores=node,
                      interval=0 if seed % 2 else 100)
    r = _replay_checked(table, pbf.ReplayConfig(units=units, backfill=backfill, trigger=trigger, coalloc=co))
    c = r.summary["coalloc"]
    assert c["work_conservation_error"] < 1e-6
    assert c["violations"] == 0
    done = r.jobs["state"] == JobState.JS_DONE
    assert done.all()
    # nobody runs faster than alone; a job ends within a second of its work (ends are whole seconds)
    assert (r.jobs["end"] - r.jobs["start"] >= table.run[np.lexsort((table.job_id, table.submit))]).all()


class _CheckedCoalloc(Coalloc):
    # co-allocation with the core's per-update node checks on (rates in (0, 1], CPU within cores);
    # turned on once enabled, which starts from a fresh state
    def enable(self, *args, **kwargs):
        super().enable(*args, **kwargs)
        self.check(True)


def _replay_checked(table, cfg):
    # a replay with the node checks on
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(replayer, "Coalloc", _CheckedCoalloc)
        return pbf.replay(table, cfg)


def test_the_two_thirds_rate():
    # a node of 4 cores: the primary on all 4 (u = 1) lends half; a 2-core secondary (u = 1) makes
    # the node's demand 6 for 4 cores: both run at 2/3, so 300 s of work take 450 s
    t = table_of([0, 20], [4, 2], [1000, 300], cpu=[1.0, 1.0])
    r = pbf.replay(t, pbf.ReplayConfig(units=4, coalloc=CoAllocation("fixed", 0.5, node_cores=4)))
    assert list(r.jobs["start"]) == [0, 20] and r.jobs["how"][1] == How.HOW_COALLOC
    assert r.jobs["end"][1] == 20 + 450
    # the primary: 20 s alone, 450 s at 2/3 (300 s of work), then 680 s alone
    assert r.jobs["end"][0] == 20 + 450 + 680


def test_light_jobs_lending_half_never_slow_anyone():
    rng = np.random.default_rng(3)
    n = 300
    t = table_of(np.sort(rng.integers(0, 20000, n)), rng.integers(1, 9, n), rng.integers(60, 3000, n),
                 cpu=rng.uniform(0.05, 0.5, n))
    plain = pbf.replay(t, pbf.ReplayConfig(units=32, coalloc=CoAllocation("fixed", 0.0, node_cores=4)))
    r = pbf.replay(t, pbf.ReplayConfig(units=32, coalloc=CoAllocation("fixed", 0.5, node_cores=4)))
    c = r.summary["coalloc"]
    assert c["secondary_jobs"] > 0 and c["primaries_slowed"] == 0.0 and c["primary_slowdown_p95"] == 1.0
    solo = t.run[np.lexsort((t.job_id, t.submit))]
    assert (r.jobs["end"] - r.jobs["start"] == solo).all()
    assert c["utilisation_useful"] >= plain.summary["coalloc"]["utilisation_useful"]
    assert r.metrics.awt <= plain.metrics.awt


def test_learned_replays_are_deterministic_for_a_seed():
    t = pbf.read_swf(SAMPLE)
    runs = [pbf.replay(t, pbf.ReplayConfig(coalloc=CoAllocation("asax", seed=s))) for s in (1, 1, 2)]
    assert np.array_equal(runs[0].jobs["end"], runs[1].jobs["end"])
    assert runs[0].summary["coalloc"] == runs[1].summary["coalloc"]
    assert not np.array_equal(runs[0].jobs["end"], runs[2].jobs["end"])


def test_hedge_finds_the_best_expert_within_its_bound():
    rng = np.random.default_rng(0)
    E, T = 10, 3000
    means = np.linspace(0.2, 0.8, E)
    h = Hedge(E)
    for _ in range(T):
        h.update(np.clip(means + rng.uniform(-0.2, 0.2, E), 0, 1))
    assert h.probabilities()[0] > 0.99
    assert 0 <= h.regret <= hedge_regret_bound(T, E)
    fixed = Hedge(E, rate=np.sqrt(8 * np.log(E) / T))
    for _ in range(T):
        fixed.update(np.clip(means + rng.uniform(-0.2, 0.2, E), 0, 1))
    assert fixed.regret <= hedge_regret_bound(T, E, anytime=False)


def test_compiled_hedge_stays_within_its_bound():
    t = pbf.read_swf(SAMPLE)
    c = pbf.replay(t, pbf.ReplayConfig(coalloc=CoAllocation("hedge", node_cores=8))).summary["coalloc"]
    learner = c["learner"]
    assert learner["decisions"] > 200 and learner["regret"] <= learner["regret_bound"]
    assert abs(sum(learner["weights"]) - 1) < 1e-9


def test_cpu_use_from_the_trace_and_synthetic():
    t = table_of([0, 1, 2], [1, 1, 1], [100, 100, 0], cpu=[0.5, 2.0, 0.3])
    order = np.arange(3)
    use, n = cpu_use(t, order)
    assert n == 2 and use[0] == 0.5 and use[1] == 1.0 and 0 < use[2] <= 1
    syn, n = cpu_use(t, order, "synthetic")
    assert n == 0 and np.array_equal(syn, cpu_use(t, order, "synthetic")[0])
    assert cpu_use(t, order, 0.4)[0].tolist() == [0.4] * 3
    draws = cpu_use(table_of(np.arange(20000), np.ones(20000), np.zeros(20000)), np.arange(20000), "synthetic")[0]
    assert abs(draws.mean() - 0.5) < 0.01 and abs(draws.var() - 0.05) < 0.005      # Beta(2, 2)


def test_parse_and_errors():
    assert CoAllocation.parse("off") is None
    assert CoAllocation.parse("fixed:0.3") == CoAllocation("fixed", 0.3)
    assert CoAllocation.parse("learned:beta=0.1,interval=600,node_cores=beocat") == CoAllocation(
        "asax", beta=0.1, interval=600, node_cores="beocat")
    for text, msg in [("fixed", "needs a fraction"), ("fixed:1.5", "fraction must be in"),
                      ("asax:color=red", "unknown option"), ("greedy", "expected off, fixed:A")]:
        with pytest.raises(ConfigError, match=msg):
            CoAllocation.parse(text)
    with pytest.raises(ConfigError, match="coalloc must be a pbf.CoAllocation or None"):
        pbf.ReplayConfig(coalloc="asax")


def test_cli_coalloc(capsys):
    from pbf.cli import main
    assert main(["replay", str(SAMPLE), "--coalloc", "fixed:0.5,node_cores=8", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["coalloc"]["policy"] == "fixed:0.5" and s["coalloc"]["secondary_jobs"] > 0
    assert main(["replay", str(SAMPLE), "--coalloc", "asax"]) == 0
    assert "co-alloc     asax:" in capsys.readouterr().out
    assert main(["replay", str(SAMPLE), "--coalloc", "nope", "--quiet"]) == 2


def test_experiment_runs_and_writes_its_table(tmp_path, capsys):
    from pbf.cli import main
    from pbf.studies.coalloc import POLICIES, coalloc_experiment
    res = coalloc_experiment(str(tmp_path), beocat_jobs=1500, policies=POLICIES[:2] + POLICIES[4:5])
    assert {r["trace"] for r in res["rows"]} == {"Beocat-like"}
    assert len(res["skipped"]) == 2 and "SDSC-SP2" in res["skipped"][0]        # not in tmp_path
    none = [r for r in res["rows"] if r["policy"] == "none"]
    assert all(r["share_coallocated"] == 0 and r["utilisation_change"] == 0 for r in none)
    assert main(["experiment", "coalloc", "--trace", str(tmp_path), "--jobs", "800", "--out",
                 str(tmp_path / "out"), "--quiet"]) == 0
    assert "Beocat-like   high  asax" in capsys.readouterr().out
    assert (tmp_path / "out" / "coalloc.json").exists()


# ---------------------------------------------------------------- the embedding API

def _drive(eng, steps):
    """Run submit/finish steps through an engine; returns every decision and checks placements."""
    from pbf import Finish, Job, Lend, Start, Submit
    running, sec_units, out, lent_by = {}, {}, [], {}
    for n, (t, kind, k, req) in enumerate(steps):
        ev = []
        if kind == "submit":
            ev = [Submit(Job(n, t, k, req, cpu=0.5))]
        elif running:
            j = sorted(running)[0]
            ev = [Finish(j, t, rate=0.75)]
            running.pop(j)
            sec_units.pop(j, None)
        for d in eng.advance(t, ev):
            out.append(d)
            if isinstance(d, Start):
                running[d.job_id] = set(d.units)
                if d.secondary:
                    held = set().union(*(u for j, u in running.items() if j != d.job_id and j not in sec_units))
                    assert set(d.units) <= held, "a secondary job off the cores running jobs hold"
                    assert not set(d.units) & set().union(*sec_units.values()), "two secondaries on a core"
                    sec_units[d.job_id] = set(d.units)
            elif isinstance(d, Lend):
                lent_by[d.job_id] = d.cores
    return out


@st.composite
def engine_steps(draw):
    units = draw(st.integers(2, 24))
    steps, t = [], 0
    for _ in range(draw(st.integers(3, 40))):
        t += draw(st.integers(0, 20))
        steps.append((t, draw(st.sampled_from(["submit", "submit", "finish"])), draw(st.integers(1, units)),
                      draw(st.integers(1, 300))))
    return units, steps


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine_steps(), st.sampled_from(["fixed", "asax", "hedge", "exp3"]))
def test_engine_coallocation_places_secondaries_on_lent_cores_only(run, policy):
    from pbf import Engine, Start
    units, steps = run
    nodes = tuple((f"n{i}", 2) for i in range(units // 2)) + ((("odd", 1),) if units % 2 else ())
    plain = _drive(Engine(pbf.Cluster(units=units, nodes=nodes)), steps)
    none = _drive(Engine(pbf.Cluster(units=units, nodes=nodes), coalloc=CoAllocation("fixed", 0.0)), steps)
    assert [(d.job_id, list(d.units)) for d in none] == [(d.job_id, list(d.units)) for d in plain]
    co = _drive(Engine(pbf.Cluster(units=units, nodes=nodes),
                       coalloc=CoAllocation(policy, 0.5 if policy == "fixed" else 0.0)), steps)
    assert all(isinstance(d, Start) or d.cores > 0 for d in co)


def test_engine_coallocation_misuse():
    from pbf import Drain, Engine, Finish, Job, ProtocolError, Submit
    eng = Engine(8, coalloc=CoAllocation("fixed", 0.5, node_cores=4))
    out = eng.advance(0, [Submit(Job(1, 0, 8, 100, cpu=0.5)), Submit(Job(2, 0, 2, 50))])
    assert [type(d).__name__ for d in out] == ["Start", "Lend", "Start"] and out[2].secondary
    assert set(eng.running()) == {1, 2}
    for ev, msg in [(Finish(2, 10, rate=1.5), "expected None or a number in"),
                    (Drain(units=(1,), at=10), "not combined with co-allocation"),
                    (Submit(Job(3, 10, 1, 10, cpu=0)), "has cpu 0")]:
        with pytest.raises(ProtocolError, match=msg):
            eng.advance(10, [ev])
    assert eng.advance(50, [Finish(2, 50, rate=0.8), Finish(1, 50)]) == []
    with pytest.raises(ConfigError, match="Python plugins"):
        Engine(8, priority=lambda jobs, now: jobs.units * 1.0, coalloc=CoAllocation())
    with pytest.raises(ConfigError, match="interval"):
        Engine(8, coalloc=CoAllocation(interval=60))
