"""Scoring plugins (DESIGN §6): priority functions, runtime predictors, corrections, backfill
choosers, presets. Look one up by name or by ``"package.module:attr"``; ``pbf list`` prints them."""
from __future__ import annotations

import importlib

# (each name is imported from its module when first used: a replay loads only the plugins it needs)
_HOME = {"CHOOSERS": "choosers", "CORRECTIONS": "corrections", "Multifactor": "multifactor",
         "PREDICTORS": "predictors", "Ave2": "predictors", "Clairvoyant": "predictors",
         "Regression": "predictors", "Requested": "predictors", "PRESETS": "presets", "preset": "presets",
         "PRIORITIES": "priorities", "Scoring": "scoring", "JobsView": "views"}

__all__ = ["PRIORITIES", "PREDICTORS", "CORRECTIONS", "CHOOSERS", "PRESETS", "preset", "Multifactor",
           "Regression", "Ave2", "Requested", "Clairvoyant", "Scoring", "JobsView"]


def __getattr__(name: str) -> object:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
