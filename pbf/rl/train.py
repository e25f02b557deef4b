"""Training kernel policies with sb3-contrib's MaskablePPO (needs torch): job selection and backfilling.

The policy is RLScheduler's: the actor is the per-job kernel network (8 -> 32 -> 16 -> 8 -> 1)
whose 128 outputs are the logits (SB3's extra ``action_net`` layer, which would mix rows, is
removed); the critic is RLScheduler's critic (a second kernel, then 128 -> 64 -> 32 -> 8 -> 1).
Episodes are whole windows (each rollout holds complete trajectories: ``n_steps`` is a multiple
of the window length). The reward the trainer sees is the environment's terminal reward divided by
the window's SJF metric (so windows of very different difficulty weigh alike; the environment
itself returns RLScheduler's raw reward). What differs from RLScheduler's Spinning-Up PPO is in
``docs/rl.md``.

A backfilling policy (:func:`train_backfilling`) is RLBackfilling's: the kernel actor over 6
features per candidate and its critic (an MLP on the flat observation, 768 -> 32 -> 16 -> 8 -> 1);
its reward is already relative to the window's EASY-SJBF schedule and is not scaled.
"""
from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from ..errors import ConfigError
from .backfill_env import BF_FEATURES, ORDERS, VecBackfill
from .env import FEATURES, ROWS, VecJobSelection, WindowFilter
from .kernel import KernelPolicy

__all__ = ["TrainConfig", "train_job_selection", "train_backfilling"]

#: called after every epoch with (epoch, epochs, the epoch's training.csv row)
Progress = Callable[[int, int, list], None]

try:
    import torch as th
    from gymnasium import spaces
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv
    from torch import nn
except ImportError as _exc:  # pragma: no cover - the rl extra is not installed
    _MISSING = _exc
else:
    _MISSING = None


def _require():
    if _MISSING is not None:
        raise ImportError(f"training needs torch, gymnasium and sb3-contrib: pip install 'pbf[rl]' "
                          f"(and torch, CPU build: pip install torch) ({_MISSING})")


@dataclass
class TrainConfig:
    """Settings of one training run (the flags of ``pbf train job-selection`` and ``pbf train
    backfilling``; ``head``, ``guarded`` and ``relax`` are the backfilling environment's).

    An epoch is ``trajectories`` whole windows (rounded up to a multiple of ``envs``) followed by
    ``ppo_epochs`` passes over them in minibatches of ``batch_size``. ``gae_lambda`` 1 and a
    gradient-norm cap of 10 are the defaults because a terminal-only reward reaches the first
    decisions of a 256-step window only through lambda^255 otherwise (see ``docs/rl.md``).
    """
    trace: str
    out: str
    epochs: int = 40
    trajectories: int = 100
    window: int = 256
    metric: str = "bsld"
    backfill: bool = False
    skip: bool = False
    compat: str | None = None
    slice_jobs: int | None = None
    envs: int = 8
    seed: int = 0
    learning_rate: float = 1e-3
    ppo_epochs: int = 10
    batch_size: int = 1024
    gamma: float = 1.0
    gae_lambda: float = 1.0
    clip_range: float = 0.2
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 10.0
    window_filter: str = "none"
    filter_epochs: int | None = None
    reward_scale: str = "sjf"
    checkpoint_every: int = 5
    threads: int = 1
    name: str | None = None
    head: str = "fcfs"
    guarded: bool = False
    relax: float = 0.0
    warm_start: str = "none"
    hold_apart: int = 0

    def __post_init__(self):
        self.trace, self.out = str(self.trace), str(self.out)
        if self.epochs < 1 or self.trajectories < 1 or self.envs < 1:
            raise ConfigError("epochs, trajectories and envs must be >= 1")
        if self.reward_scale not in ("sjf", "f1", "none"):
            raise ConfigError(f"reward scale must be sjf, f1 or none, got {self.reward_scale!r}")
        if self.warm_start not in ("none", "sjbf", "f1", "sjf"):
            raise ConfigError(f"warm start must be none, sjbf (backfilling), f1 or sjf (job selection), "
                              f"got {self.warm_start!r}")
        if self.head not in ORDERS:
            raise ConfigError(f"head order must be one of {', '.join(ORDERS)}, got {self.head!r}")
        if self.hold_apart < 0:
            raise ConfigError(f"hold_apart must be >= 0 validation windows, got {self.hold_apart}")
        if self.window_filter not in ("none", "absolute", "quantile"):
            raise ConfigError(f"window filter must be none, absolute or quantile, got {self.window_filter!r}")

    def as_dict(self) -> dict:
        """The settings as a plain dict (written to ``config.json``)."""
        return asdict(self)


