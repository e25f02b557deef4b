"""What a trace holds: the summary ``pbf trace info`` prints."""
from __future__ import annotations

import numpy as np

from .jobs import JobTable

__all__ = ["trace_summary", "format_summary"]

_QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.9, 0.95)


def _q(values):
    if len(values) == 0:
        return {}
    return {f"p{int(q * 100)}": float(v) for q, v in zip(_QUANTILES, np.quantile(values, _QUANTILES))}


def trace_summary(table: JobTable, units: int | None = None, top_users: int = 10) -> dict:
    """A JSON-ready dict describing ``table``.

    ``units``: the cluster size for the offered load (default: from the header or the cleaning
    report). Offered load = sum(units x run) / (cluster units x span), span = last - first submit.
    """
    n = len(table)
    cap = units or (table.report.cluster_units if table.report else None) or table.header.cluster_units()
    out = {"source": table.source, "jobs": n, "cluster_units": cap, "header": table.header.size_info()}
    notes = table.header.notes()
    if notes:
        out["header"]["notes"] = notes
    if table.report is not None:
        out["cleaning"] = table.report.as_dict()
    if n == 0:
        return out
    submit, run, req, size = table.submit, table.run, table.req_time, table.units
    first, last = int(submit.min()), int(submit.max())
    span = last - first
    work = float((size * np.maximum(run, 0)).sum())
    out["time"] = {"first_submit": first, "last_submit": last, "span_s": span,
                   "span_days": span / 86400, "unix_start_time": table.header.unix_start_time}
    out["offered_load"] = work / (cap * span) if cap and span > 0 else None
    gaps = np.diff(submit)
    out["arrivals"] = {"mean_interarrival_s": float(gaps.mean()) if n > 1 else None,
                       "same_second_share": float((gaps == 0).mean()) if n > 1 else None}
    out["units"] = {"mean": float(size.mean()), "max": int(size.max()),
                    "serial_share": float((size == 1).mean()), **_q(size)}
    out["run_time_s"] = {"mean": float(run.mean()), **_q(run)}
    has_req = req > 0
    acc = run[has_req] / req[has_req]
    out["request_accuracy"] = {"jobs_with_request": int(has_req.sum()),
                               "mean": float(acc.mean()) if len(acc) else None, **_q(acc)}
    users, counts = np.unique(table.user, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:top_users]
    out["users"] = {"count": int(len(users)) if not (len(users) == 1 and users[0] == -1) else 0,
                    "top": [{"user": int(users[i]), "jobs": int(counts[i]),
                             "share": float(counts[i] / n)} for i in order]}
    return out


def format_summary(s: dict) -> str:
    """A human-readable rendering of :func:`trace_summary`'s dict."""
    lines = [f"trace            {s['source']}", f"jobs             {s['jobs']:,}",
             f"cluster units    {s['cluster_units']}"]
    h = s.get("header") or {}
    if h.get("from"):
        said = {"MaxProcs": h["max_procs"], "MaxNodes": h["max_nodes"]}
        words = [f"{key} {value}" for key, value in said.items() if value is not None]
        lines.append(f"header size      {', '.join(words)} (the size is {h['from']})")
    for key, note in (h.get("notes") or {}).items():
        lines.append(f"header note      {key}: {note}")
    if "time" in s:
        t = s["time"]
        lines.append(f"time span        {t['span_s']:,} s ({t['span_days']:.2f} days), "
                     f"submits {t['first_submit']}..{t['last_submit']}")
        load = s["offered_load"]
        lines.append(f"offered load     {load:.3f}" if load is not None else "offered load     n/a")
        a = s["arrivals"]
        if a["mean_interarrival_s"] is not None:
            lines.append(f"inter-arrival    mean {a['mean_interarrival_s']:.1f} s, "
                         f"{a['same_second_share']:.1%} in the same second as the previous job")
        u = s["units"]
        lines.append(f"units per job    mean {u['mean']:.2f}, median {u['p50']:g}, max {u['max']}, "
                     f"serial {u['serial_share']:.1%}")
        r = s["run_time_s"]
        lines.append(f"run time (s)     mean {r['mean']:,.0f}; p5 {r['p5']:,.0f} p25 {r['p25']:,.0f} "
                     f"p50 {r['p50']:,.0f} p75 {r['p75']:,.0f} p95 {r['p95']:,.0f}")
        acc = s["request_accuracy"]
        if acc["mean"] is not None:
            lines.append(f"run/request      mean {acc['mean']:.3f}; p5 {acc['p5']:.4f} p25 {acc['p25']:.4f} "
                         f"p50 {acc['p50']:.4f} p75 {acc['p75']:.3f} p90 {acc['p90']:.3f} "
                         f"({acc['jobs_with_request']:,} jobs with a request)")
        users = s["users"]
        top = ", ".join(f"{x['user']}: {x['jobs']:,}" for x in users["top"][:5])
        lines.append(f"users            {users['count']:,}; most active {top}")
    if "cleaning" in s:
        c = s["cleaning"]
        lines.append("cleaning         " + ", ".join(
            f"{k.replace('_', ' ')} {v}" for k, v in c.items()
            if k not in ("jobs", "cluster_units", "first_bad_lines", "sacct") and v not in (0, False, None)))
        if c["bad_lines_skipped"]:
            lines.append(f"bad lines        {c['bad_lines_skipped']} skipped, first at lines "
                         + ", ".join(map(str, c["first_bad_lines"])))
        if c.get("sacct"):          # a sacct dump: every record kind and column, modelled or not
            from .sacct import format_sacct
            lines.append(format_sacct(c["sacct"], c, indent=17))
    return "\n".join(lines)
