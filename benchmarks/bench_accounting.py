"""Accounting: how tight each composition rule is, and how many releases fit in a budget under each.

Issue 14: for 100 Gaussian releases with noise multiplier σ/Δ = 10 at δ = 1e-6 the PLD rule must report ε within
1 % of the exact value (k Gaussians compose into one with multiplier σ/(Δ√k)) and never below it; the table of
releases that fit in a budget shows what the rules mean for an analyst. Each Gaussian release under "basic" and
"advanced" gets an equal share of the δ budget (their δ add up); under "zcdp" and "pld" δ is the budget's.
Also times one accountant spend (a check and a record) per rule on a ledger of 20 mixed releases.
"""

from __future__ import annotations

import math
import time

from dpstats.accounting import RULES, Accountant, Gaussian, Laplace, compose, gaussian_epsilon
from dpstats.accounting.plan import split_epsilon

from ._harness import Results, status

PLD_LIMIT = 1.01  # PLD epsilon / exact epsilon for the plan


def _gaussians(count: int, multiplier: float, rule: str, delta: float) -> list[Gaussian]:
    """``count`` Gaussian releases with σ/Δ = ``multiplier``, each labelled with its own (ε, δ) for ``rule``."""
    each = split_epsilon(delta / 2 if rule == "advanced" else delta, count) if rule in ("basic", "advanced") else delta
    return [Gaussian(gaussian_epsilon(multiplier, each), each, sigma=multiplier, sensitivity=1.0)] * count


def _total(count: int, multiplier: float, rule: str, delta: float) -> float:
    slack = delta / 2 if rule == "advanced" else None
    eps, used = compose(_gaussians(count, multiplier, rule, delta), rule, delta, slack=slack)
    return eps if used <= delta else math.inf


def _releases_that_fit(multiplier: float, rule: str, epsilon: float, delta: float) -> int:
    """The largest k such that k Gaussian releases with this multiplier fit in (ε, δ) under ``rule``."""
    lo, hi = 0, 1
    while _total(hi, multiplier, rule, delta) <= epsilon:
        lo, hi = hi, hi * 2
        if hi > 1 << 20:
            return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _total(mid, multiplier, rule, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    return lo


def _spend_time(rule: str, tiny: bool) -> float:
    """Seconds for one more spend on an accountant holding 20 releases (10 Laplace, 10 Gaussian)."""
    acc = Accountant(1e6, 1e-5, composition=rule)
    laplace = Laplace.calibrated(10.0, 1.0)
    gaussian = Gaussian(gaussian_epsilon(20.0, 1e-8), 1e-8, sigma=20.0, sensitivity=1.0)
    for _ in range(2 if tiny else 10):
        acc.record("laplace", [laplace])
        acc.record("gaussian", [gaussian])
    start = time.perf_counter()
    acc.record("gaussian", [gaussian])
    return time.perf_counter() - start


def run(results: Results, *, tiny: bool, repeats: int) -> None:
    delta = 1e-6
    exact = gaussian_epsilon(1.0, delta)  # 100 releases of sigma/Delta = 10 are one Gaussian of sigma/Delta = 1
    for rule in RULES:
        eps = _total(100, 10.0, rule, delta)
        if rule == "pld":
            ratio = eps / exact
            results.add(
                "accounting",
                "100 Gaussians sigma/Delta=10, delta=1e-6",
                "pld eps / exact",
                ratio,
                f"in [1, {PLD_LIMIT}]",
                status(ratio, PLD_LIMIT) if ratio >= 1 else "MISSED",
                f"pld {eps:.4f}, exact {exact:.4f}",
            )
        results.add(
            "accounting", f"100 Gaussians sigma/Delta=10, delta=1e-6, {rule}", "epsilon", eps, note=f"exact {exact:.3f}"
        )
    budgets = [(1.0, 10.0)] if tiny else [(1.0, 10.0), (1.0, 50.0), (10.0, 10.0)]
    for epsilon, multiplier in budgets:
        counts = {rule: _releases_that_fit(multiplier, rule, epsilon, delta) for rule in RULES}
        for rule, count in counts.items():
            results.add(
                "accounting",
                f"releases that fit: eps={epsilon:g}, delta=1e-6, sigma/Delta={multiplier:g}",
                f"{rule}",
                count,
                note=f"{count / max(counts['basic'], 1):.1f}x basic",
            )
    for rule in RULES:
        results.add(
            "accounting",
            f"one spend on a ledger of {4 if tiny else 20} releases",
            f"ms, {rule}",
            _spend_time(rule, tiny) * 1e3,
        )
