"""The compiled node model against the plain-Python oracle (pbf.reference.nodes_ref): heterogeneous
nodes with memory, GPUs and features; memory-bound, GPU, multi-node and feature-constrained jobs; EASY,
N reservations and conservative; decision by decision (every job's start)."""
import contextlib
import dataclasses
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf import _core, replayer
from pbf._nodes import NodeCluster
from pbf.cluster import Cluster, Node
from pbf.reference.nodes_ref import NodeRequest, node_replay

from scheduling import node_scenarios, node_table, replay_checked


def _oracle(nodes, jobs, reservations, first_fit):
    ref_jobs = [dict(submit=j["submit"], run=j["run"], est=j["est"],
                     req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"],
                                     frozenset(j["feat"])))
                for j in jobs]
    return node_replay(nodes, ref_jobs, reservations, first_fit)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_scenarios())
def test_compiled_node_replay_is_the_oracle(case):
    nodes, jobs, reservations, first_fit = case
    cluster = Cluster.of_nodes(nodes, name="h")
    config = pbf.ReplayConfig(cluster=cluster, backfill=pbf.Backfill(reservations=reservations),
                              node_choice="first-fit" if first_fit else "best-fit")
    got = replay_checked(node_table(jobs), config)
    want = _oracle(nodes, jobs, reservations, first_fit)
    assert got.jobs["start"].tolist() == want["start"]
    rejected = got.jobs["state"] == pbf.codes.JobState.JS_REJECTED
    assert rejected.tolist() == [bool(r) for r in want["reject"]]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_scenarios())
def test_no_node_is_over_committed(case):
    # every instant: on every node, the running jobs' cores, memory and GPUs fit the node
    nodes, jobs, reservations, first_fit = case
    cluster = Cluster.of_nodes(nodes, name="h")
    config = pbf.ReplayConfig(cluster=cluster, backfill=pbf.Backfill(reservations=reservations),
                              node_choice="first-fit" if first_fit else "best-fit")
    got = pbf.replay(node_table(jobs), config)
    want = _oracle(nodes, jobs, reservations, first_fit)
    start, end = got.jobs["start"], got.jobs["end"]
    # allocations from the oracle (the same starts, held by the test above); the compiled live counters
    # are checked by test_live_counters_return_to_capacity
    for t in sorted({int(s) for s in start if s >= 0}):
        use = {i: [0, 0, 0] for i in range(len(nodes))}
        for j, s in enumerate(start):
            if 0 <= s <= t < end[j] and want["alloc"][j] is not None:
                for i, (c, m, g) in want["alloc"][j].items():
                    use[i][0] += c
                    use[i][1] += m
                    use[i][2] += g
        for i, (c, m, g) in use.items():
            assert c <= nodes[i].cores and m <= nodes[i].memory_mb and g <= nodes[i].gpus


def test_live_counters_return_to_capacity():
    from pbf._core import Core
    from pbf.resources import job_feature_bits, load_nodes, requests_of
    nodes = [Node("a", 4, 8000, 1), Node("b", 8, 4000, 0, ("fast",))]
    cluster = Cluster.of_nodes(nodes, name="c")
    core = Core(cluster.units)
    bits = load_nodes(core, cluster)
    jobs = [dict(submit=0, est=5, run=5, cores=6, mpc=500, mpn=0, gpus=0, nmin=1, nmax=0, feat=()),
            dict(submit=0, est=5, run=3, cores=1, mpc=0, mpn=1000, gpus=1, nmin=1, nmax=1, feat=())]
    table = node_table(jobs)
    req = requests_of(table)
    core.load_trace(table.submit, table.req_procs, table.req_time, table.run)
    NodeCluster(core).set_requests(0, req.mem_core_mb, req.mem_node_mb, req.gpus, req.nodes_min,
                                   req.nodes_max, job_feature_bits(bits, req.features))
    core.submit(0)
    core.submit(1)
    started, _ = core.run_pass(0)
    assert sorted(started.tolist()) == [0, 1]
    free = NodeCluster(core).free()
    # job 0: best fit takes all of node b (8 cores would be too many: 6 on b); job 1: node a's GPU
    assert free[1][0] == 2 and free[1][1] == 4000 - 6 * 500
    assert free[0][2] == 0 and free[0][1] == 8000 - 1000
    core.finish(0, 5)
    core.finish(1, 3)
    assert NodeCluster(core).free() == [(4, 8000, 1), (8, 4000, 0)]


