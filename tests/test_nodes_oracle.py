"""The node-model oracle: Slurm's per-node core count under CR_Core_Memory, its consecutive-run best-fit
node choice, and a backfilling replay on nodes that never over-commits a node's cores, memory or GPUs."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbf.cluster import Node
from pbf.reference.nodes_ref import NodeRequest, eval_nodes, node_cpus, node_replay


def test_node_cpus_under_core_memory():
    mole = dict(free_cores=20, free_mem=27 * 1024, free_gpus=0, features=())
    assert node_cpus(**mole, req=NodeRequest(4, mem_per_core=4096)) == 6        # memory allows 6 of 20 cores
    assert node_cpus(**mole, req=NodeRequest(4)) == 20
    assert node_cpus(**mole, req=NodeRequest(4, gpus_per_node=1)) == 0
    assert node_cpus(**mole, req=NodeRequest(4, mem_per_node=28 * 1024)) == 0
    assert node_cpus(**mole, req=NodeRequest(4, features=frozenset({"gpu"}))) == 0
    assert node_cpus(20, 1000, 2, ("gpu", "ib"), NodeRequest(4, gpus_per_node=2, features=frozenset({"gpu"}))) == 20


def test_best_fit_takes_the_tightest_sufficient_run():
    # runs: nodes 0-1 (16 cores), node 3 (8), nodes 5-7 (24): 8 cores fit tightest in node 3
    cpu = [8, 8, 0, 8, 0, 8, 8, 8]
    assert eval_nodes(cpu, 8) == {3: 8}
    assert eval_nodes(cpu, 8, first_fit=True) == {0: 8}
    # 20 cores: the runs of 16 and 8 are short, the run of 24 is the tightest sufficient one
    assert eval_nodes(cpu, 20) == {5: 8, 6: 8, 7: 4}


def test_largest_run_first_when_none_suffices():
    cpu = [4, 0, 6, 6, 0, 2]
    got = eval_nodes(cpu, 16)
    assert got == {2: 6, 3: 6, 0: 4}
    assert list(got) == [2, 3, 0]                # the run of 12 first, then the run that suffices for 4


def test_single_node_best_fit_and_spreading_over_min_nodes():
    assert eval_nodes([32, 16, 20], 10) == {1: 10}            # one run; the smallest node that suffices
    got = eval_nodes([8, 8, 8], 4, min_nodes=2)
    assert len(got) == 2 and sum(got.values()) == 4          # one core kept for the second node
    assert eval_nodes([8, 8], 20) is None
    assert eval_nodes([8, 8, 8], 12, max_nodes=1) is None


@st.composite
def scenarios(draw):
    nn = draw(st.integers(1, 5))
    nodes = [Node(f"n{i}", draw(st.sampled_from([4, 8, 16])), draw(st.sampled_from([4096, 16384, 65536])),
                  draw(st.sampled_from([0, 0, 2])), ("gpu",) if draw(st.booleans()) else ()) for i in range(nn)]
    jobs = []
    t = 0
    for _ in range(draw(st.integers(1, 15))):
        t += draw(st.integers(0, 50))
        run = draw(st.integers(0, 300))
        req = NodeRequest(draw(st.integers(1, 24)), mem_per_core=draw(st.sampled_from([0, 512, 2048, 8192])),
                          gpus_per_node=draw(st.sampled_from([0, 0, 1])),
                          min_nodes=draw(st.integers(1, 2)),
                          features=frozenset({"gpu"}) if draw(st.integers(0, 4)) == 0 else frozenset())
        jobs.append({"submit": t, "run": run, "est": run + draw(st.integers(0, 100)), "req": req})
    return nodes, jobs, draw(st.sampled_from([0, 1, 2, None])), draw(st.booleans())


@given(scenarios())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_node_replay_invariants(scenario):
    nodes, jobs, reservations, first_fit = scenario
    out = node_replay(nodes, jobs, reservations=reservations, first_fit=first_fit)
    for j, job in enumerate(jobs):
        if out["reject"][j]:
            assert out["start"][j] == -1                       # rejected with the resource that stops it
            continue
        assert out["start"][j] >= job["submit"] and out["end"][j] == out["start"][j] + job["run"]
        alloc = out["alloc"][j]
        assert sum(c for c, _, _ in alloc.values()) == job["req"].cores          # its cores lie on its nodes
        assert len(alloc) >= job["req"].min_nodes
        for i, (c, m, g) in alloc.items():
            assert c > 0 and m == c * job["req"].mem_per_core and g == job["req"].gpus_per_node
            assert job["req"].features <= set(nodes[i].features)
    # no node over-committed at any instant
    points = {out["start"][j] for j in range(len(jobs)) if out["start"][j] >= 0}
    for t in points:
        for i, node in enumerate(nodes):
            use = [0, 0, 0]
            for j in range(len(jobs)):
                s, e = out["start"][j], out["end"][j]
                if s >= 0 and s <= t < e and i in out["alloc"][j]:
                    for k in range(3):
                        use[k] += out["alloc"][j][i][k]
            assert use[0] <= node.cores and use[1] <= node.memory_mb and use[2] <= node.gpus


def test_memory_blocks_the_head_and_backfill_runs_the_rest():
    # two 20-core nodes of 27 GB. A 1-core job takes 20 GB of the first; the next job asks 10 cores at
    # 4 GB a core: only 1 + 6 cores have their memory free, so it waits (reserved at 100, 6 + 4 cores)
    # although 39 cores are idle; the 1-core jobs behind it start at once, around the reservation
    nodes = [Node("mole01", 20, 27 * 1024), Node("mole02", 20, 27 * 1024)]
    jobs = [{"submit": 0, "run": 100, "est": 100, "req": NodeRequest(1, mem_per_core=20 * 1024)},
            {"submit": 1, "run": 50, "est": 50, "req": NodeRequest(10, mem_per_core=4 * 1024)},
            {"submit": 2, "run": 50, "est": 60, "req": NodeRequest(1, mem_per_core=1024)},
            {"submit": 3, "run": 500, "est": 500, "req": NodeRequest(1, mem_per_core=1024)}]
    out = node_replay(nodes, jobs, reservations=1)
    assert out["start"] == [0, 100, 2, 3]
    assert out["alloc"][1] == {0: (6, 6 * 4096, 0), 1: (4, 4 * 4096, 0)}
    assert list(out["alloc"][3]) == [0]          # best fit: 3 GB stay free on mole01 beside the reservation
    cores_only = [dict(j, req=NodeRequest(j["req"].cores)) for j in jobs]
    assert node_replay(nodes, cores_only, reservations=1)["start"] == [0, 1, 2, 3]
    big = jobs + [{"submit": 4, "run": 10, "est": 10, "req": NodeRequest(4, mem_per_core=13 * 1024)}]
    out = node_replay(nodes, big, reservations=1)
    assert out["reject"][4] == "" and out["start"][4] > 4                      # waits for memory, not cores


def test_a_job_no_node_can_hold_is_rejected_naming_the_resource():
    nodes = [Node("a", 8, 8192)]
    jobs = [{"submit": 0, "run": 1, "est": 1, "req": NodeRequest(1, gpus_per_node=1)},
            {"submit": 0, "run": 1, "est": 1, "req": NodeRequest(4, mem_per_core=4096)},
            {"submit": 0, "run": 1, "est": 1, "req": NodeRequest(1, features=frozenset({"ib"}))}]
    out = node_replay(nodes, jobs)
    assert out["reject"] == ["no node has 1 GPUs", "no set of nodes holds 4 cores at 4096 MB a core",
                             "no node has features ib"]
