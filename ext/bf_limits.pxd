# Slurm's own backfill limits (header only): the SchedulerParameters that cap what one backfill cycle
# tests, starts and reserves, as Slurm 22.05's src/plugins/sched/backfill/backfill.c applies them
# (_attempt_backfill, _job_exceeds_max_bf_param, _check_bf_usage). They apply to Slurm's backfill on
# nodes (slurm_space.pxd: a SlurmSpace holds them); the oracle is pbf/reference/slurm_backfill_ref.py.
#
# Each job a cycle reaches, in queue order, before its test (the order of _attempt_backfill):
#   * bf_max_job_start: once the cycle has started this many jobs it ends (Slurm breaks right after the
#     start that reaches the limit; here the next job ends it, testing nothing more);
#   * bf_max_job_test: reached, the job's test ends the cycle as before (passes.pxd begin_test);
#   * bf_max_job_user_part / bf_max_job_part / bf_max_job_assoc / bf_max_job_user: a job whose user
#     (partition) has had that many jobs pass these checks this cycle is skipped: not tested, not
#     counted toward bf_max_job_test (Slurm counts it in bf_last_depth, not bf_last_depth_try), not
#     charged. A job that passes them is counted for each limit set, whatever its test then finds.
#     pbf gives each user one association, so the user and association counts are one count a user;
#     the partition's and the user-and-partition's are kept per partition (a bit of NodeModel.jpart,
#     up to 64; a job of several partitions counts in each of its records' partitions, as Slurm's queue
#     record of each partition passes these checks on its own).
#   * bf_min_prio_reserve / bf_min_age_reserve: a job of priority below the first (multifactor), or
#     that has waited less than the second (s since its submission, at the time the cycle reaches it),
#     may only start now: it makes no reservation (Slurm's TEST_NOW_ONLY).
#   * bf_job_part_count_reserve: once that many jobs of a partition have reserved in the cycle, the
#     partition's later jobs may only start now (the count is the partition's resv_usage, raised where
#     a reservation is made: bfl_reserved).
# The counts are kept per cycle as Slurm keeps them: a count carries the cycle it was made in and
# starts again from 0 in a new one (_check_bf_usage).

from libc.stdint cimport int64_t
from libc.stdlib cimport free
from libc.string cimport memset

from memory cimport grow
from pbf._codes cimport RC_OK, RC_NO_MEMORY


cdef enum:                     # what bfl_check says of the job the cycle has reached
    BFL_TEST = 0               # test it
    BFL_SKIP = 1               # skip it (a count limit holds it)
    BFL_STOP = 2               # the cycle ends here (bf_max_job_start reached)
    BFL_ERROR = 3              # out of memory


ctypedef struct BfLimits:
    bint on                    # any limit set
    int64_t per_user           # jobs a user may have pass the checks in one cycle (0: no limit): the
                               # least of bf_max_job_user, bf_max_job_assoc set
    int64_t per_user_part      # bf_max_job_user_part: the same in one partition (0: no limit)
    int64_t per_part           # bf_max_job_part (0: no limit), in each partition
    int64_t max_start          # bf_max_job_start (0: no limit)
    double min_prio            # bf_min_prio_reserve (0: none)
    int64_t min_age            # bf_min_age_reserve, s (0: none)
    bint now_only              # the job being tested may only start now
    int64_t part_resv          # bf_job_part_count_reserve (0: no limit): reservations a partition a cycle
    int64_t resv_count[64]     # each partition's reservations ...
    int64_t resv_stamp[64]     # ... and their cycle
    int64_t part               # the partition of the record bfl_check last passed (its reservation counts there)
    bint one_resv              # bf_one_resv_per_job: a job of several partitions reserves in one (its first
                               # record that reserves; the later ones only start now)
    int64_t* count             # a user's count ...
    int64_t* stamp             # ... and the cycle it was made in
    int64_t cap                # room in count and stamp (users)
    int64_t part_count[64]     # each partition's count ...
    int64_t part_stamp[64]     # ... and its cycle
    int64_t* ucount            # a user's count in a partition (64 a user) ...
    int64_t* ustamp            # ... and its cycle
    int64_t ucap               # room in ucount and ustamp (users)
    int64_t skipped            # jobs skipped by a count limit, over the replay
    int64_t held               # jobs tested for a start now only (priority or age), over the replay


