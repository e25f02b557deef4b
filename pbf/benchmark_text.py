"""The text ``pbf bench`` prints (:func:`format_rows`): every ratio with its direction, ratios the
trials cannot tell from 1 said to be within noise, one answer per pass scenario to "do N workers
help?", lines under 120 characters."""
from __future__ import annotations

import os
import statistics
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .host import MachineLoad

__all__ = ["format_rows", "within_noise", "ratio_text", "wrap_parts"]


def within_noise(base: Sequence[float], other: Sequence[float], margin: float = 0.03) -> bool:
    """Whether ``base`` and ``other`` (times of interleaved trials, paired) cannot be told apart: the
    trials disagree on which is faster, there are fewer than 3 of them, or the medians differ by less
    than ``margin`` (3 %)."""
    ratios = [b / o for b, o in zip(base, other) if o > 0]
    if len(ratios) < 3 or min(ratios) <= 1.0 <= max(ratios):
        return True
    return abs(statistics.median(base) / statistics.median(other) - 1.0) < margin


def ratio_text(ratio: float, noisy: bool, than: str = "") -> str:
    """A ratio of times (the other's over this one's: above 1 is faster) with its direction said, or
    ``within noise``: ``1.41x faster``, ``0.62x, slower``, ``0.97x, within noise``."""
    if noisy:
        return f"{ratio:.2f}x, within noise"
    return f"{ratio:.2f}x faster{than}" if ratio > 1 else f"{ratio:.2f}x, slower{than}"


def _fmt_time(s):
    return f"{s * 1e6:9.1f} us" if s < 1e-3 else f"{s * 1e3:9.2f} ms" if s < 1 else f"{s:9.3f} s "


def _workers_answer(r: Mapping[str, Any], n: str) -> str:
    """Does ``n`` workers help on this pass? What a replay would do (the automatic choice), and what
    forcing every test onto the threads gives, each with its direction or ``within noise``."""
    forced = ratio_text(r[f"speedup_{n}_workers"], r.get(f"speedup_{n}_workers_within_noise", True))
    if f"auto_{n}_speedup" not in r:
        return f"{n} workers, every test on threads: {forced} than 1 worker"
    taken = r[f"auto_{n}_parallel_trials"]
    if not taken:
        return (f"{n} workers: a replay keeps this pass on one thread (predicted no faster); "
                f"forced onto threads {forced}")
    auto = ratio_text(r[f"auto_{n}_speedup"], r.get(f"auto_{n}_within_noise", True))
    return f"{n} workers: {auto} (threads taken in {taken}/{r['trials']} trials); forced onto threads {forced}"


def wrap_parts(parts: Sequence[str], indent: str = "    ", width: int = 119) -> list[str]:
    """``parts`` joined by '; ' into lines of at most ``width`` characters."""
    lines, line = [], ""
    for part in parts:
        if line and len(indent) + len(line) + 2 + len(part) > width:
            lines.append(indent + line)
            line = part
        else:
            line = f"{line}; {part}" if line else part
    if line:
        lines.append(indent + line)
    return lines


def format_rows(rows: Sequence[Mapping[str, Any]], load: MachineLoad | None = None) -> str:
    """A readable table of benchmark rows: a heading line per row, its figures below, every ratio with
    its direction (or ``within noise``), lines under 120 characters."""
    lines = [f"pbf bench on {os.cpu_count()} cores; medians (and best) of interleaved trials"]
    if load is not None:
        lines.append(f"other processes used {load.other_cores:.2f} cores on average during the run ("
                     + ("clean" if load.other_cores < 0.1 else "NOT clean: compare ratios, not absolute times") + ")")
    for sl in ("bitmap", "pass", "large", "growth", "replay", "rl"):
        sub = [r for r in rows if r["slice"] == sl]
        if not sub:
            continue
        lines.append(f"\n[{sl}]")
        for r in sub:
            if "note" in r:
                lines += wrap_parts(r["note"].split("; "), indent="  ")
                continue
            if "slope" in r:
                lines.append(f"  {r['name']:26s} {r['params']:44s} slope {r['slope']:.2f} "
                             f"(upper half {r['slope_upper_half']:.2f})"[:119])
                continue
            if sl == "bitmap":
                lines.append(f"  {r['name']:16s} {r['params']:14s} median {_fmt_time(r['median_s'])} "
                             f"best {_fmt_time(r['best_s'])}")
                continue
            lines.append(f"  {r['name']}: {r['params']}"[:119])
            parts = [f"median {_fmt_time(r['median_s']).strip()}, best {_fmt_time(r['best_s']).strip()} "
                     f"({r['trials']} trials)"]
            if sl == "large" and "first_pass_s" in r:
                parts.append(f"started {r['started']:,}, reservations {r['reservations']:,} a pass; the pass with "
                             f"the submits {r['first_pass_s']:.2f} s; peak RSS {r['peak_rss_mb']:.0f} MB")
                lines += wrap_parts(parts)
                continue
            if sl in ("pass", "large"):
                parts[0] = "1 worker " + parts[0]
                parts.append(f"tested {r['depth']:,}, started {r['started']:,}, reservations {r['reservations']:,}")
                if "ratio_vs_reference" in r:
                    ref = _fmt_time(r["reference_median_s"]).strip()
                    parts.append(f"{r['ratio_vs_reference']:.0f}x faster than the pure-Python reference ({ref})")
                lines += wrap_parts(parts)
                for k in r:
                    if k.startswith("speedup_") and k.endswith("_workers"):
                        lines += wrap_parts([_workers_answer(r, k.split("_")[1])], indent="    ")
                continue
            if sl == "rl" and "vs_peer" in r:
                parts.append(f"{r['steps_per_s']:,.0f} steps/s, {r['vs_peer']:.0f}x faster than the Python "
                             f"reference of {r['peer']} ({r['peer_steps_per_s']:,.0f}/s)")
            elif sl == "replay":
                parts.append(f"{r['jobs']:,} jobs, {r['jobs_per_s']:,.0f} jobs/s, {r['passes_per_s']:,.0f} passes/s, "
                             f"peak RSS {r['peak_rss_mb']:.0f} MB")
            lines += wrap_parts(parts)
    return "\n".join(lines)
