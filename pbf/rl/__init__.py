"""Learned scheduling policies (DESIGN §6): RLScheduler-style job selection.

``JobSelectionEnv`` (Gymnasium; optional extra ``pbf[rl]``) runs episodes in compiled code;
``KernelPolicy`` evaluates a trained per-job kernel network in numpy (no torch) and plugs into
replays and the engine as a priority; training (``pbf train job-selection``) needs torch and
sb3-contrib. See ``docs/rl.md``.
"""
import importlib

_WHERE = {
    "RLTrace": "trace",
    "JobSelectionEnv": "env", "VecJobSelection": "env", "HEURISTICS": "env", "METRICS": "env",
    "KernelPolicy": "kernel", "shipped_models": "kernel",
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
