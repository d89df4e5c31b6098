"""The private-PCA benchmark (issue 26): every PCA mechanism of dpstats and its peers on the same data and grid.

One *cell* is a mechanism × data set × ε × k, repeated over seeds. Each fit releases a top-k subspace V̂ (d × k) and
is scored by its captured energy, 100 · tr(V̂ᵀAV̂) / Σ_{i<=k} λ_i(A) with A = XᵀX
(:func:`dpstats.metrics.captured_energy`: 100 is the non-private PCA), and by its wall time. Every fit runs in a
child process with a time limit (``time_limit``), timed after an untimed warm-up fit on a tiny matrix in the same
child (so that no mechanism is charged for imports or for the fork's set-up): a fit that does not finish is recorded
as ``"timed out"``, never dropped.

The mechanisms (:data:`MECHANISMS`), all under replace-one neighbours and rows of norm <= 1:

========================  =========================================================  ===========================
label                     call                                                       guarantee
========================  =========================================================  ===========================
AG                        ``dps.pca(X, k, ε, δ, mechanism="ag")``                   (ε, δ)-DP
PPM                       ``dps.pca(..., mechanism="ppm")``                          (ε, δ)-DP
PPCA                      ``dps.pca(..., mechanism="ppca")`` (sequential sampler)    ε-DP
PPCA Gibbs                ``mechanism="ppca", sampler="gibbs"``, no accountant       UNPROVEN (an Accountant
                                                                                     refuses it unless
                                                                                     ``allow_unproven=True``)
Amin                      ``mechanism="amin"`` (Amin et al. 2019, k vectors)         ε-DP
Dong                      ``mechanism="dong"`` (Dong, Liang & Yi 2022, adaptive)     (ε, δ)-DP
Hardt-Roth                ``dps.low_rank(X / 2, k, ε, δ, bounds=(-1/2, 1/2))``,      (ε, δ)-DP
                          then the top-k right singular vectors of the release
SN                        ``mechanism="sn"``                                         NOT DP (Imtiaz 2017)
diffprivlib PCA           ``diffprivlib.models.PCA(centered=True, data_norm=1)``     ε-DP (peer)
OpenDP PCA                ``opendp.extras.sklearn.decomposition.make_private_pca``   ε-DP (peer), needs the
                          on a domain of norm 1 centred at 0                         "idealized-numerics" flag
========================  =========================================================  ===========================

Hardt & Roth's relation lets one row move by a vector of norm <= 1; a replaced row of norm <= 1 moves by up to 2, so
the matrix is halved first (and its entries then lie in [-1/2, 1/2], the public ``bounds``). Both peers estimate the
second-moment matrix XᵀX like the dpstats mechanisms (diffprivlib with ``centered=True``, OpenDP with the origin 0
declared in the input domain), so no budget goes to a mean; OpenDP's measurement is checked to cost ε for a replaced
row (its ``map(2)``, symmetric distance 2). The peers are imported only when they run: the library, its tests and
the notebooks never need them (:func:`available_mechanisms` lists what can run here).

Scaling (what is public). Each data set of :func:`load_benchmark_data` is brought to rows of norm <= 1 by a map fixed
before the data are read: x ↦ ((x − lo) / (hi − lo)) / √d with public per-feature ranges [lo, hi] (pixels: 0 … 255
or 0 … 16; wine and breast cancer: the ranges published with the data sets, *taken as public* — they are the data's
own minima and maxima, so for those two sets this is a benchmark convention, not a privacy claim), or, for the
synthetic Gaussian sets, clipping to the public radius R = 1.5 √tr(Σ) of the known model followed by x ↦ x / R.
Nothing is centred (centring reads the data): every mechanism targets the second-moment matrix.
"""

from __future__ import annotations

import contextlib
import csv
import math
import multiprocessing as mp
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from .experiments import Table, progress

__all__ = [
    "BenchmarkData",
    "CellSummary",
    "Fit",
    "MECHANISMS",
    "Mechanism",
    "available_mechanisms",
    "check_targets",
    "load_benchmark_data",
    "plot_energy",
    "read_fits",
    "run_cell",
    "run_grid",
    "summarise",
    "winners",
    "winners_table",
    "write_fits",
]

