"""Slurm accounting dumps (sacct --parsable2) as input: formats, states, filters, errors, a round trip
sacct -> SWF -> replay, and dumps with every column sacct prints (tests/data/sacct: `sacct -P -o ALL` of
Slurm 22.05 with its step lines, and `sacct -P -X -o ALL` of Slurm 18.08): arrays, heterogeneous jobs,
GPUs and their types, licenses, --exclusive, dependencies, zero-length jobs, and every column present
and not modelled named in the output."""
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.cli import main
from pbf.errors import ConfigError, PbfError, TraceFormatError
from pbf.workload.sacct import describe_sacct, is_sacct, parse_duration_slurm, read_sacct

DATA = Path(__file__).parent / "data" / "sacct"
ALL_22 = DATA / "all_22.05.sacct"
ALL_18 = DATA / "all_18.08_allocations.sacct"
SITE = DATA / "site.conf"

HEAD = "JobID|User|Group|Partition|QOS|Submit|Start|Elapsed|Timelimit|ReqCPUS|ReqNodes|ReqMem|State"
ROWS = [
    "10|alice|g1|normal|normal|2024-03-01T10:00:00|2024-03-01T10:00:30|01:00:00|02:00:00|4|1|4Gn|COMPLETED",
    "10.batch|alice|g1|normal|normal|2024-03-01T10:00:00|2024-03-01T10:00:30|01:00:00|02:00:00|4|1|4Gn|COMPLETED",
    "10.0|alice|g1|normal|normal|2024-03-01T10:00:00|2024-03-01T10:00:30|01:00:00|02:00:00|4|1|4Gn|COMPLETED",
    "11|bob|g2|killable|supporters|2024-03-01T10:05:00|2024-03-01T10:06:00|1-00:00:00|1-00:00:00|16|2|2Gc|TIMEOUT",
    "12_7|bob|g2|normal|normal|2024-03-01T10:06:00|2024-03-01T10:07:00|00:01:00|10|1|1|1000M|COMPLETED",
    "13|carol|g1|normal|normal|2024-03-01T10:03:00|Unknown|00:00:00|UNLIMITED|8|1|8Gn|CANCELLED by 1234",
    "14|carol|g1|normal|normal|2024-03-01T10:04:00|2024-03-01T10:09:00|01:40|Partition_Limit|2|1|0|FAILED",
    "15|dave|g3|normal|normal|2024-03-01T10:08:00|2024-03-01T10:08:30|00:50.250|30|1|1|1Gn|RUNNING",
    "16|dave|g3|normal|normal|2024-03-01T10:09:00|Unknown|00:00:00|Unknown|1|1|1Gn|PENDING",
    "17|erin|g1|normal|normal|2024-03-01T10:10:00|2024-03-01T10:10:00|00:10:00|00:30:00|2|1|512Mc|CANCELLED",
    "18|erin|g1|normal|normal|2024-03-01T10:11:00|2024-03-01T10:12:00|00:02:00|00:05:00|1|1|1Gn|NODE_FAIL",
]


def _dump(tmp_path, rows=ROWS, head=HEAD, name="dump.txt"):
    path = tmp_path / name
    path.write_text("\n".join([head] + rows) + "\n")
    return path


def test_durations():
    assert parse_duration_slurm("1-02:03:04") == 93784
    assert parse_duration_slurm("02:03:04") == 7384
    assert parse_duration_slurm("05:06") == 306 and parse_duration_slurm("05:06.789") == 306
    assert parse_duration_slurm("UNLIMITED") is None and parse_duration_slurm("1:2:3:4") is None


