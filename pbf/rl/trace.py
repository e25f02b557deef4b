"""Jobs as the learned-policy environments see them: arrays per job plus the static features.

Two loading rules (``docs/rl.md``):

``compat=True`` (RLScheduler's ``job.py``): processors = max(requested, allocated); a missing
requested time (-1) becomes the run time; a negative run time becomes 10 s; jobs with run time 0
are dropped; jobs are sorted by id; the normalisers (largest run time, memory, user, group,
executable) are taken over every record, dropped ones included; the requested-time feature is
divided by the largest *run* time.

``compat="rlbackfilling"`` (RLBackfilling's ``Job``/``Workloads``): as RLScheduler's, except that
the requested time is raised to the run time when it is missing *or smaller*, and processors
beyond ``MaxProcs`` are cut to it (so no job is ever too large).

``compat=False`` (pbf's): the trace is cleaned by :class:`pbf.Cleaning` (run time <= 0 dropped, run
time cut to the requested time, a trace without requested times gets its run times), jobs stay in
submit order, and the requested-time feature is divided by the largest requested time.

In both, the cluster is ``MaxProcs`` processors (else ``MaxNodes``) in ``MaxNodes`` nodes, a job
needs ``ceil(processors / processors-per-node)`` nodes, and a job larger than the cluster is
dropped (counted in ``dropped_oversize``; RLScheduler would wait for it forever).
"""
from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..errors import ConfigError
from ..workload import Cleaning, read_swf

__all__ = ["RLTrace"]

_EPS = 1e-5
_NORM_KEYS = ("req", "mem", "user", "group", "exe")


def _norm(values, top):
    # RLScheduler: x / max, clipped below 1; a missing value (-1) reads as 1
    out = np.ones(len(values), dtype=np.float64)
    given = values != -1
    if top > 0:
        out[given] = np.minimum(values[given] / float(top), 1.0 - _EPS)
    return out


