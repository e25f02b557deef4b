"""ARCHER2-sized node benchmarks of ``pbf bench``: the cluster and jobs of :mod:`pbf.workload.archer2`
(5,860 nodes of 128 cores).

* :func:`archer2_replay_row` (slice ``replay``): 20,000 jobs in two weeks replayed from their sacct dump
  and ``slurm.conf`` as a site would, each replay a whole ``pbf replay`` process.
* :func:`archer2_pass_rows` (slice ``large``): passes over 100,000 queued jobs through :class:`pbf.Engine`,
  Slurm's node search and pbf's exact plan, each search in its own process (its peak RSS).
* :func:`archer2_passes`: the passes themselves (``bench/archer2_pass.py`` prints them one by one).
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

__all__ = ["archer2_replay_row", "archer2_pass_rows", "archer2_passes"]

#: jobs submitted first, to fill the empty machine (those that fit start)
FILL_JOBS = 6_000


def archer2_passes(search: str, queued: int = 100_000, passes: int = 5, max_job_test: int = 1000,
                   seed: int = 0, report: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Fill the empty ARCHER2-like machine, submit ``queued`` jobs at once and time that call's pass and
    ``passes`` more, each after the running job that ends first has ended (a reservation for every job
    tested, up to ``max_job_test``). Returns the pass times (s; the first includes the submits), and the
    jobs started and reserved in each."""
    from .config import Backfill
    from .engine import Engine
    from .engine_events import Finish, Job, Reserve, Start, Submit
    from .workload.archer2 import archer2_cluster, generate_archer2
    table = generate_archer2(n_jobs=FILL_JOBS + queued, window=14 * 86400, seed=seed)
    c = table.columns

    def submits(first, last, at):
        return [Submit(Job(id=int(c["job_id"][i]), submit=at, units=int(c["alloc_procs"][i]),
                           requested=int(c["req_time"][i]), run=int(c["run"][i]), user=int(c["user"][i]),
                           mem_core_mb=int(c["mem_core_mb"][i]), mem_node_mb=int(c["mem_node_mb"][i]),
                           nodes_min=int(c["nodes_min"][i]), nodes_max=int(c["nodes_max"][i])))
                for i in range(first, last)]

    run_of = {int(j): int(r) for j, r in zip(c["job_id"], c["run"])}
    engine = Engine(archer2_cluster(), node_search=search, report_reservations=True,
                    backfill=Backfill(reservations=None, max_job_test=max_job_test))
    ends = {d.job_id: run_of[d.job_id] for d in engine.advance(0, submits(0, FILL_JOBS, 0)) if isinstance(d, Start)}
    if report:
        report(f"{search}: {len(ends):,} of {FILL_JOBS:,} jobs started on the empty machine; {queued:,} submitted next")
    walls, started, reserved = [], [], []
    now, events = 1, submits(FILL_JOBS, FILL_JOBS + queued, 1)
    for k in range(passes + 1):
        t0 = time.perf_counter()
        decisions = engine.advance(now, events)
        walls.append(time.perf_counter() - t0)
        starts = [d for d in decisions if isinstance(d, Start)]
        started.append(len(starts))
        reserved.append(sum(isinstance(d, Reserve) for d in decisions))
        for d in starts:
            ends[d.job_id] = now + run_of[d.job_id]
        if report:
            report(f"  pass {k}: {walls[-1] * 1e3:9.1f} ms  ({'submits, ' if k == 0 else ''}{started[-1]} started, "
                   f"{reserved[-1]} reserved, {len(ends):,} running)")
        job, end = min(ends.items(), key=lambda kv: (kv[1], kv[0]))
        del ends[job]
        now = max(now + 1, end)
        events = [Finish(job, now)]
    return {"walls": walls, "started": started, "reserved": reserved}


def _child(search: str, queued: int, passes: int, max_job_test: int) -> None:
    out = archer2_passes(search, queued, passes, max_job_test)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def archer2_pass_rows(trials: int = 3, queued: int = 100_000, max_job_test: int = 1000) -> list[dict[str, Any]]:
    """One row per node search: the median of ``trials`` passes over ``queued`` jobs after the one that
    submitted them, that first pass, and the process's peak RSS."""
    rows = []
    for search in ("slurm", "exact"):
        code = (f"from pbf.benchmark_nodes import _child; _child({search!r}, {queued}, {max(trials, 1)}, "
                f"{max_job_test})")
        done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                              env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
        out = json.loads(done.stdout.strip().splitlines()[-1])
        later = out["walls"][1:]
        rows.append({"slice": "large", "name": f"archer2 pass, {'Slurm' if search == 'slurm' else 'exact'} search",
                     "params": f"{queued:,} queued, 5,860 nodes x 128 cores, bf_max_job_test {max_job_test}",
                     **{"best_s": min(later), "median_s": statistics.median(later), "trials": len(later)},
                     "first_pass_s": out["walls"][0], "started": int(statistics.median(out["started"][1:])),
                     "reservations": int(statistics.median(out["reserved"][1:])),
                     "peak_rss_mb": out["peak_rss_mb"]})
    return rows


def archer2_replay_row(trials: int) -> dict[str, Any]:
    """`pbf gen archer2`'s 20,000 jobs in two weeks on 5,860 nodes of 128 cores (node-exclusive and
    shared) replayed from their sacct dump and slurm.conf as a site would, each replay a whole
    `pbf replay` process (its start-up and reading included; its peak RSS)."""
    with tempfile.TemporaryDirectory() as tmp:
        sacct, conf = os.path.join(tmp, "archer2.sacct"), os.path.join(tmp, "archer2.conf")
        subprocess.run([sys.executable, "-m", "pbf", "gen", "archer2", "--jobs", "20000", "--window", "14d",
                        "-o", sacct, "--slurm-conf", conf, "--quiet"], check=True, capture_output=True)
        walls = []
        for _ in range(trials):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "pbf", "replay", sacct, "--slurm-conf", conf, "--quiet",
                            "--out", os.path.join(tmp, "out")], check=True, capture_output=True,
                           env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
            walls.append(time.perf_counter() - t0)
        with open(os.path.join(tmp, "out", "summary.json")) as fh:
            summary = json.load(fh)
    med = statistics.median(walls)
    return {"slice": "replay", "name": "archer2 (pbf gen archer2, --slurm-conf)",
            "params": "20,000 jobs in 14 days on 5,860 nodes x 128 cores, Slurm's backfill",
            "best_s": min(walls), "median_s": med, "trials": len(walls),
            "jobs": summary["jobs"]["completed"] + summary["jobs"]["rejected"],
            "passes": summary["passes"]["count"], "jobs_per_s": 20_000 / med,
            "passes_per_s": summary["passes"]["count"] / med,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}
