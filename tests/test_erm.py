"""ERM (CMS 2011): exact minimiser, large-epsilon accuracy, noise laws of both algorithms, audit, bad input."""

import math

import numpy as np
import pytest
from _data import separable
from scipy import stats

import dpstats as dps
from dpstats._kernels.gram import norm_bound_squared
from dpstats.audit import audit
from dpstats.erm import (
    AMP_SHARE,
    Descent,
    NotConvergedError,
    _descend,
    _Huber,
    _Logistic,
    _objective,
    _Rows,
    _solve,
    objective_perturbation_parameters,
)
from dpstats.metrics import sign_accuracy
from dpstats.noise.release import grid_for, make_noise

ALPHA = 1e-3  # type-I error of each KS test (fixed seeds: deterministic)
FUNCS = {"logistic": dps.logistic_regression, "svm": dps.svm}
LOSSES = {"logistic": _Logistic("logistic_regression", 0.25), "svm": _Huber("svm", 1.0, 0.5)}


X_TRAIN, Y_TRAIN = separable(2000, seed=0)
X_TEST, Y_TEST = separable(2000, seed=1)


def test_logistic_minimiser_matches_scikit_learn():
    from sklearn.linear_model import LogisticRegression

    # scikit-learn minimises C Σ ℓ + ½‖w‖², the same minimiser as (1/n) Σ ℓ + (λ/2)‖w‖² for C = 1/(nλ).
    lam = 0.01
    f = _solve(X_TRAIN, Y_TRAIN, LOSSES["logistic"], lam, None, 1e-10, 5000)
    ref = LogisticRegression(C=1 / (len(Y_TRAIN) * lam), fit_intercept=False, tol=1e-12, max_iter=10_000)
    ref.fit(X_TRAIN, Y_TRAIN)
    np.testing.assert_allclose(f, ref.coef_[0], rtol=0, atol=1e-6)


