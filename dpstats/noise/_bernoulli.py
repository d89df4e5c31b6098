"""Exact building blocks of the integer noise: uniform integers of any size and Bernoulli draws.

Every draw here is exact: the only source of randomness is ``rng.integers(0, high)``, an unbiased uniform integer
in ``[0, high)`` (NumPy's ``Generator.integers`` uses Lemire's rejection method, so it is exact for every
``high``), and every decision compares such an integer with an exact integer. The samplers of
:mod:`dpstats.noise.exact` (discrete Laplace and Gaussian) and the exponential mechanism of
:func:`dpstats.quantile` are built from them. The algorithms are those of Canonne, Kamath & Steinke (NeurIPS 2020,
arXiv:2004.00010), cited as CKS with their algorithm numbers.

Arrays are ``int64``. Every product is bounded before it is formed; an element whose values could leave the int64
range is finished with the same code on ``object`` arrays of Python integers (exact at any size, only slower), and
uniform draws beyond 2**63 are assembled from 62-bit limbs (:func:`big_uniform_below`).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import check_int
from ..exceptions import ParameterError

__all__ = [
    "E1_SPAN",
    "E1_TAU",
    "INT64_MAX",
    "bernoulli_exp",
    "bernoulli_exp_product",
    "bernoulli_exp_unchecked",
    "bernoulli_rational",
    "exp_minus_one_run",
    "output_shape",
    "to_int64",
    "uniform_below",
]

INT64_MAX = 2**63 - 1
_LIMB_BITS = 62  # limbs for uniform integers beyond int64 (rng.integers(0, 2**62))


# ----------------------------------------------------------------------------- validation


def int_array(value, name: str) -> np.ndarray:
    """``value`` (integer array-like) as an int64 array, or a ParameterError naming ``name``."""
    arr = np.asarray(value)
    if arr.dtype == object:  # Python ints too large for int64, or mixed content
        try:
            arr = arr.astype(np.int64)
        except (OverflowError, TypeError, ValueError) as err:
            raise ParameterError(f"{name} must be integers in the int64 range; got {value!r}") from err
    if arr.dtype.kind not in "iu" or (arr.dtype.kind == "u" and arr.size and arr.max() > INT64_MAX):
        raise ParameterError(f"{name} must be an integer array (int64 range); got dtype {arr.dtype}")
    return arr.astype(np.int64, copy=False)


def broadcast_pair(num, den) -> tuple[np.ndarray, np.ndarray | int, tuple[int, ...]]:
    """``num`` and ``den`` broadcast and flattened (int64), and their broadcast shape; a scalar ``den`` stays a
    Python int (one shared bound: faster uniform draws)."""
    num, den = int_array(num, "num"), int_array(den, "den")
    if den.ndim == 0:
        return num.ravel(), int(den), num.shape
    num, den = np.broadcast_arrays(num, den)
    return num.ravel(), den.ravel(), num.shape


def output_shape(size) -> tuple[int, ...]:
    """The output shape for ``size`` (None, an int >= 0 or a tuple of them)."""
    if size is None:
        return ()
    if isinstance(size, numbers.Integral):
        size = (size,)
    if not isinstance(size, tuple | list):
        raise ParameterError(f"size must be None, an int >= 0 or a tuple of them; got {size!r}")
    return tuple(check_int(s, "size", low=0) for s in size)


def to_int64(values: np.ndarray) -> np.ndarray:
    """``values`` as int64; OverflowError if an (astronomically rare) sample is outside the int64 range."""
    if values.dtype == object:
        if any(not -INT64_MAX <= v <= INT64_MAX for v in values):
            raise OverflowError(
                "a sample exceeded the int64 range (see the sampler's docstring for how rare "
                "this is); choose a smaller scale or a coarser grid"
            )
        return values.astype(np.int64)
    return values


# ----------------------------------------------------------------------------- uniform integers


def uniform_below(high, n: int, rng) -> np.ndarray:
    """Uniform integers in ``[0, high)``: ``n`` of them for an int ``high``, one per element for an array.

    int64 bounds use ``rng.integers`` directly; an ``object`` array or an int
    above 2**63 − 1 draws each element with :func:`big_uniform_below`.
    """
    if isinstance(high, np.ndarray):
        if high.dtype != object:
            return rng.integers(0, high)
        return np.array([big_uniform_below(int(h), rng) for h in high], dtype=object)
    if high <= INT64_MAX:
        return rng.integers(0, high, size=n)
    return np.array([big_uniform_below(high, rng) for _ in range(n)], dtype=object)


def big_uniform_below(high: int, rng) -> int:
    """One uniform integer in ``[0, high)`` for any Python int ``high >= 1``.

    Proof: ``r`` assembled from ``k`` independent uniform 62-bit limbs is
    uniform on ``[0, 2^(62k))``. Conditioned on ``r < limit``, where ``limit``
    is the largest multiple of ``high`` not above ``2^(62k)``, ``r`` is uniform
    on ``[0, limit)`` and so ``r mod high`` is uniform on ``[0, high)``. With
    one limb more than ``high`` needs, a round is rejected with probability
    below 2**-62, so the loop ends.
    """
    if high <= INT64_MAX:
        return int(rng.integers(0, high))
    limbs = -(-high.bit_length() // _LIMB_BITS) + 1
    span = 1 << (_LIMB_BITS * limbs)
    limit = span - span % high
    while True:
        r = 0
        for limb in rng.integers(0, 1 << _LIMB_BITS, size=limbs):
            r = (r << _LIMB_BITS) | int(limb)
        if r < limit:
            return r % high


def elements_at(value, idx: np.ndarray | None):
    """``value[idx]`` for a per-element array (``idx=None``: all of it), ``value`` itself for a shared scalar."""
    return value[idx] if isinstance(value, np.ndarray) and idx is not None else value


# ----------------------------------------------------------------------------- Bernoulli


def bernoulli_rational(num, den, rng) -> np.ndarray:
    """Exact Bernoulli(num/den) draws.

    Parameters
    ----------
    num, den : array_like of int
        Integers (int64 range), broadcastable against each other, with
        ``0 <= num <= den`` and ``den >= 1``.
    rng : numpy.random.Generator
        Source of randomness; only ``rng.integers(0, high)`` is called.

    Returns
    -------
    numpy.ndarray of bool
        One draw per element of the broadcast shape of ``num`` and ``den``.

    Notes
    -----
    Proof: ``U = rng.integers(0, den)`` is uniform on ``{0, ..., den − 1}``, so
    ``P(U < num) = num/den`` exactly. No product is formed, so nothing can
    overflow.

    References
    ----------
    Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020 (arXiv:2004.00010), Section 5.
    """
    num, den, shape = broadcast_pair(num, den)
    if np.any(den < 1):
        raise ParameterError(f"den must be >= 1 everywhere; got minimum {np.min(den)}")
    if np.any((num < 0) | (num > den)):
        raise ParameterError("num must satisfy 0 <= num <= den everywhere; got num outside [0, den]")
    return (uniform_below(den, num.size, rng) < num).reshape(shape)


def product_round(factors: list, k: int) -> list:
    """The factors of Bernoulli(x/k) for x = Π p/q: ``factors`` plus 1/k, folded into the first scalar q when
    that stays in int64 (one draw fewer: U < p with U uniform below q·k has probability p/(qk))."""
    if k == 1:
        return factors
    if factors and not isinstance(factors[0][1], np.ndarray) and factors[0][1] <= INT64_MAX // k:
        (p, q), *rest = factors
        return [(p, q * k), *rest]
    return [*factors, (1, k)]


def bernoulli_exp_product(factors: list, n: int, rng, first_round: int = 1) -> np.ndarray:
    """``n`` draws of Bernoulli(exp(−x)) for ``x = Π_i p_i/q_i`` in [0, 1]: CKS Algorithm 1.

    ``factors`` is a list of pairs ``(p_i, q_i)`` with ``0 <= p_i <= q_i`` and
    ``q_i >= 1``; each is an int (shared) or an array of length ``n`` (int64 or
    object). An empty list means ``x = 1``. ``first_round > 1`` continues runs
    known to have passed rounds 1 to ``first_round − 1``.

    Proof (CKS Algorithm 1 and Proposition 5): with K the first k >= 1 at which
    Bernoulli(x/k) fails, P(K > k) = x^k/k!, hence
    P(K odd) = Σ_{k odd} (x^(k−1)/(k−1)! − x^k/k!) = Σ_j (−x)^j/j! = e^(−x),
    which needs x/k <= 1, i.e. x <= 1. Bernoulli(x/k) is the AND of the
    independent Bernoulli(p_i/q_i) and Bernoulli(1/k) (its probability is the
    product), each an exact comparison ``U < p`` with ``U`` uniform below ``q``.
    Round k draws only for the elements still pending, which all share k, and
    within a round the factors are drawn one after another for the survivors
    only; K is geometric-like (P(K > k) <= 1/k!), so the rounds end fast.
    """
    out = np.full(n, (first_round - 1) % 2 == 0)  # the result if the run stops at round first_round
    idx, k = None, first_round  # idx: the elements still running (None: all of them, in the first round)
    while idx is None or idx.size:
        for p, q in product_round(factors, k):
            hit = uniform_below(elements_at(q, idx), n if idx is None else idx.size, rng) < elements_at(p, idx)
            idx = np.flatnonzero(hit) if idx is None else np.compress(hit, idx)
        if idx is None:  # x = 1: round 1 always passes
            idx = np.arange(n)
        out[idx] = k % 2 == 0  # passed round k: the result if the run stops at round k + 1
        k += 1
    return out


# Bernoulli(e^(−1)) reads rounds 2..12 of CKS Algorithm 1 off one uniform draw below 12! (see below).
E1_SPAN = math.factorial(12)
E1_TAU = np.array([E1_SPAN // math.factorial(j) for j in range(12, 1, -1)])  # τ_j = 12!/j!, ascending


def bernoulli_exp_minus_one(n: int, rng) -> np.ndarray:
    """``n`` draws of Bernoulli(exp(−1)): CKS Algorithm 1 with x = 1, rounds 2 to 12 from one uniform draw.

    Proof: with x = 1 round 1 always passes and round k passes with
    probability 1/k. A uniform W on [0, 12!) is, in the mixed radix with
    place values 12!/j! (j = 2, ..., 12), a tuple of independent digits
    d_j uniform on [0, j) (a bijection: the digits below place j sum to less
    than 12!/j!). Let round j pass iff d_j = 0 (probability 1/j). Then rounds
    2..j all pass iff d_2 = ... = d_j = 0 iff W < τ_j = 12!/j!. For W >= 1 the
    run stops at K = 2 + c, c = #{j in 2..12 : W < τ_j}, and the result is
    "K odd" = "c odd"; for W >= τ_5 only j <= 4 can count, so c's parity is
    the XOR of three comparisons, and the 1/120 of draws below τ_5 use the
    full count. W = 0 (probability 1/12!) means rounds 2..12 all passed: those
    runs continue at round 13 (:func:`bernoulli_exp_product`).
    """
    w = uniform_below(E1_SPAN, n, rng)
    out = (w < E1_TAU[-1]) ^ (w < E1_TAU[-2]) ^ (w < E1_TAU[-3])
    deep = np.flatnonzero(w < E1_TAU[-4])
    if deep.size:
        out[deep] = (len(E1_TAU) - np.searchsorted(E1_TAU, w[deep], side="right")) % 2 == 1
        rest = deep[w[deep] == 0]
        if rest.size:
            out[rest] = bernoulli_exp_product([], rest.size, rng, first_round=13)
    return out


def exp_minus_one_run(n: int, limit, rng) -> np.ndarray:
    """For ``n`` independent sequences of Bernoulli(exp(−1)) draws: how many succeed before the first failure.

    With ``limit`` (an array of length ``n``) a sequence stops after
    ``limit`` successes, so the count is ``min(V, limit)`` with
    ``P(V >= v) = e^(−v)``; ``limit=None`` returns V itself, a geometric
    variable (CKS Algorithm 2, steps 6–9). Each round draws one
    Bernoulli(exp(−1)) for the sequences still running; P(still running
    after r rounds) <= e^(−r).
    """
    count, rounds = np.zeros(n, dtype=np.int64), 0
    active = np.arange(n) if limit is None else np.flatnonzero(limit > 0)
    while active.size:
        active = np.compress(bernoulli_exp_minus_one(active.size, rng), active)
        rounds += 1
        count[active] = rounds  # the sequences still running have succeeded in every round
        if limit is not None:
            active = np.compress(count[active] < limit[active], active)
    return count


def bernoulli_exp_unchecked(num: np.ndarray, den, rng) -> np.ndarray:
    """Bernoulli(exp(−num/den)) per element of ``num`` (int64 or object array); ``den`` an int or such an array.

    Proof (CKS Section 5, "γ > 1"): with w = floor(γ) and r = γ − w,
    e^(−γ) = (e^(−1))^w · e^(−r), so the draw is the AND of an Algorithm-1 draw
    for r = (num mod den)/den <= 1 and of w independent Bernoulli(exp(−1))
    draws; the latter are evaluated only where the former succeeded and stop at
    the first failure (``min(V, w) == w`` iff all w succeed), which leaves the
    distribution of the AND unchanged and needs on average at most
    1/(1 − e^(−1)) < 1.6 draws. ``num − whole·den`` never exceeds ``num``.
    """
    whole = num // den
    out = bernoulli_exp_product([(num - whole * den, den)], num.size, rng)
    idx = np.flatnonzero(out & (whole > 0))
    if idx.size:
        out[idx] = exp_minus_one_run(idx.size, whole[idx], rng) == whole[idx]
    return out


def bernoulli_exp(num, den, rng) -> np.ndarray:
    """Exact Bernoulli(exp(−num/den)) draws.

    Parameters
    ----------
    num, den : array_like of int
        Integers (int64 range), broadcastable against each other, with
        ``num >= 0`` and ``den >= 1``: the draw succeeds with probability
        ``exp(−γ)``, ``γ = num/den``.
    rng : numpy.random.Generator
        Source of randomness; only ``rng.integers(0, high)`` is called.

    Returns
    -------
    numpy.ndarray of bool
        One draw per element of the broadcast shape of ``num`` and ``den``.

    Notes
    -----
    For γ in [0, 1] this is CKS Algorithm 1; for γ > 1 it is the AND of
    floor(γ) draws of Bernoulli(exp(−1)), stopping at the first failure, and
    one draw of Bernoulli(exp(−(γ − floor γ))). Proofs beside
    :func:`bernoulli_exp_product` and :func:`bernoulli_exp_unchecked`. Round k of
    Algorithm 1 needs Bernoulli(r/(den·k)); it draws below ``den·k`` when that
    fits in int64 and otherwise draws Bernoulli(r/den) and Bernoulli(1/k)
    separately, so no product leaves the int64 range.

    References
    ----------
    Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy",
    NeurIPS 2020 (arXiv:2004.00010), Algorithm 1 and Section 5.
    """
    num, den, shape = broadcast_pair(num, den)
    if np.any(num < 0):
        raise ParameterError(f"num must be >= 0 everywhere; got minimum {num.min()}")
    if np.any(den < 1):
        raise ParameterError(f"den must be >= 1 everywhere; got minimum {np.min(den)}")
    return bernoulli_exp_unchecked(num, den, rng).reshape(shape)
