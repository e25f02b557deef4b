"""``pbf replay --slurm-conf FILE[:PARTITION]``: the replay settings a site's slurm.conf stands for,
with every flag given alongside it winning."""
from __future__ import annotations

import argparse
import os
from dataclasses import replace

from ..bf_limits import LIMITS, MAX_CLOCK_ORIGIN, SlurmBackfill
from ..errors import ConfigError
from ..plugins import Multifactor
from ..replayer import ReplayConfig
from ..resources import requests_of
from ..slurm_conf import node_lines, read_slurm_conf
from ..slurm_events import SlurmEvents
from ..slurm_settings import SlurmSettings, slurm_settings
from ..slurm_versions import DEFAULT_SLURM_VERSION
from ..workload import JobTable
from ..workload.sacct import is_sacct
from ..workload.timeparse import parse_duration
from .replay_settings import LOSS, MULTIFACTOR, SCORING, SLURM_SIM_FLAGS, common_settings, multifactor, scoring

__all__ = ["slurm_conf_config"]


def _given(args: argparse.Namespace, name: str) -> bool:
    value = getattr(args, name, None)
    return value is not None and value is not False and value != []


def slurm_conf_config(args: argparse.Namespace,
                      table: JobTable) -> tuple[ReplayConfig, SlurmSettings, list[str]]:
    """--slurm-conf FILE[:PARTITION]: the replay settings a site's slurm.conf stands for
    (:func:`pbf.slurm_settings.slurm_settings`), with every flag given alongside it winning; returns the
    :class:`ReplayConfig`, the settings and the flags that replaced the file's values."""
    if args.preset:
        raise ConfigError("--slurm-conf sets the scheduler from the file (the slurm preset with the file's values): "
                          "change it with single flags, not --preset")
    path, partition = args.slurm_conf, None
    if not os.path.exists(path) and ":" in path and os.path.exists(path.rsplit(":", 1)[0]):
        path, partition = path.rsplit(":", 1)
    if not os.path.exists(path):
        raise ConfigError(f"--slurm-conf {path!r}: no such file")
    if os.path.isdir(path):
        raise ConfigError(f"--slurm-conf {path!r}: a folder: expected a slurm.conf file")
    version = getattr(args, "slurm_version", None) or DEFAULT_SLURM_VERSION
    # FILE: every partition, each job in its own (pbf.slurm_partitions); FILE:PARTITION: that one
    every = partition is None
    settings = slurm_settings(path, partition, slurm_version=version, all_partitions=every)
    site = settings.config.partitions
    if site is not None:
        site.check_trace(table)
    if args.cluster is None and not settings.cluster.default_mem_per_core_mb:
        # jobs that ask no memory where the partition gives none: said
        settings = slurm_settings(path, partition, requests=requests_of(table, settings.config.mem_from, 0),
                                  slurm_version=version, all_partitions=every)
    base, over = settings.config, []
    # scoring: each flag given replaces the file's (the loss options go with the predictor, --mf-* with the weights)
    flagged = scoring(argparse.Namespace(**{**vars(args), "preset": None, **{k: None for k in MULTIFACTOR}}))
    chosen = {"priority": base.priority, "predictor": base.predictor, "correction": base.correction,
              "order": base.backfill.order}
    for name in SCORING:
        if _given(args, name) or (name == "predictor" and any(_given(args, k) for k in LOSS)):
            chosen[name] = flagged[name]
            over.append(f"--{name}")
    if site is not None and isinstance(chosen["priority"], Multifactor):
        # PriorityJobFactor: the partition factor of each SWF partition number of the trace
        chosen["priority"] = replace(chosen["priority"], partition_factors=site.partition_factors(table))
    if any(_given(args, k) for k in MULTIFACTOR):
        mf = multifactor(args)
        if isinstance(chosen["priority"], Multifactor):
            chosen["priority"] = replace(chosen["priority"], **mf)
        elif chosen["priority"] == "multifactor":
            chosen["priority"] = Multifactor.beocat(**mf)
        else:
            raise ConfigError("--mf-* options apply to a multifactor priority (PriorityType=priority/multifactor in "
                              "the file, or --priority multifactor)")
        over += [f"--{k.replace('_', '-')}" for k in MULTIFACTOR if _given(args, k)]
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
    origin = table.header.unix_start_time
    if isinstance(backfill, SlurmBackfill) and origin:
        # Slurm's will-run test batches the running jobs' ends on multiples of 30 s of Unix time: the
        # trace's own start (a sacct dump's first submission, an SWF log's UnixStartTime) puts the
        # replay's seconds on that clock
        backfill = replace(backfill, clock_origin=origin if 0 <= origin <= MAX_CLOCK_ORIGIN else origin % 30)
    if args.node_search == "exact" and isinstance(backfill, SlurmBackfill) and backfill.limited:
        # (Slurm's own backfill limits are rules of Slurm's backfill: pbf's exact plan goes without them)
        per_part = backfill.job_part_count_reserve
        backfill = replace(backfill, one_resv_per_job=False, **{name: 0 for name, _, _ in LIMITS})
        settings.unmodelled.append("Slurm's own backfill limits (bf_max_job_user, ...): not applied with "
                                   "--node-search exact")
        if per_part and "--reservations" not in over:
            # (the exact plan counts reservations over the whole cluster, as with one partition)
            backfill = replace(backfill, reservations=per_part)
            settings.unmodelled.append(f"SchedulerParameters bf_job_part_count_reserve={per_part}: counted over "
                                       "every partition as one with --node-search exact")
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
    if args.node_search is not None:
        over.append("--node-search")
    common = {**common_settings(args), "node_search": args.node_search or base.node_search}
    config = ReplayConfig(
        units=args.units, **chosen, backfill=backfill, trigger=run.get("trigger", base.trigger),
        bf_interval=run.get("bf_interval", base.bf_interval), clock=clock,
        bf_max_time=run.get("bf_max_time", base.bf_max_time), slurm_sim=replace(base.slurm_sim, **sim),
        cluster=args.cluster if args.cluster is not None else base.cluster,
        mem_from=args.mem_from if args.mem_from != "requested" else base.mem_from,
        partitions=site if args.cluster is None else None, resv_over_run=base.resv_over_run, **common)
    if getattr(args, "slurm_events", None) is not None:
        if config.failures is not None:
            raise ConfigError("--slurm-events gives the site's own outages: not with --failures or --mtbf")
        if not os.path.isfile(args.slurm_events):
            raise ConfigError(f"--slurm-events {args.slurm_events!r}: no such file")
        known = tuple(n for _, _, names in node_lines(read_slurm_conf(path)) for n in names)
        # a sacct trace says where its jobs ran: the drains' request times are inferred from it (--drain-start)
        trace = args.trace if args.trace is not None and is_sacct(args.trace) else None
        config = replace(config, failures=SlurmEvents(path=args.slurm_events, on_failure=args.on_failure,
                                                      origin=table.header.unix_start_time or 0, known=known,
                                                      trace=trace, drain_start=args.drain_start))
    if getattr(args, "slurm_reservations", None) is not None:
        from ..slurm_reservations import SiteReservations
        if not os.path.isfile(args.slurm_reservations):
            raise ConfigError(f"--slurm-reservations {args.slurm_reservations!r}: no such file")
        known = tuple(n for _, _, names in node_lines(read_slurm_conf(path)) for n in names)
        config = replace(config, reservations=SiteReservations(path=args.slurm_reservations,
                                                               origin=table.header.unix_start_time or 0,
                                                               known=known))
    return config, settings, over
