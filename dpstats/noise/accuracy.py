"""Planning from accuracy: the ε a release needs for a target error, and the error an ε buys — before any data.

Every release declares a preview (:func:`dpstats.preview`): from its public arguments only (bounds, the number of
rows n, or of units and ``max_rows``, d, k, its options) it states the noise the call will add and its 95 % error in
the units of the value released — for an exponential mechanism, the utility gap that holds with probability 0.95 —
with the calibration the release itself uses. Both directions are computed from it:

* :func:`error_for_epsilon` — the noise scale and the 95 % error that (ε, δ) buys;
* :func:`epsilon_for_error` — the smallest ε (at the given δ) whose 95 % error is at most a target (the error
  decreases with ε; the search is a bisection on log ε, to a relative 1e-9).

δ stays as given (None: the release's default; choose it from n, e.g. well below 1/n: it is not traded for
accuracy here). A call that states several errors (a grouped mean's selection, sum and count; AdaSSP's eigenvalue
and Gram matrix; Amin et al.'s eigenvalues and eigenvectors) plans one of them, chosen by ``statement=`` (its
position, or a word of its units).

>>> import dpstats as dps
>>> from dpstats.noise.accuracy import epsilon_for_error
>>> plan = epsilon_for_error(dps.mean, 1.0, bounds=(0, 100), n=1000)  # within a year of the mean age, 19 in 20
>>> round(plan.epsilon, 3), plan.half_width <= 1.0
(0.3, True)

**The old spelling** (``mechanism="mean"``, ``"variance"``, ``"histogram"``, ``"pca_ag"`` or ``"custom"``, planned
by hand for four mechanisms, any ``confidence``) still works for this release, with a :class:`DeprecationWarning`;
pass the release itself (``dps.mean``), or for a statistic of your own calibrate its noise with
:func:`dpstats.noise.release.make_noise` and read ``make_noise(...).statement(units)``. This module sits below the
releases (:mod:`dpstats.noise`), so it reaches a release only through the object it is given.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import check_bounds, check_choice, check_delta, check_epsilon, check_int
from ..accounting.ledger import NoiseStatement
from ..exceptions import ParameterError
from .release import make_noise

__all__ = ["Accuracy", "epsilon_for_error", "error_for_epsilon"]

#: The names of the old spelling (deprecated): four mechanisms planned by hand, and "custom".
_NAMES = ("mean", "variance", "histogram", "pca_ag", "custom")


@dataclass(frozen=True)
class Accuracy:
    """A planned release: its (ε, δ) and what its noise means in the units of the release.

    Attributes
    ----------
    mechanism : str
        The release (as its ledger entry will name it).
    epsilon, delta : float
        What to pass to the release.
    noise : NoiseStatement
        The statement planned: the noise's distribution and scale, and ``noise.half_width``: each coordinate of the
        release is within ± that of the exact statistic with probability ``noise.confidence`` (for an exponential
        mechanism, the utility gap: see :class:`dpstats._release.Preview`).
    preview : Preview or None
        The whole preview of the planned call (every statement, its events and note; None for the old spelling).
    """

    mechanism: str
    epsilon: float
    delta: float
    noise: NoiseStatement
    preview: object = None

    @property
    def half_width(self) -> float:
        """The error's half-width at the planned confidence, in ``noise.units``."""
        return self.noise.half_width


def error_for_epsilon(release, epsilon: float, delta: float | None = None, *, statement=None, **public) -> Accuracy:
    """The noise, and the half-width of the 95 % interval of the error, that (ε, δ) buys.

    Parameters
    ----------
    release : a dpstats release
        ``dps.mean``, ``dps.quantile``, ``dps.pca_ppm``, ... (every declared release has a preview).
    epsilon : float
        ε > 0.
    delta : float, optional
        δ as the call would take it (None: the release's default).
    statement : int or str, optional
        Which of the call's statements to plan when it states several: its position, or a word of its units
        (``"rows"``, ``"eigenvalue"``).
    **public
        The call's public arguments, as :func:`dpstats.preview` takes them: ``bounds=`` and ``n=`` (or ``units=`` and
        ``max_rows=``) for a mean, ``d=`` and ``k=`` for a PCA, ...

    Returns
    -------
    Accuracy

    Examples
    --------
    >>> import dpstats as dps
    >>> from dpstats.noise.accuracy import error_for_epsilon
    >>> plan = error_for_epsilon(dps.mean, 0.5, bounds=(0, 100), n=1000)
    >>> round(plan.half_width, 2)  # the mean of ages in [0, 100] over 1000 people, at epsilon = 0.5
    0.6
    """
    planned = _planned(release, delta, statement, public)
    return planned.at(check_epsilon(epsilon))


