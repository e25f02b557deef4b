"""The embedding protocol's events and decisions (:class:`pbf.Engine` takes the events and returns
the decisions), the :class:`Job` they name, and the time bounds every call is checked against.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .errors import PbfError

__all__ = ["Job", "Submit", "Finish", "OutageEvent", "Drain", "Fail", "Resume", "Stopped", "Start", "Lend",
           "Reserve", "Rejected", "ProtocolError", "MAX_TIME", "INT64_MIN", "INT64_MAX", "is_int", "check_time",
           "bad_id"]


class ProtocolError(PbfError, ValueError):
    """The engine was driven against its protocol; its state is unchanged."""


@dataclass(frozen=True)
class Job:
    """A job as the engine sees it. ``id``: any hashable value the host names its jobs by (an int, a
    string, a tuple; not a bool, None or NaN), unique within an engine; Python plugins see it when it is
    an int of 64 bits, else the engine's own number for the job. ``requested`` is the wall-time limit in
    seconds; ``run`` (the
    actual run time) is only used by the ``clairvoyant`` predictor. ``user`` feeds the ``ave2`` and
    ``regression`` predictors and fair share; ``partition`` and ``queue`` (SWF numbers) the
    multifactor partition and QOS factors. ``cpu``: the job's CPU use in (0, 1] for co-allocation
    (None: as the engine's :class:`~pbf.CoAllocation` says). On a cluster of nodes with memory, GPUs
    or features: ``mem_core_mb`` or ``mem_node_mb`` (memory per core or per node, MB; neither: the
    cluster's default memory per core), ``gpus`` (per node), ``nodes_min``/``nodes_max`` (0: any),
    ``features`` (names every node given must have) and ``gres`` (other generic resources per node,
    ``{"nvme": 1}`` or ``(("nvme", 1),)``; :mod:`pbf.gres`)."""
    id: object
    submit: int
    units: int
    requested: int
    run: int | None = None
    user: int = -1
    partition: int = -1
    queue: int = -1
    cpu: float | None = None
    mem_core_mb: int = 0
    mem_node_mb: int = 0
    gpus: int = 0
    nodes_min: int = 1
    nodes_max: int = 0
    features: tuple = ()
    gres: object = ()


@dataclass(frozen=True)
class Submit:
    """Job ``job`` arrives at ``job.submit``."""
    job: Job

    @property
    def time(self) -> int:
        return self.job.submit


@dataclass(frozen=True)
class Finish:
    """Running job ``job_id`` ended at ``time``. With co-allocation, ``rate``: the job's progress
    rate as observed (its run time alone / its elapsed time, in (0, 1]; None: 1), which the learner
    is judged by."""
    job_id: int
    time: int
    rate: float | None = None


@dataclass(frozen=True)
class OutageEvent:
    """What :class:`Drain`, :class:`Fail` and :class:`Resume` share: the units or nodes they name,
    when, and (drain, fail) until when."""
    units: tuple = ()
    nodes: tuple = ()
    at: int = 0
    until: int | None = None

    @property
    def time(self) -> int:
        return self.at


@dataclass(frozen=True)
class Drain(OutageEvent):
    """From ``at``, ``units`` (unit indices) or ``nodes`` (names of the cluster's nodes) take no new
    job; their running jobs finish. ``until``: when they come back by themselves (None: at a
    :class:`Resume`)."""


@dataclass(frozen=True)
class Fail(OutageEvent):
    """At ``at``, ``units`` or ``nodes`` fail: as a drain, and their running jobs stop (requeued or
    killed: the engine's ``on_failure``; each reported as a :class:`Stopped`)."""


@dataclass(frozen=True)
class Resume(OutageEvent):
    """At ``at``, ``units`` or ``nodes`` are back in service (``until`` is not used)."""


@dataclass(frozen=True)
class Stopped:
    """Decision: running job ``job_id`` stopped at ``at`` because its units failed. ``requeued``: it
    is pending again (it will start anew); else it ended killed. Its :class:`Finish` must not come."""
    job_id: int
    at: int
    requeued: bool


@dataclass(frozen=True)
class Start:
    """Decision: start ``job_id`` now on ``units`` (unit indices, ascending). ``secondary``: with
    co-allocation, it runs on cores running jobs lent (it shares them). ``nodes``: on a cluster with
    named nodes, a :class:`~pbf.Placement` per node the job runs on (its cores there, and
    the memory and GPUs it holds there)."""
    job_id: int
    units: np.ndarray = field(compare=False)
    at: int = 0
    secondary: bool = False
    nodes: tuple = field(default=(), compare=False)


@dataclass(frozen=True)
class Lend:
    """Decision (co-allocation): running job ``job_id`` lends ``cores`` of its cores from now."""
    job_id: int
    cores: int


@dataclass(frozen=True)
class Rejected:
    """Decision: job ``job_id`` can never run here, by the replayer's rules -- no requested time, wider
    than the cluster, or a request no set of the cluster's nodes could hold even all idle -- and
    ``reason`` says which (as ``jobs.csv``'s ``reject_reason``, with the resource on a cluster of nodes).
    The job takes no part in any pass; its Finish must not come."""
    job_id: object
    reason: str


@dataclass(frozen=True)
class Reserve:
    """Plan (on request): the last pass reserved ``job_id`` to start at ``at``."""
    job_id: int
    at: int


#: The latest time the engine takes (seconds; about 34,800 years), and the longest requested time:
#: every sum of a time and a duration then stays far inside 64 bits.
MAX_TIME = 1 << 40
#: the range of a job id (and of the other integers the core stores as int64)
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def is_int(value: object) -> bool:
    """An integer (Python or numpy), not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_time(what: str, t: object) -> None:
    """Raise :class:`ProtocolError` unless ``t`` is a time the engine takes."""
    if not is_int(t) or not -MAX_TIME <= t <= MAX_TIME:
        raise ProtocolError(f"{what} must be an int from {-MAX_TIME:,} to {MAX_TIME:,} (seconds), got {t!r}")


def bad_id(job_id: object) -> str | None:
    """What makes ``job_id`` unusable as a job id, or None: it must be hashable and equal to itself, and
    neither a bool nor None (True == 1 would make two hosts' ids the same job)."""
    if job_id is None or isinstance(job_id, (bool, np.bool_)):
        return "is not a job id (give an int, a string or a tuple)"
    try:
        hash(job_id)
    except TypeError:
        return "is not hashable"
    if job_id != job_id:
        return "is not equal to itself (NaN)"
    return None
