"""Descriptive statistics of bounded numbers: mean, variance, sum and count.

Neighbouring datasets differ by replacing one record; the number of records n
is public (or, with ``privacy_unit``, by replacing all records of one unit; see
"Privacy units" below). Bounds are parameters, never read from the data.
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

Privacy units
-------------
With ``privacy_unit=`` (identifiers aligned with the records, or the name of a
DataFrame column) and ``max_rows=m``, neighbours differ in *all* records of one
unit: its records may change, appear or disappear, the set of units stays. The
number of units N is public, the number of records is not. Every record is
checked against the bounds; then at most m records of each unit are kept,
chosen uniformly at random by the library's random source, never by the
records' order or values (:mod:`dpstats._engine.units`). With x̄ = (lo + hi)/2
and w = hi − lo per coordinate (of the rounded bounds), a unit's kept records
contribute, whatever they are,

* c ∈ [1, m] records to the count C: Δ_C = m − 1 (0 for m = 1: C = N, public);
* Σ(x − x̄) ∈ [−c·w/2, c·w/2] to the shifted sum S: Δ_S = m·w;
* Σ(x − x̄)² ∈ [0, c·w²/4] to the shifted sum of squares Q: Δ_Q = m·w²/4;
* Σx ∈ [min(lo, m·lo), max(hi, m·hi)] to the plain sum: Δ = max(hi, m·hi) − min(lo, m·lo).

:func:`sum` and :func:`count` release those directly; :func:`mean` releases S
and C (ε and δ split 2 : 1) and returns x̄ + S̃/max(C̃, N); :func:`variance`
releases Q, S and C (thirds) and returns Q̃/C' − (S̃/C')² with C' = max(C̃, N).
The denominator can no longer be the record count, which is not public; raising
a noisy C̃ to N is post-processing (every unit has at least one record). The
ledger entry is one release of two or three noisy statistics.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import partial

import numpy as np

from .._constraints import BOUNDS, NOISE, UNITS, Checked, Data, Flag, grouping, privacy
from .._engine import Bounded, as_array, bound_rows, bounded_sums, bounded_unit_sums, engine_of, take_units
from .._engine.tables import TableSource, from_table
from .._kernels.fixed_point import BoundedSums
from .._registry import declare
from .._release import plan, release, split_budget, unit_ratio_statements
from .._validation import check_bounds
from ..accounting import Accountant, Relation
from ..exceptions import DataValidationError, ParameterError
from ..inference._estimate import Level
from ..noise.release import Statistic
from ..noise.selection import MAX_GROUPS
from . import _intervals as intervals
from ._grouped import grouped
from ._previews import count_preview, mean_preview, sum_preview, variance_preview
from ._shifted import Shifted

__all__ = ["count", "mean", "sum", "variance"]

#: With a privacy unit, the budget of a mean is split 2 : 1 between the shifted sum and the count (near the
#: worst case's optimum √2 : 1 for the error of their ratio), and equally between Q, S and C for a variance.
UNIT_MEAN_SHARES = (2, 1)
UNIT_VARIANCE_SHARES = (1, 1, 1)


@dataclass(frozen=True)
class _Records:
    """The exact fixed-point sums of the records (the kept ones, with a privacy unit), where they came from, and
    the units (None: one record per unit)."""

    sums: BoundedSums
    table: TableSource | None
    units: Bounded | None
    values: np.ndarray | None = None
    ids: np.ndarray | None = None


def _records(
    x, bounds, axis, clip: bool, *, squares: bool, privacy_unit, max_rows, rng, interval: bool = False
) -> _Records:
    """Validate ``x``, ``bounds``, ``axis`` and the privacy unit; check every value and sum the fixed-point records
    (with a privacy unit: of the records each unit keeps) exactly. ``interval``: also keep the (kept) records as an
    n × d array and, with a unit, the identifier of each kept record (:mod:`dpstats.descriptive._intervals`)."""
    x, units = take_units(x, privacy_unit, max_rows)
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
        if lower.shape != out_shape or upper.shape != out_shape:
            lower, upper = np.broadcast_to(lower, out_shape), np.broadcast_to(upper, out_shape)
    except ValueError as err:
        raise ParameterError(
            f"bounds must broadcast to the shape of one record's statistic {out_shape}; "
            f"got shapes {np.shape(lower)} and {np.shape(upper)}"
        ) from err
    axis = None if x.ndim == 1 else axis
    if interval and engine_of(x).LAZY:
        raise ParameterError(
            "ci needs the data in memory (its interval reads the records once more): pass a NumPy array or a "
            "pandas/polars table, or compute the dask collection first"
        )
    if units is None:
        sums = bounded_sums(x, lower, upper, axis=axis, clip=clip, squares=squares)
        return _Records(sums, table, None, _as_rows(x, axis, n) if interval else None)
    records = x if axis in (None, 0) else np.moveaxis(x, axis, 0)
    if not interval:
        units = units.aligned(n, defer_missing=True)
        # every record checked, kept or not, in the pass that bounds and sums (one shuffle by unit on Dask)
        sums, kept = bounded_unit_sums(records, lower, upper, units, rng, clip=clip, squares=squares)
        return _Records(sums, table, kept)
    # in memory (checked above): the kept records themselves are needed for the interval's statistics
    units = units.aligned(n)
    bounded_sums(x, lower, upper, axis=axis, clip=clip, squares=False)  # every record checked, kept or not
    kept = bound_rows((records, units.ids), units, rng)
    sums = bounded_sums(kept.arrays[0], lower, upper, axis=None if axis is None else 0, clip=clip, squares=squares)
    values = _as_rows(kept.arrays[0], None if axis is None else 0, kept.arrays[0].shape[0])
    return _Records(sums, table, kept, values, np.asarray(kept.arrays[1]))


def _as_rows(x, axis, n: int) -> np.ndarray:
    """The records as an n × d array (for the statistics of an interval, in memory)."""
    rows = (
        np.asarray(x, dtype=np.float64) if axis in (None, 0) else np.moveaxis(np.asarray(x, dtype=np.float64), axis, 0)
    )
    return rows.reshape(n, -1)


#: The parameters of mean, variance and sum (count reads no values: no bounds, axis, weights or clip).
_OF_VALUES = {
    **privacy(),
    "bounds": BOUNDS,
    "axis": Checked("None or an integer axis of x", {"1.5": 1.5, "'0'": "0", "True": True, "5": 5}),
    "weights": Checked(
        "None, one positive weight per coordinate, or a dict {column: weight} for a table",
        {"negative": [-1.0], "zero": [0.0], "nan": [float("nan")], "string": "w"},
    ),
    "clip": Flag(),
    **grouping(MAX_GROUPS),
    **UNITS,
    **NOISE,
}


def _declared(statistic: str, cases: str, preview=None, **parameters):
    return declare(
        family="descriptive",
        statistic=statistic,
        data={"x": Data("values")},
        parameters={**_OF_VALUES, **parameters},
        engines=("numpy", "dask"),
        cases=f"dpstats.descriptive._cases:{cases}",
        preview=preview,
    )


def _per_record(unit, transform):
    """``transform`` applied to a Fraction unit, or to each Fraction of an array of units."""
    if isinstance(unit, Fraction):
        return transform(unit)
    return np.frompyfunc(transform, 1, 1)(unit)


@_declared(
    "the mean of bounded values (per column, per key)",
    "mean",
    preview=partial(mean_preview, shares=UNIT_MEAN_SHARES),
    ci=Level(),
)
def mean(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    axis: int | None = None,
    weights=None,
    clip: bool = False,
    by=None,
    categories=None,
    max_groups: int | None = None,
    selection: str | None = None,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
    ci: float | None = None,
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

    With a privacy unit (replace all records of one unit, N units public, at
    most m records kept per unit) the record count is not public: the mean is
    x̄ + S̃/max(C̃, N) from the noisy shifted sum S = Σ(x − x̄) (Δ = m·w per
    coordinate) and the noisy count C (Δ = m − 1), with ε (and δ) split
    2 : 1 between them (all to S when m = 1, as C = N then); see the module
    docstring, "Privacy units".

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
    by : array_like, Series or str, optional
        Group the records: one key per record (an array or Series aligned
        with the rows), or the name of a column of the DataFrame ``x`` (then
        only the key, never a released value). The release is then one value
        per key, as one ledger entry (:mod:`dpstats.descriptive._grouped`; the user guide's
        "Group-by" page gives every sensitivity): a pandas Series indexed by
        key (a DataFrame for several columns of ``x``; a polars DataFrame for
        polars input). A missing key (None, NaN) raises.
    categories : list, optional
        With ``by``: the public keys, chosen without looking at the data
        (one result per category, in this order; a key outside them
        raises). Without ``categories`` the keys are read from the data and
        released only when enough units hold them (private partition
        selection), which needs ``delta > 0``.
    max_groups : int, optional
        With ``by`` and ``privacy_unit``: the public number of keys each unit
        keeps (chosen at random); ``max_rows`` then counts its rows in each
        kept key. Without it a unit's ``max_rows`` rows may fall in any keys.
        At most 4096 (:data:`dpstats.noise.selection.MAX_GROUPS`).
    selection : {"laplace", "gaussian", "weighted"}, optional
        With ``by`` and no ``categories``: how keys are selected
        (:mod:`dpstats.noise.selection`). Default: Laplace thresholding when a
        unit holds one key, else the weighted Gaussian of Gopi et al. (2021),
        or Gaussian thresholding when its noisy counts are the release's own.
    privacy_unit : array_like, Series or str, optional
        The unit of privacy: one identifier per record (integers, numbers or
        strings; a pandas, polars or dask Series), or the name of a column of
        the DataFrame ``x`` (then only the unit, never a released value).
        Neighbours then differ in all records of one unit (module docstring,
        "Privacy units"). Default: every record is its own unit.
    max_rows : int, optional
        With ``privacy_unit``: the public number of records kept per unit
        (required with it); a unit's records beyond it are dropped, chosen at
        random. Larger values keep more data and add more noise.
    rng : None, int or numpy.random.Generator
        Source of noise (and of the records a unit keeps); ``None`` is a
        cryptographically secure generator keyed from the OS; an int seed
        reproduces a release (not secure).
    accountant : Accountant, optional
        Charged before any noise is drawn.
    noise : {"exact", "float"}, default "exact"
        Exact integer noise on a public grid (:mod:`dpstats.noise.release`), or
        the papers' floating-point noise (warns: open to Mironov's attack).
    ci : float, optional
        A confidence level (e.g. 0.95): return a :class:`~dpstats.Estimate`
        whose ``.ci`` covers the *population* mean — of the distribution the
        records (or the privacy units) were drawn from — with that probability,
        over the sampling of the data and the noise together; ``.estimate`` is
        the mean as returned without ``ci``. The call then releases, within
        its ``epsilon`` and ``delta`` (split 4 : 1, stated in the ledger), the
        mean and the mean of (x − x̄)² it needs for the sampling error; the
        interval is post-processing (:mod:`dpstats.inference._mean`: a
        studentised test inverted and calibrated by a parametric bootstrap
        with the exact noise — Wilson's interval for 0/1 data). With
        ``clip=True`` it covers the mean of the clipped variable, and says so.
        With ``by``, one interval per key (public ``categories`` only).

    With ``by``, the mean of each key is x̄ + S̃/max(C̃, 1) from the noisy
    shifted sum S (L2 sensitivity √k·m·w over the keys, L1 k·m·w) and the
    noisy row count C of every key (:mod:`dpstats.descriptive._grouped`), ε and δ split
    2 : 1 (and one more share for the selection of unknown keys).

    Returns
    -------
    float, numpy.ndarray, pandas.Series or polars.DataFrame
        The noisy mean (it may fall outside ``bounds``); for a DataFrame, named
        by column (see the module docstring); with ``by``, one per key.

    References
    ----------
    Dwork, McSherry, Nissim & Smith, "Calibrating noise to sensitivity in
    private data analysis", TCC 2006. Balle & Wang, "Improving the Gaussian
    mechanism for differential privacy", ICML 2018. Desfontaines, Voss, Gipson
    & Mandayam, "Differentially private partition selection", PoPETs 2022, and
    Gopi et al., "Differentially private set union", ICML 2021 (keys selected
    privately).

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
    >>> purchases = pd.DataFrame({"person": [1, 1, 2, 3, 3, 3], "city": ["Lyon", "Oslo", "Lyon", "Lyon", "Pune",
    ...                           "Lyon"], "amount": [12.0, 30.0, 7.5, 99.0, 45.0, 3.0]})
    >>> spend = dps.mean(purchases, 1.0, bounds={"amount": (0, 100)}, by="city", categories=["Lyon", "Oslo",
    ...                  "Pune"], privacy_unit="person", max_rows=2, max_groups=1, rng=0)
    >>> list(spend.index)
    ['Lyon', 'Oslo', 'Pune']
    """
    level = ci  # a confidence level or None (checked by the declaration)
    if by is not None:
        return _by_key(
            "mean",
            x,
            epsilon,
            delta,
            by,
            axis,
            bounds,
            clip,
            weights,
            categories,
            max_groups,
            selection,
            privacy_unit,
            max_rows,
            rng,
            accountant,
            noise,
            level,
        )
    _ungrouped(categories, max_groups, selection)
    interval = level is not None
    rec = _records(
        x,
        bounds,
        axis,
        clip,
        squares=interval,
        privacy_unit=privacy_unit,
        max_rows=max_rows,
        rng=rng,
        interval=interval,
    )
    if interval:
        return intervals.mean(
            rec, epsilon, delta, level, weights=weights, clip=clip, rng=rng, accountant=accountant, noise=noise
        )
    sums, table = rec.sums, rec.table
    if rec.units is not None:
        return _named(_unit_mean(rec, epsilon, delta, weights, rng, accountant, noise), table)
    unit, per_coordinate = sums.per_record()  # h/n and (q_hi − q_lo)·h/n per coordinate, exact
    planned = plan(
        Statistic(sums.sums, unit), per_coordinate, epsilon, delta, noise=noise, weights=weights, table=table
    )
    return _named(release("mean", [planned], rng=rng, accountant=accountant, relation=Relation.ROW)[0], table)


