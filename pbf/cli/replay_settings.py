"""From ``pbf replay``'s flags to a :class:`pbf.ReplayConfig`: the scoring (``--preset`` and the
single flags), the backfill and run options a run preset may set, the slurm-sim loop, failures,
co-allocation, and ``--slurm-conf`` (a site's file with the flags given alongside it winning)."""
from __future__ import annotations

import argparse
import os
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from .options import cost_settings, key_values

if TYPE_CHECKING:
    from ..coalloc import CoAllocation
    from ..outages import Failures
    from ..replayer import ReplayConfig
    from ..scheduler_time import SlurmSim
    from ..slurm_settings import SlurmSettings
    from ..workload import JobTable

__all__ = ["replay_config", "slurm_conf_config"]

#: the replay options a run preset (--preset slurm) may set, and their values without one
_RUN_DEFAULTS = {"reservations": 1, "max_job_test": None, "window": 0, "resolution": 0, "trigger": None,
                 "bf_interval": 30, "clock": "free", "stop_at_reservation_limit": False}
_RUN_FLAGS = {"reservations": "reservations", "max_job_test": "max_job_test", "window": "bf_window",
              "resolution": "bf_resolution", "trigger": "trigger", "bf_interval": "bf_interval", "clock": "clock",
              "stop_at_reservation_limit": "stop_at_reservation_limit"}

SLURM_SIM_FLAGS = {"bf_yield_interval": "--bf-yield-interval", "time_step": "--time-step",
                   "batch_sched_delay": "--batch-sched-delay", "sched_interval": "--sched-interval",
                   "default_queue_depth": "--default-queue-depth", "max_sched_time": "--max-sched-time",
                   "cost_main_test_us": "--cost-main-test", "cost_queue_us": "--cost-queue"}

_SCORING = ("priority", "predictor", "correction", "order")
_LOSS = ("loss_over", "loss_under", "loss_weight", "eta", "lam", "over_slope", "under_slope")
_MULTIFACTOR = ("mf_weight", "mf_max_age", "mf_half_life", "mf_calc_period", "mf_favor_small", "mf_partition",
                "mf_qos")
_MF_WEIGHTS = {"age": "weight_age", "fairshare": "weight_fairshare", "job-size": "weight_job_size",
               "partition": "weight_partition", "qos": "weight_qos"}


