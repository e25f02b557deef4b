"""Parameter sweeps (``pbf.sweep``): a grid of replay settings x traces x seeds, each cell a pure function of its
inputs, run on local processes or a Ray cluster, with results appended cell by cell.

A spec (TOML, or the same as a dict)::

    name = "reservations-workers"
    [trace]                 # a file (path, relative to the spec), or a generated trace:
    gen = "lublin"          # lublin | beocat, with the generator's options; the grid's seed seeds it
    jobs = 2000
    preset = "lublin-1"
    [config]                # fixed settings of every cell
    priority = "fcfs"
    [grid]                  # axes; every combination is a cell
    reservations = [1, 4]
    workers = [1, 2, 4, 8]
    seed = [0, 1, 2]

Settings (in ``config`` or ``grid``): ``preset``, ``priority``, ``predictor``, ``correction``,
``order``, ``reservations`` (an int or ``"unlimited"``), ``max_job_test``, ``no_backfill``,
``workers``, ``commit``, ``clock``, ``trigger``, ``bf_interval``, ``bf_max_time``,
``cost_per_test_us``, ``units``, ``bsld_bound``; and ``seed`` (of a generated trace) and ``trace``
(a list of paths, as an axis). The output folder holds ``results.jsonl`` (a line per finished
cell: its settings, ``ok`` and its metrics, or ``error`` and the message), ``results.csv`` (the
latest record of every cell, one row each; ``pandas.read_csv`` reads it) and ``spec.json``.
``resume=True`` runs only the cells without an ``ok`` record.
"""
from __future__ import annotations

import csv
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

from .errors import ConfigError
from .sweep_cell import run_cell, run_recorded
from .sweeps_ray import run_ray

__all__ = ["sweep", "load_spec", "cells_of", "run_cell", "run_recorded", "SETTINGS"]

SETTINGS = ("preset", "priority", "predictor", "correction", "order", "reservations", "max_job_test", "no_backfill",
            "workers", "commit", "clock", "trigger", "bf_interval", "bf_max_time", "cost_per_test_us", "units",
            "bsld_bound", "seed", "trace",
            # a cluster of nodes (pbf.Cluster.load: beocat, beocat-gpu, a TOML or slurm.conf file[:PARTITION])
            "cluster", "mem_from", "node_choice",
            # node failures (pbf.Failures): a failure file, or an MTBF
            "failures", "mtbf_hours", "repair_hours", "failure_seed", "node_cores", "on_failure")
_GENERATORS = ("lublin", "beocat")


def load_spec(spec: dict | str | os.PathLike) -> dict:
    """A spec as a dict: ``spec`` is a dict or the path of a TOML file (``trace.path`` and the
    ``trace`` axis are made relative to the file's folder)."""
    if isinstance(spec, dict):
        data, base = dict(spec), os.getcwd()
    else:
        import tomllib  # (Python 3.11+; the rest of pbf runs on 3.10)
        path = os.fspath(spec)
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such sweep spec") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from None
        base = os.path.dirname(os.path.abspath(path))
    unknown = set(data) - {"name", "trace", "config", "grid"}
    if unknown:
        raise ConfigError(f"sweep spec: unknown sections {sorted(unknown)}; expected name, trace, config, grid")
    grid = dict(data.get("grid", {}))
    config = dict(data.get("config", {}))
    for where, table in (("config", config), ("grid", grid)):
        bad = set(table) - set(SETTINGS)
        if bad:
            raise ConfigError(f"sweep spec [{where}]: unknown settings {sorted(bad)}; known: {', '.join(SETTINGS)}")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise ConfigError(f"sweep spec [grid] {key}: expected a non-empty list, got {values!r}")
    trace = dict(data.get("trace", {}))
    if "path" in trace:
        trace["path"] = os.path.join(base, os.path.expandvars(trace["path"]))
    elif trace.get("gen") not in _GENERATORS and "trace" not in grid:
        raise ConfigError(f"sweep spec [trace]: give path = FILE or gen = {' | '.join(_GENERATORS)} "
                          f"(or a trace axis in [grid]), got {trace!r}")
    if "trace" in grid:
        grid["trace"] = [os.path.join(base, os.path.expandvars(p)) for p in grid["trace"]]
    if isinstance(config.get("failures"), str):
        config["failures"] = os.path.join(base, os.path.expandvars(config["failures"]))
    if "failures" in grid:
        grid["failures"] = [os.path.join(base, os.path.expandvars(p)) for p in grid["failures"]]
    if isinstance(config.get("cluster"), str):
        config["cluster"] = _cluster_path(base, config["cluster"])
    if "cluster" in grid:
        grid["cluster"] = [_cluster_path(base, c) if isinstance(c, str) else c for c in grid["cluster"]]
    return {"name": data.get("name", "sweep"), "trace": trace, "config": config, "grid": grid}


def _cluster_path(base, value):
    # a cluster file (optionally FILE:PARTITION) is relative to the spec's folder; built-in names stay
    path, sep, part = os.path.expandvars(value).partition(":")
    full = os.path.join(base, path)
    return full + sep + part if os.path.isfile(full) else value


def cells_of(spec: dict | str | os.PathLike) -> list[dict]:
    """Every cell of the grid, in grid order: ``{"id": ..., "params": {...}}``."""
    spec = load_spec(spec)          # (idempotent on a loaded spec: its paths are absolute)
    axes = list(spec["grid"])
    out = []
    for values in itertools.product(*(spec["grid"][a] for a in axes)):
        params = {**spec["config"], **dict(zip(axes, values))}
        key = json.dumps({"trace": spec["trace"], "params": params}, sort_keys=True)
        out.append({"id": hashlib.sha1(key.encode()).hexdigest()[:12], "params": params})
    return out


