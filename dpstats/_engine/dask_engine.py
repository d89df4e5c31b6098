"""The Dask engine: every statistic streamed over the chunks of a dask array or DataFrame, in one compute.

Imported only when a dask object reaches a mechanism (:func:`dpstats._engine.engine_of`); all dask-specific code
of dpstats is here, behind the engine interface of :mod:`dpstats._engine`. Each function builds one graph: a task
per chunk that validates its rows and computes its share of the statistic (the same NumPy kernels the in-memory
engine runs, :mod:`dpstats._kernels`), then a tree of small tasks that combines the shares in chunk order, and one
``dask.compute``. Only the combined statistic (a few numbers, a d × d matrix) reaches the client, where the noise
is drawn from the caller's ``rng``, exactly as in memory. Data are never gathered: a chunk is released as soon as
its share is computed, so a worker holds a few chunks at a time, whatever the size of the data.

Privacy: nothing here reads a chunk size, a partition or the cluster's shape into a calibration. The statistics
are defined over blocks of a public number of rows at global row positions (:mod:`dpstats._kernels.reduce`); a chunk
boundary only decides where a block's rows are multiplied, never which rows form a block. So the integer
statistics are the NumPy engine's exactly, the floating-point ones bitwise the same (the same per-block
arithmetic, added by the same fixed tree), and every error bound of the in-memory engine holds unchanged. One
exception: low_rank's projection QᵀA (:func:`row_product`) is summed per chunk in chunk order, so its last bits
depend on the chunking; its release stays private because its error bound (``lowrank``) holds in any order.

Scheduler: whatever dask would use (a ``distributed.Client`` when one is active, else local threads).
"""

from __future__ import annotations

import functools
import operator
from dataclasses import replace

import dask
import dask.array as da
import numpy as np

from .._kernels import groups
from .._kernels.fixed_point import BinCounts, ChunkSums, FixedPoint, chunk_bin_counts
from .._kernels.reduce import Part, chunk_part, merge_parts
from .._kernels.rows import scaled_rows
from .._kernels.units import (
    IdSummary,
    UnitSums,
    canonical_ids,
    convert_ids,
    describe_ids,
    id_target,
    row_hashes,
    select_rows,
    unit_chunk_sums,
)
from .._validation import check_numeric_dtype
from ..exceptions import DataValidationError
from . import numpy_engine
from .units import Bounded, Units

__all__ = [
    "LAZY",
    "as_array",
    "bin_counts",
    "bound_rows",
    "bounded_row_count",
    "check_row_norms",
    "fixed_point_sums",
    "key_table",
    "lazy_product",
    "map_row_blocks",
    "map_rows",
    "persist_rows",
    "reduce_rows",
    "row_product",
    "signed_labels",
    "sketch",
    "sum_chunks",
    "unit_sums",
]

#: Results as large as the data (a low-rank approximation, predictions) stay lazy, in the data's row chunks.
LAZY = True

#: Shares combined per task of the reduction tree.
SPLIT_EVERY = 8
#: Chunk size the ERM solver rechunks its persisted data to (whole blocks of rows).
ERM_CHUNK_BYTES = 64 * 2**20


def as_array(x, name: str, *, ndim: tuple[int, ...], min_rows: int = 1) -> da.Array:
    """A dask array, DataFrame or Series as a lazy float64 dask array with known chunk sizes.

    A DataFrame's (or an array's) unknown partition lengths are counted first (``n`` is public, and the blocks
    of :mod:`dpstats._kernels.reduce` sit at global row positions); for parquet dask reads them from the metadata.
    Nothing else is read here: the statistic's own pass over the data validates it.
    """
    if hasattr(x, "to_dask_array"):  # DataFrame or Series: the columns the caller selected, in order
        array = x.to_dask_array(lengths=True)
    elif isinstance(x, da.Array):
        array = x
    else:
        raise DataValidationError(f"{name} must be a dask array, DataFrame or Series; got {type(x).__name__}")
    check_numeric_dtype(array.dtype, name)
    if array.ndim not in ndim:
        allowed = " or ".join(f"{d}-D" for d in ndim)
        raise DataValidationError(f"{name} must be {allowed}; got an array of shape {array.shape}")
    if any(np.isnan(size) for size in array.shape):
        array = array.compute_chunk_sizes()
    rows = array.shape[0] if array.ndim else 1
    if rows < min_rows:
        raise DataValidationError(f"{name} must have at least {min_rows} row(s); got shape {array.shape}")
    return array.astype(np.float64)