def test_formats_states_and_numbering(tmp_path):
    t = read_sacct(_dump(tmp_path))
    assert is_sacct(_dump(tmp_path)) and len(t) == 9
    assert t.dropped == {"job_steps": 2, "pending_array_records": 0, "other_partition": 0, "outside_dates": 0}
    c = {k: v.tolist() for k, v in t.columns.items()}
    # sorted by submit (11 at 10:05 comes after 13 at 10:03 and 14 at 10:04), from the first; the array
    # element 12_7 is a job (Slurm ran it as one)
    assert c["submit"] == [0, 180, 240, 300, 360, 480, 540, 600, 660]
    assert dict(zip(c["submit"], c["array_job"]))[360] == 12 and c["array_job"].count(0) == 8
    by_submit = dict(zip(c["submit"], zip(c["run"], c["req_time"], c["status"], c["wait"], c["req_procs"])))
    assert by_submit[0] == (3600, 7200, 1, 30, 4)            # 10: COMPLETED, 2 h limit
    assert by_submit[300] == (86400, 86400, 0, 60, 16)       # 11: TIMEOUT -> failed, 1-00:00:00
    assert by_submit[180] == (-1, -1, 5, -1, 8)              # 13: cancelled before it started, UNLIMITED
    assert by_submit[240] == (100, -1, 0, 300, 2)            # 14: FAILED, MM:SS, Partition_Limit
    assert by_submit[480] == (-1, 1800, -1, -1, 1)           # 15: RUNNING at the dump, 30 minutes
    assert by_submit[540] == (-1, -1, -1, -1, 1)             # 16: PENDING, Unknown limit
    assert by_submit[600] == (600, 1800, 5, 0, 2)            # 17: CANCELLED after it ran
    assert by_submit[660] == (120, 300, 0, 60, 1)            # 18: NODE_FAIL
    assert c["job_id"] == list(range(1, 10))
    mem = dict(zip(c["submit"], c["req_mem"]))
    assert mem[0] == 1024 ** 2 and mem[300] == 2 * 1024 ** 2 and mem[600] == 512 * 1024 and mem[240] == -1
    assert t.header.fields["UnixStartTime"] == str(1709287200)
    assert t.header.fields["Partition"] == ["1 normal", "2 killable"]
    assert t.header.fields["Queue"] == ["1 normal", "2 supporters"]
    assert dict(zip(c["submit"], c["partition"]))[300] == 2 and dict(zip(c["submit"], c["queue"]))[300] == 2


def test_fields_in_any_order_and_raw_fields(tmp_path):
    names = HEAD.split("|")
    perm = [12, 0, 5, 3, 1, 7, 9, 2, 4, 6, 8, 11, 10]
    rows = ["|".join(r.split("|")[i] for i in perm) for r in ROWS]
    a = read_sacct(_dump(tmp_path)).columns
    b = read_sacct(_dump(tmp_path, rows, "|".join(names[i] for i in perm), "perm.txt")).columns
    assert all(np.array_equal(a[k], b[k]) for k in a)
    raw = ["JobIDRaw|Submit|ElapsedRaw|TimelimitRaw|AllocCPUS|State",
           "5|2024-03-01T00:00:00|3600|120|3|COMPLETED", "6|2024-03-01T00:01:00|60|UNLIMITED|1|COMPLETED"]
    t = read_sacct(_dump(tmp_path, raw[1:], raw[0], "raw.txt"))
    assert t.columns["run"].tolist() == [3600, 60] and t.columns["req_time"].tolist() == [7200, -1]


def test_filters_and_pack(tmp_path):
    d = _dump(tmp_path)
    assert len(read_sacct(d, partition="killable")) == 1
    t = read_sacct(d, since="2024-03-01T10:04:00", until="2024-03-01T10:10:00")
    assert len(t) == 5 and t.dropped["outside_dates"] == 4
    p = read_sacct(d, pack_days=1)
    assert p.columns["submit"].tolist() == [int(k * 86400 / 9) for k in range(1, 10)]
    with pytest.raises(ConfigError, match="since"):
        read_sacct(d, since="March")
    with pytest.raises(ConfigError, match="pack"):
        read_sacct(d, pack_days=0)


