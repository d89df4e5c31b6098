"""Samplers for the Bingham distribution on the sphere and the matrix Bingham on the Stiefel manifold.

* :func:`sample_vector_bingham` draws **exactly** from the density on the unit
  sphere S^{q−1} ∝ ``exp(Σ λ_i y_i²)`` (a diagonal parameter), by the rejection
  sampler of Kent, Ganeiber & Mardia (2018) with an angular central Gaussian
  (ACG) envelope. :func:`sample_bingham` handles a general symmetric parameter
  through its eigendecomposition.
* :func:`sample_sequential_bingham` draws k orthonormal vectors one after the
  other, each **exactly** from a vector Bingham distribution on the sphere of
  the orthogonal complement of the previous ones (the sequential mechanism of
  :func:`dpstats.pca_ppca`).
* :func:`sample_matrix_bingham` runs Hoff's (2009, Section 3.1) column-wise Gibbs
  sampler for V (d × k, orthonormal columns) with density ∝ ``etr(Vᵀ A V)``:
  given the other columns, column j lies on the unit sphere of their orthogonal
  complement N (dimension d − k + 1) and ``v_j = N z`` with
  z ∝ ``exp(zᵀ NᵀAN z)``, a vector Bingham that is drawn exactly.

The envelope (Kent et al. 2018, Section 4.2). Write the target as
f*(x) = exp(−xᵀΛx) with Λ = diag(a), a_i = max λ − λ_i >= 0, and the ACG
density g*(x) ∝ (xᵀΩx)^{−q/2} with Ω = I + 2Λ/b, sampled as y/‖y‖ for
y ~ N(0, Ω⁻¹). With w = xᵀΩx = 1 + 2xᵀΛx/b::

    f*(x) / g*(x) = exp(−b(w − 1)/2) w^{q/2} <= M = exp(−(q − b)/2) (q/b)^{q/2}

(the maximum over w is at w = q/b), so a proposal is accepted with probability
f*/(M g*) <= 1 and the accepted draws are exact. b solves Σ_i 1/(b + 2a_i) = 1,
which minimises M. The acceptance rate is 1 for a uniform target and tends to
about √(2/(e q)) in the limit of infinite concentration, so the loop never
stalls: with q = 735 (d = 784, k = 50) about 30 proposals per draw, each O(q).
Everything is computed in logarithms, so concentrations such as n·ε = 1e7 cause
no overflow.

Hoff's own vector step is a Gibbs sweep over the coordinates with Beta-type
draws; dpstats draws the column conditional exactly instead, which makes every
column update an exact Gibbs step. The chain as a whole is still MCMC: after a
finite number of sweeps its output only approximates the matrix Bingham.
"""

from __future__ import annotations

import math

import numpy as np

from ._kernels.blocks import single_threaded_blas
from ._kernels.gram import float_gram_error, norm_bound_squared
from ._validation import check_array, check_finite, check_int
from .exceptions import DataValidationError
from .noise.random import check_rng

__all__ = [
    "DEFAULT_SWEEPS",
    "OUTPUT_BITS",
    "on_output_grid",
    "sample_bingham",
    "sample_matrix_bingham",
    "sample_sequential_bingham",
    "sample_vector_bingham",
    "score_sensitivity",
]

#: Output grid of the Bingham mechanisms (the samplers are floating point): entries are rounded to multiples of
#: 2^-OUTPUT_BITS.
OUTPUT_BITS = 32

#: Default number of Gibbs sweeps of :func:`sample_matrix_bingham` (data-independent). On MNIST
#: (n = 10000, d = 784, k = 50, parameter (ε/2)XᵀX with ε = 0.5, 5, 50) the captured energy of the
#: chain started from a uniform V is already at its stationary level after the first sweep and
#: stays flat over 8 sweeps; 5 sweeps leave a margin and take about 25 s there on 2 cores.
DEFAULT_SWEEPS = 5

_BATCH = 32  # ACG proposals drawn per vectorised round


def score_sensitivity(rows_bound: int, d: int, m: int = 1) -> float:
    """Sensitivity Δq of the exponential mechanisms' score vᵀÃv (‖v‖ = 1) on the floating-point Gram matrix Ã.

    Replacing one row x by x′ changes the exact score by (vᵀx)² − (vᵀx′)² ∈ [−R², R²] (R² the row-norm bound of
    :func:`dpstats._kernels.gram.norm_bound_squared`); replacing one privacy unit with at most m kept rows, by at
    most m·R². Ã's entries are each within e_A = :func:`dpstats._kernels.gram.float_gram_error` of the exact ones
    for ``rows_bound`` rows, which moves the score by at most d·e_A per dataset ((Σ_j |v_j|)² <= d): 2·d·e_A
    between neighbours. The sum is rounded up.
    """
    return math.nextafter(m * norm_bound_squared(d) + 2.0 * d * float_gram_error(rows_bound, d), math.inf)


