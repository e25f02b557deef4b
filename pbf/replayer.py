"""Trace replay: drives the compiled core's event loop over a job table and collects the results.

The whole event loop (arrivals, completions at start + run time, passes) runs compiled without the
GIL; Python only prepares the arrays, shows progress between chunks of instants and builds outputs.
Jobs are killed at their requested time (run = min(run, requested)).

A plain replay (a cluster of units; built-in priority, predictor and chooser; no co-allocation,
failures, start estimates, QOS or association limits; :func:`_plain`) orders its jobs, loads the core
and sums its results up in compiled code over buffers (:mod:`pbf._table`), without numpy: its
per-job columns become numpy arrays when they are first read (:attr:`ReplayResult.jobs`). Every
other replay prepares its arrays with numpy.
"""
from __future__ import annotations

import sys
import time

from . import _table
from ._coalloc import Coalloc  # (a compiled module of a few hundred µs: here, where tests replace it)
from .bounded import MAX_UNITS
from .core_config import build_core
from .errors import ConfigError
from .replay_config import ReplayConfig
from .replay_result import OUTPUT_FILES, ReplayResult, assemble, check_output_dir
from .workload.jobs import JobTable, user_names

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    from collections.abc import Callable


__all__ = ["ReplayConfig", "ReplayResult", "replay", "check_output_dir", "OUTPUT_FILES"]

_CHUNK_INSTANTS = 20_000


def _cluster_units(table, config):
    if config.units:
        return config.units
    hdr = table.header.cluster_units()
    if hdr:
        return hdr
    if len(table):
        widest = int(_table.int_max(_int64(table, "units")))
        if widest > MAX_UNITS:
            raise ConfigError(f"{table.source}: the trace has no MaxProcs or MaxNodes header and its widest job asks "
                              f"for {widest:,} units, more than the largest cluster pbf schedules "
                              f"({MAX_UNITS:,}); give the cluster size (--units N, ReplayConfig(units=N))")
        return widest
    raise ConfigError(f"{table.source}: no job is left to replay and no MaxProcs or MaxNodes header gives "
                      "the cluster size (give --units N to replay an empty trace)")


#: a cycle shares a test with a helper thread only over this many nodes or more (the core's
#: SPLIT_MIN_NODES, ext/state.pxd): "auto" takes no helper on a smaller cluster
_HELPER_MIN_NODES = 64


def sim_threads(config: ReplayConfig, cluster) -> int:
    """The real threads for a slurm-sim cycle's tests (``ReplayConfig.threads``; 1 on other clocks):
    ``"auto"`` takes 2 on a node cluster of at least 64 nodes when this process may run on 2 CPUs or
    more (whether a cycle then shares is measured by the core's trials, as on the free clock)."""
    if config.clock != "slurm-sim":
        return 1
    if config.threads != "auto":
        return int(config.threads)
    if cluster is None or len(cluster.nodes) < _HELPER_MIN_NODES:
        return 1
    import psutil
    try:
        cpus = len(psutil.Process().cpu_affinity())
    except (AttributeError, psutil.Error):     # (no affinity on every platform)
        cpus = psutil.cpu_count() or 1
    return 2 if cpus >= 2 else 1


def _int64(table: JobTable, name: str) -> object:
    """Column ``name`` of ``table`` as a buffer of C-contiguous int64 (a reader's buffer, or numpy's)."""
    column = table.buffer(name)
    if getattr(column, "typecode", None) == "q" or getattr(column, "format", None) == "q":
        return column           # (an array.array or memoryview a reader filled)
    import numpy as np  # (a table of numpy arrays: numpy is loaded already)
    return np.ascontiguousarray(column, dtype=np.int64)


