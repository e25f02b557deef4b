"""The slurm-sim clock: the compiled main loop against its pure-Python oracle, decision for decision,
and what the clock must do (cycles that take time and yield, the main scheduler's limits)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import _core
from pbf.codes import Clock, ExitReason, Trigger
from pbf.config import Backfill
from pbf.errors import ConfigError
from pbf.plugins.priorities import FCFS, SJF
from pbf.reference import ReferenceCore, SlurmSimReference
from pbf.workload.beocat import generate_beocat

from scheduling import check_invariants

US = 1_000_000


@st.composite
def scenarios(draw):
    units = draw(st.integers(1, 100))
    n = draw(st.integers(1, 40))
    gaps = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    submit = np.cumsum(gaps)
    size = np.array([draw(st.integers(1, units + (2 if i % 9 == 0 and draw(st.booleans()) else 0)))
                     for i in range(n)])
    req = np.array(draw(st.lists(st.integers(0, 200), min_size=n, max_size=n)))
    run = np.array([draw(st.integers(0, max(1, int(r)))) for r in req])
    run = np.where(req > 0, np.minimum(run, req), run)
    if draw(st.booleans()):
        for i in range(1, n):             # bursts of identical jobs
            if draw(st.integers(0, 2)) == 0:
                size[i], req[i], run[i], submit[i] = size[i - 1], req[i - 1], run[i - 1], submit[i - 1]
    est = np.maximum(run, 1) if draw(st.booleans()) else req
    reservations = draw(st.sampled_from([0, 1, 2, None]))
    backfill = Backfill(reservations=reservations,
                        max_job_test=draw(st.sampled_from([None, None, 2, 6])),
                        window=draw(st.sampled_from([0, 0, 60])), resolution=draw(st.sampled_from([0, 0, 7])),
                        enabled=draw(st.integers(0, 5)) > 0,
                        stop_at_reservation_limit=reservations is not None and draw(st.integers(0, 3)) == 0)
    sim = dict(workers=draw(st.integers(1, 4)), bf_interval=draw(st.integers(1, 40)),
               budget_us=draw(st.sampled_from([0, 1 * US, 5 * US, 30 * US])),
               cost_test_us=draw(st.sampled_from([0, 62, 300_000, 900_000, 2 * US, 62.7])),
               cost_slot_us=draw(st.sampled_from([0, 0, 40_000])),
               yield_us=draw(st.sampled_from([500_000, 1 * US, 2 * US])),
               step_us=draw(st.sampled_from([1 * US, 1 * US, 250_000, 3 * US])),
               sched_delay=draw(st.integers(0, 5)), sched_interval=draw(st.sampled_from([1, 10, 60])),
               queue_depth=draw(st.sampled_from([1, 3, 100])),
               max_sched_us=draw(st.sampled_from([1, 500_000, 2 * US])),
               cost_main_us=draw(st.sampled_from([0, 62, 400_000])),
               cost_queue_us=draw(st.sampled_from([0, 0, 50_000])),
               cost_resv_us=draw(st.sampled_from([0, 0, 30_000])),
               cost_power=draw(st.sampled_from([1.0, 1.0, 0.5, 1.37, 2.0])), end_main=draw(st.booleans()),
               late_below=draw(st.sampled_from([0, 0, 30, 1 << 62])))
    return dict(submit=submit, units=size, est=est, run=run, total=units, backfill=backfill,
                sjf=draw(st.booleans()), sim=sim)


def compiled(sc):
    sim, bf = sc["sim"], sc["backfill"]
    core = _core.Core(sc["total"])
    core.set_testing(record_units=1)
    prio = SJF() if sc["sjf"] else FCFS()
    core.configure(**bf.core_settings(), **prio.core_settings(), trigger=Trigger.TR_INTERVAL,
                   bf_interval=sim["bf_interval"], clock=Clock.CK_SLURM_SIM, bf_max_time_us=sim["budget_us"],
                   cost_test_us=int(round(sim["cost_test_us"])), cost_slot_us=sim["cost_slot_us"],
                   sim_yield_us=sim["yield_us"], sim_step_us=sim["step_us"], sim_sched_delay=sim["sched_delay"],
                   sim_sched_interval=sim["sched_interval"], sim_queue_depth=sim["queue_depth"],
                   sim_max_sched_us=sim["max_sched_us"], sim_cost_main_us=sim["cost_main_us"],
                   sim_cost_queue_us=sim["cost_queue_us"], cost_resv_us=sim.get("cost_resv_us", 0),
                   cost_power=sim.get("cost_power", 1.0), cost_pref_us=float(sim["cost_test_us"]),
                   sim_end_main=int(sim.get("end_main", False)), sim_late_below=sim.get("late_below", 0))
    core.load_trace(*(np.array(a, dtype=np.int64) for a in (sc["submit"], sc["units"], sc["est"],
                                                                      sc["run"])))
    core.start_pool(sim["workers"])
    try:
        assert core.replay()
    finally:
        core.stop_pool()
    state, start, end, how, reason, _, _ = core.job_arrays()
    return {"state": state, "start": start, "end": end, "how": how, "reason": reason,
            "bits": core.recorded_units(), "passes": core.pass_arrays(), "figures": core.sim_figures()}


def oracle(sc):
    kw = sc["backfill"].reference_kwargs()
    kw.pop("sjbf")
    core = ReferenceCore(sc["total"], prio_sjf=sc["sjf"], **kw)
    for i in range(len(sc["submit"])):
        core.add_job(int(sc["submit"][i]), int(sc["units"][i]), int(sc["est"][i]), int(sc["run"][i]))
    ref = SlurmSimReference(core, **sc["sim"])
    ref.run()
    W = (sc["total"] + 63) // 64
    bits = np.zeros((len(core.jobs), W), dtype=np.uint64)
    for i, job in enumerate(core.jobs):
        for w in range(W):
            bits[i, w] = (job.bits >> (64 * w)) & 0xFFFFFFFFFFFFFFFF
    field = lambda name: np.array([getattr(j, name) for j in core.jobs], dtype=np.int64)
    cols = ("kind", "time", "depth", "started", "reservations", "exit", "slots")
    passes = {k: np.array([(0 if p[0] == "full" else 1) if k == "kind" else p[i] for p in core.passes], dtype=np.int64)
              for i, k in enumerate(cols)}
    return {"state": field("state"), "start": field("start"), "end": field("end"), "how": field("how"),
            "reason": field("reason"), "bits": bits, "passes": passes, "figures": ref.figures}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_compiled_loop_equals_oracle(sc):
    got, want = compiled(sc), oracle(sc)
    for key in ("state", "start", "end", "how", "reason"):
        assert np.array_equal(got[key], want[key]), key
    assert np.array_equal(got["bits"], want["bits"]), "unit choice differs"
    for key in ("kind", "time", "depth", "started", "reservations", "exit", "slots"):
        assert np.array_equal(got["passes"][key].astype(np.int64), want["passes"][key]), f"pass statistic {key}"
    for key, value in want["figures"].items():
        assert got["figures"][key] == value, key
    check_invariants(got, sc["submit"], sc["units"], sc["run"], sc["total"])


def _two_jobs_and_a_burst(cost_test_us, workers=1):
    # one long job holds 4 of 8 units; 40 four-unit jobs queue behind a wide head
    submit = np.array([0, 1] + [2] * 40)
    units = np.array([4, 8] + [4] * 40)
    est = np.array([100, 50] + [30] * 40)
    return dict(submit=submit, units=units, est=est, run=est.copy(), total=8, backfill=Backfill(reservations=None),
                sjf=False, sim=dict(workers=workers, bf_interval=30, budget_us=30 * US, cost_test_us=cost_test_us,
                                    cost_slot_us=0, yield_us=2 * US, step_us=US, sched_delay=3, sched_interval=60,
                                    queue_depth=100, max_sched_us=2 * US, cost_main_us=62, cost_queue_us=0))


def test_a_cycle_takes_simulated_time_and_jobs_start_when_it_reaches_them():
    cheap, dear = compiled(_two_jobs_and_a_burst(62)), compiled(_two_jobs_and_a_burst(500_000))
    full = dear["passes"]["kind"] == 0
    assert dear["figures"]["cycle_us"] > 0 and (dear["passes"]["model_us"][full] > 0).any()
    # the job the first cycle starts (a four-unit job beside the long one) starts later when tests cost more
    assert dear["start"][2] > cheap["start"][2]
    assert dear["start"].mean() > cheap["start"].mean()


def test_more_modelled_workers_make_cycles_shorter():
    one, four = compiled(_two_jobs_and_a_burst(500_000, 1)), compiled(_two_jobs_and_a_burst(500_000, 4))
    per_cycle = lambda r: r["figures"]["cycle_us"] / r["figures"]["cycles"]
    assert per_cycle(four) < per_cycle(one)


def test_a_yield_that_sees_a_completion_ends_the_cycle():
    sc = _two_jobs_and_a_burst(1 * US)
    sc["run"][0] = 3                      # the first job ends while the first long cycle runs
    got = compiled(sc)
    assert got["figures"]["cycles_yielded"] >= 1
    assert (got["passes"]["exit"] == ExitReason.EX_YIELD).any()
    assert np.array_equal(got["start"], oracle(sc)["start"])


@pytest.fixture(scope="module")
def busy():
    return generate_beocat(3000, 6 * 3600, seed=2)


def test_replay_summary_reports_the_loop(busy):
    cfg = pbf.ReplayConfig(units=9128, trigger="interval", clock="slurm-sim", workers=2,
                           backfill=Backfill(reservations=None, max_job_test=200), cost_per_test_us=20_000)
    r = pbf.replay(busy, cfg)
    st_ = r.summary["scheduler_time"]
    assert st_["cycles"] > 0 and st_["main_passes"] > 0 and st_["tests_per_cycle"] > 0
    assert r.summary["config"]["cost_per_test_us"] == 20_000 and r.summary["config"]["slurm_sim"]["time_step"] == 1.0
    assert r.summary["jobs"]["completed"] + r.summary["jobs"]["rejected"] == len(busy.submit)
    again = pbf.replay(busy, cfg)
    assert np.array_equal(r.jobs["start"], again.jobs["start"]), "the slurm-sim clock is deterministic"
    default = pbf.ReplayConfig(trigger="interval", clock="slurm-sim")
    assert default.test_costs() == (62, 0) and pbf.ReplayConfig(clock="model").test_costs() == (10_000, 20)


@pytest.mark.parametrize("kw, message", [
    (dict(clock="slurm-sim"), "needs trigger='interval'"),
    (dict(clock="slurm-sim", trigger="interval", backfill=Backfill(order="sjbf")), "order='sjbf' is not supported"),
    (dict(clock="slurm-sim", trigger="interval", workers=2, commit="eager"), "needs commit='ordered'"),
    (dict(clock="slurm-sim", trigger="interval", bf_interval=1, slurm_sim=pbf.SlurmSim()),
     r"bf_yield_interval \(2 s\) is longer than the backfill cycle's budget"),
    (dict(clock="slurm-sim", trigger="interval", cost_per_test_us=-1), "cost_per_test_us must be a number from 0 to"),
])
def test_bad_slurm_sim_settings(kw, message):
    with pytest.raises(ConfigError, match=message):
        pbf.ReplayConfig(**kw)


@pytest.mark.parametrize("kw, message", [
    (dict(bf_yield_interval=0), "bf_yield_interval must be a number from 1e-06 to 1,099,511,627,776 s, got 0"),
    (dict(time_step=-1), "time_step must be a number from 1e-06 to 86,400 s"),
    (dict(sched_interval=0), "sched_interval must be an int from 1 to 1,099,511,627,776 s, got 0"),
    (dict(default_queue_depth=2.5), "default_queue_depth must be an int from 1 to 2,147,483,647 jobs, got 2.5"),
    (dict(batch_sched_delay=-3), "batch_sched_delay must be an int from 0 to"),
    (dict(max_sched_time=float("nan")), "max_sched_time must be a number"),
])
def test_bad_loop_settings(kw, message):
    with pytest.raises(ConfigError, match=message):
        pbf.SlurmSim(**kw)


def test_the_easy_model_is_still_reachable():
    from pbf.studies.experiments import ParallelBackfillExperiment
    result = ParallelBackfillExperiment(jobs=2000, workers=(1,), model="easy-model", procs=1).run()
    assert result["replay_config"]["clock"] == "model" and result["replay_config"]["backfill"]["reservations"] == 1
    with pytest.raises(ConfigError, match="model must be one of slurm, slurm-17.02, easy-model"):
        ParallelBackfillExperiment(model="wall")


def test_worker_grid_writes_its_table_and_figures(tmp_path):
    from pbf.studies.worker_grid import WorkerGrid, format_grid, write_result
    grid = WorkerGrid(scale=0.01, workers=(1, 2), costs_us=(62, 50_000), loads_days=(7.0,), procs=2)
    result = grid.run()
    assert len(result["cells"]) == 2 * 2 * 2 and len(result["awt_change"]) == 2 * 2
    assert {c["units"] for c in result["cells"]} == {91} and {c["jobs"] for c in result["cells"]} == {1000}
    series = [c for c in result["cells"] if isinstance(c.get("series"), dict)]
    assert len(series) == 2 and len(series[0]["series"]["queue"]) == len(series[0]["series"]["hour"])
    assert "AWT change from 1 to 2 workers" in format_grid(result)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        files = write_result(result, str(tmp_path), figures=False)
        assert [p.name for p in tmp_path.iterdir()] == ["grid.json"]
        pytest.skip("matplotlib (pbf[plot]) is not installed: the figures were not checked")
    files = write_result(result, str(tmp_path))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["awt_change_free.png", "awt_change_slurm.png", "grid.json", "over_time.png"] and len(files) == 4
    assert all((tmp_path / n).stat().st_size > 1000 for n in names)


def test_cli_preset_slurm_and_flag_errors(capsys):
    from pathlib import Path

    from pbf.cli import main
    sample = str(Path(__file__).resolve().parents[1] / "traces" / "beocat-2000-1d.swf.gz")
    assert main(["replay", sample, "--preset", "slurm", "--workers", "2", "--cost-per-test", "20000",
                 "--bf-yield-interval", "1", "--json"]) == 0
    import json
    s = json.loads(capsys.readouterr().out)
    assert s["config"]["clock"] == "slurm-sim" and s["config"]["trigger"] == "interval"
    assert s["config"]["backfill"]["reservations"] is None and s["config"]["backfill"]["window"] == 86400
    assert s["config"]["slurm_sim"]["bf_yield_interval"] == 1.0 and s["scheduler_time"]["cycles"] > 0
    # an explicit flag overrides the preset
    assert main(["replay", sample, "--preset", "slurm", "--reservations", "1", "--clock", "model", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["config"]["backfill"]["reservations"] == 1 and s["config"]["clock"] == "model"
    assert s["scheduler_time"] is None
    assert main(["replay", sample, "--sched-interval", "10"]) == 2
    assert "--sched-interval apply to --clock slurm-sim" in capsys.readouterr().err


def test_mechanism_study_switches_each_mechanism():
    from dataclasses import replace

    from pbf.studies.experiments import VARIANTS, apply_variant, replay_config
    from pbf.studies.worker_grid import MechanismStudy, format_mechanisms
    base = replay_config("slurm", 1, cost_per_test_us=10_000)
    assert apply_variant(base, "no-budget").budget_s() == 10**6
    assert apply_variant(base, "no-yield-abort").slurm_sim.bf_yield_interval == base.budget_s()
    assert apply_variant(base, "no-test-cap").backfill.max_job_test is None
    assert apply_variant(base, "free-main").slurm_sim.cost_main_test_us == 0
    with pytest.raises(ConfigError, match="variant must be one of"):
        apply_variant(base, "faster")
    study = MechanismStudy(scale=0.01, costs_us=(50_000,), variants=("base", "no-budget"), procs=1)
    result = study.run()
    assert {(c["variant"], c["workers"]) for c in result["cells"]} == {(v, w) for v in ("base", "no-budget")
                                                                        for w in (1, 8)}
    assert "no-budget" in format_mechanisms(result) and set(VARIANTS) >= set(result["variants"])
    assert replace(base) == base


def test_real_threads_change_nothing_under_the_slurm_sim_clock():
    """The modelled worker count sets the schedule; the passes' execution on threads does not."""
    sc = _two_jobs_and_a_burst(300_000, workers=4)
    plain = compiled(sc)
    core = _core.Core(sc["total"])
    core.set_testing(record_units=1, parallel_min_queue=1, parallel=1)
    sim = sc["sim"]
    core.configure(**sc["backfill"].core_settings(), trigger=Trigger.TR_INTERVAL, bf_interval=sim["bf_interval"],
                   clock=Clock.CK_SLURM_SIM, bf_max_time_us=sim["budget_us"], cost_test_us=sim["cost_test_us"],
                   cost_slot_us=0)
    core.load_trace(*(np.array(a, dtype=np.int64) for a in (sc["submit"], sc["units"], sc["est"], sc["run"])))
    core.start_pool(4)
    try:
        assert core.replay()
    finally:
        core.stop_pool()
    assert np.array_equal(core.job_arrays()[1], plain["start"])
    assert np.array_equal(core.recorded_units(), plain["bits"])


