# The parallel full pass (DESIGN §5), header only. Workers evaluate jobs speculatively on possibly
# stale profiles (worker 0 on the pass's own, the others on private copies); results commit through
# job_step on the committer's profile, brought up to date with the commit log. The commit skips only what the speculation proves (a job
# that could not start, or had no start in the window, on an older copy cannot on the newer one: a
# pass only removes free units), so decisions and statistics equal the sequential pass's. Ordered
# commit (the default) commits in queue order; eager commit in completion order (the paper's).

from libc.stdint cimport uint64_t, int64_t, int32_t, int8_t
from libc.string cimport memset, memcpy

from memory cimport INF, grow
from words cimport w_copy
from ticks cimport now_ticks, clock_ns, thread_cpu_ns, PBF_HAVE_TSC
from profile cimport (Prof, prof_choose, prof_cnt, prof_copy, prof_apply, prof_ensure_scratch, prof_live_slots, prof_find_start,
                      prof_known_misfit, prof_note_misfit, prof_round_up, prof_find_start_bounded, hints_bound,
                      hints_add)
from parallel cimport SPEC_NOW, SPEC_FULL, log_reserve, ring_reserve
from node_model cimport NodeModel, NodeSplit, nm_split_helper, nm_apply, nm_find_start, nm_make_events, nm_copy_plan, nm_monotone
from sync cimport (pbf_fetch_add, pbf_load, pbf_store, pbf_cas, pbf_pause, pthread_mutex_lock, pthread_mutex_unlock,
                   pthread_cond_wait, pthread_cond_broadcast, pthread_cond_signal, sched_yield)
from parallel cimport Spec
from pass_steps cimport CM_ORDERED, CM_EAGER, STEP_STOP, STEP_ERROR
from passes cimport job_step, begin_full_pass, build_plan, sjbf_phase, end_full_pass, record_pass, pass_slots
from plan_nodes cimport node_recheck
from state cimport State, PassCtx
from pbf._codes cimport CK_MODEL, PK_FULL, EX_END, EX_MAX_JOB_TEST, RC_NO_MEMORY
from pbf._codes cimport RC_OK, NO_START

cdef enum:
    SPLIT_IDLE_NS = 2000000    # a search helper with nothing to do returns to the pool after this
    SPLIT_STALL_NS = 50000     # a wait for the helper this long means it lost its CPU
    SPLIT_JUDGE_NS = 20000000  # shared passes are judged over this much of their wall time ...
    SPLIT_MAX_STALLS = 2       # ... by their stalls ...
    SPLIT_BACKOFF = 4          # passes without sharing after the first bad one, ...
    SPLIT_BACKOFF_MAX = 256    # ... doubling up to this
    SPLIT_MIN_CPU_PCT = 85     # ... and the searching thread's CPU share (%)
    TRIAL_KEEP = 16            # a trial's verdict is kept for this many times the trial's length; ...
    TRIAL_MARGIN_PCT = 3       # ... sharing wins where it was this much faster per test; ...
    TRIAL_APART = 3            # ... but where one way was this many times faster per test, the passes
    TRIAL_RETRIES = 2          # differed in kind (two threads at most halve a pass): the trial runs
                               # again, up to this many times in a row before its verdict holds
    TRIAL_KEEP_IDLE = 1        # a verdict against sharing from passes that offered the helper less
                               # than a search a test is kept only this many times the trial's length,
                               # doubled for each such verdict in a row (up to TRIAL_KEEP)

    SPIN_NS = 20000            # a wait spins this long before it sleeps
    RING_PER_WORKER = 4        # speculative results a worker may hold ahead of the commit point: a
                               # long search at the commit point does not stop the others at once


cdef inline void note_progress(State* S) noexcept nogil:
    # the pass moved on (a commit, a copy made, the stop): wake whoever sleeps waiting for it
    # (the atomic add orders the epoch before the sleepers' count; the sleeper orders them the
    # other way round, so one of the two sees the other)
    pbf_fetch_add(&S.par.epoch, 1)
    if pbf_load(&S.par.sleepers) > 0:
        pthread_mutex_lock(&S.pool.mu)
        pthread_cond_broadcast(&S.pool.progress)
        pthread_mutex_unlock(&S.pool.mu)


