"""Previews of the linear models (:func:`dpstats.preview`; each declared as the release's ``preview=``,
``"dpstats.linear_model._previews:NAME"``).

Public arguments: ``n`` rows (or ``units`` and ``max_rows``), ``d`` features, and the release's options (``lam``,
``method``, ``tol``, ``max_iter``, bounds, ...). The classifiers plan their solver from these public values exactly as
the release does (:class:`dpstats.linear_model.OutputPerturbation`, :class:`dpstats.linear_model.Accelerated`,
:func:`dpstats.linear_model.objective_perturbation_parameters`): a call the release would refuse (``max_iter`` or
double precision too tight) is refused by its preview, with the same message.

What each states:

* **output perturbation** — the ledger's statement: exact discrete Laplace noise on each weight, L1 sensitivity
  √d times the plan's L2 sensitivity 2mR/(nλ) + 2·distance;
* **objective perturbation** — no noise is added to a statistic (the ledger states none): the weights minimise the
  objective perturbed by a random linear term b with ‖b‖ ~ Gamma(d, ·), so the release differs from the minimiser
  of J(f) + (Δ/2)‖f‖² (the extra ridge Δ is 0 unless ε′ would be <= 0) by at most ‖b‖/(n(λ + Δ)) (strong
  convexity), plus the solver's public distance, the approximate-minimiser output noise (also Gamma-norm) and the
  public grid: the preview states that L2 distance at probability 0.95 (each Gamma at 0.975), ``"Gamma-norm"``;
* **SSP and AdaSSP** — the ledger's statements, the noisy Gram matrix of the scaled rows (and AdaSSP's smallest
  eigenvalue), calibrated as :mod:`dpstats.linear_model._ssp` does;
* **TukeyEM** (an exponential mechanism, unproven sampler) — the propose-test-release noise (the ledger's), and
  what holds whatever the data: a released model lies in the region of approximate Tukey depth >= t = ⌊⌊m/2⌋/2⌋
  among the m subset models (every coordinate between the t-th smallest and the t-th largest of the models'), and
  the check passes with probability >= 0.95 when the data's distance to unsafety is at least the threshold plus the
  noise's 95 % bound; how likely a data set is to pass, and where in the region the model lands, depend on the data;
* **DPTheilSen** (two exponential-mechanism medians) — each median's rank error among the k·⌊n/2⌋ pairs'
  predictions (:func:`dpstats.descriptive._previews.rank_statement`, utility sensitivity k = ``matchings``).

Private bounds (``bounds_X="private"``, ``bounds_y="private"``) add two exponential-mechanism quantiles per column at
their share of ε, charged with the method; the scaled rows' floating-point slack does not depend on the bounds (each
row is centred and scaled before any product), so the preview's calibration is the release's.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy.stats import gamma as gamma_law

from .._kernels.gram import norm_bound
from .._release import Preview, calibrate, public_count
from .._rounding import float_up
from .._validation import check_bounds
from ..accounting import split_epsilon, split_weighted
from ..accounting.events import ApproxDP, Exponential, PureDP
from ..accounting.ledger import NoiseStatement
from ..descriptive._previews import FAILURE, PublicRows, made, public_rows, rank_statement
from ..exceptions import DataValidationError, ParameterError
from ..noise.release import output_grid
from ._erm import (
    AMP_SHARE,
    DEFAULT_MAX_ITER,
    DEFAULT_TOL,
    LOGISTIC,
    Accelerated,
    OutputPerturbation,
    huber,
    objective_perturbation_parameters,
)
from ._linear_regression import BOUNDS_SHARE, CI_NOTE, PRIVATE_GRID, PRIVATE_QUANTILES, PRIVATE_RANGE, check_ci
from ._ssp import Scaling
from ._ssp import calibration as ssp_calibration
from ._theil_sen import GRID_SIZE, check_matchings
from ._tukey import calibration as tukey_calibration
from ._tukey import check_subsets

__all__ = ["GAMMA_NORM", "linear_regression_preview", "logistic_regression_preview", "svm_preview"]

#: The distribution named by the statement of objective perturbation's Gamma-norm noise.
GAMMA_NORM = "Gamma-norm"


def _features(d) -> int:
    if d is None:
        raise ParameterError("d is needed: the number of features (columns of X, public)")
    return public_count(d, "d")


# ----------------------------------------------------------------------------- ERM: SVM and logistic regression


def _erm(loss, epsilon, *, n, units, max_rows, d, lam, method, tol, max_iter, noise) -> Preview:
    if lam is None:
        raise ParameterError("lam is needed: the regularisation λ > 0 the call will take")
    rows, d = public_rows(n, units, max_rows), _features(d)
    mechanism = f"{loss.name} ({method} perturbation)"
    n, m = rows.rows_bound, rows.m
    if method == "output":
        return _output(mechanism, loss, epsilon, rows, d, lam, max_iter, noise)
    if noise == "gamma":
        raise ParameterError(
            "noise='gamma' applies to method='output' (the paper's Gamma-norm output noise); objective perturbation "
            "takes noise='exact' (its release on the public grid) or 'float'"
        )
    bound = norm_bound(d)
    eps_output = epsilon * AMP_SHARE
    eps_objective = epsilon - eps_output
    while Fraction(eps_objective) + Fraction(eps_output) > Fraction(epsilon):
        eps_objective = math.nextafter(eps_objective, 0.0)
    eps_prime, Delta = objective_perturbation_parameters(n, lam, eps_objective, loss.c, norm_bound=bound, max_rows=m)
    reg = lam + Delta
    target = tol / reg
    plan = Accelerated.plan(n, d, reg, loss, target, max_iter)
    exact_spread = 2 * m * Fraction(bound) / (Fraction(eps_prime) * n * Fraction(reg))
    if not exact_spread <= 2**900:
        raise ParameterError(
            f"objective perturbation's noise would overflow double precision at n(lam + Delta) = {n * reg:g} and "
            f"eps' = {eps_prime:g} (its scale exceeds 2^900); increase lam or epsilon"
        )
    spread = float_up(exact_spread)
    grid = output_grid(2.0 * target, d, noise)
    if not (spread >= 2.0**-900 and (grid is None or grid > 0.0)):
        raise ParameterError(
            f"objective perturbation's noise scale ({spread:g}) or output grid underflows double precision at "
            f"n(lam + Delta) = {n * reg:g} and tol = {tol:g}; decrease lam or increase tol"
        )
    covered = 2.0 * target if grid is None else math.nextafter(2.0 * target + grid * math.sqrt(d), math.inf)
    level = 1.0 - FAILURE / 2  # the two Gamma norms, each at 0.975: both hold with probability >= 0.95
    centre = float(gamma_law.ppf(level, d, scale=spread))
    output = float(gamma_law.ppf(level, d, scale=covered / eps_output))
    rounding = 0.0 if grid is None else grid * math.sqrt(d)
    error = math.nextafter((centre + plan.distance + output + rounding) * (1.0 + 1e-12), math.inf)
    stated = NoiseStatement(GAMMA_NORM, spread, error, "weights (L2 norm of the error vector)")
    note = (
        f"{rows.note()}CMS 2011 Algorithm 2 at eps={eps_objective:.6g} (eps'={eps_prime:.4g}, Delta={Delta:.4g}) on "
        f"{plan.steps} accelerated gradient steps and {plan.newton} Newton steps, within {plan.distance:.3g} of the "
        f"exact minimiser; the weights within {error:.4g} (L2) of the minimiser of J + (Delta/2)|f|^2 with "
        "probability 0.95: the noise centre |b|/(n(lam + Delta)) ~ Gamma(d, b's scale), the solver's distance, the "
        f"approximate-minimiser output noise at eps={eps_output:.4g} and the grid"
    )
    if noise == "float":
        note += "; the paper's floating-point release: UNPROVEN"
    events = [PureDP(eps_objective), PureDP(eps_output)]
    return made(mechanism, events, [stated], note=note, relation=rows.relation, proven=noise != "float")


def _output(mechanism, loss, epsilon, rows: PublicRows, d, lam, max_iter, noise) -> Preview:
    """CMS 2011 Algorithm 1 as :func:`dpstats.linear_model._erm` plans it (public values only)."""
    plan = OutputPerturbation.of(rows.rows_bound, d, lam, loss, rows.m, max_iter)
    how = (
        f"{rows.note()}CMS 2011 Algorithm 1 on {plan.steps} solver steps (fixed, public), within {plan.distance:.3g} "
        f"of the exact minimiser: L2 sensitivity {plan.sensitivity:.4g}"
    )
    if noise == "exact":
        l1 = math.nextafter(math.sqrt(d) * plan.sensitivity, math.inf)
        calibrated = calibrate(epsilon=epsilon, delta=0.0, sensitivity=l1, changed=d)
        note = f"{how}; exact discrete Laplace noise on each weight, L1 sensitivity sqrt(d) times the L2 one"
        return made(mechanism, [calibrated.event], [calibrated.statement("weights")], note=note, relation=rows.relation)
    grid = output_grid(plan.sensitivity, d, "float" if noise == "float" else "exact")
    covered = plan.sensitivity if grid is None else math.nextafter(plan.sensitivity + grid * math.sqrt(d), math.inf)
    scale = covered / epsilon
    error = float(gamma_law.ppf(1.0 - FAILURE, d, scale=scale)) + (0.0 if grid is None else grid * math.sqrt(d))
    stated = NoiseStatement(GAMMA_NORM, scale, math.nextafter(error, math.inf), "weights (L2 norm of the noise)")
    note = f"{how}; the paper's Gamma-norm noise, drawn in floating point (no exact sampler known): UNPROVEN"
    return made(mechanism, [PureDP(epsilon)], [stated], note=note, relation=rows.relation, proven=False)


def svm_preview(
    epsilon,
    delta,
    *,
    n=None,
    units=None,
    max_rows=None,
    d=None,
    lam=None,
    h=0.5,
    method="objective",
    tol=DEFAULT_TOL,
    max_iter=DEFAULT_MAX_ITER,
    noise="exact",
) -> Preview:
    """dps.svm (Huber loss with parameter h): output or objective perturbation (module docstring)."""
    return _erm(
        huber(h),
        epsilon,
        n=n,
        units=units,
        max_rows=max_rows,
        d=d,
        lam=lam,
        method=method,
        tol=tol,
        max_iter=max_iter,
        noise=noise,
    )


def logistic_regression_preview(
    epsilon,
    delta,
    *,
    n=None,
    units=None,
    max_rows=None,
    d=None,
    lam=None,
    method="objective",
    tol=DEFAULT_TOL,
    max_iter=DEFAULT_MAX_ITER,
    noise="exact",
) -> Preview:
    """dps.logistic_regression: output or objective perturbation (module docstring)."""
    return _erm(
        LOGISTIC,
        epsilon,
        n=n,
        units=units,
        max_rows=max_rows,
        d=d,
        lam=lam,
        method=method,
        tol=tol,
        max_iter=max_iter,
        noise=noise,
    )


# ----------------------------------------------------------------------------- linear regression


def _pairs(bounds, d: int, name: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Public bounds as (lower, upper) arrays of d values; None for "private"."""
    if isinstance(bounds, str):
        if bounds != "private":
            raise ParameterError(f"{name} must be a pair, one pair per column, or 'private'; got {bounds!r}")
        return None
    if bounds is None:
        raise ParameterError(f"{name} is needed: public bounds chosen without the data, or 'private'")
    if isinstance(bounds, dict):
        bounds = list(bounds.values())
    if (
        hasattr(bounds, "__len__")
        and len(bounds) == d
        and all(hasattr(b, "__len__") and not isinstance(b, str) for b in bounds)
    ):
        pairs = [check_bounds(b, f"{name}[{j}]") for j, b in enumerate(bounds)]
    else:
        pairs = [check_bounds(bounds, name)] * d
    if any(np.ndim(lo) or np.ndim(hi) for lo, hi in pairs):
        raise ParameterError(f"{name} must be a pair (lower, upper) of numbers, or one pair per column; got {bounds!r}")
    return np.array([float(p[0]) for p in pairs]), np.array([float(p[1]) for p in pairs])


