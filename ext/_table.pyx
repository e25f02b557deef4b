"""Compiled job-table steps of a plain replay, on buffers rather than numpy arrays.

A plain ``pbf replay TRACE`` (a cluster of units, the built-in plugins) reads, cleans, orders and sums
up its jobs here, so that its process never imports numpy (about 45 ms of a 0.2 s process). Every
function takes any buffer of the right type (``array.array``, numpy arrays, memoryviews) and returns
``array.array`` columns: :class:`pbf.workload.JobTable` and :class:`pbf.ReplayResult` show them as
numpy arrays, without a copy, when they are first read.

The figures are numpy's, bit for bit: a mean of float64 values is numpy's pairwise sum (blocks of
128 values, 8 partial sums a block; ``_pairwise``), a mean of int64 values sums their float64 values
in buffers of 8192, one pairwise sum each added in turn (``_int_sum``), as numpy's reduction does.
"""
from cpython cimport array
from libc.stdint cimport int8_t, int64_t, uint8_t, INT64_MIN
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memcpy

import array as _array

cdef array.array _Q = _array.array("q")
cdef array.array _D = _array.array("d")

#: numpy's reduction buffer (elements) and its pairwise block (numpy/_core/src/umath/loops_utils.h.src)
DEF BUFSIZE = 8192
DEF PW_BLOCKSIZE = 128


def int64_buffer(Py_ssize_t n):
    """An ``array.array('q')`` of ``n`` values, not initialised."""
    return array.clone(_Q, n, False)


cdef inline array.array _new_q(Py_ssize_t n):
    return array.clone(_Q, n, False)


cdef inline array.array _new_d(Py_ssize_t n):
    return array.clone(_D, n, False)


# ------------------------------------------------------------------ numpy's sums
cdef double _pairwise(const double* a, Py_ssize_t n) noexcept nogil:
    # numpy's DOUBLE_pairwise_sum, operation for operation
    cdef Py_ssize_t i, n2
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    elif n <= PW_BLOCKSIZE:
        r0 = a[0]; r1 = a[1]; r2 = a[2]; r3 = a[3]
        r4 = a[4]; r5 = a[5]; r6 = a[6]; r7 = a[7]
        i = 8
        while i < n - (n % 8):
            r0 += a[i]; r1 += a[i + 1]; r2 += a[i + 2]; r3 += a[i + 3]
            r4 += a[i + 4]; r5 += a[i + 5]; r6 += a[i + 6]; r7 += a[i + 7]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += a[i]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise(a, n2) + _pairwise(a + n2, n - n2)


cdef double _int_sum(const int64_t* v, Py_ssize_t n, double* buf) noexcept nogil:
    # ``v.sum(dtype=float64)`` as numpy reduces it: the values cast into a buffer of BUFSIZE, each
    # buffer summed pairwise and added to the total in turn (``buf``: room for BUFSIZE doubles)
    cdef double acc = 0.0
    cdef Py_ssize_t s = 0, k, m
    while s < n:
        m = n - s if n - s < BUFSIZE else BUFSIZE
        for k in range(m):
            buf[k] = <double>v[s + k]
        acc = acc + _pairwise(buf, m)
        s += m
    return acc


def float_sum(const double[::1] values):
    """``numpy.sum`` of float64 values, bit for bit (numpy's pairwise summation)."""
    if values.shape[0] == 0:
        return 0.0
    return _pairwise(&values[0], values.shape[0])


