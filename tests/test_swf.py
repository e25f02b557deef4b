"""SWF reading, writing, cleaning, and every kind of malformed input."""
import gzip
import re

import numpy as np
import pytest

from pbf.errors import TraceFormatError
from pbf.workload import Cleaning, JobTable, SwfReader, read_swf, write_swf

HEADER = "; Version: 2.2\n; Computer: test\n; MaxProcs: 8\n; MaxNodes: 4\n; UnixStartTime: 1000\n; Note: a\n; Note: b\n"


def rec(job, submit, run=10, procs=1, req=100, alloc=None, user=1):
    alloc = procs if alloc is None else alloc
    return f"{job} {submit} -1 {run} {alloc} -1 -1 {procs} {req} -1 1 {user} 1 -1 -1 -1 -1 -1"


def write(tmp_path, text, name="t.swf", gz=False):
    path = tmp_path / (name + (".gz" if gz else ""))
    data = text.encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def test_reads_fields_and_header(tmp_path):
    p = write(tmp_path, HEADER + rec(1, 0, run=5, procs=2) + "\n" + rec(2, 3, run=7.9, procs=4) + "\n")
    t = read_swf(p)
    assert len(t) == 2
    assert list(t.job_id) == [1, 2] and list(t.submit) == [0, 3]
    assert list(t.run) == [5, 7]           # fractional run times truncate toward zero
    assert list(t.units) == [2, 4] and list(t.req_time) == [100, 100]
    assert t.header.max_procs == 8 and t.header.max_nodes == 4 and t.header.unix_start_time == 1000
    assert t.header.fields["Note"] == ["a", "b"]
    assert list(t.line) == [8, 9]


def test_gzip_is_transparent_and_detected_by_content(tmp_path):
    text = HEADER + rec(1, 0) + "\n"
    plain, packed = read_swf(write(tmp_path, text)), read_swf(write(tmp_path, text, "u.dat", gz=True))
    assert all(np.array_equal(plain.columns[k], packed.columns[k]) for k in plain.columns)


def test_crlf_blank_lines_and_missing_final_newline(tmp_path):
    p = write(tmp_path, "; MaxProcs: 8\r\n\r\n" + rec(1, 0) + "\r\n\n   \n" + rec(2, 1))
    assert list(read_swf(p).job_id) == [1, 2]


def test_blocks_stream_the_file(tmp_path):
    lines = [rec(i, i) for i in range(1, 1001)]
    p = write(tmp_path, HEADER + "\n".join(lines) + "\n")
    blocks = list(SwfReader(p, block_rows=64))
    assert [len(b) for b in blocks] == [64] * 15 + [40]
    assert np.array_equal(np.concatenate([b.job_id for b in blocks]), np.arange(1, 1001))


def test_round_trip_all_fields_and_header(tmp_path):
    rng = np.random.default_rng(3)
    n = 500
    t = JobTable.from_arrays(job_id=np.arange(1, n + 1), submit=np.sort(rng.integers(0, 10**6, n)),
                             run=rng.integers(1, 10**5, n), alloc_procs=rng.integers(1, 64, n),
                             avg_cpu=rng.random(n) * 100, used_mem=rng.integers(-1, 10**6, n),
                             req_procs=rng.integers(1, 64, n), req_time=rng.integers(1, 10**6, n),
                             req_mem=rng.random(n) * 1e3, status=rng.integers(0, 5, n),
                             user=rng.integers(1, 50, n), think_time=rng.integers(-1, 100, n))
    t.header.set("MaxProcs", 64)
    t.header.add_line(" free text line")
    for name in ("out.swf", "out.swf.gz"):
        write_swf(t, tmp_path / name)
        back = read_swf(tmp_path / name, None)
        for k in t.columns:
            assert np.array_equal(t.columns[k], back.columns[k]), k
        assert back.header.lines == t.header.lines
    # the same table gives the same bytes (gzip timestamp fixed)
    write_swf(t, tmp_path / "again.swf.gz")
    assert (tmp_path / "again.swf.gz").read_bytes() == (tmp_path / "out.swf.gz").read_bytes()