cdef inline void await_progress(State* S, int64_t epoch, int64_t* since) noexcept nogil:
    # Nothing to do until another worker moves the pass on from `epoch` (read before the caller
    # looked), most often within microseconds. With more workers than CPUs, yield: the worker
    # waited for may need this CPU. Otherwise spin a while, then sleep until woken: spinning (or
    # yielding) on and on would take CPU time from the worker waited for when the host gives this
    # process fewer CPUs than it has workers (other processes running), and a yield can lose the
    # CPU for a whole time slice there. since: the ticks when this wait began (0: it begins now).
    cdef int64_t t
    cdef double ns = S.cost.ns_per_tick if S.cost.ns_per_tick > 0 else 1.0
    if S.cfg.workers > S.cost.cores:
        sched_yield()
        return
    t = now_ticks()
    if since[0] == 0:
        since[0] = t
    if (t - since[0]) * ns < SPIN_NS:
        pbf_pause()
        return
    pthread_mutex_lock(&S.pool.mu)
    pbf_fetch_add(&S.par.sleepers, 1)
    if pbf_load(&S.par.epoch) == epoch:
        pthread_cond_wait(&S.pool.progress, &S.pool.mu)
    pbf_fetch_add(&S.par.sleepers, -1)
    pthread_mutex_unlock(&S.pool.mu)


cdef inline void await_copies(State* S) noexcept nogil:
    # worker 0 decides on the pass's own profile: before it changes it, every other worker must
    # have copied it
    cdef int64_t since = 0, epoch = pbf_load(&S.par.epoch)
    while pbf_load(&S.par.copied) < S.cfg.workers - 1 and not S.par.error:
        await_progress(S, epoch, &since)
        epoch = pbf_load(&S.par.epoch)


cdef inline int catch_up(State* S, Prof* P, NodeModel* M, int64_t* seen) noexcept nogil:
    # apply the log entries this copy (P, or M on a node cluster) has not seen; RC_* on failure
    cdef int64_t n, e = seen[0]
    cdef int rc
    n = pbf_load(&S.log.n)
    if e < n and P == &S.prof and S.plan.copies_own_prof:
        await_copies(S)
    while e < n:
        rc = S.plan.apply(S, P, M, e)
        if rc != RC_OK:
            return rc
        e += 1
    seen[0] = n
    return RC_OK


cdef inline int64_t speculative_search(State* S, Prof* P, int64_t k, int64_t d, int64_t now, int32_t* si) noexcept nogil:
    # The earliest start on this worker's copy, the search bounded by what every worker's searches
    # found (on older or newer states of the pass's profile: either way a lower bound on the state
    # the commit decides on, so the commit's AND test and its search again from the result stay
    # exact). The shared table is under a try-lock: when another worker holds it (or was preempted
    # holding it), the search is bounded by this copy's own searches instead. A pass-start snapshot
    # (tests) searches alone, so that its answers depend on nothing but the pass start.
    cdef int64_t bound, t
    cdef bint shared
    if S.pool.snap != NULL or P.monotone:
        return prof_find_start(P, k, d, now, False, si)
    shared = pbf_cas(&S.par.hints_lock, 0, 1)
    if shared:
        bound = hints_bound(&S.par.hints, k, d)
        pbf_store(&S.par.hints_lock, 0)
    else:
        bound = hints_bound(&P.hints, k, d)
    if bound == -1:
        return NO_START
    t = prof_find_start_bounded(P, k, d, now, bound, si)
    hints_add(&P.hints, k, d, t)
    if pbf_cas(&S.par.hints_lock, 0, 1):
        hints_add(&S.par.hints, k, d, t)
        pbf_store(&S.par.hints_lock, 0)
    return t


cdef inline void abandon_pass(State* S, int rc) noexcept nogil:
    # a failure somewhere: every worker stops, and the pass reports it
    S.par.error = rc
    pbf_store(&S.par.stop, 0)
    note_progress(S)


cdef inline int64_t speculation_catch_up(State* S, Prof* P, NodeModel* M, int64_t j, int64_t k, int64_t d, int64_t t,
                                         bint now_only, int64_t* seen) noexcept nogil:
    # a node speculation's start t, brought up to date with the commits made while it searched
    # (a few rounds: the commits go on meanwhile)
    cdef int64_t before, rounds
    cdef int rc
    cdef bint changed, searched
    for rounds in range(4):
        before = seen[0]
        if pbf_load(&S.log.n) == before or t < 0 or S.par.error:
            break
        rc = catch_up(S, P, M, seen)
        if rc != RC_OK:
            abandon_pass(S, rc)
            return NO_START
        t = node_recheck(S, M, j, k, d, t, before, now_only, False, &changed, &searched)
    return t


