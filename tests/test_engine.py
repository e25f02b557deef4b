"""The embedding API: decisions, queries, and misuse that leaves the engine unchanged."""
import re

import numpy as np
import pytest

import pbf
from pbf.engine import Engine, Finish, Job, ProtocolError, Reserve, Start, Submit

from helpers import busy_engine, snapshot


def test_decisions_and_queries():
    eng = Engine(8, report_reservations=True)
    out = eng.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Submit(Job(3, 0, 2, 30))])
    assert [d.job_id for d in out if isinstance(d, Start)] == [1, 3]
    assert list(out[0].units) == [0, 1, 2, 3, 4, 5] and list(out[1].units) == [6, 7]
    assert [d for d in out if isinstance(d, Reserve)] == [Reserve(2, 100)]
    assert eng.pending() == [2] and set(eng.running()) == {1, 3} and eng.reservations() == {2: 100}
    assert eng.stats()["free_units"] == 0
    out = eng.advance(100, [Finish(3, 30), Finish(1, 100)])
    assert [(d.job_id, d.at) for d in out] == [(2, 100)]
    eng.close()
    with pytest.raises(ProtocolError, match="closed"):
        eng.advance(101)


@pytest.mark.parametrize("now, events, message", [
    (-5, [], "time went backwards: now=-5 after now=0"),
    (10, [Submit(Job(9, 11, 1, 10))], "is at 11, later than now=10"),
    (10, [Finish(3, 5), Finish(1, 4)], "is at 4, before the previous event at 5"),
    (10, [Finish(77, 5)], "cannot finish job 77: it is unknown"),
    (10, [Finish(2, 5)], "cannot finish job 2: it is pending"),
    (10, [Finish(3, 5), Finish(3, 6)], "cannot finish job 3: it is already finished earlier in this call"),
    (10, [Submit(Job(1, 5, 1, 10))], "duplicate job id 1"),
    (10, [Submit(Job(9, 5, 1, 10)), Submit(Job(9, 6, 1, 10))], "duplicate job id 9"),
    (10, [Submit(Job(9, 5, 0, 10))], "asks for 0 units"),
    (10, [Submit(Job(9, 5, 1, 10)), Finish(9, 6)], "submitted in this same call"),
    (10, ["not an event"], "is not a pbf.Submit, Finish, Drain, Fail or Resume"),
    (1.5, [], "now must be an int"),
])
def test_misuse_raises_and_leaves_state_unchanged(now, events, message):
    eng = busy_engine()
    before = snapshot(eng)
    with pytest.raises(ProtocolError, match=re.escape(message)):
        eng.advance(now, events)
    assert snapshot(eng) == before
    # and it still works exactly as an engine that never saw the bad call
    fresh = busy_engine()
    good = [Finish(3, 30)]
    assert [(d.job_id, d.at) for d in eng.advance(30, good)] == [(d.job_id, d.at) for d in fresh.advance(30, good)]


def test_a_valid_prefix_is_not_applied_when_a_later_event_is_bad():
    eng = busy_engine()
    before = snapshot(eng)
    with pytest.raises(ProtocolError):
        eng.advance(10, [Finish(3, 5), Submit(Job(9, 6, -1, 10))])
    assert snapshot(eng) == before


def test_clairvoyant_needs_run_times_and_uses_them():
    eng = Engine(4, predictor="clairvoyant")
    with pytest.raises(ProtocolError, match="needs job 1's run time"):
        eng.advance(0, [Submit(Job(1, 0, 4, 100))])
    eng.advance(0, [Submit(Job(1, 0, 4, 100, run=10)), Submit(Job(2, 0, 4, 100, run=5)),
                    Submit(Job(3, 0, 1, 100, run=20))])
    assert eng.reservations() == {2: 10}   # planned at job 1's run time, not its requested time


def test_bad_configuration():
    with pytest.raises(pbf.ConfigError, match="unknown priority 'lifo'; known: fcfs, sjf, smallest, wfp3"):
        Engine(4, priority="lifo")
    with pytest.raises(pbf.ConfigError, match="reservations must be an int from 0 to 2,147,483,647 or None"):
        pbf.Backfill(reservations=-1)
    with pytest.raises(pbf.ConfigError, match="workers must be an int from 1 to 256, got 0"):
        Engine(4, workers=0)


