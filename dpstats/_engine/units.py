"""Privacy units at the entry points: the identifiers taken from the call, checked, and the rows bounded.

Every mechanism takes ``privacy_unit=`` (identifiers aligned with the rows: an array, a pandas/polars/dask
Series, or the name of a column of a DataFrame ``x``) and ``max_rows=`` (the public number of rows kept per unit).
:func:`take_units` reads them before anything else (a named column is then only the unit, never a released
value); :func:`bound_rows` keeps at most ``max_rows`` rows of each unit, chosen by a random key drawn from the
caller's random source (:mod:`dpstats._kernels.units`), on the data's engine.

**The neighbouring relation** with a privacy unit: two datasets are neighbours when they differ in all rows of one
unit (its rows may change, appear or disappear; the set of units stays). The number of units N is therefore public,
like n is for rows without a unit, and each unit has at least one row; the number of rows is not public, and no
count of kept or dropped rows is released anywhere (``Bounded.rows_bound`` = N·m is the public bound that error
bounds use instead).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._kernels.units import IdSummary, canonical_ids, convert_ids, describe_ids, id_target
from .._validation import check_int
from ..accounting.relation import Relation
from ..exceptions import DataValidationError, ParameterError
from .kinds import is_frame, is_lazy, library

__all__ = ["Bounded", "Units", "by_index", "canonical_units", "identifiers", "take_units", "unit_column"]


@dataclass(frozen=True)
class Units:
    """The privacy units of a call: one identifier per row (canonical NumPy, or a lazy dask array) and the public
    bound ``max_rows``."""

    ids: object
    max_rows: int
    canonical: bool = False  # whether ``ids`` were checked against the rows and made canonical (by ``aligned``)

    def aligned(self, rows: int, *, defer_missing: bool = False) -> Units:
        """The identifiers checked against the data's ``rows`` (a length mismatch raises) and canonical
        (:func:`~dpstats._kernels.units.canonical_ids`; lazy identifiers by the same rule on the Dask engine,
        :func:`canonical_units`): missing or mixed identifiers raise here, on either engine, before anything is read
        from the data. Done once: aligned units are returned as they are. ``defer_missing``: lazy floating-point
        identifiers are converted without a pass of their own, and the caller's pass counts the missing ones (NaN)
        and raises for them before anything is charged (:func:`dpstats._kernels.units.unit_chunk_sums`); the units
        returned are then not marked aligned (a later ``aligned`` checks them)."""
        length = self.ids.shape[0]
        if length != rows:
            raise DataValidationError(
                f"privacy_unit must have one identifier per row of the data ({rows} rows); got {length} identifiers"
            )
        if self.canonical:  # read once at the release's entry point: the floors below trust it
            return self
        if is_lazy(self.ids):
            return Units(canonical_units(self.ids, defer_missing=defer_missing), self.max_rows, not defer_missing)
        return Units(canonical_ids(self.ids), self.max_rows, True)


@dataclass(frozen=True)
class Bounded:
    """Rows after contribution bounding: the kept rows of each array (at most ``max_rows`` per unit), the number of
    units N (public), and ``max_rows``. Without a privacy unit (``by_unit=False``) every row is its own unit: all
    rows, N = n, ``max_rows`` = 1."""

    arrays: tuple
    units: int
    max_rows: int
    by_unit: bool = True

    @property
    def rows_bound(self) -> int:
        """N·m: a public upper bound on the number of rows kept (the number itself is not public)."""
        return self.units * self.max_rows

    @property
    def relation(self) -> Relation:
        """The neighbouring relation of the release, for the ledger: ``Relation.UNIT`` with a privacy unit,
        ``Relation.ROW`` without."""
        return Relation.of(self.by_unit)

    def note(self) -> str:
        """The ledger note's part on the privacy unit (public values only; empty without a unit)."""
        if not self.by_unit:
            return ""
        return f"privacy unit: {self.units} units (public), at most {self.max_rows} rows each; "


