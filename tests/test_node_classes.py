"""Node classes and the node search's shortcuts, which decide as the plain search does
(ext/node_model.pxd, ``nm_find_start_search``): the nodes a job may use found once per class of
identical nodes; a search that takes over the windows the last one ended with (the same ask from
that window: most often the next job of a burst of alike jobs, from the start the one before
found), finding again only the nodes changed since; nodes whose window holds a point where they
give the job nothing, skipped until that point leaves it; Slurm's choice made among the nodes that
give any. Held to the oracle (pbf.reference.nodes_ref) on bursts of alike jobs over nodes of a few
classes, and to the core with the shortcuts off (``Core.set_testing(keep_windows=0)``) on
Beocat-like slices, decision by decision (every job's start and nodes)."""
import contextlib
import dataclasses
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import replayer
from pbf.cluster import Cluster, Node
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.workload.beocat import generate_beocat

from scheduling import node_table, replay_checked


@contextlib.contextmanager
def _switches(**switches):
    # every core a replay builds gets these testing switches (Core.set_testing)
    build = replayer.build_core

    def switched(*args, **kwargs):
        core = build(*args, **kwargs)
        core.set_testing(**switches)
        return core

    with mock.patch.object(replayer, "build_core", switched):
        yield


@st.composite
def bursts(draw):
    """Nodes of a few classes (identical cores, memory, GPUs, features) and bursts of alike jobs
    (a few asks, each burst one of them, its jobs arriving together or close), over minutes, so that
    queues build up and alike jobs search one after the other: (nodes, jobs, reservations, first_fit)."""
    classes = [(draw(st.integers(1, 8)), draw(st.sampled_from([2000, 4000, 8000])), draw(st.integers(0, 2)),
                ("gpu",) if draw(st.booleans()) else ()) for _ in range(draw(st.integers(1, 3)))]
    nodes = [Node(f"n{i}", *classes[draw(st.integers(0, len(classes) - 1))]) for i in range(draw(st.integers(1, 7)))]
    asks = [dict(cores=draw(st.integers(1, 10)), mpc=draw(st.sampled_from([0, 0, 500, 1000, 3000])),
                 mpn=draw(st.sampled_from([0, 0, 1500])), gpus=draw(st.sampled_from([0, 0, 0, 1])),
                 nmin=draw(st.integers(1, 2)), nmax=draw(st.sampled_from([0, 0, 0, 1, 2])),
                 feat=("gpu",) if draw(st.integers(0, 5)) == 0 else ())
            for _ in range(draw(st.integers(1, 4)))]
    for a in asks:
        if a["nmax"] and a["nmax"] < a["nmin"]:
            a["nmax"] = a["nmin"]
        if a["mpn"]:
            a["mpc"] = 0                 # (memory per core or per node, as sbatch's --mem-per-cpu or --mem)
    jobs, t = [], 0
    for _ in range(draw(st.integers(1, 8))):
        t += draw(st.integers(0, 20))
        ask = asks[draw(st.integers(0, len(asks) - 1))]
        est = draw(st.integers(1, 30))
        for _ in range(draw(st.integers(1, 6))):
            t += draw(st.sampled_from([0, 0, 1]))
            jobs.append(dict(ask, submit=t, est=est, run=draw(st.integers(1, est))))
    return nodes, jobs, draw(st.sampled_from([1, 2, 4, None])), draw(st.booleans())


def _oracle(nodes, jobs, reservations, first_fit):
    ref_jobs = [dict(submit=j["submit"], run=j["run"], est=j["est"],
                     req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"],
                                     frozenset(j["feat"])))
                for j in jobs]
    return node_replay(nodes, ref_jobs, reservations, first_fit)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bursts())
def test_bursts_of_alike_jobs_are_the_oracle(case):
    nodes, jobs, reservations, first_fit = case
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"),
                              backfill=pbf.Backfill(reservations=reservations),
                              node_choice="first-fit" if first_fit else "best-fit")
    want = _oracle(nodes, jobs, reservations, first_fit)
    for keep in (1, 0):
        with _switches(keep_windows=keep):
            got = replay_checked(node_table(jobs), config)
        assert got.jobs["start"].tolist() == want["start"]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bursts(), st.sampled_from([0, 7, 60]), st.sampled_from(["event", "interval"]), st.sampled_from([1, 2]))
