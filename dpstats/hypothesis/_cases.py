"""The test cases of the hypothesis tests (their test factories, read through :mod:`dpstats.registry`).

Each function returns the :class:`~dpstats._registry.Cases` of one test: a golden call (its seed's statistic,
p-value and interval recorded in ``tests/golden/releases.json``), worst-case neighbours for the sensitivity checker
(the records at the bounds, a record moved across every other and between samples), the bad-input battery's base
call and the patch that halves the declared sensitivities. Imported only by the tests.
"""

from __future__ import annotations

import functools

import numpy as np

from .._neighbours import labels_changed, neighbours_at_bounds
from .._registry import Cases, Example
from ..descriptive._cases import halve_noise

EPS = 1.0


def summary(result) -> np.ndarray:
    """What a golden call records: the statistic, the p-value and the interval (if any)."""
    return np.array([result.statistic, result.pvalue, *(result.ci or ())], dtype=np.float64)


@functools.cache
def _data():
    rng = np.random.default_rng(20261201)
    return {
        "ones": (rng.random(300) < 0.6).astype(int),
        "labels": rng.choice(["a", "b", "c"], 300, p=[0.5, 0.3, 0.2]),
        "other": rng.choice(["u", "v"], 300),
        "x": rng.beta(2, 3, 200),
        "y": rng.beta(3, 3, 150),
        "z": rng.beta(3, 2, 120),
    }


def _pairs(pairs):
    return lambda: [((a,), (b,)) for a, b in pairs()]


def _first(pairs):
    return lambda: pairs()[0][0]


# ----------------------------------------------------------------------------- neighbours


def _binary():
    """0/1 samples of 4 records differing in one: all 0 against one 1, and the reverse."""
    return [((a,), (b,)) for a, b in neighbours_at_bounds(0.0, 1.0, n=4)]


def _tables():
    """Pairs of labels (x, y) differing in one record: its cell moved to another row and column."""
    x, y = np.array(["a", "a", "b", "b"]), np.array(["u", "v", "u", "v"])
    moved_x, moved_y = x.copy(), y.copy()
    moved_x[0], moved_y[0] = "b", "v"
    return [((x, y), (moved_x, moved_y)), ((x, y), (moved_x, y))]


def _two_samples():
    """(a, b) in [0, 1] differing in one record: moved between the bounds within a sample, and moved to the other
    sample (its value kept, or changed across)."""
    a, b = np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0])
    pairs = [((a, b), (np.array([1.0, 0.0, 1.0]), b))]
    pairs.append(((a, b), (a[1:], np.array([1.0, 0.0, 0.0]))))
    pairs.append(((a, b), (a[1:], np.array([1.0, 0.0, 1.0]))))
    return pairs


def _several():
    """Three samples in [0, 1] differing in one record: moved within its sample, and to another sample."""
    samples = [np.array([0.0, 1.0]), np.array([0.0, 0.0]), np.array([1.0, 1.0])]
    within = [np.array([1.0, 1.0]), samples[1], samples[2]]
    moved = [np.array([1.0]), samples[1], np.array([1.0, 1.0, 1.0])]
    return [((samples,), (within,)), ((samples,), (moved,))]


def _ranked_two():
    """(x, y) whose ranks move the most: the top record of y moved to the bottom (W of x moves by n − 1), and x's
    lowest record moved to y at the top."""
    x, y = np.arange(5.0), np.array([5.0])
    moved = ((np.arange(5.0), np.array([5.0, 6.0])), (np.arange(1.0, 5.0), np.array([5.0, 6.0, 9.0])))
    return [((x, y), (x, np.array([-1.0]))), moved]


def _ranked_several():
    """k = 3 samples of ranks 1..6 whose K moves by 8 of its declared 10: the lowest record moved to the top."""
    values = np.arange(6.0)
    groups = np.array([0, 0, 1, 2, 2, 1])
    samples = [values[groups == j] for j in range(3)]
    moved = values.copy()
    moved[0] = 100.0
    return [((samples,), ([moved[groups == j] for j in range(3)],))]


# ----------------------------------------------------------------------------- the tests


def binomtest() -> Cases:
    return Cases(
        examples=(
            Example("binomtest", _first(_binary), {"epsilon": EPS}, output=summary, neighbours=_binary),
            Example(
                "binomtest gaussian",
                _first(_binary),
                {"epsilon": EPS, "delta": 1e-6},
                output=summary,
                neighbours=_binary,
            ),
            Example(
                "binomtest_golden", lambda: (_data()["ones"],), {"epsilon": 1.0, "p": 0.5}, output=summary, seed=81
            ),
        ),
        battery=(((_data()["ones"][:40],), {"epsilon": 1.0}),),
        misdeclared=(("binomtest", halve_noise),),
    )


