"""The text ``pbf replay`` prints: the summary of a replay, and what ``--slurm-conf`` set."""
from __future__ import annotations

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    from typing import Any


__all__ = ["format_replay", "format_slurm_conf", "workers_line"]


def format_slurm_conf(sc: dict[str, Any]) -> str:
    """What the file set, what pbf does not model, what the flags replaced."""
    lines = [f"slurm-conf   {sc['path']} (partition {sc['partition'] or '(all nodes)'}): {len(sc['mapped'])} "
             f"settings mapped, {len(sc['unmodelled'])} not modelled, {len(sc['read_past'])} read past (hosts, "
             "ports, paths, logging: they do not decide when or where jobs run)"]
    lines += [f"  not modelled: {u}" for u in sc["unmodelled"]]
    if sc["overridden_by_flags"]:
        lines.append(f"  flags win:    {', '.join(sc['overridden_by_flags'])}")
    return "\n".join(lines)


def _shared_what(config: dict[str, Any]) -> str:
    # what a helper thread shares: pbf's node search shares a search's set-up, Slurm's tests a job's
    # next later start ahead (docs/engine.md, "Threads on nodes")
    if config.get("node_search") == "slurm":
        return "later starts tested ahead on a helper thread"
    return "node searches shared with a helper thread"


def format_replay(s: dict[str, Any], out: str | None) -> str:
    """The summary of a replay (``ReplayResult.summary``), a line per topic; ``out``: where its files went."""
    m, j, p = s["metrics"], s["jobs"], s["passes"]
    c = s["config"]
    bf = c["backfill"]
    resv = "unlimited" if bf["reservations"] is None else bf["reservations"]
    lines = [
        f"trace        {s['trace']}",
        f"cluster      {s['units']} units; priority {c['priority']}, predictor {c['predictor']}, "
        f"reservations {resv}, order {bf['order']}, trigger {c['trigger']}, workers {c['workers']}",
        f"jobs         {j['submitted']:,} submitted, {j['completed']:,} completed "
        f"({j['backfilled']:,} by backfill), {j['rejected']:,} rejected"
        + (f", {j['killed']:,} killed" if j.get("killed") else "")
        + "".join(f"; {n} {r}" for r, n in j["rejected_by_reason"].items())
        + _rejected_hint(s),
        f"wait         AWT {m['awt_h']:.3f} h, ART {m['art_h']:.3f} h, "
        f"BSLD {m['bsld']:.2f} (tau {m['bsld_tau_s']:g} s)",
        f"cluster use  utilisation {m['utilisation']:.3f}, makespan {m['makespan_s']:,} s, "
        f"queue max {m['max_queue']:,} mean {m['mean_queue']:.1f}",
        f"passes       {p['count']:,} ({p['full']:,} full, {p['quick']:,} quick), mean depth "
        f"{p['mean_depth']:.1f}, max {p['max_depth']:,}"
        + (f"; {p['wall_ms_total']:.1f} ms in passes" if p["wall_ms_total"] is not None else "")
        + (f"; clock {p['clock']}, budget {p['budget_s']} s, charged {p['charged_s_mean_full']:.2f} s "
           f"a full pass" if p["clock"] != "free" else "")
        + (f"; {p['searches_helped']:,} of {p['searches_shared']:,} {_shared_what(c)}"
           + (f" (backed off {p['search_helper_backoffs']:,} times: no CPU to spare)"
              if p.get("search_helper_backoffs") else "")
           + (f"; sharing faster in {p['search_sharing_trials_won']:,} of {p['search_sharing_trials']:,} trials"
              if p.get("search_sharing_trials") else "")
           if p.get("searches_shared") else ""),
        f"wall         {s['wall_s']['replay']:.3f} s replay, {s['wall_s']['load']:.3f} s load",
    ]
    nodes = s.get("nodes")
    if nodes:
        lines.insert(2, f"nodes        {nodes['cluster']}: {nodes['nodes']:,} nodes, {nodes['cores']:,} cores, "
                        f"{nodes['memory_mb'] / 1024 ** 2:,.1f} TiB, {nodes['gpus']:,} GPUs"
                        + "".join(f", {n:,} {kind}" for kind, n in nodes.get("gres", {}).items()) + "; held "
                        + ", ".join(f"{k} {v:.3f}" for k, v in nodes["utilisation"].items() if v is not None)
                        + (f"; first job not fitting held by memory/GPUs/features/shape with its cores free in "
                           f"{nodes['heads_held_by_resources_share']:.1%} of {nodes['heads_blocked']:,} passes"
                           if nodes["heads_blocked"] else "")
                        + "".join(f"; {n:,} rejected: {r}" for r, n in list(nodes["never_fit_by_reason"].items())[:3])
                        + ("; Slurm's node search (will-run test, whole-node reservations)"
                           if s.get("config", {}).get("node_search") == "slurm" else ""))
    f = s.get("failures")
    if f:
        ev = f["events"]
        lines.insert(-1, f"failures     {ev['fail']:,} failures, {ev['drain']:,} drains, {ev['resume']:,} resumes "
                         f"({f['down_core_hours']:,.0f} core-hours down); {f['requeued']:,} jobs requeued, "
                         f"{f['killed']:,} killed, {f['lost_core_hours']:,.1f} core-hours of work lost")
    read = (s.get("config", {}).get("failures") or {}).get("read") or {}
    if read.get("drains_moved"):
        moved = read["drains_moved"]
        lines.insert(-1, f"drains       {len(moved):,} moved earlier than the events dump says, to the second after "
                         "the node's last job start in the trace (--drain-start recorded: the dump's times): "
                         + ", ".join(f"{m['node']} by {m['by_s']:,} s" for m in moved[:4])
                         + (", ..." if len(moved) > 4 else ""))
    pa = s.get("partitions")
    if pa:
        shown = list(pa["jobs_by_partitions"].items())[:4]
        lines.insert(-1, f"partitions   {len(pa['partitions']):,} ({', '.join(pa['partitions'][:6])}"
                         f"{', ...' if len(pa['partitions']) > 6 else ''}): jobs in "
                         + ", ".join(f"{k} {n:,}" for k, n in shown)
                         + (", ..." if len(pa["jobs_by_partitions"]) > 4 else "")
                         + "".join(f"; {n:,} rejected: {r}" for r, n in list(pa["rejected_by_reason"].items())[:2]))
    q = s.get("qos_limits")
    if q:
        lines.insert(-1, f"qos limits   {len(q['limits']):,} QOS from {q['file']}: {q['held']:,} job tests held; "
                         f"{q['jobs_without_limits']:,} jobs in no limited QOS; {len(q['not_modelled']):,} limits "
                         "read, not modelled (summary.json)")
    a = s.get("assoc_limits")
    if a:
        lines.insert(-1, f"assoc limits {a['user_associations']:,} user associations in {a['accounts']:,} accounts "
                         "from "
                         f"{a['file']}: {a['held']:,} job tests held; {sum(a['refused'].values()):,} jobs refused; "
                         f"{a['jobs_of_unknown_users'] + a['jobs_of_unknown_associations']:,} jobs in no "
                         f"association; {len(a['not_modelled']):,} settings read, not modelled (summary.json)")
    co = s.get("coalloc")
    if co:
        lines.insert(-1, f"co-alloc     {co['policy']}: {co['secondary_jobs']:,} jobs on lent cores "
                         f"({co['share_coallocated']:.1%}); primary slowdown mean "
                         f"{co['primary_slowdown_mean']:.3f}, "
                         f"p95 {co['primary_slowdown_p95']:.3f}; utilisation allocated "
                         f"{co['utilisation_allocated']:.3f}, "
                         f"useful {co['utilisation_useful']:.3f}; makespan {co['queue_makespan_s']:,} s")
    se = s.get("start_estimates")
    if se:
        w = se["waited"]
        if w["jobs"]:
            lines.insert(-1, f"estimates    of {w['jobs']:,} jobs that waited: median error "
                             f"{w['median_abs_s'] / 3600:.2f} h, p90 {w['p90_abs_s'] / 3600:.2f} h, "
                             f"{w['within_1h']:.1%} within 1 h, "
                             f"{w['late']:.1%} started later than told")
    st = s.get("scheduler_time")
    if st:
        lines.insert(-1, f"sched. time  {st['cycles']:,} backfill cycles of {st['cycle_s_mean']:.3f} s and "
                         f"{st['tests_per_cycle']:.1f} tests on average, {st['cycles_ended_by_yield']:,} ended by "
                         f"a yield; {st['main_passes']:,} main-scheduler passes started {st['main_started']:,} jobs")
    if s.get("cleaning"):
        lines.insert(2, "cleaning     " + _cleaning_line(s["cleaning"]))
    if c["predictor"] not in ("requested", "clairvoyant"):
        pr = s["prediction"]
        lines.insert(5, f"prediction   {c['predictor']}, correction {c['correction']}: MAE {pr['mae_s']:,.0f} s, "
                        f"{pr['under_predicted']:.1%} under-predicted, {pr['corrections']:,} corrections")
    sacct = (s.get("cleaning") or {}).get("sacct")
    if sacct:                # a sacct dump: what each record kind and column gave, what is not modelled
        from ..workload.sacct import format_sacct
        at = next(i for i, line in enumerate(lines) if line.startswith("cleaning ")) + 1
        lines.insert(at, format_sacct(sacct, s["cleaning"]))
    workers = workers_line(s)
    if workers:
        lines.insert(-1, workers)
    if not s["reproducible"]:
        lines.append("note         wall clock or eager commit: results may differ run to run")
    if out:
        lines.append(f"wrote        {out}/summary.json, jobs.csv"
                     + (", passes.csv" if c["pass_records"] else "")
                     + (", estimates.csv" if c.get("estimate_every") else ""))
    return "\n".join(lines)


