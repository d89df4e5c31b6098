"""The accountant: composition rules against closed forms and dp-accounting, budgets that never overshoot,
parallel composition, calibration to a budget, the exportable ledger, and sharing across processes."""

import copy
import math
import pickle

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import norm

import dpstats as dps
from dpstats.accounting import (
    AccountantSharingError,
    ApproxDP,
    Exponential,
    Gaussian,
    Laplace,
    Planned,
    PureDP,
    UnprovenGuaranteeError,
    compose,
    event_from_dict,
    gaussian_epsilon,
    zcdp_epsilon,
)
from dpstats.exceptions import BudgetExceededError, NotPrivateError, ParameterError


def _exact_gaussian_epsilon(mu, delta):
    """ε of the Gaussian mechanism with multiplier mu at δ, from Balle & Wang's condition, solved independently."""

    def gap(eps):
        return norm.cdf(1 / (2 * mu) - eps * mu) - math.exp(eps) * norm.cdf(-1 / (2 * mu) - eps * mu) - delta

    return brentq(gap, 1e-9, 100, xtol=1e-14)


def _gaussians(count, multiplier, delta_each):
    mu = multiplier
    event = Gaussian(_exact_gaussian_epsilon(mu, delta_each), delta_each, sigma=mu, sensitivity=1.0)
    return [event] * count


# ----------------------------------------------------------------------------- composition rules


def test_pld_is_exact_for_100_gaussians_within_one_percent_and_never_below():
    """The issue's plan: 100 Gaussian releases with σ/Δ = 10 at δ = 1e-6 compose into one Gaussian with σ/Δ = 1."""
    events = _gaussians(100, 10.0, 1e-8)
    exact = _exact_gaussian_epsilon(1.0, 1e-6)
    pld, _ = compose(events, "pld", 1e-6)
    assert exact <= pld <= exact * 1.01
    zcdp, _ = compose(events, "zcdp", 1e-6)
    basic, _ = compose(events, "basic", 1e-6)
    advanced, _ = compose(events, "advanced", 1e-6, slack=1e-7)
    assert pld < zcdp < basic and advanced <= basic
    assert basic == pytest.approx(49.3, abs=0.1)  # the measurement: 100 x eps(sigma/Delta=10, 1e-8)
    assert zcdp <= 0.5 + 2 * math.sqrt(0.5 * math.log(1e6))  # never worse than Bun & Steinke's standard conversion


def test_pld_through_dp_accounting_matches_the_gaussian_closed_form():
    """A Laplace release forces the dp_accounting path; with a negligible Laplace the result tends to the closed
    form of the Gaussians alone."""
    events = _gaussians(4, 2.0, 1e-7)
    closed, _ = compose(events, "pld", 1e-6)
    assert closed == pytest.approx(_exact_gaussian_epsilon(1.0, 1e-6), rel=1e-9)
    mixed, _ = compose(events + [Laplace.calibrated(1e6, 1.0)], "pld", 1e-6)
    assert closed <= mixed <= closed * 1.002


def test_mixed_plan_matches_dp_accounting_directly():
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    gaussian = Gaussian(_exact_gaussian_epsilon(3.0, 1e-6), 1e-6, sigma=3.0, sensitivity=1.0)
    events = [Laplace.calibrated(2.0, 1.0), gaussian, Exponential(0.5)]
    ours, delta = compose(events, "pld", 1e-5)
    theirs = (
        pld.from_laplace_mechanism(2.0)
        .compose(pld.from_gaussian_mechanism(3.0))
        .compose(pld.from_privacy_parameters(common.DifferentialPrivacyParameters(0.5, 0.0)))
    )
    assert delta == 1e-5 and ours == pytest.approx(theirs.get_epsilon_for_delta(1e-5), rel=1e-12)
    assert ours < 0.5 + 0.5 + _exact_gaussian_epsilon(3.0, 1e-5)  # tighter than adding the three up


