"""Group-by over keys nobody knows in advance (issue "Group-by"): speed against pandas, keys kept per selection
policy, Dask scaling.

* **Grouped count** of 1e7 rows, 1e5 distinct keys (Zipf), 1e6 units: ``dps.histogram(keys, ..., privacy_unit=units,
  max_groups=5, max_rows=1)`` (the distinct people per key, selected privately: the selection's noisy counts are
  the release) against pandas' own ``groupby(key).size()``, which counts rows and knows nothing of people (target
  <= 3x, in one run); and with ``max_rows=5`` (rows counted apart from the selection).
* **Keys kept** by each selection policy (:mod:`dpstats.noise.selection`) on a synthetic "visits per page" table
  with a long tail: 1e5 people, each with 1 + Geometric(1/3) distinct pages drawn from a Zipf(1.1) law over 1e5
  pages; δ = 1e-6, ε in {0.5, 1, 2}, max_groups k in {1, 2, 3, 5, 10}. The number reported is the *expected* number
  of keys released, Σ_keys P(c + Z >= τ), from the exact per-key statistics after bounding and the noise's tail
  (no sampling error), and the fraction of the keys held by at least 50 people. Beside them, Desfontaines et al.'s
  optimal policy (a truncated geometric threshold; their Theorem 1) made valid for replace-one-unit by basic
  composition over the 2k keys a replaced unit moves (ε/2k, δ/2k per key), which dpstats does not offer.
* **Dask**: the same grouped count on a lazily generated table of 1e7 to 1e8 rows (10 rows per unit, 1e5 keys) on a
  ``distributed.LocalCluster`` of 2 single-threaded workers: seconds per million rows (target: flat), the rows
  shuffled by unit on the cluster and only the per-key statistics gathered.
"""

from __future__ import annotations

import math
import time

import numpy as np

import dpstats as dps

from ._harness import Results, interleaved_medians, status

COUNT_LIMIT = 3.0
FLAT_LIMIT = 1.5  # seconds per row at the largest size over the smallest
EPSILONS = (0.5, 1.0, 2.0)
GROUPS = (1, 2, 3, 5, 10)
DELTA = 1e-6


def run(results: Results, *, tiny: bool, repeats: int) -> None:
    _count(results, tiny, min(repeats, 3))
    _policies(results, tiny)
    if not tiny:  # a cluster of processes: the full run only (tests/test_groups.py checks the Dask engine)
        _dask(results)


