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
        for group in [project["dependencies"], *(deps for name, deps in project["optional-dependencies"].items()
                                                  if name != "bench")]  # bench: peers, only in .venv-bench
        for r in group
        if ";" not in r  # environment markers (tomli on Python 3.10) do not apply to the conda env
    }
    conda = {}
    text = (ROOT / "environment.yml").read_text()
    for line in text[text.index("dependencies:"):].splitlines():
        m = re.match(r"\s+- ([A-Za-z][\w.-]*)([<>=].*)?$", line)
        if m and m.group(1) not in ("python", "pip"):
            conda[m.group(1).lower()] = m.group(1) + (m.group(2) or "")
    assert conda == wanted
    assert "- -e ." in (ROOT / "environment.yml").read_text()


def test_import_does_not_load_heavy_modules():
    code = ("import sys, dpstats; heavy = [m for m in ('matplotlib', 'sklearn', 'scipy.stats', 'scipy.linalg', "
            "'pandas', 'dask', 'distributed') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    assert "make test" in readme and "make reports" in readme
    assert "make test" in (ROOT / ".ci" / "run").read_text()


def test_ruff_is_clean():
    """Library, tests, benchmarks and notebooks pass ruff (configured in pyproject.toml)."""
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "dpstats", "tests", "benchmarks", "notebooks"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