def test_zcdp_rule_adds_rho_and_converts_tightly():
    # Two Gaussians with sigma/Delta = 2 are 0.25-zCDP together.
    events = _gaussians(2, 2.0, 1e-6)
    eps, delta = compose(events, "zcdp", 1e-6)
    assert eps == pytest.approx(zcdp_epsilon(0.25, 1e-6), rel=1e-9) and delta == 1e-6
    # Exponential mechanism: bounded range gives epsilon^2/8, four times better than a generic pure release.
    assert Exponential(1.0).zcdp() == (0.125, 0.0) and PureDP(1.0).zcdp() == (0.5, 0.0)
    assert zcdp_epsilon(0.25, 1e-6) < 0.25 + 2 * math.sqrt(0.25 * math.log(1e6))


def test_gaussian_repeat_and_failure_compose_exactly():
    repeated = Gaussian(_exact_gaussian_epsilon(1.0, 1e-6), 1e-6, sigma=4.0, sensitivity=1.0, repeat=16)
    assert repeated.combined_multiplier == pytest.approx(1.0)
    eps, _ = compose([repeated], "pld", 1e-6)
    assert eps == pytest.approx(_exact_gaussian_epsilon(1.0, 1e-6), rel=1e-9)
    failing = Gaussian(_exact_gaussian_epsilon(1.0, 6e-7), 1e-6, sigma=1.0, sensitivity=1.0, failure=4e-7)
    assert compose([failing], "pld", 1e-6)[0] == pytest.approx(_exact_gaussian_epsilon(1.0, 6e-7), rel=1e-9)
    assert compose([failing], "pld", 3e-7)[0] == math.inf  # the failure probability alone exceeds the budget


def test_discrete_gaussian_is_accounted_by_its_dominating_continuous_sigma():
    from dpstats.accounting.gaussian import SMOOTHING_SIGMA

    event = Gaussian(1.0, 1e-6, sigma=100.0, sensitivity=10.0, discrete=True)
    assert event.noise_multiplier == pytest.approx(math.sqrt(100.0**2 - SMOOTHING_SIGMA**2) / 10.0)
    assert event.noise_multiplier < 10.0  # never credited with more noise than it has


# ----------------------------------------------------------------------------- the budget


def test_spend_and_ledger_under_basic_composition():
    acc = dps.Accountant(1.0, 1e-5, composition="basic")
    dps.mean([0.5], 0.4, bounds=(0, 1), rng=0, accountant=acc)
    dps.histogram([0.5], 0.3, 1e-6, range=(0, 1), rng=0, accountant=acc)
    eps, delta = acc.spent
    assert eps == pytest.approx(0.7) and delta == pytest.approx(1e-6)
    assert [e.mechanism for e in acc.ledger] == ["mean", "histogram"]
    assert isinstance(acc.ledger[0].events[0], Laplace) and acc.ledger[0].events[0].discrete
    assert isinstance(acc.ledger[1].events[0], Gaussian) and acc.ledger[1].events[0].discrete


def test_pld_is_the_default_and_tighter_than_basic_on_the_same_releases():
    pld, basic = dps.Accountant(5.0), dps.Accountant(5.0, 1e-6, composition="basic")
    assert pld.composition == "pld" and pld.delta == dps.accounting.DEFAULT_DELTA
    for acc in (pld, basic):
        for _ in range(4):
            dps.mean([0.5, 0.2], 1.0, 1e-7, bounds=(0, 1), rng=0, accountant=acc)
    assert pld.spent[0] < 0.6 * basic.spent[0]


def test_float_point_one_ten_times_overshoots_and_split_fits_exactly():
    """0.1 as a float exceeds 1/10: ten spends add up to 1 + 5.6e-17 and are refused (no relative tolerance)."""
    acc = dps.Accountant(1.0, 0.0, composition="basic")
    for _ in range(9):
        acc.spend(0.1)
    with pytest.raises(BudgetExceededError, match="split"):
        acc.spend(0.1)
    exact = dps.Accountant(1.0, 0.0, composition="basic")
    share = exact.split(10)
    for _ in range(10):
        exact.spend(share)
    assert exact.spent[0] <= 1.0
    with pytest.raises(BudgetExceededError):
        exact.spend(1e-12)


