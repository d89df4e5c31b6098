"""The exact samplers of :mod:`dpstats.noise.exact` for a few draws: the same algorithms on Python lists.

A release of one number (a mean, a count) needs one draw of discrete Laplace or Gaussian noise, but the vectorised
samplers of :mod:`dpstats.noise.exact` make dozens of NumPy calls on arrays of a few elements to get it, each
costing a microsecond or more whatever the size. Here the same samplers run on Python lists of Python integers:
only the uniform draws themselves go through NumPy, one ``rng.integers`` call per round as there.

**Bit for bit the same sampler.** Every function here mirrors the function of the same name in
:mod:`dpstats.noise._bernoulli` or :mod:`dpstats.noise.exact`: the same rounds over the same pending elements in
the same order, the same comparisons, and the same sequence of bounds passed to ``rng.integers``. NumPy's bounded
integers consume the bit generator draw by draw, each element by Lemire's method on its own bound, whether the
bounds come one call at a time, as an array of bounds, or as one bound with ``size=`` (the 32-bit half-words of a
64-bit draw are buffered in the bit generator itself, not in the call). So for the same ``rng`` state both
implementations return the same integers and leave ``rng`` in the same state; the test suite checks this on every
path, the rare ones forced (tests/test_small_samplers.py). A few consecutive draws with the same bound are fused
into one call (``size=2k`` instead of two calls of ``k``), which consumes the same draws in the same order.

Python integers have no int64 limits, so the int64 guards of the vectorised code (object arrays, limbs) change
nothing here but two things that decide *which draws* are made, mirrored exactly: the folding of ``1/k`` into a
shared denominator (only while the product fits in int64), and whether a Laplace attempt's value exceeds int64
(then the Gaussian acceptance takes its Python-integer way for the whole batch).
"""

from __future__ import annotations

from bisect import bisect_right
from fractions import Fraction

import numpy as np

from ._bernoulli import E1_SPAN, E1_TAU, INT64_MAX, big_uniform_below

__all__ = ["SMALL", "gaussian_sample", "laplace_sample"]

#: Draws up to which :func:`dpstats.noise.exact.discrete_laplace` and ``discrete_gaussian`` use this module (speed
#: only: both paths give the same draws). Measured crossover: the NumPy path wins from about 40 draws on.
SMALL = 24

_TAU = [int(t) for t in E1_TAU]  # 12!/j!, j = 12, ..., 2 (ascending)
_TAU_TOP = _TAU[-1]


# ----------------------------------------------------------------------------- uniform integers


class _Count(int):
    """A draw count passed as ``size=`` to ``rng.integers``, which computes ``np.prod(size)``: as an argument that
    overrides NumPy's functions (``__array_function__``), it answers ``np.prod`` itself, before NumPy's Python
    wrapper and generic reduction run (about a microsecond per call: a quarter of a small draw's time); NumPy's
    ``prod`` would also hand a non-array to its ``prod`` method, which returns it. Any other NumPy function given
    a count runs NumPy's own implementation. It is an ``int`` everywhere else; should NumPy stop dispatching, it
    is an ordinary size."""

    __slots__ = ()

    def __array_function__(self, func, types, args, kwargs):
        if func is np.prod and len(args) == 1 and not kwargs:
            return int(self)
        return func._implementation(*args, **kwargs)

    def prod(self, axis=None, dtype=None, out=None, **kwargs) -> int:
        return int(self)


_COUNTS = [_Count(m) for m in range(513)]
_COUNTED = len(_COUNTS)


def uniform(high: int, m: int, rng) -> list[int]:
    """``m`` uniform integers below the shared bound ``high`` (``_bernoulli.uniform_below`` with an int bound)."""
    if high > INT64_MAX:
        return [big_uniform_below(high, rng) for _ in range(m)]
    if m <= 1:  # a scalar call skips NumPy's array set-up (and consumes the same draw); from two on, one call
        return [int(rng.integers(0, high))] if m else []
    return rng.integers(0, high, size=_COUNTS[m] if m < _COUNTED else m).tolist()


