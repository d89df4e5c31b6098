"""Class checks: the kinds of privacy hole the reviews found, checked for a release wherever it is, not only where
one was found (issue 39).

(a) **Release or refuse decided by the data.** A valid input must never be refused because of its values, and a
    refusal must not carry a number computed from the data. :func:`~dpstats.audit.check_sensitivity` compares the
    outcomes of two neighbours (only one raised; both raised with different messages); :func:`degenerate_neighbours`
    gives it the data that solvers and verifications find hardest, built from any neighbour pair: every record but
    the ones that differ made equal (rank one, all-equal rows, one key held by the differing records alone).
(b) **A released attribute that depends on unreleased data**: a dtype, a shape, an index's dtype or name, column
    names, fitted attributes. :func:`~dpstats.audit.check_sensitivity` compares the releases' structure
    (:func:`~dpstats.audit.structure`) with the noise frozen; :func:`neighbours_with_a_lone_key` gives grouped
    releases the pair that exposed it: one unit's key, never released, an int on one side and a float on the other.
(c) **A spend outside the creating process**: :func:`check_forked_spend` runs a release, with an in-memory
    accountant created in this process, in a forked child, where it must be refused before anything is released.

:func:`check_release_classes` runs (a) and (b) over a release's neighbour pairs and their degenerate variants.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._sensitivity import SensitivityReport, check_sensitivity

__all__ = ["check_forked_spend", "check_release_classes", "degenerate_neighbours", "neighbours_with_a_lone_key"]


def _records(data) -> tuple:
    """The parts of a dataset that hold records along their first axis (a tuple of arrays, or one array)."""
    return tuple(data) if isinstance(data, tuple) else (data,)


def degenerate_neighbours(pairs, *, replace: bool = True) -> list[tuple]:
    """Degenerate variants of neighbour pairs, built from their own records.

    1. The records both sides hold (matched as a multiset) are all made equal to the largest of them (rows at the
       norm bound make the hardest rank-one data), on both sides; the records that differ are kept. Rows on the
       sphere become all-equal rows but one (rank two at most); keys become one key for all records but the
       differing ones (a key held by one record or unit alone); a unit's rows stay that unit's, and the other units
       become one.
    2. With ``replace`` (neighbours replace a record, or a unit's records, by any valid ones: the relation of rows
       and of privacy units), also: one side made wholly degenerate — its differing records' values set to the
       common record too, their identifiers kept (a part whose values on the differing records are the same on
       both sides, such as a unit's identifier) — against the other side of 1. This is rank-one data (every row one
       vector) against the same with one row (or one unit's rows) replaced: the pair on which Amin et al.'s
       eigenvalues were released on one side and refused on the other (issue 39). Pass ``replace=False`` for a
       relation that fixes how a record moves (``low_rank``'s: a row moved by a unit vector).

    The variants are neighbours under the pair's relation, and valid for the mechanism whenever the pair is (every
    value is one of the pair's). A dataset is a NumPy array of records or a tuple of them (values, keys, units,
    labels), records along the first axis, or several samples (a one-tuple of a list of 1-D arrays, the data of a
    several-sample test): their records are (value, sample) and a variant's samples are its records by sample, k
    of them as in the pair (public); a pair that shares no record, or shares them all, gives no variant."""
    out = []
    for first, second in pairs:
        k = _sample_count(first)
        if k is not None and (_sample_count(second) == k or _sample_count(second) is None and len(second) == k):
            merged = [(_sample_records(first), _sample_records(second))]
            variants = degenerate_neighbours(merged, replace=replace)
            out += [tuple(_samples(v, k, first) for v in pair) for pair in variants]
            continue
        sides = [tuple(np.asarray(p) for p in _records(x)) for x in (first, second)]
        keys = [_record_keys(parts) for parts in sides]
        if keys[0] is None or keys[1] is None:
            continue
        shared = [_shared(keys[0], keys[1]), _shared(keys[1], keys[0])]
        if not shared[0].any() or shared[0].all() and shared[1].all():
            continue
        pattern = [part[_largest(sides[0][0], shared[0])] for part in sides[0]]
        variants = [_with(parts, mask, pattern, keep=()) for parts, mask in zip(sides, shared, strict=True)]
        out.append(_pair(first, variants))
        if replace:
            identifiers = {
                j for j, (a, b) in enumerate(zip(*sides, strict=True)) if _same_values(a[~shared[0]], b[~shared[1]])
            }
            uniform = _with(sides[0], np.ones(len(shared[0]), dtype=bool), pattern, keep=identifiers, only=~shared[0])
            if not all(np.array_equal(u, v) for u, v in zip(uniform, variants[0], strict=True)):
                out.append(_pair(first, [uniform, variants[1]]))
    return out


def _listed(dataset) -> bool:
    return isinstance(dataset, tuple) and len(dataset) == 1 and isinstance(dataset[0], (list, tuple))


def _sample_list(dataset) -> list | None:
    """The samples of a several-sample dataset: ``([s_1, …, s_k],)`` or ``(s_1, …, s_k)`` of 1-D arrays of unequal
    lengths (equal lengths are records of k parts), k >= 2; else None."""
    samples = dataset[0] if _listed(dataset) else dataset
    if not isinstance(samples, (list, tuple)) or len(samples) < 2 or any(np.ndim(s) != 1 for s in samples):
        return None
    if not _listed(dataset) and len({np.size(s) for s in samples}) == 1:
        return None
    return list(samples)


def _sample_count(dataset) -> int | None:
    samples = _sample_list(dataset)
    return None if samples is None else len(samples)


def _sample_records(dataset) -> tuple[np.ndarray, np.ndarray]:
    """Several samples as records: (values, the index of each value's sample)."""
    samples = [np.asarray(sample, dtype=np.float64) for sample in _sample_list(dataset)]
    labels = np.concatenate([np.full(sample.size, j) for j, sample in enumerate(samples)])
    return np.concatenate(samples), labels


def _samples(records: tuple, k: int, like) -> tuple:
    """Records (values, sample index) as the k samples of a several-sample dataset shaped as ``like``."""
    values, labels = records
    samples = [values[labels == j] for j in range(k)]
    return (samples,) if _listed(like) else tuple(samples)


def _with(parts: tuple, mask: np.ndarray, pattern: list, keep, only: np.ndarray | None = None) -> tuple:
    """``parts`` with the records of ``mask`` set to the pattern record (the parts in ``keep`` only where
    ``only`` is False)."""
    changed = []
    for j, (part, value) in enumerate(zip(parts, pattern, strict=True)):
        part = np.array(part, copy=True)
        rows = mask if only is None or j not in keep else mask & ~only
        part[rows] = value
        changed.append(part)
    return tuple(changed)


def _pair(like, variants: list) -> tuple:
    return tuple(v if isinstance(like, tuple) else v[0] for v in variants)


def _same_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two parts' values on the differing records are one set (an identifier of the records that move)."""
    left = {repr(np.asarray(v).tolist()) for v in a}
    right = {repr(np.asarray(v).tolist()) for v in b}
    return left == right


def _largest(values: np.ndarray, among: np.ndarray) -> int:
    """The shared record whose values are largest (Euclidean norm; the first for non-numbers): rows at the norm
    bound make the hardest rank-one data."""
    candidates = np.flatnonzero(among)
    if values.dtype.kind not in "biuf":
        return int(candidates[0])
    sizes = np.abs(values[candidates].reshape(candidates.size, -1).astype(np.float64)).sum(axis=1)
    return int(candidates[np.argmax(sizes)])


def _record_keys(parts: tuple) -> list | None:
    """A comparable key per record (the record's values in every part), or None if the parts are not records of
    one length."""
    n = len(parts[0])
    if any(len(p) != n for p in parts):
        return None
    return [tuple(repr(np.asarray(p[i]).tolist()) for p in parts) for i in range(n)]


def _shared(mine: list, theirs: list) -> np.ndarray:
    """Which of my records the other side holds too (a multiset match: each of theirs matches one of mine)."""
    available: dict = {}
    for key in theirs:
        available[key] = available.get(key, 0) + 1
    found = np.zeros(len(mine), dtype=bool)
    for i, key in enumerate(mine):
        if available.get(key, 0):
            available[key] -= 1
            found[i] = True
    return found


def neighbours_with_a_lone_key(units: bool = False, n: int = 1000) -> list[tuple]:
    """A (values, keys[, units]) pair for grouped releases: n records in the integer keys 0 … 4 (record r in key
    r mod 5: far above a selection's threshold at a small δ), and record 0 in a key of its own — the int 7 on one
    side, the float 7.5 on the other, as Python objects (dtype ``object``: their canonical type is decided from
    the keys themselves) — which a small δ never releases. With ``units``, unit 0 is record 0 alone (its key present
    on both sides, whatever the bounding) and unit u >= 1 holds records 5u − 4 … 5u, one in each key, so that
    bounding to ``max_groups`` keys per unit chooses among them: no other unit's choice may depend on the lone
    key's type. The values lie in [0, 1]."""
    keys = (np.arange(n) % 5).astype(object)
    values = np.linspace(0.0, 1.0, n)
    left, right = keys.copy(), keys.copy()
    left[0], right[0] = 7, 7.5
    if units:
        ids = (np.arange(n) + 4) // 5  # unit 0: record 0 alone (its key is kept whatever the bounding)
        return [((values, left, ids), (values, right, ids))]
    return [((values, left), (values, right))]


def check_release_classes(
    mechanism: Callable, pairs, *, seed: int = 0, replace: bool = True
) -> list[SensitivityReport]:
    """Classes (a) and (b) for one release: :func:`~dpstats.audit.check_sensitivity` on every pair and on its
    :func:`degenerate_neighbours` (the same control flow and sensitivities, the same outcome and refusal, the same
    structure; ``replace`` as there). Returns one report per pair run; every report's ``violations`` must be
    empty."""
    every = [*pairs, *degenerate_neighbours(pairs, replace=replace)]
    return [check_sensitivity(mechanism, a, b, seed=seed + i) for i, (a, b) in enumerate(every)]


def check_forked_spend(release: Callable, *, timeout: float = 120.0) -> tuple[str, ...]:
    """Class (c): ``release(accountant)`` run in a forked child with an in-memory accountant created here must be
    refused before anything is released (a fork copies the accountant, and a spend on the copy would never reach
    it). Returns the violations: the child released, or raised something other than
    :class:`~dpstats.exceptions.AccountantSharingError`, or this process's ledger changed. The release must charge
    the accountant it is given (a positive control here first: it must record an entry in this process). Needs the
    fork start method (Linux, macOS); elsewhere a fork cannot copy an accountant, and nothing is checked."""
    import multiprocessing

    from ..accounting import Accountant

    if "fork" not in multiprocessing.get_all_start_methods():
        return ()
    control = Accountant(1e6, 0.5, composition="basic")
    release(control)
    if not control.ledger:
        return ("the release does not charge the accountant it is given",)
    context = multiprocessing.get_context("fork")
    accountant = Accountant(1e6, 0.5, composition="basic")
    reader, writer = context.Pipe(duplex=False)

    def child():
        try:
            release(accountant)
            writer.send("released")
        except BaseException as err:  # noqa: BLE001 - the outcome is what the parent reads
            writer.send(f"{type(err).__name__}: {err}")

    process = context.Process(target=child)
    process.start()
    outcome = reader.recv() if reader.poll(timeout) else "no answer"
    process.join(timeout)
    violations = []
    if not outcome.startswith("AccountantSharingError"):
        violations.append(f"a spend in a forked process was not refused: {outcome}")
    if accountant.ledger:
        violations.append("the creating process's ledger changed")
    return tuple(violations)
