"""The cost of one ``Engine.advance`` call as the engine has seen more jobs: it must not grow with them.

    python bench/engine_calls.py [--seen 1000,10000,50000,200000] [--calls 300] [--trials 3]

For each count, an engine on 128 units first sees that many 10-second one-unit jobs (submitted and
finished in batches of 128), then takes ``--calls`` calls of one Finish and one Submit each (a
host driving it event by event). Prints the median microseconds a call (pass included) over
``--trials`` rounds, the rounds of all counts interleaved so that the machine's load falls on each.

Example (docs/benchmarks.md): ``python bench/engine_calls.py``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

from pbf.engine import Engine, Finish, Job, Submit


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


def call_cost(seen: int, calls: int) -> float:
    """Microseconds a call of one Finish and one Submit, after ``seen`` jobs."""
    eng, t = engine_that_saw(seen)
    running = sorted(eng.running())
    job = seen
    t0 = time.perf_counter()
    for k in range(calls):
        events = [Submit(Job(job, t, 1, 10 ** 6))]
        if k < len(running):
            events.insert(0, Finish(running[k], t))
        eng.advance(t, events)
        job += 1
        t += 1
    return (time.perf_counter() - t0) / calls * 1e6


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seen", default="1000,10000,50000,200000")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args(argv)
    seen = [int(x) for x in args.seen.split(",")]
    times = {s: [] for s in seen}
    for _ in range(args.trials):
        for s in seen:
            times[s].append(call_cost(s, args.calls))
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    for s in seen:
        print(f"{s:>9,} jobs seen: {statistics.median(times[s]):7.1f} us a call (median of {args.trials})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
