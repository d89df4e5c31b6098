"""Differentially private principal component analysis.

Data ``X`` is ``n × d`` with one person per row and ‖x_i‖₂ <= 1 for every row.
The papers (Imtiaz & Sarwate, ICASSP 2016, eq. (1)) write the data as a d × n
matrix and use the *unnormalised* second-moment matrix ``A = X Xᵀ = Σ x_i x_iᵀ``;
in dpstats' row convention that is ``A = Xᵀ X`` (d × d, not divided by n), and
every sensitivity below is for this A.

Neighbours replace one row x by x′ (n is public), so A changes by
``D = x xᵀ − x′ x′ᵀ``. Facts used throughout, for ‖x‖, ‖x′‖ <= 1:

* ‖D‖_F² = ‖x‖⁴ + ‖x′‖⁴ − 2 (xᵀx′)² <= 2, with equality for orthogonal unit vectors;
* D has rank <= 2, one eigenvalue in [0, 1] and one in [−1, 0] (a difference of
  two PSD rank-one matrices of norm <= 1), so ‖D‖₂ <= 1;
* for V with orthonormal columns, tr(Vᵀ D V) = ‖Vᵀx‖² − ‖Vᵀx′‖² lies in [−1, 1].

Mechanisms: :func:`pca_ag` (Analyze Gauss), :func:`pca_sn` (the ICASSP 2016 SN
algorithm, **not** private, see its erratum), :func:`pca_ppm` (noisy power
method), :func:`pca_ppca` (exponential mechanism, matrix Bingham) and the
dispatcher :func:`pca`. :func:`top_components` post-processes any symmetric
estimate of A.
"""

from __future__ import annotations

import functools
import math
import os
import warnings

import numpy as np

from ._blocks import row_blocks
from ._validation import (
    NORM_TOLERANCE,
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_finite,
    check_int,
    check_rng,
    check_row_norms,
)
from .accounting import Accountant, charge
from .exceptions import DataValidationError, NotPrivateWarning, ParameterError
from .noise import gaussian_sigma, laplace_scale, sample_symmetric_gaussian

__all__ = ["pca", "pca_ag", "pca_ppca", "pca_ppm", "pca_sn", "second_moment", "top_components"]

MECHANISMS = ("ag", "sn", "ppm", "ppca")

# Bytes per block when X.T @ X is accumulated: a block stays in the (L3) cache while its row
# norms are checked and its product is taken.
_BLOCK_BYTES = 16 * 2**20
_MIN_BLOCK_ROWS = 256  # the d × d update per block stays negligible against the block's product

SN_ERRATUM = (
    "Imtiaz (2017), 'A Note on Wishart Mechanisms for (epsilon, 0) Differential Privacy', proves that "
    "additive Wishart noise cannot be (epsilon, 0)-DP, so the SN algorithm of Imtiaz & Sarwate "
    "(ICASSP 2016) offers no differential privacy guarantee"
)


def second_moment(X, *, clip: bool = False) -> np.ndarray:
    """Validate ``X`` (rows with ‖x_i‖₂ <= 1, finite) and return ``A = Xᵀ X``.

    The product is accumulated over blocks of rows; each block's row norms are
    checked while the block is in cache, so the check costs little on top of the
    product and X is never copied (unless it is not float64, or ``clip=True``
    has to rescale rows). When X spans several blocks, its rows are split into
    one contiguous part per core, each handled by its own thread with a
    single-threaded BLAS (for the duration of the call): the norm check then
    runs on every core as well, and the whole costs about what ``X.T @ X``
    alone costs (``benchmarks/bench_pca.py``). The order of summation depends on
    the number of cores, so results agree across machines to rounding (about
    1e-13 relative), not bit for bit; on one machine they are reproducible.

    Parameters
    ----------
    X : array_like, shape (n, d)
        The data, one person per row.
    clip : bool, default False
        Scale rows with norm > 1 down to norm 1 (a data-independent map, so it
        keeps the guarantee) instead of raising ``OutOfBoundsError``.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        ``Xᵀ X`` (symmetric, not divided by n).
    """
    X = check_array(X, "X", ndim=(2,))
    if X.shape[1] < 1:
        raise DataValidationError(f"X must have at least one column; got shape {X.shape}")
    if clip:
        X = check_row_norms(X, "X", clip=True)
    parts = min(_cores(), len(row_blocks(X, _BLOCK_BYTES, _MIN_BLOCK_ROWS)))
    if parts == 1:
        partials = [_checked_gram(X)]
    else:
        from concurrent.futures import ThreadPoolExecutor  # only large X needs threads: keep `import dpstats` light

        edges = np.linspace(0, X.shape[0], parts + 1).astype(int)
        with _blas_controller().limit(limits=1, user_api="blas"), ThreadPoolExecutor(parts) as pool:
            partials = list(pool.map(lambda a, b: _checked_gram(X[a:b]), edges[:-1], edges[1:]))
    if any(A is None for A in partials):
        check_row_norms(X, "X")  # raises with the count over all rows
    return sum(partials)


