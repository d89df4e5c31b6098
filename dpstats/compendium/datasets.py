"""Datasets: real-data loaders, preprocessing and the papers' synthetic generators.

Every loader returns ``(X, y)``: ``X`` a float64 ``n × d`` matrix (rows are
people), ``y`` an int64 label vector of length ``n``.

Where the files live
--------------------
Real data are read from the folder :func:`data_home` returns: ``$DPSTATS_DATA``
if that variable is set, else ``$XDG_CACHE_HOME/dpstats`` (by default
``~/.cache/dpstats``). ``dpstats data fetch NAME`` downloads a dataset there
from its canonical public source and checks its SHA-256; ``dpstats data list``
shows what is expected where and what is present. A loader that finds no file
raises :class:`DatasetNotFoundError` naming that command.

Preprocessing and privacy
-------------------------
:func:`dpstats.preprocessing.clip_rows` (re-exported here) treats every row on
its own and is safe to use before a private release. :func:`center` and :func:`scale_by_max_norm` read statistics
of the whole data set (the mean, the largest row norm) and are **not
private**: they reproduce the papers' preprocessing, and a notebook that uses
them says so.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import check_array, check_choice, check_finite, check_int, check_positive
from ..exceptions import DataValidationError, ParameterError
from ..noise.random import check_rng
from ..preprocessing import clip_rows
from .download import download
from .exceptions import DatasetNotFoundError, DownloadError

__all__ = [
    "DATASETS",
    "DatasetNotFoundError",
    "DownloadError",
    "MAX_AMOUNT",
    "center",
    "clip_rows",
    "data_home",
    "dataset_path",
    "fetch",
    "is_available",
    "load_covtype",
    "load_digits",
    "load_images",
    "load_mnist",
    "make_low_rank",
    "make_skewed_norms",
    "make_synthetic_pca",
    "make_transactions",
    "make_two_class_gaussian",
    "make_two_view",
    "scale_by_max_norm",
    "synthetic_pca_covariance",
    "two_digits",
]


@dataclass(frozen=True)
class RemoteDataset:
    """Where a real dataset comes from and how to recognise a good copy."""

    name: str
    filename: str
    url: str
    sha256: tuple[str, ...]
    description: str
    citation: str
    licence: str


DATASETS: dict[str, RemoteDataset] = {
    "mnist": RemoteDataset(
        name="mnist",
        filename="mnist.npz",
        url="https://storage.googleapis.com/tensorflow/tf-keras-datasets/mnist.npz",
        # The Keras file at the URL, and the recompressed copy (same arrays, see data/README.md)
        # that the project's machines hold in ../shared/data.
        sha256=(
            "731c5ac602752760c8e48fbffcf8c3b850d9dc2a2aedcf2cc48468fc17b673d1",
            "06af5dfe73b70e3bc1c36439982b18a8d76803db9b544f6fdf838a37fbb01b64",
        ),
        description="MNIST handwritten digits, Keras layout: 60000 train + 10000 test 28x28 uint8 images, labels 0-9",
        citation="LeCun, Bottou, Bengio & Haffner, Proc. IEEE 86(11), 1998",
        licence="CC BY-SA 3.0",
    ),
    "covtype": RemoteDataset(
        name="covtype",
        filename="covtype.data.gz",
        url="https://archive.ics.uci.edu/ml/machine-learning-databases/covtype/covtype.data.gz",
        sha256=("614360d0257557dd1792834a85a1cdebfadc3c4f30b011d56afee7ffb5b15771",),
        description="UCI Covertype: 581012 rows, 54 integer features + cover type 1-7, gzip CSV",
        citation="Blackard & Dean, UCI Machine Learning Repository, 1998",
        licence="CC BY 4.0",
    ),
}

MNIST_IMAGE_SHAPE = (28, 28)
COVTYPE_FEATURES = 54
_SUBSETS = ("train", "test", "all")


# --------------------------------------------------------------------------- files


def data_home() -> Path:
    """The folder real datasets are read from and fetched into.

    ``$DPSTATS_DATA`` if set, else ``$XDG_CACHE_HOME/dpstats``, else ``~/.cache/dpstats``.
    """
    env = os.environ.get("DPSTATS_DATA")
    if env:
        return Path(env).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache).expanduser() / "dpstats"


def _dataset(name: str) -> RemoteDataset:
    return DATASETS[check_choice(name, "name", tuple(DATASETS))]


def dataset_path(name: str) -> Path:
    """Where the file of dataset ``name`` is expected (it may be missing)."""
    return data_home() / _dataset(name).filename


def is_available(name: str) -> bool:
    """Whether the file of dataset ``name`` is present in :func:`data_home`."""
    return dataset_path(name).is_file()


def fetch(name: str, *, url: str | None = None, progress: bool = True) -> Path:
    """Download dataset ``name`` into :func:`data_home`; do nothing if a verified copy is there.

    Parameters
    ----------
    name : {"mnist", "covtype"}
    url : str, optional
        Another source for the same file (a mirror or a ``file://`` URL); the
        SHA-256 check is the same.
    progress : bool, default True
        Show a progress bar.

    Returns
    -------
    pathlib.Path
        The verified file.

    Raises
    ------
    DownloadError
        Network failure or checksum mismatch; nothing is left behind.
    """
    spec = _dataset(name)
    try:
        return download(url or spec.url, dataset_path(name), spec.sha256, progress=progress)
    except DownloadError as err:
        raise DownloadError(
            f"{err}. Without network access, copy {spec.filename} into {data_home()} or set DPSTATS_DATA"
        ) from None


def _require(name: str) -> Path:
    path = dataset_path(name)
    if not path.is_file():
        raise DatasetNotFoundError(
            f"{name} not found at {path}; run `dpstats data fetch {name}` to download it, "
            f"or set DPSTATS_DATA to a folder that holds {DATASETS[name].filename}"
        )
    return path


# --------------------------------------------------------------------------- loaders


def load_mnist(subset: str = "train") -> tuple[np.ndarray, np.ndarray]:
    """MNIST digits as an ``n × 784`` float64 matrix with values in [0, 1].

    Parameters
    ----------
    subset : {"train", "test", "all"}, default "train"
        The 60000 training images, the 10000 test images, or both (training first).

    Returns
    -------
    X : ndarray of shape (n, 784), float64
        Pixels divided by 255 (a public bound, not read from the data), each
        image flattened row by row.
    y : ndarray of shape (n,), int64
        Digits 0–9.

    Raises
    ------
    DatasetNotFoundError
        ``mnist.npz`` is not in :func:`data_home`.
    DataValidationError
        The file lacks an array or holds the wrong shape, dtype or labels.
    """
    check_choice(subset, "subset", _SUBSETS)
    path = _require("mnist")
    parts = ("train", "test") if subset == "all" else (subset,)
    images, labels = [], []
    with np.load(path, allow_pickle=False) as archive:
        for part in parts:
            x, y = _mnist_part(archive, part, path)
            images.append(x)
            labels.append(y)
    X = np.concatenate(images).reshape(-1, MNIST_IMAGE_SHAPE[0] * MNIST_IMAGE_SHAPE[1]).astype(np.float64) / 255.0
    return X, np.concatenate(labels).astype(np.int64)


def _mnist_part(archive, part: str, path: Path) -> tuple[np.ndarray, np.ndarray]:
    keys = (f"x_{part}", f"y_{part}")
    missing = [k for k in keys if k not in archive.files]
    if missing:
        raise DataValidationError(f"{path} lacks array(s) {missing}; it holds {sorted(archive.files)}")
    x, y = archive[keys[0]], archive[keys[1]]
    if x.dtype != np.uint8 or x.ndim != 3 or x.shape[1:] != MNIST_IMAGE_SHAPE:
        raise DataValidationError(
            f"{path}: {keys[0]} must be uint8 of shape (n, 28, 28); got {x.dtype} of shape {x.shape}"
        )
    if y.ndim != 1 or y.shape[0] != x.shape[0] or not np.issubdtype(y.dtype, np.integer):
        raise DataValidationError(
            f"{path}: {keys[1]} must be an integer vector of length {x.shape[0]}; got {y.dtype} of shape {y.shape}"
        )
    _check_labels(y, range(10), f"{path}: {keys[1]}")
    return x, y


def _check_labels(y: np.ndarray, allowed: range, what: str) -> None:
    bad = np.setdiff1d(np.unique(y), np.arange(allowed.start, allowed.stop))
    if bad.size:
        raise DataValidationError(
            f"{what} must hold labels {allowed.start}..{allowed.stop - 1}; found {bad[:5].tolist()}"
        )


def load_covtype() -> tuple[np.ndarray, np.ndarray]:
    """UCI Covertype as a 581012 × 54 float64 matrix and labels 1–7.

    The features are the raw integers of the UCI file (10 quantitative
    columns, 4 wilderness and 40 soil-type indicators); scale them before a
    mechanism that needs bounded rows (e.g. :func:`clip_rows`).

    Returns
    -------
    X : ndarray of shape (n, 54), float64
    y : ndarray of shape (n,), int64
        Cover type 1–7.

    Raises
    ------
    DatasetNotFoundError
        ``covtype.data.gz`` is not in :func:`data_home`.
    DataValidationError
        The file is not 55 comma-separated integer columns with labels 1–7.
    """
    path = _require("covtype")
    try:
        with gzip.open(path, "rt") as handle:
            table = np.loadtxt(handle, delimiter=",", dtype=np.int64, ndmin=2)
    except (OSError, ValueError, EOFError) as err:
        raise DataValidationError(f"{path} is not a gzip file of comma-separated integers: {err}") from err
    if table.shape[1] != COVTYPE_FEATURES + 1:
        raise DataValidationError(
            f"{path} must have {COVTYPE_FEATURES + 1} columns (54 features + label); got {table.shape[1]}"
        )
    y = table[:, -1]
    _check_labels(y, range(1, 8), f"{path}: the label column")
    return table[:, :-1].astype(np.float64), y


def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled 8×8 digits (1797 images): the offline stand-in for MNIST.

    Returns
    -------
    X : ndarray of shape (1797, 64), float64
        Pixel intensities 0–16 divided by 16 (a public bound), so values lie in [0, 1].
    y : ndarray of shape (1797,), int64
        Digits 0–9.
    """
    from sklearn.datasets import load_digits as _sklearn_digits

    X, y = _sklearn_digits(return_X_y=True)
    return X.astype(np.float64) / 16.0, y.astype(np.int64)


def load_images(prefer: str = "mnist", subset: str = "train") -> tuple[np.ndarray, np.ndarray, str]:
    """MNIST if it is installed, else the bundled 8×8 digits: what the tutorials run on.

    Parameters
    ----------
    prefer : {"mnist", "digits"}, default "mnist"
        ``"mnist"`` loads MNIST when :func:`is_available` finds it and falls back
        to :func:`load_digits` otherwise; ``"digits"`` always loads the digits.
    subset : {"train", "test", "all"}, default "train"
        MNIST part (see :func:`load_mnist`); ignored for the digits.

    Returns
    -------
    X : ndarray of shape (n, 784) or (1797, 64), float64 in [0, 1]
    y : ndarray of shape (n,), int64, digits 0–9
    source : str
        What was loaded: ``"mnist"`` or, when it was not installed,
        ``"digits (MNIST not installed: dpstats data fetch mnist)"``; ``"digits"``
        when asked for.
    """
    check_choice(prefer, "prefer", ("mnist", "digits"))
    if prefer == "mnist" and is_available("mnist"):
        return (*load_mnist(subset), "mnist")
    source = "digits" if prefer == "digits" else "digits (MNIST not installed: dpstats data fetch mnist)"
    return (*load_digits(), source)


def two_digits(X, y, positive: int, negative: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows of two digit classes, labelled +1 (``positive``) and −1 (``negative``), in their original order."""
    y = np.asarray(y)
    keep = (y == positive) | (y == negative)
    if not keep.any():
        raise ParameterError(f"no rows with label {positive} or {negative}; labels present: {np.unique(y).tolist()}")
    return np.asarray(X)[keep], np.where(y[keep] == positive, 1, -1)


# --------------------------------------------------------------------------- preprocessing


def center(X) -> np.ndarray:
    """Subtract the column means.

    **Not private**: the means are read from the data. This is the papers'
    preprocessing step; a private pipeline centres with a public or privately
    released mean (:func:`dpstats.mean`).
    """
    X = check_finite(check_array(X, "X", ndim=(2,)), "X")
    return X - X.mean(axis=0)


def scale_by_max_norm(X) -> np.ndarray:
    """Divide every row by the largest row L2 norm, so that all rows have norm <= 1.

    **Not private**: the largest norm is a statistic of the data, and it can be
    set by a single person. The PCA papers (Imtiaz & Sarwate 2016, Section 4)
    normalise this way; dpstats reproduces it only to follow them. Use
    :func:`clip_rows` for a private pipeline.
    """
    X = check_finite(check_array(X, "X", ndim=(2,)), "X")
    largest = float(np.sqrt(np.einsum("ij,ij->i", X, X).max()))
    if largest == 0.0:
        raise DataValidationError("X is all zeros; its rows cannot be scaled by their largest norm")
    return X / largest


# --------------------------------------------------------------------------- synthetic data

# The paper's covariance is "pre-determined" but not published; dpstats fixes its eigenbasis with this seed.
_COVARIANCE_SEED = 2016


def _fixed_orthogonal(d: int) -> np.ndarray:
    Q, R = np.linalg.qr(np.random.default_rng(_COVARIANCE_SEED).standard_normal((d, d)))
    return Q * np.sign(np.diag(R))


def synthetic_pca_covariance(d: int = 100, k: int = 10, *, top_share: float = 0.95) -> np.ndarray:
    """The fixed covariance behind :func:`make_synthetic_pca`.

    Eigenvalues: the top ``k`` fall linearly from 1 to 0.55 (1 − 0.45 (i−1)/(k−1));
    the other ``d − k`` are equal and sized so that the top-k subspace holds
    exactly ``top_share`` of the trace. Eigenvectors: a fixed random rotation
    (seed 2016), the same for every call.

    Parameters
    ----------
    d, k : int
        Dimension and the size of the dominant subspace, 1 <= k < d.
    top_share : float, default 0.95
        Share of the variance in the top-k subspace, in (0, 1). The paper picks
        k so that this share is at least 90%.

    Returns
    -------
    ndarray of shape (d, d)
    """
    d = check_int(d, "d", low=2)
    k = check_int(k, "k", low=1, high=d - 1)
    top_share = check_positive(top_share, "top_share")
    if top_share >= 1.0:
        raise ParameterError(f"top_share must be in (0, 1); got {top_share}")
    top = 1.0 - 0.45 * np.arange(k) / max(k - 1, 1)
    tail = np.full(d - k, top.sum() * (1.0 - top_share) / top_share / (d - k))
    Q = _fixed_orthogonal(d)
    return (Q * np.concatenate([top, tail])) @ Q.T


def make_synthetic_pca(n: int = 60000, d: int = 100, k: int = 10, *, top_share: float = 0.95, rng=None) -> np.ndarray:
    """The ICASSP 2016 synthetic PCA set: n iid rows from N(0, Σ) with Σ = :func:`synthetic_pca_covariance`.

    Imtiaz & Sarwate (2016), Section 4: "a synthetic data set (d = 100,
    n = 60000, k = 10) generated with a pre-determined covariance matrix",
    with k chosen so the top-k subspace holds at least 90% of the variance (here 95%).
    The rows are not norm-bounded: the paper then centres and divides by the
    largest row norm (:func:`center`, :func:`scale_by_max_norm`, not private),
    or use :func:`clip_rows`.

    Parameters
    ----------
    n, d, k : int
    top_share : float, default 0.95
        Share of the variance in the top-k subspace (:func:`synthetic_pca_covariance`): it sets the eigengap
        λ_k / λ_(k+1) (0.95, the paper's set: 0.55 against 0.0045; 0.3: 0.55 against 0.2).
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of shape (n, d), float64
    """
    n = check_int(n, "n")
    cov = synthetic_pca_covariance(d, k, top_share=top_share)
    L = np.linalg.cholesky(cov)
    return check_rng(rng).standard_normal((n, cov.shape[0])) @ L.T


def make_skewed_norms(n: int = 50_000, d: int = 200, *, levels: int = 4, steepness: float = 3.0, rng=None):
    """The skewed synthetic data of Dong, Liang & Yi (NeurIPS 2022, Section 6): rows of norm <= 1, most of them short.

    The directions are those of correlated Gaussian rows (N(0, I) rows times a d × d matrix of uniform [0, 1)
    entries, then centred); the norms are set to 2^-(levels−1), …, 1/2, 1, the shortest for most rows: a share
    proportional to 1/1^s, 1/2^s, …, 1/levels^s (Zipf's law with steepness s) of the rows gets each norm, in that
    order. ``levels=1`` gives every row norm 1 (the paper's worst case, trace 1 after dividing by n). The norm
    bound 1 is public; the trace of XᵀX/n is about Σ_l p_l 4^-(levels−l).

    Parameters
    ----------
    n, d : int
    levels : int, default 4
        Number of distinct norms (the paper's N).
    steepness : float, default 3
        Zipf's exponent s: the larger, the more rows are short.
    rng : None, int or numpy.random.Generator

    Returns
    -------
    ndarray of shape (n, d), float64
        Rows in a random order.
    """
    n, d, levels = check_int(n, "n"), check_int(d, "d"), check_int(levels, "levels")
    steepness = check_positive(steepness, "steepness")
    gen = check_rng(rng)
    X = gen.standard_normal((n, d)) @ gen.uniform(0.0, 1.0, (d, d))
    X -= X.mean(axis=0)
    weights = 1.0 / np.arange(1, levels + 1) ** steepness
    counts = np.floor(n * np.cumsum(weights) / weights.sum()).astype(np.int64)
    counts[-1] = n
    norms = np.repeat(2.0 ** -np.arange(levels - 1, -1, -1), np.diff(np.concatenate([[0], counts])))
    X *= (norms[gen.permutation(n)] / np.linalg.norm(X, axis=1))[:, None]
    return X


def make_two_class_gaussian(
    n: int = 5000, d: int = 100, k: int = 10, *, mahalanobis: float = 3.2, rng=None
) -> tuple[np.ndarray, np.ndarray]:
    """The two-class Gaussian set of the ICASSP 2016 classification table (Table 1).

    Section 4: "(d = 100, n = 5000) generated i.i.d. Gaussian with one of two
    different means corresponding to the label y and a fixed covariance
    matrix with bounded spectral norm". Here the covariance is
    :func:`synthetic_pca_covariance` scaled to spectral norm 1, the labels are
    ±1 with probability 1/2 each, and the means ±μ point along the sum of the
    top-k eigenvectors with Mahalanobis distance ``‖2μ‖_Σ⁻¹ = mahalanobis``,
    so the Bayes error is Φ(−mahalanobis/2): 5.5% for the default 3.2, close
    to the 5.7% the paper's non-private SVD+SVM reaches.

    Returns
    -------
    X : ndarray of shape (n, d), float64
    y : ndarray of shape (n,), int64, values in {-1, +1}
    """
    n = check_int(n, "n")
    mahalanobis = check_positive(mahalanobis, "mahalanobis")
    cov = synthetic_pca_covariance(d, k)
    cov /= np.linalg.eigvalsh(cov)[-1]
    direction = _fixed_orthogonal(cov.shape[0])[:, :k].sum(axis=1)
    half = 0.5 * mahalanobis / np.sqrt(direction @ np.linalg.solve(cov, direction))
    gen = check_rng(rng)
    y = np.where(gen.random(n) < 0.5, -1, 1).astype(np.int64)
    X = gen.standard_normal((n, cov.shape[0])) @ np.linalg.cholesky(cov).T + np.outer(y, half * direction)
    return X, y


def make_two_view(
    n: int = 10000, d_x: int = 20, d_y: int = 20, k: int = 3, *, noise: float = 0.5, rng=None
) -> tuple[np.ndarray, np.ndarray]:
    """Two views driven by shared latent sources, for CCA.

    ``Z`` (n × k) has iid N(0, 1) entries; ``X = Z Aᵀ + noise·E_x`` and
    ``Y = Z Bᵀ + noise·E_y`` with loadings A (d_x × k) and B (d_y × k) drawn
    once from N(0, 1/k) and independent N(0, 1) noise E. The two views are
    correlated only through the k shared sources, so exactly k canonical
    correlations are non-zero; more ``noise`` makes them smaller.

    Returns
    -------
    X : ndarray of shape (n, d_x), float64
    Y : ndarray of shape (n, d_y), float64
    """
    n = check_int(n, "n")
    d_x, d_y = check_int(d_x, "d_x"), check_int(d_y, "d_y")
    k = check_int(k, "k", high=min(d_x, d_y))
    noise = check_positive(noise, "noise")
    gen = check_rng(rng)
    A = gen.standard_normal((d_x, k)) / np.sqrt(k)
    B = gen.standard_normal((d_y, k)) / np.sqrt(k)
    Z = gen.standard_normal((n, k))
    X = Z @ A.T + noise * gen.standard_normal((n, d_x))
    Y = Z @ B.T + noise * gen.standard_normal((n, d_y))
    return X, Y


def make_low_rank(m: int = 2000, n: int = 50, rank: int = 5, *, coherence: str = "low", rng=None) -> np.ndarray:
    """An exactly rank-``rank`` m × n matrix of low or high coherence (Hardt & Roth 2012).

    ``A = U diag(s) Vᵀ`` with singular values s = (rank, rank − 1, ..., 1)
    scaled so that ‖A‖_F = √m (typical row norm 1) and V a random orthonormal n × rank basis.
    With ``coherence="low"`` U is a random orthonormal m × rank basis, so its
    rows are spread out (μ-coherence O(log m)); with ``"high"`` U is the first
    ``rank`` standard basis vectors, so all the mass sits in ``rank`` rows and
    the μ-coherence is the largest possible, m / rank (Hardt & Roth, Section 5;
    measure it with :func:`dpstats.metrics.coherence`).

    Returns
    -------
    ndarray of shape (m, n), float64
    """
    m, n = check_int(m, "m"), check_int(n, "n")
    rank = check_int(rank, "rank", high=min(m, n))
    check_choice(coherence, "coherence", ("low", "high"))
    gen = check_rng(rng)
    if coherence == "low":
        U = np.linalg.qr(gen.standard_normal((m, rank)))[0]
    else:
        U = np.eye(m, rank)
    V = np.linalg.qr(gen.standard_normal((n, rank)))[0]
    s = np.arange(rank, 0, -1, dtype=np.float64)
    s *= np.sqrt(m) / np.linalg.norm(s)
    return (U * s) @ V.T


#: The largest purchase of :func:`make_transactions` (its public bound).
MAX_AMOUNT = 200.0


def make_transactions(
    n_people: int = 2000,
    *,
    mean_rows: float = 6.0,
    heavy_people: int = 5,
    heavy_rows: int = 400,
    n_cities: int = 60,
    n_pages: int = 2000,
    rng=None,
):
    """A synthetic table of purchases, one row per transaction: most people have a few rows, a few have very many.

    Every person has 1 + Poisson(``mean_rows`` − 1) purchases, except ``heavy_people`` heavy buyers with
    ``heavy_rows`` each. Amounts (euros) are log-normal around 25, capped at :data:`MAX_AMOUNT` by construction;
    the heavy buyers spend more (log-normal around 120). Each person lives in one city; cities and pages follow
    Zipf-like laws over ``n_cities`` and ``n_pages`` names, so both have a long tail of rare keys (the group-by
    tutorial's material). Needs pandas (the ``tables`` extra).

    Returns
    -------
    pandas.DataFrame
        Columns ``person`` (int id), ``amount`` (float in [0, MAX_AMOUNT]), ``city`` (str), ``page`` (str), one
        row per transaction, in a random order.
    """
    import pandas as pd

    n_people = check_int(n_people, "n_people")
    heavy_people = check_int(heavy_people, "heavy_people", low=0, high=n_people)
    heavy_rows = check_int(heavy_rows, "heavy_rows")
    mean_rows = check_positive(mean_rows, "mean_rows")
    if mean_rows < 1:
        raise ParameterError(f"mean_rows must be >= 1 (every person has a purchase); got {mean_rows!r}")
    gen = check_rng(rng)
    rows = 1 + gen.poisson(mean_rows - 1.0, n_people)
    rows[:heavy_people] = heavy_rows
    person = np.repeat(np.arange(n_people), rows)
    heavy = person < heavy_people
    amount = np.where(
        heavy, gen.lognormal(np.log(120.0), 0.3, person.size), gen.lognormal(np.log(25.0), 0.8, person.size)
    )
    city_of = _zipf_names("city", check_int(n_cities, "n_cities"), n_people, gen)
    pages = _zipf_names("page", check_int(n_pages, "n_pages"), person.size, gen)
    order = gen.permutation(person.size)
    return (
        pd.DataFrame(
            {"person": person, "amount": np.minimum(amount, MAX_AMOUNT), "city": city_of[person], "page": pages}
        )
        .iloc[order]
        .reset_index(drop=True)
    )


def _zipf_names(prefix: str, count: int, size: int, gen: np.random.Generator) -> np.ndarray:
    """``size`` names ``prefix-k`` drawn with probability ∝ 1/k (k = 1 … count): a few common, a long rare tail."""
    weights = 1.0 / np.arange(1, count + 1)
    names = np.array([f"{prefix}-{k}" for k in range(1, count + 1)])
    return names[gen.choice(count, size=size, p=weights / weights.sum())]
