"""The registry (dpstats.registry): every public release is declared once, with one signature, and every list the
tests and the docs keep is read from it — shown by declaring a toy release and finding it in each of them."""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import _registry as collected
import numpy as np
import pytest

import dpstats as dps
from dpstats import _registry, registry
from dpstats._constraints import UNITS, Data, Delta, privacy
from dpstats._neighbours import HEAVY, neighbours_of_a_unit
from dpstats._registry import Audit, Cases, Example, declare
from dpstats.audit import check_sensitivity
from dpstats.descriptive._cases import ROW_LEVEL, _count_pair, halve_noise

ROOT = Path(__file__).resolve().parents[1]


def _unit_pairs():
    return neighbours_of_a_unit(0.0, 1.0, units=4, max_rows=3)


def toy_cases() -> Cases:
    """The toy's test cases (the registry imports them by the path its declaration gives)."""
    rng = np.random.default_rng(7)
    data = (rng.uniform(0, 1, 30), rng.integers(0, 10, 30))
    return Cases(
        examples=(
            Example("toy_golden", lambda: data, {"epsilon": 1.0, "max_rows": 3}, keywords=("privacy_unit",), seed=1),
            Example(
                "toy units",
                lambda: _unit_pairs()[0][0],
                {"epsilon": 1.0, "max_rows": 3},
                keywords=("privacy_unit",),
                neighbours=_unit_pairs,
                dask=True,
                tags=frozenset({"units"}),
            ),
            Example(
                "toy audit",
                lambda: _count_pair()[0],
                {"epsilon": 1.0, "max_rows": HEAVY},
                keywords=("privacy_unit",),
                audit=Audit(_count_pair, lambda: lambda out: out > 13, 2000, (1, 1), broken=ROW_LEVEL),
            ),
        ),
        battery=(((data[0],), {"epsilon": 1.0}),),
        misdeclared=(("toy units", halve_noise),),
    )


def _toy(x, epsilon, delta=0.0, *, privacy_unit=None, max_rows=None, rng=None, accountant=None):
    """A toy release: the number of records, released as :func:`dpstats.count` releases it."""
    return dps.count.__wrapped__(
        x, epsilon, delta, privacy_unit=privacy_unit, max_rows=max_rows, rng=rng, accountant=accountant
    )


@pytest.fixture
def toy(monkeypatch):
    """The toy declared in a copy of the table (gone after the test)."""
    monkeypatch.setattr(_registry, "_TABLE", dict(_registry._TABLE))
    declare(
        family="descriptive",
        statistic="a toy: the number of records",
        data={"x": Data("records")},
        parameters={**privacy(), **UNITS},
        engines=("numpy", "dask"),
        cases="test_registry:toy_cases",
        name="toy",
    )(_toy)
    return registry.get("toy")


def test_a_toy_release_reaches_every_list_with_its_declaration_alone(toy):
    assert "toy" in registry.releases("descriptive")
    # golden releases
    sys.path.insert(0, str(ROOT / "tests"))
    from golden.releases import releases

    assert "toy_golden" in releases()
    # the sensitivity checker, its Dask runs and the mis-declared variants
    import test_sensitivity

    cases = test_sensitivity._cases()
    assert "toy units" in cases
    assert any(example.label == "toy units" for _, example, _ in collected.misdeclared().values())
    family, mechanism, pairs = cases["toy units"]
    assert all(check_sensitivity(mechanism, a, b).ok for a, b in pairs)
    # the Dask agreement test and the privacy-unit tests
    assert "toy units" in collected.examples("dask")
    assert "toy units" in collected.examples("units")
    assert "toy audit" in collected.examples("audit")  # the declared audits (tests/test_audit.py)
    # the bad-input battery, generated from the declared constraints
    import _battery

    generated = [c for c in _battery.declared_cases() if c.function == "toy"]
    assert any(c.label == "declared: valid base call" for c in generated)
    assert {c.label.split("=")[0] for c in generated} >= {"declared: epsilon", "declared: delta", "declared: rng"}
    # the API reference and the package's layers
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    import pages
    import test_layers

    assert "toy" in pages.api_sections()["dpstats.descriptive"][1]
    assert test_layers._layer("dpstats.descriptive._toy") == test_layers._layer("dpstats.descriptive._moments")


