"""Private low-rank approximation of a data matrix (Hardt & Roth, STOC 2012).

**Neighbouring relation (Hardt & Roth, Definition 2.1), different from the PCA
functions:** A and A′ (m × n, rows are people) are neighbours when they differ
in a single row and that row changes by a vector of Euclidean norm at most 1:
A′ − A = e_i vᵀ with ‖v‖₂ <= 1. Entries are not otherwise bounded. (Under
dpstats' usual replace-one relation with rows of norm <= 1, a row can move by
up to 2: divide the matrix by 2 to use these guarantees.)

Two methods, both (ε, δ)-DP with δ > 0:

* ``"range_finder"`` — Hardt & Roth's algorithm (Section 6, built on Halko,
  Martinsson & Tropp 2011): a private range finder (Figure 2), optional
  pruning of large entries (Section 5.1), a private projection (Figure 3),
  then truncation to rank k (post-processing). Its error grows with the
  coherence of A (:func:`dpstats.metrics.coherence`), which randomized
  response does not see; it can beat randomized response on incoherent
  matrices with many more columns than rows (n ≫ m), and loses on tall ones,
  where its m × ℓ range-finder noise dominates (measured in
  ``notebooks/papers/hardt_roth.ipynb``).
* ``"input_perturbation"`` — the randomized-response baseline they beat
  (Blum, Dwork, McSherry & Nissim 2005): A plus iid Gaussian noise, then the
  truncated SVD.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import (
    check_array,
    check_choice,
    check_delta,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
    check_rng,
)
from .accounting import Accountant, charge
from .exceptions import ParameterError
from .noise import gaussian_sigma

__all__ = ["low_rank", "range_finder_sensitivity"]

METHODS = ("range_finder", "input_perturbation")


def range_finder_sensitivity(n_measurements: int, delta_tail: float) -> float:
    """τ with P(‖vᵀΩ‖₂ > τ) <= δ_tail for every ‖v‖₂ <= 1 and Ω an n × ℓ standard Gaussian matrix.

    vᵀΩ is N(0, ‖v‖² I_ℓ), so ‖vᵀΩ‖² <= ‖v‖² χ²_ℓ and τ is the upper
    δ_tail-quantile of χ_ℓ. Hardt & Roth (Lemma 4.1) reach a bound of the same
    kind with a union bound over the ℓ coordinates; the exact χ² quantile is
    smaller and equally rigorous.
    """
    from scipy.stats import chi2

    return math.sqrt(float(chi2.isf(delta_tail, n_measurements)))


def _truncated_svd(M: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Factors (L, R) of the best rank-k approximation L @ R of M."""
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    return U[:, :k] * s[:k], Vt[:k]


