"""The engine's batch path (Engine.advance_arrays): the object path's decisions, call for call, and
the same refusals, each leaving the engine exactly as it was."""
import heapq
import re

import numpy as np
import pytest

import pbf
from pbf.engine import Engine, Finish, Job, ProtocolError, Submit
from pbf.engine_buffers import BatchCore
from pbf.plugins.multifactor import Multifactor

from helpers import busy_engine, snapshot

COMPILED = BatchCore is not None


def trace(n=600, units=32, seed=3):
    """Random jobs: bursts of arrivals, mixed sizes, run times at most the request, a few users."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(40, n) * (rng.random(n) < 0.6)).astype(np.int64)
    size = np.minimum(rng.geometric(0.25, n), units + 2)      # a few wider than the cluster
    req = rng.integers(60, 4000, n)
    req[rng.random(n) < 0.02] = 0                             # a few with no requested time
    run = np.minimum(rng.integers(1, 4000, n), np.maximum(req, 1))
    user = rng.integers(0, 6, n)
    part = rng.integers(0, 3, n)
    return [dict(id=i + 1, submit=int(s), units=int(u), requested=int(r), run=int(x), user=int(w), partition=int(p))
            for i, (s, u, r, x, w, p) in enumerate(zip(submit, size, req, run, user, part))]


def norm(decisions):
    return [(type(d).__name__, d.job_id, tuple(np.asarray(getattr(d, "units", ())).tolist()),
             getattr(d, "at", None), getattr(d, "reason", None)) for d in decisions]


def drive(eng, jobs, batch):
    """Hand ``jobs`` to ``eng`` one instant at a time (a finish at its start + run time), by
    advance_arrays (``batch``) or advance; returns every call's decisions as Start/Rejected/Reserve
    objects."""
    runs = {j["id"]: j["run"] for j in jobs}
    ends, out, i = [], [], 0
    while i < len(jobs) or ends:
        now = min(([jobs[i]["submit"]] if i < len(jobs) else []) + ([ends[0][0]] if ends else []))
        fin = []
        while ends and ends[0][0] == now:
            fin.append(heapq.heappop(ends)[1])
        sub = []
        while i < len(jobs) and jobs[i]["submit"] == now:
            sub.append(jobs[i])
            i += 1
        if batch:
            d = eng.advance_arrays(now, finish_ids=np.array(fin, dtype=np.int64), finish_times=[now] * len(fin),
                                   submit_ids=np.array([j["id"] for j in sub], dtype=np.int64),
                                   submit_times=[j["submit"] for j in sub], units=[j["units"] for j in sub],
                                   requested=[j["requested"] for j in sub], run=[j["run"] for j in sub],
                                   user=[j["user"] for j in sub], partition=[j["partition"] for j in sub])
            d = d.objects()
        else:
            d = eng.advance(now, [Finish(x, now) for x in fin] + [Submit(Job(**j)) for j in sub])
        out.append(norm(d))
        for x in d:
            if isinstance(x, pbf.Start):
                heapq.heappush(ends, (now + runs[x.job_id], x.job_id))
    return out


CONFIGS = {
    "easy": dict(),
    "conservative": dict(backfill=pbf.Backfill(reservations=None)),
    "sjf, ave2": dict(priority="sjf", predictor="ave2"),
    "multifactor": dict(priority=Multifactor(weight_age=1000, weight_job_size=500, weight_partition=300,
                                                 partition_factors={0: 1.0, 1: 0.5, 2: 0.2})),
    "python predictor": dict(predictor="python"),
    "interval trigger": dict(trigger="interval", bf_interval=300),
    "interval trigger, model clock": dict(trigger="interval", bf_interval=60, clock="model", cost_per_test_us=100_000),
}
if COMPILED:        # (a build before ext/_engine_batch.pyx has no slurm-sim clock in the engine)
    CONFIGS["slurm-sim timers"] = dict(trigger="interval", bf_interval=60, clock="slurm-sim", default_queue_depth=3)


class LastRun:
    """A Python predictor: the user's last run time, capped at the request (the requested time before)."""
    def __init__(self):
        self.last = {}

    def predict(self, jobs, now):
        return np.array([min(self.last.get(u, r), r) for u, r in zip(jobs.user.tolist(), jobs.requested.tolist())])

    def fit(self, jobs, now):
        self.last.update(zip(jobs.user.tolist(), jobs.run.tolist()))


def make(name, cluster=32):
    kw = dict(CONFIGS[name])
    if kw.get("predictor") == "python":
        kw["predictor"] = LastRun()
    return Engine(cluster, report_reservations=True, **kw)


@pytest.mark.parametrize("name", CONFIGS)
def test_batch_path_decides_as_the_object_path(name):
    jobs = trace()
    a = drive(make(name), jobs, batch=False)
    b = drive(make(name), jobs, batch=True)
    assert a == b
    assert sum(x[0] == "Rejected" for call in b for x in call) > 0


def test_batch_path_on_a_node_cluster_goes_through_the_objects():
    nodes = [pbf.Node(f"n{i}", 8, memory_mb=16000) for i in range(4)]
    jobs = [dict(j, units=min(j["units"], 30)) for j in trace(200)]
    a = drive(Engine(pbf.Cluster.of_nodes(nodes), report_reservations=True), jobs, batch=False)
    b = drive(Engine(pbf.Cluster.of_nodes(nodes), report_reservations=True), jobs, batch=True)
    assert a == b


