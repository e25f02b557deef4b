"""A drained node for a harness case (``pbf validate slurm --drain SPEC``).

``SPEC`` is one line in ``scontrol``'s words, its times in seconds of the workload's clock (relative to
its time 0)::

    Nodes=a2 StartTime=+60 Duration=300 [State=DRAIN] [Reason=maint]

(``EndTime=+N`` instead of ``Duration=N``; ``Nodes`` takes Slurm's host lists, ``a[1-2]``). In the
private Slurm the harness runs ``scontrol update NodeName=NODES State=DRAIN Reason=REASON`` at the start
and ``scontrol update NodeName=NODES State=RESUME`` at the end, on the run's clock (divided by the time
scale): a drained node finishes the jobs it runs and takes no new one. The case runs ``slurmdbd``, and
the run keeps ``sacctmgr show events`` (``events.txt``; in a compact recording, ``submitted.json``) as a
site gives its node history. pbf's side reads the same outage through
:class:`pbf.slurm_events.SlurmEvents`, as ``pbf replay --slurm-events`` reads a site's dump: from the
first run's own dump when there is one, else from a dump written from the spec (``OUT/events.txt``).
``--drain none`` with ``--slurm-runs`` replays pbf without the drain (a what-if).

A run's dump starts the drain when the node became empty, not at the ``scontrol`` command
(:mod:`pbf.slurm_events`). As a site's sacct dump says where its jobs ran, the first run's jobs (when
and where each started and ended, ``OUT/run1-nodes.sacct``) are pbf's trace of node lists, from which the
drain's request time is inferred (``drain_start="inferred"``, the default; ``"recorded"``: the dump's
times). A drain from the spec is the request itself and is never moved.
"""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass

from ..slurm_events import SlurmEvents, read_events
from .reservation import local_origin
from .window_spec import bad_value, read_window_spec

__all__ = ["DrainSpec", "parse_drain", "write_events", "drain_actions", "recorded_events", "recorded_actions",
           "pbf_drain", "write_node_trace", "started_inside", "drain_summary", "EVENTS_FORMAT", "NONE"]

#: the columns the harness asks ``sacctmgr show events`` for
EVENTS_FORMAT = "NodeName,TimeStart,TimeEnd,State,Reason"
#: ``--drain none``: pbf's side without the drain (a what-if on recorded runs)
NONE = "none"
#: the epoch second the events.txt written from a spec calls time 0 (any will do)
_ORIGIN = 1704067200          # 2024-01-01T00:00:00
_KEYS = ("Nodes", "StartTime", "Duration", "EndTime", "State", "Reason")


@dataclass(frozen=True)
class DrainSpec:
    """A drain of a harness case: ``nodes`` (names), ``start`` and ``end`` (seconds of the workload's
    clock), ``reason``."""
    nodes: tuple
    start: int
    end: int
    reason: str = "maint"

    def on_run_clock(self, time_scale: float) -> tuple[int, int]:
        """(start, end) in seconds of the run's clock (workload seconds / ``time_scale``, rounded)."""
        s = int(round(self.start / time_scale))
        return s, max(s + 1, int(round(self.end / time_scale)))

    def as_dict(self) -> dict:
        """The spec as summary.json keeps it."""
        return {"nodes": list(self.nodes), "start_s": self.start, "end_s": self.end, "state": "DRAIN",
                "reason": self.reason}


def _bad(text, key, value, expected):
    return bad_value("--drain", text, key, value, expected)


def parse_drain(text: str, known: tuple | list | None = None) -> DrainSpec:
    """The :class:`DrainSpec` of ``text`` (module docstring); ``known``: the site's node names (a node
    outside them is an error). Raises :class:`pbf.ConfigError` naming the key, the value and what was
    expected."""
    usage = "'Nodes=LIST StartTime=+SECONDS Duration=SECONDS [State=DRAIN] [Reason=WORD]'"
    got, nodes, start, end = read_window_spec("--drain", text, _KEYS, usage, known,
                                              " (the harness resumes the nodes then)")
    if got.get("State", "DRAIN").upper() != "DRAIN":
        raise _bad(text, "State", got["State"], "DRAIN (a drained node finishes its jobs and takes no new one)")
    reason = got.get("Reason", "maint")
    if not reason.replace("_", "").replace("-", "").isalnum():
        raise _bad(text, "Reason", reason, "letters, digits, '-' and '_'")
    return DrainSpec(nodes, start, end, reason)


