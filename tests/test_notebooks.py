"""The notebooks' contract: in the manifest, one `parameters` cell, no stored outputs, public API only.

nbval (``make test`` runs ``pytest --nbval-lax notebooks`` after this suite) executes every
notebook with its defaults; this file checks what nbval cannot: that the defaults *are* the
manifest's quick profile, and that every profile key is a parameter the notebook declares.
"""

import ast
import json
from pathlib import Path

import pytest

from dpstats.compendium.reports import load_manifest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
MANIFEST = load_manifest(NOTEBOOKS / "reports.toml")
FILES = sorted(NOTEBOOKS.rglob("*.ipynb"))
INJECTED = {"seed", "output_dir"}  # the runner passes these to every notebook


def _cells(path):
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def _parameters(path) -> dict:
    cells = [c for c in _cells(path) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, f"{path.name}: {len(cells)} cells tagged 'parameters', expected exactly one"
    values = {}
    for node in ast.parse("".join(cells[0]["source"])).body:
        simple = isinstance(node, ast.Assign) and len(node.targets) == 1
        assert simple, f"{path.name}: the parameters cell may hold only `name = literal` lines"
        values[node.targets[0].id] = ast.literal_eval(node.value)
    return values


def test_every_notebook_is_in_the_manifest_and_every_entry_exists():
    listed = {spec.path for spec in MANIFEST.notebooks.values()}
    assert {p.resolve() for p in FILES} - listed == set(), "notebooks missing from notebooks/reports.toml"
    assert {p for p in listed if not p.is_file()} == set(), "manifest entries without a notebook"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_notebook_is_stored_clean(path):
    kernel = json.loads(path.read_text(encoding="utf-8"))["metadata"].get("kernelspec", {})
    assert kernel.get("language") == "python", f"{path.name}: papermill needs a Python kernelspec in the metadata"
    for i, cell in enumerate(_cells(path)):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name}: cell {i} has stored outputs"
            assert cell.get("execution_count") is None, f"{path.name}: cell {i} has an execution count"
        source = "".join(cell["source"])
        assert "dpstats._" not in source, f"{path.name}: cell {i} imports a private dpstats module"


@pytest.mark.parametrize("name", sorted(MANIFEST.notebooks))
def test_parameters_cell_matches_the_manifest(name):
    spec = MANIFEST.notebooks[name]
    defaults = _parameters(spec.path)
    assert INJECTED <= defaults.keys(), f"{name}: the parameters cell must define {sorted(INJECTED)}"
    assert defaults["seed"] == MANIFEST.seed, f"{name}: default seed differs from the manifest's"
    for profile, values in spec.parameters.items():
        unknown = values.keys() - defaults.keys()
        assert not unknown, f"{name}: {profile} profile sets {sorted(unknown)}, which the notebook does not declare"
    quick = spec.parameters["quick"]
    assert {k: defaults[k] for k in quick} == quick, f"{name}: the notebook's defaults must be its quick profile"


@pytest.mark.parametrize("name", sorted(MANIFEST.notebooks))
def test_papermill_parses_every_parameter(name, caplog):
    """A comment with '=' or a quote makes papermill skip the line (and warn on every report run)."""
    import papermill

    with caplog.at_level("WARNING", logger="papermill"):
        parsed = papermill.inspect_notebook(str(MANIFEST.notebooks[name].path))
    assert parsed.keys() == _parameters(MANIFEST.notebooks[name].path).keys()
    assert not [r.getMessage() for r in caplog.records if "Unable to parse" in r.getMessage()]