def take_units(data, privacy_unit, max_rows, name: str = "x"):
    """``(data, Units or None)``: the privacy units of a call, and the data without a unit column.

    ``privacy_unit`` None (and ``max_rows`` None) means one row per unit, as without this parameter. A string
    names a column of the DataFrame ``data``, which is taken out of it. Raises a
    :class:`~dpstats.exceptions.ParameterError` naming the parameter for a missing or invalid ``max_rows``, a
    column that is not there, or a column name without a DataFrame.
    """
    if isinstance(privacy_unit, Units):  # read at an entry point above: handed on as they are
        return data, privacy_unit
    if privacy_unit is None:
        if max_rows is not None:
            raise ParameterError(
                "max_rows applies only with privacy_unit (the identifiers of the people the rows belong to); "
                f"got max_rows={max_rows!r} and no privacy_unit"
            )
        return data, None
    if max_rows is None:
        raise ParameterError(
            "privacy_unit needs max_rows: the public number of rows kept per unit (each unit's rows beyond it are "
            "dropped, chosen at random); choose it without looking at the data"
        )
    max_rows = check_int(max_rows, "max_rows", low=1)
    if isinstance(privacy_unit, str):
        data, ids = unit_column(data, privacy_unit, name)
    else:
        ids = identifiers(by_index(privacy_unit, data, "privacy_unit"))
    return data, Units(ids, max_rows)


def unit_column(data, column: str, name: str):
    """``(data without the column, its identifiers)`` for a privacy unit given as a column name of a DataFrame."""
    columns = getattr(data, "columns", None)
    if columns is None or not is_frame(data):
        raise ParameterError(
            f"privacy_unit={column!r} names a column, which needs a DataFrame {name}; pass the identifiers "
            "themselves (an array or a Series aligned with the rows) otherwise"
        )
    if column not in list(columns):
        raise ParameterError(f"privacy_unit={column!r} is not a column of {name}; its columns are {list(columns)}")
    ids = data[column]
    rest = [c for c in columns if c != column]
    if not rest:
        raise ParameterError(f"{name} has no column besides the privacy unit {column!r}: nothing to release")
    return data[rest], identifiers(ids)


def identifiers(ids, name: str = "privacy_unit"):
    """Identifiers (privacy units, group keys) as a NumPy array (pandas/polars Series, lists; missing values as
    None or NaN) or a dask array (dask collections stay lazy). A list or tuple becomes an object array, element by
    element, unless all its elements are integers: ``np.asarray`` would merge kinds (``[2**53 + 1, 0.5]`` would
    round the integer; ``[1, "a"]`` would turn 1 into ``"1"``; ``"a\\x00"`` would lose its NUL), and
    :func:`~dpstats._kernels.units.canonical_ids` decides what each element is. Raises a
    :class:`~dpstats.exceptions.ParameterError` naming ``name`` and the type received for anything that is not one
    identifier per row (a DataFrame, a set or a mapping, a generator, a scalar)."""
    if is_frame(ids):
        columns = len(getattr(ids, "columns", ()))
        raise ParameterError(
            f"{name} must be one identifier per row (a Series, an array or a list) or a column name; got a "
            f"DataFrame with {columns} column(s): pass one column, e.g. frame[column], or its name"
        )
    if is_lazy(ids):
        if not hasattr(ids, "to_dask_array"):
            return ids
        if getattr(ids.dtype, "kind", "O") not in "biuf":  # strings: as Python objects (dask's own conversion warns)
            ids = ids.astype(object)
        return ids.to_dask_array(lengths=True)
    lib = library(ids)
    if lib == "pandas":
        if getattr(ids.dtype, "kind", "O") not in "biuf":  # labels (object, string, category): missing as None
            return ids.astype(object).where(ids.notna(), None).to_numpy(dtype=object)
        return ids.to_numpy(dtype=np.float64, na_value=np.nan) if ids.isna().any() else ids.to_numpy()
    if lib == "polars":
        return np.asarray(ids.to_list(), dtype=object) if ids.null_count() else ids.to_numpy()
    if isinstance(ids, np.ndarray):
        return ids
    if hasattr(ids, "__array__") and not isinstance(ids, Sequence):  # another array type (pandas Index, arrow)
        return np.asarray(ids)
    if isinstance(ids, (str, bytes, set, frozenset, Mapping)) or not hasattr(ids, "__len__"):
        unordered = " (unordered: it cannot be aligned with the rows)" if isinstance(ids, (set, frozenset)) else ""
        raise ParameterError(
            f"{name} must be identifiers aligned with the rows (an array, a list, or a pandas, polars or dask "
            f"Series) or a column name; got a value of type {type(ids).__name__}{unordered}"
        )
    try:
        values = np.asarray(ids)
    except ValueError:  # ragged: one object per element below
        values = np.empty(0, dtype=object)
    if values.ndim == 1 and values.dtype.kind in "biu":
        return values
    out = np.empty(len(ids), dtype=object)
    for i, v in enumerate(ids):  # element by element: a tuple stays one (refused) element
        out[i] = v
    return out


