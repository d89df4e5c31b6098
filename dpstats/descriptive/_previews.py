"""Previews of the descriptive releases: the noise and 95 % error of a planned call from its public arguments only
(:func:`dpstats.preview`; each declared as the release's ``preview=``). Each mirrors the sensitivity its release
derives in its docstring, and plans the noise with the same calibration (:func:`dpstats._release.plan`).

Public arguments: ``bounds`` (as the release takes them), and the data's public size: ``n`` rows without a privacy
unit (replace one row, n public), or ``units`` (the number of privacy units N, public) and ``max_rows`` (m) with one.
A grouped call (``by=`` in the release: the keys are data) is previewed with ``by=True``, or with the public
``categories``, and the release's ``max_groups`` and ``selection``; its size is not needed (its noise does not
depend on it), only ``max_rows`` with a privacy unit.

The exponential mechanisms (quantiles, private bounds, the private norm bound) add no noise to a statistic: their
ledger entries state none. Their previews state what public values tell (:func:`rank_statement`): Smith's
mechanism samples a point j of a public grid of G + 1 points with probability ∝ exp(−(ε′/2)|c(j) − t|) (c(j) the
rank of the grid point, t = q·n the target rank, ε′ = ε/Δu), so with j* the best grid point each of the other G
points is drawn with probability at most exp(−(ε′/2)(|c(j) − t| − |c(j*) − t|)) and

    P(|c(j) − t| > |c(j*) − t| + r) <= G·exp(−ε′r/2) = 0.05   for r = (2/ε′)·ln(G/0.05):

the released point's rank is within r of the target, beyond the best the grid allows, with probability >= 0.95
(the union bound over the grid; the usual error is several times smaller). It is stated in ranks (records, or
pairs), the one unit a public value can bound: how far a rank is in the data's units depends on the data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from types import SimpleNamespace

import numpy as np

from .._engine.tables import check_categories
from .._kernels.powers import power_sums
from .._release import Preview, plan, planned_preview, previewed, public_count, split_budget, unit_ratio_statements
from .._validation import check_bounds
from ..accounting import LedgerEntry, Relation, split_epsilon
from ..accounting.events import Exponential
from ..accounting.ledger import NoiseStatement
from ..exceptions import ParameterError
from ..noise.release import Statistic
from ..noise.selection import MAX_GROUPS
from ._grouped import SHARES, Grouping, moved, quantile_sensitivity
from ._grouped import calibrate as calibrate_selection
from ._intervals import check_grouped, mean_plans, quantile_events, unit_mean_plans, variance_plans
from ._norm_bound import NORM_BOUNDS, RADIUS_QUANTILE
from ._quantiles import GRID_SIZE

__all__ = [
    "EXPONENTIAL",
    "PublicRows",
    "count_preview",
    "histogram_preview",
    "made",
    "mean_preview",
    "private_bounds_preview",
    "private_norm_bound_preview",
    "public_rows",
    "quantile_preview",
    "rank_statement",
    "sum_preview",
    "variance_preview",
]

#: The distribution named by a preview's statement of an exponential mechanism (:class:`dpstats._release.Preview`).
EXPONENTIAL = "exponential mechanism"
#: The probability that a stated error is exceeded.
FAILURE = 0.05
#: The exponential mechanisms' ε′ is ε/Δu rounded down to a multiple of 2^-40, their target ranks to 2^-10
#: (:mod:`dpstats.descriptive._quantiles`).
_EPSILON_BITS = 40
_TARGET_ROUNDING = Fraction(1, 1 << 10)


# ----------------------------------------------------------------------------- shared by every family's previews


@dataclass(frozen=True)
class PublicRows:
    """The data's public size in a planned call: ``count`` rows without a privacy unit, or ``count`` = N units
    of at most ``max_rows`` = m rows each with one."""

    count: int
    max_rows: int | None = None

    @property
    def relation(self) -> Relation:
        return Relation.ROW if self.max_rows is None else Relation.UNIT

    @property
    def m(self) -> int:
        """Rows per unit (1 without a unit)."""
        return 1 if self.max_rows is None else self.max_rows

    @property
    def rows_bound(self) -> int:
        """The public bound on the rows read: n, or N·m (as :attr:`dpstats._engine.Bounded.rows_bound`)."""
        return self.count * self.m

    def note(self) -> str:
        if self.max_rows is None:
            return ""
        return f"privacy unit: {self.count} units (public), at most {self.max_rows} rows each; "


def public_rows(n=None, units=None, max_rows=None) -> PublicRows:
    """The data's public size from ``n`` (rows, no unit) or ``units`` (N) and ``max_rows`` (m); exactly one of the
    two, else a ParameterError that says what to give."""
    if (n is None) == (units is None):
        raise ParameterError(
            "give the data's public size: n (rows) without a privacy unit, or units (N) and max_rows with one"
        )
    if n is not None:
        if max_rows is not None:
            raise ParameterError("max_rows goes with units (a privacy unit), not with n")
        return PublicRows(public_count(n, "n"))
    if max_rows is None:
        raise ParameterError("units (a privacy unit) needs max_rows, the rows kept per unit")
    return PublicRows(public_count(units, "units"), public_count(max_rows, "max_rows"))


def made(
    release: str,
    events,
    statements=(),
    *,
    note: str = "",
    relation=None,
    proven: bool = True,
) -> Preview:
    """A preview of a call charged ``events``, stated by ``statements``: its (ε, δ) is the exact sum over the
    events, rounded up, as its ledger entry's will be (its entries', for a call that makes several)."""
    entry = LedgerEntry.of(release, events)
    return Preview(release, entry.epsilon, entry.delta, tuple(statements), tuple(events), note, relation, proven)


def rank_statement(epsilon: float, sensitivity, outputs: int, units: str) -> NoiseStatement:
    """What Smith's exponential mechanism on ``outputs`` grid points at ε, with utility sensitivity Δu (ranks
    moved by a neighbour), states from public values (module docstring): scale 2/ε′ ranks (ε′ = ε/Δu rounded down
    to a multiple of 2^-40, as the exact sampler runs), and the rank error r = (2/ε′)·ln((outputs − 1)/0.05)
    beyond the best grid point's, with probability >= 0.95 (plus 2^-10 for the target's rounding)."""
    eps_num = math.floor(Fraction(epsilon) / Fraction(sensitivity) * (1 << _EPSILON_BITS))
    if eps_num == 0:  # the sampler runs at ε′ = 0: uniform over the grid, no bound on the rank
        return NoiseStatement(EXPONENTIAL, math.inf, math.inf, units)
    scale = float(Fraction(2 << _EPSILON_BITS, eps_num))
    gap = scale * math.log((outputs - 1) / FAILURE) + float(_TARGET_ROUNDING)
    return NoiseStatement(EXPONENTIAL, scale, math.nextafter(gap, math.inf), units)


def _widths(bounds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if bounds is None:
        raise ParameterError("bounds are needed: the public (lower, upper) the call will take")
    if isinstance(bounds, Mapping):  # {column: (lo, hi)}, as for a DataFrame: one pair per column, in its order
        pairs = [check_bounds(pair, f"bounds[{column!r}]") for column, pair in bounds.items()]
        bounds = ([float(lo) for lo, _ in pairs], [float(hi) for _, hi in pairs])
    lower, upper = (np.asarray(b, dtype=np.float64) for b in check_bounds(bounds))
    return lower, upper, np.ravel(upper - lower)


def _weights(weights, bounds):
    """The weights as an array, one per coordinate (a dict {column: weight} in the order of a dict of bounds)."""
    if not isinstance(weights, Mapping):
        return weights
    order = list(bounds) if isinstance(bounds, Mapping) else list(weights)
    missing = [c for c in order if c not in weights]
    if missing or len(weights) != len(order):
        raise ParameterError(f"weights must name the columns of bounds; got {sorted(weights)} for {order}")
    return np.array([float(weights[c]) for c in order])


# ----------------------------------------------------------------------------- means, variances, sums, counts


def mean_preview(
    epsilon,
    delta,
    *,
    shares,
    bounds=None,
    n=None,
    units=None,
    max_rows=None,
    by=None,
    categories=None,
    max_groups=None,
    selection=None,
    weights=None,
    noise="exact",
    ci=None,
) -> Preview:
    """dps.mean: (hi − lo)/n per coordinate; with a unit, the shifted sum and the count of
    :func:`dpstats.mean` ("Privacy units"), stated in the mean's units (``shares``: the mean's split of the budget
    between them, bound by the declaration); grouped, the pieces of :mod:`dpstats.descriptive._grouped`. With
    ``ci``, the releases its interval needs (:func:`_interval_preview`)."""
    weights = _weights(weights, bounds)
    keys = _keys(by, categories, max_groups, selection, units, max_rows)
    if keys is not None:
        if ci is not None:
            check_grouped("mean", categories, units, max_rows)
        return _grouped_preview("mean", epsilon, delta, bounds, keys, weights=weights, noise=noise)
    size, m = _size(n, units, max_rows)
    _, _, width = _widths(bounds)
    if ci is not None:
        return _interval_preview("mean", epsilon, delta, bounds, size, m, ci, noise=noise, weights=weights)
    if m is None:
        return planned_preview(
            "mean",
            epsilon,
            delta,
            width / size,
            units="data units",
            relation=Relation.ROW,
            noise=noise,
            weights=weights,
        )
    shares = split_budget(epsilon, delta, shares) if m > 1 else [(epsilon, delta)]
    zeros = Statistic(np.zeros(width.shape, np.int64))
    plans = [plan(zeros, m * width, *shares[0], noise=noise, weights=weights, units="")]
    if m > 1:
        plans.append(plan(Statistic(0, Fraction(1)), [m - 1], *shares[1], noise=noise, units="rows"))
    return _ratio("mean", epsilon, delta, plans, size, width, variance=False)


def variance_preview(
    epsilon,
    delta,
    *,
    shares,
    bounds=None,
    n=None,
    units=None,
    max_rows=None,
    by=None,
    categories=None,
    max_groups=None,
    selection=None,
    weights=None,
    noise="exact",
    ci=None,
) -> Preview:
    """dps.variance: (n − 1)(hi − lo)²/n² per coordinate; with a unit, the shifted sums and the count, stated in
    the variance's units (``shares``: the variance's split of the budget between Q, S and C); grouped, the
    pieces of :mod:`dpstats.descriptive._grouped`. With ``ci``, the releases its interval needs
    (:func:`_interval_preview`)."""
    weights = _weights(weights, bounds)
    keys = _keys(by, categories, max_groups, selection, units, max_rows)
    if keys is not None:
        if ci is not None:
            check_grouped("variance", categories, units, max_rows)
        return _grouped_preview("variance", epsilon, delta, bounds, keys, weights=weights, noise=noise)
    size, m = _size(n, units, max_rows)
    _, _, width = _widths(bounds)
    if ci is not None:
        return _interval_preview("variance", epsilon, delta, bounds, size, m, ci, noise=noise, weights=weights)
    if m is None:
        if size < 2:
            raise ParameterError(f"n must be >= 2 for a variance; got {n!r}")
        per = (size - 1) * width**2 / size**2
        return planned_preview(
            "variance",
            epsilon,
            delta,
            per,
            units="squared data units",
            relation=Relation.ROW,
            noise=noise,
            weights=weights,
        )
    shares = split_budget(epsilon, delta, shares if m > 1 else shares[:2])
    zeros = Statistic(np.zeros(width.shape, np.int64))
    plans = [
        plan(zeros, m * width**2 / 4, *shares[0], noise=noise, weights=weights, units=""),
        plan(zeros, m * width, *shares[1], noise=noise, weights=weights, units=""),
    ]
    if m > 1:
        plans.append(plan(Statistic(0, Fraction(1)), [m - 1], *shares[2], noise=noise, units="rows"))
    return _ratio("variance", epsilon, delta, plans, size, width, variance=True)


def _interval_preview(name, epsilon, delta, bounds, size, m, level, *, noise, weights) -> Preview:
    """A mean or a variance with ``ci`` (:mod:`dpstats.descriptive._intervals`): the releases its interval needs,
    planned by the release's own functions on zero statistics, each stated in its own units as the ledger states
    it. Refused as the release refuses them, from public values: a variance with a privacy unit, fewer than 2 (a
    mean) or 3 (a variance) records."""
    lower, upper, width = _widths(bounds)
    zeros = Statistic(np.zeros(width.shape, np.int64)) if width.size > 1 else Statistic(0)
    relation = Relation.ROW if m is None else Relation.UNIT
    least = 2 if name == "mean" else 3
    if (m is None or m == 1) and size < least:
        raise ParameterError(f"ci for a {name} needs at least {least} records (n is public); got {size}")
    split = "4 : 1" if name == "mean" else "7 : 1 : 1 : 1"
    if name == "variance":
        if m is not None:
            raise ParameterError(
                "ci for a variance is available without privacy_unit only (the interval of a unit-level variance "
                "needs the units' fourth moments)"
            )
        powers = power_sums(np.zeros((0, width.size)), lower, upper)  # its coarse grid only: public
        plans = variance_plans([zeros] * 4, width, powers, size, epsilon, delta, noise=noise, weights=weights)
    elif m is None or m == 1:
        plans = mean_plans(zeros, zeros, width, size, epsilon, delta, noise=noise, weights=weights)
    else:
        split = "8 : 4 : 2 : 1 : 1"
        grid = power_sums(np.zeros((0, width.size)), lower, upper)  # its coarse grid only: public
        one = width.size == 1
        q, h = (int(grid.bound[0]), grid.unit[0]) if one else (grid.bound.astype(object), grid.unit)
        count = Statistic(0, Fraction(1))
        plans = unit_mean_plans(
            (zeros, count, zeros, zeros, count), m * width, q, h, m, epsilon, delta, noise=noise, weights=weights
        )
    statements = [statement for planned in plans for statement in planned.statements()]
    note = f"with a {level:g} confidence interval: epsilon split {split} between the releases the interval needs"
    return previewed(name, plans, statements, note=note, relation=relation)


def _ratio(name, epsilon, delta, plans, size, width, *, variance) -> Preview:
    return previewed(name, plans, unit_ratio_statements(plans, size, width, variance=variance), relation=Relation.UNIT)


def sum_preview(
    epsilon,
    delta,
    *,
    bounds=None,
    n=None,
    units=None,
    max_rows=None,
    by=None,
    categories=None,
    max_groups=None,
    selection=None,
    weights=None,
    noise="exact",
) -> Preview:
    """dps.sum: hi − lo per coordinate; with a unit, max(hi, m·hi) − min(lo, m·lo); grouped, the sum per key of
    :mod:`dpstats.descriptive._grouped`."""
    weights = _weights(weights, bounds)
    keys = _keys(by, categories, max_groups, selection, units, max_rows)
    if keys is not None:
        return _grouped_preview("sum", epsilon, delta, bounds, keys, weights=weights, noise=noise)
    _, m = _size(n, units, max_rows)
    lower, upper, _ = _widths(bounds)
    relation, m = (Relation.ROW, 1) if m is None else (Relation.UNIT, m)
    per = np.ravel(np.where(upper > 0, m * upper, upper) - np.where(lower < 0, m * lower, lower))
    return planned_preview(
        "sum", epsilon, delta, per, units="data units", relation=relation, noise=noise, weights=weights
    )


def count_preview(
    epsilon,
    delta,
    *,
    n=None,
    units=None,
    max_rows=None,
    by=None,
    categories=None,
    max_groups=None,
    selection=None,
    noise="exact",
) -> Preview:
    """dps.count: without a unit (or with max_rows=1) the count is public and returned exactly, nothing charged;
    with a unit, the kept rows with noise of sensitivity m − 1; grouped, the count per key (or the selection's
    noisy counts) of :mod:`dpstats.descriptive._grouped`."""
    keys = _keys(by, categories, max_groups, selection, units, max_rows)
    if keys is not None:
        return _grouped_preview("count", epsilon, delta, None, keys, noise=noise)
    _, m = _size(n, units, max_rows)
    relation = Relation.ROW if m is None else Relation.UNIT
    if m is None or m == 1:
        note = "the count is public here: returned exactly, nothing charged"
        return Preview("count", 0.0, 0.0, note=note, relation=relation)
    return planned_preview(
        "count", epsilon, delta, [m - 1], units="rows", relation=relation, unit=Fraction(1), noise=noise
    )


def histogram_preview(
    epsilon,
    delta,
    *,
    bins=None,
    range=None,  # noqa: A002 (the release's name)
    categories=None,
    other=None,
    max_groups=None,
    selection=None,
    n=None,
    units=None,
    max_rows=None,
    noise="exact",
) -> Preview:
    """dps.histogram over public bins or categories: a row (a unit: m rows) moves between two bins, so m per
    coordinate over at most min(bins, 2m) coordinates. Without bins, range or categories (or with categories and
    ``max_groups``), the counts per key of :mod:`dpstats.descriptive._grouped` (keys selected privately: δ > 0)."""
    if bins is None and range is None and other is None and (categories is None or max_groups is not None):
        if categories is None and delta == 0:
            raise ParameterError(
                "give bins (public bins) or categories (public keys), as the call will, or delta > 0 to count keys "
                "selected privately"
            )
        keys = dict(categories=categories, max_groups=max_groups, selection=selection, units=units, max_rows=max_rows)
        return _grouped_preview("count", epsilon, delta, None, keys, "histogram", noise=noise)
    if max_groups is not None or selection is not None:
        raise ParameterError("max_groups and selection apply to histograms of keys (no bins, range or other=)")
    if categories is not None:
        cells = len(check_categories(categories, other)) + (other is not None)
    else:
        cells = 10 if bins is None else int(bins)  # the release's default, as its bins
    rows = PublicRows(1) if n is None and units is None and max_rows is None else public_rows(n, units, max_rows)
    m, relation = rows.m, rows.relation  # the size itself does not enter a histogram's noise
    per = [m, m]
    return planned_preview(
        "histogram",
        epsilon,
        delta,
        per,
        units="counts",
        changed=min(cells, 2 * m),
        relation=relation,
        unit=Fraction(1),
        noise=noise,
    )


def _size(n, units, max_rows) -> tuple[int, int | None]:
    rows = public_rows(n, units, max_rows)
    return rows.count, rows.max_rows


# ----------------------------------------------------------------------------- grouped releases


def _keys(by, categories, max_groups, selection, units, max_rows) -> dict | None:
    """The public description of a grouped call's keys (``by=True``, or the public ``categories``), or None for a
    call without keys; the grouped options without keys are refused as the release refuses them."""
    if by is None and categories is None:
        given = [n for n, v in (("max_groups", max_groups), ("selection", selection)) if v is not None]
        if given:
            raise ParameterError(f"{', '.join(given)} apply only to grouped releases: pass by=True (or categories=)")
        return None
    if by is not None and by is not True:
        raise ParameterError(
            f"by=True previews a grouped call (its keys are data: only whether there are keys is public); got by={by!r}"
        )
    return {
        "categories": categories,
        "max_groups": max_groups,
        "selection": selection,
        "units": units,
        "max_rows": max_rows,
    }


def _design(kind: str, delta: float, categories, max_groups, selection, max_rows) -> Grouping:
    """The public design of a grouped call (as :func:`dpstats.descriptive._grouped.prepare` makes it, without the
    keys): the privacy unit's bounds, the categories, the selection policy and whether its counts are reused."""
    unit = max_rows is not None
    m = public_count(max_rows, "max_rows") if unit else 1
    if max_groups is not None:
        if not unit:
            raise ParameterError(
                "max_groups applies only with a privacy unit (max_rows=): without one every row is its own unit, in "
                "one key"
            )
        max_groups = public_count(max_groups, "max_groups")
    if categories is not None:
        categories = check_categories(categories, None)
        if selection is not None:
            raise ParameterError("selection applies only to keys selected privately; the categories are public")
    elif delta == 0:
        raise ParameterError(
            "the keys are not known in advance (no categories): releasing keys read from the data needs delta > 0 "
            "(private partition selection); pass delta > 0, or categories=[...] with the public keys"
        )
    bounded = SimpleNamespace(max_rows=m) if unit else None  # what the design reads of the units: m
    grouping = Grouping(kind, None, None, None, None, bounded, max_groups, categories, None, False, False)
    if categories is not None:
        return grouping
    k = grouping.keys_per_unit
    if k > MAX_GROUPS:
        raise ParameterError(
            f"max_rows={m} without max_groups lets a unit hold {m} keys, and selecting keys privately allows at most "
            f"{MAX_GROUPS} keys per unit: pass max_groups, or max_rows <= {MAX_GROUPS}, or the public categories"
        )
    countable = "count" in SHARES[kind] and m == 1
    policy = selection or ("laplace" if k == 1 else ("gaussian" if countable else "weighted"))
    return replace(grouping, policy=policy, reuse=countable and policy != "weighted")


