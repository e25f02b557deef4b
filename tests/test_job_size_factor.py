"""Slurm's multifactor job-size factor (src/plugins/priority/multifactor/priority_multifactor.c,
set_priority_factors, the same in Slurm 20.11, 22.05 and 23.11): the Python twin against values worked by
hand from Slurm's formula, and the compiled policy (ext/policy.pxd) against the twin on clusters of
nodes and of units, bit for bit."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbf import _core
from pbf.cluster import Cluster, Node
from pbf.errors import ConfigError
from pbf.plugins.multifactor import Multifactor, job_size_factor

# a compiled core that hands the policy the jobs' node counts also takes the job-size variants
# (SMALL_RELATIVE_TO_TIME, Slurm's own N and C)
_VARIANTS = "mf_js_relative" in getattr(_core, "_CONFIG_KEYS", ())
_NEEDS_NODES = pytest.mark.skipif(not _VARIANTS, reason="a compiled core that does not hand the policy the jobs' "
                                  "node counts (ext/lifecycle.pxd calling policy_key_nodes)")


# --- Slurm's formula, worked by hand -------------------------------------------------------------

@pytest.mark.parametrize(("cpus", "cpu_total", "min_nodes", "nodes", "favor_small", "want"), [
    # (min_nodes / N + cpus / C) / 2
    (64, 320, 2, 10, False, (2 / 10 + 64 / 320) / 2),          # 0.2
    (10, 100, 1, 4, False, 0.175),                               # (0.25 + 0.1) / 2
    (1, 1024, 1, 32, False, (1 / 32 + 1 / 1024) / 2),           # a one-CPU job still weighs a node
    (1024, 1024, 32, 32, False, 1.0),                            # the whole cluster
    # ((N - min_nodes) / N + (C - cpus) / C) / 2
    (64, 320, 2, 10, True, 0.8),
    (10, 100, 1, 4, True, 0.825),                                # (0.75 + 0.9) / 2
    (1024, 1024, 32, 32, True, 0.0),
])
def test_slurm_formula_by_hand(cpus, cpu_total, min_nodes, nodes, favor_small, want):
    assert job_size_factor(cpus, cpu_total, min_nodes, nodes, favor_small=favor_small) == pytest.approx(want, abs=1e-15)


def test_small_relative_to_time_by_hand():
    # 4 nodes of 32 CPUs (C = 128): a 2-node job's size is max(2 x 128 / 4, CPUs) CPUs, over its time
    # limit in whole minutes (rounded up, as Slurm keeps it), over C; favor_small: 1 minus that
    assert job_size_factor(10, 128, 2, 4, req=3600, relative=True) == pytest.approx(64 / 60 / 128)
    assert job_size_factor(100, 128, 2, 4, req=3600, relative=True) == pytest.approx(100 / 60 / 128)
    assert job_size_factor(100, 128, 2, 4, req=61, relative=True) == pytest.approx(100 / 2 / 128)
    assert job_size_factor(100, 128, 2, 4, req=60, relative=True) == pytest.approx(100 / 1 / 128)
    assert job_size_factor(10, 128, 2, 4, req=3600, relative=True, favor_small=True) == pytest.approx(1 - 64 / 60 / 128)
    # a one-minute whole-cluster job: 1.0 (favor_small 0.0)
    assert job_size_factor(128, 128, 4, 4, req=30, relative=True) == 1.0
    assert job_size_factor(128, 128, 4, 4, req=30, relative=True, favor_small=True) == 0.0


def test_slurms_own_cluster_counts():
    # Slurm's N and C count every node of slurm.conf: a replay of 4 of its 10 nodes (128 of 320 CPUs)
    assert job_size_factor(64, 128, 2, 4, size_nodes=10, size_cpus=320) == pytest.approx(0.2)
    assert Multifactor(size_nodes=10, size_cpus=320).job_size(64, 128, 2, 4) == pytest.approx(0.2)
    assert Multifactor().job_size(64, 128, 2, 4) == pytest.approx((0.5 + 0.5) / 2)


def test_a_job_of_no_cpus_has_the_nodes_term_only():
    assert job_size_factor(0, 320, 2, 10) == pytest.approx(0.2)
    assert job_size_factor(0, 320, 2, 10, favor_small=True) == pytest.approx(0.8)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 1 << 40), st.data())
def test_units_are_nodes_of_one_cpu(total, data):
    # on a cluster of units the factor is units / cluster units, bit for bit (the factor pbf had)
    units = data.draw(st.integers(0, total))
    assert job_size_factor(units, total) == float(units) / float(total)
    assert job_size_factor(units, total, favor_small=True) == float(total - units) / float(total)
    # and is Slurm's for a cluster of one-CPU nodes
    assert job_size_factor(units, total, units, total) == job_size_factor(units, total)


def test_bad_settings_are_refused():
    for kw in (dict(size_nodes=-1), dict(size_nodes=1 << 20), dict(size_cpus=1 << 33), dict(size_cpus=2.5),
               dict(size_relative=1), dict(favor_small="yes")):
        with pytest.raises(ConfigError, match=next(iter(kw))):
            Multifactor(**kw)


def test_core_settings_name_the_variants_only_when_set():
    assert "mf_js_relative" not in Multifactor().core_settings()
    s = Multifactor(size_relative=True, size_nodes=10, size_cpus=320).core_settings()
    assert (s["mf_js_relative"], s["mf_js_nodes"], s["mf_js_cpus"]) == (1, 10, 320)


# --- the compiled policy against the twin ---------------------------------------------------------

def _core_keys(mf, nodes, jobs):
    """The compiled priorities of ``jobs`` ((cores, min nodes, requested s) each) submitted at 0 on
    ``nodes`` (cores each; None: a cluster of units of that many), as pbf's replays compute them."""
    from pbf._nodes import NodeCluster
    from pbf.resources import load_nodes
    units = sum(nodes) if isinstance(nodes, list) else nodes
    core = _core.Core(units)
    core.configure(**mf.core_settings())
    if isinstance(nodes, list):
        load_nodes(core, Cluster.of_nodes([Node(f"n{i}", c, 1000, 0) for i, c in enumerate(nodes)], name="t"))
    n = len(jobs)
    cores = np.array([j[0] for j in jobs], dtype=np.int64)
    req = np.array([j[2] for j in jobs], dtype=np.int64)
    core.add_jobs(np.zeros(n, np.int64), cores, req, req, req=req)
    if isinstance(nodes, list):
        z = np.zeros(n, np.int64)
        NodeCluster(core).set_requests(0, z, z, z, np.array([j[1] for j in jobs], dtype=np.int64), z,
                                       np.zeros(n, np.uint64))
    for j in range(n):
        core.submit(j)
    return core.keys()


