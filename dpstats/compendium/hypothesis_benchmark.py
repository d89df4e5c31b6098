"""The type-I error and power benchmark of private hypothesis tests (issue 37): dpstats.hypothesis against the naive
approach and OpenDP.

One *cell* is a test × method × n × ε × effect size. In each repetition a data set of n records is drawn from the
test's scenario (:data:`SCENARIOS`: the null at effect 0, an alternative otherwise), and the test rejects at level
α = 0.05 or not; the cell records how often. The methods:

* **dpstats** — the test of :mod:`dpstats.hypothesis` (its p-value from the null distribution of the private
  statistic, the exact noise included).
* **naive** — what a researcher does today: release the statistics scipy needs with dpstats (a noisy count, noisy
  counts or table, noisy means and variances, a noisy rank statistic; the whole ε, split evenly between them where
  there are two) and plug them into scipy.stats' p-value as if they were exact. The noise is not in scipy's null
  distribution, so the type-I error is not α.
* **OpenDP** (the binomial cells) — OpenDP's canonical-noise (Tulap) mechanism on the count, and its binomial
  p-value (``BinomialCND.p_value``, Awan & Slavković's test), at δ = 10⁻¹⁰ (:data:`OPENDP_DELTA`: OpenDP 0.16
  crashes at δ = 0): imported only where it runs (the benchmark environment).

The scenarios (sizes of k samples split 0.4/0.6 or 0.2/0.3/0.5; data in the public bounds):

=================  ====================================================  ========================================
test               null                                                  alternative (effect d)
=================  ====================================================  ========================================
binomtest          Bernoulli(0.3), p = 0.3                               Bernoulli(0.3 + d)
chisquare          4 categories with p₀ = (0.4, 0.3, 0.2, 0.1)           p₀ + d·(−1, −1, 1, 1)/2
chi2_contingency   x ∈ {a, b} (0.6, 0.4) independent of y ∈ {u, v, w}    y | x = b shifted by d from u to w
ttest_1samp        Beta(2, 5) (mean 2/7, skewed), popmean 2/7            popmean 2/7 − d
ttest_ind          Beta(2, 5) against Beta(4, 10) (same mean, unequal    the first sample's mean 2/7 + d
                   variances)
f_oneway           Beta(2, 5), Beta(4, 10), Beta(1, 2.5) (same mean)     means 2/7 + d·(−1, 0, 1)
mannwhitneyu       N(0, 1) against N(0, 1)                               N(d, 1) against N(0, 1)
kruskal            three N(0, 1)                                         N(−d, 1), N(0, 1), N(d, 1)
=================  ====================================================  ========================================

Targets: the type-I error at most α + 0.01 in every cell of the grid (n ∈ {30, 100, 10³, 10⁴}, ε ∈ {0.1, 1, 4})
for every test; one call at n = 10⁶ in at most 2 s with the default number of simulations.
"""

from __future__ import annotations

import csv
import math
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

import dpstats as dps
from dpstats import hypothesis

from .experiments import Table, progress

__all__ = [
    "ALPHA",
    "COUCH_KW",
    "METHODS",
    "SCENARIOS",
    "TESTS",
    "Cell",
    "Scenario",
    "available_peers",
    "check_targets",
    "couch_groups",
    "couch_kw_abs_power",
    "kruskal_power",
    "naive_pvalue",
    "opendp_pvalue",
    "plot_power",
    "plot_type_one",
    "private_pvalue",
    "read_cells",
    "run_cell",
    "run_grid",
    "type_one_table",
    "write_cells",
]

ALPHA = 0.05
METHODS = ("dpstats", "naive", "OpenDP")
MEAN = 2.0 / 7.0
P0 = np.array([0.4, 0.3, 0.2, 0.1])
CATEGORIES = ["a", "b", "c", "d"]


def _split(n: int, shares: Sequence[float]) -> list[int]:
    """n records split by ``shares`` (each sample at least one record)."""
    sizes = [max(1, int(math.floor(s * n))) for s in shares[:-1]]
    return [*sizes, n - sum(sizes)]


