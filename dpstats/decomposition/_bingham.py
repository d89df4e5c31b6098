"""Samplers for the Bingham distribution on the sphere and the matrix Bingham on the Stiefel manifold.

* :func:`sample_vector_bingham` draws **exactly** from the density on the unit
  sphere S^{q−1} ∝ ``exp(Σ λ_i y_i²)`` (a diagonal parameter), and
  :func:`sample_bingham` from ∝ ``exp(zᵀMz)`` for a general M, by rejection from
  an angular central Gaussian envelope (Kent, Ganeiber & Mardia 2018) in which
  every decision is taken on exact intervals: exact normal proposals, a
  certified envelope and an acceptance test decided from rigorous bounds,
  refined with exact rational arithmetic when floating point cannot decide
  (:mod:`dpstats.decomposition._bingham_exact`). The draws are those of the exact
  distribution, rounded to a public grid of 2^-OUTPUT_BITS.
* :func:`sample_sequential_bingham` draws k orthonormal vectors one after the
  other, each **exactly** from a vector Bingham distribution on the sphere of
  a basis of the orthogonal complement of the previous ones (the sequential
  mechanism of :func:`dpstats.pca_ppca` and of Amin et al.'s covariance).
* :func:`sample_matrix_bingham` runs Hoff's (2009, Section 3.1) column-wise Gibbs
  sampler for V (d × k, orthonormal columns) with density ∝ ``etr(Vᵀ A V)``:
  given the other columns, column j lies on the unit sphere of their orthogonal
  complement N (dimension d − k + 1) and ``v_j = N z`` with
  z ∝ ``exp(zᵀ NᵀAN z)``, a vector Bingham draw (exact for the floating-point
  eigenvalues of NᵀAN). The chain as a whole is still MCMC: after a finite
  number of sweeps its output only approximates the matrix Bingham.

Hoff's own vector step is a Gibbs sweep over the coordinates with Beta-type
draws; dpstats draws the column conditional instead, which makes every column
update a Gibbs step of the column's own conditional.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._kernels.blocks import single_threaded_blas
from .._kernels.gram import float_gram_error, norm_bound_squared
from .._rounding import UNIT_ROUNDOFF, float_down, gamma
from .._validation import check_array, check_finite, check_int
from ..exceptions import DataValidationError, ParameterError
from ..noise.random import check_rng
from ._bingham_exact import OUTPUT_BITS, Diagonal, Subspace, draw

__all__ = [
    "DEFAULT_SWEEPS",
    "OUTPUT_BITS",
    "bingham_scale",
    "check_certifiable",
    "on_output_grid",
    "sample_bingham",
    "sample_matrix_bingham",
    "sample_sequential_bingham",
    "sample_vector_bingham",
    "score_sensitivity",
]

#: Default number of Gibbs sweeps of :func:`sample_matrix_bingham` (data-independent). On MNIST
#: (n = 10000, d = 784, k = 50, parameter (ε/2)XᵀX with ε = 0.5, 5, 50) the captured energy of the
#: chain started from a uniform V is already at its stationary level after the first sweep and
#: stays flat over 8 sweeps; 5 sweeps leave a margin and take about 25 s there on 2 cores.
DEFAULT_SWEEPS = 5


def score_sensitivity(rows_bound: int, d: int, m: int = 1) -> float:
    """Sensitivity Δq of the exponential mechanisms' score vᵀÃv (‖v‖ = 1) on the floating-point Gram matrix Ã.

    Replacing one row x by x′ changes the exact score by (vᵀx)² − (vᵀx′)² ∈ [−R², R²] (R² the row-norm bound of
    :func:`dpstats._kernels.gram.norm_bound_squared`); replacing one privacy unit with at most m kept rows, by at
    most m·R². Ã's entries are each within e_A = :func:`dpstats._kernels.gram.float_gram_error` of the exact
    ones for ``rows_bound`` rows, which moves the score by at most d·e_A per dataset ((Σ_j |v_j|)² <= d): 2·d·e_A
    between neighbours. The sum is rounded up. The score is a quadratic form, so for a vector of norm² up to
    1 + θ the bound scales by 1 + θ (:func:`sample_sequential_bingham` shrinks its parameter accordingly).
    """
    return math.nextafter(m * norm_bound_squared(d) + 2.0 * d * float_gram_error(rows_bound, d), math.inf)


def check_certifiable(scale: float, rows_bound: int, d: int, m: int = 1) -> None:
    """Refuse, before anything is charged, a parameter scale·Ã so concentrated that the exact sampler's envelope
    might not be certifiable in double precision (:mod:`dpstats.decomposition._bingham_exact` raises when τ >= 1/2).

    The envelope's certified τ (``Subspace._certify``) has error terms of at most about
    scale·‖Ã‖_F·(4γ_d + 4√d·γ_d + 48u) for the first draw (c₂ = 2β/b, ‖P‖_F² <= b, ‖N‖_F = √d, and the rounding of
    F's assembly), with ‖Ã‖_F <= tr Ã <= m·rows·R² + d·e_A for the Gram matrix of ``rows_bound`` rows: public
    numbers. The acceptance rate carries a factor (1 − τ)^{d/2}, so that bound is kept below 1/(4d). In practice:
    scale·rows beyond about 3e7 for d = 784, 2e10 for d = 10.

    **The margin.** τ also holds ‖F‖_F, the eigensolver's own error (of the same order as the rounding terms,
    and not bounded publicly: LAPACK publishes no rigorous constant). At this limit, on the hardest data measured —
    rank one, all rows in one direction, two points, and random rows, d = 2 … 30 — it added at most 25 % (issue 39:
    τ <= 1.18/(4d), 0.136 at d = 2), and every draw's τ stays below 1.5/(4d) (tested at d = 2, 3, 10 in
    ``tests/test_hardening.py``). The sampler fails only at τ >= 1/2, after the charge: 2d/1.5 >= 2.7 times beyond
    that margin, 3.7 times beyond the worst τ measured. Within it the acceptance rate loses at most a factor
    (1 − 1.5/(4d))^{d/2} >= e^{-0.21}."""
    norm_bound = m * rows_bound * norm_bound_squared(d) + d * float_gram_error(rows_bound, d)
    limit = 1.0 / (4.0 * d * norm_bound * ((4.0 + 4.0 * math.sqrt(d)) * gamma(d) + 48.0 * UNIT_ROUNDOFF))
    if scale > limit:
        raise ParameterError(
            f"epsilon is too large for the exact Bingham sampler with {rows_bound} rows in {d} dimensions: the "
            f"parameter epsilon/(2 sensitivity) = {scale:.6g} must stay below {limit:.6g} for its envelope to be "
            "certified tightly in double precision"
        )


def bingham_scale(epsilon: float, sensitivity: float) -> float:
    """ε/(2Δq) rounded down: the parameter's multiplier for which the exponential mechanism with score sensitivity
    Δq is ε-DP (a larger float would spend more than ε)."""
    return float_down(Fraction(epsilon) / (2 * Fraction(sensitivity)))


def on_output_grid(V: np.ndarray) -> np.ndarray:
    """V rounded to multiples of 2^-OUTPUT_BITS (orthonormal columns stay orthonormal to within about
    2^-OUTPUT_BITS·√d)."""
    return np.ldexp(np.rint(np.ldexp(V, OUTPUT_BITS)), -OUTPUT_BITS)


def sample_vector_bingham(lam, rng=None, *, size: int | None = None) -> np.ndarray:
    """Exact draws y on the unit sphere with density ∝ exp(Σ_i λ_i y_i²), on the 2^-OUTPUT_BITS grid.

    Parameters
    ----------
    lam : array_like, shape (q,)
        The diagonal parameter λ (any real values; only differences matter).
    rng : None, int or numpy.random.Generator
        Source of randomness.
    size : int, optional
        Number of independent draws; ``None`` gives one.

    Returns
    -------
    numpy.ndarray, shape (q,) or (size, q)
        Unit vectors (to within 2^-OUTPUT_BITS·√q), each coordinate the exact draw's rounded to the grid.

    References
    ----------
    Kent, Ganeiber & Mardia, "A new unified approach for the simulation of a
    wide class of directional distributions", JCGS 27(2), 2018.
    """
    rng = check_rng(rng)
    lam = check_finite(check_array(lam, "lam", ndim=(1,)), "lam")
    draws = draw(Diagonal(lam), 1 if size is None else check_int(size, "size", low=1), rng)
    return draws[0] if size is None else draws


def sample_bingham(M, rng=None) -> np.ndarray:
    """One exact draw z on the unit sphere with density ∝ exp(zᵀ M z) (the quadratic form of M as given), on the
    2^-OUTPUT_BITS grid."""
    from scipy.linalg import eigh

    rng = check_rng(rng)
    M = check_finite(check_array(M, "M", ndim=(2,)), "M")
    if M.shape[0] != M.shape[1]:
        raise DataValidationError(f"M must be square; got shape {M.shape}")
    mu, E = eigh((M + M.T) / 2)
    return draw(Subspace(np.eye(M.shape[0]), M, 1.0, mu, E), 1, rng)[0]


def _check_parameter_matrix(A, k) -> tuple[np.ndarray, int]:
    """A finite square parameter matrix and a rank 1 <= k <= d, or a DataValidationError/ParameterError."""
    A = check_finite(check_array(A, "A", ndim=(2,)), "A")
    if A.shape[0] != A.shape[1]:
        raise DataValidationError(f"A must be square; got shape {A.shape}")
    return A, check_int(k, "k", low=1, high=A.shape[0])


def _haar(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((d, k)))
    return Q * np.where(np.diag(R) < 0, -1.0, 1.0)


def sample_matrix_bingham(A, k: int, *, n_sweeps: int = DEFAULT_SWEEPS, rng=None, callback=None) -> np.ndarray:
    """Approximate draw of V (d × k, orthonormal) with density ∝ etr(Vᵀ A V) by Gibbs sampling.

    Hoff (2009), Section 3.1: each sweep visits the k columns in random order
    and redraws column j from its exact conditional given the others (see the
    module docstring). The chain starts from a uniformly random orthonormal
    matrix (data-independent). The orthonormal basis N of the complement and
    NᵀAN are carried from column to column by Householder updates (O(d²) per
    column) and recomputed from scratch at the start of every sweep, so rounding
    cannot accumulate; the cost per column is one symmetric eigendecomposition
    of size d − k + 1, so a sweep costs O(k (d − k)³).

    For k = d, tr(VᵀAV) = tr(A) for every orthogonal V, the distribution is
    uniform and an exact uniform draw is returned.

    Parameters
    ----------
    A : array_like, shape (d, d)
        Symmetric parameter (for PPCA: (ε/2) XᵀX).
    k : int
        Number of columns, 1 <= k <= d.
    n_sweeps : int, default DEFAULT_SWEEPS
        Number of Gibbs sweeps.
    rng : None, int or numpy.random.Generator
        Source of randomness.
    callback : callable, optional
        ``callback(sweep, V)`` after every sweep (a copy of the state), for
        convergence diagnostics such as the trace of tr(VᵀAV).

    Returns
    -------
    numpy.ndarray, shape (d, k)

    References
    ----------
    Hoff, "Simulation of the matrix Bingham–von Mises–Fisher distribution, with
    applications to multivariate and relational data", JCGS 18(2), 2009.
    """
    rng = check_rng(rng)
    A, k = _check_parameter_matrix(A, k)
    d = A.shape[0]
    n_sweeps = check_int(n_sweeps, "n_sweeps", low=1)
    V = _haar(d, k, rng)
    if k == d:
        return V
    A = (A + A.T) / 2
    m = d - k + 1
    M = np.empty((m, m), order="F")
    for sweep in range(n_sweeps):
        # Basis N0 of the complement of span(V) and C = N0ᵀ A N0, recomputed every sweep.
        N0 = np.asfortranarray(np.linalg.qr(V, mode="complete")[0][:, k:])
        C = np.asfortranarray(N0.T @ (A @ N0))
        # One BLAS thread for the many mid-sized eigendecompositions: threaded dsyevr is no faster on
        # 2 cores and becomes ~50x slower when other processes compete for them (measured).
        with single_threaded_blas():
            _sweep(A, V, N0, C, M, rng)
        if callback is not None:
            callback(sweep, V.copy())
    return V


def _sweep(A, V, N0, C, M, rng) -> None:
    """One Gibbs sweep over the columns of V; updates V, N0, C in place (see :func:`sample_matrix_bingham`)."""
    from scipy.linalg import eigh

    for j in rng.permutation(V.shape[1]):
        v = V[:, j].copy()
        u = A @ v
        # Lower triangle of M = Nᵀ A N for the basis N = [v, N0] of the other columns' complement.
        M[0, 0] = v @ u
        M[1:, 0] = N0.T @ u
        M[1:, 1:] = C
        mu, E = eigh(M, lower=True, overwrite_a=True, check_finite=False, driver="evr")
        z = E @ sample_vector_bingham(mu, rng)
        z /= np.linalg.norm(z)  # the draw is on the output grid: unit only to within 2^-OUTPUT_BITS·√m
        V[:, j] = z[0] * v + N0 @ z[1:]
        _drop_direction(v, N0, C, z, mu, E)


def _drop_direction(
    first: np.ndarray, rest: np.ndarray, C: np.ndarray, z: np.ndarray, mu: np.ndarray, E: np.ndarray
) -> None:
    """For the basis N = [first, rest] and M = NᵀAN = E diag(mu) Eᵀ (with C its lower-right block), make ``rest``
    a basis of the complement of N z within span(N) and C its NᵀAN, in place.

    The Householder matrix H = I − c h hᵀ with h = z ± e₁ maps z to ∓e₁, so (N H)[:, 1:] spans that complement
    and its block of HMH is C − c (h₁ w₁ᵀ + w₁ h₁ᵀ) with w = M h − (c hᵀMh / 2) h (subscript 1: entries 1: ).
    Only C's lower triangle is kept up to date. Both updates cost O(d·m), against O(d·m²) for a new basis.
    """
    from scipy.linalg.blas import dger, dsyr2

    h = z.copy()
    h[0] += 1.0 if z[0] >= 0 else -1.0
    c = 2.0 / (h @ h)
    dger(-c, h[0] * first + rest @ h[1:], h[1:], a=rest, overwrite_a=True)
    w = E @ (mu * (E.T @ h))
    w -= (c * (h @ w) / 2.0) * h
    dsyr2(-c, h[1:], w[1:], lower=True, a=C, overwrite_a=True)


def sample_sequential_bingham(A, k: int, *, scales=None, rng=None) -> np.ndarray:
    """k orthonormal vectors, v_j = N_j z_j with z_j drawn exactly with density ∝ exp(β_j (N_j z)ᵀ A (N_j z)) on
    the unit sphere, N_j a basis of the orthogonal complement of v_1, …, v_{j−1}.

    N_j is a floating-point basis, orthonormal only to within rounding, so ‖N_j z‖² <= 1 + θ_j with θ_j a
    certified bound of ‖N_jᵀN_j − I‖₂ (:func:`_basis_excess`): the draw uses β_j = s_j/(1 + θ_j), rounded down,
    so that its score moves between neighbours by no more than s_j times the bound on unit vectors
    (:func:`score_sensitivity`), and each draw is the exponential mechanism its scale s_j pays for. The draws are
    exact for these numbers (``decomposition._bingham_exact``); z_j is rounded to the 2^-OUTPUT_BITS grid, and the
    next basis is computed from it, so everything after a draw is a function of the draws. The basis and
    N_jᵀ A N_j (only used to shape the proposals) are carried from one draw to the next by Householder updates
    (:func:`_drop_direction`); each draw costs one symmetric eigendecomposition of size d − j + 1 and a few
    products with N_j and A to certify the envelope.

    Parameters
    ----------
    A : array_like, shape (d, d)
        The score's matrix (for PPCA: the floating-point XᵀX); its quadratic form is used exactly.
    k : int
        Number of vectors, 1 <= k <= d.
    scales : array_like, shape (k,), optional
        Non-negative multipliers s_j of the parameter, one per draw (ε_j/(2Δq) for the exponential mechanism);
        1 if not given; a zero draws v_j uniformly from its sphere.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Columns v_1, …, v_k, orthonormal to within about 2^-OUTPUT_BITS·√d.
    """
    from scipy.linalg import eigh

    rng = check_rng(rng)
    A, k = _check_parameter_matrix(A, k)
    d = A.shape[0]
    if scales is None:
        scales = np.ones(k)
    scales = check_finite(check_array(scales, "scales", ndim=(1,)), "scales")
    if scales.shape != (k,) or np.any(scales < 0):
        raise DataValidationError(f"scales must be {k} non-negative numbers; got shape {scales.shape}")
    V = np.empty((d, k))
    basis = np.asfortranarray(np.eye(d))
    C = np.asfortranarray((A + A.T) / 2)
    for j in range(k):
        with single_threaded_blas():  # as in sample_matrix_bingham: many mid-sized eighs
            mu, E = eigh(C, lower=True, check_finite=False, driver="evr")
        beta = float_down(Fraction(float(scales[j])) / (1 + Fraction(_basis_excess(basis))))
        z = draw(Subspace(basis, A, beta, mu, E), 1, rng)[0]
        V[:, j] = basis @ z
        if j + 1 < k:
            rest, C_rest = np.asfortranarray(basis[:, 1:]), np.asfortranarray(C[1:, 1:])
            _drop_direction(basis[:, 0].copy(), rest, C_rest, z / np.linalg.norm(z), mu, E)
            basis, C = rest, C_rest
    return V


def _basis_excess(N: np.ndarray) -> float:
    """θ >= ‖NᵀN − I‖₂ from fl(NᵀN): ‖fl(NᵀN) − NᵀN‖_F <= γ_d‖N‖_F², plus the rounding of the subtraction."""
    gram = N.T @ N
    excess = np.linalg.norm(gram - np.eye(N.shape[1]))
    rounding = 2.0 * UNIT_ROUNDOFF * (np.linalg.norm(gram) + math.sqrt(N.shape[1]))
    return float((excess + gamma(N.shape[0]) * np.linalg.norm(N) ** 2 + rounding) * (1.0 + 2.0**-20))
