"""Fixtures of the test suite (defined in helpers.py, which the benchmarks share)."""
from helpers import shared_trace  # noqa: F401  (a fixture: pytest finds it here)
