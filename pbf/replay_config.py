"""The settings of a replay (:class:`ReplayConfig`): what :func:`pbf.replay` replays a trace with, each
setting checked when the config is made."""
from __future__ import annotations

import importlib
import math
import os
from dataclasses import dataclass, field

from .bounded import INT64_MAX, MAX_SECONDS, MAX_UNITS
from .codes import CLOCKS, TRIGGERS
from .config import MAX_COUNT, Backfill, _check_choice
from .core_config import check_run_options
from .errors import ConfigError
from .plugins.scoring import Scoring
from .scheduler_time import MAX_COST_US, SLURM_SIM_SLOT_COST_US, SLURM_SIM_TEST_COST_US, SlurmSim

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    from .cluster import Cluster
    from .coalloc import CoAllocation
    from .outages import Failures
    from .slurm_partitions import SitePartitions
    from .slurm_reservations import SiteReservations

__all__ = ["ReplayConfig", "NODE_CHOICES", "NODE_SEARCHES"]

#: how a job's nodes are chosen on a cluster of nodes
NODE_CHOICES = ("best-fit", "first-fit")
#: how a pass plans on nodes: pbf's exact plan, or Slurm's will-run test and whole-node reservations
NODE_SEARCHES = ("exact", "slurm")
#: where an SWF trace's memory comes from: pbf.resources.MEM_FROM (repeated here so that a replay without
#: nodes does not load the node code; tests/test_startup.py holds the two equal)
_MEM_FROM = ("requested", "used", "none")


def _pbf(module: str, name: str) -> type:
    """``pbf.<module>.<name>``, loaded when a setting given is checked against it (co-allocation, failures,
    clusters, partitions: a replay that does not use them does not load their modules)."""
    return getattr(importlib.import_module(f".{module}", __package__), name)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_in(value: object, lo: int, hi: int) -> bool:
    return _is_int(value) and lo <= value <= hi


def _number_in(value: object, lo: float, hi: float) -> bool:
    return _is_number(value) and lo <= value <= hi


