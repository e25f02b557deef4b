"""``pbf trace``: inspect a trace (``info``), convert a Slurm accounting dump to SWF (``from-sacct``)."""
from __future__ import annotations

import argparse

from .options import add_cleaning, read_trace
from .output import show

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``trace`` command's actions and their options."""
    tr = parser.add_subparsers(dest="trace_cmd", metavar="ACTION")
    tr.required = True
    info = tr.add_parser("info", help="jobs, span, offered load, cleaning counts, accuracy, users")
    info.add_argument("trace")
    add_cleaning(info)
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=run_info)
    fs = tr.add_parser("from-sacct", help="convert a Slurm accounting dump (sacct --parsable2) to SWF",
                       description="Convert a sacct --parsable2 dump (fields in any order, sacct -o ALL too; see "
                                   "pbf.workload.sacct for the rules: steps folded into their jobs, array "
                                   "elements and heterogeneous components kept as jobs, Slurm times and states "
                                   "mapped to SWF, partitions and QOS numbered in the header) to an SWF file, and "
                                   "say what every column gave and which are not modelled. A dump is also read "
                                   "directly wherever a trace is accepted.")
    fs.add_argument("dump", metavar="DUMP")
    fs.add_argument("-o", "--output", required=True, help="the SWF file to write (.gz: compressed)")
    fs.add_argument("--partition", help="keep this partition only")
    fs.add_argument("--since", help="keep jobs submitted at or after this date (YYYY-MM-DD[THH:MM:SS], UTC)")
    fs.add_argument("--until", help="keep jobs submitted before this date")
    fs.add_argument("--pack", type=float, default=None, metavar="DAYS",
                    help="re-space the submits evenly over DAYS days (the Parallel Backfill authors' 'pack')")
    fs.set_defaults(func=run_from_sacct)


def run_info(args: argparse.Namespace) -> int:
    """``pbf trace info``: the trace's summary as text or JSON."""
    from ..workload.info import format_summary, trace_summary
    summary = trace_summary(read_trace(args), args.units)
    show(args, summary, lambda: format_summary(summary))
    return 0


def run_from_sacct(args: argparse.Namespace) -> int:
    """``pbf trace from-sacct``: the dump as SWF, and what SWF cannot hold."""
    from ..workload import write_swf
    from ..workload.sacct import format_sacct, read_sacct
    table = read_sacct(args.dump, partition=args.partition, since=args.since, until=args.until, pack_days=args.pack)
    write_swf(table, args.output)
    dropped = ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in table.dropped.items() if n)
    print(f"wrote {len(table):,} jobs to {args.output}" + (f" (left out: {dropped})" if dropped else ""))
    print(format_sacct(table.sacct, label="read"))
    c = table.columns
    kept_out = [what for what, n in (("GPUs", (c["gpus"] > 0).sum()), ("memory per node", (c["mem_node_mb"] > 0).sum()),
                                     ("node counts", ((c["nodes_min"] > 1) | (c["nodes_max"] > 0)).sum()),
                                     ("features", (c["constraint"] > 0).sum()),
                                     ("GPU types", (c["gpu_type"] > 0).sum()), ("licenses", (c["licenses"] > 0).sum()),
                                     ("Reason", (c["reason"] > 0).sum()), ("Flags", (c["flags"] > 0).sum()),
                                     ("--exclusive", (c["exclusive"] > 0).sum()),
                                     ("array and heterogeneous job ids",
                                      ((c["array_job"] > 0) | (c["het_job"] > 0)).sum())) if n]
    if kept_out:
        print(f"note: SWF has no field for {', '.join(kept_out)} (the header keeps the legends); replay the dump "
              f"itself (pbf replay {args.dump} --cluster ...) to keep them")
    return 0
