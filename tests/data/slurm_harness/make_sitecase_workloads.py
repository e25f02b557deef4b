"""Writes the workloads of the drained-node and limits harness cases (docs/slurm-harness.md), beside
make_workloads.py's and in its format (sacct --parsable2 dumps):

* drain4_jobs.sacct -- 48 jobs for small4.conf (a1, a2: 8 cores; b1, g1: 4), submitted over about two
  minutes, 10-60 s runs and 1-2-minute limits, 1 to 8 cores (--time-scale 1); the case drains a2 from
  +40 s to +160 s.
* qos4_jobs.sacct -- 50 jobs of three users (u1, u2, u3: accounts a1, a2, a3 in the harness) for
  small4.conf, submitted over about 100 s, 10-50 s runs, 1-2-minute limits, 1 to 4 cores; its limits
  (qos4.limits) hold a third of the cluster back.

Deterministic: python make_sitecase_workloads.py rewrites both files byte for byte.
"""
import numpy as np
from make_workloads import job_line, write


def drain4(seed=40):
    rng = np.random.default_rng(seed)
    lines, t = [], 0
    for i in range(1, 49):
        run = int(rng.integers(10, 61))
        limit = 1 if run < 40 and rng.random() < 0.5 else 2
        cores = int(rng.choice([1, 1, 2, 2, 2, 3, 4, 4, 8]))
        lines.append(job_line(i, t, run, limit, cores, mem="1000Mc"))
        t += int(rng.choice([0, 1, 2, 3, 4]))
    return lines


def qos4(seed=41):
    rng = np.random.default_rng(seed)
    lines, t = [], 0
    for i in range(1, 51):
        run = int(rng.integers(10, 51))
        limit = 1 if run < 40 and rng.random() < 0.5 else 2
        cores = int(rng.choice([1, 1, 2, 2, 3, 4]))
        user = 1 + (i - 1) % 3 if i <= 3 else int(rng.integers(1, 4))
        lines.append(job_line(i, t, run, limit, cores, mem="1000Mc", user=user))
        t += int(rng.choice([0, 1, 2, 3, 4]))
    return lines


if __name__ == "__main__":
    write("drain4_jobs.sacct", drain4())
    print("drain4_jobs.sacct: 48 jobs")
    write("qos4_jobs.sacct", qos4())
    print("qos4_jobs.sacct: 50 jobs")
