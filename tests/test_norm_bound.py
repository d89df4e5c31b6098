"""PCA, CCA and covariance without a known norm bound: the private bound, the rescaling, and one ledger entry."""

from __future__ import annotations

import numpy as np
import pytest

import dpstats as dps
from dpstats.accounting import with_pending
from dpstats.accounting.events import Exponential
from dpstats.estimators import DPCCA, DPPCA
from dpstats.exceptions import OutOfBoundsError, ParameterError
from dpstats.preprocessing import RADIUS_SHARE, private_norm_bound, to_unit_rows

RNG = np.random.default_rng(26)
RAW = RNG.normal(size=(20_000, 8)) * np.array([40.0, 25, 10, 5, 2, 1, 1, 1])  # norms in the tens, bound unknown
NORMS = np.linalg.norm(RAW, axis=1)


def test_private_norm_bound_is_near_the_quantile_on_any_scale():
    """The 0.75-quantile (the default) and the 0.9-quantile of the norms, on a log grid: within 2 % (a few dozen
    grid cells of 0.08 %, far wider than the mechanism's rank error of a few/ε rows out of 20000) whatever the scale
    of the data."""
    for scale in (1e-4, 1.0, 1e4):
        bound = private_norm_bound(RAW * scale, 1.0, rng=1)
        assert bound == pytest.approx(np.quantile(NORMS * scale, 0.75), rel=0.02)
        high = private_norm_bound(RAW * scale, 1.0, q=0.9, rng=1)
        assert high == pytest.approx(np.quantile(NORMS * scale, 0.9), rel=0.02)
    median = private_norm_bound(RAW, 1.0, q=0.5, rng=1)
    assert median == pytest.approx(np.quantile(NORMS, 0.5), rel=0.02)


def test_private_norm_bound_takes_zero_rows_and_charges_one_exponential_mechanism():
    acc = dps.Accountant(1.0, 0.0)
    norms = np.concatenate([np.zeros(200), RNG.uniform(0.5, 1.5, 1800)])  # a tenth of the rows are zero
    rows = np.column_stack([norms, np.zeros((2000, 2))])
    bound = private_norm_bound(rows, 0.5, q=0.9, rng=0, accountant=acc)
    assert bound == pytest.approx(np.quantile(norms, 0.9), rel=0.05)
    (entry,) = acc.ledger
    assert entry.events == (Exponential(0.5),)


def test_a_public_norm_bound_divides_the_rows():
    R = 250.0
    np.testing.assert_array_equal(
        dps.pca(RAW, 2, 1.0, norm_bound=R, clip=True, rng=3),
        dps.pca(dps.preprocessing.clip_rows(RAW, R) * (1.0 / R), 2, 1.0, rng=3),
    )
    estimate = dps.covariance_dong(RAW, 1.0, 1e-6, norm_bound=R, clip=True, rng=3)
    np.testing.assert_allclose(
        estimate, dps.covariance_dong(dps.preprocessing.clip_rows(RAW, R) * (1.0 / R), 1.0, 1e-6, rng=3) * R**2
    )
    with pytest.raises(OutOfBoundsError, match="norm > 10"):
        dps.pca(RAW, 2, 1.0, norm_bound=10.0)  # rows above a public bound raise, as at 1


@pytest.mark.parametrize("mechanism", ["ag", "ppm", "dong"])
def test_pca_on_raw_data_with_a_private_bound(mechanism):
    """Unscaled data: the default raises and names the way out; norm_bound='private' works, with the whole ε on
    the ledger as one entry (the bound's exponential mechanism and the mechanism's events), and the subspace is
    as good as with the bound known in advance."""
    with pytest.raises(OutOfBoundsError, match="norm_bound='private'"):
        dps.pca(RAW, 2, 1.0, mechanism=mechanism)
    acc = dps.Accountant(1.0, 1e-6, composition="basic")
    V = dps.pca(RAW, 2, 1.0, 1e-6, mechanism=mechanism, norm_bound="private", rng=2, accountant=acc)
    (entry,) = acc.ledger
    bound = entry.events[0]
    assert isinstance(bound, Exponential) and bound.epsilon == pytest.approx(RADIUS_SHARE)
    assert entry.note.startswith("norm bound: private")
    assert entry.epsilon <= 1.0
    assert dps.metrics.captured_energy(RAW, V) > 90