def _beta(mean: float, rng, size: int, a: float = 2.0) -> np.ndarray:
    """Beta(a, b) with the given mean."""
    return rng.beta(a, a * (1.0 - mean) / mean, size)


@dataclass(frozen=True)
class Scenario:
    """A test's data: ``draw(n, effect, rng)`` returns the positional data of the call; ``options`` the other
    arguments of the dpstats call (bounds, categories, p, ...); ``effects`` the effect sizes of its power curve."""

    test: str
    draw: Callable[[int, float, np.random.Generator], tuple]
    options: Callable[[float], dict]
    effects: tuple[float, ...]
    describe: str


def _binomial(n, d, rng):
    return ((rng.random(n) < 0.3 + d).astype(np.int64),)


def _categories(n, d, rng):
    p = P0 + d * np.array([-1.0, -1.0, 1.0, 1.0]) / 2.0
    return (rng.choice(CATEGORIES, n, p=p / p.sum()),)


def _table(n, d, rng):
    x = rng.choice(["a", "b"], n, p=[0.6, 0.4])
    base, shifted = np.array([0.5, 0.3, 0.2]), np.array([0.5 - d, 0.3, 0.2 + d])
    u = rng.random(n)
    cumulative = np.where((x == "b")[:, None], np.cumsum(shifted)[None, :], np.cumsum(base)[None, :])
    y = np.array(["u", "v", "w"])[np.minimum((u[:, None] > cumulative).sum(axis=1), 2)]
    return x, y


def _one_sample(n, d, rng):
    return (rng.beta(2.0, 5.0, n),)


def _two_samples(n, d, rng):
    a, b = _split(n, (0.4, 0.6))
    first = rng.beta(2.0, 5.0, a) if d == 0 else _beta(MEAN + d, rng, a)
    return first, rng.beta(4.0, 10.0, b)


def _three_samples(n, d, rng):
    sizes = _split(n, (0.2, 0.3, 0.5))
    if d == 0:
        return ([rng.beta(2.0, 5.0, sizes[0]), rng.beta(4.0, 10.0, sizes[1]), rng.beta(1.0, 2.5, sizes[2])],)
    return ([_beta(MEAN + d * s, rng, m) for s, m in zip((-1, 0, 1), sizes, strict=True)],)


def _normal_two(n, d, rng):
    a, b = _split(n, (0.4, 0.6))
    return rng.normal(d, 1.0, a), rng.normal(0.0, 1.0, b)


def _normal_three(n, d, rng):
    sizes = _split(n, (0.2, 0.3, 0.5))
    return ([rng.normal(d * s, 1.0, m) for s, m in zip((-1, 0, 1), sizes, strict=True)],)


SCENARIOS = {
    "binomtest": Scenario(
        "binomtest", _binomial, lambda d: {"p": 0.3}, (0.02, 0.05, 0.1, 0.2), "Bernoulli(0.3 + d), p = 0.3"
    ),
    "chisquare": Scenario(
        "chisquare",
        _categories,
        lambda d: {"categories": CATEGORIES, "f_exp": P0},
        (0.02, 0.05, 0.1, 0.2),
        "4 categories, p0 = (0.4, 0.3, 0.2, 0.1), shifted by d(-1, -1, 1, 1)/2",
    ),
    "chi2_contingency": Scenario(
        "chi2_contingency",
        _table,
        lambda d: {"categories": (["a", "b"], ["u", "v", "w"])},
        (0.05, 0.1, 0.2, 0.3),
        "2 x 3 table, y | x = b shifted by d",
    ),
    "ttest_1samp": Scenario(
        "ttest_1samp",
        _one_sample,
        lambda d: {"popmean": MEAN - d, "bounds": (0.0, 1.0)},
        (0.01, 0.03, 0.1, 0.2),
        "Beta(2, 5) on [0, 1], popmean 2/7 - d",
    ),
    "ttest_ind": Scenario(
        "ttest_ind",
        _two_samples,
        lambda d: {"bounds": (0.0, 1.0)},
        (0.02, 0.05, 0.1, 0.2),
        "Beta(2, 5) (mean 2/7 + d) against Beta(4, 10), sizes 0.4 / 0.6",
    ),
    "f_oneway": Scenario(
        "f_oneway",
        _three_samples,
        lambda d: {"bounds": (0.0, 1.0)},
        (0.02, 0.05, 0.1, 0.2),
        "three Beta samples, means 2/7 + d(-1, 0, 1), sizes 0.2 / 0.3 / 0.5",
    ),
    "mannwhitneyu": Scenario(
        "mannwhitneyu", _normal_two, lambda d: {}, (0.1, 0.25, 0.5, 1.0), "N(d, 1) against N(0, 1), sizes 0.4 / 0.6"
    ),
    "kruskal": Scenario(
        "kruskal",
        _normal_three,
        lambda d: {},
        (0.1, 0.25, 0.5, 1.0),
        "N(-d, 1), N(0, 1), N(d, 1), sizes 0.2 / 0.3 / 0.5",
    ),
}
TESTS = tuple(SCENARIOS)


