"""Timing, memory and reporting helpers shared by every benchmark module.

Times are medians over repetitions, with the competing callables interleaved
(A, B, A, B, ...) so that a slow phase of the machine hits both alike; results
are reported as ratios, which travel between machines better than seconds.
"""

from __future__ import annotations

import csv
import multiprocessing as mp
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median


@dataclass
class Row:
    """One line of the results table."""

    section: str
    case: str
    metric: str
    value: float | str
    target: str = ""
    status: str = ""
    note: str = ""


@dataclass
class Results:
    rows: list[Row] = field(default_factory=list)
    figures: dict = field(default_factory=dict)  # name -> matplotlib Figure, saved as PNG by write()

    def add(self, *args, **kwargs) -> Row:
        row = Row(*args, **kwargs)
        self.rows.append(row)
        print(f"  {row.section:<12} {row.case:<44} {row.metric:<22} {_fmt(row.value):>10} {row.status}", flush=True)
        return row

    def write(self, out: Path) -> tuple[Path, Path]:
        out.mkdir(parents=True, exist_ok=True)
        csv_path, md_path = out / "results.csv", out / "results.md"
        with csv_path.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["section", "case", "metric", "value", "target", "status", "note"])
            for r in self.rows:
                writer.writerow([r.section, r.case, r.metric, r.value, r.target, r.status, r.note])
        lines = ["| section | case | metric | value | target | status | note |", "|---|---|---|---|---|---|---|"]
        lines += [
            f"| {r.section} | {r.case} | {r.metric} | {_fmt(r.value)} | {r.target} | {r.status} | {r.note} |"
            for r in self.rows
        ]
        for name, fig in self.figures.items():
            fig.savefig(out / f"{name}.png", dpi=120, bbox_inches="tight")
            lines += ["", f"![{name}]({name}.png)"]
        md_path.write_text("\n".join(lines) + "\n")
        return csv_path, md_path


def _fmt(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def interleaved_medians(funcs: dict, repeats: int = 5, warmup: int = 1) -> dict[str, float]:
    """Median wall time (s) of each callable, run in interleaved rounds."""
    return {name: wall for name, (wall, _) in interleaved_times(funcs, repeats, warmup).items()}


def interleaved_times(funcs: dict, repeats: int = 5, warmup: int = 1) -> dict[str, tuple[float, float]]:
    """Median wall time and median CPU time (s) of each callable, run in interleaved rounds. The CPU time is the
    calling thread's (``time.thread_time``): on a loaded machine it counts the work of the call, not the time the
    scheduler gave other processes (a call that runs threads of its own is measured by its wall time)."""
    for _ in range(warmup):
        for f in funcs.values():
            f()
    walls: dict[str, list[float]] = {name: [] for name in funcs}
    cpus: dict[str, list[float]] = {name: [] for name in funcs}
    for _ in range(repeats):
        for name, f in funcs.items():
            start, cpu = time.perf_counter(), time.thread_time()
            f()
            cpus[name].append(time.thread_time() - cpu)
            walls[name].append(time.perf_counter() - start)
    return {name: (median(walls[name]), median(cpus[name])) for name in funcs}


def peak_allocation(func) -> int:
    """Peak bytes allocated (as traced by tracemalloc, which NumPy reports to) while ``func`` runs."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def status(ratio: float, limit: float) -> str:
    return "met" if ratio <= limit else "MISSED"


def _call_in_child(queue, func, args):
    start = time.perf_counter()
    result = func(*args)
    queue.put((time.perf_counter() - start, result))


def run_with_timeout(func, args: tuple, seconds: float):
    """Run ``func(*args)`` in a child process; return (elapsed, result) or None if it did not finish in time.

    ``func`` must be a module-level function (it is pickled); the child is killed at the limit.
    """
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_call_in_child, args=(queue, func, args))
    proc.start()
    proc.join(seconds)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None
    return queue.get() if not queue.empty() else None