def _stamp(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch))


def write_events(spec: DrainSpec, path: str | os.PathLike, time_scale: float = 1.0) -> int:
    """Write ``spec`` as a ``sacctmgr -P show events`` dump (times on the run's clock) at ``path``; returns
    the epoch second it calls time 0."""
    s, e = spec.on_run_clock(time_scale)
    with open(path, "w") as fh:
        fh.write(EVENTS_FORMAT.replace(",", "|") + "\n")
        fh.write(f"{','.join(spec.nodes)}|{_stamp(_ORIGIN + s)}|{_stamp(_ORIGIN + e)}|DRAIN|{spec.reason}\n")
    return _ORIGIN


def drain_actions(spec: DrainSpec | None, time_scale: float) -> list[dict]:
    """The inner program's timed ``scontrol`` commands of ``spec`` (``at``: seconds of the run's clock)."""
    if spec is None:
        return []
    s, e = spec.on_run_clock(time_scale)
    nodes = ",".join(spec.nodes)
    return [{"at": s, "what": f"drain {nodes}",
             "args": ["scontrol", "update", f"NodeName={nodes}", "State=DRAIN", f"Reason={spec.reason}"]},
            {"at": e, "what": f"resume {nodes}", "args": ["scontrol", "update", f"NodeName={nodes}", "State=RESUME"]}]


def recorded_events(folder: str | os.PathLike) -> tuple[str, int, str | None] | None:
    """(events dump text, t0, t0's local time) a run kept in ``folder`` (``result.json`` or a recording's
    ``submitted.json``), or None when it kept none."""
    for name in ("result.json", "submitted.json"):
        path = os.path.join(os.fspath(folder), name)
        if os.path.isfile(path):
            with open(path) as fh:
                result = json.load(fh)
            if not result.get("events_text") or "t0" not in result:
                return None
            return result["events_text"], int(result["t0"]), result.get("t0_local")
    return None


def write_node_trace(records: dict, origin: int, path: str | os.PathLike) -> None:
    """Write a run's jobs (``{id: {start, end, nodes}}``, seconds of its clock) as a sacct dump of where
    and when they ran (``JobID|Start|End|NodeList``, times ``origin`` + seconds) at ``path``."""
    with open(path, "w") as fh:
        fh.write("JobID|Start|End|NodeList\n")
        for i, r in sorted(records.items()):
            if r.get("start") is None or not r.get("nodes"):
                continue
            end = _stamp(origin + int(r["end"])) if r.get("end") is not None else "Unknown"
            fh.write(f"{i}|{_stamp(origin + int(r['start']))}|{end}|{','.join(r['nodes'])}\n")


def pbf_drain(spec: DrainSpec | None, recorded: str | None, out: str, known, time_scale: float,
              on_failure: str = "requeue", records: dict | None = None, drain_start: str = "inferred"):
    """pbf's side of the case's drain: (:class:`SlurmEvents` or None, where it was read from). From the
    events dump kept in the run folder ``recorded`` when there is one (copied to ``OUT/events.txt``, on
    that run's clock), else from ``spec`` (written there). ``recorded`` None and a ``spec``: the spec.
    ``records``: that run's jobs (``{id: {start, end, nodes}}``), written as the trace of node lists from
    which the dump's drains are moved to their inferred request (``drain_start``, module docstring)."""
    path = os.path.join(out, "events.txt")
    # (a run without a drain keeps its events too, when slurmdbd ran: only a drained run's are the case's)
    drained = recorded and any(a["what"].startswith("drain ") for a in recorded_actions(recorded))
    got = recorded_events(recorded) if drained else None
    if got is not None:
        text, t0, t0_local = got
        with open(path, "w") as fh:
            fh.write(text)
        origin = local_origin(t0, t0_local)
        trace = None
        if records is not None:
            trace = os.path.join(out, "run1-nodes.sacct")
            write_node_trace(records, origin, trace)
        return SlurmEvents(path=path, on_failure=on_failure, origin=origin, known=tuple(known), trace=trace,
                           drain_start=drain_start), "the run's sacctmgr show events"
    if spec is None:
        return None, None
    origin = write_events(spec, path, time_scale)
    return SlurmEvents(path=path, on_failure=on_failure, origin=origin, known=tuple(known),
                       drain_start="recorded"), "spec"


