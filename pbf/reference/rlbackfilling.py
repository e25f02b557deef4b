"""RLBackfilling's environment loop in plain Python: the oracle of the compiled backfilling episodes
(:class:`pbf.rl.BackfillEnv`) and the peer their speed is compared with.

It keeps RLBackfilling's data structures and their costs: a machine object per node (allocation
walks the machine list, a job keeps the machines it holds), job objects in Python lists, the queue
and the running list re-sorted (stably) where its ``HPCEnv`` sorts them, the head's shadow time
recomputed for every job it counts, the list it iterates while removing from it (the job after
each classic-backfill start is not tested), the three EASY baselines scheduled at every reset, and
the observation built row by row, and every job of the trace reset before each schedule (its
``Workloads.reset``). ``compat=False`` applies the same fixes as the compiled default
mode (no skipped job, a waiting job's real wait in WFP3, the shadow recomputed while the head
waits in the heuristics); ``stop=True`` adds the default mode's stop row. Only bounded slowdown is
scored.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..rl.trace import RLTrace

__all__ = ["ReferenceBackfillEnv", "ORDERS"]

ROWS, FEATURES = 128, 6
_MAX_WAIT = 43200.0
_EPS = 1e-5
_PAD = [0.0, 1.0, 1.0, 1.0, 1.0, 0.0]


class _Job:
    __slots__ = ("idx", "submit", "run", "req", "procs", "nodes", "start", "machines")

    def __init__(self, idx, submit, run, req, procs, nodes):
        self.idx, self.submit, self.run, self.req, self.procs, self.nodes = idx, submit, run, req, procs, nodes
        self.start = -1
        self.machines = None


class _Machine:
    __slots__ = ("id", "running", "free")

    def __init__(self, i):
        self.id, self.running, self.free = i, -1, True


class _Cluster:
    """RLBackfilling's ``Cluster``: a free-node count and the machine objects behind it."""

    def __init__(self, nodes):
        self.machines = [_Machine(i) for i in range(nodes)]
        self.free = nodes

    def allocate(self, job):
        taken = []
        for m in self.machines:
            if len(taken) == job.nodes:
                break
            if m.free:
                m.free, m.running = False, job.idx
                taken.append(m)
        self.free -= len(taken)
        return taken

    def release(self, machines):
        self.free += len(machines)
        for m in machines:
            m.free, m.running = True, -1


def _orders(env):
    def wfp3(j):
        w = (-1 - j.submit) if env.compat else (env.now - j.submit)
        return -math.pow(float(w) / j.req, 3) * j.procs
    return {
        "fcfs": lambda j: j.submit,
        "sjf": lambda j: (j.req, j.submit),
        "wfp3": wfp3,
        "f1": lambda j: (math.log10(j.req if j.req > 0 else 0.1) * j.procs
                         + 870 * math.log10(j.submit if j.submit > 0 else 0.1)),
        "largest": lambda j: (-j.procs, j.submit),
    }


ORDERS = ("fcfs", "sjf", "wfp3", "f1", "largest")


