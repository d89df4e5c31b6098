"""Grouped statistics: a count, sum, mean, variance or quantile per key, over public keys or keys selected privately.

``by=`` (one key per row, or the name of a column of a DataFrame ``x``) groups the rows of :func:`dpstats.count`,
:func:`dpstats.sum`, :func:`dpstats.mean`, :func:`dpstats.variance` and :func:`dpstats.quantile`;
:func:`dpstats.histogram` without ``categories`` (or ``range``) counts the keys of ``x`` itself. The keys are
either public (``categories=[...]``, chosen without looking at the data: one result per category, in its order) or
**selected privately** in the same call (δ > 0): a key is released only when a noisy count of the units that hold
it reaches a threshold (:mod:`dpstats.noise.selection`). The whole grouped release is one ledger entry.

Neighbours and bounding
-----------------------
Neighbours replace one privacy unit (all of its rows; the number of units N public), or one row without a unit.
Two public parameters bound what one unit contributes (:mod:`dpstats._kernels.groups`; chosen by a keyed hash of
the unit's and the key's values with a random key from ``rng``, never by the data's order):

* ``max_groups=k`` (with ``privacy_unit``): a unit keeps at most k of its keys and at most m = ``max_rows`` of its
  rows in each of them (PipelineDP's "partitions per user" and "contributions per partition"; for k = 1 this is
  "at most m rows per unit" of an ungrouped release);
* ``max_groups=None`` (with ``privacy_unit``): a unit keeps at most m rows in total, in whatever keys they fall
  (an ungrouped release's bounding; the unit then holds at most m keys);
* no ``privacy_unit``: every row is its own unit, in one key (k = 1, m = 1).

Sensitivities (replace one unit)
--------------------------------
A grouped statistic is a vector over keys (× columns). Replacing unit u changes only the keys u holds before or
after: at most k on each side (with ``max_groups=None``: the m rows of each side, in at most m keys; without a
unit: one key on each side). For one column, let a bound u's contribution to a key it holds on one side only,
and b the change of a key it holds on both sides. With j keys on both sides and at most 2(k − j) on one side::

    L1 <= j·b + 2(k − j)·a <= k·max(b, 2a),      L2² <= j·b² + 2(k − j)·a² <= k·max(b², 2a²)

With ``max_groups=None`` the same holds with k = 1: a unit's contribution vector lies in the convex hull of the
vectors that put all its (at most m) rows in one key, and the norms of the difference are convex, so their
maximum is at such vectors (one key on each side: b if it is the same key, a on two keys otherwise). Without a
unit, k = m = 1. With w = hi − lo, x̄ = (lo + hi)/2, M = max(|lo|, |hi|) per column (of the bounds rounded to the
public fixed-point grid), and a unit's c ∈ [1, m] rows in a key:

==========  ============================  ==================================  =========================
statistic   per key                       a (one side)                        b (both sides)
==========  ============================  ==================================  =========================
count       C = rows                      m                                   m − 1
sum         Σx                            m·M                                 max(hi, m·hi) − min(lo, m·lo)
mean        S = Σ(x − x̄), and C           S: m·w/2                            S: m·w
variance    Q = Σ(x − x̄)², S, C           Q: m·w²/4                           Q: m·w²/4
==========  ============================  ==================================  =========================

(a sum over c ∈ [1, m] rows of values in [lo, hi] lies in [min(lo, m·lo), max(hi, m·hi)], of magnitude at most
m·M; two such sums differ by at most b; S and Q likewise with values in [−w/2, w/2] and [0, w²/4].) So the count
has L1 = 2km and L2 = √(2k)·m (the histogram's 2m and √2·m for k = 1), the shifted sum L1 = k·m·w and L2 = √k·m·w.
Columns add (L1) or add in squares (L2). The quantile of each key is Smith's exponential mechanism
(``descriptive._quantiles``): u's rows in a key move its utility c(j) − q·n_k by at most max(c, c′) <= m, and the
rounding of the target q·n_k by 2^-10, so the utilities of all keys move by at most 2k(m + 2^-10) in total
(2m(1 + 2^-10) with ``max_groups=None``, where a key's change is at most c + c′ and Σ(c + c′) <= 2m); every key's
mechanism is run with ε over that total, so their losses add up to at most ε.

Composition across keys. This is what ``max_groups`` buys: the grouped release is *one* vector release whose
sensitivity is that of one unit's at most 2k moved keys, not a composition of one release per key. With k = 1
(one key per unit, and always without a unit) it is parallel composition under replace-one: a replaced unit moves
two keys, its old one and its new one, and no other. The ledger note says which.

Keys selected privately
-----------------------
Without ``categories`` the keys are read from the data, which needs δ > 0 (with δ = 0 a
:class:`~dpstats.exceptions.ParameterError` says why and what to pass). The selection policy (``selection=``):

* ``"laplace"`` (default for k = 1) and ``"gaussian"`` threshold the noisy number of distinct units of each key;
  when that number is the statistic's row count (m = 1, or no unit) the noisy counts of the selected keys *are*
  the count (a histogram costs nothing more than its selection), and a mean's denominator;
* ``"weighted"`` (default for k >= 2 unless the counts are reused, then ``"gaussian"``) is Gopi et al.'s weighted
  Gaussian: a unit with d keys gives each 1/√d, so people with few keys count fully.

(:mod:`dpstats.noise.selection` derives the threshold and measures the policies.) The budget is split between
the released pieces in proportion to :data:`SHARES`: the selection is one piece (and, when its counts are reused,
it is the count piece); δ goes to the pieces in the same proportion (with ``"laplace"``, all of δ to the
selection and Laplace noise on the statistics; with Gaussian selections, Gaussian noise on the statistics). The
noise of a key's statistic is drawn only for the keys selected; each coordinate's noise is calibrated for the
whole vector, so releasing a subset is post-processing.

Keys
----
Keys are integers, floating-point numbers or strings of one kind (booleans become 0 and 1). A missing key (None,
NaN, a pandas NA or polars null) is **not** a key: it raises :class:`~dpstats.exceptions.DataValidationError` with
the count, before any charge (drop those rows, or fill them with a key of your own). With ``categories`` a missing
or unknown key raises :class:`~dpstats.exceptions.OutOfBoundsError` (for :func:`dpstats.histogram`, it is counted
in ``other=`` when given, as before).

Results
-------
A pandas Series indexed by the keys (sorted, so nothing about the data's order leaks; the categories in their
order), or a DataFrame with one column per column of ``x``; for polars input a polars DataFrame with the keys'
column first. pandas is the optional ``tables`` extra: it is imported only here, and a grouped release without it
raises before anything is charged.

References
----------
D. Desfontaines, J. Voss, B. Gipson & C. Mandayam, "Differentially private partition selection", PoPETs 2022.
S. Gopi, P. Gulhane, J. Kulkarni, J. H. Shen, M. Shokouhi & S. Yekhanin, "Differentially private set union",
ICML 2021. R. J. Wilson et al., "Differentially private SQL with bounded user contribution", PoPETs 2020.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from .._engine import Units, as_array, bounded_sums, key_table, take_units
from .._engine.kinds import is_frame, is_lazy, library
from .._engine.tables import TableSource, check_categories, check_weights, from_table
from .._engine.units import by_index, identifiers
from .._kernels.fixed_point import BoundedSums, FixedPoint
from .._kernels.groups import GroupSpec, KeyTable
from .._kernels.groups import released_keys as typed_keys
from .._release import Planned, charge_plans, plan, split_budget
from .._rounding import l1_up, l2_up
from .._validation import check_bounds
from ..accounting import Relation
from ..exceptions import DataValidationError, OutOfBoundsError, ParameterError
from ..noise.release import Statistic
from ..noise.selection import MAX_GROUPS, Selection, calibrate_selection
from . import _intervals as intervals

__all__ = ["SHARES", "Grouping", "grouped", "quantile_sensitivity"]

#: The budget's shares of the pieces of each grouped release (the selection is one more piece of share 1, or
#: replaces the count when its counts are reused): the ungrouped releases' shares.
SHARES = {
    "count": {"count": 1},
    "sum": {"sum": 1},
    "mean": {"shifted": 2, "count": 1},
    "variance": {"squares": 1, "shifted": 1, "count": 1},
    "quantile": {"quantile": 1},
    "mean interval": {"shifted": 4, "count": 2, "squares": 1},  # a mean with its interval per key (ci=)
}
#: The kinds whose pieces include the shifted sum of squares Q.
_SQUARES = ("variance", "mean interval")
#: The fraction of the target rank's rounding in a quantile's utility (:mod:`dpstats.descriptive._quantiles`).
_TARGET_ROUNDING = Fraction(1, 1 << 10)


# ----------------------------------------------------------------------------- reading the call


@dataclass(frozen=True)
class Grouping:
    """A grouped call, validated: the keys, units and values it reads, and the public design of the release.

    Attributes
    ----------
    kind : str
        "count", "sum", "mean", "variance" or "quantile".
    keys : array
        One key per row (NumPy, or a dask array).
    key_name : object
        The keys' name (a Series' name or a column name), for the result's index.
    values : array or None
        The values (n, or n × d; NumPy or dask), checked later against the bounds.
    table : TableSource or None
        Where the values came from (their column names).
    units : Units or None
    max_groups : int or None
    categories : list or None
        Public keys (None: selected privately).
    policy : str or None
        The selection policy (None with categories).
    reuse : bool
        Whether the selection's noisy unit counts are the released row counts.
    polars : bool
        Results as a polars DataFrame.
    key_label : str
        The argument that holds the keys ("by", or "x" for a histogram of keys), for error messages.
    """

    kind: str
    keys: object
    key_name: object
    values: object
    table: TableSource | None
    units: Units | None
    max_groups: int | None
    categories: list | None
    policy: str | None
    reuse: bool
    polars: bool
    key_label: str = "by"

    @property
    def columns(self) -> int:
        """The number of value columns (1 for one column of values, or none)."""
        return 1 if self.values is None or np.ndim(self.values) == 1 else int(self.values.shape[1])

    @property
    def rows_per_key(self) -> int:
        """m: rows per unit and key (``max_groups``), per unit (without), 1 without a unit."""
        return 1 if self.units is None else self.units.max_rows

    @property
    def keys_per_unit(self) -> int:
        """The most keys a unit holds: k, m (``max_groups=None``: one key per kept row) or 1 (no unit)."""
        if self.units is None:
            return 1
        return self.max_groups if self.max_groups is not None else self.units.max_rows

    @property
    def k(self) -> int:
        """The k of the sensitivity table (module docstring): ``max_groups``, or 1."""
        return self.max_groups if self.max_groups is not None else 1

    def shares(self) -> dict[str, int]:
        """The released pieces and their shares (module docstring)."""
        shares = dict(SHARES[self.kind])
        if self.categories is not None:
            return shares
        if self.reuse:
            shares.pop("count")
        return {"selection": 1, **shares}

    def budgets(self, epsilon: float, delta: float) -> dict[str, tuple[float, float]]:
        """(ε, δ) of every piece: ε in proportion to the shares; δ likewise, except that a Laplace selection takes
        all of it (its statistics get Laplace noise) and a quantile none (the exponential mechanism is pure)."""
        shares = self.shares()
        names = list(shares)
        epsilons = [e for e, _ in split_budget(epsilon, 0.0, [shares[n] for n in names])]
        users = [n for n in names if n != "quantile" and not (self.policy == "laplace" and n != "selection")]
        deltas = dict.fromkeys(names, 0.0)
        if delta > 0 and users:
            split = split_budget(epsilon, delta, [shares[n] for n in users])
            deltas.update({n: d for n, (_, d) in zip(users, split, strict=True)})
        return {n: (e, deltas[n]) for n, e in zip(names, epsilons, strict=True)}

    def note(self, n_units: int, bound: str) -> str:
        """The ledger note (public values only: N, k, m, the number of public keys, the design); ``bound`` names
        the sensitivity over the keys ("L1", "L2", "utility")."""
        keys = len(self.categories) if self.categories is not None else 0
        k, m = self.keys_per_unit, self.rows_per_key
        if self.units is None:
            unit = "privacy unit: one row"
        elif self.max_groups is None:
            unit = f"privacy unit: {n_units} units (public), at most {m} row(s) each, in any keys"
        else:
            unit = f"privacy unit: {n_units} units (public), at most {k} key(s) and {m} row(s) per key each"
        where = f"over {keys} public categories" if self.categories is not None else "over keys selected privately"
        if k == 1 or self.max_groups is None:
            how = (
                "composition across keys: a replaced unit moves its old key and its new one (parallel composition "
                "under replace-one: each unit in one key)"
                if k == 1
                else f"composition across keys: a unit's {m} rows in any keys, one vector release over the keys "
                "with the sensitivity of one key (the worst case puts all rows in one key)"
            )
        else:
            how = (
                f"composition across keys: a replaced unit moves at most {2 * k} keys, one vector release over the "
                f"keys with its {bound} bound over the keys"
            )
        what = self.kind
        if self.kind == "mean interval":
            what = (
                "mean with a confidence interval per key (shifted sums, counts and shifted sums of squares, "
                "epsilon split 4 : 2 : 1; the intervals computed from them)"
            )
        return f"grouped {what} {where}; {unit}; {how}"


def prepare(
    kind: str,
    x,
    delta: float,
    *,
    by,
    categories,
    max_groups,
    selection,
    privacy_unit,
    max_rows,
    values: bool,
    keys_in_x: bool = False,
) -> Grouping:
    """Validate a grouped call (nothing is read from the data but its shape and types) and design the release.

    ``keys_in_x``: the keys are ``x`` itself (a histogram); otherwise ``by`` names them. ``values``: the call
    reads the values of ``x`` (sum, mean, variance, quantile)."""
    polars = library(x) == "polars" or library(by) == "polars"
    if not polars:
        _require_pandas()
    x, units = take_units(x, privacy_unit, max_rows)
    if keys_in_x:
        if is_frame(x):
            if len(x.columns) != 1:
                raise DataValidationError(
                    f"x must be one column of keys; got a DataFrame with columns {list(x.columns)}: pass x[column]"
                )
            x = x[x.columns[0]]
        keys, key_name = identifiers(x, "x"), _series_name(x)
    elif by is None:
        raise ParameterError("by is required: the key of every row (an array aligned with the rows) or a column name")
    elif isinstance(by, str):
        x, keys, key_name = *_key_column(x, by, values), by
    else:
        keys, key_name = identifiers(by_index(by, x, "by"), "by"), _series_name(by)
    key_label = "x" if keys_in_x else "by"
    if not is_lazy(keys) and np.ndim(keys) != 1:
        raise DataValidationError(
            f"{key_label} must be 1-D, one key per row; got {_shape_of(keys)} (a list of lists, a matrix or a mapping "
            "is not a column of keys)"
        )
    if max_groups is not None:  # declared and checked at the entry point
        if units is None:
            raise ParameterError(
                f"max_groups applies only with privacy_unit: without one every row is its own unit, in one key; "
                f"got max_groups={max_groups!r} and no privacy_unit"
            )
    if categories is not None:
        categories = check_categories(categories, None)
    elif delta == 0:
        raise ParameterError(
            "the keys are not known in advance (no categories): releasing keys read from the data needs delta > 0 "
            "(private partition selection: a key held by a single unit appears with probability at most delta). "
            "Pass delta > 0, well below 1/(number of units) (e.g. 1e-6), or categories=[...] with the public keys"
        )
    array, table = None, None
    if values:
        if is_frame(x) and not len(x.columns):
            raise DataValidationError("x has no column besides the keys and the privacy unit: nothing to release")
        array, table = from_table(x, "x")  # a dask DataFrame or Series too: its names, like a pandas table
        array = as_array(array, "x", ndim=(1, 2))
        rows = array.shape[0]
    else:
        rows = _length(keys) if keys_in_x or isinstance(by, str) else _length(x)
    if _length(keys) != rows:
        raise DataValidationError(f"{key_label} must have one key per row of x ({rows} rows); got {_length(keys)} keys")
    if rows < 1:
        raise DataValidationError("x must hold at least one record; got none")
    if units is not None:
        units = units.aligned(rows)
    grouping = Grouping(
        kind, keys, key_name, array, table, units, max_groups, categories, None, False, polars, key_label
    )
    return _designed(grouping, selection)


def _series_name(keys):
    """The name of a Series of keys (pandas, polars or dask), for the result's index; None for anything else. (A
    dask array's ``name`` is the key of its graph, a hash of the data for ``da.from_array``: not a name to show.)"""
    return getattr(keys, "name", None) if type(keys).__name__ == "Series" else None


