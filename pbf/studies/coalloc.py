"""The co-allocation experiment (ASA_X, Souza et al.): no co-allocation vs fixed fractions vs the
learners, on traces with their own CPU use (SDSC-SP2, CTC-SP2) and Beocat-like traces (drawn CPU
use), under low load (the trace as logged; Beocat: the generator's low-traffic trace) and high load
(arrivals 1.5 times as dense; Beocat: the high-traffic trace).

``pbf experiment coalloc [--trace DIR] [--beocat-jobs N] [--out DIR]``; docs/validation.md has the
table next to the seed's claims.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable

import numpy as np

from ..coalloc import CoAllocation
from ..errors import ConfigError
from ..replayer import ReplayConfig, replay
from ..workload import read_swf
from ..workload.beocat import BEOCAT_DEFAULT_JOBS, TRAFFIC_WINDOWS, generate_beocat
from ..workload.cleaning import clean
from .traces import shared_trace

__all__ = ["POLICIES", "coalloc_experiment", "format_coalloc", "write_figure"]

#: the compared policies: (label, settings)
POLICIES = (("none", CoAllocation("fixed", 0.0)), ("fixed 30%", CoAllocation("fixed", 0.3)),
            ("fixed 50%", CoAllocation("fixed", 0.5)), ("fixed 90%", CoAllocation("fixed", 0.9)),
            ("asax", CoAllocation("asax")), ("hedge", CoAllocation("hedge")), ("exp3", CoAllocation("exp3")))

_SWF = (("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz", 1), ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz", 1))


def _denser(table, factor):
    """The same jobs arriving ``factor`` times as densely (submit times from the first, divided)."""
    out = table.take(np.arange(len(table)))
    first = int(out.submit.min())
    out.columns["submit"] = first + ((out.submit - first) / factor).astype(np.int64)
    out.source = f"{table.source}, arrivals {factor}x as dense"
    return out


def _traces(trace_dir, beocat_jobs, skipped):
    for name, file, cores in _SWF:
        try:
            path = os.path.join(trace_dir, file) if trace_dir else shared_trace(file)
            if not os.path.exists(path):
                raise ConfigError(f"{path} not found")
        except ConfigError as exc:
            skipped.append(f"{name}: {exc}")
            continue
        t = read_swf(path)
        yield name, "low", t, cores
        yield name, "high", _denser(t, 1.5), cores
    for load in ("low", "high"):
        # the generator's traffic, for this many jobs (its windows are for 100,000)
        window = TRAFFIC_WINDOWS[load] * beocat_jobs // BEOCAT_DEFAULT_JOBS
        t = clean(generate_beocat(beocat_jobs, window=window, seed=0))[0]
        yield "Beocat-like", load, t, "beocat"


def coalloc_experiment(trace_dir: str | None = None, beocat_jobs: int = 100_000,
                       policies: tuple[tuple[str, CoAllocation], ...] = POLICIES,
                       progress: Callable[[dict], None] | None = None, keep_series: bool = True) -> dict:
    """Every trace x load x policy; returns rows of the summary figures (and per-run series of
    utilisation and queue length over time for the figure)."""
    rows, series, skipped = [], {}, []
    for name, load, table, cores in _traces(trace_dir, beocat_jobs, skipped):
        trigger = "interval" if name == "Beocat-like" else "event"
        units = 9128 if cores == "beocat" else None
        for label, co in policies:
            cpu = "synthetic" if cores == "beocat" else "trace"
            co = CoAllocation(**{**co.as_dict(), "node_cores": cores, "cpu": cpu})
            t0 = time.perf_counter()
            r = replay(table, ReplayConfig(units=units, trigger=trigger, coalloc=co, pass_records=False))
            c = r.summary["coalloc"]
            row = {"trace": name, "load": load, "policy": label, "jobs": c["jobs"],
                   "utilisation_allocated": c["utilisation_allocated"], "utilisation_useful": c["utilisation_useful"],
                   "queue_makespan_h": c["queue_makespan_s"] / 3600, "wait_h": c["wait_h"],
                   "response_h": c["response_h"], "primary_slowdown_mean": c["primary_slowdown_mean"],
                   "primary_slowdown_p95": c["primary_slowdown_p95"], "share_coallocated": c["share_coallocated"],
                   "overruns": c["overruns"], "regret": c["learner"].get("regret"),
                   "regret_bound": c["learner"].get("regret_bound"), "actions": c["learner"]["actions"],
                   "alpha": c["learner"].get("alpha"), "cpu_use_from_trace": c["cpu_use_from_trace"],
                   "units": r.summary["units"], "wall_s": time.perf_counter() - t0}
            rows.append(row)
            if keep_series:
                series[f"{name}|{load}|{label}"] = _series(r.jobs, r.summary["units"])
            if progress:
                progress(row)
    _relative(rows)
    return {"rows": rows, "series": series, "skipped": skipped}


def _relative(rows):
    base = {(r["trace"], r["load"]): r for r in rows if r["policy"] == "none"}
    for r in rows:
        b = base.get((r["trace"], r["load"]))
        if b:
            r["utilisation_change"] = r["utilisation_allocated"] / b["utilisation_allocated"] - 1
            r["makespan_change"] = r["queue_makespan_h"] / b["queue_makespan_h"] - 1
            r["wait_change"] = (r["wait_h"] / b["wait_h"] - 1) if b["wait_h"] else 0.0


def _series(jobs, units, bins=200):
    """Busy cores (primaries' allocation) and queue length, sampled at ``bins`` times."""
    done = jobs["start"] >= 0
    sub, st, en, k = jobs["submit"][done], jobs["start"][done], jobs["end"][done], jobs["units"][done]
    primary = jobs["how"][done] != 3
    t = np.linspace(sub.min(), en.max(), bins)
    busy = [(k[primary & (st <= x) & (en > x)]).sum() / units for x in t]
    queue = [int(((sub <= x) & (st > x)).sum()) for x in t]
    return {"t_days": ((t - t[0]) / 86400).tolist(), "busy": busy, "queue": queue}


def format_coalloc(result: dict) -> str:
    lines = ["trace         load  policy      util.alloc  useful  makespan(h)  wait(h)  resp(h)  "
             "prim.slow mean/p95  co-alloc  regret/bound"]
    for r in result["rows"]:
        reg = (f"{r['regret']:.1f}/{r['regret_bound']:.0f}" if r["regret"] is not None else "")
        lines.append(f"{r['trace']:<13} {r['load']:<5} {r['policy']:<10} {r['utilisation_allocated']:>9.3f}"
                     f" {r['utilisation_useful']:>7.3f} {r['queue_makespan_h']:>12,.0f} {r['wait_h']:>8.2f}"
                     f" {r['response_h']:>8.2f}   {r['primary_slowdown_mean']:.3f} / {r['primary_slowdown_p95']:.3f}"
                     f"   {r['share_coallocated']:>6.1%}  {reg}")
    for s in result["skipped"]:
        lines.append(f"skipped: {s}")
    return "\n".join(lines)


def write_figure(result: dict, out_dir: str | os.PathLike, trace: str | None = None, load: str = "high") -> str:
    """Busy cores and queue length over time, one line per policy, for one trace and load."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    trace = trace or result["rows"][0]["trace"]
    fig, (a, b) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    for key, s in result["series"].items():
        name, ld, label = key.split("|")
        if name != trace or ld != load:
            continue
        a.plot(s["t_days"], s["busy"], label=label, lw=1)
        b.plot(s["t_days"], s["queue"], label=label, lw=1)
    a.set_ylabel("cores held by primaries (share)")
    b.set_ylabel("queued jobs")
    b.set_xlabel("days")
    a.legend(fontsize=7, ncol=4)
    a.set_title(f"co-allocation on {trace}, {load} load")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"coalloc-{trace.lower()}-{load}.png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_result(result: dict, out_dir: str | os.PathLike) -> list:
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "coalloc.json")
    with open(path, "w") as fh:
        json.dump({k: v for k, v in result.items() if k != "series"}, fh, indent=1)
    files = [path]
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return files
    for trace in dict.fromkeys(r["trace"] for r in result["rows"]):
        for load in ("low", "high"):
            files.append(write_figure(result, out_dir, trace, load))
    return files