# ----------------------------------------------------------------------------- the methods


def private_pvalue(test: str, data: tuple, options: dict, epsilon: float, rng, n_resamples: int | None = None) -> float:
    """dpstats' p-value (``n_resamples`` None: the test's default), without the interval the t-tests and the binomial
    test compute beside it."""
    extra = {} if n_resamples is None or test == "binomtest" else {"n_resamples": n_resamples}
    if test in ("binomtest", "ttest_1samp", "ttest_ind"):
        extra["confidence_level"] = None  # the interval is not what is measured here
    return getattr(hypothesis, test)(*data, epsilon=epsilon, **options, **extra, rng=rng).pvalue


def naive_pvalue(test: str, data: tuple, options: dict, epsilon: float, rng) -> float:
    """The naive approach: statistics released with dpstats (the whole ε) plugged into scipy's p-value as if exact."""
    import scipy.stats as st

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(_NAIVE[test](st, data, options, epsilon, rng))


def _naive_binomial(st, data, options, epsilon, rng):
    (x,) = data
    n = x.size
    count = dps.sum(x, epsilon, bounds=(0, 1), rng=rng)
    return st.binomtest(int(np.clip(round(count), 0, n)), n, options["p"]).pvalue


def _naive_chisquare(st, data, options, epsilon, rng):
    (x,) = data
    counts, _ = dps.histogram(x, epsilon, categories=options["categories"], rng=rng)
    observed = np.clip(np.asarray(counts, dtype=float), 0.0, None)
    if observed.sum() <= 0:
        return 1.0
    expected = np.asarray(options["f_exp"], dtype=float)
    return st.chisquare(observed, expected / expected.sum() * observed.sum()).pvalue


def _naive_contingency(st, data, options, epsilon, rng):
    x, y = data
    rows, columns = options["categories"]
    pairs = np.char.add(np.char.add(x.astype(str), "|"), y.astype(str))
    cells = [f"{r}|{c}" for r in rows for c in columns]
    counts, _ = dps.histogram(pairs, epsilon, categories=cells, rng=rng)
    table = np.clip(np.asarray(counts, dtype=float), 0.0, None).reshape(len(rows), len(columns))
    if (table.sum(axis=0) <= 0).any() or (table.sum(axis=1) <= 0).any():
        return 1.0
    return st.chi2_contingency(table, correction=False).pvalue


def _moments(x, epsilon, bounds, rng):
    mean = dps.mean(x, epsilon / 2, bounds=bounds, rng=rng)
    variance = dps.variance(x, epsilon / 2, bounds=bounds, rng=rng)
    return float(mean), max(float(variance) * x.size / max(x.size - 1, 1), 1e-12)


def _naive_t1(st, data, options, epsilon, rng):
    (x,) = data
    mean, variance = _moments(x, epsilon, options["bounds"], rng)
    t = (mean - options["popmean"]) / math.sqrt(variance / x.size)
    return 2.0 * st.t.sf(abs(t), x.size - 1)


