"""Compiled bitmap operations over little-endian uint64 words (bit = free unit).

These `def` entry points exist for tests, benchmarks and Python callers; each releases the GIL for the
whole loop and calls the same inline operations of ``words.pxd`` the scheduler runs. Argument checking
(types, sizes) happens in :mod:`pbf.bitmap` before any call reaches here.
"""
from libc.stdint cimport uint64_t, int64_t
from words cimport (w_popcount, w_count_and, w_any_common, w_and, w_andnot, w_or_into, w_copy,
                    w_zero, w_take_lowest, w_take_lowest_busy)


def popcount(const uint64_t[::1] a):
    cdef int64_t c
    with nogil:
        c = w_popcount(&a[0], a.shape[0]) if a.shape[0] else 0
    return c


def count_and(const uint64_t[::1] a, const uint64_t[::1] b):
    cdef int64_t c
    with nogil:
        c = w_count_and(&a[0], &b[0], a.shape[0]) if a.shape[0] else 0
    return c


def any_common(const uint64_t[::1] a, const uint64_t[::1] b):
    cdef bint r
    with nogil:
        r = w_any_common(&a[0], &b[0], a.shape[0]) if a.shape[0] else False
    return bool(r)


def and_into(uint64_t[::1] out, const uint64_t[::1] a, const uint64_t[::1] b):
    if a.shape[0]:
        with nogil:
            w_and(&out[0], &a[0], &b[0], a.shape[0])


def andnot_into(uint64_t[::1] out, const uint64_t[::1] a, const uint64_t[::1] b):
    if a.shape[0]:
        with nogil:
            w_andnot(&out[0], &a[0], &b[0], a.shape[0])


def or_into(uint64_t[::1] out, const uint64_t[::1] a, const uint64_t[::1] b):
    if a.shape[0]:
        with nogil:
            w_or_into(&out[0], &a[0], &b[0], a.shape[0])


def copy_into(uint64_t[::1] out, const uint64_t[::1] a):
    if a.shape[0]:
        with nogil:
            w_copy(&out[0], &a[0], a.shape[0])


def take_lowest(uint64_t[::1] src, uint64_t[::1] dst, int64_t need):
    """Move up to ``need`` of the lowest set bits of src to dst; returns how many are still needed."""
    cdef int64_t left = need
    if src.shape[0]:
        with nogil:
            left = w_take_lowest(&src[0], &dst[0], need, src.shape[0])
    return left


def take_lowest_busy(uint64_t[::1] src, uint64_t[::1] dst, int64_t need, const uint64_t[::1] free_bits,
                     int64_t lo=0, hi=None):
    """take_lowest of ``src & ~free_bits`` over words [lo, hi) (src must be zero outside them)."""
    cdef int64_t left = need, h = src.shape[0] if hi is None else hi
    if src.shape[0]:
        with nogil:
            left = w_take_lowest_busy(&src[0], &dst[0], need, lo, h, &free_bits[0])
    return left


def first_fit(const uint64_t[::1] a, int64_t k, uint64_t[::1] chosen):
    """The k lowest set bits of a into chosen (overwritten); returns how many it found (<= k)."""
    cdef int64_t left = k, n = a.shape[0]
    if n == 0:
        return 0
    cdef uint64_t[::1] tmp = a.copy()
    with nogil:
        w_zero(&chosen[0], n)
        if k > 0:
            left = w_take_lowest(&tmp[0], &chosen[0], k, n)
    return k - left if k > 0 else 0