def epsilon_for_error(release, error: float, delta: float | None = None, *, statement=None, **public) -> Accuracy:
    """The smallest ε (at the given δ) whose release is within ± ``error`` of the exact statistic with probability
    0.95, in each coordinate (for an exponential mechanism: whose utility gap is at most ``error``). Parameters as
    in :func:`error_for_epsilon`, with ``error`` > 0 in the units of the statement planned instead of ε
    (``epsilon_for_error(dps.mean, 1.0, bounds=(0, 100), units=400, max_rows=5)``).

    Returns
    -------
    Accuracy
        The ε to pass to the release (``accuracy.epsilon``, and ``accuracy.delta``), and the error it buys (at most
        ``error``).

    Examples
    --------
    >>> import dpstats as dps
    >>> from dpstats.noise.accuracy import epsilon_for_error
    >>> plan = epsilon_for_error(dps.quantile, 20, q=0.5, bounds=(0, 100), n=1000)  # the median within 20 ranks
    >>> plan.half_width <= 20
    True
    """
    planned = _planned(release, delta, statement, public)
    error = _positive(error, "error")

    def reaches(epsilon: float) -> bool:  # a call refused at this ε (too small or too large for it) does not
        found = planned.at(epsilon, refused=True)
        return found is not None and found.half_width <= error

    hi = 1.0
    while not reaches(hi):
        hi *= 16.0
        if hi > 1e12:
            why = f" (the call is refused there: {planned.refusal})" if planned.refusal else ""
            raise ParameterError(
                f"error={error:g} cannot be reached at any epsilon{why}; ask for a larger error (it is below the "
                "resolution of the release's public grid, or beyond what the release can take)"
            )
    lo = hi / 16.0
    while reaches(lo):
        lo, hi = lo / 16.0, lo
        if lo < 1e-12:
            break
    while hi / lo > 1.0 + 1e-9:
        mid = math.sqrt(lo * hi)
        if reaches(mid):
            hi = mid
        else:
            lo = mid
    return planned.at(hi)


def _planned(release, delta, statement, public):
    """The release to plan: a declared release's preview, or (deprecated) a mechanism by name."""
    declaration = getattr(release, "declaration", None)
    if declaration is None:
        if isinstance(release, str) and release in _NAMES:
            warnings.warn(
                f"error_for_epsilon/epsilon_for_error({release!r}, ...) is deprecated and will be removed in the next "
                "release: pass the release itself (dps.mean, dps.histogram, dps.pca_ag, ... with the public arguments "
                "of dps.preview)"
                + (
                    "; for a statistic of your own, dpstats.noise.release.make_noise(...).statement(units)"
                    if release == "custom"
                    else ""
                ),
                DeprecationWarning,
                stacklevel=3,
            )
            return _ByName.of(release, delta, **public)
        raise ParameterError(f"release must be a dpstats release such as dps.mean; got {release!r}")
    if "confidence" in public:
        confidence = public.pop("confidence")
        if confidence != 0.95:
            raise ParameterError(
                f"a release's preview states 95 % intervals, as its ledger; got confidence={confidence!r}"
            )
    return _Previewed(declaration, delta, statement, public)


