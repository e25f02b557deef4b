"""Real threads on the slurm-sim clock (``threads``, ``pbf replay --threads``), separate from its modelled
workers: a helper thread tests Slurm's later starts ahead (ext/slurm_loop.pxd, ext/slurm_try_later.pxd),
and whatever it does, the schedule is one thread's, for any number of modelled workers."""
import dataclasses
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_slurm_try_later import _later_starts_ahead

import pbf
from pbf import replayer
from pbf.cli import main
from pbf.cluster import Cluster
from pbf.errors import ConfigError
from pbf.workload.archer2 import archer2_cluster, generate_archer2

from scheduling import busy_node_scenarios, node_table


def _same_schedule(a, b):
    assert a.jobs["start"].tolist() == b.jobs["start"].tolist()
    assert a.jobs["nodes"].tolist() == b.jobs["nodes"].tolist()
    assert a.summary["jobs"] == b.summary["jobs"]
    for key in ("full", "quick", "count", "mean_depth", "max_depth"):
        assert a.summary["passes"][key] == b.summary["passes"][key]
    assert a.summary["scheduler_time"] == b.summary["scheduler_time"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_node_scenarios(), st.sampled_from([1, 3]), st.booleans(), st.sampled_from(["slurm", "exact"]))
def test_a_helper_on_every_later_start_decides_as_one_thread(case, workers, wait, search):
    nodes, jobs, reservations, first_fit, resolution, window = case
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search=search, record_nodes=True,
                              clock="slurm-sim", trigger="interval", bf_interval=5, workers=workers, threads=1,
                              backfill=pbf.Backfill(reservations=reservations, resolution=resolution, window=window),
                              node_choice="first-fit" if first_fit else "best-fit")
    one = pbf.replay(node_table(jobs), config)
    assert one.summary["passes"]["searches_shared"] == 0
    with _later_starts_ahead(wait):
        two = pbf.replay(node_table(jobs), dataclasses.replace(config, threads=2))
    _same_schedule(two, one)
    passes = two.summary["passes"]
    assert passes["sim_threads"] == 2
    if wait:
        assert passes["searches_helped"] == passes["searches_shared"]


def _archer2_shaped(jobs=500, nodes=48, workers=1):
    # ARCHER2's job shapes on a few nodes, three times the load they can run: a deep queue, whose
    # jobs try many later starts each, on the slurm-sim clock
    table = generate_archer2(jobs, window=86400, seed=3, load=3.0, nodes=nodes)
    config = pbf.ReplayConfig(cluster=archer2_cluster(nodes), node_search="slurm", record_nodes=True,
                              clock="slurm-sim", trigger="interval", workers=workers, threads=1,
                              backfill=pbf.Backfill(reservations=None, max_job_test=100))
    return table, config


@pytest.mark.parametrize("wait", [False, True])
@pytest.mark.parametrize("workers", [1, 4])
def test_an_archer2_shaped_queue_writes_the_same_jobs_csv(tmp_path, wait, workers):
    table, config = _archer2_shaped(workers=workers)
    one = pbf.replay(table, config)
    with _later_starts_ahead(wait):
        two = pbf.replay(table, dataclasses.replace(config, threads=2))
    _same_schedule(two, one)
    passes = two.summary["passes"]
    assert passes["searches_shared"] > 0          # (later starts were offered to the helper)
    if wait:
        assert passes["searches_helped"] == passes["searches_shared"]
    one.write(tmp_path / "one")
    two.write(tmp_path / "two")
    assert (tmp_path / "one" / "jobs.csv").read_bytes() == (tmp_path / "two" / "jobs.csv").read_bytes()


def test_the_default_trials_decide_as_one_thread():
    # no switch: whether a cycle shares is decided by trials of cycles with and without, as on the free clock
    table, config = _archer2_shaped()
    one = pbf.replay(table, config)
    two = pbf.replay(table, dataclasses.replace(config, threads=2))
    _same_schedule(two, one)


def test_auto_takes_a_helper_only_on_a_node_cluster_of_64_and_two_cpus():
    big, small = archer2_cluster(64), archer2_cluster(48)
    sim = pbf.ReplayConfig(cluster=big, node_search="slurm", clock="slurm-sim", trigger="interval", threads="auto")
    assert pbf.ReplayConfig().threads == 1
    with mock.patch("psutil.Process") as process:
        process.return_value.cpu_affinity.return_value = [0, 1]
        assert replayer.sim_threads(sim, big) == 2
        assert replayer.sim_threads(sim, small) == 1
        assert replayer.sim_threads(sim, None) == 1
        assert replayer.sim_threads(dataclasses.replace(sim, clock="free", trigger="event"), big) == 1
        process.return_value.cpu_affinity.return_value = [0]
        assert replayer.sim_threads(sim, big) == 1
    assert replayer.sim_threads(dataclasses.replace(sim, threads=3), small) == 3


@pytest.mark.parametrize("bad", [0, 257, "two", 1.5, True])
def test_bad_threads_are_refused(bad):
    with pytest.raises(ConfigError, match="threads must be an int from 1 to 256 or 'auto'"):
        pbf.ReplayConfig(clock="slurm-sim", trigger="interval", threads=bad)


def test_threads_on_another_clock_are_refused():
    with pytest.raises(ConfigError, match=r"threads=2 \(--threads\) applies to the slurm-sim clock"):
        pbf.ReplayConfig(threads=2)
    pbf.ReplayConfig(threads=1)                   # (one thread is every clock's)


def test_cli_threads_flag(capsys):
    with pytest.raises(SystemExit):
        main(["replay", "--threads", "many"])
    assert "expected auto or a whole number from 1 to 256, got 'many'" in capsys.readouterr().err
    assert main(["replay", "--threads", "2"]) == 2
    assert "applies to the slurm-sim clock" in capsys.readouterr().err
