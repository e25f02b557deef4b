"""When :class:`pbf.Engine` passes and when it next needs a call: the pass trigger (a full pass on every
call, or Slurm's interval trigger: a full pass every ``bf_interval`` seconds and the quick start-now
pass on events between) and the clock that charges a full pass its cost (``free`` or ``model``, as in
a replay: docs/engine.md, "Clock and time budget").
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
    the interval trigger's next pass)."""

    def __init__(self, trigger: str = "event", bf_interval: int = 30, clock: str = "free",
                 bf_max_time: int | None = None, cost_per_test_us: float | None = None,
                 cost_per_slot_us: int | None = None) -> None:
        if trigger not in ("event", "interval"):
            raise ConfigError(f"trigger must be 'event' or 'interval', got {trigger!r}")
        if clock not in ("free", "model"):
            raise ConfigError(f"clock must be 'free' or 'model' in the engine (the host owns time), got {clock!r}")
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
        """The options of :func:`pbf.core_config.build_core` for this trigger and clock."""
        budget = None if self.clock == "free" else (self.bf_max_time or self.bf_interval)
        return dict(trigger=self.trigger, bf_interval=self.bf_interval, clock=self.clock, budget_s=budget,
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
        """When the interval trigger next needs a call (None: no pending job, or the event trigger)."""
        if self.trigger != "interval" or not pending or self.next_full is None:
            return None
        return self.next_full if now is None else max(self.next_full, now)
