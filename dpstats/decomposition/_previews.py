"""Previews of the decomposition releases (:func:`dpstats.preview`; each declared as the release's ``preview=``,
``"dpstats.decomposition._previews:NAME"``).

Public arguments: the number of columns ``d`` (``dx`` and ``dy`` for CCA), ``k`` where the release takes one, the
release's options, and the data's public size — ``n`` rows, or ``units`` (N) and ``max_rows`` (m) — which enters
the floating-point slack every release charges (:func:`dpstats._kernels.gram.float_gram_error`, the per-block
rounding of :func:`dpstats._kernels.gram.grid_gram_slack`) and the exponential mechanisms' public bound on XᵀX.
Each preview calibrates the noise as its release does (:func:`dpstats._release.calibrate`, the same sensitivities,
slacks, shares and events), mirroring the release's docstring; ``tests/test_preview.py`` holds each to its
release's ledger entry.

**The principal directions of an exponential mechanism** (PPCA's sequential draws, Amin et al.'s eigenvectors) add
no noise to a statistic; their previews state the captured-variance gap (:func:`bingham_statement`). A draw is a
unit vector z of a q-dimensional subspace with density ∝ exp(s·zᵀMz) (M = XᵀX compressed to the subspace, s =
ε_draw/(2Δq)). For any r ∈ (0, 1], the cap of the z with (zᵀu₁)² >= 1 − r around M's top eigenvector u₁ has
zᵀMz >= λ₁ − r·S (S >= λ₁ − λ_min, public: the rows' bound N·m·R² plus the Gram matrix's rounding) and uniform
measure P(r) = I_r((q − 1)/2, 1/2) >= r^a(1 − r)^{1/2}/(a·B(a, 1/2)) with a = (q − 1)/2 ((zᵀu₁)² is
Beta(1/2, (q − 1)/2) for a uniform z; the series of the incomplete beta function has positive terms). So

    P(zᵀMz <= λ₁ − t) <= exp(−s(t − rS))/P(r) = 0.05   for t = rS + (ln 20 − ln P(r))/s,

minimised over r (and never above S). λ₁ of the compression to the complement of j − 1 directions is at least
λ_j(XᵀX) (Courant–Fischer), so with probability >= 0.95 the j-th direction captures at least λ_j(XᵀX) − t, less a
floating-point allowance (the Gram matrix's rounding, the basis's orthonormality margin and the output's 2^-32
grid). The first draw (q = d) has the largest t, which is stated; the note gives the last draw's.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.special import betaln

from .._kernels.gram import float_gram_error, grid_gram_slack, norm_bound_squared
from .._kernels.rows import PROFILE_BITS
from .._release import Preview, calibrate, public_count
from .._rounding import ORTHONORMAL_MARGIN, UNIT_ROUNDOFF, gamma
from .._validation import check_bounds, check_int
from ..accounting import Relation, split_epsilon, split_weighted
from ..accounting.events import Exponential, PureDP, composed_gaussian
from ..accounting.ledger import NoiseStatement
from ..descriptive._previews import EXPONENTIAL, FAILURE, PublicRows, made, public_rows
from ..exceptions import ParameterError
from ..noise.release import GRID_BITS, grid_for
from ..preprocessing import NORM_BOUNDS, RADIUS_QUANTILE, RADIUS_SHARE
from ._bingham import OUTPUT_BITS, bingham_scale, check_certifiable, score_sensitivity
from ._covariance import EIGEN_ALLOWANCE
from ._covariance import OPTIONS as COVARIANCE_OPTIONS
from ._dong import budget_split
from ._lowrank import sketch_plan
from ._pca import MAX_N_ITER, SN_ERRATUM, default_n_iter
from ._pca import OPTIONS as PCA_OPTIONS

__all__ = [
    "amin_eigen_preview",
    "bingham_statement",
    "cca_preview",
    "covariance_dong_preview",
    "covariance_preview",
    "low_rank_preview",
    "pca_ag_preview",
    "pca_dong_preview",
    "pca_ppca_preview",
    "pca_ppm_preview",
    "pca_preview",
    "pca_sn_preview",
]

GRAM_UNITS = "Gram units (entries of XᵀX)"


def _options(release: str, by: str, choice: str, options, takers: dict) -> None:
    """Refuse an option the chosen method does not take, as the release does (saying which methods take it)."""
    for option in options:
        if option in takers[choice]:
            continue
        which = [m for m, names in takers.items() if option in names]
        where = f"an option of {by}={' or '.join(map(repr, which))}" if which else f"not an option of {release}"
        raise ParameterError(f"{option} is {where}; {by}={choice!r} takes {', '.join(takers[choice])}")


def _rows(n, units, max_rows) -> PublicRows:
    return public_rows(n, units, max_rows)


def _columns(d, name: str = "d") -> int:
    if d is None:
        raise ParameterError(f"{name} is needed: the number of columns of the data (public)")
    return public_count(d, name)


def _components(k, d: int, name: str = "k") -> int:
    if k is None:
        raise ParameterError(f"{name} is needed: the number of components the call will take")
    return check_int(k, name, low=1, high=d)


# ----------------------------------------------------------------------------- Analyze Gauss and its kin


def gram_noise(epsilon, delta, d: int, rows: PublicRows, *, calibration="analytic", noise="exact", share=1):
    """The noise of the upper triangle of XᵀX (d columns) as :func:`dpstats.pca_ag` calibrates it: Δ₂ = √2·m·R²
    over d(d + 1)/2 entries, on the public grid with the per-block rounding charged as slack (exact noise)."""
    sensitivity = math.sqrt(2.0) * rows.m * norm_bound_squared(d)
    entries = d * (d + 1) // 2
    unit, slack = None, 0.0
    if noise == "exact" and calibration == "analytic":
        unit = grid_for(sensitivity / math.sqrt(entries), GRID_BITS)
        slack = grid_gram_slack(rows.rows_bound, d, unit) * float(unit)
    return calibrate(
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
        changed=entries,
        unit=unit,
        slack=slack,
        noise=noise,
        calibration=calibration,
        share=share,
    )


def pca_ag_preview(
    epsilon, delta, *, d=None, n=None, units=None, max_rows=None, calibration="analytic", noise="exact"
) -> Preview:
    """dps.pca_ag: the d(d + 1)/2 entries of XᵀX, L2 sensitivity √2·m times the largest squared row norm the
    row check lets through (:func:`dpstats.pca_ag`), the per-block rounding of the grid Gram matrix charged."""
    d, rows = _columns(d), _rows(n, units, max_rows)
    noise_ = gram_noise(epsilon, delta, d, rows, calibration=calibration, noise=noise)
    note = f"{rows.note()}{calibration} calibration, {d}x{d} Gram matrix"
    return made("pca_ag", [noise_.event], [noise_.statement(GRAM_UNITS)], note=note, relation=rows.relation)


def pca_sn_preview(epsilon, delta, *, d=None, n=None, **ignored) -> Preview:
    """dps.pca_sn: not differentially private (its erratum); no noise to preview, and an accountant refuses it."""
    note = f"NOT differentially private: {SN_ERRATUM}; an Accountant refuses it (no noise statement, no budget)"
    return Preview("pca_sn", math.inf, 0.0, note=note, relation=Relation.ROW, proven=False, private=False)


# ----------------------------------------------------------------------------- the noisy power method


def _ppm_sensitivities(d: int, k: int) -> tuple[float, float]:
    """L2 and L1 sensitivity of A·Y (:func:`dpstats.pca_ppm`): R²·M (k = 1) or √2·R²·M, and 2√(dk)·R²·M, with M
    the orthonormality margin of Y."""
    bound = norm_bound_squared(d) * ORTHONORMAL_MARGIN
    l2 = bound if k == 1 else math.sqrt(2.0) * bound
    return math.nextafter(l2, math.inf), math.nextafter(2.0 * math.sqrt(d * k) * bound, math.inf)


def _product_error(n: int, d: int) -> float:
    """The floating-point error bound of every entry of fl(Ã·Y) (:func:`dpstats.pca_ppm`, "Exactness")."""
    e_a = float_gram_error(n, d)
    return math.nextafter(
        (e_a + gamma(d) * (n * norm_bound_squared(d) + e_a)) * math.sqrt(d) * ORTHONORMAL_MARGIN, math.inf
    )


def pca_ppm_preview(
    epsilon, delta, *, k=None, d=None, n=None, units=None, max_rows=None, n_iter=None, noise="exact"
) -> Preview:
    """dps.pca_ppm: L = ``n_iter`` (default ⌈10 ln d⌉) noisy products A·Y: Gaussian with √L times one release's σ
    (δ > 0), or Laplace at ε/L each (δ = 0); the products' floating-point error charged as slack."""
    d, rows = _columns(d), _rows(n, units, max_rows)
    k = _components(k, d)
    if n_iter is None:
        L = default_n_iter(d, k)
    else:
        L = check_int(n_iter, "n_iter", low=1, high=MAX_N_ITER)
    l2, l1 = (rows.m * value for value in _ppm_sensitivities(d, k))
    slack = 2.0 * _product_error(rows.rows_bound, d)
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
    note = f"{rows.note()}{L} noisy iterations of XᵀX·Y (d = {d}, k = {k}); the error is each iteration's"
    return made(
        "pca_ppm", events, [step.statement("units of XᵀX·Y, each iteration")], note=note, relation=rows.relation
    )


