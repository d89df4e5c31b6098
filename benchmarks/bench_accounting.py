"""Accounting: how tight each composition rule is, and what an accountant costs in a long session.

Tightness (issue 14): for 100 Gaussian releases with noise multiplier σ/Δ = 10 at δ = 1e-6 the PLD rule must
report ε within 1 % of the exact value (k Gaussians compose into one with multiplier σ/(Δ√k)) and never below
it; the table of releases that fit in a budget shows what the rules mean for an analyst. Each Gaussian release
under "basic" and "advanced" gets an equal share of the δ budget (their δ add up); under "zcdp" and "pld" δ is
the budget's.

Long sessions (issue 25), on a ledger of the events the mechanisms charge — a mean's discrete Laplace, a
Gaussian mean's discrete Gaussian, a quantile's exponential mechanism, with a few distinct ε each, cycled:

* **time per spend** at N = 10, 100, 1,000, 10,000 releases already in the ledger, under every rule (median of
  512 spends; their mean, the amortised cost, includes the PLD's convolution of the waiting events every 256). Target:
  under "pld", at N = 10,000 within 3x of N = 10, in one run. These spends are far from the budget (a budget
  the session does not come near, as in a session planned to fit).
* **near the budget**, where the zCDP and basic statements exceed it and the PLD decides each spend (the
  issue's sound shortcut does not apply there): the time per spend at each N, reported without a target.
* **cold, near the budget** (issue 40): a ledger of N = 2,000 releases read back with ``Accountant.from_json``
  (a new accountant, which has composed nothing), then one spend that the PLD must decide, as the first spend of
  an analyst who reopens a ledger near its budget. Targets: ``from_json`` at most 50 ms, the spend at most 10 ms,
  in a process that has built these kinds of events' distributions before; the same in a fresh process (every
  cache of distributions cleared) is reported beside them.
* **a session of 10,000 releases** end to end — dps.mean and dps.variance alternating on 1,000 values, ε = 0.01
  each, budget ε = 100 (so that the same session fits under basic composition) — under "pld" against "basic".
  Target: at most 3x.
* **reading spent** at N = 10,000 (the first read after the spends: it convolves the waiting events). Target:
  at most 0.1 s.
* **refusing a release far over the budget** (ε = 2000 against a budget of 1, a mean with Laplace and with
  Gaussian noise), after a first refusal that imports what it needs: its floor exceeds the budget, so no
  privacy-loss distribution is built (it took 15 s before). Target: at most 0.1 s.
* **ε against dp-accounting** composing the whole ledger from scratch with its own constructors (identical
  events self-composed, as dp_accounting composes k copies): the accountant's PLD within 1 %; the reported ε is
  the smallest of the PLD, zCDP and basic statements (it can be below dp_accounting's when the zCDP statement
  of the exponential mechanism is smaller), and for Gaussians alone never below the exact ε.
"""

from __future__ import annotations

import json
import math
import statistics
import time

import numpy as np

from dpstats.accounting import RULES, Accountant, Exponential, Gaussian, compose, gaussian_epsilon
from dpstats.accounting import events as _events
from dpstats.accounting import pld as pld_module
from dpstats.accounting.plan import split_epsilon
from dpstats.accounting.pld import ComposedPld
from dpstats.noise.release import make_noise

from ._harness import Results, status

PLD_LIMIT = 1.01  # PLD epsilon / exact epsilon for the plan
SPEND_LIMIT = 3.0  # pld spend at N = 10,000 / at N = 10
SESSION_LIMIT = 3.0  # session under pld / under basic
SPENT_LIMIT = 0.1  # seconds to read spent at N = 10,000
REFUSAL_LIMIT = 0.1  # seconds to refuse a release whose own epsilon is far over the budget
COLD_N = 2_000
COLD_SPEND_LIMIT = 0.010  # seconds: the first spend near the budget after from_json, nothing composed before
FROM_JSON_LIMIT = 0.050  # seconds: from_json of a ledger of COLD_N releases
TIMED_SPENDS = 60  # near the budget
AMORTISED_SPENDS = 512  # far from it: two cycles of the PLD's convolution of the waiting events (every 256)


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


