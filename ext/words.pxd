# Word-level bitmap kernels shared by every compiled module (header only: all inline).
#
# A bitmap of n units is an array of ceil(n/64) little-endian uint64 words; bit i is bit i%64 of word
# i//64, so numpy uint64 rows and little-endian bitarrays share memory. Padding bits past n are kept 0
# by every writer, so popcounts over whole words count units. None of these touch Python objects: they
# are called inside long `with nogil:` blocks.

from libc.stdint cimport uint64_t, int64_t

cdef extern from *:
    int __builtin_popcountll(unsigned long long x) nogil
    int __builtin_ctzll(unsigned long long x) nogil


cdef inline int64_t w_popcount(const uint64_t* a, Py_ssize_t n) noexcept nogil:
    cdef int64_t c = 0
    cdef Py_ssize_t i
    for i in range(n):
        c += __builtin_popcountll(a[i])
    return c


cdef inline int64_t w_count_and(const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    cdef int64_t c = 0
    cdef Py_ssize_t i
    for i in range(n):
        c += __builtin_popcountll(a[i] & b[i])
    return c


cdef inline bint w_any_common(const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        if a[i] & b[i]:
            return True
    return False


cdef inline void w_and(uint64_t* out, const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = a[i] & b[i]


cdef inline void w_andnot(uint64_t* out, const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    # out = a & ~b: "a without the units in b" (clearing a job's units from a slot)
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = a[i] & ~b[i]


cdef inline void w_or(uint64_t* out, const uint64_t* a, const uint64_t* b, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        out[i] = a[i] | b[i]


cdef inline int64_t w_first_fit(const uint64_t* a, Py_ssize_t n, int64_t k, uint64_t* chosen) noexcept nogil:
    # Set in `chosen` (n words, overwritten) the k lowest-numbered set bits of `a`.
    # Returns k on success, or the number of set bits (< k) when `a` has fewer; `chosen` then holds
    # all of them.
    cdef int64_t got = 0
    cdef Py_ssize_t i
    cdef uint64_t w, low
    for i in range(n):
        chosen[i] = 0
    if k <= 0:
        return 0
    for i in range(n):
        w = a[i]
        while w:
            low = w & (~w + 1)
            chosen[i] |= low
            w ^= low
            got += 1
            if got == k:
                return got
    return got
