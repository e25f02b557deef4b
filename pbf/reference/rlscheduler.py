"""RLScheduler's job-selection loop in plain Python: the oracle of the compiled episodes
(:class:`pbf.rl.JobSelectionEnv`) and the peer their speed is compared with (``pbf bench --slice rl``).

It keeps the data structures of RLScheduler's ``HPCEnv`` and their costs: job objects in Python
lists, the queue and the running list re-sorted (stably) where it sorts them, the observation built
job by job at every step, and the window scheduled by SJF and F1 at every reset (the baselines its
reward is compared with). The rules are those of ``docs/rl.md``: the pick is binding, time moves one
event at a time until the picked job fits (the next arrival if it comes no later than the next
release, else the release), with RLScheduler's backfilling (``compat=True``: one shadow time, jobs
ending strictly before it) or EASY's (``compat=False``: the reservation planned again at every
event, jobs ending by the shadow time or fitting in the extra nodes) while it waits, if ``backfill``.
``compat`` also chooses which 128 queued jobs are shown and how WFP3 and UNICEP read the wait.
Only bounded slowdown is scored and there is no skip action.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..rl.trace import RLTrace

__all__ = ["ReferenceJobSelectionEnv", "HEURISTICS"]

ROWS, FEATURES = 128, 8
_MAX_WAIT = 43200.0
_EPS = 1e-5
_PAD = [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0]

HEURISTICS = ("fcfs", "wfp3", "unicep", "sjf", "f1", "smallest", "f2")


class _Job:
    __slots__ = ("idx", "submit", "run", "req", "procs", "nodes", "static", "start")

    def __init__(self, idx, submit, run, req, procs, nodes, static):
        self.idx, self.submit, self.run, self.req, self.procs, self.nodes = idx, submit, run, req, procs, nodes
        self.static = static                  # the features that do not change (columns 1-6)
        self.start = -1


def _log10(x, guarded=True):
    # C's log10: -inf at 0 when unguarded; RLScheduler guards the values <= 0 as 0.1
    if x > 0:
        return math.log10(x)
    return math.log10(0.1) if guarded else -math.inf


def _divide(a, b):
    # IEEE division, as the compiled episodes divide (a job may ask for no time in compat mode)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(a) / np.float64(b))


def _keys(env):
    def wait(j):
        # RLScheduler reads a waiting job's scheduled time (-1) as the current time
        return float(-1 - j.submit) if env.compat else float(env.now - j.submit)
    return {
        "fcfs": lambda j: j.submit,
        "sjf": lambda j: (j.req, j.submit),
        "smallest": lambda j: (j.procs, j.submit),
        "f1": lambda j: _log10(j.req) * j.procs + 870.0 * _log10(j.submit),
        "f2": lambda j: math.sqrt(j.req) * j.procs + 25600.0 * _log10(j.submit, guarded=not env.compat),
        "wfp3": lambda j: -math.pow(_divide(wait(j), j.req), 3.0) * j.procs,
        "unicep": lambda j: -_divide(wait(j) + 1e-15, math.log2(j.procs + 1e-15) * j.req),
    }


class ReferenceJobSelectionEnv:
    """One trace (an :class:`pbf.rl.RLTrace`, loaded with the same ``compat``), windows of it."""

    def __init__(self, trace: RLTrace, *, compat: bool = True, backfill: bool = False, baselines: bool = True):
        if trace.compat != bool(compat):
            raise ValueError(f"trace {trace.name} was loaded with compat={trace.compat}, not {bool(compat)}")
        self.t = trace
        self.compat, self.backfill, self.baselines = bool(compat), bool(backfill), baselines
        self.key = _keys(self)
        self.ppn = trace.procs_per_node
        self.total = trace.total_nodes
        feats = trace.features
        self.all = [_Job(i, int(trace.submit[i]), int(trace.run[i]), int(trace.req[i]), int(trace.procs[i]),
                         int(trace.nodes[i]), [float(x) for x in feats[i, 1:7]]) for i in range(len(trace))]
        self.done = True

    # ------------------------------------------------------------ the cluster and the lists
    def _load(self, first, n):
        for j in self.all[first:first + n]:
            j.start = -1
        self.jobs = self.all[first:first + n]
        self.n = n
        self.now = self.jobs[0].submit
        self.queue = [self.jobs[0]]
        self.running = []
        self.next = 1
        self.free = self.total
        self.stuck = False

    def _fits(self, j):
        return j.nodes <= self.free

    def _next_release(self):
        return min((r.start + r.run for r in self.running), default=math.inf)

    def _arrive(self):
        j = self.jobs[self.next]
        self.now = max(self.now, j.submit)
        self.queue.append(j)
        self.next += 1

    def _release(self):
        first = min(self.running, key=lambda r: r.start + r.run)    # ties: the earliest started
        self.now = max(self.now, first.start + first.run)
        self.free += first.nodes
        self.running.remove(first)

    def _advance(self):
        # one event; False when there is none (a job that can never fit)
        if self.next < self.n and self.jobs[self.next].submit <= self._next_release():
            self._arrive()
            return True
        if not self.running:
            self.stuck = True
            return False
        self._release()
        return True

    def _start(self, j):
        j.start = self.now
        self.free -= j.nodes
        self.running.append(j)
        self.queue.remove(j)

    def _wait_for_job(self):
        # RLScheduler's moveforward_for_job: with an empty queue, advance until a job arrives
        if self.queue:
            return True
        if self.next >= self.n:
            return False
        while not self.queue:
            if self.jobs[self.next].submit <= self._next_release():
                self._arrive()
            else:
                self._release()
        return True

    def _backfill_compat(self, job):
        # moveforward_for_resources_backfill: one shadow time, from the estimated ends
        earliest, free_p = self.now, self.free * self.ppn
        for r in sorted(self.running, key=lambda r: r.start + r.req):
            free_p += r.nodes * self.ppn
            earliest = r.start + r.req
            if free_p >= job.procs:
                break
        while not self._fits(job):
            self.queue.sort(key=self.key["fcfs"])
            for j in list(self.queue):
                if self.now + j.req < earliest and self._fits(j):
                    self._start(j)
            if not self._advance():
                return

    def _backfill_easy(self, job):
        while not self._fits(job):
            avail, shadow, extra = self.free, math.inf, 0
            running = sorted(self.running, key=lambda r: r.start + r.req)
            for i, r in enumerate(running):
                avail += r.nodes
                if avail >= job.nodes:
                    # the extra nodes: those free at the shadow time, every job ending then counted
                    shadow = r.start + r.req
                    avail += sum(o.nodes for o in running[i + 1:] if o.start + o.req == shadow)
                    extra = avail - job.nodes
                    break
            self.queue.sort(key=self.key["fcfs"])
            for j in list(self.queue):
                if j is job or not self._fits(j):
                    continue
                if self.now + j.req <= shadow:
                    self._start(j)
                elif j.nodes <= extra:
                    extra -= j.nodes
                    self._start(j)
            if not self._advance():
                return

    def _schedule(self, job):
        # start `job` (waiting, and backfilling if enabled, until it fits); True when the window is over
        if not self._fits(job):
            if self.backfill:
                (self._backfill_compat if self.compat else self._backfill_easy)(job)
            else:
                while not self._fits(job) and self._advance():
                    pass
        if self.stuck:
            raise RuntimeError("a job needs more nodes than the cluster has")
        self._start(job)
        return not self._wait_for_job()

    def _bsld(self):
        started = [j for j in self.jobs if j.start >= 0]
        return sum(max(1.0, (j.start - j.submit + j.run) / max(j.run, 10)) for j in started) / len(started)

    # ------------------------------------------------------------ heuristics
    def heuristic(self, first: int, n: int, name: str = "sjf") -> float:
        """The window's mean bounded slowdown when ``name`` (one of ``HEURISTICS``) picks every job."""
        self._load(first, n)
        key = self.key[name]
        while True:
            self.queue.sort(key=key)
            if self._schedule(self.queue[0]):
                return self._bsld()

    # ------------------------------------------------------------ the agent's episode
    def reset(self, first: int, n: int) -> np.ndarray:
        """Schedule the window by SJF and F1 (as RLScheduler does at every reset), then return the
        first observation (1,024 floats)."""
        if self.baselines:
            self.sjf = self.heuristic(first, n, "sjf")
            self.f1 = self.heuristic(first, n, "f1")
        self._load(first, n)
        self.done = False
        return self._observe()

    def _visible(self):
        q = self.queue
        q.sort(key=self.key["fcfs"])
        if len(q) <= ROWS:
            return list(q)
        if self.compat:
            # the queue sorted in place by F1, F2, SJF, then smallest; the window alternates the SJF
            # and smallest lists (RLScheduler's third, "random", list reads the SJF one)
            for name in ("f1", "f2", "sjf"):
                q.sort(key=self.key[name])
            lists = [list(q)]
            q.sort(key=self.key["smallest"])
            lists.append(q)
        else:
            lists = [sorted(q, key=self.key["sjf"]), sorted(q, key=self.key["smallest"]), q]
        shown, seen, pos, k = [], set(), [0] * len(lists), 0
        while len(shown) < ROWS:
            j = lists[k][pos[k]]
            pos[k] += 1
            if j.idx not in seen:
                seen.add(j.idx)
                shown.append(j)
            k = (k + 1) % len(lists)
        return shown

    def _observe(self):
        self.visible = self._visible()
        rows = []
        for j in self.visible:
            wait = min((self.now - j.submit) / _MAX_WAIT, 1.0 - _EPS)
            rows.append([wait] + j.static + [1.0 - _EPS if self._fits(j) else _EPS])
        rows += [_PAD] * (ROWS - len(rows))
        return np.array(rows, dtype=np.float32).reshape(-1)

    def step(self, row: int) -> np.ndarray | None:
        """Start the job of ``row`` (a valid row of the last observation) as RLScheduler does, then
        return the next observation, or None when the window is over."""
        if self.done:
            raise RuntimeError("the window is over: reset first")
        if self._schedule(self.visible[row]):
            self.done = True
            self.visible = []
            return None
        return self._observe()

    def action_masks(self) -> np.ndarray:
        """The rows that hold a job, as a boolean array of 128."""
        m = np.zeros(ROWS, dtype=bool)
        m[:len(self.visible)] = True
        return m

    def value(self) -> float:
        """The window's mean bounded slowdown over the jobs started so far."""
        return self._bsld()

    def starts(self) -> np.ndarray:
        """Start time of each job of the window (-1: not started)."""
        return np.array([j.start for j in self.jobs], dtype=np.int64)
