# cython: cdivision=True
"""The compiled scheduler core: the Python entry points over one engine's state.

:class:`Core` holds the state and runs the passes and the event loop; the entry points of each
other concern are a type of its own module that takes a Core and works on the same state:
:class:`pbf._nodes.NodeCluster`, :class:`pbf._outages.Outages`, :class:`pbf._estimates.StartEstimates`,
:class:`pbf._coalloc.Coalloc` and :func:`pbf._checkpoint.checkpoint` / ``rollback`` (``pbf/_core.pxd``
declares Core for them).

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
import os
import threading

from cpython cimport array
from cpython.buffer cimport PyBUF_READ
from cpython.memoryview cimport PyMemoryView_FromMemory
import array as _array

from libc.stdint cimport uint64_t, int64_t, int32_t, int8_t, uint8_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memcpy

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil

from memory cimport grow
from ticks cimport PBF_HAVE_TSC, clock_ns, now_ticks
from profile cimport prof_start_pass, prof_find_start, prof_copy
from regression cimport Reg, reg_init
from fair_tree cimport FairTree, FtFrame, FtRec, ft_free, ft_compute
from policy cimport INCREMENTS as C_INCREMENTS
from parallel cimport pool_free_copies, pool_alloc_copies
from records cimport PassRec
from sync cimport (pthread_mutex_init, pthread_mutex_destroy, pthread_mutex_lock, pthread_mutex_unlock,
                   pthread_cond_init, pthread_cond_destroy, pthread_cond_broadcast)
from state cimport State, state_init, state_free
from bf_limits cimport bfl_set
from jobs cimport jobs_reserve, jobs_clear, users_ensure
from lifecycle cimport job_submit, job_finish
from node_model cimport nm_reserve_jobs
from costate cimport coalloc_grow
from licenses cimport lic_set, lic_reserve_jobs
from qos_limits cimport ql_set, ql_set_assoc, ql_set_submit, ql_reserve_jobs, QL_N, AL_N
from pass_steps cimport ensure_scratch
from plan_units cimport build_profile
from passes cimport quick_pass
from planner cimport planner_use
from parallel_pass cimport pool_loop, pool_round_trip, split_recall, trial_judge, trial_keep_ns
from cycle cimport full_pass, replay_run
from columns cimport column_at, read_int
from pbf._codes cimport PD_REGRESSION, RC_OK, RC_NO_MEMORY, RC_SLOT_NOT_FOUND, RC_TIME_RANGE

from .codes import LABELS
from .errors import InternalError


class _Numpy:
    """numpy, imported on first use: a plain replay hands the core buffers (``array.array``) and reads
    its columns back as buffers (:meth:`Core.buffers`), and its process never imports numpy."""

    def __getattr__(self, name):
        global np
        import numpy
        np = numpy
        return getattr(numpy, name)


np = _Numpy()

cdef array.array _Q = _array.array("q")
cdef array.array _D = _array.array("d")


cdef object _contiguous(object values, bint real):
    # ``values`` as they are when they are a buffer of C-contiguous int64 (real: float64) --
    # array.array, numpy -- else numpy's copy of that type (lists, other types)
    cdef const int64_t[::1] vi
    cdef const double[::1] vd
    try:
        if real:
            vd = values
        else:
            vi = values
        return values
    except (TypeError, ValueError, BufferError):
        return np.ascontiguousarray(values, dtype=np.float64 if real else np.int64)


cdef inline object _i64(object values):
    return _contiguous(values, False)


cdef inline object _f64(object values):
    return _contiguous(values, True)

#: Tsafrir et al.'s correction increments (s), from the compiled table
INCREMENTS = tuple(C_INCREMENTS[i] for i in range(12))

# Pass wall times are read in CPU ticks and converted with this ratio, measured once per process:
# against the monotonic clock from the module's import on, so that a replay that needs the ratio
# only to read its passes out (one worker, no wall-clock budget) does not wait for it -- by then
# at least 2 ms have passed, and the longer the span the closer the figure
cdef double _NS_PER_TICK = 0.0
cdef int64_t _SINCE_NS = clock_ns()
cdef int64_t _SINCE_TICKS = now_ticks()


def calibrate():
    """Measure the CPU time-stamp counter against the monotonic clock (once per process is enough;
    it waits only for what is left of 2 ms since the module's import)."""
    global _NS_PER_TICK
    cdef int64_t c0 = _SINCE_TICKS, c1, n0 = _SINCE_NS, n1
    if not PBF_HAVE_TSC:
        _NS_PER_TICK = 1.0
        return _NS_PER_TICK
    n1 = clock_ns()
    while n1 - n0 < 2000000:
        n1 = clock_ns()
    c1 = now_ticks()
    _NS_PER_TICK = (n1 - n0) / <double>(c1 - c0) if c1 > c0 else 1.0
    return _NS_PER_TICK


def _trial_verdict(double ns_off, double tests_off, double ns_shared, double tests_shared, long retries):
    """(tests) A trial of sharing a node search with a helper thread: 1 share, 0 not, -1 run the
    trial again (its passes' wall time per test too far apart to compare), from each way's pass wall
    time (ns) and tests, and how many times in a row it ran again already."""
    return trial_judge(ns_off, tests_off, ns_shared, tests_shared, retries)


def _trial_keep(double trial_ns, bint share, double tasks, double tests_shared, int64_t idle_run=0):
    """(tests) How long a trial's verdict holds (pass wall time, ns), from the trial's length (ns),
    its verdict, the searches offered to the helper and tests in its shared passes, and how many
    verdicts against sharing from such idle passes came just before it."""
    return trial_keep_ns(trial_ns, share, tasks, tests_shared, idle_run)


cdef double ns_per_tick():
    if _NS_PER_TICK == 0.0:
        calibrate()
    return _NS_PER_TICK


cdef object int64_array(const int64_t* src, int64_t n):
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] v = out
    cdef int64_t i
    for i in range(n):
        v[i] = src[i]
    return out


cdef raise_status(int rc, str where):
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
    "mf_w_fs", "mf_w_js", "mf_w_part", "mf_w_qos", "mf_max_age", "mf_half_life", "mf_favor_small", "mf_fs_damp",
    "mf_js_relative", "mf_js_nodes", "mf_js_cpus",
    "sim_yield_us", "sim_step_us", "sim_sched_delay", "sim_sched_interval", "sim_queue_depth", "sim_phase_us",
    "sim_end_main", "sim_late_below",
    "sim_max_sched_us", "sim_cost_main_us", "sim_cost_queue_us",
    "bf_max_user", "bf_max_user_part", "bf_max_part", "bf_max_start", "bf_min_prio", "bf_min_age",  # (bf_limits.pxd)
    "bf_part_resv", "bf_one_resv", "ss_marks", "ss_phase"))                                         # (slurm_space.pxd)
_BF_KEYS = frozenset(("bf_max_user", "bf_max_user_part", "bf_max_part", "bf_max_start", "bf_min_prio", "bf_min_age",
                      "bf_part_resv"))
