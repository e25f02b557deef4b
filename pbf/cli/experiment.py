"""``pbf experiment NAME``: reproduce a paper's experiment. Each experiment is a subcommand with only
its own options; all print their tables (``--json``: the result as JSON) and write files only
where ``--out`` says. ``parallel-backfill`` lives in :mod:`.experiment_parallel`."""
from __future__ import annotations

import argparse
import os

from ..bounded import MAX_GENERATED_JOBS
from . import experiment_parallel
from .options import int_in
from .output import conclude, progress

__all__ = ["add_arguments", "add_output_options"]

_TRACE_DIR = "the directory of the traces (default: $PBF_TRACES, else ../shared/traces beside the checkout)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``experiment`` command's experiments, each with its options."""
    parser.description = ("Reproduce a paper's experiment. All but parallel-backfill read the real logs from "
                          "$PBF_TRACES or ../shared/traces beside the checkout. "
                          "`pbf experiment NAME --help` lists each one's options.")
    sub = parser.add_subparsers(dest="name", metavar="EXPERIMENT")
    sub.required = True
    experiment_parallel.add_parser(sub)

    rp = sub.add_parser("runtime-prediction", help="Gaussier et al. 2015 on SDSC-SP2: EASY with predicted run times",
                        description="Gaussier et al. (SC'15), Tables 1, 6 and 7 on SDSC-SP2: EASY, the clairvoyant "
                                    "variants, EASY++ and the E-Loss regression with each correction and order.")
    rp.add_argument("--trace", help="the SDSC-SP2 log (default: SDSC-SP2-1998-4.2-cln.swf.gz in $PBF_TRACES, "
                                    "else in ../shared/traces beside the checkout)")
    rp.add_argument("--no-variants", action="store_true", help="skip the 120 E-Loss x correction x order replays")
    add_output_options(rp)
    rp.set_defaults(func=run_runtime_prediction)

    pf = sub.add_parser("priority-functions", help="RLScheduler's Table V heuristics replayed by pbf's engine",
                        description="Zhang et al. (RLScheduler, SC'20), Table V: FCFS, WFP3, UNICEP, SJF and F1 with "
                                    "and without backfilling on sampled sequences of 1,024 jobs of each trace.")
    pf.add_argument("--trace", help=_TRACE_DIR)
    pf.add_argument("--all-traces", action="store_true", help="also SDSC-SP2 and HPC2N")
    pf.add_argument("--sequences", type=int_in(1, 1_000_000), default=10, help="sampled sequences (10)")
    add_output_options(pf)
    pf.set_defaults(func=run_priority_functions)

    rs = sub.add_parser("rlscheduler", help="RLScheduler's evaluation (its rules and test windows) with the "
                                            "shipped learned models",
                        description="RLScheduler's evaluation (Zhang et al., SC'20): the heuristics and the learned "
                                    "job selection on its test windows, with and without backfilling, beside the "
                                    "published means.")
    rs.add_argument("--trace", help=_TRACE_DIR)
    _add_learned_options(rs)
    rs.add_argument("--held-out", action="store_true",
                    help="also 10 windows after the first 10,000 jobs (not trained on); for the 10,000-job "
                         "Lublin traces, 10 windows of a trace generated from their workload model "
                         "(pbf gen lublin --preset NAME --seed 1 --jobs 10240)")
    rs.add_argument("--held-out-windows", type=int_in(2, 10_000), default=None, metavar="N",
                    help="N held-out windows instead of 10 (implies --held-out; on the Lublin traces a sample of "
                         "N x 1,024 jobs); each row also gives the model's difference from the best heuristic "
                         "with its standard error")
    add_output_options(rs)
    rs.set_defaults(func=run_rlscheduler)

    rb = sub.add_parser("rlbackfilling", help="RLBackfilling's Tables 4 and 5 with the shipped backfilling models",
                        description="RLBackfilling's Tables 4 and 5: FCFS with EASY, EASY with actual run times and "
                                    "learned backfilling on its test windows, beside the published means.")
    rb.add_argument("--trace", help=_TRACE_DIR)
    _add_learned_options(rb)
    add_output_options(rb)
    rb.set_defaults(func=run_rlbackfilling)

    ca = sub.add_parser("coalloc", help="co-allocation (ASA_X) on SDSC-SP2, CTC-SP2 and Beocat-like traces, low "
                                        "and high load",
                        description="Co-allocation (ASA_X, docs/coalloc.md): no co-allocation, fixed fractions and the "
                                    "learners on SDSC-SP2, CTC-SP2 and Beocat-like traces, under low and high load.")
    ca.add_argument("--trace", help=_TRACE_DIR)
    ca.add_argument("--jobs", type=int_in(1, MAX_GENERATED_JOBS), default=100_000,
                    help="jobs per Beocat-like trace (100000)")
    add_output_options(ca, "the output directory for the result and its figures (without --out nothing is "
                           "written)")
    ca.set_defaults(func=run_coalloc)


