"""Hostile and careless site files: sacct dumps, sdiag outputs, sacctmgr dumps and failure files.

Each reader either reads a file into sane values or refuses it with a :class:`pbf.PbfError` naming the
file, the line, the field and what was expected: never another exception, a hang, a crash or a value
out of the range pbf's core takes. Example tests for the cases found by hand, then hypothesis fuzz
tests per family (``PBF_FUZZ_EXAMPLES`` examples each, 200 by default: ``PBF_FUZZ_EXAMPLES=5000 pytest -q -m
fuzz tests`` for a slow run).
"""
import gzip
import math
import os
import tempfile
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import _core
from pbf.bounded import MAX_TIME
from pbf.cli import main
from pbf.errors import ConfigError, PbfError, TraceFormatError
from pbf.fairshare import MAX_DEPTH, Associations, fair_tree_factors
from pbf.node import MAX_NODE_MEMORY_MB, MAX_UNITS
from pbf.outages import NodeLayout, core_events, generate_failures, read_failures
from pbf.sdiag import SdiagError, fit_cost, read_sdiag
from pbf.workload.files import text_lines
from pbf.workload.sacct import is_sacct, parse_duration_slurm, read_sacct
from pbf.workload.timeparse import parse_duration

pytestmark = pytest.mark.fuzz
EXAMPLES = int(os.environ.get("PBF_FUZZ_EXAMPLES", 200))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
BIG = "9" * 400
SWF = os.path.join(os.path.dirname(__file__), os.pardir, "traces", "beocat-2000-1d.swf.gz")


def _write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
    return path


# ---------------------------------------------------------------------------------------------- sacct
HEAD = "JobID|Submit|Start|ElapsedRaw|TimelimitRaw|ReqCPUS|ReqNodes|ReqMem|ReqTRES|State|User"
ROW = "1|2024-01-01T00:00:00|2024-01-01T00:00:10|100|60|4|1|500Mc|cpu=4,gres/gpu=2|COMPLETED|u1"


def _sacct(tmp_path, row=ROW, head=HEAD, name="d.sacct", rows=()):
    return _write(tmp_path, name, "\n".join([head, ROW, row, *rows]) + "\n")


def _row(**cells):
    names, values = HEAD.split("|"), ROW.split("|")
    return "|".join(str(cells.get(n, v)) for n, v in zip(names, values))


@pytest.mark.parametrize("field, value, expected", [
    ("ElapsedRaw", "²", "whole seconds from 0 to 1,099,511,627,776"),
    ("ElapsedRaw", BIG, "whole seconds from 0"),
    ("ElapsedRaw", "-5", "whole seconds from 0"),
    ("ElapsedRaw", str(MAX_TIME + 1), "whole seconds from 0"),
    ("ReqMem", BIG + "Mc", f"at most {MAX_NODE_MEMORY_MB:,} MB"),
    ("ReqMem", "2000000000000000Gn", "at most"),
    ("ReqMem", "١٢Mc", "memory such as 4Gn"),
    ("ReqCPUS", "9" * 20, f"a whole number of processors from 0 to {MAX_UNITS:,}"),
    ("ReqCPUS", str(MAX_UNITS + 1), "processors from 0"),
    ("ReqCPUS", "٣", "processors from 0"),
    ("ReqNodes", "2-" + BIG, "nodes from 0"),
    ("ReqNodes", "4-2", "nodes from 0"),
    ("ReqTRES", "gres/gpu=" + "9" * 30, "gres/gpu=N with N a whole number of GPUs"),
    ("TimelimitRaw", BIG, "whole minutes from 0"),
    ("Submit", "２０２４-01-01T00:00:00", "a time"),
], ids=lambda v: v if len(v) < 30 else v[:20] + "...")
def test_sacct_values_out_of_range_name_line_field_and_range(tmp_path, field, value, expected):
    path = _sacct(tmp_path, _row(**{field: value}))
    with pytest.raises(TraceFormatError) as err:
        read_sacct(path)
    assert (err.value.line, err.value.field) == (3, field) and expected in err.value.expected
    with pytest.raises(TraceFormatError):
        pbf.read_swf(path)                     # (the same reader wherever a trace is read)