def _naive_t2(st, data, options, epsilon, rng):
    (m1, v1), (m2, v2) = (_moments(x, epsilon, options["bounds"], rng) for x in data)  # disjoint samples: parallel
    return st.ttest_ind_from_stats(m1, math.sqrt(v1), data[0].size, m2, math.sqrt(v2), data[1].size, False).pvalue


def _naive_anova(st, data, options, epsilon, rng):
    (samples,) = data
    stats = [_moments(x, epsilon, options["bounds"], rng) for x in samples]
    sizes = np.array([x.size for x in samples], dtype=float)
    means, variances = np.array([s[0] for s in stats]), np.array([s[1] for s in stats])
    grand = float(np.sum(sizes * means) / sizes.sum())
    k, n = sizes.size, sizes.sum()
    between = np.sum(sizes * (means - grand) ** 2) / (k - 1)
    within = np.sum((sizes - 1) * variances) / (n - k)
    return st.f.sf(between / within, k - 1, n - k)


def _rank_sums(samples):
    import scipy.stats as st

    pooled = np.concatenate(samples)
    ranks = st.rankdata(pooled) - (pooled.size + 1) / 2.0
    edges = np.cumsum([0, *(s.size for s in samples)])
    return np.array([ranks[a:b].sum() for a, b in zip(edges[:-1], edges[1:], strict=True)]), pooled.size


def _naive_mw(st, data, options, epsilon, rng):
    (w, _), n = _rank_sums(list(data))
    noisy = w + rng.laplace(0.0, (n - 1) / epsilon)  # the Laplace mechanism on W (sensitivity n − 1)
    a, b = data[0].size, data[1].size
    return 2.0 * st.norm.sf(abs(noisy) / math.sqrt(a * b * (n + 1) / 12.0))


def _naive_kw(st, data, options, epsilon, rng):
    (samples,) = data
    w, n = _rank_sums(samples)
    noisy = w + rng.laplace(0.0, 2.0 * (n - 1) / epsilon, w.size)  # the rank sums' L1 sensitivity 2(n − 1)
    sizes = np.array([s.size for s in samples], dtype=float)
    h = 12.0 / (n * (n + 1)) * np.sum(noisy**2 / sizes)
    return st.chi2.sf(h, len(samples) - 1)


_NAIVE = {
    "binomtest": _naive_binomial,
    "chisquare": _naive_chisquare,
    "chi2_contingency": _naive_contingency,
    "ttest_1samp": _naive_t1,
    "ttest_ind": _naive_t2,
    "f_oneway": _naive_anova,
    "mannwhitneyu": _naive_mw,
    "kruskal": _naive_kw,
}


def available_peers() -> list[str]:
    """The peers that can run here (OpenDP: the benchmark environment)."""
    try:
        import opendp.prelude  # noqa: F401
    except ImportError:
        return []
    return ["OpenDP"]


#: OpenDP's canonical noise with δ = 0 crashes the interpreter (a segmentation fault when the measurement is invoked,
#: OpenDP 0.16): its binomial cells use this δ, negligible beside any n here.
OPENDP_DELTA = 1e-10


def opendp_pvalue(x: np.ndarray, p: float, epsilon: float) -> float:
    """OpenDP's binomial test: the count of ones (sensitivity 1 for a replaced record) released with its canonical
    (Tulap) noise at (ε, :data:`OPENDP_DELTA`), and the two-sided p-value of ``BinomialCND`` (Awan & Slavković's
    test)."""
    import opendp.prelude as dp
    from opendp.extras.numpy.canonical import BinomialCND

    dp.enable_features("contrib")
    privacy = (epsilon, OPENDP_DELTA)
    measurement = dp.m.make_canonical_noise(
        dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0, privacy
    )
    release = measurement(float(np.sum(x)))
    return float(BinomialCND(release, 1.0, privacy, int(x.size)).p_value(p))


# ----------------------------------------------------------------------------- cells


