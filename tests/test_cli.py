"""The command line: `dpstats report` with real papermill runs, and `dpstats data list|fetch` against a local server."""

from __future__ import annotations

import csv
import hashlib
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from dpstats import datasets as ds
from dpstats.cli import main

GOOD = """\
import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from dpstats.experiments import Table, output_folder, save_figure, save_table
output_dir = output_folder(output_dir)
value = float(np.random.default_rng(seed).normal() * scale)
save_table(Table(["scale", "value"], [[scale, value]], fmt="{!r}"), output_dir, "values")
comparison = Table(["quantity", "published", "reproduced"], [["x", 1.0, value]])
save_table(comparison, output_dir, "table1_published_vs_reproduced")
fig, ax = plt.subplots()
ax.plot([0, 1], [0, value])
save_figure(fig, output_dir, "line")
"""


def _notebook(path: Path, body: str) -> None:
    params = nbformat.v4.new_code_cell("seed = 0\nscale = 1.0\noutput_dir = None")
    params.metadata["tags"] = ["parameters"]
    notebook = nbformat.v4.new_notebook(cells=[params, nbformat.v4.new_code_cell(body)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    nbformat.write(notebook, path)


@pytest.fixture
def manifest(tmp_path):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    _notebook(folder / "good.ipynb", GOOD)
    _notebook(folder / "bad.ipynb", "raise ValueError('boom in the notebook')")
    path = folder / "reports.toml"
    path.write_text(
        'seed = 7\n'
        '[notebooks.good]\npath = "good.ipynb"\ntitle = "A good one"\nquick = { scale = 1.0 }\nfull = { scale = 3.0 }\n'
        '[notebooks.bad]\npath = "bad.ipynb"\ntitle = "A failing one"\nquick = {}\nfull = {}\n',
        encoding="utf-8",
    )
    return path


def _report(manifest, out, *args):
    return main(["report", *args, "--manifest", str(manifest), "--out", str(out), "--no-progress"])


def _values(out: Path) -> list[list[str]]:
    with (out / "good" / "values.csv").open(newline="") as handle:
        return list(csv.reader(handle))


def test_report_runs_all_marks_the_failure_and_writes_the_index(manifest, tmp_path, capsys):
    out = tmp_path / "report"
    assert _report(manifest, out, "--profile", "full", "--jobs", "2") == 1  # one notebook failed
    assert "FAILED" in capsys.readouterr().out
    for suffix in ("ipynb", "html"):
        assert (out / "good" / f"good.{suffix}").is_file()
    assert (out / "good" / "line.png").stat().st_size > 0
    assert _values(out)[1][0] == "3.0"  # the full profile's parameter was injected
    index = (out / "index.md").read_text()
    assert "| full |" in index and "| 7 |" in index  # profile and seed
    assert "ValueError: boom in the notebook" in index and "**FAILED**" in index
    assert "good/line.png" in index and "good/values.csv" in index and "| 3.0 |" in index
    assert "numpy" in index and "git revision" in index
    published = index.index("## Published vs reproduced")
    assert published < index.index("## A good one") and "A good one: table1_published_vs_reproduced.csv" in index
    html = (out / "index.html").read_text()
    assert "A failing one" in html and "class='failed'" in html


def test_report_is_deterministic_for_a_fixed_seed(manifest, tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    assert _report(manifest, first, "good") == 0
    assert _report(manifest, second, "good") == 0
    assert _values(first) == _values(second)
    assert not (first / "bad").exists()  # only the named notebook ran


def test_unknown_notebook_name_is_one_line_listing_the_valid_ones(manifest, tmp_path, capsys):
    assert _report(manifest, tmp_path / "out", "nope") == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "unknown notebook 'nope'" in err and "good, bad" in err


def test_the_real_manifest_loads():
    from dpstats.reports import load_manifest

    manifest = load_manifest(Path(__file__).resolve().parents[1] / "notebooks" / "reports.toml")
    assert manifest.notebooks and all(spec.parameters["full"] is not None for spec in manifest.notebooks.values())


def test_python_dash_m_dpstats_is_the_cli():
    done = subprocess.run([sys.executable, "-m", "dpstats", "data", "list"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0
    assert "mnist" in done.stdout and "covtype" in done.stdout


# --------------------------------------------------------------------------- data


@pytest.fixture
def tiny_dataset(monkeypatch, tmp_path, server):
    """A registry entry served by the local HTTP server (the real registry's files are too large to serve here)."""
    srv, root = server
    payload = b"tiny dataset bytes\n" * 1000
    (root / "tiny.bin").write_bytes(payload)
    (root / "corrupt.bin").write_bytes(payload[:-1] + b"X")
    spec = ds.RemoteDataset(name="tiny", filename="tiny.bin", url=srv.url("tiny.bin"),
                            sha256=(hashlib.sha256(payload).hexdigest(),), description="test file",
                            citation="none", licence="CC0")
    monkeypatch.setitem(ds.DATASETS, "tiny", spec)
    data = tmp_path / "data"
    monkeypatch.setenv("DPSTATS_DATA", str(data))
    return srv, data


def test_data_fetch_verifies_and_is_idempotent(tiny_dataset, capsys):
    srv, data = tiny_dataset
    assert main(["data", "fetch", "tiny", "--no-progress"]) == 0
    assert main(["data", "fetch", "tiny", "--no-progress"]) == 0
    assert srv.requests == 1 and sorted(p.name for p in data.iterdir()) == ["tiny.bin"]
    assert "SHA-256 verified" in capsys.readouterr().out
    assert main(["data", "list"]) == 0
    listing = capsys.readouterr().out
    assert "tiny" in listing and "present" in listing and "missing (dpstats data fetch covtype)" in listing


def test_data_fetch_corrupt_or_offline_fails_cleanly(tiny_dataset, capsys):
    srv, data = tiny_dataset
    assert main(["data", "fetch", "tiny", "--url", srv.url("corrupt.bin"), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dpstats: error:") and "checksum mismatch" in err and "Traceback" not in err
    assert not data.exists() or list(data.iterdir()) == []
    assert main(["data", "fetch", "tiny", "--url", "http://127.0.0.1:9/tiny.bin", "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert "could not download" in err and "DPSTATS_DATA" in err and err.count("\n") == 1


def test_unknown_dataset_is_a_clear_error(capsys):
    assert main(["data", "fetch", "imagenet"]) == 1
    err = capsys.readouterr().err
    assert "imagenet" in err and "mnist" in err
