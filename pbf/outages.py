"""Node outages for replays: drains, failures and resumes, from a file or drawn from an MTBF.

An outage takes nodes out of service: a *drained* node takes no new job but lets its running job
finish; a *failed* node also stops its running jobs, which go back to the queue (``requeue``, the
default) or end killed (``kill``). A node comes back after the outage's duration, or at a
``resume`` row when the outage has none. Passes plan around down nodes: a reservation never counts
on a node before it is due back, and no job is ever placed on a down node.

The failure file is CSV with a header naming the columns ``time,nodes,duration,kind`` (any order;
``#`` starts a comment line)::

    time,nodes,duration,kind
    3600,12,7200,fail          # node 12 fails for two hours
    86400,0-3;40,,drain        # nodes 0..3 and 40 drain until a resume
    172800,0-3,,resume

``time``: seconds on the trace's clock (its submit times); ``nodes``: node indices (0-based) and
ranges ``a-b`` separated by ``;`` or spaces, or node names of a named layout; ``duration``:
seconds (empty: until a resume; a failure needs one); ``kind``: ``drain``, ``fail`` or ``resume``.
Numbers are ASCII digits: times from -2**40 to 2**40 s (:data:`pbf.bounded.MAX_TIME`), an outage ending
by then; the outages of a file may name :data:`MAX_OUTAGE_UNITS` node units in all.

Nodes are groups of consecutive units: ``node_cores=1`` (a node per unit), ``K`` (K units each) or
``"beocat"`` (the Beocat-like cluster's 299 nodes, :func:`pbf.beocat_cluster`).
"""
from __future__ import annotations

import csv
import io
import math
import os
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from .bounded import MAX_TIME, MAX_UNITS, parse_whole
from .codes import OutageKind
from .errors import ConfigError, TraceFormatError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from .cluster import Cluster

__all__ = ["Outage", "Failures", "NodeLayout", "read_failures", "generate_failures", "ON_FAILURE"]

#: what happens to a running job whose node fails
ON_FAILURE = ("requeue", "kill")
_KINDS = ("drain", "fail", "resume")
_COLUMNS = ("time", "nodes", "duration", "kind")
#: the most node units the outages of a replay may name in all (each is kept as a unit index)
MAX_OUTAGE_UNITS = 1 << 23
#: the most 64-bit words the core's outage events may take (an event is a bitmap of the cluster's units)
MAX_EVENT_WORDS = 1 << 25
#: the most failures drawn from an MTBF for one replay
MAX_DRAWN_FAILURES = 1 << 22
_MAX_HOURS = MAX_TIME / 3600


@dataclass(frozen=True)
class Outage:
    """One outage event: ``kind`` (``drain``, ``fail``, ``resume``) of ``units`` (unit indices) at
    ``time``; ``until``: when they come back (None: at a resume; resumes have None)."""
    time: int
    units: tuple
    kind: str
    until: int | None = None


@dataclass(frozen=True)
class NodeLayout:
    """Nodes as runs of consecutive units: ``cores[i]`` units for node ``i``; ``names`` optional."""
    cores: tuple
    names: tuple = ()

    @classmethod
    def of(cls, node_cores: int | str, units: int) -> NodeLayout:
        """``node_cores``: an int K (K units a node; the last node takes the rest) or ``"beocat"``."""
        if node_cores == "beocat":
            from .cluster import beocat_cluster
            cl = beocat_cluster()
            if cl.units != units:
                raise ConfigError(f"node_cores='beocat' lays out {cl.units:,} units, but the cluster has {units:,}")
            return cls(tuple(n.cores for n in cl.nodes), tuple(n.name for n in cl.nodes))
        if isinstance(node_cores, str) and node_cores.isascii() and node_cores.isdigit() and len(node_cores) <= 19:
            node_cores = int(node_cores)
        if not isinstance(node_cores, int) or isinstance(node_cores, bool) or not 1 <= node_cores <= MAX_UNITS:
            shown = repr(node_cores) if len(repr(node_cores)) <= 40 else repr(node_cores)[:37] + "..."
            raise ConfigError(f"node_cores must be an int from 1 to {MAX_UNITS:,} or 'beocat', got {shown}")
        full, rest = divmod(units, node_cores)
        return cls(tuple([node_cores] * full + ([rest] if rest else [])))

    @cached_property
    def first(self) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(self.cores)[:-1])).astype(np.int64)

    @cached_property
    def _index(self) -> dict:
        return {n: i for i, n in enumerate(self.names)}

    def units_of(self, nodes: Iterable[int]) -> tuple:
        """The unit indices of the given node indices."""
        first = self.first
        out = []
        for n in nodes:
            out.extend(range(int(first[n]), int(first[n]) + self.cores[n]))
        return tuple(out)