def check_row_norms(X: da.Array, name: str, *, max_norm: float, clip: bool) -> da.Array:
    """Not read here: with ``clip`` rows of norm > ``max_norm`` are scaled down to it lazily; either way the
    statistic's pass checks the rows (every dask statistic of rows with a norm bound does)."""
    return _whole_rows(X).map_blocks(scaled_rows, max_norm, dtype=np.float64) if clip else X


# ----------------------------------------------------------------------------- one compute over the chunks


def _whole_rows(array: da.Array) -> da.Array:
    """``array`` chunked along its first axis only (a row is never cut)."""
    return array.rechunk({axis: -1 for axis in range(1, array.ndim)}) if array.ndim > 1 else array


def _aligned(arrays: tuple) -> tuple:
    """Row-aligned dask arrays with whole rows: the chunks of the first, given to the others. Arrays whose chunk
    lengths are unknown (the kept rows of :func:`bound_rows`, partitions of one frame) get them counted, once."""
    arrays = tuple(a if isinstance(a, da.Array) else da.from_array(np.asarray(a)) for a in arrays)
    arrays = _with_lengths(tuple(_whole_rows(a) for a in arrays))
    rows = arrays[0].chunks[0]
    return tuple(a if a.chunks[0] == rows else a.rechunk({0: rows}) for a in arrays)


def _with_lengths(arrays: tuple) -> tuple:
    """``arrays`` with known chunk lengths along the rows: counted in one pass over the first array's chunks and
    given to every array whose row chunks are the same number of unknown lengths (partitions of one frame)."""
    unknown = [any(np.isnan(size) for size in a.chunks[0]) for a in arrays]
    if not any(unknown):
        return arrays
    first = arrays[unknown.index(True)]
    (lengths,) = dask.compute([dask.delayed(len)(block) for block in first.to_delayed().ravel()])
    lengths = tuple(int(size) for size in lengths)
    return tuple(
        da.Array(a.dask, a.name, (lengths, *a.chunks[1:]), meta=a._meta) if lost else a
        for a, lost in zip(arrays, unknown, strict=True)
    )


def _shares(fn, *arrays, starts: bool = False) -> list:
    """``fn(chunk of each array)`` (``fn(start, chunks...)`` with ``starts``, the chunk's first row) for every row
    chunk, as delayed values in row order: one task per chunk, on the chunk's key, so the scheduler runs it where
    its chunk is and only the small result moves. The starts are literals of the tasks (no task of their own).
    (Measured with dask 2026.8 on a LocalCluster: a blockwise layer turned into delayed values, with the starts as a
    dask array, cost 40 % more than dask's own X.T @ X on persisted chunks; these tasks cost 10 %.)"""
    columns = [array.to_delayed().ravel() for array in arrays]
    task = dask.delayed(fn, pure=False)
    if not starts:
        return [task(*chunks) for chunks in zip(*columns, strict=True)]
    edges = np.concatenate([[0], np.cumsum(arrays[0].chunks[0])[:-1]]).tolist()
    return [task(int(edge), *chunks) for edge, *chunks in zip(edges, *columns, strict=True)]


def _tree(shares: list, combine):
    """Combine the delayed shares of :func:`_shares`, in order, by a tree of tasks (``combine`` takes a list);
    compute once."""
    level = shares
    while len(level) > 1:
        level = [
            dask.delayed(combine, pure=False)(level[i : i + SPLIT_EVERY]) for i in range(0, len(level), SPLIT_EVERY)
        ]
    (result,) = dask.compute(level[0])
    return result


def _sum_all(shares: list):
    return functools.reduce(operator.add, shares)


def reduce_rows(arrays: tuple, rows: int, leaf, new_sum, check=None, *, parallel: bool = False) -> Part:
    """:func:`dpstats._engine.numpy_engine.reduce_rows` over the chunks of dask arrays: a
    :func:`~dpstats._kernels.reduce.chunk_part` task per chunk (validation and the chunk's complete blocks),
    :func:`~dpstats._kernels.reduce.merge_parts` in a tree (the blocks cut by chunk boundaries), one compute.
    ``parallel`` is the scheduler's business here (every chunk is a task)."""
    arrays = _aligned(arrays)
    n = arrays[0].shape[0]
    task = functools.partial(_chunk_part, n=n, rows=rows, leaf=leaf, new_sum=new_sum, check=check)
    return _tree(_shares(task, *arrays, starts=True), functools.partial(_merge_all, n=n, rows=rows, leaf=leaf))


