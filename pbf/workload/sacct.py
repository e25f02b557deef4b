"""Slurm accounting records (``sacct --parsable2``) as a job table.

A dump is ``|``-separated with a header line of field names, in any order. Needed: ``JobID`` (or
``JobIDRaw``), ``Submit``, a run time (``ElapsedRaw`` seconds, else ``Elapsed``), and processors
(``ReqCPUS``, else ``AllocCPUS``/``NCPUS``). Used when present: ``Start``, ``TimelimitRaw`` (minutes)
or ``Timelimit``, ``ReqNodes``/``NNodes``, ``ReqMem``, ``State``, ``User``/``UID``, ``Group``/``GID``,
``Partition``, ``QOS``, ``Account``, ``ReqTRES`` (else ``AllocTRES``: ``gres/gpu=N``, the job's GPUs)
and ``Constraints`` (required features, ``a&b``).

The rules (those of the Parallel Backfill authors' trace generator, and of SWF):

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
import os
import re
import time
import zlib

import numpy as np

from ..errors import ConfigError, TraceFormatError
from .files import open_trace
from .jobs import JobTable, SwfHeader

__all__ = ["read_sacct", "is_sacct", "parse_duration_slurm", "STATUS"]

_FAILED = ("FAILED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "PREEMPTED")
_UNFINISHED = ("PENDING", "RUNNING", "REQUEUED", "SUSPENDED", "RESIZING", "REVOKED", "REQUEUE_FED",
               "REQUEUE_HOLD", "SPECIAL_EXIT", "STOPPED")
#: SWF status of each Slurm state
STATUS = {"COMPLETED": 1, "CANCELLED": 5, **{s: 0 for s in _FAILED}, **{s: -1 for s in _UNFINISHED}}
_NO_LIMIT = ("UNLIMITED", "PARTITION_LIMIT", "UNKNOWN", "INVALID", "")
_DURATION = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)(?:\.(\d+))?$")
_MEM = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)([nc]?)$")
_MEM_KB = {"": 1024, "K": 1, "M": 1024, "G": 1024 ** 2, "T": 1024 ** 3}   # bare numbers are MB (Slurm)


def is_sacct(path: str | os.PathLike) -> bool:
    """Whether the file (plain or gzip) starts with a ``sacct --parsable2`` header line."""
    try:
        with open_trace(path) as fh:
            for raw in fh:
                line = raw.decode("utf-8", "replace").strip()
                if line:
                    names = line.split("|")
                    return len(names) > 2 and ("JobID" in names or "JobIDRaw" in names)
    except (OSError, EOFError, zlib.error):
        return False                   # unreadable: the SWF reader says what is wrong with it
    return False


def parse_duration_slurm(text: str) -> int | None:
    """Seconds of a Slurm duration (``[D-]HH:MM:SS``, ``MM:SS``, ``MM:SS.mmm``); None if it is not one."""
    m = _DURATION.match(text.strip())
    if not m:
        return None
    d, h, mi, s, _ = m.groups()
    if h is None:                       # MM:SS
        return int(mi) * 60 + int(s)
    return int(d or 0) * 86400 + int(h) * 3600 + int(mi) * 60 + int(s)


def _timestamp(text):
    text = text.strip()
    if text.upper() in ("UNKNOWN", "NONE", ""):
        return None
    try:
        return calendar.timegm(time.strptime(text, "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return False


def _since(value, what):
    if value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value)
    for fmt in ("%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"):
        try:
            return calendar.timegm(time.strptime(str(value), fmt))
        except ValueError:
            continue
    raise ConfigError(f"{what} {value!r}: expected YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS")


def read_sacct(path: str | os.PathLike, *, partition: str | None = None, since: str | int | None = None,
               until: str | int | None = None, pack_days: float | None = None) -> JobTable:
    """Read a ``sacct --parsable2`` dump into a raw :class:`JobTable` (SWF columns; clean it as an
    SWF table). The table's ``dropped`` dict counts the records left out and why."""
    path = os.fspath(path)
    lo, hi = _since(since, "since"), _since(until, "until")
    if pack_days is not None and not (isinstance(pack_days, (int, float)) and pack_days > 0):
        raise ConfigError(f"pack {pack_days!r}: expected a number of days > 0")
    with open_trace(path) as fh:
        lines = fh.read().decode("utf-8", "replace").splitlines()
    start = next((i for i, x in enumerate(lines) if x.strip()), None)
    if start is None:
        raise TraceFormatError(path, 1, None, "", "a sacct --parsable2 header line (JobID|Submit|...)")
    names = [n.strip() for n in lines[start].split("|")]
    col = {n: i for i, n in enumerate(names)}

    def need(*options):
        for o in options:
            if o in col:
                return o
        raise TraceFormatError(path, start + 1, None, lines[start][:80],
                               f"a header with {' or '.join(options)} (sacct --parsable2 --format=...)")
    f_id = need("JobID", "JobIDRaw")
    f_submit = need("Submit")
    f_run = need("ElapsedRaw", "Elapsed")
    f_cpus = need("ReqCPUS", "AllocCPUS", "NCPUS")
    opt = lambda *options: next((o for o in options if o in col), None)  # noqa: E731
    f_start, f_limit = opt("Start"), opt("TimelimitRaw", "Timelimit")
    f_nodes, f_mem, f_state = opt("ReqNodes", "NNodes"), opt("ReqMem"), opt("State")
    f_user, f_group = opt("User", "UID"), opt("Group", "GID")
    f_part, f_qos = opt("Partition"), opt("QOS")
    f_tres, f_cons = opt("ReqTRES", "AllocTRES"), opt("Constraints")
    constraints = {}
    dropped = {"job_steps": 0, "array_elements": 0, "other_partition": 0, "outside_dates": 0}
    recs, users, groups, parts, qoss = [], {}, {}, {}, {}
    for k in range(start + 1, len(lines)):
        line = lines[k]
        if not line.strip():
            continue
        cells = line.split("|")
        if len(cells) != len(names):
            raise TraceFormatError(path, k + 1, None, line[:80], f"{len(names)} |-separated fields as in the header")
        def get(name, cells=cells):
            return cells[col[name]].strip() if name else ""
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
            raise TraceFormatError(path, k + 1, f_submit, get(f_submit), "a time YYYY-MM-DDTHH:MM:SS")
        if (lo is not None and submit < lo) or (hi is not None and submit >= hi):
            dropped["outside_dates"] += 1
            continue
        state = get(f_state).split()[0].upper() if f_state and get(f_state) else "COMPLETED"
        if state not in STATUS:
            raise TraceFormatError(path, k + 1, f_state, get(f_state), f"a Slurm job state ({', '.join(STATUS)})")
        status = STATUS[state]
        started = _timestamp(get(f_start)) if f_start else submit
        if started is False:
            raise TraceFormatError(path, k + 1, f_start, get(f_start), "a time YYYY-MM-DDTHH:MM:SS or Unknown")
        raw_run = get(f_run)
        if f_run == "ElapsedRaw":
            if not raw_run.isdigit():
                raise TraceFormatError(path, k + 1, f_run, raw_run, "whole seconds")
            run = int(raw_run)
        else:
            run = parse_duration_slurm(raw_run)
            if run is None:
                raise TraceFormatError(path, k + 1, f_run, raw_run, "[D-]HH:MM:SS or MM:SS")
        if status == -1 or started is None:
            run = -1                       # not ended at the dump, or never started: no run time
        wait = started - submit if started not in (None, False) and status != -1 else -1
        req = -1
        if f_limit:
            text = get(f_limit)
            if text.upper() not in _NO_LIMIT:
                if f_limit == "TimelimitRaw":
                    if not text.isdigit():
                        raise TraceFormatError(path, k + 1, f_limit, text,
                                               "whole minutes, UNLIMITED or Partition_Limit")
                    req = int(text) * 60
                else:
                    req = parse_duration_slurm(text)
                    if req is None:
                        if text.isdigit():
                            req = int(text) * 60           # a bare number of minutes
                        else:
                            raise TraceFormatError(path, k + 1, f_limit, text,
                                                   "[D-]HH:MM:SS, MM:SS, minutes, UNLIMITED or Partition_Limit")
        cpus_text = get(f_cpus)
        if not cpus_text.isdigit():
            raise TraceFormatError(path, k + 1, f_cpus, cpus_text, "a whole number of processors")
        cpus = int(cpus_text)
        nodes = nodes_max = -1
        if f_nodes and get(f_nodes):
            low, _, high = get(f_nodes).partition("-")       # "2-4": a range
            if not low.isdigit() or (high and not high.isdigit()):
                raise TraceFormatError(path, k + 1, f_nodes, get(f_nodes), "a whole number of nodes, or a range 2-4")
            nodes = int(low)
            nodes_max = int(high) if high else nodes
        gpus = 0
        if f_tres and get(f_tres):
            for item in get(f_tres).split(","):
                key, _, value = item.partition("=")
                if key.strip() == "gres/gpu":       # (typed gres/gpu:a100=N repeat the total)
                    if not value.strip().isdigit():
                        raise TraceFormatError(path, k + 1, f_tres, get(f_tres), "gres/gpu=N with N whole")
                    gpus = -(-int(value) // max(nodes, 1))
        cons = get(f_cons) if f_cons else ""
        cons = "" if cons in ("(null)", "None") else cons
        cons_id = constraints.setdefault(cons, len(constraints) + 1) if cons else 0
        mem = -1.0
        mem_core = mem_node = 0
        if f_mem and get(f_mem) and get(f_mem) not in ("0", "0n", "0c"):
            m = _MEM.match(get(f_mem))
            if not m:
                raise TraceFormatError(path, k + 1, f_mem, get(f_mem), "memory such as 4Gn, 2000Mc or 4G")
            kb = float(m.group(1)) * _MEM_KB[m.group(2)]
            per_cpu = m.group(3) == "c"
            mem = kb if per_cpu else kb * max(nodes, 1) / max(cpus, 1)
            if per_cpu:
                mem_core = -(-int(kb) // 1024)
            else:
                mem_node = -(-int(kb) // 1024)
        user, group, q = get(f_user), get(f_group), get(f_qos)
        recs.append((submit, wait, run, cpus, mem, req, status, users.setdefault(user, len(users) + 1),
                     groups.setdefault(group, len(groups) + 1) if f_group else -1,
                     qoss.setdefault(q, len(qoss) + 1) if f_qos else -1,
                     parts.setdefault(part, len(parts) + 1) if f_part else -1,
                     mem_core, mem_node, gpus, max(nodes, 1), max(nodes_max, 0), cons_id))
    n = len(recs)
    a = np.array(recs, dtype=np.float64).reshape(n, 17)
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

