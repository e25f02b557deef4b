"""The learned-policy episodes' EASY is the scheduler core's pass: on workloads full of simultaneous
events and equal ends, the default-mode backfilling episodes (ext/rl_core.pxd drives the core's
full pass) make exactly the decisions of the plain-Python EASY of pbf.reference.rlbackfilling."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pbf import _rlsim
from pbf.reference.rlbackfilling import ReferenceBackfillEnv
from pbf.rl.backfill_env import ORDERS, REQ_SCALE
from pbf.rl.trace import RLTrace


def _trace(tmp_path, jobs, procs):
    # SWF lines: submit, run, processors, requested time (-1: none)
    lines = [f"; MaxProcs: {procs}", f"; MaxNodes: {procs}"]
    lines += [f"{i + 1} {s} -1 {r} {p} -1 -1 {p} {q} -1 1 1 1 1 1 1 -1 -1" for i, (s, r, p, q) in enumerate(jobs)]
    path = tmp_path / "ties.swf"
    path.write_text("\n".join(lines) + "\n")
    return RLTrace.load(path, compat="rlbackfilling")


def _sim(t, req=None):
    return _rlsim.BackfillSim(t.submit, t.run, t.req if req is None else req, t.nodes, t.procs, t.total_nodes,
                              t.procs_per_node, float(t.max_procs), REQ_SCALE, len(t), 0, False, 0.0, False, 0, True)


# times of a few seconds, few sizes, requested times equal to the run times or a few seconds above
# them (a missing one: the run time, by RLBackfilling's loader): arrivals at the instants jobs end,
# several jobs ending together or a second apart, jobs at their requested end when the clock
# reaches them
_job = st.tuples(st.integers(0, 2), st.integers(0, 8), st.sampled_from([1, 1, 2, 3, 4, 8, 16]),
                 st.sampled_from([-1, 0, 0, 0, 1, 2]))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(_job, min_size=2, max_size=60))
def test_default_mode_easy_is_the_reference_easy(tmp_path, raw):
    jobs, t = [], 0
    for gap, run, size, extra in raw:
        t += gap
        r = run if run != 0 else 1
        jobs.append((t, r, size, -1 if extra < 0 else max(r, 1) + extra))
    tr = _trace(tmp_path, jobs, 16)
    n = len(tr)
    if n < 2:
        return
    ref = ReferenceBackfillEnv(tr, compat=False, baselines=False)
    sim = _sim(tr)
    for head in ORDERS:
        for order in ORDERS:
            got = sim.run_heuristic(0, n, ORDERS[head], ORDERS[order])
            want = ref.heuristic(0, n, head, order)
            assert sim.starts().tolist() == [j.start for j in ref.jobs], (head, order)
            assert got == pytest.approx(want, rel=1e-12)


def test_a_relaxed_shadow_keeps_the_episodes_rule(tmp_path):
    # relax > 0 is RLBackfilling's extension, not EASY: the episode's own rule decides (as the reference)
    rng = np.random.default_rng(4)
    jobs = [(int(10 * s), int(10 * r), int(p), int(10 * r + 10 * q)) for s, r, p, q in
            zip(np.cumsum(rng.integers(0, 4, 300)), rng.integers(1, 40, 300), rng.choice([1, 2, 4, 8, 16], 300),
                rng.integers(0, 5, 300))]
    tr = _trace(tmp_path, jobs, 16)
    ref = ReferenceBackfillEnv(tr, compat=False, baselines=False, relax=0.5, guarded=True)
    sim = _rlsim.BackfillSim(tr.submit, tr.run, tr.req, tr.nodes, tr.procs, tr.total_nodes, tr.procs_per_node,
                             float(tr.max_procs), REQ_SCALE, len(tr), 0, True, 0.5, False, 0, True)
    for head, order in (("fcfs", "fcfs"), ("fcfs", "sjf"), ("sjf", "fcfs")):
        assert sim.run_heuristic(0, len(tr), ORDERS[head], ORDERS[order]) == \
            pytest.approx(ref.heuristic(0, len(tr), head, order), rel=1e-12)
        assert sim.starts().tolist() == [j.start for j in ref.jobs]


def test_jobs_past_their_requested_end_count_together(tmp_path):
    # A job whose run time and requested time are both missing keeps a requested time of -1
    # (RLBackfilling's loader; 31 of SDSC-SP2's jobs): to the core it is due to end at once, so every
    # such running job gives its nodes back to the head's reservation one tick after now. Here jobs
    # 0 and 1 (1 and 8 nodes, 16 in all) are such jobs; job 2 (8 nodes) waits at t = 2 for them, and
    # job 3 (1 node, 1 s) fits in the 8 nodes to spare: it starts at once. (RLBackfilling's EASY,
    # and pbf.reference.rlbackfilling, order those two jobs by their "ends" 0 - 1 and 1 - 1, put the
    # head's shadow at -1 and leave it no node to spare: job 3 would wait until t = 11.)
    tr = _trace(tmp_path, [(0, -1, 1, -1), (1, -1, 8, -1), (2, 1, 8, 1), (2, 1, 1, 1)], 16)
    assert tr.req.tolist() == [-1, -1, 1, 1]
    sim = _sim(tr)
    sim.run_heuristic(0, 4, ORDERS["fcfs"], ORDERS["fcfs"])
    assert sim.starts().tolist() == [0, 1, 10, 2]


@pytest.mark.parametrize("act_size,guarded", [(1, False), (2, True), (3, False)])
def test_agent_episodes_with_the_classic_rule_equal_the_reference(tmp_path, act_size, guarded):
    # with act_size > 0 the classic rule (the core's pass) runs when the agent is not asked
    rng = np.random.default_rng(act_size)
    n = 400
    jobs = [(int(s), int(r), int(p), int(r + q)) for s, r, p, q in
            zip(np.cumsum(rng.integers(0, 3, n)), rng.integers(1, 9, n), rng.choice([1, 1, 2, 3, 4, 8, 16], n),
                rng.choice([0, 0, 0, 1, 2], n))]
    tr = _trace(tmp_path, jobs, 16)
    ref = ReferenceBackfillEnv(tr, guarded=guarded, compat=False, baselines=False, stop=True, act_size=act_size,
                               req_scale=REQ_SCALE)
    sim = _rlsim.BackfillSim(tr.submit, tr.run, tr.req, tr.nodes, tr.procs, tr.total_nodes, tr.procs_per_node,
                             float(tr.max_procs), REQ_SCALE, n, 0, guarded, 0.0, False, act_size, True)
    obs, mask = np.zeros(768, np.float32), np.zeros(128, np.int8)
    decisions = 0
    for first in (0, 150):
        o = ref.reset(first, 250)
        sim.reset(first, 250)
        sim.observe(obs, mask)
        while o is not None:
            assert np.allclose(o, obs, atol=1e-6)
            r = int(rng.integers(len(ref.visible) + 1))
            o = ref.step(r)
            sim.step(r, obs, mask)
            decisions += 1
        assert sim.done and ref.starts().tolist() == sim.starts().tolist()
    assert decisions > 50


def test_a_job_wider_than_the_cluster_is_refused(tmp_path):
    tr = _trace(tmp_path, [(0, 5, 4, 5), (1, 5, 8, 5)], 16)
    nodes = tr.nodes.copy()
    nodes[1] = 17
    with pytest.raises(ValueError, match="job 1 needs 17 nodes.*at most the cluster's 16"):
        _rlsim.BackfillSim(tr.submit, tr.run, tr.req, nodes, tr.procs, tr.total_nodes, tr.procs_per_node,
                           float(tr.max_procs), REQ_SCALE, 2, 0, False, 0.0, False, 0, True)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.lists(_job, min_size=2, max_size=60))
def test_job_selection_easy_is_the_reference_easy(tmp_path, raw):
    # the job-selection episodes' EASY (default mode) is the core's pass too: every heuristic, on
    # workloads dense in simultaneous events and equal ends, as pbf.reference.rlscheduler
    from pbf.reference.rlscheduler import HEURISTICS, ReferenceJobSelectionEnv
    from pbf.rl.env import HEURISTICS as CODES
    jobs, t = [], 0
    for gap, run, size, extra in raw:
        t += gap
        r = max(run, 1)
        jobs.append((t, r, size, r + max(extra, 0)))
    lines = ["; MaxProcs: 16", "; MaxNodes: 16"]
    lines += [f"{i + 1} {s} -1 {r} {p} -1 -1 {p} {q} -1 1 1 1 1 1 1 -1 -1" for i, (s, r, p, q) in enumerate(jobs)]
    path = tmp_path / "js.swf"
    path.write_text("\n".join(lines) + "\n")
    tr = RLTrace.load(path)
    n = len(tr)
    ref = ReferenceJobSelectionEnv(tr, compat=False, backfill=True, baselines=False)
    sim = _rlsim.Sim(tr.submit, tr.run, tr.req, tr.nodes, tr.procs, tr.features, total_nodes=tr.total_nodes,
                     ppn=tr.procs_per_node, max_procs=tr.max_procs, cap=n, compat=False, backfill=True, skip=False,
                     skip_time=60, metric=0)
    for name in HEURISTICS:
        sim.reset(0, n)
        assert sim.run_heuristic(CODES[name]) == pytest.approx(ref.heuristic(0, n, name), rel=1e-12)
        assert sim.starts().tolist() == [j.start for j in ref.jobs], name
