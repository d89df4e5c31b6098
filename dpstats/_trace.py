"""The instrumentation point every release passes through, for the sensitivity checker of :mod:`dpstats.audit`.

Three calls, made by the library at the points where a release is decided:

* :func:`observe` — a statistic before noise and the sensitivity declared for it (its neighbours' statistics may
  differ by at most that much, in the given norm): the integer statistic on the noise grid (every additive release,
  in :mod:`dpstats.noise.release`), an exponential mechanism's scores, an ERM minimiser;
* :func:`draw` — a random step of a release: ``sample()`` draws the noise (or the exponential mechanism's output)
  from ``rng`` and returns what is released;
* :func:`event` — a public control-flow event (a charge of the accountant, with its privacy events).

**Off by default, and it cannot change a release.** With no recorder active (the normal case) :func:`observe` and
:func:`event` return at once (a statistic given as a callable is never evaluated) and :func:`draw` returns
``sample()``: the release is computed exactly as without the instrumentation. A recorder is active only inside
:meth:`dpstats.audit.SensitivityChecker` runs (a context variable: other threads and tasks are not affected).

Nothing here imports anything from dpstats: every layer may call it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

__all__ = ["NORMS", "Recorder", "active", "draw", "event", "observe", "recording"]

#: Norms a declared sensitivity can be stated in: L1 and L2 of a vector (any shape, flattened), the largest absolute
#: difference (an exponential mechanism's scores), and the spectral norm of a symmetric matrix (a quadratic score).
NORMS = ("l1", "l2", "linf", "spectral")


class Recorder:
    """What :mod:`dpstats.audit` plugs in (the interface; the checker's recorder implements it)."""

    def observe(self, name: str, statistic, sensitivity, norm: str, exact: bool) -> None:  # pragma: no cover
        raise NotImplementedError

    def draw(self, name: str, rng, sample: Callable[[], Any]):  # pragma: no cover
        raise NotImplementedError

    def event(self, kind: str, name: str, details: dict) -> None:  # pragma: no cover
        raise NotImplementedError


_ACTIVE: ContextVar[Recorder | None] = ContextVar("dpstats_trace_recorder", default=None)


def active() -> Recorder | None:
    """The recorder of this context, or None (the default: instrumentation off)."""
    return _ACTIVE.get()


@contextlib.contextmanager
def recording(recorder: Recorder):
    """Activate ``recorder`` in this context for the ``with`` block."""
    token = _ACTIVE.set(recorder)
    try:
        yield recorder
    finally:
        _ACTIVE.reset(token)


def observe(name: str, statistic, *, sensitivity, norm: str, exact: bool = True) -> None:
    """Declare that ``statistic`` (an array, or a callable returning one, evaluated only when recording) moves by at
    most ``sensitivity`` in ``norm`` between neighbours. ``exact``: the statistic and the bound are exact (integers,
    fractions), so they are compared without tolerance; a floating-point statistic is compared with a relative
    tolerance of 1e-9 (its own rounding)."""
    recorder = _ACTIVE.get()
    if recorder is not None:
        recorder.observe(name, statistic() if callable(statistic) else statistic, sensitivity, norm, exact)


def draw(name: str, rng, sample: Callable[[], Any]):
    """The random step ``sample()`` (drawing from ``rng``) of a release: what it returns is released."""
    recorder = _ACTIVE.get()
    if recorder is None:
        return sample()
    return recorder.draw(name, rng, sample)


def event(kind: str, name: str, **details) -> None:
    """A public control-flow event (``details``: public values only, compared between neighbours)."""
    recorder = _ACTIVE.get()
    if recorder is not None:
        recorder.event(kind, name, details)
