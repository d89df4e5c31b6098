"""Noise in the user's units: the 95 % error intervals the ledger states cover the release's error 95 % of the time
(simulated, fixed seeds, binomial thresholds), and planning from accuracy — through each release's preview — gives
the noise the release adds."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import binom

import dpstats as dps
from dpstats.exceptions import ParameterError
from dpstats.noise.accuracy import epsilon_for_error, error_for_epsilon
from dpstats.noise.intervals import grid_half_width

#: The stated interval holds with probability in [0.95, 0.95 + one atom of the integer noise] (its half-width is
#: a whole number of grid steps, plus the rounding to the grid); one atom is below 1e-3 for every noise here.
CONFIDENCE, ATOM = 0.95, 1e-3
ALPHA = 1e-3  # two-sided: a correct interval fails the test once in a thousand seeds


def _grid(shape, seed, scale=1024):
    """Data on a 1/scale grid, so that the exact statistics are exact in floating point."""
    return np.random.default_rng(seed).integers(0, scale + 1, shape) / scale


def _covered(mechanism_call, exact, releases):
    """(coordinates inside the stated interval, coordinates), over ``releases`` seeds."""
    inside = total = 0
    for seed in range(releases):
        acc = dps.Accountant(1e6, 0.5)
        release = np.ravel(mechanism_call(seed, acc))
        (statement,) = acc.ledger[-1].noise
        assert statement.confidence == CONFIDENCE
        inside += int(np.count_nonzero(np.abs(release - exact) <= statement.half_width))
        total += release.size
    return inside, total


def _mean_case(delta):
    x = _grid((500, 400), 0)
    return (lambda seed, acc: dps.mean(x, 0.5, delta, bounds=(0, 1), axis=0, rng=seed, accountant=acc)), x.mean(axis=0)


def _variance_case():
    x = _grid((500, 400), 1)
    return (lambda seed, acc: dps.variance(x, 1.0, bounds=(0, 1), axis=0, rng=seed, accountant=acc)), x.var(axis=0)


def _histogram_case():
    x = _grid(2000, 2, scale=10**6)
    exact = np.histogram(x, bins=1000, range=(0, 1))[0]
    return (lambda seed, acc: dps.histogram(x, 0.3, bins=1000, range=(0, 1), rng=seed, accountant=acc)[0]), exact


def _pca_case():
    X = (_grid((300, 30), 3) - 0.5) / 16  # rows of norm < 1; X.T @ X exact in floating point
    upper = np.triu_indices(30)
    exact = (X.T @ X)[upper]
    return (lambda seed, acc: dps.pca_ag(X, 1.0, 1e-6, rng=seed, accountant=acc)[upper]), exact


@pytest.mark.parametrize(
    "case,releases",
    [
        (lambda: _mean_case(0.0), 50),  # discrete Laplace, 20,000 coordinates
        (lambda: _mean_case(1e-6), 10),  # discrete Gaussian, 4,000 coordinates
        (_variance_case, 20),  # discrete Laplace, squared data units
        (_histogram_case, 20),  # discrete Laplace, counts
        (_pca_case, 43),  # discrete Gaussian, Gram units, 19,995 coordinates
    ],
    ids=["mean-laplace", "mean-gaussian", "variance", "histogram", "pca_ag"],
)
def test_stated_95_percent_intervals_cover_the_error_95_percent_of_the_time(case, releases):
    call, exact = case()
    inside, total = _covered(call, exact, releases)
    low = binom.ppf(ALPHA / 2, total, CONFIDENCE)
    high = binom.isf(ALPHA / 2, total, CONFIDENCE + ATOM)
    assert low <= inside <= high, f"{inside} of {total} inside: coverage {inside / total:.4f}"


def test_a_wrong_interval_would_fail_the_coverage_test():
    """The test above can fail: 1.96 σ replaced by 1.9 σ (coverage 94.3 %) falls outside its thresholds."""
    total = 20000
    inside = round(total * (2 * 0.5 * math.erf(1.9 / math.sqrt(2))))
    assert inside < binom.ppf(ALPHA / 2, total, CONFIDENCE)


def test_discrete_laplace_half_width_is_the_exact_quantile():
    """Against the distribution summed term by term: m is the smallest with P(|Z| > m) <= 5 %."""
    for t in (0.7, 3.0, 25.5):
        p = math.exp(-1 / t)
        m = round(grid_half_width("laplace", Fraction(t), Fraction(1), 0.95) - 0.5)
        masses = [(1 - p) / (1 + p) * p ** abs(z) for z in range(-m, m + 1)]
        inside = sum(masses)
        assert inside >= 0.95 and inside - 2 * masses[-1] < 0.95


def test_discrete_gaussian_half_width_is_tight_to_one_step():
    for variance in (16, 400, 10_000):
        weights = np.exp(-(np.arange(-20 * 100, 20 * 100 + 1) ** 2) / (2 * variance))
        weights /= weights.sum()
        centre = weights.size // 2
        m = round(grid_half_width("gaussian", Fraction(variance), Fraction(1), 0.95) - 0.5)
        inside = weights[centre - m : centre + m + 1].sum()
        smaller = weights[centre - m + 2 : centre + m - 1].sum()
        assert inside >= 0.95 and smaller < 0.95


# ----------------------------------------------------------------------------- planning from accuracy


def _mean(e, d, a):
    return dps.mean(np.full(1000, 40.0), e, d, bounds=(0, 100), rng=0, accountant=a)


def _vector_mean(e, d, a):
    return dps.mean(np.zeros((300, 2)), e, d, bounds=([0, 0], [1, 2]), axis=0, rng=0, accountant=a)


def _variance(e, d, a):
    return dps.variance(np.zeros(250), e, d, bounds=(-5, 5), rng=0, accountant=a)


def _histogram(e, d, a):
    return dps.histogram(np.zeros(50), e, d, bins=7, range=(0, 1), rng=0, accountant=a)


def _pca(e, d, a):
    return dps.pca_ag(np.zeros((40, 6)), e, d, rng=0, accountant=a)


def _person_mean(e, d, a):
    ids = np.repeat(np.arange(400), 5)
    return dps.mean(np.full(2000, 40.0), e, d, bounds=(0, 100), privacy_unit=ids, max_rows=5, rng=0, accountant=a)


PLANNED = [
    ("mean", dps.mean, dict(bounds=(0, 100), n=1000), _mean),
    ("mean", dps.mean, dict(bounds=([0, 0], [1, 2]), n=300), _vector_mean),
    ("variance", dps.variance, dict(bounds=(-5, 5), n=250), _variance),
    ("histogram", dps.histogram, dict(bins=7), _histogram),
    ("mean", dps.mean, dict(bounds=(0, 100), units=400, max_rows=5), _person_mean),
]


@pytest.mark.parametrize(
    "release,kwargs,call,delta",
    [(*case[1:], delta) for case in PLANNED for delta in (0.0, 1e-6)] + [(dps.pca_ag, dict(d=6, n=40), _pca, 1e-6)],
)
def test_the_plan_states_the_noise_the_mechanism_adds(release, kwargs, call, delta):
    """Planned through the release's preview: the ledger's statement, to the relative 2^-12 of the fixed-point
    bounds (a person-level mean included: its error in the mean's units)."""
    plan = error_for_epsilon(release, 0.7, delta, **kwargs)
    acc = dps.Accountant(100.0, 1e-3)
    call(0.7, delta, acc)
    (stated,) = acc.ledger[-1].noise
    assert plan.noise.units == stated.units and plan.noise.distribution == stated.distribution
    assert plan.noise.scale == pytest.approx(stated.scale, rel=2.0**-12)
    assert plan.half_width == pytest.approx(stated.half_width, rel=2.0**-12)
    assert plan.preview.events and plan.mechanism == acc.ledger[-1].mechanism


@pytest.mark.parametrize(
    "release,kwargs,error",
    [
        (dps.mean, dict(bounds=(0, 100), n=2000), 0.5),
        (dps.mean, dict(bounds=(0, 100), units=400, max_rows=5), 5.0),
        (dps.quantile, dict(q=0.5, bounds=(0, 100), n=1000), 20.0),  # ranks
        (dps.pca_ppca, dict(k=2, d=6, n=2000), 60.0),  # captured variance, XᵀX units
        (dps.pca_ppm, dict(k=2, d=6, n=2000), 40.0),
        (dps.logistic_regression, dict(n=1000, d=3, lam=0.01, method="output"), 0.5),
        (dps.count, dict(by=True, max_rows=3, max_groups=2, statement="rows"), 20.0),
    ],
    ids=["mean", "mean by person", "quantile", "pca_ppca", "pca_ppm", "logistic output", "count by key"],
)
def test_epsilon_for_error_is_the_smallest_epsilon_that_reaches_the_error(release, kwargs, error):
    delta = 1e-6 if release in (dps.count, dps.pca_ppm) else None
    plan = epsilon_for_error(release, error, delta, **kwargs)
    assert plan.half_width <= error
    less = error_for_epsilon(release, plan.epsilon * (1 - 1e-6), delta, **kwargs)
    assert less.half_width > error
    again = dps.preview(release, plan.epsilon, delta, **{k: v for k, v in kwargs.items() if k != "statement"})
    assert plan.noise in again.statements and plan.preview == again


def test_the_planned_epsilon_gives_the_error_asked_for():
    plan = epsilon_for_error(dps.mean, 0.5, bounds=(0, 100), n=2000)
    acc = dps.Accountant(10.0, 1e-5)
    dps.mean(np.full(2000, 30.0), plan.epsilon, bounds=(0, 100), rng=0, accountant=acc)
    assert acc.ledger[0].noise[0].half_width <= 0.5 * (1 + 2.0**-12)
    assert acc.ledger[0].noise[0].scale == pytest.approx(plan.noise.scale, rel=2.0**-12)


def test_a_call_with_several_statements_plans_the_one_chosen():
    public = dict(n=1000, d=2, bounds_X=(0, 1), bounds_y=(0, 1))
    with pytest.raises(ParameterError, match="states 2 errors; choose one with statement="):
        error_for_epsilon(dps.linear_regression, 1.0, **public)
    eigenvalue, gram = (error_for_epsilon(dps.linear_regression, 1.0, statement=i, **public) for i in (0, 1))
    assert (eigenvalue.noise, gram.noise) == dps.preview(dps.linear_regression, 1.0, **public).statements
    ranks = error_for_epsilon(dps.amin_eigen, 1.0, d=4, n=1000, rank=2, statement="XᵀX units")
    assert ranks.noise.distribution == "exponential mechanism"
    with pytest.raises(ParameterError, match="statement must be"):
        error_for_epsilon(dps.amin_eigen, 1.0, d=4, n=1000, statement=5)


def test_pca_plan_never_understates_the_sensitivity():
    from dpstats._kernels.gram import norm_bound_squared
    from dpstats.noise.accuracy import _PCA_NORM_BOUND

    for d in (1, 10, 1000, 10**5, 10**6 - 1):
        assert math.sqrt(2.0) * _PCA_NORM_BOUND >= math.sqrt(2.0) * norm_bound_squared(d)


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: error_for_epsilon(dps.mean, 1.0, n=10), "bounds are needed"),
        (lambda: error_for_epsilon(dps.mean, 0.0, bounds=(0, 1), n=10), "epsilon"),
        (lambda: error_for_epsilon(dps.mean, 1.0, 1.0, bounds=(0, 1), n=10), "delta"),
        (lambda: error_for_epsilon(dps.mean, 1.0, bounds=(1, 0), n=10), "bounds"),
        (lambda: error_for_epsilon(dps.variance, 1.0, bounds=(0, 1), n=1), "n must be >= 2"),
        (lambda: error_for_epsilon(dps.pca_ag, 1.0, 0.0, d=5, n=10), "delta"),
        (lambda: error_for_epsilon(dps.mean, 1.0, bounds=(0, 1), n=10, confidence=0.9), "95 %"),
        (lambda: error_for_epsilon(dps.count, 1.0, n=10), "states no error"),
        (lambda: error_for_epsilon(len, 1.0), "dpstats release"),
        (lambda: epsilon_for_error(dps.histogram, float("nan"), bins=3), "error must be a finite number > 0"),
        (lambda: epsilon_for_error(dps.histogram, 1e-9, bins=3), "cannot be reached"),
        (lambda: epsilon_for_error(dps.pca_ppca, 1e-6, k=1, d=3, n=10**6), "refused there"),
    ],
)
def test_bad_plans_name_the_parameter(call, match):
    with pytest.raises(ParameterError, match=match):
        call()


