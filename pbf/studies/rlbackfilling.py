"""RLBackfilling's evaluation (Kolker-Hicks, Zhang, Dai; Tables 4 and 5): EASY, EASY with actual run
times and learned backfilling on its test windows, beside the published means.

The episodes are RLBackfilling's own rules (``compat="rlbackfilling"``: its loading, its EASY with
the shadow fixed while the head waits and the skipped job after each start); the windows are the
ten 1,024-job windows its test script draws with seed 1. See ``docs/validation.md``.
"""
from __future__ import annotations

import hashlib
import os
import struct
import time
from collections.abc import Callable

import numpy as np

from .. import _rlsim
from ..errors import ConfigError
from ..rl.backfill_env import ORDERS, REQ_SCALE
from ..rl.evaluate import RLS_TRACES
from ..rl.kernel import KernelPolicy, shipped_models
from ..rl.trace import RLTrace
from .traces import shared_trace

__all__ = ["rlbackfilling_table", "format_rlbackfilling", "rlb_test_starts", "RLB_TABLE4", "RLB_TABLE5",
           "COLUMNS", "SHIPPED"]

#: Table 4: mean bounded slowdown over 10 sampled windows of 1,024 jobs
RLB_TABLE4 = {
    "sdsc-sp2": {"fcfs+easy": 292.82, "fcfs+easy-ar": 169.24, "fcfs+rlbf": 142.93, "sjf+easy": 187.61,
                 "sjf+easy-ar": 103.43, "sjf+rlbf": 120.72, "wfp3+easy": 228.3, "f1+easy": 162.33},
    "hpc2n": {"fcfs+easy": 28.16, "fcfs+easy-ar": 18.87, "fcfs+rlbf": 13.16, "sjf+easy": 11.67,
              "sjf+easy-ar": 3.73, "sjf+rlbf": 9.75, "wfp3+easy": 15.16, "f1+easy": 10.46},
    # the Lublin traces have no requested times: their EASY is EASY-AR
    "lublin-1": {"fcfs+easy": 192.89, "fcfs+rlbf": 83.43, "sjf+easy": 55.62, "sjf+rlbf": 30.57,
                 "wfp3+easy": 138.89, "f1+easy": 50.9},
    "lublin-2": {"fcfs+easy": 163.06, "fcfs+rlbf": 120.46, "sjf+easy": 85.63, "sjf+rlbf": 105.59,
                 "wfp3+easy": 248.02, "f1+easy": 129.83},
}
#: Table 5: a model trained on one trace (columns) applied to another (rows), FCFS and SJF heads
RLB_TABLE5 = {
    "fcfs": {"sdsc-sp2": {"sdsc-sp2": 142.93, "hpc2n": 187.18, "lublin-1": 216.94, "lublin-2": 210.09},
             "hpc2n": {"sdsc-sp2": 13.03, "hpc2n": 13.16, "lublin-1": 13.99, "lublin-2": 15.32},
             "lublin-1": {"sdsc-sp2": 78.62, "hpc2n": 103.18, "lublin-1": 83.43, "lublin-2": 233.53},
             "lublin-2": {"sdsc-sp2": 139.71, "hpc2n": 179.15, "lublin-1": 143.59, "lublin-2": 120.46}},
    "sjf": {"sdsc-sp2": {"sdsc-sp2": 120.72, "hpc2n": 125.52, "lublin-1": 160.53, "lublin-2": 133.17},
            "hpc2n": {"sdsc-sp2": 9.97, "hpc2n": 9.75, "lublin-1": 11.34, "lublin-2": 11.22},
            "lublin-1": {"sdsc-sp2": 33.28, "hpc2n": 28.29, "lublin-1": 30.57, "lublin-2": 32.19},
            "lublin-2": {"sdsc-sp2": 132.43, "hpc2n": 110.28, "lublin-1": 119.24, "lublin-2": 105.59}},
}
COLUMNS = ("fcfs+easy", "fcfs+easy-ar", "fcfs+rlbf", "sjf+easy", "sjf+easy-ar", "sjf+rlbf", "wfp3+easy",
           "f1+easy", "fcfs+easy-sjbf", "fcfs+pbf-easy", "fcfs+pbf-easy-ar", "sjf+pbf-easy", "sjf+pbf-easy-ar")
#: the shipped backfilling model of each trace
SHIPPED = {"sdsc-sp2": "rlbf-sdsc-sp2", "lublin-1": "rlbf-lublin-1", "hpc2n": "rlbf-hpc2n"}


