"""The accountant: composition rules against closed forms and dp-accounting, budgets that never overshoot,
parallel composition, calibration to a budget, the exportable ledger, and sharing across processes."""

import copy
import json
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


def _labelled_gaussian(mu, delta):
    """A Gaussian event with multiplier mu whose (ε, δ) label is a guarantee of it (the accountant checks)."""
    return Gaussian(gaussian_epsilon(mu, delta), delta, sigma=mu, sensitivity=1.0)


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


def test_a_spend_by_hand_on_a_branch_states_its_relation():
    """A block by rows takes releases that protect a row; a spend by hand says so, or is refused (nothing is
    recorded); outside a block the relation is optional."""
    acc = dps.Accountant(1.0, 0.0, composition="basic")
    block = acc.parallel(2)
    with pytest.raises(ParameterError, match="does not state its neighbouring relation"):
        block[0].spend(0.5)
    with pytest.raises(ParameterError, match="protects a privacy unit"):
        block[0].spend(0.5, relation="unit")
    with pytest.raises(ParameterError, match="relation must be one of"):
        block[0].spend(0.5, relation="person")
    assert acc.ledger == []
    block[0].spend(0.5, relation="row")
    block[1].spend(0.25, relation="row")
    block.close()
    assert acc.spent == (0.5, 0.0) and [e.relation for e in acc.ledger] == ["row", "row"]
    acc.spend(0.5)
    assert acc.spent == (1.0, 0.0) and acc.ledger[-1].relation is None
    with pytest.raises(ParameterError, match="by must be one of"):
        acc.parallel(2, by="person")


def test_parallel_under_pld_and_zcdp():
    weak, strong = _gaussians(1, 2.0, 1e-7), _gaussians(1, 8.0, 1e-7)
    for rule in ("pld", "zcdp"):
        acc = dps.Accountant(10.0, 1e-6, composition=rule)
        block = acc.parallel(2)
        block[0].record("a", weak, relation="row")
        block[1].record("b", strong, relation="row")
        assert acc.spent[0] == pytest.approx(compose(weak, rule, 1e-6)[0])
    mixed = dps.Accountant(10.0, 1e-6)
    block = mixed.parallel(2)
    block[0].record("a", [PureDP(2.0)], relation="row")
    block[1].record("b", weak, relation="row")
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
    block[1].record("by hand", [ApproxDP(0.2, 1e-7)], note="two parts", relation="row")
    text = acc.to_json()
    again = dps.Accountant.from_json(text)
    assert again.spent == acc.spent and again.ledger == acc.ledger and again.to_json() == text
    assert '"type": "gaussian"' in text and '"sigma"' in text
    with pytest.raises(ParameterError, match="unknown privacy event"):
        event_from_dict({"type": "magic", "epsilon": 1.0, "delta": 0.0})
    with pytest.raises(ParameterError, match="not a dpstats ledger"):
        dps.Accountant.from_json("{}")


# ----------------------------------------------------------------------------- the ledger as a person reads it


def _busy_accountant(composition="pld"):
    """An accountant whose ledger has long names and notes, a unit-level release, an exponential mechanism and a
    parallel block."""
    rng = np.random.default_rng(0)
    acc = dps.Accountant(50.0, 1e-5, composition=composition)
    acc.spend(0.5, mechanism="a mechanism with a very long descriptive name, " * 3, note="a long note; " * 20)
    dps.mean(rng.uniform(0, 1, 300), 1.0, bounds=(0, 1), rng=1, accountant=acc)
    people = rng.integers(0, 60, 300)
    dps.variance(
        rng.uniform(0, 1, 300), 1.0, 1e-6, bounds=(0, 1), privacy_unit=people, max_rows=5, rng=2, accountant=acc
    )
    dps.pca_ppca(rng.uniform(-0.3, 0.3, (100, 4)), 2, 1.0, rng=3, accountant=acc)
    block = acc.parallel(2)
    block[1].record("by hand", [ApproxDP(0.2, 1e-7)], note="two parts", relation="row")
    return acc


