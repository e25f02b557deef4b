"""The cheaper ways a replay's summary and inputs are made give what the plain ones give: the queue's
mean and maximum without its profile, the users' numbering without a sort (compiled), the memory sources'
names, the results' temporary folder."""
import os
import stat

import numpy as np
import pytest

from pbf import _table
from pbf.metrics import _max_queue, bounded_slowdown, queue_length_profile, schedule_metrics


def _schedules(count, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 60))
        span = int(rng.choice([1, 3, 10, 1000, 2**51]))
        submit = int(rng.choice([0, 2**52, -2**53])) + rng.integers(0, span, n)
        if rng.random() < 0.7:
            submit.sort()
        start = submit + rng.integers(0, span, n) * (rng.random(n) < 0.7)
        yield submit, start, rng.integers(0, span, n), rng.integers(1, 5, n)


def test_queue_figures_equal_the_profiles():
    """mean_queue is the profile's levels times their spans over the makespan (the same integer over the
    same makespan: equal bit for bit); max_queue its highest level."""
    for submit, start, run, units in _schedules(3000):
        m = schedule_metrics(submit, start, run, units, 8)
        times, lengths = queue_length_profile(submit, start)
        last = int((start + run).max())
        makespan = last - int(submit.min())
        integral = (lengths * np.diff(np.r_[times, last])).sum()
        assert m.mean_queue == (float(integral / makespan) if makespan > 0 else 0.0)
        assert m.max_queue == int(lengths.max()) == _max_queue(submit, start)


def test_slowdown_and_response_equal_the_per_job_ones():
    """The bounded slowdown's mean from two arrays is the per-job one's mean, bit for bit (times beyond
    2**52, where floats lose integers, take the per-job way)."""
    for tau in (10.0, 0.5, 600.0):
        for submit, start, run, units in _schedules(1000, seed=int(tau)):
            m = schedule_metrics(submit, start, run, units, 8, tau)
            assert m.bsld == float(bounded_slowdown(submit, start, run, tau).mean())
            assert m.art == float((start - submit + run).mean())


def _dense_ids(values):
    """The users' numbering a replay gives its jobs (pbf._table.replay_columns), of jobs in order."""
    n = len(values)
    zeros = np.zeros(n, dtype=np.int64)
    *_, inverse, ids = _table.replay_columns(np.arange(n), np.arange(n), zeros, zeros, zeros, values, True, False)
    return np.frombuffer(ids, dtype=np.int64), np.frombuffer(inverse, dtype=np.int64)


@pytest.mark.parametrize("values", [[], [5], [3, 1, 3, -1, 7], [2**40, 0, 2**40], list(range(9, -1, -1)) * 3,
                                    [2**62, -2**62, 0, 2**62]])
def test_dense_ids_are_np_unique(values):
    values = np.array(values, dtype=np.int64)
    ids, inverse = _dense_ids(values)
    want_ids, want_inverse = np.unique(values, return_inverse=True)
    assert ids.dtype == want_ids.dtype and inverse.dtype == want_inverse.dtype
    assert ids.tolist() == want_ids.tolist() and inverse.tolist() == want_inverse.tolist()


def test_dense_ids_random():
    rng = np.random.default_rng(1)
    for _ in range(500):
        values = rng.integers(-5, int(rng.choice([3, 100, 10**7])), int(rng.integers(1, 200)))
        ids, inverse = _dense_ids(values)
        want_ids, want_inverse = np.unique(values, return_inverse=True)
        assert np.array_equal(ids, want_ids) and np.array_equal(inverse, want_inverse)


def test_memory_sources_are_the_resources_ones():
    from pbf.replay_config import _MEM_FROM
    from pbf.resources import MEM_FROM
    assert _MEM_FROM == MEM_FROM


def test_results_temporary_folder_is_private(tmp_path):
    from pbf.replay_result import _temp_dir
    made = {_temp_dir(str(tmp_path)) for _ in range(20)}
    assert len(made) == 20
    for path in made:
        assert os.path.basename(path).startswith(".pbf-") and os.path.dirname(path) == str(tmp_path)
        assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0