def test_a_job_no_node_set_holds_is_rejected_naming_the_resource():
    nodes = [Node("a", 4, 1000, 0), Node("b", 4, 1000, 1)]
    jobs = [dict(submit=0, est=5, run=5, cores=2, mpc=0, mpn=0, gpus=2, nmin=1, nmax=0, feat=()),
            dict(submit=0, est=5, run=5, cores=1, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=("gpu-a100",)),
            dict(submit=0, est=5, run=5, cores=4, mpc=600, mpn=0, gpus=0, nmin=1, nmax=1, feat=()),
            dict(submit=0, est=5, run=5, cores=1, mpc=0, mpn=2000, gpus=0, nmin=1, nmax=0, feat=()),
            dict(submit=0, est=5, run=5, cores=2, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=())]
    got = pbf.replay(node_table(jobs), pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="small")))
    assert got.jobs["state"].tolist()[:4] == [pbf.codes.JobState.JS_REJECTED] * 4
    reasons = got.summary["nodes"]["never_fit_by_reason"]
    assert "no node has 2 GPUs" in reasons and "no node has features gpu-a100" in reasons
    assert "no node has 2,000 MB of memory" in reasons
    assert any(r.startswith("asks for 4 cores at 600 MB a core on at most 1 nodes") for r in reasons)
    assert got.summary["jobs"]["rejected_by_reason"] == {"no set of nodes can hold it": 4}


@pytest.mark.parametrize("reservations", [1, None])
def test_a_unit_cluster_replay_is_unchanged_by_the_node_code(reservations):
    # the node model is off without cluster=: the SDSC-SP2-like generated trace decides as before
    from pbf.workload.lublin import generate_lublin
    table = generate_lublin(400, seed=3)
    a = pbf.replay(table, pbf.ReplayConfig(backfill=pbf.Backfill(reservations=reservations)))
    nodes = [Node(f"n{i}", 1, 1 << 20, 0) for i in range(a.summary["units"])]
    b = pbf.replay(table, pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="ones"), mem_from="none",
                                           backfill=pbf.Backfill(reservations=reservations)))
    # one-core nodes with room for any memory: a job's cores are any free cores, as with units; the
    # starts agree (unit choice differs, decisions on counts do not)
    assert a.jobs["start"].tolist() == b.jobs["start"].tolist()


def test_summary_counts_resource_use_and_heads_held_by_memory():
    """One node, 4 cores, 4,000 MB: job 1 holds 2 cores and all the memory for 10 s, so job 2 (1 core)
    waits with cores free: every pass that meets it counts as held by more than cores."""
    jobs = [dict(submit=0, est=10, run=10, cores=2, mpc=2000, mpn=0, gpus=0, nmin=1, nmax=0, feat=()),
            dict(submit=0, est=10, run=10, cores=1, mpc=1000, mpn=0, gpus=0, nmin=1, nmax=0, feat=())]
    got = pbf.replay(node_table(jobs), pbf.ReplayConfig(cluster=Cluster.of_nodes([Node("n", 4, 4000)], name="one")))
    assert got.jobs["start"].tolist() == [0, 10]
    nodes = got.summary["nodes"]
    assert nodes["heads_blocked"] >= 1 and nodes["heads_blocked_with_cores_free"] == nodes["heads_blocked"]
    assert nodes["heads_held_by_resources_share"] == 1.0
    # 2 x 10 + 1 x 10 core-seconds of 4 cores over 20 s; 40,000 + 10,000 MB-seconds of 4,000 MB
    assert nodes["utilisation"]["cores"] == pytest.approx(30 / 80)
    assert nodes["utilisation"]["memory"] == pytest.approx(50000 / 80000)
    assert nodes["utilisation"]["gpus"] is None


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


def _every_pass_parallel(stale=False):
    # every full pass on the worker threads (stale: workers speculate on the plan as at the pass
    # start, so that nearly every commit must reconcile)
    return _switches(parallel_min_queue=1, parallel=1, stale_speculation=int(stale))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_scenarios(), st.sampled_from([2, 3]), st.booleans(), st.sampled_from(["event", "interval"]))
