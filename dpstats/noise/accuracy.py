"""Planning from accuracy: the ε a release needs for a target error, and the error an ε buys — before any data.

A release with additive noise is within ±h of its exact statistic, in each coordinate, with probability
``confidence`` (:mod:`dpstats.noise.intervals`). h depends only on public quantities: the mechanism's
sensitivity (from its bounds and the public number of rows n), ε, δ, and the exact noise dpstats adds
(:func:`~dpstats.noise.release.make_noise`, the calibration every mechanism uses). So both directions are
computed before any data is touched:

* :func:`error_for_epsilon` — the noise scale and h that (ε, δ) buys;
* :func:`epsilon_for_error` — the smallest ε (at the given δ) whose h is at most a target error (h decreases
  with ε; the search is a bisection on log ε, to a relative 1e-9).

With ``delta=0`` the noise is (discrete) Laplace; with ``delta > 0`` (discrete) Gaussian, and δ stays as given
(choose it from n, e.g. well below 1/n; it is not traded for accuracy here).

**Any release with a preview.** ``mechanism`` may be the release itself (``dps.mean``, ``dps.histogram``, ...):
then the plan is its declared preview (:func:`dpstats.preview`: the release's own sensitivity and calibration, row
or unit level), given the same public arguments as ``dps.preview`` (``bounds``, ``n``, ``units``, ``max_rows``,
``bins``, ``d``), at the 95 % the ledger states. The names below are the four mechanisms this module knew before
the releases declared their previews; they stay for existing code.

Mechanisms by name (replace one row, n public; the sensitivities derived in their docstrings):

========== ============================================== ============================== ==========================
mechanism   sensitivity per coordinate                     coordinates                    units of the error
========== ============================================== ============================== ==========================
"mean"      (hi − lo)/n                                    one per pair of bounds         data units
"variance"  (n − 1)(hi − lo)²/n²                           one per pair of bounds         squared data units
"histogram" L1 2, L2 √2 (a row moves between two bins)     2 (of any number of bins)      counts
"pca_ag"    L2 √2 · the row-norm bound (rows in the unit   d(d + 1)/2 entries of XᵀX      Gram units (entries of
            ball)                                                                         XᵀX)
========== ============================================== ============================== ==========================

A vector release (bounds as arrays) gets one noise calibrated to the L1 (δ = 0) or L2 (δ > 0) norm of the
per-coordinate sensitivities, as the mechanisms do; the interval is per coordinate. Any other release with
additive noise is planned from its ``sensitivity`` (L1 for δ = 0, L2 for δ > 0) and ``coordinates``.

The mechanisms round the bounds to a fixed-point grid (2^-36 of their magnitude for sums, 2^-26 for squares),
which can move the noise's integer sensitivity on its grid by one in about 4096: the error planned here is the
mechanism's to a relative 2^-12, usually exactly (each release's ledger entry states the exact one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import check_bounds, check_choice, check_delta, check_epsilon, check_int
from ..accounting.ledger import NoiseStatement
from ..exceptions import ParameterError
from .release import make_noise

__all__ = ["MECHANISMS", "Accuracy", "epsilon_for_error", "error_for_epsilon"]

MECHANISMS = ("mean", "variance", "histogram", "pca_ag", "custom")

#: pca_ag's sensitivity is √2 times the largest squared row norm its check lets through, (1 + 1e-10)(1 + 2(d+1)u)
#: (dpstats._kernels.gram.norm_bound_squared): below 1 + 2^-30 for d < 10^6, so √2 (1 + 2^-30) is never less.
_PCA_NORM_BOUND = 1.0 + 2.0**-30


@dataclass(frozen=True)
class Accuracy:
    """A planned release: its (ε, δ) and what its noise means in the units of the release.

    Attributes
    ----------
    mechanism : str
    epsilon, delta : float
    noise : NoiseStatement
        The noise's distribution and scale, and ``noise.half_width``: each coordinate of the release is within
        ± that of the exact statistic with probability ``noise.confidence``.
    """

    mechanism: str
    epsilon: float
    delta: float
    noise: NoiseStatement

    @property
    def half_width(self) -> float:
        """The error's half-width at the planned confidence, in ``noise.units``."""
        return self.noise.half_width


