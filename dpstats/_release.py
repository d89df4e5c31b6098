"""The one release path every mechanism takes after validating and bounding: calibrate, charge, add the noise.

:func:`calibrate` is the one place noise is calibrated (a :class:`~dpstats.noise.release.Noise`: exact integer noise
on a public grid, its privacy event, its statement in the release's units); :func:`charge` is the one place a
release is charged — its privacy events, its neighbouring relation, its ledger note (the privacy unit's part, what
was released, the random source) and each noise's statement with the release's 95 % error — before any noise is
drawn; every charge is an event of :mod:`dpstats._trace`, which the sensitivity checker reads. The mechanisms of
every family call these two (``tests/test_registry.py`` keeps it so: no family imports ``make_noise`` or the
accountant's ``charge``); the descriptive statistics use the planning layer below.

Planning (the descriptive statistics):

A call may release several statistics at once (a unit-level mean releases a sum and a count). Each is *planned*
(:func:`plan`: its noise calibrated from its per-coordinate sensitivities, exact Fractions), then all are charged
together as one ledger entry, before any noise is drawn (:func:`release`), then the noise is added.

Without ``weights`` the coordinates of a statistic are one release with the vector's L1 (δ = 0) or L2 sensitivity
(warning when one coordinate dominates it, :class:`~dpstats.exceptions.MixedScalesWarning`). With ``weights`` each
coordinate is a release of its own with ε_j = ε·w_j/Σw (and δ_j likewise): by basic composition the whole is
(ε, δ)-DP.

What the ledger states
----------------------
Each entry states the noise and the 95 % error *of the value the call returns*, in its units. A release that returns
its planned statistic as it is (a row-level mean, a sum, a histogram) states each plan's noise. A unit-level mean
or variance returns a ratio of its planned sums (:func:`unit_ratio_statements`): x̄ + S̃/C′ with C′ = max(C̃, N),
and Q̃/C′ − (S̃/C′)². Its error is bounded from public values only — N units, each kept record within the bounds,
so |S| ≤ C·w/2 and Q ≤ C·w²/4 for the width w = hi − lo — and the noise of each sum:

* mean: |error| ≤ |Z_S|/N + (w/2)·|Z_C|/N, since C′ ≥ N and |C − C′| ≤ |Z_C|;
* variance: |error| ≤ |Z_Q|/N + (w²/4)·|Z_C|/N + e·(w + e), e the mean's bound for S̃/C′;

each |Z| at its (1 − 0.05/k) quantile, k the number of noises (a union bound), so the stated interval holds with
probability at least 95 %. The stated scale is the leading noise's, divided by N.

Previews
--------
:func:`preview` (``dps.preview(dps.mean, 0.5, bounds=(0, 100), n=1000)``) gives, before any data, what a planned
call will add and how far its result will be from the exact statistic: the release's declared ``preview``
(:func:`dpstats._registry.declare`; every release has one) plans its noise from the public arguments with the
calibration the release itself uses (:func:`plan`, :func:`calibrate`) and states it as the ledger will
(:func:`planned_preview`); an exponential mechanism's preview states what public values bound instead (its
utility gap at probability 0.95, :class:`Preview`). A :class:`Preview` holds the
statements and the privacy events, so that :meth:`dpstats.Accountant.preview` can compose a whole plan against a
budget without spending anything. The mechanisms round their statistic to a fixed-point grid that depends on the
data's bounds; the preview plans without it, so its error is the release's to a relative 2^-12.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ._engine.tables import check_weights
from ._rounding import l1_up, l2_up
from ._validation import check_epsilon, warn_caller
from .accounting import charge as record
from .accounting import split_weighted
from .exceptions import MixedScalesWarning, ParameterError
from .noise.random import describe_source
from .noise.release import Noise, Statistic, make_noise

__all__ = [
    "DOMINANCE",
    "Planned",
    "Preview",
    "calibrate",
    "charge",
    "charge_plans",
    "plan",
    "planned_preview",
    "preview",
    "previewed",
    "release",
    "split_budget",
    "unit_ratio_statements",
]

#: A vector release warns when one coordinate's sensitivity is at least this many times another's.
DOMINANCE = 10.0


@dataclass(frozen=True)
class Planned:
    """One statistic's calibrated noise: one :class:`~dpstats.noise.release.Noise` per part (the whole vector, or
    each coordinate with ``weights``), the parts of the statistic, and the statistic's shape."""

    noises: tuple[Noise, ...]
    parts: tuple[Statistic, ...]
    shape: tuple[int, ...]
    note: str = ""
    units: str = "data units"

    def statements(self) -> list:
        """The noise of every part and its 95 % error, in the statistic's units, for the ledger."""
        return [n.statement(self.units) for n in self.noises]

    def apply_rows(self, rows: np.ndarray, rng) -> np.ndarray:
        """The noise of a one-part plan added to the coordinates ``rows`` (of the first axis) of its statistic only,
        e.g. the keys a partition selection kept: every coordinate's noise is independent and calibrated for the
        whole, so the release of the part is the release of the whole restricted to it."""
        (noise,), (part,) = self.noises, self.parts
        values = np.asarray(part.values)[rows]
        return np.asarray(noise.apply(Statistic(values, part.unit), rng), dtype=np.float64)

    def apply(self, rng):
        """The noisy statistic: a float for a scalar, else an array of the statistic's shape."""
        if self.shape == () and len(self.noises) == 1:
            return float(self.noises[0].apply(self.parts[0], rng))
        noisy = [np.asarray(n.apply(p, rng), dtype=np.float64) for n, p in zip(self.noises, self.parts, strict=True)]
        values = noisy[0] if len(noisy) == 1 else np.asarray([float(v) for v in noisy])
        return float(values) if self.shape == () else np.asarray(values).reshape(self.shape)


