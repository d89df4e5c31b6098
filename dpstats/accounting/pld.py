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
* in a chunk, the k copies of each distinct event are composed by binary powers (a *leaf*, :func:`copies`: the
  event's 2^i copies by repeated squaring, then those of k's binary digits composed from the lowest up), and the
  leaves, in the order their events first appear in the chunk, are composed pairwise in a balanced tree;
* the composed distribution is the chunks' distributions convolved one after another, oldest first; the last,
  incomplete chunk (``pending``) is convolved in when the total is read, without being kept.

A release is accepted by computing exactly this for the ledger with the release added (:meth:`ComposedPld.fits`),
and the result is adopted if it is recorded. Every leaf and tree node is a function of its (event, count) pairs
alone, so they are kept between readings (those of the current and of the last checked ledger): a check near the
budget recomputes one leaf, that leaf's path up the chunk's tree, and convolves the chunk into the composed
distribution once. Far from the budget, adding an event costs nothing but every :data:`CHUNK`-th (the chunk's tree,
and one convolution into the composed distribution). A leaf of k copies costs at most one convolution per binary
digit of k, the powers of two being kept per event (composing the copies one after another cost one convolution per
copy: 209 for the incomplete chunk of a ledger of 2,000 releases read back from a file, before its first spend).
A ledger added in one go (read back from a file or JSON: several events that complete a chunk) also leaves its
total computed, so that the first spend near the budget recomputes one leaf and its path only; a single release,
however many events it holds, leaves the reading to the next check, as before.

Every composition is dp_accounting's ``compose`` (pessimistic: the tail mass it truncates, at most 10^-15 per
convolution, goes to the infinite loss), so no grouping reports an ε below the true one; a leaf of k copies takes
about 2·log2(k) of them where one after another took k − 1 (less truncated mass, the same or a smaller ε).

Only the events' distributions, ``compose``, ``self_compose``, ``get_delta_for_epsilon`` and
``get_epsilon_for_delta`` of dp_accounting are used, so the result is what dp_accounting computes for the same
events from scratch, up to the order of floating-point operations (checked in the tests and the benchmarks).

