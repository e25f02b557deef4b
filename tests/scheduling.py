"""Helpers shared by the scheduling tests: run the compiled core and the oracle on the same jobs, and
check the invariants every replay must keep."""
import numpy as np
from hypothesis import strategies as st

from pbf import _core
from pbf._outages import Outages
from pbf.cluster import Node
from pbf.codes import JobState, Predictor, Trigger
from pbf.config import Backfill
from pbf.plugins.corrections import code as correction_code
from pbf.plugins.priorities import FCFS, SJF
from pbf.reference import reference_replay
from pbf.workload.jobs import JobTable

INF = float("inf")

PREDICTOR_CODES = {"given": Predictor.PD_GIVEN, "ave2": Predictor.PD_AVE2, "regression": Predictor.PD_REGRESSION}


def compiled_replay(submit, units, est, run, total_units, backfill=Backfill(), prio_sjf=False,
                    trigger="event", bf_interval=30, workers=1, eager=False, priority=None,
                    predictor="given", regression=None, correction="incremental", req=None, user=None,
                    part=None, qos=None, stale=False, block_slots=None, outages=None, requeue=True):
    """The compiled replay; with ``workers`` > 1 every full pass is forced onto the parallel path
    (``eager``: the eager commit order; ``stale``: workers speculate on copies that skip the newest
    commits, so that commits must reconcile). ``priority``: a plugin object (default FCFS, or SJF with
    ``prio_sjf``); ``predictor``: given / ave2 / regression (with ``regression`` settings);
    ``outages``: the core's outage event arrays (:func:`pbf.outages.core_events`)."""
    core = _core.Core(total_units)
    core.set_testing(record_units=1, stale_speculation=int(stale))
    if block_slots is not None:
        core.set_testing(block_slots=block_slots)
    if workers > 1:
        core.set_testing(parallel_min_queue=1, parallel=1)
    priority = priority if priority is not None else (SJF() if prio_sjf else FCFS())
    core.configure(**backfill.core_settings(), **priority.core_settings(), sjbf=int(backfill.order != "queue"),
                   commit_eager=int(eager), correction=correction_code(correction),
                   trigger=Trigger.TR_INTERVAL if trigger == "interval" else Trigger.TR_EVENT,
                   bf_interval=bf_interval)
    if predictor == "regression":
        core.set_regression(*regression)
    core.configure(predictor=PREDICTOR_CODES[predictor])
    core.load_trace(*(np.ascontiguousarray(a, dtype=np.int64) for a in (submit, units, est, run)),
                    req=req, user=user, part=part, qos=qos)
    tree = priority.tree_for(int(np.max(user)) + 1 if user is not None and len(user) else 1) \
        if hasattr(priority, "tree_for") else None
    if tree is not None:
        a = tree.arrays()
        core.set_associations(a["parent"], a["shares_norm"], a["is_user"], a["user_of"], a["user_assocs"])
    if outages is not None:
        Outages(core).load(*outages, requeue)
    core.start_pool(workers)
    try:
        assert core.replay()
    finally:
        core.stop_pool()
    state, start, end, how, reason, _, first_planned = core.job_arrays()
    pred0, est_final, ncorr, _ = core.estimates()
    requeues, lost = Outages(core).failure_arrays()
    return {"state": state, "start": start, "end": end, "how": how, "reason": reason,
            "requeues": requeues, "lost": lost, "outage_figures": Outages(core).figures(),
            "first_planned": first_planned, "bits": core.recorded_units(), "core": core,
            "passes": core.pass_arrays(), "pred0": pred0, "est": est_final, "ncorr": ncorr}


