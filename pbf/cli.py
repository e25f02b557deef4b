"""The ``pbf`` command line."""
import argparse
import json
import sys

from .errors import PbfError

__all__ = ["main"]


def _add_cleaning(p):
    g = p.add_argument_group("cleaning (defaults: the PWA/pyss convention)")
    g.add_argument("--units-from", choices=("max", "requested", "allocated"), default="max",
                   help="SWF field giving a job's units: max of requested and allocated (default)")
    g.add_argument("--keep-nonpositive-runtime", action="store_true",
                   help="keep jobs with run time <= 0 (dropped by default)")
    g.add_argument("--keep-nonpositive-units", action="store_true",
                   help="keep jobs asking for <= 0 units (dropped by default)")
    g.add_argument("--no-clip-runtime", action="store_true",
                   help="do not cut run times longer than the requested time")
    g.add_argument("--fill-missing-request", action="store_true",
                   help="use the run time as requested time where none is given")
    g.add_argument("--oversize", choices=("reject", "drop"), default="reject",
                   help="jobs larger than the cluster: rejected by the engine (default) or dropped")
    g.add_argument("--units", type=int, default=None,
                   help="cluster size in units (default: the header's MaxProcs, else MaxNodes)")
    g.add_argument("--skip-bad-lines", action="store_true",
                   help="skip malformed records (count and report them) instead of failing")
    g.add_argument("--sort", action="store_true",
                   help="sort jobs by submit time instead of failing on times that go backwards")


def _cleaning(args):
    from .workload import Cleaning
    return Cleaning(units_from=args.units_from,
                    drop_nonpositive_runtime=not args.keep_nonpositive_runtime,
                    drop_nonpositive_units=not args.keep_nonpositive_units,
                    clip_runtime_to_request=not args.no_clip_runtime,
                    fill_missing_request=args.fill_missing_request, oversize=args.oversize,
                    cluster_units=args.units)


def _read(args):
    from .workload import read_swf
    return read_swf(args.trace, _cleaning(args), skip_bad_lines=args.skip_bad_lines, sort=args.sort)


def _write(table, path, quiet):
    from .workload import write_swf
    write_swf(table, path)
    if not quiet:
        print(f"wrote {len(table):,} jobs to {path}", file=sys.stderr)


def cmd_gen_beocat(args):
    from .workload.beocat import TRAFFIC_WINDOWS, generate_beocat
    from .workload.timeparse import parse_duration
    window = parse_duration(args.window, "--window") if args.window else TRAFFIC_WINDOWS[args.traffic]
    table = generate_beocat(args.jobs, window, seed=args.seed, arrivals=args.arrivals)
    _write(table, args.output, args.quiet)
    return 0


def cmd_gen_lublin(args):
    from .workload.lublin import generate_lublin
    overrides = {k: getattr(args, k) for k in ("uhi", "umed", "ulow", "uprob") if getattr(args, k) is not None}
    table = generate_lublin(args.jobs, args.preset, seed=args.seed, start_hour=args.start_hour, **overrides)
    _write(table, args.output, args.quiet)
    return 0


def cmd_gen_rescale(args):
    from .workload import Cleaning, read_swf
    from .workload.rescale import rescale
    from .workload.timeparse import parse_duration
    window = parse_duration(args.window, "--window")
    table = read_swf(args.trace, Cleaning.none(), skip_bad_lines=args.skip_bad_lines, sort=args.sort)
    out = rescale(table, window, args.mode)
    out.header.add_line(f" Note: pbf gen rescale --window {window} --mode {args.mode} of {args.trace}")
    _write(out, args.output, args.quiet)
    return 0


def cmd_trace_info(args):
    from .workload.info import format_summary, trace_summary
    table = _read(args)
    summary = trace_summary(table, args.units)
    print(json.dumps(summary, indent=2) if args.json else format_summary(summary))
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="pbf", description="Parallel-backfill HPC scheduler engine.")
    parser.add_argument("--version", action="version", version=f"pbf {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    gen = sub.add_parser("gen", help="generate or transform workloads").add_subparsers(
        dest="generator", metavar="GENERATOR")
    gen.required = True
    b = gen.add_parser("beocat", help="a Beocat-like trace (the Parallel Backfill paper's datasets)")
    b.add_argument("--traffic", choices=("high", "low"), default="high",
                   help="high: the jobs within 7 days; low: the same jobs within 14 days")
    b.add_argument("--jobs", type=int, default=100_000, help="number of jobs (default 100000)")
    b.add_argument("--window", help="submit window, e.g. 7d (overrides --traffic)")
    b.add_argument("--arrivals", choices=("profile", "pack"), default="profile",
                   help="bursts on the daily/weekly profile (default) or evenly packed")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("-o", "--output", required=True, help="output SWF (.gz to compress)")
    b.add_argument("--quiet", action="store_true")
    b.set_defaults(func=cmd_gen_beocat)

    lu = gen.add_parser("lublin", help="the Lublin-Feitelson 2003 model")
    from .workload.lublin import LUBLIN_PRESETS
    lu.add_argument("--jobs", type=int, default=10_000)
    lu.add_argument("--preset", choices=tuple(LUBLIN_PRESETS), default="lublin-1",
                    help="typed / typeless (the program's constants) or the Lublin-1 / Lublin-2 fits")
    lu.add_argument("--seed", type=int, default=0)
    lu.add_argument("--start-hour", type=int, default=0, help="hour of day the trace starts at")
    for name in ("uhi", "umed", "ulow", "uprob"):
        lu.add_argument(f"--{name}", type=float, help=f"override {name.upper()} for every job type")
    lu.add_argument("-o", "--output", required=True)
    lu.add_argument("--quiet", action="store_true")
    lu.set_defaults(func=cmd_gen_lublin)

    rs = gen.add_parser("rescale", help="compress or stretch a trace's submit times into a window")
    rs.add_argument("trace")
    rs.add_argument("--window", required=True, help="target window, e.g. 7d, 36h, 86400")
    rs.add_argument("--mode", choices=("linear", "pack"), default="linear",
                    help="linear: scale every gap; pack: evenly spaced (the paper's 'pack,N')")
    rs.add_argument("--skip-bad-lines", action="store_true")
    rs.add_argument("--sort", action="store_true")
    rs.add_argument("-o", "--output", required=True)
    rs.add_argument("--quiet", action="store_true")
    rs.set_defaults(func=cmd_gen_rescale)

    tr = sub.add_parser("trace", help="inspect traces").add_subparsers(dest="trace_cmd", metavar="ACTION")
    tr.required = True
    info = tr.add_parser("info", help="jobs, span, offered load, cleaning counts, accuracy, users")
    info.add_argument("trace")
    _add_cleaning(info)
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=cmd_trace_info)
    return parser


def _version():
    from . import __version__
    return __version__


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except PbfError as exc:
        print(f"pbf: error: {exc}", file=sys.stderr)
        return 2
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        print(f"pbf: error: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 2
