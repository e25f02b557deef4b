"""Slurm accounting records (``sacct --parsable2``) as a job table, every column accounted for.

A dump is ``|``-separated with a header line of field names, in any order and any case (tools
lower-case Slurm's headers; a field pbf reads may be named once only); ``sacct -P -o ALL`` (about a
hundred columns), with or without ``--allocations`` (step lines), reads as it is. Needed: ``JobID``
(or ``JobIDRaw``), ``Submit``, a run time (``ElapsedRaw`` seconds, else ``Elapsed``), and processors
(``ReqCPUS``, else ``AllocCPUS``/``NCPUS``). Every other column is modelled, read into a column of
the table without being modelled, or named with its count of non-empty values as present and not
modelled (:func:`describe_sacct`): none is dropped silently.

Modelled (they decide when and where a job runs):

* ``Submit``, ``Start``, ``ElapsedRaw``/``Elapsed``, ``TimelimitRaw``/``Timelimit``, ``State``,
  ``ReqCPUS`` (SWF field 8), ``AllocCPUS``/``NCPUS`` (field 5, the CPUs Slurm gave a job that
  started: a job's units are the larger of the two under the default cleaning), ``User``/``UID``,
  ``Group``/``GID``, ``Partition``, ``QOS``;
* on a cluster of nodes: ``ReqMem``, ``ReqNodes`` (else ``NNodes``), GPUs (``ReqTRES`` ``gres/gpu``,
  else ``ReqGRES``, else ``AllocTRES``, else ``AllocGRES``) and their types (``gpu_type``, legend
  ``; GpuType: N a100``: the job runs only on nodes of that type), ``Constraints``, and ``--exclusive``
  of ``SubmitLine`` (whole nodes: ``AllocCPUS`` on ``AllocNodes`` nodes).

Read into columns, not modelled: licenses
(``licenses``, from ``Licenses``, else ``ReqTRES`` ``license/NAME=N``, else ``SubmitLine -L``; legend
``; Licenses: N matlab:2``), dependencies of ``SubmitLine`` (``dependency``: their kinds, legend
``; Dependency: N afterok``; SWF field 17 ``prev_job``: the parent in the dump that ended last),
``Reason`` and ``Flags`` (legends ``; Reason:`` and ``; Flags:``), the Slurm ids (``slurm_id``:
``JobIDRaw``; ``array_job``, ``het_job``: the array's or heterogeneous job's id, 0 for none),
``exclusive`` (1: ``--exclusive`` on the submit line). Options of ``SubmitLine`` that change
scheduling and are not modelled (``--begin``, ``--time-min``, ``--nodelist``, ...) are counted.

The rules (those of the Parallel Backfill authors' trace generator, and of SWF, where they apply):

* Numbers are ASCII digits within what pbf's core takes: times and durations up to
  :data:`pbf.bounded.MAX_TIME`, processors and nodes up to :data:`pbf.node.MAX_UNITS`, memory up to
  :data:`pbf.node.MAX_NODE_MEMORY_MB` (a node or a CPU), GPUs and licenses up to 2**32 - 1, job ids
  up to 2**32 - 1. A value outside is a :class:`~pbf.errors.TraceFormatError` naming the line, the
  field as the header spells it, the value and what was expected, as a malformed value is: the dump
  is refused, no job is left out silently. Counts as sacct prints them (``1K`` for 1,024 nodes) read
  as counts.
* A gzip dump is decompressed as it is read; a truncated or corrupt one is refused with the line
  where its data stops.
* Job ids: ``123`` a job; ``123.batch``, ``123.extern``, ``123.0`` its steps (counted, folded into
  the job: a step is not a job); ``123_4`` an array element (a job, as Slurm runs it);
  ``123_[5-9%2]`` the elements of an array still pending when the dump was taken (or cancelled
  before they started): counted, elements and records, never expanded (they did not run);
  ``123+0``, ``123+1`` the components of a heterogeneous job: each replays as a job of its own,
  submitted with the others (Slurm starts them together; pbf does not model that joint start).
* A line with more fields than the header, when the header has ``SubmitLine``: the extra ``|`` are
  taken to be inside the submit line (``--wrap="a | b"``; sacct does not escape them) and joined
  back, counted. Otherwise such a line is an error.
* Times: ``Submit``/``Start`` are ``YYYY-MM-DDTHH:MM:SS`` (UTC is assumed) or ``Unknown``/``None``;
  durations are ``[D-]HH:MM:SS``, ``MM:SS`` or ``MM:SS.mmm``; limits may also be ``UNLIMITED``,
  ``Partition_Limit`` or ``Unknown`` (no requested time: -1), and ``TimelimitRaw`` is in minutes.
* State -> SWF status: ``COMPLETED`` 1; ``FAILED``, ``TIMEOUT``, ``NODE_FAIL``, ``OUT_OF_MEMORY``,
  ``BOOT_FAIL``, ``DEADLINE``, ``PREEMPTED`` 0 (failed: the run time is what the job got);
  ``CANCELLED`` (also ``CANCELLED by N``) 5; ``PENDING``, ``RUNNING``, ``REQUEUED``,
  ``SUSPENDED``, ``RESIZING`` -1 with no run time (the job had not ended when the dump was taken).
  A job that never started (no ``Start``) has no run time (-1) either; a job that started and ended
  in the same second has run time 0: a zero-length job, which cleaning keeps for a sacct dump
  (``--drop-zero-length`` drops it; :class:`pbf.workload.Cleaning`).
* Requested memory (``ReqMem``: ``4Gn`` per node and ``2Gc`` per CPU as Slurm up to 20.11 prints
  it; a bare ``4G``, as Slurm 21.08 and later print it, is the job's total, divided over its nodes)
  -> SWF field 10, KB per processor, and columns ``mem_core_mb`` / ``mem_node_mb``. Without
  ``ReqMem``, ``ReqTRES`` ``mem=`` (the job's total) is used.
* GPUs per node (column ``gpus``): ``gres/gpu=N`` of ``ReqTRES`` (the job's total; typed entries
  ``gres/gpu:a100=N`` when there is no untyped one) divided over the nodes, rounded up; else
  ``ReqGRES`` (``gpu:2``, ``gpu:a100:2``: per node, as ``--gres`` asks); else ``AllocTRES``; else
  ``AllocGRES``. Nodes (``ReqNodes``: ``2`` or ``2-4``; columns ``nodes_min``, ``nodes_max``) and
  features (``Constraints``; column ``constraint``: a number whose legend is in the header,
  ``; Constraint: 1 elves&ib``).
* Partition and QOS names -> SWF fields 16 (partition) and 15 (queue), numbered from 1 in order of
  first appearance; the header keeps the legend (``; Partition: 1 normal``, ``; Queue: 1 normal``),
  so the multifactor priority's ``--mf-partition`` / ``--mf-qos`` can name them by number. A job
  submitted to several partitions keeps its list (``a,b``) as one name. ``Account`` -> column
  ``account`` (legend ``; Account: 1 physics``), which a partition's ``AllowAccounts`` /
  ``DenyAccounts`` read (:mod:`pbf.slurm_partitions`). ``Reservation`` -> column ``reservation``
  (legend ``; Reservation: 1 maint``; ``table.reservation_lines``: each name's first line and number),
  checked against ``--slurm-reservations`` (:meth:`pbf.slurm_reservations.SiteReservations.jobs_inside`).
* Jobs are sorted by submit time (stable) and numbered from 1; submit times count from the first
  (its epoch time is the header's ``UnixStartTime``); user and group names become numbers from 1
  in order of first appearance.
* ``partition``: keep one partition; ``since`` / ``until``: keep submits in [since, until);
  ``pack_days``: re-space the submits evenly over that many days from the first (the authors'
  "pack N": ``submit_k = k * N days / jobs`` from the first, k = 1..jobs).

The table's ``sacct`` attribute (a JSON-ready dict; :func:`describe_sacct` renders it) says what was
read, modelled and not; cleaning carries it into its report (``CleaningReport.sacct``).
"""
from __future__ import annotations

