"""Descriptive statistics: mean, variance and histogram.

Neighbouring datasets differ by replacing one record; the number of records n
is public. Bounds and bin edges are parameters, never read from the data.
With ``delta == 0`` the release uses (discrete) Laplace noise (pure ε-DP),
with ``delta > 0`` (discrete) Gaussian noise calibrated analytically (Balle &
Wang 2018). By default every release is exact integer noise on a public grid
(:mod:`dpstats.noise.release`); ``noise="float"`` keeps the papers'
floating-point noise, open to Mironov's attack.

Records and ``axis``
--------------------
A 1-D ``x`` holds one value per record. For ``x`` with more dimensions the
records must be named: ``axis=a`` makes the slices along axis ``a`` the
records (for an n×d matrix and ``axis=0``: the n rows, one person each), and
the statistic is released for every position of the other axes at once, with
the vector sensitivity of the whole release. Treating every value of a matrix
as its own record would pool several values of one person and understate the
sensitivity, so ``axis`` is required there.

Non-finite values
-----------------
NaN and ±infinity always raise :class:`~dpstats.exceptions.DataValidationError`,
with or without ``clip=True``: they are missing or broken data, which clipping
would hide. ``clip=True`` clips finite values outside the bounds.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._statistics import bin_counts, bounded_sums
from ._validation import (
    check_array,
    check_bounds,
    check_delta,
    check_epsilon,
    check_int,
)
from .accounting import Accountant, charge, check_accountant
from .exceptions import DataValidationError, ParameterError
from .noise.random import check_rng, describe
from .noise.release import Statistic, make_noise

__all__ = ["mean", "variance", "histogram"]


def _records(x, bounds, axis, clip: bool, *, squares: bool):
    """Validate ``x``, ``bounds`` and ``axis``; check every value and sum the fixed-point records exactly."""
    x = check_array(x, "x", ndim=(1, 2, 3))
    if axis is None:
        if x.ndim > 1:
            raise ParameterError(
                f"x has {x.ndim} dimensions: pass axis to say which axis holds the records (axis=0 for one person "
                "per row, giving one value per column); without it every value would count as a separate person"
            )
        out_shape = ()
        n = x.shape[0]
    else:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or axis not in range(-x.ndim, x.ndim):
            raise ParameterError(f"axis must be None or an integer in [{-x.ndim}, {x.ndim - 1}]; got {axis!r}")
        axis = int(axis) % x.ndim
        out_shape = x.shape[:axis] + x.shape[axis + 1:]
        n = x.shape[axis]
    if n < 1 or math.prod(x.shape) == 0:
        raise DataValidationError(f"x must hold at least one record; got shape {x.shape}")
    lower, upper = check_bounds(bounds)
    try:
        lower, upper = np.broadcast_to(lower, out_shape), np.broadcast_to(upper, out_shape)
    except ValueError as err:
        raise ParameterError(
            f"bounds must broadcast to the shape of one record's statistic {out_shape}; "
            f"got shapes {np.shape(lower)} and {np.shape(upper)}"
        ) from err
    return bounded_sums(x, lower, upper, axis=None if x.ndim == 1 else axis, clip=clip, squares=squares)


def _release(mechanism: str, statistic: Statistic, per_coordinate: np.ndarray, epsilon: float, delta: float, *,
             rng, accountant, noise: str):
    """Calibrate from the per-coordinate sensitivities, charge, then add the noise."""
    per_coordinate = np.asarray(per_coordinate, dtype=np.float64).reshape(-1)
    if not np.isfinite(per_coordinate).all():
        raise ParameterError("bounds are too wide: the sensitivity overflows a float; rescale the data")
    changed = per_coordinate.size
    if delta == 0:
        sensitivity = math.fsum(per_coordinate)
    else:
        sensitivity = math.sqrt(math.fsum(per_coordinate**2))
    sensitivity = math.nextafter(sensitivity, math.inf)
    calibrated = make_noise(epsilon=epsilon, delta=delta, sensitivity=sensitivity, changed=changed,
                            unit=statistic.unit, noise=noise)
    charge(accountant, mechanism, [calibrated.event], note=describe(rng))
    noisy = calibrated.apply(statistic, rng)
    return float(noisy) if np.ndim(noisy) == 0 else noisy


def _per_record(unit, transform):
    """``transform`` applied to a Fraction unit, or to each Fraction of an array of units."""
    if isinstance(unit, Fraction):
        return transform(unit)
    return np.frompyfunc(transform, 1, 1)(unit)


def mean(x, epsilon: float, delta: float = 0.0, *, bounds, axis: int | None = None, clip: bool = False,
         rng=None, accountant: Accountant | None = None, noise: str = "exact"):
    """Differentially private mean of bounded data.

    Sensitivity (replace one record, n public): every value lies in
    ``[lo, hi]``, so replacing one record moves the mean of each coordinate by
    at most ``(hi − lo) / n``. For a vector release over m coordinates the L1
    sensitivity is ``Σ_j (hi_j − lo_j) / n`` and the L2 sensitivity
    ``√(Σ_j (hi_j − lo_j)²) / n``. dpstats computes it for the records
    rounded to a fixed-point grid 2^-36 of the bounds' magnitude (public, per
    record, so the same argument holds with the rounded bounds) and sums them
    exactly (:mod:`dpstats._statistics`).

    Parameters
    ----------
    x : array_like
        The data. See the module docstring for ``axis``.
    epsilon : float
        Privacy parameter ε > 0.
    delta : float, default 0.0
        δ = 0: Laplace noise with scale Δ₁/ε. δ > 0: Gaussian noise with σ from
        the analytic calibration of Balle & Wang (2018).
    bounds : tuple (lower, upper)
        Public bounds on every value, chosen without looking at the data;
        scalars or arrays broadcastable to the output.
    axis : int, optional
        Axis along which the records lie; required when ``x`` has more than one
        dimension (``axis=0``: one person per row, a mean per column).
    clip : bool, default False
        Clip finite values outside ``bounds`` instead of raising
        ``OutOfBoundsError`` (NaN and infinity always raise).
    rng : None, int or numpy.random.Generator
        Source of noise; ``None`` is a cryptographically secure generator keyed
        from the OS; an int seed reproduces a release (not secure).
    accountant : Accountant, optional
        Charged before any noise is drawn.
    noise : {"exact", "float"}, default "exact"
        Exact integer noise on a public grid (:mod:`dpstats.noise.release`), or
        the papers' floating-point noise (warns: open to Mironov's attack).

    Returns
    -------
    float or numpy.ndarray
        The noisy mean (it may fall outside ``bounds``).

    References
    ----------
    Dwork, McSherry, Nissim & Smith, "Calibrating noise to sensitivity in
    private data analysis", TCC 2006. Balle & Wang, "Improving the Gaussian
    mechanism for differential privacy", ICML 2018.

    Examples
    --------
    >>> import dpstats as dps
    >>> m = dps.mean([0.1, 0.5, 0.9], epsilon=1.0, bounds=(0, 1), rng=0)
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    check_accountant(accountant)
    sums = _records(x, bounds, axis, clip, squares=False)
    n = sums.n
    unit = _per_record(sums.unit, lambda h: h / n)
    per_coordinate = (sums.q_upper - sums.q_lower) * np.asarray(sums.unit, dtype=float) / n
    return _release("mean", Statistic(sums.sums, unit), per_coordinate, epsilon, delta, rng=rng,
                    accountant=accountant, noise=noise)


