"""One event loop: co-allocation, failures, start-time estimates, Python plugins and the slurm-sim
clock combine. Each combination is held to what it must equal (co-allocation with a = 0 is the plain
replay; a Python plugin that computes a built-in's keys is the built-in) or to co-allocation's own
invariants (work conserved, nodes never over their cores, every job ends with a state)."""
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.coalloc import CoAllocation
from pbf.codes import How, JobState

SAMPLE = __import__("pathlib").Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"
SIM = dict(clock="slurm-sim", trigger="interval", backfill=pbf.Backfill(reservations=None, max_job_test=50))


def fcfs_keys(jobs, now):
    """FCFS written in Python (the built-in orders by submit time too)."""
    return jobs.submit.astype(float)


class RequestedTime:
    """A Python predictor equal to the built-in ``requested``."""

    def predict(self, jobs, now):
        return np.asarray(jobs.requested, dtype=np.int64)

    def fit(self, jobs, runtimes):
        pass


def table_of(submit, units, run, req, cpu):
    submit, units, run = (np.asarray(x, dtype=np.int64) for x in (submit, units, run))
    return pbf.JobTable.from_arrays(submit=submit, units=units, run=run, req_time=np.asarray(req),
                                    avg_cpu=np.asarray(cpu, dtype=np.float64) * run)


@st.composite
def traces(draw):
    n = draw(st.integers(1, 40))
    units = draw(st.sampled_from([8, 16, 32]))
    submit = np.cumsum(draw(st.lists(st.integers(0, 90), min_size=n, max_size=n)))
    size = np.array([draw(st.integers(1, units)) for _ in range(n)])
    run = np.array(draw(st.lists(st.integers(1, 600), min_size=n, max_size=n)))
    req = run + np.array(draw(st.lists(st.integers(0, 300), min_size=n, max_size=n)))
    cpu = np.array(draw(st.lists(st.floats(0.05, 1.0), min_size=n, max_size=n)))
    return table_of(submit, size, run, req, cpu), units


def same_decisions(a, b):
    for col in ("start", "end", "state", "how", "requeues"):
        assert np.array_equal(a.jobs[col], b.jobs[col]), col


def check_invariants(r):
    c = r.summary["coalloc"]
    assert c["violations"] == 0
    assert c["work_conservation_error"] < 1e-6
    state = r.jobs["state"]
    ended = np.isin(state, [JobState.JS_DONE, JobState.JS_KILLED, JobState.JS_REJECTED])
    assert ended.all()


# ---- co-allocation with a = 0 is the plain replay, whatever else is on

@pytest.mark.parametrize("extra", ["failures", "estimates", "python-priority", "python-predictor", "slurm-sim",
                                   "slurm-sim+failures"])
def test_coalloc_zero_is_the_plain_replay(extra):
    table = pbf.read_swf(SAMPLE)
    kw = dict(units=256)
    if extra == "failures":
        kw["failures"] = pbf.Failures(mtbf_hours=200, repair_hours=2, seed=3, node_cores=8)
    elif extra == "estimates":
        kw.update(start_estimates=True, estimate_every=20)
    elif extra == "python-priority":
        kw["priority"] = fcfs_keys
    elif extra == "python-predictor":
        kw["predictor"] = RequestedTime()
    elif extra.startswith("slurm-sim"):
        kw.update(SIM)
        if extra.endswith("failures"):
            kw["failures"] = pbf.Failures(mtbf_hours=200, repair_hours=2, seed=3, node_cores=8)
    plain = pbf.replay(table, pbf.ReplayConfig(**kw))
    co = pbf.replay(table, pbf.ReplayConfig(coalloc=CoAllocation("fixed", 0.0, node_cores=8), **kw))
    same_decisions(plain, co)
    if extra == "estimates":
        assert np.array_equal(plain.jobs["estimated_start"], co.jobs["estimated_start"])
        assert plain.estimates is not None and co.estimates is not None
        assert all(np.array_equal(plain.estimates[k], co.estimates[k]) for k in plain.estimates)


# ---- a Python plugin equal to a built-in gives the built-in's replay under the slurm-sim clock

