"""Private covariance whose error scales with the data's trace: Dong, Liang & Yi (NeurIPS 2022).

Dong, Liang & Yi, "Differentially private covariance revisited" (NeurIPS 2022; arXiv:2205.14324) estimate
``A = XᵀX`` (here not divided by n: the paper's Σ = A/n) of rows with ‖x_i‖₂ <= 1 under zero-concentrated DP.
Analyze Gauss adds noise of Frobenius norm about σ·d to every one of the d² entries; the paper's algorithms spend
the budget where the data are:

* **SeparateCov** (their trace-sensitive algorithm): release the eigenvectors and the eigenvalues separately —
  the eigenvectors P̃ of ``A + E`` (E the symmetric Gaussian matrix of Analyze Gauss, half the budget), then
  d noisy eigenvalues (the other half), and return ``P̃ Λ̃ P̃ᵀ``. The eigenvector noise enters the error only
  through ‖E‖₂ ≈ 2σ√d weighted by the eigenvalues, so the error grows like √(tr(A)·σ√d) + σ√d instead of σd:
  better whenever the trace is small against the noise (d large against n, or skewed data).
* **AdaptiveCov** (their tail-sensitive, adaptive algorithm): a private trace (ρ/8 of the budget), then a
  clipping radius chosen with the sparse vector technique (ρ/8) among 1, 1/2, 1/4, …: the first radius at which
  an upper bound on the clipping bias exceeds the predicted noise, one step back. The rows are clipped to it, and
  the remaining 3ρ/4 release SeparateCov or Analyze Gauss, whichever the predicted errors favour. When most
  rows are much shorter than the public bound 1, the noise shrinks with the square of the radius.

The names are those of the paper and of its authors' code (``hkustDB/PrivateCovariance``, ``adaptive/algos.py``).
The paper's full text was not available to us; the algorithms follow that code and the paper's abstract, and
every step below is derived here.

Neighbouring relation. Replace one row (n public); with ``privacy_unit=`` and ``max_rows=m``, replace all rows of
one unit, at most m of them kept (N units public; row counts are never read — every bound that needs one uses
N·m). Rows have ‖x‖² <= R² (the row-norm check's bound, :func:`dpstats._kernels.gram.norm_bound_squared`, below
1 + 1e-9).

Sensitivities (replace one row; with a unit multiply each by m, as in :mod:`dpstats.decomposition._pca`):

* **Eigenvector step**, the upper triangle of ``A`` (as :func:`dpstats.pca_ag`): Δ₂ = √2·R² (‖xxᵀ − x′x′ᵀ‖_F² =
  ‖x‖⁴ + ‖x′‖⁴ − 2(xᵀx′)² <= 2R⁴).
* **Eigenvalue step**, r = diag(P̃ᵀAP̃) for the public P̃ of the first step: a row adds the vector
  v(x) = ((p̃_jᵀx)²)_j, whose entries are >= 0 with ‖v(x)‖₂ <= ‖v(x)‖₁ = ‖P̃ᵀx‖² <= ‖P̃‖₂²R², so
  ‖v(x) − v(x′)‖₂ <= √(‖v(x)‖² + ‖v(x′)‖²) <= √2·‖P̃‖₂²R² (⟨v(x), v(x′)⟩ >= 0). P̃ is orthonormalised by a QR
  factorisation: ‖P̃‖₂² <= :data:`dpstats._rounding.ORTHONORMAL_MARGIN`. For a unit, v(P) of its PSD sum P has
  ‖v(P)‖₂ <= tr P <= mR², hence √2·m·‖P̃‖₂²R². **Departure from the paper**: SeparateCov releases the
  eigenvalues λ(A) (sensitivity √2·R² by the Hoffman–Wielandt inequality). r are the eigenvalues of A when P̃
  is exact, and for any P̃ the diagonal D = diag(P̃ᵀAP̃) minimises ‖A − P̃DP̃ᵀ‖_F over diagonal D, so with the
  same noise they are never a worse estimate; and diag(P̃ᵀAP̃) has a proven floating-point error bound (matrix
  products), which computed eigenvalues do not. ``eigenvalues="spectrum"`` reproduces the paper's step, with
  floating-point noise only (``noise="float"``).
* **Trace** (AdaptiveCov): tr A = Σ‖x_i‖², each row's term in [0, R²] on a fixed-point grid:
  Δ₂ = R² (m R² for a unit).
* **Radius** (AdaptiveCov): the candidate radii are r_j = 2^-j, j = 0 … 63. A row of norm in (2^-l, 2^-(l−1)]
  (level l >= 1, from its own computed norm) contributes c_lj = (4^-(l−1) − 4^-j)₊ to the clipping-bias bound
  S_j = Σ_i c_ij, an upper bound on Σ_i (‖x_i‖² − r_j²)₊, the trace the clipping removes. Every c_lj is in [0, 1],
  so S_j moves by at most 1 (m for a unit) for every j at once. Query j is q_j = S_j − θ_j, θ_j the error the
  mechanism is predicted to make at radius r_j (a function of public values and of the private trace).

Privacy, step by step (each step is charged; nothing else reads the data):

1. Trace (AdaptiveCov): exact integer sum Σq (q = round(min(‖x‖², R²)·2^36)) plus exact discrete Gaussian noise
   on the public grid (:mod:`dpstats.noise.release`).
2. Radius (AdaptiveCov): AboveThreshold (Dwork & Roth 2014, Algorithm 1 and Theorem 3.23), made exact: the
   queries are integers Q_j = floor(2^12·q_j/m) with integer sensitivity Δ = 2^12 (for reals a <= b + Δ with Δ an
   integer, floor(a) <= floor(b) + Δ), the threshold 0
   gets discrete Laplace noise of scale 2Δ/ε′, each query 4Δ/ε′ (exact samplers, :mod:`dpstats.noise.exact`),
   and the first j with Q_j + ν_j >= ρ₀ is released. The theorem's proof shifts ρ₀ by Δ and ν_j by 2Δ; both
   shifts are integers, and the discrete Laplace has the Laplace's ratio e^{|k|/b} between points k apart, so the
   release is ε′-DP (ε′ = ε_svt rounded down to a multiple of 2^-40). Output radius: 2r_j (at most 1) for the
   first j that fires, the smallest candidate if none does.
3. Covariance: the rows are clipped to the radius and divided by it (a map of each row on its own, with a private
   but already released number), and the eigenvector and eigenvalue steps (or Analyze Gauss) are released with
   exact discrete Gaussian noise; the product with the radius² and the eigendecompositions are post-processing.
   The eigenvalue step's statistic is computed in floating point with a public bound on its error
   (:func:`_rayleigh_error`), charged like the grid's rounding.

Calibration to (ε, δ). SeparateCov: its two Gaussian releases get half a Gaussian (ε, δ) budget each (the paper's
ρ/2 + ρ/2): together exactly one Gaussian mechanism with the analytic multiplier of (ε, δ) (Balle & Wang 2018;
:func:`dpstats.accounting.events.composed_gaussian`), recorded as that one event, so PLD and zCDP composition
stay exact. AdaptiveCov: the paper's ρ-zCDP budget is mapped to (ε, δ) by ρ = the largest ρ with
ρ-zCDP ⇒ (ε, δ)-DP (Canonne, Kamath & Steinke 2020, Proposition 12); the sparse vector step gets the pure
ε_svt = √(2·ρ/8), the Gaussian steps (trace, then covariance, in the paper's proportions 1/8 : 3/4) share one
Gaussian budget at (ε − ε_svt, δ) — recorded as one Gaussian event and one pure event, whose (ε, δ) labels add up
to (ε, δ). The split between Analyze Gauss and SeparateCov is made after the trace and radius are released; the
charge (made before any noise) covers the costlier of the two. The noise that steers the choices (predicted
errors, the radius) is sized with tail bounds at probability 1 − β, β = 0.1 as in the paper's experiments: they
affect accuracy only.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._constraints import (
    NOISE,
    UNITS,
    Components,
    Data,
    Flag,
    NormBound,
    Options,
    Real,
    privacy,
)
from .._engine import bound_matrix, check_row_norms, float_gram, grid_gram, read_matrix, reduce_rows
from .._engine.tables import named_rows
from .._kernels.blocks import block_rows
from .._kernels.gram import norm_bound_squared, symmetric_from_upper
from .._kernels.reduce import ExactSum
from .._kernels.rows import PROFILE_BITS, norm_profile, row_norm_violations
from .._registry import declare
from .._release import calibrate, charge
from .._rounding import ORTHONORMAL_MARGIN, UNIT_ROUNDOFF, gamma
from .._trace import draw, observe
from .._validation import check_int
from ..accounting import DEFAULT_DELTA, Accountant
from ..accounting.events import PureDP, composed_gaussian
from ..accounting.zcdp import zcdp_epsilon
from ..exceptions import ParameterError
from ..noise.exact import discrete_laplace
from ..noise.release import GRID_BITS, Noise, Statistic, grid_for
from ..preprocessing import RADIUS_SHARE, to_unit_rows

__all__ = ["ALGORITHMS", "EIGENVALUES", "covariance_dong", "pca_dong"]

ALGORITHMS = ("adaptive", "separate")
EIGENVALUES = ("rayleigh", "spectrum")

#: Candidate clipping radii 2^0 … 2^-(RADII − 1) of AdaptiveCov (in units of the public row-norm bound).
RADII = 64
#: The sparse vector step's queries are rounded down to multiples of 2^-_SVT_BITS.
_SVT_BITS = 12
#: ε of the sparse vector step is rounded down to a multiple of 2^-_EPSILON_BITS (its noise scale is then rational).
_EPSILON_BITS = 40
#: β: the predicted errors that steer AdaptiveCov's choices hold with probability 1 − β (the paper's 0.1).
_BETA = 0.1
#: The predicted eigenvector error of SeparateCov is (2/6)·√(tr·‖E‖₂): the paper's bound 2√(tr·‖E‖₂), divided by
#: 6 as in the authors' implementation (their bound's constant is loose in practice). Steers a choice only.
_SEPARATE_FACTOR = 1.0 / 3.0


@dataclass(frozen=True)
class _Plan:
    """The public calibration of one call: every noise, the pure ε of the radius step, and the event to charge."""

    vectors: Noise  # eigenvector step (upper triangle of A)
    values: Noise  # eigenvalue step
    gauss: Noise | None  # Analyze Gauss with the covariance budget (AdaptiveCov only)
    trace: Noise | None  # AdaptiveCov only
    epsilon_svt: float
    events: tuple


def _upper_size(d: int) -> int:
    return d * (d + 1) // 2


@functools.lru_cache(maxsize=256)
def zcdp_budget(epsilon: float, delta: float) -> float:
    """The largest ρ (found by bisection, rounded down) such that ρ-zCDP implies (ε, δ)-DP (Canonne, Kamath &
    Steinke 2020, Proposition 12, :func:`dpstats.accounting.zcdp_epsilon`): the paper's budget for (ε, δ)."""
    lo, hi = 0.0, max(epsilon, 1.0)
    while zcdp_epsilon(hi, delta) <= epsilon:
        lo, hi = hi, 2.0 * hi
    while hi - lo > 1e-12 * hi:
        mid = (lo + hi) / 2.0
        if zcdp_epsilon(mid, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


def _svt_epsilon(epsilon: float, delta: float) -> float:
    """ε_svt = √(2ρ/8) for the paper's ρ/8 (ρ = :func:`zcdp_budget`), below ε."""
    return min(math.sqrt(zcdp_budget(epsilon, delta) / 4.0), epsilon / 2.0)


def budget_split(epsilon: float, delta: float, algorithm: str) -> tuple[float, float, dict]:
    """(ε of the radius step, ε of the Gaussian steps, the Gaussian steps' shares) of a call (module docstring,
    "Calibration"): public values only, shared by the release and its preview. The two ε add up to at most ε
    exactly; a share too small to use is refused naming ``epsilon``."""
    if algorithm == "separate":
        return 0.0, epsilon, {"vectors": Fraction(1, 2), "values": Fraction(1, 2)}
    epsilon_svt = _svt_epsilon(epsilon, delta)
    if epsilon_svt < 2.0**-30:
        raise ParameterError(
            f"epsilon={epsilon:g} is too small for AdaptiveCov (its radius step would get epsilon < 2^-30): "
            "use a larger epsilon, or algorithm='separate'"
        )
    epsilon_gauss = epsilon - epsilon_svt
    while Fraction(epsilon_gauss) + Fraction(epsilon_svt) > Fraction(epsilon):
        epsilon_gauss = math.nextafter(epsilon_gauss, 0.0)
    # the paper's ρ/8 (trace) : 3ρ/4 (covariance, split in halves by SeparateCov) of the Gaussian steps
    shares = {"trace": Fraction(1, 7), "vectors": Fraction(3, 7), "values": Fraction(3, 7), "gauss": Fraction(6, 7)}
    return epsilon_svt, epsilon_gauss, shares


def _plan(epsilon, delta, algorithm, d, m, rows_bound, grid_slack, noise) -> _Plan:
    """Calibrate every release of the call (module docstring, "Calibration")."""
    bound = norm_bound_squared(d)
    upper = _upper_size(d)
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

    grid = grid_for(vectors_sensitivity / math.sqrt(upper), GRID_BITS)
    unit = grid if noise == "exact" else None
    slack = grid_slack * float(grid) if noise == "exact" else 0.0
    vectors = gaussian(vectors_sensitivity, upper, unit, slack, shares["vectors"])
    values_slack = 2.0 * _rayleigh_error(rows_bound, d, _gram_error(rows_bound, d, grid_slack, grid, noise))
    values = gaussian(values_sensitivity, d, None, values_slack if noise == "exact" else 0.0, shares["values"])
    separate = composed_gaussian([vectors.event, values.event], epsilon_gauss, delta)
    if algorithm == "separate":
        return _Plan(vectors, values, None, None, 0.0, (separate,))
    trace_unit = Fraction(1, 2**PROFILE_BITS)
    trace = gaussian(
        m * _profile_top(d) * float(trace_unit), 1, trace_unit if noise == "exact" else None, 0.0, shares["trace"]
    )
    gauss = gaussian(vectors_sensitivity, upper, unit, slack, shares["gauss"])
    options = [
        composed_gaussian([trace.event, *parts], epsilon_gauss, delta)
        for parts in ([vectors.event, values.event], [gauss.event])
    ]
    costlier = min(options, key=lambda e: (e.sigma, -e.epsilon))  # the smaller multiplier costs more
    return _Plan(vectors, values, gauss, trace, epsilon_svt, (costlier, PureDP(epsilon_svt)))


#: The exact path's calibration depends on public numbers only: repeated calls (audits, sweeps) reuse it.
_exact_plan = functools.lru_cache(maxsize=64)(_plan)


def _profile_top(d: int) -> int:
    """The largest fixed-point squared norm q a row adds to the trace (:func:`dpstats._kernels.rows.norm_profile`)."""
    return round(norm_bound_squared(d) * 2**PROFILE_BITS)


def _gram_error(n: int, d: int, grid_slack: float, grid: Fraction, noise: str) -> float:
    """A public bound on |Ã_jl − A_jl| for the float matrix Ã the eigenvalue step reads: the grid Gram matrix
    (within half its neighbour slack of A, in grid steps) converted to floats (a relative u), or the float Gram
    matrix (:func:`dpstats._kernels.gram.float_gram_error`)."""
    if noise != "exact":
        from .._kernels.gram import float_gram_error

        return float_gram_error(n, d)
    return math.nextafter(grid_slack * float(grid) + 2.0 * UNIT_ROUNDOFF * n * norm_bound_squared(d), math.inf)


def _rayleigh_error(n: int, d: int, e_a: float) -> float:
    """A public bound on |fl(p̃ᵀÃp̃) − p̃ᵀAp̃| for every column p̃ of the orthonormalised P̃.

    With |Ã − A| <= e_A entrywise, ‖p̃‖² <= M (:data:`dpstats._rounding.ORTHONORMAL_MARGIN`) and
    |p̃|ᵀ|A||p̃| <= Σ_i (|x_i|ᵀ|p̃|)² <= n R² M: |p̃ᵀ(Ã − A)p̃| <= e_A (Σ_l |p̃_l|)² <= e_A d M; the product Ãp̃
    and the dot product with p̃ add at most (2γ_d + γ_d²)|p̃|ᵀ|Ã||p̃| (Higham 2002, eq. (3.13); any order, FMA
    or not), with |p̃|ᵀ|Ã||p̃| <= (n R² + d e_A) M.
    """
    g = gamma(d)
    bound = (e_a * d + (2.0 * g + g * g) * (n * norm_bound_squared(d) + d * e_a)) * ORTHONORMAL_MARGIN
    return math.nextafter(bound, math.inf)


def _profile(X, d: int, rows_bound: int) -> np.ndarray:
    """One pass over the rows: every row checked (norm <= 1, finite; raises before any charge) and the exact
    profile ``[Σq, c_1, …, c_RADII]`` of their squared norms (:func:`dpstats._kernels.rows.norm_profile`)."""
    rows = min(block_rows(8 * d), 1 << 16)
    bound = norm_bound_squared(d)
    found = reduce_rows(
        (X,),
        rows,
        functools.partial(norm_profile, levels=RADII, bound=bound),
        functools.partial(ExactSum, (RADII + 1,), float(rows) * (_profile_top(d) + 1)),
        check=row_norm_violations,
    )
    if found.checks is not None:
        found.checks.raise_error("X")
    return found.body.total()


# ----------------------------------------------------------------------------- the steering of AdaptiveCov


def _predicted_errors(radius: float, trace: float, d: int, plan: _Plan) -> tuple[float, float]:
    """(Analyze Gauss, SeparateCov): the Frobenius errors predicted at ``radius`` for rows of norm <= 1 with a
    trace at most ``trace`` (a public function of released values; it only steers the choices).

    Analyze Gauss: radius²·σ·ω with ω² = d² + 2√((2d² − d) ln(1/β)) + 4 ln(1/β), the (1 − β) bound on ‖W‖_F² of
    the symmetric noise W with standard upper entries (a weighted χ² with weights 1 on the diagonal and 2 off it;
    Laurent & Massart 2000, Lemma 1). SeparateCov: (1/3)·√(trace·‖E‖₂) + ‖z‖₂ with ‖E‖₂ <= radius²·σ_v(2√d +
    2√(ln(1/β))) (the spectral norm of a symmetric Gaussian matrix, about 2√d, plus Gaussian concentration: it is
    √2-Lipschitz in the entries) and ‖z‖₂ <= radius²·σ_λ(√d + √(2 ln(1/β))) for the eigenvalue noise.
    """
    log = math.log(1.0 / _BETA)
    omega = math.sqrt(d * d + 2.0 * math.sqrt((2.0 * d * d - d) * log) + 4.0 * log)
    nu = 2.0 * math.sqrt(d) + 2.0 * math.sqrt(log)
    eta = math.sqrt(d) + math.sqrt(2.0 * log)
    r2 = radius * radius
    gauss = r2 * plan.gauss.noise_scale * omega
    separate = _SEPARATE_FACTOR * math.sqrt(trace * r2 * plan.vectors.noise_scale * nu)
    return gauss, separate + r2 * plan.values.noise_scale * eta


def _clipping_bias(counts: np.ndarray) -> list[Fraction]:
    """S_j for j = 0 … RADII − 1: Σ over rows of level l <= j of 4^-(l−1) − 4^-j (module docstring, "Radius"),
    exact: S_j = (Σ_{l<=j} c_l·4^(j−l+1) − Σ_{l<=j} c_l) / 4^j, in integers."""
    counts = [int(c) for c in counts]
    out, weighted, total = [], 0, 0  # Σ_{l<=j} c_l·4^(j−l+1) and Σ_{l<=j} c_l, updated as j grows
    for j in range(RADII):
        if j:
            weighted = 4 * weighted + 4 * counts[j - 1]
            total += counts[j - 1]
        out.append(Fraction(weighted - total, 4**j))
    return out


def _choose_radius(counts: np.ndarray, trace: float, d: int, m: int, plan: _Plan, rng) -> float:
    """The sparse vector step (module docstring, "Privacy" 2): the first j whose noisy query Q_j + ν_j reaches the
    noisy threshold ρ₀, and the radius 2^-(j−1) (at most 1); 2^-(RADII−1) when none does. The queries are
    Q_j = floor(2^12·q_j/m): integers of sensitivity 2^12 (q_j/m moves by at most 1). The noise of every query is
    drawn at once (the ones after the first to fire are never used)."""
    step = 1 << _SVT_BITS
    eps_num = math.floor(Fraction(plan.epsilon_svt) * (1 << _EPSILON_BITS))  # ε′ = eps_num / 2^40 <= ε_svt
    queries = [
        math.floor((bias - Fraction(min(_predicted_errors(2.0**-j, trace, d, plan)))) * step / m)
        for j, bias in enumerate(_clipping_bias(counts))
    ]
    observe("sparse vector queries (clipping bias - predicted error)", queries, sensitivity=step, norm="linf")

    def sample() -> float:
        threshold = int(discrete_laplace(2 * step << _EPSILON_BITS, eps_num, (), rng))  # scale 2·2^12/ε′
        noise = discrete_laplace(4 * step << _EPSILON_BITS, eps_num, RADII, rng)  # scale 4·2^12/ε′ each
        for j, query in enumerate(queries):
            if query + int(noise[j]) >= threshold:
                return min(1.0, 2.0 ** (1 - j))
        return 2.0 ** -(RADII - 1)

    return draw("sparse vector (AboveThreshold): the clipping radius", rng, sample)


# ----------------------------------------------------------------------------- the releases


def _orthonormal_vectors(M: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (decreasing) and orthonormalised eigenvectors of the symmetric M: the eigenvectors pass through a
    Householder QR (signs kept), so that ‖P̃‖₂² <= ORTHONORMAL_MARGIN holds for the eigenvalue step."""
    values, vectors = np.linalg.eigh((M + M.T) / 2.0)
    values, vectors = values[::-1], vectors[:, ::-1]
    Q, R = np.linalg.qr(vectors)
    return values, Q * np.where(np.diag(R) < 0, -1.0, 1.0)


def _noisy_matrix(noise: Noise, gram, d: int, rng) -> np.ndarray:
    upper = np.triu_indices(d)
    if gram.unit is None:
        statistic = Statistic(gram.values[upper])
    else:
        statistic = Statistic(gram.values[upper], gram.unit)
    return symmetric_from_upper(noise.apply(statistic, rng), d)


@dataclass(frozen=True)
class _Gram:
    values: np.ndarray
    unit: Fraction | None

    def as_float(self) -> np.ndarray:
        if self.unit is None:
            return self.values
        return np.asarray(self.values, dtype=np.float64) * float(self.unit)


def _gram(Y, grid: Fraction, rows_bound: int, noise: str) -> _Gram:
    if noise == "exact":
        gram = grid_gram(Y, grid, rows_bound)
        return _Gram(gram.values, gram.grid)
    return _Gram(float_gram(Y, rows_bound), None)


def _separate(gram: _Gram, d: int, plan: _Plan, eigenvalues: str, rng) -> tuple[np.ndarray, np.ndarray]:
    """SeparateCov's two releases on rows of norm <= 1: the eigenvectors of the noisy matrix, then the noisy
    Rayleigh quotients diag(P̃ᵀAP̃) (or, paper-faithful, the noisy eigenvalues of A)."""
    _, vectors = _orthonormal_vectors(_noisy_matrix(plan.vectors, gram, d, rng))
    A = gram.as_float()
    if eigenvalues == "rayleigh":
        statistic = np.einsum("ij,ij->j", vectors, A @ vectors)
    else:
        statistic = np.linalg.eigvalsh(A)[::-1]
    return plan.values.apply(Statistic(statistic), rng), vectors


def _estimate(data, epsilon, delta, algorithm, eigenvalues, clip, rng, accountant, noise):
    """The mechanism (module docstring): (noisy eigenvalues, orthonormal eigenvectors, radius², rows bound) of the
    estimate of XᵀX for rows of norm <= 1; every parameter checked at the entry point (declared), the rows read
    there (``data``: a :class:`dpstats._engine.Matrix`)."""
    if eigenvalues == "spectrum" and noise != "float":
        raise ParameterError(
            "eigenvalues='spectrum' (the paper's noisy eigenvalues of XᵀX) has no proven floating-point error "
            "bound; it is offered with noise='float' only, to reproduce the paper. The default 'rayleigh' is exact"
        )
    rows = bound_matrix(data, clip=clip, rng=rng)
    X, rows_bound, m = rows.arrays[0], rows.rows_bound, rows.max_rows
    d = X.shape[1]
    from .._kernels.gram import grid_gram_slack

    grid = grid_for(math.sqrt(2.0) * m * norm_bound_squared(d) / math.sqrt(_upper_size(d)), GRID_BITS)
    calibrate = _exact_plan if noise == "exact" else _plan  # the float path warns at every call: never cached
    plan = calibrate(epsilon, delta, algorithm, d, m, rows_bound, grid_gram_slack(rows_bound, d, grid), noise)
    if algorithm == "adaptive":
        profile = _profile(X, d, rows_bound)  # every row checked here, before the charge
        statements = [plan.trace.statement("squared-norm units (the trace of XᵀX)")]
    else:
        gram = _gram(X, grid, rows_bound, noise)  # every row checked here, before the charge
        statements = []
    statements += [
        plan.vectors.statement("Gram units (entries of XᵀX), eigenvector step"),
        plan.values.statement("Gram units (eigenvalues of XᵀX), eigenvalue step"),
    ]
    charge(
        "covariance_dong",
        plan.events,
        rng=rng,
        accountant=accountant,
        rows=rows,
        note=f"Dong, Liang & Yi 2022, {'AdaptiveCov' if algorithm == 'adaptive' else 'SeparateCov'}, "
        f"eigenvalues: {eigenvalues}",
        noise=statements,
    )
    if algorithm == "separate":
        values, vectors = _separate(gram, d, plan, eigenvalues, rng)
        return values, vectors, 1.0, rows_bound
    sums = plan.trace.apply(Statistic(profile[0], Fraction(1, 2**PROFILE_BITS)), rng)
    shift = plan.trace.noise_scale * math.sqrt(2.0 * math.log(1.0 / _BETA))  # an upper confidence bound
    trace = min(max(float(sums) + shift, 1e-300), rows_bound * norm_bound_squared(d))
    radius = _choose_radius(profile[1:], trace, d, m, plan, rng)
    Y = X if radius == 1.0 else check_row_norms(X * (1.0 / radius), "X", clip=True)
    gram = _gram(Y, grid, rows_bound, noise)
    gauss, separate = _predicted_errors(radius, trace, d, plan)
    if gauss <= separate:
        values, vectors = _orthonormal_vectors(_noisy_matrix(plan.gauss, gram, d, rng))
    else:
        values, vectors = _separate(gram, d, plan, eigenvalues, rng)
    return values, vectors, radius * radius, rows_bound


#: The parameters of both of Dong et al.'s releases.
_DONG = {
    **privacy("approx"),
    "algorithm": Options(*ALGORITHMS),
    "eigenvalues": Options(*EIGENVALUES),
    "clip": Flag(),
    **UNITS,
    **NOISE,
}
_MATRIX = {"X": Data("matrix", "an n × d matrix of rows with L2 norm <= 1")}


@declare(
    family="decomposition",
    statistic="Dong, Liang & Yi: XᵀX with error following the trace (SeparateCov, AdaptiveCov)",
    data=_MATRIX,
    parameters={**_DONG, "norm_bound": NormBound(), "radius_share": Real(0, 1)},
    engines=("numpy", "dask"),
    cases="dpstats.decomposition._cases:covariance_dong",
    preview="dpstats.decomposition._previews:covariance_dong_preview",
)
@named_rows("features")
def covariance_dong(
    X,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    *,
    algorithm: str = "adaptive",
    eigenvalues: str = "rayleigh",
    norm_bound=None,
    radius_share: float = RADIUS_SHARE,
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
) -> np.ndarray:
    """A private estimate of the second-moment matrix XᵀX whose error scales with its trace (Dong, Liang & Yi 2022).

    ``algorithm="adaptive"`` (default) is the paper's AdaptiveCov: a private trace, a private clipping radius
    (sparse vector technique over 1, 1/2, 1/4, …), then SeparateCov or Analyze Gauss on the clipped rows, whichever
    is predicted to err less. ``algorithm="separate"`` is the paper's trace-sensitive SeparateCov at the public
    bound: eigenvectors from Analyze Gauss with half the budget, eigenvalues with the other half. See the module
    docstring (:mod:`dpstats.decomposition._dong`) for the algorithms, the sensitivities and their derivations, the
    exact noise and the calibration.

    Neighbouring relation: replace one row (n public), or with ``privacy_unit``, replace all rows of one unit (at
    most ``max_rows`` kept; N units public). Sensitivities (rows ‖x‖² <= R² < 1 + 1e-9; m = ``max_rows``, 1
    without a unit): eigenvector step Δ₂ = √2·m·R²; eigenvalue step Δ₂ = √2·m·R²·(1 + 2^-30); trace Δ₂ = m·R²;
    radius step: queries of sensitivity m.

    Calibration: (ε, δ)-DP as a whole. SeparateCov's two Gaussian releases share one analytic-Gaussian (ε, δ)
    budget in halves (one Gaussian event on the ledger). AdaptiveCov maps (ε, δ) to the paper's ρ-zCDP budget
    (ρ-zCDP ⇒ (ε, δ)-DP), gives the sparse vector step the pure ε_svt = √(ρ/4) (the paper's ρ/8), and the trace
    and covariance steps the rest, ε − ε_svt at δ, as one Gaussian budget in the paper's proportions 1 : 6
    (a Gaussian and a pure event on the ledger, their labels adding up to (ε, δ)).

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame or dask array, shape (n, d)
        Data, one person per row, rows of norm <= 1 (see ``norm_bound`` otherwise).
    epsilon : float
        ε > 0 of the whole release.
    delta : float
        0 < δ < 1 (the mechanisms are zCDP: Gaussian noise).
    algorithm : {"adaptive", "separate"}, default "adaptive"
        The paper's AdaptiveCov or SeparateCov.
    eigenvalues : {"rayleigh", "spectrum"}, default "rayleigh"
        The eigenvalue step: noisy diag(P̃ᵀXᵀXP̃) on the private eigenvectors P̃ (exact; never a worse estimate,
        module docstring), or the paper's noisy eigenvalues of XᵀX (``noise="float"`` only).
    norm_bound : None, float or "private", default None
        None: rows must have norm <= 1. A public R > 0: rows must have norm <= R (``clip`` to force it); they are
        divided by R and the estimate multiplied by R². ``"private"``: R is the private 0.75-quantile of the row
        norms, bought with ``radius_share``·ε (:func:`dpstats.preprocessing.to_unit_rows`), rows above it clipped.
    radius_share : float, default 0.1
        With ``norm_bound="private"``: the part of ε spent on R.
    clip : bool, default False
        Scale rows with norm > 1 (or > ``norm_bound``) down to it instead of raising.
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame ``X``).
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    rng : None, int or numpy.random.Generator
        Source of randomness; ``None`` is a cryptographically secure source.
    accountant : Accountant, optional
        Charged once, before any noise is drawn.
    noise : {"exact", "float"}, default "exact"
        Exact discrete noise on public grids, or the paper's floating-point Gaussian noise (warns).

    Returns
    -------
    numpy.ndarray, shape (d, d)
        The symmetric positive semi-definite estimate of XᵀX (not divided by n): P̃ diag(λ̃) P̃ᵀ with the noisy
        eigenvalues clipped to [0, n] (N·m with a unit), times the radius² — the projection onto the matrices whose
        eigenvalues lie in that range, which contains XᵀX (post-processing). A DataFrame ``X`` gives a DataFrame
        with its column names on both axes.

    References
    ----------
    W. Dong, Y. Liang & K. Yi, "Differentially private covariance revisited", NeurIPS 2022 (arXiv:2205.14324).
    C. Dwork & A. Roth, "The algorithmic foundations of differential privacy", 2014, Algorithm 1 (AboveThreshold).
    C. Canonne, G. Kamath & T. Steinke, "The discrete Gaussian for differential privacy", NeurIPS 2020.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.decomposition import covariance_dong
    >>> X = np.random.default_rng(0).normal(0, 0.05, (2000, 6))
    >>> A_hat = covariance_dong(X, 1.0, 1e-6, rng=0)
    >>> A_hat.shape, bool(np.allclose(A_hat, A_hat.T))
    ((6, 6), True)
    """
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
    values, vectors, scale, rows_bound = _estimate(
        rows.rows, rows.epsilon, delta, algorithm, eigenvalues, rows.clip, rng, rows.accountant, noise
    )
    values = np.clip(values, 0.0, rows_bound * norm_bound_squared(vectors.shape[0]))
    estimate = (vectors * values) @ vectors.T
    return (estimate + estimate.T) * (0.5 * scale * rows.radius**2)


@declare(
    family="decomposition",
    statistic="Dong, Liang & Yi: the top-k eigenvectors of their estimate of XᵀX",
    data=_MATRIX,
    own=("k",),
    parameters={**_DONG, "k": Components()},
    engines=("numpy", "dask"),
    cases="dpstats.decomposition._cases:pca_dong",
    preview="dpstats.decomposition._previews:pca_dong_preview",
)
@named_rows("components")
def pca_dong(
    X,
    k: int,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    *,
    algorithm: str = "adaptive",
    eigenvalues: str = "rayleigh",
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
) -> np.ndarray:
    """Private top-k principal subspace from :func:`covariance_dong`'s estimate (post-processing).

    The k eigenvectors of the estimate with the largest noisy eigenvalues (before their clipping to [0, n], which
    would tie the largest): with the default Rayleigh eigenvalues, the k private directions along which the data
    are estimated to have the most energy. The same release, neighbouring relation, sensitivities and calibration
    as :func:`covariance_dong` (rows of norm <= 1; :func:`dpstats.pca` adds ``norm_bound``).

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame or dask array, shape (n, d)
        Data, rows with ‖x_i‖₂ <= 1.
    k : int
        Dimension of the subspace, 1 <= k <= d.
    epsilon, delta : float
        ε > 0, 0 < δ < 1.
    algorithm, eigenvalues, clip, privacy_unit, max_rows, rng, accountant, noise
        As in :func:`covariance_dong`.

    Returns
    -------
    numpy.ndarray, shape (d, k)
        Orthonormal columns (a DataFrame indexed by the columns of a DataFrame ``X``, with columns ``pc1`` …).

    References
    ----------
    W. Dong, Y. Liang & K. Yi, "Differentially private covariance revisited", NeurIPS 2022.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.decomposition import pca_dong
    >>> X = np.random.default_rng(0).normal(0, 0.05, (2000, 6))
    >>> pca_dong(X, 2, 1.0, 1e-6, rng=0).shape
    (6, 2)
    """
    data = read_matrix(X, privacy_unit, max_rows)  # read once (a Matrix from pca passes as it is)
    k = check_int(k, "k", low=1, high=data.X.shape[1])
    values, vectors, _, _ = _estimate(data, epsilon, delta, algorithm, eigenvalues, clip, rng, accountant, noise)
    order = np.argsort(-values, kind="stable")[:k]
    return np.ascontiguousarray(vectors[:, order])
