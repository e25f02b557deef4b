"""Compiled bitmap kernels over little-endian uint64 words (bit = free unit).

These `def` entry points exist for tests, benchmarks and Python callers; each releases the GIL for the
whole loop. The engine calls the inline kernels of ``words.pxd`` directly. Argument checking (types,
sizes) happens in :mod:`pbf.bitmap` before any call reaches here.
"""
from libc.stdint cimport uint64_t, int64_t
from words cimport (w_popcount, w_count_and, w_any_common, w_and, w_andnot, w_or,
                    w_first_fit)


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
            w_or(&out[0], &a[0], &b[0], a.shape[0])


def first_fit(const uint64_t[::1] a, int64_t k, uint64_t[::1] chosen):
    cdef int64_t got = 0
    if a.shape[0]:
        with nogil:
            got = w_first_fit(&a[0], a.shape[0], k, &chosen[0])
    return got
