# Cluster-wide licenses (header only): Slurm's `Licenses=` (slurm.conf) and a job's `--licenses`
# (sacct `Licenses`, `ReqTRES license/NAME=N`). Each kind is a count of the cluster; a running job
# holds its licenses from its start to its end. As in Slurm 22.05 without `bf_licenses` (its default),
# a job whose licenses are not all free now is passed over: not started, not reserved, not counted
# toward bf_max_job_test (backfill.c `_attempt_backfill`: license_job_test comes before the will-run
# test, and bf_max_job_test counts bf_last_depth_try, raised only there; the main scheduler skips it,
# job_scheduler.c `_schedule`, reason Licenses), and licenses are not planned in the future.

from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset

from pbf._codes cimport RC_OK, RC_NO_MEMORY


ctypedef struct Licenses:
    bint on                    # the cluster has licenses
    int64_t n                  # license kinds
    int64_t* total             # each kind's count
    int64_t* free              # ... not held by a running job
    int64_t* req               # what each job asks (row j: n counts; jobs not set: 0)
    int64_t cap                # rows of req


cdef inline int lic_set(Licenses* L, int64_t n, const int64_t* total) noexcept nogil:
    cdef int64_t i
    L.total = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    L.free = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    if L.total == NULL or L.free == NULL:
        return RC_NO_MEMORY
    for i in range(n):
        L.total[i] = total[i]
        L.free[i] = total[i]
    L.n = n
    L.on = n > 0
    return RC_OK


cdef inline int lic_reserve_jobs(Licenses* L, int64_t cap) noexcept nogil:
    # room for the requests of jobs 0 .. cap - 1 (new rows: nothing asked)
    cdef int64_t* p
    if not L.on or cap <= L.cap:
        return RC_OK
    p = <int64_t*>realloc(L.req, cap * L.n * sizeof(int64_t))
    if p == NULL:
        return RC_NO_MEMORY
    memset(p + L.cap * L.n, 0, (cap - L.cap) * L.n * sizeof(int64_t))
    L.req = p
    L.cap = cap
    return RC_OK


cdef inline bint lic_free_now(const Licenses* L, int64_t j) noexcept nogil:
    # every license job j asks is free now
    cdef int64_t i
    cdef const int64_t* r = L.req + j * L.n
    for i in range(L.n):
        if r[i] > L.free[i]:
            return False
    return True


cdef inline bint lic_never(const Licenses* L, int64_t j) noexcept nogil:
    # job j asks more of a kind than the cluster has (Slurm refuses it at submission)
    cdef int64_t i
    cdef const int64_t* r = L.req + j * L.n
    for i in range(L.n):
        if r[i] > L.total[i]:
            return True
    return False


cdef inline void lic_hold(Licenses* L, int64_t j, int64_t sign) noexcept nogil:
    # job j takes (sign -1, at its start) or gives back (sign 1, at its end) its licenses
    cdef int64_t i
    cdef const int64_t* r = L.req + j * L.n
    for i in range(L.n):
        L.free[i] += sign * r[i]


cdef inline void lic_free(Licenses* L) noexcept nogil:
    free(L.total)
    free(L.free)
    free(L.req)
    memset(L, 0, sizeof(Licenses))
