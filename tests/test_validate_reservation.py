"""The real-Slurm harness with an advance reservation (pbf validate slurm --reservation; docs/slurm-harness.md,
"A maintenance reservation").

(a) Without Slurm: the reservation spec and its errors, the record pbf's side reads, and the recorded runs of
the maintenance case (tests/data/slurm_harness/recorded_resv4: three real Slurm 22.05.8 runs of
resv4_jobs.sacct on small4.conf, a MAINT reservation on a[1-2] from +50 s to +170 s) compared again with a
new pbf replay, reading the reservation from the recording's own ``scontrol show reservation``. (b) With
Slurm (skipped, saying why, where it cannot run): a few jobs around a short reservation.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbf.errors import ConfigError
from pbf.slurm_reservations import read_reservations
from pbf.validate import compare as cmp
from pbf.validate.jobs import load_workload, scale_jobs
from pbf.validate.reservation import (
    dumped_window,
    jobs_inside,
    local_origin,
    parse_reservation,
    pbf_reservation,
    recorded_reservation,
)
from pbf.validate.slurm_run import is_recording, read_run

from scheduling import slurm_or_skip

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
CONF = DATA / "small4.conf"
WORKLOAD = DATA / "resv4_jobs.sacct"
REC = DATA / "recorded_resv4"
NODES = ("a1", "a2", "b1", "g1")
SPEC = "Nodes=a[1-2] StartTime=+50 Duration=120 Flags=MAINT,IGNORE_JOBS Name=maint"


def test_a_spec_is_read_in_scontrols_words():
    s = parse_reservation(SPEC, NODES)
    assert (s.nodes, s.start, s.end, s.flags, s.name) == (("a1", "a2"), 50, 170, ("MAINT", "IGNORE_JOBS"), "maint")
    t = parse_reservation("nodes=b1 starttime=+0 endtime=+30", NODES)
    assert (t.nodes, t.start, t.end, t.flags) == (("b1",), 0, 30, ("MAINT", "IGNORE_JOBS"))
    assert s.on_run_clock(2.0) == (25, 85)
    assert s.as_dict()["start_s"] == 50


@pytest.mark.parametrize("text, match", [
    ("", r"expected 'Nodes=LIST StartTime=\+SECONDS Duration=SECONDS"),
    ("Nodes=x1 StartTime=+5 Duration=5", r"Nodes='x1': expected nodes of the site's slurm.conf .*not there: x1"),
    ("Nodes=a1 StartTime=5 Duration=5", r"StartTime='5': expected \+SECONDS from the workload's time 0"),
    ("Nodes=a1 StartTime=+5", r"expected one of Duration=SECONDS and EndTime=\+SECONDS"),
    ("Nodes=a1 StartTime=+5 Duration=5 EndTime=+9", r"expected one of Duration"),
    ("Nodes=a1 StartTime=+5 Duration=0", r"Duration='0': expected SECONDS, a whole number from 1"),
    ("Nodes=a1 StartTime=+5 Duration=1e3", r"Duration='1e3': expected SECONDS"),
    ("Nodes=a1 StartTime=+9 EndTime=+5", r"EndTime='\+5': expected a time after StartTime \(\+9\)"),
    ("Nodes=a1 StartTime=+5 Duration=5 Flags=MAINT,BOGUS",
     r"Flags='MAINT,BOGUS': expected 'none' or a comma list of MAINT"),
    ("Nodes=a1 Start=+5 Duration=5", r"'Start=\+5': expected KEY=VALUE with KEY one of Nodes"),
    ("Nodes=a1 StartTime=+5 Duration=5 Nodes=a2", r"Nodes='a2': expected each key once"),
    ("Nodes=a1,a1 StartTime=+5 Duration=5", r"expected distinct node names"),
    ("Nodes=a[1-2 StartTime=+5 Duration=5", r"Nodes='a\[1-2': expected a host list"),
    ("Duration=5 StartTime=+5", r"no Nodes="),
])
def test_a_bad_spec_is_a_clear_error(text, match):
    with pytest.raises(ConfigError, match=match):
        parse_reservation(text, NODES)


def test_a_bad_spec_stops_the_harness_before_anything_is_written(tmp_path):
    with pytest.raises(ConfigError, match="not there: c9"):
        cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "out", verbose=False,
                           reservation="Nodes=c9 StartTime=+5 Duration=5")
    assert not (tmp_path / "out").exists()


def test_pbfs_side_reads_the_spec_as_an_scontrol_record(tmp_path):
    spec = parse_reservation(SPEC, NODES)
    resv, source = pbf_reservation(spec, None, str(tmp_path), NODES, 2.0)
    assert source == "spec"
    records, fmt = read_reservations(resv.path)
    assert fmt == "scontrol" and len(records) == 1
    assert dumped_window(resv.path, resv.origin) == [
        {"name": "maint", "nodes": ["a1", "a2"], "start_s": 25, "end_s": 85, "flags": ["MAINT", "IGNORE_JOBS"]}]
    assert pbf_reservation(None, None, str(tmp_path), NODES, 1.0) == (None, None)


def test_jobs_inside_a_window():
    recs = {1: {"start": 0, "end": 50, "nodes": ["a1"]},          # ends at its start: outside
            2: {"start": 40, "end": 60, "nodes": ["a2", "b1"]},   # runs into it
            3: {"start": 60, "end": 90, "nodes": ["b1"]},         # other nodes
            4: {"start": 170, "end": 200, "nodes": ["a1"]},       # from its end: outside
            5: {"start": None, "end": None, "nodes": []},
            6: {"start": 100, "end": None, "nodes": ["a1"]}}      # still running
    assert jobs_inside(recs, ["a1", "a2"], 50, 170) == [2, 6]


# ---------------------------------------------------------------- the recorded maintenance case

def _window(run_dir):
    text, t0, t0_local = recorded_reservation(run_dir)
    path = Path(run_dir) / "reservation.check"
    try:
        path.write_text(text)
        return t0, dumped_window(path, local_origin(t0, t0_local))
    finally:
        path.unlink()


def test_no_slurm_job_ran_on_the_reserved_nodes_inside_the_window(tmp_path):
    # straight from the recording: jobcomp's nodes and times against Slurm's own dump of the reservation
    table, req = load_workload(WORKLOAD)
    jobs = scale_jobs(table, req, 1)[0]
    runs = sorted((REC / "slurm").iterdir())
    assert len(runs) == 3 and all(is_recording(r) for r in runs)
    for run_dir in runs:
        _t0, windows = _window(run_dir)
        assert [(w["name"], w["nodes"], w["start_s"], w["end_s"]) for w in windows] == [
            ("maint", ["a1", "a2"], 50, 170)]
        assert "MAINT" in windows[0]["flags"]
        run = read_run(run_dir, jobs)
        assert all(r["start"] is not None for r in run.jobs.values())
        assert jobs_inside(run.jobs, ["a1", "a2"], 50, 170) == []
        # the window shaped the run: with 1-2 minute limits no job fits on a[1-2] before it (its first 50 s),
        # so a[1-2] stay idle until its end while b1 and g1 run jobs inside it
        on_a = [r for r in run.jobs.values() if {"a1", "a2"} & set(r["nodes"])]
        assert on_a and all(r["start"] >= 170 for r in on_a)
        assert jobs_inside(run.jobs, ["b1", "g1"], 50, 170)


def test_the_recorded_maintenance_runs_are_compared_again(tmp_path, capsys):
    from pbf.cli import main
    out = tmp_path / "resv4-again"
    assert main(["validate", "slurm", str(CONF), str(WORKLOAD), "--slurm-runs", str(REC), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "3 run(s)" in text and "reservation  maint on a1,a2 from +50 s to +170 s of the run (recorded dump)" in text
    s = json.loads((out / "summary.json").read_text())
    assert s["repeat"] == 3 and s["slurm_version"] == "slurm-wlm 22.05.8" and s["pbf_vs_slurm"]["jobs"] == 45
    r = s["reservation"]
    assert r["pbf_read_from"] == "recorded dump" and r["spec"] is None
    assert [(w["nodes"], w["start_s"], w["end_s"]) for w in r["windows_run_clock"]] == [(["a1", "a2"], 50, 170)]
    assert all([(w["start_s"], w["end_s"]) for w in d] == [(50, 170)] for d in r["slurm_dumps_run_clock"])
    # neither side ran a job on the reserved nodes inside the window
    assert r["jobs_inside"] == {"pbf": [], "slurm": [[], [], []]}
    # pbf's own start of each job against the window, from its replay's records
    pbf_jobs = {int(row["job_id"]): row for row in _rows(out / "comparison.csv")}
    for row in pbf_jobs.values():
        if {"a1", "a2"} & set(row["pbf_nodes"].split()):
            assert int(row["pbf_end"]) <= 50 or int(row["pbf_start"]) >= 170
    # the same comparison from the spec itself
    again = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "spec", verbose=False, reservation=SPEC)
    assert again["reservation"]["pbf_read_from"] == "spec"
    assert again["pbf_vs_slurm"] == s["pbf_vs_slurm"] and again["awt_s"]["pbf"] == s["awt_s"]["pbf"]


def _rows(path):
    import csv
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# ---------------------------------------------------------------- (b) with a real Slurm

def test_real_slurm_keeps_jobs_off_a_reservation(tmp_path):
    slurm_or_skip()
    head = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State|User|Partition\n"
    rows = [(1, 0, 5, 8), (2, 0, 5, 8), (3, 1, 4, 2), (4, 2, 4, 8), (5, 3, 3, 4)]
    work = tmp_path / "jobs.sacct"
    # (the 8-core jobs on one node: only a1 and a2 have 8 cores)
    work.write_text(head + "".join(f"{i}|2024-01-01T00:00:{s:02d}|2024-01-01T00:00:{s:02d}|{run}|1|{cores}|"
                                   f"{1 if cores == 8 else ''}|1000Mc|COMPLETED|u1|batch\n"
                                   for i, s, run, cores in rows))
    s = cmp.validate_slurm(CONF, work, out=tmp_path / "out", verbose=False,
                           reservation="Nodes=a[1-2] StartTime=+6 Duration=20 Name=m1")
    run = s["runs"][0]
    assert not run["errors"] and run["finished"]
    r = s["reservation"]
    assert r["slurm_dumps_run_clock"][0][0]["start_s"] == 6 and r["slurm_dumps_run_clock"][0][0]["end_s"] == 26
    assert "MAINT" in r["slurm_dumps_run_clock"][0][0]["flags"]
    assert r["jobs_inside"] == {"pbf": [], "slurm": [[]]}
    assert (tmp_path / "out" / "slurm" / "run1" / "reservation.txt").read_text().startswith("ReservationName=m1 ")
    # the one-node 8-core jobs (their 1-minute limits run into the window) wait for its end
    rows_out = {int(x["job_id"]): x for x in _rows(tmp_path / "out" / "comparison.csv")}
    for i in (1, 2, 4):
        assert float(rows_out[i]["slurm_start"]) >= 26 and float(rows_out[i]["pbf_start"]) >= 26
