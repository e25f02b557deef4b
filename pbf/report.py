"""``pbf report RUN_DIR``: figures and one self-contained ``report.html`` from a replay's output
folder (``summary.json``, ``jobs.csv`` and, when passes were recorded, ``passes.csv``), or from a
sweep folder (``results.csv``, ``spec.json``: each metric against each parameter, heatmaps of two).

Figures (PNG, matplotlib: ``pip install "pbf[plot]"``): utilisation and queue length over time;
the wait-time CDF by job size class; mean bounded slowdown by size x run-time class (classes without
jobs left out); backfill depth and pass wall time over time, full and quick passes apart; and, over
the passes whose tests were split over threads (or over modelled workers on the model and slurm-sim
clocks), the tests of the busiest and the idlest worker. ``report.html`` holds the figures
(embedded) and the summary tables in words with units (:mod:`pbf.report_labels`), with only the
settings that applied, so it can be mailed or archived alone.
"""
from __future__ import annotations

import base64
import csv
import html
import json
import os
from typing import TYPE_CHECKING

import numpy as np

from .errors import ConfigError
from .report_labels import label as _label
from .report_labels import pass_rows, settings_that_apply

if TYPE_CHECKING:
    from typing import Any

__all__ = ["write_report", "write_sweep_report", "write_experiment_report", "report_folder", "load_run",
           "SIZE_CLASSES", "RUN_CLASSES", "threaded_passes"]

DAY = 86400.0
#: job size classes, as shares of the cluster's units (upper bounds; the first class is one unit)
SIZE_CLASSES = (("1 unit", None), ("2 units to 1/64 of the cluster", 1 / 64), ("up to 1/8 of the cluster", 1 / 8),
                ("up to 1/2 of the cluster", 1 / 2), ("over 1/2 of the cluster", 1.0))
#: run-time classes (upper bounds in seconds)
RUN_CLASSES = (("< 10 min", 600), ("10 min - 1 h", 3600), ("1 - 10 h", 36000), (">= 10 h", float("inf")))


