"""The noise floor of a replay from a site's files: pbf against itself with its timers shifted.

Where a backfill cycle falls within its ``bf_interval`` (and the full main-scheduler pass within its
``sched_interval``) is not written in any file a site keeps, so a replay of a real run cannot know it.
This replays one workload at timer phases 0, 1, 2 ... s (``pbf replay ... --timer-phase S``, the
slurm-sim clock) and reports how far each job's start moves against phase 0: the share within 2 s and
60 s, the median, 90th percentile and worst difference, and each phase's average wait. Agreement with a
real Slurm run is to be read beside these figures.

    python bench/timer_phase_floor.py TRACE --slurm-conf CONF [--phases 0,1,2,5] [more pbf replay flags]
"""
from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
from pathlib import Path

from pbf import cli


def _starts(out: Path) -> dict[str, tuple[int, int]]:
    with open(out / "jobs.csv", newline="") as f:
        return {r["id"]: (int(r["submit"]), int(r["start"])) for r in csv.DictReader(f)}


def _spread(base: dict, other: dict) -> dict:
    diffs = [abs(other[j][1] - s) for j, (_, s) in base.items() if s >= 0 and other.get(j, (0, -1))[1] >= 0]
    diffs.sort()
    n = len(base)
    return {"within_2s": sum(d <= 2 for d in diffs) / n, "within_60s": sum(d <= 60 for d in diffs) / n,
            "median_s": statistics.median(diffs) if diffs else 0.0,
            "p90_s": diffs[int(0.9 * (len(diffs) - 1))] if diffs else 0, "worst_s": diffs[-1] if diffs else 0}


def _awt(starts: dict) -> float:
    waits = [s - sub for sub, s in starts.values() if s >= 0]
    return sum(waits) / len(waits) if waits else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--slurm-conf", required=True)
    ap.add_argument("--phases", default="0,1,2", help="timer phases in seconds, the first the baseline (0,1,2)")
    args, extra = ap.parse_known_args(argv)       # (the rest: more pbf replay flags)
    phases = [float(x) for x in args.phases.split(",")]
    extra = [a for a in extra if a != "--"]
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ph in phases:
            out = Path(tmp) / f"p{ph:g}"
            rc = cli.main(["replay", args.trace, "--slurm-conf", args.slurm_conf, "--quiet", "--no-pass-records",
                           "--timer-phase", f"{ph:g}", "--out", str(out)] + extra)
            if rc != 0:
                return rc
            runs[ph] = _starts(out)
    base = runs[phases[0]]
    print(f"{args.trace}: {len(base):,} jobs; phase {phases[0]:g} s: AWT {_awt(base):.1f} s")
    for ph in phases[1:]:
        s = _spread(base, runs[ph])
        awt = _awt(runs[ph])
        print(f"phase {ph:g} s  {100 * s['within_2s']:.1f}% within 2 s, {100 * s['within_60s']:.1f}% within 60 s; "
              f"median {s['median_s']:.1f} s, p90 {s['p90_s']} s, worst {s['worst_s']} s; AWT {awt:.1f} s "
              f"({100 * (awt / _awt(base) - 1) if _awt(base) else 0.0:+.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