def _shape_of(keys) -> str:
    """What the keys are, for an error message (their shape or type, never their values)."""
    shape = np.shape(keys)
    return f"an array of shape {shape}" if shape else f"a {type(keys).__name__}"


def _designed(grouping: Grouping, selection) -> Grouping:
    """The selection policy and whether its counts are reused (module docstring)."""
    if grouping.categories is not None:
        if selection is not None:
            raise ParameterError("selection applies only to keys selected privately; the categories are public")
        return grouping
    k, m = grouping.keys_per_unit, grouping.rows_per_key
    if k > MAX_GROUPS:  # max_groups=None: a unit's max_rows rows may fall in as many keys
        raise ParameterError(
            f"max_rows={m} without max_groups lets a unit hold {m} keys, and selecting keys privately allows at most "
            f"{MAX_GROUPS} keys per unit: pass max_groups (at most {MAX_GROUPS}), or max_rows <= {MAX_GROUPS}, or the "
            "public keys as categories"
        )
    countable = "count" in SHARES[grouping.kind] and m == 1  # distinct units per key = rows per key
    if selection is None:
        selection = "laplace" if k == 1 else ("gaussian" if countable else "weighted")
    return replace(grouping, policy=selection, reuse=countable and selection != "weighted")


def _key_column(x, column: str, values: bool):
    """(x without the key column, the keys) for ``by`` given as a column name of a DataFrame."""
    if not is_frame(x):
        raise ParameterError(
            f"by={column!r} names a column, which needs a DataFrame x; pass the keys themselves (an array or a "
            "Series aligned with the rows) otherwise"
        )
    columns = list(x.columns)
    if column not in columns:
        raise ParameterError(f"by={column!r} is not a column of x; its columns are {columns}")
    rest = [c for c in columns if c != column]
    if values and not rest:
        raise DataValidationError(f"x has no column besides the keys {column!r}: nothing to release")
    return x[rest], identifiers(x[column], "by")


