"""DP-CCA: recovery at large epsilon, calibration, robustness to indefinite noisy blocks, bad input."""

import math

import numpy as np
import pytest
from scipy import stats

import dpstats as dps
from dpstats.decomposition._cca import canonical_correlations, default_ridge

ALPHA = 1e-3  # type-I error of the distributional test (fixed seed: deterministic)


def _views(n=4000, seed=0):
    """Two 3-D views sharing two latent signals with different strengths; joint rows have norm <= 1."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(-1, 1, (n, 2))
    X = np.column_stack(
        [s[:, 0] + 0.2 * rng.uniform(-1, 1, n), s[:, 1] + 0.8 * rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)]
    )
    Y = np.column_stack(
        [s[:, 0] + 0.3 * rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), s[:, 1] + 0.6 * rng.uniform(-1, 1, n)]
    )
    scale = math.sqrt(6) * 1.8  # every coordinate is in [-1.8, 1.8], so ‖[x, y]‖ <= 1
    return X / scale, Y / scale


X_VIEW, Y_VIEW = _views()


def _exact_cca(X, Y, k):
    """Non-private CCA of the uncentred data by QR + SVD (Björck & Golub 1973), independent of dpstats' route."""
    Qx, Rx = np.linalg.qr(X)
    Qy, Ry = np.linalg.qr(Y)
    P, S, Qt = np.linalg.svd(Qx.T @ Qy)
    n = X.shape[0]
    return math.sqrt(n) * np.linalg.solve(Rx, P[:, :k]), math.sqrt(n) * np.linalg.solve(Ry, Qt[:k].T), S[:k]


def test_large_epsilon_recovers_non_private_correlations_and_directions():
    U0, V0, rho0 = _exact_cca(X_VIEW, Y_VIEW, 2)
    res = dps.cca(X_VIEW, Y_VIEW, 2, epsilon=1e5, delta=1e-5, rng=0)
    # sigma ~ sqrt(2)/(n eps) * 4 ~ 1e-8 against block eigenvalues >= 0.01: errors ~ 1e-6 relative.
    np.testing.assert_allclose(res.correlations, rho0, atol=1e-4)
    Cxx, Cyy = X_VIEW.T @ X_VIEW / len(X_VIEW), Y_VIEW.T @ Y_VIEW / len(Y_VIEW)
    # Directions are unique up to sign (distinct correlations); compare in the Cxx / Cyy inner products.
    assert np.abs(np.diag(U0.T @ Cxx @ res.U)) == pytest.approx(1, abs=1e-4)
    assert np.abs(np.diag(V0.T @ Cyy @ res.V)) == pytest.approx(1, abs=1e-4)


def test_classic_calibration_reproduces_the_poster_tau():
    n, eps, delta = len(X_VIEW), 0.5, 1e-3
    res = dps.cca(X_VIEW, Y_VIEW, 1, eps, delta, calibration="classic", rng=0)
    assert res.sigma == pytest.approx(math.sqrt(2) / (n * eps) * math.sqrt(2 * math.log(1.25 / delta)), rel=1e-12)
    analytic = dps.cca(X_VIEW, Y_VIEW, 1, eps, delta, rng=0)
    assert analytic.sigma < res.sigma  # the analytic sigma is never larger


def test_noise_is_symmetric_gaussian_with_the_reported_sigma():
    res = dps.cca(X_VIEW, Y_VIEW, 1, 1.0, 1e-5, rng=3)
    E = res.C_hat - np.hstack([X_VIEW, Y_VIEW]).T @ np.hstack([X_VIEW, Y_VIEW]) / len(X_VIEW)
    np.testing.assert_allclose(E, E.T, atol=1e-15)
    upper = E[np.triu_indices(6)] / res.sigma
    assert stats.kstest(upper, "norm").pvalue > ALPHA


