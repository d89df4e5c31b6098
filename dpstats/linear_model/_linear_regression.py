"""Differentially private linear regression: :func:`linear_regression`, the entry point of four methods.

=============  =====================================================  ==========  ========  ======  ======
method         what is released                                      bounds      δ         units   dask
=============  =====================================================  ==========  ========  ======  ======
``"adassp"``   AdaSSP (Wang 2018, Algorithm 2), the default           X and y     > 0       yes     yes
``"ssp"``      noisy [X y]ᵀ[X y] (Analyze Gauss), solved              X and y     > 0       yes     yes
``"tukey"``    TukeyEM (Amin, Joseph, Ribero & Vassilvitskii 2023)    none        > 0       yes     no
``"theil_sen"``  DPTheilSen, one feature (Alabi et al. 2022)          X and y     0         no      no
=============  =====================================================  ==========  ========  ======  ======

Each method's module states its neighbouring relation, sensitivity and calibration:
:mod:`dpstats.linear_model._ssp` (SSP, AdaSSP), :mod:`dpstats.linear_model._tukey`,
:mod:`dpstats.linear_model._theil_sen`. Without ``privacy_unit`` neighbours replace one row (n public); with it they
replace all rows of one unit (at most ``max_rows`` kept).

**Bounds.** ``bounds_X`` is a pair (the same bounds for every column), one pair per column, or a dict by column
name (a DataFrame X); ``bounds_y`` a pair. Values outside raise before anything is charged unless ``clip=True``
(clipping to public bounds keeps the guarantee). ``"private"`` for either spends ``bounds_share`` of ε
(:data:`BOUNDS_SHARE`, 20 %) on private bounds: each column's 5 %- and 95 %-quantiles in the wide public range
:data:`PRIVATE_RANGE` (±10⁶, a log grid of 2^20 cells), by :func:`dpstats.private_bounds` (Smith's exponential
mechanism, exact), the share split equally between the private columns; that side of the data is then clipped to
them (a side with public bounds keeps its check: a value outside raises unless ``clip=True``) and the method gets the
rest of ε. The bounds and the method are charged as one ledger entry, before anything is drawn (the bounds are
sampled after the charge, then the method's statistic is computed with them). The quantiles need about
ε_q·n/40 >> log(grid) (ε_q the share of one quantile): with n = 20 000 and three columns, ε >= 1 finds them; with
less, clipping bias or bounds far too wide make public bounds (from the meaning of the variables) the better choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .._constraints import (
    BAD_BOUNDS,
    UNITS,
    AccountantOrNone,
    Checked,
    Data,
    Delta,
    Epsilon,
    Flag,
    Integer,
    NoneOr,
    Options,
    RandomSource,
    Real,
)
from .._engine import as_array, engine_of, take_units
from .._engine.kinds import is_frame
from .._registry import declare
from .._validation import check_bounds, check_choice, check_delta, check_epsilon, check_flag
from ..accounting import DEFAULT_DELTA, check_accountant, split_epsilon, split_weighted
from ..accounting.events import Exponential
from ..descriptive._quantiles import sample_private_bounds
from ..exceptions import DataValidationError, OutOfBoundsError, ParameterError
from ..inference._estimate import Estimate, Level
from ..inference._regression import METHOD as CI_METHOD
from ..inference._regression import coefficient_inference
from ..inference._simulate import NoiseModel
from ..noise.random import check_rng
from ._ssp import Scaling, SufficientStatistics, fit_ssp
from ._theil_sen import check_matchings, fit_theil_sen
from ._tukey import check_subsets, fit_tukey

__all__ = [
    "BOUNDS_SHARE",
    "METHODS",
    "PRIVATE_QUANTILES",
    "PRIVATE_RANGE",
    "LinearRegressionResult",
    "linear_regression",
]

METHODS = ("adassp", "ssp", "tukey", "theil_sen")
#: The part of ε that ``bounds_X="private"`` / ``bounds_y="private"`` spend on the bounds (all of them together).
BOUNDS_SHARE = 0.2
#: The wide public range in which private bounds are looked for (a log grid: little cost for its width).
PRIVATE_RANGE = (-1e6, 1e6)
#: The quantile levels of private bounds (the tails beyond them are clipped).
PRIVATE_QUANTILES = (0.05, 0.95)
#: Cells of the private bounds' log grid (fine enough near 0 for a range of ±1e6).
PRIVATE_GRID = 2**20
_NEEDS_DELTA = ("adassp", "ssp", "tukey")
_NEEDS_BOUNDS = ("adassp", "ssp", "theil_sen")


@dataclass(frozen=True, eq=False)
class LinearRegressionResult:
    """A private linear model: ``y ≈ X @ coef + intercept``.

    Attributes
    ----------
    coef : numpy.ndarray, shape (d,)
        One coefficient per column of X, in the data's units (NaN when TukeyEM's test did not pass).
    intercept : float
        The constant term (0.0 with ``fit_intercept=False``).
    method : str
        The method that made it.
    feature_names : tuple of str or None
        X's column names, when X was a DataFrame.
    bounds_X, bounds_y : tuple or None
        The bounds the method used (public, or released privately), as ``(lower array, upper array)`` and
        ``(lower, upper)``; None for TukeyEM.
    released : bool
        False when TukeyEM's propose-test-release check refused (no model: NaN coefficients).

    The noisy sufficient statistics of SSP and AdaSSP (``_statistics``: the noisy Gram matrix of the scaled rows,
    its noise scale, the ridge) are kept for inference (a parametric bootstrap); they are releases too.
    """

    coef: np.ndarray
    intercept: float
    method: str
    feature_names: tuple | None = None
    bounds_X: tuple | None = None
    bounds_y: tuple | None = None
    released: bool = True
    _statistics: SufficientStatistics | None = field(default=None, repr=False, compare=False)

    def predict(self, X) -> np.ndarray:
        """``X @ coef + intercept`` (post-processing)."""
        X = np.asarray(as_array(X, "X", ndim=(1, 2)), dtype=np.float64)
        X = X.reshape(-1, 1) if X.ndim == 1 else X
        if X.shape[1] != self.coef.size:
            raise DataValidationError(f"X has {X.shape[1]} columns; the model has {self.coef.size} coefficients")
        return X @ self.coef + self.intercept


_BOUNDS_X = Checked(
    "a pair (lower, upper), one pair per column, a dict {column: (lower, upper)} for a DataFrame, or 'private'",
    {k: v for k, v in BAD_BOUNDS.items() if k not in ("None", "scalar", "string")},
)
_BOUNDS_Y = Checked("a pair (lower, upper) or 'private'", {k: v for k, v in BAD_BOUNDS.items() if k != "None"})


@declare(
    family="linear_model",
    statistic="the coefficients of a least-squares linear regression (AdaSSP, SSP, TukeyEM or DPTheilSen)",
    data={"X": Data("matrix", "an n × d matrix of features"), "y": Data("values", "n numbers (the response)")},
    parameters={
        "epsilon": Epsilon(),
        "delta": Delta(
            "method",
            by="method",
            uses={"adassp": "approx", "ssp": "approx", "tukey": "approx", "theil_sen": "pure"},
        ),
        "method": Options(*METHODS),
        "bounds_X": _BOUNDS_X,
        "bounds_y": _BOUNDS_Y,
        "fit_intercept": Flag(),
        "clip": Flag(),
        **UNITS,
        "subsets": NoneOr(Integer(4)),
        "matchings": NoneOr(Integer(1)),
        "bounds_share": Real(0, 1),
        "rng": RandomSource(),
        "accountant": AccountantOrNone(),
        "ci": Level(),
    },
    engines=("numpy", "dask"),
    cases="dpstats.linear_model._cases:linear_regression",
    preview="dpstats.linear_model._previews:linear_regression_preview",
)
def linear_regression(
    X,
    y,
    epsilon: float,
    delta: float | None = None,
    *,
    method: str = "adassp",
    bounds_X=None,
    bounds_y=None,
    fit_intercept: bool = True,
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    subsets: int | None = None,
    matchings: int | None = None,
    bounds_share: float = BOUNDS_SHARE,
    rng=None,
    accountant=None,
    ci: float | None = None,
) -> LinearRegressionResult | Estimate:
    """Differentially private linear regression of ``y`` on ``X`` (least squares, with an intercept by default).

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame, or dask array/DataFrame, shape (n, d)
        The features, one row per record.
    y : array_like or Series, shape (n,)
        The response (numeric, one value per row).
    epsilon : float
        ε > 0 of the whole release (private bounds included).
    delta : float, optional
        δ of the release. None means the method's default: 1e-6 (``"adassp"``, ``"ssp"``, ``"tukey"``, which need
        δ > 0), 0 for ``"theil_sen"`` (pure ε-DP; a δ > 0 is refused).
    method : {"adassp", "ssp", "tukey", "theil_sen"}, default "adassp"
        See the module docstring's table: AdaSSP (Wang 2018, Algorithm 2); SSP; TukeyEM (no bounds needed, n ≫ d;
        floating-point sampler, recorded as unproven); DPTheilSen (one feature, small n).
    bounds_X : pair, list of pairs, dict or "private"
        Public bounds of X's columns (required by every method but ``"tukey"``, which refuses them).
    bounds_y : pair or "private"
        Public bounds of y.
    fit_intercept : bool, default True
        Fit a constant term (``"theil_sen"`` always does).
    clip : bool, default False
        Clip values outside the bounds to them instead of raising.
    privacy_unit : array_like, Series or str, optional
        One identifier per row (or a column name of the DataFrame X): neighbours differ in all rows of one unit,
        at most ``max_rows`` kept. Not with ``"theil_sen"``.
    max_rows : int, optional
        With ``privacy_unit``: the public number of rows kept per unit.
    subsets : int, optional
        TukeyEM's number of models m (public; default 1000, the paper's). Needs n >= m·(d + 1).
    matchings : int, optional
        DPTheilSen's number of random perfect matchings k (public; default min(n − 1, 8)).
    bounds_share : float, default 0.2
        With a ``"private"`` bound: the part of ε spent on the bounds.
    rng : None, int or numpy.random.Generator
        Source of randomness; None is a cryptographically secure source.
    accountant : Accountant, optional
        Charged once for the whole call, before any noise is drawn.
    ci : float, optional
        A confidence level (e.g. 0.95), for ``"ssp"`` and ``"adassp"`` with public bounds and one row per person
        (no ``privacy_unit``): return a :class:`~dpstats.Estimate` whose ``.estimate`` is the result returned
        without ``ci`` (the same release, bit for bit, and the same budget: nothing more is released), with an
        interval per coefficient that covers the *population* coefficient at this level — of the least-squares
        regression of y on X in the population the rows were drawn from (of the clipped variables with
        ``clip=True``) — over the sampling of the rows and the noise. ``.ci`` has one row per coefficient, then the
        intercept (with an intercept), columns low and high (a DataFrame indexed by the feature names and
        ``"intercept"`` for a DataFrame X); ``.pvalue`` the two-sided p-values of H0: coefficient = 0 (the test the
        interval inverts), ``.std_error`` the bootstrap standard errors; ``.f_pvalue`` (and ``.f_statistic``, on
        the F scale) the joint test of H0: every coefficient but the intercept is 0, from the same draws (the
        null's distribution simulated by the same bootstrap under H0). The interval is a parametric bootstrap of
        the released Gram matrix (Ferrando, Wang & Sheldon 2022; derivation and assumptions in
        :mod:`dpstats.inference._regression`): post-processing of the release and of its noise's public
        distribution. For AdaSSP it is centred at the estimate corrected for the ridge's shrinkage, so when the
        ridge dominates (small n·ε) it is wide and need not contain the shrunk ``.estimate.coef``.

    Returns
    -------
    LinearRegressionResult, or Estimate with ``ci``
        ``.coef`` (one per column of X), ``.intercept``, ``.method``, ``.predict(X)``.

    References
    ----------
    Y.-X. Wang, "Revisiting differentially private linear regression: optimal and adaptive prediction & estimation
    in unbounded domain", UAI 2018 (Algorithm 2, AdaSSP). K. Amin, M. Joseph, M. Ribero & S. Vassilvitskii, "Easy
    differentially private linear regression", ICLR 2023. D. Alabi, A. McMillan, J. Sarathy, A. Smith & S. Vadhan,
    "Differentially private simple linear regression", PoPETs 2022. C. Dwork, K. Talwar, A. Thakurta & L. Zhang,
    "Analyze Gauss", STOC 2014. C. Ferrando, S. Wang & D. Sheldon, "Parametric bootstrap for differentially
    private confidence intervals", AISTATS 2022 (the intervals). O. Sheffet, "Differentially private ordinary least
    squares", ICML 2017 (t-intervals from noisy sufficient statistics, for comparison).

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(0, 10, (20000, 2))
    >>> y = 3 + X @ [1.0, -2.0] + rng.normal(0, 1, 20000)
    >>> fit = dps.linear_regression(X, y, 1.0, bounds_X=(0, 10), bounds_y=(-30, 20), clip=True, rng=0)
    >>> np.round(fit.coef, 1).tolist(), round(fit.intercept)
    ([1.0, -2.0], 3)
    >>> r = dps.linear_regression(X, y, 1.0, bounds_X=(0, 10), bounds_y=(-30, 20), clip=True, rng=0, ci=0.95)
    >>> r.ci.shape, bool(r.pvalue[0] < 0.05)
    ((3, 2), True)
    """
    epsilon, rng = check_epsilon(epsilon), check_rng(rng)
    method = check_choice(method, "method", METHODS)
    intercept, clip = check_flag(fit_intercept, "fit_intercept"), check_flag(clip, "clip")
    check_accountant(accountant)
    delta = _check_delta(delta, method)
    if privacy_unit is not None and method == "theil_sen":
        raise ParameterError(
            "method='theil_sen' cannot take a privacy unit: the number of pairs, and so the median's target, would "
            "depend on how many rows a unit has; use method='adassp' or 'tukey' with privacy_unit"
        )
    check_ci(ci, method, privacy_unit, bounds_X, bounds_y)
    names = _feature_names(X, privacy_unit)
    X, units = take_units(X, privacy_unit, max_rows, "X")
    X, y = _read(X, y, method)
    n, d = X.shape
    if ci is not None and isinstance(n, (int, np.integer)) and n <= d + intercept + 1:
        raise DataValidationError(
            f"ci needs more rows than coefficients plus one (n is public): n = {n} for {d + intercept} coefficients"
        )
    if method == "tukey":
        if bounds_X is not None or bounds_y is not None or clip:
            raise ParameterError(
                "method='tukey' needs no bounds (its models need none) and takes no bounds_X, bounds_y or clip; "
                f"got bounds_X={bounds_X!r}, bounds_y={bounds_y!r}, clip={clip}"
            )
        m = check_subsets(subsets, n, d + intercept, units is not None, epsilon, delta)
        _check_finite_memory(X, y)
        coef, b, passed = fit_tukey(
            X, y, units, epsilon, delta, subsets=m, intercept=intercept, rng=rng, accountant=accountant
        )
        return LinearRegressionResult(coef, b, method, names, released=passed)
    if method == "theil_sen":
        if d != 1:
            raise ParameterError(f"method='theil_sen' fits one feature; X has {d} columns (use 'adassp' for more)")
        if not intercept:
            raise ParameterError("method='theil_sen' always fits an intercept; fit_intercept=False is not available")
        check_matchings(matchings, n)
    if bounds_X is None or bounds_y is None:
        missing = "bounds_X" if bounds_X is None else "bounds_y"
        raise ParameterError(
            f"method={method!r} needs {missing}: public bounds chosen without looking at the data, or 'private' to "
            "spend a share of epsilon on them (method='tukey' needs none)"
        )
    bounds_share = _share(bounds_share, bounds_X, bounds_y)
    found = _Bounds(*_bounds_X(bounds_X, d, names), *_bounds_y(bounds_y))
    private = (isinstance(bounds_X, str), isinstance(bounds_y, str))
    # a side whose bounds are released privately is clipped to them; a public side keeps its check unless clip=True
    clips = (clip or private[0], clip or private[1])
    if any(private) and engine_of(X, y).LAZY:
        raise ParameterError("private bounds read the data in memory: pass NumPy data, or public bounds for dask")
    if method == "theil_sen" or any(private):
        found.check(X, y, clips)  # every value, before the charge (the Gram methods check public bounds in their pass)
    events, note, draw = [], "", None
    if any(private):
        columns = d * private[0] + private[1]
        eps_bounds, epsilon = split_weighted(epsilon, [bounds_share, 1.0 - bounds_share])
        check_epsilon(epsilon, "epsilon share of the method (epsilon * (1 - bounds_share))")
        each = split_epsilon(eps_bounds, columns)
        events = [Exponential(split_epsilon(each, 2))] * (2 * columns)  # charged with the method's, as one entry
        note = (
            f"private bounds: the {PRIVATE_QUANTILES[0]:g}- and {PRIVATE_QUANTILES[1]:g}-quantiles of {columns} "
            f"column(s) in [{PRIVATE_RANGE[0]:g}, {PRIVATE_RANGE[1]:g}] (epsilon={eps_bounds:.4g} in all, exact "
            "exponential mechanism); the data clipped to them"
        )

        def draw() -> _Bounds:  # after the one charge: the method calls it
            nonlocal found
            found = found.drawn(X, y, private, each, rng, units)
            return found

    if method == "theil_sen":
        coef, b = fit_theil_sen(
            X[:, 0],
            y,
            epsilon,
            bounds=(lambda: draw().pairs()) if draw is not None else found.pairs(),
            clip=clips,
            matchings=matchings,
            rng=rng,
            accountant=accountant,
            events=events,
            note=note,
        )
        return LinearRegressionResult(coef, b, method, names, *found.result())
    if ci is not None:
        note = "; ".join(p for p in (note, CI_NOTE) if p)
    coef, b, stats = fit_ssp(
        X,
        y,
        units,
        found.scaling(intercept, clips),  # the public map (k, a, the public side's check); refuses what cannot scale
        epsilon,
        delta,
        adaptive=method == "adassp",
        rng=rng,
        accountant=accountant,
        events=events,
        note=note,
        bounds=(lambda: draw().scaling(intercept, clips)) if draw is not None else None,
    )
    result = LinearRegressionResult(coef, b, method, names, *found.result(), _statistics=stats)
    if ci is None:
        return result
    return _interval(result, ci, rng, clip)


#: The ledger note of a call with ``ci`` (the preview states the same).
CI_NOTE = (
    "ci: a parametric bootstrap of the released Gram matrix (post-processing; nothing else released, the budget "
    "split as without ci)"
)


def check_ci(ci, method: str, privacy_unit, bounds_X, bounds_y) -> None:
    """Refuse ``ci`` where no interval is made, before anything is read or charged."""
    if ci is None:
        return
    if method not in ("ssp", "adassp"):
        raise ParameterError(
            f"ci is not available for method={method!r}: intervals are made for method='ssp' and 'adassp' (a "
            "parametric bootstrap of their noisy sufficient statistics); pass ci=None"
        )
    if privacy_unit is not None:
        raise ParameterError(
            "ci is not available with privacy_unit: the bootstrap needs the number of rows n, which is public only "
            "when a person is one row; pass ci=None, or one row per person"
        )
    if isinstance(bounds_X, str) or isinstance(bounds_y, str):
        raise ParameterError(
            "ci needs public bounds_X and bounds_y: with 'private' bounds the data are clipped to their released "
            "5 %- and 95 %-quantiles, and the coefficients of the clipped data are not the population's; pass "
            "public bounds, or ci=None"
        )


def _interval(result: LinearRegressionResult, level: float, rng, clip: bool) -> Estimate:
    """The :class:`~dpstats.Estimate` of a call with ``ci`` (:mod:`dpstats.inference._regression`)."""
    stats = result._statistics
    scaling = stats.scaling
    found = coefficient_inference(
        stats.gram,
        stats.rows_bound,  # n: public (one row per person)
        constant=scaling.features if scaling.intercept else None,
        ridge=stats.ridge,
        noise=NoiseModel.of(stats.noise),
        affine=scaling.affine(),
        level=level,
        rng=rng,
    )
    interval = np.column_stack([found.low, found.high])
    errors, values = found.std_error, found.pvalue
    labels = None
    if result.feature_names is not None:
        labels = [*result.feature_names, *(["intercept"] if scaling.intercept else [])]
        import pandas as pd

        interval = pd.DataFrame(interval, index=labels, columns=["low", "high"])
        errors, values = pd.Series(errors, index=labels), pd.Series(values, index=labels)
    clipped = " of the variables clipped to the bounds" if clip else ""
    what = "coefficients, then the intercept" if scaling.intercept else "coefficients"
    return Estimate(
        result,
        interval,
        level,
        CI_METHOD,
        errors,
        f"the population least-squares {what}{clipped} (i.i.d. rows, homoscedastic errors)",
        pvalue=values,
        f_statistic=found.f_statistic,
        f_pvalue=found.f_pvalue,
    )


@dataclass(frozen=True)
class _Bounds:
    """The bounds of a call: X's (one pair per column) and y's; a side given as "private" holds placeholders until
    :meth:`drawn` replaces them by the released bounds."""

    lower_X: np.ndarray
    upper_X: np.ndarray
    lower_y: float
    upper_y: float

    def check(self, X, y, clips) -> None:
        """In-memory data: NaN and infinity always raise; values outside a side's bounds raise unless that side is
        clipped (``clips``: (X, y); a side with private bounds is clipped to them)."""
        _check_finite_memory(X, y)
        outside_X = 0 if clips[0] else int(((X < self.lower_X) | (X > self.upper_X)).sum())
        outside_y = 0 if clips[1] else int(((y < self.lower_y) | (y > self.upper_y)).sum())
        if outside_X or outside_y:
            parts = [f"X has {outside_X} value(s) outside bounds_X"] if outside_X else []
            parts += [f"y has {outside_y} value(s) outside bounds_y"] if outside_y else []
            raise OutOfBoundsError(
                "; ".join(parts) + ". Fix the bounds (chosen without looking at the data), or pass clip=True "
                "(clipping to public bounds keeps the guarantee)"
            )

    def drawn(self, X, y, private, epsilon: float, rng, units) -> _Bounds:
        """These bounds with the private sides released (``epsilon`` per column), sampled without a charge: the
        call charged their exponential mechanisms with the method's release, as one ledger entry, before."""
        lower_X, upper_X, lower_y, upper_y = self.lower_X, self.upper_X, self.lower_y, self.upper_y
        if private[0]:
            pairs = [_private_pair(X[:, j], epsilon, rng, units) for j in range(X.shape[1])]
            lower_X, upper_X = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        if private[1]:
            lower_y, upper_y = (np.float64(v) for v in _private_pair(y, epsilon, rng, units))
        return _Bounds(lower_X, upper_X, lower_y, upper_y)

    def scaling(self, intercept: bool, clips) -> Scaling:
        return Scaling(np.append(self.lower_X, self.lower_y), np.append(self.upper_X, self.upper_y), intercept, clips)

    def pairs(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """One feature's bounds and y's, as floats (Theil–Sen)."""
        return (float(self.lower_X[0]), float(self.upper_X[0])), (float(self.lower_y), float(self.upper_y))

    def result(self) -> tuple:
        """``bounds_X``, ``bounds_y`` of the result."""
        return (self.lower_X, self.upper_X), (float(self.lower_y), float(self.upper_y))


def _check_delta(delta, method: str) -> float:
    if delta is None:
        return DEFAULT_DELTA if method in _NEEDS_DELTA else 0.0
    delta = check_delta(delta)
    if method in _NEEDS_DELTA and delta == 0:
        raise ParameterError(
            f"method={method!r} needs delta > 0 (Gaussian noise, or TukeyEM's propose-test-release); got delta=0. "
            "For pure epsilon-DP use method='theil_sen' (one feature)"
        )
    if method not in _NEEDS_DELTA and delta > 0:
        raise ParameterError(f"method={method!r} is pure epsilon-DP and cannot use delta; got delta={delta!r}: pass 0")
    return delta


def _feature_names(X, privacy_unit) -> tuple | None:
    columns = getattr(X, "columns", None)
    if columns is None or not is_frame(X):
        return None
    return tuple(str(c) for c in columns if not (isinstance(privacy_unit, str) and c == privacy_unit))


def _read(X, y, method: str):
    """X (n × d) and y (n,) as float64 arrays of their engine (NumPy, or lazy dask for the Gram methods)."""
    if y is None:
        raise DataValidationError("y is required: the response, one number per row of X")
    lazy = engine_of(X, y).LAZY
    if lazy and method not in ("adassp", "ssp"):
        raise ParameterError(
            f"method={method!r} reads the data in memory; dask data go with method='adassp' or 'ssp' (one pass), "
            "or pass NumPy arrays"
        )
    X = as_array(X, "X", ndim=(2,))
    shape = getattr(y, "shape", None)
    if shape is not None and len(shape) == 2 and shape[1] != 1:
        raise DataValidationError(f"y must be one column (one response per row); got shape {tuple(shape)}")
    y = as_array(y, "y", ndim=(1, 2))
    if y.ndim == 2:
        y = y[:, 0]
    if y.shape[0] != X.shape[0]:
        raise DataValidationError(f"X and y must have the same number of rows; got {X.shape[0]} and {y.shape[0]}")
    return X, y


def _check_finite_memory(X: np.ndarray, y: np.ndarray) -> None:
    bad = int(X.size - np.count_nonzero(np.isfinite(X))) + int(y.size - np.count_nonzero(np.isfinite(y)))
    if bad:
        raise DataValidationError(f"X and y have {bad} NaN or infinite value(s); remove or impute them first")


def _share(share, bounds_X, bounds_y) -> float:
    valid = isinstance(share, (int, float)) and not isinstance(share, bool) and 0 < share < 1
    if not valid:
        raise ParameterError(f"bounds_share must be a number with 0 < bounds_share < 1; got {share!r}")
    return float(share)


def _pair(value, name: str) -> tuple[float, float]:
    """A pair (lower, upper) of real numbers (never strings or booleans), finite, lower < upper, of finite width."""
    lower, upper = check_bounds(value, name)
    if lower.ndim or upper.ndim:
        raise ParameterError(f"{name} must be a pair (lower, upper) of numbers; got {value!r}")
    return float(lower), float(upper)


def _bounds_X(bounds, d: int, names) -> tuple[np.ndarray, np.ndarray]:
    """bounds_X as (lower, upper) arrays of d values ("private": placeholders, replaced by the released bounds)."""
    if isinstance(bounds, str):
        if bounds != "private":
            raise ParameterError(f"bounds_X must be a pair, one pair per column, a dict or 'private'; got {bounds!r}")
        return np.zeros(d), np.ones(d)
    if isinstance(bounds, Mapping):
        if names is None:
            raise ParameterError("bounds_X as a dict needs a DataFrame X (the keys are its column names)")
        missing = [c for c in names if c not in bounds and str(c) not in bounds]
        extra = [c for c in bounds if str(c) not in names]
        if missing or extra:
            raise ParameterError(f"bounds_X must name every column of X exactly; missing {missing}, unknown {extra}")
        pairs = [_pair(bounds[c] if c in bounds else bounds[str(c)], f"bounds_X[{c!r}]") for c in names]
    elif (
        not isinstance(bounds, (bytes,))
        and hasattr(bounds, "__len__")
        and len(bounds) == d
        and all(hasattr(b, "__len__") and not isinstance(b, str) for b in bounds)
    ):
        pairs = [_pair(b, f"bounds_X[{j}]") for j, b in enumerate(bounds)]
    else:
        pairs = [_pair(bounds, "bounds_X")] * d
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def _bounds_y(bounds) -> tuple[float, float]:
    if isinstance(bounds, str):
        if bounds != "private":
            raise ParameterError(f"bounds_y must be a pair (lower, upper) or 'private'; got {bounds!r}")
        return np.float64(0.0), np.float64(1.0)
    lower, upper = _pair(bounds, "bounds_y")
    return np.float64(lower), np.float64(upper)


def _private_pair(column: np.ndarray, epsilon: float, rng, units) -> tuple[float, float]:
    """One column's private bounds (:func:`dpstats.private_bounds`' mechanism), sampled without a charge."""
    return sample_private_bounds(
        column,
        epsilon,
        range=PRIVATE_RANGE,
        quantiles=PRIVATE_QUANTILES,
        grid_size=PRIVATE_GRID,
        units=None if units is None else units.aligned(column.shape[0]),
        rng=rng,
    )
