"""The ``pbf`` command line."""
import argparse
import json
import os
import sys
import time

_T_START = time.perf_counter()

# pbf does no linear algebra; numpy's OpenBLAS would start a thread per core at import (about 70 ms
# here). The command line limits it unless the user asked otherwise; the library leaves it alone.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from .cluster import MAX_UNITS
from .errors import ConfigError, PbfError

#: pbf.workload.lublin.LUBLIN_PRESETS' names (here so that building the parser does not import numpy)
LUBLIN_PRESET_NAMES = ("typed", "typeless", "lublin-1", "lublin-2")

__all__ = ["main"]


def _int_in(lo, hi=None):
    """An argparse type: an int from lo (to hi); argparse names the flag in its error."""
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(
                f"expected a whole number from {lo:,}" + (f" to {hi:,}" if hi is not None else " up") + f", got {text}")
        return value
    return parse


def _float_in(lo, hi, what="a number"):
    """An argparse type: a finite number with lo < value <= hi (lo is excluded only when it is 0 and the
    name says 'above')."""
    def parse(text):
        import math
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not math.isfinite(value) or value < lo or value > hi:
            raise argparse.ArgumentTypeError(f"expected {what} from {lo:g} to {hi:g}, got {text}")
        return value
    return parse


def _cost_options(p, test_help, slot_help):
    """The modelled cost of a pass (docs/engine.md, Scheduler time): the same flags on replay and experiment."""
    g = p.add_argument_group("the modelled cost of a pass (--clock model or slurm-sim; docs/engine.md)")
    g.add_argument("--cost-per-test", type=_float_in(0, 1e9, "microseconds"), default=None, metavar="US",
                   help=test_help + "; with --cost-power, the prefactor")
    g.add_argument("--cost-per-slot", type=_int_in(0), default=None, metavar="US", help=slot_help)
    g.add_argument("--cost-power", type=_float_in(0.01, 4, "a power"), default=1.0, metavar="POW",
                   help="a worker's first n tests of a pass cost COST_PER_TEST x n^POW (the Slurm simulator's "
                        "bf_model; 1, the default: a constant cost per test); `pbf calibrate sdiag` fits it")
    g.add_argument("--cost-per-node", type=_int_in(0), default=0, metavar="US",
                   help="microseconds per node that could hold the tested job (node clusters; 0)")
    g.add_argument("--cost-per-reservation", type=_int_in(0), default=0, metavar="US",
                   help="microseconds per reservation the pass made before the test (0)")


def _cost_settings(args):
    return dict(cost_per_test_us=args.cost_per_test, cost_per_slot_us=args.cost_per_slot,
                cost_power=args.cost_power, cost_per_node_us=args.cost_per_node,
                cost_per_reservation_us=args.cost_per_reservation)


