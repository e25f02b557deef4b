"""Start-up: the whole ``pbf replay TRACE --quiet`` process against its floor, interleaved.

    python bench/startup.py [TRACE] [--runs 15] [--other NAME=CHECKOUT ...] [--phases]

Each round runs, as fresh processes and in turn: ``python -c pass``, ``python -c "import numpy"``
(one OpenBLAS thread, as the command line sets it: numpy's import is the floor of any replay),
``pbf replay TRACE --quiet`` and the same with ``--out DIR``; with ``--other NAME=CHECKOUT`` the two
replays again with ``PYTHONPATH=CHECKOUT`` (another checkout built in place, e.g. an earlier commit),
in the same rounds. Prints the median wall and CPU (user + system) time of each, the core count and
the load average: on a busy machine the wall times grow, the CPU times much less. ``--phases``
instead times the steps of one replay in one process (as the command line runs them).
Run it from outside a checkout (the installed pbf is the one timed). Default TRACE:
SDSC-SP2-1998-4.2-cln.swf.gz in ``$PBF_TRACES`` or ``../shared/traces``.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PHASES = r"""
import os, sys, time
t = [time.perf_counter()]
names = []
def mark(name):
    t.append(time.perf_counter()); names.append(name)
import pbf.cli; mark("import pbf.cli (argparse, the command table)")
from pbf.cli.commands import _command_named, build_parser
argv = ["replay", sys.argv[1], "--quiet"] + sys.argv[2:]
args = build_parser(_command_named(argv)).parse_args(argv); mark("replay's options (pbf.cli.replay, options)")
import numpy; mark("import numpy")
from pbf.cli.replay_settings import replay_config; mark("import the settings, the replayer, the engine")
from pbf.cli.options import read_trace
table = read_trace(args); mark("read and clean the trace")
config = replay_config(args, "event")
from pbf.replayer import replay
result = replay(table, config); mark("replay (compiled core) and its summary")
if args.out:
    result.write(args.out); mark("write summary.json, jobs.csv, passes.csv")
for name, a, b in zip(names, t, t[1:]):
    print(f"  {name:50s} {1e3 * (b - a):6.1f} ms")
print(f"  {'total (after Python and site start)':50s} {1e3 * (t[-1] - t[0]):6.1f} ms")
"""


def _trace(name):
    if name and os.path.exists(name):
        return name
    folder = os.environ.get("PBF_TRACES") or os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces")
    path = os.path.join(folder, name or "SDSC-SP2-1998-4.2-cln.swf.gz")
    if not os.path.exists(path):
        sys.exit(f"trace not found: {path} (give its path, or set PBF_TRACES)")
    return path


def _run(argv, pythonpath):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--other", action="append", default=[], metavar="NAME=CHECKOUT")
    ap.add_argument("--phases", action="store_true")
    args = ap.parse_args()
    trace = _trace(args.trace)
    py = sys.executable
    out = tempfile.mkdtemp(prefix="pbf-startup-")
    if args.phases:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
        for flags in ([], ["--out", os.path.join(out, "phases")]):
            print(f"pbf replay {os.path.basename(trace)} --quiet {' '.join(flags[:1])}")
            subprocess.run([py, "-c", PHASES, trace, *flags], check=True)
        return
    pbf = [py, "-m", "pbf"]
    cases = {"python -c pass": ([py, "-c", "pass"], None),
             "python -c 'import numpy' (1 BLAS thread)":
                 ([py, "-c", "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; import numpy"], None)}
    for name, root in [("installed", None)] + [tuple(o.split("=", 1)) for o in args.other]:
        cases[f"[{name}] pbf replay TRACE --quiet"] = ([*pbf, "replay", trace, "--quiet"], root)
        cases[f"[{name}] pbf replay TRACE --quiet --out DIR"] = (
            [*pbf, "replay", trace, "--quiet", "--out", os.path.join(out, name)], root)
    times = {k: [] for k in cases}
    for _ in range(args.runs):
        for k, (argv, root) in cases.items():
            times[k].append(_run(argv, root))
    print(f"{os.path.basename(trace)}: {args.runs} interleaved rounds, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    for k, v in times.items():
        wall, cpu = [w for w, _ in v], [c for _, c in v]
        print(f"  {k:50s} wall median {statistics.median(wall):.3f} s (best {min(wall):.3f})"
              f"  CPU median {statistics.median(cpu):.3f} s")


if __name__ == "__main__":
    main()