def test_a_misdeclared_toy_is_flagged(toy, monkeypatch):
    """The toy's declared variant (its sensitivity halved) fails the checker: its neighbours have the power."""
    _, mechanism, pairs = __import__("test_sensitivity")._cases()["toy units"]
    halve_noise(monkeypatch)
    flagged = [v for a, b in pairs for v in check_sensitivity(mechanism, a, b).violations]
    assert any("more than its declared sensitivity" in v for v in flagged), flagged


# ----------------------------------------------------------------------------- the declarations themselves


DECLARED = registry.releases()


def test_every_family_declares_its_releases():
    assert set(registry.FAMILIES) >= {d.family for d in DECLARED.values()}
    for family in ("descriptive", "decomposition", "linear_model", "hypothesis"):
        assert registry.releases(family), family


@pytest.mark.parametrize("name", DECLARED)
def test_one_signature(name):
    """data, the statistic's own arguments, epsilon, delta (positional or keyword), then keyword-only options; δ's
    default follows the one rule (0 unless the release needs δ > 0; None where it depends on the method)."""
    declaration = DECLARED[name]
    parameters = inspect.signature(declaration.function).parameters
    positional = [p for p in parameters.values() if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD]
    assert [p.name for p in positional] == [*declaration.data, *declaration.own, "epsilon", "delta"]
    assert parameters["delta"].default == declaration.delta.default
    assert all(
        p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD)
        for p in parameters.values()
        if p not in positional
    )


@pytest.mark.parametrize("name", DECLARED)
def test_every_release_has_test_cases(name):
    """Each declared release has a base call for the battery and a golden call; those that can be charged have
    worst-case neighbours (SN is not private, so it has none)."""
    declaration = DECLARED[name]
    cases = declaration.cases()
    assert cases.battery, name
    assert any(e.seed is not None for e in cases.examples), name


@pytest.mark.parametrize("name", DECLARED)
def test_every_release_is_the_public_name(name):
    """dps.<name>, or for a family reached as a module (dps.preprocessing, dps.hypothesis) dps.<family>.<name>."""
    function = DECLARED[name].function
    assert getattr(dps, name, None) is function or any(
        getattr(module, name, None) is function for module in (dps.preprocessing, dps.hypothesis)
    )


def test_a_delta_a_method_cannot_use_is_refused_never_ignored():
    X = np.random.default_rng(0).uniform(-0.3, 0.3, (50, 3))
    with pytest.raises(dps.ParameterError, match=r"delta must be 0.*method='amin'"):
        dps.covariance(X, 1.0, 1e-6)
    with pytest.raises(dps.ParameterError, match="delta must be 0"):
        dps.pca_ppca(X, 1, 1.0, 1e-6)
    with pytest.raises(dps.ParameterError, match="delta > 0"):
        dps.pca_ag(X, 1.0, 0.0)
    with pytest.warns(DeprecationWarning, match="will be an error in the next release"):
        acc = dps.Accountant(10.0, 1e-3)
        dps.pca(X, 1, 1.0, 1e-6, mechanism="ppca", rng=0, accountant=acc)
    assert acc.ledger[0].delta == 0.0


@pytest.mark.parametrize("name", DECLARED)
def test_epsilon_and_delta_are_accepted_positionally(name):
    """The base call of every release, with ε and δ positional (the one signature)."""
    declaration = DECLARED[name]
    (data, kwargs), *_ = declaration.cases().battery
    kwargs = dict(kwargs)
    own = [kwargs.pop(o) for o in declaration.own]
    epsilon, delta = kwargs.pop("epsilon"), kwargs.pop("delta", declaration.delta.default)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        declaration.function(*data, *own, epsilon, delta, **kwargs, rng=0)