def uniform_each(highs: list[int], rng) -> list[int]:
    """One uniform integer below each of ``highs`` (``_bernoulli.uniform_below`` with an array of bounds)."""
    if not highs:
        return []
    if max(highs) <= INT64_MAX:
        return rng.integers(0, np.array(highs, dtype=np.int64)).tolist()
    return [big_uniform_below(h, rng) for h in highs]


# ----------------------------------------------------------------------------- Bernoulli


def _round_factors(factors: list, k: int) -> list:
    """``_bernoulli.product_round``: a shared denominator is a Python int here, a per-element one a list."""
    if k == 1:
        return factors
    if factors and isinstance(factors[0][1], int) and factors[0][1] <= INT64_MAX // k:
        (p, q), *rest = factors
        return [(p, q * k), *rest]
    return [*factors, (1, k)]


def _rounds(factors: list, out: list[bool], pending: list[int] | None, k: int, rng) -> list[bool]:
    """Rounds ``k``, ``k + 1``, ... of CKS Algorithm 1 (``_bernoulli.bernoulli_exp_product``) for the elements
    ``pending`` (None: all of ``out``), writing each run's result into ``out``."""
    if len(factors) == 1 and isinstance(factors[0][1], int):
        return _rounds_shared(*factors[0], out, pending, k, rng)
    n = len(out)
    while pending is None or pending:
        for p, q in _round_factors(factors, k):
            if pending is None:
                pending = list(range(n))
                draws = uniform_each(q, rng) if isinstance(q, list) else uniform(q, n, rng)
            else:
                draws = (
                    uniform_each([q[i] for i in pending], rng) if isinstance(q, list) else uniform(q, len(pending), rng)
                )
            if isinstance(p, list):
                pending = [i for i, d in zip(pending, draws, strict=True) if d < p[i]]
            else:
                pending = [i for i, d in zip(pending, draws, strict=True) if d < p]
        if pending is None:  # x = 1: round 1 always passes
            pending = list(range(n))
        passed = k % 2 == 0  # the result if the run stops at round k + 1
        for i in pending:
            out[i] = passed
        k += 1
    return out


def _rounds_shared(p: list[int], q: int, out: list[bool], pending: list[int] | None, k: int, rng) -> list[bool]:
    """:func:`_rounds` for one factor p/q with a shared q (the common case): round k draws below q·k while that
    fits in int64, else below q and then below k (``_round_factors``)."""
    if pending is None:
        pending = list(range(len(out)))
        if k == 1:
            draws = uniform(q, len(pending), rng)
            pending = [i for i, d in zip(pending, draws, strict=True) if d < p[i]]
            for i in pending:
                out[i] = False  # passed round 1: the result if the run stops at round 2
            k = 2
    while pending:
        if q <= INT64_MAX // k:
            draws = uniform(q * k, len(pending), rng)
            pending = [i for i, d in zip(pending, draws, strict=True) if d < p[i]]
        else:
            draws = uniform(q, len(pending), rng)
            pending = [i for i, d in zip(pending, draws, strict=True) if d < p[i]]
            draws = uniform(k, len(pending), rng)
            pending = [i for i, d in zip(pending, draws, strict=True) if d < 1]
        passed = k % 2 == 0
        for i in pending:
            out[i] = passed
        k += 1
    return out


def bernoulli_exp_product(factors: list, n: int, rng, first_round: int = 1) -> list[bool]:
    """``_bernoulli.bernoulli_exp_product``: ``n`` draws of Bernoulli(exp(−Π p_i/q_i))."""
    return _rounds(factors, [(first_round - 1) % 2 == 0] * n, None, first_round, rng)


def _exp_minus_one_passes(w: list[int], rng) -> list[bool]:
    """``_bernoulli.bernoulli_exp_minus_one`` from its uniform draws ``w`` below 12!: the run stops at K = 2 + c,
    c = #{j : w < 12!/j!}, and passes iff c is odd, i.e. iff ``bisect_right(_TAU, w)`` (= 11 − c) is even; runs
    with w = 0 continue at round 13."""
    out = [not bisect_right(_TAU, v) & 1 for v in w]
    if 0 in w:
        rest = [i for i, v in enumerate(w) if v == 0]
        for i, b in zip(rest, bernoulli_exp_product([], len(rest), rng, first_round=13), strict=True):
            out[i] = b
    return out


