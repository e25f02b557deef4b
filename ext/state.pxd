# The whole state of one engine (header only): the named parts below, one struct. Core (in _core.pyx)
# owns one State and is only the Python entry points; every compiled function takes a State*.

from libc.stdint cimport uint64_t, int64_t, int32_t, int8_t
from libc.stdlib cimport free
from libc.string cimport memset

from memory cimport INF, append
from jobs cimport Jobs, Users, jobs_free, users_free
from nodes cimport Nodes, EndKey, OutageEvents, nodes_init, nodes_free, outage_events_free
from queue cimport Queue, queue_free
from policy cimport Policy, policy_free
from profile cimport Prof, prof_init, prof_free
from clock cimport PassClock, clock_free
from simtime cimport SimTime, simtime_defaults
from costate cimport CoAlloc, coalloc_free
from node_model cimport NodeModel, NodeSplit, nm_free
from slurm_space cimport SlurmSpace, ss_free
from slurm_try_later cimport SlurmShadow, sh_free
from licenses cimport Licenses, lic_free
from qos_limits cimport QosLimits, ql_free
from advance_resv cimport AdvResv, ar_free
from part_records cimport PartRecords, pr_free
from records cimport PassRecords, PassTotals, LastPass, StartEstimates, records_free, estimates_free
from pass_cost cimport PassCost, CHOICE_AUTO
from parallel cimport WorkerPool, SpecRing, CommitLog, ParallelPass, Spec, log_free, ring_free, pool_free_copies
from pbf._codes cimport PR_FCFS, PD_GIVEN, CR_INCREMENTAL, TR_EVENT, CK_FREE, EX_END
from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct Config:        # the scheduling settings, set before the first pass (core_config.py)
    int64_t resv_max           # reservations per pass; < 0: unlimited (conservative)
    int64_t max_job_test       # jobs a full pass may test; < 0: unlimited
    int64_t bf_window          # seconds ahead a reservation may start; 0: unlimited
    int64_t bf_resolution      # planned ends rounded up to this many seconds; 0: exact
    bint sjbf                  # after the reservations, candidates shortest estimate first
    bint bf_keyed              # ... ordered by keys set from Python (a chooser), not estimates
    bint no_backfill           # full passes start jobs in order and stop at the first misfit
    bint resv_stop             # with no reservation left, a pass ends at the next job needing one
    int trigger                # TR_*: when the replay runs passes
    int64_t bf_interval        # TR_INTERVAL: seconds between full passes
    bint record_passes         # keep a record of every pass (else the totals only)
    int64_t workers            # threads per full pass, counting the caller (1: sequential)
    bint commit_eager          # parallel: first done, first committed (else queue order)
    bint hooks                 # the replay stops at each instant for Python plugins


ctypedef struct Testing:       # switches for tests and benchmarks (Core.set_testing); no decision changes
    bint record_units          # keep a copy of each started job's units (Jobs.bits)
    bint stale_speculation     # parallel: speculate on snapshots taken at the pass start (WorkerPool.snap)
    bint resume                # 0: never resume the last pass (to measure fresh passes)
    bint repeat                # 0: never take a due full pass as a repeat of the last (cycle.pxd)
    int64_t parallel_min_queue     # passes with fewer queued jobs run sequentially
    int parallel                   # CHOICE_*: full passes on the pool when predicted to pay, always, never
    int64_t split_min_nodes        # a sequential pass on nodes shares the searches over at least this
                                   # many eligible nodes with a helper thread (0: never)
    bint split_wait                # ... and waits for the helper on each, never doing its part itself
    int64_t split_trial_ns         # ... where a trial of passes with and without sharing, this much pass
                                   # wall time each way, finds it pays (0: always)


ctypedef struct ResumeState:   # the last full pass, when it can be continued instead of run again
    bint valid                 # it can (see pass_can_resume)
    bint blocked               # it had a job that could not start now
    int64_t version            # Nodes.version when it ended
    int64_t npend              # the queue length when it ended (its jobs: the first npend)
    int64_t resv               # reservations it made ...
    int64_t resv_left          # ... and had left
    int64_t time               # when it ran
    int64_t count              # passes resumed so far


ctypedef struct RepeatState:   # the replay's last full pass, when the next one due may repeat it (cycle.pxd)
    bint valid                 # it started nothing and ended at the queue's end or max_job_test
    int64_t version            # Nodes.version ...
    int64_t next_sub           # ... the next job to submit ...
    int64_t queue              # ... and the queue's length when it ended
    int64_t depth              # its figures: jobs tested, reservations, exit, plan size
    int64_t resv
    int ex
    int64_t slots
    int64_t count              # full passes taken as repeats so far


