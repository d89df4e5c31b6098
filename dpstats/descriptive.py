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

Tables
------
pandas and polars Series and DataFrames go in as they are (numeric columns;
a string column raises an error naming it). A DataFrame's rows are its
records, so ``axis`` may be left out; ``bounds`` (and ``weights``) can be
dicts ``{column: (lo, hi)}``; per-column results come back named: a pandas
Series indexed by column, or a one-row polars DataFrame (the shape of
polars' own ``df.mean()``). A Series gives a float. :func:`histogram` counts a
categorical column over a public list of ``categories``.

Mixed scales
------------
A vector release is calibrated to the sensitivity of the whole vector, and
every column gets that noise: with bounds ``([0, 0], [100, 200000])`` the age
column gets noise scaled to incomes. When one column's sensitivity is at
least :data:`DOMINANCE` times another's, :func:`mean` and :func:`variance`
warn (:class:`~dpstats.exceptions.MixedScalesWarning`); ``weights=`` splits ε
(and δ) between the columns instead, each released on its own with noise
scaled to its own range.

Non-finite values
-----------------
NaN and ±infinity always raise :class:`~dpstats.exceptions.DataValidationError`,
with or without ``clip=True``: they are missing or broken data, which clipping
would hide. ``clip=True`` clips finite values outside the bounds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from ._engine import as_array, bin_counts, bounded_sums
from ._engine.tables import check_categories, check_weights, from_table, labels
from ._rounding import l1_up, l2_up
from ._validation import check_bounds, check_delta, check_epsilon, check_int
from .accounting import Accountant, charge, check_accountant, split_weighted
from .exceptions import DataValidationError, MixedScalesWarning, OutOfBoundsError, ParameterError
from .noise.random import check_rng, describe_source
from .noise.release import Statistic, make_noise

__all__ = ["mean", "variance", "histogram"]

#: A vector release warns when one coordinate's sensitivity is at least this many times another's.
DOMINANCE = 10.0

#: The units of each release, for its ledger entry (the noise and the 95 % error in them).
UNITS = {"mean": "data units", "variance": "squared data units", "histogram": "counts"}


def _records(x, bounds, axis, clip: bool, *, squares: bool):
    """Validate ``x``, ``bounds`` and ``axis``; check every value and sum the fixed-point records exactly.

    Returns the sums and the :class:`~dpstats._engine.tables.TableSource` ``x`` came from (None for an array)."""
    x, table = from_table(x, "x")
    if table is not None:
        axis = table.records_axis(axis)
        bounds = table.per_column(bounds, "bounds", pair=True)
    elif isinstance(bounds, Mapping):
        raise ParameterError("bounds as a dict {column: (lo, hi)} needs a DataFrame; pass (lower, upper) here")
    x = as_array(x, "x", ndim=(1, 2, 3))
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
        out_shape = x.shape[:axis] + x.shape[axis + 1 :]
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
    return bounded_sums(x, lower, upper, axis=None if x.ndim == 1 else axis, clip=clip, squares=squares), table


def _release(
    mechanism: str,
    statistic: Statistic,
    per_coordinate,
    epsilon: float,
    delta: float,
    *,
    rng,
    accountant,
    noise: str,
    weights=None,
    table=None,
):
    """Calibrate from the per-coordinate sensitivities (exact Fractions), charge, then add the noise.

    Without ``weights`` the coordinates are one release with the vector's L1
    (δ = 0) or L2 sensitivity (warning when one coordinate dominates it). With
    ``weights`` each coordinate is a release of its own with ε_j = ε·w_j/Σw
    (and δ_j likewise): by basic composition the whole is (ε, δ)-DP.
    """
    shape = np.shape(statistic.values)
    per_coordinate = [Fraction(v) for v in np.asarray(per_coordinate, dtype=object).ravel()]
    try:
        sensitivity = l1_up(per_coordinate) if delta == 0 else l2_up(per_coordinate)
    except OverflowError as err:
        raise ParameterError("bounds are too wide: the sensitivity overflows a float; rescale the data") from err
    if weights is not None:
        return _release_weighted(
            mechanism,
            statistic,
            per_coordinate,
            epsilon,
            delta,
            check_weights(weights, shape, table).reshape(-1),
            rng=rng,
            accountant=accountant,
            noise=noise,
        )
    changed = len(per_coordinate)
    _warn_if_dominated(np.array([float(v) for v in per_coordinate]), sensitivity, shape, table)
    calibrated = make_noise(
        epsilon=epsilon, delta=delta, sensitivity=sensitivity, changed=changed, unit=statistic.unit, noise=noise
    )
    charge(
        accountant,
        mechanism,
        [calibrated.event],
        note=describe_source(rng),
        noise=calibrated.statement(UNITS[mechanism]),
    )
    noisy = calibrated.apply(statistic, rng)
    return float(noisy) if np.ndim(noisy) == 0 else noisy


def _release_weighted(
    mechanism: str,
    statistic: Statistic,
    per_coordinate: list,
    epsilon: float,
    delta: float,
    weights: np.ndarray,
    *,
    rng,
    accountant,
    noise: str,
):
    """One release per coordinate, with its share of (ε, δ); every event is charged before any noise is drawn."""
    shape = np.shape(statistic.values)
    epsilons = split_weighted(epsilon, weights)
    deltas = split_weighted(delta, weights) if delta > 0 else [0.0] * weights.size
    for j, share in enumerate(epsilons):
        check_epsilon(share, f"epsilon share of coordinate {j} (epsilon * weight / sum of weights)")
    values = np.asarray(statistic.values, dtype=object).reshape(-1)
    units = np.broadcast_to(np.asarray(statistic.unit, dtype=object), shape).reshape(-1)
    noises = [
        make_noise(epsilon=e, delta=d, sensitivity=l1_up([s]), changed=1, unit=u, noise=noise)
        for e, d, s, u in zip(epsilons, deltas, per_coordinate, units, strict=True)
    ]
    charge(
        accountant,
        mechanism,
        [n.event for n in noises],
        note=f"{len(noises)} coordinates released separately, budget split by weights; {describe_source(rng)}",
        noise=[n.statement(UNITS[mechanism]) for n in noises],
    )
    noisy = [float(n.apply(Statistic(v, u), rng)) for n, v, u in zip(noises, values, units, strict=True)]
    return noisy[0] if shape == () else np.asarray(noisy).reshape(shape)


def _warn_if_dominated(per_coordinate: np.ndarray, sensitivity: float, shape, table) -> None:
    """Warn (public values only) when the widest coordinate's sensitivity is >= DOMINANCE times the narrowest."""
    if per_coordinate.size < 2 or per_coordinate.max() < DOMINANCE * per_coordinate.min():
        return
    wide, narrow = int(per_coordinate.argmax()), int(per_coordinate.argmin())
    big, small = per_coordinate[wide], per_coordinate[narrow]
    names = table.columns if table is not None and table.columns is not None else None

    def name(j):
        if names is not None:
            return repr(names[j])
        return str(j if len(shape) == 1 else np.unravel_index(j, shape))

    warnings.warn(
        f"column {name(wide)} has sensitivity {big:.4g}, {big / small:.3g} times that of column {name(narrow)} "
        f"({small:.4g}): the whole vector is calibrated to sensitivity {sensitivity:.4g}, so column {name(narrow)} "
        f"gets {sensitivity / small:.3g} times the noise it would get alone. Pass weights= (one per column) to give "
        "each column its own share of epsilon",
        MixedScalesWarning,
        stacklevel=4,
    )


def _per_record(unit, transform):
    """``transform`` applied to a Fraction unit, or to each Fraction of an array of units."""
    if isinstance(unit, Fraction):
        return transform(unit)
    return np.frompyfunc(transform, 1, 1)(unit)


def mean(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    axis: int | None = None,
    weights=None,
    clip: bool = False,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
):
    """Differentially private mean of bounded data.

    Sensitivity (replace one record, n public): every value lies in
    ``[lo, hi]``, so replacing one record moves the mean of each coordinate by
    at most ``(hi − lo) / n``. For a vector release over m coordinates the L1
    sensitivity is ``Σ_j (hi_j − lo_j) / n`` and the L2 sensitivity
    ``√(Σ_j (hi_j − lo_j)²) / n``. dpstats computes it for the records
    rounded to a fixed-point grid 2^-36 of the bounds' magnitude (public, per
    record, so the same argument holds with the rounded bounds) and sums them
    exactly (:mod:`dpstats._kernels.fixed_point`).

    Parameters
    ----------
    x : array_like, pandas or polars Series or DataFrame
        The data. See the module docstring for ``axis`` and tables.
    epsilon : float
        Privacy parameter ε > 0.
    delta : float, default 0.0
        δ = 0: Laplace noise with scale Δ₁/ε. δ > 0: Gaussian noise with σ from
        the analytic calibration of Balle & Wang (2018).
    bounds : tuple (lower, upper) or dict
        Public bounds on every value, chosen without looking at the data;
        scalars or arrays broadcastable to the output, or for a DataFrame a
        dict ``{column: (lo, hi)}``. Unknown bounds can be chosen privately
        with :func:`dpstats.private_bounds`.
    axis : int, optional
        Axis along which the records lie; required when an array ``x`` has more
        than one dimension (``axis=0``: one person per row, a mean per column).
        A DataFrame's records are its rows.
    weights : array_like or dict, optional
        Split the budget between the coordinates of a vector release: coordinate
        j is released on its own with ε_j = ε·w_j/Σw (and δ_j = δ·w_j/Σw), so
        the ε_j add up to ε (basic composition) and each coordinate's noise is
        scaled to its own range. One positive weight per coordinate, or a dict
        ``{column: weight}`` for a DataFrame. Without weights the vector is one
        release with the vector sensitivity, and a
        :class:`~dpstats.exceptions.MixedScalesWarning` says when one column
        dominates it.
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
    float, numpy.ndarray, pandas.Series or polars.DataFrame
        The noisy mean (it may fall outside ``bounds``); for a DataFrame, named
        by column (see the module docstring).

    References
    ----------
    Dwork, McSherry, Nissim & Smith, "Calibrating noise to sensitivity in
    private data analysis", TCC 2006. Balle & Wang, "Improving the Gaussian
    mechanism for differential privacy", ICML 2018.

    Examples
    --------
    >>> import dpstats as dps
    >>> m = dps.mean([0.1, 0.5, 0.9], epsilon=1.0, bounds=(0, 1), rng=0)
    >>> import pandas as pd
    >>> people = pd.DataFrame({"age": [23, 41, 67], "income": [18000, 52000, 31000]})
    >>> means = dps.mean(people, 1.0, bounds={"age": (0, 100), "income": (0, 200000)},
    ...                  weights={"age": 1, "income": 1}, rng=0)
    >>> list(means.index)
    ['age', 'income']
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    check_accountant(accountant)
    sums, table = _records(x, bounds, axis, clip, squares=False)
    n = sums.n
    unit = _per_record(sums.unit, lambda h: h / n)
    per_coordinate = (sums.q_upper - sums.q_lower).astype(object) * np.asarray(sums.unit, dtype=object) / n
    noisy = _release(
        "mean",
        Statistic(sums.sums, unit),
        per_coordinate,
        epsilon,
        delta,
        rng=rng,
        accountant=accountant,
        noise=noise,
        weights=weights,
        table=table,
    )
    return noisy if table is None else table.per_column_result(noisy)


def variance(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    axis: int | None = None,
    weights=None,
    clip: bool = False,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
):
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
    x, epsilon, delta, bounds, axis, weights, clip, rng, accountant, noise
        As in :func:`mean`.

    Returns
    -------
    float, numpy.ndarray, pandas.Series or polars.DataFrame
        The noisy variance (named by column for a DataFrame). It can be negative or exceed ``(hi − lo)²/4``;
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
    sums, table = _records(x, bounds, axis, clip, squares=True)
    n = sums.n
    scaled = sums.squares * n - sums.sums * sums.sums  # n Σq² − (Σq)², exact integers
    unit = _per_record(sums.unit, lambda h: h * h / (n * n))
    h = np.asarray(sums.unit, dtype=object)
    per_coordinate = (n - 1) * ((sums.q_upper - sums.q_lower).astype(object) * h) ** 2 / (n * n)
    noisy = _release(
        "variance",
        Statistic(scaled, unit),
        per_coordinate,
        epsilon,
        delta,
        rng=rng,
        accountant=accountant,
        noise=noise,
        weights=weights,
        table=table,
    )
    return noisy if table is None else table.per_column_result(noisy)


def histogram(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    bins: int = 10,
    range=None,  # noqa: A002
    categories=None,
    other=None,
    clip: bool = False,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
):
    """Differentially private histogram: public equal-width bins, or counts over a public list of categories.

    The edges come only from ``range`` and ``bins`` (never from the data's
    minimum and maximum, which the original dp-stats disclosed); the categories
    only from ``categories`` (never from the values seen). Sensitivity (replace
    one record): the record leaves one bin and enters another, so the count
    vector changes by 1 in two places: L1 = 2, L2 = √2. The same holds with an
    ``other`` bin, which is just one more public bin.

    Parameters
    ----------
    x : array_like, pandas or polars Series
        One value per record: numbers with ``range``, labels (strings or any
        hashable values) with ``categories``.
    epsilon, delta : float
        Privacy parameters (δ = 0: Laplace(2/ε) per bin; δ > 0: Gaussian with Δ₂ = √2).
    bins : int, default 10
        Number of equal-width bins (numeric histograms).
    range : tuple (lower, upper)
        Public range of the values (numeric histograms).
    categories : list, optional
        The public list of categories, chosen without looking at the data; one
        count per category, in this order. A value not in the list (missing
        values included) raises :class:`~dpstats.exceptions.OutOfBoundsError`,
        unless ``other`` is given.
    other : hashable, optional
        With ``categories``: the label of one more bin that counts every value
        outside the list, so nothing is dropped (e.g. ``other="other"``).
    clip : bool, default False
        Numeric histograms: put finite values outside ``range`` in the first or
        last bin instead of raising (NaN and infinity always raise).
    rng, accountant, noise
        As in :func:`mean`. The counts are exact integers: with exact noise the
        grid is a power of two below 1, so no rounding is needed.

    Returns
    -------
    counts : numpy.ndarray of float, pandas.Series or polars.Series
        Noisy counts (they can be negative or fractional; rounding and
        clamping afterwards are post-processing). With ``categories`` and a
        pandas Series ``x``, a Series indexed by category (named like ``x``); a
        polars Series for polars.
    edges : numpy.ndarray or list
        The ``bins + 1`` public edges, or the categories (with ``other`` last
        when given).

    References
    ----------
    Dwork, McSherry, Nissim & Smith, TCC 2006 (histogram queries, Example 3).

    Examples
    --------
    >>> import dpstats as dps
    >>> counts, edges = dps.histogram([0.1, 0.5, 0.9], epsilon=1.0, bins=4, range=(0, 1), rng=0)
    >>> counts, names = dps.histogram(["a", "b", "a", "z"], 1.0, categories=["a", "b"], other="other", rng=0)
    >>> names
    ['a', 'b', 'other']
    """
    epsilon, delta, rng = check_epsilon(epsilon), check_delta(delta), check_rng(rng)
    check_accountant(accountant)
    if categories is not None or other is not None:
        if range is not None:
            raise ParameterError("pass either range (numeric bins) or categories (labels), not both")
        return _categorical(
            x, epsilon, delta, check_categories(categories, other), other, rng=rng, accountant=accountant, noise=noise
        )
    if range is None:
        raise ParameterError(
            "range is required for a numeric histogram: pass (lower, upper) chosen without looking "
            "at the data (or categories=[...] to count labels)"
        )
    bins = check_int(bins, "bins")
    lower, upper = check_bounds(range, "range")
    if lower.ndim or upper.ndim:
        raise ParameterError(f"range must be a pair of scalars; got {range!r}")
    x = as_array(from_table(x, "x")[0], "x", ndim=(1,))
    if x.shape[0] == 0:
        raise DataValidationError("x must hold at least one record; got an empty array")
    counts = bin_counts(x, bins, float(lower), float(upper), clip=clip)
    edges = np.histogram_bin_edges(np.empty(0), bins=bins, range=(float(lower), float(upper)))
    return _count_release(counts, epsilon, delta, rng=rng, accountant=accountant, noise=noise), edges


def _count_release(counts: np.ndarray, epsilon: float, delta: float, *, rng, accountant, noise: str) -> np.ndarray:
    """Noisy counts. Replacing a record moves one count down and another up: L1 = 2, L2 = √2, two coordinates."""
    return _release(
        "histogram",
        Statistic(counts.astype(np.int64), Fraction(1)),
        np.ones(2),
        epsilon,
        delta,
        rng=rng,
        accountant=accountant,
        noise=noise,
    )


def _categorical(x, epsilon: float, delta: float, categories: list, other, *, rng, accountant, noise: str):
    """The categorical histogram of :func:`histogram`: every value is looked up in the public list."""
    values, table = labels(x, "x")
    if values.size == 0:
        raise DataValidationError("x must hold at least one record; got an empty array")
    codes = _category_codes(values, {c: i for i, c in enumerate(categories)})
    outside = codes < 0
    if outside.any():
        if other is None:
            raise OutOfBoundsError(
                f"x has {int(outside.sum())} value(s) that are not in the public categories (missing values count "
                "as outside); add them to categories, or pass other='other' to count them in a bin of their own"
            )
        codes = np.where(outside, len(categories), codes)
    names = categories if other is None else [*categories, other]
    counts = np.bincount(codes, minlength=len(names))
    noisy = _count_release(counts, epsilon, delta, rng=rng, accountant=accountant, noise=noise)
    return (noisy if table is None else table.indexed(noisy, names)), names


def _category_codes(values: np.ndarray, index: dict) -> np.ndarray:
    """The position of each value in the categories (−1 outside), looking up each distinct value once."""
    try:
        distinct, inverse = np.unique(values, return_inverse=True)
    except TypeError:  # values of types that do not sort together (e.g. str and None): look up each value
        return np.fromiter((_lookup(index, v) for v in values), dtype=np.int64, count=values.size)
    return np.array([_lookup(index, v) for v in distinct], dtype=np.int64)[inverse.reshape(-1)]


def _lookup(index: dict, value) -> int:
    try:
        return index.get(value, -1)
    except TypeError:  # unhashable value: not a category
        return -1
