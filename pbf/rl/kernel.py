"""The kernel policy without torch: RLScheduler's and RLBackfilling's per-job network, compiled.

The same small MLP (F -> 32 -> 16 -> 8 -> 1, ReLU between layers; F = 8 features for job
selection, 6 for backfilling) scores every visible job; a masked softmax over the scores is the
policy. Weights live in ``.npz`` files (never pickle) with a
format name and version, the layer arrays ``w0, b0 .. w3, b3`` and a JSON ``meta`` string (what the
model was trained on and the normalisers of its features).

A job-selection :class:`KernelPolicy` is also a priority (``keys(jobs, now)``): before every pass it scores the
queued jobs from the same 8 features (the units free at that moment give the "can start now"
feature) and the queue runs in descending score order. ``pbf replay --priority learned:FILE.npz``
(or ``learned:NAME`` for a shipped model) uses it that way. A backfilling policy is a backfill
order instead (:class:`pbf.rl.LearnedBackfill`, ``pbf replay --order learned:...``).
"""
from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Sequence
from importlib import resources
from typing import TYPE_CHECKING

import numpy as np

from .. import _rlsim
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..plugins import JobsView
    from ..workload.jobs import JobTable

__all__ = ["KernelPolicy", "shipped_models", "FORMAT", "VERSION", "LAYERS", "KIND_FEATURES"]

FORMAT = "pbf-kernel-policy"
VERSION = 1
#: (inputs, outputs) of each dense layer of a job-selection kernel (a backfilling one takes 6 inputs)
LAYERS = ((8, 32), (32, 16), (16, 8), (8, 1))
ROWS, FEATURES = 128, 8
#: inputs per row of each kind of policy
KIND_FEATURES = {"job-selection": 8, "backfilling": 6}


def layers(features: int) -> tuple[tuple[int, int], ...]:
    """(inputs, outputs) of each dense layer of a kernel over ``features`` inputs."""
    return ((features, 32),) + LAYERS[1:]
_EPS = 1e-5
_MAX_WAIT = 43200.0
_NORM_KEYS = ("req", "procs", "mem", "user", "group", "exe")


def shipped_models() -> dict[str, str]:
    """``{name: path}`` of the models that come with pbf (``pbf/rl/models/*.npz``)."""
    root = resources.files("pbf.rl") / "models"
    out = {}
    if root.is_dir():
        for entry in sorted(root.iterdir(), key=lambda e: e.name.split(".")[0]):
            if entry.name.endswith(".npz"):
                out[entry.name[:-4]] = str(entry)
    return out


def _norm(values, top):
    out = np.ones(len(values), dtype=np.float64)
    given = values != -1
    if top and top > 0:
        out[given] = np.minimum(values[given] / float(top), 1.0 - _EPS)
    return out


