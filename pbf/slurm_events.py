"""Node drains and downs from a site's own ``sacctmgr show events`` dump (``--slurm-events``): the
site's node history replayed as pbf outages (:mod:`pbf.outages`).

The dump is what ``sacctmgr -P show events format=NodeName,TimeStart,TimeEnd,State,Reason start=... end=...``
writes: a header naming the columns (any order, any case; ``Cluster``, ``ClusterNodes``, ``Reason``,
``User`` and others are read past) and one line an event. Each node event becomes an outage of its nodes
(``NodeName``, a Slurm host list) from ``TimeStart`` to ``TimeEnd`` (``Unknown``: still going at the dump:
to the end of the replay), on the trace's clock (seconds from its ``UnixStartTime``, as pbf reads a sacct
dump):

=====================================================  ==================================================
``State``                                              outage
=====================================================  ==================================================
``DOWN``, ``DOWN*``, ``FAIL``, ``FAILING`` (alone or   ``fail``: running jobs stop (requeued, as Slurm's
with ``+``: ``IDLE+DOWN``)                             default ``JobRequeue=1`` does)
``DRAIN``, ``DRAINED``, ``DRAINING`` (``IDLE+DRAIN``,  ``drain``: no new job; running jobs finish
``MIXED+DRAIN``, ...)
anything else (``MAINT``, ``RESERVED``, ...)           not modelled: counted and said
=====================================================  ==================================================

Cluster events (no node name) and events of nodes of the ``slurm.conf`` outside the replayed partition
are read past and counted; a node the ``slurm.conf`` does not name, a time that is not Slurm's
``YYYY-MM-DDTHH:MM:SS`` or an end before its start is an error naming the file, line and column.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .errors import ConfigError
from .node import expand_hostlist
from .outages import Failures, Outage
from .workload.sacct import _timestamp

__all__ = ["SlurmEvents", "read_events"]

_NEEDED = ("nodename", "timestart", "timeend", "state")
#: the largest dump read (events are a few lines a node a month)
MAX_EVENTS_BYTES = 64 << 20


def _kind(state: str) -> str | None:
    parts = [p.strip().rstrip("*~#!%$@^-").upper() for p in state.split("+")]
    if any(p.startswith(("DOWN", "FAIL")) for p in parts):
        return "fail"
    if any(p.startswith("DRAIN") for p in parts):
        return "drain"
    return None


def read_dump_lines(path: str, what: str, limit: int) -> list[str]:
    """The lines of a site's dump at ``path`` (UTF-8, at most ``limit`` bytes); ``what`` names it in the
    error."""
    try:
        size = os.path.getsize(path)
        if size > limit:
            raise ConfigError(f"{path}: {size:,} bytes: {what} of at most {limit:,}")
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc}") from None


def dump_nodes(names: str, where: str, index: dict, known, lenient: bool = False) -> tuple[list[int], int]:
    """The replayed cluster's indices (``index``: name -> index) of the nodes of a Slurm host list read from
    a site's dump, and how many name nodes of the site outside it (``known``: every node name of the
    site); ``where`` (file, line, key) names the list in an error. A node the site does not name is an
    error, unless ``lenient`` and ``known`` is empty (no slurm.conf to tell)."""
    try:
        expanded = expand_hostlist(names)
    except (ValueError, ConfigError) as exc:
        raise ConfigError(f"{where} {names[:60]!r}: {exc}") from None
    nodes, other = [], 0
    for name in expanded:
        if name in index:
            nodes.append(index[name])
        elif name in known or (lenient and not known):
            other += 1
        else:
            raise ConfigError(f"{where} {name!r}: a node the slurm.conf does not name")
    return nodes, other


def read_events(path: str | os.PathLike, origin: int, cluster_names: list, known: set) -> tuple[list, dict]:
    """The outages of the events at ``path`` (module docstring) on a cluster whose nodes are
    ``cluster_names`` (in the cluster's order; unit ranges follow the cores given by the caller), times
    from ``origin`` (epoch seconds): ``([(time, node indices, kind, until)], counts)``; ``known``: every
    node name of the site."""
    path = os.fspath(path)
    lines = read_dump_lines(path, "a sacctmgr events dump", MAX_EVENTS_BYTES)
    index = {n: i for i, n in enumerate(cluster_names)}
    counts = {"events": 0, "outages": 0, "cluster_events": 0, "other_partitions": 0, "not_modelled_states": {}}
    out = []
    head = None
    for number, text in enumerate(lines, 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        cols = [c.strip() for c in text.split("|")]
        if head is None:
            head = {c.lower().replace(" ", ""): k for k, c in enumerate(cols)}
            missing = [c for c in _NEEDED if c not in head]
            if missing:
                raise ConfigError(f"{path}, line {number}: the header has no {', '.join(missing)} column (expected "
                                  "sacctmgr -P show events format=NodeName,TimeStart,TimeEnd,State,Reason)")
            continue
        if len(cols) < len(head):
            raise ConfigError(f"{path}, line {number}: {len(cols)} columns where the header names {len(head)}")
        counts["events"] += 1
        names = cols[head["nodename"]]
        if not names:
            counts["cluster_events"] += 1
            continue
        kind = _kind(cols[head["state"]])
        if kind is None:
            st = cols[head["state"]].upper()[:40]
            counts["not_modelled_states"][st] = counts["not_modelled_states"].get(st, 0) + 1
            continue
        times = []
        for col in ("timestart", "timeend"):
            t = _timestamp(cols[head[col]])
            if t is False or (t is None and col == "timestart"):
                raise ConfigError(f"{path}, line {number}: {col} {cols[head[col]][:40]!r}: expected a time "
                                  "YYYY-MM-DDTHH:MM:SS" + (" or Unknown" if col == "timeend" else ""))
            times.append(t)
        start, end = times
        if end is not None and end < start:
            raise ConfigError(f"{path}, line {number}: TimeEnd {cols[head['timeend']]} is before TimeStart "
                              f"{cols[head['timestart']]}")
        nodes, other = dump_nodes(names, f"{path}, line {number}: NodeName", index, known)
        counts["other_partitions"] += other
        if nodes and (end is None or end > start):
            out.append((start - origin, tuple(nodes), kind, None if end is None else end - origin))
            counts["outages"] += 1
    if head is None:
        raise ConfigError(f"{path}: no header line (expected sacctmgr -P show events "
                          "format=NodeName,TimeStart,TimeEnd,State,Reason)")
    return out, counts


@dataclass(frozen=True)
class SlurmEvents(Failures):
    """A :class:`pbf.Failures` read from a ``sacctmgr show events`` dump at ``path`` (module docstring):
    ``origin`` (epoch seconds of the trace's time 0, its ``UnixStartTime``) and ``known`` (every node
    name of the site's ``slurm.conf``). :meth:`outages` needs the replay's cluster of nodes."""
    origin: int = 0
    known: tuple = ()
    counts: dict = field(default_factory=dict, compare=False)

    def outages(self, units: int, start: int, end: int, cluster=None) -> list[Outage]:
        if cluster is None:
            raise ConfigError("--slurm-events names nodes: it needs a cluster of nodes (--slurm-conf)")
        first, at = [], 0
        for n in cluster.nodes:
            first.append(at)
            at += n.cores
        events, counts = read_events(self.path, self.origin, [n.name for n in cluster.nodes], set(self.known))
        self.counts.clear()
        self.counts.update(counts)
        out = []
        for t, nodes, kind, until in events:
            unit_list = tuple(u for i in nodes for u in range(first[i], first[i] + cluster.nodes[i].cores))
            out.append(Outage(t, unit_list, kind, until))
        return out

    def as_dict(self) -> dict:
        return {**super().as_dict(), "format": "sacctmgr show events", "origin": self.origin,
                "read": dict(self.counts)}
