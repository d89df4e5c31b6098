"""dps.preview: the noise and 95 % error of a planned call from its public arguments only, as the release's ledger
entry will state them; Accountant.preview: a whole plan against a budget, spending nothing."""

import numpy as np
import pytest

import dpstats as dps
from dpstats.exceptions import ParameterError

RNG = np.random.default_rng(0)
X = RNG.uniform(0, 100, 1000)
IDS = RNG.integers(0, 300, 1000)
N_UNITS = len(np.unique(IDS))
MATRIX = RNG.uniform(-0.2, 0.2, (200, 6))

#: (release, its call on the data above, the preview's public arguments): row-level and unit-level
CASES = {
    "mean": (dps.mean, lambda **k: dps.mean(X, 0.5, bounds=(0, 100), **k), dict(bounds=(0, 100), n=X.size)),
    "mean gaussian": (
        dps.mean,
        lambda **k: dps.mean(X, 0.5, 1e-6, bounds=(0, 100), **k),
        dict(bounds=(0, 100), n=X.size),
    ),
    "mean by person": (
        dps.mean,
        lambda **k: dps.mean(X, 0.5, bounds=(0, 100), privacy_unit=IDS, max_rows=5, **k),
        dict(bounds=(0, 100), units=N_UNITS, max_rows=5),
    ),
    "variance": (dps.variance, lambda **k: dps.variance(X, 0.5, bounds=(0, 100), **k), dict(bounds=(0, 100), n=X.size)),
    "variance by person": (
        dps.variance,
        lambda **k: dps.variance(X, 1.0, 1e-6, bounds=(0, 100), privacy_unit=IDS, max_rows=3, **k),
        dict(bounds=(0, 100), units=N_UNITS, max_rows=3),
    ),
    "sum by person": (
        dps.sum,
        lambda **k: dps.sum(X, 0.5, bounds=(0, 100), privacy_unit=IDS, max_rows=4, **k),
        dict(bounds=(0, 100), units=N_UNITS, max_rows=4),
    ),
    "count by person": (
        dps.count,
        lambda **k: dps.count(X, 0.5, privacy_unit=IDS, max_rows=4, **k),
        dict(units=N_UNITS, max_rows=4),
    ),
    "histogram": (
        dps.histogram,
        lambda **k: dps.histogram(X, 0.5, bins=7, range=(0, 100), **k),
        dict(bins=7),
    ),
    "pca_ag": (dps.pca_ag, lambda **k: dps.pca_ag(MATRIX, 1.0, 1e-6, **k), dict(d=6)),
}
EPSILON = {"mean by person": 0.5, "variance by person": 1.0, "pca_ag": 1.0}
DELTA = {"mean gaussian": 1e-6, "variance by person": 1e-6, "pca_ag": 1e-6}


@pytest.mark.parametrize("case", CASES)
def test_the_preview_is_what_the_ledger_will_state(case):
    """The noise scale and the 95 % error of the preview are the ledger entry's (to the relative 2^-12 of the
    release's fixed-point grid), computed without the data."""
    release, call, public = CASES[case]
    planned = dps.preview(release, EPSILON.get(case, 0.5), DELTA.get(case), **public)
    acc = dps.Accountant(100.0, 0.5)
    call(rng=0, accountant=acc)
    entry = acc.ledger[-1]
    assert (planned.epsilon, planned.delta) == pytest.approx((entry.epsilon, entry.delta), rel=1e-12)
    assert planned.relation == entry.relation
    assert len(planned.statements) == len(entry.noise) == 1
    stated, previewed = entry.noise[0], planned.statements[0]
    assert previewed.units == stated.units and previewed.distribution == stated.distribution
    assert previewed.scale == pytest.approx(stated.scale, rel=2.0**-12)
    assert previewed.half_width == pytest.approx(stated.half_width, rel=2.0**-12)


