"""The oracle of the slurm-sim clock: the Slurm 17.02 simulator's main loop written plainly.

Slow and obvious on purpose; the compiled loop (``ext/slurm_loop.pxd``) must make exactly the same
decisions at the same simulated times, which the property tests check. Times of the loop are integer
microseconds; jobs' times are whole seconds (the floor of the loop's clock).

One main-loop iteration at ``now_us`` (now = now_us // 1e6 seconds):

1. submit every job whose submit time is <= now, then complete every running job whose end (start +
   run time) is <= now (its end stays start + run time; its units come back now);
2. the main scheduler: a full-depth pass when ``sched_interval`` seconds have passed since the last
   full-depth one, else, after arrivals or completions, a pass of at most ``queue_depth`` jobs when
   ``sched_delay`` seconds have passed since the last pass; with ``end_main``, completions (not
   arrivals) instead run a pass of at most ``queue_depth`` jobs at once, the ``sched_delay`` timer
   neither waited for nor restarted. A pass walks the queue in priority order
   and starts each job that fits now on the lowest free units, stopping at the first that does not
   fit or once it has cost ``max_sched_us``; each job tested costs ``cost_main_us``, the clock
   advances by the pass's cost, and a job starts when the pass reaches it;
3. a backfill cycle, when the queue is not empty, something changed (an arrival, a completion or a
   main-scheduler start) since the last cycle began, and ``bf_interval`` has passed since the last
   cycle ended. The cycle is the full pass of :class:`ReferenceCore` at now, with each job test
   charged ``cost_slot_us`` x live profile slots + ``cost_resv_us`` x reservations made so far in the
   cycle + the step of ``cost_test_us`` x n^``cost_power`` (the worker's n-th test; rounded so that its
   first n cost round(cost_test_us x n^cost_power)) to the modelled worker with the least accumulated
   charge (the first when tied), after ``cost_queue_us`` per queued job charged to every worker; the
   pass stops when even that worker has spent ``budget_us``. Before each test, once
   ``yield_us`` of cycle time (the least-loaded worker's charge) has passed since the cycle began or
   last yielded, it yields: if an arrival or a completion is due by then, the cycle ends there, the
   due events are applied at that time and the main scheduler runs (step 2's rules). A job the cycle
   starts starts at the cycle's start + the charge of the worker that tested it, and the job is
   planned (tested, placed, reserved) with its estimate plus that delay. The clock advances
   to the cycle's start + its busiest worker's charge (or the yield's main pass, if later);
4. ``step_us``. Iterations in which nothing can happen are skipped (each still adds ``step_us``).
"""
from __future__ import annotations

import heapq
import math
from typing import TYPE_CHECKING

from ..codes import ExitReason
from .engine_ref import (
    EX_END,
    EX_MAX_JOB_TEST,
    EX_QUICK_BLOCKED,
    EX_RESV_TABLE,
    HOW_BACKFILL,
    HOW_MAIN,
    PENDING,
    _lowest,
)

if TYPE_CHECKING:
    from .engine_ref import ReferenceCore

__all__ = ["SlurmSimReference"]

US = 1_000_000
INF = float("inf")
EX_BUDGET, EX_YIELD = int(ExitReason.EX_BUDGET), int(ExitReason.EX_YIELD)


def _count(bits):
    return bin(bits).count("1")