def _named(values, table):
    """Per-column results named after a DataFrame's columns (see the module docstring)."""
    return values if table is None else table.per_column_result(values)


def _unit_mean(rec: _Records, epsilon: float, delta: float, weights, rng, accountant, noise: str):
    """x̄ + S̃/max(C̃, N) (module docstring, "Privacy units")."""
    stats, m, units = Shifted.of(rec.sums, rec.units.max_rows), rec.units.max_rows, rec.units.units
    shares = split_budget(epsilon, delta, UNIT_MEAN_SHARES) if m > 1 else [(epsilon, delta)]
    plans = [
        plan(
            stats.shifted,
            stats.shifted_sensitivity,
            *shares[0],
            noise=noise,
            weights=weights,
            table=rec.table,
            units="data units (sum of x − x̄)",
        )
    ]
    if m > 1:
        plans.append(plan(stats.count, [stats.count_sensitivity], *shares[1], noise=noise, units="rows"))
    released = "shifted sum and record count" if m > 1 else "shifted sum (record count = N, public)"
    reported = unit_ratio_statements(plans, units, stats.shifted_sensitivity / m)  # the mean's error, not S̃'s
    noisy = release(
        "mean",
        plans,
        rng=rng,
        accountant=accountant,
        note=f"{rec.units.note()}{released}",
        relation=Relation.UNIT,
        reported=reported,
    )
    count = max(noisy[1], units) if m > 1 else units
    return _shaped(stats.midpoint + np.asarray(noisy[0]) / count)


