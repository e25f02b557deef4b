"""A `pbf replay` command with its progress logged: how far a long replay got, at what cost (a benchmark
script, not a test)

    python bench/replay_progress.py LOG [--every SECONDS] -- REPLAY_ARGS...

Runs ``pbf replay REPLAY_ARGS`` in this process (``--quiet`` is fine: the log does not need the bar) and,
between the replay's chunks of instants but at most once every ``--every`` seconds (default 30), appends
a line to LOG: wall seconds, CPU seconds of this process, jobs submitted so far, the simulated day, the
queue's length, the jobs running, and the passes so far (all, full, and the jobs tested over the full
ones). A replay that cannot finish in the time there is can then be read from its log: jobs a minute,
the queue's depth, the CPU a job at that depth. Each line is flushed as written.
"""
import os
import sys
import time

import pbf.replayer as replayer
from pbf.cli.commands import main as pbf_main


def _logger(path, every):
    state = {"last": -1e9, "t0": time.perf_counter(), "c0": time.process_time()}
    out = open(path, "a", buffering=1)
    out.write(f"# {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}; pbf replay "
              f"{' '.join(sys.argv[sys.argv.index('--') + 1:])}\n")
    out.write("# wall_s cpu_s submitted total sim_day queue running passes full depth_full load1\n")

    def reporter(progress, total):
        def call(done, final=False):
            wall = time.perf_counter() - state["t0"]
            if not final and wall - state["last"] < every:
                return
            state["last"] = wall
            core = sys._getframe(1).f_locals.get("core")     # the replay loop's core
            if core is None:
                return
            t = core.pass_totals()
            out.write(f"{wall:.1f} {time.process_time() - state['c0']:.1f} {core.submitted} {total} "
                      f"{core.now / 86400:.3f} {len(core.pending())} {len(core.running())} {t['count']} "
                      f"{t['full']} {t['depth_full']} {os.getloadavg()[0]:.2f}\n")
        return call
    return reporter


def main():
    if "--" not in sys.argv or len(sys.argv) < 3:
        sys.exit(__doc__.split("\n\n")[1])
    own = sys.argv[1:sys.argv.index("--")]
    every = 30.0
    if "--every" in own:
        every = float(own[own.index("--every") + 1])
    log = own[0]
    replayer._progress_reporter = _logger(log, every)
    # a progress callable makes the replay call the reporter between chunks, --quiet or not
    orig = replayer.replay

    def replay(table, config, progress=None):
        return orig(table, config, progress=lambda done, total: None)
    replayer.replay = replay
    rc = pbf_main(["replay", *sys.argv[sys.argv.index("--") + 1:]])
    sys.exit(rc)


if __name__ == "__main__":
    main()
