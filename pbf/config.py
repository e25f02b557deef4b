"""Scheduling configuration shared by the engine and the replayer."""
from __future__ import annotations

from dataclasses import dataclass

from .bounded import MAX_SECONDS, check_int
from .codes import TRIGGERS
from .errors import ConfigError

__all__ = ["Backfill", "TRIGGERS"]


def _check_choice(name, value, choices):
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")


#: the most jobs a pass reserves or tests (Slurm keeps these counts in 32-bit ints)
MAX_COUNT = (1 << 31) - 1


@dataclass(frozen=True)
class Backfill:
    """How a pass backfills (DESIGN §4.3).

    reservations: jobs that get a reservation per pass: 1 = EASY (default), N = Slurm-like,
        None = unlimited (conservative backfilling), 0 = none (greedy: start whatever fits now).
    max_job_test: stop a pass after testing this many jobs (Slurm's ``bf_max_job_test``); None = no cap.
    window: seconds ahead a reservation may start (``bf_window``); 0 = unlimited.
    resolution: planned ends of running jobs are rounded up to this many seconds (``bf_resolution``),
        which bounds the number of slots; 0 = exact.
    order: the order backfill candidates are tried (a chooser, DESIGN §6.3): ``queue`` (priority
        order), ``sjbf`` (after the reservations, shortest estimate first: EASY-SJBF), or a user's
        chooser (``"package.module:attr"`` or an object; see :mod:`pbf.plugins.choosers`).
    enabled: False turns backfilling off: every pass starts jobs in priority order while they fit
        and stops at the first that does not (strict priority; RLScheduler's "without backfilling").
    stop_at_reservation_limit: once ``reservations`` are made, the pass ends at the next job that
        would need one (Slurm 17.02, whose ``bf_max_job_test`` sized the reservation table: about
        ``(bf_max_job_test - 1) // 2`` reservations, then the cycle stops); False (default): the pass
        goes on testing the remaining jobs for a start now.
    """
    reservations: int | None = 1
    max_job_test: int | None = None
    window: int = 0
    resolution: int = 0
    order: object = "queue"
    enabled: bool = True
    stop_at_reservation_limit: bool = False

    def __post_init__(self):
        # (bounded so that now + window and an end rounded up to the resolution stay far inside 64 bits)
        check_int("reservations", self.reservations, 0, MAX_COUNT, allow_none=True)
        check_int("max_job_test", self.max_job_test, 1, MAX_COUNT, allow_none=True)
        check_int("window", self.window, 0, MAX_SECONDS)
        check_int("resolution", self.resolution, 0, MAX_SECONDS)
        from .plugins.choosers import CHOOSERS  # (numpy: the command line's parser imports this module)
        CHOOSERS.resolve(self.order)    # fails early, with the known names
        if not isinstance(self.enabled, bool):
            raise ConfigError(f"enabled must be True or False, got {self.enabled!r}")
        if not isinstance(self.stop_at_reservation_limit, bool):
            raise ConfigError(f"stop_at_reservation_limit must be True or False, got "
                              f"{self.stop_at_reservation_limit!r}")
        if self.stop_at_reservation_limit and (self.reservations is None or self.order != "queue"):
            raise ConfigError("stop_at_reservation_limit needs a number of reservations (not unlimited) and "
                              "order='queue'")

    def core_settings(self) -> dict:
        """The compiled core's settings for these options (see :mod:`pbf.core_config`)."""
        return {"resv_max": -1 if self.reservations is None else self.reservations,
                "max_job_test": -1 if self.max_job_test is None else self.max_job_test,
                "bf_window": self.window, "bf_resolution": self.resolution,
                "no_backfill": int(not self.enabled),
                "resv_stop": int(self.stop_at_reservation_limit)}    # (the order is the scoring's chooser)

    def reference_kwargs(self) -> dict:
        """The oracle's settings for these options (:mod:`pbf.reference`)."""
        return {"reservations": -1 if self.reservations is None else self.reservations,
                "max_job_test": -1 if self.max_job_test is None else self.max_job_test,
                "bf_window": self.window, "bf_resolution": self.resolution,
                "sjbf": self.order != "queue", "enabled": self.enabled,
                "resv_stop": self.stop_at_reservation_limit}
