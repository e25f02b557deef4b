"""Start-up: the whole ``pbf replay TRACE --quiet`` process against its floor, interleaved.

    python bench/startup.py [TRACE] [--runs 15] [--other NAME=CHECKOUT ...] [--no-installed]
        [--rlscheduler CHECKOUT] [--python PATH] [--phases | --imports]

Each round runs, as fresh processes and in turn: the floor -- ``python -S -c pass`` (the interpreter
alone), ``python -c pass`` (with ``site``), ``python -c "import numpy"`` (one OpenBLAS thread, as the
command line sets it: what a replay would pay if it loaded numpy; a plain one does not) -- then, for
each pbf, ``python -c "import pbf._core"`` (the compiled core alone), ``pbf replay TRACE --quiet`` and
the same with ``--out DIR``; with ``--other NAME=CHECKOUT`` these again with ``PYTHONPATH=CHECKOUT``
(another checkout built in place, e.g. an earlier commit), in the same rounds. It also says, for each
pbf, whether the compiled core and a plain replay load numpy. Prints the median wall and CPU (user + system)
time of each, the core count and the load average: on a busy machine the wall times grow, the CPU
times much less. A first round, not counted, lets Python write each checkout's bytecode (the
variable PYTHONDONTWRITEBYTECODE is dropped for the processes timed, as a user's Python writes it).

``--rlscheduler CHECKOUT`` adds RLScheduler's simulator on the same log to the rounds: ``python
CHECKOUT/HPCSimPickJobs.py --workload LOG`` (its own entry: the environment starts and loads the log,
RLScheduler's Workloads and Cluster) from a clone of DIR-LAB/deep-batch-scheduler (commit cd433e3), the
log decompressed first (it reads plain text), and prints how many times longer it takes than each pbf
replay. RLScheduler imports TensorFlow 1.x and the old gym at its top; where they are not installed
(TensorFlow 1.x does not install on current Pythons) an empty ``tensorflow`` and a ``gym`` made of
gymnasium's Env, spaces and seeding stand in: its start-up is then the lighter, and the ratio smaller.

``--phases`` instead times the steps of one replay in one process, as the command line runs them
(``--runs`` processes for each pbf, interleaved; medians of the process's CPU time and of the wall
time): the imports (numpy's, where a pbf loads it, in the step that imports it: the settings' for a
pbf whose compiled core imports numpy), reading and cleaning, the
settings, the replay's event loop (compiled), what it does around the loop (the arrays in, the
summary out) and writing. ``--imports`` instead sums ``python -X importtime`` over what a plain
replay imports (``--runs`` processes for each pbf, medians of each module's own time): Python's
``site`` with what its ``.pth`` files import, numpy with what it imports, pbf's compiled modules, its
Python modules, and the standard library modules pbf imports itself; the slowest modules of each.
``--no-installed``: time only the ``--other`` checkouts. ``--python PATH`` times pbf and the floor with
another interpreter of the same version (e.g. a plain venv's, without this machine's ``.pth`` files: its
``site`` is then what a usual install pays; give the checkouts with ``--other``, as that venv has no
installed pbf); RLScheduler's simulator keeps the Python running this script.
Run it from outside a checkout (the installed pbf is the one timed). Default TRACE:
SDSC-SP2-1998-4.2-cln.swf.gz in ``$PBF_TRACES`` or ``../shared/traces``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PHASES = r"""
import json, os, sys, time
t = [(time.perf_counter(), time.process_time())]
names = []
def mark(name):
    t.append((time.perf_counter(), time.process_time())); names.append(name)
