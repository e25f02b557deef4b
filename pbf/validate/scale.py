"""Slurm's own backfill cost at a cluster's size, measured on a real Slurm (issue 54): the built-in Beocat
cluster as a ``slurm.conf`` (``select/cons_tres``, ``sched/backfill``), one ``slurmd`` per node
(``slurmd -N NAME``, Slurm's multiple-slurmd mode: every node a daemon of its own on this machine),
a few hundred running jobs that fill every node and outlast the measurement, and queues of pending jobs
(``sbatch --wrap "sleep N"`` that never start: nothing is free) of growing depth; ``sdiag`` sampled every
few seconds for each (depth, ``bf_max_job_test``) case, the raw outputs kept for ``pbf calibrate sdiag``.

Everything Slurm runs in the harness's private network namespace (:mod:`pbf.validate.slurm_run`,
:mod:`pbf.validate.slurm_inside`): :func:`measure` writes the site file and the private configuration
(:func:`pbf.validate.slurm_config.write_private_conf`), then runs ``unshare -n -u python -m
pbf.validate.scale_inside SCRATCH`` (:mod:`pbf.validate.scale_inside`) and ends it, its daemons and
anything left in its namespace by pid on every way out.

:func:`case_figures` reads a case's samples back (one figure per backfill cycle seen, from the sdiag
counter), :func:`fit_folder` runs pbf's own fit (:func:`pbf.sdiag.read_sdiag`, :func:`pbf.sdiag.fit_cost`)
over the saved outputs, leaving out the snapshots taken before the first cycle after a statistics reset
(sdiag prints no ``Mean cycle`` / ``Depth Mean`` lines then, and :func:`pbf.sdiag.read_sdiag` refuses
the whole file), and :func:`power_error` gives the standard error of the fitted power.
"""
from __future__ import annotations

import csv
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

__all__ = ["fit_points", "fit_depth_and_queue", "beocat_site_conf", "running_jobs", "pending_jobs", "measure",
           "case_figures", "fit_folder", "power_error", "sched_params", "UNLIMITED_TEST"]

#: ``bf_max_job_test`` "unlimited": slurmctld 22.05's largest accepted value
UNLIMITED_TEST = 1_000_000


def sched_params(max_job_test: int, extra: str = "") -> str:
    """The ``SchedulerParameters`` of a case (Slurm's defaults apart from ``bf_max_job_test``)."""
    return ",".join(filter(None, [f"bf_max_job_test={max_job_test}", extra]))


