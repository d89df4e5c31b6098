"""Dong, Liang & Yi (2022) against the other PCA mechanisms, and what a private norm bound costs (issue 26).

Run ``python -m benchmarks --only bench_covariance_trace [--tiny]``.

Utility: captured energy (% of the optimal, :func:`dpstats.metrics.captured_energy`; mean ± standard error over
seeds) of the top-k subspace released by ``pca_ag``, ``pca_ppm``, ``pca_ppca`` (sequential, the proven default),
``pca_dong`` (AdaptiveCov, and SeparateCov) and Analyze Gauss after a private norm bound, at ε ∈ {0.3, 1, 3},
δ = 1e-6, k = 10, with the median fit time. Data, each with a public norm bound (no data-dependent scaling):
MNIST (pixels/255, rows divided by their bound √784 = 28), scikit-learn's digits (pixels/16, divided by 8), the
ICASSP 2016 spiked synthetic set (d = 100, clipped to norm 5, divided by 5) and Dong et al.'s skewed synthetic set
(d = 200, norms 1/8 … 1 with Zipf shares). The k = 10 energies are those of the papers' metric.

Private norm bound: AG and Dong on raw MNIST pixels (norms up to 28) with the public bound 28, with the largest
norm (what the papers divide by: not private) and with ``norm_bound="private"`` (10 % of ε for the bound), at the
same total ε.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import dpstats as dps
from dpstats.compendium import datasets
from dpstats.metrics import captured_energy

from ._harness import Results

DELTA = 1e-6
K = 10
EPSILONS = (0.3, 1.0, 3.0)
MECHANISMS = {
    "AG": dict(mechanism="ag"),
    "PPM": dict(mechanism="ppm"),
    "PPCA": dict(mechanism="ppca"),
    "Dong adaptive": dict(mechanism="dong"),
    "Dong separate": dict(mechanism="dong", algorithm="separate"),
    "AG + private bound": dict(mechanism="ag", norm_bound="private"),
}


def _data(tiny: bool) -> dict[str, np.ndarray]:
    digits, _ = datasets.load_digits()
    out = {"digits": digits / 8.0}
    if tiny:
        return out
    if datasets.is_available("mnist"):
        mnist, _ = datasets.load_mnist()
        out["MNIST"] = mnist / 28.0
    spiked = datasets.make_synthetic_pca(20_000, 100, 10, rng=2016)
    out["spiked"] = datasets.clip_rows(spiked, 5.0) / 5.0
    out["skewed"] = datasets.make_skewed_norms(50_000, 200, rng=2022)
    return out


def _energies(X: np.ndarray, options: dict, eps: float, seeds) -> tuple[float, float, float]:
    """(mean energy %, its standard error, median fit time in s) over ``seeds``."""
    values, times = [], []
    for seed in seeds:
        start = time.perf_counter()
        V = dps.pca(X, K, eps, DELTA, rng=seed, **options)
        times.append(time.perf_counter() - start)
        values.append(captured_energy(X, V, kind="X"))
    values = np.asarray(values)
    se = float(values.std(ddof=1) / np.sqrt(values.size)) if values.size > 1 else float("nan")
    return float(values.mean()), se, float(np.median(times))


def _utility(results: Results, tiny: bool) -> None:
    seeds = range(1) if tiny else range(5)
    epsilons = (1.0,) if tiny else EPSILONS
    mechanisms = {k: MECHANISMS[k] for k in ("AG", "Dong adaptive")} if tiny else MECHANISMS
    for name, X in _data(tiny).items():
        for eps in epsilons:
            for label, options in mechanisms.items():
                mean, se, seconds = _energies(X, options, eps, seeds)
                results.add(
                    "pca utility",
                    f"{name} n={X.shape[0]} d={X.shape[1]} eps={eps:g}",
                    f"{label} energy %",
                    mean,
                    note=f"s.e. {se:.2f}; fit {seconds:.2f} s",
                )


def _norm_bound(results: Results, tiny: bool) -> None:
    if tiny or not datasets.is_available("mnist"):
        raw, _ = datasets.load_digits()
        raw, public = raw * 16.0, 128.0  # pixels 0..16, norm <= 16·8
    else:
        raw, _ = datasets.load_mnist()
        public = 28.0  # pixels in [0, 1]: norm <= √784
    largest = float(np.linalg.norm(raw, axis=1).max())
    seeds = range(1) if tiny else range(5)
    epsilons = (1.0,) if tiny else EPSILONS
    bounds = {"public bound": public, "largest norm (not private)": largest, "private bound": "private"}
    for mechanism in ("ag", "dong"):
        for eps in epsilons:
            for label, bound in bounds.items():
                mean, se, seconds = _energies(raw, dict(mechanism=mechanism, norm_bound=bound), eps, seeds)
                results.add(
                    "norm bound",
                    f"{mechanism} n={raw.shape[0]} eps={eps:g}",
                    f"{label} energy %",
                    mean,
                    note=f"s.e. {se:.2f}; bound {bound if isinstance(bound, str) else f'{bound:.4g}'}",
                )


def run(results: Results, *, tiny: bool = False, repeats: int = 5) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.FloatingPointNoiseWarning)
        _utility(results, tiny)
        _norm_bound(results, tiny)
