"""The result of a private hypothesis test, and what every test shares: its declared options, reading the data,
and the charge.

:class:`HypothesisResult` has scipy.stats' fields (``statistic``, ``pvalue``, ``ci`` where scipy's result has a
confidence interval) and unpacks as ``statistic, pvalue = result``, as scipy's results do; it also carries what was
released (``released``: the noisy statistics the p-value was computed from, public) and how the p-value was made.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._constraints import Checked, Integer, NoneOr, Options, Real
from .._engine import as_array, bound_rows, take_units
from .._engine.kinds import library
from .._engine.tables import from_table
from .._release import release
from ..exceptions import DataValidationError, ParameterError
from ..inference._simulate import NoiseModel

__all__ = [
    "ALTERNATIVE",
    "LEVEL",
    "RESAMPLES",
    "HypothesisResult",
    "charged",
    "check_one_record",
    "noise_of",
    "keep_one_per_unit",
    "one_record_per_unit",
    "balanced_sizes",
    "plug_in_sizes",
    "read_sample",
    "read_samples",
    "unit_note",
]

#: scipy's ``alternative``.
ALTERNATIVE = Options("two-sided", "less", "greater")
#: The confidence level of a test's interval (scipy's ``confidence_level``; None: no interval).
LEVEL = NoneOr(Real(0.0, 1.0))
#: The number of Monte Carlo draws of a simulated null: the p-value (1 + #)/(B + 1) is valid for any B.
RESAMPLES = Integer(1, 10**6)
#: A sequence of samples (``kruskal``, ``f_oneway``): its data constraint's description.
SAMPLES_WHAT = "a sequence (list or tuple) of at least two 1-D samples of numbers (arrays, lists or pandas Series)"


@dataclass(frozen=True, repr=False)
class HypothesisResult:
    """A private hypothesis test's result.

    Attributes
    ----------
    statistic : float
        The test statistic, computed from the noisy releases only (each test's docstring defines it; it is the
        private counterpart of scipy's statistic, not scipy's statistic of the data).
    pvalue : float
        The p-value: P(a statistic at least as extreme | the null) for the *private* statistic, the exact noise
        included. Exact where the null distribution is known in closed form (``n_resamples`` None), else the
        Monte Carlo p-value (1 + #{T* at least as extreme})/(B + 1) over B simulated draws, which is valid for any B.
    test : str
        The test's name (scipy's).
    alternative : str or None
        ``"two-sided"``, ``"less"`` or ``"greater"`` (None for tests with one rejection region, as in scipy).
    null : str
        The null hypothesis, in words.
    method : str
        How the p-value is computed, with its references; how nuisance parameters (a variance, the margins of a
        table, the sizes of the samples) are handled.
    released : dict
        What the call released (noisy statistics, charged in one ledger entry): public, and all the p-value uses.
    ci : tuple (low, high) or None
        A confidence interval at ``confidence_level`` where scipy's result has one (a mean, a difference of means,
        a proportion), else None.
    confidence_level : float or None
        The level of ``ci``.
    n_resamples : int or None
        B, the number of simulated draws of the null; None for an exact p-value.
    """

    statistic: float
    pvalue: float
    test: str
    alternative: str | None
    null: str
    method: str
    released: Mapping[str, object] = field(default_factory=dict)
    ci: tuple[float, float] | None = None
    confidence_level: float | None = None
    n_resamples: int | None = None

    def __iter__(self):
        """``statistic, pvalue = result``, as with scipy's results."""
        return iter((self.statistic, self.pvalue))

    def __repr__(self) -> str:
        lines = [
            f"HypothesisResult(test={self.test!r}, statistic={self.statistic:.6g}, pvalue={self.pvalue:.6g},",
            f"                 null={self.null!r},",
        ]
        if self.alternative is not None:
            lines.append(f"                 alternative={self.alternative!r},")
        if self.ci is not None:
            lines.append(
                f"                 ci=({self.ci[0]:.6g}, {self.ci[1]:.6g}) at level {self.confidence_level:g},"
            )
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.released.items())
        lines.append(f"                 released: {shown},")
        draws = "exact" if self.n_resamples is None else f"Monte Carlo, {self.n_resamples} draws"
        lines.append(f"                 p-value: {draws}; method={self.method!r})")
        return "\n".join(lines)


def _short(value) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if library(value) is not None:  # a pandas or polars result (dpstats._engine.kinds asks)
        value = value.to_numpy()
    return np.array2string(np.asarray(value, dtype=np.float64), precision=5, threshold=8, separator=", ")


# ----------------------------------------------------------------------------- reading the data


def read_sample(x, name: str, *, minimum: int = 1) -> np.ndarray:
    """One sample of numbers (an array, a list, a pandas or polars Series) as a 1-D float64 array, with at least
    ``minimum`` records (a :class:`~dpstats.exceptions.DataValidationError` naming ``name`` otherwise); its values
    are checked by the statistic's own pass (finite, inside the bounds)."""
    values, table = from_table(x, name)
    if table is not None and table.columns is not None:
        raise DataValidationError(
            f"{name} must be one sample (a 1-D array or a Series); got a DataFrame: pass one of its columns"
        )
    values = as_array(values, name, ndim=(1,), min_rows=0)
    if values.shape[0] < minimum:
        what = "a sample of size 0" if values.shape[0] == 0 else f"a sample of size {values.shape[0]}"
        raise DataValidationError(f"{name} must hold at least {minimum} record(s); got {what}")
    return np.asarray(values, dtype=np.float64)


