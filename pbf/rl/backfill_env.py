"""The backfilling environment (RLBackfilling's semantics, compiled steps).

An episode is a window of ``window`` consecutive jobs of a trace. The head job (by the base
priority, ``head``) starts when it fits; while it does not, the jobs that could start now are the
candidates (``guarded``: only those that cannot delay the head, by its shadow time plus ``relax``
times its expected wait; unguarded: any that fits). Then the agent picks one, which starts now
(``Discrete(128)``, the candidates' rows in ``action_masks()``), or in the default mode the stop
row; with too few candidates (compat: fewer than two) the classic rule runs; with none time
advances. The observation is 128 rows x 6 features (a flat ``Box``). The
reward is 0 until the window is over, then ``(b - v) / b`` with ``v`` the episode's mean bounded
slowdown and ``b`` that of EASY with shortest-first backfilling (FCFS head) on the same window, as
RLBackfilling rewards it. Rules and the two modes: ``docs/rl.md``.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from .. import _rlsim
from ..errors import ConfigError
from .trace import RLTrace

__all__ = ["BackfillEnv", "VecBackfill", "ORDERS", "BASELINES", "BF_ROWS", "BF_FEATURES"]

#: head / backfill orders (RLBackfilling's score functions, ascending first)
ORDERS = {"fcfs": _rlsim.O_FCFS, "sjf": _rlsim.O_SJF, "wfp3": _rlsim.O_WFP3, "f1": _rlsim.O_F1,
          "largest": _rlsim.O_LARGEST}
#: heuristic schedules of a window: (head order, backfill order) with EASY's guarded backfilling
BASELINES = {"easy": ("fcfs", "fcfs"), "easy-sjbf": ("fcfs", "sjf"), "easy-largest": ("fcfs", "largest"),
             "sjf+easy": ("sjf", "fcfs"), "wfp3+easy": ("wfp3", "fcfs"), "f1+easy": ("f1", "fcfs")}
BF_ROWS, BF_FEATURES = _rlsim.ROWS, _rlsim.BF_FEATURES
REWARD_BASELINE = "easy-sjbf"
_COMPAT = (None, "rlbackfilling")
#: the default mode's requested-time scale (seconds): the same for every trace, so that a model
#: reads a job's length alike wherever it is applied (compat: the trace's largest run time)
REQ_SCALE = 86400.0


def _trace(trace):
    # both modes load traces by RLBackfilling's rules (its test windows index that job list)
    if isinstance(trace, RLTrace):
        if trace.loader != "rlbackfilling":
            raise ConfigError(f"trace {trace.name} was loaded by the {trace.loader!r} rules, the backfilling "
                              f"environment needs RLTrace.load(..., compat='rlbackfilling')")
        return trace
    if isinstance(trace, (str, os.PathLike)):
        return RLTrace.load(trace, compat="rlbackfilling")
    raise ConfigError(f"trace: expected a path or an RLTrace, got {trace!r}")


class _BackfillEpisodes:
    """What both environment forms share: the trace, the settings, window starts and baselines."""

    def _setup(self, trace, window, head, guarded, relax, compat, baselines, act_size, slice_jobs, clairvoyant):
        if compat not in _COMPAT:
            raise ConfigError(f"compat must be None or 'rlbackfilling', got {compat!r}")
        if head not in ORDERS:
            raise ConfigError(f"head order must be one of {', '.join(ORDERS)}, got {head!r}")
        for b in baselines:
            if b not in BASELINES:
                raise ConfigError(f"baseline {b!r} is not one of {', '.join(BASELINES)}")
        if relax < 0 or not np.isfinite(relax):
            raise ConfigError(f"relax must be a finite number >= 0, got {relax!r}")
        self.stop = compat is None
        if act_size is None:
            act_size = 1 if compat else 0
        if int(act_size) < (0 if self.stop else 1):
            raise ConfigError(f"act_size must be >= {0 if self.stop else 1} (without the stop row the agent "
                              f"needs two candidates to choose), got {act_size}")
        self.compat, self.head, self.guarded, self.relax = compat, head, bool(guarded), float(relax)
        self.act_size, self.clairvoyant = int(act_size), bool(clairvoyant)
        self.trace = _trace(trace)
        self.req_scale = float(self.trace.norm["req"]) if compat else REQ_SCALE
        window = int(window)
        size = len(self.trace) if not slice_jobs else min(int(slice_jobs), len(self.trace))
        # RLBackfilling draws starts in [window, size - window - 1)
        self.start_lo, self.start_hi = window, size - window - 1
        if window < 1 or self.start_hi <= self.start_lo:
            raise ConfigError(f"window of {window} jobs: the trace ({size} jobs used) needs more than "
                              f"{3 * window + 1} jobs")
        self.window = window
        self.baselines = tuple(dict.fromkeys((REWARD_BASELINE,) + tuple(baselines)))
        self._scratch = self._sim()

    def _sim(self):
        t = self.trace
        return _rlsim.BackfillSim(t.submit, t.run, t.run if self.clairvoyant else t.req, t.nodes, t.procs,
                                  t.total_nodes, t.procs_per_node, float(t.max_procs), max(self.req_scale, 1.0),
                                  self.window, ORDERS[self.head], self.guarded, self.relax,
                                  self.compat == "rlbackfilling", self.act_size, self.stop)

    def baseline_of(self, start: int, name: str) -> float:
        """Mean bounded slowdown of the window at ``start`` under a heuristic of :data:`BASELINES`."""
        head, order = BASELINES[name]
        return self._scratch.run_heuristic(start, self.window, ORDERS[head], ORDERS[order])

    def _check_start(self, start):
        if not 0 <= start <= len(self.trace) - self.window:
            raise ConfigError(f"start {start}: a window of {self.window} jobs must begin in "
                              f"[0, {len(self.trace) - self.window}]")

    def _begin(self, sim, rng, options):
        # a drawn window without a single choice is drawn again (it teaches nothing)
        if options and "start" in options:
            start = int(options["start"])
            self._check_start(start)
            sim.reset(start, self.window)
            return start
        for _ in range(1000):
            start = int(rng.integers(self.start_lo, self.start_hi))
            sim.reset(start, self.window)
            if not sim.done:
                return start
        raise ConfigError(f"no window of {self.window} jobs in 1,000 draws gives the agent a choice")

    def _baselines(self, start):
        return {b: self.baseline_of(start, b) for b in self.baselines}

    @staticmethod
    def reward_of(value: float, baseline: float) -> float:
        """RLBackfilling's terminal reward: the relative gain over the EASY-SJBF baseline."""
        return (baseline - value) / baseline if baseline > 0 else 0.0