def add_output_options(p: argparse.ArgumentParser,
                       out_help: str = "also write the JSON result to this file") -> None:
    """``--out``, ``--json`` and ``--quiet``: every experiment's."""
    p.add_argument("--out", help=out_help)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")


def _add_learned_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--policy", help="a .npz kernel policy (or shipped model name) for the learned column of every "
                                    "row (default: the shipped model of each row)")
    p.add_argument("--samples", type=int_in(0, 1_000_000), default=0,
                   help="also N sampled runs per window (the paper samples; default greedy only)")
    p.add_argument("--all-traces", action="store_true", help="also HPC2N and Lublin-2")
    p.add_argument("--seed", type=int_in(0), default=0, help="random seed of the sampled runs (default 0)")


def _bsld_line(row: dict) -> str:
    what = row.get("name") or f"{row['trace']} {row['priority']} backfill={row['backfill']}"
    return f"  {what}: {row['bsld']:.2f} ({row['wall_s']:.1f} s)"


def run_runtime_prediction(args: argparse.Namespace) -> int:
    """``pbf experiment runtime-prediction``."""
    from ..studies import validation as v
    trace = args.trace or os.path.join(v.default_trace_dir(), "SDSC-SP2-1998-4.2-cln.swf.gz")
    result = v.runtime_prediction(trace, progress(args, _bsld_line), variants=not args.no_variants)
    return conclude(args, result, lambda: v.format_runtime_prediction(result))


def run_priority_functions(args: argparse.Namespace) -> int:
    """``pbf experiment priority-functions``."""
    from ..studies import validation as v
    traces = tuple(v.RLS_TRACES) if args.all_traces else ("lublin-1", "lublin-2")
    result = v.priority_functions(args.trace or v.default_trace_dir(), sequences=args.sequences, traces=traces,
                                  progress=progress(args, _bsld_line))
    return conclude(args, result, lambda: v.format_priority_functions(result))


def _rlscheduler_line(row: dict) -> str:
    rl = row["pbf"].get("rl")
    return (f"  {row['trace']} backfill={row['backfill']} {row['windows']}: SJF {row['pbf']['sjf']:.2f}, "
            f"F1 {row['pbf']['f1']:.2f}" + (f", RL {rl:.2f}" if rl is not None else "") + f" ({row['wall_s']:.1f} s)")


def run_rlscheduler(args: argparse.Namespace) -> int:
    """``pbf experiment rlscheduler``."""
    from ..rl.evaluate import RLS_TRACES
    from ..rl.model_windows import HELD_OUT_WINDOWS
    from ..studies.rlscheduler import format_rlscheduler, rlscheduler_table
    traces = tuple(RLS_TRACES) if args.all_traces else ("lublin-1", "sdsc-sp2")
    result = rlscheduler_table(args.trace, traces=traces, model=args.policy, samples=args.samples, seed=args.seed,
                               progress=progress(args, _rlscheduler_line),
                               held_out=args.held_out or args.held_out_windows is not None,
                               held_out_windows=args.held_out_windows or HELD_OUT_WINDOWS)
    return conclude(args, result, lambda: format_rlscheduler(result))


def _rlbackfilling_line(row: dict) -> str:
    p = row["pbf"]
    return (f"  {row['trace']}: FCFS+EASY {p['fcfs+easy']:.2f}, FCFS+EASY-AR {p['fcfs+easy-ar']:.2f}"
            + (f", FCFS+RLBF {p['fcfs+rlbf']:.2f}" if "fcfs+rlbf" in p else "") + f" ({row['wall_s']:.1f} s)")


def run_rlbackfilling(args: argparse.Namespace) -> int:
    """``pbf experiment rlbackfilling``."""
    from ..studies.rlbackfilling import format_rlbackfilling, rlbackfilling_table
    traces = ("sdsc-sp2", "lublin-1", "hpc2n", "lublin-2") if args.all_traces else ("sdsc-sp2", "lublin-1")
    result = rlbackfilling_table(args.trace, traces=traces, model=args.policy, samples=args.samples, seed=args.seed,
                                 progress=progress(args, _rlbackfilling_line))
    return conclude(args, result, lambda: format_rlbackfilling(result))


def run_coalloc(args: argparse.Namespace) -> int:
    """``pbf experiment coalloc``: the tables; with ``--out``, the result and its figures in that folder."""
    from ..studies import coalloc
    result = coalloc.coalloc_experiment(args.trace, beocat_jobs=args.jobs, progress=progress(
        args, lambda row: f"  {row['trace']}, {row['load']} load, {row['policy']}: wait {row['wait_h']:.2f} h "
                          f"({row['wall_s']:.1f} s)"))
    return conclude(args, result, lambda: coalloc.format_coalloc(result),
                    json_view={k: v for k, v in result.items() if k != "series"}, write=coalloc.write_result)
