"""Thread soak (a benchmark-style script, not a timed test): Slurm-like passes on 8 worker threads
over random scenarios, checking the invariants after every pass.

    python bench/thread_soak.py [--passes 10000] [--workers 8] [--seed 0]

Each scenario: a random cluster (64-2,048 units), random running jobs and a random queue; then a
stream of passes (a reservation per tested job, max_job_test 100), with jobs finishing and arriving
between passes. Every pass is forced onto the threads (ordered commit, and every 7th scenario the
stale-speculation switch, so that commits must reconcile). After every pass: no unit owned twice,
used + free = cluster, every start on free units, the decisions equal to the same pass run
sequentially on a twin core, no reservation earlier than now. Prints the count of passes checked.
"""
import argparse
import sys
import time

import numpy as np

from pbf import _core
from pbf.config import Backfill


def make(units, workers, stale):
    core = _core.Core(units)
    core.configure(**Backfill(reservations=None, max_job_test=100).core_settings(), record_passes=0)
    core.set_testing(record_units=1, stale_speculation=int(stale))
    if workers > 1:
        core.set_testing(parallel_min_queue=1, parallel=1)
    core.start_pool(workers)
    return core


def check(core, units, now):
    running = core.running()
    used = np.zeros((units + 63) // 64, dtype=np.uint64)
    for j in running:
        bits = core.units_of(int(j))
        assert not (used & bits).any(), f"a unit owned twice at {now}"
        used |= bits
    count = int(sum(bin(int(w)).count("1") for w in used))
    assert count + core.free_count == units, f"used {count} + free {core.free_count} != {units} at {now}"
    planned = core.job_arrays()[5]
    pend = core.pending()
    assert (planned[pend][planned[pend] >= 0] >= now).all(), "a reservation before now"


def soak(passes, workers, seed):
    rng = np.random.default_rng(seed)
    done = scenarios = 0
    while done < passes:
        units = int(rng.integers(64, 2_049))
        stale = scenarios % 7 == 6
        par, seq = make(units, workers, stale), make(units, 1, False)
        next_job, now = 0, 0
        try:
            for step in range(int(rng.integers(50, 200))):
                # arrivals: mostly small jobs, some wide, in bursts of identical ones
                n = int(rng.integers(0, 30))
                if n:
                    width = np.where(rng.random(n) < 0.7, rng.integers(1, 9, n), rng.integers(1, units // 2 + 1, n))
                    est = rng.integers(60, 48 * 3600, n)
                    if rng.random() < 0.3:
                        width[:] = width[0]
                        est[:] = est[0]
                    sub = np.full(n, now, dtype=np.int64)
                    for core in (par, seq):
                        first = core.add_jobs(sub, width, est, np.full(n, -1, dtype=np.int64))
                        core.submit_range(first, n)
                    next_job += n
                a_started, a_resv = par.run_pass(now)
                b_started, b_resv = seq.run_pass(now)
                assert list(a_started) == list(b_started) and list(a_resv) == list(b_resv), \
                    f"parallel and sequential decide differently (scenario {scenarios}, pass {step})"
                assert all((par.units_of(int(j)) == seq.units_of(int(j))).all() for j in a_started)
                check(par, units, now)
                done += 1
                # completions: a random share of the running jobs ends before the next pass
                now += int(rng.integers(1, 600))
                running = par.running()
                if len(running):
                    ending = running[rng.random(len(running)) < 0.2]
                    for j in ending:
                        par.finish(int(j), now)
                        seq.finish(int(j), now)
                if done >= passes:
                    break
        finally:
            par.stop_pool()
            seq.stop_pool()
        scenarios += 1
    return done, scenarios


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=10_000)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    done, scenarios = soak(args.passes, args.workers, args.seed)
    print(f"{done:,} passes on {args.workers} workers over {scenarios} scenarios: every invariant held, "
          f"every pass decided as the sequential one ({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
