"""Private quantiles and bounds: the exact pmf of each mechanism, audits, named outputs, bad input, accounting."""

import itertools
import math

import numpy as np
import pandas as pd
import polars as pl
import pytest
from _counting import Counted
from scipy import stats

import dpstats as dps
from dpstats.audit import audit
from dpstats.descriptive import _quantiles as quantiles_module
from dpstats.descriptive._quantiles import _Grid, _sample_joint, _sample_one

ALPHA = 1e-3  # type-I error of each goodness-of-fit test (fixed seeds: deterministic)


def _ranks(cells: np.ndarray, grid_size: int) -> np.ndarray:
    """c(j) = #{records in cells below grid point j}, j = 0 … grid_size."""
    return np.searchsorted(np.sort(cells), np.arange(grid_size + 1), side="left")


def _single_pmf(cells, q, epsilon, grid_size) -> np.ndarray:
    """The exponential mechanism of the module docstring, written out: P(j) ∝ exp(−ε|c(j) − qn|/2)."""
    weights = np.exp(-epsilon / 2 * np.abs(_ranks(cells, grid_size) - q * len(cells)))
    return weights / weights.sum()


def _joint_pmf(cells, levels, epsilon, grid_size) -> dict:
    """GJK's joint mechanism on the grid, by brute force over every non-decreasing tuple of grid points."""
    n, c = len(cells), _ranks(cells, grid_size)
    targets = np.diff(np.concatenate([[0.0], levels, [1.0]])) * n
    pmf = {}
    for outputs in itertools.combinations_with_replacement(range(grid_size + 1), len(levels)):
        counts = np.diff(np.concatenate([[0], c[list(outputs)], [n]]))
        pmf[outputs] = math.exp(-epsilon / 4 * np.abs(counts - targets).sum())
    total = sum(pmf.values())
    return {k: v / total for k, v in pmf.items()}


def _chi2_pvalue(observed: np.ndarray, expected_p: np.ndarray) -> float:
    keep = expected_p > 0
    assert observed[~keep].sum() == 0, "an outcome of probability 0 was drawn"
    return stats.chisquare(observed[keep], expected_p[keep] * observed.sum()).pvalue


@pytest.mark.parametrize("q,epsilon", [(0.5, 1.0), (0.25, 0.3), (0.9, 3.0)])
def test_single_quantile_sampler_follows_the_exact_pmf(q, epsilon):
    cells = np.array([1, 2, 2, 5, 6, 6, 6, 9])
    grid_size = 11
    rng = np.random.default_rng(7)
    draws = np.array([_sample_one(cells, q, epsilon, grid_size, rng) for _ in range(20000)])
    observed = np.bincount(draws, minlength=grid_size + 1)
    assert _chi2_pvalue(observed, _single_pmf(cells, q, epsilon, grid_size)) > ALPHA


def test_single_quantile_draws_two_uniform_words_and_nothing_else():
    """The sampler's only randomness is one uniform of 128 bits (two raw 64-bit words): no float is drawn, and no
    loop draws until acceptance (tests/test_hardening.py checks neighbours)."""
    for n, epsilon in ((50, 0.7), (400, 5.0), (3, 1e-6)):
        draws = Counted(7)
        dps.quantile(np.linspace(0, 1, n), 0.5, epsilon, bounds=(0, 1), rng=draws.generator)
        assert draws.count == 2


@pytest.mark.parametrize(
    "levels,cells", [([0.25, 0.75], [0, 1, 1, 4, 5]), ([0.5, 0.5], [2, 2, 3]), ([0.1, 0.5, 0.9], [0, 3, 3, 5])]
)
def test_joint_sampler_follows_the_exact_pmf(levels, cells):
    grid_size, epsilon = 6, 1.5
    cells, levels = np.array(cells), np.array(levels)
    pmf = _joint_pmf(cells, levels, epsilon, grid_size)
    outcomes = list(pmf)
    position = {o: i for i, o in enumerate(outcomes)}
    rng = np.random.default_rng(11)
    observed = np.zeros(len(outcomes))
    for _ in range(20000):
        observed[position[tuple(_sample_joint(cells, levels, epsilon, grid_size, rng))]] += 1
    assert _chi2_pvalue(observed, np.array([pmf[o] for o in outcomes])) > ALPHA


# Neighbours (one record replaced) and an event chosen by searching all small datasets on a grid of 8 cells for the
# largest privacy loss of a threshold event: ln(0.2545 / 0.1327) = 0.65 at epsilon = 1.
AUDIT_DATA, AUDIT_NEIGHBOUR = [0.5, 6.5, 7.5, 7.5], [0.5, 6.5, 0.5, 7.5]