import calendar
import datetime
import math
import numbers
import os
import re
import time
from array import array
from collections import Counter

import numpy as np

from ..bounded import MAX_TIME, parse_whole
from ..errors import ConfigError, TraceFormatError
from ..node import MAX_NODE_MEMORY_MB, MAX_UNITS
from .files import head_text, text_lines
from .jobs import JobTable, SwfHeader
from .sacct_fields import (
    _EMPTY,
    _FROM_COLUMNS,
    _MAX_ARRAY_INDEX,
    _NO_EFFECT,
    _R,
    _array_elements,
    _dependency,
    _gres,
    _gres_per_node,
    _parents,
    _submit_options,
    _tres,
)
from .sacct_report import _summary, describe_sacct, format_sacct

__all__ = ["read_sacct", "is_sacct", "parse_duration_slurm", "STATUS", "describe_sacct", "format_sacct"]

_FAILED = ("FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED")
_UNFINISHED = ("PENDING", "RUNNING", "REQUEUED", "SUSPENDED", "RESIZING", "REVOKED", "REQUEUE_FED",
               "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED")
#: SWF status of each Slurm state
STATUS = {"COMPLETED": 1, "CANCELLED": 5, **{s: 0 for s in _FAILED}, **{s: -1 for s in _UNFINISHED}}
_NO_LIMIT = ("UNLIMITED", "PARTITION_LIMIT", "UNKNOWN", "INVALID", "")
# (ASCII digits only, and few enough that the sum stays exact: the total is checked against MAX_TIME)
_DURATION = re.compile(r"^(?:([0-9]{1,12})-)?(?:([0-9]{1,12}):)?([0-9]{1,12}):([0-9]{1,12})(?:\.([0-9]{1,9}))?$")
_MEM = re.compile(r"^([0-9]{1,19}(?:\.[0-9]{1,19})?)([KMGT]?)([nc]?)$")
_MEM_KB = {"": 1024, "K": 1, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3}   # bare numbers are MB (Slurm)
_TIME = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})$")
_EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()
#: a job id: job[_element | _[pending elements]][+component][.step]
_JOBID = re.compile(r"^([0-9]{1,19})(?:_([0-9]{1,19})|_\[([^\]]*)\])?(?:\+([0-9]{1,19}))?(?:\.(.+))?$")
_JOBID_HINT = "a Slurm job id: 123, an array element 123_4 or 123_[1-9], a component 123+0 or a step 123.batch"
#: the most processors or nodes a job may ask (pbf's largest cluster, :data:`pbf.node.MAX_UNITS`)
_MAX_COUNT = MAX_UNITS
#: the most GPUs (or licenses) a job may ask in all (Slurm counts them in 32 bits)
_MAX_GPUS = (1 << 32) - 1
#: Slurm's job ids are 32-bit
_MAX_JOB_ID = (1 << 32) - 1
#: the highest array index (Slurm's MaxArraySize is at most 4,000,001)
#: what sacct prints for "no value" (counted as empty in the columns' counts)
_COUNT_UNIT = {"": 1, "K": 1024, "M": 1024 ** 2}       # sacct prints 1,024 nodes as 1K (exact units)
_HEADER_HINT = "a sacct --parsable2 header line (JobID|Submit|...)"

