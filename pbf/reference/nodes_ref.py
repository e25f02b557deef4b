"""The node-model oracle: Slurm's consumable-resource placement (cons_res/cons_tres with CR_Core_Memory)
and a backfilling replay on nodes with cores, memory and GPUs, written plainly in Python.

Slow and obvious on purpose: it is what the compiled node model is held to. The rules, and where they
come from in Slurm (``src/plugins/select/cons_res/job_test.c``, Slurm 17.02-22.05):

* **Cores a node can give a job** (``node_cpus``; Slurm's ``cpu_cnt[i]`` from ``_allocate_sc`` and the
  memory test of ``_job_test``): its free cores, no more than its free memory allows at the job's memory
  per core (``--mem-per-cpu``; with memory per node, ``--mem``, the node gives nothing unless that much is
  free), nothing unless it has the job's GPUs per node free and every feature the job asks for.
* **Which nodes** (``eval_nodes``; Slurm's ``_eval_nodes``, the default consecutive-block best fit, and
  ``_choose_nodes``): nodes that can give cores are grouped in runs of consecutive indices; the run chosen
  is the first seen, replaced by the first one sufficient for the cores and nodes still needed, then by a
  sufficient one with fewer cores (tightest fit), or, while none is sufficient, by one with more cores
  (largest). Nodes are taken from it in index order, each giving at most the cores still needed less one
  for each further node the job must have (``_cpus_to_use``); when one node is still to be found, the
  single node of the run with the fewest sufficient cores is taken. The run is then emptied and the
  search goes on. When that fails, nodes with 1, 2, ... usable cores are dropped and it is tried again
  (``_choose_nodes``, against knapsack traps). ``first_fit`` takes nodes in index order instead.
* **Backfill on nodes**: a job starts now when nodes can be chosen for it now; otherwise, while
  reservations are left, it reserves the earliest planned end (or now) from which nodes can be chosen
  with the resources free throughout [start, start + estimate): at each node the least free cores,
  memory and GPUs over that span. Reserved resources are held in the plan for the rest of the pass.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .counts_ref import Counts, ask_of, counts_of, least
from .resv_ref import ended_at, event_starts, name_of, never_started, usable_at

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from ..cluster import Node

__all__ = ["NodeRequest", "node_cpus", "eval_nodes", "NodePlan", "node_replay", "exact_pass"]


@dataclass(frozen=True)
class NodeRequest:
    """What a job asks of the nodes: ``cores`` in all; ``mem_per_core`` or ``mem_per_node`` (MB, 0:
    none); ``gpus_per_node``; ``min_nodes``/``max_nodes`` (0: any); ``features`` every node must have;
    ``gpu_type``: the type its GPUs must be ("" any); ``gres``: its other generic resources per node,
    ``(name, count)`` pairs (:mod:`pbf.reference.counts_ref`)."""
    cores: int
    mem_per_core: int = 0
    mem_per_node: int = 0
    gpus_per_node: int = 0
    min_nodes: int = 1
    max_nodes: int = 0
    features: frozenset = frozenset()
    gpu_type: str = ""
    gres: tuple = ()

    def __post_init__(self):
        # as sbatch does with more nodes than tasks ("can't run 1 processes on 2 nodes, setting nnodes
        # to 1"): a job never has more nodes than cores
        if self.min_nodes > self.cores:
            object.__setattr__(self, "min_nodes", self.cores)


def node_cpus(free_cores: int, free_mem: int, free_gpus, features: Iterable[str], req: NodeRequest,
              gpu_type: str = "", ask=None) -> int:
    """How many of the job's cores a node (its GPUs of ``gpu_type``) can take now (0: none). ``free_gpus``:
    its free GPUs, or its free :class:`Counts` of every generic resource, of which the job asks ``ask``
    (:func:`ask_of`; None: its GPUs)."""
    if not Counts.of(free_gpus) >= (req.gpus_per_node if ask is None else ask) or not req.features <= set(features):
        return 0
    if req.gpu_type and req.gpus_per_node > 0 and req.gpu_type not in gpu_type.split(","):
        return 0
    c = free_cores
    if req.mem_per_core > 0:
        c = min(c, free_mem // req.mem_per_core)
    if req.mem_per_node > free_mem:
        return 0
    return max(c, 0)


def _enough_nodes(avail, rem, min_nodes, req_nodes):
    # Slurm's _enough_nodes: with req_nodes > min_nodes, only min_nodes must be found
    needed = rem - (req_nodes - min_nodes) if req_nodes > min_nodes else rem
    return avail >= needed


def _eval(cpu, rem_cpus, min_nodes, max_nodes, weight=None):
    n = len(cpu)
    rem_nodes = min_rem = min_nodes
    w = weight if weight is not None else [0] * n
    runs = []                                    # [cpus, nodes, start, end, weight]
    i = 0
    while i < n:
        if cpu[i] > 0:
            start = i
            cpus = nodes = 0
            while i < n and cpu[i] > 0 and w[i] == w[start]:
                cpus += cpu[i]
                nodes += 1
                i += 1
            runs.append([cpus, nodes, start, i - 1, w[start]])
        else:
            i += 1
    taken = {}
    while runs and max_nodes > 0:
        best = None
        for r, (cpus, nodes, _, _, rw) in enumerate(runs):
            if nodes == 0:
                continue
            sufficient = cpus >= rem_cpus and _enough_nodes(nodes, rem_nodes, min_nodes, min_nodes)
            if best is None or rw < best[4]:
                new = True
            else:
                bc, bs = best[1], best[3]
                new = rw == best[4] and ((sufficient and not bs) or (sufficient and cpus < bc)
                                         or (not sufficient and cpus > bc))
            if new:
                best = (r, cpus, nodes, sufficient, rw)
        if best is None:
            break
        r = best[0]
        first, last = runs[r][2], runs[r][3]
        avail = {i: cpu[i] for i in range(first, last + 1) if i not in taken}
        if rem_nodes <= 1:
            single = None
            for i in range(first, last + 1):
                if i in taken or cpu[i] < rem_cpus:
                    continue
                if single is None or cpu[i] < cpu[single]:
                    single = i
                    if cpu[i] == rem_cpus:
                        break
            if single is not None:
                avail = {i: (c if i == single else 0) for i, c in avail.items()}
        for i in range(first, last + 1):
            if max_nodes <= 0 or (rem_nodes <= 0 and rem_cpus <= 0):
                break
            if i in taken:
                continue
            a = avail.get(i, 0)
            if a <= 0:
                continue
            if max_nodes == 1 and a < rem_cpus:
                continue
            # _cpus_to_use: leave one core for each further node the job must have
            keep = max(rem_cpus - max(min_rem - 1, 0), 1)
            if a > keep:
                a = keep
            taken[i] = a
            rem_cpus -= a
            rem_nodes -= 1
            min_rem -= 1
            max_nodes -= 1
        if rem_nodes <= 0 and rem_cpus <= 0:
            return taken
        runs[r][0] = runs[r][1] = 0
    if rem_cpus <= 0 and rem_nodes <= 0:
        return taken
    return None


def eval_nodes(cpu: Sequence[int], cores: int, min_nodes: int = 1, max_nodes: int = 0,
               first_fit: bool = False, weight: Sequence[int] | None = None) -> dict[int, int] | None:
    """Choose nodes for ``cores`` cores given ``cpu[i]``, the cores node i can give: ``{node: cores}``
    or None. ``max_nodes`` 0: no limit. ``weight``: each node's scheduling weight (Slurm's
    ``sched_weight``): runs also break where it changes, and a run of lower weight is taken first,
    sufficient or not (None: all equal)."""
    n = len(cpu)
    max_nodes = max_nodes or n
    if min_nodes > max_nodes or sum(1 for c in cpu if c > 0) < min_nodes or sum(cpu) < cores:
        return None
    if first_fit:
        taken, rem, left = {}, cores, min_nodes
        for i, c in enumerate(cpu):
            if c <= 0 or len(taken) >= max_nodes:
                continue
            a = min(c, max(rem - max(left - 1, 0), 1))
            taken[i] = a
            rem -= a
            left -= 1
            if rem <= 0 and left <= 0:
                return taken
        return None
    got = _eval(list(cpu), cores, min_nodes, max_nodes, weight)
    if got is not None:
        return got
    top = max(cpu)
    cut = list(cpu)
    for count in range(1, top):
        changed = False
        for i, c in enumerate(cut):
            if 0 < c <= count:
                cut[i] = 0
                changed = True
        if changed:
            got = _eval(cut, cores, min_nodes, max_nodes, weight)
            if got is not None:
                return got
    return None


class NodePlan:
    """Free cores, memory and GPUs per node over future time: step functions of (time, delta) records.
    Running jobs hold their resources until their planned end; reservations from start to end."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.nodes = nodes
        self.cap = [(n.cores, n.memory_mb, counts_of(n)) for n in nodes]
        self.holds = []                          # (start, end, node, cores, mem, gpus)
        self.tags = {}                           # hold index -> the reservation whose window it is

    def without(self, name: str) -> NodePlan:
        """The plan as a job inside reservation ``name`` sees it: that reservation's windows not held."""
        view = NodePlan(self.nodes)
        view.holds = [h for k, h in enumerate(self.holds) if self.tags.get(k) != name]
        return view

    def hold(self, start: int, end: int, alloc: Mapping[int, tuple[int, int, int]]) -> None:
        """Hold ``alloc`` ({node: (cores, memory, GPUs)}) over [start, end)."""
        for i, (c, m, g) in alloc.items():
            self.holds.append((start, end, i, c, m, g))

    def free_over(self, t0: int, t1: int) -> list[tuple[int, int, int]]:
        """Per node, the least free (cores, memory, GPUs) over [t0, t1)."""
        out = []
        for i, (c, m, g) in enumerate(self.cap):
            points = {t0}
            points.update(s for s, e, k, *_ in self.holds if k == i and t0 < s < t1)
            worst = [c, m, g]
            for p in points:
                uc, um, ug = c, m, g
                for s, e, k, hc, hm, hg in self.holds:
                    if k == i and s <= p < e:
                        uc -= hc
                        um -= hm
                        ug -= hg
                worst = [min(worst[0], uc), min(worst[1], um), least(worst[2], ug)]
            out.append(tuple(worst))
        return out

    def place(self, req: NodeRequest, t0: int, t1: int, first_fit: bool = False,
              only: set[int] | None = None) -> dict[int, tuple[int, int, int]] | None:
        """Nodes for req over [t0, t1): {node: (cores, memory, GPUs)} or None (``only``: those nodes alone)."""
        free = self.free_over(t0, t1)
        ask = ask_of(req, self.nodes)
        cpu = [node_cpus(fc, fm, fg, self.nodes[i].features, req, self.nodes[i].gpu_type, ask)
               if only is None or i in only else 0 for i, (fc, fm, fg) in enumerate(free)]
        got = eval_nodes(cpu, req.cores, req.min_nodes, req.max_nodes, first_fit)
        if got is None:
            return None
        return {i: (c, c * req.mem_per_core + req.mem_per_node, ask) for i, c in got.items()}


