"""Validation of the scoring plugins against published tables (``pbf experiment ...``).

* :func:`runtime_prediction`: Gaussier et al. (SC'15), Tables 1, 6 and 7 on SDSC-SP2 (pyss
  cleaning, FCFS, EASY, tau = 10 s): EASY, EASY-clairvoyant, EASY-SJBF-clairvoyant, EASY++, the
  selected triple, and the range over the 20 E-Loss variants x 3 corrections with queue and SJBF
  order (Table 6's "EASY with learning techniques").
* :func:`priority_functions`: Zhang et al. (RLScheduler, SC'20), Table V: FCFS, WFP3, UNICEP, SJF and
  F1 with and without backfilling on 10 sequences of 1,024 consecutive jobs sampled from each trace,
  average bounded slowdown (tau = 10 s) averaged over the sequences.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

from ..config import Backfill
from ..errors import ConfigError
from ..plugins.predictors import Regression
from ..plugins.regression import BRANCHES, WEIGHTS
from ..plugins.views import JobsView
from ..replayer import ReplayConfig, replay
from ..workload.cleaning import Cleaning
from ..workload.swf import read_swf
from .traces import shared_trace, shared_trace_dir

__all__ = ["runtime_prediction", "priority_functions", "format_runtime_prediction",
           "format_priority_functions", "GAUSSIER_SDSC_SP2", "RLSCHEDULER_TABLE_V", "default_trace_dir"]

#: Gaussier et al. 2015 on SDSC-SP2: Table 1 (EASY, EASY-clairvoyant), Table 6 (clairvoyant SJBF,
#: EASY++, learning ranges), Table 7 (the cross-validated triple).
GAUSSIER_SDSC_SP2 = {"easy": 87.9, "easy-clairvoyant": 70.5, "easy-sjbf-clairvoyant": 56.8, "easy++": 79.4,
                     "gaussier": 75.0, "learning-queue": (70.9, 102.3), "learning-sjbf": (69.7, 194.8)}

#: RLScheduler (Zhang et al. 2020) Table V: average bounded slowdown, without and with backfilling.
RLSCHEDULER_TABLE_V = {
    "lublin-1": {False: {"fcfs": 7273.8, "wfp3": 19754, "unicep": 22275, "sjf": 277.35, "f1": 258.37},
                 True: {"fcfs": 235.82, "wfp3": 133.87, "unicep": 307.23, "sjf": 73.31, "f1": 75.07}},
    "sdsc-sp2": {False: {"fcfs": 1727.5, "wfp3": 3000.9, "unicep": 1848.5, "sjf": 2680.6, "f1": 1232.1},
                 True: {"fcfs": 1595.1, "wfp3": 1083.1, "unicep": 548.01, "sjf": 2167.8, "f1": 1098.2}},
    "hpc2n": {False: {"fcfs": 297.18, "wfp3": 426.99, "unicep": 609.77, "sjf": 157.71, "f1": 118.01},
              True: {"fcfs": 127.38, "wfp3": 97.39, "unicep": 175.12, "sjf": 122.04, "f1": 71.95}},
    "lublin-2": {False: {"fcfs": 7842.5, "wfp3": 9523.2, "unicep": 11265, "sjf": 787.89, "f1": 698.34},
                 True: {"fcfs": 247.61, "wfp3": 318.35, "unicep": 379.59, "sjf": 91.99, "f1": 148.25}},
}
RLS_TRACES = {"lublin-1": "rlsched_lublin_256.swf.gz", "lublin-2": "rlsched_lublin_256_new2.swf.gz",
              "sdsc-sp2": "SDSC-SP2-1998-4.2-cln.swf.gz", "hpc2n": "HPC2N-2002-2.2-cln.swf.gz"}
RLS_PRIORITIES = ("fcfs", "wfp3", "unicep", "sjf", "f1")


def default_trace_dir() -> str:
    """The folder of the real logs (:func:`pbf.studies.traces.shared_trace_dir`), as a string."""
    folder = shared_trace_dir()
    return str(folder) if folder is not None else os.path.join("..", "shared", "traces")


def _trace(path):
    return str(shared_trace(path))


def runtime_prediction(trace: str, progress: Callable[[dict], None] | None = None, variants: bool = True) -> dict:
    """Gaussier et al.'s SDSC-SP2 figures; returns a JSON-ready dict."""
    table = read_swf(_trace(trace))
    rows = []

    def run(label, cfg):
        t0 = time.perf_counter()
        r = replay(table, cfg)
        rows.append({"name": label, "config": r.summary["config"], "bsld": r.metrics.bsld,
                     "awt_h": r.metrics.awt / 3600, "mae_s": r.summary["prediction"]["mae_s"],
                     "under_predicted": r.summary["prediction"]["under_predicted"],
                     "corrections": r.summary["prediction"]["corrections"], "wall_s": time.perf_counter() - t0})
        if progress:
            progress(rows[-1])
        return rows[-1]

    for name in ("easy", "easy-clairvoyant", "easy-sjbf-clairvoyant", "easy++", "gaussier"):
        run(name, ReplayConfig.from_preset(name))
    run("gaussier, requested correction (the C-V triple Gaussier et al. report for SDSC-SP2)",
        ReplayConfig.from_preset("gaussier", correction="requested"))
    run("gaussier, under-prediction branch x100 (predictsim's leftparam)",
        ReplayConfig.from_preset("gaussier", predictor=Regression(under_slope=100.0)))
    learning = {}
    if variants:
        for order in ("queue", "sjbf"):
            values = []
            for over in BRANCHES:
                for under in BRANCHES:
                    for weight in WEIGHTS:
                        for corr in ("incremental", "requested", "recursive-doubling"):
                            cfg = ReplayConfig(predictor=Regression(over=over, under=under, weight=weight),
                                               correction=corr, backfill=Backfill(order=order))
                            t0 = time.perf_counter()
                            values.append({"over": over, "under": under, "weight": weight, "correction": corr,
                                           "bsld": replay(table, cfg).metrics.bsld,
                                           "wall_s": time.perf_counter() - t0})
            best = min(values, key=lambda v: v["bsld"])
            worst = max(values, key=lambda v: v["bsld"])
            learning[order] = {"best": best, "worst": worst, "runs": len(values),
                               "wall_s": sum(v["wall_s"] for v in values)}
            if progress:
                progress({"name": f"20 losses x 3 corrections, order {order}", "bsld": best["bsld"],
                          "wall_s": learning[order]["wall_s"]})
    return {"experiment": "runtime-prediction", "trace": trace, "jobs": len(table), "rows": rows,
            "learning": learning, "paper": GAUSSIER_SDSC_SP2}


