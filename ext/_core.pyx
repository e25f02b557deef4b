# cython: cdivision=True
"""The compiled scheduler core: node state, the profile of future slots, the backfill pass, and the
replay event loop, all without the GIL.

One :class:`Core` holds a whole engine's state in C arrays. Python validates every input first (with
the GIL) and then calls in; code here never raises inside ``nogil``: allocation failures come back as
return codes and are raised after the block. Semantics: DESIGN §4 and ``pbf/reference/engine_ref.py``,
the pure-Python oracle this file must agree with decision for decision.

Layout of the unit bitmaps: ``W = ceil(units / 64)`` little-endian uint64 words, bit = unit.
"""
import numpy as np

from libc.stdint cimport uint64_t, int64_t, int32_t, int8_t
from libc.stdlib cimport malloc, calloc, realloc, free, qsort
from libc.string cimport memcpy, memmove, memset
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from words cimport w_popcount, w_count_and, w_any_common

include "regression.pxi"
from libc.math cimport log10, log2, floor

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_clzll(unsigned long long x) nogil

cdef int64_t INF = 0x7FFFFFFFFFFFFFFF

cdef extern from *:
    """
    #include <stdint.h>
    static inline int64_t pbf_fetch_add(int64_t* p, int64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL); }
    static inline int64_t pbf_load(int64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void pbf_store(int64_t* p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline int pbf_cas(int64_t* p, int64_t expected, int64_t desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); }
    """
    int64_t pbf_fetch_add(int64_t* p, int64_t v) nogil
    int64_t pbf_load(int64_t* p) nogil
    void pbf_store(int64_t* p, int64_t v) nogil
    bint pbf_cas(int64_t* p, int64_t expected, int64_t desired) nogil

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    int pthread_mutex_init(pthread_mutex_t*, const void*)
    int pthread_mutex_destroy(pthread_mutex_t*)
    int pthread_mutex_lock(pthread_mutex_t*)
    int pthread_mutex_unlock(pthread_mutex_t*)
    int pthread_cond_init(pthread_cond_t*, const void*)
    int pthread_cond_destroy(pthread_cond_t*)
    int pthread_cond_wait(pthread_cond_t*, pthread_mutex_t*)
    int pthread_cond_broadcast(pthread_cond_t*)

cdef extern from "<sched.h>" nogil:
    int sched_yield()

# speculative evaluation modes of the parallel pass
cdef enum:
    SPEC_NOW = 0      # only "can it start now?" was asked (no reservation was left)
    SPEC_FULL = 1     # the earliest start was searched

# job states
cdef enum:
    JS_NEW = 0
    JS_PENDING = 1
    JS_RUNNING = 2
    JS_DONE = 3
    JS_REJECTED = 4

# rejection reasons (index into REJECT_REASONS)
cdef enum:
    RJ_NONE = 0
    RJ_OVERSIZE = 1
    RJ_NO_ESTIMATE = 2
    RJ_NO_UNITS = 3

# how a job was started
cdef enum:
    HOW_NONE = 0
    HOW_MAIN = 1      # started with no higher-priority job left waiting in that pass
    HOW_BACKFILL = 2  # started ahead of a higher-priority job that could not start

# pass kinds and exit reasons
cdef enum:
    PK_FULL = 0
    PK_QUICK = 1
cdef enum:
    EX_END = 0
    EX_MAX_JOB_TEST = 1
    EX_QUICK_BLOCKED = 2
    EX_BUDGET = 3

# clocks (DESIGN §4.6)
cdef enum:
    CK_FREE = 0
    CK_MODEL = 1
    CK_WALL = 2

# triggers
cdef enum:
    TR_EVENT = 0
    TR_INTERVAL = 1

# queue orders (priority functions; pbf/plugins/priorities.py has the formulas and the oracle)
cdef enum:
    PR_FCFS = 0
    PR_SJF = 1
    PR_SMALLEST = 2
    PR_F1 = 3
    PR_F2 = 4
    PR_F3 = 5
    PR_F4 = 6
    PR_WFP3 = 7        # from here on the key depends on the time: recomputed before passes
    PR_UNICEP = 8
    PR_MULTIFACTOR = 9
    PR_KEYED = 10      # keys set from Python (a user's plugin) before each pass

# predictors computed here at submission (others give the estimate with the job)
cdef enum:
    PD_GIVEN = 0
    PD_AVE2 = 1
    PD_REGRESSION = 2

# corrections of a running job that outlives its estimate
cdef enum:
    CR_INCREMENTAL = 0
    CR_REQUESTED = 1
    CR_DOUBLING = 2

# Tsafrir et al.'s increments (0, 1 min, 5 min, 15 min, 30 min, 1 h, 2 h, 5 h, 10 h, 20 h, 50 h, 100 h)
cdef int64_t[12] INCREMENTS = [0, 60, 300, 900, 1800, 3600, 7200, 18000, 36000, 72000, 180000, 360000]

REJECT_REASONS = ("", "larger than the cluster", "no requested time (estimate <= 0)",
                  "asks for no units")
EXIT_REASONS = ("end of queue", "max job test", "first job that does not fit", "time budget")
CLOCKS = ("free", "model", "wall")
PASS_KINDS = ("full", "quick")
HOW = ("", "main", "backfill")

JOB_NEW, JOB_PENDING, JOB_RUNNING, JOB_DONE, JOB_REJECTED = 0, 1, 2, 3, 4


ctypedef struct EndKey:
    int64_t end
    int64_t job


ctypedef struct UserHist:       # what the predictors know of a user at a job's submission
    int64_t n_done             # completed jobs
    int64_t p1, p2, p3         # run times of the last three completed jobs, latest first
    int64_t sum_run, sum_units
    int64_t last_end           # when the last one ended (-1: none yet)
    int64_t n_run, run_units, run_start_sum
    int64_t first_run, last_run   # the user's running jobs, a list in start order (-1: none)


ctypedef struct SortRec:
    double key
    int64_t submit
    int64_t seq
    int64_t job
    int64_t units
    int64_t est


cdef int _cmp_sortrec(const void* a, const void* b) noexcept nogil:
    cdef const SortRec* x = <const SortRec*>a
    cdef const SortRec* y = <const SortRec*>b
    if x.key != y.key:
        return -1 if x.key < y.key else 1
    if x.submit != y.submit:
        return -1 if x.submit < y.submit else 1
    if x.seq != y.seq:
        return -1 if x.seq < y.seq else 1
    return 0


ctypedef struct PassRec:       # one pass's record (counts fit 32 bits: jobs and slots of one pass)
    int64_t time
    int64_t wall               # ticks
    int64_t model_us           # the clock's charge
    int32_t queue, depth, started, resv, slots
    int32_t reeval, conflict, tmax, tmin, inv
    int8_t kind, exit


ctypedef struct PendEntry:     # a pending job with what the pass reads of it, contiguous in queue order
    int64_t job
    int64_t units
    int64_t est


cdef inline bint _endkey_less(const EndKey* x, const EndKey* y) noexcept nogil:
    return x.end < y.end or (x.end == y.end and x.job < y.job)


cdef int _cmp_endkey(const void* a, const void* b) noexcept nogil:
    # qsort's form of _endkey_less (one definition of the order)
    cdef const EndKey* x = <const EndKey*>a
    cdef const EndKey* y = <const EndKey*>b
    if _endkey_less(x, y):
        return -1
    return 1 if _endkey_less(y, x) else 0


cdef int _grow(void** p, int64_t* cap, int64_t need, size_t item) noexcept nogil:
    # make room for `need` items; 0 on success, -1 when out of memory
    cdef int64_t newcap
    cdef void* q
    if need <= cap[0]:
        return 0
    newcap = cap[0] * 2 if cap[0] > 0 else 16
    while newcap < need:
        newcap *= 2
    q = realloc(p[0], <size_t>newcap * item)
    if q == NULL:
        return -1
    p[0] = q
    cap[0] = newcap
    return 0


cdef int _grow_all(void*** arrays, const size_t* sizes, int n, int64_t* cap, int64_t need) noexcept nogil:
    # grow arrays that share one capacity; on success *cap is the new common capacity
    cdef int64_t c = cap[0]
    cdef int i
    for i in range(n):
        c = cap[0]
        if _grow(arrays[i], &c, need, sizes[i]) != 0:
            return -1
    cap[0] = c
    return 0


cdef int _append(int64_t** arr, int64_t* n, int64_t* cap, int64_t value) noexcept nogil:
    # push onto a growable int64 array
    if _grow(<void**>arr, cap, n[0] + 1, sizeof(int64_t)) != 0:
        return -1
    arr[0][n[0]] = value
    n[0] += 1
    return 0


cdef inline int64_t _clock_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef extern from *:
    """
    #if defined(__x86_64__) || defined(__i386__)
    #include <x86intrin.h>
    static inline long long pbf_ticks(void) { return (long long)__rdtsc(); }
    #define PBF_HAVE_TSC 1
    #else
    static inline long long pbf_ticks(void) { return 0; }
    #define PBF_HAVE_TSC 0
    #endif
    """
    long long pbf_ticks() nogil
    int PBF_HAVE_TSC


# Pass wall times are read from the CPU's time-stamp counter where there is one (a few ns, against
# ~35 ns for clock_gettime, which matters at ~300 ns a pass) and converted with this ratio, measured
# once per process against CLOCK_MONOTONIC.
cdef double _NS_PER_TICK = 0.0


def _calibrate():
    global _NS_PER_TICK
    cdef int64_t c0, c1, n0, n1
    if not PBF_HAVE_TSC:
        _NS_PER_TICK = 1.0
        return
    n0 = _clock_ns()
    c0 = pbf_ticks()
    n1 = n0
    while n1 - n0 < 2000000:
        n1 = _clock_ns()
    c1 = pbf_ticks()
    _NS_PER_TICK = (n1 - n0) / <double>(c1 - c0) if c1 > c0 else 1.0


cdef inline int64_t _now_ns() noexcept nogil:
    # raw ticks (converted to ns when read out), or ns without a TSC
    if PBF_HAVE_TSC:
        return pbf_ticks()
    return _clock_ns()


cdef inline void _copy(uint64_t* dst, const uint64_t* src, int64_t W) noexcept nogil:
    # bitmaps are a few words on most clusters: a loop beats a call to memcpy
    cdef int64_t i
    for i in range(W):
        dst[i] = src[i]


cdef inline void _or_into(uint64_t* dst, const uint64_t* a, const uint64_t* b, int64_t W) noexcept nogil:
    # dst = a | b (dst may be a); clusters of up to 128 units skip the vectorised loop's set-up
    cdef int64_t i
    if W <= 2:
        dst[0] = a[0] | b[0]
        if W == 2:
            dst[1] = a[1] | b[1]
        return
    for i in range(W):
        dst[i] = a[i] | b[i]


cdef inline void _zero(uint64_t* dst, int64_t W) noexcept nogil:
    cdef int64_t i
    for i in range(W):
        dst[i] = 0


cdef inline uint64_t _lowest_bits(uint64_t w, int64_t need) noexcept nogil:
    # the lowest `need` set bits of w (0 < need < popcount(w)): find the need-th set bit by
    # halving over prefix popcounts (branch-free; peeling bits one by one cost up to 63 steps)
    cdef int64_t pos = 0, step = 32
    while step > 0:
        if __builtin_popcountll(w & (((<uint64_t>1) << (pos + step)) - 1)) < need:
            pos += step
        step >>= 1
    return w & (((<uint64_t>2) << pos) - 1)


cdef inline int64_t _take_lowest(uint64_t* src, uint64_t* dst, int64_t need, int64_t W) noexcept nogil:
    # Move up to `need` of the lowest set bits of src to dst. Returns how many are still needed.
    cdef int64_t i, c
    cdef uint64_t w, t
    for i in range(W):
        if need == 0:
            break
        w = src[i]
        if w == 0:
            continue
        c = __builtin_popcountll(w)
        if c <= need:
            dst[i] |= w
            src[i] &= ~w
            need -= c
        else:
            t = _lowest_bits(w, need)
            need = 0
            dst[i] |= t
            src[i] &= ~t
    return need


cdef inline int64_t _take_lowest_busy(uint64_t* src, uint64_t* dst, int64_t need, int64_t lo, int64_t hi,
                                      const uint64_t* free_bits) noexcept nogil:
    # _take_lowest of (src & ~free_bits) over words [lo, hi) (src is zero outside): the units of
    # src busy in a slot, without materialising the mask
    cdef int64_t i, c
    cdef uint64_t w
    for i in range(lo, hi):
        w = src[i] & ~free_bits[i]
        if w == 0:
            continue
        c = __builtin_popcountll(w)
        if c <= need:
            dst[i] |= w
            src[i] &= ~w
            need -= c
            if need == 0:
                break
        else:
            w = _lowest_bits(w, need)
            dst[i] |= w
            src[i] &= ~w
            return 0
    return need


include "profile.pxi"