@pytest.mark.parametrize("row,field,expected", [
    ("20|x|g|normal|normal|yesterday|Unknown|00:01:00|10|1|1|1G|COMPLETED", "Submit", "a time"),
    ("20|x|g|normal|normal|2024-03-01T00:00:00|Unknown|00:01:00|10|1|1|1G|DANCING", "State", "a Slurm job state"),
    ("20|x|g|normal|normal|2024-03-01T00:00:00|Unknown|an hour|10|1|1|1G|COMPLETED", "Elapsed", "HH:MM:SS"),
    ("20|x|g|normal|normal|2024-03-01T00:00:00|Unknown|00:01:00|soon|1|1|1G|COMPLETED", "Timelimit", "UNLIMITED"),
    ("20|x|g|normal|normal|2024-03-01T00:00:00|Unknown|00:01:00|10|four|1|1G|COMPLETED", "ReqCPUS", "processors"),
    ("20|x|g|normal|normal|2024-03-01T00:00:00|Unknown|00:01:00|10|1|1|lots|COMPLETED", "ReqMem", "4Gn"),
])
def test_errors_name_line_field_value(tmp_path, row, field, expected):
    with pytest.raises(TraceFormatError) as err:
        read_sacct(_dump(tmp_path, ROWS[:1] + [row]))
    assert err.value.line == 3 and err.value.field == field and expected in err.value.expected


def test_malformed_headers_and_rows(tmp_path):
    with pytest.raises(TraceFormatError, match="Submit"):
        read_sacct(_dump(tmp_path, ["1|x"], "JobID|User|State"))
    with pytest.raises(TraceFormatError, match="13 |-separated fields"):
        read_sacct(_dump(tmp_path, ROWS[:1] + ["21|x|g"]))
    empty = tmp_path / "empty.txt"
    empty.write_text("\n")
    with pytest.raises(TraceFormatError):
        read_sacct(empty)


def test_round_trip_sacct_swf_replay(tmp_path, capsys):
    dump = _dump(tmp_path)
    assert main(["trace", "from-sacct", str(dump), "-o", str(tmp_path / "t.swf.gz")]) == 0
    assert "wrote 9 jobs" in capsys.readouterr().out
    direct = pbf.replay(pbf.read_swf(dump), pbf.ReplayConfig(units=32))
    via_swf = pbf.replay(pbf.read_swf(tmp_path / "t.swf.gz"), pbf.ReplayConfig(units=32))
    for col in ("id", "submit", "start", "end", "run", "units"):
        assert np.array_equal(np.asarray(direct.jobs[col]), np.asarray(via_swf.jobs[col]))
    assert direct.summary["jobs"]["submitted"] == 6          # no run time, dropped by cleaning: 13, 15, 16
    assert main(["replay", str(dump), "--units", "32", "--quiet"]) == 0


# ------------------------------------------------------------------ a dump with every column (sacct -o ALL)
def _by_slurm_id(table):
    c = table.columns
    return {int(i): {k: c[k][n].item() for k in c} for n, i in enumerate(c["slurm_id"])}


def _legend(table, key):
    out = {}
    for line in table.header.lines:
        name, sep, value = line.strip().partition(":")
        if sep and name == key:
            number, _, text = value.strip().partition(" ")
            out[int(number)] = text
    return out


def test_every_column_of_sacct_o_all_is_modelled_read_or_named():
    t = read_sacct(ALL_22)
    names = ALL_22.read_text().splitlines()[0].split("|")
    assert len(names) == 109                                 # Slurm 22.05's sacct -o ALL
    cols = t.sacct["columns"]
    named = set(cols["modelled"]) | set(cols["read_not_modelled"]) | set(cols["not_modelled"])
    assert named == set(names) and len(cols["modelled"]) + len(cols["read_not_modelled"]) + len(
        cols["not_modelled"]) == len(names)                  # each column once, none left out
    assert set(cols["read_not_modelled"]) == {"Reason", "Flags", "SubmitLine"}
    for col in ("ReqTRES", "AllocTRES", "AllocCPUS", "AllocNodes", "Constraints", "ReqMem", "ReqNodes", "JobIDRaw"):
        assert col in cols["modelled"]
    # counts of non-empty values over the 38 lines (17 jobs, a pending array record, 20 steps)
    assert t.sacct["lines"] == {"read": 38, "job_records": 17, "step_lines": 20, "submit_lines_with_a_pipe_joined": 1}
    assert cols["not_modelled"]["MaxRSS"] == 20 and cols["not_modelled"]["AdminComment"] == 0
    assert cols["not_modelled"]["Account"] == 38 and cols["same_as"]["Elapsed"] == "ElapsedRaw"
    text = "\n".join(describe_sacct(t.sacct))
    for name in cols["not_modelled"]:
        assert f"{name} {cols['not_modelled'][name]:,}" in text
    json.dumps(t.sacct)                                      # (JSON-ready: it goes into summary.json)