@dataclass
class _Previewed:
    """A declared release planned through its preview (:meth:`dpstats._registry.Declaration.previewed`: ε, δ and
    the public arguments checked as the release checks them), at any ε."""

    declaration: object
    delta: float | None
    statement: object
    public: dict
    refusal: str = ""

    def at(self, epsilon: float, *, refused: bool = False) -> Accuracy | None:
        """The plan at ε; with ``refused``, None where the call itself would be refused at that ε (a search
        probing far values), else the refusal raised."""
        try:
            preview = self.declaration.previewed(epsilon, self.delta, **self.public)
        except ParameterError as err:
            if not refused or "epsilon" not in str(err):
                raise
            self.refusal = str(err)
            return None
        stated = self._chosen(preview)
        return Accuracy(preview.release, epsilon, preview.delta, stated, preview)

    def _chosen(self, preview) -> NoiseStatement:
        statements = preview.statements
        if not statements:
            raise ParameterError(
                f"{self.declaration.name}: this call states no error to plan ({preview.note or 'no noise'})"
            )
        choices = ", ".join(f"{i}: {s.units}" for i, s in enumerate(statements))
        if self.statement is None:
            if len(statements) == 1:
                return statements[0]
            raise ParameterError(
                f"{self.declaration.name}: this call states {len(statements)} errors; choose one with statement= "
                f"(a position, or a word of its units): {choices}"
            )
        if isinstance(self.statement, str):
            found = [s for s in statements if self.statement in s.units]
            if len(found) == 1:
                return found[0]
        elif isinstance(self.statement, (int, np.integer)) and not isinstance(self.statement, bool):
            if -len(statements) <= self.statement < len(statements):
                return statements[self.statement]
        raise ParameterError(
            f"statement must be the position of one of the call's statements, or a word of its units that names one; "
            f"got {self.statement!r}; the statements are {choices}"
        )


# ----------------------------------------------------------------------------- the old spelling (deprecated)

#: pca_ag's sensitivity is √2 times the largest squared row norm its check lets through, (1 + 1e-10)(1 + 2(d+1)u)
#: (dpstats._kernels.gram.norm_bound_squared): below 1 + 2^-30 for d < 10^6, so √2 (1 + 2^-30) is never less.
_PCA_NORM_BOUND = 1.0 + 2.0**-30


@dataclass(frozen=True)
class _ByName:
    """The old spelling's plan of a mechanism by name: its δ, sensitivity, moved coordinates, units, confidence."""

    mechanism: str
    delta: float
    sensitivity: float
    coordinates: int
    units: str
    confidence: float

    @classmethod
    def of(
        cls,
        mechanism,
        delta=None,
        *,
        bounds=None,
        n=None,
        d=None,
        sensitivity=None,
        coordinates=1,
        units="units of the release",
        confidence=0.95,
    ) -> _ByName:
        check_choice(mechanism, "mechanism", _NAMES)
        delta, confidence = check_delta(0.0 if delta is None else delta), _check_confidence(confidence)
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
            return cls(mechanism, delta, _positive(sensitivity, "sensitivity"), coordinates, str(units), confidence)
        if mechanism == "histogram":
            return cls(mechanism, delta, 2.0 if delta == 0 else math.sqrt(2.0), 2, "counts", confidence)
        if mechanism == "pca_ag":
            if delta == 0:
                raise ParameterError("pca_ag needs delta > 0 (Gaussian noise)")
            d = check_int(d, "d")
            sens = math.sqrt(2.0) * _PCA_NORM_BOUND
            return cls(mechanism, delta, sens, d * (d + 1) // 2, "Gram units (entries of XᵀX)", confidence)
        n = check_int(n, "n", low=2 if mechanism == "variance" else 1)
        lower, upper = check_bounds(bounds)
        width = np.ravel(upper - lower)
        if mechanism == "mean":
            per, unit_name = width / n, "data units"
        else:
            per, unit_name = (n - 1) * width**2 / n**2, "squared data units"
        total = float(per.sum()) if delta == 0 else float(np.sqrt((per**2).sum()))
        return cls(mechanism, delta, total, per.size, unit_name, confidence)

    def at(self, epsilon: float, *, refused: bool = False) -> Accuracy:
        noise = make_noise(epsilon=epsilon, delta=self.delta, sensitivity=self.sensitivity, changed=self.coordinates)
        return Accuracy(self.mechanism, epsilon, self.delta, noise.statement(self.units, confidence=self.confidence))


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


def __getattr__(name: str):
    if name == "MECHANISMS":
        warnings.warn(
            "dpstats.noise.accuracy.MECHANISMS is deprecated (the mechanisms planned by hand): every release plans "
            "through its preview; it will be removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return _NAMES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
