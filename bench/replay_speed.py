"""Replay speed (a benchmark script, not a test): the replay targets, measured side by side.

    python bench/replay_speed.py [TRACE] [--trials 7]

1. The compiled replay (FCFS + EASY, event trigger, requested estimates) against the pure-Python
   count-based EASY reference on the same jobs, parsing excluded; trials interleaved, medians and
   best of each, and their ratio. The compiled replay runs twice a trial: as the reference does
   (start times only: ``record_passes = 0``, no per-pass statistics and so no clock reads) and as
   ``pbf replay`` does (a record of every pass, with its wall time).
2. The whole ``pbf replay TRACE --quiet`` process (Python start-up, imports, parsing, replay,
   summary), best and median wall time.
Prints the core count and how busy the machine was (CPU used by other processes, via psutil).
Default TRACE: ../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from pbf._core import Core
from pbf.benchmark import MachineLoad
from pbf.reference import count_easy_replay
from pbf.studies.traces import shared_trace
from pbf.workload import read_swf


def compiled(t, units, record_passes=False):
    core = Core(units)
    core.configure(record_passes=int(record_passes))
    core.load_trace(t.submit, t.units, t.req_time, t.run)
    t0 = time.perf_counter()
    core.replay()
    return time.perf_counter() - t0, core.job_arrays()[1]


def reference(t, units):
    t0 = time.perf_counter()
    start = count_easy_replay(t.submit, t.units, t.req_time, t.run, units)
    return time.perf_counter() - t0, np.array(start)


def process(trace):
    t0 = time.perf_counter()
    subprocess.run(["pbf", "replay", str(trace), "--quiet"], check=True)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", default="SDSC-SP2-1998-4.2-cln.swf.gz",
                    help="a file, or the name of a log in $PBF_TRACES / ../shared/traces")
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    args.trace = str(shared_trace(args.trace))
    t = read_swf(args.trace)
    units = t.header.cluster_units()
    comp, comp_rec, ref, proc = [], [], [], []
    with MachineLoad() as load:
        for _ in range(args.trials):
            tc, sc = compiled(t, units)
            tcr, scr = compiled(t, units, record_passes=True)
            tr, sr = reference(t, units)
            assert np.array_equal(sc, sr) and np.array_equal(scr, sr), "the compiled replay and the reference disagree"
            comp.append(tc)
            comp_rec.append(tcr)
            ref.append(tr)
            proc.append(process(args.trace))
    others = load.other_cores
    res = {"trace": args.trace, "jobs": len(t), "cores": os.cpu_count(), "trials": args.trials,
           "other_processes_cpu_cores": round(others, 3),
           "compiled_s": {"best": min(comp), "median": statistics.median(comp)},
           "compiled_with_pass_records_s": {"best": min(comp_rec), "median": statistics.median(comp_rec)},
           "reference_s": {"best": min(ref), "median": statistics.median(ref)},
           "ratio_median": statistics.median(ref) / statistics.median(comp),
           "ratio_best": min(ref) / min(comp),
           "ratio_with_pass_records_median": statistics.median(ref) / statistics.median(comp_rec),
           "ratio_with_pass_records_best": min(ref) / min(comp_rec),
           "process_s": {"best": min(proc), "median": statistics.median(proc)}}
    if args.json:
        print(json.dumps(res, indent=2))
        return
    print(f"{res['trace']}: {res['jobs']:,} jobs; {res['cores']} cores; other processes used "
          f"{others:.2f} cores on average during the run; {args.trials} interleaved trials")
    print(f"compiled replay     best {min(comp)*1e3:7.1f} ms   median {statistics.median(comp)*1e3:7.1f} ms"
          f"   (ratio best {res['ratio_best']:.1f}x, median {res['ratio_median']:.1f}x)")
    print(f"  + pass records    best {min(comp_rec)*1e3:7.1f} ms   median {statistics.median(comp_rec)*1e3:7.1f} ms"
          f"   (ratio best {res['ratio_with_pass_records_best']:.1f}x, "
          f"median {res['ratio_with_pass_records_median']:.1f}x)")
    print(f"count-based EASY    best {min(ref)*1e3:7.1f} ms   median {statistics.median(ref)*1e3:7.1f} ms")
    print(f"pbf replay process  best {min(proc):.3f} s    median {statistics.median(proc):.3f} s")


if __name__ == "__main__":
    sys.exit(main())
