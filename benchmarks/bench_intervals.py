"""Coverage of confidence intervals (issue 36): ``dps.mean(..., ci=0.95)`` against an oracle and the peers.

Run the full grid with ``python -m benchmarks.bench_intervals --out reports/benchmarks/intervals`` (OpenDP needs the
benchmark environment, ``make bench``; without it only dpstats and the noise-only interval run); ``--tiny`` is the
seconds-long smoke run the test suite uses (through ``python -m benchmarks --tiny``, which runs a small grid and
the timing). Everything but the grid's choice is in :mod:`dpstats.compendium.interval_benchmark` (the populations,
the oracle, the peers, the targets, the figure).

Grid (the issue's): n ∈ {50, 200, 10³, 10⁴, 10⁵}; ε ∈ {0.1, 0.3, 1, 4} (δ = 0); populations normal, Beta(2, 5),
Bernoulli(0.3), Bernoulli(0.02), log-normal and Pareto (clipped tail); 95 % intervals; 2000 repetitions of dpstats'
interval per cell (a coverage of 0.95 then has a standard error of 0.5 %) and 1000 of the peers' on the same data.

Targets, as rows with status met/MISSED: coverage within [94 %, 97 %] in >= 95 % of the cells whose data lie inside
the bounds, never below 93 %; width <= 1.5 × the oracle's at n >= 10³; and ``ci=`` adds at most twice the time of
the release without it at n = 10⁶ (mean, variance, quantile; interleaved medians).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import dpstats as dps
from dpstats.compendium import interval_benchmark as ib

from ._harness import Results, interleaved_medians, status

SECTION = "intervals"
NS = (50, 200, 1_000, 10_000, 100_000)
EPSILONS = (0.1, 0.3, 1.0, 4.0)


def timing(results: Results, *, n: int, repeats: int) -> None:
    """Time with and without ``ci`` at n rows (interleaved medians): the extra time over the release's."""
    x = np.random.default_rng(0).beta(2.0, 5.0, n)
    calls = {
        "mean": (
            lambda: dps.mean(x, 1.0, bounds=(0, 1), rng=0),
            lambda: dps.mean(x, 1.0, bounds=(0, 1), ci=0.95, rng=0),
        ),
        "variance": (
            lambda: dps.variance(x, 1.0, bounds=(0, 1), rng=0),
            lambda: dps.variance(x, 1.0, bounds=(0, 1), ci=0.95, rng=0),
        ),
        "quantile": (
            lambda: dps.quantile(x, 0.5, 1.0, bounds=(0, 1), rng=0),
            lambda: dps.quantile(x, 0.5, 1.0, bounds=(0, 1), ci=0.95, rng=0),
        ),
    }
    for name, (plain, with_ci) in calls.items():
        times = interleaved_medians({"plain": plain, "ci": with_ci}, repeats=repeats)
        extra = (times["ci"] - times["plain"]) / times["plain"]
        results.add(SECTION, f"{name}, n={n}", "release (s)", times["plain"])
        results.add(SECTION, f"{name}, n={n}", "with ci (s)", times["ci"])
        results.add(
            SECTION, f"{name}, n={n}", "ci's extra time / release", extra, target="<= 2", status=status(extra, 2.0)
        )


def report(results: Results, cells: list, *, figure: bool = True) -> None:
    """The cells and the targets as result rows (and the coverage figure)."""
    for c in cells:
        case = f"{c.population}, n={c.n}, eps={c.epsilon:g}"
        note = "" if c.inside else "data beyond the bounds (clipped): covers the clipped mean"
        results.add(SECTION, case, f"{c.method} coverage", c.coverage, note=note)
        if c.method in ("dpstats", "noise-only"):
            results.add(SECTION, case, f"{c.method} width / oracle", c.width_ratio)
        if not c.inside:
            results.add(SECTION, case, f"{c.method} coverage of E[X]", c.covered_raw / c.reps)
    for row in ib.check_targets(cells):
        results.add(SECTION, "targets", row["target"], row["value"], status=row["status"], note=row["note"])
    if figure and cells:
        try:
            results.figures["interval_coverage"] = ib.plot_coverage(cells)
        except ImportError:  # the benchmark environment has no matplotlib: re-render with --from-cells
            print("no matplotlib here: the figure is left out (rerun with --from-cells where matplotlib is installed)")


