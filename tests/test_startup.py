"""What a process loads: ``import pbf`` only the compiled core's two probes; a replay of an SWF log
neither the sacct reader nor gzip, and its log read by the compiled tokenizer end to end.
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
    dump = Path(ROOT) / "tests" / "data" / "slurm" / "resources.sacct"
    if not dump.exists():
        pytest.skip("the sample sacct dump is not beside this checkout")
    assert len(read_swf(dump)) > 0
    loaded = _loaded(f"from pbf.workload import read_swf\nread_swf({str(dump)!r})", tmp_path)
    assert "pbf.workload.sacct" in loaded
