"""A private bound on the rows' L2 norms (the rows of a PCA, CCA or covariance need one): a private quantile of
the logarithms of the norms (:func:`private_norm_bound`, behind ``norm_bound="private"``)."""

from __future__ import annotations

import math

import numpy as np

from .._constraints import UNITS, Checked, Data, Real, privacy
from .._engine import read_matrix
from .._registry import declare
from .._validation import check_bounds, check_finite
from ..accounting import Accountant
from ..exceptions import ParameterError
from ._quantiles import quantile

__all__ = ["NORM_BOUNDS", "RADIUS_QUANTILE", "private_norm_bound"]

#: The public range in which :func:`private_norm_bound` looks for the row norms' quantile (about 1e-6 to 1e6).
NORM_BOUNDS = (2.0**-20, 2.0**20)
#: The quantile level of the row norms that :func:`private_norm_bound` releases by default. Measured (PCA, k = 10,
#: 10 % of ε for the bound, ε in {0.3, 1}; MNIST, digits, spiked and skewed synthetic data): 0.5 and 0.75 capture
#: the most energy, 0.9 fails on the 1797 digits at ε = 0.3 (the bound lands far above the norms when n·ε·(1 − q) is
#: small), 0.99 and the maximum fail everywhere; 0.75 clips fewer rows than the median for the same utility.
RADIUS_QUANTILE = 0.75


@declare(
    family="descriptive",
    statistic="a bound on the rows' L2 norms: a private quantile of their logarithms",
    data={"X": Data("matrix", "an n × d matrix (finite)")},
    parameters={
        **privacy("pure"),
        "q": Real(0, 1, closed="right"),
        "bounds": Checked("a pair 0 < lower < upper", {"reversed": (2.0, 1.0), "zero": (0.0, 1.0), "string": "ab"}),
        **UNITS,
    },
    engines=("numpy", "dask"),
    cases="dpstats.descriptive._cases:private_norm_bound",
    preview="dpstats.descriptive._previews:private_norm_bound_preview",
)
def private_norm_bound(
    X,
    epsilon: float,
    delta: float = 0.0,
    *,
    q: float = RADIUS_QUANTILE,
    bounds=NORM_BOUNDS,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
) -> float:
    """A private bound on the rows' L2 norms: their ``q``-quantile, released by an ε-DP exponential mechanism.

    Each row is mapped to log₂‖x_i‖ (a map of the row on its own; rows of norm outside ``bounds``, zero rows
    included, are first clipped into them), and :func:`dpstats.quantile` releases the ``q``-quantile of these
    values on a public grid of 2^16 cells spanning log₂ of ``bounds`` (Smith's exponential mechanism, sampled
    exactly). The bound is 2 to that power. The map is monotone, so the ranks — the mechanism's only use of the
    data — are those of the norms: replacing one row moves every rank by at most 1, the utility's sensitivity
    (with ``privacy_unit``: replacing all rows of one unit, at most ``max_rows`` kept, moves them by at most
    ``max_rows`` + 2^-10; see :func:`dpstats.quantile`). ε-DP, one exponential-mechanism event on the ledger.

    A log grid keeps the relative resolution the same at every scale (0.08 % per cell for the default bounds),
    so a wide range costs little. The mechanism needs enough rows: when n·ε·(1 − q) is small (below about 20) the
    empty cells above the largest norm together outweigh the data's and the bound can land far above the norms.

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame or dask array, shape (n, d)
        The data, one person per row (finite).
    epsilon : float
        ε > 0 of this release.
    delta : float, default 0.0
        Must be 0: the bound is pure ε-DP.
    q : float, default 0.75
        Quantile level in (0, 1]: the bound leaves about a fraction 1 − q of the rows above it (to be clipped).
        Levels near 1 need many rows: the exponential mechanism's empty cells above the largest norm have utility
        −(1 − q)·n each, and outweigh the data's when n·ε·(1 − q) is small (:data:`RADIUS_QUANTILE`).
    bounds : tuple (lower, upper), default (2^-20, 2^20)
        The public range of the bound, 0 < lower < upper, chosen without looking at the data.
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame ``X``): neighbours differ in all rows of one
        unit, at most ``max_rows`` of which are kept.
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    rng : None, int or numpy.random.Generator
        Source of randomness; ``None`` is a cryptographically secure source.
    accountant : Accountant, optional
        Charged before anything is sampled.

    Returns
    -------
    float
        The bound R̃ > 0, a point of the public grid (pass it as ``norm_bound=R̃`` with ``clip=True``, or to
        :func:`clip_rows`).

    References
    ----------
    A. Smith, "Privacy-preserving statistical estimation with optimal convergence rates", STOC 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.preprocessing import private_norm_bound
    >>> X = np.random.default_rng(0).normal(0, 30, (5000, 4))
    >>> R = private_norm_bound(X, 0.5, rng=0)
    >>> 50 < R < 130
    True
    """
    lower, upper = check_bounds(bounds, "bounds")
    if lower.ndim or upper.ndim or lower <= 0:
        raise ParameterError(f"bounds must be a pair of scalars 0 < lower < upper; got {bounds!r}")
    data = read_matrix(X, privacy_unit, max_rows)  # read once (a Matrix from an entry point passes as it is)
    X, units = data.X, data.units
    squares = np.asarray((X * X).sum(axis=1))
    if not np.isfinite(squares).all():
        check_finite(np.asarray(X), "X")
    with np.errstate(divide="ignore"):
        logs = np.clip(0.5 * np.log2(squares), -1e300, 1e300)  # zero rows, overflowing squares: clipped below
    unit = {} if units is None else {"privacy_unit": units}  # the units read above, handed on as they are
    level = quantile.unchecked(  # every parameter checked at this release's entry point
        logs,
        q,
        epsilon,
        0.0,
        bounds=(math.log2(float(lower)), math.log2(float(upper))),
        clip=True,
        rng=rng,
        accountant=accountant,
        **unit,
    )
    return float(np.clip(2.0**level, float(lower), float(upper)))