def test_overspend_refused_before_noise():
    acc = dps.Accountant(0.5)
    rng = np.random.default_rng(0)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExceededError, match="Nothing was released"):
        dps.mean([0.5], 0.6, bounds=(0, 1), rng=rng, accountant=acc)
    assert rng.bit_generator.state == state  # no noise was drawn
    assert acc.ledger == []


def test_delta_budget_enforced():
    acc = dps.Accountant(10.0, 1e-6, composition="basic")
    with pytest.raises(BudgetExceededError):
        dps.variance([0.5, 0.2], 1.0, 1e-5, bounds=(0, 1), rng=0, accountant=acc)
    assert dps.Accountant(10.0, 0.0).check_events([PureDP(1.0)]) is None
    with pytest.raises(BudgetExceededError):  # a pure budget admits no Gaussian
        dps.Accountant(10.0, 0.0).check_events(_gaussians(1, 5.0, 1e-9))


def test_refuse_not_private():
    with pytest.raises(NotPrivateError, match="SN"):
        dps.Accountant(1.0).refuse("SN", "erratum")


def test_unproven_release_refused_unless_allowed():
    X = np.random.default_rng(0).uniform(-0.3, 0.3, (200, 4))
    strict = dps.Accountant(10.0)
    with pytest.raises(UnprovenGuaranteeError, match="allow_unproven"):
        dps.pca_ppca(X, 2, 1.0, sampler="gibbs", rng=0, accountant=strict)
    assert strict.ledger == []
    lenient = dps.Accountant(10.0, allow_unproven=True)
    dps.pca_ppca(X, 2, 1.0, sampler="gibbs", rng=0, accountant=lenient)
    assert not lenient.ledger[0].proven and "UNPROVEN" in str(lenient)


def test_advanced_composition_hand_computed():
    acc = dps.Accountant(100.0, 1e-3, composition="advanced", slack=1e-6)
    for _ in range(100):
        acc.spend(0.01, 1e-8)
    expected = math.sqrt(2 * 100 * math.log(1e6)) * 0.01 + 100 * 0.01 * (math.exp(0.01) - 1)
    eps, delta = acc.spent
    assert eps == pytest.approx(expected) and eps >= expected and eps < 1.0
    assert delta == pytest.approx(100 * 1e-8 + 1e-6)


def test_advanced_falls_back_to_basic_and_never_overflows():
    acc = dps.Accountant(10.0, 1e-3, composition="advanced")
    acc.spend(1.0)
    assert acc.spent == (1.0, 0.0)
    big = dps.Accountant(1000.0, 0.1, composition="advanced")
    big.spend(800.0)  # e^800 overflows a float: basic composition applies
    assert big.spent == (800.0, 0.0)
    with pytest.raises(BudgetExceededError):
        dps.Accountant(1.0, 0.1, composition="advanced").check(800.0)