def test_what_each_new_column_gives():
    t = read_sacct(ALL_22)
    j = _by_slurm_id(t)
    assert len(t) == 17 and t.dropped == {"job_steps": 20, "pending_array_records": 1, "other_partition": 0,
                                          "outside_dates": 0}
    # GPUs: the job's total of ReqTRES per node, typed entries not added twice; the type kept, not modelled
    types = _legend(t, "GpuType")
    assert (j[1002]["gpus"], types[j[1002]["gpu_type"]]) == (2, "a100")
    assert (j[1021]["gpus"], types[j[1021]["gpu_type"]]) == (1, "a100") and j[1001]["gpus"] == 0
    # --exclusive: whole nodes (AllocCPUS on AllocNodes nodes), whatever ReqCPUS said
    assert (j[1003]["exclusive"], j[1003]["req_procs"], j[1003]["alloc_procs"]) == (1, 128, 128)
    assert (j[1003]["nodes_min"], j[1003]["nodes_max"]) == (2, 2)
    assert t.sacct["exclusive"] == {"jobs": 1, "as_whole_nodes": 1, "other_forms_not_modelled": {}}
    # dependencies: the kind in a legend, the parent (1001, in the dump) in SWF field 17
    assert _legend(t, "Dependency")[j[1004]["dependency"]] == "afterok"
    assert j[1004]["prev_job"] == j[1001]["job_id"] and j[1001]["prev_job"] == -1
    # arrays: elements are jobs; the pending record counted, not expanded; the throttle read, not modelled
    assert [j[k]["array_job"] for k in (1010, 1011, 1012)] == [1010] * 3
    assert t.sacct["arrays"] == {"elements": 3, "arrays": 1, "pending_elements_not_expanded": 6,
                                 "pending_lists_cut_short_by_sacct": 0, "throttled_arrays_not_modelled": 1}
    # a heterogeneous job: two jobs submitted together, each with its own partition and resources
    assert j[1020]["het_job"] == j[1021]["het_job"] == 1020 and j[1020]["submit"] == j[1021]["submit"]
    assert j[1020]["partition"] != j[1021]["partition"] and (j[1020]["gpus"], j[1021]["gpus"]) == (0, 1)
    # licenses, Reason, Flags: read into columns with their legends
    assert _legend(t, "Licenses")[j[1032]["licenses"]] == "matlab:2" and t.sacct["licenses"] == {"matlab": 1}
    assert _legend(t, "Reason")[j[1036]["reason"]] == "BeginTime" and j[1001]["reason"] == 0
    assert _legend(t, "Flags")[j[1003]["flags"]] == "SchedBackfill"
    assert t.sacct["flags"]["SchedMain"] == 13
    # run times: a zero-length job (0), a job cancelled before it started and one running at the dump (-1)
    assert (j[1030]["run"], j[1031]["run"], j[1034]["run"]) == (0, -1, -1)
    assert t.sacct["run_times"] == {"zero_length": 1, "never_started": 1, "not_ended": 1}
    # 22.05 prints ReqMem as the job's total: 64G on two nodes is 32 GB a node
    assert (j[1035]["mem_node_mb"], j[1035]["nodes_min"]) == (32768, 2)
    # options of the submit line that change scheduling and are not modelled, counted
    assert t.sacct["submit_line_options_not_modelled"] == {"--begin": 1, "--time-min": 1, "--nodelist": 1}
    assert _legend(t, "Constraint")[j[1038]["constraint"]] == "avx512&ib"


