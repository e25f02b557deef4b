"""The checks of a :meth:`pbf.Engine.advance` call, made whole before anything changes: the time,
each event's kind and fields, the jobs it finishes (looked up one by one, so that a call's cost does
not grow with the jobs the engine has seen), the units or nodes of an outage. A misuse raises
:class:`pbf.ProtocolError`; a well-formed job that can never run is answered (the replayer's rules).
"""
from __future__ import annotations

import numpy as np

from .codes import JobState
from .engine_events import (
    INT64_MAX,
    INT64_MIN,
    MAX_TIME,
    Drain,
    Fail,
    Finish,
    Job,
    OutageEvent,
    ProtocolError,
    Resume,
    Submit,
    bad_id,
    check_time,
    is_int,
)

__all__ = ["CallChecks"]


def _items(i, ev, what):
    # an outage event's units or nodes as a list: any iterable but a string of node names
    value = getattr(ev, what)
    if isinstance(value, (str, bytes)) and what == "nodes":
        value = (value,)
    try:
        return list(value)
    except TypeError:
        raise ProtocolError(f"event {i} ({type(ev).__name__}): {what} must be a sequence, got {value!r}") from None


class CallChecks:
    """The checks of :class:`pbf.Engine` (a mixin: they read the engine's state and change nothing)."""

    def _validate(self, now, events):
        if self._closed:
            raise ProtocolError("the engine is closed")
        check_time("now", now)
        if self._now is not None and now < self._now:
            raise ProtocolError(f"time went backwards: now={now} after now={self._now}")
        # the state and start of the jobs the call finishes, looked up one by one (not whole columns:
        # the cost of a call must not grow with the jobs the engine has seen)
        state, start = {}, {}
        ended = sorted({j for j in (self._known(e.job_id) for e in events if isinstance(e, Finish))
                        if j is not None})
        if ended:
            rows = np.asarray(ended, dtype=np.int64)
            state = dict(zip(ended, self._core.values_of("state", rows).tolist()))
            start = dict(zip(ended, self._core.values_of("start", rows).tolist()))
        last = self._now        # nothing may happen before the time of the last pass
        new_ids = set()
        rejected = {}           # job id -> why it can never run
        finishing = set()
        stopped = {}            # job id -> the event that stops it
        bits = []
        for i, ev in enumerate(events):
            if not isinstance(ev, (Submit, Finish, Drain, Fail, Resume)):
                raise ProtocolError(f"event {i} is not a pbf.Submit, Finish, Drain, Fail or Resume: {ev!r}")
            if isinstance(ev, OutageEvent) and self.coalloc is not None:
                raise ProtocolError(f"event {i}: outages are not combined with co-allocation")
            bits.append(self._outage_words(i, ev) if isinstance(ev, OutageEvent) else None)
            if isinstance(ev, OutageEvent):
                check_time(f"event {i} ({ev!r}): at", ev.at)
                if ev.until is not None and (not is_int(ev.until) or not ev.at < ev.until <= MAX_TIME):
                    raise ProtocolError(f"event {i} ({ev!r}): until must be None or an int after at={ev.at}")
            if isinstance(ev, Submit) and not isinstance(ev.job, Job):
                raise ProtocolError(f"event {i}: Submit needs a pbf.Job, got {ev.job!r}")
            t = ev.time
            check_time(f"event {i} ({ev!r}): time", t)
            if t > now:
                raise ProtocolError(f"event {i} ({ev!r}) is at {t}, later than now={now}")
            if last is not None and t < last:
                what = "the previous event" if i and last != self._now else "the last call's now"
                raise ProtocolError(f"event {i} ({ev!r}) is at {t}, before {what} at {last}")
            last = t
            if isinstance(ev, Submit):
                job = ev.job
                problem = bad_id(job.id)
                if problem:
                    raise ProtocolError(f"event {i}: job id {job.id!r} {problem}")
                if job.id in self._index or job.id in self._rejected or job.id in new_ids:
                    raise ProtocolError(f"event {i}: duplicate job id {job.id!r}")
                if not is_int(job.units) or job.units <= 0:
                    raise ProtocolError(f"event {i}: job {job.id!r} asks for {job.units!r} units; expected an int > 0")
                if not is_int(job.requested) or not job.requested <= MAX_TIME:
                    raise ProtocolError(f"event {i}: job {job.id!r} has requested time {job.requested!r}; "
                                        f"expected an int up to {MAX_TIME:,} s (at most 0: rejected, as it can "
                                        "never be planned)")
                if job.run is not None and (not is_int(job.run) or not -1 <= job.run <= MAX_TIME):
                    raise ProtocolError(f"event {i}: job {job.id} has run time {job.run!r}; "
                                        f"expected None or an int from 0 to {MAX_TIME:,} s")
                for name in ("user", "partition", "queue"):
                    value = getattr(job, name)
                    if not is_int(value) or not INT64_MIN <= value <= INT64_MAX:
                        raise ProtocolError(f"event {i}: job {job.id} has {name} {value!r}; expected an int")
                if job.cpu is not None and (isinstance(job.cpu, bool) or not isinstance(job.cpu, (int, float))
                                            or not 0 < job.cpu <= 1):
                    raise ProtocolError(f"event {i}: job {job.id} has cpu {job.cpu!r}; expected None or a number "
                                        "in (0, 1]")
                problem = self._nodes.problem(job)
                if problem:
                    raise ProtocolError(f"event {i}: {problem}")
                if self._scoring.predictor.name == "clairvoyant" and (job.run is None or job.run < 0):
                    raise ProtocolError(f"event {i}: the clairvoyant predictor needs job {job.id!r}'s run time")
                # (the replayer's rules for jobs that can never run: answered, not refused)
                if job.units > self.cluster.units:
                    rejected[job.id] = f"larger than the cluster: asks {job.units:,} units of {self.cluster.units:,}"
                elif job.requested <= 0:
                    rejected[job.id] = f"no requested time (requested {job.requested})"
                # (a request no set of nodes could hold: the core rejects it at submission, _apply)
                new_ids.add(job.id)
            elif isinstance(ev, Finish):
                j = self._known(ev.job_id)
                if j is None:
                    known = not bad_id(ev.job_id)
                    why = ("was submitted in this same call and cannot have started"
                           if known and ev.job_id in new_ids and ev.job_id not in rejected else
                           f"was rejected ({(rejected.get(ev.job_id) or self._rejected.get(ev.job_id))})"
                           if known and (ev.job_id in rejected or ev.job_id in self._rejected) else "is unknown")
                    raise ProtocolError(f"event {i}: cannot finish job {ev.job_id!r}: it {why}")
                if ev.job_id in stopped:
                    raise ProtocolError(f"event {i}: cannot finish job {ev.job_id}: the failure of event "
                                        f"{stopped[ev.job_id]} stopped it")
                if state[j] != JobState.JS_RUNNING or ev.job_id in finishing:
                    what = {JobState.JS_PENDING: "pending", JobState.JS_DONE: "already finished",
                            JobState.JS_REJECTED: "rejected",
                            JobState.JS_KILLED: "killed by a failure"}.get(int(state[j]), "not running")
                    if ev.job_id in finishing:
                        what = "already finished earlier in this call"
                    raise ProtocolError(f"event {i}: cannot finish job {ev.job_id}: it is {what}")
                if t < start[j]:
                    raise ProtocolError(f"event {i}: job {ev.job_id} cannot finish at {t}: it started at {start[j]}")
                if ev.rate is not None and (isinstance(ev.rate, bool) or not isinstance(ev.rate, (int, float))
                                            or not 0 < ev.rate <= 1):
                    raise ProtocolError(f"event {i}: job {ev.job_id}'s rate {ev.rate!r}: expected None or a "
                                        "number in (0, 1]")
                finishing.add(ev.job_id)
            if isinstance(ev, Fail):
                # the running jobs it stops (those finished earlier in the call have ended)
                for j in self._outages.jobs_on(bits[-1]):
                    if self._ids[j] not in finishing:
                        stopped[self._ids[j]] = i
        return bits, rejected

    def _known(self, job_id):
        # the core index of a job id the engine holds, or None (an unhashable id is not one)
        try:
            return self._index.get(job_id)
        except TypeError:
            return None

    def _outage_words(self, i, ev):
        # the unit words of an outage event (checked)
        units = self.cluster.units
        if bool(ev.units) == bool(ev.nodes):
            raise ProtocolError(f"event {i} ({ev!r}): give units or nodes (one of them)")
        if ev.nodes:
            if not self.cluster.nodes:
                raise ProtocolError(f"event {i}: nodes given, but the cluster has no named nodes (give units)")
            names = {}
            at = 0
            for node in self.cluster.nodes:
                names[node.name] = range(at, at + node.cores)
                at += node.cores
            idx = []
            for n in _items(i, ev, "nodes"):
                if not isinstance(n, str) or n not in names:
                    raise ProtocolError(f"event {i}: no node named {n!r} in the cluster")
                idx.extend(names[n])
        else:
            idx = _items(i, ev, "units")
            for u in idx:
                if not is_int(u) or not 0 <= u < units:
                    raise ProtocolError(f"event {i} ({type(ev).__name__}): unit {u!r} is not a unit index "
                                        f"(0 to {units - 1})")
        words = np.zeros((units + 63) // 64, dtype=np.uint64)
        idx = np.asarray(idx, dtype=np.int64)
        np.bitwise_or.at(words, idx // 64, np.left_shift(np.uint64(1), (idx % 64).astype(np.uint64)))
        return words
