"""The compiled batch call (Engine.batch_buffers): advance_arrays' decisions, call for call, on
preallocated arrays and on columns the host binds; the same refusals, each leaving the engine as it
was; the engine's lock."""
import heapq
import re
import threading
import time

import numpy as np
import pytest
from test_engine_batch import CONFIGS, drive, make, norm, trace

import pbf
from pbf.engine import Engine, Finish, ProtocolError

from helpers import busy_engine, snapshot

pytest.importorskip("pbf._engine_batch", reason="pbf was built before ext/_engine_batch.pyx: rebuild it "
                    "(pip install -e .)")


def drive_buffers(eng, jobs):
    """``drive`` through the engine's batch buffers (its own arrays, run and user bound)."""
    b = eng.batch_buffers(256)
    b.bind(run=np.zeros(256, dtype=np.int64), user=np.zeros(256, dtype=np.int64))
    runs = {j["id"]: j["run"] for j in jobs}
    ends, out, i = [], [], 0
    while i < len(jobs) or ends:
        now = min(([jobs[i]["submit"]] if i < len(jobs) else []) + ([ends[0][0]] if ends else []))
        nf = 0
        while ends and ends[0][0] == now:
            b.finish_ids[nf], b.finish_times[nf] = heapq.heappop(ends)[1], now
            nf += 1
        ns = 0
        while i < len(jobs) and jobs[i]["submit"] == now:
            j = jobs[i]
            b.submit_ids[ns], b.submit_times[ns], b.units[ns] = j["id"], j["submit"], j["units"]
            b.requested[ns], b.run[ns], b.user[ns] = j["requested"], j["run"], j["user"]
            ns += 1
            i += 1
        n = b.call(now, nf, ns)
        assert n == len(b.started)
        d = b.decisions().objects()
        out.append(norm(d))
        for x in d:
            if isinstance(x, pbf.Start):
                heapq.heappush(ends, (now + runs[x.job_id], x.job_id))
    return out, b


@pytest.mark.parametrize("name", CONFIGS)
def test_buffers_decide_as_the_object_path(name):
    jobs = [dict(j, partition=-1) for j in trace()]
    want = drive(make(name), jobs, batch=False)
    eng = make(name)
    got, b = drive_buffers(eng, jobs)
    assert got == want
    assert sum(x[0] == "Rejected" for call in got for x in call) > 0
    counts = {k: v for k, v in eng.stats().items() if k in ("submitted", "started", "finished", "passes", "rejected")}
    ref = make(name)
    drive(ref, jobs, batch=False)
    assert counts == {k: v for k, v in ref.stats().items() if k in counts}
    if name in ("easy", "conservative", "interval trigger"):
        assert b.fallbacks <= 6          # (a call with a user not seen yet goes through advance_arrays)


def test_buffers_on_bound_columns_reproduce_replay():
    from pbf.workload.beocat import generate_beocat
    t = generate_beocat(400, 3 * 3600, seed=5)
    t.header.set("MaxProcs", 256)
    want = pbf.replay(t, pbf.ReplayConfig(units=256)).jobs["start"]
    order = np.lexsort((t.job_id, t.submit))
    ids, sub = t.job_id[order].astype(np.int64), t.submit[order].astype(np.int64)
    runs = dict(zip(ids.tolist(), np.minimum(t.run, t.req_time)[order].tolist()))
    eng = Engine(256)
    b = eng.batch_buffers()
    b.bind(submit_ids=ids, submit_times=sub, units=t.units[order].astype(np.int64),
           requested=t.req_time[order].astype(np.int64))
    starts, ends, i, n = {}, [], 0, len(ids)
    while i < n or ends:
        now = min(([int(sub[i])] if i < n else []) + ([ends[0][0]] if ends else []))
        nf = 0
        while ends and ends[0][0] == now:
            b.finish_ids[nf], b.finish_times[nf] = heapq.heappop(ends)[1], now
            nf += 1
        k = i
        while k < n and sub[k] == now:
            k += 1
        b.call(now, nf, k - i, 0, i)
        i = k
        for x in b.started.tolist():
            starts[x] = now
            heapq.heappush(ends, (now + runs[x], x))
    assert np.array_equal(np.array([starts[int(j)] for j in t.job_id]), want)
    assert b.fallbacks == 1              # the first call: the unknown user is registered