# ----------------------------------------------------------------------------- exponential mechanisms on the sphere


def _log_cap(r: np.ndarray, q: int) -> np.ndarray:
    """A lower bound on log P((zᵀu)² >= 1 − r) for z uniform on the sphere of dimension q (module docstring)."""
    a = (q - 1) / 2.0
    return a * np.log(r) + 0.5 * np.log1p(-r) - math.log(a) - betaln(a, 0.5)


def _gap(scale: float, q: int, spread: float) -> float:
    """t: the draw's captured variance is within t of the best direction with probability >= 0.95 (module
    docstring), for the density ∝ exp(scale·zᵀMz) on a q-dimensional sphere and λ₁ − λ_min <= ``spread``."""
    if q <= 1:
        return 0.0  # one direction (up to its sign): nothing is lost
    if not scale > 0:
        return spread
    r = np.exp(np.linspace(-80.0, -1e-9, 4001))
    t = r * spread + (math.log(1.0 / FAILURE) - _log_cap(r, q)) / scale
    return float(min(np.min(t), spread))


def bingham_statement(scale: float, q: int, rows: PublicRows, d: int) -> NoiseStatement:
    """The captured-variance gap of a vector-Bingham draw with parameter ``scale`` on a q-dimensional sphere
    (module docstring), in XᵀX units, with the floating-point allowance; ``scale``'s reciprocal as the scale."""
    e_a = float_gram_error(rows.rows_bound, d)
    bound = rows.rows_bound * norm_bound_squared(d) + d * e_a  # >= λ₁(Ã), and Ã's λ_min >= −d·e_A
    spread = bound + d * e_a
    grid = 2.0 ** -(OUTPUT_BITS + 1) * math.sqrt(d)  # ‖v̂ − v‖ for the output rounded to the 2^-32 grid
    allowance = 2.0 * d * e_a + bound * ((ORTHONORMAL_MARGIN - 1.0) * 2.0 + 2.0 * grid + grid * grid)
    effective = scale / ORTHONORMAL_MARGIN  # the sampler divides its parameter by 1 + θ, θ within the margin
    gap = _gap(effective, q, spread) + allowance
    units = "XᵀX units (captured variance below λ_j)"
    return NoiseStatement(EXPONENTIAL, 1.0 / scale if scale > 0 else math.inf, math.nextafter(gap, math.inf), units)