@pytest.mark.parametrize("composition", ["pld", "basic"])
def test_every_line_of_the_printed_ledger_is_at_most_100_characters(composition):
    text = str(_busy_accountant(composition))
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    assert len(repr(_busy_accountant(composition))) <= 100
    # every release is there, numbered, with the relation it protects, and nothing of the long note is cut
    numbers = [line.split(".")[0].strip() for line in lines if line.split(".")[0].strip().isdigit()]
    assert numbers == ["1", "2", "3", "4", "5"]
    assert "protects one privacy unit" in text and "protects one row" in text
    assert text.replace("\n", " ").count("a long note;") == 20


def test_the_printed_total_says_where_epsilon_is_measured_and_under_which_rule():
    acc = dps.Accountant(1.0, 1e-6)
    dps.mean([0.1, 0.5, 0.9], 1.0, 1e-7, bounds=(0, 1), rng=0, accountant=acc)
    eps, delta = acc.spent
    text = str(acc)
    assert f"Spent:  ε = {eps:.6g} at δ = {delta:.3g} under PLD: the release is ({eps:.6g}, {delta:.3g})-DP" in text
    basic = dps.Accountant(1.0, 1e-6, composition="basic")
    basic.spend(0.25, 1e-7)
    assert "ε = 0.25, δ = 1e-07 under basic composition" in str(basic)


def test_remaining_is_what_a_further_release_may_spend_under_basic_composition():
    acc = dps.Accountant(1.0, 1e-6, composition="basic")
    acc.spend(0.375, 2.5e-7)
    eps, delta = acc.remaining  # the exact differences, rounded down (the floats 1e-6 and 2.5e-7 are not exact)
    assert eps == 0.625 and delta == pytest.approx(7.5e-7, rel=1e-15) and delta <= 7.5e-7
    with pytest.raises(BudgetExceededError):
        acc.spend(math.nextafter(eps, 1.0), 0.0)
    with pytest.raises(BudgetExceededError):
        acc.spend(0.0 + 1e-9, math.nextafter(delta, 1.0))
    acc.spend(eps, delta)  # exactly what is left fits
    assert acc.remaining == (0.0, 0.0)


def test_remaining_delta_under_pld_is_what_a_release_may_still_carry():
    """After a pure release the PLD total is stated at the budget's δ, but δ is where ε is measured, not spent:
    remaining δ stays the budget's, and releases carrying up to it are accepted; a release that carries more δ than
    is left is refused, however small its ε. (The old rule, budget minus spent per coordinate, said δ = 0 here.)"""
    acc = dps.Accountant(1.0, 1e-6)
    dps.mean([0.1, 0.5, 0.9], 0.25, bounds=(0, 1), rng=0, accountant=acc)
    assert acc.spent[1] == 1e-6  # the total is stated at the budget's delta...
    eps_left, delta_left = acc.remaining
    assert delta_left == 1e-6 and eps_left == pytest.approx(0.75, abs=1e-5)  # ...but none of it is spent
    acc.spend(0.01, 4e-7)  # a release that carries its own delta fits, as remaining says
    assert acc.remaining[1] == pytest.approx(6e-7, rel=1e-12)
    with pytest.raises(BudgetExceededError):
        acc.spend(1e-6, acc.remaining[1] * 1.01)  # more delta than is left: refused, whatever its epsilon
    dps.mean([0.1, 0.5, 0.9], 0.5, 1e-9, bounds=(0, 1), rng=1, accountant=acc)  # a Gaussian: no delta spent outright
    assert acc.remaining[1] == pytest.approx(6e-7, rel=1e-12)
    # a pure release of the epsilon that is left fits (basic composition of the ledger's statement with it)
    left = acc.remaining[0]
    acc.spend(left * (1 - 1e-9))
    assert acc.spent[0] <= acc.epsilon


def test_to_frame_has_a_row_per_release_with_the_error_in_its_units():
    pd = pytest.importorskip("pandas")
    acc = _busy_accountant()
    frame = acc.to_frame()
    assert isinstance(frame, pd.DataFrame) and list(frame.index) == [1, 2, 3, 4, 5]
    assert list(frame["mechanism"])[1:4] == ["mean", "variance", "pca_ppca"]
    assert frame.loc[2, "units"] == "data units" and frame.loc[2, "error"] == acc.ledger[1].noise[0].half_width
    assert frame.loc[3, "units"] == "squared data units" and frame.loc[3, "relation"] == "unit"
    assert math.isnan(frame.loc[4, "error"]) and "exponential" in frame.loc[4, "noise"]
    assert list(frame["epsilon"]) == [e.epsilon for e in acc.ledger]