def _length(data) -> int:
    """The number of rows of an array, list or table (a dask DataFrame's are counted)."""
    shape = getattr(data, "shape", None)
    if shape is not None and len(shape) and isinstance(shape[0], (int, np.integer)):
        return int(shape[0])
    try:
        return len(data)
    except TypeError as err:
        raise DataValidationError(
            f"x must be a sequence of records (an array, list or table); got {type(data).__name__}"
        ) from err


def _require_pandas() -> None:
    try:
        import pandas  # noqa: F401
    except ImportError as err:
        raise ModuleNotFoundError(
            "grouped releases return pandas objects (a Series or DataFrame indexed by key): install the tables "
            "extra, pip install 'dpstats[tables]'"
        ) from err


# ----------------------------------------------------------------------------- the rows, grouped


def group_table(grouping: Grouping, rng, *, grid: FixedPoint | None = None, clip: bool = False, cells=None):
    """The per-key statistics of the rows after bounding (on the data's engine), checked for missing and unknown
    keys; the random key of the bounding is drawn from ``rng`` (with a privacy unit) before any noise."""
    key = int(rng.integers(0, 2**63)) if grouping.units is not None else 0
    spec = GroupSpec(
        max_rows=grouping.rows_per_key,
        max_groups=grouping.max_groups,
        key=key,
        by_unit=grouping.units is not None,
        weights=grouping.policy == "weighted",
        grid=grid,
        clip=clip,
        squares=grouping.kind in _SQUARES,
        cells=cells,
        categories=None if grouping.categories is None else tuple(grouping.categories),
        name=grouping.key_label,
    )
    values = grouping.values if (grid is not None or cells is not None) else None
    table = key_table(grouping.keys, None if grouping.units is None else grouping.units.ids, values, spec)
    if table.missing:
        raise DataValidationError(
            f"{grouping.key_label} has {table.missing} missing key(s) (None, NaN or null): a missing value is not a "
            f"key. Drop those rows, or fill them with a key of your own (for example "
            f"{grouping.key_label}.fillna('unknown'))"
        )
    if table.outside:
        raise OutOfBoundsError(
            f"{grouping.key_label} has {table.outside} key(s) that are not in the public categories (missing values "
            "count as outside); add them to categories, or keep only the rows whose key is in the list"
        )
    return table


