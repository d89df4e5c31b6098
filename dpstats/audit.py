"""Empirical privacy auditing — a statistical lower bound on ε — and a sensitivity checker.

:func:`check_sensitivity` runs a mechanism on a dataset and a neighbour with the noise frozen and checks that the
control flow is the same and that every statistic moved by no more than its declared sensitivity (see there); the
rest of this docstring is about :func:`audit`.

For neighbouring datasets D, D′ and an output event E, an (ε, δ)-DP mechanism
satisfies P[M(D) ∈ E] <= e^ε P[M(D′) ∈ E] + δ, hence::

    ε >= ln((P[M(D) ∈ E] − δ) / P[M(D′) ∈ E])

:func:`audit` runs the mechanism many times on both datasets, estimates both
probabilities, and turns Clopper–Pearson confidence bounds on them into a lower
confidence bound on ε. It checks E and its complement, in both directions (four
candidate bounds) and splits α between the eight one-sided intervals (union
bound), so ``epsilon_lower`` is below the true ε with probability >= 1 − α.

An audit can only refute a claim: a bound above the claimed ε proves the
mechanism (or its calibration) wrong; a bound below it proves nothing.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from . import _trace
from ._validation import check_delta, check_int
from .noise.random import check_rng

__all__ = [
    "AuditResult",
    "SensitivityReport",
    "StatisticCheck",
    "audit",
    "check_sensitivity",
    "clopper_pearson",
    "draw",
    "float_laplace_support",
    "low_bit_distance",
    "neighbours_at_bounds",
    "neighbours_of_a_unit",
    "neighbours_on_the_sphere",
    "neighbours_with_labels",
    "observe",
    "on_grid",
]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes
    ----------
    epsilon_lower : float
        Lower confidence bound (level 1 − α) on the mechanism's ε; ``inf`` only if
        an event has probability > δ under one dataset and was never seen under
        the other *and* the run count makes the upper bound zero (it never does
        for finite runs: see ``epsilon_point``).
    epsilon_point : float
        Plug-in estimate from the observed frequencies (``inf`` when an event was
        seen under one dataset and never under the other).
    counts : tuple of int
        How often E occurred under D and under D′.
    n_runs : int
        Runs per dataset.
    alpha, delta : float
        Confidence level and the δ the bound accounts for.
    """

    epsilon_lower: float
    epsilon_point: float
    counts: tuple[int, int]
    n_runs: int
    alpha: float
    delta: float


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """One-sided Clopper–Pearson bounds, each holding with probability >= 1 − α."""
    from scipy.stats import beta

    lower = 0.0 if successes == 0 else float(beta.ppf(alpha, successes, trials - successes + 1))
    upper = 1.0 if successes == trials else float(beta.ppf(1 - alpha, successes + 1, trials - successes))
    return lower, upper


def _log_ratio(numerator: float, denominator: float) -> float:
    if numerator <= 0:
        return -math.inf
    if denominator <= 0:
        return math.inf
    return math.log(numerator / denominator)


