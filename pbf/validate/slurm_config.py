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
from ..node import expand_hostlist
from ..slurm_conf import gres_gpus, node_lines, read_slurm_conf, slurm_node_key
from ..slurm_settings import (
    SLURM_DEFAULTS,
    SlurmSettings,
    _partitions,
    choose_partition,
    slurm_duration,
    slurm_settings,
)

__all__ = ["PrivateConf", "ReplaySettings", "write_private_conf", "replay_settings", "slurm_duration", "natural_key",
           "choose_partition", "SLURM_DEFAULTS", "CTL_HOST", "CTL_ADDR", "CTL_PORT", "FIRST_NODE_PORT", "DBD_PORT",
           "MYSQL_PORT"]

#: the controller's host name and address inside the private network namespace
CTL_HOST, CTL_ADDR = "pbfctl", "10.253.0.1"
#: the controller's port and the first node's (node k listens on FIRST_NODE_PORT + k)
CTL_PORT, FIRST_NODE_PORT = 6817, 17001
#: slurmdbd's and MariaDB's ports (inside the namespace, as every port here)
DBD_PORT, MYSQL_PORT = 6819, 3306

# -- what the harness does with each key of a site's slurm.conf (lower case) ------------------------

#: global keys copied into the private configuration as the site wrote them
_KEEP = ("schedulertype", "schedulerparameters", "selecttype", "selecttypeparameters", "defmempercpu",
         "defmempernode", "maxmempercpu", "maxmempernode", "defcpupergpu", "defmempergpu", "overtimelimit",
         "killwait", "enforcepartlimits", "messagetimeout", "preempttype", "preemptmode",
         "fairsharedampeningfactor", "schedulertimeslice", "resvoverrun")
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
    resvepilog resvprolog schedulerrootfilter sruntimeout jobcompparams
    acctgathernodefreq dependencyparameters""".split())
#: partition keys the private configuration drops: access rules (the harness submits as root)
_PART_DROP = ("allowaccounts", "allowgroups", "allowqos", "denyaccounts", "denyqos", "allocnodes",
              "disablerootjobs", "rootonly", "qos", "alternate", "state")
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
    jobs are submitted to ("": each to its own), and what the site file has that the private one does not carry
    (``not_carried``: one sentence each)."""
    path: str
    gres_path: str | None
    scratch: str
    nodes: list
    partition: str
    ctl_port: int = CTL_PORT
    not_carried: list = field(default_factory=list)
    accounting: bool = False      # slurmdbd (with its MariaDB) runs beside slurmctld: fair share has usage

    @property
    def node_names(self) -> list:
        return [n[0] for n in self.nodes]


def _site(path):
    conf = read_slurm_conf(path)
    if not conf.nodes:
        raise ConfigError(f"{conf.path}: no NodeName lines")
    return conf


def _gres_gpus(path, number, text):
    """(GPU count, other gres entries) of a ``Gres=`` value."""
    others = [e for e in filter(None, text.split(",")) if e.split(":")[0] != "gpu"]
    return gres_gpus(path, number, text), others


def _generic_gres(entries):
    """The generic resources of a node's ``Gres=`` entries other than GPUs: ``(entry, gres.conf words)``
    for each the private Slurm can hold (``nvme:2`` -> ``Name=nvme Count=2``, ``nvme:fast:2`` -> ``Name=nvme
    Type=fast Count=2``: a count without device files), and the entries it cannot (mps and shard need GPU
    devices)."""
    carried, left = [], []
    for entry in entries:
        parts = entry.split("(")[0].split(":")
        if parts[0] in ("mps", "shard"):
            left.append(entry)
            continue
        count = parts[-1] if len(parts) > 1 else "1"
        kind = f" Type={parts[1]}" if len(parts) == 3 else ""
        carried.append((entry.split("(")[0], f"Name={parts[0]}{kind} Count={count}"))
    return carried, left


def _nodes_of(conf):
    # (node_lines: the numbers checked and the names counted before they are made, a name given twice refused)
    return [(number, name, pairs) for number, pairs, names in node_lines(conf) for name in names]


