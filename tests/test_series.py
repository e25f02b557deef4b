"""The hourly series of a replay's jobs (the sweep's over-time figure)."""
import numpy as np

from pbf.codes import JobState
from pbf.studies.series import time_series


def test_series_counts_queue_busy_units_and_waits_per_hour():
    done = int(JobState.JS_DONE)
    jobs = {"state": np.array([done, done, int(JobState.JS_REJECTED)]), "submit": np.array([0, 0, 5]),
            "start": np.array([0, 1800, -1]), "end": np.array([3600, 7200, -1]), "units": np.array([2, 4, 9])}
    s = time_series(jobs, 4)
    assert s["hour"] == [0, 1, 2]
    assert s["queue"] == [1, 0, 0]                      # at 0 s the second job waits
    assert s["utilisation"] == [1.0, 1.0, 0.0]          # 2 x 3600 + 4 x 1800 unit-s in the first hour
    assert s["awt_h"] == [0.25, None, None]             # waits 0 and 1800 s, both submitted in hour 0


def test_series_of_no_completed_job_is_empty():
    jobs = {k: np.array([], dtype=np.int64) for k in ("state", "submit", "start", "end", "units")}
    assert time_series(jobs, 8) == {"hour": [], "queue": [], "utilisation": [], "awt_h": []}