import pbf.cli; mark("import pbf.cli (argparse, the command table)")
from pbf.cli import process
# (as main() run as the process does, where the checkout has it: the collector held off until the
# replay, argparse's messages untranslated when no catalog translates them)
getattr(process, "hold_collector", lambda: None)()
getattr(process, "untranslated_argparse", lambda: None)()
from pbf.cli.commands import _command_named, build_parser
argv = ["replay", sys.argv[1], "--quiet"] + sys.argv[2:]
args = build_parser(_command_named(argv)).parse_args(argv); mark("replay's options (pbf.cli.replay, options)")
from pbf.cli.replay_settings import replay_config; mark("import the settings (plugins, the core's module)")
from pbf.cli.options import read_trace
table = read_trace(args); mark("read and clean the trace")
config = replay_config(args, "event"); mark("the settings from the flags")
import pbf.replayer; mark("import the replayer")
# (the replayer times its event loop with time.perf_counter: given the process's CPU clock as well, it
# reports the loop's CPU time; the main thread runs the loop, the other threads are idle then)
loop = {}
class Clock:
    def __getattr__(self, name):
        return getattr(time, name)
    def perf_counter(self):
        loop.setdefault("t", []).append((time.perf_counter(), time.process_time()))
        return time.perf_counter()
pbf.replayer.time = Clock()
getattr(process, "release_collector", lambda: None)()
result = pbf.replayer.replay(table, config); mark("replay")
if args.out:
    result.write(args.out); mark("write summary.json, jobs.csv, passes.csv")
steps = {name: [b[0] - a[0], b[1] - a[1]] for name, a, b in zip(names, t, t[1:])}
(w0, c0), (w1, c1) = loop["t"][0], loop["t"][-1]
steps["replay: the event loop (compiled)"] = [w1 - w0, c1 - c0]
whole = steps.pop("replay")
steps["replay: the arrays in, the summary out"] = [whole[0] - (w1 - w0), whole[1] - (c1 - c0)]
steps["total (after Python and site start)"] = [t[-1][0] - t[0][0], t[-1][1] - t[0][1]]
print(json.dumps(steps))
"""


def _trace(name):
    if name and os.path.exists(name):
        return name
    folder = os.environ.get("PBF_TRACES") or os.path.join(os.path.dirname(__file__), "..", "..", "shared", "traces")
    path = os.path.join(folder, name or "SDSC-SP2-1998-4.2-cln.swf.gz")
    if not os.path.exists(path):
        sys.exit(f"trace not found: {path} (give its path, or set PBF_TRACES)")
    return path


def _env(pythonpath):
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)     # (a user's Python keeps the bytecode it compiles)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _run(argv, pythonpath):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=_env(pythonpath))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


_SHIMS = {"gym/__init__.py": "from gymnasium import Env, spaces  # noqa: F401\n",
          "gym/spaces.py": "from gymnasium.spaces import Box, Discrete, Space  # noqa: F401\n",
          "gym/utils/__init__.py": "",
          "gym/utils/seeding.py": "from gymnasium.utils.seeding import np_random  # noqa: F401\n",
          "tensorflow/__init__.py": "# RLScheduler's training code uses TensorFlow 1.x; its simulator does not\n"}


def _rlscheduler(checkout, trace, out):
    """The argv and PYTHONPATH of RLScheduler's simulator on ``trace`` (the stand-ins it needs written to ``out``)."""
    import gzip
    import importlib.util
    import shutil
    script = os.path.join(checkout, "HPCSimPickJobs.py")
    if not os.path.exists(script):
        sys.exit(f"{script} not found: give a clone of https://github.com/DIR-LAB/deep-batch-scheduler")
    log = os.path.join(out, os.path.basename(trace).removesuffix(".gz"))
    with (gzip.open(trace, "rb") if trace.endswith(".gz") else open(trace, "rb")) as src, open(log, "wb") as dst:
        shutil.copyfileobj(src, dst)
    shims = os.path.join(out, "rlscheduler-shims")
    missing = [m for m in ("tensorflow", "gym") if importlib.util.find_spec(m) is None]
    if "gym" in missing and importlib.util.find_spec("gymnasium") is None:
        sys.exit("RLScheduler's simulator needs gym or gymnasium (pip install gymnasium)")
    for path, text in _SHIMS.items():
        if path.split("/")[0] in missing:
            os.makedirs(os.path.dirname(os.path.join(shims, path)), exist_ok=True)
            with open(os.path.join(shims, path), "w") as fh:
                fh.write(text)
    if missing:
        print(f"RLScheduler's simulator runs with stand-ins for {' and '.join(missing)} (not installed)")
    return [sys.executable, script, "--workload", log], shims if missing else None


def _pbfs(args):
    return ([] if args.no_installed else [("installed", None)]) + [tuple(o.split("=", 1)) for o in args.other]


