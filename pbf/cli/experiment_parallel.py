"""``pbf experiment parallel-backfill``: the Parallel Backfill paper's Tables 1 and 2
(:mod:`pbf.studies.experiments`); with ``--grid``, the grid of workers x cost per test x load x
main scheduler, and with ``--mechanisms``, the scheduler-time mechanisms switched off one by one
(:mod:`pbf.studies.worker_grid`)."""
from __future__ import annotations

import argparse
from typing import Any

from ..bounded import MAX_GENERATED_JOBS
from .options import add_cost_options, cost_settings, float_in, int_in, positive_seconds, seconds_from_1, worker_list
from .output import conclude, note, progress

__all__ = ["add_parser"]


def add_parser(experiments: Any) -> argparse.ArgumentParser:
    """Add ``parallel-backfill`` to ``experiments`` (the ``experiment`` command's subparsers)."""
    p = experiments.add_parser(
        "parallel-backfill", help="Riffel et al. 2024, Tables 1 and 2 (Beocat-like traces); --grid, --mechanisms",
        description="Riffel et al. (PEARC'24), Tables 1 and 2: Beocat-like traces replayed with 1, 2, 4 and 8 "
                    "backfill workers, where scheduling takes simulated time. --grid and --mechanisms run the "
                    "studies of where workers change the waits, on a scaled cluster.")
    study = p.add_mutually_exclusive_group()
    study.add_argument("--grid", action="store_true",
                       help="the grid workers x cost per test x load x main-scheduler model; with --out DIR, writes "
                            "grid.json and figures there")
    study.add_argument("--mechanisms", action="store_true",
                       help="AWT with 1 and 8 workers with each scheduler-time mechanism switched off, at 10 and "
                            "100 ms a test (scaled cluster, as --grid)")
    p.add_argument("--workers", default="1,2,4,8", help="comma-separated worker counts (--mechanisms: 1,8)")
    p.add_argument("--model", choices=("slurm", "slurm-17.02", "easy-model"), default="slurm",
                   help="slurm (default: preset slurm, slurm-sim clock), slurm-17.02 (preset slurm-17.02: a "
                        "49-reservation table, no cap on jobs tested) or easy-model (EASY with the model clock; "
                        "the tables only)")
    p.add_argument("--arrivals", choices=("pack", "profile"), default="pack",
                   help="jobs evenly spaced (pack, the authors' rule; default) or in bursts by the daily and "
                        "weekly profile")
    p.add_argument("--seed", type=int_in(0), default=0, help="the traces' seed (default 0)")
    p.add_argument("--bsld-bound", type=positive_seconds, default=600.0, help="the paper uses 10 minutes")
    p.add_argument("--procs", type=int_in(1, 1024), default=None,
                   help="local processes running replays (default: the core count)")
    p.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="run the replays on local processes (default) or as Ray tasks (pip install \"pbf[ray]\")")
    p.add_argument("--address", help="--backend ray: a running cluster's address (default: a local Ray instance)")
    tables = p.add_argument_group("the tables (without --grid or --mechanisms)")
    tables.add_argument("--jobs", type=int_in(1, MAX_GENERATED_JOBS), default=100_000, help="jobs per trace (100000)")
    tables.add_argument("--bf-interval", type=seconds_from_1, default=30, help="seconds between backfill passes (30)")
    tables.add_argument("--bf-max-time", type=seconds_from_1, default=None,
                        help="pass budget, s (default: bf-interval)")
    tables.add_argument("--cluster", default="beocat", metavar="beocat|beocat-gpu|FILE|none",
                        help="the cluster: Beocat's 299 nodes with their memory (default), another cluster of nodes, "
                             "or none: 9,128 interchangeable cores (the model before nodes existed)")
    tables.add_argument("--calibrate", choices=("cost", "load"), default=None,
                        help="first set one unknown by bisection so that 1 worker at high traffic waits the paper's "
                             "45.89 h (its only figure read): the cost per test, or the load (the packing window of "
                             "both traces); then the tables with nothing else changed")
    tables.add_argument("--no-resources", dest="resources", action="store_false",
                        help="Beocat-like jobs without memory or GPU requests (default: with them, as pbf gen beocat "
                             "--resources)")
    add_cost_options(p, "modelled microseconds per job test (slurm: 62; easy-model: 10000)",
                     "modelled microseconds per profile slot per test (slurm: 0; easy-model: 20)",
                     "the modelled cost of a pass (the tables; docs/engine.md)")
    scaled = p.add_argument_group("the scaled cluster (--grid, --mechanisms)")
    scaled.add_argument("--scale", type=float_in(1e-3, 1, "a fraction"), default=0.2,
                        help="cluster and trace scaled together (0.2: 1,826 cores, 20,000 jobs)")
    scaled.add_argument("--no-figures", action="store_true", help="--grid: no PNG figures (no matplotlib needed)")
    p.add_argument("--out", help="also write the JSON result to this file (--grid: the output directory for the "
                                 "result and its figures; without --out nothing is written)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """``pbf experiment parallel-backfill`` (the tables, ``--grid`` or ``--mechanisms``)."""
    if args.grid:
        return _run_grid(args)
    if args.mechanisms:
        return _run_mechanisms(args)
    from ..studies.experiments import ParallelBackfillExperiment, format_tables
    exp = ParallelBackfillExperiment(jobs=args.jobs, workers=worker_list(args.workers), seed=args.seed,
                                     arrivals=args.arrivals, model=args.model,
                                     bf_interval=args.bf_interval, bf_max_time=args.bf_max_time,
                                     **cost_settings(args), bsld_bound=args.bsld_bound, procs=args.procs,
                                     backend=args.backend, address=args.address,
                                     cluster=None if args.cluster == "none" else args.cluster,
                                     resources=args.resources, calibrate=args.calibrate)

    def line(row: dict) -> str:
        if "calibration" in row:
            return (f"  calibrating the {row['calibration']}: {row['value']:.4g} -> 1-worker AWT {row['awt_h']:.2f} h "
                    f"({row['wall_s']:.1f} s)")
        return f"  {row['traffic']} traffic, {row['workers']} workers: AWT {row['awt_h']:.2f} h ({row['wall_s']:.1f} s)"
    result = exp.run(progress(args, line))
    return conclude(args, result, lambda: format_tables(result))


def _run_grid(args: argparse.Namespace) -> int:
    from ..studies.worker_grid import WorkerGrid, format_grid, write_result
    grid = WorkerGrid(scale=args.scale, workers=worker_list(args.workers), seed=args.seed, arrivals=args.arrivals,
                      model=args.model, bsld_bound=args.bsld_bound, procs=args.procs, backend=args.backend,
                      address=args.address)
    total, done = len(grid.cells()), [0]

    def count(row: dict) -> None:
        done[0] += 1
        note(args, f"  [{done[0]}/{total}] main {row['main']}, {row['load_days']:g} d, {row['cost_us']} us/test, "
                   f"{row['workers']} workers: AWT {row['awt_h']:.2f} h ({row['wall_s']:.1f} s)")
    result = grid.run(count)
    return conclude(args, result, lambda: format_grid(result), json_view=result["awt_change"],
                    write=lambda result, out: write_result(result, out, figures=not args.no_figures))


def _run_mechanisms(args: argparse.Namespace) -> int:
    from ..studies.worker_grid import MechanismStudy, format_mechanisms
    workers = worker_list(args.workers) if args.workers != "1,2,4,8" else (1, 8)
    study = MechanismStudy(scale=args.scale, workers=workers, seed=args.seed, arrivals=args.arrivals,
                           bsld_bound=args.bsld_bound, procs=args.procs, backend=args.backend, address=args.address)
    result = study.run(progress(args, lambda row: f"  {row['variant']}, {row['cost_us']} us/test, {row['workers']} "
                                                  f"workers: AWT {row['awt_h']:.2f} h ({row['wall_s']:.1f} s)"))
    return conclude(args, result, lambda: format_mechanisms(result), indent=1)