def plan(
    statistic: Statistic,
    per_coordinate,
    epsilon: float,
    delta: float,
    *,
    noise: str,
    weights=None,
    table=None,
    changed: int | None = None,
    units: str = "data units",
) -> Planned:
    """Calibrate the noise of ``statistic`` from its per-coordinate sensitivities (see the module docstring).

    ``changed`` is how many coordinates a neighbour can move (default: one per sensitivity given), for the
    rounding to the noise grid; ``units`` names the statistic's units in the ledger ("data units", "counts", ...).
    """
    if isinstance(per_coordinate, Fraction) and weights is None:  # one coordinate, exact: no arrays
        try:
            sensitivity = _sensitivity_up(per_coordinate.numerator, per_coordinate.denominator, delta == 0)
        except OverflowError as err:
            raise ParameterError("bounds are too wide: the sensitivity overflows a float; rescale the data") from err
        calibrated = calibrate(
            epsilon=epsilon,
            delta=delta,
            sensitivity=sensitivity,
            changed=1 if changed is None else changed,
            unit=statistic.unit,
            noise=noise,
        )
        shape = () if type(statistic.values) is int else np.shape(statistic.values)
        return Planned((calibrated,), (statistic,), shape, units=units)
    shape = np.shape(statistic.values)
    per_coordinate = [Fraction(v) for v in np.asarray(per_coordinate, dtype=object).ravel()]
    try:
        sensitivity = l1_up(per_coordinate) if delta == 0 else l2_up(per_coordinate)
    except OverflowError as err:
        raise ParameterError("bounds are too wide: the sensitivity overflows a float; rescale the data") from err
    if weights is not None:
        weighted = check_weights(weights, shape, table)
        return _plan_weighted(statistic, per_coordinate, epsilon, delta, weighted, noise, units)
    _warn_if_dominated(np.array([float(v) for v in per_coordinate]), sensitivity, shape, table)
    calibrated = calibrate(
        epsilon=epsilon,
        delta=delta,
        sensitivity=sensitivity,
        changed=len(per_coordinate) if changed is None else changed,
        unit=statistic.unit,
        noise=noise,
    )
    return Planned((calibrated,), (statistic,), shape, units=units)


@functools.lru_cache(maxsize=1024)
def _sensitivity_up(numerator: int, denominator: int, l1: bool) -> float:
    """:func:`plan`'s L1 (or L2) sensitivity of one coordinate numerator/denominator, rounded up (cached, keyed by
    integers: a Fraction's hash computes a modular inverse)."""
    value = [Fraction(numerator, denominator)]
    return l1_up(value) if l1 else l2_up(value)


