"""An advance reservation for a harness case (``pbf validate slurm --reservation SPEC``).

``SPEC`` is one line in ``scontrol``'s words, its times in seconds of the workload's clock
(relative to its time 0)::

    Nodes=a1,a2 StartTime=+60 Duration=120 Flags=MAINT,IGNORE_JOBS [Name=maint]

(``EndTime=+N`` instead of ``Duration=N``; ``Nodes`` takes Slurm's host lists, ``a[1-2]``; ``Flags=none``: no
flags, a reservation the jobs that name it run in, ``sbatch --reservation=NAME``, as the workload's
``Reservation`` column says, while it keeps every other job off its nodes). The private
Slurm gets it by ``scontrol create reservation ReservationName=NAME Users=root ...`` as soon as its
nodes are idle, before the first submission, its times on the run's clock (divided by the time
scale); ``scontrol show reservation`` is kept as ``reservation.txt`` in the run's folder. pbf's side
reads the same reservation through :class:`pbf.slurm_reservations.SiteReservations`: from the spec (an
``scontrol show reservation`` record written into ``OUT/reservation.txt``), or, comparing recorded
runs again without a spec, from the first run's own dump on that run's clock.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

from ..node import expand_hostlist
from ..slurm_reservations import SiteReservations, read_reservations
from ..workload.sacct import _timestamp
from .window_spec import bad_value, read_window_spec

__all__ = ["ReservationSpec", "parse_reservation", "write_dump", "reservation_for_pbf", "local_origin",
           "dumped_window", "jobs_inside", "named_jobs", "recorded_reservation", "pbf_reservation",
           "reservation_summary", "FLAGS"]

#: the reservation flags a spec may name (Slurm 22.05's ``scontrol create reservation`` flags)
FLAGS = ("MAINT", "IGNORE_JOBS", "FLEX", "OVERLAP", "MAGNETIC", "PURGE_COMP", "REPLACE", "REPLACE_DOWN",
         "NO_HOLD_JOBS_AFTER", "STATIC_ALLOC", "TIME_FLOAT", "ANY_NODES", "DAILY", "HOURLY", "WEEKLY",
         "WEEKDAY", "WEEKEND")
#: the epoch second the reservation.txt written for pbf's side calls time 0 (any will do)
_ORIGIN = 1704067200          # 2024-01-01T00:00:00
_KEYS = ("Nodes", "StartTime", "Duration", "EndTime", "Flags", "Name")


@dataclass(frozen=True)
class ReservationSpec:
    """A reservation of a harness case: ``nodes`` (names), ``start`` and ``end`` (seconds of the workload's
    clock), ``flags``, ``name``."""
    nodes: tuple
    start: int
    end: int
    flags: tuple = ("MAINT", "IGNORE_JOBS")
    name: str = "pbfresv"

    def on_run_clock(self, time_scale: float) -> tuple[int, int]:
        """(start, end) in seconds of the run's clock (workload seconds / ``time_scale``, rounded)."""
        return int(round(self.start / time_scale)), max(int(round(self.start / time_scale)) + 1,
                                                       int(round(self.end / time_scale)))

    def as_dict(self) -> dict:
        """The spec as summary.json keeps it."""
        return {"name": self.name, "nodes": list(self.nodes), "start_s": self.start, "end_s": self.end,
                "flags": list(self.flags)}


def _bad(text, key, value, expected):
    return bad_value("--reservation", text, key, value, expected)


def parse_reservation(text: str, known: tuple | list | None = None) -> ReservationSpec:
    """The :class:`ReservationSpec` of ``text`` (module docstring); ``known``: the site's node names
    (a node outside them is an error). Raises :class:`pbf.ConfigError` naming the key, the value and
    what was expected."""
    got, nodes, start, end = read_window_spec(
        "--reservation", text, _KEYS, "'Nodes=LIST StartTime=+SECONDS Duration=SECONDS [Flags=MAINT,...] [Name=NAME]'",
        known)
    flags = ("MAINT", "IGNORE_JOBS")
    if "Flags" in got and got["Flags"].strip().lower() == "none":
        flags = ()                          # a reservation jobs may run in (sbatch --reservation)
    elif "Flags" in got:
        flags = tuple(f.strip().upper() for f in got["Flags"].split(","))
        bad = [f for f in flags if f not in FLAGS]
        if bad or not all(flags):
            raise _bad(text, "Flags", got["Flags"], "'none' or a comma list of " + ", ".join(FLAGS))
    name = got.get("Name", "pbfresv")
    if not name.replace("_", "").replace("-", "").isalnum():
        raise _bad(text, "Name", name, "letters, digits, '-' and '_'")
    return ReservationSpec(nodes, start, end, flags, name)


