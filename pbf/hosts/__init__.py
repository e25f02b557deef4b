"""Ready adapters that put :class:`pbf.Engine` inside other simulators (docs/hosts.md).

- :mod:`pbf.hosts.simpy`: :class:`~pbf.hosts.simpy.SimPyHost`, a cluster in a SimPy model (``pip install simpy``).
- :mod:`pbf.hosts.accasim`: :class:`~pbf.hosts.accasim.PbfDispatcher`, an AccaSim dispatcher
  (``pip install accasim``).

Each module imports its host only when it is imported itself, so ``import pbf.hosts`` needs neither.
"""
from __future__ import annotations

from ..config import Backfill
from ..errors import ConfigError

__all__ = ["MODES", "backfill_of"]

#: pbf's scheduling modes by name, as the adapters offer them: EASY (one reservation), conservative
#: (a reservation for every queued job) and Slurm-like (Slurm's backfill settings: a reservation per
#: tested job, bf_max_job_test 500, bf_window 1 day, bf_resolution 60 s; a pass on every event, as
#: ``pbf replay --reservations unlimited --max-job-test 500 --bf-window 1d --bf-resolution 60``)
MODES = {
    "easy": Backfill(reservations=1),
    "conservative": Backfill(reservations=None),
    "slurm": Backfill(reservations=None, max_job_test=500, window=86400, resolution=60),
}


def backfill_of(mode: str | Backfill) -> Backfill:
    """The :class:`~pbf.Backfill` of a mode's name (or ``mode`` itself when it is one)."""
    if isinstance(mode, Backfill):
        return mode
    try:
        return MODES[mode]
    except (KeyError, TypeError):
        raise ConfigError(f"mode must be one of {', '.join(MODES)} or a pbf.Backfill, got {mode!r}") from None