#: δ of the approximate mechanisms (the pure ones charge δ = 0).
DELTA = 1e-6
#: The grid of the issue.
EPSILONS = (0.1, 0.3, 1.0, 3.0)
KS = (1, 5, 10)
#: Status of a fit that did not finish within the time limit.
TIMED_OUT = "timed out"
#: Status of a peer fit not attempted because a smaller ε timed out at the same data set and k.
SKIPPED = "not run (timed out at a smaller epsilon)"


# ----------------------------------------------------------------------------------------------- the mechanisms


@dataclass(frozen=True)
class Mechanism:
    """One PCA mechanism of the benchmark.

    Attributes
    ----------
    label : str
        Its name in tables and figures.
    guarantee : str
        What is proven for it: ``"(ε, δ)-DP"``, ``"ε-DP"``, ``"UNPROVEN"`` or ``"NOT DP"``.
    library : str
        ``"dpstats"``, ``"diffprivlib"`` or ``"opendp"``.
    fit : callable
        ``fit(X, k, epsilon, delta, seed) -> V`` (d × k, orthonormal columns).
    """

    label: str
    guarantee: str
    library: str
    fit: Callable[[np.ndarray, int, float, float, int], np.ndarray]

    @property
    def proven(self) -> bool:
        """Whether a differential-privacy guarantee is proven for it (not SN, not the Gibbs chain)."""
        return self.guarantee in ("(ε, δ)-DP", "ε-DP")

    @property
    def peer(self) -> bool:
        """Whether it comes from another library."""
        return self.library != "dpstats"


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng([26, seed])


def _dpstats(mechanism: str, pure: bool = False, **options) -> Callable:
    def fit(X: np.ndarray, k: int, epsilon: float, delta: float, seed: int) -> np.ndarray:
        import dpstats as dps

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dps.FloatingPointNoiseWarning)
            warnings.simplefilter("ignore", dps.NotPrivateWarning)  # SN: labelled NOT DP in every output instead
            return dps.pca(X, k, epsilon, 0.0 if pure else delta, mechanism=mechanism, rng=_rng(seed), **options)

    return fit


def _hardt_roth(X: np.ndarray, k: int, epsilon: float, delta: float, seed: int) -> np.ndarray:
    import dpstats as dps

    # Hardt & Roth's neighbours move one row by norm <= 1; a replaced unit-norm row moves by <= 2: halve the matrix.
    low = dps.low_rank(X / 2.0, k, epsilon, delta, bounds=(-0.5, 0.5), rng=_rng(seed))
    return np.linalg.svd(low, full_matrices=False)[2][:k].T


def _diffprivlib(X: np.ndarray, k: int, epsilon: float, delta: float, seed: int) -> np.ndarray:
    from diffprivlib.models import PCA

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its PrivacyLeakWarning chatter; the data already have norm <= 1
        model = PCA(n_components=k, epsilon=epsilon, data_norm=1.0, centered=True, random_state=seed).fit(X)
    return model.components_.T


def _opendp(X: np.ndarray, k: int, epsilon: float, delta: float, seed: int) -> np.ndarray:
    import opendp.prelude as dp

    # Its PCA refuses to run without both flags: "idealized-numerics" says its guarantee assumes exact arithmetic.
    dp.enable_features("contrib", "idealized-numerics")
    n, d = X.shape
    domain = dp.numpy.array2_domain(norm=1.0, p=2, origin=np.zeros(d), size=n, num_columns=d, T=float)
    meas = dp.sklearn.decomposition.make_private_pca(
        domain, dp.symmetric_distance(), unit_epsilon=epsilon, num_components=k
    )
    cost = meas.map(2)  # replace one row = symmetric distance 2
    if cost > epsilon * (1 + 1e-9):
        raise RuntimeError(f"OpenDP's PCA costs {cost} > epsilon = {epsilon} for a replaced row")
    return np.asarray(meas(X).Vt, dtype=float).T[:, :k]  # OpenDP draws its own (OS) randomness: no seed


