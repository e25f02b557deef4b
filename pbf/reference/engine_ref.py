"""The oracle: the scheduling cycle of DESIGN §4 written plainly, in pure Python.

Slow and obvious on purpose. Unit sets are Python ints (bit i = unit i); the profile is a list of
``[begin, free_units]`` slots. The compiled core (``ext/_core.pyx``) must make exactly the same
decisions — same jobs started, same units, same reservations — which the property tests check.

Semantics in brief (see the compiled core for the same in C):

* Pending jobs are ordered by (priority key, submit, arrival); the key comes from a priority function
  of :mod:`pbf.plugins.priorities` (time-dependent ones are recomputed before passes, at most every
  ``period`` seconds) or Slurm's multifactor (:mod:`pbf.plugins.multifactor`).
* Estimates: given with the job, or predicted at submission (``ave2``, ``regression``) from the
  user's completed and running jobs; a running job whose planned end is not in the future is
  corrected before each full pass (:func:`pbf.plugins.corrections.correct`).
* A full pass builds the profile: the units free now from ``now``; at each distinct planned end of a
  running job (start + estimate, never before now + 1, rounded up to ``bf_resolution``) its units
  come back. It then walks the queue: a job starts now if its units are free throughout
  [now, now + estimate); else, while reservations are left, it reserves the earliest start where they
  are (within ``bf_window``), blocking those units in the profile for the rest of the pass; else it is
  skipped. With a resolution, a placement at t holds its units over [t, round_up(t + estimate)).
  With ``order="sjbf"`` the walk stops at the last reservation and the remaining jobs are
  tried, shortest estimate first, for a start now only. With ``resv_stop`` (Slurm 17.02's table-size
  stop), once no reservation is left the walk ends at the first job that would need one.
* Unit choice: a job starting now takes first the units that later slots need (earliest first); a
  reservation takes first the units busy just before its start (latest first); then lowest index.
* A quick pass (the interval trigger's main scheduler) starts jobs in order while they fit now and
  stops at the first that does not.
* Outages: a drained or failed unit takes no new job until it comes back (at its ``until``, or at a
  resume); a failure stops the running jobs holding a failed unit (requeued with their submission's
  estimate and priority, or killed); a drained unit's running job finishes, and the unit stays
  down. In the profile a job's end brings back only its units that are up; a down unit comes back
  at its until (never when there is none) -- held by a running job, at the later of that and the
  job's planned end. A replay applies an instant's completions, then its outages, then its
  arrivals; once no outage is left to come, a pending job wider than the units that will ever be
  up again is rejected.
"""
from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING

from ..codes import ExitReason, How, JobState, OutageKind, RejectReason
from ..fairshare import fair_tree_factors
from ..plugins.corrections import correct
from ..plugins.priorities import FCFS, SJF
from ..plugins.regression import RegressionModel, features, weight

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    import numpy as np

    from ..plugins.multifactor import Multifactor
    from ..plugins.priorities import Priority

INF = float("inf")
# the codes of the compiled core (pbf/_codes.pxd), as plain ints
NEW, PENDING, RUNNING, DONE, REJECTED = (int(JobState.JS_NEW), int(JobState.JS_PENDING), int(JobState.JS_RUNNING),
                                         int(JobState.JS_DONE), int(JobState.JS_REJECTED))
KILLED = int(JobState.JS_KILLED)
DRAIN, FAIL, RESUME = int(OutageKind.OK_DRAIN), int(OutageKind.OK_FAIL), int(OutageKind.OK_RESUME)
HOW_MAIN, HOW_BACKFILL = int(How.HOW_MAIN), int(How.HOW_BACKFILL)
RJ_OVERSIZE, RJ_NO_ESTIMATE, RJ_NO_UNITS = (int(RejectReason.RJ_OVERSIZE), int(RejectReason.RJ_NO_ESTIMATE),
                                            int(RejectReason.RJ_NO_UNITS))
