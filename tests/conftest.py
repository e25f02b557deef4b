import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_traces_dir():
    """The real logs: $PBF_TRACES, else ../shared/traces beside the repository."""
    env = os.environ.get("PBF_TRACES")
    return Path(env) if env else REPO.parent / "shared" / "traces"


@pytest.fixture(scope="session")
def shared_trace():
    """Path of a real log by file name; skips the test when the logs are absent."""
    def get(name):
        path = shared_traces_dir() / name
        if not path.exists():
            pytest.skip(f"real log {name} not found in {path.parent} (set PBF_TRACES to its folder)")
        return path
    return get
