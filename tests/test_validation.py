"""The bad-input matrix: every invalid argument raises a ValueError naming the parameter."""

import numpy as np
import pytest

import dpstats as dps
from dpstats.exceptions import DataValidationError, OutOfBoundsError, ParameterError

X = np.array([0.1, 0.4, 0.8])


def _mean(**kw):
    args = dict(x=X, epsilon=1.0, delta=0.0, bounds=(0, 1), rng=0)
    args.update(kw)
    return dps.mean(**args)


def _variance(**kw):
    args = dict(x=X, epsilon=1.0, delta=0.0, bounds=(0, 1), rng=0)
    args.update(kw)
    return dps.variance(**args)


def _histogram(**kw):
    args = dict(x=X, epsilon=1.0, delta=0.0, range=(0, 1), rng=0)
    args.update(kw)
    if "bounds" in args:
        args["range"] = args.pop("bounds")
    return dps.histogram(**args)


MECHANISMS = [_mean, _variance, _histogram]


@pytest.mark.parametrize("mech", MECHANISMS)
@pytest.mark.parametrize("eps", [0, -1, np.nan, np.inf, "1", True])
def test_bad_epsilon(mech, eps):
    with pytest.raises(ParameterError, match="epsilon must be a finite number >= 1e-12"):
        mech(epsilon=eps)


@pytest.mark.parametrize("mech", MECHANISMS)
@pytest.mark.parametrize("delta", [-0.1, 1, np.nan, 2.0])
def test_bad_delta(mech, delta):
    with pytest.raises(ParameterError, match=r"delta must be a number with 0 <= delta < 1"):
        mech(delta=delta)


