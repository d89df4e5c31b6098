"""Differentially private second-moment (covariance) matrices.

Data ``X`` is ``n × d`` with one person per row and ‖x_i‖₂ <= 1 for every row;
the statistic is the *uncentred, unnormalised* second-moment matrix
``A = XᵀX = Σ x_i x_iᵀ`` (d × d), the convention of :func:`dpstats.pca_ag` and of
Amin et al. (2019), who write C = XXᵀ for d × n data. Divide by the public n for
a second-moment matrix; centre the data first (with a private mean if its mean
is not public) for a covariance matrix.

Neighbours replace one row x by x′ (n public), so A changes by
``D = x xᵀ − x′ x′ᵀ``: a difference of two PSD rank-one matrices of trace
<= R² each (R² <= 1 + 1e-9, the row-norm bound of
:func:`dpstats._kernels.gram.norm_bound_squared`). With ``privacy_unit`` and
``max_rows=m`` neighbours replace all rows of one unit, at most m kept: A changes
by P − P′ with P, P′ PSD of trace <= m·R² (:mod:`dpstats.decomposition._pca`, "Privacy units").

Methods (:data:`METHODS`, chosen by ``method=`` of :func:`covariance`):

* ``"amin"`` — Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii, NeurIPS 2019,
  Algorithm 1 (iterative eigenvector sampling), pure ε-DP: Laplace noise on the
  eigenvalues, eigenvectors drawn one at a time by the exponential mechanism
  (vector Bingham) in the orthogonal complement of those already drawn. The
  release itself is :func:`amin_eigen`; :func:`covariance` reassembles
  Σ max(λ̂_i, 0) θ_i θ_iᵀ.

How dpstats' Amin et al. differs from the paper, and why
----------------------------------------------------------
* **The exponent.** The paper samples û_i ∝ exp((ε_i/4) uᵀC_i u), from the bound
  |uᵀ(xxᵀ − x′x′ᵀ)u| <= 2. Both terms lie in [0, R²], so the difference lies in
  [−R², R²]: the score's sensitivity is R², and the exponential mechanism
  exp((ε_i/(2R²)) uᵀC_i u) is ε_i-DP (the normaliser moves by at most
  exp(ε_i/2), the score by at most exp(ε_i/2)). dpstats uses this exponent,
  twice the paper's for the same ε_i, with R² and the floating-point error of
  the Gram matrix charged (:func:`dpstats.decomposition._bingham.score_sensitivity`).
  OpenDP's implementation keeps ε_i/4 (its privacy map is for add/remove,
  where it is the standard exponent); diffprivlib's too.
* **The eigenvalues.** As the paper: Lap(2R²/ε_0) on each eigenvalue, since the
  eigenvalue vector moves by at most ‖D‖_* <= ‖x‖² + ‖x′‖² <= 2R² in ℓ1
  (Lidskii's theorem: λ(A) − λ(A′) is majorised by λ(A − A′)). The noise is
  exact discrete Laplace on a public grid (:func:`dpstats.noise.release.make_noise`);
  the eigenvalues of the floating-point Gram matrix Ã are within d·e_A of the
  exact ones (Weyl) and the computed eigenvalues within a public allowance of
  Ã's (verified, or recomputed in higher precision until verified:
  :mod:`dpstats._kernels.eigen`; never a refusal that depends on the data); both
  are charged as slack. The authors' released code uses Lap(1/ε_0) (add/remove).
* **The budget split.** ``eigenvalue_share`` of ε (the paper's ε_0 = ε/2 by
  default) goes to the eigenvalues, the rest to the vectors: ``split="uniform"``
  gives each sampled vector the same ε_i (the paper's IT-U, diffprivlib's
  choice), ``split="adaptive"`` gives ε_i ∝ √(max(λ̂_i, 0) + τ) from the released
  eigenvalues (the form of the paper's Corollary 1, with τ = (2R²/ε_0)·ln(2r/0.05),
  a 95 % bound on the largest eigenvalue noise). When all d vectors are
  sampled the last one is determined up to its sign by the others and is drawn
  with no budget (as diffprivlib does).
* **k of d.** ``rank=r`` stops after r vectors (the paper's remark after
  Theorem 2: a rank-r estimate) and releases only the r largest eigenvalues;
  the vectors' budget is then split r ways instead of d − 1, which is what
  makes a top-k PCA from Algorithm 1 worth having.
* **Centring.** Like the paper, none: the statistic is XᵀX. diffprivlib's
  ``PCA`` spends half of ε on a private mean when ``centered=False``.

Exactness. The vector-Bingham draws are exact
(:func:`dpstats.decomposition._bingham.sample_sequential_bingham`, :mod:`dpstats.decomposition._bingham_exact`:
rejection from Kent, Ganeiber & Mardia's (2018) envelope with exact normal
proposals and every decision on exact intervals), as in :func:`dpstats.pca_ppca`;
each exact draw is rounded to the public 2^-32 grid. The eigenvalues' noise is
exact.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .._constraints import UNITS, Components, Data, Delta, Flag, NoneOr, Options, Real, privacy
from .._engine import bound_matrix, float_gram
from .._engine.tables import named_rows
from .._kernels.eigen import certified_eigenvalues
from .._kernels.gram import float_gram_error, norm_bound_squared
from .._registry import declare
from .._release import calibrate, charge
from .._rounding import UNIT_ROUNDOFF
from .._trace import draw, observe
from .._validation import check_int
from ..accounting import Accountant, split_epsilon
from ..accounting.events import Exponential, PureDP
from ..accounting.plan import split_weighted
from ..exceptions import ParameterError
from ..noise.release import Statistic
from ..preprocessing import RADIUS_SHARE, to_unit_rows
from ._bingham import (
    OUTPUT_BITS,
    bingham_scale,
    check_certifiable,
    on_output_grid,
    sample_sequential_bingham,
    score_sensitivity,
)
from ._dong import covariance_dong

__all__ = ["METHODS", "SPLITS", "amin_eigen", "covariance"]

SPLITS = ("uniform", "adaptive")

#: The eigenvalues' error allowance, in units of d^1.5·u·(N·m·R²) per eigenvalue (public; N·m·R² bounds ‖A‖₂).
#: LAPACK's symmetric eigensolvers are backward stable with errors of a few d·u·‖A‖₂; their verified error
#: (:func:`dpstats._kernels.eigen.verified_eigen_error`, products and sums computed exactly) used at most 1.2 units
#: (3.6 % of the allowance) on rank-one, two-point, all-zero and random data for d = 1 … 300 (the worst at d = 2,
#: below 0.5 % from d = 100 on), measured; beyond it the eigenvalues are recomputed in higher precision, never
#: refused. (Before, the verification's own rounding bound grew as d²·u·‖A‖ and refused rank-one data from
#: d = 100 on.)
EIGEN_ALLOWANCE = 32.0

_ADAPTIVE_FAILURE = 0.05  # τ of the adaptive split: a (1 − 0.05) bound on the largest of r Laplace noises


def _eigenvalues(A: np.ndarray, rows_bound: int, m: int) -> tuple[np.ndarray, float]:
    """(the eigenvalues of the float Gram matrix Ã, ascending, each within the public allowance of Ã's exact one;
    the per-eigenvalue slack): d·e_A for the float Gram matrix (Weyl, ‖Ã − A‖₂ <= ‖Ã − A‖_F <= d·e_A) plus the
    allowance :data:`EIGEN_ALLOWANCE`·d^1.5·u·N·m·R². The eigenvalues are LAPACK's when their verified error is
    within the allowance, else computed again in higher precision until it is
    (:func:`dpstats._kernels.eigen.certified_eigenvalues`): whatever the data, the call releases, with the same
    public slack."""
    d = A.shape[0]
    allowance = EIGEN_ALLOWANCE * d**1.5 * UNIT_ROUNDOFF * rows_bound * m * norm_bound_squared(d)
    gram_error = d * float_gram_error(rows_bound, d)
    values = certified_eigenvalues(A, allowance, norm_bound=rows_bound * m * norm_bound_squared(d) + gram_error)
    return values, math.nextafter(gram_error + allowance, math.inf)


def _vector_budgets(split: str, eps_vectors: float, draws: int, values: np.ndarray, tau: float) -> list[float]:
    if split == "uniform":
        return [split_epsilon(eps_vectors, draws)] * draws
    weights = np.sqrt(np.maximum(values[:draws], 0.0) + tau)
    return split_weighted(eps_vectors, weights)


@declare(
    family="decomposition",
    statistic="Amin et al.: private eigenvalues (Laplace) and eigenvectors (exponential mechanism) of XᵀX",
    data={"X": Data("matrix", "an n × d matrix of rows with L2 norm <= 1")},
    parameters={
        **privacy("pure"),
        "rank": NoneOr(Components()),
        "split": Options(*SPLITS),
        "eigenvalue_share": Real(0, 1),
        "clip": Flag(),
        **UNITS,
    },
    engines=("numpy", "dask"),
    cases="dpstats.decomposition._cases:amin_eigen",
    preview="dpstats.decomposition._previews:amin_eigen_preview",
)
def amin_eigen(
    X,
    epsilon: float,
    delta: float = 0.0,
    *,
    rank: int | None = None,
    split: str = "uniform",
    eigenvalue_share: float = 0.5,
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Private eigenvalues and eigenvectors of ``XᵀX`` by iterative eigenvector sampling (pure ε-DP).

    Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii (NeurIPS 2019),
    Algorithm 1, with dpstats' calibration (module docstring):

    1. the r largest eigenvalues λ_1 >= … >= λ_r of A = XᵀX plus exact discrete
       Laplace noise of scale 2R²/ε_0 (ε_0 = ``eigenvalue_share``·ε);
    2. for i = 1 … r: θ_i drawn on the unit sphere of the orthogonal complement
       of θ_1 … θ_{i−1} with density ∝ exp((ε_i/(2Δq)) θᵀAθ) (a vector
       Bingham, :func:`dpstats.decomposition._bingham.sample_sequential_bingham`), the ε_i
       summing to ε − ε_0 (``split``); with r = d the last vector takes no budget.

    Sensitivity (replace one row, ‖x‖ <= 1): the eigenvalue vector moves by at
    most ‖xxᵀ − x′x′ᵀ‖_* <= 2R² in ℓ1 (Lidskii), so Lap(2R²/ε_0) per eigenvalue
    is ε_0-DP; the score θᵀAθ moves by (θᵀx)² − (θᵀx′)² ∈ [−R², R²], so Δq = R²
    (plus the Gram matrix's floating-point error) and each draw is ε_i-DP. By
    (adaptive) composition the release is ε-DP. With a privacy unit (replace
    all rows of one unit, at most m kept): 2mR² and mR².

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame, shape (n, d)
        Data, one person per row, every row with ‖x_i‖₂ <= 1.
    epsilon : float
        ε > 0 for the whole release.
    delta : float, default 0.0
        Must be 0: the release is pure ε-DP.
    rank : int, optional
        Number r of eigenpairs released, 1 <= r <= d (default d: the whole
        spectrum).
    split : {"uniform", "adaptive"}, default "uniform"
        How the vectors' budget is divided: equally, or ε_i ∝ √(max(λ̂_i, 0) + τ)
        from the released eigenvalues (module docstring).
    eigenvalue_share : float, default 0.5
        The fraction of ε spent on the eigenvalues (the paper's ε_0 = ε/2), 0 < share < 1.
    clip : bool, default False
        Rescale rows of norm > 1 to norm 1 instead of raising.
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame ``X``):
        neighbours then differ in all rows of one unit, at most ``max_rows`` of
        which are kept.
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    rng : None, int or numpy.random.Generator
        Source of randomness; ``None`` is a cryptographically secure source.
    accountant : Accountant, optional
        Charged before any noise is drawn.

    Returns
    -------
    values : numpy.ndarray, shape (r,)
        The noisy eigenvalues, in decreasing order (they may be negative).
    vectors : numpy.ndarray, shape (d, r)
        Orthonormal columns (to within 2^-32·√d) on the 2^-32 grid, in the order
        drawn: column i goes with ``values[i]``.

    References
    ----------
    Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii, "Differentially private
    covariance estimation", NeurIPS 2019, Algorithm 1 and Theorem 1.
    Kent, Ganeiber & Mardia, JCGS 27(2), 2018 (the vector-Bingham sampler).

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 4)) / 2
    >>> values, vectors = dps.amin_eigen(X, 1.0, rank=2, rng=0)
    >>> values.shape, vectors.shape
    ((2,), (4, 2))
    """
    share = eigenvalue_share
    rows = bound_matrix(X, privacy_unit, max_rows, clip=clip, rng=rng)  # read once, bounded per unit
    d = rows.arrays[0].shape[1]
    r = d if rank is None else check_int(rank, "rank", low=1, high=d)
    X, rows_bound, m = rows.arrays[0], rows.rows_bound, rows.max_rows
    A = float_gram(X, rows_bound)
    values, slack = _eigenvalues(A, rows_bound, m)
    slack = 2.0 * slack
    eps_values = epsilon * share
    eps_vectors = epsilon - eps_values
    while eps_values + eps_vectors > epsilon:  # never charge more than epsilon, however the float product rounds
        eps_vectors = math.nextafter(eps_vectors, 0.0)
    draws = r if r < d else d - 1
    eigen_noise = calibrate(
        epsilon=eps_values, delta=0.0, sensitivity=2.0 * m * norm_bound_squared(d), changed=r, slack=slack
    )
    if draws == 0:  # d = 1: the only vector is ±1, drawn with no budget
        vector_events = []
    elif split == "uniform":
        vector_events = [Exponential(split_epsilon(eps_vectors, draws))] * draws
    else:  # budgets chosen from the released eigenvalues, summing to eps_vectors: adaptive composition
        vector_events = [PureDP(epsilon=eps_vectors)]
    sensitivity = score_sensitivity(rows_bound, d, m)
    check_certifiable(bingham_scale(eps_vectors, sensitivity), rows_bound, d, m)
    charge(
        "amin_eigen",
        [eigen_noise.event, *vector_events],
        rng=rng,
        accountant=accountant,
        rows=rows,
        note=(
            f"Amin et al. 2019: {r} noisy eigenvalues (epsilon {eps_values:.6g}), {draws} vector-Bingham draws "
            f"({split} split of {eps_vectors:.6g}); exact sampler, vectors on a 2^-{OUTPUT_BITS} grid"
        ),
        noise=eigen_noise.statement("eigenvalue units (of XᵀX)"),
    )
    noisy = np.sort(eigen_noise.apply(Statistic(values[::-1][:r].copy()), rng))[::-1]
    tau = 2.0 * m * norm_bound_squared(d) / eps_values * math.log(2.0 * r / _ADAPTIVE_FAILURE)
    budgets = _vector_budgets(split, eps_vectors, draws, noisy, tau) if draws else []
    scales = np.array([bingham_scale(b, sensitivity) for b in budgets] + [0.0] * (r - draws))
    observe("Amin et al.'s score matrix (quadratic form)", A, sensitivity=sensitivity, norm="spectral", exact=False)
    V = draw(
        "exponential mechanism (sequential vector Bingham)",
        rng,
        lambda: sample_sequential_bingham(A, r, scales=scales, rng=rng),
    )
    return noisy, on_output_grid(V)


