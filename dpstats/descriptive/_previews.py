"""Previews of the descriptive releases: the noise and 95 % error of a planned call from its public arguments only
(:func:`dpstats.preview`; each declared as the release's ``preview=``). Each mirrors the sensitivity its release
derives in its docstring, and plans the noise with the same calibration (:func:`dpstats._release.plan`).

Public arguments: ``bounds`` (as the release takes them), and the data's public size: ``n`` rows without a privacy
unit (replace one row, n public), or ``units`` (the number of privacy units N, public) and ``max_rows`` (m) with one.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .._release import Preview, plan, planned_preview, previewed, public_count, split_budget, unit_ratio_statements
from .._validation import check_bounds
from ..accounting import Relation
from ..exceptions import ParameterError
from ..noise.release import Statistic

__all__ = ["count_preview", "histogram_preview", "mean_preview", "sum_preview", "variance_preview"]


def _size(n, units, max_rows) -> tuple[int, int | None]:
    """(n or N, m): rows without a privacy unit, units and max_rows with one; exactly one of the two."""
    if (n is None) == (units is None):
        raise ParameterError(
            "give the data's public size: n (rows) without a privacy unit, or units (N) and max_rows with one"
        )
    if n is not None:
        if max_rows is not None:
            raise ParameterError("max_rows goes with units (a privacy unit), not with n")
        return public_count(n, "n"), None
    if max_rows is None:
        raise ParameterError("units (a privacy unit) needs max_rows, the rows kept per unit")
    return public_count(units, "units"), public_count(max_rows, "max_rows")


def _widths(bounds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if bounds is None:
        raise ParameterError("bounds are needed: the public (lower, upper) the call will take")
    lower, upper = (np.asarray(b, dtype=np.float64) for b in check_bounds(bounds))
    return lower, upper, np.ravel(upper - lower)


def mean_preview(epsilon, delta, *, shares, bounds=None, n=None, units=None, max_rows=None) -> Preview:
    """dps.mean: (hi − lo)/n per coordinate; with a unit, the shifted sum and the count of
    :func:`dpstats.mean` ("Privacy units"), stated in the mean's units (``shares``: the mean's split of the budget
    between them, bound by the declaration)."""
    size, m = _size(n, units, max_rows)
    _, _, width = _widths(bounds)
    if m is None:
        return planned_preview("mean", epsilon, delta, width / size, units="data units", relation=Relation.ROW)
    shares = split_budget(epsilon, delta, shares) if m > 1 else [(epsilon, delta)]
    plans = [plan(Statistic(np.zeros(width.shape, np.int64)), m * width, *shares[0], noise="exact", units="")]
    if m > 1:
        plans.append(plan(Statistic(0, Fraction(1)), [m - 1], *shares[1], noise="exact", units="rows"))
    return _ratio("mean", epsilon, delta, plans, size, width, variance=False)


def variance_preview(epsilon, delta, *, shares, bounds=None, n=None, units=None, max_rows=None) -> Preview:
    """dps.variance: (n − 1)(hi − lo)²/n² per coordinate; with a unit, the shifted sums and the count, stated in
    the variance's units (``shares``: the variance's split of the budget between Q, S and C)."""
    size, m = _size(n, units, max_rows)
    _, _, width = _widths(bounds)
    if m is None:
        if size < 2:
            raise ParameterError(f"n must be >= 2 for a variance; got {n!r}")
        per = (size - 1) * width**2 / size**2
        return planned_preview("variance", epsilon, delta, per, units="squared data units", relation=Relation.ROW)
    shares = split_budget(epsilon, delta, shares if m > 1 else shares[:2])
    zeros = Statistic(np.zeros(width.shape, np.int64))
    plans = [
        plan(zeros, m * width**2 / 4, *shares[0], noise="exact", units=""),
        plan(zeros, m * width, *shares[1], noise="exact", units=""),
    ]
    if m > 1:
        plans.append(plan(Statistic(0, Fraction(1)), [m - 1], *shares[2], noise="exact", units="rows"))
    return _ratio("variance", epsilon, delta, plans, size, width, variance=True)


def _ratio(name, epsilon, delta, plans, size, width, *, variance) -> Preview:
    return previewed(name, plans, unit_ratio_statements(plans, size, width, variance=variance), relation=Relation.UNIT)


def sum_preview(epsilon, delta, *, bounds=None, n=None, units=None, max_rows=None) -> Preview:
    """dps.sum: hi − lo per coordinate; with a unit, max(hi, m·hi) − min(lo, m·lo)."""
    _, m = _size(n, units, max_rows)
    lower, upper, _ = _widths(bounds)
    relation, m = (Relation.ROW, 1) if m is None else (Relation.UNIT, m)
    per = np.ravel(np.where(upper > 0, m * upper, upper) - np.where(lower < 0, m * lower, lower))
    return planned_preview("sum", epsilon, delta, per, units="data units", relation=relation)


def count_preview(epsilon, delta, *, n=None, units=None, max_rows=None) -> Preview:
    """dps.count: without a unit (or with max_rows=1) the count is public and returned exactly, nothing charged;
    with a unit, the kept rows with noise of sensitivity m − 1."""
    _, m = _size(n, units, max_rows)
    relation = Relation.ROW if m is None else Relation.UNIT
    if m is None or m == 1:
        note = "the count is public here: returned exactly, nothing charged"
        return Preview("count", 0.0, 0.0, note=note, relation=relation)
    return planned_preview("count", epsilon, delta, [m - 1], units="rows", relation=relation, unit=Fraction(1))


def histogram_preview(epsilon, delta, *, bins=None, categories=None, units=None, max_rows=None) -> Preview:
    """dps.histogram over public bins or categories: a row (a unit: m rows) moves between two bins, so m per
    coordinate over at most min(bins, 2m) coordinates."""
    if (bins is None) == (categories is None):
        raise ParameterError("give bins (public bins) or categories (public keys), as the call will")
    cells = int(bins) if bins is not None else len(categories)
    relation, m = (Relation.ROW, 1) if units is None else (Relation.UNIT, _size(None, units, max_rows)[1])
    per = [m, m]
    return planned_preview(
        "histogram", epsilon, delta, per, units="counts", changed=min(cells, 2 * m), relation=relation, unit=Fraction(1)
    )
