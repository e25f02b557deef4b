"""Slurm against pbf, job by job: the same workload through a real Slurm (:mod:`pbf.validate.slurm_run`)
and through pbf's replay with the settings that stand for the site's scheduler
(:func:`pbf.slurm_settings.slurm_settings`, as ``pbf replay --slurm-conf`` reads the same file), and what
differs.

Outputs (in ``out``):

* ``comparison.csv``: one row a job -- its id, submission, run and limit on the run's clock, what it
  asks (cores, memory per CPU / per node, GPUs per node, nodes, features), Slurm's state, start, end,
  nodes and how it started (``backfill`` / ``main``, from slurmctld's log) and its start to the
  millisecond, pbf's state, start, end and how, and ``difference_s`` = pbf start - Slurm start; with
  ``repeat`` >= 2 Slurm's later runs' starts; ``pbf_measured_start``: pbf's start when its jobs run as
  long as they did in Slurm's first run (separates scheduling from run-time noise).
* ``summary.json``: the agreement figures (below), AWT on both sides, the settings pbf used and every
  site setting it does not model, what the private Slurm did not carry from the site file, the time
  scale and Slurm's version, sdiag's figures per run beside pbf's; with ``end_lag_threshold="per-run"``
  each run against a replay at its own end-lag threshold (:mod:`pbf.validate.per_run`).
* ``starts.png``: pbf's start against Slurm's (when matplotlib is importable; else the summary says
  it was skipped).
* ``slurm/run1/`` ...: each run's private slurm.conf, gres.conf, jobcomp.txt, sdiag.txt and logs;
  ``pbf/``: pbf's own replay outputs.

**Agreement** of two sets of starts (over the jobs that started in both): the share within
``window`` seconds (2 s of the run's clock: ``2 x time scale`` workload seconds), the median, 90th
percentile and worst absolute difference, the mean signed difference, and the shares earlier and later
beyond the window. AWT is the mean of start - submission over those jobs, the submission being the
planned one (the same on both sides).
"""
from __future__ import annotations

import csv
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from ..bounded import MAX_TIME, check_int
from ..cluster import Cluster
from ..codes import RejectReason
from ..errors import ConfigError
from ..replayer import ReplayResult, replay
from ..slurm_conf import node_lines, read_slurm_conf
from ..slurm_events import DRAIN_STARTS
from ..slurm_settings import slurm_settings
from .drain import NONE as DRAIN_NONE
from .drain import drain_actions, drain_summary, parse_drain, pbf_drain
from .jobs import HarnessJob, load_workload, pbf_table, scale_jobs
from .limits import NONE as LIMITS_NONE
from .limits import QOS_NAME, LimitsCase, limits_config, limits_summary, read_limits_case, recorded_limits
from .per_run import MEDIAN as LAG_MEDIAN
from .per_run import PER_RUN, add_columns, at_median, check_mode, clock_phases, per_run_summary, replays, thresholds
from .records import end_lag_threshold, read_sdiag, sdiag_figures
from .reservation import parse_reservation, pbf_reservation, recorded_reservation, reservation_summary
from .slurm_config import write_private_conf
from .slurm_run import check_requirements, is_recording, new_scratch, read_run, run_slurm, slurm_version

__all__ = ["WINDOW_S", "agreement", "node_agreement", "awt", "pbf_starts", "comparison_rows", "summarise",
           "write_outputs", "draw_starts", "validate_slurm", "default_timeout"]

#: two starts agree when they are at most this many seconds of the run's clock apart
WINDOW_S = 2.0


def agreement(jobs: Sequence[HarnessJob], a: dict, b: dict, window: float = WINDOW_S) -> dict:
    """How ``b``'s starts agree with ``a``'s (``{job id: start or None}``), over the jobs started in both:
    ``jobs``, ``within_share`` (|b - a| <= window), ``median_abs_s``, ``p90_abs_s``, ``worst_abs_s`` and
    ``worst_job``, ``mean_diff_s`` (b - a), ``earlier_share`` / ``later_share`` (b before / after a by
    more than the window), and ``only_a`` / ``only_b`` (jobs started on one side only)."""
    ids = [j.id for j in jobs if a.get(j.id) is not None and b.get(j.id) is not None]
    only_a = sum(1 for j in jobs if a.get(j.id) is not None and b.get(j.id) is None)
    only_b = sum(1 for j in jobs if b.get(j.id) is not None and a.get(j.id) is None)
    if not ids:
        return {"jobs": 0, "window_s": window, "within_share": None, "median_abs_s": None, "p90_abs_s": None,
                "worst_abs_s": None, "worst_job": None, "mean_diff_s": None, "earlier_share": None,
                "later_share": None, "only_a": only_a, "only_b": only_b}
    d = np.array([float(b[i]) - float(a[i]) for i in ids])
    ad = np.abs(d)
    k = int(np.argmax(ad))
    return {"jobs": len(ids), "window_s": window, "within_share": float((ad <= window).mean()),
            "median_abs_s": float(np.median(ad)), "p90_abs_s": float(np.percentile(ad, 90)),
            "worst_abs_s": float(ad[k]), "worst_job": ids[k], "mean_diff_s": float(d.mean()),
            "earlier_share": float((d < -window).mean()), "later_share": float((d > window).mean()),
            "only_a": only_a, "only_b": only_b}


