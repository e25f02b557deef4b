"""Backfill passes on an ARCHER2-sized cluster with 100,000 jobs queued (a benchmark script, not a test).

    python bench/archer2_pass.py [--queued 100000] [--passes 5] [--search slurm,exact] [--max-job-test 1000]

The cluster is `pbf gen archer2`'s (5,860 nodes of 128 cores, 584 of them with 512 GB), and so are the
jobs (90 % node-exclusive, 10 % sharing a node). Through :class:`pbf.Engine`
(:func:`pbf.benchmark_nodes.archer2_passes`): a first call submits jobs until the machine is full (every
job that fits starts); a second submits ``--queued`` more at once, and its pass is the one timed first,
a pass over a queue that deep as Slurm runs it (a reservation for every job tested, up to
``--max-job-test``, Slurm's ``bf_max_job_test``); then ``--passes`` calls, each after the running job
that ends first has ended, are timed too. Prints each pass's wall time, how many jobs it started and
reserved, the median, and the process's peak RSS, for each node search (``slurm``: Slurm's will-run
test; ``exact``: pbf's plan of every node). ``pbf bench --slice large`` runs the same as two rows.
"""
import argparse
import os
import resource
import statistics

from pbf.benchmark_nodes import archer2_passes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queued", type=int, default=100_000)
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--search", default="slurm,exact")
    ap.add_argument("--max-job-test", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    print(f"ARCHER2-sized passes: 5,860 nodes x 128 cores, {args.queued:,} queued, max_job_test "
          f"{args.max_job_test}, {os.cpu_count()} CPUs", flush=True)
    for search in args.search.split(","):
        out = archer2_passes(search, args.queued, args.passes, args.max_job_test, args.seed,
                             report=lambda line: print(line, flush=True))
        later = out["walls"][1:]
        if later:
            print(f"  first pass {out['walls'][0]:.2f} s (with {args.queued:,} submits); later passes median "
                  f"{statistics.median(later) * 1e3:.1f} ms", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:,.0f} MB (the whole process)")


if __name__ == "__main__":
    main()
