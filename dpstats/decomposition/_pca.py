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

These bounds scale with R², the largest squared norm a row can have after the
row-norm check (:func:`dpstats._kernels.gram.norm_bound_squared`: 1 plus the
check's tolerance and rounding, below 1 + 1e-9); every sensitivity below uses
R² where the papers write 1, so none is understated.

Noise. :func:`pca_ag` rounds XᵀX block by block to a public grid and adds
exact discrete Gaussian noise (:mod:`dpstats.noise.release`); the power method
adds exact discrete noise to each A·Y with the floating-point error of A·Y
bounded and charged. The exponential mechanism (:func:`pca_ppca`) draws its
vectors with an exact vector-Bingham sampler (:mod:`dpstats.decomposition._bingham_exact`:
exact normal proposals, a certified envelope, acceptance decided on exact
intervals) and rounds each exact draw to a public grid of 2^-32.

Privacy units. With ``privacy_unit=`` and ``max_rows=m`` neighbours differ in
all rows of one unit (at most m kept per unit, chosen at random; N units,
public). A unit's rows contribute P = Σ_{i∈u} x_i x_iᵀ to A, a positive
semi-definite matrix with tr P <= m·R², so replacing the unit changes A by
P − P′ with

* ‖P − P′‖_F² = ‖P‖_F² + ‖P′‖_F² − 2⟨P, P′⟩ <= (m R²)² + (m R²)²
  (‖P‖_F <= tr P and ⟨P, P′⟩ >= 0 for PSD matrices): ‖P − P′‖_F <= √2·m·R²;
* the eigenvalues of P − P′ lie in [−λ_max(P′), λ_max(P)] ⊆ [−m R², m R²];
* tr(Vᵀ(P − P′)V) ∈ [−m R², m R²] for orthonormal V.

Every row sensitivity above is therefore multiplied by m (and is unchanged for
m = 1). The row count is not public: the floating-point error bounds use the
public bound N·m on the rows kept instead of n.

Mechanisms: :func:`pca_ag` (Analyze Gauss), :func:`pca_sn` (the ICASSP 2016 SN
algorithm, **not** private, see its erratum), :func:`pca_ppm` (noisy power
method), :func:`pca_ppca` (exponential mechanism, matrix Bingham) and the
dispatcher :func:`pca`. :func:`top_components` post-processes any symmetric
estimate of A.

Tables: every function here takes a pandas or polars DataFrame (numeric
columns) as ``X`` and names its result by the columns: the d × k loadings as a
DataFrame indexed by column with columns ``pc1`` … ``pck`` (polars: one row per
column, in order), the d × d matrices with the column names on both axes.
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings

import numpy as np

from .._constraints import (
    NOISE,
    UNITS,
    Checked,
    Components,
    Data,
    Delta,
    Flag,
    Integer,
    NoneOr,
    NormBound,
    Options,
    Real,
    privacy,
)
from .._engine import Bounded, bound_matrix, check_row_norms, float_gram, grid_gram, read_matrix
from .._engine.tables import named_rows
from .._kernels.gram import float_gram_error, norm_bound_squared, symmetric_from_upper
from .._registry import declare, outer
from .._release import calibrate, charge
from .._rounding import ORTHONORMAL_MARGIN, gamma
from .._trace import draw, observe
from .._validation import check_array, check_finite, check_flag, check_int
from ..accounting import DEFAULT_DELTA, Accountant, split_epsilon
from ..accounting.events import Exponential
from ..exceptions import DataValidationError, NotPrivateWarning, ParameterError
from ..noise.release import GRID_BITS, Statistic, grid_for
from ..preprocessing import RADIUS_SHARE, to_unit_rows
from ._bingham import OUTPUT_BITS, bingham_scale, check_certifiable, on_output_grid, score_sensitivity
from ._covariance import amin_eigen
from ._dong import pca_dong

__all__ = ["pca", "pca_ag", "pca_ppca", "pca_ppm", "pca_sn", "second_moment", "top_components"]

MECHANISMS = ("ag", "sn", "ppm", "ppca", "amin", "dong")

#: The keyword options :func:`pca` passes on to each mechanism.
OPTIONS = {
    "ag": ("calibration", "clip", "noise", "privacy_unit", "max_rows"),
    "sn": ("clip",),
    "ppm": ("n_iter", "clip", "noise", "privacy_unit", "max_rows"),
    "ppca": ("sampler", "n_sweeps", "clip", "privacy_unit", "max_rows"),
    "amin": ("split", "eigenvalue_share", "clip", "privacy_unit", "max_rows"),
    "dong": ("algorithm", "eigenvalues", "clip", "noise", "privacy_unit", "max_rows"),
}

SN_ERRATUM = (
    "Imtiaz (2017), 'A Note on Wishart Mechanisms for (epsilon, 0) Differential Privacy', proves that "
    "additive Wishart noise cannot be (epsilon, 0)-DP, so the SN algorithm of Imtiaz & Sarwate "
    "(ICASSP 2016) offers no differential privacy guarantee"
)


#: The data of every PCA release: an n × d matrix whose rows have norm <= 1 (or a public/private bound).
MATRIX = {"X": Data("matrix", "an n × d matrix of rows with L2 norm <= 1")}
#: k, the number of components (at most d: checked where d is known).
COMPONENTS = Components()


def _declared(statistic: str, cases: str, parameters: dict, *, engines=("numpy", "dask"), **kw):
    return declare(
        family="decomposition",
        statistic=statistic,
        data=MATRIX,
        parameters=parameters,
        engines=engines,
        cases=f"dpstats.decomposition._cases:{cases}",
        **kw,
    )


def second_moment(X, *, clip: bool = False) -> np.ndarray:
    """Validate ``X`` (rows with ‖x_i‖₂² <= 1 + τ, finite) and return ``A = Xᵀ X`` in floating point.

    The product is accumulated over blocks of rows; each block's row norms are
    checked while the block is in cache, and the rows are split into one part
    per core, each in its own thread with a single-threaded BLAS
    (:mod:`dpstats._engine`), so the check costs little on top of the
    product and X is never copied (unless it is not float64, or ``clip=True``
    has to rescale rows). Results agree across core counts to rounding.

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
    data = read_matrix(X)
    return float_gram(check_row_norms(data.X, data.name, clip=True) if check_flag(clip, "clip") else data.X)


_NO_K = object()


def bounded_rows(X, privacy_unit, max_rows, clip: bool, rng, *, k=_NO_K) -> Bounded:
    """The rows a PCA release reads (:func:`dpstats._engine.bound_matrix`: read once, clipped or checked, bounded
    per unit), and ``k`` (when the release takes one) checked against their columns, before anything is charged."""
    rows = bound_matrix(X, privacy_unit, max_rows, clip=clip, rng=rng)
    if k is not _NO_K:
        _check_k(k, rows.arrays[0].shape[1])
    return rows


def _check_k(k, d: int) -> int:
    return check_int(k, "k", low=1, high=d)


@named_rows("components")
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
        Orthonormal columns, ordered by decreasing eigenvalue (a DataFrame
        indexed like ``A_hat``'s columns, with columns ``pc1`` … ``pck``, when
        ``A_hat`` is one).

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


def _no_k(function):
    """pca_ag takes (X, epsilon, delta) and returns the d × d matrix; a call in the style of pca_ppm
    (X, k, epsilon, delta) gets an error that says where k goes, instead of Python's bare TypeError."""

    @functools.wraps(function)
    def wrapper(X, *args, **kwargs):
        hint = (
            "pca_ag(X, epsilon, delta) takes no k: it returns the noisy d x d second-moment matrix. For the "
            "top-k components use dps.pca(X, k, epsilon=..., delta=...) (mechanism='ag' by default) or "
            "dps.top_components(dps.pca_ag(X, epsilon, delta), k)"
        )
        if len(args) > 2:
            raise TypeError(hint)
        delta = args[1] if len(args) == 2 else kwargs.get("delta", 0.5)
        if isinstance(delta, numbers.Real) and not isinstance(delta, bool) and delta >= 1:
            raise ParameterError(f"delta must be a number with 0 <= delta < 1; got {delta!r}. {hint}")
        return function(X, *args, **kwargs)

    return wrapper if not hasattr(function, "declaration") else outer(wrapper)


@_no_k
@_declared(
    "Analyze Gauss: the Gram matrix XᵀX plus symmetric Gaussian noise",
    "pca_ag",
    {**privacy("approx"), "calibration": Options("analytic", "classic"), "clip": Flag(), **UNITS, **NOISE},
    preview="dpstats.decomposition._previews:pca_ag_preview",
)
@named_rows("features")
def pca_ag(
    X,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    *,
    calibration: str = "analytic",
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
) -> np.ndarray:
    """Analyze Gauss: ``Xᵀ X`` plus a symmetric Gaussian matrix ((ε, δ)-DP).

    Follows Dwork, Talwar, Thakurta & Zhang (2014), Algorithm 1: add a symmetric
    matrix E whose upper triangle (diagonal included) is iid N(0, σ²).

    Sensitivity (replace one row, ‖x_i‖₂ <= 1, n public). The release is the
    upper triangle of A = XᵀX, which changes by the upper triangle of
    ``D = x xᵀ − x′ x′ᵀ``. Its Euclidean norm is at most ‖D‖_F (each off-diagonal
    entry is counted once instead of twice), and
    ‖D‖_F² = ‖x‖⁴ + ‖x′‖⁴ − 2 (xᵀx′)² <= 2, so **Δ₂ = √2** (√2·R² with the
    row-norm bound R² of the module docstring). The bound is attained
    (x = e₁, x′ = e₂). Dwork et al. state Δ₂ = 1 for add/remove neighbours; the
    papers' replace-one relation needs √2. With a privacy unit (replace all
    rows of one unit, at most m kept): **Δ₂ = √2·m·R²** (module docstring).

    Exactness (the default ``noise="exact"``): every row is rounded to a public
    fixed-point grid after a shrink that keeps it within the norm bound (a map
    of each row on its own), the Gram matrix of the rounded rows is summed
    exactly in integers (the same on every engine and chunking) and rounded
    once to a public grid G (2^-20 of the per-entry sensitivity); the release
    is that integer matrix plus exact discrete Gaussian noise, times G. The
    final rounding is charged in the sensitivity (:mod:`dpstats._kernels.gram`).

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame, shape (n, d)
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
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame ``X``):
        neighbours then differ in all rows of one unit, at most ``max_rows``
        of which are kept (module docstring, "Privacy units").
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    rng : None, int or numpy.random.Generator
        Source of noise; ``None`` is a cryptographically secure OS-keyed source.
    accountant : Accountant, optional
        Charged before any noise is drawn.
    noise : {"exact", "float"}, default "exact"
        Exact discrete noise on a grid, or the paper's floating-point noise
        (warns; ``calibration="classic"`` implies it).

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The symmetric noisy second-moment matrix (it may be indefinite); pass it
        to :func:`top_components` for a subspace, or call :func:`pca` for the
        top-k components directly (``pca_ag(X, k, epsilon, delta)`` raises a
        ``TypeError`` that says so). A DataFrame ``X`` gives a DataFrame with
        its column names on both axes.

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
    rows = bounded_rows(X, privacy_unit, max_rows, clip, rng)
    X, rows_bound, m = rows.arrays[0], rows.rows_bound, rows.max_rows
    d = X.shape[1]
    sensitivity = math.sqrt(2.0) * m * norm_bound_squared(d)
    upper = np.triu_indices(d)
    entries = upper[0].size
    exact = noise == "exact" and calibration == "analytic"
    if exact:
        gram = grid_gram(X, grid_for(sensitivity / math.sqrt(entries), GRID_BITS), rows_bound)
        statistic, slack = Statistic(gram.values[upper], gram.grid), gram.slack * float(gram.grid)
    else:
        statistic, slack = Statistic(float_gram(X, rows_bound)[upper]), 0.0
    calibrated = calibrate(
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
        changed=entries,
        unit=statistic.unit,
        slack=slack,
        noise=noise,
        calibration=calibration,
    )
    charge(
        "pca_ag",
        [calibrated.event],
        rng=rng,
        accountant=accountant,
        rows=rows,
        note=f"{calibration} calibration",
        noise=calibrated.statement("Gram units (entries of XᵀX)"),
    )
    return symmetric_from_upper(calibrated.apply(statistic, rng), d)


@_declared(
    "SN (Wishart noise on XᵀX): NOT differentially private, reproduced for the paper",
    "pca_sn",
    {**privacy("pure"), "clip": Flag()},
    engines=("numpy", "dask"),
    relations=("row",),
    private=False,
    preview="dpstats.decomposition._previews:pca_sn_preview",
)
@named_rows("features")
def pca_sn(
    X, epsilon: float, delta: float = 0.0, *, clip: bool = False, rng=None, accountant: Accountant | None = None
) -> np.ndarray:
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
    X : array_like, pandas or polars DataFrame, shape (n, d)
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
    A = second_moment(X, clip=clip)
    warnings.warn(f"pca_sn is not differentially private: {SN_ERRATUM}.", NotPrivateWarning, stacklevel=3)
    if accountant is not None:
        accountant.refuse("pca_sn", SN_ERRATUM)
    d = A.shape[0]
    Z = rng.normal(0.0, math.sqrt(1.0 / (2.0 * epsilon)), size=(d, d + 1))
    A += Z @ Z.T
    return A


#: The most noisy power iterations :func:`pca_ppm` runs (see its ``n_iter``).
MAX_N_ITER = 10_000


def _check_n_iter(n_iter) -> int:
    """``n_iter`` as an int in [1, MAX_N_ITER], refused beyond with the reason (public quantities only)."""
    if isinstance(n_iter, numbers.Integral) and not isinstance(n_iter, bool) and n_iter > MAX_N_ITER:
        raise ParameterError(
            f"n_iter must be an integer in [1, {MAX_N_ITER}]; got {n_iter!r}: every iteration is a noisy release "
            f"of the same budget, so at n_iter = L each one gets sqrt(L) times the noise of a single release "
            f"(delta > 0) or epsilon/L (delta = 0) — {math.isqrt(MAX_N_ITER)} times the noise at {MAX_N_ITER}, "
            f"where the default is ceil(10 ln d) — and the run costs L products of the d x d matrix with d x k"
        )
    return check_int(n_iter, "n_iter", low=1, high=MAX_N_ITER)


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
    """L2 and L1 sensitivity of A·Y for Y with k orthonormal columns (see :func:`pca_ppm`), with the row-norm
    bound R² of the module docstring and :data:`dpstats._rounding.ORTHONORMAL_MARGIN` for Y's rounding: Y comes
    from a floating-point QR, its columns orthonormal to within O(d·k·u) (Higham 2002, Theorem 19.4), far below
    that margin."""
    bound = norm_bound_squared(d) * ORTHONORMAL_MARGIN
    l2 = bound if k == 1 else math.sqrt(2.0) * bound
    return math.nextafter(l2, math.inf), math.nextafter(2.0 * math.sqrt(d * k) * bound, math.inf)


def _product_error(n: int, d: int) -> float:
    """A bound on the floating-point error of every entry of fl(Ã·Y) against A·Y, for Ã from
    :func:`dpstats._engine.float_gram` and Y with orthonormal columns (public: n, d only).

    |Ã − A| <= e_A entrywise (:func:`dpstats._kernels.gram.float_gram_error`); Σ_l |Y_lk| <= √d; and the
    product adds at most γ_d Σ_l |Ã_jl||Y_lk| <= γ_d (n R² + e_A) √d (Higham 2002, eq. (3.13)).
    """
    e_a = float_gram_error(n, d)
    return math.nextafter(
        (e_a + gamma(d) * (n * norm_bound_squared(d) + e_a)) * math.sqrt(d) * ORTHONORMAL_MARGIN, math.inf
    )


def _orthonormal(Y: np.ndarray) -> np.ndarray:
    Q, _ = np.linalg.qr(Y)
    return Q


def random_orthonormal(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A d × k matrix with orthonormal columns, uniform (Haar) on the Stiefel manifold."""
    Q, R = np.linalg.qr(rng.standard_normal((d, k)))
    return Q * np.where(np.diag(R) < 0, -1.0, 1.0)


@_declared(
    "the noisy power method: an orthonormal basis of the top-k subspace",
    "pca_ppm",
    {
        **privacy(),
        "delta": Delta("either", default=DEFAULT_DELTA),
        "k": COMPONENTS,
        "n_iter": Checked(
            f"None or an integer in [1, {MAX_N_ITER}]", {"0": 0, "1.5": 1.5, "too many": MAX_N_ITER + 1, "'3'": "3"}
        ),
        "clip": Flag(),
        **UNITS,
        **NOISE,
    },
    own=("k",),
    preview="dpstats.decomposition._previews:pca_ppm_preview",
)
@named_rows("components")
def pca_ppm(
    X,
    k: int,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    *,
    n_iter: int | None = None,
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
) -> np.ndarray:
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
    noise scale depend on the data-dependent iterates. With a privacy unit
    (replace all rows of one unit, at most m kept) every step's sensitivity is
    m times these: Δ₂ = m (k = 1, the spectral bound of the module docstring)
    or √2·m (k >= 2, Frobenius), Δ₁ <= 2m√(dk).

    Calibration. δ > 0: each step is a Gaussian mechanism with multiplier
    μ = σ/Δ₂, and L adaptive Gaussian steps compose *exactly* into one Gaussian
    mechanism with multiplier μ/√L (their privacy-loss distributions are
    Gaussian and add; Dong, Roth & Su 2022, Corollary 3.3), so
    ``σ = √L · σ_analytic(Δ₂, ε, δ)`` is the smallest σ that makes the whole
    run (ε, δ)-DP — tighter than the zCDP conversion dpstats used before, and the
    ledger records one Gaussian event repeated L times. δ = 0: Laplace noise
    with ε/L per step (basic composition; the split is exact, never above ε),
    pure ε-DP.

    Exactness. Each A·Y is computed in floating point with an error of at most
    :func:`_product_error` per entry (a bound that depends on n and d only);
    neighbours' products can therefore differ by up to twice that beyond the
    sensitivity, which is charged together with the rounding to the noise grid,
    and exact discrete noise is added (:mod:`dpstats.noise.release`). At
    n = 1e6, d = 784 the charge raises σ by about 0.3 %.

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame, shape (n, d)
        Data, rows with ‖x_i‖₂ <= 1.
    k : int
        Dimension of the subspace, 1 <= k <= d.
    epsilon : float
        ε > 0 for the whole run.
    delta : float
        δ = 0 for the Laplace variant, 0 < δ < 1 for the Gaussian one.
    n_iter : int, optional
        Number L of noisy iterations, 1 … :data:`MAX_N_ITER` (10,000); default
        :func:`default_n_iter` (``ceil(10 ln d)``, data-independent). More is
        refused: each iteration gets √L times the noise of one release (δ > 0)
        or ε/L (δ = 0). The ICASSP 2016 paper chose
        L ∝ σ_k/(σ_k − σ_{k+1}) log d from the non-private spectrum; that choice
        is not private.
    clip : bool, default False
        Rescale rows of norm > 1 to norm 1 instead of raising.
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame ``X``):
        neighbours then differ in all rows of one unit, at most ``max_rows``
        of which are kept (module docstring, "Privacy units").
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    rng : None, int or numpy.random.Generator
        Source of noise and of the starting point.
    accountant : Accountant, optional
        Charged once, before any noise is drawn.
    noise : {"exact", "float"}, default "exact"
        Exact discrete noise on a grid, or floating-point noise (warns).

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
    rows = bounded_rows(X, privacy_unit, max_rows, clip, rng, k=k)
    X, rows_bound, m = rows.arrays[0], rows.rows_bound, rows.max_rows
    d = X.shape[1]
    L = default_n_iter(d, k) if n_iter is None else _check_n_iter(n_iter)
    l2, l1 = (m * value for value in _ppm_sensitivities(d, k))
    slack = 2.0 * _product_error(rows_bound, d)
    if delta > 0:
        step = calibrate(
            epsilon=epsilon, delta=delta, sensitivity=l2, changed=d * k, slack=slack, noise=noise, repeat=L
        )
        events = [step.event]
    else:
        step = calibrate(
            epsilon=split_epsilon(epsilon, L), delta=0.0, sensitivity=l1, changed=d * k, slack=slack, noise=noise
        )
        events = [step.event] * L
    A = float_gram(X, rows_bound)
    charge(
        "pca_ppm",
        events,
        rng=rng,
        accountant=accountant,
        rows=rows,
        note=f"{L} noisy iterations",
        noise=step.statement("units of XᵀX·Y, each iteration"),
    )
    Y = random_orthonormal(d, k, rng)
    for _ in range(L):
        Y = _orthonormal(step.apply(Statistic(A @ Y), rng))
    return Y