def format_runtime_prediction(result: dict) -> str:
    """The tables of :func:`runtime_prediction`'s result as text."""
    p = result["paper"]
    out = [f"Gaussier et al. (SC'15) on {os.path.basename(result['trace'])} ({result['jobs']:,} jobs after pyss "
           f"cleaning), FCFS + EASY, AVEbsld with tau = 10 s",
           f"{'heuristic':<40} {'pbf':>8} {'paper':>8} {'MAE s':>8} {'under':>6} {'corr.':>8}"]
    for r in result["rows"]:
        key = r["name"].split(",")[0]
        paper = p.get(key) if "," not in r["name"] else None
        out.append(f"{r['name'][:40]:<40} {r['bsld']:8.2f} {paper if paper is not None else '-':>8} "
                   f"{r['mae_s']:8.0f} {r['under_predicted']:6.1%} {r['corrections']:8,}")
    for order, lab in (("queue", "learning-queue"), ("sjbf", "learning-sjbf")):
        if order in result["learning"]:
            L = result["learning"][order]
            b, w = L["best"], L["worst"]
            lo, hi = p[lab]
            out.append(f"{'E-Loss x corrections, ' + order + ' (best-worst)':<40} {b['bsld']:.1f}-{w['bsld']:.1f}"
                       f"   paper {lo}-{hi}   best: over {b['over']}, under {b['under']}, {b['weight']}, "
                       f"{b['correction']}")
    return "\n".join(out)


def _rls_table(path):
    """A trace loaded the way RLScheduler loads it: units = max(requested, allocated); a missing
    requested time becomes the run time; a negative run time becomes 10 s; zero-length jobs dropped."""
    t = read_swf(_trace(path), Cleaning(drop_nonpositive_runtime=False, clip_runtime_to_request=False))
    req = t.columns["req_time"]
    run = t.columns["run"]
    t.columns["req_time"] = np.where(req == -1, run, req)
    t.columns["run"] = np.where(run < 0, 10, run)
    return t.take(t.columns["run"] > 0)


