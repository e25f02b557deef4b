# The state of co-allocation (header only; the logic is coalloc.pxd): running primary jobs lend part
# of their cores to secondary jobs, every job progresses at the rate its nodes' load allows, and a
# learner chooses how much each primary lends.

from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, int8_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset

from jobs cimport _regrow
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef enum:
    CA_ACTIONS = 10            # lend 0 %, 10 %, ..., 90 %
    CA_DTS = 4                 # ASA_X's decision-tree experts: CPU use, job class, time of day, happiness
    CA_LEAVES = 4              # leaves a tree has at most
    CA_EXPERTS = 22            # Hedge / EXP3 experts: 10 constants + 12 "lend k if CPU use < theta"


ctypedef struct CoAlloc:
    bint on
    bint dynamics              # replays: rates and moving completions; the embedding API: the host
                               # runs the jobs and reports each one's progress rate (h_given)
    double h_given             # that rate, for the decision being judged
    int64_t cap                # per-job arrays' room (the embedding API adds jobs as they come)
    int policy                 # CA_* (pbf/_codes.pxd CoallocPolicy)
    double fixed               # CA_FIXED: the fraction every primary lends
    double beta                # interference: a node's rate is divided by 1 + beta x its secondary jobs
    int64_t interval           # seconds between decisions on a running primary (0: one, at its start)
    double lam, tau, dmax      # the loss: lam x slowdown part - (1 - lam) x gain; tolerated slowdown; cap
    uint64_t rng               # the learner's random stream (xorshift64*)
    # the cluster as nodes of consecutive units
    int64_t nnodes
    int32_t* node_of           # per unit
    int32_t* node_first        # per node: its first unit
    int32_t* node_cap          # per node: cores (units)
    int32_t* node_nsec         # per node: units hosting a secondary job
    double* node_q             # per node: rate
    # per unit
    int32_t* prim              # the primary job on it, or -1
    int32_t* sec               # the secondary job on it, or -1
    int32_t* lent_by           # the primary whose lent cores it counts against, or -1
    # per job
    double* u                  # CPU use in (0, 1]
    double* work               # solo seconds of work left
    double* rate               # progress per second now
    double* done_work          # work done (for work conservation)
    int64_t* t_upd             # when work was last brought up to date
    int32_t* lend              # primary: cores it lends now
    int32_t* lent              # primary: of those, hosting a secondary
    int32_t** sec_units        # secondary: its units
    int64_t* stamp             # scratch: marks a job once per update ...
    int64_t* node_stamp        # ... and a node
    int64_t stamp_now
    int32_t* aff_jobs          # scratch: the jobs an update touches ...
    int32_t* aff_nodes         # ... and their nodes
    int64_t naff_jobs, naff_nodes, aff_jobs_cap, aff_nodes_cap
    int32_t* pick              # scratch: units gathered for a secondary job
    double fill_lent, fill_lend   # lent cores filled / offered, summed at feedback (the gain model)
    # the decision in force on each primary, for its feedback
    int8_t* dec_a              # action (0..9), -1: none
    int16_t* dec_e             # Hedge / EXP3 expert
    double* dec_p              # probability the played choice had
    int64_t* dec_t0            # when it was taken
    double* dec_w0             # the job's work left then
    int8_t* dec_leaf           # ASA_X: the leaf of each tree (CA_DTS a job) ...
    double* dec_pi             # ... and the probability each tree gave the action played
    # lending primaries (lend > lent), in start order; and the lent cores free in all
    int32_t* lenders
    int64_t nlenders, lenders_cap
    int64_t avail
    int64_t next_tick          # interval > 0: the next decision round
    int64_t changes            # events that may let a queued job start on lent cores (offers
    int64_t changes_seen       # growing, cores freed, arrivals) and the count at the last
    bint idle                  # co-allocation pass, which started nothing
    # ASA_X (Algorithm 1)
    double alpha[CA_DTS]       # weight of each tree
    double risk[CA_DTS]        # co-allocation risk since the last weight update
    double leaf_loss[CA_DTS][CA_LEAVES][CA_ACTIONS]   # cumulative loss of each action in each leaf
    int64_t leaf_n[CA_DTS][CA_LEAVES]                 # decisions seen in each leaf
    int64_t rounds             # weight updates so far
    # Hedge / EXP3
    double logw[CA_EXPERTS]    # log-weights
    double cum_loss[CA_EXPERTS]  # Hedge: each expert's cumulative loss (in [0, 1] a decision)
    double cum_expected        # Hedge: the learner's cumulative expected loss
    int64_t decisions          # decisions fed back
    double sec_u_sum           # CPU use of the jobs started as secondaries (mean: the gain model)
    int64_t sec_started
    double act_count[CA_ACTIONS]  # decisions by action
    double loss_sum            # sum of the played losses
    int64_t overruns           # jobs that ran longer than their requested time (not killed)
    bint check                 # tests: check every touched node after each update ...
    int64_t violations         # ... a rate outside (0, 1] or more CPU use than cores


