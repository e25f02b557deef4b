"""Choose a training run's checkpoint on validation windows, then report it on the test and
held-out windows: ``python -m pbf.rl.select RUN_DIR [RUN_DIR ...] --trace hpc2n [--backfill] [--after 10000]``.

``RUN_DIR`` is the ``--out`` of ``pbf train job-selection`` (its ``model.npz`` and
``checkpoints/*.npz`` are the candidates); given several (runs with different seeds), all their
candidates compete together. The validation windows are
:func:`pbf.rl.evaluate.validation_starts`: apart from RLScheduler's test windows and the held-out
windows, and after ``--after`` (the training ``--slice``); on the 10,000-job Lublin traces 20
windows of 256 jobs (nothing longer fits between the test windows). ``--validation-seed S``
chooses instead on 20 windows of 1,024 jobs of a trace generated with seed ``S`` from the Lublin
trace's workload model, ``--validation-trace FILE`` on windows of a file
(:mod:`pbf.rl.model_windows`). Only the validation mean chooses; the test and held-out figures are
printed for the chosen file and, for the record, for every candidate, with each candidate's mean
per-window difference from the better of SJF and F1 on the validation windows and its standard
error (:func:`pbf.rl.evaluate.paired_difference`: windows that share jobs count as correlated): a
lead smaller than about two standard errors is the windows' noise, not the model's.

A run of ``pbf train backfilling`` (candidates of kind ``backfilling``) is chosen the same way on
RLBackfilling's rules: the first 10 windows of 1,024 jobs drawn by its test script's rule with
seed 2 that overlap none of its test windows (seed 1), greedy, under the head the candidates were trained with
(``--head`` of ``pbf train backfilling``: fcfs, the default, or sjf; runs of other heads are refused); the test
windows are then reported with
the FCFS and SJF heads beside EASY with actual run times (EASY proper, the bar a model must pass).
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from collections.abc import Sequence

import numpy as np

from ..cli.options import int_in
from ..errors import ConfigError
from .evaluate import (
    RLS_TEST_STARTS,
    RLS_TRACES,
    evaluate_windows,
    held_out_starts,
    paired_difference,
    validation_starts,
)
from .kernel import KernelPolicy
from .model_windows import VALIDATION_WINDOWS, SampleWindows, held_out_sample, model_sample, trace_sample
from .trace import RLTrace


def validation_for(path: str | os.PathLike, after: int = 0, count: int | None = None) -> tuple[tuple[int, ...], int]:
    """``(starts, window)`` of the validation windows of a trace file: ``count`` windows of 256
    jobs (default 20) on traces of fewer than 20,000 jobs, of 1,024 (default 10) on longer ones."""
    n = len(RLTrace.load(path, compat=True))
    if n < 20_000:
        return validation_starts(n, window=256, count=20 if count is None else count, after=after), 256
    return validation_starts(n, window=1024, count=10 if count is None else count, after=after), 1024


def trace_name(path: str | os.PathLike) -> str | None:
    """The RLScheduler name (``lublin-2``, ...) of a trace file, by its file name; None for others."""
    base = os.path.basename(str(path))
    return next((k for k, v in RLS_TRACES.items() if v == base), None)


def select_run(run_dir: str | os.PathLike | Sequence[str | os.PathLike], trace_path: str | os.PathLike,
               backfill: bool, after: int = 0, validation: SampleWindows | None = None,
               windows: int | None = None) -> dict:
    """Choose the candidate of ``run_dir`` (one run directory or several: their candidates compete
    together) with the lowest greedy mean on the validation windows; the validation, test and
    held-out means of every candidate and heuristic, as a dict.

    ``validation``: windows of another trace to choose on (:mod:`pbf.rl.model_windows`: a sample of
    the trace's workload model); by default :func:`validation_for`'s windows of the trace itself
    (``windows`` of them: its default when None).
    The held-out windows are those of ``pbf experiment rlscheduler --held-out``.
    """
    run_dirs = _as_list(run_dir)
    cands = _candidates(run_dirs)
    if validation is None:
        starts, window = validation_for(trace_path, after, windows)
        val_trace, source = trace_path, str(trace_path)
    else:
        starts, window, val_trace, source = validation.starts, validation.window, validation.trace, validation.source
    rules = {c: KernelPolicy.load(c) for c in cands}
    per_window = evaluate_windows(val_trace, {**rules, "sjf": "sjf", "f1": "f1"}, starts=starts, window=window,
                                  backfill=backfill)
    val = {c: float(np.mean(per_window[c])) for c in cands}
    best = min(val, key=lambda c: val[c])          # ties go to the earlier candidate
    heuristics = {h: float(np.mean(per_window[h])) for h in ("sjf", "f1")}
    bar = min(heuristics, key=lambda h: heuristics[h])
    reference = RLTrace.load(trace_path, compat=True)
    rules.update({h: h for h in ("fcfs", "wfp3", "unicep", "sjf", "f1")})
    out = {"run": _run_label(run_dirs), "trace": str(trace_path),
           "backfill": backfill, "validation": {"starts": list(starts), "window": window, "after": after,
                                                "source": source},
           "chosen": best, "val": val, "val_heuristics": heuristics,
           "val_vs_heuristic": {"heuristic": bar, "candidates": {
               c: list(paired_difference(per_window[c], per_window[bar], starts, window)) for c in cands}},
           "tied_with_choice": _tied(per_window, cands, best, starts, window)}
    sample = held_out_sample(trace_name(trace_path) or "", reference)
    windows = {"test": (reference, RLS_TEST_STARTS)}
    if sample is not None:
        windows["held-out"] = (sample.trace, sample.starts)
        out["held_out_source"] = sample.source
    elif held_out_starts(len(reference)) is not None:
        windows["held-out"] = (reference, held_out_starts(len(reference)))
    for label, (trace, st) in windows.items():
        vals = evaluate_windows(trace, rules, starts=st, backfill=backfill)
        out[label] = {k: float(np.mean(v)) for k, v in vals.items()}
    return out


def _tied(per_window, cands, best, starts, window):
    # the candidates the validation windows cannot tell from the choice: their mean per-window
    # excess over it is under two standard errors of that paired difference
    tied = {}
    for c in cands:
        if c == best:
            continue
        d, se = paired_difference(per_window[c], per_window[best], starts, window)
        if d <= 0 or (se is not None and d < 2 * se):
            tied[c] = [d, se]
    return dict(sorted(tied.items(), key=lambda kv: kv[1][0]))


def select_backfilling_run(run_dir: str | os.PathLike | Sequence[str | os.PathLike],
                           trace_path: str | os.PathLike) -> dict:
    """Choose the backfilling candidate of ``run_dir`` (one run directory or several) with the
    lowest greedy mean on validation windows, under the head the candidates were trained with
    (``meta["head"]``: ``fcfs`` or ``sjf``, the same for all); every candidate's validation and test
    means (FCFS and SJF heads) and the EASY columns on the same windows, as a dict."""
    from ..studies.rlbackfilling import _evaluate, learned_value, rlb_test_starts
    cands = _candidates(run_dir)
    policies = {c: KernelPolicy.load(c) for c in cands}
    for c, p in policies.items():
        if p.kind != "backfilling":
            raise ConfigError(f"{c}: a {p.kind} policy among backfilling candidates")
    heads = {str(p.meta.get("head", "fcfs")) for p in policies.values()}
    if len(heads) > 1:
        raise ConfigError(f"{_run_label(run_dir)}: candidates trained with different heads "
                          f"({', '.join(sorted(heads))}); choose among one head's runs at a time")
    head = heads.pop()
    if head not in ("fcfs", "sjf"):
        raise ConfigError(f"{_run_label(run_dir)}: candidates trained with the {head} head; "
                          "the test windows are reported for the fcfs and sjf heads only")
    t = RLTrace.load(trace_path, compat="rlbackfilling")
    test_starts = rlb_test_starts(len(t), seed=1)
    val_starts = tuple(s for s in rlb_test_starts(len(t), count=100, seed=2)
                       if all(abs(s - u) >= 1024 for u in test_starts))[:10]
    val = {c: float(np.mean([learned_value(t, p, s, head=head) for s in val_starts])) for c, p in policies.items()}
    best = min(val, key=lambda c: val[c])
    test = {f"{head}+rlbf": {c: float(np.mean([learned_value(t, p, s, head=head) for s in test_starts]))
                             for c, p in policies.items()} for head in ("fcfs", "sjf")}
    columns = ("fcfs+easy", "fcfs+pbf-easy-ar", "sjf+easy", "sjf+pbf-easy-ar", "fcfs+easy-sjbf")
    heur = {label: {k: float(np.mean(v)) for k, v in _evaluate(t, st, None, 0, 0).items() if k in columns}
            for label, st in (("validation", val_starts), ("test", test_starts))}
    return {"run": _run_label(run_dir), "trace": str(trace_path), "kind": "backfilling", "head": head,
            "chosen": best, "val": val,
            "test": test, "heuristics": heur, "validation": {"starts": list(val_starts), "window": 1024},
            "test_starts": list(test_starts)}


def _as_list(run_dir):
    return [run_dir] if isinstance(run_dir, (str, os.PathLike)) else list(run_dir)


def _run_label(run_dir):
    dirs = [str(d) for d in _as_list(run_dir)]
    return dirs if len(dirs) > 1 else dirs[0]


def _candidates(run_dirs):
    cands = []
    for run_dir in _as_list(run_dirs):
        found = sorted(glob.glob(os.path.join(run_dir, "checkpoints", "*.npz")))
        if os.path.exists(os.path.join(run_dir, "model.npz")):
            found.append(os.path.join(run_dir, "model.npz"))
        if not found:
            raise ConfigError(f"{run_dir}: no model.npz and no checkpoints/*.npz")
        cands += found
    return cands


def _print_backfilling(r, short):
    h, head = r["heuristics"], r.get("head", "fcfs")
    v = h["validation"]
    print(f"validation: 10 windows of 1,024 jobs, {head.upper()} head; EASY {v[head + '+easy']:.2f}, "
          f"EASY proper with actual run times {v[head + '+pbf-easy-ar']:.2f}")
    print(f"{'candidate':<28}{'validation':>12}{'test FCFS':>12}{'test SJF':>12}")
    for k, x in r["val"].items():
        mark = " *" if k == r["chosen"] else ""
        print(f"{short(k) + mark:<28}{x:>12.2f}{r['test']['fcfs+rlbf'][k]:>12.2f}{r['test']['sjf+rlbf'][k]:>12.2f}")
    t = h["test"]
    print(f"{'EASY':<28}{v[head + '+easy']:>12.2f}{t['fcfs+easy']:>12.2f}{t['sjf+easy']:>12.2f}")
    print(f"{'EASY proper, actual times':<28}{v[head + '+pbf-easy-ar']:>12.2f}"
          f"{t['fcfs+pbf-easy-ar']:>12.2f}{t['sjf+pbf-easy-ar']:>12.2f}")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m pbf.rl.select``: print (or ``--json``) :func:`select_run`'s result."""
    ap = argparse.ArgumentParser(prog="python -m pbf.rl.select", description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", nargs="+", help="one or more training runs (--out of pbf train); the candidates "
                                               "of all of them compete together")
    ap.add_argument("--trace", required=True, help=f"one of {', '.join(RLS_TRACES)} or a trace file")
    ap.add_argument("--backfill", action="store_true")
    ap.add_argument("--after", type=int, default=0, help="validation windows start at or after this job")
    given = ap.add_mutually_exclusive_group()
    given.add_argument("--validation-trace", metavar="FILE",
                       help="choose on consecutive windows of 1,024 jobs of this SWF file instead (e.g. one of "
                            "pbf gen lublin), loaded in compat mode with --trace's feature normalisers")
    given.add_argument("--validation-seed", type=int, metavar="S",
                       help="choose on windows of a trace generated with this seed from --trace's workload model "
                            "(lublin-1 and lublin-2: pbf gen lublin --preset NAME --seed S)")
    ap.add_argument("--validation-windows", type=int_in(1), default=None, metavar="N",
                    help=f"validation windows: of 1,024 jobs of --validation-trace / --validation-seed "
                         f"({VALIDATION_WINDOWS}); of the trace itself, 10 of 1,024 jobs (20 of 256 on the "
                         f"10,000-job Lublin traces), drawn apart from the test and held-out windows")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    from ..studies.traces import shared_trace
    path = str(shared_trace(RLS_TRACES.get(a.trace, a.trace)))
    kinds = {KernelPolicy.load(c).kind for c in _candidates(a.run_dir)}
    sampled = a.validation_trace is not None or a.validation_seed is not None
    if kinds == {"backfilling"}:
        if sampled or a.validation_windows is not None:
            raise ConfigError("--validation-trace / --validation-seed / --validation-windows: backfilling runs "
                              "are chosen on RLBackfilling's 10 windows of the trace itself")
        r = select_backfilling_run(a.run_dir, path)
    else:
        validation = None
        if a.validation_trace is not None:
            validation = trace_sample(a.validation_trace, path, count=a.validation_windows or VALIDATION_WINDOWS)
        elif a.validation_seed is not None:
            name = trace_name(path)
            if name is None:
                raise ConfigError(f"--validation-seed: {path} is not one of RLScheduler's Lublin traces; "
                                  "pass --validation-trace FILE")
            validation = model_sample(name, a.validation_seed, path, count=a.validation_windows or VALIDATION_WINDOWS)
        r = select_run(a.run_dir, path, a.backfill, a.after, validation=validation, windows=a.validation_windows)
    if a.json:
        print(json.dumps(r, indent=2))
        return 0
    base = os.path.commonpath([os.path.abspath(d) for d in a.run_dir])
    if len(a.run_dir) == 1:
        base = os.path.abspath(a.run_dir[0])
    short = lambda k: os.path.relpath(os.path.abspath(k), base) if os.path.sep in k else k   # noqa: E731
    if r.get("kind") == "backfilling":
        _print_backfilling(r, short)
        return 0
    v = r["validation"]
    print(f"validation: {len(v['starts'])} windows of {v['window']} jobs of {v['source']}; "
          f"SJF {r['val_heuristics']['sjf']:.2f}, F1 {r['val_heuristics']['f1']:.2f}")
    if "held_out_source" in r:
        print(f"held-out: windows of {r['held_out_source']}")
    labels = [lb for lb in ("test", "held-out") if lb in r]
    width = max(28, 2 + max(len(short(k)) for k in r["val"]) + 2)
    vs = r["val_vs_heuristic"]
    diff = f"vs {vs['heuristic'].upper()} (se)"
    print(f"{'candidate':<{width}}{'validation':>12}{diff:>20}" + "".join(f"{lb:>12}" for lb in labels))
    for k, val in r["val"].items():
        mark = " *" if k == r["chosen"] else ""
        d, se = vs["candidates"][k]
        lead = f"{d:+.2f} ({se:.2f})" if se is not None else f"{d:+.2f}"
        print(f"{short(k) + mark:<{width}}{val:>12.2f}{lead:>20}"
              + "".join(f"{r[lb][k]:>12.2f}" for lb in labels))
    for h in ("fcfs", "wfp3", "unicep", "sjf", "f1"):
        val = f"{r['val_heuristics'][h]:>12.2f}" if h in r["val_heuristics"] else f"{'':>12}"
        print(f"{h:<{width}}{val}{'':>20}" + "".join(f"{r[lb][h]:>12.2f}" for lb in labels))
    tied = r["tied_with_choice"]
    if tied:
        print(f"the choice is within two standard errors of {len(tied)} other candidate(s) on the validation "
              f"windows (paired): " + ", ".join(f"{short(k)} {d:+.2f}" for k, (d, _) in list(tied.items())[:5])
              + (", ..." if len(tied) > 5 else ""))
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except ConfigError as exc:          # bad input: the message, not a traceback
        print(f"python -m pbf.rl.select: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