cdef inline void speculate(State* S, Prof* P, NodeModel* M, int64_t idx, int64_t wid, int64_t* seen, int64_t* t_out,
                           int64_t* mode_out, uint64_t* cand, uint64_t* chosen, int8_t* proposed,
                           int64_t* ncpu) noexcept nogil:
    # the speculative test of queue position idx on this worker's copy (P, or M on a node cluster),
    # which may miss the latest commits; `cand` (if not NULL) gets the candidates of an earliest
    # start found and `chosen` the units the unit choice takes among them on this copy (*proposed:
    # whether it did), `ncpu` (if not NULL) the cores each node gives the job there
    cdef int64_t k = S.queue.entries[idx].units, d = S.queue.entries[idx].est, t = -1, mode = SPEC_FULL
    cdef int64_t j = S.queue.entries[idx].job
    cdef bint now_only
    cdef int rc
    if proposed != NULL:
        proposed[0] = 0
    if not S.par.error:
        rc = RC_OK if S.pool.snap != NULL else catch_up(S, P, M, seen)
        if rc != RC_OK:
            abandon_pass(S, rc)
        else:
            # (a snapshot asks what it would have asked at the pass start: no answer may depend on
            # how far the commits are)
            now_only = S.cfg.resv_max == 0 if S.pool.snap != NULL else pbf_load(&S.ctx.resv_left) == 0
            if now_only:
                mode = SPEC_NOW
            t = S.plan.speculate(S, P, M, j, k, d, now_only, seen, cand, chosen, proposed, ncpu)
        S.pool.tests[wid] += 1
    t_out[0] = t
    mode_out[0] = mode


cdef inline void help_commit(State* S, Prof* P, NodeModel* M, int64_t* seen) noexcept nogil:
    # (P or M, seen: the copy commits are made on, and the log entries it has applied)
    # commit, in queue order, every result ready at the commit point, if no other worker is doing so;
    # a result made ready just after the holder looked is committed by the next call of any worker
    # (each calls this between jobs until the pass is done)
    cdef int64_t c, s, n = S.ring.n, q
    cdef Spec spec
    cdef int rc
    while True:
        c = pbf_load(&S.par.commit)
        if c >= S.par.limit or c >= pbf_load(&S.par.stop) or pbf_load(&S.ring.ready[c % n]) != c:
            return
        if not pbf_cas(&S.par.committer, 0, 1):
            return
        if P == &S.prof and S.plan.copies_own_prof:
            await_copies(S)         # commits change the pass's profile
        c = pbf_load(&S.par.commit)
        while c < S.par.limit and c < pbf_load(&S.par.stop) and pbf_load(&S.ring.ready[c % n]) == c:
            s = c % n
            if S.par.error:
                break
            rc = catch_up(S, P, M, seen)
            if rc != RC_OK:
                abandon_pass(S, rc)
                break
            spec.t = S.ring.t[s]
            spec.mode = S.ring.mode[s]
            spec.seen = S.ring.seen[s]
            spec.cand = S.ring.cand + s * S.W
            spec.chosen = S.ring.chosen + s * S.W if S.ring.proposed[s] else NULL
            spec.ncpu = S.ring.ncpu + s * S.ring.nn
            q = job_step(S, P, M, c, CM_ORDERED, &spec)
            if q == STEP_ERROR:
                abandon_pass(S, RC_NO_MEMORY)
                break
            if q == STEP_STOP:
                pbf_store(&S.par.stop, c)
            seen[0] = S.log.n     # this copy holds what it just committed
            c += 1
            pbf_store(&S.par.commit, c)
            note_progress(S)
        pbf_store(&S.par.committer, 0)


cdef inline void worker_ordered(State* S, Prof* P, Prof* spec_prof, NodeModel* M, NodeModel* spec_nm, int64_t wid,
                                int64_t* seen) noexcept nogil:
    # Take the next job, speculate, leave the result in the ring; whoever finds the next result in
    # queue order ready commits it (and every ready one after it) on its own copy. Nobody waits for
    # a turn: a worker that cannot commit takes another job, as long as the ring has room (at most
    # ring.n jobs between the commit point and the next job taken).
    # spec_prof, spec_nm: the copy speculations run on (P or M, or a pass-start snapshot that never
    # catches up)
    cdef int64_t idx, stop, s, n = S.ring.n, snap_seen = 0, since = 0, epoch
    cdef int64_t* spec_seen = seen if S.pool.snap == NULL else &snap_seen
    while True:
        epoch = pbf_load(&S.par.epoch)
        help_commit(S, P, M, seen)
        stop = pbf_load(&S.par.stop)
        if stop > S.par.limit:
            stop = S.par.limit
        if pbf_load(&S.par.commit) >= stop:
            return
        idx = pbf_load(&S.par.next)
        if idx >= stop or idx - pbf_load(&S.par.commit) >= n:
            await_progress(S, epoch, &since)
            continue
        if not pbf_cas(&S.par.next, idx, idx + 1):
            continue
        since = 0
        s = idx % n
        speculate(S, spec_prof, spec_nm, idx, wid, spec_seen, &S.ring.t[s], &S.ring.mode[s], S.ring.cand + s * S.W,
                  S.ring.chosen + s * S.W, &S.ring.proposed[s], S.ring.ncpu + s * S.ring.nn)
        S.ring.seen[s] = spec_seen[0]    # the log entries the speculation saw
        pbf_store(&S.ring.ready[s], idx)


