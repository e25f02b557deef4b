"""A site's own backfill cost, from saved ``sdiag`` outputs: read the backfill statistics of one or more
snapshots and fit the Slurm simulator's cost model ``pref x n^pow`` (a cycle of n tried jobs costs
that many microseconds) to them, for ``ReplayConfig(cost_per_test_us=pref, cost_power=pow)`` and
``pbf replay --cost-per-test PREF --cost-power POW``.

The lines read are those of sdiag's "Backfilling stats" block (Slurm 17.02 to 24.x print them alike):
``Total cycles``, ``Last cycle``, ``Max cycle``, ``Mean cycle`` (microseconds, the cycle's time without
its sleeps), ``Last depth cycle``, ``Last depth cycle (try sched)``, ``Depth Mean``, ``Depth Mean (try
depth)``, ``Last queue length``, ``Queue length mean`` and the backfilled-job totals. A file may hold
many snapshots (``while sleep 60; do sdiag; done >> FILE``): each begins at a line "sdiag output at".
Snapshots taken before any backfill cycle ran (``Total cycles: 0``; sdiag then leaves the mean lines
out) are left out and counted. A snapshot taken while a cycle ran (sdiag heads its block "Backfilling
stats (WARNING: data obtained in the middle of backfilling execution.)") counts the tried jobs of the
cycle under way beside the time of the cycle before it: its last-cycle point is left out of the fit
(its mean point, which changes only when a cycle ends, is kept). Every number is a whole number of
ASCII digits up to 2**63 - 1; an error names the file, the line, the sdiag label and the value.
"""
from __future__ import annotations

import io
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass

from .bounded import INT64_MAX, MAX_TIME, parse_whole, where
from .errors import ConfigError

__all__ = ["SdiagSnapshot", "SdiagSnapshots", "CostFit", "SdiagError", "read_sdiag", "fit_cost"]


class SdiagError(ConfigError):
    """A saved sdiag output that cannot be read: the file, line, field and value are named."""


#: sdiag's backfill line -> the snapshot field it fills (required: a snapshot without them is refused)
_FIELDS = {
    "Total backfilled jobs (since last slurm start)": "backfilled_total",
    "Total backfilled jobs (since last stats cycle start)": "backfilled_since_reset",
    "Total cycles": "cycles",
    "Last cycle": "last_cycle_us",
    "Max cycle": "max_cycle_us",
    "Mean cycle": "mean_cycle_us",
    "Last depth cycle": "last_depth",
    "Last depth cycle (try sched)": "last_depth_try",
    "Depth Mean": "depth_mean",
    "Depth Mean (try depth)": "depth_mean_try",
    "Last queue length": "last_queue",
    "Queue length mean": "queue_mean",
}
_REQUIRED = ("cycles", "last_cycle_us", "mean_cycle_us", "last_depth_try", "depth_mean_try")
#: the lines sdiag prints only once a backfill cycle has run (their means divide by Total cycles)
_AFTER_A_CYCLE = ("mean_cycle_us", "depth_mean_try", "depth_mean", "queue_mean")
#: counters: Slurm keeps them in 32 or 64 bits; pbf takes them up to 2**63 - 1
_MAX_VALUE = INT64_MAX
#: the fitted cost pbf's replay takes: a power in (0, 4], a cost per tried job up to MAX_TIME microseconds
_MAX_POWER = 4.0
_MAX_PREF_US = float(MAX_TIME)


@dataclass(frozen=True)
class SdiagSnapshot:
    """The backfill statistics of one sdiag output (times in microseconds; a missing optional line: None)."""
    source: str
    line: int
    cycles: int
    last_cycle_us: int
    mean_cycle_us: int
    last_depth_try: int
    depth_mean_try: int
    max_cycle_us: int | None = None
    last_depth: int | None = None
    depth_mean: int | None = None
    last_queue: int | None = None
    queue_mean: int | None = None
    backfilled_total: int | None = None
    backfilled_since_reset: int | None = None
    #: taken while a cycle ran: its last depth is the running cycle's, its last cycle time the one before
    mid_cycle: bool = False


