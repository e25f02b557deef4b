"""A site's ``slurm.conf`` seen twice: as a private configuration a real Slurm can run in a scratch
folder (:func:`write_private_conf`), and as the pbf replay settings that stand for the site's scheduler
(:func:`replay_settings`), with every setting pbf does not model listed, never dropped in silence.

The private configuration keeps what decides where and when jobs run -- the ``NodeName`` lines (CPUs
or sockets x cores x threads, ``RealMemory``, features, GPUs by count, ``Weight``), the
``PartitionName`` lines, ``SchedulerType``/``SchedulerParameters``, the ``Priority*`` lines,
``SelectType``/``SelectTypeParameters`` and the memory defaults -- and replaces what ties Slurm to the
site: host names, addresses and ports (every daemon inside the harness's private network namespace:
``SlurmctldHost=pbfctl(10.253.0.1)``, one ``Port`` per node), paths (state, spool, logs, pid files in
the scratch folder), authentication (``auth/none``), accounting (none; jobs are recorded by
``jobcomp/filetxt``), process tracking and task plugins (``linuxproc``, ``task/none``).

GPUs: Slurm 22.05's ``gres/gpu`` plugin drops a GPU that has no ``File`` ("Removing file-less GPU"),
with or without ``Flags=CountOnly``, and the node is then refused ("gres/gpu count reported lower than
configured"). The private ``gres.conf`` therefore names one empty placeholder file per GPU in the
scratch folder (slurmd logs that they are not device files and counts them); with ``task/none``
nothing is constrained by them. GPU types (``gpu:a100:2``) become plain counts, as pbf counts them.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..errors import ConfigError
from ..slurm_conf import _lines, _pairs, read_slurm_conf

__all__ = ["PrivateConf", "ReplaySettings", "write_private_conf", "replay_settings", "slurm_duration", "natural_key",
           "SLURM_DEFAULTS", "CTL_HOST", "CTL_ADDR", "CTL_PORT", "FIRST_NODE_PORT"]

#: the controller's host name and address inside the private network namespace
CTL_HOST, CTL_ADDR = "pbfctl", "10.253.0.1"
#: the controller's port and the first node's (node k listens on FIRST_NODE_PORT + k)
CTL_PORT, FIRST_NODE_PORT = 6817, 17001

#: Slurm 22.05's defaults of the settings pbf maps (slurm.conf(5) of 22.05), used where the site sets none
SLURM_DEFAULTS = {"bf_interval": 30, "bf_window": 1440, "bf_resolution": 60, "bf_max_job_test": 500,
                  "bf_yield_interval": 2_000_000, "default_queue_depth": 100, "sched_interval": 60,
                  "batch_sched_delay": 3, "MessageTimeout": 10, "PriorityMaxAge": 7 * 86400,
                  "PriorityDecayHalfLife": 7 * 86400, "PriorityCalcPeriod": 300}

# -- what the harness does with each key of a site's slurm.conf (lower case) ------------------------

#: global keys copied into the private configuration as the site wrote them
_KEEP = ("schedulertype", "schedulerparameters", "selecttype", "selecttypeparameters", "defmempercpu",
         "defmempernode", "maxmempercpu", "maxmempernode", "defcpupergpu", "defmempergpu", "overtimelimit",
         "killwait", "enforcepartlimits", "messagetimeout", "preempttype", "preemptmode",
         "fairsharedampeningfactor", "schedulertimeslice")
_KEEP_PREFIX = ("priority",)
#: global keys the harness replaces (hosts, ports, paths, authentication, daemons' plumbing): they do not
#: decide which job runs where or when
_REPLACED = frozenset("""clustername slurmctldhost controlmachine controladdr backupcontroller backupaddr
    slurmctldport slurmdport authtype authinfo authalttypes authaltparameters credtype cryptotype slurmuser
    slurmduser statesavelocation slurmdspooldir slurmctldpidfile slurmdpidfile slurmctldlogfile slurmdlogfile
    slurmctlddebug slurmddebug slurmschedlogfile slurmschedloglevel debugflags logtimeformat jobcomptype
    jobcomploc jobcomphost jobcompport jobcompuser jobcomppass jobcompparams accountingstoragetype
    accountingstoragehost accountingstorageport accountingstorageloc accountingstorageuser
    accountingstoragepass accountingstoragetres accountingstorageexternalhost accountingstoreflags
    accountingstoragebackuphost jobacctgathertype jobacctgatherfrequency jobacctgatherparams
    acctgathernodefreq acctgatherenergytype acctgatherprofiletype acctgatherinterconnecttype
    acctgatherfilesystemtype proctracktype taskplugin taskpluginparam mpidefault mpiparams switchtype
    launchtype launchparameters mailprog maildomain returntoservice slurmctldtimeout slurmdtimeout
    inactivelimit minjobage maxjobcount waittime prolog epilog prologflags taskprolog taskepilog srunprolog
    srunepilog prologslurmctld epilogslurmctld prologepilogtimeout healthcheckprogram healthcheckinterval
    healthchecknodestate plugindir plugstackconf propagateresourcelimits propagateresourcelimitsexcept
    propagateprioprocess tmpfs usepam rebootprogram resumeprogram suspendprogram suspendtime suspendrate
    resumerate resumetimeout suspendtimeout suspendexcnodes suspendexcparts resumefailprogram treewidth
    gresTypes grestypes fastschedule cachegroups jobcredentialprivatekey jobcredentialpubliccertificate
    jobfilecopy firstjobid maxstepcount slurmctldparameters slurmdparameters communicationparameters
    requeueexit requeueexithold jobrequeue unkillablestepprogram unkillablesteptimeout x11parameters
    hashplugin clifilterplugins jobcontainertype batchstarttimeout completewait epilogmsgtime
    getenvtimeout tcptimeout msgaggregationparams routeplugin slurmctldprimaryonprog
    slurmctldprimaryoffprog slurmctldsyslogdebug slurmdsyslogdebug slurmdlogfile slurmduser
    slurmctldaddr slurmdtimeout vsizefactor memlimitenforce disablerootjobs allowspecresourcesusage
    maxarraysize maxtaskspernode maxjobid include keepalivetime maxdbdmsgs openmp reconfigflags
    resvoverrun resvepilog resvprolog schedulerrootfilter sruntimeout jobcompparams
    acctgathernodefreq dependencyparameters""".split())
#: SchedulerParameters options pbf maps (the rest are listed as not modelled)
_SCHED_MAPPED = ("bf_interval", "bf_max_time", "bf_window", "bf_resolution", "bf_max_job_test", "max_job_bf",
                 "default_queue_depth", "sched_interval", "batch_sched_delay", "max_sched_time",
                 "bf_yield_interval")
#: partition keys the private configuration drops: access rules (the harness submits as root)
_PART_DROP = ("allowaccounts", "allowgroups", "allowqos", "denyaccounts", "denyqos", "allocnodes",
              "disablerootjobs", "rootonly", "qos", "alternate", "state")
#: partition keys that do not change where or when a job of the harness runs
_PART_HARMLESS = ("partitionname", "nodes", "default", "defmempercpu", "hidden", "defaulttime", "state",
                  "tresbillingweights", "priorityjobfactor", "alternate", "allowaccounts", "allowgroups",
                  "allowqos", "denyaccounts", "denyqos", "allocnodes", "disablerootjobs", "rootonly", "qos",
                  "graceTime", "gracetime", "reqresv", "lln")
#: node keys kept in the private configuration
_NODE_KEEP = {"cpus": "CPUs", "procs": "CPUs", "boards": "Boards", "sockets": "Sockets",
              "socketsperboard": "SocketsPerBoard", "corespersocket": "CoresPerSocket",
              "threadspercore": "ThreadsPerCore", "realmemory": "RealMemory", "tmpdisk": "TmpDisk",
              "weight": "Weight", "corespeccount": "CoreSpecCount", "cpuspeclist": "CPUSpecList",
              "memspeclimit": "MemSpecLimit", "feature": "Feature", "features": "Feature"}
_NODE_REPLACED = ("nodename", "nodehostname", "nodeaddr", "port", "gres")


@dataclass
class PrivateConf:
    """A private Slurm configuration written into ``scratch``: ``path`` (slurm.conf), ``gres_path``
    (gres.conf, or None without GPUs), ``nodes`` (name, port, GPUs) in file order, the ``partition``
    jobs are submitted to, and what the site file has that the private one does not carry
    (``not_carried``: one sentence each)."""
    path: str
    gres_path: str | None
    scratch: str
    nodes: list
    partition: str
    ctl_port: int = CTL_PORT
    not_carried: list = field(default_factory=list)

    @property
    def node_names(self) -> list:
        return [n[0] for n in self.nodes]


def _site(path):
    conf = read_slurm_conf(path)
    if not conf.nodes:
        raise ConfigError(f"{conf.path}: no NodeName lines")
    return conf


def _partitions(path):
    """The PartitionName lines with ``PartitionName=DEFAULT`` values applied: (line, {key: value})."""
    out, default = [], {}
    for number, text in _lines(path):
        pairs = _pairs(path, number, text)
        if "partitionname" not in pairs:
            continue
        if pairs["partitionname"].upper() == "DEFAULT":
            default = {k: v for k, v in pairs.items() if k != "partitionname"}
            continue
        out.append((number, {**default, **pairs}))
    return out


def choose_partition(path, partition=None):
    """The partition the harness submits to: ``partition``, else the ``Default=YES`` one, else the only
    one; ``(line, pairs)``, or None when the file has no PartitionName line (every node, a partition of
    the harness's own). Several partitions and none chosen or default: a ConfigError."""
    parts = _partitions(path)
    if partition is not None:
        for number, pairs in parts:
            if pairs["partitionname"] == partition:
                return number, pairs
        names = ", ".join(p["partitionname"] for _, p in parts) or "none"
        raise ConfigError(f"{path}: no partition {partition!r} (partitions: {names})")
    for number, pairs in parts:
        if pairs.get("default", "").upper() == "YES":
            return number, pairs
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return None
    raise ConfigError(f"{path}: {len(parts)} partitions and none has Default=YES: name one "
                      f"(--partition; partitions: {', '.join(p['partitionname'] for _, p in parts)})")


def _gres_gpus(path, number, text):
    """(GPU count, other gres entries) of a ``Gres=`` value."""
    from ..slurm_conf import _gpus
    others = [e for e in filter(None, text.split(",")) if e.split(":")[0] != "gpu"]
    return _gpus(path, number, text), others


def _nodes_of(conf):
    from ..cluster import expand_hostlist
    out = []
    for number, pairs in conf.nodes:
        try:
            names = expand_hostlist(pairs["nodename"])
        except ValueError as exc:
            raise ConfigError(f"{conf.path}, line {number}: NodeName={pairs['nodename']!r}: expected {exc}") from None
        for name in names:
            out.append((number, name, pairs))
    return out


def write_private_conf(site: str | os.PathLike, scratch: str | os.PathLike, partition: str | None = None,
                       *, debug_flags: str = "Backfill") -> PrivateConf:
    """Write ``slurm.conf`` (and ``gres.conf`` with placeholder GPU files when a node has GPUs) into
    ``scratch`` from the site's ``site`` file, for daemons in the harness's private network namespace;
    returns a :class:`PrivateConf`. Nothing of the site's host names, addresses, ports or paths is
    kept."""
    site, scratch = os.fspath(site), os.path.abspath(os.fspath(scratch))
    if re.search(r"\s", scratch):
        raise ConfigError(f"scratch folder {scratch!r}: Slurm's files cannot have white space in their paths")
    conf = _site(site)
    chosen = choose_partition(site, partition)
    not_carried = []
    lines = [f"# private Slurm configuration written by pbf validate from {os.path.basename(site)}",
             "ClusterName=pbfvalidate", f"SlurmctldHost={CTL_HOST}({CTL_ADDR})", f"SlurmctldPort={CTL_PORT}",
             "AuthType=auth/none", "CredType=cred/none", "SlurmUser=root", "SlurmdUser=root",
             f"StateSaveLocation={scratch}/state", f"SlurmdSpoolDir={scratch}/spool/%n",
             f"SlurmctldPidFile={scratch}/slurmctld.pid", f"SlurmdPidFile={scratch}/slurmd.%n.pid",
             f"SlurmctldLogFile={scratch}/log/slurmctld.log", f"SlurmdLogFile={scratch}/log/slurmd.%n.log",
             "SlurmctldDebug=info", "SlurmdDebug=info", f"DebugFlags={debug_flags}" if debug_flags else "",
             "SlurmdParameters=config_overrides", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
             "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
             "JobCompType=jobcomp/filetxt", f"JobCompLoc={scratch}/jobcomp.txt",
             "MpiDefault=none", "MailProg=/bin/true", "ReturnToService=2", "SlurmdTimeout=300",
             "InactiveLimit=0", "MinJobAge=300", "MaxJobCount=100000"]
    lines = [x for x in lines if x]
    for key, (number, value) in conf.settings.items():
        if key in _KEEP or key.startswith(_KEEP_PREFIX):
            lines.append(f"{key}={value}")
        elif key not in _REPLACED and key != "grestypes":
            not_carried.append(f"{key}={value} (line {number}): not known to the harness, not carried")
    nodes, gres_lines, port = [], [], FIRST_NODE_PORT
    gpu_dir = os.path.join(scratch, "gpus")
    node_lines = []
    for number, name, pairs in _nodes_of(conf):
        words = [f"NodeName={name}", f"NodeHostname={CTL_HOST}", f"NodeAddr={CTL_ADDR}", f"Port={port}"]
        for key, value in pairs.items():
            if key in _NODE_KEEP:
                words.append(f"{_NODE_KEEP[key]}={value}")
            elif key == "state" and value.upper() in ("UNKNOWN", "IDLE"):
                continue
            elif key in ("state", "reason"):
                not_carried.append(f"NodeName={name}: {key}={value} (line {number}): not carried (the harness "
                                   "starts every node up)")
            elif key not in _NODE_REPLACED:
                not_carried.append(f"NodeName={name}: {key}={value} (line {number}): not carried")
        gpus, others = _gres_gpus(conf.path, number, pairs.get("gres", ""))
        if others:
            not_carried.append(f"NodeName={name}: Gres {','.join(others)} (line {number}): only GPUs are carried")
        if gpus:
            words.append(f"Gres=gpu:{gpus}")
            files = [os.path.join(gpu_dir, f"{name}-gpu{i}") for i in range(gpus)]
            gres_lines.append(f"NodeName={name} Name=gpu Count={gpus} File={','.join(files)}")
        node_lines.append(" ".join(words))
        nodes.append((name, port, gpus))
        port += 1
    if len({n[0] for n in nodes}) != len(nodes):
        dup = sorted({n[0] for n in nodes if [m[0] for m in nodes].count(n[0]) > 1})
        raise ConfigError(f"{conf.path}: node {dup[0]!r} has more than one NodeName line")
    if gres_lines:
        lines.append("GresTypes=gpu")
    lines.extend(node_lines)
    names = {n[0] for n in nodes}
    part_name = None
    for number, pairs in _partitions(site):
        words = []
        for key, value in pairs.items():
            if key in _PART_DROP:
                if key != "state" or value.upper() != "UP":
                    not_carried.append(f"PartitionName={pairs['partitionname']}: {key}={value} (line {number}): "
                                       "not carried (the harness submits as root to an UP partition)")
                continue
            words.append(f"{key}={value}")
        if pairs.get("nodes", "").upper() not in ("", "ALL"):
            from ..cluster import expand_hostlist
            for n in expand_hostlist(pairs["nodes"]):
                if n not in names:
                    raise ConfigError(f"{conf.path}, line {number}: Nodes={pairs['nodes']!r}: node {n!r} has no "
                                      "NodeName line")
        words.append("State=UP")
        lines.append(" ".join(words))
    if chosen is None:
        part_name = "pbf"
        lines.append("PartitionName=pbf Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
        not_carried.append("no PartitionName line: the harness runs every node as partition 'pbf'")
    else:
        part_name = chosen[1]["partitionname"]
    os.makedirs(scratch, exist_ok=True)
    path = os.path.join(scratch, "slurm.conf")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    gres_path = None
    if gres_lines:
        os.makedirs(gpu_dir, exist_ok=True)
        for line in gres_lines:
            for f in line.split("File=")[1].split(","):
                open(f, "a").close()
        gres_path = os.path.join(scratch, "gres.conf")
        with open(gres_path, "w") as fh:
            fh.write("# placeholder files: Slurm 22.05 drops a GPU without File (see pbf.validate.slurm_config)\n")
            fh.write("\n".join(gres_lines) + "\n")
    return PrivateConf(path, gres_path, scratch, nodes, part_name, CTL_PORT, not_carried)


# -- the pbf settings that stand for the site's scheduler ------------------------------------------

_DURATION = re.compile(r"^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$")


def slurm_duration(text: str, where: str) -> int | None:
    """Seconds of a Slurm time value: ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``,
    ``days-hours``, ``days-hours:minutes``, ``days-hours:minutes:seconds``; None for ``UNLIMITED`` /
    ``INFINITE``. ``where`` names the file, line and key in the error."""
    t = text.strip()
    if t.upper() in ("UNLIMITED", "INFINITE"):
        return None
    m = _DURATION.match(t)
    if not m:
        raise ConfigError(f"{where}={text!r}: expected a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM "
                          "or D-HH:MM:SS)")
    days, a, b, c = m.groups()
    if days is not None:
        h, mi, s = int(a), int(b or 0), int(c or 0)
        return int(days) * 86400 + h * 3600 + mi * 60 + s
    if c is not None:
        return int(a) * 3600 + int(b) * 60 + int(c)
    if b is not None:
        return int(a) * 60 + int(b)
    return int(a) * 60


@dataclass
class ReplaySettings:
    """What pbf replays a site's scheduler with: ``config`` (a :class:`pbf.ReplayConfig` on the site's
    cluster of nodes), ``mapped`` (each site setting pbf models and the pbf setting it became, or the
    Slurm default used), ``unmodelled`` (every setting of the site that pbf does not model, one sentence
    each) and ``cluster`` (the :class:`pbf.Cluster` of the partition)."""
    config: object
    mapped: dict
    unmodelled: list
    cluster: object
    partition: str | None


def _int(where, value, low=0):
    if not re.fullmatch(r"-?\d+", str(value).strip()) or int(value) < low:
        raise ConfigError(f"{where}={value!r}: expected a whole number >= {low}")
    return int(value)


def _sched_params(conf, mapped, unmodelled):
    number, text = conf.settings.get("schedulerparameters", (None, ""))
    where = f"{conf.path}, line {number}: SchedulerParameters"
    opts = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if key in _SCHED_MAPPED:
            if not sep:
                raise ConfigError(f"{where}: {item!r}: expected {key}=NUMBER")
            opts[key] = value.strip()
        else:
            unmodelled.append(f"SchedulerParameters {item}: not modelled by pbf")
    if "max_job_bf" in opts and "bf_max_job_test" not in opts:
        opts["bf_max_job_test"] = opts.pop("max_job_bf")
    opts.pop("max_job_bf", None)
    out = {}
    for key in ("bf_interval", "bf_window", "bf_resolution", "bf_max_job_test", "default_queue_depth",
                "sched_interval", "batch_sched_delay", "bf_yield_interval"):
        if key in opts:
            out[key] = _int(f"{where} {key}", opts[key], 1 if key != "batch_sched_delay" else 0)
            mapped[f"SchedulerParameters {key}"] = f"{out[key]} (site)"
        else:
            out[key] = SLURM_DEFAULTS[key]
            mapped[f"SchedulerParameters {key}"] = f"{out[key]} (Slurm 22.05 default)"
    if "bf_max_time" in opts:
        out["bf_max_time"] = _int(f"{where} bf_max_time", opts["bf_max_time"], 1)
        mapped["SchedulerParameters bf_max_time"] = f"{out['bf_max_time']} (site)"
    else:
        out["bf_max_time"] = None
        mapped["SchedulerParameters bf_max_time"] = f"= bf_interval, {out['bf_interval']} (Slurm default)"
    if "max_sched_time" in opts:
        out["max_sched_time"] = _int(f"{where} max_sched_time", opts["max_sched_time"], 1)
        mapped["SchedulerParameters max_sched_time"] = f"{out['max_sched_time']} (site)"
    else:
        mt_line, mt = conf.settings.get("messagetimeout", (None, str(SLURM_DEFAULTS["MessageTimeout"])))
        mt = _int(f"{conf.path}, line {mt_line}: MessageTimeout", mt, 1)
        out["max_sched_time"] = min(max(mt // 2, 1), 2)
        mapped["SchedulerParameters max_sched_time"] = (f"{out['max_sched_time']} (Slurm default: "
                                                        f"MessageTimeout {mt} / 2, from 1 to 2 s)")
    return out


def _priority(conf, mapped, unmodelled):
    get = lambda key, default=None: conf.settings.get(key, (None, default))  # noqa: E731
    number, kind = get("prioritytype", "priority/basic")
    mapped["PriorityType"] = f"{kind} -> " + ("fcfs" if kind == "priority/basic" else "multifactor")
    for key, (line, value) in conf.settings.items():
        if key.startswith("priority") and key not in (
                "prioritytype", "priorityweightage", "priorityweightfairshare", "priorityweightjobsize",
                "priorityweightpartition", "priorityweightqos", "prioritymaxage", "prioritydecayhalflife",
                "prioritycalcperiod", "priorityfavorsmall"):
            unmodelled.append(f"{key}={value} (line {line}): not modelled by pbf")
    if kind == "priority/basic":
        for key in ("priorityweightage", "priorityweightfairshare", "priorityweightjobsize",
                    "priorityweightpartition", "priorityweightqos"):
            if key in conf.settings:
                unmodelled.append(f"{key}: has no effect under priority/basic (FIFO by submission)")
        return "fcfs"
    if kind != "priority/multifactor":
        unmodelled.append(f"PriorityType={kind} (line {number}): not modelled; pbf replays FIFO (fcfs)")
        return "fcfs"
    from ..plugins.multifactor import Multifactor
    kw = {}
    for key, attr in (("priorityweightage", "weight_age"), ("priorityweightfairshare", "weight_fairshare"),
                      ("priorityweightjobsize", "weight_job_size"), ("priorityweightpartition", "weight_partition"),
                      ("priorityweightqos", "weight_qos")):
        line, value = get(key, "0")
        kw[attr] = float(_int(f"{conf.path}, line {line}: {key}", value, 0))
        mapped[key] = f"{attr} {kw[attr]:g}" + (" (Slurm default 0)" if line is None else "")
    for key, attr, default in (("prioritymaxage", "max_age", "PriorityMaxAge"),
                               ("prioritydecayhalflife", "half_life", "PriorityDecayHalfLife")):
        line, value = get(key)
        secs = SLURM_DEFAULTS[default] if value is None else slurm_duration(value, f"{conf.path}, line {line}: {key}")
        kw[attr] = 0 if secs is None else secs
        mapped[key] = f"{attr} {kw[attr]} s" + (" (Slurm default)" if value is None else "")
    line, value = get("prioritycalcperiod")
    kw["calc_period"] = (SLURM_DEFAULTS["PriorityCalcPeriod"] if value is None
                         else slurm_duration(value, f"{conf.path}, line {line}: PriorityCalcPeriod") or 0)
    mapped["prioritycalcperiod"] = f"calc_period {kw['calc_period']} s"
    line, value = get("priorityfavorsmall", "NO")
    kw["favor_small"] = value.upper() == "YES"
    if kw["weight_fairshare"]:
        unmodelled.append("PriorityWeightFairshare: the private Slurm has no slurmdbd, so no association and "
                          "no fair-share usage; pbf charges usage to each trace user with equal shares")
    if kw["weight_qos"]:
        unmodelled.append("PriorityWeightQOS: the private Slurm has no QOS (no slurmdbd)")
    return Multifactor(**kw)


def replay_settings(site: str | os.PathLike, partition: str | None = None, *, requests=None) -> ReplaySettings:
    """The pbf replay settings standing for the scheduler of the site's ``slurm.conf``: Slurm's backfill as
    pbf's ``slurm`` preset (a reservation for every tested job, requested times, queue order, the
    slurm-sim clock and interval trigger) with the site's ``SchedulerParameters`` (``bf_interval``,
    ``bf_max_time``, ``bf_window`` minutes -> seconds, ``bf_resolution``, ``bf_max_job_test`` /
    ``max_job_bf``, ``default_queue_depth``, ``sched_interval``, ``batch_sched_delay``,
    ``max_sched_time``, ``bf_yield_interval`` microseconds -> seconds), ``SchedulerType``
    (``sched/builtin``: no backfill), ``PriorityType`` (basic: FCFS; multifactor: its weights, ages and
    period), ``SelectTypeParameters`` (memory consumable or not) and the partition's nodes. Settings the
    site leaves out take Slurm 22.05's defaults. Everything else the site sets is listed in
    ``unmodelled``. ``requests`` (a :class:`pbf.resources.Requests`, optional) adds what the jobs make
    matter (jobs without memory on a partition without ``DefMemPerCPU``)."""
    from ..config import Backfill
    from ..replayer import ReplayConfig
    from ..scheduler_time import SlurmSim
    from ..slurm_conf import cluster_from_slurm_conf
    site = os.fspath(site)
    conf = _site(site)
    chosen = choose_partition(site, partition)
    part_name = chosen[1]["partitionname"] if chosen else None
    cluster = cluster_from_slurm_conf(site, part_name)
    mapped, unmodelled = {}, []
    for key, (line, value) in conf.settings.items():
        if key in _KEEP or key.startswith(_KEEP_PREFIX) or key in _REPLACED:
            continue
        unmodelled.append(f"{key}={value} (line {line}): not known to the harness")
    sched_line, sched = conf.settings.get("schedulertype", (None, "sched/backfill"))
    if sched not in ("sched/backfill", "sched/builtin"):
        unmodelled.append(f"SchedulerType={sched} (line {sched_line}): not modelled; pbf replays sched/backfill")
    mapped["SchedulerType"] = f"{sched} -> " + ("no backfill" if sched == "sched/builtin" else "backfill")
    s = _sched_params(conf, mapped, unmodelled)
    priority = _priority(conf, mapped, unmodelled)
    sel_line, select = conf.settings.get("selecttype", (None, "select/linear"))
    mem_from = "requested"
    if select not in ("select/cons_tres", "select/cons_res"):
        unmodelled.append(f"SelectType={select} (line {sel_line}): whole-node allocation is not modelled; pbf "
                          "places jobs by cons_res rules")
    mapped["SelectType"] = f"{select} -> cons_res node model"
    tp_line, tp = conf.settings.get("selecttypeparameters", (None, "CR_Core_Memory" if select != "select/linear"
                                                                  else ""))
    flags = [f.strip() for f in tp.split(",") if f.strip()]
    kinds = [f for f in flags if f.upper() in ("CR_CPU", "CR_CORE", "CR_SOCKET", "CR_MEMORY", "CR_CPU_MEMORY",
                                               "CR_CORE_MEMORY", "CR_SOCKET_MEMORY")]
    if kinds:
        kind = kinds[0].upper()
        if kind.endswith("_MEMORY"):
            mapped["SelectTypeParameters"] = f"{kinds[0]} -> memory is held (mem_from requested)"
        elif kind == "CR_MEMORY":
            unmodelled.append(f"SelectTypeParameters={tp} (line {tp_line}): CR_Memory (cores not consumable) "
                              "is not modelled")
        else:
            mem_from = "none"
            mapped["SelectTypeParameters"] = f"{kinds[0]} -> memory is not held (mem_from none)"
        if kind.startswith("CR_SOCKET"):
            unmodelled.append(f"SelectTypeParameters {kinds[0]}: whole sockets are not modelled; pbf allocates "
                              "cores")
    for f in flags:
        if f not in kinds:
            unmodelled.append(f"SelectTypeParameters {f} (line {tp_line}): not modelled")
    for key in ("defmempernode", "maxmempercpu", "maxmempernode", "defcpupergpu", "defmempergpu",
                "enforcepartlimits", "fairsharedampeningfactor", "schedulertimeslice"):
        if key in conf.settings:
            line, value = conf.settings[key]
            unmodelled.append(f"{key}={value} (line {line}): not modelled by pbf")
    for key, neutral in (("preempttype", "preempt/none"), ("preemptmode", "OFF"), ("overtimelimit", "0")):
        if key in conf.settings and conf.settings[key][1].upper() != neutral.upper():
            line, value = conf.settings[key]
            unmodelled.append(f"{key}={value} (line {line}): not modelled by pbf")
    if "defmempercpu" in conf.settings or (chosen and "defmempercpu" in chosen[1]):
        mapped["DefMemPerCPU"] = f"{cluster.default_mem_per_core_mb} MB a core for jobs that ask none"
    # nodes and the partition
    weights = set()
    part_names = {n.name for n in cluster.nodes}
    for number, name, pairs in _nodes_of(conf):
        if name not in part_names:
            continue
        weights.add(pairs.get("weight", "1"))
        for key in ("corespeccount", "cpuspeclist", "memspeclimit"):
            if key in pairs:
                unmodelled.append(f"NodeName={name}: {key}={pairs[key]} (line {number}): specialised cores or "
                                  "memory are not modelled")
        if pairs.get("threadspercore", "1") not in ("1", ""):
            unmodelled.append(f"NodeName={name}: ThreadsPerCore={pairs['threadspercore']} (line {number}): pbf counts "
                              "every CPU as a core; Slurm allocates whole cores under CR_Core")
        gres = pairs.get("gres", "")
        if any(len(e.split(":")) > 2 for e in gres.split(",") if e.startswith("gpu")):
            unmodelled.append(f"NodeName={name}: Gres={gres} (line {number}): GPU types are counted as plain GPUs")
        if any(e.split(":")[0] != "gpu" for e in filter(None, gres.split(","))):
            unmodelled.append(f"NodeName={name}: Gres={gres} (line {number}): only GPUs are modelled")
    file_order = [n.name for n in cluster.nodes]
    name_order = sorted(file_order, key=natural_key)
    if file_order != name_order:
        unmodelled.append(f"node order: Slurm 22.05 numbers nodes by name ({', '.join(name_order[:8])}"
                          f"{', ...' if len(name_order) > 8 else ''}), pbf takes the NodeName lines' order "
                          f"({', '.join(file_order[:8])}{', ...' if len(file_order) > 8 else ''}); best-fit "
                          "node choices differ")
    if len(weights) > 1:
        unmodelled.append(f"NodeName Weight ({', '.join(sorted(weights))}): Slurm prefers nodes of lower weight; "
                          "pbf takes nodes in file order")
    if chosen:
        number, pairs = chosen
        for key, value in pairs.items():
            if key in _PART_HARMLESS:
                continue
            if key == "maxtime" and value.upper() in ("INFINITE", "UNLIMITED"):
                continue
            if key == "oversubscribe" and value.upper() == "NO":
                continue
            if key == "shared" and value.upper() == "NO":
                continue
            if key == "selecttypeparameters":
                unmodelled.append(f"PartitionName={pairs['partitionname']}: {key}={value} (line {number}): not "
                                  "modelled")
                continue
            unmodelled.append(f"PartitionName={pairs['partitionname']}: {key}={value} (line {number}): not "
                              "modelled by pbf")
    if requests is not None and not cluster.default_mem_per_core_mb:
        import numpy as np
        none = int(((np.asarray(requests.mem_core_mb) <= 0) & (np.asarray(requests.mem_node_mb) <= 0)).sum())
        if none and mem_from != "none":
            unmodelled.append(f"{none} jobs ask no memory and the partition has no DefMemPerCPU: Slurm gives each "
                              "the whole memory of its nodes, pbf none")
    # pbf's bf_yield_interval must fit in a cycle's budget (a longer one never yields in Slurm either)
    budget = s["bf_max_time"] if s["bf_max_time"] is not None else s["bf_interval"]
    yield_s = s["bf_yield_interval"] / 1e6
    if yield_s > budget:
        mapped["SchedulerParameters bf_yield_interval"] += (f"; cut to the cycle's budget {budget} s (a cycle never "
                                                            "yields in either)")
        yield_s = float(budget)
    backfill = Backfill(reservations=None, max_job_test=s["bf_max_job_test"], window=s["bf_window"] * 60,
                        resolution=s["bf_resolution"], order="queue", enabled=sched != "sched/builtin")
    sim = SlurmSim(bf_yield_interval=yield_s, batch_sched_delay=s["batch_sched_delay"],
                   sched_interval=s["sched_interval"], default_queue_depth=s["default_queue_depth"],
                   max_sched_time=float(s["max_sched_time"]))
    config = ReplayConfig(priority=priority, predictor="requested", backfill=backfill, trigger="interval",
                          bf_interval=s["bf_interval"], bf_max_time=s["bf_max_time"], clock="slurm-sim",
                          slurm_sim=sim, cluster=cluster, mem_from=mem_from)
    mapped["pbf"] = ("preset slurm: a reservation for every tested job, requested times, queue order, "
                     "interval trigger, slurm-sim clock")
    unmodelled.extend(_always_unmodelled(s))
    return ReplaySettings(config, mapped, unmodelled, cluster, part_name)


def natural_key(name: str) -> tuple:
    """The key of Slurm's node order: names compared by their text and numeric parts (``a1 < b1 < n2 <
    n10``), as slurmctld 22.05 numbers its nodes whatever the order of the NodeName lines (seen in its
    select plugin's node dump)."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.findall(r"\d+|\D+", name))


def _always_unmodelled(s):
    """What Slurm 22.05 does that pbf's model leaves out whatever the site sets (one sentence each)."""
    return [
        "bf_continue: pbf ends a backfill cycle whose yield finds arrivals or completions (Slurm's default, "
        "off); Slurm 22.05's bf_yield_sleep (0.5 s without locks per yield) costs pbf no time",
        "sched_min_interval, partition_job_depth, the scheduling triggered by RPCs: pbf's main scheduler runs "
        "on its own timers (batch_sched_delay, sched_interval) in whole simulated seconds",
        "job launch: Slurm starts a batch job by RPC to slurmd (a fraction of a second); pbf starts it at the "
        "scheduling instant",
        "will-run test: Slurm plans a job that cannot start now by removing running jobs in batches whose ends lie "
        "within a window of 30 s that doubles each batch, and plans the start at the batch's last end; pbf plans "
        "at the exact earliest end (a time scale does not scale Slurm's 30 s)",
    ]
