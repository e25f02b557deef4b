"""Learned scheduling policies (DESIGN §6): RLScheduler-style job selection and RLBackfilling-style
backfilling.

``JobSelectionEnv`` and ``BackfillEnv`` (Gymnasium; optional extra ``pbf[rl]``) run episodes in
compiled code; ``KernelPolicy`` evaluates a trained per-job kernel network without torch and plugs
into replays and the engine as a priority (job selection) or, through ``LearnedBackfill``, as a
backfill order; training (``pbf train job-selection|backfilling``) needs torch and sb3-contrib.
See ``docs/rl.md``.
"""
import importlib

_WHERE = {
    "RLTrace": "trace",
    "JobSelectionEnv": "env", "VecJobSelection": "env", "HEURISTICS": "env", "METRICS": "env",
    "BackfillEnv": "backfill_env", "VecBackfill": "backfill_env", "BASELINES": "backfill_env",
    "KernelPolicy": "kernel", "shipped_models": "kernel", "LearnedBackfill": "chooser",
    "evaluate_windows": "evaluate",
}

__all__ = list(_WHERE)


def __getattr__(name):
    if name in _WHERE:
        value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pbf.rl' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