def _read_csv(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise ConfigError(f"{path}: empty file (expected a header line)")
    head, body = rows[0], rows[1:]
    cols = {}
    for i, name in enumerate(head):
        values = [r[i] if i < len(r) else "" for r in body]
        try:
            cols[name] = np.array([float(v) if v != "" else np.nan for v in values])
        except ValueError:
            cols[name] = np.array(values, dtype=object)
    return cols


def load_run(run_dir: str | os.PathLike[str]
             ) -> tuple[dict[str, Any], dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """``(summary, jobs, passes)`` of a replay output folder (``passes`` is None without passes.csv)."""
    run_dir = os.fspath(run_dir)
    need = [os.path.join(run_dir, f) for f in ("summary.json", "jobs.csv")]
    missing = [p for p in need if not os.path.exists(p)]
    if missing:
        raise ConfigError(f"{run_dir}: not a replay output folder ({', '.join(os.path.basename(m) for m in missing)} "
                          f"missing; write one with pbf replay TRACE --out DIR)")
    with open(need[0]) as fh:
        try:
            summary = json.load(fh)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{need[0]}: not JSON ({exc})") from None
    jobs = _read_csv(need[1])
    for col in ("submit", "start", "end", "wait", "run", "units", "state"):
        if col not in jobs:
            raise ConfigError(f"{need[1]}: column {col!r} missing")
    passes_path = os.path.join(run_dir, "passes.csv")
    passes = _read_csv(passes_path) if os.path.exists(passes_path) else None
    return summary, jobs, passes


def _size_class(units, total):
    out = np.zeros(len(units), dtype=int)
    for k, (_, share) in enumerate(SIZE_CLASSES):
        if share is None:
            continue
        lo = 1 if k == 1 else SIZE_CLASSES[k - 1][1] * total
        out[(units > lo) & (units <= share * total + 1e-9)] = k
    out[units <= 1] = 0
    return out


def _run_class(run):
    return np.searchsorted(np.array([c[1] for c in RUN_CLASSES[:-1]]), run, side="right")


def _step_series(times, deltas):
    order = np.argsort(times, kind="stable")
    t, level = times[order], np.cumsum(deltas[order])
    last = np.r_[t[1:] != t[:-1], True]       # the level after all changes of an instant
    return t[last], level[last]


def _fig_utilisation(plt, jobs, total, t0):
    done = jobs["state"] == "completed"
    start, end, units = jobs["start"][done], jobs["end"][done], jobs["units"][done]
    t_busy, busy = _step_series(np.r_[start, end], np.r_[units, -units])
    sub = jobs["submit"]
    started = ~np.isnan(jobs["start"]) & (jobs["start"] >= 0)
    t_q, queue = _step_series(np.r_[sub, jobs["start"][started]], np.r_[np.ones(len(sub)), -np.ones(started.sum())])
    fig, ax = plt.subplots(2, 1, figsize=(10, 5.5), sharex=True)
    ax[0].step((t_busy - t0) / DAY, 100.0 * busy / total, where="post", lw=0.5, alpha=0.5, label="at each event")
    # the mean over 200 equal spans (sampled at 20 instants each)
    grid = np.linspace(t_busy[0], t_busy[-1], 4001)
    level = busy[np.clip(np.searchsorted(t_busy, grid, side="right") - 1, 0, len(busy) - 1)]
    mean = level[:-1].reshape(200, 20).mean(axis=1)
    ax[0].plot((grid[10:-1:20] - t0) / DAY, 100.0 * mean / total, lw=1.4, color="black", label="mean over spans of "
               f"{(grid[-1] - grid[0]) / 200 / DAY:.1f} days")
    ax[0].legend(fontsize=8, loc="lower right")
    ax[0].set_ylabel("units busy (%)")
    ax[0].set_ylim(0, 105)
    ax[0].set_title("Utilisation and queue over time")
    ax[1].step((t_q - t0) / DAY, queue, where="post", lw=0.7, color="tab:orange")
    ax[1].set_ylabel("jobs queued")
    ax[1].set_xlabel("time since the first submission (days)")
    fig.tight_layout()
    return fig


def _fig_wait_cdf(plt, jobs, total):
    done = jobs["state"] == "completed"
    wait_h = jobs["wait"][done] / 3600.0
    cls = _size_class(jobs["units"][done], total)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for k, (name, _) in enumerate(SIZE_CLASSES):
        w = np.sort(wait_h[cls == k])
        if len(w) == 0:
            continue
        ax.step(np.maximum(w, 1 / 3600), np.arange(1, len(w) + 1) / len(w), where="post",
                label=f"{name} ({len(w):,} jobs)")
    ax.set_xscale("log")
    ax.set_xlabel("wait (hours; waits under 1 s drawn at 1 s)")
    ax.set_ylabel("share of jobs waiting at most this long")
    ax.set_ylim(0, 1.02)
    ax.set_title("Wait-time CDF by job size")
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def _fig_bsld(plt, jobs, total, tau):
    done = jobs["state"] == "completed"
    run, wait = jobs["run"][done], jobs["wait"][done]
    bsld = np.maximum((wait + run) / np.maximum(run, tau), 1.0)
    sc, rc = _size_class(jobs["units"][done], total), _run_class(run)
    grid = np.full((len(SIZE_CLASSES), len(RUN_CLASSES)), np.nan)
    count = np.zeros(grid.shape, dtype=int)
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            sel = (sc == i) & (rc == j)
            count[i, j] = int(sel.sum())
            if count[i, j]:
                grid[i, j] = float(bsld[sel].mean())
    rows = [i for i in range(grid.shape[0]) if count[i].any()]       # no empty rows or columns
    cols = [k for k in range(grid.shape[1]) if count[:, k].any()]
    grid, count = grid[np.ix_(rows, cols)], count[np.ix_(rows, cols)]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.75 * len(rows)))
    im = ax.imshow(np.log10(grid), cmap="viridis", aspect="auto")
    for i in range(grid.shape[0]):
        for j in range(grid.shape[1]):
            if count[i, j]:
                ax.text(j, i, f"{grid[i, j]:,.1f}\n({count[i, j]:,} jobs)", ha="center", va="center", fontsize=7,
                        color="white" if np.log10(grid[i, j]) < np.nanmax(np.log10(grid)) * 0.6 else "black")
    ax.set_xticks(range(len(cols)), [RUN_CLASSES[k][0] for k in cols])
    ax.set_yticks(range(len(rows)), [SIZE_CLASSES[i][0] for i in rows])
    ax.set_xlabel("run time")
    ax.set_ylabel("job size")
    ax.set_title(f"Mean bounded slowdown (bound {tau:g} s) by job size and run time\n"
                 f"(size or run-time classes with no completed job left out)", fontsize=10)
    fig.colorbar(im, ax=ax, label="log10 of the mean bounded slowdown")
    fig.tight_layout()
    return fig


