"""The command line: `dpstats report` with real papermill runs, and `dpstats data list|fetch` against a local server."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from dpstats.compendium import datasets as ds
from dpstats.compendium.cli import main
from dpstats.exceptions import ParameterError

GOOD = """\
import numpy as np
import matplotlib.pyplot as plt
from dpstats.compendium.experiments import Table, output_folder, save_figure, save_table
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
        "seed = 7\n"
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
    assert (out / "good" / "good.ipynb").is_file() and not list(out.rglob("*.html"))  # the site is the HTML view
    assert (out / "good" / "line.png").stat().st_size > 0
    assert _values(out)[1][0] == "3.0"  # the full profile's parameter was injected
    index = (out / "index.md").read_text()
    assert "| profile | full |" in index and "| seed | 7 |" in index
    assert "ValueError: boom in the notebook" in index and "**FAILED**" in index
    assert "good/line.png" in index and "good/values.csv" in index and "| 3.0 |" in index
    assert "numpy" in index and "| git revision |" in index
    assert "| manifest | notebooks/reports.toml |" in index  # relative to the repository, no machine path
    assert str(tmp_path) not in index
    published = index.index("## Published vs reproduced")
    assert published < index.index("## A good one") and "table1_published_vs_reproduced.csv" in index
    for link in re.findall(r"\]\(([^)#]+)\)", index):  # every link resolves inside the report folder
        assert (out / link).is_file(), link
    record = json.loads((out / "bad" / "run.json").read_text())
    assert record["profile"] == "full" and not record["ok"] and "boom" in record["error"]


def test_executed_notebook_holds_its_figures_and_no_machine_path(manifest, tmp_path):
    out = tmp_path / "report"
    assert _report(manifest, out, "good") == 0
    text = (out / "good" / "good.ipynb").read_text()
    assert str(tmp_path) not in text  # output_dir and papermill's paths are relative
    notebook = nbformat.read(out / "good" / "good.ipynb", as_version=4)
    outputs = [o for cell in notebook.cells for o in cell.get("outputs", [])]
    assert any("image/png" in o.get("data", {}) for o in outputs)  # inline backend although MPLBACKEND=Agg