SAMPLERS = ("sequential", "gibbs")


@_declared(
    "exponential-mechanism PCA (matrix Bingham): an orthonormal basis of the top-k subspace",
    "pca_ppca",
    {
        **privacy("pure"),
        "k": COMPONENTS,
        "sampler": Options(*SAMPLERS),
        "n_sweeps": NoneOr(Integer(1)),
        "clip": Flag(),
        **UNITS,
    },
    own=("k",),
    preview="dpstats.decomposition._previews:pca_ppca_preview",
)
@named_rows("components")
def pca_ppca(
    X,
    k: int,
    epsilon: float,
    delta: float = 0.0,
    *,
    sampler: str = "sequential",
    n_sweeps: int | None = None,
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
) -> np.ndarray:
    """Exponential-mechanism PCA (PPCA): ε-DP top-k subspace, with a sampler whose guarantee is proven.

    The exponential mechanism (McSherry & Talwar 2007) with score
    q(V) = tr(VᵀAV), A = XᵀX, on the Stiefel manifold is Chaudhuri, Sarwate &
    Sinha's (2013) PPCA: density ∝ ``exp((ε/(2Δq)) tr(VᵀAV))``, the matrix
    Bingham distribution. Score sensitivity (replace one row):
    tr(Vᵀ D V) = ‖Vᵀx‖² − ‖Vᵀx′‖² ∈ [−R², R²], so Δq = R² (R² <= 1 + 1e-9, the
    row-norm bound of the module docstring; m·R² with a privacy unit, at most
    m rows kept per unit); the score is computed on the
    floating-point XᵀX, whose entries are within a public e_A of the exact
    ones, which adds 2·d·e_A per column (:func:`dpstats.decomposition._bingham.score_sensitivity`).

    ``sampler="sequential"`` (default, proven ε-DP in exact arithmetic; see
    "Floating point" below): k draws, each an
    exponential mechanism at ε/k. Draw j samples a unit vector v_j of the
    orthogonal complement of the public v_1 … v_{j−1} (basis N_j) with density
    ∝ ``exp((ε/(2kR²)) vᵀ N_jᵀ A N_j v)`` — a vector Bingham distribution, drawn
    exactly by rejection (:func:`dpstats.decomposition._bingham.sample_bingham`); its score
    vᵀ N_jᵀ A N_j v has sensitivity R² as well. By composition the k draws are
    ε-DP (and, each being ε/k-bounded-range, ε²/(8k)-zCDP, which the accountant
    uses under "zcdp" and "pld"). k = 1 is the exact mechanism itself. The
    price: each direction sees ε/k instead of the whole ε (the PCA tutorial
    and the ICASSP notebook measure the captured energy against Gibbs).

    ``sampler="gibbs"``: the paper's sampler, Hoff's (2009) column-wise Gibbs
    chain for the matrix Bingham at ε (:func:`dpstats.decomposition._bingham.sample_matrix_bingham`,
    ``n_sweeps`` sweeps, started from a uniform V). **Its guarantee holds only
    for exact samples of the matrix Bingham; a finite chain is not covered.**
    (Each column update is an exponential-mechanism draw at ε, exact for the
    floating-point eigenvalues of its conditional rather than for the score
    itself, so even the k·S·ε of S sweeps is not proven.) The ledger marks it
    UNPROVEN and an
    :class:`~dpstats.Accountant` refuses it unless created with
    ``allow_unproven=True``.

    Exactness. Each vector draw is exact (:mod:`dpstats.decomposition._bingham_exact`): its
    proposals are exact normals, its envelope is certified with rigorous
    floating-point error bounds, and every acceptance is decided on exact
    intervals (refined with rational arithmetic when floating point cannot
    decide); the draw is rounded to the public 2^-32 grid, a function of the
    exact draw (the columns stay orthonormal to within about 2^-32·√d). The
    complement's basis N_j is floating point, so ‖N_j z‖² <= 1 + θ_j with a
    certified θ_j, and the draw's parameter is divided by 1 + θ_j (rounded
    down), which keeps each draw within its ε/k. The Gibbs chain's column
    updates use the same exact draws, for the floating-point eigenvalues of
    each conditional; the chain as a whole is MCMC and stays unproven.

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame, shape (n, d)
        Data, rows with ‖x_i‖₂ <= 1.
    k : int
        Dimension of the subspace, 1 <= k <= d.
    epsilon : float
        ε > 0 (pure ε-DP, δ = 0).
    sampler : {"sequential", "gibbs"}, default "sequential"
    n_sweeps : int, optional
        Gibbs sweeps (``sampler="gibbs"`` only). Default
        :data:`dpstats.decomposition._bingham.DEFAULT_SWEEPS`.
    clip : bool, default False
        Rescale rows of norm > 1 to norm 1 instead of raising.
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame ``X``):
        neighbours then differ in all rows of one unit, at most ``max_rows``
        of which are kept (module docstring, "Privacy units").
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    rng : None, int or numpy.random.Generator
        Source of randomness.
    accountant : Accountant, optional
        Charged before sampling.

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Orthonormal columns (to within 2^-32·√d), on the 2^-32 grid.

    References
    ----------
    Chaudhuri, Sarwate & Sinha, "A near-optimal algorithm for
    differentially-private principal components", JMLR 14, 2013. Hoff,
    "Simulation of the matrix Bingham–von Mises–Fisher distribution, with
    applications to multivariate and relational data", JCGS 18(2), 2009.
    Kent, Ganeiber & Mardia, JCGS 27(2), 2018 (the vector sampler's envelope).
    Karney, "Sampling exactly from the normal distribution", ACM TOMS 42(1),
    2016 (exact normals as lazily refined reals).
    Cesar & Rogers, "Bounding, concentrating, and truncating", ALT 2021
    (bounded range and zCDP).

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 5)) / 3
    >>> V = dps.pca_ppca(X, 2, 1.0, rng=0)
    >>> V.shape
    (5, 2)
    """
    from ._bingham import DEFAULT_SWEEPS, sample_matrix_bingham, sample_sequential_bingham

    if sampler == "sequential" and n_sweeps is not None:
        raise ParameterError("n_sweeps applies only to sampler='gibbs'")
    n_sweeps = DEFAULT_SWEEPS if n_sweeps is None else n_sweeps
    rows = bounded_rows(X, privacy_unit, max_rows, clip, rng, k=k)
    X, rows_bound, m = rows.arrays[0], rows.rows_bound, rows.max_rows
    d = X.shape[1]
    sensitivity = score_sensitivity(rows_bound, d, m)
    A = float_gram(X, rows_bound)
    if sampler == "sequential":
        share = split_epsilon(epsilon, k)
        check_certifiable(bingham_scale(share, sensitivity), rows_bound, d, m)
        charge(
            "pca_ppca",
            [Exponential(share)] * k,
            rng=rng,
            accountant=accountant,
            rows=rows,
            note=(
                f"sequential: {k} vector-Bingham rejection draws at epsilon/{k}; exact vector-Bingham sampler, output "
                f"on a 2^-{OUTPUT_BITS} grid"
            ),
        )
        observe("PPCA score matrix (quadratic form)", A, sensitivity=sensitivity, norm="spectral", exact=False)
        V = draw(
            "exponential mechanism (sequential vector Bingham)",
            rng,
            lambda: sample_sequential_bingham(A, k, scales=np.full(k, bingham_scale(share, sensitivity)), rng=rng),
        )
    else:
        charge(
            "pca_ppca",
            [Exponential(epsilon)],
            rng=rng,
            accountant=accountant,
            rows=rows,
            proven=False,
            note=(
                f"Gibbs, {n_sweeps} sweeps: the guarantee holds for exact matrix-Bingham samples only; column draws "
                f"exact for the floating-point eigenvalues of each conditional, output on a 2^-{OUTPUT_BITS} grid"
            ),
        )
        observe("PPCA score matrix (quadratic form)", A, sensitivity=sensitivity, norm="spectral", exact=False)
        V = draw(
            "exponential mechanism (matrix Bingham, Gibbs)",
            rng,
            lambda: sample_matrix_bingham(A * (epsilon / (2.0 * sensitivity)), k, n_sweeps=n_sweeps, rng=rng),
        )
    return on_output_grid(V)


