"""Each recorded Slurm run against a pbf replay at that run's own end-lag threshold
(``pbf validate slurm --end-lag-threshold per-run``; docs/slurm-harness.md, "Each run at its own threshold").

Slurm's runs of one case can come from sessions whose slurmctld launched and completed jobs at different
speeds, so their logs give different ``end_lag_below`` thresholds (:func:`pbf.validate.records.read_timing`).
The default compares every run with one replay at the median threshold; this mode replays pbf once per
distinct threshold among the runs and compares each run with the replay at its own (a run whose log gives
none: at the threshold the default would use). Run 1's replay stands behind the figures the summary has
in either mode (``pbf_vs_slurm``, ``awt_s``, the node, drain, reservation and limits figures,
comparison.csv's ``pbf_*`` columns, ``pbf/``); ``pbf_per_run`` adds each run against its own replay, their
agreement pooled over every (run, job) pair, and AWT as the mean of the runs against the mean of their
replays.

In either mode each run is also compared with a replay on its own clock: Slurm's will-run test aligns its
windows on multiples of 30 s of Unix time (:class:`pbf.SlurmBackfill` ``clock_origin``), so a run's origin
(the second of its first submission) modulo 30 s is part of what it did. Runs whose origins fall on
different seconds of that 30 s are compared with replays of their own (:func:`clock_phases`), in the default
mode too (then at the median threshold, with ``pbf_per_run``).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from types import SimpleNamespace

import numpy as np

from ..bf_limits import WILL_RUN_WINDOW
from ..errors import ConfigError

__all__ = ["MODES", "MEDIAN", "PER_RUN", "check_mode", "thresholds", "replays", "add_columns", "per_run_summary",
           "console_lines", "clock_phases", "at_median"]

MEDIAN, PER_RUN = "median", "per-run"
#: ``--end-lag-threshold``'s values
MODES = (MEDIAN, PER_RUN)


def check_mode(mode: str, end_lag_below: int | None) -> None:
    """A ConfigError for a mode not in :data:`MODES`, or ``per-run`` with a threshold given."""
    if mode not in MODES:
        raise ConfigError(f"--end-lag-threshold {mode!r}: expected one of {', '.join(MODES)}")
    if mode == PER_RUN and end_lag_below is not None:
        raise ConfigError(f"--end-lag-threshold per-run takes each run's own threshold; --end-lag-below "
                          f"{end_lag_below} fixes one: give one of the two")


def thresholds(end_lag: dict, n_runs: int) -> dict:
    """summary.json ``pbf_end_lag_below`` of this mode, from the default's (``end_lag``: ``s``, ``from``,
    ``runs_s``): ``compared_at_s``, the threshold each run is compared at (its own; the default's
    ``median_s`` where its log gives none), ``replays_s`` (the distinct ones), and ``s``, run 1's."""
    each = list(end_lag["runs_s"]) + [None] * (n_runs - len(end_lag["runs_s"]))
    at = [end_lag["s"] if v is None else v for v in each[:n_runs]]
    return {"s": at[0], "from": "each run" if any(v is not None for v in each) else end_lag["from"],
            "runs_s": each[:n_runs], "compared_at_s": at, "replays_s": sorted(set(at)), "median_s": end_lag["s"]}


def at_median(end_lag: dict, n_runs: int) -> dict:
    """The default mode's thresholds in this module's form: every run compared at ``end_lag["s"]``."""
    each = list(end_lag["runs_s"]) + [None] * (n_runs - len(end_lag["runs_s"]))
    return {"compared_at_s": [end_lag["s"]] * n_runs, "runs_s": each[:n_runs]}


def clock_phases(t0s: Sequence[int | None]) -> list:
    """Each run's clock as pbf's replay takes it (:class:`pbf.SlurmBackfill` ``clock_origin``): the Unix
    second of its origin modulo the will-run test's 30 s (only that moves pbf's decisions); 0 for a run
    without one. At any time scale: pbf replays the scaled jobs in the run's own seconds."""
    return [int(t) % WILL_RUN_WINDOW if t is not None else 0 for t in t0s]


def replays(at: Sequence, first: dict, replay_at: Callable[..., dict]) -> list:
    """Each run's pbf starts: run 1's replay ``first`` (at ``at[0]``), the others by ``replay_at(key)``,
    once per distinct key (a threshold, or a threshold and a clock phase)."""
    done = {at[0]: first}
    for t in at[1:]:
        if t not in done:
            done[t] = replay_at(t)
    return [done[t] for t in at]


def add_columns(rows: list, jobs: Sequence, pbfs: list) -> None:
    """comparison.csv's ``pbfK_start`` (K >= 2: pbf's start in the replay run K is compared with), after
    the row's other columns."""
    for row, j in zip(rows, jobs):
        for k, p in enumerate(pbfs[1:], 2):
            s = p.get(j.id, {}).get("start")
            row[f"pbf{k}_start"] = "" if s is None else s