def _phases(args, trace, out):
    py = args.python
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    pbfs = _pbfs(args)
    for flags in ([], ["--out", None]):
        steps = {name: {} for name, _ in pbfs}
        for k in range(args.runs + 1):        # (the first round writes the bytecode: not counted)
            for name, root in pbfs:
                extra = flags if not flags else ["--out", os.path.join(out, f"phases-{name}")]
                r = subprocess.run([py, "-c", PHASES, trace, *extra], check=True, capture_output=True, text=True,
                                   env=_env(root))
                if k:
                    for step, secs in json.loads(r.stdout.strip().splitlines()[-1]).items():
                        steps[name].setdefault(step, []).append(secs)
        print(f"pbf replay {os.path.basename(trace)} --quiet {' '.join(flags[:1])}: medians of {args.runs} "
              f"processes, interleaved, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end")
        print(f"  {'step: CPU ms (wall ms)':50s}" + "".join(f" {name:>16s}" for name, _ in pbfs))
        for step in steps[pbfs[0][0]]:
            cells = [[1e3 * statistics.median(x[i] for x in steps[name][step]) for i in (1, 0)] for name, _ in pbfs]
            print(f"  {step:50s}" + "".join(f" {cpu:6.1f} ({wall:6.1f})" for cpu, wall in cells))


GROUPS = ("Python's own start (before site)", "site and what its .pth files import", "numpy and what it imports",
          "pbf's compiled modules", "pbf's Python modules", "the standard library, imported by pbf")


def _group(name, ancestors):
    """The group of one module of ``-X importtime``'s tree: its own package, or else its nearest ancestor's."""
    for m in (name, *reversed(ancestors)):
        if m == "numpy" or m.startswith("numpy."):
            return GROUPS[2]
        if m.startswith("pbf._"):
            return GROUPS[3] if m == name else GROUPS[5]
        if m == "pbf" or m.startswith("pbf."):
            return GROUPS[4] if m == name else GROUPS[5]
    return GROUPS[1] if (ancestors[:1] or [name])[0] == "site" else GROUPS[0]


def _import_times(stderr):
    """{module: (group, own microseconds)} from one ``python -X importtime`` run."""
    rows = []
    for line in stderr.splitlines():
        if line.startswith("import time:") and not line.rstrip().endswith("imported package"):
            own, _, name = line.split(":", 1)[1].split("|")
            level = (len(name) - len(name.lstrip()) - 1) // 2       # (one space, then two a level)
            rows.append((level, name.strip(), int(own)))
    out, chain = {}, []
    for level, name, own in reversed(rows):         # (post-order reversed: each parent before its children)
        del chain[level:]
        out[name] = (_group(name, chain), own)
        chain.append(name)
    return out


def _imports(args, trace):
    py = args.python
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    pbfs = _pbfs(args)
    runs = {name: [] for name, _ in pbfs}
    for k in range(args.runs + 1):        # (the first round writes the bytecode: not counted)
        for name, root in pbfs:
            r = subprocess.run([py, "-X", "importtime", "-m", "pbf", "replay", trace, "--quiet"], check=True,
                               capture_output=True, text=True, env=_env(root))
            if k:
                runs[name].append(_import_times(r.stderr))
    print(f"python -X importtime -m pbf replay {os.path.basename(trace)} --quiet: medians of {args.runs} processes, "
          f"interleaved, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the end (wall time)")
    print(f"  {'own import time, ms (modules)':50s}" + "".join(f" {name:>16s}" for name, _ in pbfs))
    for group in (*GROUPS, None):
        cells = []
        for name, _ in pbfs:
            totals = [sum(own for g, own in run.values() if group in (None, g)) for run in runs[name]]
            count = statistics.median(sum(group in (None, g) for g, _ in run.values()) for run in runs[name])
            cells.append(f" {statistics.median(totals) / 1e3:7.1f} ({count:5.0f})")
        print(f"  {group or 'all imports':50s}" + "".join(cells))
    for name, _ in pbfs:
        print(f"  [{name}] the slowest modules of each group (own time, median ms):")
        for group in GROUPS:
            mods = {m for run in runs[name] for m, (g, _) in run.items() if g == group}
            own = {m: statistics.median(run[m][1] if m in run else 0 for run in runs[name]) / 1e3 for m in mods}
            top = sorted(own.items(), key=lambda kv: -kv[1])[:6]
            print(f"    {group}: " + ", ".join(f"{m} {t:.1f}" for m, t in top))


