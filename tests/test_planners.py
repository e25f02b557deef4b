"""The planner interface (ext/planner.pxd): each cluster kind's planner, chosen from the cluster as
set, held alone to its own oracle in pbf.reference -- units to the profile oracle, nodes to
nodes_ref, Slurm's backfill to slurm_backfill_ref -- with the core checked to have run on that
planner and no other."""
import dataclasses
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import pbf
from pbf import core_config
from pbf._core import Core
from pbf._nodes import NodeCluster
from pbf.cluster import Cluster, Node
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.slurm_backfill_ref import slurm_node_replay
from pbf.resources import load_nodes

from scheduling import (
    busy_node_scenarios,
    check_invariants,
    compiled_replay,
    node_table,
    oracle_replay,
    replay_checked,
    scenarios,
)


def _ref_jobs(jobs):
    return [dict(submit=j["submit"], run=j["run"], est=j["est"],
                 req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
            for j in jobs]


def _replay_on_planner(table, config, planner):
    # the replay, with the planner of every core it built checked
    built = []
    real = core_config.build_core

    def spy(*args, **kwargs):
        core = real(*args, **kwargs)
        built.append(core)
        return core
    with mock.patch.object(core_config, "build_core", side_effect=spy), \
            mock.patch("pbf.replayer.build_core", side_effect=spy):
        result = replay_checked(table, config)
    assert built and {core.planner for core in built} == {planner}
    return result


def test_the_planner_follows_the_cluster_as_set():
    core = Core(12)
    assert core.planner == "units"
    load_nodes(core, Cluster.of_nodes([Node("a", 4, 8000, 1), Node("b", 8, 4000, 0)], name="c"))
    assert core.planner == "nodes"
    NodeCluster(core).set_search("slurm")
    assert core.planner == "slurm"
    NodeCluster(core).set_search("exact")
    assert core.planner == "nodes"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_the_units_planner_is_its_oracle(sc):
    args = (sc["submit"], sc["units"], sc["est"], sc["run"], sc["total_units"])
    kw = {k: sc[k] for k in ("backfill", "prio_sjf", "trigger", "bf_interval")}
    got, want = compiled_replay(*args, **kw, block_slots=sc["block_slots"]), oracle_replay(*args, **kw)
    assert got["core"].planner == "units"
    for key in ("state", "start", "end", "how", "reason"):
        assert np.array_equal(got[key], want[key]), key
    assert np.array_equal(got["bits"], want["bits"]), "unit choice differs"
    check_invariants(got, sc["submit"], sc["units"], sc["run"], sc["total_units"])


@pytest.mark.parametrize("planner", ["nodes", "slurm"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=busy_node_scenarios())
def test_each_node_planner_is_its_oracle(planner, case):
    nodes, jobs, reservations, first_fit, resolution, window = case
    if planner == "nodes":
        # (pbf's exact plan: the oracle has no resolution or window)
        resolution = window = 0
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"),
                              node_search="slurm" if planner == "slurm" else "exact",
                              backfill=pbf.Backfill(reservations=reservations, resolution=resolution, window=window),
                              node_choice="first-fit" if first_fit else "best-fit")
    got = _replay_on_planner(node_table(jobs), config, planner)
    if planner == "slurm":
        want = slurm_node_replay(nodes, _ref_jobs(jobs), reservations, window=window, resolution=resolution,
                                 first_fit=first_fit)
    else:
        want = node_replay(nodes, _ref_jobs(jobs), reservations, first_fit)
    assert got.jobs["start"].tolist() == want["start"]
    config = dataclasses.replace(config, record_nodes=True)
    names = [",".join(nodes[i].name for i in sorted(a)) if a else "" for a in want["alloc"]]
    assert _replay_on_planner(node_table(jobs), config, planner).jobs["nodes"].tolist() == names
