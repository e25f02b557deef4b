"""The engine on a cluster of nodes: driven event by event it decides as a replay on the same nodes
(which the oracle holds to Slurm's rules), its Start decisions name the nodes with the memory and GPUs
held, and misuse is refused with the engine unchanged."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import pbf
from pbf._nodes import NodeCluster
from pbf.cluster import Cluster, Node

from scheduling import node_scenarios, node_table


def _drive(engine, jobs):
    """Feed jobs (node_scenarios dicts) to advance() one instant at a time; job ids are 1.., returns
    {id: start} and every Start decision."""
    ends, starts, decisions, i, order = {}, {}, [], 0, sorted(range(len(jobs)), key=lambda k: jobs[k]["submit"])
    while i < len(order) or ends:
        now = min(([jobs[order[i]]["submit"]] if i < len(order) else []) + ([min(ends.values())] if ends else []))
        events = [pbf.Finish(j, e) for j, e in sorted(ends.items(), key=lambda x: (x[1], x[0])) if e == now]
        for ev in events:
            del ends[ev.job_id]
        while i < len(order) and jobs[order[i]]["submit"] == now:
            k = order[i]
            j = jobs[k]
            events.append(pbf.Submit(pbf.Job(k + 1, now, j["cores"], j["est"], mem_core_mb=j["mpc"],
                                             mem_node_mb=j["mpn"], gpus=j["gpus"], nodes_min=j["nmin"],
                                             nodes_max=j["nmax"], features=j["feat"])))
            i += 1
        for d in engine.advance(now, events):
            starts[d.job_id] = now
            ends[d.job_id] = now + jobs[d.job_id - 1]["run"]
            decisions.append(d)
    return starts, decisions


def oracle_never_fits(nodes, job, engine_nodes, first_fit):
    """The oracle's answer: can no set of the nodes, all idle, hold the job?"""
    from pbf.reference.nodes_ref import NodeRequest, eval_nodes, node_cpus
    mpc, mpn, gpn, lo, hi, feats = engine_nodes.request(job)
    req = NodeRequest(int(job.units), mpc, mpn, gpn, lo, hi, frozenset(feats))
    cpu = [node_cpus(n.cores, n.memory_mb, n.gpus, n.features, req) for n in nodes]
    return eval_nodes(cpu, req.cores, req.min_nodes, req.max_nodes, first_fit) is None


