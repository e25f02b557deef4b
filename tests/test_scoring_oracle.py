"""Every built-in priority, predictor and correction makes the compiled core decide exactly as the
oracle: random scenarios with several users, under-predicted jobs (so corrections happen) and
time-dependent priorities."""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbf.config import Backfill
from pbf.plugins.multifactor import Multifactor
from pbf.plugins.priorities import PRIORITIES
from pbf.plugins.regression import WEIGHTS

from scheduling import check_invariants, compiled_replay, oracle_replay

BUILTIN = ["fcfs", "sjf", "smallest", "wfp3", "unicep", "f1", "f2", "f3", "f4"]


@st.composite
def scenarios(draw):
    units = draw(st.integers(1, 100))
    n = draw(st.integers(1, 40))
    submit = np.cumsum(draw(st.lists(st.integers(0, 40), min_size=n, max_size=n)))
    size = np.array([draw(st.integers(1, units)) for _ in range(n)])
    req = np.array(draw(st.lists(st.integers(1, 400), min_size=n, max_size=n)))
    run = np.array([draw(st.integers(0, int(r))) for r in req])
    user = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    kind = draw(st.sampled_from(["requested", "under", "ave2", "regression"]))
    est, predictor, regression = req, "given", None
    if kind == "under":          # given estimates below the run time: corrections must follow
        est = np.array([draw(st.integers(1, int(r))) for r in req])
    elif kind != "requested":
        predictor = kind
        regression = (draw(st.sampled_from([1.0, 50.0, 5000.0])), draw(st.sampled_from([0.0, 1.0, 4e9])),
                      draw(st.integers(0, 1)), draw(st.integers(0, 1)), draw(st.integers(0, len(WEIGHTS) - 1)),
                      draw(st.sampled_from([1.0, 100.0])), draw(st.sampled_from([1.0, 1e4])))
    if draw(st.booleans()):
        priority = PRIORITIES.resolve(draw(st.sampled_from(BUILTIN)))
        part = qos = None
    else:
        priority = Multifactor(weight_age=draw(st.sampled_from([0.0, 1000.0])),
                               weight_fairshare=draw(st.sampled_from([0.0, 1000.0, 50000.0])),
                               weight_job_size=draw(st.sampled_from([0.0, 500.0])),
                               weight_partition=draw(st.sampled_from([0.0, 100.0])),
                               weight_qos=draw(st.sampled_from([0.0, 200.0])),
                               max_age=draw(st.sampled_from([0, 60, 3600])),
                               half_life=draw(st.sampled_from([0, 30, 600])),
                               calc_period=draw(st.sampled_from([0, 7, 50])),
                               favor_small=draw(st.booleans()),
                               fairshare=draw(st.sampled_from(["classic", "fair-tree"])),
                               dampening=draw(st.sampled_from([1, 1, 3])))
        part = np.array(draw(st.lists(st.sampled_from([0.25, 0.5, 1.0]), min_size=n, max_size=n)))
        qos = np.array(draw(st.lists(st.sampled_from([0.0, 1.0]), min_size=n, max_size=n)))
    backfill = Backfill(reservations=draw(st.sampled_from([0, 1, 1, 2, None])),
                        resolution=draw(st.sampled_from([0, 0, 7])),
                        order=draw(st.sampled_from(["queue", "sjbf"])),
                        enabled=draw(st.sampled_from([True, True, False])))
    return dict(args=(submit, size, est, run, units), workers=draw(st.sampled_from([2, 3, 8])),
                kw=dict(backfill=backfill, priority=priority, predictor=predictor, regression=regression,
                        correction=draw(st.sampled_from(["incremental", "requested", "recursive-doubling"])),
                        req=req, user=user, part=part, qos=qos,
                        trigger=draw(st.sampled_from(["event", "interval"])), bf_interval=draw(st.integers(1, 60))))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_scoring_compiled_equals_oracle(sc):
    got, want = compiled_replay(*sc["args"], **sc["kw"]), oracle_replay(*sc["args"], **sc["kw"])
    # the parallel pass (ordered commit) keeps every decision with any plugin
    par = compiled_replay(*sc["args"], **sc["kw"], workers=sc["workers"])
    for key in ("start", "end", "pred0", "est", "ncorr"):
        assert np.array_equal(par[key], got[key]), f"{key} with {sc['workers']} workers"
    assert np.array_equal(par["bits"], got["bits"])
    for key in ("state", "start", "end", "how", "reason", "pred0", "est", "ncorr"):
        assert np.array_equal(got[key], want[key]), key
    assert np.array_equal(got["bits"], want["bits"]), "unit choice differs"
    for key in ("kind", "time", "depth", "started", "reservations", "exit", "slots"):
        assert np.array_equal(got["passes"][key], want["passes"][key]), f"pass statistic {key}"
    submit, size, _, run, units = sc["args"]
    check_invariants(got, submit, size, run, units)
