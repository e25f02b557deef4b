"""Slurm accounting dumps (sacct --parsable2) as input: formats, states, filters, errors, and a
round trip sacct -> SWF -> replay."""
import numpy as np
import pytest

import pbf
from pbf.cli import main
from pbf.errors import ConfigError, TraceFormatError
from pbf.workload.sacct import is_sacct, parse_duration_slurm, read_sacct

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
    assert is_sacct(_dump(tmp_path)) and len(t) == 8
    assert t.dropped == {"job_steps": 2, "array_elements": 1, "other_partition": 0, "outside_dates": 0}
    c = {k: v.tolist() for k, v in t.columns.items()}
    # sorted by submit (11 at 10:05 comes after 13 at 10:03 and 14 at 10:04), from the first
    assert c["submit"] == [0, 180, 240, 300, 480, 540, 600, 660]
    by_submit = dict(zip(c["submit"], zip(c["run"], c["req_time"], c["status"], c["wait"], c["req_procs"])))
    assert by_submit[0] == (3600, 7200, 1, 30, 4)            # 10: COMPLETED, 2 h limit
    assert by_submit[300] == (86400, 86400, 0, 60, 16)       # 11: TIMEOUT -> failed, 1-00:00:00
    assert by_submit[180] == (-1, -1, 5, -1, 8)              # 13: cancelled before it started, UNLIMITED
    assert by_submit[240] == (100, -1, 0, 300, 2)            # 14: FAILED, MM:SS, Partition_Limit
    assert by_submit[480] == (-1, 1800, -1, -1, 1)           # 15: RUNNING at the dump, 30 minutes
    assert by_submit[540] == (-1, -1, -1, -1, 1)             # 16: PENDING, Unknown limit
    assert by_submit[600] == (600, 1800, 5, 0, 2)            # 17: CANCELLED after it ran
    assert by_submit[660] == (120, 300, 0, 60, 1)            # 18: NODE_FAIL
    assert c["job_id"] == list(range(1, 9))
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
    assert len(t) == 4 and t.dropped["outside_dates"] == 4
    p = read_sacct(d, pack_days=1)
    assert p.columns["submit"].tolist() == [int(k * 86400 / 8) for k in range(1, 9)]
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
    assert "wrote 8 jobs" in capsys.readouterr().out
    direct = pbf.replay(pbf.read_swf(dump), pbf.ReplayConfig(units=32))
    via_swf = pbf.replay(pbf.read_swf(tmp_path / "t.swf.gz"), pbf.ReplayConfig(units=32))
    for col in ("id", "submit", "start", "end", "run", "units"):
        assert np.array_equal(np.asarray(direct.jobs[col]), np.asarray(via_swf.jobs[col]))
    assert direct.summary["jobs"]["submitted"] == 5          # run time <= 0 dropped by cleaning: 13, 15, 16
    assert main(["replay", str(dump), "--units", "32", "--quiet"]) == 0
