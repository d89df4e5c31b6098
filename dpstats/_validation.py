"""Checks shared by every mechanism: privacy parameters, bounds, and the shape of in-memory arrays.

Each check raises a :class:`~dpstats.exceptions.ParameterError` or
:class:`~dpstats.exceptions.DataValidationError` (both ``ValueError``) whose message
names the parameter, the value and what is allowed.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from pathlib import Path

import numpy as np

from .exceptions import DataValidationError, ParameterError


def _is_real_scalar(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


#: The smallest ε accepted: below it the noise of any release exceeds 2^50 times its sensitivity (and a
#: subnormal ε would make scales overflow).
MIN_EPSILON = 1e-12


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking it is finite and >= :data:`MIN_EPSILON`."""
    if type(epsilon) is float and MIN_EPSILON <= epsilon < math.inf:  # the common case, the same test
        return epsilon
    if not _is_real_scalar(epsilon) or not np.isfinite(epsilon) or epsilon < MIN_EPSILON:
        raise ParameterError(f"{name} must be a finite number >= {MIN_EPSILON:g}; got {epsilon!r}")
    return float(epsilon)


def check_delta(delta, name: str = "delta") -> float:
    """Return ``delta`` as a float after checking 0 <= delta < 1."""
    if type(delta) is float and 0 <= delta < 1:  # the common case, the same test (NaN fails it)
        return delta
    if not _is_real_scalar(delta) or not np.isfinite(delta) or not 0 <= delta < 1:
        raise ParameterError(f"{name} must be a number with 0 <= {name} < 1; got {delta!r}")
    return float(delta)


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float after checking it is finite and > 0."""
    if not _is_real_scalar(value) or not np.isfinite(value) or value <= 0:
        raise ParameterError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def check_int(value, name: str, *, low: int = 1, high: int | None = None) -> int:
    """Return ``value`` as an int after checking ``low <= value <= high``."""
    allowed = f"an integer >= {low}" if high is None else f"an integer in [{low}, {high}]"
    if not isinstance(value, numbers.Integral) or isinstance(value, bool):
        raise ParameterError(f"{name} must be {allowed}; got {value!r}")
    if value < low or (high is not None and value > high):
        raise ParameterError(f"{name} must be {allowed}; got {value!r}")
    return int(value)


def check_choice(value, name: str, choices) -> str:
    """Return ``value`` after checking it is one of ``choices`` (of the same type: an array, a list or a number is
    never compared element by element with a name)."""
    if not any(isinstance(value, type(c)) and bool(value == c) for c in choices):
        allowed = ", ".join(repr(c) for c in choices)
        raise ParameterError(f"{name} must be one of {allowed}; got {value!r}")
    return value


#: dtype kinds of numeric data: booleans, signed and unsigned integers, real floating point.
NUMERIC_KINDS = "biuf"

_NOT_NUMERIC = {
    "c": "complex numbers (take the real part or the modulus yourself if that is what you mean)",
    "U": "strings (they are never parsed as numbers: convert them yourself; categorical labels are counted by "
    "dps.histogram(x, epsilon, categories=[...]))",
    "S": "bytes (convert them to numbers yourself)",
    "O": "Python objects (convert them to a numeric dtype first)",
    "M": "datetimes (convert them to numbers in a unit you choose, e.g. days since a public origin)",
    "m": "time differences (convert them to numbers in a unit you choose, e.g. seconds)",
    "V": "structured records (select a numeric field)",
}


def check_numeric_dtype(dtype, name: str) -> None:
    """Raise :class:`DataValidationError` unless ``dtype`` holds real numbers or booleans (:data:`NUMERIC_KINDS`).

    The rule every data argument keeps, whatever its engine: complex numbers, strings, bytes, Python objects,
    datetimes and time differences are refused with an error naming the argument, never converted silently."""
    dtype = np.dtype(dtype)
    if dtype.kind not in NUMERIC_KINDS:
        what = _NOT_NUMERIC.get(dtype.kind, f"values of dtype {dtype}")
        raise DataValidationError(f"{name} must hold real numbers or booleans; got {what}")


def check_array(x, name: str, *, ndim: tuple[int, ...] = (1, 2), min_rows: int = 1) -> np.ndarray:
    """Return ``x`` as a float64 array with an allowed number of dimensions.

    ``x`` must hold real numbers or booleans (:func:`check_numeric_dtype`). Finiteness is not checked here: the
    statistics check it in the same pass that checks the declared bounds or row norms. Data that may be a Dask
    collection go through :func:`dpstats._engine.as_array` instead.
    """
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as err:
        raise DataValidationError(
            f"{name} must be numeric array-like with rows of equal length; got {type(x).__name__}"
        ) from err
    if arr.dtype.kind == "O" and arr.ndim == 0:
        raise DataValidationError(f"{name} must be numeric array-like; got {type(x).__name__}")
    check_numeric_dtype(arr.dtype, name)
    arr = arr.astype(np.float64, copy=False)
    if arr.ndim not in ndim:
        allowed = " or ".join(f"{d}-D" for d in ndim)
        raise DataValidationError(f"{name} must be {allowed}; got an array of shape {arr.shape}")
    rows = arr.shape[0] if arr.ndim else 1
    if rows < min_rows:
        raise DataValidationError(f"{name} must have at least {min_rows} row(s); got shape {arr.shape}")
    return arr


def check_columns(X, name: str = "X"):
    """Raise :class:`DataValidationError` unless the 2-D ``X`` has at least one column."""
    if X.shape[1] < 1:
        raise DataValidationError(f"{name} must have at least one column; got shape {X.shape}")
    return X


def check_flag(value, name: str) -> bool:
    """Return ``value`` as a bool after checking it is one (``True``, ``False`` or a NumPy bool): a flag such as
    ``clip`` is never read from the truth value of a string, a number or an array."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ParameterError(f"{name} must be True or False; got {value!r}")