def _pieces(kind: str, grouping: Grouping, bounds) -> dict:
    """piece -> (one side, both sides per column, units, unit): the bounds a and b of the sensitivity table of
    :mod:`dpstats.descriptive._grouped`, of the pieces the release plans (in its order)."""
    m = grouping.rows_per_key
    count = ([Fraction(m)], [Fraction(m - 1)], "rows", Fraction(1))
    if kind == "count":
        return {} if grouping.reuse and grouping.categories is None else {"count": count}
    lower, upper, _ = _widths(bounds)
    lower, upper = np.broadcast_arrays(np.ravel(lower), np.ravel(upper))
    lo, hi = [Fraction(float(v)) for v in lower], [Fraction(float(v)) for v in upper]
    if kind == "sum":
        one = [m * max(abs(a), abs(b)) for a, b in zip(lo, hi, strict=True)]
        both = [max(b, m * b) - min(a, m * a) for a, b in zip(lo, hi, strict=True)]
        return {"sum": (one, both, "data units (sum per key)", None)}
    width = [b - a for a, b in zip(lo, hi, strict=True)]
    pieces = {"shifted": ([m * w / 2 for w in width], [m * w for w in width], "data units (sum of x − x̄)", None)}
    if kind == "variance":
        quarter = [m * w * w / 4 for w in width]
        pieces = {"squares": (quarter, quarter, "squared data units", None), **pieces}
    if not (grouping.reuse and grouping.categories is None):
        pieces["count"] = count
    return pieces