#: Every mechanism of the benchmark, by label (the order of tables and legends).
MECHANISMS: dict[str, Mechanism] = {
    m.label: m
    for m in (
        Mechanism("AG", "(ε, δ)-DP", "dpstats", _dpstats("ag")),
        Mechanism("PPM", "(ε, δ)-DP", "dpstats", _dpstats("ppm")),
        Mechanism("PPCA", "ε-DP", "dpstats", _dpstats("ppca", pure=True)),
        Mechanism("PPCA Gibbs", "UNPROVEN", "dpstats", _dpstats("ppca", pure=True, sampler="gibbs")),
        Mechanism("Amin", "ε-DP", "dpstats", _dpstats("amin", pure=True)),
        Mechanism("Dong", "(ε, δ)-DP", "dpstats", _dpstats("dong")),
        Mechanism("Hardt-Roth", "(ε, δ)-DP", "dpstats", _hardt_roth),
        Mechanism("SN", "NOT DP", "dpstats", _dpstats("sn", pure=True)),
        Mechanism("diffprivlib PCA", "ε-DP", "diffprivlib", _diffprivlib),
        Mechanism("OpenDP PCA", "ε-DP", "opendp", _opendp),
    )
}


def available_mechanisms() -> list[str]:
    """Labels of the mechanisms that can run here: all of dpstats', and each peer whose library is importable."""
    out = []
    for label, mech in MECHANISMS.items():
        if mech.peer:
            try:
                __import__(mech.library)
            except ImportError:
                continue
        out.append(label)
    return out


# ---------------------------------------------------------------------------------------------------- the data


@dataclass
class BenchmarkData:
    """A data set of the benchmark, rows of norm <= 1, with its second-moment matrix.

    Attributes
    ----------
    name : str
    X : ndarray, shape (n, d)
    scaling : str
        The public map that brought the rows into the unit ball.
    """

    name: str
    X: np.ndarray
    scaling: str

    def __post_init__(self) -> None:
        self.X = np.ascontiguousarray(self.X, dtype=float)
        norms = np.linalg.norm(self.X, axis=1)
        if norms.max() > 1.0 + 1e-12:
            raise ValueError(f"{self.name}: rows must have norm <= 1 (largest {norms.max():.4g})")
        self.A = self.X.T @ self.X
        self.eigenvalues = np.linalg.eigvalsh(self.A)[::-1]  # descending: the optimum of every k, computed once

    def energy(self, V: np.ndarray) -> float:
        """Captured energy of V (% of the non-private top-k): :func:`dpstats.metrics.captured_energy` with the
        eigenvalues of A computed once (the same number; checked in the tests)."""
        V = np.asarray(V, dtype=float)
        k = V.shape[1]
        if V.shape[0] != self.d or not np.allclose(V.T @ V, np.eye(k), atol=1e-6):
            raise ValueError(f"V must be {self.d} x {k} with orthonormal columns")
        return float(100.0 * np.trace(V.T @ self.A @ V) / self.eigenvalues[:k].sum())

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]


def _published_ranges(descr: str, d: int) -> np.ndarray:
    """The (min, max) pairs of the "Summary Statistics" table of a scikit-learn data set's description."""
    ranges = []
    block = descr.split(":Summary Statistics:")[1]
    for line in block.splitlines():
        if ":" in line and "==" not in line:
            values = line.split(":")[-1].split()
            try:
                ranges.append((float(values[0]), float(values[1])))
            except (IndexError, ValueError):
                continue
        if len(ranges) == d:
            break
    if len(ranges) != d:
        raise ValueError(f"found {len(ranges)} published ranges, expected {d}")
    return np.asarray(ranges)


def _ranged(name: str, X: np.ndarray, lo, hi, source: str) -> BenchmarkData:
    d = X.shape[1]
    unit = (np.asarray(X, dtype=float) - lo) / (np.asarray(hi) - np.asarray(lo))
    return BenchmarkData(name, unit / math.sqrt(d), f"(x - lo)/(hi - lo)/sqrt({d}), {source}")


def _spiked(name: str, n: int, top_share: float, seed: int) -> BenchmarkData:
    from dpstats.preprocessing import clip_rows

    from . import datasets

    radius = 1.5 * math.sqrt(np.trace(datasets.synthetic_pca_covariance(100, 10, top_share=top_share)))
    X = datasets.make_synthetic_pca(n, 100, 10, top_share=top_share, rng=seed)
    return BenchmarkData(
        name, clip_rows(X, radius) / radius, f"clipped to the model's R = 1.5 sqrt(tr Sigma) = {radius:.3g}, / R"
    )


#: The data sets :func:`load_benchmark_data` knows.
DATA_SETS = ("wine", "breast_cancer", "digits", "spiked_0.95", "spiked_0.3", "mnist")


