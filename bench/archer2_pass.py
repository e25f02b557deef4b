"""Backfill passes on an ARCHER2-sized cluster with 100,000 jobs queued (a benchmark script, not a test).

    python bench/archer2_pass.py [--queued 100000] [--passes 5] [--search slurm,exact] [--max-job-test 1000]

The cluster is `pbf gen archer2`'s (5,860 nodes of 128 cores, 584 of them with 512 GB), and so are the
jobs (90 % node-exclusive, 10 % sharing a node). Through :class:`pbf.Engine`: a first call submits
jobs until the machine is full (every job that fits starts); a second submits ``--queued`` more at
once, and its pass is the one timed first, a pass over a queue that deep as Slurm runs it (a
reservation for every job tested, up to ``--max-job-test``, Slurm's ``bf_max_job_test``); then
``--passes`` calls, each after the running job that ends first has ended, are timed too. Prints each
pass's wall time, how many jobs it started and reserved, the median, and the process's peak RSS, for
each node search (``slurm``: Slurm's will-run test; ``exact``: pbf's plan of every node).
"""
import argparse
import os
import resource
import statistics
import time

from pbf import Backfill, Engine
from pbf.engine_events import Finish, Job, Reserve, Start, Submit
from pbf.workload.archer2 import archer2_cluster, generate_archer2


def _jobs(table, first, last, submit):
    t = table.columns
    out = []
    for i in range(first, last):
        out.append(Submit(Job(id=int(t["job_id"][i]), submit=submit, units=int(t["alloc_procs"][i]),
                              requested=int(t["req_time"][i]), run=int(t["run"][i]), user=int(t["user"][i]),
                              mem_core_mb=int(t["mem_core_mb"][i]), mem_node_mb=int(t["mem_node_mb"][i]),
                              nodes_min=int(t["nodes_min"][i]), nodes_max=int(t["nodes_max"][i]))))
    return out


def run(search, queued, passes, max_job_test, seed):
    cluster = archer2_cluster()
    fill = 6_000
    table = generate_archer2(n_jobs=fill + queued, window=14 * 86400, seed=seed)
    engine = Engine(cluster, node_search=search, backfill=Backfill(reservations=None, max_job_test=max_job_test),
                    report_reservations=True)
    ends = {}
    decisions = engine.advance(0, _jobs(table, 0, fill, 0))
    run_of = {int(j): int(r) for j, r in zip(table.columns["job_id"], table.columns["run"])}
    for d in decisions:
        if isinstance(d, Start):
            ends[d.job_id] = run_of[d.job_id]
    print(f"{search}: {len(ends):,} of {fill:,} jobs started on the empty machine; {queued:,} submitted next",
          flush=True)
    rows = []
    now = 1
    events = _jobs(table, fill, fill + queued, 1)
    for k in range(passes + 1):
        t0 = time.perf_counter()
        decisions = engine.advance(now, events)
        wall = time.perf_counter() - t0
        started = [d for d in decisions if isinstance(d, Start)]
        reserved = sum(isinstance(d, Reserve) for d in decisions)
        for d in started:
            ends[d.job_id] = now + run_of[d.job_id]
        rows.append(wall)
        print(f"  pass {k}: {wall * 1e3:9.1f} ms  ({'submits, ' if k == 0 else ''}{len(started)} started, "
              f"{reserved} reserved, {len(ends):,} running)", flush=True)
        job, end = min(ends.items(), key=lambda kv: (kv[1], kv[0]))
        del ends[job]
        now = max(now + 1, end)
        events = [Finish(job, now)]
    later = rows[1:]
    print(f"  first pass {rows[0]:.2f} s (with {queued:,} submits); later passes median "
          f"{statistics.median(later) * 1e3:.1f} ms" if later else "", flush=True)
    return rows


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
        run(search, args.queued, args.passes, args.max_job_test, args.seed)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:,.0f} MB (the whole process)")


if __name__ == "__main__":
    main()