if _MISSING is None:
    def _kernel(width_in=FEATURES):
        return nn.Sequential(nn.Linear(width_in, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(),
                             nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))

    class KernelExtractor(nn.Module):
        """The actor's per-row kernel (logits) and RLScheduler's critic (its last layer is SB3's
        ``value_net``)."""
        latent_dim_pi = ROWS
        latent_dim_vf = 8

        def __init__(self, features: int = FEATURES, critic: str = "rows"):
            super().__init__()
            self.features, self.flat_critic = features, critic == "flat"
            self.actor = _kernel(features)
            if self.flat_critic:       # RLBackfilling's critic: an MLP on the whole observation
                self.critic = nn.Sequential(nn.Linear(ROWS * features, 32), nn.ReLU(), nn.Linear(32, 16),
                                            nn.ReLU(), nn.Linear(16, 8), nn.ReLU())
            else:                      # RLScheduler's: a kernel per row, then an MLP on the 128 scores
                self.critic_rows = _kernel(features)
                self.critic = nn.Sequential(nn.Linear(ROWS, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU(),
                                            nn.Linear(32, 8), nn.ReLU())

        def forward_actor(self, x: th.Tensor) -> th.Tensor:
            """The kernel's score of every row: the logits, (batch, 128)."""
            return self.actor(x.reshape(-1, ROWS, self.features)).squeeze(-1)

        def forward_critic(self, x: th.Tensor) -> th.Tensor:
            """The critic's latent, (batch, 8) (SB3's ``value_net`` maps it to the value)."""
            if self.flat_critic:
                return self.critic(x.reshape(-1, ROWS * self.features))
            return self.critic(self.critic_rows(x.reshape(-1, ROWS, self.features)).squeeze(-1))

        def forward(self, x: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
            """``(actor logits, critic latent)``."""
            return self.forward_actor(x), self.forward_critic(x)

    class KernelActorCritic(MaskableActorCriticPolicy):
        """MaskablePPO's policy with the kernel actor (SB3's custom-policy pattern)."""

        def __init__(self, *args: object, features: int = FEATURES, critic: str = "rows", **kwargs: object):
            kwargs["ortho_init"] = False
            self._extractor_args = (features, critic)
            super().__init__(*args, **kwargs)

        def _build_mlp_extractor(self):
            self.mlp_extractor = KernelExtractor(*self._extractor_args)

        def _build(self, lr_schedule):
            super()._build(lr_schedule)
            self.action_net = nn.Identity()
            # the optimizer must own the final parameter set (action_net changed)
            self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    class SB3JobSelection(VecEnv):
        """:class:`VecJobSelection` or :class:`VecBackfill` as a Stable-Baselines3 vector env
        (rewards scaled by a baseline's metric of the window, or not: ``scale_by="none"``; the raw
        metric and the logged baseline go to the episode log)."""

        def __init__(self, vec: VecJobSelection | VecBackfill, on_episode: Callable[[float, float, int], None],
                     scale_by: str = "sjf", features: int = FEATURES):
            super().__init__(vec.n_envs, spaces.Box(0.0, 1.0, (ROWS * features,), np.float32), spaces.Discrete(ROWS))
            self.vec, self.on_episode, self.scale_by = vec, on_episode, scale_by
            self.log_baseline = getattr(vec, "log_baseline", "sjf")
            self._actions = None
            self._sjf = np.ones(vec.n_envs)
            self._scale = np.ones(vec.n_envs)

        def _remember(self, i, info):
            self._sjf[i] = max(float(info["baselines"].get(self.log_baseline, 1.0)), 1e-9)
            self._scale[i] = 1.0 if self.scale_by == "none" else max(float(info["baselines"][self.scale_by]), 1e-9)

        def reset(self) -> np.ndarray:
            """Reset every window (SB3's VecEnv API)."""
            obs = self.vec.reset()
            for i, info in enumerate(self.vec.reset_infos):
                self._remember(i, info)
            return obs

        def step_async(self, actions: np.ndarray) -> None:
            """Keep the actions for :meth:`step_wait` (SB3's VecEnv API)."""
            self._actions = actions

        def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict]]:
            """Step every window, the terminal rewards scaled (SB3's VecEnv API)."""
            obs, rewards, dones, infos = self.vec.step(self._actions)
            rewards = rewards.astype(np.float64)
            for i in np.flatnonzero(dones):
                info = infos[i]
                rewards[i] = rewards[i] / self._scale[i]
                self.on_episode(info["metric"], self._sjf[i], info["start"])
                self._remember(i, info["next"])
            return obs, rewards.astype(np.float32), dones, infos

        def close(self) -> None:
            """Nothing to release (SB3's VecEnv API)."""

        def get_attr(self, attr_name: str, indices: Sequence[int] | None = None) -> list:
            """Only ``action_masks`` and ``render_mode`` exist (what MaskablePPO reads)."""
            if attr_name == "action_masks":
                return [self.vec.action_masks] * self.num_envs
            if attr_name == "render_mode":
                return [None] * self.num_envs
            raise AttributeError(attr_name)

        def set_attr(self, attr_name: str, value: object, indices: Sequence[int] | None = None) -> None:
            """No attribute can be set."""
            raise AttributeError(attr_name)

        def env_method(self, method_name: str, *args: object, indices: Sequence[int] | None = None,
                       **kwargs: object) -> list:
            """Only ``action_masks`` (one mask per window)."""
            if method_name == "action_masks":
                return list(self.vec.action_masks())
            raise AttributeError(method_name)

        def env_is_wrapped(self, wrapper_class: type, indices: Sequence[int] | None = None) -> list[bool]:
            """No window is wrapped."""
            return [False] * self.num_envs

        def seed(self, seed: int | None = None) -> list[int | None]:
            """Reseed the generator that draws the windows."""
            self.vec.seed(seed)
            return [seed] * self.num_envs

    class _Progress(BaseCallback):
        def __init__(self, run):
            super().__init__()
            self.run = run

        def _on_step(self):
            return True

        def _on_rollout_end(self):
            self.run.end_epoch(self.model)


