# A node's countable generic resources (GPUs first, then every other GRES kind: nvme, mps, shard...)
# as one 64-bit word (header only). Each kind is a lane of `w` bits; a lane's top bit is its guard,
# never set in a count, so adding, subtracting, "every count at least" and "the lesser, count by
# count" are a few word operations whatever the number of kinds: the planners' loops carry one word
# where they would carry a vector (pbf/gres.py packs the lanes; with one kind, GPUs, the word is a
# plain count and hi is 0).

from libc.stdint cimport uint64_t, int64_t


cdef inline bint cnt_fits(int64_t have, int64_t ask, uint64_t hi) noexcept nogil:
    # every count of `ask` at most `have`'s (hi: the lanes' guard bits; 0: one plain count). Setting a
    # lane's guard bit before the subtraction keeps a borrow inside the lane; the guard survives
    # exactly where have >= ask.
    if hi == 0:
        return ask <= have
    return (((<uint64_t>have | hi) - <uint64_t>ask) & hi) == hi


cdef inline int64_t cnt_min(int64_t a, int64_t b, uint64_t hi, int64_t w) noexcept nogil:
    # the lesser of a and b, lane by lane (w: the lanes' width)
    cdef uint64_t ge, mask
    if hi == 0:
        return b if b < a else a
    ge = ((<uint64_t>a | hi) - <uint64_t>b) & hi        # the guard bits of the lanes where a >= b ...
    mask = (ge << 1) - (ge >> (w - 1))                  # ... widened to their whole lanes
    return <int64_t>((<uint64_t>a & ~mask) | (<uint64_t>b & mask))