def test_sacct_durations_are_ascii_and_bounded():
    assert parse_duration_slurm("1-02:03") == 86400 + 2 * 3600 + 3 * 60       # D-HH:MM
    assert parse_duration_slurm("٠١:٠٠:٠٠") is None and parse_duration_slurm("99999999999-00:00:00") is None
    assert parse_duration_slurm(f"{'9' * 400}:00") is None


def test_a_truncated_or_corrupt_sacct_gz_is_reported_with_its_line(tmp_path):
    text = (HEAD + "\n" + "".join(_row(JobID=i) + "\n" for i in range(1, 3000))).encode()
    packed = gzip.compress(text)
    cut = _write(tmp_path, "cut.sacct.gz", packed[: len(packed) // 2])
    for read in (read_sacct, pbf.read_swf):
        with pytest.raises(TraceFormatError, match=r"cut\.sacct\.gz, line \d+: record: got 'the end of the file inside "
                                                   r"compressed data', expected a complete gzip file"):
            read(cut)
    bad = bytearray(packed)
    bad[len(bad) // 2] ^= 0xFF
    with pytest.raises(TraceFormatError, match="gzip"):
        read_sacct(_write(tmp_path, "bad.sacct.gz", bytes(bad)))
    with pytest.raises(TraceFormatError, match="gzip"):
        read_sacct(_write(tmp_path, "junk.sacct.gz", b"\x1f\x8b" + os.urandom(300)))


def test_a_lower_case_header_is_a_sacct_dump(tmp_path):
    canonical = read_sacct(_sacct(tmp_path))
    for head in (HEAD.lower(), HEAD.upper(), " " + HEAD.replace("|", " | ").lower()):
        path = _sacct(tmp_path, head=head, name="lower.sacct")
        assert is_sacct(path)
        t = pbf.read_swf(path, cleaning=None)
        assert all(np.array_equal(t.columns[k], canonical.columns[k]) for k in ("submit", "run", "req_procs", "gpus"))


def test_byte_order_mark_and_crlf_line_ends_read_as_the_plain_dump(tmp_path):
    plain = read_sacct(_sacct(tmp_path))
    text = "\ufeff" + "\r\n".join([HEAD, ROW, ROW]) + "\r\n"
    other = read_sacct(_write(tmp_path, "crlf.sacct", text))
    assert all(np.array_equal(plain.columns[k], other.columns[k]) for k in plain.columns)


def test_a_field_named_twice_is_refused_and_missing_or_extra_cells_are_named(tmp_path):
    with pytest.raises(TraceFormatError, match="a header naming each field once \\(Submit is in columns 2, 12\\)"):
        read_sacct(_write(tmp_path, "twice.sacct", HEAD + "|submit\n" + ROW + "|x\n"))
    with pytest.raises(TraceFormatError, match="line 3: record: .* 11 \\|-separated fields"):
        read_sacct(_sacct(tmp_path, ROW + "|extra"))
    with pytest.raises(TraceFormatError, match="line 3: record"):
        read_sacct(_sacct(tmp_path, ROW.rsplit("|", 2)[0]))


def test_a_gzip_bomb_of_blank_lines_reads_quickly_and_a_huge_line_is_refused(tmp_path):
    data = (HEAD + "\n" + "\n" * (200 << 20) + ROW + "\n").encode()
    path = _write(tmp_path, "bomb.sacct.gz", gzip.compress(data, 9))
    assert path.stat().st_size < 1 << 20
    start = time.perf_counter()
    t = read_sacct(path)
    assert len(t) == 1 and time.perf_counter() - start < 20
    with pytest.raises(TraceFormatError, match="line 2: record: .* a line of at most 1,048,576 bytes"):
        read_sacct(_write(tmp_path, "long.sacct", HEAD + "\n" + "x" * (3 << 20) + "\n"))
    assert [n for n, _ in text_lines(_write(tmp_path, "lines.txt", "a\n\n \r\n\tb\r\nc"))] == [1, 4, 5]


def test_binary_and_nul_bytes_are_refused_as_a_dump_or_as_swf(tmp_path):
    for data in (os.urandom(4000), b"\x00" * 4000, (HEAD + "\n").encode() + b"\x00\xff" * 100):
        with pytest.raises(TraceFormatError):
            pbf.read_swf(_write(tmp_path, "bin.sacct", data))


def test_since_until_and_pack_are_bounded(tmp_path):
    path = _sacct(tmp_path)
    for kw in ({"since": math.inf}, {"until": float("nan")}, {"since": 10 ** 30}, {"since": "２０２４-01-01"},
               {"pack_days": math.inf}, {"pack_days": 1e300}, {"pack_days": True}):
        with pytest.raises(ConfigError):
            read_sacct(path, **kw)


def test_cli_refuses_a_hostile_dump_with_one_line(tmp_path, capsys):
    path = _sacct(tmp_path, _row(ElapsedRaw="²"))
    for argv in (["replay", str(path), "--units", "64", "--quiet"],
                 ["trace", "from-sacct", str(path), "-o", str(tmp_path / "x.swf")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("pbf: error: ") and "ElapsedRaw" in err
    assert not (tmp_path / "x.swf").exists()


def test_parse_duration_is_finite_ascii_and_bounded():
    assert parse_duration("2w") == 1209600 and parse_duration(" 90 ") == 90
    for bad in ("1e400", "inf", "nan", "²", "1_000", "-5", "0.2", str(MAX_TIME + 1), math.inf, 10 ** 30):
        with pytest.raises(ConfigError):
            parse_duration(bad, "--window")


# ---------------------------------------------------------------------------------------------- sdiag
def _sdiag(mean_cycle="5000", depth_try="90", cycles="40"):
    return ("*" * 55 + "\nsdiag output at Tue Nov 24 10:00:00 2026 (1795500000)\n" + "*" * 55 + "\n"
            "Backfilling stats\n"
            f"\tTotal cycles: {cycles}\n\tLast cycle: 6200\n\tMax cycle:  9000\n\tMean cycle: {mean_cycle}\n"
            f"\tLast depth cycle: 120\n\tLast depth cycle (try sched): 100\n\tDepth Mean: 99\n"
            f"\tDepth Mean (try depth): {depth_try}\n\nLatency for 1000 calls to gettimeofday(): 23 microseconds\n")


@pytest.mark.parametrize("text, message", [
    (_sdiag(mean_cycle="1e100"), "line 8: Mean cycle='1e100': expected a whole number of microseconds from 0 to"),
    (_sdiag(depth_try=BIG), "line 12: Depth Mean \\(try depth\\)='99999.*: expected a whole number of jobs"),
    (_sdiag(cycles="٤٠"), "line 5: Total cycles='٤٠': expected a whole number of cycles"),
    (_sdiag(mean_cycle="-3"), "line 8: Mean cycle='-3'"),
    (_sdiag(mean_cycle=""), "line 8: Mean cycle=''"),
], ids=["1e100", "400 digits", "arabic digits", "negative", "empty"])
def test_sdiag_numbers_out_of_range_name_file_line_and_field(tmp_path, text, message):
    with pytest.raises(SdiagError, match=r"s\.txt, " + message):
        read_sdiag(_write(tmp_path, "s.txt", text))


def test_sdiag_fits_pbf_cannot_charge_are_refused_not_overflowed():
    # a cycle of 1 job taking 1 us and of 2 taking 2**63 - 1: n^63
    steep = _sdiag().replace("Last cycle: 6200", "Last cycle: 1").replace("(try sched): 100", "(try sched): 1")
    steep = steep.replace("Mean cycle: 5000", f"Mean cycle: {2 ** 63 - 1}").replace("(try depth): 90", "(try depth): 2")
    with pytest.raises(SdiagError, match="steeper than pbf's cost model takes"):
        fit_cost(read_sdiag(steep))
    # depths a float cannot tell apart: one depth, a constant cost per job
    close = steep.replace("(try sched): 1\n", f"(try sched): {2 ** 60}\n").replace("(try depth): 2\n",
                                                                                    f"(try depth): {2 ** 60 + 1}\n")
    fit = fit_cost(read_sdiag(close))
    assert fit.power == 1.0 and math.isfinite(fit.pref_us) and math.isfinite(fit.rel_error)


def test_sdiag_hostile_lines_read_in_linear_time(tmp_path):
    text = _sdiag().replace("\tLast cycle: 6200", "\tLast cycle: 6200\n\ta" + " " * 300_000 + "b")
    start = time.perf_counter()
    assert len(read_sdiag(_write(tmp_path, "s.txt", text))) == 1
    assert time.perf_counter() - start < 5
    with pytest.raises(SdiagError, match="no sdiag backfill statistics"):
        read_sdiag(_write(tmp_path, "bin.txt", os.urandom(5000)))


def test_cli_calibrate_sdiag_refuses_with_one_line(tmp_path, capsys):
    assert main(["calibrate", "sdiag", str(_write(tmp_path, "s.txt", _sdiag(mean_cycle="1e100")))]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pbf: error: ") and "s.txt, line 8: Mean cycle" in err


# -------------------------------------------------------------------------------------- sacctmgr dumps
def _chain(depth, user="u"):
    return ("Parent - 'root'\n" + "".join(f"Account - 'a{i}':Fairshare=1\nParent - 'a{i}'\n" for i in range(depth))
            + f"User - '{user}':Fairshare=1\n")


def test_a_chain_of_200000_nested_accounts_is_refused_at_its_line_not_a_crash(tmp_path):
    path = _write(tmp_path, "deep.cfg", _chain(200_000))
    with pytest.raises(ConfigError, match=r"deep\.cfg, line 2002: Account - 'a1000' would sit 1,001 levels below "
                                          r"the root; pbf takes association trees at most 1,000 levels deep"):
        Associations.from_sacctmgr_dump(path)
    names = ("root",) + tuple(f"a{i}" for i in range(MAX_DEPTH + 1))
    with pytest.raises(ConfigError, match="levels below the root"):
        Associations(names + ("u",), (-1,) + tuple(range(len(names))), (1,) * (len(names) + 1),
                     (False,) * len(names) + (True,), (len(names),))


def test_the_deepest_tree_taken_gives_the_same_factors_in_python_and_the_core(tmp_path):
    text = _chain(MAX_DEPTH - 1, "deep") + "Parent - 'root'\nUser - 'shallow':Fairshare=1\n"
    tree = Associations.from_sacctmgr_dump(_write(tmp_path, "d.cfg", text), ["deep", "shallow"])
    usage = [5.0, 1.0]
    want = fair_tree_factors(tree, usage)          # (the oracle walks without recursion)
    core = _core.Core(4)
    a = tree.arrays()
    core.set_associations(a["parent"], a["shares_norm"], a["is_user"], a["user_of"], a["user_assocs"])
    assert list(core.fair_share_factors(np.array(usage))) == list(want) == [0.5, 1.0]


@pytest.mark.parametrize("text, message", [
    ("Parent - 'root'\nUser - 'u':Fairshare=" + BIG + "\n",
     "line 2: FairShare='99999.*': expected a whole number from 0 to 2,147,483,646"),
    ("Parent - 'root'\nUser - 'u':Fairshare=²\n", "line 2: FairShare='²'"),
    ("Parent - 'root'\nUser - 'u':Fairshare=-1\n", "line 2: FairShare='-1'"),
    ("Parent - 'root'\nUser - 'u\x00':Fairshare=1\n", "line 2: binary data \\(a NUL byte\\)"),
    ("Parent - 'root'\nUser - 'u" + "x" * 100_000, "line 2: \"'uxxxxxxxx.*\\.\\.\\.\": expected a quoted name"),
    ("Parent - 'nowhere'\n", "line 1: Parent - 'nowhere': no such account"),
], ids=["400 digits", "superscript", "negative", "NUL", "unquoted long name", "no such parent"])
def test_sacctmgr_dump_errors_name_file_line_and_value(tmp_path, text, message):
    with pytest.raises(ConfigError, match=r"x\.cfg, " + message):
        Associations.from_sacctmgr_dump(_write(tmp_path, "x.cfg", text))


def test_a_binary_sacctmgr_dump_is_refused_cleanly(tmp_path):
    for data in (os.urandom(3000), b"\xff\xfe" + "Parent - 'root'".encode("utf-16-le"), b"\x00" * 100):
        with pytest.raises(ConfigError):
            Associations.from_sacctmgr_dump(_write(tmp_path, "bin.cfg", data))


def test_a_hostile_field_list_reads_in_linear_time(tmp_path):
    start = time.perf_counter()
    for tail in (":a" * 200_000, ":" + "a" * 400_000, ":=" * 200_000, ":x='" + "a" * 400_000):
        tree = Associations.from_sacctmgr_dump(_write(tmp_path, "w.cfg", "Parent - 'root'\nUser - 'u'" + tail + "\n"))
        assert tree.by_name == (("u", 1),)
    assert time.perf_counter() - start < 10


def test_missing_trace_users_are_named_with_the_dump(tmp_path, capsys):
    from pbf.plugins.multifactor import Multifactor
    no_users = _write(tmp_path, "accounts.cfg", "Parent - 'root'\nAccount - 'x':Fairshare=1\n")
    mf = Multifactor(fairshare="fair-tree", associations=Associations.from_sacctmgr_dump(no_users))
    with pytest.raises(ConfigError, match=r"multifactor associations of .*accounts\.cfg: 3 of the trace's 3 users have "
                                          r"none, e\.g\. 'ann': the sacctmgr dump has no user associations"):
        mf.tree_for(3, ["ann", "bo", "cy"])
    some = Associations.from_sacctmgr_dump(_write(tmp_path, "some.cfg", _chain(1, "ann")))
    with pytest.raises(ConfigError, match=r"some\.cfg: trace user 'bo' has no association \(nor do 2 more of the "
                                          r"trace's 4 users: 'cy', 'di'\)"):
        some.for_users(["ann", "bo", "cy", "di"])
    trace = "tests/data/slurm_harness/hetero8_jobs.sacct"
    assert main(["replay", trace, "--units", "100", "--priority", "multifactor", "--mf-fair-share", "fair-tree",
                 "--mf-associations", str(no_users), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "accounts.cfg: 8 of the trace's 8 users have none, e.g. 'u1'" in err


# ------------------------------------------------------------------------------------------ failures
FAIL_HEAD = "time,nodes,duration,kind\n"


@pytest.mark.parametrize("row, field, expected", [
    ("9" * 30 + ",1,10,fail", "time", "a whole number of seconds from -1,099,511,627,776 to 1,099,511,627,776"),
    ("1,1," + "9" * 30 + ",fail", "duration", "a whole number of seconds from 1 to 1,099,511,627,775"),
    (f"{MAX_TIME - 5},1,10,fail", "duration", "from 1 to 5"),
    ("²,1,10,fail", "time", "a whole number of seconds"),
    ("1_0,1,10,fail", "time", "a whole number of seconds"),
    ("1,٣,10,fail", "nodes", "node indices 0..31"),
    ("1,0-" + BIG + ",10,fail", "nodes", "node indices 0..31"),
    ("1,0-99999999999999999,10,fail", "nodes", "nodes that exist (0 to 31)"),
], ids=lambda v: v if len(v) < 30 else v[:20] + "...")
def test_failure_file_numbers_are_bounded(tmp_path, row, field, expected):
    with pytest.raises(TraceFormatError) as err:
        read_failures(_write(tmp_path, "f.csv", FAIL_HEAD + row + "\n"), NodeLayout.of(2, 64))
    assert (err.value.line, err.value.field) == (2, field) and expected in err.value.expected


def test_failure_files_binary_nul_long_fields_bom_and_crlf(tmp_path):
    layout = NodeLayout.of(2, 64)
    with pytest.raises(TraceFormatError, match=r"b\.csv, line 3: record: got 'binary data \(byte 0xff"):
        read_failures(_write(tmp_path, "b.csv", FAIL_HEAD.encode() + b"1,1,10,fail\n\xff\xfe\n"), layout)
    with pytest.raises(TraceFormatError, match="line 2: record: .* NUL byte"):
        read_failures(_write(tmp_path, "n.csv", FAIL_HEAD + "1,1\x00,10,fail\n"), layout)
    with pytest.raises(TraceFormatError, match="line 2: record: .*field larger than field limit"):
        read_failures(_write(tmp_path, "l.csv", FAIL_HEAD + "1," + "x" * 200_000 + ",10,fail\n"), layout)
    out = read_failures(_write(tmp_path, "w.csv", "\ufeff" + FAIL_HEAD.replace("\n", "\r\n") + "5,3,10,fail\r\n"),
                        layout)
    assert [(o.time, o.units, o.until) for o in out] == [(5, (6, 7), 15)]


def test_failure_outages_are_capped_before_they_fill_the_memory(tmp_path):
    layout = NodeLayout.of(1, 1 << 16)
    rows = [f"{i},0-65535,10,fail\n" for i in range(200)]          # 13 M node units named
    with pytest.raises(TraceFormatError, match="line 130: field nodes: .* outages that name at most 8,388,608 node "
                                               "units in all"):
        read_failures(_write(tmp_path, "all.csv", FAIL_HEAD + "".join(rows)), layout)
    many = read_failures(_write(tmp_path, "m.csv", FAIL_HEAD + "".join(rows[:100])), layout)   # (fine)
    with pytest.raises(ConfigError, match="more than the 256 MiB pbf gives them"):
        core_events(many * 300, 1 << 24)
    # overlapping ranges are merged before they are expanded
    (o,) = read_failures(_write(tmp_path, "o.csv", FAIL_HEAD + "1,0-65535;0-65535 5 7-9,10,fail\n"), layout)
    assert o.units == tuple(range(1 << 16))
    with pytest.raises(ConfigError, match="draws about .* failures; pbf draws at most"):
        generate_failures(layout, 0, 365 * 86400, 0.001, 0.001, 0)
    for bad in ("²", "9" * 30, 0, 1 << 30):
        with pytest.raises(ConfigError, match="node_cores"):
            NodeLayout.of(bad, 64)
    with pytest.raises(ConfigError, match="repair_hours"):
        pbf.Failures(mtbf_hours=10, repair_hours=1e300)


def test_cli_replay_refuses_a_hostile_failure_file_with_one_line(tmp_path, capsys):
    path = _write(tmp_path, "f.csv", FAIL_HEAD + "9" * 30 + ",1,10,fail\n")
    assert main(["replay", SWF, "--failures", str(path), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pbf: error: ") and "f.csv, line 2: field time" in err


# ---------------------------------------------------------------------------------------- fuzz tests
HOSTILE = ["", " ", "-1", "0", "+5", "²", "٣", "１２", "𝟗", "1e100", "1e400", "inf", "nan", "1_000", "0x10", "1.5",
           "9" * 19, "9" * 20, "9" * 400, "9223372036854775808", "4294967296", "16777217", "1099511627777", "\x00",
           "\ufeff", "\u2028", "\r", "|", ":", ",", "'", '"', "#", "=", "-", "3-1", "1-", "x" * 2000]


def hostile_or(*valid):
    return st.one_of(st.sampled_from(valid), st.sampled_from(HOSTILE), st.text(max_size=8))


def _tmp(data):
    fd, name = tempfile.mkstemp(prefix="pbf-fuzz-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return name


def _spite(draw):
    """How often this example puts a hostile value where a valid one goes: never, rarely or often."""
    rate = draw(st.sampled_from([0, 0, 25, 4]))
    return lambda: bool(rate) and draw(st.integers(0, rate - 1)) == 0


def _damage(draw, text):
    """The text's bytes, perhaps gzipped, truncated or with bytes changed."""
    data = text.encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["plain"] * 6 + ["gzip", "cut-gzip", "flip", "crlf"]))
    if how == "gzip":
        data = gzip.compress(data)
    elif how == "cut-gzip":
        data = gzip.compress(data)
        data = data[:draw(st.integers(0, len(data)))]
    elif how == "flip" and data:
        b = bytearray(data)
        for _ in range(draw(st.integers(1, 5))):
            b[draw(st.integers(0, len(b) - 1))] = draw(st.integers(0, 255))
        data = bytes(b)
    elif how == "crlf":
        data = data.replace(b"\n", b"\r\n")
    return data


SACCT_FIELDS = {
    "JobID": ("7", "7.batch", "7_3", "8"), "Submit": ("2024-03-01T10:00:00", "2024-03-01T09:00:00", "Unknown"),
    "Start": ("2024-03-01T10:00:30", "Unknown", "None"), "ElapsedRaw": ("3600", "0"),
    "Elapsed": ("01:00:00", "1-00:00:00", "05:06.7", "1-02:03"), "TimelimitRaw": ("120", "UNLIMITED"),
    "Timelimit": ("02:00:00", "UNLIMITED", "Partition_Limit", "30"), "ReqCPUS": ("4", "1"), "AllocCPUS": ("4",),
    "ReqNodes": ("1", "2-4"), "ReqMem": ("4Gn", "2000Mc", "4G", "0", "1.5Tc"),
    "ReqTRES": ("cpu=4,gres/gpu=2", "cpu=1"), "Constraints": ("a&b", "(null)"),
    "State": ("COMPLETED", "FAILED", "CANCELLED by 5", "RUNNING"), "User": ("alice", "bob"), "Partition": ("p",),
}


@st.composite
def sacct_dumps(draw):
    bad = _spite(draw)
    names = draw(st.lists(st.sampled_from(sorted(SACCT_FIELDS)), min_size=1, max_size=len(SACCT_FIELDS), unique=True))
    for must in ("JobID", "Submit", "ElapsedRaw", "ReqCPUS"):
        if must not in names and not bad():
            names.append(must)
    names = draw(st.permutations(names))
    spelled = [draw(st.sampled_from([n, n.lower(), n.upper()])) for n in names]
    lines = ["|".join(spelled)]
    for _ in range(draw(st.integers(0, 6))):
        cells = [draw(hostile_or(*SACCT_FIELDS[n])) if bad() else draw(st.sampled_from(SACCT_FIELDS[n]))
                 for n in names]
        if bad():
            cells = cells[:-1]
        lines.append("|".join(cells))
    return _damage(draw, "\n".join(lines) + "\n")


@FUZZ
@given(sacct_dumps())
def test_fuzz_sacct_dumps_read_sanely_or_refuse(data):
    path = _tmp(data)
    try:
        for read in (read_sacct, pbf.read_swf):
            try:
                t = read(path)
            except PbfError:
                continue
            c = t.columns
            if len(t):
                assert (c["submit"] >= 0).all() and (c["submit"] <= 2 * MAX_TIME).all()
                assert (c["run"] >= -1).all() and (c["run"] <= MAX_TIME).all()
                assert (c["req_time"] >= -1).all() and (c["req_time"] <= MAX_TIME).all()
                assert (c["req_procs"] >= 0).all() and (c["req_procs"] <= MAX_UNITS).all()
                assert np.isfinite(c["req_mem"]).all()
                if "mem_core_mb" in c:
                    assert (c["mem_core_mb"] <= MAX_NODE_MEMORY_MB).all()
                    assert (c["mem_node_mb"] <= MAX_NODE_MEMORY_MB).all()
                    assert (c["nodes_min"] >= 1).all() and (c["gpus"] >= 0).all()
    finally:
        os.unlink(path)


SDIAG_VALUES = ("1", "40", "6200", "100", "90", "123456789", "7", "0")
SDIAG_LINES = ("Total backfilled jobs (since last slurm start)", "Total cycles", "Last cycle", "Max cycle",
               "Mean cycle", "Last depth cycle", "Last depth cycle (try sched)", "Depth Mean", "Depth Mean (try depth)",
               "Last queue length", "Queue length mean")


@st.composite
def sdiag_outputs(draw):
    bad = _spite(draw)
    out = []
    for _ in range(draw(st.integers(0 if bad() else 1, 4))):
        out += ["*" * 55, "sdiag output at Tue Nov 24 10:00:00 2026 (1795500000)", "*" * 55, "Jobs submitted: 20", ""]
        if draw(st.booleans()):
            out += ["Main schedule statistics (microseconds):", "\tLast cycle:   9", "\tMean cycle:   72", ""]
        out.append(draw(st.sampled_from(["Backfilling stats", "Backfilling stats (WARNING: data obtained in the "
                                         "middle of backfilling execution.)"])))
        before_any = draw(st.integers(0, 4)) == 0               # sdiag leaves the means out then
        for label in SDIAG_LINES:
            if before_any and ("Mean" in label or "mean" in label):
                continue
            if bad() and draw(st.booleans()):
                continue
            value = "0" if before_any else (draw(hostile_or(*SDIAG_VALUES)) if bad() else
                                            draw(st.sampled_from(SDIAG_VALUES[:-1])))
            indent = draw(st.sampled_from(["\t", " ", ""])) if bad() else "\t"
            out.append(f"{indent}{label}:{draw(st.sampled_from([' ', '  ']))}{value}")
        out += ["", "Latency for 1000 calls to gettimeofday(): 23 microseconds"]
    return _damage(draw, "\n".join(out) + "\n")


@FUZZ
@given(sdiag_outputs())
def test_fuzz_sdiag_outputs_fit_sanely_or_refuse(data):
    path = _tmp(data)
    try:
        try:
            snaps = read_sdiag(path)
            fit = fit_cost(snaps)
        except PbfError:
            return
        assert 0 < fit.power <= 4 and 0 < fit.pref_us <= MAX_TIME and math.isfinite(fit.rel_error)
        assert snaps.skipped >= 0 and all(math.isfinite(fit.cycle_us(n)) for n in (1, 500, 10 ** 6))
    finally:
        os.unlink(path)


@st.composite
def sacctmgr_dumps(draw):
    bad = _spite(draw)
    lines = [draw(st.sampled_from(["# dump", "Cluster - 'c':Fairshare=1:QOS='normal'", ""])), "Parent - 'root'"]
    accounts = ["root"]
    for i in range(draw(st.integers(0, 12))):
        kind = draw(st.sampled_from(["Account", "User", "User", "Parent"] + (["Other"] if bad() else [])))
        share = draw(hostile_or("1", "0", "5", "30")) if bad() else draw(st.sampled_from(["1", "0", "5", "30"]))
        if kind == "Parent":
            name = draw(st.sampled_from(HOSTILE)) if bad() else draw(st.sampled_from(accounts))
            lines.append(f"Parent - '{name}'")
        elif kind == "Account":
            accounts.append(f"a{i}")
            lines.append(f"Account - 'a{i}':Description='d':Fairshare={share}")
        elif kind == "User":
            user = draw(st.sampled_from(["u1", "u2", "u3"]))
            lines.append(f"User - '{user}':DefaultAccount='{draw(st.sampled_from(accounts))}':Fairshare={share}")
        else:
            lines.append(draw(st.text(max_size=30)))
    for user in ("u1", "u2", "u3"):
        if not bad():
            lines.append(f"User - '{user}':DefaultAccount='{draw(st.sampled_from(accounts))}':Fairshare=1")
    return _damage(draw, "\n".join(lines) + "\n")


@FUZZ
@given(sacctmgr_dumps(), st.lists(st.floats(0, 1e9), min_size=3, max_size=3))
def test_fuzz_sacctmgr_dumps_give_the_same_factors_in_python_and_the_core_or_refuse(data, usage):
    path = _tmp(data)
    try:
        try:
            tree = Associations.from_sacctmgr_dump(path, ["u1", "u2", "u3"])
        except PbfError:
            return
        want = fair_tree_factors(tree, usage)
        core = _core.Core(4)
        a = tree.arrays()
        core.set_associations(a["parent"], a["shares_norm"], a["is_user"], a["user_of"], a["user_assocs"])
        assert np.array_equal(core.fair_share_factors(np.array(usage)), want)
        assert ((want > 0) & (want <= 1)).all()
    finally:
        os.unlink(path)


@st.composite
def failure_files(draw):
    cols = draw(st.permutations(["time", "nodes", "duration", "kind"]))
    valid = {"time": ("0", "3600", "-5", "100"), "nodes": ("0", "0-3", "1;5", "2 3", "31", "0-31"),
             "duration": ("10", "", "7200"), "kind": ("fail", "drain", "resume", "FAIL")}
    bad = _spite(draw)
    lines = [",".join(cols)]
    for _ in range(draw(st.integers(0, 6))):
        cells = [draw(hostile_or(*valid[c])) if bad() else draw(st.sampled_from(valid[c])) for c in cols]
        kind = cells[cols.index("kind")].strip().lower()
        if not bad() and kind in ("fail", "resume"):     # (a failure needs a duration, a resume takes none)
            cells[cols.index("duration")] = "" if kind == "resume" else "60"
        lines.append(",".join(cells) + draw(st.sampled_from(["", "", " # note"])))
        if draw(st.integers(0, 5)) == 0:
            lines.append(draw(st.sampled_from(["# comment", "", "  "])))
    return _damage(draw, "\n".join(lines) + "\n")


@FUZZ
@given(failure_files())
def test_fuzz_failure_files_read_sanely_or_refuse(data):
    path = _tmp(data)
    try:
        try:
            out = read_failures(path, NodeLayout.of(2, 64))
            events = core_events(out, 64)
        except PbfError:
            return
        for o in out:
            assert -MAX_TIME <= o.time <= MAX_TIME and (o.until is None or o.time < o.until <= MAX_TIME)
            assert o.units and all(0 <= u < 64 for u in o.units) and o.kind in ("drain", "fail", "resume")
        assert len(events[0]) >= len(out)
    finally:
        os.unlink(path)