def _positive_seconds(text):
    import math
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {text}")
    return value


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
    g.add_argument("--fill-missing-request", action="store_true", default=None,
                   help="use the run time as requested time where none is given (default: only when no "
                        "job of the trace has one, e.g. Lublin-model traces; said in the output)")
    g.add_argument("--oversize", choices=("reject", "drop"), default="reject",
                   help="jobs larger than the cluster: rejected by the engine (default) or dropped")
    g.add_argument("--units", type=_int_in(1, MAX_UNITS), default=None,
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
    out = str(args.output)
    if args.resources and not out.endswith(".sacct"):
        raise ConfigError(f"--resources: GPU requests need the sacct form (SWF has no GPU field); give -o NAME.sacct, "
                          f"got {out!r}")
    table = generate_beocat(args.jobs, window, seed=args.seed, arrivals=args.arrivals, resources=args.resources)
    if out.endswith(".sacct"):
        from .workload.sacct_dump import write_sacct
        write_sacct(table, out)
        if not args.quiet:
            gpu_jobs = int((table.columns["gpus"] > 0).sum()) if "gpus" in table.columns else 0
            print(f"wrote {len(table):,} jobs to {out} (sacct --parsable2; {gpu_jobs:,} GPU jobs)")
        return 0
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


def _reservations(text):
    if text in ("unlimited", "conservative", "inf"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int >= 0 or 'unlimited', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an int >= 0 or 'unlimited', got {text!r}")
    return value


def _key_values(items, flag, keys=None, key_type=str):
    out = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"{flag} {item!r}: expected KEY=VALUE")
        try:
            key = key_type(key)
            out[key] = float(value)
        except ValueError:
            raise ConfigError(f"{flag} {item!r}: expected KEY=NUMBER") from None
        if keys is not None and key not in keys:
            raise ConfigError(f"{flag} {item!r}: KEY must be one of {', '.join(keys)}")
    return out


def _scoring(args):
    """priority, predictor, correction and order from --preset and the explicit flags."""
    from .plugins import Multifactor, Regression, preset
    from .workload.timeparse import parse_duration
    chosen = preset(args.preset) if args.preset else dict(priority="fcfs", predictor="requested",
                                                          correction="incremental", order="queue")
    for name in ("priority", "predictor", "correction", "order"):
        if getattr(args, name) is not None:
            chosen[name] = getattr(args, name)
    loss = {k: v for k, v in (("over", args.loss_over), ("under", args.loss_under), ("weight", args.loss_weight),
                              ("eta", args.eta), ("lam", args.lam), ("over_slope", args.over_slope),
                              ("under_slope", args.under_slope)) if v is not None}
    if loss:
        if chosen["predictor"] != "regression":
            raise ConfigError("--loss-over/--loss-under/--loss-weight/--eta/--lambda apply to --predictor regression")
        chosen["predictor"] = Regression(**loss)
    mf = {}
    names = {"age": "weight_age", "fairshare": "weight_fairshare", "job-size": "weight_job_size",
             "partition": "weight_partition", "qos": "weight_qos"}
    for key, value in _key_values(args.mf_weight, "--mf-weight", names).items():
        mf[names[key]] = value
    for flag, field in (("mf_max_age", "max_age"), ("mf_half_life", "half_life"), ("mf_calc_period", "calc_period")):
        if getattr(args, flag) is not None:
            mf[field] = parse_duration(getattr(args, flag), "--" + flag.replace("_", "-"))
    if args.mf_favor_small:
        mf["favor_small"] = True
    if args.mf_partition:
        mf["partition_factors"] = _key_values(args.mf_partition, "--mf-partition", key_type=int)
    if args.mf_qos:
        mf["qos_priorities"] = _key_values(args.mf_qos, "--mf-qos", key_type=int)
    if mf:
        if chosen["priority"] != "multifactor":
            raise ConfigError("--mf-* options apply to --priority multifactor")
        chosen["priority"] = Multifactor.beocat(**mf)
    return chosen


#: the replay options a run preset (--preset slurm) may set, and their values without one
_RUN_DEFAULTS = {"reservations": 1, "max_job_test": None, "window": 0, "resolution": 0, "trigger": None,
                 "bf_interval": 30, "clock": "free", "stop_at_reservation_limit": False}
_RUN_FLAGS = {"reservations": "reservations", "max_job_test": "max_job_test", "window": "bf_window",
              "resolution": "bf_resolution", "trigger": "trigger", "bf_interval": "bf_interval", "clock": "clock",
              "stop_at_reservation_limit": "stop_at_reservation_limit"}


def _preset_run_options(args, scoring):
    """Backfill and replay options: a flag given on the command line, else the preset's value (the
    keys a run preset adds to ``scoring`` are taken out of it), else the default."""
    out = {}
    for key, default in _RUN_DEFAULTS.items():
        value = scoring.pop(key, default)
        flag = _RUN_FLAGS[key]
        if key == "reservations":
            if hasattr(args, flag):           # present only when given (None there means unlimited)
                value = args.reservations
        elif getattr(args, flag, None) is not None:
            value = getattr(args, flag)
        out[key] = value
    return out


_SLURM_SIM_FLAGS = {"bf_yield_interval": "--bf-yield-interval", "time_step": "--time-step",
                    "batch_sched_delay": "--batch-sched-delay", "sched_interval": "--sched-interval",
                    "default_queue_depth": "--default-queue-depth", "max_sched_time": "--max-sched-time",
                    "cost_main_test_us": "--cost-main-test", "cost_queue_us": "--cost-queue"}


def _slurm_sim(args, clock):
    """The slurm-sim clock's loop settings from their flags (an error when they are given under
    another clock: they would do nothing)."""
    from .scheduler_time import SlurmSim
    given = {field: getattr(args, field) for field in _SLURM_SIM_FLAGS if getattr(args, field, None) is not None}
    if given and clock != "slurm-sim":
        raise ConfigError(f"{', '.join(_SLURM_SIM_FLAGS[f] for f in given)} apply to --clock slurm-sim "
                          f"(or --preset slurm), not to the {clock} clock")
    return SlurmSim(**given)


_SLURM_CONF_SCORING = ("priority", "predictor", "correction", "order")
_SLURM_CONF_LOSS = ("loss_over", "loss_under", "loss_weight", "eta", "lam", "over_slope", "under_slope")
_SLURM_CONF_MF = ("mf_weight", "mf_max_age", "mf_half_life", "mf_calc_period", "mf_favor_small", "mf_partition",
                  "mf_qos")


def _slurm_conf_config(args, table):
    """--slurm-conf FILE[:PARTITION]: the replay settings a site's slurm.conf stands for
    (:func:`pbf.slurm_settings.slurm_settings`), with every flag given alongside it winning; returns the
    :class:`ReplayConfig`, the settings and the flags that replaced the file's values."""
    from dataclasses import replace

    from .plugins import Multifactor
    from .replayer import ReplayConfig
    from .slurm_settings import slurm_settings
    from .workload.timeparse import parse_duration
    if args.preset:
        raise ConfigError("--slurm-conf sets the scheduler from the file (the slurm preset with the file's values): "
                          "change it with single flags, not --preset")
    path, partition = args.slurm_conf, None
    if not os.path.exists(path) and ":" in path and os.path.exists(path.rsplit(":", 1)[0]):
        path, partition = path.rsplit(":", 1)
    if not os.path.exists(path):
        raise ConfigError(f"--slurm-conf {path!r}: no such file")
    settings = slurm_settings(path, partition)
    if args.cluster is None and not settings.cluster.default_mem_per_core_mb:
        from .resources import requests_of  # jobs that ask no memory where the partition gives none: said
        settings = slurm_settings(path, partition, requests=requests_of(table, settings.config.mem_from, 0))
    base, over = settings.config, []

    def given(name):
        value = getattr(args, name, None)
        return value is not None and value is not False and value != []
    # scoring: each flag given replaces the file's (the loss options go with the predictor, --mf-* with the weights)
    ns = argparse.Namespace(**{**vars(args), "preset": None, **{k: None for k in _SLURM_CONF_MF}})
    flagged = _scoring(ns)
    chosen = {"priority": base.priority, "predictor": base.predictor, "correction": base.correction,
              "order": base.backfill.order}
    for name in _SLURM_CONF_SCORING:
        if given(name) or (name == "predictor" and any(given(k) for k in _SLURM_CONF_LOSS)):
            chosen[name] = flagged[name]
            over.append(f"--{name}")
    if any(given(k) for k in _SLURM_CONF_MF):
        names = {"age": "weight_age", "fairshare": "weight_fairshare", "job-size": "weight_job_size",
                 "partition": "weight_partition", "qos": "weight_qos"}
        mf = {names[k]: v for k, v in _key_values(args.mf_weight, "--mf-weight", names).items()}
        for flag, field in (("mf_max_age", "max_age"), ("mf_half_life", "half_life"),
                            ("mf_calc_period", "calc_period")):
            if getattr(args, flag) is not None:
                mf[field] = parse_duration(getattr(args, flag), "--" + flag.replace("_", "-"))
        if args.mf_favor_small:
            mf["favor_small"] = True
        if args.mf_partition:
            mf["partition_factors"] = _key_values(args.mf_partition, "--mf-partition", key_type=int)
        if args.mf_qos:
            mf["qos_priorities"] = _key_values(args.mf_qos, "--mf-qos", key_type=int)
        if isinstance(chosen["priority"], Multifactor):
            chosen["priority"] = replace(chosen["priority"], **mf)
        elif chosen["priority"] == "multifactor":
            chosen["priority"] = Multifactor.beocat(**mf)
        else:
            raise ConfigError("--mf-* options apply to a multifactor priority (PriorityType=priority/multifactor in "
                              "the file, or --priority multifactor)")
        over += [f"--{k.replace('_', '-')}" for k in _SLURM_CONF_MF if given(k)]
    # backfill and the run's loop
    bf = {}
    for flag, field, value in (("reservations", "reservations", getattr(args, "reservations", None)),
                               ("max_job_test", "max_job_test", args.max_job_test),
                               ("bf_resolution", "resolution", args.bf_resolution),
                               ("stop_at_reservation_limit", "stop_at_reservation_limit",
                                args.stop_at_reservation_limit)):
        if hasattr(args, flag) and (value is not None or flag == "reservations"):
            bf[field] = value
            over.append("--" + flag.replace("_", "-"))
    if args.bf_window is not None:
        bf["window"] = parse_duration(args.bf_window, "--bf-window")
        over.append("--bf-window")
    if args.no_backfill:
        bf["enabled"] = False
        over.append("--no-backfill")
    backfill = replace(base.backfill, order=chosen.pop("order"), **bf)
    run = {}
    for flag in ("trigger", "bf_interval", "clock", "bf_max_time"):
        if getattr(args, flag) is not None:
            run[flag] = getattr(args, flag)
            over.append("--" + flag.replace("_", "-"))
    clock = run.get("clock", base.clock)
    sim = {f: getattr(args, f) for f in _SLURM_SIM_FLAGS if getattr(args, f, None) is not None}
    if sim and clock != "slurm-sim":
        raise ConfigError(f"{', '.join(_SLURM_SIM_FLAGS[f] for f in sim)} apply to the slurm-sim clock, not to "
                          f"the {clock} clock")
    over += [_SLURM_SIM_FLAGS[f] for f in sim]
    if args.cluster is not None:
        over.append("--cluster")
    if args.mem_from != "requested":
        over.append("--mem-from")
    if args.units is not None:
        over.append("--units")
    config = ReplayConfig(
        units=args.units, **chosen, backfill=backfill, trigger=run.get("trigger", base.trigger),
        bf_interval=run.get("bf_interval", base.bf_interval), bsld_bound=args.bsld_bound, workers=args.workers,
        clock=clock, bf_max_time=run.get("bf_max_time", base.bf_max_time), **_cost_settings(args),
        commit=args.commit, pass_records=not args.no_pass_records, kill_at_request=not args.no_clip_runtime,
        slurm_sim=replace(base.slurm_sim, **sim), failures=_failures(args, args.trace is None),
        start_estimates=args.start_estimates or bool(args.estimate_every), estimate_every=args.estimate_every,
        coalloc=_coalloc(args.coalloc), cluster=args.cluster if args.cluster is not None else base.cluster,
        mem_from=args.mem_from if args.mem_from != "requested" else base.mem_from, node_choice=args.node_choice)
    return config, settings, over


def _format_slurm_conf(sc):
    """The lines ``pbf replay --slurm-conf`` prints: what the file set, what pbf does not model, what the
    flags replaced."""
    lines = [f"slurm-conf   {sc['path']} (partition {sc['partition'] or '(all nodes)'}): {len(sc['mapped'])} "
             f"settings mapped, {len(sc['unmodelled'])} not modelled, {len(sc['read_past'])} read past (hosts, "
             "ports, paths, logging: they do not decide when or where jobs run)"]
    lines += [f"  not modelled: {u}" for u in sc["unmodelled"]]
    if sc["overridden_by_flags"]:
        lines.append(f"  flags win:    {', '.join(sc['overridden_by_flags'])}")
    return "\n".join(lines)


def cmd_list(args):
    from .plugins import CHOOSERS, CORRECTIONS, PREDICTORS, PRESETS, PRIORITIES
    for title, reg in (("priorities (--priority)", PRIORITIES), ("predictors (--predictor)", PREDICTORS),
                       ("corrections (--correction)", CORRECTIONS), ("backfill orders (--order)", CHOOSERS),
                       ("presets (--preset)", PRESETS)):
        print(title)
        for name, summary in reg.summaries():
            print(f"  {name:<22} {summary}")
        for prefix, summary in reg.prefixes():
            print(f"  {prefix + ':...':<22} {summary}")
    from .rl.kernel import KernelPolicy, shipped_models
    models = shipped_models()
    if models:
        print("shipped learned models (job selection: --priority learned:NAME; backfilling: --order learned:NAME)")
        for name in models:
            meta = KernelPolicy.load(name).meta
            print(f"  {name:22s} {meta.get('kind', 'job-selection'):14s} trained on {meta.get('trace', '?')}")
    print("any of the first four may also be 'package.module:attr' naming your own Python plugin")
    return 0


def cmd_replay(args):
    import time

    from .config import Backfill
    from .replayer import ReplayConfig
    from .workload.timeparse import parse_duration
    t0 = time.perf_counter()
    if args.report and not args.out:
        raise ConfigError("--report needs --out DIR: the report is drawn from the files written there")
    if args.out:
        from .replayer import check_output_dir
        check_output_dir(args.out)            # before the replay, not after it
    if args.trace is None:
        from .workload.beocat import generate_beocat
        table = generate_beocat()
        table.source = "built-in Beocat-like high-traffic trace (100,000 jobs in 7 days, seed 0)"
        trigger = args.trigger or "interval"
    else:
        table = _read(args)
        trigger = args.trigger or "event"
    parsed = time.perf_counter() - t0
    if args.slurm_conf is not None:
        config, settings, flags_win = _slurm_conf_config(args, table)
        return _run_replay(args, table, config, parsed, {**settings.as_dict(), "overridden_by_flags": flags_win})
    scoring = _scoring(args)
    run = _preset_run_options(args, scoring)
    window = run["window"]
    backfill = Backfill(reservations=run["reservations"], max_job_test=run["max_job_test"],
                        window=parse_duration(window, "--bf-window") if isinstance(window, str) else window,
                        resolution=run["resolution"], order=scoring.pop("order"),
                        enabled=not args.no_backfill, stop_at_reservation_limit=run["stop_at_reservation_limit"])
    config = ReplayConfig(units=args.units, **scoring,
                          backfill=backfill, trigger=run["trigger"] or trigger, bf_interval=run["bf_interval"],
                          bsld_bound=args.bsld_bound, workers=args.workers, clock=run["clock"],
                          bf_max_time=args.bf_max_time, **_cost_settings(args), commit=args.commit,
                          pass_records=not args.no_pass_records,
                          kill_at_request=not args.no_clip_runtime,
                          slurm_sim=_slurm_sim(args, run["clock"]),
                          failures=_failures(args, args.trace is None),
                          start_estimates=args.start_estimates or bool(args.estimate_every),
                          estimate_every=args.estimate_every,
                          coalloc=_coalloc(args.coalloc), cluster=args.cluster, mem_from=args.mem_from,
                          node_choice=args.node_choice)
    return _run_replay(args, table, config, parsed)


def _run_replay(args, table, config, parsed, slurm_conf=None):
    from .replayer import replay
    result = replay(table, config, progress=None if args.quiet else True)
    result.summary["wall_s"]["load"] = parsed
    result.summary["wall_s"]["process"] = time.perf_counter() - _T_START
    if slurm_conf is not None:
        result.summary["slurm_conf"] = slurm_conf
    if args.out:
        result.write(args.out)
    if args.json:
        if slurm_conf is not None:
            print(_format_slurm_conf(slurm_conf), file=sys.stderr)
        print(json.dumps(result.summary, indent=2))
    elif not args.quiet:
        if slurm_conf is not None:
            print(_format_slurm_conf(slurm_conf))
        print(_format_replay(result.summary, args.out))
    if args.report:
        from .report import write_report
        files = write_report(args.out)
        if not args.quiet:
            print(f"report       {files[-1]} (and {len(files) - 1} figures)")
    return 0


def cmd_report(args):
    from .report import report_folder
    files = report_folder(args.run_dir, args.out)
    if not args.quiet:
        print("wrote " + ", ".join(files))
    return 0


def cmd_sweep(args):
    from .sweeps import sweep
    out = args.out or os.path.splitext(os.path.basename(args.spec))[0]
    records = sweep(args.spec, out, jobs=args.jobs, backend=args.backend, address=args.address, resume=args.resume,
                    progress=not args.quiet)
    ok = sum(r["status"] == "ok" for r in records)
    failed = [r for r in records if r["status"] != "ok"]
    if not args.quiet:
        print(f"wrote {os.path.join(out, 'results.csv')} and results.jsonl: {ok} cells ok, {len(failed)} failed")
        for r in failed[:5]:
            print(f"  failed {r['cell']} {r['params']}: {r['error'].splitlines()[0]}")
    return 1 if failed else 0


def _add_sweep(sub):
    sw = sub.add_parser("sweep", help="run a grid of replays (local processes or a Ray cluster)",
                        description="Run every cell of a sweep spec (TOML: [trace], [config], [grid]; see "
                                    "pbf.sweep) and append each cell's metrics to OUT/results.jsonl as it "
                                    "finishes; OUT/results.csv has one row per cell. Exit status 1 if a cell "
                                    "failed (its error is recorded; the others complete).")
    sw.add_argument("spec", metavar="SPEC.toml")
    sw.add_argument("--out", help="output folder (default: the spec's name without .toml)")
    sw.add_argument("--jobs", type=_int_in(1), default=None, help="local processes (default: the cores)")
    sw.add_argument("--backend", choices=("local", "ray"), default="local",
                    help="local processes (default) or a Ray cluster (pip install \"pbf[ray]\")")
    sw.add_argument("--address", help="ray: the cluster's address (ray start --head prints it); default: "
                                      "start a Ray instance on this machine")
    sw.add_argument("--resume", action="store_true", help="complete the cells OUT has no ok result for")
    sw.add_argument("--quiet", action="store_true")
    sw.set_defaults(func=cmd_sweep)


def _add_report(sub):
    rp = sub.add_parser("report", help="figures and report.html from a replay, a sweep or an experiment result",
                        description="Figures (PNG) and one self-contained report.html from the summary.json, "
                                    "jobs.csv and passes.csv that pbf replay --out DIR writes: utilisation and "
                                    "queue over time, wait-time CDF by size class, bounded slowdown by size x "
                                    "run-time class, backfill depth and pass time, tests per worker (parallel "
                                    "passes); or from a pbf sweep folder (each metric against each parameter, "
                                    "a heatmap of the first two, the results table), or from a pbf experiment "
                                    "parallel-backfill --out RESULT.json (the metrics against workers, beside the "
                                    "paper's). Needs matplotlib (pip install \"pbf[plot]\").")
    rp.add_argument("run_dir", metavar="RUN_DIR", help="a folder written by pbf replay --out or by pbf sweep, or "
                    "a RESULT.json of pbf experiment parallel-backfill --out")
    rp.add_argument("--out", help="where to write the report (default RUN_DIR/report, or RESULT-report/)")
    rp.add_argument("--quiet", action="store_true")
    rp.set_defaults(func=cmd_report)


def _format_replay(s, out):
    m, j, p = s["metrics"], s["jobs"], s["passes"]
    c = s["config"]
    bf = c["backfill"]
    resv = "unlimited" if bf["reservations"] is None else bf["reservations"]
    lines = [
        f"trace        {s['trace']}",
        f"cluster      {s['units']} units; priority {c['priority']}, predictor {c['predictor']}, "
        f"reservations {resv}, order {bf['order']}, trigger {c['trigger']}, workers {c['workers']}",
        f"jobs         {j['submitted']:,} submitted, {j['completed']:,} completed "
        f"({j['backfilled']:,} by backfill), {j['rejected']:,} rejected"
        + (f", {j['killed']:,} killed" if j.get("killed") else "")
        + "".join(f"; {n} {r}" for r, n in j["rejected_by_reason"].items())
        + _rejected_hint(s),
        f"wait         AWT {m['awt_h']:.3f} h, ART {m['art_h']:.3f} h, "
        f"BSLD {m['bsld']:.2f} (tau {m['bsld_tau_s']:g} s)",
        f"cluster use  utilisation {m['utilisation']:.3f}, makespan {m['makespan_s']:,} s, "
        f"queue max {m['max_queue']:,} mean {m['mean_queue']:.1f}",
        f"passes       {p['count']:,} ({p['full']:,} full, {p['quick']:,} quick), mean depth "
        f"{p['mean_depth']:.1f}, max {p['max_depth']:,}"
        + (f"; {p['wall_ms_total']:.1f} ms in passes" if p["wall_ms_total"] is not None else "")
        + (f"; clock {p['clock']}, budget {p['budget_s']} s, charged {p['charged_s_mean_full']:.2f} s "
           f"a full pass" if p["clock"] != "free" else ""),
        f"wall         {s['wall_s']['replay']:.3f} s replay, {s['wall_s']['load']:.3f} s load",
    ]
    nodes = s.get("nodes")
    if nodes:
        lines.insert(2, f"nodes        {nodes['cluster']}: {nodes['nodes']:,} nodes, {nodes['cores']:,} cores, "
                        f"{nodes['memory_mb'] / 1024 ** 2:,.1f} TiB, {nodes['gpus']:,} GPUs; held "
                        + ", ".join(f"{k} {v:.3f}" for k, v in nodes["utilisation"].items() if v is not None)
                        + (f"; first job not fitting held by memory/GPUs/features/shape with its cores free in "
                           f"{nodes['heads_held_by_resources_share']:.1%} of {nodes['heads_blocked']:,} passes"
                           if nodes["heads_blocked"] else "")
                        + "".join(f"; {n:,} rejected: {r}" for r, n in list(nodes["never_fit_by_reason"].items())[:3]))
    f = s.get("failures")
    if f:
        ev = f["events"]
        lines.insert(-1, f"failures     {ev['fail']:,} failures, {ev['drain']:,} drains, {ev['resume']:,} resumes "
                         f"({f['down_core_hours']:,.0f} core-hours down); {f['requeued']:,} jobs requeued, "
                         f"{f['killed']:,} killed, {f['lost_core_hours']:,.1f} core-hours of work lost")
    co = s.get("coalloc")
    if co:
        lines.insert(-1, f"co-alloc     {co['policy']}: {co['secondary_jobs']:,} jobs on lent cores "
                         f"({co['share_coallocated']:.1%}); primary slowdown mean "
                         f"{co['primary_slowdown_mean']:.3f}, "
                         f"p95 {co['primary_slowdown_p95']:.3f}; utilisation allocated "
                         f"{co['utilisation_allocated']:.3f}, "
                         f"useful {co['utilisation_useful']:.3f}; makespan {co['queue_makespan_s']:,} s")
    se = s.get("start_estimates")
    if se:
        w = se["waited"]
        if w["jobs"]:
            lines.insert(-1, f"estimates    of {w['jobs']:,} jobs that waited: median error "
                             f"{w['median_abs_s'] / 3600:.2f} h, p90 {w['p90_abs_s'] / 3600:.2f} h, "
                             f"{w['within_1h']:.1%} within 1 h, "
                             f"{w['late']:.1%} started later than told")
    st = s.get("scheduler_time")
    if st:
        lines.insert(-1, f"sched. time  {st['cycles']:,} backfill cycles of {st['cycle_s_mean']:.3f} s and "
                         f"{st['tests_per_cycle']:.1f} tests on average, {st['cycles_ended_by_yield']:,} ended by "
                         f"a yield; {st['main_passes']:,} main-scheduler passes started {st['main_started']:,} jobs")
    if s.get("cleaning"):
        lines.insert(2, "cleaning     " + _cleaning_line(s["cleaning"]))
    if c["predictor"] not in ("requested", "clairvoyant"):
        pr = s["prediction"]
        lines.insert(5, f"prediction   {c['predictor']}, correction {c['correction']}: MAE {pr['mae_s']:,.0f} s, "
                        f"{pr['under_predicted']:.1%} under-predicted, {pr['corrections']:,} corrections")
    if not s["reproducible"]:
        lines.append("note         wall clock or eager commit: results may differ run to run")
    if out:
        lines.append(f"wrote        {out}/summary.json, jobs.csv"
                     + (", passes.csv" if c["pass_records"] else "")
                     + (", estimates.csv" if c.get("estimate_every") else ""))
    return "\n".join(lines)


def _cleaning_line(c):
    # what the reader and the cleaning did: records read = dropped + jobs replayed
    dropped = {"no submit time": c["dropped_missing_submit"], "run time <= 0": c["dropped_nonpositive_runtime"],
               "units <= 0": c["dropped_nonpositive_units"], "larger than the cluster": c["oversize_dropped"]}
    text = f"{c['records_read']:,} records read, {c['jobs']:,} jobs"
    gone = [f"{n:,} {what}" for what, n in dropped.items() if n]
    if gone:
        text += f"; dropped {', '.join(gone)}"
    if c["bad_lines_skipped"]:
        text += f"; {c['bad_lines_skipped']:,} bad lines skipped"
    if c["filled_because_none_given"]:
        text += (f"; requested times filled from run times for all {c['filled_missing_request']:,} jobs "
                 "(the trace gives none)")
    elif c["filled_missing_request"]:
        text += f"; {c['filled_missing_request']:,} requested times filled from run times"
    if c["clipped_runtime_to_request"]:
        text += f"; {c['clipped_runtime_to_request']:,} run times cut to the requested time"
    return text


def _rejected_hint(s):
    j = s["jobs"]
    missing = j["rejected_by_reason"].get("no requested time (estimate <= 0)", 0)
    return " (--fill-missing-request runs them with their run time as request)" if missing else ""


def cmd_bench(args):
    from . import benchmark as bench
    slices = ("kernels", "pass", "growth", "replay", "rl") if args.slice == "all" else (args.slice,)
    workers = tuple(int(w) for w in args.workers.split(",") if int(w) > 1)
    rows, load = bench.run_slices(slices, trials=args.trials, quick=args.quick,
                                  reference=not args.no_reference, workers=workers)
    if args.json:
        print(json.dumps({"cores": os.cpu_count(), "other_processes_cpu_cores": load.other_cores,
                          "wall_s": load.wall, "rows": rows}, indent=2))
    else:
        print(bench.format_rows(rows, load))
    return 0


def cmd_calibrate_sdiag(args):
    from .sdiag import fit_cost, read_sdiag
    snaps = read_sdiag(*args.files)
    fit = fit_cost(snaps)
    flags = f"--cost-per-test {fit.settings()['cost_per_test_us']:g} --cost-power {fit.settings()['cost_power']:g}"
    if args.json:
        print(json.dumps({"snapshots": len(snaps), "files": list(args.files), "points": [list(p) for p in fit.points],
                          "pref_us": fit.pref_us, "power": fit.power, "rel_error": fit.rel_error,
                          "settings": fit.settings(), "flags": flags}, indent=2))
        return 0
    depths = [n for n, _ in fit.points]
    print(f"sdiag        {len(snaps):,} snapshot(s) from {len(args.files)} file(s); {len(fit.points)} (tried jobs, "
          f"cycle time) points, {min(depths):,} to {max(depths):,} jobs tried")
    print(f"fit          a cycle of n tried jobs: {fit.pref_us:.4g} us x n^{fit.power:.3f} "
          f"(rms relative error {100 * fit.rel_error:.1f}%)")
    print("             " + "; ".join(f"{n:,} jobs: {fit.cycle_us(n) / 1000:.3g} ms" for n in (10, 100, 500)))
    print(f"replay with  --clock slurm-sim {flags}")
    return 0


def cmd_experiment(args):
    if args.name == "coalloc":
        return _cmd_coalloc(args)
    if args.name != "parallel-backfill":
        return _cmd_validation(args)
    if args.sweep:
        return _cmd_sweep(args)
    if args.mechanisms:
        return _cmd_mechanisms(args)
    from .studies.experiments import ParallelBackfillExperiment, format_tables
    workers = _worker_list(args.workers)
    exp = ParallelBackfillExperiment(jobs=args.jobs or 100_000, workers=workers, seed=args.seed,
                                     arrivals=args.arrivals, model=args.model,
                                     bf_interval=args.bf_interval, bf_max_time=args.bf_max_time,
                                     **_cost_settings(args), bsld_bound=args.bsld_bound, procs=args.procs,
                                     backend=args.backend, address=args.address,
                                     cluster=None if args.cluster == "none" else args.cluster,
                                     resources=args.resources, calibrate=args.calibrate)

    def progress(row):
        if args.quiet:
            return
        if "calibration" in row:
            print(f"  calibrating the {row['calibration']}: {row['value']:.4g} -> 1-worker AWT {row['awt_h']:.2f} h "
                  f"({row['wall_s']:.1f} s)", file=sys.stderr)
        else:
            print(f"  {row['traffic']} traffic, {row['workers']} workers: AWT {row['awt_h']:.2f} h "
                  f"({row['wall_s']:.1f} s)", file=sys.stderr)
    result = exp.run(progress)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=2)
    print(json.dumps(result, indent=2) if args.json else format_tables(result))
    return 0


