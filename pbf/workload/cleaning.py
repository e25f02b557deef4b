"""Explicit, reported cleaning of a raw job table.

Defaults follow the PWA/pyss convention used by Gaussier et al. (SC'15): scheduling units are
``max(requested, allocated)`` processors; jobs with a non-positive run time or unit count are dropped;
a run time longer than the requested time is cut to the requested time. Nothing is changed silently:
every rule reports how many records it touched.

A Slurm accounting dump (a table :func:`pbf.workload.sacct.read_sacct` made: it has a ``sacct``
attribute) keeps its zero-length jobs by default: a job Slurm started and ended in the same second
was scheduled, and took its place in the queue and on the nodes; only the records without a run time
(never started, or not ended when the dump was taken) are dropped. ``drop_nonpositive_runtime=True``
(``--drop-zero-length``) drops the zero-length jobs too. The report carries the dump's ``sacct`` dict.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ..errors import ConfigError
from .jobs import JobTable

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    import numpy as np

__all__ = ["Cleaning", "CleaningReport", "clean"]

_UNITS_FROM = ("max", "requested", "allocated")
_OVERSIZE = ("reject", "drop")


@dataclass(frozen=True)
class Cleaning:
    """Cleaning rules, each a documented option.

    units_from: which SWF field gives a job's units: ``max`` of requested (8) and allocated (5)
        processors (pyss, RLScheduler), ``requested`` or ``allocated``.
    drop_missing_submit: drop records whose submit time is -1 (missing; archive logs such as
        LLNL-Thunder hold such placeholder records).
    drop_nonpositive_runtime: drop jobs whose run time is <= 0 (never ran: cancelled in the queue).
        ``None`` (the default): for an SWF trace, as ``True``; for a sacct dump, drop only the jobs
        without a run time (< 0: never started, or not ended at the dump) and keep the zero-length
        ones (run time 0), counted in the report (``zero_length_kept``). ``True``: drop every run
        time <= 0 (``--drop-zero-length``); ``False``: keep them all (``--keep-nonpositive-runtime``).
    drop_nonpositive_units: drop jobs asking for <= 0 units.
    clip_runtime_to_request: cut a run time longer than the requested time to the requested time
        (the job would have been killed at its limit).
    fill_missing_request: give a job with no requested time (-1 or 0) its run time as requested time
        (perfect estimate; what RLScheduler does on Lublin traces). ``None`` (the default): only when
        no job of the trace has a requested time (the field is absent, as in Lublin-model traces), and
        the report says so (``filled_because_none_given``); otherwise such jobs are kept, counted, and
        rejected by the engine with a reason (the pyss convention). ``True`` / ``False``: always /
        never.
    oversize: a job asking for more units than the cluster has is ``reject``-ed by the engine at
        submit (kept here, counted) or ``drop``-ped here.
    cluster_units: the cluster size for the oversize rule; default the header's MaxProcs, else MaxNodes.
    """
    units_from: str = "max"
    drop_missing_submit: bool = True
    drop_nonpositive_runtime: bool | None = None
    drop_nonpositive_units: bool = True
    clip_runtime_to_request: bool = True
    fill_missing_request: bool | None = None
    oversize: str = "reject"
    cluster_units: int | None = None

    def __post_init__(self):
        if self.units_from not in _UNITS_FROM:
            raise ConfigError(f"units_from must be one of {', '.join(_UNITS_FROM)}, got {self.units_from!r}")
        if self.oversize not in _OVERSIZE:
            raise ConfigError(f"oversize must be one of {', '.join(_OVERSIZE)}, got {self.oversize!r}")
        if self.cluster_units is not None and self.cluster_units <= 0:
            raise ConfigError(f"cluster_units must be > 0, got {self.cluster_units}")

    @classmethod
    def none(cls) -> Cleaning:
        """No rule applied (units = max(requested, allocated) is still computed)."""
        return cls(drop_missing_submit=False, drop_nonpositive_runtime=False, drop_nonpositive_units=False,
                   clip_runtime_to_request=False, fill_missing_request=False)


@dataclass
class CleaningReport:
    """How many records each rule touched, in the order the rules run."""
    records_read: int = 0
    bad_lines_skipped: int = 0
    first_bad_lines: tuple = ()
    dropped_missing_submit: int = 0
    dropped_nonpositive_runtime: int = 0
    zero_length_kept: int = 0
    zero_length_dropped: int = 0
    dropped_nonpositive_units: int = 0
    filled_missing_request: int = 0
    missing_request: int = 0
    filled_because_none_given: bool = False
    clipped_runtime_to_request: int = 0
    oversize: int = 0
    oversize_dropped: int = 0
    cluster_units: int | None = None
    jobs: int = 0
    sorted_by_submit: bool = False
    #: a sacct dump's account of its columns and records (:func:`pbf.workload.sacct.describe_sacct`)
    sacct: dict | None = None

    def as_dict(self) -> dict[str, int]:
        d = asdict(self)
        d["first_bad_lines"] = list(self.first_bad_lines)
        return d


def clean(table: JobTable, cleaning: Cleaning = Cleaning(),
          report: CleaningReport | None = None, *, _reuse: bool = False) -> tuple[JobTable, CleaningReport]:
    """Apply ``cleaning`` to a raw :class:`JobTable`; returns ``(table, report)`` (input unchanged)."""
    # (``_reuse``: the caller made ``table`` and drops it -- a reader's block, whose columns are distinct
    # arrays: the rows kept are moved to the front of its own columns instead of copied to new ones)
    import numpy as np
    report = report if report is not None else CleaningReport()
    report.records_read = report.records_read or len(table)
    # columns are shared with the input until a rule changes one (np.where makes a new array), so a
    # large table is not held three times over
    cols = dict(table.columns)

    if cleaning.units_from == "max":
        if not _reuse:              # (a reader's block has them already: JobTable made them so)
            cols["units"] = np.maximum(cols["req_procs"], cols["alloc_procs"])
    elif cleaning.units_from == "requested":
        cols["units"] = cols["req_procs"].copy()
    else:
        cols["units"] = cols["alloc_procs"].copy()

    sacct = getattr(table, "__dict__", {}).get("sacct")
    if sacct is not None:
        report.sacct = sacct
    keep = np.ones(len(table), dtype=bool)
    if cleaning.drop_missing_submit:
        bad = cols["submit"] < 0
        report.dropped_missing_submit = int(bad.sum())
        keep &= ~bad
    drop_zero = cleaning.drop_nonpositive_runtime
    if drop_zero is None:
        drop_zero = sacct is None            # (a sacct dump keeps its zero-length jobs)
    if cleaning.drop_nonpositive_runtime is not False:
        bad = keep & ((cols["run"] <= 0) if drop_zero else (cols["run"] < 0))
        report.dropped_nonpositive_runtime = int(bad.sum())
        keep &= ~bad
    if sacct is not None:
        zero = cols["run"] == 0
        report.zero_length_dropped = int((zero & ~keep).sum()) if drop_zero else 0
        report.zero_length_kept = int((zero & keep).sum())
    if cleaning.drop_nonpositive_units:
        bad = keep & (cols["units"] <= 0)
        report.dropped_nonpositive_units = int(bad.sum())
        keep &= ~bad

    missing = keep & (cols["req_time"] <= 0)
    fill = cleaning.fill_missing_request
    if fill is None:
        fill = bool(missing.any()) and bool((missing == keep).all())
        report.filled_because_none_given = fill
    if fill:
        report.filled_missing_request = int(missing.sum())
        cols["req_time"] = np.where(missing, cols["run"], cols["req_time"])
    else:
        report.missing_request = int(missing.sum())

    if cleaning.clip_runtime_to_request:
        over = keep & (cols["req_time"] > 0) & (cols["run"] > cols["req_time"])
        report.clipped_runtime_to_request = int(over.sum())
        cols["run"] = np.where(over, cols["req_time"], cols["run"])

    size = cleaning.cluster_units or table.header.cluster_units()
    report.cluster_units = size
    if size is not None:
        big = keep & (cols["units"] > size)
        report.oversize = int(big.sum())
        if cleaning.oversize == "drop":
            report.oversize_dropped = report.oversize
            keep &= ~big

    if not keep.all():
        cols = _kept(cols, keep, table.columns) if _reuse else {k: v[keep] for k, v in cols.items()}
    out = JobTable(cols, table.header, table.source, report)
    report.jobs = len(out)
    return out, report


def _kept(cols: dict, keep: np.ndarray, raw: dict) -> dict:
    """``{k: v[keep]}``, the raw table's own columns (each a distinct array) compacted in place: a fresh
    process pays a page fault for every 4 KiB of new memory, and the kept rows of 19 columns of a
    large log are megabytes. The rows go through one scratch array, used again for every column."""
    import numpy as np
    rows = np.flatnonzero(keep)
    n = len(rows)
    own = {id(v) for v in raw.values()}
    if len(own) != len(raw):            # (two names for one array: copies, as for any table)
        return {k: v[keep] for k, v in cols.items()}
    scratch = np.empty(n, dtype=np.int64)
    out = {}
    for k, v in cols.items():
        if id(v) not in own and v.base is not None:
            out[k] = v[keep]             # (a view of something else's: not ours to overwrite)
            continue
        w = v.view(np.int64) if v.dtype == np.float64 else v
        np.take(w, rows, out=scratch, mode="clip")    # (the rows are in range: "clip" needs no buffer)
        w[:n] = scratch
        out[k] = v[:n]
    return out
