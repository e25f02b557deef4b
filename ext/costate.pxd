# The state of co-allocation (header only; the logic is coalloc.pxd): running primary jobs lend part
# of their cores to secondary jobs, every job progresses at the rate its nodes' load allows, and a
# learner chooses how much each primary lends.

from libc.stdint cimport uint64_t, int64_t, int32_t, int16_t, int8_t
from libc.stdlib cimport free

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
