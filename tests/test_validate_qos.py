"""The real-Slurm harness with QOS and association limits (pbf validate slurm --limits; docs/slurm-harness.md,
"QOS and association limits").

(a) Without Slurm: the limits file and its errors, the dumps pbf's side reads (root in account a<N> read as
trace user N), the pending-reason comparison, and, when the repository has them, the recorded runs of the
qos4 case (tests/data/slurm_harness/recorded_qos) compared again with a new pbf replay reading the runs' own
``sacctmgr show qos`` and ``sacctmgr dump``. (b) With Slurm and slurmdbd (skipped, saying why, where they
cannot run): a few jobs held by an account's GrpJobs.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from pbf.errors import ConfigError
from pbf.replayer import replay
from pbf.slurm_settings import slurm_settings
from pbf.validate import compare as cmp
from pbf.validate.jobs import load_workload, pbf_table, scale_jobs
from pbf.validate.limits import QOS_NAME, limits_config, limits_summary, pbf_dumps, read_limits_case
from pbf.validate.slurm_run import SlurmUnavailable, check_requirements

DATA = Path(__file__).resolve().parent / "data" / "slurm_harness"
CONF = DATA / "small4.conf"
WORKLOAD = DATA / "qos4_jobs.sacct"
LIMITS = DATA / "qos4.limits"
REC = DATA / "recorded_qos"

DUMP = """# To edit this file start with a cluster line for the new cluster
Cluster - 'pbfvalidate':Fairshare=1:QOS='normal'
Parent - 'root'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Account - 'a1':Fairshare=1:GrpJobs=2
Account - 'a2':Fairshare=1
Account - 'a3':Fairshare=1
Parent - 'a1'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1
Parent - 'a2'
User - 'root':DefaultAccount='root':AdminLevel='Administrator':Fairshare=1:MaxJobs=2
Parent - 'a3'
User - 'root':AdminLevel='Administrator':Fairshare=1
"""
QOS = ("Name|Priority|GraceTime|Preempt|PreemptExemptTime|PreemptMode|Flags|UsageThres|UsageFactor|GrpTRES|"
       "GrpTRESMins|GrpTRESRunMins|GrpJobs|GrpSubmit|GrpWall|MaxTRES|MaxTRESPerNode|MaxTRESMins|MaxWall|MaxTRESPU|"
       "MaxJobsPU|MaxSubmitPU|MaxTRESPA|MaxJobsPA|MaxSubmitPA|MinTRES\n"
       "normal|0|00:00:00||cluster|cluster||||cpu=16||||||||||||||||\n")


def test_the_case_file_is_read_as_sacctmgr_commands():
    case = read_limits_case(LIMITS)
    assert case.setup == (("modify", "qos", "normal", "set", "GrpTRES=cpu=16"),
                          ("modify", "account", "a1", "set", "GrpJobs=2"),
                          ("modify", "user", "where", "name=root", "account=a2", "set", "MaxJobs=2"))
    assert case.as_dict()["sacctmgr"][0] == "modify qos normal set GrpTRES=cpu=16"


@pytest.mark.parametrize("text, match", [
    ("", "no sacctmgr command"),
    ("# only a comment\n", "no sacctmgr command"),
    ("delete account a1\n", r"line 1: 'delete account a1': expected 'add\|modify qos\|account\|user"),
    ("modify cluster x set GrpJobs=1\n", "line 1: .*expected 'add|modify"),
    ("modify qos normal set GrpJobs=$(reboot)\n", r"line 1: 'GrpJobs=\$\(reboot\)': expected letters"),
    ("modify qos\n", "expected 'add|modify"),
])
def test_a_bad_case_file_is_a_clear_error(tmp_path, text, match):
    path = tmp_path / "bad.limits"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        read_limits_case(path)
    with pytest.raises(ConfigError, match="cannot read it"):
        read_limits_case(tmp_path / "missing.limits")


def test_pbfs_dump_names_the_trace_user_root_stood_for(tmp_path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "assoc.cfg").write_text(DUMP)
    (run / "qos.txt").write_text(QOS)
    out = tmp_path / "out"
    out.mkdir()
    qos, assoc = pbf_dumps(run, str(out))
    text = Path(assoc).read_text()
    assert "User - '1':DefaultAccount='a1'" in text and "User - '2':DefaultAccount='a2'" in text
    assert ":MaxJobs=2" in text.split("User - '2'")[1].splitlines()[0]
    assert "User - '3':DefaultAccount='a3':AdminLevel" in text            # a line without one gets it
    assert "User - 'root':DefaultAccount='root'" in text                   # root in the root account stays
    assert Path(qos).read_text() == QOS
    assert pbf_dumps(tmp_path / "nowhere", str(out)) is None and pbf_dumps(None, str(out)) is None


def test_pbf_holds_jobs_by_each_limit_and_the_summary_sets_them_beside_slurms(tmp_path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "assoc.cfg").write_text(DUMP)
    (run / "qos.txt").write_text(QOS)
    case = read_limits_case(LIMITS)
    table, req = load_workload(WORKLOAD)
    jobs = scale_jobs(table, req, 1.0)[0]
    settings = slurm_settings(CONF, None, requests=req)
    config = limits_config(replace(settings.config, record_nodes=True), case, str(run), str(tmp_path))
    assert config.qos_limits and config.assoc_limits
    assert limits_config(settings.config, case, None, str(tmp_path)) is settings.config
    result = replay(pbf_table(jobs, qos=QOS_NAME), config)
    assert result.summary["assoc_limits"]["jobs_of_unknown_associations"] == 0
    assert result.summary["qos_limits"]["jobs_without_limits"] == 0
    meta = [{"pending_reasons": {"jobs": {"QOSGrpCpuLimit": 10, "Priority": 4},
                                 "last_limit": {"QOSGrpCpuLimit": 8}}},
            {"pending_reasons": {"jobs": {"QOSGrpCpuLimit": 12, "AssocGrpJobsLimit": 3}}}]
    s = limits_summary(case, result, meta)
    by = s["by_reason"]
    assert set(by) >= {"QOSGrpCpuLimit", "AssocGrpJobsLimit", "AssocMaxJobsLimit"}
    assert all(by[r]["pbf"] > 0 for r in ("QOSGrpCpuLimit", "AssocGrpJobsLimit", "AssocMaxJobsLimit"))
    q = by["QOSGrpCpuLimit"]
    assert q["slurm"] == [10, 12] and q["slurm_mean"] == 11 and q["slurm_last"] == [8]
    assert q["relative_difference"] == pytest.approx((q["pbf"] - 11) / 11)
    assert by["AssocGrpJobsLimit"]["slurm"] == [0, 3]
    assert s["slurm_other_reasons"] == [{"Priority": 4}, {}]
    # each held job is of the account or user association the limit is on
    held = {int(i): str(r) for i, r in zip(result.jobs["id"], result.jobs["limit_reason"])}
    user = {j.id: j.user for j in jobs}
    assert {user[i] for i, r in held.items() if r == "AssocGrpJobsLimit"} == {1}
    assert {user[i] for i, r in held.items() if r == "AssocMaxJobsLimit"} == {2}


# ---------------------------------------------------------------- the recorded qos4 case

def test_the_recorded_limits_runs_are_compared_again(tmp_path, capsys):
    if not (REC / "slurm" / "run1").is_dir():
        pytest.skip(f"{REC} is not in this checkout")
    from pbf.cli import main
    out = tmp_path / "qos-again"
    assert main(["validate", "slurm", str(CONF), str(WORKLOAD), "--slurm-runs", str(REC), "--limits", str(LIMITS),
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "limits       QOSGrpCpuLimit: jobs held, Slurm " in text
    assert "pending      Slurm run 1 (squeue from the first submission on): " in text
    s = json.loads((out / "summary.json").read_text())
    assert s["repeat"] == 3 and s["slurm_version"] == "slurm-wlm 22.05.8" and s["pbf_vs_slurm"]["jobs"] == 50
    by = s["limits"]["by_reason"]
    # squeue's jobs held by each limit in the three runs, as recorded
    assert {r: v["slurm"] for r, v in by.items()} == {"AssocGrpJobsLimit": [11, 11, 11],
                                                       "AssocMaxJobsLimit": [13, 13, 13],
                                                       "QOSGrpCpuLimit": [19, 17, 17]}
    assert {r: v["slurm_last"] for r, v in by.items()} == {"AssocGrpJobsLimit": [11, 11, 11],
                                                            "AssocMaxJobsLimit": [12, 13, 13],
                                                            "QOSGrpCpuLimit": [17, 16, 15]}
    assert all(v["pbf"] > 0 for v in by.values())
    assert s["limits"]["pbf_assoc_limits"]["jobs_of_unknown_associations"] == 0
    assert s["limits"]["pbf_assoc_limits"]["limits"] == {
        "a1": {"max_jobs": 0, "grp_jobs": 2, "grp_cpus": 0, "max_submit_jobs": 0, "grp_submit_jobs": 0},
        "2@a2": {"max_jobs": 2, "grp_jobs": 0, "grp_cpus": 0, "max_submit_jobs": 0, "grp_submit_jobs": 0}}
    assert s["limits"]["pbf_qos_limits"]["limits"]["normal"]["grp_cpus"] == 16
    # without --limits the recorded dumps are read all the same; without them pbf holds no job
    again = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "again", verbose=False)
    assert {r: v["pbf"] for r, v in again["limits"]["by_reason"].items()} == {r: v["pbf"] for r, v in by.items()}
    assert again["pbf_vs_slurm"] == s["pbf_vs_slurm"]
    none = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "none", verbose=False, limits="none")
    assert "limits" not in none and none["awt_s"]["pbf"] < s["awt_s"]["pbf"]


def test_end_lag_below_is_a_what_if_on_pbfs_side(tmp_path):
    if not (REC / "slurm" / "run1").is_dir():
        pytest.skip(f"{REC} is not in this checkout")
    s = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "lag", verbose=False, end_lag_below=66)
    assert s["pbf_config"]["slurm_sim"]["end_lag_below"] == 66 and s["pbf_end_lag_below"]["from"] == "given"
    # by default the runs' own timing: their backfill cycles drifted 0.4-0.7 ms a second, so the end of
    # every job shorter than 94-134 s was seen a second late; the same starts as any threshold above the
    # longest run (50 s)
    d = cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "own", verbose=False)
    assert d["pbf_end_lag_below"] == {"s": 99, "from": "runs", "runs_s": [99, 134, 94]}
    assert d["pbf_vs_slurm"] == s["pbf_vs_slurm"] and d["pbf_vs_slurm"]["within_share"] >= 0.9
    # each limit reason holds within 10 % of the jobs Slurm's runs held by it on average
    assert all(abs(v["relative_difference"]) <= 0.1 for v in d["limits"]["by_reason"].values())
    with pytest.raises(ConfigError, match="end_lag_below"):
        cmp.validate_slurm(CONF, WORKLOAD, slurm_runs=REC, out=tmp_path / "bad", verbose=False, end_lag_below=-1)


# ---------------------------------------------------------------- (b) with a real Slurm and slurmdbd

def test_real_slurm_holds_jobs_by_an_account_limit(tmp_path):
    try:
        check_requirements(accounting=True)
    except SlurmUnavailable as exc:
        pytest.skip(f"no real Slurm with slurmdbd here: {exc}")
    head = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|State|User|Partition\n"
    work = tmp_path / "jobs.sacct"
    work.write_text(head + "".join(f"{i}|2024-01-01T00:00:00|2024-01-01T00:00:00|6|1|1||1000Mc|COMPLETED|u1|batch\n"
                                   for i in range(1, 5)))
    limits = tmp_path / "one.limits"
    limits.write_text("modify account a1 set GrpJobs=1\n")
    s = cmp.validate_slurm(CONF, work, out=tmp_path / "out", verbose=False, limits=str(limits))
    run = s["runs"][0]
    assert not run["errors"] and run["finished"]
    starts = sorted(float(r["slurm_start"]) for r in _rows(tmp_path / "out" / "comparison.csv"))
    assert starts[-1] >= 3 * 6                            # one at a time
    by = s["limits"]["by_reason"]
    assert by["AssocGrpJobsLimit"]["slurm"][0] >= 1 and by["AssocGrpJobsLimit"]["pbf"] == 3
    assert (tmp_path / "out" / "slurm" / "run1" / "assoc.cfg").is_file()


def _rows(path):
    import csv
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))
