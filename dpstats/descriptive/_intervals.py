"""The releases of a call with ``ci=``: the estimate and what its interval needs, in one ledger entry.

``dps.mean(x, ε, …, ci=0.95)`` (and :func:`~dpstats.variance`, :func:`~dpstats.quantile`, a grouped mean) releases
the estimate with a share of the budget and, with the rest, the statistics its confidence interval needs; all of
them are planned before anything is charged (a budget too small for a share is refused then, naming ``epsilon``),
charged together as one entry whose note states the split, and the interval is computed from the noisy releases
and the noise's public distribution only (:mod:`dpstats.inference`). The estimate is what the call returns without
``ci`` (the same release, at its share of ε); the result is a :class:`~dpstats.inference.Estimate`.

============  ===============================================================  ================================
call          released (shares of ε and δ)                                     interval (:mod:`dpstats.inference`)
============  ===============================================================  ================================
mean          the mean 4, the mean of (x − x̄)² 1                               ``_mean``
mean, units   Σ(x − x̄) 8, the count 4, Σ_u S_u² 2, Σ_u S_u·C_u 1, Σ_u C_u² 1    ``_mean``, for a ratio
(m > 1)
grouped mean  per key: Σ(x − x̄) 4, the count 2, Σ(x − x̄)² 1                    ``_mean``, per key
variance      the variance 7, the means of (x − x̄), (x − x̄)³, (x − x̄)⁴ 1 each    ``_variance``
quantile      the quantile 2, the lower end 1, the upper end 1                 ``_quantile``
============  ===============================================================  ================================

x̄ is the bounds' midpoint; S_u and C_u a unit's shifted sum and count. Each statistic's sensitivity is stated
beside its plan below. With ``clip=True`` every interval is for the variable clipped to the bounds, and the result
says so (its ``target``): clipping bias is not estimated, because nothing about the data beyond the bounds is
known without reading it.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from .._kernels.powers import power_sums
from .._release import Planned, plan, release, split_budget
from ..exceptions import DataValidationError, ParameterError
from ..inference import Estimate
from ..inference._mean import METHOD as MEAN_METHOD
from ..inference._mean import MeanReleases, UnitMoments, mean_interval
from ..inference._quantile import METHOD as QUANTILE_METHOD
from ..inference._quantile import SHARES as QUANTILE_SHARES
from ..inference._quantile import end_targets
from ..inference._simulate import DRAWS, NoiseModel
from ..inference._variance import METHOD as VARIANCE_METHOD
from ..inference._variance import VarianceReleases, variance_interval
from ..noise.release import Statistic
from ._shifted import Shifted

__all__ = ["MEAN_SHARES", "UNIT_SHARES", "VARIANCE_SHARES", "mean", "quantile", "variance"]

#: Shares of (ε, δ): the mean and the mean of (x − x̄)².
MEAN_SHARES = (4, 1)
#: With units of several records: Σ(x − x̄), the count, Σ_u S_u², Σ_u S_u·C_u, Σ_u C_u².
UNIT_SHARES = (8, 4, 2, 1, 1)
#: The variance, and the moments of order 1, 3 and 4 about the midpoint.
VARIANCE_SHARES = (7, 1, 1, 1)


def shares(epsilon: float, delta: float, weights, what: str) -> list[tuple[float, float]]:
    """(ε, δ) of each release of a call with ``ci`` (before anything is charged): a share too small to be an ε is
    refused naming ``epsilon``."""
    try:
        return split_budget(epsilon, delta, weights)
    except ParameterError as err:
        raise ParameterError(
            f"epsilon={epsilon!r} is too small for ci: {what} would get a share below what a release can use ({err})"
        ) from None


# ----------------------------------------------------------------------------- mean


def mean(rec, epsilon: float, delta: float, level: float, *, weights, clip: bool, rng, accountant, noise: str):
    """The mean with its interval (module docstring); ``rec`` are the call's records (sums with squares)."""
    if rec.units is not None and rec.units.max_rows > 1:
        return _unit_mean(rec, epsilon, delta, level, weights, clip, rng, accountant, noise)
    sums, table = rec.sums, rec.table
    n = sums.n
    if n < 2:
        raise DataValidationError(f"ci needs at least 2 records (n is public); got n = {n}")
    h = np.asarray(sums.unit, dtype=object)
    width = (np.asarray(sums.q_upper, dtype=object) - np.asarray(sums.q_lower, dtype=object)) * h
    squares = Shifted.of(sums, 1).squares
    planned_mean, planned_sq = mean_plans(
        Statistic(sums.sums, _divided(sums.unit, n)),
        Statistic(squares.values, _divided(squares.unit, n)),
        width,
        n,
        epsilon,
        delta,
        noise=noise,
        weights=weights,
        table=table,
    )
    relation = "row" if rec.units is None else "unit"
    unit_note = "" if rec.units is None else f"privacy unit: {rec.units.units} units (public), 1 record each; "
    note = (
        f"{unit_note}with a {level:g} confidence interval: epsilon{' and delta' if delta else ''} split 4 : 1 "
        "between the mean and the mean of (x − x̄)² (x̄ the bounds' midpoint), the interval computed from them"
    )
    noisy_mean, noisy_sq = release(
        "mean", [planned_mean, planned_sq], rng=rng, accountant=accountant, note=note, relation=relation
    )
    lower, upper = _bounds(sums)
    means, mid_sq = np.atleast_1d(noisy_mean).ravel(), np.atleast_1d(noisy_sq).ravel()
    out = []
    for j in range(means.size):
        middle = (lower[j] + upper[j]) / 2.0
        releases = MeanReleases(
            total=n * (means[j] - middle),
            count=float(n),
            noise_total=_noise(planned_mean, j).times(n),
            noise_count=NoiseModel.none(),
            lower=lower[j],
            upper=upper[j],
            squares=n * mid_sq[j],
            noise_squares=_noise(planned_sq, j).times(n),
        )
        out.append(mean_interval(releases, level, rng, DRAWS))
    target = _target("mean", means.size, clip, lower, upper, rec.units)
    return _estimate(noisy_mean, out, table, np.shape(sums.sums), level, MEAN_METHOD, target)


