"""Whole-process wall times of a replay, 1 worker against N, interleaved; optionally another checkout too.

    python bench/whole_process.py TRACE [--workers 1,2] [--runs 9] [--other CHECKOUT] [--phases]
        [-- REPLAY FLAGS ...]

Each run is a fresh ``python -m pbf replay TRACE FLAGS --workers N --quiet --out DIR`` (imports,
reading, the replay and writing its files: what a user waits for), started from a temporary
folder so that the installed pbf is the one imported; with ``--other CHECKOUT`` the same runs
with ``PYTHONPATH=CHECKOUT`` (a checkout built in place, e.g. an older commit) are interleaved.
Prints the median of each. ``--phases`` instead times, in fresh processes, importing pbf,
``pbf.read_swf``, ``pbf.replay`` and ``ReplayResult.write`` of a conservative replay (FLAGS are
not used there).

Example (docs/benchmarks.md): ``python bench/whole_process.py
../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz --runs 9 -- --reservations unlimited``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PHASES = """
import shutil, sys, time
t0 = time.perf_counter()
import pbf
from pbf.replay_config import Backfill, ReplayConfig
t1 = time.perf_counter()
table = pbf.read_swf(sys.argv[1])
t2 = time.perf_counter()
result = pbf.replay(table, ReplayConfig(backfill=Backfill(reservations=None), workers=int(sys.argv[2])))
t3 = time.perf_counter()
result.write(sys.argv[3])
t4 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3)
"""


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--other", help="a checkout built in place, timed interleaved with the installed pbf")
    ap.add_argument("--phases", action="store_true")
    a = ap.parse_args(argv)
    if any(f == "--workers" or f.startswith("--workers=") for f in extra):
        ap.error("--workers goes before '--': the script sets each run's workers itself")
    trace = os.path.abspath(a.trace)
    workers = [int(w) for w in a.workers.split(",")]
    builds = {"installed": None} | ({"other": os.path.abspath(a.other)} if a.other else {})
    times: dict[tuple[str, int], list] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(a.runs):
            for label, path in builds.items():
                env = dict(os.environ)
                if path:
                    env["PYTHONPATH"] = path
                for w in workers:
                    out = os.path.join(tmp, "out")
                    shutil.rmtree(out, ignore_errors=True)
                    if a.phases:
                        run = subprocess.run([sys.executable, "-c", PHASES, trace, str(w), out], cwd=tmp, env=env,
                                             check=True, capture_output=True, text=True)
                        times.setdefault((label, w), []).append([float(x) for x in run.stdout.split()])
                        continue
                    t = time.perf_counter()
                    subprocess.run([sys.executable, "-m", "pbf", "replay", trace, *extra, "--workers", str(w),
                                    "--quiet", "--out", out], cwd=tmp, env=env, check=True)
                    times.setdefault((label, w), []).append(time.perf_counter() - t)
    print(f"{a.runs} interleaved runs, {os.cpu_count()} CPUs; medians")
    for (label, w), v in times.items():
        if a.phases:
            cols = [statistics.median(x[i] for x in v) for i in range(4)]
            print(f"{label:<10} {w} worker(s): import {cols[0]:.3f} s, read {cols[1]:.3f} s, "
                  f"replay {cols[2]:.3f} s, write {cols[3]:.3f} s")
        else:
            base = statistics.median(times[(label, workers[0])])
            med = statistics.median(v)
            print(f"{label:<10} {w} worker(s): {med:.3f} s ({base / med:.2f}x of {workers[0]})  "
                  f"[{', '.join(f'{x:.2f}' for x in sorted(v))}]")


if __name__ == "__main__":
    main()
