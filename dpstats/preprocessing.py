"""Preprocessing that keeps the guarantee: maps applied to each row on its own, with public or private parameters.

:func:`clip_rows` scales down the rows whose L2 norm exceeds a public bound, so that data of unknown norms meet the
‖x_i‖₂ <= 1 that every PCA, CCA and ERM mechanism assumes. Replacing one person's row changes one output row, so
a release computed on the clipped data keeps its guarantee. (Dividing by the largest row norm, as the PCA papers
do, reads the data and is not private: :func:`dpstats.compendium.datasets.scale_by_max_norm` reproduces it.)

When no bound is known, :func:`private_norm_bound` buys one: a private quantile of the row norms, with a share of
the budget; :func:`to_unit_rows` (behind ``norm_bound=`` of :func:`dpstats.pca`, :func:`dpstats.cca`,
:func:`dpstats.decomposition.covariance_dong` and the estimators) divides the rows by a bound, public or
private, and clips them to norm 1.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ._engine import Matrix, as_array, check_row_norms, read_matrix
from ._validation import check_columns, check_epsilon, check_flag, check_positive
from .accounting import Accountant, check_accountant, split_weighted, with_pending
from .accounting.events import Exponential
from .descriptive._norm_bound import NORM_BOUNDS, RADIUS_QUANTILE, private_norm_bound
from .exceptions import ParameterError
from .noise.random import check_rng

__all__ = [
    "NORM_BOUNDS",
    "RADIUS_QUANTILE",
    "RADIUS_SHARE",
    "UnitRows",
    "clip_rows",
    "private_norm_bound",
    "to_unit_rows",
]

#: The share of ε that ``norm_bound="private"`` spends on the bound (the mechanism gets the rest).
RADIUS_SHARE = 0.1


def clip_rows(X, max_norm: float = 1.0):
    """Scale down the rows whose L2 norm exceeds ``max_norm``; the other rows are unchanged.

    Parameters
    ----------
    X : array_like or dask array, shape (n, d)
        The data, one person per row (finite: NaN and infinity raise, they are never clipped away).
    max_norm : float, default 1.0
        The public bound R > 0.

    Returns
    -------
    numpy.ndarray or dask array, shape (n, d)
        Rows of norm <= R(1 + 1e-10) (within the tolerance of the mechanisms' row-norm check); a dask ``X`` gives a
        lazy result (its values are checked by the statistic that reads it).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.preprocessing import clip_rows
    >>> clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]])).tolist()
    [[0.6000000000000001, 0.8], [0.3, 0.4]]
    """
    max_norm = check_positive(max_norm, "max_norm")
    return check_row_norms(check_columns(as_array(X, "X", ndim=(2,))), "X", max_norm=max_norm, clip=True)


def _fraction(value, name: str, *, upper_inclusive: bool) -> float:
    """``value`` as a float in (0, 1] (``upper_inclusive``) or (0, 1), else a ParameterError naming it."""
    valid = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value) and value > 0
    if not valid or value > 1 or (value == 1 and not upper_inclusive):
        upper = "<=" if upper_inclusive else "<"
        raise ParameterError(f"{name} must be a number with 0 < {name} {upper} 1; got {value!r}")
    return float(value)


@dataclass(frozen=True)
class UnitRows:
    """Rows brought to norm <= 1 for a mechanism (:func:`to_unit_rows`).

    Attributes
    ----------
    rows : dpstats._engine.Matrix
        The rows divided by ``radius`` (and clipped to norm 1 where asked, or where the bound is private), read once
        with their privacy units: a mechanism takes them as they are.
    X : numpy.ndarray or dask array
        ``rows.X``.
    radius : float
        The bound the rows were divided by: 1 (none), the public ``norm_bound``, or the private one. Scale a
        release back with it (a second-moment matrix by radius²): post-processing.
    epsilon : float
        What is left of ε for the mechanism.
    privacy_unit : object
        The rows' canonical unit identifiers (a column name of a DataFrame resolved), or None.
    clip : bool
        Whether the mechanism still has to clip the rows to norm 1 (``norm_bound=None`` with ``clip=True``).
    accountant : object
        The accountant to pass on to the mechanism: with a private bound, one that records the bound's release
        together with the mechanism's (:func:`dpstats.accounting.with_pending`).
    """

    rows: Matrix
    radius: float
    epsilon: float
    clip: bool = False
    accountant: object = None

    @property
    def X(self):
        return self.rows.X

    @property
    def privacy_unit(self):
        return None if self.rows.units is None else self.rows.units.ids


def to_unit_rows(
    X,
    norm_bound,
    epsilon: float,
    *,
    radius_share: float = RADIUS_SHARE,
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
) -> UnitRows:
    """Rows of norm <= 1 for a mechanism, from data whose norms are bounded by ``norm_bound``.

    * ``norm_bound=None``: the rows must already have norm <= 1; X is passed on as it is (radius 1) with the whole ε
      and ``clip`` (the mechanism checks or clips the rows itself).
    * a number R > 0 (public, chosen without the data): the rows must have norm <= R (``clip=True`` scales longer
      ones down to R); they are divided by R.
    * ``"private"``: R̃ = :func:`private_norm_bound` (the 0.75-quantile of the norms in the default public
      range) with the part ``radius_share`` of ε; the rows are clipped to R̃ — those above the quantile
      necessarily — and divided by it. The mechanism gets the rest of ε (an exact split: the two add up to at most
      ε by basic composition). The bound is charged with the mechanism, as one ledger entry, when the mechanism
      charges (before it draws noise); if the mechanism refuses its input first, nothing is charged and the bound,
      never released, is dropped (:func:`dpstats.accounting.with_pending`).

    Clipping and division are maps of each row on its own with a public number or a released one, so the
    mechanism that reads the result keeps its guarantee (with ``privacy_unit``: replace all rows of one unit).

    Parameters
    ----------
    X : array_like, pandas or polars DataFrame or dask array, shape (n, d)
    norm_bound : None, float or "private"
    epsilon : float
        ε of the whole release (the bound and the mechanism).
    radius_share : float, default 0.1
        With ``"private"``: the part of ε spent on the bound, 0 < share < 1 (public; checked whatever
        ``norm_bound`` is, so that a bad value never passes unnoticed).
    clip : bool, default False
        Scale rows above a public bound down to it instead of raising (implied by ``"private"``).
    privacy_unit, max_rows
        As in the mechanisms; with ``"private"`` the quantile is taken at the unit level too.
    rng : numpy.random.Generator
        The call's source of randomness (the quantile draws from it first).
    accountant : Accountant, optional
        The caller's accountant (returned, wrapped for a private bound).

    Returns
    -------
    UnitRows

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.preprocessing import to_unit_rows
    >>> X = np.random.default_rng(0).normal(0, 30, (5000, 4))
    >>> rows = to_unit_rows(X, "private", 1.0, rng=np.random.default_rng(0))
    >>> round(rows.epsilon, 12), rows.radius > 40, bool(np.sqrt((rows.X ** 2).sum(axis=1)).max() <= 1 + 1e-9)
    (0.9, True, True)
    """
    clip = check_flag(clip, "clip")
    share = _fraction(radius_share, "radius_share", upper_inclusive=False)  # checked whatever the bound
    if isinstance(norm_bound, str) and norm_bound != "private" or isinstance(norm_bound, bool):
        raise ParameterError(f"norm_bound must be None, a number > 0 or 'private'; got {norm_bound!r}")
    check_accountant(accountant)
    data = read_matrix(X, privacy_unit, max_rows)  # read once: a Matrix from an entry point passes as it is
    if norm_bound is None:
        return UnitRows(data, 1.0, epsilon, clip, accountant)
    if norm_bound != "private":
        radius = check_positive(norm_bound, "norm_bound")
        rows = check_row_norms(data.X, data.name, max_norm=radius, clip=clip)
        return UnitRows(data.scaled(rows * (1.0 / radius)), radius, epsilon, False, accountant)
    epsilon_bound, epsilon_rest = split_weighted(epsilon, [share, 1.0 - share])
    check_epsilon(epsilon_bound, "epsilon share of the norm bound (epsilon * radius_share)")
    radius = private_norm_bound.unchecked(data, epsilon_bound, 0.0, rng=check_rng(rng))
    rows = check_row_norms(data.X, data.name, max_norm=radius, clip=True)
    owed = with_pending(
        accountant,
        [Exponential(epsilon_bound)],
        note=f"norm bound: private {RADIUS_QUANTILE:g}-quantile of the row norms (epsilon={epsilon_bound:.4g}, "
        f"exponential mechanism on a public log grid of [{NORM_BOUNDS[0]:g}, {NORM_BOUNDS[1]:g}])",
    )
    return UnitRows(data.scaled(rows * (1.0 / radius)), radius, epsilon_rest, False, owed)