@pytest.mark.parametrize("mech", MECHANISMS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_data(mech, bad):
    with pytest.raises(DataValidationError, match="NaN|outside"):
        mech(x=np.array([0.1, bad, 0.5]))


def test_nan_data_names_count():
    with pytest.raises(DataValidationError, match="x contains 2 NaN or infinite"):
        _mean(x=np.array([np.nan, 0.5, np.nan]))


@pytest.mark.parametrize("mech", MECHANISMS)
def test_out_of_bounds_raises_and_suggests_clip(mech):
    with pytest.raises(OutOfBoundsError, match=r"2 value\(s\) outside .*clip=True"):
        mech(x=np.array([-0.5, 0.5, 1.5]))


@pytest.mark.parametrize("mech", MECHANISMS)
def test_clip_true_accepts_out_of_bounds(mech):
    out = mech(x=np.array([-0.5, 0.5, 1.5]), clip=True)
    assert out is not None


@pytest.mark.parametrize("mech", [_mean, _variance])
@pytest.mark.parametrize("bounds", [None, (1, 0), (0, np.inf), (0,), "ab"])
def test_bad_bounds(mech, bounds):
    with pytest.raises(ParameterError, match="bounds"):
        mech(bounds=bounds)


@pytest.mark.parametrize("rng", [-1, 1.5, "seed", np.random.RandomState(0)])
def test_bad_rng(rng):
    with pytest.raises(ParameterError, match="rng must be"):
        _mean(rng=rng)


@pytest.mark.parametrize("x", [np.zeros((0,)), np.zeros((2, 2, 2, 2)), [["a", "b"]]])
def test_bad_shapes(x):
    with pytest.raises(DataValidationError, match="x must"):
        _mean(x=x)


def test_bad_axis():
    with pytest.raises(ParameterError, match="axis must be"):
        _mean(x=np.full((3, 2), 0.5), axis=2)


def test_bounds_must_match_shape():
    with pytest.raises(ParameterError, match="broadcast"):
        _mean(x=np.full((3, 2), 0.5), axis=0, bounds=(0, [1, 1, 1]))


def test_histogram_bins_and_range():
    with pytest.raises(ParameterError, match=r"bins must be an integer in \[1, 16777216\]"):
        _histogram(bins=0)
    with pytest.raises(ParameterError, match="bins must be"):
        _histogram(bins=np.linspace(0, 1, 5))
    with pytest.raises(DataValidationError, match="1-D"):
        _histogram(x=np.zeros((2, 2)))
    with pytest.raises(ParameterError, match="range is required"):
        dps.histogram(X, 1.0, range=None)


def test_never_none():
    for mech in MECHANISMS:
        assert mech() is not None


def test_check_row_norms():
    from dpstats._engine import check_row_norms

    X2 = np.array([[0.6, 0.8], [1.0, 1.0], [0.0, 0.1]])
    with pytest.raises(OutOfBoundsError, match=r"X has 1 row\(s\) with L2 norm > 1; clip"):
        check_row_norms(X2)
    clipped = check_row_norms(X2, clip=True)
    assert np.allclose(np.linalg.norm(clipped, axis=1), [1.0, 1.0, 0.1])
    with pytest.raises(DataValidationError, match="NaN"):
        check_row_norms(np.array([[np.nan, 0.0]]))


@pytest.mark.parametrize(
    "shape,axis",
    [((1000,), None), ((300, 4), None), ((300, 4), 0), ((300, 4), 1), ((300, 4), -1), ((50, 3, 4), 1), ((50, 3, 4), 0)],
)
def test_bounds_scan_in_blocks_matches_numpy_and_sees_every_block(monkeypatch, shape, axis):
    from fractions import Fraction

    from dpstats._engine import bounded_sums

    # Blocks of 16 values: many blocks of records, whichever axis the records lie along.
    monkeypatch.setattr("dpstats._kernels.fixed_point._SUM_BLOCK_VALUES", 16)
    monkeypatch.setattr("dpstats._kernels.fixed_point._ADDED_BLOCK_VALUES", 16)
    x = np.random.default_rng(0).uniform(-1, 1, shape)
    records = None if axis is None else axis % x.ndim
    out_shape = () if records is None else x.shape[:records] + x.shape[records + 1 :]
    lo, hi = np.full(out_shape, -1.0), np.full(out_shape, 1.0)

    def total(sums):  # Σ q·h exactly, as floats
        units = np.asarray(sums.unit, dtype=object)
        return np.asarray(np.asarray(sums.sums, dtype=object) * units, dtype=float)

    found = bounded_sums(x, lo, hi, axis=records, clip=False, squares=False)
    np.testing.assert_allclose(total(found), x.sum(axis=records), rtol=1e-9, atol=1e-9)
    for value, error in ((1.5, OutOfBoundsError), (np.nan, DataValidationError)):
        bad = x.copy()
        bad.flat[-1] = value  # in the last block
        with pytest.raises(error, match="1 "):
            bounded_sums(bad, lo, hi, axis=records, clip=False, squares=False)
    clipped = bounded_sums(2 * x, lo, hi, axis=records, clip=True, squares=False)
    np.testing.assert_allclose(total(clipped), np.clip(2 * x, -1, 1).sum(axis=records), rtol=1e-9, atol=1e-9)
    assert isinstance(np.asarray(found.unit, dtype=object).flat[0], Fraction)


# ----------------------------------------------------------------------------- covariance (Amin et al. 2019)

GRAM_X = np.full((6, 3), 0.4)


@pytest.mark.parametrize(
    "kwargs,name",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": np.inf}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"method": "gauss"}, "method"),
        ({"rank": 0}, "rank"),
        ({"rank": 4}, "rank"),
        ({"rank": 1.5}, "rank"),
        ({"split": "greedy"}, "split"),
        ({"eigenvalue_share": 0.0}, "eigenvalue_share"),
        ({"eigenvalue_share": 1.0}, "eigenvalue_share"),
        ({"eigenvalue_share": "half"}, "eigenvalue_share"),
        ({"rng": "seed"}, "rng"),
        ({"X": np.full((6, 3), np.nan)}, "NaN"),
        ({"X": np.ones(3)}, "X"),
        ({"X": np.ones((6, 0))}, "column"),
        ({"X": np.full((6, 3), 0.9)}, "clip"),
        ({"privacy_unit": np.arange(5), "max_rows": 1}, "privacy_unit"),
        ({"privacy_unit": np.arange(6), "max_rows": 0}, "max_rows"),
    ],
)
def test_covariance_bad_input_raises_before_any_charge(kwargs, name):
    acc = dps.Accountant(10.0)
    args = {"X": GRAM_X, "epsilon": 1.0, "rng": 0, "accountant": acc, **kwargs}
    with pytest.raises((ParameterError, DataValidationError, ValueError, TypeError), match=name):
        dps.covariance(**args)
    assert acc.spent == (0.0, 0.0)


