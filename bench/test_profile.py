"""Profile operations: build the profile of running jobs and search earliest starts (no placement)."""
import pytest

from pbf.benchmark import NOW, PassScenario


@pytest.mark.benchmark(group="profile")
@pytest.mark.parametrize("units, running", [(128, 10), (1_024, 100), (9_128, 2_000), (100_000, 10_000)])
def test_build_and_search(benchmark, units, running):
    sc = PassScenario(1_000, units, running)
    core = sc.core()
    (_, _), (qu, qe) = sc.jobs()
    slots, total = benchmark(core.profile_ops, NOW, qu, qe, 1)
    assert slots >= 1 + min(running, 1) and total > 0    # a profile was built and every search found a start