RJ_UNITS_DOWN = int(RejectReason.RJ_UNITS_DOWN)
EX_END, EX_MAX_JOB_TEST, EX_QUICK_BLOCKED = (int(ExitReason.EX_END), int(ExitReason.EX_MAX_JOB_TEST),
                                             int(ExitReason.EX_QUICK_BLOCKED))
EX_RESV_TABLE = int(ExitReason.EX_RESV_TABLE)


def _lowest(bits, n):
    """The n lowest set bits of ``bits`` (an int)."""
    out = 0
    while n > 0 and bits:
        low = bits & -bits
        out |= low
        bits ^= low
        n -= 1
    return out


class _Job:
    __slots__ = ("submit", "units", "est", "run", "state", "start", "end", "how", "reason", "resv",
                 "seq", "bits", "req", "user", "key", "pred0", "ncorr", "acc", "part", "qos", "x",
                 "requeues", "lost")

    def __init__(self, submit, units, est, run, req, user, part, qos):
        self.submit, self.units, self.est, self.run = submit, units, est, run
        self.state, self.start, self.end, self.how, self.reason, self.resv = NEW, -1, -1, 0, 0, -1
        self.seq, self.bits = -1, 0
        self.req, self.user, self.part, self.qos = req, user, part, qos
        self.key, self.pred0, self.ncorr, self.acc, self.x = 0.0, -1, 0, -1, None
        self.requeues, self.lost = 0, 0


class _User:
    __slots__ = ("n_done", "last", "sum_run", "sum_units", "last_end", "running", "usage", "raw")

    def __init__(self):
        self.n_done, self.last, self.sum_run, self.sum_units, self.last_end = 0, [0, 0, 0], 0, 0, -1
        self.running = []      # job indices, in start order
        self.usage, self.raw = 0.0, 0