def audit(
    mechanism: Callable[[object, np.random.Generator], object],
    data,
    neighbour,
    event: Callable[[object], bool],
    *,
    n_runs: int = 10_000,
    delta: float = 0.0,
    alpha: float = 0.05,
    rng=None,
) -> AuditResult:
    """Estimate a lower bound on ε from two neighbouring datasets and an output event.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, rng) -> output``; called ``n_runs`` times on each dataset.
    data, neighbour : object
        Two neighbouring datasets (they differ in one record).
    event : callable
        ``event(output) -> bool``: the output set E.
    n_runs : int, default 10000
        Runs per dataset.
    delta : float, default 0.0
        The mechanism's claimed δ, subtracted as in the definition.
    alpha : float, default 0.05
        1 − confidence level of ``epsilon_lower``.
    rng : None, int or numpy.random.Generator
        Seed for the runs.

    Returns
    -------
    AuditResult

    References
    ----------
    Jagielski, Ullman & Oprea, "Auditing differentially private machine
    learning: how private is private SGD?", NeurIPS 2020. Ding, Wang, Wang,
    Zhang & Kifer, "Detecting violations of differential privacy", CCS 2018.

    Examples
    --------
    >>> import dpstats as dps
    >>> from dpstats.audit import audit
    >>> res = audit(lambda x, r: dps.mean(x, 1.0, bounds=(0, 1), rng=r), [0.0], [1.0],
    ...             lambda out: out > 0.5, n_runs=2000, rng=0)
    >>> res.epsilon_lower < 1.0
    True
    """
    n_runs = check_int(n_runs, "n_runs")
    delta = check_delta(delta)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must satisfy 0 < alpha < 1; got {alpha!r}")
    rng = check_rng(rng)
    hits = [sum(bool(event(mechanism(ds, rng))) for _ in range(n_runs)) for ds in (data, neighbour)]
    a = alpha / 8
    lowers, uppers = [], []
    for k in (hits[0], hits[1], n_runs - hits[0], n_runs - hits[1]):
        lo, up = clopper_pearson(k, n_runs, a)
        lowers.append(lo)
        uppers.append(up)
    # Pairs (event under one dataset, same event under the other): E and its complement, both ways.
    pairs = ((0, 1), (1, 0), (2, 3), (3, 2))
    lower_bound = max(_log_ratio(lowers[i] - delta, uppers[j]) for i, j in pairs)
    freqs = [hits[0], hits[1], n_runs - hits[0], n_runs - hits[1]]
    point = max(_log_ratio(freqs[i] / n_runs - delta, freqs[j] / n_runs) for i, j in pairs)
    return AuditResult(max(lower_bound, 0.0), max(point, 0.0), (hits[0], hits[1]), n_runs, alpha, delta)


# ----------------------------------------------------------------------------- floating-point attacks (Mironov 2012)


def float_laplace_support(outputs, value: float, scale: float) -> np.ndarray:
    """Whether each of ``outputs`` can be produced by ``value + Generator.laplace(0, scale)`` in floating point.

    NumPy's Laplace sampler draws U = k·2^-53 (k a 53-bit integer) and returns
    ``scale·log(U + U)`` for U < 1/2, ``−scale·log(2 − U − U)`` otherwise; the
    release is the double nearest to ``value + noise``. For an output y this
    finds the U that the noise y − value would need, and checks the few
    candidates k around it exactly, by recomputing the release with NumPy's own
    arithmetic. This is the attack of Mironov (CCS 2012): an output that one
    dataset's true value cannot produce betrays the other dataset with
    certainty.

    Parameters
    ----------
    outputs : array_like of float
        Released values.
    value : float
        The true statistic of the hypothesised dataset.
    scale : float
        The Laplace scale b the releases used.

    Returns
    -------
    numpy.ndarray of bool
    """
    y = np.asarray(outputs, dtype=np.float64).ravel()
    noise = y - value
    two_u = np.exp(-np.abs(noise) / scale)  # U + U (lower branch) or 2 − U − U (upper branch)
    k0 = np.floor(np.where(noise < 0, two_u / 2, 1.0 - two_u / 2) * 2.0**53)
    log = np.frompyfunc(math.log, 1, 1)  # the C library's log, as NumPy's sampler calls it (not the SIMD ufunc)
    possible = np.zeros(y.size, dtype=bool)
    for shift in range(-4, 5):
        U = np.clip(k0 + shift, 1, 2.0**53 - 1) * 2.0**-53
        upper = U >= 0.5
        z = np.where(
            upper,
            0.0 - scale * log(np.where(upper, 2.0 - U - U, 1.0)).astype(np.float64),
            0.0 + scale * log(np.where(upper, 1.0, U + U)).astype(np.float64),
        )
        possible |= (value + z) == y
    return possible.reshape(np.shape(outputs))


