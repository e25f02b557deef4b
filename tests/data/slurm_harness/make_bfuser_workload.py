"""Writes bfuser4_jobs.sacct, the bf_max_job_user case's workload for small4_bfuser.conf (small4.conf with
bf_max_job_user=2; docs/slurm-harness.md, "bf_max_job_user (bfuser4)"): 48 jobs of four users at the real pace
(--time-scale 1) in two waves 100 s apart. In each wave u3 fills both 8-core nodes (a1, a2) for about a
minute, u4's 16-core job waits for them (FIFO: the main scheduler stops there, so everything behind it is
backfill's), a busy user (u1, then u2) submits two 8-core one-node jobs that can only follow u4's, then
11 small jobs (1-2 cores, 10-25 s), and the other user 8 small jobs. The small jobs fit on b1 and g1
(8 cores) before u4's job starts; with bf_max_job_user=2 backfill tests only the busy user's two wide
jobs each cycle and passes over its small ones, so only the other user's small jobs backfill.

Deterministic: python make_bfuser_workload.py rewrites the file byte for byte.
"""
import os

import numpy as np
from make_workloads import HEADER, job_line


def bfuser4(seed=46):
    rng = np.random.default_rng(seed)
    jobs = []  # (submit, run, limit, cores, nodes, user)
    for t0, busy, other in ((0, 1, 2), (100, 2, 1)):
        for _ in range(2):
            jobs.append((t0, int(rng.integers(50, 59)), 1, 8, 1, 3))
        jobs.append((t0 + 1, int(rng.integers(20, 31)), 1, 16, "", 4))
        for _ in range(2):
            jobs.append((t0 + 2, int(rng.integers(15, 26)), 1, 8, 1, busy))
        smalls = [busy] * 11 + [other] * 8
        rng.shuffle(smalls)
        t = t0 + 3
        for user in smalls:
            jobs.append((t, int(rng.integers(10, 26)), 1, int(rng.choice([1, 1, 2])), "", int(user)))
            t += int(rng.choice([0, 1, 1, 2]))
    return [job_line(i, s, run, limit, cores, nodes=nodes, mem="1000Mc", user=user)
            for i, (s, run, limit, cores, nodes, user) in enumerate(jobs, 1)]


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "bfuser4_jobs.sacct"), "w") as fh:
        fh.write("\n".join([HEADER, *bfuser4()]) + "\n")