def _private_bounds(epsilon, d, bounds_X, bounds_y, bounds_share):
    """(ε of the method, the private bounds' events, the public bounds (private ones as (0, 1)), a note)."""
    found_X, found_y = _pairs(bounds_X, d, "bounds_X"), _pairs(bounds_y, 1, "bounds_y")
    private = [found_X is None, found_y is None]
    lower_X, upper_X = found_X if found_X is not None else (np.zeros(d), np.ones(d))
    lower_y, upper_y = found_y if found_y is not None else (np.zeros(1), np.ones(1))
    bounds = (np.append(lower_X, lower_y), np.append(upper_X, upper_y))
    if not any(private):
        return epsilon, [], bounds, ""
    columns = d * private[0] + private[1]
    eps_bounds, epsilon = split_weighted(epsilon, [bounds_share, 1.0 - bounds_share])
    half = split_epsilon(split_epsilon(eps_bounds, columns), 2)
    note = (
        f"private bounds: the {PRIVATE_QUANTILES[0]:g}- and {PRIVATE_QUANTILES[1]:g}-quantiles of {columns} column(s) "
        f"in [{PRIVATE_RANGE[0]:g}, {PRIVATE_RANGE[1]:g}] ({PRIVATE_GRID + 1}-point log grid, epsilon={eps_bounds:.4g} "
        "in all); "
    )
    return epsilon, [Exponential(half)] * (2 * columns), bounds, note