def awt(jobs: Sequence[HarnessJob], starts: dict, ids: Iterable[int] | None = None) -> float | None:
    """Mean wait (start - planned submission, seconds) over ``ids`` (default: the jobs with a start)."""
    sub = {j.id: j.submit for j in jobs}
    ids = [i for i in (ids if ids is not None else sub) if starts.get(i) is not None]
    if not ids:
        return None
    return float(np.mean([starts[i] - sub[i] for i in ids]))


def pbf_starts(result: ReplayResult) -> dict:
    """``{job id: {start, end, state, how, nodes}}`` of a :class:`pbf.ReplayResult` (start/end None for
    jobs that never started; nodes: a list of names, when the replay recorded them). A job its reservation's
    end ended (ResvOverRun) is ``TIMEOUT``, as Slurm's state."""
    j = result.jobs
    state = result.label("state", j["state"])
    state = np.where(j["reject_reason"] == RejectReason.RJ_RESV_OVER, "TIMEOUT", state)
    how = result.label("how", j["how"])
    out = {}
    for i in range(len(j["id"])):
        started = int(j["start"][i]) >= 0
        out[int(j["id"][i])] = {"start": int(j["start"][i]) if started else None,
                                "end": int(j["end"][i]) if started and int(j["end"][i]) >= 0 else None,
                                "state": str(state[i]), "how": str(how[i]) if started else "",
                                "nodes": str(j["nodes"][i]).split(",") if "nodes" in j and started else []}
    return out


def node_agreement(jobs: Sequence[HarnessJob], a: dict, b: dict, window: float = WINDOW_S) -> dict:
    """How often ``b`` put a job on the same node set as ``a`` (``{job id: {start, nodes}}``), over the
    jobs started in both (``same_share``) and over those whose starts agree within ``window``
    (``same_share_same_start``: the node choice itself, where both sides chose at the same moment)."""
    ids = [j.id for j in jobs if a.get(j.id, {}).get("start") is not None and b.get(j.id, {}).get("start") is not None
           and b[j.id].get("nodes")]
    same = [sorted(a[i]["nodes"]) == sorted(b[i]["nodes"]) for i in ids]
    near = [s for i, s in zip(ids, same) if abs(float(b[i]["start"]) - float(a[i]["start"])) <= window]
    return {"jobs": len(ids), "same_share": float(np.mean(same)) if same else None,
            "jobs_same_start": len(near), "same_share_same_start": float(np.mean(near)) if near else None}


def comparison_rows(jobs: Sequence[HarnessJob], slurm_runs: list, pbf: dict, pbf_measured: dict | None = None) -> list:
    """One dict a job (the columns of comparison.csv). ``slurm_runs``: each run's ``{id: record}`` (as
    :attr:`pbf.validate.slurm_run.SlurmRun.jobs`); ``pbf`` / ``pbf_measured``: :func:`pbf_starts`."""
    rows = []
    for j in jobs:
        s = slurm_runs[0].get(j.id, {})
        p = pbf.get(j.id, {})
        row = {"job_id": j.id, "submit_s": j.submit, "run_s": j.run, "limit_min": j.limit_min, "cores": j.cores,
               "mem_per_cpu_mb": j.mem_core_mb, "mem_per_node_mb": j.mem_node_mb, "gpus_per_node": j.gpus,
               "nodes_min": j.nodes_min, "nodes_max": j.nodes_max, "features": "&".join(j.features),
               "slurm_state": s.get("state", ""), "slurm_start": _blank(s.get("start")),
               "slurm_end": _blank(s.get("end")), "slurm_nodes": " ".join(s.get("nodes", [])),
               "slurm_how": s.get("how", ""), "slurm_start_precise": _blank(s.get("start_precise"), 3),
               "pbf_state": p.get("state", ""), "pbf_start": _blank(p.get("start")), "pbf_end": _blank(p.get("end")),
               "pbf_how": p.get("how", ""), "pbf_nodes": " ".join(p.get("nodes", [])),
               "difference_s": _blank(None if p.get("start") is None or s.get("start") is None
                                      else p["start"] - s["start"])}
        for k, run in enumerate(slurm_runs[1:], 2):
            r = run.get(j.id, {})
            row[f"slurm{k}_start"] = _blank(r.get("start"))
            row[f"slurm{k}_nodes"] = " ".join(r.get("nodes", []))
            row[f"slurm{k}_difference_s"] = _blank(None if r.get("start") is None or s.get("start") is None
                                                   else r["start"] - s["start"])
        if pbf_measured is not None:
            m = pbf_measured.get(j.id, {})
            row["pbf_measured_start"] = _blank(m.get("start"))
        rows.append(row)
    return rows


