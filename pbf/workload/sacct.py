"""Slurm accounting records (``sacct --parsable2``) as a job table.

A dump is ``|``-separated with a header line of field names, in any order and any case (tools
lower-case Slurm's headers; a field pbf reads may be named once only). Needed: ``JobID`` (or
``JobIDRaw``), ``Submit``, a run time (``ElapsedRaw`` seconds, else ``Elapsed``), and processors
(``ReqCPUS``, else ``AllocCPUS``/``NCPUS``). Used when present: ``Start``, ``TimelimitRaw`` (minutes)
or ``Timelimit``, ``ReqNodes``/``NNodes``, ``ReqMem``, ``State``, ``User``/``UID``, ``Group``/``GID``,
``Partition``, ``QOS``, ``Account``, ``ReqTRES`` (else ``AllocTRES``: ``gres/gpu=N``, the job's GPUs)
and ``Constraints`` (required features, ``a&b``).

The rules (those of the Parallel Backfill authors' trace generator, and of SWF):

* Numbers are ASCII digits within what pbf's core takes: times and durations up to
  :data:`pbf.bounded.MAX_TIME`, processors and nodes up to :data:`pbf.node.MAX_UNITS`, memory up to
  :data:`pbf.node.MAX_NODE_MEMORY_MB` (a node or a CPU). A value outside is a
  :class:`~pbf.errors.TraceFormatError` naming the line, the field as the header spells it, the value
  and the range, as a malformed value is: the dump is refused, no job is left out silently.
* A gzip dump is decompressed as it is read; a truncated or corrupt one is refused with the line
  where its data stops.
* Job steps (ids with ``.``) and array elements (ids with ``_``) are dropped, and counted.
* Times: ``Submit``/``Start`` are ``YYYY-MM-DDTHH:MM:SS`` (UTC is assumed) or ``Unknown``/``None``;
  durations are ``[D-]HH:MM:SS``, ``MM:SS`` or ``MM:SS.mmm``; limits may also be ``UNLIMITED``,
  ``Partition_Limit`` or ``Unknown`` (no requested time: -1), and ``TimelimitRaw`` is in minutes.
* State -> SWF status: ``COMPLETED`` 1; ``FAILED``, ``TIMEOUT``, ``NODE_FAIL``, ``OUT_OF_MEMORY``,
  ``BOOT_FAIL``, ``DEADLINE``, ``PREEMPTED`` 0 (failed: the run time is what the job got);
  ``CANCELLED`` (also ``CANCELLED by N``) 5; ``PENDING``, ``RUNNING``, ``REQUEUED``,
  ``SUSPENDED``, ``RESIZING`` -1 with no run time (the job had not ended when the dump was taken;
  cleaning drops it as "run time <= 0"). A job that never started (no ``Start``) has no run time.
* Requested memory (``ReqMem``: ``4Gn`` per node, ``2Gc`` per CPU, ``K``/``M``/``G``/``T``;
  a bare ``4G`` is read as per node) -> SWF field 10, KB per processor.
* What a job asks of the nodes (used on a cluster of nodes, ``pbf replay --cluster``): memory per
  CPU (``Mc``) or per node (``Mn``, bare) in MB (columns ``mem_core_mb``, ``mem_node_mb``), nodes
  (``ReqNodes``: ``2`` or ``2-4``; columns ``nodes_min``, ``nodes_max``), GPUs per node (``gres/gpu=N``
  of ``ReqTRES``, divided over the nodes, rounded up; column ``gpus``) and features (``Constraints``;
  column ``constraint``: a number whose legend is in the header, ``; Constraint: 1 elves&ib``).
* Partition and QOS names -> SWF fields 16 (partition) and 15 (queue), numbered from 1 in order of
  first appearance; the header keeps the legend (``; Partition: 1 normal``, ``; Queue: 1 normal``),
  so the multifactor priority's ``--mf-partition`` / ``--mf-qos`` can name them by number.
* Jobs are sorted by submit time (stable) and numbered from 1; submit times count from the first
  (its epoch time is the header's ``UnixStartTime``); user and group names become numbers from 1
  in order of first appearance.
* ``partition``: keep one partition; ``since`` / ``until``: keep submits in [since, until);
  ``pack_days``: re-space the submits evenly over that many days from the first (the authors'
  "pack N": ``submit_k = k * N days / jobs`` from the first, k = 1..jobs).
"""
from __future__ import annotations

