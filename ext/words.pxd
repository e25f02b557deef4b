# Word-level bitmap operations shared by every compiled module (header only: all inline).
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


# ---- copying, OR and unit choice (what the scheduler runs; pbf.bitmap and the tests call them too)

cdef inline void w_copy(uint64_t* dst, const uint64_t* src, int64_t W) noexcept nogil:
    # bitmaps are a few words on most clusters: a loop beats a call to memcpy
    cdef int64_t i
    for i in range(W):
        dst[i] = src[i]


cdef inline void w_or_into(uint64_t* dst, const uint64_t* a, const uint64_t* b, int64_t W) noexcept nogil:
    # dst = a | b (dst may be a); clusters of up to 128 units skip the vectorised loop's set-up
    cdef int64_t i
    if W <= 2:
        dst[0] = a[0] | b[0]
        if W == 2:
            dst[1] = a[1] | b[1]
        return
    for i in range(W):
        dst[i] = a[i] | b[i]


cdef inline void w_zero(uint64_t* dst, int64_t W) noexcept nogil:
    cdef int64_t i
    for i in range(W):
        dst[i] = 0


cdef inline uint64_t w_lowest_bits(uint64_t w, int64_t need) noexcept nogil:
    # the lowest `need` set bits of w (0 < need < popcount(w)): find the need-th set bit by
    # halving over prefix popcounts (branch-free; peeling bits one by one cost up to 63 steps)
    cdef int64_t pos = 0, step = 32
    while step > 0:
        if __builtin_popcountll(w & (((<uint64_t>1) << (pos + step)) - 1)) < need:
            pos += step
        step >>= 1
    return w & (((<uint64_t>2) << pos) - 1)


cdef inline int64_t w_move_lowest(uint64_t* src, uint64_t* dst, int64_t i, uint64_t w, int64_t need) noexcept nogil:
    # move the lowest `need` bits of w (set in src[i], need >= 1) from src[i] to dst[i], or all of
    # them if w has no more; returns how many are still needed
    cdef int64_t c = __builtin_popcountll(w)
    if c > need:
        w = w_lowest_bits(w, need)
        c = need
    dst[i] |= w
    src[i] &= ~w
    return need - c


cdef inline int64_t w_take_lowest(uint64_t* src, uint64_t* dst, int64_t need, int64_t W) noexcept nogil:
    # move up to `need` of the lowest set bits of src to dst; returns how many are still needed
    cdef int64_t i
    for i in range(W):
        if need == 0:
            break
        if src[i] != 0:
            need = w_move_lowest(src, dst, i, src[i], need)
    return need


cdef inline int64_t w_take_lowest_busy(uint64_t* src, uint64_t* dst, int64_t need, int64_t lo, int64_t hi,
                                       const uint64_t* free_bits) noexcept nogil:
    # w_take_lowest of (src & ~free_bits) over words [lo, hi) (src is zero outside; need >= 1): the
    # units of src busy in a slot, without materialising the mask
    cdef int64_t i
    cdef uint64_t w
    for i in range(lo, hi):
        w = src[i] & ~free_bits[i]
        if w != 0:
            need = w_move_lowest(src, dst, i, w, need)
            if need == 0:
                break
    return need


cdef inline void w_span(const uint64_t* bits, int64_t W, int64_t* lo, int64_t* hi) noexcept nogil:
    # [lo, hi): the words from the first to the last that hold a set bit (lo == hi if none)
    lo[0] = 0
    hi[0] = W
    while lo[0] < hi[0] and bits[lo[0]] == 0:
        lo[0] += 1
    while hi[0] > lo[0] and bits[hi[0] - 1] == 0:
        hi[0] -= 1
