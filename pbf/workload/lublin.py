"""The Lublin-Feitelson (2003) workload model, after the reference program ``lublin99.c``.

Sizes: serial with probability SerialProb, else 2^x with x from a two-stage uniform (rounded to a
power of two with probability Pow2Prob). Run times: e^g, g hyper-gamma whose mixing probability
depends linearly on the size, g <= 12. Arrivals: per job type (batch, interactive) a gamma-distributed
log inter-arrival at rush hour, spread over a 48-bucket daily cycle whose weights come from a gamma
CDF. Constants and algorithm: ``shared/reference/slurm-and-workloads.md`` §4.

Differences from the C program, on purpose: uniforms come from numpy's PCG64 (seeded) instead of
``drand48``, and gamma variates from numpy's sampler instead of Jain's; the distributions are the
same, the streams are not. No requested time and no user are produced (as in the original); the
reader's ``fill_missing_request`` gives perfect estimates, as RLScheduler does.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..bounded import MAX_GENERATED_JOBS, check_int, check_real
from ..errors import ConfigError
from .jobs import JobTable, SwfHeader

__all__ = ["LublinParams", "LUBLIN_PRESETS", "generate_lublin"]

_TOO_MUCH_TIME = 12.0
_TOO_MUCH_ARRIVE = 13.0
_BUCKETS = 48
_BUCKET_SECONDS = 1800
_CYCLIC_DAY_START = 11
INTERACTIVE, BATCH = 0, 1


@dataclass(frozen=True)
class LublinParams:
    """One job type's constants (names as in ``lublin99.c``)."""
    serial_prob: float
    pow2_prob: float
    ulow: float
    umed: float
    uhi: float
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float


BATCH_PARAMS = LublinParams(0.2927, 0.6686, 1.2, 5.0, 7.0, 0.875, 6.57, 0.823, 639.1, 0.0156, -0.003,
                            0.6986, 6.0415, 0.8531, 6.1271, 5.2740, 1.0519)
INTERACTIVE_PARAMS = LublinParams(0.1541, 0.625, 1.0, 3.0, 5.5, 0.705, 3.8351, 0.6605, 7.073, 0.6856,
                                  -0.0118, 0.9156, 6.5510, 0.6621, 8.9186, 3.6680, 0.9797)
TYPELESS_PARAMS = LublinParams(0.244, 0.576, 0.8, 4.5, 7.0, 0.86, 4.2, 0.94, 312.0, 0.03, -0.0054, 0.78,
                               10.2303, 0.4871, 8.1737, 3.9631, 1.0225)

#: Named settings: ``typed`` (two job types, the program's defaults), ``typeless`` (one type), and the
#: fits of RLScheduler's Lublin-1 / Lublin-2 traces (256 nodes) from the reference §4.3.
LUBLIN_PRESETS = {
    "typed": {"typed": True, "batch": BATCH_PARAMS, "interactive": INTERACTIVE_PARAMS},
    "typeless": {"typed": False, "interactive": TYPELESS_PARAMS},
    "lublin-1": {"typed": False, "interactive": replace(TYPELESS_PARAMS, uhi=8.0, umed=5.5)},
    "lublin-2": {"typed": True, "batch": replace(BATCH_PARAMS, uhi=8.0, umed=6.0),
                 "interactive": replace(INTERACTIVE_PARAMS, uhi=8.0, umed=5.5)},
}


def _gamcdf(x, a, b):
    """Regularised lower incomplete gamma P(a, x/b) (series or continued fraction, as in the C code)."""
    x = x / b
    if x <= 0:
        return 0.0
    gln = math.lgamma(a)
    if x < a + 1:
        ap, total, delta = a, 1.0 / a, 1.0 / a
        for _ in range(1000):
            ap += 1
            delta *= x / ap
            total += delta
            if abs(delta) < abs(total) * 1e-10:
                break
        return total * math.exp(-x + a * math.log(x) - gln)
    bb = x + 1 - a
    c, d = 1.0 / 1e-30, 1.0 / bb
    h = d
    for i in range(1, 1001):
        an = -i * (i - a)
        bb += 2
        d = an * d + bb
        d = 1e-30 if abs(d) < 1e-30 else d
        c = bb + an / c
        c = 1e-30 if abs(c) < 1e-30 else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-10:
            break
    return 1.0 - math.exp(-x + a * math.log(x) - gln) * h


def _nodes(rng, p, n):
    u = rng.random(n)
    v = rng.random(n)
    lo = np.where(v <= p.uprob, p.ulow, p.umed)
    hi = np.where(v <= p.uprob, p.umed, p.uhi)
    par = rng.random(n) * (hi - lo) + lo
    par = np.where(u <= p.serial_prob + p.pow2_prob, np.floor(par + 0.5), par)
    nodes = np.floor(2.0 ** par + 0.5).astype(np.int64)
    return np.where(u <= p.serial_prob, 1, nodes)


def _runtimes(rng, p, nodes):
    prob = np.clip(p.pa * nodes + p.pb, 0.0, 1.0)
    out = np.empty(len(nodes))
    todo = np.arange(len(nodes))
    while len(todo):
        first = rng.random(len(todo)) <= prob[todo]
        g = np.where(first, rng.gamma(p.a1, p.b1, len(todo)), rng.gamma(p.a2, p.b2, len(todo)))
        ok = g <= _TOO_MUCH_TIME
        out[todo[ok]] = g[ok]
        todo = todo[~ok]
    return np.exp(out).astype(np.int64)


