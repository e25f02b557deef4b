"""The cost of a call into ``pbf.Engine``: flat in the jobs the engine has seen, and on a real log
driven event by event, by the object path (``advance``), the batch path (``advance_arrays``) and the
compiled batch call (``batch_buffers().call``).

    python bench/engine_calls.py [--seen 1000,10000,50000,200000] [--calls 300] [--trials 3]
    python bench/engine_calls.py --trace SDSC-SP2-1998-4.2-cln.swf.gz [--jobs N] [--trials 3]
    python bench/engine_calls.py --trace SDSC-SP2-1998-4.2-cln.swf.gz --builds OLD_DIR,NEW_DIR [--trials 5]

``--seen``: for each count, an engine on 128 units first sees that many 10-second one-unit jobs
(submitted and finished in batches of 128), then takes ``--calls`` calls of one Finish and one Submit
each (a host driving it event by event), by each path. Prints the median microseconds of CPU a call
(pass included; the calling thread's CPU time, which the machine's other load does not inflate, of
the whole loop of calls) over ``--trials`` rounds, the rounds of all counts and paths interleaved so
that the machine's load falls on each.

``--trace``: a log (found by name through $PBF_TRACES or ../shared/traces, or a path; cleaned as
``pbf replay`` cleans it) on its own cluster size, driven through the engine one instant at a time --
one call per instant with that instant's finishes and arrivals, as ``pbf replay`` passes once per
instant. A first drive per path (a host with its heap of ends) checks the starts against the replay's
and records each call's input; the timed rounds then make the same calls in a loop with nothing else
in it (no host: its events were made before the loop), timed whole (the CPU time of the calling
thread; timing each call would add ~0.6 us of clock reading to it). Prints medians of interleaved
rounds: the CPU time of the calls, a call's cost in all and beside the pass (the passes' own time is
measured inside ``advance``), and ``pbf.replay``'s own time on the same log (its replay loop,
``wall_s.replay``, and the CPU time of the whole ``pbf.replay`` call), with the ratios.

``--builds OLD,NEW``: the ``--trace`` (or ``--seen``) measurement in a subprocess per build
directory (on ``PYTHONPATH``), one round each in turn, ``--trials`` rounds: the old and the new build
side by side under the same load. A build without the compiled call measures the other paths.

Example (docs/hosts.md, "Cost of a call"): ``python bench/engine_calls.py --trace SDSC-SP2-1998-4.2-cln.swf.gz``.
"""
from __future__ import annotations

import argparse
import heapq
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from pbf.engine import Engine, Finish, Job, Start, Submit

PATHS = ("object", "batch", "buffers")


def has_buffers() -> bool:
    return hasattr(Engine, "batch_buffers")


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


def call_cost(seen: int, calls: int, path: str) -> float:
    """Microseconds of CPU a call of one Finish and one Submit, after ``seen`` jobs."""
    eng, t = engine_that_saw(seen)
    running = sorted(eng.running())[:calls]
    ids = np.arange(seen, seen + calls, dtype=np.int64)
    times = np.arange(t, t + calls, dtype=np.int64)
    fin = np.array(running + [-1] * (calls - len(running)), dtype=np.int64)
    if path == "object":
        args = [(int(times[k]), ([Finish(int(fin[k]), int(times[k]))] if k < len(running) else [])
                 + [Submit(Job(int(ids[k]), int(times[k]), 1, 10 ** 6))]) for k in range(calls)]
        call = eng.advance
    elif path == "batch":
        one = np.ones(1, dtype=np.int64)
        req = np.full(1, 10 ** 6, dtype=np.int64)
        args = [(int(times[k]), dict(finish_ids=fin[k:k + 1], finish_times=times[k:k + 1], submit_ids=ids[k:k + 1],
                                     submit_times=times[k:k + 1], units=one, requested=req))
                if k < len(running) else (int(times[k]), dict(submit_ids=ids[k:k + 1], submit_times=times[k:k + 1],
                                                              units=one, requested=req)) for k in range(calls)]
        t0 = time.thread_time()
        for now, kw in args:
            eng.advance_arrays(now, **kw)
        return (time.thread_time() - t0) / calls * 1e6
    else:
        b = eng.batch_buffers()
        b.bind(finish_ids=fin, finish_times=times, submit_ids=ids, submit_times=times,
               units=np.ones(calls, dtype=np.int64), requested=np.full(calls, 10 ** 6, dtype=np.int64))
        args = [(int(times[k]), int(k < len(running)), 1, k, k) for k in range(calls)]
        call = b.call
    t0 = time.thread_time()
    for a in args:
        call(*a)
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


