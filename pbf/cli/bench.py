"""``pbf bench``: time a slice of the benchmarks of :mod:`pbf.benchmark`."""
from __future__ import annotations

import argparse
import os

from .options import int_in, worker_list
from .output import show

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``bench`` command's options."""
    parser.description = ("Time a slice of benchmarks and print medians of interleaved trials, the core count "
                          "and how busy the machine was. Every ratio says its direction (1.41x faster, 0.62x, "
                          "slower) or that the trials cannot tell it from 1 (0.97x, within noise); each pass "
                          "scenario answers whether N workers help (what a replay would choose, and every test "
                          "forced onto threads). See docs/benchmarks.md.")
    parser.add_argument("--slice", choices=("pass", "matrix", "large", "bitmap", "growth", "replay", "rl", "all"),
                        default="pass", help="pass: headline passes vs the reference (default); matrix: "
                        "the whole pass matrix; large: passes on 160,000 nodes with 100,000 queued (Slurm-like) "
                        "and 2,000 (conservative), ARCHER2-sized passes and a 100,000-job node replay "
                        "(PBF_BENCH_NODE_REPLAY_JOBS=N another size, 0 none); bitmap: bitmap operations; "
                        "growth: cost vs queue and units with log-log slopes; replay: trace replay throughput; "
                        "rl: learned-policy environment steps and kernel decisions (needs gymnasium); all")
    parser.add_argument("--trials", type=int_in(1), default=5, help="interleaved trials per benchmark (default 5)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    parser.add_argument("--no-reference", action="store_true", help="skip the pure-Python reference pass")
    parser.add_argument("--workers", default="2", help="worker counts compared with 1 on the pass slice, "
                        "e.g. 2,4,8 (default 2)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the slice(s) and print the rows with the machine's load."""
    from .. import benchmark
    slices = ("bitmap", "pass", "growth", "replay", "rl") if args.slice == "all" else (args.slice,)
    workers = tuple(w for w in worker_list(args.workers) if w > 1)
    rows, load = benchmark.run_slices(slices, trials=args.trials, quick=args.quick,
                                      reference=not args.no_reference, workers=workers)
    show(args, rows, lambda: benchmark.format_rows(rows, load),
         {"cores": os.cpu_count(), "other_processes_cpu_cores": load.other_cores, "wall_s": load.wall, "rows": rows})
    return 0
