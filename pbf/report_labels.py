"""The words people read in a replay's report: a label with its unit for every summary and
configuration key, and which settings and figures apply to a replay (:mod:`pbf.report`)."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

__all__ = ["LABELS", "label", "pass_rows", "settings_that_apply"]

#: the labels (with units) of the summary's and the configuration's keys; others: see :func:`label`
LABELS = {
    "awt_h": "mean wait (h)", "art_h": "mean response time: wait + run (h)", "bsld": "mean bounded slowdown",
    "bsld_tau_s": "bounded slowdown's bound tau (s)", "utilisation": "utilisation (share of core-time busy)",
    "makespan_s": "makespan: first submission to last end (s)", "max_queue": "longest queue (jobs)",
    "mean_queue": "mean queue (jobs, over time)",
    "submitted": "jobs submitted", "completed": "jobs completed", "killed": "jobs killed",
    "rejected": "jobs rejected (can never run)", "backfilled": "jobs started by backfill",
    "started_by_main": "jobs started in queue order",
    "count": "passes", "full": "full passes (backfill)", "quick": "quick passes (main scheduler)",
    "mean_depth": "mean jobs tested a pass", "max_depth": "most jobs tested in a pass",
    "mean_depth_full": "mean jobs tested a full pass", "wall_ms_total": "wall time in passes (ms)",
    "wall_us_mean": "mean wall time a pass (µs)", "clock": "clock", "budget_s": "time budget of a pass (s)",
    "charged_s_mean_full": "simulated time charged a full pass, mean (s)",
    "charged_s_max": "simulated time charged a pass, most (s)",
    "reevaluations": "jobs tested again after an earlier start (parallel passes)",
    "priority_inversions": "priority inversions (eager commit)", "conflicts": "conflicting starts (parallel passes)",
    "tests_max_worker_mean_full": "jobs tested by the busiest worker, mean a full pass",
    "tests_min_worker_mean_full": "jobs tested by the idlest worker, mean a full pass",
    "thread_tests_per_worker": "jobs each worker thread tested (passes on threads)",
    "searches_shared": "node searches (Slurm's search: later starts) shared with a helper thread",
    "searches_helped": "... of which it helped",
    "search_helper_backoffs": "times the helper backed off (no CPU to spare)",
    "search_sharing_trials": "trials of sharing against not", "search_sharing_trials_won": "... won by sharing",
    "sim_threads": "real threads of a cycle's tests (--threads)",
    # configuration
    "units": "cluster units", "priority": "priority", "predictor": "run-time predictor",
    "correction": "correction of under-predictions", "trigger": "pass trigger", "bf_interval": "pass interval (s)",
    "bsld_bound": "bounded slowdown's bound (s)", "workers": "backfill workers",
    "threads": "real threads (slurm-sim clock)", "bf_max_time": "pass time limit (s)",
    "cost_per_test_us": "modelled cost of a job test (µs)", "cost_per_slot_us": "modelled cost of a plan slot (µs)",
    "cost_per_node_us": "modelled cost per node tested (µs)",
    "cost_per_reservation_us": "modelled cost of a reservation (µs)", "cost_power": "power of the cost in tests",
    "commit": "commit of parallel starts", "pass_records": "passes recorded", "kill_at_request":
    "jobs killed at their requested time", "start_estimates": "start-time estimates",
    "estimate_every": "estimates every K passes", "mem_from": "memory asked from", "node_choice": "node choice",
    "node_search": "node search", "record_nodes": "nodes of each job recorded", "max_passes": "most passes allowed",
    "cluster": "cluster", "coalloc": "co-allocation", "failures": "failures", "slurm_sim": "slurm-sim clock",
    "reservations": "backfill reservations", "max_job_test": "most jobs tested a pass (bf_max_job_test)",
    "window": "reservation window (s)", "resolution": "plan resolution (s)", "order": "backfill order",
    "enabled": "backfill on", "stop_at_reservation_limit": "pass ends at the reservation limit",
    # the slurm-sim clock
    "bf_yield_interval": "backfill yields every (s)", "time_step": "time step (s)",
    "batch_sched_delay": "main scheduler at most every (s, events)", "sched_interval": "full main pass every (s)",
    "default_queue_depth": "main pass depth on events (jobs)", "max_sched_time": "main pass time limit (s)",
    "cost_main_test_us": "modelled cost of a main-scheduler test (µs)",
    "cost_queue_us": "modelled cost of sorting the queue, a job (µs)",
    "end_lag": "job ends seen late by (s)", "end_lag_below": "for jobs shorter than (s)",
    "end_runs_main": "a job's end runs the main scheduler at once",
    "end_after_cycle": "a short job's end after its last second's backfill cycle",
}
_UNITS = (("_core_hours", " (core-hours)"), ("_hours", " (h)"), ("_s", " (s)"), ("_h", " (h)"), ("_ms", " (ms)"),
          ("_us", " (µs)"), ("_mb", " (MB)"))


def label(key: str) -> str:
    """The label people read for a summary or configuration key: its entry in :data:`LABELS`, else the
    key in words with its unit (``down_core_hours`` -> ``down (core-hours)``)."""
    if key in LABELS:
        return LABELS[key]
    for suffix, unit in _UNITS:
        if key.endswith(suffix):
            return key[: -len(suffix)].replace("_", " ") + unit
    return key.replace("_", " ")


#: the passes' keys that concern more than one worker, and those of the model and slurm-sim clocks
_PARALLEL_KEYS = {"reevaluations", "conflicts", "tests_max_worker_mean_full", "tests_min_worker_mean_full",
                  "thread_tests_per_worker", "priority_inversions"}
_CLOCK_KEYS = {"budget_s", "charged_s_mean_full", "charged_s_max"}
_SEARCH_KEYS = {"searches_shared", "searches_helped", "search_helper_backoffs", "search_sharing_trials",
                "search_sharing_trials_won"}


def pass_rows(p: dict[str, Any], cfg: dict[str, Any], fmt: Callable[[Any], Any]) -> list[tuple[str, Any]]:
    """The backfill passes' summary as (label, value) rows: only what applies to this replay's clock and workers."""
    workers = int(cfg.get("workers", 1) or 1)
    rows = []
    for k, v in p.items():
        if isinstance(v, dict) or (k in _PARALLEL_KEYS and workers <= 1):
            continue
        if k in _CLOCK_KEYS and p.get("clock") == "free":
            continue
        if k in _SEARCH_KEYS and not p.get("searches_shared"):
            continue
        if k == "thread_tests_per_worker":
            if not v or not any(v):
                continue
            v = ", ".join(f"{i + 1}: {n:,}" for i, n in enumerate(v))
        if k == "priority_inversions" and cfg.get("commit") != "eager":
            continue
        rows.append((label(k), fmt(v)))
    rows += [(f"passes that ended by: {reason}", f"{n:,}") for reason, n in (p.get("exit_reasons") or {}).items()]
    return rows


def settings_that_apply(cfg: dict[str, Any]) -> list[tuple[str, Any]]:
    """The configuration's settings that shaped the replay, as (label, value): no costs of a job test
    under the free clock, no parallel settings with one worker, no node settings without nodes, no
    empty (None) ones."""
    clock = cfg.get("clock", "free")
    skip = set()
    if clock not in ("model", "slurm-sim"):
        skip |= {"cost_per_test_us", "cost_per_slot_us", "cost_per_node_us", "cost_per_reservation_us", "cost_power"}
    if clock == "free":
        skip.add("bf_max_time")
    if clock != "slurm-sim":
        skip.add("threads")           # (the slurm-sim clock's real threads; elsewhere workers are)
    if int(cfg.get("workers", 1) or 1) <= 1:
        skip.add("commit")
    if not cfg.get("cluster"):
        skip |= {"mem_from", "node_choice", "node_search", "record_nodes"}
    if not cfg.get("start_estimates"):
        skip.add("estimate_every")
    if cfg.get("trigger") != "interval":
        skip.add("bf_interval")
    rows = []
    for k, v in cfg.items():
        if k in skip or v is None:
            continue
        if k == "backfill" and isinstance(v, dict):
            rows += [(label(k2), "unlimited" if k2 == "reservations" and v2 is None else v2)
                     for k2, v2 in v.items() if (v2 is not None or k2 == "reservations")
                     and not (k2 in ("window", "resolution") and v2 == 0)]
            continue
        if isinstance(v, dict):           # (the slurm-sim clock's, co-allocation's, failures' settings)
            rows += [(f"{label(k)}: {label(k2)}", json.dumps(v2) if isinstance(v2, (dict, list)) else v2)
                     for k2, v2 in v.items() if v2 is not None]
            continue
        rows.append((label(k), json.dumps(v) if isinstance(v, list) else v))
    return rows