def _config(tiny: bool) -> dict:
    if tiny:
        return dict(populations=("bernoulli_0.02",), ns=(200,), epsilons=(1.0,), reps=30, peer_reps=10, peers=())
    return dict(
        populations=("normal", "bernoulli_0.02"),
        ns=(200, 10_000),
        epsilons=(0.3, 4.0),
        reps=400,
        peer_reps=200,
        peers=ib.available_peers(),
    )


def run(results: Results, *, tiny: bool = False, repeats: int = 5) -> None:
    """The suite's run (``python -m benchmarks``): a small grid and the timing; the full grid is :func:`main`."""
    config = _config(tiny)
    cells = ib.run_grid(
        config["populations"],
        config["ns"],
        config["epsilons"],
        reps=config["reps"],
        peer_reps=config["peer_reps"],
        peers=config["peers"],
        disable=True,
    )
    report(results, cells, figure=False)
    timing(results, n=10_000 if tiny else 1_000_000, repeats=1 if tiny else repeats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_intervals", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("reports/benchmarks/intervals"), help="output folder")
    parser.add_argument("--tiny", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--reps", type=int, default=2000, help="repetitions of dpstats' interval per cell")
    parser.add_argument("--peer-reps", type=int, default=1000, help="repetitions of the peers' intervals per cell")
    parser.add_argument("--populations", nargs="*", default=list(ib.POPULATIONS), choices=list(ib.POPULATIONS))
    parser.add_argument("--ns", nargs="*", type=int, default=list(NS))
    parser.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    parser.add_argument("--no-peers", action="store_true", help="dpstats and the noise-only interval only")
    parser.add_argument("--seed", type=int, default=2036)
    parser.add_argument("--repeats", type=int, default=5, help="repetitions of each timing")
    parser.add_argument("--from-cells", type=Path, help="re-render the tables and figure from a cells.csv")
    parser.add_argument("--no-timing", action="store_true", help="leave out the timing at n = 10^6")
    args = parser.parse_args(argv)
    results, start = Results(), time.perf_counter()
    if args.from_cells is not None:
        cells = ib.read_cells(args.from_cells)
    elif args.tiny:
        config = _config(True)
        cells = ib.run_grid(
            config["populations"],
            config["ns"],
            config["epsilons"],
            reps=config["reps"],
            peer_reps=config["peer_reps"],
            peers=(),
            seed=args.seed,
        )
    else:
        peers = () if args.no_peers else ib.available_peers()
        cells = ib.run_grid(
            args.populations,
            args.ns,
            args.epsilons,
            reps=args.reps,
            peer_reps=args.peer_reps,
            peers=peers,
            seed=args.seed,
            checkpoint=args.out / "cells.csv",
        )
    ib.write_cells(cells, args.out / "cells.csv")
    report(results, cells)
    if not args.no_timing:
        timing(results, n=10_000 if args.tiny else 1_000_000, repeats=1 if args.tiny else args.repeats)
    tables = [
        f"## {m}: coverage (%) of the population mean\n\n{ib.coverage_table(cells, m).to_markdown()}\n"
        for m in ib.METHODS
        if any(c.method == m for c in cells)
    ]
    if any(not c.inside for c in cells):
        tables.append(
            "## dpstats: coverage (%) of E[X] (unclipped) where the data leave the bounds\n\n"
            f"{ib.coverage_table([c for c in cells if not c.inside], 'dpstats', raw=True).to_markdown()}\n"
        )
    csv_path, md_path = results.write(args.out)
    (args.out / "coverage.md").write_text("\n".join(tables))
    print(f"wrote {md_path}, {csv_path} and {args.out / 'coverage.md'} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