@dataclass
class RLTrace:
    """A trace ready for the environments (all arrays indexed by job, in episode order)."""
    name: str
    compat: bool
    submit: np.ndarray
    run: np.ndarray
    req: np.ndarray
    procs: np.ndarray
    nodes: np.ndarray
    user: np.ndarray
    features: np.ndarray           # (jobs, 8) float32; columns 1-6 static, 0 and 7 made per step
    total_nodes: int
    max_procs: int
    procs_per_node: float
    job_id: np.ndarray
    dropped: dict = field(default_factory=dict)
    norm: dict = field(default_factory=dict)     # the feature normalisers used
    loader: str = "pbf"                          # "pbf", "rlscheduler" or "rlbackfilling"

    def __len__(self):
        return len(self.submit)

    @classmethod
    def load(cls, path: str | os.PathLike, *, compat: bool | str = False, procs: int | None = None,
             nodes: int | None = None, norm: Mapping[str, float] | None = None) -> RLTrace:
        """Read an SWF trace. ``compat``: False (pbf's cleaning), True or ``"rlscheduler"``, or
        ``"rlbackfilling"``. ``procs`` / ``nodes`` override the header's MaxProcs / MaxNodes.

        ``norm``: the feature normalisers to use instead of this trace's own (the ``norm`` of another
        :class:`RLTrace`: keys ``req``, ``mem``, ``user``, ``group``, ``exe``), so that a sample drawn
        from a trace's workload model shows a job's features as the trace a model was trained on does.
        """
        if compat not in (False, True, "rlscheduler", "rlbackfilling"):
            raise ConfigError(f"compat={compat!r}: expected False, True, 'rlscheduler' or 'rlbackfilling'")
        if norm is not None:
            missing = [k for k in _NORM_KEYS if k not in norm]
            if missing or not float(norm["req"]) > 0:
                raise ConfigError(f"norm: expected a positive 'req' and the keys {', '.join(_NORM_KEYS)}, "
                                  f"got {dict(norm)!r}")
        backfilling = compat == "rlbackfilling"
        loader = "rlbackfilling" if backfilling else ("rlscheduler" if compat else "pbf")
        compat = bool(compat)
        table = read_swf(path, None if compat else Cleaning(), sort=True)
        header = table.header
        max_nodes = nodes or header.max_nodes or header.max_procs
        max_procs = procs or header.max_procs or max_nodes
        if not max_nodes or not max_procs or max_nodes <= 0 or max_procs <= 0:
            raise ConfigError(f"{path}: the header gives neither MaxProcs nor MaxNodes; pass procs= (and nodes=)")
        ppn = float(max_procs) / float(max_nodes)
        name = os.path.basename(str(path)).split(".swf")[0]
        c = table.columns
        procs_col = np.maximum(c["req_procs"], c["alloc_procs"]).astype(np.int64)
        run = c["run"].astype(np.int64)
        req = c["req_time"].astype(np.int64)
        dropped = {}
        if backfilling:
            req = np.where((req == -1) | (req < run), run, req)
            procs_col = np.minimum(procs_col, max_procs)
        if compat:
            req = np.where(req == -1, run, req)
            max_exec = int(run.max()) if len(run) else 0
            top = {k: (float(c[f].max()) if len(run) else 0.0)
                   for k, f in (("mem", "req_mem"), ("user", "user"), ("group", "group"), ("exe", "executable"))}
            run = np.where(run < 0, 10, run)
            keep = run > 0
            dropped["nonpositive_runtime"] = int((~keep).sum())
            order = np.argsort(c["job_id"], kind="stable")
        else:
            keep = np.ones(len(run), dtype=bool)
            for k, v in table.report.as_dict().items():
                if k.startswith("dropped_") and v:
                    dropped[k[len("dropped_"):]] = v
            order = np.arange(len(run))
        need = np.ceil(procs_col / ppn).astype(np.int64)
        big = keep & ((need > max_nodes) | (procs_col <= 0))
        dropped["oversize"] = int(big.sum())
        keep &= ~big
        idx = order[keep[order]]
        submit, run, req, procs_col, need = c["submit"][idx], run[idx], req[idx], procs_col[idx], need[idx]
        if not compat:
            top = {k: (float(c[f][idx].max()) if len(idx) else 0.0)
                   for k, f in (("mem", "req_mem"), ("user", "user"), ("group", "group"), ("exe", "executable"))}
            max_exec = int(req.max()) if len(req) else 0
        if norm is not None:
            max_exec = float(norm["req"])
            top = {k: float(norm[k]) for k in _NORM_KEYS if k != "req"}
        if len(idx) == 0:
            raise ConfigError(f"{path}: no job left to schedule after loading")
        if not compat and (req <= 0).any():
            bad = int(np.flatnonzero(req <= 0)[0])
            raise ConfigError(f"{path}: job {int(c['job_id'][idx][bad])} has no requested time "
                              f"({int(req[bad])}); the environments need one for every job")
        feat = np.zeros((len(idx), 8), dtype=np.float32)
        feat[:, 1] = np.clip(req / float(max_exec), 0.0, 1.0 - _EPS)
        feat[:, 2] = np.minimum(procs_col / float(max_procs), 1.0 - _EPS)
        feat[:, 3] = _norm(c["req_mem"][idx], top["mem"])
        feat[:, 4] = _norm(c["user"][idx], top["user"])
        feat[:, 5] = _norm(c["group"][idx], top["group"])
        feat[:, 6] = _norm(c["executable"][idx], top["exe"])
        as64 = lambda a: np.ascontiguousarray(a, dtype=np.int64)
        return cls(name=name, compat=compat, submit=as64(submit), run=as64(run), req=as64(req),
                   procs=as64(procs_col), nodes=as64(need), user=as64(c["user"][idx]), features=feat,
                   total_nodes=int(max_nodes), max_procs=int(max_procs), procs_per_node=ppn,
                   job_id=as64(c["job_id"][idx]), dropped=dropped,
                   norm={"req": float(max_exec), "procs": float(max_procs), **top}, loader=loader)

    def nodes_needed(self, procs: int) -> int:
        """Nodes a job of ``procs`` processors needs on this trace's cluster."""
        return int(math.ceil(procs / self.procs_per_node))
