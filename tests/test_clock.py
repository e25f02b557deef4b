"""The clock and time budget of a pass (DESIGN §4.6) and the parallel-backfill experiment."""
from pathlib import Path

import numpy as np
import pytest

from pbf import _core
from pbf.codes import Clock, Trigger
from pbf.config import Backfill
from pbf.replayer import ReplayConfig, replay
from pbf.studies.experiments import ParallelBackfillExperiment, format_tables
from pbf.workload import read_swf
from pbf.workload.beocat import generate_beocat

SAMPLE = Path(__file__).resolve().parents[1] / "traces" / "beocat-2000-1d.swf.gz"


@pytest.fixture(scope="module")
def busy():
    # 6,000 jobs in 12 hours on the Beocat-like cluster: a queue deep enough to exhaust budgets
    return generate_beocat(6000, 12 * 3600, seed=4)


def cfg(**kw):
    base = dict(units=9128, trigger="interval", clock="model", bf_max_time=1, cost_per_test_us=10_000)
    base.update(kw)
    return ReplayConfig(**base)


def test_model_clock_is_deterministic_and_limits_depth(busy):
    a, b = replay(busy, cfg()), replay(busy, cfg())
    assert np.array_equal(a.jobs["start"], b.jobs["start"])
    assert np.array_equal(a.passes["charged_us"], b.passes["charged_us"])
    full = a.passes["kind"] == 0
    # a 1 s budget at 10 ms a test (+ 20 us a slot): at most 100 tests a pass
    assert a.passes["depth"][full].max() <= 100
    assert (a.passes["exit"][full] == 3).any(), "some passes must stop on the budget"
    assert a.summary["passes"]["budget_s"] == 1 and a.summary["reproducible"]


def test_more_modelled_workers_test_deeper(busy):
    depth = [replay(busy, cfg(workers=w)).summary["passes"]["mean_depth_full"] for w in (1, 2, 4)]
    assert depth[0] < depth[1] < depth[2]


def test_parallel_execution_equals_sequential_execution_under_the_model_clock(busy):
    """With the same modelled worker count, running the passes on threads changes nothing."""
    t = busy
    results = []
    for force in (False, True):
        core = _core.Core(9128)
        core.configure(**Backfill().core_settings(), trigger=Trigger.TR_INTERVAL, bf_interval=30,
                       clock=Clock.CK_MODEL, bf_max_time_us=1_000_000, cost_test_us=10_000)
        if force:
            core.set_testing(parallel_min_queue=1, parallel=1)
        else:
            core.set_testing(parallel_min_queue=10**12)
        core.load_trace(t.submit, t.units, t.req_time, t.run)
        core.start_pool(4)
        try:
            core.replay()
        finally:
            core.stop_pool()
        results.append((core.job_arrays()[1], core.pass_arrays()))
    (sa, pa), (sb, pb) = results
    assert np.array_equal(sa, sb)
    for key in ("time", "depth", "started", "exit", "model_us"):
        assert np.array_equal(pa[key], pb[key]), key


def test_pass_duration_delays_the_next_interval_pass(busy):
    r = replay(busy, cfg(bf_interval=30))
    full = r.passes["kind"] == 0
    times, charged = r.passes["time"][full], r.passes["charged_us"][full]
    gaps = np.diff(times)
    assert (gaps >= 30 + np.ceil(charged[:-1] / 1e6)).all()
    free = replay(busy, cfg(clock="free"))
    assert free.summary["passes"]["budget_s"] is None and (free.passes["charged_us"] == 0).all()


def test_wall_clock_runs_and_says_it_is_not_reproducible():
    t = read_swf(SAMPLE)
    r = replay(t, cfg(clock="wall", bf_max_time=1))
    assert r.summary["reproducible"] is False and r.summary["jobs"]["completed"] == 2000


def test_bad_clock_settings():
    with pytest.raises(ValueError, match="clock must be one of free, model, wall, slurm-sim, got 'cpu'"):
        ReplayConfig(clock="cpu")
    with pytest.raises(ValueError,
                       match="bf_max_time must be an int from 1 to 1,099,511,627,776 seconds or None, got 0"):
        ReplayConfig(bf_max_time=0)


def test_experiment_tables():
    # (bursty arrivals: a queue forms even with 3,000 jobs, so backfill cycles run)
    exp = ParallelBackfillExperiment(jobs=3000, workers=(1, 2), procs=1, arrivals="profile", cluster=None,
                                     resources=False)
    result = exp.run()
    assert result["model"] == "slurm" and result["replay_config"]["clock"] == "slurm-sim"
    assert result["replay_config"]["backfill"]["reservations"] is None
    for row in result["rows"]:
        assert row["tests_per_cycle"] > 0 and 0 < row["utilisation"] <= 1 and row["arrivals"] == "profile"
    assert [(r["traffic"], r["workers"]) for r in result["rows"]] == [("high", 1), ("high", 2), ("low", 1), ("low", 2)]
    assert result["rows"][0]["paper"]["awt_h"] == 45.89
    text = format_tables(result)
    assert "Table 1: high-job traffic" in text and "Table 2: low-job traffic" in text and "45.89" in text


def _blocked_queue(n_jobs, units=4):
    # one job holds the cluster for a long time; n_jobs wide jobs queue behind it, each tested
    # (and, with reservations, reserved) by the one full pass that sees them all
    from pbf.workload.jobs import JobTable
    n = n_jobs + 1
    return JobTable.from_arrays(job_id=np.arange(1, n + 1), submit=np.array([0] + [1] * n_jobs),
                                run=np.full(n, 10_000), req_procs=np.full(n, units), req_time=np.full(n, 10_000))