def test_a_dump_with_every_column_replays_with_nothing_silently_dropped(capsys, tmp_path):
    assert main(["replay", str(ALL_22), "--cluster", str(SITE), "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "cleaning     17 records read, 15 jobs; dropped 2 run time <= 0" in out
    assert "1 zero-length job kept (--drop-zero-length drops them)" in out
    for said in ("3 array elements of 1 array", "2 components of 1 heterogeneous job", "20 step lines",
                 "GPU types a100 2", "--exclusive of 1 job, 1 as whole nodes", "licenses matlab 1",
                 "dependencies of 1 job", "columns not modelled", "MaxRSS 20", "WorkDir 18"):
        assert said in " ".join(out.split()), said
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["jobs"]["submitted"] == 15 and summary["jobs"]["rejected"] == 0
    assert summary["cleaning"]["zero_length_kept"] == 1 and summary["cleaning"]["sacct"]["het"]["components"] == 2
    assert summary["nodes"]["utilisation"]["gpus"] > 0


def test_zero_length_jobs_are_kept_for_sacct_and_dropped_with_a_flag(tmp_path, capsys):
    kept = pbf.read_swf(ALL_22)
    assert len(kept) == 15 and (kept.run == 0).sum() == 1
    assert (kept.report.zero_length_kept, kept.report.dropped_nonpositive_runtime) == (1, 2)
    dropped = pbf.read_swf(ALL_22, pbf.Cleaning(drop_nonpositive_runtime=True))
    assert len(dropped) == 14 and dropped.report.zero_length_dropped == 1
    everything = pbf.read_swf(ALL_22, pbf.Cleaning(drop_nonpositive_runtime=False))
    assert len(everything) == 17
    assert main(["replay", str(ALL_22), "--units", "512", "--drop-zero-length", "--quiet"]) == 0
    assert main(["trace", "info", str(ALL_22), "--drop-zero-length"]) == 0
    assert "1 zero-length job dropped (--drop-zero-length)" in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["replay", str(ALL_22), "--units", "512", "--drop-zero-length", "--keep-nonpositive-runtime"])
    # SWF keeps its convention: every run time <= 0 dropped
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 8\n1 0 0 0 1 -1 -1 1 60 -1 1 1 1 -1 1 1 -1 -1\n"
                   "2 5 0 30 1 -1 -1 1 60 -1 1 1 1 -1 1 1 -1 -1\n")
    t = pbf.read_swf(swf)
    assert len(t) == 1 and t.report.dropped_nonpositive_runtime == 1 and t.report.sacct is None


def test_a_dump_of_slurm_18_08_reads_its_gres_columns():
    # 17.11 and 18.08 keep GPUs in ReqGRES/AllocGRES (the job's total); ReqTRES has no gres/gpu unless the
    # site counted it: GPU jobs used to replay as CPU jobs
    t = read_sacct(ALL_18)
    j = _by_slurm_id(t)
    assert (j[501]["gpus"], j[502]["gpus"], j[503]["gpus"]) == (2, 2, 0)         # gpu:tesla:4 on 2 nodes
    assert _legend(t, "GpuType")[j[502]["gpu_type"]] == "tesla" and j[501]["gpu_type"] == 0
    assert t.sacct["gpus"]["jobs_by_column"] == {"ReqGRES": 2}
    assert (j[501]["mem_node_mb"], j[502]["mem_core_mb"]) == (4000, 2000)       # n and c suffixes
    assert t.sacct["lines"]["step_lines"] == 0 and "ReqGRES" in t.sacct["columns"]["modelled"]


def _small(tmp_path, head, rows, name="d.sacct"):
    path = tmp_path / name
    path.write_text("\n".join([head] + rows) + "\n")
    return path


HEAD2 = "JobID|JobIDRaw|Submit|Start|ElapsedRaw|ReqCPUS|AllocCPUS|ReqNodes|AllocNodes|State|SubmitLine"


