"""The compiled bitmap kernels agree with bitarray.util on every size, and reject bad arguments."""
import numpy as np
import pytest
from bitarray import bitarray
from bitarray.util import any_and, count_and, urandom

from pbf import bitmap
from pbf.errors import ConfigError

SIZES = [0, 1, 63, 64, 65, 1000, 100_000]


def _pair(n, seed):
    rng = np.random.default_rng(seed)
    a = bitarray((rng.random(n) < 0.5).tolist(), endian="little") if n else bitarray(endian="little")
    b = bitarray((rng.random(n) < 0.3).tolist(), endian="little") if n else bitarray(endian="little")
    return a, b


@pytest.mark.parametrize("n", SIZES)
def test_bitmap_operations_match_bitarray(n):
    a, b = _pair(n, n)
    wa, wb = bitmap.from_bitarray(a), bitmap.from_bitarray(b)
    assert len(wa) == bitmap.n_words(n)
    assert bitmap.popcount(wa) == a.count()
    assert bitmap.count_and(wa, wb) == count_and(a, b)
    assert bitmap.any_common(wa, wb) == (any_and(a, b) if n else False)
    assert bitmap.to_bitarray(bitmap.and_(wa, wb), n) == (a & b)
    assert bitmap.to_bitarray(bitmap.andnot(wa, wb), n) == (a & ~b)
    assert bitmap.to_bitarray(bitmap.or_(wa, wb), n) == (a | b)


@pytest.mark.parametrize("n", SIZES)
def test_first_fit_takes_lowest_set_bits(n):
    a, _ = _pair(n, n + 1)
    wa = bitmap.from_bitarray(a)
    ones = [i for i, bit in enumerate(a) if bit]
    for k in sorted({0, min(1, len(ones)), len(ones) // 2, len(ones)}):
        chosen = bitmap.first_fit(wa, k)
        expected = bitarray(n, endian="little")
        expected.setall(0)
        for i in ones[:k]:
            expected[i] = 1
        assert bitmap.to_bitarray(chosen, n) == expected
    assert bitmap.first_fit(wa, len(ones) + 1) is None


def test_full_keeps_padding_clear():
    for n in (1, 63, 64, 65, 130):
        assert bitmap.popcount(bitmap.full(n)) == n


def test_any_common_only_when_overlapping():
    a = bitmap.empty(200)
    b = bitmap.empty(200)
    a[3] = np.uint64(1)
    assert not bitmap.any_common(a, b)
    b[3] = np.uint64(3)
    assert bitmap.any_common(a, b)


def test_out_may_alias_input():
    a, b = _pair(500, 7)
    wa, wb = bitmap.from_bitarray(a), bitmap.from_bitarray(b)
    bitmap.andnot(wa, wb, out=wa)
    assert bitmap.to_bitarray(wa, 500) == (a & ~b)


@pytest.mark.parametrize("bad", [[1, 2], np.zeros(2, dtype=np.int64), np.zeros((2, 2), dtype=np.uint64), 3])
def test_wrong_types_are_type_errors(bad):
    with pytest.raises(TypeError, match="numpy uint64 array"):
        bitmap.popcount(bad)


def test_wrong_sizes_are_value_errors():
    with pytest.raises(ConfigError, match=r"same number of words: a has 2, b has 3"):
        bitmap.count_and(np.zeros(2, np.uint64), np.zeros(3, np.uint64))
    with pytest.raises(ValueError, match="out has 1"):
        bitmap.and_(np.zeros(2, np.uint64), np.zeros(2, np.uint64), out=np.zeros(1, np.uint64))
    with pytest.raises(ConfigError, match="k must be >= 0"):
        bitmap.first_fit(np.zeros(2, np.uint64), -1)
    with pytest.raises(ConfigError, match="C-contiguous"):
        bitmap.popcount(np.zeros(4, np.uint64)[::2])
    with pytest.raises(ConfigError, match="writable"):
        ro = np.zeros(2, np.uint64)
        ro.flags.writeable = False
        bitmap.and_(np.zeros(2, np.uint64), np.zeros(2, np.uint64), out=ro)


def test_read_only_inputs_are_accepted():
    a = bitmap.from_bitarray(urandom(640, endian="little"))
    a.flags.writeable = False
    assert bitmap.popcount(a) == bitmap.to_bitarray(a, 640).count()


@pytest.mark.parametrize("n", [1, 63, 64, 65, 128, 129, 1000, 9128])
def test_unit_choice_kernels_match_bitarray(n):
    """The kernels the scheduler chooses units with (words.pxd), against plain bitarray loops."""
    from pbf import _bitmap
    rng = np.random.default_rng(n)
    for _ in range(20):
        a = bitarray((rng.random(n) < rng.random()).tolist(), endian="little")
        free = bitarray((rng.random(n) < 0.5).tolist(), endian="little")
        ones = [i for i, bit in enumerate(a) if bit]
        need = int(rng.integers(0, len(ones) + 2))
        # take_lowest: the `need` lowest set bits move from src to dst
        src, dst = bitmap.from_bitarray(a), bitmap.empty(n)
        left = _bitmap.take_lowest(src, dst, need)
        moved = ones[:need]
        assert left == max(0, need - len(ones))
        assert [i for i, b in enumerate(bitmap.to_bitarray(dst, n)) if b] == moved
        assert bitmap.to_bitarray(src, n).count() == len(ones) - len(moved)
        # take_lowest_busy (called with need >= 1): only the bits of src busy in `free` count
        busy = [i for i in ones if not free[i]]
        src, dst = bitmap.from_bitarray(a), bitmap.empty(n)
        need = max(1, need)
        left = _bitmap.take_lowest_busy(src, dst, need, bitmap.from_bitarray(free))
        assert left == max(0, need - len(busy))
        assert [i for i, b in enumerate(bitmap.to_bitarray(dst, n)) if b] == busy[:need]
        # or and copy
        b = bitarray((rng.random(n) < 0.3).tolist(), endian="little")
        out = bitmap.empty(n)
        _bitmap.or_into(out, bitmap.from_bitarray(a), bitmap.from_bitarray(b))
        assert bitmap.to_bitarray(out, n) == (a | b)
        _bitmap.copy_into(out, bitmap.from_bitarray(b))
        assert bitmap.to_bitarray(out, n) == b