try:
    import gymnasium as gym
    from gymnasium import spaces
except ImportError:  # pragma: no cover - the rl extra is not installed
    gym = None


if gym is not None:
    class BackfillEnv(_BackfillEpisodes, gym.Env):
        """Pick the job to backfill (RLBackfilling's environment on pbf's compiled episodes).

        ``trace``: an SWF path or an :class:`RLTrace`; ``window``: jobs per episode (RLBackfilling
        trains on 256 and tests on 1,024); ``head``: the base priority of the head job (``fcfs``,
        ``sjf``, ``wfp3``, ``f1``, ``largest``); ``guarded`` and ``relax``: which jobs are
        candidates (see the module); ``compat="rlbackfilling"``: its trace loading and quirks
        (``docs/rl.md``); ``baselines``: names of :data:`BASELINES` scheduled on every window at
        reset (``easy-sjbf``, the reward's, always is); ``act_size``: the agent is asked when more
        candidates than this exist; ``clairvoyant``: estimates are the actual run times.

        ``reset(options={"start": k})`` runs the window starting at job k (if it offers no choice,
        the episode is already over: ``info["no_choice"]``, and any step ends it). ``info["job"]``
        after a step: the job started (its index in ``env.trace``). An action on a masked row never
        raises: the first candidate starts instead and ``info["invalid_action"]`` is True.
        """
        metadata = {"render_modes": []}

        def __init__(self, trace: str | os.PathLike | RLTrace, *, window: int = 256, head: str = "fcfs",
                     guarded: bool = False, relax: float = 0.0, compat: str | None = None,
                     baselines: Sequence[str] = (), act_size: int | None = None, slice_jobs: int | None = None,
                     clairvoyant: bool = False):
            self._setup(trace, window, head, guarded, relax, compat, baselines, act_size, slice_jobs, clairvoyant)
            self.observation_space = spaces.Box(0.0, 1.0, shape=(BF_ROWS * BF_FEATURES,), dtype=np.float32)
            self.action_space = spaces.Discrete(BF_ROWS)
            self.sim = self._sim()
            self._obs = np.zeros(BF_ROWS * BF_FEATURES, dtype=np.float32)
            self._mask = np.zeros(BF_ROWS, dtype=np.int8)
            self._info = {}
            self._over = True
            self.start = -1

        def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
            """Draw a window that offers a choice (or take ``options["start"]``), run its baselines;
            the first observation."""
            super().reset(seed=seed)
            self._over = False
            self.start = self._begin(self.sim, self.np_random, options)
            self._info = {"start": self.start, "baselines": self._baselines(self.start)}
            self.sim.observe(self._obs, self._mask)
            info = dict(self._info)
            if self.sim.done:
                info["no_choice"] = True
            return self._obs.copy(), info

        def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
            """Start the candidate of row ``action`` (or stop); ``(obs, reward, done, truncated, info)``."""
            if self._over:
                raise ConfigError("step() after the episode ended: call reset() first")
            row = int(action) if np.ndim(action) == 0 else -1
            invalid = not (0 <= row < BF_ROWS and self._mask[row])
            job = -1
            if not self.sim.done:
                if invalid:
                    row = 0
                job = self.sim.job_at(row)      # -1: the stop row
                self.sim.step(row, self._obs, self._mask)
            info = {"invalid_action": invalid, "job": job}
            reward = 0.0
            done = bool(self.sim.done)
            if done:
                value = self.sim.value()
                base = self._info["baselines"][REWARD_BASELINE]
                reward = float(self.reward_of(value, base))
                info.update(self._info, metric=value)
                self._over = True
            return self._obs.copy(), reward, done, False, info

        def action_masks(self) -> np.ndarray:
            """Rows that hold a candidate: MaskablePPO's mask."""
            return self._mask.astype(bool)

        def schedule(self) -> np.ndarray:
            """Start time of every job of the current window (-1: not started yet)."""
            return self.sim.starts()