def test_the_reservation_limit_stop_ends_passes_and_is_validated():
    with pytest.raises(ConfigError, match="stop_at_reservation_limit needs a number of reservations"):
        Backfill(reservations=None, stop_at_reservation_limit=True)
    with pytest.raises(ConfigError, match="stop_at_reservation_limit must be True or False"):
        Backfill(stop_at_reservation_limit=1)
    table = generate_beocat(3000, 6 * 3600, seed=2)
    base = dict(units=1000, trigger="interval", clock="slurm-sim", cost_per_test_us=20_000)
    limited = Backfill(reservations=2, stop_at_reservation_limit=True)
    stop = pbf.replay(table, pbf.ReplayConfig(**base, backfill=limited))
    go_on = pbf.replay(table, pbf.ReplayConfig(**base, backfill=Backfill(reservations=2)))
    assert stop.summary["passes"]["exit_reasons"].get("reservation limit", 0) > 0
    assert "reservation limit" not in go_on.summary["passes"]["exit_reasons"]
    assert stop.summary["passes"]["mean_depth_full"] < go_on.summary["passes"]["mean_depth_full"]


def test_an_end_running_the_main_scheduler_is_a_setting_off_by_default(tmp_path):
    from pbf.errors import ConfigError
    from pbf.scheduler_time import SlurmSim
    from pbf.slurm_settings import slurm_settings
    assert not SlurmSim().end_runs_main and not SlurmSim().end_after_cycle
    with pytest.raises(ConfigError, match="end_after_cycle .* needs end_runs_main True and end_lag 1"):
        SlurmSim(end_after_cycle=True, end_lag=1)
    with pytest.raises(ConfigError, match="end_runs_main must be True or False"):
        SlurmSim(end_runs_main=1)
    assert SlurmSim(end_runs_main=True, end_lag=1, end_after_cycle=True, end_lag_below=30).core_settings()[
        "sim_late_below"] == 30
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n")
    said = slurm_settings(str(conf))
    assert not said.config.slurm_sim.end_runs_main
    assert any("a job's end runs Slurm 22.05's main scheduler at once" in line for line in said.unmodelled)
    conf.write_text("SchedulerParameters=defer\nNodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n")
    said = slurm_settings(str(conf))
    assert "SchedulerParameters defer" in said.mapped and not any("defer" in line for line in said.unmodelled)

