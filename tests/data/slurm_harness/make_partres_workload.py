"""Writes partres2_jobs.sacct, the workload of the case of a backfill reservation count per partition for
partres2.conf (two disjoint partitions of 8 cores, one priority tier, bf_job_part_count_reserve=1;
docs/slurm-harness.md, "A reservation count per partition (partres2)"). 78 jobs at the real pace
(--time-scale 1), 39 in each partition, submitted over 5 minutes:

* in each partition a stream of small jobs (1-2 cores, 10-40 s runs, 1-minute limits) that backfill
  whenever no reservation stands in their way;
* two waves of wide jobs (8 cores: the whole partition, 20-30 s runs, 1-minute limits). In each wave one
  partition's wide job is held for about two minutes by a long job (a blocker: 2 cores, 150 s, 3-minute
  limit) and is queued first; the other partition's wide job, 3 s later, can only start once its
  partition's small jobs are kept off its nodes by a reservation (a second wide job of that partition
  follows 11 s later). Slurm counts the reservations in each partition, so that job reserves at once;
  counted over both partitions as one, the held job's reservation is the only one, and the other waits
  for the small stream to leave its partition idle. Wave 1 (from 0 s) holds pa, wave 2 (from 190 s) pb.

Deterministic: python make_partres_workload.py rewrites the file byte for byte.
"""
import os

import numpy as np
from make_workloads import HEADER, job_line

#: (submit, run, limit in minutes, cores, partition) of the blockers and wide jobs
WAVES = [(0, 150, 3, 2, "pa"), (6, 25, 1, 8, "pa"), (9, 25, 1, 8, "pb"), (20, 20, 1, 8, "pb"),
         (190, 150, 3, 2, "pb"), (196, 25, 1, 8, "pb"), (199, 25, 1, 8, "pa"), (210, 20, 1, 8, "pa")]


def partres2(seed=12, span=300):
    rng = np.random.default_rng(seed)
    jobs = list(WAVES)
    for part in ("pa", "pb"):
        t = int(rng.integers(0, 4))
        while t < span:
            run = int(rng.integers(10, 41))
            jobs.append((t, run, 1, int(rng.choice([1, 1, 2])), part))
            t += int(rng.integers(5, 13))
    jobs.sort(key=lambda j: (j[0], j[4]))
    return [job_line(i, s, run, lim, cores, mem="500Mc", part=part)
            for i, (s, run, lim, cores, part) in enumerate(jobs, 1)]


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    lines = partres2()
    with open(os.path.join(here, "partres2_jobs.sacct"), "w") as fh:
        fh.write("\n".join([HEADER, *lines]) + "\n")
    print(f"partres2_jobs.sacct: {len(lines)} jobs")
