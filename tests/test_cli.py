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


def test_pbf_help_loads_neither_numpy_nor_the_commands(tmp_path):
    """`pbf --help` builds only the command table; `pbf replay --help` adds replay's options, still without numpy."""
    import os
    from pathlib import Path

    import pbf
    # the pbf this test imports, also in the child (run from a neutral folder, as test_python_dash_m)
    root = str(Path(pbf.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}

    def imported(*argv):
        r = subprocess.run([sys.executable, "-X", "importtime", "-m", "pbf", *argv], capture_output=True, text=True,
                           cwd=tmp_path, env=env)
        assert r.returncode == 0 and "usage: pbf" in r.stdout
        return {line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")}
    top = imported("--help")
    assert "numpy" not in top and "pbf.cli.commands" in top
    assert not {m for m in top if m.startswith("pbf.cli.") and m not in ("pbf.cli.commands", "pbf.cli.process")}
    replay = imported("replay", "--help")
    # (-X importtime lists what import statements load, not importlib.import_module: replay's own imports show)
    assert "numpy" not in replay and "pbf.cli.replay_text" in replay
    assert "pbf.cli.replay_settings" not in replay and "pbf.cli.experiment_parallel" not in replay


def test_each_experiment_takes_only_its_own_flags(capsys):
    import pytest

    from pbf.cli import build_parser
    parser = build_parser()
    for argv in (["experiment", "coalloc", "--cost-per-test", "5"], ["experiment", "coalloc", "--held-out"],
                 ["experiment", "rlscheduler", "--grid"], ["experiment", "runtime-prediction", "--workers", "1,2"],
                 ["experiment", "parallel-backfill", "--sweep"], ["experiment", "parallel-backfill", "--held-out"],
                 ["experiment", "parallel-backfill", "--grid", "--mechanisms"], ["experiment", "unknown"]):
        with pytest.raises(SystemExit) as exc:
            parser.parse_args(argv)
        assert exc.value.code == 2, argv
    err = capsys.readouterr().err
    assert "unrecognized arguments: --cost-per-test" in err and "not allowed with argument --grid" in err
    args = parser.parse_args(["experiment", "parallel-backfill", "--grid", "--scale", "0.1"])
    assert args.grid and args.scale == 0.1 and not args.mechanisms
    assert parser.parse_args(["experiment", "rlscheduler", "--held-out"]).held_out
    assert parser.parse_args(["experiment", "rlscheduler", "--held-out-windows", "100"]).held_out_windows == 100
    with pytest.raises(SystemExit):
        parser.parse_args(["experiment", "rlscheduler", "--held-out-windows", "1"])


def test_an_experiment_prints_json_and_writes_only_where_out_says(tmp_path, monkeypatch, capsys):
    from unittest import mock

    from pbf.studies import validation
    monkeypatch.chdir(tmp_path)
    result = {"rows": [{"bsld": 1.5}]}

    def study(trace_dir, sequences, traces, progress):
        progress({"name": "fcfs", "bsld": 1.5, "wall_s": 0.1})
        return result
    with mock.patch.object(validation, "priority_functions", study), \
            mock.patch.object(validation, "format_priority_functions", lambda r: "the table"):
        assert main(["experiment", "priority-functions", "--trace", "."]) == 0
        out, err = capsys.readouterr()
        assert out == "the table\n" and "fcfs: 1.50" in err and list(tmp_path.iterdir()) == []
        assert main(["experiment", "priority-functions", "--trace", ".", "--json", "--quiet",
                     "--out", "r.json"]) == 0
        out, err = capsys.readouterr()
        assert json.loads(out) == result == json.loads((tmp_path / "r.json").read_text()) and err == ""


def test_cli_modules_are_small_and_annotated():
    import ast
    from pathlib import Path

    import pbf.cli
    folder = Path(pbf.cli.__file__).parent
    for path in folder.glob("*.py"):
        text = path.read_text()
        assert len(text.splitlines()) <= 600, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef):
                params = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
                assert node.returns is not None and all(a.annotation is not None for a in params), \
                    f"{path.name}: {node.name}"


def test_no_help_or_description_shows_a_doubled_percent_sign():
    # argparse %-formats help strings but not descriptions (unless they name %(prog)s): a "%%"
    # written into a description is printed as is
    import argparse

    from pbf.cli.commands import build_parser

    def walk(parser):
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from walk(sub)

    for parser in walk(build_parser()):
        assert "%%" not in parser.format_help(), parser.prog
