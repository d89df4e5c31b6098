"""The result of a release with an interval: :class:`Estimate`, and the check of the level ``ci``."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._constraints import Constraint
from .._engine.kinds import is_frame, library
from ..exceptions import ParameterError

__all__ = ["Estimate", "Level", "check_level"]


def check_level(ci, name: str = "ci") -> float | None:
    """``ci`` as a float level strictly between 0 and 1, or None (no interval); anything else raises a
    :class:`~dpstats.exceptions.ParameterError` naming ``name``."""
    if ci is None:
        return None
    if isinstance(ci, (bool, np.bool_)) or not isinstance(ci, numbers.Real) or not math.isfinite(float(ci)):
        raise ParameterError(
            f"{name} must be None or a confidence level strictly between 0 and 1 (e.g. 0.95); got {ci!r}"
        )
    level = float(ci)
    if not 0.0 < level < 1.0:
        raise ParameterError(
            f"{name} must be a confidence level strictly between 0 and 1 (e.g. 0.95, not 95); got {ci!r}"
        )
    return level


class Level(Constraint):
    """The declared constraint of ``ci`` (:mod:`dpstats._constraints`): None, or a confidence level strictly between
    0 and 1 (:func:`check_level`)."""

    def check(self, value, name):
        return check_level(value, name)

    def invalid(self):
        return {
            "0": 0.0,
            "1": 1.0,
            "95": 95,
            "-0.1": -0.1,
            "nan": math.nan,
            "inf": math.inf,
            "'0.95'": "0.95",
            "True": True,
            "list": [0.95],
        }

    def __str__(self):
        return "None or a confidence level strictly between 0 and 1"


@dataclass(frozen=True, repr=False)
class Estimate:
    """A private estimate with a confidence interval for the population quantity it estimates.

    Attributes
    ----------
    estimate : float, numpy.ndarray, pandas.Series or polars.DataFrame
        What the call returns without ``ci`` (the same kind of object; computed with the estimate's share of the
        budget, the rest having gone to what the interval needs).
    ci : tuple (low, high), numpy.ndarray or DataFrame
        The interval: ``(low, high)`` for one value; for several (columns, keys), an array of shape (…, 2) or a
        DataFrame with columns ``"low"`` and ``"high"`` indexed like ``estimate``.
    level : float
        The confidence level: the interval covers the population quantity (``target``) with at least this
        probability, over the sampling of the data *and* the noise added (checked by simulation in dpstats'
        tests and benchmark).
    method : str
        How the interval is made (the method's name and its reference); the function's docstring derives it.
    std_error : float, array or Series, optional
        The standard error of the estimate (sampling and noise together) where the method has one; None
        otherwise.
    target : str
        The population quantity the interval covers, in words (e.g. "the population mean of x clipped to [0, 1]":
        with ``clip=True`` that is what it covers).
    pvalue : float, array or Series, optional
        Where the release tests a value beside its interval (the coefficients of a linear regression: H0 that a
        coefficient is 0, two-sided), the p-value of the test the interval inverts; None otherwise.
    f_statistic : float, optional
        Where the release tests all its slopes at once (a linear regression: H0 that every coefficient but the
        intercept is 0), the test's statistic, on the F scale (a Wald statistic divided by the number of slopes);
        None otherwise.
    f_pvalue : float, optional
        That joint test's p-value (named after statsmodels' ``f_pvalue``); None otherwise.
    """

    estimate: object
    ci: object
    level: float
    method: str
    std_error: object = None
    target: str = ""
    pvalue: object = None
    f_statistic: float | None = None
    f_pvalue: float | None = None

    @property
    def low(self):
        """The interval's lower end(s)."""
        return _end(self.ci, 0)

    @property
    def high(self):
        """The interval's upper end(s)."""
        return _end(self.ci, 1)

    def __repr__(self) -> str:
        lines = [
            f"Estimate({_short(self.estimate)},",
            f"         ci={_short(self.ci)} at level {self.level:g},",
            f"         method={self.method!r},",
        ]
        if self.std_error is not None:
            lines.append(f"         std_error={_short(self.std_error)},")
        if self.pvalue is not None:
            lines.append(f"         pvalue={_short(self.pvalue)},")
        if self.f_pvalue is not None:
            lines.append(f"         f_statistic={_short(self.f_statistic)}, f_pvalue={_short(self.f_pvalue)},")
        lines.append(f"         target={self.target!r})")
        return "\n".join(lines)


def _end(ci, i: int):
    if isinstance(ci, tuple):
        return ci[i]
    if is_frame(ci) and "low" in list(ci.columns):
        return ci["low" if i == 0 else "high"]
    return np.asarray(ci)[..., i]


def _short(value) -> str:
    """A one-line rendering of a value (floats with 6 significant digits, arrays and tables abridged)."""
    if isinstance(value, tuple):
        return "(" + ", ".join(_short(v) for v in value) + ")"
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, np.ndarray):
        return np.array2string(value, precision=6, threshold=12, separator=", ").replace("\n", "")
    rows = _rows(value)
    if rows is not None:
        text = "{" + ", ".join(f"{k!r}: {_short(v)}" for k, v in rows[:8]) + (", ...}" if len(rows) > 8 else "}")
        return text
    text = " ".join(str(value).split())
    return text if len(text) <= 160 else text[:157] + "..."


def _rows(value):
    """(label, value) pairs of a pandas Series or DataFrame (a row of a DataFrame as a tuple), or None."""
    if library(value) != "pandas":  # dpstats._engine.kinds asks, without importing pandas
        return None
    if not is_frame(value):
        return [(k, float(v)) for k, v in value.items()]
    return [(k, tuple(float(v) for v in row)) for k, row in zip(value.index, value.to_numpy(), strict=True)]