def check_real_array(value, name: str, *, allowed: str) -> np.ndarray:
    """Return ``value`` (a real number, or array-like of real numbers) as a float64 array; anything else (strings,
    booleans, complex numbers, None, objects) raises :class:`ParameterError` naming ``name`` and saying what is
    ``allowed``. Numbers are never parsed from strings."""
    if _is_real_scalar(value) and not isinstance(value, np.bool_):
        try:
            return np.asarray(float(value))
        except OverflowError as err:
            raise ParameterError(f"{name} must be {allowed}; got {value!r}, which overflows a float") from err
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise ParameterError(f"{name} must be {allowed}; got {value!r}") from err
    if arr.dtype.kind not in "iuf":
        raise ParameterError(f"{name} must be {allowed}; got {value!r}")
    return arr.astype(np.float64)


def check_finite(x: np.ndarray, name: str) -> np.ndarray:
    """Raise if ``x`` holds NaN or infinite values."""
    if not np.isfinite(x).all():
        raise_nonfinite(name, int(np.size(x) - np.count_nonzero(np.isfinite(x))))
    return x


def raise_nonfinite(name: str, count: int) -> None:
    """Raise the error for ``count`` NaN or infinite values in ``name``."""
    raise DataValidationError(f"{name} contains {count} NaN or infinite value(s); remove or impute them")


def check_bounds(bounds, name: str = "bounds") -> tuple[np.ndarray, np.ndarray]:
    """Return ``(lower, upper)`` as float arrays after checking lower < upper, both finite.

    ``bounds`` is a pair; each side is a scalar or an array broadcastable to the
    shape of one record (for example one value per column).
    """
    pair = _float_pair(bounds)
    if pair is not None:
        return np.array(pair[0]), np.array(pair[1])
    if bounds is None:
        raise ParameterError(f"{name} is required: pass (lower, upper) chosen without looking at the data")
    allowed = "a pair (lower, upper) of numbers (or of arrays of numbers, one per coordinate)"
    if isinstance(bounds, (str, bytes)) or not hasattr(bounds, "__len__") or len(bounds) != 2:
        raise ParameterError(f"{name} must be {allowed}; got {bounds!r}")
    lower, upper = (check_real_array(side, name, allowed=allowed) for side in bounds)
    try:
        ordered = bool((lower < upper).all())
    except ValueError as err:
        raise ParameterError(f"{name}: lower and upper must have the same shape; got {bounds!r}") from err
    if not (np.isfinite(lower).all() and np.isfinite(upper).all()) or not ordered:
        raise ParameterError(f"{name} must be finite with lower < upper; got ({lower.tolist()}, {upper.tolist()})")
    with np.errstate(over="ignore"):
        width = upper - lower
    if not np.isfinite(width).all():
        raise ParameterError(f"{name} are too wide: upper - lower overflows a float; rescale the data")
    return lower, upper


_PLAIN = (int, float)


def _float_pair(bounds) -> tuple[float, float] | None:
    """``bounds`` as two floats when it is a tuple or list of two plain Python numbers (``int`` or ``float``
    exactly: not a bool, not a NumPy scalar) that :func:`check_bounds` accepts; None for anything else, which takes
    the general way (and its errors). The same checks in Python floats, which are IEEE doubles as float64 is: both
    finite, lower < upper, and upper − lower finite."""
    if type(bounds) not in (tuple, list) or len(bounds) != 2:
        return None
    lower, upper = bounds
    if type(lower) not in _PLAIN or type(upper) not in _PLAIN:
        return None
    try:
        lower, upper = float(lower), float(upper)
    except OverflowError:  # an int beyond the float range: the general way says so
        return None
    if lower < upper and math.isfinite(upper - lower):  # false for NaN; a finite difference needs finite ends
        return lower, upper
    return None


_PACKAGE = str(Path(__file__).resolve().parent)
#: The file name of the entry points :func:`dpstats._registry.declare` generates (library code without a file).
GENERATED = "<declared release "


def _in_library(filename: str) -> bool:
    return filename.startswith(GENERATED) or str(Path(filename).resolve()).startswith(_PACKAGE)


def warn_caller(message: str, category: type[Warning]) -> None:
    """Warn, attributing the warning to the first frame outside dpstats (the caller's line), however deep inside
    the library the warning is raised (a declared release's generated entry point is inside)."""
    level, frame = 2, sys._getframe(1)  # stacklevel 2: the function that called warn_caller
    while frame is not None and _in_library(frame.f_code.co_filename):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)
