"""How accurate start-time estimates were: the estimate a job got (e.g. right after it arrived)
against its actual start, as a user of ``squeue --start`` would judge it."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["estimate_accuracy", "SIZE_CLASSES"]

#: job size classes (units): label, lowest, highest
SIZE_CLASSES = (("1", 1, 1), ("2-8", 2, 8), ("9-64", 9, 64), ("65-512", 65, 512), (">512", 513, 1 << 62))


def _stats(err):
    if len(err) == 0:
        return {"jobs": 0, "median_abs_s": None, "p90_abs_s": None, "within_1h": None, "mean_s": None,
                "late": None}
    a = np.abs(err)
    return {"jobs": int(len(err)), "median_abs_s": float(np.median(a)), "p90_abs_s": float(np.percentile(a, 90)),
            "within_1h": float((a <= 3600).mean()), "mean_s": float(err.mean()),
            # the job started later than it was told
            "late": float((err < 0).mean())}


def estimate_accuracy(submit: ArrayLike, start: ArrayLike, estimate: ArrayLike, units: ArrayLike) -> dict:
    """Accuracy of ``estimate`` (a start time per job, -1: none) against ``start`` (-1: never
    started): median and p90 absolute error, share within an hour, mean signed error (estimate -
    start: negative = optimistic) and share started later than estimated -- over all jobs that
    started with an estimate, over those that waited (start > submit), and by size class."""
    submit, start, estimate, units = (np.asarray(x, dtype=np.int64) for x in (submit, start, estimate, units))
    ok = (start >= 0) & (estimate >= 0)
    err = (estimate - start)[ok]
    waited = (start > submit)[ok]
    out = {"all": _stats(err), "waited": _stats(err[waited]),
           "no_estimate": int(((start >= 0) & (estimate < 0)).sum()), "by_size": {}}
    for label, lo, hi in SIZE_CLASSES:
        sel = (units[ok] >= lo) & (units[ok] <= hi)
        if sel.any():
            out["by_size"][label] = _stats(err[sel & waited])
    return out
