"""A replay's results: the per-job and per-pass columns, the summary, and writing them out.

:func:`assemble` reads a finished replay's core (and its concerns: outages, co-allocation, start
estimates) into a :class:`ReplayResult`; :meth:`ReplayResult.write` writes ``summary.json`` and
the CSV files.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from . import _table
from .codes import LABELS, How, JobState, RejectReason
from .errors import ConfigError
from .metrics import Metrics

# (what only some replays use -- co-allocation, nodes, outages, start estimates, threads, the files --
# is imported where it is used: a replay's process loads only what it needs)

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike

    from ._core import Core
    from .cluster import Cluster
    from .replay_config import ReplayConfig
    from .resources import Requests
    from .workload.jobs import JobTable

__all__ = ["ReplayResult", "OUTPUT_FILES", "assemble", "check_output_dir", "job_nodes"]

# code columns of the outputs and their labels (strings only when written out)
_LABELS = LABELS


def assemble(table: JobTable, order: np.ndarray, core: Core, arrays: tuple, config: ReplayConfig, wall: float,
             outages: tuple = (None, None), *, from_trace: int | None = None, cluster: Cluster | None = None,
             requests: Requests | None = None, plain: bool = False) -> ReplayResult:
    """The result of a replay of ``table`` (jobs in ``order``) that ``core`` ran with ``config``:
    ``arrays`` are the (submit, units, run, cluster units) it was given, ``outages`` the outages
    and their core events, ``from_trace`` whether co-allocation's CPU use came from the trace,
    ``cluster`` and ``requests`` a node cluster and the jobs' requests of it. ``plain``: a plain
    replay (:func:`pbf.replayer._plain`), whose ``arrays`` are buffers and ``order`` None (the table's
    order) or a buffer: its job columns are read from the core as buffers and made numpy arrays when
    first read."""
    submit, size, run, units = arrays
    if plain:
        result = _plain_results(table, order, core, submit, size, run, units, config, wall)
    else:
        result = _results(table, order, core, submit, size, run, units, config, wall, outages)
    if config.record_nodes and cluster is not None:
        result.jobs["nodes"] = job_nodes(core.recorded_units(), cluster)
    if config.start_estimates:
        _add_estimates(result, core, order, table)
    if config.coalloc is not None:
        result.summary["coalloc"] = _coalloc_summary(result, core, config, units, from_trace, run)
    result.summary["passes"]["thread_tests_per_worker"] = core.worker_tests_total()
    if getattr(config.backfill, "limited", False):
        result.summary["passes"]["bf_limits"] = core.bf_limit_figures()   # (Slurm's own backfill limits)
    # full passes that ran on the pool's threads (measured by the pass-cost predictor; 0 with one worker)
    if config.workers > 1:
        from ._pass_cost import PassCostPredictor
        result.summary["passes"]["threaded_passes"] = PassCostPredictor(core).figures()["par_passes"]
    else:
        result.summary["passes"]["threaded_passes"] = 0
    shared, helped, backoffs, trials, trials_shared = core.search_helper_stats()
    result.summary["passes"]["searches_shared"] = shared
    result.summary["passes"]["searches_helped"] = helped
    result.summary["passes"]["search_helper_backoffs"] = backoffs
    result.summary["passes"]["search_sharing_trials"] = trials
    result.summary["passes"]["search_sharing_trials_won"] = trials_shared
    if cluster is not None:
        from ._nodes import NodeCluster
        result.summary["nodes"] = _nodes_summary(result, cluster, requests, size, NodeCluster(core).stats())
    return result


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

    def __getstate__(self):
        # (a copy or a pickle holds the columns, not the core they may still be read from)
        return {**self.__dict__, "_passes": self.passes, "_jobs": self.jobs}

    @staticmethod
    def label(column: str, codes: ArrayLike) -> np.ndarray:
        """The strings of a code column (``how``, ``state``, ``reject_reason``, ``kind``, ``exit``)."""
        import numpy as np
        return np.asarray(_LABELS[column], dtype=object)[np.asarray(codes)]

    def write(self, out_dir: str | os.PathLike) -> None:
        """Write ``summary.json``, ``jobs.csv``, ``passes.csv`` (if passes were recorded) and
        ``estimates.csv`` (periodic start-time estimates, if recorded) into
        ``out_dir`` (created). The files are written into a temporary folder beside it and moved
        into place only once all are complete: on any error nothing new is left behind."""
        import json
        check_output_dir(out_dir)
        out_dir = os.fspath(out_dir)
        parent = os.path.dirname(os.path.abspath(out_dir))
        try:
            os.makedirs(parent, exist_ok=True)
            tmp = _temp_dir(parent)
        except OSError as exc:      # (named by the folder asked for, not the temporary one beside it)
            raise OSError(exc.errno, exc.strerror, out_dir) from None
        try:
            with open(os.path.join(tmp, "summary.json"), "w") as fh:
                # (one write of the whole text: json.dump writes it a token at a time)
                fh.write(json.dumps(_finite(self.summary), indent=2, allow_nan=False) + "\n")
            files = [(os.path.join(tmp, "jobs.csv"), self.jobs)]
            if self.summary["config"]["pass_records"]:
                files.append((os.path.join(tmp, "passes.csv"), self.passes))
            if self.estimates is not None:
                files.append((os.path.join(tmp, "estimates.csv"), self.estimates))
            _write_csvs(files, int(self.summary["config"].get("workers", 1) or 1))
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
                import shutil
                shutil.rmtree(tmp, ignore_errors=True)


class _PassesOf:
    """The per-pass columns of a finished replay's core, read out when first used: a replay whose
    passes nobody reads (a summary printed, a sweep's figures) does not build 15 columns of them."""
    __slots__ = ("core",)

    def __init__(self, core):
        self.core = core

    def columns(self) -> dict:
        passes = self.core.pass_arrays()
        passes["wall_us"] = passes.pop("wall_ns") / 1000.0
        passes["charged_us"] = passes.pop("model_us")
        return passes


def _columns_when_read(name: str, doc: str) -> property:
    """A property over ``self.__dict__[name]`` that turns a ``_PassesOf``/``_JobsOf`` held there into its
    columns the first time it is read (and keeps them)."""
    def read(self) -> dict:
        value = self.__dict__[name]
        if isinstance(value, (_PassesOf, _JobsOf)):
            value = self.__dict__[name] = value.columns()
        return value

    def write(self, value) -> None:
        self.__dict__[name] = value

    return property(read, write, doc=doc)


class _JobsOf:
    """The per-job columns of a plain replay, read from its core and made numpy arrays when first read: a
    replay whose jobs nobody reads (a summary printed) does without numpy."""
    __slots__ = ("table", "order", "core", "buffers")

    def __init__(self, table, order, core, buffers):
        self.table, self.order, self.core, self.buffers = table, order, core, buffers

    def columns(self) -> dict:
        import numpy as np
        state, start, end, how, reason, _, first_planned = self.core.job_arrays()
        requeues, lost = self.core.columns("requeues", "lost")
        predicted, corrections = self.core.columns("pred0", "ncorr")
        submit, run, size = (np.frombuffer(self.buffers[k], dtype=np.int64) for k in ("submit", "run", "units"))
        ids = self.table.job_id
        return {"id": ids.copy() if self.order is None else ids[np.frombuffer(self.order, dtype=np.int64)],
                "submit": submit, "start": start, "end": end, "wait": np.where(start >= 0, start - submit, -1),
                "run": run, "units": size, "predicted": predicted, "corrections": corrections,
                "how": how, "state": state, "reject_reason": reason, "first_reservation": first_planned,
                "requeues": requeues, "lost_unit_s": lost}


ReplayResult.passes = _columns_when_read("_passes", "The per-pass columns (a dict of numpy arrays).")
ReplayResult.jobs = _columns_when_read("_jobs", "The per-job columns (a dict of numpy arrays).")


#: the files :meth:`ReplayResult.write` writes
OUTPUT_FILES = ("summary.json", "jobs.csv", "passes.csv", "estimates.csv")


def _temp_dir(parent: str) -> str:
    """A new folder ``.pbf-XXXXXXXXXXXX`` in ``parent``, private to the user (as ``tempfile.mkdtemp``
    makes it, without loading tempfile, shutil and random for every replay that writes)."""
    while True:
        path = os.path.join(parent, ".pbf-" + os.urandom(6).hex())
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:     # (48 random bits: another name)
            continue


def check_output_dir(out_dir: str | os.PathLike) -> None:
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


def job_nodes(units: np.ndarray, cluster: Cluster) -> np.ndarray:
    """Each job's node names joined by ``,`` ("" if it never started), from its unit bitmap (one row
    of uint64 words a job; a node's cores are consecutive units)."""
    import numpy as np
    first = np.cumsum([0] + [n.cores for n in cluster.nodes])
    names = np.array([n.name for n in cluster.nodes], dtype=object)
    bits = np.unpackbits(units.view(np.uint8), axis=1, bitorder="little")[:, :int(first[-1])]
    out = np.empty(len(units), dtype=object)
    for k, row in enumerate(bits):
        used = np.unique(np.searchsorted(first, np.flatnonzero(row), side="right") - 1)
        out[k] = ",".join(names[used])
    return out


def _write_csv(path, columns):
    from .csv_out import write_csv
    write_csv(path, columns, _LABELS)


def _write_csvs(files, threads):
    # a replay given several workers writes its files on as many threads (the formatting and the
    # writes run without the GIL); the files are the same either way
    if threads <= 1 or len(files) <= 1:
        for path, columns in files:
            _write_csv(path, columns)
        return
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=min(threads, len(files))) as pool:
        for done in [pool.submit(_write_csv, path, columns) for path, columns in files]:
            done.result()