def low_bit_distance(a, b, bits: int = 8) -> float:
    """Total variation distance between the distributions of the lowest ``bits`` mantissa bits of two samples.

    For a floating-point mechanism the low-order bits of its releases depend on
    the true value (Mironov 2012), so they differ between neighbouring datasets
    (0.1–0.3 for float Laplace and Gaussian noise). Releases on a public grid
    (:mod:`dpstats.noise.release`) have no data-dependent low bits: the
    distance is only sampling error.
    """

    def histogram(x):
        mantissa = np.asarray(x, dtype=np.float64).ravel().view(np.uint64) & np.uint64((1 << bits) - 1)
        return np.bincount(mantissa.astype(np.int64), minlength=1 << bits) / mantissa.size

    return float(0.5 * np.abs(histogram(a) - histogram(b)).sum())


def on_grid(values, grid: float) -> bool:
    """Whether every value is an integer multiple of ``grid`` (a power of two): the support of a grid release
    does not depend on the data."""
    scaled = np.asarray(values, dtype=np.float64) / grid
    return bool(np.array_equal(scaled, np.rint(scaled)))


# ----------------------------------------------------------------------------- sensitivity checking (Cebere et al.)


@dataclass(frozen=True)
class StatisticCheck:
    """One statistic compared between a dataset and its neighbour (noise frozen).

    Attributes
    ----------
    step : int
        Its position among the run's instrumented points (statistics, random steps, charges).
    name, norm : str
        What the library called it (:func:`dpstats._trace.observe`) and the norm of its declared sensitivity.
    declared, observed : float
        The declared sensitivity, and the distance between the two runs' statistics in that norm.
    ok : bool
        ``observed <= declared`` (exactly for exact statistics; within a relative 1e-9 for floating-point ones).
    """

    step: int
    name: str
    norm: str
    declared: float
    observed: float
    ok: bool

    @property
    def ratio(self) -> float:
        """observed / declared: how close the neighbours came to the declared sensitivity (1: attained)."""
        return self.observed / self.declared if self.declared > 0 else (0.0 if self.observed == 0 else math.inf)


@dataclass(frozen=True)
class SensitivityReport:
    """Outcome of :func:`check_sensitivity`.

    Attributes
    ----------
    checks : tuple of StatisticCheck
        Every declared statistic, compared.
    charges, draws : int
        How many charges (control-flow events) and random steps the runs went through, and compared.
    violations : tuple of str
        What breaks the declared privacy argument: a statistic that moved by more than its declared sensitivity, a
        declared sensitivity (or noise, or charge) that differs between the runs, a different sequence of releases
        or shapes, one run raising where the other did not, randomness drawn before a release that differs.
    timing : tuple of str
        Random steps that drew a different amount of randomness on the two datasets (a data-dependent running
        time, e.g. a rejection sampler whose acceptance rate depends on the data). Not a sensitivity violation,
        but a side channel; reported separately.
    """

    checks: tuple[StatisticCheck, ...]
    charges: int
    draws: int
    violations: tuple[str, ...]
    timing: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """No violation (timing findings aside)."""
        return not self.violations

    @property
    def tightness(self) -> float:
        """The largest observed / declared ratio over the checks (0 without checks)."""
        return max((c.ratio for c in self.checks), default=0.0)


@dataclass
class _Item:
    kind: str  # "observe", "draw" or "event"
    name: str
    value: object = None
    sensitivity: object = None
    norm: str = ""
    exact: bool = True
    before: object = None
    after: object = None


