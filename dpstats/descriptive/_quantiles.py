"""Private quantiles, and clipping bounds chosen privately from them.

Both mechanisms here are exponential mechanisms (McSherry & Talwar 2007) whose
outputs are the points of a **public grid** of the bounds: ``grid_size + 1``
equally spaced points ``g_j = lo + j·(hi − lo)/grid_size``, j = 0 … grid_size
(2^16 cells by default: for bounds (0, 100) a resolution of 0.0015), or with
``scale="log"`` equally spaced in asinh(x/s) for a public unit s (see
:func:`quantile`). The grid depends on the bounds only, so the set of possible
outputs is public and finite — no data-dependent interval endpoint and no
floating-point low bits ever reach the output.

Ranks on the grid. Each record is clipped to the bounds (or refused, see
``clip``) and mapped to its cell ``k_i = min(floor((x_i − lo)/h), grid_size − 1)``
with h = (hi − lo)/grid_size (on the log scale, the same in asinh(x/s)): a
fixed map applied to every record on its own
with public numbers, so whatever its floating-point rounding does, replacing
one record still changes one cell. The rank of grid point j is
``c(j) = #{i : k_i < j}``, the number of records in the cells below it
(c(0) = 0, c(grid_size) = n). The grid points with the same rank r form a
run of consecutive points, between the r-th and (r+1)-th smallest record.

One quantile: Smith (2011), on the grid. For a level q the utility of grid
point j is ``u(j) = −|c(j) − t|`` with target rank t = q·n (rounded to a
multiple of 2^-10: a public function of q and n). Replacing one record moves
every c(j) by at most 1, so Δu = 1, and sampling j with probability
∝ exp(ε·u(j)/2) is ε-DP (McSherry & Talwar 2007, Theorem 6) and
ε-bounded-range, hence ε²/8-zCDP (Cesar & Rogers 2021), which the accountant
uses. This is Smith's mechanism ("sample an interval between consecutive
sorted data points with probability ∝ its length · exp(−ε|rank − qn|/2),
then a point uniformly within it"), with lengths counted in grid points.

One quantile is sampled **exactly, with a fixed number of random draws**
(:func:`dpstats.noise.exponential.sample_runs`): the weight of grid point j is
exp(−(ε′/2)|c(j) − t|) = exp(−a·|2^10·c(j) − 2^10·t|) with a = ε′/2^11 a dyadic
rational, and the sampler inverts the distribution function of these weights
with a uniform U of 128 bits, computing every quantity as an interval of
integers that provably contains it (mpmath's interval arithmetic for the two
exponentials, directed rounding for the rest) and returning j only when the
intervals certify F(j) <= U·Z < F(j + 1): exactly the exponential mechanism at
ε′. ε′ is ε rounded *down* to a multiple of 2^-40 (so a is rational and the
mechanism is ε′-DP, hence ε-DP; ε is charged). Its work does not depend on the
data: two 64-bit words are drawn, and the number of integer operations is a
function of n, grid_size and ε only (the ranks whose weight can exceed
2^-110/(grid_size + 1)); a third word, and a recomputation, happen with
probability below 2^-100 whatever the data. (An earlier rejection sampler drew
uniform proposals until one was accepted: its number of draws, hence its
running time, had a data-dependent geometric distribution, whose tail has an
unbounded privacy loss.)

Several quantiles: the joint exponential mechanism of Gillenwater, Joseph &
Kulesza (ICML 2021, "JointExp", Section 3 and Algorithm 1), on the grid. For
sorted levels q_1 <= … <= q_m and outputs o_1 <= … <= o_m (grid points), with
c(o_0) = 0, c(o_{m+1}) = n and target gaps τ_j = (q_j − q_{j−1})·n, the
utility is ``u(o) = −Σ_{j=1}^{m+1} |c(o_j) − c(o_{j−1}) − τ_j|``: how far the
number of records between consecutive outputs is from its target. Replacing
one record removes it from one gap and adds it to one gap: Δu = 2 (GJK, Lemma
3.1, swap neighbours), so sampling ∝ exp(ε·u/4) is ε-DP and ε-bounded-range.
The distribution is sampled by GJK's dynamic programme over the runs (their
Algorithm 1, with the grid's counting: a run of L points holds C(L + k − 1, k)
non-decreasing k-tuples, so a group of outputs in one run grows by the factor
(L + k − 1)/k where GJK's continuous version has L/k), then the tuple within
each run uniformly. **That sampler is floating point**: the dynamic
programme runs in log space with FFT convolutions and a Gumbel-max draw, and no
floating-point-exact sampler for it is known. Outcomes whose probability is
below about 10^-16 of the largest may be given probability 0 (an outcome
impossible under one dataset and possible under its neighbour: no finite ε
covers that), and the small ones may be off by much more than their own
relative precision; the output still lies on the public grid. Its guarantee is
therefore recorded as unproven (``proven=False``): an Accountant refuses it
unless created with ``allow_unproven=True``, and :func:`private_bounds` uses
two exact single quantiles instead.

Privacy units. With ``privacy_unit=`` and ``max_rows=m`` neighbours differ in all records of one unit (at most m
kept per unit, chosen at random; the number of records n is then not public). A unit's c ∈ [1, m] records enter
c(j) − q·n as Σ_{i∈u} (1[k_i < j] − q), a term in [−q·c, (1 − q)·c] ⊆ [−q·m, (1 − q)·m]; replacing the unit moves
it by at most m, and the target's rounding to 2^-10 adds at most 2^-10: Δu = m + 2^-10 for one quantile (1 for
m = 1, where n = N is public). For several levels the gaps' counts move by at most c + c′ <= 2m in total and the
targets τ_j by |c − c′|·(q_j − q_{j−1}), at most m − 1 in total: Δu = 3m − 1 (2 for m = 1). The mechanisms run
with ε/Δu in place of ε/Δu at m = 1.

References
----------
A. Smith, "Privacy-preserving statistical estimation with optimal convergence
rates", STOC 2011. J. Gillenwater, M. Joseph & A. Kulesza, "Differentially
private quantiles", ICML 2021. F. McSherry & K. Talwar, "Mechanism design via
differential privacy", FOCS 2007. C. Canonne, G. Kamath & T. Steinke, "The
discrete Gaussian for differential privacy", NeurIPS 2020. M. Cesar & R.
Rogers, "Bounding, concentrating, and truncating", ALT 2021.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._constraints import BOUNDS, UNITS, Checked, Data, Flag, Integer, Options, grouping, privacy
from .._engine import bound_rows, bounded_sums, take_units
from .._engine.kinds import is_frame
from .._engine.tables import from_table
from .._registry import declare
from .._release import charge, charge_plans
from .._trace import draw, observe
from .._validation import check_array, check_bounds, check_finite, check_real_array
from ..accounting import Accountant, Relation, split_epsilon
from ..accounting.events import Exponential
from ..exceptions import DataValidationError, OutOfBoundsError, ParameterError
from ..inference._estimate import Level
from ..noise.exponential import sample_runs
from ..noise.selection import MAX_GROUPS
from . import _intervals as intervals
from ._grouped import (
    calibrate,
    group_table,
    keyed,
    prepare,
    public_index,
    quantile_sensitivity,
    released_keys,
    selected,
)

__all__ = ["GRID_SIZE", "private_bounds", "quantile"]

#: Default number of cells of the public output grid (grid_size + 1 possible outputs).
GRID_SIZE = 2**16
_MAX_GRID_SIZE = 2**24
#: ε′ = ε rounded down to a multiple of 2^-_EPSILON_BITS; target ranks to multiples of 2^-_TARGET_BITS.
_EPSILON_BITS = 40
_TARGET_BITS = 10


# ----------------------------------------------------------------------------- the public grid


SCALES = ("linear", "log")
#: The log scale's unit s = 2^-_LOG_UNIT_BITS · max(|lower|, |upper|) (public: from the bounds).
_LOG_UNIT_BITS = 10


@dataclass(frozen=True)
class _Grid:
    """The public output grid: ``size + 1`` points from ``lower`` to ``upper``, equally spaced in x (``"linear"``)
    or in asinh(x/s) (``"log"``, see :func:`quantile`)."""

    lower: float
    upper: float
    size: int
    scale: str = "linear"

    def _warp(self, x):
        if self.scale == "linear":
            return np.asarray(x, dtype=np.float64)
        unit = max(abs(self.lower), abs(self.upper)) * 2.0**-_LOG_UNIT_BITS
        return np.arcsinh(np.asarray(x, dtype=np.float64) / unit)

    def check(self, x: np.ndarray, clip: bool, bounds: str = "bounds", name: str = "x") -> None:
        """Raise for NaN or infinite records, and (unless ``clip``) for records outside the grid's bounds (the
        parameter ``bounds``), with their count."""
        seen_lo, seen_hi = float(np.min(x)), float(np.max(x))
        if not (math.isfinite(seen_lo) and math.isfinite(seen_hi)):
            check_finite(x, name)
        if not clip and (seen_lo < self.lower or seen_hi > self.upper):
            outside = int(np.count_nonzero((x < self.lower) | (x > self.upper)))
            raise OutOfBoundsError(
                f"{name} has {outside} value(s) outside the declared {bounds} [{self.lower:g}, {self.upper:g}]; fix "
                f"the {bounds}, or pass clip=True (clipping to public bounds keeps the privacy guarantee)"
            )

    def cells(self, x: np.ndarray, clip: bool) -> np.ndarray:
        """Each record's cell, sorted (the records are checked against the bounds first)."""
        self.check(x, clip)
        return np.sort(self.cell_of(x))

    def cell_of(self, x: np.ndarray) -> np.ndarray:
        """Each record's cell, in the records' order (clipped to the bounds; not checked)."""
        low, high = self._warp([self.lower, self.upper])
        cells = np.floor((self._warp(np.clip(x, self.lower, self.upper)) - low) * (self.size / (high - low)))
        return np.clip(cells, 0, self.size - 1).astype(np.int64)

    def values(self, j) -> np.ndarray:
        """The grid points g_j (post-processing of the integers j; the ends are the bounds exactly)."""
        j = np.asarray(j, dtype=np.float64)
        low, high = self._warp([self.lower, self.upper])
        warped = low + (high - low) * (j / self.size)
        if self.scale == "linear":
            inner = warped
        else:
            inner = np.sinh(warped) * (max(abs(self.lower), abs(self.upper)) * 2.0**-_LOG_UNIT_BITS)
        return np.where(j == 0, self.lower, np.where(j == self.size, self.upper, inner))

    def describe(self) -> str:
        spacing = "equally spaced" if self.scale == "linear" else "equally spaced in asinh(x/s)"
        return f"public grid of {self.size + 1} points on [{self.lower:g}, {self.upper:g}], {spacing}"