def _grouped_preview(kind, epsilon, delta, bounds, keys: dict, name=None, *, weights=None, noise="exact") -> Preview:
    """A grouped count, sum, mean or variance (:func:`dpstats.descriptive._grouped.grouped`): the selection's
    noise (keys not public) and each piece's, calibrated as the release calibrates them, over the keys a replaced
    unit moves (2k of them)."""
    if keys["units"] is not None:
        public_count(keys["units"], "units")
    grouping = _design(kind, delta, keys["categories"], keys["max_groups"], keys["selection"], keys["max_rows"])
    budgets = grouping.budgets(epsilon, delta)
    chosen = calibrate_selection(grouping, epsilon, delta)
    k, moved_keys = grouping.k, 2 * grouping.keys_per_unit
    plans = []
    for piece, (one, both, units_name, unit) in _pieces(kind, grouping, bounds).items():
        eps, dlt = budgets[piece]
        per_column = [moved(a, b, k, dlt) for a, b in zip(one, both, strict=True)]
        columns = len(per_column)
        if weights is None or columns == 1:
            statistic = Statistic(np.zeros(columns, np.int64), unit)
            plans.append(
                plan(statistic, per_column, eps, dlt, noise=noise, changed=moved_keys * columns, units=units_name)
            )
            continue
        weights = np.broadcast_to(np.asarray(weights, dtype=np.float64), (columns,))
        for j, (e, d) in enumerate(split_budget(eps, dlt, weights)):  # one release per column, as the release
            statistic = Statistic(np.zeros(1, np.int64), unit)
            plans.append(plan(statistic, [per_column[j]], e, d, noise=noise, changed=moved_keys, units=units_name))
    events = ([] if chosen is None else [chosen.event]) + [n.event for p in plans for n in p.noises]
    statements = ([] if chosen is None else [chosen.statement()]) + [s for p in plans for s in p.statements()]
    where = "public categories" if grouping.categories is not None else "keys selected privately"
    note = f"grouped {kind} over {where}; the noise of each key's statistic, calibrated for the keys a unit moves"
    relation = Relation.of(grouping.units is not None)
    return made(
        name or kind,
        events,
        statements,
        note=note + ("" if chosen is None else f"; {chosen.note()}"),
        relation=relation,
    )