def _plan_weighted(
    statistic, per_coordinate: list, epsilon: float, delta: float, weights, noise: str, units: str
) -> Planned:
    """One release per coordinate, with its share of (ε, δ)."""
    shape = np.shape(statistic.values)
    weights = weights.reshape(-1)
    epsilons = split_weighted(epsilon, weights)
    deltas = split_weighted(delta, weights) if delta > 0 else [0.0] * weights.size
    for j, share in enumerate(epsilons):
        check_epsilon(share, f"epsilon share of coordinate {j} (epsilon * weight / sum of weights)")
    values = np.asarray(statistic.values, dtype=object).reshape(-1)
    grids = np.broadcast_to(np.asarray(statistic.unit, dtype=object), shape).reshape(-1)
    noises = tuple(
        calibrate(epsilon=e, delta=d, sensitivity=l1_up([s]), changed=1, unit=u, noise=noise)
        for e, d, s, u in zip(epsilons, deltas, per_coordinate, grids, strict=True)
    )
    parts = tuple(Statistic(v, u) for v, u in zip(values, grids, strict=True))
    note = f"{len(noises)} coordinates released separately, budget split by weights"
    return Planned(noises, parts, shape, note, units)


def release(
    mechanism: str,
    plans: list[Planned],
    *,
    rng,
    accountant,
    note: str = "",
    relation: str | None = None,
    reported=None,
) -> list:
    """Charge every planned statistic as one ledger entry (before any noise is drawn), then add the noise.
    ``relation``: the neighbouring relation the release protects, ``"row"`` or ``"unit"`` (as in
    :func:`~dpstats.accounting.charge`); ``reported``: the statements of what the call returns, when it is not
    the plans themselves (module docstring, "What the ledger states")."""
    charge_plans(mechanism, plans, rng=rng, accountant=accountant, note=note, relation=relation, reported=reported)
    return [p.apply(rng) for p in plans]


def charge_plans(
    mechanism: str,
    plans: list[Planned],
    *,
    rng,
    accountant,
    note: str = "",
    events=(),
    statements=(),
    relation: str | None = None,
    reported=None,
) -> None:
    """Charge every planned statistic, and the extra ``events`` of the same release (a partition selection, an
    exponential mechanism) with their noise ``statements``, as one ledger entry (``relation`` and ``reported`` as
    in :func:`release`)."""
    own = [statement for p in plans for statement in p.statements()] if reported is None else list(reported)
    charge(
        mechanism,
        [*events, *(n.event for p in plans for n in p.noises)],
        rng=rng,
        accountant=accountant,
        relation=relation,
        note="; ".join(n for n in [*(p.note for p in plans), note] if n),
        noise=[*statements, *own],
    )


def calibrate(**kwargs) -> Noise:
    """The noise of one statistic (:func:`dpstats.noise.release.make_noise`: the same keywords): every mechanism
    calibrates here, so a deliberately mis-declared variant (``tests``: its sensitivity halved) is one patch."""
    return make_noise(**kwargs)


def charge(
    mechanism: str,
    events,
    *,
    rng,
    accountant,
    rows=None,
    relation=None,
    note: str = "",
    noise=(),
    proven: bool = True,
) -> None:
    """Charge one release before any of its noise is drawn: its privacy ``events`` (each noise's ``event``, and any
    other random step's: an exponential mechanism, a sparse vector), on ``accountant`` (None: only traced).

    ``rows``: the rows the release read (:class:`dpstats._engine.Bounded`): its neighbouring relation and the
    ledger note's part on the privacy unit (public values: N and ``max_rows``) come from them; else ``relation``.
    ``note``: what was released, in words (public values only); the random source is added. ``noise``: the
    statements of its noises in the release's units (:meth:`~dpstats.noise.release.Noise.statement`)."""
    if rows is not None:
        relation = rows.relation
        note = f"{rows.note()}{note}"
    record(
        accountant,
        mechanism,
        events,
        relation=relation,
        note="; ".join(n for n in (note, describe_source(rng)) if n),
        proven=proven,
        noise=noise,
    )


