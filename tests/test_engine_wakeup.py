"""Engine.next_wakeup: a host that calls at each event and at each wake-up the engine asks for gets
pbf replay's schedule under the interval trigger (free and model clocks) and with outages that end
by themselves."""
import heapq

import numpy as np
import pytest

import pbf
from pbf.engine import Engine, Fail, Finish, Job, ProtocolError, Submit

from helpers import write_small_swf


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


@pytest.mark.parametrize("trigger", ["event", "interval"])
def test_outages_ending_by_themselves(table, trigger):
    failures = pbf.Failures(mtbf_hours=20, repair_hours=1, seed=2, node_cores=8)
    start, end = int(table.submit.min()), int(table.submit.max())
    fails = [Fail(units=o.units, at=o.time, until=o.until) for o in failures.outages(64, start, end)
             if o.kind == "fail"]
    assert fails and all(f.until is not None for f in fails)
    want = replay_starts(table, trigger=trigger, failures=failures)
    got, _ = host_loop(Engine(64, trigger=trigger), table, fails)
    assert got == want


def test_bad_timing_settings():
    with pytest.raises(pbf.ConfigError, match="trigger must be 'event' or 'interval'"):
        Engine(8, trigger="cron")
    with pytest.raises(pbf.ConfigError, match="bf_interval must be an int from 1"):
        Engine(8, trigger="interval", bf_interval=0)
    with pytest.raises(pbf.ConfigError, match="need clock='model'"):
        Engine(8, bf_max_time=5)
    with pytest.raises(pbf.ConfigError, match="clock must be 'free' or 'model'"):
        Engine(8, clock="slurm-sim")

