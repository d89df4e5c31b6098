"""Run the benchmark suite: ``python -m benchmarks [--tiny] [--out DIR] [--repeats N]``.

Writes ``results.md`` and ``results.csv`` to ``reports/benchmarks/`` (or ``--out``).
Peers (diffprivlib, OpenDP) are used when importable; ``make bench`` builds
``.venv-bench`` with them, so the runtime environment never depends on them.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import time
from pathlib import Path

import numpy as np

from ._harness import Results

MODULES = [
    "bench_descriptive",
    "bench_units",
    "bench_groups",
    "bench_pca",
    "bench_memory",
    "bench_peers",
    "bench_erm",
    "bench_noise",
    "bench_accounting",
    "bench_scale",
    "bench_covariance_trace",
    "bench_pca_peers",
    "bench_linreg",
    "bench_intervals",
    "bench_hypothesis",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="seconds-long smoke run (used by the test suite)")
    parser.add_argument("--out", type=Path, default=Path("reports/benchmarks"), help="output folder")
    parser.add_argument("--repeats", type=int, default=5, help="repetitions per timing (median reported)")
    parser.add_argument("--only", nargs="*", choices=MODULES, help="run only these modules")
    args = parser.parse_args(argv)
    results = Results()
    start = time.perf_counter()
    print(
        f"dpstats benchmarks ({'tiny' if args.tiny else 'full'}) on {platform.processor() or platform.machine()}, "
        f"numpy {np.__version__}"
    )
    for name in args.only or MODULES:
        print(f"[{name}]", flush=True)
        importlib.import_module(f".{name}", __package__).run(results, tiny=args.tiny, repeats=args.repeats)
    csv_path, md_path = results.write(args.out)
    print(f"wrote {md_path} and {csv_path} in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