def load_benchmark_data(
    names: Iterable[str] = DATA_SETS, *, n_mnist: int = 10_000, n_synthetic: int = 20_000, seed: int = 2016
) -> dict[str, BenchmarkData]:
    """The benchmark's data sets, rows scaled to norm <= 1 by a public map (module docstring).

    Parameters
    ----------
    names : iterable of str
        Of :data:`DATA_SETS`: ``"mnist"`` (the first ``n_mnist`` training images, d = 784, from ``$DPSTATS_DATA``;
        left out with a printed note if it is not installed), ``"digits"`` (1797 × 64), ``"wine"`` (178 × 13),
        ``"breast_cancer"`` (569 × 30), ``"spiked_0.95"`` and ``"spiked_0.3"`` (``n_synthetic`` × 100 from
        :func:`~dpstats.compendium.datasets.make_synthetic_pca` with ``top_share`` 0.95, a large eigengap after
        the 10th eigenvalue, and 0.3, a small one).
    n_mnist, n_synthetic : int
        Rows of MNIST and of the synthetic sets.
    seed : int
        Seed of the synthetic sets.

    Returns
    -------
    dict
        name -> :class:`BenchmarkData`, in the order asked.
    """
    from sklearn import datasets as sk

    from . import datasets

    out: dict[str, BenchmarkData] = {}
    for name in names:
        if name == "mnist":
            if not datasets.is_available("mnist"):
                print(f"MNIST is not installed in {datasets.data_home()}: left out (dpstats data fetch mnist)")
                continue
            X = datasets.load_mnist()[0][:n_mnist]  # pixels / 255, in [0, 1]
            out[name] = _ranged(name, X, 0.0, 1.0, "pixels in [0, 255] (stored / 255)")
        elif name == "digits":
            out[name] = _ranged(name, datasets.load_digits()[0], 0.0, 1.0, "pixels in [0, 16] (stored / 16)")
        elif name in ("wine", "breast_cancer"):
            bunch = sk.load_wine() if name == "wine" else sk.load_breast_cancer()
            ranges = _published_ranges(bunch.DESCR, bunch.data.shape[1])
            out[name] = _ranged(
                name, bunch.data, ranges[:, 0], ranges[:, 1], "ranges published with the data set (taken as public)"
            )
        elif name.startswith("spiked_"):
            out[name] = _spiked(name, n_synthetic, float(name.split("_")[1]), seed)
        else:
            raise ValueError(f"unknown data set {name!r}; known: {', '.join(DATA_SETS)}")
    return out


# -------------------------------------------------------------------------------------------------- running fits


@dataclass
class Fit:
    """One fit: a row of the tidy table.

    Attributes
    ----------
    data, mechanism : str
    guarantee : str
        As :attr:`Mechanism.guarantee`.
    n, d, k : int
    epsilon, delta : float
        δ is that of the approximate mechanisms; the pure ones charge 0.
    seed : int
    status : str
        ``"ok"``, ``"timed out"``, ``"not run (...)"`` or ``"failed: ..."``.
    energy : float
        Captured energy, % of the non-private top-k (NaN unless ``status == "ok"``).
    seconds : float
        Wall time of the fit (NaN unless ``status == "ok"``; the limit for a timed-out fit).
    """

    data: str
    mechanism: str
    guarantee: str
    n: int
    d: int
    k: int
    epsilon: float
    delta: float
    seed: int
    status: str
    energy: float
    seconds: float


#: The warm-up fit's data (8 rows of norm 1/2 in d = 6): run once in this process before any child is forked (imports,
#: first-call set-up) and once in each child before its timed fit (BLAS threads re-created after the fork, pages
#: copied on first write): without it a fit in a fresh child measured 5–9 ms more than the same fit in this process.
_WARM_UP = np.eye(6)[[0, 1, 2, 3, 4, 5, 0, 1]] / 2.0


def _warm_up(fit: Callable, delta: float) -> None:
    fit(_WARM_UP, 1, 1.0, delta, 0)


def _child(conn, fit, args) -> None:
    try:
        _warm_up(fit, args[3])
        start = time.perf_counter()
        V = fit(*args)
        conn.send(("ok", time.perf_counter() - start, np.asarray(V, dtype=float)))
    except BaseException as error:  # noqa: BLE001 - reported to the parent as the fit's status
        conn.send((f"failed: {type(error).__name__}: {str(error)[:120]}", float("nan"), None))
    finally:
        conn.close()