def _first_full_pass_charge(table, **kw):
    r = replay(table, cfg(units=4, bf_max_time=3600, cost_per_slot_us=0, **kw))
    full = np.flatnonzero(r.passes["kind"] == 0)
    deepest = full[np.argmax(r.passes["depth"][full])]
    return int(r.passes["depth"][deepest]), int(r.passes["charged_us"][deepest])


@pytest.mark.parametrize("power", [0.5, 1.0, 1.37, 2.0])
def test_the_power_cost_charges_the_simulators_bf_model(power):
    # a worker's first n tests cost round(pref x n^pow): the Slurm simulator's bf_model(pref, pow, n)
    n, charged = _first_full_pass_charge(_blocked_queue(30), cost_per_test_us=100, cost_power=power)
    assert n == 30
    assert charged == int(np.floor(100 * n ** power + 0.5))


def test_each_reservation_made_before_a_test_adds_to_its_cost():
    # conservative: the i-th test (from 0) follows i reservations of the pass
    n, charged = _first_full_pass_charge(_blocked_queue(20), cost_per_test_us=100, cost_per_reservation_us=7,
                                         backfill=Backfill(reservations=None))
    assert n == 20 and charged == 20 * 100 + 7 * (20 * 19 // 2)
    _, easy = _first_full_pass_charge(_blocked_queue(20), cost_per_test_us=100, cost_per_reservation_us=7)
    assert easy == 20 * 100 + 7 * 19            # EASY: one reservation, made by the first test


def test_each_node_that_could_hold_the_job_adds_to_a_tests_cost():
    # four nodes, one with a GPU: a GPU job examines one node, a core job all four
    from pbf.cluster import Cluster, Node
    from pbf.workload.jobs import JobTable
    cluster = Cluster.of_nodes([Node("a", 1, 1000, 1), Node("b", 1, 1000), Node("c", 1, 1000), Node("d", 1, 1000)])
    n = 7
    gpus = np.array([0] + [1, 0] * 3)
    table = JobTable.from_arrays(job_id=np.arange(1, n + 1), submit=np.array([0] + [1] * 6), run=np.full(n, 10_000),
                                 req_procs=np.array([4] + [1] * 6), req_time=np.full(n, 10_000), gpus=gpus)
    r = replay(table, ReplayConfig(cluster=cluster, trigger="interval", clock="model", bf_max_time=3600,
                                   cost_per_test_us=100, cost_per_slot_us=0, cost_per_node_us=3))
    full = np.flatnonzero(r.passes["kind"] == 0)
    deepest = full[np.argmax(r.passes["depth"][full])]
    assert r.passes["depth"][deepest] == 6
    assert r.passes["charged_us"][deepest] == 6 * 100 + 3 * (3 * 1 + 3 * 4)


@pytest.mark.parametrize("bad", [0, -1, 5, float("nan"), True, "2"])
def test_a_bad_cost_power_is_refused(bad):
    from pbf.errors import ConfigError
    with pytest.raises(ConfigError, match="cost_power"):
        cfg(cost_power=bad)


def test_a_fractional_prefactor_accumulates_exactly():
    # 0.4 us a test: a worker's n tests cost round(0.4 n) in all, not n x round(0.4)
    n, charged = _first_full_pass_charge(_blocked_queue(30), cost_per_test_us=0.4)
    assert n == 30 and charged == 12


def test_calibration_by_load_finds_the_window_and_then_predicts():
    # a 1-worker AWT of 3 h lies between the 0.1 and 0.05 windows of this small experiment: the
    # bisection must land within 2 % of it, and the table then runs with that window for every worker count
    exp = ParallelBackfillExperiment(jobs=20_000, workers=(1, 2), procs=1, model="easy-model", calibrate="load",
                                     window_scale=0.1, cluster=None, resources=False)
    chosen, record = exp.calibrated(target_awt_h=3.0)
    assert record["ok"] and abs(record["awt_h"] - 3.0) <= 0.06, record
    assert 0.05 < record["value"] < 0.1 and chosen.window_scale == record["value"] and chosen.calibrate is None
    assert [s["awt_h"] for s in record["steps"]][0] < 3.0


def test_calibration_that_cannot_reach_the_target_says_so():
    result = ParallelBackfillExperiment(jobs=2_000, workers=(1,), procs=1, model="easy-model",
                                        calibrate="cost", cluster=None).run()
    cal = result["calibration"]
    assert not cal["ok"] and "no cost per test tried gives" in cal["reason"]
    assert all(row["calibrated"] is None and row["model"] == "easy-model" for row in result["rows"])
    assert "not calibrated" in format_tables(result)


def test_the_experiment_runs_on_beocats_nodes_by_default():
    exp = ParallelBackfillExperiment(jobs=3000, workers=(1, 2), procs=1, arrivals="profile")
    assert exp.cluster == "beocat" and exp.resources
    result = exp.run()
    assert result["replay_config"]["cluster"] == "beocat" and result["settings"]["resources"]
    assert all(row["model"] == "slurm" and row["calibrated"] is None for row in result["rows"])
    assert "cluster beocat (nodes), jobs with memory and GPU requests" in format_tables(result)
