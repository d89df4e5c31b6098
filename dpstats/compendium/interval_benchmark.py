"""The coverage benchmark of confidence intervals (issue 36): dpstats' ``ci=`` against an oracle and the peers.

One *cell* is a population × n × ε. In each repetition a data set of n rows is drawn from the population, and

* **dpstats** releases ``dps.mean(x, ε, bounds=..., ci=0.95)``: does its interval cover the population mean (of
  the variable clipped to the bounds, which is what it states it covers)? how wide is it?
* **noise-only** — what every peer reports around a release: ``dps.mean(x, ε, ...)`` (the whole ε on the mean)
  ± the 95 % half-width of its noise (the ledger's ``half_width``). It covers the data set's own mean with
  probability 0.95; its coverage of the population mean is measured here.
* **OpenDP** — the mean of OpenDP's Polars API (``.dp.mean(bounds)`` with the length public, replace-one
  neighbours: ``dp.unit_of(changes=1)``) and the accuracy its ``summarize(alpha=0.05)`` reports around the release
  (for the sum, divided by the public n). ``summarize`` depends on public values only, so it runs once per cell;
  each repetition then releases with OpenDP's framework measurement that the Polars plan uses (a sum on the sized,
  bounded domain with Laplace noise of the summarised scale; checked to cost ε for a replaced row, ``map(2)``).
  OpenDP is imported only when it runs (the benchmark environment).

The **oracle** is the same mechanism with the whole ε on the mean and the population variance σ² known: its
interval is the release ± the 97.5 % quantile of N(0, σ²/n) plus the mean's noise (Laplace of the dpstats
release's scale; simulated). Widths are reported as the median width over the repetitions divided by the oracle's.
Its coverage, and that of the non-private t interval (``public``), are measured on the same data sets too: where
they also miss 95 %, the cell's data sets (not the method) are the reason.

The populations (:data:`POPULATIONS`): normal N(0, 1) on [−6, 6]; Beta(2, 5) on [0, 1]; Bernoulli(0.3) and
Bernoulli(0.02) on [0, 1]; log-normal(0, 1) on [0, e⁶] (skewed, in bounds ~250 times its mean); and Pareto(3) on
[1, 20], whose tail beyond 20 (probability 1.25·10⁻⁴) is clipped — the one population with data outside its
bounds, for which the interval covers the clipped mean (as its ``target`` says) and the coverage of the raw mean
E[X] = 1.5 is reported beside it. The normal and log-normal populations leave their bounds with probability below
10⁻⁸ (``clip=True`` is passed; no repetition in the published grid clipped anything that mattered).
"""

from __future__ import annotations

import csv
import math
import time
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

import dpstats as dps

from .experiments import Table, progress

__all__ = [
    "LEVEL",
    "noisyvar_intervals",
    "public_intervals",
    "POPULATIONS",
    "Cell",
    "Population",
    "available_peers",
    "check_targets",
    "coverage_table",
    "oracle_width",
    "plot_coverage",
    "read_cells",
    "run_cell",
    "run_grid",
    "write_cells",
]

LEVEL = 0.95
METHODS = ("dpstats", "noise-only", "OpenDP", "oracle", "public")


def _normal_clipped_variance(edge: float) -> float:
    from scipy.stats import norm

    return 1.0 - 2.0 * (edge * norm.pdf(edge) - (edge * edge - 1.0) * norm.sf(edge))


def _lognormal_clipped(edge: float, power: int) -> float:
    from scipy.stats import norm

    log_edge = math.log(edge)
    return math.exp(power * power / 2.0) * norm.cdf(log_edge - power) + edge**power * norm.sf(log_edge)


@dataclass(frozen=True)
class Population:
    """A population: its public bounds, whether its data lie inside them (``inside``), the mean and variance of the
    variable clipped to the bounds (what a ``clip=True`` interval covers), the unclipped mean, and a sampler."""

    name: str
    bounds: tuple[float, float]
    inside: bool
    mean: float
    variance: float
    raw_mean: float
    sample: Callable[[np.random.Generator, int], np.ndarray]
    describe: str


def _pareto(rng: np.random.Generator, n: int) -> np.ndarray:
    return (1.0 - rng.random(n)) ** (-1.0 / 3.0)


