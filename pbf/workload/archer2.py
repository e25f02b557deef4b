"""An ARCHER2-sized synthetic workload and its cluster: the scale at which node searches are measured.

ARCHER2 (EPCC, HPE Cray EX) has 5,860 compute nodes of 128 cores (two 64-core AMD EPYC 7742): 5,276
standard nodes with 256 GB and 584 high-memory nodes with 512 GB; jobs in its standard partition are
node-exclusive, with a 24-hour limit (48 hours in the `long` QOS), and a `serial` partition shares
nodes among small jobs. That much is public (the ARCHER2 user documentation, "Running jobs"); the job
statistics are not, so the jobs here are a plainly synthetic model of that shape, for benchmarks, not a
claim about ARCHER2's workload:

* 90 % node-exclusive jobs: nodes from a power-of-two-heavy distribution (1: 40 %, 2-4: 27 %, 5-16:
  18 %, 17-64: 10 %, 65-256: 4 %, 257-1,024: 1 %), all 128 cores of each node and its memory
  (``ReqMem`` per node: 256,000 MB, a tenth of them 512,000 MB: the high-memory nodes);
* 10 % shared jobs: 1 to 32 cores on one node, 1,984 MB a core (ARCHER2's ``DefMemPerCPU``);
* requested times log-uniform from 10 minutes to 24 hours (2 % up to 48 hours), run times a
  log-uniform fraction (1 % to 100 %) of them, both then scaled (within those limits) so that the jobs
  offer ``load`` of the cluster's core-seconds over the window;
* 400 users, a Zipf-like share each; arrivals uniform over the window.

:func:`archer2_slurm_conf` writes the cluster as a ``slurm.conf`` (``nid[000001-005860]``,
``select/cons_tres`` with ``CR_Core_Memory``, ``sched/backfill``, multifactor priority,
``bf_max_job_test=1000``), and :func:`archer2_cluster` is the same cluster as a :class:`pbf.Cluster`.
"""
from __future__ import annotations

import os

import numpy as np

from ..bounded import MAX_GENERATED_JOBS, check_int, check_real
from ..cluster import Cluster
from ..node import Node
from .jobs import JobTable, SwfHeader

__all__ = ["generate_archer2", "archer2_cluster", "archer2_slurm_conf", "ARCHER2_NODES", "ARCHER2_CORES"]

ARCHER2_NODES, ARCHER2_HIGHMEM, ARCHER2_CORES = 5_860, 584, 128
_STANDARD_MB, _HIGHMEM_MB, _DEF_MEM_PER_CPU = 256_000, 512_000, 1_984
_SIZE_BANDS = ((1, 1, 0.40), (2, 4, 0.27), (5, 16, 0.18), (17, 64, 0.10), (65, 256, 0.04), (257, 1024, 0.01))
_START_UNIX = 1_672_531_200           # 2023-01-01 00:00 UTC
_MAX_WINDOW = 3650 * 86400


def _names(nodes: int) -> list[str]:
    return [f"nid{i:06d}" for i in range(1, nodes + 1)]


def archer2_cluster(nodes: int = ARCHER2_NODES) -> Cluster:
    """The ARCHER2-like cluster of ``nodes`` nodes of 128 cores (the last tenth, or 584 of 5,860, with
    512 GB; the others 256 GB), its default memory a core 1,984 MB."""
    check_int("nodes", nodes, 1, ARCHER2_NODES * 16)
    high = max(0, round(nodes * ARCHER2_HIGHMEM / ARCHER2_NODES))
    node_list = tuple(Node(n, ARCHER2_CORES, _HIGHMEM_MB if i >= nodes - high else _STANDARD_MB, 0,
                           ("highmem",) if i >= nodes - high else (), "highmem" if i >= nodes - high else "standard")
                      for i, n in enumerate(_names(nodes)))
    return Cluster(units=nodes * ARCHER2_CORES, nodes=node_list, name=f"archer2-{nodes}",
                   default_mem_per_core_mb=_DEF_MEM_PER_CPU)


