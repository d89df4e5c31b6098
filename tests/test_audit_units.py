"""Unit-level audits: neighbours that differ in *all* rows of one unit with many rows.

For every mechanism, the release with ``privacy_unit`` (the heavy unit's rows bounded to ``max_rows``) must stay
below ε on an event that separates the two datasets, and the same mechanism called without the unit — the row-level
variant, calibrated as if each row were a person — must be flagged above ε on the same datasets and event: the
heavy unit's ``HEAVY`` rows move at once, so its true privacy loss is about ``HEAVY`` times ε. The events are
thresholds of the output halfway between its two noiseless values (the most revealing shape for these
mechanisms); the thresholds are derived from the data, never tuned on the audit's outcome.
"""

from __future__ import annotations

import numpy as np
import pytest

import dpstats as dps
from dpstats.audit import audit

HEAVY = 16  # rows of the unit that changes; max_rows keeps all of them
EPS = 1.0
DELTA = 1e-5
IDS = np.r_[np.zeros(HEAVY, dtype=np.int64), np.arange(1, 4)]  # the heavy unit 0 and three units of one row


def _flagged_and_clean(release, data, neighbour, event, *, n_runs, seed, delta=0.0):
    """(ε lower bound with the unit, ε lower bound of the row-level variant) on the same neighbours and event."""
    results = []
    for units in (IDS, None):
        results.append(
            audit(
                lambda ds, r, units=units: release(ds, units, r),
                data,
                neighbour,
                event,
                n_runs=n_runs,
                delta=delta,
                alpha=0.05,
                rng=seed,
            ).epsilon_lower
        )
    return results


def _unit(units):
    return {} if units is None else {"privacy_unit": units, "max_rows": HEAVY}


def _values(heavy: float, others: float = 0.5) -> np.ndarray:
    return np.r_[np.full(HEAVY, heavy), [others] * 3]


@pytest.mark.parametrize(
    "name,release,event,runs",
    [
        # halfway between the noiseless means 1.5/19 and 17.5/19
        ("mean", lambda x, u, r: dps.mean(x, EPS, bounds=(0, 1), rng=r, **_unit(u)), lambda out: out > 0.5, 6000),
        (
            "variance",
            lambda x, u, r: dps.variance(x, EPS, bounds=(0, 1), rng=r, **_unit(u)),
            lambda out: out > np.var(_values(1.0, 0.0)) / 2,  # halfway between it and the variance 0 of zeros
            6000,
        ),
        # halfway between the sums 1.5 and 17.5
        ("sum", lambda x, u, r: dps.sum(x, EPS, bounds=(0, 1), rng=r, **_unit(u)), lambda out: out > 9.5, 6000),
        (
            "histogram",
            lambda x, u, r: dps.histogram(x, EPS, bins=2, range=(0, 1), rng=r, **_unit(u))[0],
            lambda out: out[1] - out[0] > 3.0,  # halfway between 3 − 16 and 19 − 0
            6000,
        ),
        (
            "quantile",
            lambda x, u, r: dps.quantile(x, 0.5, EPS, bounds=(0, 1), grid_size=64, rng=r, **_unit(u)),
            lambda out: out > 0.75,  # the medians are 0 and 1
            6000,
        ),
    ],
)
def test_unit_level_audit_of_the_statistics(name, release, event, runs):
    others = 0.0 if name == "variance" else 0.5  # for the variance: all zeros versus the heavy unit's ones
    clean, row_level = _flagged_and_clean(
        release, _values(0.0, others), _values(1.0, others), event, n_runs=runs, seed=7
    )
    assert clean <= EPS < row_level, (name, clean, row_level)


def test_unit_level_audit_of_count():
    """The heavy unit's rows disappear but one (a unit keeps at least one row): the count moves by HEAVY − 1."""
    few = np.r_[np.zeros(1), [0.5, 0.5, 0.5]]
    ids_few = np.r_[0, np.arange(1, 4)]

    def release(x, units, r):
        if units is None:  # the row-level variant: n public, released exactly
            return dps.count(x, EPS, rng=r)
        return dps.count(x, EPS, privacy_unit=IDS if len(x) == len(IDS) else ids_few, max_rows=HEAVY, rng=r)

    event = lambda out: out > (len(IDS) + len(ids_few)) / 2  # noqa: E731
    clean, row_level = _flagged_and_clean(release, _values(0.0), few, event, n_runs=6000, seed=8)
    assert clean <= EPS < row_level


