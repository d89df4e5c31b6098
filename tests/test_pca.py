"""PCA mechanisms: recovery, monotone utility, noise scales, SN's erratum, audits, bad input."""

import importlib
import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import dpstats as dps
from dpstats._kernels.gram import norm_bound_squared
from dpstats.accounting import compose
from dpstats.audit import audit
from dpstats.decomposition._pca import default_n_iter, random_orthonormal, second_moment
from dpstats.metrics import captured_energy
from dpstats.noise import gaussian_sigma_analytic

ALPHA = 1e-3  # type-I error of each distributional test (fixed seeds: deterministic)
DP_MECHANISMS = [("ag", 1e-5), ("ppm", 1e-5), ("ppm", 0.0), ("ppca", 0.0), ("amin", 0.0)]


def _spiked(n=4000, d=12, k=3, seed=0):
    """Rows with a clear top-k subspace (variances 1 vs 0.05), scaled so the largest row norm is 1."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.r_[np.ones(k), np.full(d - k, 0.05)]
    return X / np.linalg.norm(X, axis=1).max()


X_SPIKED = _spiked()


def _run(mech, delta, X, k, eps, seed):
    return dps.pca(X, k, mechanism=mech, epsilon=eps, delta=delta, rng=seed)


@pytest.mark.parametrize("mech,delta", DP_MECHANISMS)
def test_large_epsilon_recovers_top_subspace(mech, delta):
    # At eps = 1e5 the noise (AG: sigma ~ 1e-4; PPM: sigma ~ 1e-3 per entry) is negligible against
    # the eigengap (~ n/4 * 0.95 ~ 300), and PPCA's density exp(eps/2 q(V)) concentrates on the optimum.
    V = _run(mech, delta, X_SPIKED, 3, 1e5, 0)
    assert captured_energy(X_SPIKED, V) > 97.0


@pytest.mark.parametrize("mech,delta", DP_MECHANISMS)
def test_utility_rises_with_epsilon(mech, delta):
    # Expected captured energy is increasing in eps (less noise, sharper exponential mechanism);
    # a factor 100 in eps and the mean over 5 seeds make the order unmistakable.
    X = _spiked(n=600, seed=1)
    means = [np.mean([captured_energy(X, _run(mech, delta, X, 3, eps, s)) for s in range(5)]) for eps in (0.5, 50)]
    assert means[0] < means[1]


@pytest.mark.parametrize("mech,delta", [*DP_MECHANISMS, ("sn", 0.0)])
def test_outputs_orthonormal_with_right_shape(mech, delta):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dps.NotPrivateWarning)
        V = _run(mech, delta, X_SPIKED[:200], 4, 1.0, 3)
    assert V.shape == (12, 4)
    np.testing.assert_allclose(V.T @ V, np.eye(4), atol=_grid_tolerance(12) if mech in ("ppca", "amin") else 1e-10)


@pytest.mark.parametrize("mech,delta", DP_MECHANISMS)
def test_same_seed_same_output(mech, delta):
    a, b = _run(mech, delta, X_SPIKED[:300], 2, 1.0, 7), _run(mech, delta, X_SPIKED[:300], 2, 1.0, 7)
    np.testing.assert_array_equal(a, b)


def test_second_moment_is_unnormalised_gram_matrix():
    X = X_SPIKED[:5000]
    np.testing.assert_allclose(second_moment(X), X.T @ X, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(second_moment(np.asfortranarray(X)), X.T @ X, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(
    "bad_row,value,error,match",
    [
        (3999, 0.9, dps.OutOfBoundsError, "1 row"),  # norm 0.9·√12 > 1, in the last part
        (2000, np.nan, dps.DataValidationError, "NaN"),  # in the middle part
    ],
)
def test_second_moment_in_parallel_parts_is_exact_and_checks_every_part(monkeypatch, bad_row, value, error, match):
    # Small blocks and three cores: X (4000 rows) spans 16 float blocks of 256 rows, split into 3 threaded parts;
    # the exact grid sums are cut in three at other places.
    from dpstats._engine import grid_gram
    from dpstats._kernels.gram import ExactGram

    monkeypatch.setattr(importlib.import_module("dpstats._kernels.gram"), "_GRAM_BLOCK_BYTES", 1)
    monkeypatch.setattr(importlib.import_module("dpstats._engine.numpy_engine"), "_cores", lambda: 3)
    X = X_SPIKED.copy()
    np.testing.assert_allclose(second_moment(X), X.T @ X, rtol=1e-12, atol=1e-12)
    grid = Fraction(1, 2**30)
    gram = grid_gram(X, grid)
    assert gram.values.dtype == np.int64 and gram.slack == 1.0
    # exactly Σ q qᵀ of the rows rounded to the plan's grid (Python integers, one block), rounded once, half up
    plan = ExactGram.of(X.shape[1])
    Q = np.rint(X * float(plan.multiplier)).astype(np.int64).astype(object)
    shift = (grid / plan.unit).numerator.bit_length() - 1
    np.testing.assert_array_equal(gram.values, (Q.T @ Q + (1 << shift >> 1)) // (1 << shift))
    # within the shrink, the rounding of every value and the final rounding of the exact product
    h, shrink = 2.0**-plan.bits, (2**plan.bits - plan.multiplier) * 2.0**-plan.bits
    column = np.abs(X).sum(axis=0)
    bound = 2 * shrink * (np.abs(X).T @ np.abs(X)) + h / 2 * (column[:, None] + column) + len(X) * h * h / 4
    assert (np.abs(gram.values * float(grid) - X.T @ X) <= bound * (1 + 1e-9) + float(grid)).all()
    X[bad_row] = value
    with pytest.raises(error, match=match):
        second_moment(X)
    with pytest.raises(error, match=match):
        grid_gram(X, grid)


def test_exact_gram_sums_beyond_int64_are_rounded_exactly():
    """Sums of more than about 2^20 rows leave int64 (Python integers): rounded half up to the grid exactly, and
    back in int64 when they fit."""
    from dpstats._kernels.gram import ExactGram, GramShare
    from dpstats._kernels.reduce import ExactSum

    plan = ExactGram.of(2)
    total = ExactSum((2, 2), 2.0**62)
    big = np.array([[2**62 - 1, -(2**61) - 12345], [-(2**61) - 12345, 2**62 - 1]], dtype=np.int64)
    for _ in range(5):
        total.add(big)
    assert total.total().dtype == object
    grid = plan.unit * 2**20
    gram = plan.on_grid(GramShare(total), grid)
    exact = [[5 * int(v) for v in row] for row in big]
    expected = [[(v + 2**19) // 2**20 for v in row] for row in exact]
    assert gram.values.dtype == np.int64 and gram.values.tolist() == expected and gram.slack == 1.0


@pytest.mark.parametrize("d", [1, 2, 3, 12, 100, 784])
def test_rows_rounded_for_the_exact_gram_keep_the_norm_bound(d):
    """The exact Gram sums round every entry to h = 2^-b after a shrink by ⌈√d⌉h: the rounded rows of the
    largest rows that pass the check (computed ‖x‖² up to 1 + τ), with every entry rounding up (just above a
    half-step), stay within the norm bound R the sensitivity uses. Rounding without the shrink exceeds it (d > 1)."""
    from fractions import Fraction as F

    from dpstats._kernels.gram import ExactGram, norm_bound_squared
    from dpstats._kernels.rows import NORM_TOLERANCE

    plan, rng = ExactGram.of(d), np.random.default_rng(d)
    h, limit = F(1, 2**plan.bits), F(norm_bound_squared(d))
    directions = [np.ones(d), *np.abs(rng.standard_normal((20, d))), *rng.standard_normal((20, d))]

    def worst(multiplier: float) -> F:
        largest = F(0)
        for direction in directions:
            x = direction * np.sqrt((1 + NORM_TOLERANCE) / np.einsum("i,i->", direction, direction))
            x = np.sign(x) * (np.floor(np.abs(x) * multiplier) + 0.5000001) / multiplier  # each rounds up
            while np.einsum("i,i->", x, x) > 1 + NORM_TOLERANCE:  # the check would refuse it
                x = np.sign(x) * (np.abs(np.rint(x * multiplier)) - 2 + 0.5000001) / multiplier
            q = np.rint(x * multiplier).astype(np.int64)
            largest = max(largest, sum(F(int(v)) ** 2 for v in q) * h * h)
        return largest

    assert worst(float(plan.multiplier)) <= limit
    if d > 1:  # the wrong variant, no shrink (one value on the grid cannot exceed 1: 1 is on it)
        assert worst(2.0**plan.bits) > limit


def test_ag_noise_is_symmetric_with_stated_scale():
    eps, delta = 0.7, 1e-6
    X = X_SPIKED[:100, :12]
    sigma = gaussian_sigma_analytic(math.sqrt(2), eps, delta)
    rng = np.random.default_rng(11)
    upper = []
    for _ in range(20):
        E = dps.pca_ag(X, eps, delta, rng=rng) - X.T @ X
        np.testing.assert_array_equal(E, E.T)
        upper.append(E[np.triu_indices(12)])
    # 20 x 78 iid N(0, sigma^2) entries: a KS test against the stated sigma at level ALPHA.
    assert stats.kstest(np.concatenate(upper) / sigma, "norm").pvalue > ALPHA


def test_ag_sensitivity_sqrt2_attained_and_classic_calibration():
    x, y = np.eye(3)[0], np.eye(3)[1]
    D = np.outer(x, x) - np.outer(y, y)
    assert math.isclose(np.linalg.norm(D[np.triu_indices(3)]), math.sqrt(2))
    with pytest.warns(dps.NotPrivateWarning):  # classic formula is only proven for eps < 1
        dps.pca_ag(X_SPIKED[:50], 2.0, 1e-5, calibration="classic", rng=0)


def test_sn_output_minus_gram_is_psd_with_paper_variance():
    eps = 0.1
    X = X_SPIKED[:300, :10]
    with pytest.warns(dps.NotPrivateWarning, match="Wishart"):
        A_hat = dps.pca_sn(X, eps, rng=5)
    E = A_hat - X.T @ X
    assert np.linalg.eigvalsh(E).min() > -1e-9
    # tr(E) = sum of d(d+1) squared N(0, 1/(2 eps)) entries: 2 eps tr(E) ~ chi2(110). The original
    # dp-stats' std 1/(2 eps) would give 2 eps tr(E) ~ 5 chi2(110), far outside the interval.
    lo, hi = stats.chi2.ppf([ALPHA / 2, 1 - ALPHA / 2], 110)
    assert lo < 2 * eps * np.trace(E) < hi


def test_sn_warns_every_call_and_is_refused_by_accountant():
    X = X_SPIKED[:50]
    for _ in range(2):
        with pytest.warns(dps.NotPrivateWarning):
            dps.pca_sn(X, 1.0, rng=0)
    acc = dps.Accountant(10.0)
    with pytest.warns(dps.NotPrivateWarning), pytest.raises(dps.NotPrivateError, match="erratum|Wishart"):
        dps.pca(X, 2, mechanism="sn", epsilon=1.0, accountant=acc)
    assert acc.spent == (0.0, 0.0)


def test_ppm_makes_exactly_n_iter_releases_with_exactly_composed_sigma():
    # Re-implement the documented algorithm with the same seed (floating-point noise, so the draws can be
    # replayed): same random start, then exactly L Gaussian releases with sigma = sqrt(L) * sigma_analytic, the
    # sigma for which L compositions are exactly one Gaussian at (eps, delta).
    X, k, eps, delta, L = X_SPIKED[:500], 3, 2.0, 1e-6, 7
    with pytest.warns(dps.FloatingPointNoiseWarning):
        V = dps.pca_ppm(X, k, eps, delta, n_iter=L, rng=3, noise="float")
    sigma = math.sqrt(L) * gaussian_sigma_analytic(math.sqrt(2) * norm_bound_squared(12), eps, delta)
    rng = np.random.default_rng(3)
    A = X.T @ X
    Y = random_orthonormal(12, k, rng)
    for _ in range(L):
        Y = np.linalg.qr(A @ Y + rng.normal(0.0, sigma, size=(12, k)))[0]
    np.testing.assert_allclose(V, Y, atol=1e-9)


def test_ppm_exact_noise_is_one_gaussian_event_repeated_and_costs_almost_nothing():
    X, eps, delta, L = X_SPIKED[:500], 2.0, 1e-6, 7
    acc = dps.Accountant(10.0, 1e-6)
    dps.pca_ppm(X, 3, eps, delta, n_iter=L, rng=3, accountant=acc)
    (event,) = acc.ledger[0].events
    assert event.discrete and event.repeat == L
    single = gaussian_sigma_analytic(1.0, eps, delta)  # the multiplier of one (eps, delta) Gaussian release
    # Grid rounding and the bound on A @ Y's floating-point error add a little noise, never less.
    assert single <= event.combined_multiplier <= single * 1.001
    assert compose([event], "pld", delta)[0] <= eps


def test_ppm_sensitivity_bounds_hold_on_random_neighbours():
    rng = np.random.default_rng(0)
    d, worst1, worst2, worst_l1 = 6, 0.0, 0.0, 0.0
    for _ in range(3000):
        x, y = rng.standard_normal((2, d))
        x, y = x / max(1, np.linalg.norm(x)), y / np.linalg.norm(y)
        D = np.outer(x, x) - np.outer(y, y)
        Y1, Y2 = random_orthonormal(d, 1, rng), random_orthonormal(d, 3, rng)
        worst1 = max(worst1, np.linalg.norm(D @ Y1))
        worst2 = max(worst2, np.linalg.norm(D @ Y2))
        worst_l1 = max(worst_l1, np.abs(D @ Y2).sum())
    assert worst1 <= 1 + 1e-12 and worst2 <= math.sqrt(2) + 1e-12 and worst_l1 <= 2 * math.sqrt(d * 3)


def test_default_n_iter_is_data_independent():
    assert default_n_iter(784, 50) == math.ceil(10 * math.log(784))
    X = X_SPIKED[:100]
    acc = dps.Accountant(5.0, 1e-3)
    dps.pca_ppm(X, 2, 1.0, 1e-5, rng=0, accountant=acc)
    assert acc.ledger[0].note.startswith(f"{default_n_iter(12, 2)} noisy iterations")


def _neighbours(d=2, background=0.5):
    """Datasets differing in row 0 (e1 versus e2); the other rows lie along e1 with norm ``background``."""
    X = np.zeros((3, d))
    X[:, 0] = background
    Xp = X.copy()
    X[0] = np.eye(d)[0]
    Xp[0] = np.eye(d)[1]
    return X, Xp


def test_audit_ag_stays_below_epsilon():
    eps, delta = 1.0, 1e-5
    X, Xp = _neighbours()

    def mech(data, rng):
        return dps.pca_ag(data, eps, delta, rng=rng)

    # A_hat[0,0] - A_hat[1,1] moves by 2 between the neighbours; threshold at the midpoint.
    mid = ((X.T @ X)[0, 0] - (X.T @ X)[1, 1] + (Xp.T @ Xp)[0, 0] - (Xp.T @ Xp)[1, 1]) / 2
    res = audit(mech, X, Xp, lambda A: A[0, 0] - A[1, 1] > mid, n_runs=4000, delta=delta, alpha=0.05, rng=1)
    assert res.epsilon_lower < eps


@pytest.mark.parametrize("delta", [1e-5, 0.0])
def test_audit_ppm_stays_below_epsilon(delta):
    # One iteration and eps = 4 give the audit the most power (the zCDP conversion is loose, so the
    # Gaussian variant's true loss is far below eps; an audit can only refute, never confirm).
    eps = 4.0
    X, Xp = _neighbours(background=0.0)

    def mech(data, rng):
        return dps.pca_ppm(data, 1, eps, delta, n_iter=1, rng=rng)

    res = audit(mech, X, Xp, lambda V: abs(V[0, 0]) > math.sqrt(0.5), n_runs=3000, delta=delta, alpha=0.05, rng=2)
    assert res.epsilon_lower < eps


def test_accountant_is_charged_before_noise_and_overspend_releases_nothing():
    acc = dps.Accountant(1.0, 1e-5, composition="basic")
    dps.pca(X_SPIKED[:100], 2, mechanism="ag", epsilon=0.6, delta=5e-6, rng=0, accountant=acc)
    assert acc.spent == (0.6, 5e-6)
    with pytest.raises(dps.BudgetExceededError):
        dps.pca(X_SPIKED[:100], 2, mechanism="ppm", epsilon=0.6, delta=0.0, rng=0, accountant=acc)
    assert len(acc.ledger) == 1


def test_clip_rescales_rows_instead_of_raising():
    X = X_SPIKED[:100] * 3
    with pytest.raises(dps.OutOfBoundsError, match="row"):
        dps.pca_ag(X, 1.0, 1e-5, rng=0)
    A_hat = dps.pca_ag(X, 1.0, 1e-5, clip=True, rng=0)
    Xc = X / np.maximum(1, np.linalg.norm(X, axis=1))[:, None]
    np.testing.assert_allclose(A_hat, dps.pca_ag(Xc, 1.0, 1e-5, rng=0), atol=1e-9)


@pytest.mark.parametrize("mech,delta", [*DP_MECHANISMS, ("sn", 0.0)])
def test_bad_input_raises(mech, delta):
    X = X_SPIKED[:50].copy()
    big = X.copy()
    big[7] = 1.5 * big[7] / np.linalg.norm(big[7])
    with pytest.raises(dps.OutOfBoundsError, match="1 row"):
        _run(mech, delta, big, 2, 1.0, 0)
    nan = X.copy()
    nan[3, 2] = np.nan
    with pytest.raises(dps.DataValidationError, match="NaN"):
        _run(mech, delta, nan, 2, 1.0, 0)
    for k in (0, 13, 2.5):
        with pytest.raises(dps.ParameterError, match="k must be"):
            _run(mech, delta, X, k, 1.0, 0)
    with pytest.raises(dps.ParameterError, match="epsilon"):
        _run(mech, delta, X, 2, 0.0, 0)
    with pytest.raises(dps.DataValidationError):
        _run(mech, delta, X[0], 1, 1.0, 0)


def test_bad_parameters_raise():
    X = X_SPIKED[:50]
    with pytest.raises(dps.ParameterError, match="delta > 0"):
        dps.pca_ag(X, 1.0, 0.0)
    with pytest.raises(dps.ParameterError, match="n_sweeps applies only"):
        dps.pca_ppca(X, 2, 1.0, n_sweeps=3)
    with pytest.raises(dps.ParameterError, match="sampler"):
        dps.pca_ppca(X, 2, 1.0, sampler="exact")
    with pytest.raises(dps.ParameterError, match="mechanism"):
        dps.pca(X, 2, mechanism="svd", epsilon=1.0)
    with pytest.raises(dps.ParameterError, match="n_iter"):
        dps.pca_ppm(X, 2, 1.0, 1e-5, n_iter=0)
    with pytest.raises(dps.DataValidationError, match="symmetric"):
        dps.top_components(np.triu(np.ones((3, 3))), 1)


def test_top_components_takes_algebraic_top_of_indefinite_matrix():
    A = np.diag([-10.0, 2.0, 1.0, -0.5])
    V = dps.top_components(A, 2)
    np.testing.assert_allclose(np.abs(V), np.eye(4)[:, [1, 2]], atol=1e-12)


def test_ppca_survives_huge_concentration_and_k_equals_d():
    # n * eps = 1e7: (eps/2) X^T X has entries ~ 1e6; the sampler must stay finite and exact-looking.
    X = _spiked(n=1000, d=8, k=2, seed=4)
    for V in (dps.pca_ppca(X, 2, 1e4, sampler="gibbs", n_sweeps=3, rng=0), dps.pca_ppca(X, 2, 1e4, rng=0)):
        assert np.isfinite(V).all() and captured_energy(X, V) > 99.9
    Q = dps.pca_ppca(X, 8, 1.0, rng=0)
    np.testing.assert_allclose(Q.T @ Q, np.eye(8), atol=_grid_tolerance(8))


def _grid_tolerance(d: int) -> float:
    """PPCA's output lies on a 2^-32 grid: each entry of VᵀV − I is within 2·√d·2^-33 of 0 (its docstring)."""
    return math.sqrt(d) * 2.0**-32 * 1.01
