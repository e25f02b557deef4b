"""The cost of a call into ``pbf.Engine``: flat in the jobs the engine has seen, and on a real log
driven event by event, by the object path (``advance``) and the batch path (``advance_arrays``).

    python bench/engine_calls.py [--seen 1000,10000,50000,200000] [--calls 300] [--trials 3]
    python bench/engine_calls.py --trace SDSC-SP2-1998-4.2-cln.swf.gz [--jobs N] [--trials 3]

``--seen``: for each count, an engine on 128 units first sees that many 10-second one-unit jobs
(submitted and finished in batches of 128), then takes ``--calls`` calls of one Finish and one Submit
each (a host driving it event by event), by each path. Prints the median microseconds of CPU a call
(pass included; the calling thread's CPU time, which the machine's other load does not inflate) over
``--trials`` rounds, the rounds of all counts and paths interleaved so that the
machine's load falls on each.

``--trace``: a log (found by name through $PBF_TRACES or ../shared/traces, or a path; cleaned as
``pbf replay`` cleans it) on its own cluster size, driven through the engine one instant at a time --
one call per instant with that instant's finishes and arrivals, as ``pbf replay`` passes once per
instant -- by each path, and replayed by ``pbf.replay``. Prints, medians of interleaved rounds: the
CPU time (and wall time) inside the engine's calls, a call's cost in all and beside the pass (the passes' own time is
measured inside ``advance``; both paths run the same passes), and ``pbf replay``'s replay time
(``wall_s.replay``). Starts are checked identical to the replay's.

Example (docs/hosts.md, "Cost of a call"): ``python bench/engine_calls.py --trace SDSC-SP2-1998-4.2-cln.swf.gz``.
"""
from __future__ import annotations

import argparse
import heapq
import os
import statistics
import time

import numpy as np

from pbf.engine import Engine, Finish, Job, Start, Submit


def engine_that_saw(seen: int) -> tuple[Engine, int]:
    """An engine that has seen ``seen`` jobs (128 of them running), and the time of its last call."""
    eng = Engine(128)
    eng.advance(0, [Submit(Job(i, 0, 1, 10)) for i in range(min(seen, 128))])
    done, nxt, t = 0, min(seen, 128), 10
    while nxt < seen:
        fins = [Finish(i, t) for i in range(done, min(done + 128, nxt))]
        done += len(fins)
        subs = [Submit(Job(i, t, 1, 10)) for i in range(nxt, min(nxt + 128, seen))]
        nxt += len(subs)
        eng.advance(t, fins + subs)
        t += 10
    return eng, t


def call_cost(seen: int, calls: int, batch: bool) -> float:
    """Microseconds of CPU a call of one Finish and one Submit, after ``seen`` jobs."""
    eng, t = engine_that_saw(seen)
    running = sorted(eng.running())
    job = seen
    t0 = time.thread_time()
    for k in range(calls):
        if batch:
            fin = running[k:k + 1]
            eng.advance_arrays(t, finish_ids=fin, finish_times=[t] * len(fin), submit_ids=[job], submit_times=[t],
                               units=[1], requested=[10 ** 6])
        else:
            events = [Submit(Job(job, t, 1, 10 ** 6))]
            if k < len(running):
                events.insert(0, Finish(running[k], t))
            eng.advance(t, events)
        job += 1
        t += 1
    return (time.thread_time() - t0) / calls * 1e6


class Trace:
    """A cleaned log's jobs in replay order, as arrays, and the replay's starts."""

    def __init__(self, name: str, jobs: int | None):
        import pbf
        import pbf.studies.traces
        path = name if os.path.exists(name) else str(pbf.studies.traces.shared_trace(name))
        table = pbf.read_swf(path)
        if jobs:
            table = table.take(np.arange(min(jobs, len(table))))
        self.table = table
        self.units = int(table.header.fields.get("MaxProcs", table.units.max()))
        order = np.lexsort((table.job_id, table.submit))
        self.ids = table.job_id[order].astype(np.int64)
        self.submit = table.submit[order].astype(np.int64)
        self.size = table.units[order].astype(np.int64)
        self.req = table.req_time[order].astype(np.int64)
        run = np.where(self.req > 0, np.minimum(table.run[order], self.req), table.run[order]).astype(np.int64)
        self.run = dict(zip(self.ids.tolist(), run.tolist()))

    def replay(self) -> tuple[float, dict, float]:
        """(the replay's own wall time, its starts, the CPU time of the whole ``pbf.replay`` call:
        the replay and its set-up and results)."""
        import pbf
        c0 = time.thread_time()
        r = pbf.replay(self.table, pbf.ReplayConfig(units=self.units))
        cpu = time.thread_time() - c0
        starts = {i: s for i, s in zip(r.jobs["id"].tolist(), r.jobs["start"].tolist()) if s >= 0}
        return r.summary["wall_s"]["replay"], starts, cpu


