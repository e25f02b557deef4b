# Per-job and per-unit columns read and written by position (header only): the checkpoint and
# Core.values_of name a column of a struct by its pointer's offset in State and its item size,
# so one table of columns (pbf._core.JOB_COLUMNS) serves every copy in and out.

from libc.stdint cimport int64_t, int32_t, int8_t
from libc.string cimport memcpy, memset


cdef inline char* column_at(void* base, Py_ssize_t at) noexcept nogil:
    # the array whose pointer lies `at` bytes into the struct at `base` (NULL if not allocated)
    return (<char**>((<char*>base) + at))[0]


cdef inline void gather(const char* col, const int64_t* rows, int64_t n, size_t size, char* out) noexcept nogil:
    # out = col[rows[0]], col[rows[1]], ... (items of `size` bytes; zeros from a missing column)
    cdef int64_t i
    if col == NULL:
        memset(out, 0, n * size)
        return
    for i in range(n):
        memcpy(out + i * size, col + rows[i] * size, size)


cdef inline void scatter(char* col, const int64_t* rows, int64_t n, size_t size, const char* data) noexcept nogil:
    # col[rows[i]] = the i-th item of data (nothing for a missing column)
    cdef int64_t i
    if col == NULL:
        return
    for i in range(n):
        memcpy(col + rows[i] * size, data + i * size, size)


cdef inline int64_t read_int(const char* col, size_t size, int64_t j) noexcept nogil:
    # item j of an integer column of 1, 4 or 8 bytes, sign-extended
    if size == 1:
        return (<const int8_t*>col)[j]
    if size == 4:
        return (<const int32_t*>col)[j]
    return (<const int64_t*>col)[j]
