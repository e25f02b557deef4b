"""Slurm's backfill with a job's later starts tested ahead on a helper thread
(ext/slurm_try_later.pxd): whatever the helper does, the decisions are one thread's, which are the
oracle's (pbf.reference.slurm_backfill_ref)."""
import contextlib
import dataclasses
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import replayer
from pbf.cluster import Cluster
from pbf.reference.nodes_ref import NodeRequest
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.workload.archer2 import archer2_cluster, generate_archer2

from scheduling import busy_node_scenarios, node_table


@contextlib.contextmanager
def _later_starts_ahead(wait):
    # every sequential pass shares, on every cluster, with no trial (wait: each later start offered
    # is tested by the helper, never taken back by the testing thread)
    build = replayer.build_core

    def switched(*args, **kwargs):
        core = build(*args, **kwargs)
        core.set_testing(split_min_nodes=1, split_wait=int(wait), split_trial_us=0)
        return core

    with mock.patch.object(replayer, "build_core", switched):
        yield


def _ref_jobs(jobs):
    return [dict(submit=j["submit"], run=j["run"], est=j["est"],
                 req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
            for j in jobs]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_node_scenarios(), st.sampled_from([2, 8]), st.booleans())
def test_later_starts_tested_ahead_decide_as_one_thread_and_the_oracle(case, workers, wait):
    nodes, jobs, reservations, first_fit, resolution, window = case
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm", record_nodes=True,
                              backfill=pbf.Backfill(reservations=reservations, resolution=resolution, window=window),
                              node_choice="first-fit" if first_fit else "best-fit")
    one = pbf.replay(node_table(jobs), config)
    with _later_starts_ahead(wait):
        many = pbf.replay(node_table(jobs), dataclasses.replace(config, workers=workers))
    assert many.jobs["start"].tolist() == one.jobs["start"].tolist()
    assert many.jobs["nodes"].tolist() == one.jobs["nodes"].tolist()
    assert many.summary["jobs"] == one.summary["jobs"]
    passes = many.summary["passes"]
    if wait:
        assert passes["searches_helped"] == passes["searches_shared"]
    want = slurm_node_replay(nodes, _ref_jobs(jobs), reservations, window=window, resolution=resolution,
                             first_fit=first_fit)
    assert many.jobs["start"].tolist() == want["start"]


def _archer2_shaped(jobs=500, nodes=48):
    # ARCHER2's job shapes on a few nodes, three times the load they can run: a deep queue, whose
    # jobs try many later starts each
    table = generate_archer2(jobs, window=86400, seed=3, load=3.0, nodes=nodes)
    config = pbf.ReplayConfig(cluster=archer2_cluster(nodes), node_search="slurm", record_nodes=True,
                              trigger="interval", backfill=pbf.Backfill(reservations=None, max_job_test=100))
    return table, config


@pytest.mark.parametrize("wait", [False, True])
def test_later_starts_tested_ahead_on_an_archer2_shaped_queue(wait):
    table, config = _archer2_shaped()
    one = pbf.replay(table, config)
    assert one.summary["passes"]["searches_shared"] == 0
    with _later_starts_ahead(wait):
        two = pbf.replay(table, dataclasses.replace(config, workers=2))
    assert two.jobs["start"].tolist() == one.jobs["start"].tolist()
    assert two.jobs["nodes"].tolist() == one.jobs["nodes"].tolist()
    assert two.summary["passes"]["full"] == one.summary["passes"]["full"]
    passes = two.summary["passes"]
    assert passes["searches_shared"] > 0          # (later starts were offered to the helper)
    if wait:
        assert passes["searches_helped"] == passes["searches_shared"]


def test_later_starts_with_the_default_trials_decide_as_one_thread():
    # the default switches: whether a pass shares is decided by trials of passes with and without
    table, config = _archer2_shaped()
    one = pbf.replay(table, config)
    two = pbf.replay(table, dataclasses.replace(config, workers=2))
    assert two.jobs["start"].tolist() == one.jobs["start"].tolist()
    assert two.jobs["nodes"].tolist() == one.jobs["nodes"].tolist()
