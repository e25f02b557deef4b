"""Golden decisions: the same replays on two builds must write byte-identical ``jobs.csv``.

    python bench/golden.py record OUT [--build DIR] [--only NAME,...] [--jobs N]
    python bench/golden.py compare BASE OUT

``record`` runs every case below (``pbf replay ARGS --quiet --out OUT/NAME``), one process each, with
the pbf that ``--build`` names (a checkout built in place, put first on ``PYTHONPATH``) or else the
installed one; run it for the build before a change and for the build after it. ``compare`` prints
SAME or DIFF per case and exits 1 if any differs or is missing. A change to the compiled core that
is meant to leave decisions alone must leave every case SAME. The cases cover every planner and mode
that has a command-line form: units (EASY, conservative, Slurm's clock, estimates, predictions,
co-allocation, failures, workers), nodes (pbf's exact plan and Slurm's search, best- and first-fit,
GPUs, a ``slurm.conf`` site) and the generated and, when present, real logs.
"""
import argparse
import filecmp
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("PBF_TRACES", os.path.join(HERE, "..", "shared", "traces"))
B2K = os.path.join(HERE, "traces", "beocat-2000-1d.swf.gz")
LUB = os.path.join(HERE, "traces", "lublin1-1000.swf.gz")
CONF = os.path.join(HERE, "traces", "beocat.slurm.conf")
HARNESS = os.path.join(HERE, "tests", "data", "slurm_harness")
SDSC = os.path.join(SHARED, "SDSC-SP2-1998-4.2-cln.swf.gz")
LLNL = os.path.join(SHARED, "LLNL-Thunder-2007-1.1-cln.swf.gz")

CASES = {
    "units-easy": [B2K],
    "units-conservative": [B2K, "--reservations", "unlimited"],
    "units-slurm": [B2K, "--preset", "slurm"],
    "units-slurm-w4": [B2K, "--preset", "slurm", "--workers", "4"],
    "units-easypp": [B2K, "--preset", "easy++"],
    "units-gaussier": [LUB, "--preset", "gaussier"],
    "units-sjf-estimates": [B2K, "--priority", "sjf", "--start-estimates"],
    "units-coalloc": [B2K, "--coalloc", "asax"],
    "units-failures": [B2K, "--mtbf", "200", "--failure-seed", "3"],
    "units-workers2": [B2K, "--workers", "2", "--reservations", "8"],
    "lublin-easy": [LUB],
    "lublin-interval": [LUB, "--trigger", "interval", "--reservations", "4"],
    "nodes-exact": [B2K, "--cluster", "beocat", "--record-nodes"],
    "nodes-exact-ff": [B2K, "--cluster", "beocat", "--node-choice", "first-fit", "--record-nodes"],
    "nodes-exact-conservative": [B2K, "--cluster", "beocat", "--reservations", "16"],
    "nodes-slurm-search": [B2K, "--cluster", "beocat", "--node-search", "slurm", "--record-nodes"],
    "nodes-slurm-preset": [B2K, "--cluster", "beocat", "--preset", "slurm"],
    "nodes-gpu": [B2K, "--cluster", "beocat-gpu", "--preset", "slurm", "--record-nodes"],
    "nodes-failures": [B2K, "--cluster", "beocat", "--mtbf", "300", "--on-failure", "kill"],
    "nodes-estimates": [B2K, "--cluster", "beocat", "--start-estimates"],
    "site-slurm-conf": [B2K, "--slurm-conf", CONF, "--record-nodes"],
    "site-part2": [os.path.join(HARNESS, "part2_jobs.sacct"), "--slurm-conf", os.path.join(HARNESS, "part2.conf")],
    "site-hetero8-fs": [os.path.join(HARNESS, "hetero8_jobs.sacct"), "--slurm-conf",
                        os.path.join(HARNESS, "hetero8_fs.conf")],
    "beocat-week-units": ["--preset", "slurm"],
    "beocat-week-nodes-slurm": ["--cluster", "beocat", "--preset", "slurm"],
    "sdsc-easy": [SDSC],
    "sdsc-slurm": [SDSC, "--preset", "slurm"],
    "llnl-conservative": [LLNL, "--reservations", "unlimited"],
}


def record(out, build, only, jobs):
    env = dict(os.environ)
    if build:
        env["PYTHONPATH"] = os.path.abspath(build) + os.pathsep + env.get("PYTHONPATH", "")
    names = [n for n in CASES if not only or n in only]
    running = []
    for name in names:
        args = CASES[name]
        if args[0].endswith((".gz", ".sacct")) and not os.path.exists(args[0]):
            print(f"{name}: skipped ({args[0]} is absent)")
            continue
        dest = os.path.join(out, name)
        os.makedirs(dest, exist_ok=True)
        # from /tmp, so that a checkout in the current folder never shadows the build under test
        cmd = [sys.executable, "-m", "pbf", "replay", *args, "--quiet", "--out", dest]
        running.append((name, time.perf_counter(), subprocess.Popen(
            cmd, cwd="/tmp", env=env, stdout=subprocess.DEVNULL, stderr=open(os.path.join(dest, "stderr"), "w"))))
        while len(running) >= jobs:
            running = _reap(running)
    while running:
        running = _reap(running)


def _reap(running):
    name, t0, proc = running[0]
    proc.wait()
    print(f"{name}: exit {proc.returncode} in {time.perf_counter() - t0:.1f} s", flush=True)
    return running[1:]


def compare(base, out):
    bad = 0
    for name in CASES:
        a, b = os.path.join(base, name, "jobs.csv"), os.path.join(out, name, "jobs.csv")
        if not os.path.exists(a) and not os.path.exists(b):
            continue
        same = os.path.exists(a) and os.path.exists(b) and filecmp.cmp(a, b, shallow=False)
        bad += not same
        print(f"{'SAME' if same else 'DIFF'} {name}")
    return 1 if bad else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="what", required=True)
    r = sub.add_parser("record")
    r.add_argument("out")
    r.add_argument("--build", help="a checkout built in place (default: the installed pbf)")
    r.add_argument("--only", default="", help="comma-separated case names")
    r.add_argument("--jobs", type=int, default=1, help="replays at once")
    c = sub.add_parser("compare")
    c.add_argument("base")
    c.add_argument("out")
    a = p.parse_args(argv)
    if a.what == "record":
        record(a.out, a.build, set(filter(None, a.only.split(","))), max(1, a.jobs))
        return 0
    return compare(a.base, a.out)


if __name__ == "__main__":
    raise SystemExit(main())
