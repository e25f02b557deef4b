"""pbf replay: outputs, options, and the built-in trace's wiring."""
import csv
import json
from pathlib import Path

import numpy as np
import pytest

from pbf.cli import main
from pbf.replayer import ReplayConfig, replay
from pbf.workload import read_swf

from scheduling import check_invariants, compiled_replay

SAMPLE = Path(__file__).resolve().parents[1] / "traces" / "beocat-2000-1d.swf.gz"


def test_replay_writes_summary_jobs_and_passes(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["replay", str(SAMPLE), "--out", str(out), "--quiet", "--bsld-bound", "600"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["jobs"]["submitted"] == 2000 and summary["units"] == 9128
    assert summary["jobs"]["completed"] + summary["jobs"]["rejected"] == 2000
    assert summary["metrics"]["bsld_tau_s"] == 600 and summary["config"]["trigger"] == "event"
    with open(out / "jobs.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 2000 and rows[0].keys() >= {"id", "submit", "start", "end", "wait", "units", "how"}
    assert {r["how"] for r in rows} <= {"main", "backfill"}
    with open(out / "passes.csv") as fh:
        passes = list(csv.DictReader(fh))
    assert len(passes) == summary["passes"]["count"]
    assert passes[0].keys() >= {"time", "kind", "depth", "started", "reservations", "exit", "wall_us"}


@pytest.mark.parametrize("kw", [{}, {"trigger": "interval"}, {"workers": 3, "clock": "model"}])
def test_summary_is_the_same_without_pass_records(tmp_path, kw):
    """The pass totals kept by the core give the summary that the per-pass records give, and
    --no-pass-records writes no passes.csv (and removes an earlier run's)."""
    from pbf.config import Backfill
    t = read_swf(SAMPLE)
    cfg = dict(bsld_bound=600.0, backfill=Backfill(reservations=3), **kw)
    a = replay(t, ReplayConfig(**cfg))
    b = replay(t, ReplayConfig(pass_records=False, **cfg))
    for key in ("state", "start", "end", "how"):
        assert np.array_equal(a.jobs[key], b.jobs[key])
    p, q = a.summary["passes"], b.summary["passes"]
    assert q["wall_ms_total"] is None and p["wall_ms_total"] > 0
    # the summary again from the records themselves
    rec, full = a.passes, a.passes["kind"] == 0
    assert p["count"] == len(rec["depth"]) and p["full"] == full.sum()
    assert p["max_depth"] == rec["depth"].max() and p["mean_depth"] == pytest.approx(rec["depth"].mean())
    assert p["mean_depth_full"] == pytest.approx(rec["depth"][full].mean())
    assert p["charged_s_max"] == pytest.approx(rec["charged_us"].max() / 1e6)
    assert p["tests_max_worker_mean_full"] == pytest.approx(rec["tests_max_worker"][full].mean())
    # (each record's wall time is truncated to whole nanoseconds, the total once)
    assert p["wall_ms_total"] == pytest.approx(rec["wall_us"].sum() / 1e3, abs=p["count"] * 1e-6)
    for name in ("reevaluations", "conflicts"):
        assert p[name] == rec[name].sum()
    assert sum(p["exit_reasons"].values()) == p["count"]
    for key in p:
        if key not in ("wall_ms_total", "wall_us_mean", "threaded_passes"):   # (measured, as the times are)
            assert p[key] == q[key], key
    assert len(b.passes["depth"]) == 0
    out = tmp_path / "out"
    a.write(out)
    b.write(out)
    assert (out / "summary.json").exists() and not (out / "passes.csv").exists()
    assert main(["replay", str(SAMPLE), "--no-pass-records", "--out", str(out)]) == 0


def test_replay_json_and_options(capsys):
    assert main(["replay", str(SAMPLE), "--json", "--reservations", "unlimited", "--trigger", "interval",
                 "--priority", "sjf", "--order", "sjbf", "--max-job-test", "50", "--bf-window", "1d",
                 "--bf-resolution", "60", "--predictor", "clairvoyant", "--quiet"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["config"]["backfill"] == {"reservations": None, "max_job_test": 50, "window": 86400,
                                       "resolution": 60, "order": "sjbf", "enabled": True,
                                       "stop_at_reservation_limit": False}
    assert s["passes"]["quick"] > 0 and s["config"]["priority"] == "sjf"


def test_replay_text_summary(capsys):
    assert main(["replay", str(SAMPLE)]) == 0
    text = capsys.readouterr().out
    assert "AWT" in text and "BSLD" in text and "passes" in text


def test_bad_replay_arguments(capsys):
    with pytest.raises(SystemExit):
        main(["replay", str(SAMPLE), "--reservations", "-2"])
    assert "expected a whole number from 0 to 2,147,483,647 or 'unlimited', got '-2'" in capsys.readouterr().err


@pytest.mark.parametrize("trigger", ["event", "interval"])
def test_whole_beocat_sample_keeps_invariants(trigger):
    t = read_swf(SAMPLE)
    r = compiled_replay(t.submit, t.units, t.req_time, t.run, 9128, trigger=trigger)
    check_invariants(r, t.submit, t.units, t.run, 9128, fcfs_easy=True)
    assert np.array_equal(r["start"], replay(t, ReplayConfig(trigger=trigger)).jobs["start"])


def test_default_replay_is_the_builtin_beocat_trace(monkeypatch, capsys):
    """`pbf replay` with no trace replays the generated high-traffic trace, interval trigger."""
    import pbf.workload.beocat as beocat
    real = beocat.generate_beocat
    monkeypatch.setattr(beocat, "generate_beocat", lambda: real(3000, 86400, seed=0))
    assert main(["replay", "--json", "--quiet"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["config"]["trigger"] == "interval" and s["units"] == 9128
    assert "built-in Beocat-like" in s["trace"]


def test_a_slurm_conf_replay_puts_its_seconds_on_slurms_clock(tmp_path):
    # Slurm's will-run test batches ends on multiples of 30 s of Unix time: a --slurm-conf replay takes
    # the trace's own start (a sacct dump's first submission, 2024-01-01T00:00:01) as its second 0
    harness = Path(__file__).resolve().parent / "data" / "slurm_harness"
    out = tmp_path / "out"
    assert main(["replay", str(harness / "part2_jobs.sacct"), "--slurm-conf", str(harness / "part2.conf"),
                 "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["backfill"]["clock_origin"] == 1_704_067_201
