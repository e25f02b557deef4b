"""Write a job table as a Slurm accounting dump (``sacct --parsable2``), the form that carries what SWF
cannot: GPUs, memory per core or per node, node counts and features. :func:`pbf.workload.read_swf`
(and so ``pbf replay``) reads it back (:mod:`pbf.workload.sacct`).

Fields: ``JobID|User|Partition|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|ReqTRES|
State|Constraints``. Times are UTC from the header's ``UnixStartTime`` (else 0); ``Start`` is the
table's submit plus its wait (a workload's own wait, or none: the scheduler replayed decides);
``TimelimitRaw`` is the requested time in whole minutes, rounded up, as Slurm keeps limits;
``ReqMem`` is ``NMc`` (per CPU) or ``NMn`` (per node), ``ReqTRES`` carries ``gres/gpu`` (the job's
total, which is GPUs per node only for one-node jobs: GPU jobs must be one-node jobs), ``ReqNodes``
is ``N`` or ``N-M`` when the table bounds the nodes (empty: any; sacct has no "at least N", so a
lower bound alone is written as ``N``).
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..errors import ConfigError
from .jobs import JobTable

__all__ = ["write_sacct"]

FIELDS = ("JobID", "User", "Partition", "Submit", "Start", "ElapsedRaw", "TimelimitRaw", "ReqCPUS", "ReqNodes",
          "ReqMem", "ReqTRES", "State", "Constraints")


def _iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(t)))


def write_sacct(table: JobTable, path: str | os.PathLike) -> None:
    """Write ``table`` as a ``sacct --parsable2`` dump at ``path`` (written beside and renamed: an
    interrupted write never leaves half a dump)."""
    cols = table.columns
    n = len(table)
    zeros = np.zeros(n, dtype=np.int64)
    mem_core = np.asarray(cols.get("mem_core_mb", np.ceil(np.maximum(table.req_mem, 0) / 1024)), dtype=np.int64)
    mem_node = np.asarray(cols.get("mem_node_mb", zeros), dtype=np.int64)
    gpus = np.asarray(cols.get("gpus", zeros), dtype=np.int64)
    lo = np.asarray(cols.get("nodes_min", np.ones(n, dtype=np.int64)), dtype=np.int64)
    hi = np.asarray(cols.get("nodes_max", zeros), dtype=np.int64)
    if ((gpus > 0) & (hi != 1)).any():
        raise ConfigError("write_sacct: a job with GPUs on more than one node; sacct records a job's GPUs in "
                          "all, so only one-node GPU jobs can be written")
    feats = getattr(table, "__dict__", {}).get("features") or [""] * n
    epoch = table.header.unix_start_time or 0
    wait = np.where(table.wait >= 0, table.wait, 0)
    lines = ["|".join(FIELDS)]
    for i in range(n):
        cores = int(table.req_procs[i]) if table.req_procs[i] > 0 else int(table.alloc_procs[i])
        req = int(table.req_time[i])
        run = int(table.run[i])
        mem = f"{mem_node[i]}Mn" if mem_node[i] > 0 else f"{mem_core[i]}Mc"
        held = mem_node[i] * max(lo[i], 1) if mem_node[i] > 0 else mem_core[i] * cores
        tres = (f"billing={cores},cpu={cores},mem={held}M,node={max(lo[i], 1)}"
                + (f",gres/gpu={gpus[i]}" if gpus[i] else ""))
        # (sacct has no "at least N": a lower bound alone is written as N, which reads back as exactly N)
        nodes = "" if lo[i] <= 1 and hi[i] == 0 else (f"{lo[i]}" if hi[i] in (0, lo[i]) else f"{lo[i]}-{hi[i]}")
        state = "TIMEOUT" if 0 < req <= run else "COMPLETED"
        submit = epoch + int(table.submit[i])
        lines.append("|".join((str(int(table.job_id[i])), f"u{int(table.user[i])}", "normal", _iso(submit),
                               _iso(submit + int(wait[i])), str(run), str(-(-req // 60)) if req > 0 else "UNLIMITED",
                               str(cores), nodes, mem, tres, state, str(feats[i] or ""))))
    path = os.fspath(path)
    tmp = path + ".part"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except OSError as exc:          # (named by the file asked for, not the .part beside it)
        raise OSError(exc.errno, exc.strerror, path) from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
