"""Experiments reproduced as one command: ``pbf experiment parallel-backfill``.

The Parallel Backfill paper (Riffel et al., PEARC'24, Tables 1 and 2) replays 100,000 Beocat jobs
submitted within one week (high traffic) and two weeks (low traffic) with Slurm's backfill and 1, 2, 4
and 8 worker threads in the Slurm 17.02 simulator, where scheduling itself takes simulated time.

Two models are offered (the output names the one used):

* ``slurm`` (default): the ``slurm`` preset -- Slurm's backfill (a reservation per tested job,
  bf_max_job_test 500, bf_window 1 day, bf_resolution 60 s, bf_interval 30 s) under the slurm-sim
  clock (:mod:`pbf.scheduler_time`): cycles take simulated time, yield, and share their tests among
  N modelled workers.
* ``slurm-17.02``: the same with Slurm 17.02's meaning of ``bf_max_job_test`` (default 100): the size
  of the reservation table (49 reservations, then the cycle stops), with no cap on jobs tested.
* ``easy-model``: EASY (one reservation) with the model clock: a pass costs only by delaying the next
  pass and by its budget (the model pbf used before the slurm-sim clock existed).
"""
from __future__ import annotations

import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, replace
from multiprocessing import get_context
from typing import TYPE_CHECKING

from ..config import Backfill
from ..errors import ConfigError
from ..replayer import ReplayConfig, replay
from ..scheduler_time import SlurmSim
from ..workload.beocat import TRAFFIC_WINDOWS, generate_beocat

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["ParallelBackfillExperiment", "PAPER_TABLES", "MODELS", "MAIN_SCHEDULERS", "VARIANTS", "format_tables",
           "replay_config", "apply_variant", "run_cells"]

#: Riffel et al. 2024, Tables 1 and 2 (AWT, ART in hours; their "BSLD (Hours)" uses a 10-minute bound).
PAPER_TABLES = {
    "high": {1: (45.89, 50.61, 143.71), 2: (34.35, 39.05, 108.40), 4: (22.94, 27.63, 71.65),
             8: (17.12, 21.80, 52.82)},
    "low": {1: (1.68, 6.36, 4.84), 2: (1.39, 6.06, 3.77), 4: (1.37, 6.04, 3.79), 8: (1.38, 6.05, 3.76)},
}

MODELS = {
    "slurm": "Slurm's backfill (preset slurm) under the slurm-sim clock",
    "slurm-17.02": "Slurm 17.02's backfill (preset slurm-17.02: 49-reservation table, no test cap) under the "
                   "slurm-sim clock",
    "easy-model": "EASY with the model clock (interval trigger; a pass costs only its budget and delay)",
}

#: the main scheduler of the slurm-sim loop: Slurm 17.02's limits, or free (every event, any depth, no cost)
MAIN_SCHEDULERS = {"slurm": SlurmSim(),
                   "free": SlurmSim(batch_sched_delay=0, default_queue_depth=10**9, max_sched_time=1e9,
                                    cost_main_test_us=0)}


def replay_config(model: str, workers: int, *, bf_interval: int = 30, bf_max_time: int | None = None,
                  cost_per_test_us: float | None = None, cost_per_slot_us: int | None = None,
                  bsld_bound: float = 600.0, main: str = "slurm", units: int = 9128, cluster: str | None = None,
                  cost_power: float = 1.0, cost_per_node_us: int = 0, cost_per_reservation_us: int = 0) -> ReplayConfig:
    """The replay configuration of one cell of the experiment (``model``: a key of :data:`MODELS`;
    ``main``: a key of :data:`MAIN_SCHEDULERS`, slurm model only; ``units``: Beocat's 9,128 cores;
    ``cluster``: a node cluster instead (a built-in name such as ``"beocat"``, or a file); the cost
    settings as :class:`pbf.ReplayConfig`'s)."""
    costs = dict(cost_power=cost_power, cost_per_node_us=cost_per_node_us,
                 cost_per_reservation_us=cost_per_reservation_us)
    if cluster is not None:
        units = None
    if model in ("slurm", "slurm-17.02"):
        return ReplayConfig.from_preset(model, units=units, workers=workers, bf_interval=bf_interval,
                                        bf_max_time=bf_max_time, cost_per_test_us=cost_per_test_us,
                                        cost_per_slot_us=cost_per_slot_us, bsld_bound=bsld_bound,
                                        slurm_sim=MAIN_SCHEDULERS[main], cluster=cluster, **costs)
    if model == "easy-model":
        return ReplayConfig(units=units, cluster=cluster, trigger="interval", bf_interval=bf_interval, clock="model",
                            bf_max_time=bf_max_time, workers=workers, cost_per_test_us=cost_per_test_us,
                            cost_per_slot_us=cost_per_slot_us, bsld_bound=bsld_bound,
                            backfill=Backfill(reservations=1), **costs)
    raise ConfigError(f"model must be one of {', '.join(MODELS)}, got {model!r}")


