"""Bitmap operations (pbf.bitmap), 64 to 100,000 units."""
import numpy as np
import pytest
from bitarray.util import count_and, urandom

from pbf import bitmap

SIZES = [64, 1_024, 9_128, 100_000]


def _pair(n):
    a, b = urandom(n, endian="little"), urandom(n, endian="little")
    return a, b, bitmap.from_bitarray(a), bitmap.from_bitarray(b)


@pytest.mark.benchmark(group="bitmap")
@pytest.mark.parametrize("n", SIZES)
def test_count_and(benchmark, n):
    a, b, wa, wb = _pair(n)
    assert benchmark(bitmap.count_and, wa, wb) == count_and(a, b)


@pytest.mark.benchmark(group="bitmap")
@pytest.mark.parametrize("n", SIZES)
def test_popcount(benchmark, n):
    a, _, wa, _ = _pair(n)
    assert benchmark(bitmap.popcount, wa) == a.count()


@pytest.mark.benchmark(group="bitmap")
@pytest.mark.parametrize("n", SIZES)
def test_andnot_into(benchmark, n):
    a, b, wa, wb = _pair(n)
    out = np.empty_like(wa)
    benchmark(bitmap.andnot, wa, wb, out)
    assert bitmap.to_bitarray(out, n) == a & ~b


@pytest.mark.benchmark(group="bitmap")
@pytest.mark.parametrize("n", SIZES)
def test_first_fit(benchmark, n):
    a, _, wa, _ = _pair(n)
    k = a.count() // 2
    chosen = benchmark(bitmap.first_fit, wa, k)
    assert bitmap.popcount(chosen) == k