@dataclass(frozen=True)
class CostFit:
    """``pref x n^pow`` microseconds for a cycle of n tried jobs, fitted by least squares on the logs of
    the (tried jobs, cycle time) points; ``rel_error``: the fit's root-mean-square relative error over
    them. With one distinct depth the power is not measurable: 1, and ``pref`` the mean time per job."""
    pref_us: float
    power: float
    points: tuple
    rel_error: float
    snapshots: int
    #: the power's standard error (least squares on the logs; None when fewer than 3 distinct depths)
    power_se: float | None = None
    #: last-cycle points left out because their snapshot was taken mid-cycle
    mid_cycle_left_out: int = 0

    def cycle_us(self, n: float) -> float:
        """The fitted cost of a cycle of n tried jobs."""
        return self.pref_us * n ** self.power

    def settings(self) -> dict:
        """The ReplayConfig settings that charge this cost."""
        return {"cost_per_test_us": round(self.pref_us, 3), "cost_power": round(self.power, 4)}


class SdiagSnapshots(list):
    """The snapshots :func:`read_sdiag` read (a list of :class:`SdiagSnapshot`), and those it left out:
    ``skipped`` snapshots taken before any backfill cycle had run (``Total cycles: 0``; sdiag then omits
    its mean lines, and there is nothing to measure), ``skipped_at`` the (file, line) of the first few."""
    skipped: int = 0
    skipped_at: tuple = ()


_SHOW_SKIPPED = 5


def read_sdiag(*sources: str | os.PathLike) -> SdiagSnapshots:
    """The snapshots of saved sdiag outputs: each source is a path or a text (a string holding a
    newline). A file may hold a series of snapshots (``while sleep 60; do sdiag; done >> FILE``); those
    taken before any backfill cycle ran are left out and counted (:class:`SdiagSnapshots`). Raises
    :class:`SdiagError` naming the file, line, field and value of what cannot be read, and when no
    snapshot is left to fit."""
    snapshots = SdiagSnapshots()
    skipped, files_without = [], []
    for source in sources:
        if isinstance(source, (str, os.PathLike)) and "\n" not in os.fspath(source):
            name = os.fspath(source)
            try:
                f = open(name, encoding="utf-8", errors="replace")
            except OSError as e:
                raise SdiagError(f"{name}: cannot read it ({e.strerror or e})") from None
            except ValueError as e:        # (a path with a NUL byte)
                raise SdiagError(f"{name!r}: cannot read it ({e})") from None
            with f:
                try:
                    found, skip = _parse(name, f)
                except OSError as e:
                    raise SdiagError(f"{name}: cannot read it ({e.strerror or e})") from None
        else:
            name = "<text>"
            found, skip = _parse(name, io.StringIO(str(source)))
        if not found and not skip:
            raise SdiagError(f"{name}: no sdiag backfill statistics (a 'Backfilling stats' block with "
                             f"'Total cycles', 'Last cycle', 'Mean cycle' and the depth lines)")
        if not found:
            files_without.append(name)
        snapshots.extend(found)
        skipped.extend(skip)
    snapshots.skipped = len(skipped)
    snapshots.skipped_at = tuple(skipped[:_SHOW_SKIPPED])
    if not snapshots:
        first = skipped[0]
        raise SdiagError(f"{', '.join(files_without)}: all {len(skipped):,} snapshot(s) were taken before any "
                         f"backfill cycle ran ('Total cycles: 0', the first at {first[0]}, line {first[1]}): "
                         "nothing to fit")
    return snapshots


