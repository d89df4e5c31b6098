"""dpstats.hypothesis: p-values valid after the noise (type-I error at most α), power under a clear alternative, and
the naive approach — the noisy statistic plugged into scipy's p-value — failing the same type-I test.

The statistical tests run each test R times on data drawn under its null (the scenarios of
:mod:`dpstats.compendium.hypothesis_benchmark`: skewed data, unequal sizes and variances) at a small n (30) and at a
large n·ε, with fixed seeds, and refuse when the number of rejections at α = 0.05 exceeds the 0.999-quantile of
Binomial(R, α): what a test whose type-I error is α exceeds once in a thousand runs. The Monte Carlo p-values use
B = 99 simulated draws here (valid for any B: P((1 + #)/(B + 1) <= u) <= u under the null); the benchmark measures
the full grid with the default B. The naive approach must exceed the same threshold.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

import dpstats as dps
from dpstats import hypothesis
from dpstats.compendium import hypothesis_benchmark as hb
from dpstats.hypothesis._binomial import tails
from dpstats.hypothesis._ranks import rank_sums
from dpstats.inference._simulate import NoiseModel

ALPHA = 0.05
R = 200
B = 99
#: Rejections above this in R runs refuse the test: the 0.999-quantile of Binomial(R, α).
THRESHOLD = int(binom.ppf(0.999, R, ALPHA))
#: (n, ε): a small sample, and a large n·ε (where the noise is small beside the sampling error).
CELLS = ((30, 0.5), (1000, 4.0))


def _rejections(method: str, test: str, n: int, epsilon: float, effect: float = 0.0, reps: int = R) -> int:
    scenario = hb.SCENARIOS[test]
    options = scenario.options(effect)
    data_rng = np.random.default_rng([37, n, hb.TESTS.index(test), int(effect * 1000)])
    noise_rng = np.random.default_rng([38, n, hb.TESTS.index(test)])
    count = 0
    for _ in range(reps):
        data = scenario.draw(n, effect, data_rng)
        if method == "dpstats":
            p = hb.private_pvalue(test, data, options, epsilon, noise_rng, B)
        else:
            p = hb.naive_pvalue(test, data, options, epsilon, noise_rng)
        count += p <= ALPHA
    return int(count)


@pytest.mark.parametrize("test", hb.TESTS)
def test_type_one_error_stays_at_alpha_at_small_n_and_large_n_epsilon(test):
    counts = [_rejections("dpstats", test, n, e) for n, e in CELLS]
    assert max(counts) <= THRESHOLD, f"rejections in {R} null runs at (n, eps) = {CELLS}: {counts} > {THRESHOLD}"


@pytest.mark.parametrize("test", hb.TESTS)
def test_the_naive_approach_fails_the_same_type_one_test(test):
    """Releasing the statistics with noise and plugging them into scipy's p-value, as if exact: the noise is not in
    scipy's null distribution, and the same test refuses it."""
    counts = [_rejections("naive", test, n, e) for n, e in CELLS]
    assert max(counts) > THRESHOLD, counts


@pytest.mark.parametrize("test", hb.TESTS)
def test_power_under_a_clear_alternative_is_well_above_alpha(test):
    """At n = 1000, ε = 1 and the scenario's largest effect, the rejections in 60 runs exceed what a level-α test
    could reach by chance (the 0.999-quantile of Binomial(60, α)), by a wide margin: at least half the runs."""
    reps = 60
    count = _rejections("dpstats", test, 1000, 1.0, hb.SCENARIOS[test].effects[-1], reps)
    assert count > max(binom.ppf(0.999, reps, ALPHA), reps / 2), count


# ----------------------------------------------------------------------------- exact p-values


def test_the_binomial_p_value_is_the_exact_convolution():
    """Against a brute-force sum over every count and the discrete Laplace noise's own pmf: never below it, and
    within 1e-9."""
    from fractions import Fraction

    model = NoiseModel("laplace", Fraction(5, 2), Fraction(1, 4))
    t = 2.5
    z = np.arange(-400, 401)
    pmf = np.exp(-np.abs(z) / t)
    pmf /= pmf.sum()
    n, p = 30, 0.3
    counts = binom.pmf(np.arange(n + 1), n, p)
    for release in (4.25, 9.0, 13.5, 30.75):
        released = np.add.outer(np.arange(n + 1), z * 0.25)
        upper = float(np.sum(counts[:, None] * pmf[None, :] * (released >= release - 1e-12)))
        lower = float(np.sum(counts[:, None] * pmf[None, :] * (released <= release + 1e-12)))
        found = tails(release, n, p, model)
        assert upper <= found[0] <= upper + 1e-9
        assert lower <= found[1] <= lower + 1e-9


