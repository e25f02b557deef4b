"""The Engine under hostile use: bad values, half-failing calls, failing plugins, threads. A refused
call leaves the engine exactly as it was, and it then decides as an engine that never saw the call."""
import re
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.engine import MAX_TIME, Engine, Finish, Job, ProtocolError, Submit

from helpers import CountingPredictor, busy_engine, snapshot


@pytest.mark.parametrize("now, events, message", [
    (2 ** 63, [], "now must be an int from"),
    (MAX_TIME + 1, [], "now must be an int from"),
    (10, [Submit(Job(9, 5, 1, 2 ** 63))], "has requested time 9223372036854775808"),
    (10, [Submit(Job(9, 5, 4, 2 ** 63 - 1))], "has requested time 9223372036854775807"),
    (10, [Submit(Job(9, 5, 1, 10)), Submit(Job(10, 5, 1, 2 ** 63))], "has requested time"),
    (10, [Submit(Job([1], 5, 1, 10))], "job id [1] is not hashable"),
    (10, [Submit(Job(True, 5, 1, 10))], "job id True is not a job id"),
    (10, [Submit(Job(float("nan"), 5, 1, 10))], "is not equal to itself (NaN)"),
    (10, [Submit(Job(9, 5, 1, 10, run=2 ** 62))], "has run time"),
    (10, [Submit(Job(9, 5, 1, 10, user=2 ** 70))], "has user"),
    (10, [Submit(Job(9, 5, True, 10))], "asks for True units"),
    (10, [Finish("3", 5)], "cannot finish job '3': it is unknown"),
])
def test_values_out_of_range_are_refused_before_anything_changes(now, events, message):
    eng = busy_engine()
    before = snapshot(eng)
    with pytest.raises(ProtocolError, match=re.escape(message)):
        eng.advance(now, events)
    assert snapshot(eng) == before
    assert [d.job_id for d in eng.advance(30, [Finish(3, 30)])] == [d.job_id for d in busy_engine().advance(
        30, [Finish(3, 30)])]


def test_events_cannot_predate_the_last_pass_or_a_jobs_start():
    eng = busy_engine()                       # passed at 0: jobs 1 and 3 started at 0
    eng.advance(20)
    with pytest.raises(ProtocolError, match="is at 10, before the last call's now at 20"):
        eng.advance(30, [Submit(Job(9, 10, 1, 10))])
    with pytest.raises(ProtocolError, match="is at 10, before the last call's now at 20"):
        eng.advance(30, [Finish(3, 10)])
    # a job starts at a pass, so a finish dated before its start also predates that pass
    eng2 = Engine(8)
    eng2.advance(50, [Submit(Job(1, 50, 2, 100))])
    with pytest.raises(ProtocolError, match="is at 49, before the last call's now at 50"):
        eng2.advance(60, [Finish(1, 49)])
    assert eng2.advance(60, [Finish(1, 50)]) == []     # at its start time: accepted


def test_a_failing_python_predictor_rolls_the_whole_call_back():
    eng = Engine(8, predictor=CountingPredictor(), report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50))])
    plugin = eng._scoring.predictor.obj
    seen = (list(plugin.predicted), list(plugin.fitted))
    before = snapshot(eng)
    with pytest.raises(pbf.ConfigError, match="predictor .* raised RuntimeError: refused"):
        eng.advance(60, [Finish(1, 50), Submit(Job(3, 55, 1, 10)), Submit(Job(101, 56, 1, 10))])
    assert snapshot(eng) == before
    plugin = eng._scoring.predictor.obj
    assert (plugin.predicted, plugin.fitted) == seen, "the plugin's own state is as before the call"
    # the same call without the refused job: as on an engine that never saw the failure
    twin = Engine(8, predictor=CountingPredictor(), report_reservations=True)
    twin.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50))])
    call = (60, [Finish(1, 50), Submit(Job(3, 55, 1, 10))])
    assert eng.advance(*call) == twin.advance(*call)
    assert snapshot(eng) == snapshot(twin)


@pytest.mark.parametrize("bad", [lambda jobs, now: 1 / 0, lambda jobs, now: np.full(len(jobs) + 1, 1.0),
                                 lambda jobs, now: ["a"] * len(jobs), lambda jobs, now: np.full(len(jobs), np.nan)])
