"""Two builds of the compiled core side by side in one process (a benchmark script, not a test).

    python bench/ab_cores.py OLD_CORE_SO [--trace SDSC-SP2-1998-4.2-cln.swf.gz] [--trials 12]
                             [--passes] [--pass-trials 7] [--beocat-slice] [--slice-trials 3]

OLD_CORE_SO is another build's ``pbf/_core*.so`` (e.g. from a checkout of an earlier commit built with
``python setup.py build_ext --inplace``); the new one is the installed ``pbf._core``. Interleaved
trials of the SDSC-SP2 replay (with and without pass records) and, with ``--passes``, of one full pass
of three scenarios on 1, 2, 4 and 8 workers, and with ``--beocat-slice``, of a Slurm-like replay of
20,000 Beocat-like jobs in 1.4 days (a reservation per tested job, ``max_job_test`` 500, interval
trigger); every trial checks that both builds decide the same.
Separate processes differ by several percent on this kind of machine (memory placement), so a
comparison of two builds is only meaningful in one process.
"""
import argparse
import gc
import importlib.util
import statistics
import sys
import time
import types

import numpy as np

from pbf import _core as new
from pbf.benchmark import NOW, PassScenario
from pbf.studies.traces import shared_trace
from pbf.workload import read_swf


def load_old(path):
    # loaded under another package name, after pbf is imported, so that pbf's own modules stay pbf's
    sys.modules.setdefault("pbf_ab", types.ModuleType("pbf_ab"))
    spec = importlib.util.spec_from_file_location("pbf_ab._core", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def configure(core, **settings):
    if hasattr(core, "configure"):
        core.configure(**settings)
    else:                                   # builds from before Core.configure
        for k, v in settings.items():
            setattr(core, k, v)


def testing(core, **switches):
    if hasattr(core, "set_testing"):
        core.set_testing(**switches)
    else:
        for k, v in switches.items():
            setattr(core, k, v)


def force_parallel(core):
    # every full pass on the pool: the testing switch `parallel`, or in builds from before it, no
    # minimum wall time
    try:
        testing(core, parallel_min_queue=1, parallel=1)
    except ValueError:
        testing(core, parallel_min_queue=1, parallel_min_wall_ns=0)


def replay_once(mod, t, units, records):
    core = mod.Core(units)
    configure(core, record_passes=records)
    core.load_trace(t.submit, t.units, t.req_time, t.run)
    t0 = time.perf_counter()
    core.replay()
    return time.perf_counter() - t0, core.job_arrays()[1]


def pass_once(mod, sc, workers):
    (ru, rl), (qu, qe) = sc.jobs()
    core = mod.Core(sc.units)
    settings = sc.backfill.core_settings()
    configure(core, **settings)
    first = core.add_jobs(np.zeros(len(ru), dtype=np.int64), ru, rl, np.full(len(ru), -1, dtype=np.int64))
    core.submit_range(first, len(ru))
    configure(core, max_job_test=-1)
    core.run_pass(0)
    configure(core, **settings)
    first = core.add_jobs(np.full(len(qu), NOW, dtype=np.int64), qu, qe, np.full(len(qu), -1, dtype=np.int64))
    core.submit_range(first, len(qu))
    empty = np.zeros(0, dtype=np.int64)
    core.profile_ops(NOW, empty, empty, 1)
    if workers > 1:
        force_parallel(core)
        core.start_pool(workers)
        time.sleep(0.001)
    gc.disable()
    t0 = time.perf_counter()
    started, reserved = core.run_pass(NOW)
    dt = time.perf_counter() - t0
    gc.enable()
    core.stop_pool()
    return dt, (started.tolist(), reserved.tolist())


def slice_once(mod, t):
    core = mod.Core(9128)
    configure(core, resv_max=-1, max_job_test=500, trigger=1, bf_interval=30, record_passes=0)
    core.load_trace(t.submit, t.units, t.req_time, t.run)
    t0 = time.perf_counter()
    core.replay()
    return time.perf_counter() - t0, core.job_arrays()[1]


def line(name, old, new_):
    mo, mn = statistics.median(old), statistics.median(new_)
    return (f"{name:34s} old median {mo * 1e3:8.2f} ms best {min(old) * 1e3:8.2f} | new median {mn * 1e3:8.2f} ms "
            f"best {min(new_) * 1e3:8.2f} | new/old {mn / mo:.3f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", help="the other build's _core shared object")
    ap.add_argument("--trace", default="SDSC-SP2-1998-4.2-cln.swf.gz")
    ap.add_argument("--trials", type=int, default=12)
    ap.add_argument("--passes", action="store_true", help="also one full pass of three scenarios")
    ap.add_argument("--pass-trials", type=int, default=7)
    ap.add_argument("--beocat-slice", action="store_true", help="also a Slurm-like Beocat-like replay slice")
    ap.add_argument("--slice-trials", type=int, default=3)
    args = ap.parse_args()
    old = load_old(args.old)
    t = read_swf(shared_trace(args.trace))
    units = t.header.cluster_units()
    for records in (0, 1):
        a, b = [], []
        for _ in range(args.trials):
            ta, sa = replay_once(old, t, units, records)
            tb, sb = replay_once(new, t, units, records)
            assert np.array_equal(sa, sb), "the two builds start jobs at different times"
            a.append(ta)
            b.append(tb)
        print(line(f"replay, pass records {'on' if records else 'off'}", a, b), flush=True)
    if args.beocat_slice:
        from pbf.workload.beocat import generate_beocat
        bt = generate_beocat(20_000, int(1.4 * 86400), seed=0)
        a, b = [], []
        for _ in range(args.slice_trials):
            ta, sa = slice_once(old, bt)
            tb, sb = slice_once(new, bt)
            assert np.array_equal(sa, sb), "the two builds start jobs at different times"
            a.append(ta)
            b.append(tb)
        print(line("Beocat-like Slurm-like slice", a, b), flush=True)
    if not args.passes:
        return
    scenarios = [("Slurm-like 50,000 queued", PassScenario(50_000, 9_128, 2_000, None, max_job_test=500)),
                 ("conservative 1,000 queued", PassScenario(1_000, 1_024, 100, None)),
                 ("EASY 50,000 queued", PassScenario(50_000, 9_128, 2_000, 1))]
    for name, sc in scenarios:
        for workers in (1, 2, 4, 8):
            a, b = [], []
            for _ in range(args.pass_trials):
                ta, da = pass_once(old, sc, workers)
                tb, db = pass_once(new, sc, workers)
                assert da == db, "the two builds decide differently"
                a.append(ta)
                b.append(tb)
            print(line(f"{name}, {workers} worker{'s' if workers > 1 else ''}", a, b), flush=True)


if __name__ == "__main__":
    sys.exit(main())