def _nodes_summary(result, cluster, requests, size, stats):
    import numpy as np
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
    for kind, total in totals.get("gres", {}).items():      # (planned: the nodes have generic resources)
        asked = np.array([dict(g).get(kind, 0) for g in requests.gres] if requests.gres else [0] * len(secs))
        held[f"gres/{kind}"] = float((secs * nodes_of * asked).sum())
        capacity[f"gres/{kind}"] = total
    utilisation = {k: (held[k] / (capacity[k] * span) if capacity[k] else None) for k in held}
    state, reason = result.jobs["state"], result.jobs["reject_reason"]
    never = np.flatnonzero((state == JobState.JS_REJECTED) & (reason == RejectReason.RJ_NO_NODES))
    details = {}
    from .resources import reject_detail
    for i in never:
        text = reject_detail(cluster, requests, int(i), int(size[i]))
        details[text] = details.get(text, 0) + 1
    return {"cluster": cluster.name, **totals, "utilisation": utilisation,
            "heads_blocked": heads, "heads_blocked_with_cores_free": heads_cores_free,
            "heads_held_by_resources_share": heads_cores_free / heads if heads else None,
            "never_fit": int(len(never)),
            "never_fit_by_reason": dict(sorted(details.items(), key=lambda kv: -kv[1]))}


