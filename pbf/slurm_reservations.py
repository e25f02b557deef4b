"""Advance reservations from a site's own dump (``--slurm-reservations FILE``): maintenance windows and
other reservations that keep the replay's jobs off some nodes for a time.

Two dumps are read, told apart by their first line:

* ``scontrol show reservation`` (also ``scontrol -o show reservation``): one record a reservation,
  ``ReservationName=... StartTime=... EndTime=... Nodes=... Flags=...`` over one or several lines; the
  reservations as they stand (past the dump, a reservation with ``DAILY``, ``HOURLY``, ``WEEKLY``,
  ``WEEKDAY`` or ``WEEKEND`` repeats from its ``StartTime`` on, to the end of the replay);
* ``sacctmgr -P show reservation format=Name,NodeNames,TimeStart,TimeEnd,Flags ...``: the site's
  history from slurmdbd, one line an occurrence (a header names the columns: any order, any case; the
  default columns ``Cluster|Name|TRES|TimeStart|TimeEnd|UnusedWall`` name no nodes and are refused with
  the ``format=`` to use).

What pbf models of a reservation: **its nodes, whole, from its start to its end, held against every
job of the replay** -- as Slurm 22.05 treats a reservation a job did not ask for (``job_test_resv`` in
``src/slurmctld/reservation.c``: a full-node reservation's nodes are taken out of the nodes of a job
whose window overlaps it). So a job does not start on them if it would still run at the start, the
backfill plans see them held (pbf's plan as nothing free there; Slurm's backfill as a record of its
node map), and the reservation's end is an event (backfill's ``_more_work`` counts
``last_resv_update``). Running jobs are not stopped at the start (as ``IGNORE_JOBS`` and the
maintenance practice: the site's own node events, ``--slurm-events``, say when nodes went down).

Jobs inside a reservation (sacct's ``Reservation`` column, :meth:`SiteReservations.groups`) start only
inside its current window, on its nodes less the other reservations' over their time, its own hold not
applying to them; a job still pending at its end never starts (``ext/resv_inside.pxd``,
:mod:`pbf.reference.resv_ref`). A job inside a reservation still running at its end plus ``ResvOverRun``
(slurm.conf, ``ReplayConfig.resv_over_run``) is ended at slurmctld's next time-limit check, every 30 s
(:func:`end_checks`); not in a ``FLEX`` reservation.

Read and not modelled, said in the summary (``reservations.not_modelled``), never dropped:
``Users``/``Accounts`` (the jobs they would let in; the trace's ``Reservation`` column says which ran
inside); a reservation of part of its nodes' cores
(``CoreCnt`` below the nodes' cores, ``FIRST_CORES``): held as whole nodes; ``FLEX``, ``MAGNETIC``,
``PURGE_COMP``, ``REPLACE``, ``REPLACE_DOWN``, ``OVERLAP``, ``TIME_FLOAT``, ``NO_HOLD_JOBS_AFTER``
(they concern the jobs inside; of them pbf models only what ``FLEX`` does at the end); license-only
and burst-buffer reservations (no nodes). A node the ``slurm.conf`` does not name, a time that is not
``YYYY-MM-DDTHH:MM:SS``, an end not after its start: an error naming the file, line and key. Nodes of
the site outside the replayed partition are left out and counted.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .errors import ConfigError
from .slurm_events import dump_nodes, read_dump_lines
from .workload.sacct import _timestamp

__all__ = ["Reservation", "SiteReservations", "read_reservations", "REPEATS", "over_run_seconds", "end_checks",
           "TIME_LIMIT_CHECK_S", "YEAR_SECONDS"]

#: the largest dump read
MAX_RESERVATIONS_BYTES = 64 << 20
#: the repeat flags and their period in seconds (WEEKDAY/WEEKEND: daily, on those days only)
REPEATS = {"HOURLY": 3600, "DAILY": 86400, "WEEKLY": 7 * 86400, "WEEKDAY": 86400, "WEEKEND": 86400}
#: flags that concern only the jobs inside a reservation, or none of pbf's rules
_INSIDE_FLAGS = ("FLEX", "MAGNETIC", "PURGE_COMP", "REPLACE", "REPLACE_DOWN", "OVERLAP", "TIME_FLOAT",
                 "NO_HOLD_JOBS_AFTER", "NO_HOLD_JOBS_AFTER_END", "FIRST_CORES", "STATIC_ALLOC")
_NULL = ("", "(null)", "none", "n/a")
#: slurmctld's time-limit check (job_time_limit) runs this often: PERIODIC_TIMEOUT, src/slurmctld/controller.c
TIME_LIMIT_CHECK_S = 30
#: ResvOverRun=UNLIMITED as job_time_limit takes it (YEAR_SECONDS)
YEAR_SECONDS = 365 * 86400


def over_run_seconds(value: str) -> int:
    """slurm.conf's ``ResvOverRun`` (whole minutes, 0 .. 65535, or ``UNLIMITED``/``INFINITE``, which
    65535 also means: Slurm reads it as a uint16) in seconds, as Slurm 22.05's ``job_time_limit`` uses it:
    minutes * 60, UNLIMITED a year. ValueError for anything else."""
    text = str(value).strip()
    if text.upper() in ("UNLIMITED", "INFINITE"):
        return YEAR_SECONDS
    if not text.isdigit() or int(text) > 65535:
        raise ValueError("whole minutes from 0 to 65535 or UNLIMITED")
    return YEAR_SECONDS if int(text) == 65535 else int(text) * 60


def _check_after(t: int, at: int) -> int:
    # slurmctld's first time-limit check strictly after t (the checks: at + 30 k)
    return at + TIME_LIMIT_CHECK_S * ((t - at) // TIME_LIMIT_CHECK_S + 1)


def end_checks(starts, ends, names, flags: dict, over_run: int, first: int) -> list[int]:
    """When a job inside each window's reservation, started in that window, is ended by it (-1: never),
    Slurm 22.05's rule: slurmctld's time-limit check (``job_time_limit``, at ``first`` + 30 k) ends a
    running job of a reservation not ``FLEX`` once the reservation's end plus ``over_run`` seconds is
    before the check (``end + over_run < now``: state ``TIMEOUT``, "Reservation ended for JobId=..."). A
    repeating reservation (``flags[name]`` has a repeat flag) moves to its next occurrence at the first
    check after its end (``job_resv_check`` runs right after ``job_time_limit``): a job it did not end
    then is held to the next window's end. (Slurm moves it once its 5-second reservation timer has marked
    the end too, which can put the move off by one check: not modelled.)"""
    out = [-1] * len(starts)
    by_name = {}
    for k, name in enumerate(names):
        by_name.setdefault(name, []).append(k)
    for name, ks in by_name.items():
        fl = flags.get(name, ())
        if "FLEX" in fl:
            continue
        repeats = any(f in REPEATS for f in fl)
        later = -1
        for k in sorted(ks, key=lambda x: (starts[x], ends[x]), reverse=True):
            first_check = _check_after(ends[k], first)
            if not repeats or first_check > ends[k] + over_run:
                out[k] = _check_after(ends[k] + over_run, first)
            else:
                out[k] = later                  # (the last window of a repeating one: past the replay)
            later = out[k]
    return out


@dataclass(frozen=True)
class Reservation:
    """One reservation: ``name``, its nodes (names), ``start`` and ``end`` (epoch seconds), its flags,
    and where it was read (``line``)."""
    name: str
    nodes: tuple
    start: int
    end: int
    flags: tuple = ()
    line: int = 0
    cores: int | None = None


def _scontrol_records(lines):
    # (line number, {key: value}) a record; a record starts at ReservationName=
    records, cur = [], None
    for number, text in enumerate(lines, 1):
        s = text.strip()
        if not s or s.startswith("#") or s.lower().startswith("no reservations"):
            continue
        for tok in s.split():
            key, eq, value = tok.partition("=")
            if eq and key == "ReservationName":
                cur = (number, {})
                records.append(cur)
            if cur is None:
                raise ConfigError(f"line {number}: {tok[:40]!r} before the first ReservationName= (expected "
                                  "scontrol show reservation)")
            if eq:
                cur[1][key] = value
                cur[1].setdefault("_lines", {})[key] = number
                last = key
            else:                      # (a value with spaces: Comment=, Reason=)
                cur[1][last] = cur[1][last] + " " + tok
    return records


def _time(path, number, key, text):
    t = _timestamp(text)
    if t is None or t is False:
        raise ConfigError(f"{path}, line {number}: {key} {text[:40]!r}: expected a time YYYY-MM-DDTHH:MM:SS")
    return t


def _flags(text):
    return tuple(f.strip().upper() for f in text.split(",") if f.strip() and f.strip().lower() not in _NULL)


def _read_scontrol(path, lines):
    out = []
    for number, rec in _scontrol_records(lines):
        at = rec.pop("_lines", {})
        name = rec.get("ReservationName", "")
        for key in ("StartTime", "EndTime"):
            if key not in rec:
                raise ConfigError(f"{path}, line {number}: reservation {name!r} has no {key}= (expected scontrol "
                                  "show reservation)")
        start = _time(path, at.get("StartTime", number), "StartTime", rec["StartTime"])
        end = _time(path, at.get("EndTime", number), "EndTime", rec["EndTime"])
        nodes = rec.get("Nodes", "")
        cores = rec.get("CoreCnt")
        out.append(Reservation(name, (nodes,), start, end, _flags(rec.get("Flags", "")), at.get("Nodes", number),
                               int(cores) if cores and cores.isdigit() else None))
    return out


def _read_sacctmgr(path, lines):
    head, out = None, []
    for number, text in enumerate(lines, 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        cols = [c.strip() for c in text.split("|")]
        if head is None:
            head = {c.lower().replace(" ", ""): k for k, c in enumerate(cols)}
            if "nodename" not in head and "nodenames" in head:
                head["nodename"] = head["nodenames"]
            missing = [c for c in ("name", "nodename", "timestart", "timeend") if c not in head]
            if missing:
                raise ConfigError(f"{path}, line {number}: the header has no {', '.join(missing)} column (expected "
                                  "sacctmgr -P show reservation format=Name,NodeNames,TimeStart,TimeEnd,Flags)")
            continue
        if len(cols) < len(head):
            raise ConfigError(f"{path}, line {number}: {len(cols)} columns where the header names {len(head)}")
        start = _time(path, number, "TimeStart", cols[head["timestart"]])
        end = _time(path, number, "TimeEnd", cols[head["timeend"]])
        flags = _flags(cols[head["flags"]]) if "flags" in head else ()
        out.append(Reservation(cols[head["name"]], (cols[head["nodename"]],), start, end, flags, number))
    if head is None:
        raise ConfigError(f"{path}: no header line (expected sacctmgr -P show reservation "
                          "format=Name,NodeNames,TimeStart,TimeEnd,Flags)")
    return out


def read_reservations(path: str | os.PathLike) -> tuple[list[Reservation], str]:
    """The reservations of the dump at ``path`` (module docstring), as read (node host lists not yet
    expanded), and its format (``"scontrol"`` or ``"sacctmgr"``)."""
    path = os.fspath(path)
    lines = read_dump_lines(path, "a reservations dump", MAX_RESERVATIONS_BYTES)
    first = next((s.strip() for s in lines if s.strip() and not s.lstrip().startswith("#")), "")
    try:
        if not first or first.startswith("ReservationName=") or first.lower().startswith("no reservations"):
            return _read_scontrol(path, lines), "scontrol"
        if "|" in first:
            return _read_sacctmgr(path, lines), "sacctmgr"
    except ConfigError as exc:
        msg = str(exc)
        raise ConfigError(msg if msg.startswith(path) else f"{path}, {msg}") from None
    raise ConfigError(f"{path}: the first line {first[:60]!r} is neither scontrol show reservation "
                      "(ReservationName=...) nor a sacctmgr -P show reservation header")


def _first_line(path, name: str) -> int | None:
    # the first line of a sacct dump whose Reservation field is `name` (for an error about it)
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            col = None
            for number, text in enumerate(fh, 1):
                if not text.strip():
                    continue
                cells = [c.strip() for c in text.rstrip("\r\n").split("|")]
                if col is None:
                    low = [c.lower() for c in cells]
                    if "reservation" not in low:
                        return None
                    col = low.index("reservation")
                elif len(cells) > col and cells[col] == name:
                    return number
    except (OSError, TypeError):
        return None
    return None


def _occurrences(r: Reservation, until: int):
    # (start, end) of each occurrence of r up to `until` (its repeat flag, else once)
    rep = [f for f in r.flags if f in REPEATS]
    if not rep:
        yield r.start, r.end
        return
    step = REPEATS[rep[0]]
    s, length = r.start, r.end - r.start
    while s < until:
        day = (s // 86400 + 4) % 7             # 0 Sunday .. 6 Saturday (1970-01-01 was a Thursday)
        if rep[0] == "WEEKDAY" and day in (0, 6) or rep[0] == "WEEKEND" and day not in (0, 6):
            s += step
            continue
        yield s, s + length
        s += step


@dataclass(frozen=True)
class SiteReservations:
    """The reservations of the dump at ``path`` on the replay's cluster: ``origin`` (epoch seconds of
    the trace's time 0), ``known`` (every node name of the site's ``slurm.conf``). :meth:`windows`
    gives the windows the core holds."""
    path: str
    origin: int = 0
    known: tuple = ()
    counts: dict = field(default_factory=dict, compare=False)

    def windows(self, cluster, span_end: int) -> tuple[list[int], list[int], list[list[int]]]:
        """(starts, ends, node indices) of every window on ``cluster`` (times on the trace's clock) that
        ends after time 0 and starts before ``span_end``."""
        return self.named_windows(cluster, span_end)[:3]

    def named_windows(self, cluster, span_end: int) -> tuple[list[int], list[int], list[list[int]], list[str]]:
        """:meth:`windows`, and each window's reservation name."""
        records, fmt = read_reservations(self.path)
        index = {n.name: i for i, n in enumerate(cluster.nodes)}
        known = set(self.known)
        counts = {"format": f"{fmt} show reservation", "reservations": len(records), "windows": 0,
                  "other_partitions_nodes": 0, "no_nodes": 0, "not_modelled": {}}
        flag_count = counts["not_modelled"]
        starts, ends, nodes, names_of = [], [], [], []
        for r in records:
            where = f"{self.path}, line {r.line}"
            if r.end <= r.start:
                raise ConfigError(f"{where}: reservation {r.name!r} ends ({r.end}) before or when it starts "
                                  f"({r.start})")
            names = r.nodes[0]
            if names.strip().lower() in _NULL:
                counts["no_nodes"] += 1
                continue
            idx, other = dump_nodes(names, f"{where}: Nodes", index, known, lenient=True)
            counts["other_partitions_nodes"] += other
            for f in r.flags:
                if f in _INSIDE_FLAGS:
                    flag_count[f] = flag_count.get(f, 0) + 1
            if r.cores is not None and idx and r.cores < sum(cluster.nodes[i].cores for i in idx):
                flag_count["CoreCnt (part of the nodes' cores)"] = flag_count.get(
                    "CoreCnt (part of the nodes' cores)", 0) + 1
            if not idx:
                continue
            for s, e in _occurrences(r, self.origin + span_end):
                s, e = s - self.origin, e - self.origin
                if e <= 0 or s >= span_end:
                    continue
                starts.append(s)
                ends.append(e)
                nodes.append(sorted(set(idx)))
                names_of.append(r.name)
                counts["windows"] += 1
        if "jobs_inside" in self.counts:
            counts["jobs_inside"] = self.counts["jobs_inside"]
        self.counts.clear()
        self.counts.update(counts)
        return starts, ends, nodes, names_of

    def groups(self, names: list[str], table, windows=None) -> tuple[list[int], np.ndarray | None]:
        """The core's numbering of the reservations jobs are inside (``NodeCluster.set_reservations``'s
        ``groups`` and ``jobs``): each window's (``names``: :meth:`named_windows`'), 0 where no job is
        inside its reservation, and each job's of ``table`` (its rows' order; None: no job is inside
        one). Checks the names (:meth:`jobs_inside`) and, given ``windows`` ((starts, ends) of
        :meth:`named_windows`), that no two windows of a reservation some job is inside overlap."""
        inside = self.jobs_inside(table)
        if not inside:
            return [0] * len(names), None
        number = {name: k + 1 for k, name in enumerate(sorted(inside))}
        if windows is not None:
            spans = sorted((s, e, name) for s, e, name in zip(*windows, names) if name in number)
            last = {}
            for s, e, name in spans:
                if name in last and s < last[name]:
                    raise ConfigError(f"{self.path}: reservation {name!r}: two of its windows overlap (one ends at "
                                      f"{last[name] + self.origin}, the next starts at {s + self.origin}): jobs "
                                      "are inside it (the trace's Reservation column), and a job inside a "
                                      "reservation needs one window of it at a time")
                last[name] = max(e, last.get(name, e))
        legend = {}
        for name, (_, n) in (table.__dict__.get("reservation_lines") or {}).items():
            legend[n] = name
        for text in table.header.lines:
            key, sep, value = text.strip().partition(":")
            n, _, name = value.strip().partition(" ")
            if sep and key.strip() == "Reservation" and n.isdigit():
                legend.setdefault(int(n), name.strip())
        col = table.columns["reservation"]
        code = np.zeros(int(col.max()) + 1, dtype=np.int64)
        for n, name in legend.items():
            if 0 < n < len(code):
                code[n] = number.get(name, 0)
        return [number.get(n, 0) for n in names], code[np.maximum(col, 0)]

    def flags(self) -> dict[str, tuple]:
        """Each reservation's flags, by name."""
        return {r.name: tuple(r.flags) for r in read_reservations(self.path)[0]}

    def jobs_inside(self, table) -> dict[str, int]:
        """The jobs of ``table`` (read from a sacct dump: its ``reservation`` column, sacct's
        ``Reservation``) by the reservation they name; counted in :meth:`as_dict` (``read.jobs_inside``).
        A name the dump does not hold is an error naming the trace's file and line, the field and the
        value."""
        col = table.columns.get("reservation")
        if col is None or not (col > 0).any():
            return {}
        lines = table.__dict__.get("reservation_lines") or {}
        names = {number: (name, line) for name, (line, number) in lines.items()}
        for text in table.header.lines:                     # (a table read back from pbf's SWF)
            key, sep, value = text.strip().partition(":")
            number, _, name = value.strip().partition(" ")
            if sep and key.strip() == "Reservation" and number.isdigit():
                names.setdefault(int(number), (name.strip(), None))
        known = {r.name for r in read_reservations(self.path)[0]}
        numbers, n = np.unique(col[col > 0], return_counts=True)
        out = {}
        for number, count in zip(numbers.tolist(), n.tolist()):
            name, line = names.get(number, (str(number), None))
            if name not in known:
                line = line or _first_line(table.source, name)
                where = f"{table.source}, line {line}" if line else f"{table.source}"
                some = ", ".join(sorted(known)[:5]) + (", ..." if len(known) > 5 else "")
                raise ConfigError(f"{where}: Reservation {name!r}: no reservation of that name in {self.path} "
                                  f"(expected one of its reservations: {some or 'it holds none'})")
            out[name] = count
        self.counts["jobs_inside"] = dict(out)
        return out

    def as_dict(self) -> dict:
        return {"path": self.path, "origin": self.origin, "read": dict(self.counts),
                "modelled": ("each reservation's nodes, whole, held from its start to its end against every job "
                             "but those inside it (sacct's Reservation column), which start only inside its "
                             "current window, on its nodes, and are ended at the first time-limit check (every "
                             "30 s) after its end plus ResvOverRun (not in a FLEX reservation)"),
                "not_modelled": ("Users/Accounts; partial-core reservations held as whole nodes; MAINT of a "
                                 "job's own reservation; flags of the jobs inside (counted; FLEX only for their end)")}
