"""The small public data sets the declared releases' test cases run on (:class:`dpstats._registry.Example`).

Each function builds its data from a fixed seed, once per process: the golden releases (``tests/golden``), the Dask
agreement test (chunks cut the public blocks), the privacy-unit tests and the sensitivity checker's worst cases
read the same arrays as before the registry, so every recorded release is bitwise what it was. Pure NumPy (pandas
and dask only where a case needs a table or a lazy array, imported there).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

__all__ = ["golden", "golden_units", "streamed", "unit_data", "visits"]


@functools.cache
def golden() -> SimpleNamespace:
    """x (400 values in [0, 1]), M (300 × 3, columns scaled 1, 10, 100), X (600 × 6 rows of norm < 1), y (±1
    labels of X), Y (600 × 4 rows of norm < 1), A (80 × 12 entries in [0, 0.4]), words (300 of a–d), frame (M as a
    pandas DataFrame: age, height, income)."""
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
    return SimpleNamespace(x=x, M=M, X=X, y=y, Y=Y, A=A, words=words)


def frame():
    """:func:`golden`'s M as a pandas DataFrame (age, height, income)."""
    import pandas as pd

    return pd.DataFrame(golden().M, columns=["age", "height", "income"])


@functools.cache
def golden_units() -> SimpleNamespace:
    """Privacy units for :func:`golden`'s data: a few heavy units among light ones (x: 400 rows; M and words: 300;
    X: 600)."""
    rng = np.random.default_rng(20261126)
    x, M, X = (
        np.where(rng.random(n) < 0.3, rng.integers(0, 3, n), rng.integers(3, n // 4, n)) for n in (400, 300, 600)
    )
    return SimpleNamespace(x=x, M=M, X=X)


def visits():
    """A table of visits with a long tail of rare pages: 2,000 rows of 300 people (pandas)."""
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


@functools.cache
def streamed() -> SimpleNamespace:
    """The Dask agreement test's data: x (20,000 values in [0, 1]), X (20,000 × 6 rows of norm < 1), y (±1 labels
    of X), A (3,000 × 40)."""
    rng = np.random.default_rng(0)
    n, d = 20_000, 6
    X = rng.uniform(-1, 1, (n, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.05
    y = np.where(X[:, 0] + 0.2 * rng.standard_normal(n) > 0, 1.0, -1.0)
    x = rng.uniform(0, 1, n)
    A = rng.standard_normal((3_000, 40)) / 10
    return SimpleNamespace(x=x, X=X, y=y, A=A)


@functools.cache
def unit_data() -> SimpleNamespace:
    """The privacy-unit tests' data: 3,000 rows, unit 0 holding 400 of them (ids), values in [0, 10], X (rows of
    norm <= 1), y (±1), view (a second view: with 0.6·X joint rows of norm < 1), labels (a, b, c)."""
    rng = np.random.default_rng(2023)
    n = 3000
    ids = np.concatenate([np.zeros(400, dtype=np.int64), rng.integers(1, 600, n - 400)])
    values = rng.uniform(0, 10, n)
    X = rng.normal(size=(n, 4)) * [1.0, 0.7, 0.4, 0.2]
    X /= np.linalg.norm(X, axis=1, keepdims=True).max()
    y = np.where(X[:, 0] + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
    view = rng.normal(size=(n, 2))
    view *= 0.79 / np.linalg.norm(view, axis=1, keepdims=True).max()
    labels = rng.choice(["a", "b", "c"], n)
    return SimpleNamespace(ids=ids, values=values, X=X, y=y, view=view, labels=labels)