# ----------------------------------------------------------------------------- the old spelling, for one release


@pytest.mark.parametrize(
    "name,release,kwargs",
    [
        ("mean", dps.mean, dict(bounds=(0, 100), n=1000)),
        ("variance", dps.variance, dict(bounds=(-5, 5), n=250)),
        ("histogram", dps.histogram, dict(bins=7)),
    ],
)
def test_the_old_names_still_plan_with_a_deprecation_warning(name, release, kwargs):
    for delta in (0.0, 1e-6):
        with pytest.warns(DeprecationWarning, match="pass the release itself"):
            old = error_for_epsilon(name, 0.7, delta, **{k: v for k, v in kwargs.items() if k != "bins"})
        new = error_for_epsilon(release, 0.7, delta, **kwargs)  # the old plan rounds counts too: 2.5e-4 apart
        assert old.noise.scale == pytest.approx(new.noise.scale, rel=2.5e-4)
        assert old.half_width == pytest.approx(new.half_width, rel=2.5e-4)
    with pytest.warns(DeprecationWarning):
        old = epsilon_for_error(name, 1.0, **{k: v for k, v in kwargs.items() if k != "bins"})
    assert old.epsilon == pytest.approx(epsilon_for_error(release, 1.0, **kwargs).epsilon, rel=2.5e-4)


