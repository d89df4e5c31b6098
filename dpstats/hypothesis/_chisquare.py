"""Chi-square tests of categorical data, private: goodness of fit and independence from a noisy table.

The release: the counts of the records over public categories (one variable: k counts; two: the r × c table of
the pairs), with exact discrete Laplace (δ = 0) or discrete Gaussian (δ > 0) noise. Replacing one record moves one
count down by 1 and another up by 1: L1 sensitivity 2, L2 √2 (with a privacy unit and one record per unit, the
same). The number of records n is public. Everything below is post-processing of the noisy counts.

Goodness of fit (:func:`chisquare`)
-----------------------------------
The null fixes the probabilities p₀ completely: the counts are Multinomial(n, p₀), and the released counts are
those plus the exact noise — a null distribution with no nuisance parameter, simulated exactly. The statistic is
the unprojected statistic of Kifer & Rogers (2017, Section 5.1), the Mahalanobis distance of the noisy counts from
their null mean under their null covariance with the noise included,

    Q = dᵀ Σ⁻¹ d,   d = ñ − n·p₀,   Σ = n(diag(p₀) − p₀p₀ᵀ) + v·I,

v the noise's exact variance (Σ⁻¹ by Sherman–Morrison). Without noise Q is Pearson's X²; with it, Q weights each
category by its whole variance, where X² would let the noise of a rare category dominate. The p-value is the
Monte Carlo p-value (1 + #{Q* >= Q})/(B + 1) over B draws of Q from the null (the multinomial and the exact noise):
the test of Gaboardi, Lim, Rogers & Vadhan (ICML 2016, the Monte Carlo goodness-of-fit test) with Kifer & Rogers'
statistic. It is valid for any B (P(p <= u) <= u under the null exactly: Q* and Q are exchangeable).

Independence (:func:`chi2_contingency`)
---------------------------------------
The null (the two variables independent) leaves the margins π_r, π_c unknown: they are the nuisance. They are
estimated from the released table alone, by the two-step estimate of Gaboardi et al. (2016, Section 4): the noisy
table projected onto the tables of n non-negative counts (the Euclidean projection onto the scaled simplex, Held,
Wolfe & Crowder 1974), then its margins. The statistic is Pearson's, with the noise's variance in the denominators,

    X̃² = Σ_ij (ñ_ij − Ê_ij)² / (Ê_ij + v),   Ê = n·π̂_r π̂_cᵀ,

and its null distribution is simulated at the estimated margins — B tables from Multinomial(n, π̂_r ⊗ π̂_c), each
with the exact noise, each statistic computed as the real one, margins re-estimated from its own noisy table (a
parametric bootstrap: Gaboardi et al.'s Monte Carlo independence test). The p-value is (1 + #{X̃²* >= X̃²})/(B + 1).
The margins are estimated, so the level is not exact: the type-I error measured in ``tests/test_hypothesis.py``
and ``benchmarks/bench_hypothesis.py`` is within the issue's α + 0.01 on the grid of n and ε there.

References
----------
M. Gaboardi, H. Lim, R. Rogers & S. Vadhan, "Differentially private chi-squared hypothesis testing: goodness of fit
and independence testing", ICML 2016. D. Kifer & R. Rogers, "A new class of private chi-square hypothesis tests",
AISTATS 2017. M. Held, P. Wolfe & H. Crowder, "Validation of subgradient optimization", Mathematical Programming 6,
1974 (projection onto the simplex).
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from .._constraints import NOISE, UNITS, Checked, Data, privacy
from .._engine.tables import check_categories, labels
from .._registry import declare
from .._release import Planned, plan
from ..descriptive._histogram import category_codes
from ..exceptions import DataValidationError, OutOfBoundsError, ParameterError
from ..inference._simulate import DRAWS, NoiseModel, pvalue
from ..noise.release import Statistic
from ._result import RESAMPLES, HypothesisResult, charged, keep_one_per_unit, noise_of, one_record_per_unit

__all__ = ["category_pair", "chi2_contingency", "chisquare", "counts_plan", "expected_frequencies", "public_categories"]

GOF_METHOD = (
    "Monte Carlo: the multinomial null plus the exact noise, Kifer & Rogers' unprojected statistic (Kifer & Rogers "
    "2017; Gaboardi, Lim, Rogers & Vadhan 2016)"
)
INDEPENDENCE_METHOD = (
    "parametric bootstrap: the margins estimated from the projected noisy table, tables simulated from their "
    "product with the exact noise (Gaboardi, Lim, Rogers & Vadhan 2016)"
)

_CATEGORIES = Checked(
    "a list of at least two unique, hashable public labels of one kind",
    {"a string": "ab", "empty": [], "one": ["a"], "duplicates": ["a", "a"], "a missing key": ["a", None]},
)
_PAIR = Checked(
    "a pair (categories of x, categories of y): two lists of at least two unique public labels each",
    {
        "None": None,
        "one list": ["a", "b"],
        "three lists": (["a", "b"], ["c", "d"], ["e", "f"]),
        "duplicates": (["a", "a"], ["c", "d"]),
        "a missing key": (["a", None], ["c", "d"]),
        "one category": (["a"], ["c", "d"]),
    },
)
_F_EXP = Checked(
    "None, or one positive finite expected frequency per category (scaled to n)",
    {"negative": [-1.0, 2.0], "zero": [0.0, 1.0], "nan": [math.nan, 1.0], "string": "ab"},
)


@declare(
    family="hypothesis",
    statistic="counts over public categories, for a chi-square goodness-of-fit test",
    data={"x": Data("records")},
    parameters={**privacy(), "categories": _CATEGORIES, "f_exp": _F_EXP, "n_resamples": RESAMPLES, **UNITS, **NOISE},
    relations=("row", "unit"),
    cases="dpstats.hypothesis._cases:chisquare",
    preview="dpstats.hypothesis._previews:chisquare_preview",
)
def chisquare(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    categories,
    f_exp=None,
    n_resamples: int = DRAWS,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant=None,
    noise: str = "exact",
) -> HypothesisResult:
    """Private chi-square goodness-of-fit test: do the categories occur with the expected frequencies?
    (scipy.stats.chisquare)

    Releases the counts of ``x`` over the public ``categories`` (L1 sensitivity 2, L2 √2) and tests them against
    ``f_exp`` by simulating the exact null — the multinomial and the noise — with Kifer & Rogers' statistic
    (module docstring). Unlike scipy's, the test takes the records, not the counts: the counts are what is
    released.

    Parameters
    ----------
    x : array_like or pandas Series
        One label per record (n public). A label outside ``categories`` (a missing value included) is refused.
    epsilon, delta : float
        The budget of the counts.
    categories : list
        The public categories (at least two), chosen without looking at the data.
    f_exp : array_like, optional
        The expected frequencies, one per category (any positive scale: they are normalised to n); None: equal.
    n_resamples : int, default 2000
        B, the number of draws of the simulated null (the p-value is at least 1/(B + 1)).
    privacy_unit, max_rows
        As in :func:`dpstats.mean`, with ``max_rows=1``.
    rng, accountant, noise
        As in :func:`dpstats.mean`.

    Returns
    -------
    HypothesisResult
        ``statistic``: Q; ``released``: the noisy counts (a pandas Series by category for a pandas ``x``).

    References
    ----------
    Gaboardi, Lim, Rogers & Vadhan, ICML 2016. Kifer & Rogers, AISTATS 2017.

    Examples
    --------
    >>> from dpstats import hypothesis
    >>> dice = ["one"] * 30 + ["two"] * 30 + ["six"] * 60
    >>> result = hypothesis.chisquare(dice, 1.0, categories=["one", "two", "six"], rng=0)
    >>> bool(result.pvalue < 0.01)
    True
    """
    categories = public_categories(categories, "categories")
    k = len(categories)
    expected = expected_frequencies(f_exp, k)
    x, units = one_record_per_unit(x, privacy_unit, max_rows, "x")
    codes, table = _codes(x, categories, "x")
    unit_note, relation = "", "row"
    if units is not None:
        (codes,), _, unit_note = keep_one_per_unit((codes,), units, rng)
        relation = "unit"
    n = int(codes.shape[0])
    counts = np.bincount(codes, minlength=k).astype(np.int64)
    planned = counts_plan(counts, epsilon, delta, noise)
    note = f"{unit_note}chisquare: the counts of {k} public categories (n = {n}, public), the whole budget"
    (noisy,) = charged("chisquare", [planned], rng=rng, accountant=accountant, note=note, relation=relation)
    noisy = np.asarray(noisy, dtype=np.float64)
    model = noise_of(planned)
    statistic = float(_kifer_rogers(noisy, n, expected, model.variance()))
    draws = _null_counts(n, expected, n_resamples, model, rng)
    null = _kifer_rogers(draws, n, expected, model.variance())
    released = noisy if table is None else table.indexed(noisy, categories)
    return HypothesisResult(
        statistic=statistic,
        pvalue=pvalue(statistic, null, "greater"),
        test="chisquare",
        alternative=None,
        null="the categories occur with the expected frequencies f_exp (equal when None)",
        method=GOF_METHOD,
        released={"counts": released, "n": n},
        n_resamples=n_resamples,
    )


@declare(
    family="hypothesis",
    statistic="the contingency table of two categorical variables, for a chi-square test of independence",
    data={"x": Data("records"), "y": Data("records")},
    parameters={**privacy(), "categories": _PAIR, "n_resamples": RESAMPLES, **UNITS, **NOISE},
    relations=("row", "unit"),
    cases="dpstats.hypothesis._cases:chi2_contingency",
    preview="dpstats.hypothesis._previews:chi2_contingency_preview",
)
def chi2_contingency(
    x,
    y,
    epsilon: float,
    delta: float = 0.0,
    *,
    categories,
    n_resamples: int = DRAWS,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant=None,
    noise: str = "exact",
) -> HypothesisResult:
    """Private chi-square test of independence of two categorical variables (scipy.stats.chi2_contingency).

    Releases the r × c table of the pairs (x_i, y_i) over the public categories (L1 sensitivity 2, L2 √2) and tests
    independence by a parametric bootstrap at the margins estimated from the noisy table (module docstring). Unlike
    scipy's, the test takes the two columns of records, not the table: the table is what is released.

    Parameters
    ----------
    x, y : array_like or pandas Series
        The two categorical columns, one label each per record (aligned; n public). A label outside its categories
        is refused.
    epsilon, delta : float
        The budget of the table.
    categories : pair of lists
        ``(categories of x, categories of y)``, public, at least two each.
    n_resamples : int, default 2000
        B, the number of simulated tables.
    privacy_unit, max_rows
        As in :func:`dpstats.mean`, with ``max_rows=1`` (``privacy_unit`` aligned with the rows of x and y).
    rng, accountant, noise
        As in :func:`dpstats.mean`.

    Returns
    -------
    HypothesisResult
        ``statistic``: X̃²; ``released``: the noisy table (r × c; a DataFrame for pandas input) and the estimated
        expected counts ``expected_freq`` under independence (scipy's field).

    References
    ----------
    Gaboardi, Lim, Rogers & Vadhan, ICML 2016.

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats import hypothesis
    >>> rng = np.random.default_rng(1)
    >>> smoker = rng.choice(["yes", "no"], 2000)
    >>> cough = np.where(rng.random(2000) < np.where(smoker == "yes", 0.5, 0.2), "yes", "no")
    >>> result = hypothesis.chi2_contingency(smoker, cough, 1.0, categories=(["yes", "no"], ["yes", "no"]), rng=0)
    >>> bool(result.pvalue < 0.01)
    True
    """
    rows, columns = category_pair(categories)
    r, c = len(rows), len(columns)
    x, units = one_record_per_unit(x, privacy_unit, max_rows, "x")
    codes_x, table_x = _codes(x, rows, "x")
    codes_y, table_y = _codes(y, columns, "y")
    if codes_y.shape[0] != codes_x.shape[0]:
        raise DataValidationError(
            f"x and y must hold one label each per record; got {codes_x.shape[0]} and {codes_y.shape[0]} labels"
        )
    unit_note, relation = "", "row"
    if units is not None:
        (codes_x, codes_y), _, unit_note = keep_one_per_unit((codes_x, codes_y), units, rng)
        relation = "unit"
    n = int(codes_x.shape[0])
    table = np.bincount(codes_x * c + codes_y, minlength=r * c).astype(np.int64).reshape(r, c)
    planned = counts_plan(table, epsilon, delta, noise)
    note = f"{unit_note}chi2_contingency: the {r} × {c} table of public categories (n = {n}, public), the whole budget"
    (noisy,) = charged("chi2_contingency", [planned], rng=rng, accountant=accountant, note=note, relation=relation)
    noisy = np.asarray(noisy, dtype=np.float64).reshape(r, c)
    model = noise_of(planned)
    v = model.variance()
    statistic, margins = _independence(noisy[None], n, v)
    rows_p, columns_p = margins[0][0], margins[1][0]
    draws = _null_tables(n, rows_p, columns_p, n_resamples, model, rng)
    null, _ = _independence(draws, n, v)
    expected = n * np.outer(rows_p, columns_p)
    if table_x is not None and table_x.library == "pandas":
        import pandas as pd

        noisy = pd.DataFrame(noisy, index=pd.Index(rows, name=table_x.name), columns=pd.Index(columns))
        expected = pd.DataFrame(expected, index=noisy.index, columns=noisy.columns)
    return HypothesisResult(
        statistic=float(statistic[0]),
        pvalue=pvalue(float(statistic[0]), null, "greater"),
        test="chi2_contingency",
        alternative=None,
        null="x and y are independent",
        method=INDEPENDENCE_METHOD,
        released={"table": noisy, "expected_freq": expected, "n": n, "dof": (r - 1) * (c - 1)},
        n_resamples=n_resamples,
    )


def counts_plan(counts: np.ndarray, epsilon: float, delta: float, noise: str) -> Planned:
    """The plan of the counts over public categories (a vector of k, or an r × c table): a replaced record moves
    two counts by 1 each (L1 sensitivity 2, L2 √2), the whole budget (the release's and its preview's)."""
    return plan(Statistic(counts, Fraction(1)), [1, 1], epsilon, delta, noise=noise, changed=2, units="counts")


# ----------------------------------------------------------------------------- reading


def public_categories(categories, name: str) -> list:
    """The public categories (at least two), refused naming ``name``."""
    try:
        found = check_categories(categories, None)
    except ParameterError as err:
        raise ParameterError(str(err).replace("categories", name, 1)) from None
    if len(found) < 2:
        raise ParameterError(f"{name} must hold at least two categories to test; got {found!r}")
    return found


def category_pair(categories) -> tuple[list, list]:
    """The public categories of x and of y (at least two each), refused naming ``categories``."""
    if isinstance(categories, (str, bytes)) or not isinstance(categories, (tuple, list)) or len(categories) != 2:
        raise ParameterError(
            "categories must be a pair (categories of x, categories of y) of lists of public labels; got "
            f"{categories!r}"
        )
    rows = public_categories(categories[0], "categories[0] (of x)")
    return rows, public_categories(categories[1], "categories[1] (of y)")


def _codes(x, categories: list, name: str):
    """Each label's position among ``categories`` (a label outside them is refused, naming ``name``), and the
    table source of a pandas/polars ``x``."""
    values, table = labels(x, name)
    if values.size == 0:
        raise DataValidationError(f"{name} must hold at least one record; got a sample of size 0")
    codes = category_codes(values, {c: i for i, c in enumerate(categories)})
    outside = int(np.count_nonzero(codes < 0))
    if outside:
        raise OutOfBoundsError(
            f"{name} has {outside} value(s) that are not in its public categories (missing values count as outside): "
            "add them to the categories, or map them to one of them before the test"
        )
    return codes, table


def expected_frequencies(f_exp, k: int) -> np.ndarray:
    """p₀: ``f_exp`` normalised (equal probabilities for None)."""
    if f_exp is None:
        return np.full(k, 1.0 / k)
    if isinstance(f_exp, (str, bytes)):
        raise ParameterError(f"f_exp must be None or {k} positive finite numbers; got {f_exp!r}")
    try:
        values = np.asarray(f_exp, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"f_exp must be None or {k} positive finite numbers; got {f_exp!r}") from None
    if values.shape != (k,) or not np.all(np.isfinite(values)) or np.any(values <= 0):
        raise ParameterError(f"f_exp must be None or {k} positive finite numbers (one per category); got {f_exp!r}")
    if any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in np.asarray(f_exp, dtype=object).ravel()):
        raise ParameterError(f"f_exp must hold numbers; got {f_exp!r}")
    return values / values.sum()


# ----------------------------------------------------------------------------- the statistics and their nulls


def _kifer_rogers(counts: np.ndarray, n: int, p: np.ndarray, v: float) -> np.ndarray:
    """Q = dᵀ(n(diag p − ppᵀ) + v I)⁻¹d along the last axis (Sherman–Morrison; module docstring)."""
    d = counts - n * p
    a = n * p + v
    scaled = d / a
    correction = np.sum(p * v / a)  # 1 − n Σ p²/a, computed without cancellation
    return np.sum(d * scaled, axis=-1) + n * np.sum(p * scaled, axis=-1) ** 2 / correction


def _null_counts(n: int, p: np.ndarray, draws: int, model: NoiseModel, rng) -> np.ndarray:
    """``draws`` releases of the counts under the null: Multinomial(n, p) plus the exact noise."""
    return model.release(rng.multinomial(n, p, size=draws).astype(np.float64), rng)


def _simplex(values: np.ndarray, total: float) -> np.ndarray:
    """The Euclidean projection of each row of ``values`` onto {x >= 0, Σx = total} (Held, Wolfe & Crowder)."""
    ordered = -np.sort(-values, axis=-1)
    cumulative = np.cumsum(ordered, axis=-1) - total
    index = np.arange(1, values.shape[-1] + 1)
    positive = ordered - cumulative / index > 0
    last = values.shape[-1] - 1 - np.argmax(positive[..., ::-1], axis=-1)  # the largest index where it holds
    theta = np.take_along_axis(cumulative, last[..., None], axis=-1) / (last[..., None] + 1)
    return np.maximum(values - theta, 0.0)


def _independence(tables: np.ndarray, n: int, v: float):
    """X̃² of each noisy table (shape (B, r, c)) and its estimated margins (module docstring)."""
    b, r, c = tables.shape
    projected = _simplex(tables.reshape(b, r * c), float(n)).reshape(b, r, c)
    rows = projected.sum(axis=2) / n
    columns = projected.sum(axis=1) / n
    expected = n * rows[:, :, None] * columns[:, None, :]
    statistic = np.sum((tables - expected) ** 2 / (expected + v), axis=(1, 2))
    return statistic, (rows, columns)


def _null_tables(n: int, rows: np.ndarray, columns: np.ndarray, draws: int, model: NoiseModel, rng) -> np.ndarray:
    """``draws`` noisy tables under independence at the margins ``rows`` and ``columns``."""
    cells = np.outer(rows, columns).ravel()
    cells = cells / cells.sum()
    counts = rng.multinomial(n, cells, size=draws).astype(np.float64)
    return model.release(counts, rng).reshape(draws, rows.size, columns.size)