def _plain(config: ReplayConfig, cluster: object, scoring: object) -> bool:
    """Whether the replay's columns in and figures out are what :mod:`pbf._table` makes on its own: a
    cluster of units, built-in plugins with a given estimate (the requested time, or the run time for
    ``clairvoyant``), and nothing that changes or adds per-job columns."""
    from .plugins.predictors import Clairvoyant, Predictor
    from .plugins.registry import is_multifactor
    lag = config.clock == "slurm-sim" and config.slurm_sim.end_lag and not config.slurm_sim.end_after_cycle
    return (cluster is None and config.partitions is None and config.coalloc is None and config.failures is None
            and not config.start_estimates and config.qos_limits is None and config.assoc_limits is None
            and not lag and not scoring.needs_hooks and not is_multifactor(scoring.priority)
            and isinstance(scoring.predictor, Predictor)
            and type(scoring.predictor).given in (Predictor.given, Clairvoyant.given)
            and not any(hasattr(getattr(p, "fn", None), "prepare") for p in (scoring.priority, scoring.chooser)))


def replay(table: JobTable, config: ReplayConfig = ReplayConfig(),
           progress: bool | Callable[[int, int], object] | None = None) -> ReplayResult:
    """Replay ``table`` (a :class:`~pbf.JobTable`) under ``config``; returns a :class:`ReplayResult`.

    ``progress``: None (no progress), True (a bar on stderr when it is a terminal) or a callable
    ``f(done_jobs, total_jobs)`` called between chunks.
    """
    cluster = config.node_cluster()
    placed = None
    if config.partitions is not None and cluster is not None:
        # every partition of a site's slurm.conf: the cluster with a feature for each set of partitions
        placed = config.partitions.place(table, cluster, config.mem_from)
        cluster = placed.cluster
    if cluster is not None:
        if config.units is not None and config.units != cluster.units:
            raise ConfigError(f"units={config.units:,} but cluster {cluster.name!r} has {cluster.units:,} cores")
        units = cluster.units
    else:
        units = _cluster_units(table, config)
    scoring = config.scoring()
    plain = _plain(config, cluster, scoring)
    from .plugins.predictors import Clairvoyant
    # the arrival order, (submit, id); run times at least 0 and, killed at their requested time, at most
    # it; each job's user among the distinct users (compiled, over the table's buffers)
    names = ("submit", "job_id", "units", "req_time", "run", "user")
    columns = [_int64(table, name) for name in names]
    if len({len(c) for c in columns}) > 1:     # (the compiled step reads them without bounds checks)
        raise ValueError("the job table's columns differ in length: "
                         + ", ".join(f"{name} {len(c):,}" for name, c in zip(names, columns)))
    order, submit, size, req, run, est, user, user_ids = _table.replay_columns(
        *columns, config.kill_at_request, isinstance(scoring.predictor, Clairvoyant))
    held, part, qos = run, None, None
    if not plain:
        import numpy as np
        order = np.arange(len(submit)) if order is None else np.frombuffer(order, dtype=np.int64)
        submit, size, req, run, user = (np.frombuffer(c, dtype=np.int64) for c in (submit, size, req, run, user))
        est = scoring.predictor.given(req, run)
        sim = config.slurm_sim
        lag = sim.end_lag if config.clock == "slurm-sim" and not sim.end_after_cycle else 0   # (else: the core's)
        below = config.slurm_sim.end_lag_below
        if lag:                          # (the scheduler sees these ends lag seconds late; reported ends are not)
            held = run + lag if below <= 0 else np.where(run < below, run + lag, run)
        else:
            held = run
        part, qos = scoring.job_factors(table.partition[order], table.queue[order])
    core = build_core(units, config.backfill, scoring, workers=config.workers, commit=config.commit,
                      record_passes=config.pass_records, trigger=config.trigger,
                      bf_interval=config.bf_interval, clock=config.clock, budget_s=config.budget_s(),
                      cost_per_test_us=config.test_costs()[0], cost_per_slot_us=config.test_costs()[1],
                      cost_per_node_us=config.cost_per_node_us,
                      cost_per_reservation_us=config.cost_per_reservation_us, cost_power=config.cost_power,
                      slurm_sim=config.slurm_sim if config.clock == "slurm-sim" else None)
    requests = None
    if config.record_nodes:
        core.set_testing(record_units=1)
    if cluster is not None:
        from .resources import job_feature_bits, load_nodes, requests_of
        bits = load_nodes(core, cluster, config.node_choice == "first-fit", config.node_search)
        requests = (placed.requests if placed is not None
                    else requests_of(table, config.mem_from, cluster.default_mem_per_core_mb)).take(order)
    core.load_trace(submit, size, est, held, req=req, user=user, part=part, qos=qos)
    def names():
        named = user_names(table)
        return [named.get(int(u), str(int(u))) for u in user_ids]
    scoring.attach_users(core, len(user_ids), names)
    if cluster is not None:
        from ._nodes import NodeCluster
        from .resources import count_words, never_bits
        counts, never = count_words(cluster, requests)
        NodeCluster(core).set_requests(0, requests.mem_core_mb, requests.mem_node_mb, counts,
                                       np.minimum(requests.nodes_min, np.maximum(size, 1)), requests.nodes_max,
                                       job_feature_bits(bits, requests.features) | never_bits(never))
        if placed is not None and placed.job_parts is not None:
            NodeCluster(core).set_partitions(0, placed.job_parts[order], placed.node_parts)
        resv = None
        if config.reservations is not None:
            from .slurm_reservations import end_checks
            # (a repeating reservation: its windows to a month past the last submission; the jobs inside
            # a reservation, sacct's Reservation column)
            starts, ends, nodes, names = config.reservations.named_windows(
                cluster, (int(submit[-1]) if len(submit) else 0) + 30 * 86400)
            groups, inside = config.reservations.groups(names, table, (starts, ends))
            # a job inside one still running at its end plus ResvOverRun: ended at slurmctld's next 30 s
            # time-limit check, its timers' phase given, else that of the slurm-sim clock's (from the first
            # submission)
            check = config.resv_check_at if config.resv_check_at is not None else (
                (int(submit[0]) if len(submit) else 0)
                + (int(config.slurm_sim.timer_phase) if config.clock == "slurm-sim" else 0))
            kills = None if inside is None else end_checks(
                starts, ends, names, config.reservations.flags(), config.resv_over_run, check)
            resv = (starts, ends, nodes, groups, None if inside is None else inside[order], kills)
        first = None if resv is None or resv[4] is None else (resv[4] > 0) * RESV_FIRST
        tiers = None if placed is None or placed.job_tiers is None else placed.job_tiers[order]
        if tiers is not None or first is not None:
            core.set_tiers(0, (0 if tiers is None else tiers) + (0 if first is None else first))
        if placed is not None and placed.job_records is not None:
            records = [placed.job_records[i] for i in order]
            rtiers = None if placed.record_tiers is None else [placed.record_tiers[i] for i in order]
            if rtiers is not None and first is not None:
                rtiers = [None if ts is None else [t + int(first[k]) for t in ts] for k, ts in enumerate(rtiers)]
            _set_part_records(core, bits, requests, records, rtiers,
                              record_factors(scoring.priority, config.partitions, table, records), never)
        if resv is not None:
            NodeCluster(core).set_reservations(*resv)
    if cluster is not None and cluster.licenses:
        _set_licenses(core, cluster, table, order)
    qos_read = _set_qos_limits(core, config.qos_limits, table, order, len(user_ids)) \
        if config.qos_limits is not None else None
    assoc_read = None
    if config.qos_limits is not None or config.assoc_limits is not None:
        from .associations import set_assoc_limits
        assoc_read = set_assoc_limits(core, config.assoc_limits, config.qos_limits, table, order)
    outages = events = None
    if config.failures is not None:
        from ._outages import Outages
        from .outages import core_events
        span = (int(submit[0]), int(submit[-1]) + 1) if len(submit) else (0, 1)
        outages = config.failures.outages(units, *span, cluster=cluster)
        events = core_events(outages, units)
        Outages(core).load(*events, config.failures.on_failure == "requeue")
    if config.start_estimates:
        from ._estimates import StartEstimates
        StartEstimates(core).record(config.estimate_every)
    from_trace = None
    if config.coalloc is not None:
        from .coalloc import cpu_use
        from .outages import NodeLayout
        co = config.coalloc
        use, from_trace = cpu_use(table, order, co.cpu, co.seed)
        cores = np.asarray(NodeLayout.of(co.node_cores, units).cores, dtype=np.int32)
        Coalloc(core).enable(co.code(), float(co.fraction), float(co.beta), co.interval, float(co.lam),
                             float(co.tau), float(co.dmax), co.seed, cores, use)
    scoring.prepare(lambda: table.take(order), units)
    report = _progress_reporter(progress, len(submit))
    columns = None if plain else {"id": table.job_id[order], "submit": submit, "units": size, "requested": req,
                                  "user": table.user[order]}
    threads = sim_threads(config, cluster)
    core.start_pool(config.workers, threads)
    t0 = time.perf_counter()
    limit = config.pass_limit(len(submit))
    try:
        # (in chunks of instants: between them the progress, the Python plugins' hooks and the pass limit)
        while not core.replay(_CHUNK_INSTANTS):
            if core.hook_waiting:
                first, n = core.hook_arrivals()
                import numpy as np
                scoring.on_hook(core, columns, core.hook_t, np.arange(first, first + n), core.pending())
            elif report:
                report(core.submitted)
            _check_pass_limit(core, limit, len(submit), config)
        scoring.flush(core, columns, core.now)
    finally:
        core.stop_pool()
    wall = time.perf_counter() - t0
    if report:
        report(len(submit), final=True)
    result = assemble(table, order, core, (submit, size, run, units), config, wall, (outages, events),
                      from_trace=from_trace, cluster=cluster, requests=requests, plain=plain)
    if config.clock == "slurm-sim":
        result.summary["passes"]["sim_threads"] = threads
    if placed is not None:
        result.summary["partitions"] = placed.summary
    if qos_read is not None:
        result.summary["qos_limits"] = {**qos_read, **core.qos_limit_figures()}
    if assoc_read is not None:
        # (the jobs refused at submission, by Slurm's reason: a limit alone, then the submission limits)
        figures = core.assoc_limit_figures()
        refused = {**assoc_read["refused"], **{k: v for k, v in figures.pop("refused_submit").items() if v}}
        if assoc_read["assoc"] is not None:
            result.summary["assoc_limits"] = {**assoc_read["assoc"], **figures, "refused": refused}
        if qos_read is not None:
            result.summary["qos_limits"]["refused"] = refused
        from .associations import limit_reasons
        result.jobs["limit_reason"] = limit_reasons(core.limit_reasons(), assoc_read["why"])
    return result


