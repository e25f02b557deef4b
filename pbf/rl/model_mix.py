"""A training trace of an RLScheduler Lublin trace followed by a sample of its own workload model:
``python -m pbf.rl.model_mix TRACE --preset lublin-2 --seed 3 --jobs 30000 -o mix.swf``.

Training windows drawn from the trace alone fit its 10,000 jobs; windows drawn from the model's sample
alone fit the model (the held-out windows' source) but not the trace's test windows. The mix holds
both: the trace's records as they are, then ``jobs`` jobs of ``pbf gen lublin --preset PRESET --seed
SEED``, their job ids continuing the trace's, their submit times shifted to start one mean
inter-arrival time after the trace's last submit, and their run times capped at the trace's longest,
so that the requested-time feature (divided by the largest run time in compat mode) is normalised as
on the trace. The header is the trace's (``MaxJobs``/``MaxRecords`` then understate the file; the
loaders count the records).
"""
from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile

from ..errors import ConfigError
from ..workload.lublin import LUBLIN_PRESETS, generate_lublin
from ..workload.swf import write_swf

__all__ = ["write_model_mix"]


def _records(path: str | os.PathLike) -> tuple[list[str], list[list[str]]]:
    opener = gzip.open if str(path).endswith(".gz") else open
    head, rows = [], []
    with opener(path, "rt") as f:
        for n, line in enumerate(f, 1):
            if line.startswith(";") or not line.strip():
                head.append(line.rstrip("\n"))
                continue
            fields = line.split()
            if len(fields) != 18:
                raise ConfigError(f"{path}: line {n}: an SWF record has 18 fields, got {len(fields)}")
            rows.append(fields)
    return head, rows


def write_model_mix(trace: str | os.PathLike, preset: str, seed: int, jobs: int, out: str | os.PathLike) -> dict:
    """Write ``trace``'s records followed by ``jobs`` jobs of the Lublin model ``preset`` (seed
    ``seed``) to ``out``; returns counts: ``trace_jobs``, ``model_jobs``, ``capped`` (model jobs
    whose run time was cut to the trace's longest), ``longest_run``. Nothing is written on error."""
    if preset not in LUBLIN_PRESETS:
        raise ConfigError(f"unknown Lublin preset {preset!r}; known: {', '.join(LUBLIN_PRESETS)}")
    if not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"jobs must be a positive int, got {jobs!r}")
    head, rows = _records(trace)
    if not rows:
        raise ConfigError(f"{trace}: no job records")
    try:
        longest = max(float(r[3]) for r in rows)
        last_id = max(int(r[0]) for r in rows)
        last_submit = max(float(r[1]) for r in rows)
    except ValueError as exc:
        raise ConfigError(f"{trace}: a job id, submit time or run time is not a number ({exc})") from None
    gap = last_submit / len(rows)
    with tempfile.TemporaryDirectory(prefix="pbf-model-mix-") as tmp:
        gen_path = os.path.join(tmp, "model.swf")
        write_swf(generate_lublin(jobs, preset=preset, seed=seed), gen_path)
        _, gen = _records(gen_path)
    first = float(gen[0][1])
    capped = 0
    lines = list(head) + [" ".join(r) for r in rows]
    for i, r in enumerate(gen):
        r = list(r)
        r[0] = str(last_id + 1 + i)
        r[1] = str(int(last_submit + gap + float(r[1]) - first))
        if float(r[3]) > longest:
            r[3] = f"{longest:g}"
            capped += 1
        lines.append(" ".join(r))
    tmp_out = f"{out}.tmp"
    with open(tmp_out, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp_out, out)
    return {"trace_jobs": len(rows), "model_jobs": len(gen), "capped": capped, "longest_run": longest}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pbf.rl.model_mix", description=__doc__.split("\n")[0])
    ap.add_argument("trace", help="the SWF trace (e.g. rlsched_lublin_256_new2.swf.gz)")
    ap.add_argument("--preset", required=True, choices=sorted(LUBLIN_PRESETS), help="its Lublin model fit")
    ap.add_argument("--seed", type=int, default=3, help="the model sample's seed (3: apart from the held-out's 1 "
                                                         "and the validation's 2)")
    ap.add_argument("--jobs", type=int, default=30_000, help="model jobs appended (30000)")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args(argv)
    try:
        got = write_model_mix(a.trace, a.preset, a.seed, a.jobs, a.output)
    except (ConfigError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{got['trace_jobs']:,} trace jobs + {got['model_jobs']:,} model jobs ({got['capped']:,} run times cut "
          f"to the trace's longest, {got['longest_run']:g} s) -> {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
