"""The header forms of the Parallel Workloads Archive's cleaned logs load, with the expected cluster size.

Each file under tests/data/swf_headers/ is a small synthetic log written in one of the archive's header
forms: a number followed by a note ("338 (batch partition; 512 total)"), `; Note:` lines with
continuations, `; Queues:`/`; Partitions:` descriptions, `UnixStartTime`/`TimeZoneString` forms,
MaxRecords above MaxJobs, MaxProcs and MaxNodes that disagree.
"""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pbf.errors import TraceFormatError
from pbf.workload import read_swf
from pbf.workload.jobs import SwfHeader, split_number

DATA = Path(__file__).resolve().parent / "data" / "swf_headers"

# file -> (cluster size, which key gave it, the notes kept)
CORPUS = {
    "ctc-annotated-maxnodes.swf": (338, "MaxProcs", {"MaxNodes": "(batch partition; 512 total)",
                                                     "MaxProcs": "(batch partition; 512 total)"}),
    "sdsc-par-annotated-maxnodes.swf": (400, "MaxNodes",
                                        {"MaxNodes": "(48 interactive, 352 batch, 6 service, 10 I/O)"}),
    "sdsc-ds-annotated-maxnodes.swf": (1664, "MaxProcs", {"MaxNodes": "( 6,  171,   7)",
                                                          "MaxProcs": "( 192,  1368,  104)"}),
    "notes-and-continuations.swf": (240, "MaxProcs", {}),
    "maxrecords-over-maxjobs.swf": (128, "MaxProcs", {}),
    "timezone-forms.swf": (128, "MaxProcs", {}),
    "procs-and-nodes-disagree.swf": (4008, "MaxProcs", {}),
    "maxnodes-only-bracket-note.swf": (100, "MaxNodes", {"MaxNodes": "[4 of them service nodes]"}),
}


def test_the_corpus_is_complete():
    assert sorted(p.name for p in DATA.glob("*.swf")) == sorted(CORPUS)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_each_header_form_loads_with_its_cluster_size(name):
    units, source, size_notes = CORPUS[name]
    table = read_swf(DATA / name)
    info = table.header.size_info()
    assert table.header.cluster_units() == units
    assert info["from"] == source and info["units"] == units
    assert info["notes"] == size_notes
    assert len(table) == 3


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_trace_info_and_replay_accept_each_form(name, tmp_path):
    units = CORPUS[name][0]
    # (run from tmp_path: from the repository root, `python -m pbf` would import the unbuilt checkout)
    info = subprocess.run([sys.executable, "-m", "pbf", "trace", "info", "--json", str(DATA / name)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert info.returncode == 0, info.stderr
    summary = json.loads(info.stdout)
    assert summary["cluster_units"] == units
    assert summary["header"]["notes"] == table_notes(name)
    out = tmp_path / "out"
    rep = subprocess.run([sys.executable, "-m", "pbf", "replay", str(DATA / name), "--out", str(out)],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    written = json.loads((out / "summary.json").read_text())
    assert written["units"] == units and written["jobs"]["completed"] == 3
    assert written["header"]["notes"] == CORPUS[name][2]


def table_notes(name):
    return read_swf(DATA / name).header.notes()


def test_other_notes_are_kept_and_never_numbers():
    header = read_swf(DATA / "timezone-forms.swf").header
    assert header.unix_start_time == 893466664
    assert header.number("TimeZone") == -28800
    assert header.notes() == {"UnixStartTime": "(Fri Apr 24 18:11:04 PDT 1998)",
                              "TimeZone": "(deprecated; see TimeZoneString)"}
    header = read_swf(DATA / "maxrecords-over-maxjobs.swf").header
    assert header.number("MaxRecords") == 3 and header.number("MaxJobs") == 2
    assert header.max_runtime == 64800
    assert header.notes()["MaxMemory"] == "(2 GB a node)"
    # repeatable keys stay lists of text
    header = read_swf(DATA / "notes-and-continuations.swf").header
    assert header.fields["Note"][:2] == ["uses MAUI scheduler", "THIS IS A CLEANED VERSION OF THE LOG!"]
    assert header.number("Note") is None


def test_a_header_is_written_back_with_its_notes(tmp_path):
    from pbf.workload import write_swf
    table = read_swf(DATA / "sdsc-par-annotated-maxnodes.swf")
    write_swf(table, tmp_path / "back.swf")
    again = read_swf(tmp_path / "back.swf")
    assert again.header.size_info() == table.header.size_info()
    assert "; MaxNodes: 400 (48 interactive, 352 batch, 6 service, 10 I/O)" in (tmp_path / "back.swf").read_text()


@pytest.mark.parametrize("value, number, note", [
    ("338 (batch partition; 512 total)", "338", "(batch partition; 512 total)"),
    ("184  ( 6,  171,   7)", "184", "( 6,  171,   7)"),
    ("100[4 of them service nodes]", "100", "[4 of them service nodes]"),
    ("-28800", "-28800", ""),
    ("  64  ", "64", ""),
    ("2.2", "2.2", ""),
])
def test_split_number(value, number, note):
    assert split_number(value) == (number, note)


@pytest.mark.parametrize("value", ["338abc", "2^63", "inf", "inf (none)", "about 400", "(400)", "0x10",
                                   "١٢٨", "", "nan"])
def test_no_leading_number(value):
    assert split_number(value) is None


@pytest.mark.parametrize("value", ["1e400", "1e400 (big)", "inf", "9223372036854775808", "9223372036854775808 (2^63)",
                                   "16777217", "0 (none)", "-64", "338abc", "about 400", "(400)", "12.5 (half)",
                                   "١٢٨ (arabic digits)"])
def test_absurd_or_wordy_sizes_are_still_refused(value, tmp_path):
    path = tmp_path / "bad.swf"
    path.write_text(f"; Version: 2.2\n; MaxNodes: {value}\n"
                    "1 0 5 120 16 -1 -1 16 600 -1 1 1 1 -1 1 -1 -1 -1\n")
    with pytest.raises(TraceFormatError) as err:
        read_swf(path)
    text = str(err.value)
    assert "line 2" in text and "MaxNodes (header)" in text and "a whole number of units from 1 to" in text
    proc = subprocess.run([sys.executable, "-m", "pbf", "trace", "info", str(path)], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.startswith("pbf: error:") and str(path) in proc.stderr


def test_size_error_names_the_form():
    header = SwfHeader()
    header.add_line(" MaxProcs: 338 (batch partition; 512 total)")
    assert header.size_error("MaxProcs") is None
    header = SwfHeader()
    header.add_line(" MaxProcs: 338abc")
    assert "optionally followed by a note" in header.size_error("MaxProcs")