def _results(table, order, core, submit, size, run, units, config, wall, outages=(None, None)):
    import numpy as np
    state, start, end, how, reason, planned, first_planned = core.job_arrays()
    if config.clock == "slurm-sim" and config.slurm_sim.end_lag:
        # the core held jobs end_lag seconds past their run time (SlurmSim.end_lag); each ended at start + run
        end = np.where((state == JobState.JS_DONE) & (start >= 0), np.minimum(end, start + run), end)
    if config.coalloc is not None:
        # jobs ran for their elapsed time, stretched by sharing their nodes
        run = np.where((state == JobState.JS_DONE) & (start >= 0), end - start, run)
    # a job its reservation's end ended (ResvOverRun, AdvResv.kill) ran until then; one whose run ended first
    # (held a lag past it by end_lag) ended by itself
    over = (state == JobState.JS_DONE) & (reason == RejectReason.RJ_RESV_OVER)
    if over.any():
        cut = over & (end < start + run)
        reason = np.where(over & ~cut, RejectReason.RJ_NONE, reason).astype(reason.dtype)
        run = np.where(cut, end - start, run)
    requeues, lost = core.columns("requeues", "lost")   # (Outages.failure_arrays: zeros without failures)
    predicted, corrections = core.columns("pred0", "ncorr")    # (Core.estimates' first and third)
    jobs = {"id": table.job_id[order], "submit": submit, "start": start, "end": end,
            "wait": np.where(start >= 0, start - submit, -1), "run": run, "units": size,
            "predicted": predicted, "corrections": corrections,
            "how": how, "state": state, "reject_reason": reason, "first_reservation": first_planned,
            "requeues": requeues, "lost_unit_s": lost}
    i64, i8 = (lambda c: np.ascontiguousarray(c, dtype=np.int64)), (lambda c: np.ascontiguousarray(c, dtype=np.int8))
    figures = _table.schedule_figures(i64(submit), i64(start), i64(end), i64(run), i64(size), i8(state), i8(how),
                                      i8(reason), i64(predicted), i64(corrections), units, config.bsld_bound)
    return _result(table, core, jobs, figures, len(submit), units, config, wall, outages)