def unit_ratio_statements(
    plans: list[Planned], units: int, widths, *, variance: bool = False, confidence: float = 0.95
) -> list:
    """The ledger statements of a unit-level mean (plans: the shifted sum S, then the record count C if it is
    noisy) or variance (plans: Q, S, then C), in the units of the value returned (module docstring, "What the
    ledger states"). ``units`` is N, ``widths`` the public hi − lo of each coordinate (data units)."""
    pieces = 3 if variance else 2
    noisy_count = len(plans) == pieces
    level = 1 - (1 - confidence) / (len(plans))  # each noise at its share of the failure probability
    count = plans[-1].noises[0].half_width(level) if noisy_count else 0.0
    widths = np.broadcast_to(np.asarray(widths, dtype=np.float64), plans[0].shape).reshape(-1)
    lead, shifted = plans[0], plans[1] if variance else plans[0]
    # one statement per noise of the leading plan: the whole vector, or each coordinate with weights
    groups = [widths] if len(lead.noises) == 1 else [widths[j : j + 1] for j in range(len(lead.noises))]
    out = []
    for j, (noise, w) in enumerate(zip(lead.noises, groups, strict=True)):
        w = float(w.max()) if w.size else 0.0
        shift = shifted.noises[min(j, len(shifted.noises) - 1)].half_width(level)
        error = (shift + w / 2 * count) / units
        if variance:
            error = (noise.half_width(level) + w * w / 4 * count) / units + error * (w + error)
        units_label = "squared data units" if variance else "data units"
        stated = noise.statement(units_label, factor=1 / units, confidence=confidence)
        out.append(dataclasses.replace(stated, half_width=error))
    return out


def split_budget(epsilon: float, delta: float, shares) -> list[tuple[float, float]]:
    """(ε_i, δ_i) in proportion to ``shares``, whose exact sums never exceed (ε, δ) (basic composition of the
    parts of one call); each ε_i is checked like an ε."""
    epsilons = split_weighted(epsilon, shares)
    deltas = split_weighted(delta, shares) if delta > 0 else [0.0] * len(epsilons)
    for share in epsilons:
        check_epsilon(share, "epsilon share of one part of the release")
    return list(zip(epsilons, deltas, strict=True))


def _warn_if_dominated(per_coordinate: np.ndarray, sensitivity: float, shape, table) -> None:
    """Warn (public values only) when the widest coordinate's sensitivity is >= DOMINANCE times the narrowest."""
    if per_coordinate.size < 2 or per_coordinate.max() < DOMINANCE * per_coordinate.min():
        return
    wide, narrow = int(per_coordinate.argmax()), int(per_coordinate.argmin())
    big, small = per_coordinate[wide], per_coordinate[narrow]
    names = table.columns if table is not None and table.columns is not None else None

    def name(j):
        if names is not None:
            return repr(names[j])
        return str(j if len(shape) == 1 else np.unravel_index(j, shape))

    warn_caller(
        f"column {name(wide)} has sensitivity {big:.4g}, {big / small:.3g} times that of column {name(narrow)} "
        f"({small:.4g}): the whole vector is calibrated to sensitivity {sensitivity:.4g}, so column {name(narrow)} "
        f"gets {sensitivity / small:.3g} times the noise it would get alone. Pass weights= (one per column) to give "
        "each column its own share of epsilon",
        MixedScalesWarning,
    )


@dataclass(frozen=True)
class Preview:
    """A planned call, before any data: the noise it will add and its error, in the units of its result.

    Attributes
    ----------
    release : str
        The release (``"mean"``, ...).
    epsilon, delta : float
        Its (ε, δ), as it would be charged.
    statements : tuple of NoiseStatement
        One per noise, as the ledger will state it: distribution, scale, and ``half_width``, the 95 % error of
        each coordinate of the result. Empty for a release that adds no noise (a count whose n is public). For
        an exponential mechanism, whose ledger entry states no noise, what can be stated from public values
        instead (distribution ``"exponential mechanism"``): ``scale`` is 2Δu/ε, the utility lost per factor e of
        probability, and ``half_width`` the utility gap to the best output that holds with probability 0.95 (ranks
        for a quantile, XᵀX units for a principal direction); likewise a norm of Gamma-distributed noise
        (objective perturbation) whose ledger entry states none. Each preview's note says which is which.
    events : tuple of Event
        Its privacy events, for :meth:`dpstats.Accountant.preview`.
    note : str
        What else to know (public values only).
    relation : {"row", "unit"}
        The neighbouring relation the call will protect.
    proven : bool
        False when the call's guarantee is not proven for its sampler (an Accountant refuses it unless created
        with ``allow_unproven=True``).
    private : bool
        False for a release that is not differentially private at all (SN: an Accountant refuses it).
    """

    release: str
    epsilon: float
    delta: float
    statements: tuple = ()
    events: tuple = ()
    note: str = ""
    relation: str | None = None
    proven: bool = True
    private: bool = True

    @property
    def half_width(self) -> float:
        """The 95 % error of each coordinate (the largest over the statements; 0 without noise)."""
        return max((s.half_width for s in self.statements), default=0.0)

    def __str__(self) -> str:
        """As the ledger will print its entry (without the number)."""
        from .accounting import LedgerEntry
        from .accounting.ledger import format_table

        entry = LedgerEntry(
            self.release,
            self.epsilon,
            self.delta,
            self.note,
            self.events,
            proven=self.proven,
            noise=self.statements,
            relation=self.relation,
        )
        lines = format_table([entry])
        return "\n".join([lines[0][3:], *(line[3:] for line in lines[1:])])


