"""Trace replay: drives the compiled core's event loop over a job table and collects the results.

The whole event loop (arrivals, completions at start + run time, passes) runs compiled without the
GIL; Python only prepares the arrays, shows progress between chunks of instants and builds outputs.
Jobs are killed at their requested time (run = min(run, requested)).
"""
from __future__ import annotations

import csv
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from .cluster import MAX_UNITS
from .coalloc import cpu_use
from .codes import LABELS, How, JobState, RejectReason
from .core_config import build_core
from .errors import ConfigError
from .metrics import schedule_metrics
from .outages import core_events, down_unit_seconds
from .replay_config import ReplayConfig
from .start_estimates import estimate_accuracy
from .workload.jobs import JobTable

__all__ = ["ReplayConfig", "ReplayResult", "replay"]

_CHUNK_INSTANTS = 20_000


@dataclass
class ReplayResult:
    """Per-job results (``jobs``: dict of numpy columns), per-pass records (``passes``), the
    ``summary`` dict, the :class:`~pbf.Metrics` of the completed jobs, and with
    ``estimate_every`` the periodic start-time estimates (``estimates``: time, id, estimate, start,
    error_s).

    Columns ``how``, ``state``, ``reject_reason`` (jobs) and ``kind``, ``exit`` (passes) hold integer
    codes; :meth:`label` turns one into strings, and the CSV files hold the strings."""
    jobs: dict
    passes: dict
    summary: dict
    metrics: object
    estimates: dict | None = None

    @staticmethod
    def label(column: str, codes) -> np.ndarray:
        """The strings of a code column (``how``, ``state``, ``reject_reason``, ``kind``, ``exit``)."""
        return np.asarray(_LABELS[column], dtype=object)[np.asarray(codes)]

    def write(self, out_dir: str | os.PathLike) -> None:
        """Write ``summary.json``, ``jobs.csv``, ``passes.csv`` (if passes were recorded) and
        ``estimates.csv`` (periodic start-time estimates, if recorded) into
        ``out_dir`` (created). The files are written into a temporary folder beside it and moved
        into place only once all are complete: on any error nothing new is left behind."""
        check_output_dir(out_dir)
        out_dir = os.fspath(out_dir)
        parent = os.path.dirname(os.path.abspath(out_dir))
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(prefix=".pbf-", dir=parent)
        try:
            with open(os.path.join(tmp, "summary.json"), "w") as fh:
                json.dump(_finite(self.summary), fh, indent=2, allow_nan=False)
                fh.write("\n")
            _write_csv(os.path.join(tmp, "jobs.csv"), self.jobs)
            if self.summary["config"]["pass_records"]:
                _write_csv(os.path.join(tmp, "passes.csv"), self.passes)
            if self.estimates is not None:
                _write_csv(os.path.join(tmp, "estimates.csv"), self.estimates)
            if not os.path.exists(out_dir):
                os.rename(tmp, out_dir)
                tmp = None
                return
            for name in OUTPUT_FILES:
                src, dst = os.path.join(tmp, name), os.path.join(out_dir, name)
                if os.path.exists(src):
                    os.replace(src, dst)
                elif os.path.exists(dst):
                    os.remove(dst)     # an earlier run's records must not pass for this run's
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)


#: the files :meth:`ReplayResult.write` writes
OUTPUT_FILES = ("summary.json", "jobs.csv", "passes.csv", "estimates.csv")


def check_output_dir(out_dir):
    """Raise :class:`ConfigError` unless ``out_dir`` can take a replay's outputs: a folder (or
    nothing yet) whose output file names are free for files. Called before a replay runs, so that a
    long replay does not end in an error."""
    out_dir = os.fspath(out_dir)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise ConfigError(f"output folder {out_dir!r} exists and is not a folder")
    for name in OUTPUT_FILES:
        path = os.path.join(out_dir, name)
        if os.path.isdir(path):
            raise ConfigError(f"cannot write {path!r}: a folder of that name is in the way")
    parent = os.path.dirname(os.path.abspath(out_dir))
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.access(parent if not os.path.exists(out_dir) else out_dir, os.W_OK):
        raise ConfigError(f"cannot write into {out_dir!r}: no permission")


