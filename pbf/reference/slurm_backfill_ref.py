"""Slurm's backfill on nodes, written plainly in Python: the oracle of pbf's Slurm node search
(``node_search="slurm"``), held to the compiled one test by test.

Ported from Slurm 22.05 (github.com/SchedMD/slurm, tag ``slurm-22-05-9-1``); docs/slurm-harness.md says
what it changes in a replay.

* **The backfill map** (:class:`NodeSpace`; Slurm's ``node_space`` in
  ``src/plugins/sched/backfill/backfill.c``): time records ``[begin, end)`` from the cycle's start
  (rounded down to ``bf_resolution``) to the end of its window, each with the nodes no reservation of
  this cycle holds. Running jobs are not in it. A reservation takes the job's **whole nodes** for
  ``[start, start + limit)``, both rounded down to ``bf_resolution`` (``_add_reservation``, which also
  merges up to one pair of neighbouring records left identical).
* **A job's test** (:func:`backfill_job`; ``_attempt_backfill``'s ``TRY_LATER`` loop): from
  ``start_res`` = now, the nodes free of reservations over ``[start_res, start_res + limit]`` are
  offered to the will-run test; ``later_start`` is the end of the first record (after ``start_res``)
  whose successor offers a node the nodes so far do not. No nodes, or no start: try again from
  ``later_start``. A start now starts the job there. A start after ``later_start``: try again from
  ``later_start``. Else, within the window, the job reserves its chosen nodes unless they clash with
  an earlier reservation (then it tries again from its start).
* **The will-run test** (:func:`will_run`; ``_will_run_test`` in
  ``src/plugins/select/cons_common/job_test.c``): the job starts now if the select plugin's choice
  (:func:`pbf.reference.nodes_ref.eval_nodes`) finds nodes among those offered. Else the running jobs
  are taken by end (start + limit; equal ends in the order of Slurm's job list, that of submission:
  ``_cr_job_list_sort`` compares ends alone, and glibc's ``qsort`` is stable) and the resources of those
  with a node among the offered given back in batches: the first batch ends at the first end rounded up
  to the next multiple of 30 s of Slurm's clock (Unix time: ``phase``, the replay's second 0 there modulo
  30, moves where the multiples fall), plus 30 s; the window then doubles until the next end fits. The next
  job's end is looked at only after a job whose resources return: a job with no offered node is passed
  over unchecked, and the batch goes on to the job after it, whatever its end (so the order of equal
  ends matters). After each batch the choice is tried again; the first success
  starts the job at the batch's last end (a job already past its end: that end plus ``KillWait``).
  With no reservation left only the first test is made (``TEST_NOW_ONLY``).
* **Node weights** (:func:`gpu_weights`, :func:`reset_weights`; cons_tres ``can_job_run_on_node``,
  ``_sync_node_weight``): a GPU job's tests mark the nodes that could hold its GPUs, a start attempt
  resets the nodes of the job attempted (a submission's test, a main-scheduler test — here the tests of
  a pass up to its first job that cannot start —, a backfill start); lower weights are chosen first.
  Slurm 23.11's will-run test resets its offered nodes first; cons_res marks nothing
  (:class:`NodeWeights`; :mod:`pbf.slurm_versions`).
* **Slurm's own backfill limits** (:func:`bf_limit`; ``bf_max_job_user``, ``bf_max_job_part``,
  ``bf_max_job_start``, ``bf_min_prio_reserve``, ``bf_min_age_reserve``; :mod:`pbf.bf_limits`): before
  its test, a job whose user or partition has had its count of jobs this cycle is passed over; a cycle
  ends after its count of starts; a job of low priority or young may only start now; once a partition's
  jobs have made ``bf_job_part_count_reserve`` reservations in the cycle, its later jobs may only start
  now (``limits["part_resv"]``).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .counts_ref import Counts, ask_of, counts_of
from .nodes_ref import Holds, entry_requests, eval_nodes, node_cpus, node_replay, queue_entries
from .resv_ref import current, others

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from ..cluster import Node
    from .nodes_ref import NodeRequest

__all__ = ["NodeSpace", "NodeWeights", "will_run", "backfill_job", "node_filter", "gpu_weights", "reset_weights",
           "submit_weights", "main_test_weights", "RunningJob", "slurm_pass", "slurm_node_replay", "bf_limit",
           "KILL_WAIT", "WILL_RUN_WINDOW"]

#: Slurm's default KillWait (s): when a job past its end is guessed to end
KILL_WAIT = 30
#: the will-run test's first window (s), hard-coded in Slurm
WILL_RUN_WINDOW = 30
#: removals in one batch before Slurm checks its 2 s wall-time limit (and skips that batch's test)
BATCH_CHECK = 200


class RunningJob:
    """A running job as the will-run test sees it: its planned end, ``alloc`` {node: (cores, memory,
    GPUs)} and ``job``, its place in Slurm's job list (the order of submission: the job's index), which
    orders equal ends (all equal: as given)."""
    __slots__ = ("end", "alloc", "job")

    def __init__(self, end: int, alloc: Mapping[int, tuple[int, int, int]], job: int = 0) -> None:
        self.end = end
        self.alloc = alloc
        self.job = job


class NodeSpace:
    """Slurm backfill's map of this cycle's reservations: records ``[begin, end, nodes free]``."""

    def __init__(self, nn: int, now: int, window: int, resolution: int) -> None:
        begin = now // resolution * resolution
        self.resolution = resolution
        self.recs = [[begin, (now + window) // resolution * resolution, set(range(nn))]]

    def reserve(self, start: int, end: int, nodes: Iterable[int]) -> None:
        """``_add_reservation``: ``nodes`` are held over [start, end)."""
        recs, taken = self.recs, set(nodes)
        start = max(start, recs[0][0])
        if end < start + self.resolution:
            end = start + self.resolution
        placed, one_before, j = False, 0, 0
        while True:
            if recs[j][1] > start:
                recs.insert(j + 1, [start, recs[j][1], set(recs[j][2])])
                recs[j][1] = start
                placed = True
                break
            if recs[j][1] == start:
                placed = True
                break
            one_before = j
            if j + 1 >= len(recs):
                break
            j += 1
        one_after = None
        while placed and j + 1 < len(recs):
            j += 1
            if end < recs[j][1]:
                recs.insert(j + 1, [end, recs[j][1], set(recs[j][2])])
                recs[j][1] = end
            recs[j][2] -= taken
            if end == recs[j][1]:
                if j + 1 < len(recs):
                    one_after = j + 1
                break
        i = one_before
        while i != one_after and i + 1 < len(recs):
            if recs[i][2] != recs[i + 1][2]:
                i += 1
                continue
            recs[i][1] = recs[i + 1][1]
            del recs[i + 1]
            break

    def overlaps(self, nodes: Iterable[int], start: int, end: int) -> bool:
        """``_test_resv_overlap``: does a reservation hold one of ``nodes`` within [start, end)?"""
        nodes = set(nodes)
        return any(e > start and b < end and not nodes <= free for b, e, free in self.recs)

    def offer(self, usable: set[int], start_res: int, end_time: int) -> tuple[set[int], int | None]:
        """The nodes of ``usable`` no reservation holds over [start_res, end_time], and later_start
        (None: none)."""
        avail, later = set(usable), None
        recs = self.recs
        for k, (b, e, free) in enumerate(recs):
            if e > start_res and k + 1 < len(recs) and later is None:
                if not (usable & recs[k + 1][2]) <= (avail & free):
                    later = e
            if e <= start_res:
                pass
            elif b <= end_time:
                avail &= free
            else:
                break
        return avail, later


def node_filter(node: Node, req: NodeRequest) -> bool:
    """``job_req_node_filter``: may the job use this node at all (its features, and memory for one
    core or for the node)? GPUs are not asked here: a node without them stays offered. A node whose GPUs
    are of another type than the job's is not offered (pbf plans a GPU type as a node feature; Slurm
    offers it and its GRES test finds no GPU there: the one difference is that a start attempt resets
    the weights of the job's type's nodes only)."""
    return req.features <= set(node.features) and req.mem_per_node <= node.memory_mb \
        and req.mem_per_core <= node.memory_mb \
        and (not req.gpu_type or req.gpus_per_node <= 0 or req.gpu_type in node.gpu_type.split(","))


class NodeWeights(list):
    """The nodes' scheduling weights (all 0xff at first) and the rule a Slurm version and select plugin
    mark them by: ``carry`` (cons_tres of Slurm 20.11 and 22.05: a GPU job's marks stay until a start
    attempt), ``none`` (cons_res: no marks), ``per-test`` (cons_tres of Slurm 23.11: each will-run test
    resets its offered nodes first, ``_set_sched_weight``)."""

    def __init__(self, n: int, marks: str = "carry") -> None:
        super().__init__([0xff] * n)
        self.marks = marks


def gpu_weights(weights: list[int], free: Sequence[tuple[int, int, int]], candidates: Iterable[int],
                req: NodeRequest, ask=None) -> None:
    """A GPU job's test marks the nodes that could hold its GPUs: each candidate with the job's GPUs
    free (and its cores for one task; all of them when it must be one node) gets the weight 0xff
    less the GPUs it would use there (cons_tres ``can_job_run_on_node``: "favor nodes with more
    co-located GPUs"; ``ask``: what it asks of every generic resource, :func:`ask_of`, which a node
    must have free; the weight counts the GPUs). The mark stays until a start attempt resets it
    (:func:`reset_weights`)."""
    if req.gpus_per_node <= 0 or getattr(weights, "marks", "carry") == "none":
        return
    ask = req.gpus_per_node if ask is None else ask
    need = req.cores if req.max_nodes == 1 else 1
    for i in candidates:
        c, _, g = free[i]
        if c >= need and c > 0 and Counts.of(g) >= ask:
            weights[i] = 0xff - min(Counts.of(g).gpus, req.gpus_per_node)


def reset_weights(nodes: Sequence[Node], weights: list[int], candidates: Iterable[int], req: NodeRequest) -> None:
    """A start attempt (Slurm's ``select_nodes``: the main scheduler's test, the backfill's start)
    resets the weight of each candidate node the job may use (``_sync_node_weight``)."""
    ask = ask_of(req, nodes)
    for i in candidates:
        if node_filter(nodes[i], req) and counts_of(nodes[i]) >= ask:
            weights[i] = 0xff


def submit_weights(nodes: Sequence[Node], weights: list[int], req: NodeRequest) -> None:
    """A submission is a test-only start attempt (``job_allocate``): the job's usable nodes reset
    (:func:`reset_weights`), then, for a GPU job, each that could hold it when idle marked as
    :func:`gpu_weights` marks."""
    reset_weights(nodes, weights, range(len(nodes)), req)
    if req.gpus_per_node > 0:
        need = req.cores if req.max_nodes == 1 else 1
        ask = ask_of(req, nodes)
        usable = [i for i, n in enumerate(nodes) if node_filter(n, req) and counts_of(n) >= ask
                  and n.cores >= need]
        gpu_weights(weights, [(n.cores, n.memory_mb, counts_of(n)) for n in nodes], usable, req, ask)


def main_test_weights(nodes: Sequence[Node], weights: list[int], free: Sequence[tuple[int, int, int]],
                      req: NodeRequest) -> None:
    """A main-scheduler test (``select_nodes``): the job's usable nodes reset, then, for a GPU job, each
    of them that could hold it now marked as :func:`gpu_weights` marks."""
    reset_weights(nodes, weights, range(len(nodes)), req)
    ask = ask_of(req, nodes)
    usable = [i for i, n in enumerate(nodes) if node_filter(n, req) and counts_of(n) >= ask]
    gpu_weights(weights, free, usable, req, ask)


def _choose(nodes, free, offered, req, first_fit, weights):
    ask = ask_of(req, nodes)
    gpu_weights(weights, free, offered, req, ask)
    cpu = [node_cpus(*free[i], nodes[i].features, req, nodes[i].gpu_type, ask) if i in offered else 0
           for i in range(len(nodes))]
    return eval_nodes(cpu, req.cores, req.min_nodes, req.max_nodes, first_fit, weights)


def will_run(nodes: Sequence[Node], free: Sequence[tuple[int, int, int]], running: Sequence[RunningJob],
             req: NodeRequest, offered: set[int], now: int, first_fit: bool = False,
             weights: list[int] | None = None, now_only: bool = False,
             phase: int = 0) -> tuple[int, dict[int, int]] | None:
    """``_will_run_test``: (start, {node: cores}) for ``req`` on the ``offered`` nodes, given each
    node's ``free`` (cores, memory, GPUs) now and the ``running`` jobs; None: no start. ``weights``:
    the nodes' scheduling weights, which a GPU job's tests mark (:func:`gpu_weights`; None: a fresh
    list, all 0xff). ``now_only``: the test on the nodes as they are alone (Slurm's ``TEST_NOW_ONLY``,
    when no reservation is left). ``phase``: the replay's second 0 on Slurm's clock, modulo 30."""
    weights = weights if weights is not None else [0xff] * len(nodes)
    if getattr(weights, "marks", "carry") == "per-test":
        for i in offered:
            weights[i] = 0xff
    got = _choose(nodes, free, offered, req, first_fit, weights)
    if got is not None:
        return now, got
    if now_only:
        return None
    future = [list(f) for f in free]
    order = sorted(running, key=lambda r: (r.end, r.job))     # (equal ends: as Slurm's job list)
    window, end_time, k, n = WILL_RUN_WINDOW, None, 0, len(order)
    more = True
    while more:
        last = nxt = None
        removed = 0
        test = True
        while True:
            if k >= n:
                more = False
                break
            r = order[k]
            k += 1
            if not offered & r.alloc.keys():
                continue
            if end_time is None:
                end_time = r.end + (window - (r.end + phase) % window)
            last = r
            for i, (c, m, g) in r.alloc.items():
                if i in offered:
                    future[i][0] += c
                    future[i][1] += m
                    future[i][2] += g
            nxt = order[k] if k < n else None
            if nxt is None:
                more = False
                break
            if nxt.end > end_time + window:
                break
            removed += 1
            if removed > BATCH_CHECK + 1:
                test = False           # Slurm's 'goto timer_check': no test for this batch
                break
        if last is None:
            break
        if not test:
            continue
        window *= 2
        while nxt is not None and nxt.end > end_time + window:
            window *= 2
        got = _choose(nodes, future, offered, req, first_fit, weights)
        if got is not None:
            start = last.end if last.end > now else max(last.end + KILL_WAIT, now + 1)
            return start, got
    return None


def backfill_job(nodes: Sequence[Node], space: NodeSpace, free: Sequence[tuple[int, int, int]],
                 running: Sequence[RunningJob], req: NodeRequest, limit: int, now: int, window: int,
                 reserve: bool = True, first_fit: bool = False,
                 weights: list[int] | None = None,
                 windows: Sequence[tuple[int, int, Sequence[int]]] = (),
                 inside: Sequence | None = None, phase: int = 0) -> tuple[str, int, dict[int, int] | None]:
    """One job's backfill test (``_attempt_backfill``): ("start", now, nodes), ("reserve", start,
    nodes) (held in ``space``), or ("skip", -1, None). ``reserve`` False: only a start now counts (no
    reservation is left). A start is Slurm's ``_start_job``: the offered nodes' weights reset, then
    the choice made again on the nodes as they are. ``weights``: as :func:`will_run`'s (kept by the
    caller across tests and cycles). ``windows``: advance reservations, (start, end, node indices): at each
    start tried, the nodes of those over [start, end) are not offered (``job_test_resv``), whether or not
    ``space`` reaches them. ``inside``: the window of the reservation the job is inside of
    (:mod:`pbf.reference.resv_ref`; ``windows`` then the others'): a start tried outside it is a skip
    ("reservation defer"), and only its nodes are offered."""
    weights = weights if weights is not None else [0xff] * len(nodes)
    usable = set(range(len(nodes)))
    res = space.resolution
    later = now
    while True:
        start_res, later = later, None
        end_time = max(start_res, now) + limit
        offered, later = space.offer(usable, start_res, end_time)
        offered -= {i for s, e, idx, *_ in windows if s < end_time and e > start_res for i in idx}
        if inside is not None:
            if not inside[0] <= start_res < inside[1]:
                return "skip", -1, None
            offered &= set(inside[2])
        if not reserve and start_res > now:
            return "skip", -1, None
        if len(offered) < max(req.min_nodes, 1):
            if later is not None and reserve:
                continue
            return "skip", -1, None
        offered = {i for i in offered if node_filter(nodes[i], req)}
        got = will_run(nodes, free, running, req, offered, now, first_fit, weights, now_only=not reserve,
                       phase=phase)
        if got is None:
            if later is not None and reserve:
                continue
            return "skip", -1, None
        start, chosen = got
        start = max(start, start_res)
        if start <= now:
            reset_weights(nodes, weights, offered, req)
            chosen = _choose(nodes, free, offered, req, first_fit, weights)
            return ("start", now, chosen) if chosen is not None else ("skip", -1, None)
        if not reserve:
            return "skip", -1, None
        if later is not None and start > later:
            continue
        s, e = start // res * res, (start + limit) // res * res
        if start > now + window:
            return "skip", -1, None
        if space.overlaps(chosen, s, e):
            if start <= start_res:             # (cannot happen: the offer left those nodes out)
                return "skip", -1, None
            later = start
            continue
        space.reserve(s, e, chosen)
        return "reserve", start, chosen


def bf_limit(limits: Mapping[str, int] | None, job: Mapping[str, Any], now: int, started: int,
             counts: dict, part: dict, partition: int = 0) -> str:
    """Slurm's own backfill limits at a job the cycle reaches (``_attempt_backfill``,
    ``_job_exceeds_max_bf_param``; :mod:`pbf.bf_limits`): "stop" (``max_start`` jobs started: the cycle
    ends), "skip" (its user has had ``per_user`` jobs pass these checks this cycle, or ``per_user_part``
    in ``partition``, or the partition ``per_part``: not tested), "now" (priority below ``min_prio`` or
    waited less than ``min_age`` since its submission: a start now only) or "test". ``counts`` ({user:
    jobs}, {(user, partition): jobs}) and ``part`` ({partition: jobs}) are the cycle's counts, updated
    for a job that passes."""
    if not limits:
        return "test"
    if limits.get("max_start") and started >= limits["max_start"]:
        return "stop"
    user = job.get("user", 0)
    if limits.get("per_user") and counts.get(user, 0) >= limits["per_user"]:
        return "skip"
    if limits.get("per_user_part") and counts.get((user, partition), 0) >= limits["per_user_part"]:
        return "skip"
    if limits.get("per_part") and part.get(partition, 0) >= limits["per_part"]:
        return "skip"
    counts[user] = counts.get(user, 0) + 1
    counts[(user, partition)] = counts.get((user, partition), 0) + 1
    part[partition] = part.get(partition, 0) + 1
    if limits.get("min_prio") and job.get("prio", 0) < limits["min_prio"]:
        return "now"
    if limits.get("min_age") and now - job["submit"] < limits["min_age"]:
        return "now"
    return "test"


def slurm_pass(nodes: Sequence[Node], jobs: Sequence[Mapping[str, Any]], now: int, queue: Sequence[int],
               running: Mapping[int, tuple[int, Mapping]], reservations: int | None = None, window: int = 0,
               resolution: int = 1, first_fit: bool = False,
               weights: list[int] | None = None,
               limits: Mapping[str, int] | None = None,
               licenses: Mapping[str, int] | None = None,
               qos_limits: Mapping | None = None,
               windows: Sequence[tuple[int, int, Sequence[int]]] = (),
               phase: int = 0) -> dict[int, dict[int, tuple[int, int, int]]]:
    """One backfill cycle at ``now`` over ``queue`` in order (:func:`backfill_job` for each; a fresh
    :class:`NodeSpace`; ``reservations`` None: every job may reserve; ``window`` 0: unlimited;
    ``weights``: the nodes' scheduling weights, carried from cycle to cycle; ``limits``: Slurm's own
    backfill limits, :func:`bf_limit`, counted afresh each cycle; ``licenses``: the cluster's, a job
    waiting for its licenses passed over as ``_attempt_backfill`` does without bf_licenses; ``windows``:
    advance reservations, (start, end, node indices), records of the cycle's map holding their nodes, as
    ``job_test_resv`` leaves them out of a job's nodes; ``phase``: as :func:`will_run`'s): {job: alloc} of the
    jobs that start now."""
    holds = Holds(licenses, qos_limits, jobs, running)
    weights = weights if weights is not None else [0xff] * len(nodes)
    res = max(resolution, 1)
    win = window if window > 0 else 1 << 40
    space = _space(len(nodes), now, win, res, windows, None, [])
    made = []                            # this cycle's reservations, in order (start, end, nodes)
    free = [[n.cores, n.memory_mb, counts_of(n)] for n in nodes]
    run = []
    for j, (s, a) in running.items():
        run.append(RunningJob(s + jobs[j]["est"], a, j))
        for i, (c, m, g) in a.items():
            free[i][0] -= c
            free[i][1] -= m
            free[i][2] -= g
    left = reservations
    started = {}
    blocked = False
    counts, part = {}, {}
    resv_part = {}                       # reservations made in each partition (bf_job_part_count_reserve)
    part_resv = (limits or {}).get("part_resv") or 0
    reserved_jobs = set()
    stop = False
    for entry in queue_entries(jobs, queue):
        j, requests = entry_requests(jobs, entry)
        if j in started:
            continue                     # (started in another partition: _job_runnable_now)
        parts = entry_partitions(jobs, entry)
        several = len(jobs[j].get("records") or ()) > 1
        said = "test"
        if not several:
            said = bf_limit(limits, jobs[j], now, len(started), counts, part, parts[0])
            if said == "stop":
                break
            if said == "skip" or holds.passed_over(j):
                continue
        est = max(jobs[j]["est"], 1)
        reserved = j in reserved_jobs
        for req, partition in zip(requests, parts):
            if several:                  # (each record through the limits in its own partition)
                said = bf_limit(limits, jobs[j], now, len(started), counts, part, partition)
                if said == "stop":
                    stop = True
                    break
                if said == "skip":
                    continue
                if holds.passed_over(j):
                    break
            name = jobs[j].get("resv")
            cur = current(windows, name, now) if name is not None else None
            if name is not None and (cur is None or cur[0] > now):
                break                    # (its reservation not begun or over: job_test_resv, "reservation defer")
            if not blocked:
                # (a pass at every event stands for Slurm's main scheduler too: its tests, up to the first
                # job that cannot start, reset the weights as select_nodes does)
                main_test_weights(nodes, weights, free, req)
            one = bool(limits and limits.get("one_resv")) and reserved
            full = part_resv > 0 and resv_part.get(partition, 0) >= part_resv
            view = space if name is None else _space(len(nodes), now, win, res, windows, name, made)
            kind, start, chosen = backfill_job(nodes, view, free, run, req, est, now, win,
                                               reserve=(left is None or left > 0) and said != "now" and not one
                                               and not full,
                                               first_fit=first_fit, weights=weights, windows=others(windows, name),
                                               inside=cur, phase=phase)
            if kind == "start":
                got = {i: (c, c * req.mem_per_core + req.mem_per_node, ask_of(req, nodes)) for i, c in chosen.items()}
                started[j] = got
                holds.take(j)
                run.append(RunningJob(now + est, got, j))
                for i, (c, m, g) in got.items():
                    free[i][0] -= c
                    free[i][1] -= m
                    free[i][2] -= g
                break
            blocked = blocked or name is None  # (a job inside a reservation does not block: schedule()'s failed_resv)
            if kind == "reserve":
                made.append((start // res * res, (start + est) // res * res, set(chosen)))
                if view is not space:
                    space.reserve(*made[-1])
                reserved = True
                reserved_jobs.add(j)
                resv_part[partition] = resv_part.get(partition, 0) + 1
                if left is not None:
                    left -= 1
        if stop:
            break
    return started


def _space(nn, now, win, res, windows, name, made) -> NodeSpace:
    # the cycle's map: the windows of every reservation (but ``name``'s: a job inside it sees its nodes
    # free), by end, then the cycle's reservations so far
    space = NodeSpace(nn, now, win, res)
    for s, e, idx, *_ in sorted(others(windows, name), key=lambda w: (w[1], w[0])):
        if e > now:
            space.reserve(max(s, now), e, idx)
    for s, e, chosen in made:
        space.reserve(s, e, chosen)
    return space


def entry_partitions(jobs: Sequence[Mapping[str, Any]], entry) -> list[int]:
    """The partition (index, 0 if none) each request of a :func:`queue_entries` entry counts in for the
    backfill limits: a job's ``partition``, or its records' ``record_parts``."""
    if isinstance(entry, tuple):
        j, lo, hi = entry
        return list(jobs[j].get("record_parts") or [0] * len(jobs[j]["records"]))[lo:hi]
    job = jobs[entry]
    if job.get("records"):
        return list(job.get("record_parts") or [0] * len(job["records"]))
    return [job.get("partition", 0)]


def slurm_node_replay(nodes: Sequence[Node], jobs: Sequence[Mapping[str, Any]], reservations: int | None = None,
                      window: int = 0, resolution: int = 1, first_fit: bool = False,
                      limits: Mapping[str, int] | None = None, marks: str = "carry",
                      licenses: Mapping[str, int] | None = None, qos_limits: Mapping | None = None,
                      windows: Sequence[tuple[int, int, Sequence[int]]] = (), over_run: int = 0,
                      first_check: int | None = None, phase: int = 0) -> dict[str, list[Any]]:
    """:func:`pbf.reference.nodes_ref.node_replay` with Slurm's backfill cycle (:func:`slurm_pass`) as
    its pass; the nodes' scheduling weights carry over from one cycle to the next. ``limits``: Slurm's
    own backfill limits (:func:`bf_limit`; a job's ``user`` and ``prio`` come from its dict, 0 if
    absent); ``marks``: the weights' rule (:class:`NodeWeights`); ``phase``: the replay's second 0 on Slurm's
    clock (Unix time) modulo 30, where the will-run test's windows fall (:func:`will_run`)."""
    weights = NodeWeights(len(nodes), marks)
    seen = set()

    def run_pass(now, queue, running):
        for j in queue:                  # (new arrivals come last in the queue, in arrival order)
            if j not in seen:
                seen.add(j)
                submit_weights(nodes, weights, jobs[j]["req"])
        return slurm_pass(nodes, jobs, now, queue, running, reservations, window, resolution, first_fit, weights,
                          limits, licenses, qos_limits, windows, phase)

    return node_replay(nodes, jobs, reservations, first_fit, run_pass=run_pass, licenses=licenses,
                       qos_limits=qos_limits, windows=windows, over_run=over_run, first_check=first_check)
