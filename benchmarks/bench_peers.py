"""dpstats against diffprivlib on shared mechanisms: time and utility on the same data at the same ε.

PCA: diffprivlib's ``models.PCA`` (Amin et al. 2019, ``centered=True``, ``data_norm=1``) against
dpstats AG (δ = 1e-5), PPM (δ = 1e-5) and PPCA (pure ε, like diffprivlib's) on centred synthetic
data whose rows have norm <= 1; utility is the captured energy (% of the non-private top-k).
diffprivlib runs in a child process with a time limit: its Bingham rejection step divides by
(uᵀΩu)^{d/2} where it should multiply, so at large n·ε it may never accept; "did not finish"
is then the result.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import dpstats as dps
from dpstats.metrics import captured_energy

from ._harness import Results, run_with_timeout

EPSILONS = (0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
DELTA = 1e-5
PEER_TIME_LIMIT = 60.0


def _data(n: int, d: int, seed: int = 0) -> np.ndarray:
    """Centred Gaussian data with a decaying spectrum, rows scaled (publicly, by construction) to norm <= 1."""
    rng = np.random.default_rng(seed)
    scales = 1.0 / np.arange(1, d + 1)
    X = rng.standard_normal((n, d)) * scales
    X -= X.mean(axis=0)
    return X / np.linalg.norm(X, axis=1).max()


def _diffprivlib_pca(X: np.ndarray, k: int, epsilon: float, seed: int) -> np.ndarray:
    from diffprivlib.models import PCA

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = PCA(n_components=k, epsilon=epsilon, data_norm=1.0, centered=True, random_state=seed).fit(X)
    return model.components_.T


def _dpstats_pca(X: np.ndarray, k: int, epsilon: float, mechanism: str, seed: int) -> np.ndarray:
    delta = 0.0 if mechanism == "ppca" else DELTA
    return dps.pca(X, k, mechanism=mechanism, epsilon=epsilon, delta=delta, rng=seed)


def _peer_runs(X: np.ndarray, k: int, epsilon: float, seeds) -> list:
    """diffprivlib fits under the time limit; stops at the first one that does not finish (None)."""
    runs = []
    for seed in seeds:
        runs.append(run_with_timeout(_diffprivlib_pca, (X, k, epsilon, seed), PEER_TIME_LIMIT))
        if runs[-1] is None:
            break
    return runs


def _timed(func, *args):
    start = time.perf_counter()
    out = func(*args)
    return time.perf_counter() - start, out


def run(results: Results, *, tiny: bool, repeats: int) -> None:
    try:
        import diffprivlib  # noqa: F401
    except ImportError:
        results.add("peers", "diffprivlib PCA / LR", "skipped", "not installed", note="run `make bench`")
        return
    sizes = (2_000,) if tiny else (5_000, 100_000)
    d, k = (20, 3) if tiny else (100, 10)
    epsilons = EPSILONS[:2] if tiny else EPSILONS
    for n in sizes:
        X = _data(n, d)
        A = X.T @ X
        gave_up = False
        for eps in epsilons:
            seeds = range(repeats)
            ours = {m: [_timed(_dpstats_pca, X, k, eps, m, s) for s in seeds] for m in ("ag", "ppm", "ppca")}
            theirs = [] if gave_up else _peer_runs(X, k, eps, seeds)
            case = f"PCA n={n:.0e} d={d} k={k} eps={eps:g}"
            if gave_up or None in theirs:
                gave_up = True  # larger epsilon only raises n*epsilon, where its sampler stalls
                results.add("peers", case, "diffprivlib", "did not finish",
                            note=f"killed after {PEER_TIME_LIMIT:.0f} s (or at a smaller epsilon)")
                peer_energy, peer_time = 0.0, float("inf")
            else:
                peer_energy = float(np.median([captured_energy(A, V, kind="A") for _, V in theirs]))
                peer_time = float(np.median([t for t, _ in theirs]))
                results.add("peers", case, "diffprivlib energy %", peer_energy, note=f"fit {peer_time:.3g} s")
            for name, runs in ours.items():
                energy = float(np.median([captured_energy(A, V, kind="A") for _, V in runs]))
                fit = float(np.median([t for t, _ in runs]))
                if name == "ppca":  # the like-for-like comparison: both pure epsilon-DP
                    ok = energy >= peer_energy - 1.0 and fit <= peer_time
                    results.add("peers", case, "dpstats ppca energy %", energy, ">= diffprivlib (1 pt), faster",
                                "met" if ok else "MISSED", f"fit {fit:.3g} s, pure epsilon")
                else:
                    results.add("peers", case, f"dpstats {name} energy %", energy,
                                note=f"fit {fit:.3g} s, (epsilon, delta={DELTA:g})")