#: the mechanisms through which workers act under the slurm-sim clock, each switched off (or, for the
#: last two, Slurm 17.02's lack of a cap on jobs tested switched on)
VARIANTS = {
    "base": "preset slurm as it is",
    "no-budget": "no cycle budget (bf_max_time 10^6 s): more workers cannot test deeper within it",
    "no-yield-abort": "bf_yield_interval = the budget: cycles are not ended by events",
    "free-main": "main scheduler on every event, any depth, no cost",
    "no-test-cap": "no bf_max_job_test (Slurm 17.02 did not cap jobs tested): only the budget limits a cycle",
    "no-test-cap-no-budget": "neither: every cycle tests the whole queue",
}


def apply_variant(cfg: ReplayConfig, variant: str) -> ReplayConfig:
    """The replay config ``cfg`` (slurm model) with one mechanism changed (a key of :data:`VARIANTS`)."""
    budget = cfg.budget_s()
    if variant == "base":
        return cfg
    if variant == "no-budget":
        return replace(cfg, bf_max_time=10**6)
    if variant == "no-yield-abort":
        return replace(cfg, slurm_sim=replace(cfg.slurm_sim, bf_yield_interval=float(budget)))
    if variant == "free-main":
        return replace(cfg, slurm_sim=MAIN_SCHEDULERS["free"])
    if variant == "no-test-cap":
        return replace(cfg, backfill=replace(cfg.backfill, max_job_test=None))
    if variant == "no-test-cap-no-budget":
        return replace(cfg, bf_max_time=10**6, backfill=replace(cfg.backfill, max_job_test=None))
    raise ConfigError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")


def _run_cell(cell):
    """One replay (in a worker process): the trace is generated there from its seed."""
    table = generate_beocat(cell["jobs"], cell["window_s"], seed=cell["seed"], arrivals=cell["arrivals"],
                            resources=cell.get("resources", False))
    cfg = replay_config(cell["model"], cell["workers"], **cell["config"])
    if cell.get("variant"):
        cfg = apply_variant(cfg, cell["variant"])
    t0 = time.perf_counter()
    r = replay(table, cfg)
    m, p, st = r.summary["metrics"], r.summary["passes"], r.summary["scheduler_time"]
    row = {"awt_h": m["awt_h"], "art_h": m["art_h"], "bsld": m["bsld"], "max_queue": m["max_queue"],
           "mean_queue": m["mean_queue"], "utilisation": m["utilisation"],
           "tests_per_cycle": p["mean_depth_full"], "cycle_s_mean": p["charged_s_mean_full"],
           "cycles": p["full"], "budget_exits": p["exit_reasons"].get("time budget", 0),
           "cycles_ended_by_yield": st["cycles_ended_by_yield"] if st else 0,
           "main_started": st["main_started"] if st else None, "wall_s": time.perf_counter() - t0}
    if cell.get("series"):
        from .series import time_series
        row["series"] = time_series(r.jobs, cfg.units)
    return row