def preview(release, epsilon, delta=None, **public) -> Preview:
    """The noise a planned call of ``release`` will add and its 95 % error in the units of its result, from its
    public arguments only — before any data (module docstring, "Previews").

    Parameters
    ----------
    release : a dpstats release
        ``dps.mean``, ``dps.histogram``, ... (one whose declaration has a ``preview``).
    epsilon, delta : float
        As the call would take them (δ: the release's default when not given); checked as the release checks
        them.
    **public
        The call's public arguments (its options: ``bounds=``, ``q=``, ``k=``, ``method=``, ...; ``by=True`` or
        ``categories=`` for a grouped call) and the data's public size: ``n=`` rows, or ``units=`` (the number of
        privacy units) and ``max_rows=``; ``d=`` columns for a matrix (``dx=``, ``dy=`` for CCA). Each release's
        preview (``dpstats.<family>._previews``) says what it takes and what it states.

    Returns
    -------
    Preview

    Examples
    --------
    >>> import dpstats as dps
    >>> p = dps.preview(dps.mean, 0.5, bounds=(0, 100), n=1000)
    >>> round(p.half_width, 2)  # the mean age within ±0.6 years, 19 times in 20
    0.6
    """
    declaration = getattr(release, "declaration", None)
    if declaration is None:
        raise ParameterError(f"release must be a dpstats release such as dps.mean; got {release!r}")
    return declaration.previewed(epsilon, delta, **public)


def planned_preview(
    release: str,
    epsilon: float,
    delta: float,
    per_coordinate,
    *,
    units: str,
    changed: int | None = None,
    note: str = "",
    relation: str | None = None,
    unit=None,
    noise: str = "exact",
    weights=None,
) -> Preview:
    """The preview of a release that adds one noise calibrated to ``per_coordinate`` sensitivities (as
    :func:`plan` does for the release itself; ``unit``: the statistic's fixed-point unit when it is public, as
    ``Fraction(1)`` for counts; ``weights``: one release per coordinate, as the release's ``weights=``)."""
    per_coordinate = np.asarray(per_coordinate, dtype=np.float64)
    planned = plan(
        Statistic(np.zeros(per_coordinate.shape, dtype=np.int64), unit),
        per_coordinate,
        epsilon,
        delta,
        noise=noise,
        weights=weights,
        changed=changed,
        units=units,
    )
    return previewed(release, [planned], tuple(planned.statements()), note=note, relation=relation)


def previewed(release: str, plans: list[Planned], statements, *, note: str = "", relation=None) -> Preview:
    """The preview of ``plans`` stated by ``statements``: its (ε, δ) is the exact sum over the plans' events,
    rounded up, as its ledger entry's will be."""
    from .accounting import LedgerEntry

    events = tuple(n.event for p in plans for n in p.noises)
    entry = LedgerEntry.of(release, events)
    return Preview(release, entry.epsilon, entry.delta, tuple(statements), events, note, relation)


def public_count(value, name: str) -> int:
    """A public count (rows, units, columns) as an int >= 1, else a ParameterError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ParameterError(f"{name} must be a whole number >= 1 (public); got {value!r}")
    return int(value)
