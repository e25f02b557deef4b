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

**When a drain was asked.** slurmctld records a drain's event when the node has no job left, not when
the operator drained it (``update_node`` / ``make_node_idle`` in ``src/slurmctld/node_mgr.c``, 22.05):
from the ``scontrol`` command on, the node takes no new job, but the dump's ``TimeStart`` is when its
last job ended. With a job trace that says where each job ran (a sacct dump's ``NodeList``, ``Start`` and
``End``: ``trace``), each drained node's drain is moved back (``drain_start="inferred"``) to the second
after the last job start on it before the event, when a job on it ran up to the event (the node was
busy, so the event was its last job's end; an idle node's event is its request) and that start is after
the node's previous outage; otherwise it stays at the dump's time. The request was no earlier (a job
started there then) and the node was closed from it on (no job started there after): this is the
earliest time the trace allows. ``counts["drains_moved"]`` lists each drain moved and by how much;
``drain_start="recorded"`` keeps the dump's times.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .errors import ConfigError
from .node import expand_hostlist
from .outages import Failures, Outage
from .workload.files import text_lines
from .workload.sacct import _timestamp

__all__ = ["SlurmEvents", "read_events", "read_node_jobs", "infer_drain_starts", "DRAIN_STARTS"]

#: ``drain_start``: a drain from the second after the last job start on its node (needs a trace with node
#: lists), or from the dump's own ``TimeStart``
DRAIN_STARTS = ("inferred", "recorded")
#: a job that ended this many seconds before a drain's event still held the node then (whole seconds)
_BUSY_SLACK = 1
_TRACE_NEEDED = ("nodelist", "start", "end")

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


def read_node_jobs(path: str | os.PathLike, origin: int, wanted: set,
                   required: bool = True) -> tuple[dict | None, int]:
    """Where and when the jobs of the sacct dump at ``path`` ran, on the nodes named in ``wanted``:
    ``({node name: [(start, end or None)]}, jobs read)``, times in seconds from ``origin`` (epoch). Needs
    the ``NodeList``, ``Start`` and ``End`` columns; job steps (``JobID`` with a dot), jobs that never
    started (``Start`` ``Unknown``/``None``, ``NodeList`` ``None assigned``) are passed over. A bad time
    or host list is an error naming the file, line, field and value; a dump without those columns an
    error too, or ``(None, 0)`` when not ``required``."""
    path = os.fspath(path)
    out: dict = {}
    head = None
    read = 0
    try:
        for number, text in text_lines(path):
            cols = [c.strip() for c in text.split("|")]
            if head is None:
                head = {c.lower(): k for k, c in reversed(list(enumerate(cols)))}
                missing = [c for c in _TRACE_NEEDED if c not in head]
                if missing and not required:
                    return None, 0
                if missing:
                    raise ConfigError(f"{path}, line {number}: the header has no {', '.join(missing)} column: "
                                      "a drain's request time is inferred from where and when jobs ran (sacct "
                                      "--format with NodeList,Start,End), or use --drain-start recorded")
                width = max(head.values()) + 1
                continue
            if len(cols) < width:
                raise ConfigError(f"{path}, line {number}: {len(cols)} columns where the header names {width}")
            if "jobid" in head and "." in cols[head["jobid"]]:
                continue
            names = cols[head["nodelist"]]
            if not names or names.lower().startswith("none"):
                continue
            times = []
            for col in ("start", "end"):
                t = _timestamp(cols[head[col]])
                if t is False:
                    raise ConfigError(f"{path}, line {number}: {col.capitalize()} {cols[head[col]][:40]!r}: "
                                      "expected a time YYYY-MM-DDTHH:MM:SS, Unknown or None")
                times.append(t)
            if times[0] is None:
                continue
            read += 1
            if not any(w in names for w in wanted) and "[" not in names:
                continue
            try:
                expanded = expand_hostlist(names)
            except (ValueError, ConfigError) as exc:
                raise ConfigError(f"{path}, line {number}: NodeList {names[:60]!r}: {exc}") from None
            for name in expanded:
                if name in wanted:
                    out.setdefault(name, []).append((times[0] - origin,
                                                     None if times[1] is None else times[1] - origin))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the job trace: {exc}") from None
    if head is None:
        raise ConfigError(f"{path}: no header line (expected a sacct --parsable2 dump with NodeList,Start,End)")
    return out, read


