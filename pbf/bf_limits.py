"""Slurm's own backfill limits: :class:`SlurmBackfill`, a :class:`pbf.Backfill` with the
``SchedulerParameters`` that cap what one backfill cycle tests, starts and reserves for.

They apply to Slurm's backfill on nodes (``ReplayConfig(node_search="slurm")``, which ``--slurm-conf``
sets) and follow Slurm 22.05's ``src/plugins/sched/backfill/backfill.c`` (``_attempt_backfill``,
``_job_exceeds_max_bf_param``, ``_check_bf_usage``; the compiled rules are ``ext/bf_limits.pxd``, the
oracle :mod:`pbf.reference.slurm_backfill_ref`):

* ``max_job_user``, ``max_job_assoc`` (``bf_max_job_user``, ``bf_max_job_assoc``): a cycle tests at most
  this many jobs of one user; the user's later jobs are passed over in that cycle (not tested, not
  counted toward ``max_job_test``). pbf gives each user one association, so the two are one count a
  user, capped by the least of those set; as in Slurm, ``max_job_user`` is ignored when
  ``max_job_assoc`` is set. ``max_job_user_part`` (``bf_max_job_user_part``): the same in each
  partition apart.
* ``max_job_part`` (``bf_max_job_part``): a cycle tests at most this many jobs of each partition.

A job of several partitions passes these checks once a partition (its record of each, as Slurm queues
it), counted in that partition and for its user each time.
* ``max_job_start`` (``bf_max_job_start``): a cycle ends once it has started this many jobs.
* ``min_prio_reserve`` (``bf_min_prio_reserve``): a job of lower (multifactor) priority may only start
  now; it makes no reservation.
* ``min_age_reserve`` (``bf_min_age_reserve``, seconds): a job that has waited less since its submission
  may only start now.
* ``job_part_count_reserve`` (``bf_job_part_count_reserve``): once this many jobs of a partition have
  reserved in a cycle, the partition's later jobs may only start now (Slurm counts a partition's
  reservations, ``bf_data->resv_usage``, and resets the count each cycle). ``Backfill.reservations``,
  by contrast, counts every partition's reservations as one.

0 turns a limit off (Slurm's default for each).

``one_resv_per_job`` (``bf_one_resv_per_job``): a job of several partitions, tested once in each (as
Slurm queues a record a partition), makes at most one reservation a cycle: once a record has reserved,
its later records may only start now (``_attempt_backfill``: ``job_ptr->start_time`` set, ``TEST_NOW_ONLY``).
Without it (Slurm's default) each record may reserve.

``slurm_version`` (``20.11``, ``22.05``, ``23.11``) and ``select_type`` (``cons_tres``, ``cons_res``) say
how a GPU job's tests mark the nodes' scheduling weights (:func:`pbf.slurm_versions.node_marks`).

``clock_origin``: the Unix time (s) of the replay's second 0 (0: the replay's own seconds). Slurm's
will-run test gives running jobs' resources back in batches whose first ends at the first end rounded
up to a multiple of 30 s of Unix time (``_will_run_test`` in ``src/plugins/select/cons_common/job_test.c``:
``end_time % time_window``), so where a replay's seconds fall on that clock moves which ends share a batch,
and with them a waiting job's planned start and the reservation later jobs must keep clear of.
"""
from __future__ import annotations

from dataclasses import dataclass

from .bounded import check_int
from .config import MAX_COUNT, Backfill, _check_choice
from .errors import ConfigError
from .slurm_versions import DEFAULT_SLURM_VERSION, SELECT_TYPES, check_version, node_marks

__all__ = ["SlurmBackfill", "LIMITS", "MAX_BF_MAX_JOB_START", "MAX_BF_MIN_AGE_RESERVE", "MAX_BF_MIN_PRIO_RESERVE",
           "MAX_CLOCK_ORIGIN"]

#: Slurm 22.05's largest values (backfill.c): MAX_BF_MAX_JOB_START, MAX_BF_MIN_AGE_RESERVE (30 days),
#: MAX_BF_MIN_PRIO_RESERVE (INFINITE, a uint32)
MAX_BF_MAX_JOB_START = 10_000
MAX_BF_MIN_AGE_RESERVE = 30 * 86400
MAX_BF_MIN_PRIO_RESERVE = (1 << 32) - 1