# ----------------------------------------------------------------------------- quantiles: exponential mechanisms


def quantile_preview(
    epsilon,
    delta,
    *,
    q=None,
    bounds=None,
    grid_size=GRID_SIZE,
    scale="linear",
    n=None,
    units=None,
    max_rows=None,
    by=None,
    categories=None,
    max_groups=None,
    selection=None,
    ci=None,
) -> Preview:
    """dps.quantile: Smith's exponential mechanism on the public grid of ``grid_size`` + 1 points, utility
    sensitivity Δu = 1 (m + 2^-10 with a unit of m rows): the rank error that holds with probability 0.95
    (:func:`rank_statement`). Several levels: the joint mechanism (Δu = 3m − 1, unproven sampler), the sum of its
    levels' rank errors. Per-column bounds: each column at ε/d. Grouped: each key's mechanism at the release's
    share of ε over the utility sensitivity of all the keys a unit moves, and the selection's noise."""
    levels = _levels(q)
    lower, upper, width = _widths(bounds)
    grid = int(grid_size)
    describe = f"a public grid of {grid + 1} points ({scale})"
    keys = _keys(by, categories, max_groups, selection, units, max_rows)
    if keys is not None:
        if levels.size != 1:
            raise ParameterError(f"with by=, q must be one level (a number); got {levels.tolist()}")
        if units is not None:
            public_count(units, "units")
        grouping = _design("quantile", delta, categories, max_groups, selection, max_rows)
        budget = grouping.budgets(epsilon, delta)["quantile"][0]
        chosen = calibrate_selection(grouping, epsilon, delta)
        stated = rank_statement(budget, quantile_sensitivity(grouping), grid + 1, "ranks (rows of a key)")
        events = ([] if chosen is None else [chosen.event]) + [Exponential(budget)]
        statements = ([] if chosen is None else [chosen.statement()]) + [stated]
        note = (
            f"grouped quantile: each key's rank within ±{stated.half_width:.4g} of q·n_key beyond the best point of "
            f"{describe}, with probability 0.95"
        )
        note += "" if chosen is None else f"; {chosen.note()}"
        return made("quantile", events, statements, note=note, relation=Relation.of(grouping.units is not None))
    if delta != 0 or max_groups is not None or selection is not None:
        raise ParameterError("delta, max_groups and selection apply only to grouped quantiles: pass by=True")
    rows = public_rows(n, units, max_rows)
    columns = width.size
    if ci is not None:
        return _quantile_interval_preview(epsilon, levels, columns, rows, grid, describe, ci)
    share = epsilon if columns == 1 else split_epsilon(epsilon, columns)
    if levels.size == 1:
        sensitivity = 1 if rows.m == 1 else rows.m + _TARGET_ROUNDING
        stated = rank_statement(share, sensitivity, grid + 1, "ranks (records)")
        note = (
            f"{rows.note()}exponential mechanism (Smith 2011) on {describe}: the released point's rank within "
            f"±{stated.half_width:.4g} of q·n beyond the best grid point's, with probability 0.95"
        )
        if rows.max_rows is None:
            note += f" (a level within ±{stated.half_width / rows.count:.3g} of q)"
        events = [Exponential(share)] * columns
        return made("quantile", events, [stated], note=note, relation=rows.relation)
    # the joint mechanism: P ∝ exp(−(ε/(2Δu))·Σ|gap − target|), Δu = 3m − 1, over C(G + L, L) sorted tuples
    sensitivity = 3 * rows.m - 1
    outcomes = math.lgamma(grid + levels.size + 1) - math.lgamma(grid + 1) - math.lgamma(levels.size + 1)
    scale_ranks = 2.0 * sensitivity / share
    gap = scale_ranks * (outcomes - math.log(FAILURE))
    stated = NoiseStatement(
        EXPONENTIAL, scale_ranks, math.nextafter(gap, math.inf), "ranks (records, summed over the gaps)"
    )
    note = (
        f"{rows.note()}joint exponential mechanism (Gillenwater, Joseph & Kulesza 2021) for {levels.size} levels on "
        f"{describe}: the gaps' rank errors sum to at most {gap:.4g} beyond the best tuple's, with probability 0.95; "
        "its sampler is floating point: UNPROVEN (an Accountant refuses it unless allow_unproven=True); call "
        "quantile once per level for a proven release"
    )
    return made("quantile", [Exponential(share)] * columns, [stated], note=note, relation=rows.relation, proven=False)


