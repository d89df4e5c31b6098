"""mean / variance / histogram: floor ratios against NumPy's own, and diffprivlib's tools (if installed).

Two sizes: n = 10^7 against NumPy's own (the exact fixed-point sums at the memory floor, target within
:data:`FLOOR_LIMIT`), and a small call, n = 100 (a student's call, an audit's call, where the fixed cost of a
release dominates: validation, calibration, the random source, the exact noise), against diffprivlib's
``tools.mean`` (target: no slower). Both are called with their default random source, as a user would: dpstats'
cryptographically secure generator, diffprivlib's global NumPy state; a seeded row (``rng=0`` against
``random_state=0``) is reported beside it without a target. Each ratio is reported in wall time and in CPU time
(the calling thread's: on a loaded machine, the work of the call rather than the time the scheduler gave others).
"""

from __future__ import annotations

import numpy as np

import dpstats as dps

from ._harness import Results, interleaved_medians, interleaved_times, status

FLOOR_LIMIT = 2.0  # target (issue 22): within 2x of NumPy's own, validation included
SMALL_N = 100
SMALL_LIMIT = 1.0  # target (issue 40): a small call no slower than diffprivlib's
SMALL_ROUNDS = 40  # interleaved rounds per repetition for sub-millisecond calls


def run(results: Results, *, tiny: bool, repeats: int) -> None:
    n = 10_000 if tiny else 10_000_000
    x = np.random.default_rng(0).uniform(0.0, 1.0, size=n)
    cases = {
        "mean": (lambda: dps.mean(x, 1.0, bounds=(0, 1), rng=0), lambda: np.mean(x)),
        "variance": (lambda: dps.variance(x, 1.0, bounds=(0, 1), rng=0), lambda: np.var(x)),
        "histogram": (
            lambda: dps.histogram(x, 1.0, bins=10, range=(0, 1), rng=0),
            lambda: np.histogram(x, bins=10, range=(0, 1)),
        ),
    }
    for name, (ours, floor) in cases.items():
        t = interleaved_times({"ours": ours, "floor": floor}, repeats=repeats)
        for clock, metric in ((0, "time / numpy"), (1, "CPU time / numpy")):
            ratio = t["ours"][clock] / t["floor"][clock]
            results.add(
                "floor",
                f"{name}, n={n:.0e}",
                metric,
                ratio,
                f"<= {FLOOR_LIMIT}",
                status(ratio, FLOOR_LIMIT),
                f"dpstats {t['ours'][clock] * 1e3:.2f} ms, numpy {t['floor'][clock] * 1e3:.2f} ms",
            )
    _peers(results, x, repeats)
    _small_call(results, repeats)


def _peers(results: Results, x: np.ndarray, repeats: int) -> None:
    try:
        from diffprivlib import tools
    except ImportError:
        results.add("peers", "diffprivlib tools", "skipped", "not installed", note="run `make bench`")
        return
    cases = {
        "mean": (
            lambda: dps.mean(x, 1.0, bounds=(0, 1), rng=0),
            lambda: tools.mean(x, epsilon=1.0, bounds=(0, 1), random_state=0),
        ),
        "variance": (
            lambda: dps.variance(x, 1.0, bounds=(0, 1), rng=0),
            lambda: tools.var(x, epsilon=1.0, bounds=(0, 1), random_state=0),
        ),
        "histogram": (
            lambda: dps.histogram(x, 1.0, bins=10, range=(0, 1), rng=0),
            lambda: tools.histogram(x, epsilon=1.0, bins=10, range=(0, 1), random_state=0),
        ),
    }
    for name, (ours, theirs) in cases.items():
        t = interleaved_medians({"ours": ours, "theirs": theirs}, repeats=repeats)
        ratio = t["ours"] / t["theirs"]
        results.add(
            "peers",
            f"{name} vs diffprivlib, n={x.size:.0e}",
            "time ratio (ours/theirs)",
            ratio,
            "<= 1",
            status(ratio, 1.0),
            f"dpstats {t['ours'] * 1e3:.2f} ms, diffprivlib {t['theirs'] * 1e3:.2f} ms",
        )


def _small_call(results: Results, repeats: int) -> None:
    """``mean`` of 100 values: dpstats against diffprivlib, both with their default source and both seeded."""
    try:
        from diffprivlib import tools
    except ImportError:
        results.add("peers", f"mean vs diffprivlib, n={SMALL_N}", "skipped", "not installed", note="run `make bench`")
        return
    x = np.random.default_rng(1).uniform(0.0, 1.0, size=SMALL_N)
    cases = {
        "default source": (
            lambda: dps.mean(x, 1.0, bounds=(0, 1)),
            lambda: tools.mean(x, epsilon=1.0, bounds=(0, 1)),
            True,
        ),
        "seeded": (
            lambda: dps.mean(x, 1.0, bounds=(0, 1), rng=0),
            lambda: tools.mean(x, epsilon=1.0, bounds=(0, 1), random_state=0),
            False,
        ),
    }
    for name, (ours, theirs, target) in cases.items():
        t = interleaved_times({"ours": ours, "theirs": theirs}, repeats=SMALL_ROUNDS * repeats, warmup=5)
        for clock, metric in ((0, "time ratio (ours/theirs)"), (1, "CPU time ratio (ours/theirs)")):
            ratio = t["ours"][clock] / t["theirs"][clock]
            results.add(
                "peers",
                f"mean vs diffprivlib, n={SMALL_N}, {name}",
                metric,
                ratio,
                f"<= {SMALL_LIMIT:g}" if target else "",
                status(ratio, SMALL_LIMIT) if target else "",
                f"dpstats {t['ours'][clock] * 1e6:.0f} us, diffprivlib {t['theirs'][clock] * 1e6:.0f} us",
            )
