"""Replay speed with each scoring preset and priority function (a benchmark script, not a test).

    python bench/scoring_speed.py [TRACE] [--trials 5] [--json]

Replays TRACE (default: ../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz; parsing excluded) with every
preset (easy, easy-clairvoyant, easy-sjbf-clairvoyant, easy++, gaussier = the E-Loss regression) and
every built-in priority function, trials interleaved; prints medians and bests, the core count and
how busy the machine was. Also times the whole ``pbf replay TRACE --preset gaussier --quiet`` process.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from pbf.benchmark import MachineLoad
from pbf.plugins import PRIORITIES
from pbf.replayer import ReplayConfig, replay
from pbf.studies.traces import shared_trace
from pbf.workload import read_swf

PRESETS = ("easy", "easy-clairvoyant", "easy-sjbf-clairvoyant", "easy++", "gaussier")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", default="SDSC-SP2-1998-4.2-cln.swf.gz",
                    help="a file, or the name of a log in $PBF_TRACES / ../shared/traces")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    args.trace = str(shared_trace(args.trace))
    t = read_swf(args.trace)
    configs = {f"preset {p}": ReplayConfig.from_preset(p) for p in PRESETS}
    configs.update({f"priority {p}": ReplayConfig(priority=p) for p in PRIORITIES.names()})
    times = {k: [] for k in configs}
    proc = []
    with MachineLoad() as load:
        for _ in range(args.trials):
            for name, cfg in configs.items():
                t0 = time.perf_counter()
                replay(t, cfg)
                times[name].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run(["pbf", "replay", args.trace, "--preset", "gaussier", "--quiet"], check=True)
            proc.append(time.perf_counter() - t0)
    others = load.other_cores
    res = {"trace": args.trace, "jobs": len(t), "cores": os.cpu_count(), "trials": args.trials,
           "other_processes_cpu_cores": round(others, 3),
           "replay_s": {k: {"median": statistics.median(v), "best": min(v)} for k, v in times.items()},
           "process_gaussier_s": {"median": statistics.median(proc), "best": min(proc)}}
    if args.json:
        print(json.dumps(res, indent=2))
        return 0
    print(f"{res['trace']}: {len(t):,} jobs; {res['cores']} cores; other processes used {others:.2f} cores "
          f"on average; {args.trials} interleaved trials (replay only, parsing excluded)")
    base = statistics.median(times["preset easy"])
    for k, v in times.items():
        m = statistics.median(v)
        print(f"{k:<32} median {m * 1e3:8.1f} ms   best {min(v) * 1e3:8.1f} ms   {m / base:5.2f}x easy")
    print(f"{'pbf replay --preset gaussier':<32} median {statistics.median(proc):8.3f} s    best {min(proc):8.3f} s"
          f"   (whole process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