**ε from δ, vectorised.** dp_accounting's ``get_epsilon_for_delta`` walks the support from the largest loss down in
a Python loop until the running masses show that ε lies above the current loss (86,000 steps, 0.1 s, at 10,000
releases: most of the time of a reading). :func:`epsilon_for_delta` computes the same running masses as cumulative
sums over the dense probability vector, finds the same stopping point, and applies the same closing formula
ε = log((μ_upper − δ)/μ_lower), then raises it by a relative :data:`_EPSILON_MARGIN` so that the rounding
differences between the two (NumPy's exp and log) never put it
below dp_accounting's value. It reads the dense distribution's fields (``_probs``, ``_lower_loss``,
``_discretization``, ``_infinity_mass``); where a version of dp_accounting lacks them, or a case the loop handles
specially arises (a loss whose exp underflows), dp_accounting's own method answers.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable

import numpy as np

from .events import PLD_DISCRETIZATION, Event, Gaussian

__all__ = ["CHUNK", "ComposedPld", "compose", "copies", "event_pld"]

#: Events per chunk of the canonical grouping (module docstring): bounds the work a reading of the total has to
#: do, and amortises one large convolution over this many releases.
CHUNK = 256

# Where the hockey-stick test δ(ε) <= δ_budget is too close to call in floating point, ε is computed instead.
_CLOSE = 1e-6

# :func:`epsilon_for_delta` raises its ε by this much (relative): far above the rounding differences between its
# cumulative sums and dp_accounting's loop (about 1e-15), far below anything an accountant decides on.
_EPSILON_MARGIN = 2.0**-42

# Losses per block of the walk of :func:`_dense_epsilon_for_delta` (the loop it replaces stops early: so does it).
_WALK_BLOCK = 1 << 14


@functools.lru_cache(maxsize=512)
def event_pld(event: Event):
    """An event's privacy-loss distribution, built once (events are immutable)."""
    return event.pld(PLD_DISCRETIZATION)


#: The tail mass dp_accounting's ``PrivacyLossDistribution.compose`` truncates by default (pessimistically).
TAIL_MASS_TRUNCATION = 1e-15


def compose(first, second):
    """dp_accounting's ``first.compose(second)``, bit for bit, with its search for the tails to truncate vectorised.

    ``PrivacyLossDistribution.compose`` convolves the pmfs (``scipy.signal.fftconvolve`` for dense ones) and
    truncates a prefix and a suffix of mass at most 10^-15/2 each (the left one added to the first kept loss, the
    right one to the infinite loss: pessimistic), finding them with a Python loop over the array that is most of
    a convolution's time. :func:`_truncated` finds the same indices from cumulative sums: the same additions in the
    same order. Anything but two dense pmfs (the sparse ones of single events) is left to dp_accounting, and so is
    a version of it without the fields read here."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    try:
        remove = _compose_pmfs(first._pmf_remove, second._pmf_remove)
        if first._symmetric and second._symmetric:
            return pld.PrivacyLossDistribution(remove)
        return pld.PrivacyLossDistribution(remove, _compose_pmfs(first._pmf_add, second._pmf_add))
    except AttributeError:
        return first.compose(second)


def _compose_pmfs(first, second):
    """``pld_pmf.compose_pmfs(first, second, TAIL_MASS_TRUNCATION)`` (dense pmfs: its steps, vectorised)."""
    from dp_accounting.pld import pld_pmf
    from scipy import signal

    dense = pld_pmf.DensePLDPmf
    if not (isinstance(first, dense) and isinstance(second, dense)):
        return pld_pmf.compose_pmfs(first, second, TAIL_MASS_TRUNCATION)
    first.validate_composable(second)
    probs = signal.fftconvolve(first._probs, second._probs)
    infinity = first._infinity_mass + second._infinity_mass - first._infinity_mass * second._infinity_mass
    offset, probs, right_tail = _truncated(probs, TAIL_MASS_TRUNCATION, first._pessimistic_estimate)
    lower = first._lower_loss + second._lower_loss + offset
    return dense(first._discretization, lower, probs, infinity + right_tail, first._pessimistic_estimate)


def _truncated(probs: np.ndarray, tail_mass: float, pessimistic: bool):
    """dp_accounting's ``pld_pmf._truncate_tails``: the longest prefix and suffix whose running sums (added left
    to right, from each end) stay <= ``tail_mass``/2 are cut; returns (prefix length, kept probs, mass to
    infinity)."""
    threshold = tail_mass / 2

    def prefix(arr: np.ndarray) -> int:  # the loop's index: the first running sum above the threshold
        end = 1024  # the tails cut are short: look at a growing prefix (its running sums are the loop's, exactly)
        while True:
            above = np.cumsum(arr[:end]) > threshold
            if above.any():
                return int(np.argmax(above))
            if end >= len(arr):
                return len(arr)
            end *= 8

    left = prefix(probs)
    right = max(len(probs) - prefix(probs[::-1]), left + 1)
    left_mass, right_mass = np.sum(probs[:left]), np.sum(probs[right:])
    kept = probs[left:right]
    if pessimistic:
        kept[0] += left_mass
        return left, kept, right_mass
    kept[-1] += right_mass
    return left, kept, 0


def copies(event: Event, count: int):
    """The distribution of ``count`` copies of ``event`` composed: the powers 2^i (:func:`_power`) of the binary
    digits of ``count``, composed from the lowest digit up (module docstring; a function of (event, count))."""
    result = None
    for i in range(count.bit_length()):
        if count >> i & 1:
            result = _power(event, i) if result is None else compose(result, _power(event, i))
    return result


@functools.lru_cache(maxsize=128)
def _power(event: Event, exponent: int):
    """2^exponent copies of ``event`` composed by repeated squaring (kept per process: a few per event, as
    ``count`` < :data:`CHUNK` + 1 needs exponents up to 8)."""
    if exponent == 0:
        return event_pld(event)
    half = _power(event, exponent - 1)
    return compose(half, half)


def epsilon_for_delta(distribution, delta: float) -> float:
    """dp_accounting's ``distribution.get_epsilon_for_delta(delta)``, computed by cumulative sums instead of its
    Python loop (module docstring, "ε from δ, vectorised"): never below it, and above by a relative 2^-42 at most
    (plus rounding)."""
    pmfs = [distribution._pmf_remove] if distribution._symmetric else [distribution._pmf_remove, distribution._pmf_add]
    try:
        return max(_dense_epsilon_for_delta(pmf.to_dense_pmf(), delta) for pmf in pmfs)
    except (AttributeError, _LoopCase):
        return float(distribution.get_epsilon_for_delta(delta))


class _LoopCase(Exception):
    """A case that :func:`_dense_epsilon_for_delta` leaves to dp_accounting's loop."""


