"""pytest-benchmark suite: `pytest bench` (not part of the default `pytest -q tests` run).

Groups: kernels, profile, pass, replay. Every benchmark asserts the work it measured. JSON output:
`pytest bench --benchmark-json=bench.json`. Select with -k, e.g. `pytest bench -k "pass and 9128"`.
"""
import pytest

from pbf.bench import shared_trace_dir


@pytest.fixture
def shared_trace():
    def get(name):
        d = shared_trace_dir()
        path = d / name if d is not None else None
        if path is None or not path.exists():
            pytest.skip(f"real log {name} not found (set PBF_TRACES to the folder of the shared traces)")
        return path
    return get
