"""Read time and peak memory of the SWF reader (a script, not a test).

Each file is read in a fresh subprocess so that its peak RSS is its own:

    python bench/read_swf.py ../shared/traces/HPC2N-2002-2.2-cln.swf.gz big.swf.gz [--repeat 3]

Prints, per file: jobs, best and median wall time of ``read_swf`` (default cleaning) over the repeats,
and the peak RSS of the process above its RSS before reading.
"""
import argparse
import json
import subprocess
import sys

CHILD = r"""
import json, resource, sys, time, gc
import psutil
from pbf.workload import read_swf
path, repeat = sys.argv[1], int(sys.argv[2])
base = psutil.Process().memory_info().rss
times = []
for _ in range(repeat):
    t0 = time.perf_counter()
    table = read_swf(path)
    times.append(time.perf_counter() - t0)
    n = len(table)
    del table
    gc.collect()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
times.sort()
print(json.dumps({"file": path, "jobs": n, "best_s": times[0], "median_s": times[len(times) // 2],
                  "peak_rss_mb": peak / 2**20, "rss_before_mb": base / 2**20}))
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = []
    for f in args.files:
        out = subprocess.run([sys.executable, "-c", CHILD, f, str(args.repeat)], check=True,
                             capture_output=True, text=True).stdout
        rows.append(json.loads(out))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'file':60s} {'jobs':>9s} {'best s':>7s} {'median s':>8s} {'peak RSS MB':>11s} {'(before)':>8s}")
    for r in rows:
        print(f"{r['file'][-60:]:60s} {r['jobs']:9,d} {r['best_s']:7.3f} {r['median_s']:8.3f} "
              f"{r['peak_rss_mb']:11.1f} {r['rss_before_mb']:8.1f}")


if __name__ == "__main__":
    main()