@pytest.mark.parametrize("loss", ["logistic", "svm"])
def test_blocked_objective_is_F_minus_F_at_anchor_with_its_gradient(monkeypatch, loss):
    # Blocks of 64 rows (500 rows: 8 blocks); the value is F(f) - F(anchor), the gradient is ∇F(f).
    monkeypatch.setattr("dpstats._kernels.blocks.CACHE_BLOCK_BYTES", 64 * 8 * 5)
    X, y = X_TRAIN[:500], Y_TRAIN[:500]
    lam, rng = 0.05, np.random.default_rng(5)
    lin, anchor, f = rng.normal(size=(3, 5))

    def F(w):
        return LOSSES[loss].value_and_derivative(y * (X @ w))[0].mean() + 0.5 * lam * (w @ w) + lin @ w

    value, grad = _objective(X, y, LOSSES[loss], lam, lin, anchor)(f)
    assert value == pytest.approx(F(f) - F(anchor), abs=1e-12)
    h = 1e-6
    numeric = [(F(f + h * e) - F(f - h * e)) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(grad, numeric, rtol=0, atol=1e-7)


@pytest.mark.parametrize("loss", ["logistic", "svm"])
@pytest.mark.parametrize("method", ["output", "objective"])
def test_large_epsilon_reaches_non_private_accuracy(loss, method):
    from sklearn.svm import LinearSVC

    # Non-private reference: scikit-learn's linear SVM (squared hinge) on the same separable data.
    reference = sign_accuracy(LinearSVC(fit_intercept=False).fit(X_TRAIN, Y_TRAIN).coef_[0], X_TEST, Y_TEST)
    # eps = 1e3, lam = 1e-3, n = 2000, d = 5: output noise has mean norm 2d/(n lam eps) = 5e-3; objective noise
    # moves f by about (2d/eps')/(n lam) = 5e-3. Both are tiny against ‖f‖ (> 10), so at most a few test points
    # near the boundary can flip: 1 % slack.
    f = FUNCS[loss](X_TRAIN, Y_TRAIN, 1e3, lam=1e-3, method=method, rng=0)
    assert sign_accuracy(f, X_TEST, Y_TEST) >= reference - 0.01


@pytest.mark.parametrize("loss", ["logistic", "svm"])
@pytest.mark.parametrize("method", ["output", "objective"])
def test_all_variants_run_at_small_epsilon_and_charge_the_accountant(loss, method):
    acc = dps.Accountant(1.0, composition="basic")
    f = FUNCS[loss](X_TRAIN[:300], Y_TRAIN[:300], 0.5, lam=0.05, method=method, rng=1, accountant=acc)
    assert f.shape == (5,) and np.isfinite(f).all()
    assert acc.spent == (0.5, 0.0) and len(acc.ledger) == 1
    if method == "objective":  # Algorithm 2, then the approximate minimiser's output noise: exactly epsilon together
        assert [e.epsilon for e in acc.ledger[0].events] == [0.5 * (1 - AMP_SHARE), 0.5 * AMP_SHARE]
    again = FUNCS[loss](X_TRAIN[:300], Y_TRAIN[:300], 0.5, lam=0.05, method=method, rng=1)
    np.testing.assert_array_equal(f, again)


@pytest.mark.parametrize("loss", ["logistic", "svm"])
def test_output_perturbation_gamma_noise_has_the_paper_law_at_the_descent_sensitivity(loss):
    # noise="float": the paper's release f̂_K + b with ‖b‖ ~ Gamma(d, S/eps), S the descent's sensitivity (2/(n lam)
    # plus a floating-point term below 1e-9 of it). The noise law of the paper at S, not at a tenth more (400 draws).
    X, y = X_TRAIN[:40, :3], Y_TRAIN[:40]
    n, d, lam, eps = 40, 3, 0.5, 2.0
    plan = Descent.plan(n, d, lam, LOSSES[loss].c, 1, 5000)
    assert plan.sensitivity == pytest.approx(2 * math.sqrt(norm_bound_squared(d)) / (n * lam), rel=1e-8)
    centre = _descend(_Rows(X, y), LOSSES[loss], lam, plan)
    rng = np.random.default_rng(2)
    with pytest.warns(dps.FloatingPointNoiseWarning):
        norms = [
            np.linalg.norm(FUNCS[loss](X, y, eps, lam=lam, method="output", rng=rng, noise="float") - centre)
            for _ in range(400)
        ]
    assert stats.kstest(norms, stats.gamma(d, scale=plan.sensitivity / eps).cdf).pvalue > ALPHA
    assert stats.kstest(norms, stats.gamma(d, scale=1.1 * plan.sensitivity / eps).cdf).pvalue < ALPHA


@pytest.mark.parametrize("loss", ["logistic", "svm"])
def test_output_perturbation_exact_noise_is_discrete_laplace_at_the_l1_sensitivity(loss):
    # noise="exact" (the default): (release − round(f̂_K/G)·G)/G are iid discrete Laplace draws X with scale t from
    # the L1 sensitivity √d·S (one grid unit per coordinate added for the rounding). With ρ = e^(−1/t):
    # E|X| = 2ρ/(1 − ρ²) and E X² = 2ρ/(1 − ρ)². 6,000 draws: a z-test of the mean |X| at the calibrated t
    # (|z| < 3.29, two-sided α = 1e-3) and against 0.9 t (rejected: z ≈ 8).
    X, y = X_TRAIN[:40, :3], Y_TRAIN[:40]
    n, d, lam, eps = 40, 3, 0.5, 2.0
    plan = Descent.plan(n, d, lam, LOSSES[loss].c, 1, 5000)
    l1 = math.nextafter(math.sqrt(d) * plan.sensitivity, math.inf)
    noise = make_noise(epsilon=eps, delta=0.0, sensitivity=l1, changed=d)
    grid, t = float(noise.grid), float(noise.scale)
    centre = np.rint(_descend(_Rows(X, y), LOSSES[loss], lam, plan) / grid)
    rng = np.random.default_rng(5)
    draws = np.concatenate(
        [np.rint(FUNCS[loss](X, y, eps, lam=lam, method="output", rng=rng) / grid) - centre for _ in range(2000)]
    )
    for scale, expect_fit in ((t, True), (0.9 * t, False)):
        rho = math.exp(-1 / scale)
        mean, square = 2 * rho / (1 - rho**2), 2 * rho / (1 - rho) ** 2
        z = (np.abs(draws).mean() - mean) / math.sqrt((square - mean**2) / draws.size)
        assert (abs(z) < 3.29) == expect_fit


def test_output_perturbation_release_lies_on_its_public_grid():
    # The grid is 2^-12 of the per-coordinate L1 sensitivity, computed from n, d and lam only: every released
    # weight is an integer multiple of it, so nothing below it (where the data's floating-point bits live) leaks.
    n, d, lam = 300, 5, 0.05
    f = dps.logistic_regression(X_TRAIN[:n], Y_TRAIN[:n], 1.0, lam=lam, method="output", rng=3)
    l1 = math.sqrt(d) * Descent.plan(n, d, lam, 0.25, 1, 5000).sensitivity
    grid = float(grid_for(l1 / d, 12))
    np.testing.assert_array_equal(f / grid, np.rint(f / grid))
    assert np.abs(f).max() > 1000 * grid


def test_objective_perturbation_parameters_follow_algorithm_2():
    c, lam, eps = 0.25, 0.01, 1.0
    # Large n: eps' = eps - ln(1 + 2c/(n lam) + c²/(n lam)²) > 0, no extra regulariser.
    n = 1000
    eps_p, Delta = objective_perturbation_parameters(n, lam, eps, c)
    assert Delta == 0.0
    assert eps_p == pytest.approx(eps - math.log(1 + 2 * c / (n * lam) + c**2 / (n * lam) ** 2), rel=1e-12)
    # Small n: the log term exceeds eps, so Delta = c/(n(e^{eps/4} - 1)) - lam > 0 and eps' = eps/2, chosen so
    # that the log term with lam + Delta is exactly eps/2.
    n = 10
    eps_p, Delta = objective_perturbation_parameters(n, lam, eps, c)
    assert eps_p == eps / 2 and Delta == pytest.approx(c / (n * math.expm1(eps / 4)) - lam, rel=1e-12)
    r = c / (n * (lam + Delta))
    assert math.log(1 + 2 * r + r * r) == pytest.approx(eps / 2, rel=1e-12)


@pytest.mark.parametrize("loss", ["logistic", "svm"])
@pytest.mark.parametrize("n,branch", [(400, "no Delta"), (4, "Delta")])
def test_objective_perturbation_noise_norm_is_gamma_in_both_branches(loss, n, branch):
    # At the exact minimiser of J(f) + bᵀf/n + (Delta/2)‖f‖², b = -n (∇J(f) + Delta f): the noise can be read
    # back from the release, and ‖b‖ must follow Gamma(d, 2/eps') with eps' and Delta of Algorithm 2.
    X, y = X_TRAIN[:n, :3], Y_TRAIN[:n]
    d, lam, eps = 3, 0.05, 1.0
    bound = math.sqrt(norm_bound_squared(d))
    eps_p, Delta = objective_perturbation_parameters(n, lam, eps * (1 - AMP_SHARE), LOSSES[loss].c, norm_bound=bound)
    assert (Delta > 0) == (branch == "Delta")
    rng = np.random.default_rng(3)
    norms = []
    for _ in range(300):
        f = FUNCS[loss](X, y, eps, lam=lam, method="objective", rng=rng)
        _, deriv = LOSSES[loss].value_and_derivative(y * (X @ f))
        grad_J = X.T @ (y * deriv) / n + lam * f
        norms.append(np.linalg.norm(-n * (grad_J + Delta * f)))
    assert stats.kstest(norms, stats.gamma(d, scale=2 * bound / eps_p).cdf).pvalue > ALPHA


def test_audit_of_output_perturbation_stays_below_epsilon():
    # Neighbours differ in one example; the event is "first weight above the midpoint of the two exact
    # minimisers", the most revealing half-space along the sensitivity direction.
    X = np.array([[0.6, 0.0], [0.0, 0.8], [-0.5, 0.5], [0.3, -0.7]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [-0.6, 0.0], 1.0
    lam, eps = 1.0, 1.0
    loss = LOSSES["logistic"]
    f1, f2 = _solve(X, y, loss, lam, None, 1e-10, 100), _solve(X2, y2, loss, lam, None, 1e-10, 100)
    mid = (f1[0] + f2[0]) / 2
    res = audit(
        lambda data, r: dps.logistic_regression(*data, eps, lam=lam, method="output", rng=r),
        (X, y),
        (X2, y2),
        lambda f: f[0] > mid,
        n_runs=1500,
        rng=4,
    )
    assert res.epsilon_lower <= eps


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"y": np.array([0.0, 1.0, 0.0, 1.0])}, "labels in"),
        ({"y": np.array([1.0, 2.0, 1.0, 2.0])}, "labels in"),
        ({"y": np.array([1.0, -1.0, 1.0])}, "same number of rows"),
        ({"X": np.array([[1.0, 1.0], [0, 0], [0, 0], [0, 0]])}, "L2 norm > 1"),
        ({"X": np.array([[np.nan, 0.0], [0, 0], [0, 0], [0, 0]])}, "NaN"),
        ({"lam": 0.0}, "lam"),
        ({"lam": -1.0}, "lam"),
        ({"epsilon": 0.0}, "epsilon"),
        ({"method": "input"}, "method"),
    ],
)
@pytest.mark.parametrize("loss", ["logistic", "svm"])
def test_bad_input_raises_clear_errors(loss, kwargs, match):
    args = {
        "X": np.array([[0.5, 0.0], [0.0, 0.5], [-0.5, 0.0], [0.0, -0.5]]),
        "y": np.array([1.0, 1.0, -1.0, -1.0]),
        "epsilon": 1.0,
        "lam": 0.1,
        "method": "objective",
    }
    args.update(kwargs)
    acc = dps.Accountant(10.0)
    with pytest.raises(ValueError, match=match):
        FUNCS[loss](args.pop("X"), args.pop("y"), args.pop("epsilon"), rng=0, accountant=acc, **args)
    assert acc.spent == (0.0, 0.0)