ctypedef struct Decisions:     # the last pass's decisions (the embedding API reads them)
    int64_t* started           # jobs started ...
    int64_t nstarted           # ... how many ...
    int64_t started_cap        # ... and room
    int64_t* reserved          # jobs reserved ...
    int64_t nreserved          # ... how many ...
    int64_t reserved_cap       # ... and room


ctypedef struct ReplayState:   # the event loop
    EndKey* heap               # a min-heap of (actual end, job) of running jobs
    int64_t nheap              # entries
    int64_t heap_cap           # room
    int64_t next_sub           # the next job of the trace to submit
    int64_t next_bf            # TR_INTERVAL: when the next full pass is due
    int64_t now                # the current instant (-INF before the first)
    bint hook_waiting          # stopped at an instant for Python (Config.hooks)
    bint hook_resume           # Python has seen hook_t: go on from there
    bint hook_events           # that instant had completions or arrivals
    int64_t hook_t             # the instant handed to Python
    int64_t* finished          # jobs finished since Python last took them (hooks) ...
    int64_t nfinished          # ... how many ...
    int64_t finished_cap       # ... and room


ctypedef struct MainParts:     # Slurm's main scheduler and partitions (job_scheduler.c _schedule, failed_parts)
    uint64_t failed            # the partitions failed in the pass under way (a bit each)
    uint64_t job_parts         # the partitions of the job just found not to fit (0: none, or no partitions)
    uint64_t all_parts         # every partition with a node
    bint skip                  # the job was not tried: every partition of it had failed
    int32_t rec                # the queue entry's first partition record (-1: all; part_records.pxd)
    uint64_t failed_resv       # the reservations (jobs inside, groups 1..64: a bit each) failed in the pass


ctypedef struct PassCtx:       # the full pass under way; written by whoever commits (one at a time)
    int64_t now                # the pass's time
    int64_t start_us0          # slurm-sim clock: the cycle's start, us (a job starts when the cycle
                               # reaches it: start_us0 + its worker's charge); -1 otherwise
    int64_t depth              # jobs tested
    int64_t started            # jobs started
    int64_t resv               # reservations made
    int64_t resv_left          # reservations still allowed (< 0: unlimited); speculating workers read it
    int64_t phase2             # the queue position where the SJBF phase begins, or -1
    int64_t first_start        # the lowest queue position started (marked in the queue), or -1
    int64_t reeval             # parallel: commits that searched again
    int64_t conflicts          # parallel: commits whose answer newer commits touched
    int64_t inversions         # eager: placements made before a higher-priority job committed
    int ex                     # why the pass stopped (EX_*)
    bint blocked               # a job could not start now: later starts are backfill
    bint backfilled            # a job started after one was blocked
    bint built                 # the profile is in use (sequential: built at the first misfit)
    bint parallel              # placements are also published in the commit log
    bint in_phase2             # the SJBF phase: start-now tests in estimate order


# ---- the planner interface
# What the passes, the cycle, start estimates and the parallel pass ask of the plan of the future,
# as one table of operations a cluster kind fills (planner.pxd): interchangeable units
# (plan_units.pxd, the profile of DESIGN §4), nodes with memory, GPUs and features by cons_tres best
# fit (plan_nodes.pxd) and Slurm 22.05's backfill on those nodes (plan_slurm.pxd). Nothing outside
# the planners branches on the cluster kind; a planner is tested alone against its oracle in
# pbf/reference (tests/test_planners.py).

cdef struct State

