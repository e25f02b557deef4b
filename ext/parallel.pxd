# The shared state of the parallel pass (DESIGN §5), header only: the worker pool, the ring of
# speculative results waiting for their commit, and the commit log every worker's profile copy
# catches up from. The pass itself is in parallel_pass.pxd.

from libc.stdint cimport uint64_t, int64_t, int8_t
from libc.stdlib cimport malloc, calloc, free

from memory cimport grow
from profile cimport Prof, Hints, prof_init, prof_free
from node_model cimport NodeModel, nm_free_copy
from sync cimport pthread_mutex_t, pthread_cond_t
from words cimport w_copy
from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct WorkerPool:
    Prof* prof                 # one private profile copy per worker (worker 0 = the calling thread)
    int64_t nprof              # copies allocated
    Prof* snap                 # Testing.stale_speculation: per worker, the profile as at the pass start
    int64_t nsnap              # snapshots allocated
    NodeModel* nm              # a node cluster: per worker, a private copy of the pass's node plan
    int64_t nnm                # (worker 0 plans on the state's own model; these copies exist for 1..)
    NodeModel* nmsnap          # Testing.stale_speculation on a node cluster: the plan as at the pass start
    int64_t threads            # threads besides the caller
    int64_t gen                # bumped to post a pass to the threads
    int64_t finished           # threads done with the posted pass
    int64_t shutdown           # 1: the threads exit
    bint idle                  # the posted task is empty (measuring the wake-up round trip)
    bint split                 # the posted task is helping a sequential pass's node searches
    bint sync_ready            # mu, work, done, progress and commit_mu are initialised
    pthread_mutex_t mu         # guards gen, finished, shutdown
    pthread_cond_t work        # signalled when a pass is posted or the pool shuts down
    pthread_cond_t done        # signalled when the last thread finishes a pass
    pthread_cond_t progress    # (with mu) signalled, while a worker sleeps, when a pass moves on
    pthread_mutex_t commit_mu  # eager commit: one commit at a time
    int64_t* tests             # per worker: jobs it evaluated in the last parallel pass
    int64_t* seen              # per worker: log entries its profile has applied
    int64_t* tests_total       # per worker, over every parallel pass


ctypedef struct SpecRing:      # speculative results, slot = queue position % n (ordered commit)
    int64_t n                  # entries
    int64_t* t                 # the answer: earliest start, or -1
    int64_t* mode              # what was asked (SPEC_*)
    int64_t* seen              # log entries the speculating copy had applied
    int64_t* ready             # the queue position whose result the entry holds (-1: none yet)
    uint64_t* cand             # candidates of the earliest start found (W words an entry) ...
    uint64_t* chosen           # ... and the units the speculating worker chose among them (W words)
    int8_t* proposed           # 1: `chosen` holds a choice (a unit cluster's earliest start found)
    int64_t* ncpu              # a node cluster: the cores each node gave the job there (nn an entry)
    int64_t nn                 # (nodes an entry)


ctypedef struct CommitLog:     # placements in commit order: what copies catch up from
    int64_t n                  # entries (published with a release store; readers acquire)
    int64_t cap                # room
    int64_t* t                 # start ...
    int64_t* d                 # ... estimate ...
    int64_t* k                 # ... units ...
    int64_t* job               # ... job (a node cluster: its memory and GPUs per node) ...
    int8_t* resv               # ... reservation (1) or start now (0) ...
    uint64_t* bits             # ... and the units chosen (W words an entry)


ctypedef struct ParallelPass:  # the shared state of the parallel pass under way
    int64_t limit              # queue positions that may be tested (max_job_test)
    int64_t next               # the next queue position to speculate on
    int64_t commit             # the next queue position to commit (ordered)
    int64_t committer          # 1 while a worker holds the commit role (ordered)
    int64_t stop               # the first position not to commit (INF: none yet)
    int64_t error              # a worker's failure (RC_*), 0 if none
    int64_t epoch              # bumped whenever the pass moves on (a commit, a copy made, the stop) ...
    int64_t sleepers           # ... which wakes the workers asleep waiting for it
    int64_t copied             # workers 1.. done copying the pass's profile (worker 0 decides on the
                               # profile itself, and changes it only once every copy is made)
    Hints hints                # every worker's speculative searches' earliest starts (a worker's copy
                               # is the log up to some entry, so each is a lower bound on the latest
                               # state, which every commit decides on) ...
    int64_t hints_lock         # ... under this try-lock (1: held)
    int8_t* committed          # eager: which queue positions have committed ...
    int64_t committed_cap      # ... room ...
    int64_t low                # ... and the first that has not


cdef enum:                     # what a speculation asked
    SPEC_NOW = 0               # only "can it start now?" (no reservation was left)
    SPEC_FULL = 1              # the earliest start


ctypedef struct Spec:          # a speculative result of the parallel pass
    int64_t t                  # the earliest start found, or -1
    int64_t mode               # what was asked (SPEC_*)
    int64_t seen               # log entries the copy had applied
    const uint64_t* cand       # the units free throughout [t, t + d) on that copy (SPEC_FULL), W words
    const uint64_t* chosen     # the units prof_choose took among them there (NULL: none proposed)
    const int64_t* ncpu        # a node cluster: the cores each node gave the job at t on that copy


