"""Schedule metrics (DESIGN §7): AWT, ART, bounded slowdown, utilisation, makespan, queue length.

All take the scheduled jobs as arrays (submit, start, run, units) — the struct-of-arrays form the
replayer produces — and never per-job objects. Definitions:

* wait = start - submit; response = wait + run; bsld = max(1, response / max(run, tau)).
* AWT, ART, BSLD: means over the jobs given.
* makespan = last end - first submit; utilisation = sum(units * run) / (total_units * makespan).
* queue length at time t = jobs submitted at or before t and not yet started after all events of
  instant t are applied (a job that starts the second it arrives is never counted). ``max_queue`` is
  its maximum; ``mean_queue`` its time average over [first submit, last end).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from .errors import ConfigError

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike  # (for the annotations only: a replay does without numpy.typing)

__all__ = ["Metrics", "schedule_metrics", "bounded_slowdown", "queue_length_profile"]


@dataclass(frozen=True)
class Metrics:
    """Summary figures of one schedule; times in seconds."""
    jobs: int
    awt: float
    art: float
    bsld: float
    bsld_tau: float
    utilisation: float
    makespan: int
    max_queue: int
    mean_queue: float

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def _arrays(submit, start, run, units):
    import numpy as np
    arrs = [np.asarray(a, dtype=np.int64) for a in (submit, start, run, units)]
    n = len(arrs[0])
    for name, a in zip(("submit", "start", "run", "units"), arrs):
        if a.ndim != 1 or len(a) != n:
            raise ConfigError(f"{name} must be a 1-D array of {n} values, got shape {a.shape}")
    if n and (arrs[1] < arrs[0]).any():
        i = int(np.argmax(arrs[1] < arrs[0]))
        raise ConfigError(f"job at index {i} starts at {arrs[1][i]} before its submit time {arrs[0][i]}")
    if n and (arrs[2] < 0).any():
        raise ConfigError(f"run times must be >= 0, got {int(arrs[2].min())}")
    return arrs


def bounded_slowdown(submit: ArrayLike, start: ArrayLike, run: ArrayLike, tau: float = 10.0) -> np.ndarray:
    """Per-job bounded slowdown max(1, (wait + run) / max(run, tau))."""
    import numpy as np
    submit, start, run = (np.asarray(a, dtype=np.float64) for a in (submit, start, run))
    if tau <= 0:
        raise ConfigError(f"tau (the slowdown bound) must be > 0 seconds, got {tau}")
    return np.maximum(1.0, (start - submit + run) / np.maximum(run, tau))


def queue_length_profile(submit: ArrayLike, start: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(times, lengths)``: the queue length from each event instant until the next one."""
    import numpy as np
    submit = np.asarray(submit, dtype=np.int64)
    start = np.asarray(start, dtype=np.int64)
    times = np.concatenate([submit, start])
    delta = np.concatenate([np.ones(len(submit), np.int64), -np.ones(len(start), np.int64)])
    order = np.argsort(times, kind="stable")
    times, delta = times[order], delta[order]
    level = np.cumsum(delta)
    last_of_instant = np.r_[times[1:] != times[:-1], True]  # level after all events of the instant
    return times[last_of_instant], level[last_of_instant]


def schedule_metrics(submit: ArrayLike, start: ArrayLike, run: ArrayLike, units: ArrayLike, total_units: int,
                     tau: float = 10.0) -> Metrics:
    """The :class:`Metrics` of a schedule. ``tau``: the bounded-slowdown bound in seconds."""
    submit, start, run, units = _arrays(submit, start, run, units)
    if total_units <= 0:
        raise ConfigError(f"total_units must be > 0, got {total_units}")
    n = len(submit)
    if n == 0:
        return Metrics(0, 0.0, 0.0, 0.0, float(tau), 0.0, 0, 0, 0.0)
    wait = start - submit
    response = wait + run
    first, last = int(submit.min()), int((start + run).max())
    makespan = last - first
    if makespan > 0:
        # the queue length's integral over [first submit, last end) is the sum of the waits (each job is
        # queued from its submit to its start, both inside that span): the same integer as summing
        # queue_length_profile's levels times their spans, without building the profile
        mean_q = float(wait.sum() / makespan)
        util = float((units * run).sum() / (total_units * makespan))
    else:
        mean_q, util = 0.0, 0.0
    return Metrics(jobs=n, awt=float(wait.mean()), art=float(response.mean()),
                   bsld=_mean_bsld(submit, start, run, response, tau, first, last), bsld_tau=float(tau),
                   utilisation=util, makespan=makespan, max_queue=_max_queue(submit, start),
                   mean_queue=mean_q)


def _mean_bsld(submit: np.ndarray, start: np.ndarray, run: np.ndarray, response: np.ndarray, tau: float,
               first: int, last: int) -> float:
    """``bounded_slowdown(submit, start, run, tau).mean()``. When every time lies within 2**52 of 0
    (``first`` the earliest submit, ``last`` the latest end), floats hold them and their sums exactly,
    so the response in floats is ``response`` converted: the same values from two arrays instead of eight."""
    import numpy as np
    if tau <= 0 or not -2**52 < first <= last < 2**52:
        return float(bounded_slowdown(submit, start, run, tau).mean())
    out = response.astype(np.float64)
    bound = run.astype(np.float64)
    np.maximum(bound, tau, out=bound)
    np.divide(out, bound, out=out)
    np.maximum(out, 1.0, out=out)
    return float(out.mean())


def _max_queue(submit: np.ndarray, start: np.ndarray) -> int:
    """The maximum of :func:`queue_length_profile`'s lengths: the queue grows only at submit instants,
    where it holds the jobs submitted at or before that instant less those started at or before it.
    With the submits sorted, a start counts from the first submit instant at or after it on: the
    starts are counted by where they fall among the submits (no sort of the starts)."""
    import numpy as np
    subs = submit if (submit[1:] >= submit[:-1]).all() else np.sort(submit)
    n = len(subs)
    started = np.cumsum(np.bincount(np.searchsorted(subs, start, "left"), minlength=n + 1)[:n])
    last = np.append(np.flatnonzero(subs[1:] != subs[:-1]), n - 1)     # each instant's last submit
    return int((last + 1 - started[last]).max())