def _unit_mean_errors(seeds, max_rows, people=40, per_person=1):
    """(stated half-width, the S̃ statement's own half-width, |error| per seed) of a unit-level mean of data at its
    upper bound (where the count's noise moves the mean most: |S| = C·w/2)."""
    x = np.ones(people * per_person)
    ids = np.repeat(np.arange(people), per_person)
    errors, stated = [], set()
    for seed in range(seeds):
        acc = dps.Accountant(1e6, 0.5)
        released = dps.mean(x, 1.0, bounds=(0, 1), privacy_unit=ids, max_rows=max_rows, rng=seed, accountant=acc)
        (statement,) = acc.ledger[-1].noise
        stated.add(statement.half_width)
        errors.append(abs(released - 1.0))
    assert len(stated) == 1  # public values only: the same statement for every seed
    return stated.pop(), np.array(errors)


def test_a_unit_level_mean_states_the_error_of_the_mean_in_data_units():
    """The ledger's ±h of a person-level mean covers the mean's error at least 95 % of the time (binomial
    threshold, 400 seeds), and is in the mean's units: below the bounds' width, within a small factor of the
    error's own 95 % quantile. The statement of the internal shifted sum (what the ledger said before: its
    half-width in sum units) fails the units check by far."""
    from dpstats._release import plan
    from dpstats.noise.release import Statistic

    seeds = 400
    half_width, errors = _unit_mean_errors(seeds, max_rows=4)
    assert np.count_nonzero(errors <= half_width) >= binom_lower(seeds, 0.95)
    assert half_width < 1.0 and half_width <= 6 * np.quantile(errors, 0.95)
    # the wrong statement: the shifted sum's own 95 % half-width (sensitivity m·w = 4, epsilon 2/3), in sum units
    shifted = plan(Statistic(0, 1), [4], 2 / 3, 0.0, noise="exact", units="data units (sum of x − x̄)")
    (wrong,) = shifted.statements()
    assert not (wrong.half_width < 1.0 and wrong.half_width <= 6 * np.quantile(errors, 0.95))


def binom_lower(n, p, alpha=1e-3):
    """The smallest count of successes a correct p-coverage claim gives with probability >= 1 - alpha (one-sided)."""
    from scipy.stats import binom

    return int(binom.ppf(alpha, n, p))


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


# ----------------------------------------------------------------------------- running totals (issue 25)


def _mixed_events(count, seed, exponential=True):
    """A reproducible mix of the events mechanisms charge: discrete Laplace (a mean), Gaussian, exponential, with a
    few distinct parameters each, so that identical events repeat (as in a real session)."""
    rng = np.random.default_rng(seed)
    kinds = [
        lambda: Laplace(0.02, 0.0, scale=float(4195 * rng.choice([50, 60])), sensitivity=4195.0, discrete=True),
        lambda: Laplace.calibrated(float(rng.choice([20.0, 40.0])), 1.0),
        lambda: _labelled_gaussian(float(rng.choice([40.0, 60.0])), 1e-9),
    ]
    if exponential:
        kinds.append(lambda: Exponential(float(rng.choice([0.01, 0.02]))))
    return [kinds[int(rng.integers(len(kinds)))]() for _ in range(count)]