def _row2(jid, raw, submit=0, start=10, run=100, cpus=1, alloc=1, nodes="1", anodes="1", state="COMPLETED", line=""):
    t = lambda s: f"2024-01-01T00:{s // 60:02d}:{s % 60:02d}"  # noqa: E731
    return "|".join([jid, raw, t(submit), t(start) if start is not None else "Unknown", str(run), str(cpus),
                     str(alloc), nodes, anodes, state, line])


@pytest.mark.parametrize("spec, elements, cut", [
    ("1-9", 9, 0), ("1-3,5%2", 4, 0), ("0-15:4", 4, 0), ("7", 1, 0),
    # sacct cuts a list at 64 characters, "..." over the end of the last item shown
    ("5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,43,4...", 20, 1),
    ("1-3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39,41,...%10", 3 + 19, 1)])
def test_pending_array_records_are_counted_not_expanded(tmp_path, spec, elements, cut):
    t = read_sacct(_small(tmp_path, HEAD2, [_row2("5", "5"), _row2(f"9_[{spec}]", "9", start=None, run=0,
                                                                    state="PENDING")]))
    assert len(t) == 1 and t.dropped["pending_array_records"] == 1
    assert t.sacct["arrays"]["pending_elements_not_expanded"] == elements
    assert t.sacct["arrays"]["pending_lists_cut_short_by_sacct"] == cut
    assert t.sacct["arrays"]["throttled_arrays_not_modelled"] == int("%" in spec)


def test_submit_lines_exclusive_dependencies_and_pipes(tmp_path):
    rows = [
        _row2("1", "1", run=500),
        _row2("2_1", "2", start=20, run=300), _row2("2_2", "3", start=20, run=900),
        _row2("4", "4", submit=5, start=1000, line="sbatch -d afterok:2 job.sh"),            # the whole array
        _row2("5", "5", submit=5, start=1000, line="sbatch --dependency afterany:1?afterok:2_1 job.sh"),
        _row2("6", "6", submit=5, start=1000, line="sbatch -dsingleton,after:1+5:777 job.sh"),
        _row2("7", "7", submit=6, start=30, cpus=2, alloc=64, anodes="1", line="srun --exclusive -n 2 ./a.out"),
        _row2("8", "8", submit=6, start=30, cpus=2, alloc=2, line="sbatch --exclusive=user job.sh"),
        _row2("9", "9", submit=7, start=None, run=0, cpus=2, alloc=0, anodes="0", state="CANCELLED",
              line="sbatch --exclusive job.sh"),
        _row2("10", "10", submit=8, line="sbatch --wrap=grep -c x a | sort | uniq --exclusive"),
        _row2("11", "11", submit=9, line="/opt/slurm/bin/sbatch -Hs --reservation=maint --hold job.sh"),
        _row2("12", "12", submit=9, line="python3 submit.py"),
    ]
    t = read_sacct(_small(tmp_path, HEAD2, rows))
    j = _by_slurm_id(t)
    kinds = _legend(t, "Dependency")
    assert kinds[j[4]["dependency"]] == "afterok" and kinds[j[5]["dependency"]] == "afterany,afterok"
    assert kinds[j[6]["dependency"]] == "after,singleton"
    assert j[4]["prev_job"] == j[3]["job_id"]                 # of the array's elements, the one that ended last
    assert j[5]["prev_job"] == j[1]["job_id"]                 # 1 ended at 510, 2_1 at 320
    assert j[6]["prev_job"] == j[1]["job_id"]                 # (777 is not in the dump)
    d = t.sacct["dependencies"]
    assert (d["jobs"], d["targets_not_in_the_dump"], d["with_several"]) == (3, 1, 2)
    assert (j[7]["exclusive"], j[7]["req_procs"], j[7]["nodes_max"]) == (1, 64, 1)
    assert (j[8]["exclusive"], j[8]["req_procs"]) == (0, 2)
    assert (j[9]["exclusive"], j[9]["req_procs"]) == (1, 2)   # never ran: nothing to make whole nodes of
    # (the words after --wrap= are the wrapped command's, but a long option among them is taken as sbatch's:
    # sacct keeps no quotes to tell them apart)
    assert (j[10]["exclusive"], t.sacct["lines"]["submit_lines_with_a_pipe_joined"]) == (1, 1)
    assert t.sacct["exclusive"] == {"jobs": 3, "as_whole_nodes": 2, "other_forms_not_modelled": {"--exclusive=user": 1}}
    assert t.sacct["submit_line_options_not_modelled"] == {"--hold": 2, "--oversubscribe": 1}
    assert t.sacct["submit_lines_not_sbatch_srun_salloc"] == 1