def test_slack_accepts_any_real_number_type():
    acc = dps.Accountant(1.0, 1e-5, composition="advanced", slack=np.float32(1e-6))
    assert acc.slack == pytest.approx(1e-6)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        (dict(epsilon=0), "epsilon"),
        (dict(epsilon=1, delta=1), "delta"),
        (dict(epsilon=1, composition="fancy"), "composition"),
        (dict(epsilon=1, delta=0.0, composition="advanced"), "delta > 0"),
        (dict(epsilon=1, delta=1e-5, composition="advanced", slack=1e-3), "slack"),
        (dict(epsilon=1, delta=1e-5, slack=1e-6), "slack applies only"),
        (dict(epsilon=1, allow_unproven="yes"), "allow_unproven"),
    ],
)
def test_bad_accountant(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        dps.Accountant(**kwargs)


def test_accountant_type_checked_before_anything():
    with pytest.raises(ParameterError, match="accountant must be"):
        dps.mean([0.5], 1.0, bounds=(0, 1), accountant="budget")
    X = np.zeros((5, 2))
    with pytest.raises(ParameterError, match="accountant must be"):
        dps.pca_sn(X, 1.0, accountant="x")


# ----------------------------------------------------------------------------- parallel composition


def test_parallel_blocks_charge_the_most_expensive_part():
    x = np.linspace(0, 1, 90)
    parts = np.array_split(np.arange(90), 3)
    acc = dps.Accountant(1.0, 0.0, composition="basic")
    with acc.parallel(3) as block:
        for branch, rows, eps in zip(block, parts, (0.5, 1.0, 0.25), strict=True):
            dps.mean(x[rows], eps, bounds=(0, 1), rng=0, accountant=branch)
    assert acc.spent == (1.0, 0.0)
    assert [e.part for e in acc.ledger] == ["parallel 1, part 1", "parallel 1, part 2", "parallel 1, part 3"]
    with pytest.raises(ParameterError, match="closed"):
        dps.mean(x[parts[0]], 0.1, bounds=(0, 1), rng=0, accountant=block[0])
    with pytest.raises(BudgetExceededError):
        acc.spend(0.1)


def test_parallel_under_pld_and_zcdp():
    weak, strong = _gaussians(1, 2.0, 1e-7), _gaussians(1, 8.0, 1e-7)
    for rule in ("pld", "zcdp"):
        acc = dps.Accountant(10.0, 1e-6, composition=rule)
        block = acc.parallel(2)
        block[0].record("a", weak)
        block[1].record("b", strong)
        assert acc.spent[0] == pytest.approx(compose(weak, rule, 1e-6)[0])
    mixed = dps.Accountant(10.0, 1e-6)
    block = mixed.parallel(2)
    block[0].record("a", [PureDP(2.0)])
    block[1].record("b", weak)
    # No single part is known to dominate the other's loss distribution, so the PLD rule composes the parts one
    # after another (valid, looser); the basic statement, the most expensive part's own (eps, delta), is smaller.
    sequential = compose([PureDP(2.0)] + weak, "pld", 1e-6)[0]
    assert mixed.spent[0] == pytest.approx(max(2.0, weak[0].epsilon)) and mixed.spent[0] < sequential


# ----------------------------------------------------------------------------- calibration to a budget


def test_calibrate_mean_variance_histogram_uses_the_budget_exactly():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 1000)
    acc = dps.Accountant(1.0, 1e-6)
    plan = [
        Planned("gaussian", 1, name="mean"),
        Planned("gaussian", 2, name="variance"),
        Planned("gaussian", 1, name="histogram"),
    ]
    mean, var, hist = acc.calibrate(plan)
    assert var.noise_multiplier == pytest.approx(mean.noise_multiplier / math.sqrt(2), rel=1e-6)
    dps.mean(x, mean.epsilon, mean.delta, bounds=(0, 1), rng=0, accountant=acc)
    dps.variance(x, var.epsilon, var.delta, bounds=(0, 1), rng=0, accountant=acc)
    dps.histogram(x, hist.epsilon, hist.delta, range=(0, 1), rng=0, accountant=acc)
    assert 1.0 - 2e-3 <= acc.spent[0] <= 1.0


@pytest.mark.parametrize("rule", ["basic", "advanced", "zcdp", "pld"])
def test_calibrate_k_equal_gaussians(rule):
    acc = dps.Accountant(2.0, 1e-5, composition=rule)
    (share,) = acc.calibrate([Planned("gaussian", count=10)])
    events = [Gaussian(share.epsilon, share.delta, sigma=share.noise_multiplier, sensitivity=1.0)] * 10
    eps, delta = compose(events, rule, 1e-5, slack=acc.slack)
    assert 2.0 * (1 - 2e-4) <= eps <= 2.0 and delta <= 1e-5


def test_gaussian_epsilon_inverts_the_analytic_calibration():
    from dpstats.noise.calibration import gaussian_sigma_analytic

    for eps, delta in [(0.3, 1e-6), (2.0, 1e-9), (10.0, 1e-3)]:
        mu = gaussian_sigma_analytic(1.0, eps, delta)
        assert eps <= gaussian_epsilon(mu, delta) <= eps * (1 + 1e-9)


