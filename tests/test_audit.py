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
    res = audit(lambda x, r: dps.mean(x, eps, bounds=(0, 1), rng=r), [0.0], [1.0],
                lambda out: out > 1.0, n_runs=N_RUNS, rng=1)
    assert res.epsilon_lower <= eps
    assert res.epsilon_lower > 0.6 * eps  # the event is near-optimal: the audit is not vacuous


def test_variance_audit_below_epsilon():
    eps = 1.0
    res = audit(lambda x, r: dps.variance(x, eps, bounds=(0, 1), rng=r), [0.0, 0.0], [0.0, 1.0],
                lambda out: out > 0.25, n_runs=N_RUNS, rng=2)
    assert res.epsilon_lower <= eps


def test_histogram_audit_below_epsilon():
    eps = 1.0
    res = audit(lambda x, r: dps.histogram(x, eps, bins=2, range=(0, 1), rng=r)[0], [0.2], [0.8],
                lambda out: out[0] - out[1] > 2.0, n_runs=N_RUNS, rng=3)
    assert res.epsilon_lower <= eps


def test_gaussian_audit_respects_delta():
    eps, delta = 1.0, 1e-3
    res = audit(lambda x, r: dps.mean(x, eps, delta, bounds=(0, 1), rng=r), [0.0], [1.0],
                lambda out: out > 1.5, n_runs=N_RUNS, delta=delta, rng=4)
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