def calibrate(grouping: Grouping, epsilon: float, delta: float) -> Selection | None:
    """The partition selection of the call (None with public categories), from public parameters only."""
    if grouping.categories is not None:
        return None
    eps, dlt = grouping.budgets(epsilon, delta)["selection"]
    return calibrate_selection(eps, dlt, grouping.policy, grouping.keys_per_unit)


def selected(grouping: Grouping, selection: Selection | None, table: KeyTable, rng):
    """(positions of the released keys among the table's, their noisy unit counts or None): all the categories
    with public keys; the keys the selection keeps otherwise (noise drawn for every key present, in key order)."""
    if selection is None:
        return np.arange(len(grouping.categories)), None
    statistic = table.weights if grouping.policy == "weighted" else table.units
    keep, noisy = selection.keep(statistic, rng)
    index = np.flatnonzero(keep)
    return index, (noisy[index] if selection.counts_units else None)


def public_index(grouping: Grouping, table: KeyTable) -> np.ndarray:
    """With categories: the position in the table of every category (−1: no row), so statistics of absent
    categories are 0."""
    where = np.full(len(grouping.categories), -1, dtype=np.int64)
    where[table.keys.astype(np.int64)] = np.arange(table.size)
    return where


def released_keys(grouping: Grouping, table: KeyTable, index: np.ndarray):
    """The keys of the released positions: the categories, or the selected keys typed by their declared dtype and
    the released keys alone (:func:`dpstats._kernels.groups.released_keys`)."""
    if grouping.categories is not None:
        return list(grouping.categories)
    return typed_keys(table.keys[index], grouping.keys.dtype)