def oracle_replay(submit, units, est, run, total_units, backfill=Backfill(), prio_sjf=False,
                  trigger="event", bf_interval=30, priority=None, predictor="given", regression=None,
                  correction="incremental", req=None, user=None, part=None, qos=None, outages=None,
                  requeue=True):
    events = None
    if outages is not None:
        events = [(int(t), int(k), INF if u < 0 else int(u), sum(int(w) << (64 * i) for i, w in enumerate(b)))
                  for t, k, u, b in zip(*outages)]
    ref = reference_replay(submit, units, est, run, total_units, trigger=trigger, outages=events, requeue=requeue,
                           bf_interval=bf_interval, prio_sjf=prio_sjf, priority=priority,
                           predictor=predictor, regression=regression, correction=correction,
                           req=req, user=user, part=part, qos=qos, **backfill.reference_kwargs())
    W = (total_units + 63) // 64
    bits = np.zeros((len(ref.jobs), W), dtype=np.uint64)
    for i, job in enumerate(ref.jobs):
        for w in range(W):
            bits[i, w] = (job.bits >> (64 * w)) & 0xFFFFFFFFFFFFFFFF
    field = lambda name: np.array([getattr(j, name) for j in ref.jobs], dtype=np.int64)
    passes = {"kind": np.array([0 if p[0] == "full" else 1 for p in ref.passes], dtype=np.int8),
              "time": np.array([p[1] for p in ref.passes], dtype=np.int64),
              "depth": np.array([p[2] for p in ref.passes], dtype=np.int64),
              "started": np.array([p[3] for p in ref.passes], dtype=np.int64),
              "reservations": np.array([p[4] for p in ref.passes], dtype=np.int64),
              "exit": np.array([p[5] for p in ref.passes], dtype=np.int8),
              "slots": np.array([p[6] for p in ref.passes], dtype=np.int64)}
    return {"state": field("state"), "start": field("start"), "end": field("end"), "how": field("how"),
            "reason": field("reason"), "bits": bits, "passes": passes, "pred0": field("pred0"),
            "requeues": field("requeues"), "lost": field("lost"),
            "outage_figures": {"killed": ref.killed, "requeued": ref.requeued, "lost_unit_s": ref.lost},
            "est": field("est"), "ncorr": field("ncorr")}


def check_invariants(result, submit, units, run, total_units, fcfs_easy=False):
    """No unit owned twice; owned + free = all; every job completed or rejected with a reason; a
    job never starts before it is submitted nor runs other than its run time; with FCFS and one
    reservation, no job starts later than any reservation it was given."""
    state, start, end, reason, bits = (result[k] for k in ("state", "start", "end", "reason", "bits"))
    n = len(submit)
    assert set(np.unique(state)) <= {JobState.JS_DONE, JobState.JS_REJECTED}
    assert ((state == JobState.JS_REJECTED) == (reason > 0)).all(), "rejected exactly when a reason is given"
    ran = state == JobState.JS_DONE
    assert (start[ran] >= np.asarray(submit)[ran]).all()
    assert (end[ran] - start[ran] == np.asarray(run)[ran]).all()
    counts = np.array([sum(bin(int(w)).count("1") for w in row) for row in bits])
    assert (counts[ran] == np.asarray(units)[ran]).all(), "each job owns exactly its units"
    # sweep: at every instant, ends before starts; a unit is never owned by two running jobs
    # (zero-length jobs hold their units for no time and are left out)
    timed = ran & (end > start)
    events = sorted([(int(end[j]), 0, j) for j in range(n) if timed[j]] +
                    [(int(start[j]), 1, j) for j in range(n) if timed[j]])
    busy = np.zeros(bits.shape[1], dtype=np.uint64)
    for _, kind, j in events:
        if kind == 0:
            assert ((busy & bits[j]) == bits[j]).all()
            busy &= ~bits[j]
        else:
            assert not (busy & bits[j]).any(), f"job {j} takes a unit another job holds"
            busy |= bits[j]
    assert not busy.any()
    if fcfs_easy and "first_planned" in result:
        planned = result["first_planned"]
        had = planned >= 0
        assert (start[had] <= planned[had]).all(), "a reservation was delayed"


FEATURES = ("fast", "ib")


