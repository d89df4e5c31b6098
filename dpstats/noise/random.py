"""Where random bits come from: a cryptographically secure generator by default, a seeded one for reproduction.

``rng=None`` (every mechanism's default) gives a :class:`numpy.random.Generator`
over a cryptographically secure bit generator keyed with entropy from the
operating system (``os.urandom``; once per process, see below): AES-128 in counter mode where the CPU
has AES instructions (``randomgen.AESCounter``), else ChaCha20
(``randomgen.ChaCha`` with 20 rounds and a 256-bit key). Its output cannot be
predicted from earlier output, unlike NumPy's default PCG64, whose state can be
recovered from a few outputs.

Keying AES costs more than a small release itself (tens of microseconds: the key schedule and randomgen's set-up),
so ``rng=None`` does not key a new generator per call: the process keys **one** secure bit generator on first use
and every call draws from its stream (:func:`default_generator`). Consecutive blocks of one AES-CTR (or ChaCha20)
stream are as unpredictable from each other as blocks of independently keyed streams, so the releases' noises
stay independent. The stream's key and counter never leave the library: the generator is made inside a call and
dropped at its end, never returned, stored or pickled (the estimators keep ``random_state=None`` and ask for a
source per fit); a caller who wants a secure generator to hold gets an independently keyed one from
:func:`secure_generator`. **Fork safety**: a child process made by ``fork`` inherits the parent's memory, stream
state included, and would draw the parent's next noise; so the stream remembers the process id that keyed it,
and a process that finds another id (a forked child; ``os.register_at_fork`` clears it too) keys its own from
``os.urandom`` before its first draw.

An int seed (or a ``SeedSequence``) gives NumPy's PCG64 — reproducible, for
papers and tests, and **not secure**: anyone who knows or guesses the seed
knows the noise. A ``Generator`` passed in is used as it is. The ledger note of
every release says which kind of source it used (:func:`describe_source`).

randomgen (by NumPy's random-module author) earns its place as a dependency:
it is the maintained source of cryptographic bit generators that plug into
NumPy's ``Generator``, so every sampler — the exact integer ones and the
floating-point ones (Bingham, Gamma) — draws from the same secure stream.
"""

from __future__ import annotations

import numbers
import os

import numpy as np

from ..exceptions import ParameterError

__all__ = [
    "check_rng",
    "default_generator",
    "describe_source",
    "independent_generator",
    "is_secure",
    "secure_generator",
]

_SECURE_NAMES = ("AESCounter", "ChaCha")

# The process's secure stream: (the id of the process that keyed it, a Generator over it); None until first use.
_process_stream: tuple[int, np.random.Generator] | None = None


def secure_generator() -> np.random.Generator:
    """A new Generator over a cryptographic bit generator keyed from ``os.urandom`` (see the module docstring)."""
    from randomgen import AESCounter, ChaCha

    aes = AESCounter(key=int.from_bytes(os.urandom(16), "little"))
    if aes.use_aesni:
        return np.random.Generator(aes)
    return np.random.Generator(ChaCha(key=int.from_bytes(os.urandom(32), "little"), rounds=20))


def default_generator() -> np.random.Generator:
    """The source of ``rng=None``: a Generator over this process's secure stream, keyed on first use and again in
    a forked child (module docstring). For use inside a call only: never return or store it."""
    global _process_stream
    stream, pid = _process_stream, os.getpid()
    if stream is None or stream[0] != pid:
        stream = _process_stream = (pid, secure_generator())
    return stream[1]


def _forget_stream() -> None:
    """In a forked child: drop the parent's stream (its state is a copy of the parent's), so the child keys its own."""
    global _process_stream
    _process_stream = None


if hasattr(os, "register_at_fork"):  # POSIX; the process-id check in default_generator covers any other fork
    os.register_at_fork(after_in_child=_forget_stream)


def check_rng(rng, name: str = "rng") -> np.random.Generator:
    """Turn ``rng`` into a :class:`numpy.random.Generator`.

    ``None``: the process's cryptographically secure stream (:func:`default_generator`);
    an int >= 0 or a :class:`numpy.random.SeedSequence`: a reproducible PCG64
    generator (not secure); a ``Generator``: used as it is. ``name``: the
    parameter's name in the error (``random_state`` for the estimators).
    """
    if rng is None:
        return default_generator()
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool) and rng >= 0:
        return np.random.default_rng(int(rng))
    raise ParameterError(
        f"{name} must be None (secure OS-keyed source), a non-negative int seed or a numpy.random.Generator; "
        f"got {rng!r}"
    )


def is_secure(rng: np.random.Generator) -> bool:
    """Whether ``rng`` runs on one of the cryptographic bit generators (see :func:`secure_generator`)."""
    bit_generator = rng.bit_generator
    name = type(bit_generator).__name__
    if name == "ChaCha":
        return bit_generator.state["state"]["rounds"] >= 20
    return name in _SECURE_NAMES


def describe_source(rng: np.random.Generator) -> str:
    """A short public description of the random source, for ledger notes."""
    name = type(rng.bit_generator).__name__
    if is_secure(rng):
        return f"random source: {name} (cryptographic)"
    return f"random source: {name}, seeded or supplied by the caller (reproducible, not secure)"


def independent_generator(rng: np.random.Generator) -> np.random.Generator:
    """A generator whose draws are independent of ``rng``'s (for a copy that must not repeat its noise).

    A secure ``rng`` gets a new secure generator with fresh OS entropy; any
    other gets a PCG64 generator seeded from four 63-bit draws of ``rng``
    (reproducible from ``rng``'s seed, and, like it, not secure).
    """
    if is_secure(rng):
        return secure_generator()
    return np.random.default_rng(rng.integers(0, 2**63, size=4).tolist())