def _finite(value):
    # JSON has no NaN or infinity: such a figure (e.g. a mean over no jobs) is written as null
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _write_csv(path, columns):
    names = list(columns)
    cols = []
    for n in names:
        col = np.asarray(columns[n])
        cols.append(np.asarray(_LABELS[n], dtype=object)[col].tolist() if n in _LABELS else col.tolist())
    tmp = path + ".part"
    with open(tmp, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        w.writerows(zip(*cols))
    os.replace(tmp, path)


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
        core.set_node_requests(0, requests.mem_core_mb, requests.mem_node_mb, requests.gpus,
                               np.minimum(requests.nodes_min, np.maximum(size, 1)), requests.nodes_max,
                               job_feature_bits(bits, requests.features))
    outages = events = None
    if config.failures is not None:
        span = (int(submit[0]), int(submit[-1]) + 1) if len(submit) else (0, 1)
        outages = config.failures.outages(units, *span, cluster=cluster)
        events = core_events(outages, units)
        core.load_outages(*events, config.failures.on_failure == "requeue")
    if config.start_estimates:
        core.record_start_estimates(config.estimate_every)
    use = None
    if config.coalloc is not None:
        from .outages import NodeLayout
        co = config.coalloc
        use, from_trace = cpu_use(table, order, co.cpu, co.seed)
        cores = np.asarray(NodeLayout.of(co.node_cores, units).cores, dtype=np.int32)
        core.enable_coalloc(co.code(), float(co.fraction), float(co.beta), co.interval, float(co.lam),
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
    result = _results(table, order, core, submit, size, run, units, config, wall, (outages, events))
    if config.start_estimates:
        _add_estimates(result, core, order, table)
    if config.coalloc is not None:
        result.summary["coalloc"] = _coalloc_summary(result, core, config, units, from_trace, run)
    result.summary["passes"]["thread_tests_per_worker"] = core.worker_tests_total()
    if cluster is not None:
        result.summary["nodes"] = _nodes_summary(result, cluster, requests, size, core.node_stats())
    return result


def _nodes_summary(result, cluster, requests, size, stats):
    # the node cluster; how much of its cores, memory and GPUs the jobs held; how often a pass's first
    # job that did not fit was held by more than cores; each job no node set can hold, with the
    # resource that stops it
    heads, heads_cores_free, nodes_of = stats
    start, end = result.jobs["start"], result.jobs["end"]
    ran = (start >= 0) & (end >= start)
    secs = np.where(ran, end - start, 0).astype(np.float64)
    totals = cluster.totals()
    span = max(float(result.metrics.makespan), 1.0)
    held = {"cores": float((secs * size).sum()),
            "memory": float((secs * (size * requests.mem_core_mb + nodes_of * requests.mem_node_mb)).sum()),
            "gpus": float((secs * nodes_of * requests.gpus).sum())}
    capacity = {"cores": totals["cores"], "memory": totals["memory_mb"], "gpus": totals["gpus"]}
    utilisation = {k: (held[k] / (capacity[k] * span) if capacity[k] else None) for k in held}
    state, reason = result.jobs["state"], result.jobs["reject_reason"]
    never = np.flatnonzero((state == JobState.JS_REJECTED) & (reason == RejectReason.RJ_NO_NODES))
    from .resources import reject_detail
    details = {}
    for i in never:
        text = reject_detail(cluster, requests, int(i), int(size[i]))
        details[text] = details.get(text, 0) + 1
    return {"cluster": cluster.name, **totals, "utilisation": utilisation,
            "heads_blocked": heads, "heads_blocked_with_cores_free": heads_cores_free,
            "heads_held_by_resources_share": heads_cores_free / heads if heads else None,
            "never_fit": int(len(never)),
            "never_fit_by_reason": dict(sorted(details.items(), key=lambda kv: -kv[1]))}


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


# code columns of the outputs and their labels (strings only when written out)
_LABELS = LABELS


def _results(table, order, core, submit, size, run, units, config, wall, outages=(None, None)):
    state, start, end, how, reason, planned, first_planned = core.job_arrays()
    if config.coalloc is not None:
        # jobs ran for their elapsed time, stretched by sharing their nodes
        run = np.where((state == JobState.JS_DONE) & (start >= 0), end - start, run)
    requeues, lost = core.failure_arrays()
    predicted, final_est, corrections, _ = core.estimates()
    done = state == JobState.JS_DONE
    jobs = {"id": table.job_id[order], "submit": submit, "start": start, "end": end,
            "wait": np.where(start >= 0, start - submit, -1), "run": run, "units": size,
            "predicted": predicted, "corrections": corrections,
            "how": how, "state": state, "reject_reason": reason, "first_reservation": first_planned,
            "requeues": requeues, "lost_unit_s": lost}
    err = (predicted[done] - run[done]).astype(np.float64)
    m = schedule_metrics(submit[done], start[done], run[done], size[done], units, config.bsld_bound)
    passes = core.pass_arrays()
    passes["wall_us"] = passes.pop("wall_ns") / 1000.0
    passes["charged_us"] = passes.pop("model_us")
    n_reason = np.bincount(reason[state == JobState.JS_REJECTED], minlength=len(RejectReason))
    n_how = np.bincount(how, minlength=3)
    # the pass summary comes from the core's totals, kept whether or not every pass is recorded
    tot = core.pass_totals()
    count, full = tot["count"], tot["full"]
    wall_ms = tot["wall_ns"] / 1e6 if config.pass_records else None
    summary = {
        "trace": table.source, "units": units, "config": config.as_dict(),
        "header": table.header.size_info(),
        "jobs": {"submitted": int(len(submit)), "completed": int(done.sum()),
                 "killed": int((state == JobState.JS_KILLED).sum()),
                 "rejected": int(n_reason.sum()),
                 "rejected_by_reason": {LABELS["reject_reason"][i]: int(n) for i, n in enumerate(n_reason) if n},
                 "backfilled": int(n_how[2]), "started_by_main": int(n_how[1])},
        "metrics": {"awt_s": m.awt, "art_s": m.art, "bsld": m.bsld, "bsld_tau_s": m.bsld_tau,
                    "awt_h": m.awt / 3600, "art_h": m.art / 3600, "utilisation": m.utilisation,
                    "makespan_s": m.makespan, "max_queue": m.max_queue, "mean_queue": m.mean_queue},
        "passes": {"count": count, "full": full, "quick": count - full,
                   "mean_depth": tot["depth"] / count if count else 0.0,
                   "max_depth": tot["depth_max"],
                   "mean_depth_full": tot["depth_full"] / full if full else 0.0,
                   "wall_ms_total": wall_ms,
                   "wall_us_mean": (wall_ms * 1e3 / count if count else 0.0) if wall_ms is not None else None,
                   "exit_reasons": {LABELS["exit"][i]: n for i, n in enumerate(tot["exit"]) if n},
                   "clock": config.clock, "budget_s": config.budget_s(),
                   "charged_s_mean_full": tot["charged_us_full"] / full / 1e6 if full else 0.0,
                   "charged_s_max": tot["charged_us_max"] / 1e6,
                   # the parallel pass (zero when every pass ran sequentially): commits that searched
                   # again on the up-to-date profile, and those whose answer newer commits touched
                   "reevaluations": tot["reevaluations"],
                   "priority_inversions": tot["inversions"],
                   "conflicts": tot["conflicts"],
                   "tests_max_worker_mean_full": tot["tests_max_worker_full"] / full if full else 0.0,
                   "tests_min_worker_mean_full": tot["tests_min_worker_full"] / full if full else 0.0},
        "prediction": {"mae_s": float(np.abs(err).mean()) if len(err) else 0.0,
                       "under_predicted": float((err < 0).mean()) if len(err) else 0.0,
                       "corrections": int(core.n_corrections),
                       "jobs_corrected": int((corrections > 0).sum())},
        "scheduler_time": _scheduler_time(core, config),
        "failures": _failures(core, config, *outages, units, int(max(end.max(), submit.max())) if len(end) else 0),
        "cleaning": table.report.as_dict() if table.report is not None else None,
        "reproducible": config.clock != "wall" and not (config.commit == "eager" and config.workers > 1),
        "wall_s": {"replay": wall},
    }
    return ReplayResult(jobs, passes, summary, m)


def _add_estimates(result, core, order, table):
    """Each job's estimated start at arrival (jobs.csv ``estimated_start``), their accuracy
    (summary ``start_estimates``) and the periodic records (``estimates``, estimates.csv)."""
    at_submit, (log_t, log_job, log_est) = core.start_estimates()
    jobs = result.jobs
    jobs["estimated_start"] = at_submit
    acc = estimate_accuracy(jobs["submit"], jobs["start"], at_submit, jobs["units"])
    acc["estimate_every"] = result.summary["config"]["estimate_every"]
    if len(log_t):
        start = jobs["start"][log_job]
        err = np.where((start >= 0) & (log_est >= 0), log_est - start, 0)
        result.estimates = {"time": log_t, "id": table.job_id[order][log_job], "estimate": log_est,
                            "start": start, "error_s": err}
        ok = (start >= 0) & (log_est >= 0)
        acc["periodic"] = {"records": int(len(log_t)),
                           "median_abs_s": float(np.median(np.abs(err[ok]))) if ok.any() else None,
                           "within_1h": float((np.abs(err[ok]) <= 3600).mean()) if ok.any() else None}
    result.summary["start_estimates"] = acc


def _coalloc_summary(result, core, config, units, from_trace, solo):
    """What co-allocation did: who ran where, how fast, how full the cluster was, what the learner
    chose (the decisions are in docs/coalloc.md)."""
    f = core.coalloc_figures()
    j = result.jobs
    done = j["state"] == JobState.JS_DONE
    secondary = done & (j["how"] == How.HOW_COALLOC)
    primary = done & ~secondary
    elapsed = j["end"] - j["start"]
    first, last = int(j["submit"].min()), int(j["end"][done].max()) if done.any() else 0
    span = max(1, last - first)
    use = f["cpu_use"]
    slow = elapsed[primary & (solo > 0)] / solo[primary & (solo > 0)]
    work = solo[done].astype(np.float64)
    decisions = max(1, f["decisions"])
    out = {"policy": config.coalloc.describe(), "cpu_use_from_trace": from_trace,
           "jobs": int(done.sum()), "secondary_jobs": int(secondary.sum()),
           "share_coallocated": float(secondary.sum() / max(1, done.sum())),
           "queue_makespan_s": last - first,
           "wait_h": float((j["start"][done] - j["submit"][done]).mean() / 3600) if done.any() else 0.0,
           "response_h": float((j["end"][done] - j["submit"][done]).mean() / 3600) if done.any() else 0.0,
           "utilisation_allocated": float((j["units"][primary] * elapsed[primary]).sum() / (units * span)),
           "utilisation_useful": float((use[done] * j["units"][done] * work).sum() / (units * span)),
           "primary_slowdown_mean": float(slow.mean()) if len(slow) else 1.0,
           "primary_slowdown_p95": float(np.percentile(slow, 95)) if len(slow) else 1.0,
           "primaries_slowed": float((slow > 1.0 + 1e-9).mean()) if len(slow) else 0.0,
           "overruns": f["overruns"], "violations": f["violations"],
           "work_conservation_error": float(np.abs(f["work_done"][done] - work).max()) if done.any() else 0.0,
           "learner": {"decisions": f["decisions"], "mean_loss": f["loss_sum"] / decisions,
                       "actions": [a / max(1.0, sum(f["actions"])) for a in f["actions"]],
                       "lent_filled": f["fill"]}}
    if config.coalloc.policy == "asax":
        out["learner"].update(alpha=f["alpha"], weight_rounds=f["rounds"], leaf_best_action=f["leaf_best"],
                              leaf_decisions=f["leaf_n"])
    if config.coalloc.policy in ("hedge", "exp3"):
        from .coalloc import hedge_regret_bound
        best = int(np.argmin(f["cum_loss"]))
        out["learner"].update(regret=f["cum_expected"] - f["cum_loss"][best], best_expert=best,
                              regret_bound=hedge_regret_bound(f["decisions"], len(f["cum_loss"])),
                              weights=list(np.exp(np.array(f["logw"]) - max(f["logw"]))
                                           / np.exp(np.array(f["logw"]) - max(f["logw"])).sum()))
    return out


def _failures(core, config, outages, events, units, end):
    """What the outages did (None without failures); down time counts up to the last job's end."""
    if config.failures is None:
        return None
    f = core.outage_figures()
    by_kind = {k: sum(1 for o in outages if o.kind == k) for k in ("fail", "drain", "resume")}
    down_s = down_unit_seconds(events, units, end)
    return {"events": by_kind, "on_failure": config.failures.on_failure,
            "killed": f["killed"], "requeued": f["requeued"],
            "lost_core_hours": f["lost_unit_s"] / 3600.0,
            "down_core_hours": down_s / 3600.0,
            "units_down_at_end": f["units_down"], "units_never_back": f["units_lost"]}


def _scheduler_time(core, config):
    """What the slurm-sim clock's main loop did (None under the other clocks)."""
    if config.clock != "slurm-sim":
        return None
    f = core.sim_figures()
    cycles = f["cycles"]
    return {"iterations": f["iterations"], "cycles": cycles, "cycles_ended_by_yield": f["cycles_yielded"],
            "yields": f["yields"], "main_passes": f["main_passes"], "main_tests": f["main_tests"],
            "main_started": f["main_started"], "cycle_s_total": f["cycle_us"] / 1e6,
            "cycle_s_mean": f["cycle_us"] / 1e6 / cycles if cycles else 0.0,
            "main_s_total": f["main_us"] / 1e6, "end_s": f["now_us"] / 1e6,
            "tests_per_cycle": core.pass_totals()["depth_full"] / cycles if cycles else 0.0}
