"""Writes resvover4_jobs.sacct, the workload of the case of jobs inside a reservation that still run at its
end, for small4.conf (24 cores; docs/slurm-harness.md, "Jobs running past their reservation's end
(resvover4)"), with the reservation

    --reservation "Nodes=a[1-2] StartTime=+40 Duration=120 Flags=none Name=resvover"

(a1 and a2, 16 cores, from +40 s to +160 s, for user root: the harness submits as root). 34 jobs submitted
over about two and a half minutes at the real pace (--time-scale 1): 10 of them name the reservation
(sacct's ``Reservation`` column), 2 before its start, which wait for it, and 8 inside the window; each of
those has a limit of 3 minutes and runs 40-170 s, so that about half of them still run at the window's end
and are ended there by slurmctld's time-limit check (``ResvOverRun``; small4_resvover1.conf: 1 minute).
The other 24 are ordinary jobs of 10-60 s with limits of 1-2 minutes, 1000 MB a core.

Deterministic: python make_resvover_workload.py rewrites the file byte for byte.
"""
import os

import numpy as np
from make_workloads import HEADER, job_line

NAME = "resvover"


def resvover4(seed=43, start=40, end=160):
    rng = np.random.default_rng(seed)
    inside = sorted([int(x) for x in rng.integers(start - 20, start - 1, 2)]
                    + [int(x) for x in rng.integers(start + 5, end - 25, 8)])
    ordinary, t = [], 0
    while len(ordinary) < 24:
        ordinary.append(t)
        t += int(rng.choice([3, 4, 5, 6, 7, 8, 9]))
    jobs = sorted([(s, 0) for s in ordinary] + [(s, 1) for s in inside])
    lines = []
    for i, (submit, named) in enumerate(jobs, 1):
        if named:
            run, limit = int(rng.integers(40, 171)), 3
            cores = int(rng.choice([2, 4, 4, 6, 8]))
        else:
            run = int(rng.integers(10, 61))
            limit = 1 if run < 40 and rng.random() < 0.5 else 2
            cores = int(rng.choice([1, 1, 2, 2, 3, 4, 4, 8]))
        lines.append(job_line(i, submit, run, limit, cores, mem="1000Mc") + "|" + (NAME if named else ""))
    return lines


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "resvover4_jobs.sacct"), "w") as fh:
        fh.write("\n".join([HEADER + "|Reservation", *resvover4()]) + "\n")
