"""What a process loads: ``import pbf`` only the compiled core's two probes; a replay of an SWF log
neither the sacct reader nor gzip, and its log read by the compiled tokenizer end to end; a replay
only the modules of what it uses (no nodes, co-allocation, failures, partitions, threads, json or the
CSV writer unless asked for).
(How long start-up takes is measured in docs/benchmarks.md, never asserted here.)"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import pbf

ROOT = str(Path(pbf.__file__).resolve().parents[1])
RECORD = "1 0 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n"


def _loaded(code, cwd):
    """The modules a fresh process has loaded after ``code`` (the pbf this test imports)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    probe = code + "\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


def test_import_pbf_loads_no_numpy_and_no_submodule(tmp_path):
    """The public names load on first use (PEP 562), so that `import pbf` and the command start fast."""
    loaded = _loaded("import pbf", tmp_path)
    assert "numpy" not in loaded
    assert {m for m in loaded if m.startswith("pbf")} == {"pbf", "pbf._bitmap", "pbf._swf"}


def test_every_public_name_loads_on_first_use(tmp_path):
    loaded = _loaded("import pbf\nfor name in pbf.__all__: getattr(pbf, name)\nfrom pbf import Engine, read_swf",
                     tmp_path)
    assert {"pbf.engine", "pbf.workload.swf", "pbf.replayer"} <= loaded


@pytest.mark.parametrize("gz", [False, True])
def test_a_replay_of_an_swf_log_loads_neither_the_sacct_reader_nor_gzip(tmp_path, gz):
    import gzip
    text = "; MaxProcs: 4\n" + RECORD + RECORD.replace("1 0 0", "2 5 0", 1)
    path = tmp_path / ("t.swf.gz" if gz else "t.swf")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    loaded = _loaded(f"from pbf.cli import main\nassert main(['replay', {str(path)!r}, '--quiet']) == 0", tmp_path)
    assert not {m for m in loaded if m.startswith("pbf.workload.sacct")}
    assert "gzip" not in loaded and "calendar" not in loaded
    assert "pbf.workload.swf" in loaded


def test_a_sacct_dump_is_still_recognised_by_read_swf(tmp_path):
    """(The sacct reader is loaded when a file's first line holds a '|', as a dump's header does.)"""
    from pbf.workload import read_swf
    dump = Path(__file__).resolve().parent / "data" / "slurm" / "resources.sacct"
    assert len(read_swf(dump)) > 0
    loaded = _loaded(f"from pbf.workload import read_swf\nread_swf({str(dump)!r})", tmp_path)
    assert "pbf.workload.sacct" in loaded


#: what a plain replay (units, no --out) does not use, and so does not load
_UNUSED = {"pbf.cluster", "pbf.slurm_conf", "pbf.licenses", "pbf.resources", "pbf.coalloc",
           "pbf.outages", "pbf._outages", "pbf.slurm_partitions", "pbf.bf_limits", "pbf._nodes", "pbf._estimates",
           "pbf.start_estimates", "pbf._pass_cost", "pbf.csv_out", "pbf._csvout", "json", "csv", "logging",
           "concurrent.futures", "tempfile", "shutil", "pbf.node", "pbf.gres", "pbf.plugins.multifactor",
           "pbf.plugins.views", "numpy.typing"}


def test_a_plain_replay_loads_only_what_it_uses(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 4\n" + RECORD + RECORD.replace("1 0 0", "2 5 0", 1))
    loaded = _loaded(f"from pbf.cli import main\nassert main(['replay', {str(path)!r}, '--quiet']) == 0", tmp_path)
    # (the stdlib modules only where the interpreter's own start has not loaded them: a .pth may)
    base = _loaded("", tmp_path)
    assert not (_UNUSED - base) & loaded, sorted((_UNUSED - base) & loaded)
    # writing loads the writer, and nothing of nodes, co-allocation or failures either
    loaded = _loaded(f"from pbf.cli import main\n"
                     f"assert main(['replay', {str(path)!r}, '--quiet', '--out', {str(tmp_path / 'o')!r}]) == 0",
                     tmp_path)
    assert {"pbf.csv_out", "json"} <= loaded
    assert not {m for m in _UNUSED if m.startswith("pbf.") and "csv" not in m} & loaded


def _imports_numpy(code, cwd):
    """Whether a fresh process has imported numpy once ``code`` ran (printed last, as ``sys.modules`` says)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    probe = code + "\nimport sys\nprint('numpy' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=cwd, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip().splitlines()[-1] == "True"


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("flags", [["--quiet"], [], ["--json"], ["--quiet", "--reservations", "unlimited"],
                                   ["--quiet", "--preset", "slurm"], ["--quiet", "--predictor", "clairvoyant"],
                                   ["--quiet", "--units", "8", "--oversize", "drop"]])
def test_a_plain_replay_imports_no_numpy(tmp_path, gz, flags):
    """A replay on a cluster of units with the built-in plugins reads, cleans, orders, replays and sums up
    in compiled code over buffers: its process never imports numpy (about 45 ms of a 0.2 s process)."""
    import gzip
    lines = ["; MaxProcs: 4", RECORD.strip(), RECORD.replace("1 0 0 100", "2 5 0 -1", 1).strip(),
             RECORD.replace("1 0 0 100 2", "3 7 0 300 9", 1).strip(), RECORD.replace("1 0 0", "4 9 0", 1).strip()]
    text = "\n".join(lines) + "\n"
    path = tmp_path / ("t.swf.gz" if gz else "t.swf")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    code = f"from pbf.cli import main\nassert main(['replay', {str(path)!r}, *{flags!r}]) == 0"
    assert not _imports_numpy(code, tmp_path)
    # the compiled core alone neither; reading the results' columns does
    assert not _imports_numpy("import pbf._core, pbf._table, pbf._coalloc", tmp_path)
    assert _imports_numpy(f"import pbf\nr = pbf.replay(pbf.read_swf({str(path)!r}))\nr.jobs", tmp_path)


def test_a_replay_of_what_it_uses_loads_it(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; MaxProcs: 4\n" + RECORD + RECORD.replace("1 0 0", "2 5 0", 1))
    argv = [str(path), "--quiet", "--coalloc", "fixed:0.5", "--mtbf", "100", "--start-estimates"]
    loaded = _loaded(f"from pbf.cli import main\nassert main(['replay', *{argv!r}]) == 0", tmp_path)
    assert {"pbf.coalloc", "pbf._coalloc", "pbf.outages", "pbf._outages", "pbf.start_estimates",
            "pbf._estimates"} <= loaded
    # a multifactor priority loads its module (a plain replay does not: _UNUSED)
    loaded = _loaded(f"from pbf.cli import main\nassert main(['replay', {str(path)!r}, '--quiet', '--priority', "
                     f"'multifactor']) == 0", tmp_path)
    assert "pbf.plugins.multifactor" in loaded


def test_only_the_command_line_freezes_what_is_left(tmp_path, capsys):
    """``main()`` run as the process (no argv) freezes the objects left out of the garbage collector, so
    that the exit does not collect them; ``main(argv)`` called by a program leaves its collector alone."""
    import gc

    from pbf.cli import main
    before = gc.get_freeze_count()
    assert main(["list"]) == 0
    capsys.readouterr()
    assert gc.get_freeze_count() == before
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")])}
    probe = ("import gc, sys\nfrom pbf.cli import main\nsys.argv = ['pbf', 'list']\nstatus = main()\n"
             "print('frozen', gc.get_freeze_count() > 0, status, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0 and "frozen True 0" in r.stderr, r.stderr