# the pass's plan of the future at now (the profile or the node lines): RC_*
ctypedef int (*PlanBuild)(State* S, int64_t now) noexcept nogil
# the size of the plan in use (the pass record's slots; the model clock's per-slot charge)
ctypedef int64_t (*PlanSize)(State* S) noexcept nogil
# a full pass at now begins (the planner's own per-pass state): RC_*
ctypedef int (*PlanBegin)(State* S, int64_t now) noexcept nogil
# the job test at queue position p, on the plan P or M (passes.pxd job_step): start it now, reserve
# it or skip it; the next position, STEP_STOP or STEP_ERROR
ctypedef int64_t (*PlanStep)(State* S, Prof* P, NodeModel* M, int64_t p, int mode, const Spec* spec) noexcept nogil
# the main scheduler's test of job j (k units) with no plan: whether it fits now; if so, the units it
# takes are in S.prof.chosen
ctypedef bint (*PlanTakeNow)(State* S, int64_t j, int64_t k) noexcept nogil
# whether job j can never run on this cluster (rejected at submission)
ctypedef bint (*PlanNeverFits)(State* S, int64_t j) noexcept nogil
# job j takes (sign -1) or gives back (sign 1) its units: the planner's own per-node accounts
ctypedef void (*PlanUse)(State* S, int64_t j, const uint64_t* units, int64_t sign) noexcept nogil
# job j was queued (the planner's submission test)
ctypedef void (*PlanQueued)(State* S, int64_t j) noexcept nogil
# every queued job's planned start at now, as a conservative pass would make it (estimates.pxd)
ctypedef int (*PlanStarts)(State* S, int64_t now, int64_t* out, uint64_t* units_out) noexcept nogil
# the parallel pass: the workers' copies of the plan made at its start (after build), RC_*
ctypedef int (*PlanPrepare)(State* S) noexcept nogil
# ... worker wid's own copy (P, M) made, and the copy it speculates on (*spec_prof, *spec_nm), RC_*
ctypedef int (*PlanWorkerCopy)(State* S, int64_t wid, Prof* P, NodeModel* M, Prof** spec_prof,
                               NodeModel** spec_nm) noexcept nogil
# ... a copy applies commit-log entry e, RC_*
ctypedef int (*PlanApply)(State* S, Prof* P, NodeModel* M, int64_t e) noexcept nogil
# ... the speculative test of job j (k units, d seconds) on a worker's copy, which has applied the
# first *seen log entries: its earliest start (now only: whether it starts now), or -1
# (parallel_pass.pxd speculate)
ctypedef int64_t (*PlanSpeculate)(State* S, Prof* P, NodeModel* M, int64_t j, int64_t k, int64_t d, bint now_only,
                                  int64_t* seen, uint64_t* cand, uint64_t* chosen, int8_t* proposed,
                                  int64_t* ncpu) noexcept nogil
# ... the bytes a worker's copy of the plan costs (the choice of threads)
ctypedef double (*PlanCopyBytes)(State* S) noexcept nogil

ctypedef struct Planner:
    int kind                   # PL_*: which planner (reports and tests; nothing branches on it)
    bint resumable             # a pass may be continued instead of run again (passes.pxd can_resume)
    bint job_parallel          # the job-parallel pass (DESIGN §5) implements it
    bint split_search          # a search's per-node set-up may be shared with a helper thread
    bint copies_own_prof       # the parallel pass: worker 0 decides on S.prof, copied by the others first
    int64_t ncpu_words         # the parallel pass: per-node cores a speculation hands its commit (0: none)
    PlanBuild build
    PlanSize size
    PlanBegin begin
    PlanStep step
    PlanTakeNow take_now
    PlanNeverFits never_fits
    PlanUse use                # (NULL: nothing to account)
    PlanQueued queued          # (NULL: no submission test)
    PlanStarts starts
    PlanPrepare prepare_copies
    PlanWorkerCopy worker_copy
    PlanApply apply
    PlanSpeculate speculate
    PlanCopyBytes copy_bytes

cdef enum:
    PL_UNITS = 0               # interchangeable units: the profile
    PL_NODES = 1               # nodes: pbf's exact plan of every node's free resources
    PL_SLURM = 2               # nodes: Slurm's backfill (will-run test, whole-node reservations)


cdef struct State:
    int64_t units              # units in the cluster
    int64_t W                  # words per bitmap
    Config cfg                 # the settings
    Testing testing            # test and benchmark switches
    Policy policy              # priority, predictor, correction settings and the regression model
    Jobs jobs                  # the job table
    Users users                # per-user history and usage
    Nodes nodes                # free units, running jobs
    Queue queue                # pending jobs in priority order
    Prof prof                  # the profile of the sequential pass; slot 0 is always the head at `now`
    PassCtx ctx                # the full pass under way
    PassClock clock            # what a pass costs, and its budget
    SimTime sim                # the slurm-sim clock's main loop
    LastPass last              # the last full pass's figures
    PassCost cost              # measured pass costs: whether the next full pass runs parallel
    PassTotals totals          # sums over every pass
    PassRecords records        # one record a pass, when kept
    ResumeState resume_st      # the last pass, if it can be continued
    RepeatState rep            # the replay's last full pass, if the next may repeat it
    Decisions decided          # the last pass's starts and reservations
    ReplayState replay         # the event loop
    OutageEvents outages       # the replay's drains, failures and resumes (outages.pxd)
    StartEstimates est         # the replay's start-time estimates (estimates.pxd)
    CoAlloc co                 # co-allocation (coalloc.pxd)
    NodeModel nm               # nodes with memory, GPUs and features (node_model.pxd; off: units)
    SlurmSpace ss              # Slurm's backfill on those nodes, when chosen (slurm_space.pxd)
    SlurmShadow ssh            # ... a helper thread's scratch for its tests of later starts (slurm_try_later.pxd)
    EndKey* ends               # scratch: corrected jobs, the SJBF order
    int64_t ends_cap           # room in ends
    WorkerPool pool            # the parallel pass's threads and profile copies
    SpecRing ring              # speculative results waiting for their commit
    CommitLog log              # placements in commit order
    ParallelPass par           # the parallel pass's shared progress
    NodeSplit split            # a sequential pass on nodes: its searches' helper thread
    Planner plan               # the planner of this cluster (planner.pxd planner_use; units until set)
    MainParts main             # the main scheduler's partitions in its pass under way (passes.pxd main_pass)
    Licenses lic               # cluster-wide licenses (licenses.pxd; off: none)
    QosLimits qos_lim          # QOS limits on running jobs (qos_limits.pxd; off: none)
    AdvResv ar                 # advance reservations on the nodes (advance_resv.pxd; none: n = 0)
    PartRecords prec           # jobs of several partitions: a test each (part_records.pxd; none: cap = 0)


