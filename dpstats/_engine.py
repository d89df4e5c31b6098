"""Which engine computes a statistic: NumPy in memory (the default) or Dask (:mod:`dpstats._dask`).

Only detection lives here; everything that needs dask is in :mod:`dpstats._dask`, imported the first time a dask
object is passed (``import dpstats`` never imports dask).
"""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["dask_engine", "is_dask"]


def is_dask(x) -> bool:
    """True for a dask collection (array, DataFrame, Series); never imports dask (no dask module loaded: False)."""
    return "dask" in sys.modules and hasattr(x, "__dask_graph__") and type(x).__module__.startswith("dask")


def dask_engine() -> ModuleType:
    """The Dask engine (:mod:`dpstats._dask`), imported on first use."""
    from . import _dask

    return _dask