def drive(tr: Trace, path: str) -> tuple[dict, list, float]:
    """The trace through an engine one instant at a time, as a host would (its heap of ends): the
    starts, each call's input (now, the finished ids, the first and last submission) and the CPU
    seconds inside the passes (object path)."""
    eng = Engine(tr.units)
    b = eng.batch_buffers() if path == "buffers" else None
    if b is not None:
        b.bind(submit_ids=tr.ids, submit_times=tr.submit, units=tr.size, requested=tr.req)
    ends, starts, calls = [], {}, []
    ids, sub, size, req, run = tr.ids, tr.submit, tr.size, tr.req, tr.run
    n, i = len(ids), 0
    sub_list = sub.tolist()
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
        if path == "buffers":
            b.finish_ids[:len(fin)] = fin
            b.finish_times[:len(fin)] = now
            b.call(now, len(fin), k - i, 0, i)
            started = b.started.tolist()
        elif path == "batch":
            d = eng.advance_arrays(now, finish_ids=np.array(fin, dtype=np.int64),
                                   finish_times=np.full(len(fin), now, dtype=np.int64), submit_ids=ids[i:k],
                                   submit_times=sub[i:k], units=size[i:k], requested=req[i:k])
            started = d.started.tolist()
        else:
            events = [Finish(x, now) for x in fin]
            events += [Submit(Job(x, now, u, r)) for x, u, r in zip(ids[i:k].tolist(), size[i:k].tolist(),
                                                                    req[i:k].tolist())]
            started = [x.job_id for x in eng.advance(now, events) if isinstance(x, Start)]
        calls.append((now, fin, i, k))
        i = k
        for x in started:
            starts[x] = now
            heapq.heappush(ends, (now + run[x], x))
    return starts, calls, (eng._pass_ns / 1e9 if path == "object" else 0.0)


def timed_calls(tr: Trace, calls: list, path: str) -> tuple[float, int]:
    """The recorded calls again, on a new engine, in a loop with nothing else: (CPU seconds, jobs
    started). Each call's arguments are made before the loop."""
    eng = Engine(tr.units)
    ids, sub, size, req = tr.ids, tr.submit, tr.size, tr.req
    if path == "object":
        args = [(now, [Finish(x, now) for x in fin] + [Submit(Job(x, now, u, r)) for x, u, r in
                                                       zip(ids[i:k].tolist(), size[i:k].tolist(), req[i:k].tolist())])
                for now, fin, i, k in calls]
        call = eng.advance
    elif path == "batch":
        args = [(now, dict(finish_ids=np.array(fin, dtype=np.int64), finish_times=np.full(len(fin), now, np.int64),
                           submit_ids=ids[i:k], submit_times=sub[i:k], units=size[i:k], requested=req[i:k]))
                for now, fin, i, k in calls]
        c0 = time.thread_time()
        for now, kw in args:
            eng.advance_arrays(now, **kw)
        return time.thread_time() - c0, eng.stats()["started"]
    else:
        b = eng.batch_buffers()
        fin_ids = np.array([x for c in calls for x in c[1]], dtype=np.int64)
        fin_t = np.array([c[0] for c in calls for _ in c[1]], dtype=np.int64)
        b.bind(finish_ids=fin_ids, finish_times=fin_t, submit_ids=ids, submit_times=sub, units=size, requested=req)
        args, f0 = [], 0
        for now, fin, i, k in calls:
            args.append((now, len(fin), k - i, f0, i))
            f0 += len(fin)
        call = b.call
    c0 = time.thread_time()
    for a in args:
        call(*a)
    return time.thread_time() - c0, eng.stats()["started"]


def trace_rounds(args) -> dict:
    """Every path's drive (checked) and ``--trials`` interleaved timed rounds: the raw figures."""
    tr = Trace(args.trace, args.jobs)
    paths = [p for p in PATHS if p != "buffers" or has_buffers()]
    _, want, _ = tr.replay()
    out = {"jobs": len(tr.ids), "units": tr.units, "replayed": len(want), "paths": {}, "replay": []}
    recorded = {}
    for path in paths:
        starts, calls, pass_s = drive(tr, path)
        same = sum(starts.get(i) == s for i, s in want.items())
        recorded[path] = calls
        out["paths"][path] = {"same": same, "calls": len(calls), "pass_s": pass_s, "cpu_s": []}
    for _ in range(args.trials):
        for path in paths:
            cpu, started = timed_calls(tr, recorded[path], path)
            if started != len(want):
                raise SystemExit(f"{path}: {started} jobs started in the timed round, the replay started {len(want)}")
            out["paths"][path]["cpu_s"].append(cpu)
        wall, _, cpu = tr.replay()
        out["replay"].append((wall, cpu))
    return out