POPULATIONS = {
    "normal": Population(
        "normal",
        (-6.0, 6.0),
        True,
        0.0,
        _normal_clipped_variance(6.0),
        0.0,
        lambda rng, n: rng.standard_normal(n),
        "N(0, 1) on [-6, 6]",
    ),
    "beta": Population(
        "beta", (0.0, 1.0), True, 2 / 7, 10 / 392, 2 / 7, lambda rng, n: rng.beta(2.0, 5.0, n), "Beta(2, 5) on [0, 1]"
    ),
    "bernoulli": Population(
        "bernoulli",
        (0.0, 1.0),
        True,
        0.3,
        0.21,
        0.3,
        lambda rng, n: (rng.random(n) < 0.3).astype(np.float64),
        "Bernoulli(0.3) on [0, 1]",
    ),
    "bernoulli_0.02": Population(
        "bernoulli_0.02",
        (0.0, 1.0),
        True,
        0.02,
        0.0196,
        0.02,
        lambda rng, n: (rng.random(n) < 0.02).astype(np.float64),
        "Bernoulli(0.02) on [0, 1]",
    ),
    "lognormal": Population(
        "lognormal",
        (0.0, math.exp(6.0)),
        True,
        _lognormal_clipped(math.exp(6.0), 1),
        _lognormal_clipped(math.exp(6.0), 2) - _lognormal_clipped(math.exp(6.0), 1) ** 2,
        math.exp(0.5),
        lambda rng, n: rng.lognormal(0.0, 1.0, n),
        "log-normal(0, 1) on [0, e^6]",
    ),
    "pareto": Population(
        "pareto",
        (1.0, 20.0),
        False,
        1.5 - 1.5 / 400 + 1 / 400,
        2.9 - (1.5 - 1.5 / 400 + 1 / 400) ** 2,
        1.5,
        _pareto,
        "Pareto(3) on [1, 20] (tail beyond 20 clipped)",
    ),
}


@dataclass
class Cell:
    """One method in one cell: how often its interval covered the population value (of the clipped variable;
    ``covered_raw``: of the unclipped mean), its median width, the oracle's width, the time per repetition."""

    population: str
    n: int
    epsilon: float
    method: str
    reps: int
    covered: int
    covered_raw: int
    median_width: float
    oracle_width: float
    seconds: float
    inside: bool = True

    @property
    def coverage(self) -> float:
        return self.covered / self.reps

    @property
    def coverage_se(self) -> float:
        c = self.coverage
        return math.sqrt(max(c * (1.0 - c), 1e-12) / self.reps)

    @property
    def width_ratio(self) -> float:
        return self.median_width / self.oracle_width


def available_peers() -> list[str]:
    """The peers that can run here (OpenDP needs its Polars API: the benchmark environment)."""
    try:
        import opendp.prelude  # noqa: F401
        import polars  # noqa: F401
    except ImportError:
        return []
    return ["OpenDP"]


def oracle_width(
    population: Population,
    n: int,
    epsilon: float,
    scale: float,
    *,
    level: float = LEVEL,
    draws: int = 2_000_000,
    seed: int = 0,
) -> float:
    """The width of the oracle's interval (module docstring): twice the ``level`` quantile of |N(0, σ²/n) +
    Laplace(scale)|, ``scale`` the noise of the whole-ε mean (in data units), by simulation."""
    rng = np.random.default_rng(seed)
    errors = math.sqrt(population.variance / n) * rng.standard_normal(draws) + rng.laplace(0.0, scale, draws)
    return 2.0 * float(np.quantile(np.abs(errors), level))


def _noise_only(population: Population, n: int, epsilon: float, level: float) -> tuple[float, float]:
    """The half-width of the noise-only interval and the noise's Laplace scale (data units) of the whole-ε mean:
    from the ledger of one release (public values only)."""
    accountant = dps.Accountant(epsilon * 2)
    dps.mean(np.full(n, population.bounds[0]), epsilon, bounds=population.bounds, rng=0, accountant=accountant)
    statement = accountant.ledger[-1].noise[0]
    if abs(statement.confidence - level) > 1e-12:
        raise ValueError("the ledger states a 95 % half-width; run the benchmark at level 0.95")
    return statement.half_width, statement.scale


