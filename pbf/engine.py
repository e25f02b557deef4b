"""The embedding API (DESIGN §8): events in, decisions out; the engine never moves time itself.

    eng = pbf.Engine(pbf.Cluster(units=128), priority="fcfs", backfill=pbf.Backfill(reservations=1))
    decisions = eng.advance(now, [pbf.Submit(pbf.Job(1, submit=now, units=4, requested=3600))])
    # -> [Start(job_id=1, units=array([0, 1, 2, 3]), at=now)]
    eng.advance(later, [pbf.Finish(1, time=later)])

Node outages are events too: :class:`Drain` (no new job; running jobs finish), :class:`Fail` (also
stops the running jobs on those units: each comes back as a :class:`Stopped` decision, requeued or
killed as ``on_failure`` says) and :class:`Resume`. A drain or failure with ``until`` ends by
itself at that time. Passes plan around down units and never place a job on one.

Every call is checked in full before anything changes: a misuse (an event later than ``now``, time
going backwards, an unknown or not-running job finished, a duplicate or unhashable job id, a
malformed request, ...) raises :class:`ProtocolError` and leaves the engine exactly as it was. A
well-formed job that can never run (no requested time, wider than the cluster, a request no set of
nodes holds) is answered with a :class:`Rejected` decision, as the replayer rejects it.
"""
from __future__ import annotations

import copy
import threading
from collections.abc import Iterable
from dataclasses import replace
from time import thread_time_ns

import numpy as np

from ._checkpoint import checkpoint, rollback
from ._coalloc import Coalloc
from ._estimates import StartEstimates
from ._outages import Outages
from .cluster import Cluster
from .codes import JobState, OutageKind
from .config import Backfill
from .core_config import build_core, check_run_options
from .engine_batch import BatchDecisions, BatchPath
from .engine_buffers import EngineLock, main_pass_at
from .engine_checks import CallChecks
from .engine_events import (
    INT64_MAX,
    INT64_MIN,
    MAX_TIME,
    Drain,
    Fail,
    Finish,
    Job,
    Lend,
    ProtocolError,
    Rejected,
    Reserve,
    Resume,
    Start,
    Stopped,
    Submit,
    is_int,
)
from .engine_nodes import EngineNodes, name_units
from .engine_timing import EngineTiming
from .errors import ConfigError
from .plugins.choosers import PythonChooser
from .plugins.predictors import PythonPredictor
from .plugins.priorities import PythonPriority
from .plugins.scoring import Scoring
from .plugins.views import JobsView

__all__ = ["Engine", "BatchDecisions", "Job", "Submit", "Finish", "Start", "Reserve", "Rejected", "ProtocolError",
           "Drain", "Fail", "Resume", "Stopped", "Lend", "MAX_TIME"]


_REJECTED = int(JobState.JS_REJECTED)


def _number_of(job_id, j):
    # the job's number for Python plugins and keyed draws: the host's id when it is a 64-bit int,
    # else the engine's own index of the job
    return int(job_id) if is_int(job_id) and INT64_MIN <= job_id <= INT64_MAX else j


def _unit_indices(words, units_total):
    # only the words with a bit set are unpacked: a job's row spans the whole cluster (10M bits on
    # 160,000 nodes of 64 cores) while the job holds a few of its words
    words = np.asarray(words).view(np.uint64)
    nz = np.flatnonzero(words)
    bits = np.unpackbits(words[nz].view(np.uint8), bitorder="little").reshape(len(nz), 64).astype(bool)
    units = (nz[:, None] * 64 + np.arange(64, dtype=np.int64))[bits]
    return units[units < units_total]


