"""ERM (CMS 2011): the solvers' minimisers, large-epsilon accuracy, noise laws of both algorithms, audit, bad input."""

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from _data import separable
from scipy import stats
from scipy.optimize import minimize

import dpstats as dps
from dpstats._kernels.gram import norm_bound, norm_bound_squared
from dpstats.audit import audit
from dpstats.linear_model._erm import (
    AMP_SHARE,
    Accelerated,
    Descent,
    OutputPerturbation,
    _cholesky_solve,
    _compensated_up_to,
    _gradient,
    _gradient_and_hessian,
    _Huber,
    _Logistic,
    _Momentum,
    _NewtonBounds,
    _offsets_of,
    _plain_up_to,
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


def _minimise(X, y, loss, lam, centre, tol=1e-10, max_iter=10**6, steps=None):
    """Objective perturbation's solver on (1/n) Σ ℓ(y_i fᵀx_i) + (lam/2)‖f − s‖²: (g, plan), f = s + g (with
    ``steps``, that function of the plan replaces its accelerated steps)."""
    n, d = X.shape
    plan = Accelerated.plan(n, d, lam, loss, tol / lam, max_iter)
    if steps is not None:
        plan = dataclasses.replace(plan, steps=steps(plan))
    data = _Rows(X, y)
    offsets = data.per_row(
        _offsets_of(centre, plan.cap, _compensated_up_to(d, plan.cap, 1.0), _plain_up_to(d, plan.cap, 1e-3))
    )
    return _solve(data, loss, lam, plan, offsets), plan


def _exact_offsets(X, y, centre):
    """y_i x_iᵀs in rational arithmetic, rounded once."""
    return np.array(
        [
            float(yi * sum(Fraction(a) * Fraction(b) for a, b in zip(x, centre, strict=True)))
            for x, yi in zip(X, y, strict=True)
        ]
    )


def _reference(X, y, loss, lam, centre):
    """A high-accuracy minimiser g* of (1/n) Σ ℓ(a_i + y_i gᵀx_i) + (lam/2)‖g‖², a_i = y_i x_iᵀs exactly rounded
    (the same objective as J(s + g)): scipy's trust-region Newton method with the exact Hessian, then Newton steps.
    Rows near a kink have |a_i| <= |z_i| + R‖g‖, so rounding a_i moves the minimiser by far less than 1e-10."""
    a = _exact_offsets(X, y, centre)
    n, d = X.shape

    def parts(g):
        z = a + y * (X @ g)
        if isinstance(loss, _Huber):
            u = np.clip(1 + loss.h - z, 0, None)
            value = np.where(z < 1 - loss.h, 1 - z, u * u / (4 * loss.h))
            curvature = np.where(np.abs(1 - z) < loss.h, 1 / (2 * loss.h), 0.0)
        else:
            value = np.logaddexp(0, -z)
            p = np.exp(-np.logaddexp(0, -z))
            curvature = p * (1 - p)
        gradient = X.T @ (y * loss.derivative(z)) / n + lam * g
        return value.mean() + 0.5 * lam * g @ g, gradient, (X.T * curvature) @ X / n + lam * np.eye(d)

    g = minimize(
        lambda g: parts(g)[0],
        np.zeros(d),
        jac=lambda g: parts(g)[1],
        hess=lambda g: parts(g)[2],
        method="trust-exact",
        options={"gtol": 1e-14},
    ).x
    for _ in range(10):
        _, gradient, hessian = parts(g)
        g = g - np.linalg.solve(hessian, gradient)
    step = 1 / (loss.c * np.max(np.sum(X * X, axis=1)) + lam)
    for _ in range(20_000):  # margins on a kink of the Huber loss: Newton's steps may cycle; gradient steps do not
        if np.linalg.norm(parts(g)[1]) < 1e-12 * lam:
            break
        g = g - step * parts(g)[1]
    assert np.linalg.norm(parts(g)[1]) < 1e-11 * lam  # within 1e-11 of the minimiser, by strong convexity
    return g


def test_logistic_minimiser_matches_scikit_learn():
    # scikit-learn minimises C Σ ℓ + ½‖w‖², the same minimiser as (1/n) Σ ℓ + (λ/2)‖w‖² for C = 1/(nλ).
    from sklearn.linear_model import LogisticRegression

    lam = 0.01
    f, _ = _minimise(X_TRAIN, Y_TRAIN, LOSSES["logistic"], lam, np.zeros(5))
    ref = LogisticRegression(C=1 / (len(Y_TRAIN) * lam), fit_intercept=False, tol=1e-12, max_iter=10_000)
    ref.fit(X_TRAIN, Y_TRAIN)
    np.testing.assert_allclose(f, ref.coef_[0], rtol=0, atol=1e-6)


@pytest.mark.parametrize("loss", ["logistic", "svm"])
@pytest.mark.parametrize("scale", [1.0, 1e3, 1e9])
def test_solver_lands_within_its_public_distance_of_the_exact_minimiser(loss, scale):
    """The point objective perturbation's solver computes (accelerated steps, then Newton steps for the logistic
    loss) is within Accelerated.distance (<= tol/lam) of a high-accuracy minimiser of the same objective, for a
    noise centre of norm 1 (offsets by plain dot products), 1e3 (compensated) and 1e9 (where a plain dot product
    would misplace the margins by d·u·‖s‖ ≈ 1e-6, against a tolerance of 1e-6)."""
    X, y = separable(200, d=5, seed=0)
    y = np.where(np.arange(200) < 20, -y, y)  # 20 labels flipped: not separable
    lam, tol = 1e-3, 1e-9
    centre = np.random.default_rng(1).standard_normal(5) * scale
    g, plan = _minimise(X, y, LOSSES[loss], lam, centre, tol=tol)
    exact = _reference(X, y, LOSSES[loss], lam, centre)
    assert plan.distance <= tol / lam
    assert (plan.newton > 0) == (loss == "logistic")  # the Huber loss has no third derivative: no Newton steps
    assert np.linalg.norm(g - exact) <= plan.distance


def _adversarial(name, n=200, d=5):
    """Data sets that are hard for the solver in different ways (rows of norm <= 1, labels ±1)."""
    rng = np.random.default_rng(3)
    if name == "separable":  # the loss flattens out: curvature about λ near the minimiser, far from 0
        return separable(n, d=d, seed=0)
    if name == "flipped":
        X, y = separable(n, d=d, seed=0)
        return X, np.where(np.arange(n) < n // 10, -y, y)
    if name == "one-sided":  # one row repeated, one label: the logistic loss's exponential tail, Newton's hard case
        X = np.zeros((n, d))
        X[:, 0] = 1.0
        return X, np.ones(n)
    if name == "collinear":  # all curvature along one direction, rows at the norm bound
        X = np.zeros((n, d))
        X[:, 0] = rng.choice([-1.0, 1.0], n)
        y = np.sign(X[:, 0])
        y[: n // 10] *= -1
        return X, y
    if name == "sphere":  # rows at the norm bound, random labels: the curvature bound cR² nearly attained
        X = rng.normal(size=(n, d))
        return X / np.linalg.norm(X, axis=1)[:, None], rng.choice([-1.0, 1.0], n)
    assert name == "ill-conditioned"  # feature scales 1 to 1e-3, separable along the weakest one
    X = rng.normal(size=(n, d)) * np.logspace(0, -3, d)
    X /= np.linalg.norm(X, axis=1).max()
    return X, np.sign(X[:, -1])


ADVERSARIAL = ["separable", "flipped", "one-sided", "collinear", "sphere", "ill-conditioned"]


def _adversarial_solve(name, loss, against, lam=1e-3):
    """(computed point, exact minimiser, plan, data, offsets) for output perturbation's objective (no offsets, the
    target 2^-10 of the sensitivity) or, with ``against``, objective perturbation's with a noise centre of norm 30
    that pushes every margin the wrong way (offsets up to 30, tol = 1e-9)."""
    X, y = _adversarial(name)
    n, d = X.shape
    data = _Rows(X, y)
    if against:
        push = (y[:, None] * X).sum(axis=0)
        centre = -30.0 * push / np.linalg.norm(push)
        plan = Accelerated.plan(n, d, lam, LOSSES[loss], 1e-9 / lam, 10**6)
        methods = _compensated_up_to(d, plan.cap, 1.0), _plain_up_to(d, plan.cap, 1e-3)
        offsets = (data.per_row(_offsets_of(centre, plan.cap, *methods)),)
    else:
        centre, offsets = np.zeros(d), ()
        plan = Accelerated.plan(n, d, lam, LOSSES[loss], 2.0**-9 * norm_bound(d) / (n * lam), 10**6, offsets=False)
    exact = _reference(X, y, LOSSES[loss], lam, centre)
    return _solve(data, LOSSES[loss], lam, plan, *offsets), exact, plan, data, offsets


# (the Huber loss's exact minimiser sits on a kink for one repeated row against a large noise centre, where the
# reference cannot be computed to 1e-11: those two cases are left out)
ADVERSARIAL_CASES = [
    (loss, name, against)
    for loss in ("logistic", "svm")
    for name in ADVERSARIAL
    for against in (False, True)
    if not (loss == "svm" and against and name in ("one-sided", "collinear"))
]


@pytest.mark.parametrize("loss,name,against", ADVERSARIAL_CASES)
def test_solver_lands_within_its_public_distance_on_adversarial_data(loss, name, against):
    """The certified distance holds on data built to be hard: flat losses (separable), a repeated row with one label
    (the exponential tail where Newton's steps are slowest), all curvature in one direction, rows at the norm
    bound with random labels, feature scales over three decades; without offsets (output perturbation) and with a
    noise centre pushing every margin the wrong way (objective perturbation)."""
    g, exact, plan, _, _ = _adversarial_solve(name, loss, against)
    assert np.linalg.norm(g - exact) <= plan.distance


@pytest.mark.parametrize("loss", ["logistic", "svm"])
def test_the_starting_potential_without_offsets_is_at_most_the_loss_at_zero(loss):
    """Without offsets (output perturbation) the accelerated steps start from Φ_0 = F(0) − F* + (λ/2)‖g*‖², which
    is the loss part at 0 (ℓ(0)) minus the loss part at g* (>= 0): Φ_0 <= ℓ(0), far below R²/λ for a small λ. On
    separable data and one repeated row with λ = 1e-4 (where the loss part at g* is near 0) the bound is attained
    to within 10 %."""
    lam, worst = 1e-4, 0.0
    for name in ("separable", "one-sided", "sphere"):
        X, y = _adversarial(name)
        exact = _reference(X, y, LOSSES[loss], lam, np.zeros(5))
        z = y * (X @ exact)
        if loss == "logistic":
            at_minimum = np.logaddexp(0, -z).mean()
        else:
            at_minimum = np.where(z < 0.5, 1 - z, np.clip(1.5 - z, 0, None) ** 2 / 2).mean()
        potential = LOSSES[loss].at_zero() - at_minimum  # F(0) − F* + (λ/2)‖g*‖²
        start = _Momentum.of(200, 5, lam, LOSSES[loss], False).start
        assert potential <= start**2 < norm_bound(5) ** 2 / lam
        worst = max(worst, potential / start**2)
    assert worst > 0.9


def test_half_the_accelerated_steps_miss_the_public_distance():
    """The accelerated steps' public count is needed to within a factor 2: on separable data with a large noise
    centre (λ = 0.01, ‖s‖ ≈ 200), the Huber loss's plan lands within its distance, half of its steps 3.5 times
    that distance away."""
    X, y = separable(200, d=5, seed=1)
    lam, tol = 1e-2, 1e-9
    centre = np.random.default_rng(8).standard_normal(5) * 100
    g, plan = _minimise(X, y, LOSSES["svm"], lam, centre, tol=tol)
    exact = _reference(X, y, LOSSES["svm"], lam, centre)
    assert np.linalg.norm(g - exact) <= plan.distance
    half, _ = _minimise(X, y, LOSSES["svm"], lam, centre, tol=tol, steps=lambda p: p.steps // 2)
    assert np.linalg.norm(half - exact) > 2 * plan.distance


@pytest.mark.parametrize("against", [False, True])
def test_newton_steps_need_the_accelerated_steps_before_them(against):
    """Newton's steps are certified only from a point the accelerated steps have brought close enough (t <= 1): on
    one repeated row with one label (the exponential tail), the plan lands within its distance, but an eighth of
    its accelerated steps followed by the same Newton steps ends orders of magnitude away (Newton's steps from too
    far overshoot on the logistic loss's flat side). (Half of them still get there: the entry bound is
    conservative on these data, by a factor between 2 and 8 in the accelerated steps.)"""
    g, exact, plan, data, offsets = _adversarial_solve("one-sided", "logistic", against)
    assert plan.newton > 0 and np.linalg.norm(g - exact) <= plan.distance
    short = _solve(data, LOSSES["logistic"], 1e-3, dataclasses.replace(plan, steps=plan.steps // 8), *offsets)
    assert np.linalg.norm(short - exact) > 100 * plan.distance


def _logistic_hessian(X, y, g, lam):
    z = y * (X @ g)
    p = np.exp(-np.logaddexp(0, -z))
    return (X.T * (p * (1 - p))) @ X / len(y) + lam * np.eye(X.shape[1])


def test_newton_steps_stay_within_their_public_recursion():
    """One computed Newton step from a point at t = R‖x − g*‖_{H*}/√λ lands within the public bound
    t⁺ <= e^t[ψ(t) + η′(1 + ψ(t))]t + floor, on adversarial data, from t = 0.05 to 1 along the extreme
    eigenvectors of H* and random directions; the worst case comes within a factor 4 of the bound (so a bound 4
    times too optimistic would fail here). The entry bound F(x) − F* >= (λ/R²)(t − 1 + e^{−t}) holds at the same
    points and is nearly attained (within 2 %)."""
    rng = np.random.default_rng(5)
    worst_step, worst_entry = 0.0, 0.0
    for name in ("separable", "one-sided", "sphere", "ill-conditioned"):
        X, y = _adversarial(name, d=4)
        n, d = X.shape
        data = _Rows(X, y)
        for lam in (1e-1, 1e-3):
            exact = _reference(X, y, LOSSES["logistic"], lam, np.zeros(d))
            hessian = _logistic_hessian(X, y, exact, lam)
            value = np.logaddexp(0, -y * (X @ exact)).mean() + lam / 2 * exact @ exact
            phase = _Momentum.of(n, d, lam, LOSSES["logistic"], False)
            bounds = _NewtonBounds.of(n, d, lam, LOSSES["logistic"], phase, False)
            _, vectors = np.linalg.eigh(hessian)
            directions = [vectors[:, 0], vectors[:, -1], -vectors[:, 0], -vectors[:, -1], *rng.normal(size=(4, d))]
            for t in (0.05, 0.2, 0.4, 0.6, 0.8, 1.0):
                for v in directions:
                    x = exact + v * t * math.sqrt(lam) / (bounds.bound * math.sqrt(v @ hessian @ v))
                    gradient, computed = _gradient_and_hessian(data, LOSSES["logistic"], lam, x)
                    step = x - _cholesky_solve(computed, gradient) - exact
                    after = bounds.bound * math.sqrt(step @ hessian @ step) / math.sqrt(lam)
                    assert after <= bounds.next(t)
                    worst_step = max(worst_step, after / bounds.next(t))
                    gap = np.logaddexp(0, -y * (X @ x)).mean() + lam / 2 * x @ x - value
                    assert bounds.bound**2 * gap / lam >= (t + math.expm1(-t)) * (1 - 1e-6)
                    worst_entry = max(worst_entry, (t + math.expm1(-t)) / (bounds.bound**2 * gap / lam))
    assert worst_step > 0.25 and worst_entry > 0.98


def test_plans_are_public_and_far_shorter_than_accelerated_steps_alone():
    """At the benchmark's size (n = 10⁵, d = 51, λ = 5.1e-3, tol = 1e-9) the logistic plan takes 85 accelerated
    and 4 Newton steps where accelerated steps alone would need 278 (and output perturbation 444 plain gradient
    steps); the Huber loss takes accelerated steps only. The plans depend on n, d, λ, the loss and the target only
    (the same object for the same arguments); a max_iter below the cheapest plan's steps takes the plan with the fewest
    steps, and one below every plan's is refused."""
    n, d, lam = 100_000, 51, 5.1e-3
    plan = Accelerated.plan(n, d, lam, LOSSES["logistic"], 1e-9 / lam, 5000)
    assert (plan.steps, plan.newton) == (85, 4) and plan.distance <= 1e-9 / lam
    assert plan == Accelerated.plan(n, d, lam, LOSSES["logistic"], 1e-9 / lam, 5000)
    phase = _Momentum.of(n, d, lam, LOSSES["logistic"], True)
    assert phase.steps_to(1e-9 / lam) == 278
    assert Accelerated.plan(n, d, lam, LOSSES["svm"], 1e-9 / lam, 5000).newton == 0
    output = OutputPerturbation.plan(n, d, lam, "logistic")
    assert isinstance(output.solver, Accelerated) and output.steps < 100
    assert Descent.plan(n, d, lam, 0.25, 1, 5000).steps == 444
    tight = Accelerated.plan(n, d, lam, LOSSES["logistic"], 1e-9 / lam, 86)  # 81 + 5: more work, fewer steps
    assert tight.steps + tight.newton == 86 and tight.distance <= 1e-9 / lam
    with pytest.raises(dps.ParameterError, match="and 6 Newton steps .* max_iter=85 allows fewer"):
        Accelerated.plan(n, d, lam, LOSSES["logistic"], 1e-9 / lam, 85)


def test_output_perturbation_falls_back_on_gradient_steps_when_max_iter_is_small():
    """With max_iter below what the accelerated plan needs, output perturbation takes at most max_iter plain
    gradient steps, whose sensitivity holds by stability whatever their number (never a refusal); otherwise its
    sensitivity is 2R/(nλ) plus twice the plan's distance, within 2^-8 of CMS's bound."""
    n, d, lam = 2000, 5, 1e-4
    small = OutputPerturbation.plan(n, d, lam, "svm", max_iter=100)
    assert isinstance(small.solver, Descent) and small.steps == 100
    assert small.sensitivity == Descent.plan(n, d, lam, 1.0, 1, 100).sensitivity
    full = OutputPerturbation.plan(n, d, lam, "svm")
    stability = 2 * norm_bound(d) / (n * lam)
    assert isinstance(full.solver, Accelerated) and stability < full.sensitivity < stability * (1 + 2.0**-8)
    f = dps.svm(X_TRAIN, Y_TRAIN, 1.0, lam=lam, method="output", max_iter=100, rng=0)
    assert np.isfinite(f).all()


def _nearly_orthogonal(X, centre, cap, seed):
    """The rows of X with their component along s replaced by one that puts y_i x_iᵀs inside [−cap/2, cap/2]: the
    margins' offsets then come from the cancellation of terms as large as ‖x_i‖‖s‖."""
    norm = math.hypot(*centre)
    unit = centre / norm
    along = np.random.default_rng(seed).uniform(-1, 1, len(X)) * min(0.1, cap / 2 / norm)
    return X - np.outer(X @ unit, unit) + np.outer(along, unit)


@pytest.mark.parametrize("method", ["plain", "compensated", "exact"])
def test_offsets_are_within_their_bound_whatever_the_size_of_the_noise_centre(method):
    """The three ways of computing the margins' offsets (a plain dot product while the noise centre is small
    against the cap, the compensated dot product, and the correctly rounded sums the module falls back to for a
    very large noise centre) stay within 2u·cap of the exact clipped value, for centres of norm 1 to 1e300 (each
    where the module uses it) and rows nearly orthogonal to them; a plain dot product misses that bound by orders
    of magnitude at norm 1e12."""
    X, y = separable(300, d=7, seed=2)
    cap, bound = 1e4, 2 * 2.0**-53 * 1e4
    limits = {"plain": _plain_up_to(7, cap, 1.0), "compensated": _compensated_up_to(7, cap, 1.0)}
    assert limits["plain"] > 300 and _plain_up_to(7, cap, 1e3) == 0.0  # (a large noise scale: never plain)
    used = 0
    for scale in (1.0, 300.0, 1e6, 1e12, 1e300):
        centre = np.random.default_rng(3).standard_normal(7) * scale
        if method != "exact" and math.hypot(*centre) > limits[method]:
            continue  # beyond this method's range: the module never uses it there
        rows = _nearly_orthogonal(X, centre, cap, seed=4)
        chosen = {"plain": (math.inf, math.inf), "compensated": (math.inf, 0.0), "exact": (0.0, 0.0)}[method]
        offsets = _offsets_of(centre, cap, *chosen)
        assert offsets.keywords["method"] == method
        assert np.abs(offsets(rows, y) - np.clip(_exact_offsets(rows, y, centre), -cap, cap)).max() <= bound
        used += 1
    assert used >= 2
    centre = np.random.default_rng(3).standard_normal(7) * 1e12
    rows = _nearly_orthogonal(X, centre, cap, seed=4)
    plain = np.clip(y * (rows @ centre), -cap, cap)
    assert np.abs(plain - np.clip(_exact_offsets(rows, y, centre), -cap, cap)).max() > 1000 * bound


@pytest.mark.parametrize("loss", ["logistic", "svm"])
def test_blocked_gradient_with_offsets_is_the_gradient(monkeypatch, loss):
    # Blocks of 64 rows (500 rows: 8 blocks): (1/n) Σ ℓ′(a_i + y_i fᵀx_i) y_i x_i + lam·f, against central differences
    # of the objective written out directly.
    monkeypatch.setattr("dpstats._kernels.blocks.CACHE_BLOCK_BYTES", 64 * 8 * 5)
    X, y = X_TRAIN[:500], Y_TRAIN[:500]
    lam, rng = 0.05, np.random.default_rng(5)
    offsets, f = rng.normal(size=500), rng.normal(size=5)
    data = _Rows(X, y)
    assert data.rows == 64

    def F(w):
        z = offsets + y * (X @ w)
        value = (
            np.logaddexp(0, -z) if loss == "logistic" else np.where(z < 0.5, 1 - z, np.clip(1.5 - z, 0, None) ** 2 / 2)
        )
        return value.mean() + 0.5 * lam * (w @ w)

    h = 1e-6
    numeric = [(F(f + h * e) - F(f - h * e)) / (2 * h) for e in np.eye(5)]
    np.testing.assert_allclose(_gradient(data, LOSSES[loss], lam, f, offsets), numeric, rtol=0, atol=1e-7)


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
def test_output_perturbation_gamma_noise_has_the_paper_law_at_the_charged_sensitivity(loss):
    # noise="float": the paper's release f̂ + b with ‖b‖ ~ Gamma(d, S/eps), S the charged sensitivity (2/(n lam) plus
    # twice the solver's public distance, about 2^-9 of it). The noise law of the paper at S, not at a tenth more
    # (400 draws).
    X, y = X_TRAIN[:40, :3], Y_TRAIN[:40]
    n, d, lam, eps = 40, 3, 0.5, 2.0
    plan = OutputPerturbation.of(n, d, lam, LOSSES[loss], 1, 5000)
    assert plan.sensitivity == pytest.approx(2 * math.sqrt(norm_bound_squared(d)) / (n * lam), rel=2.0**-8)
    centre = _solve(_Rows(X, y), LOSSES[loss], lam, plan.solver)
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
    # noise="exact" (the default): (release − round(f̂/G)·G)/G are iid discrete Laplace draws X with scale t from
    # the L1 sensitivity √d·S (one grid unit per coordinate added for the rounding). With ρ = e^(−1/t):
    # E|X| = 2ρ/(1 − ρ²) and E X² = 2ρ/(1 − ρ)². 6,000 draws: a z-test of the mean |X| at the calibrated t
    # (|z| < 3.29, two-sided α = 1e-3) and against 0.9 t (rejected: z ≈ 8).
    X, y = X_TRAIN[:40, :3], Y_TRAIN[:40]
    n, d, lam, eps = 40, 3, 0.5, 2.0
    plan = OutputPerturbation.of(n, d, lam, LOSSES[loss], 1, 5000)
    l1 = math.nextafter(math.sqrt(d) * plan.sensitivity, math.inf)
    noise = make_noise(epsilon=eps, delta=0.0, sensitivity=l1, changed=d)
    grid, t = float(noise.grid), float(noise.scale)
    centre = np.rint(_solve(_Rows(X, y), LOSSES[loss], lam, plan.solver) / grid)
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
    l1 = math.sqrt(d) * OutputPerturbation.plan(n, d, lam, "logistic").sensitivity
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


def test_objective_perturbation_parameters_never_round_toward_less_noise():
    # eps' must be <= eps - 2m ln(1 + c/(n lam)) and lam + Delta >= c/(n expm1(eps/(4m))), exactly; checked at
    # 60 digits on random public parameters (rounding to nearest overshoots at about half of them).
    import mpmath

    rng = np.random.default_rng(26)
    for _ in range(400):
        n, m = int(rng.integers(2, 10**6)), int(rng.integers(1, 5))
        lam, eps, c = 10 ** rng.uniform(-6, 0), 10 ** rng.uniform(-2, 1), float(rng.choice([0.25, 0.5, 5.0]))
        eps_p, Delta = objective_perturbation_parameters(n, lam, eps, c, max_rows=m)
        with mpmath.workdps(60):
            if Delta == 0.0:
                exact = mpmath.mpf(eps) - 2 * m * mpmath.log1p(mpmath.mpf(c) / (n * mpmath.mpf(lam)))
                assert 0 < eps_p <= exact and eps_p == pytest.approx(float(exact), rel=1e-12)
            else:
                required = mpmath.mpf(c) / (n * mpmath.expm1(mpmath.mpf(eps) / (4 * m)))
                assert eps_p == eps / 2 and mpmath.mpf(lam + Delta) >= required
                assert lam + Delta == pytest.approx(float(required), rel=1e-12)
    # ε′ > 0 but below the smallest float takes the Δ branch, where ε/2 underflows too: refused, naming epsilon
    with pytest.raises(dps.ParameterError, match="epsilon = 5e-324 is too small"):
        objective_perturbation_parameters(10**6, 1.0, 5e-324, 0.25)
    eps_p, Delta = objective_perturbation_parameters(10**6, 1.0, 1e-300, 0.25)  # tiny, but representable
    assert eps_p > 0


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
        grad_J = X.T @ (y * LOSSES[loss].derivative(y * (X @ f))) / n + lam * f
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
    f1, f2 = _minimise(X, y, loss, lam, np.zeros(2))[0], _minimise(X2, y2, loss, lam, np.zeros(2))[0]
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


def test_objective_tolerance_below_double_precision_is_refused_before_the_charge():
    # tol = 1e-30 at lam = 1e-4: the rounding of the steps alone moves the point by more; refused from n, d, lam, the
    # loss and tol (public), whatever the data, before anything is charged. (It used to charge, then raise
    # NotConvergedError.) The same for a step count above max_iter.
    acc = dps.Accountant(10.0, composition="basic")
    with pytest.raises(dps.ParameterError, match="double precision"):
        dps.logistic_regression(X_TRAIN, Y_TRAIN, 1.0, lam=1e-4, method="objective", tol=1e-30, accountant=acc)
    with pytest.raises(dps.ParameterError, match="max_iter=100 allows fewer"):
        dps.logistic_regression(X_TRAIN, Y_TRAIN, 1.0, lam=1e-4, method="objective", max_iter=100, accountant=acc)
    assert acc.spent == (0.0, 0.0) and acc.ledger == []


@pytest.mark.parametrize("loss", ["logistic", "svm"])
def test_objective_ledger_note_states_the_public_step_counts(loss):
    acc = dps.Accountant(10.0, composition="basic")
    FUNCS[loss](X_TRAIN[:300], Y_TRAIN[:300], 1.0, lam=0.01, rng=0, accountant=acc)
    n, d = 300, 5
    bound = math.sqrt(norm_bound_squared(d))
    _, Delta = objective_perturbation_parameters(n, 0.01, 1.0 * (1 - AMP_SHARE), LOSSES[loss].c, norm_bound=bound)
    plan = Accelerated.plan(n, d, 0.01 + Delta, LOSSES[loss], 1e-9 / (0.01 + Delta), 5000)
    assert (plan.newton > 0) == (loss == "logistic")
    assert f"on {plan.steps} accelerated gradient steps and {plan.newton} Newton steps" in acc.ledger[0].note
    assert acc.ledger[0].proven


def test_objective_float_release_is_recorded_unproven():
    with pytest.warns(dps.FloatingPointNoiseWarning), pytest.raises(dps.exceptions.UnprovenGuaranteeError):
        dps.svm(X_TRAIN[:300], Y_TRAIN[:300], 1.0, lam=0.01, noise="float", rng=0, accountant=dps.Accountant(10.0))


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


def test_a_tol_that_overflows_the_target_is_refused_naming_it():
    """tol/(lam + Delta) beyond double precision: a ParameterError naming tol, before anything is charged (it was a
    bare ValueError from a logarithm)."""
    acc = dps.Accountant(10.0)
    X, y = np.zeros((1000, 2)), np.ones(1000)
    with pytest.raises(dps.ParameterError, match="tol"):
        dps.logistic_regression(X, y, 1.0, lam=0.5, tol=1.7e308, accountant=acc)
    assert acc.ledger == []