cdef inline void worker_eager(State* S, Prof* P, Prof* spec_prof, NodeModel* M, NodeModel* spec_nm, int64_t wid,
                              int64_t* seen) noexcept nogil:
    # the paper's order: first done, first committed, one commit at a time. A placement made while a
    # higher-priority job of this pass has not committed yet is a priority inversion.
    cdef int64_t idx, before, q, snap_seen = 0
    cdef int64_t* spec_seen = seen if S.pool.snap == NULL else &snap_seen
    cdef Spec spec
    cdef int rc
    cdef PassCtx* c = &S.ctx
    spec.seen = 0
    spec.cand = NULL
    spec.chosen = NULL
    spec.ncpu = NULL
    while True:
        idx = pbf_fetch_add(&S.par.next, 1)
        if idx >= S.par.limit or idx >= pbf_load(&S.par.stop):
            return
        speculate(S, spec_prof, spec_nm, idx, wid, spec_seen, &spec.t, &spec.mode, NULL, NULL, NULL, NULL)
        pthread_mutex_lock(&S.pool.commit_mu)
        if P == &S.prof and S.plan.copies_own_prof:
            await_copies(S)         # commits change the pass's profile
        if not S.par.error:
            rc = catch_up(S, P, M, seen)
            if rc != RC_OK:
                abandon_pass(S, rc)
            else:
                before = c.started + c.resv
                q = job_step(S, P, M, idx, CM_EAGER, &spec)
                if q == STEP_ERROR:
                    abandon_pass(S, RC_NO_MEMORY)
                elif q == STEP_STOP:
                    pbf_store(&S.par.stop, 0)      # no further job is tested
                else:
                    if c.started + c.resv > before and idx > S.par.low:
                        c.inversions += 1
                    S.par.committed[idx] = 1
                    while S.par.low < S.par.limit and S.par.committed[S.par.low]:
                        S.par.low += 1
            seen[0] = S.log.n
        pthread_mutex_unlock(&S.pool.commit_mu)


cdef inline NodeModel* worker_nm(State* S, int64_t wid) noexcept nogil:
    # the node plan worker wid decides and speculates on: worker 0 the state's own, the others copies
    return &S.nm if wid == 0 else &S.pool.nm[wid]


cdef inline void pass_worker(State* S, int64_t wid) noexcept nogil:
    # Worker 0 decides on the pass's own profile (no copy: it speculates on it at once, and changes
    # it only once the others have copied it); the others on private copies.
    cdef Prof* P = &S.prof if wid == 0 else &S.pool.prof[wid]
    cdef Prof* spec_prof = P
    cdef NodeModel* M = worker_nm(S, wid)
    cdef NodeModel* spec_nm = M
    cdef int64_t seen = 0
    if S.plan.worker_copy(S, wid, P, M, &spec_prof, &spec_nm) != RC_OK:
        abandon_pass(S, RC_NO_MEMORY)
    if S.cfg.commit_eager:
        worker_eager(S, P, spec_prof, M, spec_nm, wid, &seen)
    else:
        worker_ordered(S, P, spec_prof, M, spec_nm, wid, &seen)
    S.pool.seen[wid] = seen


cdef inline void pool_loop(State* S, int64_t wid, int64_t gen) noexcept nogil:
    # a pool thread: run pass_worker for every pass posted (or help a sequential pass's node
    # searches), until shutdown. gen: the generation when the pool started -- not when this thread
    # first runs, which may be after the first pass was posted (that wake-up would be lost)
    cdef bint split
    pthread_mutex_lock(&S.pool.mu)
    while True:
        while S.pool.gen == gen and not S.pool.shutdown:
            pthread_cond_wait(&S.pool.work, &S.pool.mu)
        if S.pool.shutdown:
            break
        gen = S.pool.gen
        split = S.pool.split
        pthread_mutex_unlock(&S.pool.mu)
        if split:
            # the helper's part, if still open for this very pass (a thread waking late finds it
            # taken or closed)
            if pbf_cas(&S.split.slot, gen, -1):
                nm_split_helper(&S.split)
                pbf_store(&S.split.slot, -2)
        elif not S.pool.idle and wid < S.cfg.workers:
            pass_worker(S, wid)        # (a thread beyond the workers is only a helper: slurm_loop.pxd)
        pthread_mutex_lock(&S.pool.mu)
        if S.pool.gen == gen:        # (a late finish of an older task does not count)
            S.pool.finished += 1
            if S.pool.finished == S.pool.threads:
                pthread_cond_broadcast(&S.pool.done)
    pthread_mutex_unlock(&S.pool.mu)


cdef inline void split_start(void* arg) noexcept nogil:
    # NodeSplit.start: ask the pool for a helper (one thread woken: the first to run takes the
    # helper's part; the searches never wait for it to arrive)
    cdef State* S = <State*>arg
    pthread_mutex_lock(&S.pool.mu)
    pbf_store(&S.split.leave, 0)
    S.pool.split = True
    S.pool.gen += 1
    S.pool.finished = 0
    pbf_store(&S.split.slot, S.pool.gen)        # open to a thread woken for this generation
    pthread_cond_signal(&S.pool.work)
    pthread_mutex_unlock(&S.pool.mu)


