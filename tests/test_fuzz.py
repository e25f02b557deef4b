"""Hostile SWF files through the command line: a clear error or a correct result, never a traceback,
never past a memory limit (tests/fuzz_swf.py; rerun it with --cases 2000 for a deeper search)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.fuzz
HERE = Path(__file__).resolve().parent
CASES = int(os.environ.get("PBF_FUZZ_EXAMPLES", 200))


@pytest.mark.parametrize("seed", [1, 2])
def test_mutated_swf_files_never_crash_the_cli(tmp_path, seed):
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(HERE / "fuzz_swf.py"), "--cases", str(CASES), "--seed", str(seed),
                           "--memory-gb", "1"], capture_output=True, text=True, cwd=tmp_path, env=env,
                          timeout=max(600, CASES))
    report = json.loads(proc.stdout)
    assert report["problems"] == [], json.dumps(report["problems"][:3], indent=2)
    assert proc.returncode == 0
    assert report["ok"] > 0 and report["refused"] > 0, "the mutations cover both outcomes"