def test_batch_path_reproduces_replay():
    from pbf.workload.beocat import generate_beocat
    t = generate_beocat(400, 3 * 3600, seed=5)
    t.header.set("MaxProcs", 256)
    want = pbf.replay(t, pbf.ReplayConfig(units=256)).jobs["start"]
    jobs = [dict(id=int(i), submit=int(s), units=int(u), requested=int(r), run=int(x), user=-1, partition=-1)
            for i, s, u, r, x in zip(t.job_id, t.submit, t.units, t.req_time, np.minimum(t.run, t.req_time))]
    starts = {}
    eng = Engine(256)
    runs = {j["id"]: j["run"] for j in jobs}
    ends, i = [], 0
    while i < len(jobs) or ends:
        now = min(([jobs[i]["submit"]] if i < len(jobs) else []) + ([ends[0][0]] if ends else []))
        fin = []
        while ends and ends[0][0] == now:
            fin.append(heapq.heappop(ends)[1])
        k = i
        while i < len(jobs) and jobs[i]["submit"] == now:
            i += 1
        sub = jobs[k:i]
        d = eng.advance_arrays(now, finish_ids=fin, finish_times=[now] * len(fin),
                               submit_ids=[j["id"] for j in sub], submit_times=[now] * len(sub),
                               units=[j["units"] for j in sub], requested=[j["requested"] for j in sub])
        for x in d.started.tolist():
            starts[x] = now
            heapq.heappush(ends, (now + runs[x], x))
    assert np.array_equal(np.array([starts[int(j)] for j in t.job_id]), want)


def test_decision_arrays():
    eng = Engine(8, report_reservations=True)
    d = eng.advance_arrays(0, submit_ids=np.array([1, 2, 3, 4]), submit_times=[0, 0, 0, 0], units=[6, 4, 2, 9],
                           requested=[100, 50, 30, 10])
    assert d.started.dtype == np.int64 and d.started.tolist() == [1, 3]
    assert d.units_of(0).tolist() == [0, 1, 2, 3, 4, 5] and d.units_of(1).tolist() == [6, 7]
    assert d.rejected.tolist() == [4] and d.reasons == ("larger than the cluster: asks 9 units of 8",)
    assert d.reserved.tolist() == [2] and d.reserved_at.tolist() == [100]
    assert eng.stats()["rejected"] == 1 and eng.stats()["submitted"] == 4
    # the paths mix: a job submitted by arrays finishes by an object, and the other way round
    out = eng.advance(30, [Finish(3, 30), Submit(Job(5, 30, 2, 10))])
    assert [x.job_id for x in out if isinstance(x, pbf.Start)] == [5]
    d = eng.advance_arrays(100, finish_ids=[1, 5], finish_times=[40, 100])
    assert d.started.tolist() == [2]


def test_host_ids_of_any_kind_come_back_as_object_arrays():
    eng = Engine(8)
    d = eng.advance_arrays(0, submit_ids=["a", ("b", 1)], submit_times=[0, 0], units=[4, 4], requested=[10, 20])
    assert d.started.dtype == object and d.started.tolist() == ["a", ("b", 1)]
    d = eng.advance_arrays(10, finish_ids=["a"], finish_times=[10], submit_ids=[7], submit_times=[10], units=[2],
                           requested=[5])
    assert d.started.tolist() == [7]


@pytest.mark.parametrize("kw, message", [
    (dict(now=-5), "time went backwards: now=-5 after now=0"),
    (dict(submit_ids=[9], submit_times=[11], units=[1], requested=[10]), "is at 11, later than now=10"),
    (dict(finish_ids=[3, 1], finish_times=[5, 4]), "is at 4, before the finish before it"),
    (dict(finish_ids=[77], finish_times=[5]), "cannot finish job 77: it is unknown"),
    (dict(finish_ids=[2], finish_times=[5]), "cannot finish job 2: it is pending"),
    (dict(finish_ids=[3, 3], finish_times=[5, 6]), "already finished earlier in this call"),
    (dict(finish_ids=[3], finish_times=[-1]), "before the last call's now at 0"),
    (dict(submit_ids=[1], submit_times=[5], units=[1], requested=[10]), "duplicate job id 1"),
    (dict(submit_ids=[9, 9], submit_times=[5, 6], units=[1, 1], requested=[10, 10]), "duplicate job id 9"),
    (dict(submit_ids=[9], submit_times=[5], units=[0], requested=[10]), "asks for 0 units"),
    (dict(submit_ids=[9], submit_times=[5], units=[1.5], requested=[10]), "units must be a 1-d sequence of integ"),
    (dict(submit_ids=[9], submit_times=[5], units=[1, 2], requested=[10]), "units has 2 values, expected 1"),
    (dict(submit_ids=[9], submit_times=[5], units=[1], requested=[2 ** 41]), "has requested time 2199023255552"),
    (dict(submit_ids=[9], submit_times=[5], units=[1], requested=[10], run=[-2]), "has run time -2"),
    (dict(submit_ids=[[9]], submit_times=[5], units=[1], requested=[10]), "job id [9] is not hashable"),
    (dict(submit_ids=[9, 8], submit_times=[6, 5], units=[1, 1], requested=[10, 10]), "before the submission before"),
    (dict(finish_ids=[3], finish_times=[5], submit_ids=[9, 8], submit_times=[5, 6], units=[1, 1],
          requested=[10, -1], run=[3, -3]), "has run time -3"),
])
def test_misuse_raises_and_leaves_state_unchanged(kw, message):
    eng = busy_engine()
    before = snapshot(eng)
    now = kw.pop("now", 10)
    with pytest.raises(ProtocolError, match=re.escape(message)):
        eng.advance_arrays(now, **kw)
    assert snapshot(eng) == before
    fresh = busy_engine()
    a = eng.advance_arrays(30, finish_ids=[3], finish_times=[30]).objects()
    assert norm(a) == norm(fresh.advance(30, [Finish(3, 30)]))
