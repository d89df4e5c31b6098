"""Privacy units: contribution bounding and unit-level releases against their floors (issue "People, not rows").

* Bounding 1e7 rows of 1e6 units to ``max_rows`` = 5, against the floor a peer would write: a random permutation
  plus pandas' ``groupby(...).head(m)`` (target <= 2x, in one run).
* A unit-level ``mean`` of those rows (checking every row, bounding, the release) against the same floor
  (target <= 3x).
* A unit-level ``pca_ag`` at n = 1e6 rows, d = 100 (1e5 units, ``max_rows`` = 20) against ``X.T @ X``
  (target <= 1.5x: the bounding is a sort of the ids and a hash of the rows; the Gram pass stays the floor's).
* Dask, on local threads (issue 40): a unit-level ``mean`` of 5e6 lazily generated rows of 5e5 units against dask's
  own shuffle by unit, ``groupby(...).head(5)`` and sum, the same pass without checks or a random choice
  (target <= 1.2x, interleaved).
* Dask on a ``distributed.LocalCluster`` (full run): the same unit-level ``mean`` on an array larger than the
  workers' memory (the rows shuffled by unit on the cluster, dask's p2p shuffle), its peak memory per worker in
  chunks above the workers' idle level (target <= 4), beside dask's own shuffle-head-sum on the same array.
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
DASK_MEAN_LIMIT = 1.2


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
    _dask_mean(results, tiny, repeats)
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


def _lazy_people(n: int, units: int, chunk: int):
    """n values in [0, 1] and their units' identifiers (uniform over ``units``), generated lazily in chunks."""
    import dask.array as da

    x = da.random.default_rng(0).uniform(0.0, 1.0, n, chunks=chunk)
    ids = da.random.default_rng(1).integers(0, units, n, chunks=chunk)
    return x, ids


def shuffle_head_sum(x, ids, m: int) -> float:
    """Dask's own floor for a unit-level sum: the rows shuffled by unit, the first ``m`` of each unit, their sum."""
    import dask.dataframe as dd

    frame = dd.concat([dd.from_dask_array(ids, columns=["unit"]), dd.from_dask_array(x, columns=["x"])], axis=1)
    kept = frame.shuffle(on="unit").map_partitions(lambda part: part.groupby("unit", sort=False).head(m))
    return float(kept["x"].sum().compute())


def _dask_mean(results: Results, tiny: bool, repeats: int) -> None:
    try:
        import dask.dataframe  # noqa: F401
    except ImportError:
        results.add("units", "dask unit-level mean", "skipped", "not installed", note="pip install dpstats[dask]")
        return
    n, units, chunk = (100_000, 10_000, 20_000) if tiny else (5_000_000, 500_000, 500_000)
    x, ids = _lazy_people(n, units, chunk)
    t = interleaved_medians(
        {
            "ours": lambda: dps.mean(x, 1.0, bounds=(0, 1), privacy_unit=ids, max_rows=5, rng=0),
            "floor": lambda: shuffle_head_sum(x, ids, 5),
        },
        repeats=repeats,
    )
    ratio = t["ours"] / t["floor"]
    results.add(
        "units",
        f"dask unit-level mean, {n:.0e} rows, {units:.0e} units, {n // chunk} chunks, local threads",
        "time / shuffle+head+sum",
        ratio,
        f"<= {DASK_MEAN_LIMIT}",
        status(ratio, DASK_MEAN_LIMIT),
        f"dpstats {t['ours']:.2f} s, dask's shuffle(on=unit) + head(5) + sum {t['floor']:.2f} s",
    )


def _dask(results: Results) -> None:
    try:
        import distributed
        from distributed.diagnostics import MemorySampler
    except ImportError:
        results.add("units", "dask unit-level mean", "skipped", "not installed", note="pip install dpstats[dask]")
        return
    # 768 MiB per worker, chunks of 2^20 values (8 MiB), 1 GiB of values + 1 GiB of identifiers: larger than the two
    # workers' memory. The workers import dpstats and run a small shuffle first, so that their idle level includes
    # the modules (the peaks are above it).
    memory, chunk, n = 768 * 2**20, 2**20, 2**27
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory, dashboard_address=None
    )
    client = distributed.Client(cluster)
    try:
        x, ids = _lazy_people(n, 2**24, chunk)
        calls = {
            "mean": lambda data, units: dps.mean(data, 1.0, bounds=(0, 1), privacy_unit=units, max_rows=5, rng=0),
            "floor": lambda data, units: shuffle_head_sum(data, units, 5),
        }
        for call in calls.values():
            call(*_lazy_people(20_000, 2_000, 5_000))
        sampler, seconds, peaks = MemorySampler(), {}, {}
        for name, call in calls.items():
            idle = _idle_memory(client)
            start = time.perf_counter()
            with sampler.sample(name, measure="process", interval=0.1):
                call(x, ids)
            seconds[name] = time.perf_counter() - start
            peaks[name] = (float(sampler.to_pandas()[name].max()) - idle) / 2
        size = f"{(x.nbytes + ids.nbytes) / 2**30:.0f} GiB on 2 workers x {memory / 2**20:.0f} MiB"
        for name, label in (("mean", "dask unit-level mean"), ("floor", "dask's shuffle+head+sum")):
            mine = name == "mean"
            results.add(
                "units",
                f"{label}, {size}",
                "peak memory per worker (chunks)",
                peaks[name] / (chunk * 8),
                f"<= {CHUNKS_LIMIT:g}" if mine else "",
                ("met" if peaks[name] <= CHUNKS_LIMIT * chunk * 8 else "MISSED") if mine else "",
                f"{peaks[name] / 2**20:.0f} MiB above idle; chunk {chunk * 8 / 2**20:.0f} MiB; {seconds[name]:.0f} s",
            )
        results.add(
            "units",
            f"dask unit-level mean, {size}",
            "time / shuffle+head+sum",
            seconds["mean"] / seconds["floor"],
            note=f"dpstats {seconds['mean']:.0f} s, dask's own {seconds['floor']:.0f} s (p2p shuffle)",
        )
    finally:
        client.close()
        cluster.close()


def _idle_memory(client) -> float:
    """The workers' total process memory now (bytes), after a pause for the heartbeats to report it."""
    time.sleep(2.0)
    return float(sum(w["metrics"]["memory"] for w in client.scheduler_info()["workers"].values()))
