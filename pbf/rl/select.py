"""Choose a training run's checkpoint on validation windows, then report it on the test and
held-out windows: ``python -m pbf.rl.select RUN_DIR --trace hpc2n [--backfill] [--after 10000]``.

``RUN_DIR`` is the ``--out`` of ``pbf train job-selection`` (its ``model.npz`` and
``checkpoints/*.npz`` are the candidates). The validation windows are
:func:`pbf.rl.evaluate.validation_starts`: apart from RLScheduler's test windows and the held-out
windows, and after ``--after`` (the training ``--slice``); on the 10,000-job Lublin traces 20
windows of 256 jobs (nothing longer fits between the test windows). Only the validation mean
chooses; the test and held-out figures are printed for the chosen file and, for the record,
for every candidate.

A run of ``pbf train backfilling`` (candidates of kind ``backfilling``) is chosen the same way on
RLBackfilling's rules: the first 10 windows of 1,024 jobs drawn by its test script's rule with
seed 2 that overlap none of its test windows (seed 1), greedy, FCFS head; the test windows are then reported with
the FCFS and SJF heads beside EASY with actual run times (EASY proper, the bar a model must pass).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
from collections.abc import Sequence

import numpy as np

from ..errors import ConfigError
from .evaluate import (
    RLS_TEST_STARTS,
    RLS_TRACES,
    evaluate_windows,
    held_out_starts,
    select_checkpoint,
    validation_starts,
)
from .kernel import KernelPolicy
from .trace import RLTrace


def validation_for(path: str | os.PathLike, after: int = 0) -> tuple[tuple[int, ...], int]:
    """``(starts, window)`` of the validation windows of a trace file."""
    n = len(RLTrace.load(path, compat=True))
    if n < 20_000:
        return validation_starts(n, window=256, count=20, after=after), 256
    return validation_starts(n, window=1024, count=10, after=after), 1024


def select_run(run_dir: str | os.PathLike, trace_path: str | os.PathLike, backfill: bool, after: int = 0) -> dict:
    """Choose the candidate of ``run_dir`` with the lowest greedy mean on the validation windows;
    the validation, test and held-out means of every candidate and heuristic, as a dict."""
    cands = _candidates(run_dir)
    starts, window = validation_for(trace_path, after)
    best, val = select_checkpoint(trace_path, cands, starts=starts, window=window, backfill=backfill)
    n = len(RLTrace.load(trace_path, compat=True))
    rules = {c: KernelPolicy.load(c) for c in cands}
    rules.update({h: h for h in ("fcfs", "wfp3", "unicep", "sjf", "f1")})
    out = {"run": run_dir, "trace": trace_path, "backfill": backfill, "validation": {"starts": list(starts),
           "window": window, "after": after}, "chosen": best, "val": val, "val_heuristics": {}}
    hv = evaluate_windows(trace_path, {h: h for h in ("sjf", "f1")}, starts=starts, window=window, backfill=backfill)
    out["val_heuristics"] = {k: float(np.mean(v)) for k, v in hv.items()}
    for label, st in (("test", RLS_TEST_STARTS), ("held-out", held_out_starts(n))):
        if st is None:
            continue
        vals = evaluate_windows(trace_path, rules, starts=st, backfill=backfill)
        out[label] = {k: float(np.mean(v)) for k, v in vals.items()}
    return out


def select_backfilling_run(run_dir: str | os.PathLike, trace_path: str | os.PathLike) -> dict:
    """Choose the backfilling candidate of ``run_dir`` with the lowest greedy mean (FCFS head) on
    validation windows; every candidate's validation and test means (FCFS and SJF heads) and the
    EASY columns on the same windows, as a dict."""
    from ..studies.rlbackfilling import _evaluate, learned_value, rlb_test_starts
    cands = _candidates(run_dir)
    t = RLTrace.load(trace_path, compat="rlbackfilling")
    test_starts = rlb_test_starts(len(t), seed=1)
    val_starts = tuple(s for s in rlb_test_starts(len(t), count=100, seed=2)
                       if all(abs(s - u) >= 1024 for u in test_starts))[:10]
    policies = {c: KernelPolicy.load(c) for c in cands}
    for c, p in policies.items():
        if p.kind != "backfilling":
            raise ConfigError(f"{c}: a {p.kind} policy among backfilling candidates")
    val = {c: float(np.mean([learned_value(t, p, s) for s in val_starts])) for c, p in policies.items()}
    best = min(val, key=lambda c: val[c])
    test = {f"{head}+rlbf": {c: float(np.mean([learned_value(t, p, s, head=head) for s in test_starts]))
                             for c, p in policies.items()} for head in ("fcfs", "sjf")}
    columns = ("fcfs+easy", "fcfs+pbf-easy-ar", "sjf+easy", "sjf+pbf-easy-ar", "fcfs+easy-sjbf")
    heur = {label: {k: float(np.mean(v)) for k, v in _evaluate(t, st, None, 0, 0).items() if k in columns}
            for label, st in (("validation", val_starts), ("test", test_starts))}
    return {"run": str(run_dir), "trace": str(trace_path), "kind": "backfilling", "chosen": best, "val": val,
            "test": test, "heuristics": heur, "validation": {"starts": list(val_starts), "window": 1024},
            "test_starts": list(test_starts)}


def _candidates(run_dir):
    cands = sorted(glob.glob(os.path.join(run_dir, "checkpoints", "*.npz")))
    if os.path.exists(os.path.join(run_dir, "model.npz")):
        cands.append(os.path.join(run_dir, "model.npz"))
    if not cands:
        raise ConfigError(f"{run_dir}: no model.npz and no checkpoints/*.npz")
    return cands


def _print_backfilling(r, short):
    h = r["heuristics"]
    print(f"validation: 10 windows of 1,024 jobs, FCFS head; EASY {h['validation']['fcfs+easy']:.2f}, "
          f"EASY proper with actual run times {h['validation']['fcfs+pbf-easy-ar']:.2f}")
    print(f"{'candidate':<28}{'validation':>12}{'test FCFS':>12}{'test SJF':>12}")
    for k, v in r["val"].items():
        mark = " *" if k == r["chosen"] else ""
        print(f"{short(k) + mark:<28}{v:>12.2f}{r['test']['fcfs+rlbf'][k]:>12.2f}{r['test']['sjf+rlbf'][k]:>12.2f}")
    t = h["test"]
    print(f"{'EASY':<28}{h['validation']['fcfs+easy']:>12.2f}{t['fcfs+easy']:>12.2f}{t['sjf+easy']:>12.2f}")
    print(f"{'EASY proper, actual times':<28}{h['validation']['fcfs+pbf-easy-ar']:>12.2f}"
          f"{t['fcfs+pbf-easy-ar']:>12.2f}{t['sjf+pbf-easy-ar']:>12.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pbf.rl.select``: print (or ``--json``) :func:`select_run`'s result."""
    ap = argparse.ArgumentParser(prog="python -m pbf.rl.select", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir")
    ap.add_argument("--trace", required=True, help=f"one of {', '.join(RLS_TRACES)} or a trace file")
    ap.add_argument("--backfill", action="store_true")
    ap.add_argument("--after", type=int, default=0, help="validation windows start at or after this job")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    from ..studies.traces import shared_trace
    path = str(shared_trace(RLS_TRACES.get(a.trace, a.trace)))
    kinds = {KernelPolicy.load(c).kind for c in _candidates(a.run_dir)}
    if kinds == {"backfilling"}:
        r = select_backfilling_run(a.run_dir, path)
    else:
        r = select_run(a.run_dir, path, a.backfill, a.after)
    if a.json:
        print(json.dumps(r, indent=2))
        return 0
    short = lambda k: os.path.relpath(k, a.run_dir) if os.path.sep in k else k   # noqa: E731
    if r.get("kind") == "backfilling":
        _print_backfilling(r, short)
        return 0
    print(f"validation: {len(r['validation']['starts'])} windows of {r['validation']['window']} jobs; "
          f"SJF {r['val_heuristics']['sjf']:.2f}, F1 {r['val_heuristics']['f1']:.2f}")
    labels = [lb for lb in ("test", "held-out") if lb in r]
    print(f"{'candidate':<28}{'validation':>12}" + "".join(f"{lb:>12}" for lb in labels))
    for k, v in r["val"].items():
        mark = " *" if k == r["chosen"] else ""
        print(f"{short(k) + mark:<28}{v:>12.2f}" + "".join(f"{r[lb][k]:>12.2f}" for lb in labels))
    for h in ("fcfs", "wfp3", "unicep", "sjf", "f1"):
        print(f"{h:<28}{'':>12}" + "".join(f"{r[lb][h]:>12.2f}" for lb in labels))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
