"""What kind of object the data is, without importing any library: a pandas or polars table, or a dask collection."""

from __future__ import annotations

import sys

__all__ = ["LIBRARIES", "is_frame", "is_lazy", "library"]

LIBRARIES = ("pandas", "polars")


def library(x) -> str | None:
    """``"pandas"`` or ``"polars"`` if ``x`` is one of their objects, else None (nothing is imported)."""
    root = type(x).__module__.partition(".")[0]
    return root if root in LIBRARIES else None


def is_frame(x) -> bool:
    """Whether ``x`` is a DataFrame (pandas, polars or dask)."""
    return type(x).__name__ == "DataFrame"


def is_lazy(x) -> bool:
    """True for a dask collection (array, DataFrame, Series); never imports dask (no dask module loaded: False)."""
    return "dask" in sys.modules and hasattr(x, "__dask_graph__") and type(x).__module__.startswith("dask")
