"""The private-PCA benchmark a researcher would cite (issue 26, item 4): every PCA mechanism of dpstats and its peers.

Run the full grid with ``python -m benchmarks.bench_pca_peers --out reports/benchmarks/pca_peers`` (peers need the
benchmark environment, ``make bench``); the suite (``python -m benchmarks``) runs it too, and ``--tiny`` is the
seconds-long smoke run the test suite uses.

Everything is in :mod:`dpstats.compendium.pca_benchmark` (the mechanisms, the data sets and their public scaling,
the time-limited runner, the winners and the targets): this module only picks the grid and writes the results.
Grid: data sets MNIST (first ``n_mnist`` training images, d = 784), digits, wine, breast cancer, spiked synthetic
(d = 100) with top_share 0.95 and 0.3; ε ∈ {0.1, 0.3, 1, 3}; δ = 1e-6 for the approximate mechanisms; k ∈ {1, 5,
10}; captured energy (mean ± s.e. over seeds) and median fit time. Every fit has the same time limit (a timed-out
cell is recorded); a peer that times out is not run at the larger ε of the same data set and k.

Targets (issue 26), as rows with status met/MISSED:

* in every cell, dpstats' best proven mechanism captures at least the energy of diffprivlib's and OpenDP's PCA
  (within one standard error of the difference) and fits faster — a peer that released nothing within the limit
  counts as met, and the row says so;
* at ε = 1, n >= 1e4, d <= 100 (the two synthetic sets), it captures >= 90 % of the non-private energy.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dpstats.compendium import pca_benchmark as pb

from ._harness import Results

SECTION = "pca peers"


def _config(tiny: bool) -> dict:
    if tiny:
        return dict(
            names=("wine",),
            mechanisms=[m for m in pb.available_mechanisms() if m in ("AG", "PPCA", "SN", "diffprivlib PCA")],
            epsilons=(1.0,),
            ks=(1,),
            seeds=(0,),
            time_limit=5.0,
        )
    return dict(names=pb.DATA_SETS, mechanisms=None, epsilons=pb.EPSILONS, ks=pb.KS, seeds=(0, 1, 2), time_limit=10.0)


def grid(
    tiny: bool,
    *,
    n_mnist: int = 10_000,
    n_synthetic: int = 20_000,
    seeds=None,
    time_limit=None,
    names=None,
    checkpoint: Path | None = None,
) -> list:
    """Run the grid, one data set after the other; return the tidy list of fits.

    With ``checkpoint``, the fits so far are written there (:func:`~dpstats.compendium.pca_benchmark.write_fits`)
    after each data set and k, so that a run stopped midway keeps what it measured.
    """
    cfg = _config(tiny)
    fits: list = []
    for name in names or cfg["names"]:
        data = pb.load_benchmark_data([name], n_mnist=n_mnist, n_synthetic=n_synthetic)
        for k in cfg["ks"]:  # a checkpoint after each k: a stopped run keeps what it measured
            fits += pb.run_grid(
                data,
                cfg["mechanisms"],
                epsilons=cfg["epsilons"],
                ks=(k,),
                seeds=cfg["seeds"] if seeds is None else seeds,
                time_limit=cfg["time_limit"] if time_limit is None else time_limit,
                show_progress=not tiny,
            )
            if checkpoint is not None:
                pb.write_fits(fits, checkpoint)
    return fits


def report(results: Results, fits: list, *, figures: bool = True) -> list:
    """Add the cells, the winners and the targets to ``results``; return the cell summaries."""
    cells = pb.summarise(fits)
    for c in cells:
        results.add(
            SECTION,
            f"{c.data} n={c.n} d={c.d} k={c.k} eps={c.epsilon:g}",
            f"{c.mechanism} energy %",
            c.energy,
            note=f"{c.guarantee}; s.e. {c.se:.2f}; median fit {c.seconds:.3g} s; {c.runs} runs; {c.status}",
        )
    for w in pb.winners(cells):
        best, proven = w["best"], w["best_proven"]
        results.add(
            SECTION + " winners",
            f"{w['data']} k={w['k']} eps={w['epsilon']:g}",
            "best mechanism",
            best.mechanism if best else "none finished",
            note=(f"{best.guarantee}, {best.energy:.1f}% ± {best.se:.1f}" if best else "")
            + (f"; best proven dpstats: {proven.mechanism} {proven.energy:.1f}% ± {proven.se:.1f}" if proven else ""),
        )
    targets = pb.check_targets(cells)
    for t in targets:
        results.add(
            SECTION + " targets",
            f"{t['data']} k={t['k']} eps={t['epsilon']:g}",
            t["target"],
            "met" if t["met"] else "MISSED",
            ">= peer (1 s.e.) and faster" if t["target"].startswith("peers") else ">= 90 % at eps=1, n>=1e4, d<=100",
            "met" if t["met"] else "MISSED",
            t["note"],
        )
    for kind in sorted({t["target"] for t in targets}):
        rows = [t for t in targets if t["target"] == kind]
        by_timeout = sum(t["met"] and "no release within the limit" in t["note"] for t in rows)
        results.add(
            SECTION + " targets",
            "all cells",
            f"{kind}: cells met",
            f"{sum(t['met'] for t in rows)} of {len(rows)}",
            note=f"{by_timeout} of them because the peer released nothing within the limit" if by_timeout else "",
        )
    if figures:
        try:
            import matplotlib

            matplotlib.use("Agg")
        except ImportError:
            pass
        else:
            for name in dict.fromkeys(c.data for c in cells):
                results.figures[f"pca_peers_{name}"] = pb.plot_energy(cells, name)
    return cells


def run(results: Results, *, tiny: bool = False, repeats: int = 5) -> None:
    """The suite's entry point (``repeats`` is not used: the seeds are the repetitions)."""
    report(results, grid(tiny))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_pca_peers", description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="seconds-long smoke run")
    parser.add_argument("--out", type=Path, default=Path("reports/benchmarks/pca_peers"), help="output folder")
    parser.add_argument("--seeds", type=int, default=None, help="seeds per cell (default 3; tiny 1)")
    parser.add_argument("--n-mnist", type=int, default=10_000, help="MNIST rows (first training images)")
    parser.add_argument("--n-synthetic", type=int, default=20_000, help="rows of each synthetic set")
    parser.add_argument("--time-limit", type=float, default=None, help="seconds per fit (default 10; tiny 5)")
    parser.add_argument("--data", nargs="*", choices=pb.DATA_SETS, help="only these data sets (in this order)")
    parser.add_argument("--from-fits", type=Path, help="only summarise an existing fits.csv (and draw the figures)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.from_fits:
        fits = pb.read_fits(args.from_fits)
    else:
        seeds = None if args.seeds is None else tuple(range(args.seeds))
        args.out.mkdir(parents=True, exist_ok=True)
        fits = grid(
            args.tiny,
            n_mnist=args.n_mnist,
            n_synthetic=args.n_synthetic,
            seeds=seeds,
            time_limit=args.time_limit,
            names=args.data,
            checkpoint=args.out / "fits.csv",
        )
    results = Results()
    cells = report(results, fits)
    args.out.mkdir(parents=True, exist_ok=True)
    table = pb.winners_table(cells)
    (args.out / "winners.md").write_text(table.to_markdown() + "\n", encoding="utf-8")
    results.write(args.out)
    print(f"wrote {args.out} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