def export_kernel(model: MaskablePPO, meta: dict) -> KernelPolicy:
    """The actor kernel of a trained MaskablePPO as a :class:`KernelPolicy`."""
    _require()
    return _export_actor(model.policy.mlp_extractor, meta)


def _export_actor(extractor, meta):
    layers = [m for m in extractor.actor if isinstance(m, nn.Linear)]
    weights = [(m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy()) for m in layers]
    return KernelPolicy(weights, meta)


class _Run:
    """Bookkeeping of a training run: episode metrics, the CSV log, checkpoints, the progress line."""

    def __init__(self, cfg, vec, meta, progress, baseline="sjf"):
        self.cfg, self.vec, self.meta, self.progress = cfg, vec, meta, progress
        b = baseline.replace("-", "_")
        self.epoch = 0
        self.episodes = []
        self.t0 = time.perf_counter()
        os.makedirs(os.path.join(cfg.out, "checkpoints"), exist_ok=True)
        self.log_path = os.path.join(cfg.out, "training.csv")
        with open(self.log_path, "w", newline="") as fh:
            csv.writer(fh).writerow(["epoch", "steps", "episodes", "metric_mean", f"{b}_mean", f"ratio_to_{b}",
                                     "seconds"])
        self.rows = []

    def on_episode(self, metric, sjf, start):
        self.episodes.append((metric, sjf))

    def end_epoch(self, model):
        self.epoch += 1
        eps, self.episodes = self.episodes, []
        m = np.array([e[0] for e in eps]) if eps else np.array([np.nan])
        s = np.array([e[1] for e in eps]) if eps else np.array([np.nan])
        row = [self.epoch, int(model.num_timesteps), len(eps), float(np.mean(m)), float(np.mean(s)),
               float(np.mean(m / s)), round(time.perf_counter() - self.t0, 1)]
        self.rows.append(row)
        with open(self.log_path, "a", newline="") as fh:
            csv.writer(fh).writerow(row)
        if self.cfg.filter_epochs is not None and self.epoch == self.cfg.filter_epochs:
            self.vec.window_filter = None     # phase 2: every window
        if self.cfg.checkpoint_every and self.epoch % self.cfg.checkpoint_every == 0:
            export_kernel(model, dict(self.meta, epoch=self.epoch)).save(
                os.path.join(self.cfg.out, "checkpoints", f"epoch{self.epoch:04d}.npz"))
        if self.progress:
            self.progress(self.epoch, self.cfg.epochs, row)


