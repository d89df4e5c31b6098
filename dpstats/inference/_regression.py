"""Confidence intervals, t-test p-values and the F test of the coefficients of SSP and AdaSSP: a parametric bootstrap
of the noisy sufficient statistics (Ferrando, Wang & Sheldon, AISTATS 2022: their adaptation to linear regression).

What is released
----------------
``dps.linear_regression(X, y, ε, δ, method="ssp" | "adassp", ci=level)`` releases what it releases without
``ci`` (:mod:`dpstats.linear_model._ssp`): the noisy augmented Gram matrix G̃ = ZᵀZ + E of the scaled rows
z = [z_x, (a,) z_y] (E symmetric, its upper triangle i.i.d. exact discrete Gaussian on a public grid; the constant
column's square n·a² is public and set exactly), and for AdaSSP the ridge λ (itself a release). That is all the
bootstrap needs: XᵀX, Xᵀy and yᵀy are blocks of G̃, n is public, and the noise's distribution is public
(:class:`~dpstats.inference._simulate.NoiseModel`). So the interval is post-processing, and the whole budget stays
with the Gram matrix (and AdaSSP's eigenvalue), split as without ``ci``.

The plug-in population (scaled units)
-------------------------------------
Rows are i.i.d.; y = x̃ᵀθ + e with e independent of x, E e = 0, Var e = s² (the Gaussian linear model; the interval
is asymptotically valid for any homoscedastic error, as the classical t-interval is).

* the second-moment matrix of the regressors x̃ = [z_x, (a)]: M̂ = G̃_xx / n. With an intercept, the features' mean is
  μ̂ = M̂_{x,1}/a and their covariance Σ̂ = M̂_xx − μ̂μ̂ᵀ; without one, μ̂ = 0 and Σ̂ = M̂_xx. Σ̂ is projected on the
  positive semi-definite cone (its negative eigenvalues, made by the noise, set to 0): post-processing.
* θ̂: the release's own coefficients (G̃_xx + λI)⁻¹G̃_xy (λ = 0 for SSP).
* ŝ² = max(0, G̃_yy − 2θ̂ᵀG̃_xy + θ̂ᵀG̃_xxθ̂)/(n − k_x), the residual mean square of the noisy statistics.

The bootstrap (B = :data:`~dpstats.inference._simulate.DRAWS` draws, O(B·k³) work whatever n)
--------------------------------------------------------------------------------------------------------
Each draw simulates the whole release from the plug-in population, without simulating rows:

1. XᵀX of n Gaussian rows x ~ N(μ̂, Σ̂): with x_i = μ̂ + L g_i (LLᵀ = Σ̂), Σ x_i x_iᵀ = L W Lᵀ + n x̄ x̄ᵀ where
   W = Σ (g_i − ḡ)(g_i − ḡ)ᵀ ~ Wishart(n − 1, I) (Bartlett's decomposition) is independent of ḡ ~ N(0, I/n)
   and x̄ = μ̂ + Lḡ; without an intercept, Σ x_i x_iᵀ = L W Lᵀ with W ~ Wishart(n, I). The constant column gives
   n·x̄·a and n·a².
2. Given X: u = Xᵀe ~ N(0, ŝ² XᵀX); Xᵀy = XᵀXθ̂ + u; yᵀy = θ̂ᵀXᵀXθ̂ + 2θ̂ᵀu + ‖Pe‖² + ‖(I − P)e‖² with
   ‖Pe‖² = uᵀ(XᵀX)⁺u and ‖(I − P)e‖² ~ ŝ²χ²_{n−k_x} independent of u (Cochran).
3. The release: each upper entry rounded to the grid plus its exact noise (``NoiseModel.release``), the constant
   column's square set to n·a² as the release sets it.
4. The same estimator: θ* = (G*_xx + λI)⁻¹G*_xy with the *released* λ (AdaSSP), mapped to the data's units
   (coefficients, then the intercept) by the release's public affine map.

Bias
----
For every θ, a draw's estimate is affine in θ: with common random numbers (the design XX_b, u_b, the noise E_b; the
grid's rounding aside), θ*_b(θ) = A_b⁻¹(XX_b θ + v_b) = C_b θ + r_b, where A_b = XX_b + E_b,xx + λI and
v_b = u_b + E_b,xy. SSP (λ = 0) is unbiased to first order (C_b ≈ I; its errors-in-variables attenuation is of second
order in the noise, and E C_b need not exist: the noisy XᵀX may be near singular): its interval is the basic
(pivotal) bootstrap interval of Δ* = β* − β̂. AdaSSP's ridge shrinks by a first-order amount — as large as θ itself
when λ dominates XᵀX — which depends on the unknown θ, so the pivot β̂ − β is not pivotal there (the basic interval
undercovers at small n·ε). The bootstrap corrects it with the draws it already has: the plug-in
θ̃ = C̄⁻¹(θ̂ − r̄) (C̄, r̄ the draws' means: the θ whose estimator's mean is the release θ̂, a bias-corrected
estimate), and the pivot of the corrected estimator h(θ̂) = C̄⁻¹(θ̂ − r̄), whose draws are
h(θ*_b(θ̃)) − θ̃ = C̄⁻¹((C_b − C̄)θ̃ + r_b − r̄). Where λ is small next to XᵀX, C̄ ≈ I and this is the basic interval;
where λ dominates, C̄⁻¹ scales the noise up and the interval is as wide as the data allow.

The interval (coefficients, then the intercept: β = Tθ + o) is [β̃ − q*_{(1+L)/2}, β̃ − q*_{(1−L)/2}] for the
draws Δ* of the pivot mapped to the data's units (the order statistics of
:func:`~dpstats.inference._simulate.equal_tailed`), β̃ = Tθ̃ + o (β̂ for SSP). The p-value of H0: β_j = 0
(two-sided) is the same pivot's, (1 + #{Δ*_j at least as extreme as β̃_j})/(B + 1) doubled
(:func:`~dpstats.inference._simulate.pvalue`): the test is the interval inverted, so p <= 1 − L exactly when the
level-L interval leaves 0 out (up to the order statistics' rounding). ``std_error`` is the standard deviation of Δ*.

The F test
----------
H0: every slope is 0 (the intercept free), against any slope ≠ 0: statsmodels' ``f_pvalue``, from the same draws
(no new release, no extra charge, nothing more drawn). The statistic is a Wald form of the release's own slopes
β̂_s (the first d rows of Tθ̂ + o: SSP's, or AdaSSP's shrunk ones as released),

    W = (β̂_s − m₀)ᵀ V₀⁻¹ (β̂_s − m₀),    reported as ``f_statistic`` = W/d (the F scale),

and its null distribution is the parametric bootstrap's under the *null plug-in population*: the same design
(μ̂, Σ̂), the coefficients θ₀ of the intercept alone — θ₀ = ȳ/a on the constant column, the least squares of y on
it from the noisy statistics, G̃_{1y}/(n·a²) (θ₀ = 0 without an intercept) — and the residual variance re-estimated
under H0: s₀² = (G̃_yy − G̃_{1y}²/(n·a²))/(n − 1), the total variance of y (G̃_yy/n without an intercept). A draw
under it is θ₀*_b = A_b⁻¹(XX_b θ₀ + s₀ u⁰_b + E_b,xy) with the draws' own design XX_b, unit-variance error
u⁰_b (u_b = ŝ·u⁰_b), noise E_b and A_b = XX_b + E_b,xx + λI (common random numbers, as in "Bias": the estimator is
linear in (θ, s) given them; the grid's rounding aside, θ₀*_b is a draw of the release's estimator on a data set
from the null plug-in population), so the interval's draws are unchanged. m₀ and V₀ are the mean and covariance of
the null draws' slopes β₀*_b (V₀⁻¹ a pseudo-inverse), W*_b = (β₀*_b − m₀)ᵀV₀⁻¹(β₀*_b − m₀), and the p-value is
(1 + #{W*_b >= W})/(B + 1) (:func:`~dpstats.inference._simulate.pvalue`, ``"greater"``).

Why this form. Under H0 the release's slopes and the null draws have the same distribution when the plug-in is the
population, so W is compared with draws of the *same* function of the release: the test needs no bias correction
(the null draws carry AdaSSP's shrinkage, and the intercept's shrinkage leaking into slopes correlated with it,
exactly as the release does), and no F or χ² approximation (the noisy XᵀX's heavy tails at small n·ε are in the
draws). Given (m₀, V₀) the level is exact for the plug-in population — they are taken from the same B draws, a
negligible dependence — and it holds for the real population as far as the null plug-in estimates it (a parametric
bootstrap test, asymptotically valid); the level is measured in ``tests/test_linear_regression_ci.py``, where the
non-private F test (scipy.stats.f on the noisy statistics) and the noise-only bootstrap are shown to fail it. V₀
(the null's covariance) rather than the covariance of the draws at θ̂: both estimate the same matrix under H0, but
the latter grows with θ under an alternative (the noise of XᵀX multiplies θ) and would take power away. Alabi &
Vadhan (NeurIPS 2022) test the same null with a private F statistic computed from noisy sufficient statistics,
calibrated by simulation under the null; the Wald form here avoids the noisy residual sum of squares (negative at
small n·ε) and re-uses the bootstrap's simulation of the release.

What it covers: the population coefficients of the least-squares regression of y on [x, 1] (of the variables
clipped to the bounds with ``clip=True``), from i.i.d. rows and a homoscedastic error, accounting for the sampling
of the rows *and* the exact noise. The Gaussian plug-in for X is a model of XᵀX's sampling variation only: the
coverage for bounded, non-Gaussian designs (uniform features) is checked by simulation in
``tests/test_linear_regression_ci.py``, with the noise-only and the noise-ignoring intervals shown to fail there.

Limits
------
The plug-in design Σ̂ and the correction C̄ are treated as known: where AdaSSP's ridge dominates the noisy XᵀX
(λ several times its smallest eigenvalue, the estimate shrunk to a fraction of θ), the correction rests on a design
as noisy as the data, and the level is not assured. Measured (400 data sets, Gaussian design, bounds at ±4σ): at
n = 500, ε = 1 (λ ≈ 4·λ_min) the coverage of one coefficient was 0.81; at n = 1000, ε = 2 it is 0.95 or more for
every coefficient. The F test is conservative where the noise dominates the plug-in design (n = 300, ε = 1, three
uniform features, bounds ±1 and ±3 for y: 2 rejections in 200 null data sets at 0.05; the noisy Σ̂'s spread
eigenvalues make the null draws wider than the release's spread): valid, with little power there. Where AdaSSP's
interval undercovers (n = 500, ε = 1, Gaussian design) the F test rejected 7 of 200 null data sets at 0.05 (SSP:
10). Heteroscedastic
errors are outside the model (as for the classical interval). Privacy units are refused by the call (n is then not
public), and so are private bounds (the data clipped to released quantiles).

For comparison, Sheffet (2017) derives t-intervals for the coefficients from noisy sufficient statistics (Analyze
Gauss, with a correction of the noisy XᵀX for its noise); the bootstrap here needs no such bound and keeps the
exact noise's distribution, at the price of the Gaussian design model.

References
----------
C. Ferrando, S. Wang & D. Sheldon, "Parametric bootstrap for differentially private confidence intervals",
AISTATS 2022 (the parametric bootstrap, and its adaptation to ordinary least squares from noisy sufficient
statistics, which never reads the covariates again). D. Alabi & S. Vadhan, "Hypothesis testing for
differentially private linear regression", NeurIPS 2022 (the private F test). O. Sheffet, "Differentially private
ordinary least squares", ICML 2017. Y.-X. Wang, "Revisiting differentially private linear regression", UAI 2018
(AdaSSP).
M. S. Bartlett, "On the theory of statistical regression", Proc. R. Soc. Edinburgh 53, 1933 (the Wishart draw).
A. C. Davison & D. V. Hinkley, "Bootstrap methods and their application", 1997, Section 5.2 (the basic interval).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._simulate import DRAWS, NoiseModel, equal_tailed, pvalue

__all__ = ["METHOD", "PARTS", "CoefficientInference", "coefficient_inference"]

METHOD = (
    "parametric bootstrap of the noisy sufficient statistics (Ferrando, Wang & Sheldon 2022): Wishart XᵀX, Gaussian "
    "linear model, exact noise, the release's estimator (AdaSSP: its released ridge, the shrinkage corrected); basic "
    "(pivotal) interval"
)
#: What a bootstrap draw simulates: the sampling of the rows and the release's noise (the tests drop one of them to
#: show that the interval needs both).
PARTS = ("sampling", "noise")


@dataclass(frozen=True)
class CoefficientInference:
    """Per coefficient (the features', then the intercept's): ``low``, ``high``, ``std_error``, ``pvalue``; and the
    F test of all slopes = 0 (``f_statistic``, ``f_pvalue``; None without a slope)."""

    low: np.ndarray
    high: np.ndarray
    std_error: np.ndarray
    pvalue: np.ndarray
    centre: np.ndarray
    f_statistic: float | None = None
    f_pvalue: float | None = None


def coefficient_inference(
    gram: np.ndarray,
    n: int,
    *,
    constant: int | None,
    ridge: float,
    noise: NoiseModel,
    affine: tuple[np.ndarray, np.ndarray],
    level: float,
    rng: np.random.Generator,
    draws: int = DRAWS,
    parts: tuple[str, ...] = PARTS,
) -> CoefficientInference:
    """The interval and p-values of the module docstring from the released Gram matrix ``gram`` (k × k, scaled
    units, the constant column's square set), the public ``n``, the index ``constant`` of the constant column among
    the k − 1 regressors (None without an intercept), the released ``ridge`` (0 for SSP), the Gram noise's exact
    model, and the public map ``affine`` = (T, o) from θ to the data's units (β = Tθ + o)."""
    gram = np.asarray(gram, dtype=np.float64)
    k = gram.shape[0]
    kx = k - 1
    T, offset = affine
    G_xx, G_xy, G_yy = gram[:kx, :kx], gram[:kx, kx], gram[kx, kx]
    theta = _solve(G_xx[None] + ridge * np.eye(kx), G_xy[None, :, None])[0, :, 0]
    rss = G_yy - 2.0 * theta @ G_xy + theta @ G_xx @ theta
    s2 = max(float(rss), 0.0) / max(n - kx, 1)
    features = [j for j in range(kx) if j != constant]
    M = G_xx / n
    if constant is None:
        mean, square = np.zeros(len(features)), 1.0
        cov = M
    else:
        square = float(M[constant, constant])  # a², public
        mean = M[features, constant] / np.sqrt(square)
        cov = M[np.ix_(features, features)] - np.outer(mean, mean)
    root = _psd_root(cov)

    if "sampling" in parts:
        XX = _design_grams(root, mean, n, constant, square, kx, features, draws, rng)
        vals, vecs = np.linalg.eigh(XX)
        z = rng.standard_normal((draws, kx))
        positive = vals > 1e-12 * np.maximum(vals[:, -1:], 1e-300)
        unit = np.einsum("bij,bj->bi", vecs, np.sqrt(np.clip(vals, 0.0, None)) * z)  # Xᵀe / s
        u = np.sqrt(s2) * unit
        projected = s2 * np.sum(np.where(positive, z * z, 0.0), axis=1)
        residual = s2 * rng.chisquare(max(n - kx, 1), draws)
        fitted = XX @ theta
        Xy = fitted + u
        yy = fitted @ theta + 2.0 * (u @ theta) + projected + residual
    else:  # noise only: the released design and the fitted response, no sampling
        XX = np.broadcast_to(G_xx, (draws, kx, kx)).copy()
        Xy = np.broadcast_to(G_xx @ theta, (draws, kx)).copy()
        yy = np.full(draws, theta @ G_xx @ theta + s2 * (n - kx))
        unit = np.zeros((draws, kx))
    G = np.empty((draws, k, k))
    G[:, :kx, :kx], G[:, :kx, kx], G[:, kx, :kx], G[:, kx, kx] = XX, Xy, Xy, yy
    if "noise" in parts:
        upper = np.triu_indices(k)
        released = noise.release(G[:, upper[0], upper[1]], rng)
        G[:, upper[0], upper[1]] = released
        G[:, upper[1], upper[0]] = released
        if constant is not None:  # public: n·a², set exactly as the release sets it
            G[:, constant, constant] = n * square
    # θ*(θ) = A_b⁻¹(XX_b θ + v_b) for every θ, with A_b = the noisy XX_b + λI and v_b = u_b + the noise of Xy_b
    # (module docstring, "Bias"): C_b = A_b⁻¹XX_b and r_b = A_b⁻¹v_b, from the draws made at θ̂
    A = G[:, :kx, :kx] + ridge * np.eye(kx)
    C = _solve(A, XX)
    r = _solve(A, (G[:, :kx, kx] - XX @ theta)[..., None])[..., 0]
    if ridge > 0:  # the ridge's first-order bias, corrected (module docstring, "Bias")
        C_mean, r_mean = C.mean(axis=0), r.mean(axis=0)
        inverse = np.linalg.pinv(C_mean)
    else:  # SSP: the basic interval of θ* − θ̂ itself (C̄ = I, r̄ = 0)
        C_mean, r_mean = np.eye(kx), np.zeros(kx)
        inverse = C_mean
    corrected = inverse @ (theta - r_mean)  # the plug-in θ whose estimator's mean is the release's θ̂
    estimate = T @ corrected + offset
    shifts = ((C - C_mean) @ corrected + (r - r_mean)) @ (T @ inverse).T
    lower, upper_q = equal_tailed(shifts, level, axis=0)
    values = [pvalue(float(estimate[j]), shifts[:, j]) for j in range(estimate.size)]
    f_statistic = f_value = None
    if features:
        error = G[:, :kx, kx] - Xy  # each drawn Xᵀy's noise (0 without the noise)
        f_statistic, f_value = _f_test(gram, n, constant, theta, XX, unit, error, A, (T[: len(features)], offset))
    return CoefficientInference(
        estimate - upper_q,
        estimate - lower,
        shifts.std(axis=0, ddof=1),
        np.array(values),
        estimate,
        f_statistic,
        f_value,
    )


def _f_test(gram, n, constant, theta, XX, unit, error, A, slopes) -> tuple[float, float]:
    """The F test of the module docstring ("The F test"): (W/d, its p-value), from the draws made at θ̂ — the
    designs ``XX``, the unit-variance errors ``unit`` (Xᵀe/s), the noise ``error`` of each drawn Xᵀy, the noisy
    ``A`` = G*_xx + λI — re-used at the null's plug-in (common random numbers: nothing new is drawn)."""
    kx = gram.shape[0] - 1
    G_xx, G_xy, G_yy = gram[:kx, :kx], gram[:kx, kx], gram[kx, kx]
    null = np.zeros(kx)
    if constant is not None:  # the intercept alone, by least squares on the noisy statistics: ȳ/a
        null[constant] = G_xy[constant] / G_xx[constant, constant]
    rss = G_yy - 2.0 * null @ G_xy + null @ G_xx @ null  # the total sum of squares about ȳ (about 0 without)
    s2 = max(float(rss), 0.0) / max(n - (constant is not None), 1)
    drawn = _solve(A, (XX @ null + np.sqrt(s2) * unit + error)[..., None])[..., 0]
    T, offset = slopes
    simulated = drawn @ T.T + offset[: T.shape[0]]
    observed = T @ theta + offset[: T.shape[0]]
    centre = simulated.mean(axis=0)
    precision = np.linalg.pinv(np.atleast_2d(np.cov(simulated, rowvar=False)))
    shifted = simulated - centre
    draws = np.einsum("bi,ij,bj->b", shifted, precision, shifted)
    wald = float((observed - centre) @ precision @ (observed - centre))
    return wald / T.shape[0], pvalue(wald, draws, alternative="greater")


def _psd_root(cov: np.ndarray) -> np.ndarray:
    """L with LLᵀ the projection of the symmetric ``cov`` on the positive semi-definite cone."""
    vals, vecs = np.linalg.eigh((cov + cov.T) / 2.0)
    return vecs * np.sqrt(np.clip(vals, 0.0, None))


def _design_grams(root, mean, n, constant, square, kx, features, draws, rng) -> np.ndarray:
    """``draws`` matrices XᵀX of n rows x ~ N(mean, root rootᵀ) with the constant column (module docstring, 1)."""
    d = len(features)
    df = n - 1 if constant is not None else n
    W = _wishart(df, d, draws, rng)
    S = root @ W @ root.T
    XX = np.empty((draws, kx, kx))
    idx = np.ix_(features, features)
    if constant is None:
        XX[:, idx[0], idx[1]] = S
        return XX
    centre = mean + rng.standard_normal((draws, d)) @ root.T / np.sqrt(n)
    XX[:, idx[0], idx[1]] = S + n * centre[:, :, None] * centre[:, None, :]
    a = np.sqrt(square)
    XX[:, features, constant] = n * a * centre
    XX[:, constant, features] = n * a * centre
    XX[:, constant, constant] = n * square
    return XX


def _wishart(df: int, d: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """``draws`` Wishart(df, I_d) matrices by Bartlett's decomposition: A lower triangular with A_ii² ~ χ²_{df−i}
    and standard normal entries below, W = AAᵀ."""
    A = np.zeros((draws, d, d))
    below = np.tril_indices(d, -1)
    A[:, below[0], below[1]] = rng.standard_normal((draws, below[0].size))
    diagonal = np.arange(d)
    A[:, diagonal, diagonal] = np.sqrt(rng.chisquare(df - diagonal, (draws, d)))
    return A @ np.transpose(A, (0, 2, 1))


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A⁻¹B for a stack of systems (B: a stack of matrices), each singular one by least squares (as the release)."""
    try:
        theta = np.linalg.solve(A, b)
        if np.all(np.isfinite(theta)):
            return theta
    except np.linalg.LinAlgError:
        pass
    out = np.empty_like(b)
    for i in range(A.shape[0]):
        try:
            out[i] = np.linalg.solve(A[i], b[i])
            if np.all(np.isfinite(out[i])):
                continue
        except np.linalg.LinAlgError:
            pass
        out[i] = np.linalg.lstsq(A[i], b[i], rcond=None)[0]
    return out