def low_rank(A, k: int, epsilon: float, delta: float, *, method: str = "range_finder",
             oversampling: int | None = None, prune: float | None = None, split: float = 0.5, rng=None,
             accountant: Accountant | None = None) -> np.ndarray:
    """Differentially private rank-k approximation of A (Hardt & Roth 2012).

    ``method="range_finder"`` (Hardt & Roth, Section 6, algorithm PFP). With
    ℓ = k + p measurements, the budget is split into (ε₁, δ₁) = split · (ε, δ)
    for the range finder and (ε₂, δ₂) = the rest for the projection; the two
    compose to (ε, δ) (basic composition; the projection's noise scale depends
    only on the first stage's private output).

    1. *Range finder* (Figure 2, Lemma 4.1). Draw a secret n × ℓ standard
       Gaussian Ω and release Y = AΩ + N₁. Between neighbours Y changes in one
       row by vᵀΩ ~ N(0, ‖v‖² I_ℓ), whose norm exceeds
       τ = :func:`range_finder_sensitivity` (ℓ, δ₁/2) with probability <= δ₁/2;
       N₁ is iid N(0, σ₁²) with σ₁ the analytic Gaussian σ for sensitivity τ at
       (ε₁, δ₁/2). Hence (ε₁, δ₁)-DP. Q = orthonormal basis of Y (m × ℓ).
    2. *Pruning* (optional, Section 5.1): entries of Q with magnitude above the
       public threshold ``prune`` are set to 0, which lowers the sensitivity of
       the next step at the cost of a bias controlled by the coherence.
    3. *Projection* (Figure 3, Lemma 4.6). Release W = QᵀA + N₂ (ℓ × n). Between
       neighbours QᵀA changes by Qᵀe_i vᵀ, of Frobenius norm ‖Q_i‖₂ ‖v‖₂, so the
       L2 sensitivity is the largest row norm r = max_i ‖Q_i‖₂ of the (already
       public) basis, and N₂ is iid N(0, σ₂²) with σ₂ calibrated for r at
       (ε₂, δ₂). Hardt & Roth calibrate each row of W separately (by the
       largest entry of each column of Q) and combine them by advanced
       composition; one joint Gaussian release with sensitivity r is never
       noisier than that. Low coherence makes r small (about √(ℓ/m)).
    4. Output the best rank-k approximation of Q W (post-processing).

    ``method="input_perturbation"``: Â = A + N with N iid N(0, σ²), σ for L2
    sensitivity 1 (the whole matrix changes by e_i vᵀ, of Frobenius norm <= 1),
    then the truncated SVD of Â.

    Parameters
    ----------
    A : array_like, shape (m, n)
        The data matrix, one person per row (see the module docstring for the
        neighbouring relation).
    k : int
        Target rank, 1 <= k <= min(m, n).
    epsilon : float
        ε > 0 for the whole release.
    delta : float
        0 < δ < 1.
    method : {"range_finder", "input_perturbation"}, default "range_finder"
    oversampling : int, optional
        p >= 0 (range finder only); ℓ = k + p <= n. Default min(k, n − k)
        (Hardt & Roth's Theorem 3.1 uses p = k).
    prune : float, optional
        Public pruning threshold η > 0 for the entries of Q (range finder
        only); ``None`` skips pruning (their Theorem 6.3 setting).
    split : float, default 0.5
        Share of (ε, δ) spent on the range finder, 0 < split < 1.
    rng : None, int or numpy.random.Generator
        Source of randomness (including the secret Ω).
    accountant : Accountant, optional
        Charged (ε, δ) once, before any noise is drawn.

    Returns
    -------
    numpy.ndarray, shape (m, n)
        A matrix of rank at most k.

    References
    ----------
    Hardt & Roth, "Beating randomized response on incoherent matrices", STOC
    2012. Halko, Martinsson & Tropp, "Finding structure with randomness",
    SIAM Review 53(2), 2011. Blum, Dwork, McSherry & Nissim, "Practical
    privacy: the SuLQ framework", PODS 2005.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((2000, 2)) @ rng.standard_normal((2, 30)) * 50
    >>> B = dps.low_rank(A, 2, 1.0, 1e-6, rng=0)
    >>> int(np.linalg.matrix_rank(B))
    2
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    check_choice(method, "method", METHODS)
    if delta == 0:
        raise ParameterError("low_rank needs delta > 0 (both methods add Gaussian noise)")
    A = check_finite(check_array(A, "A", ndim=(2,)), "A")
    m, n = A.shape
    k = check_int(k, "k", low=1, high=min(m, n))
    if method == "input_perturbation":
        sigma = gaussian_sigma(1.0, epsilon, delta)
        charge(accountant, epsilon, delta, mechanism="low_rank", note="input perturbation")
        L, R = _truncated_svd(A + rng.normal(0.0, sigma, size=A.shape), k)
        return L @ R
    p = min(k, n - k) if oversampling is None else check_int(oversampling, "oversampling", low=0, high=n - k)
    if prune is not None:
        prune = check_positive(prune, "prune")
    if not (isinstance(split, (int, float)) and 0 < split < 1):
        raise ParameterError(f"split must be a number with 0 < split < 1; got {split!r}")
    ell = k + p
    eps1, delta1 = split * epsilon, split * delta
    eps2, delta2 = epsilon - eps1, delta - delta1
    sigma1 = gaussian_sigma(range_finder_sensitivity(ell, delta1 / 2), eps1, delta1 / 2)
    charge(accountant, epsilon, delta, mechanism="low_rank", note=f"range finder, l={ell}, split={split:g}")
    omega = rng.standard_normal((n, ell))
    Q = np.linalg.qr(A @ omega + rng.normal(0.0, sigma1, size=(m, ell)))[0]
    if prune is not None:
        Q[np.abs(Q) > prune] = 0.0
    r = float(np.sqrt(np.einsum("ij,ij->i", Q, Q).max()))
    W = Q.T @ A + rng.normal(0.0, gaussian_sigma(r, eps2, delta2), size=(ell, n))
    # Q W has rank <= ell; its best rank-k approximation via the small factor R2 W (Q = Q2 R2).
    Q2, R2 = np.linalg.qr(Q)
    L, R = _truncated_svd(R2 @ W, k)
    return (Q2 @ L) @ R