def _unit_mean(rec, epsilon, delta, level, weights, clip, rng, accountant, noise):
    """Units of m > 1 records: the ratio estimator x̄ + S̃/max(C̃, N) of :func:`dpstats.mean`, and the unit-level
    second moments of S_u and C_u on a coarse grid (module docstring; :mod:`dpstats._kernels.powers`'s grid)."""
    units, table = rec.units, rec.table
    m, n_units = units.max_rows, units.units
    stats = Shifted.of(rec.sums, m)
    coarse = _unit_moments(rec.values, rec.ids, rec.sums)
    h = coarse["unit"]
    statistics = (
        stats.shifted,
        stats.count,
        Statistic(coarse["ss"], h * h),
        Statistic(coarse["sc"], h),
        Statistic(coarse["cc"], Fraction(1)),
    )
    plans = unit_mean_plans(
        statistics,
        stats.shifted_sensitivity,
        coarse["bound"],
        h,
        m,
        epsilon,
        delta,
        noise=noise,
        weights=weights,
        table=table,
    )
    note = (
        f"privacy unit: {n_units} units (public), at most {m} records each; with a {level:g} confidence interval: "
        f"epsilon{' and delta' if delta else ''} split 8 : 4 : 2 : 1 : 1 between the shifted sum, the record count and "
        "the units' sums of S_u², S_u·C_u and C_u² (coarse grid), the interval computed from them"
    )
    total, count, ss, sc, cc = release("mean", plans, rng=rng, accountant=accountant, note=note, relation="unit")
    lower, upper = _bounds(rec.sums)
    total, ss, sc = (np.atleast_1d(v).ravel() for v in (total, ss, sc))
    out = []
    for j in range(total.size):
        moments = UnitMoments(ss[j], sc[j], float(cc), _noise(plans[2], j), _noise(plans[3], j), _noise(plans[4], 0))
        releases = MeanReleases(
            total=total[j],
            count=float(count),
            noise_total=_noise(plans[0], j),
            noise_count=_noise(plans[1], 0),
            lower=lower[j],
            upper=upper[j],
            moments=moments,
            units=n_units,
        )
        out.append(mean_interval(releases, level, rng, DRAWS))
    estimate = stats.midpoint + np.asarray(total).reshape(np.shape(stats.midpoint)) / max(float(count), n_units)
    target = _target("mean", total.size, clip, lower, upper, units)
    return _estimate(_shaped(estimate), out, table, np.shape(stats.midpoint), level, MEAN_METHOD, target)