def test_a_failing_priority_plugin_rolls_the_whole_call_back(bad):
    state = {"fail": False}

    def keys(jobs, now):
        return bad(jobs, now) if state["fail"] else -jobs.units.astype(float)
    eng = Engine(8, priority=keys, report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Submit(Job(3, 0, 2, 30))])
    before = snapshot(eng)
    state["fail"] = True
    with pytest.raises(pbf.ConfigError):
        eng.advance(40, [Finish(3, 30), Submit(Job(4, 35, 8, 10))])
    assert snapshot(eng) == before
    state["fail"] = False
    twin = Engine(8, priority=keys, report_reservations=True)
    twin.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Submit(Job(3, 0, 2, 30))])
    call = (40, [Finish(3, 30), Submit(Job(4, 35, 8, 10))])
    assert eng.advance(*call) == twin.advance(*call)


def test_one_engine_used_from_several_threads_stays_consistent():
    """Calls from several threads are serialised: no crash, and the node state always adds up."""
    units = 64
    eng = Engine(units, workers=2)
    errors = []
    clock = {"now": 0}
    lock = threading.Lock()

    def client(base):
        try:
            for k in range(150):
                with lock:            # each client's events are valid at the time it sends them
                    clock["now"] += 1
                    now = clock["now"]
                    running = eng.running()
                    done = [Finish(j, now) for j in list(running)[:2]]
                    eng.advance(now, done + [Submit(Job(base + k, now, 1 + k % 8, 100))])
                s = eng.stats()      # readers run while other threads advance
                assert 0 <= s["free_units"] <= units
        except Exception as exc:     # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=client, args=(10_000 * (i + 1),)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    used = sum(len(u) for _, u in eng.running().values())
    assert used + eng.stats()["free_units"] == units
    eng.close()


