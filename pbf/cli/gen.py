"""``pbf gen``: generate workloads (``beocat``, ``lublin``) or transform one (``rescale``)."""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..bounded import MAX_GENERATED_JOBS
from ..errors import ConfigError
from .options import float_in, int_in
from .output import note

if TYPE_CHECKING:
    from ..workload import JobTable

__all__ = ["LUBLIN_PRESET_NAMES", "add_arguments"]

#: pbf.workload.lublin.LUBLIN_PRESETS' names (here so that building the parser does not import numpy)
LUBLIN_PRESET_NAMES = ("typed", "typeless", "lublin-1", "lublin-2")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``gen`` command's generators and their options."""
    parser.description = ("Generate workloads (Beocat-like, Lublin-Feitelson, ARCHER2-sized) or rescale a "
                          "trace's submit times; `pbf gen GENERATOR --help` lists each one's options.")
    gen = parser.add_subparsers(dest="generator", metavar="GENERATOR")
    gen.required = True
    b = gen.add_parser("beocat", help="a Beocat-like trace (the Parallel Backfill paper's datasets)",
                       description="A Beocat-like trace: jobs drawn to the figures of Beocat's 2021 job extract "
                                   "(cores, requested times and how much of them jobs use, memory per core) for "
                                   "Beocat's normal partition (9,128 cores), in bursts of identical submissions on "
                                   "its hour-of-day and day-of-week profile. --traffic high puts 100,000 jobs in "
                                   "7 days (the built-in trace of pbf replay), low the same jobs in 14 days. The "
                                   "same seed gives the same bytes.")
    b.add_argument("--traffic", choices=("high", "low"), default="high",
                   help="high: the jobs within 7 days; low: the same jobs within 14 days")
    b.add_argument("--jobs", type=int_in(1, MAX_GENERATED_JOBS), default=100_000,
                   help="number of jobs (default 100000)")
    b.add_argument("--window", help="submit window, e.g. 7d (overrides --traffic)")
    b.add_argument("--arrivals", choices=("profile", "pack"), default="profile",
                   help="bursts on the daily/weekly profile (default) or evenly packed")
    b.add_argument("--seed", type=int_in(0), default=0, help="random seed (default 0)")
    b.add_argument("--resources", action="store_true",
                   help="also GPU requests (2.9%% of jobs, on one node; memory per core is always drawn); "
                        "needs -o NAME.sacct")
    b.add_argument("-o", "--output", required=True,
                   help="output SWF (.gz to compress), or NAME.sacct for a sacct --parsable2 dump")
    b.add_argument("--quiet", action="store_true")
    b.set_defaults(func=run_beocat)

    lu = gen.add_parser("lublin", help="the Lublin-Feitelson 2003 model")
    lu.add_argument("--jobs", type=int_in(1, MAX_GENERATED_JOBS), default=10_000, help="number of jobs (default 10000)")
    lu.add_argument("--preset", choices=LUBLIN_PRESET_NAMES, default="lublin-1",
                    help="typed / typeless (the program's constants) or the Lublin-1 / Lublin-2 fits")
    lu.add_argument("--seed", type=int_in(0), default=0, help="random seed (default 0)")
    lu.add_argument("--start-hour", type=int_in(0, 23), default=0, help="hour of day the trace starts at")
    for name in ("uhi", "umed", "ulow", "uprob"):
        lu.add_argument(f"--{name}", type=float_in(0, 1 if name == "uprob" else 24),
                        help=f"override {name.upper()} for every job type")
    lu.add_argument("-o", "--output", required=True)
    lu.add_argument("--quiet", action="store_true")
    lu.set_defaults(func=run_lublin)

    ar = gen.add_parser("archer2", help="an ARCHER2-sized synthetic workload (5,860 nodes of 128 cores) as a sacct "
                                        "dump, and its slurm.conf",
                        description="A synthetic workload of ARCHER2's shape (5,860 nodes of 128 cores; 90% "
                                    "node-exclusive jobs of 1 to 1,024 nodes, 10% shared jobs of 1 to 32 cores; "
                                    "limits of 24 or 48 hours), for benchmarks at that scale: not ARCHER2's own "
                                    "workload (pbf/workload/archer2.py says what is drawn).")
    ar.add_argument("--jobs", type=int_in(1, MAX_GENERATED_JOBS), default=20_000, help="number of jobs (20000)")
    ar.add_argument("--window", default="14d", help="submit window, e.g. 14d (default)")
    ar.add_argument("--load", type=float_in(0.01, 100, "a load"), default=0.95,
                    help="share of the cluster's core-seconds the jobs offer over the window (0.95; limited by the "
                         "QOS limits: the header's note says what was reached)")
    ar.add_argument("--nodes", type=int_in(1, 93_760), default=5_860, help="nodes of 128 cores (5860)")
    ar.add_argument("--seed", type=int_in(0), default=0, help="random seed (default 0)")
    ar.add_argument("--slurm-conf", metavar="FILE", help="also write the cluster as a slurm.conf")
    ar.add_argument("-o", "--output", required=True, help="the sacct --parsable2 dump (NAME.sacct)")
    ar.add_argument("--quiet", action="store_true")
    ar.set_defaults(func=run_archer2)

    rs = gen.add_parser("rescale", help="compress or stretch a trace's submit times into a window")
    rs.add_argument("trace")
    rs.add_argument("--window", required=True, help="target window, e.g. 7d, 36h, 86400")
    rs.add_argument("--mode", choices=("linear", "pack"), default="linear",
                    help="linear: scale every gap; pack: evenly spaced (the paper's 'pack,N')")
    rs.add_argument("--skip-bad-lines", action="store_true")
    rs.add_argument("--sort", action="store_true")
    rs.add_argument("-o", "--output", required=True)
    rs.add_argument("--quiet", action="store_true")
    rs.set_defaults(func=run_rescale)