def _binned(t, values, bins):
    edges = np.linspace(t.min(), t.max() + 1, bins + 1)
    idx = np.clip(np.searchsorted(edges, t, side="right") - 1, 0, bins - 1)
    mids, med, top = [], [], []
    for b in range(bins):
        v = values[idx == b]
        if len(v):
            mids.append((edges[b] + edges[b + 1]) / 2)
            med.append(np.median(v))
            top.append(v.max())
    return np.array(mids), np.array(med), np.array(top)


_KINDS = (("full", "full passes (backfill)"), ("quick", "quick passes (main scheduler)"))


def _fig_passes(plt, passes, t0):
    t = passes["time"]
    kinds = passes["kind"] if "kind" in passes else np.full(len(t), "full", dtype=object)
    present = [(k, label) for k, label in _KINDS if (kinds == k).any()]
    fig, ax = plt.subplots(2, 1, figsize=(10, 5.8), sharex=True)
    counts = ", ".join(f"{int((kinds == k).sum()):,} {k}" for k, _ in present)
    ax[0].set_title(f"Backfill passes over time ({counts}; medians and maxima over 200 time bins)", fontsize=10)
    for k, label in present:
        sel = kinds == k
        x, med, top = _binned(t[sel], passes["depth"][sel], 200)
        line = ax[0].plot((x - t0) / DAY, top, lw=0.7, alpha=0.6, label=f"{label}: most in a bin")[0]
        ax[0].plot((x - t0) / DAY, med, lw=1.1, color=line.get_color(), ls="--", label=f"{label}: median")
        x, med, top = _binned(t[sel], np.maximum(passes["wall_us"][sel], 0.01), 200)
        line = ax[1].plot((x - t0) / DAY, top, lw=0.7, alpha=0.6, label=f"{label}: slowest in a bin")[0]
        ax[1].plot((x - t0) / DAY, med, lw=1.1, color=line.get_color(), ls="--", label=f"{label}: median")
    ax[0].set_ylabel("jobs tested per pass")
    ax[0].legend(fontsize=7)
    ax[1].set_yscale("log")
    ax[1].set_ylabel("pass wall time (µs)")
    ax[1].set_xlabel("time since the first submission (days)")
    ax[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


def threaded_passes(passes: dict[str, np.ndarray], clock: str) -> np.ndarray:
    """Which recorded passes had their jobs tested by more than one worker: on the free and wall
    clocks, the full passes whose tests were split over threads (a pass on one thread records its
    depth as both the busiest and the idlest worker's tests); on the model and slurm-sim clocks, every
    full pass (its workers are modelled)."""
    if "tests_max_worker" not in passes:
        return np.zeros(len(passes.get("time", [])), dtype=bool)
    full = passes["kind"] == "full" if "kind" in passes else np.ones(len(passes["time"]), dtype=bool)
    if clock in ("model", "slurm-sim"):
        return full & (passes["depth"] > 0)
    hi, lo, depth = passes["tests_max_worker"], passes["tests_min_worker"], passes["depth"]
    return full & ((hi != depth) | (lo != depth))


def _fig_workers(plt, passes, t0, workers, clock):
    if workers <= 1 or "tests_min_worker" not in passes:
        return None
    par = threaded_passes(passes, clock)
    if not par.any():
        return None
    hi, lo = passes["tests_max_worker"][par], passes["tests_min_worker"][par]
    modelled = clock in ("model", "slurm-sim")
    fig, ax = plt.subplots(figsize=(7, 6))
    ax.scatter(hi, lo, s=6, alpha=0.4)
    top = max(float(hi.max()), 1.0)
    ax.plot([0, top], [0, top], color="grey", lw=0.8, label="balanced (equal tests)")
    ax.set_xlabel("job tests of the busiest worker in a pass")
    ax.set_ylabel("job tests of the idlest worker in a pass")
    what = (f"{workers} modelled workers ({clock} clock)" if modelled
            else f"{workers} worker threads")
    ax.set_title(f"Work per worker: {what}\n{int(par.sum()):,} of {len(par):,} passes, a point each", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def _workers_note(summary, passes):
    """A sentence on the worker threads when no figure of them is drawn (or None)."""
    cfg = summary.get("config", {})
    workers = int(cfg.get("workers", 1) or 1)
    if workers <= 1 or passes is None or "tests_min_worker" not in passes:
        return None
    clock = cfg.get("clock", "free")
    if threaded_passes(passes, clock).any():
        return None
    return (f"No pass ran on more than one thread: with --workers {workers}, each full pass was predicted "
            "faster on one thread (too short for threads to pay, or no CPU to spare); the decisions are the "
            "same on any number of threads.")


def _save(plt, fig, path, written):
    fig.savefig(path, dpi=110)
    plt.close(fig)
    written.append(path)
    return path


def _embedded(title, path):
    with open(path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    return f"<h2>{html.escape(title)}</h2><img alt='{html.escape(title)}' src='data:image/png;base64,{data}'>"


def _table(title, rows):
    """A titled table of (label, value) rows; nothing when there are no rows."""
    if not rows:
        return ""
    return (f"<table><caption>{html.escape(title)}</caption>"
            + "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(str(v))}</td></tr>" for k, v in rows)
            + "</table>")


def _fmt(v):
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return v


def write_report(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> list[str]:
    """Write the figures and ``report.html`` of the replay in ``run_dir`` into ``out`` (default
    ``run_dir/report``); returns the paths written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ConfigError('pbf report draws with matplotlib: pip install "pbf[plot]"') from None
    summary, jobs, passes = load_run(run_dir)
    out = os.fspath(out or os.path.join(run_dir, "report"))
    os.makedirs(out, exist_ok=True)
    total = float(summary.get("units") or max(jobs["units"].max(), 1))
    tau = float(summary.get("metrics", {}).get("bsld_tau_s", 10.0))
    t0 = float(np.nanmin(jobs["submit"])) if len(jobs["submit"]) else 0.0
    figures = [("utilisation.png", "Utilisation and queue length", lambda: _fig_utilisation(plt, jobs, total, t0)),
               ("wait_cdf.png", "Wait-time CDF by size class", lambda: _fig_wait_cdf(plt, jobs, total)),
               ("bsld_classes.png", "Bounded slowdown by size and run time", lambda: _fig_bsld(plt, jobs, total, tau))]
    if passes is not None and len(passes.get("time", [])):
        figures.append(("passes.png", "Backfill depth and pass time", lambda: _fig_passes(plt, passes, t0)))
        workers = int(summary.get("config", {}).get("workers", 1) or 1)
        clock = summary.get("config", {}).get("clock", "free")
        figures.append(("workers.png", "Tests per worker", lambda: _fig_workers(plt, passes, t0, workers, clock)))
    written, shown = [], []
    for name, title, make in figures:
        fig = make()
        if fig is None:
            continue
        shown.append((title, _save(plt, fig, os.path.join(out, name), written)))
    html_path = os.path.join(out, "report.html")
    with open(html_path, "w") as fh:
        fh.write(_html(summary, shown, run_dir, _workers_note(summary, passes)))
    written.append(html_path)
    return written


def _html(summary, figures, run_dir, workers_note=None):
    m, j, p = summary.get("metrics", {}), summary.get("jobs", {}), summary.get("passes", {})
    cfg = summary.get("config", {})
    metrics = [(_label(k), _fmt(v)) for k, v in m.items() if k not in ("awt_s", "art_s")]
    jobs = [(_label(k), _fmt(v)) for k, v in j.items() if not isinstance(v, dict)]
    jobs += [(f"rejected: {reason}", f"{n:,}") for reason, n in (j.get("rejected_by_reason") or {}).items()]
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             f"<title>pbf report: {html.escape(str(summary.get('trace', run_dir)))}</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:auto}table{border-collapse:collapse;"
             "margin:0 2em 1em 0;display:inline-table;vertical-align:top}caption{font-weight:bold;text-align:left;"
             "padding:4px 0}th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;font-size:13px}"
             "img{max-width:100%}</style></head><body>",
             f"<h1>pbf report</h1><p>trace {html.escape(str(summary.get('trace')))}, "
             f"{html.escape(str(summary.get('units')))} units; folder {html.escape(os.path.abspath(run_dir))}</p>",
             "<h2>Summary</h2>",
             _table("The schedule", metrics), _table("Jobs", jobs), _table("Backfill passes", pass_rows(p, cfg, _fmt))]
    if workers_note:
        parts.append(f"<p>{html.escape(workers_note)}</p>")
    parts += [*_sections(summary), "<h2>Configuration</h2>",
              _table("The settings that applied", settings_that_apply(cfg))]
    parts += [_embedded(title, path) for title, path in figures]
    parts.append("</body></html>")
    return "\n".join(parts)


def _sections(summary):
    # what a replay on nodes, with failures, start-time estimates or co-allocation adds to its summary
    out = []
    for key, title in (("nodes", "Nodes and resources"), ("failures", "Failures"),
                       ("start_estimates", "Start-time estimates"), ("coalloc", "Co-allocation")):
        part = summary.get(key)
        if not part:
            continue
        flat = [(_label(k), _fmt(v)) for k, v in part.items() if not isinstance(v, (dict, list))]
        nested = [(f"{_label(k)}: {_label(k2)}", _fmt(v2)) for k, v in part.items() if isinstance(v, dict)
                  for k2, v2 in v.items() if not isinstance(v2, (dict, list))]
        out += [f"<h2>{title}</h2>", _table(title, flat + nested)]
    return out


# ---------------------------------------------------------------- sweep folders
_SWEEP_METRICS = (("bsld", "mean bounded slowdown"), ("awt_h", "mean wait (h)"), ("utilisation", "utilisation"))


def _sweep_rows(run_dir):
    with open(os.path.join(run_dir, "spec.json")) as fh:
        spec = json.load(fh)
    rows = _read_csv(os.path.join(run_dir, "results.csv"))
    return spec, rows


def _axis_values(rows, axis):
    col = rows[axis]
    try:
        values = sorted({float(v) for v in col})
        return values, np.array([float(v) for v in col])
    except (TypeError, ValueError):
        values = sorted({str(v) for v in col})
        return values, np.array([str(v) for v in col], dtype=object)


def write_sweep_report(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> list[str]:
    """Comparison figures of a sweep folder (``pbf sweep``): each metric against each axis of the
    grid (mean over the other axes, with their range), a heatmap for the first two axes, and
    ``report.html`` with the results table. Returns the paths written."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    spec, rows = _sweep_rows(run_dir)
    out = os.fspath(out or os.path.join(run_dir, "report"))
    os.makedirs(out, exist_ok=True)
    ok = np.array([s == "ok" for s in rows["status"]])
    axes = [a for a, v in spec["grid"].items() if len(v) > 1]
    shown, written = [], []
    for metric, label in _SWEEP_METRICS:
        if metric not in rows or not ok.any():
            continue
        y = np.array([float(v) for v in rows[metric]])
        fig, ax = plt.subplots(1, max(len(axes), 1), figsize=(4.2 * max(len(axes), 1), 3.6), squeeze=False)
        for k, axis in enumerate(axes):
            values, col = _axis_values(rows, axis)
            mean = [np.mean(y[ok & (col == v)]) for v in values]
            lo = [np.min(y[ok & (col == v)]) for v in values]
            hi = [np.max(y[ok & (col == v)]) for v in values]
            xs = range(len(values))
            ax[0][k].plot(xs, mean, marker="o", label="mean over the other axes")
            ax[0][k].fill_between(xs, lo, hi, alpha=0.2, label="their range")
            ax[0][k].set_xticks(list(xs), [f"{v:g}" if isinstance(v, float) else str(v) for v in values])
            ax[0][k].set_xlabel(axis)
            ax[0][k].set_ylabel(label)
            ax[0][k].legend(fontsize=7)
        fig.suptitle(f"{spec.get('name', 'sweep')}: {label} by parameter ({int(ok.sum())} cells ok)")
        fig.tight_layout()
        shown.append((f"{label} by parameter", _save(plt, fig, os.path.join(out, f"sweep_{metric}.png"), written)))
        if len(axes) >= 2:
            (va, ca), (vb, cb) = _axis_values(rows, axes[0]), _axis_values(rows, axes[1])
            grid = np.array([[np.mean(y[ok & (ca == a) & (cb == b)]) if (ok & (ca == a) & (cb == b)).any()
                              else np.nan for b in vb] for a in va])
            keep_a, keep_b = np.isfinite(grid).any(axis=1), np.isfinite(grid).any(axis=0)   # no empty rows
            va, vb = [v for v, k in zip(va, keep_a) if k], [v for v, k in zip(vb, keep_b) if k]
            grid = grid[np.ix_(keep_a, keep_b)]
            fig, ax = plt.subplots(figsize=(1.2 * len(vb) + 3, 0.7 * len(va) + 2.2))
            im = ax.imshow(grid, cmap="viridis", aspect="auto")
            for i in range(grid.shape[0]):
                for j in range(grid.shape[1]):
                    if np.isfinite(grid[i, j]):
                        light = grid[i, j] > np.nanmin(grid) + 0.6 * (np.nanmax(grid) - np.nanmin(grid))
                        ax.text(j, i, f"{grid[i, j]:.3g}", ha="center", va="center", fontsize=8,
                                color="black" if light else "white")
            ax.set_xticks(range(len(vb)), [f"{v:g}" if isinstance(v, float) else str(v) for v in vb])
            ax.set_yticks(range(len(va)), [f"{v:g}" if isinstance(v, float) else str(v) for v in va])
            ax.set_xlabel(axes[1])
            ax.set_ylabel(axes[0])
            ax.set_title(f"{label}, mean over the other axes")
            fig.colorbar(im, ax=ax, label=label)
            fig.tight_layout()
            shown.append((f"{label}: {axes[0]} x {axes[1]}",
                          _save(plt, fig, os.path.join(out, f"sweep_{metric}_heatmap.png"), written)))
    html_path = os.path.join(out, "report.html")
    with open(html_path, "w") as fh:
        fh.write(_sweep_html(spec, rows, shown, run_dir))
    written.append(html_path)
    return written


def _sweep_html(spec, rows, figures, run_dir):
    cols = [c for c in rows if c != "error"] + (["error"] if "error" in rows else [])
    n = len(rows["cell"])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(_fmt(rows[c][i])))}</td>" for c in cols) + "</tr>"
                   for i in range(n))
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
             f"<title>pbf sweep report: {html.escape(str(spec.get('name')))}</title>",
             "<style>body{font-family:sans-serif;max-width:1300px;margin:auto}table{border-collapse:collapse}"
             "th,td{border:1px solid #ccc;padding:2px 6px;font-size:12px}img{max-width:100%}</style></head><body>",
             f"<h1>pbf sweep report: {html.escape(str(spec.get('name')))}</h1>",
             f"<p>{n} cells; folder {html.escape(os.path.abspath(run_dir))}; trace "
             f"{html.escape(json.dumps(spec.get('trace')))}; fixed settings "
             f"{html.escape(json.dumps(spec.get('config')))}</p>"]
    parts += [_embedded(title, path) for title, path in figures]
    parts.append(f"<h2>Results</h2><table><tr>{head}</tr>{body}</table></body></html>")
    return "\n".join(parts)


