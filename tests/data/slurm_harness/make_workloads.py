"""Writes the harness's workloads as sacct --parsable2 dumps (SWF has no field for GPUs or features):

* hetero8_jobs.sacct -- 240 jobs for hetero8.conf (92 cores, 4 GPUs, 2 bigmem nodes): serial, medium,
  multi-node, memory-bound, GPU and feature-constrained jobs submitted over 4 hours, run times of 5 min
  to 2 h, limits in whole hours (1-4 h); replayed at --time-scale 60 (4 real minutes of submissions).
* small4_jobs.sacct -- 20 jobs for small4.conf (24 cores, 2 GPUs), submitted over 15 s, 2-9 s runs and
  1-minute limits (--time-scale 1): the real-Slurm test's workload.
* part2_jobs.sacct -- 60 jobs for part2.conf (two overlapping partitions with priority tiers on 24
  cores): 26 to ``cpu``, 20 to ``small``, 14 to both (``cpu,small``), submitted over about 2 minutes,
  10-100 s runs and 2-minute limits (--time-scale 1).
* part2_small_jobs.sacct -- the same jobs with each of the 14 two-partition jobs in ``small`` alone (its
  higher tier): the control that tells the partitions' tiers and overlap from jobs of several partitions.

Deterministic: python make_workloads.py rewrites every file byte for byte.
"""
import math
import os

import numpy as np

HEADER = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|ReqTRES|Constraints|State|User|Partition"
EPOCH = 1704067200            # 2024-01-01T00:00:00 UTC


def stamp(t):
    import time
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(EPOCH + int(t)))


def job_line(i, submit, run, limit_min, cores, nodes="", mem="", gpus=0, cons="", user=1, part="batch"):
    tres = f"cpu={cores}" + (f",gres/gpu={gpus}" if gpus else "") + (f",node={nodes}" if nodes else "")
    return "|".join(map(str, (i, stamp(submit), stamp(submit), run, limit_min, cores, nodes, mem, tres, cons,
                              "COMPLETED", f"u{user}", part)))


def hetero8(seed=8):
    rng = np.random.default_rng(seed)
    n, span = 240, 4 * 3600
    gaps = rng.exponential(span / n, n)
    submits = np.floor(np.cumsum(gaps) * span / gaps.sum()).astype(int) - int(gaps[0] * span / gaps.sum())
    kinds = rng.choice(["serial", "medium", "wide", "mem", "gpu", "feature"], n,
                       p=[0.36, 0.16, 0.08, 0.15, 0.10, 0.15])
    lines, work, gpu_work = [], 0.0, 0.0
    for i, (t, kind) in enumerate(zip(submits, kinds), 1):
        run = int(min(120 * 60, max(5 * 60, rng.lognormal(math.log(20 * 60), 0.7))))
        if kind == "gpu":
            run = int(min(run, 45 * 60))
        limit_h = min(4, max(1, math.ceil(run * rng.uniform(1.1, 2.5) / 3600)))
        run = min(run, int(limit_h * 3600 * 0.95))
        nodes, mem, gpus, cons = "", "", 0, ""
        if kind == "serial":
            cores = int(rng.integers(1, 5))
            mem = "" if rng.random() < 0.3 else f"{int(rng.choice([500, 1000, 2000]))}Mc"
        elif kind == "medium":
            cores = int(rng.integers(4, 13))
            mem = f"{int(rng.choice([1000, 1500, 2000]))}Mc"
        elif kind == "wide":
            cores = int(rng.integers(12, 25))
            nodes, mem = "2-3", "1500Mc"
        elif kind == "mem":
            cores = int(rng.integers(2, 7))
            nodes, mem = "1", f"{int(rng.choice([20000, 30000, 40000, 56000]))}Mn"
        elif kind == "gpu":
            cores = int(rng.integers(2, 7))
            nodes, gpus, mem = "1", int(rng.integers(1, 3)), "2000Mc"
        else:
            cores = int(rng.integers(2, 9))
            cons = str(rng.choice(["avx2", "bigmem", "avx512", "avx2&bigmem"]))
            mem = f"{int(rng.choice([1000, 2000, 4000]))}Mc"
        work += cores * run
        gpu_work += gpus * run
        user = int(rng.integers(1, 9))
        lines.append(job_line(i, int(t), run, limit_h * 60, cores, nodes, mem, gpus, cons, user=user))
    return lines, work / 3600, gpu_work / 3600


