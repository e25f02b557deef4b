"""Two `pbf replay` commands side by side, alternating processes: e.g. the same week on units and on
nodes (a benchmark script, not a test).

    python bench/ab_replay_pair.py [--rounds 2] [--keep DIR] --a "ARGS A" --b "ARGS B" [-- COMMON_ARGS...]

e.g. ``python bench/ab_replay_pair.py --rounds 2 --a "" --b "--cluster beocat" -- --reservations unlimited
--max-job-test 500 --no-pass-records`` (the built-in Beocat week, Slurm-like, on 9,128 units and on
Beocat's 299 nodes).

Each replay is its own process, ``python -m pbf replay COMMON_ARGS A|B --quiet --out DIR``, in the order
A B, B A, A B, ... (neither always first). Prints, per replay, the process's wall and CPU time (user +
system, from the child's rusage), its peak RSS, the passes (all, full, jobs tested over the full ones,
from summary.json), and then the medians and the ratios B / A. The load average is printed before and
after. ``--keep DIR`` keeps each replay's output folder there (``a1``, ``b1``, ...).
"""
import argparse
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def _run(args, out):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pbf", "replay", *args, "--quiet", "--out", out], check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    p = summary.get("passes", {})
    return {"wall": wall, "cpu": cpu, "rss_mb": after.ru_maxrss / 1024, "passes": p.get("count"),
            "full": p.get("full"), "depth_full": p.get("depth_full_total", p.get("depth_full"))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="arguments of replay A (quoted)")
    ap.add_argument("--b", required=True, help="arguments of replay B (quoted)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--keep", help="keep the output folders here")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    if a.rounds < 1:
        ap.error(f"--rounds: expected a whole number >= 1, got {a.rounds}")
    common = argv[cut + 1:]
    cmds = {"A": [*common, *shlex.split(a.a)], "B": [*common, *shlex.split(a.b)]}
    base = a.keep or tempfile.mkdtemp(prefix="pbf_pair_")
    os.makedirs(base, exist_ok=True)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    for k, c in cmds.items():
        print(f"{k}: pbf replay {' '.join(c)}", flush=True)
    rows = {"A": [], "B": []}
    try:
        for r in range(a.rounds):
            for k in ("AB" if r % 2 == 0 else "BA"):
                out = os.path.join(base, f"{k.lower()}{r + 1}")
                row = _run(cmds[k], out)
                rows[k].append(row)
                print(f"round {r + 1} {k}: wall {row['wall']:.1f} s, CPU {row['cpu']:.1f} s, largest child RSS so far "
                      f"{row['rss_mb']:.0f} MB, passes {row['passes']}, full {row['full']}, load "
                      f"{os.getloadavg()[0]:.2f}", flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(base, ignore_errors=True)
    med = {k: {f: statistics.median(x[f] for x in v) for f in ("wall", "cpu")} for k, v in rows.items()}
    for k in "AB":
        print(f"median {k}: wall {med[k]['wall']:.1f} s, CPU {med[k]['cpu']:.1f} s")
    print(f"B / A: wall {med['B']['wall'] / med['A']['wall']:.2f}x, CPU {med['B']['cpu'] / med['A']['cpu']:.2f}x; "
          f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