def _cmd_coalloc(args):
    from .studies.coalloc import coalloc_experiment, format_coalloc, write_result

    def progress(row):
        if not args.quiet:
            print(f"  {row['trace']}, {row['load']} load, {row['policy']}: wait {row['wait_h']:.2f} h "
                  f"({row['wall_s']:.1f} s)", file=sys.stderr)
    result = coalloc_experiment(args.trace, beocat_jobs=args.jobs or 100_000, progress=progress)
    if args.json:
        print(json.dumps({k: v for k, v in result.items() if k != "series"}, indent=2))
    else:
        print(format_coalloc(result))
    if args.out:                       # (files only where --out says)
        files = write_result(result, args.out)
        if not args.quiet:
            print("wrote " + ", ".join(files), file=sys.stderr)
    return 0


def _worker_list(text):
    try:
        workers = tuple(int(w) for w in text.split(","))
    except ValueError:
        raise ConfigError(f"--workers {text!r}: expected comma-separated whole numbers, e.g. 1,2,4,8") from None
    if not workers or min(workers) < 1 or max(workers) > 256:
        raise ConfigError(f"--workers {text!r}: each count must be from 1 to 256")
    return workers


def _cmd_mechanisms(args):
    from .studies.sweep_time import MechanismStudy, format_mechanisms
    workers = _worker_list(args.workers) if args.workers != "1,2,4,8" else (1, 8)
    study = MechanismStudy(scale=args.scale, workers=workers, seed=args.seed, arrivals=args.arrivals,
                           bsld_bound=args.bsld_bound, procs=args.procs,
                                     backend=args.backend, address=args.address)

    def progress(row):
        if not args.quiet:
            print(f"  {row['variant']}, {row['cost_us']} us/test, {row['workers']} workers: AWT {row['awt_h']:.2f} h "
                  f"({row['wall_s']:.1f} s)", file=sys.stderr)
    result = study.run(progress)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=1)
    print(json.dumps(result, indent=2) if args.json else format_mechanisms(result))
    return 0


