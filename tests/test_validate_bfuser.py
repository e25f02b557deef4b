"""The real-Slurm harness on Slurm's backfill limit bf_max_job_user (docs/slurm-harness.md,
"bf_max_job_user (bfuser4)").

small4_bfuser.conf: small4.conf with ``bf_max_job_user=2``. The workload (make_bfuser_workload.py): 48
jobs of four users in two waves; in each a 16-core job waits for two 8-core fillers, so that everything
behind it is backfill's, and a busy user's two wide jobs come before its eleven small ones. Without
Slurm: the workload is its generator's, and the three recorded runs (tests/data/slurm_harness/
recorded_bfuser4: Slurm 22.05.8, each job submitted as its trace user with --as-users) are compared again
with a new pbf replay, which holds the targets; replayed without the limit, pbf misses the runs by far.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pbf.validate.jobs import load_workload, scale_jobs
from pbf.validate.slurm_run import read_run

from scheduling import awt_runs_mean, generator_writes, within_pct

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
CONF = DATA / "small4_bfuser.conf"
WORKLOAD = DATA / "bfuser4_jobs.sacct"
REC = DATA / "recorded_bfuser4"


def test_the_workload_is_its_generators(tmp_path):
    assert generator_writes(DATA, "make_bfuser_workload.py", "bfuser4_jobs.sacct", tmp_path) == WORKLOAD.read_bytes()
    table, req = load_workload(WORKLOAD)
    jobs = scale_jobs(table, req, 1)[0]
    users = [j.unix_user for j in jobs]
    assert len(jobs) == 48 and sorted(set(users)) == ["pbfu1", "pbfu2", "pbfu3", "pbfu4"]
    # (pbf numbers the trace's users as they first appear: u3, u4, u1, u2 are pbfu1 .. pbfu4)
    assert [users.count(f"pbfu{k}") for k in (1, 2, 3, 4)] == [4, 2, 21, 21]
    # small4.conf's scheduler lines with the limit added, nothing else changed
    base = (DATA / "small4.conf").read_text().splitlines()
    own = CONF.read_text().splitlines()
    assert [a for a, b in zip(base, own) if a != b][1:] == ["SchedulerParameters=bf_interval=1,bf_resolution=1"]
    assert "SchedulerParameters=bf_interval=1,bf_resolution=1,bf_max_job_user=2" in own


def _again(tmp_path, conf, *extra):
    from pbf.cli import main
    out = tmp_path / conf.stem
    assert main(["validate", "slurm", str(conf), str(WORKLOAD), "--slurm-runs", str(REC), "--out", str(out),
                 "--quiet", *extra]) == 0
    s = json.loads((out / "summary.json").read_text())
    with open(out / "comparison.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    return s, rows


def test_the_recorded_runs_are_compared_again(tmp_path):
    if not (REC / "slurm" / "run3").is_dir():
        pytest.skip(f"{REC} is not in this checkout")
    s, rows = _again(tmp_path, CONF)
    assert s["repeat"] == 3 and s["slurm_version"] == "slurm-wlm 22.05.8" and s["pbf_vs_slurm"]["jobs"] == 48
    assert s["pbf_config"]["backfill"]["max_job_user"] == 2
    # every job ran as its trace user's own Unix user, so that Slurm counted the trace's users
    table, req = load_workload(WORKLOAD)
    jobs = scale_jobs(table, req, 1)[0]
    user = {j.id: j.unix_user for j in jobs}
    for k in (1, 2, 3):
        run = read_run(REC / "slurm" / f"run{k}", jobs)
        by_slurm = {r["slurm_id"]: i for i, r in run.jobs.items()}
        names = {by_slurm[int(line.split()[0][6:])]: line.split()[1][7:].split("(")[0]
                 for line in (REC / "slurm" / f"run{k}" / "jobcomp.txt").read_text().splitlines()}
        assert names == user
    # the runs' own timing: the median of their thresholds, each on its own clock
    assert s["pbf_end_lag_below"] == {"s": 48, "from": "runs", "runs_s": [56, 48, 46]}
    assert s["pbf_clock_phase_s"] == [29, 26, 22]
    starts = [[r[k] for r in rows] for k in ("slurm_start", "slurm2_start", "slurm3_start")]
    own = [[r[k] for r in rows] for k in ("pbf_start", "pbf2_start", "pbf3_start")]
    # the figures docs/slurm-harness.md quotes. Slurm against itself: 94.4 % on average (run 1's chain of
    # starts at +59..+77 s came a second later than runs 2 and 3's); pbf against each run on its own
    # replay 97.2 % (target: Slurm's own less 5 points), AWT within 5 % of the runs' mean
    slurm_own = [within_pct(starts[a], starts[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    assert slurm_own == [91.7, 91.7, 100.0]
    pbf = [within_pct(p, x) for p, x in zip(own, starts)]
    assert pbf == [100.0, 95.8, 95.8]
    assert sum(pbf) / 3 >= sum(slurm_own) / 3 - 5
    assert s["pbf_per_run"]["pooled"]["within_share"] == pytest.approx(0.972, abs=0.001)
    assert [within_pct(p, x, 60) for p, x in zip(own, starts)] == [100.0] * 3
    assert abs(s["awt_s"]["pbf"] / awt_runs_mean(s) - 1) <= 0.05
    assert s["pbf_per_run"]["awt_s"]["relative_difference"] == pytest.approx(0.012, abs=0.001)
    # who started the jobs: the same jobs at the same seconds; pbf's main scheduler runs before the
    # backfill cycle of the same instant, so it is the first to see an end and starts more of them
    assert s["slurm_started_by"] == {"backfill": 26, "main": 22}
    assert s["pbf_started_by_scheduler"] == {"main": 28, "backfill": 20}


def test_each_run_at_its_own_threshold_holds_the_targets(tmp_path):
    if not (REC / "slurm" / "run3").is_dir():
        pytest.skip(f"{REC} is not in this checkout")
    s, _ = _again(tmp_path, CONF, "--end-lag-threshold", "per-run")
    runs = s["pbf_per_run"]["runs"]
    assert [r["end_lag_below_s"] for r in runs] == [56, 48, 46]
    assert [round(100 * r["agreement"]["within_share"], 1) for r in runs] == [100.0, 95.8, 95.8]
    assert s["pbf_per_run"]["awt_s"]["relative_difference"] == pytest.approx(0.018, abs=0.001)


def test_without_the_limit_pbf_misses_the_runs(tmp_path):
    # the same recorded runs against pbf replaying small4.conf (no bf_max_job_user): the busy users' small
    # jobs backfill at once, about 19 s ahead of Slurm's on average
    if not (REC / "slurm" / "run3").is_dir():
        pytest.skip(f"{REC} is not in this checkout")
    s, _ = _again(tmp_path, DATA / "small4.conf")
    assert s["pbf_vs_slurm"]["within_share"] < 0.2
    assert s["pbf_per_run"]["awt_s"]["relative_difference"] < -0.4
    assert s["pbf_started_by_scheduler"]["backfill"] > 40
