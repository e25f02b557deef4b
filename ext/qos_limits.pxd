# QOS and association limits on running jobs (header only).
# QOS (pbf/qos.py): a QOS's MaxJobsPU and MaxTRESPU cpu (per user) and GrpJobs and GrpTRES cpu (the QOS as
# a whole), from a `sacctmgr show qos` dump. Associations (pbf/associations.py): each association row's
# MaxJobs (its own running jobs; a user association's, inherited from its accounts by the reader),
# GrpJobs and GrpTRES cpu (the running jobs and cores of the association and every association below
# it), walked up the tree from the job's user association to the root, from a `sacctmgr dump`. A
# running job counts toward its QOS's and its associations' limits from its start to its end. As Slurm
# 22.05 (acct_policy.c, checked by the main scheduler and by the backfill before the will-run test), a
# job that would take its user, its QOS or one of its associations over a limit is passed over: not
# started, not reserved, not counted toward bf_max_job_test, not blocking the jobs after it; an
# association's GrpJobs, GrpTRES cpu and MaxJobs apply only where the job's QOS does not set GrpJobs,
# GrpTRES cpu and MaxJobsPU (acct_policy_job_runnable_pre_select: the QOS's limit comes first). A job
# that alone exceeds a cpu limit, or that the reader refused (never_of: a time limit over MaxWall, cores
# over MaxTRESPerJob), can never run: rejected at submission. Submission limits (ql_set_submit): a QOS's
# MaxSubmitPU (one user's jobs in the QOS, pending or running), an association's MaxSubmitJobs (its own,
# where the QOS sets no MaxSubmitPU) and GrpSubmitJobs (its and those below it): a job submitted while
# it would go over one is refused, as sbatch is (acct_policy_validate); an accepted job counts from its
# submission to its end (ql_submitted).

from libc.stdint cimport int64_t, int32_t, uint8_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset, memcpy

from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef enum:
    QL_JOBS_PU = 0             # a QOS's limits, in this order (0: none)
    QL_CPUS_PU = 1
    QL_GRP_JOBS = 2
    QL_GRP_CPUS = 3
    QL_N = 4

cdef enum:
    # the limit that last held or refused a job (why_of), by Slurm's reason (job_state_reason.c; the names:
    # pbf/associations.py LIMIT_REASONS)
    LR_NONE = 0
    LR_QOS_GRP_JOBS = 1        # QOSGrpJobsLimit
    LR_QOS_MAX_JOBS_PU = 2     # QOSMaxJobsPerUserLimit
    LR_ASSOC_GRP_JOBS = 3      # AssocGrpJobsLimit
    LR_ASSOC_MAX_JOBS = 4      # AssocMaxJobsLimit
    LR_QOS_GRP_CPUS = 5        # QOSGrpCpuLimit
    LR_QOS_MAX_CPUS_PU = 6     # QOSMaxCpuPerUserLimit
    LR_ASSOC_GRP_CPUS = 7      # AssocGrpCpuLimit
    LR_QOS_MAX_SUBMIT_PU = 8   # QOSMaxSubmitJobPerUserLimit
    LR_ASSOC_MAX_SUBMIT = 9    # AssocMaxSubmitJobLimit
    LR_ASSOC_GRP_SUBMIT = 10   # AssocGrpSubmitJobsLimit

cdef enum:
    AL_MAX_JOBS = 0            # an association's limits, in this order (0: none)
    AL_GRP_JOBS = 1
    AL_GRP_CPUS = 2
    AL_N = 3


ctypedef struct QosLimits:
    bint on                    # limits are set
    int64_t nq                 # QOS with limits
    int64_t nu                 # users counted (dense indices 0 .. nu - 1)
    int64_t* lim               # nq * QL_N
    int64_t* use_u             # nq * nu * 2: (running jobs, their cores) per QOS and user
    int64_t* use_q             # nq * 2: per QOS
    int32_t* qos_of            # each job's QOS (-1: none with limits)
    int64_t cap                # rows of qos_of, assoc_of, never_of
    int64_t held               # job tests passed over for a QOS limit
    int64_t na                 # associations (rows of alim, ause, aparent)
    int64_t* alim              # na * AL_N
    int64_t* ause              # na * 2: (running jobs, their cores) of the association and those below it
    int32_t* aparent           # each association's parent row (-1: the root)
    int32_t* assoc_of          # each job's user association (-1: none)
    uint8_t* never_of          # each job refused at submission by the reader (1)
    uint8_t* why_of            # the limit that last held or refused each job (LR_*)
    int64_t held_assoc         # job tests passed over for an association limit
    bint sub_on                # submission limits are set
    int64_t* sub_lim_q         # nq: each QOS's MaxSubmitPU
    int64_t* sub_u             # nq * nu: each user's jobs in each QOS, pending or running
    int64_t* asub_lim          # na * 2: each association's (MaxSubmitJobs, GrpSubmitJobs)
    int64_t* asub              # na: jobs pending or running in the association and those below it
    int64_t refused_sub[3]     # jobs refused at submission: QOS MaxSubmitPU, MaxSubmitJobs, GrpSubmitJobs


