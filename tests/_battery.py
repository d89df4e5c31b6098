"""The bad-input battery: every public mechanism and estimator, called with inputs a careful user and a hostile one
would try, each outcome classified.

Each :class:`Case` says what a correct answer is: an error naming one of ``names`` (a ``dpstats`` error, raised
before anything is charged), or, for ``names=None``, a documented valid result (``check`` tells it apart from a
wrong one). :func:`outcome` runs a case against a fresh accountant and classifies what happened:

* ``clear``    — a dpstats error naming the parameter, nothing charged (correct for a bad input);
* ``valid``    — a result that passes the case's check (correct for a valid input);
* ``unclear``  — an error that is not a dpstats error, or does not name the parameter;
* ``silent``   — a bad input accepted with a result, or a valid input given a wrong result;
* ``refused``  — a valid input refused;
* ``charged``  — an error raised after the accountant was charged;
* ``hang``     — no answer within :data:`TIMEOUT` seconds.

``tests/test_battery.py`` runs it in a subprocess (an address-space limit and an alarm per case, so that an
allocation of terabytes or an endless loop is classified, not suffered) and asserts that every outcome is correct.
``python tests/_battery.py`` prints the totals and every incorrect case; ``--json`` prints the outcomes.

Parameters that a version of the library does not have are left out of the base calls (``_supported``), so the
battery runs on older versions too: that is how the totals before the hardening were measured.
"""

from __future__ import annotations

import datetime
import inspect
import json
import math
import signal
import sys
import warnings
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

import dpstats as dps
import dpstats.exceptions as dpx
from dpstats.estimators import DPCCA, DPPCA, DPLinearSVC, DPLogisticRegression
from dpstats.preprocessing import clip_rows

#: Seconds a case may run before it counts as a hang.
TIMEOUT = 20
#: Address-space limit of the battery's process (bytes): an absurd allocation fails instead of swapping.
MEMORY_LIMIT = 6 * 2**30

OUTCOMES = ("clear", "valid", "unclear", "silent", "refused", "charged", "hang")
CORRECT = ("clear", "valid")


@dataclass(frozen=True)
class Case:
    """One call: ``call(accountant)``; ``names``: the parameter names a correct error names (None: valid input);
    ``check``: for a valid input, whether the result is the documented one."""

    function: str
    label: str
    call: object
    names: tuple[str, ...] | None
    check: object = None


# ----------------------------------------------------------------------------- data (small: the battery is fast)

_RNG = np.random.default_rng(2027)
x = np.linspace(0.05, 0.95, 40)
X = _RNG.uniform(-1, 1, (40, 3)) / 2
Y = _RNG.uniform(-1, 1, (40, 2)) / 2
LABELS = np.where(X[:, 0] > 0, 1.0, -1.0)
ZERO_ONE = (LABELS > 0).astype(int)
A = _RNG.integers(0, 4, (8, 10)).astype(float) / 4
UNITS = np.repeat(np.arange(20), 2)


def _finite(value) -> bool:
    try:
        return bool(np.isfinite(np.asarray(value, dtype=np.float64)).all())
    except (TypeError, ValueError):
        return False


def _always(value) -> bool:
    return value is not None


def _supported(function, name: str) -> bool:
    target = getattr(function, "__wrapped__", function)
    while hasattr(target, "__wrapped__"):
        target = target.__wrapped__
    return name in inspect.signature(target).parameters


def _low_rank_kw() -> dict:
    """The entries' bounds of A for :func:`dpstats.low_rank`, where the function takes them."""
    return {"bounds": (0, 1)} if _supported(dps.low_rank, "bounds") else {}


# ----------------------------------------------------------------------------- the bad values


BAD_EPSILON = [0, -1.0, math.nan, math.inf, "1", True, None, 1e-13, [1.0], 1j]
BAD_DELTA = [-0.1, 1, 2.0, math.nan, "0", True, None, 1j]
FLAGS = ("clip", "fit_intercept")
BAD_FLAG = ["no", "yes", 1, 0, None, [True], np.array([True, False]), 1.0]
BAD_RNG = [-1, 1.5, "seed", np.random.RandomState(0), [1, 2], True]
BAD_ACCOUNTANT = ["acc", 1.0, object()]
BAD_NOISE = ["exactly", None, 1]
BAD_COUNT = [0, -1, 1.5, "2", True, None, 10**30]
NOT_NUMBERS = {
    "strings": np.array(["0.1", "0.5", "0.9"]),
    "string list": ["0.1", "0.5", "0.9"],
    "complex": 5j * np.array([0.1, 0.5, 0.9]),
    "objects": np.array([0.1, "a", None], dtype=object),
    "object floats": np.array([0.1, 0.5, 0.9], dtype=object),
    "fractions": [Fraction(1, 3), Fraction(1, 2)],
    "datetimes": np.array(["2020-01-01", "2021-01-01"], dtype="datetime64[D]"),
    "timedeltas": np.array([1, 2], dtype="timedelta64[s]"),
    "bytes": b"abc",
    "dict": {"a": 0.5},
    "ragged": [[0.1], [0.2, 0.3]],
    "None": None,
}
NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _bad_bounds(name: str) -> dict:
    return {
        "None": None,
        "reversed": (1, 0),
        "equal": (0.5, 0.5),
        "nan": (0, math.nan),
        "inf": (0, math.inf),
        "one value": (0,),
        "three values": (0, 1, 2),
        "string": "ab",
        "digit string": "09",
        "string pair": ("0", "1"),
        "string side": (0, "1"),
        "bool pair": (False, True),
        "complex side": (0, 1j),
        "None side": (0, None),
        "datetime side": (np.datetime64("2020-01-01"), np.datetime64("2021-01-01")),
        "overflowing width": (-1e308, 1e308),
        "scalar": 1.0,
    }


def _matrix_variants(name: str) -> dict:
    """Bad data matrices (n × d)."""
    return {
        "1-D": np.array([0.1, 0.2, 0.3]),
        "3-D": np.zeros((4, 2, 2)),
        "no rows": np.zeros((0, 3)),
        "no columns": np.zeros((5, 0)),
        "nan": np.array([[0.1, math.nan], [0.2, 0.1]]),
        "inf": np.array([[0.1, math.inf], [0.2, 0.1]]),
        "strings": np.array([["0.1", "0.2"], ["0.3", "0.1"]]),
        "complex": 0.3j * np.ones((3, 2)),
        "objects": np.array([[0.1, "a"], [0.2, None]], dtype=object),
        "datetimes": np.array([["2020-01-01", "2020-01-02"]], dtype="datetime64[D]"),
        "None": None,
        "scalar": 0.5,
        "ragged": [[0.1, 0.2], [0.3]],
    }