def _dp_accounting_epsilon(events, delta):
    """dp_accounting itself, composing the events one after another from scratch with its own constructors."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    composed = None
    for e in events:
        if isinstance(e, Laplace) and e.discrete:
            loss = pld.from_discrete_laplace_mechanism(1 / e.scale, sensitivity=int(e.sensitivity))
        elif isinstance(e, Laplace):
            loss = pld.from_laplace_mechanism(e.scale, sensitivity=e.sensitivity)
        elif isinstance(e, Gaussian):
            loss = pld.from_gaussian_mechanism(e.sigma / e.sensitivity)
        else:
            loss = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(e.epsilon, e.delta))
        composed = loss if composed is None else composed.compose(loss)
    return composed.get_epsilon_for_delta(delta)


@pytest.mark.parametrize("rule", ["pld", "zcdp", "advanced", "basic"])
def test_spending_one_by_one_gives_the_total_of_the_whole_ledger(rule):
    """The running total after each spend is what the rule gives for the whole ledger composed from scratch."""
    events = _mixed_events(300, seed=1)
    acc = dps.Accountant(1e3, 1e-5, composition=rule)
    for i, event in enumerate(events, start=1):
        acc.record("m", [event])
        if i in (1, 7, 64, 300):
            assert acc.spent == pytest.approx(compose(events[:i], rule, 1e-5, slack=acc.slack), rel=1e-9)


def test_pld_running_total_matches_dp_accounting_from_scratch_within_one_percent():
    """Laplace and Gaussian releases (where the PLD is the smallest statement): the accountant's ε after 400
    spends is dp_accounting's for the same events composed one by one from scratch, within 1 %; for Gaussians
    alone it is never below the exact ε."""
    events = _mixed_events(400, seed=2, exponential=False)
    acc = dps.Accountant(1e3, 1e-5)
    for event in events:
        acc.record("m", [event])
    theirs = _dp_accounting_epsilon(events, 1e-5)
    assert theirs * 0.99 <= acc.spent[0] <= theirs * 1.01
    gaussians = _gaussians(500, 20.0, 1e-9)
    only = dps.Accountant(1e3, 1e-5)
    for event in gaussians:
        only.record("g", [event])
    exact = _exact_gaussian_epsilon(20.0 / math.sqrt(500), 1e-5)
    assert exact <= only.spent[0] <= exact * 1.01


def test_pld_rule_reports_the_smallest_valid_statement():
    """With exponential-mechanism releases the zCDP statement (bounded range: ε²/8) can be below the worst-case
    loss distribution of an ε-DP release; both hold, and the smaller is reported, never below either bound's own
    computation by more than rounding."""
    events = [Exponential(0.02)] * 2000
    pld_alone = _dp_accounting_epsilon(events, 1e-6)
    zcdp, _ = compose(events, "zcdp", 1e-6)
    assert compose(events, "pld", 1e-6)[0] == pytest.approx(min(pld_alone, zcdp), rel=1e-9)
    assert zcdp < pld_alone  # the case the minimum is for


@pytest.mark.parametrize("rule", ["pld", "zcdp", "advanced", "basic"])
def test_a_refused_spend_leaves_the_running_total_as_it_was(rule):
    events = _mixed_events(120, seed=3)
    budget = compose(events, rule, 1e-5, slack=5e-6 if rule == "advanced" else None)[0] * 1.0001
    acc = dps.Accountant(budget, 1e-5, composition=rule)
    for event in events:
        acc.record("m", [event])
    before = acc.spent
    with pytest.raises(BudgetExceededError):
        acc.record("too much", [Laplace.calibrated(1.0, 1.0)])
    assert acc.spent == before and len(acc.ledger) == 120
    acc.record("small", [Laplace.calibrated(1e6, 1.0)])  # still fits, and composes with the right state
    expected = compose([*events, Laplace.calibrated(1e6, 1.0)], rule, 1e-5, slack=acc.slack)
    assert acc.spent == pytest.approx(expected, rel=1e-9)


def test_every_accepted_spend_fits_and_the_first_refused_would_not():
    """Spending Gaussians and Laplaces until the budget refuses one: the cheap zCDP check accepts the early spends,
    the PLD the late ones; after each acceptance the total read back is within the budget, and the refused spend
    would have exceeded it (computed from scratch)."""
    events = _mixed_events(4000, seed=4, exponential=False)
    budget = 2.0
    acc = dps.Accountant(budget, 1e-5)
    for i, event in enumerate(events):
        try:
            acc.record("m", [event])
        except BudgetExceededError:
            assert compose(events[: i + 1], "pld", 1e-5)[0] > budget
            break
        if i % 50 == 0:
            assert acc.spent[0] <= budget
    else:
        pytest.fail("the budget never ran out")
    assert acc.spent[0] <= budget
    assert compose(events[:i], "zcdp", 1e-5)[0] > budget  # the last spends were decided by the PLD


def test_parallel_blocks_and_sequential_spends_interleave():
    """A block left open while sequential releases continue is composed on top of the running total."""
    acc = dps.Accountant(100.0, 1e-5)
    acc.record("a", [Laplace.calibrated(10.0, 1.0)])
    block = acc.parallel(2)
    block[0].record("p0", [Laplace.calibrated(5.0, 1.0)], relation="row")
    acc.record("b", [_labelled_gaussian(30.0, 1e-9)])
    block[1].record("p1", [Laplace.calibrated(8.0, 1.0)], relation="row")
    assert acc.spent == compose(acc.composition_items(), "pld", 1e-5)
    block.close()
    acc.record("c", [Exponential(0.1)])
    assert acc.spent == compose(acc.composition_items(), "pld", 1e-5)
    again = dps.Accountant.from_json(acc.to_json())
    assert again.spent == acc.spent  # the export says where the block entered the total: the same grouping


def test_calibrate_on_a_long_ledger_uses_what_remains():
    acc = dps.Accountant(6.0, 1e-6)
    for event in _mixed_events(1000, seed=5):
        acc.record("m", [event])
    assert acc.spent[0] < 5.0
    (share,) = acc.calibrate([Planned("gaussian", count=5)])
    events = [Gaussian(share.epsilon, share.delta, sigma=share.noise_multiplier, sensitivity=1.0)] * 5
    total, _ = compose([*acc.composition_items(), *events], "pld", 1e-6)
    assert 6.0 * (1 - 2e-4) <= total <= 6.0


# ----------------------------------------------------------------------------- one total, however it was reached


def _review_events(r):
    """The review's mix (Laplace, Gaussian, exponential, discrete Laplace at random parameters), each Gaussian
    labelled with what its noise gives."""
    pool = [
        Laplace.calibrated(r.uniform(1.5, 6), 1.0),
        _labelled_gaussian(r.uniform(1.0, 5.0), 1e-7),
        Exponential(r.uniform(0.1, 0.5)),
        Laplace.calibrated(r.uniform(1.5, 6), 1.0, discrete=True),
    ]
    return [r.choice(pool) for _ in range(r.randrange(3, 9))]


def test_a_ledger_accepted_near_its_budget_is_within_it_when_reopened(tmp_path):
    """The review's reproducer (acct_reopen.py): a budget a relative 2e-11 below the ledger's total from scratch.
    The running total used to group the privacy-loss distributions by when it was read (sequentially, near the
    budget), the reopened one in one go: the running accountant accepted ledgers that from_json or a second
    process put 1e-10 over the budget (trials 2, 3 and 5 of these six, before). Now both group by the ledger alone:
    the same number, to the last bit, and the last release is refused (reading the total between spends, as a user
    would, changes nothing)."""
    import random

    r = random.Random(1)
    for trial in range(6):
        events = _review_events(r)
        budget = compose(events, "pld", 1e-6)[0] * (1 - 2e-11)
        for path in (None, tmp_path / f"ledger{trial}.jsonl"):
            acc = dps.Accountant(budget, 1e-6, ledger_file=path)
            with pytest.raises(BudgetExceededError):
                for event in events:
                    acc.record("x", [event])
                    assert acc.spent[0] <= budget
            reopened = dps.Accountant.from_json(acc.to_json()) if path is None else dps.Accountant.open(path)
            assert reopened.spent == acc.spent and reopened.spent[0] <= budget


@pytest.mark.parametrize("rule", ["pld", "zcdp", "advanced", "basic"])
def test_the_running_total_is_the_total_from_scratch_to_the_last_bit(rule, tmp_path):
    """A session of 400 releases (more than one chunk of the PLD's grouping) with parallel blocks opened and
    closed among them, the total read and checks made at random moments: the running total equals, bit for bit,
    the same ledger composed from scratch, exported and re-read, and reopened from its file by another
    accountant. (Before the canonical grouping, the PLD's total depended on when it had been read.)"""
    rng = np.random.default_rng(11)
    path = tmp_path / "ledger.jsonl"
    acc = dps.Accountant(1e6, 1e-5, composition=rule, ledger_file=path)
    events = _mixed_events(400, seed=9)
    block = None
    for i, event in enumerate(events):
        if block is None and rng.random() < 0.02:
            block = acc.parallel(2)
        if block is not None and rng.random() < 0.3:
            block[int(rng.integers(2))].record("p", [event], relation="row")
        else:
            acc.record("m", [event])
        if block is not None and rng.random() < 0.05:
            block.close()
            block = None
        if rng.random() < 0.04:
            acc.spent  # noqa: B018 (a read, which must not change how the total is grouped)
        if rng.random() < 0.05:
            acc.check_events([events[(i * 7) % len(events)]])
    assert acc.spent == compose(acc.composition_items(), rule, 1e-5, slack=acc.slack)
    assert dps.Accountant.from_json(acc.to_json()).spent == acc.spent
    assert dps.Accountant.open(path).spent == acc.spent


def test_an_export_orders_the_blocks_as_they_entered_the_total():
    """A block closed after later releases enters the total where it closed; the export says so (``entered``), and
    a malformed order is refused."""
    acc = dps.Accountant(100.0, 1e-5)
    first = acc.parallel(2)
    second = acc.parallel(2)
    first[0].record("a", [Laplace.calibrated(3.0, 1.0)], relation="row")
    second[1].record("b", [Laplace.calibrated(4.0, 1.0)], relation="row")
    acc.record("c", [Laplace.calibrated(5.0, 1.0)])
    second.close()
    first.close()
    data = json.loads(acc.to_json())
    assert [entry.get("entered") for entry in data["entries"]] == [2, 1, None]
    again = dps.Accountant.from_json(acc.to_json())
    assert again.composition_items() == acc.composition_items() and again.spent == acc.spent
    data["entries"][1]["entered"] = 2
    with pytest.raises(ParameterError, match="not distinct positions"):
        dps.Accountant.from_json(json.dumps(data))


# ----------------------------------------------------------------------------- labels and floors


def test_every_event_the_noise_layer_builds_has_a_label_its_noise_gives():
    """make_noise over random ε, δ, sensitivities, repeats, failure probabilities, exact and float noise, analytic
    and classic calibration: every event passes the check the accountant makes when recording and reading back."""
    import random
    import warnings

    from dpstats.accounting.events import check_label
    from dpstats.noise.release import make_noise

    r = random.Random(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(300):
            delta = r.choice([0.0, 1e-10, 1e-6, 1e-3])
            noise = make_noise(
                epsilon=10 ** r.uniform(-2.5, 1.5),
                delta=delta,
                sensitivity=10 ** r.uniform(-3, 3),
                changed=r.choice([1, 2, 7]),
                repeat=r.choice([1, 2, 37]) if delta else 1,
                failure=r.choice([0.0, delta / 3]),
                noise=r.choice(["exact", "float"]),
                calibration=r.choice(["analytic", "classic"]) if delta else "analytic",
            )
            check_label(noise.event)


def test_the_classic_calibration_is_charged_what_its_noise_gives():
    """Dwork & Roth's σ is proven for ε < 1 only; at ε = 10, δ = 1e-3 it gives ε = 11.03: the ledger says so
    (it used to record 10, and basic composition then under-charged it)."""
    import warnings

    from dpstats.noise.release import make_noise

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        event = make_noise(epsilon=10.0, delta=1e-3, sensitivity=1.0, changed=1, calibration="classic").event
        small = make_noise(epsilon=0.5, delta=1e-3, sensitivity=1.0, changed=1, calibration="classic").event
    assert event.epsilon >= _exact_gaussian_epsilon(event.noise_multiplier, 1e-3) > 11.0
    assert small.epsilon == 0.5  # where the formula holds, the label is the ε asked for


def test_a_mislabelled_event_is_refused_when_recorded():
    acc = dps.Accountant(10.0, 1e-6, composition="basic")
    with pytest.raises(ParameterError, match="below what its noise gives"):
        acc.record("x", [Laplace(0.001, scale=1.0, sensitivity=1.0)])
    with pytest.raises(ParameterError, match="not a guarantee of its noise"):
        acc.record("x", [Gaussian(0.001, 1e-7, sigma=0.01, sensitivity=1.0)])
    with pytest.raises(ParameterError, match="a pure release has delta 0"):
        acc.record("x", [Exponential(0.5, 1e-7)])
    assert acc.ledger == []


@pytest.mark.parametrize(
    "event",
    [
        Laplace.calibrated(0.5, 1.0),
        Laplace.calibrated(2.0, 3.0, discrete=True),
        Laplace.calibrated(1.0, 1.0, coordinates=3),
        Gaussian(gaussian_epsilon(0.3, 1e-6), 1e-6, sigma=0.3),
        Gaussian(gaussian_epsilon(3.0, 1e-6), 1e-6, sigma=3.0),
        Exponential(2.0),
        PureDP(1.5),
        ApproxDP(1.0, 1e-4),
    ],
    ids=repr,
)
def test_an_events_floor_is_never_above_its_distributions_epsilon(event):
    """The floor lets an accountant refuse without composing, so it must be a lower bound on the ε of the event's
    privacy-loss distribution, at every δ (at δ = 0.1 a floor without its ln(1 − 2δ) term would fail)."""
    from dpstats.accounting.pld import event_pld

    for delta in (1e-9, 1e-6, 1e-3, 0.1, 0.3):
        floor = event.epsilon_floor(delta)
        assert 0.0 <= floor <= event_pld(event).get_epsilon_for_delta(delta)
    if isinstance(event, Gaussian) and event.noise_multiplier < 1:
        assert event.epsilon_floor(1e-6) > 5.0  # and it is not vacuous where it matters


def test_a_release_far_over_the_budget_is_refused_without_building_its_distribution():
    """The review's big_eps.py: ε = 2000 against a budget of 1 took 15 s to refuse (building a privacy-loss
    distribution of 4e7 points). Its floor is over the budget: refused at once, no distribution built, nothing
    recorded, and the message says what is known."""
    from dpstats.accounting.pld import event_pld

    acc = dps.Accountant(1.0, 1e-6)
    acc.record("before", [Laplace.calibrated(10.0, 1.0)])
    acc.spent  # noqa: B018 (the ledger so far composed)
    for delta in (0.0, 1e-7):
        event_pld.cache_clear()
        with pytest.raises(BudgetExceededError, match="at least epsilon="):
            dps.mean([0.1, 0.5], 2000.0, delta, bounds=(0, 1), rng=0, accountant=acc)
        assert event_pld.cache_info().misses == 0
    assert len(acc.ledger) == 1


def _distributions_for_epsilon_from_delta():
    """dp_accounting distributions of every shape the accountant composes, built on demand: symmetric and not, dense
    and sparse, one event and hundreds, and one whose largest loss underflows e^{−loss} (dp_accounting's loop
    returns early there, and so does the vectorised walk, by handing over to it)."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    def gaussian():
        return pld.from_gaussian_mechanism(3.0, value_discretization_interval=1e-4)

    def pure(epsilon, delta):
        return pld.from_privacy_parameters(common.DifferentialPrivacyParameters(epsilon, delta), 1e-4)

    def mixed():
        discrete = pld.from_discrete_laplace_mechanism(0.5, sensitivity=2, value_discretization_interval=1e-4)
        return gaussian().compose(discrete).compose(pure(0.5, 1e-7)).self_compose(200)

    return {
        "gaussian": gaussian,
        "laplace x 300": lambda: pld.from_laplace_mechanism(2.0, value_discretization_interval=1e-4).self_compose(300),
        "mixed x 200": mixed,
        "subsampled (add and remove differ)": lambda: pld.from_gaussian_mechanism(
            1.0, sampling_prob=0.1, value_discretization_interval=1e-4
        ).self_compose(50),
        "pure eps = 700, twice (e^-loss underflows)": lambda: pure(700.0, 0.0).compose(pure(700.0, 0.0)),
    }


@pytest.mark.parametrize("name", list(_distributions_for_epsilon_from_delta()))
def test_epsilon_for_delta_is_dp_accountings_raised_by_the_margin_never_below(name):
    """The vectorised walk (pld.epsilon_for_delta) gives dp_accounting's own get_epsilon_for_delta up to the relative
    margin 2^-42 it adds, and never less (both infinite where no finite ε has δ; both 0 where ε = 0 suffices)."""
    from dpstats.accounting.pld import epsilon_for_delta

    distribution = _distributions_for_epsilon_from_delta()[name]()
    for delta in (1e-12, 1e-7, 1e-5, 1e-3, 0.1, 0.5, 0.999):
        theirs = float(distribution.get_epsilon_for_delta(delta))
        ours = epsilon_for_delta(distribution, delta)
        if math.isinf(theirs) or theirs == 0.0:
            assert ours == theirs, delta
        else:
            assert theirs <= ours <= theirs * (1 + 2.0**-41), delta


def test_a_release_with_weights_states_its_units_in_words():
    """With weights each coordinate is its own release; the ledger states each in the statistic's units (the
    grid units array once took the place of the units' name, printing Fractions)."""
    acc = dps.Accountant(10.0)
    x = np.random.default_rng(0).uniform(0, 1, (200, 2))
    dps.mean(x, 1.0, bounds=(0, 1), axis=0, weights=[1, 2], rng=0, accountant=acc)
    (entry,) = acc.ledger
    assert [s.units for s in entry.noise] == ["data units", "data units"]
    assert "Fraction" not in str(acc)


def test_leaf_of_copies_by_binary_powers_is_never_below_the_exact_epsilon():
    """A chunk's leaf of k copies (binary powers of the event, dp_accounting's pessimistic compose) against k
    Gaussians composed exactly (one Gaussian with multiplier μ/√k): never below, within 1 %; and against the copies
    composed one after another: the same within 1e-9 (the grouping changes the rounding only)."""
    from dpstats.accounting.pld import copies, event_pld

    event = Gaussian(1.0, 1e-9, sigma=30.0, sensitivity=1.0)
    for k in (1, 2, 3, 37, 128, 255):
        leaf = copies(event, k)
        exact = _exact_gaussian_epsilon(30.0 / math.sqrt(k), 1e-5)
        assert exact <= leaf.get_epsilon_for_delta(1e-5) <= exact * 1.01
    sequential = event_pld(event)
    for _ in range(36):
        sequential = sequential.compose(event_pld(event))
    assert copies(event, 37).get_epsilon_for_delta(1e-5) == pytest.approx(
        sequential.get_epsilon_for_delta(1e-5), rel=1e-9
    )


def test_a_ledger_read_in_one_go_leaves_its_first_spend_near_the_budget_cheap(monkeypatch):
    """from_json composes the ledger's total, so the first spend near the budget recomputes the new event's leaf,
    its path up the incomplete chunk's tree and the final convolution only (it recomposed the whole incomplete
    chunk, one convolution per copy, 209 at N = 2,000, before)."""
    from dpstats.accounting import pld

    events = _mixed_events(600, seed=9, exponential=False)
    acc = dps.Accountant(1e3, 1e-5)
    for event in events:
        acc.record("m", [event])
    small = Laplace.calibrated(1e3, 1.0)
    data = json.loads(acc.to_json())
    data["epsilon"] = compose([*events, small], "pld", 1e-5)[0] * (1 + 1e-9)  # the PLD decides the spend
    near = dps.Accountant.from_json(json.dumps(data))
    calls = []
    compose_pld = pld.compose
    monkeypatch.setattr(pld, "compose", lambda *a: calls.append(1) or compose_pld(*a))
    near.record("m", [small])
    assert 1 <= len(calls) <= 6
    assert near.spent[0] <= data["epsilon"]


def test_vectorised_compose_is_dp_accountings_bit_for_bit():
    """pld.compose (the tail search by cumulative sums) returns exactly what dp_accounting's compose does: the same
    lowest loss, probabilities, infinity mass, for the remove and add pmfs, on dense, sparse, composed and
    asymmetric distributions."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    from dpstats.accounting.pld import compose

    laplace = pld.from_laplace_mechanism(2.0, value_discretization_interval=1e-4)
    gaussian = pld.from_gaussian_mechanism(3.0, value_discretization_interval=1e-4)
    discrete = pld.from_discrete_laplace_mechanism(0.3, sensitivity=2, value_discretization_interval=1e-4)
    pure = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(0.5, 0.0), 1e-4)
    asymmetric = pld.from_gaussian_mechanism(2.0, value_discretization_interval=1e-4, use_connect_dots=False)
    pairs = [
        (laplace, gaussian),
        (laplace.compose(laplace), discrete),
        (pure, pure),
        (pure, laplace),
        (gaussian.compose(discrete).compose(laplace), laplace.compose(gaussian)),
        (asymmetric, laplace),
        (asymmetric.compose(asymmetric), gaussian),
    ]
    for first, second in pairs:
        ours, theirs = compose(first, second), first.compose(second)
        for side in ("_pmf_remove", "_pmf_add"):
            a, b = getattr(ours, side).to_dense_pmf(), getattr(theirs, side).to_dense_pmf()
            assert a._lower_loss == b._lower_loss and a._infinity_mass == b._infinity_mass
            assert np.array_equal(a._probs, b._probs)
        assert ours._symmetric == theirs._symmetric