@pytest.mark.parametrize("plugin", ["priority", "predictor"])
def test_python_plugins_under_the_slurm_sim_clock(plugin):
    table = pbf.read_swf(SAMPLE)
    builtin = pbf.replay(table, pbf.ReplayConfig(units=256, **SIM))
    kw = {"priority": fcfs_keys} if plugin == "priority" else {"predictor": RequestedTime()}
    python = pbf.replay(table, pbf.ReplayConfig(units=256, **SIM, **kw))
    same_decisions(builtin, python)
    assert builtin.summary["scheduler_time"] == python.summary["scheduler_time"]


# ---- start-time estimates under the slurm-sim clock: recorded, and they change no decision

def test_estimates_under_the_slurm_sim_clock():
    table = pbf.read_swf(SAMPLE)
    plain = pbf.replay(table, pbf.ReplayConfig(units=256, **SIM))
    est = pbf.replay(table, pbf.ReplayConfig(units=256, start_estimates=True, estimate_every=10, **SIM))
    same_decisions(plain, est)
    waited = est.jobs["start"] > est.jobs["submit"]
    assert (est.jobs["estimated_start"][waited] >= est.jobs["submit"][waited]).all()
    assert len(est.estimates["time"]) > 0
    acc = est.summary["start_estimates"]
    assert acc["all"]["jobs"] == len(table) and acc["no_estimate"] == 0


# ---- co-allocation that lends, with failures, estimates, plugins or the slurm-sim clock

@given(traces(), st.sampled_from(["fixed", "asax", "hedge"]), st.integers(0, 5))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_coalloc_under_failures_keeps_its_invariants(trace, policy, seed):
    table, units = trace
    co = CoAllocation(policy, 0.5, node_cores=4, seed=seed)
    for on_failure in ("requeue", "kill"):
        f = pbf.Failures(mtbf_hours=0.3, repair_hours=0.1, seed=seed, node_cores=4, on_failure=on_failure)
        r = pbf.replay(table, pbf.ReplayConfig(units=units, coalloc=co, failures=f))
        check_invariants(r)
        again = pbf.replay(table, pbf.ReplayConfig(units=units, coalloc=co, failures=f))
        same_decisions(r, again)


def test_a_failure_stops_secondary_jobs_on_its_cores(tmp_path):
    # node of 4 cores: a primary (cpu 0.2) lends 2 cores, a queued 2-core job runs on them as a
    # secondary; the node fails at 50 s: both stop and are requeued, then run again after the repair
    table = table_of([0, 10], [4, 2], [1000, 300], [1000, 300], [0.2, 0.2])
    path = tmp_path / "failures.csv"
    path.write_text("time,nodes,duration,kind\n50,0,100,fail\n")
    f = pbf.Failures(path=str(path), node_cores=4)
    r = pbf.replay(table, pbf.ReplayConfig(units=4, coalloc=CoAllocation("fixed", 0.5, node_cores=4), failures=f))
    check_invariants(r)
    assert r.jobs["requeues"].tolist() == [1, 1]
    assert (r.jobs["start"] >= 150).all()                     # both ran again after the repair
    assert r.summary["failures"]["requeued"] == 2


def test_coalloc_with_estimates_and_a_python_priority():
    table = pbf.read_swf(SAMPLE)
    co = CoAllocation("asax", node_cores=8)
    a = pbf.replay(table, pbf.ReplayConfig(units=256, coalloc=co))
    b = pbf.replay(table, pbf.ReplayConfig(units=256, coalloc=co, priority=fcfs_keys, start_estimates=True))
    same_decisions(a, b)                                      # estimates change nothing; FCFS is FCFS
    check_invariants(b)
    assert b.summary["start_estimates"]["all"]["jobs"] > 0


@given(traces(), st.sampled_from(["fixed", "asax"]))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_coalloc_under_the_slurm_sim_clock(trace, policy):
    table, units = trace
    co = CoAllocation(policy, 0.5, node_cores=4)
    r = pbf.replay(table, pbf.ReplayConfig(units=units, coalloc=co, **SIM))
    check_invariants(r)
    secondary = r.jobs["how"] == How.HOW_COALLOC
    assert (r.jobs["start"][secondary] >= r.jobs["submit"][secondary]).all()


def test_cli_coalloc_failures_and_estimates(capsys):
    from pbf.cli import main
    assert main(["replay", str(SAMPLE), "--coalloc", "asax", "--mtbf", "720", "--start-estimates", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["coalloc"]["violations"] == 0 and "failures" in s and s["start_estimates"]["all"]["jobs"] > 0
