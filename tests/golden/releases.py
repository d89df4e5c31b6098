"""Every public mechanism and estimator, run with fixed seeds on fixed data: the releases a refactoring must keep.

``python -m tests.golden.releases`` (from the repository root) writes ``tests/golden/releases.json``: one SHA-256
per release (its dtype, shape and bytes; for a DataFrame or Series, its values and labels; for an accountant, its
ledger JSON). ``tests/test_golden.py`` recomputes them and compares. A change that alters a release on purpose (a
new calibration, a new sampler) regenerates the file in the same commit and says why in the message.

**One floating-point platform.** Releases computed in floating point (a solver's minimiser, the log-scale grid of a
quantile) depend on the machine's vector instructions: NumPy evaluates ``exp``, ``log1p``, ``arcsinh`` ... with
SVML kernels on CPUs with AVX-512 and with the C library elsewhere, and OpenBLAS picks its kernels by CPU; their
last bits differ, and a last bit can move a value across a grid point. The releases are therefore always computed
in a subprocess pinned to the AVX2 code paths (:data:`PINNED`), so that x86-64 machines with and without AVX-512
compute the same bits: :func:`pinned_digests` (used by the test) and this module's ``__main__`` both do. (Two
releases first recorded on an AVX-512 machine differed on an AVX2 one before this pinning.)
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

import dpstats as dps

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "releases.json"
ROOT = HERE.parents[1]

#: NumPy without its AVX-512 kernels (SVML), OpenBLAS with its Haswell (AVX2) kernels.
PINNED = {"NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR", "OPENBLAS_CORETYPE": "Haswell"}


def digest(value) -> str:
    """SHA-256 of a release: arrays by dtype, shape and bytes; tuples, lists and results field by field."""
    h = hashlib.sha256()
    _feed(h, value)
    return h.hexdigest()


def _feed(h, value) -> None:
    if hasattr(value, "to_json") and hasattr(value, "ledger"):  # an Accountant: its ledger
        h.update(value.to_json().encode())
    elif hasattr(value, "to_numpy") and hasattr(value, "index"):  # pandas
        _feed(h, value.to_numpy())
        h.update(repr(list(value.index)).encode())
        if hasattr(value, "columns"):
            h.update(repr(list(value.columns)).encode())
    elif hasattr(value, "U") and hasattr(value, "correlations"):  # CCAResult
        for part in (value.U, value.V, value.correlations):
            _feed(h, part)
    elif isinstance(value, (tuple, list)) and not (value and isinstance(value[0], str)):
        for part in value:
            _feed(h, part)
    elif hasattr(value, "compute"):  # dask
        _feed(h, value.compute())
    else:
        array = np.asarray(value)
        h.update(f"{array.dtype.str}{array.shape}".encode())
        h.update(np.ascontiguousarray(array).tobytes() if array.dtype != object else repr(array.tolist()).encode())


def _data():
    rng = np.random.default_rng(20261125)
    x = rng.uniform(0, 1, 400)
    M = rng.uniform(0, 1, (300, 3)) * [1, 10, 100]
    X = rng.normal(size=(600, 6))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None] * 1.01
    y = np.where(X @ np.arange(1, 7) + 0.3 * rng.normal(size=600) > 0, 1.0, -1.0)
    Y = rng.normal(size=(600, 4))
    Y /= np.maximum(1.0, np.linalg.norm(Y, axis=1))[:, None] * 1.01
    A = rng.integers(0, 5, (80, 12)).astype(float) / 10
    words = rng.choice(["a", "b", "c", "d"], 300)
    return x, M, X, y, Y, A, words


def _units():
    """Privacy units for the data of :func:`_data`: a few heavy units among light ones (x: 400 rows, M and the
    words: 300, X: 600)."""
    rng = np.random.default_rng(20261126)
    return tuple(
        np.where(rng.random(n) < 0.3, rng.integers(0, 3, n), rng.integers(3, n // 4, n)) for n in (400, 300, 600)
    )


def releases() -> dict:
    """name -> zero-argument function returning the release."""
    x, M, X, y, Y, A, words = _data()
    x_units, M_units, X_units = _units()
    import pandas as pd

    frame = pd.DataFrame(M, columns=["age", "height", "income"])
    cases = {
        "mean_laplace": lambda: dps.mean(x, 1.0, bounds=(0, 1), rng=1),
        "mean_gauss": lambda: dps.mean(x, 1.0, 1e-6, bounds=(0, 1), rng=2),
        "mean_axis": lambda: dps.mean(M, 1.0, bounds=(0, [1, 10, 100]), axis=0, rng=3),
        "mean_weights": lambda: dps.mean(
            frame,
            1.0,
            bounds={"age": (0, 1), "height": (0, 10), "income": (0, 100)},
            weights={"age": 1, "height": 2, "income": 1},
            rng=4,
        ),
        "mean_float": lambda: dps.mean(x, 1.0, bounds=(0, 1), rng=5, noise="float"),
        "mean_clip": lambda: dps.mean(2 * x, 1.0, bounds=(0, 1), clip=True, rng=6),
        "variance_laplace": lambda: dps.variance(x, 1.0, bounds=(0, 1), rng=7),
        "variance_gauss": lambda: dps.variance(M, 2.0, 1e-6, bounds=(0, [1, 10, 100]), axis=0, rng=8),
        "histogram_numeric": lambda: dps.histogram(x, 1.0, bins=7, range=(0, 1), rng=9),
        "histogram_gauss": lambda: dps.histogram(x, 1.0, 1e-6, bins=5, range=(0, 1), rng=10),
        "histogram_categorical": lambda: dps.histogram(words, 1.0, categories=["a", "b", "c"], other="o", rng=11),
        "quantile": lambda: dps.quantile(x, 0.5, 1.0, bounds=(0, 1), rng=12),
        "quantiles": lambda: dps.quantile(x, [0.1, 0.9], 1.0, bounds=(0, 1), rng=13),
        "private_bounds": lambda: dps.private_bounds(100 * x, 1.0, range=(1e-3, 1e4), rng=14),
        "pca_ag": lambda: dps.pca_ag(X, 1.0, 1e-6, rng=15),
        "pca_ag_classic": lambda: dps.pca_ag(X, 0.5, 1e-6, calibration="classic", rng=16),
        "pca_sn": lambda: dps.pca_sn(X, 1.0, rng=17),
        "pca_ppm_gauss": lambda: dps.pca_ppm(X, 2, 1.0, 1e-6, rng=18),
        "pca_ppm_laplace": lambda: dps.pca_ppm(X, 2, 1.0, 0.0, n_iter=3, rng=19),
        "pca_ppca_sequential": lambda: dps.pca_ppca(X, 2, 1.0, rng=20),
        "pca_ppca_gibbs": lambda: dps.pca_ppca(X, 2, 1.0, sampler="gibbs", n_sweeps=3, rng=21),
        "pca_default": lambda: dps.pca(X, 2, epsilon=1.0, rng=22),
        "pca_frame": lambda: dps.pca(frame / 200, 2, epsilon=1.0, rng=23),
        "top_components": lambda: dps.top_components(np.diag([3.0, 1.0, 2.0]), 2),
        "cca": lambda: dps.cca(X / 1.5, Y / 1.5, 2, 1.0, 1e-6, rng=24),
        "svm_objective": lambda: dps.svm(X, y, 1.0, lam=0.01, rng=25),
        "svm_output": lambda: dps.svm(X, y, 1.0, lam=0.01, method="output", rng=26),
        "logistic_objective": lambda: dps.logistic_regression(X, y, 1.0, lam=0.01, rng=27),
        "logistic_output": lambda: dps.logistic_regression(X, y, 1.0, lam=0.01, method="output", rng=28),
        "low_rank_range_finder": lambda: dps.low_rank(A, 2, 1.0, 1e-6, bounds=(0, 1), rng=29),
        "low_rank_input": lambda: dps.low_rank(A, 2, 1.0, 1e-6, method="input_perturbation", rng=30),
        "estimator_pca": lambda: dps.estimators.DPPCA(2, epsilon=1.0, random_state=31).fit(X).components_,
        "estimator_cca": lambda: dps.estimators.DPCCA(2, epsilon=1.0, random_state=32).fit(X / 1.5, Y / 1.5).x_weights_,
        "estimator_logistic": lambda: (
            dps.estimators.DPLogisticRegression(epsilon=1.0, lam=0.01, classes=[-1, 1], random_state=33).fit(X, y).coef_
        ),
        "estimator_svc": lambda: (
            dps.estimators.DPLinearSVC(epsilon=1.0, lam=0.01, classes=[-1, 1], random_state=34).fit(X, y).coef_
        ),
        "ledger": _ledger,
        "ledger_dong": _ledger_dong,
        "mean_units": lambda: dps.mean(x, 1.0, bounds=(0, 1), privacy_unit=x_units, max_rows=3, rng=60),
        "variance_units": lambda: dps.variance(
            M, 1.0, 1e-6, bounds=(0, [1, 10, 100]), axis=0, privacy_unit=M_units, max_rows=2, rng=61
        ),
        "sum_units": lambda: dps.sum(x, 1.0, bounds=(0, 1), privacy_unit=x_units, max_rows=3, rng=62),
        "count_units": lambda: dps.count(x, 1.0, privacy_unit=x_units, max_rows=3, rng=63),
        "histogram_units": lambda: dps.histogram(
            words, 1.0, categories=["a", "b", "c"], other="o", privacy_unit=M_units, max_rows=2, rng=64
        ),
        "quantile_units": lambda: dps.quantile(x, 0.5, 1.0, bounds=(0, 1), privacy_unit=x_units, max_rows=3, rng=65),
        "pca_ag_units": lambda: dps.pca_ag(X, 1.0, 1e-6, privacy_unit=X_units, max_rows=4, rng=66),
        "pca_ppca_units": lambda: dps.pca_ppca(X, 2, 1.0, privacy_unit=X_units, max_rows=4, rng=67),
        "svm_units": lambda: dps.svm(X, y, 1.0, lam=0.01, privacy_unit=X_units, max_rows=4, rng=68),
        "cca_units": lambda: dps.cca(X / 1.5, Y / 1.5, 2, 1.0, 1e-6, privacy_unit=X_units, max_rows=4, rng=69),
        "covariance_amin": lambda: dps.covariance(X, 1.0, rng=120),
        "covariance_amin_adaptive_rank": lambda: dps.covariance(X, 1.0, rank=2, split="adaptive", rng=121),
        "amin_eigen": lambda: np.concatenate([np.ravel(a) for a in dps.amin_eigen(X, 1.0, rank=2, rng=122)]),
        "pca_amin": lambda: dps.pca(X, 2, 1.0, mechanism="amin", rng=123),
        "covariance_amin_units": lambda: dps.covariance(X, 1.0, privacy_unit=X_units, max_rows=4, rng=124),
        "covariance_dong": lambda: dps.covariance_dong(X / 4, 1.0, 1e-6, rng=70),
        "covariance_dong_separate": lambda: dps.covariance_dong(X, 1.0, 1e-6, algorithm="separate", rng=71),
        "covariance_dong_float": lambda: dps.covariance_dong(
            X, 1.0, 1e-6, algorithm="separate", eigenvalues="spectrum", noise="float", rng=72
        ),
        "pca_dong": lambda: dps.pca_dong(X, 2, 1.0, 1e-6, rng=73),
        "pca_dong_units": lambda: dps.pca(X, 2, 1.0, mechanism="dong", privacy_unit=X_units, max_rows=4, rng=74),
        "private_norm_bound": lambda: dps.preprocessing.private_norm_bound(M, 1.0, rng=75),
        "pca_private_bound": lambda: dps.pca(M, 2, 1.0, norm_bound="private", rng=76),
        "cca_private_bound": lambda: dps.cca(X * 30, Y * 30, 2, 1.0, 1e-6, norm_bound="private", rng=77),
        "estimator_pca_dong_private": lambda: (
            dps.estimators.DPPCA(2, mechanism="dong", norm_bound="private", random_state=78).fit(M).components_
        ),
    }
    cases.update(_grouped())
    import dask.array as da

    Xd, yd, xd = da.from_array(X, chunks=97), da.from_array(y, chunks=97), da.from_array(x, chunks=61)
    cases.update(
        {
            "dask_mean": lambda: dps.mean(xd, 1.0, bounds=(0, 1), rng=50),
            "dask_variance": lambda: dps.variance(xd, 1.0, 1e-6, bounds=(0, 1), rng=51),
            "dask_histogram": lambda: dps.histogram(xd, 1.0, bins=7, range=(0, 1), rng=52),
            "dask_pca_ag": lambda: dps.pca_ag(Xd, 1.0, 1e-6, rng=53),
            "dask_pca_ppm": lambda: dps.pca_ppm(Xd, 2, 1.0, 1e-6, rng=54),
            "dask_svm": lambda: dps.svm(Xd, yd, 1.0, lam=0.01, rng=55),
            "dask_low_rank": lambda: dps.low_rank(da.from_array(A, chunks=30), 2, 1.0, 1e-6, bounds=(0, 1), rng=56),
            "dask_covariance_amin": lambda: dps.covariance(Xd, 1.0, rng=125),
            "dask_covariance_dong": lambda: dps.covariance_dong(Xd / 4, 1.0, 1e-6, rng=57),
        }
    )
    return cases


def _visits():
    """A table of visits with a long tail of rare pages: 2,000 rows of 300 people (issue "Group-by")."""
    import pandas as pd

    rng = np.random.default_rng(20261127)
    n = 2000
    return pd.DataFrame(
        {
            "person": rng.integers(0, 300, n),
            "page": np.char.add("p", (rng.zipf(1.5, n) % 60).astype(str)),
            "seconds": rng.uniform(0, 120, n).round(1),
            "clicks": rng.integers(0, 10, n).astype(float),
        }
    )


def _grouped() -> dict:
    """Grouped releases: keys selected privately (each selection policy) or public, with and without units."""
    visits = _visits()
    pages, people, seconds = visits["page"].to_numpy(), visits["person"].to_numpy(), visits["seconds"].to_numpy()
    units = dict(privacy_unit="person", max_rows=2, max_groups=3)
    bounds = {"seconds": (0, 120), "clicks": (0, 10)}
    import dask.dataframe as dd

    lazy = dd.from_pandas(visits, npartitions=3)
    return {
        "histogram_keys": lambda: dps.histogram(pages, 1.0, 1e-6, rng=70),
        "histogram_keys_units": lambda: dps.histogram(
            pages, 1.0, 1e-6, privacy_unit=people, max_rows=1, max_groups=3, rng=71
        ),
        "histogram_keys_gaussian": lambda: dps.histogram(pages, 1.0, 1e-6, selection="gaussian", rng=72),
        "histogram_keys_rows_per_unit": lambda: dps.histogram(
            pages, 1.0, 1e-6, privacy_unit=people, max_rows=2, rng=79
        ),
        "count_by_units": lambda: dps.count(visits, 1.0, 1e-6, by="page", **units, rng=73),
        "sum_by_categories": lambda: dps.sum(
            visits[["page", "seconds"]], 1.0, by="page", categories=sorted(set(pages)), bounds=(0, 120), rng=74
        ),
        "mean_by_units": lambda: dps.mean(visits, 1.0, 1e-6, by="page", bounds=bounds, **units, rng=75),
        "mean_by_rows_per_unit": lambda: dps.mean(
            seconds, 1.0, 1e-6, by=pages, bounds=(0, 120), privacy_unit=people, max_rows=3, rng=76
        ),
        "variance_by_weights": lambda: dps.variance(
            visits, 1.0, 1e-6, by="page", bounds=bounds, weights={"seconds": 1, "clicks": 2}, **units, rng=77
        ),
        "quantile_by": lambda: dps.quantile(seconds, 0.5, 1.0, bounds=(0, 120), by=pages, delta=1e-6, rng=78),
        "dask_mean_by_units": lambda: dps.mean(lazy, 1.0, 1e-6, by="page", bounds=bounds, **units, rng=75),
        "ledger_groups": lambda: _grouped_ledger(pages, people, seconds),
    }


def _grouped_ledger(pages, people, seconds):
    acc = dps.Accountant(100.0, 1e-3)
    dps.histogram(pages, 1.0, 1e-6, rng=80, accountant=acc)
    dps.count(pages, 1.0, 1e-6, by=pages, privacy_unit=people, max_rows=1, max_groups=3, rng=81, accountant=acc)
    dps.mean(
        seconds,
        1.0,
        1e-6,
        by=pages,
        bounds=(0, 120),
        privacy_unit=people,
        max_rows=2,
        max_groups=3,
        rng=82,
        accountant=acc,
    )
    dps.quantile(seconds, 0.5, 1.0, bounds=(0, 120), by=pages, delta=1e-6, rng=83, accountant=acc)
    return acc


def _ledger():
    x, M, X, y, Y, A, words = _data()
    acc = dps.Accountant(100.0, 1e-3)
    dps.mean(x, 1.0, bounds=(0, 1), rng=40, accountant=acc)
    dps.mean(x, 1.0, 1e-6, bounds=(0, 1), rng=41, accountant=acc)
    dps.histogram(x, 1.0, bins=3, range=(0, 1), rng=42, accountant=acc)
    dps.pca_ag(X, 1.0, 1e-6, rng=43, accountant=acc)
    dps.pca_ppm(X, 2, 1.0, 1e-6, rng=44, accountant=acc)
    dps.pca_ppca(X, 2, 1.0, rng=45, accountant=acc)
    dps.quantile(x, 0.5, 1.0, bounds=(0, 1), rng=46, accountant=acc)
    dps.svm(X, y, 1.0, lam=0.01, rng=47, accountant=acc)
    dps.cca(X / 1.5, Y / 1.5, 2, 1.0, 1e-6, rng=48, accountant=acc)
    dps.low_rank(A, 2, 1.0, 1e-6, bounds=(0, 1), rng=49, accountant=acc)
    return acc


def _ledger_dong():
    x, M, X, y, Y, A, words = _data()
    acc = dps.Accountant(100.0, 1e-3)
    dps.covariance_dong(X, 1.0, 1e-6, rng=80, accountant=acc)
    dps.covariance_dong(X, 1.0, 1e-6, algorithm="separate", rng=81, accountant=acc)
    dps.pca(M, 2, 1.0, norm_bound="private", rng=82, accountant=acc)
    return acc


def compute() -> dict[str, str]:
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, make in releases().items():
            out[name] = digest(make())
    return out


def pinned_digests() -> dict[str, str]:
    """:func:`compute` in a fresh interpreter on the pinned floating-point platform (:data:`PINNED`)."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.golden.releases", "--print"],
        cwd=ROOT,
        env={**os.environ, **PINNED},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"computing the golden releases failed:\n{done.stderr}")
    return json.loads(done.stdout)


if __name__ == "__main__":
    if sys.argv[1:] == ["--print"]:
        print(json.dumps(compute()))
    else:
        GOLDEN.write_text(json.dumps(pinned_digests(), indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN}", file=sys.stderr)
