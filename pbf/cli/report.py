"""``pbf report``: figures and one self-contained report.html from a run's output (:mod:`pbf.report`)."""
from __future__ import annotations

import argparse
import sys

from .output import note

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``report`` command's options."""
    parser.description = (
        "Figures (PNG) and one self-contained report.html from the summary.json, jobs.csv and passes.csv that "
        "pbf replay --out DIR writes: utilisation and queue over time, wait-time CDF by size class, bounded "
        "slowdown by size x run-time class, backfill depth and pass time (full and quick passes apart), tests per "
        "worker over the passes that ran on threads or modelled workers, and the summary in words with units and "
        "only the settings that applied; or "
        "from a pbf sweep folder (each metric against each parameter, a heatmap of the first two, the results "
        "table), or from a pbf experiment parallel-backfill --out RESULT.json (the metrics against workers, "
        "beside the paper's). Needs matplotlib (pip install \"pbf[plot]\").")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a folder written by pbf replay --out or by pbf sweep, "
                        "or a RESULT.json of pbf experiment parallel-backfill --out")
    parser.add_argument("--out", help="where to write the report (default RUN_DIR/report, or RESULT-report/)")
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Write the report and name its files."""
    from ..report import report_folder
    files = report_folder(args.run_dir, args.out)
    note(args, "wrote " + ", ".join(files), sys.stdout)
    return 0
