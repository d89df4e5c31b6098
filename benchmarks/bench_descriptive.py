"""mean / variance / histogram: floor ratios against NumPy's own, and diffprivlib's tools (if installed)."""

from __future__ import annotations

import numpy as np

import dpstats as dps

from ._harness import Results, interleaved_medians, status

FLOOR_LIMIT = 2.0  # target (issue 22): within 2x of NumPy's own, validation included


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
        t = interleaved_medians({"ours": ours, "floor": floor}, repeats=repeats)
        ratio = t["ours"] / t["floor"]
        results.add(
            "floor",
            f"{name}, n={n:.0e}",
            "time / numpy",
            ratio,
            f"<= {FLOOR_LIMIT}",
            status(ratio, FLOOR_LIMIT),
            f"dpstats {t['ours'] * 1e3:.2f} ms",
        )
    _peers(results, x, repeats)


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
