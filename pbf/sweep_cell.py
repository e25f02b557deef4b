"""One cell of a sweep (:mod:`pbf.sweeps`): its trace, its replay settings, its replay and its metrics; a
pure function of its inputs, which both backends (local processes and Ray, :mod:`pbf.sweeps_ray`) run."""
from __future__ import annotations

import functools
import json
import time
import traceback
from dataclasses import replace

from .config import Backfill
from .outages import Failures
from .replayer import ReplayConfig, replay
from .workload import JobTable, read_swf
from .workload.beocat import generate_beocat
from .workload.cleaning import clean
from .workload.lublin import generate_lublin

__all__ = ["trace_table", "cell_config", "run_cell", "run_recorded"]


def trace_table(trace: dict, params: dict) -> JobTable:
    """The job table of a cell: its trace file, or its generated trace (cleaned as ``pbf replay`` cleans
    files); the last few are kept, as the cells of one worker process often share a trace."""
    key = json.dumps({"trace": trace, "path": params.get("trace"), "seed": params.get("seed")}, sort_keys=True)
    return _cached_table(key)


@functools.lru_cache(maxsize=4)
def _cached_table(key):
    spec = json.loads(key)
    trace, params = spec["trace"], {k: v for k, v in (("trace", spec["path"]), ("seed", spec["seed"])) if v is not None}
    return _make_table(trace, params)


def _make_table(trace, params):
    if "trace" in params:
        return read_swf(params["trace"])
    if "path" in trace:
        return read_swf(trace["path"])
    options = {k: v for k, v in trace.items() if k != "gen"}
    seed = int(params.get("seed", options.pop("seed", 0)))
    if trace["gen"] == "lublin":
        table = generate_lublin(int(options.pop("jobs", 10_000)), options.pop("preset", "lublin-1"), seed=seed,
                                **options)
    else:
        table = generate_beocat(int(options.pop("jobs", 100_000)), seed=seed, **options)
    # the cleaning pbf replay applies to files: a model without requests gets its run times
    return clean(table)[0]


#: sweep settings of node failures -> pbf.Failures fields
_FAILURE_KEYS = {"failures": "path", "mtbf_hours": "mtbf_hours", "repair_hours": "repair_hours",
                 "failure_seed": "seed", "node_cores": "node_cores", "on_failure": "on_failure"}


def cell_config(params: dict) -> ReplayConfig:
    """The replay settings of a cell's parameters (a preset, backfill, failure and replay settings)."""
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
        p["failures"] = Failures(**{_FAILURE_KEYS[k]: v for k, v in fail.items()})
    preset = p.pop("preset", None)
    if preset is not None:
        cfg = ReplayConfig.from_preset(preset, **p)
        if bf:
            cfg = replace(cfg, backfill=replace(cfg.backfill, **bf))
        return cfg
    return ReplayConfig(backfill=Backfill(**bf), **p)


def run_cell(trace: dict, params: dict, table: JobTable | None = None) -> dict:
    """One cell: replay the trace with the cell's settings; returns its metrics (a flat dict)."""
    t0 = time.perf_counter()
    table = table if table is not None else trace_table(trace, params)
    res = replay(table, cell_config(params))
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


def run_recorded(trace: dict, params: dict,
                 table: JobTable | None = None) -> tuple[str, dict | None, str | None]:
    """``(status, metrics, error)`` of one cell: its failure is recorded, not raised (both backends)."""
    try:
        return "ok", run_cell(trace, params, table), None
    except Exception as exc:  # noqa: BLE001 - a cell's failure is recorded, not raised
        return "error", None, f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
