"""Writes qosu4_jobs.sacct, the per-user QOS limits case's workload for small4.conf (24 cores; docs/slurm-harness.md,
"Per-user QOS limits"): 48 jobs of four users submitted over about a minute at the real pace (--time-scale 1),
u1 submitting most (40 %), then u2 (30 %), u3 (20 %) and u4 (10 %); 1-6 cores, 1000 MB a core, runs of
10-50 s, limits of 1 or 2 minutes. With qosu4.limits (QOS normal: MaxJobsPU=3, MaxTRESPU=cpu=8) the busy
users' jobs wait for their own running jobs while the cluster has room for the others'.

Deterministic: python make_qosu_workload.py rewrites the file byte for byte.
"""
import os

import numpy as np
from make_workloads import HEADER, job_line


def qosu4(seed=44):
    rng = np.random.default_rng(seed)
    lines, t = [], 0
    for i in range(1, 49):
        user = int(rng.choice([1, 2, 3, 4], p=[0.4, 0.3, 0.2, 0.1]))
        cores = int(rng.choice([1, 2, 2, 3, 4, 4, 6]))
        run = int(rng.integers(10, 51))
        limit = 1 if run < 40 and rng.random() < 0.5 else 2
        lines.append(job_line(i, t, run, limit, cores, mem="1000Mc", user=user))
        t += int(rng.choice([0, 1, 1, 2, 3]))
    return lines


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "qosu4_jobs.sacct"), "w") as fh:
        fh.write("\n".join([HEADER, *qosu4()]) + "\n")
