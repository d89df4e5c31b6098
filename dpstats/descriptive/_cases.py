"""The test cases of the descriptive releases (their test factories, read through :mod:`dpstats.registry`).

Each function returns the :class:`~dpstats._registry.Cases` of one release: its golden calls (seeds recorded in
``tests/golden/releases.json``), its worst-case neighbours for the sensitivity checker, its Dask agreement calls,
its privacy-unit calls, its bad-input base calls and the patch that halves its declared sensitivity. Imported only
by the tests.
"""

from __future__ import annotations

import numpy as np

from .. import _examples as ex
from .._neighbours import (
    HEAVY,
    heavy_ids,
    heavy_values,
    labels_changed,
    neighbours_at_bounds,
    neighbours_of_a_unit,
    rows_moved_between_keys,
    selected_rows,
    units_moved_between_keys,
)
from .._registry import Audit, Cases, Example

EPS, DELTA = 1.0, 1e-6
UNITS = frozenset({"units"})
GROUPS, UNIT_GROUPS = ["a", "b", "c"], ["a", "b", "c", "d"]


# ----------------------------------------------------------------------------- data and neighbours


def _pairs(pairs):
    """Neighbour pairs of single arrays as pairs of one-element data tuples."""
    return [((a,), (b,)) for a, b in pairs]


def _at_bounds(lower=0.0, upper=1.0, n: int = 4):
    return lambda: _pairs(neighbours_at_bounds(lower, upper, n=n))


def _first(pairs):
    """The data of the first neighbour pair (a zero-argument function of a pairs factory)."""
    return lambda: pairs()[0][0]


def _one_unit():
    """(values, ids) of four units, unit 0 with three rows, its rows moved between the bounds (max_rows=3)."""
    return neighbours_of_a_unit(0.0, 1.0, units=4, max_rows=3)


def _interval(result):
    """An Estimate as the numbers a golden release records: the estimate and the interval's ends."""
    return [float(result.estimate), *(float(v) for v in result.ci)]


def _golden(*names):
    return lambda: tuple(getattr(ex.golden(), n) for n in names)


def _golden_units(values, units):
    return lambda: (getattr(ex.golden(), values), getattr(ex.golden_units(), units))


def _streamed(transform=lambda s: s.x):
    return lambda: (transform(ex.streamed()),)


def _unit_values():
    return (ex.unit_data().values, ex.unit_data().ids)


def _visits(*columns):
    """Columns of the visits table (``"*"``: the whole table, ``"lazy"``: it as a dask DataFrame)."""

    def data():
        visits = ex.visits()
        picked = []
        for c in columns:
            if c == "*":
                picked.append(visits)
            elif c == "lazy":
                import dask.dataframe as dd

                picked.append(dd.from_pandas(visits, npartitions=3))
            elif isinstance(c, list):
                picked.append(visits[c])
            else:
                picked.append(visits[c].to_numpy())
        return tuple(picked)

    return data


def _lazy_x(chunks: int = 61):
    def data():
        import dask.array as da

        return (da.from_array(ex.golden().x, chunks=chunks),)

    return data


def _counts(result):
    return result[0]


def _array(result):
    return np.array(result)


# ----------------------------------------------------------------------------- audits

#: The unit-level audits' variant: the same call without its unit (calibrated as if each row were a person), whose
#: true privacy loss on the heavy unit's HEAVY rows is about HEAVY times ε.
ROW_LEVEL = {"privacy_unit": None, "max_rows": None}


def _one(value):
    return (np.array(value, dtype=float),)


def _single(a, b):
    """A pair of one-array data tuples."""
    return lambda: (_one(a), _one(b))


def _threshold(value, index=None):
    """The event ``output > value`` (of ``output[index]`` when given)."""
    return lambda: lambda out: (out if index is None else out[index]) > value


def _heavy_pair(heavy, others=0.5):
    """The heavy unit's rows at 0 versus at ``heavy`` (the others at ``others``), with their identifiers."""
    return lambda: ((heavy_values(0.0, others), heavy_ids()), (heavy_values(heavy, others), heavy_ids()))


