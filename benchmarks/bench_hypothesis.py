"""Type-I error and power of private hypothesis tests (issue 37): dpstats.hypothesis against the naive approach and
OpenDP.

Run the full grid with ``python -m benchmarks.bench_hypothesis --out reports/benchmarks/hypothesis`` (OpenDP's
binomial test needs the benchmark environment, ``make bench``, which has no matplotlib: run the grid there with
``--no-timing``, then ``--from-cells reports/benchmarks/hypothesis/cells.csv`` in the project's environment for
the figures and the timing); ``--tiny`` is the seconds-long smoke run the test
suite uses (through ``python -m benchmarks --tiny``). Everything but the grid's choice is in
:mod:`dpstats.compendium.hypothesis_benchmark` (the scenarios, the naive approach, OpenDP, the targets, the figures).

Grid (the issue's): the eight tests; n ∈ {30, 100, 10³, 10⁴}; ε ∈ {0.1, 1, 4} (δ = 0); α = 0.05; 2000 null
repetitions of dpstats per cell (a type-I error of 0.05 then has a standard error of 0.5 %), 1000 of the naive
approach and of OpenDP on the same data. Power curves: the scenarios' effect sizes at n ∈ {100, 10³}, ε = 1, 500
repetitions each.

Targets, as rows with status: dpstats' type-I error <= α + 0.01 in every cell (met/MISSED); the naive approach's
(fails/holds); one call at n = 10⁶ with the default number of simulations in at most 2 s (median of the repeats).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from dpstats import hypothesis
from dpstats.compendium import hypothesis_benchmark as hb

from ._harness import Results, status

SECTION = "hypothesis"
NS = (30, 100, 1_000, 10_000)
EPSILONS = (0.1, 1.0, 4.0)
POWER_NS = (100, 1_000)
POWER_EPSILONS = (1.0,)


def timing(results: Results, *, n: int, repeats: int) -> None:
    """One call of each test at n records with its defaults (the median of ``repeats``): the target is 2 s."""
    rng = np.random.default_rng(0)
    calls = {}
    for test, scenario in hb.SCENARIOS.items():
        data, options = scenario.draw(n, 0.0, rng), scenario.options(0.0)
        calls[test] = (lambda t, d, o: lambda: getattr(hypothesis, t)(*d, epsilon=1.0, **o, rng=1))(test, data, options)
    for test, call in calls.items():
        call()  # warm-up (imports)
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        seconds = float(np.median(times))
        results.add(SECTION, f"{test}, n={n}", "one call (s)", seconds, target="<= 2", status=status(seconds, 2.0))


def report(results: Results, cells: list, *, figure: bool = True) -> None:
    """The cells and the targets as result rows (and the figures)."""
    for c in cells:
        what = "type-I error" if c.effect == 0 else f"power, d={c.effect:g}"
        results.add(SECTION, f"{c.test}, n={c.n}, eps={c.epsilon:g}", f"{c.method} {what}", c.rate)
    for row in hb.check_targets(cells):
        results.add(SECTION, "targets", row["target"], row["value"], status=row["status"], note=row["note"])
    try:
        import matplotlib  # noqa: F401 (not in the benchmark environment: re-render with --from-cells)
    except ImportError:
        figure = False
    if figure and cells:
        results.figures["hypothesis_type_one"] = hb.plot_type_one(cells)
        if any(c.effect > 0 for c in cells):
            results.figures["hypothesis_power"] = hb.plot_power(cells)


def _config(tiny: bool) -> dict:
    if tiny:
        return dict(tests=("binomtest", "chisquare", "ttest_1samp", "kruskal"), ns=(30,), epsilons=(1.0,), reps=20)
    return dict(tests=hb.TESTS, ns=(100,), epsilons=(1.0,), reps=200)


def run(results: Results, *, tiny: bool = False, repeats: int = 5) -> None:
    """The suite's run (``python -m benchmarks``): a small grid and the timing; the full grid is :func:`main`."""
    config = _config(tiny)
    cells = hb.run_grid(
        config["tests"], config["ns"], config["epsilons"], reps=config["reps"], peer_reps=config["reps"], disable=True
    )
    report(results, cells, figure=False)
    timing(results, n=1_000 if tiny else 1_000_000, repeats=1 if tiny else repeats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_hypothesis", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/benchmarks/hypothesis"), help="output folder")
    parser.add_argument("--tiny", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--reps", type=int, default=2000, help="null repetitions of dpstats per cell")
    parser.add_argument("--peer-reps", type=int, default=1000, help="repetitions of the naive approach and OpenDP")
    parser.add_argument("--power-reps", type=int, default=500, help="repetitions of each power cell")
    parser.add_argument("--tests", nargs="*", default=list(hb.TESTS), choices=list(hb.TESTS))
    parser.add_argument("--ns", nargs="*", type=int, default=list(NS))
    parser.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    parser.add_argument("--no-peers", action="store_true", help="dpstats and the naive approach only")
    parser.add_argument("--no-power", action="store_true", help="the type-I grid only")
    parser.add_argument("--seed", type=int, default=2037)
    parser.add_argument("--repeats", type=int, default=5, help="repetitions of each timing")
    parser.add_argument("--from-cells", type=Path, help="re-render the tables and figures from a cells.csv")
    parser.add_argument("--no-timing", action="store_true", help="skip the one-call timing at n = 10^6")
    args = parser.parse_args(argv)
    results, start = Results(), time.perf_counter()
    methods = ("dpstats", "naive", *(() if args.no_peers else hb.available_peers()))
    if args.from_cells is not None:
        cells = hb.read_cells(args.from_cells)
    elif args.tiny:
        config = _config(True)
        cells = hb.run_grid(
            config["tests"], config["ns"], config["epsilons"], reps=config["reps"], peer_reps=config["reps"]
        )
    else:
        cells = hb.run_grid(
            args.tests,
            args.ns,
            args.epsilons,
            reps=args.reps,
            peer_reps=args.peer_reps,
            methods=methods,
            seed=args.seed,
            checkpoint=args.out / "cells.csv",
        )
        if not args.no_power:
            for test in args.tests:
                cells += hb.run_grid(
                    [test],
                    POWER_NS,
                    POWER_EPSILONS,
                    hb.SCENARIOS[test].effects,
                    reps=args.power_reps,
                    peer_reps=args.power_reps,
                    methods=tuple(m for m in methods if m != "naive"),
                    seed=args.seed,
                )
                hb.write_cells(cells, args.out / "cells.csv")
    hb.write_cells(cells, args.out / "cells.csv")
    report(results, cells)
    if not args.no_timing:
        timing(results, n=1_000 if args.tiny else 1_000_000, repeats=1 if args.tiny else args.repeats)
    tables = [
        f"## {m}: type-I error (%) at alpha = {hb.ALPHA:g}\n\n{hb.type_one_table(cells, m).to_markdown()}\n"
        for m in hb.METHODS
        if any(c.method == m and c.effect == 0 for c in cells)
    ]
    csv_path, md_path = results.write(args.out)
    (args.out / "type_one.md").write_text("\n".join(tables))
    print(f"wrote {md_path}, {csv_path} and {args.out / 'type_one.md'} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