cdef inline void bfl_set(BfLimits* L, int64_t per_user, int64_t per_user_part, int64_t per_part, int64_t max_start,
                         double min_prio, int64_t min_age, int64_t part_resv) noexcept nogil:
    cdef int k
    L.per_user = per_user
    L.per_user_part = per_user_part
    L.per_part = per_part
    L.max_start = max_start
    L.min_prio = min_prio
    L.min_age = min_age
    L.part_resv = part_resv
    L.on = (per_user > 0 or per_user_part > 0 or per_part > 0 or max_start > 0 or min_prio > 0 or min_age > 0
            or part_resv > 0)
    for k in range(64):
        L.part_stamp[k] = -1
        L.resv_stamp[k] = -1


cdef inline void bfl_free(BfLimits* L) noexcept nogil:
    free(L.count)
    free(L.stamp)
    free(L.ucount)
    free(L.ustamp)
    L.count = NULL
    L.stamp = NULL
    L.ucount = NULL
    L.ustamp = NULL
    L.cap = 0
    L.ucap = 0


cdef inline int _bfl_grow(int64_t** count, int64_t** stamp, int64_t* cap, int64_t n, int64_t per) noexcept nogil:
    # room for n users' counts (per a user), new ones of no cycle
    cdef int64_t old = cap[0], c, u
    if n <= old:
        return RC_OK
    c = old * per
    if grow(<void**>count, &c, n * per, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    c = old * per
    if grow(<void**>stamp, &c, n * per, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    for u in range(old * per, c):
        stamp[0][u] = -1
    cap[0] = c // per
    return RC_OK


cdef inline int bfl_check(BfLimits* L, int64_t user, int64_t nusers, int64_t part, int64_t submit, double prio,
                          int64_t cycle, int64_t now, int64_t depth, int64_t max_job_test,
                          int64_t started) noexcept nogil:
    # The job of `user` (of `nusers`) in partition `part` (0 .. 63), submitted at `submit`, of priority
    # `prio`, reached by cycle number `cycle` at time `now`, after `depth` tests (of at most
    # max_job_test; < 0: no limit) and `started` starts: BFL_* (module comment). Sets L.now_only for a
    # job to test.
    cdef int64_t k = user * 64 + part
    L.now_only = False
    L.part = part
    if L.part_resv > 0:
        # (before every other check: the job that reaches bf_max_job_test is tested now only, too)
        if L.resv_stamp[part] != cycle:
            L.resv_stamp[part] = cycle
            L.resv_count[part] = 0
        L.now_only = L.resv_count[part] >= L.part_resv
    if L.max_start > 0 and started >= L.max_start:
        return BFL_STOP
    if max_job_test >= 0 and depth >= max_job_test:
        return BFL_TEST                # (the test ends the cycle: bf_max_job_test comes first)
    if L.per_user > 0:
        if _bfl_grow(&L.count, &L.stamp, &L.cap, nusers, 1) != RC_OK:
            return BFL_ERROR
        if L.stamp[user] != cycle:
            L.stamp[user] = cycle
            L.count[user] = 0
        elif L.count[user] >= L.per_user:
            L.skipped += 1
            return BFL_SKIP
    if L.per_user_part > 0:
        if _bfl_grow(&L.ucount, &L.ustamp, &L.ucap, nusers, 64) != RC_OK:
            return BFL_ERROR
        if L.ustamp[k] != cycle:
            L.ustamp[k] = cycle
            L.ucount[k] = 0
        elif L.ucount[k] >= L.per_user_part:
            L.skipped += 1
            return BFL_SKIP
    if L.per_part > 0:
        if L.part_stamp[part] != cycle:
            L.part_stamp[part] = cycle
            L.part_count[part] = 0
        elif L.part_count[part] >= L.per_part:
            L.skipped += 1
            return BFL_SKIP
    if L.per_user > 0:
        L.count[user] += 1
    if L.per_user_part > 0:
        L.ucount[k] += 1
    if L.per_part > 0:
        L.part_count[part] += 1
    if (L.min_prio > 0 and prio < L.min_prio) or (L.min_age > 0 and now - submit < L.min_age):
        L.now_only = True
        L.held += 1
    return BFL_TEST


cdef inline void bfl_reserved(BfLimits* L) noexcept nogil:
    # the record bfl_check last passed has reserved: its partition's count for bf_job_part_count_reserve
    if L.part_resv > 0:
        L.resv_count[L.part] += 1


cdef inline bint bfl_main_passes_over(const BfLimits* L, int64_t submit, double prio, int64_t now) noexcept nogil:
    # Slurm's main scheduler (job_scheduler.c _schedule): a job that cannot start does not block its
    # partition -- the jobs after it are still tried -- while it has waited less than bf_min_age_reserve
    # or its priority is below bf_min_prio_reserve
    return L.on and ((L.min_age > 0 and now - submit < L.min_age) or (L.min_prio > 0 and prio < L.min_prio))
