"""pbf as the scheduler of a cluster in a SimPy model: SimPy owns time and the jobs, pbf decides who
starts where (docs/hosts.md).

    import simpy, pbf
    from pbf.hosts.simpy import SimPyHost

    env = simpy.Environment()
    host = SimPyHost(env, pbf.Engine(pbf.Cluster(units=64), backfill=pbf.Backfill(reservations=1)))

    def user(env):
        yield env.timeout(10)
        decision = yield env.process(host.run(pbf.Job("a", submit=10, units=8, requested=600), 300))
        # decision: the Start (or Rejected) of the job; it ran 300 s on decision.units

    env.process(user(env))
    env.run()

Submissions, finishes and outages of one SimPy instant are collected and handed to the engine in ONE
:meth:`pbf.Engine.advance` call, made after every other event of that instant (a SimPy event of a
priority below SimPy's own, so that the processes woken at that instant have all run first). The
decisions come back as SimPy events: each submitted job's :attr:`JobHandle.started` succeeds with its
:class:`~pbf.Start` (or :class:`~pbf.Rejected`), and a failure's :class:`~pbf.Stopped` succeeds its
:attr:`JobHandle.stopped`. Events that decisions cause at the same instant (a job of run time 0, a
submission made as another job starts) go into a second call at the same ``now``.

pbf plans in whole seconds: SimPy's time is handed over as ``floor(env.now * seconds_per_unit)``.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import simpy
from simpy.core import NORMAL

from ..engine import Engine
from ..engine_events import Drain, Fail, Finish, Job, Rejected, Reserve, Resume, Start, Stopped, Submit

__all__ = ["SimPyHost", "JobHandle", "LATE"]

#: the SimPy priority of the engine's call: after every event of SimPy's own priorities at an instant
LATE = NORMAL + 1


class _Call(simpy.Event):
    """The engine's call at this instant, scheduled after everything else of the instant."""

    def __init__(self, env, callback):
        self.env = env
        self.callbacks = [callback]
        self._value = None
        self._ok = True
        env.schedule(self, LATE, 0)


class JobHandle:
    """A submitted job: :attr:`started` succeeds with its :class:`~pbf.Start` or :class:`~pbf.Rejected`
    decision; :attr:`stopped` with the :class:`~pbf.Stopped` of a failure that stops it (requeued: it
    will start again, and :attr:`started` is then a new event)."""

    def __init__(self, env, job):
        self.job = job
        self.started = env.event()
        self.stopped = env.event()
        self.decision = None        # the last Start or Rejected


class SimPyHost:
    """A cluster in a SimPy model, scheduled by ``engine`` (a :class:`pbf.Engine`, which the host owns
    from now: drive it only through the host).

    ``on_decision``: called with every decision, in order, as the call returns (a log, a check).
    ``seconds_per_unit``: pbf seconds in one unit of SimPy time (1: SimPy counts seconds).
    ``reservations``: the planned start of each job the last pass reserved, when the engine has
    ``report_reservations`` (the engine re-sends every reservation on every call: this dict is
    replaced each call)."""

    def __init__(self, env: simpy.Environment, engine: Engine, *, on_decision: Callable | None = None,
                 seconds_per_unit: float = 1):
        if not isinstance(engine, Engine):
            raise TypeError(f"engine must be a pbf.Engine, got {engine!r}")
        self.env, self.engine, self.on_decision = env, engine, on_decision
        self.seconds_per_unit = seconds_per_unit
        self.reservations: dict = {}
        self.calls = 0
        self._inbox: list = []
        self._call: _Call | None = None
        self._handles: dict = {}
        self._wakeups: set = set()      # times at which a wake-up the engine asked for is pending

    # ------------------------------------------------------------ what the model does
    @property
    def now(self) -> int:
        """SimPy's time now, in pbf's whole seconds."""
        return int(math.floor(self.env.now * self.seconds_per_unit))

    def submit(self, job: Job) -> JobHandle:
        """Submit ``job`` now (its ``submit`` is replaced by the time now). Returns its handle."""
        if job.id in self._handles:
            raise ValueError(f"job {job.id!r} was already submitted")
        if job.submit != self.now:
            job = replace(job, submit=self.now)
        handle = self._handles[job.id] = JobHandle(self.env, job)
        self._post(Submit(job))
        return handle

    def finish(self, job_id: object) -> None:
        """Running job ``job_id`` ended now."""
        self._handles.pop(job_id, None)
        self._post(Finish(job_id, self.now))

    def outage(self, event: Drain | Fail | Resume) -> None:
        """A drain, failure or resume (its ``at`` is replaced by the time now)."""
        if not isinstance(event, (Drain, Fail, Resume)):
            raise TypeError(f"expected a pbf.Drain, Fail or Resume, got {event!r}")
        self._post(type(event)(units=event.units, nodes=event.nodes, at=self.now, until=event.until))
        if event.until is not None and not isinstance(event, Resume):
            # the engine ends the outage by itself at until, but only a call can start jobs then
            self.env.process(self._wake_at(event.until))

    def wake(self) -> None:
        """Ask for an engine call at this instant even with no event (a pass at a time the host knows
        matters: an outage's end, a timer of its own)."""
        if self._call is None:
            self._call = _Call(self.env, self._advance)

    def _wake_at(self, t):
        yield self.env.timeout(max(0, t / self.seconds_per_unit - self.env.now))
        self._wakeups.discard(t)
        self.wake()

    def run(self, job: Job, duration: float):
        """A SimPy process body: submit ``job``, wait for its start, hold its units ``duration`` (SimPy
        time), finish it. Its value is the job's Start, or its Rejected. A failure that stops it ends
        the hold early; requeued, it waits for its next start and runs ``duration`` again."""
        handle = self.submit(job)
        while True:
            decision = yield handle.started
            if isinstance(decision, Rejected):
                return decision
            ran = self.env.timeout(duration)
            outcome = yield ran | handle.stopped
            if ran in outcome:
                self.finish(job.id)
                return decision
            stop = next(iter(outcome.values()))
            if not stop.requeued:
                return stop

    # ------------------------------------------------------------ the engine's call
    def _post(self, event) -> None:
        self._inbox.append(event)
        self.wake()

    def _advance(self, _event) -> None:
        self._call = None
        # one call per instant, events in time order (they are all of this instant; a stable sort
        # keeps the order they came in)
        events = sorted(self._inbox, key=lambda e: e.time)
        self._inbox = []
        decisions = self.engine.advance(self.now, events)
        self.calls += 1
        wake = self.engine.next_wakeup()        # (an interval trigger's next pass, an outage's end)
        if wake is not None and wake > self.now and wake not in self._wakeups:
            self._wakeups.add(wake)
            self.env.process(self._wake_at(wake))
        if self.engine.report_reservations:
            self.reservations = {}
        for d in decisions:
            if self.on_decision is not None:
                self.on_decision(d)
            if isinstance(d, Reserve):
                self.reservations[d.job_id] = d.at
                continue
            handle = self._handles.get(d.job_id)
            if handle is None:      # a decision about a job not submitted through this host
                continue
            if isinstance(d, (Start, Rejected)):
                handle.decision = d
                handle.started.succeed(d)
                if isinstance(d, Rejected):
                    del self._handles[d.job_id]
            elif isinstance(d, Stopped):
                # fresh events for what comes next (a requeued job starts again), then the news
                stopped, handle.stopped = handle.stopped, self.env.event()
                if d.requeued:
                    handle.started = self.env.event()
                stopped.succeed(d)
                if not d.requeued:
                    del self._handles[d.job_id]

    def close(self) -> None:
        """Close the engine."""
        self.engine.close()
