"""pytest-benchmark suite: `pytest bench` (not part of the default `pytest -q tests` run).

Groups: bitmap, profile, pass, replay. Every benchmark asserts the work it measured. JSON output:
`pytest bench --benchmark-json=bench.json`. Select with -k, e.g. `pytest bench -k "pass and 9128"`.
"""
import pytest

from pbf.errors import ConfigError
from pbf.studies.traces import shared_trace as find_shared_trace


@pytest.fixture(scope="session")
def shared_trace():
    """Path of a real log by file name ($PBF_TRACES, else ../shared/traces); skips the test, saying
    why, when the log is absent."""
    def get(name):
        try:
            return find_shared_trace(name)
        except ConfigError as exc:
            pytest.skip(f"real log missing: {exc}")
    return get