def _run_lengths(cells: np.ndarray, grid_size: int) -> np.ndarray:
    """L_r for r = 0 … n: how many grid points have rank r (see the module docstring)."""
    return np.diff(np.concatenate([[-1], cells, [grid_size]]))


# ----------------------------------------------------------------------------- one quantile, exact


def _sample_one(
    cells: np.ndarray, level: float, epsilon: float, grid_size: int, rng, sensitivity: Fraction = Fraction(1)
) -> int:
    """The grid index j drawn exactly with P(j) ∝ exp(−(ε′/2)|c(j) − t|) (module docstring, "One quantile"), with
    ε′ = ε/Δu rounded down (Δu = ``sensitivity``: 1 for records, m + 2^-10 for units): two 64-bit words drawn,
    whatever the data."""
    scale = 1 << _TARGET_BITS
    eps_num = math.floor(Fraction(epsilon) / sensitivity * (1 << _EPSILON_BITS))  # ε′ = eps_num / 2^40 <= ε/Δu
    target = round(Fraction(level) * cells.size * scale)  # t = target / 2^10
    rate = Fraction(eps_num, 1 << (_EPSILON_BITS + _TARGET_BITS + 1))  # ε′/2 per unit of |c(j) − t|, per 2^-10
    # the scores u(j) = −|c(j) − t| of every grid point, in units of 2^-10, and Δu in the same units
    scores = lambda: -np.abs(np.searchsorted(cells, np.arange(grid_size + 1)) * scale - target)  # noqa: E731
    observe("quantile scores", scores, sensitivity=sensitivity * scale, norm="linf")
    lengths = _run_lengths(cells, grid_size)
    return draw("exponential mechanism (one quantile)", rng, lambda: sample_runs(lengths, target, scale, rate, rng))