cdef inline void coalloc_free(CoAlloc* C, int64_t njobs) noexcept nogil:
    cdef int64_t j
    if C.sec_units != NULL:
        for j in range(njobs):
            free(C.sec_units[j])
    free(C.node_of); free(C.node_cap); free(C.node_nsec); free(C.node_q); free(C.prim); free(C.sec)
    free(C.lent_by); free(C.u); free(C.work); free(C.rate); free(C.done_work); free(C.t_upd); free(C.lend)
    free(C.lent); free(C.sec_units); free(C.stamp); free(C.dec_a); free(C.dec_e); free(C.dec_p)
    free(C.dec_t0); free(C.dec_w0); free(C.dec_leaf); free(C.dec_pi); free(C.lenders); free(C.node_first)
    free(C.node_stamp); free(C.aff_jobs); free(C.aff_nodes); free(C.pick)


cdef inline int coalloc_grow(CoAlloc* C, int64_t cap) noexcept nogil:
    # the per-job arrays from C.cap to cap entries (new ones initialised)
    cdef int64_t old = C.cap, i, k
    if cap <= old:
        return RC_OK
    if (_regrow(<void**>&C.u, old, cap, sizeof(double)) != RC_OK
            or _regrow(<void**>&C.work, old, cap, sizeof(double)) != RC_OK
            or _regrow(<void**>&C.rate, old, cap, sizeof(double)) != RC_OK
            or _regrow(<void**>&C.done_work, old, cap, sizeof(double)) != RC_OK
            or _regrow(<void**>&C.t_upd, old, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&C.lend, old, cap, sizeof(int32_t)) != RC_OK
            or _regrow(<void**>&C.lent, old, cap, sizeof(int32_t)) != RC_OK
            or _regrow(<void**>&C.sec_units, old, cap, sizeof(int32_t*)) != RC_OK
            or _regrow(<void**>&C.stamp, old, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&C.dec_a, old, cap, sizeof(int8_t)) != RC_OK
            or _regrow(<void**>&C.dec_e, old, cap, sizeof(int16_t)) != RC_OK
            or _regrow(<void**>&C.dec_p, old, cap, sizeof(double)) != RC_OK
            or _regrow(<void**>&C.dec_t0, old, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&C.dec_w0, old, cap, sizeof(double)) != RC_OK
            or _regrow(<void**>&C.dec_leaf, old * CA_DTS, cap * CA_DTS, sizeof(int8_t)) != RC_OK
            or _regrow(<void**>&C.dec_pi, old * CA_DTS, cap * CA_DTS, sizeof(double)) != RC_OK):
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
    return RC_OK


cdef inline int coalloc_init(CoAlloc* C, int64_t units, const int32_t* node_cores, int64_t nnodes,
                             int64_t njobs) noexcept nogil:
    # a fresh co-allocation state over nodes of node_cores[k] consecutive units (every unit free of
    # primaries and secondaries, every node at rate 1), with room for njobs jobs; on failure it is
    # left empty
    cdef int64_t k, u, first = 0, U = units if units > 0 else 1, K = nnodes if nnodes > 0 else 1
    coalloc_free(C, njobs)
    memset(C, 0, sizeof(CoAlloc))
    C.nnodes = nnodes
    C.node_of = <int32_t*>malloc(U * sizeof(int32_t))
    C.node_first = <int32_t*>malloc(K * sizeof(int32_t))
    C.node_cap = <int32_t*>malloc(K * sizeof(int32_t))
    C.node_nsec = <int32_t*>calloc(K, sizeof(int32_t))
    C.node_q = <double*>malloc(K * sizeof(double))
    C.node_stamp = <int64_t*>calloc(K, sizeof(int64_t))
    C.prim = <int32_t*>malloc(U * sizeof(int32_t))
    C.sec = <int32_t*>malloc(U * sizeof(int32_t))
    C.lent_by = <int32_t*>malloc(U * sizeof(int32_t))
    C.pick = <int32_t*>malloc(U * sizeof(int32_t))
    if (C.node_of == NULL or C.node_first == NULL or C.node_cap == NULL or C.node_nsec == NULL
            or C.node_q == NULL or C.node_stamp == NULL or C.prim == NULL or C.sec == NULL
            or C.lent_by == NULL or C.pick == NULL or coalloc_grow(C, njobs if njobs > 16 else 16) != RC_OK):
        coalloc_free(C, njobs)
        memset(C, 0, sizeof(CoAlloc))
        return RC_NO_MEMORY
    for k in range(nnodes):
        C.node_first[k] = <int32_t>first
        C.node_cap[k] = node_cores[k]
        C.node_q[k] = 1.0
        for u in range(first, first + node_cores[k]):
            C.node_of[u] = <int32_t>k
        first += node_cores[k]
    for u in range(units):
        C.prim[u] = -1
        C.sec[u] = -1
        C.lent_by[u] = -1
    for k in range(CA_DTS):
        C.alpha[k] = 1.0 / CA_DTS
    return RC_OK