# ----------------------------------------------------------------------------- the cases


def _cases_for(
    function: str, call, base_args: tuple, base_kwargs: dict, data_names: tuple, mutations: dict, prefix: str = ""
):
    """Cases of ``function``: the valid base call, then one per (parameter, bad value) of ``mutations``.

    ``mutations``: parameter name -> (values (a dict label -> value, or a list), names a correct error names, or
    None for valid values, and an optional check). Data parameters (``data_names``) are positional. ``prefix``
    starts every label (one function, several base calls)."""

    def make(args, kwargs):
        charged = "accountant" in kwargs and kwargs["accountant"] is None  # the base call's: the battery's accountant
        return lambda acc: call(*args, **({**kwargs, "accountant": acc} if charged else kwargs))

    found = [Case(function, f"{prefix}valid base call", make(base_args, base_kwargs), None, _always)]
    for param, spec in mutations.items():
        if param in FLAGS and not _supported(call, param):
            continue  # a flag this version does not have
        values, names, *rest = spec
        check = rest[0] if rest else _always
        items = values.items() if isinstance(values, dict) else ((repr(v)[:40], v) for v in values)
        for label, value in items:
            args, kwargs = list(base_args), dict(base_kwargs)
            if param in data_names:
                args[data_names.index(param)] = value
            else:
                kwargs[param] = value
            found.append(Case(function, f"{prefix}{param}={label}", make(tuple(args), kwargs), names, check))
    return found


def _numeric_data(name: str = "x") -> dict:
    import pandas as pd

    bad = {label: np.array([0.1, value, 0.5]) for label, value in NON_FINITE.items()}
    bad.update(NOT_NUMBERS)
    bad.update({"empty": [], "scalar": 0.5, "4-D": np.zeros((2, 2, 2, 2))})
    bad.update(
        {
            "pandas strings": pd.Series(["0.1", "0.5"]),
            "pandas datetimes": pd.Series(pd.to_datetime(["2020-01-01", "2021-01-01"])),
            "pandas categories": pd.Series(["a", "b"], dtype="category"),
            "pandas objects": pd.Series([0.1, 0.5], dtype=object),
        }
    )
    return bad


def _units(names=("privacy_unit", "max_rows")) -> dict:
    return {
        "max_rows": ({"without unit": 2}, ("max_rows",)),
        "privacy_unit": (
            {
                "without max_rows": UNITS,
                "wrong length": UNITS[:5],
                "column name without a table": "person",
                "scalar": 5,
            },
            names,
        ),
    }


def descriptive_cases() -> list[Case]:
    found = []
    for name in ("mean", "variance", "sum"):
        function = getattr(dps, name)
        mutations = {
            "x": (_numeric_data(), ("x",)),
            "bounds": (_bad_bounds("bounds"), ("bounds",)),
            "axis": ([2, 1.5, "0", True, [0]], ("axis",)),
            "weights": (
                {"negative": [-1.0], "nan": [math.nan], "string": "1", "dict without a table": {"a": 1}},
                ("weights",),
            ),
            **_units(),
        }
        found += _cases_for(
            name, function, (x,), {"epsilon": 1.0, "bounds": (0, 1), "rng": 0, "accountant": None}, ("x",), mutations
        )
        # valid inputs that must be accepted, with the documented result
        for label, data in {
            "bool data": np.array([True, False, True]),
            "int data": np.array([0, 1, 1]),
            "float32 data": x.astype(np.float32),
            "list data": [0.1, 0.5],
        }.items():
            found.append(
                Case(
                    name,
                    label,
                    (lambda f, d: lambda acc: f(d, 1.0, bounds=(0, 1), rng=0, accountant=acc))(function, data),
                    None,
                    _finite,
                )
            )
        found.append(
            Case(
                name,
                "clip=numpy bool",
                (lambda f: lambda acc: f(2 * x, 1.0, bounds=(0, 1), clip=np.True_, rng=0, accountant=acc))(function),
                None,
                _finite,
            )
        )
        found.append(
            Case(
                name,
                "epsilon=numpy float",
                (lambda f: lambda acc: f(x, np.float64(1.0), bounds=(0, 1), rng=0, accountant=acc))(function),
                None,
                _finite,
            )
        )
    # variance of one record: a documented refusal (the sensitivity needs n >= 2)
    found.append(
        Case(
            "variance",
            "one record",
            lambda acc: dps.variance([0.5], 1.0, bounds=(0, 1), accountant=acc),
            ("n >= 2", "n ≥ 2", "two records", "at least 2"),
        )
    )
    found += _cases_for(
        "count",
        dps.count,
        (x,),
        {"epsilon": 1.0, "privacy_unit": UNITS, "max_rows": 2, "rng": 0, "accountant": None},
        ("x",),
        {
            "x": ({"no length": 5, "empty": [], "None": None}, ("x",)),
            "max_rows": ({"zero": 0, "float": 1.5, "bool": True, "string": "2"}, ("max_rows",)),
            "privacy_unit": ({"wrong length": UNITS[:5], "scalar": 5}, ("privacy_unit",)),
        },
    )
    found.append(
        Case(
            "count",
            "strings, no unit",
            lambda acc: dps.count(["a", "b"], 1.0, accountant=acc),
            None,
            lambda v: v == 2.0,
        )
    )
    return found


def histogram_cases() -> list[Case]:
    mutations = {
        "x": ({**_numeric_data(), "2-D": np.zeros((3, 2))}, ("x",)),
        "range": (_bad_bounds("range"), ("range",)),
        "bins": ([0, -1, 1.5, "10", True, None, 10**12, np.linspace(0, 1, 5)], ("bins",)),
        "categories": ({"with range": ["a"]}, ("categories", "range")),
        **_units(),
    }
    found = _cases_for(
        "histogram",
        dps.histogram,
        (x,),
        {"epsilon": 1.0, "range": (0, 1), "rng": 0, "accountant": None},
        ("x",),
        mutations,
    )
    words = np.array(["a", "b", "a", "c"])
    found += _cases_for(
        "histogram",
        dps.histogram,
        (words,),
        {"epsilon": 1.0, "categories": ["a", "b"], "other": "o", "rng": 0, "accountant": None},
        ("x",),
        {
            "categories": (
                {"a string": "ab", "empty": [], "duplicates": ["a", "a"], "unhashable": [["a"]], "None": None},
                ("categories",),
            ),
            "other": ({"a category": "a"}, ("other",)),
            "x": ({"2-D": np.array([["a", "b"]]), "empty": []}, ("x",)),
        },
    )
    found.append(
        Case(
            "histogram",
            "bool data",
            lambda acc: dps.histogram(np.array([True, False]), 1.0, range=(0, 1), rng=0, accountant=acc),
            None,
            lambda v: _finite(v[0]),
        )
    )
    return found


