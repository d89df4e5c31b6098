"""The audit bounds each correct mechanism below its ε and catches an under-noised one."""

import numpy as np
import pytest

import dpstats as dps
from dpstats.audit import audit, clopper_pearson
from dpstats.noise import sample_laplace

N_RUNS = 20_000


def test_clopper_pearson_known_values():
    lo, up = clopper_pearson(0, 100, 0.05)
    assert lo == 0.0 and up == pytest.approx(1 - 0.05 ** (1 / 100))
    lo, up = clopper_pearson(100, 100, 0.05)
    assert up == 1.0 and lo == pytest.approx(0.05 ** (1 / 100))


@pytest.mark.parametrize("eps", [0.5, 1.0])
def test_mean_audit_below_epsilon(eps):
    res = audit(
        lambda x, r: dps.mean(x, eps, bounds=(0, 1), rng=r), [0.0], [1.0], lambda out: out > 1.0, n_runs=N_RUNS, rng=1
    )
    assert res.epsilon_lower <= eps
    assert res.epsilon_lower > 0.6 * eps  # the event is near-optimal: the audit is not vacuous


def test_variance_audit_below_epsilon():
    eps = 1.0
    res = audit(
        lambda x, r: dps.variance(x, eps, bounds=(0, 1), rng=r),
        [0.0, 0.0],
        [0.0, 1.0],
        lambda out: out > 0.25,
        n_runs=N_RUNS,
        rng=2,
    )
    assert res.epsilon_lower <= eps


def test_histogram_audit_below_epsilon():
    eps = 1.0
    res = audit(
        lambda x, r: dps.histogram(x, eps, bins=2, range=(0, 1), rng=r)[0],
        [0.2],
        [0.8],
        lambda out: out[0] - out[1] > 2.0,
        n_runs=N_RUNS,
        rng=3,
    )
    assert res.epsilon_lower <= eps


def test_gaussian_audit_respects_delta():
    eps, delta = 1.0, 1e-3
    res = audit(
        lambda x, r: dps.mean(x, eps, delta, bounds=(0, 1), rng=r),
        [0.0],
        [1.0],
        lambda out: out > 1.5,
        n_runs=N_RUNS,
        delta=delta,
        rng=4,
    )
    assert res.epsilon_lower <= eps


def test_audit_flags_under_noised_mechanism():
    """Laplace noise at half the calibrated scale really is 2ε-DP; the audit must say > ε."""
    eps = 1.0

    def broken_mean(x, rng):
        return float(np.mean(x)) + sample_laplace(0.5 / eps, (), rng)

    res = audit(broken_mean, [0.0], [1.0], lambda out: out > 1.0, n_runs=N_RUNS, rng=5)
    assert res.epsilon_lower > eps


def test_disjoint_supports_give_infinite_point_estimate():
    res = audit(lambda x, r: x[0] + r.uniform(), [0.0], [5.0], lambda out: out > 2, n_runs=200, rng=0)
    assert res.epsilon_point == np.inf and res.epsilon_lower > 3


# ----------------------------------------------------------------------------- every remaining mechanism
#
# Each audit runs the mechanism as released and, with the same datasets and event, an under-noised variant (the
# same code calibrated for 8 eps, or more, claimed as eps): the correct one must stay below eps, the variant must be
# flagged above it, which shows that the event has the power to catch a calibration error.

UNDER = 8.0  # the under-noised variant uses this multiple of epsilon


def _pca_neighbours(d=2, background=0.5):
    """Datasets differing in row 0 (e1 versus e2); the other rows lie along e1 with norm ``background``."""
    X = np.zeros((3, d))
    X[:, 0] = background
    Xp = X.copy()
    X[0], Xp[0] = np.eye(d)[0], np.eye(d)[1]
    return X, Xp


def _flagged_and_clean(mechanism, data, neighbour, event, *, eps, delta=0.0, n_runs, seed, under=UNDER):
    clean = audit(
        lambda ds, r: mechanism(ds, eps, r), data, neighbour, event, n_runs=n_runs, delta=delta, alpha=0.05, rng=seed
    )
    broken = audit(
        lambda ds, r: mechanism(ds, under * eps, r),
        data,
        neighbour,
        event,
        n_runs=n_runs,
        delta=delta,
        alpha=0.05,
        rng=seed + 1,
    )
    return clean.epsilon_lower, broken.epsilon_lower


@pytest.mark.parametrize(
    "sampler,k,d,n_runs", [("sequential", 1, 2, 2000), ("sequential", 2, 3, 2000), ("gibbs", 2, 3, 1000)]
)
def test_audit_ppca(sampler, k, d, n_runs):
    # The exponential mechanism's privacy loss between these neighbours grows with s(V) = ‖Vᵀe1‖² − ‖Vᵀe2‖², the
    # change of the score: events {s > t} are the most revealing.
    X, Xp = _pca_neighbours(d)
    eps = 1.0

    def mech(data, e, rng):
        if sampler == "gibbs":
            acc = dps.Accountant(e, allow_unproven=True)  # the paper's sampler, recorded as unproven
            return dps.pca_ppca(data, k, e, sampler="gibbs", rng=rng, accountant=acc)
        return dps.pca_ppca(data, k, e, rng=rng)

    def event(V):
        return float(V[0] @ V[0] - V[1] @ V[1]) > 0.8

    clean, broken = _flagged_and_clean(mech, X, Xp, event, eps=eps, n_runs=n_runs, seed=11)
    assert clean <= eps < broken