def _cleaning_line(c: dict[str, Any]) -> str:
    """What the reader and the cleaning did: records read = dropped + jobs replayed."""
    dropped = {"no submit time": c["dropped_missing_submit"], "run time <= 0": c["dropped_nonpositive_runtime"],
               "units <= 0": c["dropped_nonpositive_units"], "larger than the cluster": c["oversize_dropped"]}
    text = f"{c['records_read']:,} records read, {c['jobs']:,} jobs"
    gone = [f"{n:,} {what}" for what, n in dropped.items() if n]
    if gone:
        text += f"; dropped {', '.join(gone)}"
    if c["bad_lines_skipped"]:
        text += f"; {c['bad_lines_skipped']:,} bad lines skipped"
    if c["filled_because_none_given"]:
        text += (f"; requested times filled from run times for all {c['filled_missing_request']:,} jobs "
                 "(the trace gives none)")
    elif c["filled_missing_request"]:
        text += f"; {c['filled_missing_request']:,} requested times filled from run times"
    if c["clipped_runtime_to_request"]:
        text += f"; {c['clipped_runtime_to_request']:,} run times cut to the requested time"
    return text


def _rejected_hint(s: dict[str, Any]) -> str:
    j = s["jobs"]
    missing = j["rejected_by_reason"].get("no requested time (estimate <= 0)", 0)
    return " (--fill-missing-request runs them with their run time as request)" if missing else ""


