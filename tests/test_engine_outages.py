"""Outages through the embedding API: Drain, Fail and Resume events, Stopped decisions."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import Drain, Engine, Fail, Finish, Job, ProtocolError, Resume, Start, Stopped, Submit

from helpers import CountingPredictor, snapshot


def starts(decisions):
    return {d.job_id: list(d.units) for d in decisions if isinstance(d, Start)}


def test_drain_keeps_running_jobs_and_new_jobs_off_the_units():
    eng = Engine(4)
    assert starts(eng.advance(0, [Submit(Job(1, 0, 2, 100))])) == {1: [0, 1]}
    out = eng.advance(10, [Drain(units=(0, 1, 2), at=10), Submit(Job(2, 10, 1, 50))])
    assert starts(out) == {2: [3]}
    assert list(eng.down()) == [0, 1, 2]
    # job 1 finishes normally; its units stay down
    assert eng.advance(100, [Finish(1, 100), Submit(Job(3, 100, 2, 10))]) == []
    assert eng.stats()["free_units"] == 0 and eng.stats()["down_units"] == 3
    out = eng.advance(120, [Resume(units=(0, 1, 2), at=120)])
    assert starts(out) == {3: [0, 1]}


def test_fail_stops_and_requeues_running_jobs():
    eng = Engine(4, report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 4, 100)), Submit(Job(2, 0, 1, 10))])
    out = eng.advance(30, [Fail(units=(3,), at=30, until=60)])
    assert out[0] == Stopped(1, 30, True)
    # three units are up: job 1 (4 units) is planned for when unit 3 is back
    assert eng.reservations() == {1: 60}
    with pytest.raises(ProtocolError, match="pending"):
        eng.advance(40, [Finish(1, 40)])
    # job 2 (1 unit, 10 s) backfilled beside the failed unit; once it ends and unit 3 is back, job 1
    # restarts on all four
    assert eng.running().keys() == {2}
    assert starts(eng.advance(60, [Finish(2, 40)])) == {1: [0, 1, 2, 3]}
    assert eng.stats()["requeued"] == 1


def test_kill_mode_and_finishing_a_stopped_job_is_a_misuse():
    eng = Engine(2, on_failure="kill")
    eng.advance(0, [Submit(Job(1, 0, 2, 100))])
    with pytest.raises(ProtocolError, match="the failure of event 0 stopped it"):
        eng.advance(5, [Fail(units=(0,), at=5, until=9), Finish(1, 5)])
    assert eng.running().keys() == {1}           # the call changed nothing
    out = eng.advance(5, [Finish(1, 5), Fail(units=(0,), at=5, until=9)])
    assert out == []                             # finished before the failure: nothing stopped
    eng.advance(6, [Submit(Job(2, 6, 1, 10))])
    assert list(eng.running()[2][1]) == [1]
    assert eng.advance(7, [Fail(units=(1,), at=7, until=8)]) == [Stopped(2, 7, False)]
    with pytest.raises(ProtocolError, match="killed by a failure"):
        eng.advance(8, [Finish(2, 8)])


def test_nodes_by_name_and_outage_misuse():
    eng = Engine(pbf.Cluster(units=8, nodes=(("a", 4), ("b", 4))))
    eng.advance(0, [Drain(nodes=("b",), at=0)])
    assert list(eng.down()) == [4, 5, 6, 7]
    for ev, msg in [(Drain(units=(9,), at=1), "unit 9 is not a unit index"),
                    (Drain(nodes=("z",), at=1), "no node named 'z'"),
                    (Drain(at=1), "give units or nodes"),
                    (Fail(units=(1,), at=1, until=1), "until must be None or an int after at=1"),
                    (Drain(units=(1,), at=-5), "before the last call's now")]:
        with pytest.raises(ProtocolError, match=msg):
            eng.advance(2, [ev])
    assert list(eng.down()) == [4, 5, 6, 7]


def test_a_drain_with_until_ends_by_itself():
    eng = Engine(2)
    eng.advance(0, [Drain(units=(0, 1), at=0, until=50), Submit(Job(1, 0, 2, 10))])
    assert eng.reservations() == {1: 50}
    assert starts(eng.advance(50)) == {1: [0, 1]}


@st.composite
def engine_runs(draw):
    units = draw(st.integers(2, 40))
    steps = []
    t = 0
    for _ in range(draw(st.integers(5, 40))):
        t += draw(st.integers(0, 30))
        kind = draw(st.sampled_from(["submit", "submit", "submit", "finish", "drain", "fail", "resume"]))
        steps.append((t, kind, draw(st.integers(1, units)), draw(st.integers(1, 200)),
                      draw(st.lists(st.integers(0, units - 1), min_size=1, max_size=4, unique=True)),
                      draw(st.sampled_from([None, 20, 100]))))
    return units, steps, draw(st.sampled_from(["requeue", "kill"])), draw(st.sampled_from([1, None]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(engine_runs())
def test_no_job_is_ever_placed_on_a_down_unit(run):
    units, steps, on_failure, reservations = run
    eng = Engine(units, on_failure=on_failure, backfill=pbf.Backfill(reservations=reservations))
    down_until = {}                      # unit -> until (None: until a resume)
    running = {}
    sizes = {}
    next_id = 0
    for t, kind, k, req, picked, until in steps:
        for u in [u for u, x in down_until.items() if x is not None and x <= t]:
            del down_until[u]
        ev = []
        if kind == "submit":
            sizes[next_id] = k
            ev = [Submit(Job(next_id, t, k, req))]
            next_id += 1
        elif kind == "finish" and running:
            ev = [Finish(sorted(running)[0], t)]
            del running[sorted(running)[0]]
        elif kind in ("drain", "fail"):
            cls = Drain if kind == "drain" else Fail
            ev = [cls(units=tuple(picked), at=t, until=None if until is None else t + until)]
            for u in picked:
                new = None if until is None else t + until
                old = down_until.get(u, new) if u in down_until else new
                down_until[u] = None if old is None or new is None else max(old, new)
        elif kind == "resume":
            ev = [Resume(units=tuple(picked), at=t)]
            for u in picked:
                down_until.pop(u, None)
        for d in eng.advance(t, ev):
            if isinstance(d, Stopped):
                assert kind == "fail" and set(running.pop(d.job_id)) & set(picked)
                assert d.requeued == (on_failure == "requeue")
            elif isinstance(d, Start):
                assert not set(d.units) & set(down_until), f"job {d.job_id} placed on a down unit"
                running[d.job_id] = list(d.units)
        assert set(eng.down()) == set(down_until)
        held = [u for us in running.values() for u in us]
        # the core's count of down units still held (its profile's fast path relies on it)
        assert eng._outages.figures()["units_down_held"] == len(set(held) & set(down_until))
        assert len(held) == len(set(held)), "a unit held twice"
        assert eng.stats()["free_units"] == units - len(set(held) | set(down_until))
        # a reservation never counts on a unit before it is back
        for job_id, at in eng.reservations().items():
            still_down = sum(1 for x in down_until.values() if x is None or x > at)
            assert at >= t and sizes[job_id] <= units - still_down
    eng.close()


def test_a_failing_plugin_undoes_the_outages_of_the_call():
    eng = Engine(8, predictor=CountingPredictor(), report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Drain(units=(7,), at=0, until=90)])
    before, down = snapshot(eng), list(eng.down())
    with pytest.raises(pbf.ConfigError, match="refused"):
        eng.advance(60, [Fail(units=(0,), at=50, until=80), Resume(units=(7,), at=55), Submit(Job(101, 56, 1, 10))])
    assert snapshot(eng) == before and list(eng.down()) == down and eng.stats()["requeued"] == 0
    # the same call without the refused job: as on an engine that never saw the failure
    twin = Engine(8, predictor=CountingPredictor(), report_reservations=True)
    twin.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Drain(units=(7,), at=0, until=90)])
    call = (60, [Fail(units=(0,), at=50, until=80), Resume(units=(7,), at=55)])
    assert eng.advance(*call) == twin.advance(*call)
    assert snapshot(eng) == snapshot(twin) and list(eng.down()) == list(twin.down()) == [0]
    assert eng.estimates().keys() == twin.estimates().keys()
