"""The benchmark suite runs once in its tiny configuration so that it cannot rot (no timing asserts)."""

import csv
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_benchmarks_tiny_run_writes_tables(tmp_path):
    subprocess.run(
        [sys.executable, "-m", "benchmarks", "--tiny", "--repeats", "1", "--out", str(tmp_path)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    rows = list(csv.DictReader((tmp_path / "results.csv").open()))
    assert {r["section"] for r in rows} >= {"floor", "pca floor", "pca scaling", "noise", "accounting", "scale"}
    assert all(r["value"] for r in rows)
    assert (tmp_path / "results.md").read_text().startswith("| section |")
    assert (tmp_path / "pca_scaling.png").stat().st_size > 0