class RLSchedulerPriority:
    """RLScheduler's scheduling loop as a Python priority plugin (for comparison only).

    RLScheduler picks the job with the lowest score and, when it does not fit, moves time forward
    until it does: that job stays first even if a better-scored job arrives meanwhile (the head is
    pinned). Its WFP3 and UNICEP use ``w = scheduled_time - submit`` with ``scheduled_time = -1``
    for a queued job, i.e. ``w = -1 - s``. This plugin reproduces both; pbf's built-ins instead
    re-rank the whole queue at every pass and use the real wait."""

    def __init__(self, name: str):
        self.name = name
        self.head = None

    def _score(self, r, n, s):
        w = -1.0 - s
        if self.name == "fcfs":
            return s
        if self.name == "sjf":
            return r
        if self.name == "wfp3":
            return -np.power(w / r, 3) * n
        if self.name == "unicep":
            return -(w + 1e-15) / (np.log2(n + 1e-15) * r)
        return np.log10(r) * n + 870 * np.log10(np.where(s > 0, s, 0.1))

    def keys(self, jobs: JobsView, now: int) -> np.ndarray:
        r = jobs.estimate.astype(np.float64)
        n = jobs.units.astype(np.float64)
        s = jobs.submit.astype(np.float64)
        with np.errstate(all="ignore"):     # a job with no requested time is rejected anyway
            keys = np.nan_to_num(np.asarray(self._score(r, n, s), dtype=np.float64), nan=np.inf)
        pinned = np.flatnonzero(jobs.index == self.head)
        if len(pinned):
            keys[pinned] = -np.inf
        first = np.lexsort((jobs.index, jobs.submit, keys))[0] if len(keys) else None
        self.head = int(jobs.index[first]) if first is not None else None
        return keys


def priority_functions(trace_dir: str, sequences: int = 10, length: int = 1024,
                       traces: tuple[str, ...] = ("lublin-1", "lublin-2"),
                       progress: Callable[[dict], None] | None = None, rls_compat: bool = True) -> dict:
    """RLScheduler's Table V on the given traces; returns a JSON-ready dict. With ``rls_compat``
    each cell is also run with :class:`RLSchedulerPriority` (pinned head, RLScheduler's wait)."""
    rows = []
    for name in traces:
        table = _rls_table(os.path.join(trace_dir, RLS_TRACES[name]))
        units = table.header.cluster_units() or int(table.units.max())
        n = len(table)
        if n < 2 * length + 2:
            raise ConfigError(f"{name}: {n} jobs, too few for sequences of {length}")
        starts = [int(np.random.default_rng(seed).integers(length, n - length - 1)) for seed in range(sequences)]
        for backfilling in (False, True):
            for prio in RLS_PRIORITIES:
                t0 = time.perf_counter()
                values, compat = [], []
                bf = Backfill(reservations=1, enabled=backfilling)
                for s in starts:
                    seq = table.take(np.arange(s, s + length))
                    values.append(replay(seq, ReplayConfig(units=units, priority=prio, backfill=bf)).metrics.bsld)
                    if rls_compat:
                        cfg = ReplayConfig(units=units, priority=RLSchedulerPriority(prio), backfill=bf)
                        compat.append(replay(seq, cfg).metrics.bsld)
                rows.append({"trace": name, "backfill": backfilling, "priority": prio,
                             "bsld": float(np.mean(values)), "per_sequence": values,
                             "bsld_rls_compat": float(np.mean(compat)) if compat else None,
                             "paper": RLSCHEDULER_TABLE_V[name][backfilling][prio],
                             "wall_s": time.perf_counter() - t0})
                if progress:
                    progress(rows[-1])
    return {"experiment": "priority-functions", "trace_dir": trace_dir, "sequences": sequences,
            "length": length, "rows": rows}


def format_priority_functions(result: dict) -> str:
    """The table of :func:`priority_functions`' result as text."""
    compat = any(r["bsld_rls_compat"] is not None for r in result["rows"])
    out = [f"RLScheduler (Zhang et al. SC'20) Table V: average bounded slowdown (tau 10 s), mean of "
           f"{result['sequences']} sequences of {result['length']:,} jobs; "
           + ("pbf / pbf with RLScheduler's loop (pinned head, w = -1 - s) / paper" if compat else "pbf / paper")]
    traces = list(dict.fromkeys(r["trace"] for r in result["rows"]))
    width = 28 if compat else 20
    for backfilling in (False, True):
        out.append(f"\n{'with' if backfilling else 'without'} backfilling")
        out.append(f"{'trace':<10}" + "".join(f"{p:>{width}}" for p in RLS_PRIORITIES))
        for t in traces:
            cells = {r["priority"]: r for r in result["rows"] if r["trace"] == t and r["backfill"] == backfilling}
            line = f"{t:<10}"
            for p in RLS_PRIORITIES:
                c = cells[p]
                mid = f"/{c['bsld_rls_compat']:>7.0f} " if compat else ""
                line += f"{c['bsld']:>{width - 18 if compat else 10}.1f} {mid}/{c['paper']:>8.1f}"
            out.append(line)
    return "\n".join(out)
