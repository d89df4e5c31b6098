"""The test cases of the decomposition releases (their test factories, read through :mod:`dpstats.registry`):
golden calls, worst-case neighbours, Dask agreement calls, privacy-unit calls, bad-input base calls and the patches
that halve each family's declared sensitivity. Imported only by the tests."""

from __future__ import annotations

import sys

import numpy as np

from .. import _examples as ex
from .._neighbours import (
    HEAVY,
    heavy_ids,
    heavy_rows,
    long_rows,
    matrix_rows,
    neighbours_on_the_sphere,
    orthogonal_rows,
    rows_of_a_unit,
    trace_rows,
)
from .._registry import Audit, Cases, Example

EPS, DELTA = 1.0, 1e-6
UNITS = frozenset({"units"})


def _pairs(pairs):
    return [((a,), (b,)) for a, b in pairs]


def _sphere(n: int = 6, d: int = 3):
    return lambda: _pairs(neighbours_on_the_sphere(n, d))


def _first(pairs):
    return lambda: pairs()[0][0]


def _golden(*names, scale: float = 1.0):
    return lambda: tuple(getattr(ex.golden(), n) * scale for n in names)


def _golden_units(*names, scale: float = 1.0):
    return lambda: (*(getattr(ex.golden(), n) * scale for n in names), ex.golden_units().X)


def _streamed(transform=lambda s: s.X):
    return lambda: (transform(ex.streamed()),)


def _lazy(name: str, chunks: int = 97, scale: float = 1.0):
    def data():
        import dask.array as da

        return (da.from_array(getattr(ex.golden(), name) * scale, chunks=chunks),)

    return data


def _unit_rows(scale: float = 1.0):
    return lambda: (ex.unit_data().X * scale, ex.unit_data().ids)


def _views(dx: int):
    """Neighbours of [X, Y] rows on the sphere, split into the two views."""
    return lambda: [((a[:, :dx], a[:, dx:]), (b[:, :dx], b[:, dx:])) for a, b in neighbours_on_the_sphere(6, 4)]


def _both_values(result):
    """The eigenvalues and eigenvectors of amin_eigen, as one array."""
    import numpy as np

    return np.concatenate([np.ravel(a) for a in result])


def _matrix_battery(**kwargs):
    import numpy as np

    X = np.random.default_rng(2027).uniform(-1, 1, (40, 3)) / 2
    return (((X,), {"epsilon": 1.0, **kwargs}),)


# ----------------------------------------------------------------------------- audits

#: The unit-level audits' variant: the same call without its unit (calibrated as if each row were a person).
ROW_LEVEL = {"privacy_unit": None, "max_rows": None}
E1, E2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])


def _orthogonal(d: int = 2):
    """Row 0 is e1 versus e2, the two other rows 0.5·e1: A = diag(1.5, 0) versus diag(0.5, 1) (d = 2)."""
    return lambda: tuple((X,) for X in orthogonal_rows(d))


def _score_event():
    """The exponential mechanism's privacy loss between these neighbours grows with s(V) = ‖Vᵀe1‖² − ‖Vᵀe2‖², the
    change of the score: events {s > t} are the most revealing."""
    return lambda V: float(V[0] @ V[0] - V[1] @ V[1]) > 0.8


def _diagonal_event(threshold: float):
    return lambda: lambda A: A[0, 0] - A[1, 1] > threshold


def _heavy():
    """The heavy unit's HEAVY rows along e1 versus e2 (the others 0.5·e1), with their identifiers."""
    return (heavy_rows(E1), heavy_ids()), (heavy_rows(E2), heavy_ids())


def _unit_audit(label, kwargs, event, runs, delta=0.0, output=None) -> Example:
    return Example(
        label,
        lambda: _heavy()[0],
        {**kwargs, "max_rows": HEAVY},
        keywords=("privacy_unit",),
        output=output,
        audit=Audit(_heavy, event, runs, (9, 9), delta=delta, broken=ROW_LEVEL),
    )


