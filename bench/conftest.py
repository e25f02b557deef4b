"""pytest-benchmark suite: `pytest bench` (not part of the default `pytest -q tests` run).

Groups: bitmap, profile, pass, replay. Every benchmark asserts the work it measured. JSON output:
`pytest bench --benchmark-json=bench.json`. Select with -k, e.g. `pytest bench -k "pass and 9128"`.
The fixtures are the test suite's (tests/helpers.py; pyproject.toml puts tests/ on the path).
"""
import pytest

from helpers import shared_trace  # noqa: F401  (a fixture: pytest finds it here)

#: pytest-benchmark's default columns; where the command line kept them, the table shows fewer
_DEFAULT_COLUMNS = ["min", "max", "mean", "stddev", "median", "iqr", "outliers", "ops", "rounds", "iterations"]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    """The result table's columns: median, interquartile range and rounds (the rows stay readable; the
    answer to "do N workers help?" follows the tables), unless ``--benchmark-columns`` names others."""
    if getattr(config.option, "benchmark_columns", None) == _DEFAULT_COLUMNS:
        config.option.benchmark_columns = ["median", "iqr", "rounds"]


def _interval(stats):
    return stats.q1, stats.q3


def pytest_terminal_summary(terminalreporter, config):
    """After pytest-benchmark's tables (which rank every test against the fastest of its group), one
    answer per pass scenario to "do N workers help?": 1 worker's median time over N workers', with its
    direction, or "within noise" when the two runs' interquartile ranges overlap."""
    session = getattr(config, "_benchmarksession", None)
    if session is None or not getattr(session, "benchmarks", None):
        return
    scenarios = {}
    for b in session.benchmarks:
        params = b.params or {}
        if not b.name.startswith("test_full_pass") or "sc" not in params or not b.stats.rounds:
            continue
        scenarios.setdefault(params["sc"].label(), {})[(params["workers"], params["commit"])] = b.stats
    if not scenarios:
        return
    from pbf.benchmark_text import ratio_text, wrap_parts
    tr = terminalreporter
    tr.write_sep("-", "do N workers help? 1 worker's median over N workers' (every test forced onto threads)")
    for label, runs in scenarios.items():
        one = runs.get((1, "ordered"))
        if one is None:
            continue
        answers = []
        for (workers, commit), stats in sorted(runs.items()):
            if workers == 1:
                continue
            lo, hi = _interval(stats)
            lo1, hi1 = _interval(one)
            noisy = not (hi < lo1 or hi1 < lo)          # the interquartile ranges overlap
            answers.append(f"{workers} {commit}: {ratio_text(one.median / stats.median, noisy)}")
        tr.write_line(label)
        for line in wrap_parts(answers or ["1 worker only (large passes)"]):
            tr.write_line(line)
