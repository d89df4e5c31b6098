"""Mironov's floating-point attack (CCS 2012) works on naive floating-point noise and fails on every release dpstats
makes by default: releases lie on a public grid, so their support and their low-order bits do not depend on the
data."""

import math
from fractions import Fraction

import numpy as np
import pytest

import dpstats as dps
from dpstats._kernels.gram import norm_bound_squared
from dpstats.audit import float_laplace_support, low_bit_distance, on_grid
from dpstats.linear_model import AMP_SHARE, objective_perturbation_parameters
from dpstats.noise.release import GRID_BITS, LAPLACE_GRID_BITS, grid_for

N_RELEASES = 3000


def _releases(mechanism, data, seed, n=N_RELEASES):
    rng = np.random.default_rng(seed)
    return np.array([mechanism(data, rng) for _ in range(n)])


def test_the_attack_breaks_naive_numpy_laplace_noise():
    """The issue's measurement: 20,000 releases of the mean of [1.0] with NumPy's Laplace noise (b = 1); about 80 %
    of them are values that the mean of [0.0] can never produce."""
    rng = np.random.default_rng(0)
    released = 1.0 + rng.laplace(0.0, 1.0, 20_000)
    assert float_laplace_support(released, 1.0, 1.0).all()  # the check recognises every genuine output
    impossible = 1.0 - float_laplace_support(released, 0.0, 1.0).mean()
    assert impossible > 0.5
    assert low_bit_distance(released, rng.laplace(0.0, 1.0, 20_000)) > 0.15


def test_the_float_option_is_open_to_it_and_warns():
    with pytest.warns(dps.FloatingPointNoiseWarning):
        released = _releases(lambda x, r: dps.mean(x, 1.0, bounds=(0, 1), rng=r, noise="float"), [1.0], 1)
    assert 1.0 - float_laplace_support(released, 0.0, 1.0).mean() > 0.5


MEAN_GRID = float(grid_for(1.0, LAPLACE_GRID_BITS))  # sensitivity (hi - lo)/n = 1 per coordinate
MECHANISMS = {
    # name: (mechanism(data, rng), dataset, neighbour, public grid of the release)
    "mean laplace": (lambda x, r: dps.mean(x, 1.0, bounds=(0, 1), rng=r), [0.0], [1.0], MEAN_GRID),
    "mean gaussian": (
        lambda x, r: dps.mean(x, 1.0, 1e-6, bounds=(0, 1), rng=r),
        [0.0],
        [1.0],
        float(grid_for(1.0, GRID_BITS)),
    ),
    "histogram": (
        lambda x, r: dps.histogram(x, 1.0, bins=2, range=(0, 1), rng=r)[0],
        [0.2],
        [0.8],
        float(grid_for(1.0, LAPLACE_GRID_BITS)),
    ),
    "pca_ag": (
        lambda X, r: dps.pca_ag(X, 1.0, 1e-6, rng=r)[np.triu_indices(2)],
        np.eye(2)[[0]],
        np.eye(2)[[1]],
        float(grid_for(math.sqrt(2) * norm_bound_squared(2) / math.sqrt(3), GRID_BITS)),
    ),
    "pca_ppca": (lambda X, r: dps.pca_ppca(X, 1, 1.0, rng=r), np.eye(2)[[0]], np.eye(2)[[1]], 2.0**-32),
}


@pytest.mark.parametrize("name", MECHANISMS)
def test_default_releases_lie_on_their_public_grid_and_hide_their_low_bits(name):
    mechanism, data, neighbour, grid = MECHANISMS[name]
    a, b = _releases(mechanism, data, 10), _releases(mechanism, neighbour, 20)
    assert on_grid(a, grid) and on_grid(b, grid)  # the support is the grid, whatever the data
    assert low_bit_distance(a, b) == 0.0  # no low-order bit carries anything


