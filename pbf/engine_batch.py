"""The engine's batch path: many events and one pass in one call, arrays in and arrays out.

    d = eng.advance_arrays(now, finish_ids=[7, 9], finish_times=[now, now],
                           submit_ids=[12], submit_times=[now], units=[4], requested=[3600])
    d.started                        # array([12])
    d.units_of(0)                    # array([0, 1, 2, 3]): the units of d.started[0]

:meth:`BatchPath.advance_arrays` is :meth:`pbf.Engine.advance` for a host that holds its events in
arrays (a simulator in NumPy, a C++ host, a trace driven instant by instant): it takes the finishes
and submissions of a call as arrays and returns the decisions as arrays (:class:`BatchDecisions`),
with no Python object per event or per decision. Its semantics are those of ``advance`` with the
events in time order, finishes before submissions at a tie; the whole call is checked before anything
changes and a refused call leaves the engine exactly as it was. Where a feature needs per-event work
in Python (Python plugins, co-allocation, a cluster of nodes with memory, GPUs or features, an
outage ending by itself during the call) the call is served by ``advance`` itself: same decisions,
the object path's cost.
"""
from __future__ import annotations

from array import array

import numpy as np

from .codes import JobState
from .engine_buffers import (
    _EMPTY,
    BatchBuffers,
    BatchCore,
    BatchDecisions,
    _columns,
)
from .engine_events import (
    INT64_MAX,
    INT64_MIN,
    MAX_TIME,
    Finish,
    Job,
    ProtocolError,
    Rejected,
    Reserve,
    Start,
    Submit,
    bad_id,
    check_time,
)

__all__ = ["BatchDecisions", "BatchPath"]

_I64 = np.dtype(np.int64)
_EMPTY_F = np.empty(0, dtype=np.float64)
_NO_REJECT = np.empty(0, dtype=np.int8)
_RUNNING = int(JobState.JS_RUNNING)
_PROBLEMS = {
    1: "is at {t}, later than now={now}", 2: "is at {t}, before the last call's now at {last}",
    3: "is at {t}, before the finish before it", 4: "cannot finish job {id!r}: it is not running",
    5: "job {id!r} cannot finish at {t}: it started at {start}",
    6: "is at {t}, later than now={now}", 7: "is at {t}, before the last call's now at {last}",
    8: "is at {t}, before the submission before it", 9: "job {id!r} asks for {units} units; expected an int > 0",
    10: f"job {{id!r}} has requested time {{req}}; expected an int up to {MAX_TIME:,} s",
    11: f"job {{id!r}} has run time {{run}}; expected -1 (unknown) or an int from 0 to {MAX_TIME:,} s",
}


_FILLED = {}


def _filled(n, value):
    # a read-only int64 array of n values, shared between calls
    a = _FILLED.get((n, value))
    if a is None:
        a = np.full(n, value, dtype=np.int64)
        a.flags.writeable = False
        if len(_FILLED) < 4096:
            _FILLED[n, value] = a
    return a


def _minus_ones(n):
    return _filled(n, -1)


_EMPTY_O = np.empty(0, dtype=object)


def _ids_array(ids, as_int):
    if not ids:
        return _EMPTY if as_int else _EMPTY_O
    if as_int:
        return np.array(ids, dtype=np.int64)
    out = np.empty(len(ids), dtype=object)
    out[:] = ids
    return out


def _ints(name, value, n, required=False):
    # n int64 values (None: not given) as a buffer the core reads (a NumPy array, or for a list an
    # array.array: cheaper to make), refused unless the values are integers
    if value is None:
        if required:
            raise ProtocolError(f"{name} must be given (a 1-d sequence of integers)")
        return None
    if type(value) is np.ndarray:
        if not (value.dtype is _I64 and value.ndim == 1 and value.flags.c_contiguous):
            if value.size and (value.ndim != 1 or value.dtype.kind not in "iu"
                               or (value.dtype.kind == "u" and value.max() > INT64_MAX)):
                raise ProtocolError(f"{name} must be a 1-d sequence of integers (int64), got {value.dtype} of "
                                    f"shape {value.shape}")
            value = np.ascontiguousarray(value, dtype=np.int64) if value.size else _EMPTY
        a = value
    else:
        try:
            a = array("q", value)
        except (TypeError, OverflowError, ValueError):
            return _ints(name, np.asarray(value), n, required)
        if bool in map(type, value):
            raise ProtocolError(f"{name} must be a 1-d sequence of integers, got a bool")
    if n is not None and len(a) != n:
        raise ProtocolError(f"{name} has {len(a)} values, expected {n} (one per submitted job)")
    return a


