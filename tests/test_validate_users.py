"""The real-Slurm harness submitting each job as its trace user (pbf validate slurm --as-users;
docs/slurm-harness.md, "Per-user QOS limits").

(a) Without Slurm: the throwaway users' names, the association dump pbf's side reads (user pbfu<N> read as
trace user N), a run kept with only the jobcomp keys the comparison reads, and, when the repository has them,
the recorded runs of the qosu4 case (tests/data/slurm_harness/recorded_qosu: QOS normal with MaxJobsPU and
MaxTRESPU, four users) compared again with a new pbf replay. (b) With Slurm and slurmdbd (skipped, saying
why, where they cannot run): a few jobs of two users under MaxJobsPU=1, each job run as its user, and the
host's /etc/passwd untouched.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbf.validate import compare as cmp
from pbf.validate.jobs import HarnessJob, load_workload, scale_jobs
from pbf.validate.limits import pbf_dumps, read_limits_case
from pbf.validate.records import read_jobcomp
from pbf.validate.slurm_run import SlurmUnavailable, check_requirements, compact_run, is_recording, read_run

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
CONF = DATA / "small4.conf"
WORKLOAD = DATA / "qosu4_jobs.sacct"
LIMITS = DATA / "qosu4.limits"
REC = DATA / "recorded_qosu"

DUMP = """Cluster - 'pbfvalidate':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'a1':Description='a1':Organization='a1':Fairshare=1
Account - 'a2':Description='a2':Organization='a2':Fairshare=1
Parent - 'a1'
User - 'pbfu1':DefaultAccount='a1':Fairshare=1
Parent - 'a2'
User - 'pbfu2':DefaultAccount='a2':Fairshare=1:MaxJobs=4
"""
JOBCOMP = ("JobId=1 UserId=pbfu1(61000) GroupId=pbfu1(61000) Name=pbf1 JobState=COMPLETED Partition=batch "
           "TimeLimit=1 StartTime=2026-11-28T17:22:44 EndTime=2026-11-28T17:23:04 NodeList=b1 NodeCnt=1 ProcCnt=4 "
           "WorkDir=/tmp/pbf-slurm-x/work ReservationName= Tres=cpu=4,mem=4000M,node=1,billing=4 Account=a1 "
           "QOS=normal WcKey= Cluster=pbfvalidate SubmitTime=2026-11-28T17:22:44 EligibleTime=2026-11-28T17:22:44 "
           "DerivedExitCode=0:0 ExitCode=0:0\n")


def test_each_trace_user_has_a_unix_user_of_its_own():
    assert HarnessJob(id=1, submit=0, run=5, limit_min=1, cores=1, user=3).unix_user == "pbfu3"
    assert HarnessJob(id=1, submit=0, run=5, limit_min=1, cores=1, user=-1).unix_user == "pbfunone"
    table, req = load_workload(WORKLOAD)
    jobs = scale_jobs(table, req, 1.0)[0]
    assert sorted({j.unix_user for j in jobs}) == ["pbfu1", "pbfu2", "pbfu3", "pbfu4"]
    assert {(j.unix_user, j.account) for j in jobs} == {(f"pbfu{n}", f"a{n}") for n in range(1, 5)}
    assert read_limits_case(LIMITS).setup == (("modify", "qos", "normal", "set", "MaxJobsPU=3", "MaxTRESPU=cpu=8"),)


def test_pbfs_dump_names_the_trace_user_behind_each_unix_user(tmp_path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "assoc.cfg").write_text(DUMP)
    (run / "qos.txt").write_text("Name|MaxTRESPU|MaxJobsPU\nnormal|cpu=8|3\n")
    out = tmp_path / "out"
    out.mkdir()
    _, assoc = pbf_dumps(run, str(out))
    text = Path(assoc).read_text()
    assert "User - '1':DefaultAccount='a1':Fairshare=1" in text
    assert "User - '2':DefaultAccount='a2':Fairshare=1:MaxJobs=4" in text
    assert "pbfu" not in text and "User - 'root':DefaultAccount='root'" in text


def test_a_large_run_is_kept_with_the_jobcomp_keys_the_comparison_reads(tmp_path):
    full = tmp_path / "run1"
    (full / "log").mkdir(parents=True)
    (full / "result.json").write_text(json.dumps({"t0": 1, "version": "slurm-wlm 22.05.8", "submitted": {}}))
    (full / "jobcomp.txt").write_text(JOBCOMP)
    (full / "log" / "slurmctld.log").write_text("")
    compact_run(full, tmp_path / "kept", read_only=True)
    kept = (tmp_path / "kept" / "jobcomp.txt").read_text()
    assert is_recording(tmp_path / "kept") and "WorkDir" not in kept and "Tres=" not in kept
    assert len(kept) < len(JOBCOMP) / 2
    assert read_jobcomp(tmp_path / "kept" / "jobcomp.txt") == read_jobcomp(full / "jobcomp.txt")


# ---------------------------------------------------------------- the recorded qosu4 case

def test_the_recorded_per_user_limits_runs_are_compared_again(tmp_path, capsys):
    if not (REC / "slurm" / "run1").is_dir():
        pytest.skip(f"{REC} is not in this checkout")
    from pbf.cli import main
    out = tmp_path / "qosu-again"
    assert main(["validate", "slurm", str(CONF), str(WORKLOAD), "--slurm-runs", str(REC), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "limits       QOSMaxCpuPerUserLimit: jobs held, Slurm " in text
    s = json.loads((out / "summary.json").read_text())
    assert s["repeat"] == 6 and s["slurm_version"] == "slurm-wlm 22.05.8" and s["pbf_vs_slurm"]["jobs"] == 48
    table, req = load_workload(WORKLOAD)
    jobs = scale_jobs(table, req, 1.0)[0]
    # every job ran as its trace user's own Unix user
    user = {j.id: j.unix_user for j in jobs}
    for k in range(1, 7):
        run = read_run(REC / "slurm" / f"run{k}", jobs)
        by_slurm = {r["slurm_id"]: i for i, r in run.jobs.items()}
        names = {by_slurm[int(line.split()[0][6:])]: line.split()[1][7:].split("(")[0]
                 for line in (REC / "slurm" / f"run{k}" / "jobcomp.txt").read_text().splitlines()}
        assert names == user
    by = s["limits"]["by_reason"]
    assert set(by) >= {"QOSMaxCpuPerUserLimit", "QOSMaxJobsPerUserLimit"}
    assert s["limits"]["pbf_assoc_limits"]["jobs_of_unknown_associations"] == 0
    q = s["limits"]["pbf_qos_limits"]["limits"]["normal"]
    assert q["max_jobs_pu"] == 3 and q["max_cpus_pu"] == 8
    # squeue's jobs held by each per-user limit in the six runs (at some poll, and as their last limit)
    assert {r: v["slurm"] for r, v in by.items()} == {"QOSMaxCpuPerUserLimit": [29] * 6,
                                                       "QOSMaxJobsPerUserLimit": [31] * 6}
    assert {r: v["slurm_last"] for r, v in by.items()} == {"QOSMaxCpuPerUserLimit": [24] * 5 + [23],
                                                            "QOSMaxJobsPerUserLimit": [11] * 5 + [12]}
    # pbf names the limit that last held a job: within 10 % of Slurm's last reasons for each limit
    assert all(abs(v["relative_difference_last"]) <= 0.1 for v in by.values())
    # the runs' own timing (slurmctld's launch and completion over the cycles' drift: the three later runs
    # launched faster); AWT within 5 % of the six runs' mean; per-job agreement with run 1 (97.9 %) at least
    # Slurm's own less 5 points (run 1 against the others: 100 %)
    assert s["pbf_end_lag_below"] == {"s": 44, "from": "runs", "runs_s": [68, 77, 94, 44, 32, 27]}
    awt = [s["awt_s"]["slurm"]] + [s["awt_s"][f"slurm_run{k}"] for k in range(2, 7)]
    assert abs(s["awt_s"]["pbf"] / (sum(awt) / 6) - 1) <= 0.05
    assert s["pbf_vs_slurm"]["within_share"] >= 0.95 and all(a["within_share"] == 1 for a in s["slurm_vs_slurm"])
    none = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "none", verbose=False, limits="none")
    assert "limits" not in none and none["pbf_vs_slurm"]["within_share"] < 0.5


# ---------------------------------------------------------------- (b) with a real Slurm and slurmdbd

def test_real_slurm_runs_each_job_as_its_user_under_a_per_user_limit(tmp_path):
    try:
        check_requirements(accounting=True, as_users=True)
    except SlurmUnavailable as exc:
        pytest.skip(f"no real Slurm with slurmdbd here: {exc}")
    head = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State|User|Partition\n"
    work = tmp_path / "jobs.sacct"
    work.write_text(head + "".join(f"{i}|2024-01-01T00:00:00|2024-01-01T00:00:00|6|1|1||1000Mc|COMPLETED|"
                                   f"u{1 + i % 2}|batch\n" for i in range(1, 7)))
    limits = tmp_path / "pu.limits"
    limits.write_text("modify qos normal set MaxJobsPU=1\n")
    passwd = Path("/etc/passwd").read_text()
    s = cmp.validate_slurm(CONF, work, out=tmp_path / "out", verbose=False, limits=str(limits), as_users=True)
    assert Path("/etc/passwd").read_text() == passwd               # the users lived in the run's namespace only
    run = s["runs"][0]
    assert not run["errors"] and run["finished"] and s["submitted_as"].startswith("each job's trace user")
    folder = tmp_path / "out" / "slurm" / "run1"
    users = {line.split()[1].split("(")[0] for line in (folder / "jobcomp.txt").read_text().splitlines()}
    assert users == {"UserId=pbfu1", "UserId=pbfu2"}
    by = s["limits"]["by_reason"]
    assert by["QOSMaxJobsPerUserLimit"]["slurm"][0] >= 2 and by["QOSMaxJobsPerUserLimit"]["pbf"] == 4
    assert "'pbfu1'" in (folder / "assoc.cfg").read_text()
