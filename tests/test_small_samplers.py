"""The small-call path of the exact samplers (dpstats.noise._small) is the vectorised sampler, bit for bit.

A call for at most ``_small.SMALL`` draws runs the samplers of dpstats.noise.exact on Python lists. Its exactness
is that of the vectorised code (tests/test_exact_samplers.py) if both make the same uniform draws, with the same
bounds, in the same order, and decide the same from them. Each test runs the public sampler once with the small
path forced and once with the vectorised path forced, on two copies of the same source, and asserts the same
output and the same source state afterwards; :class:`Recorded` also logs every bound requested, and can force the
rare branches (the continuation of a Bernoulli(exp(−1)) run beyond round 12, probability 1/12!).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial

import numpy as np
import pytest

from dpstats.noise import _bernoulli, _small, exact
from dpstats.noise.exact import discrete_gaussian, discrete_laplace


class Recorded:
    """A source offering only ``integers(0, high[, size])``: each element drawn on its own from PCG64(seed), every
    bound logged in ``bounds``. With ``deep``, a draw below 12! is replaced by 0 when the underlying draw is a
    multiple of 4, so that Bernoulli(exp(−1)) runs often pass rounds 2..12 (the branch of probability 1/12!). The
    draws are then not uniform; both paths see the same ones, which is all an equivalence test needs."""

    def __init__(self, seed: int, deep: bool = False):
        self._rng = np.random.default_rng(seed)
        self.bounds: list[int] = []
        self.deep = deep

    def integers(self, low, high, size=None):
        assert low == 0
        if size is None and np.ndim(high) == 0:
            return self._one(int(high))
        shape = np.shape(high) if size is None else ((size,) if isinstance(size, int) else tuple(size))
        highs = [int(high)] * math.prod(shape) if np.ndim(high) == 0 else [int(h) for h in np.ravel(high)]
        return np.array([self._one(h) for h in highs], dtype=np.int64).reshape(shape)

    def _one(self, high: int) -> int:
        self.bounds.append(high)
        value = int(self._rng.integers(0, high))
        return 0 if self.deep and high == _bernoulli.E1_SPAN and value % 4 == 0 else value


def _both(call, make_source, monkeypatch):
    """``call(source)`` with the small path and with the vectorised path, each on a fresh source from
    ``make_source``; returns (result or exception type, source) for each."""
    runs = []
    for small in (10**9, -1):
        monkeypatch.setattr(_small, "SMALL", small)
        source = make_source()
        try:
            result = call(source)
        except OverflowError:
            result = OverflowError
        runs.append((result, source))
    return runs


def _assert_same(runs):
    (a, source_a), (b, source_b) = runs
    if a is OverflowError or b is OverflowError:
        assert a is b
    else:
        assert a.dtype == b.dtype == np.int64 and a.shape == b.shape and np.array_equal(a, b)
    if isinstance(source_a, Recorded):
        assert source_a.bounds == source_b.bounds
    else:
        assert source_a.bit_generator.state == source_b.bit_generator.state


LAPLACE = [(1, 1), (3, 2), (37, 10), (1000, 1), (5243, 1), (1, 1000), (2**50, 1), (2**62 + 3, 2**12)]
# σ² -> paths: way 1 (small σ), way 1 with way-2 tails (1.6e9: y_rational ~ 2.9σ), way 2 with way-3 tails (2**40),
# a denominator, the mean's σ² at n = 100, composition levels (2**60, 2**120)
GAUSSIAN = [(1, 25), (1369, 100), (100, 1), (16 * 10**8, 1), (2**40, 1), (10**12 + 1, 10**5), (32151987335011, 1)]
GAUSSIAN += [(2**60, 1), (2**120, 1)]
SIZES = [None, 0, 1, 2, 7, (2, 3), _small.SMALL]


@pytest.mark.parametrize("num,den", LAPLACE)
def test_laplace_small_path_is_the_vectorised_sampler(num, den, monkeypatch):
    for seed in range(40):
        size = SIZES[seed % len(SIZES)]
        _assert_same(
            _both(partial(discrete_laplace, num, den, size), partial(np.random.default_rng, seed), monkeypatch)
        )


@pytest.mark.parametrize("num,den", GAUSSIAN)
def test_gaussian_small_path_is_the_vectorised_sampler(num, den, monkeypatch):
    for seed in range(40):
        size = SIZES[seed % len(SIZES)]
        _assert_same(
            _both(partial(discrete_gaussian, num, den, size), partial(np.random.default_rng, seed), monkeypatch)
        )


def test_laplace_beyond_int64_overflows_in_both(monkeypatch):
    """t = 2**62 + 3 with s = 1: an attempt with V >= 2 exceeds int64 (the Python-int branch); both paths raise or
    return the same, and some seeds do raise."""
    outcomes = []
    for seed in range(30):
        runs = _both(partial(discrete_laplace, 2**62 + 3, 1, 3), partial(np.random.default_rng, seed), monkeypatch)
        _assert_same(runs)
        outcomes.append(runs[0][0] is OverflowError)
    assert any(outcomes) and not all(outcomes)


@pytest.mark.parametrize("way", ["factored", "exact"])
def test_forced_acceptance_ways(way, monkeypatch):
    """Ways 2 and 3 of the Gaussian acceptance forced for every proposal (as in test_exact_samplers), and the
    bounds logged."""
    init = exact._DirectGaussian.__init__

    def limited_init(self, s2):
        init(self, s2)
        self.y_rational = -1
        if way == "exact":
            self.y_factored = -1

    monkeypatch.setattr(exact._DirectGaussian, "__init__", limited_init)
    exact._direct.cache_clear()  # the small path keeps its samplers: build them again with the limits
    for num, den in [(1369, 100), (10**6, 1), (2**36, 7)]:
        for seed in range(15):
            size = SIZES[seed % len(SIZES)]
            runs = _both(partial(discrete_gaussian, num, den, size), partial(Recorded, seed), monkeypatch)
            _assert_same(runs)
            if way == "exact" and size and num == 2**36:
                assert 1 << 62 in runs[0][1].bounds  # Q beyond int64: drawn in 62-bit limbs
    exact._direct.cache_clear()


def test_forced_deep_exp_minus_one_runs(monkeypatch):
    """Bernoulli(exp(−1)) runs that pass rounds 2..12 continue at round 13 (a 1/12! branch), forced often."""
    seen = 0
    for seed in range(30):
        for call in (partial(discrete_laplace, 1000, 1, 5), partial(discrete_gaussian, 10**6, 3, 5)):
            runs = _both(call, partial(Recorded, seed, deep=True), monkeypatch)
            _assert_same(runs)
            seen += runs[0][1].bounds.count(13)  # round 13's Bernoulli(1/13)
    assert seen > 0


def test_small_path_is_used_for_a_few_draws_only(monkeypatch):
    """The dispatch: up to SMALL draws go through _small (spied), more through the vectorised code."""
    calls = []
    sample = _small.laplace_sample
    monkeypatch.setattr(_small, "laplace_sample", lambda *a, **k: calls.append(a[2]) or sample(*a, **k))
    rng = np.random.default_rng(0)
    discrete_laplace(3, 1, _small.SMALL, rng)
    discrete_laplace(3, 1, _small.SMALL + 1, rng)
    assert calls == [_small.SMALL]


def test_one_draw_distribution():
    """The small path on its own, against the exact pmf of N_Z(0, 1369/100): 20,000 one-draw calls, χ² at 1e-4
    (the deliberately wrong variant, σ 10 % off, is rejected by the same test in test_exact_samplers)."""
    from _chisquare import merged_chisquare

    rng = np.random.default_rng(40)
    x = np.array([int(discrete_gaussian(1369, 100, None, rng)) for _ in range(20_000)])
    support = np.arange(-25, 26)
    w = np.exp(-(support.astype(float) ** 2) / (2 * 13.69))
    probs = w / math.fsum(np.exp(-(np.arange(-400, 401.0) ** 2) / (2 * 13.69)))
    probs = np.concatenate([[(1 - probs.sum()) / 2], probs, [(1 - probs.sum()) / 2]])
    counts = np.bincount(np.clip(x, -26, 26) + 26, minlength=53)
    assert merged_chisquare(counts, probs) > 1e-4
    assert Fraction(1369, 100) == exact.discrete_gaussian_plan(1369, 100).sigma2
