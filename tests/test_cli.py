"""The command line: generators, trace info, and clear errors with exit code 2."""
import json
import subprocess
import sys

from pbf.cli import main
from pbf.workload import read_swf


def test_gen_and_info(tmp_path, capsys):
    out = tmp_path / "b.swf.gz"
    assert main(["gen", "beocat", "--traffic", "low", "--jobs", "2000", "--seed", "3", "-o", str(out),
                 "--quiet"]) == 0
    assert len(read_swf(out)) == 2000
    assert main(["trace", "info", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["jobs"] == 2000 and info["cluster_units"] == 9128
    assert info["time"]["span_s"] < 14 * 86400 and info["offered_load"] > 0
    assert set(info["request_accuracy"]) >= {"p50", "p90", "mean"} and info["users"]["count"] > 10
    assert main(["trace", "info", str(out)]) == 0
    text = capsys.readouterr().out
    assert "offered load" in text and "run/request" in text


def test_gen_lublin_and_rescale(tmp_path, capsys):
    lub, resc = tmp_path / "l.swf", tmp_path / "r.swf"
    assert main(["gen", "lublin", "--jobs", "500", "--preset", "lublin-2", "-o", str(lub), "--quiet"]) == 0
    assert main(["gen", "rescale", str(lub), "--window", "1d", "--mode", "pack", "-o", str(resc),
                 "--quiet"]) == 0
    t = read_swf(resc, None)
    assert len(t) == 500 and t.submit.max() - t.submit.min() < 86400
    assert any("rescale" in line for line in t.header.lines)
    assert main(["trace", "info", str(lub), "--fill-missing-request", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cleaning"]["filled_missing_request"] == 500


def test_bad_trace_reports_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 -1 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n2 x\n")
    assert main(["trace", "info", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"pbf: error: {bad}, line 3" in err and "field 2 (submit): got 'x', expected a decimal number" in err
    assert main(["trace", "info", str(bad), "--skip-bad-lines"]) == 0
    assert "1 skipped, first at lines 3" in capsys.readouterr().out


def test_missing_file_and_bad_window(tmp_path, capsys):
    assert main(["trace", "info", str(tmp_path / "nope.swf")]) == 2
    assert "No such file or directory" in capsys.readouterr().err
    assert main(["gen", "beocat", "--window", "soon", "-o", str(tmp_path / "x.swf")]) == 2
    assert "--window must be seconds or a number with s/m/h/d/w, got 'soon'" in capsys.readouterr().err
    assert not (tmp_path / "x.swf").exists()


def test_python_dash_m(tmp_path):
    # run from a neutral folder: from a source checkout, `python -m` would import the uncompiled tree
    r = subprocess.run([sys.executable, "-m", "pbf", "--help"], capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0 and "gen" in r.stdout and "trace" in r.stdout


def test_the_parser_builds_without_numpy(tmp_path):
    """`pbf --help` and the parser stay light: numpy is imported by the commands that need it."""
    import subprocess
    import sys

    from pbf.cli.gen import LUBLIN_PRESET_NAMES
    from pbf.workload.lublin import LUBLIN_PRESETS
    assert LUBLIN_PRESET_NAMES == tuple(LUBLIN_PRESETS)
    code = "import sys, pbf.cli as c; c.build_parser(); print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    assert out.stdout.strip() == "False"


def test_experiments_write_files_only_where_out_says(tmp_path, monkeypatch, capsys):
    # the coalloc study prints its tables and writes its folder only with --out
    from unittest import mock

    from pbf import cli
    from pbf.studies import coalloc
    monkeypatch.chdir(tmp_path)
    written = []
    with mock.patch.object(coalloc, "coalloc_experiment", lambda *a, **k: {"rows": []}), \
            mock.patch.object(coalloc, "format_coalloc", lambda result: "table"), \
            mock.patch.object(coalloc, "write_result", lambda result, out: written.append(out) or [out]):
        assert cli.main(["experiment", "coalloc", "--quiet"]) == 0
        assert written == [] and list(tmp_path.iterdir()) == []
        assert cli.main(["experiment", "coalloc", "--quiet", "--out", "here"]) == 0
        assert written == ["here"]
    assert "table" in capsys.readouterr().out
