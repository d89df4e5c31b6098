"""Declared parameter constraints: what a release accepts for each parameter, checked once at its entry point.

After scikit-learn's ``validate_params`` (``Interval``, ``StrOptions``): each release declares, in
:mod:`dpstats.registry`, one :class:`Constraint` per parameter it takes; the release's entry point checks every
declared parameter before anything else (before the data are read and before anything is charged) and hands the
body the normalised values (a float ε, a ``numpy.random.Generator``, ...), which the floors below trust.

Each constraint also says which values it refuses (:meth:`Constraint.invalid`): the bad-input battery
(``tests/_battery.py``) is generated from the declarations, as scikit-learn's ``generate_invalid_param_val`` does.

Parameters whose check needs the data (bounds that may name a table's columns, ``q`` against the grid, ``k``
against the number of columns) are declared with :class:`Checked` (the body checks them, once) and still list
their invalid values for the battery.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from ._validation import check_choice, check_delta, check_epsilon, check_flag, check_int, warn_caller
from .accounting import DEFAULT_DELTA, check_accountant
from .exceptions import ParameterError
from .noise.random import check_rng

__all__ = [
    "AccountantOrNone",
    "Checked",
    "Components",
    "Constraint",
    "Data",
    "Delta",
    "Epsilon",
    "Flag",
    "Integer",
    "NoneOr",
    "NormBound",
    "OneOf",
    "Options",
    "RandomSource",
    "Real",
]


class Constraint:
    """What one parameter accepts. ``check(value, name)`` returns the normalised value or raises a
    :class:`~dpstats.exceptions.ParameterError` naming ``name``, the value and what is allowed; ``invalid()``
    lists values it refuses (label -> value), for the bad-input battery; ``str()`` says what is allowed."""

    #: Whether the entry point checks it (False: the body does, once, where it needs the data).
    checks = True

    def check(self, value, name: str):
        return value

    def invalid(self) -> dict[str, object]:
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"


class Epsilon(Constraint):
    """ε: a finite real number >= :data:`dpstats._validation.MIN_EPSILON`."""

    def check(self, value, name):
        return check_epsilon(value, name)

    def invalid(self):
        return {
            "0": 0,
            "-1": -1.0,
            "nan": math.nan,
            "inf": math.inf,
            "string": "1",
            "bool": True,
            "None": None,
            "1e-13": 1e-13,
            "list": [1.0],
            "complex": 1j,
        }

    def __str__(self):
        return "a finite number >= 1e-12"


class Delta(Constraint):
    """δ: 0 <= δ < 1. ``use``: ``"either"`` (δ = 0 pure, δ > 0 Gaussian), ``"pure"`` (the release adds no
    Gaussian noise: a δ > 0 is an error, never ignored), ``"approx"`` (the release needs δ > 0), or ``"method"``:
    it depends on the parameter ``by`` (``uses``: method -> one of the three), and ``None``, the default, means
    the method's own default.

    **One rule for the default** (:attr:`default`, every release): the default noise decides it — 0 (pure ε-DP)
    where it is Laplace-type or an exponential mechanism, :data:`dpstats.accounting.DEFAULT_DELTA` (1e-6, below
    1/n for any n up to a million) where it is Gaussian (``default=DEFAULT_DELTA`` for a release that takes
    either, Gaussian by default); and for a release whose methods differ, ``None``: the default of the method
    chosen (:meth:`default_for`). A δ given to a method that cannot use it is an error, never ignored."""

    def __init__(
        self,
        use: str = "either",
        *,
        default: float | None = None,
        by: str | None = None,
        uses: Mapping[str, str] | None = None,
        defaults: Mapping[str, float] | None = None,
        lenient: bool = False,
    ):
        self.use = check_choice(use, "use", ("either", "pure", "approx", "method"))
        self.by, self.uses, self.defaults, self.lenient = by, dict(uses or {}), dict(defaults or {}), lenient
        if (use == "method") != bool(by and uses):
            raise ValueError("Delta('method') needs by= (the method parameter) and uses= (method -> use)")
        rule = {"pure": 0.0, "approx": DEFAULT_DELTA, "method": None}.get(use)
        if default is not None and (use != "either" or default not in (0.0, DEFAULT_DELTA)):
            raise ValueError("an explicit default is for use='either': 0 (Laplace by default) or DEFAULT_DELTA")
        self._default = default if use == "either" and default is not None else (0.0 if use == "either" else rule)

    @property
    def default(self) -> float | None:
        """The default δ of the rule (class docstring)."""
        return self._default

    def default_for(self, method) -> float:
        """With ``use="method"``: the default δ of ``method`` (0 if it can be pure and nothing else is said)."""
        use = self.uses[method]
        return DEFAULT_DELTA if use == "approx" else self.defaults.get(method, 0.0)

    def check(self, value, name):
        if value is None and self.use == "method":
            return None
        return _delta_for(self.use, check_delta(value, name), value, name)

    def finish(self, arguments: dict, name: str) -> None:
        """With ``use="method"``: the method's own default for None, and its use checked (after every parameter's
        own check, so the method is a valid one)."""
        if self.use != "method":
            return
        method = arguments[self.by]
        use = self.uses[method]
        value = arguments[name]
        if value is None:
            arguments[name] = self.default_for(method)
            return
        if self.lenient and use == "pure" and value > 0:
            warn_caller(
                f"{name}={value!r} is not used by {self.by}={method!r} (pure ε-DP: it adds no Gaussian noise, and "
                f"charges {name} = 0); passing {name} > 0 to it will be an error in the next release: pass {name}=0 "
                "or leave it out",
                DeprecationWarning,
            )
            arguments[name] = 0.0
            return
        try:
            _delta_for(use, value, value, name)
        except ParameterError as err:
            raise ParameterError(f"{err} ({self.by}={method!r})") from None

    def invalid(self):
        bad = {"-0.1": -0.1, "1": 1, "2": 2.0, "nan": math.nan, "string": "0", "bool": True, "j": 1j}
        if self.use != "method":
            bad["None"] = None
        if self.use == "pure":
            bad["1e-6 (pure)"] = 1e-6
        if self.use == "approx":
            bad["0 (needs > 0)"] = 0.0
        return bad

    def __str__(self):
        uses = {"either": "0 <= delta < 1", "pure": "0", "approx": "0 < delta < 1"}
        if self.use == "method":
            return f"None or a number in [0, 1) that {self.by} can use"
        return uses[self.use]


def _delta_for(use: str, delta: float, value, name: str) -> float:
    """``delta`` if a release of this ``use`` can take it, else a ParameterError naming ``name``."""
    if use == "pure" and delta != 0:
        raise ParameterError(
            f"{name} must be 0: this release adds no Gaussian noise (pure ε-DP), so a {name} > 0 could not be "
            f"used; got {value!r}"
        )
    if use == "approx" and delta == 0:
        raise ParameterError(
            f"{name} must be a number with 0 < {name} < 1: this release adds Gaussian noise, which needs {name} > 0; "
            f"got {value!r}"
        )
    return delta


class Flag(Constraint):
    """True or False (a NumPy bool too); never the truth value of a string, a number or an array."""

    def check(self, value, name):
        return check_flag(value, name)

    def invalid(self):
        return {
            "'no'": "no",
            "'yes'": "yes",
            "1": 1,
            "0": 0,
            "None": None,
            "[True]": [True],
            "array": np.array([True, False]),
            "1.0": 1.0,
        }

    def __str__(self):
        return "True or False"


class Integer(Constraint):
    """An integer in [low, high] (``high`` None: unbounded)."""

    def __init__(self, low: int = 1, high: int | None = None):
        self.low, self.high = low, high

    def check(self, value, name):
        return check_int(value, name, low=self.low, high=self.high)

    def invalid(self):
        bad = {f"{self.low - 1}": self.low - 1, "1.5": 1.5, "'2'": "2", "True": True, "None": None}
        if self.high is not None:
            bad[f"{self.high + 1}"] = self.high + 1
        return bad

    def __str__(self):
        return f"an integer >= {self.low}" if self.high is None else f"an integer in [{self.low}, {self.high}]"


class Real(Constraint):
    """A finite real number in an interval: ``low``/``high`` (None: unbounded), ``closed`` one of ``"both"``,
    ``"left"``, ``"right"``, ``"neither"``."""

    def __init__(self, low: float | None = None, high: float | None = None, closed: str = "neither"):
        self.low, self.high = low, high
        self.closed = check_choice(closed, "closed", ("both", "left", "right", "neither"))

    def _inside(self, x: float) -> bool:
        left = self.low is None or (x >= self.low if self.closed in ("both", "left") else x > self.low)
        right = self.high is None or (x <= self.high if self.closed in ("both", "right") else x < self.high)
        return left and right

    def check(self, value, name):
        if isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value):
            if self._inside(float(value)):
                return float(value)
        raise ParameterError(f"{name} must be {self.allowed(name)}; got {value!r}")

    def allowed(self, name: str = "x") -> str:
        """What is allowed, in words (``name``: the parameter, e.g. "a number with 0 < q <= 1")."""
        low = "<=" if self.closed in ("both", "left") else "<"
        high = "<=" if self.closed in ("both", "right") else "<"
        if self.low is not None and self.high is not None:
            return f"a number with {self.low:g} {low} {name} {high} {self.high:g}"
        if self.low is not None:
            return f"a finite number {'>=' if low == '<=' else '>'} {self.low:g}"
        if self.high is not None:
            return f"a finite number {high} {self.high:g}"
        return "a finite number"

    def invalid(self):
        bad = {"nan": math.nan, "inf": math.inf, "'1'": "1", "True": True, "None": None, "complex": 1j}
        for edge, side in ((self.low, "left"), (self.high, "right")):
            if edge is not None and self.closed not in ("both", side):
                bad[f"{edge} (edge)"] = edge
            if edge is not None:
                bad[f"beyond {edge}"] = edge - 1 if side == "left" else edge + 1
        return bad

    def __str__(self):
        return self.allowed()


class Options(Constraint):
    """One of a fixed set of values (names, usually)."""

    def __init__(self, *choices):
        self.choices = choices

    def check(self, value, name):
        return check_choice(value, name, self.choices)

    def invalid(self):
        return {"unknown name": "no such option", "None": None, "1": 1, "list": list(self.choices[:1])}

    def __str__(self):
        return "one of " + ", ".join(repr(c) for c in self.choices)


class NoneOr(Constraint):
    """None, or a value ``inner`` accepts."""

    def __init__(self, inner: Constraint):
        self.inner = inner

    def check(self, value, name):
        return None if value is None else self.inner.check(value, name)

    def invalid(self):
        return {label: v for label, v in self.inner.invalid().items() if v is not None}

    def __str__(self):
        return f"None or {self.inner}"


class OneOf(Constraint):
    """A value one of ``constraints`` accepts (tried in order)."""

    def __init__(self, *constraints: Constraint):
        self.constraints = constraints

    def check(self, value, name):
        for constraint in self.constraints:
            try:
                return constraint.check(value, name)
            except ParameterError:
                continue
        raise ParameterError(f"{name} must be {self}; got {value!r}")

    def invalid(self):
        found = {}
        for constraint in self.constraints:
            for label, value in constraint.invalid().items():
                if not any(_accepts(c, value) for c in self.constraints):
                    found[label] = value
        return found

    def __str__(self):
        return " or ".join(str(c) for c in self.constraints)


def _accepts(constraint: Constraint, value) -> bool:
    try:
        constraint.check(value, "value")
    except ParameterError:
        return False
    return True


class RandomSource(Constraint):
    """None (a cryptographically secure source), a non-negative int seed, a ``SeedSequence`` or a
    ``numpy.random.Generator``; normalised to a Generator."""

    def check(self, value, name):
        return check_rng(value, name)

    def invalid(self):
        return {"-1": -1, "1.5": 1.5, "'seed'": "seed", "RandomState": np.random.RandomState(0), "list": [1, 2]}

    def __str__(self):
        return "None, a non-negative int seed or a numpy.random.Generator"


class AccountantOrNone(Constraint):
    """None or a :class:`dpstats.Accountant` (or a branch of a parallel block)."""

    def check(self, value, name):
        return check_accountant(value)

    def invalid(self):
        return {"'acc'": "acc", "1.0": 1.0, "object": object()}

    def __str__(self):
        return "None or a dpstats.Accountant"


class Checked(Constraint):
    """A parameter the body checks itself, once, where it needs the data (``what`` says what is allowed); its
    declared ``bad`` values feed the battery."""

    checks = False

    def __init__(self, what: str, bad: Mapping[str, object] | None = None):
        self.what, self.bad = what, dict(bad or {})

    def invalid(self):
        return dict(self.bad)

    def __str__(self):
        return self.what


class Components(Checked):
    """k, the number of components or the rank: an integer in [1, d], checked where d (the data's columns) is
    known."""

    def __init__(self, what: str = "an integer in [1, d] (d: the number of columns)"):
        super().__init__(what, {"0": 0, "1.5": 1.5, "'2'": "2", "True": True, "None": None, "too many": 10**6})


class NormBound(Constraint):
    """``norm_bound``: None (rows of norm <= 1), a public R > 0, or ``"private"`` (bought with a share of ε)."""

    def check(self, value, name):
        if value is None or (isinstance(value, str) and value == "private"):
            return value
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            if math.isfinite(value) and value > 0:
                return float(value)
            raise ParameterError(f"{name} must be a finite number > 0 (or None, or 'private'); got {value!r}")
        raise ParameterError(f"{name} must be None, a number > 0 or 'private'; got {value!r}")

    def invalid(self):
        return {"'max'": "max", "-2": -2.0, "0": 0.0, "inf": math.inf, "True": True, "list": [1.0]}

    def __str__(self):
        return "None, a number > 0 or 'private'"


class Data(Checked):
    """A data parameter (read through :mod:`dpstats._engine`, checked in the statistic's own pass); ``kind`` names
    its shape for the battery: ``"values"`` (1-D numbers, or a table's numeric columns), ``"matrix"`` (n × d rows),
    ``"labels"`` (one label per row), ``"records"`` (any rows: a count reads no values), ``"samples"`` (a sequence
    of at least two 1-D samples of numbers: the k-sample tests of :mod:`dpstats.hypothesis`), ``"sample"`` (one
    sample of a two-sample test: 1-D numbers, possibly empty, as its size is private)."""

    def __init__(self, kind: str, what: str = ""):
        self.kind = check_choice(kind, "kind", ("values", "matrix", "labels", "records", "samples", "sample"))
        super().__init__(what or kind)


# ----------------------------------------------------------------------------- parameters many releases share

BAD_BOUNDS = {
    "None": None,
    "reversed": (1, 0),
    "equal": (0.5, 0.5),
    "nan": (0, math.nan),
    "inf": (0, math.inf),
    "one value": (0,),
    "three values": (0, 1, 2),
    "string": "ab",
    "string pair": ("0", "1"),
    "bool pair": (False, True),
    "complex side": (0, 1j),
    "None side": (0, None),
    "overflowing width": (-1e308, 1e308),
    "scalar": 1.0,
}


def privacy(delta: str = "either") -> dict[str, Constraint]:
    """ε and δ (``delta``: the use of :class:`Delta`), the random source and the accountant."""
    return {"epsilon": Epsilon(), "delta": Delta(delta), "rng": RandomSource(), "accountant": AccountantOrNone()}


#: A privacy unit (identifiers aligned with the rows, or a column name) and the public number of rows kept per unit.
UNITS = {
    "privacy_unit": Checked(
        "None, identifiers aligned with the rows (array or Series), or the name of a column of a DataFrame",
        {"a dict": {"a": 1}, "a float": 1.5},
    ),
    "max_rows": NoneOr(Integer(1)),
}

#: The noise: exact integer noise on a public grid, or the papers' floating-point noise (warns).
NOISE = {"noise": Options("exact", "float")}

#: Bounds on every value: a pair, per-column pairs, or a dict by column name for a table.
BOUNDS = Checked(
    "a pair (lower, upper) of numbers or of arrays (one per column), or a dict {column: (lo, hi)} for a table",
    BAD_BOUNDS,
)


def grouping(max_groups: int) -> dict[str, Constraint]:
    """``by`` (keys, or a column name), ``categories`` (the public keys), ``max_groups`` (keys kept per unit, at most
    ``max_groups``) and ``selection`` (how unknown keys are selected)."""
    return {
        "by": Checked("None, keys aligned with the rows (array or Series), or the name of a column of a DataFrame"),
        "categories": Checked(
            "None or a list of unique, hashable public keys of one kind",
            {"a string": "ab", "empty": [], "duplicates": ["a", "a"], "a missing key": ["a", None]},
        ),
        "max_groups": NoneOr(Integer(1, max_groups)),
        "selection": NoneOr(Options("laplace", "gaussian", "weighted")),
    }