def infer_drain_starts(events: list, jobs: dict, names: list) -> tuple[list, list]:
    """``events`` (:func:`read_events`' outages, on the trace's clock) with each drain moved to when it was
    asked, as far as ``jobs`` (``{node name: [(start, end or None)]}``, the same clock) tell (module
    docstring); ``names``: the cluster's node names. Returns (the events, the drains moved: one dict a
    node, its ``node``, the dump's ``recorded_s``, the ``inferred_s`` and ``by_s``)."""
    spans: dict = {}                # node index -> its outages (start, end): an earlier one bounds a request
    for t, nodes, _kind, until in events:
        for i in nodes:
            spans.setdefault(i, []).append((t, until))
    out, moved = [], []
    for t, nodes, kind, until in events:
        if kind != "drain":
            out.append((t, nodes, kind, until))
            continue
        groups: dict = {}
        for i in nodes:
            prior = max((e for s0, e in spans[i] if s0 < t and e is not None and e <= t), default=None)
            ran = [(s, e) for s, e in jobs.get(names[i], ()) if s < t]
            busy = any(e is None or e >= t - _BUSY_SLACK for _s, e in ran)
            starts = [s for s, _e in ran if prior is None or s >= prior]
            at = min(t, max(starts) + 1) if busy and starts else t
            if at < t:
                moved.append({"node": names[i], "recorded_s": t, "inferred_s": at, "by_s": t - at,
                              "last_start_s": max(starts)})
            groups.setdefault(at, []).append(i)
        for at, group in sorted(groups.items()):
            out.append((at, tuple(group), kind, until))
    return out, moved


@dataclass(frozen=True)
class SlurmEvents(Failures):
    """A :class:`pbf.Failures` read from a ``sacctmgr show events`` dump at ``path`` (module docstring):
    ``origin`` (epoch seconds of the trace's time 0, its ``UnixStartTime``) and ``known`` (every node
    name of the site's ``slurm.conf``). :meth:`outages` needs the replay's cluster of nodes. ``trace``: a
    sacct dump saying where the jobs ran (``NodeList``, ``Start``, ``End``), from which each drain's request
    time is inferred (``drain_start`` ``"inferred"``, module docstring); without one, or with
    ``"recorded"``, the dump's times are replayed."""
    origin: int = 0
    known: tuple = ()
    counts: dict = field(default_factory=dict, compare=False)
    trace: str | None = None
    drain_start: str = "inferred"

    def __post_init__(self):
        super().__post_init__()
        if self.drain_start not in DRAIN_STARTS:
            raise ConfigError(f"drain_start {self.drain_start!r}: expected one of {', '.join(DRAIN_STARTS)}")

    def events(self, names: list) -> tuple[list, dict]:
        """The outages of the dump on a cluster of nodes ``names`` (as :func:`read_events`), each drain
        moved to its inferred request time when there is a ``trace`` and ``drain_start`` is
        ``"inferred"``; and the counts (with ``drain_start``: what was done, ``drains_moved``)."""
        events, counts = read_events(self.path, self.origin, names, set(self.known))
        counts["drain_start"] = "recorded"
        if self.drain_start == "inferred" and self.trace is not None:
            drained = {names[i] for _t, nodes, kind, _u in events if kind == "drain" for i in nodes}
            jobs, read = read_node_jobs(self.trace, self.origin, drained, required=False) if drained else ({}, 0)
            if jobs is None:
                counts["drain_start"] = "recorded (the trace has no NodeList, Start and End columns)"
            else:
                events, moved = infer_drain_starts(events, jobs, names)
                counts.update(drain_start="inferred", trace=os.fspath(self.trace), trace_jobs=read,
                              drains_moved=moved)
        elif self.drain_start == "inferred":
            counts["drain_start"] = "recorded (no trace with node lists)"
        return events, counts

    def outages(self, units: int, start: int, end: int, cluster=None) -> list[Outage]:
        if cluster is None:
            raise ConfigError("--slurm-events names nodes: it needs a cluster of nodes (--slurm-conf)")
        first, at = [], 0
        for n in cluster.nodes:
            first.append(at)
            at += n.cores
        events, counts = self.events([n.name for n in cluster.nodes])
        self.counts.clear()
        self.counts.update(counts)
        out = []
        for t, nodes, kind, until in events:
            unit_list = tuple(u for i in nodes for u in range(first[i], first[i] + cluster.nodes[i].cores))
            out.append(Outage(t, unit_list, kind, until))
        return out

    def as_dict(self) -> dict:
        return {**super().as_dict(), "format": "sacctmgr show events", "origin": self.origin,
                "drain_start": self.drain_start, "trace": None if self.trace is None else os.fspath(self.trace),
                "read": dict(self.counts)}
