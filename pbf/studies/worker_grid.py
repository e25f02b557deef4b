"""``pbf experiment parallel-backfill --grid`` and ``--mechanisms``: where do backfill workers change a
Slurm replay, and through which mechanism?

:class:`WorkerGrid` replays a grid of the ``slurm`` model (preset slurm, slurm-sim clock): workers x
cost of a backfill job test x offered load x main-scheduler model. Loads are Beocat-like traces packed
into windows of different lengths (the paper's high traffic: 100,000 jobs in 7 days; low: in 14 days).
To keep the grid within minutes the cluster and the trace are scaled together by ``scale`` (default
0.2: 1,826 cores and 20,000 jobs in the same windows: the same load per core and the same time scales;
Beocat-like jobs are at most 64 cores wide, so none is lost), which makes arrivals and completions
``1/scale`` times rarer -- yields see fewer events than on the full cluster. Each cell is a pure
function of its settings and runs on a local process (or a Ray task). :func:`write_result` writes
``grid.json`` (every cell; the AWT change from 1 to the most workers per cost x load x main model)
and, with matplotlib (``pip install "pbf[plot]"``), figures.

:class:`MechanismStudy` replays the fewest and the most workers with each scheduler-time mechanism of
:data:`pbf.studies.experiments.VARIANTS` switched off, on the same scaled cluster.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ..errors import ConfigError
from .experiments import MAIN_SCHEDULERS, VARIANTS, replay_config, run_cells

__all__ = ["WorkerGrid", "MechanismStudy", "format_grid", "format_mechanisms", "write_figures", "write_result"]

DAY = 86400


@dataclass(frozen=True)
class WorkerGrid:
    """The grid (``loads_days``: the windows the trace is packed into;
    ``costs_us``: charge per backfill job test -- 62 us the simulator's, 375 us a production
    controller's bf_model prefactor, then 2, 10 and 100 ms: a cycle of 500 tests outlasts its 30 s budget
    only above 60 ms a test)."""
    scale: float = 0.2
    workers: tuple = (1, 2, 4, 8)
    costs_us: tuple = (62, 375, 2_000, 10_000, 100_000)
    loads_days: tuple = (7.0, 10.0, 14.0)
    mains: tuple = ("slurm", "free")
    seed: int = 0
    arrivals: str = "pack"
    model: str = "slurm"
    bsld_bound: float = 600.0
    procs: int | None = None
    backend: str = "local"
    address: str | None = None

    def __post_init__(self) -> None:
        if self.model not in ("slurm", "slurm-17.02"):
            raise ConfigError(f"the worker grid runs the slurm or slurm-17.02 model, got {self.model!r}")
        for m in self.mains:
            if m not in MAIN_SCHEDULERS:
                raise ConfigError(f"main scheduler models must be among {', '.join(MAIN_SCHEDULERS)}, got {m!r}")
        if not self.workers or min(self.workers) < 1 or not self.costs_us or min(self.costs_us) < 0:
            raise ConfigError("workers must be >= 1 and costs >= 0 (and neither list empty)")
        if not 0 < self.scale <= 1:
            raise ConfigError(f"scale must be in (0, 1], got {self.scale!r}")
        if not self.loads_days or min(self.loads_days) <= 0:
            raise ConfigError(f"loads_days must be > 0 days, got {self.loads_days!r}")

    @property
    def jobs(self) -> int:
        return int(round(100_000 * self.scale))

    @property
    def units(self) -> int:
        return int(round(9128 * self.scale))

    def cells(self) -> list[dict[str, Any]]:
        default_cost = self.costs_us[0]
        out = []
        for main in self.mains:
            for load in self.loads_days:
                for cost in self.costs_us:
                    for w in self.workers:
                        series = (main == self.mains[0] and load == self.loads_days[0] and cost == default_cost
                                  and w in (min(self.workers), max(self.workers)))
                        out.append({"main": main, "load_days": load, "cost_us": cost, "workers": w,
                                    "jobs": self.jobs, "units": self.units, "window_s": int(round(load * DAY)),
                                    "seed": self.seed, "arrivals": self.arrivals, "model": self.model,
                                    "series": series,
                                    "config": dict(cost_per_test_us=cost, bsld_bound=self.bsld_bound, main=main,
                                                   units=self.units)})
        return out

    def run(self, progress: Callable[[dict], None] | None = None) -> dict[str, Any]:
        t0 = time.perf_counter()
        rows = run_cells(self.cells(), self.procs, progress, self.backend, self.address)
        lo, hi = min(self.workers), max(self.workers)
        reductions = []
        for main in self.mains:
            for load in self.loads_days:
                for cost in self.costs_us:
                    pick = {r["workers"]: r for r in rows
                            if r["main"] == main and r["load_days"] == load and r["cost_us"] == cost}
                    a, b = pick[lo]["awt_h"], pick[hi]["awt_h"]
                    reductions.append({"main": main, "load_days": load, "cost_us": cost, "awt_h_lo": a, "awt_h_hi": b,
                                       "awt_change": (b - a) / a if a > 0 else 0.0,
                                       "max_queue_lo": pick[lo]["max_queue"], "max_queue_hi": pick[hi]["max_queue"]})
        settings = {**asdict(self), "jobs": self.jobs, "units": self.units}
        config = replay_config(self.model, 1, main=self.mains[0], units=self.units).as_dict()
        return {"experiment": "parallel-backfill-grid", "settings": settings, "replay_config": config,
                "workers_compared": [lo, hi], "cells": rows, "awt_change": reductions,
                "wall_s": time.perf_counter() - t0, "cores": os.cpu_count()}


def format_grid(result: dict[str, Any]) -> str:
    """The AWT change from the fewest to the most workers, per main-scheduler model, cost and load."""
    lo, hi = result["workers_compared"]
    s = result["settings"]
    out = [f"Parallel backfill under the slurm-sim clock (model {s['model']}): AWT change from {lo} to {hi} workers "
           f"(Beocat-like, scaled by {s['scale']:g}: {s['jobs']:,} jobs on {s['units']:,} cores; load = the days "
           "the trace is packed into, 7 = the paper's high traffic)"]
    for main in s["mains"]:
        out.append(f"\nmain scheduler: {main}")
        out.append(f"{'cost/test':>10} " + " ".join(f"{f'{d:g} d':>22}" for d in s["loads_days"]))
        for cost in s["costs_us"]:
            cells = []
            for d in s["loads_days"]:
                r = next(x for x in result["awt_change"] if x["main"] == main and x["cost_us"] == cost
                         and x["load_days"] == d)
                cells.append(f"{r['awt_h_lo']:7.2f}->{r['awt_h_hi']:6.2f} h {r['awt_change']:+6.1%}")
            out.append(f"{cost:>8} us " + " ".join(f"{c:>22}" for c in cells))
    out.append(f"\n{len(result['cells'])} replays in {result['wall_s']:.0f} s on {result['cores']} cores")
    return "\n".join(out)


def write_figures(result: dict[str, Any], out_dir: str) -> list[str]:
    """PNG figures (matplotlib, the ``plot`` extra): a heatmap of the AWT change over cost x load per
    main-scheduler model, and AWT / queue / utilisation over time for the fewest and the most workers
    at the default setting. Returns the files written."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ConfigError('figures need matplotlib: pip install "pbf[plot]"') from exc
    s = result["settings"]
    lo, hi = result["workers_compared"]
    files = []
    for main in s["mains"]:
        grid = [[next(x["awt_change"] for x in result["awt_change"] if x["main"] == main and x["cost_us"] == c
                      and x["load_days"] == d) * 100 for d in s["loads_days"]] for c in s["costs_us"]]
        fig, ax = plt.subplots(figsize=(6, 4))
        im = ax.imshow(grid, cmap="RdBu", vmin=-70, vmax=70, origin="lower", aspect="auto")
        ax.set_xticks(range(len(s["loads_days"])), [f"{d:g}" for d in s["loads_days"]])
        ax.set_yticks(range(len(s["costs_us"])), [f"{c:,}" for c in s["costs_us"]])
        ax.set_xlabel("load: days the trace is packed into (7 = the paper's high traffic)")
        ax.set_ylabel("charge per backfill job test (us)")
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                ax.text(j, i, f"{v:+.0f}%", ha="center", va="center", fontsize=9)
        ax.set_title(f"AWT change, {lo} -> {hi} workers (main scheduler: {main})")
        fig.colorbar(im, ax=ax, label="%")
        fig.tight_layout()
        path = os.path.join(out_dir, f"awt_change_{main}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    series = {r["workers"]: r["series"] for r in result["cells"] if isinstance(r.get("series"), dict)}
    if series:
        fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
        for w, ser in sorted(series.items()):
            hours, label = ser["hour"], f"{w} worker{'s' if w > 1 else ''}"
            axes[0].plot(hours, [float("nan") if x is None else x for x in ser["awt_h"]], label=label, lw=1)
            axes[1].plot(hours, ser["queue"], label=label, lw=1)
            axes[2].plot(hours, ser["utilisation"], label=label, lw=1)
        for ax, label in zip(axes, ("AWT of jobs submitted (h)", "queued jobs", "utilisation")):
            ax.set_ylabel(label)
            ax.legend(fontsize=8)
        axes[2].set_xlabel("hours since the first submission")
        d0, c0 = s["loads_days"][0], s["costs_us"][0]
        axes[0].set_title(f"{d0:g}-day load, {c0} us per test, main scheduler {s['mains'][0]}")
        fig.tight_layout()
        path = os.path.join(out_dir, "over_time.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        files.append(path)
    return files


def write_result(result: dict[str, Any], out_dir: str, figures: bool = True) -> list[str]:
    """grid.json (and the figures, when matplotlib is there) into out_dir; returns the files."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "grid.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(result, fh, indent=1)
    os.replace(tmp, path)
    files = [path]
    if figures:
        files += write_figures(result, out_dir)
    return files


@dataclass(frozen=True)
class MechanismStudy:
    """AWT with the fewest and the most workers, with each mechanism of :data:`VARIANTS` switched,
    at one cost per test and load (on the cluster scaled as in :class:`WorkerGrid`)."""
    scale: float = 0.2
    workers: tuple = (1, 8)
    costs_us: tuple = (10_000, 100_000)
    load_days: float = 7.0
    variants: tuple = tuple(VARIANTS)
    seed: int = 0
    arrivals: str = "pack"
    bsld_bound: float = 600.0
    procs: int | None = None
    backend: str = "local"
    address: str | None = None

    def cells(self) -> list[dict[str, Any]]:
        grid = WorkerGrid(scale=self.scale, workers=self.workers, costs_us=self.costs_us,
                                   loads_days=(self.load_days,), seed=self.seed, arrivals=self.arrivals)
        return [{"variant": v, "cost_us": c, "workers": w, "jobs": grid.jobs, "units": grid.units,
                 "window_s": int(round(self.load_days * DAY)), "seed": self.seed, "arrivals": self.arrivals,
                 "model": "slurm", "config": dict(cost_per_test_us=c, bsld_bound=self.bsld_bound, units=grid.units)}
                for v in self.variants for c in self.costs_us for w in self.workers]

    def run(self, progress: Callable[[dict], None] | None = None) -> dict[str, Any]:
        t0 = time.perf_counter()
        rows = run_cells(self.cells(), self.procs, progress, self.backend, self.address)
        return {"experiment": "parallel-backfill-mechanisms", "settings": asdict(self),
                "variants": {v: VARIANTS[v] for v in self.variants}, "cells": rows,
                "wall_s": time.perf_counter() - t0, "cores": os.cpu_count()}


def format_mechanisms(result: dict[str, Any]) -> str:
    """AWT with the fewest and the most workers per mechanism switched and cost per test."""
    s = result["settings"]
    lo, hi = min(s["workers"]), max(s["workers"])
    out = [f"Mechanisms: AWT with {lo} -> {hi} workers, {s['load_days']:g}-day load, cluster scaled by {s['scale']:g}"]
    out.append(f"{'variant':<24}" + "".join(f"{f'{c:,} us/test':>34}" for c in s["costs_us"]))
    for v in s["variants"]:
        line = f"{v:<24}"
        for c in s["costs_us"]:
            pick = {r["workers"]: r for r in result["cells"] if r["variant"] == v and r["cost_us"] == c}
            a, b = pick[lo], pick[hi]
            change = (b["awt_h"] - a["awt_h"]) / a["awt_h"] if a["awt_h"] > 0 else 0.0
            line += (f"  {a['awt_h']:6.2f} -> {b['awt_h']:6.2f} h {change:+6.1%} "
                     f"({a['tests_per_cycle']:5.0f}/{b['tests_per_cycle']:5.0f})")
        out.append(line)
    out.append("(in brackets: tests per cycle with the fewest / the most workers)")
    return "\n".join(out)
