"""Descriptive statistics: mean, variance, sum, count, histogram, quantiles and private bounds, on their own or
grouped by a key (``by=``), per row or per privacy unit (``privacy_unit=``).

Every release here is declared in :mod:`dpstats.registry` (family ``"descriptive"``); the module of each says
how it is calibrated.
"""

from ._histogram import histogram
from ._moments import count, mean, sum, variance  # noqa: A004 (dps.sum, as numpy.sum)
from ._norm_bound import private_norm_bound
from ._quantiles import private_bounds, quantile

__all__ = ["count", "histogram", "mean", "private_bounds", "private_norm_bound", "quantile", "sum", "variance"]
