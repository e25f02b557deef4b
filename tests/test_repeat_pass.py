"""A full pass due by the interval trigger, taken as a repeat of the last one when nothing changed
since (ext/cycle.pxd repeats_last), gives the decisions and pass records of a pass run afresh."""
import numpy as np
import pytest

import pbf
from pbf import replayer
from pbf.workload.beocat import generate_beocat

_SAME = ("time", "queue", "depth", "started", "reservations", "slots", "exit", "kind")


def _replay(table, config, monkeypatch, repeat):
    made, build = [], replayer.build_core

    def switched(*args, **kwargs):
        core = build(*args, **kwargs)
        core.set_testing(repeat=repeat)
        made.append(core)
        return core
    monkeypatch.setattr(replayer, "build_core", switched)
    result = pbf.replay(table, config)
    monkeypatch.setattr(replayer, "build_core", build)
    return result, made[0].repeated_passes


@pytest.mark.parametrize("cluster, backfill, mtbf", [
    ("beocat", pbf.Backfill(reservations=None, max_job_test=60), None),
    ("beocat", pbf.Backfill(), None),
    (None, pbf.Backfill(reservations=None, max_job_test=60), None),
    ("beocat", pbf.Backfill(reservations=None, max_job_test=60), 200),     # units fail and come back
])
def test_repeated_passes_change_nothing(monkeypatch, cluster, backfill, mtbf):
    # the first 4,000 jobs of a 20,000-job slice at the built-in week's density: long jobs keep
    # others waiting, and some due passes find nothing changed since the last
    table = generate_beocat(20000, 33600).take(np.arange(4000))
    failures = None if mtbf is None else pbf.Failures(mtbf_hours=mtbf)
    config = pbf.ReplayConfig(cluster=cluster, trigger="interval", backfill=backfill, failures=failures)
    (on, repeated), (off, none) = (_replay(table, config, monkeypatch, r) for r in (1, 0))
    assert repeated > 0 and none == 0
    assert on.jobs.keys() == off.jobs.keys()
    for key in on.jobs:
        assert np.array_equal(on.jobs[key], off.jobs[key]), key
    for key in _SAME:
        assert np.array_equal(on.passes[key], off.passes[key]), key
    for key in ("count", "full", "mean_depth", "mean_depth_full", "exit_reasons"):
        assert on.summary["passes"][key] == off.summary["passes"][key], key


def test_no_repeat_where_now_matters(monkeypatch):
    # a window moves with now: a due pass always runs
    table = generate_beocat(20000, 33600).take(np.arange(4000))
    config = pbf.ReplayConfig(cluster="beocat", trigger="interval",
                              backfill=pbf.Backfill(reservations=None, window=3600))
    assert _replay(table, config, monkeypatch, 1)[1] == 0