@st.composite
def node_scenarios(draw):
    """Heterogeneous nodes with memory, GPUs and features, and jobs asking for them: (nodes, jobs,
    reservations, first_fit)."""
    nn = draw(st.integers(1, 6))
    nodes = [Node(f"n{i}", draw(st.integers(1, 8)), draw(st.sampled_from([1000, 2000, 4000, 8000])),
                  draw(st.integers(0, 2)), tuple(f for f in FEATURES if draw(st.booleans())))
             for i in range(nn)]
    n = draw(st.integers(1, 14))
    jobs = []
    t = 0
    for _ in range(n):
        t += draw(st.integers(0, 4))
        req = draw(st.integers(1, 12))
        per_node = draw(st.booleans())
        jobs.append(dict(submit=t, est=req, run=draw(st.integers(1, req)), cores=draw(st.integers(1, 12)),
                         mpc=0 if per_node else draw(st.sampled_from([0, 0, 250, 1000, 3000])),
                         mpn=draw(st.sampled_from([0, 1500, 5000])) if per_node else 0,
                         gpus=draw(st.sampled_from([0, 0, 0, 1, 2])), nmin=draw(st.integers(1, 3)),
                         nmax=draw(st.sampled_from([0, 0, 1, 2, 3])),
                         feat=tuple(f for f in FEATURES if draw(st.integers(0, 4)) == 0)))
    for job in jobs:
        if job["nmax"] and job["nmax"] < job["nmin"]:
            job["nmax"] = job["nmin"]
    return nodes, jobs, draw(st.sampled_from([1, 2, 4, None])), draw(st.booleans())


@st.composite
def busy_node_scenarios(draw):
    """node_scenarios' kind of jobs on a busy cluster over minutes (queues build up; ends spread over
    Slurm's 30 s will-run windows): (nodes, jobs, reservations, first_fit, bf_resolution, bf_window)."""
    nn = draw(st.integers(2, 6))
    nodes = [Node(f"n{i}", draw(st.integers(2, 8)), draw(st.sampled_from([4000, 8000, 16000])),
                  draw(st.integers(0, 2)), tuple(f for f in FEATURES if draw(st.booleans()))) for i in range(nn)]
    jobs, t = [], 0
    for _ in range(draw(st.integers(5, 40))):
        t += draw(st.integers(0, 40))
        est = draw(st.integers(1, 20)) * draw(st.sampled_from([5, 30, 60]))
        jobs.append(dict(submit=t, est=est, run=draw(st.integers(1, est)), cores=draw(st.integers(1, 10)),
                         mpc=draw(st.sampled_from([0, 0, 500, 2000])), mpn=draw(st.sampled_from([0, 0, 0, 3000])),
                         gpus=draw(st.sampled_from([0, 0, 0, 1, 2])), nmin=draw(st.integers(1, 2)),
                         nmax=draw(st.sampled_from([0, 0, 1, 2])),
                         feat=tuple(f for f in FEATURES if draw(st.integers(0, 5)) == 0)))
    for job in jobs:
        if job["mpn"]:
            job["mpc"] = 0
        if job["nmax"] and job["nmax"] < job["nmin"]:
            job["nmax"] = job["nmin"]
    return (nodes, jobs, draw(st.sampled_from([1, 3, None])), draw(st.booleans()), draw(st.sampled_from([0, 1, 60])),
            draw(st.sampled_from([0, 600])))


def node_table(jobs):
    """A JobTable of node_scenarios' jobs."""
    n = len(jobs)
    col = lambda k: np.array([j[k] for j in jobs], dtype=np.int64)  # noqa: E731
    table = JobTable.from_arrays(job_id=np.arange(1, n + 1), submit=col("submit"), run=col("run"),
                                 req_procs=col("cores"), req_time=col("est"), mem_core_mb=col("mpc"),
                                 mem_node_mb=col("mpn"), gpus=col("gpus"), nodes_min=col("nmin"),
                                 nodes_max=col("nmax"))
    table.features = ["&".join(j["feat"]) for j in jobs]
    return table