@functools.cache
def _blas_controller():
    """threadpoolctl's handle on the BLAS libraries loaded so far (numpy's is loaded with numpy); made once,
    because finding the libraries costs milliseconds per call."""
    from threadpoolctl import ThreadpoolController  # installed with scikit-learn

    return ThreadpoolController()


def _cores() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _checked_gram(X: np.ndarray) -> np.ndarray | None:
    """Σ_blocks BᵀB over blocks of rows, or None as soon as a block has a row with norm > 1 (or NaN)."""
    limit = 1.0 + NORM_TOLERANCE
    A = np.zeros((X.shape[1], X.shape[1]))
    for rows in row_blocks(X, _BLOCK_BYTES, _MIN_BLOCK_ROWS):
        block = X[rows]
        if not np.einsum("ij,ij->i", block, block).max() <= limit:  # also true for NaN
            return None
        A += block.T @ block
    return A


def _check_k(k, d: int) -> int:
    return check_int(k, "k", low=1, high=d)


def top_components(A_hat, k: int) -> np.ndarray:
    """The eigenvectors of the ``k`` largest eigenvalues of a symmetric matrix.

    Post-processing for any symmetric estimate of the second-moment matrix,
    including indefinite ones such as the output of :func:`pca_ag` (the top-k
    *algebraic* eigenvalues are taken, not the largest in magnitude).

    Parameters
    ----------
    A_hat : array_like, shape (d, d)
        A symmetric matrix (checked up to rounding; it is symmetrised).
    k : int
        Number of components, 1 <= k <= d.

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Orthonormal columns, ordered by decreasing eigenvalue.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> V = dps.top_components(np.diag([3.0, 1.0, 2.0]), 2)
    >>> np.abs(V).round(6).tolist()
    [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]
    """
    from scipy.linalg import eigh

    A_hat = check_finite(check_array(A_hat, "A_hat", ndim=(2,)), "A_hat")
    d = A_hat.shape[0]
    if A_hat.shape != (d, d):
        raise DataValidationError(f"A_hat must be a square matrix; got shape {A_hat.shape}")
    scale = max(float(np.abs(A_hat).max()), 1.0)
    if not np.allclose(A_hat, A_hat.T, rtol=0.0, atol=1e-8 * scale):
        raise DataValidationError("A_hat must be symmetric (a second-moment matrix or a symmetric estimate of one)")
    k = _check_k(k, d)
    _, vecs = eigh((A_hat + A_hat.T) / 2, subset_by_index=[d - k, d - 1])
    return np.ascontiguousarray(vecs[:, ::-1])