class SlurmSimReference:
    """Replays the jobs of a :class:`~pbf.reference.ReferenceCore` (added in submit order) under the
    slurm-sim clock. ``budget_us`` <= 0: no cycle budget."""

    def __init__(self, core: ReferenceCore, *, workers: int = 1, bf_interval: int = 30, budget_us: int = 30 * US,
                 cost_test_us: float = 62, cost_slot_us: int = 0, yield_us: int = 2 * US, step_us: int = US,
                 sched_delay: int = 3, sched_interval: int = 60, queue_depth: int = 100,
                 max_sched_us: int = 2 * US, cost_main_us: int = 62, cost_queue_us: int = 0, cost_resv_us: int = 0,
                 cost_power: float = 1.0, end_main: bool = False, late_below: int = 0) -> None:
        self.core = core
        self.end_main = end_main  # a job's end runs the main scheduler at once (Slurm 22.05's epilog complete)
        self.late_below = late_below  # a shorter job ending at t ends after t's cycle (0: none)
        self.workers, self.bf_interval, self.budget_us = workers, bf_interval, budget_us
        self.cost_test_us, self.cost_slot_us, self.cost_queue_us = cost_test_us, cost_slot_us, cost_queue_us
        self.cost_resv_us, self.cost_power = cost_resv_us, cost_power
        self.yield_us, self.step_us = yield_us, step_us
        self.sched_delay, self.sched_interval, self.queue_depth = sched_delay, sched_interval, queue_depth
        self.max_sched_us, self.cost_main_us = max_sched_us, cost_main_us
        self.ends = []            # (end, job) of running jobs
        self.nxt = 0              # the next job to submit
        self.now_us = 0
        self.event = False        # arrivals or completions since the last main pass
        self.ended = False        # (end_main) completions since the last main pass
        self.changes = 0          # ... and main-pass starts since the last cycle began
        self.figures = dict(cycles=0, cycles_yielded=0, yields=0, main_passes=0, main_tests=0,
                            main_started=0, cycle_us=0, main_us=0)

    def _step(self, k):
        # a worker's (k + 1)-th test: its first n cost round(cost_test_us x n^cost_power) in all
        if self.cost_power == 1.0 and self.cost_test_us == int(self.cost_test_us):
            return int(self.cost_test_us)
        return (math.floor(self.cost_test_us * float(k + 1) ** self.cost_power + 0.5)
                - math.floor(self.cost_test_us * float(k) ** self.cost_power + 0.5))

    # events ---------------------------------------------------------------
    def _events_due(self, now):
        c = self.core
        return ((self.nxt < len(c.jobs) and c.jobs[self.nxt].submit <= now)
                or (self.ends and self.ends[0][0] <= now))

    def _apply_events(self, now):
        # the arrivals and completions due by now; returns the jobs shorter than late_below that end
        # at now, kept for after now's cycle (_finish_late)
        c, n, ended, late = self.core, 0, 0, []
        while self.nxt < len(c.jobs) and c.jobs[self.nxt].submit <= now:
            if c.submit(self.nxt) == PENDING:
                n += 1
            self.nxt += 1
        while self.ends and self.ends[0][0] <= now:
            end, j = heapq.heappop(self.ends)
            if end == now and self.late_below > 0 and c.jobs[j].run < self.late_below:
                late.append(j)
                continue
            c.finish(j, end)
            ended += 1
        if n or (ended and not self.end_main):
            self.event = True
        if ended and self.end_main:
            self.ended = True
        self.changes += n + ended
        return late

    def _finish_late(self, late, now):
        # the ends kept by _apply_events, after the cycle: each at now, then the main scheduler they run
        for j in late:
            self.core.finish(j, now)
        if self.end_main:
            self.ended = True
        else:
            self.event = True
        self.changes += len(late)
        self._main_scheduler()

    def _start(self, j, bits, start, how):
        self.core._start(j, bits, start, how)
        heapq.heappush(self.ends, (self.core.jobs[j].end, j))

    # the main scheduler -----------------------------------------------------------
    def _main_pass(self, depth_limit):
        c = self.core
        t_us = self.now_us
        now = t_us // US
        c._refresh_priorities(now)
        cost = depth = started = 0
        ex = EX_END
        for j in list(c.pending):
            if depth_limit >= 0 and depth >= depth_limit:
                ex = EX_MAX_JOB_TEST
                break
            if cost >= self.max_sched_us:
                ex = EX_BUDGET
                break
            depth += 1
            cost += self.cost_main_us
            job = c.jobs[j]
            if job.units > _count(c.free):
                ex = EX_QUICK_BLOCKED
                break
            self._start(j, _lowest(c.free, job.units), (t_us + cost) // US, HOW_MAIN)
            started += 1
        c.pending = [j for j in c.pending if c.jobs[j].state == PENDING]
        self.changes += started
        f = self.figures
        f["main_passes"] += 1
        f["main_tests"] += depth
        f["main_started"] += started
        f["main_us"] += cost
        self.now_us += cost
        c.passes.append(("quick", now, depth, started, 0, ex, 0))

    def _main_scheduler(self):
        # with end_main, completions run a pass of queue_depth jobs at once, the batch_sched_delay
        # timer (the submissions') neither waited for nor restarted
        now = self.now_us // US
        ended, self.ended = self.ended, False
        if not self.core.pending:
            return
        if now - self.last_full >= self.sched_interval:
            self.last_full = self.last_sched = now
            self.event = False
            self._main_pass(-1)
        elif self.event and now - self.last_sched >= self.sched_delay:
            self.last_sched = now
            self.event = False
            self._main_pass(self.queue_depth)
        elif ended:
            self._main_pass(self.queue_depth)

    # the backfill cycle ------------------------------------------------------------
    def _cycle(self):
        c = self.core
        T0 = self.now_us
        now = T0 // US
        c._refresh_priorities(now)
        c._apply_corrections(now)
        slots = c._profile(now)
        cost = [self.cost_queue_us * len(c.pending)] * self.workers
        tests = [0] * self.workers
        for j in c.pending:
            c.jobs[j].resv = -1
        queue = list(c.pending)
        built = blocked = yielded = False
        resv_left, depth, started, reserved, ex = c.resv_max, 0, 0, 0, EX_END
        next_yield, elapsed = self.yield_us, 0
        for j in queue:
            elapsed = min(cost)
            if elapsed >= next_yield and not (self.budget_us > 0 and elapsed >= self.budget_us):
                self.figures["yields"] += 1
                if self._events_due((T0 + elapsed) // US):
                    ex, yielded = EX_YIELD, True
                    break
                next_yield = elapsed + self.yield_us
            if 0 <= c.max_job_test <= depth:
                ex = EX_MAX_JOB_TEST
                break
            w = cost.index(min(cost))
            if self.budget_us > 0 and cost[w] >= self.budget_us:
                ex = EX_BUDGET
                break
            cost[w] += (self._step(tests[w]) + self.cost_slot_us * (len(slots) if built else 1)
                        + self.cost_resv_us * reserved)
            tests[w] += 1
            depth += 1
            job = c.jobs[j]
            start = (T0 + cost[w]) // US
            d = job.est + start - now      # it would start that late: planned so
            built = built or job.units > _count(c.free)
            found = c._find_start(slots, job.units, d, now, now_only=(resv_left == 0 and not c.resv_stop))
            if found and found[0] > now and resv_left == 0 and c.resv_stop:
                ex = EX_RESV_TABLE
                break
            if found and found[0] == now:
                t, i, cand = found
                chosen = c._choose(slots, job.units, t, d, i, cand, now)
                c._commit(slots, t, d, i, chosen)
                self._start(j, chosen, start, HOW_BACKFILL if blocked else HOW_MAIN)
                started += 1
            elif found and resv_left != 0:
                t, i, cand = found
                chosen = c._choose(slots, job.units, t, d, i, cand, now)
                c._commit(slots, t, d, i, chosen)
                job.resv = t
                reserved += 1
                resv_left -= 1
                blocked = True
            else:
                blocked = True
        c.pending = [j for j in c.pending if c.jobs[j].state == PENDING]
        c.passes.append(("full", now, depth, started, reserved, ex, len(slots) if built else 0))
        dur = max(cost)
        f = self.figures
        f["cycles"] += 1
        f["cycle_us"] += dur
        if yielded:
            # the loop's next instant is the yield (run applies its events): time then goes on from
            # the cycle's end, returned
            f["cycles_yielded"] += 1
            self.now_us = T0 + elapsed
            return T0 + dur
        self.now_us = T0 + dur
        return None

    # the loop ------------------------------------------------------------------
    def _next_action_us(self):
        c = self.core
        t = INF
        if self.nxt < len(c.jobs):
            t = c.jobs[self.nxt].submit * US
        if self.ends:
            t = min(t, self.ends[0][0] * US)
        if c.pending:
            t = min(t, (self.last_full + self.sched_interval) * US)
            if self.event:
                t = min(t, (self.last_sched + self.sched_delay) * US)
            if self.changes > 0 and c.enabled:
                t = min(t, self.next_bf_us)
        return t

    def run(self) -> ReferenceCore:
        """Replay to the end; returns the core (its ``jobs`` and ``passes`` hold the results)."""
        c = self.core
        if not c.jobs:
            return c
        now = c.jobs[0].submit
        self.now_us = now * US
        self.last_sched, self.last_full = now - self.sched_delay, now - self.sched_interval
        self.next_bf_us = self.now_us
        while True:
            at = self.now_us // US
            late = self._apply_events(at)
            self._main_scheduler()
            if c.pending and self.changes > 0 and self.now_us >= self.next_bf_us and c.enabled:
                self.changes = 0
                resume = self._cycle()
                if resume is not None:
                    # a yield with work due: the ends kept for after this cycle, then the yield's
                    # events and the main scheduler, then time on from the cycle's end
                    if late:
                        self._finish_late(late, at)
                    at = self.now_us // US
                    late = self._apply_events(at)
                    self._main_scheduler()
                    self.now_us = max(self.now_us, resume)
                self.next_bf_us = self.now_us + self.bf_interval * US
            if late:
                self._finish_late(late, at)
            self.now_us += self.step_us
            target = self._next_action_us()
            if target == INF:
                return c
            if target > self.now_us:
                self.now_us += -(-(target - self.now_us) // self.step_us) * self.step_us