def beocat_site_conf(path: str, cluster: str = "beocat-gpu", max_nodes: int | None = None,
                     max_job_test: int = 500, extra_params: str = "") -> list:
    """Write a site ``slurm.conf`` of the built-in cluster ``cluster`` (its first ``max_nodes`` nodes) and
    return its nodes (:class:`pbf.cluster.Node`)."""
    from ..cluster import Cluster
    nodes = list(Cluster.load(cluster).nodes)
    if max_nodes:
        nodes = nodes[:max_nodes]
    lines = [f"# {cluster} ({len(nodes)} nodes) for the backfill-cost measurement (pbf.validate.scale)",
             "SchedulerType=sched/backfill", f"SchedulerParameters={sched_params(max_job_test, extra_params)}",
             "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core_Memory", "PriorityType=priority/basic"]
    for n in nodes:
        words = [f"NodeName={n.name}", f"CPUs={n.cores}", f"RealMemory={n.memory_mb}"]
        if n.gpus:
            words.append(f"Gres=gpu:{n.gpus}")
        if n.features:
            words.append(f"Feature={','.join(n.features)}")
        lines.append(" ".join(words))
    lines.append("PartitionName=normal Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    return nodes


# requested times of the Beocat-like trace (pbf.workload.beocat), for the running jobs' limits
_REQ_MIN = (3600, 7200, 14400, 21600, 43200, 72000, 86400, 172800, 259200, 345600, 432000, 604800)


def running_jobs(nodes, partition: str, workdir: str, seed: int = 54, min_limit_min: int = 360,
                 split_from_cores: int = 32) -> list:
    """sbatch argument lists of the running jobs: each node filled, by one job or (``split_from_cores`` cores
    and more) two halves, pinned to it (``--nodelist``), with all its memory and GPUs; limits drawn from
    the Beocat-like requested times, at least ``min_limit_min`` minutes; each sleeps 2 minutes less than its
    limit (longer than the measurement: none ends during it)."""
    rng = np.random.default_rng(seed)
    out = []
    for n in nodes:
        parts = 2 if n.cores >= split_from_cores else 1
        for k in range(parts):
            cores = n.cores // parts + (n.cores % parts if k == 0 else 0)
            mem = n.memory_mb // parts
            gpus = n.gpus // parts + (n.gpus % parts if k == 0 else 0)
            limit = max(min_limit_min, int(rng.choice(_REQ_MIN)) // 60)
            args = ["--parsable", f"--job-name=run-{n.name}-{k}", "--output=/dev/null", f"--chdir={workdir}",
                    f"--partition={partition}", f"--time={limit}", f"--nodelist={n.name}", "--nodes=1",
                    f"--ntasks={cores}", f"--mem={mem}"]
            if gpus:
                args.append(f"--gres=gpu:{gpus}")
            args.append(f"--wrap=sleep {limit * 60 - 120}")
            out.append(args)
    return out


def pending_jobs(n: int, partition: str, workdir: str, seed: int = 54, skip: int = 0) -> list:
    """sbatch argument lists of ``n`` pending jobs: the Beocat-like trace's requests
    (:func:`pbf.workload.beocat.generate_beocat` with resources: cores, memory per core, GPUs on one node,
    requested time), jobs ``skip`` to ``skip + n`` of the trace of ``skip + n`` jobs (the generator's jobs
    depend on the trace's length: each stage of :func:`measure` draws its own); memory per core kept within 32 GB (and a
    GPU job within 16 cores and 80 GB on its node) so that every job fits some node and sbatch accepts it."""
    from ..workload.beocat import generate_beocat
    t = generate_beocat(skip + n, seed=seed, resources=True).columns
    out = []
    for i in range(skip, skip + n):
        cores, gpus = int(t["req_procs"][i]), int(t["gpus"][i])
        mem = min(int(t["mem_core_mb"][i]), 32_000)
        if gpus:
            cores = min(cores, 16)
            mem = min(mem, 80_000 // cores)
        limit = max(1, math.ceil(int(t["req_time"][i]) / 60))
        args = ["--parsable", f"--job-name=p{i}", "--output=/dev/null", f"--chdir={workdir}",
                f"--partition={partition}", f"--time={limit}", f"--ntasks={cores}", f"--mem-per-cpu={max(1, mem)}"]
        if gpus:
            args += ["--nodes=1", f"--gres=gpu:{gpus}"]
        args.append(f"--wrap=sleep {max(1, int(t['run'][i]))}")
        out.append(args)
    return out


def measure(out: str, depths=(1000, 10000, 50000), tests=(500, UNLIMITED_TEST), *, cluster: str = "beocat-gpu",
            max_nodes: int | None = None, min_s: float = 240, max_s: float = 600, min_cycles: int = 6,
            sample_s: float = 3.0, poke: bool = True, seed: int = 54, extra_params: str = "",
            submit_workers: int = 4, keep_scratch: bool = False, verbose: bool = True) -> dict:
    """Run the measurement: one Slurm, the queue grown to each depth in turn, each ``bf_max_job_test`` of
    ``tests`` measured at each depth; the raw sdiag outputs in ``OUT/d{depth}-t{test}/``. Returns the
    inner program's result (also ``OUT/result.json``)."""
    import atexit

    from .slurm_config import write_private_conf
    from .slurm_run import _Inner, check_requirements
    found = check_requirements(False)
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="pbf-scale-")
    site = os.path.join(out, "site.conf")
    nodes = beocat_site_conf(site, cluster, max_nodes, tests[0], extra_params)
    private = write_private_conf(site, scratch, debug_flags="")
    work = os.path.join(scratch, "work")
    stages, done = [], 0
    for d in sorted(depths):
        jobs = pending_jobs(d - done, private.partition, work, seed, skip=done)
        cases = [{"name": f"d{d}-t{'unl' if t >= UNLIMITED_TEST else t}", "max_job_test": t,
                  "scheduler_parameters": sched_params(t, extra_params), "min_s": min_s, "max_s": max_s,
                  "min_cycles": min_cycles} for t in tests]
        stages.append({"depth": d, "jobs": jobs, "cases": cases})
        done = d
    spec = {"conf": private.path, "nodes": private.nodes, "partition": private.partition,
            "slurmctld": found["slurmctld"], "slurmd": found["slurmd"], "host_netns": os.readlink("/proc/self/ns/net"),
            "running": running_jobs(nodes, private.partition, work, seed), "stages": stages, "out": out,
            "sample_s": sample_s, "poke": poke, "bf_interval": 30, "submit_workers": submit_workers}
    with open(os.path.join(scratch, "spec.json"), "w") as fh:
        json.dump(spec, fh)
    shutil.copy2(private.path, os.path.join(out, "private-slurm.conf"))
    if private.gres_path:
        shutil.copy2(private.gres_path, os.path.join(out, "gres.conf"))
    pbf_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [pbf_root, os.environ.get("PYTHONPATH")]))}
    env.pop("SLURM_CONF", None)
    log_path = os.path.join(out, "inside.log")
    with open(log_path, "w") as log:
        proc = subprocess.Popen([found["unshare"], "-n", "-u", sys.executable, "-m", "pbf.validate.scale_inside",
                                 scratch], env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, cwd=scratch)
    inner = _Inner(proc, scratch)
    atexit.register(inner.end)
    shown = 0
    try:
        while proc.poll() is None:
            time.sleep(1)
            if verbose:
                shown = _show(log_path, shown)
    finally:
        inner.end(grace=120.0)      # (deleting 50,000 jobs' state takes minutes)
        atexit.unregister(inner.end)
        if verbose:
            _show(log_path, shown)
        result = {}
        try:
            with open(os.path.join(scratch, "result.json")) as fh:
                result = json.load(fh)
        except (OSError, ValueError):
            pass
        result["slurmd_mode"] = (f"one slurmd per node (slurmd -N NAME, multiple-slurmd), {len(private.nodes)} "
                                 "nodes")
        result["nodes"] = len(private.nodes)
        result["running_jobs"] = len(spec["running"])
        with open(os.path.join(out, "result.json"), "w") as fh:
            json.dump(result, fh, indent=1)
        logs = os.path.join(scratch, "log")
        if os.path.isdir(logs):
            os.makedirs(os.path.join(out, "log"), exist_ok=True)
            for name in ("slurmctld.log", "slurmctld.out"):
                if os.path.exists(os.path.join(logs, name)):
                    shutil.copy2(os.path.join(logs, name), os.path.join(out, "log", name))
        if not keep_scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    return result