@pytest.mark.parametrize("column, value, expected", [
    ("JobID", "abc", "a Slurm job id"),
    ("JobID", "99999999999", "job numbers up to 4,294,967,295"),
    ("JobID", "5_4000001", "array indexes up to 4,000,000"),
    ("JobID", "5_[9-2]", "array indexes from 0 to 4,000,000"),
    ("JobID", "5_[1-9999999]", "array indexes"),
    ("JobIDRaw", "x", "a whole job id"),
    ("AllocCPUS", "-1", "processors from 0"),
    ("AllocNodes", "1X", "nodes from 0"),
    ("ReqNodes", "2Q", "nodes from 0"),
    ("ReqNodes", "99999K", "nodes from 0"),
    ("ReqGRES", "gpu:99999999999", "gpu:N or gpu:TYPE:N"),
    ("AllocTRES", "cpu=2,gres/gpu=two", "gres/gpu=N"),
    ("ReqTRES", "cpu=2,gres/gpu:a100=-1", "gres/gpu:TYPE=N"),
    ("ReqTRES", "cpu=2,license/matlab=x", "license/NAME=N"),
    ("ReqTRES", "cpu=2,gres/gpu:a=4294967295,gres/gpu:b=1", "GPUs in all"),
])
def test_bad_values_name_file_line_column_value_and_what_was_expected(tmp_path, column, value, expected):
    head = ("JobID|JobIDRaw|Submit|Start|ElapsedRaw|ReqCPUS|AllocCPUS|ReqNodes|AllocNodes|ReqGRES|ReqTRES|AllocTRES|"
            "State")
    good = "1|1|2024-01-01T00:00:00|2024-01-01T00:00:10|60|2|2|1|1||cpu=2|cpu=2|COMPLETED"
    cells = dict(zip(head.split("|"), good.split("|")))
    cells["JobID"] = cells["JobIDRaw"] = "2"
    cells[column] = value
    path = _small(tmp_path, head, [good, "|".join(cells.values())], "bad.sacct")
    with pytest.raises(TraceFormatError) as err:
        read_sacct(path)
    e = err.value
    assert (e.path, e.line, e.field, e.value) == (str(path), 3, column, value) and expected in e.expected
    assert main(["replay", str(path), "--units", "8", "--quiet"]) == 2


def test_counts_sacct_prints_with_units_and_memory_from_tres(tmp_path):
    head = "JobID|Submit|Start|ElapsedRaw|ReqCPUS|ReqNodes|ReqTRES|State"
    rows = ["1|2024-01-01T00:00:00|2024-01-01T00:00:10|60|131072|1K|cpu=131072,mem=1T,node=1024|COMPLETED",
            "2|2024-01-01T00:00:00|2024-01-01T00:00:10|60|2|2|cpu=2,mem=8000M,node=2|COMPLETED"]
    j = _by_slurm_id(read_sacct(_small(tmp_path, head, rows)))
    assert (j[1]["nodes_min"], j[1]["mem_node_mb"]) == (1024, 1024)   # 1K nodes; 1 TB over them
    assert (j[2]["nodes_min"], j[2]["mem_node_mb"]) == (2, 4000)      # no ReqMem: ReqTRES mem, the job's total