def quantile_cases() -> list[Case]:
    mutations = {
        "x": ({**_numeric_data(), "2-D": np.zeros((3, 2))}, ("x",)),
        "bounds": (_bad_bounds("bounds"), ("bounds",)),
        "q": (
            ["0.5", -0.1, 1.1, math.nan, [], [[0.5]], True, None, 0.5j, ["0.5"], np.array(["0.5"]), {0.5: 1}],
            ("q",),
        ),
        "grid_size": ([0, 1, 1.5, "16", True, None, 2**25], ("grid_size",)),
        "scale": (["ln", None, 1], ("scale",)),
        **_units(),
    }
    found = _cases_for(
        "quantile",
        dps.quantile,
        (x, 0.5),
        {"epsilon": 1.0, "bounds": (0, 1), "rng": 0, "accountant": None},
        ("x", "q"),
        mutations,
    )
    found.append(
        Case(
            "quantile",
            "grid_size=2",
            lambda acc: dps.quantile(x, 0.5, 1.0, bounds=(0, 1), grid_size=2, rng=0, accountant=acc),
            None,
            lambda v: v in (0.0, 0.5, 1.0),
        )
    )
    found.append(
        Case(
            "quantile",
            "q=numpy float",
            lambda acc: dps.quantile(x, np.float64(0.5), 1.0, bounds=(0, 1), rng=0, accountant=acc),
            None,
            lambda v: isinstance(v, float),
        )
    )
    found.append(
        Case(
            "quantile",
            "q=fraction",
            lambda acc: dps.quantile(x, Fraction(1, 2), 1.0, bounds=(0, 1), rng=0, accountant=acc),
            None,
            lambda v: isinstance(v, float),
        )
    )
    found.append(
        Case(
            "quantile",
            "bool data",
            lambda acc: dps.quantile(np.array([True, False, True]), 0.5, 1.0, bounds=(0, 1), rng=0, accountant=acc),
            None,
            _finite,
        )
    )
    found += _cases_for(
        "private_bounds",
        dps.private_bounds,
        (x,),
        {"epsilon": 1.0, "range": (0.001, 10), "rng": 0, "accountant": None},
        ("x",),
        {
            "x": ({**_numeric_data(), "outside range": 100 * x, "below range": -x}, ("x", "range")),
            "range": (_bad_bounds("range"), ("range",)),
            "quantiles": (
                [(0, 1), (0.9, 0.1), (0.5,), (0.5, 0.5), ("0.1", "0.9"), 0.5, (-0.1, 0.9), (0.1, math.nan)],
                ("quantiles",),
            ),
            "grid_size": ([0, 1, 1.5, "16", True, 2**25], ("grid_size",)),
            "scale": (["ln", None], ("scale",)),
            **_units(),
        },
    )
    if _supported(dps.private_bounds, "clip"):
        found.append(
            Case(
                "private_bounds",
                "outside range, clip=True",
                lambda acc: dps.private_bounds(100 * x, 1.0, range=(0.001, 10), clip=True, rng=0, accountant=acc),
                None,
                lambda v: v[0] < v[1],
            )
        )
    return found


def pca_cases() -> list[Case]:
    matrices = _matrix_variants("X")
    matrices["row norm > 1"] = 3 * X
    found = []
    for name, args, kwargs, extra in (
        (
            "pca_ag",
            (X,),
            {"epsilon": 1.0, "delta": 1e-6},
            {"calibration": (["exact", None], ("calibration",))},
        ),
        (
            "pca_ppm",
            (X, 2),
            {"epsilon": 1.0, "delta": 1e-6},
            {"k": (BAD_COUNT + [4], ("k",)), "n_iter": ([0, 1.5, "3", True, 10**7, 10**12], ("n_iter",))},
        ),
        (
            "pca_ppca",
            (X, 2),
            {"epsilon": 1.0},
            {
                "k": (BAD_COUNT + [4], ("k",)),
                "sampler": (["metropolis", None], ("sampler",)),
                "n_sweeps": ([3], ("n_sweeps",)),
            },
        ),
    ):
        function = getattr(dps, name)
        data = ("X", "k") if len(args) == 2 else ("X",)
        mutations = {
            "X": (matrices, ("X",)),
            **_units(),
            **extra,
        }
        found += _cases_for(name, function, args, {**kwargs, "rng": 0, "accountant": None}, data, mutations)
    found += _cases_for(
        "pca_sn",
        dps.pca_sn,
        (X,),
        {"epsilon": 1.0, "rng": 0},
        ("X",),
        {
            "X": (matrices, ("X",)),
            "epsilon": (BAD_EPSILON, ("epsilon",)),
            "clip": (BAD_FLAG, ("clip",)),
            "rng": (BAD_RNG, ("rng",)),
        },
    )
    found += _cases_for(
        "pca",
        dps.pca,
        (X, 2),
        {"epsilon": 1.0, "delta": 1e-6, "rng": 0, "accountant": None},
        ("X", "k"),
        {
            "X": (matrices, ("X",)),
            "k": (BAD_COUNT + [4], ("k",)),
            "mechanism": (["xx", None], ("mechanism",)),
            "n_iter": ([5], ("n_iter",)),
            "n_sweeps": ([3], ("n_sweeps",)),
            "calibration": (["classic "], ("calibration",)),
            "foo": ([1], ("foo",)),
        },
    )
    found.append(
        Case(
            "pca",
            "epsilon positional",
            lambda acc: dps.pca(X, 2, 1.0, 1e-6, rng=0, accountant=acc),
            None,
            lambda v: np.shape(v) == (3, 2),
        )
    )
    found.append(
        Case(
            "pca",
            "n_iter with ppm",
            lambda acc: dps.pca(X, 2, 1.0, 1e-6, mechanism="ppm", n_iter=3, rng=0, accountant=acc),
            None,
            lambda v: np.shape(v) == (3, 2),
        )
    )
    found += _cases_for(
        "top_components",
        dps.top_components,
        (np.diag([3.0, 1.0, 2.0]), 2),
        {},
        ("A_hat", "k"),
        {
            "A_hat": (
                {
                    "not square": np.ones((2, 3)),
                    "not symmetric": np.array([[1.0, 2.0], [0.0, 1.0]]),
                    "nan": np.array([[math.nan]]),
                    "complex": 1j * np.eye(2),
                    "strings": np.array([["1"]]),
                    "1-D": np.ones(3),
                    "None": None,
                },
                ("A_hat",),
            ),
            "k": (BAD_COUNT + [4], ("k",)),
        },
    )
    return found


