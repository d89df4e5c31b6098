"""PCA speed: the cost of privacy on top of the unavoidable computation, and how it scales.

Run ``python -m benchmarks --only bench_pca [--tiny]``; the suite calls ``run(results, tiny=..., repeats=...)``.

Floor ratios (issue 7): ``pca_ag`` and ``pca_sn`` against ``X.T @ X`` alone for n in {1e4, 1e5, 1e6} and
d in {50, 100, 784}; ``pca_ppm`` per iteration against one ``A @ Y``; ``pca_ppca`` per Gibbs sweep against one
d × d eigendecomposition. Targets (issue 3): AG within 1.15x of ``X.T @ X`` at n = 1e6, d = 100; PPM at
d = 784, k = 50, n_iter = 50 under 2 s once XᵀX is formed; PPCA at d = 784, k = 50 with the default sweeps
under 60 s. Scaling: time against n and d for AG and PPCA, with the fitted log-log exponent, as a figure.
MNIST is used at d = 784 when ``dpstats.compendium.datasets`` finds it, otherwise Gaussian data of the same shape.

Issue 13 target: ``pca_ag`` with the secure, exact default within 1.15x of ``X.T @ X`` at n = 1e5 for
d in {100, 300, 784}, measured interleaved with ``X.T @ X`` (median of 7), and also each run on its own. When
the two alternate, OpenBLAS's worker thread keeps spin-waiting (a ``sched_yield`` loop of up to 2^28 cycles,
``OPENBLAS_THREAD_TIMEOUT``) after NumPy's multi-threaded ``X.T @ X``, while ``pca_ag``'s own two threads run
single-threaded BLAS: three busy threads on two cores. The diagnosis row reruns the interleaved case in a child
process with ``OPENBLAS_THREAD_TIMEOUT=4`` (a spin of 2^4 cycles): if the gap closes there, the spinning
worker is the cause.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import dpstats as dps
from dpstats.compendium import datasets
from dpstats.decomposition._bingham import DEFAULT_SWEEPS, sample_matrix_bingham
from dpstats.decomposition._pca import default_n_iter, second_moment
from dpstats.metrics import captured_energy

from ._harness import Results, interleaved_medians, status

AG_LIMIT = 1.15
PPM_LIMIT_S = 2.0
PPCA_LIMIT_S = 60.0
DELTA = 1e-5


def _unit_rows(X: np.ndarray) -> np.ndarray:
    """Centre and divide by the largest row norm (the papers' non-private preprocessing; fine for timing)."""
    X = X - X.mean(axis=0)
    return X / np.linalg.norm(X, axis=1).max()


def _gaussian(n: int, d: int, seed: int = 0) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((n, d))
    X /= np.linalg.norm(X, axis=1).max()
    return X


def _mnist_like(n: int, d: int) -> tuple[np.ndarray, str]:
    if d == 784 and datasets.is_available("mnist"):
        images, _ = datasets.load_mnist()
        return _unit_rows(images[:n]), "MNIST"
    return _unit_rows(np.random.default_rng(0).standard_normal((n, d))), "Gaussian"


def _median_time(func, repeats: int) -> float:
    """Median wall time of ``repeats`` calls (after one warm-up)."""
    return interleaved_medians({"f": func}, repeats=repeats)["f"]


def _floor(results: Results, tiny: bool, repeats: int) -> None:
    sizes = (
        [(2_000, 20), (2_000, 50)] if tiny else [(n, d) for n in (10_000, 100_000, 1_000_000) for d in (50, 100, 784)]
    )
    for n, d in sizes:
        _floor_one(results, _gaussian(n, d), repeats)


def _floor_one(results: Results, X: np.ndarray, repeats: int) -> None:
    n, d = X.shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.NotPrivateWarning)
        t = interleaved_medians(
            {
                "ag": lambda: dps.pca_ag(X, 1.0, DELTA, rng=0),
                "sn": lambda: dps.pca_sn(X, 1.0, rng=0),
                "gram": lambda: X.T @ X,
            },
            repeats=repeats,
        )
    for name in ("ag", "sn"):
        ratio = t[name] / t["gram"]
        results.add(
            "pca floor",
            f"pca_{name}, n={n:.0e}, d={d}",
            "time / (X.T @ X)",
            ratio,
            f"<= {AG_LIMIT}",
            status(ratio, AG_LIMIT),
            f"pca_{name} {t[name] * 1e3:.1f} ms, X.T@X {t['gram'] * 1e3:.1f} ms",
        )