_TESTING_KEYS = frozenset(("record_units", "stale_speculation", "resume", "repeat", "parallel_min_queue",
                           "parallel", "block_slots", "split_min_nodes",
                           "split_wait", "split_trial_us", "keep_windows"))
#: ns per byte of a large memcpy, measured by the first pool started in this process

cdef State _probe       # (only its fields' addresses are read: the offsets of the columns)


cdef Py_ssize_t _at(void* field):
    return <char*>field - <char*>&_probe


#: the per-job columns of the Jobs struct by name: (offset of the column's pointer in State, bytes
#: per item, floating point); what Core.values_of reads and a checkpoint saves of the jobs it names
JOB_COLUMNS = {
    "submit": (_at(&_probe.jobs.submit), sizeof(_probe.jobs.submit[0]), False),
    "units": (_at(&_probe.jobs.units), sizeof(_probe.jobs.units[0]), False),
    "est": (_at(&_probe.jobs.est), sizeof(_probe.jobs.est[0]), False),
    "run": (_at(&_probe.jobs.run), sizeof(_probe.jobs.run[0]), False),
    "req": (_at(&_probe.jobs.req), sizeof(_probe.jobs.req[0]), False),
    "user": (_at(&_probe.jobs.user), sizeof(_probe.jobs.user[0]), False),
    "part": (_at(&_probe.jobs.part), sizeof(_probe.jobs.part[0]), True),
    "qos": (_at(&_probe.jobs.qos), sizeof(_probe.jobs.qos[0]), True),
    "start": (_at(&_probe.jobs.start), sizeof(_probe.jobs.start[0]), False),
    "end": (_at(&_probe.jobs.end), sizeof(_probe.jobs.end[0]), False),
    "resv": (_at(&_probe.jobs.resv), sizeof(_probe.jobs.resv[0]), False),
    "resv_min": (_at(&_probe.jobs.resv_min), sizeof(_probe.jobs.resv_min[0]), False),
    "seq": (_at(&_probe.jobs.seq), sizeof(_probe.jobs.seq[0]), False),
    "pred0": (_at(&_probe.jobs.pred0), sizeof(_probe.jobs.pred0[0]), False),
    "ncorr": (_at(&_probe.jobs.ncorr), sizeof(_probe.jobs.ncorr[0]), False),
    "requeues": (_at(&_probe.jobs.requeues), sizeof(_probe.jobs.requeues[0]), False),
    "lost": (_at(&_probe.jobs.lost), sizeof(_probe.jobs.lost[0]), False),
    "bfkey": (_at(&_probe.jobs.bfkey), sizeof(_probe.jobs.bfkey[0]), False),
    "acc": (_at(&_probe.jobs.acc), sizeof(_probe.jobs.acc[0]), False),
    "unext": (_at(&_probe.jobs.unext), sizeof(_probe.jobs.unext[0]), False),
    "uprev": (_at(&_probe.jobs.uprev), sizeof(_probe.jobs.uprev[0]), False),
    "key": (_at(&_probe.jobs.key), sizeof(_probe.jobs.key[0]), True),
    "runpos": (_at(&_probe.jobs.runpos), sizeof(_probe.jobs.runpos[0]), False),
    "row": (_at(&_probe.jobs.row), sizeof(_probe.jobs.row[0]), False),
    "state": (_at(&_probe.jobs.state), sizeof(_probe.jobs.state[0]), False),
    "how": (_at(&_probe.jobs.how), sizeof(_probe.jobs.how[0]), False),
    "reason": (_at(&_probe.jobs.reason), sizeof(_probe.jobs.reason[0]), False),
}


cdef inline int grow_job_tables(State* S) noexcept nogil:
    # the per-job tables of what is switched on (co-allocation, nodes, licenses, QOS limits) made as
    # long as the job table: one place for every way jobs are added
    if S.co.on and coalloc_grow(&S.co, S.jobs.cap) != RC_OK:
        return RC_NO_MEMORY
    if S.nm.on and nm_reserve_jobs(&S.nm, S.jobs.cap) != RC_OK:
        return RC_NO_MEMORY
    if S.lic.on and lic_reserve_jobs(&S.lic, S.jobs.cap) != RC_OK:
        return RC_NO_MEMORY
    if S.qos_lim.on and ql_reserve_jobs(&S.qos_lim, S.jobs.cap) != RC_OK:
        return RC_NO_MEMORY
    return RC_OK