def chisquare() -> Cases:
    labels = _pairs(lambda: [(a[0], b[0]) for a, b in labels_changed()])
    keys = {"categories": ["a", "b", "c"]}
    return Cases(
        examples=(
            Example("chisquare", _first(labels), {"epsilon": EPS, **keys}, output=summary, neighbours=labels),
            Example(
                "chisquare_golden",
                lambda: (_data()["labels"],),
                {"epsilon": 1.0, **keys, "f_exp": [5, 3, 2]},
                output=summary,
                seed=82,
            ),
        ),
        battery=(((_data()["labels"][:40],), {"epsilon": 1.0, **keys}),),
        misdeclared=(("chisquare", halve_noise),),
    )


def chi2_contingency() -> Cases:
    keys = {"categories": (["a", "b", "c"], ["u", "v"])}
    return Cases(
        examples=(
            Example(
                "chi2_contingency",
                _first(_tables),
                {"epsilon": EPS, "categories": (["a", "b"], ["u", "v"])},
                output=summary,
                neighbours=_tables,
            ),
            Example(
                "chi2_contingency_golden",
                lambda: (_data()["labels"], _data()["other"]),
                {"epsilon": 1.0, **keys},
                output=summary,
                seed=83,
            ),
        ),
        battery=(((_data()["labels"][:40], _data()["other"][:40]), {"epsilon": 1.0, **keys}),),
        misdeclared=(("chi2_contingency", halve_noise),),
    )


def ttest_1samp() -> Cases:
    bounded = _pairs(lambda: neighbours_at_bounds(0.0, 1.0, n=4))
    keys = {"popmean": 0.5, "bounds": (0, 1)}
    return Cases(
        examples=(
            Example("ttest_1samp", _first(bounded), {"epsilon": EPS, **keys}, output=summary, neighbours=bounded),
            Example(
                "ttest_1samp gaussian",
                _first(bounded),
                {"epsilon": EPS, "delta": 1e-6, **keys},
                output=summary,
                neighbours=bounded,
            ),
            Example("ttest_1samp_golden", lambda: (_data()["x"],), {"epsilon": 1.0, **keys}, output=summary, seed=84),
        ),
        battery=(((_data()["x"][:40],), {"epsilon": 1.0, **keys}),),
        misdeclared=(("ttest_1samp", halve_noise),),
    )


def ttest_ind() -> Cases:
    keys = {"bounds": (0, 1)}
    return Cases(
        examples=(
            Example(
                "ttest_ind", _first(_two_samples), {"epsilon": EPS, **keys}, output=summary, neighbours=_two_samples
            ),
            Example(
                "ttest_ind_golden",
                lambda: (_data()["x"], _data()["y"]),
                {"epsilon": 1.0, **keys},
                output=summary,
                seed=85,
            ),
        ),
        battery=(((_data()["x"][:30], _data()["y"][:30]), {"epsilon": 1.0, **keys}),),
        misdeclared=(("ttest_ind", halve_noise),),
    )


def f_oneway() -> Cases:
    keys = {"bounds": (0, 1)}
    return Cases(
        examples=(
            Example("f_oneway", _first(_several), {"epsilon": EPS, **keys}, output=summary, neighbours=_several),
            Example(
                "f_oneway_golden",
                lambda: ([_data()["x"], _data()["y"], _data()["z"]],),
                {"epsilon": 1.0, **keys},
                output=summary,
                seed=86,
            ),
        ),
        battery=((([_data()["x"][:20], _data()["y"][:20], _data()["z"][:20]],), {"epsilon": 1.0, **keys}),),
        misdeclared=(("f_oneway", halve_noise),),
    )


def mannwhitneyu() -> Cases:
    return Cases(
        examples=(
            Example("mannwhitneyu", _first(_ranked_two), {"epsilon": EPS}, output=summary, neighbours=_ranked_two),
            Example(
                "mannwhitneyu_golden", lambda: (_data()["x"], _data()["y"]), {"epsilon": 1.0}, output=summary, seed=87
            ),
        ),
        battery=(((_data()["x"][:30], _data()["y"][:30]), {"epsilon": 1.0}),),
        misdeclared=(("mannwhitneyu", halve_noise),),
    )


def kruskal() -> Cases:
    return Cases(
        examples=(
            Example("kruskal", _first(_ranked_several), {"epsilon": EPS}, output=summary, neighbours=_ranked_several),
            Example(
                "kruskal_golden",
                lambda: ([_data()["x"], _data()["y"], _data()["z"]],),
                {"epsilon": 1.0},
                output=summary,
                seed=88,
            ),
        ),
        battery=((([_data()["x"][:20], _data()["y"][:20], _data()["z"][:20]],), {"epsilon": 1.0}),),
        misdeclared=(("kruskal", halve_noise),),
    )