def _unit_moments(values: np.ndarray, ids: np.ndarray, sums) -> dict:
    """Σ_u S_u², Σ_u S_u·C_u (per coordinate) and Σ_u C_u² over the units, S_u on the coarse grid of
    :mod:`dpstats._kernels.powers` (exact integers), with that grid's unit and bound Q."""
    lower, upper = _bounds(sums)
    powers = power_sums(values[:1], lower, upper)  # the grid only
    h = powers.unit.astype(float)
    middle = (lower + upper) / 2.0
    q = np.clip(np.rint((np.clip(values, lower, upper) - middle) / h), -powers.bound, powers.bound).astype(np.int64)
    _, inverse = np.unique(ids, return_inverse=True)
    inverse = inverse.ravel()
    count = np.bincount(inverse).astype(np.int64)
    ss, sc = [], []
    for j in range(q.shape[1]):
        per_unit = np.zeros(count.size, dtype=np.int64)
        np.add.at(per_unit, inverse, q[:, j])
        exact = per_unit.astype(object)
        ss.append(int(np.sum(exact * exact)))
        sc.append(int(np.sum(exact * count.astype(object))))
    shape = np.shape(sums.sums)
    scalar = shape == ()
    return {
        "ss": ss[0] if scalar else np.array(ss, dtype=object).reshape(shape),
        "sc": sc[0] if scalar else np.array(sc, dtype=object).reshape(shape),
        "cc": int(np.sum(count.astype(object) * count.astype(object))),
        "unit": powers.unit[0] if scalar else powers.unit.reshape(shape),
        "bound": int(powers.bound[0]) if scalar else powers.bound.astype(object).reshape(shape),
    }


def check_grouped(kind: str, categories, privacy_unit, max_rows) -> None:
    """Refuse ``ci`` with ``by=`` where no interval is made (before anything is read or charged): a grouped mean
    with public categories, without a privacy unit or with one record per unit and key."""
    if kind != "mean":
        raise ParameterError(f"ci with by= is available for the mean only; got a grouped {kind}")
    if categories is None:
        raise ParameterError(
            "ci with by= needs the public keys (categories=[...]): keys selected privately are released because "
            "their noisy counts are large, which would bias the interval of a small key"
        )
    if privacy_unit is not None and max_rows != 1:
        raise ParameterError(
            "ci with by= and privacy_unit needs max_rows=1 (the records of a key then come from distinct units); "
            f"got max_rows={max_rows!r}"
        )


def grouped_mean(result, keys, noisy, noises, bounds, level: float, grouping, *, clip: bool, rng) -> Estimate:
    """A grouped mean with an interval per key: ``result`` the means as returned without ``ci``, ``noisy`` the
    released pieces per key (shifted sums, counts, shifted sums of squares), ``noises`` their noise, ``bounds`` the
    rounded bounds (:mod:`dpstats.descriptive._grouped`)."""
    lower, upper = float(bounds.lower[0]), float(bounds.upper[0])
    models = {piece: NoiseModel.of(noise) for piece, noise in noises.items()}
    out = []
    for i in range(len(keys)):
        releases = MeanReleases(
            total=float(noisy["shifted"][i, 0]),
            count=float(noisy["count"][i, 0]),
            noise_total=models["shifted"],
            noise_count=models["count"],
            lower=lower,
            upper=upper,
            squares=float(noisy["squares"][i, 0]),
            noise_squares=models["squares"],
        )
        out.append(mean_interval(releases, level, rng, DRAWS))
    lows, highs, errors = (np.array([e[k] for e in out]) for k in range(3))
    target = _target("mean", 1, clip, [lower], [upper], None).replace("of x", "of x within each key", 1)
    if grouping.units is not None:
        target += ", for one record drawn at random from each unit of the population"
    if grouping.polars:
        import polars as pl

        key = "key" if grouping.key_name is None else str(grouping.key_name)
        ci = pl.DataFrame({key: keys, "low": lows, "high": highs})
        errors = pl.DataFrame({key: keys, "std_error": errors})
    else:
        import pandas as pd

        index = pd.Index(keys, name=grouping.key_name)
        ci = pd.DataFrame({"low": lows, "high": highs}, index=index)
        errors = pd.Series(errors, index=index, name="std_error")
    return Estimate(result, ci, level, MEAN_METHOD, errors, target)