def on_output_grid(V: np.ndarray) -> np.ndarray:
    """V rounded to multiples of 2^-OUTPUT_BITS (orthonormal columns stay orthonormal to within about
    2^-OUTPUT_BITS·√d): the low-order bits, where a floating-point sampler could differ from the exact
    distribution, are not released."""
    return np.ldexp(np.rint(np.ldexp(V, OUTPUT_BITS)), -OUTPUT_BITS)


def _acg_b(a: np.ndarray) -> float:
    """The root b in [1, q] of Σ 1/(b + 2a_i) = 1 (a_i >= 0, min a = 0)."""
    from scipy.optimize import brentq

    q = a.size

    def excess(b: float) -> float:
        return float(np.sum(1.0 / (b + 2.0 * a))) - 1.0

    if excess(float(q)) >= 0.0:  # uniform target: every a_i = 0
        return float(q)
    return brentq(excess, 1.0, float(q), xtol=1e-12, rtol=1e-12)


def sample_vector_bingham(lam, rng=None) -> np.ndarray:
    """One exact draw y on the unit sphere with density ∝ exp(Σ_i λ_i y_i²).

    Parameters
    ----------
    lam : array_like, shape (q,)
        The diagonal parameter λ (any real values; only differences matter).
    rng : None, int or numpy.random.Generator
        Source of randomness.

    Returns
    -------
    numpy.ndarray, shape (q,)
        A unit vector.

    References
    ----------
    Kent, Ganeiber & Mardia, "A new unified approach for the simulation of a
    wide class of directional distributions", JCGS 27(2), 2018.
    """
    rng = check_rng(rng)
    lam = check_finite(check_array(lam, "lam", ndim=(1,)), "lam")
    q = lam.size
    if q == 1:
        return np.array([rng.choice((-1.0, 1.0))])
    a = lam.max() - lam
    b = _acg_b(a)
    proposal_sd = 1.0 / np.sqrt(1.0 + 2.0 * a / b)
    log_m = -(q - b) / 2.0 + (q / 2.0) * math.log(q / b)
    while True:
        y = rng.standard_normal((_BATCH, q)) * proposal_sd
        x = y / np.linalg.norm(y, axis=1, keepdims=True)
        quad = (x * x) @ a
        log_ratio = -quad + (q / 2.0) * np.log1p(2.0 * quad / b) - log_m
        accepted = np.flatnonzero(np.log1p(-rng.random(_BATCH)) < log_ratio)  # log U, U in (0, 1]
        if accepted.size:
            return x[accepted[0]]


def sample_bingham(M, rng=None) -> np.ndarray:
    """One exact draw z on the unit sphere with density ∝ exp(zᵀ M z), M symmetric."""
    from scipy.linalg import eigh

    rng = check_rng(rng)
    M = check_finite(check_array(M, "M", ndim=(2,)), "M")
    if M.shape[0] != M.shape[1]:
        raise DataValidationError(f"M must be square; got shape {M.shape}")
    mu, E = eigh((M + M.T) / 2)
    return E @ sample_vector_bingham(mu, rng)


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
    """k orthonormal vectors, v_j drawn exactly with density ∝ exp(s_j vᵀ A v) on the unit sphere of the orthogonal
    complement of v_1, …, v_{j−1} (s_j = 1 unless ``scales`` is given).

    Each draw is exact (:func:`sample_vector_bingham` on the eigenvalues of
    N_jᵀ A N_j, N_j an orthonormal basis of the complement). The complement's
    basis and N_jᵀ A N_j are carried from one draw to the next by Householder
    updates (:func:`_drop_direction`), so each draw costs one symmetric
    eigendecomposition of size d − j + 1.

    Parameters
    ----------
    A : array_like, shape (d, d)
        Symmetric parameter (for PPCA's sequential mechanism: (ε/(2kΔq)) XᵀX).
    k : int
        Number of vectors, 1 <= k <= d.
    scales : array_like, shape (k,), optional
        Non-negative multipliers s_j of the parameter, one per draw (Amin et al.'s per-vector budgets); a zero
        draws v_j uniformly from its sphere.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Orthonormal columns v_1, …, v_k.
    """
    from scipy.linalg import eigh

    rng = check_rng(rng)
    A, k = _check_parameter_matrix(A, k)
    d = A.shape[0]
    if scales is not None:
        scales = check_finite(check_array(scales, "scales", ndim=(1,)), "scales")
        if scales.shape != (k,) or np.any(scales < 0):
            raise DataValidationError(f"scales must be {k} non-negative numbers; got shape {scales.shape}")
    V = np.empty((d, k))
    basis = np.asfortranarray(np.eye(d))
    C = np.asfortranarray((A + A.T) / 2)
    with single_threaded_blas():  # as in sample_matrix_bingham: many mid-sized eighs
        for j in range(k):
            mu, E = eigh(C, lower=True, check_finite=False, driver="evr")
            z = E @ sample_vector_bingham(mu if scales is None else scales[j] * mu, rng)
            V[:, j] = basis @ z
            if j + 1 < k:
                rest, C_rest = np.asfortranarray(basis[:, 1:]), np.asfortranarray(C[1:, 1:])
                _drop_direction(basis[:, 0].copy(), rest, C_rest, z, mu, E)
                basis, C = rest, C_rest
    return V