def test_variance_cca_and_erm_releases_are_on_grids_too():
    x = np.random.default_rng(0).uniform(0, 1, 50)
    # variance: the grid is 2^-12 of its sensitivity (n - 1)(hi - lo)²/n² for the fixed-point bounds of [0, 1]
    grid = float(grid_for((50 - 1) / 50**2, LAPLACE_GRID_BITS))
    assert on_grid([dps.variance(x, 1.0, bounds=(0, 1), rng=s) for s in range(50)], grid)
    Z = np.random.default_rng(1).uniform(-0.3, 0.3, (40, 4))
    C = dps.cca(Z[:, :2], Z[:, 2:], 1, 1.0, 1e-6, rng=0).C_hat * 40  # the release is ZᵀZ + E on the grid, then /N
    cca_grid = float(grid_for(math.sqrt(2) * norm_bound_squared(4) / math.sqrt(10), GRID_BITS))
    assert on_grid(C, cca_grid)
    X, y = Z[:, :2], np.where(Z[:, 0] > 0, 1.0, -1.0)
    n, d, lam, tol = 40, 2, 0.1, 1e-9
    bound = math.sqrt(norm_bound_squared(d))
    eps_prime, Delta = objective_perturbation_parameters(n, lam, 1.0 * (1 - AMP_SHARE), 0.25, norm_bound=bound)
    grids = {
        "output": grid_for((2 * bound / (n * lam) + 2 * tol / lam) / math.sqrt(d)),
        "objective": grid_for(2 * tol / (lam + Delta) / math.sqrt(d)),
    }
    for method, grid in grids.items():
        f = dps.logistic_regression(X, y, 1.0, lam=lam, method=method, rng=0, tol=tol)
        assert np.abs(f).min() > 100 * float(grid) and on_grid(f, float(grid))


def test_exact_noise_costs_no_utility():
    """Mean error of the exact default against the float option, at three epsilons: within sampling error."""
    x = np.random.default_rng(3).uniform(0, 1, 200)
    for eps in (0.1, 1.0, 10.0):
        exact = [dps.mean(x, eps, bounds=(0, 1), rng=s) - x.mean() for s in range(400)]
        with pytest.warns(dps.FloatingPointNoiseWarning):
            floating = [dps.mean(x, eps, bounds=(0, 1), rng=s, noise="float") - x.mean() for s in range(400)]
        # Laplace(b): E|noise| = b, sd of the mean of 400 absolute errors is b/20; 4 sd apart at most.
        b = 1 / (200 * eps)
        assert abs(np.mean(np.abs(exact)) - np.mean(np.abs(floating))) < 4 * math.sqrt(2) * b / 20


@pytest.mark.parametrize("counts", [(4, 4, 4), (2, 1, 1), (4, 1, 4), (1, 1, 9)])
def test_exact_sums_merged_from_threads_are_exact_on_both_sides_of_int64(counts):
    """Accumulators merged from threads (ExactSum.extend) stay in int64 while no overflow is possible and move to
    Python integers when it is: with terms near the bound, three full accumulators would overflow int64, and the
    merged total still equals the exact integer sum."""
    from dpstats._kernels.reduce import ExactSum

    big = 2**62 // 5  # room for 4 terms of this size per accumulator (the room is rounded down)
    rng = np.random.default_rng(0)
    parts, terms = [], []
    for count in counts:
        acc = ExactSum((3,), float(big))
        for _ in range(count):
            term = rng.integers(big - 1000, big, size=3, endpoint=True)
            terms.append(term)
            acc.add(term)
        parts.append(acc)
    for other in parts[1:]:
        parts[0].extend(other)
    exact = [sum(int(t[i]) for t in terms) for i in range(3)]
    assert [int(v) for v in parts[0].total()] == exact


def test_huber_derivative_rounding_is_within_the_gradient_bound():
    # The gradient bound counts (c + 4)u for ℓ′'s own rounding: for the Huber loss the error of 1 + h − z is divided
    # by 2h, so it grows like u/(2h) = u·c, beyond the fixed 4u (the logistic loss's) the bound used to count. With
    # one row of one feature at the point 0, the gradient's only error is ℓ′'s own times |x| <= R: the bound of
    # _gradient_error_at must cover the measured error times R.
    from dpstats._kernels.gram import norm_bound_squared
    from dpstats.linear_model._erm import _gradient_error_at, huber

    bound = math.sqrt(norm_bound_squared(1))
    for h in (0.5, 1e-3, 1e-6):
        loss = huber(h)
        z = np.random.default_rng(1).uniform(1 - h, 1 + h, 3_000)
        exact = [-min(max(Fraction(1) + Fraction(h) - Fraction(v), Fraction(0)) / (2 * Fraction(h)), 1) for v in z]
        error = max(abs(Fraction(float(f)) - e) for f, e in zip(loss.derivative(z), exact, strict=True))
        assert error <= Fraction((loss.c + 4.0) * 2.0**-53)
        assert Fraction(_gradient_error_at((1, 1), 0.0, 0.0, loss.c)) >= error * Fraction(bound)