class Holds:
    """What keeps a job from starting besides the nodes, at a pass: the cluster's licenses not held by
    running jobs (``licenses``: {name: count}; a job's ``lic``: {name: count}), the QOS limits on
    running jobs (``qos_limits``: {QOS: (MaxJobsPU, MaxTRESPU cpu, GrpJobs, GrpTRES cpu)}, 0 none; a
    job's ``qos`` and ``user``, its cores ``req.cores``) and its associations' limits (a job's
    ``assoc``: its user association then each account above it, as (key, (MaxJobs, GrpJobs, GrpTRES
    cpu)); MaxJobs counts on the first only, the Grp limits on each, an association's limit only where
    the job's QOS sets none of its kind). A job that would need more licenses than are free, or take its
    user, its QOS or an association over a limit, is passed over (Slurm 22.05, acct_policy.c and
    license_job_test without bf_licenses)."""

    def __init__(self, licenses, qos_limits, jobs, running):
        self.lic = None if licenses is None else dict(licenses)
        self.qos = qos_limits
        self.jobs = jobs
        self.per_user, self.per_qos, self.per_assoc = {}, {}, {}
        for j in running:
            self.take(j)

    def passed_over(self, j) -> bool:
        job = self.jobs[j]
        if self.lic is not None and any(c > self.lic.get(n, 0) for n, c in job.get("lic", {}).items()):
            return True
        lim = (self.qos or {}).get(job.get("qos"))
        cores = job["req"].cores
        if lim is not None:
            uj, uc = self.per_user.get((job["qos"], job.get("user", 0)), (0, 0))
            qj, qc = self.per_qos.get(job["qos"], (0, 0))
            if ((lim[0] > 0 and uj + 1 > lim[0]) or (lim[1] > 0 and uc + cores > lim[1])
                    or (lim[2] > 0 and qj + 1 > lim[2]) or (lim[3] > 0 and qc + cores > lim[3])):
                return True
        ql = lim or (0, 0, 0, 0)
        for k, (key, (max_jobs, grp_jobs, grp_cpus, *_)) in enumerate(job.get("assoc", ())):
            aj, ac = self.per_assoc.get(key, (0, 0))
            if ((not ql[2] and grp_jobs > 0 and aj + 1 > grp_jobs)
                    or (not ql[3] and grp_cpus > 0 and ac + cores > grp_cpus)
                    or (k == 0 and not ql[0] and max_jobs > 0 and aj + 1 > max_jobs)):
                return True
        return False

    def take(self, j) -> None:
        job = self.jobs[j]
        if self.lic is not None:
            for name, count in job.get("lic", {}).items():
                self.lic[name] -= count
        if (self.qos or {}).get(job.get("qos")) is not None:
            key = (job["qos"], job.get("user", 0))
            uj, uc = self.per_user.get(key, (0, 0))
            self.per_user[key] = (uj + 1, uc + job["req"].cores)
            qj, qc = self.per_qos.get(job["qos"], (0, 0))
            self.per_qos[job["qos"]] = (qj + 1, qc + job["req"].cores)
        for key, _ in job.get("assoc", ()):
            aj, ac = self.per_assoc.get(key, (0, 0))
            self.per_assoc[key] = (aj + 1, ac + job["req"].cores)


