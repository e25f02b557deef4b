"""Engine.next_wakeup: a host that calls at each event and at each wake-up the engine asks for gets
pbf replay's schedule under the interval trigger (free and model clocks), under the slurm-sim clock's
timers (scheduling that takes no simulated time) and with outages that end by themselves."""
import heapq

import numpy as np
import pytest

import pbf
from pbf.engine import Engine, Fail, Finish, Job, ProtocolError, Submit
from pbf.engine_buffers import BatchCore

from helpers import write_small_swf

needs_compiled = pytest.mark.skipif(BatchCore is None, reason="pbf was built before ext/_engine_batch.pyx (the "
                                    "slurm-sim clock's main pass): rebuild it (pip install -e .)")


def host_loop(eng, table, outages=()):
    """The documented host loop: a call at each instant with events, and at each wake-up."""
    order = np.lexsort((table.job_id, table.submit))
    jobs = [(int(table.submit[k]), int(table.job_id[k]), int(table.units[k]), int(table.req_time[k]),
             int(min(table.run[k], table.req_time[k]) if table.req_time[k] > 0 else table.run[k])) for k in order]
    outages = sorted(outages, key=lambda o: o.at)
    runs = {j[1]: j[4] for j in jobs}
    ends, starts, i, o, calls = [], {}, 0, 0, 0
    while True:
        due = [t for t in (jobs[i][0] if i < len(jobs) else None, ends[0][0] if ends else None,
                           outages[o].at if o < len(outages) else None, eng.next_wakeup()) if t is not None]
        if not due:
            break
        now = min(due)
        events = []
        while ends and ends[0][0] == now:
            events.append(Finish(heapq.heappop(ends)[1], now))
        while o < len(outages) and outages[o].at == now:
            events.append(outages[o])
            o += 1
        while i < len(jobs) and jobs[i][0] == now:
            s, x, u, r, _ = jobs[i]
            events.append(Submit(Job(x, s, u, r)))
            i += 1
        calls += 1
        for d in eng.advance(now, events):
            if isinstance(d, pbf.Start):
                starts[d.job_id] = now
                heapq.heappush(ends, (now + runs[d.job_id], d.job_id))
            elif isinstance(d, pbf.Stopped):
                ends = [e for e in ends if e[1] != d.job_id]
                heapq.heapify(ends)
    return starts, calls


def replay_starts(table, **config):
    r = pbf.replay(table, pbf.ReplayConfig(units=64, **config)).jobs
    return {i: s for i, s in zip(r["id"].tolist(), r["start"].tolist()) if s >= 0}


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("wakeup") / "t.swf"
    write_small_swf(path, n=500, procs=64, seed=4)
    return pbf.read_swf(path)


@pytest.mark.parametrize("config", [
    dict(trigger="interval", bf_interval=30),
    dict(trigger="interval", bf_interval=600),
    dict(trigger="interval", bf_interval=30, clock="model", cost_per_test_us=200_000),
    dict(trigger="interval", bf_interval=60, clock="model", bf_max_time=1, cost_per_test_us=300_000),
])
def test_interval_trigger_driven_by_next_wakeup_is_the_replay(table, config):
    want = replay_starts(table, **config)
    got, calls = host_loop(Engine(64, **config), table)
    assert got == want
    assert calls > len(table)          # wake-ups with no event happened


def test_next_wakeup_values():
    eng = Engine(8, trigger="interval", bf_interval=30)
    assert eng.next_wakeup() is None
    eng.advance(0, [Submit(Job(1, 0, 8, 100))])
    assert eng.next_wakeup() is None                 # nothing waits
    d = eng.advance(5, [Submit(Job(2, 5, 4, 100))])
    assert d == [] and eng.next_wakeup() == 30       # a quick pass at 5; the full pass is due at 30
    assert eng.advance(17) == [] and eng.stats()["passes"] == 2   # no event, not due: no pass
    d = eng.advance(100, [Finish(1, 100)])
    assert [x.job_id for x in d] == [2] and eng.next_wakeup() is None
    with pytest.raises(ProtocolError, match="chooses the pass itself"):
        eng.advance(120, quick=True)


def test_next_wakeup_at_the_end_of_an_outage():
    eng = Engine(8)
    eng.advance(0, [Fail(units=tuple(range(8)), at=0, until=50), Submit(Job(1, 0, 2, 10))])
    assert eng.next_wakeup() == 50
    assert [x.job_id for x in eng.advance(50)] == [1]
    assert eng.next_wakeup() is None