class _Arrivals:
    """One job type's arrival process (``arrive_init`` / ``calc_next_arrive`` of the C program)."""

    def __init__(self, rng, p, start_hour):
        self.rng, self.alpha, self.beta = rng, p.aarr * p.arar, p.barr
        w = np.empty(_BUCKETS)
        for i in range(_CYCLIC_DAY_START, _CYCLIC_DAY_START + _BUCKETS):
            w[(i - 1) % _BUCKETS] = _gamcdf(i + 0.5, p.anum, p.bnum) - _gamcdf(i - 0.5, p.anum, p.bnum)
        self.weights = (w / w.mean()).tolist()
        self.bucket = int(start_hour * _BUCKETS / 24)
        self.points = 0.0
        self.reminder = 0.0
        self.time = 0.0
        self._pool = []
        self.advance()

    def _gamma(self):
        while True:
            if not self._pool:
                draw = self.rng.gamma(self.alpha, self.beta, 4096)
                self._pool = draw[draw <= _TOO_MUCH_ARRIVE].tolist()[::-1]
            if self._pool:
                return self._pool.pop()

    def advance(self):
        w = self.weights
        b = self.bucket
        self.points += math.exp(self._gamma()) / _BUCKET_SECONDS
        nxt = 0.0
        while self.points > w[b]:
            self.points -= w[b]
            b = (b + 1) % _BUCKETS
            nxt += _BUCKET_SECONDS
        new_rem = self.points / w[b]
        nxt += _BUCKET_SECONDS * (new_rem - self.reminder)
        self.reminder = new_rem
        self.time += nxt
        self.bucket = b


def generate_lublin(n_jobs: int = 10_000, preset: str = "lublin-1", seed: int = 0, start_hour: int = 0,
                    **overrides: float) -> JobTable:
    """Generate ``n_jobs`` jobs of the Lublin-Feitelson model.

    ``preset``: a key of :data:`LUBLIN_PRESETS`. ``overrides`` (e.g. ``uhi=7``, ``umed=4.5``) replace
    constants of every job type of the preset. Job type goes to the SWF queue field (0 interactive,
    1 batch), as the C program writes it.
    """
    if preset not in LUBLIN_PRESETS:
        raise ConfigError(f"unknown Lublin preset {preset!r}; known: {', '.join(LUBLIN_PRESETS)}")
    check_int("n_jobs", n_jobs, 1, MAX_GENERATED_JOBS)
    check_int("start_hour", start_hour, 0, 23)
    for name, value in overrides.items():
        # (sizes are 2**u nodes: u up to 24 keeps them within the largest cluster pbf schedules)
        check_real(name, value, 0, 1 if name == "uprob" else 24)
    conf = dict(LUBLIN_PRESETS[preset])
    for key in ("batch", "interactive"):
        if key in conf and overrides:
            try:
                conf[key] = replace(conf[key], **overrides)
            except TypeError as exc:
                raise ConfigError(f"unknown Lublin constant in {sorted(overrides)}: {exc}") from None
    for p in (conf[k] for k in ("batch", "interactive") if k in conf):
        if not p.ulow <= p.umed <= p.uhi:
            raise ConfigError(f"Lublin constants must keep ulow <= umed <= uhi, got ulow={p.ulow:g}, "
                              f"umed={p.umed:g}, uhi={p.uhi:g}")
    ss = np.random.SeedSequence(seed).spawn(4)
    rngs = [np.random.Generator(np.random.PCG64(s)) for s in ss]
    streams = {INTERACTIVE: _Arrivals(rngs[0], conf["interactive"], start_hour)}
    if conf["typed"]:
        streams[BATCH] = _Arrivals(rngs[1], conf["batch"], start_hour)
    submit = np.empty(n_jobs, dtype=np.int64)
    jtype = np.empty(n_jobs, dtype=np.int64)
    inter = streams[INTERACTIVE]
    batch = streams.get(BATCH)
    for i in range(n_jobs):
        s = batch if batch is not None and batch.time < inter.time else inter
        submit[i] = int(s.time)
        jtype[i] = BATCH if s is batch else INTERACTIVE
        s.advance()
    nodes = np.empty(n_jobs, dtype=np.int64)
    run = np.empty(n_jobs, dtype=np.int64)
    for t, key, rng in ((INTERACTIVE, "interactive", rngs[2]), (BATCH, "batch", rngs[3])):
        idx = np.nonzero(jtype == t)[0]
        if len(idx):
            nodes[idx] = _nodes(rng, conf[key], len(idx))
            run[idx] = _runtimes(rng, conf[key], nodes[idx])
    max_nodes = int(round(2 ** max(p.uhi for k, p in conf.items() if k != "typed")))
    header = SwfHeader()
    for key, value in (("Version", "2"), ("Acknowledge", "Uri Lublin, Hebrew University"),
                       ("Information", "http://www.cs.huji.ac.il/labs/parallel/workload"),
                       ("MaxJobs", n_jobs), ("MaxRecords", n_jobs), ("MaxNodes", max_nodes),
                       ("MaxProcs", max_nodes), ("MaxRuntime", int(math.exp(_TOO_MUCH_TIME)))):
        header.set(key, value)
    header.add_line(f" Note: pbf generate_lublin(n_jobs={n_jobs}, preset={preset!r}, seed={seed}, "
                    f"start_hour={start_hour}" + "".join(f", {k}={v}" for k, v in overrides.items()) + ")")
    return JobTable.from_arrays(header, job_id=np.arange(1, n_jobs + 1), submit=submit, run=run,
                                alloc_procs=nodes, status=np.ones(n_jobs), queue=jtype)
