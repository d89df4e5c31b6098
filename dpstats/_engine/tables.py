"""Tables in, named results out: pandas and polars objects at the entry points.

Every function that takes data accepts a pandas or polars ``Series`` or
``DataFrame`` as well as array-likes, and a dask DataFrame or Series as a
pandas one (its partitions are pandas objects: the same names, the same
results, the data streamed). This module is the one place that knows about them:

* :func:`from_table` turns a table into a float64 array (numeric columns only:
  a string column raises an error that names it and says what to do; a dask
  table into a lazy dask array) and keeps what the output needs: the library,
  the column names, the Series' name.
* :class:`TableSource` names the results: per-column statistics of a DataFrame come
  back as a pandas Series indexed by column (a one-row polars DataFrame for
  polars, the polars idiom of ``df.mean()``), bounds and weights can be given
  per column as dicts, and PCA's d-row outputs carry the column names.
* :func:`labels` reads a column of categories for :func:`dpstats.histogram`.

pandas and polars are optional (the ``tables`` extra): a table is recognised by
the module its type comes from, so ``import dpstats`` imports neither, and a
library is imported only when one of its objects was passed in.

Column names, like bounds, are public: they are the schema, chosen by the
analyst, and appear in results, errors and warnings.
"""

from __future__ import annotations

import functools
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._validation import check_real_array
from ..exceptions import DataValidationError, ParameterError
from .kinds import is_frame, is_lazy, library
from .units import unit_column

__all__ = ["TableSource", "from_table", "labels", "named_rows"]


@dataclass(frozen=True)
class TableSource:
    """Where a table came from: its library, its column names (None for a Series) and its Series' name."""

    library: str
    columns: tuple[str, ...] | None
    name: object = None

    # ------------------------------------------------------------------ parameters given per column

    def records_axis(self, axis):
        """A DataFrame's records are its rows: ``axis`` None or 0 (anything else raises); a Series' axis as given."""
        if self.columns is None:
            return axis
        if axis not in (None, 0) or isinstance(axis, bool):
            raise ParameterError(f"axis must be None or 0 for a DataFrame (one person per row); got {axis!r}")
        return 0

    def per_column(self, value, name: str, *, pair: bool):
        """``value`` with a dict ``{column: ...}`` replaced by its entries in column order.

        ``pair=True`` (bounds): the entries are ``(lo, hi)`` and the result is
        ``(lower array, upper array)``; otherwise (weights) an array. Anything
        that is not a dict is returned unchanged.
        """
        if not isinstance(value, Mapping):
            return value
        if self.columns is None:
            raise ParameterError(f"{name} as a dict {{column: ...}} needs a DataFrame; pass a plain value for a Series")
        missing = [c for c in self.columns if c not in value]
        unknown = [c for c in value if c not in self.columns]
        if missing or unknown:
            raise ParameterError(
                f"{name} must have one entry per column of the DataFrame {list(self.columns)}; "
                f"missing {missing}, unknown {unknown}"
            )
        entries = [value[c] for c in self.columns]
        if not pair:
            return np.asarray(entries, dtype=object)
        for column, entry in zip(self.columns, entries, strict=True):
            if not (isinstance(entry, (tuple, list)) and len(entry) == 2):
                raise ParameterError(f"{name}[{column!r}] must be a pair (lo, hi); got {entry!r}")
        return [e[0] for e in entries], [e[1] for e in entries]

    # ------------------------------------------------------------------ naming results

    def per_column_result(self, values):
        """A per-column statistic: pandas Series indexed by column, or a one-row polars DataFrame; a Series'
        statistic (a scalar) is returned as it is."""
        if self.columns is None:
            return values
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if self.library == "pandas":
            import pandas as pd

            return pd.Series(values, index=pd.Index(self.columns))
        import polars as pl

        return pl.DataFrame({c: [v] for c, v in zip(self.columns, values.tolist(), strict=True)})

    def indexed(self, values, index):
        """A vector indexed by public labels (quantile levels, categories): a pandas Series with that index and
        the input Series' name, or a polars Series in the order of ``index``."""
        values = np.asarray(values)
        if self.library == "pandas":
            import pandas as pd

            return pd.Series(values, index=pd.Index(list(index)), name=self.name)
        import polars as pl

        return pl.Series("" if self.name is None else str(self.name), values)

    def per_level(self, matrix: np.ndarray, levels):
        """One row per level, one column per column of the input table (quantiles of every column, as pandas'
        ``df.quantile(levels)``): a pandas DataFrame indexed by the levels, or a polars DataFrame whose rows follow
        them."""
        matrix = np.asarray(matrix, dtype=np.float64)
        if self.library == "pandas":
            import pandas as pd

            return pd.DataFrame(matrix, index=pd.Index(list(levels)), columns=pd.Index(self.columns))
        import polars as pl

        return pl.DataFrame({c: matrix[:, j] for j, c in enumerate(self.columns)})

    def rows(self, matrix: np.ndarray, columns):
        """A matrix with one row per column of the input table (PCA's V or A): a pandas DataFrame indexed by the
        input's columns, or a polars DataFrame whose rows follow the input's columns."""
        columns = [str(c) for c in columns]
        if self.library == "pandas":
            import pandas as pd

            return pd.DataFrame(matrix, index=pd.Index(self.columns), columns=columns)
        import polars as pl

        return pl.DataFrame(np.asarray(matrix), schema=columns)