def print_trace(name: str, builds: dict, trials: int) -> None:
    first = next(iter(builds.values()))[0]
    print(f"{os.path.basename(name)}: {first['jobs']:,} jobs on {first['units']} units, "
          f"{first['paths']['object']['calls']:,} calls (one per instant); cores {os.cpu_count()}, load average "
          f"{os.getloadavg()[0]:.2f}; CPU time of the calling thread, medians of {trials} interleaved rounds")
    # (pbf.replay's figures pooled over every build's rounds: the replayer is the same in each build
    # compared here, and a round's replay runs after its paths, in a process they have used)
    replay_wall = statistics.median(w for rounds in builds.values() for r in rounds for w, _ in r["replay"])
    replay_cpu = statistics.median(c for rounds in builds.values() for r in rounds for _, c in r["replay"])
    for build, rounds in builds.items():
        if build:
            print(f"build {build}:")
        paths = rounds[0]["paths"]
        pass_s = paths["object"]["pass_s"]
        for path in paths:
            cpu = statistics.median(c for r in rounds for c in r["paths"][path]["cpu_s"])
            calls = paths[path]["calls"]
            more = (cpu - replay_wall) / calls * 1e6
            print(f"  {path:7} {cpu:6.3f} s, {cpu / calls * 1e6:5.2f} us a call ({more:5.2f} us more than the "
                  f"replay loop's share); {cpu / replay_wall:5.1f}x the replay loop, "
                  f"{cpu / replay_cpu:5.1f}x the whole pbf.replay call; starts as the replay's: "
                  f"{paths[path]['same']:,} of {rounds[0]['replayed']:,}")
        print(f"  the passes measured inside advance (with the clock read around each): {pass_s:.3f} s")
    print(f"pbf.replay (every round): {replay_wall:.3f} s in its replay loop (wall_s.replay: the same passes and "
          f"events), {replay_cpu:.3f} s of CPU for the whole call")


def seen_rounds(args) -> dict:
    seen = [int(x) for x in args.seen.split(",")]
    paths = [p for p in PATHS if p != "buffers" or has_buffers()]
    times = {f"{s} {p}": [] for s in seen for p in paths}
    for _ in range(args.trials):
        for s in seen:
            for p in paths:
                times[f"{s} {p}"].append(call_cost(s, args.calls, p))
    return {"seen": seen, "times": times}


def print_seen(builds: dict, trials: int) -> None:
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}; CPU time of a call of one Finish and "
          f"one Submit, pass included (median of {trials})")
    for build, rounds in builds.items():
        if build:
            print(f"build {build}:")
        for s in rounds[0]["seen"]:
            cells = []
            for p in PATHS:
                vals = [v for r in rounds for v in r["times"].get(f"{s} {p}", [])]
                if vals:
                    cells.append(f"{p} {statistics.median(vals):7.2f} us")
            print(f"{s:>9,} jobs seen: " + ", ".join(cells))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seen", default="1000,10000,50000,200000")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--trace", default=None, help="a log, driven event by event (see the module docstring)")
    ap.add_argument("--jobs", type=int, default=None, help="with --trace: its first N jobs")
    ap.add_argument("--builds", default=None, help="OLD,NEW: build directories measured side by side")
    ap.add_argument("--json", action="store_true", help="print the raw figures as JSON (used by --builds)")
    args = ap.parse_args(argv)
    if args.builds:
        dirs = [os.path.abspath(d) for d in args.builds.split(",")]
        child = [sys.executable, os.path.abspath(__file__), "--trials", "1", "--json", "--seen", args.seen,
                 "--calls", str(args.calls)]
        if args.trace:
            child += ["--trace", args.trace] + (["--jobs", str(args.jobs)] if args.jobs else [])
        builds = {d: [] for d in dirs}
        for _ in range(args.trials):
            for d in dirs:
                env = dict(os.environ, PYTHONPATH=d)
                res = subprocess.run(child, env=env, check=True, capture_output=True, text=True)
                builds[d].append(json.loads(res.stdout))
        if args.trace:
            print_trace(args.trace, builds, args.trials)
        else:
            print_seen(builds, args.trials)
        return 0
    result = trace_rounds(args) if args.trace else seen_rounds(args)
    if args.json:
        print(json.dumps(result))
    elif args.trace:
        print_trace(args.trace, {"": [result]}, args.trials)
    else:
        print_seen({"": [result]}, args.trials)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