def _rows(heavy_row) -> np.ndarray:
    """The heavy unit's rows all equal to ``heavy_row``, the others 0.5·e1."""
    X = np.zeros((len(IDS), 2))
    X[:, 0] = 0.5
    X[:HEAVY] = heavy_row
    return X


E1, E2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])


@pytest.mark.parametrize(
    "name,release,event,runs,delta",
    [
        (
            "pca_ag",
            lambda X, u, r: dps.pca_ag(X, EPS, DELTA, rng=r, **_unit(u)),
            lambda A: A[0, 0] - A[1, 1] > 0.75,  # halfway between HEAVY + 0.75 and 0.75 − HEAVY
            4000,
            DELTA,
        ),
        (
            "pca_ppm",
            lambda X, u, r: dps.pca_ppm(X, 1, EPS, DELTA, n_iter=2, rng=r, **_unit(u)),
            lambda V: abs(V[0, 0]) > abs(V[1, 0]),
            4000,
            DELTA,
        ),
        (
            "covariance_dong separate",
            lambda X, u, r: dps.covariance_dong(X, EPS, DELTA, algorithm="separate", rng=r, **_unit(u)),
            lambda A: A[0, 0] - A[1, 1] > 0.75,  # halfway between HEAVY + 0.75 and 0.75 − HEAVY
            1000,
            DELTA,
        ),
        (
            "covariance_dong adaptive",
            lambda X, u, r: dps.covariance_dong(X, EPS, DELTA, rng=r, **_unit(u)),
            lambda A: A[0, 0] - A[1, 1] > 0.75,
            600,
            DELTA,
        ),
        (
            "pca_ppca",
            lambda X, u, r: dps.pca_ppca(X, 1, EPS, rng=r, **_unit(u)),
            lambda V: float(V[0] @ V[0] - V[1] @ V[1]) > 0.8,
            2000,
            0.0,
        ),
        (
            "covariance amin",
            lambda X, u, r: dps.covariance(X, EPS, rng=r, **_unit(u)),
            lambda C: C[0, 0] > C[1, 1],  # the heavy unit's 16 rows lie along e1 or along e2
            2000,
            0.0,
        ),
    ],
)
def test_unit_level_audit_of_pca(name, release, event, runs, delta):
    clean, row_level = _flagged_and_clean(release, _rows(E1), _rows(E2), event, n_runs=runs, seed=9, delta=delta)
    assert clean <= EPS < row_level, (name, clean, row_level)


def test_unit_level_audit_of_cca():
    Z, Zp = np.zeros((len(IDS), 4)), np.zeros((len(IDS), 4))
    Z[:, 1] = Zp[:, 1] = 0.5
    Z[:HEAVY, 0], Zp[:HEAVY, 2] = 1.0, 1.0  # the heavy unit's rows: e1 (in X) versus e3 (in Y)
    Z[:HEAVY, 1] = Zp[:HEAVY, 1] = 0.0

    def release(data, units, r):
        return dps.cca(data[:, :2], data[:, 2:], 1, EPS, DELTA, rng=r, **_unit(units)).C_hat

    clean, row_level = _flagged_and_clean(
        release, Z, Zp, lambda C: C[0, 0] - C[2, 2] > 0.0, n_runs=3000, seed=10, delta=DELTA
    )
    assert clean <= EPS < row_level


@pytest.mark.parametrize("function", [dps.svm, dps.logistic_regression])
def test_unit_level_audit_of_erm(function):
    X, Xp = _rows(0.6 * E1), _rows(-0.6 * E1)
    y = np.r_[np.ones(HEAVY), [-1.0, 1.0, -1.0]]

    def release(data, units, r):
        return function(data, y, EPS, lam=1.0, method="output", rng=r, **_unit(units))

    noiseless = [function(d, y, 1e6, lam=1.0, method="output", rng=0)[0] for d in (X, Xp)]
    clean, row_level = _flagged_and_clean(release, X, Xp, lambda f: f[0] > sum(noiseless) / 2, n_runs=1500, seed=11)
    assert clean <= EPS < row_level