def _blank(v, digits=None):
    if v is None:
        return ""
    return round(float(v), digits) if digits is not None else v


def _starts(records: dict) -> dict:
    return {i: r.get("start") for i, r in records.items()}


def summarise(jobs: Sequence[HarnessJob], slurm_runs: list, pbf: dict, *, pbf_measured: dict | None = None,
              time_scale: float = 1.0, window: float = WINDOW_S) -> dict:
    """The comparison figures (module docstring) of the runs and pbf's replay, without the settings."""
    first = _starts(slurm_runs[0])
    p = {i: r.get("start") for i, r in pbf.items()}
    both = [j.id for j in jobs if first.get(j.id) is not None and p.get(j.id) is not None]
    out = {"jobs": len(jobs), "window_s": window, "window_workload_s": window * time_scale,
           "pbf_vs_slurm": agreement(jobs, first, p, window),
           "nodes_pbf_vs_slurm": node_agreement(jobs, slurm_runs[0], pbf, window)}
    a_s, a_p = awt(jobs, first, both), awt(jobs, p, both)
    out["awt_s"] = {"slurm": a_s, "pbf": a_p, "over_jobs": len(both),
                    "relative_difference": (a_p - a_s) / a_s if a_s else None,
                    "slurm_workload_s": a_s * time_scale if a_s is not None else None,
                    "pbf_workload_s": a_p * time_scale if a_p is not None else None}
    refused_s = sorted(i for i, r in slurm_runs[0].items() if r.get("start") is None)
    refused_p = sorted(i for i, r in pbf.items() if r.get("start") is None)
    out["not_started"] = {"slurm": refused_s, "pbf": refused_p,
                          "slurm_states": {str(i): slurm_runs[0][i].get("state") for i in refused_s}}
    if len(slurm_runs) > 1:
        out["slurm_vs_slurm"] = [agreement(jobs, first, _starts(r), window) for r in slurm_runs[1:]]
        out["nodes_slurm_vs_slurm"] = [node_agreement(jobs, slurm_runs[0], r, window) for r in slurm_runs[1:]]
        for k, r in enumerate(slurm_runs[1:], 2):
            out["awt_s"][f"slurm_run{k}"] = awt(jobs, _starts(r), both)
    else:
        out["slurm_vs_slurm"] = None
    if pbf_measured is not None:
        out["pbf_measured_runs_vs_slurm"] = agreement(jobs, first, {i: r.get("start") for i, r in pbf_measured.items()},
                                                      window)
    hows = [r.get("how") for r in slurm_runs[0].values() if r.get("start") is not None]
    out["slurm_started_by"] = {h or "unknown": hows.count(h) for h in sorted(set(hows))}
    phow = [r.get("how") for r in pbf.values() if r.get("start") is not None]
    out["pbf_started_by"] = {h: phow.count(h) for h in sorted(set(phow))}
    lags = [r["submit_lag"] for run in slurm_runs for r in run.values() if r.get("submit_lag") is not None]
    out["submit_lag_s"] = {"mean": float(np.mean(lags)) if lags else None, "max": float(max(lags)) if lags else None}
    # Slurm's own measured run time against the sleep asked (launch and end overheads)
    over = [r["end"] - r["start"] - j.run for j in jobs for r in [slurm_runs[0].get(j.id, {})]
            if r.get("start") is not None and r.get("end") is not None]
    out["slurm_run_overrun_s"] = {"mean": float(np.mean(over)) if over else None,
                                  "max": float(max(over)) if over else None}
    return out


def write_outputs(out_dir: str | os.PathLike, rows: list[dict], summary: dict) -> list:
    """Write comparison.csv and summary.json into ``out_dir``; returns the paths."""
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, "comparison.csv")
    names = list(rows[0]) if rows else ["job_id"]
    with open(csv_path + ".part", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=names)
        w.writeheader()
        w.writerows(rows)
    os.replace(csv_path + ".part", csv_path)
    js = os.path.join(out_dir, "summary.json")
    with open(js + ".part", "w") as fh:
        json.dump(_finite(summary), fh, indent=2, allow_nan=False, default=str)
        fh.write("\n")
    os.replace(js + ".part", js)
    return [csv_path, js]


def _finite(v):
    if isinstance(v, dict):
        return {str(k): _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, np.generic):
        return v.item()
    return v