def _id_list(name, ids):
    if type(ids) is list:
        return ids, False
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1:
            raise ProtocolError(f"{name} must be 1-d, got shape {ids.shape}")
        return ids.tolist(), ids.dtype.kind in "iu"
    return list(ids), False


class BatchPath:
    """The batch path of :class:`pbf.Engine` (a mixin: it works on the engine's state)."""

    def _batch_setup(self) -> None:
        # what the engine's settings (fixed at construction) mean for the batch path
        from .plugins.multifactor import Multifactor
        from .plugins.predictors import Requested
        sc = self._scoring
        self._batch_fast = (not sc.needs_hooks and self.coalloc is None and not self._nodes.modelled
                            and self.checkpoints != "every-call" and self._timing.clock != "slurm-sim")
        self._clairvoyant = sc.predictor.name == "clairvoyant"
        self._est_is_req = type(sc.predictor) is Requested
        self._multifactor = isinstance(sc.priority, Multifactor)
        self._buffers = None

    def batch_buffers(self, capacity: int = 1024) -> BatchBuffers:
        """The engine's :class:`BatchBuffers`: preallocated arrays and one compiled call per
        :meth:`advance_arrays` call, for a host that drives the engine event by event at its own
        speed (one object per engine; ``capacity``: the least room of its own input arrays, grown
        when more is asked)."""
        from .bounded import check_int
        check_int("capacity", capacity, 1, 1 << 30)
        if BatchCore is None:
            raise ProtocolError("batch_buffers: this build of pbf has no compiled batch call (pbf._engine_batch); "
                                "rebuild it (pip install -e .)")
        with self._lock:
            if self._buffers is None:
                self._buffers = BatchBuffers(self, capacity)
            else:
                self._buffers.grow(capacity)
            return self._buffers

    def _batch_rejected(self, codes, ids, units, requested, out):
        # the compiled call's rejected jobs: their reasons (Rejected), their ids in ``out``
        k = 0
        for x, code, u, r in zip(ids.tolist(), codes.tolist(), units.tolist(), requested.tolist()):
            if code:
                self._rejected[x] = (f"larger than the cluster: asks {u:,} units of {self.cluster.units:,}"
                                     if code == 1 else f"no requested time (requested {r})")
                out[k] = x
                k += 1

    def advance_arrays(self, now: int, *, finish_ids=(), finish_times=(), submit_ids=(), submit_times=(),
                       units=(), requested=(), run=None, user=None, partition=None, queue=None,
                       quick: bool = False) -> BatchDecisions:
        """Apply finishes and submissions given as arrays, run one pass at ``now`` and return its
        decisions as a :class:`BatchDecisions`.

        ``finish_ids``, ``finish_times``: the jobs that ended and when, in time order. ``submit_ids``,
        ``submit_times``, ``units``, ``requested`` (and optionally ``run``, ``user``, ``partition``,
        ``queue``, as :class:`pbf.Job` has them; None: unknown, -1): the jobs that arrived, in time
        order. The events are applied in time order, a finish before a submission at the same time;
        as with :meth:`advance`, none may be later than ``now`` or earlier than the last call's now,
        the whole call is checked first, and a refused call (:class:`pbf.ProtocolError`) changes
        nothing. Ids are the host's (any hashable kind; an integer array is the fast case)."""
        b = self._buffers
        if b is None and BatchCore is not None:
            b = self.batch_buffers()
        if (b is not None and partition is None and queue is None and type(now) is int
                and -MAX_TIME <= now <= MAX_TIME):
            # the compiled call, when the columns are int64 buffers already (or lists of ints) and the
            # call is one it takes; else (nothing changed) the long way below
            cols = (finish_ids, finish_times, submit_ids, submit_times, units, requested, run, user)
            nd = np.ndarray
            if not (type(finish_ids) is nd and type(finish_times) is nd and type(submit_ids) is nd
                    and type(submit_times) is nd and type(units) is nd and type(requested) is nd
                    and (run is None or type(run) is nd) and (user is None or type(user) is nd)):
                cols = _columns(cols)
            if cols is not None:
                d = b.arrays(now, cols, quick)
                if d is not None:
                    return d
        with self._lock:
            if self._closed:
                raise ProtocolError("the engine is closed")
            if type(now) is not int or not -MAX_TIME <= now <= MAX_TIME:
                check_time("now", now)
            if self._now is not None and now < self._now:
                raise ProtocolError(f"time went backwards: now={now} after now={self._now}")
            if quick and not self._timing.every_call:
                raise ProtocolError("quick=True: with trigger='interval' the engine chooses the pass itself")
            fids = finish_ids if type(finish_ids) is list else _id_list("finish_ids", finish_ids)[0]
            if fids:
                fin_t = _ints("finish_times", finish_times, len(fids), True)
                fin_j = self._finish_rows(fids)
            else:
                if finish_times is None or len(finish_times):
                    _ints("finish_times", finish_times, 0, True)        # (raises: says what is wrong)
                fin_t = fin_j = _EMPTY
            sids, int_sids = (submit_ids, False) if type(submit_ids) is list else _id_list("submit_ids", submit_ids)
            n = len(sids)
            sub_user = part = qos = None
            if n:
                sub_t = _ints("submit_times", submit_times, n, True)
                sub_units = _ints("units", units, n, True)
                sub_req = _ints("requested", requested, n, True)
                sub_run = _ints("run", run, n)
                if user is not None:
                    sub_user = _ints("user", user, n)
                if partition is not None or queue is not None:
                    part, qos = _ints("partition", partition, n), _ints("queue", queue, n)
                self._check_new_ids(sids, int_sids)
                if sub_run is None:
                    sub_run = _minus_ones(n)
            else:
                if (len(submit_times) or len(units) or len(requested) or (run is not None and len(run))
                        or (user is not None and len(user)) or (partition is not None and len(partition))
                        or (queue is not None and len(queue))):
                    self._no_submissions(submit_times, units, requested, run, user, partition, queue)
                sub_t = sub_units = sub_req = sub_run = _EMPTY
            last = self._now if self._now is not None else -MAX_TIME
            if n and self._clairvoyant and min(sub_run) < 0:
                k = int(np.flatnonzero(np.asarray(sub_run) < 0)[0])
                raise ProtocolError(f"submit {k}: the clairvoyant predictor needs job {sids[k]!r}'s run time")
            reject = np.zeros(n, dtype=np.int8) if n else _NO_REJECT
            # per-event work in Python (plugins, co-allocation, the node model, an outage ending in the
            # call) goes through advance(); else one core call checks, applies and passes
            fast = self._batch_fast and not (self._timed and min(self._timed)[0] <= now)
            core = self._core
            est, dense, fpart, fqos = sub_req, None, _EMPTY_F, _EMPTY_F
            if fast and n:
                est, fpart, fqos = self._estimates_and_factors(n, sub_req, sub_run, part, qos)
                dense = self._known_users(sub_user, n)
            elif fast:
                dense = _EMPTY
            if dense is None:
                # the check alone first: a user not seen yet is registered only for a job accepted
                problem, i, nrej = core.batch_call(now, last, _RUNNING, MAX_TIME, False, 0, 0, False, fin_j, fin_t,
                                                   sub_t, sub_units, sub_req, sub_req, sub_run, _filled(n, 0),
                                                   _EMPTY_F, _EMPTY_F, reject)
                if problem:
                    self._refuse(problem, i, now, last, fids, fin_j, fin_t, sids, sub_t, sub_units, sub_req, sub_run)
                if not fast:
                    return self._through_objects(now, quick, fids, fin_t, sids, sub_t, sub_units, sub_req, sub_run,
                                                 sub_user, part, qos)
                dense = self._register_users(sub_user, reject, n, nrej)
            timing = self._timing
            if timing.every_call:
                kind, due = (1 if quick else 0), 0
            else:                               # the interval trigger chooses the pass
                kind, due = 2, (INT64_MIN if timing.next_full is None else timing.next_full)
            out = core.batch_call(now, last, _RUNNING, MAX_TIME, True, kind, due, self.report_reservations, fin_j,
                                  fin_t, sub_t, sub_units, est, sub_req, sub_run, dense, fpart, fqos, reject)
            if out[0]:
                self._refuse(out[0], out[1], now, last, fids, fin_j, fin_t, sids, sub_t, sub_units, sub_req, sub_run)
            if out[8] == 2 and not timing.every_call:
                timing.full_done(now, out[9])
            return self._after_arrays(now, out, fids, fin_t, sids, int_sids, sub_t, sub_units, sub_req, reject)

    # ---------------------------------------------------------------- checks
    @staticmethod
    def _no_submissions(*columns):
        # a call without submissions may give its columns only empty
        names = ("submit_times", "units", "requested", "run", "user", "partition", "queue")
        for name, value in zip(names, columns):
            if value is not None and len(value):
                raise ProtocolError(f"{name} has {len(value)} values, expected 0 (one per submitted job)")

    def _finish_rows(self, fids):
        if not fids:
            return _EMPTY
        index = self._index
        try:
            rows = [index.get(x) for x in fids]
        except TypeError:
            rows = [self._known(x) for x in fids]
        if None in rows:
            k = rows.index(None)
            x, why = fids[k], "is unknown"
            try:
                if x in self._rejected:
                    why = f"was rejected ({self._rejected[x]})"
            except TypeError:
                pass
            raise ProtocolError(f"finish {k}: cannot finish job {x!r}: it {why}")
        if len(set(rows)) != len(rows):
            seen = set()
            for k, j in enumerate(rows):
                if j in seen:
                    raise ProtocolError(f"finish {k}: cannot finish job {fids[k]!r}: it is already finished "
                                        "earlier in this call")
                seen.add(j)
        return array("q", rows)

    def _check_new_ids(self, sids, ints):
        if not sids:
            return
        index, rejected = self._index, self._rejected
        if not ints:
            for k, x in enumerate(sids):
                if type(x) is not str and type(x) is not int:
                    problem = bad_id(x)
                    if problem:
                        raise ProtocolError(f"submit {k}: job id {x!r} {problem}")
        elif min(sids) < INT64_MIN or max(sids) > INT64_MAX:
            raise ProtocolError("submit_ids: ids outside 64 bits in an integer array")
        if rejected:
            for k, x in enumerate(sids):
                if x in index or x in rejected:
                    raise ProtocolError(f"submit {k}: duplicate job id {x!r}")
        else:
            for k, x in enumerate(sids):
                if x in index:
                    raise ProtocolError(f"submit {k}: duplicate job id {x!r}")
        if len(sids) > 1 and len(set(sids)) != len(sids):
            seen = set()
            for k, x in enumerate(sids):
                if x in seen:
                    raise ProtocolError(f"submit {k}: duplicate job id {x!r}")
                seen.add(x)

    def _refuse(self, problem, i, now, last, fids, fin_j, fin_t, sids, sub_t, sub_units, sub_req, sub_run):
        if problem <= 5:
            j = int(fin_j[i])
            start = int(self._core.values_of("start", np.array([j], np.int64))[0])
            what = _PROBLEMS[problem]
            if problem == 4:
                state = int(self._core.values_of("state", np.array([j], np.int64))[0])
                what = what.replace("not running", {int(JobState.JS_PENDING): "pending",
                                                    int(JobState.JS_DONE): "already finished",
                                                    int(JobState.JS_KILLED): "killed by a failure"}.get(
                                                        state, "not running"))
            msg = what.format(t=int(fin_t[i]), now=now, last=last, id=fids[i], start=start)
            raise ProtocolError(f"finish {i} (job {fids[i]!r}): {msg}")
        msg = _PROBLEMS[problem].format(t=int(sub_t[i]), now=now, last=last, id=sids[i], units=int(sub_units[i]),
                                        req=int(sub_req[i]), run=int(sub_run[i]))
        raise ProtocolError(f"submit {i} (job {sids[i]!r}): {msg}")

    # ---------------------------------------------------------------- application
    def _through_objects(self, now, quick, fids, fin_t, sids, sub_t, sub_units, sub_req, sub_run, sub_user, part, qos):
        events = [(t, 0, k, Finish(x, t)) for k, (x, t) in enumerate(zip(fids, fin_t.tolist()))]
        opt = {name: a for name, a in (("user", sub_user), ("partition", part), ("queue", qos)) if a is not None}
        for k, x in enumerate(sids):
            more = {name: int(a[k]) for name, a in opt.items()}
            runk = int(sub_run[k])
            events.append((int(sub_t[k]), 1, k, Submit(Job(x, int(sub_t[k]), int(sub_units[k]), int(sub_req[k]),
                                                           run=None if runk < 0 else runk, **more))))
        events.sort(key=lambda e: e[:3])
        out = self.advance(now, [e[3] for e in events], quick=quick)
        started = [d for d in out if isinstance(d, Start) and not d.secondary]
        rej = [d for d in out if isinstance(d, Rejected)]
        res = [d for d in out if isinstance(d, Reserve)]
        lens = np.cumsum([0] + [len(d.units) for d in started])
        return BatchDecisions(now, _ids_array([d.job_id for d in started], self._int_ids), lens.astype(np.int64),
                              np.concatenate([d.units for d in started]).astype(np.int64) if started else _EMPTY,
                              _ids_array([d.job_id for d in rej], self._int_ids), tuple(d.reason for d in rej),
                              _ids_array([d.job_id for d in res], self._int_ids),
                              np.array([d.at for d in res], dtype=np.int64))

    def _estimates_and_factors(self, n, sub_req, sub_run, part, qos):
        sc = self._scoring
        est = sub_req if self._est_is_req else np.ascontiguousarray(sc.predictor.given(sub_req, sub_run),
                                                                      dtype=np.int64)
        if not self._multifactor:
            return est, _EMPTY_F, _EMPTY_F
        fpart, fqos = sc.job_factors(np.asarray(part) if part is not None else _minus_ones(n),
                                     np.asarray(qos) if qos is not None else _minus_ones(n))
        return est, np.ascontiguousarray(fpart, dtype=np.float64), np.ascontiguousarray(fqos, dtype=np.float64)

    def _known_users(self, sub_user, n):
        # the dense indices of the submissions' users, or None if one is not known yet
        users = self._users
        if sub_user is None:
            u = users.get(-1)
            return None if u is None else _filled(n, u)
        try:
            return array("q", [users[x] for x in sub_user.tolist()])
        except KeyError:
            return None

    def _register_users(self, sub_user, reject, n, nrej):
        # the dense indices of the submissions' users, new users of accepted jobs registered
        sc, users = self._scoring, self._users
        known = len(users)
        if sub_user is None:
            dense = _filled(n, users.setdefault(-1, known) if nrej < n else 0)
        else:
            dense = array("q", [users.setdefault(x, len(users)) if not r else 0
                                for x, r in zip(sub_user.tolist(), reject.tolist())])
        if len(users) > known:
            sc.attach_users(self._core, len(users), lambda: [str(x) for x in users])
        return dense

    def _after_arrays(self, now, out, fids, fin_t, sids, int_sids, sub_t, sub_units, sub_req, reject):
        # the engine's own records of an applied call, and its decisions
        _, nrej, first, started, offsets, units, reserved, planned, ran, _ = out
        n = len(sids)
        ids, index, jobs = self._ids, self._index, self._jobs
        rej_ids, reasons = [], []
        if nrej:
            for x, code, k in zip(sids, reject.tolist(), range(n)):
                if code:
                    why = (f"larger than the cluster: asks {int(sub_units[k]):,} units of {self.cluster.units:,}"
                           if code == 1 else f"no requested time (requested {int(sub_req[k])})")
                    self._rejected[x] = why
                    rej_ids.append(x)
                    reasons.append(why)
                else:
                    index[x] = len(ids)
                    ids.append(x)
                    jobs.append(None)
        elif n:
            for x in sids:
                index[x] = len(ids)
                ids.append(x)
            jobs.extend([None] * n)
        if n and not int_sids and self._int_ids:
            self._int_ids = all(type(x) is int and INT64_MIN <= x <= INT64_MAX for x in sids)
        counts = self._counts
        counts["submitted"] += n
        counts["rejected"] += nrej
        counts["finished"] += len(fids)
        counts["passes"] += ran > 0
        counts["started"] += len(started)
        if n:
            last = sub_t[-1]
            self._last_event = int(fin_t[-1]) if fids and fin_t[-1] > last else int(last)
        elif fids:
            self._last_event = int(fin_t[-1])
        self._now = now
        as_int = self._int_ids
        none = _EMPTY if as_int else _EMPTY_O
        return BatchDecisions(now, _ids_array([ids[j] for j in started.tolist()], as_int) if len(started) else none,
                              offsets, units, _ids_array(rej_ids, as_int) if nrej else none, tuple(reasons),
                              none if reserved is None else _ids_array([ids[j] for j in reserved.tolist()], as_int),
                              _EMPTY if reserved is None else planned)