import calendar
import math
import numbers
import os
import re
import time
from array import array

import numpy as np

from ..bounded import MAX_TIME, parse_whole
from ..errors import ConfigError, TraceFormatError
from ..node import MAX_NODE_MEMORY_MB, MAX_UNITS
from .files import head_text, text_lines
from .jobs import JobTable, SwfHeader

__all__ = ["read_sacct", "is_sacct", "parse_duration_slurm", "STATUS"]

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
_TIME = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}$")
#: the most processors or nodes a job may ask (pbf's largest cluster, :data:`pbf.node.MAX_UNITS`)
_MAX_COUNT = MAX_UNITS
#: the most GPUs a job may ask in all (Slurm counts them in 32 bits)
_MAX_GPUS = (1 << 32) - 1
_FIELDS_A_JOB = 17
_HEADER_HINT = "a sacct --parsable2 header line (JobID|Submit|...)"


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
    if not _TIME.match(text):
        return False
    try:
        return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
    except (ValueError, OverflowError):
        return False


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
    """Read a ``sacct --parsable2`` dump into a raw :class:`JobTable` (SWF columns; clean it as an
    SWF table). The table's ``dropped`` dict counts the records left out and why. A value out of
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
    f_submit = need("Submit")
    f_run = need("ElapsedRaw", "Elapsed")
    f_cpus = need("ReqCPUS", "AllocCPUS", "NCPUS")
    f_start, f_limit = opt("Start"), opt("TimelimitRaw", "Timelimit")
    f_nodes, f_mem, f_state = opt("ReqNodes", "NNodes"), opt("ReqMem"), opt("State")
    f_user, f_group = opt("User", "UID"), opt("Group", "GID")
    f_part, f_qos = opt("Partition"), opt("QOS")
    f_tres, f_cons = opt("ReqTRES", "AllocTRES"), opt("Constraints")
    used = [f for f in (f_id, f_submit, f_run, f_cpus, f_start, f_limit, f_nodes, f_mem, f_state, f_user, f_group,
                        f_part, f_qos, f_tres, f_cons) if f is not None]
    for f in used:
        if f in twice:
            where = [str(i + 1) for i, n in enumerate(names) if n.lower() == f]
            raise TraceFormatError(path, start, None, header[:80],
                                   f"a header naming each field once ({names[col[f]]} is in columns "
                                   f"{', '.join(where)})")
    spelled = {f: names[col[f]] for f in used}      # errors name a field as the header spells it

    constraints = {}
    dropped = {"job_steps": 0, "array_elements": 0, "other_partition": 0, "outside_dates": 0}
    recs, users, groups, parts, qoss = array("d"), {}, {}, {}, {}
    for number, line in lines:
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) != len(names):
            raise TraceFormatError(path, number, None, line[:80],
                                   f"{len(names)} |-separated fields as in the header")

        def get(name, cells=cells):
            return cells[col[name]].strip() if name else ""

        def bad(name, expected, value=None, number=number):
            return TraceFormatError(path, number, spelled[name], get(name) if value is None else value, expected)

        def whole(name, lo, hi, expected, text=None):
            # (text: a part of the field; the error shows the whole field)
            try:
                return parse_whole(get(name) if text is None else text, lo, hi)
            except ValueError:
                raise bad(name, expected) from None

        jid = get(f_id)
        if "." in jid:
            dropped["job_steps"] += 1
            continue
        if "_" in jid:
            dropped["array_elements"] += 1
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
        if status == -1 or started is None:
            run = -1                       # not ended at the dump, or never started: no run time
        wait = started - submit if started is not None and status != -1 else -1
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
        nodes = nodes_max = -1
        if f_nodes and get(f_nodes):
            low, dash, high = get(f_nodes).partition("-")       # "2-4": a range
            what = f"a whole number of nodes from 0 to {_MAX_COUNT:,}, or a range 2-4"
            nodes = whole(f_nodes, 0, _MAX_COUNT, what, low)
            nodes_max = whole(f_nodes, nodes, _MAX_COUNT, what, high) if dash else nodes
        gpus = 0
        if f_tres and get(f_tres):
            for item in get(f_tres).split(","):
                key, _, value = item.partition("=")
                if key.strip() == "gres/gpu":       # (typed gres/gpu:a100=N repeat the total)
                    total = whole(f_tres, 0, _MAX_GPUS,
                                  f"gres/gpu=N with N a whole number of GPUs from 0 to {_MAX_GPUS:,}", value)
                    gpus = -(-total // max(nodes, 1))
        cons = get(f_cons) if f_cons else ""
        cons = "" if cons in ("(null)", "None") else cons
        cons_id = constraints.setdefault(cons, len(constraints) + 1) if cons else 0
        mem = -1.0
        mem_core = mem_node = 0
        if f_mem and get(f_mem) and get(f_mem) not in ("0", "0n", "0c"):
            m = _MEM.match(get(f_mem))
            kb = float(m.group(1)) * _MEM_KB[m.group(2)] if m else math.inf
            if not kb <= MAX_NODE_MEMORY_MB * 1024:
                raise bad(f_mem, f"memory such as 4Gn, 2000Mc or 4G, at most {MAX_NODE_MEMORY_MB:,} MB "
                                 "(a node or a CPU)")
            per_cpu = m.group(3) == "c"
            mem = kb if per_cpu else kb * max(nodes, 1) / max(cpus, 1)
            if per_cpu:
                mem_core = -(-int(kb) // 1024)
            else:
                mem_node = -(-int(kb) // 1024)
        user, group, q = get(f_user), get(f_group), get(f_qos)
        recs.extend((submit, wait, run, cpus, mem, req, status, users.setdefault(user, len(users) + 1),
                     groups.setdefault(group, len(groups) + 1) if f_group else -1,
                     qoss.setdefault(q, len(qoss) + 1) if f_qos else -1,
                     parts.setdefault(part, len(parts) + 1) if f_part else -1,
                     mem_core, mem_node, gpus, max(nodes, 1), max(nodes_max, 0), cons_id))
    n = len(recs) // _FIELDS_A_JOB
    a = np.frombuffer(recs, dtype=np.float64).reshape(n, _FIELDS_A_JOB)
    order = np.argsort(a[:, 0], kind="stable")
    a = a[order]
    absolute = a[:, 0].astype(np.int64)
    origin = int(absolute[0]) if n else 0
    submit = absolute - origin             # SWF: seconds from the log's start (UnixStartTime)
    if pack_days is not None and n:
        submit = (np.arange(1, n + 1) * (pack_days * 86400.0 / n)).astype(np.int64)
    header = SwfHeader()
    header.add_line(f" Converted from the Slurm accounting dump {os.path.basename(path)} by pbf")
    if n:
        header.add_line(f" UnixStartTime: {origin}")
    for name, table in (("Partition", parts), ("Queue", qoss)):
        for label, number in table.items():
            header.add_line(f" {name}: {number} {label or '(none)'}")
    for label, number in constraints.items():
        header.add_line(f" Constraint: {number} {label}")
    for label, number in users.items():
        if label:
            header.add_line(f" User: {number} {label}")
    as_int = lambda j: a[:, j].astype(np.int64)  # noqa: E731
    table = JobTable.from_arrays(
        header=header, job_id=np.arange(1, n + 1, dtype=np.int64), submit=submit, wait=as_int(1), run=as_int(2),
        alloc_procs=as_int(3), req_procs=as_int(3), req_time=as_int(5), req_mem=a[:, 4], status=as_int(6),
        user=as_int(7), group=as_int(8), queue=as_int(9), partition=as_int(10),
        mem_core_mb=as_int(11), mem_node_mb=as_int(12), gpus=as_int(13), nodes_min=as_int(14), nodes_max=as_int(15),
        constraint=as_int(16))
    table.source = path
    table.dropped = dropped
    return table