def _cmd_sweep(args):
    from .studies.sweep_time import SchedulerTimeSweep, format_sweep, write_result
    sweep = SchedulerTimeSweep(scale=args.scale, workers=_worker_list(args.workers), seed=args.seed,
                               arrivals=args.arrivals, model=args.model,
                               bsld_bound=args.bsld_bound, procs=args.procs,
                                     backend=args.backend, address=args.address)
    done = [0]
    total = len(sweep.cells())

    def progress(row):
        done[0] += 1
        if not args.quiet:
            print(f"  [{done[0]}/{total}] main {row['main']}, {row['load_days']:g} d, {row['cost_us']} us/test, "
                  f"{row['workers']} workers: AWT {row['awt_h']:.2f} h ({row['wall_s']:.1f} s)", file=sys.stderr)
    result = sweep.run(progress)
    print(json.dumps(result["awt_change"], indent=2) if args.json else format_sweep(result))
    if args.out:                       # (files only where --out says)
        files = write_result(result, args.out, figures=not args.no_figures)
        if not args.quiet:
            print("wrote " + ", ".join(files), file=sys.stderr)
    return 0


def _cmd_rlscheduler(args):
    from .rl.evaluate import RLS_TRACES
    from .studies.rlscheduler import format_rlscheduler, rlscheduler_table

    def progress(row):
        if not args.quiet:
            rl = row["pbf"].get("rl")
            print(f"  {row['trace']} backfill={row['backfill']} {row['windows']}: SJF {row['pbf']['sjf']:.2f}, "
                  f"F1 {row['pbf']['f1']:.2f}" + (f", RL {rl:.2f}" if rl is not None else "")
                  + f" ({row['wall_s']:.1f} s)", file=sys.stderr)
    traces = tuple(RLS_TRACES) if args.all_traces else ("lublin-1", "sdsc-sp2")
    result = rlscheduler_table(args.trace, traces=traces, model=args.policy, samples=args.samples,
                               seed=args.seed, progress=progress, held_out=args.held_out)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=2)
    print(json.dumps(result, indent=2) if args.json else format_rlscheduler(result))
    return 0