def test_concurrent_calls_without_coordination_never_corrupt_the_engine():
    """Threads racing on one engine: every call either succeeds or is refused as a protocol error."""
    units = 32
    eng = Engine(units, workers=2)
    outcomes = []

    def client(base):
        for k in range(200):
            try:
                now = eng.stats()["now"] or 0
                eng.advance(now + 1, [Submit(Job(base + k, now + 1, 1 + k % 4, 50))])
                outcomes.append("ok")
            except ProtocolError:
                outcomes.append("refused")
    threads = [threading.Thread(target=client, args=(10_000 * (i + 1),)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(outcomes) == 800 and outcomes.count("ok") > 0
    used = sum(len(u) for _, u in eng.running().values())
    assert used + eng.stats()["free_units"] == units
    eng.close()


# ---- property: random batches, some invalid, some failing in a plugin; refused calls change nothing

def _keys_for(flaky):
    def keys(jobs, now):
        if flaky["fail"]:
            raise ValueError("flaky plugin")
        return (jobs.estimate * jobs.units).astype(float)
    return keys


calls = st.lists(st.tuples(
    st.integers(0, 40),                                   # time step
    st.lists(st.tuples(st.integers(1, 8), st.integers(1, 200)), max_size=4),   # submits: units, requested
    st.integers(0, 3),                                    # finishes of running jobs
    st.sampled_from(["ok", "ok", "ok", "bad-units", "bad-time", "plugin-fails", "dup-id"])),
    min_size=1, max_size=25)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(calls, st.sampled_from(["fcfs", "python"]), st.sampled_from([1, 3]))
def test_refused_calls_change_nothing(calls, priority, reservations):
    flaky = {"fail": False}
    kw = dict(priority=_keys_for(flaky) if priority == "python" else "fcfs",
              backfill=pbf.Backfill(reservations=reservations), report_reservations=True)
    eng, twin = Engine(8, **kw), Engine(8, **kw)
    now, next_id, accepted = 0, 1, []
    for step, submits, nfinish, kind in calls:
        now += step
        running = sorted(eng.running())
        events = [Finish(j, now) for j in running[:nfinish]]
        for units, req in submits:
            events.append(Submit(Job(next_id, now, units, req)))
            next_id += 1
        if kind == "bad-units":
            events.append(Submit(Job(next_id, now, -3, 10)))        # (malformed; 99 would be Rejected)
        elif kind == "bad-time":
            events.insert(0, Submit(Job(next_id, now + 5, 1, 10)))
        elif kind == "dup-id" and accepted:
            events.append(Submit(Job(accepted[0], now, 1, 10)))
        flaky["fail"] = kind == "plugin-fails" and priority == "python"
        before = snapshot(eng)
        if kind in ("bad-units", "bad-time") or (kind == "dup-id" and accepted):
            with pytest.raises(ProtocolError):
                eng.advance(now, events)
            assert snapshot(eng) == before
            if kind in ("bad-units", "bad-time"):
                next_id += 1
            continue
        if flaky["fail"]:
            try:
                eng.advance(now, events)
            except pbf.ConfigError:
                # the plugin ran (a queue to order) and failed: nothing of the call remains
                assert snapshot(eng) == before
                flaky["fail"] = False
                continue
            flaky["fail"] = False     # nothing was queued: the plugin was never asked
            twin.advance(now, events)
            accepted += [e.job.id for e in events if isinstance(e, Submit)]
            assert snapshot(eng) == snapshot(twin)
            continue
        got = eng.advance(now, events)
        want = twin.advance(now, events)
        accepted += [e.job.id for e in events if isinstance(e, Submit)]
        assert [(d.job_id, d.at, list(getattr(d, "units", []))) for d in got] == \
               [(d.job_id, d.at, list(getattr(d, "units", []))) for d in want]
        assert snapshot(eng) == snapshot(twin)


def test_a_python_predictor_runs_before_anything_changes_and_takes_no_checkpoint(monkeypatch):
    import pbf.engine as engine_module
    taken = []
    real = engine_module.checkpoint
    monkeypatch.setattr(engine_module, "checkpoint", lambda core: taken.append(1) or real(core))
    eng = Engine(8, predictor=CountingPredictor(), report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Submit(Job(3, 0, 2, 30))])
    before = snapshot(eng)
    with pytest.raises(pbf.ConfigError, match="refused"):
        eng.advance(30, [Finish(3, 30), Submit(Job(101, 30, 1, 10))])      # (ids over 100 are refused)
    assert snapshot(eng) == before and eng._scoring.predictor.obj.fitted == []
    assert taken == []
    # a priority in Python runs once the events are in: that call takes a checkpoint
    eng = Engine(8, priority=lambda jobs, now: -jobs.units.astype(float))
    eng.advance(0, [Submit(Job(1, 0, 6, 100))])
    assert taken == [1]


def test_a_python_predictor_sees_the_engines_number_for_an_id_that_is_not_an_int():
    seen = CountingPredictor()
    eng = Engine(8, predictor=seen)
    eng.advance(0, [Submit(Job("a", 0, 2, 100)), Submit(Job(7, 0, 2, 100))])
    assert eng._scoring.predictor.obj.predicted == [0, 7]


@pytest.mark.parametrize("path", ["objects", "arrays"])
def test_checkpoints_at_every_call_undo_a_failure_no_check_foresees(path):
    eng = Engine(8, checkpoints="every-call", report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Submit(Job(3, 0, 2, 30))])
    before = snapshot(eng)
    real, added = eng._add, []

    def add(sc, job, estimates=None):       # the second new job of the call runs out of memory
        if added:
            raise MemoryError("out of memory (simulated)")
        added.append(job.id)
        return real(sc, job, estimates)
    eng._add = add
    with pytest.raises(MemoryError):
        if path == "objects":
            eng.advance(30, [Finish(3, 30), Submit(Job(4, 30, 1, 10)), Submit(Job(5, 30, 1, 10))])
        else:
            eng.advance_arrays(30, finish_ids=[3], finish_times=[30], submit_ids=[4, 5], submit_times=[30, 30],
                               units=[1, 1], requested=[10, 10])
    assert snapshot(eng) == before and added == [4]
    eng._add = real
    twin = busy_engine()
    assert [d.job_id for d in eng.advance(30, [Finish(3, 30)])] == [d.job_id for d in twin.advance(30, [Finish(3, 30)])]
    with pytest.raises(pbf.ConfigError, match="checkpoints must be 'when-needed' or 'every-call'"):
        Engine(8, checkpoints="always")