# ----------------------------------------------------------------------------- several quantiles, GJK


def _log_convolve_lower(kernel: np.ndarray, values: np.ndarray) -> np.ndarray:
    """y[r] = log Σ_{s <= r} exp(kernel[r − s] + values[s]) (a lower-triangular Toeplitz product in log space, by
    FFT after subtracting the maxima; GJK 2021, Section 3.3)."""
    top_k, top_v = np.max(kernel), np.max(values)
    if not (np.isfinite(top_k) and np.isfinite(top_v)):
        return np.full(values.size, -np.inf)
    size = values.size
    length = 1 << int(2 * size - 1).bit_length()
    product = np.fft.irfft(
        np.fft.rfft(np.exp(kernel - top_k), length) * np.fft.rfft(np.exp(values - top_v), length), length
    )[:size]
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(product, 0.0)) + top_k + top_v


def _logsumexp(a: np.ndarray, axis: int) -> np.ndarray:
    top = np.max(a, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return np.squeeze(np.log(np.sum(np.exp(a - top), axis=axis, keepdims=True)) + top, axis=axis)


def _sample_joint(cells: np.ndarray, levels: np.ndarray, epsilon: float, grid_size: int, rng) -> np.ndarray:
    """Grid indices o_1 <= … <= o_m from GJK's joint exponential mechanism (module docstring; floating point).

    Forward pass (GJK Algorithm 1, "compute α"): ``alpha[j][r, k]`` is the log
    weight of the first j + 1 outputs with o_j in run r and the last k + 1 of
    them in that run. Backward pass: sample the last group (run, size), then
    the group before it in a run strictly below, and so on.
    """
    n, m = cells.size, levels.size
    lengths = _run_lengths(cells, grid_size)
    with np.errstate(divide="ignore"):
        log_lengths = np.log(lengths.astype(np.float64))
    targets = np.diff(np.concatenate([[0.0], levels, [1.0]])) * n  # τ_1 … τ_{m+1}
    gaps = np.arange(n + 1, dtype=np.float64)
    log_phi = -(epsilon / 4.0) * np.abs(gaps[:, None] - targets[None, :])  # [gap, j]
    alpha = [(log_phi[:, 0] + log_lengths)[:, None]]
    for j in range(1, m):
        previous = _logsumexp(alpha[j - 1], axis=1)
        kernel = log_phi[:, j].copy()
        kernel[0] = -np.inf  # a new group starts in a run strictly above the previous one
        current = np.full((n + 1, j + 1), -np.inf)
        current[:, 0] = log_lengths + _log_convolve_lower(kernel, previous)
        grow = np.log((lengths[:, None] + np.arange(1, j + 1)) / np.arange(2, j + 2))  # (L + k)/(k + 1)
        with np.errstate(invalid="ignore"):
            current[:, 1:] = alpha[j - 1][:, :j] + log_phi[0, j] + grow
        alpha.append(current)
    out = np.empty(m, dtype=np.int64)
    j, last, first = m - 1, n, True
    while j >= 0:
        weights = alpha[j][: last + 1] + log_phi[last - np.arange(last + 1), j + 1][:, None]
        if not first:
            weights[last] = -np.inf
        flat = int(np.argmax(weights.ravel() + rng.gumbel(size=weights.size)))
        run, k = divmod(flat, weights.shape[1])
        size = k + 1
        start = 0 if run == 0 else int(cells[run - 1]) + 1
        # a uniform non-decreasing `size`-tuple of the run's points (stars and bars)
        chosen = np.sort(rng.choice(int(lengths[run]) + size - 1, size=size, replace=False)) - np.arange(size)
        out[j - size + 1 : j + 1] = start + chosen
        j, last, first = j - size, run, False
    return out


# ----------------------------------------------------------------------------- the public functions


def _check_levels(q, name: str = "q") -> tuple[np.ndarray, bool]:
    """The quantile levels as a 1-D float array in [0, 1], and whether ``q`` was a scalar (numbers only: never a
    string, a bool or a complex number)."""
    allowed = "a number or a non-empty 1-D array of numbers in [0, 1]"
    scalar = isinstance(q, numbers.Real) and not isinstance(q, (bool, np.bool_))
    levels = np.atleast_1d(check_real_array(q, name, allowed=allowed))
    if (
        levels.ndim != 1
        or levels.size == 0
        or not (np.isfinite(levels).all() and (levels >= 0).all() and (levels <= 1).all())
    ):
        raise ParameterError(f"{name} must be {allowed}; got {q!r}")
    return levels, scalar


@declare(
    family="descriptive",
    statistic="quantiles of bounded values on a public grid (exponential mechanism; per key)",
    data={"x": Data("values")},
    own=("q",),
    parameters={
        **privacy(),
        "q": Checked(
            "a number or a non-empty 1-D array of numbers in [0, 1]",
            {"2": 2.0, "-0.1": -0.1, "nan": math.nan, "string": "0.5", "bool": True, "empty": [], "None": None},
        ),
        "bounds": BOUNDS,
        "clip": Flag(),
        "grid_size": Integer(2, _MAX_GRID_SIZE),
        "scale": Options(*SCALES),
        **grouping(MAX_GROUPS),
        **UNITS,
        "ci": Level(),
    },
    cases="dpstats.descriptive._cases:quantile",
    preview="dpstats.descriptive._previews:quantile_preview",
)
def quantile(
    x,
    q,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds,
    clip: bool = False,
    grid_size: int = GRID_SIZE,
    scale: str = "linear",
    by=None,
    categories=None,
    max_groups: int | None = None,
    selection: str | None = None,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    ci: float | None = None,
):
    """Differentially private quantile(s) of bounded data: the exponential mechanism on a public grid.

    One level q: Smith's (2011) exponential mechanism, sampled exactly: ε-DP
    (δ = 0), one :class:`~dpstats.accounting.Exponential` event. Several
    levels: the joint exponential mechanism of Gillenwater, Joseph & Kulesza
    (2021), which spends the whole ε on all of them at once (instead of ε/m
    each) and returns non-decreasing values. Its sampler is floating point and
    can give a positive-probability outcome probability 0 (module docstring),
    so its guarantee is **unproven**: it is recorded with ``proven=False`` and
    an :class:`~dpstats.Accountant` refuses it unless created with
    ``allow_unproven=True``. For a proven release of several levels, call
    ``quantile`` once per level with a share of ε. See the module docstring for
    the utilities, their sensitivities (1 and 2, replace-one neighbours, n
    public) and the privacy and exactness arguments.

    Parameters
    ----------
    x : array_like, pandas or polars Series
        One value per record.
    q : float or array_like of float
        Quantile level(s) in [0, 1], e.g. 0.5 for the median; any order.
    epsilon : float
        ε > 0 for the whole release (all levels together).
    delta : float, default 0.0
        With ``by`` and no ``categories``: the δ of the private selection of
        the keys (the quantiles themselves are pure ε-DP); ε is split equally
        between the selection and the quantiles. Without ``by`` it must be 0.
    bounds : tuple (lower, upper) or dict
        Public bounds, chosen without looking at the data; the outputs are
        grid points between them. For a DataFrame: a pair for every column,
        per-column pairs ``([lo...], [hi...])``, or a dict ``{column: (lo, hi)}``.
    clip : bool, default False
        Clip values outside ``bounds`` to them instead of raising
        ``OutOfBoundsError`` (a per-record public map: the guarantee holds).
    grid_size : int, default 65536
        Number of cells of the public output grid (2 … 2^24). A single
        quantile's exact sampler draws two 64-bit words whatever the data.
    scale : {"linear", "log"}, default "linear"
        Spacing of the grid: equal steps of (upper − lower)/grid_size, or equal
        steps of asinh(x/s) with s = 2^-10·max(|lower|, |upper|) — geometric
        above s, so a range many times wider than the data adds few grid
        points. The mechanism picks a grid point with probability ∝ exp(ε·u/2)
        (or ε·u/4), so a wide empty stretch of a linear grid can outweigh the
        few points near the quantile; on the log scale it cannot. Ranks do not
        change under the monotone map x ↦ asinh(x/s), applied to every record
        on its own, so the privacy argument is the same.
    by : array_like, Series or str, optional
        One quantile per key (:func:`dpstats.mean` describes ``by``,
        ``categories``, ``max_groups`` and ``selection``): Smith's mechanism,
        sampled exactly, for every key, each with ε over the total utility
        sensitivity of the keys a replaced unit moves (2k(m + 2^-10);
        2(1 + 2^-10) without a unit), so that their losses add up to at most ε
        (:mod:`dpstats.descriptive._grouped`). One level ``q`` only.
    categories, max_groups, selection
        With ``by``, as in :func:`dpstats.mean`.
    privacy_unit : array_like, Series or str, optional
        One identifier per record (or a column name of a two-column
        DataFrame ``x``): neighbours then differ in all records of one unit,
        at most ``max_rows`` of which are kept (module docstring, "Privacy
        units"; every record is checked against the bounds first).
    max_rows : int, optional
        With ``privacy_unit``: the public number of records kept per unit.
    rng : None, int or numpy.random.Generator
        Source of randomness; ``None`` is a cryptographically secure source.
    accountant : Accountant, optional
        Charged before anything is sampled.
    ci : float, optional
        A confidence level (e.g. 0.95), for one level ``q`` of one column
        without ``by``: return a :class:`~dpstats.Estimate` whose ``.ci``
        covers the *population* q-quantile with that probability (sampling
        and the mechanism's randomness together). The call releases the
        quantile at ε/2 and the interval's ends at ε/4 each, by the same exact
        exponential mechanism at public target ranks (Drechsler et al. 2022;
        :mod:`dpstats.inference._quantile`); with ``privacy_unit``, only with
        ``max_rows=1``.

    Returns
    -------
    float, numpy.ndarray, pandas.Series or polars.Series or DataFrame
        A float for a scalar q; otherwise one value per level, in the order of
        ``q`` (a pandas Series indexed by q, named like ``x``, for a pandas
        ``x``; a polars Series for polars). With ``by``, one value per key (a
        pandas Series indexed by key, or a polars DataFrame). For a DataFrame
        ``x`` (several columns), the quantiles of every column, ε split equally
        between the columns: a Series indexed by column for a scalar q (a
        one-row polars DataFrame), else a DataFrame of levels × columns.

    References
    ----------
    Smith, "Privacy-preserving statistical estimation with optimal convergence
    rates", STOC 2011. Gillenwater, Joseph & Kulesza, "Differentially private
    quantiles", ICML 2021, Algorithm 1 (JointExp). McSherry & Talwar, FOCS 2007.
    Canonne, Kamath & Steinke, NeurIPS 2020, Algorithm 1 (exact Bernoulli(exp(−γ))).

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> ages = np.random.default_rng(0).integers(18, 90, 1000)
    >>> median = dps.quantile(ages, 0.5, 1.0, bounds=(0, 120), rng=0)
    >>> quartiles = dps.quantile(ages, [0.25, 0.5, 0.75], 1.0, bounds=(0, 120), rng=0)
    >>> bool(np.all(np.diff(quartiles) >= 0))
    True
    """
    levels, scalar = _check_levels(q)
    level = ci  # a confidence level or None (checked by the declaration)
    if level is not None and (by is not None or not scalar):
        raise ParameterError(
            "ci is available for one quantile level q (a number) without by=: call quantile once per level (each "
            f"with its share of epsilon); got q={q!r}" + (" and by" if by is not None else "")
        )
    if by is not None:
        grid = _check_grid(bounds, "bounds", grid_size, scale)
        options = dict(categories=categories, max_groups=max_groups, selection=selection)
        return _grouped(
            x,
            levels,
            scalar,
            epsilon,
            delta,
            grid,
            clip,
            by,
            options,
            privacy_unit,
            max_rows,
            rng,
            accountant,
        )
    if delta != 0 or categories is not None or max_groups is not None or selection is not None:
        raise ParameterError(
            "delta, categories, max_groups and selection apply only to grouped quantiles: pass by= (the key of "
            "every row, or a column name)"
        )
    x, units = take_units(x, privacy_unit, max_rows)
    if units is not None and is_frame(x) and len(x.columns) == 1:
        x = x[x.columns[0]]  # the values' column of a table whose other column is the unit
    x, table = from_table(x, "x")
    if table is not None and table.columns is not None:
        if level is not None:
            raise ParameterError("ci is available for one column: pass x[column] (one call per column)")
        return _per_column(x, table, levels, scalar, epsilon, bounds, clip, grid_size, scale, units, rng, accountant)
    grid = _check_grid(bounds, "bounds", grid_size, scale)
    cells, m = _kept_cells(check_array(x, "x", ndim=(1,)), grid, clip, units, rng)
    if level is not None:
        relation = Relation.of(units is not None)
        return intervals.quantile(
            cells,
            float(levels[0]),
            epsilon,
            level,
            grid,
            m,
            relation,
            clip=clip,
            sample=lambda at, share: _sample_one(cells, at, share, grid.size, rng, _score_sensitivity(m)),
            charge=lambda events, note: charge_plans(
                "quantile", [], rng=rng, accountant=accountant, note=note, events=events, relation=relation
            ),
        )
    values = grid.values(
        _indices_of_cells(cells, levels, epsilon, grid, rng, accountant, m, Relation.of(units is not None))
    )
    if scalar:
        return float(values[0])
    return values if table is None else table.indexed(values, levels.tolist())


def _per_column(x, table, levels, scalar, epsilon, bounds, clip, grid_size, scale, units, rng, accountant):
    """The quantiles of every column of a table: each column's grid from its bounds (a pair, per-column pairs or a
    dict by column), every value checked before anything is charged, one choice of records for every column with a
    privacy unit, ε split equally between the columns (each column's quantiles at ε/d: basic composition)."""
    values = check_array(x, "x", ndim=(2,))
    d = values.shape[1]
    if isinstance(bounds, Mapping):
        lows, highs = table.per_column(bounds, "bounds", pair=True)
    else:
        lower, upper = check_bounds(bounds, "bounds")
        try:
            lows, highs = np.broadcast_to(lower, (d,)), np.broadcast_to(upper, (d,))
        except ValueError as err:
            raise ParameterError(
                f"bounds must be a pair of numbers, of {d} numbers each (one per column), or a dict by column; "
                f"got {bounds!r}"
            ) from err
    grids = [
        _check_grid((lo, hi), f"bounds[{c!r}]", grid_size, scale)
        for c, lo, hi in zip(table.columns, lows, highs, strict=True)
    ]
    for j, column in enumerate(table.columns):
        grids[j].check(values[:, j], clip, "bounds", f"x[{column!r}]")  # every record, before anything is charged
    values, m = _kept_rows(values, units, rng)
    share = split_epsilon(epsilon, d)
    found = np.column_stack(
        [
            grids[j].values(
                _indices_of_cells(
                    grids[j].cells(values[:, j], clip),
                    levels,
                    share,
                    grids[j],
                    rng,
                    accountant,
                    m,
                    Relation.of(units is not None),
                )
            )
            for j in range(d)
        ]
    )
    return table.per_column_result(found[0]) if scalar else table.per_level(found, levels.tolist())


def _check_grid(bounds, name: str, grid_size, scale) -> _Grid:
    lower, upper = check_bounds(bounds, name)
    if lower.ndim or upper.ndim:
        raise ParameterError(f"{name} must be a pair of scalars (lower, upper); got {bounds!r}")
    return _Grid(float(lower), float(upper), grid_size, scale)  # grid_size and scale: declared, checked once


def _kept_cells(x: np.ndarray, grid: _Grid, clip: bool, units, rng) -> tuple[np.ndarray, int]:
    """The sorted cells of the records (every record checked against the grid's bounds), with a privacy unit those
    of the records each unit keeps; and the records per unit m (1 without a unit)."""
    cells = grid.cells(x, clip)
    if units is None:
        return cells, 1
    kept, m = _kept_rows(x, units, rng)
    return grid.cells(kept, clip), m


def _score_sensitivity(m: int) -> Fraction:
    """Δu of one quantile's score (module docstring): 1 for records, m + 2^-10 with m records per unit."""
    return Fraction(1) if m == 1 else m + Fraction(1, 1 << _TARGET_BITS)


def _indices_of_cells(
    cells: np.ndarray,
    levels: np.ndarray,
    epsilon: float,
    grid: _Grid,
    rng,
    accountant,
    m: int,
    relation: str,
    charged: bool = True,
) -> np.ndarray:
    """Charge, and sample the grid index of every level from the records' sorted cells (m: records per unit;
    ``relation``: "unit" with a privacy unit, "row" without; ``charged=False``, one level only: the caller charged
    its ``Exponential(epsilon)`` already, with its own release)."""
    units = f"privacy unit: at most {m} records each; " if relation == "unit" else ""
    if levels.size == 1 and not charged:
        return np.array([_sample_one(cells, float(levels[0]), epsilon, grid.size, rng, _score_sensitivity(m))])
    if levels.size == 1:
        charge(
            "quantile",
            [Exponential(epsilon)],
            rng=rng,
            accountant=accountant,
            relation=relation,
            note=f"{units}exponential mechanism (Smith 2011) on a {grid.describe()}; exact sampler (inversion with "
            f"certified intervals, two 64-bit words drawn whatever the data), epsilon rounded down to a multiple of "
            f"2^-{_EPSILON_BITS}",
        )
        return np.array([_sample_one(cells, float(levels[0]), epsilon, grid.size, rng, _score_sensitivity(m))])
    charge(
        "quantile",
        [Exponential(epsilon)],
        rng=rng,
        accountant=accountant,
        relation=relation,
        proven=False,
        note=f"{units}joint exponential mechanism (Gillenwater, Joseph & Kulesza 2021) for {levels.size} levels on a "
        f"{grid.describe()}; floating-point sampler (log-space dynamic programme, Gumbel-max): no exact "
        "sampler known, guarantee unproven",
    )
    order = np.argsort(levels, kind="stable")
    indices = np.empty(levels.size, dtype=np.int64)
    observe(  # the joint utility's outputs are not enumerable: its scores at public probe tuples
        "joint quantile scores at probe tuples",
        lambda: _joint_scores(cells, levels[order], grid.size),
        sensitivity=3 * m - 1,
        norm="linf",
        exact=False,
    )
    indices[order] = draw(
        "joint exponential mechanism",
        rng,
        lambda: _sample_joint(cells, levels[order], epsilon * 2 / (3 * m - 1), grid.size, rng),  # Δu = 3m − 1
    )
    return indices


def _joint_scores(cells: np.ndarray, levels: np.ndarray, grid_size: int, probes: int = 256) -> np.ndarray:
    """The joint utility u(o) = −Σ_j |c(o_j) − c(o_{j−1}) − τ_j| (module docstring) at ``probes`` non-decreasing
    tuples of grid points drawn from a fixed public seed (for the sensitivity checker of :mod:`dpstats.audit`)."""
    n = cells.size
    tuples = np.sort(np.random.default_rng(0).integers(0, grid_size + 1, (probes, levels.size)), axis=1)
    ranks = np.searchsorted(cells, tuples, side="left")
    bounded = np.hstack([np.zeros((probes, 1)), ranks, np.full((probes, 1), n)])
    targets = np.diff(np.concatenate([[0.0], levels, [1.0]])) * n
    return -np.abs(np.diff(bounded, axis=1) - targets).sum(axis=1)


@declare(
    family="descriptive",
    statistic="clipping bounds: two private quantiles of each column within a wide public range",
    data={"x": Data("values")},
    parameters={
        **privacy("pure"),
        "range": BOUNDS,
        "quantiles": Checked(
            "a pair (q_lo, q_hi) with 0 < q_lo < q_hi < 1",
            {"reversed": (0.9, 0.1), "0 and 1": (0.0, 1.0), "one level": (0.5,), "string": "ab", "None": None},
        ),
        "clip": Flag(),
        "grid_size": Integer(2, _MAX_GRID_SIZE),
        "scale": Options(*SCALES),
        **UNITS,
    },
    cases="dpstats.descriptive._cases:private_bounds",
    preview="dpstats.descriptive._previews:private_bounds_preview",
)
def private_bounds(
    x,
    epsilon: float,
    delta: float = 0.0,
    *,
    range,
    quantiles=(0.05, 0.95),
    clip: bool = False,
    grid_size: int = GRID_SIZE,  # noqa: A002
    scale: str = "log",
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
):
    """Clipping bounds chosen privately: the private ``quantiles`` of ``x`` within a wide public ``range``.

    Mean, variance and histogram need public bounds, and bounds read from the
    data are not private (diffprivlib's most asked-for fix). This helper spends
    ``epsilon`` — a stated part of the analyst's budget — on two private
    quantiles (:func:`quantile`, Smith 2011, each sampled exactly at ε/2; the
    joint mechanism's sampler is not proven) at the levels ``quantiles`` of the
    data clipped to ``range``, a generous public interval that needs no look
    at the data (ages: (0, 150); incomes: (0, 10^7)). The grid is logarithmic
    by default (``scale="log"``), so a range far wider than the data costs
    little. Pass the result as ``bounds=`` with ``clip=True``: clipping to
    public (privately chosen) bounds keeps the guarantee of the later release.

    The trade-off: the noise of a mean is proportional to the bounds' width, so
    tight bounds from a small share of ε can cut the error by the ratio of the
    range to the data's spread, far more than the share costs; but the ε spent
    here is not available to the statistic, too small a share gives erratic
    bounds, and clipping the tails at levels (q_lo, q_hi) biases the statistic
    by up to the tails' contribution. The analyst tutorial
    (``notebooks/tutorials/analyst.ipynb``) measures the error against the share.

    Parameters
    ----------
    x : array_like, pandas or polars Series or DataFrame
        The data: one column, or a DataFrame (bounds for each column, with ε
        split equally between the columns: each column's quantiles get ε/d).
    epsilon : float
        ε spent on the bounds (ε-DP).
    delta : float, default 0.0
        Must be 0: the bounds are pure ε-DP.
    range : tuple (lower, upper) or dict
        The wide public range; for a DataFrame, one pair for every column or a
        dict ``{column: (lower, upper)}``.
    quantiles : pair of float, default (0.05, 0.95)
        The levels of the lower and upper bound, 0 < q_lo < q_hi < 1 (a level 0
        or 1 is refused: every grid point beyond the extreme record has the best
        score, so the bound would be the edge of the range, not of the data). More
        extreme levels clip less but are found less reliably: the level q_lo
        leaves q_lo·n ranks of margin, and a stretch of the range with no data
        wins once ε·q_lo·n/2 is small against the log of its share of the grid
        (with n = 5000 and ε = 0.2, (0.01, 0.99) often returns the edge of the
        range; (0.05, 0.95) does not). Each level is released on its own, and
        the two results are sorted (post-processing).
    clip : bool, default False
        Clip values outside ``range`` to it instead of raising
        :class:`~dpstats.exceptions.OutOfBoundsError` (every value is checked
        before anything is charged; clipping to the public range keeps the
        guarantee).
    grid_size : int, default 65536
    scale : {"log", "linear"}, default "log"
        The grid of :func:`quantile`; the bounds are two of its points.
    privacy_unit, max_rows, rng, accountant
        As in :func:`quantile` (``privacy_unit`` may name a column of the
        DataFrame ``x``; the same records are kept for every column).

    Returns
    -------
    tuple (lower, upper) or dict
        ``(lower, upper)`` with lower < upper (if both quantiles land on the same
        grid point, the upper bound moves up one grid point, or the lower one
        down at the top of the range: post-processing); for a DataFrame a dict
        ``{column: (lower, upper)}`` — the form :func:`dpstats.mean` takes as
        ``bounds``.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> incomes = np.random.default_rng(0).lognormal(10.5, 0.6, 2000)
    >>> lo, hi = dps.private_bounds(incomes, 0.1, range=(0, 1e7), rng=0)
    >>> m = dps.mean(incomes, 0.9, bounds=(lo, hi), clip=True, rng=0)
    """
    levels, _ = _check_levels(quantiles, "quantiles")
    if levels.size != 2 or not 0 < levels[0] < levels[1] < 1:
        raise ParameterError(f"quantiles must be a pair (q_lo, q_hi) with 0 < q_lo < q_hi < 1; got {quantiles!r}")
    x, units = take_units(x, privacy_unit, max_rows)
    values, table = from_table(x, "x")
    if table is None or table.columns is None:
        grid = _check_grid(range, "range", grid_size, scale)
        column = check_array(values, "x", ndim=(1,))
        units = None if units is None else units.aligned(column.shape[0])
        grid.check(column, clip, "range")  # every record, before anything is charged
        column, m = _kept_rows(column, units, rng)
        return _bounds_of_column(column, epsilon, grid, levels, m, Relation.of(units is not None), rng, accountant)
    d = len(table.columns)
    if isinstance(range, Mapping):
        lows, highs = table.per_column(range, "range", pair=True)
        grids = [
            _check_grid(pair, f"range[{c!r}]", grid_size, scale)
            for c, pair in zip(table.columns, zip(lows, highs, strict=True), strict=True)
        ]
    else:
        grids = [_check_grid(range, "range", grid_size, scale)] * d
    # every column is checked before any charge; with a unit, one choice of records for every column
    values = check_array(values, "x", ndim=(2,))
    units = None if units is None else units.aligned(values.shape[0])
    for i, column in enumerate(table.columns):
        grids[i].check(values[:, i], clip, "range", f"x[{column!r}]")
    values, m = _kept_rows(values, units, rng)
    share = split_epsilon(epsilon, d)
    return {
        column: _bounds_of_column(
            values[:, i], share, grids[i], levels, m, Relation.of(units is not None), rng, accountant
        )
        for i, column in enumerate(table.columns)
    }


def sample_private_bounds(
    x: np.ndarray,
    epsilon: float,
    *,
    range,
    quantiles,
    grid_size: int,
    units,
    rng,
    scale: str = "log",  # noqa: A002
) -> tuple[float, float]:
    """The pair :func:`private_bounds` releases for the 1-D float array ``x`` (finite, checked by the caller; clipped
    to ``range``), its two exponential mechanisms (ε/2 each, exact) sampled **without a charge**: for a release
    that charges them (``[Exponential(ε/2)] * 2``) with its own events as one ledger entry, before anything is drawn
    (:func:`dpstats.linear_regression`'s private bounds). ``units``: the call's :class:`dpstats._engine.Units` or
    None; ``range``, ``quantiles``, ``grid_size``, ``scale``: public, as :func:`private_bounds` takes them."""
    grid = _Grid(float(range[0]), float(range[1]), grid_size, scale)
    levels = np.asarray(quantiles, dtype=np.float64)
    column, m = _kept_rows(np.asarray(x, dtype=np.float64), units, rng)
    return _bounds_of_column(column, epsilon, grid, levels, m, Relation.of(units is not None), rng, None, False)


def _kept_rows(values: np.ndarray, units, rng) -> tuple[np.ndarray, int]:
    """The rows (records) of ``values`` each unit keeps, and m (all rows, and 1, without a privacy unit)."""
    if units is None:
        return values, 1
    kept = bound_rows((values,), units.aligned(values.shape[0]), rng)
    return kept.arrays[0], kept.max_rows


def _bounds_of_column(
    x: np.ndarray, epsilon: float, grid: _Grid, levels, m: int, relation: str, rng, accountant, charged: bool = True
) -> tuple:
    """Two exact single quantiles at ε/2 each (proven ε-DP by basic composition; the joint sampler is not), of the
    records ``x`` (m: records per unit; ``relation`` as in :func:`_indices_of_cells`; ``charged=False``: the caller
    has charged them, see :func:`sample_private_bounds`)."""
    cells, half = grid.cells(x, True), split_epsilon(epsilon, 2)
    low, high = sorted(
        int(_indices_of_cells(cells, levels[i : i + 1], half, grid, rng, accountant, m, relation, charged)[0])
        for i in range(2)
    )  # sorted: post-processing
    if high <= low:  # both on one grid point: widen by one grid step (post-processing)
        low, high = (low, low + 1) if low < grid.size else (low - 1, low)
    return tuple(float(v) for v in grid.values([low, high]))


# ----------------------------------------------------------------------------- grouped: one quantile per key


def _grouped(
    x,
    levels,
    scalar: bool,
    epsilon: float,
    delta: float,
    grid: _Grid,
    clip: bool,
    by,
    options: dict,
    privacy_unit,
    max_rows,
    rng,
    accountant,
):
    """One exact single quantile per key (``descriptive._grouped``, "Sensitivities"): the keys public or selected
    privately; each key's exponential mechanism runs with ε over the total utility sensitivity of the keys a
    replaced unit moves, so that their losses add up to at most ε; the whole is one ledger entry."""
    if not scalar:
        raise ParameterError(f"with by=, q must be one level (a number); got {levels.tolist()}: call once per level")
    grouping = prepare(
        "quantile", x, delta, by=by, privacy_unit=privacy_unit, max_rows=max_rows, values=True, **options
    )
    if grouping.columns != 1:
        raise DataValidationError("quantile takes one column of values; got several: pass x[column]")
    chosen = calibrate(grouping, epsilon, delta)
    budget = grouping.budgets(epsilon, delta)["quantile"][0]
    values = grouping.values.reshape(-1, 1) if np.ndim(grouping.values) == 1 else grouping.values
    bounded_sums(values, np.array([grid.lower]), np.array([grid.upper]), axis=0, clip=clip, squares=False)
    table = group_table(grouping, rng, cells=grid.cell_of, clip=clip)
    sensitivity = quantile_sensitivity(grouping)
    notes = [grouping.note(table.n_units, "utility")] + ([] if chosen is None else [chosen.note()])
    notes.append(
        f"exponential mechanism (Smith 2011) per key on a {grid.describe()}, utility sensitivity {float(sensitivity):g}"
        " over the keys; exact sampler"
    )
    charge_plans(
        "quantile",
        [],
        rng=rng,
        accountant=accountant,
        note="; ".join(notes),
        events=([] if chosen is None else [chosen.event]) + [Exponential(budget)],
        statements=() if chosen is None else (chosen.statement(),),
        relation=Relation.of(grouping.units is not None),
    )
    index, _ = selected(grouping, chosen, table, rng)
    where = public_index(grouping, table)[index] if grouping.categories is not None else index
    key_of, cell, count = table.cells
    starts = np.searchsorted(key_of, np.arange(table.size + 1))
    out = np.empty(index.size)
    for i, t in enumerate(where):
        cells = (
            np.zeros(0, dtype=np.int64)
            if t < 0
            else np.repeat(cell[starts[t] : starts[t + 1]], count[starts[t] : starts[t + 1]])
        )
        out[i] = grid.values(_sample_one(cells, float(levels[0]), budget, grid.size, rng, sensitivity))
    return keyed(grouping, released_keys(grouping, table, index), out)