def _cmd_rlbackfilling(args):
    from .studies.rlbackfilling import format_rlbackfilling, rlbackfilling_table

    def progress(row):
        if not args.quiet:
            p = row["pbf"]
            print(f"  {row['trace']}: FCFS+EASY {p['fcfs+easy']:.2f}, FCFS+EASY-AR {p['fcfs+easy-ar']:.2f}"
                  + (f", FCFS+RLBF {p['fcfs+rlbf']:.2f}" if "fcfs+rlbf" in p else "")
                  + f" ({row['wall_s']:.1f} s)", file=sys.stderr)
    traces = ("sdsc-sp2", "lublin-1", "hpc2n", "lublin-2") if args.all_traces else ("sdsc-sp2", "lublin-1")
    result = rlbackfilling_table(args.trace, traces=traces, model=args.policy, samples=args.samples,
                                 seed=args.seed, progress=progress)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=2)
    print(json.dumps(result, indent=2) if args.json else format_rlbackfilling(result))
    return 0


def _cmd_validation(args):
    from .studies import validation as v
    if args.name == "rlscheduler":
        return _cmd_rlscheduler(args)
    if args.name == "rlbackfilling":
        return _cmd_rlbackfilling(args)

    def progress(row):
        if not args.quiet:
            what = row.get("name") or f"{row['trace']} {row['priority']} backfill={row['backfill']}"
            print(f"  {what}: {row['bsld']:.2f} ({row['wall_s']:.1f} s)", file=sys.stderr)
    if args.name == "runtime-prediction":
        trace = args.trace or os.path.join(v.default_trace_dir(), "SDSC-SP2-1998-4.2-cln.swf.gz")
        result = v.runtime_prediction(trace, progress, variants=not args.no_variants)
        text = v.format_runtime_prediction(result)
    else:
        traces = tuple(v.RLS_TRACES) if args.all_traces else ("lublin-1", "lublin-2")
        result = v.priority_functions(args.trace or v.default_trace_dir(), sequences=args.sequences,
                                      traces=traces, progress=progress)
        text = v.format_priority_functions(result)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=2)
    print(json.dumps(result, indent=2) if args.json else text)
    return 0


def cmd_train(args):
    from .rl.train import TrainConfig, train_backfilling, train_job_selection
    out = args.out or f"train-{os.path.basename(args.trace).split('.swf')[0]}"
    backfilling = args.train_cmd == "backfilling"
    common = dict(epochs=args.epochs, trajectories=args.trajectories, window=args.window, slice_jobs=args.slice,
                  envs=args.envs, seed=args.seed, learning_rate=args.lr, gae_lambda=args.gae_lambda,
                  max_grad_norm=args.max_grad_norm, ppo_epochs=args.ppo_epochs, batch_size=args.batch_size,
                  ent_coef=args.ent_coef,
                  checkpoint_every=args.checkpoint_every, threads=args.threads, name=args.name)
    if backfilling:
        cfg = TrainConfig(args.trace, out, compat="rlbackfilling" if args.compat else None, head=args.head,
                          guarded=args.guarded, relax=args.relax, reward_scale="none",
                          warm_start=args.warm_start, **common)
        base = "EASY-SJBF"
    else:
        cfg = TrainConfig(args.trace, out, metric=args.metric, backfill=args.backfill, skip=args.skip,
                          compat="rlscheduler" if args.compat else None, window_filter=args.filter,
                          filter_epochs=args.filter_epochs, reward_scale=args.reward_scale,
                          warm_start=args.warm_start, **common)
        base = "SJF"
    metric = "bsld" if backfilling else args.metric

    def progress(epoch, total, row):
        if not args.quiet:
            left = row[6] / epoch * (total - epoch)
            bar = "#" * (20 * epoch // total) + "-" * (20 - 20 * epoch // total)
            print(f"  [{bar}] epoch {epoch}/{total}: {row[2]} windows, mean {metric} {row[3]:.2f} "
                  f"({base} {row[4]:.2f}, ratio {row[5]:.3f}); {row[6]:.0f} s, ~{left / 60:.0f} min left",
                  file=sys.stderr)
    (train_backfilling if backfilling else train_job_selection)(cfg, progress)
    print(f"wrote {os.path.join(out, 'model.npz')} (and training.csv, training.png, config.json, checkpoints/)")
    return 0


def _train_common(p, lr, gae_lambda, batch_size):
    p.add_argument("--trace", required=True, help="SWF trace to draw training windows from")
    p.add_argument("--out", help="output folder (default train-<trace>)")
    p.add_argument("--name", help="the model's name (default: the output folder's)")
    p.add_argument("--epochs", type=_int_in(1), default=40, help="epochs: rollouts + updates (40)")
    p.add_argument("--trajectories", type=_int_in(1), default=100, help="windows per epoch (100)")
    p.add_argument("--window", type=_int_in(2), default=256, help="jobs per window (256)")
    p.add_argument("--slice", type=_int_in(1), default=None, help="draw windows from the first N jobs only")
    p.add_argument("--envs", type=_int_in(1), default=8, help="windows stepped together (8)")
    p.add_argument("--seed", type=_int_in(0), default=0)
    p.add_argument("--lr", type=float, default=lr, help=f"Adam learning rate ({lr:g})")
    p.add_argument("--gae-lambda", type=float, default=gae_lambda, help=f"GAE lambda ({gae_lambda:g})")
    p.add_argument("--max-grad-norm", type=float, default=10.0, help="gradient-norm cap (10)")
    p.add_argument("--ppo-epochs", type=_int_in(1), default=10, help="passes over each rollout (10)")
    p.add_argument("--ent-coef", type=float, default=0.0, help="entropy bonus coefficient (0)")
    p.add_argument("--batch-size", type=_int_in(2), default=batch_size, help=f"minibatch size ({batch_size})")
    p.add_argument("--checkpoint-every", type=_int_in(0), default=5, help="epochs between checkpoints (5; 0: none)")
    p.add_argument("--threads", type=_int_in(1), default=1, help="torch threads (1)")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_train)


