"""Exact integer noise: discrete Laplace and discrete Gaussian samplers.

Every sampler here draws from its target distribution *exactly*: the only source
of randomness is ``rng.integers(0, high)``, an unbiased uniform integer in
``[0, high)`` (NumPy's ``Generator.integers`` uses Lemire's rejection method, so
it is exact for every ``high``), and every decision compares such an integer
with an exact integer. No floating-point number enters a decision, so the
output carries none of the rounding artefacts of floating-point noise (Mironov,
CCS 2012). The algorithms are those of Canonne, Kamath & Steinke (NeurIPS 2020,
"The Discrete Gaussian for Differential Privacy", arXiv:2004.00010), cited below
as CKS with their algorithm numbers.

Vectorisation
-------------
Each rejection loop runs on whole arrays: a round draws for all elements still
pending and keeps the indices of those that continue, so Python loops over
rounds (few, and shrinking geometrically), never over elements. A call for at
most :data:`dpstats.noise._small.SMALL` draws (one release of one number) runs
the same samplers on Python lists instead (:mod:`dpstats.noise._small`): the
same draws in the same order, so the same output, without NumPy's fixed cost per
operation on arrays of a few elements. Rejection
samplers draw a batch of proposals, keep the accepted ones in proposal order and
draw more until enough are kept; accepted proposals of an i.i.d. sequence are
i.i.d. from the target, so keeping the first ``n`` of them is exact. A batch
holds at most 2**17 attempts, so that its working arrays stay in cache.

int64 safety
------------
Arrays are ``int64``. Every product is bounded before it is formed; an element
whose values could leave the int64 range is finished with the same code on
``object`` arrays of Python integers (exact at any size, only slower), and
uniform draws beyond 2**63 are assembled from 62-bit limbs
(:func:`uniform_below`). Only a final *output* that does not fit in int64 is an
error (``OverflowError``); each public function states how unlikely that is.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validation import check_int
from ..exceptions import ParameterError
from . import _small
from ._bernoulli import (
    INT64_MAX,
    bernoulli_exp,
    bernoulli_exp_product,
    bernoulli_exp_unchecked,
    bernoulli_rational,
    exp_minus_one_run,
    output_shape,
    to_int64,
    uniform_below,
)

__all__ = [
    "DiscreteGaussianPlan",
    "bernoulli_exp",
    "bernoulli_rational",
    "discrete_gaussian",
    "discrete_gaussian_plan",
    "discrete_laplace",
    "one_draw",
]

# Discrete Gaussian: σ² = num/den is sampled directly (CKS Algorithm 3) while num <= 2**52, a larger σ² is composed
# (_compose_level); a denominator above 2**24 is first rounded up to a multiple of 2**-24. These limits are for
# speed: they keep the int64 ways of _DirectGaussian available up to |Y| ~ 10σ; int64 safety is checked per element.
_DIRECT_NUM_MAX = 2**52
_SIGMA2_DEN_MAX = 2**24
_SIGMA2_MAX = 2**120  # σ <= 2**60; the output must fit in int64
_COMPOSE_B_MIN = 16  # σ_B² >= 16·4^a, i.e. σ_B >= 4·2^a, at every composition level
# Acceptance rates assumed for the size of the first batch (speed only, never the distribution), chosen slightly
# high so that the first batch rarely overshoots and a small second one tops it up: CKS Algorithm 2 keeps
# (1 − e^(−1))/(t(1 − e^(−1/t))) in [0.63, 1] of its attempts (times 1 − P(0)/2), Algorithm 3 about
# e^(−1/2)·√(π/2) ≈ 0.76 of its Laplace proposals for large σ, so about 0.48 of the attempts beneath it.
_BATCH_MAX = 2**17  # attempts per batch: keeps each working array (1 MiB) in cache; 25-30 % faster at n = 1e6
_LAPLACE_RATE = Fraction(2, 3)
_GAUSSIAN_RATE = Fraction(1, 2)


# ----------------------------------------------------------------------------- rejection loop


def _rejection_fill(n: int, batch, rate: Fraction) -> np.ndarray:
    """The first ``n`` accepted proposals of ``batch(k)`` (which returns the accepted ones among k fresh proposals).

    Accepted proposals of an i.i.d. sequence are i.i.d. from the target, and
    which of them are kept depends on their position only, so the ``n`` kept
    are i.i.d. from the target. Batch sizes change the speed, never the
    distribution: the first assumes the acceptance ``rate`` (a typical value,
    so that one batch usually suffices without drawing many extra), later ones
    the rate seen so far; none exceeds ``_BATCH_MAX``.
    """
    parts, have, tried = [np.empty(0, dtype=np.int64)], 0, 0
    while have < n:
        need = n - have
        k = (need * rate.denominator // rate.numerator if have == 0 else need * tried // have) + need // 64 + 16
        k = min(k, _BATCH_MAX)
        got = batch(k)
        parts.append(got)
        have += got.size
        tried += k
    return np.concatenate(parts)[:n]


# ----------------------------------------------------------------------------- discrete Laplace


def _laplace_attempts(t: int, s: int, k: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``k`` attempts of CKS Algorithm 2 for Lap_Z(t/s), P(z) ∝ exp(−|z|·s/t): the values Z of the attempts that pass
    steps 2–5, and the mask of those among them that also pass the last check (the accepted ones).

    The mask is returned rather than applied so that a caller with a rejection
    step of its own (Algorithm 3) compacts once for both.

    Proof (CKS Algorithm 2 and Proposition 8): U is uniform on [0, t) and kept
    with probability e^(−U/t) (steps 2–5), so P(U = u) ∝ e^(−u/t) on [0, t).
    V counts Bernoulli(e^(−1)) successes, P(V = v) ∝ e^(−v) (steps 6–9).
    X = U + t·V runs over each x >= 0 exactly once, with P(X = x) ∝ e^(−x/t);
    Y = floor(X/s) then has P(Y = y) ∝ Σ_{x = ys}^{ys+s−1} e^(−x/t) ∝ e^(−ys/t).
    A fair sign B is drawn and (B = 1, Y = 0) rejected, so that 0 is not
    counted twice: P(Z = z) ∝ e^(−|z|·s/t) on all of Z.

    int64: U < t <= 2**63 − 1 and V is a count of loop rounds. X = U + t·V is
    formed in int64 only where V <= (2**63 − 1 − U) // t; the other elements
    (none for t <= 2**50 unless V > 2**13, probability e^(−8192)) are computed
    with Python ints, and the batch becomes an ``object`` array only if such a
    Y itself exceeds int64.
    """
    u = uniform_below(t, k, rng)
    u = np.compress(bernoulli_exp_product([(u, t)], k, rng), u)
    v = exp_minus_one_run(u.size, None, rng)
    if v.size and v.max() > (INT64_MAX - (t - 1)) // t:  # some U + t·V would leave int64
        y = _floor_div_exact(u, v, t, s)
    else:
        y = u + t * v if s == 1 else (u + t * v) // s
    b = uniform_below(2, u.size, rng)  # sign: negative iff b = 1
    return (1 - 2 * b) * y, (y != 0) | (b == 0)