def int_mean(const int64_t[::1] values):
    """``numpy.mean`` of int64 values, bit for bit (NaN for none)."""
    cdef Py_ssize_t n = values.shape[0]
    if n == 0:
        return float("nan")
    cdef double* buf = <double*>malloc(BUFSIZE * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    cdef double s = _int_sum(&values[0], n, buf)
    free(buf)
    return s / <double>n


# ------------------------------------------------------------------ the SWF reader's blocks
def check_sorted(const int64_t[:, ::1] cols, Py_ssize_t n, bint has_last, int64_t last):
    """The first record of the block ``cols[:, :n]`` (18 SWF columns, submit the second) whose submit
    time is below the last known one before it (-1, missing, is no time): ``(index, the time before
    it, index of the record it came from or -1 for one before this block)``, or ``(-1, the last known
    time, its index or -1)`` when they never go back."""
    cdef Py_ssize_t i, at = -1
    cdef int64_t s
    for i in range(n):
        s = cols[1, i]
        if s < 0:
            continue
        if has_last and s < last:
            return i, last, at
        last = s
        at = i
        has_last = True
    return -1, (last if has_last else None), at


cdef inline int64_t _imax(int64_t a, int64_t b) noexcept nogil:
    return a if a >= b else b


cdef inline int64_t _units(const int64_t[:, ::1] cols, Py_ssize_t i, int units_from) noexcept nogil:
    return (_imax(cols[7, i], cols[4, i]) if units_from == 0 else cols[7, i] if units_from == 1 else cols[4, i])


def clean_blocks(list blocks, list names, const uint8_t[::1] is_float, int units_from, bint drop_missing_submit,
                 int drop_runtime, bint drop_units, int fill, bint clip, int64_t size, bint drop_oversize,
                 bint in_place=False):
    """The cleaning rules of :func:`pbf.workload.clean` over a reader's raw blocks, each
    ``(cols, lines, n)``: 18 SWF columns (int64, a fractional field's float64 bits) and the line of
    each of the ``n`` records. ``units_from``: 0 max, 1 requested, 2 allocated; ``drop_runtime``: 0
    no, 1 run time <= 0, 2 < 0; ``fill``: 0 never, 1 always, 2 when no kept job has a requested time;
    ``size``: the cluster's units (-1: none). Returns ``(columns, counts)``: the kept records' columns
    (the 18 fields in ``names``' order, then ``line`` and ``units``) and the report's counts.

    With ``in_place`` (the blocks are the caller's to overwrite, each ``cols`` a 2-D memoryview over an
    ``array.array``, as :class:`pbf.workload.SwfReader` makes them) the kept records are moved to the
    front of the first block when they fit there, and the columns are memoryviews of it: a fresh process
    pays a page fault for every 4 KiB of new memory, and 19 new columns of a large log are megabytes.
    Otherwise they are new ``array.array`` columns."""
    cdef Py_ssize_t total = 0, b, i, k, r, n, nb = len(blocks), kept = 0, out_n = 0, cap0
    cdef const int64_t[:, ::1] cols
    cdef int64_t units, run, req
    cdef int64_t n_submit = 0, n_runtime = 0, n_units = 0, n_missing = 0, n_over = 0, n_big = 0
    cdef bint filled = False, keep
    for b in range(nb):
        total += <Py_ssize_t>blocks[b][2]
    cdef uint8_t* flag = <uint8_t*>malloc(total + 1)
    if flag == NULL:
        raise MemoryError()
    try:
        # the dropping rules in their order (flag 0: dropped; 2: kept until the oversize rule drops it),
        # and the jobs without a requested time among those kept before the oversize rule
        r = 0
        for b in range(nb):
            cols = blocks[b][0]
            n = blocks[b][2]
            with nogil:
                for i in range(n):
                    units = _units(cols, i, units_from)
                    keep = True
                    if drop_missing_submit and cols[1, i] < 0:
                        n_submit += 1
                        keep = False
                    run = cols[3, i]
                    if keep and drop_runtime and (run <= 0 if drop_runtime == 1 else run < 0):
                        n_runtime += 1
                        keep = False
                    if keep and drop_units and units <= 0:
                        n_units += 1
                        keep = False
                    flag[r] = keep
                    if keep:
                        kept += 1
                        if cols[8, i] <= 0:
                            n_missing += 1
                        if size >= 0 and units > size:
                            n_big += 1
                            if drop_oversize:
                                flag[r] = 2
                        if flag[r] == 1:
                            out_n += 1
                    r += 1
        if fill == 2:
            filled = n_missing > 0 and n_missing == kept
        else:
            filled = fill == 1
        # the run times cut to the requested time (filled first), counted over the jobs kept until the
        # oversize rule, as clean() does
        if clip:
            r = 0
            for b in range(nb):
                cols = blocks[b][0]
                n = blocks[b][2]
                for i in range(n):
                    if flag[r]:
                        run = cols[3, i]
                        req = run if filled and cols[8, i] <= 0 else cols[8, i]
                        if req > 0 and run > req:
                            n_over += 1
                    r += 1
        cap0 = 0
        if nb:
            cols = blocks[0][0]
            cap0 = cols.shape[1]
        if in_place and nb and out_n <= cap0:
            columns = _kept_in_place(blocks, names, is_float, flag, out_n, units_from, filled, clip)
        else:
            columns = _kept_copied(blocks, names, is_float, flag, out_n, units_from, filled, clip)
    finally:
        free(flag)
    counts = {"dropped_missing_submit": n_submit, "dropped_nonpositive_runtime": n_runtime,
              "dropped_nonpositive_units": n_units,
              "filled_missing_request": n_missing if filled else 0,
              "missing_request": 0 if filled else n_missing, "filled_because_none_given": filled and fill == 2,
              "clipped_runtime_to_request": n_over, "oversize": n_big if size >= 0 else 0,
              "oversize_dropped": n_big if size >= 0 and drop_oversize else 0}
    return columns, counts


cdef void _move(list blocks, int64_t** dst, const uint8_t* flag, int units_from, bint filled, bint clip,
                int64_t* line_dst, int64_t* units_dst):
    # the kept records (flag 1) to dst[0..17], line_dst and units_dst, a column at a time (each a
    # stream read and written in order); a destination may be the first block's own rows: every record
    # goes to a place at or before its own, after it was read
    cdef Py_ssize_t b, i, k, r, o, n, r0, nb = len(blocks)
    cdef const int64_t[:, ::1] cols
    cdef const int64_t[::1] lines
    cdef int64_t run, req
    for k in (3, 0, 1, 2, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15, 16, 17):
        r0 = 0
        o = 0
        for b in range(nb):
            cols = blocks[b][0]
            lines = blocks[b][1]
            n = blocks[b][2]
            with nogil:
                if k == 3:
                    # first, while every field is in its place: the units and the line; a kept job with no
                    # requested time takes its run time when filled; a run time past a positive requested
                    # time is cut to it (the rules of clean() for the jobs it keeps)
                    for i in range(n):
                        if flag[r0 + i] == 1:
                            run = cols[3, i]
                            req = cols[8, i]
                            if filled and req <= 0:
                                req = run
                            if clip and req > 0 and run > req:
                                run = req
                            units_dst[o] = _units(cols, i, units_from)
                            line_dst[o] = lines[i]
                            dst[3][o] = run
                            dst[8][o] = req
                            o += 1
                else:
                    for i in range(n):
                        if flag[r0 + i] == 1:
                            dst[k][o] = cols[k, i]
                            o += 1
            r0 += n


cdef dict _kept_copied(list blocks, list names, const uint8_t[::1] is_float, const uint8_t* flag, Py_ssize_t n,
                       int units_from, bint filled, bint clip):
    cdef int64_t* dst[18]
    cdef Py_ssize_t k
    out = [_new_d(n) if is_float[k] else _new_q(n) for k in range(18)]
    for k in range(18):
        dst[k] = <int64_t*>(<array.array>out[k]).data.as_voidptr
    cdef array.array line = _new_q(n), units = _new_q(n)
    _move(blocks, dst, flag, units_from, filled, clip, <int64_t*>line.data.as_voidptr,
          <int64_t*>units.data.as_voidptr)
    columns = {names[k]: out[k] for k in range(18)}
    columns["line"] = line
    columns["units"] = units
    return columns


cdef dict _kept_in_place(list blocks, list names, const uint8_t[::1] is_float, const uint8_t* flag, Py_ssize_t n,
                         int units_from, bint filled, bint clip):
    cdef int64_t[:, ::1] first = blocks[0][0]
    cdef int64_t[::1] first_lines = blocks[0][1]
    cdef int64_t* dst[18]
    cdef Py_ssize_t k, cap = first.shape[1]
    for k in range(18):
        dst[k] = &first[k, 0]
    cdef array.array units = _new_q(n)
    _move(blocks, dst, flag, units_from, filled, clip, &first_lines[0], <int64_t*>units.data.as_voidptr)
    whole = memoryview(blocks[0][0].obj)
    columns = {}
    for k in range(18):
        column = whole[k * cap:k * cap + n]
        columns[names[k]] = column.cast("B").cast("d") if is_float[k] else column
    columns["line"] = memoryview(blocks[0][1])[:n]
    columns["units"] = units
    return columns


# ------------------------------------------------------------------ a replay's columns in
cdef const int64_t* _key_s
cdef const int64_t* _key_id


cdef int _by_submit_id(const void* a, const void* b) noexcept nogil:
    # (submit, id, then the index: numpy's stable lexsort((id, submit)))
    cdef int64_t i = (<const int64_t*>a)[0], j = (<const int64_t*>b)[0]
    if _key_s[i] != _key_s[j]:
        return -1 if _key_s[i] < _key_s[j] else 1
    if _key_id[i] != _key_id[j]:
        return -1 if _key_id[i] < _key_id[j] else 1
    return -1 if i < j else (1 if i > j else 0)


cdef int _by_value(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return -1 if x < y else (1 if x > y else 0)


cdef Py_ssize_t _lower_bound(const int64_t* v, Py_ssize_t n, int64_t x) noexcept nogil:
    # how many of the sorted v are < x
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if v[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef Py_ssize_t _lower_bound_from(const int64_t* v, Py_ssize_t n, int64_t x, Py_ssize_t h) noexcept nogil:
    # _lower_bound(v, n, x), galloping from index h (0 <= h < n) outwards
    cdef Py_ssize_t lo, hi, step = 1
    if v[h] < x:                     # the answer is in (h, n]
        lo = h + 1
        while True:
            hi = lo + step - 1
            if hi >= n:
                hi = n
                break
            if v[hi] >= x:
                break
            lo = hi + 1
            step *= 2
    else:                            # in [0, h]
        hi = h
        while True:
            lo = hi - step
            if lo <= 0:
                lo = 0
                break
            if v[lo] < x:
                lo += 1
                break
            hi = lo
            step *= 2
    return lo + _lower_bound(v + lo, hi - lo, x)


def replay_columns(const int64_t[::1] submit, const int64_t[::1] job_id, const int64_t[::1] units,
                   const int64_t[::1] req, const int64_t[::1] run, const int64_t[::1] user, bint kill_at_request,
                   bint clairvoyant):
    """A replay's job columns in arrival order, (submit, id) (numpy's stable ``lexsort((id, submit))``):
    ``(order, submit, units, req, run, est, user, user_ids)``: ``order`` the rows of the table (None when
    they are in order already), ``run`` at least 0 and, with ``kill_at_request``, at most a positive
    requested time; ``est`` the requested time, or with ``clairvoyant`` the run time (at least 1);
    ``user`` each job's index among ``user_ids``, the distinct user numbers in increasing order
    (``numpy.unique(..., return_inverse=True)``)."""
    global _key_s, _key_id
    cdef Py_ssize_t n = submit.shape[0], i, k, span
    cdef int64_t j, r, lo, hi, m
    cdef bint ordered = True
    cdef array.array order = None
    cdef int64_t* o = NULL
    for i in range(1, n):
        if submit[i] < submit[i - 1] or (submit[i] == submit[i - 1] and job_id[i] < job_id[i - 1]):
            ordered = False
            break
    if not ordered:
        order = _new_q(n)
        o = (<int64_t*>order.data.as_voidptr)
        for i in range(n):
            o[i] = i
        _key_s, _key_id = &submit[0], &job_id[0]
        qsort(o, n, sizeof(int64_t), _by_submit_id)
    cdef array.array a_submit = _new_q(n), a_units = _new_q(n), a_req = _new_q(n), a_run = _new_q(n)
    cdef array.array a_est = _new_q(n), a_user = _new_q(n)
    cdef int64_t* s = (<int64_t*>a_submit.data.as_voidptr)
    cdef int64_t* u = (<int64_t*>a_units.data.as_voidptr)
    cdef int64_t* q = (<int64_t*>a_req.data.as_voidptr)
    cdef int64_t* rn = (<int64_t*>a_run.data.as_voidptr)
    cdef int64_t* e = (<int64_t*>a_est.data.as_voidptr)
    cdef int64_t* w = (<int64_t*>a_user.data.as_voidptr)
    with nogil:
        for i in range(n):
            j = o[i] if o != NULL else i
            s[i] = submit[j]
            u[i] = units[j]
            q[i] = req[j]
            r = run[j] if run[j] > 0 else 0
            if kill_at_request and q[i] > 0 and r > q[i]:
                r = q[i]                    # killed at the requested time
            rn[i] = r
            e[i] = (r if r > 1 else 1) if clairvoyant else q[i]
            w[i] = user[j]
    return (order, a_submit, a_units, a_req, a_run, a_est, a_user, _dense(w, n))


cdef array.array _dense(int64_t* w, Py_ssize_t n):
    # w's values made their index among the distinct values (in place); returns the distinct values:
    # by marking the values present when they span a range not much longer than n (a trace's user
    # numbers), else by sorting them
    cdef Py_ssize_t i, k, span, m = 0
    cdef int64_t lo, hi
    cdef int64_t* rank
    cdef int64_t* vals
    cdef array.array ids
    if n == 0:
        return _new_q(0)
    lo = hi = w[0]
    for i in range(n):
        lo = w[i] if w[i] < lo else lo
        hi = w[i] if w[i] > hi else hi
    if <double>hi - <double>lo < 4.0 * n + 4096:
        span = <Py_ssize_t>(hi - lo) + 1
        rank = <int64_t*>malloc(span * sizeof(int64_t))
        if rank == NULL:
            raise MemoryError()
        for k in range(span):
            rank[k] = 0
        for i in range(n):
            rank[w[i] - lo] = 1
        for k in range(span):
            if rank[k]:
                m += 1
        ids = _new_q(m)
        m = 0
        for k in range(span):
            if rank[k]:
                (<int64_t*>ids.data.as_voidptr)[m] = lo + k
                rank[k] = m
                m += 1
        for i in range(n):
            w[i] = rank[w[i] - lo]
        free(rank)
        return ids
    vals = <int64_t*>malloc(n * sizeof(int64_t))
    if vals == NULL:
        raise MemoryError()
    memcpy(vals, w, n * sizeof(int64_t))
    qsort(vals, n, sizeof(int64_t), _by_value)
    for i in range(n):
        if i == 0 or vals[i] != vals[m - 1]:
            vals[m] = vals[i]
            m += 1
    ids = _new_q(m)
    memcpy((<int64_t*>ids.data.as_voidptr), vals, m * sizeof(int64_t))
    for i in range(n):
        w[i] = _lower_bound(vals, m, w[i])
    free(vals)
    return ids


def take(const int64_t[::1] column, order):
    """``column[order]`` as an ``array.array('q')`` (``order`` None: a copy)."""
    cdef Py_ssize_t n = column.shape[0], i
    cdef array.array out = _new_q(n)
    cdef const int64_t[::1] o
    if order is None:
        if n:
            memcpy((<int64_t*>out.data.as_voidptr), &column[0], n * sizeof(int64_t))
        return out
    o = order
    for i in range(n):
        (<int64_t*>out.data.as_voidptr)[i] = column[o[i]]
    return out


def int_max(const int64_t[::1] values):
    """The largest value (None for none)."""
    cdef Py_ssize_t i
    if values.shape[0] == 0:
        return None
    cdef int64_t m = values[0]
    for i in range(values.shape[0]):
        m = values[i] if values[i] > m else m
    return m


# ------------------------------------------------------------------ a replay's figures out
DEF JS_DONE = 3
DEF JS_REJECTED = 4
DEF JS_KILLED = 5
DEF RJ_RESV_OVER = 9
DEF N_REASONS = 10


def schedule_figures(const int64_t[::1] submit, const int64_t[::1] start, const int64_t[::1] end,
                     const int64_t[::1] run, const int64_t[::1] units, const int8_t[::1] state,
                     const int8_t[::1] how, const int8_t[::1] reason, const int64_t[::1] predicted,
                     const int64_t[::1] corrections, int64_t total_units, double tau):
    """A replay's summary figures from its job columns (arrival order; the codes ``state``, ``how`` and
    ``reason`` as int8, as the core holds them: a plain replay passes the core's own columns,
    :meth:`pbf._core.Core._view`), numpy's to the bit: the counts of the summary's ``jobs``, the
    :class:`pbf.Metrics` fields of the completed jobs (as :func:`pbf.schedule_metrics` makes them) and
    the prediction's error over them. A dict."""
    cdef Py_ssize_t n = submit.shape[0], i, d = 0, k
    cdef int64_t killed = 0, over = 0, backfilled = 0, by_main = 0, corrected = 0, last_time = 0, under = 0
    cdef int64_t rejected[N_REASONS]
    for k in range(N_REASONS):
        rejected[k] = 0
    for i in range(n):
        if state[i] == JS_DONE:
            d += 1
        elif state[i] == JS_KILLED:
            killed += 1
        elif state[i] == JS_REJECTED and 0 <= reason[i] < N_REASONS:
            rejected[reason[i]] += 1
        if reason[i] == RJ_RESV_OVER:
            over += 1
        if how[i] == 1:
            by_main += 1
        elif how[i] == 2:
            backfilled += 1
        if corrections[i] > 0:
            corrected += 1
        last_time = end[i] if i == 0 or end[i] > last_time else last_time
        last_time = submit[i] if submit[i] > last_time else last_time
    out = {"completed": d, "killed": killed, "ended_by_reservation": over,
           "rejected_by_reason": [rejected[k] for k in range(N_REASONS)], "backfilled": backfilled,
           "started_by_main": by_main, "jobs_corrected": corrected, "last_time": last_time}
    if d == 0:
        out.update(metrics=(0, 0.0, 0.0, 0.0, float(tau), 0.0, 0, 0, 0.0), mae_s=0.0, under_predicted=0.0)
        return out
    if tau <= 0:
        raise ValueError(f"tau (the slowdown bound) must be > 0 seconds, got {tau}")
    cdef int64_t* subs = <int64_t*>malloc(d * sizeof(int64_t))
    cdef int64_t* cnt = <int64_t*>malloc((d + 1) * sizeof(int64_t))
    cdef double* vals = <double*>malloc(d * sizeof(double))
    cdef double* wbuf = <double*>malloc(BUFSIZE * sizeof(double))
    cdef double* rbuf = <double*>malloc(BUFSIZE * sizeof(double))
    cdef int64_t first = 0, last = 0, t, wsum = 0, work = 0, started, queue, max_q = INT64_MIN, w
    cdef double b, x, wacc = 0.0, racc = 0.0
    cdef Py_ssize_t m = 0
    cdef bint sorted_subs = True
    try:
        if not (subs and cnt and vals and wbuf and rbuf):
            raise MemoryError()
        k = 0
        with nogil:
            for i in range(n):
                if state[i] != JS_DONE:
                    continue
                subs[k] = submit[i]
                w = start[i] - submit[i]
                wsum += w
                work += units[i] * run[i]
                t = start[i] + run[i]
                first = submit[i] if k == 0 or submit[i] < first else first
                last = t if k == 0 or t > last else last
                if k and subs[k] < subs[k - 1]:
                    sorted_subs = False
                # the waits and responses as float64 in numpy's buffers, each summed pairwise in turn
                wbuf[m] = <double>w
                rbuf[m] = <double>(w + run[i])
                m += 1
                if m == BUFSIZE:
                    wacc = wacc + _pairwise(wbuf, m)
                    racc = racc + _pairwise(rbuf, m)
                    m = 0
                # the prediction's error (predicted - run, as float64), its magnitude for the mean
                x = <double>(predicted[i] - run[i])
                if x < 0:
                    under += 1
                vals[k] = -x if x < 0 else x
                k += 1
            if m:
                wacc = wacc + _pairwise(wbuf, m)
                racc = racc + _pairwise(rbuf, m)
        mae = _pairwise(vals, d) / <double>d
        makespan = last - first
        awt = wacc / <double>d
        art = racc / <double>d
        if makespan > 0:
            mean_q = <double>wsum / <double>makespan
            util = <double>work / <double>(total_units * makespan)
        else:
            mean_q = util = 0.0
        k = 0
        with nogil:
            if -(<int64_t>1 << 52) < first <= last < (<int64_t>1 << 52):
                # (times within 2**52 of 0: the response in floats is the integer response converted)
                for i in range(n):
                    if state[i] == JS_DONE:
                        b = <double>run[i]
                        b = b if b >= tau else tau
                        x = <double>(start[i] - submit[i] + run[i]) / b
                        vals[k] = x if x >= 1.0 else 1.0
                        k += 1
            else:
                for i in range(n):
                    if state[i] == JS_DONE:
                        b = <double>run[i]
                        b = b if b >= tau else tau
                        x = ((<double>start[i] - <double>submit[i]) + <double>run[i]) / b
                        vals[k] = 1.0 if 1.0 >= x else x
                        k += 1
        bsld = _pairwise(vals, d) / <double>d
        # the longest queue: at each submit instant, the jobs submitted by then less those started by then
        # (a start counted at the first submit instant at or after it: found from its own job's submit on,
        # which it is at or after, when the submits are in order, as a replay's are)
        with nogil:
            if not sorted_subs:
                qsort(subs, d, sizeof(int64_t), _by_value)
            for k in range(d + 1):
                cnt[k] = 0
            k = 0
            for i in range(n):
                if state[i] == JS_DONE:
                    cnt[_lower_bound_from(subs, d, start[i], k) if sorted_subs else
                        _lower_bound(subs, d, start[i])] += 1
                    k += 1
            started = 0
            for k in range(d):
                started += cnt[k]
                if k == d - 1 or subs[k + 1] != subs[k]:
                    queue = k + 1 - started
                    max_q = queue if queue > max_q else max_q
    finally:
        free(subs); free(cnt); free(vals); free(wbuf); free(rbuf)
    out.update(metrics=(d, awt, art, bsld, float(tau), util, makespan, max_q, mean_q), mae_s=mae,
               under_predicted=<double>under / <double>d)
    return out