def test_a_public_count_previews_as_exact_and_free():
    planned = dps.preview(dps.count, 1.0, n=1000)
    assert planned.statements == () and planned.events == () and "nothing charged" in planned.note
    acc = dps.Accountant(1.0)
    assert acc.preview([planned]).total[0] == 0.0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dps.preview(dps.mean, 0.0, bounds=(0, 1), n=10), "epsilon"),
        (lambda: dps.preview(dps.mean, 1.0, -0.1, bounds=(0, 1), n=10), "delta"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(1, 0), n=10), "bounds"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1)), r"n \(rows\)"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1), n=0), "n must be a whole number"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1), units=10), "max_rows"),
        (lambda: dps.preview(dps.histogram, 1.0), "bins"),
        (lambda: dps.preview(dps.pca_ppca, 1.0, k=2, d=5), "pca_ppca declares no preview"),
        (lambda: dps.preview(len, 1.0), "dpstats release"),
    ],
)
def test_bad_public_arguments_are_errors_naming_them(call, message):
    with pytest.raises(ParameterError, match=message):
        call()


def test_accountant_preview_composes_a_plan_against_the_budget_and_spends_nothing():
    acc = dps.Accountant(1.0, 1e-6)
    dps.mean(X, 0.25, bounds=(0, 100), rng=0, accountant=acc)
    before = (acc.spent, len(acc.ledger))
    plan = [
        dps.preview(dps.mean, 0.25, bounds=(0, 100), n=X.size),
        dps.preview(dps.variance, 0.25, 1e-7, bounds=(0, 100), n=X.size),
    ]
    result = acc.preview(plan)
    assert (acc.spent, len(acc.ledger)) == before  # nothing recorded
    assert result.total == acc.composed_with([e for p in plan for e in p.events])
    assert result.fits
    # the plan is what the accountant then accepts: running it spends what the preview said
    dps.mean(X, 0.25, bounds=(0, 100), rng=1, accountant=acc)
    dps.variance(X, 0.25, 1e-7, bounds=(0, 100), rng=2, accountant=acc)
    assert acc.spent == pytest.approx(result.total, rel=1e-9)
    over = acc.preview([dps.preview(dps.histogram, 0.5, bins=10)])
    assert not over.fits and "does NOT fit" in str(over)
    with pytest.raises(dps.BudgetExceededError):
        dps.histogram(X, 0.5, bins=10, range=(0, 100), rng=3, accountant=acc)
    assert all(len(line) <= 100 for line in str(result).splitlines())


def test_planning_from_accuracy_takes_the_release_itself():
    """noise.accuracy plans any release with a preview (row or unit level), the same as the named mechanisms
    (to the relative 2^-12 of the fixed-point grid)."""
    from dpstats.noise.accuracy import epsilon_for_error, error_for_epsilon

    by_release = epsilon_for_error(dps.mean, 1.0, bounds=(0, 100), n=1000)
    by_name = epsilon_for_error("mean", 1.0, bounds=(0, 100), n=1000)
    assert by_release.epsilon == pytest.approx(by_name.epsilon, rel=2.0**-12) and by_release.half_width <= 1.0
    per_person = epsilon_for_error(dps.mean, 5.0, bounds=(0, 100), units=400, max_rows=5)
    again = dps.preview(dps.mean, per_person.epsilon, bounds=(0, 100), units=400, max_rows=5)
    assert again.half_width == per_person.half_width <= 5.0
    slightly_less = dps.preview(dps.mean, per_person.epsilon * (1 - 1e-6), bounds=(0, 100), units=400, max_rows=5)
    assert slightly_less.half_width > 5.0  # the smallest epsilon that reaches the error
    assert (
        error_for_epsilon(dps.histogram, 0.5, bins=10).half_width == dps.preview(dps.histogram, 0.5, bins=10).half_width
    )
    with pytest.raises(ParameterError, match="95 %"):
        error_for_epsilon(dps.mean, 0.5, bounds=(0, 100), n=1000, confidence=0.9)
    with pytest.raises(ParameterError, match="no single noise"):
        epsilon_for_error(dps.count, 5.0, n=10)