def _median(epsilon):
    return lambda data, rng: dps.quantile(data, 0.5, epsilon, bounds=(0, 8), grid_size=8, rng=rng)


def test_audit_single_quantile_stays_below_epsilon_and_flags_an_under_noised_variant():
    event = lambda out: out <= 6.0  # noqa: E731
    honest = audit(_median(1.0), AUDIT_DATA, AUDIT_NEIGHBOUR, event, n_runs=8000, rng=1)
    assert honest.epsilon_lower < 1.0
    assert 0.3 < honest.epsilon_point < 1.0  # the event's true loss is 0.65
    under_noised = audit(_median(3.0), AUDIT_DATA, AUDIT_NEIGHBOUR, event, n_runs=8000, rng=1)  # claims epsilon = 1
    assert under_noised.epsilon_lower > 1.0


def test_audit_joint_quantiles_stays_below_epsilon():
    def quartiles(data, rng):
        return dps.quantile(data, [0.25, 0.75], 1.0, bounds=(0, 8), grid_size=8, rng=rng)

    result = audit(quartiles, AUDIT_DATA, AUDIT_NEIGHBOUR, lambda out: out[1] <= 6.0, n_runs=4000, rng=2)
    assert result.epsilon_lower < 1.0


def test_accuracy_improves_with_epsilon_and_n():
    rng = np.random.default_rng(3)
    x = rng.normal(50, 10, 20000)
    errors = {
        eps: np.median([abs(dps.quantile(x, 0.5, eps, bounds=(0, 100), rng=s) - np.median(x)) for s in range(15)])
        for eps in (0.01, 1.0)
    }
    assert errors[1.0] < 0.05 < errors[0.01]  # at eps = 1 the median is within a few grid steps


def test_vector_q_keeps_its_order_and_names_its_output():
    x = pd.Series(np.random.default_rng(4).uniform(0, 100, 3000), name="age")
    levels = [0.9, 0.1, 0.5]
    out = dps.quantile(x, levels, 2.0, bounds=(0, 100), rng=0)
    assert isinstance(out, pd.Series) and list(out.index) == levels and out.name == "age"
    assert out[0.1] <= out[0.5] <= out[0.9]
    np.testing.assert_allclose(out.to_numpy(), np.quantile(x, levels), atol=3.0)
    polars_out = dps.quantile(pl.Series("age", x.to_numpy()), levels, 2.0, bounds=(0, 100), rng=0)
    assert isinstance(polars_out, pl.Series) and polars_out.name == "age"
    np.testing.assert_array_equal(polars_out.to_numpy(), out.to_numpy())
    array_out = dps.quantile(x.to_numpy(), levels, 2.0, bounds=(0, 100), rng=0)
    assert isinstance(array_out, np.ndarray)
    assert isinstance(dps.quantile(x, 0.5, 1.0, bounds=(0, 100), rng=0), float)


def test_outputs_are_points_of_the_public_grid():
    x = np.random.default_rng(5).uniform(-3, 5, 200)
    values = [dps.quantile(x, 0.3, 0.5, bounds=(-3, 5), grid_size=64, rng=s) for s in range(30)]
    values += list(dps.quantile(x, [0.2, 0.8], 0.5, bounds=(-3, 5), grid_size=64, rng=0))
    steps = (np.array(values) + 3) / 8 * 64
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-9)


