"""Slurm's own backfill limits (pbf.bf_limits.SlurmBackfill, ext/bf_limits.pxd): the compiled core
against the oracle (pbf.reference.slurm_backfill_ref with ``limits``), the rules on small cases worked
by hand from Slurm 22.05's backfill.c, and limits off leaving every decision as it was."""
import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pbf
from pbf.bf_limits import SlurmBackfill
from pbf.cluster import Cluster, Node
from pbf.errors import ConfigError
from pbf.reference.nodes_ref import NodeRequest
from pbf.reference.slurm_backfill_ref import bf_limit, slurm_node_replay
from pbf.workload.jobs import JobTable

from scheduling import busy_node_scenarios, replay_checked


def _table(jobs):
    n = len(jobs)
    col = lambda k: np.array([j[k] for j in jobs], dtype=np.int64)  # noqa: E731
    table = JobTable.from_arrays(job_id=np.arange(1, n + 1), submit=col("submit"), run=col("run"),
                                 req_procs=col("cores"), req_time=col("est"), mem_core_mb=col("mpc"),
                                 mem_node_mb=col("mpn"), gpus=col("gpus"), nodes_min=col("nmin"),
                                 nodes_max=col("nmax"), user=col("user"))
    table.features = ["&".join(j["feat"]) for j in jobs]
    return table


def _ref_jobs(jobs):
    return [dict(submit=j["submit"], run=j["run"], est=j["est"], user=j["user"],
                 req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
            for j in jobs]


def _compiled(nodes, jobs, backfill, **run):
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm", backfill=backfill,
                              **run)
    return replay_checked(_table(jobs), config)


@st.composite
def limited_scenarios(draw):
    nodes, jobs, reservations, first_fit, resolution, window = draw(busy_node_scenarios())
    users = draw(st.integers(1, 4))
    for job in jobs:
        job["user"] = draw(st.integers(1, users))
    limits = dict(max_job_user=draw(st.sampled_from([0, 0, 1, 2, 3])), max_job_part=draw(st.sampled_from([0, 0, 2, 5])),
                  max_job_start=draw(st.sampled_from([0, 0, 1, 2])),
                  min_age_reserve=draw(st.sampled_from([0, 0, 10, 60, 300])),
                  job_part_count_reserve=draw(st.sampled_from([0, 0, 1, 2])))
    return nodes, jobs, reservations, first_fit, resolution, window, limits


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(limited_scenarios())
def test_compiled_backfill_limits_are_the_oracle(case):
    nodes, jobs, reservations, first_fit, resolution, window, limits = case
    backfill = SlurmBackfill(reservations=reservations, resolution=resolution, window=window, **limits)
    got = _compiled(nodes, jobs, backfill, node_choice="first-fit" if first_fit else "best-fit")
    want = slurm_node_replay(nodes, _ref_jobs(jobs), reservations, window=window, resolution=resolution,
                             first_fit=first_fit, limits=backfill.reference_limits())
    assert got.jobs["start"].tolist() == want["start"]
    names = [",".join(nodes[i].name for i in sorted(a)) if a else "" for a in want["alloc"]]
    assert got.jobs["nodes"].tolist() == names


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(limited_scenarios())
def test_limits_off_leave_every_decision_as_it_was(case):
    nodes, jobs, reservations, first_fit, resolution, window, _ = case
    plain = pbf.Backfill(reservations=reservations, resolution=resolution, window=window)
    off = SlurmBackfill(reservations=reservations, resolution=resolution, window=window)
    a = _compiled(nodes, jobs, plain)
    b = _compiled(nodes, jobs, off)
    assert a.jobs["start"].tolist() == b.jobs["start"].tolist()
    assert a.jobs["nodes"].tolist() == b.jobs["nodes"].tolist()


def _one_node_jobs(n, user_of, cores=1, est=600, submit=0):
    return [dict(submit=submit, run=est, est=est, cores=cores, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(),
                 user=user_of(i)) for i in range(n)]