def _run_limited(fit: Callable, args: tuple, time_limit: float | None) -> tuple[str, float, np.ndarray | None]:
    """(status, seconds, V): in this process without a limit, else in a forked child killed at the limit (the child
    first runs an untimed warm-up fit, :data:`_WARM_UP`)."""
    if time_limit is None:
        try:
            start = time.perf_counter()
            V = fit(*args)
            return "ok", time.perf_counter() - start, np.asarray(V, dtype=float)
        except Exception as error:  # noqa: BLE001 - a failure is a result of the benchmark
            return f"failed: {type(error).__name__}: {str(error)[:120]}", float("nan"), None
    ctx = mp.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fit, args))
    proc.start()
    send.close()
    try:
        if receive.poll(time_limit):  # the result is read before joining: a large V cannot block the child
            status, seconds, V = receive.recv()
        else:
            status, seconds, V = TIMED_OUT, float(time_limit), None
    except EOFError:
        status, seconds, V = "failed: the child process died", float("nan"), None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        receive.close()
    return status, seconds, V


def run_cell(
    data: BenchmarkData,
    mechanism: str,
    k: int,
    epsilon: float,
    *,
    delta: float = DELTA,
    seeds: Sequence[int] = (0, 1, 2),
    time_limit: float | None = None,
) -> list[Fit]:
    """Run one cell — mechanism × data set × ε × k — over ``seeds``; one :class:`Fit` per seed.

    Parameters
    ----------
    data : BenchmarkData
    mechanism : str
        A label of :data:`MECHANISMS`.
    k : int
        Dimension of the released subspace.
    epsilon : float
    delta : float, default 1e-6
        δ of the approximate mechanisms (the pure ones, SN and the peers ignore it).
    seeds : sequence of int
        Seed j draws the noise from ``default_rng([26, j])`` (OpenDP takes no seed).
    time_limit : float, optional
        Seconds per fit; each fit then runs in a forked child that is killed at the limit. A fit that times out is
        recorded as ``"timed out"`` and the cell's remaining seeds are not run (recorded too). None: no limit, in
        this process.

    Returns
    -------
    list of Fit
        ``len(seeds)`` rows, in seed order.
    """
    mech = MECHANISMS[mechanism]
    rows = []
    stopped = None
    for seed in seeds:
        if stopped is None:
            status, seconds, V = _run_limited(mech.fit, (data.X, k, epsilon, delta, seed), time_limit)
        else:
            status, seconds, V = stopped, float("nan"), None
        energy = float("nan")
        if V is not None:
            try:
                energy = data.energy(V)
            except ValueError as error:
                status, V = f"failed: {error}", None
        if status == TIMED_OUT:
            stopped = "not run (an earlier seed timed out)"
        rows.append(
            Fit(data.name, mechanism, mech.guarantee, data.n, data.d, k, float(epsilon), delta, seed, status, energy,
                seconds)
        )  # fmt: skip
    return rows


