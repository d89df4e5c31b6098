"""Differentially private histograms: counts in public equal-width bins, over a public list of categories, or over
keys selected privately.

The edges come only from ``range`` and ``bins`` (never from the data's minimum and maximum, which the original
dp-stats disclosed); the categories only from ``categories`` (never from the values seen). Without either, the keys
are read from the data and each is released only when a noisy count of the units that hold it reaches a threshold
calibrated to δ (private partition selection, :mod:`dpstats.descriptive._grouped` and :mod:`dpstats.noise.selection`).

Sensitivity. Replace one record: it leaves one bin and enters another, so the count vector changes by 1 in two
places: L1 = 2, L2 = √2. Replace all records of one unit (``privacy_unit``, at most m records kept per unit): the
unit's count vector h (non-negative, Σh = c ∈ [1, m]) becomes h' (Σh' = c'), so
‖h − h'‖₁ <= c + c' <= 2m and ‖h − h'‖₂² = ‖h‖² + ‖h'‖² − 2⟨h, h'⟩ <= c² + c'² <= 2m² (⟨h, h'⟩ >= 0):
L1 = 2m, L2 = √2·m, with at most min(bins, 2m) counts moved.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .._constraints import NOISE, UNITS, Checked, Data, Flag, Integer, grouping, privacy
from .._engine import as_array, bin_counts, bound_rows, take_units
from .._engine.kinds import is_frame, library
from .._engine.tables import check_categories, from_table, labels
from .._registry import declare
from .._release import plan, release
from .._validation import check_bounds, warn_caller
from ..accounting import Accountant, Relation
from ..exceptions import DataValidationError, OutOfBoundsError, ParameterError
from ..noise.release import Statistic
from ..noise.selection import MAX_GROUPS
from ._grouped import grouped
from ._previews import histogram_preview

__all__ = ["MAX_BINS", "category_codes", "histogram"]

#: The most equal-width bins a histogram takes: its counts and edges then take 256 MiB; more would be refused by
#: the memory they need, after the data were read (and a count of about one record per bin is pure noise anyway).
MAX_BINS = 2**24


@declare(
    family="descriptive",
    statistic="counts in public bins, over public categories, or over keys selected privately",
    data={"x": Data("values")},
    parameters={
        **privacy(),
        "bins": Integer(1, MAX_BINS),
        "range": Checked(
            "None or a pair (lower, upper) of numbers, lower < upper",
            {"reversed": (1, 0), "nan": (0, float("nan")), "string": "ab", "one value": (0,)},
        ),
        "categories": grouping(MAX_GROUPS)["categories"],
        "other": Checked("None or a hashable label not among the categories"),
        "clip": Flag(),
        "max_groups": grouping(MAX_GROUPS)["max_groups"],
        "selection": grouping(MAX_GROUPS)["selection"],
        **UNITS,
        **NOISE,
    },
    engines=("numpy", "dask"),
    cases="dpstats.descriptive._cases:histogram",
    preview=histogram_preview,
)
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
    max_groups: int | None = None,
    selection: str | None = None,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    noise: str = "exact",
):
    """Differentially private histogram: public equal-width bins, counts over public categories, or over keys
    nobody knows in advance.

    Sensitivity (module docstring): replace one record, L1 = 2, L2 = √2;
    replace all records of one unit (``privacy_unit``, at most m kept),
    L1 = 2m, L2 = √2·m. An ``other`` bin is just one more public bin. Every
    record is checked (range, categories) before the units' records are bounded.

    **Unknown keys** (no ``range``, no ``categories``; δ > 0): the counts of
    the keys of ``x`` whose noisy number of distinct units reaches a threshold
    τ calibrated so that a key held by a single unit appears with probability
    at most δ (Desfontaines et al. 2022; Gopi et al. 2021;
    :mod:`dpstats.noise.selection` derives τ under replace-one-unit). With one
    row per unit (``max_rows=1``, or no unit) the selection's noisy counts are
    the release. ``max_groups`` bounds the keys a unit contributes to, and then
    ``max_rows`` its rows in each; the counts have L1 sensitivity 2k·m and L2
    √(2k)·m over the keys.

    Parameters
    ----------
    x : array_like, pandas or polars Series
        One value per record: numbers with ``range``, labels (strings or any
        hashable values) with ``categories``.
    epsilon, delta : float
        Privacy parameters (δ = 0: Laplace(2/ε) per bin; δ > 0: Gaussian with Δ₂ = √2). Unknown keys need
        δ > 0, well below 1/(number of units).
    bins : int, default 10
        Number of equal-width bins (numeric histograms), 1 … :data:`MAX_BINS` (2^24).
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
    max_groups, selection
        Keys: as in :func:`dpstats.mean` (``by``). With ``categories``,
        ``max_groups`` bounds the categories a unit counts in (and ``max_rows``
        its rows in each); the result keeps the categorical form.
    privacy_unit, max_rows
        As in :func:`dpstats.mean` (``privacy_unit`` may name a column of a
        DataFrame ``x`` with one other column, the values).
    rng, accountant, noise
        As in :func:`dpstats.mean`. The counts are exact integers: with exact noise the
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

    With unknown keys the result is, for this release only, one object, not a
    pair: a pandas Series of the noisy counts named "count", indexed by the
    selected keys in sorted order (named like ``x``); a polars DataFrame (keys,
    "count") for polars. It warns (:class:`DeprecationWarning`): in the next
    release it will be ``(counts, keys)``, as the other forms are pairs; for a
    Series, :func:`dpstats.count` with ``by=x`` releases the same counts.

    References
    ----------
    Dwork, McSherry, Nissim & Smith, TCC 2006 (histogram queries, Example 3).
    Desfontaines, Voss, Gipson & Mandayam, "Differentially private partition
    selection", PoPETs 2022 (Laplace and Gaussian thresholding). Gopi,
    Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin, "Differentially private set
    union", ICML 2021 (weighted Gaussian).

    Examples
    --------
    >>> import dpstats as dps
    >>> counts, edges = dps.histogram([0.1, 0.5, 0.9], epsilon=1.0, bins=4, range=(0, 1), rng=0)
    >>> counts, names = dps.histogram(["a", "b", "a", "z"], 1.0, categories=["a", "b"], other="other", rng=0)
    >>> names
    ['a', 'b', 'other']
    >>> cities = ["Lyon"] * 300 + ["Oslo"] * 200 + ["Tromsø"]  # one person in Tromsø
    >>> counts = dps.histogram(cities, 1.0, 1e-6, rng=0)  # only keys enough people share
    >>> list(counts.index)
    ['Lyon', 'Oslo']
    """
    if range is None and other is None and (categories is None or max_groups is not None):
        return _keyed(
            x, epsilon, delta, categories, max_groups, selection, privacy_unit, max_rows, rng, accountant, noise
        )
    if max_groups is not None or selection is not None:
        raise ParameterError(
            "max_groups and selection apply to histograms of keys (no range, no other=); got range or other"
        )
    x, units = take_units(x, privacy_unit, max_rows)
    if units is not None and is_frame(x) and len(x.columns) == 1:
        x = x[x.columns[0]]  # the values' column of a table whose other column is the unit
    if categories is not None or other is not None:
        if range is not None:
            raise ParameterError("pass either range (numeric bins) or categories (labels), not both")
        return _categorical(
            x, epsilon, delta, check_categories(categories, other), other, units, rng, accountant, noise
        )
    if range is None:
        raise ParameterError(
            "range is required for a numeric histogram: pass (lower, upper) chosen without looking "
            "at the data (or categories=[...] to count labels)"
        )
    lower, upper = check_bounds(range, "range")
    if lower.ndim or upper.ndim:
        raise ParameterError(f"range must be a pair of scalars; got {range!r}")
    x = as_array(from_table(x, "x")[0], "x", ndim=(1,))
    if x.shape[0] == 0:
        raise DataValidationError("x must hold at least one record; got an empty array")
    counts = bin_counts(x, bins, float(lower), float(upper), clip=clip)  # every record checked
    if units is not None:
        kept = bound_rows((x,), units.aligned(x.shape[0]), rng)
        counts = bin_counts(kept.arrays[0], bins, float(lower), float(upper), clip=clip)
        units = kept
    edges = np.histogram_bin_edges(np.empty(0), bins=bins, range=(float(lower), float(upper)))
    return _count_release(counts, epsilon, delta, units, rng, accountant, noise), edges


def _count_release(counts: np.ndarray, epsilon: float, delta: float, units, rng, accountant, noise: str):
    """Noisy counts with the sensitivity of the module docstring (``units``: the bounded rows, or None)."""
    m = 1 if units is None else units.max_rows
    statistic = Statistic(np.asarray(counts, dtype=np.int64), Fraction(1))
    planned = plan(statistic, [m, m], epsilon, delta, noise=noise, changed=min(counts.size, 2 * m), units="counts")
    note = "" if units is None else units.note().removesuffix("; ")
    return release(
        "histogram", [planned], rng=rng, accountant=accountant, note=note, relation=Relation.of(units is not None)
    )[0]


def _categorical(x, epsilon: float, delta: float, categories: list, other, units, rng, accountant, noise: str):
    """The categorical histogram of :func:`histogram`: every value is looked up in the public list."""
    values, table = labels(x, "x")
    if values.size == 0:
        raise DataValidationError("x must hold at least one record; got an empty array")
    codes = category_codes(values, {c: i for i, c in enumerate(categories)})
    outside = codes < 0
    if outside.any():
        if other is None:
            raise OutOfBoundsError(
                f"x has {int(outside.sum())} value(s) that are not in the public categories (missing values count "
                "as outside); add them to categories, or pass other='other' to count them in a bin of their own"
            )
        codes = np.where(outside, len(categories), codes)
    names = categories if other is None else [*categories, other]
    if units is not None:
        units = bound_rows((codes,), units.aligned(codes.size), rng)
        codes = units.arrays[0]
    counts = np.bincount(codes, minlength=len(names))
    noisy = _count_release(counts, epsilon, delta, units, rng, accountant, noise)
    return (noisy if table is None else table.indexed(noisy, names)), names


def category_codes(values: np.ndarray, index: dict) -> np.ndarray:
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


def _keyed(x, epsilon, delta, categories, max_groups, selection, privacy_unit, max_rows, rng, accountant, noise):
    """Counts per key (``descriptive._grouped``): keys selected privately (no categories; δ > 0), or the public
    categories with ``max_groups`` (then returned as a categorical histogram is: counts and names)."""
    if categories is None and delta == 0:
        raise ParameterError(
            "range is required for a numeric histogram: pass (lower, upper) chosen without looking at the data. "
            "To count labels, pass categories=[...] (the public keys), or delta > 0 to select the keys privately "
            "(private partition selection: a key held by a single unit then appears with probability at most delta)"
        )
    name = getattr(x, "name", None) if library(x) is not None and not is_frame(x) else None
    counts = grouped(
        "count",
        x,
        epsilon,
        delta,
        by=None,
        categories=categories,
        max_groups=max_groups,
        selection=selection,
        privacy_unit=privacy_unit,
        max_rows=max_rows,
        rng=rng,
        accountant=accountant,
        noise=noise,
        keys_in_x=True,
        name="count",  # as pandas' value_counts: the index is named like x, the counts "count"
        mechanism="histogram",
    )
    if categories is None:
        warn_caller(
            "histogram of keys selected privately returns a Series of counts, unlike its other forms, which return "
            "(counts, edges or categories); in the next release it will return (counts, keys) as they do. For a "
            "Series, call dps.count(x, epsilon, delta, by=x): the same counts",
            DeprecationWarning,
        )
        return counts
    names = list(categories)
    if library(x) == "polars":
        return counts[counts.columns[1]], names
    return (counts.rename(name) if library(x) == "pandas" else counts.to_numpy()), names