def workers_line(s: dict[str, Any]) -> str | None:
    """What ``--workers N`` and ``--threads T`` did in this replay, in two lines (None with one worker and
    no helper thread): on the model and slurm-sim clocks, N modelled workers (a pass is charged the time
    of N workers testing side by side, so the schedule changes with N); on every clock, how many full
    passes ran on threads, and if none, why not; on the slurm-sim clock, how many later-start tests ran
    on the helper thread of ``--threads``."""
    c, p = s["config"], s["passes"]
    n = int(c.get("workers") or 1)
    clock = p.get("clock", c.get("clock", "free"))
    if clock == "slurm-sim":
        threads = _sim_threads_line(c, p)
        if n <= 1:
            return threads
    if n <= 1:
        return None
    if clock in ("model", "slurm-sim"):
        gain = (f"so a cycle tests up to {n}x the jobs within its budget" if p.get("budget_s")
                else "so a pass takes less simulated time")
        first = (f"workers      {n} modelled workers ({clock} clock): a pass is charged the time of {n} workers "
                 f"testing side by side,\n             {gain} and the schedule changes with N")
    elif clock == "free" and c.get("commit", "ordered") == "ordered":
        first = f"workers      {n}: the schedule is the same for any N (free clock, ordered commit)"
    else:
        first = f"workers      {n} ({clock} clock, {c.get('commit', 'ordered')} commit)"
    if clock == "slurm-sim":
        return first + ("\n" + threads if threads else "")
    full = p.get("full", 0)
    threaded = p.get("threaded_passes")
    tests = p.get("thread_tests_per_worker") or []
    if threaded is None and clock == "model":
        return first                     # (the model clock's passes do not count their threads' tests)
    if threaded is None:                 # (a summary without the count: from the threads' tests)
        threaded = -1 if any(tests) else 0
    if threaded:
        second = (f"{threaded:,} of {full:,} full passes" if threaded > 0 else "full passes") + " ran on threads"
        if any(tests):
            second += " (jobs tested per thread: " + ", ".join(f"{t:,}" for t in tests) + ")"
    elif p.get("searches_shared"):
        second = (f"0 of {full:,} full passes ran on threads; {p['searches_helped']:,} of "
                  f"{p['searches_shared']:,} {_shared_what(c)}")
    elif c.get("node_search") == "slurm":
        second = (f"0 of {full:,} full passes ran on threads (Slurm's node search runs a pass on one), and no "
                  "later start was tested ahead on a helper thread (trials found it no faster, jobs needed "
                  "few later starts, or no CPU to spare)")
    else:
        second = (f"0 of {full:,} full passes ran on threads (each predicted no faster there: too short, "
                  "or no CPU to spare)")
    return first + "\nthreads      " + second


def _sim_threads_line(c: dict[str, Any], p: dict[str, Any]) -> str | None:
    # the slurm-sim clock's real threads (--threads; the modelled workers are not threads): how many
    # later-start tests (or node searches) ran on the helper, and if none, why not
    t = int(p.get("sim_threads") or 1)
    shared, helped = p.get("searches_shared") or 0, p.get("searches_helped") or 0
    slurm = c.get("node_search") == "slurm"
    if t <= 1:
        if not slurm or int(c.get("workers") or 1) <= 1:
            return None
        return ("threads      1: a cycle's tests run on this thread (the workers are modelled; --threads 2 tests "
                "Slurm's later starts\n             ahead on a helper thread, the schedule the same)")
    head = f"threads      {t} (--threads; the schedule is the same for any T): "
    if shared:
        return head + f"{helped:,} of {shared:,} {_shared_what(c)}"
    return head + ("no test was offered to the helper (trials found it no faster, jobs needed few later starts, "
                   "\n             or no CPU to spare)" if slurm else "no node search was shared with the helper")