@pytest.mark.parametrize("search", ["exact", "slurm"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_scenarios())
def test_engine_on_nodes_decides_as_the_replay(search, case):
    nodes, jobs, reservations, first_fit = case
    cluster = Cluster.of_nodes(nodes, name="h")
    choice = "first-fit" if first_fit else "best-fit"
    backfill = pbf.Backfill(reservations=reservations)
    want = pbf.replay(node_table(jobs), pbf.ReplayConfig(cluster=cluster, backfill=backfill, node_choice=choice,
                                                         node_search=search))
    engine = pbf.Engine(cluster, backfill=backfill, node_choice=choice, node_search=search)
    # jobs the replay rejects (no node set holds them) the engine answers with a Rejected naming why,
    # as the oracle finds them (pbf.reference.nodes_ref: no node set, all idle, holds the request)
    probe = pbf.Engine(cluster, node_choice=choice, node_search=search)
    asked = [pbf.Job(k + 1, 0, j["cores"], j["est"], mem_core_mb=j["mpc"], mem_node_mb=j["mpn"], gpus=j["gpus"],
                     nodes_min=j["nmin"], nodes_max=j["nmax"], features=j["feat"]) for k, j in enumerate(jobs)]
    said = {d.job_id: d.reason for d in probe.advance(0, [pbf.Submit(job) for job in asked])
            if isinstance(d, pbf.Rejected)}
    for k, job in enumerate(asked):
        rejected = want.jobs["state"][k] == pbf.codes.JobState.JS_REJECTED
        assert engine._nodes.problem(job) is None
        assert (job.id in said) == rejected == oracle_never_fits(nodes, job, engine._nodes, first_fit)
        assert not rejected or said[job.id].startswith(("no set of nodes can hold it: ", "larger than the cluster"))
    if said:
        return          # (the replay's queue had them too; driving the rest would differ in ids only)
    starts, decisions = _drive(engine, jobs)
    got = np.array([starts[k + 1] for k in range(len(jobs))])
    assert np.array_equal(got, want.jobs["start"])
    # what each Start names: the units' nodes, the memory and GPUs held there
    by_name = {n.name: n for n in nodes}
    first = np.cumsum([0] + [n.cores for n in nodes])
    for d in decisions:
        j = jobs[d.job_id - 1]
        assert sum(p.cores for p in d.nodes) == j["cores"] == len(d.units)
        for p in d.nodes:
            k = [n.name for n in nodes].index(p.node)
            assert ((d.units >= first[k]) & (d.units < first[k + 1])).sum() == p.cores
            assert p.memory_mb == p.cores * j["mpc"] + j["mpn"] and p.gpus == j["gpus"]
            assert set(j["feat"]) <= set(by_name[p.node].features)
        assert j["nmin"] <= len(d.nodes) or len(d.nodes) == j["cores"]
        if j["nmax"]:
            assert len(d.nodes) <= j["nmax"]


def test_start_names_nodes_and_memory_and_misuse_leaves_the_engine_unchanged():
    nodes = [Node("big", 8, 64000, 2, ("ib",)), Node("small", 8, 8000)]
    engine = pbf.Engine(Cluster.of_nodes(nodes, name="two"))
    d = engine.advance(0, [pbf.Submit(pbf.Job(1, 0, 4, 600, mem_core_mb=10000))])
    assert [(p.node, p.cores, p.memory_mb, p.gpus) for p in d[0].nodes] == [("big", 4, 40000, 0)]
    # memory, not cores, keeps the next one waiting: big has 4 cores but 24,000 MB left
    assert engine.advance(1, [pbf.Submit(pbf.Job(2, 1, 3, 600, mem_core_mb=10000))]) == []
    d = engine.advance(2, [pbf.Submit(pbf.Job(3, 2, 2, 600, mem_core_mb=4000))])
    assert [(p.node, p.cores, p.memory_mb) for p in d[0].nodes] == [("small", 2, 8000)]
    before = engine.pending()
    for job, words in ((pbf.Job(4, 3, 2, 60, mem_core_mb=-5), "mem_core_mb -5"),
                       (pbf.Job(4, 3, 2, 60, nodes_min=2, nodes_max=1), "nodes_max 1")):      # malformed: refused
        with pytest.raises(pbf.ProtocolError, match=words):
            engine.advance(3, [pbf.Submit(pbf.Job(5, 3, 1, 60)), pbf.Submit(job)])
        assert engine.pending() == before
    # well formed but more than any node set holds: answered with a Rejected naming the resource
    for k, (job, words) in enumerate(((pbf.Job(10, 3, 2, 60, gpus=3), "3 GPUs"),
                                      (pbf.Job(11, 3, 2, 60, features=("fast",)), "fast"),
                                      (pbf.Job(12, 3, 2, 60, mem_node_mb=100000), "100,000 MB"))):
        d = engine.advance(3, [pbf.Submit(job)])
        assert [type(x).__name__ for x in d] == ["Rejected"] and d[0].job_id == job.id and words in d[0].reason
        assert engine.pending() == before and engine.stats()["rejected"] == k + 1
    # the finish gives the memory back: job 2 starts on big
    d = engine.advance(600, [pbf.Finish(1, 600)])
    assert [(x.job_id, [(p.node, p.cores, p.memory_mb) for p in x.nodes]) for x in d] == [(2, [("big", 3, 30000)])]


def test_a_unit_cluster_with_named_nodes_names_them_and_refuses_resource_requests():
    engine = pbf.Engine(Cluster(units=8, nodes=(("a", 4), ("b", 4))))
    d = engine.advance(0, [pbf.Submit(pbf.Job(1, 0, 6, 60))])
    assert [(p.node, p.cores, p.memory_mb) for p in d[0].nodes] == [("a", 4, 0), ("b", 2, 0)]
    with pytest.raises(pbf.ProtocolError, match="carry none"):
        engine.advance(1, [pbf.Submit(pbf.Job(2, 1, 1, 60, mem_core_mb=100))])
    with pytest.raises(pbf.ConfigError, match="coalloc"):
        pbf.Engine(Cluster.of_nodes([Node("m", 4, 1000)]), coalloc=pbf.CoAllocation())
    with pytest.raises(pbf.ConfigError, match="node_choice"):
        pbf.Engine(8, node_choice="worst-fit")


def test_a_failed_call_with_python_plugins_restores_node_memory():
    """A Python plugin that raises after a finish freed memory: the engine's node counters are as
    before the call."""
    flaky = {"fail": False}

    def prio(jobs, now):
        if flaky["fail"]:
            raise RuntimeError("boom")
        return -np.asarray(jobs.submit, dtype=np.float64)

    engine = pbf.Engine(Cluster.of_nodes([Node("m", 4, 4000)]), priority=prio)
    engine.advance(0, [pbf.Submit(pbf.Job(1, 0, 2, 60, mem_core_mb=2000))])
    free = NodeCluster(engine._core).free()
    flaky["fail"] = True
    with pytest.raises(Exception, match="boom"):
        engine.advance(60, [pbf.Finish(1, 60), pbf.Submit(pbf.Job(2, 60, 1, 60, mem_core_mb=100))])
    assert NodeCluster(engine._core).free() == free


def test_unit_names_name_placements_and_outages():
    names = [f"host-{u // 4}" for u in range(16)]
    eng = pbf.Engine(16, unit_names=names)
    d = eng.advance(0, [pbf.Submit(pbf.Job("a", 0, 6, 100)), pbf.Drain(nodes=("host-3",), at=0)])
    assert [(p.node, p.cores) for p in d[0].nodes] == [("host-0", 4), ("host-1", 2)]
    assert eng.unit_names[d[0].units].tolist() == ["host-0"] * 4 + ["host-1"] * 2
    assert eng.down().tolist() == [12, 13, 14, 15]
    plain = pbf.Engine(16)
    same = plain.advance(0, [pbf.Submit(pbf.Job("a", 0, 6, 100)), pbf.Drain(units=(12, 13, 14, 15), at=0)])
    assert same[0].units.tolist() == d[0].units.tolist() and plain.unit_names is None
    with pytest.raises(pbf.ConfigError, match="units of node 'x' are not consecutive"):
        pbf.Engine(4, unit_names=["x", "y", "x", "y"])
    with pytest.raises(pbf.ConfigError, match="3 names for 4 units"):
        pbf.Engine(4, unit_names=["x", "y", "z"])
