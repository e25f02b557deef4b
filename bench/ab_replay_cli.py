"""Two builds of pbf side by side on the same ``pbf replay`` command (a benchmark script, not a test).

    python bench/ab_replay_cli.py OTHER_CHECKOUT [--rounds 3] [--label NAME] -- REPLAY_ARGS...

e.g. ``python bench/ab_replay_cli.py ../base --rounds 3 -- b20k.sacct --cluster beocat-gpu --preset slurm``.

OTHER_CHECKOUT is another checkout of pbf built in place (``python setup.py build_ext --inplace``);
the new build is the one this script's checkout imports. Each replay runs in its own process,
``python -m pbf replay REPLAY_ARGS --quiet --out DIR``, interleaved (other, this, this, other, ...:
the order alternates by round, so that neither build always runs first). Every replay's jobs.csv
must be byte for byte the first one's (the same decisions). Prints, per replay, the process's wall
time, the time in passes (summary.json ``passes.wall_ms_total``) and that time per full pass, then
the medians and their ratios (other / this).
"""
import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def replay(checkout, args, out):
    env = dict(os.environ, PYTHONPATH=checkout)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pbf", "replay", *args, "--quiet", "--out", out], env=env,
                   cwd=checkout, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(os.path.join(out, "summary.json")) as f:
        passes = json.load(f)["passes"]
    # (--no-pass-records: no time in passes)
    return wall, (passes["wall_ms_total"] or 0) / 1000, passes["full"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", help="another pbf checkout, built in place")
    ap.add_argument("--rounds", type=int, default=3)
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("give the arguments of pbf replay after --")
    cut = argv.index("--")
    a = ap.parse_args(argv[:cut])
    args = argv[cut + 1:]
    # paths in the replay's arguments are taken from the caller's directory
    args = [os.path.abspath(x) if os.path.exists(x) else x for x in args]
    builds = {"other": os.path.abspath(a.other), "this": HERE}
    times = {b: {"wall": [], "passes": []} for b in builds}
    tmp = tempfile.mkdtemp(prefix="pbf_ab_")
    first = None
    try:
        for r in range(a.rounds):
            order = list(builds) if r % 2 == 0 else list(builds)[::-1]
            for b in order:
                out = os.path.join(tmp, f"{b}{r}")
                wall, passes, full = replay(builds[b], args, out)
                times[b]["wall"].append(wall)
                times[b]["passes"].append(passes)
                jobs = os.path.join(out, "jobs.csv")
                if first is None:
                    first = jobs
                elif not filecmp.cmp(first, jobs, shallow=False):
                    sys.exit(f"round {r + 1}: the {b} build's jobs.csv differs from the first replay's")
                print(f"round {r + 1}: {b:5s} build: {wall:8.2f} s process, {passes:8.2f} s in passes "
                      f"({full:,} full passes, {1000 * passes / max(full, 1):.3f} ms a full pass)", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {b: {k: statistics.median(v) for k, v in times[b].items()} for b in builds}
    for b in builds:
        print(f"median {b:5s}: {med[b]['wall']:8.2f} s process, {med[b]['passes']:8.2f} s in passes")
    print(f"other / this: {med['other']['wall'] / med['this']['wall']:.2f}x process, "
          f"{med['other']['passes'] / med['this']['passes']:.2f}x passes; jobs.csv identical in every replay "
          f"({os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
