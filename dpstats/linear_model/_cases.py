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
