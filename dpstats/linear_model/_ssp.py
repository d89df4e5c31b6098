"""Sufficient-statistics perturbation for linear regression: SSP and AdaSSP (Wang, UAI 2018).

Both release the Gram matrix of the augmented rows and solve the normal equations on it: the noisy ``[X y]ᵀ[X y]``
is exactly Analyze Gauss (Dwork, Talwar, Thakurta & Zhang 2014, Algorithm 1; :func:`dpstats.pca_ag`) applied to the
scaled rows ``z`` defined below, with the same exact grid and noise.

**Scaling to a public norm bound.** Every column j of X has public bounds [l_j, u_j] (``bounds_X``), y has
[l_y, u_y] (``bounds_y``). With an intercept each value is centred at c_j = (l_j + u_j)/2 and scaled by its
half-width s_j = (u_j − l_j)/2; without one the model has no constant term, so the values are only scaled, by
s_j = max(|l_j|, |u_j|) (c_j = 0). The row of the release is z = A(v − c̄) for v = [x_1 … x_d, (1,) y] with
k = d (+ 1) + 1 entries: a = 1/√k rounded down until k·a² <= 1 exactly, A_j = a/s_j rounded down until
A_j·max(|l_j − c_j|, |u_j − c_j|) <= a exactly (checked in rational arithmetic), and for the constant column
A = a, c̄ = 0. So every value within its bounds gives |z_j| <= a and ‖z‖₂ <= 1 for every row, exactly
(``clip=True`` clips the values to the bounds first; otherwise a value outside raises). Regressing z_y on the other
columns of z is regressing y on [x, 1]: the coefficients θ on them map back to ``coef_j = s_y θ_j / s_j`` and
``intercept = c_y + s_y (θ_1 − Σ_j θ_j c_j / s_j)`` (post-processing; exactly, with A_y/A_j for s_j/s_y).

**Sensitivity.** Replacing one row z by z′ (n public) changes A = ZᵀZ by D = z zᵀ − z′ z′ᵀ, whose upper triangle
has Euclidean norm at most ‖D‖_F <= √2 (‖z‖, ‖z′‖ <= 1; :mod:`dpstats.decomposition._pca`): **Δ₂ = √2**. D has
one eigenvalue in [0, 1] and one in [−1, 0], so every eigenvalue of A, and of any principal block of A, moves by at
most **1** (Weyl). With a privacy unit (replace all rows of one unit, at most m kept) a unit contributes a positive
semi-definite P with tr P <= m: **Δ₂ = √2·m** and the eigenvalues move by at most **m**.

**Exactness.** A = ZᵀZ is computed over blocks of a public number r of rows, each block's Σzzᵀ rounded to a
public grid G and the integers added exactly, then released with exact discrete Gaussian noise
(:func:`dpstats._release.calibrate`), as :func:`dpstats._engine.grid_gram` does for Analyze Gauss. The rows z
are never formed: each block's raw Gram matrix M of v (XᵀX by BLAS, Xᵀy, yᵀy and the column sums m) gives
Σzzᵀ = A(M − c̄mᵀ − mc̄ᵀ + r c̄c̄ᵀ)A, one pass over the block like the product itself. Its floating-point error per
entry is at most γ_{r+8}·r·W² with W = max_j A_j(max(|l_j|, |u_j|) + |c̄_j|), public (:func:`block_gram_slack`:
the sums of r products, the centring's four rounded terms, the two factors); with the rounding to the grid, a
neighbour's integer statistic moves by at most ‖D‖/G plus n_b(1 + 2γ_{r+8} r W²/G) per entry — the slack charged.
AdaSSP's smallest eigenvalue is computed from the grid matrix by bisection with Cholesky tests, whose floating-point
error has a public bound (:func:`certified_min_eigenvalue`), charged as slack.

**AdaSSP** (Wang 2018, Algorithm 2). Three releases: λ_min(XᵀX) (sensitivity 1, shifted down by Wang's
σ·√log(6/δ) so that it is a lower bound with high probability, then clipped at 0), the ridge
λ = max(0, σ_E·√(k_x·log(2k_x²/ρ)) − λ̃_min) (ρ = 0.05, σ_E the per-entry noise of the Gram matrix, k_x its
columns), XᵀX and Xᵀy (here together as the augmented Gram matrix), then θ = (XᵀX~ + λI)⁻¹ Xᵀy~. Wang splits
(ε, δ) in three equal parts by basic composition; dpstats gives the eigenvalue a third of one Gaussian budget and
the Gram matrix the rest (:func:`~dpstats.noise.release.make_noise`'s ``share``), which compose exactly into one
(ε, δ) Gaussian mechanism (Dong, Roth & Su 2022) — less noise than three (ε/3, δ/3) releases.

**SSP** (Wang 2018, Section 4.1; Dwork et al. 2014): the Gram matrix alone with the whole budget, then
θ = (XᵀX~)⁻¹ Xᵀy~ (a pseudo-inverse when the noisy matrix is singular). It needs no ridge but fails when XᵀX~ is
ill-conditioned: AdaSSP is the default.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .._engine import bound_checked, reduce_rows
from .._kernels.blocks import single_threaded_blas
from .._kernels.gram import GridGram, gram_block_rows, symmetric_from_upper
from .._kernels.reduce import ExactSum
from .._release import calibrate, charge
from .._rounding import UNIT_ROUNDOFF, float_up, gamma, sqrt_up
from .._validation import raise_nonfinite
from ..accounting.events import composed_gaussian
from ..exceptions import OutOfBoundsError
from ..noise.release import GRID_BITS, Statistic, grid_for

__all__ = ["ADASSP_EIGENVALUE_SHARE", "RHO", "Scaling", "SufficientStatistics", "certified_min_eigenvalue", "fit_ssp"]

#: Wang (2018)'s failure probability ρ of the ridge's eigenvalue bound (the value of the paper's experiments).
RHO = 0.05
#: The part of the Gaussian budget AdaSSP spends on λ_min (Wang: a third, by basic composition).
ADASSP_EIGENVALUE_SHARE = Fraction(1, 3)


@dataclass(frozen=True)
class Scaling:
    """The public map of a row (x, y) to z = a·[x̃, (1,) ỹ] with ‖z‖₂ <= 1 (module docstring)."""

    lower: np.ndarray  # d + 1 bounds: the columns of X, then y
    upper: np.ndarray
    intercept: bool
    clip: bool
    center: np.ndarray = field(init=False)
    scale: np.ndarray = field(init=False)
    entry: float = field(init=False)
    _factors: np.ndarray = field(init=False, repr=False)
    _offsets: np.ndarray = field(init=False, repr=False)
    magnitude: float = field(init=False, repr=False)

    def __post_init__(self):
        lower, upper = np.asarray(self.lower, float), np.asarray(self.upper, float)
        if self.intercept:
            center, scale = (lower + upper) / 2.0, (upper - lower) / 2.0
        else:
            center, scale = np.zeros_like(lower), np.maximum(np.abs(lower), np.abs(upper))
        object.__setattr__(self, "center", center)
        object.__setattr__(self, "scale", scale)
        k = self.width
        a = 1.0 / math.sqrt(k)
        while Fraction(a) ** 2 * k > 1:
            a = math.nextafter(a, 0.0)
        object.__setattr__(self, "entry", a)
        factors, offsets, magnitude = [], [], []
        for j in range(lower.size):
            reach = max(
                abs(Fraction(float(lower[j])) - Fraction(float(center[j]))),
                abs(Fraction(float(upper[j])) - Fraction(float(center[j]))),
            )
            factor = a / float(scale[j])
            while Fraction(factor) * reach > Fraction(a):
                factor = math.nextafter(factor, 0.0)
            factors.append(factor)
            offsets.append(float(center[j]))
            bound = max(abs(float(lower[j])), abs(float(upper[j])))
            magnitude.append(float_up(Fraction(factor) * (Fraction(bound) + abs(Fraction(float(center[j]))))))
        if self.intercept:  # the constant column: v = 1, not centred, times a
            at = lower.size - 1
            factors.insert(at, a)
            offsets.insert(at, 0.0)
            magnitude.insert(at, a)
        object.__setattr__(self, "_factors", np.array(factors))
        object.__setattr__(self, "_offsets", np.array(offsets))
        object.__setattr__(self, "magnitude", max(magnitude))

    @property
    def features(self) -> int:
        return self.lower.size - 1

    @property
    def width(self) -> int:
        """k: the entries of z."""
        return self.features + (1 if self.intercept else 0) + 1

    def rows(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The rows z = A(v − c̄) of v = [x, (1,) y] (values clipped to the bounds first with ``clip``): the
        definition the release's Gram matrix follows (it is computed from each block's raw Gram matrix instead, see
        :func:`_block_gram`); |z_j| <= a for values within the bounds, exactly."""
        if self.clip:
            X, y = np.clip(X, self.lower[:-1], self.upper[:-1]), np.clip(y, self.lower[-1], self.upper[-1])
        V = np.column_stack([X, np.ones(X.shape[0]), y] if self.intercept else [X, y])
        return (V - self._offsets) * self._factors

    def violations(self, X: np.ndarray, y: np.ndarray):
        """What is wrong in a block (None if nothing): non-finite values, and (without ``clip``) values outside the
        declared bounds, counted. The columns' minima and maxima decide first (NaN propagates into them)."""
        d = self.features
        low = np.append(X.min(axis=0, initial=np.inf), y.min(initial=np.inf))
        high = np.append(X.max(axis=0, initial=-np.inf), y.max(initial=-np.inf))
        finite = np.isfinite(low).all() and np.isfinite(high).all()
        if finite and (self.clip or ((low >= self.lower).all() and (high <= self.upper).all())):
            return None
        nonfinite = int(X.size - np.count_nonzero(np.isfinite(X))) + int(y.size - np.count_nonzero(np.isfinite(y)))
        if nonfinite:
            return BoundViolations(nonfinite=nonfinite)
        if self.clip:
            return None
        outside_X = int(((X < self.lower[:d]) | (X > self.upper[:d])).sum())
        outside_y = int(((y < self.lower[d]) | (y > self.upper[d])).sum())
        return BoundViolations(outside_X=outside_X, outside_y=outside_y)

    def coefficients(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """(coef, intercept) in the data's units from the coefficients θ on the scaled columns: z_y = A_y(y − c_y)
        regressed on z_j = A_j(x_j − c_j) and z_1 = a gives coef_j = θ_j A_j / A_y and
        intercept = c_y + θ_1 a / A_y − Σ_j coef_j c_j."""
        d = self.features
        A, A_y = self._factors, self._factors[-1]
        coef = theta[:d] * A[:d] / A_y
        if not self.intercept:
            return coef, 0.0
        return coef, float(self.center[d] + theta[d] * self.entry / A_y - np.sum(coef * self.center[:d]))


@dataclass(frozen=True)
class BoundViolations:
    """Values a bounds check found (added up over blocks): counts only, never a value of the data."""

    nonfinite: int = 0
    outside_X: int = 0
    outside_y: int = 0

    def __add__(self, other: BoundViolations) -> BoundViolations:
        return BoundViolations(
            self.nonfinite + other.nonfinite, self.outside_X + other.outside_X, self.outside_y + other.outside_y
        )

    def raise_error(self, name: str = "X") -> None:
        if self.nonfinite:
            raise_nonfinite("X and y", self.nonfinite)
        parts = [f"X has {self.outside_X} value(s) outside bounds_X"] if self.outside_X else []
        parts += [f"y has {self.outside_y} value(s) outside bounds_y"] if self.outside_y else []
        raise OutOfBoundsError(
            "; ".join(parts) + ". Fix the bounds (chosen without looking at the data), or pass clip=True (clipping "
            "to public bounds keeps the guarantee), or bounds_X='private' / bounds_y='private'"
        )


@dataclass(frozen=True, eq=False)
class SufficientStatistics:
    """What the release leaves for inference (a parametric bootstrap): the noisy augmented Gram matrix of the scaled
    rows, the noise's standard deviation per entry (``sigma``), AdaSSP's ridge and its eigenvalue noise, the scaling,
    and the public row bound. Everything here is a release or public."""

    gram: np.ndarray
    sigma: float
    ridge: float
    sigma_eigenvalue: float | None
    scaling: Scaling
    rows_bound: int


def _block_gram(X: np.ndarray, y: np.ndarray, scaling: Scaling, inverse_grid: float) -> np.ndarray:
    """Σ z zᵀ of one block's scaled rows, rounded to the grid (module docstring, "Exactness"), without forming the
    rows: the raw Gram matrix M of v = [x, (1,) y] (XᵀX by BLAS; Xᵀ[y, 1], Xᵀy and the column sums in one pass), then
    A(M − c̄mᵀ − mc̄ᵀ + r c̄c̄ᵀ)A with m = Σv, c̄ the public centres and A the public factors. Its error per entry is
    at most γ_{r+8}·r·W² (:func:`block_gram_slack`)."""
    if scaling.clip:
        X = np.clip(X, scaling.lower[:-1], scaling.upper[:-1])
        y = np.clip(y, scaling.lower[-1], scaling.upper[-1])
    d, r = X.shape[1], X.shape[0]
    k = scaling.width
    M = np.empty((k, k))
    M[:d, :d] = X.T @ X
    right = np.empty((r, 2))  # [y, 1]: Xᵀy and the column sums of X in one pass over X
    right[:, 0] = y
    right[:, 1] = 1.0
    cross = X.T @ right
    M[:d, k - 1] = M[k - 1, :d] = cross[:, 0]
    M[k - 1, k - 1] = y @ y
    if scaling.intercept:
        sums = np.empty(k)
        sums[:d] = cross[:, 1]
        sums[d] = r
        sums[k - 1] = y.sum()
        M[:, d] = M[d, :] = sums
        c = scaling._offsets
        M = M - np.outer(c, sums) - np.outer(sums, c) + r * np.outer(c, c)
    A = scaling._factors
    return np.rint((A[:, None] * M * A[None, :]) * inverse_grid).astype(np.int64)


def block_gram_slack(rows_bound: int, k: int, grid: Fraction, magnitude: float) -> float:
    """The per-entry slack of :func:`_block_gram`'s sum, in grid steps: n_b (1 + 2 γ_{r+8} r W²/G) (n_b blocks of r
    rows, W the public :attr:`Scaling.magnitude`). Each raw entry of M is a sum of r products of values bounded by
    B_i B_j (any order: γ_r r B_i B_j, Higham 2002 Theorem 3.5); the centring adds four rounded terms (γ_5) and the
    propagated errors of the sums, the factors two roundings: in all at most γ_{r+8} r W_i W_j with
    W_i = A_i (B_i + |c̄_i|). Rounding to the grid adds 1/2 per block; neighbours differ by twice both."""
    rows = gram_block_rows(rows_bound, k)
    blocks = -(-rows_bound // rows)
    error = float_up(Fraction(gamma(rows + 8)) * rows * Fraction(magnitude) ** 2)
    return float_up(blocks * (1 + 2 * Fraction(error) / grid))


def _gram(X, y, scaling: Scaling, grid: Fraction, rows_bound: int) -> GridGram:
    """ZᵀZ of the scaled rows on the grid, in one pass over X and y (each block checked, scaled and multiplied while
    in cache), on the data's engine."""
    k = scaling.width
    rows = gram_block_rows(rows_bound, k)
    leaf = functools.partial(_block_gram, scaling=scaling, inverse_grid=1.0 / float(grid))  # a power of two: exact
    bound = rows * max(1.0, scaling.magnitude**2) / float(grid) + 1.0
    new_sum = functools.partial(ExactSum, (k, k), bound)
    with single_threaded_blas():  # the engine's threads share the blocks; a BLAS team per small block only waits
        found = reduce_rows((X, y), rows, leaf, new_sum, check=scaling.violations, parallel=True)
    if found.checks is not None:
        found.checks.raise_error()
    return GridGram(found.body.total(), grid, block_gram_slack(rows_bound, k, grid, scaling.magnitude))


def certified_min_eigenvalue(A: np.ndarray, trace_bound: float, floor: float) -> tuple[float, float]:
    """(μ, τ): the smallest eigenvalue of the symmetric float matrix A to within the public τ, proven.

    Bisection on μ with a Cholesky test of fl(A − μI), a fixed (public) number of steps from a public bracket:
    ``lo`` = −``floor`` (A is a Gram matrix rounded to a grid: λ_min(A) >= −‖rounding‖₂ >= −floor, the caller's
    public bound) and ``hi`` = ``trace_bound`` + 1 (above every diagonal entry: the test fails there). If the
    floating-point Cholesky of B = fl(A − μI) completes,
    R̂ᵀR̂ = B + ΔB with |ΔB| <= γ_{k+1}|R̂ᵀ||R̂| (Higham 2002, Theorem 10.3, any order of the inner products), so
    λ_min(B) >= −γ_{k+1}‖R̂‖_F² >= −γ_{k+1} tr(B)/(1 − γ_{k+1}). If it fails, Demmel's theorem (Higham 2002,
    Theorem 10.7: Cholesky completes when λ_min(D^-½BD^-½) > kγ_{k+1}/(1 − γ_{k+1})) gives
    λ_min(B) <= max_i b_ii·kγ_{k+1}/(1 − γ_{k+1}). With the rounding of A − μI's diagonal (u|a_ii − μ|) and
    |μ|, tr A <= T + 1 both errors are below E = (2k + 2)γ_{k+1}·2(T + 1) + 4u(T + 1); the bracket ends within
    h <= E of each other. So λ_min(A) ∈ [μ − E, μ + h + E]: τ = 2E + (rounding of the bracket's midpoints).
    ``trace_bound`` T bounds tr A from public values (rows·R² and the grid's slack).
    """
    from scipy.linalg.lapack import dpotrf

    k = A.shape[0]
    top, error, tau = _eigenvalue_tolerance(k, trace_bound)
    lo, hi = -float(floor), top
    steps = max(1, math.ceil(math.log2((hi - lo) / error)))
    diagonal = np.diag_indices(k)
    B = np.empty_like(A)
    for _ in range(steps):  # a public number of tests, whatever the data
        mid = (lo + hi) / 2.0
        np.copyto(B, A)
        B[diagonal] -= mid
        _, info = dpotrf(B, lower=1, clean=0, overwrite_a=1)
        if info == 0:
            lo = mid
        else:
            hi = mid
    return lo, tau


@functools.lru_cache(maxsize=256)
def _eigenvalue_tolerance(k: int, trace_bound: float) -> tuple[float, float, float]:
    """(top, E, τ) of :func:`certified_min_eigenvalue` (public: from k and the trace bound only)."""
    top = float(trace_bound) + 1.0
    g = Fraction(gamma(k + 1))
    u = Fraction(UNIT_ROUNDOFF)
    error = float_up((2 * k + 2) * 2 * g * Fraction(top) + 4 * u * Fraction(top))
    tau = float_up(2 * Fraction(error) + 8 * u * Fraction(top))
    return top, error, tau


def fit_ssp(
    X,
    y,
    units,
    scaling: Scaling,
    epsilon: float,
    delta: float,
    *,
    adaptive: bool,
    rng,
    accountant,
    events=(),
    statements=(),
    note: str = "",
) -> tuple[np.ndarray, float, SufficientStatistics]:
    """SSP or AdaSSP (module docstring) on rows already read (``units`` as from :func:`dpstats._engine.take_units`;
    ``events``/``statements``/``note``: a private bound's release, charged with this one). Returns (coef, intercept,
    the noisy statistics)."""
    rows = bound_checked((X, y), units, rng, check=scaling.violations, name="X")
    X, y = rows.arrays
    m, rows_bound = rows.max_rows, rows.rows_bound
    k = scaling.width
    kx = k - 1
    plan = _plan(epsilon, delta, k, m, rows_bound, adaptive, scaling.magnitude)
    gram = _gram(X, y, scaling, plan.grid, rows_bound)
    statistic = Statistic(gram.values[np.triu_indices(k)], gram.grid)
    gram_noise, eigen_noise, event = plan.gram, plan.eigenvalue, plan.event
    noises = [gram_noise] if eigen_noise is None else [eigen_noise, gram_noise]
    if adaptive:
        A = gram.values[:kx, :kx].astype(np.float64) * float(plan.grid)
        smallest, _ = certified_min_eigenvalue(A, plan.trace_bound, plan.floor)
    what = (
        "AdaSSP (Wang 2018, Algorithm 2): lambda_min of X'X (1/3 of the Gaussian budget, certified bisection) and the "
        "augmented Gram matrix (2/3), composed exactly"
        if adaptive
        else "SSP: the augmented Gram matrix [X y]'[X y] (Analyze Gauss)"
    )
    charge(
        "linear_regression",
        [*events, event],
        rng=rng,
        accountant=accountant,
        rows=rows,
        note="; ".join(p for p in (note, f"{what}; exact discrete Gaussian noise on a public grid") if p),
        noise=[*statements, *(n.statement("Gram units of the scaled rows (|z| <= 1)") for n in noises)],
    )
    ridge, sigma_eigen = 0.0, None
    if adaptive:
        noisy = float(eigen_noise.apply(Statistic(np.array([smallest])), rng)[0])
        sigma_eigen = eigen_noise.noise_scale
        lower = max(noisy - sigma_eigen * math.sqrt(math.log(6.0 / delta)), 0.0)
        ridge = max(0.0, gram_noise.noise_scale * math.sqrt(kx * math.log(2.0 * kx * kx / RHO)) - lower)
    G = symmetric_from_upper(gram_noise.apply(statistic, rng), k)
    if scaling.intercept and not rows.by_unit:  # the constant column's square is n·a², public (n is)
        G[kx - 1, kx - 1] = X.shape[0] * scaling.entry**2
    theta = _solve(G[:kx, :kx] + ridge * np.eye(kx), G[:kx, kx])
    coef, intercept = scaling.coefficients(theta)
    stats = SufficientStatistics(G, gram_noise.noise_scale, ridge, sigma_eigen, scaling, rows_bound)
    return coef, intercept, stats


@dataclass(frozen=True)
class _Plan:
    grid: Fraction
    gram: object
    eigenvalue: object
    event: object
    trace_bound: float
    floor: float


@functools.lru_cache(maxsize=64)
def _plan(epsilon: float, delta: float, k: int, m: int, rows_bound: int, adaptive: bool, magnitude: float) -> _Plan:
    """The calibration of one call (module docstring), from public numbers only: cached, as repeated calls (audits,
    sweeps) reuse it. The Gram matrix: Δ₂ = √2·m on its k(k + 1)/2 upper entries, with the grid's per-block slack;
    λ_min: Δ = m, with the Gram rounding (‖·‖₂ <= k_x·slack) and twice the bisection's error τ as slack."""
    kx = k - 1
    sensitivity = sqrt_up(2 * m * m)
    entries = k * (k + 1) // 2
    grid = grid_for(sensitivity / math.sqrt(entries), GRID_BITS)
    slack = block_gram_slack(rows_bound, k, grid, magnitude) * float(grid)
    share = 1 - ADASSP_EIGENVALUE_SHARE if adaptive else 1
    gram = calibrate(
        epsilon=epsilon, delta=delta, sensitivity=sensitivity, changed=entries, unit=grid, slack=slack, share=share
    )
    trace_bound = float_up(Fraction(rows_bound) + Fraction(kx) * Fraction(slack) + Fraction(kx))
    floor = float_up(kx * Fraction(slack))
    if not adaptive:
        return _Plan(grid, gram, None, gram.event, trace_bound, floor)
    _, _, tau = _eigenvalue_tolerance(kx, trace_bound)
    eigenvalue = calibrate(
        epsilon=epsilon,
        delta=delta,
        sensitivity=float(m),
        changed=1,
        slack=float_up(2 * Fraction(tau) + kx * Fraction(slack)),
        share=ADASSP_EIGENVALUE_SHARE,
    )
    event = composed_gaussian([eigenvalue.event, gram.event], epsilon, delta)
    return _Plan(grid, gram, eigenvalue, event, trace_bound, floor)


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A⁻¹b for the noisy normal equations (post-processing); the pseudo-inverse's solution when A is singular."""
    try:
        theta = np.linalg.solve(A, b)
        if np.all(np.isfinite(theta)):
            return theta
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(A, b, rcond=None)[0]