@dataclass
class Cell:
    """One method in one cell: how many of ``reps`` repetitions rejected at α, and the time per repetition."""

    test: str
    method: str
    n: int
    epsilon: float
    effect: float
    reps: int
    rejections: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.rejections / self.reps

    @property
    def se(self) -> float:
        r = self.rate
        return math.sqrt(max(r * (1.0 - r), 1e-12) / self.reps)


def run_cell(
    test: str,
    method: str,
    n: int,
    epsilon: float,
    effect: float,
    reps: int,
    *,
    seed: int = 2037,
    n_resamples: int | None = None,
    alpha: float = ALPHA,
) -> Cell:
    """``reps`` repetitions of one cell (the data sets of a seed are the same for every method)."""
    scenario = SCENARIOS[test]
    options = scenario.options(effect)
    data_rng = np.random.default_rng([seed, n, int(round(effect * 1e6)), TESTS.index(test)])
    noise_rng = np.random.default_rng([seed, n, int(round(epsilon * 1e6)), METHODS.index(method), 1])
    rejections, start = 0, time.perf_counter()
    for _ in range(reps):
        data = scenario.draw(n, effect, data_rng)
        if method == "dpstats":
            p = private_pvalue(test, data, options, epsilon, noise_rng, n_resamples)
        elif method == "naive":
            p = naive_pvalue(test, data, options, epsilon, noise_rng)
        else:
            p = opendp_pvalue(data[0], options["p"], epsilon)
        rejections += p <= alpha
    return Cell(test, method, n, epsilon, effect, reps, int(rejections), (time.perf_counter() - start) / reps)


def run_grid(
    tests: Iterable[str],
    ns: Iterable[int],
    epsilons: Iterable[float],
    effects: Iterable[float] = (0.0,),
    *,
    reps: int,
    methods: Sequence[str] = ("dpstats", "naive"),
    peer_reps: int | None = None,
    seed: int = 2037,
    n_resamples: int | None = None,
    checkpoint: str | Path | None = None,
    disable: bool = False,
) -> list[Cell]:
    """Every cell of the grid (``effects``: 0 is the null; OpenDP runs on the binomial cells only), written to
    ``checkpoint`` as it goes."""
    jobs = [
        (t, m, n, e, d)
        for t in tests
        for n in ns
        for e in epsilons
        for d in effects
        for m in methods
        if m != "OpenDP" or t == "binomtest"
    ]
    cells = []
    for t, m, n, e, d in progress(jobs, disable=disable, desc="cells"):
        count = reps if m == "dpstats" or peer_reps is None else peer_reps
        cells.append(run_cell(t, m, n, e, d, count, seed=seed, n_resamples=n_resamples))
        if checkpoint is not None:
            write_cells(cells, checkpoint)
    return cells


def write_cells(cells: Iterable[Cell], path: str | Path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = [f.name for f in fields(Cell)]
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=names)
        writer.writeheader()
        for c in cells:
            writer.writerow(asdict(c))
    return path


def read_cells(path: str | Path) -> list[Cell]:
    kinds = {"n": int, "reps": int, "rejections": int, "epsilon": float, "effect": float, "seconds": float}
    with Path(path).open() as fh:
        return [Cell(**{k: kinds.get(k, str)(v) for k, v in row.items()}) for row in csv.DictReader(fh)]


def type_one_table(cells: Iterable[Cell], method: str = "dpstats") -> Table:
    """The type-I error (%) of ``method`` at effect 0: a row per test and n, a column per ε."""
    cells = [c for c in cells if c.method == method and c.effect == 0.0]
    epsilons = sorted({c.epsilon for c in cells})
    rows = []
    for test in TESTS:
        for n in sorted({c.n for c in cells if c.test == test}):
            found = {c.epsilon: c for c in cells if c.test == test and c.n == n}
            rows.append([test, n, *(100.0 * found[e].rate if e in found else math.nan for e in epsilons)])
    return Table(["test", "n", *(f"eps={e:g}" for e in epsilons)], rows, fmt="{:.1f}")