cdef inline int log_reserve(CommitLog* L, int64_t cap, int64_t W) noexcept nogil:
    # room for cap entries
    cdef int64_t c
    if cap <= L.cap:
        return RC_OK
    c = L.cap
    if grow(<void**>&L.t, &c, cap, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    c = L.cap
    if grow(<void**>&L.d, &c, cap, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    c = L.cap
    if grow(<void**>&L.k, &c, cap, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    c = L.cap
    if grow(<void**>&L.job, &c, cap, sizeof(int64_t)) != RC_OK: return RC_NO_MEMORY
    c = L.cap
    if grow(<void**>&L.resv, &c, cap, sizeof(int8_t)) != RC_OK: return RC_NO_MEMORY
    free(L.bits)
    L.bits = <uint64_t*>malloc(<size_t>(c * W) * sizeof(uint64_t))
    if L.bits == NULL:
        L.cap = 0
        return RC_NO_MEMORY
    L.cap = c
    return RC_OK


cdef inline void log_free(CommitLog* L) noexcept nogil:
    free(L.t); free(L.d); free(L.k); free(L.job); free(L.resv); free(L.bits)
    L.t = NULL; L.d = NULL; L.k = NULL; L.job = NULL; L.resv = NULL; L.bits = NULL
    L.n = 0; L.cap = 0


cdef inline int ring_reserve(SpecRing* R, int64_t n, int64_t W, int64_t nn) noexcept nogil:
    # n entries, none holding a result (nn: nodes, 0 on a unit cluster)
    cdef int64_t i
    if R.n != n or R.nn != nn:
        ring_free(R)
        R.t = <int64_t*>malloc(n * sizeof(int64_t))
        R.mode = <int64_t*>malloc(n * sizeof(int64_t))
        R.seen = <int64_t*>malloc(n * sizeof(int64_t))
        R.ready = <int64_t*>malloc(n * sizeof(int64_t))
        R.cand = <uint64_t*>malloc(<size_t>(n * (W if W > 0 else 1)) * sizeof(uint64_t))
        R.chosen = <uint64_t*>malloc(<size_t>(n * (W if W > 0 else 1)) * sizeof(uint64_t))
        R.proposed = <int8_t*>malloc(n * sizeof(int8_t))
        R.ncpu = <int64_t*>malloc(<size_t>(n * (nn if nn > 0 else 1)) * sizeof(int64_t))
        R.n = n
        R.nn = nn
        if (R.t == NULL or R.mode == NULL or R.seen == NULL or R.ready == NULL or R.cand == NULL or R.ncpu == NULL
                or R.chosen == NULL or R.proposed == NULL):
            R.n = 0
            return RC_NO_MEMORY
    for i in range(n):
        R.ready[i] = -1
    return RC_OK


cdef inline void ring_free(SpecRing* R) noexcept nogil:
    free(R.t); free(R.mode); free(R.seen); free(R.ready); free(R.cand); free(R.ncpu); free(R.chosen); free(R.proposed)
    R.t = NULL; R.mode = NULL; R.seen = NULL; R.ready = NULL; R.cand = NULL; R.ncpu = NULL
    R.chosen = NULL; R.proposed = NULL
    R.n = 0
    R.nn = 0


cdef inline void pool_free_copies(WorkerPool* P) noexcept nogil:
    # the profile copies and per-worker counters (threads already stopped)
    cdef int64_t i
    if P.prof != NULL:
        for i in range(P.nprof):
            prof_free(&P.prof[i])
        free(P.prof)
    if P.snap != NULL:
        for i in range(P.nsnap):
            prof_free(&P.snap[i])
        free(P.snap)
    if P.nm != NULL:
        for i in range(P.nnm):
            nm_free_copy(&P.nm[i])
        free(P.nm)
    if P.nmsnap != NULL:
        for i in range(P.nnm):
            nm_free_copy(&P.nmsnap[i])
        free(P.nmsnap)
    P.nm = NULL
    P.nmsnap = NULL
    P.nnm = 0
    free(P.tests); free(P.seen); free(P.tests_total)
    P.prof = NULL; P.snap = NULL; P.tests = NULL; P.seen = NULL; P.tests_total = NULL
    P.nprof = 0
    P.nsnap = 0


cdef inline int pool_alloc_copies(WorkerPool* P, int64_t workers, int64_t W, bint stale) noexcept nogil:
    # per worker: a profile copy, counters and a node plan copy (with `stale`, snapshots of both as
    # at the pass start: Testing.stale_speculation); on failure none is left
    cdef int64_t i
    P.prof = <Prof*>calloc(workers, sizeof(Prof))
    P.tests = <int64_t*>calloc(workers, sizeof(int64_t))
    P.seen = <int64_t*>calloc(workers, sizeof(int64_t))
    P.tests_total = <int64_t*>calloc(workers, sizeof(int64_t))
    P.nm = <NodeModel*>calloc(workers, sizeof(NodeModel))
    P.nnm = workers
    if stale:
        P.nmsnap = <NodeModel*>calloc(workers, sizeof(NodeModel))
    if (P.prof == NULL or P.tests == NULL or P.seen == NULL or P.tests_total == NULL or P.nm == NULL
            or (stale and P.nmsnap == NULL)):
        pool_free_copies(P)
        return RC_NO_MEMORY
    for i in range(workers):
        P.nprof = i + 1
        if prof_init(&P.prof[i], W) != RC_OK:
            pool_free_copies(P)
            return RC_NO_MEMORY
    if stale:
        P.snap = <Prof*>calloc(workers, sizeof(Prof))
        for i in range(workers):
            P.nsnap = i + 1
            if P.snap == NULL or prof_init(&P.snap[i], W) != RC_OK:
                pool_free_copies(P)
                return RC_NO_MEMORY
    return RC_OK