def per_key(grouping: Grouping, table: KeyTable, values: np.ndarray) -> np.ndarray:
    """A per-key statistic of the table, on the keys of the release's statistic axis: the table's keys, or every
    category (zero where a category has no row)."""
    if grouping.categories is None:
        return values
    where = public_index(grouping, table)
    out = np.zeros((where.size, *np.shape(values)[1:]), dtype=np.asarray(values).dtype)
    out[where >= 0] = np.asarray(values)[where[where >= 0]]
    return out


# ----------------------------------------------------------------------------- sensitivities


def moved(one_side, both, k: int, delta: float) -> float:
    """The L1 (δ = 0) or L2 sensitivity over keys of one column: k·max(b, 2a) or √(k·max(b², 2a²)) (module
    docstring), exact and rounded up."""
    one_side, both = Fraction(one_side), Fraction(both)
    if delta == 0:
        return l1_up([max(both, 2 * one_side)] * k)
    return l2_up([both] * k) if both * both >= 2 * one_side * one_side else l2_up([one_side] * (2 * k))


def quantile_sensitivity(grouping: Grouping) -> Fraction:
    """The total utility sensitivity over keys of the grouped quantile (module docstring)."""
    m = grouping.rows_per_key
    if grouping.units is not None and grouping.max_groups is None:
        return 2 * m * (1 + _TARGET_ROUNDING)
    return 2 * grouping.k * (m + _TARGET_ROUNDING)


