# cython: cdivision=True
"""The compiled scheduler core: the Python entry points over one engine's state.

The state is a :c:type:`State` struct (``ext/state.pxd``) of named parts, each in its own header:
jobs and users (``jobs.pxd``), node state (``nodes.pxd``), the pending queue (``queue.pxd``), the
scoring policies (``policy.pxd``), the profile (``profile.pxd``), the passes and their one job-test
step (``passes.pxd``), the parallel pass (``parallel.pxd``, ``parallel_pass.pxd``), the pass clock
(``clock.pxd``), the pass records (``records.pxd``) and the cycle and event loop (``cycle.pxd``).
Python validates every input first (with the GIL) and then calls in; nothing raises inside
``nogil``: failures come back as return codes (``pbf/_codes.pxd``, ``Status``) and are raised after
the block. Semantics: DESIGN §4 and ``pbf/reference/engine_ref.py``, the pure-Python oracle this
core must agree with decision for decision. Internal: use :class:`pbf.Engine` or :func:`pbf.replay`,
which configure a core through :func:`pbf.core_config.build_core`.

Layout of the unit bitmaps: ``W = ceil(units / 64)`` little-endian uint64 words, bit = unit.
"""
import threading

import numpy as np

from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, int8_t, uint8_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memcpy

from memory cimport INF, grow
from ticks cimport PBF_HAVE_TSC, clock_ns, now_ticks
from profile cimport Prof, prof_init, prof_start_pass, prof_find_start
from regression cimport Reg, reg_init
from policy cimport INCREMENTS as C_INCREMENTS
from parallel cimport pool_free_copies
from records cimport PassRec, StartEstimates
from sync cimport (pthread_mutex_init, pthread_mutex_destroy, pthread_mutex_lock, pthread_mutex_unlock,
                   pthread_cond_init, pthread_cond_destroy, pthread_cond_broadcast)
from state cimport State, state_init, state_free
from jobs cimport UserHist, jobs_reserve, users_ensure, _regrow
from nodes cimport EndKey, OutageEvents, outage_events_free
from queue cimport PendEntry
from lifecycle cimport job_submit, job_finish
from outages cimport units_down, units_resume, reject_unrunnable
from estimates cimport plan_starts
from node_model cimport NodeModel, NodeLine, nm_reserve_jobs
from coalloc cimport co_after_pass, co_primary_finish, co_secondary_finish
from costate cimport CoAlloc, CA_DTS, CA_EXPERTS, CA_ACTIONS, coalloc_free
from passes cimport ensure_scratch, build_profile, quick_pass
from parallel_pass cimport pool_loop
from cycle cimport full_pass, replay_run
from pbf._codes cimport (JS_NEW, JS_RUNNING, HOW_NONE, HOW_COALLOC, RJ_NONE, OK_RESUME, PD_REGRESSION, RC_OK, RC_NO_MEMORY, RC_SLOT_NOT_FOUND, RC_TIME_RANGE)

from .codes import LABELS
from .errors import InternalError

#: Tsafrir et al.'s correction increments (s), from the compiled table
INCREMENTS = tuple(C_INCREMENTS[i] for i in range(12))

# Pass wall times are read in CPU ticks and converted with this ratio, measured once per process
cdef double _NS_PER_TICK = 0.0


def calibrate():
    """Measure the CPU time-stamp counter against the monotonic clock (once per process is enough)."""
    global _NS_PER_TICK
    cdef int64_t c0, c1, n0, n1
    if not PBF_HAVE_TSC:
        _NS_PER_TICK = 1.0
        return _NS_PER_TICK
    n0 = clock_ns()
    c0 = now_ticks()
    n1 = n0
    while n1 - n0 < 2000000:
        n1 = clock_ns()
    c1 = now_ticks()
    _NS_PER_TICK = (n1 - n0) / <double>(c1 - c0) if c1 > c0 else 1.0
    return _NS_PER_TICK


cdef double _ns_per_tick():
    if _NS_PER_TICK == 0.0:
        calibrate()
    return _NS_PER_TICK


cdef void _restore(void* dst, bytes data):
    # copy saved bytes back over the array they were taken from (which has at least as much room)
    cdef const unsigned char[::1] b
    if len(data):
        b = data
        memcpy(dst, &b[0], len(data))


cdef _raise(int rc, str where):
    # a failure code from the nogil code, raised with the GIL
    if rc == RC_NO_MEMORY:
        raise MemoryError(f"pbf core: out of memory ({where})")
    if rc == RC_SLOT_NOT_FOUND:
        raise InternalError(f"pbf core: {where}: a committed placement's start is not a slot beginning of "
                            "a worker's profile copy (the copies diverged)")
    if rc == RC_TIME_RANGE:
        raise InternalError(f"pbf core: {where}: a node plan's time lies beyond 2^43 s")
    raise InternalError(f"pbf core: {where}: failure code {rc}")


# the settings Core.configure takes, and where each goes
_CONFIG_KEYS = frozenset((
    "resv_max", "max_job_test", "bf_window", "bf_resolution", "sjbf", "bf_keyed", "no_backfill", "resv_stop",
    "trigger", "bf_interval", "record_passes", "commit_eager", "hooks", "clock", "bf_max_time_us",
    "cost_test_us", "cost_slot_us", "cost_node_us", "cost_resv_us", "cost_power", "cost_pref_us", "prio", "prio_period", "predictor", "correction", "mf_w_age",
    "mf_w_fs", "mf_w_js", "mf_w_part", "mf_w_qos", "mf_max_age", "mf_half_life", "mf_favor_small",
    "sim_yield_us", "sim_step_us", "sim_sched_delay", "sim_sched_interval", "sim_queue_depth",
    "sim_max_sched_us", "sim_cost_main_us", "sim_cost_queue_us"))
_TESTING_KEYS = frozenset(("record_units", "stale_speculation", "resume", "parallel_min_queue",
                           "parallel_min_wall_ns", "block_slots"))


