"""``pbf replay``: replay a trace (default: the built-in Beocat-like one) through the scheduler and
report its metrics; ``--out`` writes summary.json, jobs.csv and passes.csv, ``--report`` the figures."""
from __future__ import annotations

import argparse
import sys
import time

from ..errors import ConfigError
from .options import (
    add_cleaning,
    add_cost_options,
    count_from_1,
    float_in,
    int_in,
    micros,
    positive_seconds,
    read_trace,
    reservations,
    seconds_from_0,
    seconds_from_1,
)
from .output import note, show
from .process import STARTED, release_collector
from .replay_text import format_replay, format_slurm_conf

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    from typing import Any

    from ..replayer import ReplayConfig
    from ..workload import JobTable

__all__ = ["add_arguments"]


def _threads(text: str) -> int | str:
    """--threads: ``auto`` or a whole number from 1 to 256."""
    if text == "auto":
        return text
    try:
        return int_in(1, 256)(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected auto or a whole number from 1 to 256, got {text!r}") from None


def add_arguments(rp: argparse.ArgumentParser) -> None:
    """The ``replay`` command's options."""
    rp.description = ("Replay an SWF trace (default: the built-in Beocat-like high-traffic trace) and report AWT, "
                      "ART, bounded slowdown, utilisation and per-pass statistics.")
    rp.add_argument("trace", nargs="?", help="SWF file (plain or gzip); omit for the built-in trace")
    rp.add_argument("--reservations", type=reservations, default=argparse.SUPPRESS, metavar="K|unlimited",
                    help="reservations per pass: 1 = EASY (default), unlimited = conservative (and Slurm)")
    rp.add_argument("--trigger", choices=("event", "interval"),
                    help="passes at every event (default for SWF files) or Slurm-like: quick passes "
                         "on events and a full pass every --bf-interval (default for the built-in trace)")
    sg = rp.add_argument_group("scoring (pbf list shows every name; a 'package.module:attr' loads your own)")
    sg.add_argument("--preset", help="easy (default), easy++, easy-clairvoyant, easy-sjbf-clairvoyant, "
                                     "gaussier, slurm (Slurm's backfill and its settings with the "
                                     "slurm-sim clock) or slurm-17.02; explicit flags override it")
    sg.add_argument("--priority", help="fcfs (default), sjf, smallest, wfp3, unicep, f1, f2, f3, f4, multifactor, "
                                       "or learned:FILE.npz / learned:NAME (a learned job-selection policy)")
    sg.add_argument("--predictor", help="requested (default), clairvoyant, ave2, regression")
    sg.add_argument("--correction", help="when a job outlives its prediction: incremental (default), "
                                         "requested, recursive-doubling")
    sg.add_argument("--order", help="backfill candidates: queue (priority order, default), sjbf, or "
                                    "learned:FILE.npz / learned:NAME (a learned backfilling policy)")
    sg.add_argument("--loss-over", choices=("squared", "linear"), help="regression: over-prediction branch (squared)")
    sg.add_argument("--loss-under", choices=("squared", "linear"), help="regression: under-prediction branch (linear)")
    sg.add_argument("--loss-weight", choices=("constant", "short-wide", "long-narrow", "small-area", "large-area"),
                    help="regression: job weighting of Gaussier et al.'s Table 3 (large-area)")
    sg.add_argument("--eta", type=float_in(0, 1e300, "a number"), help="regression: NAG learning rate (5000)")
    sg.add_argument("--lambda", dest="lam", type=float_in(0, 1e300, "a number"), help="regression: l2 weight (4e9)")
    sg.add_argument("--loss-over-slope", dest="over_slope", type=float_in(0, 1e300, "a number"),
                    help="regression: factor of the over-prediction branch (1)")
    sg.add_argument("--loss-under-slope", dest="under_slope", type=float_in(0, 1e300, "a number"),
                    help="regression: factor of the under-prediction branch (1)")
    sg.add_argument("--mf-weight", action="append", metavar="NAME=W",
                    help="multifactor weight: age, fairshare, job-size, partition, qos (default Beocat's)")
    sg.add_argument("--mf-max-age", help="multifactor PriorityMaxAge (5h)")
    sg.add_argument("--mf-half-life", help="multifactor PriorityDecayHalfLife (4h)")
    sg.add_argument("--mf-calc-period", help="multifactor PriorityCalcPeriod (300s)")
    sg.add_argument("--mf-favor-small", action="store_true", help="multifactor PriorityFavorSmall=YES")
    sg.add_argument("--mf-fair-share", choices=("classic", "fair-tree"),
                    help="multifactor fair-share algorithm: classic (2^-usage/shares, the default here) or Slurm "
                         "22.05's Fair Tree over one account per trace user (the default with --slurm-conf)")
    sg.add_argument("--mf-associations", metavar="FILE",
                    help="Fair Tree over the association tree of a 'sacctmgr dump' FILE (users matched by name: "
                         "a sacct dump's user names, an SWF's user numbers)")
    sg.add_argument("--mf-partition", action="append", metavar="N=FACTOR",
                    help="multifactor factor of SWF partition N (others 1.0)")
    sg.add_argument("--mf-qos", action="append", metavar="Q=PRIORITY",
                    help="multifactor QOS priority of SWF queue Q (others 0)")
    rp.add_argument("--no-backfill", action="store_true",
                    help="strict priority order: passes stop at the first job that does not fit")
    rp.add_argument("--max-job-test", type=count_from_1, default=None, help="jobs tested per pass (default: all)")
    rp.add_argument("--stop-at-reservation-limit", action="store_true", default=None,
                    help="once --reservations are made, a pass ends at the next job that would need one "
                         "(Slurm 17.02's reservation table; --preset slurm-17.02)")
    rp.add_argument("--bf-window", default=None, help="how far ahead reservations may start, e.g. 1d")
    rp.add_argument("--bf-interval", type=seconds_from_1, default=None,
                    help="seconds between full passes (interval trigger; default 30)")
    rp.add_argument("--bf-resolution", type=seconds_from_0, default=None,
                    help="round planned ends up to this many seconds (default 0: exact)")
    rp.add_argument("--bsld-bound", type=positive_seconds, default=10.0,
                    help="tau of the bounded slowdown, s (default 10)")
    rp.add_argument("--workers", type=int_in(1, 256), default=1, metavar="N",
                    help="backfill workers; N means two things, by clock. Free clock (default): N real threads "
                         "for a full pass, taken only when the pass is predicted faster on them (on a cluster of "
                         "nodes, a helper thread shares each node search, or under Slurm's node search tests each "
                         "job's next later start ahead); the schedule is the same for any N (ordered commit). "
                         "Model and slurm-sim clocks (--preset slurm, --slurm-conf): N modelled workers: a pass "
                         "is charged the time of N workers testing side by side (a cycle tests up to Nx the "
                         "jobs within its budget), so the schedule changes with N. On the slurm-sim clock they "
                         "are not threads: --threads sets the real threads there. The output's workers and "
                         "threads lines say which applied (default 1)")
    rp.add_argument("--threads", type=_threads, default=1, metavar="T",
                    help="slurm-sim clock (--preset slurm, --slurm-conf) only: real threads for a backfill "
                         "cycle's tests, separate from the modelled --workers. T >= 2: a helper thread tests "
                         "Slurm's later starts ahead (one helper: more count as 2); the schedule is the same "
                         "for any T, only the wall time changes (on 2 cores about 1.0x on ARCHER2-like replays: "
                         "docs/benchmarks.md). "
                         "auto: 2 on a cluster of 64 nodes or more when this process may run on 2 CPUs, else 1; "
                         "whether a cycle then shares is measured (trials, back-off when no CPU is spare). The "
                         "threads line says how many later starts the helper tested. On the free clock "
                         "--workers are the threads (default 1)")
    rp.add_argument("--max-passes", type=int_in(1), default=None, metavar="N",
                    help="stop with an error after N passes (default 2,000,000 + 200 a job: a trace whose jobs "
                         "hold the cluster for years of simulated time makes a pass every interval)")
    rp.add_argument("--no-pass-records", action="store_true",
                    help="keep only the totals of the passes, not a record of each (no passes.csv, "
                         "no pass wall times): less memory on long traces, a faster replay")
    rp.add_argument("--commit", choices=("ordered", "eager"), default="ordered",
                    help="parallel commit order: queue order, deterministic (default), or first done "
                         "first committed (the paper's; may vary run to run)")
    rp.add_argument("--clock", choices=("free", "model", "wall", "slurm-sim"), default=None,
                    help="what a pass costs: nothing (default), a modelled cost per job test and slot "
                         "(deterministic), the measured time (not reproducible), or slurm-sim: "
                         "scheduling takes simulated time, as in the Slurm 17.02 simulator")
    rp.add_argument("--bf-max-time", type=seconds_from_1, default=None,
                    help="time budget of a full pass in seconds (default with a clock: --bf-interval)")
    add_cost_options(rp, "microseconds charged per job test (model clock: 10000; slurm-sim: 62)",
                  "microseconds charged per profile slot per test (model clock: 20; slurm-sim: 0)")
    _add_slurm_sim(rp)
    _add_failures(rp)
    nd = rp.add_argument_group("nodes with memory and GPUs (docs/engine.md, Nodes and resources)")
    nd.add_argument("--cluster", default=None, metavar="beocat|beocat-gpu|FILE[:PARTITION]",
                    help="a cluster of nodes: built-in beocat (Beocat's normal partition, memory per node) or "
                         "beocat-gpu (with its GPUs), a TOML file, or a slurm.conf (NodeName/PartitionName lines); "
                         "jobs get cores on nodes with their memory and GPUs free (Slurm's cons_res rules)")
    nd.add_argument("--slurm-conf", default=None, metavar="FILE[:PARTITION]",
                    help="a site's slurm.conf sets what Slurm would use there: its nodes and partitions (FILE: every "
                         "partition, each job on its own; FILE:PARTITION: that one; as "
                         "--cluster, numbered by name as slurmctld numbers them), SchedulerType, SchedulerParameters "
                         "(bf_interval, bf_window, bf_resolution, bf_max_job_test, bf_max_time, default_queue_depth, "
                         "sched_interval, batch_sched_delay, max_sched_time, bf_yield_interval, and the backfill "
                         "limits bf_max_job_user, ...), the Priority* weights, ages and period, and CR_*_Memory, on "
                         "pbf's slurm preset (slurm-sim clock); the defaults of --slurm-version where the file is "
                         "silent. Every setting pbf does not model is printed and recorded in summary.json. Flags "
                         "given alongside it win (not --preset; --mem-from other than requested). "
                         "docs/slurm-harness.md, docs/inputs.md")
    nd.add_argument("--slurm-version", choices=("20.11", "22.05", "23.11"), default=None,
                    help="with --slurm-conf: the Slurm version whose defaults and rules apply (default 22.05; a "
                         "slurm.conf does not say): bf_max_job_test's default, bf_interval=-1, SelectTypeParameters' "
                         "default, cons_res, a GPU job's marks on the nodes' weights (docs/inputs.md)")
    nd.add_argument("--qos-limits", default=None, metavar="SACCTMGR_QOS_DUMP",
                    help="a site's 'sacctmgr -P show qos' dump: its MaxJobsPU, MaxTRESPU cpu, GrpJobs and GrpTRES "
                         "cpu hold jobs past the limit (passed over, as Slurm does); the rest listed as not "
                         "modelled (pbf/qos.py)")
    nd.add_argument("--assoc-limits", default=None, metavar="SACCTMGR_DUMP",
                    help="a site's 'sacctmgr dump' file: its associations' MaxJobs, GrpJobs and GrpTRES cpu hold "
                         "jobs past the limit (inherited and summed up the account tree, as Slurm does); the rest "
                         "listed as not modelled (pbf/associations.py)")
    nd.add_argument("--slurm-events", default=None, metavar="FILE",
                    help="with --slurm-conf: the site's node drains and downs, a 'sacctmgr -P show events "
                         "format=NodeName,TimeStart,TimeEnd,State,Reason' dump, replayed as outages on the trace's "
                         "clock (docs/inputs.md)")
    nd.add_argument("--drain-start", choices=("inferred", "recorded"), default="inferred",
                    help="with --slurm-events: a drain of a busy node starts at the second after its last job "
                         "start in the trace before the event (inferred, the default, from a sacct trace's "
                         "NodeList, Start and End: the dump's time is when the node became empty), or at the "
                         "dump's time (recorded)")
    nd.add_argument("--slurm-reservations", default=None, metavar="FILE",
                    help="with --slurm-conf: the site's advance reservations (maintenance windows), a 'scontrol "
                         "show reservation' or 'sacctmgr -P show reservation format=Name,NodeNames,TimeStart,"
                         "TimeEnd,Flags' dump: each holds its nodes from its start to its end (docs/inputs.md)")
    nd.add_argument("--mem-from", choices=("requested", "used", "none"), default="requested",
                    help="an SWF trace's memory per core: field 10 requested (default), field 7 used, or none")
    nd.add_argument("--node-choice", choices=("best-fit", "first-fit"), default="best-fit",
                    help="Slurm's consecutive-run best fit (default) or nodes in order")
    nd.add_argument("--record-nodes", action="store_true",
                    help="list each job's nodes (a 'nodes' column in jobs.csv; costs cores/8 bytes a job)")
    nd.add_argument("--node-search", choices=("exact", "slurm"), default=None,
                    help="how a pass plans on nodes: exact (default: the earliest start by every running job's "
                         "planned end) or slurm (Slurm's will-run test and whole-node reservations; the default "
                         "with --slurm-conf)")
    rp.add_argument("--coalloc", default=None, metavar="off|fixed:A|asax|hedge|exp3[:OPTIONS]",
                    help="co-allocation: running jobs lend cores to queued ones (docs/coalloc.md); "
                         "learned = asax; options key=value,...: beta, interval, lam, tau, dmax, seed, "
                         "node_cores, cpu")
    g = rp.add_argument_group("start-time estimates (docs/operations.md)")
    g.add_argument("--start-estimates", action="store_true",
                   help="record each job's estimated start when it arrives (squeue --start) and report "
                        "their accuracy against the actual starts")
    g.add_argument("--estimate-every", type=count_from_1, default=0, metavar="K",
                   help="also record every pending job's estimate every K instants with a pass (estimates.csv)")
    rp.add_argument("--out", help="directory for summary.json, jobs.csv, passes.csv")
    rp.add_argument("--report", action="store_true", help="also write figures and report.html into OUT/report "
                    "(pbf report; needs --out and matplotlib)")
    rp.add_argument("--json", action="store_true", help="print the summary as JSON")
    rp.add_argument("--quiet", action="store_true", help="no progress bar and no text summary")
    add_cleaning(rp)
    _short_help(rp)


#: the option groups `pbf replay --help` leaves to `--help-all` (settings of a model or a clock that
#: a first replay does not need; every one stays accepted)
_ADVANCED_GROUPS = ("the modelled cost of a pass", "scheduler time", "cleaning")
_ADVANCED_DESTS = frozenset(("loss_over", "loss_under", "loss_weight", "eta", "lam", "over_slope", "under_slope",
                             "mf_max_age", "mf_half_life", "mf_calc_period", "mf_favor_small", "mf_fair_share",
                             "mf_associations", "mf_partition", "mf_qos", "max_passes", "no_pass_records",
                             "bsld_bound", "repair_hours", "failure_seed", "node_cores", "estimate_every"))


class _HelpAll(argparse.Action):
    """``--help-all``: every option, the advanced ones too."""

    def __init__(self: _HelpAll, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:  # noqa: A002
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self: _HelpAll, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        for action in parser._actions:
            hidden = getattr(action, "_pbf_help", None)
            if hidden is not None:
                action.help = hidden
        parser.print_help()
        parser.exit()


def _short_help(rp: argparse.ArgumentParser) -> None:
    # `--help` lists the options a replay is usually run with (a usage line, not every option: the full
    # one ran to 45 lines); the rest are hidden there, not refused, and `--help-all` lists them
    rp.usage = "pbf replay [TRACE] [options]   (--help-all: every option)"
    rp.add_argument("--help-all", action=_HelpAll, help="list every option, the advanced ones too")
    advanced = {id(a) for g in rp._action_groups if g.title and g.title.startswith(_ADVANCED_GROUPS)
                for a in g._group_actions}
    for action in rp._actions:
        if id(action) in advanced or action.dest in _ADVANCED_DESTS:
            action._pbf_help = action.help
            action.help = argparse.SUPPRESS
    rp.set_defaults(func=run)


def _add_failures(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("node drains and failures (docs/operations.md)")
    g.add_argument("--failures", metavar="FILE",
                   help="CSV of outages: time,nodes,duration,kind (drain, fail, resume)")
    g.add_argument("--mtbf", type=float_in(1e-3, 1e9, "hours"), metavar="HOURS",
                   help="instead of a file: failures drawn per node, this mean time between failures")
    g.add_argument("--repair-hours", type=float_in(1e-3, 1e9, "hours"), default=4.0, metavar="H",
                   help="--mtbf: mean time a failed node takes to come back (4)")
    g.add_argument("--failure-seed", type=int_in(0, 2**32 - 1), default=0, metavar="N", help="--mtbf: random seed (0)")
    g.add_argument("--node-cores", default=None, metavar="K|beocat",
                   help="units per node for the failure file and --mtbf: K, or beocat (the Beocat-like "
                        "layout; default for the built-in trace); default 1 (a node per unit)")
    g.add_argument("--on-failure", choices=("requeue", "kill"), default="requeue",
                   help="a failed node's running jobs: back to the queue (default) or killed")


def _yes_no(text: str) -> bool:
    if text not in ("yes", "no"):
        raise argparse.ArgumentTypeError(f"expected yes or no, got {text!r}")
    return text == "yes"


def _add_slurm_sim(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scheduler time (--clock slurm-sim; Slurm 17.02 defaults, sources in docs/engine.md)")
    g.add_argument("--bf-yield-interval", type=positive_seconds, metavar="S",
                   help="backfill cycle time between lock yields (2)")
    g.add_argument("--time-step", type=float_in(1e-6, 86_400, "a number of seconds"), metavar="S",
                   help="simulated time every main-loop iteration adds (1)")
    g.add_argument("--end-lag", type=seconds_from_0, metavar="S",
                   help="seconds a job holds its resources past its run time before the scheduler sees its end "
                        "(0; 1 with --slurm-conf: a real Slurm 22.05 sees the end of a short job a second late)")
    g.add_argument("--end-lag-below", type=seconds_from_0, metavar="S",
                   help="--end-lag only for jobs that run less than S seconds (0: every job; 13 with --slurm-conf)")
    g.add_argument("--end-runs-main", type=_yes_no, metavar="yes|no",
                   help="a job's end runs the main scheduler at once, not waiting for --batch-sched-delay, as Slurm "
                        "22.05's epilog-complete RPC does without SchedulerParameters defer (no: it agrees no better "
                        "with recorded Slurm runs, docs/slurm-harness.md)")
    g.add_argument("--end-after-cycle", type=_yes_no, metavar="yes|no",
                   help="with --end-runs-main yes and --end-lag 1: a short job's end comes after its last second's "
                        "backfill cycle and before that second's main scheduler, instead of a second late for both "
                        "(no: it agrees less with Slurm 22.05 runs, docs/slurm-harness.md)")
    g.add_argument("--timer-phase", type=float_in(0, 86_400, "a number of seconds"), metavar="S",
                   help="the first backfill cycle S seconds later than it would come, the cycles after it "
                        "following it (0): a site's cycle phase is not in its files; compare replays at 0, 1, 2 ... "
                        "to see how far it alone moves each job")
    g.add_argument("--batch-sched-delay", type=seconds_from_0, metavar="S",
                   help="an event-triggered main-scheduler pass at most this often (3)")
    g.add_argument("--sched-interval", type=seconds_from_1, metavar="S",
                   help="a full-depth main-scheduler pass this often (60)")
    g.add_argument("--default-queue-depth", type=count_from_1, metavar="N",
                   help="jobs an event-triggered main-scheduler pass tests (100)")
    g.add_argument("--max-sched-time", type=positive_seconds, metavar="S",
                   help="a main-scheduler pass stops once it has cost this much (2)")
    g.add_argument("--cost-main-test", dest="cost_main_test_us", type=micros, metavar="US",
                   help="microseconds charged per job a main-scheduler pass tests (62)")
    g.add_argument("--cost-queue", dest="cost_queue_us", type=micros, metavar="US",
                   help="microseconds charged per queued job when a cycle builds its queue (0)")


def run(args: argparse.Namespace) -> int:
    """Read (or generate) the trace, build the settings from the flags, replay and report."""
    # the settings modules import the engine: loaded when a replay runs, not for `pbf replay --help`
    from .replay_settings import replay_config
    t0 = time.perf_counter()
    if args.report and not args.out:
        raise ConfigError("--report needs --out DIR: the report is drawn from the files written there")
    if args.report:
        import importlib.util
        if importlib.util.find_spec("matplotlib") is None:     # (checked before anything is written)
            raise ConfigError('--report draws with matplotlib, which is not installed: pip install "pbf[plot]"')
    if args.out:
        from ..replayer import check_output_dir
        check_output_dir(args.out)            # before the replay, not after it
    if args.trace is None:
        from ..workload.beocat import generate_beocat
        table = generate_beocat()
        table.source = "built-in Beocat-like high-traffic trace (100,000 jobs in 7 days, seed 0)"
        trigger = args.trigger or "interval"
    else:
        table = read_trace(args)
        trigger = args.trigger or "event"
    parsed = time.perf_counter() - t0
    if args.slurm_conf is not None:
        from .replay_slurm_conf import slurm_conf_config
        config, settings, flags_win = slurm_conf_config(args, table)
        return _replay(args, table, config, parsed, {**settings.as_dict(), "overridden_by_flags": flags_win})
    return _replay(args, table, replay_config(args, trigger), parsed)


def _replay(args: argparse.Namespace, table: JobTable, config: ReplayConfig, parsed: float,
            slurm_conf: dict[str, Any] | None = None) -> int:
    from ..replayer import replay
    release_collector()          # (held off while the process started: the replay runs with it)
    result = replay(table, config, progress=None if args.quiet else True)
    result.summary["wall_s"]["load"] = parsed
    result.summary["wall_s"]["process"] = time.perf_counter() - STARTED
    if slurm_conf is not None:
        result.summary["slurm_conf"] = slurm_conf
    if args.out:
        result.write(args.out)
    if slurm_conf is not None and (args.json or not args.quiet):
        print(format_slurm_conf(slurm_conf), file=sys.stderr if args.json else sys.stdout)
    if args.json or not args.quiet:
        show(args, result.summary, lambda: format_replay(result.summary, args.out))
    if args.report:
        from ..report import write_report
        files = write_report(args.out)
        note(args, f"report       {files[-1]} (and {len(files) - 1} figures)", sys.stdout)
    return 0