def test_trace_commands_say_what_every_column_gave(tmp_path, capsys):
    assert main(["trace", "from-sacct", str(ALL_22), "-o", str(tmp_path / "t.swf")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "wrote 17 jobs" in out and "20 job steps, 1 pending array records" in out
    assert "columns not modelled" in out and "GPU types" in out
    swf = pbf.read_swf(tmp_path / "t.swf", pbf.Cleaning.none())
    assert sorted(swf.prev_job.tolist()).count(-1) == 16                 # field 17: 1004's parent
    assert main(["trace", "info", str(ALL_22), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["cleaning"]["sacct"]["columns"]["not_modelled"]["MaxRSS"] == 20


SACCT_VALUES = {
    "JobID": ("1", "2_3", "2_4", "2_[5-9%2]", "3+0", "3+1", "1.batch", "2_3.0", "4_[1,3,5,...]", "8", "9", "10"),
    "JobIDRaw": ("1", "7", "3", "8", ""),
    "Submit": ("2024-01-01T00:00:00", "2024-01-01T00:01:00"),
    "Start": ("2024-01-01T00:00:10", "2024-01-01T00:00:20", "2024-01-01T00:01:30", "Unknown", "None"),
    "ElapsedRaw": ("0", "60", "3600"),
    "ReqCPUS": ("1", "4", "0"),
    "AllocCPUS": ("0", "4", "64", ""),
    "ReqNodes": ("1", "2", "1K", "2-4", ""),
    "AllocNodes": ("0", "1", "2", "1K"),
    "ReqMem": ("4G", "4Gn", "2000Mc", "0", ""),
    "ReqGRES": ("", "gpu:2", "gpu:a100:2", "gpu", "gpu:2(IDX:0-1),mps:100", "(null)"),
    "ReqTRES": ("cpu=1", "cpu=4,gres/gpu=2,gres/gpu:a100=2", "gres/gpu:v100=1", "license/m=2,mem=8G", ""),
    "AllocTRES": ("", "cpu=4,gres/gpu=1", "billing=4,energy=5"),
    "Licenses": ("", "m:2", "a@db:1,b"),
    "Reason": ("None", "Priority", "Dependency"),
    "Flags": ("SchedMain", "SchedBackfill,StartRecieved", ""),
    "State": ("COMPLETED", "COMPLETED", "TIMEOUT", "CANCELLED by 5", "RUNNING", "PENDING", "FAILED"),
    "SubmitLine": ("", "sbatch job.sh", "sbatch --exclusive -N 2 j", "sbatch -d afterok:1:2_3 j", "srun -w n1 x",
                   "sbatch --wrap=a | b", "sbatch -d", "sbatch --exclusive=user -dsingleton", "ls"),
}
HOSTILE = ("", " ", "²", "9" * 40, "-1", "1e400", "|", "%", "[", "_", ":", "=", "gpu:" + "9" * 30, "\u0663", "x",
           "5_[]", "1.batch", "1K", "99999K")


@settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_fuzz_new_columns_read_sanely_or_refuse(data):
    import os
    import tempfile
    names = data.draw(st.permutations(sorted(SACCT_VALUES)))
    rows = []
    for _ in range(data.draw(st.integers(0, 8))):
        cells = [data.draw(st.sampled_from(SACCT_VALUES[n])) for n in names]
        if data.draw(st.integers(0, 3)) == 0:           # one hostile cell in a row of four
            cells[data.draw(st.integers(0, len(names) - 1))] = data.draw(st.sampled_from(HOSTILE))
        rows.append("|".join(cells))
    fd, path = tempfile.mkstemp(suffix=".sacct")
    with os.fdopen(fd, "w") as fh:
        fh.write("\n".join(["|".join(names)] + rows) + "\n")
    try:
        try:
            t = pbf.read_swf(path)
        except PbfError:
            return
        c = t.columns
        n = len(t)
        assert (c["gpus"] >= 0).all() and (c["nodes_min"] >= 1).all() and (c["nodes_max"] >= 0).all()
        assert ((c["prev_job"] == -1) | ((c["prev_job"] >= 1) & (c["prev_job"] <= t.report.records_read))).all()
        assert (c["run"] >= 0).all() and n <= t.report.records_read
        describe_sacct(t.report.sacct, t.report.as_dict())
        json.dumps(t.report.as_dict())
        if n:
            pbf.replay(t, pbf.ReplayConfig(units=max(int(t.units.max()), 1)))
    finally:
        os.unlink(path)
