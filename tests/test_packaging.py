"""Set-up stays consistent: environment.yml mirrors pyproject.toml, import stays light."""

import re
import subprocess
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {
        re.split(r"[\[<>=!~ ]", r, maxsplit=1)[0].lower(): re.sub(r"\[.*?\]", "", r.replace(" ", ""))
        for group in [
            project["dependencies"],
            *(deps for name, deps in project["optional-dependencies"].items() if name != "bench"),
        ]  # bench: peers, only in .venv-bench
        for r in group
        if ";" not in r  # environment markers (tomli on Python 3.10) do not apply to the conda env
    }
    conda = {}
    text = (ROOT / "environment.yml").read_text()
    for line in text[text.index("dependencies:") :].splitlines():
        m = re.match(r"\s+- ([A-Za-z][\w.-]*)([<>=].*)?$", line)
        if m and m.group(1) not in ("python", "pip"):
            conda[m.group(1).lower()] = m.group(1) + (m.group(2) or "")
    assert conda == wanted
    assert "- -e ." in (ROOT / "environment.yml").read_text()


def test_import_does_not_load_heavy_modules():
    code = (
        "import sys, dpstats; heavy = [m for m in ('matplotlib', 'sklearn', 'scipy.stats', 'scipy.linalg', "
        "'pandas', 'dask', 'distributed') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make reports" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_ruff_is_clean():
    """Library, tests, benchmarks, docs and notebooks pass ruff's checks and its formatter (pyproject.toml)."""
    for command in (["check"], ["format", "--check"]):
        done = subprocess.run(
            [sys.executable, "-m", "ruff", *command, "dpstats", "tests", "benchmarks", "notebooks", "docs"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stdout[-3000:]


LIBRARY_CHECK = """
import importlib, importlib.util, pkgutil, sys
import numpy as np
import dpstats, dpstats as dps
optional = ("dpstats.compendium", "dpstats.__main__", "dpstats._engine.dask_engine")  # extras: notebooks, dask
names = [m.name for m in pkgutil.walk_packages(dpstats.__path__, "dpstats.") if not m.name.startswith(optional)]
for name in names:
    importlib.import_module(name)
absent = [m for m in ("matplotlib", "papermill", "nbformat", "jupyter_client", "tqdm", "pandas", "dask")
          if importlib.util.find_spec(m) is not None]
assert not absent, absent
X = np.random.default_rng(0).uniform(-0.3, 0.3, (200, 4))
print(len(names), dps.mean(X[:, 0], 1.0, bounds=(-1, 1), rng=0), dps.pca(X, 2, 1.0, rng=0).shape,
      importlib.resources.files("dpstats").joinpath("py.typed").is_file())
"""


def test_the_library_installs_and_runs_without_the_notebook_stack(tmp_path):
    """``pip install dpstats`` (no extras) in a clean virtual environment: every library module imports, a
    mechanism runs, ``py.typed`` ships, and neither matplotlib nor papermill (nor pandas, tqdm, dask) was needed."""
    import shutil
    import venv

    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "dpstats", source / "dpstats", ignore=shutil.ignore_patterns("__pycache__"))
    env = tmp_path / "env"
    venv.create(env, with_pip=True)
    python = env / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(source)],
        check=True,
        timeout=1200,
        capture_output=True,
    )
    done = subprocess.run(
        [str(python), "-c", "import importlib.resources\n" + LIBRARY_CHECK],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    count, *_, typed = done.stdout.split()
    assert int(count) > 30 and typed == "True"