def check_targets(cells: Iterable[Cell], alpha: float = ALPHA) -> list[dict]:
    """The issue's type-I target for dpstats (every cell at most α + 0.01), and the naive approach's record."""
    cells = [c for c in cells if c.effect == 0.0]
    rows = []
    for method in ("dpstats", "naive", "OpenDP"):
        mine = [c for c in cells if c.method == method]
        if not mine:
            continue
        worst = max(mine, key=lambda c: c.rate)
        over = [c for c in mine if c.rate > alpha + 0.01]
        target = f"{method}: type-I error <= {alpha + 0.01:g} in every cell"
        status = ("met" if not over else "MISSED") if method == "dpstats" else ("fails" if over else "holds")
        where = f"{worst.test}, n={worst.n}, eps={worst.epsilon:g}"
        note = f"worst {worst.rate:.4f} ({where}); {len(over)} of {len(mine)} cells over"
        rows.append({"target": target, "value": worst.rate, "status": status, "note": note})
    return rows


def plot_type_one(cells: Iterable[Cell], alpha: float = ALPHA):
    """The type-I error against n, a panel per test: dpstats and the naive approach at each ε, α and α + 0.01."""
    import matplotlib.pyplot as plt

    cells = [c for c in cells if c.effect == 0.0]
    tests = [t for t in TESTS if any(c.test == t for c in cells)]
    columns = min(3, len(tests))  # at most three panels a row: readable at the site's column width
    rows = math.ceil(len(tests) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), squeeze=False, sharey=True)
    epsilons = sorted({c.epsilon for c in cells})
    colours = dict(zip(epsilons, plt.cm.viridis(np.linspace(0.1, 0.8, len(epsilons))), strict=True))
    for ax, test in zip(axes.ravel(), tests, strict=False):
        for method, style in (("dpstats", "-o"), ("naive", ":x"), ("OpenDP", "--s")):
            for e in epsilons:
                found = sorted(
                    (c for c in cells if c.test == test and c.method == method and c.epsilon == e), key=lambda c: c.n
                )
                if found:
                    ax.errorbar(
                        [c.n for c in found],
                        [c.rate for c in found],
                        yerr=[2 * c.se for c in found],
                        fmt=style,
                        color=colours[e],
                        label=f"{method}, ε={e:g}",
                        capsize=2,
                        ms=4,
                    )
        ax.axhline(alpha, color="k", lw=0.8)
        ax.axhline(alpha + 0.01, color="k", lw=0.8, ls="--")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(test)
        ax.set_xlabel("n (records)")
    for ax in axes[:, 0]:
        ax.set_ylabel(f"type-I error at α = {alpha:g} (±2 s.e.)")
    for ax in axes.ravel()[len(tests) :]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig


def plot_power(cells: Iterable[Cell], alpha: float = ALPHA):
    """Power against the effect size, a panel per test, a line per n and ε (dpstats; the naive approach dotted)."""
    import matplotlib.pyplot as plt

    cells = list(cells)
    tests = [t for t in TESTS if any(c.test == t and c.effect > 0 for c in cells)]
    columns = min(3, len(tests))  # at most three panels a row: readable at the site's column width
    rows = math.ceil(len(tests) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.4 * rows), squeeze=False, sharey=True)
    for ax, test in zip(axes.ravel(), tests, strict=False):
        settings = sorted({(c.n, c.epsilon) for c in cells if c.test == test and c.method == "dpstats"})
        colours = plt.cm.plasma(np.linspace(0.05, 0.85, len(settings)))
        for (n, e), colour in zip(settings, colours, strict=True):
            for method, style in (("dpstats", "-o"), ("OpenDP", "--s")):
                found = sorted(
                    (c for c in cells if c.test == test and c.method == method and c.n == n and c.epsilon == e),
                    key=lambda c: c.effect,
                )
                if found:
                    ax.errorbar(
                        [c.effect for c in found],
                        [c.rate for c in found],
                        yerr=[2 * c.se for c in found],
                        fmt=style,
                        color=colour,
                        label=f"{method}, n={n}, ε={e:g}",
                        capsize=2,
                        ms=4,
                    )
        ax.axhline(alpha, color="k", lw=0.8)
        ax.set_title(f"{test}: {SCENARIOS[test].describe}", fontsize=8)
        ax.set_xlabel("effect size d")
        ax.set_ylim(0, 1.02)
    for ax in axes[:, 0]:
        ax.set_ylabel(f"power at α = {alpha:g} (±2 s.e.)")
    for ax in axes.ravel()[len(tests) :]:
        ax.axis("off")
    axes[0, 0].legend(fontsize=6, loc="lower right")
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- Couch et al. (CCS 2019), Kruskal–Wallis

