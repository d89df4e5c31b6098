"""Dong, Liang & Yi (2022): SeparateCov and AdaptiveCov (dpstats.covariance_trace), their calibration and kernels."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest

import dpstats as dps
from dpstats._kernels.rows import PROFILE_BITS, norm_profile
from dpstats.accounting.events import Gaussian, PureDP, composed_gaussian
from dpstats.accounting.zcdp import zcdp_epsilon
from dpstats.decomposition._dong import RADII, _clipping_bias, _rayleigh_error, covariance_dong, pca_dong, zcdp_budget
from dpstats.exceptions import ParameterError
from dpstats.noise.release import make_noise

RNG = np.random.default_rng(2022)
D = 40
FULL = RNG.normal(size=(20_000, D)) * np.linspace(1.0, 0.1, D)
FULL /= np.linalg.norm(FULL, axis=1, keepdims=True).max()  # rows of norm up to 1
SMALL = FULL / 8  # the same directions, every row of norm <= 1/8: a trace 64 times smaller


def _frobenius(estimate, X):
    return float(np.linalg.norm(estimate - X.T @ X))


# ----------------------------------------------------------------------------- calibration and the ledger


@pytest.mark.parametrize("composition", ["pld", "zcdp", "advanced", "basic"])
@pytest.mark.parametrize("algorithm", ["separate", "adaptive"])
def test_a_budget_of_exactly_epsilon_delta_fits_under_every_rule(composition, algorithm):
    """The parts are calibrated to add up to (ε, δ): an accountant of exactly that budget takes the release, under
    every composition rule, as one entry (it would refuse it if a part were labelled or calibrated for more)."""
    acc = dps.Accountant(1.0, 1e-6, composition=composition)
    covariance_dong(SMALL, 1.0, 1e-6, algorithm=algorithm, rng=0, accountant=acc)
    (entry,) = acc.ledger
    assert acc.spent[0] <= 1.0 and entry.epsilon <= 1.0 and entry.delta <= 1e-6
    gaussians = [e for e in entry.events if isinstance(e, Gaussian)]
    assert len(gaussians) == 1  # the Gaussian steps are one Gaussian mechanism
    if algorithm == "adaptive":
        (pure,) = [e for e in entry.events if isinstance(e, PureDP)]
        assert pure.epsilon == pytest.approx(math.sqrt(zcdp_budget(1.0, 1e-6) / 4.0))  # the paper's rho/8
    with pytest.raises(dps.BudgetExceededError):
        covariance_dong(SMALL, 0.5, 1e-6, algorithm=algorithm, rng=0, accountant=acc)


def test_shares_compose_into_the_whole_gaussian():
    """Two halves of one (ε, δ) Gaussian budget compose into a multiplier at least the whole release's; a part
    labelled with a share it did not get (three halves) is caught by the exact label check."""
    whole = make_noise(epsilon=1.0, delta=1e-6, sensitivity=1.0, changed=1)
    halves = [make_noise(epsilon=1.0, delta=1e-6, sensitivity=1.0, changed=c, share=Fraction(1, 2)) for c in (1, 9)]
    event = composed_gaussian([h.event for h in halves], 1.0, 1e-6)
    assert event.sigma >= whole.event.noise_multiplier and event.epsilon == 1.0
    too_many = composed_gaussian([h.event for h in halves] + [halves[0].event], 1.0, 1e-6)
    assert too_many.epsilon > 1.0  # relabelled with its true, larger ε
    with pytest.raises(ParameterError, match="share"):
        make_noise(epsilon=1.0, delta=1e-6, sensitivity=1.0, changed=1, share=Fraction(3, 2))


def test_zcdp_budget_is_the_largest_rho_for_epsilon_delta():
    rho = zcdp_budget(1.0, 1e-6)
    assert zcdp_epsilon(rho, 1e-6) <= 1.0 < zcdp_epsilon(rho * (1 + 1e-9), 1e-6)


# ----------------------------------------------------------------------------- the kernels and the bounds


def test_norm_profile_counts_dyadic_levels_exactly():
    """Levels are (2^-l, 2^-(l-1)] with the powers of two at their upper ends; rows above 1 count in level 1, tiny
    and zero rows in none; Σq is the fixed-point sum of the clipped squared norms."""
    norms = np.array([1.0, 1.0 + 1e-12, 0.5, 0.5000001, 0.25, 2.0**-5, 2.0**-6, 0.0, 0.3])
    X = np.column_stack([norms, np.zeros_like(norms)])
    profile = norm_profile(X, 5, 1.0)
    assert profile[1:].tolist() == [3, 2, 1, 0, 0]  # (1/2, 1]: 1, 1 + 1e-12, 0.5000001; (1/4, 1/2]: 0.5, 0.3
    expected = sum(round(min(v * v, 1.0) * 2**PROFILE_BITS) for v in norms)
    assert profile[0] == expected


def test_clipping_bias_bounds_what_clipping_removes():
    """S_j >= Σ_i (‖x_i‖² − r_j²)₊ for every candidate radius r_j = 2^-j (the bound the radius step compares with
    the noise), and S_0 = 0 for rows of norm <= 1."""
    norms = np.concatenate([RNG.uniform(0, 1, 500), 2.0 ** -RNG.integers(0, 20, 200)])
    X = np.column_stack([norms, np.zeros_like(norms)])
    bias = _clipping_bias(norm_profile(X, RADII, 1.0)[1:])
    assert bias[0] == 0
    for j in range(RADII):
        removed = np.maximum(norms**2 - 4.0**-j, 0.0).sum()
        assert float(bias[j]) >= removed - 1e-9
    assert float(bias[3]) <= 4 * np.maximum(norms**2 - 4.0**-4, 0.0).sum() + 1e-9  # not vacuous: within 4x


def test_rayleigh_error_bound_covers_the_floating_point_statistic():
    """fl(p̃ᵀÃp̃) against the exact rational p̃ᵀAp̃ (A = XᵀX of the floats, exactly), for an orthonormalised P̃."""
    X = RNG.uniform(-1, 1, (300, 6))
    X /= np.linalg.norm(X, axis=1, keepdims=True) * 1.0000001
    A = X.T @ X
    _, P = np.linalg.eigh(A + RNG.normal(size=(6, 6)))
    P, _ = np.linalg.qr(P)
    computed = np.einsum("ij,ij->j", P, A @ P)
    rows = [[Fraction(v) for v in row] for row in X]
    exact_a = [[sum(r[j] * r[k] for r in rows) for k in range(6)] for j in range(6)]
    e_a = max(abs(Fraction(A[j, k]) - exact_a[j][k]) for j in range(6) for k in range(6))
    bound = _rayleigh_error(300, 6, float(e_a))
    for c in range(6):
        p = [Fraction(v) for v in P[:, c]]
        exact = sum(p[j] * exact_a[j][k] * p[k] for j in range(6) for k in range(6))
        assert abs(Fraction(computed[c]) - exact) <= bound


# ----------------------------------------------------------------------------- accuracy: what the paper promises


def test_separate_is_trace_sensitive_where_analyze_gauss_is_not():
    """Rows of norm <= 1/8 in d = 40: Analyze Gauss's error is its noise, about σ·d whatever the data; SeparateCov's
    eigenvector noise enters through √(tr·‖E‖₂) and its eigenvalue noise through σ√d, so its error is several times
    smaller when the trace is small against σ√d (theory: up to d/√d ≈ 6 here, less the factor √2 of the halved
    budget)."""
    ag = np.median([_frobenius(dps.pca_ag(SMALL, 1.0, 1e-6, rng=s), SMALL) for s in range(5)])
    separate = np.median(
        [_frobenius(covariance_dong(SMALL, 1.0, 1e-6, algorithm="separate", rng=s), SMALL) for s in range(5)]
    )
    assert separate < ag / 2


def test_adaptive_radius_follows_the_data():
    """Rows of norm <= 1/8 against the public bound 1: AdaptiveCov clips to a radius between the data's and 1 and its
    noise shrinks with it (the eigenvector term like the radius, the rest like its square). Its radius step resolves
    only radii whose predicted errors stand out of its own noise (scale 4/ε_svt ≈ 57 rows of norm 1 at ε = 1): here
    the first query that fires is spread over 1/8 … 1 (the predicted errors at 1/2 and below are tens, not
    hundreds), so the median gain is modest against SeparateCov (> 1.5x) and large against Analyze Gauss, whose
    σ·d ≈ 240 ignores the data (> 8x). On rows that fill the unit ball it stays within a small factor of the best
    of its two candidates (its radius step costs part of the budget)."""
    small = np.median([_frobenius(covariance_dong(SMALL, 1.0, 1e-6, rng=s), SMALL) for s in range(20)])
    ag = np.median([_frobenius(dps.pca_ag(SMALL, 1.0, 1e-6, rng=s), SMALL) for s in range(5)])
    separate = np.median(
        [_frobenius(covariance_dong(SMALL, 1.0, 1e-6, algorithm="separate", rng=s), SMALL) for s in range(5)]
    )
    assert small < separate / 1.5 and small < ag / 8
    full = np.median([_frobenius(covariance_dong(FULL, 1.0, 1e-6, rng=s), FULL) for s in range(5)])
    best = min(
        np.median([_frobenius(dps.pca_ag(FULL, 1.0, 1e-6, rng=s), FULL) for s in range(5)]),
        np.median([_frobenius(covariance_dong(FULL, 1.0, 1e-6, algorithm="separate", rng=s), FULL) for s in range(5)]),
    )
    assert full < 2 * best


def test_the_estimate_is_projected_onto_the_psd_matrices_it_may_be():
    estimate = covariance_dong(SMALL, 0.3, 1e-6, rng=1)
    assert np.allclose(estimate, estimate.T)
    values = np.linalg.eigvalsh(estimate)
    assert values.min() >= -1e-9 * max(1.0, values.max()) and values.max() <= SMALL.shape[0] * (1 + 1e-6)


def test_pca_dong_is_pca_mechanism_dong_with_orthonormal_columns():
    V = pca_dong(FULL, 3, 1.0, 1e-6, rng=4)
    np.testing.assert_array_equal(V, dps.pca(FULL, 3, 1.0, 1e-6, mechanism="dong", rng=4))
    np.testing.assert_allclose(V.T @ V, np.eye(3), atol=1e-9)
    assert dps.metrics.captured_energy(FULL, V) > 80


def test_spectrum_eigenvalues_reproduce_the_paper_with_float_noise_only():
    with pytest.raises(ParameterError, match="noise='float'"):
        covariance_dong(SMALL, 1.0, 1e-6, eigenvalues="spectrum", rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.FloatingPointNoiseWarning)
        out = covariance_dong(SMALL, 1.0, 1e-6, eigenvalues="spectrum", noise="float", algorithm="separate", rng=0)
    assert out.shape == (D, D)


def test_no_pure_variant_and_tiny_epsilon_are_refused_before_any_charge():
    acc = dps.Accountant(10.0, 1e-3)
    with pytest.raises(ParameterError, match="delta > 0"):
        covariance_dong(SMALL, 1.0, 0.0, accountant=acc)
    with pytest.raises(ParameterError, match="too small"):
        covariance_dong(SMALL, 1e-12, 1e-6, accountant=acc)
    assert acc.ledger == []


def test_tables_name_the_result():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(SMALL[:, :3], columns=["a", "b", "c"])
    out = covariance_dong(frame, 1.0, 1e-6, rng=0)
    assert list(out.index) == ["a", "b", "c"] and list(out.columns) == ["a", "b", "c"]
    assert list(pca_dong(frame, 2, 1.0, 1e-6, rng=0).columns) == ["pc1", "pc2"]