def table_library(x) -> str | None:
    """``"pandas"`` or ``"polars"`` for a table of theirs, ``"pandas"`` for a dask DataFrame or Series (whose
    partitions are pandas objects), else None (nothing is imported)."""
    lib = library(x)
    if lib is None and is_lazy(x) and (hasattr(x, "columns") or hasattr(x, "dtype")):
        lib = library(getattr(x, "_meta", None))  # the library of its partitions
    return lib


def check_numeric_columns(x, name: str) -> None:
    """Raise :class:`DataValidationError` naming the non-numeric columns of the pandas/polars/dask table ``x``
    (the check of :func:`from_table`, without the conversion)."""
    lib = table_library(x)
    if lib is None:
        return
    frame = is_frame(x)
    columns = tuple(x.columns) if frame else None
    dtypes = list(x.dtypes) if frame else [x.dtype]
    bad = [
        (c, str(d))
        for c, d in zip(columns or [getattr(x, "name", name)], dtypes, strict=True)
        if not _numeric_dtype(lib, d)
    ]
    if bad:
        listed = ", ".join(f"{c!r} ({d})" for c, d in bad)
        raise DataValidationError(
            f"{name} has non-numeric column(s) {listed}: select the numeric columns (for example "
            f"{name}[[...numeric columns...]]), or release the counts of a categorical column with "
            "dps.histogram(column, epsilon, categories=[...public list...])"
        )


def from_table(x, name: str):
    """``(array, TableSource)`` for a pandas/polars/dask Series or DataFrame, ``(x, None)`` for anything else.

    The array is float64 (a dask array for a dask table, its row chunks the partitions, counted: n is public);
    non-numeric columns raise :class:`DataValidationError` naming them. Missing values become NaN, which every
    mechanism refuses with a count (they are never dropped silently).
    """
    lib = table_library(x)
    if lib is None:
        return x, None
    if not hasattr(x, "dtype") and not is_frame(x):
        raise DataValidationError(f"{name} must be numeric array-like, a Series or a DataFrame; got {type(x).__name__}")
    check_numeric_columns(x, name)
    frame = is_frame(x)
    columns = tuple(x.columns) if frame else None
    values = _lazy_float(x) if is_lazy(x) else _to_float(x, lib)
    return values, TableSource(lib, columns, None if frame else getattr(x, "name", None))


def _numeric_dtype(lib: str, dtype) -> bool:
    if lib == "pandas":
        import pandas as pd

        return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    return dtype.is_numeric() or str(dtype) == "Boolean"


def _lazy_float(x):
    """A dask table's values as a lazy float64 dask array (pandas' missing values as NaN, as in memory)."""
    return x.astype(np.float64).to_dask_array(lengths=True)


def _to_float(x, lib: str) -> np.ndarray:
    if lib == "pandas":
        return x.to_numpy(dtype=np.float64, na_value=np.nan)
    return np.asarray(x.to_numpy(), dtype=np.float64)  # polars: nulls become NaN