def archer2_slurm_conf(path: str | os.PathLike, nodes: int = ARCHER2_NODES) -> None:
    """Write the ARCHER2-like cluster as a ``slurm.conf``: its nodes, one partition, and the scheduler
    settings of a production Slurm 22.05 site of that size."""
    check_int("nodes", nodes, 1, ARCHER2_NODES * 16)
    high = max(0, round(nodes * ARCHER2_HIGHMEM / ARCHER2_NODES))
    std = nodes - high
    lines = ["# ARCHER2-like cluster (pbf gen archer2): synthetic, see pbf/workload/archer2.py",
             "ClusterName=archer2like",
             "SelectType=select/cons_tres",
             "SelectTypeParameters=CR_Core_Memory",
             "SchedulerType=sched/backfill",
             "SchedulerParameters=bf_max_job_test=1000,bf_window=2880,bf_resolution=600,bf_interval=30,"
             "default_queue_depth=100",
             "PriorityType=priority/multifactor",
             "PriorityWeightAge=500",
             "PriorityWeightFairshare=300",
             "PriorityWeightJobSize=100",
             "PriorityMaxAge=14-0",
             "PriorityDecayHalfLife=7-0",
             f"DefMemPerCPU={_DEF_MEM_PER_CPU}",
             f"NodeName=nid[000001-{std:06d}] CPUs={ARCHER2_CORES} RealMemory={_STANDARD_MB}"]
    if high:
        lines.append(f"NodeName=nid[{std + 1:06d}-{nodes:06d}] CPUs={ARCHER2_CORES} RealMemory={_HIGHMEM_MB} "
                     "Feature=highmem")
    lines.append(f"PartitionName=standard Nodes=nid[000001-{nodes:06d}] Default=YES MaxTime=2-0 State=UP")
    tmp = os.fspath(path) + ".part"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except OSError as exc:          # (named by the file asked for, not the .part beside it)
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def generate_archer2(n_jobs: int = 20_000, window: int = 14 * 86400, seed: int = 0, load: float = 0.95,
                     nodes: int = ARCHER2_NODES) -> JobTable:
    """``n_jobs`` jobs of the ARCHER2-like model (module docstring) submitted within ``window`` seconds;
    ``load``: the share of the cluster's core-seconds the jobs' run times offer (the window is kept;
    the job count sets the density, ``load`` scales the run times)."""
    check_int("n_jobs", n_jobs, 1, MAX_GENERATED_JOBS)
    check_int("window", window, 1, _MAX_WINDOW)
    check_real("load", load, 0.01, 100.0)
    check_int("nodes", nodes, 1, ARCHER2_NODES * 16)
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
    exclusive = rng.random(n_jobs) < 0.9
    band = rng.choice(len(_SIZE_BANDS), size=n_jobs, p=[b[2] for b in _SIZE_BANDS])
    lo = np.array([b[0] for b in _SIZE_BANDS])[band]
    hi = np.array([b[1] for b in _SIZE_BANDS])[band]
    # within a band, powers of two twice as likely as the sizes between them
    size = np.exp(rng.uniform(np.log(lo), np.log(hi + 1))).astype(np.int64)
    pow2 = 2 ** np.round(np.log2(np.maximum(size, 1))).astype(np.int64)
    size = np.clip(np.where(rng.random(n_jobs) < 0.5, pow2, size), lo, hi)
    size = np.minimum(size, nodes)
    node_count = np.where(exclusive, size, 1)
    cores = np.where(exclusive, node_count * ARCHER2_CORES, rng.integers(1, 33, n_jobs))
    highmem = exclusive & (rng.random(n_jobs) < 0.1) & (node_count <= max(1, round(nodes * ARCHER2_HIGHMEM
                                                                                   / ARCHER2_NODES)))
    long_qos = rng.random(n_jobs) < 0.02
    req = np.exp(rng.uniform(np.log(600), np.log(np.where(long_qos, 48 * 3600, 24 * 3600)))).astype(np.int64)
    req = (req + 59) // 60 * 60                       # whole minutes, as Slurm keeps limits
    frac = np.exp(rng.uniform(np.log(0.01), 0.0, n_jobs))
    run = np.maximum(1, np.round(req * frac)).astype(np.int64)
    # requested and run times scaled together so that the jobs offer `load` of the cluster's core-seconds
    # over the window, within the QOS limits (a request at its limit cannot grow: the load reached is
    # in the header's note)
    cap = np.where(long_qos, 48 * 3600, 24 * 3600)
    factor = load / (float((run * cores).sum()) / (nodes * ARCHER2_CORES * window))
    req = np.clip((np.ceil(req * factor / 60) * 60).astype(np.int64), 60, cap)
    run = np.clip(np.round(run * factor), 1, req).astype(np.int64)
    reached = float((run * cores).sum()) / (nodes * ARCHER2_CORES * window)
    submit = np.sort(rng.integers(0, window, n_jobs)).astype(np.int64)
    user_p = 1.0 / np.arange(1, 401) ** 1.1
    user = rng.choice(400, size=n_jobs, p=user_p / user_p.sum()) + 1
    mem_node = np.where(exclusive, np.where(highmem, _HIGHMEM_MB, _STANDARD_MB), 0).astype(np.int64)
    mem_core = np.where(exclusive, 0, _DEF_MEM_PER_CPU).astype(np.int64)
    header = SwfHeader()
    for key, value in (("Version", "2.2"), ("Computer", "ARCHER2-like (synthetic)"),
                       ("Installation", "pbf generator, pbf/workload/archer2.py"),
                       ("MaxJobs", n_jobs), ("MaxRecords", n_jobs), ("UnixStartTime", _START_UNIX),
                       ("MaxNodes", nodes), ("MaxProcs", nodes * ARCHER2_CORES), ("MaxRuntime", int(run.max()))):
        header.set(key, value)
    header.add_line(f" Note: generate_archer2(n_jobs={n_jobs}, window={window}, seed={seed}, load={load:g}, "
                    f"nodes={nodes}); offered load {reached:.3f}")
    return JobTable.from_arrays(
        header, job_id=np.arange(1, n_jobs + 1, dtype=np.int64), submit=submit, run=run, alloc_procs=cores,
        req_procs=cores, req_time=req, req_mem=np.where(exclusive, -1, _DEF_MEM_PER_CPU * 1024),
        status=np.ones(n_jobs),
        user=user, group=(user - 1) % 40 + 1, queue=np.ones(n_jobs), partition=np.ones(n_jobs),
        mem_core_mb=mem_core, mem_node_mb=mem_node, gpus=np.zeros(n_jobs, np.int64),
        nodes_min=node_count.astype(np.int64), nodes_max=np.where(exclusive, node_count, 1).astype(np.int64))