def _show(path, shown):
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError:
        return shown
    if len(text) > shown:
        sys.stderr.write(text[shown:])
        sys.stderr.flush()
    return len(text)


def case_figures(folder: str) -> dict:
    """A case's figures from its ``samples.csv``: each backfill cycle once (the samples where sdiag's
    ``Total cycles`` moved; a sample that skipped cycles counts the last only), its time and the jobs it
    tried, their mean and max, the cost per tried job (total time over total jobs tried), the queue, and
    the machine's load over the samples; ``cycle_end_files``: the sdiag outputs taken just after a cycle
    ended. Only those pair a cycle's tried jobs with its own time: sdiag's ``Last depth cycle (try
    sched)`` counts the jobs of the cycle *under way* (slurmctld sets it to 0 when a cycle begins and
    adds to it as it tests), while ``Last cycle`` is the time of the last *finished* one, so a snapshot
    taken during a cycle pairs part of one cycle's depth with another's time. The next cycle begins
    ``bf_interval`` (30 s) after the last ended, so the first sample after an end (every 3 s) is
    between cycles."""
    with open(os.path.join(folder, "samples.csv")) as fh:
        rows = list(csv.DictReader(fh))
    cycles, cpu, prev, prev_cpu, ends = [], [], 0, None, []
    for r in rows:
        c = int(r["cycles"])
        bf = float(r.get("bckfl_cpu_s") or -1)
        if c > prev and int(r["last_cycle_us"]) > 0:
            cycles.append((int(r["last_depth_try"]), int(r["last_cycle_us"]), int(r["last_depth"]),
                           int(r["queue_len"])))
            ends.append(os.path.join(folder, r["file"]))
            if c == prev + 1 and prev_cpu is not None and prev_cpu >= 0 and bf >= 0 and prev > 0:
                # the backfill thread's CPU since the sample that saw the cycle before: this cycle's
                cpu.append((int(r["last_depth_try"]), bf - prev_cpu, int(r["queue_len"])))
        if c > prev:
            prev_cpu = bf
        prev = max(prev, c)
    load = [float(r["load1"]) for r in rows]
    busy = [float(r["machine_busy_pct"]) for r in rows]
    ctld = [float(r["slurmctld_cpu_pct"]) for r in rows if float(r["slurmctld_cpu_pct"]) >= 0]
    tried = [c[0] for c in cycles]
    times = [c[1] for c in cycles]
    return {"case": os.path.basename(folder), "samples": len(rows), "cycles": int(rows[-1]["cycles"]) if rows else 0,
            "cycles_seen": len(cycles),
            "mean_cycle_ms": float(np.mean(times)) / 1000 if times else None,
            "max_cycle_ms": max(times) / 1000 if times else None,
            "mean_tried": float(np.mean(tried)) if tried else None,
            "mean_depth": float(np.mean([c[2] for c in cycles])) if cycles else None,
            "queue_len": int(np.median([c[3] for c in cycles])) if cycles else None,
            "us_per_test": sum(times) / sum(tried) if tried and sum(tried) else None,
            "us_per_test_sd": float(np.std([t / n for n, t in zip(tried, times) if n], ddof=1))
            if len(tried) > 1 else None,
            "cpu_cycles": len(cpu),
            "cpu_us_per_test": sum(c[1] for c in cpu) * 1e6 / sum(c[0] for c in cpu) if cpu and sum(
                c[0] for c in cpu) else None,
            "load1_mean": float(np.mean(load)) if load else None, "load1_max": max(load) if load else None,
            "machine_busy_pct": float(np.mean(busy)) if busy else None,
            "slurmctld_cpu_pct": float(np.mean(ctld)) if ctld else None,
            "points": cycles, "cpu_points": cpu, "cycle_end_files": ends}


