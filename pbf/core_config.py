"""The one path from user settings to a compiled core: :func:`check_run_options` validates what the
engine and the replayer share, :func:`build_core` makes and configures a core from (cluster size,
backfill, scoring, run options). :class:`pbf.Engine` and :func:`pbf.replay` both come through here,
and nothing else writes a core's settings.
"""
from __future__ import annotations

from . import _core
from .codes import CLOCKS, TRIGGERS
from .config import Backfill, _check_choice
from .errors import ConfigError
from .plugins.scoring import Scoring
from .scheduler_time import SlurmSim

__all__ = ["COMMITS", "check_run_options", "build_core"]

COMMITS = ("ordered", "eager")


def check_run_options(workers: int, commit: str, backfill: Backfill) -> None:
    """Validate the options the engine and the replayer share (raises :class:`ConfigError`)."""
    if not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= 256:
        raise ConfigError(f"workers must be an int from 1 to 256, got {workers!r}")
    _check_choice("commit", commit, COMMITS)
    if not isinstance(backfill, Backfill):
        raise ConfigError(f"backfill must be a pbf.Backfill, got {backfill!r}")
    if commit == "eager" and backfill.order != "queue":
        raise ConfigError("commit='eager' does not support order='sjbf' (its phase is defined in queue order)")


def build_core(units: int, backfill: Backfill, scoring: Scoring, *, workers: int = 1, commit: str = "ordered",
               record_passes: bool = True, trigger: str = "event", bf_interval: int = 30, clock: str = "free",
               budget_s: int | None = None, cost_per_test_us: float = 10_000, cost_per_slot_us: int = 20,
               cost_per_node_us: int = 0, cost_per_reservation_us: int = 0, cost_power: float = 1.0,
               slurm_sim: SlurmSim | None = None) -> _core.Core:
    """A compiled core for ``units`` units configured with ``backfill`` (a :class:`Backfill`),
    ``scoring`` (a resolved :class:`pbf.plugins.Scoring`) and the run options (validated by the
    callers' dataclasses and :func:`check_run_options`; ``slurm_sim``: the
    :class:`pbf.SlurmSim` settings of the slurm-sim clock). Its worker pool is not started:
    ``core.start_pool(workers)`` does that when the caller is ready to stop it again."""
    check_run_options(workers, commit, backfill)
    _check_choice("trigger", trigger, TRIGGERS)
    _check_choice("clock", clock, CLOCKS)
    core = _core.Core(units)
    core.configure(**backfill.core_settings(), **scoring.core_settings(),
                   commit_eager=int(commit == "eager"), record_passes=int(record_passes),
                   trigger=TRIGGERS.index(trigger), bf_interval=bf_interval, clock=CLOCKS.index(clock),
                   bf_max_time_us=(budget_s or 0) * 1_000_000, cost_test_us=int(round(cost_per_test_us)),
                   cost_slot_us=cost_per_slot_us, cost_node_us=cost_per_node_us, cost_resv_us=cost_per_reservation_us,
                   cost_power=float(cost_power))
    core.configure(cost_pref_us=float(cost_per_test_us))      # (after cost_test_us, which sets it too)
    if slurm_sim is not None:
        core.configure(**slurm_sim.core_settings())
    regression = scoring.regression()
    if regression is not None:
        core.set_regression(*regression)
    if clock == "wall":
        core.calibrate()
    return core