def _quantile_interval_preview(epsilon, levels, columns, rows, grid, describe, level) -> Preview:
    """One quantile with ``ci``: three exponential mechanisms (:func:`dpstats.descriptive._intervals.
    quantile_events`), the quantile and the interval's ends, each with its rank error (:func:`rank_statement`).
    Refused as the release refuses them: several levels or columns, units of several records."""
    if levels.size != 1 or columns != 1:
        raise ParameterError("ci is available for one quantile level q (a number) of one column")
    if rows.m > 1:
        raise ParameterError("ci for a quantile needs independent records: with privacy_unit, pass max_rows=1")
    events = quantile_events(epsilon)
    statements = [rank_statement(e.epsilon, 1, grid + 1, "ranks (records)") for e in events]
    note = (
        f"{rows.note()}with a {level:g} confidence interval: epsilon split 2 : 1 : 1 between the quantile and the "
        f"interval's ends, three exponential mechanisms (Smith 2011) on {describe}; the quantile's rank within "
        f"±{statements[0].half_width:.4g} of q·n beyond the best grid point's, with probability 0.95"
    )
    return made("quantile", events, statements, note=note, relation=rows.relation)


def _levels(q) -> np.ndarray:
    if q is None:
        raise ParameterError("q is needed: the quantile level(s) the call will take")
    levels = np.atleast_1d(np.asarray(q, dtype=np.float64))
    if levels.ndim != 1 or levels.size == 0 or not (np.isfinite(levels) & (levels >= 0) & (levels <= 1)).all():
        raise ParameterError(f"q must be a number or a non-empty 1-D array of numbers in [0, 1]; got {q!r}")
    return levels


