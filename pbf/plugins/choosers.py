"""Backfill choosers (DESIGN §6.3): the order in which a pass tries jobs once its reservations are
made. ``queue``: priority order (the whole pass is one walk). ``sjbf``: shortest estimate first
(EASY-SJBF; ties in priority order). A user's chooser is an object with ``keys(jobs, now)`` (or a
callable) returning one number per queued job; after the reservations the remaining jobs are tried
in ascending key order (ties in priority order), for a start now only, like ``sjbf``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError
from .registry import Registry, _as_floats, call_plugin

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    import numpy as np

    from .views import JobsView

__all__ = ["CHOOSERS", "PythonChooser"]


@dataclass
class PythonChooser:
    """A user's backfill chooser (``keys(jobs, now)`` or a callable), called before every pass."""
    fn: object
    where: str = ""
    name = "python"

    def keys(self, jobs: JobsView, now: int) -> np.ndarray:
        import numpy as np
        fn = self.fn.keys if hasattr(self.fn, "keys") else self.fn
        out = _as_floats(call_plugin("chooser", self.where, fn, jobs, now), f"chooser {self.where}")
        if out.shape != (len(jobs),):
            raise ConfigError(f"chooser {self.where}: returned {out.shape} keys for {len(jobs)} jobs")
        if np.isnan(out).any():
            raise ConfigError(f"chooser {self.where}: returned NaN keys")
        return out

    def ranks(self, jobs: JobsView, now: int) -> np.ndarray:
        """Integer ranks of the keys (what the compiled pass sorts by; ties share a rank)."""
        import numpy as np
        keys = self.keys(jobs, now)
        _, inverse = np.unique(keys, return_inverse=True)
        return inverse.astype(np.int64)

    def describe(self) -> str:
        return self.fn.describe() if callable(getattr(self.fn, "describe", None)) else self.where


def _adapt(obj, where):
    if isinstance(obj, PythonChooser):
        return obj
    if callable(obj) or hasattr(obj, "keys"):
        return PythonChooser(obj, where)
    raise ConfigError(f"chooser {where}: expected an object with keys(jobs, now) or a callable, got {obj!r}")


CHOOSERS = Registry("chooser", _adapt)
CHOOSERS.register("queue", lambda: "queue", "priority order")
CHOOSERS.register("sjbf", lambda: "sjbf", "after the reservations, shortest estimate first (EASY-SJBF)")


def _learned(path):
    from ..rl.chooser import LearnedBackfill
    return LearnedBackfill(path)


CHOOSERS.register_prefix("learned", _learned,
                         "a learned backfilling kernel policy: learned:FILE.npz or learned:NAME (shipped)")