cdef inline int ql_set(QosLimits* Q, int64_t nq, int64_t nu, const int64_t* lim) noexcept nogil:
    Q.lim = <int64_t*>malloc((nq * QL_N + 1) * sizeof(int64_t))
    Q.use_u = <int64_t*>calloc(nq * nu * 2 + 1, sizeof(int64_t))
    Q.use_q = <int64_t*>calloc(nq * 2 + 1, sizeof(int64_t))
    if Q.lim == NULL or Q.use_u == NULL or Q.use_q == NULL:
        return RC_NO_MEMORY
    memcpy(Q.lim, lim, nq * QL_N * sizeof(int64_t))
    Q.nq = nq
    Q.nu = nu
    Q.on = Q.on or nq > 0
    return RC_OK


cdef inline int ql_set_assoc(QosLimits* Q, int64_t na, const int64_t* lim, const int32_t* parent) noexcept nogil:
    # the association rows (parents before children is not needed: a parent row index, -1 the root)
    Q.alim = <int64_t*>malloc((na * AL_N + 1) * sizeof(int64_t))
    Q.ause = <int64_t*>calloc(na * 2 + 1, sizeof(int64_t))
    Q.aparent = <int32_t*>malloc((na + 1) * sizeof(int32_t))
    if Q.alim == NULL or Q.ause == NULL or Q.aparent == NULL:
        return RC_NO_MEMORY
    memcpy(Q.alim, lim, na * AL_N * sizeof(int64_t))
    memcpy(Q.aparent, parent, na * sizeof(int32_t))
    Q.na = na
    Q.on = Q.on or na > 0
    return RC_OK


cdef inline int ql_set_submit(QosLimits* Q, const int64_t* qos_lim, const int64_t* assoc_lim) noexcept nogil:
    # the submission limits of the QOS rows (nq) and association rows (na * 2) already set
    Q.sub_lim_q = <int64_t*>malloc((Q.nq + 1) * sizeof(int64_t))
    Q.sub_u = <int64_t*>calloc(Q.nq * Q.nu + 1, sizeof(int64_t))
    Q.asub_lim = <int64_t*>malloc((Q.na * 2 + 1) * sizeof(int64_t))
    Q.asub = <int64_t*>calloc(Q.na + 1, sizeof(int64_t))
    if Q.sub_lim_q == NULL or Q.sub_u == NULL or Q.asub_lim == NULL or Q.asub == NULL:
        return RC_NO_MEMORY
    memcpy(Q.sub_lim_q, qos_lim, Q.nq * sizeof(int64_t))
    memcpy(Q.asub_lim, assoc_lim, Q.na * 2 * sizeof(int64_t))
    Q.sub_on = True
    return RC_OK


cdef inline bint ql_submit_refused(QosLimits* Q, int64_t j, int64_t user) noexcept nogil:
    # job j, submitted now, would take its user's jobs in its QOS, or its associations', over a
    # submission limit
    cdef int64_t q = Q.qos_of[j]
    cdef int64_t a = Q.assoc_of[j]
    cdef int64_t per_user = 0
    cdef bint own = True
    if not Q.sub_on:
        return False
    if q >= 0 and 0 <= user < Q.nu:
        per_user = Q.sub_lim_q[q]
        if per_user > 0 and Q.sub_u[q * Q.nu + user] + 1 > per_user:
            Q.refused_sub[0] += 1
            Q.why_of[j] = LR_QOS_MAX_SUBMIT_PU
            return True
    while a >= 0:
        if own and per_user == 0 and Q.asub_lim[a * 2] > 0 and Q.asub[a] + 1 > Q.asub_lim[a * 2]:
            Q.refused_sub[1] += 1
            Q.why_of[j] = LR_ASSOC_MAX_SUBMIT
            return True
        if Q.asub_lim[a * 2 + 1] > 0 and Q.asub[a] + 1 > Q.asub_lim[a * 2 + 1]:
            Q.refused_sub[2] += 1
            Q.why_of[j] = LR_ASSOC_GRP_SUBMIT
            return True
        own = False
        a = Q.aparent[a]
    return False


