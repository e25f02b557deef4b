"""The examples run as documented."""
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_simpy_example_runs_and_schedules_every_job():
    pytest.importorskip("simpy", reason="SimPy is the example's optional dependency (pip install simpy)")
    sys.path.insert(0, str(EXAMPLES))
    try:
        import simpy_cluster
    finally:
        sys.path.pop(0)
    metrics, engine = simpy_cluster.simulate(n_jobs=200, units=32, seed=3)
    assert metrics.jobs == 200 and engine.stats()["started"] == 200 and engine.stats()["pending"] == 0
    out = subprocess.run([sys.executable, str(EXAMPLES / "simpy_cluster.py"), "--jobs", "50"],
                         capture_output=True, text=True, check=True, cwd=EXAMPLES)
    assert "50 jobs on 64 units" in out.stdout


def test_plugins_example_runs_from_python_and_the_cli():
    out = subprocess.run([sys.executable, str(EXAMPLES / "plugins.py")], capture_output=True, text=True,
                         check=True, cwd=EXAMPLES)
    assert "Python UserMedian + fair_age" in out.stdout and "BSLD" in out.stdout
    trace = EXAMPLES.parent / "traces" / "lublin1-1000.swf.gz"
    out = subprocess.run([sys.executable, "-m", "pbf", "replay", str(trace), "--fill-missing-request",
                          "--predictor", "plugins:UserMedian", "--priority", "plugins:fair_age", "--json",
                          "--quiet"], capture_output=True, text=True, check=True, cwd=EXAMPLES)
    assert '"priority": "plugins:fair_age"' in out.stdout and '"predictor": "plugins:UserMedian"' in out.stdout
