"""The engine's batch call on preallocated arrays (:class:`pbf.engine_batch.BatchBuffers`): one
compiled call checks a call's finishes and submissions, applies them, runs the pass and writes the
decisions into arrays it keeps, with no Python object made per call (only per new job: its id in the
engine's index). Semantics and refusals are those of :meth:`pbf.Engine.advance_arrays`: anything the
compiled call does not take (a misuse to explain, a user not seen yet, an engine whose calls need
Python work per event) goes through ``advance_arrays`` itself, whose decisions are copied into the
same arrays. Internal: use :meth:`pbf.Engine.batch_buffers`.
"""
import numpy as np

from cpython.dict cimport PyDict_GetItem, PyDict_SetItem, PyDict_Contains
from cpython.list cimport PyList_Append, PyList_GET_ITEM, PyList_GET_SIZE
from cpython.object cimport PyObject
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_ND, PyBUF_FORMAT
from cpython.pythread cimport (PyThread_type_lock, PyThread_allocate_lock, PyThread_free_lock, PyThread_acquire_lock,
                               PyThread_release_lock, PyThread_get_thread_ident, WAIT_LOCK, NOWAIT_LOCK)
from libc.stdint cimport uint64_t, int64_t, int8_t
from libc.stdlib cimport qsort
from libc.string cimport memset

from memory cimport grow, INF
from state cimport State
from jobs cimport jobs_reserve, jobs_clear, users_ensure
from lifecycle cimport job_submit, job_finish
from passes cimport quick_pass, main_pass
from cycle cimport full_pass
from costate cimport coalloc_grow
from node_model cimport nm_reserve_jobs
from licenses cimport lic_reserve_jobs
from qos_limits cimport ql_reserve_jobs
from words cimport __builtin_popcountll, __builtin_ctzll
from pbf._core cimport Core, raise_status, int64_array
from pbf._codes cimport RC_OK, RC_NO_MEMORY, JS_RUNNING

from .engine_events import MAX_TIME as _PY_MAX_TIME, ProtocolError

cdef int64_t MAX_TIME = _PY_MAX_TIME
# (a queue this long or longer: the pass runs without the GIL, so that other threads run meanwhile;
# a shorter pass costs less than giving the GIL up and taking it back)
cdef int64_t NOGIL_QUEUE = 256
cdef int64_t SMALL = 16           # up to this many ids in a call: duplicates found pair by pair


cdef inline int grow_job_tables(State* S) noexcept nogil:
    # (as the core's own: the per-job tables of what is switched on, as long as the job table)
    if S.co.on and coalloc_grow(&S.co, S.jobs.cap) != RC_OK:
        return RC_NO_MEMORY
    if S.nm.on and nm_reserve_jobs(&S.nm, S.jobs.cap) != RC_OK:
        return RC_NO_MEMORY
    if S.lic.on and lic_reserve_jobs(&S.lic, S.jobs.cap) != RC_OK:
        return RC_NO_MEMORY
    if S.qos_lim.on and ql_reserve_jobs(&S.qos_lim, S.jobs.cap) != RC_OK:
        return RC_NO_MEMORY
    return RC_OK