#: each limit: (field, SchedulerParameters name, largest value)
LIMITS = (("max_job_user", "bf_max_job_user", MAX_COUNT), ("max_job_user_part", "bf_max_job_user_part", MAX_COUNT),
          ("max_job_assoc", "bf_max_job_assoc", MAX_COUNT), ("max_job_part", "bf_max_job_part", MAX_COUNT),
          ("max_job_start", "bf_max_job_start", MAX_BF_MAX_JOB_START),
          ("min_prio_reserve", "bf_min_prio_reserve", MAX_BF_MIN_PRIO_RESERVE),
          ("min_age_reserve", "bf_min_age_reserve", MAX_BF_MIN_AGE_RESERVE),
          ("job_part_count_reserve", "bf_job_part_count_reserve", MAX_COUNT))


#: the largest clock_origin: 2^40 s of Unix time (some 35,000 years)
MAX_CLOCK_ORIGIN = 1 << 40
#: the will-run test's first window (s), on whose multiples of Unix time its batches end (job_test.c)
WILL_RUN_WINDOW = 30

#: the core's codes of the node weights' rules (ext/slurm_space.pxd SS_MARKS_*)
_MARKS = {"carry": 0, "none": 1, "per-test": 2}


@dataclass(frozen=True)
class SlurmBackfill(Backfill):
    """A :class:`pbf.Backfill` with Slurm's own backfill limits (module docstring; 0: off). They need
    Slurm's backfill on nodes (``node_search="slurm"``); ``min_prio_reserve`` needs a multifactor
    priority. ``slurm_version``, ``select_type``: the node weights' rule (module docstring)."""
    max_job_user: int = 0
    max_job_user_part: int = 0
    max_job_assoc: int = 0
    max_job_part: int = 0
    max_job_start: int = 0
    min_prio_reserve: int = 0
    min_age_reserve: int = 0
    job_part_count_reserve: int = 0
    one_resv_per_job: bool = False
    slurm_version: str = DEFAULT_SLURM_VERSION
    select_type: str = "cons_tres"
    clock_origin: int = 0

    def __post_init__(self):
        super().__post_init__()
        for name, _, hi in LIMITS:
            check_int(name, getattr(self, name), 0, hi)
        if not isinstance(self.one_resv_per_job, bool):
            raise ConfigError(f"one_resv_per_job must be True or False, got {self.one_resv_per_job!r}")
        check_version(self.slurm_version)
        check_int("clock_origin", self.clock_origin, 0, MAX_CLOCK_ORIGIN)
        _check_choice("select_type", self.select_type, SELECT_TYPES)
        if self.select_type == "cons_res" and self.slurm_version == "23.11":
            raise ConfigError("select_type='cons_res' with slurm_version='23.11': Slurm 23.11 removed "
                              "select/cons_res (use cons_tres)")

    @property
    def limited(self) -> bool:
        """Any limit set."""
        return any(getattr(self, name) for name, _, _ in LIMITS) or self.one_resv_per_job

    def per_user(self) -> int:
        """The jobs of one user a cycle tests at most over every partition (0: no limit): the least of
        ``max_job_assoc`` and ``max_job_user`` set (``max_job_user`` ignored when ``max_job_assoc`` is set,
        as Slurm's ``_load_config`` does; pbf gives each user one association). ``max_job_user_part``
        counts in each partition apart."""
        user = 0 if self.max_job_assoc else self.max_job_user
        set_ = [v for v in (self.max_job_assoc, user) if v]
        return min(set_) if set_ else 0

    def core_settings(self) -> dict:
        """Backfill's core settings and the limits' (``ext/bf_limits.pxd``)."""
        return {**super().core_settings(), "bf_max_user": self.per_user(),
                "bf_max_user_part": self.max_job_user_part, "bf_max_part": self.max_job_part,
                "bf_max_start": self.max_job_start, "bf_min_prio": float(self.min_prio_reserve),
                "bf_min_age": self.min_age_reserve, "bf_part_resv": self.job_part_count_reserve,
                "bf_one_resv": int(self.one_resv_per_job),
                "ss_marks": _MARKS[self.marks()], "ss_phase": self.clock_origin % WILL_RUN_WINDOW}

    def marks(self) -> str:
        """The node weights' rule (:func:`pbf.slurm_versions.node_marks`)."""
        return node_marks(self.slurm_version, self.select_type)

    def reference_limits(self) -> dict:
        """The oracle's limits (:func:`pbf.reference.slurm_backfill_ref.slurm_pass`)."""
        return {"per_user": self.per_user(), "per_user_part": self.max_job_user_part,
                "per_part": self.max_job_part, "max_start": self.max_job_start,
                "min_prio": self.min_prio_reserve, "min_age": self.min_age_reserve,
                "part_resv": self.job_part_count_reserve, "one_resv": self.one_resv_per_job}
