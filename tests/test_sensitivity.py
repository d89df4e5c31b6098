"""The sensitivity checker (dpstats.audit.check_sensitivity) over every public mechanism and estimator.

Each case runs a mechanism on worst-case neighbours with the noise frozen (values at the bounds, rows of norm 1,
labels flipped, one unit's rows all changed), on NumPy and on the Dask path, and asserts that the control flow is
the same and that every declared statistic moved by no more than its declared sensitivity. Then, for every
mechanism family, a deliberately mis-declared variant (its sensitivity halved where it is computed) must be
flagged: that is what shows the neighbours are sharp enough for the check to fail.
"""

from __future__ import annotations

import math
import warnings

import dask.array as da
import numpy as np
import pytest
from _registry import examples, mechanism, misdeclared

import dpstats as dps
from dpstats.audit import (
    check_sensitivity,
    neighbours_at_bounds,
    neighbours_on_the_sphere,
    neighbours_with_labels,
)
from dpstats.estimators import DPCCA, DPPCA, DPLinearSVC, DPLogisticRegression

EPS, DELTA = 1.0, 1e-6
BOUNDED = neighbours_at_bounds(0.0, 1.0, n=4)
SPHERE = neighbours_on_the_sphere(6, 3)
LABELLED = neighbours_with_labels(8, 3)


def _cases() -> dict:
    """label -> (family, mechanism(data, rng), neighbour pairs): every declared example with worst-case neighbours
    (:mod:`tests._registry`), and the estimators' (declared here until the estimators have declarations)."""
    found = {
        label: (declaration.family, mechanism(declaration, example), example.neighbours())
        for label, (declaration, example) in examples("sensitivity").items()
    }
    plane = neighbours_on_the_sphere(6, 2)
    found.update(
        {
            "DPPCA": (
                "decomposition",
                lambda X, r: DPPCA(2, epsilon=EPS, random_state=r).fit(*X).components_,
                _one(SPHERE),
            ),
            "DPPCA ppm": (
                "decomposition",
                lambda X, r: DPPCA(2, mechanism="ppm", epsilon=EPS, random_state=r).fit(*X).components_,
                _one(plane),
            ),
            "DPCCA": (
                "decomposition",
                lambda Z, r: DPCCA(1, epsilon=EPS, random_state=r).fit(Z[0][:, :2], Z[0][:, 2:]).x_weights_,
                _one(neighbours_on_the_sphere(6, 4)),
            ),
            "DPLogisticRegression": (
                "linear_model",
                lambda data, r: (
                    DPLogisticRegression(classes=[-1, 1], lam=1.0, fit_intercept=False, random_state=r).fit(*data).coef_
                ),
                LABELLED,
            ),
            "DPLinearSVC output": (
                "linear_model",
                lambda data, r: (
                    DPLinearSVC(classes=[-1, 1], lam=1.0, method="output", fit_intercept=False, random_state=r)
                    .fit(*data)
                    .coef_
                ),
                LABELLED,
            ),
        }
    )
    return found


def _one(pairs):
    return [((a,), (b,)) for a, b in pairs]


#: name -> (family, mechanism(data, rng), neighbour pairs)
CASES = _cases()