def run_grid(
    data: dict[str, BenchmarkData],
    mechanisms: Sequence[str] | None = None,
    *,
    epsilons: Sequence[float] = EPSILONS,
    ks: Sequence[int] = KS,
    delta: float = DELTA,
    seeds: Sequence[int] = (0, 1, 2),
    time_limit: float | None = None,
    show_progress: bool = True,
) -> list[Fit]:
    """Every cell of data × mechanism × k × ε (ε ascending); a tidy list of :class:`Fit`.

    A peer whose fit times out at some ε is not run at the larger ε of the same data set and k (its rejection sampler
    stalls as n·ε grows; see ``benchmarks/bench_peers.py``): those cells are recorded as :data:`SKIPPED`. dpstats'
    mechanisms run at every ε.

    Parameters
    ----------
    data : dict
        name -> :class:`BenchmarkData` (:func:`load_benchmark_data`).
    mechanisms : sequence of str, optional
        Labels of :data:`MECHANISMS`; default :func:`available_mechanisms`.
    epsilons, ks, delta, seeds, time_limit
        As :func:`run_cell`.
    show_progress : bool, default True
        A progress bar over the cells.

    Returns
    -------
    list of Fit
    """
    mechanisms = list(available_mechanisms() if mechanisms is None else mechanisms)
    unknown = set(mechanisms) - MECHANISMS.keys()
    if unknown:
        raise ValueError(f"unknown mechanisms {sorted(unknown)}; known: {', '.join(MECHANISMS)}")
    epsilons = sorted(float(e) for e in epsilons)
    for label in mechanisms:  # imports and first-call set-up in this process, before any timed child is forked
        with contextlib.suppress(Exception):  # a mechanism that fails is recorded by its own fits
            _warm_up(MECHANISMS[label].fit, delta)
    total = len(data) * len(mechanisms) * len(ks) * len(epsilons)
    out: list[Fit] = []
    with progress(total=total, desc="PCA benchmark cells", disable=not show_progress) as bar:
        for bench in data.values():
            for k in ks:
                gave_up: set[str] = set()
                for eps in epsilons:
                    for label in mechanisms:  # interleaved: a cell's mechanisms run close together in time
                        mech = MECHANISMS[label]
                        if label in gave_up:
                            out += [
                                Fit(bench.name, label, mech.guarantee, bench.n, bench.d, k, eps, delta, s, SKIPPED,
                                    float("nan"), float("nan"))
                                for s in seeds
                            ]  # fmt: skip
                        else:
                            rows = run_cell(bench, label, k, eps, delta=delta, seeds=seeds, time_limit=time_limit)
                            out += rows
                            if mech.peer and any(r.status == TIMED_OUT for r in rows):
                                gave_up.add(label)
                        bar.update()
    return out


# ------------------------------------------------------------------------------------------------------ summaries


@dataclass
class CellSummary:
    """A cell over its seeds.

    Attributes
    ----------
    data, mechanism, guarantee : str
    n, d, k : int
    epsilon : float
    runs : int
        Fits that finished.
    energy, se : float
        Mean captured energy (%) over the finished fits and its standard error (NaN for fewer than two).
    seconds : float
        Median fit time (s) over the finished fits.
    status : str
        ``"ok"`` if every seed finished, else the first other status.
    """

    data: str
    mechanism: str
    guarantee: str
    n: int
    d: int
    k: int
    epsilon: float
    runs: int
    energy: float
    se: float
    seconds: float
    status: str

    @property
    def proven(self) -> bool:
        return self.guarantee in ("(ε, δ)-DP", "ε-DP")

    @property
    def peer(self) -> bool:
        return self.mechanism in MECHANISMS and MECHANISMS[self.mechanism].peer

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def summarise(fits: Iterable[Fit]) -> list[CellSummary]:
    """One :class:`CellSummary` per (data, mechanism, k, ε), in the order first seen."""
    cells: dict[tuple, list[Fit]] = {}
    for f in fits:
        cells.setdefault((f.data, f.mechanism, f.k, f.epsilon), []).append(f)
    out = []
    for rows in cells.values():
        done = [r for r in rows if r.status == "ok"]
        energy = np.array([r.energy for r in done])
        bad = [r.status for r in rows if r.status != "ok"]
        first = rows[0]
        out.append(
            CellSummary(
                first.data,
                first.mechanism,
                first.guarantee,
                first.n,
                first.d,
                first.k,
                first.epsilon,
                len(done),
                float(energy.mean()) if done else float("nan"),
                float(energy.std(ddof=1) / math.sqrt(len(done))) if len(done) > 1 else float("nan"),
                float(np.median([r.seconds for r in done])) if done else float("nan"),
                bad[0] if bad else "ok",
            )
        )
    return out


def _cells(summaries: Iterable[CellSummary]) -> dict[tuple, list[CellSummary]]:
    by: dict[tuple, list[CellSummary]] = {}
    for s in summaries:
        by.setdefault((s.data, s.k, s.epsilon), []).append(s)
    return by


def _best(candidates: list[CellSummary]) -> CellSummary | None:
    done = [c for c in candidates if c.ok]
    return max(done, key=lambda c: c.energy) if done else None