def never_for_limits(licenses, qos_limits, job) -> str:
    """Why a job can never start for its licenses, its QOS or its associations ("" when it can; a job's
    ``refused``: a reason its trace already gives, such as a time limit over MaxWall)."""
    if licenses is not None and any(c > licenses.get(name, 0) for name, c in job.get("lic", {}).items()):
        return "asks licenses the cluster does not have"
    if job.get("refused"):
        return job["refused"]
    lim = (qos_limits or {}).get(job.get("qos"))
    if lim is not None and ((lim[1] > 0 and job["req"].cores > lim[1]) or (lim[3] > 0 and job["req"].cores > lim[3])):
        return "over a QOS or association limit"
    if not (lim and lim[3]) and any(a[2] > 0 and job["req"].cores > a[2] for _, a in job.get("assoc", ())):
        return "asks more cores than an association allows"
    return ""


def submit_refused(qos_limits, job, inside) -> str:
    """The submission limit a job submitted now would go over ("" none; Slurm's reason name): its QOS's
    MaxSubmitPU (a 5th value in ``qos_limits``), its association's MaxSubmitJobs (where the QOS sets no
    MaxSubmitPU) or an association's GrpSubmitJobs on its path (4th and 5th values of ``assoc``);
    ``inside``: the jobs pending or running by counter (:func:`count_inside`)."""
    lim = (qos_limits or {}).get(job.get("qos"))
    per_user = lim[4] if lim is not None and len(lim) > 4 else 0
    if per_user and inside.get(("qos", job["qos"], job.get("user", 0)), 0) + 1 > per_user:
        return "QOSMaxSubmitJobPerUserLimit"
    for k, (key, a) in enumerate(job.get("assoc", ())):
        mine = inside.get(("assoc", key), 0)
        max_submit, grp_submit = (tuple(a[3:5]) + (0, 0))[:2]
        if k == 0 and not per_user and max_submit and mine + 1 > max_submit:
            return "AssocMaxSubmitJobLimit"
        if grp_submit and mine + 1 > grp_submit:
            return "AssocGrpSubmitJobsLimit"
    return ""