@st.composite
def scenarios(draw):
    """Cores-only replays: jobs (with bursts of identical ones), a backfill setting, a trigger and profile
    blocks small enough that whole-block placements, skips and splits occur."""
    units = draw(st.integers(1, 140))
    n = draw(st.integers(1, 45))
    gaps = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    submit = np.cumsum(gaps)
    size = np.array([draw(st.integers(1, units + (2 if draw(st.booleans()) and i % 7 == 0 else 0)))
                     for i in range(n)])
    req = np.array(draw(st.lists(st.integers(0, 300), min_size=n, max_size=n)))
    run = np.array([draw(st.integers(0, max(1, int(r)))) for r in req])
    run = np.where(req > 0, np.minimum(run, req), run)
    if draw(st.booleans()):
        # bursts of identical jobs arriving together, as in Beocat-like traces
        for i in range(1, n):
            if draw(st.integers(0, 2)) == 0:
                size[i], req[i], run[i] = size[i - 1], req[i - 1], run[i - 1]
                submit[i] = submit[i - 1]
    clairvoyant = draw(st.booleans())
    est = np.maximum(run, 1) if clairvoyant else req
    reservations = draw(st.sampled_from([0, 1, 1, 2, 3, None]))
    order = draw(st.sampled_from(["queue", "sjbf"]))
    backfill = Backfill(reservations=reservations,
                        max_job_test=draw(st.sampled_from([None, None, 1, 3, 8])),
                        window=draw(st.sampled_from([0, 0, 50, 200])),
                        resolution=draw(st.sampled_from([0, 0, 7, 60])),
                        order=order,
                        stop_at_reservation_limit=(reservations is not None and order == "queue"
                                                   and draw(st.integers(0, 3)) == 0))
    return dict(submit=submit, units=size, est=est, run=run, total_units=units, backfill=backfill,
                prio_sjf=draw(st.booleans()), trigger=draw(st.sampled_from(["event", "interval"])),
                bf_interval=draw(st.integers(1, 60)),
                # small profile blocks, so that whole-block placements, block skips and splits occur
                block_slots=draw(st.sampled_from([None, 1, 2, 3, 5])))


def replay_checked(table, config):
    """``pbf.replay(table, config)`` on a cluster of nodes, then :func:`check_node_invariants` on the
    compiled core's own placements (each job's cores, recorded while replaying)."""
    import dataclasses
    from unittest import mock

    import pbf
    from pbf import replay_result
    seen = {}
    real = replay_result.job_nodes

    def capture(units, cluster):
        seen["units"] = np.array(units, copy=True)
        return real(units, cluster)
    with mock.patch.object(replay_result, "job_nodes", side_effect=capture):
        result = pbf.replay(table, dataclasses.replace(config, record_nodes=True))
    check_node_invariants(result, config.node_cluster(), table, seen["units"])
    return result


def check_node_invariants(result, cluster, table, unit_bits):
    """At every instant, on every node: the running jobs' cores, memory and GPUs fit the node (free
    never negative); each started job holds exactly its cores, on nodes it may use (its node count
    within its bounds)."""
    jobs = result.jobs
    start, end, size = jobs["start"], jobs["end"], jobs["units"]
    order = np.argsort(table.job_id, kind="stable")          # result rows are in (submit, id) order
    by_id = {int(table.job_id[i]): i for i in order}
    nodes = cluster.nodes
    first = np.concatenate([[0], np.cumsum([n.cores for n in nodes])])
    bits = np.unpackbits(unit_bits.view(np.uint8), axis=1, bitorder="little")[:, :int(first[-1])]
    held = np.add.reduceat(bits, first[:-1], axis=1) if len(nodes) else bits   # cores per node per job
    mem_default = cluster.default_mem_per_core_mb
    events = []
    for k in range(len(start)):
        if start[k] < 0:
            assert not held[k].any(), f"job {jobs['id'][k]} never started but holds cores"
            continue
        assert held[k].sum() == size[k], f"job {jobs['id'][k]} holds {held[k].sum()} cores, asked {size[k]}"
        i = by_id[int(jobs["id"][k])]
        mpc, mpn = int(table.columns["mem_core_mb"][i]), int(table.columns["mem_node_mb"][i])
        gpus = int(table.columns["gpus"][i])
        used = np.nonzero(held[k])[0]
        nmin, nmax = int(table.columns["nodes_min"][i]), int(table.columns["nodes_max"][i])
        assert len(used) >= min(nmin, size[k]) and (nmax <= 0 or len(used) <= nmax), \
            f"job {jobs['id'][k]} on {len(used)} nodes, asked {nmin}-{nmax}"
        if end[k] > start[k]:
            use = [(int(n), int(held[k][n]),
                    mpn if mpn > 0 else (mpc if mpc > 0 else mem_default) * int(held[k][n]), gpus) for n in used]
            events.append((int(end[k]), 0, use))
            events.append((int(start[k]), 1, use))
    busy = np.zeros((len(nodes), 3), dtype=np.int64)
    cap = np.array([[n.cores, n.memory_mb or np.iinfo(np.int64).max, n.gpus] for n in nodes],
                   dtype=np.int64).reshape(-1, 3)      # (memory 0: not modelled on that node)
    for t, kind, use in sorted(events, key=lambda e: (e[0], e[1])):     # ends before starts
        for n, c, m, g in use:
            busy[n] += (1 if kind else -1) * np.array([c, m, g])
        over = np.nonzero((busy > cap).any(axis=1))[0]
        assert not len(over), f"at {t}: node {nodes[over[0]].name} holds {busy[over[0]].tolist()} " \
                              f"(cores, MB, GPUs) of {cap[over[0]].tolist()}"
        assert (busy >= 0).all()
    assert not busy.any()