def _stamp(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch))


def write_dump(spec: ReservationSpec, path: str | os.PathLike, time_scale: float = 1.0) -> int:
    """Write ``spec`` as one ``scontrol show reservation`` record (times on the run's clock) at ``path``;
    returns the epoch second it calls time 0 (the ``origin`` of :class:`SiteReservations`)."""
    s, e = spec.on_run_clock(time_scale)
    with open(path, "w") as fh:
        fh.write(f"ReservationName={spec.name} StartTime={_stamp(_ORIGIN + s)} EndTime={_stamp(_ORIGIN + e)} "
                 f"Duration={e - s} Nodes={','.join(spec.nodes)} NodeCnt={len(spec.nodes)} CoreCnt=0 "
                 f"Features=(null) PartitionName=(null) Flags={','.join(spec.flags)}\n"
                 f"   TRES=(null)\n   Users=root Groups=(null) Accounts=(null) Licenses=(null) State=INACTIVE "
                 f"BurstBuffer=(null) Watts=n/a\n   MaxStartDelay=(null)\n")
    return _ORIGIN


def reservation_for_pbf(path: str | os.PathLike, origin: int, known) -> SiteReservations:
    """pbf's side of the reservation dump at ``path`` (times relative to ``origin``, epoch seconds as the
    dump's local times read)."""
    return SiteReservations(os.fspath(path), origin=int(origin), known=tuple(known))


def local_origin(t0: int, t0_local: str | None = None) -> int:
    """The epoch second, as a dump's local times read, of a run's ``t0`` (``t0_local``: as recorded)."""
    text = t0_local or time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t0))
    return int(_timestamp(text))


def dumped_window(path: str | os.PathLike, origin: int) -> list[dict]:
    """Each reservation of a dump at ``path``: name, nodes, start and end relative to ``origin``."""
    records, _fmt = read_reservations(path)
    return [{"name": r.name, "nodes": sorted(n for part in r.nodes for n in expand_hostlist(part)),
             "start_s": r.start - origin, "end_s": r.end - origin, "flags": list(r.flags)} for r in records]


def jobs_inside(records: dict, nodes, start: float, end: float) -> list:
    """Ids of the jobs of ``records`` (``{id: {start, end, nodes}}``) that ran on any of ``nodes`` at some
    time in [``start``, ``end``)."""
    held = set(nodes)
    out = []
    for i, r in sorted(records.items()):
        s, e = r.get("start"), r.get("end")
        if s is None or not held & set(r.get("nodes") or []):
            continue
        e = e if e is not None else float("inf")
        if s < end and e > start:
            out.append(i)
    return out


def recorded_reservation(folder: str | os.PathLike) -> tuple[str, int, str | None] | None:
    """(dump text, t0, t0's local time) of the reservation a run kept in ``folder`` (a run's
    ``result.json`` or a recording's ``submitted.json``), or None when the run had none."""
    import json
    for name in ("result.json", "submitted.json"):
        path = os.path.join(os.fspath(folder), name)
        if os.path.isfile(path):
            with open(path) as fh:
                result = json.load(fh)
            if not result.get("reservation_text") or "t0" not in result:
                return None
            return result["reservation_text"], int(result["t0"]), result.get("t0_local")
    return None


