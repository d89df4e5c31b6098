"""Eigenvalues of a symmetric floating-point matrix within a public allowance of the exact ones, never refused.

A release that adds noise to the eigenvalues of A (Amin et al.'s covariance) needs every computed eigenvalue
within a *public* allowance β of the exact eigenvalue of A: the allowance enters the sensitivity, so it must not
depend on the data, and neither may whether the call releases. LAPACK's symmetric eigensolvers are backward stable
(errors of a few d·u·‖A‖₂ in practice), but no rigorous constant is published for them, so the error of a computed
decomposition is *verified* (:func:`verified_eigen_error`) — and when a verification cannot show it within β, the
eigenvalues are computed again, in higher precision, until one can (:func:`certified_eigenvalues`). So the values
returned are always within β of the exact ones, and the call always releases; only its running time can depend on
the data (outside the threat model, like a rejection sampler's).

**The verification.** For computed eigenpairs (W, V), R = AV − VW and G = VᵀV − I with ‖G‖₂ <= g < 1, every
eigenvalue of A (sorted) is within (2g·‖W − cI‖₂ + ‖R‖₂)/(1 − g) of the matching one of W, for any shift c (polar
decomposition V = QH, Weyl's inequality on QᵀAQ − W; :func:`verified_eigen_error`). g and ‖R‖ are tiny for a
good decomposition (about d·u and d·u·‖A‖), but a bound of their *computation's* rounding error by the usual
γ_d·|X||Y| is not: for rank-one data it reaches d²·u·‖A‖ for the g-term, beyond any allowance of order d^1.5·u·‖A‖
(issue 39: a rank-one data set and its neighbour were released or refused depending on it). So R and G are computed
*exactly* up to a negligible remainder: every factor is split into two b-bit slices and a remainder (Ozaki, Ogita,
Oishi & Rump 2012), b = ⌊(53 − ⌈log₂ d⌉)/2⌋, so that the products of slices are exact in any BLAS summation order;
VW is formed with error-free products (Dekker), and the exact pieces are added by a cascade of error-free sums
(Ogita, Rump & Oishi 2005, Sum2), whose result is within u|Σ| + γ²_{k−1}·Σ|pieces| of the exact sum. What remains
(the remainders' products, bounded by norms) is below 2^-3b relative. The verified bound is then within a few per
cent of the true error.

**The fallback.** If LAPACK's decomposition does not verify within β (never seen: the verified error of LAPACK's
``dsyevr`` on rank-one, all-equal, random and MNIST data stays below 1 % of β), the eigenpairs are computed by
mpmath at 106 bits, then 212, … (:func:`_precise_eigenvalues`), and verified in exact integer arithmetic, until
the bound is within β. Symmetric eigenvalue algorithms are backward stable, so the error falls with the precision
and the loop ends; it is slow (about a minute at d = 100, hours at d = 784), but it is never a refusal.

References
----------
K. Ozaki, T. Ogita, S. Oishi & S. M. Rump, "Error-free transformations of matrix multiplication by using fast
routines of matrix multiplication and its applications", Numer. Algorithms 59, 2012.
T. Ogita, S. M. Rump & S. Oishi, "Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005.
N. J. Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002 (§3.5, Theorem 3.5).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._rounding import UNIT_ROUNDOFF, gamma
from .blocks import single_threaded_blas

__all__ = ["certified_eigenvalues", "verified_eigen_error"]

#: Lowest exponent of a slice's scale: the slices of rows below 2^-900 go to the remainder, so that no product of
#: slices is subnormal (whose rounding would not be exact).
_MIN_EXPONENT = -900
#: A bound on the error of one floating-point operation that underflows (2^-1074 is the smallest subnormal).
_TINY = 2.0**-1070
_SPLITTER = 134217729.0  # 2^27 + 1: Veltkamp's splitting of a double into two halves of 26 bits
_FIRST_PRECISION = 106  # bits of the first fallback (double-double)


def certified_eigenvalues(A: np.ndarray, allowance: float, norm_bound: float) -> np.ndarray:
    """The eigenvalues of the symmetric float matrix ``A`` (ascending), each within ``allowance`` of the exact
    eigenvalue of A of the same rank; LAPACK's when their verified error is within it, otherwise computed in higher
    precision until it is (module docstring).

    ``norm_bound`` is a public bound of ‖A‖₂ (for a Gram matrix: N·m·R² plus its rounding); the allowance must be at
    least 2^-52·norm_bound, the rounding of the eigenvalues to doubles (a ValueError otherwise: a check on public
    values, made before anything is computed). Then this never fails, whatever A."""
    from scipy.linalg import eigh

    if not allowance >= 2.0**-52 * norm_bound:
        raise ValueError(
            f"allowance {allowance!r} is below the rounding of eigenvalues of size up to {norm_bound!r} to doubles"
        )
    with single_threaded_blas():  # threaded BLAS gains little on a few cores and loses much when they are shared
        values, vectors = eigh(A)
        if verified_eigen_error(A, values, vectors) <= allowance:
            return values
    return _precise_eigenvalues(A, allowance)


def verified_eigen_error(A: np.ndarray, values: np.ndarray, vectors: np.ndarray) -> float:
    """A proven bound β with |λ_(i)(A) − values_(i)| <= β for every i (both sorted), from eigenpairs (values,
    vectors) of the symmetric float matrix A (module docstring); infinity when ‖VᵀV − I‖₂ cannot be shown below
    1/2."""
    d = A.shape[0]
    residual, residual_error = _residual(A, values, vectors)
    gram, gram_error = _orthogonality(vectors)
    grow = 1.0 + 2.0 * gamma(d * d + 2)  # the Frobenius norms' own rounding
    r = (_frobenius(residual, residual_error) + residual_error.extra) * grow
    g = (_frobenius(gram, gram_error) + gram_error.extra) * grow
    if not g < 0.5:
        return math.inf
    shift = (float(values.max()) + float(values.min())) / 2.0
    spread = float(np.abs(values - shift).max()) * (1.0 + 4.0 * UNIT_ROUNDOFF)
    return math.nextafter((2.0 * g * spread + r) / (1.0 - g) * (1.0 + 8.0 * UNIT_ROUNDOFF), math.inf)


# ----------------------------------------------------------------------------- exact pieces of products


class _Bound:
    """The error of a matrix computed as a sum of pieces: entrywise (``entries``, a non-negative array) plus a
    bound ``extra`` on the Frobenius norm of the rest."""

    def __init__(self, entries: np.ndarray, extra: float) -> None:
        self.entries, self.extra = entries, extra


def _frobenius(matrix: np.ndarray, bound: _Bound) -> float:
    """An upper bound of ‖M‖_F for every M within ``bound`` of ``matrix`` (before the norm's own rounding)."""
    return float(np.linalg.norm(np.abs(matrix) + bound.entries))


def _slice_bits(d: int) -> int:
    """b such that a sum of d products of two integers of b bits stays below 2^53 (exact in any order)."""
    return (53 - max(1, math.ceil(math.log2(max(d, 2))))) // 2


def _slices(X: np.ndarray, exponents: np.ndarray, bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X = X1 + X2 + Xr exactly, row i of X1 integers of at most ``bits`` bits times 2^(e_i − b), of X2 times
    2^(e_i − 2b), |Xr| <= 2^(e_i − 2b − 1), for exponents e_i with |X_ij| <= 2^e_i (each step exact: the grid is
    coarser than the entries' last bits)."""
    e = exponents.reshape(-1, 1)
    first = np.ldexp(np.rint(np.ldexp(X, bits - e)), e - bits)
    rest = X - first
    second = np.ldexp(np.rint(np.ldexp(rest, 2 * bits - e)), e - 2 * bits)
    return first, second, rest - second


def _row_exponents(X: np.ndarray) -> np.ndarray:
    """e_i = ⌈log₂ max_j |X_ij|⌉, at least :data:`_MIN_EXPONENT`."""
    top = np.abs(X).max(axis=1)
    _, exponent = np.frexp(top)  # top = f·2^exponent with 1/2 <= f < 1, so top <= 2^exponent
    return np.maximum(np.where(top > 0, exponent, _MIN_EXPONENT), _MIN_EXPONENT).astype(np.int64)


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """s + e = a + b exactly, s = fl(a + b) (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _halves(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = _SPLITTER * a
    high = c - (c - a)
    return high, a - high


def _two_product(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """p + e = a·b exactly (Dekker), p = fl(a·b), but for an underflow of at most :data:`_TINY` in e."""
    p = a * b
    ah, al = _halves(a)
    bh, bl = _halves(b)
    return p, al * bl - (((p - ah * bh) - al * bh) - ah * bl)


def _accurate_sum(pieces: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(S, B): the sum of the pieces by a cascade of error-free sums (Sum2), and B >= |S − Σ pieces| entrywise:
    u|S| + γ²_{k−1}Σ|pieces| (Ogita, Rump & Oishi 2005, Proposition 4.5), each rounded up."""
    total, carried = pieces[0], np.zeros_like(pieces[0])
    for piece in pieces[1:]:
        total, error = _two_sum(total, piece)
        carried = carried + error
    result = total + carried
    k = len(pieces)
    magnitude = sum(np.abs(p) for p in pieces) * (1.0 + gamma(k))
    bound = (2.0 * UNIT_ROUNDOFF) * np.abs(result) + (2.0 * gamma(k) ** 2) * magnitude + k * _TINY
    return result, bound


def _product_pieces(left: tuple, right: tuple, d: int) -> tuple[list[np.ndarray], float]:
    """The pieces of L·R from the slices (L1, L2, Lr) and (R1, R2, Rr): the four products of slices (exact), and
    fl(L1·Rr), fl(Lr·R1) (rounded); and a bound on the Frobenius norm of what they leave out: those two products'
    rounding (γ_d‖·‖_F‖·‖_F, with the underflow of d products) and L2·Rr + Lr·R2 + Lr·Rr."""
    (l1, l2, lr), (r1, r2, rr) = left, right
    pieces = [l1 @ r1, l1 @ r2, l2 @ r1, l2 @ r2, l1 @ rr, lr @ r1]
    norm = np.linalg.norm
    n_l1, n_l2, n_lr, n_r1, n_r2, n_rr = (float(norm(x)) for x in (l1, l2, lr, r1, r2, rr))
    rounded = gamma(d) * (n_l1 * n_rr + n_lr * n_r1) + 2.0 * d * _TINY * math.sqrt(l1.shape[0] * r1.shape[1])
    left_out = n_l2 * n_rr + n_lr * n_r2 + n_lr * n_rr
    return pieces, (rounded + left_out) * (1.0 + 2.0 * gamma(d * d + 2))


def _vector_slices(V: np.ndarray, bits: int) -> tuple:
    """V's slices on one scale for every entry (|V| <= 2^e, e from the largest entry)."""
    _, exponent = np.frexp(np.abs(V).max(initial=0.0))
    exponents = np.full(V.shape[0], max(int(exponent), _MIN_EXPONENT), dtype=np.int64)
    return _slices(V, exponents, bits)


def _residual(A: np.ndarray, values: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, _Bound]:
    """AV − V·diag(values) and the bound of its error."""
    d = A.shape[0]
    bits = _slice_bits(d)
    pieces, left_out = _product_pieces(_slices(A, _row_exponents(A), bits), _vector_slices(V, bits), d)
    p, e = _two_product(V, np.broadcast_to(values, V.shape))
    total, bound = _accurate_sum([pieces[0], -p, *pieces[1:], -e])
    return total, _Bound(bound + 2.0 * _TINY, left_out)


def _orthogonality(V: np.ndarray) -> tuple[np.ndarray, _Bound]:
    """VᵀV − I and the bound of its error."""
    d = V.shape[0]
    bits = _slice_bits(d)
    first, second, rest = _vector_slices(V, bits)
    transposed = (first.T, second.T, rest.T)
    pieces, left_out = _product_pieces(transposed, (first, second, rest), d)
    total, bound = _accurate_sum([pieces[0], -np.eye(V.shape[1]), *pieces[1:]])
    return total, _Bound(bound, left_out)


# ----------------------------------------------------------------------------- the fallback


def _precise_eigenvalues(A: np.ndarray, allowance: float) -> np.ndarray:
    """Eigenvalues of A within ``allowance`` of the exact ones: mpmath's eigensolver at 106, 212, … bits, each
    result verified exactly (:func:`_exact_eigen_error`), rounded to double (its rounding counted), until one is
    within the allowance."""
    import mpmath

    precision = _FIRST_PRECISION
    while True:
        with mpmath.workprec(precision):
            values, vectors = mpmath.eigsy(mpmath.matrix(A.tolist()))
            values = [values[i] for i in range(A.shape[0])]
            vectors = [[vectors[i, j] for j in range(A.shape[0])] for i in range(A.shape[0])]
        floats = np.array([float(v) for v in values])
        rounding = max(abs(Fraction(float(v)) - _fraction(v)) for v in values)
        error = _exact_eigen_error(A, values, vectors)
        if error is not None and error + rounding <= Fraction(allowance):
            return np.sort(floats)
        precision *= 2


def _fraction(x) -> Fraction:
    """An mpmath number as an exact Fraction (from its raw (sign, mantissa, exponent, bits))."""
    sign, mantissa, exponent, _ = x._mpf_
    return (-1) ** sign * Fraction(int(mantissa)) * Fraction(2) ** int(exponent)


def _integers(fractions: list[Fraction]) -> tuple[list[int], int]:
    """Dyadic fractions as integers over one power of two: (I, s) with x = I / 2^s."""
    shift = max((f.denominator.bit_length() - 1 for f in fractions), default=0)
    return [int(f * (1 << shift)) for f in fractions], shift


def _exact_eigen_error(A: np.ndarray, values: list, vectors: list) -> Fraction | None:
    """:func:`verified_eigen_error`'s bound for mpmath eigenpairs, with R and G computed exactly (integers) and the
    norms bounded above exactly; None when ‖VᵀV − I‖_F is not below 1/2."""
    d = A.shape[0]
    a, sa = _integers([Fraction(float(x)) for x in A.ravel()])
    v, sv = _integers([_fraction(x) for row in vectors for x in row])
    w, sw = _integers([_fraction(x) for x in values])
    a = np.array(a, dtype=object).reshape(d, d)
    v = np.array(v, dtype=object).reshape(d, d)
    w = np.array(w, dtype=object)
    # R·2^(sa+sv+sw) = (A V)·2^sw − (V W)·2^sa, exactly
    residual = a.dot(v) * (1 << sw) - v * w.reshape(1, d) * (1 << sa)
    gram = v.T.dot(v) - np.eye(d, dtype=np.int64).astype(object) * (1 << (2 * sv))
    r = _sqrt_up(sum(int(x) * int(x) for x in residual.ravel())) / Fraction(2) ** (sa + sv + sw)
    g = _sqrt_up(sum(int(x) * int(x) for x in gram.ravel())) / Fraction(2) ** (2 * sv)
    if not g < Fraction(1, 2):
        return None
    exact = [Fraction(int(x)) / Fraction(2) ** sw for x in w]
    shift = (max(exact) + min(exact)) / 2
    spread = max(abs(x - shift) for x in exact)
    return (2 * g * spread + r) / (1 - g)


def _sqrt_up(n: int) -> Fraction:
    """An upper bound of √n for an integer n >= 0 (exact when n is a square)."""
    root = math.isqrt(n)
    return Fraction(root if root * root == n else root + 1)