def test_pca_amin_bad_k_raises_before_any_charge():
    acc = dps.Accountant(10.0)
    with pytest.raises(ParameterError, match="k"):
        dps.pca(GRAM_X, 4, 1.0, mechanism="amin", accountant=acc)
    assert acc.spent == (0.0, 0.0)


# ----------------------------------------------------------------------------- Dong et al. and the norm bound

ROWS = np.random.default_rng(5).uniform(-0.3, 0.3, (200, 4))

BAD_DONG = [
    (dict(epsilon=0), ParameterError, "epsilon must be a finite number"),
    (dict(epsilon=np.inf), ParameterError, "epsilon must be a finite number"),
    (dict(delta=1.0), ParameterError, "delta must be a number with 0 <= delta < 1"),
    (dict(delta=0.0), ParameterError, "delta > 0"),
    (dict(algorithm="clipped"), ParameterError, "algorithm must be one of 'adaptive', 'separate'"),
    (dict(eigenvalues="trace"), ParameterError, "eigenvalues must be one of 'rayleigh', 'spectrum'"),
    (dict(eigenvalues="spectrum"), ParameterError, "noise='float'"),
    (dict(noise="exactly"), ParameterError, "noise must be one of"),
    (dict(norm_bound="max"), ParameterError, "norm_bound must be None, a number > 0 or 'private'"),
    (dict(norm_bound=-2.0), ParameterError, "norm_bound must be a finite number > 0"),
    (dict(norm_bound="private", radius_share=1.5), ParameterError, "radius_share must be a number"),
    (dict(rng="seed"), ParameterError, "rng must be"),
    (dict(accountant="budget"), ParameterError, "accountant must be"),
    (dict(X=ROWS * 4), OutOfBoundsError, r"row\(s\) with L2 norm > 1.*norm_bound='private'"),
    (dict(X=np.where(ROWS > 0.29, np.nan, ROWS)), DataValidationError, "NaN"),
    (dict(X=np.zeros((5, 0))), DataValidationError, "at least one column"),
    (dict(X=np.zeros(5)), DataValidationError, "X must"),
]


@pytest.mark.parametrize("bad,error,match", BAD_DONG, ids=[str(i) for i in range(len(BAD_DONG))])
def test_covariance_dong_bad_input_raises_before_any_charge(bad, error, match):
    acc = dps.Accountant(100.0, 1e-3)
    args = dict(X=ROWS, epsilon=1.0, delta=1e-6, accountant=acc)
    args.update(bad)
    with pytest.raises(error, match=match):
        dps.covariance_dong(**args)
    assert acc.ledger == []


@pytest.mark.parametrize("k", [0, 5, 1.5, "2", True])
def test_pca_dong_bad_k(k):
    with pytest.raises(ParameterError, match="k must be an integer in"):
        dps.pca_dong(ROWS, k, 1.0, 1e-6)


BAD_BOUND = [
    (dict(epsilon=-1.0), "epsilon must be a finite number"),
    (dict(q=0.0), "q must be a number with 0 < q <= 1"),
    (dict(q=True), "q must be a number"),
    (dict(bounds=(0.0, 1.0)), "bounds must be a pair of scalars 0 < lower < upper"),
    (dict(bounds=(2.0, 1.0)), "bounds"),
    (dict(bounds=([1.0, 2.0], 3.0)), "bounds"),
    (dict(max_rows=3), "max_rows applies only with privacy_unit"),
    (dict(rng=-1), "rng must be"),
]


@pytest.mark.parametrize("bad,match", BAD_BOUND, ids=[str(i) for i in range(len(BAD_BOUND))])
def test_private_norm_bound_bad_input(bad, match):
    acc = dps.Accountant(100.0, 1e-3)
    args = dict(X=ROWS, epsilon=1.0, accountant=acc)
    args.update(bad)
    with pytest.raises(ParameterError, match=match):
        dps.preprocessing.private_norm_bound(**args)
    assert acc.ledger == []


def test_private_norm_bound_names_non_finite_rows():
    bad = ROWS.copy()
    bad[[3, 7], 1] = [np.nan, np.inf]
    with pytest.raises(DataValidationError, match="X contains 2 NaN or infinite"):
        dps.preprocessing.private_norm_bound(bad, 1.0)
