"""The real-Slurm harness with a drained node (pbf validate slurm --drain; docs/slurm-harness.md, "A drained
node").

(a) Without Slurm: the drain spec and its errors, the timed scontrol commands, the events dump pbf's side
reads, and the recorded runs of the drain case (tests/data/slurm_harness/recorded_drain: three real Slurm
22.05.8 runs of drain4_jobs.sacct on small4.conf, a2 drained from +40 s to +160 s) compared again with a new
pbf replay reading the runs' own ``sacctmgr show events``. (b) With Slurm (skipped, saying why, where it
cannot run): a few jobs around a short drain.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbf.errors import ConfigError
from pbf.slurm_events import read_events
from pbf.validate import compare as cmp
from pbf.validate.drain import (
    drain_actions,
    parse_drain,
    pbf_drain,
    recorded_actions,
    recorded_events,
    started_inside,
)
from pbf.validate.jobs import load_workload, scale_jobs
from pbf.validate.reservation import local_origin
from pbf.validate.slurm_run import SlurmUnavailable, check_requirements, is_recording, read_run

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
CONF = DATA / "small4.conf"
WORKLOAD = DATA / "drain4_jobs.sacct"
REC = DATA / "recorded_drain"
NODES = ("a1", "a2", "b1", "g1")
SPEC = "Nodes=a2 StartTime=+40 Duration=120 State=DRAIN Reason=maint"


def test_a_spec_is_read_in_scontrols_words():
    s = parse_drain(SPEC, NODES)
    assert (s.nodes, s.start, s.end, s.reason) == (("a2",), 40, 160, "maint")
    t = parse_drain("nodes=a[1-2] starttime=+0 endtime=+30", NODES)
    assert (t.nodes, t.start, t.end, t.reason) == (("a1", "a2"), 0, 30, "maint")
    assert s.on_run_clock(2.0) == (20, 80)
    assert s.as_dict() == {"nodes": ["a2"], "start_s": 40, "end_s": 160, "state": "DRAIN", "reason": "maint"}


@pytest.mark.parametrize("text, match", [
    ("", r"expected 'Nodes=LIST StartTime=\+SECONDS Duration=SECONDS"),
    ("Nodes=x1 StartTime=+5 Duration=5", r"Nodes='x1': expected nodes of the site's slurm.conf .*not there: x1"),
    ("Nodes=a1 StartTime=5 Duration=5", r"StartTime='5': expected \+SECONDS from the workload's time 0"),
    ("Nodes=a1 StartTime=+5", r"expected one of Duration=SECONDS and EndTime=\+SECONDS"),
    ("Nodes=a1 StartTime=+5 Duration=0", r"Duration='0': expected SECONDS, a whole number from 1"),
    ("Nodes=a1 StartTime=+9 EndTime=+5", r"EndTime='\+5': expected a time after StartTime \(\+9\)"),
    ("Nodes=a1 StartTime=+5 Duration=5 State=DOWN", r"State='DOWN': expected DRAIN"),
    ("Nodes=a1 StartTime=+5 Duration=5 Reason=a;b", r"Reason='a;b': expected letters, digits"),
    ("Nodes=a1 Start=+5 Duration=5", r"'Start=\+5': expected KEY=VALUE with KEY one of Nodes"),
    ("Nodes=a1,a1 StartTime=+5 Duration=5", r"expected distinct node names"),
    ("Duration=5 StartTime=+5", r"no Nodes="),
])
def test_a_bad_spec_is_a_clear_error(text, match):
    with pytest.raises(ConfigError, match=match):
        parse_drain(text, NODES)


def test_a_bad_spec_stops_the_harness_before_anything_is_written(tmp_path):
    with pytest.raises(ConfigError, match="not there: c9"):
        cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "out", verbose=False,
                           drain="Nodes=c9 StartTime=+5 Duration=5")
    assert not (tmp_path / "out").exists()


def test_the_drain_is_two_timed_scontrol_commands():
    acts = drain_actions(parse_drain(SPEC, NODES), 2.0)
    assert [(a["at"], a["args"]) for a in acts] == [
        (20, ["scontrol", "update", "NodeName=a2", "State=DRAIN", "Reason=maint"]),
        (80, ["scontrol", "update", "NodeName=a2", "State=RESUME"])]
    assert drain_actions(None, 1.0) == []


def test_pbfs_side_reads_the_spec_as_an_events_dump(tmp_path):
    spec = parse_drain(SPEC, NODES)
    events, source = pbf_drain(spec, None, str(tmp_path), NODES, 1.0)
    assert source == "spec"
    got, counts = read_events(events.path, events.origin, list(NODES), set(NODES))
    assert got == [(40, (1,), "drain", 160)] and counts["outages"] == 1
    assert pbf_drain(None, None, str(tmp_path), NODES, 1.0) == (None, None)


def test_jobs_started_on_a_drained_node():
    recs = {1: {"start": 10, "nodes": ["a2"]},            # before: it finishes there
            2: {"start": 40, "nodes": ["a1", "a2"]},      # at the drain: inside
            3: {"start": 60, "nodes": ["b1"]},            # other nodes
            4: {"start": 160, "nodes": ["a2"]},           # at the resume: outside
            5: {"start": None, "nodes": []}}
    assert started_inside(recs, ["a2"], 40, 160) == [2]


# ---------------------------------------------------------------- the recorded drain case

def _runs():
    table, req = load_workload(WORKLOAD)
    jobs = scale_jobs(table, req, 1)[0]
    return jobs, sorted((REC / "slurm").iterdir())


def test_each_recorded_run_drained_a2_and_started_no_job_there_while_drained(tmp_path):
    jobs, runs = _runs()
    assert len(runs) == 6 and all(is_recording(r) for r in runs)
    for run_dir in runs:
        text, t0, t0_local = recorded_events(run_dir)
        path = tmp_path / "events.txt"
        path.write_text(text)
        events, _ = read_events(path, local_origin(t0, t0_local), list(NODES), set(NODES))
        drains = [e for e in events if e[2] == "drain"]
        assert len(drains) == 1 and drains[0][1] == (1,)
        # the dump's drain begins when a2's last job ended (slurmctld records the event then), after the
        # scontrol command at +40 s; it ends at the resume (within a second: the dump's stamps are whole
        # seconds of the host's clock, the run's origin a fraction into one)
        start, end = drains[0][0], drains[0][3]
        assert 40 <= start < 100 and end in (159, 160, 161)
        acts = recorded_actions(run_dir)
        assert [(a["what"], round(a["at"])) for a in acts] == [("drain a2", 40), ("resume a2", 160)]
        run = read_run(run_dir, jobs)
        assert all(r["start"] is not None for r in run.jobs.values())
        assert started_inside(run.jobs, ["a2"], 40, 160) == []
        # a2 ran jobs up to the drain, none started there between the command and the dump's start, and
        # a job ran there when the dump says it became drained
        on_a2 = [(r["start"], r["end"]) for r in run.jobs.values() if "a2" in r["nodes"]]
        assert min(s for s, _ in on_a2) < 40 and max(s for s, _ in on_a2) >= 160
        assert max(e for s, e in on_a2 if s < 40) in (start - 1, start)


def test_the_recorded_drain_runs_are_compared_again(tmp_path, capsys):
    from pbf.cli import main
    out = tmp_path / "drain-again"
    assert main(["validate", "slurm", str(CONF), str(WORKLOAD), "--slurm-runs", str(REC), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    # run 1's dump drains a2 from when its last job ended (+52 s); run 1's jobs say its last start there
    # before that was at +39 s (job 13, which ended at +52 s): pbf drains it from +40 s, when it was asked
    assert "6 run(s)" in text and "drain        a2 drain from +40 s to +160 s of the run" in text
    assert ("a2: moved 12 s earlier than the dump's +52 s, to the second after its last job start (+39 s, "
            "Slurm run 1; --drain-start recorded keeps the dump's time)") in text
    assert "asked of Slurm run 1: from +40 s to +160 s (scontrol)" in text
    s = json.loads((out / "summary.json").read_text())
    assert s["repeat"] == 6 and s["slurm_version"] == "slurm-wlm 22.05.8" and s["pbf_vs_slurm"]["jobs"] == 48
    d = s["drain"]
    assert d["pbf_read_from"] == "the run's sacctmgr show events" and d["spec"] is None
    assert [(w["nodes"], w["kind"], w["start_s"], w["end_s"]) for w in d["windows_run_clock"]] == [
        (["a2"], "drain", 40, 160)]
    assert d["drain_start"] == "inferred" and d["drains_moved"] == [
        {"node": "a2", "recorded_s": 52, "inferred_s": 40, "by_s": 12, "last_start_s": 39}]
    assert [(a["start_s"], a["end_s"]) for a in d["asked_run_clock"]] == [(40, 160)] * 6
    # the runs' own timing: jobs under 67, 75, 84, 38, 45 and 39 s ended after the cycle of their last second
    # (the three later runs' cycles drifted more)
    assert s["pbf_end_lag_below"] == {"s": 45, "from": "runs", "runs_s": [67, 75, 84, 38, 45, 39]}
    assert s["pbf_config"]["slurm_sim"]["end_lag_below"] == 45
    assert ("end lag      pbf: ends of jobs under 45 s seen a second late: --end-lag-below 45 (the median of the "
            "runs' own timing: 67 s, 75 s, 84 s, 38 s, 45 s, 39 s; --end-lag-below S to choose)") in text
    assert d["pbf_started_inside_asked"] == []          # moved to the drain as asked: none inside it
    # neither side started a job on a2 while it was drained (each in the drain it knew of)
    assert d["started_inside"] == {"pbf": [], "slurm": [[]] * 6}
    # with the dump's own time (--drain-start recorded) pbf starts jobs on a2 from +40 s to +52 s
    main(["validate", "slurm", str(CONF), str(WORKLOAD), "--slurm-runs", str(REC), "--out", str(tmp_path / "rec"),
          "--drain-start", "recorded", "--quiet"])
    assert "drain        a2 drain from +52 s to +160 s of the run" in capsys.readouterr().out
    rec = json.loads((tmp_path / "rec" / "summary.json").read_text())["drain"]
    assert rec["drain_start"] == "recorded" and rec["drains_moved"] == [] and rec["pbf_started_inside_asked"]
    # from the spec pbf's drain is the one asked: no job starts on a2 from +40 s to +160 s
    spec = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "spec", verbose=False, drain=SPEC)
    assert spec["drain"]["pbf_read_from"] == "spec" and spec["drain"]["pbf_started_inside_asked"] == []
    # without the drain (a what-if) pbf starts jobs on a2 inside the window
    what_if = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "none", verbose=False, drain="none")
    assert "drain" not in what_if
    rows = _rows(tmp_path / "none" / "comparison.csv")
    w = d["windows_run_clock"][0]
    assert any("a2" in r["pbf_nodes"].split() and w["start_s"] <= int(r["pbf_start"]) < w["end_s"] for r in rows)


def _rows(path):
    import csv
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


# ---------------------------------------------------------------- (b) with a real Slurm

def test_real_slurm_drains_and_resumes_a_node(tmp_path):
    try:
        check_requirements(accounting=True)
    except SlurmUnavailable as exc:
        pytest.skip(f"no real Slurm with slurmdbd here: {exc}")
    head = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State|User|Partition\n"
    rows = [(1, 0, 4, 8), (2, 1, 4, 8), (3, 2, 4, 8), (4, 3, 4, 8)]
    work = tmp_path / "jobs.sacct"
    work.write_text(head + "".join(f"{i}|2024-01-01T00:00:{s:02d}|2024-01-01T00:00:{s:02d}|{run}|1|{cores}|1|"
                                   f"1000Mc|COMPLETED|u1|batch\n" for i, s, run, cores in rows))
    s = cmp.validate_slurm(CONF, work, out=tmp_path / "out", verbose=False,
                           drain="Nodes=a1 StartTime=+2 Duration=20")
    run = s["runs"][0]
    assert not run["errors"] and run["finished"]
    d = s["drain"]
    assert d["pbf_read_from"] == "the run's sacctmgr show events"
    assert [(w["nodes"], w["kind"]) for w in d["slurm_dumps_run_clock"][0]] == [(["a1"], "drain")]
    assert d["started_inside"]["slurm"] == [[]] and d["started_inside"]["pbf"] == []
    result = json.loads((tmp_path / "out" / "slurm" / "run1" / "result.json").read_text())
    assert [a["what"] for a in result["actions"]] == ["drain a1", "resume a1"]


def test_a_live_run_is_compared_with_its_own_timing_and_moved_drain(tmp_path, monkeypatch):
    # the live path without Slurm: each "run" hands back a recorded run (its folder kept as run K), and pbf's
    # side is replayed again with that run's dump, its jobs as the trace and the runs' own timing
    import shutil
    recorded = [read_run(REC / "slurm" / f"run{k}", scale_jobs(*load_workload(WORKLOAD), 1.0)[0]) for k in (1, 2, 3)]
    calls = []

    def fake_run(private, jobs, *, keep=None, **kw):
        run = recorded[len(calls)]
        calls.append(kw.get("actions"))
        shutil.copytree(REC / "slurm" / f"run{len(calls)}", keep)
        return run
    monkeypatch.setattr(cmp, "check_requirements", lambda accounting=False: {})
    monkeypatch.setattr(cmp, "run_slurm", fake_run)
    s = cmp.validate_slurm(CONF, WORKLOAD, out=tmp_path / "live", verbose=False, drain=SPEC, repeat=3)
    assert [a["what"] for a in calls[0]] == ["drain a2", "resume a2"]
    assert s["pbf_end_lag_below"] == {"s": 75, "from": "runs", "runs_s": [67, 75, 84]}
    assert s["pbf_config"]["slurm_sim"]["end_lag_below"] == 75
    d = s["drain"]
    assert d["pbf_read_from"] == "the run's sacctmgr show events" and d["drains_moved"][0]["inferred_s"] == 40
    # (the recording holds six runs; these three's threshold given, the replay is the same)
    again = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "again", verbose=False,
                               end_lag_below=75)
    assert s["pbf_vs_slurm"] == again["pbf_vs_slurm"] and s["awt_s"]["pbf"] == again["awt_s"]["pbf"]