#: Couch, Kazan, Shi, Bray & Groce's power of their private Kruskal–Wallis test (KW_abs) against the total sample
#: size N: three groups of N/3 from N(−1, 1), N(0, 1), N(1, 1), α = 0.05, 10⁴ repetitions per point; from the data
#: of their figure as the authors published it with their code (their repository's ``kw/data/kw_no_ties.Rda``,
#: rows "abs"). N -> power, for ε = 0.1 and 1; "public" is the non-private Kruskal–Wallis test.
COUCH_KW = {
    0.1: {
        60: 0.0620,
        87: 0.0810,
        123: 0.1420,
        174: 0.1805,
        240: 0.2675,
        330: 0.4130,
        450: 0.7750,
        606: 0.9205,
        807: 0.9790,
        1071: 0.9975,
    },
    1.0: {9: 0.0825, 12: 0.0650, 18: 0.1085, 27: 0.2350, 42: 0.4520, 60: 0.7990, 87: 0.9625, 123: 0.9960},
    "public": {9: 0.2285, 12: 0.5220, 18: 0.7855, 27: 0.9445, 42: 0.9950},
}
COUCH_MEANS = (-1.0, 0.0, 1.0)


def couch_groups(n_total: int, rng, means=COUCH_MEANS) -> list[np.ndarray]:
    """Couch et al.'s Kruskal–Wallis data: three groups of N/3 records from N(mean, 1)."""
    return [rng.normal(m, 1.0, n_total // len(means)) for m in means]


def couch_kw_abs_power(n_total: int, epsilon: float, reps: int, rng, alpha: float = ALPHA) -> float:
    """The power of Couch et al.'s own test, re-implemented from their paper and code: H_abs = 4(N − 1)/N² ·
    Σ_j n_j|r̄_j − (N + 1)/2| plus continuous Laplace noise of scale 8/ε (their sensitivity; the whole ε, the sizes
    taken as equal), rejected above the 1 − α quantile of the same statistic simulated under the null (all groups
    N(0, 1), equal sizes, ``reps`` draws)."""
    from scipy.stats import rankdata

    def statistic(groups):
        pooled = np.concatenate(groups)
        ranks = rankdata(pooled) - (pooled.size + 1) / 2.0
        edges = np.cumsum([0, *(g.size for g in groups)])
        total = sum(abs(ranks[a:b].sum()) for a, b in zip(edges[:-1], edges[1:], strict=True))
        return 4.0 * (pooled.size - 1) / pooled.size**2 * total + rng.laplace(0.0, 8.0 / epsilon)

    null = [statistic(couch_groups(n_total, rng, (0.0, 0.0, 0.0))) for _ in range(reps)]
    critical = np.quantile(null, 1.0 - alpha)
    return float(np.mean([statistic(couch_groups(n_total, rng)) > critical for _ in range(reps)]))


def kruskal_power(n_total: int, epsilon: float, reps: int, rng, alpha: float = ALPHA, means=COUCH_MEANS) -> float:
    """The power of :func:`dpstats.hypothesis.kruskal` on Couch et al.'s data (its default simulations)."""
    return float(
        np.mean(
            [
                hypothesis.kruskal(couch_groups(n_total, rng, means), epsilon, rng=rng).pvalue <= alpha
                for _ in range(reps)
            ]
        )
    )