#: The δ each mechanism of :func:`pca` can use (see :class:`dpstats._constraints.Delta`).
DELTA_USES = {"ag": "approx", "sn": "pure", "ppm": "either", "ppca": "pure", "amin": "pure", "dong": "approx"}


@_declared(
    "the top-k principal subspace, with the chosen mechanism",
    "pca",
    {
        "epsilon": privacy()["epsilon"],
        "delta": Delta("method", by="mechanism", uses=DELTA_USES, defaults={"ppm": DEFAULT_DELTA}, lenient=True),
        "rng": privacy()["rng"],
        "accountant": privacy()["accountant"],
        "k": COMPONENTS,
        "mechanism": Options(*MECHANISMS),
        "norm_bound": NormBound(),
        "radius_share": Real(0, 1),
    },
    own=("k",),
    preview="dpstats.decomposition._previews:pca_preview",
)
@named_rows("components")
def pca(
    X,
    k: int,
    epsilon: float,
    delta: float | None = None,
    *,
    mechanism: str = "ag",
    norm_bound=None,
    radius_share: float = RADIUS_SHARE,
    rng=None,
    accountant: Accountant | None = None,
    **options,
) -> np.ndarray:
    """Private top-k principal subspace with the chosen mechanism.

    δ follows the mechanism: the Gaussian ones ("ag", "dong", and "ppm" with δ > 0) need δ > 0 (default 1e-6); the
    pure ones ("ppca", "amin", and "ppm" with δ = 0) are ε-DP and take δ = 0 (their default). A δ > 0 given to a
    pure mechanism is not used: for one release it is charged as 0 with a :class:`DeprecationWarning`, after that
    it is an error (a loop over mechanisms passes ``delta=None``, each mechanism's own default).

    Every mechanism needs rows of norm <= 1, and raises on longer ones unless ``clip=True``. ``norm_bound`` says
    what the rows' norms are bounded by instead: a public number R (the rows are divided by it; the subspace is the
    same), or ``"private"``: the bound is the private 0.75-quantile of the row norms, bought with ``radius_share``·ε
    and charged with the mechanism as one ledger entry; the rows above it are clipped
    (:func:`dpstats.preprocessing.to_unit_rows`). With a privacy unit the quantile is taken at the unit level.

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame, shape (n, d)
        Data, rows with ‖x_i‖₂ <= 1 (or ``norm_bound``).
    k : int
        Dimension of the subspace, 1 <= k <= d.
    mechanism : {"ag", "sn", "ppm", "ppca", "amin", "dong"}, default "ag"
        :func:`pca_ag` followed by :func:`top_components`; :func:`pca_sn` (not
        private: warns, and an accountant refuses it); :func:`pca_ppm`;
        :func:`pca_ppca`; the k vectors of :func:`amin_eigen` with ``rank=k``
        (Amin et al. 2019, Algorithm 1 stopped after k vectors), in the order
        drawn; :func:`dpstats.decomposition.pca_dong` (Dong, Liang & Yi 2022).
    epsilon : float
        ε > 0 (of the whole release, the private norm bound included).
    delta : float or None, default None
        δ of the release (0 <= δ < 1); None: the mechanism's default (1e-6 for "ag", "dong" and "ppm", 0 for the
        pure mechanisms and SN).
    norm_bound : None, float or "private", default None
        None: rows of norm <= 1. A public R > 0: rows of norm <= R (``clip=True`` to force it). ``"private"``: a
        private bound (see above); not for SN, which is not private.
    radius_share : float, default 0.1
        With ``norm_bound="private"``: the part of ε spent on the bound (public).
    rng : None, int or numpy.random.Generator
        Source of randomness.
    accountant : Accountant, optional
        Passed to the mechanism.
    **options
        Further keywords of the mechanism (``clip``, ``noise``, ``calibration``,
        ``n_iter``, ``sampler``, ``n_sweeps``, ``split``, ``eigenvalue_share``, ``algorithm``, ``eigenvalues``,
        and ``privacy_unit`` with ``max_rows`` for every mechanism but SN).

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Orthonormal columns. For a pandas DataFrame ``X``, a DataFrame indexed
        by ``X``'s columns with columns ``pc1`` … ``pck`` (the loadings); for
        polars, a polars DataFrame with those columns, one row per column of
        ``X`` in order (the PCA functions all name their results this way).

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 5)) / 3
    >>> V = dps.pca(X, 2, epsilon=1.0, rng=0)
    >>> [dps.pca(X, 2, mechanism=m, epsilon=1.0, rng=0).shape for m in ("ag", "ppm", "ppca", "dong")]
    [(5, 2), (5, 2), (5, 2), (5, 2)]
    >>> raw = np.random.default_rng(1).normal(0, 40, (5000, 5))  # norms far above 1, bound unknown
    >>> dps.pca(raw, 2, epsilon=1.0, norm_bound="private", rng=0).shape
    (5, 2)
    """
    _check_options(mechanism, options)
    if mechanism == "sn" and norm_bound == "private":
        raise ParameterError("mechanism='sn' is not differentially private: a private norm bound is pointless")
    release = {"ag": pca_ag, "sn": pca_sn, "ppm": pca_ppm, "ppca": pca_ppca, "amin": amin_eigen, "dong": pca_dong}
    options = release[mechanism].declaration.checked(options)  # the mechanism's options, checked by its declaration
    data = read_matrix(X, options.pop("privacy_unit", None), options.pop("max_rows", None))  # read once
    _check_k(k, data.X.shape[1])  # before any budget is charged
    rows = to_unit_rows(
        data,
        norm_bound,
        epsilon,
        radius_share=radius_share,
        clip=options.pop("clip", False),
        rng=rng,
        accountant=accountant,
    )
    run = release[mechanism].unchecked  # every argument is checked and the rows are read: the bodies trust them
    common = {"rng": rng, "accountant": rows.accountant, "clip": rows.clip, **options}
    if mechanism == "amin":
        return run(rows.rows, rows.epsilon, 0.0, rank=k, **common)[1]
    if mechanism in ("ppca", "ppm", "dong"):
        return run(rows.rows, k, rows.epsilon, delta, **common)
    return top_components(run(rows.rows, rows.epsilon, delta, **common), k)


def _check_options(mechanism: str, options: dict) -> None:
    """Raise for an option of :func:`pca` that ``mechanism`` does not take, saying which mechanisms take it."""
    if mechanism == "sn" and options.get("privacy_unit") is not None:
        raise ParameterError("mechanism='sn' is not differentially private at all: a privacy unit cannot make it so")
    for option in options:
        if option in OPTIONS[mechanism]:
            continue
        takers = [m for m, names in OPTIONS.items() if option in names]
        where = f"an option of mechanism={' or '.join(repr(m) for m in takers)}" if takers else "not an option of pca"
        raise ParameterError(f"{option} is {where}; mechanism={mechanism!r} takes {', '.join(OPTIONS[mechanism])}")