# ----------------------------------------------------------------------------- the releases


def grouped(
    kind: str,
    x,
    epsilon: float,
    delta: float,
    *,
    by,
    bounds=None,
    clip: bool = False,
    weights=None,
    categories=None,
    max_groups=None,
    selection=None,
    privacy_unit=None,
    max_rows=None,
    rng,
    accountant,
    noise: str = "exact",
    keys_in_x: bool = False,
    name: str | None = None,
    mechanism: str | None = None,
    interval: float | None = None,
):
    """A grouped count, sum, mean or variance (module docstring); every declared parameter was checked at the
    release's entry point; ``mechanism`` names it in the ledger (default: ``kind``). ``interval``: a confidence
    level, for a mean with an interval per key (:mod:`dpstats.descriptive._intervals`).

    Returns a pandas Series (DataFrame for several columns) indexed by the released keys, or a polars DataFrame
    (with ``interval``, a :class:`~dpstats.inference.Estimate` of them).
    """
    if interval is not None:
        intervals.check_grouped(kind, categories, privacy_unit, max_rows)
        kind, mechanism = "mean interval", "mean"
    grouping = prepare(
        kind,
        x,
        delta,
        by=by,
        categories=categories,
        max_groups=max_groups,
        selection=selection,
        privacy_unit=privacy_unit,
        max_rows=max_rows,
        values=kind != "count",
        keys_in_x=keys_in_x,
    )
    if interval is not None and grouping.columns != 1:  # public (the data's columns), before anything is charged
        raise DataValidationError("ci with by= takes one column of values; got several: pass x[column]")
    budgets = grouping.budgets(epsilon, delta)
    chosen = calibrate(grouping, epsilon, delta)
    grid, bounded = None, None
    if kind != "count":
        grid, bounded = _checked(grouping, bounds, clip)
        if weights is not None:
            weights = check_weights(weights, (grouping.columns,), grouping.table).reshape(-1)
    table = group_table(grouping, rng, grid=grid, clip=clip)
    plans = {
        piece: _plan(grouping, statistic, budgets[piece], noise, weights)
        for piece, statistic in _pieces(grouping, table, bounded).items()
    }
    pieces = [piece for piece in budgets if piece != "selection"]
    laplace = budgets[pieces[0]][1] == 0 if pieces else grouping.policy == "laplace"
    bound = "L1" if laplace else "L2"
    notes = [grouping.note(table.n_units, bound)] + ([] if chosen is None else [chosen.note()])
    charge_plans(
        mechanism or kind,
        [p for group in plans.values() for p in group],
        rng=rng,
        accountant=accountant,
        note="; ".join(notes),
        events=() if chosen is None else (chosen.event,),
        statements=() if chosen is None else (chosen.statement(),),
        relation=Relation.of(grouping.units is not None),
    )
    index, counts = selected(grouping, chosen, table, rng)
    noisy = {piece: _apply(group, index, rng) for piece, group in plans.items()}
    if grouping.reuse and chosen is not None:
        noisy["count"] = counts.reshape(index.size, 1)
    keys = released_keys(grouping, table, index)
    result = keyed(grouping, keys, _combine(kind, noisy, bounded), name=name)
    if interval is None:
        return result
    noises = {piece: group[0].noises[0] for piece, group in plans.items()}
    return intervals.grouped_mean(result, keys, noisy, noises, bounded, interval, grouping, clip=clip, rng=rng)