cdef class Core:
    """One engine's state and the compiled cycle. Internal: see the module docstring."""
    cdef State s
    cdef object _threads

    def __cinit__(self, int64_t units):
        if state_init(&self.s, units) != RC_OK:
            state_free(&self.s)
            raise MemoryError("pbf core: out of memory (a new core)")
        self.s.clock.ns_per_tick = _NS_PER_TICK

    def __dealloc__(self):
        if self.s.pool.sync_ready:
            pthread_mutex_destroy(&self.s.pool.commit_mu)
            pthread_mutex_destroy(&self.s.pool.mu)
            pthread_cond_destroy(&self.s.pool.work)
            pthread_cond_destroy(&self.s.pool.done)
        state_free(&self.s)

    # ------------------------------------------------------------------ configuration
    def configure(self, **settings):
        """Set scheduling settings by name (see ``pbf/core_config.py``, the one caller outside tests).
        Unknown names raise ValueError and change nothing."""
        unknown = set(settings) - _CONFIG_KEYS
        if unknown:
            raise ValueError(f"unknown core settings: {', '.join(sorted(unknown))}")
        if "cost_power" in settings and not settings["cost_power"] > 0:
            raise ValueError(f"cost_power must be > 0, got {settings['cost_power']}")
        cdef State* S = &self.s
        for name, value in settings.items():
            if name == "resv_max": S.cfg.resv_max = value
            elif name == "max_job_test": S.cfg.max_job_test = value
            elif name == "bf_window": S.cfg.bf_window = value
            elif name == "bf_resolution": S.cfg.bf_resolution = value
            elif name == "sjbf": S.cfg.sjbf = value
            elif name == "bf_keyed": S.cfg.bf_keyed = value
            elif name == "no_backfill": S.cfg.no_backfill = value
            elif name == "resv_stop": S.cfg.resv_stop = value
            elif name == "trigger": S.cfg.trigger = value
            elif name == "bf_interval": S.cfg.bf_interval = value
            elif name == "record_passes": S.cfg.record_passes = value
            elif name == "commit_eager": S.cfg.commit_eager = value
            elif name == "hooks": S.cfg.hooks = value
            elif name == "clock": S.clock.kind = value
            elif name == "bf_max_time_us": S.clock.budget_us = value
            elif name == "cost_test_us":
                S.clock.cost_test_us = value
                S.clock.cost_pref_us = value
            elif name == "cost_pref_us": S.clock.cost_pref_us = value
            elif name == "cost_slot_us": S.clock.cost_slot_us = value
            elif name == "cost_node_us": S.clock.cost_node_us = value
            elif name == "cost_resv_us": S.clock.cost_resv_us = value
            elif name == "cost_power": S.clock.cost_power = value
            elif name == "prio": S.policy.prio = value
            elif name == "prio_period": S.policy.prio_period = value
            elif name == "predictor": S.policy.predictor = value
            elif name == "correction": S.policy.correction = value
            elif name == "mf_w_age": S.policy.w_age = value
            elif name == "mf_w_fs": S.policy.w_fs = value
            elif name == "mf_w_js": S.policy.w_js = value
            elif name == "mf_w_part": S.policy.w_part = value
            elif name == "mf_w_qos": S.policy.w_qos = value
            elif name == "mf_max_age": S.policy.max_age = value
            elif name == "mf_half_life": S.policy.half_life = value
            elif name == "mf_favor_small": S.policy.favor_small = value
            elif name == "sim_yield_us": S.sim.yield_us = value
            elif name == "sim_step_us": S.sim.step_us = value
            elif name == "sim_sched_delay": S.sim.sched_delay = value
            elif name == "sim_sched_interval": S.sim.sched_interval = value
            elif name == "sim_queue_depth": S.sim.queue_depth = value
            elif name == "sim_max_sched_us": S.sim.max_sched_us = value
            elif name == "sim_cost_main_us": S.sim.cost_main_us = value
            elif name == "sim_cost_queue_us": S.sim.cost_queue_us = value

    def set_testing(self, **switches):
        """Switches for tests and benchmarks (no decision changes): ``record_units`` (keep every
        started job's units; set before adding jobs), ``stale_speculation`` (parallel workers
        speculate on a snapshot of the profile taken at the pass start, so that nearly every commit
        reconciles, with counts that do not depend on thread timing; set before ``start_pool``),
        ``resume`` (0: never continue the last pass), ``parallel_min_queue`` and
        ``parallel_min_wall_ns`` (the thresholds below which passes run sequentially),
        ``block_slots`` (slots per block of the profile: small values exercise the block paths)."""
        unknown = set(switches) - _TESTING_KEYS
        if unknown:
            raise ValueError(f"unknown testing switches: {', '.join(sorted(unknown))}")
        cdef State* S = &self.s
        for name, value in switches.items():
            if name == "record_units": S.testing.record_units = value
            elif name == "stale_speculation": S.testing.stale_speculation = value
            elif name == "resume": S.testing.resume = value
            elif name == "parallel_min_queue": S.testing.parallel_min_queue = value
            elif name == "parallel_min_wall_ns": S.testing.parallel_min_wall_ns = value
            elif name == "block_slots":
                if value < 1:
                    raise ValueError(f"block_slots must be >= 1, got {value}")
                S.prof.blk_slots = value

    def set_regression(self, double eta, double lam, int over_sq, int under_sq, int weight,
                       double over_slope=1.0, double under_slope=1.0):
        """Use the on-line regression predictor with these settings (a fresh model)."""
        if self.s.policy.reg == NULL:
            self.s.policy.reg = <Reg*>malloc(sizeof(Reg))
            if self.s.policy.reg == NULL:
                raise MemoryError("pbf core: out of memory (the regression model)")
        reg_init(self.s.policy.reg, eta, lam, over_sq, under_sq, weight, over_slope, under_slope)
        self.s.policy.predictor = PD_REGRESSION

    # ------------------------------------------------------------------ jobs
    def add_jobs(self, submit, units, est, run, req=None, user=None, part=None, qos=None):
        """Append jobs (not yet submitted); returns the index of the first. Inputs are validated by
        the caller: same lengths, submit times non-decreasing after the last job's. ``est``: the
        estimate (used as given with the ``PD_GIVEN`` predictor); ``req``: requested times (default
        ``est``); ``user``: dense user indices >= 0 (default 0); ``part``, ``qos``: multifactor
        factors in [0, 1] (default 1 and 0)."""
        cdef const int64_t[::1] vs = np.ascontiguousarray(submit, dtype=np.int64)
        cdef const int64_t[::1] vu = np.ascontiguousarray(units, dtype=np.int64)
        cdef const int64_t[::1] ve = np.ascontiguousarray(est, dtype=np.int64)
        cdef const int64_t[::1] vr = np.ascontiguousarray(run, dtype=np.int64)
        cdef int64_t n = vs.shape[0], first = self.s.jobs.n, i, j, top = -1, W = self.s.W
        cdef const int64_t[::1] vq = np.ascontiguousarray(ve if req is None else req, dtype=np.int64)
        cdef const int64_t[::1] vw = np.ascontiguousarray(np.zeros(n, np.int64) if user is None else user, dtype=np.int64)
        cdef const double[::1] vp = np.ascontiguousarray(np.ones(n) if part is None else part, dtype=np.float64)
        cdef const double[::1] vo = np.ascontiguousarray(np.zeros(n) if qos is None else qos, dtype=np.float64)
        cdef State* S = &self.s
        for i in range(n):
            if vw[i] > top:
                top = vw[i]
        # all room first: a failure leaves the table as it was
        if (jobs_reserve(&S.jobs, first + n) != RC_OK or users_ensure(&S.users, top + 1) != RC_OK
                or (S.testing.record_units and grow(<void**>&S.jobs.bits, &S.jobs.bits_cap, (first + n) * W,
                                                    sizeof(uint64_t)) != RC_OK)):
            raise MemoryError("pbf core: out of memory (adding jobs)")
        for i in range(n):
            j = first + i
            S.jobs.submit[j] = vs[i]
            S.jobs.units[j] = vu[i]
            S.jobs.est[j] = ve[i]
            S.jobs.run[j] = vr[i]
            S.jobs.req[j] = vq[i]
            S.jobs.user[j] = vw[i]
            S.jobs.part[j] = vp[i]
            S.jobs.qos[j] = vo[i]
            S.jobs.pred0[j] = -1
            S.jobs.ncorr[j] = 0
            if S.jobs.requeues != NULL:
                S.jobs.requeues[j] = 0
                S.jobs.lost[j] = 0
            S.jobs.bfkey[j] = 0
            S.jobs.key[j] = 0.0
            S.jobs.acc[j] = -1
            S.jobs.unext[j] = -1
            S.jobs.uprev[j] = -1
            S.jobs.start[j] = -1
            S.jobs.end[j] = -1
            S.jobs.resv[j] = -1
            S.jobs.resv_min[j] = -1
            S.jobs.seq[j] = -1
            S.jobs.runpos[j] = -1
            S.jobs.row[j] = -1
            S.jobs.state[j] = JS_NEW
            S.jobs.how[j] = HOW_NONE
            S.jobs.reason[j] = RJ_NONE
        if S.testing.record_units:
            memset(S.jobs.bits + first * W, 0, n * W * sizeof(uint64_t))
        if S.co.on and self._co_grow(S.jobs.cap) != 0:
            raise MemoryError("pbf core: out of memory (adding jobs)")
        if S.nm.on and nm_reserve_jobs(&S.nm, S.jobs.cap) != RC_OK:
            raise MemoryError("pbf core: out of memory (adding jobs)")
        S.jobs.n = first + n
        return first

    # ------------------------------------------------------------------ nodes
    def set_nodes(self, cores, memory_mb, gpus, features, bint first_fit=False):
        """Make the cluster one of nodes (before any job is added): node i has ``cores[i]``
        consecutive units (they add up to the cluster's units), ``memory_mb[i]``, ``gpus[i]`` and the
        feature bits ``features[i]`` (uint64). Validated by the caller (pbf.resources)."""
        cdef const int64_t[::1] vc = np.ascontiguousarray(cores, dtype=np.int64)
        cdef const int64_t[::1] vm = np.ascontiguousarray(memory_mb, dtype=np.int64)
        cdef const int64_t[::1] vg = np.ascontiguousarray(gpus, dtype=np.int64)
        cdef const uint64_t[::1] vf = np.ascontiguousarray(features, dtype=np.uint64)
        cdef int64_t nn = vc.shape[0], i, u, total = 0
        cdef NodeModel* M = &self.s.nm
        if self.s.jobs.n or M.on:
            raise RuntimeError("pbf core: set_nodes comes first, once")
        for i in range(nn):
            total += vc[i]
        if nn > 0xFFFFF:
            raise ValueError(f"{nn} nodes: pbf holds at most 1,048,575 nodes")
        if total != self.s.units or nn == 0:
            raise ValueError(f"the nodes' cores add up to {total}, the cluster has {self.s.units} units")
        M.nn = nn
        M.first_fit = first_fit
        M.first = <int64_t*>malloc((nn + 1) * sizeof(int64_t))
        M.node_of = <int32_t*>malloc(max(1, self.s.units) * sizeof(int32_t))
        M.cap_mem = <int64_t*>malloc(nn * sizeof(int64_t))
        M.cap_gpu = <int64_t*>malloc(nn * sizeof(int64_t))
        M.feat = <uint64_t*>malloc(nn * sizeof(uint64_t))
        M.free_mem = <int64_t*>malloc(nn * sizeof(int64_t))
        M.free_gpu = <int64_t*>malloc(nn * sizeof(int64_t))
        M.line = <NodeLine*>calloc(nn, sizeof(NodeLine))
        M.cpu = <int64_t*>malloc(nn * sizeof(int64_t))
        M.take = <int64_t*>malloc(nn * sizeof(int64_t))
        M.avail = <int64_t*>malloc(nn * sizeof(int64_t))
        M.cut = <int64_t*>malloc(nn * sizeof(int64_t))
        M.r_cpus = <int64_t*>malloc(nn * sizeof(int64_t))
        M.r_nodes = <int64_t*>malloc(nn * sizeof(int64_t))
        M.r_first = <int64_t*>malloc(nn * sizeof(int64_t))
        M.r_last = <int64_t*>malloc(nn * sizeof(int64_t))
        M.elig = <int32_t*>malloc(nn * sizeof(int32_t))
        M.pcpu = <int64_t*>malloc(nn * sizeof(int64_t))
        M.open = <int32_t*>malloc(nn * sizeof(int32_t))
        M.is_elig = <uint8_t*>calloc(nn, sizeof(uint8_t))
        M.open_pos = <int32_t*>malloc(nn * sizeof(int32_t))
        M.sortkey = <int64_t*>malloc(nn * sizeof(int64_t))
        M.elig_ok = False
        if (M.first == NULL or M.node_of == NULL or M.cap_mem == NULL or M.cap_gpu == NULL or M.feat == NULL
                or M.free_mem == NULL or M.free_gpu == NULL or M.line == NULL or M.cpu == NULL or M.take == NULL
                or M.avail == NULL or M.cut == NULL or M.r_cpus == NULL or M.r_nodes == NULL
                or M.r_first == NULL or M.r_last == NULL or M.elig == NULL or M.pcpu == NULL
                or M.open == NULL
                or M.open_pos == NULL or M.sortkey == NULL or M.is_elig == NULL):
            raise MemoryError("pbf core: out of memory (the nodes)")
        M.first[0] = 0
        for i in range(nn):
            M.first[i + 1] = M.first[i] + vc[i]
            for u in range(M.first[i], M.first[i + 1]):
                M.node_of[u] = <int32_t>i
            M.cap_mem[i] = vm[i]
            M.cap_gpu[i] = vg[i]
            M.feat[i] = vf[i]
            M.free_mem[i] = vm[i]
            M.free_gpu[i] = vg[i]
        if nm_reserve_jobs(M, max(self.s.jobs.cap, 1)) != RC_OK:
            raise MemoryError("pbf core: out of memory (the nodes)")
        M.on = True

    def set_node_requests(self, int64_t first, mem_per_core, mem_per_node, gpus_per_node, min_nodes, max_nodes,
                          features):
        """What jobs first, first+1, ... ask of the nodes (added, not yet submitted): memory per core
        or per node (MB), GPUs per node, nodes at least and at most (0: any), feature bits."""
        cdef const int64_t[::1] a = np.ascontiguousarray(mem_per_core, dtype=np.int64)
        cdef const int64_t[::1] b = np.ascontiguousarray(mem_per_node, dtype=np.int64)
        cdef const int64_t[::1] g = np.ascontiguousarray(gpus_per_node, dtype=np.int64)
        cdef const int64_t[::1] lo = np.ascontiguousarray(min_nodes, dtype=np.int64)
        cdef const int64_t[::1] hi = np.ascontiguousarray(max_nodes, dtype=np.int64)
        cdef const uint64_t[::1] f = np.ascontiguousarray(features, dtype=np.uint64)
        cdef int64_t n = a.shape[0], i
        cdef NodeModel* M = &self.s.nm
        if not M.on:
            raise RuntimeError("pbf core: set_nodes first")
        if first < 0 or first + n > self.s.jobs.n:
            raise ValueError("set_node_requests: jobs out of range")
        for i in range(n):
            M.mpc[first + i] = a[i]
            M.mpn[first + i] = b[i]
            M.gpn[first + i] = g[i]
            M.minn[first + i] = lo[i]
            M.maxn[first + i] = hi[i]
            M.jfeat[first + i] = f[i]

    def node_free(self):
        """Per node: (free cores, free memory MB, free GPUs) now (tests and reports)."""
        cdef NodeModel* M = &self.s.nm
        cdef int64_t i, u, c
        out = []
        for i in range(M.nn):
            c = 0
            for u in range(M.first[i], M.first[i + 1]):
                c += (self.s.nodes.free[u >> 6] >> (u & 63)) & 1
            out.append((c, M.free_mem[i], M.free_gpu[i]))
        return out

    def node_stats(self):
        """A node cluster's counters: passes whose first job not fitting now was met, those among them
        with enough free cores for it (held by memory, GPUs, features or node shape), and each job's
        node count (0: never started)."""
        cdef NodeModel* M = &self.s.nm
        cdef int64_t j
        counts = np.zeros(self.s.jobs.n, dtype=np.int64)
        for j in range(self.s.jobs.n if M.on else 0):
            counts[j] = M.nused[j]
        return int(M.heads), int(M.heads_cores_free), counts

    def submit(self, int64_t j):
        """Submit job j now (queued, or rejected with a reason); returns its state code."""
        cdef int rc = job_submit(&self.s, j)
        if rc != RC_OK:
            _raise(rc, "submit")
        return int(self.s.jobs.state[j])

    def submit_range(self, int64_t first, int64_t n):
        """Submit jobs first .. first+n-1 (benchmark and scenario set-up)."""
        cdef int64_t j
        cdef int rc
        for j in range(first, first + n):
            rc = job_submit(&self.s, j)
            if rc != RC_OK:
                _raise(rc, "submit")

    def finish(self, int64_t j, int64_t now):
        """Running job j ended at now (validated by the caller)."""
        job_finish(&self.s, j, now)

    def load_trace(self, submit, units, est, run, **columns):
        """Jobs of a replay, in (submit, id) order; run = actual run time (already capped);
        ``columns``: the optional columns of :meth:`add_jobs` (req, user, part, qos)."""
        self.add_jobs(submit, units, est, run, **columns)
        self.s.replay.next_sub = 0
        if self.s.cfg.hooks and grow(<void**>&self.s.replay.finished, &self.s.replay.finished_cap,
                                     self.s.jobs.n, sizeof(int64_t)) != RC_OK:
            raise MemoryError("pbf core: out of memory (loading a trace)")

    # ------------------------------------------------------------------ passes and replay
    def run_pass(self, int64_t now, bint quick=False):
        """One pass at ``now``; returns (started job indices, reserved job indices)."""
        cdef int rc
        self.s.replay.now = now
        with nogil:
            rc = quick_pass(&self.s, now) if quick else full_pass(&self.s, now)
        if rc != RC_OK:
            _raise(rc, "a pass")
        return (self._int64_array(self.s.decided.started, self.s.decided.nstarted),
                self._int64_array(self.s.decided.reserved, self.s.decided.nreserved))

    cdef object _int64_array(self, const int64_t* src, int64_t n):
        out = np.empty(n, dtype=np.int64)
        cdef int64_t[::1] v = out
        cdef int64_t i
        for i in range(n):
            v[i] = src[i]
        return out

    def replay(self, int64_t max_instants=-1):
        """Run the event loop for at most ``max_instants`` instants (-1: to the end; with the
        slurm-sim clock, main-loop iterations that do something). Returns True when the trace is
        done."""
        cdef int rc = 0
        cdef bint done = False
        with nogil:
            rc = replay_run(&self.s, max_instants, &done)
        if rc != RC_OK:
            _raise(rc, "the replay")
        return done

    # ------------------------------------------------------------------ co-allocation
    def enable_coalloc(self, int policy, double fixed, double beta, int64_t interval, double lam, double tau,
                       double dmax, uint64_t seed, const int32_t[::1] node_cores, const double[::1] cpu_use,
                       bint dynamics=True):
        """Co-allocation with a policy (CoallocPolicy), over nodes of ``node_cores`` consecutive
        units, with each job's CPU use in (0, 1] (checked by the caller). A replay (after
        load_trace) runs the load model (``dynamics``); the embedding API does not (the host runs
        the jobs) and adds jobs later (co_set_cpu)."""
        cdef CoAlloc* C = &self.s.co
        cdef int64_t n = self.s.jobs.n, U = self.s.units, k, u, first = 0, i
        coalloc_free(C, n)
        memset(C, 0, sizeof(CoAlloc))
        C.nnodes = node_cores.shape[0]
        C.node_of = <int32_t*>malloc(max(U, 1) * sizeof(int32_t))
        C.node_first = <int32_t*>malloc(max(C.nnodes, 1) * sizeof(int32_t))
        C.node_cap = <int32_t*>malloc(max(C.nnodes, 1) * sizeof(int32_t))
        C.node_nsec = <int32_t*>calloc(max(C.nnodes, 1), sizeof(int32_t))
        C.node_q = <double*>malloc(max(C.nnodes, 1) * sizeof(double))
        C.node_stamp = <int64_t*>calloc(max(C.nnodes, 1), sizeof(int64_t))
        C.prim = <int32_t*>malloc(max(U, 1) * sizeof(int32_t))
        C.sec = <int32_t*>malloc(max(U, 1) * sizeof(int32_t))
        C.lent_by = <int32_t*>malloc(max(U, 1) * sizeof(int32_t))
        C.pick = <int32_t*>malloc(max(U, 1) * sizeof(int32_t))
        if (C.node_of == NULL or C.node_first == NULL or C.node_cap == NULL or C.node_nsec == NULL
                or C.node_q == NULL or C.node_stamp == NULL or C.prim == NULL or C.sec == NULL
                or C.lent_by == NULL or C.pick == NULL or self._co_grow(max(n, 16)) != 0):
            coalloc_free(C, n)
            memset(C, 0, sizeof(CoAlloc))
            raise MemoryError("pbf core: out of memory (co-allocation)")
        for k in range(C.nnodes):
            C.node_first[k] = <int32_t>first
            C.node_cap[k] = node_cores[k]
            C.node_q[k] = 1.0
            for u in range(first, first + node_cores[k]):
                C.node_of[u] = <int32_t>k
            first += node_cores[k]
        for u in range(U):
            C.prim[u] = -1
            C.sec[u] = -1
            C.lent_by[u] = -1
        for i in range(n):
            C.u[i] = cpu_use[i]
        for k in range(CA_DTS):
            C.alpha[k] = 1.0 / CA_DTS
        C.on = True
        C.dynamics = dynamics
        C.policy = policy
        C.fixed = fixed
        C.beta = beta
        C.interval = interval if dynamics else 0
        C.next_tick = self.s.jobs.submit[0] + interval if n and interval > 0 else INF
        C.lam = lam
        C.tau = tau
        C.dmax = dmax
        C.rng = seed * 0x9E3779B97F4A7C15ULL + 0x2545F4914F6CDD1DULL
        if C.rng == 0:
            C.rng = 1
        C.fill_lent = 1.0
        C.fill_lend = 1.0

    cdef int _co_grow(self, int64_t cap):
        # the per-job arrays from C.cap to cap entries (new ones initialised); -1: out of memory
        cdef CoAlloc* C = &self.s.co
        cdef int64_t old = C.cap, i, k
        if cap <= old:
            return 0
        if (_regrow(<void**>&C.u, old, cap, sizeof(double)) != 0 or _regrow(<void**>&C.work, old, cap, sizeof(double)) != 0
                or _regrow(<void**>&C.rate, old, cap, sizeof(double)) != 0
                or _regrow(<void**>&C.done_work, old, cap, sizeof(double)) != 0
                or _regrow(<void**>&C.t_upd, old, cap, sizeof(int64_t)) != 0
                or _regrow(<void**>&C.lend, old, cap, sizeof(int32_t)) != 0
                or _regrow(<void**>&C.lent, old, cap, sizeof(int32_t)) != 0
                or _regrow(<void**>&C.sec_units, old, cap, sizeof(int32_t*)) != 0
                or _regrow(<void**>&C.stamp, old, cap, sizeof(int64_t)) != 0
                or _regrow(<void**>&C.dec_a, old, cap, sizeof(int8_t)) != 0
                or _regrow(<void**>&C.dec_e, old, cap, sizeof(int16_t)) != 0
                or _regrow(<void**>&C.dec_p, old, cap, sizeof(double)) != 0
                or _regrow(<void**>&C.dec_t0, old, cap, sizeof(int64_t)) != 0
                or _regrow(<void**>&C.dec_w0, old, cap, sizeof(double)) != 0
                or _regrow(<void**>&C.dec_leaf, old * CA_DTS, cap * CA_DTS, sizeof(int8_t)) != 0
                or _regrow(<void**>&C.dec_pi, old * CA_DTS, cap * CA_DTS, sizeof(double)) != 0):
            return RC_NO_MEMORY
        for i in range(old, cap):
            C.u[i] = 0.5
            C.work[i] = 0.0
            C.rate[i] = 1.0
            C.done_work[i] = 0.0
            C.t_upd[i] = 0
            C.lend[i] = 0
            C.lent[i] = 0
            C.sec_units[i] = NULL
            C.stamp[i] = 0
            C.dec_a[i] = -1
            C.dec_e[i] = -1
            C.dec_p[i] = 0.0
            C.dec_t0[i] = 0
            C.dec_w0[i] = 0.0
            for k in range(CA_DTS):
                C.dec_leaf[i * CA_DTS + k] = 0
                C.dec_pi[i * CA_DTS + k] = 0.0
        C.cap = cap
        return 0

    # the embedding API's co-allocation (the host runs the jobs)
    def co_set_cpu(self, int64_t j, double u):
        """Job j's CPU use (after add_jobs)."""
        cdef CoAlloc* C = &self.s.co
        if self._co_grow(max(self.s.jobs.cap, j + 1)) != 0:
            raise MemoryError("pbf core: out of memory (co-allocation)")
        C.u[j] = u

    def co_after_pass(self, int64_t now):
        """After run_pass: the started primaries lend, and queued jobs start on lent cores.
        Returns ([(primary, cores lent)], [secondary job indices])."""
        cdef CoAlloc* C = &self.s.co
        cdef int64_t i, before = C.sec_started, q
        prim = [self.s.decided.started[i] for i in range(self.s.decided.nstarted)]
        queued = self.pending()
        cdef int rc = co_after_pass(&self.s, now)
        if rc != RC_OK:
            _raise(rc, "co-allocation")
        lends = [(p, C.lend[p]) for p in prim]
        started = [int(j) for j in queued if self.s.jobs.state[j] == JS_RUNNING]
        return lends, started

    def co_units(self, int64_t j):
        """A secondary job's units (indices)."""
        cdef CoAlloc* C = &self.s.co
        cdef int64_t i
        if C.sec_units == NULL or j >= C.cap or C.sec_units[j] == NULL:
            return np.empty(0, dtype=np.int64)
        return np.array(sorted(C.sec_units[j][i] for i in range(self.s.jobs.units[j])), dtype=np.int64)

    def co_finish(self, int64_t j, int64_t now, double rate):
        """Running job j (primary or secondary) ended at now; ``rate``: its progress rate as the
        host observed it (the learner's feedback)."""
        cdef CoAlloc* C = &self.s.co
        cdef int rc
        C.h_given = rate
        if self.s.jobs.how[j] == HOW_COALLOC:
            rc = co_secondary_finish(&self.s, j, now)
        else:
            rc = co_primary_finish(&self.s, j, now)
            job_finish(&self.s, j, now)
        if rc != RC_OK:
            _raise(rc, "co-allocation")

    def co_secondaries(self):
        """Indices of the running secondary jobs."""
        cdef CoAlloc* C = &self.s.co
        cdef int64_t j
        if not C.on:
            return []
        return [j for j in range(self.s.jobs.n) if self.s.jobs.state[j] == JS_RUNNING
                and self.s.jobs.how[j] == HOW_COALLOC]

    def coalloc_check(self, bint on=True):
        """Tests: check every node an update touches (rates, CPU use within cores); the count of
        violations is in coalloc_figures()."""
        self.s.co.check = on

    def coalloc_figures(self):
        """What co-allocation did: per job (CPU use, work done), and the learner's state."""
        cdef CoAlloc* C = &self.s.co
        cdef int64_t n = self.s.jobs.n, i, k, leaf
        u = np.empty(n)
        done = np.empty(n)
        cdef double[::1] vu = u, vd = done
        for i in range(n):
            vu[i] = C.u[i]
            vd[i] = C.done_work[i]
        return {"cpu_use": u, "work_done": done, "overruns": C.overruns, "decisions": C.decisions,
                "violations": C.violations,
                "secondaries": C.sec_started, "loss_sum": C.loss_sum,
                "actions": [C.act_count[k] for k in range(CA_ACTIONS)],
                "alpha": [C.alpha[k] for k in range(CA_DTS)], "rounds": C.rounds,
                "cum_loss": [C.cum_loss[k] for k in range(CA_EXPERTS)], "cum_expected": C.cum_expected,
                "logw": [C.logw[k] for k in range(CA_EXPERTS)],
                "leaf_best": [[int(np.argmin([C.leaf_loss[k][leaf][i] for i in range(CA_ACTIONS)]))
                               if C.leaf_n[k][leaf] else -1 for leaf in range(4)] for k in range(CA_DTS)],
                "leaf_n": [[C.leaf_n[k][leaf] for leaf in range(4)] for k in range(CA_DTS)],
                "fill": C.fill_lent / C.fill_lend}

    # ------------------------------------------------------------------ start-time estimates
    def record_start_estimates(self, int64_t every=0):
        """Replay (after load_trace): record each job's estimated start right after the instant it
        arrives, and with ``every`` > 0 every pending job's every ``every`` instants with a pass."""
        cdef int64_t i, n = self.s.jobs.n
        free(self.s.est.at_submit)
        self.s.est.at_submit = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        if self.s.est.at_submit == NULL:
            raise MemoryError("pbf core: out of memory (start estimates)")
        for i in range(n):
            self.s.est.at_submit[i] = -1
        self.s.est.on = True
        self.s.est.every = every

    def start_estimates(self):
        """(estimate at arrival per job, periodic records: time, job, estimate)."""
        cdef StartEstimates* E = &self.s.est
        at = self._int64_array(E.at_submit, self.s.jobs.n) if E.at_submit != NULL else None
        return at, (self._int64_array(E.log_t, E.nlog), self._int64_array(E.log_job, E.nlog),
                    self._int64_array(E.log_est, E.nlog))

    def plan(self, int64_t now):
        """The start-time plan of the queued jobs at ``now`` (estimates.pxd): (jobs in queue order,
        planned starts (-1: none), planned units (W words each))."""
        cdef int64_t n = self.s.queue.n, W = self.s.W
        jobs = self.pending()
        starts = np.empty(n, dtype=np.int64)
        units = np.zeros((n, W), dtype=np.uint64)
        cdef int64_t[::1] vs = starts
        cdef uint64_t[:, ::1] vu = units
        cdef int rc = 0
        if n == 0:
            return jobs, starts, units
        with nogil:
            rc = plan_starts(&self.s, now, &vs[0], &vu[0, 0] if W else NULL)
        if rc != RC_OK:
            _raise(rc, "a plan")
        return jobs, starts, units

    # ------------------------------------------------------------------ outages
    def load_outages(self, const int64_t[::1] t, const int8_t[::1] kind, const int64_t[::1] until,
                     const uint64_t[:, ::1] bits, bint requeue):
        """A replay's outage events (checked and sorted by the caller: time order, resumes of an
        instant first): OK_DRAIN / OK_FAIL take ``bits`` (rows of W words) out of service until
        ``until`` (-1: until a resume), OK_RESUME brings back those whose until is at most
        ``until`` (-1: every one). ``requeue``: a failed unit's running job goes back to the queue
        (else it ends killed). Later outages cannot be added: the replay rejects a pending job once
        no event left can bring enough units back."""
        cdef int64_t n = t.shape[0], i, W = self.s.W
        cdef OutageEvents* O = &self.s.outages
        if bits.shape[0] != n or (n and bits.shape[1] != W):
            raise ValueError("outage bits: one row of W words per event")
        outage_events_free(O)
        O.t = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        O.until = <int64_t*>malloc(max(n, 1) * sizeof(int64_t))
        O.kind = <int8_t*>malloc(max(n, 1) * sizeof(int8_t))
        O.bits = <uint64_t*>malloc(max(n * W, 1) * sizeof(uint64_t))
        if O.t == NULL or O.until == NULL or O.kind == NULL or O.bits == NULL:
            outage_events_free(O)
            raise MemoryError("pbf core: out of memory (loading outages)")
        for i in range(n):
            O.t[i] = t[i]
            O.kind[i] = kind[i]
            O.until[i] = INF if until[i] < 0 else until[i]
            if W:
                memcpy(O.bits + i * W, &bits[i, 0], W * sizeof(uint64_t))
        O.n = n
        O.next = 0
        O.requeue = requeue
        O.final = True

    def set_requeue(self, bint requeue):
        """Embedding API: a failed unit's running job goes back to the queue (else it ends killed)."""
        self.s.outages.requeue = requeue

    def jobs_on(self, const uint64_t[::1] bits):
        """Running job indices holding any unit of ``bits`` (W words)."""
        cdef int64_t i, j, w, W = self.s.W
        out = []
        for i in range(self.s.nodes.nrun):
            j = self.s.nodes.running[i]
            for w in range(W):
                if self.s.nodes.rows[<int64_t>self.s.jobs.row[j] * W + w] & bits[w]:
                    out.append(j)
                    break
        return np.array(sorted(out), dtype=np.int64)

    def outage(self, int64_t now, int kind, const uint64_t[::1] bits, int64_t until=-1):
        """Embedding API: apply one outage at ``now`` (OK_DRAIN, OK_FAIL: ``until`` -1 = until a
        resume; OK_RESUME: every unit of ``bits``). Returns the running jobs a failure stopped."""
        cdef int rc = 0
        if bits.shape[0] != self.s.W:
            raise ValueError("outage bits: W words")
        hit = self.jobs_on(bits) if kind != OK_RESUME else np.empty(0, np.int64)
        if kind == OK_RESUME:
            units_resume(&self.s, &bits[0], INF if until < 0 else until)
        else:
            rc = units_down(&self.s, &bits[0], INF if until < 0 else until, kind, now, self.s.outages.requeue)
        if rc != RC_OK:
            _raise(rc, "an outage")
        return hit

    def outage_figures(self):
        """What the outages did: killed, requeued, lost unit-seconds, units down now, units down
        that no event brings back, units down that a running job still holds."""
        cdef OutageEvents* O = &self.s.outages
        return {"killed": O.killed, "requeued": O.requeued, "lost_unit_s": O.lost,
                "units_down": self.s.nodes.ndown, "units_lost": O.units_lost,
                "units_down_held": self.s.nodes.held_down}

    def down_units(self):
        """The units out of service now (W words)."""
        arr = np.zeros(self.s.W, dtype=np.uint64)
        cdef uint64_t[::1] v = arr
        cdef int64_t w
        for w in range(self.s.W):
            v[w] = self.s.nodes.down[w]
        return arr

    def failure_arrays(self):
        """(requeues, lost unit-seconds) per job."""
        n = self.s.jobs.n
        if self.s.jobs.requeues == NULL:
            return np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        return self._int64_array(self.s.jobs.requeues, n), self._int64_array(self.s.jobs.lost, n)

    def profile_ops(self, int64_t now, const int64_t[::1] units, const int64_t[::1] est, int64_t reps):
        """Benchmark kernel: ``reps`` times, build the profile at ``now`` and find the earliest start
        of every (units, est) pair (no placement). Returns (slots, sum of the starts found) of the
        last round, so a caller can check the work was done."""
        cdef int64_t r, i, n = units.shape[0], total = 0, t
        cdef int32_t si = 0
        cdef int rc = 0
        self.s.resume_st.valid = False
        with nogil:
            for r in range(reps):
                prof_start_pass(&self.s.prof, self.s.cfg.bf_window, self.s.cfg.bf_resolution)
                rc = ensure_scratch(&self.s)
                if rc == RC_OK:
                    rc = build_profile(&self.s, now)
                if rc != RC_OK:
                    break
                total = 0
                for i in range(n):
                    t = prof_find_start(&self.s.prof, units[i], est[i], now, False, &si)
                    total += t
        if rc != RC_OK:
            _raise(rc, "profile_ops")
        return self.s.prof.nslots, total

    # ------------------------------------------------------------------ the worker pool
    def start_pool(self, int workers):
        """Start ``workers - 1`` threads (the caller is worker 0); passes with at least
        ``parallel_min_queue`` queued jobs then run in parallel, with the same decisions."""
        cdef int64_t i
        cdef State* S = &self.s
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        S.clock.ns_per_tick = _ns_per_tick()
        self.stop_pool()
        pool_free_copies(&S.pool)
        S.cfg.workers = workers
        if workers == 1:
            return
        S.pool.prof = <Prof*>calloc(workers, sizeof(Prof))
        S.pool.tests = <int64_t*>calloc(workers, sizeof(int64_t))
        S.pool.seen = <int64_t*>calloc(workers, sizeof(int64_t))
        S.pool.tests_total = <int64_t*>calloc(workers, sizeof(int64_t))
        S.pool.nm = <NodeModel*>calloc(workers, sizeof(NodeModel))
        S.pool.nnm = workers
        if S.testing.stale_speculation:
            S.pool.nmsnap = <NodeModel*>calloc(workers, sizeof(NodeModel))
        if (S.pool.prof == NULL or S.pool.tests == NULL or S.pool.seen == NULL or S.pool.tests_total == NULL
                or S.pool.nm == NULL or (S.testing.stale_speculation and S.pool.nmsnap == NULL)):
            pool_free_copies(&S.pool)
            S.cfg.workers = 1
            raise MemoryError("pbf core: out of memory (worker pool)")
        for i in range(workers):
            S.pool.nprof = i + 1
            if prof_init(&S.pool.prof[i], S.W) != RC_OK:
                pool_free_copies(&S.pool)
                S.cfg.workers = 1
                raise MemoryError("pbf core: out of memory (worker pool)")
        if S.testing.stale_speculation:
            S.pool.snap = <Prof*>calloc(workers, sizeof(Prof))
            for i in range(workers):
                S.pool.nsnap = i + 1
                if S.pool.snap == NULL or prof_init(&S.pool.snap[i], S.W) != RC_OK:
                    pool_free_copies(&S.pool)
                    S.cfg.workers = 1
                    raise MemoryError("pbf core: out of memory (worker pool)")
        if not S.pool.sync_ready:
            pthread_mutex_init(&S.pool.commit_mu, NULL)
            pthread_mutex_init(&S.pool.mu, NULL)
            pthread_cond_init(&S.pool.work, NULL)
            pthread_cond_init(&S.pool.done, NULL)
            S.pool.sync_ready = True
        S.pool.shutdown = 0
        self._threads = [threading.Thread(target=self._pool_thread, args=(wid, S.pool.gen),
                                          daemon=True, name=f"pbf-worker-{wid}")
                         for wid in range(1, workers)]
        for th in self._threads:
            th.start()
        S.pool.threads = workers - 1

    def _pool_thread(self, int64_t wid, int64_t gen):
        with nogil:
            pool_loop(&self.s, wid, gen)

    def stop_pool(self):
        """Stop the worker threads (idempotent)."""
        if not self._threads:
            return
        with nogil:
            pthread_mutex_lock(&self.s.pool.mu)
            self.s.pool.shutdown = 1
            pthread_cond_broadcast(&self.s.pool.work)
            pthread_mutex_unlock(&self.s.pool.mu)
        for th in self._threads:
            th.join()
        self._threads = None
        self.s.pool.threads = 0

    def calibrate(self):
        """Measure the tick rate for the wall clock (once per process)."""
        self.s.clock.ns_per_tick = _ns_per_tick()

    def worker_tests_total(self):
        """Jobs each worker thread evaluated, over all parallel passes so far."""
        cdef int64_t i
        if self.s.pool.tests_total == NULL:
            return []
        return [self.s.pool.tests_total[i] for i in range(self.s.cfg.workers)]

    # ------------------------------------------------------------------ Python plugins
    def hook_arrivals(self):
        """With hooks: (first, count) of the jobs arriving at the instant handed to Python."""
        cdef int64_t k = self.s.replay.next_sub
        while k < self.s.jobs.n and self.s.jobs.submit[k] <= self.s.replay.hook_t:
            k += 1
        return self.s.replay.next_sub, k - self.s.replay.next_sub

    def take_finished(self):
        """Jobs finished since the last call (with hooks), in completion order."""
        out = self._int64_array(self.s.replay.finished, self.s.replay.nfinished)
        self.s.replay.nfinished = 0
        return out

    def set_estimates(self, const int64_t[::1] jobs, const int64_t[::1] est):
        """Estimates of jobs not yet submitted (a Python predictor; checked by the caller)."""
        cdef int64_t i
        for i in range(jobs.shape[0]):
            self.s.jobs.est[jobs[i]] = est[i]

    def set_keys(self, const int64_t[::1] jobs, const double[::1] keys):
        """Priority keys (ascending) from a Python priority function; the queue is re-sorted before
        the next pass."""
        cdef int64_t i
        for i in range(jobs.shape[0]):
            self.s.jobs.key[jobs[i]] = keys[i]
        self.s.policy.keys_dirty = True

    def set_bf_keys(self, const int64_t[::1] jobs, const int64_t[::1] keys):
        """Backfill-order keys (ascending) from a Python chooser."""
        cdef int64_t i
        for i in range(jobs.shape[0]):
            self.s.jobs.bfkey[jobs[i]] = keys[i]

    # ------------------------------------------------------------------ state read-out
    def estimates(self):
        """(estimate at submission, current estimate, corrections, requested) per job."""
        n = self.s.jobs.n
        return (self._int64_array(self.s.jobs.pred0, n), self._int64_array(self.s.jobs.est, n),
                self._int64_array(self.s.jobs.ncorr, n), self._int64_array(self.s.jobs.req, n))

    def values_of(self, str column, const int64_t[::1] jobs):
        """One column of the given jobs: ``est``, ``start``, ``end`` (cheap: for the Python plugin
        hooks), or ``state``, ``row``, ``runpos``, ``unext``, ``uprev``, ``acc``, ``ncorr``, ``how``,
        ``resv``, ``requeues``, ``lost`` (checkpoints)."""
        cdef int64_t* src = NULL
        cdef int64_t i, j
        if column == "est": src = self.s.jobs.est
        elif column == "start": src = self.s.jobs.start
        elif column == "end": src = self.s.jobs.end
        elif column == "runpos": src = self.s.jobs.runpos
        elif column == "unext": src = self.s.jobs.unext
        elif column == "uprev": src = self.s.jobs.uprev
        elif column == "acc": src = self.s.jobs.acc
        elif column == "ncorr": src = self.s.jobs.ncorr
        elif column == "resv": src = self.s.jobs.resv
        elif column == "requeues": src = self.s.jobs.requeues
        elif column == "lost": src = self.s.jobs.lost
        elif column not in ("state", "row", "how"):
            raise ValueError(column)
        if column in ("requeues", "lost") and src == NULL:
            return np.zeros(jobs.shape[0], dtype=np.int64)     # (no failure yet)
        out = np.empty(jobs.shape[0], dtype=np.int64)
        cdef int64_t[::1] v = out
        for i in range(jobs.shape[0]):
            j = jobs[i]
            if src != NULL:
                v[i] = src[j]
            elif column == "state":
                v[i] = self.s.jobs.state[j]
            elif column == "how":
                v[i] = self.s.jobs.how[j]
            else:
                v[i] = self.s.jobs.row[j]
        return out

    def keys(self):
        """The priority key of every job (as last computed)."""
        out = np.empty(self.s.jobs.n)
        cdef double[::1] v = out
        cdef int64_t i
        for i in range(self.s.jobs.n):
            v[i] = self.s.jobs.key[i]
        return out

    def job_arrays(self):
        """(state, start, end, how, reason, planned, earliest planned) per job, as numpy arrays."""
        n = self.s.jobs.n
        out = [np.empty(n, dtype=np.int64) for _ in range(4)]
        cdef int64_t[::1] a0 = out[0], a1 = out[1], a2 = out[2], a3 = out[3]
        cdef int64_t i
        for i in range(n):
            a0[i] = self.s.jobs.state[i]
            a1[i] = self.s.jobs.how[i]
            a2[i] = self.s.jobs.reason[i]
        return (out[0], self._int64_array(self.s.jobs.start, n), self._int64_array(self.s.jobs.end, n),
                out[1], out[2], self._int64_array(self.s.jobs.resv, n),
                self._int64_array(self.s.jobs.resv_min, n))

    def sim_figures(self):
        """The slurm-sim clock's main loop: ``iterations``, ``cycles``, ``cycles_yielded`` (ended by
        a yield that saw a change), ``yields``, ``main_passes``, ``main_tests``, ``main_started``,
        ``cycle_us`` and ``main_us`` (simulated time spent in each) and ``now_us``."""
        T = &self.s.sim
        return {"iterations": T.iterations, "cycles": T.cycles, "cycles_yielded": T.cycles_yielded,
                "yields": T.yields, "main_passes": T.main_passes, "main_tests": T.main_tests,
                "main_started": T.main_started, "cycle_us": T.cycle_us, "main_us": T.main_us,
                "now_us": T.now_us}

    def pass_totals(self):
        """Totals over every pass, kept whether or not passes are recorded: ``count``, ``full``,
        ``depth`` (sum), ``depth_max``, ``depth_full`` (sum over full passes), ``wall_ns`` (sum; 0
        unless passes are recorded or threads are used: the clock is read only then),
        ``charged_us_full`` (sum), ``charged_us_max``, ``reevaluations``, ``conflicts``,
        ``inversions``, ``tests_max_worker_full``, ``tests_min_worker_full`` (sums over full passes)
        and ``exit`` (passes per exit reason code)."""
        T = &self.s.totals
        return {"count": T.count, "full": T.full, "depth": T.depth, "depth_max": T.depth_max,
                "depth_full": T.depth_full, "wall_ns": int(T.wall * _ns_per_tick()),
                "charged_us_full": T.charged_full, "charged_us_max": T.charged_max,
                "reevaluations": T.reeval, "conflicts": T.conflicts, "inversions": T.inv,
                "tests_max_worker_full": T.tmax_full, "tests_min_worker_full": T.tmin_full,
                "exit": [T.exit[i] for i in range(len(LABELS["exit"]))]}

    def pass_arrays(self):
        """Per-pass records as a dict of numpy arrays (empty when passes are not recorded)."""
        cdef double tick = _ns_per_tick()
        cdef int64_t n = self.s.records.n if self.s.cfg.record_passes else 0, i
        out = {name: np.empty(n, dtype=np.int64) for name in
               ("time", "queue", "depth", "started", "reservations", "slots", "wall_ns", "model_us",
                "reevaluations", "conflicts", "tests_max_worker", "tests_min_worker", "inversions")}
        out["kind"] = np.empty(n, dtype=np.int8)
        out["exit"] = np.empty(n, dtype=np.int8)
        cdef int64_t[::1] t = out["time"], q = out["queue"], d = out["depth"], st = out["started"]
        cdef int64_t[::1] r = out["reservations"], sl = out["slots"], w = out["wall_ns"], mo = out["model_us"]
        cdef int64_t[::1] re = out["reevaluations"], co = out["conflicts"], tx = out["tests_max_worker"]
        cdef int64_t[::1] tn = out["tests_min_worker"], iv = out["inversions"]
        cdef int8_t[::1] k = out["kind"], e = out["exit"]
        cdef PassRec* p
        for i in range(n):
            p = &self.s.records.rec[i]
            t[i] = p.time
            q[i] = p.queue
            d[i] = p.depth
            st[i] = p.started
            r[i] = p.resv
            sl[i] = p.slots
            w[i] = <int64_t>(p.wall * tick)
            mo[i] = p.model_us
            re[i] = p.reeval
            co[i] = p.conflict
            tx[i] = p.tmax
            tn[i] = p.tmin
            iv[i] = p.inv
            k[i] = p.kind
            e[i] = p.exit
        return out

    def last_pass(self):
        """The last recorded pass: dict of time, queue, depth, started, reservations, slots, exit,
        kind and wall_ns (None when passes are not recorded)."""
        if self.s.records.n == 0 or not self.s.cfg.record_passes:
            return None
        cdef PassRec* r = &self.s.records.rec[self.s.records.n - 1]
        return {"time": r.time, "queue": r.queue, "depth": r.depth, "started": r.started,
                "reservations": r.resv, "slots": r.slots, "exit": LABELS["exit"][r.exit],
                "kind": LABELS["kind"][r.kind], "wall_ns": <int64_t>(r.wall * _ns_per_tick())}

    def units_of(self, int64_t j):
        """The unit bitmap of running job j (a copy)."""
        arr = np.zeros(self.s.W, dtype=np.uint64)
        cdef uint64_t[::1] v = arr
        cdef int64_t i
        if self.s.jobs.row[j] >= 0:
            for i in range(self.s.W):
                v[i] = self.s.nodes.rows[<int64_t>self.s.jobs.row[j] * self.s.W + i]
        return arr

    def recorded_units(self):
        """With the ``record_units`` testing switch: every job's units as an (njobs, W) uint64 array
        (0 if never started)."""
        if not self.s.testing.record_units:
            raise ValueError("units were not recorded: set_testing(record_units=1) before adding jobs")
        arr = np.zeros((self.s.jobs.n, self.s.W), dtype=np.uint64)
        cdef uint64_t[:, ::1] v = arr
        cdef int64_t i, w
        for i in range(self.s.jobs.n):
            for w in range(self.s.W):
                v[i, w] = self.s.jobs.bits[i * self.s.W + w]
        return arr

    def pending(self):
        """Queued job indices in priority order."""
        out = np.empty(self.s.queue.n, dtype=np.int64)
        cdef int64_t[::1] v = out
        cdef int64_t i
        for i in range(self.s.queue.n):
            v[i] = self.s.queue.entries[i].job
        return out

    def running(self):
        """Running job indices (in no particular order)."""
        return self._int64_array(self.s.nodes.running, self.s.nodes.nrun)

    # ------------------------------------------------------------------ checkpoint and rollback
    def checkpoint(self):
        """Save what applying events can change before the next pass (see :class:`Checkpoint`), so
        that a call that fails half-way can be undone by :meth:`rollback`."""
        cdef State* S = &self.s
        cdef Checkpoint cp = Checkpoint()
        cdef int64_t i, j, W = S.W
        cp.njobs = S.jobs.n
        cp.nrun = S.nodes.nrun
        cp.npend = S.queue.n
        cp.nseq = S.queue.nseq
        cp.nusers = S.users.n
        cp.nspare = S.nodes.nspare
        cp.nfree = S.nodes.nfree
        cp.version = S.nodes.version
        cp.now = S.replay.now
        cp.nfinished = S.replay.nfinished
        cp.total = S.users.total
        cp.last_calc = S.users.last_calc
        cp.keys_dirty = S.policy.keys_dirty
        cp.resume_valid = S.resume_st.valid
        cp.free = (<char*>S.nodes.free)[:W * sizeof(uint64_t)] if W else b""
        cp.down = (<char*>S.nodes.down)[:W * sizeof(uint64_t)] if W else b""
        cp.ndown = S.nodes.ndown
        cp.held_down = S.nodes.held_down
        cp.outage_counts = (S.outages.killed, S.outages.requeued, S.outages.lost, S.outages.units_lost)
        down_units = np.flatnonzero(np.unpackbits(self.down_units().view(np.uint8), bitorder="little"))
        cp.down_until = (down_units, np.array([S.nodes.until[u] for u in down_units], dtype=np.int64))
        cp.running = (<char*>S.nodes.running)[:S.nodes.nrun * sizeof(int64_t)] if S.nodes.nrun else b""
        cp.by_end = (<char*>S.nodes.by_end)[:S.nodes.nrun * sizeof(EndKey)] if S.nodes.nrun else b""
        cp.spare = (<char*>S.nodes.spare)[:S.nodes.nspare * sizeof(int32_t)] if S.nodes.nspare else b""
        cp.queue = (<char*>S.queue.entries)[:S.queue.n * sizeof(PendEntry)] if S.queue.n else b""
        cp.users_hist = (<char*>S.users.hist)[:S.users.n * sizeof(UserHist)] if S.users.n else b""
        cp.users_usage = (<char*>S.users.usage)[:S.users.n * sizeof(double)] if S.users.n else b""
        cp.users_raw = (<char*>S.users.raw)[:S.users.n * sizeof(int64_t)] if S.users.n else b""
        cp.reg = (<char*>S.policy.reg)[:sizeof(Reg)] if S.policy.reg != NULL else None
        running = self._int64_array(S.nodes.running, S.nodes.nrun)
        cp.touched = running
        cp.touched_cols = {name: self.values_of(name, running) for name in _RUNNING_COLS}
        pending = self.pending()
        cp.pending = pending
        cp.keys = np.array([S.jobs.key[j] for j in pending], dtype=np.float64)
        cp.bfkeys = np.array([S.jobs.bfkey[j] for j in pending], dtype=np.int64)
        if S.nm.on:
            cp.node_mem = (<char*>S.nm.free_mem)[:S.nm.nn * sizeof(int64_t)]
            cp.node_gpu = (<char*>S.nm.free_gpu)[:S.nm.nn * sizeof(int64_t)]
        return cp

    def rollback(self, Checkpoint cp):
        """Undo everything since ``cp`` was taken (no pass may have run since)."""
        cdef State* S = &self.s
        cdef int64_t i
        cdef const int64_t[::1] rows
        S.jobs.n = cp.njobs
        S.nodes.nrun = cp.nrun
        S.queue.n = cp.npend
        S.queue.nseq = cp.nseq
        S.users.n = cp.nusers
        S.nodes.nspare = cp.nspare
        S.nodes.nfree = cp.nfree
        S.nodes.version = cp.version
        S.replay.now = cp.now
        S.replay.nfinished = cp.nfinished
        S.users.total = cp.total
        S.users.last_calc = cp.last_calc
        S.policy.keys_dirty = cp.keys_dirty
        S.resume_st.valid = False       # (resuming is only a shortcut: a fresh pass decides the same)
        # (each copy back separately: a C pointer inside a Python tuple would become a bytes object)
        _restore(S.nodes.free, cp.free)
        _restore(S.nodes.down, cp.down)
        S.nodes.ndown = cp.ndown
        S.nodes.held_down = cp.held_down
        S.outages.killed, S.outages.requeued, S.outages.lost, S.outages.units_lost = cp.outage_counts
        for u, t in zip(*cp.down_until):
            S.nodes.until[u] = t
        _restore(S.nodes.running, cp.running)
        _restore(S.nodes.by_end, cp.by_end)
        _restore(S.nodes.spare, cp.spare)
        _restore(S.queue.entries, cp.queue)
        _restore(S.users.hist, cp.users_hist)
        _restore(S.users.usage, cp.users_usage)
        _restore(S.users.raw, cp.users_raw)
        if cp.reg is not None:
            _restore(S.policy.reg, cp.reg)
        if cp.node_mem is not None:
            _restore(S.nm.free_mem, cp.node_mem)
            _restore(S.nm.free_gpu, cp.node_gpu)
        rows = cp.touched
        for name, values in cp.touched_cols.items():
            self._set_column(name, rows, values)
        cdef const int64_t[::1] pend = cp.pending
        cdef const double[::1] keys = cp.keys
        cdef const int64_t[::1] bfkeys = cp.bfkeys
        for i in range(pend.shape[0]):
            S.jobs.key[pend[i]] = keys[i]
            S.jobs.bfkey[pend[i]] = bfkeys[i]

    cdef _set_column(self, str name, const int64_t[::1] jobs, const int64_t[::1] values):
        cdef int64_t i, j
        cdef State* S = &self.s
        for i in range(jobs.shape[0]):
            j = jobs[i]
            if name == "state": S.jobs.state[j] = <int8_t>values[i]
            elif name == "end": S.jobs.end[j] = values[i]
            elif name == "row": S.jobs.row[j] = <int32_t>values[i]
            elif name == "runpos": S.jobs.runpos[j] = values[i]
            elif name == "unext": S.jobs.unext[j] = values[i]
            elif name == "uprev": S.jobs.uprev[j] = values[i]
            elif name == "acc": S.jobs.acc[j] = values[i]
            elif name == "start": S.jobs.start[j] = values[i]
            elif name == "est": S.jobs.est[j] = values[i]
            elif name == "ncorr": S.jobs.ncorr[j] = values[i]
            elif name == "resv": S.jobs.resv[j] = values[i]
            elif name == "requeues" and S.jobs.requeues != NULL: S.jobs.requeues[j] = values[i]
            elif name == "lost" and S.jobs.lost != NULL: S.jobs.lost[j] = values[i]
            elif name == "how": S.jobs.how[j] = <int8_t>values[i]

    @property
    def submitted(self):
        """Replay: how many jobs of the trace have been submitted so far."""
        return self.s.replay.next_sub

    @property
    def now(self):
        """The current instant of the replay or of the last pass."""
        return self.s.replay.now

    @property
    def hook_waiting(self):
        """The replay stopped at an instant for the Python plugins."""
        return bool(self.s.replay.hook_waiting)

    @property
    def hook_t(self):
        """That instant."""
        return self.s.replay.hook_t

    @property
    def n_corrections(self):
        """Corrections of estimates applied so far."""
        return self.s.policy.n_corrections

    @property
    def resumed_passes(self):
        """Full passes that continued the last pass instead of running again."""
        return self.s.resume_st.count

    @property
    def free_count(self):
        """Units free now."""
        return self.s.nodes.nfree

    @property
    def n_jobs(self):
        """Jobs added."""
        return self.s.jobs.n


cdef class Checkpoint:
    """What ``Core.checkpoint`` saved: the parts of a core that applying events (submits,
    finishes, Python keys) can change before a pass. Small: it grows with the running and pending
    jobs and the users, not with every job ever added."""
    cdef int64_t njobs, nrun, npend, nseq, nusers, nspare, nfree, version, now, nfinished, ntouched
    cdef double total
    cdef int64_t last_calc
    cdef bint keys_dirty, resume_valid
    cdef object free, running, by_end, spare, queue, users_hist, users_usage, users_raw, reg
    cdef object down, outage_counts, down_until
    cdef int64_t ndown, held_down
    cdef object touched, touched_cols, pending, keys, bfkeys
    cdef object node_mem, node_gpu                 # (a node cluster's free memory and GPUs)


# the per-job fields a finish changes, for the running jobs (whose user lists it relinks too)
_RUNNING_COLS = ("state", "end", "row", "runpos", "unext", "uprev", "acc",
                 # (and what a failure that stops the job changes)
                 "start", "est", "ncorr", "how", "resv", "requeues", "lost")