def error_for_epsilon(
    mechanism: str,
    epsilon: float,
    delta: float = 0.0,
    *,
    bounds=None,
    n: int | None = None,
    d: int | None = None,
    sensitivity: float | None = None,
    coordinates: int = 1,
    units: str = "units of the release",
    confidence: float = 0.95,
    **public,
) -> Accuracy:
    """The noise, and the half-width of a ``confidence`` interval of the error, that (ε, δ) buys.

    Parameters
    ----------
    mechanism : a dpstats release, or {"mean", "variance", "histogram", "pca_ag", "custom"}
        The release (``dps.mean``: its declared preview), or a name (see the module docstring); "custom" takes
        ``sensitivity`` and ``coordinates``.
    epsilon : float
        ε > 0.
    delta : float, default 0
        δ = 0: Laplace noise; δ > 0: Gaussian (pca_ag needs δ > 0).
    bounds : tuple (lower, upper)
        "mean" and "variance": the public bounds the mechanism will be given (scalars, or arrays for a
        vector release).
    n : int
        "mean" and "variance": the public number of rows.
    d : int
        "pca_ag": the number of columns.
    sensitivity : float
        "custom": the L1 (δ = 0) or L2 (δ > 0) sensitivity, in the release's units.
    coordinates : int, default 1
        "custom": how many coordinates a neighbour can move.
    units : str
        "custom": the release's units, for the statement.
    confidence : float, default 0.95
        Probability that a coordinate's error is within the half-width, in (0, 1) (0.95 for a release).
    **public
        For a release: its further public arguments (``max_rows``, ``bins``), as ``dps.preview``; ``units`` is then
        its public number of privacy units.

    Returns
    -------
    Accuracy

    Examples
    --------
    >>> from dpstats.noise.accuracy import error_for_epsilon
    >>> plan = error_for_epsilon("mean", 0.5, bounds=(0, 100), n=1000)
    >>> round(plan.half_width, 2)  # the mean of ages in [0, 100] over 1000 people, at epsilon = 0.5
    0.6
    """
    release = _planned(mechanism, delta, bounds, n, d, sensitivity, coordinates, units, confidence, public)
    return release.at(check_epsilon(epsilon), _check_confidence(confidence))


def epsilon_for_error(
    mechanism: str,
    error: float,
    delta: float = 0.0,
    *,
    bounds=None,
    n: int | None = None,
    d: int | None = None,
    sensitivity: float | None = None,
    coordinates: int = 1,
    units: str = "units of the release",
    confidence: float = 0.95,
    **public,
) -> Accuracy:
    """The smallest ε (at the given δ) whose release is within ± ``error`` of the exact statistic with probability
    ``confidence``, in each coordinate. Parameters as in :func:`error_for_epsilon`, with ``error`` > 0 in the
    release's units (data units for a mean) instead of ε; ``mechanism`` may be the release itself
    (``epsilon_for_error(dps.mean, 1.0, bounds=(0, 100), units=400, max_rows=5)``).

    Returns
    -------
    Accuracy
        The ε to pass to the mechanism (``accuracy.epsilon``, and ``accuracy.delta``), and the error it buys
        (at most ``error``).

    Examples
    --------
    >>> from dpstats.noise.accuracy import epsilon_for_error
    >>> plan = epsilon_for_error("mean", 1.0, bounds=(0, 100), n=1000)  # within a year of the mean age, 19 in 20
    >>> round(plan.epsilon, 3), plan.half_width <= 1.0
    (0.3, True)
    """
    release = _planned(mechanism, delta, bounds, n, d, sensitivity, coordinates, units, confidence, public)
    error, confidence = _positive(error, "error"), _check_confidence(confidence)
    lo, hi = 1.0, 1.0  # lo buys more error than asked, hi at most the error asked
    while release.at(hi, confidence).half_width > error:
        lo, hi = hi, hi * 16.0
        if hi > 1e12:
            raise ParameterError(
                f"error={error:g} cannot be reached at any epsilon: it is below the resolution of the release's "
                "public grid; ask for a larger error"
            )
    while release.at(lo, confidence).half_width <= error:
        lo, hi = lo / 16.0, lo
        if lo < 1e-12:
            break
    while hi / lo > 1.0 + 1e-9:
        mid = math.sqrt(lo * hi)
        if release.at(mid, confidence).half_width <= error:
            hi = mid
        else:
            lo = mid
    return release.at(hi, confidence)


