"""Differentially private canonical correlation analysis (DP-CCA).

Follows the algorithm of Imtiaz & Sarwate, "Differentially-private canonical
correlation analysis" (poster; ``../shared/papers/003_82d4d6ef9023bc96.txt``):
perturb the joint second-moment matrix of Z = [X, Y] with a symmetric Gaussian
matrix (as in Analyze Gauss), cut the noisy matrix into its blocks Ĉxx, Ĉxy,
Ĉyy, and run CCA on the blocks (post-processing). The poster writes the views
as D × N matrices; dpstats uses rows (N × D).

Only numpy is imported at module level by this module's own code:
:func:`cca` is re-exported eagerly by ``dpstats/__init__.py`` (the function
shares its name with this module).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._constraints import (
    NOISE,
    UNITS,
    Components,
    Data,
    Flag,
    NoneOr,
    NormBound,
    Options,
    Real,
    privacy,
)
from .._engine import Matrix, as_array, bound_matrix, float_gram, grid_gram, take_units
from .._kernels.gram import norm_bound_squared, symmetric_from_upper
from .._registry import declare
from .._release import calibrate, charge
from .._validation import check_int
from ..accounting import DEFAULT_DELTA, Accountant
from ..exceptions import DataValidationError
from ..noise.release import GRID_BITS, Statistic, grid_for
from ..preprocessing import RADIUS_SHARE, to_unit_rows

__all__ = ["CCAResult", "canonical_correlations", "cca"]


@dataclass(frozen=True, eq=False)
class CCAResult:
    """Outcome of :func:`cca`.

    Attributes
    ----------
    U : numpy.ndarray, shape (dx, k)
        Canonical directions of X, normalised so that ``Uᵀ Ĉxx⁺ U = I`` (Ĉxx⁺:
        the noisy block with its eigenvalues floored at ``ridge``).
    V : numpy.ndarray, shape (dy, k)
        Canonical directions of Y, ``Vᵀ Ĉyy⁺ V = I``.
    correlations : numpy.ndarray, shape (k,)
        Canonical correlations of the noisy estimate, decreasing. At small ε the
        noisy matrix need not be positive semi-definite and a value can exceed 1;
        it is reported as computed.
    C_hat : numpy.ndarray, shape (dx + dy, dx + dy)
        The private release: ``ZᵀZ/N + E`` (symmetric, possibly indefinite).
    epsilon, delta : float
        Privacy parameters of the release.
    sigma : float
        Standard deviation of every independent entry of E.
    calibration : str
        ``"analytic"`` or ``"classic"``.
    ridge : float
        Eigenvalue floor applied to Ĉxx and Ĉyy.
    n : int
        The normalisation of ``C_hat``: the number of samples N, or with a
        privacy unit the public bound N_u·m on the rows kept (N_u units, at most
        m rows each; the number of rows is not public).
    """

    U: np.ndarray
    V: np.ndarray
    correlations: np.ndarray
    C_hat: np.ndarray
    epsilon: float
    delta: float
    sigma: float
    calibration: str
    ridge: float
    n: int


def _floored_inverse_sqrt(C: np.ndarray, floor: float) -> np.ndarray:
    """(C⁺)^{-1/2} where C⁺ is the symmetric C with its eigenvalues raised to at least ``floor``."""
    vals, vecs = np.linalg.eigh((C + C.T) / 2)
    return (vecs / np.sqrt(np.maximum(vals, floor))) @ vecs.T


def canonical_correlations(C: np.ndarray, dx: int, k: int, ridge: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CCA from a (noisy) joint second-moment matrix: post-processing, no privacy cost.

    With ``Cxx⁺``, ``Cyy⁺`` the diagonal blocks with eigenvalues floored at
    ``ridge`` (so they are positive definite even when the noise made them
    indefinite), the canonical pairs are the singular pairs of
    ``M = Cxx⁺^{-1/2} Cxy Cyy⁺^{-1/2} = P S Qᵀ``: ``U = Cxx⁺^{-1/2} P_k``,
    ``V = Cyy⁺^{-1/2} Q_k``, correlations ``S_k``. This is the closed form of the
    poster (top eigenvectors of Cxx⁻¹CxyCyy⁻¹Cyx; Hardoon et al. 2004) computed
    through a symmetric factorisation, which stays finite for any input.

    Parameters
    ----------
    C : numpy.ndarray, shape (D, D)
        Symmetric joint matrix of [X, Y].
    dx : int
        Number of X columns (the first ``dx`` rows/columns of C).
    k : int
        Number of canonical pairs, 1 <= k <= min(dx, D − dx).
    ridge : float
        Eigenvalue floor, > 0.

    Returns
    -------
    (U, V, correlations)
    """
    Wx = _floored_inverse_sqrt(C[:dx, :dx], ridge)
    Wy = _floored_inverse_sqrt(C[dx:, dx:], ridge)
    P, S, Qt = np.linalg.svd(Wx @ C[:dx, dx:] @ Wy)
    return Wx @ P[:, :k], Wy @ Qt[:k].T, S[:k]