def test_with_negligible_noise_the_binomial_test_is_scipys_randomised():
    """At ε = 10⁴ the noise is tiny: the p-value lies between scipy's exact P(K >= k + 1) and P(K >= k) (the
    continuous noise makes it the randomised exact test, which has type-I error α exactly)."""
    from scipy.stats import binomtest

    x = np.r_[np.ones(38), np.zeros(62)]
    ours = hypothesis.binomtest(x, 1e4, p=0.3, alternative="greater", rng=0)
    above = binomtest(39, 100, 0.3, alternative="greater").pvalue
    at = binomtest(38, 100, 0.3, alternative="greater").pvalue
    assert above - 1e-9 <= ours.pvalue <= at + 1e-9
    assert ours.ci[0] < 0.38 < ours.ci[1]


def test_the_rank_sums_normal_limit_matches_the_exact_permutations():
    """The multivariate normal reference used beyond n = 2000 has the exact permutations' covariance."""
    rng = np.random.default_rng(0)
    sizes = np.array([300, 700, 1000])
    exact = rank_sums(2000, sizes, 4000, rng)
    limit = rank_sums(2001, np.array([300, 700, 1001]), 4000, rng)
    expected = (2001 / 12) * (2000 * np.diag(sizes) - np.outer(sizes, sizes))  # Cov(R_j, R_l), rank sums
    scale = expected.max()
    assert np.allclose(np.cov(exact.T) / scale, expected / scale, atol=0.08)
    assert np.allclose(np.cov(limit.T) / scale, expected / scale, atol=0.08)


# ----------------------------------------------------------------------------- results, charges, bad input


def test_a_result_has_scipys_fields_unpacks_and_says_what_was_released():
    rng = np.random.default_rng(1)
    result = hypothesis.ttest_ind(rng.uniform(0, 1, 100), rng.uniform(0, 1, 80), 1.0, bounds=(0, 1), rng=2)
    statistic, pvalue = result
    assert (statistic, pvalue) == (result.statistic, result.pvalue) and 0 < pvalue <= 1
    assert result.ci[0] < result.ci[1] and result.confidence_level == 0.95
    assert set(result.released) >= {"counts", "n", "difference"}
    assert "ttest_ind" in repr(result) and "Monte Carlo, 2000 draws" in repr(result)


@pytest.mark.parametrize(
    ("call", "split"),
    [
        (lambda acc: hypothesis.ttest_1samp(np.linspace(0, 1, 50), 0.5, 1.0, bounds=(0, 1), accountant=acc), "4 : 1"),
        (lambda acc: hypothesis.f_oneway([np.ones(5), np.zeros(5)], 1.0, bounds=(0, 1), accountant=acc), "4 : 1 : 2"),
        (lambda acc: hypothesis.kruskal([np.arange(5.0), np.arange(6.0)], 1.0, accountant=acc), "19 : 1"),
        (lambda acc: hypothesis.chisquare(["a", "b"] * 9, 1.0, categories=["a", "b"], accountant=acc), "whole budget"),
    ],
)
def test_one_charge_per_call_with_the_split_in_the_ledger(call, split):
    acc = dps.Accountant(10.0, 1e-6)
    call(acc)
    assert len(acc.ledger) == 1 and split in acc.ledger[0].note
    assert acc.ledger[0].epsilon == pytest.approx(1.0)


