# Growable C arrays (header only). Every allocation in the core goes through these, without the GIL:
# a failure comes back as RC_NO_MEMORY and is raised once the nogil block is over.

from libc.stdint cimport int64_t
from libc.stdlib cimport realloc
from pbf._codes cimport RC_OK, RC_NO_MEMORY

cdef extern from *:
    """
    #define PBF_INF ((int64_t)0x7FFFFFFFFFFFFFFFLL)
    """
    const int64_t INF "PBF_INF"     # "never" / "no limit" in times and counts


cdef inline int grow(void** p, int64_t* cap, int64_t need, size_t item) noexcept nogil:
    # room for `need` items of `item` bytes, doubling; RC_OK, or RC_NO_MEMORY (p unchanged)
    cdef int64_t newcap
    cdef void* q
    if need <= cap[0]:
        return RC_OK
    newcap = cap[0] * 2 if cap[0] > 0 else 16
    while newcap < need:
        newcap *= 2
    q = realloc(p[0], <size_t>newcap * item)
    if q == NULL:
        return RC_NO_MEMORY
    p[0] = q
    cap[0] = newcap
    return RC_OK


cdef inline int append(int64_t** arr, int64_t* n, int64_t* cap, int64_t value) noexcept nogil:
    # push onto a growable int64 array
    if grow(<void**>arr, cap, n[0] + 1, sizeof(int64_t)) != RC_OK:
        return RC_NO_MEMORY
    arr[0][n[0]] = value
    n[0] += 1
    return RC_OK