def _dense_epsilon_for_delta(pmf, delta: float) -> float:
    """ε at ``delta`` of one dense privacy-loss pmf, by the rule of dp_accounting's ``_get_epsilon_for_delta``:
    walking the losses from the largest down, with μ_upper (the mass above, infinite loss included) and μ_lower
    (Σ e^{−loss}·prob above), stop before the first loss ℓ with μ_upper > δ, μ_lower > 0 and
    log((μ_upper − δ)/μ_lower) >= ℓ; then ε = 0 if μ_upper <= μ_lower + δ, else log((μ_upper − δ)/μ_lower).

    The walk goes in blocks of :data:`_WALK_BLOCK` losses from the top, each block's running sums and losses
    continued from the last block's by sequential cumulative sums: the same additions in the same order as the loop
    (whose losses are a running sum too), so only NumPy's exp and log can differ from it, in the last bit."""
    infinity = float(pmf._infinity_mass)
    if infinity > delta:
        return math.inf
    probs = np.asarray(pmf._probs, dtype=np.float64)[::-1]
    step = -float(pmf._discretization)
    loss, upper, lower = (pmf._lower_loss + probs.size - 1) * pmf._discretization - step, infinity, 0.0
    for start in range(0, probs.size, _WALK_BLOCK):
        block = probs[start : start + _WALK_BLOCK]
        losses = np.cumsum(np.concatenate(([loss], np.full(block.size, step))))[1:]
        lower_terms = np.exp(-losses) * block
        if np.any((lower_terms == 0.0) & (block > 0.0)):
            raise _LoopCase  # e^{−loss} underflows: the loop's early return applies
        uppers = np.cumsum(np.concatenate(([upper], block)))  # before each loss, and after the last
        lowers = np.cumsum(np.concatenate(([lower], lower_terms)))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.log((uppers[:-1] - delta) / lowers[:-1])
        stop = (uppers[:-1] > delta) & (lowers[:-1] > 0) & (ratio >= losses)
        at = int(np.argmax(stop)) if stop.any() else block.size
        loss, upper, lower = float(losses[-1]), float(uppers[at]), float(lowers[at])
        if at < block.size:
            break
    if upper <= lower + delta:
        return 0.0
    return math.log((upper - delta) / lower) * (1.0 + _EPSILON_MARGIN)


@functools.lru_cache(maxsize=4096)
def free(event: Event) -> bool:
    """True for an event that reveals nothing (a Gaussian on a query of sensitivity 0): nothing to compose.
    (Cached: a Gaussian's multiplier is computed in exact arithmetic, and a ledger repeats its events.)"""
    return isinstance(event, Gaussian) and math.isinf(event.noise_multiplier)


@functools.lru_cache(maxsize=4096)
def noiseless(event: Event) -> bool:
    """True for a Gaussian event without noise (multiplier 0): no finite ε holds, and it has no distribution."""
    return isinstance(event, Gaussian) and event.noise_multiplier == 0


