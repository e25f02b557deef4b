"""Microbenchmarks of backfill passes and replay throughput (``pbf bench`` and ``bench/``).

A *pass scenario* is a cluster in mid-life: ``running`` jobs hold about 90% of the units and end at
spread-out times, ``queued`` jobs wait (most too wide to start now, some small enough to backfill).
:meth:`PassScenario.core` builds the compiled engine in that state, ready for one full pass at
``now``; :meth:`PassScenario.reference` builds the pure-Python oracle in the same state. Every
measurement records the work the pass did (jobs tested, started, reservations), so a benchmark that
measured nothing cannot pass unnoticed.

Timing habits (the machine is shared and noisy): trials of the things compared are interleaved, the
median and the best are reported, and the CPU that *other* processes used during the run is measured
(psutil) and printed, so a reader knows whether the numbers are clean.
"""
from __future__ import annotations

import gc
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import _core
from ._pass_cost import PassCostPredictor
from .benchmark_text import format_rows, ratio_text, within_noise
from .config import Backfill
from .host import MachineLoad, one_cpu
from .reference.engine_ref import ReferenceCore
from .studies.traces import shared_trace_dir

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    import numpy.typing as npt

    #: (units, estimate) columns of a group of jobs
    _JobColumns = tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]

__all__ = ["PassScenario", "MachineLoad", "time_pass", "bitmap_rows", "pass_rows", "growth_rows",
           "replay_rows", "rl_rows", "format_rows", "PASS_MATRIX", "LARGE_NODES", "pass_scenarios", "run_slices",
           "within_noise", "ratio_text", "skipped_logs_note"]

NOW = 1   # passes are measured at t = 1; the set-up pass that starts the running jobs is at t = 0

#: The pass matrix: queued x units x running x reservations (pytest bench adds workers and commit orders).
PASS_MATRIX = {"queued": (100, 1_000, 10_000, 50_000), "units": (128, 1_024, 9_128, 100_000),
               "running": (10, 1_000, 10_000), "reservations": (1, None)}