@pytest.mark.parametrize("h", [0.0, -0.5, float("nan")])
def test_svm_rejects_bad_huber_parameter(h):
    with pytest.raises(dps.ParameterError, match="h must be"):
        dps.svm(X_TRAIN[:10], Y_TRAIN[:10], 1.0, lam=0.1, h=h)


def test_objective_non_convergence_refuses_to_release_after_its_charge():
    acc = dps.Accountant(10.0, composition="basic")
    with pytest.raises(NotConvergedError, match="could not certify"):
        # a gradient norm of 1e-30 is below floating-point resolution: no solver can certify it
        dps.logistic_regression(X_TRAIN, Y_TRAIN, 1.0, lam=1e-4, method="objective", tol=1e-30, accountant=acc)
    assert acc.spent == (1.0, 0.0)  # documented: the noise b was drawn inside the objective, after the charge


def test_output_perturbation_never_fails_to_converge():
    # the same request with output perturbation: a fixed number of steps, no certificate needed (tol is not used)
    f = dps.logistic_regression(X_TRAIN, Y_TRAIN, 1.0, lam=1e-4, method="output", tol=1e-30, rng=0)
    assert np.isfinite(f).all()


def test_clip_rescales_rows_instead_of_raising():
    X = np.array([[3.0, 4.0], [0.0, 0.5], [-0.5, 0.0], [0.0, -0.5]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    f = dps.svm(X, y, 1.0, lam=0.1, clip=True, rng=0)
    g = dps.svm(np.vstack([[0.6, 0.8], X[1:]]), y, 1.0, lam=0.1, rng=0)
    np.testing.assert_allclose(f, g)