cdef inline void split_recall(State* S) noexcept nogil:
    # before the pool gets other work: the helper, if one runs or was asked for, returns to it
    cdef int64_t g
    if S.split.start == NULL:
        return
    pbf_store(&S.split.leave, 1)
    while True:
        g = pbf_load(&S.split.slot)
        if g == -2 or (g > 0 and pbf_cas(&S.split.slot, g, -2)):
            return
        pbf_pause()


cdef inline bint split_arm(State* S, int64_t min_nodes) noexcept nogil:
    # a sequential pass on nodes shares its searches' per-node set-up over min_nodes eligible nodes
    # or more with a helper thread (asked for at the first such search, if none is running); False
    # while backing off (an earlier pass found the host without a CPU to spare)
    cdef double tick = S.cost.ns_per_tick if S.cost.ns_per_tick > 0 else 1.0
    if S.split.start == NULL:
        S.split.slot = -2
    if S.split.backoff_left > 0:
        S.split.backoff_left -= 1
        return False
    S.split.min_nodes = min_nodes
    S.split.wait = S.testing.split_wait
    S.split.start = split_start
    S.split.start_arg = <void*>S
    S.split.idle_ticks = <int64_t>(SPLIT_IDLE_NS / tick)
    S.split.stall_ticks = <int64_t>(SPLIT_STALL_NS / tick)
    S.split.wall0 = clock_ns()
    S.split.cpu0 = thread_cpu_ns()
    S.split.tasks_armed = S.split.tasks
    S.nm.split = &S.split
    return True


cdef inline void split_disarm(State* S) noexcept nogil:
    # The pass is over (the helper stays a while, for the next pass, and touches nothing meanwhile).
    # Two threads pay only with a CPU each. Over every SPLIT_JUDGE_NS of shared passes: if this
    # thread had its CPU less than SPLIT_MIN_CPU_PCT % of the time (another process wants it: the
    # spinning helper takes this thread's share) or waited for a helper that had lost its CPU more
    # than SPLIT_MAX_STALLS times, the passes back off, sharing no search for the next `backoff`
    # passes (doubling while it lasts); a judgement that finds the CPU back ends it.
    S.nm.split = NULL
    if S.testing.split_wait:
        return
    S.split.acc_wall += clock_ns() - S.split.wall0
    S.split.acc_cpu += thread_cpu_ns() - S.split.cpu0
    if S.split.acc_wall < SPLIT_JUDGE_NS:
        return
    if S.split.stalls > SPLIT_MAX_STALLS or S.split.acc_cpu * 100 < SPLIT_MIN_CPU_PCT * S.split.acc_wall:
        S.split.backoff = S.split.backoff * 2 if S.split.backoff > 0 else SPLIT_BACKOFF
        if S.split.backoff > SPLIT_BACKOFF_MAX:
            S.split.backoff = SPLIT_BACKOFF_MAX
        S.split.backoff_left = S.split.backoff
        S.split.backoffs += 1
        split_recall(S)
    else:
        S.split.backoff = 0
    S.split.acc_wall = 0
    S.split.acc_cpu = 0
    S.split.stalls = 0


cdef inline bint split_trial_share(State* S) noexcept nogil:
    # Whether this pass on nodes shares its searches. Whether sharing pays depends on the workload
    # (how much of a pass is the searches' set-up, which is what a helper shares) and on the host
    # (its caches, its other work), so it is measured, not predicted: a trial runs passes with and
    # without sharing in turn (neighbouring passes see nearly the same queue and plan), then keeps
    # the way that was faster per test for a while (the passes decide the same either way), then
    # tries again. The helper stays through the trial (it leaves after 2 ms without a search).
    # A trial lasts until each way has had Testing.split_trial_ns of pass wall time (100 ms).
    cdef NodeSplit* X = &S.split
    if S.testing.split_wait or S.testing.split_trial_ns <= 0:
        return True
    if X.trial_on == 0 and X.trial_keep_ns <= 0:
        X.trial_on = 1
        X.trial_share = 1
        X.trial_ns[0] = 0
        X.trial_ns[1] = 0
        X.trial_tests[0] = 0
        X.trial_tests[1] = 0
        X.trial_tasks = 0
    if X.trial_on > 0:
        return X.trial_share != 0
    return X.trial_verdict != 0


