import math

import numpy as np
import pytest

import dpstats as dps
from dpstats.exceptions import BudgetExceededError, NotPrivateError, ParameterError


def test_spend_and_ledger():
    acc = dps.Accountant(1.0, 1e-5)
    dps.mean([0.5], 0.4, bounds=(0, 1), rng=0, accountant=acc)
    dps.histogram([0.5], 0.3, 1e-6, range=(0, 1), rng=0, accountant=acc)
    eps, delta = acc.spent
    assert eps == pytest.approx(0.7) and delta == pytest.approx(1e-6)
    assert acc.remaining == pytest.approx((0.3, 9e-6))
    assert [(e.mechanism, e.epsilon, e.delta) for e in acc.ledger] == [("mean", 0.4, 0.0), ("histogram", 0.3, 1e-6)]
    assert "histogram" in str(acc)


def test_tenths_fit():
    acc = dps.Accountant(1.0)
    for _ in range(10):
        acc.spend(0.1, mechanism="x")
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-3)


def test_overspend_refused_before_noise():
    acc = dps.Accountant(0.5)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError, match="Nothing was released"):
        dps.mean([0.5], 0.6, bounds=(0, 1), rng=rng, accountant=acc)
    assert rng.bit_generator.state == state  # no noise was drawn
    assert acc.ledger == []


def test_delta_budget_enforced():
    acc = dps.Accountant(10.0, 1e-6)
    with pytest.raises(BudgetExceededError):
        dps.variance([0.5, 0.2], 1.0, 1e-5, bounds=(0, 1), rng=0, accountant=acc)


def test_refuse_not_private():
    with pytest.raises(NotPrivateError, match="SN"):
        dps.Accountant(1.0).refuse("SN", "erratum")


def test_advanced_composition_hand_computed():
    acc = dps.Accountant(100.0, 1e-3, composition="advanced", slack=1e-6)
    for _ in range(100):
        acc.spend(0.01, 1e-8)
    # DRV: sqrt(2 k ln(1/delta')) eps + k eps (e^eps - 1), k = 100, eps = 0.01, delta' = 1e-6
    expected = math.sqrt(2 * 100 * math.log(1e6)) * 0.01 + 100 * 0.01 * (math.exp(0.01) - 1)
    eps, delta = acc.spent
    assert eps == pytest.approx(expected) and eps < 1.0  # basic would give 1.0
    assert delta == pytest.approx(100 * 1e-8 + 1e-6)


def test_advanced_falls_back_to_basic_when_better():
    acc = dps.Accountant(10.0, 1e-3, composition="advanced")
    acc.spend(1.0)
    assert acc.spent == (1.0, 0.0)


@pytest.mark.parametrize("kwargs,match", [
    (dict(epsilon=0), "epsilon"), (dict(epsilon=1, delta=1), "delta"),
    (dict(epsilon=1, composition="fancy"), "composition"),
    (dict(epsilon=1, composition="advanced"), "delta > 0"),
    (dict(epsilon=1, delta=1e-5, composition="advanced", slack=1e-3), "slack"),
])
def test_bad_accountant(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        dps.Accountant(**kwargs)


def test_accountant_type_checked():
    with pytest.raises(ParameterError, match="accountant must be"):
        dps.mean([0.5], 1.0, bounds=(0, 1), accountant="budget")
