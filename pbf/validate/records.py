"""What a real Slurm run leaves behind, read back: the job completion records of ``jobcomp/filetxt``
(one line a job, ``Key=Value`` words: start, end, node list, state) and the text of ``sdiag``.

No slurmdbd is set up by the harness, so ``sacct`` has nothing to say; ``jobcomp/filetxt`` writes a
line when a job ends (or is refused after submission), with times in whole seconds of local time.
"""
from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass

from ..errors import TraceFormatError
from ..node import expand_hostlist

__all__ = ["JobRecord", "read_jobcomp", "parse_jobcomp_line", "read_sdiag", "sdiag_figures", "local_epoch",
           "read_starts_log", "read_timing", "end_lag_threshold"]

_KEY = re.compile(r"(?:^|\s)([A-Za-z][A-Za-z0-9]*)=")
_NEEDED = ("JobId", "JobState", "StartTime", "EndTime", "NodeList")


def local_epoch(text: str) -> int | None:
    """Epoch seconds of Slurm's ``YYYY-MM-DDTHH:MM:SS`` (local time, as slurmctld writes it); None for
    ``Unknown``/``None``/empty; ValueError for anything else."""
    t = text.strip()
    if t in ("", "Unknown", "None", "(null)"):
        return None
    return int(time.mktime(time.strptime(t, "%Y-%m-%dT%H:%M:%S")))


@dataclass(frozen=True)
class JobRecord:
    """One job as Slurm recorded it: Slurm's ``slurm_id``, the job ``name`` (the harness names a job
    ``pbf<workload id>``), ``state`` (COMPLETED, FAILED, TIMEOUT, CANCELLED, ...), ``submit``, ``start``
    and ``end`` (epoch seconds, None when unknown), ``nodes`` (node names) and ``procs`` (CPUs held).
    A job refused after submission has no nodes."""
    slurm_id: int
    name: str
    state: str
    submit: int | None
    start: int | None
    end: int | None
    nodes: tuple
    procs: int
    time_limit_min: int | None

    @property
    def ran(self) -> bool:
        return bool(self.nodes) and self.start is not None

    @property
    def workload_id(self) -> int | None:
        """The workload job id of a job the harness submitted (its name ``pbf<id>``), else None."""
        m = re.fullmatch(r"pbf(\d+)", self.name)
        return int(m.group(1)) if m else None


def parse_jobcomp_line(line: str, path: str = "jobcomp", number: int | None = None) -> dict:
    """The ``Key=Value`` words of one ``jobcomp/filetxt`` line (a value runs to the next `` Key=``);
    ``path`` and ``number`` name the line in the error of a line without a needed key."""
    keys = list(_KEY.finditer(line))
    out = {}
    for i, m in enumerate(keys):
        end = keys[i + 1].start() if i + 1 < len(keys) else len(line)
        out[m.group(1)] = line[m.end():end].strip()
    missing = [k for k in _NEEDED if k not in out]
    if missing:
        raise TraceFormatError(path, number, missing[0], line[:80],
                               "a jobcomp/filetxt record with " + ", ".join(_NEEDED))
    return out