cdef inline int trial_judge(double ns0, double tests0, double ns1, double tests1, int64_t retries) noexcept nogil:
    # a trial's outcome from each way's pass wall time and tests (0: not shared, 1: shared): 1 share,
    # 0 not, -1 run the trial again -- its passes were too far apart per test to compare (e.g. one
    # way's the pass after 50,000 submits, the other way's a later pass on 160,000 nodes: ten times
    # apart, whatever the helper does), unless it ran again TRIAL_RETRIES times in a row already
    if (ns1 * tests0 > TRIAL_APART * ns0 * tests1 or ns0 * tests1 > TRIAL_APART * ns1 * tests0) \
            and retries < TRIAL_RETRIES:
        return -1
    return 1 if ns1 * tests0 * 100 < ns0 * tests1 * (100 - TRIAL_MARGIN_PCT) else 0


cdef inline int64_t trial_keep_ns(double trial_ns, bint share, double tasks, double tests_shared,
                                  int64_t idle_run) noexcept nogil:
    # how long a trial's verdict holds (pass wall time, ns): TRIAL_KEEP times the trial's length; but
    # a verdict against sharing from passes whose helper had less than a search a test to do (the
    # machine filling, every job starting at once: nothing to test ahead) says little of the deep
    # queue's passes that may follow, and holds only TRIAL_KEEP_IDLE times -- doubled for each such
    # verdict before it in a row (idle_run), up to TRIAL_KEEP: a shallow queue all along (a cycle
    # tests a few jobs, few of them try later starts) would otherwise spend half its passes in trials
    # and a quarter shared, at a loss
    cdef double times = TRIAL_KEEP_IDLE
    if not share and tasks < tests_shared:
        while idle_run > 0 and times < TRIAL_KEEP:
            times *= 2
            idle_run -= 1
        if times > TRIAL_KEEP:
            times = TRIAL_KEEP
        return <int64_t>(trial_ns * times)
    return <int64_t>(trial_ns * TRIAL_KEEP)


cdef inline void split_trial_note(State* S, bint shared, int64_t wall_ticks, int64_t tests) noexcept nogil:
    # a pass on nodes is over: its wall time counts towards the trial, or uses up the verdict
    cdef NodeSplit* X = &S.split
    cdef int64_t ns = <int64_t>(wall_ticks * (S.clock.ns_per_tick if PBF_HAVE_TSC else 1.0))
    cdef bint share
    cdef int verdict
    if S.testing.split_wait or S.testing.split_trial_ns <= 0:
        return
    if X.trial_on == 0:
        X.trial_keep_ns -= ns
        return
    if shared == (X.trial_share != 0):      # (a pass that could not share while backing off: not counted)
        X.trial_ns[X.trial_share] += ns
        X.trial_tests[X.trial_share] += tests + 1
        if shared:
            X.trial_tasks += X.tasks - X.tasks_armed
    X.trial_share = 1 - X.trial_share
    if X.trial_ns[0] < S.testing.split_trial_ns or X.trial_ns[1] < S.testing.split_trial_ns:
        return
    verdict = trial_judge(X.trial_ns[0], X.trial_tests[0], X.trial_ns[1], X.trial_tests[1], X.trial_retries)
    if verdict < 0:
        X.trial_retries += 1
        X.trial_ns[0] = 0
        X.trial_ns[1] = 0
        X.trial_tests[0] = 0
        X.trial_tests[1] = 0
        X.trial_tasks = 0
        return
    X.trial_on = 0
    X.trial_retries = 0
    share = verdict > 0
    X.trial_verdict = share
    X.trial_keep_ns = trial_keep_ns(X.trial_ns[0] + X.trial_ns[1], share, X.trial_tasks, X.trial_tests[1],
                                    X.trial_idle_run)
    if not share and X.trial_tasks < X.trial_tests[1]:
        X.trial_idle_run += 1
    else:
        X.trial_idle_run = 0
    X.trials += 1
    X.trials_shared += share
    if not share:
        split_recall(S)                # (the helper returns to the pool until the next trial)


cdef inline int64_t pool_round_trip(State* S) noexcept nogil:
    # post an empty task to the pool and wait for every thread: the ticks a parallel pass's wake-up costs
    cdef int64_t t0
    split_recall(S)
    t0 = now_ticks()
    pthread_mutex_lock(&S.pool.mu)
    S.pool.idle = True
    S.pool.gen += 1
    S.pool.finished = 0
    pthread_cond_broadcast(&S.pool.work)
    while S.pool.finished < S.pool.threads:
        pthread_cond_wait(&S.pool.done, &S.pool.mu)
    S.pool.idle = False
    pthread_mutex_unlock(&S.pool.mu)
    return now_ticks() - t0


cdef inline int64_t ring_entries(State* S) noexcept nogil:
    # RING_PER_WORKER for each worker that has a CPU of its own, at least one per worker: workers
    # beyond the CPUs speculate only when a running one waits, and further ahead they would only
    # speculate on older profiles
    cdef int64_t n = S.cfg.workers, running = n
    if S.cost.cores > 0 and S.cost.cores < running:
        running = S.cost.cores
    if n < 2:
        return 4
    return max(n, RING_PER_WORKER * running)