def _secure_default(results: Results, tiny: bool, repeats: int) -> None:
    """Issue 13: the exact default against X.T @ X at n = 1e5, interleaved and alone, and the spin diagnosis."""
    n = 4_000 if tiny else 100_000
    for d in (50,) if tiny else (100, 300, 784):
        _secure_default_one(results, _gaussian(n, d), tiny, repeats)


def _secure_default_one(results: Results, X: np.ndarray, tiny: bool, repeats: int) -> None:
    n, d = X.shape
    inter = interleaved_medians(
        {"ag": lambda: dps.pca_ag(X, 1.0, DELTA, rng=0), "gram": lambda: X.T @ X}, repeats=max(repeats, 7)
    )
    alone = {
        "ag": _median_time(lambda: dps.pca_ag(X, 1.0, DELTA, rng=0), max(repeats, 7)),
        "gram": _median_time(lambda: X.T @ X, max(repeats, 7)),
    }
    for mode, t in (("interleaved", inter), ("alone", alone)):
        ratio = t["ag"] / t["gram"]
        results.add(
            "secure default",
            f"pca_ag exact, n={n:.0e}, d={d}, {mode}",
            "time / (X.T @ X)",
            ratio,
            f"<= {AG_LIMIT}",
            status(ratio, AG_LIMIT),
            f"pca_ag {t['ag'] * 1e3:.1f} ms, X.T@X {t['gram'] * 1e3:.1f} ms",
        )
    if not tiny:
        ratio = _interleaved_ratio_without_spin(n, d, max(repeats, 7))
        results.add(
            "secure default",
            f"pca_ag exact, n={n:.0e}, d={d}, interleaved, OPENBLAS_THREAD_TIMEOUT=4",
            "time / (X.T @ X)",
            ratio,
            f"<= {AG_LIMIT}",
            status(ratio, AG_LIMIT),
            "diagnosis: OpenBLAS workers stop spinning at once",
        )