def _shaped(values):
    """A float for a scalar statistic, else the array."""
    values = np.asarray(values, dtype=np.float64)
    return float(values) if values.ndim == 0 else values


@_declared(
    "the population variance of bounded values (per column, per key)",
    "variance",
    preview=partial(variance_preview, shares=UNIT_VARIANCE_SHARES),
    ci=Level(),
)
def variance(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    axis: int | None = None,
    weights=None,
    clip: bool = False,
    by=None,
    categories=None,
    max_groups: int | None = None,
    selection: str | None = None,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
    ci: float | None = None,
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

    With a privacy unit (replace all records of one unit, N public, at most m
    records kept per unit) the variance is Q̃/C' − (S̃/C')², C' = max(C̃, N),
    from the noisy shifted sum of squares Q = Σ(x − x̄)² (Δ = m·w²/4), shifted
    sum S (Δ = m·w) and count C (Δ = m − 1), ε (and δ) split in thirds (halves
    between Q and S when m = 1); module docstring, "Privacy units".

    With ``by``, the variance of each key is Q̃/C' − (S̃/C')², C' = max(C̃, 1),
    from the noisy Q (L2 sensitivity √(2k)·m·w²/4 over the keys), S and C of
    every key (:mod:`dpstats.descriptive._grouped`).

    Parameters
    ----------
    x, epsilon, delta, bounds, axis, weights, clip, by, categories, max_groups, selection
        As in :func:`mean`.
    privacy_unit, max_rows, rng, accountant, noise
        As in :func:`mean`.
    ci : float, optional
        A confidence level: return a :class:`~dpstats.Estimate` whose ``.ci``
        covers the population variance (sampling and noise together). The
        call releases the variance and the moments of (x − x̄) of order 1, 3
        and 4 on a coarse grid (ε and δ split 7 : 1 : 1 : 1); the interval
        inverts a parametric bootstrap test whose sampling law has the
        released kurtosis (:mod:`dpstats.inference._variance`). Without
        ``by`` and ``privacy_unit`` only.

    Returns
    -------
    float, numpy.ndarray, pandas.Series or polars.DataFrame
        The noisy variance (named by column for a DataFrame; one per key with
        ``by``). It can be negative or exceed ``(hi − lo)²/4``; clamping it to
        that range afterwards is post-processing and costs no privacy.

    References
    ----------
    Dwork & Roth, "The Algorithmic Foundations of Differential Privacy", 2014
    (Laplace and Gaussian mechanisms). Balle & Wang, ICML 2018.

    Examples
    --------
    >>> import dpstats as dps
    >>> v = dps.variance([0.1, 0.5, 0.9], epsilon=1.0, bounds=(0, 1), rng=0)
    """
    level = ci  # a confidence level or None (checked by the declaration)
    if by is not None:
        _no_interval(level, "a grouped variance")
        return _by_key(
            "variance",
            x,
            epsilon,
            delta,
            by,
            axis,
            bounds,
            clip,
            weights,
            categories,
            max_groups,
            selection,
            privacy_unit,
            max_rows,
            rng,
            accountant,
            noise,
        )
    _ungrouped(categories, max_groups, selection)
    interval = level is not None
    rec = _records(
        x, bounds, axis, clip, squares=True, privacy_unit=privacy_unit, max_rows=max_rows, rng=rng, interval=interval
    )
    if interval:
        return intervals.variance(
            rec, epsilon, delta, level, weights=weights, clip=clip, rng=rng, accountant=accountant, noise=noise
        )
    sums, table = rec.sums, rec.table
    if rec.units is not None:
        return _named(_unit_variance(rec, epsilon, delta, weights, rng, accountant, noise), table)
    n = sums.n
    if n < 2:
        raise DataValidationError(
            f"variance needs n >= 2 records (n is public); got n = {n}: the variance of one record is 0 whatever "
            "it is, so there is nothing to release"
        )
    scaled = sums.squares * n - sums.sums * sums.sums  # n Σq² − (Σq)², exact integers
    unit = _per_record(sums.unit, lambda h: h * h / (n * n))
    h = np.asarray(sums.unit, dtype=object)
    per_coordinate = (n - 1) * ((sums.q_upper - sums.q_lower).astype(object) * h) ** 2 / (n * n)
    planned = plan(
        Statistic(scaled, unit),
        per_coordinate,
        epsilon,
        delta,
        noise=noise,
        weights=weights,
        table=table,
        units="squared data units",
    )
    return _named(release("variance", [planned], rng=rng, accountant=accountant, relation=Relation.ROW)[0], table)


def _unit_variance(rec: _Records, epsilon: float, delta: float, weights, rng, accountant, noise: str):
    """Q̃/C' − (S̃/C')² with C' = max(C̃, N) (module docstring, "Privacy units")."""
    stats, m, units = Shifted.of(rec.sums, rec.units.max_rows), rec.units.max_rows, rec.units.units
    shares = split_budget(epsilon, delta, UNIT_VARIANCE_SHARES if m > 1 else UNIT_VARIANCE_SHARES[:2])
    plans = [
        plan(
            stats.squares,
            stats.squares_sensitivity,
            *shares[0],
            noise=noise,
            weights=weights,
            table=rec.table,
            units="squared data units (sum of (x − x̄)²)",
        ),
        plan(
            stats.shifted,
            stats.shifted_sensitivity,
            *shares[1],
            noise=noise,
            weights=weights,
            table=rec.table,
            units="data units (sum of x − x̄)",
        ),
    ]
    if m > 1:
        plans.append(plan(stats.count, [stats.count_sensitivity], *shares[2], noise=noise, units="rows"))
    released = "shifted sum of squares, shifted sum" + (" and record count" if m > 1 else " (record count = N, public)")
    reported = unit_ratio_statements(plans, units, stats.shifted_sensitivity / m, variance=True)
    noisy = release(
        "variance",
        plans,
        rng=rng,
        accountant=accountant,
        note=f"{rec.units.note()}{released}",
        relation=Relation.UNIT,
        reported=reported,
    )
    count = max(noisy[2], units) if m > 1 else units
    return _shaped(np.asarray(noisy[0]) / count - (np.asarray(noisy[1]) / count) ** 2)