def _is_number(value: object) -> bool:
    """A finite int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


#: settings with a fixed set of values, in the order checked
_CHOICES = (("trigger", TRIGGERS), ("clock", CLOCKS), ("mem_from", _MEM_FROM), ("node_choice", NODE_CHOICES),
            ("node_search", NODE_SEARCHES))

#: every other setting checked on its own: (name, test, what it must be), in the order checked; a value that
#: fails is refused with "NAME must be WHAT, got VALUE"
_SETTINGS = (
    ("bf_max_time", lambda v: v is None or _int_in(v, 1, MAX_SECONDS),
     f"an int from 1 to {MAX_SECONDS:,} seconds or None"),
    ("cost_per_test_us", lambda v: v is None or _number_in(v, 0, MAX_COST_US),
     f"a number from 0 to {MAX_COST_US:,} (microseconds) or None (the clock's default)"),
    ("cost_per_slot_us", lambda v: v is None or _int_in(v, 0, MAX_COST_US),
     f"an int from 0 to {MAX_COST_US:,} (microseconds) or None (the clock's default)"),
    ("cost_per_node_us", lambda v: _int_in(v, 0, MAX_COST_US), f"an int from 0 to {MAX_COST_US:,} (microseconds)"),
    ("cost_per_reservation_us", lambda v: _int_in(v, 0, MAX_COST_US),
     f"an int from 0 to {MAX_COST_US:,} (microseconds)"),
    ("cost_power", lambda v: _is_number(v) and 0 < v <= 4, "a number in (0, 4] (1: a constant cost per test)"),
    ("slurm_sim", lambda v: isinstance(v, SlurmSim), "a pbf.SlurmSim"),
    ("bf_interval", lambda v: _int_in(v, 1, MAX_SECONDS), f"an int from 1 to {MAX_SECONDS:,} seconds"),
    ("threads", lambda v: v == "auto" or _int_in(v, 1, 256), "an int from 1 to 256 or 'auto'"),
    ("bsld_bound", lambda v: _is_number(v) and 0 < v <= MAX_SECONDS,
     f"a finite number in (0, {MAX_SECONDS:,}] (seconds)"),
    ("kill_at_request", lambda v: isinstance(v, bool), "True or False"),
    ("failures", lambda v: v is None or isinstance(v, _pbf("outages", "Failures")), "a pbf.Failures or None"),
    ("qos_limits", lambda v: v is None or isinstance(v, (str, os.PathLike)), "a sacctmgr show qos dump's path or None"),
    ("assoc_limits", lambda v: v is None or isinstance(v, (str, os.PathLike)), "a sacctmgr dump file's path or None"),
    ("start_estimates", lambda v: isinstance(v, bool), "True or False"),
    ("estimate_every", lambda v: _int_in(v, 0, MAX_COUNT), f"an int from 0 to {MAX_COUNT:,} (instants with a pass)"),
    ("coalloc", lambda v: v is None or isinstance(v, _pbf("coalloc", "CoAllocation")), "a pbf.CoAllocation or None"),
    ("pass_records", lambda v: isinstance(v, bool), "True or False"),
    ("record_nodes", lambda v: isinstance(v, bool), "True or False"),
    ("cluster", lambda v: v is None or isinstance(v, (str, os.PathLike)) or isinstance(v, _pbf("cluster", "Cluster")),
     "a pbf.Cluster, a name or a file"),
    ("units", lambda v: v is None or (_is_int(v) and 1 <= v <= MAX_UNITS), f"an int from 1 to {MAX_UNITS:,}"),
    ("partitions", lambda v: v is None or isinstance(v, _pbf("slurm_partitions", "SitePartitions")),
     "a pbf.slurm_partitions.SitePartitions or None"),
    ("reservations", lambda v: v is None or isinstance(v, _pbf("slurm_reservations", "SiteReservations")),
     "a pbf.slurm_reservations.SiteReservations or None"),
    ("resv_over_run", lambda v: _int_in(v, 0, 365 * 86400), "an int from 0 to 31,536,000 (seconds; ResvOverRun)"),
    ("resv_check_at", lambda v: v is None or _int_in(v, -MAX_SECONDS, MAX_SECONDS),
     f"None or an int from -{MAX_SECONDS:,} to {MAX_SECONDS:,} (seconds)"),
    ("max_passes", lambda v: v is None or _int_in(v, 1, INT64_MAX),
     "None (automatic: 2,000,000 + 200 a job) or an int >= 1"),
)


@dataclass(frozen=True)
class ReplayConfig:
    """What to replay with. ``units``: cluster size (default: the trace header's, else the widest
    job). ``trigger``: ``event`` (a full pass at every instant with events) or ``interval`` (a quick
    start-now pass on events and a full pass every ``bf_interval`` seconds). ``bsld_bound``: tau of
    the bounded slowdown, seconds. ``workers``: threads per backfill pass (identical decisions for
    any count with the free clock; see docs/engine.md); on the ``model`` and ``slurm-sim`` clocks,
    modelled workers (a pass is charged the time of that many workers testing side by side, so the
    schedule changes with the count). ``threads``: on the ``slurm-sim`` clock, real threads for a
    cycle's tests, separate from the modelled workers: 1 (default), or 2 or more: a helper thread
    tests Slurm's later starts ahead (one helper: more count as 2), with decisions identical to 1;
    ``"auto"`` takes 2 on a cluster of at least 64 nodes when the process may run on 2 CPUs or more,
    else 1 (whether a cycle then shares is measured, as on the free clock: docs/engine.md). Other
    clocks take 1 (their threads are ``workers``).

    ``clock`` (DESIGN §4.6): ``free`` (passes cost nothing; only ``max_job_test`` limits them),
    ``model`` (each job test costs ``cost_per_test_us`` plus ``cost_per_slot_us`` per profile slot,
    jobs go to the modelled worker with the least accumulated cost, a pass lasts as long as its
    busiest worker: deterministic; with Slurm's shape, also ``cost_per_node_us`` per node that could
    hold the job on a node cluster and ``cost_per_reservation_us`` per reservation the pass made
    before the test, and with ``cost_power`` p a worker's first n tests cost ``cost_per_test_us`` x
    n^p, the Slurm simulator's bf_model; docs/engine.md "Scheduler time"), or ``wall`` (the measured
    time; not reproducible). With a clock,
    a full pass stops when ``bf_max_time`` (default: ``bf_interval``, Slurm 17.02) is spent, and its
    duration delays the next interval pass. ``slurm-sim`` (with ``trigger="interval"``): scheduling
    takes simulated time, as in the Slurm 17.02 simulator -- the main loop, the main scheduler's
    limits, cycles that yield every ``slurm_sim.bf_yield_interval`` and end when a yield finds
    arrivals or completions, jobs that start when the cycle reaches them (:class:`pbf.SlurmSim`;
    docs/engine.md "Scheduler time"). ``cost_per_test_us`` / ``cost_per_slot_us`` default to the
    clock's own (model: 10,000 / 20; slurm-sim: 62 / 0).

    ``commit``: ``ordered`` (default; results commit in queue order: the same decisions for any
    number of workers) or ``eager`` (the paper's algorithm: first done, first committed; results may
    depend on thread timing, the summary says so and counts priority inversions).

    Scoring (DESIGN §6; ``pbf list`` names them): ``priority`` (``fcfs``, ``sjf``, ``smallest``,
    ``wfp3``, ``unicep``, ``f1``..``f4``, ``multifactor`` or a :class:`pbf.plugins.Multifactor`),
    ``predictor`` (``requested``, ``clairvoyant``, ``ave2``, ``regression`` or a
    :class:`pbf.plugins.Regression`), ``correction`` (``incremental``, ``requested``,
    ``recursive-doubling``) and ``backfill.order`` (``queue``, ``sjbf``); each may also be a user's
    plugin, as ``"package.module:attr"`` or an object. :meth:`from_preset` starts from a preset.

    ``pass_records``: keep a record of every pass (``passes``, passes.csv, with its wall time); False
    keeps only the totals the summary needs: less memory on long traces (72 bytes a pass)
    and a faster replay (no clock is read; the summary's wall times are then None).

    ``kill_at_request``: a job ends at its requested time at the latest (default); False lets it run
    its whole run time (the CLI's ``--no-clip-runtime``).

    ``failures``: node drains and failures (a :class:`pbf.Failures`: a failure file or failures
    drawn from an MTBF; :mod:`pbf.outages`).

    ``qos_limits``: a ``sacctmgr show qos`` dump whose QOS limits on running jobs apply (:mod:`pbf.qos`).

    ``assoc_limits``: a ``sacctmgr dump`` file whose association limits apply (:mod:`pbf.associations`).

    ``start_estimates``: record each job's estimated start right after the instant it arrives
    (what ``squeue --start`` would have told its user; a plan made on request, see
    :meth:`pbf.Engine.estimates`) and report their accuracy against the actual starts;
    ``estimate_every`` K > 0 also records every pending job's estimate every K instants with a
    pass (``estimates.csv``).

    ``coalloc``: co-allocation (a :class:`pbf.CoAllocation`: running jobs lend cores to queued
    ones, a fixed fraction or a learner decides how much; :mod:`pbf.coalloc`). With it, ``run`` in
    the results and the metrics is each job's elapsed time, stretched by sharing.

    ``cluster``: a cluster of nodes (a :class:`pbf.Cluster` with nodes, or a name or file for
    :meth:`pbf.Cluster.load`: ``"beocat"``, ``"beocat-gpu"``, a TOML file, a ``slurm.conf``). Jobs then
    get cores on nodes that also have their memory and GPUs free, by Slurm's rules (docs/engine.md
    "Nodes and resources"); ``mem_from`` says where an SWF trace's memory comes from
    (``requested``: field 10, ``used``: field 7, ``none``), ``node_choice`` is ``best-fit`` (Slurm's
    consecutive-run best fit) or ``first-fit``, ``node_search`` is ``exact`` (a job that cannot start
    reserves the earliest start at which its resources are free on some nodes, by every running job's
    planned end) or ``slurm`` (Slurm's backfill: the select plugin's will-run test, which frees running
    jobs in batches of ends within a window of 30 s that doubles, and reservations of whole nodes;
    ``--slurm-conf`` sets it; docs/slurm-harness.md), ``record_nodes`` adds each job's nodes to the
    results (the ``nodes`` column: names joined by ``,``; a bitmap of the cluster's cores is kept
    per job while replaying, so it costs cores / 8 bytes a job). Without it the cluster is ``units`` interchangeable
    units. Node passes run on the worker threads as unit passes do, with the same decisions for any
    ``workers`` (docs/engine.md, "The parallel pass on nodes").

    ``partitions``: every partition of a site's ``slurm.conf`` (a :class:`pbf.slurm_partitions.SitePartitions`,
    which ``--slurm-conf FILE`` sets; it needs ``cluster``, the union of their nodes): each job runs only on
    the nodes of its own partitions, within their limits, with their default memory (docs/inputs.md).

    ``reservations``: a site's advance reservations (a :class:`pbf.slurm_reservations.SiteReservations`,
    which ``--slurm-reservations FILE`` sets; it needs ``cluster``): each holds its nodes, whole, from
    its start to its end against every job (docs/inputs.md). ``resv_over_run``: slurm.conf's
    ``ResvOverRun`` in seconds (0, Slurm's default; ``--slurm-conf`` reads it): a job inside a reservation
    still running at its end plus this is ended at slurmctld's next 30-second time-limit check
    (:func:`pbf.slurm_reservations.end_checks`; jobs.csv: reason "ended at its reservation's end (TIMEOUT)").
    ``resv_check_at``: the time (seconds, the trace's clock) of one of those checks, which fall every 30 s
    from when slurmctld started (``pbf validate slurm`` reads it from Slurm's log); None: the first
    submission, plus ``slurm_sim.timer_phase`` on the slurm-sim clock (a site's files do not say it).

    ``max_passes``: the replay stops with a :class:`pbf.ConfigError` once it has made this many passes
    (None: 2,000,000 + 200 a job, :meth:`pass_limit`), so that a trace whose jobs hold the cluster for
    centuries of simulated time under an interval trigger (a pass every ``bf_interval``) ends with an
    error instead of running for hours; raise it for such traces on purpose."""
    units: int | None = None
    priority: object = "fcfs"
    predictor: object = "requested"
    correction: str = "incremental"
    backfill: Backfill = field(default_factory=Backfill)
    trigger: str = "event"
    bf_interval: int = 30
    bsld_bound: float = 10.0
    workers: int = 1
    threads: int | str = 1
    clock: str = "free"
    bf_max_time: int | None = None
    cost_per_test_us: float | None = None
    cost_per_slot_us: int | None = None
    cost_per_node_us: int = 0
    cost_per_reservation_us: int = 0
    cost_power: float = 1.0
    commit: str = "ordered"
    pass_records: bool = True
    kill_at_request: bool = True
    slurm_sim: SlurmSim = field(default_factory=SlurmSim)
    failures: Failures | None = None
    qos_limits: str | os.PathLike | None = None
    assoc_limits: str | os.PathLike | None = None
    start_estimates: bool = False
    estimate_every: int = 0
    coalloc: CoAllocation | None = None
    cluster: Cluster | str | os.PathLike | None = None
    mem_from: str = "requested"
    node_choice: str = "best-fit"
    node_search: str = "exact"
    record_nodes: bool = False
    max_passes: int | None = None
    partitions: SitePartitions | None = None
    reservations: SiteReservations | None = None
    resv_over_run: int = 0
    resv_check_at: int | None = None

    def __post_init__(self):
        self.scoring()   # every plugin is looked up now: an unknown name fails here
        for name, choices in _CHOICES:
            _check_choice(name, getattr(self, name), choices)
        check_run_options(self.workers, self.commit, self.backfill)
        for name, valid, what in _SETTINGS:
            value = getattr(self, name)
            if not valid(value):
                raise ConfigError(f"{name} must be {what}, got {value!r}")
        self._check_combinations()

    def _check_combinations(self):
        if self.threads not in ("auto", 1) and self.clock != "slurm-sim":
            raise ConfigError(f"threads={self.threads} (--threads) applies to the slurm-sim clock (--preset slurm, "
                              f"--slurm-conf), not to the {self.clock} clock: there, workers are the threads")
        if self.estimate_every and not self.start_estimates:
            raise ConfigError("estimate_every needs start_estimates=True")
        if self.cluster is not None and self.coalloc is not None:
            raise ConfigError("co-allocation lends cores of interchangeable units: it does not run on a cluster "
                              "of nodes (drop cluster= or coalloc=)")
        if self.partitions is not None and self.cluster is None:
            raise ConfigError("partitions place jobs on the nodes of their partitions: they need a cluster of nodes "
                              "(cluster=)")
        if self.reservations is not None and self.cluster is None:
            raise ConfigError("reservations hold nodes by name: they need a cluster of nodes (cluster=)")
        if self.record_nodes and self.cluster is None:
            raise ConfigError("record_nodes lists each job's nodes: it needs a cluster of nodes (cluster=)")
        if self.node_search == "slurm" and self.cluster is None:
            raise ConfigError("node_search='slurm' plans on nodes: it needs a cluster of nodes (cluster=)")
        if self.node_search == "slurm" and (self.backfill.order == "sjbf" or self.backfill.stop_at_reservation_limit):
            raise ConfigError("node_search='slurm' is Slurm's backfill: it tests jobs in queue order and makes a "
                              "reservation for each (no sjbf order, no stop_at_reservation_limit)")
        if getattr(self.backfill, "limited", False) and isinstance(self.backfill, _pbf("bf_limits", "SlurmBackfill")):
            self._check_bf_limits()
        if self.clock == "slurm-sim":
            if self.trigger != "interval":
                raise ConfigError("clock='slurm-sim' runs Slurm's own loop (main scheduler on events, a backfill "
                                  "cycle every bf_interval): it needs trigger='interval'")
            if self.backfill.order != "queue":
                raise ConfigError(f"clock='slurm-sim' models Slurm's backfill, which tests jobs in queue order: "
                                  f"order={self.backfill.order!r} is not supported with it")
            if self.commit != "ordered":
                raise ConfigError("clock='slurm-sim' needs commit='ordered' (its cycles yield between job tests)")
            self.slurm_sim.check_budget(self.budget_s())

    def _check_bf_limits(self):
        if self.node_search != "slurm":
            raise ConfigError("Slurm's backfill limits (pbf.bf_limits.SlurmBackfill: max_job_user, max_job_start, ...) "
                              "apply to Slurm's backfill on nodes: they need node_search='slurm' and a cluster of "
                              "nodes")
        if self.backfill.min_prio_reserve and getattr(self.scoring().priority, "name", None) != "multifactor":
            raise ConfigError("min_prio_reserve (bf_min_prio_reserve) compares Slurm's multifactor priorities: it "
                              "needs priority='multifactor' (or a pbf.plugins.Multifactor)")

    @classmethod
    def from_preset(cls, name: str, backfill: Backfill | None = None, **overrides: object) -> ReplayConfig:
        """A config from a preset (``easy``, ``easy++``, ``easy-clairvoyant``,
        ``easy-sjbf-clairvoyant``, ``gaussier``, ``slurm``), with ``overrides``; ``backfill``
        replaces the preset's backfill settings."""
        from .plugins.presets import BACKFILL_KEYS, preset
        settings = preset(name)
        order = settings.pop("order")
        in_backfill = {k: settings.pop(k) for k in BACKFILL_KEYS if k in settings}
        backfill = backfill if backfill is not None else Backfill(order=order, **in_backfill)
        return cls(**{**settings, "backfill": backfill, **overrides})

    def budget_s(self) -> int | None:
        """The time budget of a full pass in seconds (None with the free clock)."""
        if self.clock == "free":
            return None
        return self.bf_max_time if self.bf_max_time is not None else self.bf_interval

    def pass_limit(self, jobs: int) -> int:
        """The most passes the replay of ``jobs`` jobs may make: ``max_passes``, else 2,000,000 + 200 a job
        (real logs make 1-40 a job; a job that holds the cluster for decades of simulated time under an
        interval trigger makes millions)."""
        return self.max_passes if self.max_passes is not None else 2_000_000 + 200 * jobs

    def test_costs(self) -> tuple[int, int]:
        """The charge of a job test and of a profile slot per test, in microseconds: as given, else
        the clock's default (model: 10,000 and 20; slurm-sim: 62 and 0, see :mod:`pbf.scheduler_time`)."""
        test, slot = (SLURM_SIM_TEST_COST_US, SLURM_SIM_SLOT_COST_US) if self.clock == "slurm-sim" else (10_000, 20)
        return (test if self.cost_per_test_us is None else self.cost_per_test_us,
                slot if self.cost_per_slot_us is None else self.cost_per_slot_us)

    def scoring(self) -> Scoring:
        """The resolved :class:`~pbf.plugins.Scoring` (priority, predictor, correction, order)."""
        return Scoring.resolve(self.priority, self.predictor, self.correction, self.backfill.order)

    def node_cluster(self) -> Cluster | None:
        """The cluster of nodes (a :class:`pbf.Cluster`), or None for a cluster of units."""
        if self.cluster is None:
            return None
        cluster = _pbf("cluster", "Cluster")
        return self.cluster if isinstance(self.cluster, cluster) else cluster.load(self.cluster)

    def as_dict(self) -> dict:
        """The settings as JSON-ready values (plugins and clusters by name; the clock's test costs filled in)."""
        d = {f: getattr(self, f) for f in self.__dataclass_fields__
             if f not in ("backfill", "slurm_sim", "failures", "coalloc", "cluster", "qos_limits", "assoc_limits",
                          "partitions", "reservations")}
        d["reservations"] = self.reservations.as_dict() if self.reservations is not None else None
        if self.partitions is not None:
            d["partitions"] = {"names": [p.name for p in self.partitions.partitions], "multi": self.partitions.multi}
        d["qos_limits"] = None if self.qos_limits is None else os.fspath(self.qos_limits)
        d["assoc_limits"] = None if self.assoc_limits is None else os.fspath(self.assoc_limits)
        d["cluster"] = (None if self.cluster is None
                        else os.fspath(self.cluster) if isinstance(self.cluster, (str, os.PathLike))
                        else self.cluster.name)
        d["coalloc"] = self.coalloc.as_dict() if self.coalloc is not None else None
        d["failures"] = self.failures.as_dict() if self.failures is not None else None
        d["cost_per_test_us"], d["cost_per_slot_us"] = self.test_costs()
        d["slurm_sim"] = self.slurm_sim.as_dict() if self.clock == "slurm-sim" else None
        d["backfill"] = {f: getattr(self.backfill, f) for f in self.backfill.__dataclass_fields__}
        names = self.scoring().describe()
        d["priority"], d["predictor"], d["backfill"]["order"] = names["priority"], names["predictor"], names["order"]
        return d