def cca_cases() -> list[Case]:
    matrices = _matrix_variants("X")
    found = _cases_for(
        "cca",
        dps.cca,
        (X, Y, 1),
        {"epsilon": 1.0, "delta": 1e-6, "rng": 0, "accountant": None},
        ("X", "Y", "k"),
        {
            "X": ({**matrices, "joint rows > 1": 3 * X}, ("X",)),
            "Y": (
                {
                    "fewer rows": Y[:5],
                    "complex": 0.1j * Y,
                    "strings": Y.astype(str),
                    "1-D": Y[:, 0],
                    "nan": np.where(Y > 0.4, math.nan, Y),
                    "rows > 1": 3 * Y,
                },
                ("Y", "[X, Y]"),
            ),
            "k": (BAD_COUNT + [3], ("k",)),
            "ridge": ([0, -1.0, math.nan, "1", True], ("ridge",)),
            "calibration": (["exact", None], ("calibration",)),
            **_units(),
        },
    )
    return found


def erm_cases() -> list[Case]:
    found = []
    for name in ("svm", "logistic_regression"):
        function = getattr(dps, name)
        matrices = _matrix_variants("X")
        matrices["row norm > 1"] = 3 * X
        mutations = {
            "X": (matrices, ("X",)),
            "y": (
                {
                    "zero-one": ZERO_ONE.astype(float),
                    "strings": np.where(LABELS > 0, "yes", "no"),
                    "nan": np.where(LABELS > 0, 1.0, math.nan),
                    "complex": LABELS + 0j,
                    "fewer": LABELS[:5],
                    "2-D": LABELS[:, None],
                    "None": None,
                    "objects": LABELS.astype(object),
                },
                ("y",),
            ),
            "lam": ([0, -1.0, math.nan, math.inf, "0.1", True, None], ("lam",)),
            "method": (["input", None], ("method",)),
            "tol": ([0, -1.0, math.nan, "1e-9"], ("tol",)),
            "max_iter": ([0, 1.5, "10", True, None], ("max_iter",)),
            **_units(),
        }
        if name == "svm":
            mutations["h"] = ([0, -0.5, math.nan, "0.5", True], ("h",))
        found += _cases_for(
            name,
            function,
            (X, LABELS),
            {"epsilon": 1.0, "lam": 0.1, "rng": 0, "accountant": None},
            ("X", "y"),
            mutations,
        )
    return found


def low_rank_cases() -> list[Case]:
    matrices = _matrix_variants("A")
    bounds = _low_rank_kw()
    mutations = {
        "A": (
            {**matrices, "entries outside the domain": 1e9 * A, "one huge row": np.vstack([A[:-1], 1e12 * A[-1:]])},
            ("A", "bounds"),
        ),
        "k": (BAD_COUNT + [9], ("k",)),
        "method": (["svd", None], ("method",)),
        "oversampling": ([-1, 100, 1.5, "1", True], ("oversampling",)),
        "prune": ([0, -1.0, math.nan, "0.1", True], ("prune",)),
        "split": ([0, 1, 1.5, "0.5", True, math.nan], ("split",)),
        "privacy_unit": ({"any": np.arange(8)}, ("privacy_unit", "privacy unit")),
    }
    if bounds:
        mutations["bounds"] = (_bad_bounds("bounds"), ("bounds",))
    found = _cases_for(
        "low_rank",
        dps.low_rank,
        (A, 2),
        {"epsilon": 1.0, "delta": 1e-6, "rng": 0, "accountant": None, **bounds},
        ("A", "k"),
        mutations,
    )
    if bounds:
        found.append(
            Case(
                "low_rank",
                "entries outside the domain, clip=True",
                lambda acc: dps.low_rank(2 * A, 2, 1.0, 1e-6, bounds=(0, 1), clip=True, rng=0, accountant=acc),
                None,
                _finite,
            )
        )
    return found


def accountant_cases() -> list[Case]:
    def make(**kw):
        return lambda acc: dps.Accountant(**kw)

    found = [Case("Accountant", "valid", make(epsilon=1.0), None, _always)]
    for param, values, names in (
        ("epsilon", BAD_EPSILON, ("epsilon",)),
        ("delta", BAD_DELTA, ("delta",)),
        ("composition", ["xx", None, 1], ("composition",)),
        ("allow_unproven", ["yes", 1, None], ("allow_unproven",)),
        ("slack", [1e-7], ("slack",)),
        ("ledger_file", ["/no/such/dir/ledger.json", 123, "/"], ("ledger_file", "ledger file", "folder")),
    ):
        for value in values:
            kwargs = {"epsilon": 1.0, param: value}
            found.append(Case("Accountant", f"{param}={value!r}"[:60], make(**kwargs), names))
    return found


def _fit(estimator, *data, privacy_unit=None):
    return lambda acc: estimator.set_params(accountant=acc).fit(
        *data, **({} if privacy_unit is None else {"privacy_unit": privacy_unit})
    )


def estimator_cases() -> list[Case]:
    found = []
    bad_matrices = {k: v for k, v in _matrix_variants("X").items() if k not in ("None",)}
    for name, make, data in (
        ("DPPCA", lambda **kw: DPPCA(**{"n_components": 2, "random_state": 0, **kw}), (X,)),
        ("DPCCA", lambda **kw: DPCCA(**{"n_components": 1, "random_state": 0, **kw}), (X, Y)),
        (
            "DPLogisticRegression",
            lambda **kw: DPLogisticRegression(**{"classes": [-1, 1], "random_state": 0, **kw}),
            (X, LABELS),
        ),
        ("DPLinearSVC", lambda **kw: DPLinearSVC(**{"classes": [-1, 1], "random_state": 0, **kw}), (X, LABELS)),
    ):
        found.append(Case(name, "valid fit", _fit(make(), *data), None, _always))
        for label, bad in bad_matrices.items():
            found.append(Case(name, f"X={label}", _fit(make(), bad, *data[1:]), ("X",)))
        found.append(Case(name, "X rows > 1", _fit(make(), 3 * X, *data[1:]), ("X",)))
        params = {
            "epsilon": (BAD_EPSILON[:6], ("epsilon",)),
            "clip": (BAD_FLAG[:4], ("clip",)),
            "random_state": (BAD_RNG[:4], ("random_state", "rng")),
            "max_rows": ([2], ("max_rows",)),
        }
        if name in ("DPPCA", "DPCCA"):
            params["n_components"] = ([0, 9, 1.5, "2", True], ("n_components",))
            params["delta"] = (BAD_DELTA[:5], ("delta",))
        if name == "DPPCA":
            params["mechanism"] = (["xx"], ("mechanism",))
        if name == "DPCCA":
            params["ridge"] = ([-1.0], ("ridge",))
        if name in ("DPLogisticRegression", "DPLinearSVC"):
            params["classes"] = ([None, [1], [1, 2, 3], "ab"], ("classes",))
            params["lam"] = ([0, -1.0, "0.1"], ("lam",))
            params["method"] = (["input"], ("method",))
            params["fit_intercept"] = (["yes", None, 1], ("fit_intercept",))
            params["tol"] = ([0, -1.0], ("tol",))
            params["max_iter"] = ([0, 1.5], ("max_iter",))
        for param, (values, names) in params.items():
            for value in values:
                found.append(Case(name, f"{param}={value!r}"[:60], _fit(make(**{param: value}), *data), names))
        if name in ("DPCCA", "DPLogisticRegression", "DPLinearSVC"):
            second = "y"
            bad_y = {
                "fewer rows": data[1][:5],
                "None": None,
                "strings": np.asarray(data[1]).astype(str),
                "nan": np.where(np.asarray(data[1]) > 0, math.nan, data[1]),
            }
            if name != "DPCCA":
                bad_y["unknown label"] = np.where(LABELS > 0, 1.0, 5.0)
            for label, bad in bad_y.items():
                found.append(Case(name, f"y={label}", _fit(make(), data[0], bad), (second,)))
        found.append(
            Case(
                name,
                "privacy_unit without max_rows",
                _fit(make(), *data, privacy_unit=UNITS),
                ("max_rows", "privacy_unit"),
            )
        )
    return found