def _bingham_note(scales: list[float], rows: PublicRows, d: int) -> str:
    first = bingham_statement(scales[0], d, rows, d).half_width
    last = bingham_statement(scales[-1], d - len(scales) + 1, rows, d).half_width
    return (
        f"each direction v_j captures vᵀXᵀXv >= λ_j(XᵀX) − t with probability 0.95: t = {first:.4g} for the first "
        f"draw, {last:.4g} for the last ({len(scales)} draws; rows' bound {rows.rows_bound} x R²)"
    )


def pca_ppca_preview(
    epsilon, delta, *, k=None, d=None, n=None, units=None, max_rows=None, sampler="sequential", n_sweeps=None
) -> Preview:
    """dps.pca_ppca: k vector-Bingham draws at ε/k each (sequential; proven), or the Gibbs chain at ε
    (unproven, no public bound on a finite chain's output). The draws' captured-variance gap (module docstring)."""
    d, rows = _columns(d), _rows(n, units, max_rows)
    k = _components(k, d)
    if sampler == "sequential" and n_sweeps is not None:
        raise ParameterError("n_sweeps applies only to sampler='gibbs'")
    sensitivity = score_sensitivity(rows.rows_bound, d, rows.m)
    if sampler != "sequential":
        note = (
            f"{rows.note()}Gibbs chain for the matrix Bingham at epsilon: UNPROVEN (the guarantee holds for exact "
            "matrix-Bingham samples only; an Accountant refuses it unless allow_unproven=True), and a finite chain's "
            "output has no bound from public values"
        )
        return made("pca_ppca", [Exponential(epsilon)], note=note, relation=rows.relation, proven=False)
    share = split_epsilon(epsilon, k)
    scale = bingham_scale(share, sensitivity)
    check_certifiable(scale, rows.rows_bound, d, rows.m)
    stated = bingham_statement(scale, d, rows, d)
    note = f"{rows.note()}sequential: {k} vector-Bingham draws at epsilon/{k}; {_bingham_note([scale] * k, rows, d)}"
    return made("pca_ppca", [Exponential(share)] * k, [stated], note=note, relation=rows.relation)


