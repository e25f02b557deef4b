"""A learned backfilling policy as a backfill order for replays and the engine.

Before every pass the queued jobs get the kernel's scores from RLBackfilling's six features, taken
at that moment: wait (/ 12 h); estimate (/ the model's scale: 24 h for a default-mode model, the
replay's largest requested time for a compat-mode one); units (/ the cluster's units); estimate /
(time to the head's shadow + 2 s); units / free units; and 0. The head is the first queued job in
priority order; its shadow time is when, the running jobs ending at their estimated ends
(earliest first), enough units are free for it. After the reservations, the pass tries the
remaining jobs in descending score order for a start now only, as it tries them shortest-first
for EASY-SJBF: pbf never delays a reservation, so a learned order is always the guarded form of
RLBackfilling's agent. The scores are fixed for the pass (the environment re-scores after every
start, when the free units change): ``docs/rl.md``.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

import numpy as np

from ..errors import ConfigError
from .kernel import KernelPolicy

if TYPE_CHECKING:
    from ..plugins import JobsView
    from ..workload.jobs import JobTable

__all__ = ["LearnedBackfill"]

_MAX_WAIT = 43200.0
_EPS = 1e-5


class LearnedBackfill:
    """A backfilling :class:`KernelPolicy` as a chooser (``keys(jobs, now)``, ascending first).

    ``policy``: a KernelPolicy of kind ``backfilling`` (or a path / shipped name); ``relax``: the
    shadow window's relaxation used in the gap feature (default: the model's own).
    """
    wants_running = True

    def __init__(self, policy: KernelPolicy | str | os.PathLike, relax: float | None = None):
        if not isinstance(policy, KernelPolicy):
            policy = KernelPolicy.load(policy)
        if policy.kind != "backfilling":
            raise ConfigError(f"learned policy {policy.name} is a {policy.kind} policy: use it as a priority "
                              f"(--priority learned:...), not as a backfill order")
        self.policy = policy
        self.relax = float(policy.meta.get("relax", 0.0) if relax is None else relax)
        compat = bool(policy.meta.get("compat", False))
        self.req_scale = None if compat else float(policy.meta.get("req_scale", 86400.0))
        self.max_est = 0.0
        self.units = 0.0

    def prepare(self, table: JobTable, units: int) -> None:
        """Before a replay: normalise by its largest requested time and the cluster's units."""
        self.max_est = float(table.columns["req_time"].max()) if len(table) else 0.0
        self.units = float(units)

    def shadow(self, jobs: JobsView, now: int) -> tuple[int, float]:
        """The head's shadow time and its expected wait (RLBackfilling's rule, estimated ends)."""
        head_units, free = int(jobs.units[0]), int(jobs.free_units)
        if free < 0 or head_units <= free or jobs.running is None or len(jobs.running) == 0:
            return now, float(now - jobs.submit[0])
        run = jobs.running
        ends = np.asarray(run.start + run.estimate, dtype=np.int64)
        order = np.argsort(ends, kind="stable")
        avail = free + np.cumsum(run.units[order])
        enough = avail >= head_units
        k = int(np.argmax(enough)) if enough.any() else len(order) - 1
        shadow = max(int(ends[order[k]]), now)
        return shadow, float(shadow - jobs.submit[0])

    def features(self, jobs: JobsView, now: int) -> np.ndarray:
        """The six features of the queued jobs (a :class:`pbf.plugins.JobsView`) at ``now``."""
        n = len(jobs)
        x = np.zeros((n, 6), dtype=np.float32)
        if n == 0:
            return x
        est = np.asarray(jobs.estimate, dtype=np.float64)
        top_est = self.req_scale or self.max_est or float(max(est.max(), 1.0))
        top_units = self.units or float(max(jobs.units.max(), 1))
        shadow, ew = self.shadow(jobs, now)
        gap = shadow + self.relax * ew + 1.0 - now
        free = float(jobs.free_units)
        x[:, 0] = np.minimum((now - jobs.submit) / _MAX_WAIT, 1.0 - _EPS)
        x[:, 1] = np.minimum(est / top_est, 1.0 - _EPS)
        x[:, 2] = np.minimum(jobs.units / top_units, 1.0 - _EPS)
        x[:, 3] = np.minimum(est / (gap + 1.0), 1.0 - _EPS)
        x[:, 4] = np.minimum(jobs.units / free, 1.0 - _EPS) if free > 0 else 1.0 - _EPS
        return x

    def keys(self, jobs: JobsView, now: int) -> np.ndarray:
        """Backfill keys (ascending tried first): minus the scores, with Gumbel noise when sampling."""
        if len(jobs) == 0:
            return np.zeros(0)
        s = self.policy.scores(self.features(jobs, now)).astype(np.float64)
        if self.policy.sample:
            s += self.policy.rng.gumbel(size=len(s))
        return -s

    def describe(self) -> str:
        """The name replays report: ``learned:NAME``."""
        return f"learned:{self.policy.name}"