def count_inside(qos_limits, job, inside, sign) -> None:
    """A job accepted (sign 1) or gone (-1): its user's jobs in its QOS and its associations' jobs."""
    if (qos_limits or {}).get(job.get("qos")) is not None:
        key = ("qos", job["qos"], job.get("user", 0))
        inside[key] = inside.get(key, 0) + sign
    for key, _ in job.get("assoc", ()):
        inside[("assoc", key)] = inside.get(("assoc", key), 0) + sign


def node_replay(nodes: Sequence[Node], jobs: Sequence[Mapping[str, Any]], reservations: int | None = 1,
                first_fit: bool = False, run_pass: Callable | None = None,
                licenses: Mapping[str, int] | None = None, qos_limits: Mapping | None = None,
                windows: Sequence[tuple[int, int, Sequence[int]]] = (), over_run: int = 0,
                first_check: int | None = None) -> dict[str, list[Any]]:
    """Replay ``jobs`` (dicts: submit, run, est, a ``req`` :class:`NodeRequest`, and for a job of several
    partitions ``records``: a request a partition, tested in turn until one starts it, and ``tiers``:
    their partitions' PriorityTier, ``prios`` their priorities, a job ``tier`` and ``prio``:
    :func:`queue_entries`) on ``nodes``
    (:class:`pbf.Node` records) with FCFS and backfilling on nodes (``reservations`` per pass; None:
    every waiting job, i.e. conservative). A pass runs at every arrival and completion. Returns per job
    its start, end and allocation ``{node: (cores, memory, GPUs)}``; a job no node set can ever hold is
    rejected (start -1) with the resource that stops it.

    ``run_pass(now, queue, running)`` replaces the pass (``running``: {job: (start, alloc)}); it
    returns {job: alloc} of the jobs that start now (as :func:`exact_pass`, the default).
    ``licenses`` ({name: count}; None: none): the cluster's licenses; a job's ``lic`` ({name: count}) is
    held from its start to its end, a job asking more than the cluster has is rejected, and a pass
    passes over a job whose licenses are not all free; ``qos_limits`` the same with the QOS limits on
    running jobs (:class:`Holds`), and a job over a submission limit when it arrives is refused
    (:func:`submit_refused`). ``windows``: advance reservations, (start, end, node indices) each: no
    job holds those nodes over [start, end) (:func:`hold_windows`), and a pass runs at each end. A job
    inside a reservation (``resv``) still running at its end plus ``over_run`` seconds is ended at the
    next time-limit check (every 30 s from ``first_check``, None: the first submission;
    :func:`pbf.reference.resv_ref.ended_at`); ``timeout`` lists such jobs (Slurm's state ``TIMEOUT``)."""
    n = len(jobs)
    start, end, alloc, reason = [-1] * n, [-1] * n, [None] * n, [""] * n
    timeout = []
    if first_check is None:
        first_check = min((job["submit"] for job in jobs), default=0)
    full = NodePlan(nodes)
    for j, job in enumerate(jobs):
        if never_for_limits(licenses, qos_limits, job):
            reason[j] = never_for_limits(licenses, qos_limits, job)
        elif all(full.place(req, 0, 1, first_fit) is None for req in job.get("records") or (job["req"],)):
            reason[j] = _why(nodes, job["req"])
    order = sorted(range(n), key=lambda j: (jobs[j]["submit"], j))
    running = {}                                 # job -> actual end
    inside = {}                                  # jobs pending or running, by submission-limit counter
    queue = []
    times = sorted({jobs[j]["submit"] for j in order} | {w[1] for w in windows} | event_starts(windows, jobs))
    k = 0
    now = None
    while k < len(order) or running or queue:
        cands = [t for t in (times[0] if times else None, min(running.values()) if running else None) if t is not None]
        if not cands:
            break
        now = min(cands)             # (the same instant again when a job started now ends now: run 0)
        if times and times[0] == now:
            times.pop(0)
        for j in [j for j, e in running.items() if e == now]:
            end[j] = now
            del running[j]
            count_inside(qos_limits, jobs[j], inside, -1)
        while k < len(order) and jobs[order[k]]["submit"] == now:
            j = order[k]
            k += 1
            if reason[j]:
                continue
            reason[j] = submit_refused(qos_limits, jobs[j], inside)
            if reason[j]:
                continue
            count_inside(qos_limits, jobs[j], inside, 1)
            queue.append(j)
        live = {j: (start[j], alloc[j]) for j in running}
        if run_pass is None:
            started = exact_pass(nodes, jobs, now, queue, live, reservations, first_fit, licenses, qos_limits,
                                 windows)
        else:
            started = run_pass(now, queue, live)
        for j, got in started.items():
            start[j], alloc[j] = now, got
            running[j] = now + jobs[j]["run"]
            cut = None if jobs[j].get("resv") is None else ended_at(windows, jobs[j]["resv"], now, over_run,
                                                                    first_check)
            if cut is not None and cut < running[j]:
                running[j] = cut
                timeout.append(j)
            queue.remove(j)
    never_started(jobs, start, reason)
    return {"start": start, "end": end, "alloc": alloc, "reject": reason, "timeout": sorted(timeout)}