def _plain_results(table, order, core, submit, size, run, units, config, wall):
    """:func:`_results` of a plain replay: the figures compiled over the core's own columns (no copy), the
    job columns read out when first read."""
    v = core._view
    figures = _table.schedule_figures(submit, v("start"), v("end"), run, size, v("state"), v("how"), v("reason"),
                                      v("pred0"), v("ncorr"), units, config.bsld_bound)
    jobs = _JobsOf(table, order, core, {"submit": submit, "run": run, "units": size})
    return _result(table, core, jobs, figures, len(submit), units, config, wall, (None, None))


def _result(table, core, jobs, f, submitted, units, config, wall, outages):
    """The :class:`ReplayResult` of the job columns ``jobs`` and their figures ``f``
    (:func:`pbf._table.schedule_figures`)."""
    m = Metrics(*f["metrics"])
    # (one worker on a cluster of units: the core holds little but its pass records, which take less
    # room than their columns; threads and node plans may hold much more: read out now)
    passes = _PassesOf(core)
    if config.workers > 1 or config.cluster is not None or not config.pass_records:
        passes = passes.columns()
    n_reason = f["rejected_by_reason"]
    # the pass summary comes from the core's totals, kept whether or not every pass is recorded
    tot = core.pass_totals()
    count, full = tot["count"], tot["full"]
    wall_ms = tot["wall_ns"] / 1e6 if config.pass_records else None
    summary = {
        "trace": table.source, "units": units, "config": config.as_dict(),
        "header": table.header.size_info(),
        "jobs": {"submitted": submitted, "completed": f["completed"], "killed": f["killed"],
                 "ended_by_reservation": f["ended_by_reservation"],
                 "rejected": sum(n_reason),
                 "rejected_by_reason": {LABELS["reject_reason"][i]: n for i, n in enumerate(n_reason) if n},
                 "backfilled": f["backfilled"], "started_by_main": f["started_by_main"]},
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
        "prediction": {"mae_s": f["mae_s"], "under_predicted": f["under_predicted"],
                       "corrections": int(core.n_corrections), "jobs_corrected": f["jobs_corrected"]},
        "scheduler_time": _scheduler_time(core, config),
        "failures": _failures(core, config, *outages, units, f["last_time"] if submitted else 0),
        "cleaning": table.report.as_dict() if table.report is not None else None,
        "reproducible": config.clock != "wall" and not (config.commit == "eager" and config.workers > 1),
        "wall_s": {"replay": wall},
    }
    return ReplayResult(jobs, passes, summary, m)


def _add_estimates(result, core, order, table):
    """Each job's estimated start at arrival (jobs.csv ``estimated_start``), their accuracy
    (summary ``start_estimates``) and the periodic records (``estimates``, estimates.csv)."""
    import numpy as np

    from ._estimates import StartEstimates
    from .start_estimates import estimate_accuracy
    at_submit, (log_t, log_job, log_est) = StartEstimates(core).recorded()
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
    import numpy as np

    from ._coalloc import Coalloc
    from .coalloc import hedge_regret_bound
    f = Coalloc(core).figures()
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
    from ._outages import Outages
    from .outages import down_unit_seconds
    f = Outages(core).figures()
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