@pytest.mark.parametrize(
    "call,error,match",
    [
        (lambda x, a: dps.quantile(x, 1.5, 1.0, bounds=(0, 1), accountant=a), dps.ParameterError, "q must be"),
        (lambda x, a: dps.quantile(x, [], 1.0, bounds=(0, 1), accountant=a), dps.ParameterError, "q must be"),
        (lambda x, a: dps.quantile(x, [[0.5]], 1.0, bounds=(0, 1), accountant=a), dps.ParameterError, "q must be"),
        (lambda x, a: dps.quantile(x, 0.5, 0.0, bounds=(0, 1), accountant=a), dps.ParameterError, "epsilon"),
        (lambda x, a: dps.quantile(x, 0.5, 1.0, bounds=(1, 0), accountant=a), dps.ParameterError, "bounds"),
        (
            lambda x, a: dps.quantile(x, 0.5, 1.0, bounds=([0, 0], [1, 1]), accountant=a),
            dps.ParameterError,
            "pair of scalars",
        ),
        (
            lambda x, a: dps.quantile(x, 0.5, 1.0, bounds=(0, 0.5), accountant=a),
            dps.OutOfBoundsError,
            "outside the declared bounds",
        ),
        (
            lambda x, a: dps.quantile(np.r_[x, np.nan], 0.5, 1.0, bounds=(0, 1), accountant=a),
            dps.DataValidationError,
            "NaN",
        ),
        (
            lambda x, a: dps.quantile([], 0.5, 1.0, bounds=(0, 1), accountant=a),
            dps.DataValidationError,
            "at least 1 row",
        ),
        (lambda x, a: dps.quantile(np.c_[x, x], 0.5, 1.0, bounds=(0, 1), accountant=a), dps.DataValidationError, "1-D"),
        (
            lambda x, a: dps.quantile(
                pd.DataFrame({"a": x, "b": ["u"] * x.size}), 0.5, 1.0, bounds=(0, 1), accountant=a
            ),
            dps.DataValidationError,
            "b",
        ),
        (
            lambda x, a: dps.quantile(x, 0.5, 1.0, bounds=(0, 1), grid_size=0, accountant=a),
            dps.ParameterError,
            "grid_size",
        ),
        (
            lambda x, a: dps.private_bounds(x, 1.0, range=(0, 1), quantiles=(0.9, 0.1), accountant=a),
            dps.ParameterError,
            "quantiles",
        ),
        (
            lambda x, a: dps.private_bounds(
                pd.DataFrame({"a": x, "b": np.r_[x[:-1], np.nan]}), 1.0, range=(0, 1), accountant=a
            ),
            dps.DataValidationError,
            "NaN",
        ),
        (
            lambda x, a: dps.private_bounds(pd.DataFrame({"a": x, "b": x}), 1.0, range={"a": (0, 1)}, accountant=a),
            dps.ParameterError,
            "missing",
        ),
    ],
)
def test_bad_input_raises_before_any_charge(call, error, match):
    acc = dps.Accountant(10.0)
    with pytest.raises(error, match=match):
        call(np.linspace(0, 1, 20), acc)
    assert acc.ledger == []


def test_quantile_clip_keeps_the_guarantee_and_is_needed_explicitly():
    x = np.r_[np.linspace(0, 1, 99), 5.0]
    assert 0 <= dps.quantile(x, 0.99, 1.0, bounds=(0, 1), clip=True, rng=0) <= 1


def test_accountant_is_charged_before_sampling_and_overspend_samples_nothing(monkeypatch):
    x = np.linspace(0, 1, 100)
    acc = dps.Accountant(1.0, 0.0, composition="basic")
    seen = []
    original = quantiles_module._sample_one

    def spy(*args):
        seen.append(len(acc.ledger))
        return original(*args)

    monkeypatch.setattr(quantiles_module, "_sample_one", spy)
    dps.quantile(x, 0.5, 0.6, bounds=(0, 1), accountant=acc, rng=0)
    assert seen == [1]
    entry = acc.ledger[0]
    assert entry.mechanism == "quantile" and entry.epsilon == 0.6 and "exact sampler" in entry.note
    with pytest.raises(dps.BudgetExceededError):
        dps.quantile(x, 0.5, 0.6, bounds=(0, 1), accountant=acc, rng=0)
    assert seen == [1]
    with pytest.raises(dps.accounting.UnprovenGuaranteeError):  # the joint sampler is floating point: unproven
        dps.quantile(x, [0.2, 0.8], 0.4, bounds=(0, 1), accountant=acc, rng=0)
    assert len(acc.ledger) == 1
    allowing = dps.Accountant(1.0, 0.0, composition="basic", allow_unproven=True)
    dps.quantile(x, [0.2, 0.8], 0.4, bounds=(0, 1), accountant=allowing, rng=0)
    assert "floating-point sampler" in allowing.ledger[-1].note and not allowing.ledger[-1].proven
    assert allowing.spent == pytest.approx((0.4, 0.0))


def test_private_bounds_spend_what_they_state_and_feed_the_mean():
    rng = np.random.default_rng(6)
    incomes = rng.lognormal(10.5, 0.6, 5000)
    acc = dps.Accountant(1.0, 0.0, composition="basic")
    lo, hi = dps.private_bounds(incomes, 0.5, range=(0, 1e6), accountant=acc, rng=0)
    assert acc.spent == pytest.approx((0.5, 0.0))
    true_lo, true_hi = np.quantile(incomes, [0.05, 0.95])
    assert 0 <= lo < hi <= 1e6 and abs(lo - true_lo) < 0.5 * true_lo and abs(hi - true_hi) < 0.5 * true_hi
    mean = dps.mean(incomes, 0.5, bounds=(lo, hi), clip=True, accountant=acc, rng=0)
    assert abs(mean - incomes.mean()) < 0.05 * incomes.mean()
    table = pd.DataFrame({"age": rng.integers(18, 90, 5000), "income": incomes})
    acc = dps.Accountant(1.0, 0.0, composition="basic")
    bounds = dps.private_bounds(table, 0.8, range={"age": (0, 150), "income": (0, 1e6)}, accountant=acc, rng=0)
    assert list(bounds) == ["age", "income"] and all(b[0] < b[1] for b in bounds.values())
    assert len(acc.ledger) == 4 and acc.spent[0] <= 0.8  # two exact single quantiles per column
    assert set(dps.mean(table, 0.2, bounds=bounds, weights=[1, 1], clip=True, rng=0).index) == {"age", "income"}


