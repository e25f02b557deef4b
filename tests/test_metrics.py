"""Metrics against hand-computed values."""
import pytest

from pbf.errors import ConfigError
from pbf.metrics import bounded_slowdown, queue_length_profile, schedule_metrics

# three jobs on a 4-unit cluster:
#   job  submit start run units   wait response  bsld(tau=10)
#   A        0     0   10    2       0     10      max(1, 10/10)  = 1
#   B        0    10    5    4      10     15      max(1, 15/10)  = 1.5
#   C        5    15   20    1      10     30      max(1, 30/20)  = 1.5
SUBMIT, START, RUN, UNITS = [0, 0, 5], [0, 10, 15], [10, 5, 20], [2, 4, 1]


def test_hand_computed_schedule():
    m = schedule_metrics(SUBMIT, START, RUN, UNITS, total_units=4, tau=10)
    assert m.jobs == 3
    assert m.awt == pytest.approx(20 / 3)
    assert m.art == pytest.approx(55 / 3)
    assert m.bsld == pytest.approx(4 / 3)
    assert m.makespan == 35                                  # last end 35 - first submit 0
    assert m.utilisation == pytest.approx((20 + 20 + 20) / (4 * 35))
    # queue: [0,5): B waits -> 1; [5,10): B, C -> 2; [10,15): C -> 1; [15,35): 0
    assert m.max_queue == 2
    assert m.mean_queue == pytest.approx((1 * 5 + 2 * 5 + 1 * 5) / 35)


def test_bound_changes_bsld():
    # tau = 600: every run is below the bound, so bsld = max(1, response / 600) = 1 for all
    assert schedule_metrics(SUBMIT, START, RUN, UNITS, 4, tau=600).bsld == 1.0
    assert list(bounded_slowdown([0], [100], [1], tau=10)) == [pytest.approx(10.1)]


def test_queue_profile_applies_all_events_of_an_instant():
    times, lengths = queue_length_profile([0, 0], [0, 3])
    assert list(times) == [0, 3] and list(lengths) == [1, 0]


def test_empty_schedule():
    assert schedule_metrics([], [], [], [], 4).jobs == 0


def test_bad_schedules_are_rejected():
    with pytest.raises(ConfigError, match="starts at 0 before its submit time 5"):
        schedule_metrics([5], [0], [1], [1], 4)
    with pytest.raises(ConfigError, match="tau"):
        bounded_slowdown([0], [0], [1], tau=0)
    with pytest.raises(ConfigError, match="total_units"):
        schedule_metrics([0], [0], [1], [1], 0)
