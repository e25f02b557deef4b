"""The real-Slurm harness with jobs inside a reservation (sbatch --reservation; docs/slurm-harness.md, "Jobs
inside a reservation (resvin4)").

(a) Without Slurm: the workload's Reservation column as ``sbatch --reservation`` and as pbf's job table, the
errors of a case whose jobs name a reservation it does not have, and the recorded runs of the case
(tests/data/slurm_harness/recorded_resvin: three real Slurm 22.05.8 runs of resvin4_jobs.sacct on small4.conf,
a reservation of a[1-2] from +70 s to +310 s that 12 of the 48 jobs name) compared again with a new pbf
replay. (b) With Slurm (skipped, saying why, where it cannot run): a few jobs inside a short reservation,
and what Slurm does with a job still running at its end and one still pending there.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pbf.errors import ConfigError
from pbf.slurm_reservations import read_reservations
from pbf.validate import compare as cmp
from pbf.validate.jobs import HarnessJob, load_workload, pbf_table, scale_jobs
from pbf.validate.reservation import named_jobs, parse_reservation, pbf_reservation
from pbf.validate.slurm_config import write_private_conf
from pbf.validate.slurm_run import (
    is_recording,
    new_scratch,
    read_run,
    run_slurm,
)

from scheduling import generator_writes, slurm_or_skip, within_pct

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
CONF = DATA / "small4.conf"
WORKLOAD = DATA / "resvin4_jobs.sacct"
REC = DATA / "recorded_resvin"
SPEC = "Nodes=a[1-2] StartTime=+70 Duration=240 Flags=none Name=resvin"
WINDOW = [{"name": "resvin", "nodes": ["a1", "a2"], "start_s": 70, "end_s": 310}]


def _jobs():
    table, req = load_workload(WORKLOAD)
    return scale_jobs(table, req, 1)[0]


def test_the_workload_is_its_generators(tmp_path):
    # make_resvin_workload.py rewrites the file byte for byte
    assert generator_writes(DATA, "make_resvin_workload.py", "resvin4_jobs.sacct", tmp_path) == WORKLOAD.read_bytes()


def test_jobs_that_name_the_reservation_are_submitted_into_it():
    jobs = _jobs()
    named = [j for j in jobs if j.reservation]
    assert len(jobs) == 48 and len(named) == 12 and {j.reservation for j in named} == {"resvin"}
    assert sum(j.submit < 70 for j in named) == 4           # they wait for its start
    assert all(j.submit + 60 * j.limit_min <= 280 for j in named)
    for j in jobs:
        args = j.sbatch_args(None, "/tmp")
        assert ("--reservation=resvin" in args) == bool(j.reservation)
    # pbf's side: the job table's reservation column and its legend
    table = pbf_table(jobs)
    assert [int(x) for x in table.columns["reservation"]] == [1 if j.reservation else 0 for j in jobs]
    assert " Reservation: 1 resvin" in table.header.lines
    assert "reservation" not in pbf_table([j for j in jobs if not j.reservation]).columns


def test_flags_none_is_a_reservation_jobs_may_run_in(tmp_path):
    spec = parse_reservation(SPEC, ("a1", "a2", "b1", "g1"))
    assert spec.flags == () and spec.name == "resvin" and (spec.start, spec.end) == (70, 310)
    resv, source = pbf_reservation(spec, None, str(tmp_path), ("a1", "a2", "b1", "g1"), 1.0)
    (rec,), _fmt = read_reservations(resv.path)
    assert source == "spec" and rec.name == "resvin" and rec.flags == ()
    assert resv.jobs_inside(pbf_table(_jobs())) == {"resvin": 12}


def test_a_case_without_the_reservation_its_jobs_name_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=r"resvin4_jobs.sacct: jobs name reservation 'resvin' .*expected "
                                          r"--reservation 'Nodes=\.\.\. .*Name=resvin'"):
        cmp.validate_slurm(CONF, WORKLOAD, out=tmp_path / "none", verbose=False)
    with pytest.raises(ConfigError, match=r"--reservation Name=other: expected Name=resvin"):
        cmp.validate_slurm(CONF, WORKLOAD, out=tmp_path / "other", verbose=False,
                           reservation=SPEC.replace("Name=resvin", "Name=other"))
    assert not (tmp_path / "none").exists() and not (tmp_path / "other").exists()


def test_how_the_named_jobs_ran():
    recs = {1: {"start": 70, "end": 100, "nodes": ["a1"], "state": "COMPLETED"},
            2: {"start": 300, "end": 330, "nodes": ["a2"], "state": "TIMEOUT"},
            3: {"start": None, "end": None, "nodes": [], "state": "NEVER_STARTED"},
            4: {"start": 75, "end": 90, "nodes": ["b1"], "state": "COMPLETED"}}
    got = named_jobs(recs, {1: "resvin", 2: "resvin", 3: "resvin", 4: "resvin"}, WINDOW)
    assert got == {"inside": [1, 2], "outside": [4], "not_started": [3], "past_end": [2], "timeout": [2]}


# ---------------------------------------------------------------- the recorded runs

def test_every_named_job_ran_inside_the_reservation_in_every_recorded_run():
    jobs = _jobs()
    named = {j.id: j.reservation for j in jobs if j.reservation}
    runs = sorted((REC / "slurm").iterdir())
    assert len(runs) == 3 and all(is_recording(r) for r in runs)
    for run_dir in runs:
        run = read_run(run_dir, jobs)
        got = named_jobs(run.jobs, named, WINDOW)
        assert got["inside"] == sorted(named) and not got["outside"] and not got["not_started"]
        # no other job on a[1-2] inside the window
        for i, r in run.jobs.items():
            if i not in named and {"a1", "a2"} & set(r["nodes"]):
                assert r["end"] <= 70 or r["start"] >= 310, (run_dir.name, i, r)


def _rows(path):
    import csv
    with open(path, newline="") as fh:
        return {int(r["job_id"]): r for r in csv.DictReader(fh)}


def test_the_recorded_runs_are_compared_again(tmp_path, capsys):
    from pbf.cli import main
    out = tmp_path / "resvin-again"
    assert main(["validate", "slurm", str(CONF), str(WORKLOAD), "--slurm-runs", str(REC), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "3 run(s)" in text
    assert "reservation  resvin on a1,a2 from +70 s to +310 s of the run (recorded dump)" in text
    assert "other jobs on its nodes inside it: pbf 0, Slurm 0, 0, 0" in text
    s = json.loads((out / "summary.json").read_text())
    assert s["repeat"] == 3 and s["slurm_version"] == "slurm-wlm 22.05.8" and s["pbf_vs_slurm"]["jobs"] == 48
    r = s["reservation"]
    assert r["pbf_read_from"] == "recorded dump" and r["jobs_inside"] == {"pbf": [], "slurm": [[], [], []]}
    named = sorted(int(i) for i in r["named"]["jobs"])
    assert len(named) == 12 and r["named"]["pbf"]["inside"] == named
    assert all(x["inside"] == named for x in r["named"]["slurm"])
    rows = _rows(out / "comparison.csv")
    for i in named:
        assert 70 <= int(rows[i]["pbf_start"]) < 310 and set(rows[i]["pbf_nodes"].split()) <= {"a1", "a2"}
    # the figures docs/slurm-harness.md quotes (the replay is deterministic): within 2 s, pbf against each run
    # and every pair of runs, as percentages of the 48 jobs; AWT of pbf and of each run
    assert round(100 * s["pbf_vs_slurm"]["within_share"], 1) == 95.8
    assert [round(100 * x["within_share"], 1) for x in s["slurm_vs_slurm"]] == [93.8, 100.0]
    starts = [[r[k] for r in rows.values()] for k in ("slurm_start", "slurm2_start", "slurm3_start")]
    pbf = [r["pbf_start"] for r in rows.values()]
    assert [within_pct(pbf, x) for x in starts] == [95.8, 77.1, 100.0]
    assert [within_pct(starts[a], starts[b]) for a, b in ((0, 1), (0, 2), (1, 2))] == [93.8, 100.0, 75.0]
    awt = s["awt_s"]
    assert [round(awt[k], 1) for k in ("pbf", "slurm", "slurm_run2", "slurm_run3")] == [101.0, 100.1, 99.0, 100.7]


# ---------------------------------------------------------------- (b) with a real Slurm

def test_real_slurm_runs_the_named_jobs_inside_the_reservation(tmp_path):
    slurm_or_skip()
    head = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State|User|Partition|Reservation\n"
    rows = [(1, 0, 8, 4, "", "r1"), (2, 1, 6, 8, "1", ""), (3, 2, 5, 4, "", ""), (4, 7, 5, 8, "1", "r1")]
    work = tmp_path / "jobs.sacct"
    work.write_text(head + "".join(f"{i}|2024-01-01T00:00:{s:02d}|2024-01-01T00:00:{s:02d}|{run}|1|{cores}|{nodes}|"
                                   f"1000Mc|COMPLETED|u1|batch|{resv}\n" for i, s, run, cores, nodes, resv in rows))
    s = cmp.validate_slurm(CONF, work, out=tmp_path / "out", verbose=False,
                           reservation="Nodes=a1 StartTime=+5 Duration=20 Flags=none Name=r1")
    run = s["runs"][0]
    assert not run["errors"] and run["finished"]
    r = s["reservation"]
    assert "MAINT" not in r["slurm_dumps_run_clock"][0][0]["flags"]
    assert r["jobs_inside"] == {"pbf": [], "slurm": [[]]}
    assert r["named"]["pbf"]["inside"] == [1, 4] and r["named"]["slurm"][0]["inside"] == [1, 4]
    rows_out = _rows(tmp_path / "out" / "comparison.csv")
    # job 1 waits for the window's start; the ordinary 8-core job 2 goes to a2, kept off a1
    assert float(rows_out[1]["slurm_start"]) >= 5 and float(rows_out[1]["pbf_start"]) >= 5
    assert rows_out[2]["slurm_nodes"] == "a2" and rows_out[2]["pbf_nodes"] == "a2"


def test_real_slurm_ends_a_job_at_its_reservations_end_and_holds_one_still_pending(tmp_path):
    # Slurm 22.05: a running job inside a reservation is ended at the reservation's end (plus ResvOverRun, 0)
    # by the time-limit check of slurmctld's 30-second timer (job_time_limit, "Reservation ended"), state
    # TIMEOUT; a job still pending at the end is held (_clear_job_resv: JOB_RESV_DEL_HOLD) and never starts
    slurm_or_skip()
    jobs = [HarnessJob(id=1, submit=0, run=50, limit_min=2, cores=8, reservation="r2"),
            HarnessJob(id=2, submit=1, run=5, limit_min=1, cores=8, reservation="r2")]
    scratch = new_scratch()
    try:
        private = write_private_conf(CONF, scratch, "batch")
        run = run_slurm(private, jobs, timeout=150, keep=str(tmp_path / "run"), verbose=False, stuck_after=15,
                        reservation={"name": "r2", "nodes": ["a1"], "start": 2, "end": 12, "flags": []})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    assert not run.errors
    one, two = run.jobs[1], run.jobs[2]
    assert one["start"] is not None and 2 <= one["start"] < 12 and one["nodes"] == ["a1"]
    assert one["state"].startswith("TIMEOUT") and 12 <= one["end"] <= 12 + 31 and one["end"] < one["start"] + 50
    # held (squeue: RESV_DEL_HOLD, "linked to defunct reservation" in slurmctld's log), then cancelled by the
    # harness as a job that can never start
    assert two["start"] is None and two["state"] == "NEVER_STARTED"
    assert two["pending_reason"].startswith("RESV_DEL_HOLD")