def _ssp(epsilon, delta, rows: PublicRows, scaling: Scaling, adaptive: bool):
    """The calibration of :func:`dpstats.linear_model._ssp.fit_ssp` (its own, from the same public numbers):
    (noises, event)."""
    plan = ssp_calibration(epsilon, delta, scaling.width, rows.m, rows.rows_bound, adaptive, scaling.magnitude)
    return ([plan.gram] if plan.eigenvalue is None else [plan.eigenvalue, plan.gram]), plan.event


def linear_regression_preview(
    epsilon,
    delta,
    *,
    n=None,
    units=None,
    max_rows=None,
    d=None,
    method="adassp",
    bounds_X=None,
    bounds_y=None,
    fit_intercept=True,
    subsets=None,
    matchings=None,
    bounds_share=BOUNDS_SHARE,
    ci=None,
) -> Preview:
    """dps.linear_regression, each method (module docstring). With ``ci`` (SSP and AdaSSP, public bounds, rows):
    the same releases and statements — the interval is a bootstrap of the released Gram matrix — and the note says
    so; refused where the call refuses it, with the call's message."""
    d, rows = _features(d), public_rows(n, units, max_rows)
    check_ci(ci, method, None if rows.max_rows is None else "units", bounds_X, bounds_y)
    if method == "tukey":
        return _tukey(epsilon, delta, rows, d, fit_intercept, subsets, bounds_X, bounds_y)
    if method == "theil_sen":
        if rows.max_rows is not None:
            raise ParameterError(
                "method='theil_sen' cannot take a privacy unit (the number of pairs would not be public)"
            )
        if d != 1:
            raise ParameterError(f"method='theil_sen' fits one feature; got d={d} (use 'adassp' for more)")
        if not fit_intercept:
            raise ParameterError("method='theil_sen' always fits an intercept; fit_intercept=False is not available")
    rest, events, (lower, upper), note = _private_bounds(epsilon, d, bounds_X, bounds_y, bounds_share)
    if method == "theil_sen":
        k = check_matchings(matchings, rows.count)
        pairs = k * (rows.count // 2)
        half = split_epsilon(rest, 2)
        stated = rank_statement(half, k, GRID_SIZE + 1, "ranks (pairs' predictions)")
        note += (
            f"DPTheilSen with {k} matchings ({pairs} pairs): each of the two medians' rank within "
            f"±{stated.half_width:.4g} of the middle ({stated.half_width / pairs:.3g} of the pairs) beyond the best "
            f"point of a {GRID_SIZE + 1}-point grid of bounds_y, with probability 0.95"
        )
        events = [*events, Exponential(half), Exponential(half)]
        return made("linear_regression", events, [stated], note=note, relation=rows.relation)
    scaling = Scaling(lower, upper, bool(fit_intercept), False)
    noises, event = _ssp(rest, delta, rows, scaling, method == "adassp")
    statements = [n_.statement("Gram units of the scaled rows (|z| <= 1)") for n_ in noises]
    what = "AdaSSP (its smallest eigenvalue, then the augmented Gram matrix)" if method == "adassp" else "SSP"
    note += f"{rows.note()}{what}: noisy Gram matrix of the {scaling.width} scaled columns (|z| <= 1)"
    if ci is not None:
        note += f"; {CI_NOTE}"
    return made("linear_regression", [*events, event], statements, note=note, relation=rows.relation)


def _tukey(epsilon, delta, rows: PublicRows, d, intercept, subsets, bounds_X, bounds_y) -> Preview:
    if bounds_X is not None or bounds_y is not None:
        raise ParameterError("method='tukey' needs no bounds (its models need none) and takes no bounds_X or bounds_y")
    width = d + (1 if intercept else 0)
    try:  # n (or N) and m are public here: the release's data check is a parameter check of its preview
        m = check_subsets(subsets, rows.count, width, rows.max_rows is not None, epsilon, delta)
    except DataValidationError as err:
        raise ParameterError(str(err)) from None
    cal = tukey_calibration(epsilon, delta)  # the release's constants (rounded so as never to overstate)
    ptr, threshold = cal.ptr, cal.threshold
    stated = ptr.statement("depth units (distance to unsafety)")
    depth = (m // 2) // 2
    note = (
        f"{rows.note()}TukeyEM (Amin et al. 2023) on {m} OLS models: propose-test-release (threshold {threshold:.4g}) "
        f"passes with probability >= 0.95 when the distance to unsafety is >= {threshold + stated.half_width:.4g}; a "
        f"released model always has approximate Tukey depth >= {depth} among the {m} models (each coordinate between "
        f"their {depth}-th smallest and largest); its sampler is floating point: UNPROVEN (an Accountant refuses it "
        "unless allow_unproven=True)"
    )
    return made(
        "linear_regression", [ApproxDP(epsilon, delta)], [stated], note=note, relation=rows.relation, proven=False
    )
