"""Peak memory of Analyze Gauss: no hidden n×n matrices and no copies of X.

Target: X plus everything ``pca_ag`` allocates stays within 1.2 × (size of X + one d×d matrix).
Allocations are traced with tracemalloc, which NumPy reports its buffers to.
"""

from __future__ import annotations

import numpy as np

import dpstats as dps

from ._harness import Results, peak_allocation, status

LIMIT = 1.2


def run(results: Results, *, tiny: bool, repeats: int) -> None:
    n, d = (10_000, 20) if tiny else (1_000_000, 100)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    peak = peak_allocation(lambda: dps.pca_ag(X, 1.0, 1e-5, rng=0))
    ratio = (X.nbytes + peak) / (X.nbytes + d * d * 8)
    results.add(
        "memory",
        f"pca_ag n={n:.0e} d={d}",
        "peak / (X + dxd)",
        ratio,
        f"<= {LIMIT}",
        status(ratio, LIMIT),
        f"X {X.nbytes / 2**20:.0f} MiB, extra peak {peak / 2**20:.1f} MiB",
    )
