"""The compiled core makes exactly the oracle's decisions, and every replay keeps the invariants."""
import numpy as np
from hypothesis import HealthCheck, given, settings

from pbf.config import Backfill

from scheduling import check_invariants, compiled_replay, oracle_replay, scenarios


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_compiled_equals_oracle(sc):
    args = (sc["submit"], sc["units"], sc["est"], sc["run"], sc["total_units"])
    kw = {k: sc[k] for k in ("backfill", "prio_sjf", "trigger", "bf_interval")}
    got, want = compiled_replay(*args, **kw, block_slots=sc["block_slots"]), oracle_replay(*args, **kw)
    for key in ("state", "start", "end", "how", "reason"):
        assert np.array_equal(got[key], want[key]), key
    assert np.array_equal(got["bits"], want["bits"]), "unit choice differs"
    for key in ("kind", "time", "depth", "started", "reservations", "exit", "slots"):
        assert np.array_equal(got["passes"][key], want["passes"][key]), f"pass statistic {key}"
    # the reservation is always the first blocked job's only without a window (beyond the window a
    # job gets none, and a later job may hold the reservation while the earlier one overtakes it)
    fcfs_easy = sc["backfill"].reservations == 1 and not sc["prio_sjf"] and sc["backfill"].window == 0
    check_invariants(got, sc["submit"], sc["units"], sc["run"], sc["total_units"], fcfs_easy=fcfs_easy)


def test_oversize_and_missing_estimate_are_rejected_with_reasons():
    from pbf.codes import JobState, label
    r = compiled_replay([0, 0, 0, 1], [5, 1, 0, 2], [10, 0, 10, 10], [5, 5, 5, 5], 4)
    assert list(r["state"]) == [JobState.JS_REJECTED] * 3 + [JobState.JS_DONE]
    assert [label("reject_reason", x) for x in r["reason"][:3]] == [
        "larger than the cluster", "no requested time (estimate <= 0)", "asks for no units"]


def test_easy_backfills_without_delaying_the_head():
    # 4 units. A (3 units, 10 s) runs; B (4 units) must wait for A; C (1 unit, 5 s) fits beside A and
    # ends before B's reservation at 10; D (1 unit, 100 s) would delay B: it waits.
    r = compiled_replay([0, 1, 2, 3], [3, 4, 1, 1], [10, 10, 5, 100], [10, 10, 5, 100], 4)
    assert list(r["start"]) == [0, 10, 2, 20]
    assert list(r["how"]) == [1, 1, 2, 1]
    assert r["first_planned"][1] == 10


def test_conservative_reserves_every_job():
    r = compiled_replay([0, 1, 2], [4, 4, 4], [10, 10, 10], [10, 10, 10], 4, Backfill(reservations=None))
    assert list(r["start"]) == [0, 10, 20] and list(r["first_planned"]) == [-1, 10, 20]


def test_unit_choice_keeps_free_units_for_backfill():
    # 4 units; A (2 units, ends 10) on units 0-1. B (3 units) reserves at 10: it must take A's units
    # 0-1 first and only one free unit (2), leaving unit 3 for a long backfill job C (1 unit, 100 s).
    r = compiled_replay([0, 1, 2], [2, 3, 1], [10, 10, 100], [10, 10, 100], 4)
    assert list(r["start"]) == [0, 10, 2]
    assert int(r["bits"][2][0]) == 0b1000 and int(r["bits"][1][0]) == 0b0111


def test_equal_neighbouring_slots_are_merged():
    # 4 units: A (2 units, 10 s) and B (2 units, 20 s) start; D (2 units) reserves A's units at 10,
    # which leaves [10, 20) as empty as [0, 10): the two slots merge, so the pass ends with 2 slots
    r = compiled_replay([0, 0, 0], [2, 2, 2], [10, 20, 10], [10, 20, 10], 4)
    assert r["first_planned"][2] == 10
    assert r["passes"]["slots"][0] == 2


def test_resuming_passes_changes_nothing(shared_trace):
    """Resuming the last pass (docs/engine.md) gives the decisions and statistics of fresh passes."""
    from pbf import _core
    from pbf.workload import read_swf
    t = read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    out = []
    for resume in (1, 0):
        core = _core.Core(128)
        core.set_testing(resume=resume)
        core.load_trace(t.submit, t.units, t.req_time, t.run)
        assert core.replay()
        out.append((core.job_arrays(), core.pass_arrays(), core.resumed_passes))
    (jobs_on, passes_on, resumed), (jobs_off, passes_off, none) = out
    assert resumed > 10_000 and none == 0
    for a, b in zip(jobs_on, jobs_off):
        assert np.array_equal(a, b)
    for key in ("time", "queue", "depth", "started", "reservations", "slots", "exit", "kind"):
        assert np.array_equal(passes_on[key], passes_off[key]), key