def _write(args: argparse.Namespace, table: JobTable) -> None:
    from ..workload import write_swf
    write_swf(table, args.output)
    note(args, f"wrote {len(table):,} jobs to {args.output}")


def run_beocat(args: argparse.Namespace) -> int:
    """``pbf gen beocat``: an SWF file, or a sacct dump (with ``--resources``, the only form with GPUs)."""
    from ..workload.beocat import TRAFFIC_WINDOWS, generate_beocat
    from ..workload.timeparse import parse_duration
    window = parse_duration(args.window, "--window") if args.window else TRAFFIC_WINDOWS[args.traffic]
    out = str(args.output)
    if args.resources and not out.endswith(".sacct"):
        raise ConfigError(f"--resources: GPU requests need the sacct form (SWF has no GPU field); give -o NAME.sacct, "
                          f"got {out!r}")
    table = generate_beocat(args.jobs, window, seed=args.seed, arrivals=args.arrivals, resources=args.resources)
    if out.endswith(".sacct"):
        from ..workload.sacct_dump import write_sacct
        write_sacct(table, out)
        gpu_jobs = int((table.columns["gpus"] > 0).sum()) if "gpus" in table.columns else 0
        note(args, f"wrote {len(table):,} jobs to {out} (sacct --parsable2; {gpu_jobs:,} GPU jobs)", sys.stdout)
        return 0
    _write(args, table)
    return 0


def run_archer2(args: argparse.Namespace) -> int:
    """``pbf gen archer2``: the ARCHER2-like workload as a sacct dump (and its slurm.conf)."""
    from ..workload.archer2 import archer2_slurm_conf, generate_archer2
    from ..workload.sacct_dump import write_sacct
    from ..workload.timeparse import parse_duration
    window = parse_duration(args.window, "--window")
    if not str(args.output).endswith(".sacct"):
        raise ConfigError(f"-o: the workload has memory per node and node counts, which SWF cannot carry; give "
                          f"NAME.sacct, got {args.output!r}")
    table = generate_archer2(args.jobs, window, seed=args.seed, load=args.load, nodes=args.nodes)
    write_sacct(table, args.output)
    wrote = [args.output]
    if args.slurm_conf:
        archer2_slurm_conf(args.slurm_conf, args.nodes)
        wrote.append(args.slurm_conf)
    note(args, f"wrote {len(table):,} jobs to {' and the cluster to '.join(wrote)} "
               f"({table.header.lines[-1].split('; ')[-1].strip()})", sys.stdout)
    return 0


def run_lublin(args: argparse.Namespace) -> int:
    """``pbf gen lublin``: a trace of the Lublin-Feitelson model."""
    from ..workload.lublin import generate_lublin
    overrides = {k: getattr(args, k) for k in ("uhi", "umed", "ulow", "uprob") if getattr(args, k) is not None}
    table = generate_lublin(args.jobs, args.preset, seed=args.seed, start_hour=args.start_hour, **overrides)
    _write(args, table)
    return 0


def run_rescale(args: argparse.Namespace) -> int:
    """``pbf gen rescale``: a trace's submit times compressed or stretched into a window."""
    from ..workload import Cleaning, read_swf
    from ..workload.rescale import rescale
    from ..workload.timeparse import parse_duration
    window = parse_duration(args.window, "--window")
    table = read_swf(args.trace, Cleaning.none(), skip_bad_lines=args.skip_bad_lines, sort=args.sort)
    out = rescale(table, window, args.mode)
    out.header.add_line(f" Note: pbf gen rescale --window {window} --mode {args.mode} of {args.trace}")
    _write(args, out)
    return 0