class KernelPolicy:
    """A trained kernel network: ``logits(obs, mask)``, ``act(obs, mask)`` and, as a priority,
    ``keys(jobs, now)``.

    ``weights``: four ``(W, b)`` pairs of the shapes in :data:`LAYERS`; ``meta``: a dict kept with
    the weights (``norm`` holds the feature normalisers the model was trained with). ``sample``:
    act by sampling the masked softmax (RLScheduler's evaluation) with generator ``seed`` instead of
    the argmax.
    """

    def __init__(self, weights: Sequence[tuple[np.ndarray, np.ndarray]], meta: dict | None = None, *,
                 sample: bool = False, seed: int | None = None, name: str | None = None):
        self.weights = [(np.ascontiguousarray(w, dtype=np.float32).reshape(np.shape(w)),
                         np.ascontiguousarray(b, dtype=np.float32).reshape(np.shape(b))) for w, b in weights]
        self.meta = dict(meta or {})
        self.name = name or self.meta.get("name", "kernel")
        self.sample = bool(sample)
        self.rng = np.random.default_rng(seed)
        self._static = None
        self.norm = {k: float(v) for k, v in self.meta.get("norm", {}).items()}
        self.kind = self.meta.get("kind", "job-selection")
        if self.kind not in KIND_FEATURES:
            raise ConfigError(f"kernel policy {self.name}: kind {self.kind!r}, expected one of "
                              f"{', '.join(KIND_FEATURES)}")
        self.nf = KIND_FEATURES[self.kind]
        _check_shapes(self.weights, self.name, self.nf)
        self.compiled = _rlsim.Kernel(*[a for wb in self.weights for a in (wb[0], wb[1])])

    # ---------------------------------------------------------------- files
    @classmethod
    def load(cls, path: str | os.PathLike, *, sample: bool = False, seed: int | None = None) -> KernelPolicy:
        """Load a ``.npz`` written by :meth:`save` (or a shipped model's name)."""
        shipped = shipped_models()
        if isinstance(path, str) and path in shipped:
            path = shipped[path]
        where = str(path)
        if not os.path.exists(where):
            known = ", ".join(shipped) or "none"
            raise ConfigError(f"learned policy {where!r}: no such file (shipped models: {known})")
        try:
            with np.load(where, allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
        except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise ConfigError(f"{where}: not a readable .npz file ({exc})") from None
        fmt = str(data.get("format", ""))
        if fmt != FORMAT:
            raise ConfigError(f"{where}: format {fmt or 'missing'!r}, expected {FORMAT!r} "
                              f"(write it with KernelPolicy.save)")
        version = int(data.get("version", -1))
        if version != VERSION:
            raise ConfigError(f"{where}: format version {version}, this pbf reads version {VERSION}")
        try:
            meta = json.loads(str(data["meta"])) if "meta" in data else {}
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: the 'meta' entry is not JSON ({exc})") from None
        if not isinstance(meta, dict):
            raise ConfigError(f"{where}: the 'meta' entry must be a JSON object")
        kind = meta.get("kind", "job-selection")
        if kind not in KIND_FEATURES:
            raise ConfigError(f"{where}: meta kind {kind!r}, expected one of {', '.join(KIND_FEATURES)}")
        weights = []
        for i, (fan_in, fan_out) in enumerate(layers(KIND_FEATURES[kind])):
            for key, shape in ((f"w{i}", (fan_in, fan_out)), (f"b{i}", (fan_out,))):
                if key not in data:
                    raise ConfigError(f"{where}: array {key!r} is missing (expected shape {shape})")
                arr = data[key]
                if arr.shape != shape:
                    raise ConfigError(f"{where}: array {key!r} has shape {arr.shape}, expected {shape}")
                if arr.dtype.kind != "f" or not np.isfinite(arr).all():
                    raise ConfigError(f"{where}: array {key!r} must hold finite floats")
            weights.append((data[f"w{i}"], data[f"b{i}"]))
        name = meta.get("name") or os.path.basename(where)[:-4]
        return cls(weights, meta, sample=sample, seed=seed, name=name)

    def save(self, path: str | os.PathLike) -> None:
        """Write the weights and ``meta`` to ``path`` (``.npz``)."""
        arrays = {"format": np.array(FORMAT), "version": np.array(VERSION),
                  "meta": np.array(json.dumps(self.meta, sort_keys=True))}
        for i, (w, b) in enumerate(self.weights):
            arrays[f"w{i}"], arrays[f"b{i}"] = w, b
        tmp = f"{path}.tmp.npz"
        np.savez(tmp, **arrays)
        os.replace(tmp, path)

    @classmethod
    def random(cls, seed: int = 0, meta: dict | None = None) -> KernelPolicy:
        """Random weights (PyTorch's default initialisation ranges): for tests and baselines."""
        rng = np.random.default_rng(seed)
        meta = dict(meta or {})
        weights = []
        for fan_in, fan_out in layers(KIND_FEATURES[meta.get("kind", "job-selection")]):
            bound = 1.0 / np.sqrt(fan_in)
            weights.append((rng.uniform(-bound, bound, (fan_in, fan_out)), rng.uniform(-bound, bound, fan_out)))
        return cls(weights, meta)

    # ---------------------------------------------------------------- the network
    def scores(self, x: np.ndarray) -> np.ndarray:
        """Per-row scores of feature rows ``x`` (n, F) -> (n) (compiled)."""
        x = np.ascontiguousarray(x, dtype=np.float32).reshape(-1, self.nf)
        out = np.empty(len(x), dtype=np.float32)
        self.compiled.scores(x, out)
        return out

    def scores_numpy(self, x: np.ndarray) -> np.ndarray:
        """The same scores computed by numpy (a cross-check of the compiled kernel)."""
        h = np.asarray(x, dtype=np.float32)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(self.weights):
            h = h @ w
            h += b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h[..., 0]

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked logits of observations (flat 128 x F or (128, F); batches allowed): -inf on masked rows."""
        x = np.asarray(obs, dtype=np.float32).reshape(-1, ROWS, self.nf)
        m = np.asarray(mask, dtype=bool).reshape(-1, ROWS)
        out = np.full(m.shape, -np.inf, dtype=np.float32)
        out[m] = self.scores(x[m])
        return out[0] if np.size(obs) == ROWS * self.nf else out

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The row to pick: the argmax of the masked logits, or a sample of their softmax."""
        m = np.asarray(mask, dtype=bool)
        rows = np.flatnonzero(m)
        if len(rows) == 0:
            raise ConfigError("act: the mask admits no row")
        s = self.scores(np.asarray(obs, dtype=np.float32).reshape(ROWS, self.nf)[rows])
        if not self.sample:
            return int(rows[int(np.argmax(s))])
        p = np.exp(s - s.max())
        p /= p.sum()
        return int(rows[int(self.rng.choice(len(rows), p=p))])

    # ---------------------------------------------------------------- as a priority
    def _as_priority(self):
        if self.kind != "job-selection":
            raise ConfigError(f"learned policy {self.name} is a {self.kind} policy: use it as a backfill order "
                              f"(--order learned:...), not as a priority")

    def prepare(self, table: JobTable, units: int) -> None:
        """Before a replay: normalise by the replayed trace (its largest requested time, the
        cluster's units, its largest memory, user, group and executable), as the environments do,
        and keep the static features of its jobs (``table`` in the replay's job order)."""
        self._as_priority()
        compat = bool(self.meta.get("compat", False))
        c = table.columns
        top_req = float(c["run"].max() if compat else c["req_time"].max()) if len(table) else 0.0
        self.norm = {"req": top_req, "procs": float(units), "mem": float(c["req_mem"].max(initial=0)),
                     "user": float(c["user"].max(initial=0)), "group": float(c["group"].max(initial=0)),
                     "exe": float(c["executable"].max(initial=0))}
        static = np.zeros((len(table), 4), dtype=np.float32)
        static[:, 0] = _norm(c["req_mem"], self.norm["mem"])
        static[:, 1] = _norm(c["user"], self.norm["user"])
        static[:, 2] = _norm(c["group"], self.norm["group"])
        static[:, 3] = _norm(c["executable"], self.norm["exe"])
        self._static = static

    def features(self, jobs: JobsView, now: int) -> np.ndarray:
        """The 8 features of queued jobs (a :class:`pbf.plugins.JobsView`) at ``now``."""
        n = len(jobs)
        x = np.empty((n, FEATURES), dtype=np.float32)
        x[:, 0] = np.minimum((now - jobs.submit) / _MAX_WAIT, 1.0 - _EPS)
        top_req = self.norm.get("req", 0.0) or float(max(jobs.requested.max(initial=1), 1))
        x[:, 1] = np.clip(jobs.requested / top_req, 0.0, 1.0 - _EPS)
        top_procs = self.norm.get("procs", 0.0) or float(max(jobs.units.max(initial=1), 1))
        x[:, 2] = np.minimum(jobs.units / top_procs, 1.0 - _EPS)
        if self._static is not None and len(jobs.index) and jobs.index.max() < len(self._static):
            x[:, 3:7] = self._static[jobs.index]
        else:
            x[:, 3] = 1.0
            x[:, 4] = _norm(jobs.user, self.norm.get("user", 0.0))
            x[:, 5:7] = 1.0
        free = getattr(jobs, "free_units", -1)
        x[:, 7] = np.where(jobs.units <= free, 1.0 - _EPS, _EPS) if free >= 0 else _EPS
        return x

    def keys(self, jobs: JobsView, now: int) -> np.ndarray:
        """Priority keys (ascending runs first): minus the scores, with Gumbel noise when sampling
        (so the first job is a draw from the softmax and the order a draw without replacement)."""
        if len(jobs) == 0:
            return np.zeros(0)
        s = self.scores(self.features(jobs, now)).astype(np.float64)
        if self.sample:
            s += self.rng.gumbel(size=len(s))
        return -s

    def describe(self) -> str:
        """The name replays report: ``learned:NAME``."""
        return f"learned:{self.name}"


def _check_shapes(weights, name, features):
    if len(weights) != len(LAYERS):
        raise ConfigError(f"kernel policy {name}: {len(weights)} layers, expected {len(LAYERS)}")
    for i, ((w, b), (fan_in, fan_out)) in enumerate(zip(weights, layers(features))):
        if w.shape != (fan_in, fan_out) or b.shape != (fan_out,):
            raise ConfigError(f"kernel policy {name}: layer {i} has shapes {w.shape} and {b.shape}, expected "
                              f"({fan_in}, {fan_out}) and ({fan_out},)")
