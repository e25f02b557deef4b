"""Corrections (DESIGN §6.2): a new estimate for a running job that reaches its estimate.

Applied before every full pass to each running job whose planned end (start + estimate) is not in
the future, repeatedly until it is or the estimate is the requested time (the kill limit). With
the requested or clairvoyant predictor no job ever needs one.

* ``incremental`` (Tsafrir et al.; EASY++): the k-th correction makes the estimate the initial
  prediction + L[k], L = 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h (as
  predictsim); past the list, each further correction adds 100 h.
* ``requested``: the requested time.
* ``recursive-doubling``: twice the estimate (at the correction that is twice the elapsed time).

Every correction is capped at the requested time.
"""
from __future__ import annotations

from .._core import INCREMENTS
from ..codes import CORRECTIONS as _NAMES
from ..errors import ConfigError
from .registry import Registry

__all__ = ["CORRECTIONS", "INCREMENTS", "correct", "code"]


def code(name: str) -> int:
    """The compiled core's code of a correction (its place in :data:`pbf.codes.CORRECTIONS`)."""
    return _NAMES.index(CORRECTIONS.resolve(name))


def correct(kind: str, est: int, pred0: int, ncorr: int, req: int, start: int, now: int) -> tuple[int, int]:
    """The oracle's correction loop: (new estimate, corrections so far)."""
    while start + est <= now and est < req:
        ncorr += 1
        if kind == "requested":
            est = req
        elif kind == "recursive-doubling":
            est = 2 * est
        elif ncorr < 12:
            est = pred0 + INCREMENTS[ncorr]
        else:
            est = pred0 + INCREMENTS[11] * (ncorr - 10)
        est = min(est, req)
    return est, ncorr


def _adapt(obj, where):
    raise ConfigError(f"correction {where}: corrections are built in; choose one of {', '.join(_NAMES)}")


CORRECTIONS = Registry("correction", _adapt)
CORRECTIONS.register("incremental", lambda: "incremental",
                     "initial prediction + 1 min, 5 min, 15 min, ... 100 h at successive corrections (EASY++)")
CORRECTIONS.register("requested", lambda: "requested", "the requested time")
CORRECTIONS.register("recursive-doubling", lambda: "recursive-doubling", "twice the current estimate")