cdef enum:
    SPLIT_TRIAL_NS = 100000000 # a trial of sharing a node search: pass wall time each way (ns)
    SPLIT_MIN_NODES = 64       # a node search's set-up worth a helper's hand-off (about 20 ns a node
                               # against a few hundred for the hand-off)


cdef inline int state_init(State* S, int64_t units) noexcept nogil:
    # an empty engine with the default settings; RC_NO_MEMORY: out of memory
    memset(S, 0, sizeof(State))
    S.units = units
    S.W = (units + 63) // 64
    if nodes_init(&S.nodes, units) != RC_OK or prof_init(&S.prof, S.W) != RC_OK:
        return RC_NO_MEMORY
    S.cfg.resv_max = 1
    S.cfg.max_job_test = -1
    S.main.rec = -1
    S.cfg.trigger = TR_EVENT
    S.cfg.bf_interval = 30
    S.cfg.record_passes = 1
    S.cfg.workers = 1
    S.policy.prio = PR_FCFS
    S.policy.predictor = PD_GIVEN
    S.policy.correction = CR_INCREMENTAL
    S.policy.max_age = 7 * 86400
    S.policy.half_life = 7 * 86400
    S.policy.fs_damp = 1.0
    S.policy.next_prio = -INF
    S.users.last_calc = -INF
    S.replay.next_bf = -INF
    S.replay.now = -INF
    S.testing.resume = 1
    S.testing.repeat = 1
    S.outages.requeue = 1
    S.testing.parallel_min_queue = 64
    # Threads pay only when a pass has work to share: cheap passes (most, on this engine: job tests
    # cost nanoseconds) stay sequential (pass_cost.pxd). Decisions are the same either way.
    S.testing.parallel = CHOICE_AUTO
    S.testing.split_min_nodes = SPLIT_MIN_NODES
    S.testing.split_trial_ns = SPLIT_TRIAL_NS
    S.clock.kind = CK_FREE
    S.clock.cost_test_us = 10_000
    S.clock.cost_slot_us = 20
    S.clock.cost_node_us = 0
    S.clock.cost_resv_us = 0
    S.clock.cost_power = 1.0
    S.clock.cost_pref_us = 10_000
    simtime_defaults(&S.sim)
    return RC_OK


cdef inline void state_free(State* S) noexcept nogil:
    # everything but the pool's threads and locks (Core stops and destroys those first)
    coalloc_free(&S.co, S.jobs.n)          # (first: it frees per-job lists)
    prof_free(&S.prof)
    pool_free_copies(&S.pool)
    ring_free(&S.ring)
    log_free(&S.log)
    clock_free(&S.clock)
    records_free(&S.records)
    free(S.par.committed)
    jobs_free(&S.jobs)
    users_free(&S.users)
    policy_free(&S.policy)
    nodes_free(&S.nodes)
    nm_free(&S.nm)
    ss_free(&S.ss)
    sh_free(&S.ssh)
    lic_free(&S.lic)
    ql_free(&S.qos_lim)
    ar_free(&S.ar)
    pr_free(&S.prec)
    outage_events_free(&S.outages)
    estimates_free(&S.est)
    queue_free(&S.queue)
    free(S.ends)
    free(S.replay.heap)
    free(S.replay.finished)
    free(S.decided.started)
    free(S.decided.reserved)
    S.ends = NULL
    S.replay.heap = NULL
    S.replay.finished = NULL
    S.decided.started = NULL
    S.decided.reserved = NULL