def amin_eigen_preview(
    epsilon,
    delta,
    *,
    d=None,
    n=None,
    units=None,
    max_rows=None,
    rank=None,
    split="uniform",
    eigenvalue_share=0.5,
) -> Preview:
    """dps.amin_eigen: Laplace noise on the r largest eigenvalues (2mR², ε₀ = share·ε, with the public slack of
    the eigenvalues' computation) and r vector-Bingham draws with the rest (uniform split: the gap of each draw;
    adaptive: the draws' budgets follow the released eigenvalues, so no gap is stated in advance)."""
    d, rows = _columns(d), _rows(n, units, max_rows)
    r = d if rank is None else _components(rank, d, "rank")
    m, rows_bound = rows.m, rows.rows_bound
    allowance = EIGEN_ALLOWANCE * d**1.5 * UNIT_ROUNDOFF * rows_bound * m * norm_bound_squared(d)
    slack = 2.0 * math.nextafter(d * float_gram_error(rows_bound, d) + allowance, math.inf)
    eps_values = epsilon * eigenvalue_share
    eps_vectors = epsilon - eps_values
    while eps_values + eps_vectors > epsilon:
        eps_vectors = math.nextafter(eps_vectors, 0.0)
    draws = r if r < d else d - 1
    eigen = calibrate(
        epsilon=eps_values, delta=0.0, sensitivity=2.0 * m * norm_bound_squared(d), changed=r, slack=slack
    )
    sensitivity = score_sensitivity(rows_bound, d, m)
    check_certifiable(bingham_scale(eps_vectors, sensitivity), rows_bound, d, m)
    statements = [eigen.statement("eigenvalue units (of XᵀX)")]
    note = f"{rows.note()}Amin et al. 2019: {r} noisy eigenvalues (epsilon {eps_values:.6g}), {draws} draws"
    if draws == 0:
        vector_events = []
    elif split == "uniform":
        each = split_epsilon(eps_vectors, draws)
        vector_events = [Exponential(each)] * draws
        scale = bingham_scale(each, sensitivity)
        statements.append(bingham_statement(scale, d, rows, d))
        note += f" at epsilon {each:.6g} each; {_bingham_note([scale] * draws, rows, d)}"
    else:
        vector_events = [PureDP(epsilon=eps_vectors)]
        note += " with budgets from the released eigenvalues (adaptive): no gap can be stated before them"
    return made("amin_eigen", [eigen.event, *vector_events], statements, note=note, relation=rows.relation)


# ----------------------------------------------------------------------------- private norm bounds


def _norm_bound(epsilon, norm_bound, radius_share) -> tuple[float, list, str]:
    """(ε of the mechanism, the events charged before its own, a note) for ``norm_bound`` (None, a public R or
    "private": the bound's exponential mechanism at radius_share·ε, charged with the mechanism,
    :func:`dpstats.preprocessing.to_unit_rows`)."""
    if norm_bound is None:
        return epsilon, [], ""
    if norm_bound != "private":
        return epsilon, [], f"rows divided by the public R = {norm_bound:g} (the statements are for those rows); "
    bound, rest = split_weighted(epsilon, [radius_share, 1.0 - radius_share])
    note = (
        f"norm bound: private {RADIUS_QUANTILE:g}-quantile of the row norms (epsilon={bound:.4g}, exponential "
        f"mechanism on a public log grid of [{NORM_BOUNDS[0]:g}, {NORM_BOUNDS[1]:g}]); the statements are for the "
        "rows divided by it; "
    )
    return rest, [Exponential(bound)], note


