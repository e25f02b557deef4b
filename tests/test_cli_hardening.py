"""The command line under misuse and hostile conditions: a clear error (exit 2, one line), or a
correct result with nothing half-written; never a traceback."""
import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pbf
from pbf.cli import main

LUBLIN = Path(__file__).resolve().parents[1] / "traces" / "lublin1-1000.swf.gz"
SAMPLE = Path(__file__).resolve().parents[1] / "traces" / "beocat-2000-1d.swf.gz"


def rec(job, submit, run=10, units=1, req=20):
    return f"{job} {submit} 0 {run} {units} -1 -1 {units} {req} -1 1 1 1 -1 1 -1 -1 -1"


def test_a_closed_pipe_ends_quietly():
    # `pbf list | true`: the reader is gone before pbf writes
    proc = subprocess.run(f"{sys.executable} -m pbf list | true; echo $?", shell=True, capture_output=True, text=True,
                          cwd="/")
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_output_problems_are_found_before_the_replay(tmp_path, capsys):
    afile = tmp_path / "a_file"
    afile.write_text("x")
    assert main(["replay", str(LUBLIN), "--out", str(afile), "--quiet"]) == 2
    assert "exists and is not a folder" in capsys.readouterr().err
    blocked = tmp_path / "o"
    (blocked / "jobs.csv").mkdir(parents=True)
    assert main(["replay", str(LUBLIN), "--out", str(blocked), "--quiet"]) == 2
    assert "a folder of that name is in the way" in capsys.readouterr().err
    assert sorted(os.listdir(blocked)) == ["jobs.csv"] and not (blocked / "summary.json").exists()


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    import pbf.replay_result as rp
    result = pbf.replay(pbf.read_swf(LUBLIN))

    def full(path, columns):
        raise OSError(errno.ENOSPC, "No space left on device", path)
    monkeypatch.setattr(rp, "_write_csv", full)
    for out in (tmp_path / "new", tmp_path / "old"):
        if out.name == "old":
            out.mkdir()
            (out / "summary.json").write_text("earlier run")
        with pytest.raises(OSError):
            result.write(out)
        left = sorted(p.name for p in tmp_path.iterdir())
        assert not any(name.startswith(".pbf-") for name in left), left
    assert not (tmp_path / "new").exists()
    assert (tmp_path / "old" / "summary.json").read_text() == "earlier run"


def test_the_cli_names_the_flag_in_value_errors(capsys):
    for argv, flag in ((["--workers", "0"], "--workers"), (["--bsld-bound", "nan"], "--bsld-bound"),
                       (["--bf-interval", "-3"], "--bf-interval"), (["--units", "99999999999"], "--units")):
        with pytest.raises(SystemExit) as exc:
            main(["replay", str(LUBLIN), *argv])
        assert exc.value.code == 2
        assert f"argument {flag}: expected" in capsys.readouterr().err


def test_nan_never_reaches_json():
    with pytest.raises(pbf.ConfigError, match="bsld_bound must be a finite number"):
        pbf.ReplayConfig(bsld_bound=float("nan"))
    from pbf.replay_result import _finite
    assert _finite({"a": [float("nan"), 1.0, float("inf")]}) == {"a": [None, 1.0, None]}


def test_a_trace_without_requested_times_runs_and_says_so(capsys):
    assert main(["replay", str(LUBLIN)]) == 0
    out = capsys.readouterr().out
    assert "1,000 completed" in out and "0 rejected" in out
    assert "requested times filled from run times for all 1,000 jobs (the trace gives none)" in out


def test_the_summary_accounts_for_every_record(tmp_path, capsys):
    p = tmp_path / "t.swf"
    p.write_text("; MaxProcs: 8\n" + "\n".join([rec(1, 0), rec(2, 1, run=0), rec(3, 2, req=-1), rec(4, 3, units=9),
                                                 rec(5, 4, run=50, req=20)]) + "\n")
    assert main(["replay", str(p), "--json", "--quiet"]) == 0
    s = json.loads(capsys.readouterr().out)
    c, j = s["cleaning"], s["jobs"]
    assert c["records_read"] == 5 and c["dropped_nonpositive_runtime"] == 1 and c["jobs"] == 4
    assert j["submitted"] == 4 and j["completed"] == 2 and j["rejected"] == 2
    assert j["rejected_by_reason"] == {"no requested time (estimate <= 0)": 1, "larger than the cluster": 1}
    assert main(["replay", str(p)]) == 0
    text = capsys.readouterr().out
    assert "5 records read, 4 jobs; dropped 1 run time <= 0" in text and "--fill-missing-request" in text


def test_no_clip_runtime_lets_jobs_run_past_their_request(tmp_path, capsys):
    p = tmp_path / "t.swf"
    p.write_text("; MaxProcs: 8\n" + rec(1, 0, run=50, req=20) + "\n")
    for flag, end in (([], 20), (["--no-clip-runtime"], 50)):
        out = tmp_path / f"o{len(flag)}"
        assert main(["replay", str(p), "--quiet", "--out", str(out), *flag]) == 0
        rows = (out / "jobs.csv").read_text().splitlines()
        head, row = rows[0].split(","), rows[1].split(",")
        assert int(row[head.index("end")]) == end


def test_the_same_jobs_run_under_every_predictor(tmp_path):
    p = tmp_path / "t.swf"
    p.write_text("; MaxProcs: 8\n" + "\n".join([rec(1, 0), rec(2, 1, req=-1), rec(3, 2)]) + "\n")
    t = pbf.read_swf(p)
    for predictor in ("requested", "clairvoyant", "ave2"):
        r = pbf.replay(t, pbf.ReplayConfig(predictor=predictor))
        assert r.summary["jobs"]["rejected_by_reason"] == {"no requested time (estimate <= 0)": 1}, predictor


def test_a_plugin_with_the_wrong_signature_is_a_clear_error(capsys):
    assert main(["replay", str(LUBLIN), "--priority", "os:getcwd", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["pbf: error: priority os:getcwd: raised TypeError: posix.getcwd() takes no arguments (2 given)"]
