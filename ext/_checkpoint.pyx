"""Checkpoints of a core: what applying events (submits, finishes, outages, Python keys) can change
before the next pass, saved so that an embedding-API call failing half-way can be undone.

What is saved is declared once, as tables of State's fields (offsets and sizes taken from the
structs): :func:`checkpoint` copies them out and :func:`rollback` copies them back, so the two
cannot drift apart. Small: a checkpoint grows with the running and pending jobs, the users and the
units, not with every job ever added. Internal: :class:`pbf.Engine` uses it.
"""
import numpy as np

from libc.stdint cimport uint64_t, int64_t
from libc.string cimport memcpy

from state cimport State
from columns cimport column_at, gather, scatter
from pbf._core cimport Core, int64_array

from pbf._core import JOB_COLUMNS

__all__ = ["Checkpoint", "checkpoint", "rollback"]

cdef State _probe       # (only its fields' addresses are read)


cdef Py_ssize_t _at(void* field):
    return <char*>field - <char*>&_probe


# the counts and scalars events change: (offset in State, bytes)
_FIELDS = (
    (_at(&_probe.jobs.n), sizeof(_probe.jobs.n)), (_at(&_probe.users.n), sizeof(_probe.users.n)),
    (_at(&_probe.users.total), sizeof(_probe.users.total)),
    (_at(&_probe.users.last_calc), sizeof(_probe.users.last_calc)),
    (_at(&_probe.queue.n), sizeof(_probe.queue.n)), (_at(&_probe.queue.nseq), sizeof(_probe.queue.nseq)),
    (_at(&_probe.nodes.nrun), sizeof(_probe.nodes.nrun)), (_at(&_probe.nodes.nspare), sizeof(_probe.nodes.nspare)),
    (_at(&_probe.nodes.nfree), sizeof(_probe.nodes.nfree)), (_at(&_probe.nodes.version), sizeof(_probe.nodes.version)),
    (_at(&_probe.nodes.ndown), sizeof(_probe.nodes.ndown)),
    (_at(&_probe.nodes.held_down), sizeof(_probe.nodes.held_down)),
    (_at(&_probe.replay.now), sizeof(_probe.replay.now)),
    (_at(&_probe.replay.nfinished), sizeof(_probe.replay.nfinished)),
    (_at(&_probe.policy.keys_dirty), sizeof(_probe.policy.keys_dirty)),
    (_at(&_probe.outages.killed), sizeof(_probe.outages.killed)),
    (_at(&_probe.outages.requeued), sizeof(_probe.outages.requeued)),
    (_at(&_probe.outages.lost), sizeof(_probe.outages.lost)),
    (_at(&_probe.outages.units_lost), sizeof(_probe.outages.units_lost)),
)

# the arrays whose first items events change: (offset of the array's pointer in State, offset of
# the int64 count of its items (-1: one item), bytes an item); an array not allocated is skipped
_ARRAYS = (
    (_at(&_probe.nodes.free), _at(&_probe.W), sizeof(_probe.nodes.free[0])),
    (_at(&_probe.nodes.down), _at(&_probe.W), sizeof(_probe.nodes.down[0])),
    (_at(&_probe.nodes.running), _at(&_probe.nodes.nrun), sizeof(_probe.nodes.running[0])),
    (_at(&_probe.nodes.by_end), _at(&_probe.nodes.nrun), sizeof(_probe.nodes.by_end[0])),
    (_at(&_probe.nodes.spare), _at(&_probe.nodes.nspare), sizeof(_probe.nodes.spare[0])),
    (_at(&_probe.queue.entries), _at(&_probe.queue.n), sizeof(_probe.queue.entries[0])),
    (_at(&_probe.users.hist), _at(&_probe.users.n), sizeof(_probe.users.hist[0])),
    (_at(&_probe.users.usage), _at(&_probe.users.n), sizeof(_probe.users.usage[0])),
    (_at(&_probe.users.raw), _at(&_probe.users.n), sizeof(_probe.users.raw[0])),
    (_at(&_probe.users.fsf), _at(&_probe.users.n), sizeof(_probe.users.fsf[0])),
    (_at(&_probe.policy.reg), -1, sizeof(_probe.policy.reg[0])),
    (_at(&_probe.nm.free_mem), _at(&_probe.nm.nn), sizeof(_probe.nm.free_mem[0])),
    (_at(&_probe.nm.free_gpu), _at(&_probe.nm.nn), sizeof(_probe.nm.free_gpu[0])),
)

