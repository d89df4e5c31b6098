"""Sufficient-statistics perturbation for linear regression: SSP and AdaSSP (Wang, UAI 2018).

Both release the Gram matrix of the augmented rows and solve the normal equations on it: the noisy ``[X y]ᵀ[X y]``
is exactly Analyze Gauss (Dwork, Talwar, Thakurta & Zhang 2014, Algorithm 1; :func:`dpstats.pca_ag`) applied to the
scaled rows ``z`` defined below, with the same exact grid and noise.

**Scaling to a public norm bound.** Every column j of X has public bounds [l_j, u_j] (``bounds_X``), y has
[l_y, u_y] (``bounds_y``). With an intercept each value is centred at c_j = l_j/2 + u_j/2 and scaled by its
half-width s_j = (u_j − l_j)/2; without one the model has no constant term, so the values are only scaled, by
s_j = max(|l_j|, |u_j|) (c_j = 0). The row of the release is z = A(v − c̄) for v = [x_1 … x_d, (1,) y] with
k = d (+ 1) + 1 entries: a = 1/√k rounded down until k·a² <= 1 exactly, A_j = a/s_j rounded down until
A_j·max(|l_j − c_j|, |u_j − c_j|) <= a exactly (checked in rational arithmetic), and for the constant column
A = a, c̄ = 0. So every value within its bounds gives |z_j| <= a and ‖z‖₂ <= 1 for every row, exactly
(``clip=True`` clips the values to the bounds first; otherwise a value outside raises). Bounds so narrow that a/s_j
overflows are refused before anything is charged. Regressing z_y on the other columns of z is regressing y on
[x, 1]: the coefficients θ on them map back to ``coef_j = θ_j A_j / A_y`` and
``intercept = c_y + θ_1 a / A_y − Σ_j coef_j c_j`` (post-processing).

**Sensitivity.** Replacing one row z by z′ (n public) changes A = ZᵀZ by D = z zᵀ − z′ z′ᵀ, whose upper triangle
has Euclidean norm at most ‖D‖_F <= √2 (‖z‖, ‖z′‖ <= 1; :mod:`dpstats.decomposition._pca`): **Δ₂ = √2**. D has
one eigenvalue in [0, 1] and one in [−1, 0], so every eigenvalue of A, and of any principal block of A, moves by at
most **1** (Weyl). With a privacy unit (replace all rows of one unit, at most m kept) a unit contributes a positive
semi-definite P with tr P <= m: **Δ₂ = √2·m** and the eigenvalues move by at most **m**.

**Exactness.** A = ZᵀZ is computed over blocks of a public number r of rows, each block's Σzzᵀ rounded to a
public grid G and the integers added exactly, then released with exact discrete Gaussian noise
(:func:`dpstats._release.calibrate`), as :func:`dpstats._engine.grid_gram` does for Analyze Gauss. Each block forms
its rows ẑ = fl(fl(v − c̄)·A) in the leaf (in pieces that stay in cache) and multiplies them: every value is
centred and scaled before any product, so no product exceeds a² (bounds far from 0, or huge, cannot make the raw
Gram matrix overflow or cancel). ẑ_j = z_j(1 + θ₂) (two roundings; an underflow adds at most 2^-1075), so each
entry of the block's floating-point ẐᵀẐ, a sum of r products in any order, is within γ_{r+4}·r·a² + r·2^-1073 of
the exact Σ z_i z_j (Higham 2002, Lemma 3.3 and Theorem 3.5; :func:`block_gram_slack`). With the rounding to the
grid, a neighbour's integer statistic moves by at most ‖D‖/G plus n_b(1 + 2(γ_{r+4} r a² + r·2^-1073)/G) per entry
— the slack charged, the same wherever the bounds lie. AdaSSP's smallest eigenvalue is computed from the grid
matrix by bisection with Cholesky tests, whose floating-point error has a public bound
(:func:`certified_min_eigenvalue`), charged as slack.

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
from collections.abc import Callable
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
from ..exceptions import OutOfBoundsError, ParameterError
from ..noise.release import GRID_BITS, Statistic, grid_for

__all__ = [
    "ADASSP_EIGENVALUE_SHARE",
    "RHO",
    "Scaling",
    "SufficientStatistics",
    "calibration",
    "certified_min_eigenvalue",
    "eigenvalue_sensitivity",
    "fit_ssp",
    "gram_sensitivity",
]

#: Wang (2018)'s failure probability ρ of the ridge's eigenvalue bound (the value of the paper's experiments).
RHO = 0.05
#: The part of the Gaussian budget AdaSSP spends on λ_min (Wang: a third, by basic composition).
ADASSP_EIGENVALUE_SHARE = Fraction(1, 3)


@dataclass(frozen=True)
class Scaling:
    """The public map of a row (x, y) to z = A(v − c̄) with |z_j| <= a and ‖z‖₂ <= 1 (module docstring).

    ``clip``: clip the values to the bounds before scaling (one flag for X and y, or a pair ``(X, y)``: a side whose
    bounds were released privately is clipped to them, while the other side's public bounds keep their check)."""

    lower: np.ndarray  # d + 1 bounds: the columns of X, then y
    upper: np.ndarray
    intercept: bool
    clip: bool | tuple[bool, bool]
    center: np.ndarray = field(init=False)
    scale: np.ndarray = field(init=False)
    entry: float = field(init=False)
    clip_X: bool = field(init=False, repr=False)
    clip_y: bool = field(init=False, repr=False)
    _factors: np.ndarray = field(init=False, repr=False)
    _offsets: np.ndarray = field(init=False, repr=False)
    magnitude: float = field(init=False, repr=False)

    def __post_init__(self):
        lower, upper = np.asarray(self.lower, float), np.asarray(self.upper, float)
        clip_X, clip_y = (self.clip, self.clip) if isinstance(self.clip, bool) else (bool(c) for c in self.clip)
        object.__setattr__(self, "clip_X", clip_X)
        object.__setattr__(self, "clip_y", clip_y)
        if self.intercept:  # l/2 + u/2: no overflow for bounds near the float range (the same bits as (l + u)/2)
            center, scale = lower / 2.0 + upper / 2.0, (upper - lower) / 2.0
        else:
            center, scale = np.zeros_like(lower), np.maximum(np.abs(lower), np.abs(upper))
        object.__setattr__(self, "center", center)
        object.__setattr__(self, "scale", scale)
        k = self.width
        a = 1.0 / math.sqrt(k)
        while Fraction(a) ** 2 * k > 1:
            a = math.nextafter(a, 0.0)
        object.__setattr__(self, "entry", a)
        factors, offsets = [], []
        for j in range(lower.size):
            with np.errstate(over="ignore"):
                factor = a / float(scale[j])
            if not math.isfinite(factor) or factor == 0.0:
                name = "bounds_y" if j == lower.size - 1 else f"bounds_X (column {j})"
                raise ParameterError(
                    f"{name} = ({float(lower[j])!r}, {float(upper[j])!r}) cannot be scaled to the unit box in "
                    "floating point (the half-width is too small); rescale the data"
                )
            reach = max(
                abs(Fraction(float(lower[j])) - Fraction(float(center[j]))),
                abs(Fraction(float(upper[j])) - Fraction(float(center[j]))),
            )
            while Fraction(factor) * reach > Fraction(a):
                factor = math.nextafter(factor, 0.0)
            factors.append(factor)
            offsets.append(float(center[j]))
        if self.intercept:  # the constant column: v = 1, not centred, times a
            at = lower.size - 1
            factors.insert(at, a)
            offsets.insert(at, 0.0)
        object.__setattr__(self, "_factors", np.array(factors))
        object.__setattr__(self, "_offsets", np.array(offsets))
        object.__setattr__(self, "magnitude", a)  # every |z_j| <= a, exactly: what the products' error scales with

    @property
    def features(self) -> int:
        return self.lower.size - 1

    @property
    def width(self) -> int:
        """k: the entries of z."""
        return self.features + (1 if self.intercept else 0) + 1

    def fill(self, X: np.ndarray, y: np.ndarray, out: np.ndarray) -> np.ndarray:
        """The rows z = fl(fl(v − c̄)·A) of v = [x, (1,) y] written into ``out`` (len(X) × k): the values clipped to
        the bounds first where ``clip`` says so; |z_j| <= a(1 + γ₂) for values within the bounds."""
        d = self.features
        if self.clip_X:
            np.clip(X, self.lower[:d], self.upper[:d], out=out[:, :d])
        else:
            out[:, :d] = X
        if self.intercept:
            out[:, d] = 1.0
        if self.clip_y:
            np.clip(y, self.lower[d], self.upper[d], out=out[:, -1])
        else:
            out[:, -1] = y
        out -= self._offsets
        out *= self._factors
        return out

    def rows(self, X: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The rows z of the release (:meth:`fill`), as a new array."""
        return self.fill(X, y, np.empty((X.shape[0], self.width)))

    def violations(self, X: np.ndarray, y: np.ndarray):
        """What is wrong in a block (None if nothing): non-finite values, and (on a side that is not clipped) values
        outside the declared bounds, counted. The columns' minima and maxima decide first (NaN propagates)."""
        d = self.features
        low = np.append(X.min(axis=0, initial=np.inf), y.min(initial=np.inf))
        high = np.append(X.max(axis=0, initial=-np.inf), y.max(initial=-np.inf))
        finite = np.isfinite(low).all() and np.isfinite(high).all()
        inside_X = self.clip_X or ((low[:d] >= self.lower[:d]).all() and (high[:d] <= self.upper[:d]).all())
        inside_y = self.clip_y or (low[d] >= self.lower[d] and high[d] <= self.upper[d])
        if finite and inside_X and inside_y:
            return None
        nonfinite = int(X.size - np.count_nonzero(np.isfinite(X))) + int(y.size - np.count_nonzero(np.isfinite(y)))
        if nonfinite:
            return BoundViolations(nonfinite=nonfinite)
        outside_X = 0 if self.clip_X else int(((X < self.lower[:d]) | (X > self.upper[:d])).sum())
        outside_y = 0 if self.clip_y else int(((y < self.lower[d]) | (y > self.upper[d])).sum())
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

    def affine(self) -> tuple[np.ndarray, np.ndarray]:
        """(T, o) with [coef, intercept] = Tθ + o, the map of :meth:`coefficients` as a matrix (public; for
        inference on many θ at once): d + 1 rows with an intercept, d without (its intercept is 0)."""
        d = self.features
        A, A_y = self._factors, self._factors[-1]
        kx = self.width - 1
        T = np.zeros((d + self.intercept, kx))
        T[np.arange(d), np.arange(d)] = A[:d] / A_y
        offset = np.zeros(d + self.intercept)
        if self.intercept:
            T[d, :d] = -A[:d] / A_y * self.center[:d]
            T[d, d] = self.entry / A_y
            offset[d] = self.center[d]
        return T, offset


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
    noise: object = None  # the Gram matrix's calibrated noise (its exact distribution is public)


#: Rows of one block formed and multiplied at a time in the leaf (a piece of rows × k floats stays in cache).
_PIECE_ROWS = 4096
#: Twice the largest error of an underflowing product (2^-1075 each, for ẑ_j and for ẑ_i·ẑ_j), with room: the
#: absolute term per row of :func:`block_gram_slack`.
_UNDERFLOW = Fraction(1, 2**1073)


def _block_gram(X: np.ndarray, y: np.ndarray, scaling: Scaling, inverse_grid: float) -> np.ndarray:
    """Σ z zᵀ of one block's rows, rounded to the grid (module docstring, "Exactness"): the rows ẑ formed in pieces
    of :data:`_PIECE_ROWS` (centred and scaled before any product: every product is at most a² in magnitude) and
    multiplied by BLAS, the pieces' products added in floating point — one sum of r products per entry, in some
    order, within γ_{r+4}·r·a² + r·2^-1073 of the exact Σ z_i z_j (:func:`block_gram_slack`)."""
    r, k = X.shape[0], scaling.width
    total = np.zeros((k, k))
    piece = np.empty((min(r, _PIECE_ROWS), k))
    for start in range(0, r, _PIECE_ROWS):
        stop = min(r, start + _PIECE_ROWS)
        Z = scaling.fill(X[start:stop], y[start:stop], piece[: stop - start])
        total += Z.T @ Z
    return np.rint(total * inverse_grid).astype(np.int64)


def block_gram_slack(rows_bound: int, k: int, grid: Fraction, magnitude: float) -> float:
    """The per-entry slack of :func:`_block_gram`'s sum, in grid steps: n_b (1 + 2 e/G) with
    e = γ_{r+4} r a² + r·2^-1073 (n_b blocks of r rows; a = ``magnitude``, the public bound on |z_j|). Each ẑ_j is
    z_j(1 + θ₂) (the centring and the scaling, two roundings), each product one more, and the sum of r products in
    any order r − 1 more: fl(Σ ẑ_i ẑ_j) = Σ z_i z_j (1 + θ_{r+4}), |θ_{r+4}| <= γ_{r+4} (Higham 2002, Lemma 3.3),
    with |z_i z_j| <= a²; an underflow (the only other error) adds at most 2^-1075 to ẑ_j and to a product. Rounding
    to the grid adds 1/2 per block; neighbours differ by twice both."""
    rows = gram_block_rows(rows_bound, k)
    blocks = -(-rows_bound // rows)
    error = float_up(Fraction(gamma(rows + 4)) * rows * Fraction(magnitude) ** 2 + rows * _UNDERFLOW)
    return float_up(blocks * (1 + 2 * Fraction(error) / grid))


def _gram(X, y, scaling: Scaling, grid: Fraction, rows_bound: int) -> GridGram:
    """ZᵀZ of the scaled rows on the grid, in one pass over X and y (each block checked, scaled and multiplied while
    in cache), on the data's engine."""
    k = scaling.width
    rows = gram_block_rows(rows_bound, k)
    leaf = functools.partial(_block_gram, scaling=scaling, inverse_grid=1.0 / float(grid))  # a power of two: exact
    bound = rows / float(grid) + 1.0  # every block entry is at most r·a²(1 + γ_{r+4}) + ... <= r in magnitude
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
    bounds: Callable[[], Scaling] | None = None,
) -> tuple[np.ndarray, float, SufficientStatistics]:
    """SSP or AdaSSP (module docstring) on rows already read (``units`` as from :func:`dpstats._engine.take_units`).
    Returns (coef, intercept, the noisy statistics).

    ``events``/``statements``/``note``: private bounds' releases, charged with this one as one ledger entry;
    ``bounds`` then draws them (a zero-argument function returning the final :class:`Scaling`), after the charge:
    ``scaling`` is only the public shape of the map (k and a, which the calibration needs) and the check of the
    public side, and the caller has checked every value before (nothing may raise after the charge)."""
    rows = bound_checked((X, y), units, rng, check=scaling.violations, name="X")
    X, y = rows.arrays
    m, rows_bound = rows.max_rows, rows.rows_bound
    k = scaling.width
    kx = k - 1
    plan = _plan(epsilon, delta, k, m, rows_bound, adaptive, scaling.magnitude)
    if bounds is None:  # public bounds: the Gram matrix, and its check of every value, before the charge
        gram = _gram(X, y, scaling, plan.grid, rows_bound)
    gram_noise, eigen_noise, event = plan.gram, plan.eigenvalue, plan.event
    noises = [gram_noise] if eigen_noise is None else [eigen_noise, gram_noise]
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
    if bounds is not None:  # private bounds: drawn now, after the one charge, then the Gram matrix of the rows
        scaling = bounds()
        gram = _gram(X, y, scaling, plan.grid, rows_bound)
    statistic = Statistic(gram.values[np.triu_indices(k)], gram.grid)
    ridge, sigma_eigen = 0.0, None
    if adaptive:
        A = gram.values[:kx, :kx].astype(np.float64) * float(plan.grid)
        smallest, _ = certified_min_eigenvalue(A, plan.trace_bound, plan.floor)
        noisy = float(eigen_noise.apply(Statistic(np.array([smallest])), rng)[0])
        sigma_eigen = eigen_noise.noise_scale
        lower = max(noisy - sigma_eigen * math.sqrt(math.log(6.0 / delta)), 0.0)
        ridge = max(0.0, gram_noise.noise_scale * math.sqrt(kx * math.log(2.0 * kx * kx / RHO)) - lower)
    G = symmetric_from_upper(gram_noise.apply(statistic, rng), k)
    if scaling.intercept and not rows.by_unit:  # the constant column's square is n·a², public (n is)
        G[kx - 1, kx - 1] = X.shape[0] * scaling.entry**2
    theta = _solve(G[:kx, :kx] + ridge * np.eye(kx), G[:kx, kx])
    coef, intercept = scaling.coefficients(theta)
    stats = SufficientStatistics(G, gram_noise.noise_scale, ridge, sigma_eigen, scaling, rows_bound, gram_noise)
    return coef, intercept, stats


def gram_sensitivity(m: int) -> float:
    """Δ₂ of the Gram matrix's upper triangle, m rows per unit (module docstring, "Sensitivity"): √2·m, rounded
    up."""
    return sqrt_up(2 * m * m)


def eigenvalue_sensitivity(m: int) -> float:
    """Δ of λ_min(XᵀX), m rows per unit (module docstring, "Sensitivity"): m (Weyl)."""
    return float(m)


def calibration(epsilon: float, delta: float, k: int, m: int, rows_bound: int, adaptive: bool, magnitude: float):
    """The calibration of a call from public numbers (the cached plan :func:`fit_ssp` uses): its ``gram`` noise,
    AdaSSP's ``eigenvalue`` noise (None for SSP), the composed ``event``, the ``grid``; for the previews."""
    return _plan(epsilon, delta, k, m, rows_bound, adaptive, magnitude)


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
    sensitivity = gram_sensitivity(m)
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
        sensitivity=eigenvalue_sensitivity(m),
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