class ReferenceCore:
    """Pure-Python twin of ``pbf._core.Core`` (the same configuration attributes and results)."""

    def __init__(self, units: int, reservations: int = 1, max_job_test: int = -1, bf_window: int = 0,
                 bf_resolution: int = 0, sjbf: bool = False, prio_sjf: bool = False,
                 priority: Priority | Multifactor | None = None, predictor: str = "given",
                 regression: Sequence[float] | None = None, correction: str = "incremental",
                 enabled: bool = True, resv_stop: bool = False) -> None:
        """``priority``: a :mod:`pbf.plugins.priorities` built-in or a
        :class:`~pbf.plugins.Multifactor` (default FCFS; ``prio_sjf`` = SJF); ``predictor``:
        ``given``, ``ave2`` or ``regression`` (``regression``: the (eta, lam, over squared, under
        squared, weight) settings); ``correction``: a :mod:`pbf.plugins.corrections` name."""
        self.units = units
        self.all = (1 << units) - 1
        self.free = self.all
        self.resv_max, self.max_job_test = reservations, max_job_test
        self.bf_window, self.bf_resolution = bf_window, bf_resolution
        self.sjbf, self.enabled, self.resv_stop = sjbf, enabled, resv_stop
        self.priority = priority if priority is not None else (SJF() if prio_sjf else FCFS())
        self.multifactor = type(self.priority).__name__ == "Multifactor"
        self.predictor, self.correction = predictor, correction
        self.model = RegressionModel(*regression) if predictor == "regression" else None
        self.jobs, self.pending, self.running = [], [], []
        self.users = []
        self.nseq = 0
        self.passes = []
        self.next_prio, self.last_calc = -INF, None
        self.fsf = []          # Fair Tree: each user's factor at the last calc (1 before)
        self.down, self.until = 0, {}      # units out of service, and when each comes back (INF: never)
        self.requeue, self.final = True, False
        self.killed = self.requeued = self.lost = 0

    # jobs -----------------------------------------------------------------
    def add_job(self, submit: int, units: int, est: int, run: int = -1, req: int | None = None, user: int = 0,
                part: float = 1.0, qos: float = 0.0) -> int:
        """Add a job (not yet submitted); ``req``: the requested time (default ``est``). Returns its index."""
        self.jobs.append(_Job(submit, units, est, run, est if req is None else req, user, part, qos))
        while len(self.users) <= user:
            self.users.append(_User())
        return len(self.jobs) - 1

    def _order(self, j):
        job = self.jobs[j]
        return (job.key, job.submit, job.seq)

    def _key(self, j, now):
        job = self.jobs[j]
        if self.multifactor:
            total = 0.0
            for u in self.users:
                total += u.usage
            fs = None
            if self.priority.fairshare == "fair-tree":
                fs = self.fsf[job.user] if job.user < len(self.fsf) else 1.0
            return -float(self.priority.priority(job.units, job.submit, self.users[job.user].usage, total,
                                                 len(self.users), job.part, job.qos, self.units, now, fs_factor=fs,
                                                 req=job.req))
        return self.priority.key(job.est, job.units, job.submit, now)

    def _predict(self, j):
        job = self.jobs[j]
        u = self.users[job.user]
        if self.predictor == "ave2":
            if u.n_done < 2:
                return job.req
            return min(max((u.last[0] + u.last[1]) // 2, 1), job.req)
        starts = [self.jobs[r].start for r in u.running]
        units = [self.jobs[r].units for r in u.running]
        job.x = features(job.req, job.units, job.submit, job.submit,
                         (u.n_done, u.last, u.sum_run, u.sum_units, u.last_end), starts, units)
        return self.model.predict(job.x, job.req)

    def submit(self, j: int) -> int:
        """Submit job ``j``: it is queued (PENDING) or rejected; returns its new state."""
        job = self.jobs[j]
        if job.units <= 0:
            job.state, job.reason = REJECTED, RJ_NO_UNITS
            return job.state
        if job.units > self.units:
            job.state, job.reason = REJECTED, RJ_OVERSIZE
            return job.state
        if self.final and job.units > self.units - self._units_lost():
            job.state, job.reason = REJECTED, RJ_UNITS_DOWN
            return job.state
        if job.req <= 0:             # (under every predictor: runs then cover the same jobs)
            job.state, job.reason = REJECTED, RJ_NO_ESTIMATE
            return job.state
        if self.predictor != "given":
            job.est = self._predict(j)
        if job.est <= 0:
            job.state, job.reason = REJECTED, RJ_NO_ESTIMATE
        else:
            job.pred0 = job.est
            job.state, job.seq = PENDING, self.nseq
            self.nseq += 1
            job.key = self._key(j, job.submit)
            bisect.insort(self.pending, j, key=self._order)
        return job.state

    def finish(self, j: int, now: int) -> None:
        """Job ``j`` completes at ``now``: its units come back and its user's history is updated."""
        job = self.jobs[j]
        self.free |= job.bits & ~self.down
        self.running.remove(j)
        job.state, job.end = DONE, now
        u = self.users[job.user]
        u.running.remove(j)
        u.raw += job.units * (now - job.acc)
        run = now - job.start
        if self.predictor == "regression" and job.pred0 >= 0:
            self.model.fit(job.x, float(run), weight(self.model.weight_kind, job.units, max(run, 1)))
        u.last = [run, u.last[0], u.last[1]]
        u.n_done += 1
        u.sum_run += run
        u.sum_units += job.units
        u.last_end = now

    def _start(self, j, bits, now, how):
        job = self.jobs[j]
        assert bits & ~self.free == 0 and bin(bits).count("1") == job.units
        self.free &= ~bits
        job.bits, job.state, job.start, job.how, job.resv = bits, RUNNING, now, how, -1
        job.acc = now
        self.users[job.user].running.append(j)
        if job.run >= 0:
            job.end = now + job.run
        self.running.append(j)

    # outages ------------------------------------------------------------------
    def _units_lost(self):
        return sum(1 for u, t in self.until.items() if t == INF and self.down >> u & 1)

    def outage(self, now: int, kind: int, bits: int, until: float = INF) -> None:
        """Apply one outage at ``now``: DRAIN or FAIL ``bits`` until ``until`` (INF: until a
        resume), or RESUME those of ``bits`` whose until is at most ``until`` (INF: all)."""
        if kind == RESUME:
            back = 0
            for u in range(self.units):
                if bits >> u & 1 and self.down >> u & 1 and self.until[u] <= until:
                    back |= 1 << u
            held = 0
            for r in self.running:
                held |= self.jobs[r].bits
            self.down &= ~back
            self.free |= back & ~held
        else:
            for u in range(self.units):
                if bits >> u & 1:
                    self.until[u] = max(self.until[u], until) if self.down >> u & 1 else until
            self.down |= bits
            self.free &= ~bits
            if kind == FAIL:
                for r in [r for r in self.running if self.jobs[r].bits & bits]:
                    self._kill(r, now)
        if self.final:
            self.reject_unrunnable()

    def _kill(self, j, now):
        job = self.jobs[j]
        self.free |= job.bits & ~self.down
        self.running.remove(j)
        u = self.users[job.user]
        u.running.remove(j)
        u.raw += job.units * (now - job.acc)
        job.lost += job.units * (now - job.start)
        self.lost += job.units * (now - job.start)
        if self.requeue:
            self.requeued += 1
            job.requeues += 1
            job.state, job.start, job.end, job.how, job.resv = PENDING, -1, -1, 0, -1
            job.est, job.ncorr = job.pred0, 0
            bisect.insort(self.pending, j, key=self._order)
        else:
            self.killed += 1
            job.state, job.end = KILLED, now

    def reject_unrunnable(self) -> None:
        """(No outage left to come) reject the pending jobs wider than the units ever up again."""
        up = self.units - self._units_lost()
        for j in self.pending:
            if self.jobs[j].units > up:
                self.jobs[j].state, self.jobs[j].reason = REJECTED, RJ_UNITS_DOWN
        self.pending = [j for j in self.pending if self.jobs[j].state == PENDING]

    # priorities and corrections -------------------------------------------------
    def _refresh_priorities(self, now):
        if not self.priority.dynamic:
            return
        if self.priority.period > 0 and now < self.next_prio:
            return
        if self.multifactor:
            decay = 1.0
            if self.last_calc is not None and self.priority.half_life > 0 and now > self.last_calc:
                decay = math.pow(2.0, -float(now - self.last_calc) / float(self.priority.half_life))
            for r in self.running:
                job = self.jobs[r]
                self.users[job.user].raw += job.units * (now - job.acc)
                job.acc = now
            for u in self.users:
                u.usage = u.usage * decay + float(u.raw)
                u.raw = 0
            self.last_calc = now
            tree = self.priority.tree_for(len(self.users))
            if tree is not None:
                self.fsf = list(fair_tree_factors(tree, [u.usage for u in self.users]))
        self.next_prio = now + self.priority.period
        for j in self.pending:
            self.jobs[j].key = self._key(j, now)
        self.pending.sort(key=self._order)

    def _apply_corrections(self, now):
        for r in self.running:
            job = self.jobs[r]
            job.est, job.ncorr = correct(self.correction, job.est, job.pred0, job.ncorr, job.req, job.start, now)

    # profile ----------------------------------------------------------------
    def _round_up(self, t):
        r = self.bf_resolution
        return t if r <= 1 else -(-t // r) * r

    def _profile(self, now):
        ends = {}
        for j in self.running:
            job = self.jobs[j]
            e = self._round_up(max(job.start + job.est, now + 1))
            ends[e] = ends.get(e, 0) | (job.bits & ~self.down)
            for u in range(self.units):
                if (job.bits & self.down) >> u & 1 and self.until[u] != INF:
                    t = max(self._round_up(max(self.until[u], now + 1)), e)
                    ends[t] = ends.get(t, 0) | 1 << u
        held = 0
        for j in self.running:
            held |= self.jobs[j].bits
        for u in range(self.units):
            if (self.down & ~held) >> u & 1 and self.until[u] != INF:
                t = self._round_up(max(self.until[u], now + 1))
                ends[t] = ends.get(t, 0) | 1 << u
        slots = [[now, self.free]]
        for e in sorted(ends):
            if ends[e]:        # (a job whose units are all down brings none back: no boundary)
                slots.append([e, slots[-1][1] | ends[e]])
        return slots

    @staticmethod
    def _end(slots, i):
        return slots[i + 1][0] if i + 1 < len(slots) else INF

    def _find_start(self, slots, k, d, now, now_only):
        for i, (t, _) in enumerate(slots):
            if self.bf_window > 0 and t > now + self.bf_window:
                return None
            cand = self.all
            stop = self._round_up(t + d)
            for begin, bits in slots[i:]:
                if begin >= stop:
                    break
                cand &= bits
            if bin(cand).count("1") >= k:
                return t, i, cand
            if now_only:
                return None
        return None

    def _choose(self, slots, k, t, d, i, cand, now):
        chosen, need = 0, k
        if t == now:
            order = [bits for begin, bits in slots[i:] if begin >= self._round_up(t + d)]
        else:
            order = [bits for begin, bits in slots if begin < t][::-1]
        for bits in order:
            if need == 0:
                break
            take = _lowest(cand & ~bits, need)
            chosen |= take
            cand &= ~take
            need -= bin(take).count("1")
        if need:
            chosen |= _lowest(cand, need)
        return chosen

    def _commit(self, slots, t, d, i, chosen):
        stop = self._round_up(t + d)   # placements hold units until their rounded end
        j = i
        while j < len(slots) and slots[j][0] < stop:
            if self._end(slots, j) > stop:
                slots.insert(j + 1, [stop, slots[j][1]])
            slots[j][1] &= ~chosen
            j += 1
        # neighbouring slots with the same free units are merged (no decision depends on the
        # boundary between them; it keeps the slot count bounded)
        slots[:] = [slot for n, slot in enumerate(slots) if n == 0 or slot[1] != slots[n - 1][1]]

    # passes ------------------------------------------------------------------
    def full_pass(self, now: int) -> tuple[list[int], list[int]]:
        """One backfill pass at ``now``; returns the jobs started and the jobs given a reservation."""
        self._refresh_priorities(now)
        self._apply_corrections(now)
        if not self.enabled:
            return self.quick_pass(now)
        slots = self._profile(now)
        self._built = False
        started, reserved = [], []
        depth, resv_left, blocked, exit_reason = 0, self.resv_max, False, EX_END
        for j in self.pending:
            self.jobs[j].resv = -1
        queue = list(self.pending)
        p = 0
        phase2 = None
        while p < len(queue):
            if self.sjbf and resv_left == 0:
                phase2 = p
                break
            j = queue[p]
            p += 1
            if 0 <= self.max_job_test <= depth:
                exit_reason = EX_MAX_JOB_TEST
                break
            depth += 1
            job = self.jobs[j]
            # (the compiled pass builds its profile only at the first job that does not fit now;
            # the slot count it reports follows that, so this one does too)
            self._built = self._built or job.units > bin(self.free).count("1")
            found = self._find_start(slots, job.units, job.est, now,
                                     now_only=(resv_left == 0 and not self.resv_stop))
            if found and found[0] > now and resv_left == 0 and self.resv_stop:
                exit_reason = EX_RESV_TABLE      # it would need a reservation beyond the limit
                break
            if found and found[0] == now:
                t, i, cand = found
                chosen = self._choose(slots, job.units, t, job.est, i, cand, now)
                self._commit(slots, t, job.est, i, chosen)
                self._start(j, chosen, now, HOW_BACKFILL if blocked else HOW_MAIN)
                started.append(j)
            elif found and resv_left != 0:
                t, i, cand = found
                chosen = self._choose(slots, job.units, t, job.est, i, cand, now)
                self._commit(slots, t, job.est, i, chosen)
                job.resv = t
                reserved.append(j)
                resv_left -= 1
                blocked = True
            else:
                blocked = True
        if phase2 is not None and exit_reason == EX_END:
            self._built = True
            rest = sorted(range(phase2, len(queue)), key=lambda q: (self.jobs[queue[q]].est, q))
            for q in rest:
                if 0 <= self.max_job_test <= depth:
                    exit_reason = EX_MAX_JOB_TEST
                    break
                depth += 1
                j = queue[q]
                job = self.jobs[j]
                found = self._find_start(slots, job.units, job.est, now, now_only=True)
                if found:
                    t, i, cand = found
                    chosen = self._choose(slots, job.units, t, job.est, i, cand, now)
                    self._commit(slots, t, job.est, i, chosen)
                    self._start(j, chosen, now, HOW_BACKFILL)
                    started.append(j)
        self.pending = [j for j in self.pending if self.jobs[j].state == PENDING]
        self.passes.append(("full", now, depth, len(started), len(reserved), exit_reason,
                            len(slots) if self._built else 0))
        return started, reserved

    def quick_pass(self, now: int) -> tuple[list[int], list[int]]:
        """The main scheduler's pass at ``now`` (starts jobs in order while they fit); returns the jobs
        started and an empty list (it makes no reservation)."""
        self._refresh_priorities(now)
        started, depth, exit_reason = [], 0, EX_END
        for j in self.pending:
            job = self.jobs[j]
            depth += 1
            if job.units > bin(self.free).count("1"):
                exit_reason = EX_QUICK_BLOCKED
                break
            self._start(j, _lowest(self.free, job.units), now, HOW_MAIN)
            started.append(j)
        self.pending = [j for j in self.pending if self.jobs[j].state == PENDING]
        self.passes.append(("quick", now, depth, len(started), 0, exit_reason, 0))
        return started, []


def reference_replay(submit: Sequence[int] | np.ndarray, units: Sequence[int] | np.ndarray,
                     est: Sequence[int] | np.ndarray, run: Sequence[int] | np.ndarray, total_units: int,
                     trigger: str = "event", bf_interval: int = 30, req: Sequence[int] | np.ndarray | None = None,
                     user: Sequence[int] | np.ndarray | None = None, part: Sequence[float] | np.ndarray | None = None,
                     qos: Sequence[float] | np.ndarray | None = None,
                     outages: Iterable[tuple[int, int, float, int]] | None = None, requeue: bool = True,
                     **config: Any) -> ReferenceCore:
    """Replay jobs (in submit order) through :class:`ReferenceCore` with the compiled replay's event
    loop. ``outages``: (time, kind, until, unit bits) events in the order the core applies them
    (until INF: none). Returns the core (its ``jobs`` hold state, start, end, how, reason, bits)."""
    core = ReferenceCore(total_units, **config)
    outages = list(outages or [])
    core.requeue = requeue
    core.final = not outages
    k = 0
    n = len(submit)
    for i in range(n):
        core.add_job(int(submit[i]), int(units[i]), int(est[i]), int(run[i]),
                     req=None if req is None else int(req[i]), user=0 if user is None else int(user[i]),
                     part=1.0 if part is None else float(part[i]), qos=0.0 if qos is None else float(qos[i]))
    ends = []  # (end, job) of running jobs
    nxt, now, next_bf = 0, None, -INF
    import heapq
    while True:
        ts = core.jobs[nxt].submit if nxt < n else INF
        te = ends[0][0] if ends else INF
        to = outages[k][0] if k < len(outages) else INF
        tb = next_bf if trigger == "interval" and core.pending else INF
        t = min(ts, te, to, tb)
        if t == INF:
            return core
        if now is not None and t < now:
            t = now
        now = t
        events = False
        while ends and ends[0][0] == t:
            _, j = heapq.heappop(ends)
            core.finish(j, t)
            events = True
        while k < len(outages) and outages[k][0] == t:
            _, kind, until, bits = outages[k]
            k += 1
            core.final = k == len(outages)
            core.outage(t, kind, bits, until)
            ends = [(e, j) for e, j in ends if core.jobs[j].state == RUNNING]
            heapq.heapify(ends)
            events = True
        while nxt < n and core.jobs[nxt].submit == t:
            core.submit(nxt)
            nxt += 1
            events = True
        if not core.pending:
            continue
        if trigger == "event":
            started, _ = core.full_pass(t)
        elif t >= next_bf:
            started, _ = core.full_pass(t)
            next_bf = t + bf_interval
        elif events:
            started, _ = core.quick_pass(t)
        else:
            started = []
        for j in started:
            heapq.heappush(ends, (core.jobs[j].end, j))
