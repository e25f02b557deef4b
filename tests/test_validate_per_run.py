"""Each recorded Slurm run against a pbf replay at its own end-lag threshold (pbf validate slurm
--end-lag-threshold per-run; docs/slurm-harness.md, "Each run at its own threshold"), and on its own
clock (in either mode: the Unix second of its origin modulo 30 s, where Slurm's will-run test aligns its
windows).

On recorded runs only (no Slurm needed): drain4's six runs, whose logs give six thresholds (runs 1-3 and
4-6 come from sessions that launched jobs at 66-75 ms and 37-40 ms), and part2's three, of which only run 1's
log gives one.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pbf.errors import ConfigError
from pbf.validate import compare as cmp
from pbf.validate.per_run import check_mode, replays, thresholds

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
SMALL4 = DATA / "small4.conf"
DRAIN_JOBS = DATA / "drain4_jobs.sacct"
DRAIN_REC = DATA / "recorded_drain"


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def _within(rows, a, b, window=2):
    pairs = [(float(r[a]), float(r[b])) for r in rows if r[a] != "" and r[b] != ""]
    return sum(abs(x - y) <= window for x, y in pairs) / len(pairs)


def test_each_run_is_compared_with_the_replay_at_its_own_threshold(tmp_path, capsys):
    from pbf.cli import main
    out = tmp_path / "per-run"
    assert main(["validate", "slurm", str(SMALL4), str(DRAIN_JOBS), "--slurm-runs", str(DRAIN_REC), "--out", str(out),
                 "--end-lag-threshold", "per-run", "--quiet"]) == 0
    text = capsys.readouterr().out
    s = json.loads((out / "summary.json").read_text())
    assert s["pbf_end_lag_threshold"] == "per-run"
    lag = s["pbf_end_lag_below"]
    # six runs, six thresholds of their own, six replays; run 1's (67 s) behind the figures of either mode
    assert lag == {"s": 67, "from": "each run", "runs_s": [67, 75, 84, 38, 45, 39],
                   "compared_at_s": [67, 75, 84, 38, 45, 39], "replays_s": [38, 39, 45, 67, 75, 84], "median_s": 45}
    assert s["pbf_config"]["slurm_sim"]["end_lag_below"] == 67
    pr = s["pbf_per_run"]
    assert [r["end_lag_below_s"] for r in pr["runs"]] == [67, 75, 84, 38, 45, 39]
    assert pr["runs"][0]["agreement"] == s["pbf_vs_slurm"]
    assert ("end lag      pbf: each run against a replay at its own threshold (--end-lag-threshold per-run): "
            "run 1 67 s, run 2 75 s, run 3 84 s, run 4 38 s, run 5 45 s, run 6 39 s; 6 replays") in text
    # each run against the median mode's replay at that run's threshold (and on that run's clock): the same figure
    rows = _rows(out / "comparison.csv")
    for k, t in ((2, 75), (4, 38)):
        fixed = cmp.validate_slurm(SMALL4, DRAIN_JOBS, slurm_runs=DRAIN_REC, out=tmp_path / f"at{t}", verbose=False,
                                   end_lag_below=t)
        assert fixed["pbf_end_lag_threshold"] == "median"
        f_rows = _rows(tmp_path / f"at{t}" / "comparison.csv")
        assert [r[f"pbf{k}_start"] for r in f_rows] == [r[f"pbf{k}_start"] for r in rows]
        assert pr["runs"][k - 1]["agreement"]["within_share"] == _within(f_rows, f"slurm{k}_start", f"pbf{k}_start")
    # pooled over the 6 x 48 (run, job) pairs (77.1 %: 97.9, 89.6, 100.0, 60.4, 56.2 and 58.3 % against runs
    # 1-6); at the median threshold, each run on its own clock, 76.4 %
    pooled = pr["pooled"]
    assert pooled["jobs"] == 6 * 48
    assert pooled["within_share"] == pytest.approx(sum(r["agreement"]["within_share"] for r in pr["runs"]) / 6)
    assert pooled["within_share"] == pytest.approx(0.771, abs=0.001)
    median = cmp.validate_slurm(SMALL4, DRAIN_JOBS, slurm_runs=DRAIN_REC, out=tmp_path / "median", verbose=False)
    assert median["pbf_end_lag_below"]["s"] == 45
    assert median["pbf_per_run"]["pooled"]["within_share"] == pytest.approx(0.764, abs=0.001)
    assert f"per run      pbf: {pooled['within_share']:.1%} of 288 job starts within 2 s" in text
    # AWT: the mean of the runs' against the mean of their replays'
    w = pr["awt_s"]
    assert w["pbf_mean"] == pytest.approx(sum(r["awt_pbf_s"] for r in pr["runs"]) / 6)
    assert w["relative_difference"] == pytest.approx(w["pbf_mean"] / w["slurm_mean"] - 1)
    assert "AWT: the runs' mean" in text


def test_the_default_is_the_median_on_each_runs_own_clock(tmp_path, capsys):
    from pbf.cli import main
    assert main(["validate", "slurm", str(SMALL4), str(DRAIN_JOBS), "--slurm-runs", str(DRAIN_REC), "--out",
                 str(tmp_path / "d"), "--quiet"]) == 0
    text = capsys.readouterr().out
    s = json.loads((tmp_path / "d" / "summary.json").read_text())
    assert s["pbf_end_lag_threshold"] == "median"
    assert s["pbf_end_lag_below"] == {"s": 45, "from": "runs", "runs_s": [67, 75, 84, 38, 45, 39]}
    # the runs' origins (Unix seconds) modulo 30 s: five clocks, five replays at the median threshold
    assert s["pbf_clock_phase_s"] == [4, 20, 12, 12, 11, 10]
    assert s["pbf_config"]["backfill"]["clock_origin"] == 4
    pr = s["pbf_per_run"]
    assert [r["end_lag_below_s"] for r in pr["runs"]] == [45] * 6
    assert [r["clock_phase_s"] for r in pr["runs"]] == [4, 20, 12, 12, 11, 10]
    assert pr["runs"][0]["agreement"] == s["pbf_vs_slurm"]
    rows = _rows(tmp_path / "d" / "comparison.csv")
    assert all(r["pbf3_start"] == r["pbf4_start"] for r in rows)          # (one clock, one replay)
    # runs 1 and 3 (which agree on every job) against the replays on their clocks: every job within 2 s;
    # on the replay's own clock (0), half of them
    assert [round(r["agreement"]["within_share"], 3) for r in pr["runs"]] == [1.0, 0.875, 1.0, 0.562, 0.562, 0.583]
    assert "end lag      pbf: ends of jobs under 45 s seen a second late" in text
    assert ("clock        pbf: each run against a replay on its own clock (its origin's Unix second modulo 30 s, "
            "where Slurm's will-run test aligns its windows): run 1 4 s, run 2 20 s, run 3 12 s, run 4 12 s, "
            "run 5 11 s, run 6 10 s; 5 replays") in text
    assert "run 2 at 45 s, clock 20 s: 87.5% of 48 jobs within 2 s" in text


def test_a_replay_on_the_replays_own_clock_agrees_with_one_run_in_two(tmp_path):
    # the same recorded runs, each against one replay at clock origin 0 (the harness before it read the runs'
    # origins): 56.6 % (50.0, 81.2, 50.0, 54.2, 52.1, 52.1)
    from dataclasses import replace

    from pbf.replayer import replay

    def on_zero(table, config):
        return replay(table, replace(config, backfill=replace(config.backfill, clock_origin=0)))
    import pbf.validate.compare as c
    orig = c.replay
    try:
        c.replay = on_zero
        s = c.validate_slurm(SMALL4, DRAIN_JOBS, slurm_runs=DRAIN_REC, out=tmp_path / "z", verbose=False)
    finally:
        c.replay = orig
    shares = [r["agreement"]["within_share"] for r in s["pbf_per_run"]["runs"]]
    assert [round(v, 3) for v in shares] == [0.5, 0.812, 0.5, 0.542, 0.521, 0.521]


def test_runs_on_a_scaled_clock_each_have_their_own(tmp_path):
    # hetero8 at time scale 60: pbf replays the scaled jobs in the run's own seconds, so each run's origin
    # modulo 30 s places Slurm's will-run windows as at scale 1: one replay a clock
    s = cmp.validate_slurm(DATA / "hetero8.conf", DATA / "hetero8_jobs.sacct", time_scale=60, verbose=False,
                           slurm_runs=DATA / "recorded_hetero8", out=tmp_path / "h")
    assert s["pbf_clock_phase_s"] == [12, 28, 5]
    assert s["pbf_config"]["backfill"]["clock_origin"] == 12
    assert [r["clock_phase_s"] for r in s["pbf_per_run"]["runs"]] == [12, 28, 5]
    assert round(s["pbf_per_run"]["within_share_mean"], 3) == 0.357


def test_a_run_without_its_own_timing_is_compared_at_the_median(tmp_path):
    # part2: only run 1's log has the backfill cycles; runs 2 and 3 are compared at the median (50 s): one replay
    conf, jobs, rec = DATA / "part2.conf", DATA / "part2_jobs.sacct", DATA / "recorded_part2"
    s = cmp.validate_slurm(conf, jobs, slurm_runs=rec, out=tmp_path / "p", verbose=False, end_lag_threshold="per-run")
    assert s["pbf_end_lag_below"]["runs_s"] == [50, None, None]
    assert s["pbf_end_lag_below"]["compared_at_s"] == [50, 50, 50] and s["pbf_end_lag_below"]["replays_s"] == [50]
    d = cmp.validate_slurm(conf, jobs, slurm_runs=rec, out=tmp_path / "m", verbose=False)
    assert s["pbf_vs_slurm"] == d["pbf_vs_slurm"] and s["awt_s"] == d["awt_s"]
    # (each run on its own clock, in either mode: the same replays)
    rows, m_rows = _rows(tmp_path / "p" / "comparison.csv"), _rows(tmp_path / "m" / "comparison.csv")
    for k in (2, 3):
        assert [r[f"pbf{k}_start"] for r in rows] == [r[f"pbf{k}_start"] for r in m_rows]


def test_per_run_and_a_given_threshold_are_refused(tmp_path, capsys):
    with pytest.raises(ConfigError, match="give one of the two"):
        check_mode("per-run", 13)
    with pytest.raises(ConfigError, match="expected one of median, per-run"):
        check_mode("each", None)
    from pbf.cli import main
    assert main(["validate", "slurm", str(SMALL4), str(DRAIN_JOBS), "--slurm-runs", str(DRAIN_REC), "--out",
                 str(tmp_path / "x"), "--end-lag-threshold", "per-run", "--end-lag-below", "13", "--quiet"]) == 2
    assert "give one of the two" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_one_replay_per_distinct_threshold():
    lag = thresholds({"s": 45, "from": "runs", "runs_s": [67, None, 67, 0]}, 4)
    assert lag["compared_at_s"] == [67, 45, 67, 0] and lag["replays_s"] == [0, 45, 67] and lag["s"] == 67
    asked = []

    def replay_at(t):
        asked.append(t)
        return {"at": t}
    got = replays(lag["compared_at_s"], {"at": 67}, replay_at)
    assert asked == [45, 0] and [g["at"] for g in got] == [67, 45, 67, 0]


def test_live_runs_are_each_compared_at_their_own_threshold(tmp_path, monkeypatch):
    # the live path without Slurm: each "run" hands back a recorded drain run (kept as run K); the thresholds come
    # from the runs once they ran, and pbf's side is replayed from run 1's own events dump at each of them
    import shutil

    from pbf.validate.jobs import load_workload, scale_jobs
    from pbf.validate.slurm_run import read_run
    jobs = scale_jobs(*load_workload(DRAIN_JOBS), 1.0)[0]
    recorded = [read_run(DRAIN_REC / "slurm" / f"run{k}", jobs) for k in (1, 2, 3)]
    calls = []

    def fake_run(private, jobs, *, keep=None, **kw):
        calls.append(keep)
        shutil.copytree(DRAIN_REC / "slurm" / f"run{len(calls)}", keep)
        return recorded[len(calls) - 1]
    monkeypatch.setattr(cmp, "check_requirements", lambda accounting=False: {})
    monkeypatch.setattr(cmp, "run_slurm", fake_run)
    spec = "Nodes=a2 StartTime=+40 Duration=120 State=DRAIN Reason=maint"
    s = cmp.validate_slurm(SMALL4, DRAIN_JOBS, out=tmp_path / "live", verbose=False, drain=spec, repeat=3,
                           end_lag_threshold="per-run")
    assert s["pbf_end_lag_below"]["compared_at_s"] == [67, 75, 84] and s["pbf_end_lag_below"]["median_s"] == 75
    assert s["pbf_config"]["slurm_sim"]["end_lag_below"] == 67
    # the same figures as the recorded runs compared again at each run's threshold
    rec = DATA / "recorded_drain"
    for k, t in enumerate((67, 75, 84), 1):
        again = cmp.validate_slurm(SMALL4, DRAIN_JOBS, slurm_runs=rec, out=tmp_path / f"at{t}", verbose=False,
                                   end_lag_below=t)
        rows = _rows(tmp_path / f"at{t}" / "comparison.csv")
        col, pcol = ("slurm_start", "pbf_start") if k == 1 else (f"slurm{k}_start", f"pbf{k}_start")
        assert s["pbf_per_run"]["runs"][k - 1]["agreement"]["within_share"] == _within(rows, col, pcol)
        if k == 1:
            assert s["pbf_vs_slurm"] == again["pbf_vs_slurm"] and s["awt_s"]["pbf"] == again["awt_s"]["pbf"]
