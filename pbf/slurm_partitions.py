"""Every partition of a site's ``slurm.conf``: each job replayed in its own partitions, with their limits.

``pbf replay --slurm-conf FILE`` (no ``:PARTITION``) reads every ``PartitionName`` line
(:func:`read_partitions`) and replays the cluster made of the union of their nodes
(:class:`SitePartitions`). Each job goes to the partitions its trace names (a sacct dump's ``Partition``
column, ``a,b`` for a job submitted to several; an SWF trace's field 16 through its ``; Partition: N
name`` header lines), a job that names none to the ``Default=YES`` partition, as slurmctld does
(``_get_job_parts`` in ``src/slurmctld/job_mgr.c``). What pbf models of each partition:

* **Nodes** (``Nodes=``, ``ALL``; node sets may overlap). A job may run only on the nodes of its
  partitions: each distinct set of partitions the jobs may use gets a node feature
  (``partition:a`` / ``partition:a,b``) set on the nodes of the union of those partitions, and the job
  requires it, so the node planners, their oracles and Slurm's node search need nothing new. A job of
  several partitions is tested in each apart, as Slurm tests its queue record of each partition
  (``build_job_queue`` in ``job_scheduler.c``), in their ``PriorityTier`` order (then the file's), and
  runs inside the first that can start it (``multi="each"``; each such partition gets a feature of
  its own, ``partition:a``). Its records of one tier are tested one after the other at the job's
  place in the queue; where its partitions' tiers differ it is queued once a tier, each entry at its
  own tier's place (Slurm's ``sort_job_queue2`` sorts the records by tier first), and an entry of a
  job that has started in another partition is passed over untested. Under multifactor priority,
  where its partitions differ in ``PriorityJobFactor``, each record takes its own partition's priority
  (Slurm's ``priority_array``): the job is queued once a run of records of one tier and one factor,
  each entry at its priority. More than 64 partitions: the union of a job's partitions instead.
* **Limits** checked as slurmctld checks them before it schedules a job (``job_limits_check`` /
  ``_part_access_check`` in ``job_mgr.c``, ``get_node_cnts`` in ``node_scheduler.c``): ``MaxTime``
  against the job's time limit (``PartitionTimeLimit``), ``MaxNodes`` / ``MinNodes`` and the
  partition's node count against the job's node counts (``PartitionNodeLimit``), its CPUs against
  the partition's (``PartitionConfig``), ``AllowQos`` / ``DenyQos`` against the job's QOS
  (``part_policy_valid_qos`` in ``partition_mgr.c``, called by ``select_nodes``), ``State`` (``DOWN``:
  never scheduled, ``PartitionDown``; ``INACTIVE``: likewise, ``PartitionInactive``; ``DRAIN`` and
  ``INACTIVE`` take no new job, ``_alt_part_test``). Under Slurm's default ``EnforcePartLimits=NO``
  such a job is queued and stays pending for ever; pbf rejects it at submission, with that reason,
  so that every job of a replay ends completed or rejected. A job of several partitions keeps those
  it passes.
* **Default memory**: a job that asks no memory gets its first partition's ``DefMemPerNode`` or
  ``DefMemPerCPU`` (``DefMemPerNode`` wins when both are set, as ``read_config.c`` reads them), else
  the file's (``_validate_job_desc`` in ``job_mgr.c``).
* **MaxNodes / MinNodes** bound the nodes a job is given (``get_node_cnts``).
* **PriorityJobFactor** is the multifactor partition factor (the job's factor / the largest of the
  file; a job of several partitions: each record its partition's, the job itself its largest).

Keys read and not modelled are listed (:meth:`SitePartitions.unmodelled`), never dropped.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

import numpy as np

from .bounded import MAX_SECONDS, parse_whole, where
from .cluster import Cluster
from .errors import ConfigError
from .node import MAX_NODE_MEMORY_MB, MAX_SLURM_NODES, MAX_UNITS, expand_hostlist
from .resources import Requests, constraint_legend, node_features, requests_of
from .slurm_conf import MAX_FEATURES, SlurmConf, _node_records, read_slurm_conf, slurm_node_key

__all__ = ["slurm_duration", "Partition", "SitePartitions", "Placed", "read_partitions", "partition_cluster",
           "choose_partition", "PARTITION_PREFIX", "PARTITION_STATES", "MULTI"]

#: the prefix of the node features that stand for sets of partitions (``partition:a,b``)
PARTITION_PREFIX = "partition:"
#: where a job of several partitions may run (:attr:`SitePartitions.multi`)
MULTI = ("each", "union", "first")
#: a partition's states (``State=``): UP (default), DOWN, DRAIN, INACTIVE
PARTITION_STATES = ("UP", "DOWN", "DRAIN", "INACTIVE")
_U16 = 65535
_U32_INFINITE = (1 << 32) - 2          # the largest finite uint32 Slurm reads (INFINITE is 2**32 - 1)
#: partition keys pbf models
_MODELLED = frozenset(("partitionname", "nodes", "default", "state", "prioritytier", "priorityjobfactor",
                       "priority", "maxtime", "maxnodes", "minnodes", "defmempercpu", "defmempernode",
                       "allowqos", "denyqos", "allowaccounts", "denyaccounts"))
#: partition keys whose value here changes nothing pbf could model (key -> the neutral values)
_NEUTRAL = {"hidden": None, "oversubscribe": ("NO",), "shared": ("NO",),
            "exclusiveuser": ("NO",), "lln": ("NO",), "rootonly": ("NO",), "disablerootjobs": ("NO",),
            "reqresv": ("NO",), "allowgroups": ("ALL",), "allocnodes": ("ALL",), "maxcpuspernode": ("UNLIMITED",),
            "gracetime": ("0",), "preemptmode": ("OFF",), "tresbillingweights": None, "overtimelimit": ("0",)}
#: why a job cannot use a partition: Slurm's pending reason (job_state_reason names)
_REASON = {"time": "PartitionTimeLimit", "nodes": "PartitionNodeLimit", "config": "PartitionConfig",
           "down": "PartitionDown", "inactive": "PartitionInactive", "qos": "WAIT_QOS",
           "account": "WAIT_ACCOUNT"}


_DURATION = re.compile(r"(?:([0-9]+)-)?([0-9]+)(?::([0-9]+))?(?::([0-9]+))?")


def slurm_duration(text: str, where: str) -> int | None:
    """Seconds of a Slurm time value: ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``,
    ``days-hours``, ``days-hours:minutes``, ``days-hours:minutes:seconds`` (ASCII digits, at most
    :data:`pbf.bounded.MAX_SECONDS` in all); None for ``UNLIMITED`` / ``INFINITE``. ``where`` names the
    file, line and key in the error (``"FILE, line N: Key"``)."""
    t = text.strip()
    if t.upper() in ("UNLIMITED", "INFINITE"):
        return None
    m = _DURATION.fullmatch(t) if len(t) <= 64 else None
    secs = None
    if m and all(len(g) <= 19 for g in m.groups() if g):
        days, a, b, c = m.groups()
        if days is not None:
            secs = int(days) * 86400 + int(a) * 3600 + int(b or 0) * 60 + int(c or 0)
        elif c is not None:
            secs = int(a) * 3600 + int(b) * 60 + int(c)
        elif b is not None:
            secs = int(a) * 60 + int(b)
        else:
            secs = int(a) * 60
    if secs is None or secs > MAX_SECONDS:
        shown = text if len(text) <= 60 else text[:57] + "..."
        raise ConfigError(f"{where}={shown!r}: expected a Slurm time (minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM "
                          f"or D-HH:MM:SS) of at most {MAX_SECONDS:,} s")
    return secs



@dataclass(frozen=True)
class Partition:
    """One ``PartitionName`` line (``PartitionName=DEFAULT`` values applied). Times in seconds, memory in
    MB; None: no limit (``UNLIMITED``/``INFINITE`` or not set); ``nodes``: node names in the cluster's
    order; ``allow_*``/``deny_*``: frozensets of names, None where not set (``ALL``)."""
    name: str
    line: int
    nodes: tuple
    default: bool = False
    state: str = "UP"
    priority_tier: int = 1
    priority_job_factor: int = 1
    max_time: int | None = None
    max_nodes: int | None = None
    min_nodes: int = 0
    def_mem_per_cpu: int = 0
    def_mem_per_node: int = 0
    allow_qos: frozenset | None = None
    deny_qos: frozenset | None = None
    allow_accounts: frozenset | None = None
    deny_accounts: frozenset | None = None
    #: the keys of the line pbf does not model: (key as spelled, value, line)
    not_modelled: tuple = ()


def _path_of(conf: SlurmConf, line) -> str:
    return getattr(line, "path", conf.path)


def _origin(conf, pairs, line, key, spelled):
    at, name = pairs.origin(key, line, spelled)
    return at, name, _path_of(conf, at)


def _whole(conf, pairs, line, key, spelled, lo, hi, infinite=False):
    value = pairs[key]
    if infinite and value.upper() in ("INFINITE", "UNLIMITED"):
        return None
    at, name, path = _origin(conf, pairs, line, key, spelled)
    try:
        return parse_whole(value, lo, hi)
    except ValueError as exc:
        also = " or UNLIMITED" if infinite else ""
        raise ConfigError(where(path, at, name, value, f"{exc}{also}")) from None


def _names(conf, pairs, line, key, spelled):
    value = pairs[key].strip()
    if not value or value.upper() == "ALL":
        return None
    at, name, path = _origin(conf, pairs, line, key, spelled)
    names = [n for n in value.split(",")]
    if any(not n.strip() or " " in n.strip() for n in names):
        raise ConfigError(where(path, at, name, value, "names separated by commas (no empty name), or ALL"))
    return frozenset(n.strip() for n in names)


def read_partitions(conf: SlurmConf, node_names: list) -> list[Partition]:
    """The ``PartitionName`` lines of ``conf`` (a :class:`pbf.slurm_conf.SlurmConf`) as :class:`Partition`
    records, their nodes among ``node_names`` (every node of the file, in the cluster's order). A
    ConfigError names the file, line, key (as spelled) and value of anything slurmctld would refuse:
    a node with no NodeName line, a partition named twice, a value out of Slurm's range."""
    order = {n: i for i, n in enumerate(node_names)}
    out, seen = [], {}
    for line, pairs in conf.partitions:
        name = pairs["partitionname"]
        at, key, path = _origin(conf, pairs, line, "partitionname", "PartitionName")
        if not name or " " in name or "," in name:
            raise ConfigError(where(path, at, key, name, "a partition name without blanks or commas"))
        if name in seen:
            raise ConfigError(where(path, at, key, name, f"each partition named once (also on line {seen[name]}; "
                                                         "slurmctld refuses a duplicate partition)"))
        seen[name] = line
        spec = pairs.get("nodes", "")
        if not spec.strip():
            nodes = ()
        elif spec.strip().upper() == "ALL":
            nodes = tuple(node_names)
        else:
            at, key, path = _origin(conf, pairs, line, "nodes", "Nodes")
            try:
                listed = expand_hostlist(spec, MAX_SLURM_NODES)
            except ValueError as exc:
                raise ConfigError(where(path, at, key, spec, str(exc))) from None
            for n in listed:
                if n not in order:
                    raise ConfigError(where(path, at, key, spec, f"nodes given on NodeName lines, or ALL (node {n!r} "
                                                                 "has no NodeName line)"))
            nodes = tuple(sorted(set(listed), key=order.__getitem__))
        kw = {}
        if "default" in pairs:
            v = pairs["default"].upper()
            if v not in ("YES", "NO"):
                a, s, p = _origin(conf, pairs, line, "default", "Default")
                raise ConfigError(where(p, a, s, pairs["default"], "YES or NO"))
            kw["default"] = v == "YES"
        if "state" in pairs:
            v = pairs["state"].upper()
            if v not in PARTITION_STATES:
                a, s, p = _origin(conf, pairs, line, "state", "State")
                raise ConfigError(where(p, a, s, pairs["state"], "UP, DOWN, DRAIN or INACTIVE"))
            kw["state"] = v
        if "priority" in pairs:      # Slurm's old key: both numbers
            kw["priority_tier"] = kw["priority_job_factor"] = _whole(conf, pairs, line, "priority", "Priority", 0, _U16)
        for k, spelled, attr in (("prioritytier", "PriorityTier", "priority_tier"),
                                 ("priorityjobfactor", "PriorityJobFactor", "priority_job_factor")):
            if k in pairs and "priority" not in pairs:
                kw[attr] = _whole(conf, pairs, line, k, spelled, 0, _U16)
        if "maxtime" in pairs:
            a, s, p = _origin(conf, pairs, line, "maxtime", "MaxTime")
            kw["max_time"] = slurm_duration(pairs["maxtime"], f"{p}, line {a}: {s}")
        if "maxnodes" in pairs:
            kw["max_nodes"] = _whole(conf, pairs, line, "maxnodes", "MaxNodes", 0, _U32_INFINITE, infinite=True)
        if "minnodes" in pairs:
            kw["min_nodes"] = _whole(conf, pairs, line, "minnodes", "MinNodes", 0, _U32_INFINITE)
        if "defmempernode" in pairs:
            kw["def_mem_per_node"] = _whole(conf, pairs, line, "defmempernode", "DefMemPerNode", 0,
                                            MAX_NODE_MEMORY_MB)
        elif "defmempercpu" in pairs:
            kw["def_mem_per_cpu"] = _whole(conf, pairs, line, "defmempercpu", "DefMemPerCPU", 0, MAX_NODE_MEMORY_MB)
        for k, spelled, attr in (("allowqos", "AllowQos", "allow_qos"), ("denyqos", "DenyQos", "deny_qos"),
                                 ("allowaccounts", "AllowAccounts", "allow_accounts"),
                                 ("denyaccounts", "DenyAccounts", "deny_accounts")):
            if k in pairs:
                kw[attr] = _names(conf, pairs, line, k, spelled)
        skipped = []
        for k, value in pairs.items():
            if k in _MODELLED:
                continue
            neutral = _NEUTRAL.get(k, ())
            if k in _NEUTRAL and (neutral is None or value.upper() in neutral):
                continue
            a, s = pairs.origin(k, line, k)
            skipped.append((s, value, a))
        if "defmempernode" in pairs and "defmempercpu" in pairs:
            a, s = pairs.origin("defmempercpu", line, "DefMemPerCPU")
            skipped.append((s, pairs["defmempercpu"] + " (ignored: DefMemPerNode is set, as slurmctld ignores it)",
                            a))
        out.append(Partition(name=name, line=line, nodes=nodes, not_modelled=tuple(skipped), **kw))
    return out


def _file_default_mem(conf: SlurmConf) -> tuple[int, int]:
    """The file's DefMemPerCPU and DefMemPerNode (MB; DefMemPerNode wins, as ``read_config.c`` reads it)."""
    out = []
    for key, spelled in (("defmempercpu", "DefMemPerCPU"), ("defmempernode", "DefMemPerNode")):
        line, value = conf.settings.get(key, (None, "0"))
        try:
            out.append(parse_whole(value, 0, MAX_NODE_MEMORY_MB))
        except ValueError as exc:
            at, name = conf.at(key)
            raise ConfigError(where(_path_of(conf, line), line, name if at is not None else spelled, value,
                                    f"{exc} (MB)")) from None
    cpu, node = out
    return (0, node) if node else (cpu, 0)


@dataclass(frozen=True)
class Placed:
    """What :meth:`SitePartitions.place` gives a replay: the cluster with the partition features on its
    nodes, each job's requests (table order) and the figures for the summary."""
    cluster: Cluster
    requests: Requests
    summary: dict = field(default_factory=dict)
    #: each job's partitions (table order; a bit each, by the file's order; 0: rejected) and each node's
    #: (cluster order), for Slurm's main scheduler, which fails a partition at a job that cannot start
    #: and goes on with the others; None with one partition or more than 64
    job_parts: np.ndarray | None = None
    node_parts: np.ndarray | None = None
    #: each job's PriorityTier (table order; the highest of its partitions'), where the partitions' tiers
    #: differ: the queue runs a higher tier first (None: one tier)
    job_tiers: np.ndarray | None = None
    #: with ``multi="each"``, each job of several partitions (table order; None: one partition): its
    #: partitions in test order, as (the partition's node feature, None where it covers every node; the
    #: partition's bit in ``job_parts``)
    job_records: tuple | None = None
    #: with ``job_records`` and partitions of several tiers: each such job's records' PriorityTier
    #: (aligned with its ``job_records``; None: one partition): a job queued once a tier
    record_tiers: tuple | None = None


@dataclass(frozen=True)
class SitePartitions:
    """Every partition of a ``slurm.conf`` (:func:`from_conf`), and how the jobs of a trace are placed in
    them (:meth:`place`). ``def_mem_per_cpu`` / ``def_mem_per_node``: the file's own (MB, 0: none).
    ``multi``: where a job of several partitions may run: ``each`` (default, as Slurm: tested in each
    partition whose limits it passes, apart, in their PriorityTier order then the file's, at its place
    in the queue, and run inside the first that can start it), ``union`` (on the nodes of all of them at
    once) or ``first`` (in the first of them alone)."""
    path: str
    partitions: tuple
    def_mem_per_cpu: int = 0
    def_mem_per_node: int = 0
    multi: str = "each"

    def __post_init__(self):
        if self.multi not in MULTI:
            raise ConfigError(f"multi must be one of {', '.join(MULTI)}, got {self.multi!r}")

    @classmethod
    def from_conf(cls, conf: SlurmConf, node_names: list) -> SitePartitions:
        """The partitions of ``conf`` over its nodes ``node_names`` (the cluster's order)."""
        cpu, node = _file_default_mem(conf)
        return cls(conf.path, tuple(read_partitions(conf, node_names)), cpu, node)

    @property
    def default(self) -> Partition | None:
        """The ``Default=YES`` partition (the last such line, as slurmctld takes it), or None."""
        marked = [p for p in self.partitions if p.default]
        return marked[-1] if marked else None

    def node_names(self) -> list:
        """The nodes of the union of the partitions, in the cluster's order."""
        seen = {}
        for p in self.partitions:
            for n in p.nodes:
                seen.setdefault(n, None)
        return list(seen)

    def any_default_mem(self) -> bool:
        """Whether the file or a partition sets DefMemPerCPU or DefMemPerNode."""
        return bool(self.def_mem_per_cpu or self.def_mem_per_node
                    or any(p.def_mem_per_cpu or p.def_mem_per_node for p in self.partitions))

    def unmodelled(self) -> list[str]:
        """One sentence a partition key pbf reads and does not model."""
        out = []
        for p in self.partitions:
            for key, value, line in p.not_modelled:
                shown = value if len(value) <= 60 else value[:57] + "..."
                path = getattr(line, "path", self.path)
                at = f"line {line}" + (f" of {path}" if path != self.path else "")
                out.append(f"PartitionName={p.name}: {key}={shown} ({at}): not modelled by pbf")
        if len(self.partitions) > 64:
            out.append(f"the main scheduler on {len(self.partitions)} partitions: pbf follows Slurm's failed "
                       "partitions (job_scheduler.c _schedule) for up to 64; with more it stops at the first job "
                       "that cannot start, and its backfill starts the others")
        return out

    # ------------------------------------------------------------------ the jobs' partitions
    def job_labels(self, table) -> list[str]:
        """Each job's partition names as its trace gives them (``a``, ``a,b``; "" for none): the header's
        ``; Partition: N name`` lines name the SWF partition numbers; a trace without them names none, and
        so does every job on a file of one partition."""
        legend = constraint_legend(table.header, "Partition")
        if not legend or len(self.partitions) == 1:
            return [""] * len(table)       # (a file of one partition takes every job, as FILE:PARTITION does)
        texts = {k: ("" if v == "(none)" else v) for k, v in legend.items()}
        return [texts.get(int(p), str(int(p)) if int(p) > 0 else "") for p in table.partition]

    def check_trace(self, table) -> None:
        """A ConfigError when some job names no partition and the file has several and no ``Default=YES``
        (slurmctld refuses such a job: ``ESLURM_DEFAULT_PARTITION_NOT_SET``); the message says how to
        name one."""
        labels = self.job_labels(table)
        known = {p.name for p in self.partitions}
        unknown = {}
        for lb in labels:
            for name in (n.strip() for n in lb.split(",")):
                if name and name not in known:
                    unknown[name] = unknown.get(name, 0) + 1
        if labels and unknown and all(lb and not any(n.strip() in known for n in lb.split(",")) for lb in labels):
            said = ", ".join(f"{name!r} ({count:,} jobs)" for name, count in list(unknown.items())[:10])
            if self.default is None and len(self.partitions) > 1:
                raise ConfigError(f"{self.path}: {len(self.partitions)} partitions and none has Default=YES: name one "
                                  f"(FILE:PARTITION; partitions: {', '.join(p.name for p in self.partitions[:20])}): "
                                  f"every job of the trace names a partition the file does not have ({said})")
            raise ConfigError(f"{self.path}: every job of the trace names a partition the slurm.conf does not have "
                              f"({said}; partitions: {', '.join(p.name for p in self.partitions[:20])}): expected "
                              "the site's own slurm.conf, or FILE:PARTITION to replay every job on one partition")
        if self.default is not None or len(self.partitions) <= 1:
            return
        none = sum(1 for lb in labels if not lb)
        if none:
            names = ", ".join(p.name for p in self.partitions[:20])
            said = ("the trace names no partition (no '; Partition: N name' header lines)" if none == len(labels)
                    else f"{none:,} jobs of the trace name no partition")
            raise ConfigError(f"{self.path}: {len(self.partitions)} partitions and none has Default=YES, and {said}: "
                              f"name one (FILE:PARTITION; partitions: {names})")

    def _accepted(self, label: str):
        """The partitions a job naming ``label`` is queued in, or the reason it is refused."""
        by_name = {p.name: p for p in self.partitions}
        if not label:
            if self.default is not None:
                return [self.default], None
            if len(self.partitions) == 1:
                return [self.partitions[0]], None
            return [], "names no partition and the slurm.conf has no Default=YES partition (Slurm refuses it)"
        parts = []
        for name in dict.fromkeys(n.strip() for n in label.split(",") if n.strip()):
            if name not in by_name:
                return [], f"partition {name!r} is not in the slurm.conf (Slurm refuses it: invalid partition)"
            parts.append(by_name[name])
        taken = [p for p in parts if p.state in ("UP", "DOWN")]
        if not taken:
            p = parts[0]
            return [], f"partition {p.name} is {p.state}: it takes no new job (Slurm refuses it)"
        return taken, None

    def _fails(self, p: Partition, req: int, units: int, lo: int, hi: int, qos: str | None, cores: int,
               account: str | None = None):
        """Why a job cannot run in partition ``p`` (None: it can), in the order of slurmctld's checks
        (``_part_access_check``: CPUs, nodes, time; ``job_limits_check``: the state; ``select_nodes``: QOS,
        account)."""
        n = len(p.nodes)
        if units > cores:
            return (f"asks more CPUs than partition {p.name} has ({cores:,}) (Slurm: pending, reason "
                    f"{_REASON['config']})")
        if lo > n or (p.max_nodes is not None and (lo > p.max_nodes or hi > p.max_nodes)) or (hi and hi < p.min_nodes):
            if hi and hi < p.min_nodes:
                limit = f"fewer nodes than partition {p.name}'s MinNodes ({p.min_nodes})"
            elif p.max_nodes is not None and max(lo, hi) > p.max_nodes:
                limit = f"more nodes than partition {p.name}'s MaxNodes ({p.max_nodes})"
            else:
                limit = f"more nodes than partition {p.name} has ({n})"
            return f"asks {limit} (Slurm: pending, reason {_REASON['nodes']})"
        if p.max_time is not None and req > p.max_time:
            return (f"asks more time than partition {p.name}'s MaxTime ({p.max_time:,} s) (Slurm: pending, reason "
                    f"{_REASON['time']})")
        if p.state == "DOWN":
            return f"partition {p.name} is DOWN (Slurm: pending, reason {_REASON['down']})"
        if qos is not None and ((p.allow_qos is not None and qos not in p.allow_qos)
                                or (p.deny_qos is not None and qos in p.deny_qos)):
            return f"QOS {qos} may not use partition {p.name} (Slurm: pending, reason {_REASON['qos']})"
        if account is not None and ((p.allow_accounts is not None and account not in p.allow_accounts)
                                    or (p.deny_accounts is not None and account in p.deny_accounts)):
            return (f"account {account or '(none)'} may not use partition {p.name} (Slurm: pending, reason "
                    f"{_REASON['account']})")
        return None

    def place(self, table, cluster: Cluster, mem_from: str = "requested") -> Placed:
        """Each job of ``table`` in its partitions on ``cluster`` (the union of the partitions' nodes): the
        cluster with a ``partition:...`` feature for each set of partitions some job may use (on the
        nodes of their union; none where the set covers every node), and the jobs' requests (table order)
        with that feature required, their partitions' default memory, node bounds, and the reason of
        each job no partition takes (such a job asks a feature no node has: it is rejected, saying so)."""
        n = len(table)
        labels = self.job_labels(table)
        qos_legend = constraint_legend(table.header, "Queue")
        qos_names = ([qos_legend.get(int(q)) for q in table.queue] if qos_legend else [None] * n)
        acct_legend = constraint_legend(table.header, "Account")
        accounts = ([acct_legend.get(int(a), "") for a in table.columns["account"]]
                    if "account" in table.columns else [None] * n)
        cores_of = {nd.name: nd.cores for nd in cluster.nodes}
        part_cores = {p.name: sum(cores_of.get(x, 0) for x in p.nodes) for p in self.partitions}
        accepted = {lb: self._accepted(lb) for lb in dict.fromkeys(labels)}
        core_def = np.zeros(n, dtype=np.int64)
        node_def = np.zeros(n, dtype=np.int64)
        for i, lb in enumerate(labels):
            parts = accepted[lb][0]
            first = parts[0] if parts else None
            if first is not None and (first.def_mem_per_node or first.def_mem_per_cpu):
                node_def[i], core_def[i] = first.def_mem_per_node, first.def_mem_per_cpu
            else:
                node_def[i], core_def[i] = self.def_mem_per_node, self.def_mem_per_cpu
        base = requests_of(table, mem_from, core_def, node_def)
        req = np.asarray(table.req_time, dtype=np.int64)
        units = np.asarray(table.units, dtype=np.int64)
        lo_all, hi_all = base.nodes_min.copy(), base.nodes_max.copy()
        sets, reasons = [None] * n, [""] * n
        for i, lb in enumerate(labels):
            parts, why = accepted[lb]
            if why is not None:
                reasons[i] = why
                continue
            lo, hi = int(lo_all[i]), int(hi_all[i])
            ok, first_fail = [], None
            for p in parts:
                fail = self._fails(p, int(req[i]), int(units[i]), lo, hi, qos_names[i], part_cores[p.name],
                                   accounts[i])
                if fail is None:
                    ok.append(p)
                elif first_fail is None:
                    first_fail = fail
            if not ok:
                reasons[i] = first_fail
                continue
            sets[i] = tuple(ok) if self.multi != "first" else tuple(ok[:1])
            mins = [max(lo, p.min_nodes) for p in ok]
            lo_all[i] = min(mins)
            caps = [p.max_nodes for p in ok]
            if all(c is not None for c in caps):
                cap = max(caps)
                hi_all[i] = min(hi, cap) if hi else cap
        every = frozenset(nd.name for nd in cluster.nodes)
        ordered = [None if s is None or len(s) < 2 or self.multi != "each"
                   else sorted(s, key=lambda p: (-p.priority_tier, self.partitions.index(p))) for s in sets]
        alone = {p.name: p for o in ordered if o for p in o if frozenset(p.nodes) != every}
        placed = self._placed(cluster, base, sets, reasons, lo_all, hi_all, [(p,) for p in alone.values()])
        if 1 < len(self.partitions) <= 64:
            bit = {p.name: 1 << k for k, p in enumerate(self.partitions)}
            members = [(bit[p.name], frozenset(p.nodes)) for p in self.partitions]
            placed = replace(placed, job_parts=np.array(
                [sum(bit[p.name] for p in s) if s is not None else 0 for s in sets], dtype=np.uint64),
                node_parts=np.array([sum(b for b, m in members if nd.name in m) for nd in placed.cluster.nodes],
                                    dtype=np.uint64))
        if any(o for o in ordered) and 1 < len(self.partitions) <= 64:
            index = {p.name: k for k, p in enumerate(self.partitions)}
            placed = replace(placed, job_records=tuple(
                None if not o else tuple((PARTITION_PREFIX + p.name if p.name in alone else None, index[p.name])
                                         for p in o) for o in ordered))
        if len({p.priority_tier for p in self.partitions}) > 1:
            placed = replace(placed, job_tiers=np.array(
                [max(p.priority_tier for p in s) if s is not None else 0 for s in sets], dtype=np.int64))
            if placed.job_records is not None:
                placed = replace(placed, record_tiers=tuple(
                    None if not o else tuple(p.priority_tier for p in o) for o in ordered))
        unchecked = []
        for p in self.partitions:
            if (p.allow_qos or p.deny_qos) and not qos_legend:
                unchecked.append(f"AllowQos/DenyQos of partition {p.name}: the trace names no QOS")
            if (p.allow_accounts or p.deny_accounts) and "account" not in table.columns:
                unchecked.append(f"AllowAccounts/DenyAccounts of partition {p.name}: the trace names no accounts "
                                 "(sacct's Account column)")
        placed.summary["not_checked"] = unchecked
        return placed

    def _placed(self, cluster, base, sets, reasons, lo_all, hi_all, alone=()):
        # (alone: partitions of jobs of several partitions, each a feature of its own: the records')
        every = frozenset(nd.name for nd in cluster.nodes)
        feature_of, node_sets = {}, {}
        for s in dict.fromkeys([s for s in sets if s is not None] + list(alone)):
            members = frozenset(x for p in s for x in p.nodes)
            if members != every:
                name = PARTITION_PREFIX + ",".join(p.name for p in sorted(s, key=self.partitions.index))
                feature_of[s] = name
                node_sets[name] = members
        plain = {f for nd in cluster.nodes for f in node_features(nd)}
        clash = sorted(f for f in plain if f.startswith(PARTITION_PREFIX))
        if clash:
            raise ConfigError(f"{self.path}: node feature {clash[0]!r}: pbf keeps features starting with "
                              f"{PARTITION_PREFIX!r} for the sets of partitions jobs may use")
        if len(plain) + len(node_sets) > MAX_FEATURES:
            raise ConfigError(f"{self.path}: the jobs use {len(node_sets)} distinct sets of partitions that do not "
                              f"cover every node, and the nodes have {len(plain)} features and GPU types: pbf's node "
                              f"model holds {MAX_FEATURES} in all (one each); replay fewer partitions (FILE:PARTITION) "
                              "or a trace with fewer partition lists")
        nodes = tuple(replace(nd, features=nd.features + tuple(f for f, m in node_sets.items() if nd.name in m))
                      if any(nd.name in m for m in node_sets.values()) else nd for nd in cluster.nodes)
        placed = replace(cluster, nodes=nodes) if node_sets else cluster
        rejected = PARTITION_PREFIX + "(rejected)"
        feats = tuple(f + ((feature_of[s],) if s in feature_of else ()) if s is not None else f + (rejected,)
                      for f, s in zip(base.features, sets))
        requests = replace(base, nodes_min=lo_all, nodes_max=hi_all, features=feats, reasons=tuple(reasons))
        counts, refused = {}, {}
        for s, why in zip(sets, reasons):
            key = ",".join(p.name for p in s) if s is not None else "(rejected)"
            counts[key] = counts.get(key, 0) + 1
            if why:
                refused[why] = refused.get(why, 0) + 1
        summary = {"partitions": [p.name for p in self.partitions],
                   "default": self.default.name if self.default is not None else None,
                   "jobs_by_partitions": dict(sorted(counts.items(), key=lambda kv: -kv[1])),
                   "rejected_by_reason": dict(sorted(refused.items(), key=lambda kv: -kv[1])),
                   "node_features": sorted(node_sets)}
        return Placed(placed, requests, summary)

    def partition_factors(self, table) -> dict[int, float]:
        """The multifactor partition factor of each SWF partition number of ``table`` (``Multifactor.
        partition_factors``): the largest ``PriorityJobFactor`` of the partitions it names over the largest
        of the file (``priority_multifactor.c``: ``norm_priority``)."""
        top = max((p.priority_job_factor for p in self.partitions), default=1) or 1
        by_name = {p.name: p for p in self.partitions}
        out = {}
        legend = constraint_legend(table.header, "Partition")
        for number in np.unique(np.asarray(table.partition, dtype=np.int64)):
            label = legend.get(int(number), "") if legend else ""
            label = "" if label == "(none)" else label
            parts = ([by_name[x] for x in label.split(",") if x in by_name] if label
                     else [self.default] if self.default is not None else list(self.partitions[:1]))
            if parts:
                out[int(number)] = max(p.priority_job_factor for p in parts) / top
        return out

    def describe(self) -> str:
        """One line: the partitions, their nodes and the default."""
        parts = ", ".join(f"{p.name} ({len(p.nodes)} nodes{', default' if p.default else ''}"
                          f"{', ' + p.state if p.state != 'UP' else ''})" for p in self.partitions[:20])
        more = f" and {len(self.partitions) - 20} more" if len(self.partitions) > 20 else ""
        return f"{len(self.partitions)} partitions: {parts}{more}"


def _partitions(path: str | os.PathLike | SlurmConf) -> list:
    """The PartitionName lines with ``PartitionName=DEFAULT`` values applied: (line, {key: value})."""
    conf = path if isinstance(path, SlurmConf) else read_slurm_conf(path)
    return list(conf.partitions)


def choose_partition(path: str | os.PathLike | SlurmConf, partition: str | None = None) -> tuple[int, dict] | None:
    """The partition jobs go to: ``partition``, else the ``Default=YES`` one, else the only one;
    ``(line, pairs)``, or None when the file has no PartitionName line (every node). Several partitions
    and none chosen or default: a :class:`pbf.ConfigError`. ``path`` may be a :class:`SlurmConf` already
    read."""
    conf = path if isinstance(path, SlurmConf) else read_slurm_conf(path)
    parts = conf.partitions
    listed = ", ".join(p["partitionname"] for _, p in parts[:20]) + (f" and {len(parts) - 20} more"
                                                                     if len(parts) > 20 else "")
    if partition is not None:
        for number, pairs in parts:
            if pairs["partitionname"] == partition:
                return number, pairs
        raise ConfigError(f"{conf.path}: no partition {partition!r} (partitions: {listed or 'none'})")
    for number, pairs in parts:
        if pairs.get("default", "").upper() == "YES":
            return number, pairs
    if len(parts) == 1:
        return parts[0]
    if not parts:
        return None
    raise ConfigError(f"{conf.path}: {len(parts)} partitions and none has Default=YES: name one (FILE:PARTITION, or "
                      f"--partition in pbf validate; partitions: {listed})")


def partition_cluster(conf: SlurmConf, licenses: tuple = ()) -> tuple[Cluster, SitePartitions]:
    """The cluster of every partition of ``conf`` -- the union of their nodes, numbered by name as
    slurmctld numbers them -- and the partitions (:class:`SitePartitions`)."""
    nodes = sorted(_node_records(conf), key=lambda n: slurm_node_key(n.name))
    if not nodes:
        raise ConfigError(f"{conf.path}: no NodeName lines")
    site = SitePartitions.from_conf(conf, [n.name for n in nodes])
    union = set(site.node_names())
    picked = tuple(n for n in nodes if n.name in union)
    if not picked:
        raise ConfigError(f"{conf.path}: no partition has a node (every PartitionName line has an empty Nodes=)")
    units = sum(n.cores for n in picked)
    if units > MAX_UNITS:
        raise ConfigError(f"{conf.path}: the nodes of the partitions have {units:,} CPUs in all: expected at most "
                          f"{MAX_UNITS:,} (the largest cluster pbf schedules)")
    feats = {f for n in picked for f in n.features}
    if len(feats) > MAX_FEATURES:
        raise ConfigError(f"{conf.path}: the nodes of the partitions have {len(feats)} distinct features: expected at "
                          f"most {MAX_FEATURES} (pbf's node model holds a bit for each)")
    name = os.path.splitext(os.path.basename(conf.path))[0]
    return Cluster(units=units, nodes=picked, name=name, licenses=tuple(licenses)), site