def winners(summaries: Iterable[CellSummary]) -> list[dict]:
    """Per (data, k, ε): the best mechanism overall, the best proven dpstats mechanism and the best peer.

    "Best" is the largest mean captured energy among the mechanisms whose every seed finished. The overall winner
    may be unproven (PPCA Gibbs) or not DP at all (SN): its ``guarantee`` says so.

    Returns
    -------
    list of dict
        Keys ``data``, ``n``, ``d``, ``k``, ``epsilon``, ``best`` (the overall winner's :class:`CellSummary` or
        None), ``best_proven`` (the best proven dpstats mechanism) and ``best_peer``.
    """
    out = []
    for (data, k, eps), cell in _cells(summaries).items():
        out.append(
            dict(
                data=data,
                n=cell[0].n,
                d=cell[0].d,
                k=k,
                epsilon=eps,
                best=_best(cell),
                best_proven=_best([c for c in cell if c.proven and not c.peer]),
                best_peer=_best([c for c in cell if c.peer]),
            )
        )
    return out


def _describe(s: CellSummary | None) -> tuple[str, float, float]:
    if s is None:
        return "none finished", float("nan"), float("nan")
    return s.mechanism, s.energy, s.se


def winners_table(summaries: Iterable[CellSummary]) -> Table:
    """The winners per cell as a :class:`~dpstats.compendium.experiments.Table` (energy in %, ± one s.e.)."""
    rows = []
    for w in winners(summaries):
        name, energy, se = _describe(w["best"])
        proven_name, proven_energy, proven_se = _describe(w["best_proven"])
        peer_name, peer_energy, _ = _describe(w["best_peer"])
        flag = w["best"].guarantee if w["best"] is not None else ""
        rows.append(
            [w["data"], w["k"], w["epsilon"], name, flag, energy, se, proven_name, proven_energy, proven_se, peer_name,
             peer_energy]
        )  # fmt: skip
    header = ["data", "k", "ε", "best", "its guarantee", "energy %", "s.e.", "best proven dpstats", "energy %",
              "s.e.", "best peer", "peer energy %"]  # fmt: skip
    return Table(header, rows, fmt="{:.3g}")


def check_targets(
    summaries: Iterable[CellSummary], *, target_epsilon: float = 1.0, min_n: int = 10_000, max_d: int = 100
) -> list[dict]:
    """Issue 26's two targets, cell by cell.

    *peers*: in every cell where a peer ran, the best proven dpstats mechanism captures at least the peer's energy
    within one standard error of the difference (mean_ours >= mean_peer − √(se_ours² + se_peer²)) and fits faster
    (median time). A peer that timed out (or was not run after timing out) released nothing within the limit: the
    target counts as met and the row says so. *90 %*: at ε = ``target_epsilon`` on data with n >= ``min_n`` and
    d <= ``max_d``, the best proven dpstats mechanism captures >= 90 % of the non-private energy (its mean).

    Returns
    -------
    list of dict
        Keys ``target`` ("peers: <peer>" or "90 %"), ``data``, ``k``, ``epsilon``, ``met`` (bool), ``note``.
    """
    out = []
    summaries = list(summaries)
    for w, (_, cell) in zip(winners(summaries), _cells(summaries).items(), strict=True):
        ours = w["best_proven"]
        key = dict(data=w["data"], k=w["k"], epsilon=w["epsilon"])
        for peer in [c for c in cell if c.peer]:
            if ours is None:
                out.append(dict(target=f"peers: {peer.mechanism}", met=False, note="no proven dpstats fit", **key))
            elif not peer.ok:
                out.append(
                    dict(target=f"peers: {peer.mechanism}", met=True,
                         note=f"peer {peer.status} (no release within the limit); {ours.mechanism} "
                              f"{ours.energy:.1f}% in {ours.seconds:.2g} s", **key)
                )  # fmt: skip
            else:
                slack = math.sqrt(np.nan_to_num(ours.se) ** 2 + np.nan_to_num(peer.se) ** 2)
                energy_ok = ours.energy >= peer.energy - slack
                faster = ours.seconds <= peer.seconds
                out.append(
                    dict(target=f"peers: {peer.mechanism}", met=bool(energy_ok and faster),
                         note=f"{ours.mechanism} {ours.energy:.1f}% ± {np.nan_to_num(ours.se):.1f} in "
                              f"{ours.seconds:.2g} s vs {peer.energy:.1f}% ± {np.nan_to_num(peer.se):.1f} in "
                              f"{peer.seconds:.2g} s" + ("" if energy_ok else "; less energy")
                              + ("" if faster else "; slower"), **key)
                )  # fmt: skip
        if w["epsilon"] == target_epsilon and w["n"] >= min_n and w["d"] <= max_d:
            met = ours is not None and ours.energy >= 90.0
            note = "no proven fit" if ours is None else f"{ours.mechanism} {ours.energy:.1f}%"
            out.append(dict(target="90 %", met=bool(met), note=note, **key))
    return out


