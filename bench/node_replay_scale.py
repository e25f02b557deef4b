"""Node replays of 100,000, 300,000 and 1,000,000 ARCHER2-like jobs: is the cost per job flat? (a
benchmark script, not a test)

    python bench/node_replay_scale.py [--jobs 100000,300000,1000000] [--search exact] [--keep DIR] [--nice 10]

Each size is `pbf gen archer2`'s workload at the same submit rate (100,000 jobs in 70 days, so 300,000 in
210 days and 1,000,000 in 700 days: the queue stays as deep at every size) on 5,860 nodes of 128 cores,
written as a sacct dump and a ``slurm.conf`` and replayed by ``pbf replay --slurm-conf --node-search
exact`` (pbf's plan of every node; ``--search slurm``: Slurm's will-run test), each replay a process of
its own (:func:`pbf.benchmark_nodes.node_replay`). Prints, for each size, the replay process's wall and
CPU time, its peak RSS, the cost per job (wall and CPU), the replay loop's time alone, the passes (full
ones, their mean time and depth) and the mean queue; then each size's cost per job against the
smallest's. ``--keep DIR`` keeps the generated workloads there (and uses them again); the largest is
about 130 MB. ``pbf bench --slice large`` runs the 100,000-job row (``PBF_BENCH_NODE_REPLAY_JOBS``
sets another size).
"""
import argparse
import os
import sys

from pbf.benchmark_nodes import node_replay


def _sizes(text):
    try:
        sizes = [int(x.replace("_", "")) for x in text.split(",") if x.strip()]
    except ValueError:
        sys.exit(f"--jobs: expected whole numbers separated by commas, got {text!r}")
    if not sizes or min(sizes) < 1:
        sys.exit(f"--jobs: expected positive job counts, got {text!r}")
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="100000,300000,1000000", help="job counts, comma-separated")
    ap.add_argument("--search", choices=("exact", "slurm"), default="exact")
    ap.add_argument("--keep", help="folder for the generated workloads (default: a temporary one)")
    ap.add_argument("--nice", type=int, default=0, choices=range(20), metavar="0-19",
                    help="run each replay at this niceness (default 0)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"node replays, {args.search} search, 5,860 nodes x 128 cores, 100,000 jobs every 70 days; "
          f"{os.cpu_count()} cores, load average {load[0]:.2f} at the start", flush=True)
    head = (f"{'jobs':>10} {'days':>6} {'wall s':>8} {'CPU s':>8} {'RSS MB':>7} {'us/job':>7} {'CPU us/job':>10} "
            f"{'loop s':>8} {'passes':>9} {'full':>8} {'ms/full':>7} {'depth':>6} {'queue':>6}")
    rows = []
    for jobs in _sizes(args.jobs):
        r = node_replay(jobs, search=args.search, seed=args.seed, keep=args.keep, niceness=args.nice)
        rows.append(r)
        if len(rows) == 1:
            print(head)
        per_full = r["full_pass_s"] / r["full_passes"] * 1e3 if r["full_passes"] else 0.0
        print(f"{jobs:>10,} {r['window_days']:>6.1f} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} {r['peak_rss_mb']:>7.0f} "
              f"{r['wall_s'] / jobs * 1e6:>7.0f} {r['cpu_s'] / jobs * 1e6:>10.0f} {r['replay_s']:>8.1f} "
              f"{r['passes']:>9,} {r['full_passes']:>8,} {per_full:>7.2f} {r['mean_depth_full']:>6.0f} "
              f"{r['mean_queue']:>6.0f}", flush=True)
    first = rows[0]
    for r in rows[1:]:
        ratio = (r["cpu_s"] / r["jobs"]) / (first["cpu_s"] / first["jobs"])
        print(f"{r['jobs']:,} jobs: CPU per job {ratio:.2f}x that of {first['jobs']:,}; peak RSS "
              f"{r['peak_rss_mb'] / first['peak_rss_mb']:.2f}x")
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} at the end (1 min; {load[2]:.2f} over 15 min)")


if __name__ == "__main__":
    main()