def _check_pass_limit(core, limit, jobs, config):
    passes = core.pass_totals()["count"]
    if passes > limit:
        raise ConfigError(
            f"the replay stopped after {passes:,} passes for {jobs:,} jobs, at simulated time {core.now:,} s, "
            f"{core.submitted:,} jobs submitted: more than the limit of {limit:,} passes "
            f"({'max_passes' if config.max_passes is not None else '2,000,000 + 200 a job'}); jobs that hold the "
            "cluster for years of simulated time under an interval trigger make a pass every interval. Raise the "
            "limit with --max-passes N (ReplayConfig(max_passes=N)) if that is what you want")


def record_factors(priority, site, table, records) -> list | None:
    """Each record's multifactor partition factor (``records``: :attr:`pbf.slurm_partitions.Placed.job_records`
    in arrival order), as :meth:`pbf.plugins.Multifactor.factors` divides it, where some job's partitions
    differ in ``PriorityJobFactor`` under multifactor priority with a partition weight: Slurm gives each
    record its partition's priority (``priority_array``, ``priority_multifactor.c``). None otherwise, and
    where the partition factors are not the file's (``--mf-partition``): every record the job's."""
    from .plugins.multifactor import Multifactor
    if not isinstance(priority, Multifactor) or priority.weight_partition <= 0 or site is None:
        return None
    pjf = [p.priority_job_factor for p in site.partitions]
    if not any(recs and len({pjf[i] for _, i in recs}) > 1 for recs in records):
        return None
    if priority.partition_factors != site.partition_factors(table):
        return None
    top = max(pjf) or 1
    pmax = max([*priority.partition_factors.values(), 1.0])
    return [pjf[i] / top / pmax for recs in records for _, i in (recs or ())]