def sum_chunks(arrays: tuple, share, *, parallel: bool = False):
    """``share`` of every row chunk of the row-aligned dask ``arrays``, as they come (one task per chunk: no row
    moves), added by a tree of tasks with ``+``; one compute."""
    return _tree(_shares(share, *_aligned(arrays)), _sum_all)


def _chunk_part(start: int, *arrays, n: int, rows: int, leaf, new_sum, check) -> Part:
    return chunk_part(arrays, start, n, rows, leaf, new_sum, check)


def _merge_all(parts: list, n: int, rows: int, leaf) -> Part:
    total = parts[0]
    for part in parts[1:]:
        total = merge_parts(total, part, n, rows, leaf)
    return total


def fixed_point_sums(x: da.Array, grid: FixedPoint, *, axis, clip: bool) -> ChunkSums:
    """:meth:`dpstats._kernels.fixed_point.FixedPoint.chunk_sums` of every chunk of records, added exactly (the
    chunks' lengths need not be known: after contribution bounding they are not)."""
    records = x if axis in (None, 0) else da.moveaxis(x, axis, 0)
    return _tree(_shares(functools.partial(_chunk_sums, grid=grid, clip=clip), _whole_rows(records)), _sum_all)


def _chunk_sums(chunk: np.ndarray, grid: FixedPoint, clip: bool) -> ChunkSums:
    return grid.chunk_sums(chunk.reshape(len(chunk), -1), clip)


def bin_counts(x: da.Array, bins: int, lower: float, upper: float, *, clip: bool) -> BinCounts:
    """:func:`dpstats._kernels.fixed_point.chunk_bin_counts` of every chunk, added."""
    count = functools.partial(chunk_bin_counts, bins=bins, lower=lower, upper=upper, clip=clip)
    return _tree(_shares(count, x), _sum_all)


# ----------------------------------------------------------------------------- privacy units


def bound_rows(arrays: tuple, units: Units, key: int, canonical: bool = False) -> Bounded:
    """At most ``units.max_rows`` rows of each unit, chosen on the cluster: the rows are shuffled by unit (dask's
    DataFrame shuffle: every unit's rows meet in one partition, nothing is gathered on the client), then each
    partition keeps its units' rows by :func:`dpstats._kernels.units.select_rows` — the same rows as in memory, for
    the same key. The kept rows come back as dask arrays of unknown chunk lengths (the number of rows kept is not
    public, and is not computed here); the number of units is counted on the cluster. ``canonical`` orders each
    partition's kept rows by their keyed hashes (the partitions' order is the shuffle's)."""
    import dask.dataframe as dd

    ids = units.ids if isinstance(units.ids, da.Array) else da.from_array(np.asarray(units.ids))
    *data, ids = _aligned((*arrays, ids))
    widths = [int(np.prod(a.shape[1:], dtype=np.int64)) for a in data]
    columns = [dd.from_dask_array(ids, columns=["unit"])]
    for k, (array, width) in enumerate(zip(data, widths, strict=True)):
        flat = array.reshape(array.shape[0], width) if array.ndim != 2 else array
        columns.append(dd.from_dask_array(flat, columns=[f"a{k}_{j}" for j in range(width)]))
    frame = dd.concat(columns, axis=1)
    count = frame["unit"].nunique()
    select = functools.partial(
        _bound_partition, key=key, max_rows=units.max_rows, widths=tuple(widths), canonical=canonical
    )
    kept = frame.shuffle(on="unit").map_partitions(select, meta=frame._meta)
    out, start = [], 1
    for array, width in zip(data, widths, strict=True):
        out.append(_unflattened(kept.iloc[:, start : start + width].to_dask_array(), array.shape[1:]))
        start += width
    (distinct,) = dask.compute(count)
    return Bounded(tuple(out), int(distinct), units.max_rows)


