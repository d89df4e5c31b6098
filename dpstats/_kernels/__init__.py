"""Exact blockwise statistics on NumPy arrays: what a block of rows contributes, and how blocks add up.

* :mod:`~dpstats._kernels.blocks` — blocks of rows that fit in a cache;
* :mod:`~dpstats._kernels.reduce` — sums over blocks of a public number of rows, exact (integers) or by a fixed
  binary tree (floats), whatever the chunking;
* :mod:`~dpstats._kernels.rows` — row-norm checks and clipping;
* :mod:`~dpstats._kernels.fixed_point` — exact sums of bounded records on a public fixed-point grid, bin counts;
* :mod:`~dpstats._kernels.gram` — the Gram matrix XᵀX and its public error bounds.

Nothing here knows which engine reads the data: the engines (:mod:`dpstats._engine`) hand chunks of NumPy rows to
these functions and add the results.
"""