def per_run_summary(jobs: Sequence, runs: list, pbfs: list, lag: dict, *, agreement: Callable,
                    node_agreement: Callable, awt: Callable, window: float, time_scale: float,
                    phases: Sequence[int] = ()) -> dict:
    """summary.json ``pbf_per_run``: per run (its threshold, its clock, ``clock_phase_s``, from ``phases``:
    :func:`clock_phases`; the agreement and node figures against its own replay, AWT on both sides over the
    jobs started in both); ``pooled``: the agreement over every (run, job) pair (``worst_job``: [run, job]);
    ``within_share_mean`` and ``within_share_range`` over the runs; ``awt_s``: the mean of the runs' AWT
    against the mean of their replays'. ``agreement``,
    ``node_agreement``, ``awt``: :mod:`pbf.validate.compare`'s (passed in: that module imports this one)."""
    per, pairs, a_pool, b_pool = [], [], {}, {}
    for k, (run, pbf) in enumerate(zip(runs, pbfs), 1):
        s = {i: r.get("start") for i, r in run.items()}
        p = {i: r.get("start") for i, r in pbf.items()}
        both = [j.id for j in jobs if s.get(j.id) is not None and p.get(j.id) is not None]
        per.append({"run": k, "end_lag_below_s": lag["compared_at_s"][k - 1], "own_s": lag["runs_s"][k - 1],
                    "clock_phase_s": phases[k - 1] if k <= len(phases) else 0,
                    "agreement": agreement(jobs, s, p, window), "nodes": node_agreement(jobs, run, pbf, window),
                    "awt_slurm_s": awt(jobs, s, both), "awt_pbf_s": awt(jobs, p, both), "over_jobs": len(both)})
        for j in jobs:
            pairs.append(SimpleNamespace(id=(k, j.id)))
            a_pool[(k, j.id)], b_pool[(k, j.id)] = s.get(j.id), p.get(j.id)
    pooled = agreement(pairs, a_pool, b_pool, window)
    if pooled["worst_job"] is not None:
        pooled["worst_job"] = list(pooled["worst_job"])
    shares = [r["agreement"]["within_share"] for r in per if r["agreement"]["within_share"] is not None]
    w_s = [r["awt_slurm_s"] for r in per if r["awt_slurm_s"] is not None]
    w_p = [r["awt_pbf_s"] for r in per if r["awt_pbf_s"] is not None]
    m_s = float(np.mean(w_s)) if w_s else None
    m_p = float(np.mean(w_p)) if w_p else None
    return {"runs": per, "pooled": pooled, "within_share_mean": float(np.mean(shares)) if shares else None,
            "within_share_range": [min(shares), max(shares)] if shares else None,
            "awt_s": {"slurm_mean": m_s, "pbf_mean": m_p,
                      "relative_difference": (m_p - m_s) / m_s if m_s and m_p is not None else None,
                      "slurm_mean_workload_s": m_s * time_scale if m_s is not None else None,
                      "pbf_mean_workload_s": m_p * time_scale if m_p is not None else None}}


def _at(v: int, no_log: bool = False) -> str:
    t = "all jobs" if v == 0 else f"{v} s"
    return f"{t} (no log: the median)" if no_log else t


def console_lines(s: dict) -> list:
    """The ``end lag`` (in this mode), ``clock`` and ``per run`` lines (``s``: the summary)."""
    lag, pr = s["pbf_end_lag_below"], s["pbf_per_run"]
    phases = [r.get("clock_phase_s", 0) for r in pr["runs"]]
    n = len({(r["end_lag_below_s"], p) for r, p in zip(pr["runs"], phases)})
    out = []
    if s.get("pbf_end_lag_threshold") == PER_RUN:
        each = ", ".join(f"run {k} {_at(v, own is None)}" for k, (v, own) in
                         enumerate(zip(lag["compared_at_s"], lag["runs_s"]), 1))
        out.append(f"end lag      pbf: each run against a replay at its own threshold (--end-lag-threshold per-run): "
                   f"{each}; {n} replay{'s' if n != 1 else ''}, run 1's behind the other lines")
    if len(set(phases)) > 1:
        each = ", ".join(f"run {k} {p} s" for k, p in enumerate(phases, 1))
        out.append(f"clock        pbf: each run against a replay on its own clock (its origin's Unix second modulo "
                   f"30 s, where Slurm's will-run test aligns its windows): {each}; {n} replay{'s' if n != 1 else ''}"
                   ", run 1's behind the other lines")
    p = pr["pooled"]
    if p["jobs"]:
        lo, hi = pr["within_share_range"]
        out.append(f"per run      pbf: {p['within_share']:.1%} of {p['jobs']} job starts within {p['window_s']:g} s "
                   f"(runs {lo:.1%}-{hi:.1%}, mean {pr['within_share_mean']:.1%}), each run against its own replay")
    for r, p in zip(pr["runs"], phases):
        a = r["agreement"]
        at = _at(r["end_lag_below_s"]) + (f", clock {p} s" if len(set(phases)) > 1 else "")
        if not a["jobs"]:
            out.append(f"             run {r['run']} at {at}: no job started on both sides")
            continue
        out.append(f"             run {r['run']} at {at}: {a['within_share']:.1%} of "
                   f"{a['jobs']} jobs within {a['window_s']:g} s, median {a['median_abs_s']:.1f} s, worst "
                   f"{a['worst_abs_s']:.0f} s (job {a['worst_job']}); AWT Slurm {r['awt_slurm_s']:.1f} s, pbf "
                   f"{r['awt_pbf_s']:.1f} s")
    w = pr["awt_s"]
    if w["slurm_mean"] is not None and w["pbf_mean"] is not None:
        rel = f" ({w['relative_difference']:+.1%})" if w["relative_difference"] is not None else ""
        out.append(f"             AWT: the runs' mean {w['slurm_mean']:.1f} s, their replays' mean "
                   f"{w['pbf_mean']:.1f} s{rel}")
    return out
