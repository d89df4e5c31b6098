"""Privacy-loss distributions composed incrementally, in a canonical order: the same ledger gives the same
distribution, to the last bit, whether it was composed release by release or read back in one go.

Composition is convolution of privacy-loss distributions (Koskela, Jälkö & Honkela 2020; Google's
``dp_accounting``, with pessimistic discretisation and pessimistic tail truncation, so that no result is below the
true ε). Convolution is associative and commutative, so the composed distribution of a ledger can be kept and each
new release convolved into it, instead of recomposing the whole ledger: that is what dp_accounting does for a
sequence of events too (``composed.compose(next)``).

**Canonical grouping.** In floating point, convolutions are not associative: the ε of the same events composed in
another grouping differs in the tenth digit. A running total that accepts a release near the budget must give the
number that the same ledger gives when it is read back (another process opening the ledger file,
:meth:`dpstats.Accountant.from_json`), or a ledger accepted as within the budget could be found over it. So the
grouping is a function of the sequence of events alone, never of when the total was read or checked:

* the events (free ones, which reveal nothing, left out) are cut into consecutive **chunks** of :data:`CHUNK`;
* a chunk's distribution is that of its distinct events, in the order they first appear in it, each
  self-composed its number of times (k copies cost one FFT power, dp_accounting's ``self_compose``), composed
  pairwise in a balanced tree (:func:`grouped`);
* the composed distribution is the chunks' distributions convolved one after another, oldest first; the last,
  incomplete chunk (``pending``) is convolved in when the total is read, without being kept.

A release is accepted by computing exactly this for the ledger with the release added (:meth:`ComposedPld.fits`),
and the result is adopted if it is recorded. Cost: O(1) to add an event but every :data:`CHUNK`-th (one chunk's
distribution and one convolution into the composed one); reading the total or deciding a release near the budget
composes the incomplete chunk's distinct events and convolves them into the composed distribution once.

Only the events' distributions, ``compose``, ``self_compose``, ``get_delta_for_epsilon`` and
``get_epsilon_for_delta`` of dp_accounting are used, so the result is what dp_accounting computes for the same
events from scratch, up to the order of floating-point operations (checked in the tests and the benchmarks).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

from .events import PLD_DISCRETIZATION, Event, Gaussian

__all__ = ["CHUNK", "ComposedPld", "event_pld", "grouped"]

#: Events per chunk of the canonical grouping (module docstring): bounds the work a reading of the total has to
#: do, and amortises one large convolution over this many releases.
CHUNK = 256

# Where the hockey-stick test δ(ε) <= δ_budget is too close to call in floating point, ε is computed instead.
_CLOSE = 1e-6


@functools.lru_cache(maxsize=512)
def event_pld(event: Event):
    """An event's privacy-loss distribution, built once (events are immutable)."""
    return event.pld(PLD_DISCRETIZATION)


def free(event: Event) -> bool:
    """True for an event that reveals nothing (a Gaussian on a query of sensitivity 0): nothing to compose."""
    return isinstance(event, Gaussian) and math.isinf(event.noise_multiplier)


def noiseless(event: Event) -> bool:
    """True for a Gaussian event without noise (multiplier 0): no finite ε holds, and it has no distribution."""
    return isinstance(event, Gaussian) and event.noise_multiplier == 0


def grouped(counts: dict[Event, int]):
    """One distribution for the events of ``counts`` (each distinct event self-composed its number of times, in
    the dict's order), composed pairwise in a balanced tree; None for no events."""
    layer = [event_pld(e) if k == 1 else event_pld(e).self_compose(k) for e, k in counts.items()]
    while len(layer) > 1:
        layer = [layer[i].compose(layer[i + 1]) if i + 1 < len(layer) else layer[i] for i in range(0, len(layer), 2)]
    return layer[0] if layer else None


class _State:
    """The composed distribution of the complete chunks, and the counts of the incomplete one (``waiting`` events,
    distinct events in the order they first appeared)."""

    __slots__ = ("composed", "pending", "waiting")

    def __init__(self, composed=None, pending: dict[Event, int] | None = None, waiting: int = 0) -> None:
        self.composed, self.pending, self.waiting = composed, pending or {}, waiting

    def advanced(self, events: list[Event]) -> _State:
        """The state after ``events`` (self is not changed): every chunk they complete is convolved in."""
        composed, pending, waiting = self.composed, dict(self.pending), self.waiting
        for event in events:
            pending[event] = pending.get(event, 0) + 1
            waiting += 1
            if waiting == CHUNK:
                chunk = grouped(pending)
                composed = chunk if composed is None else composed.compose(chunk)
                pending, waiting = {}, 0
        return _State(composed, pending, waiting)

    def distribution(self):
        """The composed distribution of every event: the complete chunks', then the incomplete chunk's."""
        rest = grouped(self.pending)
        if rest is None:
            return self.composed
        return rest if self.composed is None else self.composed.compose(rest)


class ComposedPld:
    """The composed privacy-loss distribution of the events added so far, grouped canonically (module docstring).

    :meth:`add` is O(1) but every :data:`CHUNK`-th event; :meth:`epsilon` and :meth:`fits` compose the incomplete
    chunk into the composed distribution (and keep the result until the next :meth:`add`).
    """

    def __init__(self) -> None:
        self._state = _State()
        self._total = None  # the distribution of every event added, once computed
        self._candidate = None  # (extra events, state, distribution) of the last check, adopted if add() follows

    def add(self, events: Iterable[Event]) -> None:
        """Fold ``events`` in (all or nothing)."""
        events = _kept(events)
        if not events:
            return
        if self._candidate is not None and self._candidate[0] == events:
            _, self._state, self._total = self._candidate  # the last check composed exactly these events
        else:
            self._state, self._total = self._state.advanced(events), None
        self._candidate = None

    def _distribution(self, extra: list[Event]):
        """The distribution of the events added and ``extra`` (which is remembered as the candidate)."""
        if not extra:
            if self._total is None:
                self._total = self._state.distribution()
            return self._total
        state = self._state.advanced(extra)
        distribution = state.distribution()
        self._candidate = (extra, state, distribution)
        return distribution

    def epsilon(self, delta: float, extra: Iterable[Event] = ()) -> float:
        """ε at ``delta`` of the events so far and ``extra`` (``extra`` is not kept)."""
        distribution = self._distribution(_kept(extra))
        return 0.0 if distribution is None else float(distribution.get_epsilon_for_delta(delta))

    def fits(self, epsilon: float, delta: float, extra: Iterable[Event] = ()) -> bool:
        """Whether the events so far and ``extra`` are (``epsilon``, ``delta``)-DP by this distribution: exactly
        ``self.epsilon(delta, extra) <= epsilon``, decided by one hockey-stick divergence δ(ε) (a vectorised sum)
        unless it is within a relative 1e-6 of ``delta``."""
        distribution = self._distribution(_kept(extra))
        if distribution is None:
            return epsilon >= 0.0
        at_budget = float(distribution.get_delta_for_epsilon(epsilon))
        if at_budget <= delta * (1.0 - _CLOSE):
            return True
        if at_budget > delta * (1.0 + _CLOSE):
            return False
        return float(distribution.get_epsilon_for_delta(delta)) <= epsilon


def _kept(events: Iterable[Event]) -> list[Event]:
    """The events that are composed (free ones reveal nothing)."""
    return [e for e in events if not free(e)]