def rlb_test_starts(n_jobs: int, window: int = 1024, count: int = 10, seed: int = 1) -> tuple[int, ...]:
    """The window starts RLBackfilling's test script draws: ``randint(window, n_jobs - window - 1)``
    from the environment's generator seeded by gym's ``seeding.np_random(seed)`` (its seed is
    hashed with SHA-512 into a legacy ``RandomState``)."""
    seed = int(seed) % 2 ** 64
    digest = hashlib.sha512(str(seed).encode("utf8")).digest()[:8]
    big = sum(v << (32 * i) for i, v in enumerate(struct.unpack("2I", digest)))
    words = []
    while big > 0:
        big, low = divmod(big, 2 ** 32)
        words.append(low)
    rng = np.random.RandomState()
    rng.seed(words or [0])
    if n_jobs - window - 1 <= window:
        raise ConfigError(f"a trace of {n_jobs} jobs is too short for windows of {window}")
    return tuple(int(rng.randint(window, n_jobs - window - 1)) for _ in range(count))


def _trace_path(trace_dir, name):
    if name not in RLS_TRACES:
        raise ConfigError(f"unknown trace {name!r}; known: {', '.join(RLS_TRACES)}")
    path = os.path.join(trace_dir, RLS_TRACES[name]) if trace_dir else RLS_TRACES[name]
    return str(shared_trace(path))


def _sim(t, window, head, clairvoyant=False, guarded=False, relax=0.0, compat=True, req_scale=None):
    # compat: RLBackfilling's rules; else pbf's (the stop row, the agent asked from one candidate)
    return _rlsim.BackfillSim(t.submit, t.run, t.run if clairvoyant else t.req, t.nodes, t.procs, t.total_nodes,
                              t.procs_per_node, float(t.max_procs), max(float(req_scale or t.norm["req"]), 1.0),
                              window, ORDERS[head], guarded, relax, compat, 1 if compat else 0, not compat)


def policy_sim(t: RLTrace, policy: KernelPolicy, window: int = 1024, head: str = "fcfs") -> _rlsim.BackfillSim:
    """A sim with the rules ``policy`` was trained under (its meta: compat, guarded, relax)."""
    meta = policy.meta
    compat = bool(meta.get("compat", False))
    return _sim(t, window, head, guarded=bool(meta.get("guarded", False)), relax=float(meta.get("relax", 0.0)),
                compat=compat, req_scale=None if compat else float(meta.get("req_scale", REQ_SCALE)))


def learned_value(t: RLTrace, policy: KernelPolicy, start: int, window: int = 1024, head: str = "fcfs",
                  sample: bool = False, rng: np.random.Generator | None = None) -> float:
    """Mean bounded slowdown of one window with ``policy`` choosing the backfilled jobs (greedy, or
    sampled from its softmax with ``rng``)."""
    sim = policy_sim(t, policy, window, head)
    sim.reset(start, window)
    if not sample:
        return _rlsim.run_backfill_policy(sim, policy.compiled)
    obs = np.zeros(128 * 6, dtype=np.float32)
    mask = np.zeros(128, dtype=np.int8)
    sim.observe(obs, mask)
    while not sim.done:
        n = int(mask.sum())
        s = policy.scores(obs.reshape(128, 6)[:n]).astype(np.float64)
        p = np.exp(s - s.max())
        sim.step(int(rng.choice(n, p=p / p.sum())), obs, mask)
    return sim.value()


def _evaluate(t, starts, policy, samples, seed):
    easy = _sim(t, 1024, "fcfs")
    ar = _sim(t, 1024, "fcfs", clairvoyant=True)
    # EASY proper (the default mode's rules): shadow and extra nodes planned at every event
    proper = _sim(t, 1024, "fcfs", compat=False)
    proper_ar = _sim(t, 1024, "fcfs", clairvoyant=True, compat=False)
    per = {c: [] for c in COLUMNS}
    for start in starts:
        for head in ("fcfs", "sjf"):
            per[f"{head}+easy"].append(easy.run_heuristic(start, 1024, ORDERS[head], ORDERS["fcfs"]))
            per[f"{head}+easy-ar"].append(ar.run_heuristic(start, 1024, ORDERS[head], ORDERS["fcfs"]))
            per[f"{head}+pbf-easy"].append(proper.run_heuristic(start, 1024, ORDERS[head], ORDERS["fcfs"]))
            per[f"{head}+pbf-easy-ar"].append(proper_ar.run_heuristic(start, 1024, ORDERS[head], ORDERS["fcfs"]))
            if policy is not None:
                per[f"{head}+rlbf"].append(learned_value(t, policy, start, head=head))
                if samples:
                    rng = np.random.default_rng([seed, start])
                    per.setdefault(f"{head}+rlbf~sampled", []).append(float(np.mean(
                        [learned_value(t, policy, start, head=head, sample=True, rng=rng) for _ in range(samples)])))
        for head in ("wfp3", "f1"):
            per[f"{head}+easy"].append(easy.run_heuristic(start, 1024, ORDERS[head], ORDERS["fcfs"]))
        per["fcfs+easy-sjbf"].append(easy.run_heuristic(start, 1024, ORDERS["fcfs"], ORDERS["sjf"]))
    return {k: v for k, v in per.items() if v}


