"""pytest-benchmark suite: `pytest bench` (not part of the default `pytest -q tests` run).

Groups: bitmap, profile, pass, replay. Every benchmark asserts the work it measured. JSON output:
`pytest bench --benchmark-json=bench.json`. Select with -k, e.g. `pytest bench -k "pass and 9128"`.
The fixtures are the test suite's (tests/helpers.py; pyproject.toml puts tests/ on the path).
"""
from helpers import shared_trace  # noqa: F401  (a fixture: pytest finds it here)