def test_decisions_in_the_buffers():
    eng = Engine(8, report_reservations=True)
    b = eng.batch_buffers(8)
    b.submit_ids[:5] = [1, 2, 3, 4, 5]
    b.submit_times[:5] = 0
    b.units[:5] = [6, 4, 2, 9, 1]
    b.requested[:5] = [100, 50, 30, 10, 0]
    assert b.call(0, 0, 5) == 2
    assert b.started.tolist() == [1, 3] and b.offsets.tolist() == [0, 6, 8]
    assert b.units_of(0).tolist() == [0, 1, 2, 3, 4, 5] and b.units_of(1).tolist() == [6, 7]
    assert b.start_units.tolist() == list(range(8))
    assert b.rejected.tolist() == [4, 5]
    assert b.reasons == ["larger than the cluster: asks 9 units of 8", "no requested time (requested 0)"]
    assert b.reserved.tolist() == [2] and b.reserved_at.tolist() == [100]
    s = eng.stats()
    assert (s["submitted"], s["rejected"], s["started"], s["passes"]) == (5, 2, 2, 1)
    # the paths mix: a job submitted by the buffers finishes by an object, and the other way round
    out = eng.advance(30, [Finish(3, 30), pbf.Submit(pbf.Job(6, 30, 2, 10))])
    assert [x.job_id for x in out if isinstance(x, pbf.Start)] == [6]
    b.finish_ids[:2], b.finish_times[:2] = [1, 6], [40, 100]
    assert b.call(100, 2) == 1 and b.started.tolist() == [2]
    assert eng.stats()["finished"] == 3 and eng.stats()["started"] == 4
    with pytest.raises(ProtocolError, match="duplicate job id 4"):      # a rejected id stays taken
        b.submit_ids[0], b.submit_times[0], b.units[0], b.requested[0] = 4, 100, 1, 10
        b.call(100, 0, 1)


MISUSE = [
    (dict(now=-5), "time went backwards: now=-5 after now=0"),
    (dict(submit_ids=[9], submit_times=[11], units=[1], requested=[10]), "is at 11, later than now=10"),
    (dict(finish_ids=[3, 1], finish_times=[5, 4]), "is at 4, before the finish before it"),
    (dict(finish_ids=[77], finish_times=[5]), "cannot finish job 77: it is unknown"),
    (dict(finish_ids=[2], finish_times=[5]), "cannot finish job 2: it is pending"),
    (dict(finish_ids=[3, 3], finish_times=[5, 6]), "already finished earlier in this call"),
    (dict(finish_ids=[3], finish_times=[-1]), "before the last call's now at 0"),
    (dict(submit_ids=[1], submit_times=[5], units=[1], requested=[10]), "duplicate job id 1"),
    (dict(submit_ids=[9, 9], submit_times=[5, 6], units=[1, 1], requested=[10, 10]), "duplicate job id 9"),
    (dict(submit_ids=list(range(20, 40)) + [20], submit_times=[5] * 21, units=[1] * 21, requested=[10] * 21),
     "duplicate job id 20"),
    (dict(submit_ids=[9], submit_times=[5], units=[0], requested=[10]), "asks for 0 units"),
    (dict(submit_ids=[9], submit_times=[5], units=[1], requested=[2 ** 41]), "has requested time 2199023255552"),
    (dict(submit_ids=[9], submit_times=[5], units=[1], requested=[10], run=[-2]), "has run time -2"),
    (dict(submit_ids=[9, 8], submit_times=[6, 5], units=[1, 1], requested=[10, 10]), "before the submission before"),
    (dict(finish_ids=[3], finish_times=[5], submit_ids=[9, 8], submit_times=[5, 6], units=[1, 1],
          requested=[10, -1], run=[3, -3]), "has run time -3"),
]


@pytest.mark.parametrize("kw, message", MISUSE)
def test_misuse_raises_as_advance_arrays_and_leaves_state_unchanged(kw, message):
    eng = busy_engine()
    b = eng.batch_buffers(32)
    b.bind(run=np.full(32, -1, dtype=np.int64))
    before = snapshot(eng)
    now = kw.pop("now", 10)
    for name, values in kw.items():
        getattr(b, name)[:len(values)] = values
    with pytest.raises(ProtocolError, match=re.escape(message)):
        b.call(now, len(kw.get("finish_ids", ())), len(kw.get("submit_ids", ())))
    assert snapshot(eng) == before
    fresh = busy_engine()
    b.finish_ids[0], b.finish_times[0] = 3, 30
    b.call(30, 1)
    assert norm(b.decisions().objects()) == norm(fresh.advance(30, [Finish(3, 30)]))