cdef class Core:
    """One engine's state and the compiled cycle. Internal: see the module docstring."""

    def __cinit__(self, int64_t units):
        if state_init(&self.s, units) != RC_OK:
            state_free(&self.s)
            raise MemoryError("pbf core: out of memory (a new core)")
        self.s.clock.ns_per_tick = _NS_PER_TICK
        planner_use(&self.s)

    cdef void use_planner(self):
        # the planner for the cluster as now set (units; nodes; Slurm's search on nodes)
        planner_use(&self.s)

    @property
    def planner(self):
        """The planner a pass asks for its plan and job tests (``ext/planner.pxd``): ``"units"``
        (interchangeable units), ``"nodes"`` (nodes with memory, GPUs and features, pbf's exact
        plan) or ``"slurm"`` (Slurm's backfill on those nodes)."""
        return ("units", "nodes", "slurm")[self.s.plan.kind]

    def __dealloc__(self):
        if self.s.pool.sync_ready:
            pthread_mutex_destroy(&self.s.pool.commit_mu)
            pthread_mutex_destroy(&self.s.pool.mu)
            pthread_cond_destroy(&self.s.pool.work)
            pthread_cond_destroy(&self.s.pool.done)
            pthread_cond_destroy(&self.s.pool.progress)
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
            elif name == "mf_fs_damp": S.policy.fs_damp = value
            elif name == "mf_js_relative": S.policy.js_relative = value
            elif name == "mf_js_nodes": S.policy.js_nodes = value
            elif name == "mf_js_cpus": S.policy.js_cpus = value
            elif name == "sim_yield_us": S.sim.yield_us = value
            elif name == "sim_step_us": S.sim.step_us = value
            elif name == "sim_sched_delay": S.sim.sched_delay = value
            elif name == "sim_sched_interval": S.sim.sched_interval = value
            elif name == "sim_queue_depth": S.sim.queue_depth = value
            elif name == "sim_max_sched_us": S.sim.max_sched_us = value
            elif name == "sim_cost_main_us": S.sim.cost_main_us = value
            elif name == "sim_cost_queue_us": S.sim.cost_queue_us = value
            elif name == "sim_phase_us": S.sim.phase_us = value
            elif name == "sim_end_main": S.sim.end_main = value
            elif name == "sim_late_below": S.sim.late_below = value
            elif name == "ss_marks": S.ss.marks = value
            elif name == "ss_phase": S.ss.phase = value
            elif name == "bf_one_resv": S.ss.lim.one_resv = value
        if _BF_KEYS & set(settings):
            bfl_set(&S.ss.lim, settings.get("bf_max_user", S.ss.lim.per_user),
                    settings.get("bf_max_user_part", S.ss.lim.per_user_part),
                    settings.get("bf_max_part", S.ss.lim.per_part), settings.get("bf_max_start", S.ss.lim.max_start),
                    settings.get("bf_min_prio", S.ss.lim.min_prio), settings.get("bf_min_age", S.ss.lim.min_age),
                    settings.get("bf_part_resv", S.ss.lim.part_resv))

    def set_tiers(self, int64_t first, tiers):
        """The PriorityTier of jobs first, first+1, ... (added, not yet submitted): the queue runs a higher
        tier first, then by the priority key (Slurm's sort_job_queue2, for the main scheduler and backfill)."""
        cdef const int64_t[::1] t = np.ascontiguousarray(tiers, dtype=np.int64)
        cdef int64_t n = t.shape[0], i
        cdef State* S = &self.s
        if first < 0 or first + n > S.jobs.n:
            raise ValueError("tiers: jobs out of range")
        if S.jobs.tier == NULL:
            S.jobs.tier = <int64_t*>calloc(S.jobs.cap if S.jobs.cap > 0 else 1, sizeof(int64_t))
            if S.jobs.tier == NULL:
                raise MemoryError()
        for i in range(n):
            S.jobs.tier[first + i] = t[i]

    def set_testing(self, **switches):
        """Switches for tests and benchmarks (no decision changes): ``record_units`` (keep every
        started job's units; set before adding jobs), ``stale_speculation`` (parallel workers
        speculate on a snapshot of the profile taken at the pass start, so that nearly every commit
        reconciles, with counts that do not depend on thread timing; set before ``start_pool``),
        ``resume`` (0: never continue the last pass), ``repeat`` (0: a replay's interval trigger
        runs every full pass due, never taking one as a repeat of the last), ``parallel_min_queue`` (passes with fewer
        queued jobs run sequentially), ``parallel`` (with a pool: 1 every full pass on it, -1 none,
        0 the default: those whose predicted cost says the threads save time, see
        :meth:`pbf._pass_cost.PassCostPredictor.predict`),
        ``block_slots`` (slots per block of the profile: small values exercise the block paths),
        ``split_min_nodes`` (with a pool, a sequential pass on nodes shares each search over at
        least this many eligible nodes with a helper thread; 0: never; default 64), ``split_wait``
        (1: each shared search waits for the helper to do its part, so that the helper's path
        is always taken), ``split_trial_us`` (the pass wall time each way of a trial of passes
        with and without sharing that finds whether sharing pays, in µs; 0: share every search
        the passes can, without trials; default 100,000), ``keep_windows`` (0: every search on
        nodes finds every eligible node's window and moves each with its candidates, as before
        these shortcuts: none takes over the last search's windows or skips a node whose window
        holds a point where it gives the job nothing; default 1)."""
        unknown = set(switches) - _TESTING_KEYS
        if unknown:
            raise ValueError(f"unknown testing switches: {', '.join(sorted(unknown))}")
        cdef State* S = &self.s
        for name, value in switches.items():
            if name == "record_units": S.testing.record_units = value
            elif name == "stale_speculation": S.testing.stale_speculation = value
            elif name == "resume": S.testing.resume = value
            elif name == "repeat": S.testing.repeat = value
            elif name == "parallel_min_queue": S.testing.parallel_min_queue = value
            elif name == "parallel":
                if value not in (-1, 0, 1):
                    raise ValueError(f"parallel must be -1 (never), 0 (predicted) or 1 (always), got {value}")
                S.testing.parallel = value
            elif name == "split_min_nodes":
                if value < 0:
                    raise ValueError(f"split_min_nodes must be >= 0, got {value}")
                S.testing.split_min_nodes = value
            elif name == "split_wait": S.testing.split_wait = value
            elif name == "keep_windows":
                S.nm.w_never = not value
                S.nm.w_ok = False
            elif name == "split_trial_us":
                if value < 0:
                    raise ValueError(f"split_trial_us must be >= 0, got {value}")
                S.testing.split_trial_ns = value * 1000
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

    def set_associations(self, parent, shares_norm, is_user, user_of, int64_t user_assocs):
        """Multifactor fair share by Fair Tree over this association tree (``pbf.fairshare``:
        :meth:`Associations.arrays`); ``None`` for ``parent`` goes back to classic fair share.
        Validated here; on an error nothing changes."""
        cdef FairTree* T
        cdef int64_t n, i, k, p
        if parent is None:
            ft_free(self.s.policy.ft)
            self.s.policy.ft = NULL
            return
        par = np.ascontiguousarray(parent, dtype=np.int64)
        sn = np.ascontiguousarray(shares_norm, dtype=np.float64)
        iu = np.ascontiguousarray(is_user, dtype=np.int8)
        uo = np.ascontiguousarray(user_of, dtype=np.int64)
        n = par.shape[0]
        if n < 1 or sn.shape[0] != n or iu.shape[0] != n or par[0] != -1 or iu[0]:
            raise ValueError("associations: parent, shares_norm and is_user need the same length >= 1, "
                             "the root (parent -1, an account) first")
        for i in range(1, n):
            if not 0 <= par[i] < i or iu[par[i]]:
                raise ValueError(f"associations: association {i} has parent {par[i]}: a parent must be an "
                                 "account that comes before it")
        for k in range(uo.shape[0]):
            if not 0 <= uo[k] < n or not iu[uo[k]]:
                raise ValueError(f"associations: trace user {k} maps to {uo[k]}, not a user association")
        if user_assocs != int(iu.sum()) or user_assocs < 1:
            raise ValueError(f"associations: user_assocs={user_assocs}, but the tree has {int(iu.sum())}")
        T = <FairTree*>calloc(1, sizeof(FairTree))
        if T == NULL:
            raise MemoryError("pbf core: out of memory (the association tree)")
        T.n, T.user_assocs, T.n_map = n, user_assocs, uo.shape[0]
        T.parent = <int64_t*>malloc(n * sizeof(int64_t))
        T.shares_norm = <double*>malloc(n * sizeof(double))
        T.is_user = <int8_t*>malloc(n * sizeof(int8_t))
        T.child_start = <int64_t*>calloc(n + 1, sizeof(int64_t))
        T.child = <int64_t*>malloc(n * sizeof(int64_t))
        T.user_of = <int64_t*>malloc((T.n_map if T.n_map > 0 else 1) * sizeof(int64_t))
        T.usage = <double*>malloc(n * sizeof(double))
        T.factor = <double*>calloc(n, sizeof(double))
        T.rec = <FtRec*>malloc(n * sizeof(FtRec))
        T.frame = <FtFrame*>malloc(n * sizeof(FtFrame))
        if (T.parent == NULL or T.shares_norm == NULL or T.is_user == NULL or T.child_start == NULL
                or T.child == NULL or T.user_of == NULL or T.usage == NULL or T.factor == NULL or T.rec == NULL
                or T.frame == NULL):
            ft_free(T)
            raise MemoryError("pbf core: out of memory (the association tree)")
        for i in range(n):
            T.parent[i] = par[i]
            T.shares_norm[i] = sn[i]
            T.is_user[i] = iu[i]
        for i in range(1, n):                      # children in index order, as the oracle lists them
            T.child_start[par[i] + 1] += 1
        for i in range(n):
            T.child_start[i + 1] += T.child_start[i]
        fill = np.zeros(n, dtype=np.int64)
        for i in range(1, n):
            p = par[i]
            T.child[T.child_start[p] + fill[p]] = i
            fill[p] += 1
        for k in range(T.n_map):
            T.user_of[k] = uo[k]
        ft_free(self.s.policy.ft)
        self.s.policy.ft = T

    def fair_share_factors(self, usage):
        """Fair Tree's factor of each user given ``usage`` (decayed usage per dense user), over the tree
        of :meth:`set_associations` (a cross-check of the compiled algorithm; the core's own state is
        not touched)."""
        if self.s.policy.ft == NULL:
            raise ValueError("no association tree: call set_associations first")
        cdef const double[::1] u = np.ascontiguousarray(usage, dtype=np.float64)
        out = np.ones(u.shape[0], dtype=np.float64)
        cdef double[::1] o = out
        if u.shape[0]:
            with nogil:
                ft_compute(self.s.policy.ft, &u[0], u.shape[0], &o[0])
        return out

    # ------------------------------------------------------------------ jobs
    def add_jobs(self, submit, units, est, run, req=None, user=None, part=None, qos=None):
        """Append jobs (not yet submitted); returns the index of the first. Inputs are validated by
        the caller: same lengths, submit times non-decreasing after the last job's. ``est``: the
        estimate (used as given with the ``PD_GIVEN`` predictor); ``req``: requested times (default
        ``est``); ``user``: dense user indices >= 0 (default 0); ``part``, ``qos``: multifactor
        factors in [0, 1] (default 1 and 0)."""
        # (buffers of int64 and float64 are read as they are: a plain replay's are array.array)
        cdef const int64_t[::1] vs = _i64(submit)
        cdef const int64_t[::1] vu = _i64(units)
        cdef const int64_t[::1] ve = _i64(est)
        cdef const int64_t[::1] vr = _i64(run)
        cdef int64_t n = vs.shape[0], first = self.s.jobs.n, i, j, top = -1, W = self.s.W
        cdef const int64_t[::1] vq = ve if req is None else _i64(req)
        cdef const int64_t[::1] vw
        cdef const double[::1] vp
        cdef const double[::1] vo
        cdef bint has_user = user is not None, has_part = part is not None, has_qos = qos is not None
        if has_user:
            vw = _i64(user)
        if has_part:
            vp = _f64(part)
        if has_qos:
            vo = _f64(qos)
        if (vu.shape[0] != n or ve.shape[0] != n or vr.shape[0] != n or vq.shape[0] != n
                or (has_user and vw.shape[0] != n) or (has_part and vp.shape[0] != n)
                or (has_qos and vo.shape[0] != n)):
            raise ValueError("add_jobs: the columns differ in length")
        cdef State* S = &self.s
        if has_user:
            for i in range(n):
                if vw[i] > top:
                    top = vw[i]
        else:
            top = 0 if n else -1
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
            S.jobs.user[j] = vw[i] if has_user else 0
            S.jobs.part[j] = vp[i] if has_part else 1.0
            S.jobs.qos[j] = vo[i] if has_qos else 0.0
        jobs_clear(&S.jobs, first, n)
        if S.testing.record_units:
            memset(S.jobs.bits + first * W, 0, n * W * sizeof(uint64_t))
        if grow_job_tables(S) != RC_OK:
            raise MemoryError("pbf core: out of memory (adding jobs)")
        S.jobs.n = first + n
        return first

    def submit(self, int64_t j):
        """Submit job j now (queued, or rejected with a reason); returns its state code."""
        cdef int rc = job_submit(&self.s, j)
        if rc != RC_OK:
            raise_status(rc, "submit")
        return int(self.s.jobs.state[j])

    def submit_range(self, int64_t first, int64_t n):
        """Submit jobs first .. first+n-1 (benchmark and scenario set-up)."""
        cdef int64_t j
        cdef int rc
        for j in range(first, first + n):
            rc = job_submit(&self.s, j)
            if rc != RC_OK:
                raise_status(rc, "submit")

    def finish(self, int64_t j, int64_t now):
        """Running job j ended at now (validated by the caller)."""
        job_finish(&self.s, j, now)

    def set_licenses(self, const int64_t[::1] totals):
        """The cluster's licenses (``licenses.pxd``): ``totals[i]`` of kind i, each >= 0 (checked by the
        caller). Set once, before any job is submitted."""
        if self.s.lic.n or totals.shape[0] == 0:
            raise RuntimeError("pbf core: licenses are set once, at least one kind")
        if self.s.replay.next_sub or self.s.queue.n or self.s.nodes.nrun:
            raise RuntimeError("pbf core: licenses are set before any job is submitted")
        if (lic_set(&self.s.lic, totals.shape[0], &totals[0]) != RC_OK
                or lic_reserve_jobs(&self.s.lic, max(self.s.jobs.cap, 1)) != RC_OK):
            raise MemoryError("pbf core: out of memory (licenses)")

    def set_qos_limits(self, const int64_t[:, ::1] limits, int64_t users):
        """QOS limits on running jobs (``qos_limits.pxd``): one row a QOS, (MaxJobsPU, MaxTRESPU cpu,
        GrpJobs, GrpTRES cpu), 0 none, each >= 0 (checked by the caller), counted per user for users
        0 .. ``users`` - 1. Set once, before any job is submitted."""
        if self.s.qos_lim.nq or limits.shape[0] == 0 or limits.shape[1] != QL_N or users < 0:
            raise RuntimeError(f"pbf core: QOS limits are set once: rows of {QL_N} limits, at least one")
        if self.s.replay.next_sub or self.s.queue.n or self.s.nodes.nrun:
            raise RuntimeError("pbf core: QOS limits are set before any job is submitted")
        if (ql_set(&self.s.qos_lim, limits.shape[0], users, &limits[0, 0]) != RC_OK
                or ql_reserve_jobs(&self.s.qos_lim, max(self.s.jobs.cap, 1)) != RC_OK):
            raise MemoryError("pbf core: out of memory (QOS limits)")

    def set_job_qos(self, int64_t first, const int64_t[::1] qos):
        """The QOS of jobs first, first+1, ... (added, not yet submitted): a row of the limits, or -1."""
        cdef int64_t i, n = qos.shape[0]
        if not self.s.qos_lim.on:
            raise ValueError("pbf core: set the QOS limits first")
        if first < 0 or first + n > self.s.jobs.n:
            raise ValueError("pbf core: QOS of jobs not added")
        for i in range(n):
            if not -1 <= qos[i] < self.s.qos_lim.nq:
                raise ValueError(f"pbf core: QOS row {qos[i]} of job {first + i}: the limits have {self.s.qos_lim.nq}")
        for i in range(n):
            self.s.qos_lim.qos_of[first + i] = <int32_t>qos[i]

    def qos_limit_figures(self):
        """Job tests passed over because a QOS limit held the job."""
        return {"held": int(self.s.qos_lim.held)}

    def set_assoc_limits(self, const int64_t[:, ::1] limits, const int32_t[::1] parent):
        """Association limits on running jobs (``qos_limits.pxd``): one row an association, (MaxJobs,
        GrpJobs, GrpTRES cpu), 0 none, each >= 0, and its parent row (-1: none; checked by the caller:
        a tree). Set once, before any job is submitted."""
        cdef Py_ssize_t i
        if self.s.qos_lim.na or limits.shape[0] == 0 or limits.shape[1] != AL_N or parent.shape[0] != limits.shape[0]:
            raise RuntimeError(f"pbf core: association limits are set once: rows of {AL_N} limits and a parent each")
        if self.s.replay.next_sub or self.s.queue.n or self.s.nodes.nrun:
            raise RuntimeError("pbf core: association limits are set before any job is submitted")
        for i in range(parent.shape[0]):
            if not -1 <= parent[i] < parent.shape[0]:
                raise ValueError(f"pbf core: association {i}: parent row {parent[i]}")
        if (ql_set_assoc(&self.s.qos_lim, limits.shape[0], &limits[0, 0], &parent[0]) != RC_OK
                or ql_reserve_jobs(&self.s.qos_lim, max(self.s.jobs.cap, 1)) != RC_OK):
            raise MemoryError("pbf core: out of memory (association limits)")

    def set_job_assoc(self, int64_t first, const int64_t[::1] assoc, const uint8_t[::1] never):
        """The user association of jobs first, first+1, ... (added, not yet submitted): a row of the
        association limits or -1; ``never``: 1 for a job refused at submission (a limit it alone exceeds)."""
        cdef int64_t i, n = assoc.shape[0]
        if not self.s.qos_lim.on or never.shape[0] != n:
            raise ValueError("pbf core: set the QOS or association limits first; one refusal flag a job")
        if first < 0 or first + n > self.s.jobs.n:
            raise ValueError("pbf core: associations of jobs not added")
        for i in range(n):
            if not -1 <= assoc[i] < self.s.qos_lim.na:
                raise ValueError(f"pbf core: association row {assoc[i]} of job {first + i}: the limits have "
                                 f"{self.s.qos_lim.na}")
        for i in range(n):
            self.s.qos_lim.assoc_of[first + i] = <int32_t>assoc[i]
            self.s.qos_lim.never_of[first + i] = never[i]

    def set_submit_limits(self, const int64_t[::1] qos, const int64_t[:, ::1] assoc):
        """Submission limits (``qos_limits.pxd``): each QOS row's MaxSubmitPU and each association
        row's (MaxSubmitJobs, GrpSubmitJobs), 0 none, each >= 0 (checked by the caller). Set once,
        after the QOS and association limits, before any job is submitted."""
        if (self.s.qos_lim.sub_on or qos.shape[0] != self.s.qos_lim.nq or assoc.shape[0] != self.s.qos_lim.na
                or assoc.shape[1] != 2 or not self.s.qos_lim.on):
            raise RuntimeError("pbf core: submission limits are set once, after the limits they go with: one a "
                               "QOS row, two an association row")
        if self.s.replay.next_sub or self.s.queue.n or self.s.nodes.nrun:
            raise RuntimeError("pbf core: submission limits are set before any job is submitted")
        if ql_set_submit(&self.s.qos_lim, &qos[0] if qos.shape[0] else NULL,
                         &assoc[0, 0] if assoc.shape[0] else NULL) != RC_OK:
            raise MemoryError("pbf core: out of memory (submission limits)")

    def limit_reasons(self):
        """Each job's limit that last held it before it started, or refused it (``qos_limits.pxd`` LR_*
        codes; :data:`pbf.associations.LIMIT_REASONS` names them), as a uint8 array; all 0 without limits."""
        out = np.zeros(self.s.jobs.n, dtype=np.uint8)
        cdef uint8_t[::1] o = out
        cdef int64_t i
        if self.s.qos_lim.on:
            for i in range(min(self.s.jobs.n, self.s.qos_lim.cap)):
                o[i] = self.s.qos_lim.why_of[i]
        return out

    def assoc_limit_figures(self):
        """Job tests passed over because an association limit held the job; jobs refused at submission
        for a submission limit, by Slurm's reason."""
        cdef const int64_t* r = self.s.qos_lim.refused_sub
        return {"held": int(self.s.qos_lim.held_assoc),
                "refused_submit": {"QOSMaxSubmitJobPerUserLimit": int(r[0]), "AssocMaxSubmitJobLimit": int(r[1]),
                                   "AssocGrpSubmitJobsLimit": int(r[2])}}

    def set_job_licenses(self, int64_t first, const int64_t[:, ::1] asked):
        """What jobs first, first+1, ... (added, not yet submitted) ask of each license kind: one row a
        job, one column a kind (checked by the caller: counts >= 0)."""
        cdef int64_t i, k, n = asked.shape[0], m = self.s.lic.n
        if not self.s.lic.on or asked.shape[1] != m:
            raise ValueError(f"pbf core: {asked.shape[1]} license kinds given, the cluster has {m}")
        if first < 0 or first + n > self.s.jobs.n:
            raise ValueError("pbf core: license requests of jobs not added")
        for i in range(n):
            for k in range(m):
                self.s.lic.req[(first + i) * m + k] = asked[i, k]

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
            raise_status(rc, "a pass")
        return (int64_array(self.s.decided.started, self.s.decided.nstarted),
                int64_array(self.s.decided.reserved, self.s.decided.nreserved))

    def replay(self, int64_t max_instants=-1):
        """Run the event loop for at most ``max_instants`` instants (-1: to the end; with the
        slurm-sim clock, main-loop iterations that do something). Returns True when the trace is
        done."""
        cdef int rc = 0
        cdef bint done = False
        with nogil:
            rc = replay_run(&self.s, max_instants, &done)
        if rc != RC_OK:
            raise_status(rc, "the replay")
        return done

    def profile_ops(self, int64_t now, const int64_t[::1] units, const int64_t[::1] est, int64_t reps,
                    bint copies=True):
        """Benchmark: ``reps`` times, build the profile at ``now`` and find the earliest start
        of every (units, est) pair (no placement). Returns (slots, sum of the starts found) of the
        last round, so a caller can check the work was done. With a worker pool and ``copies``,
        the workers' copies of the profile are made too, so that their memory is in use as a
        replay's earlier parallel passes leave it (a replay whose passes stay on one thread never
        makes them: ``copies=False``)."""
        cdef int64_t r, i, n = units.shape[0], total = 0, t
        cdef bint copy = copies and self.s.cfg.workers > 1
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
            for i in range(1, self.s.pool.nprof if copy else 0):
                if rc == RC_OK:
                    rc = prof_copy(&self.s.pool.prof[i], &self.s.prof)
            if rc == RC_OK and copy and self.s.pool.nprof > 1:
                # the pass's own profile built last, as a replay's last pass leaves it (the copies
                # would otherwise have pushed it out of the caches before a pass that stays on one thread)
                prof_start_pass(&self.s.prof, self.s.cfg.bf_window, self.s.cfg.bf_resolution)
                rc = build_profile(&self.s, now)
        if rc != RC_OK:
            raise_status(rc, "profile_ops")
        return self.s.prof.nslots, total

    # ------------------------------------------------------------------ the worker pool
    def start_pool(self, int workers, int threads=1):
        """Start ``workers - 1`` threads (the caller is worker 0); passes with at least
        ``parallel_min_queue`` queued jobs then run in parallel, with the same decisions.
        ``threads``: on the slurm-sim clock, whose ``workers`` are modelled, the real threads for a
        backfill cycle's tests (2 or more: a helper thread tests Slurm's later starts ahead, with the
        same decisions; a cycle uses one helper); the pool has ``max(workers, threads) - 1`` threads."""
        cdef int64_t i, n
        cdef State* S = &self.s
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        n = max(workers, min(threads, 2))
        if n > 1:               # (one worker reads the ratio only in its passes' read-out: see calibrate)
            S.clock.ns_per_tick = ns_per_tick()
        self.stop_pool()
        pool_free_copies(&S.pool)
        S.cfg.workers = workers
        S.sim.threads = threads
        if n == 1:
            return
        if workers > 1 and pool_alloc_copies(&S.pool, workers, S.W, S.testing.stale_speculation) != RC_OK:
            S.cfg.workers = 1
            raise MemoryError("pbf core: out of memory (worker pool)")
        if not S.pool.sync_ready:
            pthread_mutex_init(&S.pool.commit_mu, NULL)
            pthread_mutex_init(&S.pool.mu, NULL)
            pthread_cond_init(&S.pool.work, NULL)
            pthread_cond_init(&S.pool.done, NULL)
            pthread_cond_init(&S.pool.progress, NULL)
            S.pool.sync_ready = True
        S.pool.shutdown = 0
        self._threads = [threading.Thread(target=self._pool_thread, args=(wid, S.pool.gen),
                                          daemon=True, name=f"pbf-worker-{wid}")
                         for wid in range(1, n)]
        for th in self._threads:
            th.start()
        S.pool.threads = n - 1
        self._measure_parallel_overhead()

    def _measure_parallel_overhead(self):
        # what going parallel costs a pass (pass_cost.pxd): the pool's wake-up round trip (the
        # median of a few, after the threads' first)
        cdef State* S = &self.s
        cdef double ns = S.clock.ns_per_tick if PBF_HAVE_TSC else 1.0
        cdef int64_t i, t0
        with nogil:
            pool_round_trip(S)
        trips = []
        for i in range(9):
            with nogil:
                t0 = pool_round_trip(S)
            trips.append(t0 * ns)
        trips.sort()
        S.cost.wake_ns = trips[len(trips) // 2]
        # (the copy rate is measured when a pass first could pay: pass_cost.pxd pc_ensure_copy_rate)
        S.cost.ns_per_tick = ns
        try:
            S.cost.cores = len(os.sched_getaffinity(0))
        except AttributeError:         # (not on every platform)
            S.cost.cores = os.cpu_count() or 1

    def _pool_thread(self, int64_t wid, int64_t gen):
        with nogil:
            pool_loop(&self.s, wid, gen)

    def stop_pool(self):
        """Stop the worker threads (idempotent)."""
        if not self._threads:
            return
        with nogil:
            split_recall(&self.s)
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
        self.s.clock.ns_per_tick = ns_per_tick()

    def search_helper_stats(self):
        """``(shared, helped, backoffs, trials, trials_shared)``: node searches whose set-up was
        offered to the helper thread so far, those the helper took part in, the times the passes
        stopped sharing because the host had no CPU to spare, the trials of passes with and
        without sharing, and those that sharing won (docs/engine.md, "Threads on nodes")."""
        return (self.s.split.tasks, self.s.split.helped, self.s.split.backoffs, self.s.split.trials,
                self.s.split.trials_shared)

    def _search_helper_ticks(self):
        """(diagnostic) Where the shared will-run tests' time went so far, in ns and counts: this
        thread posting, its own tests while the helper had one, its waits for the helper's answer
        (needed; not needed, the helper told to stop) and the helper's tests."""
        cdef double ns = ns_per_tick() if PBF_HAVE_TSC else 1.0
        return {"post_ns": self.s.split.tk_post * ns, "own_ns": self.s.split.tk_own * ns, "own": self.s.split.n_own,
                "wait_ns": self.s.split.tk_wait * ns, "wait": self.s.split.n_wait,
                "wait_unneeded_ns": self.s.split.tk_wait_unneeded * ns, "wait_unneeded": self.s.split.n_wait_unneeded,
                "help_ns": self.s.split.tk_help * ns, "help": self.s.split.n_help,
                "jobs_ns": self.s.split.tk_jobs * ns, "jobs": self.s.split.n_jobs,
                "take_over_ns": self.s.split.tk_take * ns, "take_over": self.s.split.n_take}

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
        out = int64_array(self.s.replay.finished, self.s.replay.nfinished)
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
        return self.columns("pred0", "est", "ncorr", "req")

    def columns(self, *names):
        """Whole columns of the job table (see :meth:`values_of`), one array each."""
        rows = np.arange(self.s.jobs.n, dtype=np.int64)
        return tuple(self.values_of(name, rows) for name in names)

    def values_of(self, str column, const int64_t[::1] jobs):
        """One column of the given jobs (a name of :data:`JOB_COLUMNS`: ``est``, ``start``, ``end``,
        ``state``, ``key``...) as int64, or float64 for ``part``, ``qos`` and ``key``."""
        if column not in JOB_COLUMNS:
            raise ValueError(f"no job column {column!r}")
        at, size, real = JOB_COLUMNS[column]
        cdef const char* src = column_at(&self.s, at)
        cdef int64_t i
        out = np.zeros(jobs.shape[0], dtype=np.float64 if real else np.int64)
        cdef int64_t[::1] vi
        cdef double[::1] vf
        if src == NULL:
            return out                     # (a column made on first use: requeues, lost)
        if real:
            vf = out
            for i in range(jobs.shape[0]):
                vf[i] = (<const double*>src)[jobs[i]]
        else:
            vi = out
            for i in range(jobs.shape[0]):
                vi[i] = read_int(src, size, jobs[i])
        return out

    def buffers(self, *names):
        """Whole columns of the job table as ``array.array`` (``'q'``, or ``'d'`` for ``part``, ``qos``
        and ``key``): :meth:`columns` without numpy."""
        out = []
        cdef int64_t i, n = self.s.jobs.n
        cdef const char* src
        cdef array.array col
        for column in names:
            if column not in JOB_COLUMNS:
                raise ValueError(f"no job column {column!r}")
            at, size, real = JOB_COLUMNS[column]
            src = column_at(&self.s, at)
            col = array.clone(_D if real else _Q, n, True)
            if src != NULL:
                if real:
                    memcpy(col.data.as_voidptr, src, n * sizeof(double))
                else:
                    for i in range(n):
                        (<int64_t*>col.data.as_voidptr)[i] = read_int(src, size, i)
            out.append(col)
        return tuple(out)

    def _view(self, str column):
        """Column ``column`` of every job over the core's own memory, read-only and without a copy: a
        memoryview of int8, int32 or int64 (``'b'``, ``'i'``, ``'q'``) or float64 (``'d'``); None for a
        column not made (``requeues``, ``lost``). It does not hold the core: use it while the core lives
        (a replay's figures, :func:`pbf._table.schedule_figures`)."""
        if column not in JOB_COLUMNS:
            raise ValueError(f"no job column {column!r}")
        at, size, real = JOB_COLUMNS[column]
        cdef char* src = column_at(&self.s, at)
        if src == NULL:
            return None
        cdef Py_ssize_t nbytes = self.s.jobs.n * <Py_ssize_t>size
        view = PyMemoryView_FromMemory(src, nbytes, PyBUF_READ)
        return view.cast("d" if real else {1: "b", 4: "i", 8: "q"}[size])

    def keys(self):
        """The priority key of every job (as last computed)."""
        return self.columns("key")[0]

    def job_arrays(self):
        """(state, start, end, how, reason, planned, earliest planned) per job, as numpy arrays."""
        return self.columns("state", "start", "end", "how", "reason", "resv", "resv_min")

    def sim_figures(self):
        """The slurm-sim clock's main loop: ``iterations``, ``cycles``, ``cycles_yielded`` (ended by
        a yield that saw a change), ``yields``, ``main_passes``, ``main_tests``, ``main_started``,
        ``cycle_us`` and ``main_us`` (simulated time spent in each) and ``now_us``."""
        T = &self.s.sim
        return {"iterations": T.iterations, "cycles": T.cycles, "cycles_yielded": T.cycles_yielded,
                "yields": T.yields, "main_passes": T.main_passes, "main_tests": T.main_tests,
                "main_started": T.main_started, "cycle_us": T.cycle_us, "main_us": T.main_us,
                "now_us": T.now_us}

    def bf_limit_figures(self):
        """Slurm's own backfill limits (bf_limits.pxd) over the replay: ``skipped`` (jobs a cycle passed
        over for a count limit) and ``now_only`` (tests for a start now only, by priority or age)."""
        return {"skipped": self.s.ss.lim.skipped, "now_only": self.s.ss.lim.held}

    def pass_totals(self):
        """Totals over every pass, kept whether or not passes are recorded: ``count``, ``full``,
        ``depth`` (sum), ``depth_max``, ``depth_full`` (sum over full passes), ``wall_ns`` (sum; 0
        unless passes are recorded or threads are used: the clock is read only then),
        ``charged_us_full`` (sum), ``charged_us_max``, ``reevaluations``, ``conflicts``,
        ``inversions``, ``tests_max_worker_full``, ``tests_min_worker_full`` (sums over full passes)
        and ``exit`` (passes per exit reason code)."""
        T = &self.s.totals
        return {"count": T.count, "full": T.full, "depth": T.depth, "depth_max": T.depth_max,
                "depth_full": T.depth_full, "wall_ns": int(T.wall * ns_per_tick()),
                "charged_us_full": T.charged_full, "charged_us_max": T.charged_max,
                "reevaluations": T.reeval, "conflicts": T.conflicts, "inversions": T.inv,
                "tests_max_worker_full": T.tmax_full, "tests_min_worker_full": T.tmin_full,
                "exit": [T.exit[i] for i in range(len(LABELS["exit"]))]}

    def pass_arrays(self):
        """Per-pass records as a dict of numpy arrays (empty when passes are not recorded)."""
        cdef double tick = ns_per_tick()
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
                "kind": LABELS["kind"][r.kind], "wall_ns": <int64_t>(r.wall * ns_per_tick())}

    def units_of(self, int64_t j):
        """The unit bitmap of running job j (a copy)."""
        arr = np.zeros(self.s.W, dtype=np.uint64)
        cdef uint64_t[::1] v = arr
        cdef int64_t i
        if self.s.jobs.row[j] >= 0:
            for i in range(self.s.W):
                v[i] = self.s.nodes.rows[<int64_t>self.s.jobs.row[j] * self.s.W + i]
        return arr

    def unit_indices_of(self, int64_t j):
        """The units of running job j, ascending (int64; empty if it is not running). Reads only the
        words of its row that hold its units (a job of a few nodes on a cluster of 10,000,000 units,
        started from a node search's choice: a few words, not 160,000)."""
        cdef int64_t r = self.s.jobs.row[j], W = self.s.W, lo, hi, w, n = 0, u
        cdef const uint64_t* row
        cdef uint64_t x
        if r < 0:
            return np.empty(0, dtype=np.int64)
        row = self.s.nodes.rows + r * W
        lo = self.s.nodes.row_lo[r]
        hi = self.s.nodes.row_hi[r]
        for w in range(lo, hi + 1):
            n += __builtin_popcountll(row[w])
        out = np.empty(n, dtype=np.int64)
        cdef int64_t[::1] v = out
        n = 0
        for w in range(lo, hi + 1):
            x = row[w]
            while x:
                u = w * 64 + __builtin_ctzll(x)
                x &= x - 1
                if u < self.s.nodes.units:
                    v[n] = u
                    n += 1
        return out[:n]

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
        """Queued job indices in priority order (a job queued once a partition tier, at its first)."""
        out = np.empty(self.s.queue.n, dtype=np.int64)
        cdef int64_t[::1] v = out
        cdef int64_t i
        for i in range(self.s.queue.n):
            v[i] = self.s.queue.entries[i].job
        if self.s.prec.nsplit:
            _, first = np.unique(out, return_index=True)
            out = out[np.sort(first)]
        return out

    def running(self):
        """Running job indices (in no particular order)."""
        return int64_array(self.s.nodes.running, self.s.nodes.nrun)

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
    def repeated_passes(self):
        """Full passes of a replay's interval trigger taken as repeats of the last, which started
        nothing, when nothing had changed since (no search ran; counted and recorded all the same)."""
        return self.s.rep.count

    @property
    def free_count(self):
        """Units free now."""
        return self.s.nodes.nfree

    @property
    def n_jobs(self):
        """Jobs added."""
        return self.s.jobs.n

    # ---- the Engine's batch path
    def batch_call(self, int64_t now, int64_t last, int64_t running, int64_t max_time, bint apply, int kind,
                   int64_t next_full, bint reservations, fin_ids, fin_times, sub_times, sub_size, sub_estimates,
                   sub_requested, sub_runs, sub_users, sub_parts, sub_qoss, rejects):
        """One call of :meth:`pbf.Engine.advance_arrays`: finishes (``fin_j``: core indices, ``fin_t``)
        and submissions checked whole before anything changes, then (``apply``) applied and a pass run
        at ``now``: ``kind`` 0 a full pass, 1 the quick pass, 2 as the interval trigger chooses (none
        with no job pending; a full pass when ``now`` >= ``next_full``; else the quick pass if the call
        has events, none if not). The caller checks ids, duplicates and types.

        The check: ``problem`` 0 when all is well, else the first problem of a finish (1-5) or a
        submission (6-11), and its index: 1, 6 later than ``now``; 2, 7 before ``last``; 3, 8 before
        the one before it; 4 the job is not in state ``running``; 5 it ends before it started; 9 units
        <= 0; 10 requested time above ``max_time``; 11 run time outside -1 .. ``max_time``.
        ``reject[i]`` becomes 1 for a job wider than the cluster, 2 for one with no requested time (the
        replayer's rules: answered, not refused), else 0.

        The application: the submissions not rejected become jobs first, in order (``sub_est``: their
        estimates; ``sub_user``: dense user indices; ``sub_part``, ``sub_qos``: multifactor factors, or
        empty for 1 and 0); then the finishes and those submissions are applied in time order, finishes
        first at a tie; then the pass. Returns (problem, index, rejected) when refused or not applied,
        else (0, rejected, first, started, offsets, units, reserved, planned, ran, charged): the index of
        the first new job; the jobs started, with their unit indices (those of ``started[k]`` are
        ``units[offsets[k]:offsets[k + 1]]``); with ``reservations``, the jobs reserved and their
        planned starts (else None); the pass that ran (0 none, 1 quick, 2 full) and the time the clock
        charged a full pass (microseconds). The columns are int64 buffers (``sub_parts``, ``sub_qoss``:
        float64; ``rejects``: int8), each read only when the call has finishes or submissions."""
        cdef State* S = &self.s
        cdef int64_t n = len(sub_times), nf = len(fin_ids), first = S.jobs.n, m = 0, i, j, k, t
        cdef const int64_t[::1] fin_j, fin_t, sub_t, sub_units, sub_est, sub_req, sub_run, sub_user
        cdef const double[::1] sub_part, sub_qos
        cdef int8_t[::1] reject
        cdef bint factors = False
        # (buffers taken only where there is something to read: most calls have no finish or no submission)
        if nf:
            fin_j = fin_ids
            fin_t = fin_times
        if n:
            sub_t = sub_times
            sub_units = sub_size
            sub_est = sub_estimates
            sub_req = sub_requested
            sub_run = sub_runs
            sub_user = sub_users
            reject = rejects
            factors = len(sub_parts) > 0
            if factors:
                sub_part = sub_parts
                sub_qos = sub_qoss
        cdef int64_t prev = last, nrej = 0, top = -1, W = S.W, w, b, total, r
        cdef uint64_t word
        cdef int rc
        # ---- the check (nothing changes)
        for i in range(nf):
            t = fin_t[i]
            if t > now:
                return 1, i, 0
            if t < last:
                return 2, i, 0
            if t < prev:
                return 3, i, 0
            prev = t
            j = fin_j[i]
            if j < 0 or j >= S.jobs.n or S.jobs.state[j] != running:
                return 4, i, 0
            if t < S.jobs.start[j]:
                return 5, i, 0
        prev = last
        for i in range(n):
            t = sub_t[i]
            if t > now:
                return 6, i, 0
            if t < last:
                return 7, i, 0
            if t < prev:
                return 8, i, 0
            prev = t
            if sub_units[i] <= 0:
                return 9, i, 0
            if sub_req[i] > max_time:
                return 10, i, 0
            if sub_run[i] < -1 or sub_run[i] > max_time:
                return 11, i, 0
            reject[i] = 1 if sub_units[i] > S.units else 2 if sub_req[i] <= 0 else 0
            if reject[i]:
                nrej += 1
            else:
                m += 1
                if sub_user[i] > top:
                    top = sub_user[i]
        if not apply:
            return 0, -1, nrej
        # ---- the new jobs' rows (all room first: a failure leaves the table as it was)
        if (jobs_reserve(&S.jobs, first + m) != RC_OK or users_ensure(&S.users, top + 1) != RC_OK
                or (S.testing.record_units and grow(<void**>&S.jobs.bits, &S.jobs.bits_cap, (first + m) * W,
                                                    sizeof(uint64_t)) != RC_OK)):
            raise MemoryError("pbf core: out of memory (adding jobs)")
        j = first
        for i in range(n):
            if reject[i]:
                continue
            S.jobs.submit[j] = sub_t[i]
            S.jobs.units[j] = sub_units[i]
            S.jobs.est[j] = sub_est[i]
            S.jobs.run[j] = sub_run[i]
            S.jobs.req[j] = sub_req[i]
            S.jobs.user[j] = sub_user[i]
            S.jobs.part[j] = sub_part[i] if factors else 1.0
            S.jobs.qos[j] = sub_qos[i] if factors else 0.0
            j += 1
        jobs_clear(&S.jobs, first, m)
        if S.testing.record_units:
            memset(S.jobs.bits + first * W, 0, m * W * sizeof(uint64_t))
        if grow_job_tables(S) != RC_OK:
            raise MemoryError("pbf core: out of memory (adding jobs)")
        S.jobs.n = first + m
        # ---- the events in time order (finishes first at a tie), then the pass
        i, k, j = 0, 0, first
        while k < n and reject[k]:
            k += 1
        while i < nf or k < n:
            if i < nf and (k >= n or fin_t[i] <= sub_t[k]):
                job_finish(S, fin_j[i], fin_t[i])
                i += 1
            else:
                rc = job_submit(S, j)
                if rc != RC_OK:
                    raise_status(rc, "submit")
                j += 1
                k += 1
                while k < n and reject[k]:
                    k += 1
        cdef int ran = 2 if kind == 0 else 1 if kind == 1 else (
            0 if S.queue.n == 0 else 2 if now >= next_full else 1 if nf > 0 or n > 0 else 0)
        if ran == 0:
            return (0, nrej, first, np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64),
                    np.empty(0, dtype=np.int64), None, None, 0, 0)
        S.replay.now = now
        with nogil:
            rc = quick_pass(S, now) if ran == 1 else full_pass(S, now)
        if rc != RC_OK:
            raise_status(rc, "a pass")
        cdef int64_t charged = S.last.charged_us if ran == 2 else 0
        # ---- the decisions
        started = int64_array(S.decided.started, S.decided.nstarted)
        offsets = np.empty(S.decided.nstarted + 1, dtype=np.int64)
        cdef int64_t[::1] off = offsets
        off[0] = 0
        total = 0
        for k in range(S.decided.nstarted):
            r = S.jobs.row[S.decided.started[k]]
            for w in range(W):
                word = S.nodes.rows[r * W + w]
                while word:
                    word &= word - 1
                    total += 1
            off[k + 1] = total
        units = np.empty(total, dtype=np.int64)
        cdef int64_t[::1] u = units
        total = 0
        for k in range(S.decided.nstarted):
            r = S.jobs.row[S.decided.started[k]]
            for w in range(W):
                word = S.nodes.rows[r * W + w]
                b = 0
                while word:
                    if word & 1:
                        u[total] = w * 64 + b
                        total += 1
                    word >>= 1
                    b += 1
        if not reservations or S.decided.nreserved == 0:
            return 0, nrej, first, started, offsets, units, None, None, ran, charged
        reserved = int64_array(S.decided.reserved, S.decided.nreserved)
        planned = np.empty(S.decided.nreserved, dtype=np.int64)
        cdef int64_t[::1] p = planned
        for k in range(S.decided.nreserved):
            p[k] = S.jobs.resv[S.decided.reserved[k]]
        return 0, nrej, first, started, offsets, units, reserved, planned, ran, charged
