"""pbf as an AccaSim dispatcher (AccaSim 1.1.3, ``pip install accasim``; docs/hosts.md).

    from accasim.base.simulator_class import Simulator
    from pbf.hosts.accasim import PbfDispatcher

    sim = Simulator("workload.swf", "system.json", PbfDispatcher("easy"))   # or "conservative", "slurm"
    sim.start_simulation()

:class:`PbfDispatcher` is an AccaSim ``SchedulerBase`` that schedules with a :class:`pbf.Engine`: at
each of AccaSim's dispatching calls it hands the engine, in one :meth:`~pbf.Engine.advance`, the
completions since the last call (in time order) and the newly queued jobs, and turns the decisions
into AccaSim's dispatching plan: a :class:`~pbf.Start` becomes ``(now, job id, node list)``, a
:class:`~pbf.Rejected` a rejected job, every other queued job ``(None, job id, [])``.

**Ids and nodes.** Jobs keep AccaSim's (string) ids. The engine's cluster is built from AccaSim's
resources at the first call (AccaSim hands them over only then): one pbf node per AccaSim node, by
AccaSim's names, with its cores; with memory (``mem``) or GPUs (``gpu``) on the nodes, pbf places
jobs by its node model (docs/engine.md "Nodes and resources"), else the cores are interchangeable
units. An AccaSim job asks for ``requested_nodes`` slots of ``requested_resources`` each; pbf sees
``slots x core`` cores, ``mem / core`` memory per core and ``gpu`` per node, and each node's cores
in a start become ``cores / core`` slots on it (exact when a slot is one core, AccaSim's default for
SWF workloads; a placement that does not divide into whole slots is an error that says so).

**Compatibility.** AccaSim 1.1.3 imports ``collections.Mapping``, which Python 3.10 removed;
importing this module restores that one name (``collections.abc.Mapping``) when it is missing, so
that AccaSim imports on current Pythons.
"""
from __future__ import annotations

import collections
import collections.abc
import heapq
import time
from collections import Counter

import numpy as np

if not hasattr(collections, "Mapping"):     # AccaSim 1.1.3 on Python >= 3.10 (see the docstring)
    collections.Mapping = collections.abc.Mapping

from accasim.base.additional_data import AdditionalData  # noqa: E402
from accasim.base.scheduler_class import DispatcherError, JobVerification, SchedulerBase  # noqa: E402

from ..cluster import Cluster, Node  # noqa: E402
from ..engine import Engine  # noqa: E402
from ..engine_buffers import BatchCore  # noqa: E402
from ..engine_events import Finish, Job, Rejected, Start, Submit  # noqa: E402
from . import backfill_of  # noqa: E402

__all__ = ["PbfDispatcher", "StartLog", "cluster_of"]


def _queued(e):
    return int(e.queued_time)


def cluster_of(resource_manager) -> Cluster:
    """The pbf cluster of an AccaSim resource manager: its nodes by name with their cores, and their
    memory and GPUs when it has them."""
    capacity = resource_manager.system_capacity("nodes")
    types = set(resource_manager.resource_types)
    unknown = types - {"core", "mem", "gpu"}
    if unknown:
        raise DispatcherError(f"pbf plans cores, memory ('mem') and GPUs ('gpu'); the system also has "
                              f"{sorted(unknown)}")
    nodes = []
    for name in resource_manager.node_names:
        c = capacity[name]
        nodes.append(Node(name, int(c.get("core", 0)), memory_mb=int(c.get("mem", 0)), gpus=int(c.get("gpu", 0))))
    return Cluster.of_nodes(nodes, name="accasim")