def pbf_reservation(spec: ReservationSpec | None, recorded: str | None, out: str, known, time_scale: float):
    """pbf's side of the case's reservation: (:class:`SiteReservations` or None, where it was read from).
    From ``spec`` when given (written as ``OUT/reservation.txt``), else from the dump kept in the recorded
    run folder ``recorded`` (copied there, on that run's clock)."""
    path = os.path.join(out, "reservation.txt")
    if spec is not None:
        origin = write_dump(spec, path, time_scale)
        return reservation_for_pbf(path, origin, known), "spec"
    got = recorded_reservation(recorded) if recorded else None
    if got is None:
        return None, None
    text, t0, t0_local = got
    with open(path, "w") as fh:
        fh.write(text)
    return reservation_for_pbf(path, local_origin(t0, t0_local), known), "recorded dump"


def named_jobs(records: dict, named: dict, windows: list) -> dict:
    """How the jobs that name a reservation (``named``: ``{job id: name}``) ran in ``records``
    (``{id: {start, end, nodes, state}}``) against its ``windows`` (:func:`dumped_window`): ``inside`` (started
    inside its window, on its nodes), ``outside`` (started elsewhere or at another time), ``not_started``,
    ``past_end`` (still running at the window's end) and ``timeout`` (Slurm's state ``TIMEOUT``)."""
    out = {"inside": [], "outside": [], "not_started": [], "past_end": [], "timeout": []}
    for i, name in sorted(named.items()):
        r = records.get(i) or {}
        s, e = r.get("start"), r.get("end")
        if str(r.get("state", "")).upper().startswith("TIMEOUT"):
            out["timeout"].append(i)
        if s is None:
            out["not_started"].append(i)
            continue
        own = [w for w in windows if w["name"] == name and w["start_s"] <= s < w["end_s"]
               and set(r.get("nodes") or []) <= set(w["nodes"])]
        out["inside" if own else "outside"].append(i)
        if own and (e is None or e > own[0]["end_s"]):
            out["past_end"].append(i)
    return out


def reservation_summary(spec: ReservationSpec | None, pbf_resv, source: str, run_folders: list, runs: list,
                        pbf: dict, time_scale: float, named: dict | None = None) -> dict:
    """summary.json's ``reservation``: the spec, each run's dump on its own clock, and the jobs each side
    ran on the reserved nodes inside the window (``inside``; the window of pbf's reading of it). ``named``
    (``{job id: reservation name}``, the jobs submitted with ``--reservation``): ``jobs_inside`` then counts
    the other jobs alone (``named_jobs_on_its_nodes`` the named ones), and ``named`` says how each side ran
    them (:func:`named_jobs`)."""
    windows = dumped_window(pbf_resv.path, pbf_resv.origin)
    dumped = []
    for folder in run_folders:
        got = recorded_reservation(folder) if folder else None
        if got is None:
            dumped.append(None)
            continue
        text, t0, t0_local = got
        tmp = os.path.join(os.path.dirname(pbf_resv.path), ".reservation-check.txt")
        with open(tmp, "w") as fh:
            fh.write(text)
        try:
            dumped.append(dumped_window(tmp, local_origin(t0, t0_local)))
        finally:
            os.remove(tmp)
    named = named or {}
    inside = {"pbf": [], "slurm": [[] for _ in runs]}
    for w in windows:
        inside["pbf"] += jobs_inside(pbf, w["nodes"], w["start_s"], w["end_s"])
        for k, r in enumerate(runs):
            inside["slurm"][k] += jobs_inside(r, w["nodes"], w["start_s"], w["end_s"])
    out = {"spec": spec.as_dict() if spec else None, "time_scale": time_scale, "pbf_read_from": source,
           "windows_run_clock": windows, "slurm_dumps_run_clock": dumped, "pbf_counts": dict(pbf_resv.counts)}
    if named:
        # (the jobs inside it on its nodes are expected: the other jobs alone are the ones it keeps off)
        out["named_jobs_on_its_nodes"] = {"pbf": [i for i in inside["pbf"] if i in named],
                                          "slurm": [[i for i in x if i in named] for x in inside["slurm"]]}
        inside = {"pbf": [i for i in inside["pbf"] if i not in named],
                  "slurm": [[i for i in x if i not in named] for x in inside["slurm"]]}
        out["named"] = {"jobs": {str(i): n for i, n in sorted(named.items())}, "pbf": named_jobs(pbf, named, windows),
                        "slurm": [named_jobs(r, named, windows) for r in runs]}
    out["jobs_inside"] = inside
    return out
