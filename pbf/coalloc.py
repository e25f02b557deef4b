"""Co-allocation: running jobs lend idle cores to queued jobs, and a learner decides how much.

A running *primary* job lends a fraction a in {0, 0.1, ..., 0.9} of its cores; after each pass,
queued jobs start in priority order as *secondary* jobs on lent cores (they hold no units of their
own and never a reservation). Jobs then share nodes, and each progresses at a rate from a load
model: on a node of C cores, the demand D is the sum over its cores of the CPU use u of the jobs
on them, the node runs at q = min(1, C / D) / (1 + beta x its secondary cores), and a parallel
job runs at the slowest rate of its nodes (so the 2/3-rate case: a primary on all C cores of a node
and a secondary on C/2 lent ones, u = 1, both progress at 2/3). Completions move as rates change;
requested times stretch with them (nothing is killed; overruns are counted). With a = 0 the replay
is the plain one, to the second.

Policies (``pbf replay --coalloc``): ``off``, ``fixed:A``, ``asax`` (ASA_X's Algorithm 1: one
decision-tree expert per metric -- CPU use, job class, time of day, happiness -- whose leaves learn
action probabilities from the losses, aggregated by weights alpha that move by exp(-gamma_t r) each
time the accumulated co-allocation risk r of a tree passes 1), ``hedge`` (exponential weights over
22 fixed experts: the ten constant fractions and "lend k if CPU use < theta", full-information
losses, anytime rate sqrt(8 ln E / t)) and ``exp3`` (the same experts, only the played action's
loss, importance-weighted, 10 % exploration). A decision is taken when a primary starts (and every
``interval`` seconds while it runs, when set) and judged when it ends (or at the next round): its
loss in [-1, 1] is ``lam`` x the slowdown beyond ``tau`` (1/h - 1 - tau over dmax - 1, clipped;
h = the primary's observed progress rate) minus (1 - lam) x the share of its cores that did
secondary work. The other actions' losses (full information) come from the load model, calibrated
to the observed rate. docs/coalloc.md has the decisions and their sources.

CPU use per job: SWF field 6 / field 4 (average CPU time per processor over the run time, clipped to
[0.01, 1]) where the trace has it; else a draw from Beta(2, 2) keyed by the job's id and the seed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .bounded import INT64_MAX, MAX_SECONDS, parse_real, parse_whole
from .codes import CoallocPolicy
from .errors import ConfigError

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from .workload.jobs import JobTable

__all__ = ["CoAllocation", "cpu_use", "Hedge", "hedge_regret_bound"]

_POLICIES = {"fixed": CoallocPolicy.CA_FIXED, "asax": CoallocPolicy.CA_ASAX, "learned": CoallocPolicy.CA_ASAX,
             "hedge": CoallocPolicy.CA_HEDGE, "exp3": CoallocPolicy.CA_EXP3}


@dataclass(frozen=True)
class CoAllocation:
    """Co-allocation settings (see the module docstring). ``policy``: ``fixed``, ``asax``, ``hedge``
    or ``exp3``; ``fraction``: the fixed policy's a; ``beta``: interference; ``interval``: seconds
    between decisions on a running primary (0: one, at its start); ``lam``, ``tau``, ``dmax``: the
    loss; ``seed``: the learner's random stream; ``node_cores``: cores per node (an int) or
    ``"beocat"``; ``cpu``: ``"trace"`` (field 6 / field 4, else the seeded draw), ``"synthetic"``
    (always the draw) or a number in (0, 1] for every job."""
    policy: str = "asax"
    fraction: float = 0.0
    beta: float = 0.0
    interval: int = 0
    lam: float = 0.5
    tau: float = 0.05
    dmax: float = 2.0
    seed: int = 0
    node_cores: object = 1
    cpu: object = "trace"

    def __post_init__(self):
        if self.policy not in _POLICIES:
            raise ConfigError(f"coalloc policy must be one of fixed, asax, hedge, exp3, got {self.policy!r}")
        if not _real(self.fraction) or not 0 <= self.fraction < 1:
            raise ConfigError(f"coalloc fraction must be in [0, 1), got {self.fraction!r}")
        # (finite and bounded: the load model multiplies and exponentiates them in C)
        for name, lo, hi in (("beta", 0, 1e6), ("lam", 0, 1), ("tau", 0, 1e6)):
            v = getattr(self, name)
            if not _real(v) or not lo <= v <= hi:
                raise ConfigError(f"coalloc {name} must be a number in [{lo:g}, {hi:g}], got {v!r}")
        if not _real(self.dmax) or not 1 < self.dmax <= 1e6:
            raise ConfigError(f"coalloc dmax must be a number in (1, 1e+06], got {self.dmax!r}")
        for name, hi in (("interval", MAX_SECONDS), ("seed", 2 ** 32 - 1)):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= hi:
                raise ConfigError(f"coalloc {name} must be an int from 0 to {hi:,}, got {v!r}")
        if not (self.cpu in ("trace", "synthetic") or (isinstance(self.cpu, (int, float))
                                                        and not isinstance(self.cpu, bool) and 0 < self.cpu <= 1)):
            raise ConfigError(f"coalloc cpu must be 'trace', 'synthetic' or a number in (0, 1], got {self.cpu!r}")

    @classmethod
    def parse(cls, text: str) -> CoAllocation | None:
        """``off``, ``fixed:0.3``, ``asax`` / ``learned`` / ``hedge`` / ``exp3``, each optionally
        followed by ``:key=value,...`` (``beta``, ``interval``, ``lam``, ``tau``, ``dmax``, ``seed``,
        ``node_cores``, ``cpu``)."""
        head, _, rest = text.partition(":")
        head = head.strip().lower()
        if head == "off":
            if rest:
                raise ConfigError(f"--coalloc off takes no options, got {text!r}")
            return None
        if head not in _POLICIES:
            raise ConfigError(f"--coalloc: expected off, fixed:A, asax, hedge or exp3 (with :key=value,...), "
                              f"got {text!r}")
        kw = {"policy": "asax" if head == "learned" else head}
        items = [x for x in rest.split(",") if x.strip()] if rest else []
        if head == "fixed":
            if not items or "=" in items[0]:
                raise ConfigError(f"--coalloc fixed needs a fraction, e.g. fixed:0.3, got {text!r}")
            kw["fraction"] = _number(items.pop(0), "fraction", text)
        for item in items:
            key, eq, value = item.partition("=")
            key = key.strip()
            if not eq or key not in ("beta", "interval", "lam", "tau", "dmax", "seed", "node_cores", "cpu"):
                raise ConfigError(f"--coalloc: unknown option {item.strip()!r} in {text!r}; expected beta, "
                                  "interval, lam, tau, dmax, seed, node_cores or cpu")
            value = value.strip()
            if key in ("interval", "seed"):
                kw[key] = _whole(value, key, text)
            elif key == "node_cores":
                kw[key] = value if value == "beocat" else _whole(value, key, text)
            elif key == "cpu":
                kw[key] = value if value in ("trace", "synthetic") else _number(value, key, text)
            else:
                kw[key] = _number(value, key, text)
        return cls(**kw)

    def code(self) -> int:
        return int(_POLICIES[self.policy])

    def describe(self) -> str:
        return f"fixed:{self.fraction:g}" if self.policy == "fixed" else self.policy

    def as_dict(self) -> dict:
        return {f: getattr(self, f) for f in self.__dataclass_fields__}


def _real(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _number(text, name, whole):
    try:
        return parse_real(text, -math.inf)
    except ValueError:
        raise ConfigError(f"--coalloc: {name} must be a finite number, got {text!r} in {whole!r}") from None


def _whole(text, name, whole):
    try:
        return parse_whole(text, 0, INT64_MAX)
    except ValueError:
        raise ConfigError(f"--coalloc: {name} must be a whole number >= 0, got {text!r} in {whole!r}") from None


def _uniform(keys, stream):
    # splitmix64 of (key, stream): a uniform in [0, 1) per key, the same wherever the job appears
    with np.errstate(over="ignore"):
        z = keys.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(stream) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def _beta22(job_ids, seed):
    # Beta(2, 2) is the law of the median of three uniforms
    a, b, c = (_uniform(job_ids, 3 * seed + k) for k in range(1, 4))
    return np.maximum(np.minimum(a, b), np.minimum(np.maximum(a, b), c))


def cpu_use(table: JobTable, order: np.ndarray, setting: str | float = "trace",
            seed: int = 0) -> tuple[np.ndarray, int]:
    """Per job (in ``order``), the CPU use in (0, 1] and how many came from the trace. The
    synthetic draw is Beta(2, 2) from a hash of (job id, seed): a job keeps its draw whatever else
    is in the trace (by arrival position when the ids are missing or repeated)."""
    n = len(order)
    if isinstance(setting, (int, float)):
        return np.full(n, float(setting)), 0
    ids = np.asarray(table.job_id)[order]
    if n and not (np.diff(ids) > 0).all() and len(np.unique(ids)) < n:
        ids = np.arange(n)                 # (ids missing or repeated: the arrival position keys the draw)
    if setting == "synthetic":
        return np.clip(_beta22(ids, seed), 0.01, 1.0), 0
    cpu = np.asarray(table.avg_cpu, dtype=np.float64)[order]
    run = np.asarray(table.run, dtype=np.float64)[order]
    have = (cpu > 0) & (run > 0)
    use = np.empty(n)
    use[have] = np.clip(cpu[have] / run[have], 0.01, 1.0)
    use[~have] = np.clip(_beta22(ids[~have], seed), 0.01, 1.0)
    return use, int(have.sum())


def hedge_regret_bound(T: int, experts: int, anytime: bool = True) -> float:
    """Hedge's regret bound for losses in [0, 1] (Cesa-Bianchi & Lugosi): fixed horizon
    sqrt(T/2 ln E); anytime rate sqrt(8 ln E / t): 2 sqrt(T/2 ln E) + sqrt(ln E / 8)."""
    base = math.sqrt(T / 2 * math.log(experts))
    return 2 * base + math.sqrt(math.log(experts) / 8) if anytime else base


class Hedge:
    """Exponential weights over ``experts`` (losses in [0, 1], full information), in plain Python:
    the learner of the ``hedge`` policy, and a reference for its bound. ``rate``: None = anytime
    sqrt(8 ln E / t), else fixed."""

    def __init__(self, experts: int, rate: float | None = None):
        self.logw = np.zeros(experts)
        self.rate = rate
        self.t = 0
        self.cum_loss = np.zeros(experts)
        self.cum_expected = 0.0

    def probabilities(self) -> np.ndarray:
        w = np.exp(self.logw - self.logw.max())
        return w / w.sum()

    def update(self, losses: ArrayLike) -> float:
        """Feed one round's losses (one per expert); returns the expected loss of the round."""
        losses = np.asarray(losses, dtype=np.float64)
        p = self.probabilities()
        self.t += 1
        gamma = self.rate if self.rate is not None else math.sqrt(8 * math.log(len(self.logw)) / self.t)
        expected = float(p @ losses)
        self.cum_expected += expected
        self.cum_loss += losses
        self.logw -= gamma * losses
        return expected

    @property
    def regret(self) -> float:
        return self.cum_expected - float(self.cum_loss.min())