# The record of a job, in the order the reader packs it (all numbers, one float64 each).
_FIELDS_A_JOB = len(_R)

# Columns another column gives the same information as (named as such in the report).

def _header_names(line: str) -> list[str] | None:
    """The field names of a sacct header line, or None when the line is not one (its names compared
    without regard to case: tools lower-case Slurm's headers)."""
    names = [n.strip() for n in line.split("|")]
    lower = {n.lower() for n in names}
    return names if len(names) > 2 and ("jobid" in lower or "jobidraw" in lower) else None


def is_sacct(path: str | os.PathLike) -> bool:
    """Whether the file (plain or gzip) starts with a ``sacct --parsable2`` header line (field names in
    any case). Only the file's first 64 KiB are looked at; a file that cannot be read is not a dump
    (the SWF reader then says what is wrong with it)."""
    text = head_text(path)
    if text is None:
        return False
    for line in text.split("\n"):
        if line.strip():
            return _header_names(line) is not None
    return False


def parse_duration_slurm(text: str) -> int | None:
    """Seconds of a Slurm duration (``[D-]HH:MM:SS``, ``D-HH:MM``, ``MM:SS``, ``MM:SS.mmm``; ASCII digits); None if it
    is not one or it exceeds :data:`pbf.bounded.MAX_TIME`."""
    m = _DURATION.match(text.strip())
    if not m:
        return None
    d, h, mi, s, _ = m.groups()
    if h is None and d is not None:     # D-HH:MM
        seconds = int(d) * 86400 + int(mi) * 3600 + int(s) * 60
    elif h is None:                     # MM:SS
        seconds = int(mi) * 60 + int(s)
    else:
        seconds = int(d or 0) * 86400 + int(h) * 3600 + int(mi) * 60 + int(s)
    return seconds if seconds <= MAX_TIME else None


def _timestamp(text):
    text = text.strip()
    if text.upper() in ("UNKNOWN", "NONE", ""):
        return None
    m = _TIME.match(text)
    if not m:
        return False
    y, mo, d, h, mi, s = map(int, m.groups())
    if h > 23 or mi > 59 or s > 61:            # (61: as strptime's %S, a leap second and its double)
        return False
    try:
        day = datetime.date(y, mo, d).toordinal()
    except ValueError:
        return False
    return (day - _EPOCH_DAY) * 86400 + h * 3600 + mi * 60 + s