def test_default_cleaning_follows_pyss(tmp_path):
    lines = [rec(1, 0, run=10), rec(2, 1, run=0), rec(3, 2, run=-1), rec(4, 3, procs=0, alloc=0),
             rec(5, 4, run=500, req=100), rec(6, 5, req=-1), rec(7, 6, procs=16), rec(8, 7, procs=2, alloc=4)]
    t = read_swf(write(tmp_path, HEADER + "\n".join(lines)))
    r = t.report
    assert (r.records_read, r.dropped_nonpositive_runtime, r.dropped_nonpositive_units) == (8, 2, 1)
    assert (r.clipped_runtime_to_request, r.missing_request, r.oversize, r.jobs) == (1, 1, 1, 5)
    assert list(t.job_id) == [1, 5, 6, 7, 8]
    assert list(t.run) == [10, 100, 10, 10, 10]
    assert list(t.units) == [1, 1, 1, 16, 4]   # max(requested, allocated)
    assert list(t.req_time) == [100, 100, -1, 100, 100]


def test_cleaning_options(tmp_path):
    lines = [rec(1, 0, run=0), rec(2, 1, req=-1, run=50), rec(3, 2, procs=16), rec(4, 3, procs=2, alloc=4)]
    p = write(tmp_path, HEADER + "\n".join(lines))
    t = read_swf(p, Cleaning(drop_nonpositive_runtime=False, fill_missing_request=True, oversize="drop",
                             units_from="requested"))
    assert list(t.job_id) == [1, 2, 4]
    assert t.report.filled_missing_request == 1 and t.report.oversize_dropped == 1
    assert list(t.req_time) == [100, 50, 100] and list(t.units) == [1, 1, 2]
    t = read_swf(p, Cleaning(units_from="allocated", cluster_units=2))
    assert t.report.oversize == 2 and list(t.units) == [1, 16, 4]
    raw = read_swf(p, None)
    assert len(raw) == 4 and raw.report.dropped_nonpositive_runtime == 0


@pytest.mark.parametrize("body, line, field, value, expected", [
    (rec(1, 0) + "\n1 2 3\n", 9, None, "1 2 3", "18 whitespace-separated fields, found 3"),
    (rec(1, 0) + " 19\n", 8, None, None, "found 19"),
    (rec(1, 0) + "\n" + rec(2, 1).replace(" 100 ", " 1O0 ", 1) + "\n", 9, "9 (req_time)", "1O0", "a decimal number"),
    (rec(1, 0) + "\n" + rec(2, "abc") + "\n", 9, "2 (submit)", "abc", "a decimal number"),
    (rec(1, 0) + "\n" + rec(2, "nan") + "\n", 9, "2 (submit)", "nan", "a decimal number"),
    (rec(1, 0) + "\n" + rec(2, -5) + "\n", 9, "2 (submit)", "-5", "a submit time >= 0 (or -1: missing)"),
    (rec(1, 0) + "\n" + rec(2, "1e300") + "\n", 9, "2 (submit)", None, "below 2**62"),
    (rec(1, 10) + "\n" + rec(2, 5) + "\n", 9, "2 (submit)", "5", "a submit time >= 10 (line 8)"),
])
def test_malformed_input_names_file_line_field_value(tmp_path, body, line, field, value, expected):
    p = write(tmp_path, HEADER + body)
    with pytest.raises(TraceFormatError) as info:
        read_swf(p)
    err = info.value
    assert err.path == str(p) and err.line == line and err.field == field
    if value is not None:
        assert err.value == value
    assert expected in str(err) and f"{p}, line {line}" in str(err)


def test_missing_submit_is_dropped_and_counted(tmp_path):
    p = write(tmp_path, HEADER + "\n".join([rec(1, 0), rec(2, -1, run=-1), rec(3, 5)]))
    t = read_swf(p)
    assert list(t.job_id) == [1, 3] and t.report.dropped_missing_submit == 1
    assert list(read_swf(p, None).job_id) == [1, 2, 3]


def test_unsorted_submits_are_sorted_on_request(tmp_path):
    p = write(tmp_path, HEADER + "\n".join([rec(1, 10), rec(2, 5), rec(3, 7)]))
    t = read_swf(p, sort=True)
    assert list(t.job_id) == [2, 3, 1] and t.report.sorted_by_submit


