"""Bingham samplers against exact densities, and their numerical survival at huge concentration."""

import numpy as np
import pytest
from scipy import integrate, special, stats

from dpstats.decomposition._bingham import (
    sample_bingham,
    sample_matrix_bingham,
    sample_sequential_bingham,
    sample_vector_bingham,
)
from dpstats.exceptions import DataValidationError, ParameterError

ALPHA = 1e-3  # type-I error of each chi-square test (fixed seeds: deterministic)
LAM = np.array([3.0, 1.0, -2.0])
EDGES = np.linspace(0.0, 1.0, 11)


def _sphere_first_coordinate_probs(lam):
    """Exact P(|x_1| in bin) for x on S^2 with density ∝ exp(Σ λ_i x_i²).

    On S^2 the surface measure is dt dψ for t = x_1 (Archimedes), and integrating ψ gives
    f(t) ∝ exp(λ1 t² + s(λ2+λ3)/2) I0(s(λ2−λ3)/2) with s = 1 − t².
    """

    def density(t):
        s = 1.0 - t * t
        z = s * (lam[1] - lam[2]) / 2
        return np.exp(lam[0] * t * t + s * (lam[1] + lam[2]) / 2 + np.abs(z)) * special.i0e(z)  # i0e(z) = e^-|z| I0(z)

    p = np.array([integrate.quad(density, a, b)[0] for a, b in zip(EDGES[:-1], EDGES[1:], strict=True)])
    return p / p.sum()


def _chisquare_pvalue(values, probs):
    observed = np.histogram(values, EDGES)[0]
    return stats.chisquare(observed, probs * len(values)).pvalue


def test_vector_sampler_matches_exact_density_on_circle():
    # On S^1, x = (cos φ, sin φ): density in φ ∝ exp(λ1 cos²φ + λ2 sin²φ). Bins of φ in [0, π).
    lam, n = np.array([2.5, -1.0]), 6000
    rng = np.random.default_rng(0)
    xs = sample_vector_bingham(lam, rng, size=n)
    phi = np.mod(np.arctan2(xs[:, 1], xs[:, 0]), np.pi)
    edges = np.linspace(0, np.pi, 13)
    p = np.array(
        [
            integrate.quad(lambda f: np.exp(lam[0] * np.cos(f) ** 2 + lam[1] * np.sin(f) ** 2), a, b)[0]
            for a, b in zip(edges[:-1], edges[1:], strict=True)
        ]
    )
    assert stats.chisquare(np.histogram(phi, edges)[0], p / p.sum() * n).pvalue > ALPHA


def test_vector_sampler_matches_exact_density_on_sphere():
    rng = np.random.default_rng(1)
    xs = sample_vector_bingham(LAM, rng, size=6000)
    np.testing.assert_allclose(np.linalg.norm(xs, axis=1), 1.0, atol=2.0**-32 * np.sqrt(3))
    assert _chisquare_pvalue(np.abs(xs[:, 0]), _sphere_first_coordinate_probs(LAM)) > ALPHA


def _rotated(seed):
    Q = np.linalg.qr(np.random.default_rng(seed).standard_normal((3, 3)))[0]
    return Q, Q @ np.diag(LAM) @ Q.T


def test_matrix_sampler_k1_is_exact_for_general_parameter():
    # For k = 1 one sweep draws the single column from the full distribution: exact.
    Q, A = _rotated(2)
    rng = np.random.default_rng(3)
    vs = np.array([sample_matrix_bingham(A, 1, n_sweeps=1, rng=rng)[:, 0] for _ in range(2000)])
    assert _chisquare_pvalue(np.abs(vs @ Q[:, 0]), _sphere_first_coordinate_probs(LAM)) > ALPHA
    zs = np.array([sample_bingham(A, rng) for _ in range(2000)])
    assert _chisquare_pvalue(np.abs(zs @ Q[:, 0]), _sphere_first_coordinate_probs(LAM)) > ALPHA


def test_matrix_gibbs_chain_k2_matches_exact_subspace_distribution():
    # For d = 3, k = 2: tr(VᵀBV) = tr(B) − wᵀBw with w = v1 × v2 the normal of span(V). With
    # B = −A the normal w therefore follows the vector Bingham with parameter A, known exactly.
    # This exercises the multi-column Gibbs updates (an MCMC chain, 5 sweeps from a uniform start).
    Q, A = _rotated(4)
    rng = np.random.default_rng(5)
    normals = []
    for _ in range(1000):
        V = sample_matrix_bingham(-A, 2, n_sweeps=5, rng=rng)
        np.testing.assert_allclose(V.T @ V, np.eye(2), atol=1e-10)
        normals.append(np.cross(V[:, 0], V[:, 1]))
    assert _chisquare_pvalue(np.abs(np.array(normals) @ Q[:, 0]), _sphere_first_coordinate_probs(LAM)) > ALPHA


def test_survives_huge_concentration():
    # n * eps = 1e7 scale: parameter differences of 1e7 in 700 dimensions. No overflow, no NaN, and the
    # draw sits on the top axis: each of the 698 flat coordinates has y_i² ≈ 1/(2e7) on average, so
    # 1 − y_0² ≈ 3.5e-5; allow ten times that.
    rng = np.random.default_rng(6)
    lam = np.r_[1e7, 5e6, np.zeros(698)]
    y = sample_vector_bingham(lam, rng)
    assert np.isfinite(y).all() and 1 - y[0] ** 2 < 10 * 698 / 2e7
    d, k = 40, 5
    U = np.linalg.qr(rng.standard_normal((d, d)))[0]
    A = U @ np.diag(np.r_[np.full(k, 5e6), np.linspace(0, 1e6, d - k)]) @ U.T
    V = sample_matrix_bingham(A, k, n_sweeps=2, rng=rng)
    assert np.isfinite(V).all()
    np.testing.assert_allclose(V.T @ V, np.eye(k), atol=1e-9)
    # energy of V inside the top-k eigenspace: 1 − O(d / gap) with gap = 4e6
    assert np.linalg.norm(U[:, :k].T @ V) ** 2 > k - 1e-3
    # The exact sequential sampler certifies its envelope at this concentration too.
    W = sample_sequential_bingham(A, k, rng=rng)
    np.testing.assert_allclose(W.T @ W, np.eye(k), atol=2.0**-32 * d)
    assert np.linalg.norm(U[:, :k].T @ W) ** 2 > k - 1e-3


def test_k_equals_d_gives_orthogonal_matrix_and_d_one():
    V = sample_matrix_bingham(np.diag([1.0, 2.0, 3.0]), 3, rng=0)
    np.testing.assert_allclose(V @ V.T, np.eye(3), atol=1e-12)
    assert abs(sample_vector_bingham([5.0], rng=0)[0]) == 1.0


def test_bad_input():
    with pytest.raises(DataValidationError, match="square"):
        sample_matrix_bingham(np.ones((2, 3)), 1)
    with pytest.raises(ParameterError, match="k must be"):
        sample_matrix_bingham(np.eye(3), 4)
    with pytest.raises(DataValidationError, match="NaN"):
        sample_vector_bingham([1.0, np.nan])
