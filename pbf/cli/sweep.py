"""``pbf sweep``: run every cell of a sweep spec (:mod:`pbf.sweeps`) on local processes or a Ray cluster."""
from __future__ import annotations

import argparse
import os
import sys

from .options import int_in
from .output import note

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``sweep`` command's options."""
    parser.description = ("Run every cell of a sweep spec (TOML: [trace], [config], [grid]; see pbf.sweep) and "
                          "append each cell's metrics to OUT/results.jsonl as it finishes; OUT/results.csv has one "
                          "row per cell. Exit status 1 if a cell failed (its error is recorded; the others "
                          "complete).")
    parser.add_argument("spec", metavar="SPEC.toml")
    parser.add_argument("--out", help="output folder (default: the spec's name without .toml)")
    parser.add_argument("--jobs", type=int_in(1), default=None, help="local processes (default: the cores)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local",
                        help="local processes (default) or a Ray cluster (pip install \"pbf[ray]\")")
    parser.add_argument("--address", help="ray: the cluster's address (ray start --head prints it); default: "
                                          "start a Ray instance on this machine")
    parser.add_argument("--resume", action="store_true", help="complete the cells OUT has no ok result for")
    parser.add_argument("--quiet", action="store_true")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the sweep; exit status 1 if a cell failed."""
    from ..sweeps import sweep
    out = args.out or os.path.splitext(os.path.basename(args.spec))[0]
    records = sweep(args.spec, out, jobs=args.jobs, backend=args.backend, address=args.address, resume=args.resume,
                    progress=not args.quiet)
    ok = sum(r["status"] == "ok" for r in records)
    failed = [r for r in records if r["status"] != "ok"]
    note(args, f"wrote {os.path.join(out, 'results.csv')} and results.jsonl: {ok} cells ok, {len(failed)} failed",
         sys.stdout)
    for r in failed[:5]:
        note(args, f"  failed {r['cell']} {r['params']}: {r['error'].splitlines()[0]}", sys.stdout)
    return 1 if failed else 0