def test_max_job_user_passes_over_a_users_later_jobs_in_a_cycle():
    # one 4-core node; a 4-core job of user 1 holds it to t=600. Then 6 one-core jobs of user 2 and one
    # of user 3 arrive at t=1. With bf_max_job_user=2, each cycle tests 2 of user 2's jobs (neither can
    # start: the node is full; each reserves) and passes over the other 4; user 3's job is tested.
    nodes = [Node("a", 4, 8000, 0, ())]
    jobs = [dict(submit=0, run=600, est=600, cores=4, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), user=1)]
    jobs += _one_node_jobs(6, lambda i: 2, submit=1) + _one_node_jobs(1, lambda i: 3, submit=1)
    ref = _ref_jobs(jobs)
    counts, part = {}, {}
    said = [bf_limit({"per_user": 2}, ref[j], 1, 0, counts, part) for j in range(1, 8)]
    assert said == ["test", "test", "skip", "skip", "skip", "skip", "test"]
    assert {u: n for u, n in counts.items() if not isinstance(u, tuple)} == {2: 2, 3: 1}
    # whole replays: at t=600 the node frees; every job starts then or later, the compiled core as the oracle
    got = _compiled(nodes, jobs, SlurmBackfill(reservations=None, max_job_user=2))
    want = slurm_node_replay(nodes, ref, None, limits={"per_user": 2})
    assert got.jobs["start"].tolist() == want["start"]


def _job(submit, cores, est, user, nmin=1, feat=()):
    return dict(submit=submit, run=est, est=est, cores=cores, mpc=0, mpn=0, gpus=0, nmin=nmin, nmax=0, feat=feat,
                user=user)


def test_a_job_the_limit_leaves_untested_reserves_nothing_and_a_later_job_backfills():
    # three 2-core nodes, node a alone with feature "x". t=0: user 1's jobs hold a (to 1000) and one
    # other node (to 500). t=1: user 2's B1 (2 cores, on "x") reserves a from 1000; user 2's B2 (4 cores
    # on 2 nodes) reserves the two other nodes from 500; user 3's C (1 core, 1000 s) could start now on
    # the free node, but B2's whole-node reservation holds it within C's time: C waits. With
    # bf_max_job_user=1 the cycle passes over B2: C starts at once.
    nodes = [Node("a", 2, 8000, 0, ("x",)), Node("b", 2, 8000, 0, ()), Node("c", 2, 8000, 0, ())]
    jobs = [_job(0, 2, 1000, 1, feat=("x",)), _job(0, 2, 500, 1), _job(1, 2, 1000, 2, feat=("x",)),
            _job(1, 4, 1000, 2, nmin=2), _job(1, 1, 1000, 3)]
    starts = {}
    for limit in (0, 1):
        bf = SlurmBackfill(reservations=None, max_job_user=limit)
        got = _compiled(nodes, jobs, bf)
        want = slurm_node_replay(nodes, _ref_jobs(jobs), None, limits=bf.reference_limits())
        assert got.jobs["start"].tolist() == want["start"]
        starts[limit] = want["start"]
    assert starts[0][4] > 1 and starts[1][4] == 1


def test_max_job_start_ends_a_cycle_after_that_many_starts():
    # one 8-core node, 5 one-core jobs at t=0 ending at 50, 60, ...: with bf_max_job_start=2 the cycle
    # at t=0 starts 2 and ends; the next, at the first completion (50), 2 more; the last at 60
    nodes = [Node("a", 8, 8000, 0, ())]
    jobs = _one_node_jobs(5, lambda i: 1, est=100)
    for i, job in enumerate(jobs):
        job["run"] = 50 + 10 * i
    got = _compiled(nodes, jobs, SlurmBackfill(reservations=None, max_job_start=2))
    want = slurm_node_replay(nodes, _ref_jobs(jobs), None, limits={"max_start": 2})
    assert got.jobs["start"].tolist() == want["start"] == [0, 0, 50, 50, 60]


def test_min_age_reserve_tests_young_jobs_for_a_start_now_only():
    ref = _ref_jobs(_one_node_jobs(2, lambda i: 1, submit=100))
    assert bf_limit({"min_age": 60}, ref[0], 150, 0, {}, {}) == "now"
    assert bf_limit({"min_age": 60}, ref[0], 160, 0, {}, {}) == "test"
    assert bf_limit({"min_prio": 1000}, {**ref[0], "prio": 999}, 500, 0, {}, {}) == "now"


def test_max_job_assoc_takes_precedence_over_max_job_user():
    assert SlurmBackfill(max_job_user=2, max_job_assoc=5).per_user() == 5
    # (bf_max_job_user_part counts in each partition apart)
    assert SlurmBackfill(max_job_user=2, max_job_user_part=1).per_user() == 2
    assert SlurmBackfill(max_job_user=2, max_job_user_part=1).core_settings()["bf_max_user_part"] == 1
    assert SlurmBackfill(max_job_part=3).per_user() == 0