#: the latest time a node plan holds (the compiled plan keys its points as time << 20 | node in 64 bits):
#: a reservation that would end at or after it is not made, and the job waits unreserved
PLAN_REACH = 1 << 43


def exact_pass(nodes: Sequence[Node], jobs: Sequence[Mapping[str, Any]], now: int, queue: Sequence[int],
               running: Mapping[int, tuple[int, Mapping]], reservations: int | None = 1,
               first_fit: bool = False, licenses: Mapping[str, int] | None = None,
               qos_limits: Mapping | None = None,
               windows: Sequence[tuple[int, int, Sequence[int]]] = ()) -> dict[int, dict[int, tuple[int, int, int]]]:
    """pbf's own backfill pass on nodes (module docstring): {job: alloc} of the jobs that start now."""
    holds = Holds(licenses, qos_limits, jobs, running)
    plan = NodePlan(nodes)
    hold_windows(plan, windows, now)
    for j, (s, a) in running.items():
        plan.hold(s, max(s + jobs[j]["est"], now + 1), a)
    left = reservations
    started = {}
    for entry in queue_entries(jobs, queue):
        j, requests = entry_requests(jobs, entry)
        if j in started or holds.passed_over(j):
            continue
        est = max(jobs[j]["est"], 1)
        inside = jobs[j].get("resv")
        for req in requests:
            got = _place(plan, req, now, est, first_fit, windows, inside, now)
            if got is not None:
                started[j] = got
                holds.take(j)
                plan.hold(now, now + est, got)
                break
            if left is not None and left <= 0:
                continue
            ends = {e for s, e, *_ in plan.holds if e > now}
            # (and every advance reservation's start: the plan changes there, and a job whose fit is not
            # monotone, a node count at least several or at most some, may fit with fewer resources
            # where it did not with more; a job inside a reservation may start then)
            ends.update(w[0] for w in windows if w[0] > now and w[1] > now)
            for t in sorted(ends):
                if t + est >= PLAN_REACH:     # a start whose end lies beyond the plan's reach is none
                    break
                got = _place(plan, req, t, est, first_fit, windows, inside, now)
                if got is not None:
                    plan.hold(t, t + est, got)
                    if left is not None:
                        left -= 1      # (a test that finds no start, e.g. a record whose partition can
                    break              # never hold the job, makes no reservation and spends none)
    return started