def _unit_audit(label: str, kwargs: dict, event, *, others=0.5, output=None) -> Example:
    """A unit-level audit: the heavy unit's HEAVY rows at 0 versus at 1; the row-level variant must be flagged."""
    return Example(
        label,
        lambda: _heavy_pair(1.0, others)()[0],
        {**kwargs, "max_rows": HEAVY},
        keywords=("privacy_unit",),
        output=output,
        audit=Audit(_heavy_pair(1.0, others), event, 6000, (7, 7), broken=ROW_LEVEL),
    )


def _count_pair():
    """The heavy unit's rows disappear but one (a unit keeps at least one row): the count moves by HEAVY − 1."""
    few, ids_few = np.r_[np.zeros(1), [0.5, 0.5, 0.5]], np.r_[0, np.arange(1, 4)]
    return (heavy_values(0.0), heavy_ids()), (few, ids_few)


def _variance_event():
    return lambda out: out > np.var(heavy_values(1.0, 0.0)) / 2  # halfway between it and the variance 0 of zeros


# ----------------------------------------------------------------------------- mis-declared variants


def halve_noise(monkeypatch):
    """Halve every sensitivity the release path gives make_noise (the noise and its declaration alike)."""
    import dpstats._release as path
    from dpstats.noise.release import make_noise

    def halved(*args, **kwargs):
        kwargs["sensitivity"] = kwargs["sensitivity"] / 2
        return make_noise(*args, **kwargs)

    monkeypatch.setattr(path, "make_noise", halved)


def halve_groups(monkeypatch):
    """Halve the sensitivity over keys of every grouped statistic (``_grouped.moved``)."""
    from . import _grouped as groups

    moved = groups.moved
    monkeypatch.setattr(groups, "moved", lambda *args: moved(*args) / 2)


def halve_scores(monkeypatch):
    """Halve the quantile utility's declared sensitivity."""
    from . import _quantiles

    monkeypatch.setattr(_quantiles, "_score_sensitivity", lambda *args: 0.5)


# ----------------------------------------------------------------------------- shared families of examples


def _battery(**kwargs):
    """The bad-input battery's base call: 40 values in [0.05, 0.95] (each argument is then replaced by bad ones)."""
    import numpy as np

    return (((np.linspace(0.05, 0.95, 40),), {"epsilon": 1.0, **kwargs}),)


#: The visits table's grouping by page with at most 2 rows of each person in at most 3 pages.
_PEOPLE = {"by": "page", "privacy_unit": "person", "max_rows": 2, "max_groups": 3}
_VISIT_BOUNDS = {"seconds": (0, 120), "clicks": (0, 10)}


def _grouped(name: str) -> list[Example]:
    """The group-by worst cases of ``name`` (count, sum or mean): rows moved between public keys; units moved with
    one or two keys each; keys selected privately."""
    bounds = {} if name == "count" else {"bounds": (0, 1)}
    one, two = (lambda: units_moved_between_keys(1)), (lambda: units_moved_between_keys(2))
    found = [
        Example(
            f"{name} by",
            _first(rows_moved_between_keys),
            {"epsilon": EPS, **bounds, "categories": GROUPS},
            keywords=("by",),
            neighbours=rows_moved_between_keys,
        ),
        Example(
            f"{name} by units",
            _first(one),
            {"epsilon": EPS, **bounds, "categories": UNIT_GROUPS, "max_rows": 2, "max_groups": 1},
            keywords=("by", "privacy_unit"),
            neighbours=one,
        ),
    ]
    if name == "count":
        found += [
            Example(
                "count by units, 2 groups",
                _first(two),
                {"epsilon": EPS, "categories": UNIT_GROUPS, "max_rows": 2, "max_groups": 2},
                keywords=("by", "privacy_unit"),
                neighbours=two,
            ),
            Example(
                "count by selected",
                _first(lambda: selected_rows(units=False)),
                {"epsilon": 30.0, "delta": 0.1},
                keywords=("by",),
                neighbours=lambda: selected_rows(units=False),
            ),
        ]
    if name == "sum":
        found += [
            Example(
                "sum by units, 2 groups gaussian",
                _first(two),
                {"epsilon": EPS, "delta": DELTA, "bounds": (0, 1), "categories": UNIT_GROUPS, "max_rows": 2},
                keywords=("by", "privacy_unit"),
                neighbours=two,
            ),
            Example(
                "sum by selected units, weighted",
                _first(selected_rows),
                {
                    "epsilon": 30.0,
                    "delta": 0.1,
                    "bounds": (0, 1),
                    "max_rows": 1,
                    "max_groups": 2,
                    "selection": "weighted",
                },
                keywords=("by", "privacy_unit"),
                neighbours=selected_rows,
            ),
        ]
    if name == "mean":
        found += [
            Example(
                "mean by gaussian",
                _first(rows_moved_between_keys),
                {"epsilon": EPS, "delta": DELTA, "bounds": (0, 1), "categories": GROUPS},
                keywords=("by",),
                neighbours=rows_moved_between_keys,
            ),
            Example(
                "mean by units, any groups",
                _first(one),
                {"epsilon": EPS, "bounds": (0, 1), "categories": UNIT_GROUPS, "max_rows": 2},
                keywords=("by", "privacy_unit"),
                neighbours=one,
            ),
            Example(
                "mean by selected units",
                _first(selected_rows),
                {"epsilon": 30.0, "delta": 0.1, "bounds": (0, 1), "max_rows": 1, "max_groups": 1},
                keywords=("by", "privacy_unit"),
                neighbours=selected_rows,
            ),
        ]
    return found