def small4(seed=4):
    rng = np.random.default_rng(seed)
    lines = []
    kinds = ["serial", "medium", "gpu", "mem", "feature", "wide", "serial", "medium", "gpu", "serial",
             "feature", "mem", "serial", "medium", "wide", "serial", "gpu", "feature", "serial", "medium"]
    t = 0
    for i, kind in enumerate(kinds, 1):
        run = int(rng.integers(2, 10))
        nodes, mem, gpus, cons = "", "", 0, ""
        if kind == "serial":
            cores, mem = int(rng.integers(1, 4)), "1000Mc"
        elif kind == "medium":
            cores, mem = int(rng.integers(4, 9)), "1000Mc"
        elif kind == "gpu":
            cores, nodes, gpus, mem = 2, "1", int(rng.integers(1, 3)), "1000Mc"
        elif kind == "mem":
            cores, nodes, mem = 2, "1", "20000Mn"
        elif kind == "wide":
            cores, nodes, mem = 12, "2", "1000Mc"
        else:
            cores, mem, cons = 2, "2000Mc", str(rng.choice(["avx2", "bigmem"]))
        lines.append(job_line(i, t, run, 1, cores, nodes, mem, gpus, cons))
        t += int(rng.integers(0, 2))
    return lines


def part2(seed=2):
    rng = np.random.default_rng(seed)
    parts = ["cpu"] * 26 + ["small"] * 20 + ["cpu,small"] * 14
    rng.shuffle(parts)
    cores_of = {"cpu": [1, 2, 4, 4, 4, 8, 8], "small": [1, 2, 2, 2, 3, 4], "cpu,small": [1, 2, 4, 4, 8]}
    lines, t = [], 1
    for i, part in enumerate(parts, 1):
        run = int(rng.integers(10, 101))
        cores = int(rng.choice(cores_of[part]))
        lines.append(job_line(i, t, run, 2, cores, mem="1000Mc", part=part))
        t += int(rng.choice([0, 0, 1, 2, 3, 5, 8]))
    return lines


def resv4(seed=5):
    """small4's site with a maintenance reservation on a[1-2] from +50 s to +170 s (docs/slurm-harness.md):
    45 jobs over two minutes, runs of 10-60 s, limits of 1-2 minutes: no job fits on a[1-2] before the
    window, so jobs go to b1 and g1 (4 cores each) or wait for its end."""
    rng = np.random.default_rng(seed)
    lines, t = [], 0
    for i in range(1, 46):
        run = int(rng.integers(10, 61))
        limit = 1 if run < 40 and rng.random() < 0.5 else 2
        cores = int(rng.choice([1, 1, 2, 2, 2, 3, 4, 4, 8]))
        lines.append(job_line(i, t, run, limit, cores, mem="1000Mc"))
        t += int(rng.choice([0, 1, 2, 3, 4, 5]))
    return lines


def write(name, lines):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), name), "w") as fh:
        fh.write(HEADER + "\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    lines, core_h, gpu_h = hetero8()
    write("hetero8_jobs.sacct", lines)
    print(f"hetero8_jobs.sacct: {len(lines)} jobs, {core_h:.0f} core-hours (92 cores x 4 h = 368), "
          f"{gpu_h:.0f} GPU-hours (4 GPUs x 4 h = 16)")
    write("small4_jobs.sacct", small4())
    print("small4_jobs.sacct: 20 jobs")
    write("part2_jobs.sacct", part2())
    print("part2_jobs.sacct: 60 jobs")
    write("part2_small_jobs.sacct", [line.replace("|cpu,small", "|small") for line in part2()])
    print("part2_small_jobs.sacct: 60 jobs")
    write("resv4_jobs.sacct", resv4())
    print("resv4_jobs.sacct: 45 jobs")
