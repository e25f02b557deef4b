"""Slurm's backfill on nodes (``node_search="slurm"``, ext/slurm_space.pxd) against its plain-Python
oracle (pbf.reference.slurm_backfill_ref), and the oracle's rules on small cases worked by hand from
Slurm 22.05's source (backfill.c ``_add_reservation``/``_attempt_backfill``, job_test.c
``_will_run_test``)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import pbf
from pbf.cluster import Cluster, Node
from pbf.reference.nodes_ref import NodeRequest, node_replay
from pbf.reference.slurm_backfill_ref import NodeSpace, RunningJob, backfill_job, slurm_node_replay, will_run

from scheduling import busy_node_scenarios, node_scenarios, node_table, replay_checked


def _ref_jobs(jobs):
    return [dict(submit=j["submit"], run=j["run"], est=j["est"],
                 req=NodeRequest(j["cores"], j["mpc"], j["mpn"], j["gpus"], j["nmin"], j["nmax"], frozenset(j["feat"])))
            for j in jobs]


def _compiled(nodes, jobs, reservations, first_fit, resolution=0, window=0, **run):
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm",
                              backfill=pbf.Backfill(reservations=reservations, resolution=resolution, window=window),
                              node_choice="first-fit" if first_fit else "best-fit", **run)
    return replay_checked(node_table(jobs), config)      # (and no node over-committed at any instant)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_node_scenarios())
def test_compiled_slurm_backfill_is_the_oracle(case):
    nodes, jobs, reservations, first_fit, resolution, window = case
    got = _compiled(nodes, jobs, reservations, first_fit, resolution, window, record_nodes=True)
    want = slurm_node_replay(nodes, _ref_jobs(jobs), reservations, window=window, resolution=resolution,
                             first_fit=first_fit)
    assert got.jobs["start"].tolist() == want["start"]
    # the same nodes, too (record_nodes: each job's node names)
    names = [",".join(nodes[i].name for i in sorted(a)) if a else "" for a in want["alloc"]]
    assert got.jobs["nodes"].tolist() == names


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(node_scenarios())
def test_compiled_slurm_backfill_is_the_oracle_on_small_cases(case):
    nodes, jobs, reservations, first_fit = case
    got = _compiled(nodes, jobs, reservations, first_fit)
    assert got.jobs["start"].tolist() == slurm_node_replay(nodes, _ref_jobs(jobs), reservations,
                                                           first_fit=first_fit)["start"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(busy_node_scenarios())
def test_slurm_backfill_keeps_the_invariants(case):
    # no node over-committed at any instant, every job started or rejected, none before its submit;
    # and the same decisions with 2 workers (the pass stays on one thread)
    nodes, jobs, reservations, first_fit, resolution, window = case
    got = _compiled(nodes, jobs, reservations, first_fit, resolution, window)
    two = _compiled(nodes, jobs, reservations, first_fit, resolution, window, workers=2)
    assert two.jobs["start"].tolist() == got.jobs["start"].tolist()
    want = slurm_node_replay(nodes, _ref_jobs(jobs), reservations, window=window, resolution=resolution,
                             first_fit=first_fit)
    for j, job in enumerate(jobs):
        assert want["start"][j] >= job["submit"] or want["reject"][j]
    times = sorted({s for s in want["start"] if s >= 0})
    for t in times:
        use = {}
        for j, s in enumerate(want["start"]):
            if s >= 0 and s <= t < want["end"][j] or s == t:
                for i, (c, m, g) in want["alloc"][j].items():
                    u = use.setdefault(i, [0, 0, 0])
                    u[0] += c
                    u[1] += m
                    u[2] += g
        for i, (c, m, g) in use.items():
            assert c <= nodes[i].cores and m <= nodes[i].memory_mb and g <= nodes[i].gpus


def test_a_reservation_takes_whole_nodes_and_records_merge_as_slurm_does():
    space = NodeSpace(3, now=100, window=1000, resolution=1)
    space.reserve(150, 250, {0: 2})
    assert space.recs == [[100, 150, {0, 1, 2}], [150, 250, {1, 2}], [250, 1100, {0, 1, 2}]]
    space.reserve(150, 250, {1: 1})          # same span: the records split nowhere
    assert space.recs == [[100, 150, {0, 1, 2}], [150, 250, {2}], [250, 1100, {0, 1, 2}]]
    # a reservation from the cycle's start leaves an empty first record, as Slurm's does
    space.reserve(100, 120, {2: 1})
    assert space.recs[:3] == [[100, 100, {0, 1, 2}], [100, 120, {0, 1}], [120, 150, {0, 1, 2}]]
    assert space.overlaps({2: 1}, 110, 111) and not space.overlaps({0: 1}, 110, 150)
    offered, later = space.offer({0, 1, 2}, 100, 160)
    assert offered == set() and later == 120


def test_the_will_run_test_starts_at_the_last_end_of_a_batch():
    # one node of 8 cores, all busy: jobs end at 103, 140 and 155; a 6-core job needs the first two.
    # The first batch runs to 103 rounded up to 120, plus 30 s: ends <= 150 (103 and 140); the test
    # after it succeeds, and the start is the batch's last end, 140 (the exact earliest start: 140)
    node = [Node("a", 8, 8000, 0, ())]
    run = [RunningJob(103, {0: (3, 0, 0)}), RunningJob(140, {0: (3, 0, 0)}), RunningJob(155, {0: (2, 0, 0)})]
    assert will_run(node, [(0, 8000, 0)], run, NodeRequest(3), {0}, now=90) == (140, {0: 3})
    # a 2-core job fits after the first end alone, yet starts at 140 too: the batch holds both ends
    assert will_run(node, [(0, 8000, 0)], run, NodeRequest(2), {0}, now=90) == (140, {0: 2})
    # when the second end lies beyond the first window, the first batch is the first end alone
    run[1] = RunningJob(151, {0: (3, 0, 0)})
    assert will_run(node, [(0, 8000, 0)], run, NodeRequest(2), {0}, now=90) == (103, {0: 2})
    assert will_run(node, [(0, 8000, 0)], run, NodeRequest(9), {0}, now=90) is None


def test_equal_ends_come_in_the_job_lists_order_in_the_will_run_test():
    # node b (4 cores, 1 free) is offered, node a is not. Jobs Y (2 cores on b) and X (1 core on a) end
    # at 170, Z (1 core on b) at 500. The first batch runs to 180 + 30: after a job whose resources
    # return, job_test.c looks at the next job's end; a job without an offered node is passed over
    # unchecked. Y before X (Slurm's job list, the order of submission): Y, then X (170, within the
    # window) passed over, then Z given back in the same batch: the start is 500. X before Y: after Y,
    # Z's end (500) is past the window; the start is 170. The order of the list handed in is not it.
    nodes = [Node("a", 1, 8000, 0, ()), Node("b", 4, 8000, 0, ())]
    free = [(0, 7000, 0), (1, 6000, 0)]
    for x_job, start in [(3, 500), (1, 170)]:
        run = [RunningJob(500, {1: (1, 0, 0)}, 0), RunningJob(170, {0: (1, 0, 0)}, x_job),
               RunningJob(170, {1: (2, 0, 0)}, 2)]
        assert will_run(nodes, free, run, NodeRequest(2), {1}, now=100) == (start, {1: 2})
        assert will_run(nodes, free, run[::-1], NodeRequest(2), {1}, now=100) == (start, {1: 2})


def test_a_job_started_in_the_cycle_keeps_its_place_among_equal_ends():
    # n0 (fast, 1 core), n1 (ib, 4 cores). At 100 job 2 (Y, submitted at 1) starts on n1 to 170; job 3
    # (X, on n0 since 2) ends at 170 too, job 0 (Z, on n1) at 500. Job 4 (2 cores on n1) is tested next:
    # Y comes before X, as in Slurm's job list, so its will-run test gives back Y, passes X over and
    # gives back Z in the same batch: it reserves n1 from 500, and job 5 (1 core, 100 s) starts at once
    # on n1's free core. (Taking X first, by its earlier start, reserves n1 from 170: job 5 waits.)
    nodes = [Node("n0", 1, 8000, 0, ("fast",)), Node("n1", 4, 8000, 0, ("ib",))]
    shape = [(0, 500, 1, ("ib",)), (0, 100, 2, ("ib",)), (1, 70, 2, ("ib",)), (2, 168, 1, ("fast",)),
             (4, 100, 2, ("ib",)), (5, 100, 1, ("ib",))]
    jobs = [dict(submit=s, run=e, est=e, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=f) for s, e, c, f in shape]
    for reservations in (None, 1):
        got = _compiled(nodes, jobs, reservations, False, record_nodes=True)
        want = slurm_node_replay(nodes, _ref_jobs(jobs), reservations)
        assert got.jobs["start"].tolist() == want["start"] == [0, 0, 100, 2, 170, 100]


def test_equal_ends_in_a_busy_case_found_by_the_property_test():
    # (a counterexample of test_compiled_slurm_backfill_is_the_oracle, shrunk.) At 855 job 8 starts on
    # n1, n5 to 885, where job 13 ends on n0 too; job 12 (8 cores, 1 GPU, ib) is tested next. Job 8 comes
    # first in Slurm's job list: job 13 (n0, not offered) is passed over, and the batch gives back job 10
    # too (1514); job 12 reserves n4, n5 from 1514, not 885, so job 17 (9 cores, 600 s) starts at once on n0, n2, n4.
    nodes = [Node("n0", 8, 16000, 0, ("fast",)), Node("n1", 6, 16000, 2, ()), Node("n2", 3, 16000, 0, ()),
             Node("n3", 8, 16000, 0, ("ib",)), Node("n4", 7, 16000, 1, ("ib",)), Node("n5", 4, 16000, 2, ("ib",))]
    shape = [(38, 43, 43, 1, 1, 1, 0, ()), (38, 719, 719, 2, 2, 2, 0, ()), (76, 840, 746, 9, 0, 1, 0, ()),
             (76, 3, 3, 8, 0, 1, 1, ()), (76, 55, 55, 7, 2, 1, 0, ()), (173, 360, 360, 2, 0, 2, 0, ()),
             (173, 570, 319, 6, 0, 1, 2, ()), (173, 75, 75, 8, 0, 1, 2, ()), (173, 30, 30, 7, 2, 1, 0, ()),
             (325, 360, 149, 7, 0, 1, 0, ()), (325, 780, 780, 9, 0, 1, 0, ()), (325, 80, 80, 5, 1, 1, 0, ()),
             (325, 10, 10, 8, 1, 1, 0, ("ib",)), (388, 60, 60, 1, 0, 1, 0, ("fast",)), (526, 480, 178, 2, 0, 1, 0, ()),
             (592, 100, 100, 6, 0, 1, 0, ()), (659, 840, 840, 1, 0, 1, 0, ()), (659, 600, 600, 9, 0, 1, 0, ())]
    jobs = [dict(submit=s, est=e, run=r, cores=c, mpc=0, mpn=0, gpus=g, nmin=lo, nmax=hi, feat=f)
            for s, e, r, c, g, lo, hi, f in shape]
    got = _compiled(nodes, jobs, 3, True, record_nodes=True)
    want = slurm_node_replay(nodes, _ref_jobs(jobs), 3, first_fit=True)
    assert got.jobs["start"].tolist() == want["start"]
    assert want["start"][8:] == [855, 325, 734, 474, 885, 825, 526, 592, 692, 855]
    assert got.jobs["nodes"].tolist()[17] == "n0,n2,n4" and sorted(want["alloc"][17]) == [0, 2, 4]


def test_a_job_waits_for_a_reserved_node_instead_of_sharing_it():
    # two 8-core nodes; node 0 busy to 100 with 4 cores. Job A (8 cores) reserves node 0 at 100
    # (whole node, to 200); job B (2 cores, 150 s) would fit on node 0's free cores now, but
    # node 0 is reserved within B's window: it goes to node 1, which is free.
    nodes = [Node("a", 8, 8000, 0, ()), Node("b", 8, 8000, 0, ())]
    space = NodeSpace(2, now=0, window=1000, resolution=1)
    free = [[4, 8000, 0], [0, 8000, 0]]
    run = [RunningJob(100, {0: (4, 0, 0)}), RunningJob(400, {1: (8, 0, 0)})]
    assert backfill_job(nodes, space, free, run, NodeRequest(8), 100, 0, 1000) == ("reserve", 100, {0: 8})
    free[1][0] = 8
    assert backfill_job(nodes, space, free, run, NodeRequest(2), 150, 0, 1000) == ("start", 0, {1: 2})


def test_slurm_search_differs_from_the_exact_plan_where_slurm_does():
    # nodes a (8 cores) and b (4). Job 0 (7 cores) runs on a to 154; job 1 (11 cores) reserves from
    # 154. The exact plan holds 8 + 3 of its cores, so job 2 (1 core, 150 s) fits beside it on b now;
    # Slurm reserves job 1 the whole of a and b, so job 2 waits until 154.
    nodes = [Node("a", 8, 8000, 0, ()), Node("b", 4, 8000, 0, ())]
    jobs = [dict(submit=4, run=150, est=150, req=NodeRequest(7)), dict(submit=10, run=60, est=60, req=NodeRequest(11)),
            dict(submit=17, run=150, est=150, req=NodeRequest(1))]
    assert node_replay(nodes, jobs, None)["start"] == [4, 154, 17]
    assert slurm_node_replay(nodes, jobs, None)["start"] == [4, 154, 154]
    table = node_table([dict(submit=j["submit"], run=j["run"], est=j["est"], cores=j["req"].cores, mpc=0, mpn=0,
                             gpus=0, nmin=1, nmax=0, feat=()) for j in jobs])
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm",
                              backfill=pbf.Backfill(reservations=None))
    assert pbf.replay(table, config).jobs["start"].tolist() == [4, 154, 154]


def test_a_waiting_gpu_jobs_mark_makes_its_node_preferred_for_the_reservations_after_it(monkeypatch):
    # nodes a, b (4 cores) and g (4 cores, 2 GPUs). Job 0 runs on a:4, b:2 to 32 and job 1 (GPU) on
    # g:3. Job 2 (3 cores, 1 GPU) waits for g; its test, first in every pass, marks g (weight 0xff - 1).
    # Job 3 (6 cores), tested next, plans g first and reserves it whole from 32, so job 4 (1 core,
    # 30 s), which fits on g's free core now, waits to 32. Without the mark job 3 reserves a and b,
    # and job 4 starts at once on g.
    from pbf.reference import slurm_backfill_ref
    nodes = [Node("a", 4, 8000, 0, ()), Node("b", 4, 8000, 0, ()), Node("g", 4, 8000, 2, ())]
    shape = [(2, 30, 6, 0), (3, 120, 3, 1), (8, 120, 3, 1), (11, 60, 6, 0), (13, 30, 1, 0)]
    jobs = [dict(submit=s, run=e, est=e, req=NodeRequest(c, gpus_per_node=g)) for s, e, c, g in shape]
    assert slurm_node_replay(nodes, jobs)["start"] == [2, 3, 123, 32, 32]
    table = node_table([dict(submit=s, run=e, est=e, cores=c, mpc=0, mpn=0, gpus=g, nmin=1, nmax=0, feat=())
                        for s, e, c, g in shape])
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm",
                              backfill=pbf.Backfill(reservations=None))
    assert pbf.replay(table, config).jobs["start"].tolist() == [2, 3, 123, 32, 32]
    monkeypatch.setattr(slurm_backfill_ref, "gpu_weights", lambda *args: None)
    assert slurm_node_replay(nodes, jobs)["start"] == [2, 3, 123, 32, 13]


def test_a_job_the_idle_cluster_holds_is_never_refused_for_weights_and_never_waits_for_ever():
    # the weights other jobs leave on the nodes split the runs; a 9-core job on exactly 3 nodes must
    # still be found feasible, and start once the nodes are free (a pass at every event resets the
    # weights of the nodes its first jobs may use, as Slurm's main scheduler does)
    nodes = [Node("n0", 2, 16000, 2, ("a",)), Node("n1", 4, 16000, 0, ()), Node("n2", 2, 16000, 1, ("b",)),
             Node("n3", 3, 16000, 0, ())]
    shape = [(0, 600, 1, 2, ("a",), 1, 0), (0, 600, 1, 1, ("b",), 1, 0), (1, 60, 9, 0, (), 3, 3)]
    jobs = [dict(submit=s, run=e, est=e, req=NodeRequest(c, gpus_per_node=g, min_nodes=lo, max_nodes=hi,
                                                         features=frozenset(f))) for s, e, c, g, f, lo, hi in shape]
    assert slurm_node_replay(nodes, jobs)["start"] == [0, 0, 600]
    table = node_table([dict(submit=s, run=e, est=e, cores=c, mpc=0, mpn=0, gpus=g, nmin=lo, nmax=hi, feat=f)
                        for s, e, c, g, f, lo, hi in shape])
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm")
    assert pbf.replay(table, config).jobs["start"].tolist() == [0, 0, 600]


@pytest.mark.parametrize("lag, below, second", [(0, 0, 5), (1, 0, 6), (1, 10, 6), (1, 3, 5)])
def test_end_lag_holds_short_jobs_a_second_longer_and_reports_their_own_end(lag, below, second):
    # two 4-unit jobs of 5 s on 4 units under the slurm-sim clock: the second starts when the
    # scheduler sees the first end (5 s, or 6 s with the lag); ends are reported as start + run
    from pbf.scheduler_time import SlurmSim
    from pbf.workload.jobs import JobTable
    table = JobTable.from_arrays(job_id=np.array([1, 2]), submit=np.array([0, 0]), run=np.array([5, 5]),
                                 req_procs=np.array([4, 4]), req_time=np.array([60, 60]))
    config = pbf.ReplayConfig(units=4, clock="slurm-sim", trigger="interval", bf_interval=1,
                              backfill=pbf.Backfill(reservations=None),
                              slurm_sim=SlurmSim(end_lag=lag, end_lag_below=below, bf_yield_interval=1))
    got = pbf.replay(table, config)
    assert got.jobs["start"].tolist() == [0, second]
    assert got.jobs["end"].tolist() == [5, second + 5]


def test_record_nodes_needs_nodes():
    with pytest.raises(pbf.ConfigError, match="record_nodes"):
        pbf.ReplayConfig(units=8, record_nodes=True)


@pytest.mark.parametrize("bad", [dict(node_search="fast"), dict(node_search="slurm", cluster=None),
                                 dict(node_search="slurm", backfill=pbf.Backfill(order="sjbf"))])
def test_bad_node_search_settings_are_refused(bad):
    nodes = [Node("a", 8, 8000, 0, ())]
    settings_ = dict(cluster=Cluster.of_nodes(nodes, name="h"))
    settings_.update(bad)
    with pytest.raises(pbf.ConfigError, match="node_search"):
        pbf.ReplayConfig(**settings_)


def test_the_will_run_tests_windows_fall_on_multiples_of_30_s_of_unix_time():
    # one node of 8 cores, all busy: jobs end at 65, 96 and 120 (replay seconds); a 3-core job needs the
    # first two. With the replay's second 0 on a multiple of 30 s of Unix time (phase 0) the first batch
    # runs to 65 rounded up to 90, plus 30 s: it holds all three ends, and the start is 120. With second 0
    # at Unix second ...4 (phase 4: drain4's run 1), 65 is Unix ...69, rounded up to ...90 (replay 86):
    # the batch holds 65 and 96 (<= 116) alone, and the start is 96 (job_test.c: end_time % time_window)
    node = [Node("a", 8, 8000, 0, ())]
    run = [RunningJob(65, {0: (2, 0, 0)}), RunningJob(96, {0: (2, 0, 0)}), RunningJob(120, {0: (4, 0, 0)})]
    assert will_run(node, [(0, 8000, 0)], run, NodeRequest(3), {0}, now=36) == (120, {0: 3})
    assert will_run(node, [(0, 8000, 0)], run, NodeRequest(3), {0}, now=36, phase=4) == (96, {0: 3})
    assert will_run(node, [(0, 8000, 0)], run, NodeRequest(3), {0}, now=36, phase=30 - 5) == (120, {0: 3})


def test_the_compiled_core_aligns_its_windows_on_the_clock_origin():
    # the same on the compiled core, with a ninth core free: a 3-core job (limit 60 s) waiting behind those
    # ends reserves the node from 120 on phase 0, from 96 at clock origin ...4; a 1-core job of 60 s
    # submitted at 37 fits on the free core before 120 but not before 96, so it starts at once only on
    # phase 0 (and the 3-core job waits for its end); at ...4 it waits, and the 3-core job starts at 65
    # (drain4's job 13 at +36 s or +39 s)
    from pbf.bf_limits import SlurmBackfill
    nodes = [Node("a", 9, 8000, 0, ())]
    shape = [(0, 65, 65, 2), (0, 96, 96, 2), (0, 120, 120, 4), (36, 60, 60, 3), (37, 50, 60, 1)]
    jobs = [dict(submit=s, run=r, est=e, cores=c, mpc=0, mpn=0, gpus=0, nmin=1, nmax=0, feat=())
            for s, r, e, c in shape]
    for origin, last in ((0, [87, 37]), (1795866574, [65, 96]), (1795866574 + 21, [87, 37])):
        config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search="slurm",
                                  backfill=SlurmBackfill(reservations=None, clock_origin=origin))
        got = replay_checked(node_table(jobs), config)
        want = slurm_node_replay(nodes, _ref_jobs(jobs), None, phase=origin % 30)
        assert got.jobs["start"].tolist() == want["start"]
        assert want["start"][3:] == last


@pytest.mark.parametrize("bad", [-1, 1 << 41, 1.5, True])
def test_a_bad_clock_origin_is_refused(bad):
    from pbf.bf_limits import SlurmBackfill
    with pytest.raises(pbf.ConfigError, match="clock_origin"):
        SlurmBackfill(clock_origin=bad)
