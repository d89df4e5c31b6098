"""Private low-rank approximation of a data matrix (Hardt & Roth, STOC 2012).

**Neighbouring relation (Hardt & Roth, Definition 2.1), different from the PCA
functions:** A and A′ (m × n, rows are people) are neighbours when they differ
in a single row and that row changes by a vector of Euclidean norm at most 1:
A′ − A = e_i vᵀ with ‖v‖₂ <= 1. Hardt & Roth do not bound the entries; dpstats'
range finder needs a public bound on them (``bounds=(lower, upper)``, declared
like the bounds of :func:`dpstats.mean`): its floating-point error bound is
computed from it, so whether a call releases or refuses depends on public
quantities only, and both neighbours lie in the declared domain. Data outside
it raise (with the number of rows) unless ``clip=True`` clips each entry to the
bounds, a map that keeps the relation: a row that moves by v moves by at most
‖v‖ after clipping. (Under dpstats' usual replace-one relation with rows of
norm <= 1, a row can move by up to 2: divide the matrix by 2 to use these
guarantees.)

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
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import erfcinv

from .._constraints import (
    NOISE,
    UNITS,
    Checked,
    Components,
    Data,
    Flag,
    Integer,
    NoneOr,
    Options,
    Real,
    privacy,
)
from .._engine import as_array, engine_of
from .._registry import declare
from .._release import calibrate, charge
from .._rounding import ORTHONORMAL_MARGIN, gamma
from .._validation import check_bounds, check_columns, check_finite, check_int, raise_nonfinite
from ..accounting import DEFAULT_DELTA, Accountant, Gaussian, Relation
from ..exceptions import OutOfBoundsError, ParameterError
from ..noise.calibration import gaussian_sigma
from ..noise.release import Statistic, grid_for

__all__ = ["SketchPlan", "low_rank", "range_finder_sensitivity", "sketch_plan"]

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


@declare(
    family="decomposition",
    statistic="a rank-k approximation of a matrix (Hardt & Roth's range finder, or input perturbation)",
    data={"A": Data("matrix", "an m × n matrix whose rows change one at a time, entries in bounds")},
    own=("k",),
    parameters={
        **privacy("approx"),
        "k": Components(),
        "method": Options(*METHODS),
        "bounds": Checked("None or a pair (lower, upper) of numbers", {"reversed": (1, 0), "string": "ab"}),
        "clip": Flag(),
        "oversampling": NoneOr(Integer(0)),
        "prune": NoneOr(Real(0, None)),
        "split": Real(0, 1),
        **UNITS,
        **NOISE,
    },
    relations=("row",),
    engines=("numpy", "dask"),
    cases="dpstats.decomposition._cases:low_rank",
    preview="dpstats.decomposition._previews:low_rank_preview",
)
def low_rank(
    A,
    k: int,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    *,
    method: str = "range_finder",
    bounds=None,
    clip: bool = False,
    oversampling: int | None = None,
    prune: float | None = None,
    split: float = 0.5,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
) -> np.ndarray:
    """Differentially private rank-k approximation of A (Hardt & Roth 2012).

    ``method="range_finder"`` (Hardt & Roth, Section 6, algorithm PFP). With
    ℓ = k + p measurements (ℓ <= min(m, n)), the budget is split into
    (ε₁, δ₁) = split · (ε, δ) for the range finder and (ε₂, δ₂) = the rest for
    the projection; the two compose to (ε, δ) (the projection's noise scale
    depends only on the first stage's private output).

    1. *Range finder* (Figure 2, Lemma 4.1). Draw a secret n × ℓ standard
       Gaussian Ω and release Y = AΩ + N₁. Between neighbours Y changes in one
       row by vᵀΩ ~ N(0, ‖v‖² I_ℓ), whose norm exceeds
       τ = :func:`range_finder_sensitivity` (ℓ, δ₁/4) with probability <= δ₁/4;
       N₁ is Gaussian with σ₁ calibrated for sensitivity τ at (ε₁, δ₁/2).
       Hence (ε₁, δ₁)-DP, with δ₁/4 left for the floating-point bound below.
       Q = orthonormal basis of Y (m × ℓ).
    2. *Pruning* (optional, Section 5.1): entries of Q with magnitude above the
       public threshold ``prune`` are set to 0, which lowers the sensitivity of
       the next step at the cost of a bias controlled by the coherence.
    3. *Projection* (Figure 3, Lemma 4.6). Release W = QᵀA + N₂ (ℓ × n). Between
       neighbours QᵀA changes by Qᵀe_i vᵀ, of Frobenius norm ‖Q_i‖₂ ‖v‖₂, so the
       L2 sensitivity is the largest row norm r = max_i ‖Q_i‖₂ of the (already
       public) basis, and N₂ is Gaussian with σ₂ calibrated for r at
       (ε₂, δ₂). Hardt & Roth calibrate each row of W separately (by the
       largest entry of each column of Q) and combine them by advanced
       composition; one joint Gaussian release with sensitivity r is never
       noisier than that. Low coherence makes r small (about √(ℓ/m)).
    4. Output the best rank-k approximation of Q W (post-processing).

    ``method="input_perturbation"``: Â = A + N with N Gaussian, σ for L2
    sensitivity 1 (the whole matrix changes by e_i vᵀ, of Frobenius norm <= 1),
    then the truncated SVD of Â.

    Exactness (``noise="exact"``). Every release is exact discrete Gaussian
    noise on a public grid (:mod:`dpstats.noise.release`). A itself is released
    exactly by input perturbation. The products AΩ and QᵀA are computed in
    floating point: entry (i, j) of AΩ is within γ_n ‖A_i‖₁ max|Ω| of the
    exact value (any summation order), and max|Ω| <= t except with probability
    δ₁/4 (a Gaussian tail over the nℓ entries); entry (j, c) of QᵀA is within
    γ_m ‖A_{:,c}‖₁ (|Q| <= 1). Hardt & Roth's entries are unbounded, so these
    errors are bounded through the declared ``bounds`` B = max(|lower|, |upper|):
    ‖A_i‖₁ <= n·B and ‖A_{:,c}‖₁ <= m·B. Before reading A, dpstats checks that
    the errors these allow stay below a quarter of the noise grid (for the
    neighbour too: a row moves by at most √n in L1) and raises
    :class:`ParameterError` naming ``bounds`` if not (public quantities only:
    narrow the bounds or rescale A); the release then charges half a grid step
    per entry for them.

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
    bounds : tuple (lower, upper), required for the range finder
        Public bounds on every entry of A, chosen without looking at the data
        (ratings in [0, 5]: ``(0, 5)``). Optional for input perturbation,
        whose sensitivity needs none (given, they are checked or clipped).
    clip : bool, default False
        Clip entries outside ``bounds`` to them instead of raising
        :class:`~dpstats.exceptions.OutOfBoundsError`.
    oversampling : int, optional
        p >= 0 (range finder only); ℓ = k + p <= min(m, n). Default
        min(k, min(m, n) − k) (Hardt & Roth's Theorem 3.1 uses p = k).
    prune : float, optional
        Public pruning threshold η > 0 for the entries of Q (range finder
        only); ``None`` skips pruning (their Theorem 6.3 setting).
    split : float, default 0.5
        Share of (ε, δ) spent on the range finder, 0 < split < 1.
    rng : None, int or numpy.random.Generator
        Source of randomness (including the secret Ω).
    accountant : Accountant, optional
        Charged once, before any noise is drawn.
    noise : {"exact", "float"}, default "exact"
        Exact discrete noise on a grid, or floating-point noise (warns).
    privacy_unit, max_rows
        Not supported: any value raises a ``ParameterError``. Hardt & Roth's
        neighbouring relation is not "replace a person's rows": it lets one row
        of A change by a vector of norm at most 1, and the release is A itself
        (a low-rank copy of every row), so a person's rows are not aggregated
        away; bounding a unit to m rows would still release each kept row.
        Aggregate each unit into one row of norm <= 1 first (a public map, for
        example the unit's mean row), then call ``low_rank`` on that matrix.

    Returns
    -------
    numpy.ndarray, shape (m, n)
        A matrix of rank at most k.

    References
    ----------
    Hardt & Roth, "Beating randomized response on incoherent matrices", STOC
    2012. Halko, Martinsson & Tropp, "Finding structure with randomness",
    SIAM Review 53(2), 2011. Blum, Dwork, McSherry & Nissim, "Practical
    privacy: the SuLQ framework", PODS 2005. Higham, "Accuracy and Stability of
    Numerical Algorithms", 2002, Section 3.1.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> rng = np.random.default_rng(0)
    >>> A = rng.standard_normal((2000, 2)) @ rng.standard_normal((2, 30)) * 50
    >>> B = dps.low_rank(A, 2, 1.0, 1e-6, bounds=(-2000, 2000), clip=True, rng=0)
    >>> int(np.linalg.matrix_rank(B))
    2
    """
    if privacy_unit is not None or max_rows is not None:
        raise ParameterError(
            "low_rank does not take a privacy unit: its neighbouring relation changes one row of A by a vector of "
            "norm <= 1 and it releases a low-rank copy of every row, so bounding a person to max_rows rows would "
            "still release each of them. Aggregate each unit into one row of norm <= 1 first (for example its "
            "mean row), then call low_rank on that matrix (one row per unit)"
        )
    if bounds is None and method == "range_finder":
        raise ParameterError(
            "low_rank needs bounds=(lower, upper) on the entries of A, chosen without looking at the data (ratings "
            "in [0, 5]: bounds=(0, 5)): the range finder's floating-point error bound is computed from them"
        )
    lower, upper = (None, None) if bounds is None else _scalar_bounds(bounds)
    A = check_columns(as_array(A, "A", ndim=(2,)), "A")
    engine = engine_of(A)
    m, n = A.shape
    k = check_int(k, "k", low=1, high=min(m, n))
    if clip and lower is not None:
        A = np.clip(A, lower, upper)  # each entry on its own (lazy on dask): keeps the neighbouring relation
    if method == "input_perturbation":
        if engine.LAZY:  # input perturbation releases a noisy copy of A, as large as A itself
            raise ParameterError(
                "low_rank(method='input_perturbation') releases A plus noise, as large as A itself: on a dask array "
                "use method='range_finder', which reads A in two passes and keeps only m x l and l x n matrices in "
                "memory"
            )
        check_finite(A, "A")
        if lower is not None:
            _check_entries(int(np.count_nonzero(((A < lower) | (A > upper)).any(axis=1))), lower, upper)
        release = calibrate(epsilon=epsilon, delta=delta, sensitivity=1.0, changed=n, noise=noise)
        charge(
            "low_rank",
            [release.event],
            rng=rng,
            accountant=accountant,
            relation=Relation.ROW,  # privacy units are refused above: Hardt & Roth's relation changes one row of A
            note="input perturbation",
            noise=release.statement("units of A"),
        )
        L, R = _truncated_svd(release.apply(Statistic(A), rng), k)
        return L @ R
    plan = sketch_plan(m, n, k, oversampling, split, epsilon, delta, max(abs(lower), abs(upper)), noise)
    ell, finder = plan.ell, plan.finder
    # Ω is secret and data-independent; drawing it before the charge (which uses no randomness) leaves the
    # stream, hence every release, as it was, and lets one pass over A check it and compute AΩ.
    omega = rng.standard_normal((n, ell))
    nonfinite, outside, sketch = engine.sketch(A, omega, lower, upper)  # one pass: checks A, and AΩ
    if nonfinite:
        raise_nonfinite("A", nonfinite)
    _check_entries(outside, lower, upper)
    charge(
        "low_rank",
        [finder.event, plan.projection_event],
        rng=rng,
        accountant=accountant,
        relation=Relation.ROW,
        note=f"range finder, l={ell}, split={split:g}; the projection is calibrated after the range finder, from "
        "its public output",
        noise=finder.statement("units of AΩ (the range finder's sketch)"),
    )
    Q = np.linalg.qr(finder.apply(Statistic(sketch), rng))[0]
    if prune is not None:
        Q[np.abs(Q) > prune] = 0.0
    # Q comes from a floating-point QR (and pruning): its row norms are computed, then rounded up generously.
    r = float(np.sqrt(np.einsum("ij,ij->i", Q, Q).max())) * ORTHONORMAL_MARGIN
    projection = calibrate(
        epsilon=plan.epsilon,
        delta=plan.delta,
        sensitivity=max(r, plan.r_floor),
        changed=ell * n,
        slack=plan.projection_slack,
        noise=noise,
        grid_bits=_GRID_BITS,
    )
    W = projection.apply(Statistic(engine.row_product(Q, A)), rng)
    # Q W has rank <= ell; its best rank-k approximation via the small factor R2 W (Q = Q2 R2).
    Q2, R2 = np.linalg.qr(Q)
    L, R = _truncated_svd(R2 @ W, k)
    return engine.lazy_product(Q2 @ L, R, like=A)  # m × n, as large as A: lazy (in A's row chunks) on dask


@dataclass(frozen=True)
class SketchPlan:
    """The range finder's calibration from public values (:func:`sketch_plan`): ℓ = k + p, the sketch's calibrated
    noise, and what the projection needs before its basis is known (its budget, its sensitivity's floor, its
    floating-point slack and its event)."""

    ell: int
    finder: object
    epsilon: float
    delta: float
    r_floor: float
    projection_slack: float
    projection_event: Gaussian


def sketch_plan(rows, columns, k, oversampling, split, epsilon, delta, entry: float, noise: str) -> SketchPlan:
    """Calibrate the range finder of a ``rows`` × ``columns`` matrix whose entries are at most ``entry`` in absolute
    value (the declared bounds): public values only, before A is read; shared by the release and its preview."""
    room = min(rows, columns) - k
    p = min(k, room) if oversampling is None else check_int(oversampling, "oversampling", low=0, high=room)
    ell = k + p
    eps1, delta1 = split * epsilon, split * delta
    eps2, delta2 = _rest(epsilon, eps1), _rest(delta, delta1)
    tail = delta1 / 4
    tau = range_finder_sensitivity(ell, tail)
    omega_max = math.sqrt(2.0) * float(erfcinv(tail / (columns * ell)))
    # The products' floating-point errors, bounded through the declared bounds (public: checked before A is read).
    finder_slack = _float_error_slack(
        columns * entry, _grid(tau, ell, noise), gamma(columns) * omega_max, extra=math.sqrt(columns)
    )
    r_floor = math.sqrt(ell / rows)  # the smallest possible largest row norm of a rows × ell orthonormal basis
    projection_slack = _float_error_slack(
        rows * entry, _grid(r_floor, ell * columns, noise), gamma(rows) * ORTHONORMAL_MARGIN, extra=1.0
    )
    finder = calibrate(
        epsilon=eps1,
        delta=delta1,
        sensitivity=tau,
        changed=ell,
        slack=finder_slack,
        noise=noise,
        failure=delta1 / 2,
        grid_bits=_GRID_BITS,
    )
    return SketchPlan(ell, finder, eps2, delta2, r_floor, projection_slack, _projection_event(eps2, delta2))


def _rest(total: float, part: float) -> float:
    """total − part, rounded down so that part + rest never exceeds total."""
    rest = total - part
    while Fraction(part) + Fraction(rest) > Fraction(total):
        rest = math.nextafter(rest, 0.0)
    return rest


#: The products AΩ and QᵀA have floating-point errors that grow with A's entries; a grid 2^-10 of the sensitivity
#: per entry leaves room for them at a cost of about 0.15 % more noise.
_GRID_BITS = 10


def _grid(sensitivity: float, changed: int, noise: str) -> Fraction | None:
    """The noise grid of a Gaussian release of this sensitivity (None for floating-point noise)."""
    return None if noise == "float" else grid_for(sensitivity / math.sqrt(changed), _GRID_BITS)


def _scalar_bounds(bounds) -> tuple[float, float]:
    lower, upper = check_bounds(bounds)
    if lower.ndim or upper.ndim:
        raise ParameterError(f"bounds must be a pair of numbers (lower, upper) for every entry of A; got {bounds!r}")
    return float(lower), float(upper)


def _check_entries(outside_rows: int, lower: float, upper: float) -> None:
    """Raise for rows of A with an entry outside the declared bounds (their number only, never a value)."""
    if outside_rows:
        raise OutOfBoundsError(
            f"A has {outside_rows} row(s) with entries outside the declared bounds [{lower:g}, {upper:g}]; fix the "
            "bounds, or pass clip=True (clipping each entry to public bounds keeps the neighbouring relation)"
        )


def _float_error_slack(largest_l1: float, grid: Fraction | None, factor: float, *, extra: float) -> float:
    """Check that factor · (``largest_l1``, the public bound on the L1 norm of A along the products' sums, from the
    declared bounds, plus ``extra`` for the neighbour) stays within a quarter of the noise grid, and return the
    public slack that covers it (half a grid step, for two datasets). Public quantities only: whether the call
    refuses does not depend on A."""
    if grid is None:  # floating-point noise: no grid to protect
        return 0.0
    error = factor * (largest_l1 + extra)
    if not error <= float(grid) / 4:
        raise ParameterError(
            f"bounds are too wide for a floating-point-safe release at this noise level: entries up to "
            f"{largest_l1:.3g}/row or column in L1 allow a rounding error of {error:.3g} in the products, above a "
            f"quarter of the noise grid ({float(grid):.3g}); narrow the bounds, or divide A by a public constant "
            "(the guarantee is for A's rows changing by a vector of norm <= 1, so scale the relation with it)"
        )
    return float(grid) / 2


def _projection_event(epsilon: float, delta: float) -> Gaussian:
    """The projection's privacy event, known before its sensitivity r: a Gaussian whose multiplier σ/r is fixed
    by (ε₂, δ₂) alone (the analytic calibration is proportional to the sensitivity, up to its bisection's
    1e-10; the recorded multiplier is taken 2^-30 smaller, so the release never has less noise than recorded)."""
    multiplier = gaussian_sigma(1.0, epsilon, delta) * (1.0 - 2.0**-30)
    return Gaussian(epsilon, delta, sigma=multiplier, sensitivity=1.0, discrete=False)