def _dong_rows():
    """Row 0 is e1 versus e2, three rows 0.5·e1 beside it: A = diag(1.75, 0) versus diag(0.75, 1)."""
    X = np.zeros((4, 2))
    X[:, 0] = 0.5
    Xp = X.copy()
    X[0], Xp[0] = [1.0, 0.0], [0.0, 1.0]
    return (X,), (Xp,)


def _cca_rows():
    """Joint rows e1 (in X) versus e3 (in Y): C = ZᵀZ/N changes by ±1/N on two diagonal entries."""
    Z = np.zeros((4, 4))
    Z[1:, 1] = 0.5
    Zp = Z.copy()
    Z[0, 0], Zp[0, 2] = 1.0, 1.0
    return (Z[:, :2], Z[:, 2:]), (Zp[:, :2], Zp[:, 2:])


def _heavy_views():
    """The heavy unit's joint rows e1 (in X) versus e3 (in Y), the others 0.5·e2, with their identifiers."""
    Z, Zp = np.zeros((HEAVY + 3, 4)), np.zeros((HEAVY + 3, 4))
    Z[:, 1] = Zp[:, 1] = 0.5
    Z[:HEAVY, 0], Zp[:HEAVY, 2] = 1.0, 1.0
    Z[:HEAVY, 1] = Zp[:HEAVY, 1] = 0.0
    return (Z[:, :2], Z[:, 2:], heavy_ids()), (Zp[:, :2], Zp[:, 2:], heavy_ids())


def _one_row_moved():
    """A = 0 versus one row e1 (Hardt & Roth's relation: a change of norm 1)."""
    A = np.zeros((6, 4))
    Ap = A.copy()
    Ap[0, 0] = 1.0
    return (A,), (Ap,)


def _c_hat(result):
    return result.C_hat


# ----------------------------------------------------------------------------- mis-declared variants


def _halve(module: str, name: str, value=0.5):
    """A patch making ``module.name`` (a function) return ``value`` (the declared norm bound squared, halved)."""

    def patch(monkeypatch):
        __import__(module)
        monkeypatch.setattr(sys.modules[module], name, lambda *args: value)

    return patch


def halve_noise(monkeypatch):
    """Halve every sensitivity the release path calibrates (:func:`dpstats._release.calibrate`)."""
    import dpstats._release as path
    from dpstats.noise.release import make_noise

    def halved(*args, **kwargs):
        kwargs["sensitivity"] = kwargs["sensitivity"] / 2
        return make_noise(*args, **kwargs)

    monkeypatch.setattr(path, "make_noise", halved)


def halve_dong(monkeypatch):
    """:func:`halve_noise` for Dong et al.'s release, with its calibration uncached (the cached plan of honest runs
    would hide the patch, and the patched plan must not outlive the test)."""
    from . import _dong as dong

    halve_noise(monkeypatch)
    monkeypatch.setattr(dong, "_exact_plan", dong._plan)


# ----------------------------------------------------------------------------- the releases


