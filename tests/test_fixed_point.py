"""The exact fixed-point sums (dpstats._kernels.fixed_point): the two-pass sums (one addition of C, an integer sum
of the bit patterns) are the integers Σ rint(x/h), the same as the multiply-round-sum path, on every kind of value
that can decide a rounding or a bounds check."""

from __future__ import annotations

import numpy as np
import pytest

from dpstats._kernels import fixed_point
from dpstats._kernels.fixed_point import FixedPoint

RNG = np.random.default_rng(7)


def _reference(x: np.ndarray, grid: FixedPoint, clip: bool) -> list[int]:
    """Σ rint(x/h) per column in Python integers (x clipped first with ``clip``)."""
    if clip:
        x = np.clip(x, grid.lo, grid.hi)
    q = np.rint(x * np.ldexp(1.0, -grid.exponent))
    return [sum(int(v) for v in q[:, j]) for j in range(q.shape[1])]


def _values(kind: str, n: int, lo: float, hi: float) -> np.ndarray:
    if kind == "uniform":
        return RNG.uniform(lo, hi, n)
    if kind == "ends":  # the bounds themselves (binary data), and zeros
        return RNG.choice([lo, hi, 0.0 if lo <= 0 <= hi else lo], n)
    if kind == "ties":  # exactly half-way between grid points: rint rounds to even
        h = 2.0 ** int(FixedPoint.of(np.array([lo]), np.array([hi]), False).exponent[0])
        q = RNG.integers(int(lo / h), int(hi / h), n)
        return np.clip((q + 0.5) * h, lo, hi)
    if kind == "tiny":  # subnormal and signed zeros
        return (
            RNG.choice([0.0, -0.0, 5e-324, 1e-310, 2.0**-1022], n)
            if lo <= -1e-300 or lo == 0
            else RNG.uniform(lo, hi, n)
        )
    raise AssertionError(kind)


@pytest.mark.parametrize("lo,hi", [(0.0, 1.0), (-3.0, 7.5), (-5.0, 0.0), (0.0, 2.0**600), (-(2.0**-40), 2.0**-41)])
@pytest.mark.parametrize("kind", ["uniform", "ends", "ties", "tiny"])
@pytest.mark.parametrize("clip", [False, True])
def test_two_pass_sums_are_the_rounded_sums(lo, hi, kind, clip, monkeypatch):
    grid = FixedPoint.of(np.array([lo]), np.array([hi]), False)
    monkeypatch.setattr(fixed_point, "_ADDED_BLOCK_VALUES", 64)  # many blocks, and a short last one
    for n in (1, 63, 1000):
        x = _values(kind, n, lo, hi)
        if kind == "tiny":
            x = np.clip(x, lo, hi) if not clip else x
        found = grid.chunk_sums(x.reshape(-1, 1), clip)
        assert [int(v) for v in found.sums] == _reference(x.reshape(-1, 1), grid, clip)


def test_two_pass_sums_per_column_with_mixed_scales():
    lo, hi = np.array([-1.0, 0.0, -1e-5, 0.0]), np.array([1.0, 100.0, 1e-5, 3.0])
    grid = FixedPoint.of(lo, hi, False)
    x = RNG.uniform(lo, hi, (5000, 4))
    found = grid.chunk_sums(x, False)
    assert [int(v) for v in found.sums] == _reference(x, grid, False)


@pytest.mark.parametrize("lo", [0.0, -1.0])
@pytest.mark.parametrize("bad", ["below", "above", np.inf, -np.inf, np.nan])
def test_every_value_outside_the_bounds_is_found(lo, bad):
    """One bad value (the next double below the lower bound, 5e-324 below 0; above the upper bound; ±inf; NaN) in
    the last of many blocks, with the one-comparison check of a lower bound of +0 and the general one; −0 and the
    bounds themselves are inside."""
    grid = FixedPoint.of(np.array([lo]), np.array([1.0]), False)
    x = np.full((300_000, 1), 0.5)
    x[::7] = -0.0
    x[::11] = 1.0
    x[::13] = lo
    assert grid.chunk_sums(x, False).sums is not None
    x[-1] = {"below": np.nextafter(lo, -np.inf), "above": np.nextafter(1.0, np.inf)}.get(bad, bad)
    found = grid.chunk_sums(x, False)
    assert found.sums is None and found.outside + found.nonfinite >= 1


def test_two_pass_path_is_taken():
    """The two-pass sums are what chunk_sums runs for sums of float64 records (the slow path only for squares,
    other dtypes and astronomically large bounds)."""
    grid = FixedPoint.of(np.array([0.0]), np.array([1.0]), False)
    calls = []
    original = FixedPoint._chunk_sums_added

    def spy(self, records, clip):
        calls.append(records.shape)
        return original(self, records, clip)

    mp = pytest.MonkeyPatch()
    mp.setattr(FixedPoint, "_chunk_sums_added", spy)
    try:
        grid.chunk_sums(np.zeros((10, 1)), False)
        FixedPoint.of(np.array([0.0]), np.array([1.0]), True).chunk_sums(np.zeros((10, 1)), False)
    finally:
        mp.undo()
    assert calls == [(10, 1)]
