"""A site's own backfill cost, from saved ``sdiag`` outputs: read the backfill statistics of one or more
snapshots and fit the Slurm simulator's cost model ``pref x n^pow`` (a cycle of n tried jobs costs
that many microseconds) to them, for ``ReplayConfig(cost_per_test_us=pref, cost_power=pow)`` and
``pbf replay --cost-per-test PREF --cost-power POW``.

The lines read are those of sdiag's "Backfilling stats" block (Slurm 17.02 to 24.x print them alike):
``Total cycles``, ``Last cycle``, ``Max cycle``, ``Mean cycle`` (microseconds, the cycle's time without
its sleeps), ``Last depth cycle``, ``Last depth cycle (try sched)``, ``Depth Mean``, ``Depth Mean (try
depth)``, ``Last queue length``, ``Queue length mean`` and the backfilled-job totals. A file may hold
many snapshots (``sdiag`` run every few minutes into one file): each begins at a line "sdiag output at".
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from .errors import ConfigError

__all__ = ["SdiagSnapshot", "CostFit", "SdiagError", "read_sdiag", "fit_cost"]


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
_LINE = re.compile(r"^\s*([A-Za-z][A-Za-z ()]*?)\s*:\s*(\S+)")


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

    def cycle_us(self, n: float) -> float:
        """The fitted cost of a cycle of n tried jobs."""
        return self.pref_us * n ** self.power

    def settings(self) -> dict:
        """The ReplayConfig settings that charge this cost."""
        return {"cost_per_test_us": round(self.pref_us, 3), "cost_power": round(self.power, 4)}


def read_sdiag(*sources: str | os.PathLike) -> list[SdiagSnapshot]:
    """The snapshots of saved sdiag outputs: each source is a path or a text (a string holding a
    newline). Raises :class:`SdiagError` naming the file, line, field and value of what cannot be read."""
    snapshots = []
    for source in sources:
        if isinstance(source, (str, os.PathLike)) and "\n" not in os.fspath(source):
            name = os.fspath(source)
            try:
                with open(name, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError as e:
                raise SdiagError(f"{name}: cannot read it ({e.strerror})") from None
        else:
            name, text = "<text>", str(source)
        found = _parse(name, text)
        if not found:
            raise SdiagError(f"{name}: no sdiag backfill statistics (a 'Backfilling stats' block with "
                             f"'Total cycles', 'Last cycle', 'Mean cycle' and the depth lines)")
        snapshots.extend(found)
    return snapshots


def _parse(name, text):
    snapshots = []
    current, start, header, in_block = None, 0, None, False

    def close():
        if current is None:
            return
        missing = [label for label, field in _FIELDS.items() if field in _REQUIRED and field not in current]
        if missing:
            raise SdiagError(f"{name}:{start}: the backfill statistics starting here lack "
                             f"{', '.join(repr(x) for x in missing)}")
        snapshots.append(SdiagSnapshot(source=name, line=start, **current))

    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("sdiag output at"):
            close()
            current, header, in_block = None, no, False
        elif line.startswith("Backfilling stats"):
            close()                          # (a second block without a header line: a new snapshot)
            current, start, header, in_block = {}, header or no, None, True
        elif in_block and raw[:1] not in ("", " ", "\t"):
            in_block = False                 # the block ends at the next heading
        elif in_block:
            m = _LINE.match(line)
            if not m or m.group(1) not in _FIELDS:
                continue
            label, value = m.group(1), m.group(2)
            field = _FIELDS[label]
            try:
                number = int(value)
            except ValueError:
                unit = " of microseconds" if field.endswith("_us") else ""
                raise SdiagError(f"{name}:{no}: {label!r} is {value!r}; expected a whole number{unit}") from None
            if number < 0:
                raise SdiagError(f"{name}:{no}: {label!r} is {number}; expected a number >= 0")
            current[field] = number
    close()
    return snapshots


def fit_cost(snapshots: Iterable[SdiagSnapshot]) -> CostFit:
    """Fit ``pref x n^pow`` to the snapshots' (tried jobs, cycle time) points: each snapshot's last
    cycle and its mean cycle (the mean over its Total cycles). Points with no job tried or no time are
    left out; at least one must remain."""
    points = set()
    for s in snapshots:
        if s.last_depth_try > 0 and s.last_cycle_us > 0:
            points.add((s.last_depth_try, s.last_cycle_us))
        if s.cycles > 0 and s.depth_mean_try > 0 and s.mean_cycle_us > 0:
            points.add((s.depth_mean_try, s.mean_cycle_us))
    points = tuple(sorted(points))
    if not points:
        raise SdiagError("no snapshot has a backfill cycle that tried a job and took time: nothing to fit")
    xs = [math.log(n) for n, _ in points]
    ys = [math.log(t) for _, t in points]
    if len({n for n, _ in points}) == 1:
        power = 1.0
        pref = sum(t for _, t in points) / sum(n for n, _ in points)
    else:
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        power = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        pref = math.exp(my - power * mx)
        if power <= 0:
            # (cycles that get no dearer with depth: a constant cost per job is the closest model pbf has)
            power = 1.0
            pref = sum(t for _, t in points) / sum(n for n, _ in points)
    rel = math.sqrt(sum((pref * n ** power / t - 1) ** 2 for n, t in points) / len(points))
    return CostFit(pref_us=pref, power=power, points=points, rel_error=rel, snapshots=len(snapshots))