def private_bounds_preview(
    epsilon,
    delta,
    *,
    range=None,  # noqa: A002 (the release's name)
    quantiles=(0.05, 0.95),
    grid_size=GRID_SIZE,
    scale="log",
    columns=1,
    n=None,
    units=None,
    max_rows=None,
) -> Preview:
    """dps.private_bounds: per column (``columns``: 1, or the DataFrame's; a dict ``range`` gives them), two exact
    single quantiles at ε/(2d) each on the grid of ``range`` (each its own ledger entry): each bound's rank error
    (:func:`rank_statement`)."""
    if range is None:
        raise ParameterError("range is needed: the wide public (lower, upper) the call will take")
    levels = _levels(quantiles)
    if levels.size != 2 or not 0 < levels[0] < levels[1] < 1:
        raise ParameterError(f"quantiles must be a pair (q_lo, q_hi) with 0 < q_lo < q_hi < 1; got {quantiles!r}")
    columns = len(range) if isinstance(range, Mapping) else public_count(columns, "columns")  # {column: range}
    rows = public_rows(n, units, max_rows)
    each = epsilon if columns == 1 else split_epsilon(epsilon, columns)
    half = split_epsilon(each, 2)
    sensitivity = 1 if rows.m == 1 else rows.m + _TARGET_ROUNDING
    grid = int(grid_size)
    stated = rank_statement(half, sensitivity, grid + 1, "ranks (records)")
    note = (
        f"{rows.note()}two exponential-mechanism quantiles (Smith 2011) per column at epsilon/{2 * columns}, each its "
        f"own ledger entry, on a public grid of {grid + 1} points ({scale}): each bound's rank within "
        f"±{stated.half_width:.4g} of q·n beyond the best grid point's, with probability 0.95"
    )
    return made("quantile", [Exponential(half)] * (2 * columns), [stated], note=note, relation=rows.relation)


