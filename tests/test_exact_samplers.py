"""Exact integer samplers (dpstats.noise.exact, dpstats.noise._bernoulli) against their exact distributions.

Every distributional test is a χ² goodness-of-fit test against probabilities
computed from the closed form of the target (not from another sampler), at a
significance level fixed in advance: ALPHA = 1e-4 per test. With about 40 such
tests the chance that a correct sampler fails any of them is below 0.5 %; the
seeds are fixed, so the outcome is deterministic. The power tests at the end
show that the same tests reject samplers that are slightly wrong.

"Exact" probabilities are evaluated in double precision from the closed forms.
Their error (relative 1e-13 at worst, see each helper) is many orders of
magnitude below what ~1e5 draws can resolve (a χ² cell of expected count c
resolves relative deviations of order 1/√c >= 1e-3).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from _chisquare import merged_chisquare
from scipy import special, stats

from dpstats.exceptions import ParameterError
from dpstats.noise import _bernoulli, exact
from dpstats.noise.exact import (
    bernoulli_exp,
    bernoulli_rational,
    discrete_gaussian,
    discrete_gaussian_plan,
    discrete_laplace,
)

ALPHA = 1e-4  # per-test type-I error, fixed before looking at any result
Z_ALPHA = stats.norm.isf(ALPHA / 2)  # two-sided z threshold for the moment tests (3.89)
N = 200_000  # draws per distributional test


# ----------------------------------------------------------------------------- exact distributions


def _chi2_pvalue(samples: np.ndarray, cdf, edges) -> float:
    """χ² p-value of ``samples`` for cells (−∞, e_1], (e_1, e_2], ..., (e_k, ∞) under ``cdf`` (P(X <= b)).

    Adjacent cells are merged until each expects at least 5 (:func:`_chisquare.merged_chisquare`).
    """
    edges = np.unique(np.asarray(edges, dtype=np.int64))
    probs = np.diff(np.concatenate([[0.0], [cdf(int(e)) for e in edges], [1.0]]))
    counts = np.bincount(np.searchsorted(edges, samples.ravel(), side="left"), minlength=edges.size + 1)
    return merged_chisquare(counts, probs)


def _quantile_edges(cdf, lo: int, hi: int, cells: int = 60) -> list[int]:
    """Integer edges near the k/cells quantiles of ``cdf`` (found by bisection on [lo, hi])."""
    edges = []
    for k in range(1, cells):
        a, b = lo, hi
        while a < b:
            mid = (a + b) // 2
            a, b = (mid + 1, b) if cdf(mid) < k / cells else (a, mid)
        edges.append(a)
    return edges


def laplace_cdf(t: Fraction):
    """P(X <= b) for P(x) ∝ q^|x|, q = e^(−1/t): q^(−b)/(1 + q) for b < 0, 1 − q^(b+1)/(1 + q) for b >= 0."""
    q = math.exp(-1 / t)

    def cdf(b: int) -> float:
        return math.exp(b / t) / (1 + q) if b < 0 else 1 - math.exp(-(b + 1) / t) / (1 + q)

    return cdf


def laplace_moments(t: Fraction) -> tuple[float, float]:
    """E X² = 2q/(1 − q)² and E X⁴ = 2q(1 + 11q + 11q² + q³)/((1 + q)(1 − q)⁴) (sums of x^k q^x)."""
    q, one_minus_q = math.exp(-1 / t), -math.expm1(-1 / t)
    return 2 * q / one_minus_q**2, 2 * q * (1 + 11 * q + 11 * q * q + q**3) / ((1 + q) * one_minus_q**4)


def gaussian_table(sigma2: Fraction) -> tuple[np.ndarray, np.ndarray]:
    """Support x in [−M, M] and pmf ∝ exp(−x²/(2σ²)), M = 40σ + 10 (the mass beyond is below e^(−800)).

    Each weight has relative error ~1e-16 and the normalisation is an exact-rounded sum (math.fsum)."""
    M = int(40 * math.sqrt(sigma2)) + 10
    x = np.arange(-M, M + 1)
    w = np.exp(-(x.astype(float) ** 2) / (2 * float(sigma2)))
    return x, w / math.fsum(w)


def gaussian_cdf(sigma2: Fraction):
    """P(X <= b) for N_Z(0, σ²). Up to σ = 1000 from the table; beyond, Φ((b + 1/2)/σ): by Poisson summation the
    normaliser is √(2π)σ(1 + O(e^(−2π²σ²))) and the midpoint rule makes the partial sum ∫^(b+1/2) up to a relative
    O(1/σ²) < 1e-6, far below what the tests resolve."""
    if sigma2 <= 10**6:
        x, p = gaussian_table(sigma2)
        cum = np.cumsum(p)
        return lambda b: float(cum[min(max(b + x[-1], -1), x.size - 1)]) if b >= x[0] else 0.0
    sigma = math.sqrt(sigma2)
    return lambda b: float(special.ndtr((b + 0.5) / sigma))


def gaussian_edges(sigma2: Fraction, cells: int = 60) -> list[int]:
    """Cells of equal probability under N(0, σ²), plus every integer in [−12, 12] (the atoms of a small σ)."""
    sigma = math.sqrt(sigma2)
    quantiles = [round(sigma * stats.norm.ppf(k / cells)) for k in range(1, cells)]
    return sorted(set(quantiles) | set(range(-12, 13)))


def gaussian_moments(sigma2: Fraction) -> tuple[float, float]:
    """E X² and E X⁴ of N_Z(0, σ²): from the table up to σ = 1000, else σ² and 3σ⁴ (relative error e^(−2π²σ²))."""
    if sigma2 <= 10**6:
        x, p = gaussian_table(sigma2)
        x = x.astype(float)
        return math.fsum(p * x**2), math.fsum(p * x**4)
    return float(sigma2), 3 * float(sigma2) ** 2


def _assert_moments(samples: np.ndarray, m2: float, m4: float) -> None:
    """Sample mean and second moment within Z_ALPHA standard errors of 0 and E X² (CLT, n >= 1e5)."""
    x = samples.astype(float).ravel()
    n = x.size
    assert abs(x.mean()) <= Z_ALPHA * math.sqrt(m2 / n)
    assert abs(np.mean(x * x) - m2) <= Z_ALPHA * math.sqrt((m4 - m2 * m2) / n)


# ----------------------------------------------------------------------------- Bernoulli


@pytest.mark.parametrize("num,den", [(1, 3), (2, 7), (999, 1000), (2**62, 2**63 - 1), (1, 2**40)])
def test_bernoulli_rational_matches_exact_probability(num, den):
    rng = np.random.default_rng([1, num % 1000, den % 1000])
    n = N if num / den > 1e-3 else 50 * N
    draws = bernoulli_rational(np.full(n, num), den, rng)
    p = num / den
    successes = int(draws.sum())
    assert stats.binomtest(successes, n, p).pvalue > ALPHA


def test_bernoulli_rational_edge_probabilities_and_broadcasting():
    rng = np.random.default_rng(2)
    assert not bernoulli_rational(np.zeros(1000, dtype=np.int64), 5, rng).any()
    assert bernoulli_rational(7, np.full(1000, 7), rng).all()
    out = bernoulli_rational(np.arange(4)[:, None], np.array([[3, 4, 5]]), rng)
    assert out.shape == (4, 3) and out.dtype == bool
    assert bernoulli_rational(1, 2, rng).shape == ()


@pytest.mark.parametrize("num,den", [(1, 2), (1, 1), (37, 10), (3, 1), (2**62 + 1, 2**61), (5 * 2**59, 2**62)])
def test_bernoulli_exp_matches_exp_minus_gamma(num, den):
    """γ in [0, 1] (Algorithm 1), γ > 1 (floor and fraction), and int64-sized num/den (1/k drawn separately)."""
    rng = np.random.default_rng([3, num % 1000, den % 1000])
    draws = bernoulli_exp(np.full(N, num), den, rng)
    p = math.exp(-Fraction(num, den))
    assert stats.binomtest(int(draws.sum()), N, p).pvalue > ALPHA


def test_bernoulli_exp_extremes():
    rng = np.random.default_rng(4)
    assert bernoulli_exp(np.zeros(N, dtype=np.int64), 1, rng).all()  # γ = 0: probability 1
    # γ = 40: P(any of N draws succeeds) <= N·e^(−40) < 1e-12
    assert not bernoulli_exp(np.full(N, 40), 1, rng).any()
    # γ = 2**62: stops at the first failing Bernoulli(1/e) factor, promptly
    assert not bernoulli_exp(np.full(1000, 2**62), 1, rng).any()


def test_bernoulli_exp_per_element_parameters():
    """One call with many different γ = k/10, k = 0..49: a χ² sum over the 50 groups (2 cells each)."""
    rng = np.random.default_rng(5)
    k = np.repeat(np.arange(50), 20_000)
    draws = bernoulli_exp(k, 10, rng)
    assert draws[k == 0].all()  # γ = 0
    p = np.exp(-np.arange(1, 50) / 10)
    ones = np.bincount(k, weights=draws, minlength=50)[1:]
    n = 20_000  # every group has n·p >= 149 and n·(1 − p) >= 1903 expected draws in each cell
    chi2 = np.sum((ones - n * p) ** 2 / (n * p * (1 - p)))
    assert stats.chi2.sf(chi2, p.size) > ALPHA


def test_bernoulli_exp_from_python_ints():
    """The object path (numbers beyond int64, uniform draws from 62-bit limbs) gives e^(−γ) too."""
    rng = np.random.default_rng(6)
    num = np.full(20_000, 3 * 2**80 + 1, dtype=object)
    draws = _bernoulli.bernoulli_exp_unchecked(num, 2**81, rng)
    assert stats.binomtest(int(draws.sum()), draws.size, math.exp(-1.5)).pvalue > ALPHA


def test_big_uniform_below_is_uniform():
    rng = np.random.default_rng(7)
    high = 3 * 2**70 + 5
    draws = np.array([_bernoulli.big_uniform_below(high, rng) for _ in range(60_000)], dtype=object)
    assert all(0 <= d < high for d in draws)
    cells = (draws * 30 // high).astype(np.int64)  # 30 cells of (almost exactly) equal probability
    assert stats.chisquare(np.bincount(cells, minlength=30)).pvalue > ALPHA
    assert stats.chisquare(np.bincount((draws % 7).astype(np.int64), minlength=7)).pvalue > ALPHA


def test_big_uniform_below_rejects_the_incomplete_last_block():
    """Limbs that form a value at or above the largest multiple of ``high`` are redrawn, not reduced modulo high."""
    high = 2**63 + 1  # span = 2**(62·limbs) is not a multiple of high, so its top value is above the last block

    class Scripted:
        def __init__(self):
            self.rounds = 0

        def integers(self, low, high, size=None):
            self.rounds += 1
            if self.rounds == 1:
                return np.full(size, 2**62 - 1)  # r = span − 1: must be rejected
            return np.concatenate([np.zeros(size - 1, dtype=np.int64), [5]])  # r = 5

    rng = Scripted()
    assert _bernoulli.big_uniform_below(high, rng) == 5 and rng.rounds == 2


def test_bernoulli_minus_one_parity_table():
    """Bernoulli(1/e) from one draw below 12!: the parity read off W equals the parity of K from W's digits."""
    span = _bernoulli.E1_SPAN
    thresholds = span // np.array([math.factorial(j) for j in range(2, 12)])  # τ_2 .. τ_11, and one below each
    w = np.concatenate(
        [np.arange(1, 3000), np.random.default_rng(8).integers(1, span, 20_000), thresholds, thresholds - 1]
    )

    class Fixed:
        def integers(self, low, high, size=None):
            assert high == span
            return w

    def k_from_digits(v: int) -> int:  # the first round j >= 2 whose digit d_j (place value 12!/j!) is nonzero
        return next(j for j in range(2, 13) if (v // (span // math.factorial(j))) % j)

    out = _bernoulli.bernoulli_exp_minus_one(w.size, Fixed())
    assert np.array_equal(out, [k_from_digits(int(v)) % 2 == 1 for v in w])


# ----------------------------------------------------------------------------- discrete Laplace


@pytest.mark.parametrize("num,den", [(3, 10), (1, 1), (15, 2), (10**6, 1), (2**62 + 3, 2**12)])
def test_discrete_laplace_matches_exact_pmf(num, den):
    """Last case: t = 2**62/2**12 = 2**50, where U + t·V leaves int64 whenever V >= 2 (the Python-int path)."""
    rng = np.random.default_rng([9, num % 1000, den])
    t = Fraction(num, den)
    x = discrete_laplace(num, den, N, rng)
    assert x.dtype == np.int64
    cdf = laplace_cdf(t)
    bound = int(60 * t) + 5
    assert _chi2_pvalue(x, cdf, _quantile_edges(cdf, -bound, bound) + list(range(-5, 6))) > ALPHA
    _assert_moments(x, *laplace_moments(t))


def test_discrete_laplace_symmetric():
    rng = np.random.default_rng(10)
    x = discrete_laplace(7, 3, N, rng)
    positive, negative = int((x > 0).sum()), int((x < 0).sum())
    assert stats.binomtest(positive, positive + negative, 0.5).pvalue > ALPHA


def test_discrete_laplace_extreme_scales():
    rng = np.random.default_rng(11)
    # t = 1e-3: P(x != 0) = 2q/(1 + q), q = e^(−1000)
    small = discrete_laplace(1, 1000, N, rng)
    assert small.dtype == np.int64 and not small.any()
    big = discrete_laplace(2**50, 1, N, rng)  # |x| ~ 2**50: no overflow; E|X| ≈ t
    assert big.dtype == np.int64
    assert abs(np.abs(big.astype(float)).mean() / 2**50 - 1) < 0.02  # sd of |X|/t is 1: 0.02 is 9 standard errors


# ----------------------------------------------------------------------------- discrete Gaussian


@pytest.mark.parametrize(
    "num,den,n", [(1, 25, 10 * N), (1, 1, N), (9, 1, N), (1369, 100, N), (10**4, 1, N), (2**36, 1, N), (2**60, 1, N)]
)
def test_discrete_gaussian_matches_exact_pmf(num, den, n):
    """σ = 0.2, 1, 3, 3.7, 100, 2**18 (direct, factored way) and 2**30 (composed). σ = 0.2 puts mass 7e-6 off
    zero, hence 10x the draws (37 expected draws off zero)."""
    sigma2 = Fraction(num, den)
    rng = np.random.default_rng([12, num % 1000, den])
    x = discrete_gaussian(num, den, n, rng)
    assert x.dtype == np.int64
    assert _chi2_pvalue(x, gaussian_cdf(sigma2), gaussian_edges(sigma2)) > ALPHA
    _assert_moments(x, *gaussian_moments(sigma2))


@pytest.mark.parametrize(
    "num,q", [(2**36, 2), (2**36, 3), (2**60, 2), (2**60, 3), (2**60, 2**21), (2**110, 2), (2**110, 3), (2**110, 2**21)]
)
def test_discrete_gaussian_low_order_digits_uniform(num, q):
    """For σ/q >= 8, P(X ≡ r mod q) = 1/q up to e^(−2π²σ²/q²) < e^(−1263) (Poisson summation): X mod q must look
    uniform (64 equal cells of residues for large q). q = 2**21 is the block size of the composition
    (σ = 2**30: X = 2**21·A + B) and shows that B fills its blocks."""
    rng = np.random.default_rng([13, num % 997, q])
    x = discrete_gaussian(num, 1, N, rng)
    cells = min(q, 64)
    counts = np.bincount((x % q) * cells // q, minlength=cells)
    assert stats.chisquare(counts).pvalue > ALPHA


def test_discrete_gaussian_symmetric():
    rng = np.random.default_rng(14)
    x = discrete_gaussian(5, 2, N, rng)
    positive, negative = int((x > 0).sum()), int((x < 0).sum())
    assert stats.binomtest(positive, positive + negative, 0.5).pvalue > ALPHA


@pytest.mark.parametrize("way", ["rational", "factored", "exact"])
def test_discrete_gaussian_every_acceptance_way_is_exact(way, monkeypatch):
    """The three ways of drawing Algorithm 3's acceptance (int64 rational, int64 factored, Python ints) each give
    N_Z(0, σ²) on their own: the others are switched off through their size limits, and a spy checks which
    exponents were actually drawn (rational: denominator Q = 2·num·den·t²; factored: A's denominator 2·num)."""
    sigma2 = Fraction(1369, 100)
    init = exact._DirectGaussian.__init__

    def limited_init(self, s2):
        init(self, s2)
        if way != "rational":
            self.y_rational = -1
        if way == "exact":
            self.y_factored = -1

    seen = set()
    bernoulli_exp_ = _bernoulli.bernoulli_exp_unchecked

    def spy(num, den, rng):
        if num.size:
            seen.add("object" if num.dtype == object else "Q" if den == 2 * 1369 * 100 * 4**2 else "2num")
        return bernoulli_exp_(num, den, rng)

    monkeypatch.setattr(exact._DirectGaussian, "__init__", limited_init)
    monkeypatch.setattr(exact, "bernoulli_exp_unchecked", spy)
    rng = np.random.default_rng([15, len(way)])
    n = N if way != "exact" else N // 4  # Python ints: slower
    x = discrete_gaussian(1369, 100, n, rng)
    assert _chi2_pvalue(x, gaussian_cdf(sigma2), gaussian_edges(sigma2)) > ALPHA
    assert seen == {"rational": {"Q"}, "factored": {"2num", "object"}, "exact": {"object"}}[way]


def test_int64_ways_cover_all_but_the_far_tail():
    """The claim behind the speed of the direct path (_DirectGaussian docstring): for every σ² in the direct range
    (numerator <= 2**52, denominator <= 2**24) way 1 fits, or way 2 covers m up to 10σ − 1."""
    rng = np.random.default_rng(24)
    for _ in range(3000):
        den = int(rng.choice([1, 3, 1024, 10**6, 2**24 - 1, 2**24, int(rng.integers(1, 2**24))]))
        sigma2 = Fraction(int(min(2.0 ** rng.uniform(-20, 52) * den, 2**52)) + 1, den)
        if sigma2.numerator > 2**52:
            continue
        g = exact._DirectGaussian(sigma2)
        assert g.y_rational >= 0 or g.m_factored >= 10 * math.sqrt(sigma2) - 1


def test_discrete_gaussian_extreme_sigmas():
    rng = np.random.default_rng(16)
    tiny = discrete_gaussian(1, 10**6, N, rng)  # σ = 1e-3: P(x != 0) ≈ 2e^(−500000)
    assert tiny.dtype == np.int64 and not tiny.any()
    for num in (2**110, 2**120):  # σ = 2**55, 2**60 (two composition levels)
        x = discrete_gaussian(num, 1, 20_000, rng)
        assert x.dtype == np.int64
        assert abs(np.std(x.astype(float)) / math.sqrt(num) - 1) < 0.05  # sd of the ratio is ~0.005


def test_plan_is_exact_split_with_tiny_error():
    for num, den in [(2**60, 1), (2**120, 1), (2**53 + 12345, 7), (3 * 2**70 + 1, 2**24)]:
        plan = discrete_gaussian_plan(num, den)
        assert plan.sigma2 == Fraction(num, den)
        total = plan.base
        assert total.numerator <= 2**52  # sampled directly
        for a, outer in reversed(plan.levels):
            assert 16 * 4**a <= outer < 17 * 4**a and outer.numerator <= 2**52  # σ_B >= 4·2^a, sampled directly
            total = 4**a * total + outer
            assert 16 * outer <= total  # σ_B² <= σ²/16 at this level, hence τ² >= 15
        assert total == plan.sigma2
        assert 0 < plan.log_ratio_bound < 1e-120
    direct = discrete_gaussian_plan(2**52, 1)
    assert direct.levels == () and direct.log_ratio_bound == 0.0


def test_plan_rounds_large_denominators_up():
    plan = discrete_gaussian_plan(10**12 + 1, 10**11)  # denominator above 2**24
    assert plan.sigma2 >= Fraction(10**12 + 1, 10**11)
    assert plan.sigma2 - Fraction(10**12 + 1, 10**11) < Fraction(1, 2**24)
    assert plan.sigma2.denominator <= 2**24


def test_composition_lemma_bound_holds_and_is_tight_enough():
    """The lemma numerically, where θ is large enough to see: X = 2A + B with σ_A² = σ_B² = 1 (τ² = 1/5), exact pmf
    of X by convolution against N_Z(0, 5): the largest log-ratio is below the bound η and above η/4."""
    xa, pa = gaussian_table(Fraction(1))
    xb, pb = gaussian_table(Fraction(1))
    pmf = {}
    for a, p in zip(xa, pa, strict=True):
        for b, r in zip(xb, pb, strict=True):
            pmf[2 * a + b] = pmf.get(2 * a + b, 0.0) + p * r
    xs, ps = gaussian_table(Fraction(5))
    ratio = [abs(math.log(pmf[x] / p)) for x, p in zip(xs, ps, strict=True) if abs(x) <= 20]
    eta = exact._level_log_ratio(1, Fraction(1), Fraction(1))
    assert eta / 4 < max(ratio) <= eta


# ----------------------------------------------------------------------------- shapes, seeds, inputs


@pytest.mark.parametrize("size,shape", [((), ()), (None, ()), (5, (5,)), ((3, 4), (3, 4)), (0, (0,))])
def test_shapes_and_dtype(size, shape):
    rng = np.random.default_rng(17)
    for x in (
        discrete_laplace(3, 2, size, rng),
        discrete_gaussian(7, 1, size, rng),
        discrete_gaussian(2**60, 1, size, rng),
    ):
        assert x.shape == shape and x.dtype == np.int64


def test_same_seed_same_draws():
    a = discrete_gaussian(2**60, 3, 1000, np.random.default_rng(18))
    b = discrete_gaussian(2**60, 3, 1000, np.random.default_rng(18))
    assert np.array_equal(a, b)


class IntegersOnly:
    """A Generator that only offers ``integers(0, high[, size])`` (int64): any float method raises."""

    def __init__(self, seed: int):
        self._rng = np.random.default_rng(seed)
        self.calls = 0

    def integers(self, low, high, size=None):
        assert low == 0
        self.calls += 1
        return self._rng.integers(low, high, size=size)

    def __getattr__(self, name):
        raise AssertionError(f"sampler called rng.{name}: only rng.integers is allowed")


def test_no_floating_point_randomness():
    rng = IntegersOnly(19)
    bernoulli_rational(np.arange(10), 10, rng)
    bernoulli_exp(np.arange(10), 3, rng)
    _bernoulli.bernoulli_exp_unchecked(np.full(10, 2**80, dtype=object), 3 * 2**78, rng)
    discrete_laplace(2**62 + 3, 2**12, 1000, rng)
    discrete_laplace(1, 1000, 1000, rng)
    for num, den in [(1, 25), (1369, 100), (2**36, 1), (2**60, 1), (2**120, 1)]:
        discrete_gaussian(num, den, 1000, rng)
    assert rng.calls > 0


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda rng: bernoulli_rational(4, 3, rng), "num must satisfy 0 <= num <= den"),
        (lambda rng: bernoulli_rational(1, 0, rng), "den must be >= 1"),
        (lambda rng: bernoulli_rational(0.5, 1, rng), "num must be an integer array"),
        (lambda rng: bernoulli_rational(1, 2**64, rng), "den must be integers in the int64 range"),
        (lambda rng: bernoulli_exp(-1, 2, rng), "num must be >= 0"),
        (lambda rng: bernoulli_exp(1, 0, rng), "den must be >= 1"),
        (lambda rng: discrete_laplace(0, 1, 3, rng), "scale_num must be an integer in"),
        (lambda rng: discrete_laplace(1, 2**63, 3, rng), "scale_den must be an integer in"),
        (lambda rng: discrete_laplace(1.5, 1, 3, rng), "scale_num must be an integer"),
        (lambda rng: discrete_gaussian(0, 1, 3, rng), "sigma2_num must be an integer >= 1"),
        (lambda rng: discrete_gaussian(1, True, 3, rng), "sigma2_den must be an integer >= 1"),
        (lambda rng: discrete_gaussian(2**121, 1, 3, rng), "at most 2\\*\\*120"),
        (lambda rng: discrete_gaussian(1, 1, -1, rng), "size must be an integer >= 0"),
        (lambda rng: discrete_gaussian(1, 1, "3", rng), "size must be None"),
    ],
)
def test_bad_parameters_raise(call, match):
    with pytest.raises(ParameterError, match=match):
        call(np.random.default_rng(0))