class _Run(_trace.Recorder):
    """One run of the mechanism: records every instrumented point; in replay, every random step returns the
    reference run's output and leaves the random source where the reference run left it (the noise is frozen)."""

    def __init__(self, reference: list[_Item] | None = None):
        self.items: list[_Item] = []
        self.reference = [i for i in reference if i.kind == "draw"] if reference is not None else None
        self.timing: list[str] = []
        self.violations: list[str] = []

    def observe(self, name, statistic, sensitivity, norm, exact):
        if norm not in _trace.NORMS:
            raise ValueError(f"norm must be one of {_trace.NORMS}; got {norm!r}")
        value = copy.deepcopy(statistic)
        self.items.append(_Item("observe", name, value, sensitivity, norm, exact))

    def event(self, kind, name, details):
        self.items.append(_Item("event", f"{kind}: {name}", copy.deepcopy(details)))

    def draw(self, name, rng, sample):
        before = copy.deepcopy(rng.bit_generator.state)
        index = sum(1 for i in self.items if i.kind == "draw")
        output = sample()
        after = copy.deepcopy(rng.bit_generator.state)
        self.items.append(_Item("draw", name, None, before=before, after=after))
        if self.reference is None:
            self.items[-1].value = copy.deepcopy(output)
            return output
        if index >= len(self.reference):
            self.violations.append(f"random step {index} ({name!r}) happens on the neighbour only")
            return output
        ref = self.reference[index]
        if before != ref.before:
            self.violations.append(
                f"random step {index} ({name!r}): the randomness drawn before it differs between the datasets"
            )
        elif after != ref.after:
            self.timing.append(
                f"random step {index} ({name!r}) draws a different amount of randomness on the two datasets"
            )
        if np.shape(output) != np.shape(ref.value):
            self.violations.append(
                f"random step {index} ({name!r}): output shapes {np.shape(ref.value)} and {np.shape(output)} differ"
            )
        rng.bit_generator.state = copy.deepcopy(ref.after)
        return copy.deepcopy(ref.value)


def _run(mechanism, data, seed: int, recorder: _Run):
    rng = np.random.Generator(np.random.PCG64(seed))
    with _trace.recording(recorder):
        try:
            return mechanism(data, rng), None
        except Exception as err:  # noqa: BLE001 - a run that raises is compared, not propagated
            return None, err


def _same(a, b) -> bool:
    """Deep equality of recorded public values (dicts, lists, arrays, numbers, strings)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))
    return bool(a == b)


def _distance(a, b, norm: str, exact: bool):
    """The distance between two statistics in ``norm``: exact (Python integers and fractions) for exact ones."""
    if norm == "spectral":
        difference = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
        return float(np.abs(np.linalg.eigvalsh((difference + difference.T) / 2)).max())
    if not exact:
        difference = np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)).ravel()
        if norm == "l1":
            return float(difference.sum())
        if norm == "l2":
            return float(np.sqrt((difference * difference).sum()))
        return float(difference.max(initial=0.0))
    left, right = np.asarray(a, dtype=object).ravel(), np.asarray(b, dtype=object).ravel()
    differences = [abs(Fraction(x) - Fraction(y)) for x, y in zip(left, right, strict=True)]
    if norm == "l1":
        return sum(differences, Fraction(0))
    if norm == "l2":
        return sum((v * v for v in differences), Fraction(0))  # the square: compared with declared²
    return max(differences, default=Fraction(0))


def _within(distance, declared, norm: str, exact: bool) -> tuple[bool, float]:
    """Whether ``distance`` is within ``declared``, and the distance as a float in the declared norm's units."""
    if exact and norm != "spectral":
        bound = Fraction(declared)
        if norm == "l2":
            return distance <= bound * bound, math.sqrt(distance)
        return distance <= bound, float(distance)
    return distance <= float(declared) * (1 + 1e-9), float(distance)


