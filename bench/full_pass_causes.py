"""What a replay's full passes followed: the time with a job waiting, and the passes that came after nothing
had changed (a benchmark script, not a test).

    python bench/full_pass_causes.py OUT_DIR [OUT_DIR ...] [--interval 30]

OUT_DIR is a `pbf replay ... --trigger interval --out OUT_DIR` folder with pass records (its `jobs.csv`
and `passes.csv`). Prints, for each: the simulated time during which at least one job waited (the union
of every job's `[submit, start)`), that time over the interval trigger's period (``--interval``,
`bf_interval`, default 30 s), the full and quick passes; then the full passes that followed nothing new
-- no job submitted, started or ended since the full pass before, which started nothing -- with their
share of the full passes, of the jobs the full passes tested and of the time in passes, and the full
passes after which only arrivals came (the same, submissions allowed).
"""
import argparse
import csv
import os

import numpy as np


def _columns(path, names):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {n: np.array([r[n] for r in rows]) for n in names}


def waiting_time(submit, start):
    """Seconds during which at least one job waited: the union of the intervals [submit, start)."""
    waited = start > submit
    order = np.argsort(submit[waited], kind="stable")
    total, lo, hi = 0, None, None
    for s, e in zip(submit[waited][order].tolist(), start[waited][order].tolist()):
        if hi is None or s > hi:
            if hi is not None:
                total += hi - lo
            lo, hi = s, e
        else:
            hi = max(hi, e)
    return total + (hi - lo if hi is not None else 0)


def causes(folder, interval):
    j = _columns(os.path.join(folder, "jobs.csv"), ("submit", "start", "end"))
    j = {k: v.astype(np.int64) for k, v in j.items()}
    ran = j["start"] >= 0
    j = {k: v[ran] for k, v in j.items()}
    p = _columns(os.path.join(folder, "passes.csv"), ("time", "started", "depth", "kind", "wall_us"))
    full = p["kind"] == "full"
    t = p["time"][full].astype(np.int64)
    started = p["started"][full].astype(np.int64)
    depth = p["depth"][full].astype(np.int64)
    wall = p["wall_us"].astype(float)
    before = np.concatenate([[-1], t[:-1]])
    prev_started = np.concatenate([[1], started[:-1]])

    def since(times):
        times = np.sort(times)
        return np.searchsorted(times, t, side="right") - np.searchsorted(times, before, side="right")
    changes = since(np.concatenate([j["submit"], j["start"], j["end"]]))
    moves = since(np.concatenate([j["start"], j["end"]]))
    nothing = (changes == 0) & (prev_started == 0)
    arrivals = (moves == 0) & (prev_started == 0)
    waited = waiting_time(j["submit"], j["start"])
    print(f"{folder}: a job waiting for {waited / 86400:.2f} d = {waited // interval:,} periods of {interval} s; "
          f"{int(full.sum()):,} full passes, {int((~full).sum()):,} quick")
    print(f"  after nothing new: {int(nothing.sum()):,} full passes ({100 * nothing.mean():.0f} %), "
          f"{100 * depth[nothing].sum() / max(depth.sum(), 1):.0f} % of the jobs the full passes tested "
          f"({depth[nothing].mean() if nothing.any() else 0:.0f} a pass against {depth.mean():.0f}), "
          f"{100 * wall[full][nothing].sum() / max(wall.sum(), 1):.0f} % of the time in passes; "
          f"{int((started[nothing] > 0).sum())} of them started a job")
    print(f"  after arrivals only: {int(arrivals.sum()):,} full passes ({100 * arrivals.mean():.0f} %)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--interval", type=int, default=30)
    a = ap.parse_args()
    if a.interval < 1:
        ap.error(f"--interval: expected whole seconds >= 1, got {a.interval}")
    for folder in a.folders:
        causes(folder, a.interval)


if __name__ == "__main__":
    main()