def by_index(values, data, name: str):
    """``values`` (identifiers or keys of the rows of ``data``) aligned with ``data`` as pandas aligns them.

    When both are pandas objects with an index (``values`` a Series, ``data`` a Series or DataFrame), pandas pairs
    a row with the identifier of the same index label, not of the same position. So: equal indexes (the same
    labels in the same order) are used as they are; the same labels, each once, in another order (a sorted or
    shuffled table) are reordered to ``data``'s index; anything else (labels missing on either side, repeated
    labels in a different order) raises a :class:`~dpstats.exceptions.ParameterError` naming ``name`` (a
    positional reading would give rows to the wrong people). Other inputs (arrays, lists, polars or dask Series,
    NumPy data) are positional: returned as they are."""
    if library(values) != "pandas" or library(data) != "pandas" or is_frame(values) or is_lazy(data):
        return values
    mine, theirs = getattr(values, "index", None), getattr(data, "index", None)
    if mine is None or theirs is None or mine.equals(theirs):
        return values
    if mine.is_unique and theirs.is_unique and len(mine) == len(theirs) and bool(theirs.isin(mine).all()):
        return values.reindex(theirs)
    missing = int(np.count_nonzero(~theirs.isin(mine)))
    raise ParameterError(
        f"{name} is a pandas Series whose index is not the data's: pandas aligns them by index label, and "
        f"{missing} of the data's {len(theirs)} row label(s) are not in it"
        + ("" if missing else " (or labels repeat, in a different order)")
        + f"; pass {name} with the data's index (e.g. the data's own column, or {name}.reindex(data.index)), "
        f"or positional identifiers ({name}.to_numpy())"
    )


def canonical_units(ids, name: str = "privacy_unit", *, defer_missing: bool = False):
    """Lazy identifiers in the canonical form of :func:`dpstats._kernels.units.canonical_ids`, by the same rule.

    Where the dtype decides the rule (booleans and integers that int64 holds: int64, nothing to refuse; floats
    with ``defer_missing``: float64, the missing ones counted by the caller's own pass) every block is converted
    without reading the identifiers first. Otherwise every block is described
    (:func:`~dpstats._kernels.units.describe_ids`: counts only), the descriptions are added and checked on the
    client (missing or mixed identifiers raise here, before anything is computed from the data), and every block
    is converted to the one kind they decide (int64, float64, or strings as Python objects). So equal identifiers
    are equal values in every partition (7 and 7.0, -0.0 and 0.0 are one unit, as in memory), the shuffle by unit
    puts them together, and the kept rows are the in-memory engine's."""
    if ids.ndim != 1:
        raise DataValidationError(f"{name} must be 1-D (one identifier per row); got shape {ids.shape}")
    target = _dtype_target(ids.dtype, defer_missing)
    if target is None:
        import dask

        describe = dask.delayed(describe_ids, pure=True)
        summaries = dask.compute(*(describe(block) for block in ids.to_delayed().ravel()))
        target = id_target(sum(summaries, IdSummary()), name)
    dtype = np.dtype(object) if target == "str" else np.dtype(target)
    return ids.map_blocks(_canonical_block, target, dtype=dtype, meta=np.empty(0, dtype=dtype))


def _dtype_target(dtype: np.dtype, defer_missing: bool) -> str | None:
    """The canonical kind that a dtype decides without reading the identifiers (what :func:`id_target` would
    decide for any values of it): int64 for booleans and integers of at most 63 bits, float64 for floats when the
    missing ones are counted later; None when the values must be described first."""
    if dtype.kind in "bi" or (dtype.kind == "u" and dtype.itemsize < 8):
        return "int64"
    if dtype.kind == "f" and defer_missing:
        return "float64"
    return None


def _canonical_block(block: np.ndarray, target: str) -> np.ndarray:
    values = convert_ids(np.asarray(block), target)
    return values.astype(object) if target == "str" else values
