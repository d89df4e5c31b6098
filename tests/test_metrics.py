"""Utility metrics: captured energy, subspace distance, low-rank error, coherence."""

import math

import numpy as np
import pytest

import dpstats as dps
from dpstats.metrics import captured_energy, coherence, low_rank_error, subspace_distance


def test_captured_energy_from_data_and_from_second_moment():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 5)) * np.array([3.0, 2.0, 1.0, 0.5, 0.1])
    A = X.T @ X
    V_opt = dps.top_components(A, 2)
    assert math.isclose(captured_energy(X, V_opt), 100.0)
    assert math.isclose(captured_energy(A, V_opt), 100.0)
    V = np.linalg.qr(rng.standard_normal((5, 2)))[0]
    expected = 100 * np.trace(V.T @ A @ V) / np.sort(np.linalg.eigvalsh(A))[-2:].sum()
    assert math.isclose(captured_energy(X, V), expected)
    assert math.isclose(captured_energy(A, V, kind="A"), expected)
    assert captured_energy(X, V) < 100.0


def test_subspace_distance():
    e = np.eye(3)
    assert subspace_distance(e[:, :2], e[:, [1, 0]]) == 0.0
    assert math.isclose(subspace_distance(e[:, :1], e[:, 1:2]), 1.0)
    theta = 0.3
    v = np.array([[math.cos(theta)], [math.sin(theta)], [0.0]])
    assert math.isclose(subspace_distance(e[:, :1], v), math.sin(theta))
    # equals the spectral norm of the projector difference
    assert math.isclose(subspace_distance(e[:, :1], v), np.linalg.norm(e[:, :1] @ e[:1] - v @ v.T, 2))
    assert subspace_distance(e[:, :1], e[:, :2]) == 1.0


def test_low_rank_error_is_one_for_truncated_svd():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((30, 8))
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    A2 = (U[:, :2] * s[:2]) @ Vt[:2]
    assert math.isclose(low_rank_error(A, A2, 2), 1.0)
    assert low_rank_error(A, np.zeros_like(A), 2) > 1.0
    assert low_rank_error(A2, A2, 2) == 0.0 and low_rank_error(A2, A, 2) == math.inf


def test_coherence_extremes():
    m = 16
    spread = np.ones((m, 4))  # every row the same norm: mu0 = 1
    assert math.isclose(coherence(spread), 1.0)
    spike = np.zeros((m, 4))
    spike[3, 0] = 1.0  # one nonzero row: mu0 = sqrt(m); its left singular vector is e_4: mu = m / 1
    assert math.isclose(coherence(spike), math.sqrt(m))
    assert math.isclose(coherence(spike, kind="singular"), m)
    H = np.linalg.qr(np.kron(np.array([[1, 1], [1, -1]]), np.ones((8, 1))))[0]  # flat singular vectors
    assert math.isclose(coherence(H @ np.diag([2.0, 1.0]), kind="singular"), 1.0)


def test_bad_input():
    with pytest.raises(dps.DataValidationError, match="orthonormal"):
        captured_energy(np.eye(3), np.ones((3, 1)))
    with pytest.raises(dps.DataValidationError, match="shape"):
        captured_energy(np.eye(3), np.eye(4)[:, :1])
    with pytest.raises(dps.ParameterError, match="kind"):
        coherence(np.eye(3), kind="max")
    with pytest.raises(dps.DataValidationError, match="zero"):
        coherence(np.zeros((3, 3)))


def test_sign_accuracy():
    from dpstats.metrics import sign_accuracy

    X = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0], [0.0, 0.0]])
    assert sign_accuracy([1.0, 1.0], X, [1, 1, -1, 1]) == 0.75  # the zero score counts as wrong
    with pytest.raises(ValueError, match="shapes do not match"):
        sign_accuracy([1.0], X, [1, 1, 1, 1])
