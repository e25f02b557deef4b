# QOS limits on running jobs (header only): a QOS's MaxJobsPU and MaxTRESPU cpu (per user) and GrpJobs
# and GrpTRES cpu (the QOS as a whole), from a `sacctmgr show qos` dump (pbf/qos.py). A running job
# counts toward its QOS's limits from its start to its end. As Slurm 22.05 (acct_policy.c, checked by
# the main scheduler and by the backfill before the will-run test), a job that would take its user or
# its QOS over a limit is passed over: not started, not reserved, not counted toward bf_max_job_test,
# not blocking the jobs after it. A job that alone exceeds a cpu limit can never run: rejected.

from libc.stdint cimport int64_t, int32_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset, memcpy

from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef enum:
    QL_JOBS_PU = 0             # a QOS's limits, in this order (0: none)
    QL_CPUS_PU = 1
    QL_GRP_JOBS = 2
    QL_GRP_CPUS = 3
    QL_N = 4


ctypedef struct QosLimits:
    bint on                    # limits are set
    int64_t nq                 # QOS with limits
    int64_t nu                 # users counted (dense indices 0 .. nu - 1)
    int64_t* lim               # nq * QL_N
    int64_t* use_u             # nq * nu * 2: (running jobs, their cores) per QOS and user
    int64_t* use_q             # nq * 2: per QOS
    int32_t* qos_of            # each job's QOS (-1: none with limits)
    int64_t cap                # rows of qos_of
    int64_t held               # job tests passed over for a limit


cdef inline int ql_set(QosLimits* Q, int64_t nq, int64_t nu, const int64_t* lim) noexcept nogil:
    Q.lim = <int64_t*>malloc((nq * QL_N + 1) * sizeof(int64_t))
    Q.use_u = <int64_t*>calloc(nq * nu * 2 + 1, sizeof(int64_t))
    Q.use_q = <int64_t*>calloc(nq * 2 + 1, sizeof(int64_t))
    if Q.lim == NULL or Q.use_u == NULL or Q.use_q == NULL:
        return RC_NO_MEMORY
    memcpy(Q.lim, lim, nq * QL_N * sizeof(int64_t))
    Q.nq = nq
    Q.nu = nu
    Q.on = nq > 0
    return RC_OK


cdef inline int ql_reserve_jobs(QosLimits* Q, int64_t cap) noexcept nogil:
    # room for the QOS of jobs 0 .. cap - 1 (new rows: none)
    cdef int32_t* p
    cdef int64_t i
    if not Q.on or cap <= Q.cap:
        return RC_OK
    p = <int32_t*>realloc(Q.qos_of, cap * sizeof(int32_t))
    if p == NULL:
        return RC_NO_MEMORY
    for i in range(Q.cap, cap):
        p[i] = -1
    Q.qos_of = p
    Q.cap = cap
    return RC_OK


cdef inline bint ql_holds(QosLimits* Q, int64_t j, int64_t user, int64_t units) noexcept nogil:
    # starting job j now would take its user or its QOS over a limit
    cdef int64_t q = Q.qos_of[j]
    cdef const int64_t* L
    cdef const int64_t* u
    if q < 0 or user < 0 or user >= Q.nu:
        return False
    L = Q.lim + q * QL_N
    u = Q.use_u + (q * Q.nu + user) * 2
    if ((L[QL_JOBS_PU] > 0 and u[0] + 1 > L[QL_JOBS_PU]) or (L[QL_CPUS_PU] > 0 and u[1] + units > L[QL_CPUS_PU])
            or (L[QL_GRP_JOBS] > 0 and Q.use_q[q * 2] + 1 > L[QL_GRP_JOBS])
            or (L[QL_GRP_CPUS] > 0 and Q.use_q[q * 2 + 1] + units > L[QL_GRP_CPUS])):
        Q.held += 1
        return True
    return False


cdef inline bint ql_never(const QosLimits* Q, int64_t j, int64_t units) noexcept nogil:
    # job j alone asks more cores than its QOS allows a user, or the QOS as a whole
    cdef int64_t q = Q.qos_of[j]
    cdef const int64_t* L
    if q < 0:
        return False
    L = Q.lim + q * QL_N
    return (L[QL_CPUS_PU] > 0 and units > L[QL_CPUS_PU]) or (L[QL_GRP_CPUS] > 0 and units > L[QL_GRP_CPUS])


cdef inline void ql_count(QosLimits* Q, int64_t j, int64_t user, int64_t units, int64_t sign) noexcept nogil:
    # job j starts (sign 1) or ends (-1): its user's and its QOS's running jobs and cores
    cdef int64_t q = Q.qos_of[j]
    cdef int64_t* u
    if q < 0:
        return
    if 0 <= user < Q.nu:
        u = Q.use_u + (q * Q.nu + user) * 2
        u[0] += sign
        u[1] += sign * units
    Q.use_q[q * 2] += sign
    Q.use_q[q * 2 + 1] += sign * units


cdef inline void ql_free(QosLimits* Q) noexcept nogil:
    free(Q.lim)
    free(Q.use_u)
    free(Q.use_q)
    free(Q.qos_of)
    memset(Q, 0, sizeof(QosLimits))