cdef int cmp_i64(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef bint one_int64_column(Py_buffer* v) noexcept:
    # a 1-d C-contiguous buffer of 64-bit signed ints (NumPy's int64: 'l' or 'q'; array.array('q'))
    cdef const char* f = v.format
    if v.ndim != 1 or v.itemsize != 8 or f == NULL:
        return False
    if f[0] == b'<' or f[0] == b'=' or f[0] == b'@':
        f += 1
    if (f[0] != b'l' and f[0] != b'q') or f[1] != 0:
        return False
    return v.strides == NULL or v.shape[0] <= 1 or v.strides[0] == 8


cdef bint has_duplicate(const int64_t* v, int64_t n, int64_t* scratch) noexcept nogil:
    # two equal values among v[0:n] (scratch: room for n values when n > SMALL)
    cdef int64_t i, k
    if n <= SMALL:
        for i in range(n):
            for k in range(i):
                if v[i] == v[k]:
                    return True
        return False
    for i in range(n):
        scratch[i] = v[i]
    qsort(scratch, n, sizeof(int64_t), cmp_i64)
    for i in range(1, n):
        if scratch[i] == scratch[i - 1]:
            return True
    return False


cdef class EngineLock:
    """The engine's lock: reentrant, as ``threading.RLock`` (one call at a time; a thread may call
    in again from inside a call), taken by the compiled call at the cost of a C call."""
    cdef PyThread_type_lock lock
    cdef unsigned long owner
    cdef long count

    def __cinit__(self):
        self.lock = PyThread_allocate_lock()
        if self.lock == NULL:
            raise MemoryError("pbf: cannot make a lock")

    def __dealloc__(self):
        if self.lock != NULL:
            PyThread_free_lock(self.lock)

    cdef int enter(self) except -1:
        # (owner and count change only with the GIL held, as CPython's RLock's)
        cdef unsigned long me = PyThread_get_thread_ident()
        if self.count and self.owner == me:
            self.count += 1
            return 0
        if not PyThread_acquire_lock(self.lock, NOWAIT_LOCK):
            with nogil:
                PyThread_acquire_lock(self.lock, WAIT_LOCK)
        self.owner = me
        self.count = 1
        return 0

    cdef void leave(self) noexcept:
        self.count -= 1
        if self.count == 0:
            self.owner = 0
            PyThread_release_lock(self.lock)

    def acquire(self):
        self.enter()
        return True

    def release(self):
        if self.count == 0 or self.owner != PyThread_get_thread_ident():
            raise RuntimeError("cannot release un-acquired lock")
        self.leave()

    def __enter__(self):
        self.enter()
        return self

    def __exit__(self, *exc):
        self.leave()
        return False


cdef class Column:
    """An int64 column the host writes (held with its data pointer)."""
    cdef readonly object array
    cdef const int64_t* p
    cdef readonly int64_t n

    def __cinit__(self, array):
        cdef const int64_t[::1] mv = array
        self.array = array
        self.n = mv.shape[0]
        self.p = &mv[0] if self.n else NULL


cdef class Out:
    """An int64 array the call writes, grown on demand."""
    cdef readonly object array
    cdef int64_t* p
    cdef int64_t cap

    def __cinit__(self, int64_t cap):
        self.make(cap)

    cdef make(self, int64_t cap):
        cdef int64_t[::1] mv
        self.array = np.zeros(max(cap, 1), dtype=np.int64)
        mv = self.array
        self.p = &mv[0]
        self.cap = mv.shape[0]

    cdef inline int64_t* room(self, int64_t n) except NULL:
        if n > self.cap:
            self.make(max(n, 2 * self.cap))
        return self.p


cdef class BatchCore:
    """The compiled part of :class:`pbf.engine_batch.BatchBuffers` (see there)."""
    cdef Core core
    cdef object engine, d, timing, index, ids, jobs, users, rejected, timed
    cdef EngineLock lock
    cdef bint every_call, fast, reservations
    cdef public bint closed
    cdef readonly int64_t submitted, nrejected_all, finished, passes, nstarted_all
    cdef public Column fid, ft, sid, st, su, sr, srun, suser
    cdef readonly Out o_started, o_offsets, o_units, o_rejected, o_reserved, o_reserved_at
    cdef Out rows, dense, scratch
    cdef object reject_arr
    cdef int8_t* reject
    cdef int64_t reject_cap
    cdef readonly int64_t nstarted, nrejected, nreserved, fallbacks

    def __cinit__(self, Core core not None, engine, bint every_call, bint fast, bint reservations, *args, **kw):
        self.core = core
        self.engine = engine
        self.d = engine.__dict__
        # (the engine's records: objects it never replaces, only changes)
        self.index, self.ids, self.jobs = engine._index, engine._ids, engine._jobs
        self.users, self.rejected, self.timed = engine._users, engine._rejected, engine._timed
        self.closed = engine._closed
        self.timing = engine._timing
        self.lock = engine._lock
        self.every_call, self.fast, self.reservations = every_call, fast, reservations
        self.o_started, self.o_offsets, self.o_units = Out(64), Out(65), Out(64)
        self.o_rejected, self.o_reserved, self.o_reserved_at = Out(16), Out(16), Out(16)
        self.rows, self.dense, self.scratch = Out(64), Out(64), Out(64)
        self.reject_arr = np.zeros(64, dtype=np.int8)
        self._reject_view()

    cdef _reject_view(self):
        cdef int8_t[::1] mv = self.reject_arr
        self.reject = &mv[0]
        self.reject_cap = mv.shape[0]

    def set_counts(self, int64_t nstarted, int64_t nrejected, int64_t nreserved):
        """(the slow path's decisions were copied into the arrays)"""
        self.nstarted, self.nrejected, self.nreserved = nstarted, nrejected, nreserved
        self.fallbacks += 1

    def out_room(self, int64_t nstarted, int64_t nunits, int64_t nrejected, int64_t nreserved):
        """(room in the output arrays for the slow path's decisions)"""
        self.o_started.room(nstarted)
        self.o_offsets.room(nstarted + 1)
        self.o_units.room(nunits)
        self.o_rejected.room(nrejected)
        self.o_reserved.room(nreserved)
        self.o_reserved_at.room(nreserved)

    def call(self, int64_t now, Py_ssize_t nf=0, Py_ssize_t ns=0, Py_ssize_t f0=0, Py_ssize_t s0=0, bint quick=False):
        """One call (see :meth:`pbf.engine_batch.BatchBuffers.call`); returns the jobs started."""
        if nf < 0 or ns < 0 or f0 < 0 or s0 < 0:
            raise ProtocolError(f"counts and offsets must be >= 0, got nf={nf}, ns={ns}, f0={f0}, s0={s0}")
        if f0 + nf > min(self.fid.n, self.ft.n):
            raise ProtocolError(f"finishes {f0}..{f0 + nf - 1} are past the finish columns' "
                                f"{min(self.fid.n, self.ft.n)} values")
        if s0 + ns > min(self.sid.n, self.st.n, self.su.n, self.sr.n,
                         self.srun.n if self.srun is not None else ns + s0,
                         self.suser.n if self.suser is not None else ns + s0):
            raise ProtocolError(f"submissions {s0}..{s0 + ns - 1} are past the submission columns' values")
        self.lock.enter()
        try:
            if self.fast and self.compiled(
                    now, nf, ns, self.fid.p + f0, self.ft.p + f0, self.sid.p + s0, self.st.p + s0, self.su.p + s0,
                    self.sr.p + s0, self.srun.p + s0 if self.srun is not None else NULL,
                    self.suser.p + s0 if self.suser is not None else NULL, quick):
                return self.nstarted
            return self._slow_call(now, nf, ns, f0, s0, quick)
        finally:
            self.lock.leave()

    def arrays(self, int64_t now, tuple columns, bint quick):
        """:meth:`pbf.Engine.advance_arrays`' own columns (finish ids and times, submission ids, times,
        units, requested, run, user; the last two None when not given) through the compiled call:
        its decisions (a :class:`pbf.BatchDecisions`), or None when the call must go the long way
        (nothing changed): a column that is not a 1-d C-contiguous int64 buffer, columns of unequal
        lengths, or a call the compiled path does not take."""
        cdef Py_buffer views[8]
        cdef const int64_t* p[8]
        cdef Py_ssize_t lens[8]
        cdef int k, got = 0
        cdef object col
        if not self.fast or len(columns) != 8:
            return None
        try:
            for k in range(8):
                col = columns[k]
                p[k] = NULL
                lens[k] = -1
                if col is None:
                    if k < 6:
                        return None
                    continue
                if PyObject_GetBuffer(col, &views[got], PyBUF_ND | PyBUF_FORMAT) < 0:
                    return None                 # (not a buffer: the long way says what is wrong)
                got += 1
                if not one_int64_column(&views[got - 1]):
                    return None
                p[k] = <const int64_t*>views[got - 1].buf
                lens[k] = views[got - 1].shape[0]
            if (lens[1] != lens[0] or lens[3] != lens[2] or lens[4] != lens[2] or lens[5] != lens[2]
                    or (lens[6] >= 0 and lens[6] != lens[2]) or (lens[7] >= 0 and lens[7] != lens[2])):
                return None
            self.lock.enter()
            try:
                if not self.compiled(now, lens[0], lens[2], p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], quick):
                    return None
                return self.decisions_of_call()
            finally:
                self.lock.leave()
        except (TypeError, ValueError, BufferError):
            return None
        finally:
            for k in range(got):
                PyBuffer_Release(&views[k])

    cdef bint compiled(self, int64_t now, int64_t nf, int64_t n, const int64_t* fid, const int64_t* fin_t,
                       const int64_t* sid, const int64_t* sub_t, const int64_t* sub_units, const int64_t* sub_req,
                       const int64_t* sub_run, const int64_t* sub_user, bint quick) except -1:
        # the call in full, or False (nothing changed) when it must go through advance_arrays
        cdef State* S = &self.core.s
        cdef object d = self.d
        cdef PyObject* p
        cdef object index = self.index, rejected = self.rejected, users = self.users, x
        cdef int64_t last, prev, t, i, j, k, m = 0, nrej = 0, top = -1, first = S.jobs.n
        cdef int64_t* rows
        cdef int64_t* dense
        cdef int64_t run_k, W = S.W, ran, u = 0
        cdef int8_t* reject = self.reject
        cdef int rc
        if self.closed or PyList_GET_SIZE(self.timed) or not d["_int_ids"] or not -MAX_TIME <= now <= MAX_TIME:
            return False
        x = d["_now"]
        last = -MAX_TIME if x is None else <int64_t>x
        if now < last or (quick and not self.every_call):
            return False
        # ---- the check (nothing changes): finishes
        rows = self.rows.room(nf)
        for i in range(nf):
            p = PyDict_GetItem(index, fid[i])
            if p == NULL:
                return False
            rows[i] = <int64_t><object>p
        if nf > 1 and has_duplicate(rows, nf, self.scratch.room(nf)):
            return False
        prev = last
        for i in range(nf):
            t = fin_t[i]
            if t > now or t < prev:
                return False
            prev = t
            j = rows[i]
            if S.jobs.state[j] != JS_RUNNING or t < S.jobs.start[j]:
                return False
        # ---- submissions
        if n:
            if n > 1 and has_duplicate(sid, n, self.scratch.room(n)):
                return False
            if n > self.reject_cap:
                self.reject_arr = np.zeros(max(n, 2 * self.reject_cap), dtype=np.int8)
                self._reject_view()
            reject = self.reject
            dense = self.dense.room(n)
            if sub_user == NULL:
                p = PyDict_GetItem(users, -1)
                if p == NULL:
                    return False
                u = <int64_t><object>p
            prev = last
            for i in range(n):
                x = sid[i]
                if PyDict_Contains(index, x) or (rejected and PyDict_Contains(rejected, x)):
                    return False
                t = sub_t[i]
                run_k = sub_run[i] if sub_run != NULL else -1
                if (t > now or t < prev or sub_units[i] <= 0 or sub_req[i] > MAX_TIME or run_k < -1
                        or run_k > MAX_TIME):
                    return False
                prev = t
                if sub_user != NULL:
                    p = PyDict_GetItem(users, sub_user[i])
                    if p == NULL:
                        return False
                    u = <int64_t><object>p
                dense[i] = u
                reject[i] = 1 if sub_units[i] > S.units else 2 if sub_req[i] <= 0 else 0
                if reject[i]:
                    nrej += 1
                else:
                    m += 1
                    if u > top:
                        top = u
        # ---- the new jobs' rows (all room first: a failure leaves the table as it was)
        if m:
            if (jobs_reserve(&S.jobs, first + m) != RC_OK or users_ensure(&S.users, top + 1) != RC_OK
                    or (S.testing.record_units and grow(<void**>&S.jobs.bits, &S.jobs.bits_cap, (first + m) * W,
                                                        sizeof(uint64_t)) != RC_OK)):
                raise MemoryError("pbf core: out of memory (adding jobs)")
            j = first
            for i in range(n):
                if reject[i]:
                    continue
                S.jobs.submit[j] = sub_t[i]
                S.jobs.units[j] = sub_units[i]
                S.jobs.est[j] = sub_req[i]
                S.jobs.run[j] = sub_run[i] if sub_run != NULL else -1
                S.jobs.req[j] = sub_req[i]
                S.jobs.user[j] = dense[i]
                S.jobs.part[j] = 1.0
                S.jobs.qos[j] = 0.0
                j += 1
            jobs_clear(&S.jobs, first, m)
            if S.testing.record_units:
                memset(S.jobs.bits + first * W, 0, m * W * sizeof(uint64_t))
            if grow_job_tables(S) != RC_OK:
                raise MemoryError("pbf core: out of memory (adding jobs)")
            S.jobs.n = first + m
            # the engine's own records of the new jobs
            ids, jobs = self.ids, self.jobs
            j = first
            for i in range(n):
                if not reject[i]:
                    x = sid[i]
                    PyDict_SetItem(index, x, j)
                    PyList_Append(ids, x)
                    PyList_Append(jobs, None)
                    j += 1
        # ---- the events in time order (finishes first at a tie)
        i, k, j = 0, 0, first
        while k < n and reject[k]:
            k += 1
        while i < nf or k < n:
            if i < nf and (k >= n or fin_t[i] <= sub_t[k]):
                job_finish(S, rows[i], fin_t[i])
                i += 1
            else:
                rc = job_submit(S, j)
                if rc != RC_OK:
                    raise_status(rc, "submit")
                j += 1
                k += 1
                while k < n and reject[k]:
                    k += 1
        # ---- the pass
        if self.every_call:
            ran = 1 if quick else 2
        else:                       # the interval trigger chooses it
            x = self.timing.next_full
            ran = 0 if S.queue.n == 0 else 2 if x is None or now >= <int64_t>x else 1 if nf > 0 or n > 0 else 0
        self.nstarted = self.nreserved = 0
        self.nrejected = nrej
        if ran:
            S.replay.now = now
            if S.queue.n >= NOGIL_QUEUE:
                with nogil:
                    rc = quick_pass(S, now) if ran == 1 else full_pass(S, now)
            else:
                rc = quick_pass(S, now) if ran == 1 else full_pass(S, now)
            if rc != RC_OK:
                raise_status(rc, "a pass")
            if ran == 2 and not self.every_call:
                self.timing.full_done(now, S.last.charged_us)
            self.decisions(S)
        # ---- the engine's counts and times
        if nrej:
            self.o_rejected.room(nrej)
            self.engine._batch_rejected(self.reject_arr[:n], np.array(<int64_t[:n]><int64_t*>sid),
                                        np.array(<int64_t[:n]><int64_t*>sub_units),
                                        np.array(<int64_t[:n]><int64_t*>sub_req), self.o_rejected.array)
        self.submitted += n
        self.nrejected_all += nrej
        self.finished += nf
        if ran:
            self.passes += 1
            self.nstarted_all += self.nstarted
        x = now
        d["_now"] = x
        if n or nf:
            t = sub_t[n - 1] if n else fin_t[nf - 1]
            if nf and fin_t[nf - 1] > t:
                t = fin_t[nf - 1]
            d["_last_event"] = x if t == now else t         # (one int object when the same)
        return True

    cdef decisions(self, State* S):
        # the pass's starts (host ids, unit indices) and, when asked, its reservations
        cdef int64_t k, r, w, total = 0, ns = S.decided.nstarted, W = S.W
        cdef uint64_t word
        cdef object ids = self.ids
        cdef int64_t* started = self.o_started.room(ns)
        cdef int64_t* off = self.o_offsets.room(ns + 1)
        cdef int64_t* u
        off[0] = 0
        for k in range(ns):
            r = S.jobs.row[S.decided.started[k]]
            for w in range(S.nodes.row_lo[r], S.nodes.row_hi[r] + 1):     # (its words: zero outside)
                total += __builtin_popcountll(S.nodes.rows[r * W + w])
            off[k + 1] = total
            started[k] = <int64_t><object>PyList_GET_ITEM(ids, S.decided.started[k])
        u = self.o_units.room(total)
        total = 0
        for k in range(ns):
            r = S.jobs.row[S.decided.started[k]]
            for w in range(S.nodes.row_lo[r], S.nodes.row_hi[r] + 1):
                word = S.nodes.rows[r * W + w]
                while word:
                    u[total] = w * 64 + __builtin_ctzll(word)
                    total += 1
                    word &= word - 1
        self.nstarted = ns
        if self.reservations and S.decided.nreserved:
            ns = S.decided.nreserved
            started = self.o_reserved.room(ns)
            u = self.o_reserved_at.room(ns)
            for k in range(ns):
                started[k] = <int64_t><object>PyList_GET_ITEM(ids, S.decided.reserved[k])
                u[k] = S.jobs.resv[S.decided.reserved[k]]
            self.nreserved = ns


def main_pass_at(Core core not None, int64_t now, int64_t depth):
    """Slurm's main scheduler at ``now`` on ``core`` (passes.pxd main_pass: jobs in priority order
    while they fit, stopping at the first that does not, after ``depth`` jobs (-1: no limit)), taking
    no simulated time: the slurm-sim clock's main pass in :class:`pbf.Engine`. Returns the indices of
    the jobs it started."""
    cdef State* S = &core.s
    cdef int64_t cost = 0
    cdef int rc
    S.replay.now = now
    with nogil:
        rc = main_pass(S, now * 1000000, depth, INF, 0, &cost)
    if rc != RC_OK:
        raise_status(rc, "a pass")
    return int64_array(S.decided.started, S.decided.nstarted)
