"""The slurm-sim clock's settings: scheduling that takes simulated time, as in the Slurm 17.02 simulator.

Under ``ReplayConfig(clock="slurm-sim")`` the replay runs the simulator's main loop (docs/engine.md,
"Scheduler time"): each iteration applies the arrivals and completions due, runs the main scheduler
when its timers allow, runs a backfill cycle when one is due, and adds ``time_step``. A cycle's job
tests are charged to the modelled workers (``ReplayConfig.cost_per_test_us``, ``cost_per_slot_us``);
every ``bf_yield_interval`` of cycle time it yields, and a yield that finds arrivals or completions
due applies them, runs the main scheduler and ends the cycle.

Every default has a source (``SOURCES``); where no published figure exists the docs say so.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .bounded import MAX_SECONDS
from .errors import ConfigError

__all__ = ["SlurmSim", "SOURCES", "SLURM_SIM_TEST_COST_US", "SLURM_SIM_SLOT_COST_US", "MAX_COST_US"]

#: the largest modelled cost of one step (a job test, a slot, a node, a queued job): 1,000 s, in us
MAX_COST_US = 1_000_000_000
#: the most jobs a main-scheduler pass tests (Slurm keeps it in a 32-bit int)
_MAX_DEPTH = (1 << 31) - 1

#: the default charge of one backfill job test under the slurm-sim clock, microseconds: the Slurm
#: simulator's ``bf_model_sim_prefactor`` (6.208e-05 s per tried job) in the Beocat simulator's sim.conf
SLURM_SIM_TEST_COST_US = 62
#: the default charge per profile slot per test: the simulator's backfill model charges tried jobs only
SLURM_SIM_SLOT_COST_US = 0

#: where each default comes from (shown by the docs and the experiment's output)
SOURCES = {
    "cost_per_test_us": "Slurm simulator bf_model_sim_prefactor = 6.208e-05 s per tried job (Beocat sim.conf); "
                        "a production controller: bf_model_real_prefactor = 3.755e-04 s",
    "cost_per_slot_us": "0: the simulator's bf_model charges per tried job only",
    "bf_yield_interval": "Slurm 17.02 bf_yield_interval default 2,000,000 us",
    "time_step": "Slurm simulator TimeStep = 1.0 s (Beocat sim.conf): added by every main-loop iteration",
    "batch_sched_delay": "Slurm batch_sched_delay default 3 s",
    "sched_interval": "Slurm sched_interval default 60 s (a full-depth main-scheduler pass)",
    "default_queue_depth": "Slurm default_queue_depth default 100",
    "max_sched_time": "Slurm max_sched_time default min(max(MessageTimeout/2, 1), 2) = 2 s",
    "cost_main_test_us": "no published figure; the backfill per-test prefactor (62 us) is used",
    "cost_queue_us": "no published figure; 0 (the simulator's bf_model charges per tried job only)",
    "end_lag": "0: the Slurm 17.02 simulator sees an end in the iteration of its second; a real Slurm 22.05 "
               "sees it at the next scheduling second (measured by pbf validate slurm: 1 s at bf_interval=1)",
    "end_lag_below": "0 (every job); with --slurm-conf 13 s: a job's launch and completion take ~40 ms and "
                     "backfill cycles start ~3 ms later each second (slurmctld's log of a pbf validate slurm "
                     "run here), so a job running longer than 0.040 / 0.003 s ends before its last second's cycle",
    "end_after_cycle": "False: measured against Slurm 22.05 runs (docs/slurm-harness.md), a short job's end seen "
                       "by its last second's main scheduler agrees less than one seen a second late by both",
    "end_runs_main": "False (the Slurm 17.02 simulator's loop, and Slurm 22.05 with defer); True is Slurm 22.05 "
                     "without defer: src/slurmctld/proc_req.c _slurm_rpc_epilog_complete calls schedule(false) "
                     "(job_scheduler.c _sched_agent: at once, sched_min_interval 2 us; default_queue_depth jobs), "
                     "measured to agree no better with recorded runs (docs/slurm-harness.md)",
}


def _number(name, value, low, high=MAX_SECONDS, *, integer=False, unit="s"):
    ok = (isinstance(value, int) if integer else isinstance(value, (int, float))) and not isinstance(value, bool)
    if not ok or not low <= value <= high or (not integer and not math.isfinite(value)):
        kind = "an int" if integer else "a number"
        raise ConfigError(f"slurm_sim.{name} must be {kind} from {low:,} to {high:,}{' ' + unit if unit else ''}, "
                          f"got {value!r}")


@dataclass(frozen=True)
class SlurmSim:
    """Settings of the slurm-sim clock's main loop (Slurm 17.02 names; seconds unless said).

    ``bf_yield_interval``: backfill cycle time between lock yields (2 s); ``time_step``: what every
    main-loop iteration adds (1 s); ``batch_sched_delay``: an event-triggered main-scheduler pass at
    most this often (3 s); ``sched_interval``: a full-depth main-scheduler pass this often (60 s);
    ``default_queue_depth``: jobs an event-triggered main pass tests (100); ``max_sched_time``: a
    main pass stops once it has cost this much (2 s); ``cost_main_test_us``: charged per job a main
    pass tests (62 us); ``cost_queue_us``: charged per queued job when a cycle builds and sorts its
    queue (0 us); ``end_lag``: whole seconds a job holds its resources after start + run time
    before the scheduler sees its end (0; a real Slurm: 1, docs/slurm-harness.md "When a job's end is
    seen"), for jobs that run less than ``end_lag_below`` seconds (0: every job). The reported end
    stays start + run time. ``timer_phase``: the first backfill cycle this many seconds later than it
    would come (the cycles after it follow it, a ``bf_interval`` apart while work goes on), and the
    first full-depth main pass this many seconds after the first submission (0): where a site's
    cycles fall is not in its files, so replays at phases 0, 1, 2 ... s show how far that alone moves
    each job (docs/validation.md, "The noise floor of a replay"). ``end_runs_main``: a job's end runs
    the main scheduler at once, over ``default_queue_depth`` jobs, without waiting for or restarting
    ``batch_sched_delay`` (Slurm 22.05 without ``defer``: the epilog-complete RPC calls
    ``schedule(false)``; measured against recorded Slurm runs it agrees no better, so it is not
    ``--slurm-conf``'s default); False (the default: the Slurm 17.02 simulator's loop, and Slurm 22.05
    with ``defer``): an end is an event as an arrival is. ``end_after_cycle`` (with
    ``end_runs_main`` and ``end_lag`` 1; off by default: measured against Slurm it agrees less, see
    docs/slurm-harness.md "When a job's end is seen"): the 1 s end lag as an order rather than a hold,
    the backfill cycle of a short job's last second seeing it running and that second's main scheduler
    its end."""

    bf_yield_interval: float = 2.0
    time_step: float = 1.0
    batch_sched_delay: int = 3
    sched_interval: int = 60
    default_queue_depth: int = 100
    max_sched_time: float = 2.0
    cost_main_test_us: int = 62
    cost_queue_us: int = 0
    end_lag: int = 0
    end_lag_below: int = 0
    timer_phase: float = 0.0
    end_runs_main: bool = False
    end_after_cycle: bool = False

    def __post_init__(self):
        _number("bf_yield_interval", self.bf_yield_interval, 1e-6)
        # (the loop keeps time in microseconds: a step of at most a day keeps it far inside 64 bits)
        _number("time_step", self.time_step, 1e-6, 86_400)
        _number("batch_sched_delay", self.batch_sched_delay, 0, integer=True)
        _number("sched_interval", self.sched_interval, 1, integer=True)
        _number("default_queue_depth", self.default_queue_depth, 1, _MAX_DEPTH, integer=True, unit="jobs")
        _number("max_sched_time", self.max_sched_time, 1e-6)
        _number("cost_main_test_us", self.cost_main_test_us, 0, MAX_COST_US, integer=True, unit="us")
        _number("cost_queue_us", self.cost_queue_us, 0, MAX_COST_US, integer=True, unit="us")
        _number("end_lag", self.end_lag, 0, integer=True)
        _number("end_lag_below", self.end_lag_below, 0, integer=True)
        _number("timer_phase", self.timer_phase, 0, 86_400)
        for name in ("end_runs_main", "end_after_cycle"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"slurm_sim.{name} must be True or False, got {getattr(self, name)!r}")
        if self.end_after_cycle and not (self.end_runs_main and self.end_lag == 1):
            raise ConfigError("slurm_sim.end_after_cycle orders a 1 s end lag around the main scheduler a job's end "
                              f"runs: it needs end_runs_main True and end_lag 1, got end_runs_main "
                              f"{self.end_runs_main} and end_lag {self.end_lag}")

    def check_budget(self, budget_s: int | None) -> None:
        """A yield interval longer than the cycle's budget would never yield: refuse it."""
        if budget_s is not None and self.bf_yield_interval > budget_s:
            raise ConfigError(f"slurm_sim.bf_yield_interval ({self.bf_yield_interval:g} s) is longer than the "
                              f"backfill cycle's budget (bf_max_time, default bf_interval: {budget_s} s): "
                              "a cycle would never yield")

    def core_settings(self) -> dict:
        """The compiled core's settings for this loop."""
        return dict(sim_yield_us=round(self.bf_yield_interval * 1e6), sim_step_us=round(self.time_step * 1e6),
                    sim_sched_delay=self.batch_sched_delay, sim_sched_interval=self.sched_interval,
                    sim_queue_depth=self.default_queue_depth, sim_max_sched_us=round(self.max_sched_time * 1e6),
                    sim_cost_main_us=self.cost_main_test_us, sim_cost_queue_us=self.cost_queue_us,
                    sim_phase_us=round(self.timer_phase * 1e6), sim_end_main=int(self.end_runs_main),
                    sim_late_below=(self.end_lag_below or 1 << 62) if self.end_after_cycle else 0)

    def as_dict(self) -> dict:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}
