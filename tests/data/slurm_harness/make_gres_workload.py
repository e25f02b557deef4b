"""Writes gres4_jobs.sacct: 48 jobs for gres4.conf (32 cores, 4 NVMe drives as a GRES on three nodes),
submitted over about 2 minutes, 10-90 s runs and 2-minute limits (--time-scale 1). 22 of them ask
``gres/nvme`` (every fourth of those, 5, nvme:2, which only b1 holds; 17 nvme:1) and 1-4 cores, so
that the drives, not the cores, hold them back; the rest ask 1-8 cores and no GRES.

Deterministic: python make_gres_workload.py rewrites the file byte for byte.
"""
import os

import numpy as np
from make_workloads import HEADER, stamp


def gres4(seed=4):
    rng = np.random.default_rng(seed)
    lines, t, asked = [], 0, 0
    for i in range(1, 49):
        t += int(rng.integers(0, 6))
        run = int(rng.integers(10, 91))
        nvme = 0
        if rng.random() < 0.45:
            asked += 1
            nvme = 2 if asked % 4 == 0 else 1
        cores = int(rng.integers(1, 5)) if nvme else int(rng.integers(1, 9))
        tres = f"cpu={cores}" + (f",gres/nvme={nvme}" if nvme else "")
        lines.append("|".join(map(str, (i, stamp(t), stamp(t), run, 2, cores, "", "500Mc", tres, "", "COMPLETED",
                                        f"u{1 + i % 3}", "batch"))))
    return lines


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "gres4_jobs.sacct"), "w") as fh:
        fh.write(HEADER + "\n" + "\n".join(gres4()) + "\n")
