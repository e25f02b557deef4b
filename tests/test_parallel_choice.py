"""The choice of a parallel pass from predicted costs (ext/pass_cost.pxd): its arithmetic, the means
it learns from measured passes, and decisions that do not depend on what it chooses."""
import dataclasses
from unittest import mock

import numpy as np
import pytest

import pbf
from pbf import _core, replayer
from pbf._pass_cost import PassCostPredictor
from pbf.benchmark import NOW, PassScenario
from pbf.config import Backfill
from pbf.workload.beocat import generate_beocat

EWMA_WEIGHT, PRIOR_SERIAL_SHARE, PAYS_MARGIN = 0.25, 0.25, 0.9


def queued_core(workers, max_job_test=None):
    core = PassScenario(300, 512, 40, None, max_job_test=max_job_test).core()
    core.start_pool(workers)
    return core


def expected_prediction(fig, tests, workers, copy_bytes):
    seq = tests * fig["seq_ns_per_test"]
    overhead = fig["wake_ns"] + (workers - 1) * copy_bytes * fig["copy_ns_per_byte"]
    n = min(workers, fig["cores"])
    rate = fig["par_ns_per_test"] if fig["par_passes"] else fig["seq_ns_per_test"] * (
        PRIOR_SERIAL_SHARE + (1 - PRIOR_SERIAL_SHARE) / n)
    par = overhead + tests * rate
    return seq, par, overhead, fig["seq_passes"] > 0 and par <= PAYS_MARGIN * seq


@pytest.mark.parametrize("max_job_test", [None, 120])
@pytest.mark.parametrize("workers", [2, 3, 8])
@pytest.mark.parametrize("figures", [
    {"seq_ns_per_test": 5_000.0, "seq_passes": 4, "par_ns_per_test": 0.0, "par_passes": 0,
     "wake_ns": 40_000.0, "copy_ns_per_byte": 0.1, "cores": 2},
    {"seq_ns_per_test": 5_000.0, "seq_passes": 4, "par_ns_per_test": 4_800.0, "par_passes": 2,
     "wake_ns": 40_000.0, "copy_ns_per_byte": 0.1, "cores": 2},
    {"seq_ns_per_test": 300_000.0, "seq_passes": 1, "par_ns_per_test": 0.0, "par_passes": 0,
     "wake_ns": 20_000.0, "copy_ns_per_byte": 0.5, "cores": 64},
    {"seq_ns_per_test": 9e9, "seq_passes": 0, "par_ns_per_test": 1.0, "par_passes": 3,
     "wake_ns": 0.0, "copy_ns_per_byte": 0.0, "cores": 8},
])
def test_the_prediction_is_the_documented_arithmetic(figures, workers, max_job_test):
    core = queued_core(workers, max_job_test)
    try:
        PassCostPredictor(core).set(**figures)
        got = PassCostPredictor(core).predict()
        tests = 300 if max_job_test is None else max_job_test
        assert got["tests"] == tests
        assert got["copy_bytes"] > 0           # the set-up pass left a profile
        seq, par, overhead, pays = expected_prediction(figures, tests, workers, got["copy_bytes"])
        assert got["seq_ns"] == pytest.approx(seq, rel=1e-12)
        assert got["par_ns"] == pytest.approx(par, rel=1e-12)
        assert got["overhead_ns"] == pytest.approx(overhead, rel=1e-12)
        assert got["pays"] is pays and got["parallel"] is pays
        core.set_testing(parallel=1)
        assert PassCostPredictor(core).predict()["parallel"] is True
        core.set_testing(parallel=-1)
        assert PassCostPredictor(core).predict()["parallel"] is False
        core.set_testing(parallel=0, parallel_min_queue=301)
        assert PassCostPredictor(core).predict()["parallel"] is False
    finally:
        core.stop_pool()