def _unflattened(values: da.Array, shape: tuple) -> da.Array:
    """The n × width columns of one array back in its record shape (chunks of unknown length along the rows)."""
    if shape == ():
        return values[:, 0]
    if len(shape) == 1:
        return values
    chunks = (values.chunks[0], *((size,) for size in shape))
    return values.map_blocks(
        lambda block: block.reshape(len(block), *shape),
        chunks=chunks,
        new_axis=list(range(2, len(shape) + 1)),
        dtype=values.dtype,
    )


def _bound_partition(frame, key: int, max_rows: int, widths: tuple, canonical: bool):
    """The rows of one shuffled partition that its units keep (every unit's rows are in this partition); the data
    columns are split back into the call's arrays, so the priorities are the in-memory engine's."""
    values = frame.iloc[:, 1:].to_numpy(dtype=np.float64)
    edges = np.cumsum((0, *widths))
    arrays = tuple(values[:, a:b] for a, b in zip(edges[:-1], edges[1:], strict=True))
    keep, _ = select_rows(canonical_ids(frame["unit"].to_numpy()), arrays, max_rows, key)
    rows = np.flatnonzero(keep)
    if canonical:
        rows = rows[np.argsort(row_hashes(tuple(a[rows] for a in arrays), key), kind="stable")]
    return frame.iloc[rows]


def unit_sums(records, units: Units, key: int, grid: FixedPoint, check: FixedPoint, clip: bool) -> UnitSums:
    """Contribution bounding, the check of every record and the exact sums of the kept records, in one shuffle.

    The identifiers and the records (flattened to one row each) become one dask DataFrame, shuffled by unit (every
    unit's rows meet in one partition; nothing is gathered on the client). Each partition of the shuffle is one
    task, :func:`dpstats._kernels.units.unit_chunk_sums`: it checks every record it holds against the bounds (kept or
    not: each record is in exactly one partition, so every record is checked once), keeps the rows of
    :func:`~dpstats._kernels.units.select_rows` (the in-memory engine's rows for the same key: their priorities
    are the rows' own), sums them exactly, and counts its units (all rows of a unit are in its partition, so the
    counts add up to the number of units) and its missing identifiers. The results are added by a tree of tasks:
    one compute, and only a few integers reach the client. So the data are read once, by the shuffle; there is
    no pass of the check, the unit count or the identifiers of their own (identifiers whose dtype does not decide
    their kind are described first, :func:`dpstats._engine.units.canonical_units`)."""
    import dask.dataframe as dd

    ids = units.ids if isinstance(units.ids, da.Array) else da.from_array(np.asarray(units.ids))
    records, ids = _aligned((records, ids))
    width = int(np.prod(records.shape[1:], dtype=np.int64))
    flat = records.reshape(records.shape[0], width) if records.ndim != 2 else records
    frame = dd.concat(
        [dd.from_dask_array(ids, columns=["unit"]), dd.from_dask_array(flat, columns=[f"v{j}" for j in range(width)])],
        axis=1,
    )
    shuffled = frame.shuffle(on="unit")  # as many partitions as chunks (4x as many: no less memory, 20 % slower)
    # a map of the partitions (fused with the shuffle's output: each partition is bounded and summed where it is
    # unpacked, and only its result is kept); the results, one object each, added by a tree of tasks
    shares = shuffled.map_partitions(
        _partition_sums,
        max_rows=units.max_rows,
        key=key,
        grid=grid,
        check=check,
        clip=clip,
        meta=_share_meta(),
        enforce_metadata=False,
    )
    return _tree([dask.delayed(_share_of)(part) for part in shares.to_delayed()], _sum_all)


def _share_meta():
    import pandas as pd

    return pd.Series([], dtype=object)


def _share_of(series) -> UnitSums:
    return series.iloc[0]


def _partition_sums(frame, max_rows: int, key: int, grid: FixedPoint, check: FixedPoint, clip: bool):
    """:func:`dpstats._kernels.units.unit_chunk_sums` of one partition of the shuffle by unit (as a one-element
    Series, the form a map of partitions returns)."""
    import pandas as pd

    ids = frame["unit"].to_numpy()
    if ids.dtype.kind not in "iuf":  # labels (Python strings after canonical_units): as NumPy strings
        ids = canonical_ids(ids)
    values = frame.iloc[:, 1:].to_numpy(dtype=np.float64)
    found = unit_chunk_sums(ids, values, max_rows, key, grid, check, clip)
    return pd.Series([found], dtype=object)


