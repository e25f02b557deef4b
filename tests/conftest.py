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