def sdiag_files(folder: str) -> list:
    return sorted(glob.glob(os.path.join(folder, "sdiag-*.txt")))


def fit_folder(files) -> dict:
    """pbf's fit over saved sdiag outputs, through ``pbf calibrate sdiag``'s own functions: first over every
    file (what fails is recorded: the file and pbf's message), then over the files with at least one
    backfill cycle since the statistics were reset."""
    from ..sdiag import SdiagError, fit_cost, read_sdiag
    out = {"files": len(files)}
    try:
        fit = fit_cost(read_sdiag(*files))
        out["all_files"] = "read"
    except SdiagError as exc:
        out["all_files"] = f"refused: {exc}"
    usable, refused = [], []
    for f in files:
        try:
            read_sdiag(f)
            usable.append(f)
        except SdiagError as exc:
            refused.append((os.path.relpath(f), str(exc)))
    out["refused"] = refused
    out["usable"] = usable
    if not usable:
        return out
    snaps = read_sdiag(*usable)
    fit = fit_cost(snaps)
    out.update({"snapshots": len(snaps), "pref_us": fit.pref_us, "power": fit.power, "rel_error": fit.rel_error,
                "points": [list(p) for p in fit.points], "power_se": power_error(fit.points)[0],
                "log_pref_se": power_error(fit.points)[1]})
    return out


def fit_points(points) -> dict:
    """``pref x n^pow`` by least squares on the logs of (n, time in microseconds) points, as
    :func:`pbf.sdiag.fit_cost` fits sdiag's, with the power's standard error (for the backfill thread's CPU
    time per cycle, which sdiag does not give)."""
    pts = [(n, t) for n, t in points if n > 0 and t > 0]
    if len({n for n, _ in pts}) < 2:
        return {}
    x, y = np.log([n for n, _ in pts]), np.log([t for _, t in pts])
    b, a = np.polyfit(x, y, 1)
    rel = math.sqrt(float(np.mean((np.exp(a + b * x) / np.exp(y) - 1) ** 2)))
    se = power_error(pts)
    return {"pref_us": math.exp(a), "power": float(b), "power_se": se[0], "rel_error": rel, "points": len(pts)}


def fit_depth_and_queue(points) -> dict:
    """``t = pref x n^p x Q^q`` by least squares on logs: n the jobs a cycle tried, Q the pending jobs in the
    queue (sdiag's ``Last queue length``), t its time; with standard errors. pbf's cost model has n alone
    (:func:`pbf.sdiag.fit_cost`); this says how much of the depth's effect is the queue's length."""
    pts = [(n, q, t) for n, q, t in points if n > 0 and q > 0 and t > 0]
    if len(pts) < 4 or len({n for n, _, _ in pts}) < 2 or len({q for _, q, _ in pts}) < 2:
        return {}
    X = np.column_stack([np.ones(len(pts)), np.log([p[0] for p in pts]), np.log([p[1] for p in pts])])
    y = np.log([p[2] for p in pts])
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ beta
    dof = max(1, len(pts) - 3)
    cov = float(resid @ resid) / dof * np.linalg.pinv(X.T @ X)
    se = np.sqrt(np.diag(cov))
    return {"pref_us": math.exp(beta[0]), "p_tried": float(beta[1]), "p_tried_se": float(se[1]),
            "q_queue": float(beta[2]), "q_queue_se": float(se[2]),
            "rms_log": math.sqrt(float(resid @ resid) / len(pts)), "points": len(pts)}


def power_error(points) -> tuple:
    """(standard error of the power, standard error of ln pref) of the least-squares line through the logs of
    the (tried jobs, cycle time) points; (nan, nan) with fewer than three points or one depth."""
    if len(points) < 3 or len({n for n, _ in points}) < 2:
        return float("nan"), float("nan")
    x = np.log([n for n, _ in points])
    y = np.log([t for _, t in points])
    mx = x.mean()
    b, a = np.polyfit(x, y, 1)
    resid = y - (a + b * x)
    s2 = float(resid @ resid) / (len(x) - 2)
    sxx = float(((x - mx) ** 2).sum())
    return math.sqrt(s2 / sxx), math.sqrt(s2 * (1 / len(x) + mx * mx / sxx))
