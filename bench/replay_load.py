"""Does a replay's queue stay bounded at a given offered load? A `pbf replay` logged as it goes, and the
load the cluster carried, from its jobs.csv (a benchmark script, not a test)

    python bench/replay_load.py run LOG [--every S] [--max-cpu S] [--units N] -- REPLAY_ARGS...
    python bench/replay_load.py util JOBS_CSV --units N [--until T] [--days D]

``run`` runs ``pbf replay REPLAY_ARGS`` in this process and appends a line to LOG between the replay's
chunks of instants, at most every ``--every`` seconds (default 15): wall and CPU seconds, jobs
submitted, the simulated day, the queue's length, the jobs running, the units (cores) busy at that
instant (``--units`` less the units free; default 750,080: 5,860 nodes of 128 cores), the full
passes and the jobs they tested. With ``--max-cpu`` the replay is stopped once it has used that much
CPU (the log's last line says so): how far a replay whose queue grows without bound got.

``util`` reads a finished replay's ``jobs.csv`` and prints the share of the cluster's units the jobs
held (units x (end - start), summed, over N units x the span) from the first submission to ``--until``
seconds after it (default: the last submission, so that the drain after the last arrival, when
nothing more is offered, does not count), then, for each ``--days`` days (default 1): the load the
jobs submitted in it offered (units x run time over N units x the days), the load the cluster
carried in it, the jobs queued at its end, the backlog at its end (the work submitted and not yet
done, in hours of the whole cluster: bounded if the cluster keeps up, growing if it does not) and the
mean wait of the jobs submitted in it.
"""
import csv
import os
import sys
import time

import numpy as np


class _Stop(Exception):
    pass


def _run(argv):
    own, rest = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    log = own[0]
    every = float(own[own.index("--every") + 1]) if "--every" in own else 15.0
    max_cpu = float(own[own.index("--max-cpu") + 1]) if "--max-cpu" in own else float("inf")
    units = int(own[own.index("--units") + 1]) if "--units" in own else 5860 * 128
    import pbf.replayer as replayer
    from pbf.cli.commands import main as pbf_main
    state = {"last": -1e9, "t0": time.perf_counter(), "c0": time.process_time()}
    out = open(log, "a", buffering=1)
    out.write(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; pbf replay {' '.join(rest)}\n")
    out.write("# wall_s cpu_s submitted total sim_day queue running busy_units full depth_full load1\n")

    def reporter(progress, total):
        def call(done, final=False):
            wall = time.perf_counter() - state["t0"]
            cpu = time.process_time() - state["c0"]
            stop = cpu > max_cpu
            if not final and not stop and wall - state["last"] < every:
                return
            state["last"] = wall
            core = sys._getframe(1).f_locals.get("core")     # the replay loop's core
            if core is None:
                return
            t = core.pass_totals()
            busy = units - int(core.free_count)
            out.write(f"{wall:.1f} {cpu:.1f} {core.submitted} {total} {core.now / 86400:.3f} "
                      f"{len(core.pending())} {len(core.running())} {busy} {t['full']} {t['depth_full']} "
                      f"{os.getloadavg()[0]:.2f}\n")
            if stop:
                out.write(f"# stopped: {cpu:.1f} s of CPU > --max-cpu {max_cpu:g}\n")
                raise _Stop()
        return call
    replayer._progress_reporter = reporter
    orig = replayer.replay

    def replay(table, config, progress=None):
        return orig(table, config, progress=lambda done, total: None)
    replayer.replay = replay
    try:
        return pbf_main(["replay", *rest])
    except _Stop:
        return 3


def _util(argv):
    path = argv[0]
    units = int(argv[argv.index("--units") + 1])
    days = float(argv[argv.index("--days") + 1]) if "--days" in argv else 1.0
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    submit = np.array([float(r["submit"]) for r in rows])
    start = np.array([float(r["start"]) for r in rows])
    end = np.array([float(r["end"]) for r in rows])
    size = np.array([float(r["units"]) for r in rows])
    t0 = submit.min()
    until = t0 + float(argv[argv.index("--until") + 1]) if "--until" in argv else submit.max()

    def held(a, b):
        return float((size * np.clip(np.minimum(end, b) - np.maximum(start, a), 0, None)).sum()) / (units * (b - a))
    run = end - start
    print(f"jobs {len(rows)}, units {units}, span {(until - t0) / 86400:.2f} days: offered "
          f"{float((size * run)[submit <= until].sum()) / (units * (until - t0)):.4f}, carried {held(t0, until):.4f}")
    print("  day  offered  carried  queued  backlog_h  mean_wait_s")
    a, step = t0, days * 86400
    while a < until - 1:
        b = min(a + step, until)
        sub = (submit >= a) & (submit < b)
        queued = int(((submit <= b) & (start > b)).sum())
        left = np.where(submit <= b, size * np.clip(end - np.maximum(start, b), 0, None), 0.0)
        wait = float((start[sub] - submit[sub]).mean()) if sub.any() else 0.0
        print(f"{(b - t0) / 86400:5.1f} {float((size * run)[sub].sum()) / (units * (b - a)):8.4f} {held(a, b):8.4f} "
              f"{queued:7d} {float(left.sum()) / units / 3600:9.2f} {wait:11.0f}")
        a = b
    return 0


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("run", "util") or (sys.argv[1] == "run" and "--" not in sys.argv):
        sys.exit(__doc__.split("\n\n")[1])
    sys.exit(_run(sys.argv[2:]) if sys.argv[1] == "run" else _util(sys.argv[2:]))


if __name__ == "__main__":
    main()