def test_utility_improves_with_epsilon():
    _, _, rho0 = _exact_cca(X_VIEW, Y_VIEW, 1)

    def err(eps):
        return np.median(
            [abs(dps.cca(X_VIEW, Y_VIEW, 1, eps, 1e-5, rng=s).correlations[0] - rho0[0]) for s in range(20)]
        )

    assert err(10.0) < err(0.1)


@pytest.mark.parametrize("eps", [1e-3, 0.05, 1.0])
def test_indefinite_noisy_blocks_never_crash_or_give_nan(eps):
    X, Y = X_VIEW[:30], Y_VIEW[:30]
    res = dps.cca(X, Y, 3, eps, 1e-5, rng=1)
    for arr in (res.U, res.V, res.correlations, res.C_hat):
        assert np.isfinite(arr).all()
    if eps == 1e-3:  # sigma ~ 1e3: the noisy diagonal blocks are indefinite
        assert np.linalg.eigvalsh(res.C_hat[:3, :3]).min() < 0
    # U is normalised in the floored metric: Uᵀ Cxx⁺ U = I
    vals, vecs = np.linalg.eigh(res.C_hat[:3, :3])
    Cxx_plus = (vecs * np.maximum(vals, res.ridge)) @ vecs.T
    np.testing.assert_allclose(res.U.T @ Cxx_plus @ res.U, np.eye(3), atol=1e-8)


def test_ridge_default_and_explicit():
    res = dps.cca(X_VIEW, Y_VIEW, 1, 1.0, 1e-5, rng=0)
    assert res.ridge == default_ridge(res.sigma, 6)
    assert dps.cca(X_VIEW, Y_VIEW, 1, 1.0, 1e-5, ridge=0.1, rng=0).ridge == 0.1


def test_canonical_correlations_of_an_exact_matrix():
    # x and y share one coordinate exactly: correlation 1 on that pair, 0 on the other.
    C = np.eye(4) / 2
    C[0, 2] = C[2, 0] = 0.5
    _, _, rho = canonical_correlations(C, 2, 2, 1e-12)
    np.testing.assert_allclose(rho, [1.0, 0.0], atol=1e-12)


def test_accountant_and_reproducibility():
    acc = dps.Accountant(1.0, 1e-4, composition="basic")
    a = dps.cca(X_VIEW, Y_VIEW, 2, 0.5, 1e-5, rng=7, accountant=acc)
    b = dps.cca(X_VIEW, Y_VIEW, 2, 0.5, 1e-5, rng=7)
    np.testing.assert_array_equal(a.U, b.U)
    assert acc.spent == (0.5, 1e-5)
    with pytest.raises(dps.BudgetExceededError):
        dps.cca(X_VIEW, Y_VIEW, 2, 0.6, 1e-5, rng=7, accountant=acc)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"Y": Y_VIEW[:-1]}, dps.DataValidationError, "same number of rows"),
        ({"X": X_VIEW * 3}, dps.OutOfBoundsError, "norm > 1"),
        ({"k": 4}, dps.ParameterError, "k must be"),
        ({"k": 0}, dps.ParameterError, "k must be"),
        ({"delta": 0.0}, dps.ParameterError, "delta > 0"),
        ({"epsilon": -1.0}, dps.ParameterError, "epsilon"),
        ({"ridge": 0.0}, dps.ParameterError, "ridge"),
        ({"calibration": "exact"}, dps.ParameterError, "calibration"),
    ],
)
def test_bad_input_raises_clear_errors(kwargs, error, match):
    args = {"X": X_VIEW, "Y": Y_VIEW, "k": 1, "epsilon": 1.0, "delta": 1e-5}
    args.update(kwargs)
    acc = dps.Accountant(10.0, 0.1)
    with pytest.raises(error, match=match):
        dps.cca(**args, rng=0, accountant=acc)
    assert acc.spent == (0.0, 0.0)


def test_clip_rescales_joint_rows():
    X, Y = X_VIEW.copy(), Y_VIEW.copy()
    X[0] *= 10
    res = dps.cca(X, Y, 1, 1.0, 1e-5, clip=True, rng=0)
    assert np.isfinite(res.U).all()