def _session_events(exponential: bool = True) -> list:
    """The events of a mean (discrete Laplace, n = 1,000 values in [0, 1]), a Gaussian mean (δ = 1e-10, tiny so
    that 10,000 of them fit a δ budget of 1e-5 under basic composition) and a quantile, at a few ε each."""
    events = []
    for epsilon in (0.01, 0.02, 0.03):
        events.append(make_noise(epsilon=epsilon, delta=0.0, sensitivity=1e-3, changed=1).event)
        events.append(make_noise(epsilon=epsilon, delta=1e-10, sensitivity=1e-3, changed=1).event)
        if exponential:
            events.append(Exponential(epsilon))
    return events


def _filled(rule: str, count: int, events: list, epsilon: float = 1e6) -> Accountant:
    acc = Accountant(epsilon, 1e-5, composition=rule)
    for i in range(count):
        acc.record("m", [events[i % len(events)]])
    return acc


def _time_spends(acc: Accountant, events: list, count: int = TIMED_SPENDS) -> list[float]:
    times = []
    for i in range(count):
        start = time.perf_counter()
        acc.record("m", [events[i % len(events)]])
        times.append(time.perf_counter() - start)
    return times


def _spend_table(results: Results, sizes: list[int]) -> None:
    events = _session_events()
    for rule in RULES:
        acc, filled, medians = Accountant(1e6, 1e-5, composition=rule), 0, {}
        for n in sizes:
            while filled < n:
                acc.record("m", [events[filled % len(events)]])
                filled += 1
            times = _time_spends(acc, events, AMORTISED_SPENDS)
            filled += AMORTISED_SPENDS
            medians[n] = statistics.median(times)
            results.add(
                "accounting",
                f"one spend, far from the budget, N={n}",
                f"ms, {rule}",
                medians[n] * 1e3,
                note=f"mean {statistics.mean(times) * 1e3:.3f} ms over {AMORTISED_SPENDS} spends (amortised: with the "
                "convolution of the waiting events every 256)",
            )
        if rule == "pld":
            ratio = medians[sizes[-1]] / medians[sizes[0]]
            results.add(
                "accounting",
                f"pld spend, N={sizes[-1]} / N={sizes[0]}",
                "ratio",
                ratio,
                f"<= {SPEND_LIMIT:g}",
                status(ratio, SPEND_LIMIT),
            )


def _near_budget_table(results: Results, sizes: list[int]) -> None:
    """Spends decided by the PLD: a ledger of N Laplace and Gaussian events and a budget that the timed small
    releases exactly use up (the PLD total with them), where the zCDP statement already exceeds the budget."""
    events = _session_events(exponential=False)
    small = make_noise(epsilon=1e-3, delta=0.0, sensitivity=1e-3, changed=1).event
    for n in sizes:
        acc = _filled("pld", n, events)
        items = acc.composition_items()
        budget = compose(items + [small] * TIMED_SPENDS, "pld", 1e-5)[0] * (1 + 1e-9)
        data = json.loads(acc.to_json())
        data["epsilon"] = budget
        near = Accountant.from_json(json.dumps(data))
        zcdp_total = compose(items + [small], "zcdp", 1e-5)[0]
        times = _time_spends(near, [small])
        results.add(
            "accounting",
            f"one spend near the budget (PLD decides), N={n}",
            "ms, pld",
            statistics.median(times) * 1e3,
            note=f"budget {budget:.4g}; the zCDP total {zcdp_total:.4g} is above it",
        )


def _cold_caches() -> None:
    """Forget every distribution and checked event this process has kept (as a fresh process that reads a
    ledger)."""
    for module, name in ((pld_module, "event_pld"), (pld_module, "_power"), (pld_module, "free")):
        getattr(getattr(module, name, None), "cache_clear", lambda: None)()
    for name in ("_label_problem", "_event_from_content"):
        getattr(getattr(_events, name, None), "cache_clear", lambda: None)()


