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

import functools
import hashlib
import itertools
import json
import os
import sys
import time
import traceback

from .errors import ConfigError

__all__ = ["sweep", "load_spec", "cells_of", "run_cell", "run_recorded", "SETTINGS"]

SETTINGS = ("preset", "priority", "predictor", "correction", "order", "reservations", "max_job_test", "no_backfill",
            "workers", "commit", "clock", "trigger", "bf_interval", "bf_max_time", "cost_per_test_us", "units",
            "bsld_bound", "seed", "trace",
            # a cluster of nodes (pbf.Cluster.load: beocat, beocat-gpu, a TOML or slurm.conf file[:PARTITION])
            "cluster", "mem_from", "node_choice",
            # node failures (pbf.Failures): a failure file, or an MTBF
            "failures", "mtbf_hours", "repair_hours", "failure_seed", "node_cores", "on_failure")
_GENERATORS = ("lublin", "beocat")


def load_spec(spec):
    """A spec as a dict: ``spec`` is a dict or the path of a TOML file (``trace.path`` and the
    ``trace`` axis are made relative to the file's folder)."""
    if isinstance(spec, dict):
        data, base = dict(spec), os.getcwd()
    else:
        import tomllib
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


def cells_of(spec):
    """Every cell of the grid, in grid order: ``{"id": ..., "params": {...}}``."""
    spec = load_spec(spec)          # (idempotent on a loaded spec: its paths are absolute)
    axes = list(spec["grid"])
    out = []
    for values in itertools.product(*(spec["grid"][a] for a in axes)):
        params = {**spec["config"], **dict(zip(axes, values))}
        key = json.dumps({"trace": spec["trace"], "params": params}, sort_keys=True)
        out.append({"id": hashlib.sha1(key.encode()).hexdigest()[:12], "params": params})
    return out


def _trace_table(trace, params):
    # cells of one worker process often share a trace (a seed, a file): make it once
    key = json.dumps({"trace": trace, "path": params.get("trace"), "seed": params.get("seed")}, sort_keys=True)
    return _cached_table(key)


@functools.lru_cache(maxsize=4)
def _cached_table(key):
    spec = json.loads(key)
    trace, params = spec["trace"], {k: v for k, v in (("trace", spec["path"]), ("seed", spec["seed"])) if v is not None}
    return _make_table(trace, params)


def _make_table(trace, params):
    from .workload import read_swf
    if "trace" in params:
        return read_swf(params["trace"])
    if "path" in trace:
        return read_swf(trace["path"])
    from .workload.cleaning import clean
    options = {k: v for k, v in trace.items() if k != "gen"}
    seed = int(params.get("seed", options.pop("seed", 0)))
    if trace["gen"] == "lublin":
        from .workload.lublin import generate_lublin
        table = generate_lublin(int(options.pop("jobs", 10_000)), options.pop("preset", "lublin-1"), seed=seed,
                                **options)
    else:
        from .workload.beocat import generate_beocat
        table = generate_beocat(int(options.pop("jobs", 100_000)), seed=seed, **options)
    # the cleaning pbf replay applies to files: a model without requests gets its run times
    return clean(table)[0]


#: sweep settings of node failures -> pbf.Failures fields
_FAILURE_KEYS = {"failures": "path", "mtbf_hours": "mtbf_hours", "repair_hours": "repair_hours",
                 "failure_seed": "seed", "node_cores": "node_cores", "on_failure": "on_failure"}


def _config(params):
    from .config import Backfill
    from .replayer import ReplayConfig
    p = dict(params)
    p.pop("seed", None)
    p.pop("trace", None)
    bf = {}
    if "reservations" in p:
        r = p.pop("reservations")
        bf["reservations"] = None if r in ("unlimited", None) else int(r)
    for key in ("max_job_test", "order"):
        if key in p:
            bf[key] = p.pop(key)
    if p.pop("no_backfill", False):
        bf["enabled"] = False
    fail = {k: p.pop(k) for k in _FAILURE_KEYS if k in p}
    if fail.get("mtbf_hours") == 0 and "failures" not in fail:
        fail = {}                  # (an axis's baseline: no failures)
    if fail:
        from .outages import Failures
        p["failures"] = Failures(**{_FAILURE_KEYS[k]: v for k, v in fail.items()})
    preset = p.pop("preset", None)
    if preset is not None:
        cfg = ReplayConfig.from_preset(preset, **p)
        if bf:
            from dataclasses import replace
            cfg = replace(cfg, backfill=replace(cfg.backfill, **bf))
        return cfg
    return ReplayConfig(backfill=Backfill(**bf), **p)


def run_cell(trace, params, table=None):
    """One cell: replay the trace with the cell's settings; returns its metrics (a flat dict)."""
    from .replayer import replay
    t0 = time.perf_counter()
    table = table if table is not None else _trace_table(trace, params)
    res = replay(table, _config(params))
    s = res.summary
    m = {k: s["metrics"][k] for k in ("awt_h", "art_h", "bsld", "utilisation", "makespan_s", "max_queue",
                                     "mean_queue")}
    m.update(completed=s["jobs"]["completed"], rejected=s["jobs"]["rejected"], backfilled=s["jobs"]["backfilled"],
             passes=s["passes"]["count"], mean_depth=s["passes"]["mean_depth"],
             replay_s=s["wall_s"]["replay"], cell_s=time.perf_counter() - t0)
    if s.get("nodes"):
        n = s["nodes"]
        m.update(memory_held=n["utilisation"]["memory"], gpus_held=n["utilisation"]["gpus"],
                 heads_held_by_resources=n["heads_held_by_resources_share"], never_fit=n["never_fit"])
    if s["failures"] is not None:
        f = s["failures"]
        m.update(failures=f["events"]["fail"], requeued=f["requeued"], killed=f["killed"],
                 lost_core_hours=f["lost_core_hours"], down_core_hours=f["down_core_hours"])
    return m


def run_recorded(trace, params, table=None):
    """``(status, metrics, error)`` of one cell: its failure is recorded, not raised (both backends)."""
    try:
        return "ok", run_cell(trace, params, table), None
    except Exception as exc:  # noqa: BLE001 - a cell's failure is recorded, not raised
        return "error", None, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"


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
        import csv
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


def sweep(spec, out, *, jobs=None, backend="local", address=None, resume=False, progress=True):
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
    if backend == "local":
        _local(spec, todo, results, report, jobs)
    elif backend == "ray":
        from .sweeps_ray import run_ray
        run_ray(spec, todo, results, report, address)
    else:
        raise ConfigError(f"backend {backend!r}: expected local or ray")
    results.write_csv()
    return [results.latest[c["id"]] for c in cells if c["id"] in results.latest]


def _local(spec, todo, results, report, jobs):
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed
    if not todo:
        return
    jobs = int(jobs or os.cpu_count() or 1)
    if jobs < 1:
        raise ConfigError(f"jobs must be >= 1, got {jobs}")
    with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=mp.get_context("spawn")) as pool:
        started = {pool.submit(run_recorded, spec["trace"], c["params"]): (c, time.perf_counter()) for c in todo}
        for fut in as_completed(started):
            cell, t0 = started[fut]
            status, metrics, error = fut.result()
            results.add(cell, status, metrics, error, time.perf_counter() - t0)
            report(status)