def variance(x, epsilon: float, delta: float = 0.0, *, bounds, axis: int | None = None, clip: bool = False,
             rng=None, accountant: Accountant | None = None, noise: str = "exact"):
    """Differentially private population variance (ddof = 0) of bounded data.

    Sensitivity (replace one record, n public, values in [lo, hi]). Write the
    data as n − 1 fixed values with mean m and population variance s², plus one
    value x. Adding x to those n − 1 values gives::

        Var = ((n − 1)/n) s² + ((n − 1)/n²) (x − m)²

    so replacing x by x′ changes the variance by
    ``((n − 1)/n²) · |(x − m)² − (x′ − m)²|``. As m lies in [lo, hi], each
    square lies in [0, (hi − lo)²], hence::

        Δ = (n − 1)(hi − lo)² / n²

    and the bound is attained (m = lo, x = hi, x′ = lo). The original dp-stats
    used ``3(1 − 1/n)/n``, three times this value. Vector releases combine
    coordinates as in :func:`mean`.

    Exactness: the records are rounded to a fixed-point grid h (2^-26 of the
    bounds' magnitude), and ``n·Σq² − (Σq)²`` is computed as an exact integer;
    the variance is that integer times h²/n², with sensitivity
    ``(n − 1)(q_hi − q_lo)²`` in those units (the bound above, for the
    rounded records).

    Parameters
    ----------
    x, epsilon, delta, bounds, axis, clip, rng, accountant, noise
        As in :func:`mean`.

    Returns
    -------
    float or numpy.ndarray
        The noisy variance. It can be negative or exceed ``(hi − lo)²/4``;
        clamping it to that range afterwards is post-processing and costs no
        privacy.

    References
    ----------
    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014
    (Laplace and Gaussian mechanisms). Balle & Wang, ICML 2018.

    Examples
    --------
    >>> import dpstats as dps
    >>> v = dps.variance([0.1, 0.5, 0.9], epsilon=1.0, bounds=(0, 1), rng=0)
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    check_accountant(accountant)
    sums = _records(x, bounds, axis, clip, squares=True)
    n = sums.n
    scaled = sums.squares * n - sums.sums * sums.sums  # n Σq² − (Σq)², exact integers
    unit = _per_record(sums.unit, lambda h: h * h / (n * n))
    h = np.asarray(sums.unit, dtype=float)
    with np.errstate(over="ignore"):  # overflow is reported by _release as bounds that are too wide
        per_coordinate = (n - 1) * ((sums.q_upper - sums.q_lower) * h) ** 2 / n**2
    return _release("variance", Statistic(scaled, unit), per_coordinate, epsilon, delta, rng=rng,
                    accountant=accountant, noise=noise)


def histogram(x, epsilon: float, delta: float = 0.0, *, bins: int = 10, range, clip: bool = False,  # noqa: A002
              rng=None, accountant: Accountant | None = None, noise: str = "exact"):
    """Differentially private histogram with public, equal-width bins.

    The edges come only from ``range`` and ``bins`` (never from the data's
    minimum and maximum, which the original dp-stats disclosed). Sensitivity
    (replace one record): the record leaves one bin and enters another, so the
    count vector changes by 1 in two places: L1 = 2, L2 = √2.

    Parameters
    ----------
    x : array_like, 1-D
        One value per record.
    epsilon, delta : float
        Privacy parameters (δ = 0: Laplace(2/ε) per bin; δ > 0: Gaussian with Δ₂ = √2).
    bins : int, default 10
        Number of equal-width bins.
    range : tuple (lower, upper)
        Public range of the values.
    clip : bool, default False
        Put finite values outside ``range`` in the first or last bin instead of
        raising (NaN and infinity always raise).
    rng, accountant, noise
        As in :func:`mean`. The counts are exact integers: with exact noise the
        grid is a power of two below 1, so no rounding is needed.

    Returns
    -------
    counts : numpy.ndarray of float
        Noisy counts (they can be negative or fractional; rounding and
        clamping afterwards are post-processing).
    edges : numpy.ndarray
        The ``bins + 1`` public edges.

    References
    ----------
    Dwork, McSherry, Nissim & Smith, TCC 2006 (histogram queries, Example 3).

    Examples
    --------
    >>> import dpstats as dps
    >>> counts, edges = dps.histogram([0.1, 0.5, 0.9], epsilon=1.0, bins=4, range=(0, 1), rng=0)
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    check_accountant(accountant)
    bins = check_int(bins, "bins")
    lower, upper = check_bounds(range, "range")
    if lower.ndim or upper.ndim:
        raise ParameterError(f"range must be a pair of scalars; got {range!r}")
    x = check_array(x, "x", ndim=(1,))
    if x.shape[0] == 0:
        raise DataValidationError("x must hold at least one record; got an empty array")
    counts = bin_counts(x, bins, float(lower), float(upper), clip=clip)
    edges = np.histogram_bin_edges(np.empty(0), bins=bins, range=(float(lower), float(upper)))
    # Replacing a record moves one count down and another up: L1 = 2, L2 = √2, two coordinates move.
    per_coordinate = np.ones(2)
    return _release("histogram", Statistic(counts, Fraction(1)), per_coordinate, epsilon, delta,
                    rng=rng, accountant=accountant, noise=noise), edges