def preprocessing_cases() -> list[Case]:
    return _cases_for(
        "clip_rows",
        lambda X_, **kw: clip_rows(X_, **kw),
        (X,),
        {},
        ("X",),
        {"X": (_matrix_variants("X"), ("X",)), "max_norm": ([0, -1.0, math.nan, "1", True, None], ("max_norm",))},
    )


def hole_cases() -> list[Case]:
    """Valid inputs that the review found refused or failing: an allowed epsilon whose exact Laplace sampler raised
    after the charge (seed 468 of 3,000 draws failed), and output perturbation on a separable set at a tiny lambda,
    which never converged."""
    from _data import separable

    Xs, ys = separable(200, d=5, seed=0)
    return [
        Case(
            "mean",
            "epsilon=4.0937e-12 (seed 468)",
            lambda acc: dps.mean([0.5], 4.0937e-12, bounds=(0, 1), rng=468, accountant=acc),
            None,
            _finite,
        ),
        Case(
            "svm",
            "output, lam=1e-8, separable",
            lambda acc: dps.svm(Xs, ys, 1.0, lam=1e-8, method="output", rng=0, accountant=acc),
            None,
            _finite,
        ),
    ]


# ----------------------------------------------------------------------------- features after issue 27: covariance,
# Dong et al., the private norm bound, group-by releases

KEYS = np.array(["a", "b"] * 20)
RAW = 40 * X  # rows of norm up to ~35: a norm bound is needed

BAD_METHOD = {"unknown": "xx", "None": None, "upper case": "AMIN", "number": 1, "list": ["amin"]}
BAD_NORM_BOUND = {
    "negative": -1.0,
    "zero": 0,
    "nan": math.nan,
    "inf": math.inf,
    "other string": "public",
    "capitalised": "Private",
    "bool": True,
    "list": [1.0],
    "complex": 1j,
    "digit string": "2",
}
BAD_SHARE = {"zero": 0, "one": 1, "nan": math.nan, "negative": -0.1, "above one": 1.5, "string": "0.1", "bool": True}


def _square(d: int):
    return lambda v: np.shape(v) == (d, d) and _finite(v) and bool(np.allclose(np.asarray(v), np.asarray(v).T))


def _columns(d: int, k: int):
    return lambda v: np.shape(v) == (d, k) and _finite(v)


def _norm_bound_mutations(with_share: bool = True) -> dict:
    found = {"norm_bound": (BAD_NORM_BOUND, ("norm_bound",))}
    if with_share:
        found["radius_share"] = (BAD_SHARE, ("radius_share",))
    return found


def covariance_cases() -> list[Case]:
    from dpstats.decomposition import covariance_dong, pca_dong

    matrices = {**_matrix_variants("X"), "row norm > 1": 3 * X}
    base = {"rng": 0, "accountant": None}
    found = _cases_for(
        "covariance",
        dps.covariance,
        (X,),
        {"epsilon": 1.0, **base},
        ("X",),
        {
            "X": (matrices, ("X",)),
            "method": (BAD_METHOD, ("method",)),
            "rank": ({"zero": 0, "above d": 4, "float": 1.5, "string": "2", "bool": True}, ("rank",)),
            "split": ({"unknown": "xx", "None": None}, ("split",)),
            "eigenvalue_share": ({"zero": 0, "one": 1, "nan": math.nan, "string": "0.5"}, ("eigenvalue_share",)),
            "foo": ({"unknown option": 1}, ("foo",)),
            "algorithm": ({"a dong option": "adaptive"}, ("algorithm",)),
            "norm_bound": ({**BAD_NORM_BOUND}, ("norm_bound",)),
        },
        prefix="amin: ",
    )
    found += _cases_for(
        "covariance",
        dps.covariance,
        (X,),
        {"epsilon": 1.0, "delta": 1e-6, "method": "dong", **base},
        ("X",),
        {
            "X": (matrices, ("X",)),
            "delta": ({"zero": 0.0}, ("delta",)),
            "algorithm": ({"unknown": "xx", "None": None}, ("algorithm",)),
            "eigenvalues": ({"unknown": "xx", "spectrum with exact noise": "spectrum"}, ("eigenvalues",)),
            "rank": ({"an amin option": 2}, ("rank",)),
            **_norm_bound_mutations(),
            **_units(),
        },
        prefix="dong: ",
    )
    for label, kwargs, check in (
        ("amin, norm_bound=private", {"norm_bound": "private"}, _square(3)),
        ("amin, norm_bound=50, raw rows", {"norm_bound": 50.0}, _square(3)),
        ("dong, norm_bound=private, raw rows", {"method": "dong", "delta": 1e-6, "norm_bound": "private"}, _square(3)),
        ("dong, norm_bound=50, raw rows", {"method": "dong", "delta": 1e-6, "norm_bound": 50.0}, _square(3)),
        ("dong separate", {"method": "dong", "delta": 1e-6, "algorithm": "separate"}, _square(3)),
        ("dong units", {"method": "dong", "delta": 1e-6, "privacy_unit": UNITS, "max_rows": 2}, _square(3)),
    ):
        data = X if "raw" not in label else RAW
        found.append(
            Case(
                "covariance",
                label,
                (lambda d, kw: lambda acc: dps.covariance(d, 1.0, rng=0, accountant=acc, **kw))(data, kwargs),
                None,
                check,
            )
        )
    found += _cases_for(
        "covariance_dong",
        covariance_dong,
        (X,),
        {"epsilon": 1.0, "delta": 1e-6, **base},
        ("X",),
        {
            "X": (matrices, ("X",)),
            "delta": ({"zero": 0.0}, ("delta",)),
            "algorithm": ({"unknown": "xx", "None": None, "number": 1}, ("algorithm",)),
            "eigenvalues": ({"unknown": "xx", "spectrum with exact noise": "spectrum"}, ("eigenvalues",)),
            **_norm_bound_mutations(),
            **_units(),
        },
    )
    found += _cases_for(
        "pca_dong",
        pca_dong,
        (X, 2),
        {"epsilon": 1.0, "delta": 1e-6, **base},
        ("X", "k"),
        {
            "X": (matrices, ("X",)),
            "k": (BAD_COUNT + [4], ("k",)),
            "delta": ({"zero": 0.0}, ("delta",)),
            "algorithm": ({"unknown": "xx", "None": None}, ("algorithm",)),
            "eigenvalues": ({"unknown": "xx"}, ("eigenvalues",)),
            **_units(),
        },
    )
    return found