def test_limits_need_slurms_backfill_on_nodes_and_min_prio_a_multifactor_priority():
    nodes = [Node("a", 4, 8000, 0, ())]
    with pytest.raises(ConfigError, match="need node_search='slurm'"):
        pbf.ReplayConfig(backfill=SlurmBackfill(max_job_user=2))
    with pytest.raises(ConfigError, match="needs priority='multifactor'"):
        pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm",
                         backfill=SlurmBackfill(min_prio_reserve=10))
    pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm", priority="multifactor",
                     backfill=SlurmBackfill(min_prio_reserve=10))
    with pytest.raises(ConfigError, match="max_job_start"):
        SlurmBackfill(max_job_start=10_001)
    # the limits survive dataclasses.replace, as --slurm-conf's flags use it
    assert dataclasses.replace(SlurmBackfill(max_job_user=3), window=60).max_job_user == 3


def test_a_site_cycles_depth_is_its_users_times_bf_max_job_user(tmp_path):
    # as sdiag showed on the site (5 users x bf_max_job_user=20: a backfill depth of at most 100): under
    # the slurm-sim clock with a slurm.conf, 3 users and bf_max_job_user=2 test at most 6 jobs a cycle
    from pbf.codes import PassKind
    from pbf.slurm_settings import slurm_settings
    site = tmp_path / "slurm.conf"
    base = ("NodeName=n[1-2] CPUs=4 RealMemory=8000\nPartitionName=p Nodes=ALL Default=YES\n"
            "SchedulerParameters=bf_interval=30{}\n")
    rng = np.random.default_rng(3)
    jobs = [dict(submit=int(10 * i), run=int(rng.integers(200, 2000)), est=2400, cores=int(rng.integers(1, 5)),
                 mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), user=1 + i % 3) for i in range(60)]
    depths = {}
    for extra in ("", ",bf_max_job_user=2"):
        site.write_text(base.format(extra))
        result = pbf.replay(_table(jobs), slurm_settings(site).config)
        full = result.passes["kind"] == PassKind.PK_FULL
        depths[extra] = int(result.passes["depth"][full].max())
    assert depths[",bf_max_job_user=2"] <= 6 < depths[""]


@pytest.mark.parametrize("min_age, c_start", [(0, "pass"), (600, 20)])
def test_slurms_main_scheduler_goes_on_past_a_young_job_under_bf_min_age_reserve(min_age, c_start):
    # job_scheduler.c _schedule: a job that cannot start does not block its partition while it has waited
    # less than bf_min_age_reserve. Under the interval trigger the main scheduler runs at each event and
    # the backfill every 1,000 s: C (1 core) starts at its arrival only if B (4 cores, cannot start) does
    # not block the queue
    jobs = [dict(submit=s, est=e, run=e, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), user=1)
            for s, e, c in ((0, 5000, 2), (10, 100, 4), (20, 100, 1))]
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes([Node("n1", 4, 8000)], name="h"), node_search="slurm",
                              backfill=SlurmBackfill(reservations=1, min_age_reserve=min_age), trigger="interval",
                              bf_interval=1000)
    start = pbf.replay(_table(jobs), config).jobs["start"].tolist()
    assert start[0] == 0 and start[1] == 5000
    assert start[2] == 20 if c_start == 20 else start[2] > 20


def test_the_engine_refuses_the_limits_without_slurms_search():
    cluster = Cluster.of_nodes([Node("n1", 4, 8000)], name="h")
    with pytest.raises(ConfigError, match="node_search='slurm'"):
        pbf.Engine(cluster, backfill=pbf.SlurmBackfill(max_job_user=2))
    pbf.Engine(cluster, backfill=pbf.SlurmBackfill(max_job_user=2), node_search="slurm")


def test_the_summary_counts_what_the_limits_did():
    jobs = [dict(submit=0, est=100, run=100, cores=4, mpc=0, mpn=0, gpus=0, nmin=1, nmax=1, feat=(), user=1)
            for _ in range(4)]
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes([Node("n1", 4, 8000)], name="h"), node_search="slurm",
                              backfill=SlurmBackfill(reservations=None, max_job_user=1))
    f = pbf.replay(_table(jobs), config).summary["passes"]["bf_limits"]
    assert f["skipped"] > 0 and set(f) == {"skipped", "now_only"}
