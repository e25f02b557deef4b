"""When :class:`pbf.Engine` passes and when it next needs a call: the pass trigger (a full pass on every
call, or Slurm's interval trigger: a full pass every ``bf_interval`` seconds and the quick start-now
pass on events between) and the clock that charges a full pass its cost (``free`` or ``model``, as in
a replay: docs/engine.md, "Clock and time budget"), or the slurm-sim clock's timers (Slurm's main
scheduler and backfill timers, "Scheduler time"), with scheduling that takes no simulated time.
"""
from __future__ import annotations

from .bounded import check_int, check_real
from .errors import ConfigError

__all__ = ["EngineTiming"]

_MAX_SECONDS = 10 ** 9
_MAX_COST_US = 10 ** 9


class EngineTiming:
    """An engine's trigger and clock (checked), and the interval trigger's timer.

    ``trigger``: ``"event"`` (a full pass at every call) or ``"interval"`` (a full pass when
    ``bf_interval`` seconds have passed since the end of the last one, the first at the first call
    with a pending job; between them, a quick pass at a call with events, none at a call without).
    ``clock``: ``"free"`` (a pass takes no time) or ``"model"`` (a full pass is charged
    ``cost_per_test_us`` per job test and ``cost_per_slot_us`` per profile slot of each test, stops
    once ``bf_max_time`` seconds are spent (default ``bf_interval``), and its charged duration delays
    the interval trigger's next pass). ``"slurm-sim"`` (with ``trigger="interval"``): the timers of
    the slurm-sim clock's main loop, each pass taking no simulated time (the host owns time): Slurm's
    main scheduler every ``sched_interval`` seconds at full depth, and after arrivals or completions
    at most every ``batch_sched_delay`` seconds over ``default_queue_depth`` jobs; a backfill pass
    (the full pass) every ``bf_interval`` seconds once a job or node changed since the last one
    (Slurm's ``_more_work``)."""

    def __init__(self, trigger: str = "event", bf_interval: int = 30, clock: str = "free",
                 bf_max_time: int | None = None, cost_per_test_us: float | None = None,
                 cost_per_slot_us: int | None = None, sched_interval: int | None = None,
                 batch_sched_delay: int | None = None, default_queue_depth: int | None = None) -> None:
        if trigger not in ("event", "interval"):
            raise ConfigError(f"trigger must be 'event' or 'interval', got {trigger!r}")
        if clock not in ("free", "model", "slurm-sim"):
            raise ConfigError(f"clock must be 'free', 'model' or 'slurm-sim' in the engine (the host owns time), "
                              f"got {clock!r}")
        timers = (sched_interval, batch_sched_delay, default_queue_depth)
        if clock == "slurm-sim":
            if trigger != "interval":
                raise ConfigError("clock='slurm-sim' runs Slurm's timers: it needs trigger='interval'")
            if any(x is not None for x in (bf_max_time, cost_per_test_us, cost_per_slot_us)):
                raise ConfigError("clock='slurm-sim' in the engine: a pass takes no simulated time (the host owns "
                                  "time), so bf_max_time and the test costs do not apply")
        elif any(x is not None for x in timers):
            raise ConfigError("sched_interval, batch_sched_delay and default_queue_depth are the slurm-sim clock's "
                              "timers: they need clock='slurm-sim'")
        check_int("sched_interval", sched_interval, 1, _MAX_SECONDS, allow_none=True)
        check_int("batch_sched_delay", batch_sched_delay, 0, _MAX_SECONDS, allow_none=True)
        check_int("default_queue_depth", default_queue_depth, 1, (1 << 31) - 1, allow_none=True)
        # (the defaults of pbf.SlurmSim: Slurm's)
        self.sched_interval = 60 if sched_interval is None else int(sched_interval)
        self.batch_sched_delay = 3 if batch_sched_delay is None else int(batch_sched_delay)
        self.default_queue_depth = 100 if default_queue_depth is None else int(default_queue_depth)
        self.sim = None         # slurm-sim: [last main pass, last full-depth one, next backfill, event, changes]
        check_int("bf_interval", bf_interval, 1, _MAX_SECONDS)
        check_int("bf_max_time", bf_max_time, 1, _MAX_SECONDS, allow_none=True)
        if cost_per_test_us is not None:
            check_real("cost_per_test_us", cost_per_test_us, 0, _MAX_COST_US)
        check_int("cost_per_slot_us", cost_per_slot_us, 0, _MAX_COST_US, allow_none=True)
        charges = (bf_max_time, cost_per_test_us, cost_per_slot_us)
        if clock == "free" and any(x is not None for x in charges):
            raise ConfigError("bf_max_time and the test costs charge a pass's time: they need clock='model'")
        self.trigger, self.bf_interval, self.clock = trigger, int(bf_interval), clock
        self.bf_max_time = bf_max_time
        self.cost_per_test_us = 10_000 if cost_per_test_us is None else cost_per_test_us
        self.cost_per_slot_us = 20 if cost_per_slot_us is None else int(cost_per_slot_us)
        self.next_full: int | None = None      # interval trigger: when the next full pass is due

    @property
    def every_call(self) -> bool:
        """A full pass at every call (the event trigger)."""
        return self.trigger == "event"

    def core_options(self) -> dict:
        """The options of :func:`pbf.core_config.build_core` for this trigger and clock (the engine
        runs the slurm-sim clock's passes itself: a free clock in the core)."""
        budget = None if self.clock != "model" else (self.bf_max_time or self.bf_interval)
        clock = "free" if self.clock == "slurm-sim" else self.clock
        return dict(trigger=self.trigger, bf_interval=self.bf_interval, clock=clock, budget_s=budget,
                    cost_per_test_us=self.cost_per_test_us, cost_per_slot_us=self.cost_per_slot_us)

    def choose(self, now: int, events: bool, pending: bool) -> str | None:
        """The pass to run at a call at ``now`` (interval trigger): ``"full"`` when due, else
        ``"quick"`` when the call brought events, else None; never one with no pending job."""
        if not pending:
            return None
        if self.next_full is None or now >= self.next_full:
            return "full"
        return "quick" if events else None

    def full_done(self, now: int, charged_us: int) -> None:
        """A full pass ran at ``now`` and was charged ``charged_us``: the period runs from its end."""
        self.next_full = now + (charged_us + 999_999) // 1_000_000 + self.bf_interval

    def wakeup(self, now: int | None, pending: bool) -> int | None:
        """When the interval trigger or the slurm-sim timers next need a call (None: no pending job,
        or the event trigger)."""
        if self.clock == "slurm-sim":
            return self.sim_wakeup(pending)
        if self.trigger != "interval" or not pending or self.next_full is None:
            return None
        return self.next_full if now is None else max(self.next_full, now)

    # ---- the slurm-sim clock's timers (cycle.pxd sim_instant, sim_schedule; slurm_loop.pxd)
    def sim_main(self, now: int, changes: int, pending: bool) -> int | None:
        """A call at ``now`` whose events made ``changes`` arrivals (jobs queued), completions and
        outages: the main scheduler's pass to run, as the depth of jobs it tests (-1: all), or None."""
        sim = self.sim
        if sim is None:
            if not pending:
                return None
            # the loop starts at the first submission (docs/engine.md "Scheduler time")
            sim = self.sim = [now - self.batch_sched_delay, now - self.sched_interval, now, False, 0]
        if changes:
            sim[3] = True
            sim[4] += changes
        if not pending:
            return None
        if now - sim[1] >= self.sched_interval:
            sim[0] = sim[1] = now
            sim[3] = False
            return -1
        if sim[3] and now - sim[0] >= self.batch_sched_delay:
            sim[0] = now
            sim[3] = False
            return self.default_queue_depth
        return None

    def sim_started(self, started: int) -> None:
        """The main scheduler started ``started`` jobs (changes for the next backfill pass)."""
        self.sim[4] += started

    def sim_backfill(self, now: int, pending: bool) -> bool:
        """A backfill pass now (then the period runs from now)?"""
        sim = self.sim
        if sim is None or not pending or sim[4] <= 0 or now < sim[2]:
            return False
        sim[4] = 0
        sim[2] = now + self.bf_interval
        return True

    def sim_wakeup(self, pending: bool) -> int | None:
        """When a timer can next do something (slurm_loop.pxd sim_next_action_us), while jobs wait."""
        sim = self.sim
        if sim is None or not pending:
            return None
        times = [sim[1] + self.sched_interval]
        if sim[3]:
            times.append(sim[0] + self.batch_sched_delay)
        if sim[4] > 0:
            times.append(sim[2])
        return min(times)
