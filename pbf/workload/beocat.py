"""A Beocat-like synthetic trace, following the figures of Beocat's 2021 job extract.

Reference: ``shared/reference/slurm-and-workloads.md`` §3.4–3.5. Jobs come in bursts of identical
submissions (same user, cores and requested time, same second) whose sizes follow a truncated power
law (mean about 5.6 jobs); burst start times follow Beocat's hour-of-day and day-of-week profile inside
the chosen window. Cores follow the measured probability mass (63% single-core, mean about 3.6);
requested times come from the common whole-hour values with the measured quantiles; run time =
requested time x accuracy, with accuracy drawn from a piecewise log-linear quantile function fitted to
the measured median 0.011, mean 0.109 and 90th percentile 0.42. Every draw comes from a seeded
``numpy.random.Generator``: the same arguments give the same trace bit for bit.

High traffic (the Parallel Backfill paper's first dataset) is 100,000 jobs in 7 days; low traffic is
the same jobs in 14 days (same seed: the same jobs in the same order, only the submit times differ).
"""
from __future__ import annotations

import numpy as np

from ..bounded import MAX_GENERATED_JOBS, check_int
from ..cluster import beocat_cluster
from ..errors import ConfigError
from .jobs import JobTable, SwfHeader

__all__ = ["generate_beocat", "TRAFFIC_WINDOWS", "BEOCAT_DEFAULT_JOBS"]

BEOCAT_DEFAULT_JOBS = 100_000
TRAFFIC_WINDOWS = {"high": 7 * 86400, "low": 14 * 86400}
ARRIVAL_MODES = ("profile", "pack")

# cores per job: measured P(cores) for the ten most common values; the remaining 2.4% spread over
# wider requests so that the mean is about 3.6 and P(> 32 cores) about 0.3%
_CORES = np.array([1, 2, 4, 8, 16, 10, 6, 3, 32, 12, 20, 24, 28, 5, 14, 40, 48, 64])
_CORES_P = np.array([.630, .094, .075, .082, .037, .020, .012, .010, .009, .007,
                     .008, .006, .002, .003, .002, .0005, .001, .0015])

# requested wall time (s): common whole-hour values; cumulative mass puts the 5/25/50/75/90/95/99%
# quantiles on 3,600 / 21,600 / 84,600 / 172,800 / 388,800 / 604,800 / 1,728,000 as measured
_REQ = np.array([900, 1800, 3600, 7200, 14400, 21600, 43200, 72000, 82800, 84600, 86400, 172800,
                 259200, 345600, 388800, 432000, 604800, 864000, 1209600, 1728000, 2419200])
_REQ_P = np.array([.015, .02, .07, .04, .07, .08, .05, .05, .06, .05, .216, .06, .05, .05, .03, .02,
                   .03, .015, .01, .008, .006])

# accuracy = run / requested: quantile function, log10(accuracy) linear between these knots
_ACC_U = np.array([0, .05, .25, .356, .5, .6, .75, .9, .95, .98, 1])
_ACC_LOG10 = np.array([-6.0, -5.0, -3.85, -3.1, -1.96, -1.45, -0.9, -0.377, -0.25, -0.05, 0])

# burst sizes: P(k) proportional to k^-1.95 for k = 1..2000 (mean 5.8; 70% of jobs in bursts of >= 10)
_BURST_ALPHA, _BURST_MAX = 1.95, 2000

# share of submissions per hour of day (US Central) and per weekday (Mon..Sun), as measured
_HOUR_W = np.array([2.0, 1.5, 1.0, 0.8, 0.6, 0.6, 0.8, 1.5, 3.5, 5.0, 6.0, 6.5, 6.0, 6.5, 7.0, 11.7, 6.5,
                    5.0, 4.0, 3.5, 4.0, 7.5, 4.5, 3.0])
_DOW_W = np.array([.152, .214, .151, .097, .207, .091, .087])

_USERS = 350
# GPU requests (reference §3.4: 2.9 % of jobs; 1 GPU 1,453, 2 GPUs 8,162, 4 GPUs 87 jobs)
_GPU_SHARE = 0.029
_GPU_COUNTS = np.array([1, 2, 4])
_GPU_COUNTS_P = np.array([1453.0, 8162.0, 87.0])
_START_UNIX = 1615183200  # Monday 2021-03-08 00:00 US/Central: the extract's season, a week start