def _opendp(population: Population, n: int, epsilon: float, level: float):
    """OpenDP's interval maker for one cell (module docstring): summarize once, then release per repetition."""
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    lo, hi = (float(b) for b in population.bounds)
    frame = pl.LazyFrame({"x": np.full(n, (lo + hi) / 2.0)})
    context = dp.Context.compositor(
        data=frame,
        privacy_unit=dp.unit_of(changes=1),
        privacy_loss=dp.loss_of(epsilon=epsilon),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=n, invariant="lengths")],
    )
    query = context.query().select(pl.col("x").fill_null(0.0).dp.mean(bounds=(lo, hi)))
    summary = query.summarize(alpha=1.0 - level)
    row = summary.filter(pl.col("aggregate") == "Sum")
    scale, accuracy = float(row["scale"][0]), float(row["accuracy"][0])
    domain = dp.vector_domain(dp.atom_domain(bounds=(lo, hi)), size=n)
    measurement = dp.t.make_sum(domain, dp.symmetric_distance()) >> dp.m.then_laplace(scale)
    if measurement.map(2) > epsilon * (1 + 1e-6):
        raise RuntimeError(f"OpenDP's sum at scale {scale} costs {measurement.map(2)} > epsilon = {epsilon}")

    def interval(x: np.ndarray) -> tuple[float, float]:
        value = float(measurement(np.clip(x, lo, hi))) / n
        return value - accuracy / n, value + accuracy / n

    return interval


def run_cell(
    population: Population,
    n: int,
    epsilon: float,
    *,
    reps: int,
    peer_reps: int,
    peers: Sequence[str] = (),
    level: float = LEVEL,
    seed: int = 0,
) -> list[Cell]:
    """Every method on one cell (module docstring): ``reps`` repetitions of dpstats' interval, the first
    ``peer_reps`` of them also for the noise-only interval and the peers (on the same data)."""
    half, scale = _noise_only(population, n, epsilon, level)
    oracle = oracle_width(population, n, epsilon, scale, level=level, seed=seed)
    makers = {"OpenDP": _opendp(population, n, epsilon, level)} if "OpenDP" in peers else {}
    tag = zlib.crc32(population.name.encode())  # every cell draws its own data and noise
    rng = np.random.default_rng([seed, tag, n, int(round(epsilon * 1000))])
    calls_seed = np.random.default_rng([seed, tag, n, int(round(epsilon * 1000)), 1]).integers(0, 2**62)
    found = {m: [0, 0, [], 0.0, 0] for m in ("dpstats", "noise-only", "oracle", "public", *makers)}
    truth, raw = population.mean, population.raw_mean
    for r in range(reps):
        x = population.sample(rng, n)
        calls = {
            "dpstats": lambda x=x, r=r: (
                dps.mean(x, epsilon, bounds=population.bounds, clip=True, ci=level, rng=int(calls_seed) + 2 * r).ci
            )
        }
        if r < peer_reps:
            whole = dps.mean(x, epsilon, bounds=population.bounds, clip=True, rng=int(calls_seed) + 2 * r + 1)
            calls["noise-only"] = lambda whole=whole: _around(whole, half)
            calls["oracle"] = lambda whole=whole: _around(whole, oracle / 2.0)
            calls["public"] = lambda x=x: tuple(public_intervals(np.clip(x, *population.bounds), [level])[0])
            calls.update({name: (lambda x=x, make=make: make(x)) for name, make in makers.items()})
        for method, call in calls.items():
            start = time.perf_counter()
            low, high = call()
            record = found[method]
            record[3] += time.perf_counter() - start
            record[0] += bool(low <= truth <= high)
            record[1] += bool(low <= raw <= high)
            record[2].append(high - low)
            record[4] += 1
    return [
        Cell(
            population.name,
            n,
            epsilon,
            method,
            done,
            covered,
            covered_raw,
            float(np.median(widths)),
            oracle,
            seconds / done,
            population.inside,
        )
        for method, (covered, covered_raw, widths, seconds, done) in found.items()
        if done
    ]


def _around(value: float, half: float) -> tuple[float, float]:
    return value - half, value + half


def run_grid(
    populations: Iterable[str],
    ns: Sequence[int],
    epsilons: Sequence[float],
    *,
    reps: int,
    peer_reps: int,
    peers: Sequence[str] = (),
    seed: int = 0,
    checkpoint: str | Path | None = None,
    disable: bool = False,
) -> list[Cell]:
    """Every cell of the grid, one population after the other (``checkpoint``: the cells so far are written there
    after each cell)."""
    cells: list[Cell] = []
    grid = [(p, n, e) for p in populations for n in ns for e in epsilons]
    for name, n, epsilon in progress(grid, desc="cells", disable=disable):
        cells += run_cell(POPULATIONS[name], n, epsilon, reps=reps, peer_reps=peer_reps, peers=peers, seed=seed)
        if checkpoint is not None:
            write_cells(cells, checkpoint)
    return cells