def test_the_bound_is_charged_only_with_the_release():
    """A mechanism that refuses its input after the bound was drawn, or a budget that cannot take both: nothing is
    recorded and nothing is released."""
    acc = dps.Accountant(1.0, 1e-6)
    with pytest.raises(ParameterError, match="n_iter"):
        dps.pca(RAW, 2, 1.0, mechanism="ppm", n_iter=0, norm_bound="private", rng=0, accountant=acc)
    with pytest.raises(ParameterError, match="sampler"):
        dps.pca(RAW, 2, 1.0, mechanism="ppca", sampler="x", norm_bound="private", rng=0, accountant=acc)
    assert acc.ledger == []
    small = dps.Accountant(0.5, 1e-6)
    with pytest.raises(dps.BudgetExceededError):
        dps.pca(RAW, 2, 1.0, norm_bound="private", rng=0, accountant=small)
    assert small.ledger == []


def test_with_pending_adds_the_owed_events_to_the_first_charge_only():
    acc = dps.Accountant(5.0, 1e-6, composition="basic")
    owed = with_pending(acc, [Exponential(0.25)], note="first")
    dps.mean([0.5], 1.0, bounds=(0, 1), rng=0, accountant=owed)
    dps.mean([0.5], 1.0, bounds=(0, 1), rng=0, accountant=owed)
    first, second = acc.ledger
    assert first.epsilon == 1.25 and first.note.startswith("first") and second.epsilon == 1.0
    assert with_pending(None, [Exponential(1.0)]) is None
    with pytest.raises(ParameterError, match="events"):
        with_pending(acc, [0.5])


def test_cca_with_a_bound_works_in_the_data_units():
    Y = RAW[:, :2] + RNG.normal(size=(RAW.shape[0], 2))
    res = dps.cca(RAW[:, 2:], Y, 1, 1.0, 1e-6, norm_bound="private", rng=5)
    Z = np.hstack([RAW[:, 2:], Y])
    clipped = dps.preprocessing.clip_rows(Z, np.quantile(np.linalg.norm(Z, axis=1), 0.75))  # about the private bound
    expected = clipped.T @ clipped / Z.shape[0]
    assert np.linalg.norm(res.C_hat - expected) < 0.05 * np.linalg.norm(expected)  # in the data's units
    U = res.U
    Cxx = res.C_hat[:6, :6]
    w, Q = np.linalg.eigh(Cxx)
    floored = (Q * np.maximum(w, res.ridge)) @ Q.T
    np.testing.assert_allclose(U.T @ floored @ U, np.eye(1), rtol=1e-6)  # directions for the rows as given


def test_estimators_take_a_norm_bound():
    acc = dps.Accountant(2.0, 1e-6)
    pca = DPPCA(2, norm_bound="private", accountant=acc, random_state=0).fit(RAW)
    assert pca.components_.shape == (2, 8) and len(acc.ledger) == 1
    cca = DPCCA(1, norm_bound="private", accountant=acc, random_state=0).fit(RAW[:, :4], RAW[:, 4:])
    assert cca.x_weights_.shape == (4, 1) and len(acc.ledger) == 2
    with pytest.raises(OutOfBoundsError, match="norm_bound='private'"):
        DPPCA(2).fit(RAW)


def test_sn_refuses_a_private_bound_and_bad_bounds_are_named():
    with pytest.raises(ParameterError, match="not differentially private"):
        dps.pca(RAW, 2, 1.0, mechanism="sn", norm_bound="private")
    for bad in ("privat", 0.0, -1.0, np.nan, True):
        with pytest.raises(ParameterError, match="norm_bound"):
            dps.pca(RAW, 2, 1.0, norm_bound=bad)
    for share in (0.0, 1.0, -0.1, np.nan, "0.1"):
        with pytest.raises(ParameterError, match="radius_share"):
            dps.pca(RAW, 2, 1.0, norm_bound="private", radius_share=share)
    for q in (0.0, 1.5, np.nan, "0.9"):
        with pytest.raises(ParameterError, match="q must"):
            private_norm_bound(RAW, 1.0, q=q)
    for bounds in ((0.0, 10.0), (5.0, 1.0), (1.0,), None):
        with pytest.raises(ParameterError, match="bounds"):
            private_norm_bound(RAW, 1.0, bounds=bounds)


def test_units_take_the_quantile_at_the_unit_level():
    ids = np.arange(RAW.shape[0]) // 4
    acc = dps.Accountant(1.0, 1e-6)
    rows = to_unit_rows(RAW, "private", 1.0, privacy_unit=ids, max_rows=4, rng=np.random.default_rng(0), accountant=acc)
    assert rows.radius == pytest.approx(np.quantile(NORMS, 0.75), rel=0.05)
    V = dps.pca(RAW, 2, 1.0, norm_bound="private", privacy_unit=ids, max_rows=4, rng=0, accountant=acc)
    assert V.shape == (8, 2) and "privacy unit" in acc.ledger[0].note