def read_samples(samples, name: str = "samples", *, minimum: int = 1) -> list[np.ndarray]:
    """A sequence of at least two samples (:func:`read_sample` each, named ``samples[j]``)."""
    if isinstance(samples, (str, bytes, Mapping)) or not isinstance(samples, Sequence):
        raise DataValidationError(f"{name} must be {SAMPLES_WHAT}; got {type(samples).__name__}")
    if len(samples) < 2:
        raise DataValidationError(f"{name} must hold at least two samples to compare; got {len(samples)}")
    return [read_sample(s, f"{name}[{j}]", minimum=minimum) for j, s in enumerate(samples)]


def check_total(samples: list[np.ndarray], per_sample: int = 1) -> int:
    """n, the records of all the samples together (public: neighbours move a record between samples, so a sample's
    own size is private and may be 0). The simulated null gives each of the k samples at least ``per_sample``
    records (:func:`plug_in_sizes`), so n must be at least max(2, k·per_sample): else a DataValidationError, from
    public n and k, before any charge."""
    n, k = sum(int(s.size) for s in samples), len(samples)
    need = max(2, k * per_sample)
    if n < need:
        raise DataValidationError(
            f"the samples must hold at least {need} records in all for {k} samples (n and k are public, the sizes "
            f"of the samples are not); got n = {n}"
        )
    return n


def samples_constraint() -> Checked:
    """The declared constraint of a ``samples`` parameter (checked where it is read)."""
    return Checked(SAMPLES_WHAT)


def one_record_per_unit(x, privacy_unit, max_rows, name: str):
    """``(x, units)``: the privacy units of a one-sample test (None without one), taken out of ``x``; with a unit,
    ``max_rows`` must be 1 (one record per unit, chosen at random by :func:`keep_one_per_unit`: the records of the
    test are then the N units' (N public), independent when the units are)."""
    x, units = take_units(x, privacy_unit, max_rows, name)
    if units is None:
        return x, None
    check_one_record(units.max_rows)
    return x, units


def check_one_record(max_rows) -> None:
    """``max_rows`` of a test with a privacy unit: 1, else a ParameterError naming it (:func:`one_record_per_unit`;
    a preview checks the public ``max_rows`` with it)."""
    if max_rows != 1:
        raise ParameterError(
            f"a test with privacy_unit needs max_rows=1 (one record per unit, chosen at random): the records of one "
            f"unit are not independent, and the null distributions here are for independent records; got "
            f"max_rows={max_rows}"
        )


def keep_one_per_unit(arrays: tuple, units, rng):
    """The rows of ``arrays`` kept for ``units`` (one per unit), the number of units N and the ledger's unit note."""
    kept = bound_rows(arrays, units.aligned(arrays[0].shape[0]), rng)
    return kept.arrays, kept.units, unit_note(kept.units)


def unit_note(units: int) -> str:
    """The ledger note's part on the privacy unit of a test: N units (public), one record kept of each."""
    return f"privacy unit: {units} units (public), 1 record each; "


# ----------------------------------------------------------------------------- the charge


def charged(test: str, plans: list, *, rng, accountant, note: str, relation: str) -> list:
    """Charge the planned statistics of one test as one ledger entry (before any noise is drawn), then add their
    noise (:func:`dpstats._release.release`)."""
    return release(test, plans, rng=rng, accountant=accountant, note=note, relation=relation)


def noise_of(planned) -> NoiseModel:
    """The exact noise of every coordinate of a one-part plan."""
    (noise,) = planned.noises
    return NoiseModel.of(noise)


def plug_in_sizes(noisy, n: int, minimum: int = 1) -> np.ndarray:
    """The sizes of the samples in a simulated null, from their noisy release: clipped to [1, n], scaled to sum to
    n, rounded by largest remainders, then each raised to at least ``minimum`` (a record taken from the largest)."""
    c = np.clip(np.asarray(noisy, dtype=np.float64), 1.0, float(n))
    scaled = c * n / c.sum()
    sizes = np.floor(scaled).astype(np.int64)
    order = np.argsort(-(scaled - sizes), kind="stable")
    sizes[order[: n - int(sizes.sum())]] += 1
    while (sizes < minimum).any() and sizes.max() > minimum:
        sizes[np.argmin(sizes)] += 1
        sizes[np.argmax(sizes)] -= 1
    return np.maximum(sizes, minimum)


def balanced_sizes(noisy, n: int, noise: NoiseModel, reach: float = 3.0, minimum: int = 1) -> np.ndarray:
    """Reference sizes for a rank test's null: among the sizes within ``reach`` standard deviations of their noise
    of the released ones, those closest to equal (n/k each), then :func:`plug_in_sizes`. The rank sums' spread grows
    as the sizes approach balance (Var W_j = n_j(n − n_j)(n + 1)/12), so where the released sizes are too noisy to
    tell, the reference errs toward the larger spread (a conservative p-value), and where they are precise it is
    the plug-in."""
    noisy = np.asarray(noisy, dtype=np.float64)
    spread = reach * math.sqrt(noise.variance())
    target = np.clip(np.full(noisy.shape, n / noisy.size), noisy - spread, noisy + spread)
    return plug_in_sizes(target, n, minimum)