#: added to the PriorityTier of a job inside an advance reservation: Slurm queues every such job ahead of
#: every other, before partition tiers and priorities (src/slurmctld/job_scheduler.c sort_job_queue2, 22.05)
RESV_FIRST = 1 << 20


def _set_part_records(core, bits, requests, records, tiers=None, factors=None, never=None):
    """Jobs of several partitions tested a partition at a time (``ext/part_records.pxd``): each record's
    features (the job's own, but for its set of partitions, with its partition's), partition bit and,
    where partitions differ in tier, PriorityTier (a job queued once a tier); ``factors``
    (:func:`record_factors`): each record's partition factor (a job queued once a tier and factor);
    ``never``: the jobs no node can ever hold (:func:`pbf.resources.count_words`), in every record."""
    import numpy as np

    from .resources import job_feature_bits, never_bits
    from .slurm_partitions import PARTITION_PREFIX
    counts, names, parts, nevers = [], [], [], []
    for j, (feats, recs) in enumerate(zip(requests.features, records)):
        counts.append(len(recs) if recs else 0)
        own = tuple(f for f in feats if not f.startswith(PARTITION_PREFIX))
        for feature, index in recs or ():
            names.append(own + ((feature,) if feature else ()))
            parts.append(1 << index)
            nevers.append(never is not None and bool(never[j]))
    from ._nodes import NodeCluster
    flat = None if tiers is None else np.array([t for ts in tiers for t in (ts or ())], dtype=np.int64)
    record_bits = job_feature_bits(bits, names) | never_bits(nevers)
    NodeCluster(core).set_part_records(np.array(counts, dtype=np.int64), record_bits,
                                       np.array(parts, dtype=np.uint64), flat,
                                       None if factors is None else np.array(factors, dtype=np.float64))


