"""The test cases of the linear-model releases (their test factories, read through :mod:`dpstats.registry`).
Imported only by the tests."""

from __future__ import annotations

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
    import numpy as np

    return (result.coef, np.float64(result.intercept))


def _model(result):
    import numpy as np

    return np.append(result.coef, result.intercept)


def _regression_rows():
    """Row 0 at corners whose scaled rows z = A(v − c̄) are orthogonal (the Gram matrix's worst case: √2)."""
    import numpy as np

    X = np.array([[1.0, 1.0], [0.5, 0.2], [0.1, 0.9], [0.3, 0.3]])
    y = np.array([1.0, 0.2, 0.7, 0.4])
    moved_X, moved_y = X.copy(), y.copy()
    moved_X[0], moved_y[0] = [1.0, 0.0], 0.0
    return [((X, y), (moved_X, moved_y))]


def _one_feature():
    return [((a[0][:, :1], a[1]), (b[0][:, :1], b[1])) for a, b in _regression_rows()]


def _regression_units():
    """Unit 0 holds two rows at one corner; its neighbour moves both to the orthogonal corner."""
    import numpy as np

    X = np.array([[1.0, 1.0], [1.0, 1.0], [0.5, 0.2], [0.1, 0.9], [0.3, 0.3]])
    y = np.array([1.0, 1.0, 0.2, 0.7, 0.4])
    ids = np.array([0, 0, 1, 2, 3])
    moved_X, moved_y = X.copy(), y.copy()
    moved_X[:2], moved_y[:2] = [1.0, 0.0], 0.0
    return [((X, y, ids), (moved_X, moved_y, ids))]


def _tukey_rows():
    """400 rows near a line; the neighbour moves row 0 far away (one model of the 40 changes)."""
    import numpy as np

    rng = np.random.default_rng(3)
    X = rng.normal(0, 1, (400, 1))
    y = 2 * X[:, 0] + rng.normal(0, 0.1, 400)
    moved_X, moved_y = X.copy(), y.copy()
    moved_X[0], moved_y[0] = 50.0, -100.0
    return [((X, y), (moved_X, moved_y))]


def _golden_regression():
    return (ex.golden().M[:, :2], ex.golden().M[:, 2])


def _golden_tukey():
    import numpy as np

    rng = np.random.default_rng(20261129)
    X = rng.uniform(0, 1, (4000, 2))
    return (X, X @ [1.0, -1.0] + rng.normal(0, 0.1, 4000))


def _lazy_golden_regression():
    import dask.array as da

    M = ex.golden().M
    return (da.from_array(M[:, :2], chunks=37), da.from_array(M[:, 2], chunks=37))


def _streamed_regression():
    return (ex.streamed().X, ex.streamed().y)


def _unit_regression():
    return (ex.unit_data().X, ex.unit_data().values, ex.unit_data().ids)


def _halve_gram_sensitivity(monkeypatch):
    """The Gram matrix's Δ₂ = √2·m declared as 1/2, with the cached calibration bypassed."""
    __import__("dpstats.linear_model._ssp")
    ssp = sys.modules["dpstats.linear_model._ssp"]
    monkeypatch.setattr(ssp, "sqrt_up", lambda value: 0.5)
    monkeypatch.setattr(ssp, "_plan", ssp._plan.__wrapped__)


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


def _regression_battery():
    import numpy as np

    rng = np.random.default_rng(2028)
    X = rng.uniform(0, 1, (40, 2))
    return (((X, X @ [0.5, 0.25]), {"epsilon": 1.0, **_UNIT_BOX}),)


def linear_regression() -> Cases:
    theil_sen = {"epsilon": EPS, "method": "theil_sen", "matchings": 3, **_UNIT_BOX}
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
                "linear_regression adassp units",
                _first(_regression_units),
                {"epsilon": EPS, "max_rows": 2, **_UNIT_BOX},
                keywords=("privacy_unit",),
                output=_model,
                neighbours=_regression_units,
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
                {"epsilon": 2.0, "method": "tukey", "subsets": 40},
                output=_model,
                neighbours=_tukey_rows,
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
                {"epsilon": 1.0, "method": "tukey", "subsets": 200},
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
        ),
        battery=_regression_battery(),
        misdeclared=(
            ("linear_regression ssp", _halve_gram_sensitivity),
            ("linear_regression theil_sen", _halve_median_sensitivity),
        ),
    )