def pca_ag(X, epsilon: float, delta: float, *, calibration: str = "analytic", clip: bool = False, rng=None,
           accountant: Accountant | None = None) -> np.ndarray:
    """Analyze Gauss: ``Xᵀ X`` plus a symmetric Gaussian matrix ((ε, δ)-DP).

    Follows Dwork, Talwar, Thakurta & Zhang (2014), Algorithm 1: add a symmetric
    matrix E whose upper triangle (diagonal included) is iid N(0, σ²).

    Sensitivity (replace one row, ‖x_i‖₂ <= 1, n public). The release is the
    upper triangle of A = XᵀX, which changes by the upper triangle of
    ``D = x xᵀ − x′ x′ᵀ``. Its Euclidean norm is at most ‖D‖_F (each off-diagonal
    entry is counted once instead of twice), and
    ‖D‖_F² = ‖x‖⁴ + ‖x′‖⁴ − 2 (xᵀx′)² <= 2, so **Δ₂ = √2**. The bound is attained
    (x = e₁, x′ = e₂). Dwork et al. state Δ₂ = 1 for add/remove neighbours; the
    papers' replace-one relation needs √2.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, one person per row, every row with ‖x_i‖₂ <= 1.
    epsilon : float
        ε > 0.
    delta : float
        0 < δ < 1 (Analyze Gauss has no pure-DP form).
    calibration : {"analytic", "classic"}, default "analytic"
        σ from the analytic Gaussian mechanism (Balle & Wang 2018, valid for
        every ε) or from the classic Δ₂√(2 ln(1.25/δ))/ε (proven for ε < 1 only;
        for paper-faithful runs).
    clip : bool, default False
        Rescale rows of norm > 1 to norm 1 instead of raising.
    rng : None, int or numpy.random.Generator
        Source of noise; ``None`` uses fresh OS entropy.
    accountant : Accountant, optional
        Charged (ε, δ) before any noise is drawn.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The symmetric noisy second-moment matrix (it may be indefinite); pass it
        to :func:`top_components` for a subspace.

    References
    ----------
    Dwork, Talwar, Thakurta & Zhang, "Analyze Gauss: optimal bounds for
    privacy-preserving principal component analysis", STOC 2014.
    Imtiaz & Sarwate, "Symmetric matrix perturbation for differentially-private
    principal component analysis", ICASSP 2016, Section 3.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 4)) / 2
    >>> A_hat = dps.pca_ag(X, 1.0, 1e-5, rng=0)
    >>> V = dps.top_components(A_hat, 2)
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    if delta == 0:
        raise ParameterError("pca_ag needs delta > 0 (Gaussian noise); use pca_ppca or pca_ppm for delta = 0")
    sigma = gaussian_sigma(math.sqrt(2.0), epsilon, delta, calibration)
    A = second_moment(X, clip=clip)
    charge(accountant, epsilon, delta, mechanism="pca_ag")
    A += sample_symmetric_gaussian(A.shape[0], sigma, rng)
    return A


def pca_sn(X, epsilon: float, *, clip: bool = False, rng=None, accountant: Accountant | None = None) -> np.ndarray:
    """SN (symmetric Wishart noise) of Imtiaz & Sarwate (ICASSP 2016): **not differentially private**.

    Reproduces Algorithm 1 of the paper exactly: ``Â = XᵀX + Z Zᵀ`` with Z a
    d × (d + 1) matrix whose columns are iid N(0, I/(2ε)), i.e. entries of
    *variance* 1/(2ε) (standard deviation 1/√(2ε)), so that E = ZZᵀ is
    Wishart W_d(I/(2ε), d + 1) with density ∝ exp(−ε tr E). The original dp-stats
    code used standard deviation 1/(2ε); dpstats follows the paper.

    The paper's Theorem 1 claims ε-DP, but the 2017 erratum (appended to the
    paper) proves that no additive mechanism with Wishart noise can be
    (ε, 0)-DP: the noise density vanishes at E = 0, so the supports for
    neighbouring inputs differ. Every call therefore emits a
    :class:`~dpstats.exceptions.NotPrivateWarning`, and an ``accountant`` refuses
    it (raising :class:`~dpstats.exceptions.NotPrivateError`, before any noise is
    drawn). Use it only to reproduce the paper.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, rows with ‖x_i‖₂ <= 1.
    epsilon : float
        The paper's ε > 0 (it sets the noise scale; it is not a privacy level).
    clip : bool, default False
        Rescale rows of norm > 1 to norm 1 instead of raising.
    rng : None, int or numpy.random.Generator
        Source of noise.
    accountant : Accountant, optional
        If given, it refuses the release.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        ``XᵀX + ZZᵀ`` (positive semi-definite).

    References
    ----------
    Imtiaz & Sarwate, ICASSP 2016, Algorithm 1; Imtiaz, "A note on Wishart
    mechanisms for (ε, 0) differential privacy", 2017.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (200, 3)) / 2
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", dps.NotPrivateWarning)
    ...     A_hat = dps.pca_sn(X, 1.0, rng=0)
    """
    epsilon, rng = check_epsilon(epsilon), check_rng(rng)
    A = second_moment(X, clip=clip)
    warnings.warn(f"pca_sn is not differentially private: {SN_ERRATUM}.", NotPrivateWarning, stacklevel=2)
    if accountant is not None:
        accountant.refuse("pca_sn", SN_ERRATUM)
    d = A.shape[0]
    Z = rng.normal(0.0, math.sqrt(1.0 / (2.0 * epsilon)), size=(d, d + 1))
    A += Z @ Z.T
    return A


def default_n_iter(d: int, k: int) -> int:
    """The default number of noisy power iterations: ``ceil(10 ln d)``, at least 1.

    Hardt & Price (2014, Corollary 1.1) need L = O(σ_k/(σ_k − σ_{k+1}) · log d)
    iterations; the gap ratio is a property of the data, so reading it (as the
    ICASSP 2016 experiments did) leaks. dpstats fixes the ratio at 10, i.e. it
    assumes a relative gap of 0.1, which depends on nothing but d. ``k`` is
    accepted so that the rule can change without changing its callers.
    """
    check_int(k, "k", low=1, high=d)
    return max(1, math.ceil(10.0 * math.log(d)))


def _ppm_sensitivities(d: int, k: int) -> tuple[float, float]:
    """L2 and L1 sensitivity of A·Y for Y with k orthonormal columns (see :func:`pca_ppm`)."""
    l2 = 1.0 if k == 1 else math.sqrt(2.0)
    return l2, 2.0 * math.sqrt(d * k)


def _zcdp_rho(epsilon: float, delta: float) -> float:
    """Largest ρ with ρ + 2√(ρ ln(1/δ)) <= ε (Bun & Steinke 2016, Proposition 1.3)."""
    log_term = math.log(1.0 / delta)
    return (math.sqrt(log_term + epsilon) - math.sqrt(log_term)) ** 2


def _orthonormal(Y: np.ndarray) -> np.ndarray:
    Q, _ = np.linalg.qr(Y)
    return Q


def random_orthonormal(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A d × k matrix with orthonormal columns, uniform (Haar) on the Stiefel manifold."""
    Q, R = np.linalg.qr(rng.standard_normal((d, k)))
    return Q * np.where(np.diag(R) < 0, -1.0, 1.0)