def _held_apart(cfg):
    """The trace (loaded once) and the job ranges ``--hold-apart`` keeps out of training."""
    if not cfg.hold_apart:
        return cfg.trace, ()
    from .evaluate import held_apart_ranges
    from .trace import RLTrace
    trace = RLTrace.load(cfg.trace, compat=cfg.compat == "rlscheduler")
    return trace, held_apart_ranges(len(trace), cfg.hold_apart)


def train_job_selection(cfg: TrainConfig, progress: Progress | None = None) -> KernelPolicy:
    """Train; writes ``model.npz``, ``training.csv``, ``training.png`` (with matplotlib),
    ``config.json`` and ``checkpoints/`` in ``cfg.out``; returns the :class:`KernelPolicy`."""
    _require()
    th.set_num_threads(cfg.threads)
    trace, avoid = _held_apart(cfg)       # before anything is written: a trace too short fails here
    os.makedirs(cfg.out, exist_ok=True)
    wf = None if cfg.window_filter == "none" else WindowFilter(cfg.window_filter, seed=cfg.seed)
    vec = VecJobSelection(trace, cfg.envs, seed=cfg.seed, window=cfg.window, metric=cfg.metric,
                          backfill=cfg.backfill, skip=cfg.skip, compat=cfg.compat,
                          baselines=("sjf", "f1") if cfg.reward_scale == "f1" else ("sjf",),
                          slice_jobs=cfg.slice_jobs, window_filter=wf, avoid_jobs=avoid)
    t = vec.trace
    meta = {"name": cfg.name or os.path.basename(os.path.normpath(cfg.out)), "kind": "job-selection",
            "trace": t.name, "metric": cfg.metric, "backfill": cfg.backfill, "skip": cfg.skip,
            "compat": bool(cfg.compat), "window": cfg.window, "seed": cfg.seed, "norm": t.norm,
            "trained_with": "sb3-contrib MaskablePPO"}
    if cfg.slice_jobs:
        meta["slice"] = int(cfg.slice_jobs)
    if cfg.hold_apart:
        meta["held_apart"] = {"held_out_windows": 10, "validation_windows": cfg.hold_apart, "window": 1024}
    if wf is not None:
        wf.bounds(vec)      # the quantile bounds, so that config.json records the ones used
    with open(os.path.join(cfg.out, "config.json"), "w") as fh:
        json.dump(dict(cfg.as_dict(), filter_bounds=wf.describe() if wf else None), fh, indent=2, default=str)
    run = _Run(cfg, vec, meta, progress)
    env = SB3JobSelection(vec, run.on_episode, cfg.reward_scale)
    per_env = cfg.window * -(-cfg.trajectories // cfg.envs)     # whole windows per rollout
    model = MaskablePPO(KernelActorCritic, env, learning_rate=cfg.learning_rate, n_steps=per_env,
                        batch_size=cfg.batch_size, n_epochs=cfg.ppo_epochs, gamma=cfg.gamma,
                        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range, ent_coef=cfg.ent_coef,
                        vf_coef=cfg.vf_coef, max_grad_norm=cfg.max_grad_norm,
                        seed=cfg.seed, device="cpu", verbose=0)
    if cfg.warm_start in ("f1", "sjf"):
        meta["warm_start"] = _clone_job_selection(model, vec, cfg.seed, cfg.warm_start)
        export_kernel(model, dict(meta, epoch=0)).save(os.path.join(cfg.out, "checkpoints", "epoch0000.npz"))
    elif cfg.warm_start != "none":
        raise ConfigError(f"warm start {cfg.warm_start!r} is for backfilling; job selection takes f1 or sjf")
    model.learn(total_timesteps=cfg.epochs * per_env * cfg.envs, callback=_Progress(run))
    policy = export_kernel(model, dict(meta, epochs=run.epoch))
    policy.save(os.path.join(cfg.out, "model.npz"))
    _plot(run.rows, os.path.join(cfg.out, "training.png"), meta)
    return policy


def train_backfilling(cfg: TrainConfig, progress: Progress | None = None) -> KernelPolicy:
    """Train a backfilling policy (RLBackfilling's environment, ``cfg.head`` / ``guarded`` /
    ``relax``; ``cfg.compat`` None or ``"rlbackfilling"``); writes what
    :func:`train_job_selection` writes; returns the :class:`KernelPolicy` (kind ``backfilling``)."""
    _require()
    th.set_num_threads(cfg.threads)
    if cfg.hold_apart:
        raise ConfigError("hold_apart is for job selection; backfilling training has no held-out windows")
    if cfg.window_filter != "none":
        raise ConfigError("window filters apply to job selection only")
    os.makedirs(cfg.out, exist_ok=True)
    vec = VecBackfill(cfg.trace, cfg.envs, seed=cfg.seed, window=cfg.window, head=cfg.head, guarded=cfg.guarded,
                      relax=cfg.relax, compat=cfg.compat, slice_jobs=cfg.slice_jobs)
    t = vec.trace
    meta = {"name": cfg.name or os.path.basename(os.path.normpath(cfg.out)), "kind": "backfilling",
            "trace": t.name, "metric": "bsld", "head": cfg.head, "guarded": cfg.guarded, "relax": cfg.relax,
            "compat": bool(cfg.compat), "window": cfg.window, "seed": cfg.seed, "norm": t.norm,
            "baseline": vec.log_baseline, "req_scale": vec.req_scale, "stop": vec.stop,
            "act_size": vec.act_size, "trained_with": "sb3-contrib MaskablePPO"}
    with open(os.path.join(cfg.out, "config.json"), "w") as fh:
        json.dump(cfg.as_dict(), fh, indent=2, default=str)
    run = _Run(cfg, vec, meta, progress, baseline=vec.log_baseline)
    env = SB3JobSelection(vec, run.on_episode, "none", features=BF_FEATURES)
    # episodes vary in length (one step per choice): a rollout is about `trajectories` windows
    per_env = max(64, _mean_choices(vec) * -(-cfg.trajectories // cfg.envs))
    model = MaskablePPO(KernelActorCritic, env, learning_rate=cfg.learning_rate, n_steps=per_env,
                        batch_size=cfg.batch_size, n_epochs=cfg.ppo_epochs, gamma=cfg.gamma,
                        gae_lambda=cfg.gae_lambda, clip_range=cfg.clip_range, ent_coef=cfg.ent_coef,
                        vf_coef=cfg.vf_coef, max_grad_norm=cfg.max_grad_norm, seed=cfg.seed, device="cpu",
                        verbose=0, policy_kwargs={"features": BF_FEATURES, "critic": "flat"})
    if cfg.warm_start == "sjbf":
        meta["warm_start"] = _clone_sjbf(model, vec, cfg.seed)
    model.learn(total_timesteps=cfg.epochs * per_env * cfg.envs, callback=_Progress(run))
    policy = export_kernel(model, dict(meta, epochs=run.epoch))
    policy.save(os.path.join(cfg.out, "model.npz"))
    _plot(run.rows, os.path.join(cfg.out, "training.png"), meta)
    return policy


def _clone_sjbf(model, vec, seed, windows=200, epochs=20):
    """Behaviour cloning before PPO: the actor learns to start the candidate of shortest requested
    time and never to stop (EASY-SJBF's choice, unguarded), from ``windows`` windows drawn apart
    from training's; PPO then starts from that policy instead of a random one. Returns a summary."""
    rng = np.random.default_rng(seed + 777)
    sim = vec._sim()
    obs = np.zeros(ROWS * BF_FEATURES, dtype=np.float32)
    mask = np.zeros(ROWS, dtype=np.int8)
    xs, ms, ys = [], [], []
    for _ in range(windows):
        vec._begin(sim, rng, None)
        sim.observe(obs, mask)
        while not sim.done:
            rows = sim.visible()
            cand = np.flatnonzero(rows >= 0)
            pick = int(cand[np.argmin(obs.reshape(ROWS, BF_FEATURES)[cand, 1])])
            xs.append(obs.copy())
            ms.append(mask.astype(bool))
            ys.append(pick)
            sim.step(pick, obs, mask)
    x, m, y = th.as_tensor(np.array(xs)), th.as_tensor(np.array(ms)), th.as_tensor(np.array(ys))
    actor = model.policy.mlp_extractor
    opt = th.optim.Adam(actor.actor.parameters(), lr=1e-3)
    order = np.arange(len(y))
    for _ in range(epochs):
        rng.shuffle(order)
        for i in range(0, len(order), 512):
            b = th.as_tensor(order[i:i + 512])
            logits = actor.forward_actor(x[b]).masked_fill(~m[b], -1e9)
            loss = nn.functional.cross_entropy(logits, y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
    with th.no_grad():
        agree = float((actor.forward_actor(x).masked_fill(~m, -1e9).argmax(1) == y).float().mean())
    return {"teacher": "sjbf", "decisions": int(len(y)), "agreement": round(agree, 4)}


def _clone_job_selection(model, vec, seed, teacher, windows=100, epochs=20):
    """Behaviour cloning before PPO for job selection: the actor learns the pick of a heuristic
    (``f1``: RLScheduler's F1, log10(requested time) x processors + 870 log10(submit); ``sjf``:
    shortest requested time, then earliest submit) among the visible rows, on ``windows`` windows
    drawn with a generator of their own; PPO then starts from that policy. The kernel sees the wait
    (clipped at 12 h), not the submit time, so it can only approximate F1's submit term. Returns a
    summary (decisions, share of them on which the clone's greedy pick is the teacher's)."""
    rng = np.random.default_rng(seed + 777)
    t = vec.trace
    req, procs, submit = (np.asarray(a, dtype=np.float64) for a in (t.req, t.procs, t.submit))
    if teacher == "f1":
        key1 = np.log10(np.maximum(req, 0.1)) * procs + 870.0 * np.log10(np.maximum(submit, 0.1))
        key2 = np.zeros_like(key1)
    else:
        key1, key2 = req, submit
    sim = vec._sim()
    obs = np.zeros(ROWS * FEATURES, dtype=np.float32)
    mask = np.zeros(ROWS, dtype=np.int8)
    xs, ms, ys = [], [], []
    for _ in range(windows):
        start, _ = vec._draw_start(rng, None)
        sim.reset(start, vec.window)
        sim.observe(obs, mask)
        done = sim.done
        while not done:
            rows = sim.visible()
            cand = np.flatnonzero((rows >= 0) & (mask[:len(rows)] > 0))
            jobs = rows[cand]
            pick = int(cand[np.lexsort((key2[jobs], key1[jobs]))[0]])
            xs.append(obs.copy())
            ms.append(mask.astype(bool))
            ys.append(pick)
            done = sim.step(pick, obs, mask)
    agree = _fit_actor(model, xs, ms, ys, rng, epochs)
    return {"teacher": teacher, "decisions": int(len(ys)), "agreement": round(agree, 4)}


def _fit_actor(model, xs, ms, ys, rng, epochs):
    x, m, y = th.as_tensor(np.array(xs)), th.as_tensor(np.array(ms)), th.as_tensor(np.array(ys))
    actor = model.policy.mlp_extractor
    opt = th.optim.Adam(actor.actor.parameters(), lr=1e-3)
    order = np.arange(len(y))
    for _ in range(epochs):
        rng.shuffle(order)
        for i in range(0, len(order), 512):
            b = th.as_tensor(order[i:i + 512])
            logits = actor.forward_actor(x[b]).masked_fill(~m[b], -1e9)
            loss = nn.functional.cross_entropy(logits, y[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
    with th.no_grad():
        return float((actor.forward_actor(x).masked_fill(~m, -1e9).argmax(1) == y).float().mean())


def _mean_choices(vec, sample=20):
    # choices per window under a first-candidate rule, on windows drawn apart from training's
    rng = np.random.default_rng(12345)
    sim, counts = vec._sim(), []
    obs = np.zeros(ROWS * BF_FEATURES, dtype=np.float32)
    mask = np.zeros(ROWS, dtype=np.int8)
    for _ in range(sample):
        vec._begin(sim, rng, None)
        sim.observe(obs, mask)
        while not sim.done:
            sim.step(0, obs, mask)
        counts.append(sim.decisions_made)
    return int(np.ceil(np.mean(counts)))


def _plot(rows, path, meta):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    if not rows:
        return None
    ep = [r[0] for r in rows]
    fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
    ax[0].plot(ep, [r[3] for r in rows], label="policy (sampled, as trained)")
    base = meta.get("baseline", "sjf").upper()
    ax[0].plot(ep, [r[4] for r in rows], label=f"{base} (same windows)", alpha=0.7)
    ax[0].set_xlabel("epoch")
    ax[0].set_ylabel(f"mean {meta['metric']} per window")
    ax[0].legend()
    ax[1].plot(ep, [r[5] for r in rows])
    ax[1].axhline(1.0, color="grey", lw=0.8)
    ax[1].set_xlabel("epoch")
    ax[1].set_ylabel(f"policy / {base} (mean over windows)")
    if meta.get("kind") == "backfilling":
        fig.suptitle(f"{meta['name']}: {meta['trace']}, learned backfilling ({meta['head'].upper()} head, "
                     f"{'guarded' if meta['guarded'] else 'unguarded'})")
    else:
        fig.suptitle(f"{meta['name']}: {meta['trace']}, {'with' if meta['backfill'] else 'without'} backfilling")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