def _laplace_batch(t: int, s: int, k: int, rng) -> np.ndarray:
    """The accepted ones among ``k`` attempts of CKS Algorithm 2 (:func:`_laplace_attempts`)."""
    z, accepted = _laplace_attempts(t, s, k, rng)
    return np.compress(accepted, z)


def _floor_div_exact(u: np.ndarray, v: np.ndarray, t: int, s: int) -> np.ndarray:
    """``(u + t·v) // s`` per element, through Python ints where ``u + t·v`` would leave int64.

    The result is int64, or an ``object`` array if one quotient itself does not fit.
    """
    safe = v <= (INT64_MAX - u) // t
    y = (u + t * np.where(safe, v, 0)) // s
    big = np.flatnonzero(~safe)
    exact = [(int(u[i]) + t * int(v[i])) // s for i in big]
    if max(exact, default=0) > INT64_MAX:  # the caller's test is coarser (U < t): none may need Python ints
        y = y.astype(object)
    y[big] = exact
    return y


def discrete_laplace(scale_num, scale_den, size, rng) -> np.ndarray:
    """Exact discrete Laplace noise: P(x) ∝ exp(−|x|·scale_den/scale_num) on all integers x.

    Parameters
    ----------
    scale_num, scale_den : int
        The scale t = scale_num/scale_den > 0 as a fraction of positive
        integers (each at most 2**63 − 1; the fraction is reduced first).
        Fast while the reduced scale_num is at most about 2**58 (t from 1e-3
        to 2**50 and more); beyond, the attempts with U + scale_num·V past
        2**63 take a slower exact path in Python integers.
    size : int or tuple of int or None
        Output shape; ``None`` or ``()`` gives a 0-d array.
    rng : numpy.random.Generator
        Source of randomness; only ``rng.integers(0, high)`` is called.

    Returns
    -------
    numpy.ndarray of int64
        Independent draws of shape ``size``.

    Raises
    ------
    ParameterError
        If a scale part is not an integer in [1, 2**63 − 1] or ``size`` is not a shape.
    OverflowError
        If a draw falls outside the int64 range: probability at most
        2·exp(−2**63/t) per draw (below e^(−8192) for t <= 2**50).

    Notes
    -----
    CKS Algorithm 2 with their (s, t) = (scale_den, scale_num); the proof is
    beside :func:`_laplace_attempts`. Each proposal is accepted with probability
    at least about 1/2, and the batches are vectorised (:func:`_rejection_fill`).

    References
    ----------
    Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020 (arXiv:2004.00010), Algorithm 2.
    """
    t, s = _laplace_scale(scale_num, scale_den)
    shape = _output_shape(size)
    n = math.prod(shape)
    if n <= _small.SMALL:
        return _small_output(_small.laplace_sample(t, s, n, _LAPLACE_RATE, _BATCH_MAX, rng), shape)
    out = _rejection_fill(n, lambda k: _laplace_batch(t, s, k, rng), _LAPLACE_RATE)
    return to_int64(out).reshape(shape)


def _laplace_scale(scale_num, scale_den) -> tuple[int, int]:
    """The scale t/s checked and reduced."""
    t = _check_int(scale_num, "scale_num", INT64_MAX)
    s = _check_int(scale_den, "scale_den", INT64_MAX)
    g = math.gcd(t, s)
    return t // g, s // g


def one_draw(kind: str, num: int, den: int, rng) -> int:
    """One draw of :func:`discrete_laplace` (``kind="laplace"``, scale t = num/den) or :func:`discrete_gaussian`
    (``kind="gaussian"``, σ² = num/den) with ``size=()``, as a Python int: the same checks, draws and errors,
    without the 0-d array (a release of one number adds it to an integer in Python ints)."""
    if _small.SMALL < 1:  # the vectorised path forced (the tests compare both)
        return int((discrete_laplace if kind == "laplace" else discrete_gaussian)(num, den, (), rng))
    if kind == "laplace":
        (value,) = _small.laplace_sample(*_laplace_scale(num, den), 1, _LAPLACE_RATE, _BATCH_MAX, rng)
    else:
        (value,) = _small_gaussian(discrete_gaussian_plan(num, den), 1, rng)
    if not -INT64_MAX <= value <= INT64_MAX:
        to_int64(np.array([value], dtype=object))  # raises
    return value


def _small_output(values: list[int], shape: tuple[int, ...]) -> np.ndarray:
    """The draws of the small path as the vectorised path returns them (int64; OverflowError as :func:`to_int64`)."""
    if any(not -INT64_MAX <= v <= INT64_MAX for v in values):
        return to_int64(np.array(values, dtype=object))  # raises
    return np.array(values, dtype=np.int64).reshape(shape)


# ----------------------------------------------------------------------------- discrete Gaussian


class _DirectGaussian:
    """N_Z(0, σ²) for σ² = num/den (reduced; num <= 2**52 and den <= 2**24 in use), sampled by CKS Algorithm 3.

    Proposals Y ~ Lap_Z(t) with t = floor(σ) + 1 are accepted with probability
    exp(−γ), γ = (|Y| − σ²/t)²/(2σ²). Proof (CKS Algorithm 3 and Theorem 9):
    P(Y = y)·P(accept | y) ∝ exp(−|y|/t − (|y| − σ²/t)²/(2σ²))
    = exp(−y²/(2σ²) − σ²/(2t²)) ∝ exp(−y²/(2σ²)), for any t > 0.
    floor(σ) = isqrt(floor(σ²)) as k² <= σ² iff k² <= floor(σ²) for integers k.

    The exponent γ, exactly. With L = den·t and u = |Y|·L − num (an integer),
    |Y| − σ²/t = u/L and γ = u²/Q with Q = 2·num·den·t². Three ways to draw
    Bernoulli(e^(−γ)), each exact; an element takes the first whose numbers fit:

    1. *rational*: Bernoulli(exp(−u²/Q)) as one fraction, when Q and u² fit in
       int64 (small σ; ``abs_y <= y_rational``).
    2. *factored* (large σ): write |u|/L = m + f/L, m = |u| // L, 0 <= f < L.
       Then γ = (m + φ)²/(2σ²) with φ = f/L, and γ = A + R with
       A = m²/(2σ²) = m²·den/(2·num) and
       R = φ(2m + φ)/(2σ²) = (f/L)·((2mL + f)/((2m + 1)L))·((2m + 1)·den/(2·num)).
       e^(−γ) = e^(−A)·e^(−R): Bernoulli(exp(−A)) is one fraction; R is a
       product of three fractions each <= 1 when (2m + 1)·den <= 2·num, so
       Bernoulli(exp(−R)) is CKS Algorithm 1 on that product
       (:func:`bernoulli_exp_product`). Used when m <= ``m_factored``, which keeps
       m²·den, (2m + 1)·L and (2m + 1)·den <= 2·num in int64, and
       |Y| <= ``y_factored`` = (2**63 − 1) // L, which keeps |Y|·L in int64.
    3. *exact*: way 1 on ``object`` arrays of Python ints, for the rest (the
       far tails, and parameters for which neither way fits).

    Why way 3 is rare (speed only; every way is exact): with den <= 2**24,
    way 1 fits for every σ <= 10 (Q <= 2·σ²(σ + 1)²·den² < 2**63). Beyond,
    m_factored >= min(σ² − 1/2, √((2**63 − 1)/den), ((2**63 − 1)/L − 1)/2)
    >= 10σ − 1 for num <= 2**52 (the last two are >= 45σ), so only proposals
    with |Y| >~ 10σ, probability about e^(−10) ≈ 5e-5, take way 3.
    """

    def __init__(self, sigma2: Fraction):
        num, den = sigma2.numerator, sigma2.denominator
        self.num, self.den = num, den
        self.t = math.isqrt(num // den) + 1
        self.L = den * self.t
        self.Q = 2 * num * den * self.t**2
        root = math.isqrt(INT64_MAX)
        fits = self.Q <= INT64_MAX and num <= root  # |u| <= max(|Y|·L − num, num) <= root ⇒ u² fits
        self.y_rational = (root + num) // self.L if fits else -1
        self.y_factored = INT64_MAX // self.L
        self.m_factored = min(
            (2 * num - den) // (2 * den),  # (2m + 1)·den <= 2·num
            math.isqrt(INT64_MAX // den),  # m²·den fits
            (INT64_MAX // self.L - 1) // 2,
        )  # (2m + 1)·L fits

    def sample(self, n: int, rng) -> np.ndarray:
        """``n`` draws (int64, or object in the astronomically rare case of a proposal beyond int64)."""
        return _rejection_fill(n, lambda k: self._batch(k, rng), _GAUSSIAN_RATE)

    def _batch(self, k: int, rng) -> np.ndarray:
        """The accepted ones among ``k`` attempts: Lap_Z(t) proposals (Algorithm 2) that pass Algorithm 3's test."""
        y, accepted = _laplace_attempts(self.t, 1, k, rng)
        return np.compress(accepted & self.accept(np.abs(y), rng), y)

    def accept(self, abs_y: np.ndarray, rng) -> np.ndarray:
        """Bernoulli(exp(−(|Y| − σ²/t)²/(2σ²))) per element of ``abs_y`` = |Y|, each element drawn the first way
        (class docstring) whose numbers fit in int64."""
        if abs_y.dtype == object or abs_y.max(initial=0) <= self.y_rational:  # one way for all: 3 or 1
            return self._accept_rational(abs_y, rng)
        out = np.empty(abs_y.size, dtype=bool)
        rest = self._way_factored(abs_y, self._way_rational(abs_y, out, rng), out, rng)
        if rest.size:
            out[rest] = self._accept_rational(abs_y[rest].astype(object), rng)
        return out

    def _accept_rational(self, abs_y: np.ndarray, rng) -> np.ndarray:
        """Way 1 (int64 ``abs_y`` within ``y_rational``) or 3 (object ``abs_y``): Bernoulli(exp(−u²/Q))."""
        u = abs_y * self.L - self.num
        return bernoulli_exp_unchecked(u * u, self.Q, rng)

    def _way_rational(self, abs_y: np.ndarray, out: np.ndarray, rng) -> np.ndarray | None:
        """Way 1 where it fits: sets ``out`` there and returns the indices of the others (None: all of them)."""
        if self.y_rational < 0:
            return None
        fits = abs_y <= self.y_rational
        idx = np.flatnonzero(fits)
        out[idx] = self._accept_rational(abs_y[idx], rng)
        return np.flatnonzero(~fits)

    def _way_factored(self, abs_y: np.ndarray, todo: np.ndarray | None, out: np.ndarray, rng) -> np.ndarray:
        """Way 2 for the elements ``todo`` (None: all) where it fits: sets ``out`` there to Bernoulli(exp(−A)) AND
        Bernoulli(exp(−R)) (class docstring) and returns the indices of the others. |Y| is clipped at
        ``y_factored`` so that |Y|·L stays in int64; clipped elements fail ``fits``."""
        num, den, L = self.num, self.den, self.L
        todo = np.arange(abs_y.size) if todo is None else todo
        y = abs_y if todo.size == abs_y.size else abs_y[todo]  # sorted unique indices: all of them, in order
        w = np.abs(np.minimum(y, self.y_factored) * L - num)
        m = w // L
        fits = (m <= self.m_factored) & (y <= self.y_factored)
        idx, m, w = _where(fits, todo, m, w)
        ok = bernoulli_exp_unchecked(m * m * den, 2 * num, rng)
        sel = np.flatnonzero(ok)
        m, w = m[sel], w[sel]
        f = w - m * L
        r_factors = [((2 * m + 1) * den, 2 * num), (f, L), (2 * m * L + f, (2 * m + 1) * L)]
        ok[sel] = bernoulli_exp_product(r_factors, sel.size, rng)
        out[idx] = ok
        return np.compress(~fits, todo)


@functools.lru_cache(maxsize=256)
def _direct(sigma2: Fraction) -> _DirectGaussian:
    """The direct sampler of σ², kept for the small path (its limits are a pure function of σ²; read only)."""
    return _DirectGaussian(sigma2)


def _where(mask: np.ndarray, *arrays: np.ndarray):
    """The elements of each array where ``mask`` holds (the arrays themselves when it holds everywhere)."""
    kept = arrays if mask.all() else tuple(np.compress(mask, a) for a in arrays)
    return kept if len(kept) > 1 else kept[0]


@dataclass(frozen=True)
class DiscreteGaussianPlan:
    """How :func:`discrete_gaussian` samples N_Z(0, σ²), and what it guarantees.

    Attributes
    ----------
    sigma2 : fractions.Fraction
        The σ² actually sampled: the requested one, or (if its reduced
        denominator exceeds 2**24) the requested one rounded *up* to a multiple
        of 2**-24. Never below the request.
    log_ratio_bound : float
        η: every probability of the output lies within a factor e^(±η) of that
        of N_Z(0, ``sigma2``). 0.0 when σ² is sampled directly (exact); below
        1e-120 per composition level otherwise.
    base : fractions.Fraction
        σ² of the innermost, directly sampled component.
    levels : tuple of (int, fractions.Fraction)
        Composition levels, outermost first: ``(a, σ_B²)`` means
        X = 2^a·X_inner + B with B ~ N_Z(0, σ_B²).
    """

    sigma2: Fraction
    log_ratio_bound: float
    base: Fraction
    levels: tuple[tuple[int, Fraction], ...]


def _compose_level(sigma2: Fraction) -> tuple[int, Fraction, Fraction]:
    """Split σ² = 4^a·σ_A² + σ_B² (a >= 0, σ_A² an integer, 16·4^a <= σ_B² < 17·4^a), both parts sampled directly.

    a is the largest with 272·4^a·den <= 2**52 (den of σ²; a >= 0 as den <= 2**24). As σ² > 2**52/den, this gives
    σ_B² < 17·4^a <= σ²/16 (so 4^a·σ_A² >= (15/16)σ²) and num(σ_B²) < 17·4^a·den <= 2**52; σ_A² >= 256.
    """
    num, den = sigma2.numerator, sigma2.denominator
    a = 0
    while 272 * 4 ** (a + 1) * den <= _DIRECT_NUM_MAX:
        a += 1
    inner = num // (den * 4**a) - _COMPOSE_B_MIN
    return a, Fraction(inner), sigma2 - 4**a * inner


def _level_log_ratio(a: int, inner: Fraction, outer: Fraction) -> float:
    """η of one level X = 2^a·A + B (A ~ N_Z(0, inner), B ~ N_Z(0, outer)): see :func:`discrete_gaussian_plan`.

    τ² = inner·outer/(4^a·inner + outer); θ = 2·Σ_{l>=1} e^(−2π²τ²l²) <= 2e^(−c)/(1 − e^(−3c)) with c = 2π²τ²
    (as l² >= 1 + 3(l − 1)); η = ln((1 + θ)/(1 − θ)) <= 2θ/(1 − θ). The float result is inflated by 1e-6
    relative to cover rounding in exp.
    """
    c = 2 * math.pi**2 * float(inner * outer / (4**a * inner + outer))
    theta = 2 * math.exp(-c) / (1 - math.exp(-3 * c))
    return 2 * theta / (1 - theta) * (1 + 1e-6)


def discrete_gaussian_plan(sigma2_num, sigma2_den) -> DiscreteGaussianPlan:
    """How N_Z(0, σ²), σ² = sigma2_num/sigma2_den, is sampled: the σ² actually used and the pmf error bound.

    Parameters
    ----------
    sigma2_num, sigma2_den : int
        σ² > 0 as a fraction of positive integers (any size; σ² <= 2**120).

    Returns
    -------
    DiscreteGaussianPlan
        ``sigma2`` (the σ² sampled, >= the request), ``log_ratio_bound`` (η),
        and the composition levels.

    Raises
    ------
    ParameterError
        If a part is not a positive integer or σ² > 2**120.

    Notes
    -----
    σ² (after the rounding described at ``DiscreteGaussianPlan.sigma2``) with
    a reduced numerator up to 2**52 is sampled directly and exactly (CKS
    Algorithm 3). A larger σ² is split as
    σ² = 4^a·σ_A² + σ_B² (:func:`_compose_level`) and sampled as
    X = 2^a·A + B with independent A ~ N_Z(0, σ_A²) (recursively) and
    B ~ N_Z(0, σ_B²), σ_B >= 4·2^a. The split is exact, so ``sigma2`` is
    unchanged by it; only the pmf is approximate:

    **Lemma.** Let h = 2^a, A ~ N_Z(0, σ_A²), B ~ N_Z(0, σ_B²) independent,
    X = hA + B, σ² = h²σ_A² + σ_B², τ² = σ_A²σ_B²/σ² and
    θ = 2·Σ_{l>=1} exp(−2π²τ²l²) < 1. Then for every integer x,
    e^(−η) <= P(X = x)/N_Z(0, σ²)(x) <= e^η with η = ln((1 + θ)/(1 − θ)) <= 2θ/(1 − θ).

    *Proof.* Write ρ_s(y) = exp(−y²/(2s²)). P(X = x) = Σ_k P(A = k)P(B = x − hk)
    ∝ Σ_k ρ_{σ_A}(k)·ρ_{σ_B}(x − hk). Completing the square in k,
    k²/σ_A² + (x − hk)²/σ_B² = x²/σ² + (k − cx)²/τ² with c = hσ_A²/σ²
    (compare the coefficients of k², kx and x²). Hence
    P(X = x) ∝ ρ_σ(x)·S(x) with S(x) = Σ_k ρ_τ(k − cx) = ρ_τ(Z − cx). By Poisson
    summation, ρ_τ(Z − y) = √(2π)·τ·Σ_l e^(−2π²τ²l²)·cos(2πly), so
    S(x) ∈ √(2π)τ·[1 − θ, 1 + θ] for every x. Normalising,
    P(X = x)/N_Z(0, σ²)(x) = S(x)·Σ_y ρ_σ(y) / Σ_y ρ_σ(y)S(y), which lies in
    [(1 − θ)/(1 + θ), (1 + θ)/(1 − θ)]. ∎

    Here τ² = (σ_B/h)²·(h²σ_A²/σ²) >= 16·(15/16) = 15 (:func:`_compose_level`),
    so θ <= 2e^(−30π²)/(1 − e^(−90π²)) < 5.2e-129 and η < 1.1e-128 per level
    (θ = 2·Σ exp(−2π²(σ_B/2^a)²·c·l²) with c = h²σ_A²/σ² >= 15/16, in the
    notation of the design note). If A itself is within e^(±η_A) of
    N_Z(0, σ_A²) (a deeper level), the mixture over k keeps that factor, so
    the bounds of the levels add: ``log_ratio_bound`` is their sum.
    For DP accounting: if adding exact N_Z(0, σ²) noise to d coordinates is
    (ε, δ)-DP, adding the sampled noise is (ε + 2dη, e^(dη)·δ)-DP, as every
    output probability moves by a factor within e^(±dη).
    """
    return _plan(_check_int(sigma2_num, "sigma2_num"), _check_int(sigma2_den, "sigma2_den"))


def _check_int(value, name: str, high: int | None = None) -> int:
    """``check_int(value, name, low=1, high=high)``, with a fast path for a Python int (the samplers' usual input)."""
    if type(value) is int and value >= 1 and (high is None or value <= high):
        return value
    return check_int(value, name, low=1, high=high)


def _output_shape(size) -> tuple[int, ...]:
    """:func:`output_shape`, with a fast path for the shape of one number."""
    return () if size is None or (type(size) is tuple and not size) else output_shape(size)


@functools.lru_cache(maxsize=1024)
def _plan(num: int, den: int) -> DiscreteGaussianPlan:
    """:func:`discrete_gaussian_plan` of validated ints, cached: a pure function of public numbers, and a release
    asks for the same σ² again and again (an audit, a session of means)."""
    sigma2 = Fraction(num, den)
    if sigma2.denominator > _SIGMA2_DEN_MAX:
        sigma2 = Fraction(math.ceil(sigma2 * _SIGMA2_DEN_MAX), _SIGMA2_DEN_MAX)
    if sigma2 > _SIGMA2_MAX:
        raise ParameterError(f"sigma2_num/sigma2_den must be at most 2**120 (sigma <= 2**60); got {num}/{den}")
    levels, eta, current = [], 0.0, sigma2
    while current.numerator > _DIRECT_NUM_MAX:
        a, inner, outer = _compose_level(current)
        levels.append((a, outer))
        eta += _level_log_ratio(a, inner, outer)
        current = inner
    return DiscreteGaussianPlan(sigma2=sigma2, log_ratio_bound=eta, base=current, levels=tuple(levels))


def _small_gaussian(plan: DiscreteGaussianPlan, n: int, rng) -> list[int]:
    """``n`` draws of the plan on the small path (Python ints)."""
    values = _small.gaussian_sample(_direct(plan.base), n, _GAUSSIAN_RATE, _BATCH_MAX, rng)
    for a, outer in reversed(plan.levels):
        more = _small.gaussian_sample(_direct(outer), n, _GAUSSIAN_RATE, _BATCH_MAX, rng)
        values = [(v << a) + b for v, b in zip(values, more, strict=True)]
    return values


def _shift_add(x: np.ndarray, a: int, b: np.ndarray) -> np.ndarray:
    """``x·2^a + b``: int64 when the largest magnitudes allow it, else through Python ints (object array)."""
    if x.size == 0 or (
        x.dtype != object and b.dtype != object and np.abs(x).max() <= (INT64_MAX - np.abs(b).max()) >> a
    ):
        return (x << a) + b
    return x.astype(object) * (1 << a) + b.astype(object)


def discrete_gaussian(sigma2_num, sigma2_den, size, rng) -> np.ndarray:
    """Exact discrete Gaussian noise: P(x) ∝ exp(−x²/(2σ²)) on all integers x, σ² = sigma2_num/sigma2_den.

    Parameters
    ----------
    sigma2_num, sigma2_den : int
        σ² > 0 as a fraction of positive integers (any size; σ² <= 2**120,
        i.e. σ <= 2**60).
    size : int or tuple of int or None
        Output shape; ``None`` or ``()`` gives a 0-d array.
    rng : numpy.random.Generator
        Source of randomness; only ``rng.integers(0, high)`` is called.

    Returns
    -------
    numpy.ndarray of int64
        Independent draws of shape ``size``.

    Raises
    ------
    ParameterError
        If a part is not a positive integer, σ² > 2**120, or ``size`` is not a shape.
    OverflowError
        If a draw falls outside the int64 range: probability at most
        2·exp(−2**126/(2σ²)) per draw (the discrete Gaussian tail bound), about
        3e-14 at σ = 2**60 and below 1e-55 for σ <= 2**59.

    Notes
    -----
    :func:`discrete_gaussian_plan` says exactly what is sampled: σ² itself
    (rounded up to a multiple of 2**-24 if its denominator is larger), exactly
    by CKS Algorithm 3 when its numerator is at most 2**52 (σ² up to 2**52 for
    an integer σ²); beyond, by an exact split σ² = 4^a·σ_A² + σ_B² whose pmf is
    within a factor e^(±η), η < 1e-120, of N_Z(0, σ²) (lemma and proof there).
    The acceptance test of Algorithm 3 is evaluated exactly in int64
    (:class:`_DirectGaussian`); tail elements whose numbers would overflow are
    finished with Python integers.

    References
    ----------
    Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020 (arXiv:2004.00010), Algorithms 1–3.
    """
    plan = discrete_gaussian_plan(sigma2_num, sigma2_den)
    shape = _output_shape(size)
    n = math.prod(shape)
    if n <= _small.SMALL:
        return _small_output(_small_gaussian(plan, n, rng), shape)
    x = _DirectGaussian(plan.base).sample(n, rng)
    for a, outer in reversed(plan.levels):
        x = _shift_add(x, a, _DirectGaussian(outer).sample(n, rng))
    return to_int64(x).reshape(shape)