def replay_against_node_oracles(search, nodes, table, ref_jobs, reservations, first_fit, resolution, window):
    """A node replay of ``table`` with ``search`` (``exact`` or ``slurm``; the exact plan takes no
    resolution or window) held to its oracle on ``ref_jobs`` (``pbf.reference`` jobs): the same starts
    and the same nodes. Returns the compiled result."""
    import pbf
    from pbf.cluster import Cluster
    from pbf.reference.nodes_ref import node_replay
    from pbf.reference.slurm_backfill_ref import slurm_node_replay
    if search == "exact":
        resolution = window = 0
    config = pbf.ReplayConfig(cluster=Cluster.of_nodes(nodes, name="h"), node_search=search, record_nodes=True,
                              backfill=pbf.Backfill(reservations=reservations, resolution=resolution, window=window),
                              node_choice="first-fit" if first_fit else "best-fit")
    got = replay_checked(table, config)
    if search == "slurm":
        want = slurm_node_replay(nodes, ref_jobs, reservations, window=window, resolution=resolution,
                                 first_fit=first_fit)
    else:
        want = node_replay(nodes, ref_jobs, reservations, first_fit)
    assert got.jobs["start"].tolist() == want["start"]
    names = [",".join(nodes[i].name for i in sorted(a)) if a else "" for a in want["alloc"]]
    assert got.jobs["nodes"].tolist() == names
    return got


def slurm_or_skip():
    """Skip the calling test, saying why, where no real Slurm can run (pbf.validate's requirements)."""
    import pytest

    from pbf.validate.slurm_run import SlurmUnavailable, check_requirements
    try:
        check_requirements()
    except SlurmUnavailable as exc:
        pytest.skip(f"no real Slurm here: {exc}")


def within_pct(a, b, window=2):
    """The harness's per-job agreement: per cent of the jobs whose starts in ``a`` and ``b`` (seconds; ""
    for a job without one, left out) are at most ``window`` seconds apart, to one decimal."""
    pairs = [(x, y) for x, y in zip(a, b) if x != "" and y != ""]
    return round(100 * sum(abs(float(x) - float(y)) <= window for x, y in pairs) / len(pairs), 1)


def awt_runs_mean(summary):
    """The mean AWT of a harness summary's Slurm runs (run 1 and each ``slurm_runK``)."""
    runs = [summary["awt_s"]["slurm"]] + [summary["awt_s"][f"slurm_run{k}"] for k in range(2, summary["repeat"] + 1)]
    return sum(runs) / len(runs)


def generator_writes(data, script: str, output: str, tmp_path) -> bytes:
    """What the harness workload generator ``script`` (in the folder ``data``, beside the
    ``make_workloads.py`` it imports) writes to ``output`` when run in ``tmp_path``."""
    import shutil
    import subprocess
    import sys
    for name in (script, "make_workloads.py"):
        shutil.copy(data / name, tmp_path / name)
    subprocess.run([sys.executable, script], cwd=tmp_path, check=True, capture_output=True)
    return (tmp_path / output).read_bytes()
