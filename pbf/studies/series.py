"""Time series of a replay's jobs table: queue length, utilisation and wait, in hourly buckets."""
from __future__ import annotations

import numpy as np

from ..codes import JobState

__all__ = ["time_series"]


def time_series(jobs: dict, units: int, bucket_s: int = 3600) -> dict:
    """Hourly series from a :class:`~pbf.ReplayResult`'s ``jobs`` columns: ``hour`` (from the first
    submission), ``queue`` (jobs waiting at the bucket's start), ``utilisation`` (units busy / units,
    averaged over the bucket) and ``awt_h`` (mean wait of the jobs submitted in the bucket, NaN when
    none). Lists, ready for JSON."""
    done = jobs["state"] == JobState.JS_DONE
    submit, start, end = (np.asarray(jobs[k])[done].astype(np.int64) for k in ("submit", "start", "end"))
    size = np.asarray(jobs["units"])[done].astype(np.int64)
    if len(submit) == 0:
        return {"hour": [], "queue": [], "utilisation": [], "awt_h": []}
    t0 = int(submit.min())
    n = int((end.max() - t0) // bucket_s) + 1
    edges = t0 + bucket_s * np.arange(n + 1)
    queue = np.searchsorted(np.sort(submit), edges[:-1], side="right") - np.searchsorted(np.sort(start), edges[:-1],
                                                                                         side="right")
    # busy unit-seconds up to each edge: sum over jobs of k * (E - s)+ minus k * (E - e)+, from
    # prefix sums over the starts and the ends sorted
    integral = _ramp_sum(start, size, edges) - _ramp_sum(end, size, edges)
    busy = np.diff(integral)
    wait = (start - submit).astype(np.float64)
    sb = (submit - t0) // bucket_s
    count = np.bincount(sb, minlength=n)[:n]
    total = np.bincount(sb, weights=wait, minlength=n)[:n]
    with np.errstate(invalid="ignore", divide="ignore"):
        awt = np.where(count > 0, total / np.maximum(count, 1) / 3600.0, np.nan)
    return {"hour": list(range(n)), "queue": [int(q) for q in queue],
            "utilisation": [float(x) for x in busy / (units * bucket_s)],
            "awt_h": [None if np.isnan(x) else float(x) for x in awt]}


def _ramp_sum(times, weights, edges):
    """sum over i of weights[i] * max(0, E - times[i]) for each E in edges."""
    order = np.argsort(times, kind="stable")
    t, w = times[order].astype(np.float64), weights[order].astype(np.float64)
    cw, ctw = np.concatenate(([0.0], np.cumsum(w))), np.concatenate(([0.0], np.cumsum(t * w)))
    idx = np.searchsorted(t, edges, side="right")
    return cw[idx] * edges - ctw[idx]
