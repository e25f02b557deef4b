"""Backfill passes on an ARCHER2-sized cluster with 100,000 jobs queued (a benchmark script, not a test).

    python bench/archer2_pass.py [--queued 100000] [--passes 5] [--search slurm,exact] [--max-job-test 1000]
                                 [--workers 1,2 --rounds 3 [--no-trials]]

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
    ap.add_argument("--workers", default="1", help="worker counts to compare, e.g. 1,2 (each run its own engine, "
                                                   "in turn, --rounds times)")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--no-trials", action="store_true", help="share every pass's searches with the helper "
                                                             "(no trials of passes with and without)")
    args = ap.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    print(f"ARCHER2-sized passes: 5,860 nodes x 128 cores, {args.queued:,} queued, max_job_test "
          f"{args.max_job_test}, {os.cpu_count()} CPUs, workers {counts}, {args.rounds} round(s)"
          + (", sharing every pass" if args.no_trials else ""), flush=True)
    for search in args.search.split(","):
        medians = {w: [] for w in counts}
        digests = set()
        for r in range(args.rounds):
            order = counts if r % 2 == 0 else counts[::-1]
            for w in order:
                out = archer2_passes(search, args.queued, args.passes, args.max_job_test, args.seed,
                                     report=lambda line: print(line, flush=True), workers=w,
                                     trials=not args.no_trials)
                digests.add(out["decisions"])
                later = out["walls"][1:]
                if later:
                    medians[w].append(statistics.median(later))
                    print(f"  {search}, {w} worker(s), round {r + 1}: first pass {out['walls'][0]:.2f} s (with "
                          f"{args.queued:,} submits); later passes median {medians[w][-1] * 1e3:.1f} ms"
                          + (f"; {out['helped']:,} of {out['shared']:,} later starts or searches shared with "
                             "a helper thread" if w > 1 else ""),
                          flush=True)
        if len(counts) > 1 and all(medians.values()):
            base = statistics.median(medians[counts[0]])
            for w in counts[1:]:
                ratios = [a / b for a, b in zip(medians[counts[0]], medians[w])]
                print(f"  {search}: {w} workers against {counts[0]}: median pass {base * 1e3:.1f} -> "
                      f"{statistics.median(medians[w]) * 1e3:.1f} ms, {statistics.median(ratios):.2f}x faster "
                      f"(per round: {', '.join(f'{x:.2f}' for x in ratios)})", flush=True)
        print(f"  {search}: decisions {'identical in every run' if len(digests) == 1 else 'DIFFER'}", flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:,.0f} MB (the whole process)")


if __name__ == "__main__":
    main()
