"""Tests for dpstats.datasets: loaders on generated fixtures, fetch against a local server, generators."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import dpstats
from dpstats.compendium import datasets as ds
from dpstats.compendium.download import download
from dpstats.compendium.exceptions import DownloadError
from dpstats.exceptions import DataValidationError, ParameterError

SHARED_MNIST = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist.npz"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    folder = tmp_path / "data"
    folder.mkdir()
    monkeypatch.setenv("DPSTATS_DATA", str(folder))
    return folder


def _write_mnist(path: Path, n_train: int = 30, n_test: int = 10, **override) -> None:
    rng = np.random.default_rng(0)
    arrays = {
        "x_train": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "y_train": rng.integers(0, 10, n_train).astype(np.uint8),
        "x_test": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "y_test": rng.integers(0, 10, n_test).astype(np.uint8),
    }
    arrays.update(override)
    np.savez_compressed(path, **{k: v for k, v in arrays.items() if v is not None})


# --------------------------------------------------------------------------- where files live


def test_lazy_submodule():
    assert dpstats.datasets is ds


def test_data_home_prefers_env(monkeypatch, tmp_path):
    monkeypatch.setenv("DPSTATS_DATA", str(tmp_path))
    assert ds.data_home() == tmp_path
    monkeypatch.delenv("DPSTATS_DATA")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ds.data_home() == tmp_path / "xdg" / "dpstats"


def test_unknown_dataset_name_lists_valid_ones():
    with pytest.raises(ParameterError, match="covtype"):
        ds.dataset_path("cifar")


def test_missing_file_names_fetch_command(data_dir):
    with pytest.raises(ds.DatasetNotFoundError, match="dpstats data fetch mnist"):
        ds.load_mnist()
    with pytest.raises(ds.DatasetNotFoundError, match="dpstats data fetch covtype"):
        ds.load_covtype()


# --------------------------------------------------------------------------- loaders


def test_load_mnist_fixture_shapes_and_scaling(data_dir):
    _write_mnist(data_dir / "mnist.npz")
    X, y = ds.load_mnist("train")
    assert X.shape == (30, 784) and X.dtype == np.float64 and y.dtype == np.int64
    assert 0.0 <= X.min() and X.max() <= 1.0
    with np.load(data_dir / "mnist.npz") as raw:
        np.testing.assert_array_equal(X[3], raw["x_train"][3].ravel() / 255.0)
        np.testing.assert_array_equal(y, raw["y_train"])
    assert ds.load_mnist("test")[0].shape == (10, 784)
    assert ds.load_mnist("all")[0].shape == (40, 784)
    with pytest.raises(ParameterError, match="subset"):
        ds.load_mnist("validation")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"y_test": None}, r"lacks array\(s\) \['y_test'\]"),
        ({"x_train": np.zeros((30, 28, 27), dtype=np.uint8)}, r"x_train must be uint8 of shape \(n, 28, 28\)"),
        ({"x_train": np.zeros((30, 28, 28), dtype=np.float32)}, "got float32"),
        ({"y_train": np.zeros(29, dtype=np.uint8)}, "vector of length 30"),
        ({"y_train": np.full(30, 11, dtype=np.uint8)}, r"labels 0..9; found \[11\]"),
    ],
)
def test_load_mnist_rejects_bad_file_precisely(data_dir, override, message):
    _write_mnist(data_dir / "mnist.npz", **override)
    with pytest.raises(DataValidationError, match=message):
        ds.load_mnist("all")


@pytest.mark.skipif(not SHARED_MNIST.is_file(), reason="the shared MNIST copy (../shared/data) is not on this machine")
def test_load_real_mnist(monkeypatch):
    monkeypatch.setenv("DPSTATS_DATA", str(SHARED_MNIST.parent))
    X, y = ds.load_mnist("test")
    assert X.shape == (10000, 784)
    # label counts and first labels published in ../shared/data/README.md
    np.testing.assert_array_equal(np.bincount(y), [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009])
    np.testing.assert_array_equal(y[:10], [7, 2, 1, 0, 4, 1, 4, 9, 5, 9])


def test_load_covtype_fixture(data_dir):
    rng = np.random.default_rng(1)
    table = np.column_stack([rng.integers(0, 3000, (20, 54)), rng.integers(1, 8, 20)])
    with gzip.open(data_dir / "covtype.data.gz", "wt") as handle:
        np.savetxt(handle, table, fmt="%d", delimiter=",")
    X, y = ds.load_covtype()
    assert X.shape == (20, 54) and X.dtype == np.float64
    np.testing.assert_array_equal(y, table[:, -1])
    with gzip.open(data_dir / "covtype.data.gz", "wt") as handle:
        np.savetxt(handle, table[:, 1:], fmt="%d", delimiter=",")
    with pytest.raises(DataValidationError, match="must have 55 columns"):
        ds.load_covtype()
    (data_dir / "covtype.data.gz").write_bytes(b"not gzip")
    with pytest.raises(DataValidationError, match="not a gzip file"):
        ds.load_covtype()


def test_load_real_covtype_or_skip():
    if not ds.is_available("covtype"):
        pytest.skip(f"Covertype not at {ds.dataset_path('covtype')}; get it with `dpstats data fetch covtype`")
    X, y = ds.load_covtype()
    assert X.shape == (581012, 54)
    # class counts from ../shared/data/README.md (UCI)
    np.testing.assert_array_equal(np.bincount(y)[1:], [211840, 283301, 35754, 2747, 9493, 17367, 20510])


def test_load_digits():
    X, y = ds.load_digits()
    assert X.shape == (1797, 64) and X.dtype == np.float64
    assert X.min() == 0.0 and X.max() == 1.0
    assert set(np.unique(y)) == set(range(10))


# --------------------------------------------------------------------------- download


def test_download_good_file_then_idempotent(server, tmp_path):
    srv, root = server
    payload = os.urandom(300_000)
    (root / "blob.bin").write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    dest = tmp_path / "cache" / "blob.bin"
    assert download(srv.url("blob.bin"), dest, (digest,), progress=False) == dest
    assert dest.read_bytes() == payload and srv.requests == 1
    download(srv.url("blob.bin"), dest, (digest,), progress=False)
    assert srv.requests == 1  # verified copy present: no second request
    assert sorted(p.name for p in dest.parent.iterdir()) == ["blob.bin"]


def test_download_checksum_mismatch_leaves_nothing(server, tmp_path):
    srv, root = server
    (root / "blob.bin").write_bytes(b"corrupted bytes")
    dest = tmp_path / "cache" / "blob.bin"
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download(srv.url("blob.bin"), dest, ("0" * 64,), progress=False)
    assert list(dest.parent.iterdir()) == []


def test_download_replaces_a_bad_existing_copy(server, tmp_path):
    srv, root = server
    (root / "blob.bin").write_bytes(b"good")
    dest = tmp_path / "blob.bin"
    dest.write_bytes(b"stale")
    download(srv.url("blob.bin"), dest, (hashlib.sha256(b"good").hexdigest(),), progress=False)
    assert dest.read_bytes() == b"good"


def test_download_unreachable_and_missing(server, tmp_path):
    srv, _ = server
    dest = tmp_path / "blob.bin"
    with pytest.raises(DownloadError, match="could not download"):
        download(srv.url("absent.bin"), dest, ("0" * 64,), progress=False)
    with pytest.raises(DownloadError, match="could not download"):
        download("http://127.0.0.1:9/none", dest, ("0" * 64,), progress=False)  # port 9: discard, closed
    assert list(tmp_path.glob("*blob*")) == []


def test_fetch_registry_entry_from_file_url(data_dir, tmp_path):
    """The registry's MNIST checksums accept the project's copy; a corrupted copy is refused."""
    if SHARED_MNIST.is_file():
        source = tmp_path / "mirror.npz"
        shutil.copyfile(SHARED_MNIST, source)
        path = ds.fetch("mnist", url=source.as_uri(), progress=False)
        assert path == data_dir / "mnist.npz" and ds.is_available("mnist")
    bad = tmp_path / "bad.npz"
    _write_mnist(bad)
    (data_dir / "mnist.npz").unlink(missing_ok=True)
    with pytest.raises(DownloadError, match="checksum mismatch"):
        ds.fetch("mnist", url=bad.as_uri(), progress=False)
    assert list(data_dir.iterdir()) == []


# --------------------------------------------------------------------------- preprocessing


def test_clip_rows_only_touches_long_rows():
    from dpstats.preprocessing import clip_rows

    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    out = clip_rows(X, max_norm=1.0)
    np.testing.assert_allclose(out[0], [0.6, 0.8])
    np.testing.assert_array_equal(out[1:], X[1:])
    with pytest.raises(ParameterError, match="max_norm"):
        clip_rows(X, max_norm=0)
    with pytest.raises(DataValidationError):
        clip_rows(np.array([[np.nan, 1.0]]))
    assert ds.clip_rows is clip_rows  # the compendium's old name for it


def test_center_and_scale_by_max_norm():
    X = np.random.default_rng(2).normal(3.0, 2.0, (50, 4))
    C = ds.center(X)
    np.testing.assert_allclose(C.mean(axis=0), 0.0, atol=1e-12)
    S = ds.scale_by_max_norm(C)
    assert np.isclose(np.linalg.norm(S, axis=1).max(), 1.0)
    with pytest.raises(DataValidationError, match="all zeros"):
        ds.scale_by_max_norm(np.zeros((3, 2)))
    assert "not private" in ds.scale_by_max_norm.__doc__.lower()


# --------------------------------------------------------------------------- synthetic data


def test_synthetic_pca_covariance_top_share():
    w = np.linalg.eigvalsh(ds.synthetic_pca_covariance(100, 10))[::-1]
    assert w[:10].sum() / w.sum() >= 0.9
    assert w[9] > 10 * w[10]  # a clear eigengap at k
    np.testing.assert_array_equal(ds.synthetic_pca_covariance(), ds.synthetic_pca_covariance())


def test_make_synthetic_pca_seeded_and_shaped():
    X = ds.make_synthetic_pca(n=2000, rng=5)
    assert X.shape == (2000, 100)
    np.testing.assert_array_equal(X, ds.make_synthetic_pca(n=2000, rng=5))
    assert not np.array_equal(X, ds.make_synthetic_pca(n=2000, rng=6))


def test_make_two_class_gaussian_separation():
    X, y = ds.make_two_class_gaussian(rng=3)
    assert X.shape == (5000, 100) and set(np.unique(y)) == {-1, 1}
    cov = ds.synthetic_pca_covariance(100, 10)
    cov /= np.linalg.eigvalsh(cov)[-1]
    n_pos, n_neg = (y == 1).sum(), (y == -1).sum()
    diff = X[y == 1].mean(0) - X[y == -1].mean(0)
    d2 = diff @ np.linalg.solve(cov, diff)
    # E[d2] = 3.2² + d(1/n+ + 1/n-); sd ≈ 2·3.2·sqrt(1/n+ + 1/n-) ≈ 0.18 (cross term); allow 5 sd
    expected = 3.2**2 + 100 * (1 / n_pos + 1 / n_neg)
    assert abs(d2 - expected) < 5 * 2 * 3.2 * np.sqrt(1 / n_pos + 1 / n_neg)


def test_make_two_view_shares_k_sources():
    X, Y = ds.make_two_view(n=20000, d_x=8, d_y=6, k=2, rng=4)
    assert X.shape == (20000, 8) and Y.shape == (20000, 6)
    s = np.linalg.svd(X.T @ Y / len(X), compute_uv=False)
    # population cross-covariance A Bᵀ has rank 2; the sample error per entry is O(1/sqrt(n)) ≈ 0.007
    assert s[1] > 0.1 and s[2] < 0.05


def test_make_low_rank_coherence():
    low = ds.make_low_rank(2000, 50, 5, coherence="low", rng=0)
    high = ds.make_low_rank(2000, 50, 5, coherence="high", rng=0)
    for A in (low, high):
        assert np.linalg.matrix_rank(A) == 5
        assert np.isclose(np.linalg.norm(A), np.sqrt(2000))
    assert np.isclose(dpstats.metrics.coherence(high, kind="singular"), 2000 / 5)
    # random U: m/r · max row norm² ≈ max of 2000 χ²_5/5 draws; P(χ²_5 > 2·5·ln 2000 ≈ 76) is negligible
    assert dpstats.metrics.coherence(low, kind="singular") < 2 * np.log(2000)


def test_load_images_falls_back_to_digits(data_dir):
    X, y, source = ds.load_images()
    assert X.shape == (1797, 64) and source.startswith("digits (MNIST not installed")
    assert ds.load_images("digits")[2] == "digits"
    _write_mnist(data_dir / "mnist.npz")
    X, y, source = ds.load_images(subset="test")
    assert source == "mnist" and X.shape == (10, 784)


def test_two_digits_labels_and_order():
    X = np.arange(10.0).reshape(5, 2)
    Xp, yp = ds.two_digits(X, [3, 7, 1, 7, 3], positive=7, negative=3)
    np.testing.assert_array_equal(Xp, X[[0, 1, 3, 4]])
    assert yp.tolist() == [-1, 1, 1, -1]
    with pytest.raises(ValueError, match="no rows with label 4 or 5"):
        ds.two_digits(X, [3, 7, 1, 7, 3], 4, 5)