@pytest.mark.parametrize("trigger", ["event", "interval", pytest.param("slurm-sim", marks=needs_compiled)])
def test_outages_ending_by_themselves(table, trigger):
    failures = pbf.Failures(mtbf_hours=20, repair_hours=1, seed=2, node_cores=8)
    start, end = int(table.submit.min()), int(table.submit.max())
    fails = [Fail(units=o.units, at=o.time, until=o.until) for o in failures.outages(64, start, end)
             if o.kind == "fail"]
    assert fails and all(f.until is not None for f in fails)
    if trigger == "slurm-sim":
        zero = dict(cost_per_test_us=0, cost_per_slot_us=0, slurm_sim=pbf.SlurmSim(cost_main_test_us=0))
        want = replay_starts(table, trigger="interval", clock="slurm-sim", failures=failures, **zero)
        eng = Engine(64, trigger="interval", clock="slurm-sim")
    else:
        want = replay_starts(table, trigger=trigger, failures=failures)
        eng = Engine(64, trigger=trigger)
    got, _ = host_loop(eng, table, fails)
    assert got == want


def test_bad_timing_settings():
    with pytest.raises(pbf.ConfigError, match="trigger must be 'event' or 'interval'"):
        Engine(8, trigger="cron")
    with pytest.raises(pbf.ConfigError, match="bf_interval must be an int from 1"):
        Engine(8, trigger="interval", bf_interval=0)
    with pytest.raises(pbf.ConfigError, match="need clock='model'"):
        Engine(8, bf_max_time=5)
    with pytest.raises(pbf.ConfigError, match="clock must be 'free', 'model' or 'slurm-sim'"):
        Engine(8, clock="wall")
    with pytest.raises(pbf.ConfigError, match="clock='slurm-sim' runs Slurm's timers: it needs trigger='interval'"):
        Engine(8, clock="slurm-sim")
    with pytest.raises(pbf.ConfigError, match="a pass takes no simulated time"):
        Engine(8, trigger="interval", clock="slurm-sim", cost_per_test_us=62)
    with pytest.raises(pbf.ConfigError, match="they need clock='slurm-sim'"):
        Engine(8, trigger="interval", sched_interval=60)
    with pytest.raises(pbf.ConfigError, match="default_queue_depth must be an int from 1"):
        Engine(8, trigger="interval", clock="slurm-sim", default_queue_depth=0)


def slurm_sim_replay(table, bf_interval, **timers):
    """pbf replay under the slurm-sim clock with scheduling that costs nothing: its timers alone."""
    return replay_starts(table, trigger="interval", clock="slurm-sim", bf_interval=bf_interval, cost_per_test_us=0,
                         cost_per_slot_us=0, slurm_sim=pbf.SlurmSim(cost_main_test_us=0, **timers))


@needs_compiled
@pytest.mark.parametrize("bf_interval, timers", [
    (30, {}),
    (600, dict(default_queue_depth=2)),
    (60, dict(sched_interval=300, batch_sched_delay=20, default_queue_depth=5)),
    (5, dict(sched_interval=10, batch_sched_delay=0, default_queue_depth=1)),
])
def test_slurm_sim_timers_driven_by_next_wakeup_are_the_replay(table, bf_interval, timers):
    want = slurm_sim_replay(table, bf_interval, **timers)
    assert want != replay_starts(table, trigger="interval", bf_interval=bf_interval)     # (the timers matter)
    got, calls = host_loop(Engine(64, trigger="interval", clock="slurm-sim", bf_interval=bf_interval, **timers), table)
    assert got == want
    assert calls > len(table)


@needs_compiled
def test_slurm_sim_next_wakeup_values():
    eng = Engine(8, trigger="interval", clock="slurm-sim", bf_interval=30, sched_interval=60, batch_sched_delay=3)
    assert eng.next_wakeup() is None
    assert [x.job_id for x in eng.advance(0, [Submit(Job(1, 0, 8, 100))])] == [1]   # the main scheduler
    assert eng.next_wakeup() is None                     # nothing waits
    assert eng.advance(5, [Submit(Job(2, 5, 4, 100))]) == []
    assert eng.stats()["passes"] == 3                    # a main pass (job 2 does not fit) and a backfill pass
    assert eng.next_wakeup() == 60                       # the next full-depth main pass (backfill: nothing changed)
    assert eng.advance(6, [Submit(Job(3, 6, 4, 100))]) == []
    assert eng.stats()["passes"] == 3                    # within batch_sched_delay of the last main pass; no backfill
    assert eng.next_wakeup() == 8                        # the main pass the arrival asked for
    assert eng.advance(8) == [] and eng.stats()["passes"] == 4
    assert eng.next_wakeup() == 35                       # the backfill pass (a job arrived since the last)
    assert eng.advance(35) == [] and eng.stats()["passes"] == 5
    assert eng.next_wakeup() == 60
    assert [x.job_id for x in eng.advance(100, [Finish(1, 100)])] == [2, 3]
    assert eng.next_wakeup() is None