# ----------------------------------------------------------------------------- variance


def variance(rec, epsilon: float, delta: float, level: float, *, weights, clip: bool, rng, accountant, noise: str):
    """The variance with its interval (module docstring); records only (no privacy unit)."""
    if rec.units is not None:
        raise ParameterError(
            "ci for a variance is available without privacy_unit only: the interval of a unit-level variance needs "
            "the units' fourth moments, which dpstats does not release yet"
        )
    sums, table = rec.sums, rec.table
    n = sums.n
    if n < 3:
        raise DataValidationError(f"ci for a variance needs at least 3 records (n is public); got n = {n}")
    h = np.asarray(sums.unit, dtype=object)
    q_width = np.asarray(sums.q_upper, dtype=object) - np.asarray(sums.q_lower, dtype=object)
    powers = power_sums(rec.values, *_bounds(sums))
    shape = np.shape(sums.sums)
    g = powers.unit
    statistics = [Statistic(sums.squares * n - sums.sums * sums.sums, _divided(h * h, n * n))] + [
        Statistic(_reshape(powers.sums[k], shape), _reshape(np.array([u**k / n for u in g], dtype=object), shape))
        for k in (1, 3, 4)
    ]
    planned_var, *moments = variance_plans(
        statistics, q_width * h, powers, n, epsilon, delta, noise=noise, weights=weights, table=table
    )
    note = (
        f"with a {level:g} confidence interval: epsilon{' and delta' if delta else ''} split 7 : 1 : 1 : 1 between "
        "the variance and the means of (x − x̄), (x − x̄)³ and (x − x̄)⁴ (x̄ the bounds' midpoint, coarse grid), the "
        "interval computed from them"
    )
    noisy = release("variance", [planned_var, *moments], rng=rng, accountant=accountant, note=note, relation="row")
    lower, upper = _bounds(sums)
    flat = [np.atleast_1d(v).ravel() for v in noisy]
    out = []
    for j in range(flat[0].size):
        releases = VarianceReleases(
            variance=flat[0][j],
            noise_variance=_noise(planned_var, j),
            first=flat[1][j],
            third=flat[2][j],
            fourth=flat[3][j],
            noise_first=_noise(moments[0], j),
            noise_third=_noise(moments[1], j),
            noise_fourth=_noise(moments[2], j),
            lower=lower[j],
            upper=upper[j],
            n=n,
        )
        out.append(variance_interval(releases, level, rng, DRAWS))
    target = _target("variance", flat[0].size, clip, lower, upper, None)
    return _estimate(noisy[0], out, table, shape, level, VARIANCE_METHOD, target)


# ----------------------------------------------------------------------------- quantile


def quantile(cells, q: float, epsilon: float, level: float, grid, m: int, relation: str, *, clip: bool, sample, charge):
    """One quantile with its interval (module docstring): three exact exponential mechanisms, the estimate at
    ``q`` and the ends at the target ranks of :func:`~dpstats.inference._quantile.end_targets`. ``sample(level,
    epsilon)`` draws one grid index from the records' sorted ``cells``; ``charge(events, note)`` charges the call."""
    n = cells.size
    if m > 1:
        raise ParameterError(
            "ci for a quantile needs independent records: with privacy_unit, pass max_rows=1 (one record per unit, "
            "chosen at random); the ranks of several records of one unit are not binomial"
        )
    events = quantile_events(epsilon)
    e_est, e_end = events[0].epsilon, events[1].epsilon
    t_low, t_high = end_targets(n, q, level, e_end)
    units = "privacy unit: one record each; " if relation == "unit" else ""
    note = (
        f"{units}with a {level:g} confidence interval: epsilon split 2 : 1 : 1 between the quantile and the "
        f"interval's ends, three exponential mechanisms (Smith 2011) on a {grid.describe()}, exact sampler; the ends "
        "at public target ranks (Drechsler et al. 2022)"
    )
    charge(events, note)
    estimate = float(grid.values(sample(q, e_est)))
    low = grid.lower if t_low is None else float(grid.values(sample(t_low / n, e_end)))
    high = grid.upper if t_high is None else float(grid.values(sample(t_high / n, e_end)))
    low, high = min(low, high), max(low, high)  # post-processing
    target = f"the population {q:g}-quantile of x"
    if clip:
        target += f" clipped to [{grid.lower:g}, {grid.upper:g}] (clip=True: the interval covers the clipped variable)"
    if relation == "unit":
        target += ", for one record drawn at random from each unit of the population"
    return Estimate(estimate, (low, high), level, QUANTILE_METHOD, None, target)