def bernoulli_exp_minus_one(n: int, rng) -> list[bool]:
    """``_bernoulli.bernoulli_exp_minus_one``: ``n`` draws of Bernoulli(exp(−1)), rounds 2 to 12 from one draw."""
    return _exp_minus_one_passes(uniform(E1_SPAN, n, rng), rng)


def exp_minus_one_run(n: int, limit: list[int] | None, rng) -> list[int]:
    """``_bernoulli.exp_minus_one_run``: successes of Bernoulli(exp(−1)) before the first failure, capped at
    ``limit``. A round's runs pass as in :func:`_exp_minus_one_passes`, tested in line when no draw is 0 (a draw at
    or above the largest 12!/j! gives ``bisect_right`` = 11, odd: it fails without the search)."""
    count, rounds = [0] * n, 0
    active = list(range(n)) if limit is None else [i for i in range(n) if limit[i] > 0]
    while active:
        w = uniform(E1_SPAN, len(active), rng)
        if 0 in w:  # runs that continue at round 13
            active = [i for i, b in zip(active, _exp_minus_one_passes(w, rng), strict=True) if b]
        else:
            active = [i for i, v in zip(active, w, strict=True) if v < _TAU_TOP and not bisect_right(_TAU, v) & 1]
        rounds += 1
        for i in active:
            count[i] = rounds
        if limit is not None:
            active = [i for i in active if rounds < limit[i]]
    return count


