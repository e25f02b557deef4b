"""``pbf validate slurm CONF WORKLOAD``: the command line of the real-Slurm harness.

:func:`add_parser` adds the ``validate`` command (with its ``slurm`` subcommand) to a parser's
subcommands, :func:`add_arguments` fills a ``validate`` parser made elsewhere; :func:`run` runs it
and returns the exit status. ``python -m pbf.validate slurm ...`` runs the same without the main
command line.
"""
from __future__ import annotations

import argparse
import sys

from ..cli.options import positive_number, seconds_from_0

__all__ = ["add_parser", "add_arguments", "build_parser", "run", "main"]


def _count(text):
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return int(text)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``validate`` (and its ``slurm`` subcommand) to ``subparsers`` (an argparse subparsers
    action); returns the ``validate`` parser. The subcommand's ``func`` is :func:`run`."""
    p = subparsers.add_parser("validate", help="compare pbf with a real scheduler, job by job")
    add_arguments(p)
    return p


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` (the ``validate`` command's) its description and the ``slurm`` subcommand."""
    parser.description = "Compare pbf with a real scheduler, job by job (docs/slurm-harness.md)."
    _add_schedulers(parser)


def _add_schedulers(parser):
    sub = parser.add_subparsers(dest="validate_command", metavar="SCHEDULER", required=True)
    s = sub.add_parser(
        "slurm", help="run a workload through a real Slurm (private network namespace) and through pbf",
        description="Run WORKLOAD through a real Slurm configured from the site's CONF -- every daemon inside a "
                    "private network namespace, stopped at the end -- and through pbf with the settings that "
                    "stand for CONF's scheduler; write comparison.csv, summary.json and starts.png into --out. "
                    "Needs root, unshare, ip and Slurm (slurmctld, slurmd, slurm-client).")
    s.add_argument("conf", metavar="CONF", help="the site's slurm.conf (NodeName, PartitionName, scheduler lines)")
    s.add_argument("workload", metavar="WORKLOAD", help="an SWF file or a sacct --parsable2 dump")
    s.add_argument("--time-scale", type=positive_number, default=1.0, metavar="S",
                   help="run S workload seconds per real second (submissions, run times, limits; limits are "
                        "rounded up to whole minutes); default 1")
    s.add_argument("--out", default="validate-slurm", metavar="DIR", help="output folder (default validate-slurm)")
    s.add_argument("--repeat", type=_count, default=1, metavar="N",
                   help="run Slurm N times; N >= 2 also reports Slurm against itself (the noise floor)")
    s.add_argument("--partition", default=None, metavar="P",
                   help="submit every job to partition P (default: on a CONF of several partitions, each job to "
                        "its own -- the workload's Partition column, a,b for several -- and pbf replays them "
                        "all; else CONF's only partition)")
    s.add_argument("--timeout", type=positive_number, default=None, metavar="SEC",
                   help="wait at most SEC seconds per run after the first submission (default: an estimate "
                        "from the workload)")
    s.add_argument("--slurm-runs", default=None, metavar="DIR",
                   help="compare again the Slurm runs recorded in DIR (the --out of an earlier run of the same "
                        "workload and scale) instead of running Slurm: pbf's side is replayed anew")
    s.add_argument("--reservation", default=None, metavar="SPEC",
                   help="an advance reservation for the case, made in Slurm before the first submission and held "
                        "in pbf: 'Nodes=a1,a2 StartTime=+60 Duration=120 [Flags=MAINT,IGNORE_JOBS] [Name=N]', times "
                        "in seconds of the workload's clock (with --slurm-runs and no SPEC: the recorded dump)")
    s.add_argument("--drain", default=None, metavar="SPEC",
                   help="a drained node for the case, drained and resumed in Slurm at its times (slurmdbd runs; pbf "
                        "reads the run's own sacctmgr show events): 'Nodes=a2 StartTime=+60 Duration=300 "
                        "[State=DRAIN] [Reason=maint]', times in seconds of the workload's clock; 'none' with "
                        "--slurm-runs: pbf without the recorded drain (a what-if)")
    s.add_argument("--drain-start", default="inferred", choices=("inferred", "recorded"),
                   help="pbf's drain from a run's sacctmgr show events: 'inferred' (default) from the second after "
                        "the last job start on the node before the event (the first run's jobs say where they "
                        "ran; the dump starts a drain when the node became empty), 'recorded': the dump's time")
    s.add_argument("--limits", default=None, metavar="FILE",
                   help="QOS and association limits for the case: a file of sacctmgr commands ('modify qos normal "
                        "set GrpTRES=cpu=16', 'modify account a1 set GrpJobs=2') run in Slurm before it starts "
                        "(slurmdbd runs); pbf reads the run's own sacctmgr show qos and sacctmgr dump (with "
                        "--slurm-runs, a recorded limits case's dumps without it; 'none': pbf without them, a what-if)")
    s.add_argument("--as-users", action="store_true",
                   help="submit each job as its trace user: a throwaway Unix user pbfu<N> for trace user N, made "
                        "only inside the run's private mount namespace (per-user QOS limits such as MaxJobsPU, "
                        "MaxTRESPU then count the trace's users; default: every job is root's)")
    s.add_argument("--end-runs-main", choices=("yes", "no"), default="no",
                   help="pbf's side runs its main scheduler at each job's end (a what-if: Slurm 22.05 without "
                        "SchedulerParameters defer; `pbf replay --end-runs-main`)")
    s.add_argument("--end-after-cycle", choices=("yes", "no"), default="no",
                   help="with --end-runs-main yes: a short job's end after its last second's backfill cycle, "
                        "before that second's main scheduler (a what-if; `pbf replay --end-after-cycle`)")
    s.add_argument("--end-lag-below", type=seconds_from_0, default=None, metavar="S",
                   help="pbf's side sees a job's end a second late when it ran less than S seconds (0: every "
                        "job; default: the median of the compared runs' own timing, their launch and completion "
                        "time over their backfill cycles' drift, read from slurmctld's log; where no log gives "
                        "it, the --slurm-conf setting, 13)")
    s.add_argument("--end-lag-threshold", choices=("median", "per-run"), default="median",
                   help="with several Slurm runs of their own timing: 'median' (default) compares every run with "
                        "one pbf replay at the median of their thresholds; 'per-run' replays pbf once per distinct "
                        "threshold and compares each run with the replay at its own (a run whose log gives none: "
                        "at the median), adding the per-run lines and summary.json 'pbf_per_run'")
    s.add_argument("--quiet", action="store_true", help="no progress on stderr")
    s.set_defaults(func=run)
    return s


def build_parser() -> argparse.ArgumentParser:
    """A parser of its own (``python -m pbf.validate``), with the same subcommands."""
    parser = argparse.ArgumentParser(prog="python -m pbf.validate",
                                     description="Compare pbf with a real scheduler, job by job "
                                                 "(docs/slurm-harness.md).")
    _add_schedulers(parser)
    return parser


def _under(v):
    return "all jobs" if v == 0 else f"jobs under {v} s"


def _timing_lines(s):
    # Slurm's timing (run 1's log) and the threshold pbf used, with where it came from
    tm = (s.get("runs") or [{}])[0].get("timing") or {}
    lag = s.get("pbf_end_lag_below") or {}
    out = []
    if tm.get("launch_completion_s") is not None and tm.get("cycle_drift_s") is not None:
        each = lag.get("runs_s") or [None]
        late = _under(each[0]) if each[0] is not None else "?"
        out.append(f"timing       Slurm run 1: launch and completion {1000 * tm['launch_completion_s']:.0f} ms, "
                   f"cycles {1000 * tm['cycle_drift_s']:.1f} ms later each second: ends of {late} seen a "
                   "second late")
    if s.get("pbf_per_run") and s.get("pbf_end_lag_threshold") == "per-run":
        from .per_run import console_lines
        return out + console_lines(s)
    if lag:
        runs = ", ".join("no log" if v is None else ("all jobs" if v == 0 else f"{v} s") for v in lag["runs_s"])
        said = {"given": "as given",
                "runs": f"the median of the runs' own timing: {runs}; --end-lag-below S to choose",
                "settings": "the --slurm-conf default: no run's log gives Slurm's timing"}[lag["from"]]
        out.append(f"end lag      pbf: ends of {_under(lag['s'])} seen a second late: --end-lag-below {lag['s']} "
                   f"({said})")
    if s.get("pbf_per_run"):            # (the default mode, its runs on clocks of their own)
        from .per_run import console_lines
        out += console_lines(s)
    if s.get("pbf_resv_check_at") is not None:
        at = s["pbf_resv_check_at"]
        out.append(f"checks       pbf: slurmctld's time-limit checks (they end a job inside a reservation at its end) "
                   f"every 30 s from {at:+d} s, as in the first run's log that shows one")
    return out


def _print_summary(s, out):
    a = s["pbf_vs_slurm"]
    lines = [f"slurm        {s['slurm_version']}; {s['jobs']} jobs, time scale {s['time_scale']:g}, "
             f"{s['repeat']} run(s)"]

    def agree(a):
        if not a["jobs"]:
            return "no job started on both sides"
        return (f"{a['within_share']:.1%} of {a['jobs']} jobs within {a['window_s']:g} s; median "
                f"{a['median_abs_s']:.1f} s, worst {a['worst_abs_s']:.0f} s (job {a['worst_job']}), mean "
                f"{a['mean_diff_s']:+.1f} s")
    lines.append(f"pbf vs slurm {agree(a)}")
    if s.get("slurm_vs_slurm"):
        for k, b in enumerate(s["slurm_vs_slurm"], 2):
            lines.append(f"slurm run {k}  {agree(b)} (against run 1)")
    if s.get("pbf_vs_pbf_timers_shifted"):
        lines.append(f"pbf vs pbf   {agree(s['pbf_vs_pbf_timers_shifted'])} (its timers 1 s later)")
    def nodes(n):
        if not n or not n["jobs"]:
            return "no job started on both sides"
        near = (f", {n['same_share_same_start']:.1%} of the {n['jobs_same_start']} started within the window"
                if n["jobs_same_start"] else "")
        return f"same node set for {n['same_share']:.1%} of {n['jobs']} jobs{near}"
    lines.append(f"nodes        pbf: {nodes(s.get('nodes_pbf_vs_slurm'))}")
    for k, n in enumerate(s.get("nodes_slurm_vs_slurm") or [], 2):
        lines.append(f"             slurm run {k}: {nodes(n)}")
    lines += _timing_lines(s)
    by = s.get("pbf_started_by_scheduler")
    if by and s.get("slurm_started_by"):
        sb = s["slurm_started_by"]
        lines.append(f"started by   Slurm run 1: main scheduler {sb.get('main', 0)}, backfill {sb.get('backfill', 0)}; "
                     f"pbf: main scheduler {by['main']}, backfill {by['backfill']}")
    pend = (s.get("runs") or [{}])[0].get("pending_reasons")
    if pend and pend.get("jobs"):
        since = pend.get("from", "the last submission")
        lines.append(f"pending      Slurm run 1 (squeue from {since} on): " + ", ".join(
            f"{r} {n} jobs" for r, n in sorted(pend["jobs"].items(), key=lambda x: -x[1])))
    parts = s.get("partitions")
    if parts:
        out_p = parts["outside_one_partition"]
        lines.append(f"partitions   {','.join(parts['names'])}: jobs " + ", ".join(
            f"{k} {v}" for k, v in parts["jobs_by_partitions"].items()) + f"; on nodes of no single one of their "
            f"partitions: pbf {out_p['pbf']}, Slurm {', '.join(map(str, out_p['slurm']))}")
    rv = s.get("reservation")
    if rv:
        inside = rv["jobs_inside"]
        for w in rv["windows_run_clock"]:
            lines.append(f"reservation  {w['name']} on {','.join(w['nodes'])} from +{w['start_s']} s to "
                         f"+{w['end_s']} s of the run ({rv['pbf_read_from']})")
        nm = rv.get("named")
        lines.append(f"             {'other ' if nm else ''}jobs on its nodes inside it: pbf {len(inside['pbf'])}, "
                     "Slurm " + ", ".join(str(len(x)) for x in inside["slurm"]))
        if nm:
            def _n(key):
                return f"pbf {len(nm['pbf'][key])}, Slurm " + ", ".join(str(len(x[key])) for x in nm["slurm"])
            lines.append(f"             jobs that name it ({len(nm['jobs'])}): started inside it {_n('inside')}; "
                         f"elsewhere {_n('outside')}; never {_n('not_started')}; running at its end {_n('past_end')}; "
                         f"ended by it (TIMEOUT) {_n('timeout')}")
    dr = s.get("drain")
    if dr:
        inside = dr["started_inside"]
        for w in dr["windows_run_clock"]:
            end = f"+{w['end_s']} s" if w["end_s"] is not None else "the end"
            lines.append(f"drain        {','.join(w['nodes'])} {w['kind']} from +{w['start_s']} s to {end} of the run "
                         f"({dr['pbf_read_from']})")
        for m in dr.get("drains_moved") or []:
            lines.append(f"             {m['node']}: moved {m['by_s']} s earlier than the dump's +{m['recorded_s']} s, "
                         f"to the second after its last job start (+{m['last_start_s']} s, Slurm run 1; "
                         "--drain-start recorded keeps the dump's time)")
        for a in (dr.get("asked_run_clock") or [])[:1]:
            if a:
                end = f"+{a['end_s']:.0f} s" if a["end_s"] is not None else "the end"
                lines.append(f"             asked of Slurm run 1: from +{a['start_s']:.0f} s to {end} (scontrol)")
        asked = dr.get("pbf_started_inside_asked")
        lines.append(f"             jobs started on them while drained: pbf {len(inside['pbf'])}"
                     + (f" ({len(asked)} inside the drain as asked)" if asked is not None else "") + ", Slurm "
                     + ", ".join(str(len(x)) for x in inside["slurm"]))
    lim = s.get("limits")
    if lim:
        for reason, r in lim["by_reason"].items():
            rel = f" ({r['relative_difference']:+.0%})" if r["relative_difference"] is not None else ""
            last = (f"; as the last limit: Slurm {', '.join(map(str, r['slurm_last']))}, pbf {r['pbf']}"
                    if r["slurm_last"] else "")
            lines.append(f"limits       {reason}: jobs held, Slurm {', '.join(map(str, r['slurm']))}"
                         f" (mean {r['slurm_mean']:.1f}), pbf {r['pbf']}{rel}{last}")
    w = s["awt_s"]
    if w["slurm"] is not None:
        rel = f"{w['relative_difference']:+.1%}" if w["relative_difference"] is not None else "n/a"
        lines.append(f"AWT          Slurm {w['slurm']:.1f} s, pbf {w['pbf']:.1f} s ({rel}); in workload seconds "
                     f"{w['slurm_workload_s']:.0f} and {w['pbf_workload_s']:.0f}")
    lines.append(f"unmodelled   {len(s['unmodelled'])} settings (summary.json 'unmodelled')")
    lines.append(f"wrote        {out}/comparison.csv, summary.json, "
                 + (s["figure"] if not s["figure"].startswith("skipped") else f"(figure {s['figure']})"))
    print("\n".join(lines))


def run(args: argparse.Namespace) -> int:
    """Run ``pbf validate slurm`` with parsed ``args``; 0 on success, 2 when Slurm cannot run here."""
    from ..errors import ConfigError
    from .compare import validate_slurm
    from .slurm_run import SlurmUnavailable
    try:
        summary = validate_slurm(args.conf, args.workload, time_scale=args.time_scale, out=args.out,
                                 repeat=args.repeat, partition=args.partition, timeout=args.timeout,
                                 verbose=not args.quiet, slurm_runs=args.slurm_runs,
                                 reservation=args.reservation, drain=args.drain, limits=args.limits,
                                 end_lag_below=args.end_lag_below, drain_start=args.drain_start,
                                 as_users=args.as_users, end_runs_main=args.end_runs_main == "yes",
                                 end_after_cycle=args.end_after_cycle == "yes",
                                 end_lag_threshold=args.end_lag_threshold)
    except SlurmUnavailable as exc:
        print(f"pbf validate slurm: {exc}", file=sys.stderr)
        return 2
    except ConfigError as exc:
        print(f"pbf validate slurm: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"pbf validate slurm: interrupted; every daemon was stopped (records in {args.out}/slurm)",
              file=sys.stderr)
        return 130
    _print_summary(summary, args.out)
    bad = [r for r in summary["runs"] if r["errors"] or not r["finished"]]
    for r in bad:
        print(f"pbf validate slurm: run {r['run']}: " + ("; ".join(r["errors"]) or "did not finish before the timeout"),
              file=sys.stderr)
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m pbf.validate``: parse ``argv`` (default: the command line) and run; the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return args.func(args)
