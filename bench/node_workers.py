"""Slurm-like replays of a Beocat-like slice on the built-in Beocat nodes with 1 and 2 workers, side by
side in one process: 2 workers under the automatic rule, and 2 workers with every pass forced onto
the threads. Usage: python bench/node_workers.py TRACE.swf [TRIALS] (docs/benchmarks.md)."""
import dataclasses
import statistics
import sys
import time
from unittest import mock

import pbf
from pbf import replayer

BUILD = replayer.build_core


def every_pass_on_threads(*args, **kwargs):
    core = BUILD(*args, **kwargs)
    core.set_testing(parallel_min_queue=1, parallel=1)
    return core


def main(path, trials=2):
    table = pbf.read_swf(path)
    config = pbf.ReplayConfig(cluster="beocat", trigger="interval",
                              backfill=pbf.Backfill(reservations=None, max_job_test=500))
    runs = {"1 worker": (1, BUILD), "2 workers, automatic": (2, BUILD),
            "2 workers, every pass on the threads": (2, every_pass_on_threads)}
    times = {name: [] for name in runs}
    starts, searched = {}, {}
    for _ in range(trials):
        for name, (workers, build) in runs.items():
            with mock.patch.object(replayer, "build_core", build):
                t0 = time.perf_counter()
                result = pbf.replay(table, dataclasses.replace(config, workers=workers))
                times[name].append(time.perf_counter() - t0)
            starts.setdefault(name, result.jobs["start"].tolist())
            searched[name] = result.summary["passes"]["reevaluations"]
            print(f"{name}: {times[name][-1]:.2f} s", flush=True)
    base = statistics.median(times["1 worker"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name}: median {median:.2f} s ({base / median:.2f}x), commits searched again {searched[name]}, "
              f"same starts as 1 worker: {starts[name] == starts['1 worker']}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2)
