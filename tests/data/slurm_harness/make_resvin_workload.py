"""Writes resvin4_jobs.sacct, the workload of the case of jobs inside a reservation for small4.conf (24 cores;
docs/slurm-harness.md, "Jobs inside a reservation (resvin4)"), with the reservation

    --reservation "Nodes=a[1-2] StartTime=+70 Duration=240 Flags=none Name=resvin"

(a1 and a2, 16 cores, from +70 s to +310 s, for user root: the harness submits as root). 48 jobs submitted
over about three and a half minutes at the real pace (--time-scale 1): 12 of them (a quarter) name the
reservation (sacct's ``Reservation`` column; the harness submits them with ``sbatch --reservation=resvin``),
4 before its start, which wait for it, and 8 inside the window, each early enough that its limit ends 30 s
before the window does. The other 36 are ordinary jobs: those whose limit ends by +70 s may use a1 and a2
before the window, inside it they have b1 and g1 (8 cores) alone, and after it every node. Runs of 10-60 s,
limits of 1-2 minutes, 1000 MB a core.

Deterministic: python make_resvin_workload.py rewrites the file byte for byte.
"""
import os

import numpy as np
from make_workloads import HEADER, job_line

NAME = "resvin"


def resvin4(seed=41, start=70, end=310):
    rng = np.random.default_rng(seed)
    # the reserved jobs' submission times: 4 before the window, 8 inside it
    inside = sorted([int(x) for x in rng.integers(start - 30, start - 1, 4)]
                    + [int(x) for x in rng.integers(start + 5, end - 90, 8)])
    ordinary, t = [], 0
    while len(ordinary) < 36:
        ordinary.append(t)
        t += int(rng.choice([2, 3, 4, 5, 6, 7, 8]))
    jobs = sorted([(s, 0) for s in ordinary] + [(s, 1) for s in inside])
    lines = []
    for i, (submit, named) in enumerate(jobs, 1):
        run = int(rng.integers(10, 61))
        limit = 1 if run < 40 and rng.random() < 0.5 else 2
        if named and submit + 60 * limit > end - 30:        # (a reserved job's limit ends inside the window)
            limit, run = 1, min(run, 50)
        cores = int(rng.choice([2, 4, 4, 6, 8] if named else [1, 1, 2, 2, 3, 4, 4, 8]))
        lines.append(job_line(i, submit, run, limit, cores, mem="1000Mc") + "|" + (NAME if named else ""))
    return lines


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "resvin4_jobs.sacct"), "w") as fh:
        fh.write("\n".join([HEADER + "|Reservation", *resvin4()]) + "\n")
