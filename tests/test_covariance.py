"""dps.covariance and dps.amin_eigen (Amin et al. 2019): shape, bookkeeping, noise level, verified eigensolver."""

import math

import numpy as np
import pytest

import dpstats as dps
from dpstats._kernels.eigen import verified_eigen_error as _verified_eigen_error
from dpstats.decomposition._bingham import sample_sequential_bingham
from dpstats.decomposition._covariance import METHODS


def _spiked(n=2000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.r_[1.0, 0.6, np.full(d - 2, 0.1)]
    return X / np.linalg.norm(X, axis=1).max()


X = _spiked()
A = X.T @ X


def test_registry_has_amin():
    assert "amin" in METHODS


@pytest.mark.parametrize("options", [{}, {"rank": 2}, {"split": "adaptive"}, {"rank": 3, "eigenvalue_share": 0.2}])
def test_estimate_is_symmetric_psd_of_the_right_rank(options):
    C = dps.covariance(X, 1.0, rng=0, **options)
    assert C.shape == (6, 6)
    np.testing.assert_array_equal(C, C.T)
    eig = np.linalg.eigvalsh(C)
    assert eig.min() >= -1e-9 * max(1.0, eig.max())
    assert np.sum(eig > 1e-6 * eig.max()) <= options.get("rank", 6)


def test_large_epsilon_recovers_the_second_moment_matrix():
    # Laplace scale 4/eps on the eigenvalues and a Bingham exponent eps/4 times an eigengap of ~150: at eps = 1e4 the
    # relative Frobenius error is far below 1 %.
    C = dps.covariance(X, 1e4, rng=1)
    assert np.linalg.norm(C - A) / np.linalg.norm(A) < 0.01


def test_eigenvalue_noise_has_the_calibrated_laplace_scale():
    # eps_0 = eps/2 = 0.5 and sensitivity 2R^2 ~ 2: Laplace scale b ~ 4, so E|noise| = b and sd = b·√2. Over 400
    # eigenvalues the mean absolute error is within 4 standard errors (sd/√400·... ) of b; a scale of b/2 or 2b fails.
    true = np.sort(np.linalg.eigvalsh(A))[::-1]
    errors = np.concatenate([dps.amin_eigen(X, 1.0, rng=s)[0] - true for s in range(80)])
    b = 2.0 / 0.5
    # errors are sorted noisy values minus sorted truth: sorting can only shrink the total absolute error
    assert abs(np.mean(errors)) < 4 * b * math.sqrt(2) / math.sqrt(errors.size)
    assert 0.7 * b < np.mean(np.abs(errors)) < 1.1 * b


@pytest.mark.parametrize("split", ["uniform", "adaptive"])
def test_ledger_charges_exactly_epsilon_before_sampling(split):
    acc = dps.Accountant(1.0)
    dps.covariance(X, 1.0, split=split, rng=2, accountant=acc)
    assert acc.spent[0] <= 1.0 + 1e-12
    entry = acc.ledger[-1]
    assert "Amin" in entry.note and "exact sampler" in entry.note
    with pytest.raises(dps.BudgetExceededError):
        dps.covariance(X, 0.5, split=split, rng=3, accountant=acc)


def test_full_rank_draws_the_last_vector_without_budget():
    acc = dps.Accountant(1.0)
    dps.covariance(X, 1.0, rng=4, accountant=acc)
    kinds = [event.kind for event in acc.ledger[-1].events]
    assert kinds.count("exponential") == X.shape[1] - 1


def test_same_seed_same_release_and_pca_is_the_rank_k_vectors():
    values, vectors = dps.amin_eigen(X, 1.0, rank=2, rng=5)
    np.testing.assert_array_equal(dps.pca(X, 2, 1.0, mechanism="amin", rng=5), vectors)
    np.testing.assert_array_equal(dps.amin_eigen(X, 1.0, rank=2, rng=5)[0], values)
    assert np.all(np.diff(values) <= 0)


def test_verified_eigen_error_bounds_the_true_error_and_catches_a_bad_decomposition():
    from scipy.linalg import eigh

    w, V = eigh(A)
    bound = _verified_eigen_error(A, w, V)
    assert 0 < bound < 1e-10
    # The bound holds against eigenvalues computed in higher precision.
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    exact = sorted(float(x) for x in mp.eigsy(mp.matrix(A.tolist()), eigvals_only=True))
    assert max(abs(a - b) for a, b in zip(exact, np.sort(w), strict=True)) <= bound
    # A perturbed eigenvalue (1e-6 off) is caught: the verified bound grows past it.
    w_bad = w.copy()
    w_bad[-1] += 1e-6
    assert _verified_eigen_error(A, w_bad, V) >= 1e-6
    # Vectors that are far from orthonormal give no bound at all.
    assert _verified_eigen_error(A, w, 2 * V) == math.inf


def test_sequential_scales_default_and_zero():
    B = np.diag([50.0, 10.0, 0.0, 0.0])
    np.testing.assert_array_equal(
        sample_sequential_bingham(B, 2, rng=0), sample_sequential_bingham(B, 2, scales=[1.0, 1.0], rng=0)
    )
    # Scale 0 makes the draw uniform: over many draws |v_1[0]|² averages 1/4, against ~1 for the concentrated one.
    zero = np.mean([sample_sequential_bingham(B, 1, scales=[0.0], rng=s)[0, 0] ** 2 for s in range(400)])
    full = np.mean([sample_sequential_bingham(B, 1, rng=s)[0, 0] ** 2 for s in range(400)])
    assert abs(zero - 0.25) < 0.06 and full > 0.9
    with pytest.raises(dps.DataValidationError, match="scales"):
        sample_sequential_bingham(B, 2, scales=[1.0, -1.0])


def test_covariance_dispatches_dong_to_its_mechanism():
    X = np.random.default_rng(3).uniform(-0.5, 0.5, (300, 4)) / 2
    acc = dps.Accountant(10.0, 1e-3)
    via_registry = dps.covariance(X, 1.0, 1e-6, method="dong", algorithm="separate", rng=9, accountant=acc)
    direct = dps.covariance_dong(X, 1.0, 1e-6, algorithm="separate", rng=9)
    np.testing.assert_array_equal(via_registry, direct)
    assert [e.mechanism for e in acc.ledger] == ["covariance_dong"]
    with pytest.raises(dps.ParameterError, match="delta > 0"):
        dps.covariance(X, 1.0, 0.0, method="dong")
    with pytest.raises(dps.ParameterError, match=r"delta must be 0.*method='amin'"):
        dps.covariance(X, 1.0, 1e-6)  # amin is pure: a delta it cannot use is an error, never ignored


def test_amin_with_a_public_norm_bound_is_the_release_on_the_scaled_rows_times_its_square():
    """method='amin' with norm_bound=R (a power of two: the division is exact) releases R² times the estimate of the
    rows divided by R, and charges once; with "private" it charges the bound and the release as one entry."""
    R = 8.0
    raw = X * R
    scaled = dps.covariance(raw, 1.0, norm_bound=R, rng=5)
    np.testing.assert_array_equal(scaled, R * R * dps.covariance(X, 1.0, rng=5))
    acc = dps.Accountant(10.0, 1e-6)
    dps.covariance(raw * 3, 1.0, norm_bound="private", rng=0, accountant=acc)
    assert len(acc.ledger) == 1 and 1.0 - 1e-8 < acc.ledger[0].epsilon <= 1.0


@pytest.mark.parametrize(
    "method, option, message",
    [
        ("amin", {"algorithm": "separate"}, "algorithm is an option of method='dong'; method='amin' takes"),
        ("dong", {"rank": 2}, "rank is an option of method='amin'; method='dong' takes"),
        ("amin", {"foo": 1}, "foo is not an option of covariance"),
    ],
)
def test_an_option_of_another_method_or_of_none_is_refused_naming_it(method, option, message):
    acc = dps.Accountant(10.0, 1e-6)
    with pytest.raises(dps.ParameterError, match=message):
        dps.covariance(X, 1.0, None, method=method, rng=0, accountant=acc, **option)  # None: the method's δ
    assert not acc.ledger