def bounded_row_count(units: Units) -> tuple[int, int]:
    """Σ_u min(c_u, m) and the number of units, counted on the cluster (only the two numbers come back)."""
    import dask.dataframe as dd

    ids = units.ids if isinstance(units.ids, da.Array) else da.from_array(np.asarray(units.ids))
    counts = dd.from_dask_array(ids).value_counts()
    kept, distinct = dask.compute(counts.clip(upper=units.max_rows).sum(), counts.size)
    return int(kept), int(distinct)


def key_table(keys, units, values, spec: groups.GroupSpec) -> groups.KeyTable:
    """:func:`dpstats._kernels.groups.key_table` on the cluster: the rows (key, unit, values) as one dask DataFrame,
    shuffled by unit when there is one (every unit's rows meet in one partition; nothing is gathered on the
    client), a table per partition, and the tables added by a tree of tasks (:func:`~dpstats._kernels.groups.
    merge_tables`, exact integers): only the per-key statistics reach the client, the same as in memory."""
    import dask.dataframe as dd

    keys = keys if isinstance(keys, da.Array) else da.from_array(np.asarray(keys))
    keys, spec, missing = _canonical_keys(keys, spec)
    if missing:
        none = np.zeros(0, dtype=np.int64)
        return groups.KeyTable(none, none, none, missing=missing)
    arrays = [
        a if isinstance(a, da.Array) else da.from_array(np.asarray(a)) for a in (keys, units, values) if a is not None
    ]
    arrays = _aligned(tuple(arrays))
    columns = [dd.from_dask_array(arrays[0], columns=["key"])]
    if units is not None:
        columns.append(dd.from_dask_array(arrays[1], columns=["unit"]))
    width = 0
    if values is not None:
        flat = arrays[-1]
        width = int(np.prod(flat.shape[1:], dtype=np.int64))
        flat = flat.reshape(flat.shape[0], width) if flat.ndim != 2 else flat
        columns.append(dd.from_dask_array(flat, columns=[f"v{j}" for j in range(width)]))
    frame = dd.concat(columns, axis=1) if len(columns) > 1 else columns[0]
    if units is not None:
        frame = frame.shuffle(on="unit")
    task = functools.partial(_partition_table, spec=spec, by_unit=units is not None, width=width)
    shares = [dask.delayed(task, pure=False)(part) for part in frame.to_delayed()]
    return _tree(shares, groups.merge_tables)


def _canonical_keys(keys: da.Array, spec: groups.GroupSpec) -> tuple[da.Array, groups.GroupSpec, int]:
    """(the keys in one type over all partitions, the spec to read them with, the number of missing keys).

    The kernel makes keys canonical (:func:`~dpstats._kernels.units.canonical_ids`) from the keys it is given;
    per partition that would give each partition its own type (object keys as the strings a DataFrame makes of
    them, an int in one partition and a float or a string in another merged or compared as strings), where memory
    decides from all keys at once. So the rule is applied here to all of them, as for privacy units
    (:func:`dpstats._engine.units.canonical_units`):

    * public ``categories``: every key becomes its position in the list (−1 outside), lazily, and the partitions
      look up positions (the categories become ``0, 1, …``): the same codes as in memory;
    * object keys: every block is described (counts only), the descriptions are added on the client (missing keys
      counted, mixed kinds refused by the rule and message of memory, before anything is computed from the data),
      and every block is converted to the one type they decide;
    * typed keys (numbers, strings): their dtype is one type already.
    """
    if spec.categories is not None:
        codes = keys.map_blocks(groups.category_positions, spec.categories, dtype=np.int64)
        return codes, replace(spec, categories=tuple(range(len(spec.categories)))), 0
    if keys.dtype.kind != "O":
        return keys, spec, 0
    describe = dask.delayed(describe_ids, pure=True)
    summary = sum(dask.compute(*(describe(block) for block in keys.to_delayed().ravel())), IdSummary())
    if summary.missing:
        return keys, spec, summary.missing
    target = id_target(summary, spec.name)
    dtype = np.dtype(object) if target == "str" else np.dtype(target)
    return keys.map_blocks(_converted_keys, target, dtype=dtype, meta=np.empty(0, dtype=dtype)), spec, 0


