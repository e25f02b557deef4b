"""Hostile values for the command line's numeric flags and the embedding API's settings: a clear error
(exit 2 with one line; ConfigError or ProtocolError with the engine unchanged) or a correct result with
no unit over-committed; never a traceback, a hang or a memory blow-up (tests/fuzz_flags.py; run it
with --all for every flag x value x base, about 6,000 cases)."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.cli import main
from pbf.engine import Drain, Engine, Fail, Finish, Job, ProtocolError, Resume, Submit

from helpers import snapshot

pytestmark = pytest.mark.fuzz
HERE = Path(__file__).resolve().parent
EXAMPLES = int(os.environ.get("PBF_FUZZ_EXAMPLES", 200))


def _cli(argv):
    """``pbf ARGV``'s exit status (argparse's refusals exit through SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _two_wide_jobs(path):
    path.write_text("; MaxProcs: 8\n1 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n"
                    "2 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    return str(path)


def test_sampled_flag_values_never_crash_hang_or_over_commit(tmp_path):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(HERE / "fuzz_flags.py"), "--cases", str(max(EXAMPLES, 100)),
                           "--seed", "1", "--timeout", "30", "--memory-gb", "1"],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=max(900, EXAMPLES))
    report = json.loads(proc.stdout)
    assert report["problems"] == [], json.dumps(report["problems"][:3], indent=1)
    assert report["ok"] > 0 and report["refused"] > 0, "the values cover both outcomes"


@pytest.mark.parametrize("flags", [["--bf-resolution", "9223372036854775807", "--reservations", "unlimited"],
                                   ["--bf-window", "9223372036854775807"],
                                   ["--max-job-test", "9223372036854775808"]])