def test_the_figures_are_checked():
    core = _core.Core(64)
    with pytest.raises(ValueError, match="unknown pass-cost"):
        PassCostPredictor(core).set(ns_per_test=1.0)
    with pytest.raises(ValueError, match=">= 0"):
        PassCostPredictor(core).set(wake_ns=-1.0)
    with pytest.raises(ValueError, match="parallel must be"):
        core.set_testing(parallel=2)


def test_the_pool_measures_its_overhead_when_it_starts():
    core = queued_core(2)
    try:
        fig = PassCostPredictor(core).figures()
        assert fig["wake_ns"] > 0 and fig["cores"] >= 1
        assert fig["seq_passes"] == 0 and not PassCostPredictor(core).predict()["pays"]   # nothing measured yet
    finally:
        core.stop_pool()


def test_the_copy_rate_is_measured_only_when_a_pass_could_pay():
    core = queued_core(2)
    try:
        # passes that cannot pay even with free copies (a cheap test each) never measure it
        PassCostPredictor(core).set(seq_ns_per_test=1.0, seq_passes=4)
        assert not PassCostPredictor(core).predict()["parallel"]
        assert PassCostPredictor(core).figures()["copy_ns_per_byte"] == 0
        # an expensive pass could pay: the rate is measured (or taken from this process's earlier measurement)
        PassCostPredictor(core).set(seq_ns_per_test=10_000_000.0, seq_passes=4)
        got = PassCostPredictor(core).predict()
        assert PassCostPredictor(core).figures()["copy_ns_per_byte"] > 0
        assert got["pays"] and got["parallel"]
    finally:
        core.stop_pool()


def test_measured_passes_update_the_means():
    core = queued_core(2)
    try:
        PassCostPredictor(core).set(seq_ns_per_test=1_000.0, seq_passes=3)
        core.set_testing(parallel=-1)
        core.run_pass(NOW)
        fig = PassCostPredictor(core).figures()
        assert fig["last_tests"] == core.last_pass()["depth"] > 0 and not fig["last_parallel"]
        sample = fig["last_wall_ns"] / fig["last_tests"]
        assert fig["seq_ns_per_test"] == pytest.approx(1_000.0 + EWMA_WEIGHT * (sample - 1_000.0), rel=1e-12)
        assert fig["seq_passes"] == 4 and fig["par_passes"] == 0

        # a parallel pass starts its own mean, net of the predicted overhead
        core.set_testing(parallel=1)
        overhead = PassCostPredictor(core).predict()["overhead_ns"]
        core.run_pass(NOW + 1)
        fig = PassCostPredictor(core).figures()
        assert fig["last_parallel"] and fig["par_passes"] == 1 and fig["seq_passes"] == 4
        assert fig["par_ns_per_test"] == pytest.approx(max(0.0, fig["last_wall_ns"] - overhead) / fig["last_tests"],
                                                       rel=1e-12)
    finally:
        core.stop_pool()


def replay_core(table, workers, settings):
    core = _core.Core(9128)
    core.set_testing(record_units=1, parallel_min_queue=1)
    core.configure(**settings)
    core.load_trace(table.submit, table.units, table.req_time, table.run)
    core.start_pool(workers)
    return core


def outcome(core):
    state, start, end, how, reason, _, _ = core.job_arrays()
    passes = core.pass_arrays()
    return ([state, start, end, how, reason, core.recorded_units()]
            + [passes[k] for k in ("kind", "time", "depth", "started", "reservations", "exit", "slots")])