class ComposedPld:
    """The composed privacy-loss distribution of the events added so far, grouped canonically (module docstring).

    ``composed`` is the distribution of the complete chunks (None before the first), ``pending`` the counts of the
    incomplete chunk (distinct events in the order they first appeared). :meth:`add` is O(1) but every
    :data:`CHUNK`-th event; :meth:`epsilon` and :meth:`fits` compose the incomplete chunk into the composed
    distribution (and keep the result until the next :meth:`add`).
    """

    def __init__(self) -> None:
        self.composed = None
        self.pending: dict[Event, int] = {}
        self._waiting = 0
        self._total = None  # the distribution of every event added, once computed
        self._candidate = None  # (extra events, state, distribution) of the last check, adopted if add() follows
        self._groups: dict[tuple, object] = {}  # leaves and tree nodes: (event, count) pairs -> distribution
        self._kept: set[tuple] = set()  # the groups of the current ledger's incomplete chunk

    def add(self, events: Iterable[Event]) -> None:
        """Fold ``events`` in (all or nothing)."""
        events = _kept(events)
        if not events:
            return
        if self._candidate is not None and self._candidate[0] == events:
            _, state, self._total, used = self._candidate  # the last check composed exactly these events
        else:
            state, self._total, used = self._advanced(events), None, set()
        chunks_completed = state[0] is not self.composed
        self.composed, self.pending, self._waiting = state
        self._candidate, self._kept = None, used
        self._prune()
        if len(events) > 1 and chunks_completed and self._total is None:
            self._distribution([])  # a ledger read in one go (module docstring): its next spend will need the total

    def _advanced(self, events: list[Event], used: set | None = None) -> tuple:
        """(composed, pending, waiting) after ``events``, self unchanged: every chunk they complete is convolved
        in."""
        composed, pending, waiting = self.composed, dict(self.pending), self._waiting
        for event in events:
            pending[event] = pending.get(event, 0) + 1
            waiting += 1
            if waiting == CHUNK:
                chunk = self._grouped(pending, set())
                composed = chunk if composed is None else compose(composed, chunk)
                pending, waiting = {}, 0
        return composed, pending, waiting

    def _distribution(self, extra: list[Event]):
        """The distribution of the events added and ``extra`` (which is remembered as the candidate)."""
        if not extra:
            if self._total is None:
                self._total = self._composed_with(self.composed, self.pending, self._kept)
            return self._total
        used: set = set()
        state = self._advanced(extra)
        distribution = self._composed_with(state[0], state[1], used)
        self._candidate = (extra, state, distribution, used)
        self._prune()
        return distribution

    def _composed_with(self, composed, pending: dict[Event, int], used: set):
        rest = self._grouped(pending, used)
        if rest is None:
            return composed
        return rest if composed is None else compose(composed, rest)

    def _grouped(self, counts: dict[Event, int], used: set):
        """One distribution for the events of ``counts``: a leaf per distinct event (its copies composed one after
        another), the leaves composed pairwise in a balanced tree; None for no events. The keys of the groups it
        reads go in ``used``."""
        layer = [((pair,), self._leaf(*pair)) for pair in counts.items()]
        used.update(key for key, _ in layer)
        while len(layer) > 1:
            paired = []
            for i in range(0, len(layer), 2):
                if i + 1 == len(layer):
                    paired.append(layer[i])
                    continue
                key = layer[i][0] + layer[i + 1][0]
                if key not in self._groups:
                    self._groups[key] = compose(layer[i][1], layer[i + 1][1])
                used.add(key)
                paired.append((key, self._groups[key]))
            layer = paired
        return layer[0][1] if layer else None

    def _leaf(self, event: Event, count: int):
        """``count`` copies of ``event`` composed: :func:`copies`."""
        key = ((event, count),)
        if key not in self._groups:
            self._groups[key] = copies(event, count)
        return self._groups[key]

    def _prune(self) -> None:
        """Keep the groups of the current ledger's and the candidate's incomplete chunks only."""
        keep = self._kept | (self._candidate[3] if self._candidate is not None else set())
        self._groups = {key: value for key, value in self._groups.items() if key in keep}

    def epsilon(self, delta: float, extra: Iterable[Event] = ()) -> float:
        """ε at ``delta`` of the events so far and ``extra`` (``extra`` is not kept)."""
        distribution = self._distribution(_kept(extra))
        return 0.0 if distribution is None else epsilon_for_delta(distribution, delta)

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
        return epsilon_for_delta(distribution, delta) <= epsilon


def _kept(events: Iterable[Event]) -> list[Event]:
    """The events that are composed (free ones reveal nothing)."""
    return [e for e in events if not free(e)]