def test_truncated_gzip_is_a_trace_error(tmp_path):
    data = gzip.compress((HEADER + "\n".join(rec(i, i) for i in range(1, 5000))).encode())
    p = tmp_path / "cut.swf.gz"
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match="truncated: the data stops in line") as err:
        read_swf(p)
    # the line reached: past the header, and every record before it was readable
    assert 100 < err.value.line < 5000
    with pytest.raises(TraceFormatError, match="corrupt gzip data"):
        bad = bytearray(data)
        bad[len(bad) // 2: len(bad) // 2 + 64] = b"x" * 64
        p.write_bytes(bytes(bad))
        read_swf(p)


@pytest.mark.parametrize("value", ["inf", "1e400", "9223372036854775808", "1e18", "100000000000", "abc", "0",
                                   "-5", "nan", "", "12.5", "64cpus", "16777217"])
def test_a_bad_cluster_size_in_the_header_is_a_trace_error(tmp_path, value):
    for key in ("MaxProcs", "MaxNodes"):
        p = write(tmp_path, f"; {key}: {value}\n" + rec(1, 0))
        with pytest.raises(TraceFormatError, match=f"line 1: field {key} \\(header\\): got '{re.escape(value)}', "
                                                   "expected a whole number of units from 1 to 16,777,216"):
            read_swf(p)
        # skipped (and counted) with skip_bad_lines: the cluster size then comes from elsewhere
        t = read_swf(p, skip_bad_lines=True)
        assert t.header.cluster_units() is None and t.report.bad_lines_skipped == 1


def test_a_trace_wider_than_the_largest_cluster_needs_its_size(tmp_path):
    import pbf
    p = write(tmp_path, "1 0 0 10 2147483648 -1 -1 2147483648 10 -1 1 1 1 -1 1 -1 -1 -1\n")
    with pytest.raises(pbf.ConfigError, match="widest job asks for 2,147,483,648 units.*--units N"):
        pbf.replay(read_swf(p))
    r = pbf.replay(read_swf(p), pbf.ReplayConfig(units=64))
    assert r.summary["jobs"]["rejected_by_reason"] == {"larger than the cluster": 1}
    with pytest.raises(pbf.ConfigError, match="units must be an int from 1 to 16,777,216"):
        pbf.Cluster(units=1 << 25)


def test_skip_bad_lines_reports_count_and_first_lines(tmp_path):
    lines = [rec(1, 0), "garbage", rec(2, 1), "1 2", rec(3, "x"), rec(4, 2), "7 8 9", "a b", "c", rec(5, 3)]
    p = write(tmp_path, HEADER + "\n".join(lines))
    t = read_swf(p, skip_bad_lines=True)
    assert list(t.job_id) == [1, 2, 4, 5]
    assert t.report.bad_lines_skipped == 6
    assert t.report.first_bad_lines == (9, 11, 12, 14, 15)
    assert t.report.records_read == 10


def test_empty_and_header_only_files(tmp_path):
    assert len(read_swf(write(tmp_path, ""))) == 0
    t = read_swf(write(tmp_path, HEADER, "h.swf"))
    assert len(t) == 0 and t.header.max_procs == 8


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_swf(tmp_path / "absent.swf")


def test_sdsc_sp2_with_pyss_cleaning(shared_trace):
    t = read_swf(shared_trace("SDSC-SP2-1998-4.2-cln.swf.gz"))
    r = t.report
    assert r.records_read == 59715 and t.header.max_procs == 128
    assert r.dropped_nonpositive_runtime == 5681 and r.dropped_nonpositive_units == 0
    assert len(t) == 54034 and (t.run <= np.where(t.req_time > 0, t.req_time, t.run)).all()
    assert (np.diff(t.submit) >= 0).all()


@pytest.mark.parametrize("name, jobs", [("HPC2N-2002-2.2-cln.swf.gz", 202871),
                                        ("LLNL-Thunder-2007-1.1-cln.swf.gz", 121039)])
def test_other_real_logs_read_whole(shared_trace, name, jobs):
    t = read_swf(shared_trace(name), None)
    assert len(t) == jobs
    cleaned = read_swf(shared_trace(name))
    assert cleaned.report.jobs == len(cleaned) and (cleaned.submit >= 0).all()