class PbfDispatcher(SchedulerBase):
    """An AccaSim dispatcher that schedules with pbf.

    ``mode``: ``"easy"``, ``"conservative"``, ``"slurm"`` (:data:`pbf.hosts.MODES`) or a
    :class:`pbf.Backfill`. ``engine``: more :class:`pbf.Engine` options (priority, predictor,
    node_choice, ...). ``job_check``: AccaSim's own check of requests before dispatching; the default,
    ``NO_CHECK``, leaves it to pbf, which answers a job that can never run with a Rejected decision
    (the replayer's rules: wider than the cluster, no requested time, a request no node set holds).

    After a run: :attr:`engine` (its ``stats()``), :attr:`calls`, :attr:`seconds` (time spent inside
    the dispatcher's calls) and :attr:`engine_seconds` (inside ``Engine.advance``)."""

    name = "pbf"

    def __init__(self, mode: object = "easy", *, seed: int = 0, job_check: JobVerification = JobVerification.NO_CHECK,
                 engine: dict | None = None, **kwargs):
        SchedulerBase.__init__(self, seed, allocator=None, job_check=job_check, **kwargs)
        self.mode = mode
        self.backfill = backfill_of(mode)
        self.engine_options = dict(engine or {})
        self.engine: Engine | None = None
        self.cluster: Cluster | None = None
        self.calls = 0
        self.skipped = 0            # calls at which nothing had happened (no engine call)
        self.seconds = 0.0
        self.engine_seconds = 0.0
        self._submitted = set()     # ids handed to the engine
        self._ends = []             # heap of (end, sequence, id) of the jobs started
        self._seq = 0

    def get_id(self):
        return f"pbf-{self.mode if isinstance(self.mode, str) else 'backfill'}"

    def _start_engine(self):
        self.cluster = cluster_of(self.resource_manager)
        self._objects = self.cluster.has_resources     # requests with memory or GPUs: Job objects
        self.engine = Engine(self.cluster, backfill=self.backfill, **self.engine_options)
        self._clairvoyant = self.engine.predictor == "clairvoyant"       # (the only one that reads run times)
        self._names = self.engine.unit_names.tolist()                     # unit index -> AccaSim node name
        # the columns' path: the engine's batch buffers, AccaSim's string ids numbered here
        self._buffers = None if self._objects or BatchCore is None else self._grown(64)
        self._number, self._ids = {}, []

    def _grown(self, need):
        b = self.engine.batch_buffers(max(need, 64))
        if b.user is None or len(b.user) < b.capacity:
            b.bind(user=np.zeros(b.capacity, dtype=np.int64), run=np.full(b.capacity, -1, dtype=np.int64))
        return b

    def _job(self, e):
        slot = e.requested_resources
        cores = int(slot.get("core", 0))
        if cores <= 0:
            raise DispatcherError(f"job {e.id} asks for no core per slot ({slot}); pbf schedules cores")
        mem, gpus = int(slot.get("mem", 0) or 0), int(slot.get("gpu", 0) or 0)
        extra = {}
        if mem and self.cluster.has_resources:
            extra["mem_core_mb"] = -(-mem // cores)      # per core, rounded up (exact for one-core slots)
        if gpus:
            extra["gpus"] = gpus
        run = e.duration if e.duration is not None and e.duration >= 0 else None
        return Job(e.id, int(e.queued_time), int(e.requested_nodes) * cores, int(e.expected_duration), run=run,
                   user=int(getattr(e, "user_id", None) if getattr(e, "user_id", None) is not None else -1), **extra)

    def _row(self, e):
        # an AccaSim job as the batch path's columns: id, submit, cores, requested, run (-1: unknown), user
        slot = e.requested_resources
        cores = int(slot.get("core", 0))
        if cores <= 0:
            raise DispatcherError(f"job {e.id} asks for no core per slot ({slot}); pbf schedules cores")
        if int(slot.get("gpu", 0) or 0):
            raise DispatcherError(f"job {e.id} asks for GPUs, but AccaSim's nodes have none")
        run = e.duration if e.duration is not None and e.duration >= 0 else -1
        user = getattr(e, "user_id", None)
        return (e.id, int(e.queued_time), int(e.requested_nodes) * cores, int(e.expected_duration), int(run),
                int(user) if user is not None else -1)

    def _nodes(self, e, names):
        # the engine's placement (the node name of each unit it gave the job) as AccaSim's list of
        # node names, one entry per slot
        cores = int(e.requested_resources["core"])
        if cores == 1:
            out = names
        else:
            out = []
            for name, count in Counter(names).items():
                slots, rest = divmod(count, cores)
                if rest:
                    raise DispatcherError(f"job {e.id}: pbf placed {count} cores on {name}, not a whole number of "
                                          f"its {cores}-core slots (give pbf jobs of one-core slots)")
                out += [name] * slots
        if len(out) != e.requested_nodes:
            raise DispatcherError(f"job {e.id}: pbf's placement holds {len(out)} slots of {e.requested_nodes}")
        return out

    def schedule(self, cur_time, es_dict, es):
        """AccaSim's dispatching entry point: :meth:`SchedulerBase.schedule`'s steps (the minimum free
        resources, the job check, :meth:`scheduling_method`) without its debug messages, which it
        formats at every call whatever the log level (the system usage among them) and which cost
        more than pbf's decision."""
        self._counter += 1
        if self._min_required_availability and any(self.resource_manager.resources.full[res]
                                                   for res in self._min_required_availability):
            return [(None, e, []) for e in es], []
        if self._job_check == JobVerification.NO_CHECK:
            # (AccaSim's check accepts every job then: only the flag it sets would change)
            return self._dispatch(cur_time, es, es_dict)
        rejected, accepted = [], []
        for e in es:
            job = es_dict[e]
            if not job.get_checked() and not self._check_job_request(job):
                if self._job_check != JobVerification.REJECT:
                    self._logger.warning(f"{e} has been rejected by the dispatcher. ({self._job_check})")
                rejected.append(e)
                continue
            accepted.append(job)
        if not accepted:
            return [], rejected
        plan, refused = self.scheduling_method(cur_time, accepted, es_dict)
        for e in refused:
            self._logger.warning(f"{e} has been rejected by the dispatcher. (Scheduling policy)")
        return plan, rejected + refused

    def scheduling_method(self, cur_time, queued_jobs, es_dict):
        """AccaSim's scheduling step: the dispatching plan and the rejected ids of ``queued_jobs``."""
        return self._dispatch(cur_time, [e.id for e in queued_jobs], es_dict)

    def _dispatch(self, cur_time, queued, es_dict):
        # one engine call for the queued job ids `queued` (in AccaSim's order)
        t0 = time.perf_counter()
        if self.engine is None:
            self._start_engine()
        now = int(cur_time)
        ends = self._ends
        fin_ids, fin_t = [], []
        while ends and ends[0][0] <= now:            # completions since the last call, in time order
            end, _, job_id = heapq.heappop(ends)
            fin_ids.append(job_id)
            fin_t.append(end)
        submitted = self._submitted
        new = [es_dict[x] for x in queued if x not in submitted]
        if new:
            new.sort(key=_queued)                        # (stable: AccaSim's order at a tie)
            submitted.update([e.id for e in new])
        t1 = time.perf_counter()
        if fin_ids or new or self._due(now):
            started, rejected = self._decide(now, fin_ids, fin_t, new)
        else:
            # nothing happened since the last call: pbf would pass on the same state (a replay makes no
            # pass at such an instant), so every queued job waits
            started, rejected = (), []
            self.skipped += 1
        self.engine_seconds += time.perf_counter() - t1
        plan = []
        if started:
            names = self._names
            for job_id, units in started:
                e = es_dict[job_id]
                plan.append((now, job_id, self._nodes(e, [names[u] for u in units])))
                self._seq += 1
                heapq.heappush(ends, (now + int(e.duration), self._seq, job_id))
        for job_id in rejected:
            submitted.discard(job_id)
        if started or rejected:
            done = {job_id for job_id, _ in started}.union(rejected)
            plan += [(None, x, []) for x in queued if x not in done]
        else:
            plan += [(None, x, []) for x in queued]
        self.calls += 1
        self.seconds += time.perf_counter() - t0
        return plan, rejected

    def _due(self, now):
        # the engine asked to be called by now (an interval trigger's pass, an outage's end)
        wake = self.engine.next_wakeup()
        return wake is not None and wake <= now

    def _decide(self, now, fin_ids, fin_t, new):
        # one engine call: ([(job id, [unit index])] started, [job id] rejected). On nodes with memory
        # or GPUs the requests travel as Job objects (advance); else as columns (advance_arrays)
        if self._objects:
            events = [Finish(i, t) for i, t in zip(fin_ids, fin_t)] + [Submit(self._job(e)) for e in new]
            events.sort(key=lambda ev: ev.time)            # (stable: completions first at a tie)
            out = self.engine.advance(now, events)
            return ([(x.job_id, x.units.tolist()) for x in out if isinstance(x, Start)],
                    [x.job_id for x in out if isinstance(x, Rejected)])
        if self._buffers is None:           # (a build without the compiled batch call)
            return self._decide_arrays(now, fin_ids, fin_t, new)
        b, number, ids = self._buffers, self._number, self._ids
        nf, ns = len(fin_ids), len(new)
        if nf > b.capacity or ns > b.capacity:
            self._buffers = b = self._grown(2 * max(nf, ns))
        if nf:
            fid, ft = b.finish_ids, b.finish_times
            for k, (x, t) in enumerate(zip(fin_ids, fin_t)):
                fid[k], ft[k] = number[x], t
        if ns:
            sid, st, su, sr, srun, suser = b.submit_ids, b.submit_times, b.units, b.requested, b.run, b.user
            for k, e in enumerate(new):
                x, st[k], su[k], sr[k], run, suser[k] = self._row(e)
                srun[k] = run if self._clairvoyant else -1
                sid[k] = number.setdefault(x, len(ids))
                if sid[k] == len(ids):
                    ids.append(x)
        if not b.call(now, nf, ns):
            return [], ([ids[j] for j in b.rejected.tolist()] if b.nrejected else [])
        units, cut = b.start_units.tolist(), b.offsets.tolist()
        started = [(ids[j], units[cut[k]:cut[k + 1]]) for k, j in enumerate(b.started.tolist())]
        return started, ([ids[j] for j in b.rejected.tolist()] if b.nrejected else [])

    def _decide_arrays(self, now, fin_ids, fin_t, new):
        cols = list(zip(*[self._row(e) for e in new])) if new else [[]] * 6
        d = self.engine.advance_arrays(now, finish_ids=fin_ids, finish_times=fin_t, submit_ids=cols[0],
                                       submit_times=cols[1], units=cols[2], requested=cols[3],
                                       run=cols[4] if self._clairvoyant and new else None,
                                       user=cols[5] if new else None)
        units, cut = d.units.tolist(), d.offsets.tolist()
        return ([(job_id, units[cut[k]:cut[k + 1]]) for k, job_id in enumerate(d.started.tolist())],
                d.rejected.tolist() if d.reasons else [])

    def close(self):
        """Close the engine (its worker threads)."""
        if self.engine is not None:
            self.engine.close()


class StartLog(AdditionalData):
    """An AccaSim ``AdditionalData`` that records each completed job's start and nodes (``starts``:
    ``{job id: (start, [node names])}``), read from AccaSim's own job records. AccaSim makes it: pass
    the class in ``Simulator(..., additional_data=[StartLog])`` and find the instance with
    :meth:`of`."""

    def __init__(self, event_manager=None):
        super().__init__(event_manager)
        self.starts = {}

    @staticmethod
    def of(simulator) -> StartLog:
        return next(a for a in simulator.mapper.additional_data if isinstance(a, StartLog))

    def exec_after_completion(self, removed_jobs):
        for e in removed_jobs:
            self.starts[e.id] = (e.start_time, list(e.assigned_nodes))

    def exec_before_dispatching(self, *args, **kwargs):
        pass

    def exec_after_dispatching(self, *args, **kwargs):
        pass

    def exec_before_submission(self, *args, **kwargs):
        pass

    def exec_after_submission(self, *args, **kwargs):
        pass

    def exec_before_completion(self, *args, **kwargs):
        pass

    def stop(self):
        pass