def norm_bound_cases() -> list[Case]:
    """pca (every DP mechanism), cca, DPPCA and DPCCA with a public or private norm bound."""
    found = []
    for mechanism in ("ag", "ppm", "ppca", "amin", "dong"):
        delta = 0.0 if mechanism in ("ppca", "amin") else 1e-6
        found += _cases_for(
            "pca",
            dps.pca,
            (RAW, 2),
            {
                "epsilon": 1.0,
                "delta": delta,
                "mechanism": mechanism,
                "norm_bound": "private",
                "rng": 0,
                "accountant": None,
            },
            ("X", "k"),
            {
                "norm_bound": (BAD_NORM_BOUND, ("norm_bound",)),
                "radius_share": (BAD_SHARE, ("radius_share",)),
                "epsilon": (BAD_EPSILON, ("epsilon",)),
                "k": ({"zero": 0, "above d": 4}, ("k",)),
            },
            prefix=f"{mechanism}, private bound: ",
        )
        found.append(
            Case(
                "pca",
                f"{mechanism}, norm_bound=50",
                (
                    lambda m, dl: (
                        lambda acc: dps.pca(RAW, 2, 1.0, dl, mechanism=m, norm_bound=50.0, rng=0, accountant=acc)
                    )
                )(mechanism, delta),
                None,
                _columns(3, 2),
            )
        )
        found.append(
            Case(
                "pca",
                f"{mechanism}, norm_bound=1, raw rows",
                (
                    lambda m, dl: (
                        lambda acc: dps.pca(RAW, 2, 1.0, dl, mechanism=m, norm_bound=1.0, rng=0, accountant=acc)
                    )
                )(mechanism, delta),
                ("X", "norm_bound"),
            )
        )
    found.append(
        Case(
            "pca",
            "dong with an amin option",
            lambda acc: dps.pca(X, 2, 1.0, 1e-6, mechanism="dong", split="uniform", rng=0, accountant=acc),
            ("split",),
        )
    )
    found.append(
        Case(
            "pca",
            "dong, delta=0",
            lambda acc: dps.pca(X, 2, 1.0, 0.0, mechanism="dong", rng=0, accountant=acc),
            ("delta",),
        )
    )
    found.append(
        Case(
            "pca",
            "sn, norm_bound=private",
            lambda acc: dps.pca(X, 2, 1.0, mechanism="sn", norm_bound="private", rng=0, accountant=acc),
            ("norm_bound", "sn"),
        )
    )
    found.append(
        Case(
            "pca",
            "radius_share without a private bound",
            lambda acc: dps.pca(X, 2, 1.0, radius_share=math.nan, rng=0, accountant=acc),
            ("radius_share",),
        )
    )
    found += _cases_for(
        "cca",
        dps.cca,
        (RAW, 30 * Y, 1),
        {"epsilon": 1.0, "delta": 1e-6, "norm_bound": "private", "rng": 0, "accountant": None},
        ("X", "Y", "k"),
        {**_norm_bound_mutations(), "epsilon": (BAD_EPSILON, ("epsilon",))},
        prefix="private bound: ",
    )
    for name, make, data in (
        ("DPPCA", lambda **kw: DPPCA(**{"n_components": 2, "random_state": 0, **kw}), (RAW,)),
        ("DPCCA", lambda **kw: DPCCA(**{"n_components": 1, "random_state": 0, **kw}), (RAW, 30 * Y)),
    ):
        found.append(Case(name, "norm_bound=private", _fit(make(norm_bound="private"), *data), None, _always))
        found.append(Case(name, "norm_bound=50", _fit(make(norm_bound=50.0), *data), None, _always))
        for label, value in BAD_NORM_BOUND.items():
            found.append(Case(name, f"norm_bound={label}", _fit(make(norm_bound=value), *data), ("norm_bound",)))
        for label, value in BAD_SHARE.items():
            found.append(
                Case(
                    name,
                    f"radius_share={label}",
                    _fit(make(norm_bound="private", radius_share=value), *data),
                    ("radius_share",),
                )
            )
    found.append(
        Case(
            "DPPCA",
            "mechanism=dong, norm_bound=private",
            _fit(DPPCA(2, mechanism="dong", norm_bound="private", random_state=0), RAW),
            None,
            _always,
        )
    )
    return found


def _keys_with(value, dtype=object):
    keys = np.array(KEYS, dtype=dtype)
    keys[3] = value
    return keys


def _bad_by() -> dict:
    return {
        "wrong length": KEYS[:5],
        "NaN keys": np.where(np.arange(40) % 7 == 0, math.nan, np.arange(40) % 2.0),
        "None key": _keys_with(None),
        "mixed kinds": _keys_with(1),
        "unhashable": [[k] for k in KEYS],
        "unhashable objects": _keys_with({"a": 1}),
        "2-D": KEYS.reshape(20, 2),
        "scalar": 5,
        "column name without a table": "city",
        "dict": {"a": 1},
        "complex": 1j * np.arange(40),
        "empty": [],
    }


def _bad_groups() -> dict:
    """Bad ``max_groups``; 2^20 took minutes to calibrate (a hang) before the cap."""
    return {"zero": 0, "negative": -1, "float": 1.5, "string": "2", "bool": True, "huge": 10**30, "2^20": 2**20}


def _grouped(value) -> bool:
    import pandas as pd

    return isinstance(value, (pd.Series, pd.DataFrame)) and _finite(np.asarray(value, dtype=np.float64))