def write_private_conf(site: str | os.PathLike, scratch: str | os.PathLike, partition: str | None = None,
                       *, debug_flags: str = "Backfill", all_partitions: bool = False,
                       accounting: bool = False, enforce: str = "associations") -> PrivateConf:
    """Write ``slurm.conf`` (and ``gres.conf`` with placeholder GPU files when a node has GPUs, and a count
    of each other generic resource a node has) into
    ``scratch`` from the site's ``site`` file, for daemons in the harness's private network namespace;
    returns a :class:`PrivateConf`. Nothing of the site's host names, addresses, ports or paths is
    kept. Every ``PartitionName`` line is carried; jobs go to ``partition`` (else the ``Default=YES``
    one, else the only one), or with ``all_partitions`` each to its own (:attr:`PrivateConf.partition`
    is then ""). ``accounting``: run slurmdbd even without fair share (a drain's node events, a case's
    limits), ``AccountingStorageEnforce=ENFORCE`` (``associations,limits,qos`` for limits)."""
    site, scratch = os.fspath(site), os.path.abspath(os.fspath(scratch))
    if re.search(r"\s", scratch):
        raise ConfigError(f"scratch folder {scratch!r}: Slurm's files cannot have white space in their paths")
    conf = _site(site)
    every = all_partitions and partition is None and bool(conf.partitions)
    chosen = None if every else choose_partition(site, partition)
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
    weight_fs = conf.settings.get("priorityweightfairshare", (None, "0"))[1]
    multifactor = conf.settings.get("prioritytype", (None, ""))[1] == "priority/multifactor"
    accounting = bool(accounting) or (multifactor and weight_fs.strip() not in ("0", ""))
    if accounting:
        # fair share needs associations and their usage: slurmdbd with a private MariaDB
        lines = [x for x in lines if x != "AccountingStorageType=accounting_storage/none"]
        lines += ["AccountingStorageType=accounting_storage/slurmdbd", f"AccountingStorageHost={CTL_ADDR}",
                  f"AccountingStoragePort={DBD_PORT}", f"AccountingStorageEnforce={enforce}"]
    lines = [x for x in lines if x]
    for key, (number, value) in conf.settings.items():
        if key in _KEEP or key.startswith(_KEEP_PREFIX):
            lines.append(f"{key}={value}")
        elif key not in _REPLACED and key != "grestypes":
            not_carried.append(f"{key}={value} (line {number}): not known to the harness, not carried")
    nodes, gres_lines, port, kinds = [], [], FIRST_NODE_PORT, {}
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
        carried, left = _generic_gres(others)
        if left:
            not_carried.append(f"NodeName={name}: Gres {','.join(left)} (line {number}): not carried (Slurm ties "
                               "mps and shard to GPU devices, which the harness's nodes lack)")
        if gpus or carried:
            words.append("Gres=" + ",".join(([f"gpu:{gpus}"] if gpus else []) + [e for e, _ in carried]))
        if gpus:
            files = [os.path.join(gpu_dir, f"{name}-gpu{i}") for i in range(gpus)]
            gres_lines.append(f"NodeName={name} Name=gpu Count={gpus} File={','.join(files)}")
        for _, line in carried:
            gres_lines.append(f"NodeName={name} {line}")
            kinds[line.split()[0][5:]] = None
        node_lines.append(" ".join(words))
        nodes.append((name, port, gpus))
        port += 1
    if gres_lines:
        lines.append("GresTypes=" + ",".join((["gpu"] if any(n[2] for n in nodes) else []) + list(kinds)))
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
            try:
                listed = expand_hostlist(pairs["nodes"])
            except ValueError as exc:
                raise ConfigError(f"{conf.path}, line {number}: Nodes={pairs['nodes']!r}: expected {exc}") from None
            for n in listed:
                if n not in names:
                    raise ConfigError(f"{conf.path}, line {number}: Nodes={pairs['nodes']!r}: node {n!r} has no "
                                      "NodeName line")
        words.append("State=UP")
        lines.append(" ".join(words))
    if every:
        part_name = ""
    elif chosen is None:
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
            for f in line.split("File=")[1].split(",") if "File=" in line else ():
                open(f, "a").close()
        gres_path = os.path.join(scratch, "gres.conf")
        with open(gres_path, "w") as fh:
            fh.write("# placeholder files: Slurm 22.05 drops a GPU without File (see pbf.validate.slurm_config)\n")
            fh.write("\n".join(gres_lines) + "\n")
    if accounting:
        dbd = os.path.join(scratch, "slurmdbd.conf")      # slurmdbd reads it beside SLURM_CONF
        with open(dbd, "w") as fh:
            fh.write("\n".join([
                "# private slurmdbd configuration written by pbf validate", "AuthType=auth/none",
                f"DbdHost={CTL_HOST}", f"DbdAddr={CTL_ADDR}", f"DbdPort={DBD_PORT}", "SlurmUser=root",
                f"LogFile={scratch}/log/slurmdbd.log", f"PidFile={scratch}/slurmdbd.pid", "DebugLevel=info",
                "StorageType=accounting_storage/mysql", "StorageHost=127.0.0.1", f"StoragePort={MYSQL_PORT}",
                "StorageUser=root", "StorageLoc=slurm_acct_db"]) + "\n")
        os.chmod(dbd, 0o600)
    return PrivateConf(path, gres_path, scratch, nodes, part_name, CTL_PORT, not_carried, accounting)


# -- the pbf settings that stand for the site's scheduler: pbf.slurm_settings, the same for pbf replay

#: the pbf settings of a site (:func:`pbf.slurm_settings.slurm_settings`: the same as ``pbf replay --slurm-conf``)
replay_settings = slurm_settings
ReplaySettings = SlurmSettings
#: the key of Slurm's node order (slurmctld numbers nodes by ``strnatcmp`` of their names)
natural_key = slurm_node_key