def _checked(grouping: Grouping, bounds, clip: bool):
    """Every value checked against the bounds (NaN and infinity always raise) in one pass, before anything is
    charged: (the values' fixed-point grid, the rounded bounds and grid unit as exact per-column arrays)."""
    if grouping.table is not None and grouping.table.columns is not None:
        bounds = grouping.table.per_column(bounds, "bounds", pair=True)
    elif isinstance(bounds, dict):
        raise ParameterError("bounds as a dict {column: (lo, hi)} needs a DataFrame; pass (lower, upper) here")
    lower, upper = check_bounds(bounds)
    shape = (grouping.columns,)
    try:
        lower, upper = np.broadcast_to(lower, shape), np.broadcast_to(upper, shape)
    except ValueError as err:
        raise ParameterError(
            f"bounds must be one pair per column of x ({grouping.columns} columns); got shapes {np.shape(lower)} "
            f"and {np.shape(upper)}"
        ) from err
    squares = grouping.kind in _SQUARES
    values = grouping.values if np.ndim(grouping.values) == 2 else grouping.values.reshape(-1, 1)
    found = bounded_sums(values, lower, upper, axis=0, clip=clip, squares=squares)  # every value checked
    return FixedPoint.of(lower, upper, squares), _Bounds.of(found)


@dataclass(frozen=True)
class _Bounds:
    """The bounds rounded to the fixed-point grid, per column, exactly (Fractions): lo, hi, the unit h and the
    rounded bounds in steps of h."""

    lower: np.ndarray
    upper: np.ndarray
    unit: np.ndarray
    q_lower: np.ndarray
    q_upper: np.ndarray

    @classmethod
    def of(cls, sums: BoundedSums) -> _Bounds:
        unit = np.asarray(sums.unit, dtype=object).reshape(-1)
        q_lo = np.asarray(sums.q_lower, dtype=object).reshape(-1)
        q_hi = np.asarray(sums.q_upper, dtype=object).reshape(-1)
        return cls(q_lo * unit, q_hi * unit, unit, q_lo, q_hi)

    def midpoint(self) -> np.ndarray:
        return np.asarray((self.lower + self.upper) / 2, dtype=np.float64)


@dataclass(frozen=True)
class _Piece:
    """One released per-key statistic: its values (keys × columns, integers), unit per column, and the bounds a
    (one side) and b (both sides) per column (module docstring); ``units``: its units in the ledger."""

    values: np.ndarray
    unit: np.ndarray
    one_side: list
    both: list
    units: str