@dataclass(frozen=True)
class PassScenario:
    """A deterministic mid-life cluster: ``running`` jobs on ``units`` units, ``queued`` waiting."""
    queued: int
    units: int
    running: int
    reservations: int | None = 1
    order: str = "queue"
    seed: int = 0
    max_job_test: int | None = None

    @property
    def backfill(self) -> Backfill:
        """The backfill settings of the scenario's passes."""
        return Backfill(reservations=self.reservations, order=self.order, max_job_test=self.max_job_test)

    @property
    def depth(self) -> int:
        """Jobs the pass tests: the queue, or ``max_job_test`` of it."""
        return self.queued if self.max_job_test is None else min(self.queued, self.max_job_test)

    def feasible(self) -> bool:
        """Running jobs need a unit each, within the 90% of the cluster they hold."""
        return self.running <= 0.9 * self.units

    def jobs(self) -> tuple[_JobColumns, _JobColumns]:
        """(units, est) of the running jobs, then of the queued jobs."""
        rng = np.random.default_rng([self.seed, self.queued, self.units, self.running])
        busy = int(0.9 * self.units)
        # running sizes: a random split of `busy` units into `running` parts of at least one unit
        cuts = np.sort(rng.choice(np.arange(1, busy), size=self.running - 1, replace=False)) \
            if self.running > 1 else np.array([], dtype=np.int64)
        run_units = np.diff(np.r_[0, cuts, busy]).astype(np.int64)
        run_left = rng.integers(60, 48 * 3600, size=self.running)  # remaining time of each
        # queued: 60% need 1-4 units, 30% a few percent of the cluster, 10% up to half of it
        kind = rng.random(self.queued)
        q_units = np.where(kind < 0.6, rng.integers(1, 5, self.queued),
                           np.where(kind < 0.9, rng.integers(1, max(2, self.units // 25), self.queued),
                                    rng.integers(1, max(2, self.units // 2), self.queued)))
        q_units = np.minimum(q_units, self.units)
        q_est = rng.integers(60, 72 * 3600, size=self.queued)
        return (run_units, run_left + NOW), (q_units.astype(np.int64), q_est.astype(np.int64))

    def core(self, record_passes: bool = True) -> _core.Core:
        """The compiled engine in the scenario's state (running jobs started at t = 0)."""
        (ru, rl), (qu, qe) = self.jobs()
        core = _core.Core(self.units)
        core.configure(**self.backfill.core_settings(), record_passes=int(record_passes))
        zeros = np.zeros(len(ru), dtype=np.int64)
        first = core.add_jobs(zeros, ru, rl, np.full(len(ru), -1, dtype=np.int64))
        core.submit_range(first, len(ru))
        core.configure(max_job_test=-1)            # the set-up pass starts every running job
        core.run_pass(0)
        core.configure(**self.backfill.core_settings())
        assert len(core.running()) == self.running, "set-up: every running job must start"
        first = core.add_jobs(np.full(len(qu), NOW, dtype=np.int64), qu, qe,
                              np.full(len(qu), -1, dtype=np.int64))
        core.submit_range(first, len(qu))
        return core

    def reference(self) -> ReferenceCore:
        """The pure-Python oracle in the same state."""
        (ru, rl), (qu, qe) = self.jobs()
        ref = ReferenceCore(self.units, **self.backfill.reference_kwargs())
        for u, e in zip(ru.tolist(), rl.tolist()):
            ref.submit(ref.add_job(0, u, e))
        ref.max_job_test = -1
        ref.full_pass(0)
        ref.max_job_test = self.backfill.reference_kwargs()["max_job_test"]
        for u, e in zip(qu.tolist(), qe.tolist()):
            ref.submit(ref.add_job(NOW, u, e))
        return ref

    def reference_affordable(self) -> bool:
        """Whether the pure-Python reference pass finishes in seconds on this scenario (it is
        quadratic in slots for conservative passes and works on big integers of ``units`` bits)."""
        if self.reservations == 1:
            return self.queued * self.units <= 50_000 * 9_128
        return self.depth <= 500 and self.units <= 9_128 and self.running <= 100

    def matrix_affordable(self) -> bool:
        """Conservative passes over deep queues cost seconds to minutes: the matrix runs them up to
        1,000 queued jobs (run deeper ones explicitly)."""
        return self.feasible() and (self.reservations == 1 or self.depth <= 1_000)

    def label(self) -> str:
        """The scenario's parameters, as benchmark tables show them."""
        resv = "unlimited" if self.reservations is None else self.reservations
        cap = "" if self.max_job_test is None else f" max_job_test={self.max_job_test}"
        return f"queued={self.queued} units={self.units} running={self.running} reservations={resv}{cap}"


def time_pass(scenario: PassScenario, engine: str = "compiled", workers: int = 1,
              costs: Mapping[str, float] | None = None,
              figures: dict[str, Any] | None = None, pool_first: int = 0) -> tuple[float, dict[str, int]]:
    """One full pass on a fresh copy of the scenario: ``(seconds, work)``; set-up is not timed.
    ``work`` = {depth, started, reservations}. With ``workers`` > 1 the pass uses the pool whatever
    its size (the profile build and the start-now tail: see docs/engine.md), unless ``costs`` are
    given: then the pass-cost predictor, primed with these figures (:meth:`pbf._pass_cost.PassCostPredictor.set`),
    chooses as a replay would after passes like it. The thread pool's start is not timed.
    ``figures``, if given, receives the predictor's figures after the pass
    (:meth:`pbf._core.Core.pass_cost`, with ``overhead_ns``: the overhead it predicted). Steady
    state: the profile's memory, and with a pool the workers' copies of it, are touched once before
    (a replay reuses them pass after pass) and the pool's threads are up. ``pool_first`` = N (with
    ``workers`` = 1): a pool of N is started and stopped again before the pass, untimed, so that the
    pass starts from the state a pool's start leaves (the baseline of the automatic choice: starting
    threads slows the next pass of a few microseconds by a third whatever runs it, and a replay
    starts its pool once)."""
    if engine == "compiled":
        # steady state, as in a replay: the pool's threads are parked, the scenario's memory is in
        # the caches of the CPU the pass runs on (the calling thread is held on one CPU while it
        # builds the scenario and while it times the pass, but not while it starts the pool, whose
        # threads must be free to run on the others: a pass of microseconds that starts on the
        # other CPU after the pool's start, which waits for every thread, measures the move), and
        # the profile's memory (and the workers' copies: profile_ops makes them) has been used
        # before (its first touch costs page faults that no later pass pays)
        with one_cpu():
            core = scenario.core()
        overhead, copies = 0.0, False
        if pool_first and workers != 1:
            raise ValueError(f"pool_first is for a 1-worker pass, got workers={workers}")
        if workers == 1 and pool_first > 1:
            core.start_pool(pool_first)
            core.start_pool(1)
        if workers > 1:
            core.set_testing(parallel_min_queue=1, parallel=0 if costs is not None else 1)
            core.start_pool(workers)
            if costs is not None:
                PassCostPredictor(core).set(**costs)
            predicted = PassCostPredictor(core).predict()
            overhead = predicted["overhead_ns"]
            # (the workers' copies of the profile exist only where passes go to the threads: a
            # replay whose passes stay on one thread never makes them)
            copies = costs is None or predicted["pays"]
            # (no sleep: the pool's start waited for every thread to park; an idle pause before a
            # pass of microseconds slows it by as much as the pass)
        empty = np.zeros(0, dtype=np.int64)
        with one_cpu():
            core.profile_ops(NOW, empty, empty, 1, copies)
            gc.disable()
            t0 = time.perf_counter()
            core.run_pass(NOW)
            dt = time.perf_counter() - t0
            gc.enable()
        core.stop_pool()
        rec = core.last_pass()
        if figures is not None:
            figures.update(PassCostPredictor(core).figures(), overhead_ns=overhead)
        return dt, {"depth": rec["depth"], "started": rec["started"], "reservations": rec["reservations"]}
    ref = scenario.reference()
    t0 = time.perf_counter()
    started, reserved = ref.full_pass(NOW)
    dt = time.perf_counter() - t0
    return dt, {"depth": ref.passes[-1][2], "started": len(started), "reservations": len(reserved)}


def _stats(times):
    return {"best_s": min(times), "median_s": statistics.median(times), "trials": len(times)}


# ---------------------------------------------------------------------------------------- slices
def bitmap_rows(sizes: Iterable[int] = (64, 1_024, 9_128, 100_000), repeat: int = 200) -> list[dict[str, Any]]:
    """Bitmap operations through :mod:`pbf.bitmap` (argument checks included: what a caller pays)."""
    from . import bitmap
    rows = []
    rng = np.random.default_rng(0)
    for n in sizes:
        a, b = bitmap.empty(n), bitmap.empty(n)
        bits_a = rng.random(n) < 0.5
        bits_b = rng.random(n) < 0.3
        for i in np.flatnonzero(bits_a):
            a[i // 64] |= np.uint64(1) << np.uint64(i % 64)
        for i in np.flatnonzero(bits_b):
            b[i // 64] |= np.uint64(1) << np.uint64(i % 64)
        expect = {"popcount": int(bits_a.sum()), "count_and": int((bits_a & bits_b).sum())}
        quarter = int(bits_a.sum()) // 4
        ops = {"popcount": lambda a=a: bitmap.popcount(a), "count_and": lambda a=a, b=b: bitmap.count_and(a, b),
               "any_common": lambda a=a, b=b: bitmap.any_common(a, b),
               "andnot": lambda a=a, b=b: bitmap.andnot(a, b),
               "first_fit(n/4)": lambda a=a, q=quarter: bitmap.first_fit(a, q)}
        for name, op in ops.items():
            result = op()
            if name in expect:
                assert result == expect[name], f"{name} on {n} bits: got {result}, expected {expect[name]}"
            times = []
            for _ in range(5):
                t0 = time.perf_counter()
                for _ in range(repeat):
                    op()
                times.append((time.perf_counter() - t0) / repeat)
            rows.append({"slice": "bitmap", "name": name, "params": f"units={n}", **_stats(times)})
    return rows


def pass_rows(scenarios: Iterable[PassScenario], trials: int = 5, reference: bool = True,
              reference_limit: float = 60.0, workers: Sequence[int] = (2,),
              slice_name: str = "pass") -> list[dict[str, Any]]:
    """Compiled pass against the pure-Python reference pass and against itself on N workers (every
    pass on the threads, and the automatic choice: the predictor primed with the trial's measured
    sequential and parallel passes, as a replay of such passes would have it, and its ratio taken
    to 1 worker after the same pool start), trials interleaved.
    The reference is skipped where it would take too long (see
    :meth:`PassScenario.reference_affordable`)."""
    rows = []
    for sc in scenarios:
        comp, ref = [], []
        par = {n: [] for n in workers}
        auto = {n: [] for n in workers}
        auto_base = {n: [] for n in workers}
        auto_parallel = dict.fromkeys(workers, 0)
        overheads = {n: [] for n in workers}
        work = None
        ref_ok = reference and sc.reference_affordable()
        for trial in range(trials):
            dt, done = time_pass(sc)
            assert done["depth"] == sc.depth, f"{sc.label()}: the pass tested {done['depth']} of {sc.depth} jobs"
            assert work is None or done == work, "a pass on the same state must do the same work"
            work = done
            comp.append(dt)
            for n in workers:
                forced = {}
                pt, pdone = time_pass(sc, workers=n, figures=forced)
                assert pdone == work, f"{sc.label()}: {n} workers did different work: {pdone} vs {work}"
                par[n].append(pt)
                overheads[n].append(forced["overhead_ns"] * 1e-9)
                # the automatic choice, its predictor primed with this trial's two measured passes
                # (the 1-worker one on a fresh core: it only decides whether the pass goes to the
                # threads; the ratio is then taken to 1 worker after the same pool start)
                costs = {"seq_ns_per_test": dt * 1e9 / max(1, work["depth"]), "seq_passes": 1,
                         "par_ns_per_test": forced["par_ns_per_test"], "par_passes": 1}
                bt, bdone = time_pass(sc, pool_first=n)
                assert bdone == work, f"{sc.label()}: 1 worker after a pool's start did different work"
                auto_base[n].append(bt)
                chosen = {}
                at, adone = time_pass(sc, workers=n, costs=costs, figures=chosen)
                assert adone == work, f"{sc.label()}: {n} workers (automatic) did different work: {adone} vs {work}"
                auto[n].append(at)
                auto_parallel[n] += chosen["last_parallel"]
            if ref_ok:
                rt, rdone = time_pass(sc, "reference")
                assert rdone == work, f"{sc.label()}: the reference did different work: {rdone} vs {work}"
                ref.append(rt)
                if rt * trials > reference_limit * 3 or trial >= 2 and sum(ref) > reference_limit:
                    ref_ok = False
        row = {"slice": slice_name, "name": "one full pass", "params": sc.label(), **_stats(comp), **work}
        for n, times in par.items():
            row[f"speedup_{n}_workers_within_noise"] = within_noise(comp, times)
            row[f"auto_{n}_within_noise"] = within_noise(auto_base[n], auto[n])
            row[f"workers_{n}_median_s"] = statistics.median(times)
            row[f"workers_{n}_best_s"] = min(times)
            row[f"speedup_{n}_workers"] = statistics.median(comp) / statistics.median(times)
            row[f"speedup_{n}_workers_best"] = min(comp) / min(times)
            row[f"workers_{n}_overhead_s"] = statistics.median(overheads[n])   # predicted: wake-up, copies
            row[f"auto_{n}_median_s"] = statistics.median(auto[n])
            # against 1 worker after the same pool start (see time_pass's pool_first)
            row[f"auto_{n}_baseline_median_s"] = statistics.median(auto_base[n])
            row[f"auto_{n}_speedup"] = statistics.median(auto_base[n]) / statistics.median(auto[n])
            row[f"auto_{n}_parallel_trials"] = auto_parallel[n]
        if ref:
            row["reference_median_s"] = statistics.median(ref)
            row["ratio_vs_reference"] = statistics.median(ref) / statistics.median(comp)
        rows.append(row)
    return rows


def growth_rows(queue_sizes: Sequence[int] = (1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000),
                unit_sizes: Sequence[int] = (128, 512, 2_048, 9_128, 32_768, 100_000),
                trials: int = 3) -> list[dict[str, Any]]:
    """Pass time against queue length (9,128 units, 2,000 running) and against units (10,000 queued,
    running = min(2,000, units / 4)), with the fitted log-log slopes (1 = linear)."""
    rows = []
    for axis, values in (("queued", queue_sizes), ("units", unit_sizes)):
        xs, ys = [], []
        for v in values:
            sc = (PassScenario(v, 9_128, 2_000) if axis == "queued"
                  else PassScenario(10_000, v, min(2_000, v // 4)))
            times = [time_pass(sc)[0] for _ in range(trials)]
            xs.append(v)
            ys.append(statistics.median(times))
            rows.append({"slice": "growth", "name": f"pass time vs {axis}", "params": sc.label(),
                         **_stats(times)})
        slope = float(np.polyfit(np.log(xs), np.log(ys), 1)[0])
        half = len(xs) // 2
        tail = float(np.polyfit(np.log(xs[half:]), np.log(ys[half:]), 1)[0])
        rows.append({"slice": "growth", "name": f"log-log slope vs {axis}", "params":
                     f"{xs[0]}..{xs[-1]}", "slope": slope, "slope_upper_half": tail})
    return rows


_REPLAY_CHILD = r"""
import json, resource, sys, time
from pbf.config import Backfill
from pbf.replayer import ReplayConfig, replay
from pbf.workload import read_swf
from pbf.workload.beocat import generate_beocat, TRAFFIC_WINDOWS
name, trigger, mode = sys.argv[1], sys.argv[2], sys.argv[3]
if name == "beocat-slice":
    # a Slurm-like slice: 20,000 Beocat-like jobs in 1.4 days (the high-traffic arrival rate)
    table = generate_beocat(20_000, int(1.4 * 86400), seed=0)
elif name.startswith("beocat-"):
    table = generate_beocat(100_000, TRAFFIC_WINDOWS[name.split("-")[1]], seed=0)
else:
    table = read_swf(name)
t0 = time.perf_counter()
if mode == "slurm-sim":
    # the slurm preset: Slurm's backfill under the slurm-sim clock
    config = ReplayConfig.from_preset("slurm", units=9128 if name.startswith("beocat") else None)
else:
    # Slurm-like: a reservation for every tested job, bf_max_job_test 500 (Slurm's default)
    backfill = Backfill(reservations=None, max_job_test=500) if mode == "slurm" else Backfill()
    config = ReplayConfig(trigger=trigger, backfill=backfill)
r = replay(table, config)
wall = time.perf_counter() - t0
s = r.summary
assert s["jobs"]["completed"] + s["jobs"]["rejected"] == len(table)
print(json.dumps({"jobs": len(table), "passes": s["passes"]["count"], "wall_s": wall,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def replay_rows(names: Iterable[str] | None = None, trials: int = 1) -> list[dict[str, Any]]:
    """Replay throughput, each trace in its own process (for its peak RSS): jobs/s, passes/s, wall.
    ``names``: trace paths or ``beocat-high`` / ``beocat-low`` / ``beocat-slice`` (20,000 jobs in 1.4
    days), each optionally suffixed ``+slurm`` (Slurm-like passes: a reservation per tested job,
    ``max_job_test`` 500) or ``+slurm-sim`` (the ``slurm`` preset: also the slurm-sim clock);
    default: the real logs at hand, SDSC-SP2 again Slurm-like, the two Beocat-like traces, the
    Beocat-like slice Slurm-like under both clocks, and ``archer2``: `pbf gen archer2`'s 20,000 jobs in two
    weeks on 5,860 nodes of 128 cores, replayed from its sacct dump and slurm.conf."""
    rows = []
    if names is None:
        names = []
        d = shared_trace_dir()
        logs = ("SDSC-SP2-1998-4.2-cln.swf.gz", "HPC2N-2002-2.2-cln.swf.gz", "LLNL-Thunder-2007-1.1-cln.swf.gz")
        for f in logs:
            if d is not None and (d / f).exists():
                names.append(str(d / f))
        if d is not None and (d / "SDSC-SP2-1998-4.2-cln.swf.gz").exists():
            names.append(str(d / "SDSC-SP2-1998-4.2-cln.swf.gz") + "+slurm")
        missing = [f for f in logs if d is None or not (d / f).exists()]
        if missing:
            rows.append({"slice": "replay", "name": "skipped", "skipped": missing,
                         "note": skipped_logs_note(missing, d)})
        names += ["beocat-high", "beocat-low", "beocat-slice+slurm", "beocat-slice+slurm-sim", "archer2"]
    for name in names:
        if name == "archer2":
            from .benchmark_nodes import archer2_replay_row
            rows.append(archer2_replay_row(trials))
            continue
        name, _, mode = name.partition("+")
        trigger = "interval" if name.startswith("beocat-") or mode == "slurm-sim" else "event"
        results = []
        for _ in range(trials):
            env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
            out = subprocess.run([sys.executable, "-c", _REPLAY_CHILD, name, trigger, mode or "easy"], check=True,
                                 capture_output=True, text=True, env=env).stdout
            results.append(json.loads(out))
        walls = [r["wall_s"] for r in results]
        r = results[0]
        med = statistics.median(walls)
        label = {"": "", "slurm": " slurm-like", "slurm-sim": " slurm preset (slurm-sim clock)"}[mode]
        rows.append({"slice": "replay", "name": Path(name).name + label,
                     "params": f"trigger={trigger}",
                     **_stats(walls), "jobs": r["jobs"], "passes": r["passes"],
                     "jobs_per_s": r["jobs"] / med, "passes_per_s": r["passes"] / med,
                     "peak_rss_mb": max(x["peak_rss_mb"] for x in results)})
    return rows


def skipped_logs_note(missing: Sequence[str], folder: Path | None) -> str:
    """The line that says which real logs a benchmark skipped and where it looked."""
    where = (f"not in {folder}" if folder is not None
             else "$PBF_TRACES is not set and no ../shared/traces is next to the package")
    return f"skipped {', '.join(missing)}; {where}; set PBF_TRACES to the folder of the real logs"


def rl_rows(trials: int = 5, seconds: float = 1.0) -> list[dict[str, Any]]:
    """The learned-policy layer: environment steps per second (random valid actions, 256-job
    windows of ``rlsched_lublin_256`` or, without the real logs, a generated Lublin-1 trace, with
    the SJF and F1 baselines run at every reset as RLScheduler does) beside the plain-Python
    reference of RLScheduler's loop (:mod:`pbf.reference.rlscheduler`) on the same windows in the
    same run, the vector form, one kernel decision over 128 rows, and the backfilling rows."""
    try:
        import gymnasium  # noqa: F401
    except ImportError:
        return []
    from .reference.rlscheduler import ReferenceJobSelectionEnv
    from .rl.env import JobSelectionEnv, VecJobSelection
    from .rl.kernel import KernelPolicy
    folder = shared_trace_dir()
    path = folder / "rlsched_lublin_256.swf.gz" if folder is not None else None
    notes = []
    if path is None or not path.exists():
        import tempfile

        from .workload import write_swf
        notes.append({"slice": "rl", "name": "skipped", "skipped": ["rlsched_lublin_256.swf.gz"],
                      "note": skipped_logs_note(["rlsched_lublin_256.swf.gz"], folder)
                      + "; a generated Lublin-1 trace stands in"})
        from .workload.lublin import generate_lublin
        path = Path(tempfile.mkdtemp()) / "lublin-1.swf"
        write_swf(generate_lublin(10_000, "lublin-1", seed=0), path)
    env = JobSelectionEnv(path, window=256, baselines=("sjf", "f1"))
    ref = ReferenceJobSelectionEnv(env.trace, compat=False)
    rng = np.random.default_rng(0)
    ours, theirs = [], []
    for t in range(trials):
        env.reset(seed=t)
        ours.append(_random_steps(env, rng, seconds))
        theirs.append(_reference_steps(ref, env.start_lo, env.start_hi, env.window, rng, 3 * seconds))
    vec = VecJobSelection(path, 16, seed=0, window=256, baselines=("sjf", "f1"))
    st, peer, sv = _stats(ours), _stats(theirs), _stats(_vector_steps(vec, rng, trials, seconds))
    loop = "RLScheduler's loop"
    rows = [{"slice": "rl", "name": "env step", "params": f"{path.name}, 256-job windows, SJF+F1 baselines",
             **st, "steps_per_s": 1.0 / st["median_s"], "peer": loop, "peer_steps_per_s": 1.0 / peer["median_s"],
             "vs_peer": peer["median_s"] / st["median_s"]},
            {"slice": "rl", "name": "vector env step", "params": "16 windows a call, same settings",
             **sv, "steps_per_s": 1.0 / sv["median_s"], "peer": loop, "peer_steps_per_s": 1.0 / peer["median_s"],
             "vs_peer": peer["median_s"] / sv["median_s"]}]
    k = KernelPolicy.random(0)
    obs = rng.random(1024).astype(np.float32)
    mask = np.ones(128, dtype=bool)
    times = []
    for _ in range(trials):
        t0 = time.perf_counter()
        for _ in range(2000):
            k.act(obs, mask)
        times.append((time.perf_counter() - t0) / 2000)
    rows.append({"slice": "rl", "name": "kernel decision", "params": "KernelPolicy.act, 128 rows", **_stats(times)})
    rows += _backfill_rows(folder, path, trials, seconds)
    sdsc = "SDSC-SP2-1998-4.2-cln.swf.gz"
    if folder is None or not (folder / sdsc).exists():
        notes.append({"slice": "rl", "name": "skipped", "skipped": [sdsc],
                      "note": skipped_logs_note([sdsc], folder) + f"; the backfilling rows use {path.name}"})
    return notes + rows


def _reference_steps(ref, lo, hi, window, rng, seconds):
    # a plain-Python reference environment under random valid actions drawn as for the compiled
    # one, on windows starting in [lo, hi), for `seconds`; returns seconds per step
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        obs = ref.reset(int(rng.integers(lo, hi)), window)
        while obs is not None:
            obs = ref.step(int(rng.choice(np.flatnonzero(ref.action_masks()))))
            steps += 1
    return (time.perf_counter() - t0) / max(steps, 1)


def _vector_steps(vec, rng, trials, seconds):
    # seconds per step of a vector env under random valid actions, one figure per trial
    vec.reset()
    out = []
    for _ in range(trials):
        steps, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            masks = vec.action_masks()
            vec.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
            steps += vec.n_envs
        out.append((time.perf_counter() - t0) / steps)
    return out


def _random_steps(env, rng, seconds):
    # random valid actions for `seconds`; returns seconds per step
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        _, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
        steps += 1
        if done:
            env.reset()
    return (time.perf_counter() - t0) / steps


def _backfill_rows(folder, fallback, trials, seconds):
    """The backfilling environment (compat mode, 256-job windows of SDSC-SP2 when the real logs are
    there, with the three EASY baselines RLBackfilling schedules at every reset) beside the
    plain-Python reference of RLBackfilling's loop, measured alike in the same run."""
    from .reference.rlbackfilling import ReferenceBackfillEnv
    from .rl.backfill_env import BackfillEnv, VecBackfill
    path = folder / "SDSC-SP2-1998-4.2-cln.swf.gz" if folder is not None else None
    if path is None or not path.exists():
        path = fallback
    env = BackfillEnv(path, window=256, compat="rlbackfilling", baselines=("easy", "easy-largest"))
    ref = ReferenceBackfillEnv(env.trace)
    rng = np.random.default_rng(0)
    ours, theirs = [], []
    for t in range(trials):
        env.reset(seed=t)
        ours.append(_random_steps(env, rng, seconds))
        theirs.append(_reference_steps(ref, env.start_lo, env.start_hi, 256, rng, 3 * seconds))
    vec = VecBackfill(path, 16, seed=0, window=256, compat="rlbackfilling", baselines=("easy", "easy-largest"))
    per_vec = _vector_steps(vec, rng, trials, seconds)
    st, peer, sv = _stats(ours), _stats(theirs), _stats(per_vec)
    loop = "RLBackfilling's loop"
    return [{"slice": "rl", "name": "backfill env step", "params": f"{path.name}, 256-job windows, 3 EASY baselines",
             **st, "steps_per_s": 1.0 / st["median_s"], "peer": loop, "peer_steps_per_s": 1.0 / peer["median_s"],
             "vs_peer": peer["median_s"] / st["median_s"]},
            {"slice": "rl", "name": "backfill vector", "params": "16 windows a call, same settings",
             **sv, "steps_per_s": 1.0 / sv["median_s"], "peer": loop, "peer_steps_per_s": 1.0 / peer["median_s"],
             "vs_peer": peer["median_s"] / sv["median_s"]}]


#: The machine of the ``large`` slice: 160,000 nodes (the size of the largest machines, e.g. 158,976
#: nodes of 48 cores), each a unit: jobs get whole nodes, as such machines schedule. A unit per core
#: (7,680,000) is beyond this engine: every running job keeps a bitmap of all units (960 KB each),
#: and so does every slot of the profile.
LARGE_NODES = 160_000


def pass_scenarios(kind: str = "pass", quick: bool = False) -> list[PassScenario]:
    """The scenarios of a ``pbf bench`` slice: ``pass`` (the headline passes, EASY and conservative
    at three sizes, plus at full size the deep pass as Slurm runs it), ``matrix`` (every affordable
    point of :data:`PASS_MATRIX`) or ``large`` (:data:`LARGE_NODES` nodes with 10,000 running jobs:
    100,000 queued as Slurm's backfill tests them, a reservation per tested job up to
    ``max_job_test`` 500, and conservative backfilling over a queue of 2,000 (100,000 would take
    minutes a pass); ``quick``: 20,000 queued and 500)."""
    if kind == "large":
        return [PassScenario(20_000 if quick else 100_000, LARGE_NODES, 10_000, None, max_job_test=500),
                PassScenario(500 if quick else 2_000, LARGE_NODES, 10_000, None)]
    if kind == "pass":
        sizes = [(100, 128, 10), (1_000, 1_024, 100), (10_000, 9_128, 2_000)]
        if not quick:
            sizes.append((50_000, 9_128, 2_000))
        scen = [PassScenario(q, u, r, resv) for q, u, r in sizes for resv in (1, None)]
        scen = [sc for sc in scen if sc.matrix_affordable()]
        if not quick:
            # the deep pass as Slurm runs it: a reservation for every job tested, up to
            # bf_max_job_test (Slurm's default 500)
            scen.append(PassScenario(50_000, 9_128, 2_000, None, max_job_test=500))
        return scen
    m = PASS_MATRIX
    scen = [PassScenario(q, u, r, resv) for q in m["queued"] for u in m["units"]
            for r in m["running"] for resv in m["reservations"]]
    return [sc for sc in scen if sc.matrix_affordable()]


def run_slices(slices: Iterable[str], trials: int = 5, quick: bool = False, reference: bool = True,
               workers: Sequence[int] = (2,)) -> tuple[list[dict[str, Any]], MachineLoad]:
    """Run benchmark slices (``bitmap``, ``pass``, ``matrix``, ``large``, ``growth``, ``replay``); returns
    (rows, the :class:`MachineLoad` measured meanwhile)."""
    rows = []
    with MachineLoad() as load:
        for sl in slices:
            if sl == "bitmap":
                rows += bitmap_rows(repeat=50 if quick else 200)
            elif sl in ("pass", "matrix"):
                rows += pass_rows(pass_scenarios(sl, quick), trials=trials, reference=reference,
                                  reference_limit=20.0 if quick else 60.0, workers=workers)
            elif sl == "large":
                rows += pass_rows(pass_scenarios(sl, quick), trials=trials, reference=False, workers=workers,
                                  slice_name="large")
                from .benchmark_nodes import archer2_pass_rows
                rows += archer2_pass_rows(trials=trials, queued=20_000 if quick else 100_000)
            elif sl == "growth":
                rows += growth_rows(trials=trials) if not quick else growth_rows(
                    queue_sizes=(1_000, 4_000, 16_000), unit_sizes=(128, 2_048, 9_128), trials=trials)
            elif sl == "replay":
                rows += replay_rows(trials=trials if trials <= 3 else 1)
            elif sl == "rl":
                rows += rl_rows(trials=trials, seconds=0.3 if quick else 1.0)
    return rows, load