def test_buffer_misuse():
    eng = busy_engine()
    b = eng.batch_buffers(4)
    with pytest.raises(ProtocolError, match="past the finish columns' 4 values"):
        b.call(10, 3, 0, 2)
    with pytest.raises(ProtocolError, match="past the submission columns"):
        b.call(10, 0, 5)
    with pytest.raises(ProtocolError, match="must be >= 0"):
        b.call(10, -1)
    with pytest.raises(ProtocolError, match="units must be a 1-d C-contiguous int64 array"):
        b.bind(units=np.zeros(4, dtype=np.int32))
    with pytest.raises(ProtocolError, match="no column 'size'"):
        b.bind(size=np.zeros(4, dtype=np.int64))
    with pytest.raises(pbf.ConfigError, match="capacity"):
        eng.batch_buffers(0)
    b.bind(units=np.arange(3, dtype=np.int64))
    assert eng.batch_buffers(2) is b and b.capacity == 4 and len(b.finish_ids) == 4
    assert eng.batch_buffers(8) is b and b.capacity == 8 and len(b.finish_ids) == 8
    assert b.units.tolist() == [0, 1, 2]                # (a bound column stays)
    eng.close()
    with pytest.raises(ProtocolError, match="the engine is closed"):
        eng.batch_buffers().call(20)


def test_ids_that_are_not_ints():
    eng = Engine(8)
    eng.advance_arrays(0, submit_ids=["a"], submit_times=[0], units=[4], requested=[10])
    b = eng.batch_buffers()
    b.submit_ids[0], b.submit_times[0], b.units[0], b.requested[0] = 7, 5, 2, 5
    with pytest.raises(ProtocolError, match="ids that are not 64-bit ints"):
        b.call(5, 0, 1)


def test_a_call_waits_for_another_threads_call():
    eng = busy_engine()
    b = eng.batch_buffers()
    done = []
    with eng._lock:
        with eng._lock:                  # (reentrant)
            b.finish_ids[0], b.finish_times[0] = 3, 30
            th = threading.Thread(target=lambda: done.append(b.call(30, 1)))
            th.start()
            time.sleep(0.2)
            assert not done and eng.stats()["finished"] == 0
    th.join(10)
    assert done == [0] and eng.stats()["finished"] == 1
    with pytest.raises(RuntimeError, match="un-acquired"):
        eng._lock.release()


@pytest.mark.parametrize("workers", [1, 2])
def test_long_queues_and_worker_threads(workers):
    """Queues of hundreds of jobs (the compiled call's pass then runs without the GIL) and passes on
    worker threads: advance's decisions still."""
    jobs = [dict(j, partition=-1, submit=j["submit"] // 20) for j in trace(900, units=16, seed=7)]
    want = drive(Engine(16, report_reservations=True, backfill=pbf.Backfill(reservations=None)), jobs, batch=False)
    eng = Engine(16, report_reservations=True, backfill=pbf.Backfill(reservations=None), workers=workers)
    got, b = drive_buffers(eng, jobs)
    assert got == want
    assert max(len(call) for call in got) > 256          # (a pass with that many reservations: a long queue)
    eng.close()


@pytest.mark.parametrize("kind", ["int64", "int32", "read-only", "strided", "big-endian", "list", "tuple", "mixed"])
def test_advance_arrays_takes_every_kind_of_column(kind):
    """advance_arrays goes through the compiled call for int64 columns and lists of ints, the long way
    for the rest: the same decisions whatever the columns' kind."""
    def col(values):
        a = np.array(values, dtype=np.int64)
        if kind == "int32":
            return a.astype(np.int32)
        if kind == "read-only":
            a.flags.writeable = False
            return a
        if kind == "strided":
            return np.repeat(a, 2)[::2]
        if kind == "big-endian":
            return a.astype(">i8")
        if kind in ("list", "tuple"):
            return list(values) if kind == "list" else tuple(values)
        return a if kind == "int64" else list(values)      # (mixed: arrays of ids, lists of the rest)
    ids = (lambda v: np.array(v, dtype=np.int64)) if kind == "mixed" else col
    eng = busy_engine()
    d = eng.advance_arrays(30, finish_ids=ids([3]), finish_times=col([30]), submit_ids=ids([7, 8, 9]),
                           submit_times=col([30, 30, 30]), units=col([2, 9, 1]), requested=col([10, 10, 0]),
                           run=col([5, 5, 5]), user=col([-1, -1, -1]))
    ref = busy_engine()
    want = ref.advance(30, [Finish(3, 30)] + [pbf.Submit(pbf.Job(i, 30, u, r, run=5)) for i, u, r in
                                              ((7, 2, 10), (8, 9, 10), (9, 1, 0))])
    assert norm(d.objects()) == norm(want)
    assert eng.stats() == ref.stats() and eng.stats()["rejected"] == 2
    with pytest.raises(ProtocolError, match="duplicate job id 7"):
        eng.advance_arrays(40, submit_ids=ids([7]), submit_times=col([40]), units=col([1]), requested=col([1]))