def check_sensitivity(mechanism: Callable[[object, np.random.Generator], object], data, neighbour, *, seed: int = 0):
    """Run ``mechanism`` on a dataset and a neighbour with the noise frozen, and check its declared sensitivities.

    The sensitivity test of Cebere et al. (PETS 2026): the mechanism runs on ``data``, then on ``neighbour`` with the
    same random source, and every random step of the second run returns what it returned in the first (and leaves
    the source where the first left it), so the two runs differ only through the data. dpstats' instrumentation
    point (:mod:`dpstats._trace`, off outside this function) reports, in order, every statistic before noise with
    the sensitivity declared for it, every random step and every charge. The check:

    * the control flow is the same: the same sequence of statistics, random steps and charges, the same shapes,
      the same declared sensitivities and privacy events (a calibration read from the data would differ), both
      runs return or both raise, and the randomness drawn before each random step is the same;
    * each statistic moves by no more than its declared sensitivity, in the declared norm: the integer statistic
      on the noise grid of every additive release (L1 for Laplace, L2 for Gaussian noise), an exponential
      mechanism's scores (the largest change over its outputs; the spectral norm for PCA's quadratic score), an
      ERM minimiser (L2).

    A random step that draws a different amount of randomness on the two datasets is reported under ``timing``.
    Point it at a mechanism of your own: build its noise with :func:`dpstats.noise.release.make_noise` (every
    release through ``Noise.apply`` is instrumented), or call :func:`dpstats.audit.observe` and
    :func:`dpstats.audit.draw` yourself. A check passes or flags these two datasets only: worst-case neighbours
    (:func:`neighbours_at_bounds`, :func:`neighbours_on_the_sphere`, ...) make it sharp.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, rng) -> release``; it must draw every random number from ``rng``.
    data, neighbour : object
        Two neighbouring datasets.
    seed : int, default 0
        Seed of the (PCG64) random source both runs share.

    Returns
    -------
    SensitivityReport

    References
    ----------
    T. Cebere et al., PETS 2026: 13 privacy violations in 12 DP libraries found by running each mechanism on a
    dataset and a neighbour with the noise frozen. M. Lokna, A. Paradis, D. I. Dimitrov & M. Vechev, "Group and
    attack: auditing differential privacy", CCS 2023 (testing implementations on chosen neighbours).

    Examples
    --------
    >>> import dpstats as dps
    >>> from dpstats.audit import check_sensitivity
    >>> report = check_sensitivity(lambda x, r: dps.mean(x, 1.0, bounds=(0, 1), rng=r), [0.0, 0.0], [0.0, 1.0])
    >>> report.ok, round(report.tightness, 3)
    (True, 1.0)
    """
    reference = _Run()
    first, first_error = _run(mechanism, data, seed, reference)
    replay = _Run(reference.items)
    second, second_error = _run(mechanism, neighbour, seed, replay)
    violations = list(replay.violations)
    if (first_error is None) != (second_error is None):
        raised, error = ("the dataset", first_error) if first_error is not None else ("the neighbour", second_error)
        violations.append(f"only {raised} raised: {type(error).__name__}: {error}")
    elif first_error is not None and type(first_error) is not type(second_error):
        violations.append(f"the runs raised {type(first_error).__name__} and {type(second_error).__name__}")
    checks = []
    left, right = reference.items, replay.items
    for step, (a, b) in enumerate(zip(left, right, strict=False)):
        if (a.kind, a.name) != (b.kind, b.name):
            violations.append(f"control flow differs at step {step}: {a.kind} {a.name!r} against {b.kind} {b.name!r}")
            break
        if a.kind == "event" and not _same(a.value, b.value):
            violations.append(f"step {step} ({a.name}) differs between the datasets: {a.value} against {b.value}")
        if a.kind != "observe":
            continue
        if a.sensitivity != b.sensitivity or a.norm != b.norm:
            violations.append(
                f"step {step} ({a.name!r}): the declared sensitivity depends on the data ({a.sensitivity} against "
                f"{b.sensitivity})"
            )
            continue
        if np.shape(a.value) != np.shape(b.value):
            violations.append(f"step {step} ({a.name!r}): shapes {np.shape(a.value)} and {np.shape(b.value)} differ")
            continue
        ok, observed = _within(_distance(a.value, b.value, a.norm, a.exact), a.sensitivity, a.norm, a.exact)
        checks.append(StatisticCheck(step, a.name, a.norm, float(a.sensitivity), observed, bool(ok)))
        if not ok:
            violations.append(
                f"step {step} ({a.name!r}) moved by {observed:.6g} in {a.norm}, more than its declared sensitivity "
                f"{float(a.sensitivity):.6g}"
            )
    if len(left) != len(right) and not any(v.startswith("control flow") for v in violations):
        violations.append(f"the runs went through {len(left)} and {len(right)} instrumented points")
    if first_error is None and second_error is None and not checks and not violations:
        violations.append("no statistic was declared: the release did not pass through the instrumentation point")
    return SensitivityReport(
        tuple(checks),
        sum(1 for i in left if i.kind == "event"),
        sum(1 for i in left if i.kind == "draw"),
        tuple(violations),
        tuple(replay.timing),
    )