def test_erm_hessian_rounding_is_within_its_bound(monkeypatch):
    """The Hessian of the Newton steps (:func:`_gradient_and_hessian`: blocks of 64 rows, offsets up to ±cap) is
    within :func:`_hessian_error_at` of the exact ∇²F in the 2-norm, at a point of norm 1e8 whose rows are nearly
    orthogonal to it (the margins, of order 1, come from the cancellation of terms of order 1e8): there the error
    of the margins dominates, and a bound without it (the same bound at a point of norm 0) is exceeded."""
    import mpmath

    from dpstats.linear_model._erm import LOGISTIC, _gradient_and_hessian, _hessian_error_at, _Rows

    monkeypatch.setattr("dpstats._kernels.blocks.CACHE_BLOCK_BYTES", 64 * 8 * 4)
    rng = np.random.default_rng(11)
    n, d, reg, cap = 300, 4, 1e-3, 50.0
    f = rng.standard_normal(d)
    f *= 1e8 / np.linalg.norm(f)
    unit = f / np.linalg.norm(f)
    X = rng.standard_normal((n, d))
    X -= np.outer(X @ unit, unit)  # orthogonal to f, then a small component along it: margins of order 1
    X = X / np.linalg.norm(X, axis=1)[:, None] * 0.999 + np.outer(rng.uniform(-2e-8, 2e-8, n), unit)
    y = rng.choice([-1.0, 1.0], n)
    offsets = rng.uniform(-cap, cap, n)
    offsets[::3] = rng.uniform(-1.0, 1.0, (n + 2) // 3)
    data = _Rows(X, y)
    assert data.rows == 64
    _, computed = _gradient_and_hessian(data, LOGISTIC, reg, f, offsets)
    computed = np.triu(computed) + np.triu(computed, 1).T  # the factorisation reads the upper triangle
    with mpmath.workdps(40):
        exact = mpmath.matrix(d, d)
        for x, label, offset in zip(X, y, offsets, strict=True):
            margin = mpmath.fsum(mpmath.mpf(a) * mpmath.mpf(b) for a, b in zip(x, f, strict=True))
            z = mpmath.mpf(offset) + label * margin
            e = mpmath.exp(-abs(z))
            weight = e / (1 + e) ** 2 / n
            for j in range(d):
                for k in range(d):
                    exact[j, k] += weight * mpmath.mpf(x[j]) * mpmath.mpf(x[k])
        for j in range(d):
            exact[j, j] += mpmath.mpf(reg)
        error = np.array([[float(mpmath.mpf(computed[j, k]) - exact[j, k]) for k in range(d)] for j in range(d)])
    measured = np.linalg.norm(error, 2)
    assert measured <= _hessian_error_at((n, d), 1e8, reg, LOGISTIC, offset=cap)
    assert measured > _hessian_error_at((n, d), 0.0, reg, LOGISTIC, offset=cap)


def test_cholesky_solve_meets_its_backward_error_bound():
    """The Newton step's solve (:func:`_cholesky_solve`, on the upper triangle) satisfies (H + δ)x = b with
    ‖δ‖₂ <= γ_{3d+1} tr H/(1 − γ_{d+1}) (Higham 2002, Theorem 10.4, bounded through the trace): the smallest such
    ‖δ‖₂ is ‖b − Hx‖₂/‖x‖₂ (Rigal & Gaches 1967), computed here exactly, for d = 51 and condition numbers up to
    1e10 (eigenvalues spread over the range as in a logistic-regression Hessian with a small λ)."""
    from dpstats._rounding import gamma
    from dpstats.linear_model._erm import _cholesky_solve

    rng = np.random.default_rng(12)
    d = 51
    for condition in (1e2, 1e6, 1e10):
        for _ in range(3):
            q, _ = np.linalg.qr(rng.standard_normal((d, d)))
            H = (q * np.logspace(0, -math.log10(condition), d)) @ q.T
            H = np.triu(H) + np.triu(H, 1).T
            b = rng.standard_normal(d)
            x = _cholesky_solve(H, b)
            residual = [
                Fraction(bj) - sum(Fraction(h) * Fraction(xi) for h, xi in zip(row, x, strict=True))
                for row, bj in zip(H, b, strict=True)
            ]
            backward = math.sqrt(float(sum(r * r for r in residual))) / np.linalg.norm(x)
            assert backward <= gamma(3 * d + 1) * np.trace(H) / (1 - gamma(d + 1))
