"""Compress or stretch a trace's submit times into a window."""
from __future__ import annotations

import numpy as np

from ..bounded import MAX_SECONDS, check_int
from ..errors import ConfigError
from .jobs import JobTable

__all__ = ["rescale", "RESCALE_MODES"]

RESCALE_MODES = ("linear", "pack")


def rescale(table: JobTable, window: int, mode: str = "linear") -> JobTable:
    """A copy of ``table`` with submit times mapped into ``[first submit, first submit + window)``.

    ``linear`` scales every gap by the same factor (bursts stay bursts, the daily cycle is compressed
    with them); ``pack`` spaces jobs evenly, ``window / n`` apart in submit order, which is what the
    Parallel Backfill authors' trace tool does ("pack,N"). Job order never changes.
    """
    if mode not in RESCALE_MODES:
        raise ConfigError(f"mode must be one of {', '.join(RESCALE_MODES)}, got {mode!r}")
    check_int("window", window, 1, MAX_SECONDS)
    n = len(table)
    cols = {k: v.copy() for k, v in table.columns.items()}
    if n:
        submit = table.submit
        s0 = int(submit.min())
        if mode == "pack":
            new = s0 + (np.arange(n, dtype=np.int64) * window) // n
            order = np.argsort(submit, kind="stable")
            cols["submit"][order] = new
        else:
            span = int(submit.max()) - s0
            if span == 0:
                cols["submit"] = np.full(n, s0, dtype=np.int64)
            else:
                # integer arithmetic: exact and monotone, so sorted input stays sorted
                scaled = ((submit - s0).astype(object) * (window - 1)) // span
                cols["submit"] = s0 + np.asarray(scaled, dtype=np.int64)
    out = JobTable(cols, table.header, table.source, table.report)
    return out