# ----------------------------------------------------------------------------- power of the tests


def test_chi2_rejects_laplace_with_scale_ten_percent_off():
    t = Fraction(15, 2)
    x = discrete_laplace(33, 4, N, np.random.default_rng(20))  # t = 8.25 instead of 7.5
    cdf = laplace_cdf(t)
    assert _chi2_pvalue(x, cdf, _quantile_edges(cdf, -1000, 1000) + list(range(-5, 6))) < ALPHA


@pytest.mark.parametrize("num,den", [(1369, 100), (2**36, 1), (2**60, 1)])
def test_chi2_rejects_gaussian_with_sigma_ten_percent_off(num, den):
    sigma2 = Fraction(num, den)
    x = discrete_gaussian(num * 121, den * 100, N, np.random.default_rng(21))  # σ·1.1
    assert _chi2_pvalue(x, gaussian_cdf(sigma2), gaussian_edges(sigma2)) < ALPHA


def test_chi2_rejects_rounded_continuous_gaussian():
    """Rounding N(0, 1) is the usual inexact shortcut: P(0) = 0.383 instead of 0.399; the test sees it."""
    x = np.rint(np.random.default_rng(22).normal(0.0, 1.0, N)).astype(np.int64)
    assert _chi2_pvalue(x, gaussian_cdf(Fraction(1)), gaussian_edges(Fraction(1))) < ALPHA


def test_low_digit_test_rejects_a_coarse_sampler():
    """A sampler that is right at coarse scale but has even values only (2·N_Z(0, σ²/4)) fails the mod-2 test."""
    x = 2 * discrete_gaussian(2**34, 1, N, np.random.default_rng(23))
    assert stats.chisquare(np.bincount(x % 2, minlength=2)).pvalue < ALPHA
