"""pbf's share of an AccaSim run, against AccaSim's own EASY dispatcher on the same jobs.

    python bench/accasim_share.py [--trace SDSC-SP2-1998-4.2-cln.swf.gz] [--jobs 10000] [--units 128]
                                  [--mode easy] [--trials 3]

A slice of a log (the first ``--jobs`` jobs of a real log found by name through $PBF_TRACES or
../shared/traces, or a path; run times cut at the request, submit times from 1,000 s) runs in AccaSim
on ``--units`` one-core nodes, once with pbf's dispatcher (:class:`pbf.hosts.accasim.PbfDispatcher`)
and once with AccaSim's ``EASYBackfilling(FirstFit())``, the two interleaved ``--trials`` times.
Prints the medians of: the whole simulation (``start_simulation``), the time inside each
dispatcher's ``schedule`` calls (AccaSim's entry point; the calling thread's CPU time, and the wall
time, which the machine's load inflates; for pbf also inside the engine's calls), the calls, and
pbf's dispatcher time as a share of AccaSim's EASY dispatcher time (target: at most 10%). AccaSim
1.1.3 must be installed (``pip install accasim``).

Example (docs/hosts.md, "Cost of a call"): ``python bench/accasim_share.py``.
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import pbf
from pbf.hosts.accasim import PbfDispatcher, StartLog  # (first: AccaSim on Python >= 3.10)

# isort: split
from accasim.base.allocator_class import FirstFit  # noqa: E402
from accasim.base.scheduler_class import EASYBackfilling  # noqa: E402
from accasim.base.simulator_class import Simulator  # noqa: E402


def timed(cls):
    """``cls`` with the time inside its ``schedule`` calls counted: ``schedule_s`` (the calling thread's
    CPU time, which the machine's other load does not inflate), ``schedule_wall_s``, ``schedule_calls``."""
    class Timed(cls):
        schedule_s = 0.0
        schedule_wall_s = 0.0
        schedule_calls = 0

        def schedule(self, cur_time, es_dict, es):
            t, c = time.perf_counter(), time.thread_time()
            try:
                return super().schedule(cur_time, es_dict, es)
            finally:
                self.schedule_s += time.thread_time() - c
                self.schedule_wall_s += time.perf_counter() - t
                self.schedule_calls += 1
    Timed.__name__ = cls.__name__
    return Timed


def workload(trace: str, jobs: int, out: str) -> pbf.JobTable:
    path = trace if os.path.exists(trace) else str(pbf.studies.traces.shared_trace(trace))
    table = pbf.read_swf(path)
    table = table.take(np.arange(min(jobs, len(table))))
    table.columns["submit"] = table.submit - table.submit.min() + 1000
    table.columns["run"] = np.minimum(table.run, table.req_time)
    pbf.write_swf(table, out)
    return pbf.read_swf(out)


def run(dispatcher, work: str, system: str, results: str) -> tuple[float, dict]:
    sim = Simulator(work, system, dispatcher, additional_data=[StartLog], RESULTS_FOLDER_PATH=results,
                    scheduling_output=False, statistics_output=False, show_statistics=False, LOG_LEVEL="ERROR")
    log = StartLog.of(sim)
    t = time.perf_counter()
    sim.start_simulation()
    return time.perf_counter() - t, log.starts


def main():
    import pbf.studies.traces  # noqa: F401  (shared_trace)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trace", default="SDSC-SP2-1998-4.2-cln.swf.gz")
    ap.add_argument("--jobs", type=int, default=10_000)
    ap.add_argument("--units", type=int, default=128)
    ap.add_argument("--mode", default="easy")
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pbf-accasim-")
    work, system = os.path.join(tmp, "w.swf"), os.path.join(tmp, "system.json")
    table = workload(args.trace, args.jobs, work)
    with open(system, "w") as f:
        f.write(f'{{"groups": {{"g": {{"core": 1}}}}, "resources": {{"g": {args.units}}}}}')
    ref = pbf.replay(table, pbf.ReplayConfig(units=args.units, backfill=pbf.hosts.backfill_of(args.mode))).jobs
    want = {str(i): s for i, s in zip(ref["id"].tolist(), ref["start"].tolist()) if s >= 0}
    rows = {"pbf": [], "easy": []}
    for _ in range(args.trials):
        d = timed(PbfDispatcher)(args.mode)
        total, starts = run(d, work, system, os.path.join(tmp, "out"))
        d.close()
        same = sum(starts.get(i, (None,))[0] == s for i, s in want.items())
        rows["pbf"].append((total, d.schedule_s, d.engine_seconds, d.schedule_calls, same, d.schedule_wall_s))
        e = timed(EASYBackfilling)(FirstFit())
        total, _ = run(e, work, system, os.path.join(tmp, "out"))
        rows["easy"].append((total, e.schedule_s, 0.0, e.schedule_calls, 0, e.schedule_wall_s))
    med = {k: [statistics.median(c) for c in zip(*v)] for k, v in rows.items()}
    p, e = med["pbf"], med["easy"]
    print(f"{len(table):,} jobs of {os.path.basename(args.trace)} on {args.units} one-core nodes, "
          f"pbf mode {args.mode}, medians of {args.trials} interleaved runs; cores {os.cpu_count()}, load average "
          f"{os.getloadavg()[0]:.2f}; dispatcher times in CPU time of the calling thread (wall time in brackets)")
    print(f"  AccaSim + pbf:                {p[0]:8.2f} s in all, {p[1]:7.3f} s in the dispatcher ({p[5]:.3f} s), "
          f"{p[2]:7.3f} s (wall) in the engine's calls; {p[3]:,.0f} calls ({p[1] / p[3] * 1e6:.0f} us a call); "
          f"starts identical to pbf replay: {p[4]:,.0f} of {len(want):,}")
    print(f"  AccaSim + its EASYBackfilling: {e[0]:8.2f} s in all, {e[1]:7.3f} s in the dispatcher ({e[5]:.3f} s); "
          f"{e[3]:,.0f} calls ({e[1] / e[3] * 1e6:.0f} us a call)")
    print(f"  pbf's dispatcher time / AccaSim EASY's: {p[1] / e[1]:.1%} of CPU ({p[5] / e[5]:.1%} of wall time; "
          "target <= 10%)")


if __name__ == "__main__":
    main()