cdef inline void ql_submitted(QosLimits* Q, int64_t j, int64_t user, int64_t sign) noexcept nogil:
    # job j was accepted (sign 1) or has left the system (-1): its user's jobs in its QOS and its
    # associations' jobs, pending or running
    cdef int64_t q = Q.qos_of[j]
    cdef int64_t a = Q.assoc_of[j]
    if not Q.sub_on:
        return
    if q >= 0 and 0 <= user < Q.nu:
        Q.sub_u[q * Q.nu + user] += sign
    while a >= 0:
        Q.asub[a] += sign
        a = Q.aparent[a]


cdef inline int ql_reserve_jobs(QosLimits* Q, int64_t cap) noexcept nogil:
    # room for the QOS, association and refusal of jobs 0 .. cap - 1 (new rows: none)
    cdef int32_t* p
    cdef int32_t* a
    cdef uint8_t* nv
    cdef int64_t i
    if not Q.on or cap <= Q.cap:
        return RC_OK
    p = <int32_t*>realloc(Q.qos_of, cap * sizeof(int32_t))
    if p == NULL:
        return RC_NO_MEMORY
    Q.qos_of = p
    a = <int32_t*>realloc(Q.assoc_of, cap * sizeof(int32_t))
    if a == NULL:
        return RC_NO_MEMORY
    Q.assoc_of = a
    nv = <uint8_t*>realloc(Q.never_of, cap * sizeof(uint8_t))
    if nv == NULL:
        return RC_NO_MEMORY
    Q.never_of = nv
    nv = <uint8_t*>realloc(Q.why_of, cap * sizeof(uint8_t))
    if nv == NULL:
        return RC_NO_MEMORY
    Q.why_of = nv
    for i in range(Q.cap, cap):
        p[i] = -1
        a[i] = -1
        Q.never_of[i] = 0
        Q.why_of[i] = LR_NONE
    Q.cap = cap
    return RC_OK


cdef inline int _ql_assoc_jobs(QosLimits* Q, int64_t j, const int64_t* L) noexcept nogil:
    # the association job limit (GrpJobs up the path, MaxJobs of the job's own) starting job j now would
    # go over, where its QOS (limits L, or NULL) sets none of that kind (LR_NONE: none)
    cdef int64_t a = Q.assoc_of[j]
    cdef const int64_t* A
    cdef bint own = True
    cdef bint grp_jobs = L == NULL or L[QL_GRP_JOBS] == 0
    cdef bint max_jobs = L == NULL or L[QL_JOBS_PU] == 0
    while a >= 0:
        A = Q.alim + a * AL_N
        if grp_jobs and A[AL_GRP_JOBS] > 0 and Q.ause[a * 2] + 1 > A[AL_GRP_JOBS]:
            return LR_ASSOC_GRP_JOBS
        if own and max_jobs and A[AL_MAX_JOBS] > 0 and Q.ause[a * 2] + 1 > A[AL_MAX_JOBS]:
            return LR_ASSOC_MAX_JOBS
        own = False
        a = Q.aparent[a]
    return LR_NONE


cdef inline int _ql_assoc_cpus(QosLimits* Q, int64_t j, int64_t units, const int64_t* L) noexcept nogil:
    # the association GrpTRES cpu on the path starting job j now would go over, where its QOS sets none
    cdef int64_t a = Q.assoc_of[j]
    cdef const int64_t* A
    if L != NULL and L[QL_GRP_CPUS] > 0:
        return LR_NONE
    while a >= 0:
        A = Q.alim + a * AL_N
        if A[AL_GRP_CPUS] > 0 and Q.ause[a * 2 + 1] + units > A[AL_GRP_CPUS]:
            return LR_ASSOC_GRP_CPUS
        a = Q.aparent[a]
    return LR_NONE


