"""An unbuilt source checkout in the current folder does not shadow the installed pbf: ``python -m pbf``
run from a clone's root uses the installed one (with a note), or stops with one line naming the fix."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pbf

_BUILT = Path(pbf.__file__).resolve().parent
#: an editable install (``pip install -e .``) finds ``pbf._core`` and the other compiled modules in its own
#: folder even under an unbuilt ``pbf/`` in the current folder, so nothing needs handing over (no note)
_EDITABLE = any(getattr(finder, "__name__", "") == "_EditableFinder" for finder in sys.meta_path)


def _unbuilt_checkout(tmp_path: Path) -> Path:
    """A copy of the package's Python files without its compiled modules, as a fresh clone has."""
    shutil.copytree(_BUILT, tmp_path / "pbf", ignore=shutil.ignore_patterns("*.so", "*.pyd", "__pycache__"))
    return tmp_path


def _run(args: list[str], cwd: Path, pythonpath: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(_EDITABLE, reason="pbf is an editable install: its finder gives an unbuilt checkout's pbf the "
                                      "compiled modules, so there is nothing to hand over")
def test_checkout_hands_over_to_the_installed_pbf(tmp_path):
    root = _unbuilt_checkout(tmp_path)
    r = _run(["-m", "pbf", "list"], root, str(_BUILT.parent))
    assert r.returncode == 0, r.stderr
    assert "fcfs" in r.stdout
    assert "unbuilt source checkout; using the installed pbf" in r.stderr
    assert "Traceback" not in r.stderr
    r = _run(["-c", "import pbf, pbf.engine; print(pbf.__file__); print(pbf.engine.__file__)"], root,
             str(_BUILT.parent))
    assert r.returncode == 0, r.stderr
    assert all(Path(line).resolve().parent == _BUILT for line in r.stdout.split())


def test_checkout_without_an_installed_pbf_says_how_to_build(tmp_path):
    root = _unbuilt_checkout(tmp_path)
    # -S: no site-packages, so no installed pbf anywhere (the check runs before numpy is needed)
    r = _run(["-S", "-m", "pbf", "list"], root, None)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pbf: error:"), r.stderr
    assert "pip install -e . --no-build-isolation" in lines[0] and "another folder" in lines[0]
    r = _run(["-S", "-c", "import pbf"], root, None)
    assert r.returncode == 1 and "ImportError" in r.stderr and "pip install -e ." in r.stderr
