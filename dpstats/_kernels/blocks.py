"""Blocks of rows that fit in a cache, for the loops that read a large array once and reduce it several ways."""

from __future__ import annotations

import functools

# About one core's share of cache: a block read from memory is still there for its next reduction.
CACHE_BLOCK_BYTES = 1 << 20


def block_rows(row_bytes: int, block_bytes: int | None = None, min_rows: int = 1) -> int:
    """Rows per block of about ``block_bytes`` (default :data:`CACHE_BLOCK_BYTES`) for rows of ``row_bytes``,
    at least ``min_rows``."""
    return max(min_rows, (block_bytes or CACHE_BLOCK_BYTES) // max(1, row_bytes))


@functools.cache
def _blas_controller():
    """threadpoolctl's handle on the BLAS libraries loaded so far (numpy's is loaded with numpy); made once,
    because finding the libraries costs milliseconds per call (more with many libraries loaded)."""
    from threadpoolctl import ThreadpoolController  # installed with scikit-learn

    return ThreadpoolController()


def single_threaded_blas():
    """A context in which BLAS runs on one thread (for work that runs its own threads, or many mid-sized calls)."""
    return _blas_controller().limit(limits=1, user_api="blas")
