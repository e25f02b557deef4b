"""Slurm-like replays of a Beocat-like trace on the built-in Beocat nodes with 1 worker and with N,
side by side in one process, in interleaved pairs (1 then N, N then 1, ...): by default N under the
automatic choice (node passes share their searches with a helper thread); with --speculate, every
pass forced onto the threads' speculation instead. Usage:
python bench/node_workers.py TRACE.swf [--pairs 4] [--workers 2] [--speculate] (docs/benchmarks.md)."""
import argparse
import dataclasses
import os
import statistics
import time
from unittest import mock

import pbf
from pbf import replayer

BUILD = replayer.build_core


def every_pass_speculated(*args, **kwargs):
    core = BUILD(*args, **kwargs)
    core.set_testing(parallel_min_queue=1, parallel=1)
    return core


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--speculate", action="store_true")
    a = ap.parse_args()
    table = pbf.read_swf(a.trace)
    config = pbf.ReplayConfig(cluster="beocat", trigger="interval",
                              backfill=pbf.Backfill(reservations=None, max_job_test=500))
    build = every_pass_speculated if a.speculate else BUILD
    times = {1: [], a.workers: []}
    ratios, starts = [], None
    for i in range(a.pairs):
        pair = {}
        for w in ((1, a.workers) if i % 2 == 0 else (a.workers, 1)):
            with mock.patch.object(replayer, "build_core", build if w > 1 else BUILD):
                t0 = time.perf_counter()
                result = pbf.replay(table, dataclasses.replace(config, workers=w))
                pair[w] = time.perf_counter() - t0
            s = result.jobs["start"].tolist()
            starts = s if starts is None else starts
            assert s == starts, "decisions differ"
            if w > 1:
                p = result.summary["passes"]
                extra = (f"searches shared {p['searches_shared']:,}, helped {p['searches_helped']:,}, "
                         f"back-offs {p['search_helper_backoffs']}")
            else:
                extra = ""
            print(f"pair {i + 1}: {w} worker(s) {pair[w]:.2f} s {extra}", flush=True)
        for w in pair:
            times[w].append(pair[w])
        ratios.append(pair[1] / pair[a.workers])
    m1, mn = statistics.median(times[1]), statistics.median(times[a.workers])
    print(f"cores {len(os.sched_getaffinity(0))}; 1 worker median {m1:.2f} s; {a.workers} workers median {mn:.2f} s "
          f"({m1 / mn:.2f}x); per-pair ratios {', '.join(f'{r:.2f}' for r in ratios)}; same decisions in every run")


if __name__ == "__main__":
    main()