def group_cases() -> list[Case]:
    found = []
    categories = {
        "duplicates": ["a", "a", "b"],
        "NaN": ["a", "b", math.nan],
        "None": ["a", "b", None],
        "empty": [],
        "a string": "ab",
        "unhashable": [["a"], ["b"]],
        "missing a key of the data": ["a"],
        "mixed kinds": ["a", "b", 1],
    }
    for name in ("count", "sum", "mean", "variance", "quantile"):
        function = getattr(dps, name)
        if name == "quantile":
            args, data_names, extra = (x, 0.5), ("x", "q"), {"bounds": (0, 1)}
        elif name == "count":
            args, data_names, extra = (x,), ("x",), {}
        else:
            args, data_names, extra = (x,), ("x",), {"bounds": (0, 1)}
        common = {
            "epsilon": (BAD_EPSILON, ("epsilon",)),
            "by": (_bad_by(), ("by",)),
            "rng": (BAD_RNG, ("rng",)),
        }
        # public keys
        found += _cases_for(
            name,
            function,
            args,
            {"epsilon": 1.0, "by": KEYS, "categories": ["a", "b"], **extra, "rng": 0, "accountant": None},
            data_names,
            {
                **common,
                "categories": (categories, ("categories", "by")),
                "selection": ({"with categories": "laplace"}, ("selection",)),
                "max_groups": ({"without a unit": 1}, ("max_groups",)),
            },
            prefix="categories: ",
        )
        # keys selected privately, with privacy units
        found += _cases_for(
            name,
            function,
            args,
            {
                "epsilon": 1.0,
                "delta": 1e-6,
                "by": KEYS,
                "privacy_unit": UNITS,
                "max_rows": 2,
                "max_groups": 1,
                **extra,
                "rng": 0,
                "accountant": None,
            },
            data_names,
            {
                **common,
                "delta": ({"zero": 0.0, **{repr(v): v for v in BAD_DELTA}}, ("delta",)),
                "max_groups": (_bad_groups(), ("max_groups",)),
                "selection": (
                    {"unknown": "xx", "capitalised": "Laplace", "number": 1, "list": ["laplace"]},
                    ("selection",),
                ),
                "max_rows": ({"zero": 0, "float": 1.5, "string": "2"}, ("max_rows",)),
                "privacy_unit": (
                    {"wrong length": UNITS[:5], "NaN ids": np.where(UNITS == 3, math.nan, UNITS)},
                    ("privacy_unit",),
                ),
            },
            prefix="selected, units: ",
        )
        for label, kwargs in (
            ("selected, rows", {"delta": 1e-6}),
            (
                "selected, weighted",
                {"delta": 1e-6, "privacy_unit": UNITS, "max_rows": 2, "max_groups": 2, "selection": "weighted"},
            ),
            ("selected, gaussian", {"delta": 1e-6, "selection": "gaussian"}),
            ("categories, units without max_groups", {"categories": ["a", "b"], "privacy_unit": UNITS, "max_rows": 2}),
            ("integer keys", {"categories": [0, 1], "by": np.arange(40) % 2}),
        ):
            kw = {"by": KEYS, **extra, **kwargs}
            found.append(
                Case(
                    name,
                    label,
                    (lambda f, a, k: lambda acc: f(*a, 1.0, rng=0, accountant=acc, **k))(function, args, kw),
                    None,
                    _grouped,
                )
            )
    found.append(
        Case(
            "count",
            "selected, units: max_rows=10**6 without max_groups",
            lambda acc: dps.count(x, 1.0, 1e-6, by=KEYS, privacy_unit=UNITS, max_rows=10**6, rng=0, accountant=acc),
            ("max_rows",),
        )
    )
    # histogram of unknown keys
    found += _cases_for(
        "histogram",
        dps.histogram,
        (KEYS,),
        {
            "epsilon": 1.0,
            "delta": 1e-6,
            "privacy_unit": UNITS,
            "max_rows": 2,
            "max_groups": 1,
            "rng": 0,
            "accountant": None,
        },
        ("x",),
        {
            "x": ({k: v for k, v in _bad_by().items() if k not in ("wrong length", "2-D")}, ("x",)),
            "privacy_unit": ({"x of another length": UNITS[:5]}, ("x", "privacy_unit")),
            "epsilon": (BAD_EPSILON, ("epsilon",)),
            "delta": ({"zero": 0.0, **{repr(v): v for v in BAD_DELTA}}, ("delta",)),
            "max_groups": (_bad_groups(), ("max_groups",)),
            "selection": ({"unknown": "xx", "capitalised": "Gaussian", "number": 1}, ("selection",)),
        },
        prefix="unknown keys: ",
    )
    found.append(
        Case(
            "histogram",
            "unknown keys, rows",
            lambda acc: dps.histogram(KEYS, 1.0, 1e-6, rng=0, accountant=acc),
            None,
            _grouped,
        )
    )
    found.append(
        Case(
            "histogram",
            "unknown keys, max_groups without a unit",
            lambda acc: dps.histogram(KEYS, 1.0, 1e-6, max_groups=1, rng=0, accountant=acc),
            ("max_groups",),
        )
    )
    return found


def linear_regression_cases() -> list[Case]:
    """What the review of issue 35 found: a public side outside its bounds beside a "private" one (clipped
    silently), bounds too narrow to scale, TukeyEM configurations that can never pass (charged, then refused),
    Theil-Sen on one row (an error about matchings never passed), the estimator's dict of bounds with an unknown
    column (ignored)."""
    import pandas as pd

    from dpstats.estimators import DPLinearRegression

    rng = np.random.default_rng(2029)
    Xr = rng.uniform(0, 1, (200, 2))
    yr = Xr @ [0.5, 0.25]
    outside = Xr.copy()
    outside[:3] = 5.0
    big_X = rng.uniform(0, 1, (4000, 1))
    big_y = 2 * big_X[:, 0]
    frame = pd.DataFrame(Xr, columns=["a", "b"])

    def call(X_, y_, epsilon, **kw):
        return lambda acc: dps.linear_regression(X_, y_, epsilon, rng=0, accountant=acc, **kw)

    return [
        Case(
            "linear_regression",
            "X outside, bounds_y private",
            call(outside, yr, 1.0, bounds_X=(0, 1), bounds_y="private"),
            ("bounds_X",),
        ),
        Case(
            "linear_regression",
            "y outside, bounds_X private",
            call(Xr, yr + 5, 1.0, bounds_X="private", bounds_y=(0, 1)),
            ("bounds_y",),
        ),
        Case(
            "linear_regression",
            "bounds_X = (0, 1e-310)",
            call(Xr * 1e-311, yr, 1.0, bounds_X=(0, 1e-310), bounds_y=(0, 1)),
            ("bounds_X",),
        ),
        Case(
            "linear_regression",
            "tukey, epsilon 0.1, m 1000",
            call(big_X, big_y, 0.1, method="tukey", subsets=1000),
            ("subsets",),
        ),
        Case(
            "linear_regression",
            "tukey, m 40 at epsilon 2",
            call(big_X, big_y, 2.0, method="tukey", subsets=40),
            ("subsets",),
        ),
        Case(
            "linear_regression",
            "tukey, delta 0.9 at epsilon 1e-3",
            call(big_X, big_y, 1e-3, delta=0.9, method="tukey"),
            ("epsilon",),
        ),
        Case(
            "linear_regression",
            "theil_sen on one row",
            call(Xr[:1, :1], yr[:1], 1.0, method="theil_sen", bounds_X=(0, 1), bounds_y=(0, 1)),
            ("X",),
        ),
        Case(
            "DPLinearRegression",
            "bounds_X dict with an unknown column",
            _fit(
                DPLinearRegression(bounds_X={"a": (0, 1), "b": (0, 1), "c": (0, 1)}, bounds_y=(0, 1), random_state=0),
                frame,
                yr,
            ),
            ("bounds_X",),
        ),
    ]


