# The job table and the users (header only): one C column per job attribute, grown together, and the
# per-user history the predictors and fair share read.

from libc.stdint cimport uint64_t, int64_t, int32_t, int8_t
from libc.stdlib cimport free
from libc.string cimport memset

from memory cimport grow
from pbf._codes cimport RC_OK, RC_NO_MEMORY, JS_NEW, HOW_NONE, RJ_NONE


ctypedef struct Jobs:          # index j = arrival order of the trace (replay) or of add_jobs (engine)
    int64_t n                  # jobs added
    int64_t cap                # room in every column
    int64_t* submit            # submit time
    int64_t* units             # units asked for
    int64_t* est               # current estimate (the predictor's, then corrected)
    int64_t* run               # actual run time (< 0: unknown; the embedding caller finishes jobs)
    int64_t* req               # requested time: the kill limit and the cap of every prediction
    int64_t* user              # dense user index
    double* part               # multifactor partition factor in [0, 1]
    double* qos                # multifactor QOS factor in [0, 1]
    int64_t* tier              # its partition's PriorityTier: a higher tier runs first, whatever the key
                               # (Slurm's sort_job_queue2; NULL: no tiers)
    int64_t* start             # start time, or -1
    int64_t* end               # end time (planned at start in a replay, actual once done), or -1
    int64_t* resv              # planned start from the last pass that reserved it, else -1
    int64_t* resv_min          # earliest planned start any pass gave it, else -1
    int64_t* seq               # arrival sequence (priority tie-break after submit), or -1
    int64_t* pred0             # the estimate given at submission, before corrections, or -1
    int64_t* ncorr             # corrections applied
    int64_t* requeues          # times its units failed under it and it went back to the queue, and ...
    int64_t* lost              # ... the unit-seconds of its runs cut short (both NULL until a failure
                               # stops a job: most runs have none, and a replay's memory is its speed)
    int64_t* bfkey             # backfill order key set by a Python chooser
    int64_t* acc               # multifactor: usage charged up to this time
    int64_t* unext             # the user's running list: next job ...
    int64_t* uprev             # ... and previous job (-1: none)
    double* key                # priority key (ascending)
    int64_t* runpos            # position in Nodes.running, or -1
    int32_t* row               # row of its units in Nodes.rows while running, or -1
    int8_t* state              # JS_*
    int8_t* how                # HOW_*
    int8_t* reason             # RJ_* when rejected (RJ_RESV_OVER: a completed job its reservation ended)
    double* x                  # regression: the features of each job at its submission (REG_NF a job)
    int64_t x_cap              # room in x (doubles)
    uint64_t* bits             # with Testing.record_units: W words a job, its units once started
    int64_t bits_cap           # room in bits (words)


ctypedef struct UserHist:      # what the predictors know of a user at a job's submission
    int64_t n_done             # completed jobs
    int64_t p1, p2, p3         # run times of the last three completed jobs, latest first
    int64_t sum_run            # sum of the completed jobs' run times ...
    int64_t sum_units          # ... and of their units
    int64_t last_end           # when the last one ended (-1: none yet)
    int64_t n_run              # running jobs ...
    int64_t run_units          # ... their units ...
    int64_t run_start_sum      # ... and the sum of their start times
    int64_t first_run          # the user's running jobs, a list in start order: first ...
    int64_t last_run           # ... and last (-1: none)


ctypedef struct Users:
    int64_t n                  # users known (dense indices 0 .. n-1)
    int64_t cap                # room in every column
    UserHist* hist             # history per user
    double* usage              # multifactor: decayed usage (unit-seconds) per user
    double* fsf                # multifactor with Fair Tree: each user's factor at the last calc (1 before)
    int64_t* raw               # multifactor: usage not yet folded in (integer: independent of order)
    double total               # multifactor: sum of every user's usage (changes only at a calc)
    int64_t last_calc          # multifactor: when usage was last decayed and folded in (-INF: never)


cdef inline int _regrow(void** col, int64_t old_cap, int64_t cap, size_t item) noexcept nogil:
    # one column from old_cap to cap items (grow doubles from old_cap until it reaches cap)
    cdef int64_t c = old_cap
    return grow(col, &c, cap, item)


