"""Threads across nodes: backfill passes on a cluster of --nodes nodes of --cores cores with 1 worker and with 2
(a benchmark script, not a test).

    python bench/node_threads.py [--nodes 160000] [--cores 64] [--queued 50000] [--passes 5]
                                 [--search exact,slurm] [--workers 1,2] [--rounds 2] [--modes off,auto]
                                 [--max-job-test 1000] [--seed 0] [--reverse]

The cluster: ``--nodes`` nodes ``n000001``, ``n000002``, ... of ``--cores`` cores each (pbf keeps at most
2**24 cores, so 160,000 nodes have at most 104), ``--cores`` x 2,000 MB of memory each, the last tenth
``--cores`` x 4,000 MB and the feature ``highmem`` (ARCHER2's 256 GB and 512 GB per 128 cores), built with
:meth:`pbf.Cluster.of_nodes`.

The jobs: :func:`pbf.workload.archer2.generate_archer2`'s (seed ``--seed``, 14 days, sizes capped at the node
count), scaled to nodes of ``--cores`` cores: a node-exclusive job (90 %) keeps its nodes_min..nodes_max and
asks nodes_min x ``--cores`` cores and a whole node's memory (a high-memory job a high-memory node's); a shared
job (10 %, 1 to 32 cores on one node) asks min(its cores, ``--cores``) cores at 1,984 MB a core. Run and
requested times are the generator's.

Each run is :func:`pbf.benchmark_nodes.archer2_passes`'s on this cluster, one :class:`pbf.Engine`: calls at
time 0 submit the first jobs, ``--max-job-test`` at a time (a pass tests no more), until they ask the cluster's
cores (every job that fits starts: the machine is full); the next call submits ``--queued`` more at once (its
pass, with the submits, is the "first pass"); then ``--passes`` calls, each after the running job that ends
first has ended, are the "later passes" whose median is reported. Slurm's backfill settings: a reservation for
every job tested, up to ``--max-job-test`` (``bf_max_job_test``).

Node searches: ``exact`` (pbf's plan of every node, whose per-node search set-up a helper thread shares) and
``slurm`` (Slurm's will-run test, whose later starts a helper thread tests ahead). Modes for more than one
worker: ``off`` shares every pass's searches with the helper (``set_testing(split_trial_us=0)``, no trials),
``auto`` is the engine's automatic choice (trials of passes with and without the helper decide). A 1-worker
engine has no helper thread, so one 1-worker run per round is the base of both modes. The runs of a round
go 1 worker, 2 off, 2 auto and the next round's the other way round (1, 2, 2, 1 across two rounds), all in
one process. Printed per search and mode: the medians of the later passes, the ratio 1-worker median /
2-worker median per round and its median ("1.42x faster"), the spread of the rounds' ratios, the helper's
shared/helped search counts, the decisions' digest (identical for every run of a search, or the script
fails), and the process's peak RSS. docs/benchmarks.md quotes its figures.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import statistics
import sys
import time

import numpy as np

import pbf
from pbf.benchmark_nodes import timed_passes
from pbf.config import Backfill
from pbf.engine import Engine
from pbf.engine_events import Job, Start, Submit
from pbf.workload.archer2 import ARCHER2_NODES, generate_archer2

MAX_UNITS = 2 ** 24
MB_PER_CORE, HIGHMEM_MB_PER_CORE, SHARED_MB_PER_CORE = 2_000, 4_000, 1_984
FILL_FACTOR = 1          # the first jobs submitted ask this many times the cluster's cores


def build_cluster(nodes: int, cores: int) -> pbf.Cluster:
    """``nodes`` nodes of ``cores`` cores, the last tenth high-memory (module docstring)."""
    high = nodes // 10
    return pbf.Cluster.of_nodes(
        (pbf.Node(f"n{i:06d}", cores, (HIGHMEM_MB_PER_CORE if i > nodes - high else MB_PER_CORE) * cores, 0,
                  ("highmem",) if i > nodes - high else (), "highmem" if i > nodes - high else "standard")
         for i in range(1, nodes + 1)), name=f"nodes-{nodes}x{cores}")


def build_jobs(nodes: int, cores: int, queued: int, seed: int) -> tuple[list[Job], int]:
    """The scaled ARCHER2-like jobs (module docstring), and how many of them fill the empty machine."""
    # enough jobs to fill the machine and queue ``queued`` more: about 16 nodes a job on average
    budget = nodes * FILL_FACTOR // 8 + queued + 1000
    table = generate_archer2(n_jobs=budget, window=14 * 86400, seed=seed, nodes=min(nodes, ARCHER2_NODES * 16))
    c = table.columns
    exclusive = c["mem_node_mb"] > 0
    node_min, node_max = c["nodes_min"].astype(np.int64), c["nodes_max"].astype(np.int64)
    units = np.where(exclusive, node_min * cores, np.minimum(c["alloc_procs"], cores)).astype(np.int64)
    high = c["mem_node_mb"] > 256_000
    mem_node = np.where(exclusive, np.where(high, HIGHMEM_MB_PER_CORE, MB_PER_CORE) * cores, 0)
    mem_core = np.where(exclusive, 0, SHARED_MB_PER_CORE)
    fill = int(np.searchsorted(np.cumsum(units), FILL_FACTOR * nodes * cores)) + 1
    if fill + queued > len(units):
        sys.exit(f"node_threads: {fill:,} fill jobs + {queued:,} queued exceed the {len(units):,} generated")
    jobs = [Job(id=int(c["job_id"][i]), submit=0, units=int(units[i]), requested=int(c["req_time"][i]),
                run=int(c["run"][i]), user=int(c["user"][i]), mem_core_mb=int(mem_core[i]),
                mem_node_mb=int(mem_node[i]), nodes_min=int(node_min[i]), nodes_max=int(node_max[i]))
            for i in range(fill + queued)]
    return jobs, fill


def at(job: Job, when: int) -> Submit:
    return Submit(dataclasses.replace(job, submit=when))


def passes(cluster: pbf.Cluster, jobs: list[Job], fill: int, search: str, workers: int, trials: bool,
           later: int, max_job_test: int) -> dict:
    """One run (module docstring): pass wall times (s; the first with the submits), decisions digest,
    jobs started and reserved, helper counts."""
    run_of = {j.id: j.run for j in jobs}
    t0 = time.perf_counter()
    engine = Engine(cluster, node_search=search, report_reservations=True,
                    backfill=Backfill(reservations=None, max_job_test=max_job_test), workers=workers)
    if not trials:
        engine._core.set_testing(split_trial_us=0)
    ends = {}
    for first in range(0, fill, max_job_test):     # a pass tests at most max_job_test jobs: fill in steps
        ends.update((d.job_id, run_of[d.job_id])
                    for d in engine.advance(0, [at(j, 0) for j in jobs[first:min(first + max_job_test, fill)]])
                    if isinstance(d, Start))
    setup = time.perf_counter() - t0
    ticks0 = engine._core._search_helper_ticks()
    out = timed_passes(engine, [at(j, 1) for j in jobs[fill:]], ends, run_of, later)
    ticks = {k: v - ticks0[k] for k, v in engine._core._search_helper_ticks().items()}
    started, reserved = out["started"], out["reserved"]
    shared, helped, backoffs, trial_count, trials_shared = engine._core.search_helper_stats()
    return {"walls": out["walls"], "setup": setup, "started": started, "reserved": reserved,
            "digest": out["digest"], "shared": shared, "helped": helped, "backoffs": backoffs,
            "trials": trial_count, "trials_shared": trials_shared, "first_started": len(ends), "ticks": ticks}


def later_start_split(t: dict) -> str:
    """Where the shared will-run tests' time went over the timed passes (Slurm's search, 2 workers)."""
    if not t["jobs"]:
        return ""
    return (f"shared jobs' tests {t['jobs_ns'] / 1e9:.2f} s of which this thread posting {t['post_ns'] / 1e9:.2f} s, "
            f"testing {t['own_ns'] / 1e9:.2f} s ({t['own']:,} tests), waiting for the helper "
            f"{(t['wait_ns'] + t['wait_unneeded_ns']) / 1e9:.2f} s; the helper testing {t['help_ns'] / 1e9:.2f} s "
            f"({t['help']:,} tests); ")


def whole_list(text: str, what: str, choices: tuple | None = None) -> list:
    items = [x.strip() for x in text.split(",") if x.strip()]
    if choices is not None:
        bad = [x for x in items if x not in choices]
        if bad or not items:
            sys.exit(f"node_threads: --{what}: expected a comma-separated list of {', '.join(choices)}, got {text!r}")
        return items
    try:
        values = [int(x) for x in items]
    except ValueError:
        values = []
    if not values or any(not 1 <= v <= 64 for v in values):
        sys.exit(f"node_threads: --{what}: expected comma-separated worker counts from 1 to 64, got {text!r}")
    return values


def positive(name: str, value: int, top: int) -> int:
    if not 1 <= value <= top:
        sys.exit(f"node_threads: --{name}: expected a whole number from 1 to {top:,}, got {value}")
    return value


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def report_search(search: str, runs: dict, modes: list[str], counts: list[int]) -> bool:
    """Print one search's summary; False when the decisions differ between runs."""
    digests = {r["digest"] for rs in runs.values() for r in rs}
    base = [statistics.median(r["walls"][1:]) for r in runs[(1, "")]] if (1, "") in runs else []
    for w in counts:
        for mode in (modes if w > 1 else [""]):
            rs = runs[(w, mode)]
            meds = [statistics.median(r["walls"][1:]) for r in rs]
            label = f"{w} worker{'s' if w > 1 else ''}" + (f", {mode}" if mode else "")
            line = (f"  {search}, {label}: later passes median {statistics.median(meds) * 1e3:,.1f} ms "
                    f"(rounds: {', '.join(f'{m * 1e3:,.1f}' for m in meds)}); first pass "
                    f"{statistics.median(r['walls'][0] for r in rs):,.2f} s")
            if w > 1:
                line += (f"; helper: {rs[-1]['helped']:,} of {rs[-1]['shared']:,} searches shared, "
                         f"{rs[-1]['trials']:,} trials ({rs[-1]['trials_shared']:,} won by sharing), "
                         f"{rs[-1]['backoffs']:,} back-offs")
            print(line, flush=True)
            if w > 1 and base:
                ratios = [b / m for b, m in zip(base, meds)]
                ratio = statistics.median(ratios)
                word = "faster" if ratio >= 1 else "slower"
                shown = ratio if ratio >= 1 else 1 / ratio
                print(f"  {search}, {label}: {w} workers: {shown:.2f}x {word} than 1 (1 worker / {w} workers per "
                      f"round: {', '.join(f'{x:.2f}' for x in ratios)}; spread {max(ratios) - min(ratios):.2f})",
                      flush=True)
    same = len(digests) == 1
    print(f"  {search}: decisions digest {', '.join(sorted(digests))}: "
          f"{'identical in every run' if same else 'DIFFER between runs'}", flush=True)
    return same


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=160_000)
    ap.add_argument("--cores", type=int, default=64)
    ap.add_argument("--queued", type=int, default=50_000)
    ap.add_argument("--passes", type=int, default=5, help="later passes timed after the first")
    ap.add_argument("--search", default="exact,slurm")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--modes", default="off,auto", help="off: share every pass (no trials); auto: trials decide")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--max-job-test", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reverse", action="store_true", help="start with the reversed order of runs (2 auto, 2 off, "
                                                            "1), to add rounds to a run cut short")
    a = ap.parse_args()
    positive("nodes", a.nodes, MAX_UNITS)
    positive("cores", a.cores, MAX_UNITS)
    if a.nodes * a.cores > MAX_UNITS:
        sys.exit(f"node_threads: --nodes {a.nodes:,} x --cores {a.cores}: {a.nodes * a.cores:,} cores, pbf keeps "
                 f"at most {MAX_UNITS:,} (--cores at most {MAX_UNITS // a.nodes} for {a.nodes:,} nodes)")
    positive("queued", a.queued, 10_000_000)
    positive("passes", a.passes, 1000)
    positive("rounds", a.rounds, 100)
    positive("max-job-test", a.max_job_test, 10_000_000)
    searches = whole_list(a.search, "search", ("exact", "slurm"))
    counts = sorted(set(whole_list(a.workers, "workers")))
    modes = whole_list(a.modes, "modes", ("off", "auto"))
    t0 = time.perf_counter()
    cluster = build_cluster(a.nodes, a.cores)
    jobs, fill = build_jobs(a.nodes, a.cores, a.queued, a.seed)
    exclusive = sum(j.mem_node_mb > 0 for j in jobs)
    print(f"node_threads: {a.nodes:,} nodes x {a.cores} cores ({a.nodes * a.cores:,} cores), {fill:,} jobs fill it, "
          f"{a.queued:,} queued at once ({exclusive / len(jobs):.0%} node-exclusive), max_job_test "
          f"{a.max_job_test}, {a.passes} later passes; workers {counts}, modes {modes}, {a.rounds} round(s); "
          f"{os.cpu_count()} CPUs, load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"set up in {time.perf_counter() - t0:.1f} s", flush=True)
    kinds = [(w, m) for w in counts for m in (modes if w > 1 else [""])]
    ok = True
    for search in searches:
        runs: dict = {k: [] for k in kinds}
        for r in range(a.rounds):
            for w, mode in (kinds if (r + a.reverse) % 2 == 0 else kinds[::-1]):
                out = passes(cluster, jobs, fill, search, w, mode != "off", a.passes, a.max_job_test)
                runs[(w, mode)].append(out)
                later = out["walls"][1:]
                print(f"  {search}, {w} worker(s){', ' + mode if mode else ''}, round {r + 1}: set-up and fill "
                      f"{out['setup']:.1f} s; first pass {out['walls'][0]:.2f} s ({out['started'][0]:,} started, "
                      f"{out['reserved'][0]:,} reserved); later passes "
                      f"{', '.join(f'{x * 1e3:,.0f}' for x in later)} ms (median {statistics.median(later) * 1e3:,.1f},"
                      f" {statistics.median(out['reserved'][1:]):,.0f} reserved); digest {out['digest']}; "
                      + (f"helper in {out['helped']:,} of {out['shared']:,} shared, {out['trials']} trials "
                         f"({out['trials_shared']} won), {out['backoffs']} back-offs; " if w > 1 else "")
                      + (later_start_split(out["ticks"]) if w > 1 and search == "slurm" else "")
                      + f"load {os.getloadavg()[0]:.2f}; peak RSS {rss_mb():,.0f} MB", flush=True)
        ok = report_search(search, runs, modes, counts) and ok
    print(f"peak RSS {rss_mb():,.0f} MB (the whole process); load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if not ok:
        sys.exit("node_threads: FAILED: the decisions differ between worker counts")


if __name__ == "__main__":
    main()