def _table(rows: int, keys: int, units: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return (rng.zipf(1.2, rows) % keys).astype(np.int64), rng.integers(0, units, rows)


def _count(results: Results, tiny: bool, repeats: int) -> None:
    import pandas as pd

    rows, keys, units = (100_000, 1_000, 10_000) if tiny else (10_000_000, 100_000, 1_000_000)
    key, unit = _table(rows, keys, units)
    frame = pd.DataFrame({"key": key, "unit": unit})
    t = interleaved_medians(
        {
            "floor": lambda: frame.groupby("key").size(),
            "people": lambda: frame.groupby("key")["unit"].nunique(),
            "distinct": lambda: dps.histogram(key, 1.0, DELTA, privacy_unit=unit, max_rows=1, max_groups=5, rng=0),
            "rows": lambda: dps.count(key, 1.0, DELTA, by=key, privacy_unit=unit, max_rows=5, max_groups=5, rng=0),
        },
        repeats=repeats,
    )
    case = f"{rows:.0e} rows, {np.unique(key).size:.0e} keys, {units:.0e} units, max_groups=5"
    ratio = t["distinct"] / t["people"]
    results.add(
        "groups",
        f"grouped count of people (max_rows=1), {case}",
        "time / pandas groupby.nunique",
        ratio,
        note=f"the same statistic without bounding or noise: pandas {t['people']:.3f} s",
    )
    for name, what, limit in (
        ("distinct", "grouped count of people (max_rows=1)", COUNT_LIMIT),
        ("rows", "grouped count of rows (max_rows=5)", None),
    ):
        ratio = t[name] / t["floor"]
        results.add(
            "groups",
            f"{what}, {case}",
            "time / pandas groupby.size",
            ratio,
            f"<= {limit}" if limit else "",
            status(ratio, limit) if limit else "",
            f"dpstats {t[name]:.3f} s, pandas {t['floor']:.3f} s",
        )


def _visits(people: int, pages: int, seed: int = 1):
    """(page, person) rows: every person holds 1 + Geometric(1/3) distinct pages of a Zipf(1.1) law (the rows of
    a person with a repeated draw are merged: distinct pages per person)."""
    rng = np.random.default_rng(seed)
    degree = rng.geometric(1 / 3, people)
    weights = 1.0 / np.arange(1, pages + 1) ** 1.1
    page = rng.choice(pages, size=int(degree.sum()), p=weights / weights.sum())
    return page.astype(np.int64), np.repeat(np.arange(people), degree)


def _expected_kept(selection, statistic: np.ndarray) -> float:
    """Σ_keys P(c + Z >= τ) for the selection's noise: the discrete Laplace's exact two-sided tail, or the normal
    tail for the discrete Gaussian (σ is 2^20 grid units: its tail is the normal's to within 1e-6)."""
    from scipy.stats import norm

    noise, grid = selection.noise, float(selection.noise.grid)
    c = statistic.astype(np.float64) * float(selection.unit)
    if noise.kind == "gaussian":
        return float(norm.sf((selection.threshold - c) / noise.noise_scale).sum())
    t = float(noise.scale)  # grid units
    j = np.rint((selection.threshold - c) / grid)  # P(Z >= j)
    log_q = -1.0 / t
    upper = np.exp(np.maximum(j, 0) * log_q) / (1 + math.exp(log_q))
    lower = 1 - np.exp(np.maximum(1 - j, 0) * log_q) / (1 + math.exp(log_q))
    return float(np.where(j >= 1, upper, lower).sum())


def _optimal(counts: np.ndarray, epsilon: float, delta: float) -> float:
    """Σ_keys π(n) of Desfontaines et al.'s optimal policy for (ε, δ) (their Theorem 1, add/remove one user):
    π(0) = 0, π(n) = min(e^ε π(n − 1) + δ, 1 − e^−ε (1 − π(n − 1) − δ), 1)."""
    pi = [0.0]
    for _ in range(int(counts.max())):
        p = pi[-1]
        pi.append(min(math.exp(epsilon) * p + delta, 1 - math.exp(-epsilon) * (1 - p - delta), 1.0))
    return float(np.asarray(pi)[counts].sum())


def _policies(results: Results, tiny: bool) -> None:
    from dpstats._kernels.groups import GroupSpec, key_table
    from dpstats.noise.selection import calibrate_selection

    people, pages = (5_000, 5_000) if tiny else (100_000, 100_000)
    page, person = _visits(people, pages)
    held = np.bincount(np.unique(np.c_[person, page], axis=0)[:, 1])
    popular = int((held >= 50).sum())
    results.add(
        "groups",
        f"visits table: {people:.0e} people, {page.size:.1e} (person, page)",
        "pages held",
        int(np.count_nonzero(held)),
        note=f"{popular} held by >= 50 people",
    )
    for k in GROUPS:
        table = key_table(page, person, None, GroupSpec(max_rows=1, max_groups=k, key=7, by_unit=True, weights=True))
        for epsilon in EPSILONS:
            kept = {
                policy: _expected_kept(
                    calibrate_selection(epsilon, DELTA, policy, k),
                    table.weights if policy == "weighted" else table.units,
                )
                for policy in ("laplace", "gaussian", "weighted")
            }
            kept["optimal (composed)"] = _optimal(table.units, epsilon / (2 * k), DELTA / (2 * k))
            best = max(kept, key=kept.get)
            results.add(
                "groups",
                f"keys kept, k={k}, eps={epsilon:g}, delta={DELTA:g}",
                "expected keys released",
                kept[best],
                note=f"best {best}; " + ", ".join(f"{p} {v:.0f}" for p, v in kept.items()),
            )


def _dask(results: Results) -> None:
    try:
        import dask.array as da
        import distributed
    except ImportError:
        results.add("groups", "dask grouped count", "skipped", "not installed", note="pip install dpstats[dask]")
        return
    sizes = (10_000_000, 30_000_000, 100_000_000)
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, memory_limit="8GiB", dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        per_row = {}
        warm = da.random.default_rng(2).integers(0, 100, 100_000, chunks=50_000)
        dps.histogram(warm, 1.0, DELTA, privacy_unit=warm, max_rows=1, max_groups=5, rng=0)  # workers and imports
        for rows in sizes:
            chunk = min(rows, 2_000_000)
            key = (da.random.default_rng(0).zipf(1.2, rows, chunks=chunk) % 100_000).astype(np.int64)
            unit = da.random.default_rng(1).integers(0, rows // 10, rows, chunks=chunk)
            start = time.perf_counter()
            dps.histogram(key, 1.0, DELTA, privacy_unit=unit, max_rows=1, max_groups=5, rng=0)
            seconds = time.perf_counter() - start
            per_row[rows] = seconds / rows
            results.add(
                "groups",
                f"dask grouped count, {rows:.0e} rows, {rows // 10:.0e} units",
                "seconds per 1e6 rows",
                1e6 * seconds / rows,
                note=f"{seconds:.1f} s on 2 workers x 1 thread (the machine is shared)",
            )
        ratio = per_row[sizes[-1]] / per_row[sizes[0]]
        results.add(
            "groups",
            f"dask grouped count, {sizes[0]:.0e} -> {sizes[-1]:.0e} rows",
            "per-row cost, largest / smallest",
            ratio,
            f"<= {FLAT_LIMIT}",
            status(ratio, FLAT_LIMIT),
        )
    finally:
        client.close()
        cluster.close()
