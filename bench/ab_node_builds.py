"""Two builds of pbf side by side on Slurm-like replays on Beocat's nodes (a benchmark script, not a test).

    python bench/ab_node_builds.py OTHER_CHECKOUT TRACE.swf [--rounds 3] [--workers 1,2] [--trigger event]

OTHER_CHECKOUT is another checkout of pbf built in place (``python setup.py build_ext --inplace``);
the new build is the one this script's checkout imports. Each replay runs in its own process (a
node replay loads the whole package, not only ``pbf._core``, so the two builds cannot share one),
interleaved: other 1 worker, this 1 worker, other 2 workers, this 2 workers, ..., round after round.
Every replay must start every job at the same time as the others. Prints each time and the medians.
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ONE = """
import hashlib, sys, time
import pbf
t = pbf.read_swf(sys.argv[1])
config = pbf.ReplayConfig(cluster="beocat", trigger=sys.argv[3], workers=int(sys.argv[2]),
                          backfill=pbf.Backfill(reservations=None, max_job_test=500))
t0 = time.perf_counter()
r = pbf.replay(t, config)
print(time.perf_counter() - t0, hashlib.md5(str(list(r.jobs["start"])).encode()).hexdigest())
"""


def replay(checkout, trace, workers, trigger):
    env = dict(os.environ, PYTHONPATH=checkout)
    out = subprocess.run([sys.executable, "-c", ONE, trace, str(workers), trigger], env=env, cwd="/",
                         capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), out[1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", help="another pbf checkout, built in place")
    ap.add_argument("trace")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--trigger", choices=("interval", "event"), default="interval",
                    help="passes every --bf-interval (Slurm-like, the default) or at every event")
    a = ap.parse_args()
    trace = os.path.abspath(a.trace)
    builds = {"other": os.path.abspath(a.other), "this": HERE}
    workers = [int(w) for w in a.workers.split(",")]
    times = {(b, w): [] for b in builds for w in workers}
    decisions = set()
    for r in range(a.rounds):
        for w in workers:
            for b, path in builds.items():
                dt, digest = replay(path, trace, w, a.trigger)
                decisions.add(digest)
                times[b, w].append(dt)
                print(f"round {r + 1}: {b} build, {w} worker(s): {dt:.2f} s", flush=True)
    assert len(decisions) == 1, "the builds or the worker counts start jobs at different times"
    for w in workers:
        mo, mt = statistics.median(times["other", w]), statistics.median(times["this", w])
        print(f"{w} worker(s): other {mo:.2f} s, this {mt:.2f} s (other/this {mo / mt:.2f}x)")
    print(f"cores {os.cpu_count()}; same decisions in every run")


if __name__ == "__main__":
    sys.exit(main())