def _with_bound(preview: Preview, events: list, note: str) -> Preview:
    """``preview`` with the norm bound's events charged first and its note."""
    if not events and not note:
        return preview
    return made(
        preview.release,
        [*events, *preview.events],
        preview.statements,
        note=note + preview.note,
        relation=preview.relation,
        proven=preview.proven,
    )


def covariance_preview(
    epsilon,
    delta,
    *,
    method="amin",
    d=None,
    n=None,
    units=None,
    max_rows=None,
    rank=None,
    split="uniform",
    eigenvalue_share=0.5,
    algorithm="adaptive",
    eigenvalues="rayleigh",
    norm_bound=None,
    radius_share=RADIUS_SHARE,
    noise="exact",
) -> Preview:
    """dps.covariance: Amin et al. (:func:`amin_eigen_preview`) or Dong et al. (:func:`covariance_dong_preview`),
    with the rows' bound ``norm_bound``."""
    given = {
        "rank": rank,
        "split": None if split == "uniform" else split,
        "eigenvalue_share": None if eigenvalue_share == 0.5 else eigenvalue_share,
        "algorithm": None if algorithm == "adaptive" else algorithm,
        "eigenvalues": None if eigenvalues == "rayleigh" else eigenvalues,
        "noise": None if noise == "exact" else noise,
    }
    _options("covariance", "method", method, {k: v for k, v in given.items() if v is not None}, COVARIANCE_OPTIONS)
    if method == "dong":
        return covariance_dong_preview(
            epsilon,
            delta,
            d=d,
            n=n,
            units=units,
            max_rows=max_rows,
            algorithm=algorithm,
            eigenvalues=eigenvalues,
            norm_bound=norm_bound,
            radius_share=radius_share,
            noise=noise,
        )
    rest, events, note = _norm_bound(epsilon, norm_bound, radius_share)
    found = amin_eigen_preview(
        rest,
        0.0,
        d=d,
        n=n,
        units=units,
        max_rows=max_rows,
        rank=rank,
        split=split,
        eigenvalue_share=eigenvalue_share,
    )
    return _with_bound(found, events, note)


# ----------------------------------------------------------------------------- Dong, Liang & Yi


def _dong_plan(epsilon, delta, algorithm, d, rows: PublicRows, noise):
    """The calibration of :func:`dpstats.covariance_dong` (its module docstring, "Calibration"): (the noises to
    state, with their units; the events)."""
    m, rows_bound = rows.m, rows.rows_bound
    bound = norm_bound_squared(d)
    upper = d * (d + 1) // 2
    vectors_sensitivity = math.sqrt(2.0) * m * bound
    values_sensitivity = math.nextafter(math.sqrt(2.0) * m * bound * ORTHONORMAL_MARGIN, math.inf)
    epsilon_svt, epsilon_gauss, shares = budget_split(epsilon, delta, algorithm)

    def gaussian(sensitivity, changed, unit, slack, share):
        return calibrate(
            epsilon=epsilon_gauss,
            delta=delta,
            sensitivity=sensitivity,
            changed=changed,
            unit=unit,
            slack=slack,
            noise=noise,
            share=share,
        )

    exact = noise == "exact"
    grid = grid_for(vectors_sensitivity / math.sqrt(upper), GRID_BITS)
    grid_slack = grid_gram_slack(rows_bound, d, grid)
    unit, slack = (grid, grid_slack * float(grid)) if exact else (None, 0.0)
    vectors = gaussian(vectors_sensitivity, upper, unit, slack, shares["vectors"])
    if exact:  # the eigenvalue step reads the grid Gram matrix: within half its slack, then a float conversion
        e_a = math.nextafter(grid_slack * float(grid) + 2.0 * UNIT_ROUNDOFF * rows_bound * bound, math.inf)
    else:
        e_a = float_gram_error(rows_bound, d)
    g = gamma(d)
    rayleigh = math.nextafter(
        (e_a * d + (2.0 * g + g * g) * (rows_bound * bound + d * e_a)) * ORTHONORMAL_MARGIN, math.inf
    )
    values = gaussian(values_sensitivity, d, None, 2.0 * rayleigh if exact else 0.0, shares["values"])
    stated = [
        (vectors, "Gram units (entries of XᵀX), eigenvector step"),
        (values, "Gram units (eigenvalues of XᵀX), eigenvalue step"),
    ]
    if algorithm == "separate":
        return stated, [composed_gaussian([vectors.event, values.event], epsilon_gauss, delta)]
    trace_unit = Fraction(1, 2**PROFILE_BITS)
    top = round(bound * 2**PROFILE_BITS)
    trace = gaussian(m * top * float(trace_unit), 1, trace_unit if exact else None, 0.0, shares["trace"])
    gauss = gaussian(vectors_sensitivity, upper, unit, slack, shares["gauss"])
    options = [
        composed_gaussian([trace.event, *parts], epsilon_gauss, delta)
        for parts in ([vectors.event, values.event], [gauss.event])
    ]
    costlier = min(options, key=lambda e: (e.sigma, -e.epsilon))
    return [(trace, "squared-norm units (the trace of XᵀX)"), *stated], [costlier, PureDP(epsilon_svt)]


