# The codes of the compiled core, defined once. `cpdef enum`s: C constants for the compiled code
# (cimported from here by every header in ext/) and Python IntEnum classes of the module
# pbf._codes for the Python side (pbf/codes.py adds their labels). This file sits in the package,
# not in ext/, because a cpdef enum reaches Python only from its module's own .pxd.

cpdef enum Priority:           # the queue order (pbf/plugins/priorities.py has the formulas)
    PR_FCFS = 0
    PR_SJF = 1
    PR_SMALLEST = 2
    PR_F1 = 3
    PR_F2 = 4
    PR_F3 = 5
    PR_F4 = 6
    PR_WFP3 = 7
    PR_UNICEP = 8
    PR_MULTIFACTOR = 9
    PR_KEYED = 10              # keys set from Python (a user's plugin) before each pass


cdef inline bint prio_time_dependent(int prio) noexcept nogil:
    # the priority's key depends on the time (a job's wait): the keys are recomputed before passes,
    # and a pass cannot be resumed. A property of each code, not of its place in the enum: a new
    # code goes here when it reads the time (pbf/codes.py has the same table for Python).
    return prio == PR_WFP3 or prio == PR_UNICEP or prio == PR_MULTIFACTOR or prio == PR_KEYED


cpdef enum Predictor:          # run-time predictors computed in the core at submission
    PD_GIVEN = 0               # the estimate comes with the job (requested, clairvoyant, Python)
    PD_AVE2 = 1
    PD_REGRESSION = 2

cpdef enum Correction:         # a new estimate for a running job that outlives its estimate
    CR_INCREMENTAL = 0
    CR_REQUESTED = 1
    CR_DOUBLING = 2

cpdef enum RegressionWeight:   # Gaussier et al.'s Table 3 job weightings
    RW_CONSTANT = 0            # 1
    RW_SHORT_WIDE = 1          # 5 + log(q / p)
    RW_LONG_NARROW = 2         # 5 + log(p / q)
    RW_SMALL_AREA = 3          # 11 + log(1 / (q p))
    RW_LARGE_AREA = 4          # log(q p)

cpdef enum Clock:              # what a pass costs (DESIGN §4.6)
    CK_FREE = 0
    CK_MODEL = 1
    CK_WALL = 2
    CK_SLURM_SIM = 3               # the Slurm simulator's: scheduling takes simulated time (slurm_loop.pxd)

cpdef enum Trigger:            # when the replay runs passes
    TR_EVENT = 0
    TR_INTERVAL = 1

cpdef enum JobState:
    JS_NEW = 0
    JS_PENDING = 1
    JS_RUNNING = 2
    JS_DONE = 3
    JS_REJECTED = 4
    JS_KILLED = 5              # its units failed under it and it was not requeued (outages.pxd)

cpdef enum RejectReason:
    RJ_NONE = 0
    RJ_OVERSIZE = 1
    RJ_NO_ESTIMATE = 2
    RJ_NO_UNITS = 3
    RJ_UNITS_DOWN = 4          # still pending when the replay ended: wider than the units left up
    RJ_NO_NODES = 5            # no set of the cluster's nodes can hold it (cores, memory, GPUs, features)
    RJ_LICENSES = 6            # asks more licenses of a kind than the cluster has (licenses.pxd)
    RJ_QOS_LIMIT = 7           # over a QOS or association limit: more cores than one allows, too long, too many jobs submitted (qos_limits.pxd)
    RJ_RESV_ENDED = 8          # inside an advance reservation that ended before it started (Slurm holds it: RESV_DEL_HOLD)
    RJ_RESV_OVER = 9           # not a rejection: a completed job ended by its reservation's end (AdvResv.kill; TIMEOUT)

cpdef enum How:                # how a job was started
    HOW_NONE = 0
    HOW_MAIN = 1               # with no higher-priority job left waiting in that pass
    HOW_BACKFILL = 2           # ahead of a higher-priority job that could not start
    HOW_COALLOC = 3            # as a secondary job on cores a running job lent (coalloc.pxd)

cpdef enum OutageKind:         # what an outage event does to its units (outages.pxd)
    OK_DRAIN = 0               # take no new job; running jobs finish
    OK_FAIL = 1                # take no new job; running jobs are killed (requeued or not)
    OK_RESUME = 2              # back in service

cpdef enum CoallocPolicy:       # how much of a running job's cores to lend (coalloc.pxd)
    CA_OFF = 0                 # none: the plain replay
    CA_FIXED = 1               # the same fraction for every job
    CA_ASAX = 2                # ASA_X's Algorithm 1: decision-tree experts, risk-bounded weights
    CA_HEDGE = 3               # Hedge over fixed experts, full-information losses
    CA_EXP3 = 4                # EXP3: only the played action's loss

cpdef enum PassKind:
    PK_FULL = 0
    PK_QUICK = 1

cpdef enum ExitReason:         # why a pass stopped
    EX_END = 0
    EX_MAX_JOB_TEST = 1
    EX_QUICK_BLOCKED = 2
    EX_BUDGET = 3
    EX_YIELD = 4               # slurm-sim clock: a yield saw arrivals or completions
    EX_RESV_TABLE = 5          # Backfill.stop_at_reservation_limit: a job needed a reservation beyond it

cpdef enum Status:             # return codes of the compiled functions (raised after the nogil block)
    RC_OK = 0
    RC_NO_MEMORY = -1
    RC_SLOT_NOT_FOUND = -2     # an invariant breach: a committed start is not a slot beginning of a copy
    RC_TIME_RANGE = -3         # a node plan's point lies beyond the event keys' range (2^43 s)


cdef enum:                     # sentinels of the compiled searches that return a time or an index
    NO_START = -1              # a start-time search found none (start-now only, or beyond the window)