def write_cells(cells: Iterable[Cell], path: str | Path) -> Path:
    """The cells as a CSV file (one row per method and cell)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = [f.name for f in fields(Cell)]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=names)
        writer.writeheader()
        for cell in cells:
            writer.writerow(asdict(cell))
    return path


def read_cells(path: str | Path) -> list[Cell]:
    """The cells written by :func:`write_cells`."""
    kinds = {f.name: f.type for f in fields(Cell)}
    out = []
    with Path(path).open(newline="") as handle:
        for row in csv.DictReader(handle):
            values = {}
            for name, text in row.items():
                kind = kinds[name]
                if kind in ("int", int):
                    values[name] = int(text)
                elif kind in ("float", float):
                    values[name] = float(text)
                elif kind in ("bool", bool):
                    values[name] = text == "True"
                else:
                    values[name] = text
            out.append(Cell(**values))
    return out


def coverage_table(cells: Iterable[Cell], method: str = "dpstats", *, raw: bool = False) -> Table:
    """Coverage (%) per population and n (rows) and ε (columns) for one method (``raw``: of the unclipped mean)."""
    cells = [c for c in cells if c.method == method]
    epsilons = sorted({c.epsilon for c in cells})
    rows = []
    for population in dict.fromkeys(c.population for c in cells):
        for n in sorted({c.n for c in cells if c.population == population}):
            found = {c.epsilon: c for c in cells if c.population == population and c.n == n}
            rows.append(
                [population, n]
                + [
                    100.0 * (found[e].covered_raw if raw else found[e].covered) / found[e].reps if e in found else ""
                    for e in epsilons
                ]
            )
    return Table(["population", "n", *[f"eps={e:g}" for e in epsilons]], rows, fmt="{:.1f}")


def check_targets(cells: Iterable[Cell]) -> list[dict]:
    """Issue 36's targets on dpstats' cells: coverage within [94 %, 97 %] in >= 95 % of the cells whose data lie
    inside the bounds and never below 93 %; width <= 1.5 times the oracle's at n >= 10³ (inside the bounds)."""
    mine = [c for c in cells if c.method == "dpstats" and c.inside]
    if not mine:
        return []
    banded = [c for c in mine if 0.94 <= c.coverage <= 0.97]
    low = [c for c in mine if c.coverage < 0.93]
    large = [c for c in mine if c.n >= 1000]
    narrow = [c for c in large if c.width_ratio <= 1.5]

    def names(cs):
        return "; ".join(f"{c.population} n={c.n} eps={c.epsilon:g}: {100 * c.coverage:.1f} %" for c in cs)

    def widths(cs):
        return "; ".join(f"{c.population} n={c.n} eps={c.epsilon:g}: {c.width_ratio:.2f}" for c in cs)

    return [
        {
            "target": "coverage in [94 %, 97 %] in >= 95 % of the cells (data inside the bounds)",
            "value": f"{len(banded)}/{len(mine)}",
            "status": "met" if len(banded) >= 0.95 * len(mine) else "MISSED",
            "note": "outside the band: " + (names([c for c in mine if c not in banded]) or "none"),
        },
        {
            "target": "coverage never below 93 %",
            "value": f"{min(c.coverage for c in mine) * 100:.1f} %",
            "status": "met" if not low else "MISSED",
            "note": names(low) or "none",
        },
        {
            "target": "width <= 1.5 x the oracle's at n >= 1000",
            "value": f"{len(narrow)}/{len(large)}",
            "status": "met" if len(narrow) == len(large) else "MISSED",
            "note": "wider: " + (widths([c for c in large if c not in narrow]) or "none"),
        },
    ]