# ----------------------------------------------------------------------------- export and display


def test_json_round_trip_keeps_every_event():
    acc = dps.Accountant(5.0, 1e-5, composition="zcdp")
    dps.mean([0.1, 0.5], 1.0, bounds=(0, 1), rng=0, accountant=acc)
    dps.mean([0.1, 0.5], 1.0, 1e-6, bounds=(0, 1), rng=0, accountant=acc)
    block = acc.parallel(2)
    block[1].record("by hand", [ApproxDP(0.2, 1e-7)], note="two parts")
    text = acc.to_json()
    again = dps.Accountant.from_json(text)
    assert again.spent == acc.spent and again.ledger == acc.ledger and again.to_json() == text
    assert '"type": "gaussian"' in text and '"sigma"' in text
    with pytest.raises(ParameterError, match="unknown privacy event"):
        event_from_dict({"type": "magic", "epsilon": 1.0, "delta": 0.0})
    with pytest.raises(ParameterError, match="not a dpstats ledger"):
        dps.Accountant.from_json("{}")


def test_table_columns_stay_aligned_with_long_names():
    acc = dps.Accountant(10.0, 1e-5, composition="basic")
    acc.spend(0.5, mechanism="a mechanism with a very long descriptive name", note="n1")
    acc.spend(0.25, 1e-7, mechanism="m", note="n2")
    lines = str(acc).splitlines()[1:]
    eps_end = {line.index(word) + len(word) for line, word in zip(lines, ("epsilon", "0.5", "0.25"), strict=True)}
    assert len(eps_end) == 1  # right-aligned epsilon column


# ----------------------------------------------------------------------------- sharing


def test_in_memory_accountant_cannot_be_pickled_or_copied():
    acc = dps.Accountant(1.0)
    for attempt in (pickle.dumps, copy.deepcopy, copy.copy):
        with pytest.raises(AccountantSharingError, match="n_jobs=1"):
            attempt(acc)


def test_ledger_file_is_shared_and_pickles(tmp_path):
    path = tmp_path / "budget.json"
    acc = dps.Accountant(1.0, 1e-6, composition="basic", ledger_file=path)
    acc.spend(0.25, mechanism="first")
    twin = pickle.loads(pickle.dumps(acc))  # what a worker process receives
    twin.spend(0.25, mechanism="second")
    assert [e.mechanism for e in acc.ledger] == ["first", "second"] and acc.spent[0] == 0.5
    reopened = dps.Accountant.open(path)
    with pytest.raises(BudgetExceededError):
        reopened.spend(0.75)
    with pytest.raises(ParameterError, match="different budget"):
        dps.Accountant(2.0, 1e-6, composition="basic", ledger_file=path)


def _spend_in_worker(args):
    path, eps = args
    acc = dps.Accountant.open(path)
    acc.spend(eps, mechanism="worker")
    return True


def test_ledger_file_collects_charges_from_worker_processes(tmp_path):
    import multiprocessing

    path = tmp_path / "budget.json"
    acc = dps.Accountant(1.0, 0.0, composition="basic", ledger_file=path)
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert all(pool.map(_spend_in_worker, [(str(path), 0.125)] * 8))
    assert len(acc.ledger) == 8 and acc.spent == (1.0, 0.0)


@pytest.mark.parametrize("rule", ["pld", "zcdp", "basic"])
def test_zero_sensitivity_gaussian_costs_nothing_and_composes(rule):
    """A Gaussian event on a query of sensitivity 0 (infinite noise multiplier) is free, alone or mixed."""
    acc = dps.Accountant(1.0, 1e-6, composition=rule)
    acc.record("m", [Gaussian(0.0, 0.0, sigma=1.0, sensitivity=0.0)])
    assert acc.spent[0] == 0.0
    acc.record("m", [Laplace.calibrated(10.0, 1.0)])
    assert acc.spent[0] == pytest.approx(0.1, rel=1e-3)