def _cold_table(results: Results, n: int, repeats: int) -> None:
    """``from_json`` of a ledger of ``n`` releases near its budget, then its first spend (decided by the PLD): a new
    accountant, which has composed nothing (its own running total is built by ``from_json``), in a process that has
    seen these kinds of events before (the targets), and in one that has built nothing (every cache cleared:
    reported without a target)."""
    events = _session_events(exponential=False)
    small = make_noise(epsilon=1e-3, delta=0.0, sensitivity=1e-3, changed=1).event
    acc = _filled("pld", n, events)
    items = acc.composition_items()
    budget = compose(items + [small], "pld", 1e-5)[0] * (1 + 1e-9)
    zcdp_total = compose(items + [small], "zcdp", 1e-5)[0]
    data = json.loads(acc.to_json())
    data["epsilon"] = budget
    text = json.dumps(data)
    clocks = (("ms", time.perf_counter), ("CPU ms", time.thread_time))
    for process in ("warm process", "fresh process"):
        loads, spends = {unit: [] for unit, _ in clocks}, {unit: [] for unit, _ in clocks}
        for _ in range(max(repeats, 3)):
            if process == "fresh process":
                _cold_caches()
            start = [clock() for _, clock in clocks]
            near = Accountant.from_json(text)
            loaded = [clock() for _, clock in clocks]
            near.record("m", [small])
            spent = [clock() for _, clock in clocks]
            for (unit, _), a, b, c in zip(clocks, start, loaded, spent, strict=True):
                loads[unit].append(b - a)
                spends[unit].append(c - b)
        rows = (("from_json", loads, FROM_JSON_LIMIT), ("first spend near the budget", spends, COLD_SPEND_LIMIT))
        for name, times, limit in rows:
            for unit, _ in clocks:
                value = statistics.median(times[unit])
                target = process == "warm process" and n == COLD_N
                results.add(
                    "accounting",
                    f"{name}, N={n} (pld, {process})",
                    unit,
                    value * 1e3,
                    f"<= {limit * 1e3:g}" if target else "",
                    status(value, limit) if target else "",
                    f"budget {budget:.6g}, the zCDP total {zcdp_total:.6g} is above it",
                )


def _session(rule: str, releases: int) -> float:
    """Seconds for ``releases`` releases (mean and variance alternating on 1,000 values, ε = 0.01 each)."""
    x = np.random.default_rng(0).uniform(0, 1, 1000)
    from dpstats import mean, variance

    acc = Accountant(releases * 0.01 * (1 + 1e-9), 1e-6, composition=rule)  # the float 0.01 exceeds 1/100
    start = time.perf_counter()
    for i in range(releases):
        (mean if i % 2 == 0 else variance)(x, 0.01, bounds=(0, 1), rng=i, accountant=acc)
    return time.perf_counter() - start


def _session_table(results: Results, releases: int) -> None:
    _session("pld", 20)  # warm up (imports, the first privacy-loss distributions)
    seconds = {rule: _session(rule, releases) for rule in ("pld", "basic")}
    for rule, value in seconds.items():
        results.add("accounting", f"session of {releases} releases (mean, variance)", f"s, {rule}", value)
    ratio = seconds["pld"] / seconds["basic"]
    results.add(
        "accounting",
        f"session of {releases} releases, pld / basic",
        "ratio",
        ratio,
        f"<= {SESSION_LIMIT:g}",
        status(ratio, SESSION_LIMIT),
    )


def _refusal_table(results: Results) -> None:
    from dpstats import mean
    from dpstats.exceptions import BudgetExceededError

    acc = Accountant(1.0, 1e-6)
    x = np.array([0.1, 0.5])
    seconds = {}
    for delta in (0.0, 1e-7, 0.0, 1e-7):  # the first two import what a refusal needs (scipy.optimize, ...)
        start = time.perf_counter()
        try:
            mean(x, 2000.0, delta, bounds=(0, 1), rng=0, accountant=acc)
        except BudgetExceededError:
            seconds[delta] = time.perf_counter() - start
    for delta, noise in ((0.0, "Laplace"), (1e-7, "Gaussian")):
        results.add(
            "accounting",
            f"refuse epsilon=2000 against a budget of 1 (mean, {noise})",
            "s",
            seconds[delta],
            f"<= {REFUSAL_LIMIT:g}",
            status(seconds[delta], REFUSAL_LIMIT),
        )


