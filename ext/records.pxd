# What the passes did (header only): one record a pass (optional), the totals over every pass (always
# kept: the replay's summary comes from them), and the figures of the last full pass.

from libc.stdint cimport int64_t, int32_t, int8_t
from libc.stdlib cimport free

from memory cimport grow
from pbf._codes cimport PK_FULL
from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct PassRec:       # one pass (counts fit 32 bits: jobs and slots of one pass)
    int64_t time               # when it ran
    int64_t wall               # its wall time, ticks
    int64_t model_us           # the clock's charge
    int32_t queue              # jobs queued at its start
    int32_t depth              # jobs tested
    int32_t started            # jobs started
    int32_t resv               # reservations made
    int32_t slots              # live profile slots at its end
    int32_t reeval             # parallel: commits that searched again
    int32_t conflict           # parallel: commits whose answer newer commits touched
    int32_t tmax               # most jobs one worker tested
    int32_t tmin               # fewest jobs one worker tested
    int32_t inv                # eager commit: priority inversions
    int8_t kind                # PK_*
    int8_t exit                # EX_*


ctypedef struct LastPass:      # the last full pass's figures, read by the record and the next pass
    int64_t charged_us         # its charged duration (0 with the free clock)
    int64_t wall_ticks         # the last recorded pass's wall time
    int64_t reeval             # parallel: commits that searched again ...
    int64_t conflicts          # ... whose answer newer commits touched ...
    int64_t inversions         # ... and priority inversions (eager)
    int64_t tests_max          # most jobs one worker tested (-1: one worker tested all)
    int64_t tests_min          # fewest jobs one worker tested (-1: one worker tested all)


ctypedef struct PassTotals:    # sums over every pass, recorded or not
    int64_t count              # passes
    int64_t full               # full passes
    int64_t depth              # jobs tested ...
    int64_t depth_max          # ... the most in one pass ...
    int64_t depth_full         # ... in full passes
    int64_t wall               # wall time, ticks (0 unless the clock was read)
    int64_t charged_full       # charged time of full passes (us) ...
    int64_t charged_max        # ... the most for one
    int64_t reeval             # parallel: commits that searched again
    int64_t conflicts          # parallel: commits whose answer newer commits touched
    int64_t inv                # eager: priority inversions
    int64_t tmax_full          # sum over full passes of the most jobs one worker tested ...
    int64_t tmin_full          # ... and of the fewest
    int64_t[8] exit            # passes per exit reason (EX_*)


ctypedef struct PassRecords:
    PassRec* rec               # one record a pass, when they are kept
    int64_t n                  # records
    int64_t cap                # room in rec


cdef inline int records_add(PassRecords* R, PassTotals* T, const LastPass* L, bint keep, int64_t now, int kind,
                            int64_t queue, int64_t depth, int64_t started, int64_t resv, int ex,
                            int64_t wall, int64_t slots) noexcept nogil:
    # count a pass in the totals and, if `keep`, record it; RC_NO_MEMORY: out of memory
    cdef int64_t tmax = depth, tmin = depth
    cdef PassRec* r
    if kind == PK_FULL:
        tmax = L.tests_max if L.tests_max >= 0 else depth
        tmin = L.tests_min if L.tests_min >= 0 else depth
        T.full += 1
        T.depth_full += depth
        T.charged_full += L.charged_us
        T.reeval += L.reeval
        T.conflicts += L.conflicts
        T.inv += L.inversions
        T.tmax_full += tmax
        T.tmin_full += tmin
    T.count += 1
    T.depth += depth
    if depth > T.depth_max:
        T.depth_max = depth
    if L.charged_us > T.charged_max:
        T.charged_max = L.charged_us
    T.wall += wall
    T.exit[ex] += 1
    if not keep:
        return RC_OK
    if R.n >= R.cap and grow(<void**>&R.rec, &R.cap, R.n + 1, sizeof(PassRec)) != RC_OK:
        return RC_NO_MEMORY
    r = &R.rec[R.n]
    r.time = now
    r.wall = wall
    r.model_us = L.charged_us
    r.queue = <int32_t>queue
    r.depth = <int32_t>depth
    r.started = <int32_t>started
    r.resv = <int32_t>resv
    r.slots = <int32_t>slots
    # tests per worker: real threads in a parallel pass, else the modelled workers of the model
    # clock, else one worker that tested them all
    r.tmax = <int32_t>tmax
    r.tmin = <int32_t>tmin
    r.reeval = <int32_t>(L.reeval if kind == PK_FULL else 0)
    r.conflict = <int32_t>(L.conflicts if kind == PK_FULL else 0)
    r.inv = <int32_t>(L.inversions if kind == PK_FULL else 0)
    r.kind = kind
    r.exit = ex
    R.n += 1
    return RC_OK


cdef inline void records_free(PassRecords* R) noexcept nogil:
    free(R.rec)
    R.rec = NULL
    R.n = 0
    R.cap = 0


ctypedef struct StartEstimates:    # a replay's start-time estimates (estimates.pxd)
    bint on                    # record them
    int64_t every              # also record every pending job's every `every` instants with a pass (0: never)
    int64_t instants           # instants with a pass since the last periodic record
    int64_t* at_submit         # per job: its estimated start right after the instant it arrived, or -1
    int64_t* log_t             # periodic records: when ...
    int64_t* log_job           # ... which job ...
    int64_t* log_est           # ... its estimated start (-1: none)
    int64_t nlog               # records ...
    int64_t log_cap            # ... and room
    int64_t* plan              # scratch: the plan's start per queue position
    int64_t plan_cap           # room in plan


cdef inline void estimates_free(StartEstimates* E) noexcept nogil:
    free(E.at_submit); free(E.log_t); free(E.log_job); free(E.log_est); free(E.plan)
    E.at_submit = NULL
    E.log_t = NULL
    E.log_job = NULL
    E.log_est = NULL
    E.plan = NULL
    E.nlog = 0
    E.log_cap = 0
    E.plan_cap = 0
