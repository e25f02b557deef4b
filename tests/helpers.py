"""Helpers several test modules (and the benchmarks, ``bench/``) share: real logs by name, small engines
and plugins, small trace files. Test modules import these; no test module imports another."""
import numpy as np
import pytest

import pbf
from pbf.engine import Engine, Job, Submit
from pbf.errors import ConfigError
from pbf.studies.traces import shared_trace as find_shared_trace


@pytest.fixture(scope="session")
def shared_trace():
    """Path of a real log by file name ($PBF_TRACES, else ../shared/traces); skips the test, saying
    why, when the log is absent."""
    def get(name):
        try:
            return find_shared_trace(name)
        except ConfigError as exc:
            pytest.skip(f"real log missing: {exc}")
    return get


def snapshot(eng):
    """What an engine holds that a call may change: pending, running, counters and reservations."""
    return (eng.pending(), {k: (s, list(u)) for k, (s, u) in eng.running().items()}, eng.stats(),
            eng.reservations())


def busy_engine():
    """An 8-unit engine that passed at 0: jobs 1 (6 units) and 3 (2 units) running, job 2 reserved."""
    eng = Engine(pbf.Cluster(units=8), report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Submit(Job(3, 0, 2, 30))])
    return eng


class CountingPredictor:
    """A Python predictor that refuses job ids over 100 and counts what it saw."""
    def __init__(self):
        self.predicted, self.fitted = [], []

    def predict(self, jobs, now):
        if (jobs.id > 100).any():
            raise RuntimeError("refused")
        self.predicted.extend(jobs.id.tolist())
        return jobs.requested // 2

    def fit(self, jobs, now):
        self.fitted.extend(jobs.id.tolist())


def write_small_swf(path, n=1500, procs=64, seed=0, request=True):
    """A small random trace: bursts of arrivals, mixed sizes, requested times above run times."""
    rng = np.random.default_rng(seed)
    submit = np.cumsum(rng.exponential(120, n)).astype(int)
    run = rng.integers(1, 8000, n)
    size = np.minimum(rng.choice([1, 1, 1, 2, 4, 8, 16, 32, procs], n), procs)
    req = (run * rng.uniform(1.0, 4.0, n)).astype(int) + 1 if request else np.full(n, -1)
    lines = [f"; MaxProcs: {procs}", f"; MaxNodes: {procs}"]
    for i in range(n):
        user = int(rng.integers(1, 30))
        lines.append(f"{i + 1} {submit[i]} -1 {run[i]} {size[i]} -1 -1 {size[i]} {req[i]} -1 1 {user} "
                     f"{user % 5 + 1} {int(rng.integers(1, 9))} 1 1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path