cdef class Core:
    """Engine state and the compiled cycle. Internal: use :class:`pbf.Engine` or :func:`pbf.replay`."""
    # configuration
    cdef public int64_t units, W
    cdef public int64_t resv_max        # reservations per pass; < 0 = unlimited (conservative)
    cdef public int64_t max_job_test    # < 0 = unlimited
    cdef public int64_t bf_window       # 0 = unlimited
    cdef public int64_t bf_resolution   # 0 = exact
    cdef public int sjbf                # backfill candidates shortest estimate first
    cdef public int prio                # queue order (PR_*): ascending (key, submit, arrival)
    cdef public int64_t prio_period     # time-dependent keys are recomputed at most this often (0: every pass)
    cdef int64_t next_prio
    cdef bint keys_dirty
    cdef public int predictor           # PD_*
    cdef public int correction          # CR_*
    cdef public int no_backfill         # full passes start jobs in order and stop at the first misfit
    cdef public int bf_keyed            # the SJBF phase orders by keys set from Python, not estimates
    cdef public int64_t n_corrections
    # Slurm multifactor (DESIGN §6.1): weights, PriorityMaxAge, PriorityDecayHalfLife, FavorSmall
    cdef public double mf_w_age, mf_w_fs, mf_w_js, mf_w_part, mf_w_qos
    cdef public int64_t mf_max_age, mf_half_life
    cdef public int mf_favor_small
    cdef int64_t mf_last_calc
    cdef double mf_total                # sum of every user's usage (changes only at a calc)
    cdef double* u_usage                # decayed usage (unit-seconds) per user
    cdef int64_t* u_raw                 # usage not yet folded in (integer: independent of order)
    cdef UserHist* uh
    cdef int64_t nusers, ucap
    cdef Reg* reg
    cdef double* j_x                    # regression: the features of each job at its submission
    cdef int64_t j_x_cap
    cdef public int hooks               # stop the replay at each instant for Python plugins
    cdef public bint hook_waiting
    cdef bint hook_resume, hook_events
    cdef public int64_t hook_t
    cdef int64_t* fin_buf               # jobs finished since Python last took them (hooks)
    cdef int64_t nfin, fin_cap
    cdef public int trigger             # replay trigger
    cdef public int64_t bf_interval
    cdef public int record_passes
    cdef public int record_units       # keep a copy of each started job's units (tests, invariants)

    # jobs (index j); run < 0 = unknown (embedding: the caller finishes jobs)
    cdef int64_t njobs, jcap
    cdef int64_t* j_submit
    cdef int64_t* j_units
    cdef int64_t* j_est
    cdef int64_t* j_run
    cdef int64_t* j_start
    cdef int64_t* j_end
    cdef int64_t* j_resv       # planned start from the last pass that reserved it, else -1
    cdef int64_t* j_resv_min   # earliest planned start any pass gave it, else -1
    cdef uint64_t* j_bits      # with record_units: W words a job, its units once started
    cdef int64_t j_bits_cap
    cdef int64_t* j_seq        # arrival sequence (priority tie-break after submit)
    cdef int64_t* j_req        # requested time (the kill limit and the cap of every prediction)
    cdef int64_t* j_user       # dense user index
    cdef int64_t* j_pred0      # the estimate given at submission (before corrections)
    cdef int64_t* j_ncorr      # corrections applied
    cdef int64_t* j_bfkey      # backfill order key set by a Python chooser
    cdef int64_t* j_acc        # multifactor: usage charged up to this time
    cdef int64_t* j_unext      # the user's running list
    cdef int64_t* j_uprev
    cdef double* j_key         # priority key (ascending)
    cdef double* j_part        # multifactor partition and QOS factors, normalised to [0, 1]
    cdef double* j_qos
    cdef int64_t* j_runpos
    cdef int32_t* j_row
    cdef int8_t* j_state
    cdef int8_t* j_how
    cdef int8_t* j_reason

    # node state
    cdef uint64_t* free_now
    cdef int64_t free_cnt
    cdef uint64_t* pool        # rows of W words: the units of running jobs
    cdef int64_t pool_cap
    cdef int32_t* pool_free
    cdef int64_t pool_nfree, pool_free_cap
    cdef int64_t* run_list
    cdef int64_t nrun, run_cap
    cdef EndKey* by_end        # running jobs sorted by (start + estimate, job): the profile's order
    cdef int64_t by_end_cap

    # pending queue in priority order
    cdef PendEntry* pend
    cdef int64_t npend, pend_cap
    cdef int64_t nseq

    # the profile of the sequential pass (profile.pxi); slot 0 is always the head at `now`
    cdef Prof prof

    # the parallel pass (DESIGN §5): a pool of workers, each with a private profile
    cdef public int workers              # worker threads per pass, counting the caller (1 = sequential)
    cdef public int commit_eager         # 0: ordered commit (deterministic); 1: eager (first done, first committed)
    cdef public int stale_speculation    # tests: workers speculate without applying newer log entries first (stalest copies)
    cdef pthread_mutex_t commit_mu
    cdef int8_t* pp_committed            # eager: which queue positions have committed
    cdef int64_t pp_committed_cap, pp_low, pp_inversions
    cdef int64_t last_inversions
    cdef public int64_t parallel_min_queue  # shallower passes run sequentially (same decisions)
    cdef public int64_t parallel_min_wall_ns  # ... and so do passes after a full pass shorter than this
    # the clock and time budget of a pass (DESIGN §4.6)
    cdef public int clock                 # CK_FREE, CK_MODEL, CK_WALL
    cdef public int64_t bf_max_time_us    # budget of a full pass; <= 0: none
    cdef public int64_t cost_test_us      # model clock: charged per job test
    cdef public int64_t cost_slot_us      # model clock: charged per profile slot, per test
    cdef int64_t* m_cost                  # model clock: accumulated cost per modelled worker
    cdef int64_t* m_tests
    cdef int64_t m_n
    cdef int64_t pass_t0                  # ticks at the start of the current pass (wall clock)
    cdef int64_t last_wall_ticks          # the last recorded pass's wall time, in ticks
    # Resuming the last pass (see _full_pass_sequential): its state when it ended
    cdef int64_t run_version              # bumped whenever a job starts or ends or an estimate changes
    cdef bint rs_valid, rs_blocked
    cdef int64_t rs_version, rs_npend, rs_resv, rs_resv_left, rs_time
    cdef public int64_t resumed_passes
    cdef public int resume                # 0: never resume (to measure fresh passes)
    cdef int64_t last_duration_us         # the last full pass's charged duration
    cdef int64_t last_full_wall_ns
    cdef Prof* wprof
    cdef int64_t nwprof
    cdef object _threads
    cdef pthread_mutex_t pool_mu
    cdef pthread_cond_t pool_work, pool_done
    cdef bint pool_sync_ready
    cdef int64_t pool_gen, pool_finished, pool_shutdown, pool_threads
    cdef int64_t* w_tests                # per worker: jobs it evaluated in the last parallel pass
    cdef int64_t* w_seen                 # per worker: log entries its profile has applied
    # shared state of one parallel pass
    cdef int64_t pp_now, pp_limit, pp_next, pp_commit, pp_stop, pp_phase2, pp_error
    cdef int64_t pp_committer                  # 1 while a worker holds the commit role (ordered)
    # speculative results waiting for their commit, a ring of sp_n jobs (ordered commit): the
    # answer, what was asked (SPEC_*), log entries the copy had applied, candidates (W words), and
    # the queue position whose result the entry holds (-1: none yet)
    cdef int64_t* sp_t
    cdef int64_t* sp_mode
    cdef int64_t* sp_seen
    cdef int64_t* sp_ready
    cdef uint64_t* sp_cand
    cdef int64_t sp_n
    cdef int64_t pp_depth, pp_started, pp_resv, pp_resv_left
    cdef int64_t pp_reeval, pp_conflicts       # commits that searched again / found another answer
    cdef int64_t last_reeval, last_conflicts, last_tests_max, last_tests_min
    cdef int64_t* w_tests_total                # per worker, over all parallel passes
    cdef bint pp_blocked, pp_built
    cdef int pp_ex
    # the commit log: placements in commit order (t, estimate, units, reservation?)
    cdef int64_t* log_t
    cdef int64_t* log_d
    cdef int64_t* log_k
    cdef int8_t* log_resv
    cdef uint64_t* log_bits
    cdef int64_t nlog, log_cap
    cdef EndKey* ends
    cdef int64_t ends_cap

    # replay: heap of (actual end, job); next job to submit
    cdef EndKey* heap
    cdef int64_t nheap, heap_cap
    cdef int64_t next_sub
    cdef int64_t next_bf
    cdef public int64_t now

    # per-pass records
    cdef int64_t npass, pass_cap
    cdef PassRec* passes                  # with record_passes: one record a pass
    # totals over every pass, kept whether or not each pass is recorded (the replay's summary)
    cdef int64_t tot_full, tot_depth, tot_depth_max, tot_depth_full, tot_wall, tot_charged_full
    cdef int64_t tot_charged_max, tot_reeval, tot_conflicts, tot_inv, tot_tmax_full, tot_tmin_full
    cdef int64_t[8] tot_exit

    # last pass's decisions (for the embedding API)
    cdef int64_t* last_started
    cdef int64_t nlast_started, last_started_cap
    cdef int64_t* last_reserved
    cdef int64_t nlast_reserved, last_reserved_cap

    def __cinit__(self, int64_t units):
        self.units = units
        self.W = (units + 63) // 64
        self.resv_max = 1
        self.max_job_test = -1
        self.bf_window = 0
        self.bf_resolution = 0
        self.sjbf = 0
        self.prio = PR_FCFS
        self.predictor = PD_GIVEN
        self.correction = CR_INCREMENTAL
        self.mf_max_age = 7 * 86400
        self.mf_half_life = 7 * 86400
        self.prio_period = 0
        self.next_prio = -INF
        self.mf_last_calc = -INF
        self.trigger = TR_EVENT
        self.bf_interval = 30
        self.record_passes = 1
        self.free_now = <uint64_t*>malloc(max(1, self.W) * sizeof(uint64_t))
        if self.free_now == NULL or prof_init(&self.prof, self.W) != 0:
            raise MemoryError()
        memset(self.free_now, 0xFF, self.W * sizeof(uint64_t))
        if units % 64:
            self.free_now[self.W - 1] = ((<uint64_t>1) << (units % 64)) - 1
        self.free_cnt = units
        self.next_bf = -INF
        self.now = -INF
        self.workers = 1
        self.parallel_min_queue = 64
        self.resume = 1
        # Threads pay only when a pass has work to share: cheap passes (most, on this engine: job
        # tests cost nanoseconds) stay sequential. Decisions are the same either way.
        self.parallel_min_wall_ns = 20_000_000
        self.last_full_wall_ns = 0
        self.clock = CK_FREE
        self.bf_max_time_us = 0
        self.cost_test_us = 10_000
        self.cost_slot_us = 20

    def __dealloc__(self):
        cdef int64_t i
        prof_free(&self.prof)
        if self.wprof != NULL:
            for i in range(self.nwprof):
                prof_free(&self.wprof[i])
            free(self.wprof)
        free(self.w_tests)
        free(self.w_seen)
        free(self.sp_t)
        free(self.sp_mode)
        free(self.sp_seen)
        free(self.sp_ready)
        free(self.sp_cand)
        free(self.m_cost)
        free(self.m_tests)
        free(self.passes)
        free(self.w_tests_total)
        free(self.pp_committed)
        free(self.log_t)
        free(self.log_d)
        free(self.log_k)
        free(self.log_resv)
        free(self.log_bits)
        if self.pool_sync_ready:
            pthread_mutex_destroy(&self.commit_mu)
            pthread_mutex_destroy(&self.pool_mu)
            pthread_cond_destroy(&self.pool_work)
            pthread_cond_destroy(&self.pool_done)
        free(self.j_submit)
        free(self.j_req)
        free(self.j_user)
        free(self.j_pred0)
        free(self.j_ncorr)
        free(self.j_bfkey)
        free(self.j_acc)
        free(self.j_unext)
        free(self.j_uprev)
        free(self.j_key)
        free(self.j_part)
        free(self.j_qos)
        free(self.j_x)
        free(self.reg)
        free(self.uh)
        free(self.u_usage)
        free(self.u_raw)
        free(self.fin_buf)
        free(self.j_units)
        free(self.j_est)
        free(self.j_run)
        free(self.j_start)
        free(self.j_end)
        free(self.j_resv)
        free(self.j_resv_min)
        free(self.j_bits)
        free(self.j_seq)
        free(self.j_runpos)
        free(self.j_row)
        free(self.j_state)
        free(self.j_how)
        free(self.j_reason)
        free(self.free_now)
        free(self.pool)
        free(self.pool_free)
        free(self.run_list)
        free(self.by_end)
        free(self.pend)
        free(self.ends)
        free(self.heap)
        free(self.last_started)
        free(self.last_reserved)

    # ------------------------------------------------------------------ jobs
    cdef int _reserve_jobs(self, int64_t n) noexcept nogil:
        # room for n jobs in every per-job array (they share one capacity, jcap)
        cdef void** arrays[25]
        cdef size_t sizes[25]
        if n <= self.jcap:
            return 0
        arrays[0], sizes[0] = <void**>&self.j_submit, sizeof(int64_t)
        arrays[1], sizes[1] = <void**>&self.j_units, sizeof(int64_t)
        arrays[2], sizes[2] = <void**>&self.j_est, sizeof(int64_t)
        arrays[3], sizes[3] = <void**>&self.j_run, sizeof(int64_t)
        arrays[4], sizes[4] = <void**>&self.j_start, sizeof(int64_t)
        arrays[5], sizes[5] = <void**>&self.j_end, sizeof(int64_t)
        arrays[6], sizes[6] = <void**>&self.j_resv, sizeof(int64_t)
        arrays[7], sizes[7] = <void**>&self.j_resv_min, sizeof(int64_t)
        arrays[8], sizes[8] = <void**>&self.j_seq, sizeof(int64_t)
        arrays[9], sizes[9] = <void**>&self.j_runpos, sizeof(int64_t)
        arrays[10], sizes[10] = <void**>&self.j_row, sizeof(int32_t)
        arrays[11], sizes[11] = <void**>&self.j_state, sizeof(int8_t)
        arrays[12], sizes[12] = <void**>&self.j_how, sizeof(int8_t)
        arrays[13], sizes[13] = <void**>&self.j_reason, sizeof(int8_t)
        arrays[14], sizes[14] = <void**>&self.j_req, sizeof(int64_t)
        arrays[15], sizes[15] = <void**>&self.j_user, sizeof(int64_t)
        arrays[16], sizes[16] = <void**>&self.j_pred0, sizeof(int64_t)
        arrays[17], sizes[17] = <void**>&self.j_ncorr, sizeof(int64_t)
        arrays[18], sizes[18] = <void**>&self.j_bfkey, sizeof(int64_t)
        arrays[19], sizes[19] = <void**>&self.j_acc, sizeof(int64_t)
        arrays[20], sizes[20] = <void**>&self.j_unext, sizeof(int64_t)
        arrays[21], sizes[21] = <void**>&self.j_uprev, sizeof(int64_t)
        arrays[22], sizes[22] = <void**>&self.j_key, sizeof(double)
        arrays[23], sizes[23] = <void**>&self.j_part, sizeof(double)
        arrays[24], sizes[24] = <void**>&self.j_qos, sizeof(double)
        return _grow_all(arrays, sizes, 25, &self.jcap, n)

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
        cdef int64_t n = vs.shape[0], first = self.njobs, i, j, top = -1
        cdef const int64_t[::1] vq = np.ascontiguousarray(ve if req is None else req, dtype=np.int64)
        cdef const int64_t[::1] vw = np.ascontiguousarray(np.zeros(n, np.int64) if user is None else user, dtype=np.int64)
        cdef const double[::1] vp = np.ascontiguousarray(np.ones(n) if part is None else part, dtype=np.float64)
        cdef const double[::1] vo = np.ascontiguousarray(np.zeros(n) if qos is None else qos, dtype=np.float64)
        if self._reserve_jobs(first + n) != 0:
            raise MemoryError()
        for i in range(n):
            if vw[i] > top:
                top = vw[i]
        if self._ensure_users(top + 1) != 0:
            raise MemoryError()
        for i in range(n):
            j = first + i
            self.j_submit[j] = vs[i]
            self.j_units[j] = vu[i]
            self.j_est[j] = ve[i]
            self.j_run[j] = vr[i]
            self.j_req[j] = vq[i]
            self.j_user[j] = vw[i]
            self.j_part[j] = vp[i]
            self.j_qos[j] = vo[i]
            self.j_pred0[j] = -1
            self.j_ncorr[j] = 0
            self.j_bfkey[j] = 0
            self.j_key[j] = 0.0
            self.j_acc[j] = -1
            self.j_unext[j] = -1
            self.j_uprev[j] = -1
            self.j_start[j] = -1
            self.j_end[j] = -1
            self.j_resv[j] = -1
            self.j_resv_min[j] = -1
            self.j_seq[j] = -1
            self.j_runpos[j] = -1
            self.j_row[j] = -1
            self.j_state[j] = JS_NEW
            self.j_how[j] = HOW_NONE
            self.j_reason[j] = RJ_NONE
        self.njobs = first + n
        if self.record_units:
            if _grow(<void**>&self.j_bits, &self.j_bits_cap, self.njobs * self.W, sizeof(uint64_t)) != 0:
                raise MemoryError()
            memset(self.j_bits + first * self.W, 0, n * self.W * sizeof(uint64_t))
        return first

    cdef int _ensure_users(self, int64_t n) noexcept nogil:
        cdef int64_t u, cap
        if n <= self.nusers:
            return 0
        if n > self.ucap:
            cap = self.ucap
            if _grow(<void**>&self.uh, &cap, n, sizeof(UserHist)) != 0: return -1
            cap = self.ucap
            if _grow(<void**>&self.u_usage, &cap, n, sizeof(double)) != 0: return -1
            cap = self.ucap
            if _grow(<void**>&self.u_raw, &cap, n, sizeof(int64_t)) != 0: return -1
            self.ucap = cap
        for u in range(self.nusers, n):
            memset(&self.uh[u], 0, sizeof(UserHist))
            self.uh[u].last_end = -1
            self.uh[u].first_run = -1
            self.uh[u].last_run = -1
            self.u_usage[u] = 0.0
            self.u_raw[u] = 0
        self.nusers = n
        return 0

    def set_regression(self, double eta, double lam, int over_sq, int under_sq, int weight,
                       double over_slope=1.0, double under_slope=1.0):
        """Use the on-line regression predictor with these settings (fresh model)."""
        if self.reg == NULL:
            self.reg = <Reg*>malloc(sizeof(Reg))
            if self.reg == NULL:
                raise MemoryError()
        reg_init(self.reg, eta, lam, over_sq, under_sq, weight, over_slope, under_slope)
        self.predictor = PD_REGRESSION

    def regression_weights(self):
        """The regression model's weights (a copy), or None."""
        if self.reg == NULL:
            return None
        out = np.empty(REG_DIM)
        cdef double[::1] v = out
        cdef int i
        for i in range(REG_DIM):
            v[i] = self.reg.w[i]
        return out

    # ------------------------------------------------------------------ predictors
    cdef int64_t _predict(self, int64_t j, int64_t now) noexcept nogil:
        # the estimate of job j at its submission, in [1, requested]; -1: out of memory
        cdef int64_t req = self.j_req[j], e
        cdef UserHist* h = &self.uh[self.j_user[j]]
        if self.predictor == PD_AVE2:
            # Tsafrir et al.: mean of the user's last two run times, once there are two
            if h.n_done < 2:
                return req
            e = (h.p1 + h.p2) // 2
            return 1 if e < 1 else (req if e > req else e)
        if _grow(<void**>&self.j_x, &self.j_x_cap, (j + 1) * REG_NF, sizeof(double)) != 0:
            return -1
        self._features(j, now, self.j_x + j * REG_NF)
        return reg_predict(self.reg, self.j_x + j * REG_NF, req)

    cdef void _features(self, int64_t j, int64_t now, double* x) noexcept nogil:
        # Gaussier et al.'s Table 2, from the user's history at the job's submission
        cdef UserHist* h = &self.uh[self.j_user[j]]
        cdef double q = <double>self.j_units[j]
        cdef int64_t s = self.j_submit[j]
        cdef double a
        x[0] = <double>self.j_req[j]
        x[1] = <double>h.p1 if h.n_done >= 1 else 0.0
        x[2] = <double>h.p2 if h.n_done >= 2 else 0.0
        x[3] = <double>h.p3 if h.n_done >= 3 else 0.0
        if h.n_done >= 2:
            x[4] = (x[1] + x[2]) / 2.0
        else:
            x[4] = x[1]
        if h.n_done >= 3:
            x[5] = (x[1] + x[2] + x[3]) / 3.0
        else:
            x[5] = x[4]
        x[6] = <double>h.sum_run / <double>h.n_done if h.n_done > 0 else 0.0
        x[7] = q
        x[8] = <double>h.sum_units / <double>h.n_done if h.n_done > 0 else 0.0
        x[9] = q / x[8] if h.n_done > 0 else 0.0
        x[10] = <double>h.run_units / <double>h.n_run if h.n_run > 0 else 0.0
        x[11] = <double>h.n_run
        x[12] = <double>(now - self.j_start[h.first_run]) if h.n_run > 0 else 0.0
        x[13] = <double>(h.n_run * now - h.run_start_sum)
        x[14] = <double>h.run_units
        x[15] = <double>(now - h.last_end) if h.last_end >= 0 else 0.0
        a = 2.0 * M_PI * <double>(((s % 86400) + 86400) % 86400) / 86400.0
        x[16] = cos(a)
        x[17] = sin(a)
        a = 2.0 * M_PI * <double>(((s % 604800) + 604800) % 604800) / 604800.0
        x[18] = cos(a)
        x[19] = sin(a)

    cdef int _apply_corrections(self, int64_t now) noexcept nogil:
        # Running jobs still running at their planned end get a new estimate (DESIGN §6.2), until
        # the planned end is in the future or the estimate is the requested time. Applied before
        # every full pass: the profile and reservations follow the corrected estimates.
        cdef int64_t n = 0, i, j, e, r, k, p
        while n < self.nrun and self.by_end[n].end <= now:
            n += 1
        if n == 0:
            return 0
        self.run_version += 1
        if _grow(<void**>&self.ends, &self.ends_cap, n, sizeof(EndKey)) != 0:
            return -1
        memcpy(self.ends, self.by_end, n * sizeof(EndKey))
        memmove(self.by_end, self.by_end + n, (self.nrun - n) * sizeof(EndKey))
        for i in range(n):
            j = self.ends[i].job
            r = self.j_req[j]
            e = self.j_est[j]
            while self.j_start[j] + e <= now and e < r:
                k = self.j_ncorr[j] + 1
                self.j_ncorr[j] = k
                if self.correction == CR_REQUESTED:
                    e = r
                elif self.correction == CR_DOUBLING:
                    e = 2 * e
                elif k < 12:
                    e = self.j_pred0[j] + INCREMENTS[k]
                else:   # past the list: 100 h more each time
                    e = self.j_pred0[j] + INCREMENTS[11] * (k - 10)
                if e > r:
                    e = r
                self.n_corrections += 1
            self.j_est[j] = e
            # back into the planned-end order (nrun - n entries are in place)
            p = self._by_end_find_in(self.nrun - n + i, self.j_start[j] + e, j)
            memmove(self.by_end + p + 1, self.by_end + p, (self.nrun - n + i - p) * sizeof(EndKey))
            self.by_end[p].end = self.j_start[j] + e
            self.by_end[p].job = j
        return 0

    # ------------------------------------------------------------------ priorities
    cdef inline double _key(self, int64_t j, int64_t now) noexcept nogil:
        # the priority key of pending job j at time now (ascending: lowest runs first); the formulas
        # are RLScheduler's (reference §6.1) and Slurm's multifactor (§1.8)
        cdef double r = <double>self.j_est[j], n = <double>self.j_units[j]
        cdef double s = <double>self.j_submit[j], w = <double>(now - self.j_submit[j])
        cdef int pr = self.prio
        if pr == PR_FCFS or pr == PR_KEYED:
            return self.j_key[j] if pr == PR_KEYED else 0.0
        if pr == PR_SJF:
            return r
        if pr == PR_SMALLEST:
            return n
        if s <= 0.0:
            s = 0.1
        if pr == PR_F1:
            return log10(r) * n + 870.0 * log10(s)
        if pr == PR_F2:
            return sqrt(r) * n + 25600.0 * log10(s)
        if pr == PR_F3:
            return r * n + 6860000.0 * log10(s)
        if pr == PR_F4:
            return r * sqrt(n) + 530000.0 * log10(s)
        if pr == PR_WFP3:
            return -pow(w / r, 3.0) * n
        if pr == PR_UNICEP:
            return -(w + 1e-15) / (log2(n + 1e-15) * r)
        return -self._multifactor(j, now)

    cdef double _multifactor(self, int64_t j, int64_t now) noexcept nogil:
        # Slurm's priority/multifactor: an integer, the weighted sum of factors in [0, 1]
        cdef double age, fs, js, total = self.mf_total, usage_norm, shares_norm
        age = 1.0
        if self.mf_max_age > 0:
            age = <double>(now - self.j_submit[j]) / <double>self.mf_max_age
            if age > 1.0:
                age = 1.0
        usage_norm = self.u_usage[self.j_user[j]] / total if total > 0.0 else 0.0
        shares_norm = 1.0 / <double>(self.nusers if self.nusers > 0 else 1)
        fs = pow(2.0, -(usage_norm / shares_norm))
        js = <double>self.j_units[j] / <double>self.units
        if self.mf_favor_small:
            js = <double>(self.units - self.j_units[j]) / <double>self.units
        return floor(self.mf_w_age * age + self.mf_w_fs * fs + self.mf_w_js * js
                     + self.mf_w_part * self.j_part[j] + self.mf_w_qos * self.j_qos[j])

    cdef void _charge_usage(self, int64_t now) noexcept nogil:
        # multifactor fair share: decay every user's usage to now, then fold in what ran since
        cdef int64_t i, j, u
        cdef double decay = 1.0
        if self.mf_last_calc > -INF and self.mf_half_life > 0 and now > self.mf_last_calc:
            decay = pow(2.0, -<double>(now - self.mf_last_calc) / <double>self.mf_half_life)
        for i in range(self.nrun):
            j = self.run_list[i]
            self.u_raw[self.j_user[j]] += self.j_units[j] * (now - self.j_acc[j])
            self.j_acc[j] = now
        self.mf_total = 0.0
        for u in range(self.nusers):
            self.u_usage[u] = self.u_usage[u] * decay + <double>self.u_raw[u]
            self.u_raw[u] = 0
            self.mf_total += self.u_usage[u]
        self.mf_last_calc = now

    cdef int _refresh_priorities(self, int64_t now) noexcept nogil:
        # time-dependent keys: recompute (when due) and re-sort the queue
        cdef int64_t i, j
        cdef SortRec* rec
        if self.prio < PR_WFP3:
            return 0
        if self.prio == PR_KEYED:
            if not self.keys_dirty:
                return 0
        elif self.prio_period > 0 and now < self.next_prio:
            return 0
        else:
            if self.prio == PR_MULTIFACTOR:
                self._charge_usage(now)
            self.next_prio = now + self.prio_period
        self.keys_dirty = False
        self.rs_valid = False
        if self.npend == 0:
            return 0
        rec = <SortRec*>malloc(self.npend * sizeof(SortRec))
        if rec == NULL:
            return -1
        for i in range(self.npend):
            j = self.pend[i].job
            if self.prio != PR_KEYED:
                self.j_key[j] = self._key(j, now)
            rec[i].key = self.j_key[j]
            rec[i].submit = self.j_submit[j]
            rec[i].seq = self.j_seq[j]
            rec[i].job = j
            rec[i].units = self.pend[i].units
            rec[i].est = self.pend[i].est
        qsort(rec, self.npend, sizeof(SortRec), _cmp_sortrec)
        for i in range(self.npend):
            self.pend[i].job = rec[i].job
            self.pend[i].units = rec[i].units
            self.pend[i].est = rec[i].est
        free(rec)
        return 0

    # ------------------------------------------------------------------ node state
    cdef inline int32_t _alloc_row(self) noexcept nogil:
        # a free row of the running-units pool, growing the pool when none is left
        cdef int64_t rows, r
        cdef void* q
        if self.pool_nfree == 0:
            rows = self.pool_cap * 2 if self.pool_cap else 64
            q = realloc(self.pool, <size_t>(rows * self.W) * sizeof(uint64_t))
            if q == NULL:
                return -1
            self.pool = <uint64_t*>q
            if _grow(<void**>&self.pool_free, &self.pool_free_cap, rows, sizeof(int32_t)) != 0:
                return -1
            r = rows
            while r > self.pool_cap:
                r -= 1
                self.pool_free[self.pool_nfree] = <int32_t>r
                self.pool_nfree += 1
            self.pool_cap = rows
        self.pool_nfree -= 1
        return self.pool_free[self.pool_nfree]

    cdef inline int _submit(self, int64_t j) noexcept nogil:
        # a new pending job; rejected with a reason when it can never run
        cdef int64_t lo, hi, mid, m, p, e
        if self.j_units[j] <= 0:
            self.j_state[j] = JS_REJECTED
            self.j_reason[j] = RJ_NO_UNITS
            return 0
        if self.j_units[j] > self.units:
            self.j_state[j] = JS_REJECTED
            self.j_reason[j] = RJ_OVERSIZE
            return 0
        if self.predictor != PD_GIVEN:
            if self.j_req[j] <= 0:
                self.j_state[j] = JS_REJECTED
                self.j_reason[j] = RJ_NO_ESTIMATE
                return 0
            e = self._predict(j, self.j_submit[j])
            if e < 0:
                return -1
            self.j_est[j] = e
        if self.j_est[j] <= 0:
            self.j_state[j] = JS_REJECTED
            self.j_reason[j] = RJ_NO_ESTIMATE
            return 0
        if _grow(<void**>&self.pend, &self.pend_cap, self.npend + 1, sizeof(PendEntry)) != 0:
            return -1
        self.j_pred0[j] = self.j_est[j]
        self.j_state[j] = JS_PENDING
        self.j_seq[j] = self.nseq
        self.nseq += 1
        self.j_key[j] = self._key(j, self.j_submit[j])
        # ascending (key, submit, arrival); insert from the back: arrivals are mostly latest in
        # FCFS order, so this is usually an append
        lo, hi = 0, self.npend
        if hi == 0 or not self._before(j, self.pend[hi - 1].job):
            lo = hi
        while lo < hi:
            mid = (lo + hi) // 2
            m = self.pend[mid].job
            if self._before(j, m):
                hi = mid
            else:
                lo = mid + 1
        if lo < self.npend:
            self.rs_valid = False      # not behind every queued job: the last pass cannot be resumed
        memmove(self.pend + lo + 1, self.pend + lo, (self.npend - lo) * sizeof(PendEntry))
        self.pend[lo].job = j
        self.pend[lo].units = self.j_units[j]
        self.pend[lo].est = self.j_est[j]
        self.npend += 1
        return 0

    cdef inline bint _before(self, int64_t a, int64_t b) noexcept nogil:
        # priority order: does job a come before job b?
        if self.j_key[a] != self.j_key[b]:
            return self.j_key[a] < self.j_key[b]
        if self.j_submit[a] != self.j_submit[b]:
            return self.j_submit[a] < self.j_submit[b]
        return self.j_seq[a] < self.j_seq[b]

    cdef inline int _start(self, int64_t j, int64_t now) noexcept nogil:
        # start job j now on the units in self.prof.chosen
        cdef int32_t r = self._alloc_row()
        cdef int64_t i
        cdef uint64_t* row
        if r < 0:
            return -1
        if _grow(<void**>&self.run_list, &self.run_cap, self.nrun + 1, sizeof(int64_t)) != 0:
            return -1
        row = self.pool + <int64_t>r * self.W
        for i in range(self.W):
            row[i] = self.prof.chosen[i]
            self.free_now[i] &= ~self.prof.chosen[i]
        self.free_cnt -= self.j_units[j]
        if self.record_units:
            memcpy(self.j_bits + j * self.W, self.prof.chosen, self.W * sizeof(uint64_t))
        self.j_row[j] = r
        self.j_state[j] = JS_RUNNING
        self.j_start[j] = now
        self.j_resv[j] = -1
        self.j_runpos[j] = self.nrun
        self.run_list[self.nrun] = j
        if self._by_end_insert(j) != 0:
            return -1
        self.nrun += 1
        self.run_version += 1
        self._user_started(j, now)
        if self.j_run[j] >= 0:
            self.j_end[j] = now + self.j_run[j]
            if self._heap_push(self.j_end[j], j) != 0:
                return -1
        return 0

    cdef inline int64_t _by_end_find(self, int64_t end, int64_t j) noexcept nogil:
        return self._by_end_find_in(self.nrun, end, j)

    cdef inline int64_t _by_end_find_in(self, int64_t n, int64_t end, int64_t j) noexcept nogil:
        # position of the first entry not before (end, j) among the first n sorted entries
        cdef int64_t lo = 0, hi = n, mid
        cdef EndKey key
        key.end = end
        key.job = j
        while lo < hi:
            mid = (lo + hi) // 2
            if _endkey_less(&self.by_end[mid], &key):
                lo = mid + 1
            else:
                hi = mid
        return lo

    cdef inline int _by_end_insert(self, int64_t j) noexcept nogil:
        # called before nrun is incremented
        cdef int64_t e = self.j_start[j] + self.j_est[j], p
        if _grow(<void**>&self.by_end, &self.by_end_cap, self.nrun + 1, sizeof(EndKey)) != 0:
            return -1
        p = self._by_end_find(e, j)
        memmove(self.by_end + p + 1, self.by_end + p, (self.nrun - p) * sizeof(EndKey))
        self.by_end[p].end = e
        self.by_end[p].job = j
        return 0

    cdef inline void _finish(self, int64_t j, int64_t now) noexcept nogil:
        cdef int64_t i, p, last
        p = self._by_end_find(self.j_start[j] + self.j_est[j], j)
        memmove(self.by_end + p, self.by_end + p + 1, (self.nrun - p - 1) * sizeof(EndKey))
        cdef uint64_t* row = self.pool + <int64_t>self.j_row[j] * self.W
        for i in range(self.W):
            self.free_now[i] |= row[i]
        self.free_cnt += self.j_units[j]
        self.pool_free[self.pool_nfree] = self.j_row[j]
        self.pool_nfree += 1
        self.j_row[j] = -1
        p = self.j_runpos[j]
        last = self.run_list[self.nrun - 1]
        self.run_list[p] = last
        self.j_runpos[last] = p
        self.nrun -= 1
        self.j_runpos[j] = -1
        self.j_state[j] = JS_DONE
        self.j_end[j] = now
        self.run_version += 1
        self._user_finished(j, now)

    cdef inline void _user_started(self, int64_t j, int64_t now) noexcept nogil:
        # the user's running list stays in start order: starts come in time order
        cdef UserHist* h = &self.uh[self.j_user[j]]
        self.j_acc[j] = now
        self.j_unext[j] = -1
        self.j_uprev[j] = h.last_run
        if h.last_run >= 0:
            self.j_unext[h.last_run] = j
        else:
            h.first_run = j
        h.last_run = j
        h.n_run += 1
        h.run_units += self.j_units[j]
        h.run_start_sum += now

    cdef inline void _user_finished(self, int64_t j, int64_t now) noexcept nogil:
        # history for the predictors (and the model's training step), usage for fair share
        cdef int64_t u = self.j_user[j], run = now - self.j_start[j]
        cdef UserHist* h = &self.uh[u]
        cdef double p
        if self.j_uprev[j] >= 0:
            self.j_unext[self.j_uprev[j]] = self.j_unext[j]
        else:
            h.first_run = self.j_unext[j]
        if self.j_unext[j] >= 0:
            self.j_uprev[self.j_unext[j]] = self.j_uprev[j]
        else:
            h.last_run = self.j_uprev[j]
        h.n_run -= 1
        h.run_units -= self.j_units[j]
        h.run_start_sum -= self.j_start[j]
        self.u_raw[u] += self.j_units[j] * (now - self.j_acc[j])
        if self.predictor == PD_REGRESSION and self.j_pred0[j] >= 0:
            p = <double>(run if run > 1 else 1)
            reg_fit(self.reg, self.j_x + j * REG_NF, <double>run,
                    reg_weight(self.reg.weight, <double>self.j_units[j], p))
        h.p3 = h.p2
        h.p2 = h.p1
        h.p1 = run
        h.n_done += 1
        h.sum_run += run
        h.sum_units += self.j_units[j]
        h.last_end = now
        if self.hooks:
            _append(&self.fin_buf, &self.nfin, &self.fin_cap, j)

    # ------------------------------------------------------------------ replay heap
    cdef inline int _heap_push(self, int64_t end, int64_t job) noexcept nogil:
        cdef int64_t i, parent
        cdef EndKey tmp
        if _grow(<void**>&self.heap, &self.heap_cap, self.nheap + 1, sizeof(EndKey)) != 0:
            return -1
        i = self.nheap
        self.heap[i].end = end
        self.heap[i].job = job
        self.nheap += 1
        while i > 0:
            parent = (i - 1) // 2
            if not _endkey_less(&self.heap[i], &self.heap[parent]):
                break
            tmp = self.heap[i]
            self.heap[i] = self.heap[parent]
            self.heap[parent] = tmp
            i = parent
        return 0

    cdef inline int64_t _heap_pop(self) noexcept nogil:
        cdef int64_t job = self.heap[0].job, i = 0, c, n
        cdef EndKey tmp
        self.nheap -= 1
        n = self.nheap
        self.heap[0] = self.heap[n]
        while True:
            c = 2 * i + 1
            if c >= n:
                break
            if c + 1 < n and _endkey_less(&self.heap[c + 1], &self.heap[c]):
                c += 1
            if not _endkey_less(&self.heap[c], &self.heap[i]):
                break
            tmp = self.heap[i]
            self.heap[i] = self.heap[c]
            self.heap[c] = tmp
            i = c
        return job

    # ------------------------------------------------------------------ profile
    cdef int _build_profile(self, int64_t now) noexcept nogil:
        # slot 0 = [now, first planned end) with the units free now; a new slot at each distinct
        # planned end of a running job (start + estimate, never before now + 1), adding its units
        cdef int64_t i, j, e, e_next, W = self.W, cnt
        cdef int32_t s
        cdef uint64_t* bits
        cdef Prof* P = &self.prof
        P.nslots = 0
        P.nmerged = 0
        # room for every slot up front: at most one per running job, plus slot 0
        if prof_reserve_slots(P, self.nrun + 1) != 0:
            return -1
        P.nslots = 1
        P.s_begin[0] = now
        cnt = self.free_cnt
        P.s_cnt[0] = cnt
        P.s_next[0] = -1
        bits = P.s_bits
        _copy(bits, self.free_now, W)
        s = 0
        i = 0
        e_next = self._planned_end(0, now) if self.nrun > 0 else 0
        while i < self.nrun:
            # planned ends in order; clamping to now + 1 and rounding keep the order
            e = e_next
            P.s_next[s] = s + 1
            s += 1
            P.s_begin[s] = e
            P.s_next[s] = -1
            # the new slot = the previous one plus the first ending job's units, in one sweep
            j = self.by_end[i].job
            _or_into(bits + W, bits, self.pool + <int64_t>self.j_row[j] * W, W)
            bits += W
            cnt += self.j_units[j]
            i += 1
            while i < self.nrun:
                e_next = self._planned_end(i, now)
                if e_next != e:
                    break
                j = self.by_end[i].job
                _or_into(bits, bits, self.pool + <int64_t>self.j_row[j] * W, W)
                cnt += self.j_units[j]
                i += 1
            P.s_cnt[s] = cnt
        P.nslots = s + 1
        return 0

    cdef inline int64_t _planned_end(self, int64_t i, int64_t now) noexcept nogil:
        # the profile's time for the i-th running job's end (by_end order)
        cdef int64_t e = self.by_end[i].end
        if e <= now:
            e = now + 1
        if self.prof.resolution > 1:
            e = prof_round_up(&self.prof, e)
        return e

    cdef inline int _ensure_scratch(self) noexcept nogil:
        cdef int64_t need = self.nrun + 2 * self.npend + 8
        # the backward walk of _choose lists at most every slot: 1 + running + 2 per placement
        if prof_ensure_scratch(&self.prof, need) != 0:
            return -1
        return 0

    # ------------------------------------------------------------------ passes
    cdef inline int _record(self, int64_t now, int kind, int64_t queue, int64_t depth, int64_t started,
                     int64_t resv, int ex, int64_t wall, int64_t slots) noexcept nogil:
        cdef int64_t tmax = depth, tmin = depth
        cdef PassRec* r
        self.last_wall_ticks = wall
        if kind == PK_FULL:
            tmax = self.last_tests_max if self.last_tests_max >= 0 else depth
            tmin = self.last_tests_min if self.last_tests_min >= 0 else depth
            self.tot_full += 1
            self.tot_depth_full += depth
            self.tot_charged_full += self.last_duration_us
            self.tot_reeval += self.last_reeval
            self.tot_conflicts += self.last_conflicts
            self.tot_inv += self.last_inversions
            self.tot_tmax_full += tmax
            self.tot_tmin_full += tmin
        self.tot_depth += depth
        if depth > self.tot_depth_max:
            self.tot_depth_max = depth
        if self.last_duration_us > self.tot_charged_max:
            self.tot_charged_max = self.last_duration_us
        self.tot_wall += wall
        self.tot_exit[ex] += 1
        if not self.record_passes:
            self.npass += 1
            return 0
        if self.npass >= self.pass_cap and _grow(<void**>&self.passes, &self.pass_cap, self.npass + 1,
                                                 sizeof(PassRec)) != 0:
            return -1
        r = &self.passes[self.npass]
        r.time = now
        r.wall = wall
        r.model_us = self.last_duration_us
        r.queue = <int32_t>queue
        r.depth = <int32_t>depth
        r.started = <int32_t>started
        r.resv = <int32_t>resv
        r.slots = <int32_t>slots
        # tests per worker: real threads in a parallel pass, else the modelled workers of the model
        # clock, else one worker that tested them all
        r.tmax = <int32_t>tmax
        r.tmin = <int32_t>tmin
        r.reeval = <int32_t>(self.last_reeval if kind == PK_FULL else 0)
        r.conflict = <int32_t>(self.last_conflicts if kind == PK_FULL else 0)
        r.inv = <int32_t>(self.last_inversions if kind == PK_FULL else 0)
        r.kind = kind
        r.exit = ex
        self.npass += 1
        return 0

    cdef inline int _note_started(self, int64_t j) noexcept nogil:
        return _append(&self.last_started, &self.nlast_started, &self.last_started_cap, j)

    cdef inline int _note_reserved(self, int64_t j) noexcept nogil:
        return _append(&self.last_reserved, &self.nlast_reserved, &self.last_reserved_cap, j)

    cdef inline void _compact_marked(self, int64_t first) noexcept nogil:
        # drop the entries the pass marked started (job = -1); nothing before `first` moved
        cdef int64_t i, n = first
        for i in range(first, self.npend):
            if self.pend[i].job >= 0:
                self.pend[n] = self.pend[i]
                n += 1
        self.npend = n

    cdef int _compact_pending(self) noexcept nogil:
        # keep the entries still pending (entries marked started, job = -1, go too)
        cdef int64_t i, n = 0
        for i in range(self.npend):
            if self.pend[i].job >= 0 and self.j_state[self.pend[i].job] == JS_PENDING:
                self.pend[n] = self.pend[i]
                n += 1
        self.npend = n
        return 0

    cdef inline int64_t _pass_clock(self) noexcept nogil:
        # A pass's wall time is read only where someone uses it: the per-pass records, or the
        # parallel pass's choice of threads. Two clock reads are 5-10 % of a replay of short passes.
        if self.record_passes or self.workers > 1:
            return _now_ns()
        return 0

    cdef int _quick_pass(self, int64_t now) noexcept nogil:
        # Slurm's main scheduler: start jobs in priority order while they fit now; stop at the first
        # that does not (it keeps the queue head from being overtaken between backfill passes)
        cdef int64_t t0 = self._pass_clock(), p, j, k, started = 0, depth = 0, queue = self.npend
        cdef int ex = EX_END
        if self._refresh_priorities(now) != 0:
            return -1
        self.nlast_started = 0
        self.nlast_reserved = 0
        for p in range(self.npend):
            j = self.pend[p].job
            k = self.pend[p].units
            depth += 1
            if k > self.free_cnt:
                ex = EX_QUICK_BLOCKED
                break
            _copy(self.prof.cand, self.free_now, self.W)
            _zero(self.prof.chosen, self.W)
            _take_lowest(self.prof.cand, self.prof.chosen, k, self.W)
            if self._start(j, now) != 0:
                return -1
            self.j_how[j] = HOW_MAIN
            started += 1
            if self._note_started(j) != 0:
                return -1
        if started:
            # the started jobs are exactly the first `started` entries
            memmove(self.pend, self.pend + started, (self.npend - started) * sizeof(PendEntry))
            self.npend -= started
        self.last_duration_us = 0
        return self._record(now, PK_QUICK, queue, depth, started, 0, ex, self._pass_clock() - t0, 0)

    cdef inline int _full_pass(self, int64_t now) noexcept nogil:
        cdef int rc
        # (the checks that let both calls out are made here: a pass starts at every event)
        if self.prio >= PR_WFP3 and self._refresh_priorities(now) != 0:
            return -1
        if self.nrun > 0 and self.by_end[0].end <= now and self._apply_corrections(now) != 0:
            return -1
        if self.no_backfill:
            return self._quick_pass(now)
        if (self.workers > 1 and self.pool_threads > 0 and self.npend >= self.parallel_min_queue
                and self.last_full_wall_ns >= self.parallel_min_wall_ns):
            rc = self._full_pass_parallel(now)
        else:
            rc = self._full_pass_sequential(now)
        if self.workers > 1:
            # the pass's own measured wall time (reading the clock costs ~10 ns: once per pass end)
            self.last_full_wall_ns = <int64_t>(self.last_wall_ticks * (_NS_PER_TICK if PBF_HAVE_TSC else 1.0))
        return rc

    cdef inline int _begin_full_pass(self) noexcept nogil:
        # what every full pass does first, sequential or parallel: scratch space, the clock, a fresh
        # per-pass profile state (monotone: a start now clears units only before its end; a
        # reservation takes units from the future and breaks it), last pass's plans forgotten
        cdef int64_t p
        if self._ensure_scratch() != 0 or self._clock_start() != 0:
            return -1
        prof_start_pass(&self.prof, self.bf_window, self.bf_resolution)
        for p in range(self.nlast_reserved):
            self.j_resv[self.last_reserved[p]] = -1
        self.nlast_started = 0
        self.nlast_reserved = 0
        return 0

    cdef inline bint _can_resume(self, int64_t now) noexcept nogil:
        # The last full pass can be continued instead of run again when nothing it decided can
        # come out differently: no job started or ended since (its own starts aside) and no
        # estimate changed; every arrival since is queued behind its jobs (static priority); no
        # slot boundary of its profile has been reached (the profile at `now` is the same but for
        # where slot 0 begins); it started nothing after its first blocked job (a backfill start
        # would change the units a fresh pass gives the reservations made before it); and nothing
        # depends on how many jobs are tested (free clock, no max_job_test, no window, no SJBF
        # phase). Every job it left queued then fails again -- a job that could not start at the
        # last pass cannot start later on the same profile, and each reservation comes out the
        # same -- so a fresh pass would repeat its decisions and only test the new arrivals.
        return (self.resume and self.rs_valid and self.rs_version == self.run_version and self.clock == CK_FREE
                and self.max_job_test < 0 and self.bf_window == 0 and not self.sjbf
                and self.prio < PR_WFP3 and now >= self.rs_time and self.npend >= self.rs_npend
                and (self.prof.s_next[0] == -1 or self.prof.s_begin[self.prof.s_next[0]] > now))

    cdef inline int _full_pass_sequential(self, int64_t now) noexcept nogil:
        cdef int64_t t0 = self._pass_clock(), p, q, j, k, d, t, c0, lim, queue = self.npend
        cdef int64_t depth = 0, started = 0, resv = 0, resv_left = self.resv_max, phase2 = -1
        cdef int32_t si = 0
        cdef bint blocked = False, backfilled = False
        cdef int64_t first_start = -1
        cdef int ex = EX_END
        cdef bint built = False
        if self._can_resume(now):
            # continue the last pass: its queued jobs count as tested, its reservations stand
            if self._ensure_scratch() != 0:
                return -1
            self.prof.s_begin[0] = now
            self.nlast_started = 0
            p = depth = self.rs_npend
            resv = self.rs_resv
            resv_left = self.rs_resv_left
            blocked = self.rs_blocked
            built = True
            self.resumed_passes += 1
        else:
            if self._begin_full_pass() != 0:
                return -1
            p = 0
        while p < self.npend:
            if self.sjbf and resv_left == 0:
                phase2 = p
                break
            if resv_left == 0 and built and self.prof.s_cnt[0] == 0:
                # nothing is free now and no reservation is left: every remaining job fails its
                # test at once
                ex = self._count_rest(self.npend - p, prof_live_slots(&self.prof), &depth)
                break
            j = self.pend[p].job
            k = self.pend[p].units
            d = self.pend[p].est
            p += 1
            if self.max_job_test >= 0 and depth >= self.max_job_test:
                ex = EX_MAX_JOB_TEST
                break
            if self.clock != CK_FREE and not self._charge_test(prof_live_slots(&self.prof) if built else 1):
                ex = EX_BUDGET
                break
            depth += 1
            if not built:
                # Until a job does not fit now, the profile is not needed: with no reservation the
                # future only has more free units, so "fits now" is the free count and the unit
                # choice is the lowest free units -- exactly what the profile would give.
                if k <= self.free_cnt:
                    _copy(self.prof.cand, self.free_now, self.W)
                    _zero(self.prof.chosen, self.W)
                    _take_lowest(self.prof.cand, self.prof.chosen, k, self.W)
                    if self._start(j, now) != 0:
                        return -1
                    self.pend[p - 1].job = -1
                    if first_start < 0:
                        first_start = p - 1
                    self.j_how[j] = HOW_BACKFILL if blocked else HOW_MAIN
                    backfilled = backfilled or blocked
                    started += 1
                    if self._note_started(j) != 0:
                        return -1
                    continue
                if self._build_profile(now) != 0:
                    return -1
                built = True
            if resv_left == 0:
                # no reservation left: only "can it start now?"; the free count rejects most at once
                c0 = self.prof.s_cnt[0]
                if k > c0 or prof_known_misfit(&self.prof, k, d):
                    blocked = True
                    if self.clock == CK_FREE:
                        # and the jobs after it too, while they are rejected the same way (nothing
                        # to charge; the loop's checks resume at the first that needs a search)
                        lim = self.npend
                        if self.max_job_test >= 0 and p + self.max_job_test - depth < lim:
                            lim = p + self.max_job_test - depth
                        q = p
                        while q < lim and (self.pend[q].units > c0 or prof_known_misfit(
                                &self.prof, self.pend[q].units, self.pend[q].est)):
                            q += 1
                        depth += q - p
                        p = q
                    continue
                t = prof_find_start(&self.prof, k, d, now, True, &si)
                if t < 0:
                    prof_note_misfit(&self.prof, k, d)
            else:
                t = prof_find_start(&self.prof, k, d, now, False, &si)
            if t == now:
                prof_choose(&self.prof, k, t, d, si, now)
                if prof_commit(&self.prof, k, t, d, si) != 0 or self._start(j, now) != 0:
                    return -1
                self.pend[p - 1].job = -1
                if first_start < 0:
                    first_start = p - 1
                self.j_how[j] = HOW_BACKFILL if blocked else HOW_MAIN
                backfilled = backfilled or blocked
                started += 1
                if self._note_started(j) != 0:
                    return -1
            elif t > now and resv_left != 0:
                prof_choose(&self.prof, k, t, d, si, now)
                if prof_commit(&self.prof, k, t, d, si) != 0:
                    return -1
                self.prof.monotone = False
                if prof_note_resv(&self.prof, t, prof_round_up(&self.prof, t + d)) != 0:
                    return -1
                self.j_resv[j] = t
                if self.j_resv_min[j] < 0 or t < self.j_resv_min[j]:
                    self.j_resv_min[j] = t
                if self._note_reserved(j) != 0:
                    return -1
                resv += 1
                if resv_left > 0:
                    resv_left -= 1
                blocked = True
            else:
                blocked = True
        if phase2 >= 0 and ex == EX_END and not built:
            if self._build_profile(now) != 0:
                return -1
            built = True
        if phase2 >= 0 and ex == EX_END:
            # EASY-SJBF: the jobs after the reserved ones are tried shortest estimate first
            ex = self._sjbf_phase(&self.prof, now, phase2, &depth, &started)
            if ex < 0:
                return -1
        if started:
            if phase2 >= 0:
                self._compact_pending()
            else:
                self._compact_marked(first_start)
        self.rs_valid = ex == EX_END and phase2 < 0 and built and not backfilled
        if self.rs_valid:
            self.rs_version = self.run_version
            self.rs_npend = self.npend
            self.rs_resv = resv
            self.rs_resv_left = resv_left
            self.rs_blocked = blocked
            self.rs_time = now
        self.last_duration_us = self._clock_duration_us() if self.clock != CK_FREE else 0
        self.last_reeval = 0
        self.last_conflicts = 0
        self.last_inversions = 0
        if self.clock == CK_MODEL:
            self._model_tests_range()
        else:
            self.last_tests_max = -1
            self.last_tests_min = -1
        return self._record(now, PK_FULL, queue, depth, started, resv, ex, self._pass_clock() - t0,
                            prof_live_slots(&self.prof) if built else 0)

    cdef int _sjbf_phase(self, Prof* P, int64_t now, int64_t first, int64_t* depth, int64_t* started) noexcept nogil:
        cdef int64_t n = self.npend - first, i, j, k, d, t, a, b, x
        cdef int32_t si = 0
        cdef EndKey* order
        if n <= 0:
            return EX_END
        if _grow(<void**>&self.ends, &self.ends_cap, n, sizeof(EndKey)) != 0:
            return -1
        order = self.ends
        for i in range(n):
            # key: (estimate or a chooser's rank, queue position): the position keeps priority
            # order among equals
            order[i].end = self.j_bfkey[self.pend[first + i].job] if self.bf_keyed else self.pend[first + i].est
            order[i].job = first + i
        qsort(order, n, sizeof(EndKey), _cmp_endkey)
        for i in range(n):
            if self.max_job_test >= 0 and depth[0] >= self.max_job_test:
                return EX_MAX_JOB_TEST
            if self.clock != CK_FREE and not self._charge_test(prof_live_slots(P)):
                return EX_BUDGET
            j = self.pend[order[i].job].job
            k = self.pend[order[i].job].units
            d = self.pend[order[i].job].est
            depth[0] += 1
            if k > P.s_cnt[0] or prof_known_misfit(P, k, d):
                continue
            t = prof_find_start(P, k, d, now, True, &si)
            if t < 0:
                prof_note_misfit(P, k, d)
            elif t == now:
                prof_choose(P, k, t, d, si, now)
                _copy(self.prof.chosen, P.chosen, self.W)
                if prof_commit(P, k, t, d, si) != 0 or self._start(j, now) != 0:
                    return -1
                self.j_how[j] = HOW_BACKFILL
                started[0] += 1
                if self._note_started(j) != 0:
                    return -1
        return EX_END

    # ------------------------------------------------------------------ clock and budget
    cdef inline int _clock_start(self) noexcept nogil:
        cdef int64_t i, n = self.workers if self.workers > 0 else 1
        if self.clock == CK_WALL:
            self.pass_t0 = _now_ns()
        if self.clock != CK_MODEL:
            return 0                 # only the model clock keeps per-worker accounts
        if self.m_n < n:
            free(self.m_cost)
            free(self.m_tests)
            self.m_cost = <int64_t*>calloc(n, sizeof(int64_t))
            self.m_tests = <int64_t*>calloc(n, sizeof(int64_t))
            if self.m_cost == NULL or self.m_tests == NULL:
                self.m_n = 0
                return -1
            self.m_n = n
        for i in range(n):
            self.m_cost[i] = 0
            self.m_tests[i] = 0
        return 0

    cdef bint _charge_test(self, int64_t slots) noexcept nogil:
        # May the next job be tested? If so, charge the test. Model clock: the job goes to the
        # modelled worker with the least accumulated cost (the first when tied), as threads taking
        # the next job from a shared queue would; the pass stops once even that worker is over budget.
        cdef int64_t w = 0, i, n
        if self.clock == CK_FREE:
            return True
        if self.clock == CK_WALL:
            return not (self.bf_max_time_us > 0 and
                        (_now_ns() - self.pass_t0) * _NS_PER_TICK >= self.bf_max_time_us * 1000.0)
        n = self.workers if self.workers > 0 else 1
        for i in range(1, n):
            if self.m_cost[i] < self.m_cost[w]:
                w = i
        if self.bf_max_time_us > 0 and self.m_cost[w] >= self.bf_max_time_us:
            return False
        self.m_cost[w] += self.cost_test_us + self.cost_slot_us * slots
        self.m_tests[w] += 1
        return True

    cdef int _count_rest(self, int64_t q, int64_t slots, int64_t* depth) noexcept nogil:
        # The remaining q jobs all fail their test at once (nothing is free now, no reservation
        # left): count them as tested, and charge them, exactly as testing them one by one would.
        # Returns the exit reason.
        if self.clock == CK_FREE:
            if self.max_job_test >= 0 and depth[0] + q > self.max_job_test:
                depth[0] = self.max_job_test
                return EX_MAX_JOB_TEST
            depth[0] += q
            return EX_END
        while q > 0:
            if self.max_job_test >= 0 and depth[0] >= self.max_job_test:
                return EX_MAX_JOB_TEST
            if not self._charge_test(slots):
                return EX_BUDGET
            depth[0] += 1
            q -= 1
        return EX_END

    cdef inline void _model_tests_range(self) noexcept nogil:
        cdef int64_t i, n = self.workers if self.workers > 0 else 1
        self.last_tests_max = -1
        self.last_tests_min = -1
        if self.clock == CK_MODEL and self.m_n >= n:
            self.last_tests_max = self.m_tests[0]
            self.last_tests_min = self.m_tests[0]
            for i in range(n):
                if self.m_tests[i] > self.last_tests_max:
                    self.last_tests_max = self.m_tests[i]
                if self.m_tests[i] < self.last_tests_min:
                    self.last_tests_min = self.m_tests[i]

    cdef inline int64_t _clock_duration_us(self) noexcept nogil:
        # the pass's charged duration: the busiest modelled worker, or the measured time
        cdef int64_t i, mx = 0, n = self.workers if self.workers > 0 else 1
        if self.clock == CK_MODEL:
            for i in range(n):
                if self.m_cost[i] > mx:
                    mx = self.m_cost[i]
            return mx
        if self.clock == CK_WALL:
            return <int64_t>((_now_ns() - self.pass_t0) * _NS_PER_TICK / 1000.0)
        return 0

    # ------------------------------------------------------------------ the parallel pass
    cdef int _full_pass_parallel(self, int64_t now) noexcept nogil:
        # Ordered commit (DESIGN §5): workers evaluate jobs speculatively on private, possibly stale
        # copies of the profile; results commit strictly in queue order, each by the worker that
        # evaluated it, on its copy brought up to date with the commit log. The commit repeats the
        # sequential step and skips only what the speculation proves: a job that could not start (or
        # had no start in the window) on an older copy cannot on the newer one, because a pass only
        # removes free units. Hence the same decisions and statistics as the sequential pass.
        cdef int64_t t0 = _now_ns(), queue = self.npend, p, cap, i, n = self.workers
        self.rs_valid = False
        cdef int64_t slots
        cdef int ex
        if self._begin_full_pass() != 0:
            return -1
        if self._build_profile(now) != 0:
            return -1
        self.pp_limit = self.npend if self.max_job_test < 0 else min(self.npend, self.max_job_test)
        # every job places at most once; a start needs a free unit
        cap = self.pp_limit if self.resv_max < 0 else min(self.pp_limit, self.free_cnt + self.resv_max)
        if self._log_reserve(cap + 1) != 0:
            return -1
        if self._ring_reserve(2 * n if n >= 2 else 4) != 0:
            return -1
        self.pp_now = now
        self.pp_next = 0
        self.pp_commit = 0
        self.pp_committer = 0
        self.pp_stop = INF
        self.pp_phase2 = -1
        self.pp_error = 0
        self.pp_depth = 0
        self.pp_started = 0
        self.pp_resv = 0
        self.pp_resv_left = self.resv_max
        self.pp_reeval = 0
        self.pp_conflicts = 0
        self.pp_inversions = 0
        self.pp_low = 0
        if self.commit_eager:
            if _grow(<void**>&self.pp_committed, &self.pp_committed_cap, self.pp_limit + 1, sizeof(int8_t)) != 0:
                return -1
            memset(self.pp_committed, 0, self.pp_limit + 1)
        self.pp_blocked = False
        self.pp_built = False
        self.pp_ex = EX_END
        self.nlog = 0
        for i in range(n):
            self.w_tests[i] = 0
        # wake the pool, work as worker 0, wait for the others
        pthread_mutex_lock(&self.pool_mu)
        self.pool_gen += 1
        self.pool_finished = 0
        pthread_cond_broadcast(&self.pool_work)
        pthread_mutex_unlock(&self.pool_mu)
        self._pass_worker(0)
        pthread_mutex_lock(&self.pool_mu)
        while self.pool_finished < self.pool_threads:
            pthread_cond_wait(&self.pool_done, &self.pool_mu)
        pthread_mutex_unlock(&self.pool_mu)
        if self.pp_error:
            return -1
        ex = self.pp_ex
        if self.pp_stop == INF and self.pp_limit < self.npend:
            ex = EX_MAX_JOB_TEST      # the sequential pass stops at the first job past max_job_test
        # worker 0's profile, brought fully up to date, is the pass's final profile
        if self._catch_up(&self.wprof[0], &self.w_seen[0], 0) != 0:
            return -1
        if self.pp_phase2 >= 0 and ex == EX_END:
            self.pp_built = True      # the sequential pass builds its profile for this phase
            ex = self._sjbf_phase(&self.wprof[0], now, self.pp_phase2, &self.pp_depth, &self.pp_started)
            if ex < 0:
                return -1
        slots = prof_live_slots(&self.wprof[0]) if self.pp_built else 0
        if self.pp_started:
            self._compact_pending()
        self.last_duration_us = self._clock_duration_us()
        self.last_reeval = self.pp_reeval
        self.last_conflicts = self.pp_conflicts
        self.last_inversions = self.pp_inversions
        self._model_tests_range()
        if self.clock != CK_MODEL:
            # the real threads' share of the speculative tests
            self.last_tests_max = self.w_tests[0]
            self.last_tests_min = self.w_tests[0]
            for i in range(self.workers):
                self.w_tests_total[i] += self.w_tests[i]
                if self.w_tests[i] > self.last_tests_max:
                    self.last_tests_max = self.w_tests[i]
                if self.w_tests[i] < self.last_tests_min:
                    self.last_tests_min = self.w_tests[i]
        return self._record(now, PK_FULL, queue, self.pp_depth, self.pp_started, self.pp_resv, ex,
                            _now_ns() - t0, slots)

    cdef int _log_reserve(self, int64_t cap) noexcept nogil:
        cdef int64_t c
        if cap <= self.log_cap:
            return 0
        c = self.log_cap
        if _grow(<void**>&self.log_t, &c, cap, sizeof(int64_t)) != 0: return -1
        c = self.log_cap
        if _grow(<void**>&self.log_d, &c, cap, sizeof(int64_t)) != 0: return -1
        c = self.log_cap
        if _grow(<void**>&self.log_k, &c, cap, sizeof(int64_t)) != 0: return -1
        c = self.log_cap
        if _grow(<void**>&self.log_resv, &c, cap, sizeof(int8_t)) != 0: return -1
        free(self.log_bits)
        self.log_bits = <uint64_t*>malloc(<size_t>(c * self.W) * sizeof(uint64_t))
        if self.log_bits == NULL:
            self.log_cap = 0
            return -1
        self.log_cap = c
        return 0

    cdef int _catch_up(self, Prof* P, int64_t* seen, int64_t wid) noexcept nogil:
        # ReceiveUpdate: apply the log entries this copy has not seen
        cdef int64_t n = pbf_load(&self.nlog), e
        e = seen[0]
        while e < n:
            if prof_apply(P, self.log_k[e], self.log_t[e], self.log_d[e], self.log_bits + e * self.W,
                          self.log_resv[e]) != 0:
                return -1
            e += 1
        seen[0] = n
        return 0

    cdef int _log_append(self, Prof* P, int64_t k, int64_t t, int64_t d, bint resv) noexcept nogil:
        # BroadcastUpdate: publish a placement (only the committer writes; readers acquire nlog)
        cdef int64_t e = self.nlog
        self.log_t[e] = t
        self.log_d[e] = d
        self.log_k[e] = k
        self.log_resv[e] = resv
        _copy(self.log_bits + e * self.W, P.chosen, self.W)
        pbf_store(&self.nlog, e + 1)
        return 0

    cdef int _ring_reserve(self, int64_t n) noexcept nogil:
        # the ring of speculative results: n entries, none holding a result
        cdef int64_t i
        if self.sp_n != n:
            free(self.sp_t)
            free(self.sp_mode)
            free(self.sp_seen)
            free(self.sp_ready)
            free(self.sp_cand)
            self.sp_t = <int64_t*>malloc(n * sizeof(int64_t))
            self.sp_mode = <int64_t*>malloc(n * sizeof(int64_t))
            self.sp_seen = <int64_t*>malloc(n * sizeof(int64_t))
            self.sp_ready = <int64_t*>malloc(n * sizeof(int64_t))
            self.sp_cand = <uint64_t*>malloc(<size_t>(n * max(1, self.W)) * sizeof(uint64_t))
            self.sp_n = n
            if (self.sp_t == NULL or self.sp_mode == NULL or self.sp_seen == NULL or self.sp_ready == NULL
                    or self.sp_cand == NULL):
                self.sp_n = 0
                return -1
        for i in range(n):
            self.sp_ready[i] = -1
        return 0

    cdef void _pass_worker(self, int64_t wid) noexcept nogil:
        cdef Prof* P = &self.wprof[wid]
        cdef int64_t seen = 0
        if prof_copy(P, &self.prof) != 0 or prof_ensure_scratch(P, self.nrun + 2 * self.npend + 8) != 0:
            self._abandon_pass()
        if self.commit_eager:
            self._pass_worker_eager(P, wid, &seen)
        else:
            self._pass_worker_ordered(P, wid, &seen)
        self.w_seen[wid] = seen

    cdef void _abandon_pass(self) noexcept nogil:
        # out of memory somewhere: every worker stops, and the pass reports the error
        self.pp_error = 1
        pbf_store(&self.pp_stop, 0)

    cdef void _speculate(self, Prof* P, int64_t idx, int64_t wid, int64_t* seen,
                         int64_t* t_out, int64_t* mode_out, uint64_t* cand) noexcept nogil:
        # the speculative test of queue position idx on this worker's copy, which may miss the
        # latest commits; `cand` (if not NULL) gets the candidates of an earliest start found
        cdef int64_t k = self.pend[idx].units, d = self.pend[idx].est, t = -1, mode = SPEC_FULL
        cdef int64_t now = self.pp_now
        cdef int32_t si = 0
        if not self.pp_error:
            if not self.stale_speculation and self._catch_up(P, seen, wid) != 0:
                self._abandon_pass()
            elif pbf_load(&self.pp_resv_left) == 0:
                mode = SPEC_NOW
                if k <= P.s_cnt[0] and not prof_known_misfit(P, k, d):
                    t = prof_find_start(P, k, d, now, True, &si)
                    if t < 0:
                        prof_note_misfit(P, k, d)
            else:
                t = prof_find_start(P, k, d, now, False, &si)
                if t >= 0 and cand != NULL:
                    _copy(cand, P.cand, self.W)     # what the commit's AND test starts from
            self.w_tests[wid] += 1
        t_out[0] = t
        mode_out[0] = mode

    cdef void _pass_worker_ordered(self, Prof* P, int64_t wid, int64_t* seen) noexcept nogil:
        # Take the next job, speculate, leave the result in the ring; whoever finds the next
        # result in queue order ready commits it (and every ready one after it) on its own copy.
        # Nobody waits for a turn: a worker that cannot commit takes another job, as long as the
        # ring has room (at most sp_n jobs between the commit point and the next job taken).
        cdef int64_t idx, stop, s, n = self.sp_n
        while True:
            self._help_commit(P, wid, seen)
            stop = pbf_load(&self.pp_stop)
            if stop > self.pp_limit:
                stop = self.pp_limit
            if pbf_load(&self.pp_commit) >= stop:
                return
            idx = pbf_load(&self.pp_next)
            if idx >= stop or idx - pbf_load(&self.pp_commit) >= n:
                sched_yield()           # nothing to take until the commits move on
                continue
            if not pbf_cas(&self.pp_next, idx, idx + 1):
                continue
            s = idx % n
            self._speculate(P, idx, wid, seen, &self.sp_t[s], &self.sp_mode[s], self.sp_cand + s * self.W)
            self.sp_seen[s] = seen[0]   # the log entries the speculation saw
            pbf_store(&self.sp_ready[s], idx)

    cdef void _help_commit(self, Prof* P, int64_t wid, int64_t* seen) noexcept nogil:
        # commit, in queue order, every result ready at the commit point, if no other worker is
        # doing so; a result made ready just after the holder looked is committed by the next
        # call of any worker (each calls this between jobs until the pass is done)
        cdef int64_t c, s, n = self.sp_n
        while True:
            c = pbf_load(&self.pp_commit)
            if c >= self.pp_limit or c >= pbf_load(&self.pp_stop) or pbf_load(&self.sp_ready[c % n]) != c:
                return
            if not pbf_cas(&self.pp_committer, 0, 1):
                return
            c = pbf_load(&self.pp_commit)
            while c < self.pp_limit and c < pbf_load(&self.pp_stop) and pbf_load(&self.sp_ready[c % n]) == c:
                s = c % n
                if (self.pp_error or self._catch_up(P, seen, wid) != 0
                        or self._commit_step(P, c, self.sp_t[s], self.sp_mode[s], self.sp_seen[s],
                                             self.sp_cand + s * self.W) != 0):
                    self._abandon_pass()
                    break
                seen[0] = self.nlog     # this copy holds what it just committed
                c += 1
                pbf_store(&self.pp_commit, c)
            pbf_store(&self.pp_committer, 0)

    cdef void _pass_worker_eager(self, Prof* P, int64_t wid, int64_t* seen) noexcept nogil:
        # the paper's order: first done, first committed, one commit at a time
        cdef int64_t idx, t, mode
        while True:
            idx = pbf_fetch_add(&self.pp_next, 1)
            if idx >= self.pp_limit or idx >= pbf_load(&self.pp_stop):
                return
            self._speculate(P, idx, wid, seen, &t, &mode, NULL)
            pthread_mutex_lock(&self.commit_mu)
            if not self.pp_error:
                if self._catch_up(P, seen, wid) != 0 or self._commit_step_eager(P, idx, t, mode) != 0:
                    self._abandon_pass()
                seen[0] = self.nlog
            pthread_mutex_unlock(&self.commit_mu)

    cdef int _commit_step(self, Prof* P, int64_t p, int64_t spec, int64_t mode, int64_t spec_seen,
                          const uint64_t* spec_cand) noexcept nogil:
        # One iteration of the sequential pass's loop for queue position p, on the up-to-date copy
        # P, in queue order. Mirrors _full_pass_sequential (same decisions, same counts). A
        # speculative earliest start is confirmed by the AND test (DESIGN §5) against the log
        # entries committed since the speculation (from spec_seen on), and searched again only if
        # that leaves too few units.
        cdef int64_t j, k, d, t, q, now = self.pp_now
        cdef int32_t si = 0
        cdef bint overlap = False
        if self.sjbf and self.pp_resv_left == 0:
            self.pp_phase2 = p
            pbf_store(&self.pp_stop, p)
            return 0
        if self.pp_resv_left == 0 and self.pp_built and P.s_cnt[0] == 0:
            self.pp_ex = self._count_rest(self.npend - p, prof_live_slots(P), &self.pp_depth)
            pbf_store(&self.pp_stop, p)
            return 0
        j = self.pend[p].job
        k = self.pend[p].units
        d = self.pend[p].est
        if not self._charge_test(prof_live_slots(P) if self.pp_built else 1):
            self.pp_ex = EX_BUDGET
            pbf_store(&self.pp_stop, p)
            return 0
        self.pp_depth += 1
        if not self.pp_built:
            if k <= P.s_cnt[0]:
                # no reservation yet: the lowest free units, as the sequential pass takes them
                _copy(P.cand, P.s_bits, self.W)
                _zero(P.chosen, self.W)
                _take_lowest(P.cand, P.chosen, k, self.W)
                return self._commit_start(P, j, k, d, 0)
            self.pp_built = True
        if self.pp_resv_left == 0:
            if k > P.s_cnt[0] or spec != now:
                self.pp_blocked = True       # could not start now on an older copy: cannot now
                return 0
            t = prof_find_start(P, k, d, now, True, &si)
            # a speculative "fits now" is checked again on the up-to-date copy (one AND per
            # reservation); a conflict is when the commits it had not seen changed the answer
            self.pp_reeval += 1
            if t != spec:
                self.pp_conflicts += 1
        elif mode == SPEC_FULL and spec < 0:
            self.pp_blocked = True           # no start within the window on an older copy either
            return 0
        else:
            t = -1
            if mode == SPEC_FULL:
                t = self._confirm(P, k, d, spec, spec_cand, spec_seen, &si, &overlap)
                if overlap:
                    self.pp_conflicts += 1
            if t < 0:
                self.pp_reeval += 1
                if mode == SPEC_FULL and not P.monotone:
                    # no start before the speculative one: search from the slot holding it
                    t = self._search_from(P, k, d, spec, &si)
                else:
                    t = prof_find_start(P, k, d, now, False, &si)
        if t == now:
            prof_choose(P, k, t, d, si, now)
            return self._commit_start(P, j, k, d, si)
        if t > now and self.pp_resv_left != 0:
            prof_choose(P, k, t, d, si, now)
            return self._commit_reservation(P, j, k, t, d, si)
        self.pp_blocked = True
        return 0

    cdef int64_t _search_from(self, Prof* P, int64_t k, int64_t d, int64_t t, int32_t* at) noexcept nogil:
        # The earliest start on the up-to-date copy P is not before t, the earliest on an older
        # copy (every start feasible now was feasible then, and one inside a slot of the older copy
        # would have made that slot's beginning feasible): the window search may begin at the last
        # slot beginning at or before t, with the same answer and candidates as from slot 0.
        cdef int32_t i = 0, prev = -1
        while P.s_next[i] != -1 and P.s_begin[P.s_next[i]] <= t:
            prev = i
            i = P.s_next[i]
        return prof_find_start_window(P, k, d, self.pp_now, i, prev, at)

    cdef int64_t _confirm(self, Prof* P, int64_t k, int64_t d, int64_t t, const uint64_t* spec_cand,
                          int64_t seen, int32_t* at, bint* overlap) noexcept nogil:
        # The reconciliation of DESIGN §5. spec_cand holds the units free throughout [t, t + d) on
        # the copy as it was at the speculation, which had applied the first `seen` log entries. A
        # pass only removes free units, so the earliest start on the up-to-date copy is not before
        # t; and the units free throughout the window now are spec_cand minus the units of the newer
        # entries overlapping it. If k remain, t is the sequential pass's answer and those units
        # its candidates (a slot beginning still: were it merged into the slot before, the job
        # would have fitted earlier on the older copy too). Returns t, or -1 to search again.
        cdef int64_t W = self.W, e, w, stop = prof_round_up(P, t + d), n = self.nlog
        cdef int32_t i = 0, prev = -1
        cdef uint64_t* bits
        _copy(P.cand, spec_cand, W)
        for e in range(seen, n):
            if self.log_t[e] < stop and prof_round_up(P, self.log_t[e] + self.log_d[e]) > t:
                bits = self.log_bits + e * W
                if w_any_common(P.cand, bits, W):
                    overlap[0] = True
                    for w in range(W):
                        P.cand[w] &= ~bits[w]
        if overlap[0] and w_popcount(P.cand, W) < k:
            return -1
        while i != -1 and P.s_begin[i] < t:
            prev = i
            i = P.s_next[i]
        if i == -1 or P.s_begin[i] != t:
            return -1                     # (not reached, by the argument above; searching is safe)
        at[0] = i
        P.prev_of_at = prev
        return t

    cdef int _commit_reservation(self, Prof* P, int64_t j, int64_t k, int64_t t, int64_t d,
                                 int32_t si) noexcept nogil:
        # place the units in P.chosen for job j from t on, publish it, count it
        if prof_commit(P, k, t, d, si) != 0:
            return -1
        P.monotone = False
        if prof_note_resv(P, t, prof_round_up(P, t + d)) != 0:
            return -1
        self._log_append(P, k, t, d, True)
        self.j_resv[j] = t
        if self.j_resv_min[j] < 0 or t < self.j_resv_min[j]:
            self.j_resv_min[j] = t
        if self._note_reserved(j) != 0:
            return -1
        self.pp_resv += 1
        if self.pp_resv_left > 0:
            pbf_store(&self.pp_resv_left, self.pp_resv_left - 1)
        self.pp_blocked = True
        return 0

    cdef int _commit_step_eager(self, Prof* P, int64_t p, int64_t spec, int64_t mode) noexcept nogil:
        # Eager commit of queue position p (commit order = completion order): the sequential step on
        # the up-to-date copy, without the shortcuts that rely on queue order (every job is tested
        # on its own). A placement made while a higher-priority job of this pass has not committed
        # yet is a priority inversion.
        cdef int64_t j = self.pend[p].job, k = self.pend[p].units, d = self.pend[p].est, t
        cdef int64_t now = self.pp_now, before = self.pp_started + self.pp_resv
        cdef int32_t si = 0
        cdef int rc = 0
        if not self._charge_test(prof_live_slots(P) if self.pp_built else 1):
            self.pp_ex = EX_BUDGET
            pbf_store(&self.pp_stop, 0)      # no further job is tested
            return 0
        self.pp_depth += 1
        if not self.pp_built and k <= P.s_cnt[0]:
            _copy(P.cand, P.s_bits, self.W)
            _zero(P.chosen, self.W)
            _take_lowest(P.cand, P.chosen, k, self.W)
            rc = self._commit_start(P, j, k, d, 0)
        else:
            if not self.pp_built:
                self.pp_built = True
            if self.pp_resv_left == 0 and (k > P.s_cnt[0] or (mode == SPEC_NOW and spec != now)
                                          or (mode == SPEC_FULL and spec != now)):
                self.pp_blocked = True
            elif self.pp_resv_left != 0 and mode == SPEC_FULL and spec < 0:
                self.pp_blocked = True
            else:
                t = prof_find_start(P, k, d, now, self.pp_resv_left == 0, &si)
                self.pp_reeval += 1
                if t != spec:
                    self.pp_conflicts += 1
                if t == now:
                    prof_choose(P, k, t, d, si, now)
                    rc = self._commit_start(P, j, k, d, si)
                elif t > now and self.pp_resv_left != 0:
                    prof_choose(P, k, t, d, si, now)
                    rc = self._commit_reservation(P, j, k, t, d, si)
                else:
                    self.pp_blocked = True
        if rc != 0:
            return -1
        if self.pp_started + self.pp_resv > before and p > self.pp_low:
            self.pp_inversions += 1
        self.pp_committed[p] = 1
        while self.pp_low < self.pp_limit and self.pp_committed[self.pp_low]:
            self.pp_low += 1
        return 0

    cdef int _commit_start(self, Prof* P, int64_t j, int64_t k, int64_t d, int32_t si) noexcept nogil:
        P.prev_of_at = -1
        if prof_commit(P, k, self.pp_now, d, si) != 0:
            return -1
        self._log_append(P, k, self.pp_now, d, False)
        _copy(self.prof.chosen, P.chosen, self.W)
        if self._start(j, self.pp_now) != 0:
            return -1
        self.j_how[j] = HOW_BACKFILL if self.pp_blocked else HOW_MAIN
        self.pp_started += 1
        return self._note_started(j)

    cdef void _pool_loop(self, int64_t wid, int64_t gen) noexcept nogil:
        # gen: the generation when the pool started -- not when this thread first runs, which may be
        # after the first pass was posted (that wake-up would be lost)
        pthread_mutex_lock(&self.pool_mu)
        while True:
            while self.pool_gen == gen and not self.pool_shutdown:
                pthread_cond_wait(&self.pool_work, &self.pool_mu)
            if self.pool_shutdown:
                break
            gen = self.pool_gen
            pthread_mutex_unlock(&self.pool_mu)
            self._pass_worker(wid)
            pthread_mutex_lock(&self.pool_mu)
            if self.pool_gen == gen:        # (a late finish of an older task does not count)
                self.pool_finished += 1
                if self.pool_finished == self.pool_threads:
                    pthread_cond_broadcast(&self.pool_done)
        pthread_mutex_unlock(&self.pool_mu)

    def _pool_thread(self, int64_t wid, int64_t gen):
        with nogil:
            self._pool_loop(wid, gen)

    def start_pool(self, int workers):
        if _NS_PER_TICK == 0.0:
            _calibrate()
        self._start_pool(workers)

    def _start_pool(self, int workers):
        """Start ``workers - 1`` threads (the caller is worker 0); passes with at least
        ``parallel_min_queue`` queued jobs then run in parallel, with the same decisions."""
        import threading
        cdef int64_t i
        if workers < 1:
            raise ValueError(f"workers must be >= 1, got {workers}")
        self.stop_pool()
        if self.wprof != NULL:
            for i in range(self.nwprof):
                prof_free(&self.wprof[i])
            free(self.wprof)
            self.wprof = NULL
            self.nwprof = 0
        self.workers = workers
        if workers == 1:
            return
        self.wprof = <Prof*>calloc(workers, sizeof(Prof))
        free(self.w_tests)
        free(self.w_seen)
        self.w_tests = <int64_t*>calloc(workers, sizeof(int64_t))
        self.w_seen = <int64_t*>calloc(workers, sizeof(int64_t))
        free(self.w_tests_total)
        self.w_tests_total = <int64_t*>calloc(workers, sizeof(int64_t))
        if self.wprof == NULL or self.w_tests == NULL or self.w_seen == NULL or self.w_tests_total == NULL:
            raise MemoryError()
        for i in range(workers):
            if prof_init(&self.wprof[i], self.W) != 0:
                raise MemoryError()
            self.nwprof = i + 1
        if not self.pool_sync_ready:
            pthread_mutex_init(&self.commit_mu, NULL)
            pthread_mutex_init(&self.pool_mu, NULL)
            pthread_cond_init(&self.pool_work, NULL)
            pthread_cond_init(&self.pool_done, NULL)
            self.pool_sync_ready = True
        self.pool_shutdown = 0
        self._threads = [threading.Thread(target=self._pool_thread, args=(wid, self.pool_gen),
                                          daemon=True, name=f"pbf-worker-{wid}")
                         for wid in range(1, workers)]
        for th in self._threads:
            th.start()
        self.pool_threads = workers - 1

    def stop_pool(self):
        """Stop the worker threads (idempotent)."""
        if not self._threads:
            return
        with nogil:
            pthread_mutex_lock(&self.pool_mu)
            self.pool_shutdown = 1
            pthread_cond_broadcast(&self.pool_work)
            pthread_mutex_unlock(&self.pool_mu)
        for th in self._threads:
            th.join()
        self._threads = None
        self.pool_threads = 0

    def calibrate(self):
        """Measure the CPU time-stamp counter against the monotonic clock (wall clock mode)."""
        _calibrate()

    def model_tests(self):
        """Model clock: jobs each modelled worker tested in the last full pass."""
        return [self.m_tests[i] for i in range(self.m_n)] if self.m_tests != NULL else []

    def worker_tests_total(self):
        """Jobs each worker thread evaluated, over all parallel passes so far."""
        return [self.w_tests_total[i] for i in range(self.workers)] if self.w_tests_total != NULL else []

    def worker_tests(self):
        """Jobs each worker evaluated in the last parallel pass."""
        return [self.w_tests[i] for i in range(self.workers)] if self.w_tests != NULL else [0]

    # ------------------------------------------------------------------ Python entry points
    def submit(self, int64_t j):
        if self._submit(j) != 0:
            raise MemoryError()
        return int(self.j_state[j])

    def submit_range(self, int64_t first, int64_t n):
        """Submit jobs first .. first+n-1 (benchmark and scenario set-up)."""
        cdef int64_t j
        for j in range(first, first + n):
            if self._submit(j) != 0:
                raise MemoryError()

    def last_pass(self):
        """The last recorded pass: dict of depth, started, reservations, slots, exit, wall_ns."""
        if self.npass == 0 or not self.record_passes:
            return None
        i = self.npass - 1
        if _NS_PER_TICK == 0.0:
            _calibrate()
        cdef PassRec* r = &self.passes[i]
        return {"time": r.time, "queue": r.queue, "depth": r.depth, "started": r.started,
                "reservations": r.resv, "slots": r.slots, "exit": EXIT_REASONS[r.exit],
                "kind": PASS_KINDS[r.kind], "wall_ns": <int64_t>(r.wall * _NS_PER_TICK)}

    def profile_ops(self, int64_t now, const int64_t[::1] units, const int64_t[::1] est, int64_t reps):
        """Benchmark kernel: ``reps`` times, build the profile at ``now`` and find the earliest start of
        every (units, est) pair (no placement). Returns (slots, sum of the starts found) of the last
        round, so a caller can check the work was done."""
        cdef int64_t r, i, n = units.shape[0], total = 0, t
        cdef int32_t si = 0
        cdef int rc = 0
        self.rs_valid = False
        with nogil:
            for r in range(reps):
                prof_start_pass(&self.prof, self.bf_window, self.bf_resolution)
                if self._ensure_scratch() != 0 or self._build_profile(now) != 0:
                    rc = -1
                    break
                total = 0
                for i in range(n):
                    t = prof_find_start(&self.prof, units[i], est[i], now, False, &si)
                    total += t
        if rc != 0:
            raise MemoryError()
        return self.prof.nslots, total

    def finish(self, int64_t j, int64_t now):
        self._finish(j, now)

    def run_pass(self, int64_t now, bint quick=False):
        """One pass at ``now``; returns (started job indices, reserved job indices)."""
        cdef int rc
        self.now = now
        with nogil:
            rc = self._quick_pass(now) if quick else self._full_pass(now)
        if rc != 0:
            raise MemoryError()
        started = np.empty(self.nlast_started, dtype=np.int64)
        reserved = np.empty(self.nlast_reserved, dtype=np.int64)
        cdef int64_t[::1] sv = started
        cdef int64_t[::1] rv = reserved
        cdef int64_t i
        for i in range(self.nlast_started):
            sv[i] = self.last_started[i]
        for i in range(self.nlast_reserved):
            rv[i] = self.last_reserved[i]
        return started, reserved

    def load_trace(self, submit, units, est, run, **columns):
        """Jobs of a replay, in (submit, id) order; run = actual run time (already capped);
        ``columns``: the optional columns of :meth:`add_jobs` (req, user, part, qos)."""
        self.add_jobs(submit, units, est, run, **columns)
        self.next_sub = 0
        if self.hooks and _grow(<void**>&self.fin_buf, &self.fin_cap, self.njobs, sizeof(int64_t)) != 0:
            raise MemoryError()

    # ------------------------------------------------------------------ Python plugins
    def hook_arrivals(self):
        """With ``hooks``: (first, count) of the jobs arriving at the instant handed to Python."""
        cdef int64_t k = self.next_sub
        while k < self.njobs and self.j_submit[k] == self.hook_t:
            k += 1
        return self.next_sub, k - self.next_sub

    def take_finished(self):
        """Jobs finished since the last call (with ``hooks``), in completion order."""
        out = np.empty(self.nfin, dtype=np.int64)
        cdef int64_t i
        for i in range(self.nfin):
            out[i] = self.fin_buf[i]
        self.nfin = 0
        return out

    def set_estimates(self, const int64_t[::1] jobs, const int64_t[::1] est):
        """Estimates of jobs not yet submitted (a Python predictor; checked by the caller)."""
        cdef int64_t i
        for i in range(jobs.shape[0]):
            self.j_est[jobs[i]] = est[i]

    def set_keys(self, const int64_t[::1] jobs, const double[::1] keys):
        """Priority keys (ascending) from a Python priority function; the queue is re-sorted
        before the next pass."""
        cdef int64_t i
        for i in range(jobs.shape[0]):
            self.j_key[jobs[i]] = keys[i]
        self.keys_dirty = True

    def set_bf_keys(self, const int64_t[::1] jobs, const int64_t[::1] keys):
        """Backfill-order keys (ascending) from a Python chooser."""
        cdef int64_t i
        for i in range(jobs.shape[0]):
            self.j_bfkey[jobs[i]] = keys[i]

    def estimates(self):
        """(estimate at submission, current estimate, corrections, requested) per job."""
        n = self.njobs
        out = [np.empty(n, dtype=np.int64) for _ in range(4)]
        cdef int64_t[::1] a0 = out[0], a1 = out[1], a2 = out[2], a3 = out[3]
        cdef int64_t i
        for i in range(n):
            a0[i] = self.j_pred0[i]
            a1[i] = self.j_est[i]
            a2[i] = self.j_ncorr[i]
            a3[i] = self.j_req[i]
        return tuple(out)

    def values_of(self, str column, const int64_t[::1] jobs):
        """``est``, ``start`` or ``end`` of the given jobs (cheap: for the Python plugin hooks)."""
        cdef int64_t* src = self.j_est if column == "est" else (self.j_start if column == "start" else self.j_end)
        if column not in ("est", "start", "end"):
            raise ValueError(column)
        out = np.empty(jobs.shape[0], dtype=np.int64)
        cdef int64_t[::1] v = out
        cdef int64_t i
        for i in range(jobs.shape[0]):
            v[i] = src[jobs[i]]
        return out

    def keys(self):
        """The priority key of every job (as last computed)."""
        out = np.empty(self.njobs)
        cdef double[::1] v = out
        cdef int64_t i
        for i in range(self.njobs):
            v[i] = self.j_key[i]
        return out

    def replay(self, int64_t max_instants=-1):
        """Run the event loop for at most ``max_instants`` instants (-1: to the end).
        Returns True when the trace is done."""
        cdef int rc = 0
        cdef bint done = False
        with nogil:
            rc = self._replay(max_instants, &done)
        if rc != 0:
            raise MemoryError()
        return done

    cdef int _replay(self, int64_t max_instants, bint* done) noexcept nogil:
        cdef int64_t t = 0, count = 0
        cdef bint events
        self.hook_waiting = False
        while max_instants < 0 or count < max_instants:
            if self.hook_resume:
                # Python has seen this instant (arrivals, completions): go on with its arrivals
                self.hook_resume = False
                t = self.hook_t
                events = self.hook_events
                count += 1
            elif self._next_instant(&t, &events, done):
                return 0
            elif self.hooks and ((self.next_sub < self.njobs and self.j_submit[self.next_sub] == t)
                                 or self.npend > 0):
                self.hook_t = t
                self.hook_events = events
                self.hook_resume = True
                self.hook_waiting = True
                done[0] = False
                return 0
            else:
                count += 1
            while self.next_sub < self.njobs and self.j_submit[self.next_sub] == t:
                if self._submit(self.next_sub) != 0:
                    return -1
                self.next_sub += 1
                events = True
            if self.npend == 0:
                continue
            if self.trigger == TR_EVENT:
                if self._full_pass(t) != 0:
                    return -1
            else:
                if t >= self.next_bf:
                    if self._full_pass(t) != 0:
                        return -1
                    # the period runs from the end of the previous pass: its charged duration
                    # (0 with the free clock) delays the next one, as in Slurm
                    self.next_bf = t + (self.last_duration_us + 999999) // 1000000 + self.bf_interval
                elif events:
                    if self._quick_pass(t) != 0:
                        return -1
        done[0] = False
        return 0

    cdef inline bint _next_instant(self, int64_t* tp, bint* events, bint* done) noexcept nogil:
        # move to the next instant and apply its completions; True when the trace is done
        cdef int64_t t, ts, te, tb, j
        ts = self.j_submit[self.next_sub] if self.next_sub < self.njobs else INF
        te = self.heap[0].end if self.nheap > 0 else INF
        tb = INF
        if self.trigger == TR_INTERVAL and self.npend > 0:
            tb = self.next_bf
        t = ts if ts < te else te
        if tb < t:
            t = tb
        if t == INF:
            done[0] = True
            return True
        if t < self.now:       # a timer already due: it fires at the current instant
            t = self.now
        self.now = t
        events[0] = False
        while self.nheap > 0 and self.heap[0].end == t:
            j = self._heap_pop()
            self._finish(j, t)
            events[0] = True
        tp[0] = t
        return False

    # ------------------------------------------------------------------ state read-out
    def job_arrays(self):
        """(state, start, end, how, reason, planned, earliest planned) per job, as numpy arrays."""
        n = self.njobs
        out = [np.empty(n, dtype=np.int64) for _ in range(7)]
        cdef int64_t[::1] a0 = out[0], a1 = out[1], a2 = out[2], a3 = out[3], a4 = out[4], a5 = out[5]
        cdef int64_t[::1] a6 = out[6]
        cdef int64_t i
        for i in range(n):
            a6[i] = self.j_resv_min[i]
            a0[i] = self.j_state[i]
            a1[i] = self.j_start[i]
            a2[i] = self.j_end[i]
            a3[i] = self.j_how[i]
            a4[i] = self.j_reason[i]
            a5[i] = self.j_resv[i]
        return tuple(out)

    def pass_totals(self):
        """Totals over every pass, kept whether or not passes are recorded: ``count``, ``full``,
        ``depth`` (sum), ``depth_max``, ``depth_full`` (sum over full passes), ``wall_ns`` (sum; 0
        unless passes are recorded or threads are used: the clock is read only then),
        ``charged_us_full`` (sum), ``charged_us_max``, ``reevaluations``, ``conflicts``,
        ``inversions``, ``tests_max_worker_full``, ``tests_min_worker_full`` (sums over full passes)
        and ``exit`` (passes per exit reason code)."""
        if _NS_PER_TICK == 0.0:
            _calibrate()
        return {"count": self.npass, "full": self.tot_full, "depth": self.tot_depth,
                "depth_max": self.tot_depth_max, "depth_full": self.tot_depth_full,
                "wall_ns": int(self.tot_wall * _NS_PER_TICK), "charged_us_full": self.tot_charged_full,
                "charged_us_max": self.tot_charged_max, "reevaluations": self.tot_reeval,
                "conflicts": self.tot_conflicts, "inversions": self.tot_inv,
                "tests_max_worker_full": self.tot_tmax_full, "tests_min_worker_full": self.tot_tmin_full,
                "exit": [self.tot_exit[i] for i in range(len(EXIT_REASONS))]}

    def pass_arrays(self):
        """Per-pass records as a dict of numpy arrays (empty when passes are not recorded)."""
        if _NS_PER_TICK == 0.0:
            _calibrate()
        cdef int64_t n = self.npass if self.record_passes else 0, i
        out = {name: np.empty(n, dtype=np.int64) for name in
               ("time", "queue", "depth", "started", "reservations", "slots", "wall_ns", "model_us",
                "reevaluations", "conflicts", "tests_max_worker", "tests_min_worker", "inversions")}
        out["kind"] = np.empty(n, dtype=np.int8)
        out["exit"] = np.empty(n, dtype=np.int8)
        cdef int64_t[::1] t = out["time"], q = out["queue"], d = out["depth"], st = out["started"]
        cdef int64_t[::1] r = out["reservations"], sl = out["slots"], w = out["wall_ns"], mo = out["model_us"]
        cdef int64_t[::1] re = out["reevaluations"], co = out["conflicts"], tx = out["tests_max_worker"], tn = out["tests_min_worker"]
        cdef int64_t[::1] iv = out["inversions"]
        cdef int8_t[::1] k = out["kind"], e = out["exit"]
        cdef PassRec* p
        for i in range(n):
            p = &self.passes[i]
            t[i] = p.time
            q[i] = p.queue
            d[i] = p.depth
            st[i] = p.started
            r[i] = p.resv
            sl[i] = p.slots
            w[i] = <int64_t>(p.wall * _NS_PER_TICK)
            mo[i] = p.model_us
            re[i] = p.reeval
            co[i] = p.conflict
            tx[i] = p.tmax
            tn[i] = p.tmin
            iv[i] = p.inv
            k[i] = p.kind
            e[i] = p.exit
        return out

    def units_of(self, int64_t j):
        """The unit bitmap of running job j (a copy)."""
        arr = np.zeros(self.W, dtype=np.uint64)
        cdef uint64_t[::1] v = arr
        cdef int64_t i
        if self.j_row[j] >= 0:
            for i in range(self.W):
                v[i] = self.pool[<int64_t>self.j_row[j] * self.W + i]
        return arr

    def recorded_units(self):
        """With ``record_units``: every job's units as an (njobs, W) uint64 array (0 if never started)."""
        arr = np.zeros((self.njobs, self.W), dtype=np.uint64)
        cdef uint64_t[:, ::1] v = arr
        cdef int64_t i, w
        if not self.record_units:
            raise ValueError("units were not recorded: set record_units before adding jobs")
        for i in range(self.njobs):
            for w in range(self.W):
                v[i, w] = self.j_bits[i * self.W + w]
        return arr

    @property
    def submitted(self):
        """Replay: how many jobs of the trace have been submitted so far."""
        return self.next_sub

    def free_bitmap(self):
        arr = np.zeros(self.W, dtype=np.uint64)
        cdef uint64_t[::1] v = arr
        cdef int64_t i
        for i in range(self.W):
            v[i] = self.free_now[i]
        return arr

    def pending(self):
        """Queued job indices in priority order."""
        out = np.empty(self.npend, dtype=np.int64)
        cdef int64_t[::1] v = out
        cdef int64_t i
        for i in range(self.npend):
            v[i] = self.pend[i].job
        return out

    def running(self):
        """Running job indices (in no particular order)."""
        out = np.empty(self.nrun, dtype=np.int64)
        cdef int64_t[::1] v = out
        cdef int64_t i
        for i in range(self.nrun):
            v[i] = self.run_list[i]
        return out

    @property
    def n_passes(self):
        return self.npass

    @property
    def free_count(self):
        return self.free_cnt

    @property
    def n_jobs(self):
        return self.njobs