def _interleaved_ratio_without_spin(n: int, d: int, repeats: int) -> float:
    """The interleaved ratio measured in a child process whose OpenBLAS workers spin for 2^4 cycles only."""
    import os
    import subprocess
    import sys

    code = (
        "import numpy as np, dpstats as dps; from benchmarks._harness import interleaved_medians\n"
        f"X = np.random.default_rng(0).standard_normal(({n}, {d})); X /= np.linalg.norm(X, axis=1).max()\n"
        f"t = interleaved_medians({{'ag': lambda: dps.pca_ag(X, 1.0, {DELTA}, rng=0), 'gram': lambda: X.T @ X}}, "
        f"repeats={repeats})\nprint(t['ag'] / t['gram'])"
    )
    env = {**os.environ, "OPENBLAS_THREAD_TIMEOUT": "4"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def _ppm(results: Results, tiny: bool, repeats: int) -> None:
    n, d, k, n_iter = (2_000, 100, 10, 10) if tiny else (10_000, 784, 50, 50)
    X, source = _mnist_like(n, d)
    A = second_moment(X)
    Y = np.linalg.qr(np.random.default_rng(1).standard_normal((d, k)))[0]
    t = interleaved_medians(
        {
            "ppm": lambda: dps.pca_ppm(X, k, 1.0, DELTA, n_iter=n_iter, rng=0),
            "gram": lambda: second_moment(X),
            "AY": lambda: A @ Y,
        },
        repeats=repeats,
    )
    after = t["ppm"] - t["gram"]
    results.add(
        "pca",
        f"pca_ppm, {source} d={d}, k={k}, n_iter={n_iter}",
        "s after X^T X",
        after,
        f"<= {PPM_LIMIT_S}",
        status(after, PPM_LIMIT_S),
        f"total {t['ppm']:.3f} s, forming X^T X {t['gram']:.3f} s",
    )
    per_iter = after / n_iter
    results.add(
        "pca floor",
        f"pca_ppm per iteration, d={d}, k={k}",
        "time / (A @ Y)",
        per_iter / t["AY"],
        note=f"{per_iter * 1e3:.2f} ms per iteration (noise, A@Y, QR), A@Y {t['AY'] * 1e3:.2f} ms",
    )


def _ppca(results: Results, tiny: bool, repeats: int) -> None:
    n, d, k = (2_000, 60, 5) if tiny else (10_000, 784, 50)
    X, source = _mnist_like(n, d)
    for sampler, label in (
        ("sequential", "sequential (default, proven)"),
        ("gibbs", f"Gibbs, {DEFAULT_SWEEPS} sweeps (unproven)"),
    ):
        start = time.perf_counter()
        V = dps.pca_ppca(X, k, 1.0, sampler=sampler, rng=0)
        elapsed = time.perf_counter() - start
        results.add(
            "pca",
            f"pca_ppca {label}, {source} d={d}, k={k}",
            "s per release",
            elapsed,
            f"<= {PPCA_LIMIT_S}",
            status(elapsed, PPCA_LIMIT_S),
            f"captured energy {captured_energy(X, V):.1f}% at eps=1",
        )
    A = second_moment(X) / 2.0  # the exponential mechanism's etr((eps/2) V^T X^T X V) at eps = 1
    t = interleaved_medians(
        {"sweep": lambda: sample_matrix_bingham(A, k, n_sweeps=1, rng=0), "eigh": lambda: np.linalg.eigh(A)},
        repeats=max(1, repeats // 2) if not tiny else repeats,
    )
    results.add(
        "pca floor",
        f"Bingham Gibbs sweep, d={d}, k={k}",
        "time / eigh(d x d)",
        t["sweep"] / t["eigh"],
        note=f"sweep {t['sweep']:.2f} s (k eighs of size d-k+1 plus rejection steps), eigh {t['eigh'] * 1e3:.1f} ms",
    )


def _ag_and_ppca_times(X: np.ndarray, k: int, repeats: int) -> tuple[float, float]:
    return (
        _median_time(lambda: dps.pca_ag(X, 1.0, DELTA, rng=0), repeats),
        _median_time(lambda: dps.pca_ppca(X, k, 1.0, rng=0), max(1, repeats // 2)),
    )


def _fit_exponent(x, y) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def _scaling(results: Results, tiny: bool, repeats: int) -> None:
    import matplotlib.pyplot as plt

    ns = [1_000, 4_000, 16_000] if tiny else [10_000, 30_000, 100_000, 300_000, 1_000_000]
    ds = [20, 40, 80] if tiny else [50, 100, 200, 400, 800]
    n_fixed, d_fixed, k = (4_000, 40, 5) if tiny else (100_000, 100, 10)
    curves = {}
    for label, grid, shape in [("n", ns, lambda v: (v, d_fixed)), ("d", ds, lambda v: (n_fixed, v))]:
        ag, ppca = zip(*[_ag_and_ppca_times(_gaussian(*shape(value)), k, repeats) for value in grid], strict=True)
        curves[label] = (grid, ag, ppca)
        for name, times in (("pca_ag", ag), ("pca_ppca", ppca)):
            slope = _fit_exponent(grid, times)
            fixed = f"d={d_fixed}" if label == "n" else f"n={n_fixed:.0e}"
            results.add(
                "pca scaling",
                f"{name} time vs {label} ({fixed}, k={k})",
                f"exponent of {label}",
                slope,
                note=f"{grid[0]}..{grid[-1]}: {times[0] * 1e3:.1f} .. {times[-1] * 1e3:.1f} ms",
            )
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, label in zip(axes, ("n", "d"), strict=True):
        grid, ag, ppca = curves[label]
        ax.loglog(grid, ag, "o-", label=f"pca_ag (slope {_fit_exponent(grid, ag):.2f})")
        ax.loglog(grid, ppca, "s-", label=f"pca_ppca, k={k} (slope {_fit_exponent(grid, ppca):.2f})")
        ax.set_xlabel(f"{label} ({'rows' if label == 'n' else 'columns'}, log scale)")
        ax.set_ylabel("median wall time (s, log scale)")
        ax.set_title(f"time vs {label} ({f'd={d_fixed}' if label == 'n' else f'n={n_fixed:g}'})")
        ax.legend()
    fig.tight_layout()
    results.figures["pca_scaling"] = fig


def run(results: Results, *, tiny: bool, repeats: int) -> None:
    results.add(
        "pca",
        "default n_iter of pca_ppm at d=784, k=50",
        "iterations",
        default_n_iter(784, 50),
        note="ceil(10 ln d): data-independent",
    )
    _floor(results, tiny, repeats)
    _secure_default(results, tiny, repeats)
    _ppm(results, tiny, repeats)
    _ppca(results, tiny, repeats)
    _scaling(results, tiny, repeats)