def _pieces(grouping: Grouping, table: KeyTable, bounds) -> dict[str, _Piece]:
    """The pieces of the release (module docstring) on the keys of the statistic axis."""
    m = grouping.rows_per_key
    rows = per_key(grouping, table, table.rows).astype(object)
    count = _Piece(rows.reshape(-1, 1), np.array([Fraction(1)], dtype=object), [m], [m - 1], "rows")
    if grouping.kind == "count":
        return {} if grouping.reuse and grouping.categories is None else {"count": count}
    total = per_key(grouping, table, table.exact_sums())
    lo, hi, h = bounds.lower, bounds.upper, bounds.unit
    if grouping.kind == "sum":
        big = np.maximum(abs(lo), abs(hi))
        both = np.maximum(hi, m * hi) - np.minimum(lo, m * lo)
        return {"sum": _Piece(total, h, list(m * big), list(both), "data units (sum per key)")}
    middle = bounds.q_lower + bounds.q_upper  # in steps h; x̄ = middle·h/2
    width = hi - lo
    twice = 2 * total - rows[:, None] * middle  # Σ(2q − (q_lo + q_hi)) = 2S/h
    pieces = {"shifted": _Piece(twice, h / 2, list(m * width / 2), list(m * width), "data units (sum of x − x̄)")}
    if grouping.kind in _SQUARES:
        squares = per_key(grouping, table, table.exact_squares())
        four = 4 * squares - 4 * middle * total + rows[:, None] * middle * middle  # 4Q/h²
        quarter = list(m * width * width / 4)
        pieces = {"squares": _Piece(four, h * h / 4, quarter, quarter, "squared data units"), **pieces}
    if not (grouping.reuse and grouping.categories is None):
        pieces["count"] = count
    return pieces


def _plan(grouping: Grouping, piece: _Piece, budget: tuple[float, float], noise: str, weights) -> list[Planned]:
    """The noise of one piece: one plan for all columns (vector sensitivity), or one per column with ``weights``."""
    epsilon, delta = budget
    k, moved_keys = grouping.k, 2 * grouping.keys_per_unit
    per_column = [moved(a, b, k, delta) for a, b in zip(piece.one_side, piece.both, strict=True)]
    columns = piece.values.shape[1]
    unit = piece.unit[0] if columns == 1 else piece.unit
    if weights is None or columns == 1:
        values = piece.values if columns > 1 else piece.values[:, 0]
        statistic = Statistic(np.asarray(values, dtype=object), unit)
        return [
            plan(
                statistic,
                per_column,
                epsilon,
                delta,
                noise=noise,
                table=grouping.table,
                changed=moved_keys * columns,
                units=piece.units,
            )
        ]
    shares = split_budget(epsilon, delta, weights)
    return [
        plan(
            Statistic(np.asarray(piece.values[:, j], dtype=object), piece.unit[j]),
            [per_column[j]],
            e,
            d,
            noise=noise,
            changed=moved_keys,
            units=piece.units,
        )
        for j, (e, d) in enumerate(shares)
    ]


def _apply(plans: list[Planned], index: np.ndarray, rng) -> np.ndarray:
    """The noisy piece on the released keys (keys × columns)."""
    parts = [p.apply_rows(index, rng) for p in plans]
    if len(parts) == 1:
        shape = plans[0].shape
        return parts[0].reshape(index.size, shape[1] if len(shape) > 1 else 1)
    return np.stack(parts, axis=1).reshape(index.size, len(parts))


def _combine(kind: str, noisy: dict, bounds) -> np.ndarray:
    """The released statistic per key and column from its noisy pieces (post-processing)."""
    if kind == "count":
        return noisy["count"]
    if kind == "sum":
        return noisy["sum"]
    count = np.maximum(noisy["count"], 1.0)
    if kind in ("mean", "mean interval"):
        return bounds.midpoint() + noisy["shifted"] / count
    return noisy["squares"] / count - (noisy["shifted"] / count) ** 2


def keyed(grouping: Grouping, keys, values: np.ndarray, *, name=None):
    """The result: a pandas Series indexed by key (one column of values) or DataFrame (several), or a polars
    DataFrame with the keys' column first (``keys``: a list, or an int64 or float64 array)."""
    values = np.asarray(values, dtype=np.float64).reshape(len(keys), grouping.columns)
    table = grouping.table
    columns = list(table.columns) if table is not None and table.columns is not None else None
    label = name if name is not None else (None if table is None else table.name)
    if grouping.polars:
        import polars as pl

        key = "key" if grouping.key_name is None else str(grouping.key_name)
        names = columns if columns else [str(label if label is not None else grouping.kind.split()[0])]
        return pl.DataFrame({key: keys, **{str(c): values[:, j] for j, c in enumerate(names)}})
    import pandas as pd

    index = pd.Index(keys, name=grouping.key_name)
    if columns is not None and len(columns) > 1:
        return pd.DataFrame(values, index=index, columns=pd.Index(columns))
    return pd.Series(values[:, 0], index=index, name=columns[0] if columns else label)