def draw_starts(out_dir: str | os.PathLike, rows: list[dict], summary: dict) -> str:
    """``starts.png`` (pbf's start against Slurm's, and Slurm's later runs against its first), or the
    sentence saying why it was skipped."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        return f"skipped: matplotlib is not importable ({exc})"
    pts = [(r["slurm_start"], r["pbf_start"]) for r in rows if r["slurm_start"] != "" and r["pbf_start"] != ""]
    fig, ax = plt.subplots(figsize=(6.4, 6.0))
    if pts:
        x, y = np.array(pts, dtype=float).T
        top = float(max(x.max(), y.max(), 1.0))
        ax.fill_between([0, top], [-WINDOW_S, top - WINDOW_S], [WINDOW_S, top + WINDOW_S], color="0.9",
                        label=f"within {WINDOW_S:g} s")
        ax.plot([0, top], [0, top], color="0.5", lw=0.8)
        a = summary["pbf_vs_slurm"]
        ax.scatter(x, y, s=9, color="C0", label=f"pbf ({a['within_share']:.0%} within {WINDOW_S:g} s)")
        if "slurm2_start" in rows[0]:
            q = np.array([(r["slurm_start"], r["slurm2_start"]) for r in rows
                          if r["slurm_start"] != "" and r["slurm2_start"] != ""], dtype=float)
            if len(q):
                share = summary["slurm_vs_slurm"][0]["within_share"]
                ax.scatter(q[:, 0], q[:, 1], s=9, marker="x", color="C3", alpha=0.7,
                           label=f"Slurm, 2nd run ({share:.0%} within {WINDOW_S:g} s)")
    ax.set_xlabel("Slurm start (s of the run)")
    ax.set_ylabel("start (s of the run)")
    ax.set_title("pbf against real Slurm, job by job")
    ax.legend(loc="upper left", fontsize=8)
    path = os.path.join(out_dir, "starts.png")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return "starts.png"


def default_timeout(jobs: Sequence[HarnessJob], cluster: Cluster) -> float:
    """The default wait for a run (seconds after the first submission): the last submission, plus the
    jobs' core-seconds over the partition's cores, plus twice the longest limit, plus 2 minutes."""
    work = sum(j.run * j.cores for j in jobs)
    last = max((j.submit for j in jobs), default=0)
    longest = max((j.limit_min * 60 for j in jobs), default=60)
    return float(last + work / max(cluster.units, 1) + 2 * longest + 120)


def _by_scheduler(pbf: dict, sched_time: dict | None) -> dict | None:
    """pbf's starts by the scheduler that made them, as slurmctld's log names Slurm's: the main scheduler's
    passes (``scheduler_time.main_started``) and the backfill cycles (the rest). (pbf's ``how`` says
    ``main`` for a job started in queue order ahead of the first blocked one, whichever pass started it.)"""
    if not sched_time or sched_time.get("main_started") is None:
        return None
    started = sum(1 for r in pbf.values() if r.get("start") is not None)
    return {"main": int(sched_time["main_started"]), "backfill": started - int(sched_time["main_started"])}


def _partition_counts(jobs: Sequence[HarnessJob], runs: list, pbf: dict, settings) -> dict:
    """On a site of several partitions: the jobs by the partitions they name, and the jobs each side ran
    on nodes that no single one of their partitions holds (Slurm runs a job inside one of them)."""
    site = settings.config.partitions
    nodes_of = {p.name: set(p.nodes) for p in site.partitions}
    default = site.default.name if site.default is not None else ""

    def outside(records):
        n = 0
        for j in jobs:
            got = set(records.get(j.id, {}).get("nodes") or [])
            names = [x for x in (j.partition or default).split(",") if x]
            if got and names and not any(got <= nodes_of.get(x, set()) for x in names):
                n += 1
        return n
    by = {}
    for j in jobs:
        by[j.partition or "(default)"] = by.get(j.partition or "(default)", 0) + 1
    return {"names": [p.name for p in site.partitions], "jobs_by_partitions": by,
            "multi": site.multi, "outside_one_partition": {"pbf": outside(pbf),
                                                           "slurm": [outside(r) for r in runs]}}


def _for_slurm(spec, time_scale):
    if spec is None:
        return None
    start, end = spec.on_run_clock(time_scale)
    return {"name": spec.name, "nodes": list(spec.nodes), "start": start, "end": end, "flags": list(spec.flags)}


def _check_named(workload, jobs, spec, recorded):
    # jobs that name a reservation need the case's own (a spec, or a recorded run's dump), of that name
    named = sorted({j.reservation for j in jobs if j.reservation})
    if not named:
        return
    where = f"{os.fspath(workload)}: jobs name reservation {', '.join(map(repr, named))} (the Reservation column)"
    if spec is None and not (recorded and recorded_reservation(recorded[0].scratch)):
        raise ConfigError(f"{where}, and the case has none: expected --reservation 'Nodes=... StartTime=+S "
                          f"Duration=S Flags=none Name={named[0]}' (or --slurm-runs of a run that had it)")
    if spec is not None and set(named) - {spec.name}:
        raise ConfigError(f"{where}; --reservation Name={spec.name}: expected Name={named[0]}, the one reservation "
                          "of a case")


def _folders(out, recorded, n):
    return ([os.path.join(out, "slurm", f"run{k}") for k in range(1, n + 1)] if recorded is None
            else [r.scratch for r in recorded])


def _end_lag(given, timings, default):
    """pbf's ``end_lag_below`` and where it came from (summary.json ``pbf_end_lag_below``): ``given``
    (``--end-lag-below``), else the median of the compared runs' own timing lines
    (:func:`pbf.validate.records.end_lag_threshold`), else ``default`` (the settings')."""
    value, each = end_lag_threshold(timings)
    if given is not None:
        return {"s": int(given), "from": "given", "runs_s": each}
    if value is not None:
        return {"s": value, "from": "runs", "runs_s": each}
    return {"s": default, "from": "settings", "runs_s": each}


def _on_clock(config, phase):
    # the backfill on a run's clock (SlurmBackfill.clock_origin; only its second modulo 30 s matters)
    b = config.backfill
    return replace(b, clock_origin=phase) if hasattr(b, "clock_origin") else b


def _check_at(jobs, timings):
    """pbf's ``resv_check_at`` (summary.json ``pbf_resv_check_at``): the second of one of slurmctld's
    time-limit checks, from the first compared run whose log says it (:func:`pbf.validate.records.read_timing`),
    for a workload with jobs inside a reservation (the checks end them at its end); else None."""
    if not any(j.reservation for j in jobs):
        return None
    return next((int(t["time_limit_check_s"]) for t in timings if t and t.get("time_limit_check_s") is not None),
                None)


def _say(verbose, text):
    if verbose:
        print(text, file=sys.stderr, flush=True)


def _recorded_runs(folder: str, jobs: Sequence[HarnessJob]) -> list:
    """The Slurm runs an earlier harness run kept under ``folder``/slurm/run1, run2, ..."""
    if not os.path.isdir(os.path.join(folder, "slurm", "run1")) and is_recording(folder):
        return [read_run(folder, jobs)]          # one run kept in the compact form the repository ships
    runs, k = [], 1
    while os.path.isdir(os.path.join(folder, "slurm", f"run{k}")):
        runs.append(read_run(os.path.join(folder, "slurm", f"run{k}"), jobs))
        k += 1
    if not runs:
        raise ConfigError(f"slurm_runs {folder!r}: no recorded run (expected {os.path.join(folder, 'slurm', 'run1')}/, "
                          "as an earlier 'pbf validate slurm --out' keeps it, or a recording's submitted.json and "
                          "jobcomp.txt)")
    return runs


def validate_slurm(conf: str | os.PathLike, workload: str | os.PathLike, *, time_scale: float = 1.0,
                   out: str | os.PathLike = "validate-slurm", repeat: int = 1, partition: str | None = None,
                   timeout: float | None = None, verbose: bool = True,
                   slurm_runs: str | os.PathLike | None = None, reservation: str | None = None,
                   drain: str | None = None, limits: str | None = None, end_lag_below: int | None = None,
                   drain_start: str = "inferred", as_users: bool = False, end_runs_main: bool = False,
                   end_after_cycle: bool = False, end_lag_threshold: str = LAG_MEDIAN) -> dict:
    """Run ``workload`` (SWF or sacct dump) through a real Slurm configured from the site's ``conf``
    (``repeat`` times) and through pbf with the matching settings; write the outputs into ``out``
    (module docstring) and return the summary. ``partition``: every job goes there; None on a ``conf`` of
    several partitions: each job to its own (the workload's ``Partition``, ``a,b`` for several) on both
    sides, pbf replaying every partition. ``slurm_runs``: the ``out`` folder of an earlier run of
    the same workload and scale, whose recorded Slurm runs are compared again instead of running Slurm
    (pbf's side is replayed anew). ``reservation``: an advance reservation for the case
    (:mod:`pbf.validate.reservation`: ``"Nodes=a1,a2 StartTime=+60 Duration=120 Flags=MAINT,IGNORE_JOBS"``,
    times on the workload's clock), made in each Slurm run before the first submission and held on pbf's
    side; comparing recorded runs again without it, the first run's own dump is read. ``drain``: a
    drained node (:mod:`pbf.validate.drain`: ``"Nodes=a2 StartTime=+60 Duration=300"``), drained and resumed
    in each Slurm run (with slurmdbd, whose ``sacctmgr show events`` pbf's side reads); ``"none"``: pbf
    without a recorded drain; ``drain_start``: ``"inferred"`` moves the drain of a run's dump back to when
    it was asked as the first run's jobs tell (where and when they ran, as a site's sacct dump gives it:
    :mod:`pbf.slurm_events`), ``"recorded"`` keeps the dump's times.
    ``limits``: a QOS and association limits case (:mod:`pbf.validate.limits`;
    comparing recorded runs again without it, a recorded limits case's own dumps are read); ``"none"``:
    pbf without them. ``end_runs_main``, ``end_after_cycle``: pbf's :class:`pbf.SlurmSim` settings of those
    names (what-ifs: a job's end runs the main scheduler at once; the 1 s end lag as an order around it).
    ``end_lag_below``: pbf's ``SlurmSimConfig.end_lag_below`` (seconds; None: the median of the compared runs'
    own timing, read from their logs, else the settings'; summary.json ``pbf_end_lag_below`` says which).
    ``end_lag_threshold``: ``"median"`` (that one replay for every run) or ``"per-run"``: a replay per distinct
    threshold of the runs, each run compared with the one at its own (:mod:`pbf.validate.per_run`; summary.json
    ``pbf_per_run``). ``as_users``: each job is submitted to Slurm by its trace user's own throwaway Unix user
    (``pbfu<N>``, made inside the run's private mount namespace; per-user limits then count the trace's users,
    as pbf's side does).
    Raises :class:`pbf.validate.SlurmUnavailable` when this machine cannot run Slurm (before anything is
    written), :class:`pbf.ConfigError` on bad input."""
    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
        raise ConfigError(f"repeat must be a whole number >= 1, got {repeat!r}")
    if timeout is not None and (not isinstance(timeout, (int, float)) or not timeout > 0):
        raise ConfigError(f"timeout must be a number of seconds > 0, got {timeout!r}")
    out = os.fspath(out)
    if os.path.exists(out) and not os.path.isdir(out):
        raise ConfigError(f"output folder {out!r} exists and is not a folder")
    conf = os.fspath(conf)
    if not os.path.exists(conf):
        raise ConfigError(f"slurm.conf {conf!r}: no such file")
    known = tuple(n for _, _, names in node_lines(read_slurm_conf(conf)) for n in names)
    resv_spec = parse_reservation(reservation, known) if reservation is not None else None
    drain_spec = parse_drain(drain, known) if drain not in (None, DRAIN_NONE) else None
    if drain_start not in DRAIN_STARTS:
        raise ConfigError(f"--drain-start {drain_start!r}: expected one of {', '.join(DRAIN_STARTS)}")
    limits_case = read_limits_case(limits) if limits not in (None, LIMITS_NONE) else None
    qos = QOS_NAME if limits_case is not None else None
    table, requests = load_workload(workload)
    # several partitions and none chosen: every partition, each job in its own (as pbf replay --slurm-conf
    # FILE reads them), and each job submitted to Slurm with its own --partition
    every = partition is None and len(read_slurm_conf(conf).partitions) > 1
    settings = slurm_settings(conf, partition, requests=requests, all_partitions=every)
    if end_lag_below is not None:
        check_int("end_lag_below", end_lag_below, 0, MAX_TIME)
    check_mode(end_lag_threshold, end_lag_below)
    jobs, notes = scale_jobs(table, requests, time_scale, partitions=every)
    if every:
        settings.config.partitions.check_trace(pbf_table(jobs))     # a job no partition takes: before Slurm runs
    recorded = _recorded_runs(os.fspath(slurm_runs), jobs) if slurm_runs is not None else None
    _check_named(workload, jobs, resv_spec, recorded)
    # pbf's end_lag_below: given, else the compared runs' own timing (recorded: now; live: after they ran)
    end_lag = _end_lag(end_lag_below, [r.timing for r in recorded] if recorded else [],
                       settings.config.slurm_sim.end_lag_below)
    check_at = _check_at(jobs, [r.timing for r in recorded] if recorded else [])
    # pbf's clock: each run's own (the will-run test's windows fall on its Unix time); run 1's first
    phases = clock_phases([r.t0 for r in recorded] if recorded else [None])
    settings.config = replace(settings.config, slurm_sim=replace(
        settings.config.slurm_sim, end_lag_below=end_lag["s"], end_runs_main=end_runs_main,
        end_after_cycle=end_after_cycle), resv_check_at=check_at, backfill=_on_clock(settings.config, phases[0]))
    if limits is None and recorded and recorded_limits(recorded[0].scratch):
        limits_case, qos = LimitsCase("(the recorded run's dumps)", ()), QOS_NAME     # a recorded limits case
    accounting = drain_spec is not None or limits_case is not None
    if recorded is None:
        check_requirements(accounting, **({"as_users": True} if as_users else {}))
    t_begin = time.time()
    _say(verbose, f"pbf validate slurm: {len(jobs)} jobs, time scale {time_scale:g}, "
                  + (f"partitions {settings.partition} (each job in its own)" if every
                     else f"partition {settings.partition or '(all nodes)'}")
                  + f", {len(settings.cluster.nodes)} nodes")
    # pbf first: a setting it refuses shows before Slurm runs for minutes
    config = replace(settings.config, record_nodes=True)
    os.makedirs(out, exist_ok=True)
    resv, resv_source = pbf_reservation(resv_spec, recorded[0].scratch if recorded else None, out, known, time_scale)
    if resv is not None:
        config = replace(config, reservations=resv)
    if any(j.reservation for j in jobs):
        resv.jobs_inside(pbf_table(jobs))       # (a name the reservation does not hold: before Slurm runs)
    config_base = config
    # comparing recorded runs again: a spec given wins, else the first run's own events dump
    events, events_source = (None, None) if drain == DRAIN_NONE else pbf_drain(
        drain_spec, recorded[0].scratch if recorded and drain_spec is None else None, out, known, time_scale,
        records=recorded[0].jobs if recorded else None, drain_start=drain_start)
    if events is not None:
        config = replace(config, failures=events)
    if limits_case is not None:
        config = limits_config(config, limits_case, recorded[0].scratch if recorded else None, out)
    pbf_result = replay(pbf_table(jobs, qos=qos), config)
    pbf = pbf_starts(pbf_result)
    if timeout is None:
        timeout = default_timeout(jobs, settings.cluster)
        if drain_spec is not None:          # the run waits for the resume
            timeout = max(timeout, drain_spec.on_run_clock(time_scale)[1] + 120.0)
    os.makedirs(out, exist_ok=True)
    runs, run_meta = [], []
    stuck = max(15.0, 2.0 * settings.config.bf_interval + 5.0)
    for k in range(1, repeat + 1 if recorded is None else 0):
        scratch = new_scratch()
        private = write_private_conf(conf, scratch, None if every else settings.partition, all_partitions=every,
                                     accounting=accounting, enforce=("associations,limits,qos" if limits_case
                                                                     else "associations"))
        _say(verbose, f"Slurm run {k}/{repeat} in {scratch} (timeout {timeout:.0f} s)")
        try:
            run = run_slurm(private, jobs, timeout=timeout, keep=os.path.join(out, "slurm", f"run{k}"),
                            verbose=verbose, stuck_after=stuck, reservation=_for_slurm(resv_spec, time_scale),
                            actions=drain_actions(drain_spec, time_scale),
                            setup=limits_case.setup if limits_case else None, as_users=as_users)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        runs.append(run.jobs)
        run_meta.append({"run": k, "t0": run.t0, "wall_s": run.wall_s, "idle_after_s": run.idle_after_s,
                         "finished": run.finished, "errors": run.errors, "daemons_stopped": run.stopped,
                         "sdiag": sdiag_figures(read_sdiag(run.sdiag)), "not_carried": private.not_carried,
                         "timing": run.timing, "pending_reasons": run.pending_reasons})
        if run.errors:
            _say(verbose, f"Slurm run {k}: " + "; ".join(run.errors))
    for k, run in enumerate(recorded or [], 1):
        runs.append(run.jobs)
        run_meta.append({"run": k, "t0": run.t0, "wall_s": run.wall_s, "idle_after_s": run.idle_after_s,
                         "finished": run.finished, "errors": run.errors, "daemons_stopped": run.stopped,
                         "sdiag": sdiag_figures(read_sdiag(run.sdiag)), "not_carried": [],
                         "recorded_in": run.scratch, "timing": run.timing, "pending_reasons": run.pending_reasons})
    if recorded is None and runs:
        end_lag = _end_lag(end_lag_below, [r["timing"] for r in run_meta], end_lag["s"])
        check_at = _check_at(jobs, [r["timing"] for r in run_meta])
        phases = clock_phases([r["t0"] for r in run_meta])
    if recorded is None and runs and (end_lag["s"] != config.slurm_sim.end_lag_below
                                      or check_at != config.resv_check_at
                                      or _on_clock(config, phases[0]) != config.backfill):
        # pbf's side again with the runs' own timing and run 1's clock
        config_base, config = (replace(c, slurm_sim=replace(c.slurm_sim, end_lag_below=end_lag["s"]),
                                       resv_check_at=check_at, backfill=_on_clock(c, phases[0]))
                               for c in (config_base, config))
        if drain_spec is None and limits_case is None:
            pbf_result = replay(pbf_table(jobs, qos=qos), config)
            pbf = pbf_starts(pbf_result)
    if recorded is None and runs and (drain_spec is not None or limits_case is not None):
        # pbf's side again from the first run's own dumps (events; QOS and associations), as a site gives them
        first = os.path.join(out, "slurm", "run1")
        if drain_spec is not None:
            events, events_source = pbf_drain(drain_spec, first, out, known, time_scale, records=runs[0],
                                              drain_start=drain_start)
        config = replace(config_base, failures=events) if events is not None else config_base
        if limits_case is not None:
            config = limits_config(config, limits_case, first, out)
        pbf_result = replay(pbf_table(jobs, qos=qos), config)
        pbf = pbf_starts(pbf_result)
    pbfs, lag = None, None
    if end_lag_threshold == PER_RUN or len(set(phases)) > 1:
        # each run against a replay at its own threshold (per-run) and on its own clock: run 1's stands behind
        # every other figure
        lag = thresholds(end_lag, len(runs)) if end_lag_threshold == PER_RUN else at_median(end_lag, len(runs))
        end_lag = lag if end_lag_threshold == PER_RUN else end_lag

        def at(c, key):
            return replace(c, slurm_sim=replace(c.slurm_sim, end_lag_below=key[0]), backfill=_on_clock(c, key[1]))
        if lag["compared_at_s"][0] != config.slurm_sim.end_lag_below:
            config = at(config, (lag["compared_at_s"][0], phases[0]))
            pbf_result = replay(pbf_table(jobs, qos=qos), config)
            pbf = pbf_starts(pbf_result)
        pbfs = replays(list(zip(lag["compared_at_s"], phases)), pbf,
                       lambda key: pbf_starts(replay(pbf_table(jobs, qos=qos), at(config, key))))
    measured = {i: r["end"] - r["start"] for i, r in runs[0].items()
                if r.get("start") is not None and r.get("end") is not None}
    pbf_m_result = replay(pbf_table(jobs, measured, qos=qos), config)
    pbf_measured = pbf_starts(pbf_m_result)
    rows = comparison_rows(jobs, runs, pbf, pbf_measured)
    summary = summarise(jobs, runs, pbf, pbf_measured=pbf_measured, time_scale=time_scale)
    summary["pbf_end_lag_threshold"] = end_lag_threshold
    if pbfs is not None:
        add_columns(rows, jobs, pbfs)
        summary["pbf_per_run"] = per_run_summary(jobs, runs, pbfs, lag, agreement=agreement,
                                                 node_agreement=node_agreement, awt=awt, window=WINDOW_S,
                                                 time_scale=time_scale, phases=phases)
    if config.clock == "slurm-sim":
        # pbf against itself with its timers a second later: a site's cycle phase is not in its files
        shifted = replace(config, slurm_sim=replace(config.slurm_sim, timer_phase=config.slurm_sim.timer_phase + 1.0))
        again = pbf_starts(replay(pbf_table(jobs, qos=qos), shifted))
        summary["pbf_vs_pbf_timers_shifted"] = dict(
            agreement(jobs, {i: r.get("start") for i, r in pbf.items()}, {i: r.get("start") for i, r in again.items()}),
            shift_s=1.0)
    ps = pbf_result.summary
    summary.update({
        "slurm_version": run.version if runs else slurm_version(), "conf": os.path.abspath(conf),
        "workload": os.path.abspath(os.fspath(workload)), "partition": settings.partition,
        "partitions": _partition_counts(jobs, runs, pbf, settings) if every else None, "time_scale": time_scale,
        "time_scale_notes": notes, "repeat": len(runs), "timeout_s": timeout,
        "unmodelled": settings.unmodelled, "read_past": settings.read_past,
        "not_carried_to_private_slurm": run_meta[0]["not_carried"],
        "pbf_settings": settings.mapped, "pbf_config": ps["config"],
        "pbf": {"backfilled": ps["jobs"]["backfilled"], "started_by_main": ps["jobs"]["started_by_main"],
                "rejected": ps["jobs"]["rejected"], "scheduler_time": ps.get("scheduler_time")},
        "pbf_started_by_scheduler": _by_scheduler(pbf, ps.get("scheduler_time")),
        "runs": run_meta, "pbf_end_lag_below": end_lag, "pbf_resv_check_at": check_at, "pbf_clock_phase_s": phases,
        "wall_s": time.time() - t_begin,
        "submitted_as": "each job's trace user (pbfu<N>)" if as_users else "root"})
    if resv is not None:
        folders = ([os.path.join(out, "slurm", f"run{k}") for k in range(1, len(runs) + 1)] if recorded is None
                   else [r.scratch for r in recorded])
        summary["reservation"] = reservation_summary(resv_spec, resv, resv_source, folders, runs, pbf, time_scale,
                                                     named={j.id: j.reservation for j in jobs if j.reservation})
    if events is not None:
        summary["drain"] = drain_summary(drain_spec, events, events_source, _folders(out, recorded, len(runs)), runs,
                                         pbf, known, time_scale)
    if limits_case is not None:
        summary["limits"] = limits_summary(limits_case, pbf_result, run_meta)
    pbf_result.write(os.path.join(out, "pbf"))
    summary["figure"] = draw_starts(out, rows, summary)
    write_outputs(out, rows, summary)
    return summary