def run_cells(cells: list[dict], procs: int | None = None, progress: Callable[[dict], object] | None = None,
              backend: str = "local", address: str | None = None) -> list[dict]:
    """Run cells on local processes (spawned; ``procs`` default: the core count) or, with
    ``backend="ray"``, as Ray tasks (``address``: a running cluster, else a local Ray instance);
    returns the rows in the cells' order, each cell's keys plus its results. A script calling this
    with ``procs`` > 1 needs the ``if __name__ == "__main__":`` guard that spawned processes require."""
    if backend == "ray":
        return _run_cells_ray(cells, progress, address)
    if backend != "local":
        raise ConfigError(f"backend {backend!r}: expected local or ray")
    procs = procs or os.cpu_count() or 1
    rows = [None] * len(cells)
    if procs == 1:
        for i, cell in enumerate(cells):
            rows[i] = {**_public(cell), **_run_cell(cell)}
            if progress:
                progress(rows[i])
        return rows
    with ProcessPoolExecutor(max_workers=procs, mp_context=get_context("spawn")) as pool:
        futures = {pool.submit(_run_cell, cell): i for i, cell in enumerate(cells)}
        for future in as_completed(futures):
            i = futures[future]
            rows[i] = {**_public(cells[i]), **future.result()}
            if progress:
                progress(rows[i])
    return rows


