"""Runtime predictors (DESIGN §6.2). A prediction is made once, at submission, and clipped to
``[1, requested]``; a running job that outlives it gets corrected (:mod:`pbf.plugins.corrections`).

Built-ins run compiled (``requested`` and ``clairvoyant`` are computed before the replay;
``ave2`` and ``regression`` inside the event loop, from the user's history). A user's predictor is an
object with ``predict(jobs, now) -> estimates`` (called with the jobs arriving at ``now``) and,
optionally, ``fit(jobs, now)`` (called with the jobs that finished, ``jobs.run`` their run times,
before any later prediction); see ``examples/plugins.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..codes import Predictor as PD
from ..errors import ConfigError
from .registry import Registry, _as_floats, call_plugin
from .regression import BRANCHES, WEIGHTS

TYPE_CHECKING = False  # (typing's constant: a replay's process does without importing typing)
if TYPE_CHECKING:
    import numpy as np

    from .views import JobsView

__all__ = ["Predictor", "Requested", "Clairvoyant", "Ave2", "Regression", "PythonPredictor", "PREDICTORS"]

class Predictor:
    """A built-in predictor."""
    name = ""
    code = PD.PD_GIVEN

    def given(self, req: np.ndarray, run: np.ndarray) -> np.ndarray:
        """The estimates to load with the jobs (PD_GIVEN predictors), else the requested times."""
        import numpy as np
        return np.asarray(req)

    def core_settings(self) -> dict:
        """The compiled core's settings (see :mod:`pbf.core_config`)."""
        return {"predictor": int(self.code)}

    def describe(self) -> str:
        return self.name


class Requested(Predictor):
    """The user's requested time (the default)."""
    name = "requested"


class Clairvoyant(Predictor):
    """The actual run time (at least 1 s): an upper bound for studies."""
    name = "clairvoyant"

    def given(self, req: np.ndarray, run: np.ndarray) -> np.ndarray:
        import numpy as np
        return np.maximum(np.asarray(run), 1)


class Ave2(Predictor):
    """Mean of the user's last two run times (Tsafrir et al.); the requested time before two."""
    name, code = "ave2", PD.PD_AVE2


@dataclass(frozen=True)
class Regression(Predictor):
    """On-line l2-regularised degree-2 regression with NAG and the E-Loss (Gaussier et al.).

    ``over`` / ``under``: the loss branch for over- and under-prediction, ``squared`` or
    ``linear``; ``weight``: one of Table 3's job weightings (``constant``, ``short-wide``,
    ``long-narrow``, ``small-area``, ``large-area``). The defaults are the paper's selected E-Loss
    (squared over, linear under, large area). ``eta`` and ``lam`` (the l2 weight) are predictsim's
    settings for the paper's runs. ``over_slope`` / ``under_slope`` multiply each branch (predictsim's
    ``rightparam`` / ``leftparam``, swept there over 1, 100, 10,000; the paper names no such
    parameter, so the default is 1)."""
    over: str = "squared"
    under: str = "linear"
    weight: str = "large-area"
    eta: float = 5000.0
    lam: float = 4e9
    over_slope: float = 1.0
    under_slope: float = 1.0
    name = "regression"
    code = PD.PD_REGRESSION

    def __post_init__(self):
        for f, choices in (("over", BRANCHES), ("under", BRANCHES), ("weight", WEIGHTS)):
            if getattr(self, f) not in choices:
                raise ConfigError(f"regression {f} must be one of {', '.join(choices)}, got {getattr(self, f)!r}")
        for f in ("eta", "lam", "over_slope", "under_slope"):
            v = getattr(self, f)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 0 or v == float("inf"):
                raise ConfigError(f"regression {f} must be a finite number >= 0, got {v!r}")

    def settings(self) -> tuple:
        """(eta, lam, over squared?, under squared?, weight index, over slope, under slope) as the
        core takes them."""
        return (float(self.eta), float(self.lam), int(self.over == "squared"), int(self.under == "squared"),
                WEIGHTS.index(self.weight), float(self.over_slope), float(self.under_slope))

    def describe(self) -> str:
        slopes = "" if (self.over_slope, self.under_slope) == (1.0, 1.0) else \
            f", over_slope={self.over_slope:g}, under_slope={self.under_slope:g}"
        return (f"regression(over={self.over}, under={self.under}, weight={self.weight}, eta={self.eta:g}, "
                f"lam={self.lam:g}{slopes})")


@dataclass
class PythonPredictor:
    """A user's predictor: ``predict(jobs, now)`` and optional ``fit(jobs, now)``."""
    obj: object
    where: str = ""
    code = PD.PD_GIVEN

    @property
    def name(self) -> str:
        return self.where

    def given(self, req: np.ndarray, run: np.ndarray) -> np.ndarray:
        import numpy as np
        return np.asarray(req)

    def predict(self, jobs: JobsView, now: int) -> np.ndarray:
        import numpy as np
        out = _as_floats(call_plugin("predictor", self.where, self.obj.predict, jobs, now),
                         f"predictor {self.where}")
        if out.shape != (len(jobs),):
            raise ConfigError(f"predictor {self.where}: returned {out.shape} estimates for {len(jobs)} jobs")
        if not np.isfinite(out).all():
            raise ConfigError(f"predictor {self.where}: returned a NaN or infinite estimate")
        return np.clip(out.astype(np.int64), 1, np.maximum(jobs.requested, 1))

    def fit(self, jobs: JobsView, now: int) -> None:
        if hasattr(self.obj, "fit"):
            call_plugin("predictor", self.where, self.obj.fit, jobs, now)

    def core_settings(self) -> dict:
        return {"predictor": int(PD.PD_GIVEN)}

    def describe(self) -> str:
        return self.where


def _adapt(obj, where):
    if isinstance(obj, (Predictor, PythonPredictor)):
        return obj
    if hasattr(obj, "predict"):
        return PythonPredictor(obj, where)
    raise ConfigError(f"predictor {where}: expected an object with predict(jobs, now), got {obj!r}")


PREDICTORS = Registry("predictor", _adapt)
for _cls in (Requested, Clairvoyant, Ave2, Regression):
    PREDICTORS.register(_cls.name, _cls, _cls.__doc__.splitlines()[0])
