"""The job-selection environment (RLScheduler's SchedGym semantics, compiled steps).

An episode is a window of ``window`` consecutive jobs of a trace, starting at an index drawn from
the environment's own generator; the agent sees up to 128 queued jobs (8 features each, a flat
``Box``) and picks the one to start next (``Discrete(128)``, rows masked by ``action_masks()``).
The reward is 0 until the last job of the window has started, then minus the episode's metric (plus
the utilisation). Rules and the two modes: ``docs/rl.md``.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .. import _rlsim
from ..errors import ConfigError
from .trace import RLTrace

__all__ = ["JobSelectionEnv", "VecJobSelection", "WindowFilter", "HEURISTICS", "METRICS"]

#: heuristic pick rules (ascending RLScheduler scores; §6.1 of the workloads reference)
HEURISTICS = {"fcfs": _rlsim.H_FCFS, "wfp3": _rlsim.H_WFP3, "unicep": _rlsim.H_UNICEP, "sjf": _rlsim.H_SJF,
              "f1": _rlsim.H_F1, "smallest": _rlsim.H_SMALLEST, "f2": _rlsim.H_F2}
#: episode metrics; the reward is minus the metric, plus for utilisation
METRICS = {"bsld": _rlsim.M_BSLD, "wait": _rlsim.M_WAIT, "turnaround": _rlsim.M_TURNAROUND,
           "utilisation": _rlsim.M_UTIL, "slowdown": _rlsim.M_SLOWDOWN}
ROWS, FEATURES = _rlsim.ROWS, _rlsim.FEATURES
_COMPAT = (None, "rlscheduler")


def _trace(trace, compat):
    if isinstance(trace, RLTrace):
        if trace.compat != compat or trace.loader == "rlbackfilling":
            raise ConfigError(f"trace {trace.name} was loaded with compat={trace.compat}, the environment "
                              f"needs compat={compat}: load it again with RLTrace.load(..., compat={compat})")
        return trace
    if isinstance(trace, (str, os.PathLike)):
        return RLTrace.load(trace, compat=compat)
    raise ConfigError(f"trace: expected a path or an RLTrace, got {trace!r}")


class WindowFilter:
    """RLScheduler's trajectory filter: train on windows whose SJF metric lies in ``(lo, hi)``.

    ``mode="absolute"``: the given bounds (RLScheduler's code: 10 and 150 on bounded slowdown).
    ``mode="quantile"``: lo = the median and hi = twice the mean of the SJF metric over ``sample``
    windows drawn with ``seed`` (the paper's rule), computed on first use.
    """

    def __init__(self, mode: str = "absolute", lo: float = 10.0, hi: float = 150.0, sample: int = 2000,
                 seed: int | None = 0):
        if mode not in ("absolute", "quantile"):
            raise ConfigError(f"window filter mode must be 'absolute' or 'quantile', got {mode!r}")
        self.mode, self.lo, self.hi, self.sample, self.seed = mode, float(lo), float(hi), int(sample), seed
        self._ready = mode == "absolute"

    def bounds(self, env: JobSelectionEnv | VecJobSelection) -> tuple[float, float]:
        """``(lo, hi)``: the SJF metrics a window must lie between (drawn from ``env`` on first use)."""
        if not self._ready:
            rng = np.random.default_rng(self.seed)
            values = [env.baseline_of(env._uniform_start(rng), "sjf") for _ in range(self.sample)]
            self.lo, self.hi = float(np.median(values)), 2.0 * float(np.mean(values))
            self._ready = True
        return self.lo, self.hi

    def describe(self) -> dict:
        """The filter's mode and bounds, as written to a training's config."""
        return {"mode": self.mode, "lo": self.lo, "hi": self.hi}


def _job_ranges(ranges):
    out = []
    for r in ranges:
        try:
            a, b = (int(x) for x in r)
        except (TypeError, ValueError):
            raise ConfigError(f"avoid_jobs: expected (first, end) job ranges, got {r!r}") from None
        if not 0 <= a < b:
            raise ConfigError(f"avoid_jobs: range {r!r} must satisfy 0 <= first < end")
        out.append((a, b))
    return tuple(sorted(out))


class _Episodes:
    """What both environment forms share: the trace, the settings, window starts and baselines."""

    def _setup(self, trace, window, metric, backfill, skip, compat, baselines, slice_jobs, skip_time,
               window_filter, avoid_jobs=()):
        if compat not in _COMPAT:
            raise ConfigError(f"compat must be None or 'rlscheduler', got {compat!r}")
        if metric not in METRICS:
            raise ConfigError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        for b in baselines:
            if b not in HEURISTICS:
                raise ConfigError(f"baseline {b!r} is not a heuristic; known: {', '.join(HEURISTICS)}")
        self.compat = compat
        self.trace = _trace(trace, compat == "rlscheduler")
        window = int(window)
        size = len(self.trace) if not slice_jobs else min(int(slice_jobs), len(self.trace))
        # RLScheduler draws starts in [window, size - window - 1)
        self.start_lo, self.start_hi = window, size - window - 1
        if window < 1 or self.start_hi <= self.start_lo:
            raise ConfigError(f"window of {window} jobs: the trace ({size} jobs used) needs more than "
                              f"{3 * window + 1} jobs")
        self.window, self.metric, self.backfill, self.skip = window, metric, bool(backfill), bool(skip)
        self.skip_time = int(skip_time if skip_time is not None else (360 if compat else 60))
        self.baselines = tuple(baselines)
        self.window_filter = window_filter
        self.avoid_jobs = _job_ranges(avoid_jobs)
        self._allowed = None
        if self.avoid_jobs:
            # a drawn window may share no job with an avoided range: [s, s + window) misses [a, b)
            ok = np.ones(self.start_hi - self.start_lo, dtype=bool)
            for a, b in self.avoid_jobs:
                ok[max(a - window + 1 - self.start_lo, 0):max(b - self.start_lo, 0)] = False
            self._allowed = np.flatnonzero(ok) + self.start_lo
            if not len(self._allowed):
                raise ConfigError(f"no window of {window} jobs in [{self.start_lo}, {self.start_hi}) misses "
                                  f"the {len(self.avoid_jobs)} avoided job ranges")
        self._scratch = self._sim()

    def _sim(self):
        t = self.trace
        return _rlsim.Sim(t.submit, t.run, t.req, t.nodes, t.procs, t.features, total_nodes=t.total_nodes,
                          ppn=t.procs_per_node, max_procs=t.max_procs, cap=self.window,
                          compat=self.compat == "rlscheduler", backfill=self.backfill, skip=self.skip,
                          skip_time=self.skip_time, metric=METRICS[self.metric])

    def baseline_of(self, start: int, heuristic: str) -> float:
        """The metric of the window at ``start`` scheduled by a heuristic (same rules as the agent)."""
        self._scratch.reset(start, self.window)
        return self._scratch.run_heuristic(HEURISTICS[heuristic])

    def _draw_start(self, rng, options):
        if options and "start" in options:
            start = int(options["start"])
            if not 0 <= start <= len(self.trace) - self.window:
                raise ConfigError(f"start {start}: a window of {self.window} jobs must begin in "
                                  f"[0, {len(self.trace) - self.window}]")
            return start, {}
        if self.window_filter is None:
            return self._uniform_start(rng), {}
        lo, hi = self.window_filter.bounds(self)
        for _ in range(1000):
            start = self._uniform_start(rng)
            value = self.baseline_of(start, "sjf")
            if lo < value < hi:
                return start, {"sjf": value}
        raise ConfigError(f"window filter ({lo:g}, {hi:g}): no window in 1,000 draws has its SJF "
                          f"{self.metric} in range")

    def _uniform_start(self, rng):
        if self._allowed is None:
            return int(rng.integers(self.start_lo, self.start_hi))
        return int(self._allowed[rng.integers(len(self._allowed))])

    def _baselines(self, start, known):
        return {b: known[b] if b in known else self.baseline_of(start, b) for b in self.baselines}

    def _reward(self, value):
        return value if self.metric == "utilisation" else -value


try:
    import gymnasium as gym
    from gymnasium import spaces
except ImportError:  # pragma: no cover - the rl extra is not installed
    gym = None


if gym is not None:
    class JobSelectionEnv(_Episodes, gym.Env):
        """Pick the next job to start (RLScheduler's environment on pbf's compiled episodes).

        ``trace``: an SWF path or an :class:`RLTrace`; ``window``: jobs per episode (RLScheduler
        trains on 256 and tests on 1,024); ``metric``: ``bsld`` (bound 10 s), ``wait``,
        ``turnaround``, ``utilisation`` or ``slowdown``; ``backfill``: backfill while the picked job
        waits (EASY by default, RLScheduler's rule in compat mode); ``skip``: add a "wait" row after
        the jobs; ``compat="rlscheduler"``: reproduce RLScheduler's quirks (``docs/rl.md``);
        ``baselines``: heuristics run on every window at reset (their metrics in ``info``);
        ``slice_jobs``: draw windows from the first jobs only (RLScheduler's ``batch_job_slice``);
        ``window_filter``: a :class:`WindowFilter`; ``avoid_jobs``: ``(first, end)`` job ranges no
        drawn window may touch (the held-out and validation windows of :func:`held_apart_ranges`).

        ``reset(options={"start": k})`` runs the window starting at job k. ``info["job"]`` after a
        step: the job picked (its index in ``env.trace``; -1 for the skip row). An action on a
        masked row never raises: the first visible job is picked instead and
        ``info["invalid_action"]`` is True.
        """
        metadata = {"render_modes": []}

        def __init__(self, trace: str | os.PathLike | RLTrace, *, window: int = 256, metric: str = "bsld",
                     backfill: bool = False, skip: bool = False, compat: str | None = None,
                     baselines: Sequence[str] = ("sjf", "f1"), slice_jobs: int | None = None,
                     skip_time: int | None = None, window_filter: WindowFilter | None = None,
                     avoid_jobs: Sequence[tuple[int, int]] = ()):
            self._setup(trace, window, metric, backfill, skip, compat, baselines, slice_jobs, skip_time,
                        window_filter, avoid_jobs)
            self.observation_space = spaces.Box(0.0, 1.0, shape=(ROWS * FEATURES,), dtype=np.float32)
            self.action_space = spaces.Discrete(ROWS)
            self.sim = self._sim()
            self._obs = np.zeros(ROWS * FEATURES, dtype=np.float32)
            self._mask = np.zeros(ROWS, dtype=np.int8)
            self._info = {}
            self.start = -1

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
            """Draw a window (or take ``options["start"]``), run its baselines; the first observation."""
            super().reset(seed=seed)
            self.start, known = self._draw_start(self.np_random, options)
            self._info = {"start": self.start, "baselines": self._baselines(self.start, known)}
            self.sim.reset(self.start, self.window)
            self.sim.observe(self._obs, self._mask)
            return self._obs.copy(), dict(self._info)

        def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
            """Start the job of row ``action``; ``(obs, reward, done, truncated, info)``."""
            if self.sim.done:
                raise ConfigError("step() after the episode ended: call reset() first")
            row = int(action) if np.ndim(action) == 0 else -1
            invalid = not (0 <= row < ROWS and self._mask[row])
            if invalid:
                row = int(np.argmax(self._mask))
            job = self.sim.job_at(row)
            done = self.sim.step(row, self._obs, self._mask)
            info = {"invalid_action": invalid, "job": job}
            reward = 0.0
            if done:
                value = self.sim.value()
                reward = float(self._reward(value))
                info.update(self._info, metric=value)
            return self._obs.copy(), reward, bool(done), False, info

        def action_masks(self) -> np.ndarray:
            """Rows that hold a job (or the live skip row): MaskablePPO's mask."""
            return self._mask.astype(bool)

        def schedule(self) -> np.ndarray:
            """Start time of every job of the current window (-1: not started yet)."""
            return self.sim.starts()
else:  # pragma: no cover
    class JobSelectionEnv:  # noqa: D101 - a placeholder that says what is missing
        def __init__(self, *args: object, **kwargs: object):
            raise ImportError("JobSelectionEnv needs gymnasium: pip install 'pbf[rl]'")


class VecJobSelection(_Episodes):
    """Many job-selection windows stepped in one compiled call (for training; numpy only).

    Same arguments as :class:`JobSelectionEnv` plus ``n_envs`` and ``seed``. ``step(actions)``
    returns ``(obs, rewards, dones, infos)``; a window that ends is reset at once (its last
    observation in ``infos[i]["terminal_observation"]``), as Stable-Baselines3 vector envs do.
    """

    def __init__(self, trace: str | os.PathLike | RLTrace, n_envs: int = 8, *, seed: int | None = None,
                 window: int = 256, metric: str = "bsld", backfill: bool = False, skip: bool = False,
                 compat: str | None = None, baselines: Sequence[str] = (), slice_jobs: int | None = None,
                 skip_time: int | None = None, window_filter: WindowFilter | None = None,
                 avoid_jobs: Sequence[tuple[int, int]] = ()):
        self._setup(trace, window, metric, backfill, skip, compat, baselines, slice_jobs, skip_time,
                    window_filter, avoid_jobs)
        if n_envs < 1:
            raise ConfigError(f"n_envs must be >= 1, got {n_envs}")
        self.n_envs = int(n_envs)
        self.rng = np.random.default_rng(seed)
        self.sims = [self._sim() for _ in range(self.n_envs)]
        self.obs = np.zeros((self.n_envs, ROWS * FEATURES), dtype=np.float32)
        self.masks = np.zeros((self.n_envs, ROWS), dtype=np.int8)
        self._done = np.zeros(self.n_envs, dtype=np.int8)
        self.starts = np.full(self.n_envs, -1, dtype=np.int64)
        self.invalid_actions = 0

    def seed(self, seed: int | None) -> None:
        """Reseed the generator that draws the windows."""
        self.rng = np.random.default_rng(seed)

    def _reset_one(self, i):
        start, known = self._draw_start(self.rng, None)
        self.starts[i] = start
        info = {"start": start, "baselines": self._baselines(start, known)}
        self.sims[i].reset(start, self.window)
        self.sims[i].observe(self.obs[i], self.masks[i])
        return info

    def reset(self) -> np.ndarray:
        """Draw a window for every environment; their observations (their infos in ``reset_infos``)."""
        self.reset_infos = [self._reset_one(i) for i in range(self.n_envs)]
        return self.obs.copy()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """One row per environment; ``(obs, rewards, dones, infos)``, ended windows reset at once."""
        rows = np.asarray(actions, dtype=np.int64).reshape(self.n_envs)
        bad = ~((rows >= 0) & (rows < ROWS))
        bad[~bad] = self.masks[np.flatnonzero(~bad), rows[~bad]] == 0
        if bad.any():
            self.invalid_actions += int(bad.sum())
            rows = np.where(bad, np.argmax(self.masks, axis=1), rows)
        _rlsim.step_many(self.sims, np.ascontiguousarray(rows), self.obs, self.masks, self._done)
        rewards = np.zeros(self.n_envs, dtype=np.float32)
        dones = self._done.astype(bool)
        infos = [{"invalid_action": bool(b)} for b in bad]
        for i in np.flatnonzero(dones):
            value = self.sims[i].value()
            rewards[i] = self._reward(value)
            infos[i].update(metric=value, start=int(self.starts[i]), terminal_observation=self.obs[i].copy())
            infos[i]["next"] = self._reset_one(i)
        return self.obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The rows each environment may pick, (n_envs, 128) booleans."""
        return self.masks.astype(bool)