@_declared("the sum of bounded values (per column, per key)", "sum", preview=sum_preview)
def sum(  # noqa: A001 (dps.sum, as numpy.sum)
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    axis: int | None = None,
    weights=None,
    clip: bool = False,
    by=None,
    categories=None,
    max_groups: int | None = None,
    selection: str | None = None,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
):
    """Differentially private sum of bounded data: "how much in total".

    Sensitivity. Replace one record (n public): the sum of each coordinate
    moves by at most ``hi − lo``, so Δ₁ = Σ_j (hi_j − lo_j) and
    Δ₂ = √(Σ_j (hi_j − lo_j)²) for a vector release. Replace all records of
    one unit (``privacy_unit``, at most m records kept per unit, each unit with
    at least one): a unit adds between ``min(lo, m·lo)`` and ``max(hi, m·hi)``
    to each coordinate, so the per-coordinate sensitivity is
    ``max(hi, m·hi) − min(lo, m·lo)`` (m·hi for data in [0, hi]). The records
    are rounded to a public fixed-point grid and summed exactly, as in
    :func:`mean`; the sensitivities are those of the rounded bounds.

    With ``by``, one sum per key: a unit's sum in a key lies in
    [min(0, m·lo), max(0, m·hi)], so the L1 sensitivity over the keys is
    2k·m·max(|lo|, |hi|) and the L2 one √k·max(b, √2·m·max(|lo|, |hi|)) with
    b = max(hi, m·hi) − min(lo, m·lo) (:mod:`dpstats.descriptive._grouped`).

    Parameters
    ----------
    x, epsilon, delta, bounds, axis, weights, clip, by, categories, max_groups, selection
        As in :func:`mean`.
    privacy_unit, max_rows, rng, accountant, noise
        As in :func:`mean`.

    Returns
    -------
    float, numpy.ndarray, pandas.Series or polars.DataFrame
        The noisy sum (named by column for a DataFrame; one per key with ``by``).

    References
    ----------
    Dwork, McSherry, Nissim & Smith, TCC 2006. Wilson et al., "Differentially
    private SQL with bounded user contribution", PoPETs 2020 (bounding the
    records per user).

    Examples
    --------
    >>> import dpstats as dps
    >>> total = dps.sum([12.0, 30.5, 7.25, 99.0], 1.0, bounds=(0, 100), rng=0)
    >>> spend = dps.sum([12.0, 30.5, 7.25, 99.0], 1.0, bounds=(0, 100), privacy_unit=["a", "a", "b", "c"],
    ...                 max_rows=2, rng=0)
    """
    if by is not None:
        return _by_key(
            "sum",
            x,
            epsilon,
            delta,
            by,
            axis,
            bounds,
            clip,
            weights,
            categories,
            max_groups,
            selection,
            privacy_unit,
            max_rows,
            rng,
            accountant,
            noise,
        )
    _ungrouped(categories, max_groups, selection)
    rec = _records(x, bounds, axis, clip, squares=False, privacy_unit=privacy_unit, max_rows=max_rows, rng=rng)
    sums, table = rec.sums, rec.table
    m = 1 if rec.units is None else rec.units.max_rows
    lo, hi = np.asarray(sums.q_lower, dtype=object), np.asarray(sums.q_upper, dtype=object)
    highest = np.where(hi > 0, m * hi, hi).astype(object)
    lowest = np.where(lo < 0, m * lo, lo).astype(object)
    per_coordinate = (highest - lowest) * np.asarray(sums.unit, dtype=object)
    planned = plan(
        Statistic(sums.sums, sums.unit), per_coordinate, epsilon, delta, noise=noise, weights=weights, table=table
    )
    note = "" if rec.units is None else f"{rec.units.note()}sum"
    relation = Relation.of(rec.units is not None)
    return _named(release("sum", [planned], rng=rng, accountant=accountant, note=note, relation=relation)[0], table)


