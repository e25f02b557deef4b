"""pbf inside a real SimPy model (pbf.hosts.simpy): the same starts as ``pbf replay``, one engine call
per instant, rejected jobs answered, failures and reservations handed back."""
from pathlib import Path

import numpy as np
import pytest

import pbf

simpy = pytest.importorskip("simpy", reason="SimPy is the host under test (pip install simpy; the test extra has it)")

from pbf.hosts import MODES  # noqa: E402
from pbf.hosts.simpy import SimPyHost  # noqa: E402

TRACE = Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"


def run_in_simpy(jobs, units, backfill, **engine):
    """Every job of ``jobs`` arrives at its submit time and runs its run time (cut at its request, as
    the replay kills it) in a SimPy model; returns {id: start (-1: rejected)} and the host."""
    env = simpy.Environment()
    host = SimPyHost(env, pbf.Engine(units, backfill=backfill, **engine))
    starts = {}

    def job(j):
        decision = yield env.process(host.run(j, min(int(run[j.id]), j.requested)))
        starts[j.id] = decision.at if isinstance(decision, pbf.Start) else -1

    run = dict(zip(jobs.job_id.tolist(), jobs.run.tolist()))

    def arrivals():
        for i, t, u, r in zip(jobs.job_id.tolist(), jobs.submit.tolist(), jobs.units.tolist(), jobs.req_time.tolist()):
            yield env.timeout(t - env.now)
            env.process(job(pbf.Job(i, t, u, r)))

    env.process(arrivals())
    env.run()
    host.close()
    return starts, host


@pytest.mark.parametrize("mode", list(MODES))
def test_starts_are_pbf_replays(mode):
    jobs = pbf.read_swf(TRACE)
    jobs = jobs.take(np.arange(600))
    ref = pbf.replay(jobs, pbf.ReplayConfig(units=256, backfill=MODES[mode])).jobs
    want = dict(zip(ref["id"].tolist(), ref["start"].tolist()))
    got, host = run_in_simpy(jobs, 256, MODES[mode])
    same = sum(got[i] == want[i] for i in want)
    assert same == len(want) == 600, f"{mode}: {same} of {len(want)} starts identical"
    # one call per instant with events (arrivals and completions); a run-0 job adds a second one
    assert host.calls <= len(set(jobs.submit.tolist()) | {got[i] + min(r, q) for i, r, q in
                                                          zip(jobs.job_id.tolist(), jobs.run.tolist(),
                                                              jobs.req_time.tolist())})


def test_the_interval_trigger_wakes_the_host_as_the_engine_asks():
    jobs = pbf.read_swf(TRACE)
    jobs = jobs.take(np.arange(400))
    ref = pbf.replay(jobs, pbf.ReplayConfig(units=256, trigger="interval", bf_interval=120)).jobs
    want = dict(zip(ref["id"].tolist(), ref["start"].tolist()))
    got, host = run_in_simpy(jobs, 256, pbf.Backfill(), trigger="interval", bf_interval=120)
    assert sum(got[i] == want[i] for i in want) == len(want) == 400


def test_one_call_per_instant_and_rejected_jobs():
    env = simpy.Environment()
    seen = []
    host = SimPyHost(env, pbf.Engine(8, report_reservations=True), on_decision=seen.append)
    out = {}

    def user(name, at, units, requested, run):
        yield env.timeout(at)
        out[name] = yield env.process(host.run(pbf.Job(name, at, units, requested), run))

    for args in (("a", 0, 6, 100, 50), ("b", 0, 4, 100, 100), ("c", 0, 2, 30, 30), ("wide", 0, 9, 10, 1),
                 ("never", 5, 1, 0, 1)):
        env.process(user(*args))
    env.run()
    assert isinstance(out["wide"], pbf.Rejected) and "larger than the cluster" in out["wide"].reason
    assert isinstance(out["never"], pbf.Rejected) and "no requested time" in out["never"].reason
    assert {k: v.at for k, v in out.items() if isinstance(v, pbf.Start)} == {"a": 0, "c": 0, "b": 50}
    # instants 0 (four arrivals), 5, 30 and 50 (completions), 150 (the last one): one call each
    assert host.calls == 5
    assert pbf.Reserve("b", 100) in seen       # re-planned when a finished early
    assert host.reservations == {}


def test_a_failure_requeues_a_job_that_then_runs_again():
    env = simpy.Environment()
    host = SimPyHost(env, pbf.Engine(4, on_failure="requeue"))
    out = {}

    def user():
        out["d"] = yield env.process(host.run(pbf.Job(1, 0, 4, 100), 60))
        out["end"] = env.now

    def breaker():
        yield env.timeout(10)
        host.outage(pbf.Fail(units=(0,), at=0, until=20))

    env.process(user())
    env.process(breaker())
    env.run()
    assert out["d"].at == 20 and out["end"] == 80