def _amin(
    X,
    epsilon: float,
    *,
    rank: int | None = None,
    split: str = "uniform",
    eigenvalue_share: float = 0.5,
    norm_bound=None,
    radius_share: float = RADIUS_SHARE,
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
) -> np.ndarray:
    """Amin et al.'s estimate of XᵀX; with ``norm_bound`` (a public R or ``"private"``) the rows are divided by the
    bound first (:func:`dpstats.preprocessing.to_unit_rows`) and the estimate multiplied by R² (post-processing).
    Every argument was checked by :func:`covariance`: the rows are read once and handed on."""
    rows = to_unit_rows(
        X,
        norm_bound,
        epsilon,
        radius_share=radius_share,
        clip=clip,
        privacy_unit=privacy_unit,
        max_rows=max_rows,
        rng=rng,
        accountant=accountant,
    )
    values, vectors = amin_eigen.unchecked(
        rows.rows,
        rows.epsilon,
        0.0,
        rank=rank,
        split=split,
        eigenvalue_share=eigenvalue_share,
        clip=rows.clip,
        rng=rng,
        accountant=rows.accountant,
    )
    estimate = (vectors * np.maximum(values, 0.0)) @ vectors.T
    return (estimate + estimate.T) * (0.5 * rows.radius**2)


#: method name -> function(X, epsilon, *, clip, privacy_unit, max_rows, rng, accountant, **options) returning the
#: d × d estimate of XᵀX. Pure methods take no δ (a δ > 0 is refused: :data:`DELTA_USES`); a method with δ > 0 takes
#: ``delta=`` (see :func:`covariance`).
METHODS: dict[str, Callable[..., np.ndarray]] = {"amin": _amin, "dong": covariance_dong}