@dataclass(frozen=True)
class Failures:
    """Where a replay's outages come from: ``path`` (a failure file) or ``mtbf_hours`` (failures
    drawn per node: exponential times between failures with that mean, each lasting an exponential
    time of mean ``repair_hours``, seeded by ``seed``), over nodes of ``node_cores`` units.
    ``on_failure``: ``requeue`` (a failed node's running jobs go back to the queue, with their
    place and estimate) or ``kill``."""
    path: str | None = None
    mtbf_hours: float | None = None
    repair_hours: float = 4.0
    seed: int = 0
    node_cores: object = 1
    on_failure: str = "requeue"

    def __post_init__(self):
        if (self.path is None) == (self.mtbf_hours is None):
            raise ConfigError("failures: give exactly one of path (a failure file) and mtbf_hours")
        if self.path is not None and not isinstance(self.path, (str, os.PathLike)):
            raise ConfigError(f"failures: path must be a file name, got {self.path!r}")
        for name in ("mtbf_hours", "repair_hours"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)
                                  or not math.isfinite(v) or v <= 0 or v > _MAX_HOURS):
                raise ConfigError(f"failures: {name} must be a number > 0 and at most {_MAX_HOURS:,.0f} hours, "
                                  f"got {v!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed < (1 << 64):
            raise ConfigError(f"failures: seed must be an int from 0 to 2**64 - 1, got {self.seed!r}")
        if self.on_failure not in ON_FAILURE:
            raise ConfigError(f"failures: on_failure must be one of {', '.join(ON_FAILURE)}, got {self.on_failure!r}")
        if self.node_cores != "beocat":
            NodeLayout.of(self.node_cores, 1 << 20)       # (checks the value)

    def outages(self, units: int, start: int, end: int, cluster: Cluster | None = None) -> list[Outage]:
        """The outages over a cluster of ``units`` for a replay whose jobs arrive from ``start`` to
        ``end`` (generated failures fall in that span). On a cluster of nodes (``cluster``, a
        :class:`pbf.Cluster`) its nodes are the failing units, whatever ``node_cores`` says."""
        if cluster is not None:
            layout = NodeLayout(tuple(n.cores for n in cluster.nodes), tuple(n.name for n in cluster.nodes))
        else:
            layout = NodeLayout.of(self.node_cores, units)
        if self.path is not None:
            return read_failures(self.path, layout)
        return generate_failures(layout, start, end, self.mtbf_hours, self.repair_hours, self.seed)

    def as_dict(self) -> dict:
        return {"path": None if self.path is None else os.fspath(self.path), "mtbf_hours": self.mtbf_hours,
                "repair_hours": self.repair_hours if self.mtbf_hours is not None else None,
                "seed": self.seed if self.mtbf_hours is not None else None,
                "node_cores": self.node_cores, "on_failure": self.on_failure}


def _parse_nodes(text, layout, path, line):
    names = layout._index if layout.names else {}
    last = len(layout.cores) - 1
    expected = f"node indices 0..{last} and ranges a-b separated by ';' or spaces" + (
        f", or node names {layout.names[0]} .. {layout.names[-1]}" if layout.names else "")
    nodes = []
    for part in re.split(r"[;\s]+", text.strip()):
        if not part:
            continue
        m = re.fullmatch(r"([0-9]{1,19})(?:-([0-9]{1,19}))?", part)
        if m:
            a = int(m.group(1))
            b = int(m.group(2)) if m.group(2) is not None else a
            if b < a:
                raise TraceFormatError(path, line, "nodes", part, "a range a-b with a <= b")
            if b > last:
                raise TraceFormatError(path, line, "nodes", part, f"nodes that exist (0 to {last})")
            nodes.append((a, b))
        elif part in names:
            nodes.append((names[part], names[part]))
        else:
            raise TraceFormatError(path, line, "nodes", part, expected)
    if not nodes:
        raise TraceFormatError(path, line, "nodes", text, expected)
    nodes.sort()
    merged = [list(nodes[0])]
    for a, b in nodes[1:]:               # (overlapping ranges merged before they are expanded)
        if a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def _int_field(row, name, path, line, *, empty_ok=False, minimum=0, maximum=MAX_TIME,
               expected="a whole number of seconds"):
    text = (row.get(name) or "").strip()
    if text == "" and empty_ok:
        return None
    try:
        return parse_whole(text, minimum, maximum)
    except ValueError:
        raise TraceFormatError(path, line, name, text, f"{expected} from {minimum:,} to {maximum:,}") from None


def read_failures(path: str | os.PathLike, layout: NodeLayout) -> list[Outage]:
    """Read a failure file (see the module docstring) into outages, in time order (file order at
    equal times). Every error names the file, line, field and value. Times are from -2**40 to 2**40 s
    (:data:`pbf.bounded.MAX_TIME`; an outage ends by then); the outages may name
    :data:`MAX_OUTAGE_UNITS` node units in all."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read the failure file {path!r}: {exc.strerror or exc}") from None
    except ValueError as exc:               # (a path with a NUL byte)
        raise ConfigError(f"cannot read the failure file {path!r}: {exc}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = bytes(exc.object)
        raise TraceFormatError(path, bad.count(b"\n", 0, exc.start) + 1, None,
                               f"binary data (byte 0x{bad[exc.start]:02x} is not UTF-8 text)", "a CSV text file"
                               ) from None
    del raw
    lines = [(i + 1, line) for i, line in enumerate(io.StringIO(text, newline=""))
             if line.strip() and not line.lstrip().startswith("#")]
    del text
    if not lines:
        raise TraceFormatError(path, None, None, "an empty file", f"a header {','.join(_COLUMNS)} and outage rows")

    def fields(line, text):
        if "\x00" in text:
            raise TraceFormatError(path, line, None, text.strip(), "a CSV text line (it holds a NUL byte)")
        try:
            return next(csv.reader([text]), [])
        except csv.Error as exc:
            raise TraceFormatError(path, line, None, text.strip(), f"a CSV line ({exc})") from None

    header = [h.strip().lower() for h in fields(*lines[0])]
    if sorted(header) != sorted(_COLUMNS):
        raise TraceFormatError(path, lines[0][0], "header", lines[0][1].strip(),
                               f"the columns {','.join(_COLUMNS)} (in any order)")
    out, named = [], 0
    for line, text in lines[1:]:
        values = fields(line, text.split("#", 1)[0])
        if len(values) != len(header):
            raise TraceFormatError(path, line, None, text.strip(), f"{len(header)} fields ({','.join(header)})")
        row = dict(zip(header, values))
        kind = row["kind"].strip().lower()
        if kind not in _KINDS:
            raise TraceFormatError(path, line, "kind", row["kind"].strip(), " or ".join(_KINDS))
        t = _int_field(row, "time", path, line, minimum=-MAX_TIME)
        duration = _int_field(row, "duration", path, line, empty_ok=True, minimum=1, maximum=MAX_TIME - t)
        if kind == "fail" and duration is None:
            raise TraceFormatError(path, line, "duration", "", "seconds: a failure needs a duration "
                                   "(a drain without one lasts until a resume)")
        if kind == "resume" and duration is not None:
            raise TraceFormatError(path, line, "duration", row["duration"].strip(), "nothing: a resume takes none")
        ranges = _parse_nodes(row["nodes"], layout, path, line)
        first, cores = layout.first, layout.cores
        named += sum(int(first[b]) + cores[b] - int(first[a]) for a, b in ranges)
        if named > MAX_OUTAGE_UNITS:
            raise TraceFormatError(path, line, "nodes", row["nodes"].strip(),
                                   f"outages that name at most {MAX_OUTAGE_UNITS:,} node units in all (this line "
                                   f"brings them to {named:,})")
        units = tuple(u for a, b in ranges for u in range(int(first[a]), int(first[b]) + cores[b]))
        out.append(Outage(t, units, kind, None if duration is None else t + duration))
    out.sort(key=lambda o: o.time)
    return out


def generate_failures(layout: NodeLayout, start: int, end: int, mtbf_hours: float, repair_hours: float,
                      seed: int) -> list[Outage]:
    """Failures of every node over [start, end): each node fails after exponential times of mean
    ``mtbf_hours`` (counted from the end of its last repair) and is repaired after an exponential
    time of mean ``repair_hours`` (at least a second). Deterministic for a seed: node i draws from
    its own stream (seed, i), so adding nodes does not move the others' failures."""
    span_hours = max(end - start, 0) / 3600
    expected = len(layout.cores) * span_hours / (mtbf_hours + repair_hours)
    if expected > MAX_DRAWN_FAILURES:
        raise ConfigError(f"failures: an MTBF of {mtbf_hours:g} hours (repairs of {repair_hours:g}) over "
                          f"{len(layout.cores):,} nodes and {span_hours:,.0f} hours draws about {expected:,.0f} "
                          f"failures; pbf draws at most {MAX_DRAWN_FAILURES:,} (a longer MTBF, or fewer nodes)")
    out = []
    for node in range(len(layout.cores)):
        rng = np.random.default_rng([seed, node])
        t = float(start)
        units = None
        while True:
            t += rng.exponential(mtbf_hours * 3600.0)
            if t >= end:
                break
            repair = max(1, int(round(rng.exponential(repair_hours * 3600.0))))
            at = int(t)
            units = units or layout.units_of([node])
            out.append(Outage(at, units, "fail", at + repair))
            t = at + repair
    out.sort(key=lambda o: (o.time, o.units[0]))
    return out


def core_events(outages: Sequence[Outage], units: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The outages as the core's event arrays (time, kind, until, bits): each timed drain or failure
    followed by its automatic resume; in time order, an instant's resumes first."""
    W = (units + 63) // 64
    events = sum(1 if o.kind == "resume" or o.until is None else 2 for o in outages)
    if events * W > MAX_EVENT_WORDS:
        raise ConfigError(f"{len(outages):,} outages make {events:,} events over {units:,} units, a bitmap of "
                          f"{W * 8:,} bytes each: {events * W * 8 / 2**20:,.0f} MiB, more than the "
                          f"{MAX_EVENT_WORDS * 8 / 2**20:,.0f} MiB pbf gives them")
    rows = []
    for o in outages:
        bad = [u for u in o.units if not 0 <= u < units]
        if bad:
            raise ConfigError(f"outage at {o.time}: unit {bad[0]} is outside the cluster (0 to {units - 1})")
        bits = np.zeros(W, np.uint64)
        idx = np.asarray(o.units, dtype=np.int64)
        np.bitwise_or.at(bits, idx // 64, np.left_shift(np.uint64(1), (idx % 64).astype(np.uint64)))
        if o.kind == "resume":
            rows.append((o.time, 0, int(OutageKind.OK_RESUME), -1, bits))
        else:
            kind = OutageKind.OK_FAIL if o.kind == "fail" else OutageKind.OK_DRAIN
            rows.append((o.time, 1, int(kind), -1 if o.until is None else o.until, bits))
            if o.until is not None:
                # back once due: a unit a later outage holds longer stays down
                rows.append((o.until, 0, int(OutageKind.OK_RESUME), o.until, bits))
    rows.sort(key=lambda r: (r[0], r[1]))
    t = np.array([r[0] for r in rows], np.int64)
    kind = np.array([r[2] for r in rows], np.int8)
    until = np.array([r[3] for r in rows], np.int64)
    bits = np.array([r[4] for r in rows], np.uint64).reshape(len(rows), W)
    return t, kind, until, np.ascontiguousarray(bits)


def down_unit_seconds(events: tuple, units: int, end: int) -> int:
    """Unit-seconds out of service up to ``end`` under the core's event arrays (:func:`core_events`),
    with the core's rules (a later outage keeps a unit down longer; a resume brings back only the
    units due by its time)."""
    t, kind, until, bits = events
    since = np.full(units, -1, dtype=np.int64)         # down since (-1: up)
    due = np.zeros(units, dtype=np.int64)
    total = 0
    late = np.flatnonzero(np.asarray(t) >= end)
    n = int(late[0]) if len(late) else len(t)           # the events before the first at or after end
    # (the units of a chunk of events unpacked at once, about 4 MB: not one unpacking an event)
    chunk = max(1, (1 << 22) // max(units, 1))
    for first in range(0, n, chunk):
        last = min(n, first + chunk)
        # (one flat nonzero: a 2-D one walks an iterator element by element)
        flat = np.flatnonzero(np.unpackbits(bits[first:last].view(np.uint8), axis=1, bitorder="little")[:, :units])
        rows, cols = np.divmod(flat, units)
        bounds = np.searchsorted(rows, np.arange(last - first + 1))
        for k in range(last - first):
            i, sel = first + k, cols[bounds[k]:bounds[k + 1]]
            u_until = np.iinfo(np.int64).max if until[i] < 0 else until[i]
            if kind[i] == OutageKind.OK_RESUME:
                back = sel[(since[sel] >= 0) & (due[sel] <= u_until)]
                total += int((t[i] - since[back]).sum())
                since[back] = -1
            else:
                was = since[sel] >= 0
                due[sel] = np.where(was, np.maximum(due[sel], u_until), u_until)
                since[sel[~was]] = t[i]
    still = since >= 0
    return total + int((end - since[still]).sum())