# ----------------------------------------------------------------------------- the plans (release and preview)
#
# Each function plans the releases of a call with ``ci`` from their statistics and public values (bounds, n, m):
# the release passes the exact statistics, its preview (:mod:`dpstats.descriptive._previews`) zeros, so both state
# the same events and noise.


def mean_plans(mean: Statistic, squares: Statistic, width, n: int, epsilon, delta, *, noise, weights, table=None):
    """The mean and the mean of (x − x̄)² of records (one per unit), at ε and δ split 4 : 1. The mean: Δ = (hi −
    lo)/n per coordinate (:func:`dpstats.mean`); the mean of (x − x̄)² lies in [0, (hi − lo)²/4]: Δ = (hi −
    lo)²/(4n)."""
    (e_mean, d_mean), (e_sq, d_sq) = shares(epsilon, delta, MEAN_SHARES, "the mean of (x − x̄)²")
    return [
        plan(mean, width / n, e_mean, d_mean, noise=noise, weights=weights, table=table),
        plan(
            squares,
            width * width / (4 * n),
            e_sq,
            d_sq,
            noise=noise,
            weights=weights,
            table=table,
            units="squared data units (mean of (x − x̄)²)",
        ),
    ]


def unit_mean_plans(statistics, shifted_sensitivity, q, h, m: int, epsilon, delta, *, noise, weights, table=None):
    """The shifted sum, the record count and Σ_u S_u², Σ_u S_u·C_u, Σ_u C_u² (coarse grid of unit ``h`` and bound
    ``q``), at ε and δ split 8 : 4 : 2 : 1 : 1. A unit's c <= m kept records: S_u ∈ [−c·Q, c·Q] grid steps, so S_u²
    ∈ [0, m²Q²], S_u·C_u ∈ [−m²Q, m²Q] and C_u² ∈ [1, m²]; the shifted sum's Δ = m·w and the count's m − 1 as in
    :func:`dpstats.mean`."""
    shifted, count, ss, sc, cc = statistics
    splits = shares(epsilon, delta, UNIT_SHARES, "the units' second moments")
    options = dict(noise=noise, weights=weights, table=table)
    return [
        plan(shifted, shifted_sensitivity, *splits[0], **options, units="data units (sum of x − x̄)"),
        plan(count, [m - 1], *splits[1], noise=noise, units="rows"),
        plan(ss, (m * q) ** 2 * h * h, *splits[2], **options, units="squared data units (sum over units of S_u²)"),
        plan(sc, 2 * m * m * q * h, *splits[3], **options, units="data units × rows (sum over units of S_u·C_u)"),
        plan(cc, [m * m - 1], *splits[4], noise=noise, units="rows² (sum over units of C_u²)"),
    ]


def variance_plans(statistics, width, powers, n: int, epsilon, delta, *, noise, weights, table=None):
    """The variance and the means of (x − x̄)^k, k = 1, 3, 4, on the coarse grid of ``powers`` (its unit g and bound
    Q), at ε and δ split 7 : 1 : 1 : 1. The variance as :func:`dpstats.variance`: Δ = (n − 1)(hi − lo)²/n² (its
    docstring); (1/n)Σq^k·g^k: a record's q^k lies in [−Q^k, Q^k] (k odd: Δ = 2Q^k g^k/n) or [0, Q^k] (k = 4:
    Q^k g^k/n)."""
    splits = shares(epsilon, delta, VARIANCE_SHARES, "the moments of order 1, 3 and 4")
    g, bound = powers.unit, powers.bound.astype(object)
    options = dict(noise=noise, weights=weights, table=table)
    plans = [plan(statistics[0], (n - 1) * width**2 / (n * n), *splits[0], **options, units="squared data units")]
    for k, statistic, split in zip((1, 3, 4), statistics[1:], splits[1:], strict=True):
        span = (bound**k if k % 2 == 0 else 2 * bound**k) * g**k / n
        plans.append(
            plan(statistic, span, *split, **options, units=f"data units^{k} (mean of (x − x̄)^{k}, coarse grid)")
        )
    return plans