def _parse(name, lines):
    """The snapshots of one output (``lines``: an iterable of its lines) and the (name, line) of those
    taken before any backfill cycle."""
    snapshots, skipped = [], []
    current, start, block, header, in_block = None, 0, 0, None, False

    def close():
        if current is None:
            return
        if current.get("cycles") == 0:
            skipped.append((name, start))        # no cycle yet: sdiag leaves the means out
            return
        missing = [label for label, field in _FIELDS.items() if field in _REQUIRED and field not in current]
        if missing:
            raise SdiagError(f"{name}, line {block}: the backfill statistics starting here (the snapshot of "
                             f"line {start}) lack {', '.join(repr(x) for x in missing)}")
        snapshots.append(SdiagSnapshot(source=name, line=start, **current))

    for no, raw in enumerate(lines, 1):
        raw = raw.rstrip("\r\n")
        line = raw.strip()
        if line.startswith("sdiag output at"):
            close()
            current, header, in_block = None, no, False
        elif line.startswith("Backfilling stats"):
            close()                          # (a second block without a header line: a new snapshot)
            current, start, block, header, in_block = {}, header or no, no, None, True
            if "middle of backfilling" in line:
                current["mid_cycle"] = True
        elif in_block and raw[:1] not in ("", " ", "\t"):
            in_block = False                 # the block ends at the next heading
        elif in_block:
            label, colon, rest = line.partition(":")
            label = " ".join(label.split())
            if not colon or label not in _FIELDS:
                continue
            field = _FIELDS[label]
            words = rest.split(None, 1)
            value = words[0] if words else ""
            unit = "microseconds" if field.endswith("_us") else ("cycles" if field == "cycles" else "jobs")
            try:
                number = parse_whole(value, 0, _MAX_VALUE)
            except ValueError:
                raise SdiagError(where(name, no, label, value, f"a whole number of {unit} from 0 to "
                                                               f"{_MAX_VALUE:,}")) from None
            current[field] = number
    close()
    return snapshots, skipped


def fit_cost(snapshots: Iterable[SdiagSnapshot]) -> CostFit:
    """Fit ``pref x n^pow`` to the snapshots' (tried jobs, cycle time) points: each snapshot's last
    cycle and its mean cycle (the mean over its Total cycles). Points with no job tried or no time are
    left out; at least one must remain. A fit pbf's replay cannot charge (a power above 4, a cost per
    tried job above 2**40 microseconds) is refused with the points it came from."""
    snapshots = list(snapshots)
    points = set()
    mid = 0
    for s in snapshots:
        if s.last_depth_try > 0 and s.last_cycle_us > 0:
            if s.mid_cycle:
                mid += 1                     # (the running cycle's depth beside the last cycle's time)
            else:
                points.add((s.last_depth_try, s.last_cycle_us))
        if s.cycles > 0 and s.depth_mean_try > 0 and s.mean_cycle_us > 0:
            points.add((s.depth_mean_try, s.mean_cycle_us))
    points = tuple(sorted(points))
    if not points:
        raise SdiagError("no snapshot has a backfill cycle that tried a job and took time: nothing to fit")
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    constant = len(set(xs)) == 1            # (one depth, or depths too close for a float to tell apart)
    if not constant:
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        power = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        if not math.isfinite(power) or power <= 0:
            # (cycles that get no dearer with depth: a constant cost per job is the closest model pbf has)
            constant = True
        elif power > _MAX_POWER:
            raise SdiagError(f"the snapshots' cycle times grow as n^{power:.3g} with the n jobs tried, steeper "
                             f"than pbf's cost model takes (n^{_MAX_POWER:g} at most); (tried jobs, microseconds) "
                             f"points: {_show(points)}")
        else:
            pref = math.exp(my - power * mx)
    if constant:
        power = 1.0
        pref = sum(t for _, t in points) / sum(n for n, _ in points)
    if not 0 < pref <= _MAX_PREF_US:
        raise SdiagError(f"the fitted cost is {pref:.4g} microseconds a tried job, beyond the "
                         f"{_MAX_PREF_US:,.0f} pbf's cost model takes; (tried jobs, microseconds) points: "
                         f"{_show(points)}")
    rel = math.sqrt(sum((pref * n ** power / t - 1) ** 2 for n, t in points) / len(points))
    se = None
    if not constant and len(set(xs)) >= 3:
        sxx = sum((x - mx) ** 2 for x in xs)
        ssr = sum((y - (math.log(pref) + power * x)) ** 2 for x, y in zip(xs, ys))
        se = math.sqrt(ssr / (len(xs) - 2) / sxx)
    return CostFit(pref_us=pref, power=power, points=points, rel_error=rel, snapshots=len(snapshots),
                   power_se=se, mid_cycle_left_out=mid)


def _show(points, most=6):
    shown = ", ".join(f"({n:,}, {t:,})" for n, t in points[:most])
    return shown + (f" and {len(points) - most:,} more" if len(points) > most else "")
