"""A replay on the slurm-sim clock with 1 and 2 real threads (``pbf replay --threads``), side by side.

Each replay is its own process (``pbf replay TRACE ARGS --threads T --quiet --out DIR``), in the order
1, 2, 2, 1 per round, so that a drift of the host's load falls on both. Prints each run's whole-process
wall time and the replay's own (``summary.json``'s ``wall_s.replay``), the medians and their ratio, the
later starts the helper tested, and checks that every run wrote the same ``jobs.csv``. ``--no-trials``
shares every cycle (no trials of cycles with and without, no back-off judgement's trials: what the
helper saves where it always helps; the default is what ``pbf replay`` does).

    pbf gen archer2 --jobs 20000 --window 14d -o a2_20k.sacct --slurm-conf a2_20k.conf
    python bench/sim_threads_replay.py --rounds 2 -- a2_20k.sacct --slurm-conf a2_20k.conf
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def _child_no_trials(argv: list[str]) -> int:
    # pbf replay with every cycle sharing (Core.set_testing(split_trial_us=0))
    from unittest import mock

    from pbf import replayer
    from pbf.cli import main as pbf_main
    build = replayer.build_core

    def switched(*args: object, **kwargs: object) -> object:
        core = build(*args, **kwargs)
        core.set_testing(split_trial_us=0)
        return core

    with mock.patch.object(replayer, "build_core", switched):
        return pbf_main(argv)


def _run(args: list[str], threads: int, out: str, no_trials: bool) -> tuple[float, dict, bytes]:
    head = [sys.executable, __file__, "--child-no-trials"] if no_trials else [sys.executable, "-m", "pbf"]
    cmd = [*head, "replay", *args, "--threads", str(threads), "--quiet", "--out", out]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out, "jobs.csv"), "rb") as f:
        jobs = f.read()
    return wall, summary, jobs


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child-no-trials"]:
        return _child_no_trials(argv[1:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=2, help="rounds of 1, 2, 2, 1 threads (default 2)")
    p.add_argument("--no-trials", action="store_true", help="share every cycle (no trials)")
    p.add_argument("replay", nargs=argparse.REMAINDER, help="-- then pbf replay's trace and flags")
    a = p.parse_args(argv)
    args = a.replay[1:] if a.replay[:1] == ["--"] else a.replay
    if not args:
        p.error("give pbf replay's trace and flags after --")
    walls: dict[int, list[float]] = {1: [], 2: []}
    replays: dict[int, list[float]] = {1: [], 2: []}
    first = None
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            for i, t in enumerate((1, 2, 2, 1)):
                wall, summary, jobs = _run(args, t, os.path.join(tmp, f"r{r}-{i}"), a.no_trials)
                if first is None:
                    first = jobs
                same = jobs == first
                ps = summary["passes"]
                walls[t].append(wall)
                replays[t].append(summary["wall_s"]["replay"])
                print(f"round {r + 1} threads {t}: {wall:7.2f} s process, {summary['wall_s']['replay']:7.2f} s replay; "
                      f"{ps.get('searches_helped', 0):,} of {ps.get('searches_shared', 0):,} later starts on the "
                      f"helper, {ps.get('search_sharing_trials_won', 0)} of {ps.get('search_sharing_trials', 0)} "
                      f"trials won, {ps.get('search_helper_backoffs', 0)} back-offs; {ps['full']:,} full passes, "
                      f"mean depth {ps['mean_depth']:.1f}; jobs.csv {'same' if same else 'DIFFERENT'}", flush=True)
                if not same:
                    print("jobs.csv differs between runs", file=sys.stderr)
                    return 1
    m1, m2 = statistics.median(walls[1]), statistics.median(walls[2])
    r1, r2 = statistics.median(replays[1]), statistics.median(replays[2])
    print(f"median process: 1 thread {m1:.2f} s, 2 threads {m2:.2f} s ({m1 / m2:.2f}x); "
          f"median replay: {r1:.2f} s, {r2:.2f} s ({r1 / r2:.2f}x); {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
