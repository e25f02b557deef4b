"""Named policy combinations (Gaussier et al.'s "heuristic triples" and the classics), and ``slurm``:
Slurm's backfill as the Beocat simulator ran it (its backfill settings and the slurm-sim clock too)."""
from __future__ import annotations

from .registry import Registry

__all__ = ["PRESETS", "preset", "SCORING_KEYS", "BACKFILL_KEYS", "RUN_KEYS"]

#: what a preset may set: scoring, :class:`pbf.Backfill` fields, and replay options
SCORING_KEYS = ("priority", "predictor", "correction", "order")
BACKFILL_KEYS = ("reservations", "max_job_test", "window", "resolution", "stop_at_reservation_limit")
RUN_KEYS = ("trigger", "bf_interval", "clock")

PRESETS = Registry("preset")
_TABLE = {
    "easy": (dict(priority="fcfs", predictor="requested", correction="incremental", order="queue"),
             "FCFS + requested times + queue order (EASY backfilling)"),
    "easy++": (dict(priority="fcfs", predictor="ave2", correction="incremental", order="sjbf"),
               "FCFS + ave2 + incremental corrections + SJBF (Tsafrir et al.'s EASY++)"),
    "easy-clairvoyant": (dict(priority="fcfs", predictor="clairvoyant", correction="incremental", order="queue"),
                         "FCFS + actual run times + queue order"),
    "easy-sjbf-clairvoyant": (dict(priority="fcfs", predictor="clairvoyant", correction="incremental", order="sjbf"),
                              "FCFS + actual run times + SJBF"),
    "gaussier": (dict(priority="fcfs", predictor="regression", correction="incremental", order="sjbf"),
                 "FCFS + E-Loss regression + incremental corrections + SJBF (Gaussier et al.'s selected triple)"),
    # Slurm's backfill (every tested job gets a reservation) with its defaults: bf_max_job_test 500
    # (counted as jobs tested, Slurm >= 17.11's meaning and default), bf_window 1 day, bf_resolution
    # 60 s, bf_interval 30 s, and the slurm-sim clock (docs/engine.md "Scheduler time")
    "slurm": (dict(priority="fcfs", predictor="requested", correction="incremental", order="queue",
                   reservations=None, max_job_test=500, window=86400, resolution=60, trigger="interval",
                   bf_interval=30, clock="slurm-sim"),
              "Slurm's backfill: a reservation per tested job, bf_max_job_test 500, bf_window 1 day, "
              "bf_resolution 60 s, bf_interval 30 s, slurm-sim clock"),
    # Slurm 17.02's meaning of bf_max_job_test (default 100): the size of the reservation table, about
    # (100 - 1) // 2 = 49 reservations, after which the cycle stops; jobs tested are not capped
    "slurm-17.02": (dict(priority="fcfs", predictor="requested", correction="incremental", order="queue",
                         reservations=49, max_job_test=None, stop_at_reservation_limit=True, window=86400,
                         resolution=60, trigger="interval", bf_interval=30, clock="slurm-sim"),
                    "Slurm 17.02's backfill: bf_max_job_test 100 as its reservation table (49 reservations, "
                    "then the cycle stops), no cap on jobs tested, otherwise as slurm"),
}
for _name, (_settings, _summary) in _TABLE.items():
    PRESETS.register(_name, (lambda s=_settings: dict(s)), _summary)


def preset(name: str) -> dict:
    """The settings of a preset: a dict of priority, predictor, correction and order, and for run
    presets (``slurm``) some of :data:`BACKFILL_KEYS` and :data:`RUN_KEYS`."""
    return PRESETS.resolve(name)