def test_bursts_decide_as_without_shortcuts(case, resolution, trigger, workers):
    # with bf_resolution (windows ending on its multiples), the interval trigger and a helper thread
    nodes, jobs, reservations, first_fit = case
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), trigger=trigger, bf_interval=7,
                              backfill=pbf.Backfill(reservations=reservations, resolution=resolution),
                              node_choice="first-fit" if first_fit else "best-fit", workers=workers,
                              record_nodes=True)
    runs = []
    for keep in (1, 0):
        # (split_min_nodes=1: with 2 workers the helper takes part in every search, however small)
        with _switches(keep_windows=keep, split_min_nodes=1 if workers > 1 else 64, split_trial_us=0):
            runs.append(pbf.replay(node_table(jobs), config).jobs)
    assert runs[0]["start"].tolist() == runs[1]["start"].tolist()
    assert runs[0]["nodes"].tolist() == runs[1]["nodes"].tolist()


_SLURM_LIKE = dict(trigger="interval", backfill=pbf.Backfill(reservations=None, max_job_test=500, window=86400,
                                                              resolution=60))


@pytest.mark.parametrize("name, settings_", [
    ("slurm-like", _SLURM_LIKE),
    ("slurm-like first-fit", dict(_SLURM_LIKE, node_choice="first-fit")),
    ("slurm-like 2 workers", dict(_SLURM_LIKE, workers=2)),
    ("slurm-like estimates", dict(_SLURM_LIKE, start_estimates=True)),
    ("slurm-like failures", dict(_SLURM_LIKE, failures=pbf.Failures(mtbf_hours=30, repair_hours=1, seed=5))),
    ("4 reservations, event trigger", dict(backfill=pbf.Backfill(reservations=4))),
    ("EASY", dict(trigger="interval")),
])
def test_beocat_slice_decides_as_without_shortcuts(name, settings_):
    # a Beocat-like slice (bursts of alike jobs, memory per core, GPUs) on Beocat's nodes: every job
    # starts at the same time on the same nodes with the shortcuts on and off
    jobs = generate_beocat(n_jobs=6000, window=1200, seed=11, resources=True)
    config = pbf.ReplayConfig(cluster="beocat-gpu", record_nodes=True, **settings_)
    runs = []
    for keep in (1, 0):
        with _switches(keep_windows=keep):
            runs.append(pbf.replay(jobs, config).jobs)
    assert runs[0]["start"].tolist() == runs[1]["start"].tolist()
    assert runs[0]["nodes"].tolist() == runs[1]["nodes"].tolist()
    assert (runs[0]["start"] >= 0).sum() > 5000


@pytest.mark.parametrize("name, classes", [("beocat", 17), ("beocat-gpu", 23)])
def test_classes_of_the_builtin_clusters(name, classes):
    # Beocat's 299 nodes are 17 kinds (cores, memory); with its GPUs and the "gpu" feature, 23
    from pbf import _core
    from pbf._nodes import NodeCluster
    from pbf.resources import load_nodes
    cluster = Cluster.builtin(name)
    core = _core.Core(cluster.units)
    load_nodes(core, cluster)
    got = NodeCluster(core).classes()
    assert len(got) == len(cluster.nodes) == 299 and got.max() + 1 == classes
    assert got[0] == 0 and all(got[i] <= got[:i].max() + 1 for i in range(1, len(got)))   # in order
    kinds = {}
    for node, k in zip(cluster.nodes, got):
        assert kinds.setdefault(int(k), (node.cores, node.memory_mb, node.gpus, tuple(node.features))) == (
            node.cores, node.memory_mb, node.gpus, tuple(node.features))
    assert len(set(kinds.values())) == classes


def test_keep_windows_is_a_testing_switch():
    from pbf import _core
    core = _core.Core(64)
    core.set_testing(keep_windows=0)
    core.set_testing(keep_windows=1)
    with pytest.raises(ValueError, match="unknown testing switches"):
        core.set_testing(keep_window=1)


def test_a_burst_on_one_class_fills_its_nodes_in_turn():
    # ten alike jobs of 4 cores at 1000 MB a core on four alike nodes of 8 cores and 4000 MB: one a
    # node at once (the memory of a node), the rest reserved one after the other, each search taking
    # over the last one's windows
    nodes = [Node(f"n{i}", 8, 4000) for i in range(4)]
    jobs = [dict(submit=0, est=10, run=10, cores=4, mpc=1000, mpn=0, gpus=0, nmin=1, nmax=0, feat=())
            for _ in range(10)]
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="c"),
                              backfill=pbf.Backfill(reservations=None), record_nodes=True)
    got = replay_checked(node_table(jobs), config)
    assert got.jobs["start"].tolist() == [0, 0, 0, 0, 10, 10, 10, 10, 20, 20]
    assert got.jobs["start"].tolist() == _oracle(nodes, jobs, None, False)["start"]
    with _switches(keep_windows=0):
        plain = pbf.replay(node_table(jobs), dataclasses.replace(config))
    assert got.jobs["nodes"].tolist() == plain.jobs["nodes"].tolist()