# the job columns (pbf._core.JOB_COLUMNS) a finish or a failure changes, saved for the running
# jobs (whose user lists a finish relinks too), and those Python keys change, for the pending ones
_RUNNING_COLUMNS = ("state", "end", "row", "runpos", "unext", "uprev", "acc", "start", "est", "ncorr", "how",
                    "resv", "requeues", "lost")
_PENDING_COLUMNS = ("key", "bfkey")
# a down unit's return time, saved for the units down
_UNTIL = (_at(&_probe.nodes.until), sizeof(_probe.nodes.until[0]))


cdef class Checkpoint:
    """What :func:`checkpoint` saved of a core (opaque: give it to :func:`rollback`)."""
    cdef bytes fields                              # _FIELDS, one after the other
    cdef list arrays                               # per _ARRAYS entry: its items, or None
    cdef object running, pending, down             # the rows the row columns were saved for
    cdef list running_cols, pending_cols           # per column: its items at those rows
    cdef object until


cdef object _take(State* S, Py_ssize_t at, size_t size, const int64_t[::1] rows):
    # the items of the column at `at` in the given rows, as bytes
    out = np.empty(rows.shape[0] * size, dtype=np.uint8)
    cdef unsigned char[::1] b = out
    if rows.shape[0]:
        gather(column_at(S, at), &rows[0], rows.shape[0], size, <char*>&b[0])
    return out


cdef void _put(State* S, Py_ssize_t at, size_t size, const int64_t[::1] rows, const unsigned char[::1] data):
    # _take undone
    if rows.shape[0]:
        scatter(column_at(S, at), &rows[0], rows.shape[0], size, <const char*>&data[0])


def checkpoint(Core core not None) -> Checkpoint:
    """Save what applying events can change before the next pass, so that :func:`rollback` can undo
    a call that fails half-way."""
    cdef State* S = &core.s
    cdef Checkpoint cp = Checkpoint()
    cdef char* base = <char*>S
    cdef char* p
    cdef int64_t n
    cp.fields = b"".join([base[at:at + size] for at, size in _FIELDS])
    cp.arrays = []
    for at, count_at, size in _ARRAYS:
        p = column_at(S, at)
        n = 1 if count_at < 0 else (<int64_t*>(base + <Py_ssize_t>count_at))[0]
        cp.arrays.append(None if p == NULL else (p[:n * size] if n else b""))
    cp.running = int64_array(S.nodes.running, S.nodes.nrun)
    cp.pending = core.pending()
    words = np.array([S.nodes.down[w] for w in range(S.W)], dtype=np.uint64)
    cp.down = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")).astype(np.int64)
    cp.running_cols = [_take(S, JOB_COLUMNS[c][0], JOB_COLUMNS[c][1], cp.running) for c in _RUNNING_COLUMNS]
    cp.pending_cols = [_take(S, JOB_COLUMNS[c][0], JOB_COLUMNS[c][1], cp.pending) for c in _PENDING_COLUMNS]
    cp.until = _take(S, _UNTIL[0], _UNTIL[1], cp.down)
    return cp


def rollback(Core core not None, Checkpoint cp not None) -> None:
    """Undo everything done to ``core`` since ``cp`` was taken (no pass may have run since)."""
    cdef State* S = &core.s
    cdef char* base = <char*>S
    cdef const char* saved = cp.fields
    cdef const char* data
    cdef Py_ssize_t pos = 0
    for at, size in _FIELDS:                      # (the counts first: they size the arrays below)
        memcpy(base + <Py_ssize_t>at, saved + pos, size)
        pos += size
    S.resume_st.valid = False       # (resuming is only a shortcut: a fresh pass decides the same)
    S.ss.gb_n = -1                  # (Slurm's give-back lists: read again, not copied, at the next pass)
    S.ss.gb_version = -1
    for (at, count_at, size), items in zip(_ARRAYS, cp.arrays):
        if items is not None and len(items):
            data = items
            memcpy(column_at(S, at), data, len(items))
    for c, items in zip(_RUNNING_COLUMNS, cp.running_cols):
        _put(S, JOB_COLUMNS[c][0], JOB_COLUMNS[c][1], cp.running, items)
    for c, items in zip(_PENDING_COLUMNS, cp.pending_cols):
        _put(S, JOB_COLUMNS[c][0], JOB_COLUMNS[c][1], cp.pending, items)
    _put(S, _UNTIL[0], _UNTIL[1], cp.down, cp.until)