cdef inline int jobs_reserve(Jobs* J, int64_t n) noexcept nogil:
    # room for n jobs in every column (they share one capacity)
    cdef int64_t cap
    if n <= J.cap:
        return RC_OK
    cap = J.cap * 2 if J.cap > 0 else 16
    while cap < n:
        cap *= 2
    if (_regrow(<void**>&J.submit, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.units, J.cap, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&J.est, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.run, J.cap, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&J.req, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.user, J.cap, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&J.part, J.cap, cap, sizeof(double)) != RC_OK or _regrow(<void**>&J.qos, J.cap, cap, sizeof(double)) != RC_OK
            or _regrow(<void**>&J.start, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.end, J.cap, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&J.resv, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.resv_min, J.cap, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&J.seq, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.pred0, J.cap, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&J.ncorr, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.bfkey, J.cap, cap, sizeof(int64_t)) != RC_OK
            or (J.requeues != NULL and _regrow(<void**>&J.requeues, J.cap, cap, sizeof(int64_t)) != RC_OK)
            or (J.tier != NULL and _regrow(<void**>&J.tier, J.cap, cap, sizeof(int64_t)) != RC_OK)
            or (J.lost != NULL and _regrow(<void**>&J.lost, J.cap, cap, sizeof(int64_t)) != RC_OK)
            or _regrow(<void**>&J.acc, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.unext, J.cap, cap, sizeof(int64_t)) != RC_OK
            or _regrow(<void**>&J.uprev, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.key, J.cap, cap, sizeof(double)) != RC_OK
            or _regrow(<void**>&J.runpos, J.cap, cap, sizeof(int64_t)) != RC_OK or _regrow(<void**>&J.row, J.cap, cap, sizeof(int32_t)) != RC_OK
            or _regrow(<void**>&J.state, J.cap, cap, sizeof(int8_t)) != RC_OK or _regrow(<void**>&J.how, J.cap, cap, sizeof(int8_t)) != RC_OK
            or _regrow(<void**>&J.reason, J.cap, cap, sizeof(int8_t)) != RC_OK):
        return RC_NO_MEMORY
    J.cap = cap
    return RC_OK


cdef inline void jobs_clear(Jobs* J, int64_t first, int64_t n) noexcept nogil:
    # jobs first .. first+n-1 as added: not submitted, nothing decided, no history
    cdef int64_t j
    for j in range(first, first + n):
        J.pred0[j] = -1
        J.ncorr[j] = 0
        if J.tier != NULL:
            J.tier[j] = 0
        if J.requeues != NULL:
            J.requeues[j] = 0
            J.lost[j] = 0
        J.bfkey[j] = 0
        J.key[j] = 0.0
        J.acc[j] = -1
        J.unext[j] = -1
        J.uprev[j] = -1
        J.start[j] = -1
        J.end[j] = -1
        J.resv[j] = -1
        J.resv_min[j] = -1
        J.seq[j] = -1
        J.runpos[j] = -1
        J.row[j] = -1
        J.state[j] = JS_NEW
        J.how[j] = HOW_NONE
        J.reason[j] = RJ_NONE


cdef inline void jobs_free(Jobs* J) noexcept nogil:
    free(J.submit); free(J.units); free(J.est); free(J.run); free(J.req); free(J.user)
    free(J.part); free(J.qos); free(J.start); free(J.end); free(J.resv); free(J.resv_min)
    free(J.seq); free(J.pred0); free(J.ncorr); free(J.requeues); free(J.lost); free(J.bfkey); free(J.acc); free(J.unext)
    free(J.uprev); free(J.key); free(J.tier); free(J.runpos); free(J.row); free(J.state); free(J.how)
    free(J.reason); free(J.x); free(J.bits)
    memset(J, 0, sizeof(Jobs))


cdef inline int users_ensure(Users* U, int64_t n) noexcept nogil:
    # users 0 .. n-1 exist (new ones with no history)
    cdef int64_t u, cap
    if n <= U.n:
        return RC_OK
    if n > U.cap:
        cap = U.cap
        if grow(<void**>&U.hist, &cap, n, sizeof(UserHist)) != RC_OK:
            return RC_NO_MEMORY
        cap = U.cap
        if grow(<void**>&U.usage, &cap, n, sizeof(double)) != RC_OK:
            return RC_NO_MEMORY
        cap = U.cap
        if grow(<void**>&U.raw, &cap, n, sizeof(int64_t)) != RC_OK:
            return RC_NO_MEMORY
        cap = U.cap
        if grow(<void**>&U.fsf, &cap, n, sizeof(double)) != RC_OK:
            return RC_NO_MEMORY
        U.cap = cap
    for u in range(U.n, n):
        memset(&U.hist[u], 0, sizeof(UserHist))
        U.hist[u].last_end = -1
        U.hist[u].first_run = -1
        U.hist[u].last_run = -1
        U.usage[u] = 0.0
        U.fsf[u] = 1.0
        U.raw[u] = 0
    U.n = n
    return RC_OK


cdef inline void users_free(Users* U) noexcept nogil:
    free(U.hist); free(U.usage); free(U.raw); free(U.fsf)
    memset(U, 0, sizeof(Users))