def rlbackfilling_table(trace_dir: str | None = None, traces: tuple[str, ...] = ("sdsc-sp2", "lublin-1"),
                        model: KernelPolicy | str | None = None, samples: int = 0, seed: int = 0, cross: bool = True,
                        progress: Callable[[dict], None] | None = None) -> dict:
    """Table 4 (and, with ``cross``, Table 5 for the shipped models) on RLBackfilling's test windows.

    ``model``: a backfilling :class:`KernelPolicy` (or path / shipped name) for the learned columns
    of every row; by default each trace's shipped model, if there is one.
    """
    given = None
    if model is not None:
        given = model if isinstance(model, KernelPolicy) else KernelPolicy.load(model)
        if given.kind != "backfilling":
            raise ConfigError(f"model {given.name} is a {given.kind} policy, not a backfilling one")
    shipped = shipped_models()
    loaded = {name: RLTrace.load(_trace_path(trace_dir, name), compat="rlbackfilling") for name in traces}
    rows = []
    for name, t in loaded.items():
        t0 = time.perf_counter()
        policy = given
        if policy is None and SHIPPED.get(name) in shipped:
            policy = KernelPolicy.load(SHIPPED[name])
        starts = rlb_test_starts(len(t))
        values = _evaluate(t, starts, policy, samples, seed)
        row = {"trace": name, "starts": list(starts), "model": policy.name if policy is not None else None,
               "pbf": {k: float(np.mean(v)) for k, v in values.items()},
               "per_window": {k: [float(x) for x in v] for k, v in values.items()},
               "paper": RLB_TABLE4.get(name), "wall_s": time.perf_counter() - t0}
        rows.append(row)
        if progress:
            progress(row)
    result = {"experiment": "rlbackfilling", "metric": "bsld", "window": 1024, "rows": rows}
    if cross and given is None:
        models = {tr: KernelPolicy.load(m) for tr, m in SHIPPED.items() if m in shipped}
        table = {}
        for head in ("fcfs", "sjf"):
            for name, t in loaded.items():
                starts = rlb_test_starts(len(t))
                for trained_on, policy in models.items():
                    value = float(np.mean([learned_value(t, policy, s, head=head) for s in starts]))
                    table.setdefault(head, {}).setdefault(name, {})[trained_on] = value
        result["cross"] = table
    return result


def format_rlbackfilling(result: dict) -> str:
    """The tables of :func:`rlbackfilling_table`'s result as text."""
    cols = [c for c in COLUMNS if any(c in r["pbf"] for r in result["rows"])]
    out = ["RLBackfilling (Kolker-Hicks et al.): mean bounded slowdown (tau 10 s) over its 10 test windows of",
           "1,024 jobs; EASY columns under its rules, pbf-easy columns under EASY proper (the default mode),",
           "rlbf under the rules the model was trained with; each cell pbf / paper", ""]
    out.append(f"{'trace':<10}" + "".join(f"{c:>21}" for c in cols))
    for row in result["rows"]:
        cells = []
        for c in cols:
            mine, paper = row["pbf"].get(c), (row["paper"] or {}).get(c)
            text = "-" if mine is None else f"{mine:,.2f}"
            if paper is not None:
                text += f" / {paper:,.2f}"
            cells.append(f"{text:>21}")
        out.append(f"{row['trace']:<10}" + "".join(cells))
        if row["model"]:
            sampled = [f"{h.upper()} head {row['pbf'][f'{h}+rlbf~sampled']:,.2f}" for h in ("fcfs", "sjf")
                       if f"{h}+rlbf~sampled" in row["pbf"]]
            out.append(f"{'':<10}rlbf = {row['model']} (greedy)"
                       + (f"; sampled: {', '.join(sampled)}" if sampled else ""))
    if result.get("cross"):
        out += ["", "Table 5: a model trained on one trace (columns) on another (rows); pbf / paper"]
        for head, table in result["cross"].items():
            models = sorted({m for r in table.values() for m in r})
            out.append(f"{head.upper()} head{'':<4}" + "".join(f"{'RL-' + m:>22}" for m in models))
            for name, r in table.items():
                cells = []
                for m in models:
                    paper = RLB_TABLE5.get(head, {}).get(name, {}).get(m)
                    text = f"{r[m]:,.2f}" + (f" / {paper:,.2f}" if paper is not None else "")
                    cells.append(f"{text:>22}")
                out.append(f"{name:<14}" + "".join(cells))
    return "\n".join(out)