def read_jobcomp(path_or_text: str | os.PathLike, *, text: bool = False) -> list:
    """The :class:`JobRecord` of every line of a ``jobcomp/filetxt`` file (or of ``text`` when
    ``text=True``), in file order. A malformed line raises :class:`pbf.TraceFormatError` naming the
    file, the line, the field and the value."""
    if text:
        name, body = "jobcomp", str(path_or_text)
    else:
        name = os.fspath(path_or_text)
        with open(name, encoding="utf-8", errors="replace") as fh:
            body = fh.read()
    out = []
    for number, line in enumerate(body.splitlines(), 1):
        if not line.strip():
            continue
        f = parse_jobcomp_line(line, name, number)

        def field(key, convert, expected, f=f, number=number):
            try:
                return convert(f.get(key, ""))
            except ValueError:
                raise TraceFormatError(name, number, key, f.get(key, ""), expected) from None
        nodes_text = f["NodeList"]
        nodes = () if nodes_text in ("", "(null)", "None") else tuple(
            field("NodeList", expand_hostlist, "a Slurm node list such as n[1-3]"))
        limit = f.get("TimeLimit", "")
        out.append(JobRecord(
            slurm_id=field("JobId", int, "a whole job id"),
            name=f.get("Name", ""), state=f["JobState"].split()[0] if f["JobState"] else "",
            submit=field("SubmitTime", local_epoch, "a time YYYY-MM-DDTHH:MM:SS"),
            start=field("StartTime", local_epoch, "a time YYYY-MM-DDTHH:MM:SS"),
            end=field("EndTime", local_epoch, "a time YYYY-MM-DDTHH:MM:SS"),
            nodes=nodes, procs=field("ProcCnt", lambda v: int(v or 0), "a whole number of CPUs"),
            time_limit_min=int(limit) if limit.isdigit() else None))
    return out


def read_sdiag(text: str) -> dict:
    """``sdiag``'s text as ``{section: {key: value}}`` (the lines before the first section under ``""``).
    A section starts at a line without indentation and without a value (``Backfilling stats``,
    ``Main schedule statistics (microseconds):``); values are the text after the first colon."""
    out: dict = {"": {}}
    section = ""
    for raw in text.splitlines():
        if not raw.strip() or raw.lstrip().startswith("*"):
            continue
        key, sep, value = raw.strip().partition(":")
        indented = raw[:1] in (" ", "\t")
        if not indented and (not sep or not value.strip()):
            section = raw.strip().rstrip(":").strip()
            out.setdefault(section, {})
            continue
        if sep:
            out.setdefault(section, {})[key.strip()] = value.strip()
    return out


def _number(value):
    m = re.match(r"\s*(-?\d+)", value or "")
    return int(m.group(1)) if m else None


def sdiag_figures(parsed: dict) -> dict:
    """The figures of a parsed ``sdiag`` the comparison reports: jobs submitted, started, completed,
    failed; main scheduler cycles and their mean depth; backfilled jobs, backfill cycles, mean cycle (us)
    and mean depth. Figures sdiag did not print are None."""
    top = parsed.get("", {})
    main = next((v for k, v in parsed.items() if k.startswith("Main schedule statistics")), {})
    bf = next((v for k, v in parsed.items() if k.startswith("Backfilling stats")), {})
    return {"jobs_submitted": _number(top.get("Jobs submitted")), "jobs_started": _number(top.get("Jobs started")),
            "jobs_completed": _number(top.get("Jobs completed")), "jobs_failed": _number(top.get("Jobs failed")),
            "main_cycles": _number(main.get("Total cycles")), "main_mean_depth": _number(main.get("Mean depth cycle")),
            "main_mean_cycle_us": _number(main.get("Mean cycle")),
            "backfilled_jobs": _number(bf.get("Total backfilled jobs (since last slurm start)")),
            "backfill_cycles": _number(bf.get("Total cycles")), "backfill_mean_cycle_us": _number(bf.get("Mean cycle")),
            "backfill_depth_mean": _number(bf.get("Depth Mean"))}


_START = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?\] "
                    r"(?:(sched/backfill): _start_job: Started JobId=(\d+)|(sched): Allocate JobId=(\d+))")


def read_starts_log(text: str) -> dict:
    """How slurmctld started each job, from its log: ``{slurm job id: (how, epoch seconds with
    fractions)}``, ``how`` ``backfill`` (``sched/backfill: _start_job: Started JobId=...``) or ``main``
    (the main scheduler's ``sched: Allocate JobId=...``)."""
    out = {}
    for line in text.splitlines():
        m = _START.match(line)
        if not m:
            continue
        stamp, frac, bf, bf_id, _main, main_id = m.groups()
        t = local_epoch(stamp) + (float(frac) if frac else 0.0)
        if bf:
            out.setdefault(int(bf_id), ("backfill", t))
        else:
            out.setdefault(int(main_id), ("main", t))
    return out