def plot_coverage(cells: Iterable[Cell], populations: Sequence[str] | None = None, *, level: float = LEVEL):
    """Coverage against n, one panel per population, one line per ε (dpstats: solid; noise-only: dashed; OpenDP:
    dotted), with ±1.96 standard errors; the nominal level and the [94 %, 97 %] band drawn."""
    import matplotlib.pyplot as plt

    cells = list(cells)
    populations = list(populations or dict.fromkeys(c.population for c in cells))
    epsilons = sorted({c.epsilon for c in cells})
    colours = plt.cm.viridis(np.linspace(0.0, 0.9, max(len(epsilons), 1)))
    styles = {"dpstats": "-", "noise-only": "--", "OpenDP": ":"}
    columns = min(3, len(populations))  # at most three panels a row: readable at the site's column width
    rows = math.ceil(len(populations) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.9 * columns, 3.3 * rows), sharey=True, squeeze=False)
    for ax in axes.ravel()[len(populations) :]:
        ax.set_visible(False)
    for ax, population in zip(axes.ravel(), populations, strict=False):
        ax.axhspan(94, 97, color="0.9", zorder=0)
        ax.axhline(100 * level, color="0.4", lw=0.8)
        for method, style in styles.items():
            for colour, epsilon in zip(colours, epsilons, strict=True):
                chosen = sorted(
                    (c for c in cells if c.population == population and c.method == method and c.epsilon == epsilon),
                    key=lambda c: c.n,
                )
                if not chosen:
                    continue
                ax.errorbar(
                    [c.n for c in chosen],
                    [100 * c.coverage for c in chosen],
                    yerr=[196 * c.coverage_se for c in chosen],
                    ls=style,
                    color=colour,
                    marker="o" if method == "dpstats" else None,
                    ms=3,
                    capsize=2,
                    label=f"{method}, ε={epsilon:g}" if population == populations[0] else None,
                )
        ax.set_xscale("log")
        ax.set_title(POPULATIONS[population].describe if population in POPULATIONS else population, fontsize=9)
        ax.set_xlabel("n (rows)")
        ax.set_ylim(0, 101)
    for ax in axes[:, 0]:
        ax.set_ylabel("coverage of the population mean (%)")
    fig.legend(loc="lower center", ncol=min(6, 3 * len(epsilons)), fontsize=7, bbox_to_anchor=(0.5, -0.12))
    fig.tight_layout()
    return fig


# ------------------------------------------------------------------ a published method, for the paper notebook


def noisyvar_intervals(
    x: np.ndarray,
    levels: Sequence[float],
    epsilon: float,
    bounds: tuple[float, float],
    rng: np.random.Generator,
    *,
    share: float = 0.8,
    draws: int = 1000,
) -> np.ndarray:
    """NOISYVAR as Du, Foot, Moniot, Bray & Groce (2020) publish it (their Algorithm 2 with the simulation of their
    Algorithm 3), for each confidence level in ``levels``: rows (low, high).

    The data are clipped to the bounds [a, b] (w = b − a); the mean gets ``share`` of ε and the variance the rest:
    m = x̄ + Laplace(w/(ε₁n)) and s = √max(0, s² + Laplace(w²/(ε₂n))) (s² with n − 1 in the denominator, the
    sensitivity w²/n the paper uses). If s = 0 the interval is m plus the Laplace noise's quantiles; otherwise
    ``draws`` values of N(0, s²/n) + Laplace(w/(ε₁n)) are simulated and the margin of error is half the distance
    between their (1 ∓ level)/2 quantiles. Floating-point Laplace noise, as in the paper (a reproduction, not a
    dpstats release: this noise is open to Mironov's attack)."""
    lo, hi = bounds
    x = np.clip(np.asarray(x, dtype=np.float64), lo, hi)
    n, width = x.size, hi - lo
    e1, e2 = share * epsilon, (1.0 - share) * epsilon
    scale = width / (e1 * n)
    m = x.mean() + rng.laplace(0.0, scale)
    s = math.sqrt(max(0.0, x.var(ddof=1) + rng.laplace(0.0, width * width / (n * e2))))
    levels = np.asarray(levels, dtype=np.float64)
    if s == 0.0:
        q = -scale * np.log(1.0 - levels)  # the Laplace quantile at (1 + level)/2
        return np.column_stack([m - q, m + q])
    sims = rng.normal(0.0, s / math.sqrt(n), draws) + rng.laplace(0.0, scale, draws)
    lower, upper = np.quantile(sims, (1.0 - levels) / 2.0), np.quantile(sims, (1.0 + levels) / 2.0)
    margin = (upper - lower) / 2.0
    return np.column_stack([m - margin, m + margin])


def public_intervals(x: np.ndarray, levels: Sequence[float]) -> np.ndarray:
    """The non-private t interval x̄ ± t_{n−1, (1 + level)/2}·s/√n for each level (the "Public" line of Du et al.)."""
    from scipy.stats import t

    x = np.asarray(x, dtype=np.float64)
    n = x.size
    half = t.ppf((1.0 + np.asarray(levels, dtype=np.float64)) / 2.0, n - 1) * x.std(ddof=1) / math.sqrt(n)
    return np.column_stack([x.mean() - half, x.mean() + half])