def pca_ag() -> Cases:
    return Cases(
        examples=(
            Example("pca_ag", _first(_sphere()), {"epsilon": EPS, "delta": DELTA}, neighbours=_sphere(), dask=True),
            Example(
                "pca_ag classic",
                _first(_sphere()),
                {"epsilon": 0.5, "delta": DELTA, "calibration": "classic"},
                neighbours=_sphere(),
            ),
            Example(
                "pca_ag units",
                _first(rows_of_a_unit),
                {"epsilon": EPS, "delta": DELTA, "max_rows": 2},
                keywords=("privacy_unit",),
                neighbours=rows_of_a_unit,
            ),
            Example("pca_ag", _golden("X"), {"epsilon": 1.0, "delta": 1e-6}, seed=15),
            Example("pca_ag_classic", _golden("X"), {"epsilon": 0.5, "delta": 1e-6, "calibration": "classic"}, seed=16),
            Example(
                "pca_ag_units",
                _golden_units("X"),
                {"epsilon": 1.0, "delta": 1e-6, "max_rows": 4},
                keywords=("privacy_unit",),
                seed=66,
            ),
            Example("dask_pca_ag", _lazy("X"), {"epsilon": 1.0, "delta": 1e-6}, seed=53),
            Example("pca_ag streamed", _streamed(), {"epsilon": 1.0, "delta": 1e-6}, dask=True),
            Example(
                "pca_ag clip", _streamed(lambda s: s.X * 1.5), {"epsilon": 1.0, "delta": 1e-6, "clip": True}, dask=True
            ),
            Example(
                "pca_ag float",
                _streamed(),
                {"epsilon": 0.5, "delta": 1e-6, "calibration": "classic"},
                dask=True,
            ),
            Example(
                "pca_ag of units",
                _unit_rows(),
                {"epsilon": 1.0, "delta": 1e-6, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            _unit_audit("pca_ag unit audit", {"epsilon": 1.0, "delta": 1e-5}, _diagonal_event(0.75), 4000, 1e-5),
        ),
        battery=_matrix_battery(delta=1e-6),
        misdeclared=(("pca_ag", _halve("dpstats.decomposition._pca", "norm_bound_squared")),),
    )


def pca_sn() -> Cases:
    return Cases(
        examples=(
            Example("pca_sn", _golden("X"), {"epsilon": 1.0}, seed=17),
            Example("pca_sn streamed", _streamed(), {"epsilon": 1.0}, dask=True),
        ),
        battery=_matrix_battery(),
    )


def pca_ppm() -> Cases:
    plane = _sphere(6, 2)  # d = k: the power method's sensitivity is attained for any basis
    return Cases(
        examples=(
            Example(
                "pca_ppm",
                _first(plane),
                {"k": 2, "epsilon": EPS, "delta": DELTA, "n_iter": 3},
                neighbours=plane,
                dask=True,
            ),
            Example(
                "pca_ppm laplace", _first(plane), {"k": 2, "epsilon": EPS, "delta": 0.0, "n_iter": 3}, neighbours=plane
            ),
            Example("pca_ppm_gauss", _golden("X"), {"k": 2, "epsilon": 1.0, "delta": 1e-6}, seed=18),
            Example("pca_ppm_laplace", _golden("X"), {"k": 2, "epsilon": 1.0, "delta": 0.0, "n_iter": 3}, seed=19),
            Example("dask_pca_ppm", _lazy("X"), {"k": 2, "epsilon": 1.0, "delta": 1e-6}, seed=54),
            Example("pca_ppm streamed", _streamed(), {"k": 2, "epsilon": 1.0, "delta": 1e-6}, dask=True),
            Example(
                "pca_ppm streamed laplace", _streamed(), {"k": 2, "epsilon": 1.0, "delta": 0.0, "n_iter": 3}, dask=True
            ),
            Example(
                "pca_ppm of units",
                _unit_rows(),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            _unit_audit(
                "pca_ppm unit audit",
                {"k": 1, "epsilon": 1.0, "delta": 1e-5, "n_iter": 2},
                lambda: lambda V: abs(V[0, 0]) > abs(V[1, 0]),
                4000,
                1e-5,
            ),
        ),
        battery=_matrix_battery(k=2, delta=1e-6),
        misdeclared=(("pca_ppm", _halve("dpstats.decomposition._pca", "norm_bound_squared")),),
    )


def pca_ppca() -> Cases:
    return Cases(
        examples=(
            Example("pca_ppca", _first(_sphere()), {"k": 1, "epsilon": EPS}, neighbours=_sphere()),
            Example(
                "pca_ppca gibbs",
                _first(_sphere()),
                {"k": 2, "epsilon": EPS, "sampler": "gibbs", "n_sweeps": 2},
                neighbours=_sphere(),
            ),
            Example(
                "pca_ppca units",
                _first(rows_of_a_unit),
                {"k": 1, "epsilon": EPS, "max_rows": 2},
                keywords=("privacy_unit",),
                neighbours=rows_of_a_unit,
            ),
            Example("pca_ppca_sequential", _golden("X"), {"k": 2, "epsilon": 1.0}, seed=20),
            Example(
                "pca_ppca_gibbs", _golden("X"), {"k": 2, "epsilon": 1.0, "sampler": "gibbs", "n_sweeps": 3}, seed=21
            ),
            Example(
                "pca_ppca_units",
                _golden_units("X"),
                {"k": 2, "epsilon": 1.0, "max_rows": 4},
                keywords=("privacy_unit",),
                seed=67,
            ),
            Example("pca_ppca streamed", _streamed(), {"k": 2, "epsilon": 1.0}, dask=True),
            Example(
                "pca_ppca of units",
                _unit_rows(),
                {"k": 2, "epsilon": 1.0, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            Example(
                "pca_ppca audit",
                lambda: _orthogonal(2)()[0],
                {"k": 1, "epsilon": 1.0},
                audit=Audit(_orthogonal(2), _score_event, 2000, (11, 12)),
            ),
            Example(
                "pca_ppca audit k=2",
                lambda: _orthogonal(3)()[0],
                {"k": 2, "epsilon": 1.0},
                audit=Audit(_orthogonal(3), _score_event, 2000, (11, 12)),
            ),
            Example(
                "pca_ppca gibbs audit",
                lambda: _orthogonal(3)()[0],
                {"k": 2, "epsilon": 1.0, "sampler": "gibbs"},
                audit=Audit(_orthogonal(3), _score_event, 1000, (11, 12)),
            ),
            _unit_audit("pca_ppca unit audit", {"k": 1, "epsilon": 1.0}, _score_event, 2000),
        ),
        battery=_matrix_battery(k=2),
        misdeclared=(("pca_ppca", _halve("dpstats.decomposition._bingham", "norm_bound_squared")),),
    )


def pca() -> Cases:
    def frame():
        return (ex.frame() / 200,)

    return Cases(
        examples=(
            Example("pca", _first(_sphere()), {"k": 2, "epsilon": EPS, "delta": DELTA}, neighbours=_sphere()),
            Example("pca amin", _first(_sphere()), {"k": 2, "epsilon": EPS, "mechanism": "amin"}, neighbours=_sphere()),
            Example(
                "pca dong",
                _first(trace_rows),
                {"k": 2, "epsilon": EPS, "delta": DELTA, "mechanism": "dong"},
                neighbours=trace_rows,
            ),
            Example(
                "pca private norm bound",
                _first(long_rows),
                {"k": 2, "epsilon": EPS, "delta": DELTA, "norm_bound": "private"},
                neighbours=long_rows,
            ),
            Example("pca_default", _golden("X"), {"k": 2, "epsilon": 1.0}, seed=22),
            Example("pca_frame", frame, {"k": 2, "epsilon": 1.0}, seed=23),
            Example("pca_amin", _golden("X"), {"k": 2, "epsilon": 1.0, "mechanism": "amin"}, seed=123),
            Example(
                "pca_dong_units",
                _golden_units("X"),
                {"k": 2, "epsilon": 1.0, "mechanism": "dong", "max_rows": 4},
                keywords=("privacy_unit",),
                seed=74,
            ),
            Example("pca_private_bound", _golden("M"), {"k": 2, "epsilon": 1.0, "norm_bound": "private"}, seed=76),
            Example("pca ag", _streamed(), {"k": 2, "epsilon": 1.0}, dask=True),
            Example("pca ppm", _streamed(), {"k": 2, "mechanism": "ppm", "epsilon": 1.0}, dask=True),
            Example("pca ppca", _streamed(), {"k": 2, "mechanism": "ppca", "epsilon": 1.0}, dask=True),
            Example("pca amin streamed", _streamed(), {"k": 2, "mechanism": "amin", "epsilon": 1.0}, dask=True),
            Example("pca dong streamed", _streamed(), {"k": 2, "mechanism": "dong", "epsilon": 1.0}, dask=True),
            Example(
                "pca private bound",
                _streamed(lambda s: s.X * 40),
                {"k": 2, "epsilon": 1.0, "norm_bound": "private"},
                dask=True,
            ),
            Example(
                "pca of units",
                _unit_rows(),
                {"k": 2, "epsilon": 1.0, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            Example(
                "pca amin of units",
                _unit_rows(),
                {"k": 2, "epsilon": 1.0, "mechanism": "amin", "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            Example(
                "pca private bound of units",
                _unit_rows(7.0),
                {"k": 2, "epsilon": 1.0, "norm_bound": "private", "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
        ),
        battery=_matrix_battery(k=2),
        misdeclared=(("pca private norm bound", _halve("dpstats.descriptive._quantiles", "_score_sensitivity")),),
    )


def amin_eigen() -> Cases:
    return Cases(
        examples=(Example("amin_eigen", _golden("X"), {"epsilon": 1.0, "rank": 2}, output=_both_values, seed=122),),
        battery=_matrix_battery(),
    )


def covariance() -> Cases:
    return Cases(
        examples=(
            Example("covariance amin", _first(_sphere()), {"epsilon": EPS}, neighbours=_sphere()),
            Example(
                "covariance dong",
                _first(trace_rows),
                {"epsilon": EPS, "delta": DELTA, "method": "dong"},
                neighbours=trace_rows,
            ),
            Example(
                "covariance dong separate",
                _first(trace_rows),
                {"epsilon": EPS, "delta": DELTA, "method": "dong", "algorithm": "separate"},
                neighbours=trace_rows,
            ),
            Example(
                "covariance amin private norm bound",
                lambda: long_rows()[1][0],
                {"epsilon": EPS, "norm_bound": "private"},
                neighbours=lambda: long_rows()[1:],
            ),
            Example("covariance_amin", _golden("X"), {"epsilon": 1.0}, seed=120),
            Example(
                "covariance_amin_adaptive_rank",
                _golden("X"),
                {"epsilon": 1.0, "rank": 2, "split": "adaptive"},
                seed=121,
            ),
            Example(
                "covariance_amin_units",
                _golden_units("X"),
                {"epsilon": 1.0, "max_rows": 4},
                keywords=("privacy_unit",),
                seed=124,
            ),
            Example("dask_covariance_amin", _lazy("X"), {"epsilon": 1.0}, seed=125),
            Example("covariance amin streamed", _streamed(), {"epsilon": 1.0}, dask=True),
            Example(
                "covariance amin adaptive",
                _streamed(),
                {"epsilon": 1.0, "rank": 3, "split": "adaptive", "clip": True},
                dask=True,
            ),
            Example(
                "covariance of units",
                _unit_rows(),
                {"epsilon": 1.0, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            Example(
                "covariance amin audit",
                lambda: _orthogonal(2)()[0],
                {"epsilon": 1.0},
                audit=Audit(_orthogonal(2), _diagonal_event(0.5), 4000, (31, 32)),  # +1.5 against -0.5 noiseless
            ),
            Example(
                "covariance amin adaptive audit",
                lambda: _orthogonal(2)()[0],
                {"epsilon": 1.0, "split": "adaptive"},
                audit=Audit(_orthogonal(2), _diagonal_event(0.5), 4000, (31, 32)),
            ),
            _unit_audit("covariance amin unit audit", {"epsilon": 1.0}, lambda: lambda C: C[0, 0] > C[1, 1], 2000),
        ),
        battery=_matrix_battery(),
        misdeclared=(
            ("covariance amin", _halve("dpstats.decomposition._bingham", "norm_bound_squared")),
            ("covariance dong", halve_dong),
        ),
    )


def covariance_dong() -> Cases:
    return Cases(
        examples=(
            Example(
                "covariance_dong units",
                _first(rows_of_a_unit),
                {"epsilon": EPS, "delta": DELTA, "max_rows": 2},
                keywords=("privacy_unit",),
                neighbours=rows_of_a_unit,
            ),
            Example("covariance_dong", _golden("X", scale=0.25), {"epsilon": 1.0, "delta": 1e-6}, seed=70),
            Example(
                "covariance_dong_separate",
                _golden("X"),
                {"epsilon": 1.0, "delta": 1e-6, "algorithm": "separate"},
                seed=71,
            ),
            Example(
                "covariance_dong_float",
                _golden("X"),
                {"epsilon": 1.0, "delta": 1e-6, "algorithm": "separate", "eigenvalues": "spectrum", "noise": "float"},
                seed=72,
            ),
            Example("dask_covariance_dong", _lazy("X", scale=0.25), {"epsilon": 1.0, "delta": 1e-6}, seed=57),
            Example(
                "covariance_dong streamed", _streamed(lambda s: s.X * 0.2), {"epsilon": 1.0, "delta": 1e-6}, dask=True
            ),
            Example(
                "covariance_dong separate streamed",
                _streamed(),
                {"epsilon": 1.0, "delta": 1e-6, "algorithm": "separate"},
                dask=True,
            ),
            Example(
                "covariance_dong of units",
                _unit_rows(),
                {"epsilon": 1.0, "delta": 1e-6, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            Example(
                "covariance_dong separate of units",
                _unit_rows(),
                {"epsilon": 1.0, "delta": 1e-6, "algorithm": "separate", "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
            # the estimate mixes two noisy releases with half the budget each and is projected onto [0, n]: the event
            # sees part of the privacy loss, so the under-noised variant claims ε for a 32 ε calibration
            Example(
                "covariance_dong separate audit",
                lambda: _dong_rows()[0],
                {"epsilon": 1.0, "delta": 1e-5, "algorithm": "separate"},
                audit=Audit(_dong_rows, _diagonal_event(1.0), 1000, (51, 52), delta=1e-5, under=32.0),
            ),
            Example(
                "covariance_dong adaptive audit",
                lambda: _dong_rows()[0],
                {"epsilon": 1.0, "delta": 1e-5},
                audit=Audit(_dong_rows, _diagonal_event(1.0), 600, (51, 52), delta=1e-5, under=32.0),
            ),
            _unit_audit(
                "covariance_dong separate unit audit",
                {"epsilon": 1.0, "delta": 1e-5, "algorithm": "separate"},
                _diagonal_event(0.75),
                1000,
                1e-5,
            ),
            _unit_audit(
                "covariance_dong adaptive unit audit", {"epsilon": 1.0, "delta": 1e-5}, _diagonal_event(0.75), 600, 1e-5
            ),
        ),
        battery=_matrix_battery(delta=1e-6),
    )


def pca_dong() -> Cases:
    return Cases(
        examples=(
            Example(
                "pca_dong separate",
                _first(trace_rows),
                {"k": 2, "epsilon": EPS, "delta": DELTA, "algorithm": "separate"},
                neighbours=trace_rows,
            ),
            Example("pca_dong", _golden("X"), {"k": 2, "epsilon": 1.0, "delta": 1e-6}, seed=73),
            Example(
                "pca_dong of units",
                _unit_rows(),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6, "max_rows": 5},
                keywords=("privacy_unit",),
                tags=UNITS,
            ),
        ),
        battery=_matrix_battery(k=2, delta=1e-6),
        misdeclared=(("pca_dong separate", halve_dong),),
    )


def cca() -> Cases:
    def golden_views(scale=None):
        if scale is None:  # the golden calls divide by 1.5 (not multiply by its inverse: other bits)
            return lambda: (ex.golden().X / 1.5, ex.golden().Y / 1.5)
        return lambda: (ex.golden().X * scale, ex.golden().Y * scale)

    def c_hat(result):
        return result.C_hat

    def u(result):
        return result.U

    return Cases(
        examples=(
            Example(
                "cca", _first(_views(2)), {"k": 1, "epsilon": EPS, "delta": DELTA}, neighbours=_views(2), dask=True
            ),
            Example("cca", golden_views(), {"k": 2, "epsilon": 1.0, "delta": 1e-6}, seed=24),
            Example(
                "cca_units",
                lambda: (*golden_views()(), ex.golden_units().X),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6, "max_rows": 4},
                keywords=("privacy_unit",),
                seed=69,
            ),
            Example(
                "cca_private_bound",
                golden_views(30),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6, "norm_bound": "private"},
                seed=77,
            ),
            Example(
                "cca streamed",
                lambda: (ex.streamed().X[:, :3], ex.streamed().X[:, 3:]),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6},
                output=c_hat,
                dask=True,
            ),
            Example(
                "cca private bound",
                lambda: (ex.streamed().X[:, :3], ex.streamed().X[:, 3:]),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6, "norm_bound": "private"},
                output=c_hat,
                dask=True,
            ),
            Example(
                "cca of units",
                lambda: (0.6 * ex.unit_data().X, ex.unit_data().view, ex.unit_data().ids),
                {"k": 1, "epsilon": 1.0, "delta": 1e-6, "max_rows": 5},
                keywords=("privacy_unit",),
                output=u,
                tags=UNITS,
            ),
            Example(
                "cca audit",
                lambda: _cca_rows()[0],
                {"k": 1, "epsilon": 1.0, "delta": 1e-5},
                output=_c_hat,
                audit=Audit(_cca_rows, lambda: lambda C: C[0, 0] - C[2, 2] > 0.0, 2000, (21, 22), delta=1e-5),
            ),
            Example(
                "cca unit audit",
                lambda: _heavy_views()[0],
                {"k": 1, "epsilon": 1.0, "delta": 1e-5, "max_rows": HEAVY},
                keywords=("privacy_unit",),
                output=_c_hat,
                audit=Audit(
                    _heavy_views, lambda: lambda C: C[0, 0] - C[2, 2] > 0.0, 3000, (10, 10), 1e-5, broken=ROW_LEVEL
                ),
            ),
        ),
        battery=(((ex.golden().X[:40, :3] / 2, ex.golden().Y[:40, :2] / 2), {"k": 1, "epsilon": 1.0, "delta": 1e-6}),),
        misdeclared=(("cca", _halve("dpstats.decomposition._cca", "norm_bound_squared")),),
    )


def low_rank() -> Cases:
    return Cases(
        examples=(
            Example(
                "low_rank",
                _first(matrix_rows),
                {"k": 1, "epsilon": EPS, "delta": DELTA, "bounds": (-4, 4)},
                neighbours=matrix_rows,
                dask=True,
            ),
            Example(
                "low_rank input",
                _first(matrix_rows),
                {"k": 1, "epsilon": EPS, "delta": DELTA, "method": "input_perturbation"},
                neighbours=matrix_rows,
            ),
            Example(
                "low_rank_range_finder",
                _golden("A"),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6, "bounds": (0, 1)},
                seed=29,
            ),
            Example(
                "low_rank_input",
                _golden("A"),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6, "method": "input_perturbation"},
                seed=30,
            ),
            Example(
                "dask_low_rank",
                _lazy("A", chunks=30),
                {"k": 2, "epsilon": 1.0, "delta": 1e-6, "bounds": (0, 1)},
                seed=56,
            ),
            # the range finder's sensitivity (a chi quantile, about 6 here) dwarfs the change of norm 1, so its
            # under-noised variant needs 64 ε before the change shows
            Example(
                "low_rank audit",
                lambda: _one_row_moved()[0],
                {"k": 1, "epsilon": 1.0, "delta": 1e-5, "bounds": (0, 1)},
                audit=Audit(_one_row_moved, lambda: lambda B: B[0, 0] > 0.5, 2000, (31, 32), 1e-5, under=64.0),
            ),
            Example(
                "low_rank input audit",
                lambda: _one_row_moved()[0],
                {"k": 1, "epsilon": 1.0, "delta": 1e-5, "bounds": (0, 1), "method": "input_perturbation"},
                audit=Audit(_one_row_moved, lambda: lambda B: B[0, 0] > 0.5, 2000, (31, 32), 1e-5),
            ),
        ),
        battery=(((ex.golden().A[:8, :10],), {"k": 2, "epsilon": 1.0, "delta": 1e-6, "bounds": (0, 1)}),),
        misdeclared=(("low_rank", halve_noise),),
    )
