"""Utility measures for private PCA and low-rank approximation (no privacy here: they read the data).

* :func:`captured_energy` — the papers' utility, q(V̂)/q(V_k) × 100 with
  q(V) = tr(Vᵀ A V) (Imtiaz & Sarwate, ICASSP 2016, eq. (3) and the talk).
* :func:`subspace_distance` — ‖V_k V_kᵀ − V̂ V̂ᵀ‖₂, the sine of the largest
  principal angle.
* :func:`low_rank_error` — ‖A − B‖_F relative to the optimal rank-k error
  ‖A − A_k‖_F (Hardt & Roth 2012 compare against this).
* :func:`coherence` — the two notions of Hardt & Roth (2012), Section 5.
* :func:`sign_accuracy` — accuracy of a linear classifier sign(Xw) on ±1 labels.

Data matrices are n × d with one person per row; A = XᵀX.
"""

from __future__ import annotations

import numpy as np

from ._validation import check_array, check_choice, check_finite, check_int
from .exceptions import DataValidationError

__all__ = ["captured_energy", "coherence", "low_rank_error", "sign_accuracy", "subspace_distance"]


def _matrix(x, name: str) -> np.ndarray:
    return check_finite(check_array(x, name, ndim=(2,)), name)


def _orthonormal_columns(V, name: str, d: int) -> np.ndarray:
    V = _matrix(V, name)
    if V.shape[0] != d or V.shape[1] > d:
        raise DataValidationError(f"{name} must have shape (d, k) with d = {d} and k <= d; got {V.shape}")
    if not np.allclose(V.T @ V, np.eye(V.shape[1]), atol=1e-6):
        raise DataValidationError(f"{name} must have orthonormal columns")
    return V


def captured_energy(data, V, *, kind: str = "auto") -> float:
    """Percentage of the optimal captured energy: 100 · tr(V̂ᵀ A V̂) / Σ_{i<=k} λ_i(A).

    Parameters
    ----------
    data : array_like
        Either the data X (n × d, rows are people; A = XᵀX) or the second-moment
        matrix A (d × d, symmetric PSD).
    V : array_like, shape (d, k)
        Orthonormal columns (for example a private estimate of the top-k subspace).
    kind : {"auto", "X", "A"}, default "auto"
        How to read ``data``; "auto" takes a square symmetric matrix as A.

    Returns
    -------
    float
        100 for the optimal subspace; less for any other.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.metrics import captured_energy
    >>> A = np.diag([3.0, 2.0, 1.0])
    >>> captured_energy(A, np.eye(3)[:, [0, 2]])
    80.0
    """
    check_choice(kind, "kind", ("auto", "X", "A"))
    data = _matrix(data, "data")
    square_sym = data.shape[0] == data.shape[1] and np.allclose(data, data.T)
    if kind == "A" or (kind == "auto" and square_sym):
        if not square_sym:
            raise DataValidationError(f"A must be a symmetric square matrix; got shape {data.shape}")
        A = data
    else:
        A = data.T @ data
    d = A.shape[0]
    V = _orthonormal_columns(V, "V", d)
    k = V.shape[1]
    top = np.linalg.eigvalsh(A)[d - k :].sum()
    if top <= 0:
        raise DataValidationError("the optimal captured energy is 0 (A is zero); the ratio is undefined")
    return float(100.0 * np.trace(V.T @ A @ V) / top)


def subspace_distance(V, W) -> float:
    """Spectral distance ‖V Vᵀ − W Wᵀ‖₂ between the spans of two orthonormal bases.

    For equal dimensions it is the sine of the largest principal angle (0 for
    the same subspace, 1 when some direction of one is orthogonal to the
    other); for different dimensions it is 1.
    """
    V = _matrix(V, "V")
    W = _orthonormal_columns(W, "W", V.shape[0])
    V = _orthonormal_columns(V, "V", V.shape[0])
    if V.shape[1] != W.shape[1]:
        return 1.0
    cosines = np.linalg.svd(V.T @ W, compute_uv=False)
    return float(np.sqrt(max(0.0, 1.0 - float(np.min(cosines)) ** 2)))


def low_rank_error(A, B, k: int) -> float:
    """‖A − B‖_F / ‖A − A_k‖_F: error of an approximation B relative to the best rank-k one.

    Equals 1 for the truncated SVD A_k and is larger for any other rank-k
    matrix (Eckart–Young). ``inf`` if A has (numerical) rank <= k and B ≠ A.
    """
    A, B = _matrix(A, "A"), _matrix(B, "B")
    if A.shape != B.shape:
        raise DataValidationError(f"A and B must have the same shape; got {A.shape} and {B.shape}")
    k = check_int(k, "k", low=1, high=min(A.shape))
    s = np.linalg.svd(A, compute_uv=False)
    tail = s[k:][s[k:] > s.max(initial=0.0) * max(A.shape) * np.finfo(float).eps]  # drop rounding-level values
    optimal = float(np.sqrt(np.sum(tail**2)))
    error = float(np.linalg.norm(A - B))
    if optimal == 0.0:
        return 0.0 if error == 0.0 else float("inf")
    return error / optimal


def coherence(A, *, kind: str = "row", rank: int | None = None) -> float:
    """Matrix coherence in the two senses of Hardt & Roth (2012), Section 5.

    Parameters
    ----------
    A : array_like, shape (m, n)
        The matrix (rows are people).
    kind : {"row", "singular"}, default "row"
        ``"row"`` (μ₀-coherence, Definition 5.1): ``√m · max_i ‖A_i‖₂ / ‖A‖_F``,
        how far the largest row norm exceeds the typical one; between 1 and √m.
        ``"singular"`` (μ-coherence, Definition 5.5): ``(m/r) max_i ‖U_i‖₂²`` for
        the m × r matrix U of left singular vectors of the rank-r matrix A;
        between 1 and m/r.
    rank : int, optional
        r for ``"singular"``; by default the numerical rank of A.

    Returns
    -------
    float
    """
    check_choice(kind, "kind", ("row", "singular"))
    A = _matrix(A, "A")
    m = A.shape[0]
    if kind == "row":
        total = float(np.linalg.norm(A))
        if total == 0:
            raise DataValidationError("coherence is undefined for the zero matrix")
        return float(np.sqrt(m) * np.linalg.norm(A, axis=1).max() / total)
    U, s, _ = np.linalg.svd(A, full_matrices=False)
    if rank is None:
        tol = s.max(initial=0.0) * max(A.shape) * np.finfo(float).eps
        rank = int(np.sum(s > tol))
    rank = check_int(rank, "rank", low=1, high=min(A.shape))
    return float(m / rank * np.max(np.sum(U[:, :rank] ** 2, axis=1)))


def sign_accuracy(w, X, y) -> float:
    """Fraction of rows where sign(x_iᵀ w) equals the label y_i in {−1, +1} (a score of 0 counts as wrong).

    Examples
    --------
    >>> from dpstats.metrics import sign_accuracy
    >>> sign_accuracy([1.0, 0.0], [[0.5, 0.1], [-0.2, 0.3]], [1, 1])
    0.5
    """
    X = check_array(X, "X", ndim=(2,))
    w, y = check_array(w, "w", ndim=(1,)), check_array(y, "y", ndim=(1,))
    if w.shape[0] != X.shape[1] or y.shape[0] != X.shape[0]:
        raise DataValidationError(f"shapes do not match: X {X.shape}, w {w.shape}, y {y.shape}")
    return float(np.mean(np.sign(X @ w) == y))