def test_the_parallel_node_pass_is_the_oracle(case, workers, stale, trigger):
    # ordered commit: any number of workers, speculating on fresh or stale plans, decides as the
    # sequential pass, which decides as the oracle
    nodes, jobs, reservations, first_fit = case
    cluster = Cluster.of_nodes(nodes, name="h")
    config = pbf.ReplayConfig(cluster=cluster, backfill=pbf.Backfill(reservations=reservations),
                              node_choice="first-fit" if first_fit else "best-fit", trigger=trigger,
                              bf_interval=3)
    one = pbf.replay(node_table(jobs), config)
    with _every_pass_parallel(stale):
        many = replay_checked(node_table(jobs), dataclasses.replace(config, workers=workers))
    assert many.jobs["start"].tolist() == one.jobs["start"].tolist()
    decided = ("count", "full", "quick", "mean_depth", "max_depth", "exit_reasons")
    assert [many.summary["passes"][k] for k in decided] == [one.summary["passes"][k] for k in decided]
    assert many.summary["jobs"] == one.summary["jobs"]
    assert many.summary["nodes"] == one.summary["nodes"]
    if trigger == "event":
        want = _oracle(nodes, jobs, reservations, first_fit)
        assert many.jobs["start"].tolist() == want["start"]


def _beocat_quarter(reservations):
    # a resource-bearing Beocat-like slice on a quarter of Beocat's nodes, Slurm-like: the trace,
    # the config and its replay on one thread
    from pbf.workload.beocat import generate_beocat
    table = generate_beocat(600, window=3000, seed=5, resources=True)
    cluster = Cluster.of_nodes(Cluster.builtin("beocat").nodes[::4], name="quarter")
    config = pbf.ReplayConfig(cluster=cluster, trigger="interval",
                              backfill=pbf.Backfill(reservations=reservations, max_job_test=200))
    return table, config, pbf.replay(table, config)


@pytest.mark.parametrize("reservations", [1, None])
def test_the_parallel_node_pass_reconciles_on_a_beocat_slice(reservations):
    # a quarter of Beocat's nodes, every class, under a resource-bearing Beocat-like slice: workers
    # speculating on stale plans must reconcile (commits searched again), and still decide as one
    table, config, one = _beocat_quarter(reservations)
    for stale in (False, True):
        # (whether the second worker gets a CPU in time to test jobs depends on the host's load: a
        # run in which it tested none proves nothing of the reconciling, so up to three are made;
        # every one must decide as one thread)
        for _ in range(3):
            with _every_pass_parallel(stale):
                many = pbf.replay(table, dataclasses.replace(config, workers=2))
            assert many.jobs["start"].tolist() == one.jobs["start"].tolist()
            assert many.summary["passes"]["full"] == one.summary["passes"]["full"]
            passes = many.summary["passes"]
            if min(passes["thread_tests_per_worker"]) > 0 and (
                    not stale or passes["conflicts"] + passes["reevaluations"] > 0):
                break
        assert min(many.summary["passes"]["thread_tests_per_worker"]) > 0
        if stale:
            assert many.summary["passes"]["conflicts"] + many.summary["passes"]["reevaluations"] > 0


def _searches_shared(wait):
    # every node search's set-up shared with the helper thread, however few its eligible nodes
    # (wait: each shared part is done by the helper, never taken back by the searching thread)
    return _switches(split_min_nodes=1, split_wait=int(wait))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_scenarios(), st.sampled_from([2, 8]), st.booleans(), st.sampled_from(["event", "interval"]))
def test_searches_shared_with_a_helper_decide_as_the_oracle(case, workers, wait, trigger):
    # a sequential pass on nodes with a helper thread doing part of each search's set-up decides as
    # one thread alone, which decides as the oracle
    nodes, jobs, reservations, first_fit = case
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"),
                              backfill=pbf.Backfill(reservations=reservations),
                              node_choice="first-fit" if first_fit else "best-fit", trigger=trigger, bf_interval=3)
    one = pbf.replay(node_table(jobs), config)
    with _searches_shared(wait):
        many = pbf.replay(node_table(jobs), dataclasses.replace(config, workers=workers))
    assert many.jobs["start"].tolist() == one.jobs["start"].tolist()
    assert many.summary["jobs"] == one.summary["jobs"]
    assert many.summary["nodes"] == one.summary["nodes"]
    passes = many.summary["passes"]
    if wait:
        assert passes["searches_helped"] == passes["searches_shared"]
    if trigger == "event":
        assert many.jobs["start"].tolist() == _oracle(nodes, jobs, reservations, first_fit)["start"]