def test_the_old_pca_and_custom_spellings_still_work_with_a_warning():
    with pytest.warns(DeprecationWarning):
        old = error_for_epsilon("pca_ag", 0.7, 1e-6, d=6)
    assert old.half_width == pytest.approx(error_for_epsilon(dps.pca_ag, 0.7, d=6, n=40).half_width, rel=2.5e-4)
    with pytest.warns(DeprecationWarning, match="make_noise"):
        plan = epsilon_for_error("custom", 3.0, 1e-6, sensitivity=2.0, coordinates=3, units="euros")
        again = error_for_epsilon("custom", plan.epsilon, 1e-6, sensitivity=2.0, coordinates=3, units="euros")
    assert again == plan and plan.noise.units == "euros" and plan.half_width <= 3.0
    with pytest.warns(DeprecationWarning, match="confidence|pass the release"):
        ninety = epsilon_for_error("mean", 0.5, bounds=(0, 100), n=2000, confidence=0.9)
    assert ninety.noise.confidence == 0.9 and ninety.half_width <= 0.5
    with pytest.warns(DeprecationWarning, match="MECHANISMS"):
        from dpstats.noise.accuracy import MECHANISMS
    assert "mean" in MECHANISMS


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: error_for_epsilon("mean", 1.0, n=10), r"missing \['bounds'\]"),
        (lambda: error_for_epsilon("histogram", 1.0, n=10), r"\['n'\] do not apply"),
        (lambda: error_for_epsilon("pca_ag", 1.0, d=5), "delta > 0"),
        (lambda: error_for_epsilon("custom", 1.0, sensitivity=-1.0), "sensitivity must be a finite number > 0"),
        (lambda: error_for_epsilon("histogram", 1.0, confidence=1.0), "confidence"),
        (lambda: error_for_epsilon("median", 1.0), "dpstats release"),
    ],
)
def test_the_old_spelling_s_bad_plans_name_the_parameter(call, match):
    with pytest.raises(ParameterError, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        call()