else:  # pragma: no cover
    class BackfillEnv:  # noqa: D101 - a placeholder that says what is missing
        def __init__(self, *args: object, **kwargs: object):
            raise ImportError("BackfillEnv needs gymnasium: pip install 'pbf[rl]'")


class VecBackfill(_BackfillEpisodes):
    """Many backfilling windows stepped in one compiled call (for training; numpy only).

    Same arguments as :class:`BackfillEnv` plus ``n_envs`` and ``seed``. ``step(actions)`` returns
    ``(obs, rewards, dones, infos)``; a window that ends is reset at once (its last observation in
    ``infos[i]["terminal_observation"]``), as Stable-Baselines3 vector envs do.
    """
    log_baseline = REWARD_BASELINE

    def __init__(self, trace: str | os.PathLike | RLTrace, n_envs: int = 8, *, seed: int | None = None,
                 window: int = 256, head: str = "fcfs", guarded: bool = False, relax: float = 0.0,
                 compat: str | None = None, baselines: Sequence[str] = (), act_size: int | None = None,
                 slice_jobs: int | None = None, clairvoyant: bool = False):
        self._setup(trace, window, head, guarded, relax, compat, baselines, act_size, slice_jobs, clairvoyant)
        if n_envs < 1:
            raise ConfigError(f"n_envs must be >= 1, got {n_envs}")
        self.n_envs = int(n_envs)
        self.rng = np.random.default_rng(seed)
        self.sims = [self._sim() for _ in range(self.n_envs)]
        self.obs = np.zeros((self.n_envs, BF_ROWS * BF_FEATURES), dtype=np.float32)
        self.masks = np.zeros((self.n_envs, BF_ROWS), dtype=np.int8)
        self._done = np.zeros(self.n_envs, dtype=np.int8)
        self.starts = np.full(self.n_envs, -1, dtype=np.int64)
        self._base = [{} for _ in range(self.n_envs)]
        self._envs = np.arange(self.n_envs)
        self.invalid_actions = 0

    def seed(self, seed: int | None) -> None:
        """Reseed the generator that draws the windows."""
        self.rng = np.random.default_rng(seed)

    def _reset_one(self, i):
        start = self._begin(self.sims[i], self.rng, None)
        self.starts[i] = start
        self._base[i] = self._baselines(start)
        self.sims[i].observe(self.obs[i], self.masks[i])
        return {"start": start, "baselines": self._base[i]}

    def reset(self) -> np.ndarray:
        """Draw a window for every environment; their observations (their infos in ``reset_infos``)."""
        self.reset_infos = [self._reset_one(i) for i in range(self.n_envs)]
        return self.obs.copy()

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
        """One row per environment; ``(obs, rewards, dones, infos)``, ended windows reset at once."""
        rows = np.asarray(actions, dtype=np.int64).reshape(self.n_envs)
        inside = (rows >= 0) & (rows < BF_ROWS)
        bad = ~inside | (self.masks[self._envs, np.where(inside, rows, 0)] == 0)
        if bad.any():
            self.invalid_actions += int(bad.sum())
            rows = np.where(bad, 0, rows)
        _rlsim.bf_step_many(self.sims, np.ascontiguousarray(rows), self.obs, self.masks, self._done)
        rewards = np.zeros(self.n_envs, dtype=np.float32)
        dones = self._done.astype(bool)
        infos = [{"invalid_action": b} for b in bad.tolist()]
        for i in np.flatnonzero(dones):
            value = self.sims[i].value()
            base = self._base[i][REWARD_BASELINE]
            rewards[i] = self.reward_of(value, base)
            infos[i].update(metric=value, start=int(self.starts[i]), baselines=self._base[i],
                            terminal_observation=self.obs[i].copy())
            infos[i]["next"] = self._reset_one(i)
        return self.obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """The rows each environment may pick, (n_envs, 128) booleans."""
        return self.masks.astype(bool)