def test_engine_driven_like_a_simulator_matches_replay():
    """Feeding a trace's events to advance() one instant at a time gives replay()'s schedule."""
    from pbf.replayer import ReplayConfig, replay
    from pbf.workload.beocat import generate_beocat
    t = generate_beocat(400, 3 * 3600, seed=5)
    t.header.set("MaxProcs", 256)
    want = replay(t, ReplayConfig(units=256)).jobs["start"]
    eng = Engine(256)
    ends, starts, i, now = {}, {}, 0, None
    while i < len(t) or ends:
        now = min(([int(t.submit[i])] if i < len(t) else []) + ([min(ends.values())] if ends else []))
        events = [Finish(j, e) for j, e in sorted(ends.items(), key=lambda x: (x[1], x[0])) if e == now]
        for ev in events:
            del ends[ev.job_id]
        while i < len(t) and t.submit[i] == now:
            events.append(Submit(Job(int(t.job_id[i]), now, int(t.units[i]), int(t.req_time[i]))))
            i += 1
        for d in eng.advance(now, events):
            starts[d.job_id] = now
            ends[d.job_id] = now + int(t.run[t.job_id == d.job_id][0])
    got = np.array([starts[int(j)] for j in t.job_id])
    assert np.array_equal(got, want)


def test_engine_with_workers_decides_as_with_one_and_closes_its_threads():
    import threading
    events = [Submit(Job(i, 0, 1 + i % 7, 50 + 13 * i)) for i in range(1, 120)]
    one, four = Engine(16, report_reservations=True), Engine(16, workers=4, commit="ordered",
                                                              report_reservations=True)
    four._core.set_testing(parallel_min_queue=1, parallel=1)   # every pass on threads
    before = threading.active_count()
    a, b = one.advance(0, events), four.advance(0, events)
    assert [(d.job_id, getattr(d, "at", None)) for d in a] == [(d.job_id, getattr(d, "at", None)) for d in b]
    assert [list(d.units) for d in a if isinstance(d, Start)] == [list(d.units) for d in b if isinstance(d, Start)]
    four.close()
    assert threading.active_count() <= before - 3


def test_jobs_that_can_never_run_are_rejected_not_refused():
    # the replayer's rules: wider than the cluster, no requested time; the rest of the call goes on
    eng = Engine(8)
    d = eng.advance(0, [Submit(Job(1, 0, 9, 10)), Submit(Job(2, 0, 1, 0)), Submit(Job(3, 0, 8, 10))])
    assert [(type(x).__name__, x.job_id) for x in d] == [("Rejected", 1), ("Rejected", 2), ("Start", 3)]
    assert d[0].reason == "larger than the cluster: asks 9 units of 8"
    assert d[1].reason.startswith("no requested time")
    assert eng.stats()["rejected"] == 2 and eng.stats()["submitted"] == 3 and eng.pending() == []
    with pytest.raises(ProtocolError, match="it was rejected"):
        eng.advance(5, [Finish(1, 5)])
    with pytest.raises(ProtocolError, match="duplicate job id 1"):
        eng.advance(5, [Submit(Job(1, 5, 1, 10))])


def test_host_ids_of_any_hashable_kind():
    eng = Engine(8, report_reservations=True)
    d = eng.advance(0, [Submit(Job("a.1", 0, 6, 100)), Submit(Job(("array", 7), 0, 4, 50)),
                        Submit(Job(2 ** 70, 0, 2, 30))])
    assert {x.job_id for x in d if isinstance(x, pbf.Start)} == {"a.1", 2 ** 70}
    assert eng.reservations() == {("array", 7): 100} and set(eng.running()) == {"a.1", 2 ** 70}
    d = eng.advance(100, [Finish(2 ** 70, 30), Finish("a.1", 100)])
    assert [x.job_id for x in d] == [("array", 7)]