def _burst_sizes(rng, n_jobs):
    k = np.arange(1, _BURST_MAX + 1)
    p = k ** -_BURST_ALPHA
    p /= p.sum()
    sizes = []
    total = 0
    while total < n_jobs:
        draw = rng.choice(k, size=max(16, (n_jobs - total) // 4), p=p)
        cum = total + np.cumsum(draw)
        cut = np.searchsorted(cum, n_jobs)  # first burst reaching n_jobs
        if cut < len(draw):
            draw = draw[:cut + 1].copy()
            draw[-1] -= cum[cut] - n_jobs
            sizes.append(draw)
            break
        sizes.append(draw)
        total = int(cum[-1])
    return np.concatenate(sizes)


def _arrival_times(u, window):
    # inverse of the cumulative intensity over the window's hours (piecewise constant per hour)
    hours = np.arange((window + 3599) // 3600)
    weight = _HOUR_W[hours % 24] * _DOW_W[(hours // 24) % 7]
    seconds = np.minimum(3600, window - hours * 3600)
    cum = np.concatenate([[0.0], np.cumsum(weight * seconds)])
    target = u * cum[-1]
    h = np.clip(np.searchsorted(cum, target, side="right") - 1, 0, len(hours) - 1)
    t = hours[h] * 3600 + (target - cum[h]) / weight[h]
    return np.minimum(np.floor(t).astype(np.int64), window - 1)


#: the longest submit window of a generated trace: ten years (seconds)
MAX_WINDOW = 3650 * 86400


def generate_beocat(n_jobs: int = BEOCAT_DEFAULT_JOBS, window: int = TRAFFIC_WINDOWS["high"], seed: int = 0,
                    arrivals: str = "profile", resources: bool = False) -> JobTable:
    """Generate a Beocat-like trace of ``n_jobs`` jobs submitted within ``window`` seconds.

    ``arrivals``: ``profile`` (bursts placed by the daily and weekly profile) or ``pack`` (the same
    jobs, evenly spaced ``window / n_jobs`` apart, as the Parallel Backfill authors packed their
    traces). The jobs themselves depend only on ``n_jobs`` and ``seed``.

    Memory per core is always drawn (SWF field 10). ``resources``: also GPU requests (reference
    §3.4: 2.9 % of jobs, 1, 2 or 4 GPUs as 15 : 84 : 1; one draw per burst, from a stream of its own,
    so the jobs are otherwise the same), a GPU job running on one node; and the columns a node
    cluster reads (``mem_core_mb``, ``gpus``, ``nodes_min``, ``nodes_max``). SWF has no GPU field:
    write such a table with :func:`pbf.workload.sacct_dump.write_sacct`.
    """
    check_int("n_jobs", n_jobs, 1, MAX_GENERATED_JOBS)
    # (the arrival profile is drawn hour by hour: ten years is 87,600 hours)
    check_int("window", window, 1, MAX_WINDOW)
    if arrivals not in ARRIVAL_MODES:
        raise ConfigError(f"arrivals must be one of {', '.join(ARRIVAL_MODES)}, got {arrivals!r}")
    jobs_ss, arrive_ss = np.random.SeedSequence(seed).spawn(2)
    rng = np.random.Generator(np.random.PCG64(jobs_ss))

    sizes = _burst_sizes(rng, n_jobs)
    n_bursts = len(sizes)
    burst_of = np.repeat(np.arange(n_bursts), sizes)
    # per burst: one user (Zipf-like activity), one shape (cores, requested time)
    user_p = 1.0 / np.arange(1, _USERS + 1) ** 1.1
    user = rng.choice(_USERS, size=n_bursts, p=user_p / user_p.sum()) + 1
    cores = rng.choice(_CORES, size=n_bursts, p=_CORES_P / _CORES_P.sum())
    req = rng.choice(_REQ, size=n_bursts, p=_REQ_P / _REQ_P.sum())
    mem_gb = np.minimum(np.exp(rng.normal(np.log(4.0), 1.63, size=n_bursts)), 1024.0)
    # per job: accuracy, hence run time (never above the request: killed at the limit)
    acc = 10.0 ** np.interp(rng.random(n_jobs), _ACC_U, _ACC_LOG10)
    req_j = req[burst_of]
    run = np.clip(np.round(req_j * acc), 1, req_j).astype(np.int64)

    arng = np.random.Generator(np.random.PCG64(arrive_ss))
    if arrivals == "profile":
        starts = np.sort(_arrival_times(arng.random(n_bursts), int(window)))
        submit = starts[burst_of]
    else:
        submit = (np.arange(n_jobs, dtype=np.int64) * int(window)) // n_jobs

    cluster = beocat_cluster()
    header = SwfHeader()
    for key, value in (("Version", "2.2"), ("Computer", "Beocat-like (synthetic)"),
                       ("Installation", "pbf generator, Beocat normal partition"),
                       ("Information", "shared/reference/slurm-and-workloads.md section 3"),
                       ("MaxJobs", n_jobs), ("MaxRecords", n_jobs),
                       ("UnixStartTime", _START_UNIX), ("TimeZoneString", "US/Central"),
                       ("MaxNodes", len(cluster.nodes)), ("MaxProcs", cluster.units),
                       ("MaxRuntime", int(run.max()))):
        header.set(key, value)
    header.add_line(f" Note: generate_beocat(n_jobs={n_jobs}, window={int(window)}, seed={seed}, "
                    f"arrivals={arrivals!r})")
    ids = np.arange(1, n_jobs + 1, dtype=np.int64)
    req_mem = np.round(mem_gb[burst_of] * 1024 * 1024)
    extra = {}
    if resources:
        grng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed).spawn(3)[2]))
        wants = grng.random(n_bursts) < _GPU_SHARE
        count = grng.choice(_GPU_COUNTS, size=n_bursts, p=_GPU_COUNTS_P / _GPU_COUNTS_P.sum())
        gpus = np.where(wants, count, 0)[burst_of].astype(np.int64)
        extra = dict(mem_core_mb=np.ceil(req_mem / 1024).astype(np.int64), mem_node_mb=np.zeros(n_jobs, np.int64),
                     gpus=gpus, nodes_min=np.ones(n_jobs, np.int64), nodes_max=(gpus > 0).astype(np.int64))
        header.add_line(f" Note: GPU requests drawn (resources=True): {int((gpus > 0).sum())} GPU jobs")
    return JobTable.from_arrays(
        header,
        job_id=ids, submit=submit, run=run, alloc_procs=cores[burst_of], req_procs=cores[burst_of],
        req_time=req_j, req_mem=req_mem, status=np.ones(n_jobs),
        user=user[burst_of], group=(user[burst_of] - 1) % 40 + 1, queue=np.ones(n_jobs),
        partition=np.ones(n_jobs), **extra)