# ----------------------------------------------------------------------------- the releases


def mean() -> Cases:
    return Cases(
        examples=(
            Example(
                "mean", _first(_at_bounds()), {"epsilon": EPS, "bounds": (0, 1)}, neighbours=_at_bounds(), dask=True
            ),
            Example(
                "mean gaussian",
                _first(_at_bounds()),
                {"epsilon": EPS, "delta": DELTA, "bounds": (0, 1)},
                neighbours=_at_bounds(),
            ),
            Example(
                "mean per column",
                _first(_at_bounds([0, 0], [1, 10])),
                {"epsilon": EPS, "bounds": ([0, 0], [1, 10]), "axis": 0},
                neighbours=_at_bounds([0, 0], [1, 10]),
            ),
            Example(
                "mean weighted",
                _first(_at_bounds([0, 0], [1, 10])),
                {"epsilon": EPS, "bounds": ([0, 0], [1, 10]), "axis": 0, "weights": [1, 2]},
                neighbours=_at_bounds([0, 0], [1, 10]),
            ),
            Example(
                "mean float noise",
                _first(_at_bounds()),
                {"epsilon": EPS, "bounds": (0, 1), "noise": "float"},
                neighbours=_at_bounds(),
            ),
            Example(
                "mean units",
                _first(_one_unit),
                {"epsilon": EPS, "bounds": (0, 1), "max_rows": 3},
                keywords=("privacy_unit",),
                neighbours=_one_unit,
            ),
            Example(
                "mean ci", _first(_at_bounds()), {"epsilon": EPS, "bounds": (0, 1), "ci": 0.95}, neighbours=_at_bounds()
            ),
            Example(
                "mean ci gaussian",
                _first(_at_bounds()),
                {"epsilon": EPS, "delta": DELTA, "bounds": (0, 1), "ci": 0.9},
                neighbours=_at_bounds(),
            ),
            Example(
                "mean ci units",
                _first(_one_unit),
                {"epsilon": EPS, "bounds": (0, 1), "max_rows": 3, "ci": 0.95},
                keywords=("privacy_unit",),
                neighbours=_one_unit,
            ),
            Example("mean_ci", _golden("x"), {"epsilon": 1.0, "bounds": (0, 1), "ci": 0.95}, output=_interval, seed=90),
            Example(
                "mean_ci_units",
                _golden_units("x", "x"),
                {"epsilon": 1.0, "bounds": (0, 1), "max_rows": 3, "ci": 0.95},
                keywords=("privacy_unit",),
                output=_interval,
                seed=91,
            ),
            *_grouped("mean"),
            Example("mean_laplace", _golden("x"), {"epsilon": 1.0, "bounds": (0, 1)}, seed=1),
            Example("mean_gauss", _golden("x"), {"epsilon": 1.0, "delta": 1e-6, "bounds": (0, 1)}, seed=2),
            Example("mean_axis", _golden("M"), {"epsilon": 1.0, "bounds": (0, [1, 10, 100]), "axis": 0}, seed=3),
            Example(
                "mean_weights",
                lambda: (ex.frame(),),
                {
                    "epsilon": 1.0,
                    "bounds": {"age": (0, 1), "height": (0, 10), "income": (0, 100)},
                    "weights": {"age": 1, "height": 2, "income": 1},
                },
                seed=4,
            ),
            Example("mean_float", _golden("x"), {"epsilon": 1.0, "bounds": (0, 1), "noise": "float"}, seed=5),
            Example(
                "mean_clip", lambda: (2 * ex.golden().x,), {"epsilon": 1.0, "bounds": (0, 1), "clip": True}, seed=6
            ),
            Example(
                "mean_units",
                _golden_units("x", "x"),
                {"epsilon": 1.0, "bounds": (0, 1), "max_rows": 3},
                keywords=("privacy_unit",),
                seed=60,
            ),
            Example("dask_mean", _lazy_x(), {"epsilon": 1.0, "bounds": (0, 1)}, seed=50),
            Example(
                "mean_by_units",
                _visits("*"),
                {"epsilon": 1.0, "delta": 1e-6, "bounds": _VISIT_BOUNDS, **_PEOPLE},
                seed=75,
            ),
            Example(
                "mean_by_rows_per_unit",
                _visits("seconds", "page", "person"),
                {"epsilon": 1.0, "delta": 1e-6, "bounds": (0, 120), "max_rows": 3},
                keywords=("by", "privacy_unit"),
                seed=76,
            ),
            Example(
                "dask_mean_by_units",
                _visits("lazy"),
                {"epsilon": 1.0, "delta": 1e-6, "bounds": _VISIT_BOUNDS, **_PEOPLE},
                seed=75,
            ),
            Example("mean streamed", _streamed(), {"epsilon": 1.0, "bounds": (0, 1)}, dask=True),
            Example(
                "mean gaussian axis 0",
                _streamed(lambda s: s.X),
                {"epsilon": 1.0, "delta": 1e-6, "bounds": (-1, 1), "axis": 0},
                dask=True,
            ),
            Example(
                "mean axis 1", _streamed(lambda s: s.X.T), {"epsilon": 1.0, "bounds": (-1, 1), "axis": 1}, dask=True
            ),
            Example(
                "mean of units",
                _unit_values,
                {"epsilon": 1.0, "bounds": (0, 10), "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            Example(
                "mean audit",
                lambda: _one([0.0]),
                {"epsilon": 1.0, "bounds": (0, 1)},
                audit=Audit(_single([0.0], [1.0]), _threshold(1.0), 20_000, (1, 2)),
            ),
            Example(
                "mean gaussian audit",
                lambda: _one([0.0]),
                {"epsilon": 1.0, "delta": 1e-3, "bounds": (0, 1)},
                audit=Audit(_single([0.0], [1.0]), _threshold(1.5), 20_000, (4, 5), delta=1e-3),
            ),
            # halfway between the noiseless means 1.5/19 and 17.5/19
            _unit_audit("mean unit audit", {"epsilon": 1.0, "bounds": (0, 1)}, _threshold(0.5)),
        ),
        battery=_battery(bounds=(0, 1)),
        misdeclared=(("mean", halve_noise), ("mean by", halve_groups), ("mean by selected units", halve_groups)),
    )


def variance() -> Cases:
    return Cases(
        examples=(
            Example(
                "variance", _first(_at_bounds()), {"epsilon": EPS, "bounds": (0, 1)}, neighbours=_at_bounds(), dask=True
            ),
            Example(
                "variance gaussian",
                _first(_at_bounds()),
                {"epsilon": EPS, "delta": DELTA, "bounds": (0, 1)},
                neighbours=_at_bounds(),
            ),
            Example(
                "variance units",
                _first(_one_unit),
                {"epsilon": EPS, "bounds": (0, 1), "max_rows": 3},
                keywords=("privacy_unit",),
                neighbours=_one_unit,
            ),
            Example(
                "variance ci",
                _first(_at_bounds()),
                {"epsilon": EPS, "bounds": (0, 1), "ci": 0.95},
                neighbours=_at_bounds(),
            ),
            Example(
                "variance_ci", _golden("x"), {"epsilon": 1.0, "bounds": (0, 1), "ci": 0.95}, output=_interval, seed=92
            ),
            Example("variance_laplace", _golden("x"), {"epsilon": 1.0, "bounds": (0, 1)}, seed=7),
            Example(
                "variance_gauss",
                _golden("M"),
                {"epsilon": 2.0, "delta": 1e-6, "bounds": (0, [1, 10, 100]), "axis": 0},
                seed=8,
            ),
            Example(
                "variance_units",
                _golden_units("M", "M"),
                {"epsilon": 1.0, "delta": 1e-6, "bounds": (0, [1, 10, 100]), "axis": 0, "max_rows": 2},
                keywords=("privacy_unit",),
                seed=61,
            ),
            Example("dask_variance", _lazy_x(), {"epsilon": 1.0, "delta": 1e-6, "bounds": (0, 1)}, seed=51),
            Example(
                "variance_by_weights",
                _visits("*"),
                {
                    "epsilon": 1.0,
                    "delta": 1e-6,
                    "bounds": _VISIT_BOUNDS,
                    "weights": {"seconds": 1, "clicks": 2},
                    **_PEOPLE,
                },
                seed=77,
            ),
            Example("variance streamed", _streamed(), {"epsilon": 1.0, "bounds": (0, 1)}, dask=True),
            Example(
                "variance axis 0",
                _streamed(lambda s: s.X),
                {"epsilon": 1.0, "delta": 1e-6, "bounds": (-1, 1), "axis": 0, "clip": True},
                dask=True,
            ),
            Example(
                "variance of units",
                _unit_values,
                {"epsilon": 1.0, "bounds": (0, 10), "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            Example(
                "variance audit",
                lambda: _one([0.0, 0.0]),
                {"epsilon": 1.0, "bounds": (0, 1)},
                audit=Audit(_single([0.0, 0.0], [0.0, 1.0]), _threshold(0.25), 20_000, (2, 3)),
            ),
            _unit_audit("variance unit audit", {"epsilon": 1.0, "bounds": (0, 1)}, _variance_event, others=0.0),
        ),
        battery=_battery(bounds=(0, 1)),
    )


def sum() -> Cases:  # noqa: A001 (the release's name)
    return Cases(
        examples=(
            Example("sum", _first(_at_bounds()), {"epsilon": EPS, "bounds": (0, 1)}, neighbours=_at_bounds()),
            Example(
                "sum units",
                _first(_one_unit),
                {"epsilon": EPS, "bounds": (0, 1), "max_rows": 3},
                keywords=("privacy_unit",),
                neighbours=_one_unit,
            ),
            *_grouped("sum"),
            Example(
                "sum_units",
                _golden_units("x", "x"),
                {"epsilon": 1.0, "bounds": (0, 1), "max_rows": 3},
                keywords=("privacy_unit",),
                seed=62,
            ),
            Example(
                "sum_by_categories",
                _visits(["page", "seconds"]),
                {"epsilon": 1.0, "by": "page", "categories": sorted(set(ex.visits()["page"])), "bounds": (0, 120)},
                seed=74,
            ),
            Example(
                "sum of units",
                _unit_values,
                {"epsilon": 1.0, "bounds": (0, 10), "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            # halfway between the sums 1.5 and 17.5
            _unit_audit("sum unit audit", {"epsilon": 1.0, "bounds": (0, 1)}, _threshold(9.5)),
        ),
        battery=_battery(bounds=(0, 1)),
    )


def count() -> Cases:
    return Cases(
        examples=(
            Example(
                "count units",
                _first(_one_unit),
                {"epsilon": EPS, "max_rows": 3},
                keywords=("privacy_unit",),
                neighbours=_one_unit,
            ),
            *_grouped("count"),
            Example(
                "count_units",
                _golden_units("x", "x"),
                {"epsilon": 1.0, "max_rows": 3},
                keywords=("privacy_unit",),
                seed=63,
            ),
            Example("count_by_units", _visits("*"), {"epsilon": 1.0, "delta": 1e-6, **_PEOPLE}, seed=73),
            Example(
                "count of units", _unit_values, {"epsilon": 1.0, "max_rows": 5}, keywords=("privacy_unit",), tags=UNITS
            ),
            Example(
                "count unit audit",
                lambda: _count_pair()[0],
                {"epsilon": 1.0, "max_rows": HEAVY},
                keywords=("privacy_unit",),
                audit=Audit(_count_pair, _threshold((HEAVY + 3 + 4) / 2), 6000, (8, 8), broken=ROW_LEVEL),
            ),
        ),
        battery=(((_unit_values()[0],), {"epsilon": 1.0, "privacy_unit": _unit_values()[1], "max_rows": 2}),),
        misdeclared=(("count by units, 2 groups", halve_groups),),
    )


def histogram() -> Cases:
    keys = {"epsilon": 1.0, "delta": 1e-6}
    return Cases(
        examples=(
            Example(
                "histogram",
                _first(_at_bounds()),
                {"epsilon": EPS, "bins": 4, "range": (0, 1)},
                output=_counts,
                neighbours=_at_bounds(),
                dask=True,
            ),
            Example(
                "histogram gaussian",
                _first(_at_bounds()),
                {"epsilon": EPS, "delta": DELTA, "bins": 4, "range": (0, 1)},
                output=_counts,
                neighbours=_at_bounds(),
            ),
            Example(
                "histogram categories",
                _first(labels_changed),
                {"epsilon": EPS, "categories": ["a", "b"], "other": "o"},
                output=_counts,
                neighbours=labels_changed,
            ),
            Example(
                "histogram units",
                _first(_one_unit),
                {"epsilon": EPS, "bins": 4, "range": (0, 1), "max_rows": 3},
                keywords=("privacy_unit",),
                output=_counts,
                neighbours=_one_unit,
            ),
            Example("histogram_numeric", _golden("x"), {"epsilon": 1.0, "bins": 7, "range": (0, 1)}, seed=9),
            Example(
                "histogram_gauss", _golden("x"), {"epsilon": 1.0, "delta": 1e-6, "bins": 5, "range": (0, 1)}, seed=10
            ),
            Example(
                "histogram_categorical",
                _golden("words"),
                {"epsilon": 1.0, "categories": ["a", "b", "c"], "other": "o"},
                seed=11,
            ),
            Example(
                "histogram_units",
                _golden_units("words", "M"),
                {"epsilon": 1.0, "categories": ["a", "b", "c"], "other": "o", "max_rows": 2},
                keywords=("privacy_unit",),
                seed=64,
            ),
            Example("dask_histogram", _lazy_x(), {"epsilon": 1.0, "bins": 7, "range": (0, 1)}, seed=52),
            Example("histogram_keys", _visits("page"), keys, seed=70),
            Example(
                "histogram_keys_units",
                _visits("page", "person"),
                {**keys, "max_rows": 1, "max_groups": 3},
                keywords=("privacy_unit",),
                seed=71,
            ),
            Example("histogram_keys_gaussian", _visits("page"), {**keys, "selection": "gaussian"}, seed=72),
            Example(
                "histogram_keys_rows_per_unit",
                _visits("page", "person"),
                {**keys, "max_rows": 2},
                keywords=("privacy_unit",),
                seed=79,
            ),
            Example(
                "histogram streamed",
                _streamed(),
                {"epsilon": 1.0, "bins": 7, "range": (0, 1)},
                output=_counts,
                dask=True,
            ),
            Example(
                "histogram of units",
                _unit_values,
                {"epsilon": 1.0, "bins": 5, "range": (0, 10), "max_rows": 5},
                keywords=("privacy_unit",),
                output=_counts,
                tags=UNITS,
            ),
            Example(
                "histogram categories of units",
                lambda: (ex.unit_data().labels, ex.unit_data().ids),
                {"epsilon": 1.0, "categories": ["a", "b", "c"], "max_rows": 5},
                keywords=("privacy_unit",),
                output=_counts,
                tags=UNITS,
            ),
            Example(
                "histogram audit",
                lambda: _one([0.2]),
                {"epsilon": 1.0, "bins": 2, "range": (0, 1)},
                output=_counts,
                audit=Audit(_single([0.2], [0.8]), lambda: lambda out: out[0] - out[1] > 2.0, 20_000, (3, 4)),
            ),
            _unit_audit(
                "histogram unit audit",
                {"epsilon": 1.0, "bins": 2, "range": (0, 1)},
                lambda: lambda out: out[1] - out[0] > 3.0,  # halfway between 3 − 16 and 19 − 0
                output=_counts,
            ),
        ),
        battery=_battery(range=(0, 1)),
        misdeclared=(("histogram", halve_noise),),
    )


def quantile() -> Cases:
    return Cases(
        examples=(
            Example(
                "quantile",
                _first(_at_bounds()),
                {"q": 0.5, "epsilon": EPS, "bounds": (0, 1), "grid_size": 256},
                neighbours=_at_bounds(),
            ),
            Example(
                "quantile units",
                _first(_one_unit),
                {"q": 0.5, "epsilon": EPS, "bounds": (0, 1), "grid_size": 256, "max_rows": 3},
                keywords=("privacy_unit",),
                neighbours=_one_unit,
            ),
            Example(
                "quantiles (joint)",
                _first(_at_bounds()),
                {"q": [0.25, 0.75], "epsilon": EPS, "bounds": (0, 1), "grid_size": 64},
                neighbours=_at_bounds(),
            ),
            Example(
                "quantile ci",
                _first(_at_bounds()),
                {"q": 0.5, "epsilon": EPS, "bounds": (0, 1), "grid_size": 256, "ci": 0.95},
                neighbours=_at_bounds(),
            ),
            Example(
                "quantile_ci",
                _golden("x"),
                {"q": 0.5, "epsilon": 1.0, "bounds": (0, 1), "ci": 0.95},
                output=_interval,
                seed=93,
            ),
            Example("quantile", _golden("x"), {"q": 0.5, "epsilon": 1.0, "bounds": (0, 1)}, seed=12),
            Example("quantiles", _golden("x"), {"q": [0.1, 0.9], "epsilon": 1.0, "bounds": (0, 1)}, seed=13),
            Example(
                "quantile_frame",
                lambda: (ex.frame(),),
                {"q": [0.5, 0.9], "epsilon": 1.0, "bounds": {"age": (0, 1), "height": (0, 10), "income": (0, 100)}},
                seed=15,
            ),
            Example(
                "quantile_units",
                _golden_units("x", "x"),
                {"q": 0.5, "epsilon": 1.0, "bounds": (0, 1), "max_rows": 3},
                keywords=("privacy_unit",),
                seed=65,
            ),
            Example(
                "quantile_by",
                _visits("seconds", "page"),
                {"q": 0.5, "epsilon": 1.0, "delta": 1e-6, "bounds": (0, 120)},
                keywords=("by",),
                seed=78,
            ),
            Example(
                "quantile of units",
                _unit_values,
                {"q": 0.5, "epsilon": 1.0, "bounds": (0, 10), "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            _unit_audit(
                "quantile unit audit",
                {"q": 0.5, "epsilon": 1.0, "bounds": (0, 1), "grid_size": 64},
                _threshold(0.75),  # the medians are 0 and 1
            ),
        ),
        battery=_battery(q=0.5, bounds=(0, 1)),
        misdeclared=(("quantile", halve_scores),),
    )


def private_bounds() -> Cases:
    return Cases(
        examples=(
            Example(
                "private_bounds",
                _first(_at_bounds()),
                {"epsilon": EPS, "range": (0, 1), "scale": "linear", "grid_size": 256},
                neighbours=_at_bounds(),
            ),
            Example("private_bounds", lambda: (100 * ex.golden().x,), {"epsilon": 1.0, "range": (1e-3, 1e4)}, seed=14),
            Example(
                "private_bounds of units",
                _unit_values,
                {"epsilon": 1.0, "range": (0.01, 1e3), "clip": True, "max_rows": 5},
                keywords=("privacy_unit",),
                output=_array,
                tags=UNITS,
            ),
        ),
        battery=_battery(range=(0, 1)),
    )


def private_norm_bound() -> Cases:
    return Cases(
        examples=(
            Example("private_norm_bound", _golden("M"), {"epsilon": 1.0}, seed=75),
            Example("private_norm_bound streamed", _streamed(lambda s: s.X), {"epsilon": 1.0}, dask=True),
            Example(
                "private_norm_bound of units",
                lambda: (ex.unit_data().X, ex.unit_data().ids),
                {"epsilon": 1.0, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            # two rows of norms 2^-8 and 2^8 versus 2^-8 and 2^-6: the median's best grid points lie between the two
            # norms (16 versus 2 of the 40 octaves of the log grid), the others e^{-ε/2} times less likely
            Example(
                "private_norm_bound audit",
                lambda: (np.array([[2.0**-8], [2.0**8]]),),
                {"epsilon": 1.0, "q": 0.5},
                audit=Audit(
                    lambda: ((np.array([[2.0**-8], [2.0**8]]),), (np.array([[2.0**-8], [2.0**-6]]),)),
                    _threshold(2.0**-5),
                    1000,
                    (61, 62),
                ),
            ),
        ),
        battery=(((ex.unit_data().X,), {"epsilon": 1.0}),),
    )
