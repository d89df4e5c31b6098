"""Privacy units: contribution bounding and unit-level releases against their floors (issue "People, not rows").

* Bounding 1e7 rows of 1e6 units to ``max_rows`` = 5, against the floor a peer would write: a random permutation
  plus pandas' ``groupby(...).head(m)`` (target <= 2x, in one run).
* A unit-level ``mean`` of those rows (checking every row, bounding, the release) against the same floor
  (target <= 3x).
* A unit-level ``pca_ag`` at n = 1e6 rows, d = 100 (1e5 units, ``max_rows`` = 20) against ``X.T @ X``
  (target <= 1.5x: the bounding is a sort of the ids and a hash of the rows; the Gram pass stays the floor's).
* Dask: a unit-level ``mean`` on a lazily generated array larger than the workers' memory (the rows shuffled by
  unit on the cluster), its peak memory per worker in chunks (target <= 4) and its time against
  ``x.sum().compute()`` on the same array.
"""

from __future__ import annotations

import time

import numpy as np

import dpstats as dps

from ._harness import Results, interleaved_medians, status

BOUNDING_LIMIT = 2.0
MEAN_LIMIT = 3.0
PCA_LIMIT = 1.5
CHUNKS_LIMIT = 4.0


def run(results: Results, *, tiny: bool, repeats: int) -> None:
    repeats = min(repeats, 3)
    rows, units, m = (100_000, 10_000, 5) if tiny else (10_000_000, 1_000_000, 5)
    rng = np.random.default_rng(0)
    ids, x = rng.integers(0, units, rows), rng.uniform(0.0, 1.0, rows)
    _bounding(results, ids, x, m, repeats)
    n, d, pca_units = (20_000, 20, 2_000) if tiny else (1_000_000, 100, 100_000)
    X = rng.uniform(-1.0, 1.0, (n, d)) / np.sqrt(d)
    X_ids = rng.integers(0, pca_units, n)
    t = interleaved_medians(
        {
            "ours": lambda: dps.pca_ag(X, 1.0, 1e-6, privacy_unit=X_ids, max_rows=20, rng=0),
            "floor": lambda: X.T @ X,
        },
        repeats=repeats,
    )
    ratio = t["ours"] / t["floor"]
    results.add(
        "units",
        f"pca_ag with a unit, n={n:.0e} d={d}",
        "time / X.T @ X",
        ratio,
        f"<= {PCA_LIMIT}",
        status(ratio, PCA_LIMIT),
        f"dpstats {t['ours']:.3f} s, X.T @ X {t['floor']:.3f} s",
    )
    if not tiny:
        _dask(results)


def _bounding(results: Results, ids: np.ndarray, x: np.ndarray, m: int, repeats: int) -> None:
    import pandas as pd

    from dpstats._engine import bound_rows, take_units

    _, units = take_units(x, ids, m)
    units = units.aligned(ids.size)
    shuffle = np.random.default_rng(1)

    def floor():
        order = shuffle.permutation(ids.size)
        return pd.DataFrame({"id": ids[order], "x": x[order]}).groupby("id", sort=False).head(m)

    t = interleaved_medians(
        {
            "bound": lambda: bound_rows((x,), units, np.random.default_rng(2)),
            "mean": lambda: dps.mean(x, 1.0, bounds=(0, 1), privacy_unit=ids, max_rows=m, rng=3),
            "floor": floor,
        },
        repeats=repeats,
    )
    case = f"{ids.size:.0e} rows, {np.unique(ids).size:.0e} units, max_rows={m}"
    for name, limit in (("bound", BOUNDING_LIMIT), ("mean", MEAN_LIMIT)):
        ratio = t[name] / t["floor"]
        what = "contribution bounding" if name == "bound" else "unit-level mean"
        results.add(
            "units",
            f"{what}, {case}",
            "time / permute + groupby.head",
            ratio,
            f"<= {limit}",
            status(ratio, limit),
            f"dpstats {t[name]:.3f} s, floor {t['floor']:.3f} s",
        )


def _dask(results: Results) -> None:
    try:
        import dask.array as da
        import distributed
        from distributed.diagnostics import MemorySampler
    except ImportError:
        results.add("units", "dask unit-level mean", "skipped", "not installed", note="pip install dpstats[dask]")
        return
    # 768 MiB per worker, 8 MiB chunks, 1 GiB of values + 1 GiB of ids: larger than the two workers' memory. (With
    # 32 MiB chunks and 1 GiB workers, dask's p2p shuffle outgrew the workers, which were restarted.)
    memory, chunk, n = 768 * 2**20, 2**20, 2**27
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory, dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        x = da.random.default_rng(0).uniform(0.0, 1.0, n, chunks=chunk)
        ids = da.random.default_rng(1).integers(0, 2**25, n, chunks=chunk)
        time.sleep(1.0)  # let the heartbeats report the idle level
        idle = float(sum(w["metrics"]["memory"] for w in client.scheduler_info()["workers"].values()))
        sampler = MemorySampler()
        start = time.perf_counter()
        with sampler.sample("mean", measure="process", interval=0.1):
            dps.mean(x, 1.0, bounds=(0, 1), privacy_unit=ids, max_rows=5, rng=0)
        seconds = time.perf_counter() - start
        start = time.perf_counter()
        x.sum().compute()
        floor = time.perf_counter() - start
        per_worker = (float(sampler.to_pandas().max().iloc[0]) - idle) / 2
        size = f"{(x.nbytes + ids.nbytes) / 2**30:.0f} GiB on 2 workers x {memory / 2**20:.0f} MiB"
        results.add(
            "units",
            f"dask unit-level mean, {size}",
            "peak memory per worker (chunks)",
            per_worker / (chunk * 8),
            f"<= {CHUNKS_LIMIT:g}",
            "met" if per_worker <= CHUNKS_LIMIT * chunk * 8 else "MISSED",
            f"{per_worker / 2**20:.0f} MiB; chunk {chunk * 8 / 2**20:.0f} MiB",
        )
        results.add(
            "units",
            f"dask unit-level mean, {size}",
            "time / x.sum().compute()",
            seconds / floor,
            note=f"dpstats {seconds:.1f} s (a shuffle by unit), dask sum {floor:.1f} s",
        )
    finally:
        client.close()
        cluster.close()