#: Methods that are pure ε-DP (δ is not passed to them).
PURE_METHODS = frozenset({"amin"})

#: The δ each method can use (:class:`dpstats._constraints.Delta`).
DELTA_USES = {"amin": "pure", "dong": "approx"}

#: The keyword options :func:`covariance` passes on to each method (checked before anything is read).
OPTIONS = {
    "amin": ("rank", "split", "eigenvalue_share", "norm_bound", "radius_share"),
    "dong": ("algorithm", "eigenvalues", "norm_bound", "radius_share", "noise"),
}


@declare(
    family="decomposition",
    statistic="the second-moment matrix XᵀX (symmetric, PSD), with the chosen method",
    data={"X": Data("matrix", "an n × d matrix of rows with L2 norm <= 1")},
    parameters={
        "epsilon": privacy()["epsilon"],
        "delta": Delta("method", by="method", uses=DELTA_USES),
        "rng": privacy()["rng"],
        "accountant": privacy()["accountant"],
        "method": Options(*METHODS),
        "clip": Flag(),
        **UNITS,
    },
    engines=("numpy", "dask"),
    cases="dpstats.decomposition._cases:covariance",
    preview="dpstats.decomposition._previews:covariance_preview",
)
@named_rows("features")
def covariance(
    X,
    epsilon: float,
    delta: float | None = None,
    *,
    method: str = "amin",
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    **options,
) -> np.ndarray:
    """A private estimate of the second-moment matrix ``XᵀX`` (symmetric, positive semi-definite, d × d).

    Neighbours replace one row (‖x‖ <= 1, n public); with ``privacy_unit``,
    all rows of one unit (at most ``max_rows`` kept). The estimate is not
    divided by n (the convention of :func:`pca_ag`).

    ``method="amin"`` (pure ε-DP, δ ignored): Amin et al. (NeurIPS 2019),
    Algorithm 1, released by :func:`amin_eigen` and reassembled as
    Σ_i max(λ̂_i, 0) θ_i θ_iᵀ (clipping the noisy eigenvalues at zero is
    post-processing). Sensitivities: 2R² (ℓ1, eigenvalues) and R² (the vectors'
    score), 2mR² and mR² with a unit of at most m rows; calibration and the
    differences from the paper in :mod:`dpstats.decomposition._covariance`. Options:
    ``rank`` (a rank-r estimate from r eigenpairs), ``split``,
    ``eigenvalue_share``, ``norm_bound`` and ``radius_share`` (as for
    ``"dong"``: rows divided by a public or private bound R, the estimate
    multiplied by R²).

    ``method="dong"`` (δ > 0, Gaussian noise): Dong, Liang & Yi (NeurIPS 2022),
    :func:`dpstats.covariance_dong` (AdaptiveCov by default, SeparateCov with
    ``algorithm="separate"``): error scaling with the trace of XᵀX instead of d;
    its options: ``algorithm``, ``eigenvalues``, ``norm_bound``, ``radius_share``,
    ``noise``.

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame, shape (n, d)
        Data, one person per row, every row with ‖x_i‖₂ <= 1.
    epsilon : float
        ε > 0.
    delta : float or None, default None
        δ of the release: None is the method's default (0 for "amin", which is pure ε-DP and refuses a δ > 0;
        1e-6 for "dong", which needs δ > 0).
    method : {"amin", "dong"}, default "amin"
        A key of :data:`METHODS`.
    clip : bool, default False
        Rescale rows of norm > 1 to norm 1 instead of raising.
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame ``X``).
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    rng : None, int or numpy.random.Generator
        Source of randomness; ``None`` is a cryptographically secure source.
    accountant : Accountant, optional
        Charged before any noise is drawn.
    **options
        Further keywords of the method.

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The estimate of XᵀX (a DataFrame with the column names on both axes for a DataFrame ``X``).

    References
    ----------
    Amin, Dick, Kulesza, Muñoz Medina & Vassilvitskii, "Differentially private
    covariance estimation", NeurIPS 2019. W. Dong, Y. Liang & K. Yi,
    "Differentially private covariance revisited", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> X = np.random.default_rng(0).uniform(-0.5, 0.5, (500, 4)) / 2
    >>> C = dps.covariance(X, 1.0, rng=0)
    >>> C.shape, bool(np.all(np.linalg.eigvalsh(C) >= -1e-9))
    ((4, 4), True)
    """
    for option in options:
        if option not in OPTIONS[method]:
            takers = [m for m, names in OPTIONS.items() if option in names]
            where = f"an option of method={' or '.join(map(repr, takers))}" if takers else "not an option of covariance"
            raise ParameterError(f"{option} is {where}; method={method!r} takes {', '.join(OPTIONS[method])}")
    declared = {"amin": amin_eigen, "dong": covariance_dong}[method].declaration.parameters
    constraints = {**declared, **covariance_dong.declaration.parameters}  # norm_bound, radius_share: both methods
    options = {k: constraints[k].check(v, k) if constraints[k].checks else v for k, v in options.items()}  # once
    common = {"clip": clip, "privacy_unit": privacy_unit, "max_rows": max_rows, "rng": rng, "accountant": accountant}
    if method in PURE_METHODS:
        return _amin(X, epsilon, **common, **options)
    return covariance_dong.unchecked(X, epsilon, delta, **common, **options)