def quantile_events(epsilon: float) -> list:
    """The three exponential mechanisms of a quantile with ``ci``: ε split 2 : 1 : 1 between the quantile and the
    interval's ends."""
    from ..accounting.events import Exponential

    splits = shares(epsilon, 0.0, QUANTILE_SHARES, "each end of the interval")
    return [Exponential(splits[0][0]), Exponential(splits[1][0]), Exponential(splits[1][0])]


# ----------------------------------------------------------------------------- results


def _noise(planned: Planned, j: int) -> NoiseModel:
    """The noise model of coordinate j of a plan (one noise for the whole vector, or one per coordinate)."""
    noises = planned.noises
    return NoiseModel.of(noises[0] if len(noises) == 1 else noises[j])


def _divided(unit, n: int):
    """A Fraction unit (or an object array of them) divided by n."""
    if isinstance(unit, Fraction):
        return unit / n
    return np.asarray(unit, dtype=object) / n


def _reshape(values, shape):
    values = np.asarray(values, dtype=object)
    return values.reshape(-1)[0] if shape == () else values.reshape(shape)


def _bounds(sums) -> tuple[np.ndarray, np.ndarray]:
    """The bounds rounded to the records' grid (the bounds of the variable released), per coordinate, as floats."""
    h = np.asarray(sums.unit, dtype=object).reshape(-1)
    lo = np.asarray(sums.q_lower, dtype=object).reshape(-1)
    hi = np.asarray(sums.q_upper, dtype=object).reshape(-1)
    return np.array([float(a * u) for a, u in zip(lo, h, strict=True)]), np.array(
        [float(b * u) for b, u in zip(hi, h, strict=True)]
    )


def _shaped(values):
    values = np.asarray(values, dtype=np.float64)
    return float(values) if values.ndim == 0 else values


def _target(what: str, coordinates: int, clip: bool, lower, upper, units) -> str:
    """The population quantity the interval covers, in words."""
    where = "x" if coordinates == 1 else "each coordinate of x"
    text = f"the population {what} of {where}"
    if clip:
        bounds = f"[{lower[0]:g}, {upper[0]:g}]" if coordinates == 1 else "its bounds"
        text += f" clipped to {bounds} (clip=True: the interval covers the clipped variable, not x)"
    if units is not None and units.max_rows > 1:
        text += f", over the records of the population of units (at most {units.max_rows} kept per unit)"
    elif units is not None:
        text += ", for one record drawn at random from each unit of the population"
    return text


def _estimate(values, ends, table, shape, level: float, method: str, target: str) -> Estimate:
    """The Estimate: the release as the call returns it without ``ci``, the intervals and standard errors."""
    lows = np.array([e[0] for e in ends]).reshape(shape)
    highs = np.array([e[1] for e in ends]).reshape(shape)
    errors = np.array([e[2] for e in ends]).reshape(shape)
    estimate = values if table is None else table.per_column_result(values)
    if shape == () or (table is not None and table.columns is None):
        return Estimate(estimate, (float(lows), float(highs)), level, method, float(errors), target)
    if table is None:
        return Estimate(estimate, np.stack([lows, highs], axis=-1), level, method, errors, target)
    return Estimate(estimate, frame(table, lows, highs), level, method, table.per_column_result(errors), target)


def frame(table, lows, highs, index=None):
    """The intervals of a table's columns (or of keys): a DataFrame with columns ``low`` and ``high``."""
    names = list(index if index is not None else table.columns)
    lows, highs = np.asarray(lows, dtype=np.float64).ravel(), np.asarray(highs, dtype=np.float64).ravel()
    if table.library == "pandas":
        import pandas as pd

        return pd.DataFrame({"low": lows, "high": highs}, index=pd.Index(names))
    import polars as pl

    return pl.DataFrame({"column": [str(c) for c in names], "low": lows, "high": highs})