def default_ridge(sigma: float, D: int) -> float:
    """Default eigenvalue floor ``2σ√D``: about the spectral norm of the D × D symmetric noise matrix.

    It depends only on the public σ and D. Eigenvalues of Ĉxx below it are
    dominated by noise; flooring them keeps Ĉxx⁺^{-1/2} from amplifying noise.
    """
    return 2.0 * sigma * math.sqrt(D)


@declare(
    family="decomposition",
    statistic="canonical correlations and directions of two views, from a noisy joint second-moment matrix",
    data={
        "X": Data("matrix", "an n × dx matrix (the first view)"),
        "Y": Data("matrix", "an n × dy matrix (the second view), rows aligned with X"),
    },
    own=("k",),
    parameters={
        **privacy("approx"),
        "k": Components(),
        "calibration": Options("analytic", "classic"),
        "ridge": NoneOr(Real(0, None)),
        "clip": Flag(),
        "norm_bound": NormBound(),
        "radius_share": Real(0, 1),
        **UNITS,
        **NOISE,
    },
    engines=("numpy", "dask"),
    cases="dpstats.decomposition._cases:cca",
    preview="dpstats.decomposition._previews:cca_preview",
)
def cca(
    X,
    Y,
    k: int,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    *,
    calibration: str = "analytic",
    ridge: float | None = None,
    clip: bool = False,
    norm_bound=None,
    radius_share: float = RADIUS_SHARE,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
) -> CCAResult:
    """Differentially private CCA: Analyze-Gauss noise on the joint second-moment matrix ((ε, δ)-DP).

    Algorithm (Imtiaz & Sarwate, DP-CCA poster, "Algorithm: Differentially-private
    CCA"): with Z = [X, Y] (N × D, D = dx + dy) and ‖z_n‖₂ <= 1,

    1. C = ZᵀZ / N;
    2. E symmetric D × D, upper triangle (diagonal included) iid N(0, σ²);
    3. Ĉ = C + E, cut into Ĉxx, Ĉxy, Ĉyy;
    4. canonical directions from the blocks (:func:`canonical_correlations`).

    Sensitivity (replace one row z by z′, N public, ‖z‖, ‖z′‖ <= 1): C changes by
    D = (z zᵀ − z′ z′ᵀ)/N with ‖z zᵀ − z′ z′ᵀ‖_F² = ‖z‖⁴ + ‖z′‖⁴ − 2(zᵀz′)² <= 2;
    the released upper triangle changes by at most ‖D‖_F, so **Δ₂ = √2/N**
    (attained by orthogonal unit vectors; √2·R²/N with the row-norm bound R²
    of :func:`dpstats._kernels.gram.norm_bound_squared`). The poster's
    τ = (√2/(Nε))·√(2 ln(1.25/δ)) is the classic Gaussian calibration with this
    same replace-one sensitivity (``calibration="classic"`` reproduces it; it is
    proven for ε < 1 only). The default is the analytic Gaussian mechanism
    (Balle & Wang 2018), valid for every ε. Steps 3–4 are post-processing.

    With a privacy unit (replace all rows of one unit, at most m kept per unit,
    N_u units public): the unit's joint rows contribute a PSD matrix P with
    tr P <= m R² to ZᵀZ, and ‖P − P′‖_F <= √2·m·R² (as for
    :func:`dpstats.pca_ag`), so Δ₂ = √2·m·R² before the division, which uses
    the public N_u·m instead of the (private) number of rows.

    Exactness (``noise="exact"``, the default): as in :func:`dpstats.pca_ag`,
    ZᵀZ is rounded block by block to a public grid, exact discrete Gaussian
    noise is added to the integer matrix, and the division by N comes after
    the noise (post-processing).

    Centering: the poster assumes 0-centred samples; **this function does not
    centre**, it uses the second-moment matrix of the rows as given. Centering
    with the data's own means is not private (and the centred rows need not
    satisfy the norm bound); centre with public means or with private ones
    (e.g. :func:`dpstats.mean`, spending budget), then make sure every row of
    [X − μx, Y − μy] still has norm <= 1.

    Parameters
    ----------
    X : array_like, shape (N, dx)
        First view, one person per row.
    Y : array_like, shape (N, dy)
        Second view, the same N people in the same order. Every joint row
        [x_n, y_n] must have ‖·‖₂ <= 1.
    k : int
        Number of canonical pairs, 1 <= k <= min(dx, dy).
    epsilon : float
        ε > 0.
    delta : float
        0 < δ < 1.
    calibration : {"analytic", "classic"}, default "analytic"
        Gaussian calibration (see above).
    ridge : float, optional
        Floor for the eigenvalues of Ĉxx and Ĉyy before their inverse square
        roots are taken (the noisy blocks can be indefinite or ill-conditioned).
        Must not be chosen from the data. Default :func:`default_ridge`,
        ``2σ√D``.
    clip : bool, default False
        Rescale joint rows of norm > 1 (or > ``norm_bound``) to it instead of raising.
    norm_bound : None, float or "private", default None
        What the joint rows' norms are bounded by: None (1), a public R > 0 (the rows are divided by R, the
        release ``C_hat``, ``sigma`` and ``ridge`` are in the data's units, and ``U``, ``V`` apply to the rows as
        given), or ``"private"``: the private 0.75-quantile of the joint rows' norms, bought with
        ``radius_share``·ε and charged with the release as one ledger entry; rows above it are clipped
        (:func:`dpstats.preprocessing.to_unit_rows`).
    radius_share : float, default 0.1
        With ``norm_bound="private"``: the part of ε spent on the bound (public).
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame ``X``), see
        above and :func:`dpstats.mean`.
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    rng : None, int or numpy.random.Generator
        Source of noise; ``None`` is a cryptographically secure OS-keyed source.
    accountant : Accountant, optional
        Charged before any noise is drawn.
    noise : {"exact", "float"}, default "exact"
        Exact discrete noise on a grid, or the poster's floating-point noise
        (warns; ``calibration="classic"`` implies it).

    Returns
    -------
    CCAResult
        ``U``, ``V``, ``correlations``, the release ``C_hat`` and the privacy
        parameters used.

    References
    ----------
    Imtiaz & Sarwate, "Differentially-private canonical correlation analysis"
    (poster). Dwork, Talwar, Thakurta & Zhang, "Analyze Gauss", STOC 2014.
    Hardoon, Szedmak & Shawe-Taylor, "Canonical correlation analysis: an
    overview with application to learning methods", Neural Comput. 2004.
    Balle & Wang, "Improving the Gaussian mechanism for differential privacy",
    ICML 2018.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> rng = np.random.default_rng(0)
    >>> s = rng.uniform(-1, 1, (5000, 1))
    >>> X = np.hstack([s, rng.uniform(-1, 1, (5000, 1))]) / 3
    >>> Y = np.hstack([s + 0.1 * rng.uniform(-1, 1, (5000, 1)), rng.uniform(-1, 1, (5000, 1))]) / 3
    >>> res = dps.cca(X, Y, 1, epsilon=1.0, delta=1e-5, rng=0)
    >>> res.U.shape, res.V.shape
    ((2, 1), (2, 1))
    """
    X, units = take_units(X, privacy_unit, max_rows, "X")
    X, Y = as_array(X, "X", ndim=(2,)), as_array(Y, "Y", ndim=(2,))
    if X.shape[0] != Y.shape[0]:
        raise DataValidationError(
            f"X and Y must have the same number of rows (the same people, in the same order); "
            f"got {X.shape[0]} and {Y.shape[0]}"
        )
    dx, dy = X.shape[1], Y.shape[1]
    if dx < 1 or dy < 1:
        raise DataValidationError(f"X and Y must each have at least one column; got shapes {X.shape} and {Y.shape}")
    k = check_int(k, "k", low=1, high=min(dx, dy))
    joint = Matrix(np.hstack([X, Y]), None if units is None else units.aligned(X.shape[0]), "[X, Y]")  # read once
    scaled = to_unit_rows(
        joint, norm_bound, epsilon, radius_share=radius_share, clip=clip, rng=rng, accountant=accountant
    )
    accountant, radius2 = scaled.accountant, scaled.radius**2
    rows = bound_matrix(scaled.rows, clip=scaled.clip, rng=rng)
    Z, n, m = rows.arrays[0], rows.rows_bound, rows.max_rows
    D = Z.shape[1]
    sensitivity = math.sqrt(2.0) * m * norm_bound_squared(D)  # of the unnormalised ZᵀZ
    upper = np.triu_indices(D)
    if noise == "exact" and calibration == "analytic":
        gram = grid_gram(Z, grid_for(sensitivity / math.sqrt(upper[0].size), GRID_BITS), n, "[X, Y]")
        statistic, slack = Statistic(gram.values[upper], gram.grid), gram.slack * float(gram.grid)
    else:
        statistic, slack = Statistic(float_gram(Z, n, "[X, Y]")[upper]), 0.0
    calibrated = calibrate(
        epsilon=scaled.epsilon,
        delta=delta,
        sensitivity=sensitivity,
        changed=upper[0].size,
        unit=statistic.unit,
        slack=slack,
        noise=noise,
        calibration=calibration,
    )
    sigma = calibrated.noise_scale * radius2 / n  # in the data's units
    ridge = default_ridge(sigma, D) if ridge is None else ridge
    charge(
        "cca",
        [calibrated.event],
        rng=rng,
        accountant=accountant,
        rows=rows,
        note=f"{calibration} Gaussian, sigma={sigma:.3g}",
        noise=calibrated.statement("covariance units (entries of ZᵀZ/n)", factor=radius2 / n),
    )
    C = symmetric_from_upper(calibrated.apply(statistic, rng), D) / n
    if radius2 != 1.0:
        C = C * radius2  # back to the data's units (post-processing)
    U, V, corr = canonical_correlations(C, dx, k, ridge)
    return CCAResult(U, V, corr, C, epsilon, delta, sigma, calibration, ridge, n)
