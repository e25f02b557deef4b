"""From ``pbf replay``'s flags to a :class:`pbf.ReplayConfig`: the scoring (``--preset`` and the
single flags), the backfill and run options a run preset may set, the slurm-sim loop, failures and
co-allocation. (``--slurm-conf``: :mod:`.replay_slurm_conf`.)"""
from __future__ import annotations

import argparse

from ..config import Backfill
from ..errors import ConfigError
from ..replay_config import ReplayConfig
from ..scheduler_time import SlurmSim
from ..workload.timeparse import parse_duration
from .options import cost_settings, key_values, swf_number

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    from typing import Any

    from ..coalloc import CoAllocation
    from ..outages import Failures

__all__ = ["replay_config", "scoring", "multifactor", "common_settings", "SLURM_SIM_FLAGS", "SCORING", "LOSS",
           "MULTIFACTOR"]

#: the replay options a run preset (--preset slurm) may set, and their values without one
_RUN_DEFAULTS = {"reservations": 1, "max_job_test": None, "window": 0, "resolution": 0, "trigger": None,
                 "bf_interval": 30, "clock": "free", "stop_at_reservation_limit": False}
_RUN_FLAGS = {"reservations": "reservations", "max_job_test": "max_job_test", "window": "bf_window",
              "resolution": "bf_resolution", "trigger": "trigger", "bf_interval": "bf_interval", "clock": "clock",
              "stop_at_reservation_limit": "stop_at_reservation_limit"}

SLURM_SIM_FLAGS = {"bf_yield_interval": "--bf-yield-interval", "time_step": "--time-step",
                   "batch_sched_delay": "--batch-sched-delay", "sched_interval": "--sched-interval",
                   "default_queue_depth": "--default-queue-depth", "max_sched_time": "--max-sched-time",
                   "cost_main_test_us": "--cost-main-test", "cost_queue_us": "--cost-queue",
                   "end_lag": "--end-lag", "end_lag_below": "--end-lag-below", "timer_phase": "--timer-phase",
                   "end_runs_main": "--end-runs-main", "end_after_cycle": "--end-after-cycle"}

SCORING = ("priority", "predictor", "correction", "order")
LOSS = ("loss_over", "loss_under", "loss_weight", "eta", "lam", "over_slope", "under_slope")
MULTIFACTOR = ("mf_weight", "mf_max_age", "mf_half_life", "mf_calc_period", "mf_favor_small", "mf_partition",
                "mf_qos", "mf_fair_share", "mf_associations")
_MF_WEIGHTS = {"age": "weight_age", "fairshare": "weight_fairshare", "job-size": "weight_job_size",
               "partition": "weight_partition", "qos": "weight_qos"}


def multifactor(args: argparse.Namespace) -> dict[str, Any]:
    """The :class:`pbf.plugins.Multifactor` settings the ``--mf-*`` flags give."""
    mf = {_MF_WEIGHTS[key]: value for key, value in key_values(args.mf_weight, "--mf-weight", _MF_WEIGHTS).items()}
    for flag, field in (("mf_max_age", "max_age"), ("mf_half_life", "half_life"), ("mf_calc_period", "calc_period")):
        if getattr(args, flag) is not None:
            mf[field] = parse_duration(getattr(args, flag), "--" + flag.replace("_", "-"))
    if args.mf_favor_small:
        mf["favor_small"] = True
    if getattr(args, "mf_fair_share", None):
        mf["fairshare"] = args.mf_fair_share
    if getattr(args, "mf_associations", None):
        from ..fairshare import Associations
        if mf.get("fairshare", "fair-tree") != "fair-tree":
            raise ConfigError("--mf-associations needs --mf-fair-share fair-tree (Fair Tree reads the tree)")
        mf["fairshare"] = "fair-tree"
        mf["associations"] = Associations.from_sacctmgr_dump(args.mf_associations)
    if args.mf_partition:
        mf["partition_factors"] = key_values(args.mf_partition, "--mf-partition", key_type=swf_number)
    if args.mf_qos:
        mf["qos_priorities"] = key_values(args.mf_qos, "--mf-qos", key_type=swf_number)
    return mf


def scoring(args: argparse.Namespace) -> dict[str, Any]:
    """priority, predictor, correction and order from --preset and the explicit flags (a run preset
    adds its backfill and run options: :func:`_preset_run_options` takes them out)."""
    if args.preset:
        from ..plugins.presets import preset
    chosen = preset(args.preset) if args.preset else dict(priority="fcfs", predictor="requested",
                                                          correction="incremental", order="queue")
    for name in SCORING:
        if getattr(args, name) is not None:
            chosen[name] = getattr(args, name)
    loss = {k: v for k, v in (("over", args.loss_over), ("under", args.loss_under), ("weight", args.loss_weight),
                              ("eta", args.eta), ("lam", args.lam), ("over_slope", args.over_slope),
                              ("under_slope", args.under_slope)) if v is not None}
    if loss:
        if chosen["predictor"] != "regression":
            raise ConfigError("--loss-over/--loss-under/--loss-weight/--eta/--lambda apply to --predictor regression")
        from ..plugins.predictors import Regression
        chosen["predictor"] = Regression(**loss)
    mf = multifactor(args)
    if mf:
        if chosen["priority"] != "multifactor":
            raise ConfigError("--mf-* options apply to --priority multifactor")
        from ..plugins.multifactor import Multifactor  # (loaded only for it)
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
    cores = args.node_cores if args.node_cores is not None else ("beocat" if builtin else 1)
    from ..outages import Failures
    return Failures(path=args.failures, mtbf_hours=args.mtbf, repair_hours=args.repair_hours,
                    seed=args.failure_seed, node_cores=cores, on_failure=args.on_failure)


def common_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings that come from the same flags with or without ``--slurm-conf``."""
    return dict(bsld_bound=args.bsld_bound, workers=args.workers, threads=args.threads, **cost_settings(args),
                commit=args.commit,
                pass_records=not args.no_pass_records, max_passes=args.max_passes,
                kill_at_request=not args.no_clip_runtime,
                failures=_failures(args, args.trace is None),
                qos_limits=args.qos_limits,
                assoc_limits=getattr(args, "assoc_limits", None),
                start_estimates=args.start_estimates or bool(args.estimate_every),
                estimate_every=args.estimate_every, coalloc=_coalloc(args.coalloc), node_choice=args.node_choice,
                node_search=args.node_search or "exact", record_nodes=args.record_nodes)


def replay_config(args: argparse.Namespace, trigger: str) -> ReplayConfig:
    """The replay's settings from the flags (``trigger``: the default for this trace)."""
    if getattr(args, "slurm_version", None) is not None:
        raise ConfigError("--slurm-version says which Slurm's rules read a site's slurm.conf: it applies to "
                          "--slurm-conf")
    if getattr(args, "slurm_events", None) is not None:
        raise ConfigError("--slurm-events names the site's nodes: it needs --slurm-conf (the nodes they are)")
    if getattr(args, "slurm_reservations", None) is not None:
        raise ConfigError("--slurm-reservations names the site's nodes: it needs --slurm-conf (the nodes they are)")
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
                        **common_settings(args))