def _converted_keys(block: np.ndarray, target: str) -> np.ndarray:
    values = convert_ids(np.asarray(block), target)
    return values.astype(object) if target == "str" else values


def _partition_table(frame, spec: groups.GroupSpec, by_unit: bool, width: int) -> groups.KeyTable:
    """The table of one partition (after the shuffle, every unit's rows are in it)."""
    keys = frame["key"]
    if getattr(keys.dtype, "kind", "O") not in "biuf":  # labels: missing as None, as in memory
        keys = keys.astype(object).where(keys.notna(), None).to_numpy(dtype=object)
    else:
        keys = keys.to_numpy()
    units = canonical_ids(frame["unit"].to_numpy()) if by_unit else None
    values = frame.iloc[:, frame.shape[1] - width :].to_numpy(dtype=np.float64) if width else None
    return groups.key_table(keys, units, values, spec)


# ----------------------------------------------------------------------------- solvers' passes (ERM, low rank)


def persist_rows(X, y, rows: int) -> tuple[da.Array, da.Array]:
    """X and y rechunked to whole blocks of ``rows`` rows (about :data:`ERM_CHUNK_BYTES` per chunk) and persisted:
    the ERM solver reads them once per evaluation (on a cluster they stay in the workers' memory, spilling to
    disk; on local threads, in this process)."""
    X, y = _aligned((X, y))
    step = rows * max(1, ERM_CHUNK_BYTES // (rows * 8 * X.shape[1]))
    return dask.persist(X.rechunk({0: step}), y.rechunk({0: step}))


def map_rows(blockwise, X: da.Array, y: da.Array) -> da.Array:
    """``blockwise(X_chunk, y_chunk)`` (one value per row) for every chunk, persisted beside X."""
    values = da.blockwise(blockwise, "i", X, "ij", y, "i", dtype=np.float64, concatenate=True)
    return values.persist()


def sketch(A, omega: np.ndarray, lower: float, upper: float) -> tuple[int, int, np.ndarray]:
    """One pass over A for the range finder of :func:`dpstats.low_rank`: the number of NaN or infinite values,
    the number of rows with an entry outside [lower, upper], and AΩ (gathered: m × ℓ)."""
    chunk = functools.partial(numpy_engine.sketch, omega=omega, lower=lower, upper=upper)
    return _tree(_shares(chunk, _whole_rows(A)), _join_sketches)


def _join_sketches(shares: list):
    return sum(s[0] for s in shares), sum(s[1] for s in shares), np.concatenate([s[2] for s in shares])


def row_product(Q: np.ndarray, A) -> np.ndarray:
    """QᵀA for Q on the client (m × ℓ) and A in chunks of rows: Σ_chunks Q_cᵀA_c, one compute."""
    return _tree(_shares(functools.partial(_transposed_product, Q=Q), _whole_rows(A), starts=True), _sum_all)


def _transposed_product(start: int, A: np.ndarray, Q: np.ndarray) -> np.ndarray:
    return Q[start : start + A.shape[0]].T @ A


def lazy_product(L: np.ndarray, R: np.ndarray, like) -> da.Array:
    """The lazy product L @ R (m × n) in the row chunks of ``like``: a result as large as the data stays lazy."""
    left = da.from_array(L, chunks=(_whole_rows(like).chunks[0], -1))
    return left @ R


def map_row_blocks(fn, X: da.Array, width: int) -> da.Array:
    """``fn`` (rows to rows of ``width`` columns) applied chunk by chunk, lazily."""
    X = _whole_rows(X)
    return X.map_blocks(fn, chunks=(X.chunks[0], (width,)), dtype=np.float64)


def signed_labels(y, classes: np.ndarray) -> da.Array:
    """Labels mapped lazily to +1 (``classes[1]``), −1 (``classes[0]``) and NaN (any other label)."""
    labels = y.to_dask_array(lengths=True) if hasattr(y, "to_dask_array") else y
    if not isinstance(labels, da.Array):
        labels = da.from_array(np.asarray(labels))
    if any(np.isnan(size) for size in labels.shape):
        labels = labels.compute_chunk_sizes()
    return labels.map_blocks(numpy_engine.signed_labels, classes, dtype=np.float64)