def _since(value, what):
    if value is None:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if not (math.isfinite(value) and -MAX_TIME <= value <= MAX_TIME):
            raise ConfigError(f"{what} {value!r}: expected an epoch time from {-MAX_TIME:,} to {MAX_TIME:,}, "
                              "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS")
        return int(value)
    text = str(value).strip()
    if text.isascii():
        for fmt in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"):
            try:
                return calendar.timegm(time.strptime(text, fmt))
            except (ValueError, OverflowError):
                continue
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise ConfigError(f"{what} {shown}: expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS")


def _columns(line):
    """The header's field names (as spelled), its column of each field (lower-cased name -> first
    column) and the fields named more than once."""
    names = [n.strip() for n in line.split("|")]
    col, twice = {}, set()
    for i, n in enumerate(names):
        key = n.lower()
        if key in col:
            twice.add(key)
        else:
            col[key] = i
    return names, col, twice


def read_sacct(path: str | os.PathLike, *, partition: str | None = None, since: str | int | None = None,
               until: str | int | None = None, pack_days: float | None = None) -> JobTable:
    """Read a ``sacct --parsable2`` dump into a raw :class:`JobTable` (SWF columns and the request
    columns; clean it as an SWF table). The table's ``dropped`` dict counts the records left out and
    why; its ``sacct`` dict says what every column gave (:func:`describe_sacct`). A value out of
    range (a run time beyond :data:`pbf.bounded.MAX_TIME`, more processors or nodes than pbf's largest
    cluster, more memory than its largest node) is a :class:`TraceFormatError` naming the file, line,
    field (as the header spells it), value and the range, as for any malformed value."""
    path = os.fspath(path)
    lo, hi = _since(since, "since"), _since(until, "until")
    if pack_days is not None and not (isinstance(pack_days, numbers.Real) and not isinstance(pack_days, bool)
                                      and math.isfinite(pack_days) and 0 < pack_days <= MAX_TIME / 86400):
        raise ConfigError(f"pack {pack_days!r}: expected a number of days > 0 and at most {MAX_TIME // 86400:,}")
    lines = text_lines(path)
    try:
        return _read(path, lines, partition, lo, hi, pack_days)
    finally:
        lines.close()


def _tally(flags: bytearray, rows: int) -> np.ndarray:
    """Per column, how many of ``rows`` lines had it empty (``flags``: a byte a cell, 1 for empty)."""
    return np.frombuffer(flags, dtype=np.uint8).reshape(rows, -1).sum(axis=0, dtype=np.int64)


class _Legend(dict):
    """Text -> number from 1 in order of first appearance (0: no text)."""

    def of(self, text: str) -> int:
        return self.setdefault(text, len(self) + 1) if text else 0