def private_norm_bound_preview(
    epsilon, delta, *, q=RADIUS_QUANTILE, bounds=NORM_BOUNDS, n=None, units=None, max_rows=None
) -> Preview:
    """dps.private_norm_bound: the q-quantile of the rows' log₂ norms on the release's grid of 2^16 cells of
    log₂(bounds) (Smith's mechanism): the rank error among the rows' norms (:func:`rank_statement`)."""
    lower, upper = check_bounds(bounds, "bounds")
    if lower.ndim or upper.ndim or lower <= 0:
        raise ParameterError(f"bounds must be a pair of scalars 0 < lower < upper; got {bounds!r}")
    rows = public_rows(n, units, max_rows)
    sensitivity = 1 if rows.m == 1 else rows.m + _TARGET_ROUNDING
    stated = rank_statement(epsilon, sensitivity, GRID_SIZE + 1, "ranks (rows, by norm)")
    note = (
        f"{rows.note()}exponential mechanism (Smith 2011) on a public grid of {GRID_SIZE + 1} points of log2 of "
        f"[{float(lower):g}, {float(upper):g}]: the bound's rank among the rows' norms within "
        f"±{stated.half_width:.4g} of q·n beyond the best grid point's, with probability 0.95"
    )
    return made("quantile", [Exponential(epsilon)], [stated], note=note, relation=rows.relation)