cdef inline int full_pass_parallel(State* S, int64_t now) noexcept nogil:
    # the pass on every worker of the pool; RC_* on failure
    cdef int64_t t0 = now_ticks(), queue = S.queue.n, cap, i, n = S.cfg.workers, slots
    cdef PassCtx* c = &S.ctx
    cdef int rc
    cdef int ex
    S.resume_st.valid = False
    if begin_full_pass(S, now, True) != RC_OK or build_plan(S, now) != RC_OK:
        return RC_NO_MEMORY
    if S.plan.prepare_copies(S) != RC_OK:
        return RC_NO_MEMORY
    S.par.limit = S.queue.n if S.cfg.max_job_test < 0 else min(S.queue.n, S.cfg.max_job_test)
    # every job places at most once; a start needs a free unit
    cap = S.par.limit if S.cfg.resv_max < 0 else min(S.par.limit, S.nodes.nfree + S.cfg.resv_max)
    if log_reserve(&S.log, cap + 1, S.W) != RC_OK or ring_reserve(&S.ring, ring_entries(S), S.W,
                                                                S.plan.ncpu_words) != RC_OK:
        return RC_NO_MEMORY
    S.par.next = 0
    S.par.commit = 0
    S.par.committer = 0
    S.par.stop = INF
    S.par.error = 0
    S.par.copied = 0
    S.par.epoch = 0
    S.par.sleepers = 0
    S.par.hints.n = 0
    S.par.hints.next = 0
    S.par.hints_lock = 0
    S.par.low = 0
    if S.cfg.commit_eager:
        if grow(<void**>&S.par.committed, &S.par.committed_cap, S.par.limit + 1, sizeof(char)) != RC_OK:
            return RC_NO_MEMORY
        memset(S.par.committed, 0, S.par.limit + 1)
    S.log.n = 0
    for i in range(n):
        S.pool.tests[i] = 0
    # wake the pool, work as worker 0, wait for the others
    split_recall(S)
    pthread_mutex_lock(&S.pool.mu)
    S.pool.gen += 1
    S.pool.finished = 0
    pthread_cond_broadcast(&S.pool.work)
    pthread_mutex_unlock(&S.pool.mu)
    pass_worker(S, 0)
    pthread_mutex_lock(&S.pool.mu)
    while S.pool.finished < S.pool.threads:
        pthread_cond_wait(&S.pool.done, &S.pool.mu)
    pthread_mutex_unlock(&S.pool.mu)
    if S.par.error:
        return <int>S.par.error
    ex = c.ex
    if S.par.stop == INF and S.par.limit < S.queue.n:
        ex = EX_MAX_JOB_TEST      # the sequential pass stops at the first job past max_job_test
    c.ex = ex
    # the pass's profile (node plan), worker 0's, brought fully up to date, is its final one
    rc = catch_up(S, &S.prof, &S.nm, &S.pool.seen[0])
    if rc != RC_OK:
        return rc
    c.parallel = False            # the placements from here on concern no other copy
    if c.phase2 >= 0 and c.ex == EX_END:
        c.built = True            # the sequential pass builds its profile for this phase
        if sjbf_phase(S, &S.prof, &S.nm) != RC_OK:
            return RC_NO_MEMORY
    slots = pass_slots(S)
    end_full_pass(S, &S.prof)
    if S.clock.kind != CK_MODEL:
        # the real threads' share of the speculative tests
        S.last.tests_max = S.pool.tests[0]
        S.last.tests_min = S.pool.tests[0]
        for i in range(n):
            S.pool.tests_total[i] += S.pool.tests[i]
            if S.pool.tests[i] > S.last.tests_max:
                S.last.tests_max = S.pool.tests[i]
            if S.pool.tests[i] < S.last.tests_min:
                S.last.tests_min = S.pool.tests[i]
    return record_pass(S, now, PK_FULL, queue, c.depth, c.started, c.resv, c.ex, now_ticks() - t0, slots)


# ---- the planners' parallel operations (planner.pxd puts them in their tables)

cdef inline int units_prepare_copies(State* S) noexcept nogil:
    # (each worker copies the pass's profile itself, before worker 0 changes it: await_copies)
    return RC_OK


cdef inline int nodes_prepare_copies(State* S) noexcept nogil:
    # every worker's copy of the node plan, made before any worker commits to the state's own
    cdef int64_t i, n = S.cfg.workers
    if not S.nm.ev_ok and nm_make_events(&S.nm) != RC_OK:
        return RC_NO_MEMORY
    for i in range(1, n):
        if nm_copy_plan(&S.pool.nm[i], &S.nm) != RC_OK:
            return RC_NO_MEMORY
    for i in range(n if S.pool.snap != NULL else 0):
        if nm_copy_plan(&S.pool.nmsnap[i], &S.nm) != RC_OK:
            return RC_NO_MEMORY
    return RC_OK


