"""Evaluating pick rules on fixed windows (RLScheduler's evaluation protocol, §1.11 of the reference).

Heuristics and kernel policies run the same compiled episodes; a kernel policy picks the visible job
of highest score (``greedy``) or samples the masked softmax with a seed (RLScheduler's evaluation).
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .. import _rlsim
from ..errors import ConfigError
from .env import FEATURES, HEURISTICS, ROWS, _Episodes
from .kernel import KernelPolicy

if TYPE_CHECKING:
    from .trace import RLTrace

__all__ = ["evaluate_windows", "RLS_TEST_STARTS", "RLSCHEDULER_TABLE", "RLS_TRACES", "held_out_starts",
           "validation_starts", "select_checkpoint", "paired_difference", "held_apart_ranges"]

#: RLScheduler's test windows: seed 1, 10 windows of 1,024 jobs in the first 10,000 jobs
RLS_TEST_STARTS = (1981, 2756, 4299, 8850, 3316, 2714, 5228, 7762, 4022, 7085)
RLS_TRACES = {"lublin-1": "rlsched_lublin_256.swf.gz", "sdsc-sp2": "SDSC-SP2-1998-4.2-cln.swf.gz",
              "hpc2n": "HPC2N-2002-2.2-cln.swf.gz", "lublin-2": "rlsched_lublin_256_new2.swf.gz"}
#: RLScheduler's README: mean bounded slowdown over its test windows, without / with backfilling
RLSCHEDULER_TABLE = {
    "lublin-1": {False: {"fcfs": 7273.77, "wfp3": 19753.53, "unicep": 22274.74, "sjf": 277.35, "f1": 258.37,
                         "rl": 254.67},
                 True: {"fcfs": 235.82, "wfp3": 133.87, "unicep": 307.23, "sjf": 73.31, "f1": 75.07, "rl": 58.64}},
    "sdsc-sp2": {False: {"fcfs": 1727.54, "wfp3": 3000.88, "unicep": 1848.45, "sjf": 2680.55, "f1": 1232.06,
                         "rl": 466.44},
                 True: {"fcfs": 1595.12, "wfp3": 1083.12, "unicep": 548.01, "sjf": 2167.84, "f1": 1098.22,
                        "rl": 397.82}},
    "hpc2n": {False: {"fcfs": 297.18, "wfp3": 426.99, "unicep": 609.77, "sjf": 157.71, "f1": 118.01, "rl": 117.01},
              True: {"fcfs": 127.38, "wfp3": 97.39, "unicep": 175.12, "sjf": 122.04, "f1": 71.95, "rl": 86.14}},
    "lublin-2": {False: {"fcfs": 7842.47, "wfp3": 9523.18, "unicep": 11265.31, "sjf": 787.89, "f1": 698.34,
                         "rl": 724.51},
                 True: {"fcfs": 247.61, "wfp3": 318.35, "unicep": 379.59, "sjf": 91.99, "f1": 148.25, "rl": 118.79}},
}


class _Windows(_Episodes):
    def __init__(self, trace, window, metric, backfill, compat, skip):
        self._setup(trace, window, metric, backfill, skip, compat, (), None, None, None)


def evaluate_windows(trace: str | os.PathLike | RLTrace, rules: Mapping[str, str | KernelPolicy], *,
                     starts: Sequence[int] = RLS_TEST_STARTS, window: int = 1024, metric: str = "bsld",
                     backfill: bool = False, compat: str | None = "rlscheduler", skip: bool = False,
                     samples: int = 0, seed: int | None = 0) -> dict[str, list[float]]:
    """The metric of each rule on each window: ``{name: [value per window]}``.

    ``rules``: ``{name: heuristic name or KernelPolicy}``. A kernel policy is run greedily; with
    ``samples=k`` also ``k`` seeded sampled runs per window (``"<name>~sampled"``: their mean).
    """
    w = _Windows(trace, window, metric, backfill, compat, skip)
    n = len(w.trace)
    for s in starts:
        if not 0 <= s <= n - window:
            raise ConfigError(f"window start {s}: a window of {window} jobs must begin in [0, {n - window}]")
    sim = w._sim()
    out = {}
    for name, rule in rules.items():
        if isinstance(rule, str):
            if rule not in HEURISTICS:
                raise ConfigError(f"rule {name}: unknown heuristic {rule!r}; known: {', '.join(HEURISTICS)}")
            vals = []
            for s in starts:
                sim.reset(int(s), window)
                vals.append(sim.run_heuristic(HEURISTICS[rule]))
            out[name] = vals
        elif isinstance(rule, KernelPolicy):
            vals = []
            for s in starts:
                sim.reset(int(s), window)
                vals.append(_rlsim.run_policy(sim, rule.compiled))
            out[name] = vals
            if samples:
                sampled = KernelPolicy(rule.weights, rule.meta, sample=True, seed=seed)
                vals = []
                for s in starts:
                    vals.append(float(np.mean([_sampled(sim, sampled, int(s), window) for _ in range(samples)])))
                out[f"{name}~sampled"] = vals
        else:
            raise ConfigError(f"rule {name}: expected a heuristic name or a KernelPolicy, got {rule!r}")
    return out


def _sampled(sim, policy, start, window):
    obs = np.zeros(ROWS * FEATURES, dtype=np.float32)
    mask = np.zeros(ROWS, dtype=np.int8)
    sim.reset(start, window)
    sim.observe(obs, mask)
    done = sim.done
    while not done:
        done = sim.step(policy.act(obs, mask), obs, mask)
    return sim.value()




def paired_difference(values: Sequence[float], bar: Sequence[float], starts: Sequence[int],
                      window: int = 1024) -> tuple[float, float | None]:
    """``(mean, standard error)`` of the per-window differences ``values - bar`` on the windows
    beginning at ``starts`` (``window`` jobs each); the standard error is None for one window.

    Windows that share jobs give correlated differences, so the error is not the plain
    ``std / sqrt(n)``: each pair of windows is taken to be correlated by the share of jobs they
    have in common, ``Var(mean) = s^2 / n^2 x sum_ij overlap_ij`` (``overlap_ii = 1``). For
    disjoint windows that is ``s^2 / n``; for windows drawn at random from a short stretch of a
    trace it is larger.
    """
    d = np.asarray(values, dtype=float) - np.asarray(bar, dtype=float)
    n = len(d)
    if n != len(starts):
        raise ValueError(f"{n} differences for {len(starts)} windows")
    if n < 2:
        return (float(d.mean()) if n else float("nan")), None
    s = np.asarray(starts, dtype=np.int64)
    overlap = np.clip(window - np.abs(s[:, None] - s[None, :]), 0, None) / window
    return float(d.mean()), float(np.sqrt(d.var(ddof=1) * overlap.sum()) / n)


def held_out_starts(n_jobs: int, count: int = 10, window: int = 1024) -> tuple[int, ...] | None:
    """``pbf experiment rlscheduler --held-out``'s windows: ``count`` starts drawn (seed 1) in
    ``[10,000, n_jobs - window - 1)``, or None when the trace is too short (the Lublin traces)."""
    lo, hi = 10_000, n_jobs - window - 1
    if hi <= lo:
        return None
    rng = np.random.default_rng(1)
    return tuple(int(s) for s in rng.integers(lo, hi, size=count))


def validation_starts(n_jobs: int, *, window: int = 1024, count: int = 10, after: int = 0, seed: int = 2,
                      test_window: int = 1024) -> tuple[int, ...]:
    """Windows for choosing a checkpoint: ``count`` starts drawn (``seed``) whose ``window`` jobs
    overlap neither RLScheduler's test windows nor the held-out windows, and begin at or after
    ``after`` (pass the training ``--slice`` so that they lie outside the jobs trained on too).

    On the Lublin traces (10,000 jobs, the test windows cover jobs 1,981-6,251 and 7,085-9,873)
    only short windows fit: use ``window=256``; they then lie inside the trace trained on.
    """
    taken = [(s, s + test_window) for s in RLS_TEST_STARTS]
    taken += [(s, s + test_window) for s in (held_out_starts(n_jobs) or ())]
    free = [s for s in range(max(after, 0), n_jobs - window)
            if all(s + window <= a or s >= b for a, b in taken)] if n_jobs < 50_000 else None
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(100_000):
        if len(out) == count:
            break
        if free is not None:
            if not free:
                break
            s = int(free[rng.integers(len(free))])
        else:
            s = int(rng.integers(max(after, 0), n_jobs - window))
            if not all(s + window <= a or s >= b for a, b in taken):
                continue
        if s not in out:
            out.append(s)
    if len(out) < count:
        raise ConfigError(f"only {len(out)} validation windows of {window} jobs fit apart from the test and "
                          f"held-out windows (after job {after})")
    return tuple(out)


def held_apart_ranges(n_jobs: int, validation_windows: int, *, seed: int = 2,
                      window: int = 1024) -> tuple[tuple[int, int], ...]:
    """The job ranges a run trained with ``--hold-apart N`` never draws from: the 10 held-out windows
    of :func:`held_out_starts` and the ``N`` validation windows ``python -m pbf.rl.select
    --validation-windows N`` (``--after 0``, seed 2) chooses its checkpoint on.

    Raises :class:`ConfigError` on a trace without held-out windows (fewer than 11,025 jobs).
    """
    held = held_out_starts(n_jobs, 10, window)
    if held is None:
        raise ConfigError(f"a trace of {n_jobs} jobs has no held-out windows to keep apart (it needs more "
                          f"than {10_000 + window + 1} jobs); on the Lublin traces hold out a generated trace")
    val = validation_starts(n_jobs, window=window, count=validation_windows, seed=seed)
    return tuple((s, s + window) for s in held + val)


def select_checkpoint(trace: str | os.PathLike | RLTrace, paths: Sequence[str | os.PathLike], *,
                      starts: Sequence[int], window: int = 1024, backfill: bool = False,
                      compat: str | None = "rlscheduler") -> tuple[str, dict[str, float]]:
    """Greedy mean metric of each kernel policy file of ``paths`` on the windows ``starts``:
    ``(best path, {path: mean})`` (ties go to the earlier path)."""
    rules = {str(p): KernelPolicy.load(p) for p in paths}
    vals = evaluate_windows(trace, rules, starts=starts, window=window, backfill=backfill, compat=compat)
    means = {k: float(np.mean(v)) for k, v in vals.items()}
    best = min(means, key=lambda k: means[k])
    return best, means