def _numpy_loaded(py, pbfs, trace):
    """Whether ``import pbf._core`` and a plain replay load numpy, for each pbf."""
    probe = "import sys\n{}\nprint('numpy' in sys.modules)"
    cases = {"import pbf._core": "import pbf._core",
             "pbf replay TRACE --quiet": f"from pbf.cli import main\nmain(['replay', {trace!r}, '--quiet'])"}
    for name, root in pbfs:
        said = []
        for case, code in cases.items():
            r = subprocess.run([py, "-c", probe.format(code)], check=True, capture_output=True, text=True,
                               env=_env(root))
            said.append(f"{case}: {'yes' if r.stdout.split()[-1] == 'True' else 'no'}")
        print(f"  [{name}] numpy loaded by " + "; ".join(said))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--other", action="append", default=[], metavar="NAME=CHECKOUT")
    ap.add_argument("--no-installed", action="store_true", help="time only the --other checkouts")
    ap.add_argument("--rlscheduler", metavar="CHECKOUT", help="a clone of DIR-LAB/deep-batch-scheduler")
    ap.add_argument("--python", default=sys.executable, metavar="PATH",
                    help="the interpreter that runs pbf and the floor (default: this one)")
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--imports", action="store_true", help="python -X importtime's figures, by group")
    args = ap.parse_args()
    if args.no_installed and not args.other:
        ap.error("--no-installed needs at least one --other NAME=CHECKOUT")
    trace = _trace(args.trace)
    py = args.python
    out = tempfile.mkdtemp(prefix="pbf-startup-")
    if args.phases:
        _phases(args, trace, out)
        return
    if args.imports:
        _imports(args, trace)
        return
    pbf = [py, "-m", "pbf"]
    blas = "import os; os.environ['OPENBLAS_NUM_THREADS'] = '1'; "
    pbfs = _pbfs(args)
    cases = {"python -S -c pass": ([py, "-S", "-c", "pass"], None),
             "python -c pass": ([py, "-c", "pass"], None),
             "python -c 'import numpy' (1 BLAS thread)": ([py, "-c", blas + "import numpy"], None)}
    for name, root in pbfs:
        cases[f"[{name}] python -c 'import pbf._core'"] = ([py, "-c", blas + "import pbf._core"], root)
        cases[f"[{name}] pbf replay TRACE --quiet"] = ([*pbf, "replay", trace, "--quiet"], root)
        cases[f"[{name}] pbf replay TRACE --quiet --out DIR"] = (
            [*pbf, "replay", trace, "--quiet", "--out", os.path.join(out, name)], root)
    rls = "RLScheduler's simulator, the same log"
    if args.rlscheduler:
        cases[rls] = _rlscheduler(args.rlscheduler, trace, out)
    times = {k: [] for k in cases}
    for k in range(args.runs + 1):              # (the first round writes the bytecode: not counted)
        for case, (argv, root) in cases.items():
            timed = _run(argv, root)
            if k:
                times[case].append(timed)
    print(f"{os.path.basename(trace)}: {args.runs} interleaved rounds, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    for k, v in times.items():
        wall, cpu = [w for w, _ in v], [c for _, c in v]
        print(f"  {k:50s} wall median {statistics.median(wall):.3f} s (best {min(wall):.3f})"
              f"  CPU median {statistics.median(cpu):.3f} s")
    _numpy_loaded(py, pbfs, trace)
    if args.rlscheduler:
        r_wall, r_cpu = (statistics.median(x[i] for x in times[rls]) for i in (0, 1))
        for k, v in times.items():
            if "pbf replay" in k:
                wall, cpu = statistics.median(w for w, _ in v), statistics.median(c for _, c in v)
                print(f"  RLScheduler's simulator / {k}: {r_wall / wall:.1f}x wall, {r_cpu / cpu:.1f}x CPU")


if __name__ == "__main__":
    main()