@declare(
    family="descriptive",
    statistic="the number of records (exact without a privacy unit; per key)",
    data={"x": Data("records")},
    parameters={**privacy(), **grouping(MAX_GROUPS), **UNITS, **NOISE},
    engines=("numpy", "dask"),
    cases="dpstats.descriptive._cases:count",
    preview=count_preview,
)
def count(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    by=None,
    categories=None,
    max_groups: int | None = None,
    selection: str | None = None,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
):
    """How many records: exact where the count is public, noisy where it is not.

    Without a privacy unit neighbours replace one record, so the number of
    records n is public: it is returned exactly and nothing is charged. With a
    privacy unit (replace all records of one unit; N units, public, each with at
    least one record, at most ``max_rows`` = m of them kept) a unit contributes
    between 1 and m records, so the count of kept records has sensitivity
    m − 1: it is released with Laplace (δ = 0) or Gaussian (δ > 0) noise of
    that sensitivity — or exactly, with nothing charged, when m = 1 (then it is
    N). The values of ``x`` are not read (any dtype, any columns).

    With ``by`` the rows are counted per key, as :func:`dpstats.histogram`
    counts keys: the row counts have L1 sensitivity 2k·m and L2 √(2k)·m over
    the keys (2 and √2 without a unit); with unknown keys and one row per unit
    and key the selection's noisy counts are the release (no further noise,
    :mod:`dpstats.descriptive._grouped`).

    Parameters
    ----------
    x : array_like, pandas, polars or dask Series or DataFrame
        The records (rows).
    epsilon, delta, by, categories, max_groups, selection, privacy_unit, max_rows, rng, accountant, noise
        As in :func:`mean` (``privacy_unit`` and ``by`` may name columns of a DataFrame).

    Returns
    -------
    float, pandas.Series or polars.DataFrame
        The (noisy) number of records; with ``by``, one count per key (a Series named "count").

    Examples
    --------
    >>> import dpstats as dps
    >>> dps.count(["x", "y", "z"], 1.0)
    3.0
    >>> purchases = dps.count(["x", "y", "z", "w"], 1.0, privacy_unit=[1, 1, 1, 2], max_rows=2, rng=0)
    >>> per_page = dps.count(["a", "b", "a"], 1.0, by=["home", "cart", "home"], categories=["home", "cart"], rng=0)
    >>> list(per_page.index)
    ['home', 'cart']
    """
    if by is not None:
        return grouped(
            "count",
            x,
            epsilon,
            delta,
            by=by,
            categories=categories,
            max_groups=max_groups,
            selection=selection,
            privacy_unit=privacy_unit,
            max_rows=max_rows,
            rng=rng,
            accountant=accountant,
            noise=noise,
            name="count",
        )
    _ungrouped(categories, max_groups, selection)
    x, units = take_units(x, privacy_unit, max_rows)
    rows = _rows(x)
    if units is None:
        return float(rows)
    units = units.aligned(rows)
    kept, distinct = engine_of(units.ids).bounded_row_count(units)
    if units.max_rows == 1:
        return float(distinct)
    planned = plan(Statistic(kept, Fraction(1)), [units.max_rows - 1], epsilon, delta, noise=noise, units="rows")
    note = f"{Bounded((), distinct, units.max_rows).note()}record count"
    return float(release("count", [planned], rng=rng, accountant=accountant, note=note, relation=Relation.UNIT)[0])