def _planned(mechanism, delta, bounds, n, d, sensitivity, coordinates, units, confidence, public):
    """The release to plan: a declared release's preview, or a mechanism by name."""
    declaration = getattr(mechanism, "declaration", None)
    if declaration is None:
        if public:
            raise ParameterError(f"{sorted(public)} apply to a release given itself (dps.mean, ...), not by name")
        return _Release.of(mechanism, delta, bounds, n, d, sensitivity, coordinates, units)
    if _check_confidence(confidence) != 0.95:
        raise ParameterError(f"a release's preview states 95 % intervals, as its ledger; got confidence={confidence!r}")
    if sensitivity is not None:
        raise ParameterError("sensitivity applies to mechanism='custom'; a release knows its own")
    given = {k: v for k, v in {"bounds": bounds, "n": n, "d": d}.items() if v is not None}
    if units != "units of the release":  # for a release, units= is its public number of privacy units
        given["units"] = units
    return _Previewed(mechanism, delta, {**given, **public})


@dataclass(frozen=True)
class _Previewed:
    """A declared release planned through its preview (dps.preview), at any ε."""

    release: object
    delta: float
    public: dict

    def at(self, epsilon: float, confidence: float) -> Accuracy:
        preview = self.release.declaration.preview  # the declared function (dps.preview checks eps/delta first)
        planned = getattr(self.release, "__name__", "release")
        from .._validation import check_delta

        result = preview(epsilon, check_delta(self.delta), **self.public)
        if len(result.statements) != 1:
            raise ParameterError(f"{planned}: this call adds no single noise to plan ({result.note or 'no noise'})")
        return Accuracy(result.release, epsilon, self.delta, result.statements[0])  # the ε and δ to pass


@dataclass(frozen=True)
class _Release:
    """A release's public description: its mechanism, δ, sensitivity, moved coordinates and units."""

    mechanism: str
    delta: float
    sensitivity: float
    coordinates: int
    units: str

    @classmethod
    def of(cls, mechanism, delta, bounds, n, d, sensitivity, coordinates, units) -> _Release:
        check_choice(mechanism, "mechanism", MECHANISMS)
        delta = check_delta(delta)
        given = {"bounds": bounds, "n": n, "d": d, "sensitivity": sensitivity}
        needed = {"mean": {"bounds", "n"}, "variance": {"bounds", "n"}, "histogram": set(), "pca_ag": {"d"}}
        needed = needed.get(mechanism, {"sensitivity"})
        missing = sorted(k for k in needed if given[k] is None)
        extra = sorted(k for k, v in given.items() if v is not None and k not in needed)
        if missing or extra:
            raise ParameterError(
                f"mechanism={mechanism!r} takes {sorted(needed) or 'no further parameters'}"
                + (f"; missing {missing}" if missing else "")
                + (f"; {extra} do not apply" if extra else "")
            )
        if mechanism == "custom":
            coordinates = check_int(coordinates, "coordinates")
            return cls(mechanism, delta, _positive(sensitivity, "sensitivity"), coordinates, str(units))
        if mechanism == "histogram":
            return cls(mechanism, delta, 2.0 if delta == 0 else math.sqrt(2.0), 2, "counts")
        if mechanism == "pca_ag":
            if delta == 0:
                raise ParameterError("pca_ag needs delta > 0 (Gaussian noise)")
            d = check_int(d, "d")
            return cls(
                mechanism, delta, math.sqrt(2.0) * _PCA_NORM_BOUND, d * (d + 1) // 2, "Gram units (entries of XᵀX)"
            )
        n = check_int(n, "n", low=2 if mechanism == "variance" else 1)
        lower, upper = check_bounds(bounds)
        width = np.ravel(upper - lower)
        if mechanism == "mean":
            per, unit_name = width / n, "data units"
        else:
            per, unit_name = (n - 1) * width**2 / n**2, "squared data units"
        total = float(per.sum()) if delta == 0 else float(np.sqrt((per**2).sum()))
        return cls(mechanism, delta, total, per.size, unit_name)

    def at(self, epsilon: float, confidence: float) -> Accuracy:
        noise = make_noise(epsilon=epsilon, delta=self.delta, sensitivity=self.sensitivity, changed=self.coordinates)
        return Accuracy(self.mechanism, epsilon, self.delta, noise.statement(self.units, confidence=confidence))


def _positive(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ParameterError(f"{name} must be a finite number > 0; got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ParameterError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def _check_confidence(confidence) -> float:
    valid = isinstance(confidence, (int, float, np.floating)) and not isinstance(confidence, bool)
    if not valid or not 0 < confidence < 1:
        raise ParameterError(f"confidence must be a number in (0, 1); got {confidence!r}")
    return float(confidence)