class ReferenceBackfillEnv:
    """One trace (an :class:`pbf.rl.RLTrace` loaded with ``compat="rlbackfilling"``), windows of it."""

    def __init__(self, trace: RLTrace, *, head: str = "fcfs", guarded: bool = False, relax: float = 0.0,
                 compat: bool = True, act_size: int = 1, baselines: bool = True, stop: bool = False,
                 req_scale: float | None = None) -> None:
        self.t = trace
        self.compat, self.guarded, self.relax, self.act_size = compat, guarded, relax, act_size
        self.stop = stop
        self.baselines = baselines
        self.order = _orders(self)
        self.head_key = self.order[head]
        self.ppn = trace.procs_per_node
        self.max_exec = float(req_scale or trace.norm["req"])
        self.max_procs = float(trace.max_procs)
        t = trace
        self.all = [_Job(i, int(t.submit[i]), int(t.run[i]), int(t.req[i]), int(t.procs[i]), int(t.nodes[i]))
                    for i in range(len(t))]
        self.cluster = _Cluster(t.total_nodes)

    # ------------------------------------------------------------ the cluster and the lists
    def _load(self, first, n):
        for j in self.all:                     # RLBackfilling's Workloads.reset: every job of the trace
            j.start = -1
        for m in self.cluster.machines:        # and Cluster.reset
            m.free, m.running = True, -1
        self.cluster.free = len(self.cluster.machines)
        self.jobs = self.all[first:first + n]
        self.first, self.n = first, n
        self.now = self.jobs[0].submit
        self.queue = [self.jobs[0]]
        self.running = []
        self.next = 1

    @property
    def free(self) -> int:
        """The cluster's free machines."""
        return self.cluster.free

    def _start(self, j):
        j.start = self.now
        j.machines = self.cluster.allocate(j)
        self.running.append(j)
        self.queue.remove(j)

    def _jump(self):
        if self.running:
            self.running.sort(key=lambda r: r.start + r.run)
            first = self.running[0]
            rel = first.start + first.run
            if self.next < self.n and self.jobs[self.next].submit <= rel:
                self.now = max(self.now, self.jobs[self.next].submit)
                self.queue.append(self.jobs[self.next])
                self.next += 1
            else:
                self.now = max(self.now, rel)
                self.cluster.release(first.machines)
                self.running.pop(0)
            return True
        if self.next >= self.n:
            return False
        self.now = max(self.now, self.jobs[self.next].submit)
        self.queue.append(self.jobs[self.next])
        self.next += 1
        return True

    def _shadow(self, head):
        est = self.now
        self.running.sort(key=lambda r: r.start + r.req)
        avail = self.free * self.ppn
        nodes, i = self.free, 0
        for r in self.running:
            avail += r.nodes * self.ppn
            nodes += r.nodes
            est = r.start + r.req
            i += 1
            if avail >= head.procs:
                break
        nodes += sum(r.nodes for r in self.running[i:] if r.start + r.req == est)
        self.extra = max(nodes - head.nodes, 0)      # EASY's extra nodes (default mode)
        return est, est - head.submit

    def _in_time(self, j, shadow, ew):
        if self.compat:
            return self.now + j.req < shadow + ew * self.relax
        return self.now + j.req <= shadow + ew * self.relax

    def _safe(self, j, shadow, ew):
        return self._in_time(j, shadow, ew) or (not self.compat and j.nodes <= self.extra)

    def _classic(self, head, shadow, ew, key):
        self.queue.sort(key=key)
        for j in (self.queue if self.compat else list(self.queue)):
            # compat: removes from the list it iterates, as RLBackfilling does
            if j is not head and self._safe(j, shadow, ew) and j.nodes <= self.free:
                if not self._in_time(j, shadow, ew):
                    self.extra -= j.nodes
                self._start(j)

    def _count(self, head):
        n = 0
        for j in self.queue:
            if j is head:
                continue
            if self.guarded:
                shadow, ew = self._shadow(head)    # recomputed per job, as RLBackfilling does
                if self._safe(j, shadow, ew) and j.nodes <= self.free:
                    n += 1
            elif j.nodes <= self.free:
                n += 1
        return n

    def _bsld(self):
        return sum(max(1.0, (j.start - j.submit + j.run) / max(j.run, 10)) for j in self.jobs) / self.n

    # ------------------------------------------------------------ heuristics
    def heuristic(self, first: int, n: int, head: str = "fcfs", order: str = "fcfs") -> float:
        """The window's mean bounded slowdown under ``head`` order with EASY backfilling in ``order``."""
        self._load(first, n)
        hk, ok = self.order[head], self.order[order]
        while True:
            while not self.queue:
                if not self._jump():
                    return self._bsld()
            self.queue.sort(key=hk)
            h = self.queue[0]
            if h.nodes > self.free:
                shadow, ew = self._shadow(h)
                while h.nodes > self.free:
                    self._classic(h, shadow, ew, ok)
                    self._jump()
                    if not self.compat and h.nodes > self.free:
                        shadow, ew = self._shadow(h)
            self._start(h)
            if self.queue:
                continue
            if not self._jump():
                return self._bsld()

    # ------------------------------------------------------------ the agent's episode
    def reset(self, first: int, n: int) -> np.ndarray | None:
        """Schedule the three EASY baselines (as RLBackfilling does at every reset), then run to the
        first choice; returns the observation (768 floats) or None if the window needs none."""
        if self.baselines:
            self.easy = self.heuristic(first, n, "fcfs", "fcfs")
            self.easy_sjbf = self.heuristic(first, n, "fcfs", "sjf")
            self.easy_largest = self.heuristic(first, n, "fcfs", "largest")
        self._load(first, n)
        self.done = False
        self.head = None
        return self._proceed(False)

    def _proceed(self, at_head):
        h = self.head
        while True:
            if at_head:
                if h.nodes <= self.free:
                    self._start(h)
                    if not self.queue and not self._jump():
                        self.done = True
                        return None
                else:
                    n = self._count(h)
                    if n > self.act_size:
                        self.head = h
                        return self._observe()
                    if n > 0:
                        shadow, ew = self._shadow(h)
                        self._classic(h, shadow, ew, self.order["fcfs"])
                    if not self._jump():
                        self.done = True
                        return None
            while not self.queue:
                if not self._jump():
                    self.done = True
                    return None
            self.queue.sort(key=self.head_key)
            h = self.queue[0]
            at_head = True

    def _observe(self):
        h = self.head
        shadow, ew = self._shadow(h)
        cands = [j for j in self.queue if j is not h and j.nodes <= self.free
                 and (not self.guarded or self._safe(j, shadow, ew))]
        self.visible = cands[:ROWS - 1 if self.stop else ROWS]
        vec = np.zeros(ROWS * FEATURES, dtype=np.float64)
        gap = shadow + self.relax * ew + 1 - self.now
        for i in range(ROWS):
            if i < len(self.visible):
                j = self.visible[i]
                max(self.now - c.submit for c in cands)   # RLBackfilling computes (and drops) this per row
                row = [min((self.now - j.submit) / _MAX_WAIT, 1 - _EPS), min(j.req / self.max_exec, 1 - _EPS),
                       min(j.procs / self.max_procs, 1 - _EPS), min(j.req / (gap + 1), 1 - _EPS),
                       min(j.nodes / self.free, 1 - _EPS), 0.0]
            elif self.stop and i == len(self.visible):
                row = [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
            else:
                row = _PAD
            vec[i * FEATURES:(i + 1) * FEATURES] = row
        return vec

    def step(self, row: int) -> np.ndarray | None:
        """Start the candidate in ``row`` (or, on the stop row, advance one event); run to the next
        choice. Returns the observation or None."""
        if self.stop and row == len(self.visible):
            if not self._jump():
                self.done = True
                return None
            return self._proceed(False)
        self._start(self.visible[row])
        return self._proceed(True)

    def action_masks(self) -> np.ndarray:
        """The rows that hold a candidate (and the stop row), as a boolean array of 128."""
        m = np.zeros(ROWS, dtype=bool)
        m[:len(self.visible) + (1 if self.stop else 0)] = True
        return m

    def value(self) -> float:
        """The window's mean bounded slowdown so far."""
        return self._bsld()

    def starts(self) -> np.ndarray:
        """Each window job's start time (-1: not started)."""
        return np.array([j.start for j in self.jobs], dtype=np.int64)