BAD = [
    ("samples", lambda acc: hypothesis.kruskal([np.arange(5.0)], 1.0, accountant=acc)),
    # a sample may be empty (its size is private: neighbours move records between samples); the total n is public
    ("samples", lambda acc: hypothesis.f_oneway([np.array([1.0]), []], 1.0, bounds=(0, 5), accountant=acc)),
    # more samples than the null can fill (k > n): refused from public n and k before the charge (it crashed after)
    ("samples", lambda acc: hypothesis.kruskal([[0.1], [0.2], []], 1.0, accountant=acc)),
    ("samples", lambda acc: hypothesis.f_oneway([[0.1, 0.2], [0.3], []], 1.0, bounds=(0, 1), accountant=acc)),
    ("categories", lambda acc: hypothesis.chisquare(["a", "b"], 1.0, categories=["a", "a"], accountant=acc)),
    ("categories", lambda acc: hypothesis.chisquare(["a", "b"], 1.0, categories=["a", None], accountant=acc)),
    ("categories", lambda acc: hypothesis.chi2_contingency(["a"], ["b"], 1.0, categories=["a", "b"], accountant=acc)),
    ("x", lambda acc: hypothesis.chisquare(["a", "z"], 1.0, categories=["a", "b"], accountant=acc)),
    ("p", lambda acc: hypothesis.binomtest([0, 1], 1.0, p=1.0, accountant=acc)),
    ("p", lambda acc: hypothesis.binomtest([0, 1], 1.0, p=-0.1, accountant=acc)),
    ("x", lambda acc: hypothesis.binomtest([0, 2], 1.0, accountant=acc)),
    ("alternative", lambda acc: hypothesis.mannwhitneyu([1.0], [2.0], 1.0, alternative="two_sided", accountant=acc)),
    ("samples", lambda acc: hypothesis.mannwhitneyu([1.0], [], 1.0, accountant=acc)),
    ("samples", lambda acc: hypothesis.ttest_ind([0.5], [], 1.0, bounds=(0, 1), accountant=acc)),
    ("a", lambda acc: hypothesis.ttest_1samp([], 0.5, 1.0, bounds=(0, 1), accountant=acc)),
    ("popmean", lambda acc: hypothesis.ttest_1samp([0.2, 0.4], 2.0, 1.0, bounds=(0, 1), accountant=acc)),
    ("f_exp", lambda acc: hypothesis.chisquare(["a", "b"], 1.0, categories=["a", "b"], f_exp=[1.0], accountant=acc)),
    (
        "max_rows",
        lambda acc: hypothesis.ttest_1samp(
            [0.1, 0.2, 0.3], 0.5, 1.0, bounds=(0, 1), privacy_unit=[1, 1, 2], max_rows=2, accountant=acc
        ),
    ),
]


@pytest.mark.parametrize(("name", "call"), BAD, ids=[f"{name}-{i}" for i, (name, _) in enumerate(BAD)])
def test_bad_input_is_refused_naming_the_parameter_before_any_charge(name, call):
    acc = dps.Accountant(10.0, 1e-6)
    with pytest.raises((dps.ParameterError, dps.DataValidationError), match=name):
        call(acc)
    assert not acc.ledger


def test_one_record_per_unit_and_the_unit_in_the_ledger():
    rng = np.random.default_rng(3)
    values, people = rng.uniform(0, 1, 300), rng.integers(0, 100, 300)
    acc = dps.Accountant(10.0, 1e-6)
    result = hypothesis.ttest_1samp(
        values, 0.5, 1.0, bounds=(0, 1), privacy_unit=people, max_rows=1, accountant=acc, rng=0
    )
    assert result.released["n"] == len(set(people)) and "privacy unit" in acc.ledger[0].note
    assert acc.ledger[0].relation == "unit"


def test_pandas_columns_in_and_named_tables_out():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"smoker": rng.choice(["yes", "no"], 400), "cough": rng.choice(["yes", "no"], 400)})
    result = hypothesis.chi2_contingency(
        frame["smoker"], frame["cough"], 1.0, categories=(["yes", "no"], ["yes", "no"]), rng=0
    )
    assert list(result.released["table"].index) == ["yes", "no"]
    counts = hypothesis.chisquare(frame["smoker"], 1.0, categories=["yes", "no"], rng=0).released["counts"]
    assert list(counts.index) == ["yes", "no"]
    assert math.isfinite(
        hypothesis.mannwhitneyu(frame.index.to_series()[:50], pd.Series(rng.normal(size=40)), 1.0).pvalue
    )


def test_a_unit_level_refusal_names_the_public_number_of_units_only():
    """With a privacy unit the rows are private: one unit of 1 row and one unit of 3 rows (N = 1 on both sides, a
    neighbouring pair) are refused with the same message, from N (it named the rows on one side)."""
    messages = []
    for rows in (1, 3):
        with pytest.raises(dps.DataValidationError) as caught:
            hypothesis.ttest_1samp(np.full(rows, 0.5), 0.5, 1.0, bounds=(0, 1), privacy_unit=np.zeros(rows), max_rows=1)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "N = 1" in messages[0]