class _Results:
    """``results.jsonl`` (append, one line per finished cell) and ``results.csv`` (rewritten)."""

    def __init__(self, out, cells, resume):
        self.out, self.cells = out, cells
        self.path = os.path.join(out, "results.jsonl")
        self.latest = {}
        if os.path.exists(self.path):
            if not resume:
                raise ConfigError(f"{out}: holds results of an earlier sweep; --resume to complete it, or "
                                  f"choose another --out")
            with open(self.path) as fh:
                text = fh.read()
            for line in text.splitlines():
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError:
                    continue               # a line cut by a kill: that cell runs again
                self.latest[rec["cell"]] = rec
            if text and not text.endswith("\n"):
                with open(self.path, "a") as fh:
                    fh.write("\n")        # new records start on a line of their own
        self.done_before = sum(1 for c in cells if self.latest.get(c["id"], {}).get("status") == "ok")

    def todo(self):
        return [c for c in self.cells if self.latest.get(c["id"], {}).get("status") != "ok"]

    def add(self, cell, status, metrics, error, seconds):
        rec = {"cell": cell["id"], "params": cell["params"], "status": status, "metrics": metrics,
               "error": error, "seconds": round(seconds, 3)}
        with open(self.path, "a") as fh:
            fh.write(json.dumps(rec, sort_keys=True) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self.latest[cell["id"]] = rec

    def write_csv(self):
        rows = [self.latest[c["id"]] for c in self.cells if c["id"] in self.latest]
        pkeys = list(dict.fromkeys(k for r in rows for k in r["params"]))
        mkeys = list(dict.fromkeys(k for r in rows for k in (r["metrics"] or {})))
        tmp = os.path.join(self.out, "results.csv.tmp")
        with open(tmp, "w", newline="") as fh:
            w = csv.writer(fh)
            w.writerow(["cell"] + pkeys + ["status"] + mkeys + ["error"])
            for r in rows:
                w.writerow([r["cell"]] + [r["params"].get(k, "") for k in pkeys] + [r["status"]]
                           + [(r["metrics"] or {}).get(k, "") for k in mkeys]
                           + [(r["error"] or "").splitlines()[0] if r["error"] else ""])
        os.replace(tmp, os.path.join(self.out, "results.csv"))


def _progress(total, done0):
    # a bar redrawn in place on a terminal; elsewhere (logs) one line at the end
    t0 = time.perf_counter()
    state = {"ok": 0, "failed": 0}
    tty = sys.stderr.isatty()

    def report(status):
        state["ok" if status == "ok" else "failed"] += 1
        n = state["ok"] + state["failed"]
        left = (time.perf_counter() - t0) / n * (total - n) if n else 0
        bar = "#" * (20 * n // max(total, 1)) + "-" * (20 - 20 * n // max(total, 1))
        line = (f"  [{bar}] {n + done0}/{total + done0} cells ({done0} done before), {state['failed']} failed, "
                f"~{left:.0f} s left")
        if tty:
            print("\r" + line, end="" if n < total else "\n", file=sys.stderr, flush=True)
        elif n == total:
            print(line.replace(", ~0 s left", f" in {time.perf_counter() - t0:.1f} s"), file=sys.stderr)
    return report


def sweep(spec: dict | str | os.PathLike, out: str | os.PathLike, *, jobs: int | None = None, backend: str = "local",
          address: str | None = None, resume: bool = False, progress: bool = True) -> list[dict]:
    """Run a sweep (``spec``: a dict or a TOML path) into folder ``out``; returns the list of
    records (one per cell, in grid order). ``backend``: ``local`` (``jobs`` spawned processes,
    default the cores) or ``ray`` (``address`` of a running cluster; the trace is put in the
    object store once per trace and cells return metrics only)."""
    spec = load_spec(spec)
    cells = cells_of(spec)
    os.makedirs(out, exist_ok=True)
    results = _Results(out, cells, resume)
    with open(os.path.join(out, "spec.json"), "w") as fh:
        json.dump(spec, fh, indent=2)
    todo = results.todo()
    report = _progress(len(todo), results.done_before) if progress and todo else (lambda status: None)

    def finished(cell, status, metrics, error, seconds):
        results.add(cell, status, metrics, error, seconds)
        report(status)

    if backend == "local":
        _local(spec["trace"], todo, finished, jobs)
    elif backend == "ray":
        run_ray(spec["trace"], todo, finished, address)
    else:
        raise ConfigError(f"backend {backend!r}: expected local or ray")
    results.write_csv()
    return [results.latest[c["id"]] for c in cells if c["id"] in results.latest]


def _local(trace, todo, finished, jobs):
    if not todo:
        return
    jobs = int(jobs or os.cpu_count() or 1)
    if jobs < 1:
        raise ConfigError(f"jobs must be >= 1, got {jobs}")
    with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=mp.get_context("spawn")) as pool:
        started = {pool.submit(run_recorded, trace, c["params"]): (c, time.perf_counter()) for c in todo}
        for fut in as_completed(started):
            cell, t0 = started[fut]
            status, metrics, error = fut.result()
            finished(cell, status, metrics, error, time.perf_counter() - t0)