def _read(path, lines, partition, lo, hi, pack_days):
    start = header = None
    for number, line in lines:
        if line.strip():
            start, header = number, line
            break
    if header is None:
        raise TraceFormatError(path, 1, None, "", _HEADER_HINT)
    names, col, twice = _columns(header)

    def need(*options):
        for o in options:
            if o.lower() in col:
                return o.lower()
        raise TraceFormatError(path, start, None, header[:80],
                               f"a header with {' or '.join(options)} (sacct --parsable2 --format=...)")
    opt = lambda *options: next((o.lower() for o in options if o.lower() in col), None)  # noqa: E731
    f_id = need("JobID", "JobIDRaw")
    f_raw = opt("JobIDRaw") if f_id != "jobidraw" else None
    f_submit = need("Submit")
    f_run = need("ElapsedRaw", "Elapsed")
    f_cpus = need("ReqCPUS", "AllocCPUS", "NCPUS")
    f_alloc = opt("AllocCPUS", "NCPUS")
    f_start, f_limit = opt("Start"), opt("TimelimitRaw", "Timelimit")
    f_nodes, f_mem, f_state = opt("ReqNodes", "NNodes"), opt("ReqMem"), opt("State")
    f_anodes = opt("AllocNodes", "NNodes")
    f_user, f_group = opt("User", "UID"), opt("Group", "GID")
    f_part, f_qos, f_acct, f_resv = opt("Partition"), opt("QOS"), opt("Account"), opt("Reservation")
    f_tres, f_atres = opt("ReqTRES"), opt("AllocTRES")
    f_gres, f_agres = opt("ReqGRES"), opt("AllocGRES")
    f_cons, f_lic = opt("Constraints"), opt("Licenses")
    f_reason, f_flags, f_line = opt("Reason"), opt("Flags"), opt("SubmitLine")
    modelled = [f_id, f_raw, f_submit, f_run, f_cpus, f_alloc, f_start, f_limit, f_nodes, f_anodes, f_mem, f_state,
                f_user, f_group, f_part, f_qos, f_tres, f_atres, f_gres, f_agres, f_cons]
    # (Account: read into the account column for partitions' AllowAccounts; the report lists the column as
    # not modelled, as the trace's own replay does not use it)
    read_only = [f_lic, f_reason, f_flags, f_line]
    used = list(dict.fromkeys(f for f in modelled + read_only if f is not None))
    for f in used:
        if f in twice:
            where = [str(i + 1) for i, n in enumerate(names) if n.lower() == f]
            raise TraceFormatError(path, start, None, header[:80],
                                   f"a header naming each field once ({names[col[f]]} is in columns "
                                   f"{', '.join(where)})")
    spelled = {f: names[col[f]] for f in used}      # errors name a field as the header spells it
    i_line = col[f_line] if f_line else None

    legends = [_Legend() for _ in range(9)]
    constraints, gpu_types, licenses, reasons, flag_sets, dep_kinds, accounts, resvs, gres_kinds = legends
    dropped = {"job_steps": 0, "pending_array_records": 0, "other_partition": 0, "outside_dates": 0}
    info = {"records": 0, "steps": 0, "pipes_in_submit_line": 0, "zero_length": 0, "never_started": 0,
            "not_ended": 0, "array_elements": 0, "arrays": set(), "pending_array_elements": 0,
            "pending_lists_cut_short": 0, "array_throttles": set(), "het_jobs": set(), "het_components": 0,
            "gpu_jobs": Counter(), "gpu_types": Counter(), "licenses": Counter(), "reasons": Counter(),
            "flags": Counter(), "exclusive": 0, "exclusive_whole_nodes": 0, "exclusive_other": Counter(),
            "dependencies": 0, "dependency_kinds": Counter(), "options": Counter(), "submit_lines_other": 0,
            "tres": {"ReqTRES": Counter(), "AllocTRES": Counter()}, "gres_other": Counter(), "gres": Counter()}
    element_ids, tres_seen, resv_at = {}, {}, {}     # (resv_at: a Reservation name's first line)
    depends = {}                    # record -> the dependency targets its submit line names
    empties = np.zeros(len(names), dtype=np.int64)
    pending_flags, in_buffer, seen_lines = bytearray(), 0, 0
    recs, users, groups, parts, qoss = array("d"), {}, {}, {}, {}
    for number, line in lines:
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) > len(names) and i_line is not None:
            # sacct does not escape a | inside a field: one in the submit line (--wrap="a | b") is joined back
            extra = len(cells) - len(names)
            cells[i_line:i_line + extra + 1] = ["|".join(cells[i_line:i_line + extra + 1])]
            info["pipes_in_submit_line"] += 1
        if len(cells) != len(names):
            raise TraceFormatError(path, number, None, line[:80],
                                   f"{len(names)} |-separated fields as in the header")
        cells = [c.strip() for c in cells]
        pending_flags += bytes(map(_EMPTY.__contains__, cells))
        in_buffer += 1
        if in_buffer == 4096:
            empties += _tally(pending_flags, in_buffer)
            seen_lines += in_buffer
            pending_flags, in_buffer = bytearray(), 0

        def get(name, cells=cells):
            return cells[col[name]] if name else ""

        def bad(name, expected, value=None, number=number):
            return TraceFormatError(path, number, spelled[name], get(name) if value is None else value, expected)

        def whole(name, lo, hi, expected, text=None):
            # (text: a part of the field; the error shows the whole field)
            try:
                return parse_whole(get(name) if text is None else text, lo, hi, expected=expected)
            except ValueError:
                raise bad(name, expected) from None

        def count(name, lo, hi, expected, text):
            # a count as sacct prints it: 1K is 1,024 (exact units)
            text = text.strip()
            unit = _COUNT_UNIT.get(text[-1:].upper(), 0) if text[-1:].isalpha() else 1
            if not unit:
                raise bad(name, expected)
            value = whole(name, 0, hi, expected, text[:-1] if text[-1:].isalpha() else text) * unit
            if not lo <= value <= hi:
                raise bad(name, expected)
            return value

        jid = get(f_id)
        m = _JOBID.match(jid)
        if m is None:
            raise bad(f_id, _JOBID_HINT)
        job, element, pending, component, step = m.groups()
        if int(job) > _MAX_JOB_ID or int(component or 0) > _MAX_JOB_ID or int(element or 0) > _MAX_ARRAY_INDEX:
            raise bad(f_id, f"{_JOBID_HINT}, with job numbers up to {_MAX_JOB_ID:,} and array indexes up to "
                            f"{_MAX_ARRAY_INDEX:,}")
        if step is not None:
            info["steps"] += 1
            dropped["job_steps"] += 1
            continue
        part = get(f_part)
        if partition is not None and part != partition:
            dropped["other_partition"] += 1
            continue
        submit = _timestamp(get(f_submit))
        if submit is None or submit is False:
            raise bad(f_submit, "a time YYYY-MM-DDTHH:MM:SS")
        if (lo is not None and submit < lo) or (hi is not None and submit >= hi):
            dropped["outside_dates"] += 1
            continue
        if pending is not None:
            # elements of an array that had not started at the dump: counted, not expanded (they did not run)
            try:
                elements, throttle = _array_elements(pending)
            except ValueError:
                raise bad(f_id, f"{_JOBID_HINT}; array indexes from 0 to {_MAX_ARRAY_INDEX:,}, as 1-9, "
                                "1-3,5 or 0-15:4, with %N a limit") from None
            dropped["pending_array_records"] += 1
            info["pending_array_elements"] += elements
            info["pending_lists_cut_short"] += "..." in pending
            info["arrays"].add(int(job))
            if throttle is not None:
                info["array_throttles"].add(int(job))
            continue
        raw = whole(f_raw, 0, _MAX_JOB_ID, f"a whole job id from 0 to {_MAX_JOB_ID:,}") if f_raw else (
            int(job) if element is None and component is None else 0)
        state = get(f_state).split()[0].upper() if f_state and get(f_state) else "COMPLETED"
        if state not in STATUS:
            raise bad(f_state, f"a Slurm job state ({', '.join(STATUS)})")
        status = STATUS[state]
        started = _timestamp(get(f_start)) if f_start else submit
        if started is False:
            raise bad(f_start, "a time YYYY-MM-DDTHH:MM:SS or Unknown")
        if f_run == "elapsedraw":
            run = whole(f_run, 0, MAX_TIME, f"whole seconds from 0 to {MAX_TIME:,}")
        else:
            run = parse_duration_slurm(get(f_run))
            if run is None:
                raise bad(f_run, f"[D-]HH:MM:SS or MM:SS, at most {MAX_TIME:,} seconds")
        if status == -1:
            info["not_ended"] += 1
        elif started is None:
            info["never_started"] += 1
        elif run == 0:
            info["zero_length"] += 1
        if status == -1 or started is None:
            run = -1                       # not ended at the dump, or never started: no run time
        ran = started is not None and status != -1
        wait = started - submit if ran else -1
        req = -1
        if f_limit:
            text = get(f_limit)
            if text.upper() not in _NO_LIMIT:
                if f_limit == "timelimitraw":
                    req = whole(f_limit, 0, MAX_TIME // 60, f"whole minutes from 0 to {MAX_TIME // 60:,}, "
                                                                    "UNLIMITED or Partition_Limit") * 60
                else:
                    req = parse_duration_slurm(text)
                    if req is None:
                        if text.isascii() and text.isdigit():
                            req = whole(f_limit, 0, MAX_TIME // 60,
                                        f"[D-]HH:MM:SS, MM:SS or minutes from 0 to {MAX_TIME // 60:,}") * 60
                        else:
                            raise bad(f_limit, "[D-]HH:MM:SS, MM:SS, minutes, UNLIMITED or Partition_Limit, "
                                               f"at most {MAX_TIME:,} seconds")
        cpus = whole(f_cpus, 0, _MAX_COUNT, f"a whole number of processors from 0 to {_MAX_COUNT:,} "
                                                 "(pbf's largest cluster)")
        alloc = cpus
        if f_alloc and f_alloc != f_cpus and ran and get(f_alloc) not in _EMPTY:
            alloc = whole(f_alloc, 0, _MAX_COUNT, f"a whole number of processors from 0 to {_MAX_COUNT:,} "
                                                       "(pbf's largest cluster)") or cpus
        nodes_what = f"a whole number of nodes from 0 to {_MAX_COUNT:,} (1K: 1,024), or a range 2-4"
        nodes = nodes_max = -1
        if f_nodes and get(f_nodes):
            low, dash, high = get(f_nodes).partition("-")       # "2-4": a range
            nodes = count(f_nodes, 0, _MAX_COUNT, nodes_what, low)
            nodes_max = count(f_nodes, nodes, _MAX_COUNT, nodes_what, high) if dash else nodes

        # the submit line: --exclusive (modelled), dependencies and licenses (read), other options (counted)
        exclusive, depend, dep_targets, line_licenses = 0, 0, None, ""
        if f_line and get(f_line) not in _EMPTY:
            options = _submit_options(get(f_line))
            if options is None:
                info["submit_lines_other"] += 1
                options = ()
            for name, value in options:
                if name == "exclusive":
                    if value is None or value == "":
                        exclusive = 1
                    else:
                        info["exclusive_other"][f"--exclusive={value}"] += 1
                elif name == "dependency" and value:
                    kinds, dep_targets = _dependency(value)
                    if kinds:
                        info["dependencies"] += 1
                        info["dependency_kinds"].update(kinds)
                        depend = dep_kinds.of(",".join(sorted(set(kinds))))
                elif name == "licenses" and value:
                    line_licenses = value
                elif name == "array" and value and "%" in value:
                    info["array_throttles"].add(int(job))
                elif name not in _FROM_COLUMNS and name not in _NO_EFFECT:
                    info["options"][f"--{name}"] += 1
        whole_nodes = 0                 # the nodes Slurm gave a job that ran
        if ran and f_anodes and get(f_anodes) not in _EMPTY:
            whole_nodes = count(f_anodes, 0, _MAX_COUNT, nodes_what, get(f_anodes))
        if exclusive:
            info["exclusive"] += 1
            if whole_nodes > 0 and f_alloc and alloc > 0:
                # whole nodes: the CPUs Slurm gave it, on exactly the nodes it had
                info["exclusive_whole_nodes"] += 1
                cpus, nodes, nodes_max = alloc, whole_nodes, whole_nodes

        # GPUs: ReqTRES, else ReqGRES, else AllocTRES, else AllocGRES; each the job's total (Slurm 17.11
        # and 18.08 write ReqGRES as the count a node times the nodes), divided over the job's nodes
        gpus_total, types, lic_items, tres_mem, gres_total = None, [], [], None, None
        for f, key in ((f_tres, "ReqTRES"), (f_gres, "ReqGRES"), (f_atres, "AllocTRES"), (f_agres, "AllocGRES")):
            if not f or get(f) in _EMPTY:
                continue
            number = lambda text, expected, f=f: whole(f, 0, _MAX_GPUS, f"{expected} from 0 to {_MAX_GPUS:,}",  # noqa: E731
                                                       text)
            if key.endswith("TRES"):
                text = get(f)
                parsed = tres_seen.get(text)      # (a dump repeats its TRES strings: each is read once)
                if parsed is None:
                    parsed = tres_seen[text] = _tres(text, number)
                total, typed, licensed, mem_text, keys, others = parsed
                info["tres"][key].update(keys)
                if key == "ReqTRES":
                    lic_items, tres_mem = licensed, mem_text
            else:
                total, typed, others = _gres(get(f), info["gres_other"], key, number)
            gres_total = gres_total or others            # (other GRES, as GPUs: the first column naming any)
            if total is None and typed:
                total = sum(typed.values())
            if total is not None and total > _MAX_GPUS:
                raise bad(f, f"GPUs in all from 0 to {_MAX_GPUS:,}")
            if gpus_total is None and total is not None:
                gpus_total, types = total, sorted(t for t, n in typed.items() if n)
                if total:
                    info["gpu_jobs"][key] += 1
        gpus = -(-(gpus_total or 0) // max(nodes, 1))
        gres_text = _gres_per_node(gres_total, nodes, info["gres"])
        info["gpu_types"].update(types)

        cons = get(f_cons) if f_cons else ""
        cons = "" if cons in _EMPTY else cons
        mem = -1.0
        mem_core = mem_node = 0
        mem_text = get(f_mem) if f_mem else ""
        mem_field = f_mem
        if mem_text in _EMPTY and tres_mem:
            mem_text, mem_field = tres_mem, f_tres        # (ReqTRES mem=: the job's total)
        if mem_text not in _EMPTY and mem_text not in ("0", "0n", "0c"):
            m = _MEM.match(mem_text)
            kb = float(m.group(1)) * _MEM_KB[m.group(2)] if m else math.inf
            if m and m.group(3) == "" and nodes > 1:
                kb = kb / nodes                           # a bare value (Slurm >= 21.08) is the job's total
            if not kb <= MAX_NODE_MEMORY_MB * 1024:
                raise bad(mem_field, f"memory such as 4Gn, 2000Mc or 4G, at most {MAX_NODE_MEMORY_MB:,} MB "
                                     "(a node or a CPU)")
            per_cpu = m.group(3) == "c"
            mem = kb if per_cpu else kb * max(nodes, 1) / max(cpus, 1)
            if per_cpu:
                mem_core = -(-int(kb) // 1024)
            else:
                mem_node = -(-int(kb) // 1024)

        lic_text = get(f_lic) if f_lic else ""
        lic_text = "" if lic_text in _EMPTY else lic_text
        lic_text = lic_text or ",".join(lic_items) or line_licenses
        if lic_text:
            info["licenses"].update(x.split(":")[0].split("@")[0].strip() for x in re.split(r"[,|]", lic_text)
                                    if x.strip())
        reason = get(f_reason) if f_reason else ""
        reason = "" if reason in _EMPTY else reason
        if reason:
            info["reasons"][reason] += 1
        flags = get(f_flags) if f_flags else ""
        flags = "" if flags in _EMPTY else flags
        if flags:
            info["flags"].update(x.strip() for x in flags.split(",") if x.strip())
        if element is not None:
            info["array_elements"] += 1
            info["arrays"].add(int(job))
        if component is not None:
            info["het_components"] += 1
            info["het_jobs"].add(int(job))

        index = len(recs) // _FIELDS_A_JOB
        if element is not None and f_line:
            element_ids.setdefault(jid, index)    # (a dependency may name an element: afterok:123_4)
        if dep_targets:
            depends[index] = dep_targets
        user, group, q = get(f_user), get(f_group), get(f_qos)
        resv = "" if not f_resv or get(f_resv) in _EMPTY else get(f_resv)
        if resv:
            resv_at.setdefault(resv, number)
        recs.extend((submit, wait, run, cpus, mem, req, status, users.setdefault(user, len(users) + 1),
                     groups.setdefault(group, len(groups) + 1) if f_group else -1,
                     qoss.setdefault(q, len(qoss) + 1) if f_qos else -1,
                     parts.setdefault(part, len(parts) + 1) if f_part else -1,
                     mem_core, mem_node, gpus, max(nodes, 1), max(nodes_max, 0), constraints.of(cons),
                     max(alloc, cpus) if exclusive else alloc, gpu_types.of(",".join(types)), licenses.of(lic_text),
                     reasons.of(reason), flag_sets.of(flags), exclusive, raw, int(job) if element is not None else 0,
                     int(job) if component is not None else 0, depend,
                     accounts.of("" if not f_acct or get(f_acct) in _EMPTY else get(f_acct)), resvs.of(resv),
                     gres_kinds.of(gres_text)))
        info["records"] += 1
    if in_buffer:
        empties += _tally(pending_flags, in_buffer)
        seen_lines += in_buffer

    n = len(recs) // _FIELDS_A_JOB
    a = np.frombuffer(recs, dtype=np.float64).reshape(n, _FIELDS_A_JOB)
    order = np.argsort(a[:, 0], kind="stable")
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(1, n + 1)
    prev = _parents(a, depends, element_ids, rank, info)
    a = a[order]
    prev = prev[order]
    absolute = a[:, 0].astype(np.int64)
    origin = int(absolute[0]) if n else 0
    submit = absolute - origin             # SWF: seconds from the log's start (UnixStartTime)
    if pack_days is not None and n:
        submit = (np.arange(1, n + 1) * (pack_days * 86400.0 / n)).astype(np.int64)
    header = SwfHeader()
    header.add_line(f" Converted from the Slurm accounting dump {os.path.basename(path)} by pbf")
    if n:
        header.add_line(f" UnixStartTime: {origin}")
    for name, table in (("Partition", parts), ("Queue", qoss), ("Constraint", constraints), ("GpuType", gpu_types),
                        ("Licenses", licenses), ("Dependency", dep_kinds), ("Reason", reasons), ("Flags", flag_sets),
                        ("Account", accounts), ("Reservation", resvs), ("Gres", gres_kinds)):
        for label, number in table.items():
            if label or name in ("Partition", "Queue"):
                header.add_line(f" {name}: {number} {label or '(none)'}")
    for label, number in users.items():
        if label:
            header.add_line(f" User: {number} {label}")
    j = {name: k for k, name in enumerate(_R)}
    as_int = lambda name: a[:, j[name]].astype(np.int64)  # noqa: E731
    extra = ("mem_core_mb", "mem_node_mb", "gpus", "nodes_min", "nodes_max", "constraint", "gpu_type", "licenses",
             "dependency", "reason", "flags", "exclusive", "slurm_id", "array_job", "het_job", "account",
             "reservation", "gres")
    table = JobTable.from_arrays(
        header=header, job_id=np.arange(1, n + 1, dtype=np.int64), submit=submit, wait=as_int("wait"),
        run=as_int("run"), alloc_procs=as_int("alloc_procs"), req_procs=as_int("req_procs"),
        req_time=as_int("req_time"), req_mem=a[:, j["req_mem"]], status=as_int("status"), user=as_int("user"),
        group=as_int("group"), queue=as_int("queue"), partition=as_int("partition"), prev_job=prev,
        **{name: as_int(name) for name in extra})
    table.source = path
    table.dropped = dropped
    table.reservation_lines = {name: (resv_at[name], resvs[name]) for name in resvs}
    table.sacct = _summary(info, names, col, spelled, used, read_only, empties, seen_lines)
    return table