def _set_licenses(core, cluster, table, order):
    import numpy as np

    # the cluster's licenses and what each job asks of them (pbf.licenses; a trace without licenses asks none)
    from .licenses import job_license_texts, license_requests
    texts = job_license_texts(table)
    kinds, totals, asked = license_requests(cluster.licenses, texts if texts is not None else [""] * len(table))
    core.set_licenses(totals)
    core.set_job_licenses(0, np.ascontiguousarray(asked[order]))


def _set_qos_limits(core, path, table, order, users):
    import numpy as np

    # the QOS limits of a sacctmgr dump and each job's QOS (pbf.qos); what was read, for the summary
    from .qos import read_qos_limits
    from .resources import constraint_legend
    q = read_qos_limits(path)
    names = list(q.limits)
    core.set_qos_limits(np.array([q.limits[n] for n in names], dtype=np.int64).reshape(len(names), 4), users)
    legend = constraint_legend(table.header, "Queue")
    row = {n: i for i, n in enumerate(names)}
    qos = np.array([row.get(legend.get(int(c), str(int(c))), -1) for c in table.queue[order]], dtype=np.int64)
    core.set_job_qos(0, qos)
    return {"file": q.path, "limits": {n: dict(zip(("max_jobs_pu", "max_cpus_pu", "grp_jobs", "grp_cpus"), v))
                                      for n, v in q.limits.items()},
            "jobs_without_limits": int((qos < 0).sum()), "not_modelled": list(q.not_modelled)}


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