cdef inline bint ql_holds(QosLimits* Q, int64_t j, int64_t user, int64_t units) noexcept nogil:
    # starting job j now would take its user, its QOS or one of its associations over a limit; the
    # limit is recorded in why_of, found in Slurm's order (acct_policy.c: the job counts before the
    # cpus -- _pre_select, then _post_select --, the QOS's before the associations')
    cdef int64_t q = Q.qos_of[j]
    cdef const int64_t* L = NULL
    cdef const int64_t* u = NULL
    cdef int reason = LR_NONE
    if q >= 0:
        L = Q.lim + q * QL_N
        if 0 <= user < Q.nu:
            u = Q.use_u + (q * Q.nu + user) * 2
        if L[QL_GRP_JOBS] > 0 and Q.use_q[q * 2] + 1 > L[QL_GRP_JOBS]:
            reason = LR_QOS_GRP_JOBS
        elif u != NULL and L[QL_JOBS_PU] > 0 and u[0] + 1 > L[QL_JOBS_PU]:
            reason = LR_QOS_MAX_JOBS_PU
    if reason == LR_NONE and Q.na and Q.assoc_of[j] >= 0:
        reason = _ql_assoc_jobs(Q, j, L)
    if reason == LR_NONE and q >= 0:
        if L[QL_GRP_CPUS] > 0 and Q.use_q[q * 2 + 1] + units > L[QL_GRP_CPUS]:
            reason = LR_QOS_GRP_CPUS
        elif u != NULL and L[QL_CPUS_PU] > 0 and u[1] + units > L[QL_CPUS_PU]:
            reason = LR_QOS_MAX_CPUS_PU
    if reason == LR_NONE and Q.na and Q.assoc_of[j] >= 0:
        reason = _ql_assoc_cpus(Q, j, units, L)
    if reason == LR_NONE:
        return False
    if reason == LR_ASSOC_GRP_JOBS or reason == LR_ASSOC_MAX_JOBS or reason == LR_ASSOC_GRP_CPUS:
        Q.held_assoc += 1
    else:
        Q.held += 1
    Q.why_of[j] = <uint8_t>reason
    return True


cdef inline bint ql_never(const QosLimits* Q, int64_t j, int64_t units) noexcept nogil:
    # job j alone asks more cores than its QOS allows a user, or the QOS or one of its associations as
    # a whole, or the reader refused it
    cdef int64_t q = Q.qos_of[j]
    cdef int64_t a = Q.assoc_of[j]
    cdef const int64_t* L = NULL
    if Q.never_of[j]:
        return True
    if q >= 0:
        L = Q.lim + q * QL_N
        if (L[QL_CPUS_PU] > 0 and units > L[QL_CPUS_PU]) or (L[QL_GRP_CPUS] > 0 and units > L[QL_GRP_CPUS]):
            return True
    if L != NULL and L[QL_GRP_CPUS] > 0:
        return False
    while a >= 0:
        if Q.alim[a * AL_N + AL_GRP_CPUS] > 0 and units > Q.alim[a * AL_N + AL_GRP_CPUS]:
            return True
        a = Q.aparent[a]
    return False


cdef inline void ql_count(QosLimits* Q, int64_t j, int64_t user, int64_t units, int64_t sign) noexcept nogil:
    # job j starts (sign 1) or ends (-1): its user's, its QOS's and its associations' running jobs and cores
    cdef int64_t q = Q.qos_of[j]
    cdef int64_t a = Q.assoc_of[j]
    cdef int64_t* u
    if q >= 0:
        if 0 <= user < Q.nu:
            u = Q.use_u + (q * Q.nu + user) * 2
            u[0] += sign
            u[1] += sign * units
        Q.use_q[q * 2] += sign
        Q.use_q[q * 2 + 1] += sign * units
    while a >= 0:
        Q.ause[a * 2] += sign
        Q.ause[a * 2 + 1] += sign * units
        a = Q.aparent[a]


cdef inline void ql_free(QosLimits* Q) noexcept nogil:
    free(Q.lim)
    free(Q.use_u)
    free(Q.use_q)
    free(Q.qos_of)
    free(Q.alim)
    free(Q.ause)
    free(Q.aparent)
    free(Q.assoc_of)
    free(Q.never_of)
    free(Q.why_of)
    free(Q.sub_lim_q)
    free(Q.sub_u)
    free(Q.asub_lim)
    free(Q.asub)
    memset(Q, 0, sizeof(QosLimits))