def _run_cells_ray(cells, progress, address):
    try:
        import ray
    except ImportError:
        raise ConfigError('the ray backend needs Ray: pip install "pbf[ray]"') from None
    rows = [None] * len(cells)
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        task = ray.remote(num_cpus=1)(_run_cell)     # a cell carries its settings; its trace is made there
        pending = {task.remote(cell): i for i, cell in enumerate(cells)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i = pending.pop(ref)
                rows[i] = {**_public(cells[i]), **ray.get(ref)}
                if progress:
                    progress(rows[i])
    finally:
        if started_here:
            ray.shutdown()
    return rows


def _public(cell):
    return {k: v for k, v in cell.items() if k not in ("config", "series")}


@dataclass(frozen=True)
class ParallelBackfillExperiment:
    """The experiment's settings (defaults: the paper's datasets -- Beocat-like jobs packed evenly into
    the window, as the authors packed theirs (``arrivals="pack"``; ``"profile"``: bursts by the daily
    and weekly profile) -- and the ``slurm`` model with its sourced defaults; ``cost_per_test_us``
    None = the clock's default; ``cluster``: Beocat's 299 nodes with their memory (default), another
    cluster of nodes, or None for 9,128 interchangeable cores; ``resources``: jobs with memory per core
    and GPUs from the generator (default; without, each job asks its nodes' default memory per core))."""
    jobs: int = 100_000
    workers: tuple = (1, 2, 4, 8)
    seed: int = 0
    arrivals: str = "pack"
    model: str = "slurm"
    bf_interval: int = 30
    bf_max_time: int | None = None
    cost_per_test_us: float | None = None
    cost_per_slot_us: int | None = None
    cost_power: float = 1.0
    cost_per_node_us: int = 0
    cost_per_reservation_us: int = 0
    bsld_bound: float = 600.0
    procs: int | None = None
    backend: str = "local"
    address: str | None = None
    cluster: str | None = "beocat"
    resources: bool = True
    window_scale: float = 1.0
    calibrate: str | None = None

    def __post_init__(self):
        if self.model not in MODELS:
            raise ConfigError(f"model must be one of {', '.join(MODELS)}, got {self.model!r}")
        if self.calibrate not in (None, "cost", "load"):
            raise ConfigError(f"calibrate must be None, 'cost' or 'load', got {self.calibrate!r}")
        if not (isinstance(self.window_scale, (int, float)) and 0 < self.window_scale <= 1000):
            raise ConfigError(f"window_scale must be a number in (0, 1000], got {self.window_scale!r}")
        config = replay_config(self.model, 1, **self._config())     # bad settings fail before any replay
        if self.cluster is not None:
            config.node_cluster()                                    # (and a cluster that cannot be read)

    def _config(self):
        return dict(bf_interval=self.bf_interval, bf_max_time=self.bf_max_time, cost_per_test_us=self.cost_per_test_us,
                    cost_per_slot_us=self.cost_per_slot_us, bsld_bound=self.bsld_bound, cluster=self.cluster,
                    cost_power=self.cost_power, cost_per_node_us=self.cost_per_node_us,
                    cost_per_reservation_us=self.cost_per_reservation_us)

    def _cell(self, traffic, workers):
        return {"traffic": traffic, "workers": workers, "jobs": self.jobs,
                "window_s": int(round(TRAFFIC_WINDOWS[traffic] * self.window_scale)), "seed": self.seed,
                "arrivals": self.arrivals, "model": self.model, "resources": self.resources, "config": self._config()}

    def calibrated(self, progress: Callable[[dict], object] | None = None,
                   target_awt_h: float = PAPER_TABLES["high"][1][0], tol: float = 0.02,
                   max_steps: int = 14) -> tuple[ParallelBackfillExperiment, dict]:
        """The experiment with one unknown set so that 1 worker at high traffic waits ``target_awt_h`` on
        average (the paper's 1-worker row, the only figure read): ``calibrate="cost"`` scales the cost
        per test, ``"load"`` the packing window of both traces (a shorter window: a heavier trace).
        Returns (experiment, calibration record); the record says when no value reaches the target."""
        what = self.calibrate
        base = (self.cost_per_test_us if self.cost_per_test_us is not None
                else replay_config(self.model, 1, **self._config()).test_costs()[0])
        steps = []

        def awt(x):
            exp = replace(self, calibrate=None, **({"cost_per_test_us": x} if what == "cost" else {"window_scale": x}))
            row = _run_cell(exp._cell("high", 1))
            steps.append({"value": x, "awt_h": row["awt_h"], "tests_per_cycle": row["tests_per_cycle"],
                          "cycle_s_mean": row["cycle_s_mean"], "wall_s": row["wall_s"]})
            if progress:
                progress({"calibration": what, **steps[-1]})
            return row["awt_h"]

        # AWT grows with the cost and falls with the window: "up" is the direction that raises it
        up = (lambda x: x * 4) if what == "cost" else (lambda x: x / 2)
        down = (lambda x: x / 4) if what == "cost" else (lambda x: x * 2)
        x0 = float(base) if what == "cost" else float(self.window_scale)
        record = {"what": what, "target_awt_h": target_awt_h, "steps": steps, "ok": False}
        a0 = awt(x0)
        lo, hi = None, None               # lo: AWT below the target, hi: above
        if a0 < target_awt_h:
            lo, x = x0, up(x0)
            for _ in range(6):
                if awt(x) >= target_awt_h:
                    hi = x
                    break
                lo, x = x, up(x)
        else:
            hi = x0
            floor = 0.0 if what == "cost" else None
            x = floor if floor is not None else down(x0)
            for _ in range(1 if floor is not None else 6):
                if awt(x) < target_awt_h:
                    lo = x
                    break
                hi, x = x, down(x)
        if lo is None or hi is None:
            record["reason"] = (f"no {'cost per test' if what == 'cost' else 'packing window'} tried gives a 1-worker "
                                f"AWT of {target_awt_h} h: "
                                + ", ".join(f"{s['value']:.4g} -> {s['awt_h']:.2f} h" for s in steps))
            return replace(self, calibrate=None), record
        for _ in range(max_steps):
            best = min(steps, key=lambda s: abs(s["awt_h"] - target_awt_h))
            if abs(best["awt_h"] - target_awt_h) <= tol * target_awt_h:
                break
            mid = (lo * hi) ** 0.5 if lo > 0 and hi > 0 else (lo + hi) / 2
            if awt(mid) < target_awt_h:
                lo = mid
            else:
                hi = mid
        best = min(steps, key=lambda s: abs(s["awt_h"] - target_awt_h))
        record.update(ok=abs(best["awt_h"] - target_awt_h) <= tol * target_awt_h, value=best["value"],
                      awt_h=best["awt_h"])
        if not record["ok"]:
            record["reason"] = f"the bisection stopped {abs(best['awt_h'] - target_awt_h):.2f} h from the target"
        chosen = replace(self, calibrate=None, **({"cost_per_test_us": best["value"]} if what == "cost"
                                                 else {"window_scale": best["value"]}))
        return chosen, record

    def run(self, progress: Callable[[dict], object] | None = None) -> dict:
        """Replay both traffic levels with every worker count; returns a JSON-ready dict. With
        ``calibrate``, first :meth:`calibrated`, then the table with nothing else changed."""
        if self.calibrate:
            exp, record = self.calibrated(progress)
            result = exp.run(progress)
            result["calibration"] = record
            result["settings"]["calibrate"] = self.calibrate
            for row in result["rows"]:
                row["calibrated"] = self.calibrate if record["ok"] else None
            return result
        cells = [{"traffic": traffic, "workers": w, "jobs": self.jobs,
                  "window_s": int(round(TRAFFIC_WINDOWS[traffic] * self.window_scale)),
                  "seed": self.seed, "arrivals": self.arrivals, "model": self.model, "resources": self.resources,
                  "config": self._config()}
                 for traffic in ("high", "low") for w in self.workers]
        rows = run_cells(cells, self.procs, progress, self.backend, self.address)
        for row in rows:
            row["model"], row["calibrated"] = self.model, None
            row["paper"] = dict(zip(("awt_h", "art_h", "bsld"), PAPER_TABLES[row["traffic"]].get(row["workers"],
                                                                                                (None,) * 3)))
        cfg = replay_config(self.model, 1, **self._config())
        return {"experiment": "parallel-backfill", "model": self.model, "model_text": MODELS[self.model],
                "settings": asdict(self), "replay_config": cfg.as_dict(), "rows": rows}


def format_tables(result: dict) -> str:
    """The paper-shaped tables, pbf's figures beside the paper's."""
    out = []
    s, c = result["settings"], result["replay_config"]
    bf = c["backfill"]
    resv = "unlimited" if bf["reservations"] is None else bf["reservations"]
    where = (f"cluster {s['cluster']} (nodes)" if s.get("cluster") else "9,128 interchangeable cores")
    asks = "jobs with memory and GPU requests" if s.get("resources") else "jobs asking cores only"
    out.append(f"Parallel Backfill (Riffel et al. 2024), Beocat-like traces of {s['jobs']:,} jobs "
               f"(arrivals {s['arrivals']}); {where}, {asks}; model: {result['model_text']}")
    out.append(f"  reservations {resv}, max job test {bf['max_job_test']}, window {bf['window']} s, resolution "
               f"{bf['resolution']} s, bf_interval {c['bf_interval']} s, clock {c['clock']} "
               f"{c['cost_per_test_us']} us/test + {c['cost_per_slot_us']} us/slot, budget "
               f"{s['bf_max_time'] or s['bf_interval']} s, BSLD bound {s['bsld_bound']:g} s")
    cal = result.get("calibration")
    if cal:
        what = "cost per test (us)" if cal["what"] == "cost" else "packing window (x the paper's)"
        out.append(f"  calibrated: the {what}, so that 1 worker at high traffic waits {cal['target_awt_h']} h")
        out.append("    " + "; ".join(f"{st['value']:.4g} -> {st['awt_h']:.2f} h" for st in cal["steps"]))
        out.append(f"    chosen {cal['value']:.4g} (AWT {cal['awt_h']:.2f} h)" if cal["ok"]
                   else f"    not calibrated: {cal['reason']}; the tables use the uncalibrated settings")
    days = {t: TRAFFIC_WINDOWS[t] * s.get("window_scale", 1.0) / 86400 for t in TRAFFIC_WINDOWS}
    for traffic, title in (("high", f"Table 1: high-job traffic ({days['high']:.3g} days)"),
                           ("low", f"Table 2: low-job traffic ({days['low']:.3g} days)")):
        out.append(f"\n{title}")
        out.append(f"{'workers':>8} {'AWT h':>8} {'ART h':>8} {'BSLD':>8} {'max queue':>10} {'util':>6} "
                   f"{'tests/cycle':>11} {'cycle s':>8} | paper: {'AWT h':>7} {'ART h':>7} {'BSLD':>7}")
        for r in (r for r in result["rows"] if r["traffic"] == traffic):
            pa = r["paper"]
            paper = (f"{pa['awt_h']:7.2f} {pa['art_h']:7.2f} {pa['bsld']:7.2f}" if pa["awt_h"] is not None
                     else f"{'-':>7} {'-':>7} {'-':>7}")
            label = "1 (orig)" if r["workers"] == 1 else str(r["workers"])
            out.append(f"{label:>8} {r['awt_h']:8.2f} {r['art_h']:8.2f} {r['bsld']:8.2f} {r['max_queue']:10,} "
                       f"{r['utilisation']:6.3f} {r['tests_per_cycle']:11.1f} {r['cycle_s_mean']:8.3f} |        "
                       f"{paper}")
    return "\n".join(out)