class Engine(BatchPath, CallChecks):
    """A scheduler engine on one cluster. See the module docstring for the protocol.

    priority, predictor, correction and ``backfill.order``: the scoring plugins, as in
    :class:`~pbf.ReplayConfig` (names, ``"package.module:attr"`` or objects; the ``clairvoyant``
    predictor plans with ``Job.run``). backfill: a :class:`Backfill`. With
    ``report_reservations`` each :meth:`advance` also returns a :class:`Reserve` for every job the pass
    reserved. ``workers``: threads per pass (DESIGN §5, ordered commit): decisions are identical for
    every count; a pass runs on the threads when its predicted cost says they save time, and never
    with fewer than ``parallel_min_queue`` (64) queued jobs (docs/engine.md).
    ``on_failure``: what a :class:`Fail` does to the running jobs on its units: ``requeue`` (pending
    again, with their submission's estimate and place) or ``kill``. ``coalloc``: a
    :class:`~pbf.CoAllocation`: each started job lends part of its cores (a :class:`Lend`
    decision) and queued jobs start on lent cores (``Start(..., secondary=True)``); the host runs
    the jobs with its own slowdown model and reports each one's progress rate in ``Finish(rate=)``,
    which the learners are judged by. ``trigger``, ``bf_interval``, ``clock``, ``bf_max_time``,
    ``cost_per_test_us``, ``cost_per_slot_us``: when the engine passes and what a pass costs, as in a
    replay (:class:`pbf.engine_timing.EngineTiming`; :meth:`next_wakeup`). ``unit_names``: on a
    cluster of units, the host's name of the node each unit belongs to (one per unit, a node's units
    consecutive): starts then carry :class:`~pbf.Placement` records by those names, and outages take
    them (units stay interchangeable). ``checkpoints``: ``"when-needed"`` (a call is checked whole
    before it changes anything; a checkpoint of the core is taken only when Python code that may fail
    runs after the events are applied: a Python priority or chooser) or ``"every-call"`` (a checkpoint
    before every call's events, so that even a failure no check foresees -- out of memory -- leaves the
    engine as it was; the batch path then goes through :meth:`advance`).
    """

    def __init__(self, cluster: Cluster | int, *, priority: object = "fcfs", predictor: object = "requested",
                 correction: str = "incremental", backfill: Backfill | None = None,
                 report_reservations: bool = False, workers: int = 1, commit: str = "ordered",
                 on_failure: str = "requeue", coalloc: object = None, node_choice: str = "best-fit",
                 node_search: str = "exact", trigger: str = "event", bf_interval: int = 30, clock: str = "free",
                 bf_max_time: int | None = None, cost_per_test_us: float | None = None,
                 cost_per_slot_us: int | None = None, unit_names: object = None,
                 checkpoints: str = "when-needed", sched_interval: int | None = None,
                 batch_sched_delay: int | None = None, default_queue_depth: int | None = None) -> None:
        if isinstance(cluster, int) and not isinstance(cluster, bool):
            cluster = Cluster(units=cluster)
        if not isinstance(cluster, Cluster):
            raise ConfigError(f"cluster must be a pbf.Cluster or a unit count, got {cluster!r}")
        if unit_names is not None:
            cluster = name_units(cluster, unit_names)
        backfill = Backfill() if backfill is None else backfill
        if not isinstance(backfill, Backfill):
            raise ConfigError(f"backfill must be a pbf.Backfill, got {backfill!r}")
        scoring = Scoring.resolve(priority, predictor, correction, backfill.order)
        check_run_options(workers, commit, backfill)
        if on_failure not in ("requeue", "kill"):
            raise ConfigError(f"on_failure must be 'requeue' or 'kill', got {on_failure!r}")
        self.on_failure = on_failure
        if checkpoints not in ("when-needed", "every-call"):
            raise ConfigError(f"checkpoints must be 'when-needed' or 'every-call', got {checkpoints!r}")
        self.checkpoints = checkpoints
        self._timing = EngineTiming(trigger, bf_interval, clock, bf_max_time, cost_per_test_us, cost_per_slot_us,
                                    sched_interval, batch_sched_delay, default_queue_depth)
        if clock == "slurm-sim" and main_pass_at is None:
            raise ConfigError("clock='slurm-sim' needs the compiled module pbf._engine_batch: rebuild pbf "
                              "(pip install -e .)")
        self.cluster, self.priority, self.predictor, self.backfill = cluster, priority, predictor, backfill
        self.report_reservations = report_reservations
        # nothing here reads per-pass records: keep only the totals, so that a long-lived engine's
        # memory does not grow by a record every pass
        self._core = build_core(cluster.units, backfill, scoring, workers=workers, commit=commit,
                                record_passes=False, **self._timing.core_options())
        self._core.configure(hooks=0)      # the engine calls Python plugins itself
        self._scoring = scoring
        # a Python priority or chooser runs after a call's events are applied (a checkpoint first)
        self._keys_in_python = isinstance(scoring.priority, PythonPriority) or isinstance(scoring.chooser,
                                                                                         PythonChooser)
        self._outages = Outages(self._core)
        self._outages.set_requeue(on_failure == "requeue")
        self._co = Coalloc(self._core)
        if node_choice not in ("best-fit", "first-fit"):
            raise ConfigError(f"node_choice must be 'best-fit' or 'first-fit', got {node_choice!r}")
        if node_search not in ("exact", "slurm"):
            raise ConfigError(f"node_search must be 'exact' or 'slurm', got {node_search!r}")
        if node_search == "slurm" and (not cluster.has_resources or backfill.order == "sjbf"
                                       or backfill.stop_at_reservation_limit):
            raise ConfigError("node_search='slurm' is Slurm's backfill on nodes: it needs a cluster of nodes, "
                              "queue order and no stop_at_reservation_limit")
        if getattr(backfill, "limited", False) and node_search != "slurm":
            raise ConfigError("Slurm's backfill limits (pbf.SlurmBackfill: max_job_user, max_job_start, ...) apply "
                              "to Slurm's backfill on nodes: they need node_search='slurm' and a cluster of nodes")
        if coalloc is not None and clock == "slurm-sim":
            raise ConfigError("coalloc with clock='slurm-sim' is not modelled in the engine (a replay has it)")
        if coalloc is not None and cluster.has_resources:
            raise ConfigError("coalloc lends cores of interchangeable units; it does not run on a cluster of "
                              "nodes with memory, GPUs or features")
        self._nodes = EngineNodes(self._core, cluster, node_choice, node_search)
        self.coalloc = coalloc
        if coalloc is not None:
            self._enable_coalloc(coalloc, scoring)
        self._core.start_pool(workers)
        self._batch_setup()
        self._timed = []        # (until, sequence, unit words) of outages that end by themselves
        self._timed_seq = 0
        self._resumed = 0       # outages ended by themselves so far
        self.workers = workers
        self._index = {}        # job id -> core index
        self._ids = []          # core index -> job id
        self._jobs = []         # core index -> the Job
        self._users = {}        # user id -> dense index
        self._cols = {"id": [], "submit": [], "units": [], "requested": [], "user": []}
        self._now = None
        self._last_event = None
        self._closed = False
        self._counts = {"submitted": 0, "started": 0, "finished": 0, "passes": 0, "requeued": 0, "killed": 0,
                        "rejected": 0}
        self._rejected = {}     # job id -> why it can never run (a Rejected decision; not in the core)
        self._int_ids = True    # every job id so far is an int of 64 bits (decision arrays are int64)
        self._pass_ns = 0       # CPU time inside the passes (benchmarks: the cost of a call beside the pass)
        # one call at a time: calls from several threads are serialised, never interleaved
        self._lock = threading.RLock() if EngineLock is None else EngineLock()

    def _enable_coalloc(self, co, scoring):
        from .coalloc import CoAllocation
        from .outages import NodeLayout
        if not isinstance(co, CoAllocation):
            raise ConfigError(f"coalloc must be a pbf.CoAllocation or None, got {co!r}")
        if scoring.needs_hooks:
            raise ConfigError("coalloc does not take Python plugins (priority, predictor or order) in the engine")
        if co.interval:
            raise ConfigError("coalloc interval: the engine decides when a job starts only (the host owns time)")
        cores = ([n.cores for n in self.cluster.nodes] if self.cluster.nodes
                 else NodeLayout.of(co.node_cores, self.cluster.units).cores)
        self._co.enable(co.code(), float(co.fraction), float(co.beta), 0, float(co.lam), float(co.tau),
                        float(co.dmax), co.seed, np.asarray(cores, dtype=np.int32), np.empty(0), dynamics=False)

    # ---------------------------------------------------------------- protocol
    def advance(self, now: int, events: Iterable[Submit | Finish | Drain | Fail | Resume] = (), *,
                quick: bool = False) -> list[Rejected | Stopped | Start | Reserve]:
        """Apply ``events`` (time order, none later than ``now``), run one pass at ``now`` and return
        its decisions: a :class:`Rejected` per submitted job that can never run, a :class:`Stopped` per
        running job a failure stopped, a :class:`Start` per job started (and a :class:`Reserve` per
        reservation when ``report_reservations``). ``quick``: run Slurm's quick main-scheduler pass
        instead of a full backfill pass. With ``trigger="interval"`` the engine chooses the pass
        itself: a full pass when one is due, a quick pass at a call with events, none at a call
        without (:meth:`next_wakeup` says when the next full pass is due).

        The whole call is checked first; Python plugins run on copies of themselves; if anything
        fails before the pass, the engine (and its plugins) are exactly as before the call."""
        with self._lock:
            events = list(events)
            if quick and not self._timing.every_call:
                raise ProtocolError("quick=True: with trigger='interval' the engine chooses the pass itself")
            bits, rejected = self._validate(now, events)
            scoring, estimates = self._plugins_first(events, rejected)
            undo = self._checkpoint()
            resumed = self._resumed
            try:
                stopped = self._apply(now, events, bits, rejected, scoring, estimates)
            except BaseException:
                self._rollback(undo)
                raise
            self._scoring = scoring
            core = self._core
            timing = self._timing
            self._rejected.update(rejected)
            out = [Rejected(ev.job.id, rejected[ev.job.id]) for ev in events
                   if isinstance(ev, Submit) and ev.job.id in rejected] if rejected else []
            out += stopped
            if timing.clock == "slurm-sim":
                changes = self._resumed - resumed + sum(not isinstance(ev, Submit) or ev.job.id not in rejected
                                                        for ev in events)
                started, reserved, ran = self._sim_passes(now, changes)
                if not ran:
                    return out
            else:
                kind = ("quick" if quick else "full") if timing.every_call else \
                    timing.choose(now, bool(events) or self._resumed > resumed, len(core.pending()) > 0)
                if kind is None:
                    return out
                charged = timing.clock == "model" and kind == "full" and not timing.every_call
                before = core.pass_totals()["charged_us_full"] if charged else 0
                t0 = thread_time_ns()
                started, reserved = core.run_pass(now, kind == "quick")
                self._pass_ns += thread_time_ns() - t0
                if kind == "full" and not timing.every_call:
                    timing.full_done(now, core.pass_totals()["charged_us_full"] - before if charged else 0)
                ran = 1
            self._counts["passes"] += ran
            self._counts["started"] += len(started)
            out += [self._start(j, now) for j in started]
            if self.coalloc is not None:
                lends, secondaries = self._co.after_pass(now)
                self._counts["started"] += len(secondaries)
                out.extend(Lend(self._ids[p], int(k)) for p, k in lends if k > 0)
                out.extend(Start(self._ids[j], self._co.units(j), now, secondary=True) for j in secondaries)
            if self.report_reservations and len(reserved):
                planned = core.values_of("resv", np.asarray(reserved, dtype=np.int64))
                out.extend(Reserve(self._ids[j], int(t)) for j, t in zip(reserved, planned.tolist()))
            return out

    def next_wakeup(self) -> int | None:
        """When the engine next needs a call even if no event comes (None: not until one does). The
        interval trigger's next full pass (while jobs wait; its time already counts a model-clock
        pass's charged duration), and the end of an outage given with ``until`` (while jobs wait: the
        pass at that time starts the jobs that waited for its units). A host asks after every call
        and calls :meth:`advance` then with the events of that time, or none. Under the event
        trigger a pass that a time budget ended is not resumed before the next event (as in a
        replay), so it asks for no call."""
        with self._lock:
            if self._now is None or not len(self._core.pending()):
                return None
            times = [max(min(self._timed)[0], self._now)] if self._timed else []
            due = self._timing.wakeup(self._now, True)
            if due is not None:
                times.append(due)
            return min(times) if times else None

    def _sim_passes(self, now, changes):
        # the slurm-sim clock's timers: the main scheduler, then a backfill pass (cycle.pxd sim_schedule)
        timing, core = self._timing, self._core
        started, reserved, ran = [], [], 0
        depth = timing.sim_main(now, changes, len(core.pending()) > 0)
        if depth is not None:
            s = main_pass_at(core, now, depth).tolist()
            timing.sim_started(len(s))
            started += s
            ran += 1
        if timing.sim_backfill(now, len(core.pending()) > 0):
            s, reserved = core.run_pass(now, False)
            started += list(s)
            ran += 1
        return started, reserved, ran

    def _start(self, j, now):
        units = self._core.unit_indices_of(j)
        return Start(self._ids[j], units, now, nodes=self._nodes.placements(units, self._jobs[j]))

    def _resume_due(self, t):
        # outages whose until has come end by themselves (a unit a later outage holds stays down)
        self._timed.sort(key=lambda x: x[:2])
        while self._timed and self._timed[0][0] <= t:
            self._resumed += 1
            until, _, words = self._timed.pop(0)
            self._outages.apply(until, int(OutageKind.OK_RESUME), words, until)

    def _outage(self, ev, words):
        kind = {Drain: OutageKind.OK_DRAIN, Fail: OutageKind.OK_FAIL, Resume: OutageKind.OK_RESUME}[type(ev)]
        until = ev.until if ev.until is not None and kind != OutageKind.OK_RESUME else -1
        hit = self._outages.apply(ev.at, int(kind), words, until)
        if until >= 0:
            self._timed_seq += 1
            self._timed.append((until, self._timed_seq, words))
        if kind != OutageKind.OK_FAIL:
            return []
        requeued = self.on_failure == "requeue"
        self._counts["requeued" if requeued else "killed"] += len(hit)
        return [Stopped(self._ids[j], ev.at, requeued) for j in hit]

    def _plugins_first(self, events, rejected):
        # a Python predictor's fits and predictions, in event order, on a copy of the scoring and
        # before anything changes (a plugin that raises leaves the engine as it was). Returns the
        # scoring the call goes on with (a copy when Python plugin code runs in it) and the estimates
        # of the jobs it submits (None: not from Python)
        sc = self._scoring
        if not sc.needs_hooks:
            return sc, None
        predictor = isinstance(sc.predictor, PythonPredictor)
        if not self._keys_in_python and not (predictor and any(isinstance(e, (Submit, Finish)) for e in events)):
            return sc, None
        try:
            sc = copy.deepcopy(sc)
        except Exception as exc:
            raise ConfigError(f"a Python plugin cannot be copied, which the engine needs to undo a call "
                              f"that fails ({type(exc).__name__}: {exc}); give it a __deepcopy__") from exc
        if not predictor:
            return sc, None
        estimates, index = {}, len(self._ids)
        for ev in events:
            if isinstance(ev, Submit) and ev.job.id not in rejected:
                job = ev.job
                one = {"id": np.array([_number_of(job.id, index)], dtype=np.int64)}
                one.update({k: np.array([getattr(job, k)], dtype=np.int64)
                            for k in ("submit", "units", "requested", "user")})
                view = replace(JobsView.of(one, [0]), index=np.array([index], dtype=np.int64))
                estimates[job.id] = int(np.asarray(sc.predictor.predict(view, job.submit))[0])
                index += 1
            elif isinstance(ev, Finish):
                j = self._index[ev.job_id]
                start = int(self._core.values_of("start", np.array([j], np.int64))[0])
                sc.predictor.fit(self._view([j], start=[start], run=[ev.time - start]), ev.time)
        return sc, estimates

    def _apply(self, now, events, bits, rejected, sc, estimates):
        # the events, then a Python priority's or chooser's keys; returns the jobs failures stopped
        core = self._core
        stopped = []
        for ev, words in zip(events, bits):
            self._resume_due(ev.time)
            if words is not None:
                stopped.extend(self._outage(ev, words))
            elif isinstance(ev, Submit):
                self._counts["submitted"] += 1
                if ev.job.id in rejected:
                    self._counts["rejected"] += 1
                    continue
                j = self._add(sc, ev.job, estimates)
                if core.submit(j) == _REJECTED:
                    # (the node model: no set of the cluster's nodes, all idle, holds the request)
                    del self._index[ev.job.id]
                    rejected[ev.job.id] = self._nodes.rejection(ev.job)
                    self._counts["rejected"] += 1
            else:
                j = self._index[ev.job_id]
                if self.coalloc is not None:
                    self._co.finish(j, ev.time, 1.0 if ev.rate is None else float(ev.rate))
                else:
                    core.finish(j, ev.time)
                self._counts["finished"] += 1
            self._last_event = ev.time
        self._resume_due(now)
        self._now = now
        if self._keys_in_python:
            sc.set_keys(core, self._view, core.pending(), now)
        return stopped

    def _checkpoint(self):
        # what a failed call must restore: only a Python priority or chooser runs once events are
        # applied (a Python predictor runs before, in _plugins_first), so only then is one taken,
        # unless the host asked for one at every call
        if not self._keys_in_python and self.checkpoints != "every-call":
            return None
        return (checkpoint(self._core), len(self._ids), set(self._users), dict(self._counts),
                self._now, self._last_event, list(self._timed), self._int_ids)

    def _rollback(self, undo):
        if undo is None:
            return
        cp, njobs, users, counts, now, last_event, timed, self._int_ids = undo
        self._timed[:] = timed          # (the same objects: the batch buffers hold them)
        rollback(self._core, cp)
        for job_id in self._ids[njobs:]:
            self._index.pop(job_id, None)       # (a job the core rejected is not in the index)
        del self._ids[njobs:]
        del self._jobs[njobs:]
        for col in self._cols.values():
            del col[njobs:]
        if set(self._users) - users:
            for user in set(self._users) - users:
                del self._users[user]
            self._scoring.attach_users(self._core, len(self._users), lambda: [str(u) for u in self._users])
        self._counts.update(counts)
        self._now, self._last_event = now, last_event

    def _view(self, jobs, **kw):
        # only the rows asked for (the engine's columns grow with every job it has seen)
        jobs = [int(j) for j in jobs]
        cols = {k: np.asarray([v[j] for j in jobs], dtype=np.int64) for k, v in self._cols.items()}
        return replace(JobsView.of(cols, np.arange(len(jobs)), **kw), index=np.asarray(jobs, dtype=np.int64))

    def _add(self, sc, job, estimates=None):
        if estimates is not None:
            est = estimates[job.id]
        else:
            run = job.run if job.run is not None else -1
            est = int(sc.predictor.given(np.array([job.requested]), np.array([run]))[0])
        known = len(self._users)
        user = self._users.setdefault(job.user, known)
        if len(self._users) > known:        # Fair Tree: a new user is a new association
            sc.attach_users(self._core, len(self._users), lambda: [str(u) for u in self._users])
        part, qos = sc.job_factors([job.partition], [job.queue])
        j = self._core.add_jobs(np.array([job.submit], np.int64), np.array([job.units], np.int64),
                                np.array([est], np.int64), np.array([-1], np.int64),
                                req=np.array([job.requested], np.int64), user=np.array([user], np.int64),
                                part=part, qos=qos)
        self._nodes.hand_over(self._core, j, job)
        self._index[job.id] = j
        self._ids.append(job.id)
        if self._int_ids and not (is_int(job.id) and INT64_MIN <= job.id <= INT64_MAX):
            self._int_ids = False
        self._jobs.append(job)
        for k, v in (("id", _number_of(job.id, j)), ("submit", job.submit), ("units", job.units),
                     ("requested", job.requested), ("user", job.user)):
            self._cols[k].append(v)
        if self.coalloc is not None:
            self._co.set_cpu(j, self._cpu_of(job, j))
        return j

    def _cpu_of(self, job, j):
        # the job's CPU use: given, the CoAllocation's constant, or its draw keyed by the job id
        from .coalloc import _beta22
        if job.cpu is not None:
            return float(job.cpu)
        if isinstance(self.coalloc.cpu, (int, float)):
            return float(self.coalloc.cpu)
        return float(min(1.0, max(0.01, _beta22(np.array([_number_of(job.id, j)]), self.coalloc.seed)[0])))

    # ---------------------------------------------------------------- queries
    def pending(self) -> list[int]:
        """Ids of the pending jobs, in priority order."""
        with self._lock:
            return [self._ids[j] for j in self._core.pending()]

    def running(self) -> dict[int, tuple[int, np.ndarray]]:
        """``{job id: (start, unit indices)}`` of the running jobs (with co-allocation, secondary
        jobs too, on the cores they share)."""
        with self._lock:
            core = self._core
            run = np.asarray(core.running(), dtype=np.int64)
            out = {self._ids[j]: (int(t), core.unit_indices_of(j))
                   for j, t in zip(run.tolist(), core.values_of("start", run).tolist())}
            if self.coalloc is not None:
                sec = np.asarray(self._co.secondaries(), dtype=np.int64)
                out.update({self._ids[j]: (int(t), self._co.units(j))
                            for j, t in zip(sec.tolist(), core.values_of("start", sec).tolist())})
            return out

    def reservations(self) -> dict[int, int]:
        """``{job id: planned start}`` from the last pass."""
        with self._lock:
            pending = np.asarray(self._core.pending(), dtype=np.int64)
            planned = self._core.values_of("resv", pending)
            return {self._ids[j]: int(t) for j, t in zip(pending.tolist(), planned.tolist()) if t >= 0}

    def estimates(self) -> dict[int, tuple[int | None, np.ndarray]]:
        """``{job id: (expected start, unit indices)}`` of every pending job -- what ``squeue
        --start`` answers -- from a plan made now: the jobs the last pass reserved keep their
        reservation (as planned then), then every other pending job, in priority order, gets its
        earliest start after the jobs before it (a conservative plan; no backfill window), on the
        planned units. The start is None for a job that cannot start until units come back by a
        :class:`Resume`. Estimates assume every job runs for its estimate and that nothing of higher
        priority arrives; the plan changes no decision."""
        with self._lock:
            if self._now is None:
                return {}
            jobs, starts, words = StartEstimates(self._core).plan(self._now)
            return {self._ids[j]: (int(t) if t >= 0 else None,
                                   _unit_indices(words[i], self.cluster.units) if t >= 0 else np.empty(0, np.int64))
                    for i, (j, t) in enumerate(zip(jobs, starts))}

    @property
    def unit_names(self) -> np.ndarray | None:
        """The name of the node each unit belongs to (an object array indexed by unit), on a cluster
        with named nodes (or ``unit_names`` given); None otherwise. ``engine.unit_names[units]`` names
        a start's units, as :class:`BatchDecisions` gives them."""
        return self._nodes.unit_names

    def down(self) -> np.ndarray:
        """Indices of the units out of service now (drained or failed)."""
        with self._lock:
            return _unit_indices(self._outages.down_units(), self.cluster.units)

    def stats(self) -> dict[str, int | None]:
        """Counters: submitted, started, finished, passes, requeued, killed, pending, running, free
        and down units."""
        with self._lock:
            counts = dict(self._counts)
            if self._buffers is not None:     # (the compiled batch call counts for itself)
                for k, v in self._buffers.counts().items():
                    counts[k] += v
            return dict(counts, pending=len(self._core.pending()), running=len(self._core.running()),
                        free_units=int(self._core.free_count),
                        down_units=int(self._outages.figures()["units_down"]), now=self._now)

    def close(self) -> None:
        """Stop the worker threads and release the engine (idempotent). Later calls to
        :meth:`advance` raise ProtocolError."""
        with self._lock:
            if not self._closed:
                self._core.stop_pool()
            self._closed = True
            if self._buffers is not None:
                self._buffers.closed = True

    def __del__(self):
        core = getattr(self, "_core", None)
        if core is not None:
            core.stop_pool()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