def _dong(name, epsilon, delta, d, n, units, max_rows, algorithm, eigenvalues, noise) -> Preview:
    d, rows = _columns(d), _rows(n, units, max_rows)
    if eigenvalues == "spectrum" and noise != "float":
        raise ParameterError(
            "eigenvalues='spectrum' (the paper's noisy eigenvalues of XᵀX) has no proven floating-point error "
            "bound; it is offered with noise='float' only, to reproduce the paper. The default 'rayleigh' is exact"
        )
    stated, events = _dong_plan(epsilon, delta, algorithm, d, rows, noise)
    which = (
        "AdaptiveCov (a private trace and clipping radius, then the covariance)"
        if algorithm == "adaptive"
        else ("SeparateCov")
    )
    note = f"{rows.note()}Dong, Liang & Yi 2022, {which}; eigenvalues: {eigenvalues}"
    statements = [n_.statement(u) for n_, u in stated]
    return made("covariance_dong", events, statements, note=note, relation=rows.relation)


def covariance_dong_preview(
    epsilon,
    delta,
    *,
    d=None,
    n=None,
    units=None,
    max_rows=None,
    algorithm="adaptive",
    eigenvalues="rayleigh",
    norm_bound=None,
    radius_share=RADIUS_SHARE,
    noise="exact",
) -> Preview:
    """dps.covariance_dong: the noises of SeparateCov (eigenvectors, eigenvalues: half a Gaussian budget each) or
    AdaptiveCov (trace 1/7, then the costlier of SeparateCov and Analyze Gauss 6/7, and the sparse vector step's
    pure ε), calibrated as :func:`dpstats.covariance_dong` does; with the rows' bound ``norm_bound``."""
    rest, events, note = _norm_bound(epsilon, norm_bound, radius_share)
    found = _dong("covariance_dong", rest, delta, d, n, units, max_rows, algorithm, eigenvalues, noise)
    return _with_bound(found, events, note)


def pca_dong_preview(
    epsilon,
    delta,
    *,
    k=None,
    d=None,
    n=None,
    units=None,
    max_rows=None,
    algorithm="adaptive",
    eigenvalues="rayleigh",
    noise="exact",
) -> Preview:
    """dps.pca_dong: the release of :func:`covariance_dong_preview` (its top k eigenvectors are post-processing)."""
    _components(k, _columns(d))
    return _dong("covariance_dong", epsilon, delta, d, n, units, max_rows, algorithm, eigenvalues, noise)


# ----------------------------------------------------------------------------- the dispatcher


