"""The random source of ``rng=None`` (dpstats.noise.random): keyed once per process, re-keyed in a forked child.

The process's secure stream is shared by every call without a generator of its own; a child made by ``fork``
inherits the parent's memory, stream state included, and must not draw the parent's next noise. The tests fork
for real (``os.fork`` and a ``multiprocessing`` pool with the fork start method) and compare what parent and child
draw next; a generator made before the fork and used on both sides shows that the comparison detects a shared
stream.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle

import numpy as np
import pytest

import dpstats as dps
from dpstats.noise import random as source
from dpstats.noise.random import check_rng, default_generator, describe_source, is_secure, secure_generator

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX only")


def _next_draws(rng: np.random.Generator) -> list[int]:
    return rng.integers(0, 2**63, size=4).tolist()


def _in_child(draw) -> list[int]:
    """``draw()`` in a child made by os.fork; its result comes back through a pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        try:
            os.write(write, pickle.dumps(draw()))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)


def test_rng_none_is_the_process_stream_keyed_once():
    first, second = check_rng(None), check_rng(None)
    assert first is second is default_generator()
    assert is_secure(first) and describe_source(first).endswith("(cryptographic)")
    assert _next_draws(first) != _next_draws(second)  # one stream: consecutive draws, not a repeat


def test_forked_child_rekeys():
    default_generator()  # keyed in the parent before the fork
    child = _in_child(lambda: _next_draws(check_rng(None)))
    parent = _next_draws(check_rng(None))
    assert child != parent


def test_fork_comparison_detects_a_shared_stream():
    """The deliberately wrong variant: a generator made before the fork and used on both sides draws the same."""
    shared = secure_generator()
    child = _in_child(lambda: _next_draws(shared))
    assert child == _next_draws(shared)


def test_child_rekeys_without_the_fork_hook(monkeypatch):
    """The process-id check alone re-keys (for a fork that bypasses os.register_at_fork's hooks): the hook is
    undone by restoring the parent's stream in the child before drawing."""

    def draw_with_parent_stream():
        source._process_stream = parent_stream  # what the child would hold had the hook not run
        return _next_draws(check_rng(None))

    default_generator()
    parent_stream = source._process_stream
    child = _in_child(draw_with_parent_stream)
    assert child != _next_draws(check_rng(None))


def _release(_):
    return _next_draws(check_rng(None)), float(dps.mean([0.1, 0.5, 0.9], 1.0, bounds=(0, 1)))


def test_multiprocessing_fork_pool_workers_draw_apart():
    default_generator()
    with mp.get_context("fork").Pool(2) as pool:
        results = pool.map(_release, range(4), chunksize=1)
    draws = [tuple(d) for d, _ in results] + [tuple(_next_draws(check_rng(None)))]
    assert len(set(draws)) == len(draws)