# ---------------------------------------------------------------------------------------------------- the figure

_STYLE = {
    "SN": dict(color="0.6", linestyle=":", marker="x"),
    "PPCA Gibbs": dict(linestyle="--"),
    "diffprivlib PCA": dict(color="black"),
    "OpenDP PCA": dict(color="tab:olive"),
}


def plot_energy(summaries: Iterable[CellSummary], data: str, *, ks: Sequence[int] | None = None):
    """One figure for data set ``data``: captured energy against ε, one panel per k, one line per mechanism.

    Error bars are ±1 standard error over seeds. Peers are drawn with dashed lines and square markers, SN in grey
    (labelled NOT DP), the Gibbs chain labelled UNPROVEN; a mechanism with cells that did not finish says so in its
    legend entry ("timed out at ε = ...").

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt

    cells = [s for s in summaries if s.data == data]
    if not cells:
        raise ValueError(f"no results for data set {data!r}")
    ks = sorted({s.k for s in cells}) if ks is None else list(ks)
    fig, axes = plt.subplots(1, len(ks), figsize=(4.4 * len(ks), 4.2), squeeze=False, sharey=True)
    labels = [m for m in MECHANISMS if any(s.mechanism == m for s in cells)]
    handles = {}
    for ax, k in zip(axes[0], ks, strict=True):
        notes = []
        for label in labels:
            line = sorted((s for s in cells if s.mechanism == label and s.k == k), key=lambda s: s.epsilon)
            done = [s for s in line if s.ok]
            missing = [s.epsilon for s in line if not s.ok]
            if missing:
                notes.append(f"{label}: no result at ε = {', '.join(f'{e:g}' for e in missing)}")
            style = dict(marker="o", capsize=3)
            if MECHANISMS[label].peer:
                style.update(linestyle="--", marker="s")
            style.update(_STYLE.get(label, {}))
            handles[label] = ax.errorbar(
                [s.epsilon for s in done],
                [s.energy for s in done],
                yerr=[np.nan_to_num(s.se) for s in done],
                label=f"{label} ({MECHANISMS[label].guarantee})",
                **style,
            )
        ax.axhline(100, color="black", lw=1, ls="--")
        ax.axhline(90, color="black", lw=0.6, ls=":")
        ax.set_xscale("log")
        ax.set_ylim(0, 103)
        ax.set_xlabel("privacy parameter ε (log scale)")
        ax.set_title(f"k = {k}")
        ax.grid(alpha=0.3)
        if notes:
            ax.text(0.02, 0.02, "\n".join(notes), transform=ax.transAxes, fontsize=6, va="bottom")
    axes[0][0].set_ylabel("captured energy (% of non-private top-k)")
    fig.legend(
        [handles[m] for m in labels],
        [f"{m} ({MECHANISMS[m].guarantee})" for m in labels],
        loc="lower center",
        ncol=min(5, len(labels)),
        fontsize=7,
        bbox_to_anchor=(0.5, -0.01),
    )
    first = cells[0]
    fig.suptitle(
        f"{data} (n = {first.n}, d = {first.d}): captured energy, mean ± 1 s.e. over seeds; "
        f"δ = {DELTA:g} for the (ε, δ) mechanisms"
    )
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return fig


# ------------------------------------------------------------------------------------------------------- storage


def write_fits(fits: Iterable[Fit], path: str | Path) -> Path:
    """Write the tidy table (one row per fit) as CSV."""
    path = Path(path)
    names = [f.name for f in fields(Fit)]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=names)
        writer.writeheader()
        for f in fits:
            writer.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in asdict(f).items()})
    return path


def read_fits(path: str | Path) -> list[Fit]:
    """Read a table written by :func:`write_fits`."""
    types = {f.name: f.type for f in fields(Fit)}
    out = []
    with Path(path).open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            values = {}
            for key, value in row.items():
                kind = types[key]
                values[key] = int(value) if kind == "int" else float(value) if kind == "float" else value
            out.append(Fit(**values))
    return out