def write_experiment_report(path: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> list[str]:
    """Figures of a ``pbf experiment parallel-backfill --out FILE.json`` result: AWT, bounded
    slowdown and the longest queue against the number of workers, per traffic, beside the
    paper's figures where it gives them; plus ``report.html`` with the rows."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    with open(path) as fh:
        result = json.load(fh)
    out = os.fspath(out or os.path.splitext(path)[0] + "-report")
    os.makedirs(out, exist_ok=True)
    rows = result["rows"]
    traffics = list(dict.fromkeys(r["traffic"] for r in rows))
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    for metric, label, k in (("awt_h", "mean wait (h)", 0), ("bsld", "mean bounded slowdown", 1),
                             ("max_queue", "longest queue (jobs)", 2)):
        for traffic in traffics:
            rs = [r for r in rows if r["traffic"] == traffic]
            w = [r["workers"] for r in rs]
            line = ax[k].plot(w, [r[metric] for r in rs], marker="o", label=f"pbf, {traffic} traffic")[0]
            paper = [(r["workers"], r["paper"][metric]) for r in rs if (r.get("paper") or {}).get(metric) is not None]
            if paper:
                ax[k].plot(*zip(*paper), marker="x", ls="--", color=line.get_color(), label=f"paper, {traffic} traffic")
        ax[k].set_xscale("log", base=2)
        ax[k].set_xticks(sorted({r["workers"] for r in rows}), [str(w) for w in sorted({r["workers"] for r in rows})])
        ax[k].set_xlabel("backfill workers")
        ax[k].set_ylabel(label)
        ax[k].legend(fontsize=7)
    fig.suptitle(f"Parallel backfill ({result.get('model', '')} model): the replays against the number of workers")
    fig.tight_layout()
    fig_path = os.path.join(out, "workers.png")
    fig.savefig(fig_path, dpi=110)
    plt.close(fig)
    with open(fig_path, "rb") as fh:
        data = base64.b64encode(fh.read()).decode("ascii")
    cols = [c for c in rows[0] if c not in ("paper", "series")]
    table = ("<table><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in cols) + "</tr>"
             + "".join("<tr>" + "".join(f"<td>{html.escape(str(_fmt(r.get(c))))}</td>" for c in cols) + "</tr>"
                       for r in rows) + "</table>")
    html_path = os.path.join(out, "report.html")
    with open(html_path, "w") as fh:
        fh.write("<!DOCTYPE html><html><head><meta charset='utf-8'><title>pbf experiment report</title>"
                 "<style>body{font-family:sans-serif;max-width:1300px;margin:auto}table{border-collapse:collapse}"
                 "th,td{border:1px solid #ccc;padding:2px 6px;font-size:12px}img{max-width:100%}</style></head><body>"
                 f"<h1>pbf experiment: {html.escape(str(result.get('experiment')))}</h1>"
                 f"<p>{html.escape(str(result.get('model_text', '')))}</p>"
                 f"<img alt='workers' src='data:image/png;base64,{data}'><h2>Rows</h2>{table}</body></html>")
    return [fig_path, html_path]


def report_folder(run_dir: str | os.PathLike[str], out: str | os.PathLike[str] | None = None) -> list[str]:
    """A replay folder's report, a sweep folder's (it holds ``results.csv`` and ``spec.json``), or
    that of a ``pbf experiment parallel-backfill --out FILE.json`` result."""
    run_dir = os.fspath(run_dir)
    if os.path.isfile(run_dir) and run_dir.endswith(".json"):
        return write_experiment_report(run_dir, out)
    if os.path.exists(os.path.join(run_dir, "results.csv")) and os.path.exists(os.path.join(run_dir, "spec.json")):
        return write_sweep_report(run_dir, out)
    return write_report(run_dir, out)