#: The instrumentation point, for a mechanism of your own (see :func:`check_sensitivity`).
observe = _trace.observe
draw = _trace.draw


# ----------------------------------------------------------------------------- worst-case neighbours


def neighbours_at_bounds(lower, upper, n: int = 4) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs of datasets of ``n`` records in [lower, upper] that differ in one record, moved between the bounds: all
    records at ``lower`` against one at ``upper``; all at ``upper`` against one at ``lower``; and half at each
    bound against one record moved across (the worst cases of sums, means, variances, counts in bins, ranks).
    ``lower`` and ``upper`` are numbers or arrays (one value per coordinate of a record)."""
    lo, hi = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
    pairs = []
    for base, moved in ((lo, hi), (hi, lo)):
        data = np.broadcast_to(base, (n, *base.shape)).copy()
        neighbour = data.copy()
        neighbour[0] = moved
        pairs.append((data, neighbour))
    half = np.broadcast_to(lo, (n, *lo.shape)).copy()
    half[: n // 2] = hi
    across = half.copy()
    across[0] = lo
    pairs.append((half, across))
    return pairs


def neighbours_on_the_sphere(n: int = 6, d: int = 3) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pairs of n × d datasets of rows with ‖x‖₂ <= 1 that differ in one row of norm 1: the row e₁ replaced by e₂
    (orthogonal: the worst case of second-moment statistics, ‖xxᵀ − x′x′ᵀ‖_F = √2) and by −e₁ (of linear ones,
    ‖x − x′‖ = 2); the other rows are spread over the sphere."""
    rows = np.random.default_rng(n * 1000 + d).normal(size=(n, d))
    rows /= 2 * np.linalg.norm(rows, axis=1, keepdims=True)
    rows[0] = np.eye(d)[0]
    pairs = []
    for replacement in (np.eye(d)[1 % d], -np.eye(d)[0]):
        neighbour = rows.copy()
        neighbour[0] = replacement
        pairs.append((rows, neighbour))
    return pairs


def neighbours_with_labels(n: int = 8, d: int = 3) -> list[tuple[tuple, tuple]]:
    """Pairs of labelled datasets (X, y), rows of norm <= 1 and labels ±1, that differ in one example of norm 1:
    its label flipped, and the example moved to the opposite point with its label flipped too."""
    rows = np.random.default_rng(n * 1000 + d).normal(size=(n, d))
    rows /= 4 * np.linalg.norm(rows, axis=1, keepdims=True)
    rows[0] = np.eye(d)[0]
    labels = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    flipped = labels.copy()
    flipped[0] = -1.0
    moved = rows.copy()
    moved[0] = -moved[0]
    return [((rows, labels), (rows, flipped)), ((rows, labels), (moved, flipped))]


def neighbours_of_a_unit(lower: float, upper: float, units: int = 4, max_rows: int = 3) -> list[tuple[tuple, tuple]]:
    """Pairs of (values, identifiers) datasets that differ in all records of one privacy unit: unit 0 with one
    record at ``lower`` against ``max_rows`` records at ``upper`` (and the reverse); the other units keep one record
    each. The number of records changes too, as the replace-one-unit relation allows."""
    others = np.full(units - 1, (lower + upper) / 2)
    ids = np.arange(1, units)
    one = (np.concatenate([[lower], others]), np.concatenate([[0], ids]))
    many = (np.concatenate([np.full(max_rows, upper), others]), np.concatenate([np.zeros(max_rows, int), ids]))
    return [(one, many), (many, one)]
