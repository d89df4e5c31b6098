"""Hardt–Roth private low-rank approximation and the input-perturbation baseline."""

import math

import numpy as np
import pytest
from scipy import stats

import dpstats as dps
from dpstats.decomposition._lowrank import range_finder_sensitivity
from dpstats.metrics import low_rank_error

ALPHA = 1e-3
METHODS = ["range_finder", "input_perturbation"]


def _tall(m=1500, n=40, k=3, noise=0.5, seed=0):
    """Incoherent (Gaussian factors) rank-k signal plus iid background noise."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)) @ rng.standard_normal((k, n)) * 20 + noise * rng.standard_normal((m, n))


A_TALL = _tall()
#: Public bounds on A_TALL's entries (its largest magnitude is below 200).
BOUNDS = {"bounds": (-1000, 1000)}


@pytest.mark.parametrize("method", METHODS)
def test_shape_and_rank(method):
    B = dps.low_rank(A_TALL, 3, 1.0, 1e-6, method=method, rng=0, **BOUNDS)
    assert B.shape == A_TALL.shape
    assert np.linalg.matrix_rank(B) <= 3


def test_large_epsilon_is_near_optimal():
    # eps = 1e7: the privacy noise is negligible. Input perturbation then returns A_k (ratio 1).
    # The range finder is Halko-Martinsson-Tropp's: E||A - QQ^T A||_F <= sqrt(1 + k/(p-1)) ||A - A_k||_F
    # (HMT Thm 10.5 / Hardt-Roth Thm 3.1), and truncating QQ^T A to rank k adds at most ||A - A_k||_F,
    # so E[ratio] <= 1 + sqrt(1 + k/(p-1)) = 1 + sqrt(2.5) for k = p = 3; 5 seeds average below it.
    k = 3
    ip = low_rank_error(A_TALL, dps.low_rank(A_TALL, k, 1e7, 1e-6, method="input_perturbation", rng=0, **BOUNDS), k)
    assert ip < 1.001
    rf = np.mean([low_rank_error(A_TALL, dps.low_rank(A_TALL, k, 1e7, 1e-6, rng=s, **BOUNDS), k) for s in range(5)])
    assert rf < 1 + math.sqrt(1 + k / (k - 1))


@pytest.mark.parametrize("method", METHODS)
def test_error_falls_with_epsilon(method):
    errs = [
        np.mean(
            [
                low_rank_error(A_TALL, dps.low_rank(A_TALL, 3, eps, 1e-6, method=method, rng=s, **BOUNDS), 3)
                for s in range(3)
            ]
        )
        for eps in (0.3, 30.0)
    ]
    assert errs[1] < errs[0]


def test_range_finder_tail_bound():
    # P(||v^T Omega|| > tau) = delta_tail exactly for a unit v: check with 20000 draws (binomial test).
    rng = np.random.default_rng(1)
    ell, tail, n = 6, 0.05, 20000
    v = rng.standard_normal(30)
    v /= np.linalg.norm(v)
    exceed = sum(
        np.linalg.norm(v @ rng.standard_normal((30, ell))) > range_finder_sensitivity(ell, tail) for _ in range(n)
    )
    assert stats.binomtest(exceed, n, tail).pvalue > ALPHA


def test_projection_sensitivity_is_row_norm_of_basis():
    rng = np.random.default_rng(2)
    Q = np.linalg.qr(rng.standard_normal((50, 4)))[0]
    for _ in range(200):
        i, v = rng.integers(50), rng.standard_normal(7)
        v /= max(1.0, np.linalg.norm(v))
        E = np.zeros((50, 7))
        E[i] = v
        assert np.linalg.norm(Q.T @ E) <= np.linalg.norm(Q[i]) + 1e-12


def test_prune_threshold_one_changes_nothing():
    # Entries of an orthonormal basis are at most 1 in magnitude: pruning at 1 removes nothing.
    a = dps.low_rank(A_TALL, 2, 1.0, 1e-6, prune=1.0, rng=4, **BOUNDS)
    b = dps.low_rank(A_TALL, 2, 1.0, 1e-6, rng=4, **BOUNDS)
    np.testing.assert_array_equal(a, b)
    assert np.isfinite(dps.low_rank(A_TALL, 2, 1.0, 1e-6, prune=0.05, rng=4, **BOUNDS)).all()


def test_accountant_and_budget():
    acc = dps.Accountant(1.0, 1e-6, composition="basic")
    dps.low_rank(A_TALL, 2, 0.7, 5e-7, rng=0, accountant=acc, **BOUNDS)
    assert acc.spent == (0.7, 5e-7)
    with pytest.raises(dps.BudgetExceededError):
        dps.low_rank(A_TALL, 2, 0.7, 5e-7, method="input_perturbation", rng=0, accountant=acc, **BOUNDS)
    assert len(acc.ledger) == 1


def test_bad_input_raises():
    with pytest.raises(dps.ParameterError, match="delta > 0"):
        dps.low_rank(A_TALL, 2, 1.0, 0.0, **BOUNDS)
    for k in (0, 41):
        with pytest.raises(dps.ParameterError, match="k must be"):
            dps.low_rank(A_TALL, k, 1.0, 1e-6, **BOUNDS)
    with pytest.raises(dps.ParameterError, match="split"):
        dps.low_rank(A_TALL, 2, 1.0, 1e-6, split=1.0, **BOUNDS)
    with pytest.raises(dps.ParameterError, match="oversampling"):
        dps.low_rank(A_TALL, 2, 1.0, 1e-6, oversampling=39, **BOUNDS)
    with pytest.raises(dps.ParameterError, match="prune"):
        dps.low_rank(A_TALL, 2, 1.0, 1e-6, prune=-1.0, **BOUNDS)
    with pytest.raises(dps.ParameterError, match="method"):
        dps.low_rank(A_TALL, 2, 1.0, 1e-6, method="svd", **BOUNDS)
    bad = A_TALL.copy()
    bad[0, 0] = np.inf
    with pytest.raises(dps.DataValidationError, match="NaN or infinite"):
        dps.low_rank(bad, 2, 1.0, 1e-6, **BOUNDS)