def test_audit_cca():
    # Joint rows e1 (in X) versus e_{dx+1} (in Y): C = ZᵀZ/N changes by ±1/N on two diagonal entries, the worst case
    # of the √2/N sensitivity; the event thresholds their difference at the midpoint.
    N, dx, eps, delta = 4, 2, 1.0, 1e-5
    Z = np.zeros((N, 4))
    Z[1:, 1] = 0.5
    Zp = Z.copy()
    Z[0, 0], Zp[0, dx] = 1.0, 1.0

    def mech(data, e, rng):
        return dps.cca(data[:, :dx], data[:, dx:], 1, e, delta, rng=rng).C_hat

    event = lambda C: C[0, 0] - C[dx, dx] > 0.0  # noqa: E731 - the midpoint of +1/N and -1/N
    clean, broken = _flagged_and_clean(mech, Z, Zp, event, eps=eps, delta=delta, n_runs=2000, seed=21)
    assert clean <= eps < broken


@pytest.mark.parametrize("algorithm,n_runs", [("separate", 1000), ("adaptive", 600)])
def test_audit_covariance_dong(algorithm, n_runs):
    # Row 0 is e1 versus e2, three rows 0.5·e1 beside it: A = diag(1.75, 0) versus diag(0.75, 1), a change of
    # Frobenius norm √2 (the worst case of the eigenvector step, and of the Rayleigh quotients on P̃ = I); the event
    # thresholds A[0, 0] − A[1, 1] halfway (2.75 versus −0.25... the estimate's diagonal, through both releases).
    # The estimate mixes two noisy releases with half the budget each and is projected onto [0, n]: the event sees
    # part of the privacy loss, so the under-noised variant claims ε for a 32 ε calibration before it shows.
    X = np.zeros((4, 2))
    X[:, 0] = 0.5
    Xp = X.copy()
    X[0], Xp[0] = [1.0, 0.0], [0.0, 1.0]
    eps, delta = 1.0, 1e-5

    def mech(data, e, rng):
        return dps.covariance_dong(data, e, delta, algorithm=algorithm, rng=rng)

    clean, broken = _flagged_and_clean(
        mech, X, Xp, lambda A: A[0, 0] - A[1, 1] > 1.0, eps=eps, delta=delta, n_runs=n_runs, seed=51, under=32.0
    )
    assert clean <= eps < broken


def test_audit_private_norm_bound():
    # Two rows of norms 2^-8 and 2^8 versus 2^-8 and 2^-6: the median's best grid points lie between the two norms
    # (16 versus 2 of the 40 octaves of the log grid), the others are e^{-ε/2} times less likely; the event is a
    # bound above 2^-5. Under-noised: 8 ε claimed as ε.
    X, Xp = np.array([[2.0**-8], [2.0**8]]), np.array([[2.0**-8], [2.0**-6]])
    eps = 1.0

    def mech(data, e, rng):
        return dps.preprocessing.private_norm_bound(data, e, q=0.5, rng=rng)

    clean, broken = _flagged_and_clean(mech, X, Xp, lambda r: r > 2.0**-5, eps=eps, n_runs=1000, seed=61)
    assert clean <= eps < broken


@pytest.mark.parametrize("method,under", [("range_finder", 64.0), ("input_perturbation", UNDER)])
def test_audit_low_rank(method, under):
    # A = 0 versus one row e1 (a change of norm 1, Hardt & Roth's neighbouring relation): the rank-1 output's first
    # entry. The range finder's sensitivity (a chi quantile, about 6 here) dwarfs the change of norm 1, so its
    # under-noised variant needs 64 eps before the change shows.
    A = np.zeros((6, 4))
    Ap = A.copy()
    Ap[0, 0] = 1.0
    eps, delta = 1.0, 1e-5

    def mech(data, e, rng):
        return dps.low_rank(data, 1, e, delta, method=method, bounds=(0, 1), rng=rng)

    clean, broken = _flagged_and_clean(
        mech, A, Ap, lambda B: B[0, 0] > 0.5, eps=eps, delta=delta, n_runs=2000, seed=31, under=under
    )
    assert clean <= eps < broken


@pytest.mark.parametrize("function", [dps.svm, dps.logistic_regression])
def test_audit_objective_perturbation(function):
    # Neighbours differ in one example; the event is the first weight above the midpoint of the two exact minimisers.
    X = np.array([[0.6, 0.0], [0.0, 0.8], [-0.5, 0.5], [0.3, -0.7]])
    y = np.array([1.0, 1.0, -1.0, -1.0])
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = [-0.6, 0.0], 1.0
    lam, eps = 1.0, 1.0

    def mech(data, e, rng):
        return function(*data, e, lam=lam, method="objective", rng=rng)

    first = [np.mean([mech(ds, 1e3, r)[0] for r in range(20)]) for ds in ((X, y), (X2, y2))]
    mid = sum(first) / 2
    clean, broken = _flagged_and_clean(mech, (X, y), (X2, y2), lambda f: f[0] > mid, eps=eps, n_runs=1000, seed=41)
    assert clean <= eps < broken


@pytest.mark.parametrize("split", ["uniform", "adaptive"])
def test_audit_covariance_amin(split):
    # Row 0 is e1 (A = diag(1.5, 0)) or e2 (A' = diag(0.5, 1)): C00 − C11 = (λ̂1 − λ̂2)(θ1[0]² − θ1[1]²) is about +1.5
    # against −0.5 without noise; the event thresholds it at their midpoint. Both the eigenvalues and the vector move.
    X, Xp = _pca_neighbours(2)
    eps = 1.0

    def mech(data, e, rng):
        return dps.covariance(data, e, split=split, rng=rng)

    event = lambda C: C[0, 0] - C[1, 1] > 0.5  # noqa: E731
    clean, broken = _flagged_and_clean(mech, X, Xp, event, eps=eps, n_runs=4000, seed=31)
    assert clean <= eps < broken