def _dp_accounting_from_scratch(events: list, delta: float) -> float:
    """dp_accounting's ε for ``events``, built with its own constructors, k identical events self-composed."""
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    counts: dict = {}
    for e in events:
        counts[e] = counts.get(e, 0) + 1
    composed = None
    for e, k in counts.items():
        if isinstance(e, Gaussian):
            sigma = math.sqrt(e.sigma**2 - 9.0) if e.discrete else e.sigma  # the smoothing lemma's σ_c, σ₁ = 3
            loss = pld.from_gaussian_mechanism(sigma / e.sensitivity)
        elif isinstance(e, Exponential):
            loss = pld.from_privacy_parameters(common.DifferentialPrivacyParameters(e.epsilon, 0.0))
        else:
            loss = pld.from_discrete_laplace_mechanism(1 / e.scale, sensitivity=int(e.sensitivity))
        loss = loss.self_compose(k) if k > 1 else loss
        composed = loss if composed is None else composed.compose(loss)
    return composed.get_epsilon_for_delta(delta)


def _spent_and_epsilon(results: Results, n: int) -> None:
    for exponential in (False, True):
        events = _session_events(exponential)
        acc = _filled("pld", n, events)
        start, cpu = time.perf_counter(), time.thread_time()
        ours = acc.spent[0]
        seconds, cpu = time.perf_counter() - start, time.thread_time() - cpu
        mix = "Laplace, Gaussian, exponential" if exponential else "Laplace, Gaussian"
        if exponential:
            results.add(
                "accounting",
                f"read spent, N={n} ({mix})",
                "s",
                seconds,
                f"<= {SPENT_LIMIT:g}",
                status(seconds, SPENT_LIMIT),
                f"CPU {cpu * 1e3:.1f} ms",
            )
        ledger = [events[i % len(events)] for i in range(n)]
        theirs = _dp_accounting_from_scratch(ledger, 1e-5)
        running = ComposedPld()  # the accountant's PLD statement alone, composed as the accountant composes it
        for event in ledger:
            running.add([event])
        pld_only = running.epsilon(1e-5)
        ratio = pld_only / theirs
        results.add(
            "accounting",
            f"epsilon vs dp-accounting from scratch, N={n} ({mix})",
            "pld / dp-accounting",
            ratio,
            f"in [{2 - PLD_LIMIT:g}, {PLD_LIMIT:g}]",
            "met" if abs(ratio - 1) <= PLD_LIMIT - 1 else "MISSED",
            f"accountant's PLD {pld_only:.6g}, dp-accounting {theirs:.6g}, reported (smallest statement) {ours:.6g}",
        )
    only = Accountant(1e6, 1e-5)
    for _ in range(n):  # n Gaussians with σ/Δ = √n compose exactly into one with σ/Δ = 1
        only.record("g", [Gaussian(1.0, 1e-9, sigma=math.sqrt(n), sensitivity=1.0)])
    exact = _exact_gaussian_epsilon(1.0, 1e-5)
    ratio = only.spent[0] / exact
    results.add(
        "accounting",
        f"{n} Gaussians: epsilon / exact",
        "ratio",
        ratio,
        f"in [1, {PLD_LIMIT:g}]",
        status(ratio, PLD_LIMIT) if ratio >= 1 else "MISSED",
        f"exact {exact:.6g}",
    )


def _exact_gaussian_epsilon(multiplier: float, delta: float) -> float:
    """Balle & Wang's condition solved with scipy, independently of dpstats."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    def gap(eps):
        return norm.cdf(1 / (2 * multiplier) - eps * multiplier) - math.exp(eps) * norm.cdf(
            -1 / (2 * multiplier) - eps * multiplier
        )

    return brentq(lambda eps: gap(eps) - delta, 1e-9, 100, xtol=1e-14)


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
    sizes = [10, 100] if tiny else [10, 100, 1_000, 10_000]
    _spend_table(results, sizes)
    _near_budget_table(results, sizes)
    _cold_table(results, 200 if tiny else COLD_N, repeats)
    _session_table(results, 200 if tiny else 10_000)
    _spent_and_epsilon(results, sizes[-1])
    _refusal_table(results)
