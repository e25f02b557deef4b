"""Your own scoring plugins in Python, driving the compiled engine.

    python examples/plugins.py [TRACE]            # default: traces/lublin1-1000.swf.gz
    pbf replay TRACE --predictor plugins:UserMedian --priority plugins:fair_age --order sjbf
                          # the script's last row, from the CLI (run where this file is importable,
                          # e.g. in examples/: BSLD 46.01 on the default trace)

A priority function is ``keys(jobs, now) -> array`` over a :class:`pbf.plugins.JobsView` of the queue
(lowest key first); a predictor has ``predict(jobs, now) -> seconds`` for the jobs arriving now and an
optional ``fit(jobs, now)`` for the jobs that finished (``jobs.run``). pbf clips predictions to
[1, requested] and corrects running jobs that outlive them. Python plugins are called with the GIL
at every instant with arrivals or queued jobs: slower than the compiled built-ins (a Python SJF
replays SDSC-SP2 in 0.9 s against 0.05 s built in; see docs/scoring.md), with the same decisions as
a built-in computing the same numbers (tests/test_plugins.py).
"""
import sys
from collections import defaultdict, deque
from pathlib import Path

import numpy as np

import pbf


class UserMedian:
    """Predict the median of the user's last five run times (the requested time until one ended)."""

    def __init__(self, window=5):
        self.window = window
        self.history = defaultdict(lambda: deque(maxlen=self.window))

    def predict(self, jobs, now):
        out = jobs.requested.copy()
        for i, user in enumerate(jobs.user):
            h = self.history[int(user)]
            if h:
                out[i] = int(np.median(h))
        return out

    def fit(self, jobs, now):
        for user, run in zip(jobs.user, jobs.run):
            self.history[int(user)].append(int(run))


def fair_age(jobs, now):
    """Age in hours minus the user's number of queued jobs: long waits first, heavy users later."""
    _, inverse, counts = np.unique(jobs.user, return_inverse=True, return_counts=True)
    return -((now - jobs.submit) / 3600.0 - counts[inverse])


def main(argv):
    default = Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"
    table = pbf.read_swf(argv[1] if len(argv) > 1 else default)   # (a trace without requested times gets run times)
    units = table.header.cluster_units()
    for label, cfg in (
            ("built-in EASY (requested times, FCFS)", pbf.ReplayConfig(units=units)),
            ("built-in EASY++ (ave2, incremental, SJBF)", pbf.ReplayConfig.from_preset("easy++", units=units)),
            ("Python UserMedian + fair_age", pbf.ReplayConfig(units=units, predictor=UserMedian(), priority=fair_age,
                                                               backfill=pbf.Backfill(order="sjbf")))):
        r = pbf.replay(table, cfg)
        p = r.summary["prediction"]
        print(f"{label:<42} BSLD {r.metrics.bsld:8.2f}  AWT {r.metrics.awt / 3600:6.2f} h  "
              f"MAE {p['mae_s']:8.0f} s  corrections {p['corrections']:6,}  {r.summary['wall_s']['replay']:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