def bernoulli_exp_unchecked(num: list[int], den: int, rng) -> list[bool]:
    """``_bernoulli.bernoulli_exp_unchecked`` with a shared ``den``: Bernoulli(exp(−num/den)) per element."""
    whole = [v // den for v in num]
    out = _rounds_shared([v - w * den for v, w in zip(num, whole, strict=True)], den, [True] * len(num), None, 1, rng)
    idx = [i for i, w in enumerate(whole) if w > 0 and out[i]]
    if idx:
        runs = exp_minus_one_run(len(idx), [whole[i] for i in idx], rng)
        for i, c in zip(idx, runs, strict=True):
            out[i] = c == whole[i]
    return out


# ----------------------------------------------------------------------------- discrete Laplace


def laplace_attempts(t: int, s: int, k: int, rng) -> tuple[list[int], list[bool], bool]:
    """``exact._laplace_attempts``: the values Z of the attempts that pass steps 2–5 of CKS Algorithm 2, which of
    them are accepted, and whether a value exceeds int64 (where the vectorised code holds them as Python ints)."""
    y, signs = _laplace_magnitudes(t, s, k, rng)
    z = [-a if b else a for a, b in zip(y, signs, strict=True)]
    accepted = [a != 0 or b == 0 for a, b in zip(y, signs, strict=True)]
    return z, accepted, max(y, default=0) > INT64_MAX


def _laplace_magnitudes(t: int, s: int, k: int, rng) -> tuple[list[int], list[int]]:
    """Y and the sign draws B of the attempts of :func:`laplace_attempts` that pass steps 2–5.

    U and the first round of its Bernoulli(exp(−U/t)) are both ``k`` draws below ``t``, consecutive: one call."""
    w = uniform(t, 2 * k, rng)
    u = w[:k]
    out = [True] * k  # the result of a run that stops at round 1
    passed = [i for i, a, b in zip(range(k), u, w[k:], strict=True) if b < a]
    for i in passed:
        out[i] = False  # the result of a run that stops at round 2
    _rounds_shared(u, t, out, passed, 2, rng)
    u = [v for v, b in zip(u, out, strict=True) if b]
    v = exp_minus_one_run(len(u), None, rng)
    if s == 1:
        y = [a + t * b if b else a for a, b in zip(u, v, strict=True)]
    else:
        y = [(a + t * b) // s for a, b in zip(u, v, strict=True)]
    return y, uniform(2, len(u), rng)


def _laplace_batch(t: int, s: int, k: int, rng) -> list[int]:
    """The accepted values among ``k`` attempts (as :func:`laplace_attempts`, without the lists it returns)."""
    y, signs = _laplace_magnitudes(t, s, k, rng)
    return [-a if b else a for a, b in zip(y, signs, strict=True) if a or not b]


def _rejection_fill(n: int, batch, rate: Fraction, batch_max: int) -> list[int]:
    """``exact._rejection_fill``: the first ``n`` accepted proposals, in batches of the same sizes."""
    out, tried = [], 0
    while len(out) < n:
        need, have = n - len(out), len(out)
        k = (need * rate.denominator // rate.numerator if have == 0 else need * tried // have) + need // 64 + 16
        k = min(k, batch_max)
        out += batch(k)
        tried += k
    return out[:n]


def laplace_sample(t: int, s: int, n: int, rate: Fraction, batch_max: int, rng) -> list[int]:
    """``n`` draws of ``exact.discrete_laplace`` for the reduced scale t/s."""
    return _rejection_fill(n, lambda k: _laplace_batch(t, s, k, rng), rate, batch_max)


# ----------------------------------------------------------------------------- discrete Gaussian


def _accept_rational(g, abs_y: list[int], rng) -> list[bool]:
    """Ways 1 and 3 of ``exact._DirectGaussian``: Bernoulli(exp(−u²/Q)), u = |Y|·L − num."""
    u = [y * g.L - g.num for y in abs_y]
    return bernoulli_exp_unchecked([a * a for a in u], g.Q, rng)


def _way_factored(g, abs_y: list[int], todo: list[int], out: list[bool], rng) -> list[int]:
    """Way 2 of ``exact._DirectGaussian`` for the elements ``todo``; returns the others."""
    num, den, L = g.num, g.den, g.L
    idx, ms, ws, rest = [], [], [], []
    for i in todo:
        y = abs_y[i]
        w = abs(min(y, g.y_factored) * L - num)
        m = w // L
        if m <= g.m_factored and y <= g.y_factored:
            idx.append(i)
            ms.append(m)
            ws.append(w)
        else:
            rest.append(i)
    ok = bernoulli_exp_unchecked([m * m * den for m in ms], 2 * num, rng)
    sel = [j for j, b in enumerate(ok) if b]
    ms, ws = [ms[j] for j in sel], [ws[j] for j in sel]
    f = [w - m * L for m, w in zip(ms, ws, strict=True)]
    factors = [
        ([(2 * m + 1) * den for m in ms], 2 * num),
        (f, L),
        ([2 * m * L + e for m, e in zip(ms, f, strict=True)], [(2 * m + 1) * L for m in ms]),
    ]
    for j, b in zip(sel, bernoulli_exp_product(factors, len(sel), rng), strict=True):
        ok[j] = b
    for i, b in zip(idx, ok, strict=True):
        out[i] = b
    return rest


def _accept(g, abs_y: list[int], big: bool, rng) -> list[bool]:
    """``exact._DirectGaussian.accept``: each element by the first way whose numbers fit in int64."""
    if big or max(abs_y, default=0) <= g.y_rational:
        return _accept_rational(g, abs_y, rng)
    out = [False] * len(abs_y)
    if g.y_rational < 0:
        todo = list(range(len(abs_y)))
    else:
        fit = [i for i, y in enumerate(abs_y) if y <= g.y_rational]
        for i, b in zip(fit, _accept_rational(g, [abs_y[i] for i in fit], rng), strict=True):
            out[i] = b
        todo = [i for i, y in enumerate(abs_y) if y > g.y_rational]
    rest = _way_factored(g, abs_y, todo, out, rng)
    if rest:
        for i, b in zip(rest, _accept_rational(g, [abs_y[i] for i in rest], rng), strict=True):
            out[i] = b
    return out


def _gaussian_batch(g, k: int, rng) -> list[int]:
    """``exact._DirectGaussian._batch``: Lap_Z(t) proposals that pass Algorithm 3's test."""
    z, accepted, big = laplace_attempts(g.t, 1, k, rng)
    ok = _accept(g, [abs(v) for v in z], big, rng)
    return [v for v, a, b in zip(z, accepted, ok, strict=True) if a and b]


def gaussian_sample(g, n: int, rate: Fraction, batch_max: int, rng) -> list[int]:
    """``exact._DirectGaussian.sample``: ``n`` draws of N_Z(0, σ²) for the direct sampler ``g``."""
    return _rejection_fill(n, lambda k: _gaussian_batch(g, k, rng), rate, batch_max)