def queue_entries(jobs: Sequence[Mapping[str, Any]], queue: Sequence[int]) -> list:
    """The queue a pass walks: each job (in ``queue``'s order) at its ``tier`` (0 if absent) and its
    ``prio`` (0 if absent), but a job whose ``records`` have ``tiers`` that differ (non-increasing, one a
    record) or ``prios`` that differ (one a record: each its partition's priority, Slurm's
    ``priority_array`` under multifactor) once a run of records of one tier and one priority, as ``(job,
    lo, hi)``: its records ``lo .. hi - 1``, at that tier and priority. Higher tiers first, then higher
    priorities, then ``queue``'s order, then the records' order (Slurm's ``sort_job_queue2``: a queue
    record per partition, sorted by its partition's tier, then by its priority); a job inside an advance
    reservation (``resv``) before every other (sort_job_queue2 compares that first)."""
    keyed = []
    for pos, j in enumerate(queue):
        job = jobs[j]
        outside = 0 if job.get("resv") is not None else 1
        n = len(job.get("records") or ())
        tiers = job.get("tiers") or [job.get("tier", 0)] * n
        prios = job.get("prios") or [job.get("prio", 0)] * n
        if n and (len(set(tiers)) > 1 or len(set(prios)) > 1):
            lo = 0
            while lo < n:
                hi = lo + 1
                while hi < n and (tiers[hi], prios[hi]) == (tiers[lo], prios[lo]):
                    hi += 1
                keyed.append((outside, -tiers[lo], -prios[lo], pos, lo, (j, lo, hi)))
                lo = hi
        else:
            keyed.append((outside, -job.get("tier", 0), -job.get("prio", 0), pos, -1, j))
    keyed.sort(key=lambda x: x[:5])
    return [e for *_, e in keyed]


