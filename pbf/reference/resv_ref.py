"""Jobs inside an advance reservation, for the node oracles (:mod:`pbf.reference.nodes_ref`,
:mod:`pbf.reference.slurm_backfill_ref`): a job submitted with ``--reservation=R`` (sacct's
``Reservation`` column names R). Slurm 22.05's ``job_test_resv`` (``src/slurmctld/reservation.c``) for
a job that names a reservation:

* **When.** The job may start only inside its reservation's current occurrence: the first window of
  that name (by start) that has not ended, at a time t with start <= t < end. Before the start it
  waits: ``job_test_resv`` moves its time to the start and returns ``ESLURM_INVALID_TIME_VALUE``; the
  main scheduler gives it the reason ``Reservation`` (``WAIT_RESERVATION``, ``node_scheduler.c``) and
  the backfill passes over it (``_attempt_backfill``: "reservation defer"), also at a later start
  tried past the end (``ESLURM_RESERVATION_INVALID``). Once the reservation is over, a job still
  pending is held for ever (``job_test_resv`` sets its priority to 0: an administrative hold, shown as
  ``JobHeldAdmin`` from the next queue build, ``_job_runnable_test1``) and never starts. (Slurm's test
  is ``*when > end_time``: a start at the very end is let through, but the reservation is purged at its
  end, ``job_resv_check``; the window is taken as [start, end).)
* **Where.** Only on the reservation's nodes (``node_bitmap`` = the reservation's), less the nodes of
  every other reservation over the job's time [t, t + limit) (the overlap loop of ``job_test_resv``).
* **Its own hold.** The reservation's nodes, held from every other job over the window, are free to
  the jobs inside it (less what those jobs hold).
* **Its end.** Nothing in ``job_test_resv`` bounds the job's end by the reservation's: it starts with its
  own limit and may run past the end. There slurmctld's time-limit check ends it (``job_time_limit``,
  ``src/slurmctld/job_mgr.c``, on the 30-second timer ``PERIODIC_TIMEOUT`` of ``_slurmctld_background``):
  at the first check at which the reservation's end plus ``ResvOverRun`` is in the past (``end_time +
  resv_over_run < now``), state ``TIMEOUT`` ("Reservation ended for JobId=..."); not in a ``FLEX``
  reservation. A repeating reservation moves to its next occurrence at the first check past its end
  (``job_resv_check``, right after ``job_time_limit``): a job that check did not end is held to the next
  end (:func:`ended_at`).

A window is ``(start, end, node indices)`` or ``(start, end, node indices, name)``; a job's ``resv``
names its reservation (absent or None: none).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

__all__ = ["name_of", "current", "usable_at", "others", "event_starts", "never_started", "ended_at", "CHECK_EVERY"]

#: slurmctld's time-limit check runs every 30 s (PERIODIC_TIMEOUT)
CHECK_EVERY = 30


def name_of(window: Sequence) -> str | None:
    """The reservation a window belongs to (None: unnamed)."""
    return window[3] if len(window) > 3 else None


def current(windows: Iterable[Sequence], name: str, now: int) -> Sequence | None:
    """The current occurrence of reservation ``name`` at ``now``: its first window by start that ends
    after now (None: none left)."""
    live = [w for w in windows if name_of(w) == name and w[1] > now]
    return min(live, key=lambda w: (w[0], w[1])) if live else None


def usable_at(windows: Iterable[Sequence], name: str, now: int, t: int) -> set[int] | None:
    """The nodes a job inside ``name`` may start on at ``t`` (the pass at ``now``), before the other
    reservations are taken out; None when t is not inside the current occurrence."""
    w = current(windows, name, now)
    if w is None or not w[0] <= t < w[1]:
        return None
    return set(w[2])


def others(windows: Iterable[Sequence], name: str | None) -> list[Sequence]:
    """The windows of every reservation but ``name``."""
    return [w for w in windows if name is None or name_of(w) != name]


def event_starts(windows: Iterable[Sequence], jobs: Sequence[Mapping[str, Any]]) -> set[int]:
    """The starts of the windows some job is inside of: a pass runs then (its jobs may start)."""
    named = {j.get("resv") for j in jobs} - {None}
    return {w[0] for w in windows if name_of(w) in named}


def never_started(jobs: Sequence[Mapping[str, Any]], start: Sequence[int], reason: list[str]) -> None:
    """The reason of a job inside a reservation that never started (held: its reservation ended, or
    never had room for it): ``Reservation``, as Slurm's pending reason."""
    for j, job in enumerate(jobs):
        if job.get("resv") is not None and start[j] < 0 and not reason[j]:
            reason[j] = "Reservation"


def ended_at(windows: Sequence[Sequence], name: str, start: int, over_run: int, first_check: int,
             flags: Sequence[str] = ()) -> int | None:
    """When a job inside ``name`` that started at ``start`` (inside its current window) is ended by it,
    if it still runs then (None: never): the time-limit checks at ``first_check`` + 30 k, from the last
    at or before the start, until one finds the window's end plus ``over_run`` seconds before it. ``flags``: the
    reservation's (``FLEX``: never; ``DAILY``, ``HOURLY``, ...: repeating, the end moves to the next
    window's at the first check past it)."""
    if "FLEX" in flags:
        return None
    repeats = bool({"HOURLY", "DAILY", "WEEKLY", "WEEKDAY", "WEEKEND"} & set(flags))
    w = current(windows, name, start)
    t = first_check + CHECK_EVERY * ((start - first_check) // CHECK_EVERY)
    while w is not None:
        end = w[1]
        if t > end + over_run:
            return t                                         # job_time_limit: end + over_run < now
        if repeats and t > end:
            w = current(windows, name, end)                  # job_resv_check: the next occurrence
            continue
        t += CHECK_EVERY * (((end if repeats else end + over_run) - t) // CHECK_EVERY + 1)
    return None
