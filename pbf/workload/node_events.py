"""A site's node events, as ``sacctmgr show events`` dumps them, as outages of a replay.

``sacctmgr --parsable2 show events start=... format=Cluster,NodeName,TimeStart,TimeEnd,State,Reason,User``
(any order, any case; ``Event``, ``CPUs``, ``TRES``, ``Duration`` and other columns read past) lists each time a
node went down, drained, or came back into service. Each node event becomes one outage of
:mod:`pbf.outages` on the trace's clock (seconds from the sacct dump's ``UnixStartTime``, the same
naive UTC reading of the times as :func:`pbf.workload.read_sacct`):

* a state with ``DOWN`` or ``FAIL`` (``DOWN``, ``DOWN*``, ``DOWN+DRAIN``, ``FAIL``): a failure -- its
  running jobs stop (requeued or killed, ``--on-failure``) -- until ``TimeEnd``;
* a state with ``DRAIN`` (``DRAIN``, ``IDLE+DRAIN``, ``MIXED+DRAIN``, ``DRAINING``): a drain until
  ``TimeEnd`` (running jobs finish);
* ``TimeEnd`` ``Unknown`` (the event still open when the dump was made): out until the end of the replay.

Read and not modelled, counted in the replay's summary (``failures.events_read``): cluster events (no
``NodeName``), other states (``MAINT``, ``REBOOT``, ``POWER*``, ``FUTURE``...), events on nodes the
cluster does not have (another partition's), events that ended before the trace began.
"""
from __future__ import annotations

import os
from collections import Counter

from ..errors import ConfigError, TraceFormatError
from ..node import count_hostlist, expand_hostlist

__all__ = ["looks_like_events", "read_node_events"]

_NEEDED = ("nodename", "timestart", "timeend", "state")
#: the most names one dump's node lists may expand to in all
MAX_EVENT_NODES = 1 << 22


def looks_like_events(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a sacctmgr events dump (its first line: '|'-separated, naming NodeName,
    TimeStart and State) rather than pbf's failure CSV."""
    try:
        with open(path, "rb") as fh:
            first = fh.readline(65536).decode("utf-8", "replace").lower()
    except OSError:
        return False
    names = {n.strip() for n in first.split("|")}
    return "|" in first and {"nodename", "timestart", "state"} <= names


def _kind(state: str) -> str | None:
    s = state.upper()
    if "POWER" in s:
        return None
    if "DOWN" in s or "FAIL" in s:
        return "fail"
    if "DRAIN" in s:
        return "drain"
    return None


def read_node_events(path: str | os.PathLike, layout, origin: int, report: dict | None = None) -> list:
    """The outages (:class:`pbf.outages.Outage`) of a sacctmgr events dump on ``layout`` (a
    :class:`pbf.outages.NodeLayout` with the cluster's node names), times in seconds from ``origin``
    (the trace's ``UnixStartTime``). ``report`` (a dict, optional) gets what was read and not modelled.
    Errors name the file, line, field and value."""
    from ..outages import Outage
    from .sacct import _timestamp
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8-sig", errors="strict") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        raise ConfigError(f"cannot read the events dump {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise TraceFormatError(path, None, None, "binary data", "a sacctmgr --parsable2 text dump") from None
    if not lines:
        raise TraceFormatError(path, None, None, "an empty file", "a header naming NodeName|TimeStart|TimeEnd|State")
    names = [n.strip().lower() for n in lines[0].split("|")]
    col = {n: i for i, n in reversed(list(enumerate(names)))}
    missing = [n for n in _NEEDED if n not in col]
    if missing:
        raise TraceFormatError(path, 1, None, lines[0][:200], "a sacctmgr events header naming "
                               + ", ".join(("NodeName", "TimeStart", "TimeEnd", "State")) + f" (missing {missing})")
    index = {n: i for i, n in enumerate(layout.names)}
    seen = Counter()
    out, total = [], 0
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) < len(names):
            raise TraceFormatError(path, number, None, line[:200], f"{len(names)} fields separated by '|'")
        node_text, state = cells[col["nodename"]].strip(), cells[col["state"]].strip()
        if not node_text:
            seen["cluster events"] += 1
            continue
        kind = _kind(state)
        if kind is None:
            seen[f"state {state or '(none)'}"] += 1
            continue
        start = _timestamp(cells[col["timestart"]])
        end = _timestamp(cells[col["timeend"]])
        for field, value in (("TimeStart", start), ("TimeEnd", end)):
            if value is False or (field == "TimeStart" and value is None):
                raise TraceFormatError(path, number, field, cells[col[field.lower()]],
                                       "YYYY-MM-DDTHH:MM:SS" + (" or Unknown" if field == "TimeEnd" else ""))
        if end is not None and end <= start:
            raise TraceFormatError(path, number, "TimeEnd", cells[col["timeend"]], "a time after TimeStart")
        if end is not None and end <= origin:
            seen["ended before the trace began"] += 1
            continue
        try:
            total += count_hostlist(node_text)
            if total > MAX_EVENT_NODES:
                raise ValueError(f"at most {MAX_EVENT_NODES:,} node names in a dump")
            nodes = expand_hostlist(node_text)
        except ValueError as exc:
            raise TraceFormatError(path, number, "NodeName", node_text[:200], str(exc)) from None
        known = [index[n] for n in nodes if n in index]
        if len(known) < len(nodes):
            seen["events on nodes the cluster does not have"] += 1
        if not known:
            continue
        seen[kind] += 1
        out.append(Outage(start - origin, layout.units_of(sorted(set(known))), kind,
                          None if end is None else end - origin))
    out.sort(key=lambda o: o.time)
    if report is not None:
        report.update({"file": path, "outages": seen["fail"] + seen["drain"],
                       "not_modelled": {k: v for k, v in sorted(seen.items()) if k not in ("fail", "drain")}})
    return out