def test_report_is_deterministic_for_a_fixed_seed(manifest, tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    assert _report(manifest, first, "good") == 0
    assert _report(manifest, second, "good") == 0
    assert _values(first) == _values(second)
    assert not (first / "bad").exists()  # only the named notebook ran


def test_partial_run_keeps_the_other_notebooks_in_the_index(manifest, tmp_path):
    out = tmp_path / "report"
    assert _report(manifest, out, "--profile", "full") == 1
    bad_record = (out / "bad" / "run.json").read_text()
    assert _report(manifest, out, "good", "--profile", "full") == 0
    assert (out / "bad" / "run.json").read_text() == bad_record  # not rerun, not dropped
    index = (out / "index.md").read_text()
    assert "A failing one" in index and "boom in the notebook" in index and "A good one" in index


def test_quick_run_never_overwrites_a_full_record(manifest, tmp_path, capsys):
    out = tmp_path / "report"
    assert _report(manifest, out, "good", "--profile", "full") == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert _report(manifest, out, "good", "--profile", "quick") == 1
    err = capsys.readouterr().err
    assert "full-profile record of good" in err and "_quick" in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    from dpstats.compendium.reports import default_out, load_manifest

    loaded = load_manifest(manifest)
    assert default_out("quick", loaded) == tmp_path / "reports" / "_quick"
    assert default_out("full", loaded) == tmp_path / "reports"


def test_progress_lines_name_the_notebook_and_its_own_bar(tmp_path, capfd):
    folder = tmp_path / "notebooks"
    folder.mkdir()
    _notebook(
        folder / "loop.ipynb",
        "import time\nfrom dpstats.compendium.experiments import progress\n"
        "for _ in progress(range(6), desc='inner loop'):\n    time.sleep(0.5)",
    )
    path = folder / "reports.toml"
    path.write_text('[notebooks.loop]\npath = "loop.ipynb"\nquick = {}\nfull = {}\n', encoding="utf-8")
    assert main(["report", "--manifest", str(path), "--out", str(tmp_path / "out"), "--interval", "0.5"]) == 0
    err = capfd.readouterr().err
    assert "[1/1] loop started" in err and "[1/1] loop done in" in err
    assert re.search(r"loop +\d+ s +cell \d+/\d+ +inner loop: +\d+%", err), err
    assert "without encryption" not in err and "KeyboardInterrupt" not in err  # the kernel's own noise is kept out
    notebook = nbformat.read(tmp_path / "out" / "loop" / "loop.ipynb", as_version=4)
    streams = [o["text"] for o in notebook.cells[-1].outputs if o["output_type"] == "stream"]
    assert len(streams) == 1 and "\r" not in streams[0] and "6/6" in streams[0]  # only the final state is kept


def test_real_quick_report_leaves_the_committed_record_untouched(tmp_path):
    """A real quick run of one small notebook next to a copy of the committed record: the copy is unchanged."""
    import shutil

    from dpstats.compendium.reports import QUICK_FOLDER, load_manifest, run_reports

    root = Path(__file__).resolve().parents[1]
    record = tmp_path / "reports"
    shutil.copytree(root / "reports", record, ignore=shutil.ignore_patterns(QUICK_FOLDER))
    before = {p: p.read_bytes() for p in record.rglob("*") if p.is_file()}
    real = load_manifest(root / "notebooks" / "reports.toml")
    with pytest.raises(ParameterError, match="full-profile record of histogram"):
        run_reports(["histogram"], profile="quick", out=record, manifest=real, progress=False)
    report = run_reports(["histogram"], profile="quick", out=record / QUICK_FOLDER, manifest=real, progress=False)
    assert report.ok and [r.name for r in report.results] == ["histogram"]
    assert {p: p.read_bytes() for p in record.rglob("*") if p.is_file() and QUICK_FOLDER not in p.parts} == before
    assert "| profile | quick" in (record / QUICK_FOLDER / "index.md").read_text()
    ignored = subprocess.run(["git", "check-ignore", "-q", f"reports/{QUICK_FOLDER}/index.md"], cwd=root)
    assert ignored.returncode == 0, "reports/_quick/ must be git-ignored"


def test_revision_is_dirty_for_changed_code_but_not_for_the_report_itself(tmp_path):
    from dpstats.compendium.reports import git_revision

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "index.md").write_text("old report\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
    clean = git_revision(tmp_path, report=tmp_path / "reports")
    assert re.fullmatch(r"[0-9a-f]{12}", clean)
    (tmp_path / "reports" / "index.md").write_text("regenerated report\n")
    assert git_revision(tmp_path, report=tmp_path / "reports") == clean
    assert git_revision(tmp_path) == clean + "+dirty"
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_revision(tmp_path, report=tmp_path / "reports") == clean + "+dirty"


def test_unknown_notebook_name_is_one_line_listing_the_valid_ones(manifest, tmp_path, capsys):
    assert _report(manifest, tmp_path / "out", "nope") == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert "unknown notebook 'nope'" in err and "good, bad" in err


def test_the_real_manifest_loads():
    from dpstats.compendium.reports import load_manifest

    manifest = load_manifest(Path(__file__).resolve().parents[1] / "notebooks" / "reports.toml")
    assert manifest.notebooks and all(spec.parameters["full"] is not None for spec in manifest.notebooks.values())


def test_python_dash_m_dpstats_is_the_cli():
    done = subprocess.run([sys.executable, "-m", "dpstats", "data", "list"], capture_output=True, text=True, timeout=60)
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
    spec = ds.RemoteDataset(
        name="tiny",
        filename="tiny.bin",
        url=srv.url("tiny.bin"),
        sha256=(hashlib.sha256(payload).hexdigest(),),
        description="test file",
        citation="none",
        licence="CC0",
    )
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


# ----------------------------------------------------------------------------- reports from anywhere


ROOT = Path(__file__).resolve().parents[1]


def _outside(tmp_path, *args, timeout=120):
    """`python -m dpstats ARGS` run from a folder outside the clone, with this clone's dpstats on the path (as an
    editable install has it)."""
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    env.update(PYTHONPATH=str(ROOT), MPLBACKEND="Agg")
    return subprocess.run(
        [sys.executable, "-m", "dpstats", *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_report_list_from_a_folder_outside_the_clone(tmp_path):
    from dpstats.compendium.reports import load_manifest

    done = _outside(tmp_path, "report", "--list")
    assert done.returncode == 0, done.stderr
    real = load_manifest(ROOT / "notebooks" / "reports.toml")
    lines = done.stdout.splitlines()
    assert len(lines) == 2 * len(real.notebooks)
    for spec in real.notebooks.values():  # the name beside its notebook file, then what it shows
        at = lines.index(next(line for line in lines if line.split()[0] == spec.name))
        assert lines[at].split()[1] == spec.path.relative_to(ROOT).as_posix() and lines[at + 1].strip() == spec.title
    assert any(line.split() == ["icassp2016", "notebooks/papers/icassp2016_pca.ipynb"] for line in lines)


def test_report_with_a_changed_parameter_from_a_folder_outside_the_clone(tmp_path):
    """A real notebook of the clone, rerun from outside it with three parameters changed, into --out."""
    out = tmp_path / "runs"
    changes = ["-p", "n_seeds=1", "-p", "dataset=digits", "-p", "epsilons=[1.0]"]
    done = _outside(tmp_path, "report", "histogram", *changes, "--out", str(out), "--no-progress", timeout=300)
    assert done.returncode == 0, done.stderr
    record = json.loads((out / "histogram" / "run.json").read_text())
    assert record["ok"] and record["changed"] == {"n_seeds": 1, "dataset": "digits", "epsilons": [1.0]}
    executed = nbformat.read(out / "histogram" / "histogram.ipynb", as_version=4)
    injected = next(c for c in executed.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert "n_seeds = 1" in injected.source and 'dataset = "digits"' in injected.source


def test_the_manifest_is_found_from_any_folder_of_a_clone(manifest, tmp_path, monkeypatch, capsys):
    from dpstats.compendium import reports

    deep = tmp_path / "notebooks" / "a" / "b"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    assert reports.default_manifest() == manifest.resolve()  # tmp_path is the clone: notebooks/reports.toml
    assert main(["report", "--list"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["good  notebooks/good.ipynb", "      A good one"]


def test_no_manifest_is_an_error_naming_the_manifest_option(tmp_path, monkeypatch, capsys):
    from dpstats.compendium import reports

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(reports, "__file__", str(tmp_path / "site-packages" / "dpstats" / "compendium" / "reports.py"))
    with pytest.raises(FileNotFoundError, match="--manifest"):
        reports.default_manifest()
    assert main(["report", "--list"]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("dpstats: error: no report manifest") and "--manifest PATH" in err and len(err.splitlines()) == 1
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["good", "-p", "nope=1"], "good has no parameter 'nope'; its parameters: seed, scale"),
        (["good", "-p", "scale=big"], "parameter scale='big' must be a number like its default 1.0"),
        (["good", "-p", "scale"], "-p takes key=value"),
        (["good", "bad", "-p", "scale=2"], "-p changes the parameters of one notebook"),
        (["good", "-p", "output_dir=x"], "output_dir is set by the runner"),
    ],
)
def test_changed_parameters_are_checked_before_anything_runs(manifest, tmp_path, capsys, args, message):
    out = tmp_path / "out"
    assert _report(manifest, out, *args) == 1
    assert message in capsys.readouterr().err and not out.exists()


def test_a_changed_run_never_writes_into_the_record(manifest, tmp_path, capsys):
    record = tmp_path / "reports"  # the clone's record folder (the manifest's repository is tmp_path)
    assert main(["report", "good", "-p", "scale=2", "--manifest", str(manifest), "--out", str(record)]) == 1
    assert "never writes into the record" in capsys.readouterr().err and not record.exists()
    # by default it goes to reports/_quick/, even with --profile full, and says what changed
    args = ["report", "good", "-p", "scale=2.5", "--profile", "full", "--manifest", str(manifest), "--no-progress"]
    assert main(args) == 0
    run = json.loads((record / "_quick" / "good" / "run.json").read_text())
    assert run["changed"] == {"scale": 2.5} and run["profile"] == "full"
    assert _values(record / "_quick")[1][0] == "2.5"  # the notebook ran with the changed scale
