"""The test cases of the linear-model releases (their test factories, read through :mod:`dpstats.registry`).
Imported only by the tests."""

from __future__ import annotations

import functools
import sys

import numpy as np

from .. import _examples as ex
from .._neighbours import HEAVY, heavy_ids, heavy_rows, neighbours_with_labels
from .._registry import Audit, Cases, Example

EPS = 1.0
UNITS = frozenset({"units"})


def _labelled():
    return neighbours_with_labels(8, 3)


def _first(pairs):
    return lambda: pairs()[0][0]


def _golden():
    return (ex.golden().X, ex.golden().y)


def _lazy_golden():
    import dask.array as da

    return (da.from_array(ex.golden().X, chunks=97), da.from_array(ex.golden().y, chunks=97))


def _streamed():
    return (ex.streamed().X, ex.streamed().y)


def _units():
    return (ex.unit_data().X, ex.unit_data().y, ex.unit_data().ids)


# ----------------------------------------------------------------------------- audits


def _examples():
    """Neighbours differing in one example (its features flipped): the objective-perturbation audits'."""
    X = np.array([[0.6, 0.0], [0.0, 0.8], [-0.5, 0.5], [0.3, -0.7]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    X2 = X.copy()
    X2[0] = [-0.6, 0.0]
    return (X, y), (X2, y.copy())


def _heavy():
    """The heavy unit's HEAVY examples at 0.6·e1 versus −0.6·e1 (label +1), three others, with identifiers."""
    y = np.r_[np.ones(HEAVY), [-1.0, 1.0, -1.0]]
    E1 = np.array([1.0, 0.0])
    return (heavy_rows(0.6 * E1), y, heavy_ids()), (heavy_rows(-0.6 * E1), y, heavy_ids())


def _midpoint_event(name: str, pair, kwargs: dict, epsilon: float, seeds):
    """The event ``f[0] > m``, m halfway between the first weights of (nearly) noiseless fits on the two datasets
    (at ``epsilon``, averaged over ``seeds``): derived from the data, never tuned on the audit's outcome."""

    def event():
        from . import _erm

        release = getattr(_erm, name)
        firsts = [np.mean([release(*data[:2], epsilon, **kwargs, rng=seed)[0] for seed in seeds]) for data in pair()]
        middle = sum(firsts) / 2
        return lambda f: f[0] > middle

    return event


def _audits(name: str) -> list[Example]:
    """The objective-perturbation audit and the unit-level output-perturbation audit of ``name``."""
    objective = {"lam": 1.0, "method": "objective"}
    output = {"lam": 1.0, "method": "output"}
    return [
        Example(
            f"{name} objective audit",
            lambda: _examples()[0],
            {"epsilon": 1.0, **objective},
            audit=Audit(_examples, _midpoint_event(name, _examples, objective, 1e3, range(20)), 1000, (41, 42)),
        ),
        Example(
            f"{name} unit audit",
            lambda: _heavy()[0],
            {"epsilon": 1.0, **output, "max_rows": HEAVY},
            keywords=("privacy_unit",),
            audit=Audit(
                _heavy,
                _midpoint_event(name, _heavy, output, 1e6, [0]),
                1500,
                (11, 11),
                broken={"privacy_unit": None, "max_rows": None},
            ),
        ),
    ]


def _halve_norm_bound(monkeypatch):
    """R = 0.5 where ERM reads the rows' norm bound (R² = 0.25: the declared sensitivities halve or more)."""
    __import__("dpstats.linear_model._erm")
    monkeypatch.setattr(sys.modules["dpstats.linear_model._erm"], "norm_bound", lambda *args: 0.5)


def _battery(**kwargs):
    import numpy as np

    X = np.random.default_rng(2027).uniform(-1, 1, (40, 3)) / 2
    return (((X, np.where(X[:, 0] > 0, 1.0, -1.0)), {"epsilon": 1.0, "lam": 0.1, **kwargs}),)


def svm() -> Cases:
    return Cases(
        examples=(
            Example(
                "svm output",
                _first(_labelled),
                {"epsilon": EPS, "lam": 1.0, "method": "output"},
                neighbours=_labelled,
                dask=True,
            ),
            Example("svm objective", _first(_labelled), {"epsilon": EPS, "lam": 1.0}, neighbours=_labelled, dask=True),
            Example(
                "svm output gamma",
                _first(_labelled),
                {"epsilon": EPS, "lam": 1.0, "method": "output", "noise": "gamma"},
                neighbours=_labelled,
            ),
            Example("svm_objective", _golden, {"epsilon": 1.0, "lam": 0.01}, seed=25),
            Example("svm_output", _golden, {"epsilon": 1.0, "lam": 0.01, "method": "output"}, seed=26),
            Example(
                "svm_units",
                lambda: (*_golden(), ex.golden_units().X),
                {"epsilon": 1.0, "lam": 0.01, "max_rows": 4},
                keywords=("privacy_unit",),
                seed=68,
            ),
            Example("dask_svm", _lazy_golden, {"epsilon": 1.0, "lam": 0.01}, seed=55),
            Example("svm objective streamed", _streamed, {"epsilon": 1.0, "lam": 1e-3}, dask=True),
            # output perturbation takes a fixed number of gradient steps, each one pass (one compute on dask): 40 here
            Example(
                "svm output streamed",
                _streamed,
                {"epsilon": 1.0, "lam": 1e-3, "method": "output", "max_iter": 40},
                dask=True,
            ),
            Example(
                "svm of units",
                _units,
                {"epsilon": 1.0, "lam": 0.01, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            *_audits("svm"),
        ),
        battery=_battery(),
        misdeclared=(("svm output", _halve_norm_bound), ("svm objective", _halve_norm_bound)),
    )


def logistic_regression() -> Cases:
    return Cases(
        examples=(
            Example(
                "logistic output",
                _first(_labelled),
                {"epsilon": EPS, "lam": 1.0, "method": "output"},
                neighbours=_labelled,
            ),
            Example("logistic objective", _first(_labelled), {"epsilon": EPS, "lam": 1.0}, neighbours=_labelled),
            Example("logistic_objective", _golden, {"epsilon": 1.0, "lam": 0.01}, seed=27),
            Example("logistic_output", _golden, {"epsilon": 1.0, "lam": 0.01, "method": "output"}, seed=28),
            Example("logistic objective streamed", _streamed, {"epsilon": 1.0, "lam": 1e-3}, dask=True),
            Example(
                "logistic output streamed",
                _streamed,
                {"epsilon": 1.0, "lam": 1e-3, "method": "output", "max_iter": 40},
                dask=True,
            ),
            Example(
                "logistic_regression of units",
                _units,
                {"epsilon": 1.0, "lam": 0.01, "method": "output", "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            *_audits("logistic_regression"),
        ),
        battery=_battery(),
    )


# ----------------------------------------------------------------------------- linear regression (issue 35)

_UNIT_BOX = {"bounds_X": (0, 1), "bounds_y": (0, 1)}
_GOLDEN_BOUNDS = {"bounds_X": [(0, 1), (0, 10)], "bounds_y": (0, 100)}


def _fit(result):
    """The released coefficients and intercept (as the golden file records them)."""
    return (result.coef, np.float64(result.intercept))


def _model(result):
    return np.append(result.coef, result.intercept)


def _interval(result):
    """An Estimate of the coefficients (``ci=``) as the numbers a golden release records: the coefficients and the
    intercept, the intervals' ends and the p-values."""
    fit = result.estimate
    return [*fit.coef, np.float64(fit.intercept), *np.ravel(result.ci), *np.ravel(result.pvalue)]


def _gram(result):
    """The noisy Gram matrix of the scaled rows (SSP, AdaSSP): what the audits look at."""
    return result._statistics.gram


def _regression_rows():
    """Row 0 at corners whose scaled rows z = A(v − c̄) are orthogonal (the Gram matrix's worst case)."""
    X = np.array([[1.0, 1.0], [0.5, 0.2], [0.1, 0.9], [0.3, 0.3]])
    y = np.array([1.0, 0.2, 0.7, 0.4])
    moved_X, moved_y = X.copy(), y.copy()
    moved_X[0], moved_y[0] = [1.0, 0.0], 0.0
    return [((X, y), (moved_X, moved_y))]


def _ci_rows():
    """The corner rows of :func:`_regression_rows` with two more in the box (an interval needs n > d + 2)."""
    more_X, more_y = np.array([[0.6, 0.4], [0.2, 0.5]]), np.array([0.5, 0.3])
    return [
        ((np.vstack([X, more_X]), np.append(y, more_y)), (np.vstack([X2, more_X]), np.append(y2, more_y)))
        for (X, y), (X2, y2) in _regression_rows()
    ]


def _eigenvalue_rows():
    """λ_min of XᵀX (x with the constant column, a² = 1/3) moves by 2/3: rows z_x = (−a, a), (a, a) against both
    (a, a) (the review's pair for AdaSSP's eigenvalue release)."""
    y = np.array([0.5, 0.5])
    return [((np.array([[0.0], [1.0]]), y), (np.array([[1.0], [1.0]]), y.copy()))]


def _huge_rows():
    """Bounds whose squares overflow a float (±1e160): one row moved from 0 to 1e160 (the review's r13)."""
    X, y = np.zeros((4, 1)), np.zeros(4)
    moved = X.copy()
    moved[0] = 1e160
    return [((X, y), (moved, y.copy()))]


def _one_feature():
    return [((a[0][:, :1], a[1]), (b[0][:, :1], b[1])) for a, b in _regression_rows()]


def _regression_units():
    """Unit 0 holds two rows at one corner; its neighbour moves both to the orthogonal corner."""
    X = np.array([[1.0, 1.0], [1.0, 1.0], [0.5, 0.2], [0.1, 0.9], [0.3, 0.3]])
    y = np.array([1.0, 1.0, 0.2, 0.7, 0.4])
    ids = np.array([0, 0, 1, 2, 3])
    moved_X, moved_y = X.copy(), y.copy()
    moved_X[:2], moved_y[:2] = [1.0, 0.0], 0.0
    return [((X, y, ids), (moved_X, moved_y, ids))]


def _tukey_rows():
    """20 000 rows near a line, 20 per model (m = 1000 at ε = 2: the test passes and the mechanism runs); the
    neighbour moves row 0 to an extreme (the review's r17)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(1, 2, (20_000, 1))
    y = 2 * X[:, 0] + rng.normal(0, 0.01, 20_000)
    moved_X, moved_y = X.copy(), y.copy()
    moved_X[0], moved_y[0] = 1e-9, 1e9
    return [((X, y), (moved_X, moved_y))]


def _tukey_margin():
    """One row per model (x = 1, no intercept: the models are the y's), 1000 draws of Student's t with 5 degrees of
    freedom; the neighbour moves the model nearest 0 to −1e6, which moves the distance to unsafety k̂ by one
    (204 to 205 at ε = 2): the pair on which a halved distance sensitivity shows."""
    y = np.random.default_rng(6).standard_t(5, 1000)
    moved = y.copy()
    moved[np.argmin(np.abs(y))] = -1e6
    X = np.ones((1000, 1))
    return [((X, y), (X.copy(), moved))]


def _tukey_unit_rows():
    """1200 units of 6 rows near a line; the neighbour's unit 0 has lost a row (every other unit unchanged: the
    review's r21, where every model used to move)."""
    rng = np.random.default_rng(0)
    ids = np.repeat(np.arange(1200), 6)
    X = rng.uniform(0, 1, (ids.size, 1))
    y = 1 + 2 * X[:, 0] + rng.normal(0, 0.05, ids.size)
    return [((X, y, ids), (X[1:], y[1:], ids[1:]))]


def _tukey_units_data():
    """The privacy-unit tests' data (unit 0 holds 400 of 3000 rows) with a response near a plane."""
    data = ex.unit_data()
    X = data.X[:, :2]
    return (X, X @ [1.0, -1.0] + 0.05 * np.random.default_rng(1).normal(size=X.shape[0]), data.ids)


def _golden_regression():
    return (ex.golden().M[:, :2], ex.golden().M[:, 2])


def _golden_tukey():
    rng = np.random.default_rng(20261129)
    X = rng.uniform(0, 1, (20_000, 2))
    return (X, X @ [1.0, -1.0] + rng.normal(0, 0.1, 20_000))


def _lazy_golden_regression():
    import dask.array as da

    M = ex.golden().M
    return (da.from_array(M[:, :2], chunks=37), da.from_array(M[:, 2], chunks=37))


def _streamed_regression():
    return (ex.streamed().X, ex.streamed().y)


def _unit_regression():
    return (ex.unit_data().X, ex.unit_data().values, ex.unit_data().ids)


def _halving(module: str, function: str, cache: str):
    """A patch that halves ``module.function`` (a declared sensitivity) and replaces the cached calibration
    ``module.cache`` by a fresh cache of the same function (the honest one's cache would hide the change)."""

    def patch(monkeypatch):
        found = sys.modules.get(module) or __import__(module, fromlist=["_"])
        original, cached = getattr(found, function), getattr(found, cache)
        monkeypatch.setattr(found, function, lambda *args: original(*args) / 2)
        monkeypatch.setattr(found, cache, functools.lru_cache(maxsize=64)(cached.__wrapped__))

    return patch


#: The Gram matrix's Δ₂ = √2·m declared as √2·m/2; λ_min's Δ = m as m/2; TukeyEM's distance Δ = 1 as 1/2.
_halve_gram_sensitivity = _halving("dpstats.linear_model._ssp", "gram_sensitivity", "_plan")
_halve_eigenvalue_sensitivity = _halving("dpstats.linear_model._ssp", "eigenvalue_sensitivity", "_plan")
_halve_distance_sensitivity = _halving("dpstats.linear_model._tukey", "distance_sensitivity", "calibration")


def _halve_ssp_sensitivities(monkeypatch):
    """Both of SSP's and AdaSSP's sensitivities halved (the audits' under-noised variant)."""
    _halve_gram_sensitivity(monkeypatch)
    _halve_eigenvalue_sensitivity(monkeypatch)


def _halve_median_sensitivity(monkeypatch):
    """Theil–Sen's ranks move by k (the matchings): declared as k/2."""
    __import__("dpstats.linear_model._theil_sen")
    module = sys.modules["dpstats.linear_model._theil_sen"]
    original = module._median
    monkeypatch.setattr(
        module,
        "_median",
        lambda values, epsilon, k, lower, upper, rng: original(values, epsilon, k / 2, lower, upper, rng),
    )


# The audits of SSP and AdaSSP: the orthogonal corner rows (‖z‖ = 1, z ⊥ z′: the upper triangle of z zᵀ − z′z′ᵀ
# has norm 1, the most any pair of rows in the box reaches with an intercept), the noisy Gram matrix projected on
# that difference, the threshold halfway between the two noiseless projections. The under-noised variant is the
# release with its sensitivities halved (the noise halved: a realistic calibration error). At δ = 1e-6 no event
# can flag it in feasible runs: a Gaussian's loss beyond ε lives in a tail of probability about δ (the best
# threshold at 50 000 runs reaches a lower bound of 1.04 at ε = 1, not enough for the halved variant's margin);
# at a large δ the same (ε, δ) claim — the calibration code is the same for every δ — is tested where a halfway
# event has power. Expected lower bounds (normal approximation of the counts): SSP at (0.5, 0.5), 1000 runs: 0 for
# the release, 0.91 for the halved variant; AdaSSP at (0.25, 0.7), whose Gram matrix gets 2/3 of the budget, 2000
# runs: 0 and 0.44.


def _corner_rows():
    X = np.array([[1.0, 1.0], [0.5, 0.5], [0.5, 0.5]])
    y = np.array([1.0, 0.5, 0.5])
    moved_X, moved_y = X.copy(), y.copy()
    moved_X[0], moved_y[0] = [1.0, 0.0], 0.0
    return (X, y), (moved_X, moved_y)


def _projection_event():
    """The event "the noisy Gram matrix's upper triangle, projected on the difference of the two datasets' exact
    ones, is above the midpoint": from the scaled rows of the data (the release's own map)."""
    from ._ssp import Scaling

    scaling = Scaling(np.zeros(3), np.ones(3), True, False)
    upper = np.triu_indices(scaling.width)
    exact = [(lambda Z: (Z.T @ Z)[upper])(scaling.rows(*data)) for data in _corner_rows()]
    direction = (exact[0] - exact[1]) / np.linalg.norm(exact[0] - exact[1])
    middle = (direction @ exact[0] + direction @ exact[1]) / 2
    return lambda G: direction @ G[upper] > middle


def _theil_sen_rows():
    """Three rows at (0.5, 0.5) and row 0 at (0.5, 0) against (0.5, 1), one matching: the two pairs' predictions
    (a vertical pair predicts the mean of its y's) are {0.25, 0.5} against {0.5, 0.75} at both points."""
    X = np.full((4, 1), 0.5)
    y = np.array([0.0, 0.5, 0.5, 0.5])
    moved = y.copy()
    moved[0] = 1.0
    return (X, y), (X.copy(), moved)


def _theil_sen_event():
    """Both medians in [0.25, 0.5) (the first dataset's interval of median rank, its shared end left out): each
    median's exponential mechanism puts e^{s} times the weight there on the first dataset (s = ε/4 at matchings 1),
    with equal normalisers. The release is ε-DP and this event shows ε/2 of it: a halved sensitivity shows as ε
    exactly, which no lower confidence bound exceeds (the sensitivity checker catches that one); the under-noised
    variant here is 4ε claimed as ε (the event shows 2ε)."""
    return lambda fit: all(0.25 - 1e-9 <= fit[1] + fit[0] * x < 0.5 - 2.0**-20 for x in (0.25, 0.75))


def _regression_battery():
    rng = np.random.default_rng(2028)
    X = rng.uniform(0, 1, (40, 2))
    return (((X, X @ [0.5, 0.25]), {"epsilon": 1.0, **_UNIT_BOX}),)


def linear_regression() -> Cases:
    theil_sen = {"epsilon": EPS, "method": "theil_sen", "matchings": 3, **_UNIT_BOX}
    tukey_rows = {"epsilon": 2.0, "method": "tukey", "subsets": 1000}
    return Cases(
        examples=(
            Example(
                "linear_regression adassp",
                _first(_regression_rows),
                {"epsilon": EPS, **_UNIT_BOX},
                output=_model,
                neighbours=_regression_rows,
            ),
            Example(
                "linear_regression adassp eigenvalue",
                _first(_eigenvalue_rows),
                {"epsilon": EPS, **_UNIT_BOX},
                output=_model,
                neighbours=_eigenvalue_rows,
            ),
            Example(
                "linear_regression ssp",
                _first(_regression_rows),
                {"epsilon": EPS, "method": "ssp", **_UNIT_BOX},
                output=_model,
                neighbours=_regression_rows,
            ),
            Example(
                "linear_regression ssp without intercept",
                _first(_regression_rows),
                {"epsilon": EPS, "method": "ssp", "fit_intercept": False, **_UNIT_BOX},
                output=_model,
                neighbours=_regression_rows,
            ),
            Example(
                "linear_regression ssp huge bounds",
                _first(_huge_rows),
                {"epsilon": EPS, "method": "ssp", "bounds_X": (-1e160, 1e160), "bounds_y": (-1, 1)},
                output=_model,
                neighbours=_huge_rows,
            ),
            Example(
                "linear_regression adassp units",
                _first(_regression_units),
                {"epsilon": EPS, "max_rows": 2, **_UNIT_BOX},
                keywords=("privacy_unit",),
                output=_model,
                neighbours=_regression_units,
            ),
            Example(
                "linear_regression adassp ci",
                _first(_ci_rows),
                {"epsilon": EPS, "ci": 0.95, **_UNIT_BOX},
                output=_interval,
                neighbours=_ci_rows,
            ),
            Example(
                "linear_regression ssp ci",
                _first(_ci_rows),
                {"epsilon": EPS, "method": "ssp", "ci": 0.9, **_UNIT_BOX},
                output=_interval,
                neighbours=_ci_rows,
            ),
            Example(
                "linear_regression theil_sen",
                _first(_one_feature),
                theil_sen,
                output=_model,
                neighbours=_one_feature,
            ),
            Example(
                "linear_regression tukey",
                _first(_tukey_rows),
                tukey_rows,
                output=_model,
                neighbours=_tukey_rows,
            ),
            Example(
                "linear_regression tukey margin",
                _first(_tukey_margin),
                {**tukey_rows, "fit_intercept": False},
                output=_model,
                neighbours=_tukey_margin,
            ),
            Example(
                "linear_regression tukey units",
                _first(_tukey_unit_rows),
                {"epsilon": 4.0, "method": "tukey", "subsets": 300, "max_rows": 4},
                keywords=("privacy_unit",),
                output=_model,
                neighbours=_tukey_unit_rows,
            ),
            Example(
                "linear_regression_adassp",
                _golden_regression,
                {"epsilon": 1.0, **_GOLDEN_BOUNDS},
                output=_fit,
                seed=130,
            ),
            Example(
                "linear_regression_ssp",
                _golden_regression,
                {"epsilon": 1.0, "method": "ssp", **_GOLDEN_BOUNDS},
                output=_fit,
                seed=131,
            ),
            Example(
                "linear_regression_adassp_ci",
                _golden_regression,
                {"epsilon": 1.0, "ci": 0.95, **_GOLDEN_BOUNDS},
                output=_interval,
                seed=137,
            ),
            Example(
                "linear_regression_ssp_ci",
                _golden_regression,
                {"epsilon": 1.0, "method": "ssp", "ci": 0.9, **_GOLDEN_BOUNDS},
                output=_interval,
                seed=138,
            ),
            Example(
                "linear_regression_units",
                lambda: (*_golden_regression(), ex.golden_units().M),
                {"epsilon": 1.0, "max_rows": 2, **_GOLDEN_BOUNDS},
                keywords=("privacy_unit",),
                output=_fit,
                seed=132,
            ),
            Example(
                "linear_regression_private_bounds",
                _golden_regression,
                {"epsilon": 2.0, "bounds_X": "private", "bounds_y": "private"},
                output=_fit,
                seed=133,
            ),
            Example(
                "linear_regression_theil_sen",
                lambda: (ex.golden().M[:, :1], ex.golden().M[:, 2]),
                {"epsilon": 1.0, "method": "theil_sen", "bounds_X": (0, 1), "bounds_y": (0, 100)},
                output=_fit,
                seed=134,
            ),
            Example(
                "linear_regression_tukey",
                _golden_tukey,
                {"epsilon": 1.0, "method": "tukey", "subsets": 1000},
                output=_fit,
                seed=135,
            ),
            Example(
                "dask_linear_regression_adassp",
                _lazy_golden_regression,
                {"epsilon": 1.0, **_GOLDEN_BOUNDS},
                output=_fit,
                seed=136,
            ),
            Example(
                "linear_regression adassp streamed",
                _streamed_regression,
                {"epsilon": 1.0, "bounds_X": (-1, 1), "bounds_y": (-1, 1)},
                output=_model,
                dask=True,
            ),
            Example(
                "linear_regression ssp streamed without intercept",
                _streamed_regression,
                {"epsilon": 1.0, "method": "ssp", "fit_intercept": False, "bounds_X": (-1, 1), "bounds_y": (-1, 1)},
                output=_model,
                dask=True,
            ),
            Example(
                "linear_regression of units",
                _unit_regression,
                {"epsilon": 1.0, "max_rows": 5, "bounds_X": (-1, 1), "bounds_y": (0, 10)},
                keywords=("privacy_unit",),
                output=_model,
                tags=UNITS,
            ),
            Example(
                "linear_regression tukey of units",
                _tukey_units_data,
                {"epsilon": 4.0, "method": "tukey", "subsets": 200, "max_rows": 5},
                keywords=("privacy_unit",),
                output=_model,
                tags=UNITS,
            ),
            Example(
                "linear_regression ssp audit",
                lambda: _corner_rows()[0],
                {"epsilon": 0.5, "delta": 0.5, "method": "ssp", **_UNIT_BOX},
                output=_gram,
                audit=Audit(_corner_rows, _projection_event, 1000, (41, 42), delta=0.5, patch=_halve_ssp_sensitivities),
            ),
            Example(
                "linear_regression adassp audit",
                lambda: _corner_rows()[0],
                {"epsilon": 0.25, "delta": 0.7, **_UNIT_BOX},
                output=_gram,
                audit=Audit(_corner_rows, _projection_event, 2000, (43, 44), delta=0.7, patch=_halve_ssp_sensitivities),
            ),
            Example(
                "linear_regression theil_sen audit",
                lambda: _theil_sen_rows()[0],
                {"epsilon": 1.0, "method": "theil_sen", "matchings": 1, **_UNIT_BOX},
                output=_model,
                audit=Audit(_theil_sen_rows, _theil_sen_event, 2000, (45, 46), under=4.0),
            ),
        ),
        battery=_regression_battery(),
        misdeclared=(
            ("linear_regression ssp", _halve_gram_sensitivity),
            ("linear_regression adassp eigenvalue", _halve_eigenvalue_sensitivity),
            ("linear_regression theil_sen", _halve_median_sensitivity),
            ("linear_regression tukey margin", _halve_distance_sensitivity),
        ),
    )