def _weights_only_size(**kw):
    return Multifactor(weight_age=0.0, weight_fairshare=0.0, weight_partition=0.0, weight_qos=0.0,
                       weight_job_size=kw.pop("w", 200000.0), **kw)


@_NEEDS_NODES
def test_compiled_factor_on_nodes_is_slurms():
    # 4 nodes of 32 cores: N = 4, C = 128
    jobs = [(1, 1, 600), (32, 1, 600), (32, 2, 600), (64, 2, 600), (128, 4, 600), (4, 4, 600)]
    keys = _core_keys(_weights_only_size(), [32, 32, 32, 32], jobs)
    want = [-math.floor(200000.0 * (m / 4 + c / 128) / 2) for c, m, _ in jobs]
    assert keys.tolist() == want
    keys = _core_keys(_weights_only_size(favor_small=True), [32, 32, 32, 32], jobs)
    assert keys.tolist() == [-math.floor(200000.0 * ((4 - m) / 4 + (128 - c) / 128) / 2) for c, m, _ in jobs]


@_NEEDS_NODES
def test_compiled_variants():
    jobs = [(10, 2, 3600), (100, 2, 3600), (100, 2, 61), (128, 4, 30)]
    mf = _weights_only_size(size_relative=True, w=1e9)
    keys = _core_keys(mf, [32, 32, 32, 32], jobs)
    assert keys.tolist() == [-math.floor(1e9 * job_size_factor(c, 128, m, 4, req=r, relative=True))
                             for c, m, r in jobs]
    mf = _weights_only_size(size_nodes=10, size_cpus=320)
    keys = _core_keys(mf, [32, 32, 32, 32], [(64, 2, 60)])
    assert keys.tolist() == [-math.floor(200000.0 * 0.2)]


_NODE_CLUSTERS = st.lists(st.integers(1, 64), min_size=1, max_size=12)


@st.composite
def _cases(draw):
    nodes = draw(_NODE_CLUSTERS)
    on_units = draw(st.booleans()) or not _VARIANTS
    total = sum(nodes)
    jobs = []
    for _ in range(draw(st.integers(1, 8))):
        cores = draw(st.integers(1, total))
        jobs.append((cores, draw(st.integers(1, min(cores, len(nodes)))), draw(st.integers(1, 10 * 86400))))
    kw = dict(favor_small=draw(st.booleans()), w=draw(st.sampled_from([1000.0, 200000.0, 4294967295.0])))
    if _VARIANTS:
        kw["size_relative"] = draw(st.booleans())
        if draw(st.booleans()):
            kw["size_nodes"] = len(nodes) + draw(st.integers(0, 100))
            kw["size_cpus"] = total + draw(st.integers(0, 10000))
    return (total if on_units else nodes), jobs, kw


@settings(max_examples=150, deadline=None)
@given(_cases())
def test_compiled_policy_is_the_twin(case):
    nodes, jobs, kw = case
    mf = _weights_only_size(**kw)
    keys = _core_keys(mf, nodes, jobs)
    on_nodes = isinstance(nodes, list)
    units = sum(nodes) if on_nodes else nodes
    want = [-mf.priority(c, 0, 0.0, 0.0, 1, 1.0, 0.0, units, 0, min_nodes=m if on_nodes else None,
                         cluster_nodes=len(nodes) if on_nodes else 0, req=r) for c, m, r in jobs]
    assert keys.tolist() == want