def test_huge_backfill_settings_are_refused_not_wrapped(tmp_path, capsys, flags):
    # (2**63 - 1 used to wrap inside the core: two 8-unit jobs started together on 8 units)
    out = tmp_path / "o"
    assert _cli(["replay", _two_wide_jobs(tmp_path / "t.swf"), *flags, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert flags[0] in err[-1] and "1,099,511,627,776" in err[-1] or "2,147,483,647" in err[-1]
    assert not out.exists()


def test_a_huge_but_allowed_resolution_never_over_commits():
    jobs = pbf.read_swf(_two_wide_jobs(Path(os.environ.get("TMPDIR", "/tmp")) / f"pbf-two-{os.getpid()}.swf"))
    for backfill in (pbf.Backfill(reservations=None, resolution=pbf.bounded.MAX_SECONDS),
                     pbf.Backfill(window=pbf.bounded.MAX_SECONDS)):
        r = pbf.replay(jobs, pbf.ReplayConfig(backfill=backfill))
        assert sorted(r.jobs["start"].tolist()) == [0, 100]


def test_a_trace_that_would_pass_for_ever_stops_with_a_clear_error(tmp_path, capsys):
    # two jobs, one of 31 years: under the slurm-sim clock a main-scheduler pass every minute
    path = tmp_path / "long.swf"
    path.write_text("; MaxProcs: 8\n1 0 0 1000000000 8 -1 -1 8 1000000000 -1 1 1 1 -1 1 -1 -1 -1\n"
                    "2 0 0 100 8 -1 -1 8 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    out = tmp_path / "o"
    assert main(["replay", str(path), "--preset", "slurm", "--end-lag", "1099511627776", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "the replay stopped after" in err and "--max-passes" in err and not out.exists()
    with pytest.raises(pbf.ConfigError, match="limit of 50 passes"):
        pbf.replay(pbf.read_swf(path), pbf.ReplayConfig(trigger="interval", max_passes=50))
    r = pbf.replay(pbf.read_swf(path), pbf.ReplayConfig(trigger="interval", max_passes=40_000_000,
                                                        pass_records=False))
    assert r.summary["jobs"]["completed"] == 2


@pytest.mark.parametrize("out", ["", " ", "/"])
def test_an_empty_or_root_output_folder_is_refused(tmp_path, capsys, out):
    assert main(["replay", _two_wide_jobs(tmp_path / "t.swf"), "--out", out, "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("pbf: error: --out")


def test_report_without_matplotlib_is_refused_before_anything_is_written(tmp_path, capsys, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "matplotlib" else real(name, *a))
    out = tmp_path / "o"
    assert main(["replay", _two_wide_jobs(tmp_path / "t.swf"), "--out", str(out), "--report", "--quiet"]) == 2
    assert "matplotlib" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("value", ["abc", "nan", "0", "-1", "1,x", "257", " "])
def test_bench_workers_are_checked(capsys, value):
    assert _cli(["bench", "--workers", value, "--slice", "bitmap", "--quick"]) == 2
    assert "--workers" in capsys.readouterr().err


# ---------------------------------------------------------------- the embedding API

HOSTILE_INTS = st.sampled_from([-(2 ** 63) - 1, -(2 ** 63), -1, 0, 1, 7, 2 ** 31, 2 ** 40, 2 ** 40 + 1, 2 ** 62,
                                2 ** 63 - 1, 2 ** 63, 10 ** 30])
HOSTILE = st.one_of(HOSTILE_INTS, st.sampled_from([None, True, 1.5, float("nan"), float("inf"), "3", "²", [], (),
                                                   {}, b"1", np.int64(5), np.float64(2.0)]))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["reservations", "max_job_test", "window", "resolution"]), HOSTILE)
def test_backfill_settings_are_checked(name, value):
    try:
        backfill = pbf.Backfill(**{name: value})
    except pbf.ConfigError:
        return
    eng = Engine(8, backfill=backfill)
    eng.advance(0, [Submit(Job(1, 0, 8, 100)), Submit(Job(2, 0, 8, 100)), Submit(Job(3, 0, 1, 10))])
    assert eng.stats()["free_units"] >= 0 and len(eng.running()) == 1


REPLAY_SETTINGS = ["bf_interval", "bf_max_time", "bsld_bound", "cost_per_test_us", "cost_per_slot_us",
                   "cost_per_node_us", "cost_per_reservation_us", "cost_power", "estimate_every", "units",
                   "max_passes", "workers"]
SIM_SETTINGS = ["bf_yield_interval", "time_step", "batch_sched_delay", "sched_interval", "default_queue_depth",
                "max_sched_time", "cost_main_test_us", "cost_queue_us", "end_lag", "end_lag_below"]


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(REPLAY_SETTINGS + SIM_SETTINGS), HOSTILE)
def test_replay_settings_are_checked_and_bounded(name, value):
    try:
        if name in SIM_SETTINGS:
            config = pbf.ReplayConfig.from_preset("slurm", slurm_sim=pbf.SlurmSim(**{name: value}),
                                                  pass_records=False, max_passes=200_000)
        else:
            config = pbf.ReplayConfig(**{name: value}, start_estimates=name == "estimate_every",
                                      clock="model" if name.startswith("cost") or name == "bf_max_time" else "free")
    except pbf.ConfigError:
        return
    jobs = pbf.workload.JobTable.from_arrays(job_id=np.arange(1, 4), submit=np.array([0, 0, 5]),
                                             run=np.array([50, 20, 10]), req_procs=np.array([8, 8, 2]),
                                             req_time=np.array([100, 100, 20]))
    try:
        r = pbf.replay(jobs, config)
    except pbf.ConfigError as exc:      # a valid setting that the trace cannot use (units, the pass limit)
        assert "units" in str(exc) or "passes" in str(exc)
        return
    j = r.jobs
    ran = j["start"] >= 0
    assert (j["start"][ran] >= 0).all() and r.summary["jobs"]["submitted"] == 3
    units = r.summary["units"]
    t = np.concatenate([j["start"][ran], j["end"][ran]])
    d = np.concatenate([j["units"][ran], -j["units"][ran]])
    o = np.lexsort((d, t))
    assert np.cumsum(d[o]).max(initial=0) <= units


def _busy():
    eng = Engine(pbf.Cluster(units=8), report_reservations=True)
    eng.advance(0, [Submit(Job(1, 0, 6, 100)), Submit(Job(2, 0, 4, 50)), Submit(Job(3, 0, 2, 30))])
    return eng


EVENT_FIELDS = st.one_of(HOSTILE, st.sampled_from([(1,), (0, 7), (8,), ("a",), ([1],), range(3), "n1", (None,)]))


@st.composite
def hostile_events(draw):
    kind = draw(st.sampled_from(["submit", "finish", "drain", "fail", "resume", "junk"]))
    if kind == "submit":
        fields = dict(id=draw(st.one_of(HOSTILE, st.integers(4, 9))), submit=draw(st.one_of(HOSTILE, st.just(10))),
                      units=draw(st.one_of(HOSTILE, st.integers(1, 8))),
                      requested=draw(st.one_of(HOSTILE, st.just(60))))
        extra = draw(st.sampled_from(["run", "user", "cpu", "mem_core_mb", "gpus", "nodes_min", "features", None]))
        if extra:
            fields[extra] = draw(EVENT_FIELDS)
        return Submit(Job(**fields))
    if kind == "finish":
        return Finish(draw(st.one_of(HOSTILE, st.integers(1, 4))), draw(st.one_of(HOSTILE, st.just(10))),
                      draw(st.one_of(st.none(), HOSTILE)))
    if kind == "junk":
        return draw(HOSTILE)
    cls = {"drain": Drain, "fail": Fail, "resume": Resume}[kind]
    return cls(units=draw(EVENT_FIELDS), at=draw(st.one_of(HOSTILE, st.just(10))),
               until=draw(st.one_of(st.none(), HOSTILE)))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hostile_events(), min_size=1, max_size=3), st.one_of(st.just(10), HOSTILE))
def test_hostile_calls_are_refused_cleanly_or_keep_every_invariant(events, now):
    eng = _busy()
    before = snapshot(eng)
    try:
        decisions = eng.advance(now, events)
    except (ProtocolError, pbf.ConfigError):
        assert snapshot(eng) == before
        return
    stats = eng.stats()
    owned = [int(u) for _, units in eng.running().values() for u in units]
    assert len(owned) == len(set(owned)) and all(0 <= u < 8 for u in owned), "no unit owned twice"
    assert 0 <= stats["free_units"] <= 8 - len(owned), "free never negative"
    assert all(not isinstance(d.at, float) or math.isfinite(d.at) for d in decisions if hasattr(d, "at"))


@pytest.mark.parametrize("how", [{}, {"workers": 2}, {"start_estimates": True}, {"node_search": "slurm"}])
def test_reservations_past_the_node_plans_reach_are_not_made(how):
    # twelve jobs of 2**40 s each, one after the other on two nodes: the eighth would end past 2**43 s,
    # where the node plan's points end (it used to fail as "out of memory")
    from pbf.cluster import Cluster, Node
    from pbf.workload import JobTable
    cluster = Cluster.of_nodes([Node("n1", 4, 8000, 1), Node("n2", 4, 8000, 1)], name="c")
    n = 12
    jobs = JobTable.from_arrays(job_id=np.arange(1, n + 1), submit=np.zeros(n, dtype=np.int64), run=np.full(n, 10),
                                req_procs=np.full(n, 8), req_time=np.full(n, 2 ** 40))
    r = pbf.replay(jobs, pbf.ReplayConfig(cluster=cluster, backfill=pbf.Backfill(reservations=None), **how))
    assert r.jobs["start"].tolist() == list(range(0, 120, 10))
    eng = Engine(cluster, backfill=pbf.Backfill(reservations=None))
    eng.advance(0, [Submit(Job(i, 0, 8, 2 ** 40)) for i in range(1, n + 1)])
    planned = eng.estimates()
    assert planned[7][0] == 6 * 2 ** 40 and planned[8][0] is None     # unreserved past the reach
