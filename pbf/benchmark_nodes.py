"""ARCHER2-sized node benchmarks of ``pbf bench``: the cluster and jobs of :mod:`pbf.workload.archer2`
(5,860 nodes of 128 cores).

* :func:`archer2_replay_row` (slice ``replay``): 20,000 jobs in two weeks replayed from their sacct dump
  and ``slurm.conf`` as a site would, each replay a whole ``pbf replay`` process.
* :func:`archer2_pass_rows` (slice ``large``): passes over 100,000 queued jobs through :class:`pbf.Engine`,
  Slurm's node search and pbf's exact plan, each search in its own process (its peak RSS).
* :func:`archer2_passes`: the passes themselves (``bench/archer2_pass.py`` prints them one by one).
* :func:`node_replay` (slice ``large``, after the pass rows): `pbf gen archer2`'s jobs at a fixed rate
  (100,000 in 70 days) replayed by pbf's exact node plan, a whole ``pbf replay`` process: its wall and
  CPU time, peak RSS and cost per job. 100,000 jobs (20,000 with ``--quick``); ``$PBF_BENCH_NODE_REPLAY_JOBS``
  sets another size (``1000000`` for the million-job replay; ``0`` leaves the row out).
  ``bench/node_replay_scale.py`` runs the 100,000 / 300,000 / 1,000,000 series.
"""
from __future__ import annotations

import hashlib
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

from .bounded import MAX_GENERATED_JOBS, check_int, parse_whole
from .errors import ConfigError

__all__ = ["archer2_replay_row", "archer2_pass_rows", "archer2_passes", "timed_passes", "node_replay",
           "node_replay_row", "node_replay_jobs", "REPLAY_JOBS_PER_DAY", "REPLAY_JOBS_ENV"]

#: jobs submitted first, to fill the empty machine (those that fit start)
FILL_JOBS = 6_000
#: the node replay's submit rate, the same at every size (so the queue stays as deep): 100,000 jobs in 70 days
REPLAY_JOBS_PER_DAY = 100_000 / 70
#: the environment variable that sets the node replay's size in ``pbf bench --slice large``
REPLAY_JOBS_ENV = "PBF_BENCH_NODE_REPLAY_JOBS"


def archer2_passes(search: str, queued: int = 100_000, passes: int = 5, max_job_test: int = 1000,
                   seed: int = 0, report: Callable[[str], None] | None = None, workers: int = 1,
                   trials: bool = True) -> dict[str, Any]:
    """Fill the empty ARCHER2-like machine, submit ``queued`` jobs at once and time that call's pass and
    ``passes`` more, each after the running job that ends first has ended (a reservation for every job
    tested, up to ``max_job_test``). Returns the pass times (s; the first includes the submits), and the
    jobs started and reserved in each. ``workers`` > 1: a helper thread may share each pass's searches
    (docs/engine.md, "Threads on nodes"), where trials find it faster (``trials`` False: in every pass)."""
    from .config import Backfill
    from .engine import Engine
    from .engine_events import Job, Start, Submit
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
                    backfill=Backfill(reservations=None, max_job_test=max_job_test), workers=workers)
    if not trials:
        engine._core.set_testing(split_trial_us=0)
    ends = {d.job_id: run_of[d.job_id] for d in engine.advance(0, submits(0, FILL_JOBS, 0)) if isinstance(d, Start)}
    if report:
        report(f"{search}: {len(ends):,} of {FILL_JOBS:,} jobs started on the empty machine; {queued:,} submitted next")
    out = timed_passes(engine, submits(FILL_JOBS, FILL_JOBS + queued, 1), ends, run_of, passes, report)
    shared, helped = engine._core.search_helper_stats()[:2]
    return {"walls": out["walls"], "started": out["started"], "reserved": out["reserved"],
            "decisions": out["digest"], "shared": shared, "helped": helped}


