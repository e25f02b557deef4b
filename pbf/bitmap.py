"""Unit bitmaps: little-endian uint64 words, bit = free unit, padding bits kept 0.

The operations run compiled and without the GIL; this module checks arguments (with the GIL) and
converts to and from :class:`bitarray.bitarray` so that ``bitarray.util`` can serve as a reference.
"""
from __future__ import annotations

import numpy as np
from bitarray import bitarray

from . import _bitmap
from .errors import ConfigError

__all__ = ["n_words", "empty", "full", "from_bitarray", "to_bitarray", "popcount", "count_and",
           "any_common", "and_", "andnot", "or_", "first_fit"]


def n_words(nbits: int) -> int:
    """Number of 64-bit words holding ``nbits`` bits."""
    if nbits < 0:
        raise ConfigError(f"nbits must be >= 0, got {nbits}")
    return (nbits + 63) // 64


def empty(nbits: int) -> np.ndarray:
    """A bitmap of ``nbits`` bits, all clear."""
    return np.zeros(n_words(nbits), dtype=np.uint64)


def full(nbits: int) -> np.ndarray:
    """A bitmap of ``nbits`` bits, all set (padding bits clear)."""
    words = np.full(n_words(nbits), np.uint64(0xFFFFFFFFFFFFFFFF), dtype=np.uint64)
    if nbits % 64:
        words[-1] = np.uint64((1 << (nbits % 64)) - 1)
    return words


def from_bitarray(bits: bitarray) -> np.ndarray:
    """Words of a bitarray (copied; the bitarray may have any length and endianness)."""
    if not isinstance(bits, bitarray):
        raise TypeError(f"expected a bitarray, got {type(bits).__name__}")
    padded = bitarray(bits, endian="little")
    padded.extend([0] * (-len(padded) % 64))
    return np.frombuffer(padded.tobytes(), dtype="<u8").astype(np.uint64)


def to_bitarray(words: np.ndarray, nbits: int) -> bitarray:
    """A little-endian bitarray of the first ``nbits`` bits of ``words``."""
    words = _check(words, "words")
    if nbits > 64 * len(words) or nbits < 0:
        raise ConfigError(f"nbits={nbits} does not fit in {len(words)} words")
    bits = bitarray(endian="little")
    bits.frombytes(words.astype("<u8").tobytes())
    return bits[:nbits]


def _check(arr, name):
    if not isinstance(arr, np.ndarray):
        raise TypeError(f"{name} must be a numpy uint64 array, got {type(arr).__name__}")
    if arr.dtype != np.uint64 or arr.ndim != 1:
        raise TypeError(f"{name} must be a 1-D numpy uint64 array, got dtype {arr.dtype} with {arr.ndim} dims")
    if not arr.flags.c_contiguous:
        raise ConfigError(f"{name} must be C-contiguous")
    return arr


def _same(*named):
    arrays = [_check(a, n) for n, a in named]
    sizes = {len(a) for a in arrays}
    if len(sizes) > 1:
        desc = ", ".join(f"{n} has {len(a)}" for (n, _), a in zip(named, arrays))
        raise ConfigError(f"bitmaps must have the same number of words: {desc}")
    return arrays


def _writable(out):
    if not out.flags.writeable:
        raise ConfigError("out must be writable")


def popcount(a: np.ndarray) -> int:
    """Number of set bits."""
    return _bitmap.popcount(_check(a, "a"))


def count_and(a: np.ndarray, b: np.ndarray) -> int:
    """Number of bits set in both ``a`` and ``b`` (no temporary)."""
    a, b = _same(("a", a), ("b", b))
    return _bitmap.count_and(a, b)


def any_common(a: np.ndarray, b: np.ndarray) -> bool:
    """True when ``a`` and ``b`` share a set bit (stops at the first word that does)."""
    a, b = _same(("a", a), ("b", b))
    return _bitmap.any_common(a, b)


def and_(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a & b``, into ``out`` when given (may alias ``a`` or ``b``)."""
    a, b = _same(("a", a), ("b", b))
    out = np.empty_like(a) if out is None else _same(("a", a), ("out", out))[1]
    _writable(out)
    _bitmap.and_into(out, a, b)
    return out


def andnot(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a & ~b`` (``a`` without the bits of ``b``), into ``out`` when given."""
    a, b = _same(("a", a), ("b", b))
    out = np.empty_like(a) if out is None else _same(("a", a), ("out", out))[1]
    _writable(out)
    _bitmap.andnot_into(out, a, b)
    return out


def or_(a: np.ndarray, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``a | b``, into ``out`` when given."""
    a, b = _same(("a", a), ("b", b))
    out = np.empty_like(a) if out is None else _same(("a", a), ("out", out))[1]
    _writable(out)
    _bitmap.or_into(out, a, b)
    return out


def first_fit(a: np.ndarray, k: int) -> np.ndarray | None:
    """The ``k`` lowest set bits of ``a`` as a bitmap, or None when ``a`` has fewer than ``k``."""
    a = _check(a, "a")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        raise TypeError(f"k must be an int, got {type(k).__name__}")
    if k < 0:
        raise ConfigError(f"k must be >= 0, got {k}")
    chosen = np.zeros_like(a)
    got = _bitmap.first_fit(a, int(k), chosen)
    return chosen if got == k else None
