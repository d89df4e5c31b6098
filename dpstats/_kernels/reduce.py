"""Sums over blocks of rows whose result does not depend on how the rows are cut into chunks, cores or workers.

Every statistic that is a sum over rows (XᵀX, the gradient of an ERM
objective, ...) is computed over **blocks** of a public number of rows r: block
j holds rows [j·r, (j + 1)·r) of the whole data (the last one ends at n). Both
engines use the same blocks:

* NumPy (in memory, :mod:`dpstats._engine.numpy_engine`) hands the whole array
  over as one chunk, or one chunk per core;
* Dask (:mod:`dpstats._engine.dask_engine`) hands over its chunks, whose sizes
  are whatever the data came with.

A chunk computes the blocks that lie inside it; the rows of a block cut by a
chunk boundary travel as a **piece** (a copy of at most r − 1 rows) and the
block is computed when the neighbouring chunks meet (:func:`merge_parts`), from
the same rows in one array. The block results are then added in a way that
does not depend on the chunks either:

* integers exactly (:class:`ExactSum`), in any order;
* floats by a fixed binary tree over the block indices (:class:`DyadicSum`):
  node (level k, index i) is the sum of blocks [i·2^k, (i + 1)·2^k), always as
  left child + right child, and the whole sum adds the nodes of the binary
  decomposition of [0, n_b) from the right. A chunk holds the complete nodes
  of its own range; merging two neighbouring ranges joins sibling nodes. So the
  result is bitwise the same for any cut into chunks (given the same per-block
  arithmetic), and every block result goes through at most
  2⌈log₂ n_b⌉ + 1 additions, fewer than the n_b + 2 that the error bounds of
  :mod:`dpstats._kernels.gram` and :mod:`dpstats.linear_model._erm` allow for.

Nothing here reads a chunk size into a calibration: the block size r and the
error bounds depend on public quantities (n, d) only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["DyadicSum", "ExactSum", "Part", "chunk_part", "merge_parts"]

_INT64_ROOM = 2**62


class ExactSum:
    """Adds int64 arrays exactly: in int64 until the next term could overflow, then into Python integers.

    ``max_term`` bounds the absolute value of every entry of every term (public); the order of the terms does not
    matter (the result is exact).
    """

    def __init__(self, shape: tuple[int, ...], max_term: float) -> None:
        self._fast = np.zeros(shape, dtype=np.int64)
        self._slow = None  # Python integers, once int64 could overflow
        self._room = max(1, int(_INT64_ROOM // max(max_term, 1.0)))
        self._count = 0

    def add(self, term: np.ndarray) -> None:
        """Add one term (an int64 array of the accumulator's shape)."""
        if self._count == self._room:
            self._flush()
        self._fast += term
        self._count += 1

    def push(self, index: int, term: np.ndarray) -> None:
        """Add the result of block ``index`` (the index does not matter for an exact sum)."""
        self.add(term)

    def extend(self, other: ExactSum) -> None:
        """Add another accumulator's total."""
        if (
            self._slow is None
            and other._slow is None
            and self._room == other._room
            and self._count + other._count <= self._room
        ):  # still no overflow possible: stay in int64
            self._fast += other._fast
            self._count += other._count
            return
        self._flush()
        self._slow = self._slow + other.total().astype(object)

    def copy(self) -> ExactSum:
        """An independent accumulator with the same total."""
        twin = ExactSum(self._fast.shape, 1.0)
        twin._fast, twin._room, twin._count = self._fast.copy(), self._room, self._count
        twin._slow = None if self._slow is None else self._slow.copy()
        return twin

    def _flush(self) -> None:
        fast = self._fast.astype(object)
        self._slow = fast if self._slow is None else self._slow + fast
        self._fast = np.zeros_like(self._fast)
        self._count = 0

    def total(self) -> np.ndarray:
        """The exact sum: an int64 array while it fits, else an object array of Python ints."""
        if self._slow is None:
            return self._fast
        self._flush()
        slow = self._slow
        if slow.size and np.abs(slow).max() < _INT64_ROOM:
            return slow.astype(np.int64)
        return slow


@dataclass
class DyadicSum:
    """A floating-point sum of block results over a fixed binary tree of the block indices (module docstring).

    ``nodes`` are (level, index, value) of the complete tree nodes of a contiguous range of blocks, left to right;
    push block results in increasing index order, and extend by the sum of the range that follows.
    """

    nodes: list = field(default_factory=list)

    def push(self, index: int, value: np.ndarray) -> None:
        """Append the result of block ``index`` (the block after the last one pushed or extended)."""
        self.nodes.append((0, index, value))
        self._join_last()

    def extend(self, other: DyadicSum) -> None:
        """Append the nodes of the range that follows this one, joining siblings."""
        for node in other.nodes:
            self.nodes.append(node)
            self._join_last()

    def copy(self) -> DyadicSum:
        """An independent accumulator with the same nodes (node values are never changed in place)."""
        return DyadicSum(list(self.nodes))

    def _join_last(self) -> None:
        nodes = self.nodes
        while len(nodes) >= 2:
            (level_a, index_a, a), (level_b, index_b, b) = nodes[-2], nodes[-1]
            if level_a != level_b or index_a % 2 or index_b != index_a + 1:
                return
            nodes[-2:] = [(level_a + 1, index_a // 2, a + b)]

    def total(self) -> np.ndarray:
        """The sum: the remaining nodes added from the right (the tree of the whole range [0, n_b))."""
        if not self.nodes:
            raise ValueError("an empty DyadicSum has no total")
        value = self.nodes[-1][2]
        for _, _, left in reversed(self.nodes[:-1]):
            value = left + value
        return value


@dataclass
class Part:
    """What a chunk of rows [start, stop) contributes: its complete blocks summed, the pieces of the blocks it
    shares with its neighbours, and the validation results of its rows.

    Attributes
    ----------
    start, stop : int
        The rows covered, in the numbering of the whole data.
    pieces : dict
        Block index -> (first row, tuple of arrays): the rows of a block that is not complete in this range.
    body : ExactSum or DyadicSum
        The results of the complete blocks.
    checks : object
        Whatever the caller's ``check`` returned for the rows, combined with ``+`` (None: nothing found).
    """

    start: int
    stop: int
    pieces: dict
    body: object
    checks: object = None


def _block_range(j: int, rows: int, n: int) -> tuple[int, int]:
    return j * rows, min((j + 1) * rows, n)


def _add_checks(a, b):
    if a is None:
        return b
    return a if b is None else a + b


def chunk_part(
    arrays: tuple, start: int, n: int, rows: int, leaf: Callable, new_sum: Callable, check: Callable | None = None
) -> Part:
    """The :class:`Part` of rows [start, start + len(arrays[0])) of data with ``n`` rows in blocks of ``rows``.

    Parameters
    ----------
    arrays : tuple of numpy.ndarray
        Row-aligned arrays of the chunk (X, or X and y, ...).
    start : int
        Index of the chunk's first row in the whole data.
    n, rows : int
        Rows of the whole data, rows per block (public).
    leaf : callable
        ``leaf(*block_arrays)`` -> the block's result.
    new_sum : callable
        Returns an empty accumulator (:class:`ExactSum` or :class:`DyadicSum`).
    check : callable, optional
        ``check(*segment_arrays)`` -> None if the rows are valid, else an object describing what is wrong
        (combined with ``+``). Once a check fails, no more block results are computed (the release will raise).
    """
    stop = start + len(arrays[0])
    part = Part(start, stop, {}, new_sum())
    position = start
    while position < stop:
        j = position // rows
        block_start, block_stop = _block_range(j, rows, n)
        end = min(block_stop, stop)
        segment = tuple(a[position - start : end - start] for a in arrays)
        if check is not None:
            part.checks = _add_checks(part.checks, check(*segment))
        if part.checks is None:
            if position == block_start and end == block_stop:
                part.body.push(j, leaf(*segment))
            else:  # a copy: the piece must not keep the whole chunk alive
                part.pieces[j] = (position, tuple(np.array(s, copy=True) for s in segment))
        position = end
    return part


def merge_parts(left: Part, right: Part, n: int, rows: int, leaf: Callable) -> Part:
    """The :class:`Part` of left's rows followed by right's (``left.stop == right.start``)."""
    if left.stop != right.start:
        raise ValueError(f"parts are not adjacent: rows [{left.start}, {left.stop}) and [{right.start}, {right.stop})")
    checks = _add_checks(left.checks, right.checks)
    if checks is not None:  # invalid data: only the checks matter now
        return Part(left.start, right.stop, {}, left.body, checks)
    pieces = {**left.pieces, **right.pieces}
    body = left.body.copy()  # parts are task results: never changed in place
    shared = left.pieces.keys() & right.pieces.keys()
    for j in shared:  # at most one block: the one that spans the boundary
        (first, a), (_, b) = left.pieces[j], right.pieces[j]
        joined = tuple(np.concatenate([x, y]) for x, y in zip(a, b, strict=True))
        block_start, block_stop = _block_range(j, rows, n)
        if first == block_start and first + len(joined[0]) == block_stop:
            del pieces[j]
            body.push(j, leaf(*joined))
        else:
            pieces[j] = (first, joined)
    body.extend(right.body)
    return Part(left.start, right.stop, pieces, body, None)
