"""Hostile values for every numeric flag of `pbf replay` (and a few other commands), each case in a
forked child under a time and memory limit.

    python tests/fuzz_flags.py [--cases N] [--seed 0] [--timeout 30] [--memory-gb 1] [--all]

A case is one command line: a base replay (event, conservative, Slurm-like with scheduler time, a
cluster of nodes) with one or two of its flags set to a hostile value (20 digits, 2**63, 1e400, nan,
unicode digits, empty, negative...). Every case must end in exit 0 with no unit over-committed in
jobs.csv (and jobs conserved), or exit 2 with one `pbf: error:` line and nothing written; never an
exception, a signal, more than the time limit or more than the memory limit (RSS above the start).
`--all` runs every flag x value x base (the exhaustive sweep); otherwise `--cases` random ones.
Prints a JSON report; exit 1 on any problem. tests/test_hostile_flags.py runs it with a few hundred.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from pathlib import Path

HOSTILE = ["99999999999999999999", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
           "1099511627776", "4294967296", "1e400", "1e308", "1e18", "nan", "inf", "-inf", "-1", "0", "1",
           "\u00b2", "\u0661\u0662", "", " ", "abc", "1.5", "0x10", "1_000", "1d", "99999999999d", "-1d", "3" * 400,
           "1e-300", "2147483648"]
# flags whose values are names or files: hostile text there is covered by their own readers' tests
NOT_NUMERIC = {"--preset", "--priority", "--predictor", "--correction", "--order", "--out", "--failures",
               "--mf-associations", "--slurm-conf", "--cluster", "--coalloc", "--mf-weight", "--mf-partition",
               "--mf-qos", "--trace", "--help"}
KEYED = {"--mf-weight": "age={}", "--mf-partition": "1={}", "--mf-qos": "1={}", "--coalloc": "fixed:{}"}
# the co-allocation options, each given a hostile value in turn
COALLOC = ["asax:beta={}", "asax:interval={}", "asax:seed={}", "hedge:tau={}", "exp3:dmax={}", "asax:lam={}",
           "asax:node_cores={}", "asax:cpu={}"]


def write_inputs(tmp: Path) -> dict[str, str]:
    """A small SWF trace (8 units), and a TOML cluster of two 4-core nodes."""
    lines = ["; MaxProcs: 8"]
    for i in range(1, 21):
        lines.append(f"{i} {i * 3} 0 {30 + i * 13 % 90} {1 + i % 8} -1 -1 {1 + i % 8} {200 + i} -1 1 "
                     f"{1 + i % 3} 1 -1 1 -1 -1 -1")
    trace = tmp / "t.swf"
    trace.write_text("\n".join(lines) + "\n")
    toml = tmp / "c.toml"
    toml.write_text('[[nodes]]\nnames = "n[1-2]"\ncores = 4\nmemory_mb = 8000\ngpus = 1\n')
    return {"trace": str(trace), "toml": str(toml)}


def bases(files: dict[str, str]) -> dict[str, list[str]]:
    t = files["trace"]
    return {"event": ["replay", t, "--units", "8"],
            "conservative": ["replay", t, "--units", "8", "--reservations", "unlimited"],
            "slurm": ["replay", t, "--units", "8", "--preset", "slurm"],
            "nodes": ["replay", t, "--cluster", files["toml"], "--reservations", "unlimited"],
            "slurm-nodes": ["replay", t, "--cluster", files["toml"], "--preset", "slurm", "--node-search", "slurm"]}


def replay_flags() -> list[str]:
    from pbf.cli import build_parser
    parser = build_parser(["replay"])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for action in sub.choices["replay"]._actions:
        if not action.option_strings or action.nargs == 0 or action.choices:
            continue
        flag = max(action.option_strings, key=len)
        if flag not in NOT_NUMERIC or flag in KEYED:
            out.append(flag)
    return sorted(out)


OTHER = [  # other commands: (argv with {} for the hostile value)
    ["bench", "--workers", "{}", "--slice", "bitmap", "--quick", "--trials", "1", "--no-reference"],
    ["experiment", "parallel-backfill", "--jobs", "{}", "--help"],
    ["gen", "beocat", "--jobs", "20", "--window", "{}", "-o", "{out}/g.swf"],
    ["gen", "lublin", "--jobs", "{}", "-o", "{out}/l.swf"],
    ["gen", "rescale", "{trace}", "--window", "{}", "-o", "{out}/r.swf"],
    ["trace", "info", "{trace}", "--units", "{}"],
]


def overcommit(out_dir: Path, capacity: int | None) -> str | None:
    """A reason if jobs.csv has more units busy at some time than the cluster has."""
    import numpy as np
    path = out_dir / "jobs.csv"
    if not path.exists():
        return "exit 0 without jobs.csv"
    data = np.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8")
    data = np.atleast_1d(data)
    # (co-allocated jobs run on cores their primaries lent: they hold no units of their own)
    ran = (data["start"] >= 0) & (data["how"] != "co-allocated")
    summary = json.loads((out_dir / "summary.json").read_text())
    capacity = summary["units"]
    if not ran.any():
        return None
    starts, ends, units = data["start"][ran], data["end"][ran], data["units"][ran]
    times = np.concatenate([starts, ends])
    delta = np.concatenate([units, -units])
    order = np.lexsort((delta, times))           # ends before starts at the same time
    busy = np.cumsum(delta[order])
    if busy.max() > capacity:
        return f"over-commit: {int(busy.max())} units busy on {capacity}"
    return None


def child(argv: list[str], out_dir: Path, capacity: int | None, fd: int) -> None:
    """Run one case and write its verdict (JSON) to ``fd``."""
    from pbf.cli import main
    err, out = io.StringIO(), io.StringIO()
    verdict = {"argv": argv}
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
    except SystemExit as exc:
        code = exc.code
    except BaseException:            # noqa: BLE001 - the finding itself
        verdict["problem"] = "exception: " + traceback.format_exc()[-1500:]
        code = None
    if code is not None:
        lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
        errors = [ln for ln in lines if "error:" in ln]
        if code == 2:
            verdict["outcome"] = "refused"
            if len(errors) != 1 or not errors[0].startswith("pbf") or "Traceback" in err.getvalue():
                verdict["problem"] = f"exit 2 without one 'pbf: error:' line: {lines[-3:]!r}"
            elif out_dir.exists() and any(out_dir.iterdir()):
                verdict["problem"] = f"exit 2 but {sorted(p.name for p in out_dir.iterdir())} written"
            verdict["error"] = errors[-1] if errors else ""
        elif code == 0:
            verdict["outcome"] = "ok"
            if "--out" in argv and argv[0] == "replay":
                problem = overcommit(out_dir, capacity)
                if problem:
                    verdict["problem"] = problem
        else:
            verdict["problem"] = f"exit {code}: {lines[-3:]!r}"
    os.write(fd, json.dumps(verdict).encode())
    os.close(fd)


def run(argv: list[str], out_dir: Path, capacity: int | None, timeout: float, memory_mb: float) -> dict:
    """One case in a forked child: its verdict, or a timeout / memory / signal problem."""
    import psutil
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child
        os.close(r)
        try:
            child(argv, out_dir, capacity, w)
        finally:
            os._exit(0)
    os.close(w)
    proc = psutil.Process(pid)
    base_rss = psutil.Process().memory_info().rss
    t0, peak, problem = time.monotonic(), 0, None
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        try:
            peak = max(peak, proc.memory_info().rss - base_rss)
        except psutil.Error:
            pass
        if peak > memory_mb * (1 << 20):
            problem = f"memory: {peak / (1 << 20):.0f} MB above the start"
        elif time.monotonic() - t0 > timeout:
            problem = f"hang: over {timeout:.0f} s"
        if problem:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            break
        time.sleep(0.02)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.close(r)
    verdict = json.loads(data) if data else {"argv": argv}
    if problem:
        verdict["problem"] = problem
    elif not data:
        verdict["problem"] = f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else "no verdict"
    verdict["seconds"] = round(time.monotonic() - t0, 2)
    verdict["extra_rss_mb"] = round(peak / (1 << 20))
    return verdict


def all_cases(files: dict[str, str], out: str) -> list[tuple[list[str], int | None]]:
    cases = []
    flags = replay_flags()
    for base in bases(files).values():
        capacity = 8
        for flag in flags:
            for value in HOSTILE:
                shown = KEYED.get(flag, "{}").format(value)
                cases.append((base + [flag, shown], capacity))
    for option in COALLOC:
        for value in HOSTILE:
            cases.append((bases(files)["event"] + ["--coalloc", option.format(value)], 8))
    for template in OTHER:
        for value in HOSTILE:
            argv = [a.replace("{trace}", files["trace"]).replace("{out}", out) for a in template]
            cases.append(([value if a == "{}" else a for a in argv], None))
    return cases


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--memory-gb", type=float, default=1.0)
    ap.add_argument("--all", action="store_true", help="every flag x value x base")
    args = ap.parse_args(argv)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    import pbf.cli  # noqa: F401  (imported once, before the forks)
    import pbf.replayer  # noqa: F401
    problems, outcomes = [], {"ok": 0, "refused": 0}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        files = write_inputs(Path(tmp))
        gen_out = Path(tmp) / "gen"
        cases = all_cases(files, str(gen_out))
        if not args.all:
            cases = random.Random(args.seed).sample(cases, min(args.cases, len(cases)))
        for k, (case, capacity) in enumerate(cases):
            out_dir = Path(tmp) / f"out{k}"
            full = case + (["--out", str(out_dir), "--quiet"] if case[0] == "replay" else [])
            gen_out.mkdir(exist_ok=True)
            verdict = run(full, out_dir, capacity, args.timeout, args.memory_gb * 1024)
            if "problem" in verdict:
                problems.append(verdict)
            else:
                outcomes[verdict["outcome"]] += 1
    report = {"cases": len(cases), "seed": args.seed, **outcomes, "problems": problems,
              "wall_s": round(time.perf_counter() - t0, 1)}
    print(json.dumps(report, indent=1))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