def started_inside(records: dict, nodes, start: float, end: float) -> list:
    """Ids of the jobs of ``records`` (``{id: {start, nodes}}``) that started on any of ``nodes`` at a time
    in [``start``, ``end``)."""
    held = set(nodes)
    return [i for i, r in sorted(records.items()) if r.get("start") is not None and start <= r["start"] < end
            and held & set(r.get("nodes") or [])]


def _windows(path, origin, known, events_of=None):
    # (events_of: pbf's SlurmEvents, whose drains may be moved to their inferred request)
    names = list(known)
    events = events_of.events(names)[0] if events_of is not None else read_events(path, origin, names, set(known))[0]
    return [{"nodes": [names[i] for i in nodes], "start_s": t, "end_s": until, "kind": kind}
            for t, nodes, kind, until in events]


def recorded_actions(folder: str | os.PathLike) -> list:
    """The timed ``scontrol`` commands a run kept in ``folder`` (what, planned, at: seconds of its clock)."""
    for name in ("result.json", "submitted.json"):
        path = os.path.join(os.fspath(folder), name)
        if os.path.isfile(path):
            with open(path) as fh:
                return list(json.load(fh).get("actions") or [])
    return []


def _asked(actions, nodes):
    # the drain as asked of a run: (start, end) of its drain and resume commands, on the run's clock
    drain = [a["at"] for a in actions if a["what"].startswith("drain ")]
    resume = [a["at"] for a in actions if a["what"].startswith("resume ")]
    if not drain:
        return None
    # (jobcomp's times are whole seconds, cut: a job started at +160.4 s after a resume at +160.0 s reads +160)
    return {"nodes": list(nodes), "start_s": int(math.floor(drain[0])),
            "end_s": int(math.floor(resume[0])) if resume else None, "kind": "drain"}


def drain_summary(spec: DrainSpec | None, events: SlurmEvents, source: str, run_folders: list, runs: list,
                  pbf: dict, known, time_scale: float) -> dict:
    """summary.json's ``drain``: the spec, the drains pbf read (run's clock), each run's own dump read the
    same way, the drain as each run asked it (its ``scontrol`` commands' times: ``asked_run_clock``), and
    the jobs each side started on a drained node while it was drained (``started_inside``: each run in
    the drain it asked, pbf in the drain it read; ``pbf_started_inside_asked``: pbf in the first run's
    asked drain). A dump's drain starts when the node has no job left (slurmctld records the event
    then), which can be later than the ``scontrol`` command."""
    windows = _windows(events.path, events.origin, known, events)
    asked = []
    for folder in run_folders:
        acts = recorded_actions(folder) if folder else []
        nodes = next((a["what"].split(" ", 1)[1].split(",") for a in acts if a["what"].startswith("drain ")), [])
        asked.append(_asked(acts, nodes))
    if spec is not None and not any(asked):
        s, e = spec.on_run_clock(time_scale)
        asked = [{"nodes": list(spec.nodes), "start_s": s, "end_s": e, "kind": "drain"}] * len(runs)
    dumped = []
    for folder in run_folders:
        got = recorded_events(folder) if folder else None
        if got is None:
            dumped.append(None)
            continue
        text, t0, t0_local = got
        tmp = os.path.join(os.path.dirname(events.path), ".events-check.txt")
        with open(tmp, "w") as fh:
            fh.write(text)
        try:
            dumped.append(_windows(tmp, local_origin(t0, t0_local), known))
        finally:
            os.remove(tmp)

    def inside(records, ws):
        out = []
        for w in ws:
            if w["kind"] == "drain":
                out += started_inside(records, w["nodes"], w["start_s"],
                                      w["end_s"] if w["end_s"] is not None else float("inf"))
        return sorted(set(out))
    pad = [None] * len(runs)
    slurm_windows = [[a] if a else (d or windows) for a, d in zip(asked + pad, dumped + pad)]
    return {"spec": spec.as_dict() if spec else None, "time_scale": time_scale, "pbf_read_from": source,
            "windows_run_clock": windows, "slurm_dumps_run_clock": dumped, "asked_run_clock": asked,
            "started_inside": {"pbf": inside(pbf, windows),
                               "slurm": [inside(r, w) for r, w in zip(runs, slurm_windows)]},
            "pbf_started_inside_asked": inside(pbf, [asked[0]]) if asked and asked[0] else None,
            "drain_start": events.counts.get("drain_start"), "drains_moved": events.counts.get("drains_moved", []),
            "pbf_counts": dict(events.counts)}