def timed_passes(engine, events, ends: dict, run_of: dict, passes: int,
                 report: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Time ``engine.advance(1, events)`` and ``passes`` calls after it, each at the end of the running job
    that ends first (``ends``: {job: end} of the running jobs, updated; ``run_of``: {job: run time}).
    Returns the calls' wall times (s), the jobs started and reserved in each, and a digest of every
    decision (the same for any workers)."""
    from .engine_events import Finish, Reserve, Start
    walls, started, reserved = [], [], []
    digest = hashlib.sha256()
    now = 1
    for k in range(passes + 1):
        t0 = time.perf_counter()
        decisions = engine.advance(now, events)
        walls.append(time.perf_counter() - t0)
        digest.update(repr(decisions).encode())
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
    return {"walls": walls, "started": started, "reserved": reserved, "digest": digest.hexdigest()[:16]}


def _child(search: str, queued: int, passes: int, max_job_test: int) -> None:
    out = archer2_passes(search, queued, passes, max_job_test)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def archer2_pass_rows(trials: int = 3, queued: int = 100_000, max_job_test: int = 1000,
                      replay_jobs: int | None = None) -> list[dict[str, Any]]:
    """One row per node search: the median of ``trials`` passes over ``queued`` jobs after the one that
    submitted them, that first pass, and the process's peak RSS; then the node replay row of
    ``replay_jobs`` jobs (None: :func:`node_replay_jobs` with ``queued`` as its default; 0: none)."""
    replay_jobs = node_replay_jobs(queued) if replay_jobs is None else replay_jobs
    check_int("replay_jobs", replay_jobs, 0, MAX_GENERATED_JOBS)
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
    if replay_jobs:
        rows.append(node_replay_row(node_replay(replay_jobs)))
    return rows


def node_replay_jobs(default: int) -> int:
    """The node replay's size in ``pbf bench --slice large``: ``$PBF_BENCH_NODE_REPLAY_JOBS`` when set
    (a whole number of jobs; 0: no replay), ``default`` otherwise."""
    text = os.environ.get(REPLAY_JOBS_ENV, "")
    if not text.strip():
        return default
    try:
        return parse_whole(text, 0, MAX_GENERATED_JOBS)
    except ValueError as exc:
        raise ConfigError(f"${REPLAY_JOBS_ENV}: {text.strip()[:40]!r}: expected {exc}") from None


def node_replay(jobs: int, search: str = "exact", seed: int = 0, keep: str | os.PathLike | None = None,
                niceness: int = 0) -> dict[str, Any]:
    """`pbf gen archer2`'s ``jobs`` jobs, submitted at :data:`REPLAY_JOBS_PER_DAY`, replayed from their sacct
    dump and ``slurm.conf`` by ``pbf replay --node-search search`` in a process of its own (raised by
    ``niceness``). The workload is written to a temporary directory, or to ``keep`` (and used again from
    there when present). Returns the replay process's wall and CPU seconds and peak RSS (MB), the replay
    loop's seconds (without reading and writing), the passes (all, full, their wall seconds) and the jobs."""
    check_int("jobs", jobs, 1, MAX_GENERATED_JOBS)
    check_int("niceness", niceness, 0, 19)
    if search not in ("exact", "slurm"):
        raise ConfigError(f"search must be 'exact' or 'slurm', got {search!r}")
    window = max(1, round(jobs * 86400 / REPLAY_JOBS_PER_DAY))
    with tempfile.TemporaryDirectory() as tmp:
        where = os.fspath(keep) if keep is not None else tmp
        os.makedirs(where, exist_ok=True)
        sacct = os.path.join(where, f"archer2-{jobs}-{window}s-seed{seed}.sacct")
        conf = os.path.join(where, "archer2.conf")
        if not (os.path.exists(sacct) and os.path.exists(conf)):
            subprocess.run([sys.executable, "-m", "pbf", "gen", "archer2", "--jobs", str(jobs), "--window",
                            str(window), "--seed", str(seed), "-o", sacct, "--slurm-conf", conf, "--quiet"],
                           check=True, capture_output=True)
        out, err = os.path.join(tmp, "out"), os.path.join(tmp, "stderr.txt")
        cmd = [sys.executable, "-m", "pbf", "replay", sacct, "--slurm-conf", conf, "--node-search", search,
               "--quiet", "--out", out]
        with open(err, "wb") as fh:
            t0 = time.perf_counter()
            child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=fh,
                                     env=dict(os.environ, OPENBLAS_NUM_THREADS="1"),
                                     preexec_fn=(lambda: os.nice(niceness)) if niceness else None)
            _, status, usage = os.wait4(child.pid, 0)     # this child's own rusage
            wall = time.perf_counter() - t0
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            with open(err, encoding="utf-8", errors="replace") as fh:
                tail = fh.read()[-2000:]
            raise RuntimeError(f"{' '.join(cmd)} exited with {child.returncode}: {tail}")
        with open(os.path.join(out, "summary.json"), encoding="utf-8") as fh:
            summary = json.load(fh)
        full_ms = _full_pass_ms(os.path.join(out, "passes.csv"))
    p = summary["passes"]
    return {"jobs": jobs, "window_days": window / 86400, "search": search, "wall_s": wall,
            "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
            "replay_s": summary["wall_s"]["replay"], "load_s": summary["wall_s"]["load"],
            "completed": summary["jobs"]["completed"], "rejected": summary["jobs"]["rejected"],
            "passes": p["count"], "full_passes": p["full"],
            "pass_s": (p["wall_ms_total"] or 0.0) / 1e3, "full_pass_s": full_ms / 1e3,
            "mean_depth_full": p["mean_depth_full"], "mean_queue": summary["metrics"]["mean_queue"],
            "max_queue": summary["metrics"]["max_queue"]}


def _full_pass_ms(path: str) -> float:
    """The wall milliseconds of the full passes in a replay's passes.csv (0 without the file)."""
    if not os.path.exists(path):
        return 0.0
    import csv
    total = 0.0
    with open(path, newline="", encoding="utf-8") as fh:
        rows = csv.reader(fh)
        names = next(rows)
        kind, wall = names.index("kind"), names.index("wall_us")
        for row in rows:
            if row[kind] == "full":
                total += float(row[wall])
    return total / 1e3


def node_replay_row(r: dict[str, Any]) -> dict[str, Any]:
    """A ``large`` slice row of :func:`node_replay`'s figures (printed as its note)."""
    per_job, cpu_per_job = r["wall_s"] / r["jobs"] * 1e6, r["cpu_s"] / r["jobs"] * 1e6
    per_full = r["full_pass_s"] / r["full_passes"] * 1e3 if r["full_passes"] else 0.0
    days = f"{r['window_days']:,.0f}" if r["window_days"] >= 10 else f"{r['window_days']:.2g}"
    note = (f"node replay, {r['search']} search: {r['jobs']:,} jobs in {days} days on 5,860 nodes "
            f"x 128 cores (pbf gen archer2, --slurm-conf); wall {r['wall_s']:,.1f} s, CPU {r['cpu_s']:,.1f} s, "
            f"peak RSS {r['peak_rss_mb']:,.0f} MB; {per_job:,.0f} us a job ({cpu_per_job:,.0f} us of CPU); "
            f"{r['passes']:,} passes "
            f"({r['full_passes']:,} full, {per_full:.2f} ms each, {r['mean_depth_full']:,.0f} jobs deep)")
    return {"slice": "large", "name": "node replay", "note": note, **r, "us_per_job": per_job,
            "cpu_us_per_job": cpu_per_job, "ms_per_full_pass": per_full}


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