# ----------------------------------------------------------------------------- generated from the declarations


#: Hostile data of each declared kind (:class:`dpstats._constraints.Data`).
def _data_of_kind(kind: str) -> dict:
    if kind == "values":
        return {**_numeric_data(), "4-D": np.zeros((2, 2, 2, 2))}
    if kind == "sample":  # one sample of a two-sample test: empty is valid (its size is private), the rest is not
        return {label: value for label, value in _data_of_kind("values").items() if label != "empty"}
    if kind == "matrix":
        return _matrix_variants("X")
    if kind == "labels":
        return {
            "fewer rows": LABELS[:5],
            "None": None,
            "strings": LABELS.astype(str),
            "nan": np.where(LABELS > 0, math.nan, 1.0),
        }
    if kind == "samples":  # a sequence of samples (dpstats.hypothesis' k-sample tests)
        return {
            "one sample": [x],
            "no sample": [],
            "None": None,
            "scalar": 0.5,
            "an array (not a sequence of samples)": x,
            "a string": "ab",
            "a dict": {"a": x, "b": x},
            "no record in any sample": [[], []],  # one empty sample is valid (a sample's size is private)
            "a 2-D sample": [x, np.zeros((3, 2))],
            "nan": [x, np.array([0.1, math.nan])],
            "strings": [x, np.array(["0.1", "0.2"])],
        }
    return {"no length": 5, "None": None}


def declared_cases() -> list[Case]:
    """Every declared release (:mod:`dpstats.registry`): each base call of its test cases, then one case per value
    its declared constraints refuse (parameter by parameter) and per hostile input of each data parameter's kind:
    an error naming that parameter, before anything is charged. The hand-written cases below add what a generator
    cannot invent (cross-parameter refusals, valid inputs with their documented results)."""
    from _registry import battery_bases

    found = []
    for declaration, data, kwargs in battery_bases():
        name = declaration.name
        call = declaration.function
        mutations = {
            parameter: (constraint.invalid(), (parameter,))
            for parameter, constraint in declaration.parameters.items()
            if constraint.invalid() and parameter not in ("privacy_unit",)
        }
        mutations.update({d: (_data_of_kind(c.kind), (d,)) for d, c in declaration.data.items()})
        found += _cases_for(
            name,
            call,
            tuple(data),
            {**kwargs, "rng": 0, **({"accountant": None} if declaration.private else {})},
            tuple(declaration.data),
            mutations,
            prefix="declared: ",
        )
    return found


def cases() -> list[Case]:
    return [
        *declared_cases(),
        *hole_cases(),
        *descriptive_cases(),
        *histogram_cases(),
        *quantile_cases(),
        *pca_cases(),
        *cca_cases(),
        *erm_cases(),
        *low_rank_cases(),
        *accountant_cases(),
        *estimator_cases(),
        *preprocessing_cases(),
        *covariance_cases(),
        *norm_bound_cases(),
        *group_cases(),
        *linear_regression_cases(),
    ]


# ----------------------------------------------------------------------------- classification


class _Timeout(BaseException):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _dpstats_error(err: BaseException) -> bool:
    return type(err).__module__ == dpx.__name__


def _names(message: str, names: tuple[str, ...]) -> bool:
    return any(name in message for name in names)


def outcome(case: Case) -> tuple[str, str]:
    """(outcome, detail) of one case; see the module docstring."""
    acc = dps.Accountant(1e6, 0.5, composition="basic", allow_unproven=True)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(TIMEOUT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = case.call(acc)
    except _Timeout:
        return "hang", f"no answer in {TIMEOUT} s"
    except BaseException as err:  # noqa: BLE001 - every failure is classified
        signal.alarm(0)
        detail = f"{type(err).__name__}: {str(err)[:160]}"
        if acc.ledger:
            return "charged", detail
        if case.names is None:
            return "refused", detail
        if _dpstats_error(err) and _names(str(err), case.names):
            return "clear", detail
        return "unclear", detail
    finally:
        signal.alarm(0)
    if case.names is not None:
        return "silent", f"returned {type(result).__name__}"
    try:
        good = bool(case.check(result))
    except Exception as err:  # noqa: BLE001
        good, result = False, err
    return ("valid", "") if good else ("silent", f"wrong result {str(result)[:80]}")


def run() -> list[dict]:
    """Every case's outcome, as dicts (function, label, expected, outcome, detail)."""
    found = []
    for case in cases():
        kind, detail = outcome(case)
        expected = "valid" if case.names is None else "error naming " + " or ".join(case.names)
        found.append(
            {"function": case.function, "label": case.label, "expected": expected, "outcome": kind, "detail": detail}
        )
    return found


def totals(results: list[dict]) -> Counter:
    return Counter(r["outcome"] for r in results)


def _limit_memory() -> None:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = MEMORY_LIMIT if hard == resource.RLIM_INFINITY else min(MEMORY_LIMIT, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def main(argv: list[str]) -> None:
    _limit_memory()
    results = run()
    if "--json" in argv:
        print(json.dumps(results))
        return
    count = totals(results)
    functions = sorted({r["function"] for r in results})
    print(f"{len(results)} cases over {len(functions)} callables, {datetime.date.today()}")
    print(", ".join(f"{k}: {count.get(k, 0)}" for k in OUTCOMES))
    for r in results:
        if r["outcome"] not in CORRECT:
            print(f"  {r['outcome']:8} {r['function']:22} {r['label']:45} expected {r['expected']}; {r['detail']}")


if __name__ == "__main__":
    main(sys.argv[1:])