def test_private_bounds_never_return_an_empty_interval():
    lo, hi = dps.private_bounds(np.full(500, 3.0), 5.0, range=(0, 10), grid_size=16, rng=0)
    assert lo < hi


def test_cells_map_each_record_on_its_own():
    """The record -> cell map is a fixed per-record function: replacing one record changes one cell of the multiset."""
    from collections import Counter

    x = np.linspace(-1, 1, 41)
    changed = x.copy()
    changed[7] = 0.93
    grid = _Grid(-1.0, 1.0, 16)
    before, after = Counter(grid.cells(x, clip=False)), Counter(grid.cells(changed, clip=False))
    assert sum((before - after).values()) == 1 and sum((after - before).values()) == 1


def test_log_grid_is_monotone_with_exact_ends_and_keeps_the_ranks():
    grid = _Grid(-50.0, 1e6, 1000, "log")
    points = grid.values(np.arange(1001))
    assert points[0] == -50.0 and points[-1] == 1e6 and np.all(np.diff(points) > 0)
    x = np.sort(np.random.default_rng(8).lognormal(8, 1, 200))
    one_by_one = [int(grid.cells(np.array([v]), clip=False)[0]) for v in x]  # the per-record map is monotone
    assert np.all(np.diff(one_by_one) >= 0) and one_by_one[-1] <= 999
    with pytest.raises(dps.ParameterError, match="scale"):
        dps.quantile(x, 0.5, 1.0, bounds=(0, 1e6), scale="sqrt")


def test_log_scale_finds_bounds_in_a_range_far_wider_than_the_data():
    incomes = np.random.default_rng(9).lognormal(10.5, 0.6, 5000)
    true_lo, true_hi = np.quantile(incomes, [0.05, 0.95])
    # Each bound is one exponential-mechanism draw at eps/2 with weights exp(eps/2 * u / 2). Above the data (about
    # 62,000 of the 65,536 log-grid cells) the 95% level's utility is -0.05 n = -250; near the quantile about 24
    # cells' worth of weight has u ~ 0. So P(bound lands in the empty stretch) <= 62000/24 * exp(-eps * 250 / 4):
    # 1e-2 at eps = 0.2, 4e-8 at eps = 0.4 (what is used here).
    found = np.array([dps.private_bounds(incomes, 0.4, range=(0, 1e8), rng=s) for s in range(10)])
    assert np.all(np.abs(found[:, 0] / true_lo - 1) < 0.2) and np.all(np.abs(found[:, 1] / true_hi - 1) < 0.2)
    linear = np.array(
        [
            dps.private_bounds(incomes, 0.2, range=(0, 1e8), scale="linear", quantiles=(0.01, 0.99), rng=s)[1]
            for s in range(10)
        ]
    )
    assert np.median(linear) > 10 * true_hi  # the wide empty stretch of a linear grid wins (the failure avoided)


def test_a_table_takes_bounds_by_column_as_mean_does():
    """quantile on a DataFrame: one quantile per column, bounds as a pair, per-column pairs or a dict by column (as
    mean and sum take them), every value checked first, ε split equally between the columns."""
    import pandas as pd

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.integers(18, 90, 400).astype(float), "amount": rng.uniform(0, 100, 400)})
    acc = dps.Accountant(10.0)
    by_dict = dps.quantile(df, 0.5, 1.0, bounds={"age": (0, 120), "amount": (0, 100)}, rng=5, accountant=acc)
    by_pairs = dps.quantile(df, 0.5, 1.0, bounds=([0, 0], [120, 100]), rng=5)
    assert list(by_dict.index) == ["age", "amount"]
    pd.testing.assert_series_equal(by_dict, by_pairs)
    assert [round(e.epsilon, 12) for e in acc.ledger] == [0.5, 0.5]
    both = dps.quantile(df, [0.25, 0.75], 1.0, bounds=(0, 120), rng=5)
    assert list(both.index) == [0.25, 0.75] and list(both.columns) == ["age", "amount"]
    with pytest.raises(dps.OutOfBoundsError, match="amount"):
        dps.quantile(df, 0.5, 1.0, bounds={"age": (0, 120), "amount": (0, 50)}, accountant=acc)
    assert len(acc.ledger) == 2  # refused before anything more was charged