def labels(x, name: str):
    """``(object array, TableSource or None)``: one category label per record, for a categorical histogram.

    Missing values (None, NaN, pandas NA, polars null) become None, which is in
    no public list of categories, so they are counted as outside it.
    """
    lib = library(x)
    if lib is not None and is_frame(x):
        raise DataValidationError(
            f"{name} must be one column (a Series); got a DataFrame with columns {list(x.columns)}: pass {name}[column]"
        )
    if lib == "pandas":
        values = x.astype(object).where(x.notna(), None).to_numpy(dtype=object)
        return values, TableSource(lib, None, x.name)
    if lib == "polars":
        return np.asarray(x.to_list(), dtype=object), TableSource(lib, None, x.name)
    values = np.asarray(x, dtype=object)
    if values.ndim != 1:
        raise DataValidationError(f"{name} must be 1-D (one label per record); got shape {values.shape}")
    return values, None


def _is_missing(value) -> bool:
    """None, a NaN, or pandas' NA and NaT: a missing value, never a label."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, numbers.Real) and value != value


def check_categories(categories, other) -> list:
    """The public categories as a list: non-empty, hashable, unique, with no missing value (None, NaN, NA), of one
    kind (strings or numbers), and ``other`` (if given) not among them."""
    if isinstance(categories, (str, bytes)) or not hasattr(categories, "__iter__"):
        raise ParameterError(f"categories must be a list of the public category labels; got {categories!r}")
    categories = list(categories)
    if not categories:
        raise ParameterError("categories must hold at least one label")
    try:
        unique = len(set(categories)) == len(categories)
    except TypeError as err:
        raise ParameterError(f"categories must be hashable labels; got {categories!r}") from err
    if not unique:
        raise ParameterError(f"categories must be unique; got {categories!r}")
    missing = sum(1 for c in categories if _is_missing(c))
    if missing:
        raise ParameterError(
            f"categories holds {missing} missing value(s) (None, NaN or NA): a missing value is not a key; list the "
            "public labels only (a histogram counts records outside them in other=)"
        )
    if any(isinstance(c, (str, bytes)) for c in categories) and any(isinstance(c, numbers.Number) for c in categories):
        kinds = sorted({type(c).__name__ for c in categories})
        raise ParameterError(f"categories must be labels of one kind (all strings or all numbers); got {kinds}")
    if other is not None and other in categories:
        raise ParameterError(f"other={other!r} is already one of the categories; choose another label")
    return categories


def check_weights(weights, shape: tuple[int, ...], table: TableSource | None) -> np.ndarray:
    """Per-coordinate budget weights as a float array of ``shape``: finite and > 0 (a dict per column for a
    DataFrame)."""
    if table is not None:
        weights = table.per_column(weights, "weights", pair=False)
        weights = list(weights) if isinstance(weights, np.ndarray) and weights.dtype == object else weights
    allowed = "positive numbers, one per coordinate of the release (a dict {column: weight} for a DataFrame)"
    try:
        array = np.broadcast_to(check_real_array(weights, "weights", allowed=allowed), shape)
    except ValueError as err:
        if isinstance(err, ParameterError):
            raise
        raise ParameterError(
            f"weights must be positive numbers, one per coordinate of the release {shape} (a dict "
            f"{{column: weight}} for a DataFrame); got {weights!r}"
        ) from err
    if not (np.isfinite(array).all() and (array > 0).all()):
        raise ParameterError(f"weights must be finite numbers > 0; got {np.asarray(weights).tolist()!r}")
    return array


def named_rows(columns: str):
    """Decorator for the PCA functions: a table first argument goes in as its float array, and the result (one
    row per column of the table) comes back named by :meth:`TableSource.rows`, with columns named after the table's
    (``columns="features"``: a d × d matrix) or ``pc1``, ``pc2``, ... (``columns="components"``). A
    ``privacy_unit=`` naming a column of the table is taken out of it first."""

    def decorate(function):
        @functools.wraps(function)
        def wrapper(X, *args, **kwargs):
            if isinstance(kwargs.get("privacy_unit"), str):  # a column of the table: only the unit, not data
                X, kwargs["privacy_unit"] = unit_column(X, kwargs["privacy_unit"], "X")
            values, table = from_table(X, "X")
            result = function(values, *args, **kwargs)
            if table is None or table.columns is None:
                return result
            names = table.columns if columns == "features" else [f"pc{i + 1}" for i in range(result.shape[1])]
            return table.rows(result, names)

        return wrapper

    return decorate