def _multifactor(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`pbf.plugins.Multifactor` settings the ``--mf-*`` flags give."""
    from ..workload.timeparse import parse_duration
    mf = {_MF_WEIGHTS[key]: value for key, value in key_values(args.mf_weight, "--mf-weight", _MF_WEIGHTS).items()}
    for flag, field in (("mf_max_age", "max_age"), ("mf_half_life", "half_life"), ("mf_calc_period", "calc_period")):
        if getattr(args, flag) is not None:
            mf[field] = parse_duration(getattr(args, flag), "--" + flag.replace("_", "-"))
    if args.mf_favor_small:
        mf["favor_small"] = True
    if args.mf_partition:
        mf["partition_factors"] = key_values(args.mf_partition, "--mf-partition", key_type=int)
    if args.mf_qos:
        mf["qos_priorities"] = key_values(args.mf_qos, "--mf-qos", key_type=int)
    return mf


def scoring(args: argparse.Namespace) -> dict[str, Any]:
    """priority, predictor, correction and order from --preset and the explicit flags (a run preset
    adds its backfill and run options: :func:`_preset_run_options` takes them out)."""
    from ..plugins import Multifactor, Regression, preset
    chosen = preset(args.preset) if args.preset else dict(priority="fcfs", predictor="requested",
                                                          correction="incremental", order="queue")
    for name in _SCORING:
        if getattr(args, name) is not None:
            chosen[name] = getattr(args, name)
    loss = {k: v for k, v in (("over", args.loss_over), ("under", args.loss_under), ("weight", args.loss_weight),
                              ("eta", args.eta), ("lam", args.lam), ("over_slope", args.over_slope),
                              ("under_slope", args.under_slope)) if v is not None}
    if loss:
        if chosen["predictor"] != "regression":
            raise ConfigError("--loss-over/--loss-under/--loss-weight/--eta/--lambda apply to --predictor regression")
        chosen["predictor"] = Regression(**loss)
    mf = _multifactor(args)
    if mf:
        if chosen["priority"] != "multifactor":
            raise ConfigError("--mf-* options apply to --priority multifactor")
        chosen["priority"] = Multifactor.beocat(**mf)
    return chosen


def _preset_run_options(args: argparse.Namespace, chosen: dict[str, Any]) -> dict[str, Any]:
    """Backfill and replay options: a flag given on the command line, else the preset's value (the
    keys a run preset adds to ``chosen`` are taken out of it), else the default."""
    out = {}
    for key, default in _RUN_DEFAULTS.items():
        value = chosen.pop(key, default)
        flag = _RUN_FLAGS[key]
        if key == "reservations":
            if hasattr(args, flag):           # present only when given (None there means unlimited)
                value = args.reservations
        elif getattr(args, flag, None) is not None:
            value = getattr(args, flag)
        out[key] = value
    return out


def _slurm_sim(args: argparse.Namespace, clock: str) -> SlurmSim:
    """The slurm-sim clock's loop settings from their flags (an error when they are given under
    another clock: they would do nothing)."""
    from ..scheduler_time import SlurmSim
    given = {field: getattr(args, field) for field in SLURM_SIM_FLAGS if getattr(args, field, None) is not None}
    if given and clock != "slurm-sim":
        raise ConfigError(f"{', '.join(SLURM_SIM_FLAGS[f] for f in given)} apply to --clock slurm-sim "
                          f"(or --preset slurm), not to the {clock} clock")
    return SlurmSim(**given)


def _coalloc(text: str | None) -> CoAllocation | None:
    if text is None:
        return None
    from ..coalloc import CoAllocation
    return CoAllocation.parse(text)


def _failures(args: argparse.Namespace, builtin: bool) -> Failures | None:
    """The outages of ``--failures FILE`` or ``--mtbf HOURS`` (``builtin``: the built-in trace, whose
    nodes have Beocat's layout)."""
    if args.failures is None and args.mtbf is None:
        for flag, given in (("--node-cores", args.node_cores is not None),
                            ("--on-failure", args.on_failure != "requeue")):
            if given:
                raise ConfigError(f"{flag} needs --failures FILE or --mtbf HOURS")
        return None
    if args.failures is not None and args.mtbf is not None:
        raise ConfigError("give --failures FILE or --mtbf HOURS, not both")
    from ..outages import Failures
    cores = args.node_cores if args.node_cores is not None else ("beocat" if builtin else 1)
    return Failures(path=args.failures, mtbf_hours=args.mtbf, repair_hours=args.repair_hours,
                    seed=args.failure_seed, node_cores=cores, on_failure=args.on_failure)


def _common(args: argparse.Namespace) -> dict[str, Any]:
    """The settings that come from the same flags with or without ``--slurm-conf``."""
    return dict(bsld_bound=args.bsld_bound, workers=args.workers, **cost_settings(args), commit=args.commit,
                pass_records=not args.no_pass_records, kill_at_request=not args.no_clip_runtime,
                failures=_failures(args, args.trace is None),
                start_estimates=args.start_estimates or bool(args.estimate_every),
                estimate_every=args.estimate_every, coalloc=_coalloc(args.coalloc), node_choice=args.node_choice)


def replay_config(args: argparse.Namespace, trigger: str) -> ReplayConfig:
    """The replay's settings from the flags (``trigger``: the default for this trace)."""
    from ..config import Backfill
    from ..replayer import ReplayConfig
    from ..workload.timeparse import parse_duration
    chosen = scoring(args)
    run = _preset_run_options(args, chosen)
    window = run["window"]
    backfill = Backfill(reservations=run["reservations"], max_job_test=run["max_job_test"],
                        window=parse_duration(window, "--bf-window") if isinstance(window, str) else window,
                        resolution=run["resolution"], order=chosen.pop("order"),
                        enabled=not args.no_backfill, stop_at_reservation_limit=run["stop_at_reservation_limit"])
    return ReplayConfig(units=args.units, **chosen, backfill=backfill, trigger=run["trigger"] or trigger,
                        bf_interval=run["bf_interval"], clock=run["clock"], bf_max_time=args.bf_max_time,
                        slurm_sim=_slurm_sim(args, run["clock"]), cluster=args.cluster, mem_from=args.mem_from,
                        **_common(args))


def _given(args: argparse.Namespace, name: str) -> bool:
    value = getattr(args, name, None)
    return value is not None and value is not False and value != []


def slurm_conf_config(args: argparse.Namespace,
                      table: JobTable) -> tuple[ReplayConfig, SlurmSettings, list[str]]:
    """--slurm-conf FILE[:PARTITION]: the replay settings a site's slurm.conf stands for
    (:func:`pbf.slurm_settings.slurm_settings`), with every flag given alongside it winning; returns the
    :class:`ReplayConfig`, the settings and the flags that replaced the file's values."""
    from ..plugins import Multifactor
    from ..replayer import ReplayConfig
    from ..slurm_settings import slurm_settings
    from ..workload.timeparse import parse_duration
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
        from ..resources import requests_of  # jobs that ask no memory where the partition gives none: said
        settings = slurm_settings(path, partition, requests=requests_of(table, settings.config.mem_from, 0))
    base, over = settings.config, []
    # scoring: each flag given replaces the file's (the loss options go with the predictor, --mf-* with the weights)
    flagged = scoring(argparse.Namespace(**{**vars(args), "preset": None, **{k: None for k in _MULTIFACTOR}}))
    chosen = {"priority": base.priority, "predictor": base.predictor, "correction": base.correction,
              "order": base.backfill.order}
    for name in _SCORING:
        if _given(args, name) or (name == "predictor" and any(_given(args, k) for k in _LOSS)):
            chosen[name] = flagged[name]
            over.append(f"--{name}")
    if any(_given(args, k) for k in _MULTIFACTOR):
        mf = _multifactor(args)
        if isinstance(chosen["priority"], Multifactor):
            chosen["priority"] = replace(chosen["priority"], **mf)
        elif chosen["priority"] == "multifactor":
            chosen["priority"] = Multifactor.beocat(**mf)
        else:
            raise ConfigError("--mf-* options apply to a multifactor priority (PriorityType=priority/multifactor in "
                              "the file, or --priority multifactor)")
        over += [f"--{k.replace('_', '-')}" for k in _MULTIFACTOR if _given(args, k)]
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
    sim = {f: getattr(args, f) for f in SLURM_SIM_FLAGS if getattr(args, f, None) is not None}
    if sim and clock != "slurm-sim":
        raise ConfigError(f"{', '.join(SLURM_SIM_FLAGS[f] for f in sim)} apply to the slurm-sim clock, not to "
                          f"the {clock} clock")
    over += [SLURM_SIM_FLAGS[f] for f in sim]
    if args.cluster is not None:
        over.append("--cluster")
    if args.mem_from != "requested":
        over.append("--mem-from")
    if args.units is not None:
        over.append("--units")
    config = ReplayConfig(
        units=args.units, **chosen, backfill=backfill, trigger=run.get("trigger", base.trigger),
        bf_interval=run.get("bf_interval", base.bf_interval), clock=clock,
        bf_max_time=run.get("bf_max_time", base.bf_max_time), slurm_sim=replace(base.slurm_sim, **sim),
        cluster=args.cluster if args.cluster is not None else base.cluster,
        mem_from=args.mem_from if args.mem_from != "requested" else base.mem_from, **_common(args))
    return config, settings, over