def _add_train(sub):
    tr = sub.add_parser("train", help="train a learned policy (needs the rl extra and torch)")
    what = tr.add_subparsers(dest="train_cmd", metavar="POLICY")
    what.required = True
    js = what.add_parser("job-selection", help="RLScheduler's job selection: MaskablePPO with the kernel policy")
    _train_common(js, 1e-3, 1.0, 1024)
    js.add_argument("--metric", choices=("bsld", "wait", "turnaround", "utilisation", "slowdown"), default="bsld")
    js.add_argument("--backfill", action="store_true", help="backfill while the picked job waits")
    js.add_argument("--skip", action="store_true", help="add the skip (wait) action")
    js.add_argument("--compat", action="store_true", help="RLScheduler's rules and quirks (docs/rl.md)")
    js.add_argument("--filter", choices=("none", "absolute", "quantile"), default="none",
                    help="RLScheduler's trajectory filter on the window's SJF metric: absolute (10, 150) or "
                         "quantile (median, 2 x mean)")
    js.add_argument("--reward-scale", choices=("sjf", "f1", "none"), default="sjf",
                    help="divide the terminal reward by the window's SJF (default) or F1 metric, or not at all")
    js.add_argument("--filter-epochs", type=_int_in(1), default=None,
                    help="filter only during the first N epochs, then train on every window")
    js.add_argument("--warm-start", choices=("none", "f1", "sjf"), default="none",
                    help="before PPO, clone F1's or SJF's pick (docs/rl.md, warm start)")
    bf = what.add_parser("backfilling", help="RLBackfilling's learned backfilling: MaskablePPO with the kernel "
                                             "policy over the backfill candidates")
    _train_common(bf, 1e-3, 1.0, 512)
    bf.add_argument("--head", choices=("fcfs", "sjf", "wfp3", "f1", "largest"), default="fcfs",
                    help="base priority of the head job (fcfs)")
    bf.add_argument("--guarded", action="store_true",
                    help="candidates must end before the head's shadow time (default: any job that fits now)")
    bf.add_argument("--relax", type=float, default=0.0, help="shadow window relaxation x expected wait (0)")
    bf.add_argument("--compat", action="store_true", help="RLBackfilling's trace loading and quirks (docs/rl.md)")
    bf.add_argument("--warm-start", choices=("none", "sjbf"), default="none",
                    help="before PPO, clone EASY-SJBF's choice (shortest candidate, never stop): sjbf")


