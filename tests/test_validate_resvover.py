"""The real-Slurm harness with jobs inside a reservation that still run at its end (docs/slurm-harness.md, "Jobs
running past their reservation's end (resvover4)"): Slurm 22.05 ends them at the first 30-second time-limit check
after the end plus ResvOverRun (job_time_limit: "Reservation ended for JobId=...", state TIMEOUT), and pbf models it.

The recorded runs (tests/data/slurm_harness/recorded_resvover0: three real Slurm 22.05.8 runs of
resvover4_jobs.sacct on small4.conf, ResvOverRun 0, a reservation of a[1-2] from +40 s to +160 s that 10 of the
34 jobs name; recorded_resvover1: three runs on small4_resvover1.conf, ResvOverRun=1, the reservation from +40 s
to +100 s) compared again with a new pbf replay, and the check's time read from Slurm's log.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbf.validate.jobs import load_workload, scale_jobs
from pbf.validate.records import read_timing
from pbf.validate.reservation import named_jobs
from pbf.validate.slurm_run import is_recording, read_run

from scheduling import generator_writes, within_pct

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
WORKLOAD = DATA / "resvover4_jobs.sacct"
CASES = {0: (DATA / "small4.conf", DATA / "recorded_resvover0", 160),
         1: (DATA / "small4_resvover1.conf", DATA / "recorded_resvover1", 100)}


def _jobs():
    table, req = load_workload(WORKLOAD)
    return scale_jobs(table, req, 1)[0]


def test_the_workload_is_its_generators(tmp_path):
    written = generator_writes(DATA, "make_resvover_workload.py", "resvover4_jobs.sacct", tmp_path)
    assert written == WORKLOAD.read_bytes()
    named = [j for j in _jobs() if j.reservation]
    assert len(named) == 10 and {j.reservation for j in named} == {"resvover"}


def test_the_check_is_read_from_slurms_log():
    log = ("[2024-01-01T00:00:01.400] slurmctld version 22.05.8 started on cluster c\n"
           "[2024-01-01T00:03:01.875] Reservation ended for JobId=6\n")
    import time
    t0 = int(time.mktime(time.strptime("2024-01-01T00:00:05", "%Y-%m-%dT%H:%M:%S")))
    assert read_timing(log, {}, t0)["time_limit_check_s"] == 176       # the check that ended job 6
    assert read_timing(log.splitlines()[0], {}, t0)["time_limit_check_s"] == -4     # else slurmctld's start
    assert read_timing(log, {})["time_limit_check_s"] is None and read_timing("", {}, t0)["time_limit_check_s"] is None


@pytest.mark.parametrize("case", [0, 1])
def test_slurm_ended_the_jobs_still_running_at_the_end_plus_resv_over_run(case):
    conf, rec, end = CASES[case]
    jobs = _jobs()
    named = {j.id: j.reservation for j in jobs if j.reservation}
    window = [{"name": "resvover", "nodes": ["a1", "a2"], "start_s": 40, "end_s": end}]
    runs = sorted((rec / "slurm").iterdir())
    assert len(runs) == 3 and all(is_recording(r) for r in runs)
    for run_dir in runs:
        run = read_run(run_dir, jobs)
        got = named_jobs(run.jobs, named, window)
        assert got["timeout"] and got["timeout"] == got["past_end"]
        check = run.timing["time_limit_check_s"]
        for i in got["timeout"]:
            r = run.jobs[i]
            # at a check (30 s apart), the first after the end plus ResvOverRun, before the job's own end
            assert (r["end"] - check) % 30 == 0 and end + 60 * case < r["end"] <= end + 60 * case + 30
            assert r["end"] < r["start"] + next(j.run for j in jobs if j.id == i)


#: pbf against each run, each pair of runs (1-2, 1-3, 2-3), within 2 s, % of the jobs started; pbf's AWT (s)
CASE_FIGURES = {0: ([100.0, 100.0, 64.3], [100.0, 64.3, 64.3], 70.6), 1: ([89.3, 67.9, 92.9], [67.9, 89.3, 64.3], 69.7)}


@pytest.mark.parametrize("case", [0, 1])
def test_the_recorded_runs_are_compared_again(case, tmp_path, capsys):
    import csv

    from pbf.cli import main
    conf, rec, end = CASES[case]
    out = tmp_path / "again"
    assert main(["validate", "slurm", str(conf), str(WORKLOAD), "--slurm-runs", str(rec), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"reservation  resvover on a1,a2 from +40 s to +{end} s of the run (recorded dump)" in text
    s = json.loads((out / "summary.json").read_text())
    r = s["reservation"]["named"]
    assert r["pbf"]["timeout"] == r["slurm"][0]["timeout"]         # pbf ends the jobs Slurm ended
    assert s["pbf_resv_check_at"] % 30 == 26                        # slurmctld started 4 s before the first submission
    with open(out / "comparison.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    starts = [[row[k] for row in rows] for k in ("slurm_start", "slurm2_start", "slurm3_start")]
    pbf = [row["pbf_start"] for row in rows]
    pbf_vs, self_vs, awt = CASE_FIGURES[case]
    assert [within_pct(pbf, x) for x in starts] == pbf_vs
    assert [within_pct(starts[a], starts[b]) for a, b in ((0, 1), (0, 2), (1, 2))] == self_vs
    assert round(s["awt_s"]["pbf"], 1) == awt