@pytest.mark.parametrize("reservations", [1, None])
def test_searches_shared_on_a_beocat_slice(reservations):
    # a quarter of Beocat's nodes under a resource-bearing slice: the helper takes part in the
    # searches (every one, when the searcher waits for it), and the decisions are one thread's
    table, config, one = _beocat_quarter(reservations)
    assert one.summary["passes"]["searches_shared"] == 0
    for wait in (False, True):
        with _searches_shared(wait):
            many = pbf.replay(table, dataclasses.replace(config, workers=2))
        assert many.jobs["start"].tolist() == one.jobs["start"].tolist()
        assert many.summary["passes"]["full"] == one.summary["passes"]["full"]
        assert many.summary["passes"]["searches_shared"] > 0
        if wait:
            assert many.summary["passes"]["searches_helped"] == many.summary["passes"]["searches_shared"]


def test_trials_of_sharing_decide_as_one_thread():
    # with the default switches, a pass on nodes shares its searches only where a trial of passes
    # with and without sharing found it faster; short trials (1 µs each way) make verdicts (how
    # many depends on the passes' wall times), and whatever they say, the decisions are one thread's
    table, config, one = _beocat_quarter(1)
    with _switches(split_min_nodes=1, split_trial_us=1):
        many = pbf.replay(table, dataclasses.replace(config, workers=2))
    assert many.jobs["start"].tolist() == one.jobs["start"].tolist()
    passes = many.summary["passes"]
    assert passes["full"] == one.summary["passes"]["full"]
    assert passes["search_sharing_trials"] >= 1
    assert 0 <= passes["search_sharing_trials_won"] <= passes["search_sharing_trials"]
    assert passes["searches_shared"] > 0          # (every trial's first pass shares)
    with _switches(split_min_nodes=1, split_trial_us=0):
        always = pbf.replay(table, dataclasses.replace(config, workers=2))
    assert always.jobs["start"].tolist() == one.jobs["start"].tolist()
    assert always.summary["passes"]["search_sharing_trials"] == 0
    assert always.summary["passes"]["searches_shared"] > 0


def test_a_trial_of_passes_too_far_apart_runs_again_before_its_verdict_holds():
    # a trial compares each way's pass wall time per test; sharing with one helper at most halves a
    # pass, so passes three times apart per test (the pass after a large submit against a later one)
    # differed in kind, and the trial runs again, up to twice in a row
    verdict = _core._trial_verdict
    assert verdict(5.3e9, 1000, 3.4e9, 1000, 0) == 1            # sharing 1.56x faster: share
    assert verdict(5.3e9, 1000, 5.2e9, 1000, 0) == 0            # within the 3 % margin: not
    assert verdict(5.3e9, 1000, 52e9, 1000, 0) == -1            # ten times apart: again
    assert verdict(52e9, 1000, 3.4e9, 1000, 1) == -1
    assert verdict(5.3e9, 1000, 52e9, 1000, 2) == 0             # ... twice at most
    assert verdict(5.3e9, 1000, 15.8e9, 1000, 0) == 0           # 2.98x apart: judged
    assert verdict(5.3e9, 100, 3.4e9, 1000, 0) == -1            # per test, not per pass


def test_a_verdict_against_sharing_from_passes_with_nothing_to_share_holds_briefly():
    # the machine filling (every job starts at once: no later start to test ahead) says little of the
    # deep queue's passes that follow: such a verdict against sharing holds for the trial's length,
    # not 16 times it
    keep = _core._trial_keep
    assert keep(10e9, False, 21, 11_000) == 10e9
    assert keep(10e9, False, 12_000, 1_000) == 160e9
    assert keep(10e9, True, 21, 11_000) == 160e9


def test_verdicts_against_sharing_from_idle_passes_in_a_row_hold_longer_each_time():
    # a shallow queue all along: each idle verdict in a row holds twice as long as the one before,
    # up to a verdict's usual 16 times, so that trials stop costing a quarter of the passes
    keep = _core._trial_keep
    assert [keep(10e9, False, 21, 11_000, run) / 10e9 for run in range(7)] == [1, 2, 4, 8, 16, 16, 16]
    assert keep(10e9, False, 12_000, 1_000, 3) == 160e9          # not idle: as before


def test_split_trial_switch_rejects_negative_values():
    with pytest.raises(ValueError, match="split_trial_us must be >= 0"):
        _core.Core(64).set_testing(split_trial_us=-1)