def build_parser():
    parser = argparse.ArgumentParser(prog="pbf", description="Parallel-backfill HPC scheduler engine.")
    parser.add_argument("--version", action="version", version=f"pbf {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    from .validate.command import add_parser as _add_validate
    for add in (_add_gen, _add_replay, _add_sweep, _add_report, _add_list, _add_bench, _add_experiment,
                _add_train, _add_trace, _add_validate):
        add(sub)
    return parser


def _add_gen(sub):
    gen = sub.add_parser("gen", help="generate or transform workloads").add_subparsers(
        dest="generator", metavar="GENERATOR")
    gen.required = True
    b = gen.add_parser("beocat", help="a Beocat-like trace (the Parallel Backfill paper's datasets)")
    b.add_argument("--traffic", choices=("high", "low"), default="high",
                   help="high: the jobs within 7 days; low: the same jobs within 14 days")
    b.add_argument("--jobs", type=_int_in(1), default=100_000, help="number of jobs (default 100000)")
    b.add_argument("--window", help="submit window, e.g. 7d (overrides --traffic)")
    b.add_argument("--arrivals", choices=("profile", "pack"), default="profile",
                   help="bursts on the daily/weekly profile (default) or evenly packed")
    b.add_argument("--seed", type=_int_in(0), default=0, help="random seed (default 0)")
    b.add_argument("--resources", action="store_true",
                   help="also GPU requests (2.9%% of jobs, on one node; memory per core is always drawn); "
                        "needs -o NAME.sacct")
    b.add_argument("-o", "--output", required=True,
                   help="output SWF (.gz to compress), or NAME.sacct for a sacct --parsable2 dump")
    b.add_argument("--quiet", action="store_true")
    b.set_defaults(func=cmd_gen_beocat)

    lu = gen.add_parser("lublin", help="the Lublin-Feitelson 2003 model")
    lu.add_argument("--jobs", type=_int_in(1), default=10_000, help="number of jobs (default 10000)")
    lu.add_argument("--preset", choices=LUBLIN_PRESET_NAMES, default="lublin-1",
                    help="typed / typeless (the program's constants) or the Lublin-1 / Lublin-2 fits")
    lu.add_argument("--seed", type=_int_in(0), default=0, help="random seed (default 0)")
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


def _add_replay(sub):
    rp = sub.add_parser("replay", help="replay a trace through the scheduler",
                        description="Replay an SWF trace (default: the built-in Beocat-like "
                                    "high-traffic trace) and report AWT, ART, bounded slowdown, "
                                    "utilisation and per-pass statistics.")
    rp.add_argument("trace", nargs="?", help="SWF file (plain or gzip); omit for the built-in trace")
    rp.add_argument("--reservations", type=_reservations, default=argparse.SUPPRESS, metavar="K|unlimited",
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
    sg.add_argument("--eta", type=float, help="regression: NAG learning rate (5000)")
    sg.add_argument("--lambda", dest="lam", type=float, help="regression: l2 weight (4e9)")
    sg.add_argument("--loss-over-slope", dest="over_slope", type=float,
                    help="regression: factor of the over-prediction branch (1)")
    sg.add_argument("--loss-under-slope", dest="under_slope", type=float,
                    help="regression: factor of the under-prediction branch (1)")
    sg.add_argument("--mf-weight", action="append", metavar="NAME=W",
                    help="multifactor weight: age, fairshare, job-size, partition, qos (default Beocat's)")
    sg.add_argument("--mf-max-age", help="multifactor PriorityMaxAge (5h)")
    sg.add_argument("--mf-half-life", help="multifactor PriorityDecayHalfLife (4h)")
    sg.add_argument("--mf-calc-period", help="multifactor PriorityCalcPeriod (300s)")
    sg.add_argument("--mf-favor-small", action="store_true", help="multifactor PriorityFavorSmall=YES")
    sg.add_argument("--mf-partition", action="append", metavar="N=FACTOR",
                    help="multifactor factor of SWF partition N (others 1.0)")
    sg.add_argument("--mf-qos", action="append", metavar="Q=PRIORITY",
                    help="multifactor QOS priority of SWF queue Q (others 0)")
    rp.add_argument("--no-backfill", action="store_true",
                    help="strict priority order: passes stop at the first job that does not fit")
    rp.add_argument("--max-job-test", type=_int_in(1), default=None, help="jobs tested per pass (default: all)")
    rp.add_argument("--stop-at-reservation-limit", action="store_true", default=None,
                    help="once --reservations are made, a pass ends at the next job that would need one "
                         "(Slurm 17.02's reservation table; --preset slurm-17.02)")
    rp.add_argument("--bf-window", default=None, help="how far ahead reservations may start, e.g. 1d")
    rp.add_argument("--bf-interval", type=_int_in(1), default=None,
                    help="seconds between full passes (interval trigger; default 30)")
    rp.add_argument("--bf-resolution", type=_int_in(0), default=None,
                    help="round planned ends up to this many seconds (default 0: exact)")
    rp.add_argument("--bsld-bound", type=_positive_seconds, default=10.0,
                    help="tau of the bounded slowdown, s (default 10)")
    rp.add_argument("--workers", type=_int_in(1, 256), default=1,
                    help="threads per backfill pass (ordered commit: the same decisions for any count "
                         "with the free clock; with the model clock, N modelled workers share the budget)")
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
    rp.add_argument("--bf-max-time", type=_int_in(1), default=None,
                    help="time budget of a full pass in seconds (default with a clock: --bf-interval)")
    _cost_options(rp, "microseconds charged per job test (model clock: 10000; slurm-sim: 62)",
                  "microseconds charged per profile slot per test (model clock: 20; slurm-sim: 0)")
    _add_slurm_sim(rp)
    _add_failures(rp)
    nd = rp.add_argument_group("nodes with memory and GPUs (docs/engine.md, Nodes and resources)")
    nd.add_argument("--cluster", default=None, metavar="beocat|beocat-gpu|FILE[:PARTITION]",
                    help="a cluster of nodes: built-in beocat (Beocat's normal partition, memory per node) or "
                         "beocat-gpu (with its GPUs), a TOML file, or a slurm.conf (NodeName/PartitionName lines); "
                         "jobs get cores on nodes with their memory and GPUs free (Slurm's cons_res rules)")
    nd.add_argument("--slurm-conf", default=None, metavar="FILE[:PARTITION]",
                    help="a site's slurm.conf sets what Slurm would use there: its nodes and partition (as "
                         "--cluster, numbered by name as slurmctld numbers them), SchedulerType, SchedulerParameters "
                         "(bf_interval, bf_window, bf_resolution, bf_max_job_test, bf_max_time, default_queue_depth, "
                         "sched_interval, batch_sched_delay, max_sched_time, bf_yield_interval), the Priority* "
                         "weights, ages and period, and CR_*_Memory, on pbf's slurm preset (slurm-sim clock); Slurm "
                         "22.05's defaults where the file is silent. Every setting pbf does not model is printed and "
                         "recorded in summary.json. Flags given alongside it win (not --preset; --mem-from other "
                         "than requested). docs/slurm-harness.md")
    nd.add_argument("--mem-from", choices=("requested", "used", "none"), default="requested",
                    help="an SWF trace's memory per core: field 10 requested (default), field 7 used, or none")
    nd.add_argument("--node-choice", choices=("best-fit", "first-fit"), default="best-fit",
                    help="Slurm's consecutive-run best fit (default) or nodes in order")
    rp.add_argument("--coalloc", default=None, metavar="off|fixed:A|asax|hedge|exp3[:OPTIONS]",
                    help="co-allocation: running jobs lend cores to queued ones (docs/coalloc.md); "
                         "learned = asax; options key=value,...: beta, interval, lam, tau, dmax, seed, "
                         "node_cores, cpu")
    g = rp.add_argument_group("start-time estimates (docs/operations.md)")
    g.add_argument("--start-estimates", action="store_true",
                   help="record each job's estimated start when it arrives (squeue --start) and report "
                        "their accuracy against the actual starts")
    g.add_argument("--estimate-every", type=_int_in(1), default=0, metavar="K",
                   help="also record every pending job's estimate every K instants with a pass (estimates.csv)")
    rp.add_argument("--out", help="directory for summary.json, jobs.csv, passes.csv")
    rp.add_argument("--report", action="store_true", help="also write figures and report.html into OUT/report "
                    "(pbf report; needs --out and matplotlib)")
    rp.add_argument("--json", action="store_true", help="print the summary as JSON")
    rp.add_argument("--quiet", action="store_true", help="no progress bar and no text summary")
    _add_cleaning(rp)
    rp.set_defaults(func=cmd_replay)


def _add_failures(p):
    g = p.add_argument_group("node drains and failures (docs/operations.md)")
    g.add_argument("--failures", metavar="FILE",
                   help="CSV of outages: time,nodes,duration,kind (drain, fail, resume)")
    g.add_argument("--mtbf", type=float, metavar="HOURS",
                   help="instead of a file: failures drawn per node, this mean time between failures")
    g.add_argument("--repair-hours", type=float, default=4.0, metavar="H",
                   help="--mtbf: mean time a failed node takes to come back (4)")
    g.add_argument("--failure-seed", type=_int_in(0), default=0, metavar="N", help="--mtbf: random seed (0)")
    g.add_argument("--node-cores", default=None, metavar="K|beocat",
                   help="units per node for the failure file and --mtbf: K, or beocat (the Beocat-like "
                        "layout; default for the built-in trace); default 1 (a node per unit)")
    g.add_argument("--on-failure", choices=("requeue", "kill"), default="requeue",
                   help="a failed node's running jobs: back to the queue (default) or killed")


def _coalloc(text):
    if text is None:
        return None
    from .coalloc import CoAllocation
    return CoAllocation.parse(text)


def _failures(args, builtin):
    if args.failures is None and args.mtbf is None:
        for flag, given in (("--node-cores", args.node_cores is not None),
                            ("--on-failure", args.on_failure != "requeue")):
            if given:
                raise ConfigError(f"{flag} needs --failures FILE or --mtbf HOURS")
        return None
    if args.failures is not None and args.mtbf is not None:
        raise ConfigError("give --failures FILE or --mtbf HOURS, not both")
    from .outages import Failures
    cores = args.node_cores if args.node_cores is not None else ("beocat" if builtin else 1)
    return Failures(path=args.failures, mtbf_hours=args.mtbf, repair_hours=args.repair_hours,
                    seed=args.failure_seed, node_cores=cores, on_failure=args.on_failure)


def _add_slurm_sim(p):
    g = p.add_argument_group("scheduler time (--clock slurm-sim; Slurm 17.02 defaults, sources in docs/engine.md)")
    g.add_argument("--bf-yield-interval", type=_positive_seconds, metavar="S",
                   help="backfill cycle time between lock yields (2)")
    g.add_argument("--time-step", type=_positive_seconds, metavar="S",
                   help="simulated time every main-loop iteration adds (1)")
    g.add_argument("--batch-sched-delay", type=_int_in(0), metavar="S",
                   help="an event-triggered main-scheduler pass at most this often (3)")
    g.add_argument("--sched-interval", type=_int_in(1), metavar="S",
                   help="a full-depth main-scheduler pass this often (60)")
    g.add_argument("--default-queue-depth", type=_int_in(1), metavar="N",
                   help="jobs an event-triggered main-scheduler pass tests (100)")
    g.add_argument("--max-sched-time", type=_positive_seconds, metavar="S",
                   help="a main-scheduler pass stops once it has cost this much (2)")
    g.add_argument("--cost-main-test", dest="cost_main_test_us", type=_int_in(0), metavar="US",
                   help="microseconds charged per job a main-scheduler pass tests (62)")
    g.add_argument("--cost-queue", dest="cost_queue_us", type=_int_in(0), metavar="US",
                   help="microseconds charged per queued job when a cycle builds its queue (0)")


def _add_list(sub):
    ls = sub.add_parser("list", help="the priority functions, predictors, corrections, orders and presets")
    ls.set_defaults(func=cmd_list)


def _add_bench(sub):
    be = sub.add_parser("bench", help="microbenchmarks of passes, kernels and replays",
                        description="Time a slice of benchmarks and print medians, ratios against "
                                    "the pure-Python reference pass, the core count and how busy the "
                                    "machine was. See docs/benchmarks.md.")
    be.add_argument("--slice", choices=("pass", "matrix", "kernels", "growth", "replay", "rl", "all"),
                    default="pass", help="pass: headline passes vs the reference (default); matrix: "
                    "the whole pass matrix; kernels: bitmap kernels; growth: cost vs queue and "
                    "units with log-log slopes; replay: trace replay throughput; rl: learned-policy environment "
                    "steps and kernel decisions (needs gymnasium); all")
    be.add_argument("--trials", type=_int_in(1), default=5, help="interleaved trials per benchmark (default 5)")
    be.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    be.add_argument("--no-reference", action="store_true", help="skip the pure-Python reference pass")
    be.add_argument("--workers", default="2", help="worker counts compared with 1 on the pass slice, "
                    "e.g. 2,4,8 (default 2)")
    be.add_argument("--json", action="store_true", help="print JSON")
    be.set_defaults(func=cmd_bench)


def _add_experiment(sub):
    ex = sub.add_parser("experiment", help="reproduce a paper's experiment")
    ex.add_argument("name", choices=("parallel-backfill", "runtime-prediction", "priority-functions",
                                     "rlscheduler", "rlbackfilling", "coalloc"),
                    help="parallel-backfill: Riffel et al. 2024, Tables 1 and 2 (Beocat-like traces); "
                         "runtime-prediction: Gaussier et al. 2015 on SDSC-SP2; priority-functions: "
                         "RLScheduler's Table V heuristics replayed by pbf's engine; rlscheduler: RLScheduler's "
                         "evaluation (its rules and test windows) with the shipped learned models; rlbackfilling: "
                         "RLBackfilling's Tables 4 and 5 with the shipped backfilling models; coalloc: co-allocation "
                         "(ASA_X) on SDSC-SP2, CTC-SP2 and Beocat-like traces, low and high load (all but "
                         "parallel-backfill read $PBF_TRACES or ../shared/traces)")
    ex.add_argument("--trace", help="runtime-prediction: the SDSC-SP2 log; priority-functions, rlscheduler, "
                                    "rlbackfilling and coalloc: the directory of the traces")
    ex.add_argument("--policy", help="rlscheduler / rlbackfilling: a .npz kernel policy (or shipped model name) "
                                    "for the learned column of every row (default: the shipped model of each row)")
    ex.add_argument("--samples", type=_int_in(0), default=0,
                    help="rlscheduler / rlbackfilling: also N sampled runs per window (both papers sample; "
                         "default greedy only)")
    ex.add_argument("--held-out", action="store_true",
                    help="rlscheduler: also 10 windows after the first 10,000 jobs (not trained on)")
    ex.add_argument("--no-variants", action="store_true",
                    help="runtime-prediction: skip the 120 E-Loss x correction x order replays")
    ex.add_argument("--all-traces", action="store_true",
                    help="priority-functions: also SDSC-SP2 and HPC2N; rlscheduler and rlbackfilling: also HPC2N "
                         "and Lublin-2")
    ex.add_argument("--sequences", type=_int_in(1), default=10, help="priority-functions: sampled sequences (10)")
    ex.add_argument("--jobs", type=_int_in(1), default=None,
                    help="parallel-backfill, coalloc (its Beocat-like traces): jobs per trace (100000)")
    ex.add_argument("--arrivals", choices=("pack", "profile"), default="pack",
                    help="parallel-backfill: jobs evenly spaced (pack, the authors' rule; default) or in "
                         "bursts by the daily and weekly profile")
    ex.add_argument("--scale", type=float, default=0.2,
                    help="--sweep: cluster and trace scaled together (0.2: 1,826 cores, 20,000 jobs)")
    ex.add_argument("--workers", default="1,2,4,8", help="comma-separated worker counts")
    ex.add_argument("--model", choices=("slurm", "slurm-17.02", "easy-model"), default="slurm",
                    help="parallel-backfill: slurm (default: preset slurm, slurm-sim clock), slurm-17.02 "
                         "(preset slurm-17.02: a 49-reservation table, no cap on jobs tested) or easy-model "
                         "(EASY with the model clock)")
    study = ex.add_mutually_exclusive_group()
    study.add_argument("--sweep", action="store_true",
                    help="parallel-backfill: the grid workers x cost per test x load x main-scheduler model; "
                         "with --out DIR, writes sweep.json and figures there")
    study.add_argument("--mechanisms", action="store_true",
                    help="parallel-backfill: AWT with 1 and 8 workers with each scheduler-time mechanism "
                         "switched off, at 10 and 100 ms a test (scaled cluster, as --sweep)")
    ex.add_argument("--procs", type=_int_in(1), default=None,
                    help="parallel-backfill: local processes running replays (default: the core count)")
    ex.add_argument("--backend", choices=("local", "ray"), default="local",
                    help="parallel-backfill (and --sweep, --mechanisms): run the replays on local processes "
                         "(default) or as Ray tasks (pip install \"pbf[ray]\")")
    ex.add_argument("--address", help="--backend ray: a running cluster's address (default: a local Ray instance)")
    ex.add_argument("--no-figures", action="store_true", help="--sweep: no PNG figures (no matplotlib needed)")
    ex.add_argument("--seed", type=_int_in(0), default=0, help="the traces' seed (default 0)")
    ex.add_argument("--bf-interval", type=_int_in(1), default=30, help="seconds between backfill passes (30)")
    ex.add_argument("--bf-max-time", type=_int_in(1), default=None, help="pass budget, s (default: bf-interval)")
    _cost_options(ex, "modelled microseconds per job test (slurm: 62; easy-model: 10000)",
                  "modelled microseconds per profile slot per test (slurm: 0; easy-model: 20)")
    ex.add_argument("--cluster", default="beocat", metavar="beocat|beocat-gpu|FILE|none",
                    help="parallel-backfill: the cluster: Beocat's 299 nodes with their memory (default), another "
                         "cluster of nodes, or none: 9,128 interchangeable cores (the model before nodes existed)")
    ex.add_argument("--calibrate", choices=("cost", "load"), default=None,
                    help="parallel-backfill: first set one unknown by bisection so that 1 worker at high traffic "
                         "waits the paper's 45.89 h (its only figure read): the cost per test, or the load (the "
                         "packing window of both traces); then the tables with nothing else changed")
    ex.add_argument("--no-resources", dest="resources", action="store_false",
                    help="parallel-backfill: Beocat-like jobs without memory or GPU requests (default: with them, "
                         "as pbf gen beocat --resources)")
    ex.add_argument("--bsld-bound", type=_positive_seconds, default=600.0, help="the paper uses 10 minutes")
    ex.add_argument("--out", help="also write the JSON result to this file (--sweep, coalloc: the output directory "
                                  "for the result and its figures; without --out nothing is written)")
    ex.add_argument("--json", action="store_true")
    ex.add_argument("--quiet", action="store_true")
    ex.set_defaults(func=cmd_experiment)

    ca = sub.add_parser("calibrate", help="fit pbf's models to a site's own measurements").add_subparsers(
        dest="what", required=True, metavar="WHAT")
    sd = ca.add_parser("sdiag", help="the backfill cost pref x n^pow from saved sdiag outputs (docs/operations.md)",
                       description="Read the 'Backfilling stats' of one or more saved sdiag outputs (a file may "
                                   "hold many snapshots) and fit the Slurm simulator's cost model: a cycle of n "
                                   "tried jobs costs pref x n^pow microseconds. Prints the fit and the settings "
                                   "that charge it in pbf replay and pbf experiment.")
    sd.add_argument("files", nargs="+", metavar="FILE", help="saved sdiag outputs")
    sd.add_argument("--json", action="store_true")
    sd.set_defaults(func=cmd_calibrate_sdiag)


def cmd_trace_from_sacct(args):
    from .workload import write_swf
    from .workload.sacct import read_sacct
    table = read_sacct(args.dump, partition=args.partition, since=args.since, until=args.until, pack_days=args.pack)
    write_swf(table, args.output)
    dropped = ", ".join(f"{n:,} {k.replace('_', ' ')}" for k, n in table.dropped.items() if n)
    print(f"wrote {len(table):,} jobs to {args.output}" + (f" (left out: {dropped})" if dropped else ""))
    c = table.columns
    kept_out = [what for what, n in (("GPUs", (c["gpus"] > 0).sum()), ("memory per node", (c["mem_node_mb"] > 0).sum()),
                                     ("node counts", ((c["nodes_min"] > 1) | (c["nodes_max"] > 0)).sum()),
                                     ("features", (c["constraint"] > 0).sum())) if n]
    if kept_out:
        print(f"note: SWF has no field for {', '.join(kept_out)}; replay the dump itself "
              f"(pbf replay {args.dump} --cluster ...) to keep them")
    return 0


def _add_trace(sub):
    tr = sub.add_parser("trace", help="inspect traces, convert Slurm accounting dumps").add_subparsers(
        dest="trace_cmd", metavar="ACTION")
    tr.required = True
    info = tr.add_parser("info", help="jobs, span, offered load, cleaning counts, accuracy, users")
    info.add_argument("trace")
    _add_cleaning(info)
    info.add_argument("--json", action="store_true", help="print JSON")
    info.set_defaults(func=cmd_trace_info)
    fs = tr.add_parser("from-sacct", help="convert a Slurm accounting dump (sacct --parsable2) to SWF",
                       description="Convert a sacct --parsable2 dump (fields in any order; see pbf.workload.sacct "
                                   "for the rules: steps and array elements dropped, Slurm times and states "
                                   "mapped to SWF, partitions and QOS numbered in the header) to an SWF file. "
                                   "A dump is also read directly wherever a trace is accepted.")
    fs.add_argument("dump", metavar="DUMP")
    fs.add_argument("-o", "--output", required=True, help="the SWF file to write (.gz: compressed)")
    fs.add_argument("--partition", help="keep this partition only")
    fs.add_argument("--since", help="keep jobs submitted at or after this date (YYYY-MM-DD[THH:MM:SS], UTC)")
    fs.add_argument("--until", help="keep jobs submitted before this date")
    fs.add_argument("--pack", type=float, default=None, metavar="DAYS",
                    help="re-space the submits evenly over DAYS days (the Parallel Backfill authors' 'pack')")
    fs.set_defaults(func=cmd_trace_from_sacct)


def _version():
    from . import __version__
    return __version__


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        # the reader went away (`pbf list | head -1`): stop quietly, as Unix tools do, and keep
        # Python from failing again when it flushes stdout at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except PbfError as exc:
        print(f"pbf: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        # files and folders the user named: missing, a folder where a file is meant, no permission,
        # no space left
        where = f": {exc.filename}" if exc.filename else ""
        print(f"pbf: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