def pca_ppm(X, k: int, epsilon: float, delta: float, *, n_iter: int | None = None, clip: bool = False, rng=None,
            accountant: Accountant | None = None) -> np.ndarray:
    """Noisy (private) power method of Hardt & Price (2014) for the top-k subspace.

    Algorithm (Hardt & Price 2014, Figure 1 with the privacy noise of their
    Section 4): start from a random orthonormal Y₀ (data-independent); for
    l = 1..L release ``W_l = A Y_{l−1} + G_l`` and set ``Y_l = QR(W_l)``; output
    Y_L. Exactly L = ``n_iter`` noisy releases are made (the original dp-stats
    ran one more than it calibrated for).

    Sensitivity of one step (replace one row, ‖x_i‖₂ <= 1). Y has orthonormal
    columns and is fixed by the earlier (already private) releases; A·Y changes
    by D·Y with D = x xᵀ − x′ x′ᵀ. D has rank <= 2 with eigenvalues
    λ₊ ∈ [0, 1], λ₋ ∈ [−1, 0], so ``‖DY‖_F² = tr(Yᵀ D² Y)`` is at most the sum of
    the k largest eigenvalues of D²: **Δ₂ = 1 for k = 1** and
    **Δ₂ = ‖D‖_F <= √2 for k >= 2**. For the L1 norm of the d·k entries,
    ‖x xᵀY‖₁ = ‖x‖₁ ‖Yᵀx‖₁ <= √d · √k, so **Δ₁ <= 2√(dk)**. Unlike Hardt &
    Price's entry-level analysis this does not read ‖Y‖_∞, which would make the
    noise scale depend on the data-dependent iterates.

    Calibration. δ > 0: each step is a Gaussian mechanism, ρ-zCDP with
    ρ = Δ₂²/(2σ²); L adaptive steps are Lρ-zCDP, which implies
    (Lρ + 2√(Lρ ln(1/δ)), δ)-DP (Bun & Steinke 2016, Lemma 2.3 and Proposition
    1.3). dpstats solves this for the largest total ρ and uses
    ``σ = Δ₂ √(L / (2ρ))``. δ = 0: Laplace noise of scale Δ₁ L/ε per entry (ε/L
    per step, basic composition), pure ε-DP.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, rows with ‖x_i‖₂ <= 1.
    k : int
        Dimension of the subspace, 1 <= k <= d.
    epsilon : float
        ε > 0 for the whole run.
    delta : float
        δ = 0 for the Laplace variant, 0 < δ < 1 for the Gaussian one.
    n_iter : int, optional
        Number L of noisy iterations; default :func:`default_n_iter` (``ceil(10
        ln d)``, data-independent). The ICASSP 2016 paper chose
        L ∝ σ_k/(σ_k − σ_{k+1}) log d from the non-private spectrum; that choice
        is not private.
    clip : bool, default False
        Rescale rows of norm > 1 to norm 1 instead of raising.
    rng : None, int or numpy.random.Generator
        Source of noise and of the starting point.
    accountant : Accountant, optional
        Charged (ε, δ) once, before any noise is drawn.

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Orthonormal columns spanning the private estimate of the top-k subspace.

    References
    ----------
    Hardt & Price, "The noisy power method: a meta algorithm with
    applications", NeurIPS 2014. Bun & Steinke, "Concentrated differential
    privacy: simplifications, extensions, and lower bounds", TCC 2016.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 6)) / 3
    >>> V = dps.pca_ppm(X, 2, 1.0, 1e-5, rng=0)
    >>> V.shape
    (6, 2)
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    A = second_moment(X, clip=clip)
    d = A.shape[0]
    k = _check_k(k, d)
    L = default_n_iter(d, k) if n_iter is None else check_int(n_iter, "n_iter", low=1)
    l2, l1 = _ppm_sensitivities(d, k)
    if delta > 0:
        sigma = l2 * math.sqrt(L / (2.0 * _zcdp_rho(epsilon, delta)))

        def noise():
            return rng.normal(0.0, sigma, size=(d, k))
    else:
        scale = laplace_scale(l1 * L, epsilon)

        def noise():
            return rng.laplace(0.0, scale, size=(d, k))

    charge(accountant, epsilon, delta, mechanism="pca_ppm", note=f"{L} noisy iterations")
    Y = random_orthonormal(d, k, rng)
    for _ in range(L):
        Y = _orthonormal(A @ Y + noise())
    return Y


def pca_ppca(X, k: int, epsilon: float, *, n_sweeps: int | None = None, clip: bool = False, rng=None,
             accountant: Accountant | None = None) -> np.ndarray:
    """Exponential-mechanism PCA (PPCA) of Chaudhuri, Sarwate & Sinha (2013), ε-DP for exact samples.

    Releases V (d × k, orthonormal) with density on the Stiefel manifold
    (w.r.t. its uniform measure) ∝ ``exp((ε/2) tr(Vᵀ A V))``, A = XᵀX: the
    exponential mechanism (McSherry & Talwar 2007) with score q(V) = tr(VᵀAV).
    Score sensitivity (replace one row): q changes by
    tr(Vᵀ D V) = ‖Vᵀx‖² − ‖Vᵀx′‖² ∈ [−1, 1], so Δq = 1 and the factor is ε/(2Δq).
    (Chaudhuri et al., Algorithm 1, write exp((εn/2) tr(Vᵀ Â V)) with Â = A/n:
    the same density.) The distribution is the matrix Bingham distribution with
    parameter (ε/2)A.

    Sampling uses Hoff's (2009) column-wise Gibbs sampler
    (:func:`dpstats.bingham.sample_matrix_bingham`), each column drawn exactly
    from its conditional by rejection. **The privacy guarantee holds for exact
    samples; a finite Markov chain only approximates the distribution**, and the
    gap is not accounted for. The chain starts from a uniformly random
    orthonormal matrix, never from the non-private top eigenvectors (which would
    leak through a short chain).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, rows with ‖x_i‖₂ <= 1.
    k : int
        Dimension of the subspace, 1 <= k <= d. For k = d the score is the
        constant tr(A) and the output is a uniformly random orthogonal matrix.
    epsilon : float
        ε > 0 (pure ε-DP, δ = 0).
    n_sweeps : int, optional
        Gibbs sweeps (each updates all k columns once). Default
        :data:`dpstats.bingham.DEFAULT_SWEEPS`.
    clip : bool, default False
        Rescale rows of norm > 1 to norm 1 instead of raising.
    rng : None, int or numpy.random.Generator
        Source of randomness.
    accountant : Accountant, optional
        Charged (ε, 0) before sampling.

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Orthonormal columns.

    References
    ----------
    Chaudhuri, Sarwate & Sinha, "A near-optimal algorithm for
    differentially-private principal components", JMLR 14, 2013. Hoff,
    "Simulation of the matrix Bingham–von Mises–Fisher distribution, with
    applications to multivariate and relational data", JCGS 18(2), 2009.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 5)) / 3
    >>> V = dps.pca_ppca(X, 2, 1.0, rng=0)
    >>> V.shape
    (5, 2)
    """
    from .bingham import DEFAULT_SWEEPS, sample_matrix_bingham

    epsilon, rng = check_epsilon(epsilon), check_rng(rng)
    A = second_moment(X, clip=clip)
    k = _check_k(k, A.shape[0])
    n_sweeps = DEFAULT_SWEEPS if n_sweeps is None else check_int(n_sweeps, "n_sweeps", low=1)
    charge(accountant, epsilon, 0.0, mechanism="pca_ppca", note=f"Gibbs, {n_sweeps} sweeps (approximate sampler)")
    A *= epsilon / 2.0
    return sample_matrix_bingham(A, k, n_sweeps=n_sweeps, rng=rng)


def pca(X, k: int, *, mechanism: str = "ag", epsilon: float, delta: float = 0.0, rng=None,
        accountant: Accountant | None = None, **options) -> np.ndarray:
    """Private top-k principal subspace with the chosen mechanism.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, rows with ‖x_i‖₂ <= 1.
    k : int
        Dimension of the subspace, 1 <= k <= d.
    mechanism : {"ag", "sn", "ppm", "ppca"}, default "ag"
        :func:`pca_ag` (needs δ > 0) or :func:`pca_sn` (not private) followed by
        :func:`top_components`; :func:`pca_ppm`; :func:`pca_ppca` (δ must be 0).
    epsilon, delta : float
        Privacy parameters of the mechanism (SN ignores δ and is not private).
    rng : None, int or numpy.random.Generator
        Source of randomness.
    accountant : Accountant, optional
        Passed to the mechanism.
    **options
        Further keywords of the mechanism (``clip``, ``calibration``,
        ``n_iter``, ``n_sweeps``).

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Orthonormal columns.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 5)) / 3
    >>> V = dps.pca(X, 2, mechanism="ag", epsilon=1.0, delta=1e-5, rng=0)
    """
    check_choice(mechanism, "mechanism", MECHANISMS)
    X = check_array(X, "X", ndim=(2,))
    _check_k(k, X.shape[1])  # before any budget is charged
    if mechanism == "ppca":
        if check_delta(delta) != 0:
            raise ParameterError(f"mechanism='ppca' is pure epsilon-DP; delta must be 0, got {delta!r}")
        return pca_ppca(X, k, epsilon, rng=rng, accountant=accountant, **options)
    if mechanism == "ppm":
        return pca_ppm(X, k, epsilon, delta, rng=rng, accountant=accountant, **options)
    if mechanism == "sn":
        if check_delta(delta) != 0:
            raise ParameterError(f"mechanism='sn' takes no delta; got {delta!r}")
        A_hat = pca_sn(X, epsilon, rng=rng, accountant=accountant, **options)
    else:
        A_hat = pca_ag(X, epsilon, delta, rng=rng, accountant=accountant, **options)
    return top_components(A_hat, k)