def entry_requests(jobs: Sequence[Mapping[str, Any]], entry) -> tuple[int, Sequence[NodeRequest]]:
    """A :func:`queue_entries` entry's job and the requests it tests, in turn."""
    if isinstance(entry, tuple):
        j, lo, hi = entry
        return j, jobs[j]["records"][lo:hi]
    return entry, jobs[entry].get("records") or (jobs[entry]["req"],)


def hold_windows(plan: NodePlan, windows: Sequence[tuple[int, int, Sequence[int]]], now: int) -> None:
    """Advance reservations (Slurm's ``job_test_resv`` for a job that asks none): each window's nodes,
    their whole cores, memory and GPUs, held from its start (or ``now``) to its end (tagged with its
    reservation's name, :meth:`NodePlan.without`)."""
    for w in windows:
        s, e, idx = w[0], w[1], w[2]
        if e > now:
            first = len(plan.holds)
            plan.hold(max(s, now), e, {i: plan.cap[i] for i in idx})
            if name_of(w) is not None:
                plan.tags.update((k, name_of(w)) for k in range(first, len(plan.holds)))


def _place(plan: NodePlan, req: NodeRequest, t: int, est: int, first_fit: bool, windows, inside, now: int):
    # a start at t: a job inside a reservation (resv_ref) only inside its current window, on its nodes,
    # that reservation's own hold not seen (the other reservations' are)
    if inside is None:
        return plan.place(req, t, t + est, first_fit)
    only = usable_at(windows, inside, now, t)
    return None if only is None else plan.without(inside).place(req, t, t + est, first_fit, only)


def _why(nodes, req: NodeRequest):
    usable = [n for n in nodes if req.features <= set(n.features)]
    if not usable:
        return f"no node has features {','.join(sorted(req.features))}"
    if req.gpu_type and req.gpus_per_node > 0:
        usable = [n for n in usable if req.gpu_type in n.gpu_type.split(",")]
        if not usable:
            return f"no node has GPUs of type {req.gpu_type}"
    usable = [n for n in usable if n.gpus >= req.gpus_per_node]
    if not usable:
        return f"no node has {req.gpus_per_node} GPUs"
    ask = ask_of(req, nodes)
    usable = [n for n in usable if counts_of(n) >= ask]
    if not usable:
        return f"no node has GRES {','.join(f'{k}:{v}' for k, v in sorted(ask.items()) if k != 'gpu')}"
    if req.mem_per_node and not any(n.memory_mb >= req.mem_per_node for n in usable):
        return f"no node has {req.mem_per_node} MB of memory"
    return f"no set of nodes holds {req.cores} cores at {req.mem_per_core} MB a core"
