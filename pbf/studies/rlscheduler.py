"""RLScheduler's evaluation (Zhang et al., SC'20; README table): heuristics and learned job
selection on its test windows, beside the published means.

The episodes are RLScheduler's own rules (``compat="rlscheduler"``: its loading, its lazy
arrivals, its WFP3/UNICEP wait and its backfilling); the windows are its seed-1 windows (10 x 1,024
jobs within the first 10,000). See ``docs/validation.md``.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable

import numpy as np

from ..errors import ConfigError
from ..rl.evaluate import (
    RLS_TEST_STARTS,
    RLS_TRACES,
    RLSCHEDULER_TABLE,
    evaluate_windows,
    held_apart_ranges,
    held_out_starts,
    paired_difference,
)
from ..rl.kernel import KernelPolicy, shipped_models
from ..rl.model_windows import HELD_OUT_WINDOWS, held_out_sample
from ..rl.trace import RLTrace
from .traces import shared_trace

__all__ = ["rlscheduler_table", "format_rlscheduler", "HEURISTIC_COLUMNS", "shipped_model_for"]

HEURISTIC_COLUMNS = ("fcfs", "wfp3", "unicep", "sjf", "f1")


def shipped_model_for(trace: str, backfill: bool) -> str | None:
    """The name of the shipped model for a trace and backfilling flag, or None."""
    name = f"{trace}{'-backfill' if backfill else ''}"
    return name if name in shipped_models() else None


def _trace_path(trace_dir, name):
    if name not in RLS_TRACES:
        raise ConfigError(f"unknown trace {name!r}; known: {', '.join(RLS_TRACES)}")
    path = os.path.join(trace_dir, RLS_TRACES[name]) if trace_dir else RLS_TRACES[name]
    return str(shared_trace(path))


def rlscheduler_table(trace_dir: str | None = None, traces: tuple[str, ...] = ("lublin-1", "sdsc-sp2"),
                      backfill: tuple[bool, ...] = (False, True), model: KernelPolicy | str | None = None,
                      samples: int = 0, seed: int = 0, progress: Callable[[dict], None] | None = None,
                      held_out: bool = False, held_out_windows: int = HELD_OUT_WINDOWS) -> dict:
    """Mean bounded slowdown of each rule on each trace's test windows, with the paper's figure.

    ``model``: a :class:`KernelPolicy` (or path / shipped name) evaluated on every row; by default
    each row uses the shipped model for its trace and backfilling flag, if there is one.
    ``held_out``: also evaluate on 10 windows drawn (seed 1) after the first 10,000 jobs, which no
    shipped model was trained on (traces of more than 11,025 jobs: SDSC-SP2 and HPC2N); on the
    10,000-job Lublin traces, on 10 windows of 1,024 jobs of a trace generated (seed 1) from the
    trace's workload model (:func:`pbf.rl.model_windows.held_out_sample`; the row's
    ``windows_source`` says how to make it). ``held_out_windows``: how many held-out windows (the
    first 10 of a longer draw from the trace are the 10 above; a longer model sample is another
    trace). Each row with a learned model has ``rl_vs_best``: the heuristic with the lowest mean on
    those windows, and the model's mean per-window difference from it with its standard error
    (:func:`pbf.rl.evaluate.paired_difference`: windows that share jobs count as correlated).
    """
    if held_out_windows < 1:
        raise ConfigError(f"held_out_windows: expected a whole number >= 1, got {held_out_windows}")
    rows = []
    given = None
    if model is not None:
        given = model if isinstance(model, KernelPolicy) else KernelPolicy.load(model)
    for name in traces:
        path = _trace_path(trace_dir, name)
        for bf in backfill:
            t0 = time.perf_counter()
            rules = {h: h for h in HEURISTIC_COLUMNS}
            learned = given
            if learned is None and shipped_model_for(name, bf):
                learned = KernelPolicy.load(shipped_model_for(name, bf))
            if learned is not None:
                rules["rl"] = learned
            windows = {"test": (path, RLS_TEST_STARTS, path)}
            if held_out:
                windows.update(_held_out_windows(name, path, held_out_windows))
            for label, (trace, starts, source) in windows.items():
                values = evaluate_windows(trace, rules, starts=starts, backfill=bf, samples=samples, seed=seed)
                row = {"trace": name, "backfill": bf, "windows": label, "starts": list(starts),
                       "windows_source": source,
                       "model": learned.name if learned is not None else None,
                       "pbf": {k: float(np.mean(v)) for k, v in values.items()},
                       "per_window": {k: [float(x) for x in v] for k, v in values.items()},
                       "paper": RLSCHEDULER_TABLE[name][bf] if label == "test" else None,
                       "wall_s": time.perf_counter() - t0}
                if "rl" in values:
                    row["rl_vs_best"] = _vs_best(values, starts)
                if label == "held-out" and learned is not None and learned.meta.get("held_apart"):
                    row["windows_trained_on"] = _windows_trained_on(learned.meta, trace, starts)
                rows.append(row)
                if progress:
                    progress(row)
    return {"experiment": "rlscheduler", "metric": "bsld", "window": 1024, "rows": rows}


def _vs_best(values, starts):
    # the learned model against the heuristic with the lowest mean on the same windows: the mean
    # per-window difference and its standard error (how far the lead or lag stands above the noise)
    best = min(HEURISTIC_COLUMNS, key=lambda h: float(np.mean(values[h])))
    d, se = paired_difference(values["rl"], values[best], starts)
    return {"heuristic": best, "difference": d, "se": se}


def _windows_trained_on(meta, trace, starts):
    # a model trained with --hold-apart kept only its 10 held-out and N validation windows out of
    # training: how many of these windows share a job with what it may have trained on (none on
    # another trace, such as the workload model's windows)
    t = trace if isinstance(trace, RLTrace) else RLTrace.load(trace, compat=True)
    if t.name != meta.get("trace"):
        return 0
    held_apart, n = meta["held_apart"], len(t)
    kept = np.zeros(n, dtype=bool)
    for a, b in held_apart_ranges(n, int(held_apart["validation_windows"]), window=int(held_apart["window"])):
        kept[a:b] = True
    return sum(1 for s in starts if not kept[s:s + 1024].all())


def _held_out_windows(name, path, count=HELD_OUT_WINDOWS):
    reference = RLTrace.load(path, compat=True)
    sample = held_out_sample(name, reference, count)
    if sample is not None:
        return {"held-out": (sample.trace, sample.starts, sample.source)}
    starts = held_out_starts(len(reference), count=count)
    return {} if starts is None else {"held-out": (reference, starts, path)}


def format_rlscheduler(result: dict) -> str:
    """The table of :func:`rlscheduler_table`'s result as text."""
    cols = list(HEURISTIC_COLUMNS) + ["rl"]
    out = ["RLScheduler (Zhang et al. SC'20): mean bounded slowdown (tau 10 s) over windows of 1,024 jobs (10 test),",
           "RLScheduler's rules; each cell pbf / paper (held-out rows: pbf only)", ""]
    header = f"{'trace':<10}{'backfill':<9}{'windows':<9}" + "".join(f"{c:>23}" for c in cols)
    out.append(header)
    for row in result["rows"]:
        cells = []
        for c in cols:
            mine = row["pbf"].get(c)
            paper = (row["paper"] or {}).get(c)
            text = "-" if mine is None else f"{mine:,.2f}"
            if paper is not None:
                text += f" / {paper:,.2f}"
            cells.append(f"{text:>23}")
        out.append(f"{row['trace']:<10}{'yes' if row['backfill'] else 'no':<9}{row['windows']:<9}" + "".join(cells))
        if row["model"]:
            vs = row.get("rl_vs_best")
            out.append(f"{'':<28}rl = {row['model']}"
                       + (f"; sampled {row['pbf']['rl~sampled']:,.2f}" if "rl~sampled" in row["pbf"] else "")
                       + (f"; rl - {vs['heuristic']} {vs['difference']:+,.2f} (standard error "
                          + (f"{vs['se']:,.2f}" if vs["se"] is not None else "-")
                          + f", {len(row['starts'])} windows)" if vs else ""))
        if row.get("windows_trained_on"):
            out.append(f"{'':<28}{row['windows_trained_on']} of these windows share jobs with what {row['model']} "
                       f"trained on (it kept only 10 held-out windows apart)")
        if row["windows"] == "held-out" and row.get("windows_source", "").startswith("pbf gen"):
            out.append(f"{'':<28}windows from the workload model, not the trace: {row['windows_source']}")
    return "\n".join(out)
