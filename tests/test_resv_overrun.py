"""A job inside a reservation still running at its end (Slurm 22.05's ResvOverRun): slurmctld's time-limit
check (job_time_limit, every 30 s) ends it once the reservation's end plus ResvOverRun is past, state TIMEOUT.
The compiled core (ext/advance_resv.pxd ar_kill_at, from pbf.slurm_reservations.end_checks) held to the oracle
(pbf.reference.resv_ref.ended_at in the node oracles) on random scenarios, worked examples of each rule (the
check's phase, ResvOverRun, UNLIMITED, FLEX, a repeating reservation), and ResvOverRun read from a slurm.conf
and carried into the harness's private configuration."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_resv_inside import inside_scenarios
from test_resv_inside_core import _config, _dump, _stamp, _table

import pbf
from pbf.cluster import Node
from pbf.codes import RejectReason
from pbf.errors import ConfigError
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.resv_ref import ended_at
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.slurm_reservations import YEAR_SECONDS, SiteReservations, end_checks, over_run_seconds

from scheduling import replay_checked

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
OVER = RejectReason.RJ_RESV_OVER


def _ended(got):
    return np.flatnonzero(got.jobs["reject_reason"] == OVER).tolist()


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(case=inside_scenarios(), over=st.sampled_from([0, 1, 29, 30, 60, 95]))
def test_jobs_running_past_their_reservation_follow_the_oracle(search, case, over, tmp_path):
    nodes, jobs, reservations, first_fit, resolution, window, windows = case
    if search == "exact":
        resolution = window = 0
    dump = tmp_path / "resv.txt"
    _dump(dump, windows, [n.name for n in nodes])
    config = replace(_config(nodes, dump, search, reservations, resolution, window, first_fit), resv_over_run=over)
    got = replay_checked(_table(jobs), config)
    ref = [dict(submit=j["submit"], run=j["run"], est=j["est"], resv=j.get("resv"),
                req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
           for j in jobs]
    if search == "slurm":
        want = slurm_node_replay(nodes, ref, reservations, window=window, resolution=resolution, first_fit=first_fit,
                                 windows=windows, over_run=over)
    else:
        want = node_replay(nodes, ref, reservations, first_fit, windows=windows, over_run=over)
    assert got.jobs["start"].tolist() == want["start"]
    assert got.jobs["end"].tolist() == want["end"]
    assert _ended(got) == want["timeout"]
    for j in want["timeout"]:              # (ran until then: its run is the cut one)
        assert got.jobs["run"][j] == want["end"][j] - want["start"][j] < ref[j]["run"]


@settings(max_examples=300, deadline=None)
@given(first=st.integers(-100, 3000), over=st.sampled_from([0, 1, 30, 31, 60, 3600]),
       flags=st.sampled_from([(), ("DAILY",), ("HOURLY",), ("FLEX",), ("MAINT",)]),
       spans=st.lists(st.tuples(st.integers(0, 2000), st.integers(1, 400)), min_size=1, max_size=4),
       at=st.integers(0, 9))
def test_the_kill_times_given_the_core_are_the_oracles(first, over, flags, spans, at):
    # one reservation's windows, in start order, apart; a job starting in any of them
    windows, t = [], 0
    for gap, length in spans:
        windows.append((t + gap, t + gap + length, [0], "R"))
        t += gap + length
    kills = end_checks([w[0] for w in windows], [w[1] for w in windows], ["R"] * len(windows), {"R": flags},
                       over, first)
    k = at % len(windows)
    got = ended_at(windows, "R", windows[k][0], over, first, flags)
    assert kills[k] == (-1 if got is None else got)
    if got is not None:
        assert got > windows[k][1] + (0 if flags else over) and (got - first) % 30 == 0


def _one_node_case(tmp_path, flags="IGNORE_JOBS", over=0, clock=None, phase=0.0, check_at=None):
    # n0 and n1, 4 cores each; R holds n1 from 100 to 200 (Flags as given); job 1 (outside) runs on n0 from 0,
    # job 2 (inside R, submitted at 5, 2 cores) starts at 100 and would run 300 s; job 3 (inside, 1 core) starts
    # then too and ends at 140, inside the window
    nodes = [Node("n0", 4, 4000), Node("n1", 4, 4000)]
    rows = [(0, 4, 1000, 1000, None), (5, 2, 300, 400, "R"), (6, 1, 40, 60, "R")]
    jobs = [dict(submit=s, est=est, run=run, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=(), resv=r)
            for s, c, run, est, r in rows]
    dump = tmp_path / "resv.txt"
    dump.write_text(f"ReservationName=R StartTime={_stamp(100)} EndTime={_stamp(200)} Duration=1\n"
                    f"   Nodes=n1 NodeCnt=1 Flags={flags}\n")
    config = replace(_config(nodes, dump, "exact", 1, 0, 0, False), resv_over_run=over, resv_check_at=check_at)
    if clock is not None:
        config = replace(config, clock=clock, trigger="interval", bf_interval=10,
                         slurm_sim=replace(config.slurm_sim, timer_phase=phase))
    return replay_checked(_table(jobs), config)


@pytest.mark.parametrize("flags, over, end", [
    ("IGNORE_JOBS", 0, 210),           # checks at 0, 30, ... 210: the first after 200 (200 + 0 < 210)
    ("IGNORE_JOBS", 9, 210),           # 200 + 9 < 210
    ("IGNORE_JOBS", 10, 240),          # 200 + 10 is not before 210: the next check
    ("IGNORE_JOBS", 60, 270),          # ResvOverRun=1
    ("MAINT,IGNORE_JOBS", 0, 210),     # MAINT changes nothing here
    ("FLEX", 0, 400),                  # a FLEX reservation's jobs run to their own end
    ("IGNORE_JOBS", YEAR_SECONDS, 400),  # UNLIMITED
])
def test_a_job_inside_a_reservation_is_ended_at_the_check_after_its_end(tmp_path, flags, over, end):
    got = _one_node_case(tmp_path, flags, over)
    assert got.jobs["start"].tolist()[1:] == [100, 100]
    assert got.jobs["end"].tolist()[1:] == [end, 140]
    assert _ended(got) == ([1] if end < 400 else [])
    labels = got.label("reject_reason", got.jobs["reject_reason"]).tolist()
    assert labels[1] == ("ended at its reservation's end (TIMEOUT)" if end < 400 else "")
    assert got.label("state", got.jobs["state"]).tolist()[1] == "completed"
    assert got.summary["jobs"]["ended_by_reservation"] == (1 if end < 400 else 0)
    assert got.jobs["run"][1] == end - 100


@pytest.mark.parametrize("phase, end", [(0.0, 210), (7.0, 217), (12.5, 222), (29.0, 209)])
def test_the_checks_follow_the_slurm_sim_clocks_timer_phase(tmp_path, phase, end):
    # the slurm-sim clock's timers start at the first submission plus --timer-phase: so do the checks
    got = _one_node_case(tmp_path, clock="slurm-sim", phase=phase)
    assert got.jobs["start"].tolist()[1] == 100 and got.jobs["end"].tolist()[1] == end


@pytest.mark.parametrize("clock", [None, "slurm-sim"])
@pytest.mark.parametrize("check_at, end", [(26, 206), (-4, 206), (500, 230), (200, 230), (201, 201)])
def test_the_checks_at_a_given_time(tmp_path, clock, check_at, end):
    # resv_check_at (pbf validate slurm reads it from slurmctld's log): the checks at that time + 30 k, whatever
    # the clock and its phase
    got = _one_node_case(tmp_path, clock=clock, phase=7.0, check_at=check_at)
    assert got.jobs["end"].tolist()[1] == end


def test_a_repeating_reservation_moves_on_before_a_later_check(tmp_path):
    # HOURLY R from 100 to 200: with ResvOverRun=1 the check at 210 finds 200 + 60 not past, and
    # job_resv_check moves R to 3700 .. 3800 at once: job 2 (300 s) ends by itself at 400
    got = _one_node_case(tmp_path, "HOURLY", 60)
    assert got.jobs["end"].tolist()[1] == 400 and _ended(got) == []
    got = _one_node_case(tmp_path, "HOURLY", 0)
    assert got.jobs["end"].tolist()[1] == 210 and _ended(got) == [1]


def test_resv_over_run_from_a_slurm_conf(tmp_path):
    from pbf.slurm_settings import slurm_settings
    assert [over_run_seconds(v) for v in ("0", "1", " 15 ", "UNLIMITED", "infinite", "65535")] == [
        0, 60, 900, YEAR_SECONDS, YEAR_SECONDS, YEAR_SECONDS]
    for bad in ("-1", "1.5", "65536", "soon", ""):
        with pytest.raises(ValueError):
            over_run_seconds(bad)
    s = slurm_settings(str(DATA / "small4_resvover1.conf"), None)
    assert s.config.resv_over_run == 60 and s.mapped["ResvOverRun"].startswith("1 -> resv_over_run 60 s")
    assert not any("resvoverrun" in u.lower() for u in s.unmodelled)
    s = slurm_settings(str(DATA / "small4.conf"), None)
    assert s.config.resv_over_run == 0 and s.mapped["ResvOverRun"].endswith("(Slurm default)")
    bad = tmp_path / "bad.conf"
    text = (DATA / "small4.conf").read_text()
    bad.write_text(text + "ResvOverRun=soon\n")
    line = len(text.splitlines()) + 1
    with pytest.raises(ConfigError, match=rf"bad.conf, line {line}: ResvOverRun='soon': expected whole minutes "
                                          r"from 0 to 65535 or UNLIMITED"):
        slurm_settings(str(bad), None)
    with pytest.raises(ConfigError, match="resv_over_run must be an int from 0 to 31,536,000"):
        pbf.ReplayConfig(resv_over_run=-1)


def test_the_harness_gives_slurm_the_sites_resv_over_run(tmp_path):
    from pbf.validate.slurm_config import write_private_conf
    private = write_private_conf(DATA / "small4_resvover1.conf", tmp_path, "batch")
    text = Path(private.path).read_text()
    assert "resvoverrun=1" in text.lower()
    assert not any("resvoverrun" in x.lower() for x in private.not_carried)


def test_flags_by_name(tmp_path):
    dump = tmp_path / "resv.txt"
    dump.write_text(f"ReservationName=R StartTime={_stamp(100)} EndTime={_stamp(200)} Duration=1\n"
                    "   Nodes=n1 NodeCnt=1 Flags=FLEX,DAILY\n")
    assert SiteReservations(str(dump)).flags() == {"R": ("FLEX", "DAILY")}


def test_the_cli_ends_a_job_at_its_reservations_end_plus_resv_over_run(tmp_path):
    # n1 reserved 00:10-01:00 for "proj", ResvOverRun=1: job 2 (inside, 60 min of a 70-minute limit) starts at
    # 00:10 and is ended at the first check (every 30 s from the first submission) after 01:01, 01:01:30
    import json
    import subprocess
    import sys
    conf = tmp_path / "slurm.conf"
    conf.write_text("SelectType=select/cons_tres\nNodeName=n[0-1] CPUs=4 RealMemory=8000\n"
                    "PartitionName=p Nodes=n[0-1] Default=YES MaxTime=UNLIMITED\nResvOverRun=1\n")
    sacct = tmp_path / "jobs.sacct"
    sacct.write_text("JobID|User|Partition|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State|"
                     "Reservation\n"
                     "1|u|p|2023-01-01T00:00:00|2023-01-01T00:00:00|600|60|4|1|1000M|COMPLETED|\n"
                     "2|u|p|2023-01-01T00:00:10|2023-01-01T00:10:00|3600|70|4|1|1000M|COMPLETED|proj\n")
    resv = tmp_path / "resv.txt"
    resv.write_text("ReservationName=proj StartTime=2023-01-01T00:10:00 EndTime=2023-01-01T01:00:00 "
                    "Nodes=n1 Flags=IGNORE_JOBS\n")
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "pbf", "replay", str(sacct), "--slurm-conf", str(conf),
                    "--slurm-reservations", str(resv), "--quiet", "--out", str(out)],
                   check=True, capture_output=True, text=True)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["resv_over_run"] == 60 and summary["jobs"]["ended_by_reservation"] == 1
    rows = [r.split(",") for r in (out / "jobs.csv").read_text().splitlines()]
    head = rows[0]
    job2 = dict(zip(head, rows[2]))
    assert int(float(job2["start"])) == 600 and int(float(job2["end"])) == 3690 and int(float(job2["run"])) == 3090
    assert job2["state"] == "completed" and job2["reject_reason"] == "ended at its reservation's end (TIMEOUT)"
