"""The parallel pass (ordered commit) decides exactly as the sequential pass and the oracle, for any
number of workers (DESIGN §5)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from pbf.config import Backfill
from pbf.replayer import ReplayConfig, replay
from pbf.workload import read_swf

from scheduling import check_invariants, compiled_replay, oracle_replay, scenarios

KEYS = ("state", "start", "end", "how", "reason")
PASS_KEYS = ("kind", "time", "depth", "started", "reservations", "exit", "slots")


def assert_same(a, b):
    for key in KEYS:
        assert np.array_equal(a[key], b[key]), key
    assert np.array_equal(a["bits"], b["bits"]), "unit choice differs"
    for key in PASS_KEYS:
        assert np.array_equal(a["passes"][key], b["passes"][key]), f"pass statistic {key}"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_any_worker_count_equals_the_oracle(sc):
    args = (sc["submit"], sc["units"], sc["est"], sc["run"], sc["total_units"])
    kw = {k: sc[k] for k in ("backfill", "prio_sjf", "trigger", "bf_interval")}
    want = oracle_replay(*args, **kw)
    for workers in (1, 2, 3, 4, 8):
        got = compiled_replay(*args, workers=workers, block_slots=sc["block_slots"], **kw)
        assert_same(got, want)
        check_invariants(got, sc["submit"], sc["units"], sc["run"], sc["total_units"])


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_stale_speculation_is_reconciled_exactly(sc):
    """Workers that speculate on stale copies (never applying the newest commits first) make the
    commit reconcile nearly every placement: the AND test against the newer log entries, and the
    search again from the speculative slot when it fails. The decisions must not change."""
    args = (sc["submit"], sc["units"], sc["est"], sc["run"], sc["total_units"])
    kw = {k: sc[k] for k in ("backfill", "prio_sjf", "trigger", "bf_interval")}
    want = compiled_replay(*args, **kw)
    for workers in (2, 3):
        assert_same(compiled_replay(*args, workers=workers, stale=True, block_slots=sc["block_slots"], **kw),
                    want)


@pytest.mark.parametrize("backfill", [Backfill(reservations=None), Backfill(reservations=3, max_job_test=50),
                                      Backfill()])
def test_stale_speculation_reconciles_on_a_real_trace(shared_trace, backfill):
    """Passes over 1,500 SDSC-SP2 jobs with workers that speculate on the pass-start profile: the
    commits reconcile (AND tests that find overlaps, searches again) on every run, the counts do not
    depend on thread timing or the worker count, and the result equals the sequential one."""
    t = read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    n = 1_500
    args = (t.submit[:n], t.units[:n], t.req_time[:n], t.run[:n], 128)
    seq = compiled_replay(*args, backfill=backfill)
    runs = [compiled_replay(*args, backfill=backfill, workers=w, stale=True) for w in (2, 2, 3)]
    for par in runs:
        assert_same(par, seq)
        assert par["passes"]["conflicts"].sum() > 0 and par["passes"]["reevaluations"].sum() > 0
        for key in ("conflicts", "reevaluations"):
            assert np.array_equal(par["passes"][key], runs[0]["passes"][key]), key


def test_stress_thousands_of_parallel_passes_with_8_threads(shared_trace):
    """Every one of ~19,000 passes runs on 8 threads; the result must equal the sequential one."""
    t = read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    n = 10_000
    args = (t.submit[:n], t.units[:n], t.req_time[:n], t.run[:n], 128)
    for backfill in (Backfill(), Backfill(reservations=None)):
        seq = compiled_replay(*args, backfill=backfill)
        par = compiled_replay(*args, backfill=backfill, workers=8)
        assert_same(par, seq)
        assert len(par["passes"]["time"]) > 15_000


def test_whole_trace_replay_identical_for_1_and_8_workers():
    from pathlib import Path
    t = read_swf(Path(__file__).resolve().parents[1] / "traces" / "beocat-2000-1d.swf.gz")
    for trigger in ("event", "interval"):
        one = compiled_replay(t.submit, t.units, t.req_time, t.run, 9128, trigger=trigger)
        eight = compiled_replay(t.submit, t.units, t.req_time, t.run, 9128, trigger=trigger, workers=8)
        assert_same(eight, one)
    # and through the public replay (which runs deep, long passes in parallel only)
    a = replay(t, ReplayConfig(workers=1)).jobs["start"]
    b = replay(t, ReplayConfig(workers=8)).jobs["start"]
    assert np.array_equal(a, b)


def test_parallel_statistics_are_reported(shared_trace):
    """Re-evaluations and conflicts are counted on parallel passes; tests per worker are reported."""
    t = read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    n = 2_000
    args = (t.submit[:n], t.units[:n], t.req_time[:n], t.run[:n], 128)
    r = compiled_replay(*args, backfill=Backfill(reservations=None), workers=4)
    p = r["passes"]
    assert p["reservations"].sum() > 0
    # How many speculative answers newer commits overlapped (conflicts) or invalidated, so that the
    # commit searched again (re-evaluations), depends on thread timing (a worker that wakes late
    # sees every commit before it speculates): only the bounds are certain. Each tested job
    # counts at most once in each.
    for name in ("conflicts", "reevaluations"):
        assert (p[name] >= 0).all() and (p[name] <= p["depth"]).all()
    assert (p["tests_min_worker"] <= p["tests_max_worker"]).all()
    seq = compiled_replay(*args, backfill=Backfill(reservations=None))
    assert (seq["passes"]["reevaluations"] == 0).all() and (seq["passes"]["conflicts"] == 0).all()
    sf = seq["passes"]["kind"] == 0
    assert (seq["passes"]["tests_max_worker"][sf] == seq["passes"]["depth"][sf]).all()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_eager_commit_keeps_the_invariants(sc):
    """The paper's order: results may differ from the sequential ones, the invariants may not."""
    if sc["backfill"].order == "sjbf":
        sc["backfill"] = Backfill(reservations=sc["backfill"].reservations, max_job_test=sc["backfill"].max_job_test,
                                  window=sc["backfill"].window, resolution=sc["backfill"].resolution)
    args = (sc["submit"], sc["units"], sc["est"], sc["run"], sc["total_units"])
    kw = {k: sc[k] for k in ("backfill", "prio_sjf", "trigger", "bf_interval")}
    for workers in (2, 8):
        got = compiled_replay(*args, workers=workers, eager=True, **kw)
        check_invariants(got, sc["submit"], sc["units"], sc["run"], sc["total_units"])
        p = got["passes"]
        assert (p["inversions"] <= p["started"] + p["reservations"]).all()


def test_eager_is_rejected_with_sjbf():
    import pbf
    with pytest.raises(pbf.ConfigError, match="does not support order='sjbf'"):
        ReplayConfig(commit="eager", backfill=Backfill(order="sjbf"))
    with pytest.raises(pbf.ConfigError, match="does not support order='sjbf'"):
        pbf.Engine(8, commit="eager", backfill=Backfill(order="sjbf"))


def test_eager_replay_reports_that_it_is_not_reproducible(shared_trace):
    t = read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz")).take(slice(0, 3000))
    r = replay(t, ReplayConfig(workers=4, commit="eager"))
    assert r.summary["reproducible"] is False and "priority_inversions" in r.summary["passes"]
    assert r.summary["jobs"]["completed"] + r.summary["jobs"]["rejected"] == 3000