def _lazy(data):
    """The same data as dask arrays (2 chunks of rows)."""
    if isinstance(data, tuple):
        return tuple(_lazy(part) for part in data)
    return da.from_array(np.asarray(data), chunks=max(1, len(data) // 2))


#: The declared examples that also run on Dask.
DASK = {f"dask {label}": CASES[label] for label, (_, example) in examples("sensitivity").items() if example.dask}

#: Random steps whose amount of randomness depends on the data (a running time that does) on these neighbours: none.
#: (PPCA's vector-Bingham rejection sampler accepts at a rate that depends on A, but draws its proposals in batches
#: of 32: on these small problems one batch always suffices.)
KNOWN_TIMING: set[str] = set()


def _reports(mechanism, pairs, lazy=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [
            check_sensitivity(mechanism, _lazy(a) if lazy else a, _lazy(b) if lazy else b, seed=seed)
            for seed, (a, b) in enumerate(pairs)
        ]


@pytest.mark.parametrize("name", [*CASES, *DASK])
def test_every_mechanism_keeps_its_declared_sensitivities_on_worst_case_neighbours(name):
    lazy = name.startswith("dask ")
    family, mechanism, pairs = DASK[name] if lazy else CASES[name]
    reports = _reports(mechanism, pairs, lazy)
    for report in reports:
        assert report.ok, report.violations
        assert report.checks and report.charges >= 1 and report.draws >= 1
    timing = [t for report in reports for t in report.timing]
    assert bool(timing) == (name in KNOWN_TIMING), timing


# ----------------------------------------------------------------------------- mis-declared variants are flagged


#: every declared mis-declared variant: (declaration, example, the patch that halves its declared sensitivity)
MISDECLARED = misdeclared()


@pytest.mark.parametrize("variant", MISDECLARED)
def test_a_misdeclared_sensitivity_is_flagged_in_every_family(monkeypatch, variant):
    _, example, patch = MISDECLARED[variant]
    _, mechanism, pairs = CASES[example.label]
    assert all(report.ok for report in _reports(mechanism, pairs))
    patch(monkeypatch)
    flagged = [v for report in _reports(mechanism, pairs) for v in report.violations]
    assert any("more than its declared sensitivity" in v for v in flagged), flagged


# ----------------------------------------------------------------------------- the checker itself


def test_a_calibration_read_from_the_data_is_flagged_as_control_flow():
    """A mean whose bounds are the data's own minimum and maximum (the original dp-stats' histogram edges)."""

    def leaky(x, rng):
        return dps.mean(x, EPS, bounds=(0, max(x)), rng=rng)

    report = check_sensitivity(leaky, [0.0, 0.5, 0.5], [1.0, 0.5, 0.5])  # bounds (0, 0.5) against (0, 1)
    # the grid, the noise in data units and the charge's noise statement all follow the data: flagged at once
    assert not report.ok and any("differs between the datasets" in v for v in report.violations), report.violations


def test_a_refusal_that_depends_on_the_data_is_flagged():
    def refuses_large(x, rng):
        if max(x) > 0.9:
            raise dps.ParameterError("refused")
        return dps.mean(x, EPS, bounds=(0, 1), rng=rng)

    report = check_sensitivity(refuses_large, [0.0, 0.0], [0.0, 1.0])
    assert not report.ok and any("only the neighbour raised" in v for v in report.violations)


def test_a_data_dependent_rejection_loop_is_reported_as_timing():
    """A sampler that draws until a data-dependent acceptance: the draws before the release differ."""
    from dpstats.audit import draw, observe

    def rejection(x, rng):
        observe("value", float(np.mean(x)), sensitivity=1.0, norm="linf", exact=False)

        def sample():
            while rng.random() > np.mean(x) + 0.1:
                pass
            return 0.0

        return draw("rejection sampler", rng, sample)

    report = check_sensitivity(rejection, [0.0, 0.0], [1.0, 1.0], seed=0)  # first uniform 0.64: rejected on D only
    assert report.ok and report.timing


def test_the_instrumentation_is_off_outside_the_checker_and_changes_no_release():
    from dpstats import _trace

    assert _trace.active() is None
    plain = dps.mean(BOUNDED[0][0], EPS, bounds=(0, 1), rng=7)
    checked = []
    check_sensitivity(lambda x, r: checked.append(dps.mean(x, EPS, bounds=(0, 1), rng=7)), BOUNDED[0][0], BOUNDED[0][0])
    assert checked[0] == plain and _trace.active() is None  # the first run is the plain release


def test_a_private_norm_bound_and_the_pca_after_it_are_checked_as_two_releases():
    """pca(norm_bound="private"): the bound (a private quantile of the row norms) and the PCA are charged apart and
    each traces its own statistic; on its own worst case each moves by its whole declared sensitivity, or close."""
    _, mechanism, pairs = CASES["pca private norm bound"]
    reports = _reports(mechanism, pairs)
    for report in reports:
        assert report.ok and report.charges == 2 and report.draws == 2, report
        assert [c.name for c in report.checks][0] == "quantile scores"
        assert report.checks[1].name.startswith("statistic on the grid")
    assert reports[1].checks[0].ratio == 1.0  # the largest norm made the smallest: every score moves by 1
    assert max(r.checks[1].ratio for r in reports) > 0.5


def test_dong_traces_its_trace_radius_and_covariance_steps():
    """AdaptiveCov: the private trace, the sparse vector queries of the radius step and the covariance release are
    each declared; a row of norm 1 replaced by the zero row moves the trace by R² and the queries by nearly their
    sensitivity 2^12."""
    _, mechanism, pairs = CASES["covariance dong"]
    report = _reports(mechanism, pairs)[1]
    names = [c.name for c in report.checks]
    assert report.ok and len(names) == 3 and names[1].startswith("sparse vector queries"), names
    assert report.checks[0].ratio > 0.99 and report.checks[1].ratio > 0.7, report.checks


def test_report_tightness_shows_the_neighbours_attain_the_bound():
    # the mean of 4 records in [0, 1]: one record moved across the whole range attains Δ = 1/4 exactly (plus the
    # grid's rounding slack of one unit in 4097)
    report = check_sensitivity(CASES["mean"][1], *CASES["mean"][2][0])
    assert math.isclose(report.tightness, 4096 / 4097)
