"""A site's scheduler read from its ``slurm.conf``: the pbf replay settings that stand for what Slurm
would use there, and every setting of the file pbf does not model, listed -- never dropped in silence.

One file sets it all: the nodes and the partition (:mod:`pbf.slurm_conf`), ``SchedulerType``,
``SchedulerParameters``, the ``Priority*`` lines and the select plugin's memory rule. They become pbf's
``slurm`` preset (a reservation for every tested job, requested times, queue order, the interval
trigger and the slurm-sim clock; docs/engine.md "Scheduler time") with the site's values:

============================================================  =============================================
site setting                                                  pbf
============================================================  =============================================
``SchedulerType=sched/backfill`` / ``sched/builtin``          backfill / ``Backfill(enabled=False)``
``bf_interval`` (``-1``: no backfill), ``bf_max_time``        ``bf_interval``, ``bf_max_time``
``bf_window`` (minutes)                                       ``Backfill.window`` (seconds)
``bf_resolution``                                             ``Backfill.resolution``
``bf_max_job_test`` (older name ``max_job_bf``)               ``Backfill.max_job_test``
``bf_max_job_user``, ``bf_max_job_user_part``,                :class:`pbf.bf_limits.SlurmBackfill` fields
``bf_max_job_assoc``, ``bf_max_job_part``,                    (``max_job_user``, ...)
``bf_max_job_start``, ``bf_min_prio_reserve``,
``bf_min_age_reserve``
``bf_job_part_count_reserve``                                 ``SlurmBackfill.job_part_count_reserve`` (each
                                                              partition; ``Backfill.reservations`` with one)
``default_queue_depth``, ``sched_interval``,                  :class:`pbf.SlurmSim` fields of the same names
``batch_sched_delay``, ``max_sched_time``
``bf_yield_interval`` (microseconds)                          ``SlurmSim.bf_yield_interval`` (seconds)
``PriorityType=priority/basic``                               ``fcfs``
``priority/multifactor`` with ``PriorityWeight{Age,JobSize,   :class:`pbf.plugins.Multifactor` with those
Fairshare,Partition,QOS}``, ``PriorityMaxAge``,               values
``PriorityDecayHalfLife``, ``PriorityCalcPeriod``,
``PriorityFavorSmall``
``SelectTypeParameters=CR_*_Memory`` / ``CR_Core``, ``CR_CPU`` memory held / not held (``mem_from="none"``)
``DefMemPerCPU`` (file or partition)                          the cluster's default memory per core
============================================================  =============================================

``SchedulerParameters`` is read as slurmctld reads it: each option found anywhere in the value
(:mod:`pbf.slurm_sched_params`). Where the file is silent, Slurm 22.05's defaults apply
(:data:`SLURM_DEFAULTS`; ``backfill.c`` ``_load_config`` and ``job_scheduler.c`` ``_schedule`` of Slurm
22.05, slurm.conf(5)). Values Slurm would refuse raise :class:`pbf.ConfigError` naming the file, the
line, the key, the value and what was expected. Settings that do not decide when or where a job runs
(host names, ports, paths, authentication, logging, accounting storage) are listed apart
(:attr:`SlurmSettings.read_past`).

:func:`slurm_settings` is used by ``pbf replay --slurm-conf`` and by the real-Slurm harness
(``pbf validate slurm``), so both replay a site with the same settings read from the same file.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

import numpy as np

from .bf_limits import LIMITS, MAX_BF_MAX_JOB_START, MAX_BF_MIN_AGE_RESERVE, MAX_BF_MIN_PRIO_RESERVE, SlurmBackfill
from .bounded import parse_whole, where
from .cluster import Cluster
from .errors import ConfigError
from .licenses import slurm_conf_licenses
from .plugins.multifactor import Multifactor
from .replay_config import ReplayConfig
from .resources import Requests
from .scheduler_time import SlurmSim
from .slurm_conf import SlurmConf, _node_records, node_lines, read_partition, read_slurm_conf, slurm_node_key
from .slurm_partitions import _partitions, choose_partition, partition_cluster, slurm_duration  # noqa: F401
from .slurm_reservations import over_run_seconds
from .slurm_sched_params import BF_LIMITS_WHY, find_options
from .slurm_versions import DEFAULT_SLURM_VERSION, bf_max_job_test_default, check_version

__all__ = ["SlurmSettings", "slurm_settings", "choose_partition", "slurm_duration", "SLURM_DEFAULTS",
           "ALWAYS_UNMODELLED"]

#: Slurm 22.05's defaults of the settings pbf maps, used where the site sets none: ``backfill.c``
#: (``BACKFILL_INTERVAL`` 30 s, ``BACKFILL_WINDOW`` one day, ``BACKFILL_RESOLUTION`` 60 s,
#: ``DEF_BF_MAX_JOB_TEST`` 500, ``bf_yield_interval`` 2 s), ``job_scheduler.c`` (``default_queue_depth``
#: 100, ``sched_interval`` 60 s, ``batch_sched_delay`` 3 s, ``max_sched_time`` MessageTimeout / 2 from 1
#: to 2 s) and slurm.conf(5) (``MessageTimeout`` 10 s, ``PriorityMaxAge`` and ``PriorityDecayHalfLife``
#: 7 days, ``PriorityCalcPeriod`` 5 minutes, weights 0)
SLURM_DEFAULTS = {"bf_interval": 30, "bf_window": 1440, "bf_resolution": 60, "bf_max_job_test": 500,
                  "bf_yield_interval": 2_000_000, "default_queue_depth": 100, "sched_interval": 60,
                  "batch_sched_delay": 3, "MessageTimeout": 10, "PriorityMaxAge": 7 * 86400,
                  "PriorityDecayHalfLife": 7 * 86400, "PriorityCalcPeriod": 300}

#: the largest value of a setting slurmctld reads into a C ``int`` (``atoi``, ``strtol``): 2**31 - 1
INT_MAX = (1 << 31) - 1
#: SchedulerParameters pbf maps: (smallest, largest) value Slurm 22.05 takes (``backfill.c``
#: ``_load_config``, ``job_scheduler.c`` ``_schedule``); where Slurm sets no upper bound, the largest C
#: ``int`` it reads the value into
_SCHED_RANGES = {"bf_interval": (1, 10800), "bf_max_time": (1, 3600), "bf_window": (1, 43200),
                 "bf_resolution": (1, 3600), "bf_max_job_test": (1, 1_000_000), "max_job_bf": (1, 1_000_000),
                 "bf_yield_interval": (1, 10_000_000), "default_queue_depth": (1, INT_MAX),
                 "sched_interval": (1, INT_MAX), "batch_sched_delay": (0, INT_MAX), "max_sched_time": (1, INT_MAX)}
#: Slurm's ranges of the other numbers pbf reads: MessageTimeout (a uint16), the priority weights (a
#: uint32 but NO_VAL), FairShareDampeningFactor (a uint16 from 1)
_MESSAGE_TIMEOUT = (1, 65535)
_WEIGHT = (0, 4_294_967_294)
_DAMPENING = (1, 65535)
#: SchedulerParameters pbf does not model, with why (whole numbers >= 0 where they take one)
_SCHED_UNMODELLED = {
    "bf_continue": "pbf ends a backfill cycle whose lock yield finds arrivals or completions, as Slurm does "
                   "without bf_continue",
    "bf_yield_sleep": "a yield costs pbf no time (Slurm sleeps 0.5 s without locks)",
    "sched_min_interval": "pbf's main scheduler runs on its own timers in whole simulated seconds",
    "partition_job_depth": "pbf's main scheduler has no per-partition depth",
    "sched_max_job_start": "pbf's main scheduler has no cap on starts per pass",
}
_SCHED_COUNTS = ("bf_yield_sleep", "sched_min_interval", "partition_job_depth", "sched_max_job_start")
#: Slurm's own backfill limits pbf models (:mod:`pbf.bf_limits`): their ranges in Slurm 22.05's backfill.c
_BF_RANGES = {"bf_max_job_user": (0, INT_MAX), "bf_max_job_user_part": (0, INT_MAX), "bf_max_job_assoc": (0, INT_MAX),
              "bf_max_job_part": (0, INT_MAX), "bf_max_job_start": (0, MAX_BF_MAX_JOB_START),
              "bf_min_prio_reserve": (1, MAX_BF_MIN_PRIO_RESERVE), "bf_min_age_reserve": (0, MAX_BF_MIN_AGE_RESERVE),
              "bf_job_part_count_reserve": (0, 100_000)}
_PRIORITY_MAPPED = ("prioritytype", "priorityweightage", "priorityweightfairshare", "priorityweightjobsize",
                    "priorityweightpartition", "priorityweightqos", "prioritymaxage", "prioritydecayhalflife",
                    "prioritycalcperiod", "priorityfavorsmall", "priorityflags")
#: global keys read elsewhere in this module (mapped, or listed with a sentence of their own)
_HANDLED = frozenset(("schedulertype", "schedulerparameters", "selecttype", "selecttypeparameters",
                      "defmempercpu", "messagetimeout", "defmempernode", "maxmempercpu", "maxmempernode",
                      "defcpupergpu", "defmempergpu", "enforcepartlimits", "fairsharedampeningfactor",
                      "schedulertimeslice", "preempttype", "preemptmode", "overtimelimit", "killwait",
                      "topologyplugin", "licenses", "resvoverrun"))
#: node keys pbf reads (its nodes) or that do not decide where a job runs; the rest are listed
_NODE_READ = frozenset(("nodename", "nodehostname", "nodeaddr", "port", "cpus", "procs", "boards", "sockets",
                        "socketsperboard", "corespersocket", "threadspercore", "realmemory", "gres", "feature",
                        "features", "state", "reason", "tmpdisk", "corespeccount", "cpuspeclist",
                        "memspeclimit", "bcastaddr"))
#: global keys that do not decide when or where a job runs: names, hosts, ports, paths, authentication,
#: logging, accounting storage, launch plumbing (listed apart, in ``read_past``)
PLUMBING = frozenset("""clustername slurmctldhost controlmachine controladdr backupcontroller backupaddr
    slurmctldport slurmdport slurmctldaddr authtype authinfo authalttypes authaltparameters credtype cryptotype
    slurmuser slurmduser statesavelocation slurmdspooldir slurmctldpidfile slurmdpidfile slurmctldlogfile
    slurmdlogfile slurmctlddebug slurmddebug slurmctldsyslogdebug slurmdsyslogdebug slurmschedlogfile
    slurmschedloglevel debugflags logtimeformat jobcomptype jobcomploc jobcomphost jobcompport jobcompuser
    jobcomppass jobcompparams accountingstoragetype accountingstoragehost accountingstorageport
    accountingstorageloc accountingstorageuser accountingstoragepass accountingstoragetres
    accountingstorageexternalhost accountingstoreflags accountingstoragebackuphost jobacctgathertype
    jobacctgatherfrequency jobacctgatherparams acctgathernodefreq acctgatherenergytype acctgatherprofiletype
    acctgatherinterconnecttype acctgatherfilesystemtype proctracktype taskplugin taskpluginparam mpidefault
    mpiparams switchtype launchtype launchparameters mailprog maildomain plugindir plugstackconf
    propagateresourcelimits propagateresourcelimitsexcept propagateprioprocess tmpfs usepam grestypes
    fastschedule cachegroups jobcredentialprivatekey jobcredentialpubliccertificate jobfilecopy firstjobid
    maxjobid maxstepcount communicationparameters x11parameters hashplugin clifilterplugins jobcontainertype
    tcptimeout keepalivetime msgaggregationparams routeplugin slurmctldprimaryonprog slurmctldprimaryoffprog
    include vsizefactor memlimitenforce openmp reconfigflags srunprolog srunepilog taskprolog taskepilog
    sruntimeout unkillablestepprogram unkillablesteptimeout getenvtimeout epilogmsgtime maxdbdmsgs
    slurmctldtimeout slurmdparameters slurmdtimeout treewidth""".split())

#: what Slurm 22.05 does that pbf's model leaves out whatever the site sets (one sentence each)
#: jobs shorter than this (s) have their end seen a second late (SlurmSim.end_lag_below): a job's launch and
#: completion take ~0.040 s and Slurm's backfill cycles start ~0.003 s later each second (slurmctld's log of a
#: pbf validate slurm run on this machine), so a longer job ends before the cycle of its last second
END_LAG_BELOW = 13

ALWAYS_UNMODELLED = (
    "bf_yield_sleep: Slurm 22.05 sleeps 0.5 s without locks per backfill yield; a yield costs pbf no time",
    "scheduling triggered by RPCs (sched_min_interval): pbf's main scheduler runs on its own timers "
    "(batch_sched_delay, sched_interval) in whole simulated seconds",
    "job launch and completion: Slurm starts a batch job by RPC to slurmd (a fraction of a second) and sees its "
    f"end after that; pbf starts it at the scheduling instant and sees the end of a job shorter than {END_LAG_BELOW} s "
    "one second late (--end-lag-below, --end-lag), in whole seconds",
    "the will-run test's 2 s wall-time limit and its skipped test after 200 removals in one batch: pbf's tests "
    "take no wall time, so the first never applies (the second is modelled)",
    "node weights: a node's Weight= is not modelled (each line that sets one is listed); the marks cons_tres "
    "puts on the nodes a GPU job could use are modelled",
)

def _short(value: str) -> str:
    """A value as the lists of settings show it (cut past 60 characters)."""
    return value if len(value) <= 60 else value[:57] + "..."


def _line(conf: SlurmConf, line) -> str:
    """``line N`` (``line N of FILE`` in a file the slurm.conf includes)."""
    path = getattr(line, "path", conf.path)
    return f"line {line}" + (f" of {path}" if path != conf.path else "")


def _whole(conf: SlurmConf, line, key: str, value: str, lo: int, hi: int, also: tuple = ()) -> int:
    """A whole number of a setting (:func:`pbf.bounded.parse_whole`): from ``lo`` to ``hi`` or one of
    ``also``; a ConfigError naming the file, line, key and range otherwise."""
    text = str(value).strip()
    if text in {str(a) for a in also}:
        return int(text)
    try:
        return parse_whole(text, lo, hi)
    except ValueError as exc:
        path = getattr(line, "path", conf.path)
        raise ConfigError(where(path, line, key, str(value), f"{exc}{''.join(f' or {a}' for a in also)}")) from None


@dataclass
class SlurmSettings:
    """What pbf replays a site's scheduler with.

    ``config``: a :class:`pbf.ReplayConfig` on the site's cluster of nodes; ``mapped``: each site setting
    pbf models and the pbf setting it became (or the Slurm default used); ``unmodelled``: every setting of
    the site pbf does not model, one sentence each, and what Slurm does that pbf never models;
    ``read_past``: settings that do not decide when or where a job runs (``KEY (line N)``); ``cluster``:
    the :class:`pbf.Cluster` of the partition; ``partition``: its name (None: every node); ``path``: the
    file; ``slurm_version``: the Slurm version whose rules were used (:mod:`pbf.slurm_versions`)."""
    config: object
    mapped: dict
    unmodelled: list
    cluster: object
    partition: str | None
    read_past: list = field(default_factory=list)
    path: str = ""
    slurm_version: str = DEFAULT_SLURM_VERSION

    def as_dict(self) -> dict:
        """The settings as summary.json records them (``config`` apart)."""
        return {"path": self.path, "partition": self.partition, "mapped": dict(self.mapped),
                "unmodelled": list(self.unmodelled), "read_past": list(self.read_past),
                "slurm_version": self.slurm_version}


def _sched_params(conf, mapped, unmodelled, version):
    number, text = conf.settings.get("schedulerparameters", (None, ""))
    sp = _spelled(conf, "schedulerparameters")
    at = f"{getattr(number, 'path', conf.path)}, line {number}: {sp}"
    ln = _line(conf, number)
    found = find_options(text)
    for word in found.words:
        if word.lower() in _SCHED_RANGES or word.lower() in _BF_RANGES:
            # (slurmctld would not find it without '=' and use its default: a word pbf will not guess at)
            raise ConfigError(f"{at}: {_short(word)!r}: expected {word.lower()}=NUMBER")
    opts = {k: v[0] for k, v in found.values.items()}
    spelled = {k: v[1] for k, v in found.values.items()}
    for k, word in enumerate(found.words):
        for key in found.used.get(k, []):
            if word.split("=", 1)[0].strip().lower() != key:
                mapped[f"SchedulerParameters {_short(word)}"] = (f"read as {key} ({ln}; slurmctld finds each "
                                                                 "option anywhere in the value, as pbf does)")
            if key in _SCHED_RANGES or key in _BF_RANGES or key in ("bf_one_resv_per_job", "defer"):
                continue
            if key in _SCHED_COUNTS:
                _whole(conf, number, f"{sp} {spelled[key]}", opts[key], 0, INT_MAX)
            why = _SCHED_UNMODELLED.get(key) or BF_LIMITS_WHY.get(key)
            unmodelled.append(f"SchedulerParameters {_short(word)} ({ln}): not modelled by pbf"
                              + (f": {why}" if why else ""))
    for word, key in found.read_past:
        unmodelled.append(f"SchedulerParameters {_short(word)} ({ln}): read past: slurmctld reads {key} from its "
                          "first occurrence")
    for word in found.unknown:
        unmodelled.append(f"SchedulerParameters {_short(word)} ({ln}): not modelled by pbf")

    def whole(key, low=None, high=None, also=()):
        lo, hi = _SCHED_RANGES[key]
        return _whole(conf, number, f"{sp} {spelled[key]}", opts[key], lo if low is None else low,
                      hi if high is None else high, also)
    if "max_job_bf" in opts:
        old = whole("max_job_bf")
        opts.pop("max_job_bf")
        if "bf_max_job_test" not in opts:
            opts["bf_max_job_test"], spelled["bf_max_job_test"] = str(old), spelled["max_job_bf"]
            unmodelled.append(f"SchedulerParameters max_job_bf={old} ({ln}): read as bf_max_job_test; "
                              f"Slurm {version}'s slurmctld refuses max_job_bf (fatal at start)")
    out = {}
    for key in ("bf_interval", "bf_window", "bf_resolution", "bf_max_job_test", "default_queue_depth",
                "sched_interval", "batch_sched_delay", "bf_yield_interval"):
        if key in opts:
            out[key] = whole(key, also=(-1,) if key == "bf_interval" and version != "20.11" else ())
            mapped[f"SchedulerParameters {key}"] = f"{out[key]} (site)"
        else:
            out[key] = bf_max_job_test_default(version) if key == "bf_max_job_test" else SLURM_DEFAULTS[key]
            mapped[f"SchedulerParameters {key}"] = f"{out[key]} (Slurm {version} default)"
    if out["bf_interval"] == -1:
        mapped["SchedulerParameters bf_interval"] = "-1 (site): no backfill cycle"
    if "bf_max_time" in opts:
        out["bf_max_time"] = whole("bf_max_time")
        mapped["SchedulerParameters bf_max_time"] = f"{out['bf_max_time']} (site)"
    else:
        out["bf_max_time"] = None
        mapped["SchedulerParameters bf_max_time"] = f"= bf_interval, {out['bf_interval']} (Slurm default)"
    mt_line, mt = conf.settings.get("messagetimeout", (None, str(SLURM_DEFAULTS["MessageTimeout"])))
    mt = _whole(conf, mt_line, _spelled(conf, "messagetimeout"), mt, *_MESSAGE_TIMEOUT)
    if "max_sched_time" in opts:
        out["max_sched_time"] = whole("max_sched_time")
        mapped["SchedulerParameters max_sched_time"] = f"{out['max_sched_time']} (site)"
        if out["max_sched_time"] > mt // 2:
            unmodelled.append(f"SchedulerParameters max_sched_time={out['max_sched_time']} ({ln}): above "
                              f"MessageTimeout / 2 ({mt // 2}); Slurm 22.05 then uses its default, pbf the value")
    else:
        out["max_sched_time"] = min(max(mt // 2, 1), 2)
        mapped["SchedulerParameters max_sched_time"] = (f"{out['max_sched_time']} (Slurm default: "
                                                        f"MessageTimeout {mt} / 2, from 1 to 2 s)")
    out["limits"] = {key: _whole(conf, number, f"{sp} {spelled[key]}", opts[key], *_BF_RANGES[key])
                     for key in _BF_RANGES if key in opts}
    if "bf_one_resv_per_job" in found.flags:
        out["limits"]["bf_one_resv_per_job"] = 1
    if "defer" in found.flags:
        mapped["SchedulerParameters defer"] = ("(site): a job's end waits for batch_sched_delay, as a submission "
                                               "does (pbf's main scheduler always does: SlurmSim.end_runs_main False)")
    else:
        unmodelled.append("a job's end runs Slurm 22.05's main scheduler at once (without defer: the epilog-complete "
                          "RPC calls schedule()); pbf's waits for batch_sched_delay, as with defer, unless "
                          "--end-runs-main yes, which agrees no better with recorded Slurm runs "
                          "(docs/slurm-harness.md, \"When a job's end is seen\")")
    return out


def _bf_limits(given, priority, mapped, unmodelled, partitions=1):
    """Slurm's own backfill limits the site sets: SlurmBackfill's fields, and the reservations a cycle
    makes (bf_job_part_count_reserve: that many a partition, the rest tested for a start now only; on a
    site of one partition the same as Backfill.reservations, which the replay keeps there)."""
    fields = {key: name for name, key, _ in LIMITS}
    out = {}
    for key, value in given.items():
        said = f"SchedulerParameters {key}"
        if key == "bf_one_resv_per_job":
            out["one_resv_per_job"] = True
            mapped[said] = ("(site) -> SlurmBackfill.one_resv_per_job (a job of several partitions reserves in "
                            "one: its later partitions' tests only start it now)")
        elif key == "bf_job_part_count_reserve" and partitions > 1 and value:
            out["job_part_count_reserve"] = value
            mapped[said] = (f"{value} (site) -> SlurmBackfill.job_part_count_reserve (reservations a cycle in each "
                            f"of the {partitions} partitions)")
        elif key == "bf_job_part_count_reserve":
            mapped[said] = (f"{value} (site) -> Backfill.reservations {value or 'None'} (one partition: its "
                            "reservations a cycle)")
        elif key == "bf_min_prio_reserve" and priority == "fcfs":
            unmodelled.append(f"{said}={value}: not modelled by pbf under priority/basic (pbf orders jobs by "
                              "submission without Slurm's basic priority numbers)")
        elif key == "bf_max_job_user" and given.get("bf_max_job_assoc"):
            unmodelled.append(f"{said}={value}: ignored, as slurmctld ignores it when bf_max_job_assoc is set")
        elif not value:
            mapped[said] = "0 (site): no limit (Slurm's default)"
        else:
            out[fields[key]] = value
            mapped[said] = f"{value} (site) -> SlurmBackfill.{fields[key]}" + (
                " (one partition and one association a user in pbf: a count a user)"
                if key in ("bf_max_job_user_part", "bf_max_job_assoc") else "")
    return out, (given.get("bf_job_part_count_reserve") or None) if partitions <= 1 else None


#: how slurm.conf(5) spells the Priority* keys pbf maps (for messages about a key the file does not set)
_SPELLED = {"priorityweightage": "PriorityWeightAge", "priorityweightfairshare": "PriorityWeightFairshare",
            "priorityweightjobsize": "PriorityWeightJobSize", "priorityweightpartition": "PriorityWeightPartition",
            "priorityweightqos": "PriorityWeightQOS", "prioritymaxage": "PriorityMaxAge",
            "prioritydecayhalflife": "PriorityDecayHalfLife", "prioritycalcperiod": "PriorityCalcPeriod",
            "priorityfavorsmall": "PriorityFavorSmall", "prioritytype": "PriorityType",
            "fairsharedampeningfactor": "FairShareDampeningFactor", "messagetimeout": "MessageTimeout",
            "schedulerparameters": "SchedulerParameters", "schedulertype": "SchedulerType"}


def _spelled(conf, key):
    line, spelled = conf.at(key)
    return spelled if line is not None else _SPELLED.get(key, key)


def _priority(conf, mapped, unmodelled, version):
    def get(key, default=None):
        return conf.settings.get(key, (None, default))
    number, kind = get("prioritytype", "priority/basic")
    for key, (line, value) in conf.settings.items():
        if key.startswith("priority") and key not in _PRIORITY_MAPPED:
            unmodelled.append(f"{key}={_short(value)} ({_line(conf, line)}): not modelled by pbf")
    if kind == "priority/basic":
        mapped["PriorityType"] = f"{kind} -> fcfs" + (" (Slurm default)" if number is None else "")
        for key in _PRIORITY_MAPPED[1:]:
            if key in conf.settings:
                unmodelled.append(f"{key} ({_line(conf, conf.settings[key][0])}): has no effect under "
                                  "priority/basic (FIFO by submission)")
        return "fcfs"
    if kind != "priority/multifactor":
        raise ConfigError(where(getattr(number, "path", conf.path), number, _spelled(conf, "prioritytype"), kind,
                                "priority/basic or priority/multifactor"))
    mapped["PriorityType"] = f"{kind} -> multifactor"
    kw = {}
    for key, attr in (("priorityweightage", "weight_age"), ("priorityweightfairshare", "weight_fairshare"),
                      ("priorityweightjobsize", "weight_job_size"), ("priorityweightpartition", "weight_partition"),
                      ("priorityweightqos", "weight_qos")):
        line, value = get(key, "0")
        kw[attr] = float(_whole(conf, line, _spelled(conf, key), value, *_WEIGHT))
        mapped[key] = f"{attr} {kw[attr]:g}" + (" (Slurm default 0)" if line is None else "")
    for key, attr, default in (("prioritymaxage", "max_age", "PriorityMaxAge"),
                               ("prioritydecayhalflife", "half_life", "PriorityDecayHalfLife"),
                               ("prioritycalcperiod", "calc_period", "PriorityCalcPeriod")):
        line, value = get(key)
        secs = SLURM_DEFAULTS[default] if value is None else slurm_duration(
            value, f"{getattr(line, 'path', conf.path)}, line {line}: {_spelled(conf, key)}")
        kw[attr] = 0 if secs is None else secs
        mapped[key] = f"{attr} {kw[attr]} s" + (" (Slurm default)" if value is None else "")
    line, value = get("priorityfavorsmall", "NO")
    if value.upper() not in ("YES", "NO"):
        raise ConfigError(where(getattr(line, "path", conf.path), line, _spelled(conf, "priorityfavorsmall"), value,
                                "YES or NO"))
    kw["favor_small"] = value.upper() == "YES"
    mapped["priorityfavorsmall"] = f"favor_small {kw['favor_small']}" + (" (Slurm default)" if line is None else "")
    dline, damp = get("fairsharedampeningfactor", "1")
    kw["dampening"] = _whole(conf, dline, _spelled(conf, "fairsharedampeningfactor"), damp, *_DAMPENING)
    if dline is not None:
        mapped["fairsharedampeningfactor"] = f"dampening {kw['dampening']}"
    line, flags = get("priorityflags", "")
    flag_set = {f.strip().upper() for f in flags.split(",") if f.strip()}
    kw["fairshare"] = "classic" if "NO_FAIR_TREE" in flag_set else "fair-tree"
    mapped["priorityflags"] = (f"fairshare {kw['fairshare']}"
                               + (f" (Slurm {version} default: Fair Tree)" if "NO_FAIR_TREE" not in flag_set
                                  else ""))
    kw["size_relative"] = "SMALL_RELATIVE_TO_TIME" in flag_set
    if kw["size_relative"]:
        mapped["priorityflags"] += "; size_relative (the job-size factor over the time limit)"
    for flag in sorted(flag_set - {"NO_FAIR_TREE", "SMALL_RELATIVE_TO_TIME"})[:50]:
        unmodelled.append(f"PriorityFlags {_short(flag)} ({_line(conf, line)}): not modelled by pbf")
    if kw["weight_fairshare"]:
        if kw["fairshare"] == "fair-tree":
            unmodelled.append("PriorityWeightFairshare: Fair Tree over the trace's users, each in an account of its "
                              "own with equal shares, beside user root (a site's own tree: "
                              "pbf.fairshare.Associations.from_sacctmgr_dump)")
        else:
            unmodelled.append("PriorityWeightFairshare: classic fair share with each trace user's equal shares "
                              "and no accounts")
    if kw["weight_qos"]:
        unmodelled.append("PriorityWeightQOS: QOS priorities come from pbf's --mf-qos (none in a slurm.conf)")
    return Multifactor(**kw)


def _select(conf, mapped, unmodelled, version):
    """mem_from from SelectType / SelectTypeParameters, and the select plugin whose node weights apply."""
    sel_line, select = conf.settings.get("selecttype", (None, "select/linear"))
    at = getattr(sel_line, "path", conf.path)
    if select == "select/cons_res" and version == "23.11":
        raise ConfigError(where(at, sel_line, _spelled(conf, "selecttype"), select, "select/cons_tres or "
                                "select/linear: Slurm 23.11 removed select/cons_res"))
    if (select in ("select/cons_tres", "select/cons_res") and version == "20.11"
            and "selecttypeparameters" not in conf.settings):
        raise ConfigError(f"{conf.path}: SelectType={select} without SelectTypeParameters: Slurm 20.11's slurmctld "
                          "stops at start ('You need at least CR_(CPU|CORE|SOCKET)*', cons_common.c "
                          "select_p_node_init); set SelectTypeParameters, or say --slurm-version 22.05")
    if select not in ("select/cons_tres", "select/cons_res"):
        said = f"({_line(conf, sel_line)})" if sel_line is not None else "(Slurm's default)"
        unmodelled.append(f"SelectType={_short(select)} {said}: whole-node allocation is not modelled; pbf "
                          "places jobs by cons_res rules")
    mapped["SelectType"] = f"{_short(select)} -> cons_res node model" + (
        "; a GPU job's marks on the nodes' weights (cons_tres)" if select == "select/cons_tres" else "")
    tp_line, tp = conf.settings.get("selecttypeparameters", (None, "CR_Core_Memory" if select != "select/linear"
                                                                  else ""))
    tp_at = _line(conf, tp_line) if tp_line is not None else "Slurm's default"
    flags = [f.strip() for f in tp.split(",") if f.strip()]
    kinds = [f for f in flags if f.upper() in ("CR_CPU", "CR_CORE", "CR_SOCKET", "CR_MEMORY", "CR_CPU_MEMORY",
                                               "CR_CORE_MEMORY", "CR_SOCKET_MEMORY")]
    mem_from = "requested"
    if kinds:
        kind = kinds[0].upper()
        if kind.endswith("_MEMORY"):
            mapped["SelectTypeParameters"] = f"{kinds[0]} -> memory is held (mem_from requested)"
        elif kind == "CR_MEMORY":
            unmodelled.append(f"SelectTypeParameters={_short(tp)} ({tp_at}): CR_Memory (cores not consumable) "
                              "is not modelled")
        else:
            mem_from = "none"
            mapped["SelectTypeParameters"] = f"{kinds[0]} -> memory is not held (mem_from none)"
        if kind.startswith("CR_SOCKET"):
            unmodelled.append(f"SelectTypeParameters {kinds[0]}: whole sockets are not modelled; pbf allocates "
                              "cores")
    for f in flags[:50]:
        if f not in kinds:
            unmodelled.append(f"SelectTypeParameters {_short(f)} ({tp_at}): not modelled by pbf")
    return mem_from, "cons_tres" if select == "select/cons_tres" else "cons_res"


def _nodes_and_partition(conf, cluster, chosen, unmodelled):
    weights = set()
    part_names = {n.name for n in cluster.nodes}
    for number, pairs, all_names in node_lines(conf):
        names = [n for n in all_names if n in part_names]
        if not names:
            continue
        ln = _line(conf, number)
        name = names[0] if len(names) == 1 else _short(pairs["nodename"])
        weights.add(pairs.get("weight", "1"))
        for key in ("corespeccount", "cpuspeclist", "memspeclimit"):
            if key in pairs:
                unmodelled.append(f"NodeName={name}: {key}={_short(pairs[key])} ({ln}): specialised cores or "
                                  "memory are not modelled")
        if pairs.get("threadspercore", "1") not in ("1", ""):
            unmodelled.append(f"NodeName={name}: ThreadsPerCore={pairs['threadspercore']} ({ln}): pbf "
                              "counts every CPU as a core; Slurm allocates whole cores under CR_Core")
        gres = pairs.get("gres", "")
        types = {e.split(":")[1] for e in gres.split(",") if e.startswith("gpu:") and len(e.split(":")) > 2}
        if len(types) > 1 or (types and any(e.startswith("gpu") and len(e.split(":")) <= 2 for e in gres.split(","))):
            unmodelled.append(f"NodeName={name}: Gres={_short(gres)} ({ln}): a node of several GPU types (or "
                              "typed and untyped GPUs): a job asking one of its types may use all its GPUs (pbf "
                              "plans one GPU count a node)")
        if any(e.split(":")[0] != "gpu" and len(e.split(":")) > 2 for e in filter(None, gres.split(","))):
            unmodelled.append(f"NodeName={name}: Gres={_short(gres)} ({ln}): the types of generic resources other "
                              "than GPUs are not told apart (nvme:fast:2 plans as nvme:2)")
        for key in pairs:
            if key not in _NODE_READ:
                unmodelled.append(f"NodeName={name}: {key}={_short(pairs[key])} ({ln}): not modelled by pbf")
        state = pairs.get("state", "UNKNOWN").upper()
        if state not in ("UNKNOWN", "IDLE", "FUTURE_NO", ""):
            unmodelled.append(f"NodeName={name}: State={_short(pairs['state'])} ({ln}): pbf starts every node up")
    if len(weights) > 1:
        shown = ", ".join(sorted(weights, key=slurm_node_key)[:20]) + (f" and {len(weights) - 20} more"
                                                                      if len(weights) > 20 else "")
        unmodelled.append(f"NodeName Weight ({shown}): Slurm prefers nodes of lower weight; pbf takes nodes in "
                          "Slurm's name order whatever their weight")
    if not chosen:
        return
    number, pairs = chosen
    harmless = ("partitionname", "nodes", "default", "defmempercpu", "hidden", "defaulttime", "state",
                "tresbillingweights", "priorityjobfactor", "prioritytier", "allowaccounts", "allowgroups",
                "allowqos", "denyaccounts", "denyqos",
                "allocnodes", "disablerootjobs", "rootonly", "reqresv", "gracetime")
    for key, value in pairs.items():
        if key in harmless:
            continue
        if (key == "maxtime" and value.upper() in ("INFINITE", "UNLIMITED")) or (
                key in ("oversubscribe", "shared") and value.upper() == "NO"):
            continue
        unmodelled.append(f"PartitionName={_short(pairs['partitionname'])}: {key}={_short(value)} "
                          f"({_line(conf, number)}): not modelled by pbf")


def slurm_settings(path: str | os.PathLike, partition: str | None = None, *, requests: Requests | None = None,
                   slurm_version: str = DEFAULT_SLURM_VERSION, all_partitions: bool = False) -> SlurmSettings:
    """The pbf replay settings standing for the scheduler of the site's ``slurm.conf`` at ``path`` (module
    docstring): the partition ``partition`` (else the ``Default=YES`` one, else the only one, else every
    node; with ``all_partitions`` and no ``partition``, every partition, each job in its own:
    :mod:`pbf.slurm_partitions`), the defaults of Slurm ``slurm_version`` (``20.11``, ``22.05``, ``23.11``;
    the rules that differ: :mod:`pbf.slurm_versions`) where the file is silent, and everything else the
    file sets listed in :attr:`SlurmSettings.unmodelled`. ``requests`` (a :class:`pbf.resources.Requests`,
    optional) adds what the jobs make matter (jobs without memory on a partition without ``DefMemPerCPU``). Raises
    :class:`pbf.ConfigError` naming the file, line, key and value of a setting pbf cannot use."""
    path = os.fspath(path)
    version = check_version(slurm_version)
    conf = read_slurm_conf(path)
    if not conf.nodes:
        raise ConfigError(f"{conf.path}: no NodeName lines")
    licenses = slurm_conf_licenses(conf)
    site = None
    if all_partitions and partition is None and conf.partitions:
        chosen = None
        cluster, site = partition_cluster(conf, tuple(licenses.items()))
        part_name = ",".join(p.name for p in site.partitions)
    else:
        chosen = choose_partition(conf, partition)
        part_name = chosen[1]["partitionname"] if chosen else None
        part = read_partition(conf, part_name)
        cluster = Cluster(units=sum(n.cores for n in part.nodes), nodes=part.nodes, name=part.name,
                          default_mem_per_core_mb=part.default_mem_per_core_mb, licenses=tuple(licenses.items()))
    mapped, unmodelled, read_past = {}, [], []
    if licenses:
        mapped["Licenses"] = ",".join(f"{n}:{c}" for n, c in licenses.items()) + " (passed over until free)"
    mapped["nodes"] = (f"{len(cluster.nodes)} nodes, {cluster.units} cores of partition"
                       + (f"s {_short(part_name)} (their union)" if site else
                          f" {_short(part_name) if part_name is not None else '(all)'}")
                       + ", numbered by name as slurmctld numbers them")
    if site:
        mapped["partitions"] = (f"{site.describe()}; each job on its own partitions' nodes, within their MaxTime, "
                                "MaxNodes, MinNodes, AllowQos/DenyQos and State, with their default memory")
    for key, (line, value) in conf.settings.items():
        if key in PLUMBING:
            read_past.append(f"{key} ({_line(conf, line)})")
        elif key not in _HANDLED and not key.startswith("priority"):
            unmodelled.append(f"{key}={_short(value)} ({_line(conf, line)}): not modelled by pbf")
    if len(conf.files) > 1:
        read_past.append(f"include: {', '.join(conf.files[1:])} (read in place, as slurmctld reads them)")
    sched_line, sched = conf.settings.get("schedulertype", (None, "sched/backfill"))
    if sched not in ("sched/backfill", "sched/builtin"):
        raise ConfigError(where(getattr(sched_line, "path", conf.path), sched_line, _spelled(conf, "schedulertype"),
                                sched, "sched/backfill or sched/builtin"))
    mapped["slurm_version"] = f"{version}" + (" (pbf's default: a slurm.conf does not say)"
                                              if version == DEFAULT_SLURM_VERSION else "")
    s = _sched_params(conf, mapped, unmodelled, version)
    backfilling = sched != "sched/builtin" and s["bf_interval"] != -1
    mapped["SchedulerType"] = f"{sched} -> " + ("backfill" if backfilling else "no backfill") + (
        " (Slurm default)" if sched_line is None else "")
    priority = _priority(conf, mapped, unmodelled, version)
    if isinstance(priority, Multifactor) and priority.weight_job_size:
        # Slurm's job-size factor counts every node of the file and their CPUs, whatever the partition
        every = _node_records(conf)
        n_all, c_all = len(every), sum(n.cores for n in every)
        if (n_all, c_all) != (len(cluster.nodes), cluster.units):
            priority = dataclasses.replace(priority, size_nodes=n_all, size_cpus=c_all)
            mapped["priorityweightjobsize"] += f" (the job-size factor over the file's {n_all} nodes, {c_all} CPUs)"
    mem_from, select_type = _select(conf, mapped, unmodelled, version)
    for key in (() if site else ("defmempernode",)) + ("maxmempercpu", "maxmempernode", "defcpupergpu", "defmempergpu",
                "enforcepartlimits", "schedulertimeslice", "killwait"):
        if key in conf.settings:
            line, value = conf.settings[key]
            unmodelled.append(f"{key}={_short(value)} ({_line(conf, line)}): not modelled by pbf")
    for key, neutral in (("preempttype", "preempt/none"), ("preemptmode", "OFF"), ("overtimelimit", "0")):
        if key in conf.settings and conf.settings[key][1].upper() != neutral.upper():
            line, value = conf.settings[key]
            unmodelled.append(f"{key}={_short(value)} ({_line(conf, line)}): not modelled by pbf")
    if "topologyplugin" in conf.settings:
        line, value = conf.settings["topologyplugin"]
        if value not in ("topology/none", "topology/default"):
            unmodelled.append(f"topologyplugin={_short(value)} ({_line(conf, line)}): switches are not modelled; "
                              "Slurm numbers nodes by the plugin's rank where it ranks them (topology/hypercube), "
                              "pbf by name")
    if site and site.any_default_mem():
        mapped["DefMemPerCPU"] = ("DefMemPerNode / DefMemPerCPU of each job's first partition (else the file's) "
                                  "for jobs that ask none")
    elif "defmempercpu" in conf.settings or (chosen and "defmempercpu" in chosen[1]):
        mapped["DefMemPerCPU"] = f"{cluster.default_mem_per_core_mb} MB a core for jobs that ask none"
    _nodes_and_partition(conf, cluster, chosen, unmodelled)
    if site:
        unmodelled.extend(site.unmodelled())
    if requests is not None and not cluster.default_mem_per_core_mb and not (site and site.any_default_mem()):
        none = int(((np.asarray(requests.mem_core_mb) <= 0) & (np.asarray(requests.mem_node_mb) <= 0)).sum())
        if none and mem_from != "none":
            unmodelled.append(f"{none} jobs ask no memory and the partition has no DefMemPerCPU: Slurm gives each "
                              "the whole memory of its nodes, pbf none")
    # pbf's bf_yield_interval must fit in a cycle's budget (a longer one never yields in Slurm either)
    bf_interval = s["bf_interval"] if s["bf_interval"] != -1 else SLURM_DEFAULTS["bf_interval"]
    budget = s["bf_max_time"] if s["bf_max_time"] is not None else bf_interval
    yield_s = s["bf_yield_interval"] / 1e6
    if yield_s > budget:
        mapped["SchedulerParameters bf_yield_interval"] += (f"; cut to the cycle's budget {budget} s (a cycle never "
                                                            "yields in either)")
        yield_s = float(budget)
    limits, reservations = _bf_limits(s["limits"], priority, mapped, unmodelled,
                                      len(site.partitions) if site else 1)
    backfill = SlurmBackfill(reservations=reservations, max_job_test=s["bf_max_job_test"],
                             window=s["bf_window"] * 60, resolution=s["bf_resolution"], order="queue",
                             enabled=backfilling, slurm_version=version, select_type=select_type, **limits)
    sim = SlurmSim(bf_yield_interval=yield_s, batch_sched_delay=s["batch_sched_delay"],
                   sched_interval=s["sched_interval"], default_queue_depth=s["default_queue_depth"],
                   max_sched_time=float(s["max_sched_time"]), end_lag=1,
                   end_lag_below=END_LAG_BELOW)
    over_line, over = conf.settings.get("resvoverrun", (None, "0"))
    try:
        over_s = over_run_seconds(over)
    except ValueError as exc:
        raise ConfigError(where(getattr(over_line, "path", conf.path), over_line, _spelled(conf, "resvoverrun"),
                                over, str(exc))) from None
    mapped["ResvOverRun"] = (f"{over} -> resv_over_run {over_s} s: a job inside a reservation is ended at the first "
                             "30-second time-limit check after its end plus this" + (" (Slurm default)" if over_line
                                                                                     is None else ""))
    config = ReplayConfig(priority=priority, predictor="requested", backfill=backfill, trigger="interval",
                          bf_interval=bf_interval, bf_max_time=s["bf_max_time"], clock="slurm-sim",
                          slurm_sim=sim, cluster=cluster, mem_from=mem_from, node_search="slurm", partitions=site,
                          resv_over_run=over_s)
    mapped["pbf"] = ("preset slurm: a reservation for every tested job, requested times, queue order, "
                     "interval trigger, slurm-sim clock; Slurm's node search (will-run test, whole-node "
                     f"reservations); the end of a job shorter than {END_LAG_BELOW} s seen 1 s late (end_lag, as a "
                     "real Slurm sees it)")
    unmodelled.extend(ALWAYS_UNMODELLED)
    return SlurmSettings(config, mapped, unmodelled, cluster, part_name, read_past, conf.path, version)
