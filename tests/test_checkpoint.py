"""The core's checkpoint table and job columns: what a rollback restores, read through one table."""
import numpy as np
import pytest

from pbf import _core
from pbf._checkpoint import checkpoint, rollback
from pbf._outages import Outages
from pbf.codes import JobState, OutageKind


def _busy_core():
    core = _core.Core(8)
    core.add_jobs([0, 0, 0, 0], [4, 4, 6, 2], [10, 20, 30, 5], [10, 20, 30, 5], user=[0, 1, 0, 2])
    for j in range(4):
        core.submit(j)
    core.run_pass(0)
    return core


def _state(core):
    return (tuple(a.tolist() for a in core.job_arrays()), core.pending().tolist(), sorted(core.running().tolist()),
            int(core.free_count), core.n_jobs, Outages(core).figures(), Outages(core).down_units().tolist(),
            core.keys().tolist())


def test_rollback_restores_what_events_changed():
    """A finish, a job added and submitted and a failure are all undone (as the engine uses it: the
    jobs submitted after a checkpoint are those added after it)."""
    core = _busy_core()
    before = _state(core)
    cp = checkpoint(core)
    core.finish(0, 10)
    core.add_jobs([12], [1], [3], [3])
    core.submit(4)
    bits = np.array([0b1100_0000], dtype=np.uint64)
    Outages(core).apply(12, int(OutageKind.OK_FAIL), bits)
    assert _state(core) != before
    rollback(core, cp)
    assert _state(core) == before
    # and the core goes on as if nothing happened
    core.run_pass(10)
    assert core.job_arrays()[0][0] == JobState.JS_RUNNING


def test_every_job_column_reads_back():
    core = _busy_core()
    rows = np.arange(core.n_jobs, dtype=np.int64)
    for name, (_, size, real) in _core.JOB_COLUMNS.items():
        values = core.values_of(name, rows)
        assert len(values) == core.n_jobs and values.dtype == (np.float64 if real else np.int64), name
        assert size in (1, 4, 8), name
    assert core.values_of("submit", rows).tolist() == [0, 0, 0, 0]
    assert core.values_of("units", rows).tolist() == [4, 4, 6, 2]
    assert core.values_of("user", rows).tolist() == [0, 1, 0, 2]
    assert core.values_of("requeues", rows).tolist() == [0, 0, 0, 0]      # (a column made on first use)
    with pytest.raises(ValueError, match="no job column 'nope'"):
        core.values_of("nope", rows)