def test_constraints_name_the_parameter_the_value_and_what_is_allowed():
    with pytest.raises(dps.ParameterError, match=r"grid_size must be an integer in \[2, 16777216\]; got 1"):
        dps.quantile([0.1], 0.5, 1.0, bounds=(0, 1), grid_size=1)
    with pytest.raises(dps.ParameterError, match=r"radius_share must be a number with 0 < radius_share < 1; got 1.5"):
        dps.pca(np.zeros((3, 2)), 1, 1.0, norm_bound="private", radius_share=1.5)
    assert str(Delta("approx")) == "0 < delta < 1"


# ----------------------------------------------------------------------------- validate once


def _counting(monkeypatch):
    """Counters of the data readings along a call: conversions of the data to an array (the NumPy engine's
    ``as_array``), readings of the privacy units (``take_units``), the units made canonical (``canonical_ids``), and
    checks of ε (the declared constraint's)."""
    import dpstats._constraints as constraints
    import dpstats._engine as engine
    import dpstats._engine.numpy_engine as numpy_engine
    import dpstats._engine.units as units

    counts = {"as_array": 0, "take_units": 0, "canonical_ids": 0, "check_epsilon": 0}

    def counted(module, name):
        original = getattr(module, name)

        def wrapper(*args, **kwargs):
            counts[name] += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    counted(numpy_engine, "as_array")
    counted(engine, "take_units")
    counted(units, "canonical_ids")
    counted(constraints, "check_epsilon")
    return counts


WALK_X = np.random.default_rng(0).uniform(-0.3, 0.3, (300, 4))
WALK_IDS = np.repeat(np.arange(100), 3)


@pytest.mark.parametrize(
    "label, call, expected",
    [
        ("pca", lambda: dps.pca(WALK_X, 2, 1.0, rng=0), {"as_array": 1, "take_units": 1, "check_epsilon": 1}),
        (
            "pca with a unit",
            lambda: dps.pca(WALK_X, 2, 1.0, privacy_unit=WALK_IDS, max_rows=2, rng=0),
            {"as_array": 1, "take_units": 1, "canonical_ids": 1, "check_epsilon": 1},
        ),
        (
            "pca, private norm bound, unit",
            lambda: dps.pca(40 * WALK_X, 2, 1.0, norm_bound="private", privacy_unit=WALK_IDS, max_rows=2, rng=0),
            {"as_array": 1, "take_units": 1, "canonical_ids": 1, "check_epsilon": 1},
        ),
        (
            "DPPCA.fit",
            lambda: dps.estimators.DPPCA(2, random_state=0).fit(WALK_X),
            {"as_array": 0, "check_epsilon": 1},  # scikit-learn's validation reads X once (then take_units once)
        ),
        (
            "DPPCA.fit with a unit",
            lambda: dps.estimators.DPPCA(2, mechanism="amin", max_rows=2, random_state=0).fit(
                WALK_X, privacy_unit=WALK_IDS
            ),
            {"as_array": 0, "canonical_ids": 1, "check_epsilon": 1},
        ),
        (
            "covariance, dong, unit",
            lambda: dps.covariance(WALK_X, 1.0, method="dong", privacy_unit=WALK_IDS, max_rows=2, rng=0),
            {"as_array": 1, "canonical_ids": 1, "check_epsilon": 1},
        ),
    ],
)
def test_every_path_reads_its_data_and_checks_its_parameters_once(monkeypatch, label, call, expected):
    """Walk the paths the issue names: the data is converted once, the privacy units read and made canonical once,
    ε checked once (the declared constraint), however many floors the call goes through (pca -> the norm bound
    -> the mechanism; DPPCA.fit -> pca -> the mechanism)."""
    counts = _counting(monkeypatch)
    call()
    assert {k: counts[k] for k in expected} == expected, counts
