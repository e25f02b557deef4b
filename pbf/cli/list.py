"""``pbf list``: the names the scoring flags take, and the shipped learned models."""
from __future__ import annotations

import argparse

__all__ = ["add_arguments"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``list`` has no options."""
    parser.description = ("Print every name the scoring flags take: priorities (--priority), run-time "
                          "predictors (--predictor), corrections (--correction), backfill orders (--order) "
                          "and presets (--preset), each with one line, and the shipped learned models.")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Print every registered priority, predictor, correction, order and preset, and the shipped models."""
    from ..plugins import CHOOSERS, CORRECTIONS, PREDICTORS, PRESETS, PRIORITIES
    from ..rl.kernel import KernelPolicy, shipped_models
    for title, reg in (("priorities (--priority)", PRIORITIES), ("predictors (--predictor)", PREDICTORS),
                       ("corrections (--correction)", CORRECTIONS), ("backfill orders (--order)", CHOOSERS),
                       ("presets (--preset)", PRESETS)):
        print(title)
        for name, summary in reg.summaries():
            print(f"  {name:<22} {summary}")
        for prefix, summary in reg.prefixes():
            print(f"  {prefix + ':...':<22} {summary}")
    models = shipped_models()
    if models:
        print("shipped learned models (job selection: --priority learned:NAME; backfilling: --order learned:NAME)")
        for name in models:
            meta = KernelPolicy.load(name).meta
            print(f"  {name:22s} {meta.get('kind', 'job-selection'):14s} trained on {meta.get('trace', '?')}")
    print("any of the first four may also be 'package.module:attr' naming your own Python plugin")
    return 0