def _rows(x) -> int:
    """The number of records of ``x`` (its length: rows of a table or an array), at least one."""
    try:
        rows = len(x)
    except TypeError as err:
        raise DataValidationError(
            f"x must be a sequence of records (an array, list or table); got {type(x).__name__}"
        ) from err
    if rows < 1:
        raise DataValidationError("x must hold at least one record; got none")
    return rows


def _by_key(
    kind,
    x,
    epsilon,
    delta,
    by,
    axis,
    bounds,
    clip,
    weights,
    categories,
    max_groups,
    selection,
    privacy_unit,
    max_rows,
    rng,
    accountant,
    noise,
    level=None,
):
    """A grouped release (``descriptive._grouped``): the records are the rows of ``x`` (``axis`` None or 0); with a
    ``level``, a grouped mean with an interval per key (:mod:`dpstats.descriptive._intervals`)."""
    if axis not in (None, 0) or isinstance(axis, bool):
        raise ParameterError(f"with by=, the records are the rows of x: axis must be None or 0; got {axis!r}")
    return grouped(
        kind,
        x,
        epsilon,
        delta,
        by=by,
        bounds=bounds,
        clip=clip,
        weights=weights,
        categories=categories,
        max_groups=max_groups,
        selection=selection,
        privacy_unit=privacy_unit,
        max_rows=max_rows,
        rng=rng,
        accountant=accountant,
        noise=noise,
        interval=level,
    )


def _no_interval(level, what: str) -> None:
    """Refuse ``ci`` for a release that has no interval (before anything is read or charged)."""
    if level is not None:
        raise ParameterError(
            f"ci is not available for {what}: intervals are released for the mean (also grouped, with public "
            "categories), the variance and one quantile; pass ci=None"
        )


def _ungrouped(categories, max_groups, selection) -> None:
    """categories, max_groups and selection belong to grouped releases: refuse them without ``by``."""
    if categories is None and max_groups is None and selection is None:
        return
    given = [
        n
        for n, v in (("categories", categories), ("max_groups", max_groups), ("selection", selection))
        if v is not None
    ]
    if given:
        raise ParameterError(
            f"{', '.join(given)} apply only to grouped releases: pass by= (the key of every row, or a column name)"
        )