def pca_preview(
    epsilon,
    delta,
    *,
    k=None,
    d=None,
    n=None,
    units=None,
    max_rows=None,
    mechanism="ag",
    norm_bound=None,
    radius_share=RADIUS_SHARE,
    **options,
) -> Preview:
    """dps.pca: the chosen mechanism's preview (``options``: its own), after the rows' bound ``norm_bound``."""
    d = _columns(d)
    _components(k, d)
    _options("pca", "mechanism", mechanism, options, PCA_OPTIONS)
    if mechanism == "sn":
        return pca_sn_preview(epsilon, delta, d=d, n=n)
    rest, events, note = _norm_bound(epsilon, norm_bound, radius_share)
    size = {"n": n, "units": units, "max_rows": max_rows}
    if mechanism == "ag":
        found = pca_ag_preview(rest, delta, d=d, **size, **options)
    elif mechanism == "ppm":
        found = pca_ppm_preview(rest, delta, k=k, d=d, **size, **options)
    elif mechanism == "ppca":
        found = pca_ppca_preview(rest, delta, k=k, d=d, **size, **options)
    elif mechanism == "amin":
        found = amin_eigen_preview(rest, 0.0, d=d, rank=k, **size, **options)
    else:
        found = pca_dong_preview(rest, delta, k=k, d=d, **size, **options)
    return _with_bound(found, events, note)


# ----------------------------------------------------------------------------- CCA, low rank


def cca_preview(
    epsilon,
    delta,
    *,
    k=None,
    dx=None,
    dy=None,
    n=None,
    units=None,
    max_rows=None,
    calibration="analytic",
    norm_bound=None,
    radius_share=RADIUS_SHARE,
    noise="exact",
) -> Preview:
    """dps.cca: Analyze Gauss on the (dx + dy)² joint Gram matrix ZᵀZ (Δ₂ = √2·m·R²), stated divided by the rows'
    public bound n (N·m), as the release's ZᵀZ/n; with a public R, in the data's units (times R²)."""
    dx, dy = _columns(dx, "dx"), _columns(dy, "dy")
    _components(k, min(dx, dy))
    rows = _rows(n, units, max_rows)
    rest, events, note = _norm_bound(epsilon, norm_bound, radius_share)
    D = dx + dy
    noise_ = gram_noise(rest, delta, D, rows, calibration=calibration, noise=noise)
    radius2 = 1.0 if norm_bound in (None, "private") else float(norm_bound) ** 2
    stated = noise_.statement("covariance units (entries of ZᵀZ/n)", factor=radius2 / rows.rows_bound)
    if norm_bound == "private":
        note += "the statement is for the rows divided by the private bound (the ledger's, times its square); "
    note += f"{rows.note()}{calibration} Gaussian on the {D}x{D} joint second-moment matrix"
    return made("cca", [*events, noise_.event], [stated], note=note, relation=rows.relation)


def low_rank_preview(
    epsilon,
    delta,
    *,
    k=None,
    n=None,
    d=None,
    bounds=None,
    method="range_finder",
    oversampling=None,
    split=0.5,
    noise="exact",
) -> Preview:
    """dps.low_rank on an n × d matrix (``n`` rows, the people; ``d`` columns): input perturbation (A plus
    Gaussian noise of sensitivity 1), or the range finder (its sketch's noise, sensitivity τ, the χ_ℓ tail at
    δ₁/4, and the projection's event, whose noise follows the sketch's public basis)."""
    rows, columns = _columns(n, "n"), _columns(d)
    k = _components(k, min(rows, columns))
    if method == "input_perturbation":
        release = calibrate(epsilon=epsilon, delta=delta, sensitivity=1.0, changed=columns, noise=noise)
        note = "input perturbation: A plus Gaussian noise (a row moves by a vector of norm <= 1)"
        return made("low_rank", [release.event], [release.statement("units of A")], note=note, relation=Relation.ROW)
    if bounds is None:
        raise ParameterError("low_rank needs bounds=(lower, upper) on the entries of A, chosen without the data")
    lower, upper = check_bounds(bounds)
    if lower.ndim or upper.ndim:
        raise ParameterError(f"bounds must be a pair of numbers (lower, upper) for every entry of A; got {bounds!r}")
    entry = max(abs(float(lower)), abs(float(upper)))
    plan = sketch_plan(rows, columns, k, oversampling, split, epsilon, delta, entry, noise)
    ell, finder, projection, r_floor = plan.ell, plan.finder, plan.projection_event, plan.r_floor
    multiplier = projection.sigma
    note = (
        f"range finder, l={ell}, split={split:g}; the projection's noise is {multiplier:.4g} times the largest row "
        f"norm of the sketch's basis, between {r_floor:.3g} and 1 (public after the sketch)"
    )
    statement = finder.statement("units of AΩ (the range finder's sketch)")
    return made("low_rank", [finder.event, projection], [statement], note=note, relation=Relation.ROW)