@pytest.mark.parametrize("backfill", [Backfill(reservations=None, max_job_test=60), Backfill()])
def test_decisions_do_not_depend_on_the_choice(backfill):
    """One replay on one thread; others on 2 and 3 workers whose passes the testing switch sends at
    random to the pool or not, and one left to the predictor primed so that it chooses the pool."""
    table = generate_beocat(1_500, 6 * 3600, seed=3)
    settings = {**backfill.core_settings(), "trigger": 1, "bf_interval": 30}
    one = replay_core(table, 1, settings)
    assert one.replay()
    want = outcome(one)
    rng = np.random.default_rng(0)
    for workers in (2, 3):
        core = replay_core(table, workers, settings)
        try:
            done = False
            while not done:
                choice = int(rng.integers(-1, 2))
                core.set_testing(parallel=choice)
                done = core.replay(max_instants=int(rng.integers(1, 40)))
            assert sum(core.worker_tests_total()) > 0, "no pass ran on the pool"
        finally:
            core.stop_pool()
        for a, b in zip(outcome(core), want):
            assert np.array_equal(a, b)
    core = replay_core(table, 2, settings)
    try:
        # a huge sequential cost per test: the predictor sends every pass to the pool, and it keeps
        # doing so while the parallel passes measure cheaper than that
        PassCostPredictor(core).set(seq_ns_per_test=1e12, seq_passes=1, wake_ns=0.0, copy_ns_per_byte=0.0)
        assert core.replay()
        assert PassCostPredictor(core).figures()["par_passes"] > 0 and sum(core.worker_tests_total()) > 0
    finally:
        core.stop_pool()
    for a, b in zip(outcome(core), want):
        assert np.array_equal(a, b)


def test_node_passes_chosen_by_the_predictor_decide_as_one_worker():
    """On the Beocat nodes, Slurm-like, with the searches' helper off (by default node passes share
    their searches instead of speculating): the predictor, primed so that the pool pays, sends the
    node passes to the threads (and measures them); the decisions are those of one worker."""
    table = generate_beocat(800, 4 * 3600, seed=5)
    config = pbf.ReplayConfig(cluster="beocat", trigger="interval",
                              backfill=Backfill(reservations=None, max_job_test=60))
    one = pbf.replay(table, config)
    built, build = [], replayer.build_core

    def primed(*args, **kwargs):
        core = build(*args, **kwargs)
        core.set_testing(parallel_min_queue=1, split_min_nodes=0)
        PassCostPredictor(core).set(seq_ns_per_test=1e12, seq_passes=1)    # (start_pool measures the rest)
        built.append(core)
        return core

    with mock.patch.object(replayer, "build_core", primed):
        two = pbf.replay(table, dataclasses.replace(config, workers=2))
    assert built and PassCostPredictor(built[0]).figures()["par_passes"] > 0
    assert two.jobs["start"].tolist() == one.jobs["start"].tolist()
    assert two.summary["jobs"] == one.summary["jobs"] and two.summary["nodes"] == one.summary["nodes"]


_COPY_SIZES = """
from pbf._pass_cost import PassCostPredictor
from pbf.benchmark import PassScenario
out = []
for sc in (PassScenario(300, 512, 40, None), PassScenario(300, 512, 40, None),
           PassScenario(2000, 200_000, 1500, None), PassScenario(300, 512, 40, None)):
    core = sc.core()
    core.start_pool(2)
    try:
        PassCostPredictor(core).set(seq_ns_per_test=10_000_000.0, seq_passes=4)
        got = PassCostPredictor(core).predict()
        out.append((got["copy_bytes"], PassCostPredictor(core).figures()["copy_measured_bytes"]))
    finally:
        core.stop_pool()
print(out)
"""


def test_the_copy_rate_is_measured_on_a_buffer_the_size_of_the_copies(tmp_path):
    # in a process of its own: the measurements are kept per process (started outside the checkout,
    # so that it imports the installed, compiled pbf and not the source tree)
    import ast
    import subprocess
    import sys
    run = subprocess.run([sys.executable, "-c", _COPY_SIZES], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    (small, small_at), (again, again_at), (large, large_at), (_, after_at) = ast.literal_eval(run.stdout.strip())
    assert small < 64 * 1024 and small_at == 64 * 1024          # a small profile: a 64 KB buffer, not 32 MB
    assert again_at == small_at                                  # the process's measurement, reused
    assert large > 4 * 64 * 1024 and large_at == min(large, 32 << 20)    # another size band: measured again
    assert after_at == small_at          # a small profile after a large one: its own band's rate, not the large one's
