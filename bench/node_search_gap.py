"""Why pbf's exact node plan and Slurm's node search wait differently on ARCHER2-like jobs (a benchmark
script, not a test).

    python bench/node_search_gap.py [--queued 300] [--window 172800 --resolution 600] [--oracle-seeds 0,1,2]

Two checks. (1) One backfill pass on the same state with each search, through :class:`pbf.Engine`: the
ARCHER2-like machine of ``pbf gen archer2`` filled by a first call at time 0, then ``--queued`` jobs
submitted at time 1 and a pass with a reservation for every job tested (up to 1,000, Slurm's
``bf_max_job_test``); prints which jobs each search started in the fill, and, for the jobs both
reserved, how much later Slurm's planned start is than the exact plan's. (2) With ``--oracle-seeds``,
small ARCHER2-shaped replays (120 jobs drawn from the generator's shapes on 30 nodes of 128 cores, 4 of
them with 512 GB; FCFS, a pass at every event, a reservation for every waiting job) by each compiled
search and by its plain-Python oracle (:mod:`pbf.reference.nodes_ref`, :mod:`pbf.reference.slurm_backfill_ref`):
whether each search is its oracle, start for start, and the mean waits.
"""
import argparse
import random
import statistics

import numpy as np

from pbf.benchmark_nodes import FILL_JOBS
from pbf.config import Backfill
from pbf.engine import Engine
from pbf.engine_events import Job, Start, Submit
from pbf.workload.archer2 import archer2_cluster, generate_archer2


def one_pass(queued, window, resolution):
    table = generate_archer2(n_jobs=FILL_JOBS + queued, window=14 * 86400, seed=0)
    c = table.columns

    def submits(first, last, at):
        return [Submit(Job(id=int(c["job_id"][i]), submit=at, units=int(c["alloc_procs"][i]),
                           requested=int(c["req_time"][i]), run=int(c["run"][i]), user=int(c["user"][i]),
                           mem_core_mb=int(c["mem_core_mb"][i]), mem_node_mb=int(c["mem_node_mb"][i]),
                           nodes_min=int(c["nodes_min"][i]), nodes_max=int(c["nodes_max"][i])))
                for i in range(first, last)]
    out = {}
    for search in ("slurm", "exact"):
        e = Engine(archer2_cluster(), node_search=search, report_reservations=True,
                   backfill=Backfill(reservations=None, max_job_test=1000, window=window, resolution=resolution))
        fill = {d.job_id for d in e.advance(0, submits(0, FILL_JOBS, 0)) if isinstance(d, Start)}
        started = {d.job_id for d in e.advance(1, submits(FILL_JOBS, FILL_JOBS + queued, 1)) if isinstance(d, Start)}
        out[search] = (fill, started, e.reservations())
        print(f"{search}: {len(fill)} jobs started in the fill; the pass at 1 started {len(started)}, "
              f"reserved {len(out[search][2])}", flush=True)
    (f1, _, r1), (f2, _, r2) = out["slurm"], out["exact"]
    print(f"fill: started by Slurm's search only {sorted(f1 - f2)}, by the exact plan only {sorted(f2 - f1)}")
    both = sorted(set(r1) & set(r2))
    d = [r1[j] - r2[j] for j in both]
    if d:
        print(f"reserved by both: {len(both)}; Slurm's planned start later for {sum(x > 0 for x in d)}, the same for "
              f"{sum(x == 0 for x in d)}, earlier for {sum(x < 0 for x in d)}; median {statistics.median(d):,.0f} s "
              f"later, mean {statistics.mean(d):,.0f} s")


def oracle_case(seed, njobs=120, gap=400):
    import pbf
    from pbf.cluster import Cluster
    from pbf.node import Node
    from pbf.reference.nodes_ref import NodeRequest, node_replay
    from pbf.reference.slurm_backfill_ref import slurm_node_replay
    from pbf.workload.jobs import JobTable
    rng = random.Random(seed)
    nodes = ([Node(f"n{i:02d}", 128, 256000) for i in range(26)]
             + [Node(f"n{i:02d}", 128, 512000, features=("highmem",)) for i in range(26, 30)])
    c = generate_archer2(n_jobs=4000, window=3 * 86400, seed=seed).columns
    jobs, t = [], 0
    for i in rng.sample(range(4000), njobs):
        t += rng.randint(0, 2 * gap)
        k = min(8, max(1, round(int(c["nodes_min"][i]) / 40)))
        shared = int(c["mem_core_mb"][i]) > 0
        jobs.append(dict(submit=t, run=int(c["run"][i]), est=int(c["req_time"][i]),
                         cores=int(c["alloc_procs"][i]) if shared else 128 * k, mpc=int(c["mem_core_mb"][i]),
                         mpn=0 if shared else int(c["mem_node_mb"][i]), nmin=1 if shared else k,
                         nmax=1 if shared else k))
    col = lambda k: np.array([j[k] for j in jobs], dtype=np.int64)  # noqa: E731
    table = JobTable.from_arrays(job_id=np.arange(1, njobs + 1), submit=col("submit"), run=col("run"),
                                 req_procs=col("cores"), req_time=col("est"), mem_core_mb=col("mpc"),
                                 mem_node_mb=col("mpn"), gpus=np.zeros(njobs, np.int64),
                                 nodes_min=col("nmin"), nodes_max=col("nmax"))
    ref = [dict(submit=j["submit"], run=j["run"], est=j["est"],
                req=NodeRequest(j["cores"], j["mpc"], j["mpn"], 0, j["nmin"], j["nmax"], frozenset()))
           for j in jobs]
    for search in ("exact", "slurm"):
        config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="small"), node_search=search,
                                  backfill=Backfill(reservations=None))
        got = pbf.replay(table, config).jobs["start"].tolist()
        want = (node_replay(nodes, ref, None) if search == "exact" else slurm_node_replay(nodes, ref, None))["start"]
        wait = statistics.mean(s - j["submit"] for s, j in zip(got, jobs))
        print(f"seed {seed}, {search}: the compiled search is its oracle: {got == want}; mean wait {wait:,.0f} s",
              flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--queued", type=int, default=300)
    ap.add_argument("--window", type=int, default=0, help="bf_window, seconds (0: none)")
    ap.add_argument("--resolution", type=int, default=0, help="bf_resolution, seconds")
    ap.add_argument("--oracle-seeds", default="", help="comma-separated seeds of the small oracle cases")
    a = ap.parse_args()
    one_pass(a.queued, a.window, a.resolution)
    for s in filter(None, a.oracle_seeds.split(",")):
        oracle_case(int(s))


if __name__ == "__main__":
    main()