cdef inline int units_worker_copy(State* S, int64_t wid, Prof* P, NodeModel* M, Prof** spec_prof,
                                  NodeModel** spec_nm) noexcept nogil:
    # Worker 0 decides on the pass's own profile (no copy: it speculates on it at once, and changes
    # it only once the others have copied it); the others on private copies.
    cdef int rc = RC_OK
    if wid > 0 and (prof_copy(P, &S.prof) != RC_OK
                    or prof_ensure_scratch(P, S.nodes.nrun + 2 * S.queue.n + 8) != RC_OK):
        rc = RC_NO_MEMORY
    elif S.pool.snap != NULL:
        # tests: speculate on the profile as at the pass start, so that nearly every commit must
        # reconcile, deterministically (the speculations depend on nothing but the pass start)
        spec_prof[0] = &S.pool.snap[wid]
        if prof_copy(spec_prof[0], &S.prof) != RC_OK:
            rc = RC_NO_MEMORY
    if wid > 0:
        pbf_fetch_add(&S.par.copied, 1)
        note_progress(S)
    return rc


cdef inline int nodes_worker_copy(State* S, int64_t wid, Prof* P, NodeModel* M, Prof** spec_prof,
                                  NodeModel** spec_nm) noexcept nogil:
    # (the plan copies were made before the pass was posted)
    if S.pool.snap != NULL:
        spec_nm[0] = &S.pool.nmsnap[wid]
    return RC_OK


cdef inline int units_apply(State* S, Prof* P, NodeModel* M, int64_t e) noexcept nogil:
    return prof_apply(P, S.log.k[e], S.log.t[e], S.log.d[e], S.log.bits + e * S.W, S.log.resv[e])


cdef inline int nodes_apply(State* S, Prof* P, NodeModel* M, int64_t e) noexcept nogil:
    return nm_apply(M, S.log.job[e], S.log.t[e], prof_round_up(&S.prof, S.log.t[e] + S.log.d[e]),
                    S.log.bits + e * S.W, S.W)


cdef inline int64_t units_speculate(State* S, Prof* P, NodeModel* M, int64_t j, int64_t k, int64_t d, bint now_only,
                                    int64_t* seen, uint64_t* cand, uint64_t* chosen, int8_t* proposed,
                                    int64_t* ncpu) noexcept nogil:
    cdef int64_t t = -1, now = S.ctx.now
    cdef int32_t si = 0
    if now_only:
        if k <= prof_cnt(P, 0) and not prof_known_misfit(P, k, d):
            t = prof_find_start(P, k, d, now, True, &si)
            if t < 0:
                prof_note_misfit(P, k, d)
        return t
    t = speculative_search(S, P, k, d, now, &si)
    if t >= 0 and cand != NULL:
        w_copy(cand, P.cand, S.W)     # what the commit's AND test starts from
        if S.cfg.workers <= S.cost.cores:
            # the unit choice too, for the commit to take when no newer placement touched the
            # candidates: it then leaves the committer (the pass's serial part). (With more
            # workers than CPUs the workers' time is the committer's: no gain.)
            prof_choose(P, k, t, d, si, now)
            w_copy(chosen, P.chosen, S.W)
            proposed[0] = 1
    return t


cdef inline int64_t nodes_speculate(State* S, Prof* P, NodeModel* M, int64_t j, int64_t k, int64_t d, bint now_only,
                                    int64_t* seen, uint64_t* cand, uint64_t* chosen, int8_t* proposed,
                                    int64_t* ncpu) noexcept nogil:
    cdef int64_t now = S.ctx.now
    cdef int64_t t = nm_find_start(M, j, k, d, now, now, now_only, S.cfg.bf_window, S.cfg.bf_resolution)
    if S.pool.snap == NULL and ncpu != NULL and nm_monotone(M, j):
        # the commits made meanwhile (most often the job just before this one): the answer is
        # brought up to date here, on this worker, so that its commit rarely searches again on
        # the committer's
        t = speculation_catch_up(S, P, M, j, k, d, t, now_only, seen)
    if M.failed:
        M.failed = False
        abandon_pass(S, RC_NO_MEMORY)
    elif t >= 0 and ncpu != NULL:
        memcpy(ncpu, M.cpu, M.nn * sizeof(int64_t))
    return t


cdef inline double units_copy_bytes(State* S) noexcept nogil:
    # about what each worker copies at a parallel pass's start: the profile's slots' bitmaps and
    # links (as many slots as the last pass made, at least one per distinct end of a running job)
    cdef int64_t slots = S.prof.nslots if S.prof.nslots > S.nodes.nrun + 1 else S.nodes.nrun + 1
    return slots * (S.W * 8.0 + 40.0)


cdef inline double nodes_copy_bytes(State* S) noexcept nogil:
    # ... the node plan: a line of free resources per node
    return S.nm.nn * 256.0