_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?\] (.*)$")
_DONE = re.compile(r"_job_complete: JobId=(\d+) done")


def read_timing(text: str, runs: dict, t0: int | None = None) -> dict:
    """Slurm's sub-second timing, from slurmctld's log (millisecond stamps): ``launch_completion_s``,
    the median of end - start - asked run time over the jobs (``runs``: slurm job id -> asked run
    time, s; start from the ``Started``/``Allocate`` line, end from ``_job_complete: ... done``);
    ``cycle_drift_s``, the mean of how much later than one second after the last each backfill
    cycle began (consecutive cycles 0.5-1.5 s apart; the mean, not the median: the log's millisecond
    stamps make each drift a whole number of milliseconds, so that a drift of 0.55 ms a cycle reads as
    0 or 1 ms, whose median says 0 or 1 while the cycles' phase moves 0.55 ms a second); and
    ``end_lag_below_s``, their ratio rounded:
    jobs shorter than that end just after the cycle of their last second, so the scheduler sees them a
    second late (pbf's ``SlurmSim.end_lag_below``). ``time_limit_check_s`` (with ``t0``, the run's origin,
    epoch seconds): the second of the run's clock of one of slurmctld's 30-second time-limit checks
    (``time(NULL)`` then, less ``t0``), from a job it ended at its reservation's end ("Reservation ended
    for JobId=...", at a check), else from slurmctld's start (its timer starts then; pbf's
    ``ReplayConfig.resv_check_at``). Values are None where the log has too little."""
    starts = {k: t for k, (_, t) in read_starts_log(text).items()}
    ends, cycles, checks = {}, [], {}
    for line in text.splitlines():
        m = _STAMP.match(line)
        if not m:
            continue
        stamp, frac, rest = m.groups()
        t = local_epoch(stamp) + (float(frac) if frac else 0.0)
        if "Reservation ended for JobId=" in rest or (rest.startswith("slurmctld version") and " started" in rest):
            checks.setdefault("ended" if "Reservation" in rest else "started", int(local_epoch(stamp)))
            continue
        if "_attempt_backfill: beginning" in rest:
            cycles.append(t)
            continue
        d = _DONE.search(rest)
        if d:
            ends.setdefault(int(d.group(1)), t)
    over = sorted(ends[k] - starts[k] - runs[k] for k in ends if k in starts and k in runs)
    drift = sorted((b - a) - 1.0 for a, b in zip(cycles, cycles[1:]) if 0.5 < b - a < 1.5)
    eps = over[len(over) // 2] if over else None
    dr = math.fsum(drift) / len(drift) if drift else None
    below = int(round(eps / dr)) if eps is not None and dr is not None and dr > 0 and eps > 0 else None
    check = checks.get("ended", checks.get("started"))
    return {"launch_completion_s": eps, "cycle_drift_s": dr, "end_lag_below_s": below,
            "jobs": len(over), "cycles": len(cycles),
            "time_limit_check_s": check - t0 if check is not None and t0 is not None else None}


def end_lag_threshold(timings: list) -> tuple[int | None, list]:
    """pbf's ``end_lag_below`` (s) from the ``timings`` (:func:`read_timing`) of the runs compared: each
    run's threshold -- its launch and completion time over its cycles' drift, rounded (at least 1); 0,
    pbf's "every job", where its cycles did not drift (every job ends after the cycle of its last second);
    None where its log has too little -- and their median (the lower of two; 0 counts as above any), or
    None when no run gives one. Returns (the threshold, each run's)."""
    each = []
    for tm in timings:
        eps, drift = (tm or {}).get("launch_completion_s"), (tm or {}).get("cycle_drift_s")
        if eps is None or drift is None or eps <= 0:
            each.append(None)
        else:
            each.append(0 if drift <= 0 else max(1, int(round(eps / drift))))
    given = sorted(math.inf if v == 0 else v for v in each if v is not None)
    if not given:
        return None, each
    mid = given[(len(given) - 1) // 2]
    return (0 if mid == math.inf else int(mid)), each