def drive(tr: Trace, batch: bool) -> tuple[float, int, float, dict, float]:
    """The trace through an engine one instant at a time: (CPU seconds inside the engine's calls,
    calls, CPU seconds inside the passes (object path; 0 for the batch path), starts, wall seconds
    inside the calls)."""
    eng = Engine(tr.units)
    ends, starts, inside, wall, calls = [], {}, 0.0, 0.0, 0
    ids, sub, size, req, run = tr.ids, tr.submit, tr.size, tr.req, tr.run
    n, i = len(ids), 0
    sub_list = sub.tolist()
    clock, cpu = time.perf_counter, time.thread_time
    while i < n or ends:
        now = sub_list[i] if i < n else ends[0][0]
        if ends and ends[0][0] < now:
            now = ends[0][0]
        fin = []
        while ends and ends[0][0] == now:
            fin.append(heapq.heappop(ends)[1])
        k = i
        while k < n and sub_list[k] == now:
            k += 1
        if batch:
            fin_ids, fin_t = np.array(fin, dtype=np.int64), np.full(len(fin), now, dtype=np.int64)
            s_ids, s_t, s_units, s_req = ids[i:k], sub[i:k], size[i:k], req[i:k]
            t0, c0 = clock(), cpu()
            d = eng.advance_arrays(now, finish_ids=fin_ids, finish_times=fin_t, submit_ids=s_ids, submit_times=s_t,
                                   units=s_units, requested=s_req)
            inside += cpu() - c0
            wall += clock() - t0
            started = d.started.tolist()
        else:
            events = [Finish(x, now) for x in fin]
            events += [Submit(Job(x, now, u, r)) for x, u, r in zip(ids[i:k].tolist(), size[i:k].tolist(),
                                                                    req[i:k].tolist())]
            t0, c0 = clock(), cpu()
            d = eng.advance(now, events)
            inside += cpu() - c0
            wall += clock() - t0
            started = [x.job_id for x in d if isinstance(x, Start)]
        i = k
        calls += 1
        for x in started:
            starts[x] = now
            heapq.heappush(ends, (now + run[x], x))
    return inside, calls, (0.0 if batch else eng._pass_ns / 1e9), starts, wall


def trace_mode(args) -> None:
    tr = Trace(args.trace, args.jobs)
    rows = {"object": [], "batch": [], "replay": []}
    for _ in range(args.trials):
        for path in ("object", "batch"):
            rows[path].append(drive(tr, path == "batch"))
        rows["replay"].append(tr.replay())
    want = rows["replay"][0][1]
    replay_s = statistics.median(r[0] for r in rows["replay"])
    pass_s = statistics.median(r[2] for r in rows["object"])
    calls = rows["object"][0][1]
    print(f"{os.path.basename(args.trace)}: {len(tr.ids):,} jobs on {tr.units} units, {calls:,} calls (one per "
          f"instant); cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}; medians of {args.trials} "
          "interleaved rounds; CPU time of the calling thread (wall time under the machine's load in brackets)")
    for path in ("object", "batch"):
        inside = statistics.median(r[0] for r in rows[path])
        wall = statistics.median(r[4] for r in rows[path])
        same = sum(rows[path][0][3].get(i) == s for i, s in want.items())
        print(f"  {path:6} path: {inside:6.3f} s in the calls ({wall:6.3f} s), {inside / calls * 1e6:5.1f} us a call "
              f"({wall / calls * 1e6:5.1f} us), {(inside - pass_s) / calls * 1e6:5.1f} us beside the pass; "
              f"{wall / replay_s:5.1f}x the replay's wall time; starts as the replay's: {same:,} of {len(want):,}")
    replay_cpu = statistics.median(r[2] for r in rows["replay"])
    print(f"  the passes: {pass_s:.3f} s of CPU ({pass_s / calls * 1e6:.2f} us a call); pbf replay: {replay_s:.3f} s "
          f"(wall_s.replay), {replay_cpu:.3f} s of CPU for the whole pbf.replay call (set-up and results too)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seen", default="1000,10000,50000,200000")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--trace", default=None, help="a log, driven event by event (see the module docstring)")
    ap.add_argument("--jobs", type=int, default=None, help="with --trace: its first N jobs")
    args = ap.parse_args(argv)
    if args.trace:
        trace_mode(args)
        return 0
    seen = [int(x) for x in args.seen.split(",")]
    times = {(s, b): [] for s in seen for b in (False, True)}
    for _ in range(args.trials):
        for s in seen:
            for b in (False, True):
                times[s, b].append(call_cost(s, args.calls, b))
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}; CPU time of a call of one Finish and "
          f"one Submit, pass included (median of {args.trials})")
    for s in seen:
        print(f"{s:>9,} jobs seen: advance {statistics.median(times[s, False]):7.1f} us, "
              f"advance_arrays {statistics.median(times[s, True]):7.1f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
