"""Trace replay: drives the compiled core's event loop over a job table and collects the results.

The whole event loop (arrivals, completions at start + run time, passes) runs compiled without the
GIL; Python only prepares the arrays, shows progress between chunks of instants and builds outputs.
Jobs are killed at their requested time (run = min(run, requested)).
"""
from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from ._coalloc import Coalloc
from ._estimates import StartEstimates
from ._nodes import NodeCluster
from ._outages import Outages
from .cluster import MAX_UNITS
from .coalloc import CoAllocation, cpu_use
from .codes import CLOCKS, TRIGGERS
from .config import Backfill, _check_choice
from .core_config import build_core, check_run_options
from .errors import ConfigError
from .outages import Failures, NodeLayout, core_events
from .plugins.scoring import Scoring
from .replay_result import OUTPUT_FILES, ReplayResult, assemble, check_output_dir
from .scheduler_time import SLURM_SIM_SLOT_COST_US, SLURM_SIM_TEST_COST_US, SlurmSim
from .workload.jobs import JobTable

__all__ = ["ReplayConfig", "ReplayResult", "replay", "check_output_dir", "OUTPUT_FILES"]

_CHUNK_INSTANTS = 20_000


@dataclass(frozen=True)
class ReplayConfig:
    """What to replay with. ``units``: cluster size (default: the trace header's, else the widest
    job). ``trigger``: ``event`` (a full pass at every instant with events) or ``interval`` (a quick
    start-now pass on events and a full pass every ``bf_interval`` seconds). ``bsld_bound``: tau of
    the bounded slowdown, seconds. ``workers``: threads per backfill pass (identical decisions for
    any count with the free clock; see docs/engine.md).

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
    consecutive-run best fit) or ``first-fit``. Without it the cluster is ``units`` interchangeable
    units. Node passes run on the worker threads as unit passes do, with the same decisions for any
    ``workers`` (docs/engine.md, "The parallel pass on nodes")."""

    @classmethod
    def from_preset(cls, name: str, backfill: Backfill | None = None, **overrides) -> ReplayConfig:
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
    units: int | None = None
    priority: object = "fcfs"
    predictor: object = "requested"
    correction: str = "incremental"
    backfill: Backfill = field(default_factory=Backfill)
    trigger: str = "event"
    bf_interval: int = 30
    bsld_bound: float = 10.0
    workers: int = 1
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
    start_estimates: bool = False
    estimate_every: int = 0
    coalloc: CoAllocation | None = None
    cluster: object = None
    mem_from: str = "requested"
    node_choice: str = "best-fit"

    def __post_init__(self):
        self.scoring()   # every plugin is looked up now: an unknown name fails here
        _check_choice("trigger", self.trigger, TRIGGERS)
        _check_choice("clock", self.clock, CLOCKS)
        check_run_options(self.workers, self.commit, self.backfill)
        if self.bf_max_time is not None and (not isinstance(self.bf_max_time, int) or self.bf_max_time <= 0):
            raise ConfigError(f"bf_max_time must be an int > 0 seconds or None, got {self.bf_max_time!r}")
        if self.cost_per_test_us is not None and (
                not isinstance(self.cost_per_test_us, (int, float)) or isinstance(self.cost_per_test_us, bool)
                or not math.isfinite(self.cost_per_test_us) or self.cost_per_test_us < 0):
            raise ConfigError(f"cost_per_test_us must be a number >= 0 or None (the clock's default), "
                              f"got {self.cost_per_test_us!r}")
        slot = self.cost_per_slot_us
        if slot is not None and (not isinstance(slot, int) or isinstance(slot, bool) or slot < 0):
            raise ConfigError(f"cost_per_slot_us must be an int >= 0 or None (the clock's default), "
                              f"got {self.cost_per_slot_us!r}")
        for name in ("cost_per_node_us", "cost_per_reservation_us"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ConfigError(f"{name} must be an int >= 0 (microseconds), got {value!r}")
        if (not isinstance(self.cost_power, (int, float)) or isinstance(self.cost_power, bool)
                or not math.isfinite(self.cost_power) or not 0 < self.cost_power <= 4):
            raise ConfigError(f"cost_power must be a number in (0, 4] (1: a constant cost per test), "
                              f"got {self.cost_power!r}")
        if not isinstance(self.slurm_sim, SlurmSim):
            raise ConfigError(f"slurm_sim must be a pbf.SlurmSim, got {self.slurm_sim!r}")
        if self.clock == "slurm-sim":
            self._check_slurm_sim()
        if not isinstance(self.bf_interval, int) or self.bf_interval <= 0:
            raise ConfigError(f"bf_interval must be an int > 0 seconds, got {self.bf_interval!r}")
        if (not isinstance(self.bsld_bound, (int, float)) or isinstance(self.bsld_bound, bool)
                or not math.isfinite(self.bsld_bound) or self.bsld_bound <= 0):
            raise ConfigError(f"bsld_bound must be a finite number > 0 (seconds), got {self.bsld_bound!r}")
        if not isinstance(self.kill_at_request, bool):
            raise ConfigError(f"kill_at_request must be True or False, got {self.kill_at_request!r}")
        if self.failures is not None and not isinstance(self.failures, Failures):
            raise ConfigError(f"failures must be a pbf.Failures or None, got {self.failures!r}")
        if not isinstance(self.start_estimates, bool):
            raise ConfigError(f"start_estimates must be True or False, got {self.start_estimates!r}")
        if not isinstance(self.estimate_every, int) or isinstance(self.estimate_every, bool) or self.estimate_every < 0:
            raise ConfigError(f"estimate_every must be an int >= 0 (instants with a pass), got {self.estimate_every!r}")
        if self.estimate_every and not self.start_estimates:
            raise ConfigError("estimate_every needs start_estimates=True")
        if self.coalloc is not None and not isinstance(self.coalloc, CoAllocation):
            raise ConfigError(f"coalloc must be a pbf.CoAllocation or None, got {self.coalloc!r}")
        if not isinstance(self.pass_records, bool):
            raise ConfigError(f"pass_records must be True or False, got {self.pass_records!r}")
        from .resources import MEM_FROM
        _check_choice("mem_from", self.mem_from, MEM_FROM)
        _check_choice("node_choice", self.node_choice, ("best-fit", "first-fit"))
        if self.cluster is not None:
            from .cluster import Cluster
            if not isinstance(self.cluster, (Cluster, str, os.PathLike)):
                raise ConfigError(f"cluster must be a pbf.Cluster, a name or a file, got {self.cluster!r}")
            if self.coalloc is not None:
                raise ConfigError("co-allocation lends cores of interchangeable units: it does not run on a cluster "
                                  "of nodes (drop cluster= or coalloc=)")
        if self.units is not None and (not isinstance(self.units, int) or isinstance(self.units, bool)
                                       or not 1 <= self.units <= MAX_UNITS):
            raise ConfigError(f"units must be an int from 1 to {MAX_UNITS:,}, got {self.units!r}")

    def _check_slurm_sim(self):
        if self.trigger != "interval":
            raise ConfigError("clock='slurm-sim' runs Slurm's own loop (main scheduler on events, a backfill "
                              "cycle every bf_interval): it needs trigger='interval'")
        if self.backfill.order != "queue":
            raise ConfigError(f"clock='slurm-sim' models Slurm's backfill, which tests jobs in queue order: "
                              f"order={self.backfill.order!r} is not supported with it")
        if self.commit != "ordered":
            raise ConfigError("clock='slurm-sim' needs commit='ordered' (its cycles yield between job tests)")
        self.slurm_sim.check_budget(self.budget_s())

    def test_costs(self) -> tuple[int, int]:
        """The charge of a job test and of a profile slot per test, in microseconds: as given, else
        the clock's default (model: 10,000 and 20; slurm-sim: 62 and 0, see :mod:`pbf.scheduler_time`)."""
        test, slot = (SLURM_SIM_TEST_COST_US, SLURM_SIM_SLOT_COST_US) if self.clock == "slurm-sim" else (10_000, 20)
        return (test if self.cost_per_test_us is None else self.cost_per_test_us,
                slot if self.cost_per_slot_us is None else self.cost_per_slot_us)

    def scoring(self) -> Scoring:
        """The resolved :class:`~pbf.plugins.Scoring` (priority, predictor, correction, order)."""
        return Scoring.resolve(self.priority, self.predictor, self.correction, self.backfill.order)

    def node_cluster(self):
        """The cluster of nodes (a :class:`pbf.Cluster`), or None for a cluster of units."""
        if self.cluster is None:
            return None
        from .cluster import Cluster
        return self.cluster if isinstance(self.cluster, Cluster) else Cluster.load(self.cluster)

    def as_dict(self) -> dict:
        d = {f: getattr(self, f) for f in self.__dataclass_fields__
             if f not in ("backfill", "slurm_sim", "failures", "coalloc", "cluster")}
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


def _cluster_units(table, config):
    if config.units:
        return config.units
    hdr = table.header.cluster_units()
    if hdr:
        return hdr
    if len(table):
        widest = int(table.units.max())
        if widest > MAX_UNITS:
            raise ConfigError(f"{table.source}: the trace has no MaxProcs or MaxNodes header and its widest job asks "
                              f"for {widest:,} units, more than the largest cluster pbf schedules "
                              f"({MAX_UNITS:,}); give the cluster size (--units N, ReplayConfig(units=N))")
        return widest
    raise ConfigError(f"{table.source}: no job is left to replay and no MaxProcs or MaxNodes header gives "
                      "the cluster size (give --units N to replay an empty trace)")


def replay(table: JobTable, config: ReplayConfig = ReplayConfig(), progress=None) -> ReplayResult:
    """Replay ``table`` (a :class:`~pbf.JobTable`) under ``config``; returns a :class:`ReplayResult`.

    ``progress``: None (no progress), True (a bar on stderr when it is a terminal) or a callable
    ``f(done_jobs, total_jobs)`` called between chunks.
    """
    cluster = config.node_cluster()
    if cluster is not None:
        if config.units is not None and config.units != cluster.units:
            raise ConfigError(f"units={config.units:,} but cluster {cluster.name!r} has {cluster.units:,} cores")
        units = cluster.units
    else:
        units = _cluster_units(table, config)
    scoring = config.scoring()
    order = np.lexsort((table.job_id, table.submit))   # (submit, id): the arrival order
    submit = np.ascontiguousarray(table.submit[order])
    size = np.ascontiguousarray(table.units[order])
    req = np.ascontiguousarray(table.req_time[order])
    run = np.maximum(table.run[order], 0)
    if config.kill_at_request:
        run = np.where(req > 0, np.minimum(run, req), run)  # killed at the requested time
    est = scoring.predictor.given(req, run)
    _, user = np.unique(table.user[order], return_inverse=True)
    part, qos = scoring.job_factors(table.partition[order], table.queue[order])
    core = build_core(units, config.backfill, scoring, workers=config.workers, commit=config.commit,
                      record_passes=config.pass_records, trigger=config.trigger,
                      bf_interval=config.bf_interval, clock=config.clock, budget_s=config.budget_s(),
                      cost_per_test_us=config.test_costs()[0], cost_per_slot_us=config.test_costs()[1],
                      cost_per_node_us=config.cost_per_node_us,
                      cost_per_reservation_us=config.cost_per_reservation_us, cost_power=config.cost_power,
                      slurm_sim=config.slurm_sim if config.clock == "slurm-sim" else None)
    requests = None
    if cluster is not None:
        from .resources import job_feature_bits, load_nodes, requests_of
        bits = load_nodes(core, cluster, config.node_choice == "first-fit")
        requests = requests_of(table, config.mem_from, cluster.default_mem_per_core_mb).take(order)
    core.load_trace(submit, size, est, run, req=req, user=user, part=part, qos=qos)
    if cluster is not None:
        NodeCluster(core).set_requests(0, requests.mem_core_mb, requests.mem_node_mb, requests.gpus,
                                       np.minimum(requests.nodes_min, np.maximum(size, 1)), requests.nodes_max,
                                       job_feature_bits(bits, requests.features))
    outages = events = None
    if config.failures is not None:
        span = (int(submit[0]), int(submit[-1]) + 1) if len(submit) else (0, 1)
        outages = config.failures.outages(units, *span, cluster=cluster)
        events = core_events(outages, units)
        Outages(core).load(*events, config.failures.on_failure == "requeue")
    if config.start_estimates:
        StartEstimates(core).record(config.estimate_every)
    from_trace = None
    if config.coalloc is not None:
        co = config.coalloc
        use, from_trace = cpu_use(table, order, co.cpu, co.seed)
        cores = np.asarray(NodeLayout.of(co.node_cores, units).cores, dtype=np.int32)
        Coalloc(core).enable(co.code(), float(co.fraction), float(co.beta), co.interval, float(co.lam),
                             float(co.tau), float(co.dmax), co.seed, cores, use)
    scoring.prepare(lambda: table.take(order), units)
    report = _progress_reporter(progress, len(submit))
    columns = {"id": table.job_id[order], "submit": submit, "units": size, "requested": req,
               "user": table.user[order]}
    core.start_pool(config.workers)
    t0 = time.perf_counter()
    try:
        while not core.replay(_CHUNK_INSTANTS if report else -1):
            if core.hook_waiting:
                first, n = core.hook_arrivals()
                scoring.on_hook(core, columns, core.hook_t, np.arange(first, first + n), core.pending())
            elif report:
                report(core.submitted)
        scoring.flush(core, columns, core.now)
    finally:
        core.stop_pool()
    wall = time.perf_counter() - t0
    if report:
        report(len(submit), final=True)
    return assemble(table, order, core, (submit, size, run, units), config, wall, (outages, events),
                    from_trace=from_trace, cluster=cluster, requests=requests)


def _progress_reporter(progress, total):
    if progress is None or progress is False:
        return None
    if callable(progress):
        def call(done, final=False):
            progress(done, total)
        return call
    if not sys.stderr.isatty():
        return None
    t0 = time.perf_counter()

    def bar(done, final=False):
        frac = done / total if total else 1.0
        filled = int(frac * 30)
        sys.stderr.write(f"\rreplay [{'#' * filled}{'.' * (30 - filled)}] {done:,}/{total:,} jobs "
                         f"{time.perf_counter() - t0:5.1f} s")
        if final:
            sys.stderr.write("\n")
        sys.stderr.flush()
    return bar
