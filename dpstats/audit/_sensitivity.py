"""The sensitivity checker (after Cebere et al.): a mechanism run on a dataset and on a neighbour with the noise
frozen; the control flow must be the same and every declared statistic move by no more than its declared
sensitivity (see :func:`check_sensitivity`)."""

from __future__ import annotations

import copy
import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .. import _trace

__all__ = [
    "SensitivityReport",
    "StatisticCheck",
    "check_sensitivity",
    "draw",
    "observe",
    "structure",
    "structure_differences",
]


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


def structure(release, where: str = "release") -> dict[str, object]:
    """What a release shows besides its values: for every part of it (a path like ``release[0]`` or
    ``release.components_``), its type, and a NumPy array's dtype and shape, a pandas object's dtypes, name, column
    names and its index's dtype and name, a polars frame's schema. Released values — numbers, and the keys of an
    index — are left out: with the noise frozen they may differ between neighbours through the statistic (and
    keys selected privately through the selection's δ); their types and names may not.

    Parts are followed into tuples, lists, dicts, dataclasses and the public attributes of dpstats' result objects
    and fitted estimators."""
    found: dict[str, object] = {}
    _describe(release, where, found, depth=0)
    return found


def structure_differences(first, second) -> list[str]:
    """The parts of :func:`structure` that differ between two releases, as readable lines."""
    a, b = structure(first), structure(second)
    return [
        f"{key} ({a.get(key, 'absent')} against {b.get(key, 'absent')})"
        for key in sorted(a.keys() | b.keys())
        if a.get(key) != b.get(key)
    ]


def _describe(value, where: str, found: dict, depth: int) -> None:
    found[f"{where}: type"] = f"{type(value).__module__}.{type(value).__qualname__}"
    if depth > 4:
        return
    library = type(value).__module__.partition(".")[0]
    if isinstance(value, np.ndarray):
        found[f"{where}: dtype"] = str(value.dtype)
        found[f"{where}: shape"] = value.shape
    elif isinstance(value, np.generic):
        found[f"{where}: dtype"] = str(value.dtype)
    elif library == "pandas" and hasattr(value, "index"):
        found[f"{where}: dtypes"] = str(getattr(value, "dtypes", getattr(value, "dtype", None)))
        found[f"{where}: name"] = repr(getattr(value, "name", None))
        found[f"{where}: index dtype"] = str(value.index.dtype)
        found[f"{where}: index names"] = repr(list(value.index.names))
        if hasattr(value, "columns"):
            found[f"{where}: columns"] = repr(list(value.columns))
            found[f"{where}: columns dtype"] = str(value.columns.dtype)
    elif library == "pandas" and hasattr(value, "dtype"):  # an Index
        found[f"{where}: dtype"] = str(value.dtype)
        found[f"{where}: names"] = repr(list(getattr(value, "names", [])))
    elif library == "polars" and hasattr(value, "schema"):
        found[f"{where}: schema"] = repr(value.schema)
    elif isinstance(value, (tuple, list)):
        found[f"{where}: length"] = len(value)
        for i, part in enumerate(value):
            _describe(part, f"{where}[{i}]", found, depth + 1)
    elif isinstance(value, dict):
        found[f"{where}: keys"] = repr(list(value))
        for key, part in value.items():
            _describe(part, f"{where}[{key!r}]", found, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            _describe(getattr(value, field.name), f"{where}.{field.name}", found, depth + 1)
    elif library in ("dpstats", "sklearn") and hasattr(value, "__dict__"):
        public = sorted(k for k in vars(value) if not k.startswith("_"))
        found[f"{where}: attributes"] = repr(public)
        for key in public:
            _describe(getattr(value, key), f"{where}.{key}", found, depth + 1)


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
      ERM minimiser (L2);
    * whether the call releases is the same (a valid input refused on one side only is a refusal decided by the
      data), and when both refuse, with the same message (a refusal whose text holds a number computed from the
      data differs between neighbours);
    * what the release shows besides its values is the same (:func:`structure`: its type, dtypes, shapes, index
      and column names, an index's dtype, fitted attributes): released with the noise frozen, two neighbours may
      differ in values only. (One unit's key of another type turned a released index's dtype from int64 to
      float64; issue 39.)

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
    elif first_error is not None and str(first_error) != str(second_error):
        violations.append(
            f"both runs raised {type(first_error).__name__}, with messages that differ (a refusal's text depends on "
            f"the data): {first_error} | {second_error}"
        )
    elif first_error is None:
        violations += [
            f"the release's {difference} differs between the datasets (it depends on the data, not only on "
            "public values and the noise)"
            for difference in structure_differences(first, second)
        ]
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
