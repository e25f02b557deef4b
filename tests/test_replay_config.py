"""ReplayConfig refuses each bad setting with a message naming it, the value and what it must be."""
import re

import pytest

from pbf import CoAllocation, ConfigError, ReplayConfig


@pytest.mark.parametrize("settings, message", [
    ({"trigger": "sometimes"}, "trigger must be one of event, interval, got 'sometimes'"),
    ({"clock": "sundial"}, "clock must be one of"),
    ({"mem_from": "guess"}, "mem_from must be one of requested, used, none, got 'guess'"),
    ({"node_choice": "worst-fit"}, "node_choice must be one of best-fit, first-fit, got 'worst-fit'"),
    ({"workers": 0}, "workers must be an int from 1 to 256, got 0"),
    ({"bf_max_time": 0}, "bf_max_time must be an int from 1 to 1,099,511,627,776 seconds or None, got 0"),
    ({"cost_per_test_us": -1}, "cost_per_test_us must be a number from 0 to 1,000,000,000 (microseconds) or None "
                                "(the clock's default), got -1"),
    ({"cost_per_test_us": float("nan")}, "cost_per_test_us must be a number from 0 to 1,000,000,000"),
    ({"cost_per_slot_us": 1.5}, "cost_per_slot_us must be an int from 0 to 1,000,000,000 (microseconds) or None "
                               "(the clock's default), got 1.5"),
    ({"cost_per_node_us": True}, "cost_per_node_us must be an int from 0 to 1,000,000,000 (microseconds), got True"),
    ({"cost_per_reservation_us": -3}, "cost_per_reservation_us must be an int from 0 to "
                                      "1,000,000,000 (microseconds), got -3"),
    ({"cost_power": 5}, "cost_power must be a number in (0, 4] (1: a constant cost per test), got 5"),
    ({"slurm_sim": {}}, "slurm_sim must be a pbf.SlurmSim, got {}"),
    ({"bf_interval": 0}, "bf_interval must be an int from 1 to 1,099,511,627,776 seconds, got 0"),
    # (checked before the slurm-sim clock's budget, which is made of it)
    ({"clock": "slurm-sim", "trigger": "interval", "bf_interval": "30"}, "bf_interval must be an int from 1 to"),
    ({"bsld_bound": float("inf")}, "bsld_bound must be a finite number in (0, 1,099,511,627,776] (seconds), got inf"),
    ({"kill_at_request": 1}, "kill_at_request must be True or False, got 1"),
    ({"failures": "failures.csv"}, "failures must be a pbf.Failures or None, got 'failures.csv'"),
    ({"start_estimates": "yes"}, "start_estimates must be True or False, got 'yes'"),
    ({"estimate_every": -1}, "estimate_every must be an int from 0 to 2,147,483,647 (instants with a pass), got -1"),
    ({"coalloc": 0.5}, "coalloc must be a pbf.CoAllocation or None, got 0.5"),
    ({"pass_records": None}, "pass_records must be True or False, got None"),
    ({"cluster": 9128}, "cluster must be a pbf.Cluster, a name or a file, got 9128"),
    ({"units": 0}, "units must be an int from 1 to 16,777,216, got 0"),
    ({"units": 2 ** 24 + 1}, "units must be an int from 1 to 16,777,216, got 16777217"),
    ({"estimate_every": 5}, "estimate_every needs start_estimates=True"),
    ({"cluster": "beocat", "coalloc": CoAllocation("fixed", 0.5)}, "it does not run on a cluster of nodes"),
    ({"clock": "slurm-sim"}, "clock='slurm-sim' runs Slurm's own loop"),
    ({"clock": "slurm-sim", "trigger": "interval", "commit": "eager"}, "clock='slurm-sim' needs commit='ordered'"),
    ({"priority": "no-such-priority"}, "unknown priority 'no-such-priority'"),
])
def test_a_bad_setting_is_refused_naming_it(settings, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        ReplayConfig(**settings)


def test_the_defaults_and_edge_values_are_accepted():
    ReplayConfig()
    ReplayConfig(units=2 ** 24, cost_per_test_us=0, cost_per_slot_us=0, cost_power=4, bf_max_time=None,
                 estimate_every=3, start_estimates=True, cluster="beocat")
