"""The package's layers, read from its imports: no circle, arrows only downwards, the library apart from the compendium.

Every ``import`` and ``from ... import`` of every module under ``dpstats/`` counts, at module level and inside
functions (an import that runs late still ties the modules together). Importing ``a.b.c`` from outside the package
``a.b`` also runs ``a/b/__init__.py``, so it is an arrow to that package too (the root ``dpstats/__init__.py``
aside: it re-exports the public names, and every module is below it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dpstats._registry import FAMILIES

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "dpstats"


#: Bottom first; a module may import from its own layer or below. A name ending in ".*" is a whole subpackage.
def _layers() -> list[list[str]]:
    """Bottom first. The families (``dpstats.registry.FAMILIES``, each a folder) lie between the release path and the
    public registry, in their order; ``preprocessing`` (row maps, some with a private bound) above the first.
    ``inference`` is the exception: its intervals are post-processing that the releases taking ``ci=`` call (the
    descriptive statistics, linear regression), so it lies just above the release path, below every family."""
    families = [[f"dpstats.{family}.*"] for family in FAMILIES if family != "inference"]
    families.insert(1, ["dpstats.preprocessing"])
    families.insert(0, ["dpstats.inference.*"])
    return [
        [
            "dpstats.exceptions",
            "dpstats._validation",
            "dpstats._rounding",
            "dpstats._trace",
            "dpstats._neighbours",
            "dpstats._examples",
        ],
        ["dpstats.accounting.*"],
        ["dpstats.noise.*"],
        ["dpstats._kernels.*"],
        ["dpstats._engine.*"],
        ["dpstats._release", "dpstats._registry", "dpstats._constraints"],
        *families,
        ["dpstats.registry"],
        ["dpstats.estimators"],
        ["dpstats.audit.*", "dpstats.metrics"],
        ["dpstats"],
        ["dpstats.compendium.*", "dpstats.__main__"],
    ]


#: Bottom first; a module may import from its own layer or below. A name ending in ".*" is a whole subpackage.
LAYERS = _layers()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _targets(name: str, node: ast.AST) -> list[str]:
    """The dpstats modules an import statement loads."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.split(".")[0] == "dpstats"]
    base = name if _is_package(name) else name.rpartition(".")[0]
    if node.level:
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        module = f"{base}.{node.module}" if node.module else base
    else:
        module = node.module or ""
    if module.split(".")[0] != "dpstats":
        return []
    return [f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module for alias in node.names]


def _arrows() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(name, node):
                while target not in MODULES:  # an attribute import: `from dpstats.x import name`
                    target = target.rpartition(".")[0]
                graph[name].add(target)
                parent = target.rpartition(".")[0]  # the packages the import runs on the way
                while parent not in ("", "dpstats"):
                    if not name.startswith(parent + ".") and name != parent:
                        graph[name].add(parent)
                    parent = parent.rpartition(".")[0]
        graph[name].discard(name)
    return graph


def _layer(name: str) -> int:
    for level, members in enumerate(LAYERS):
        for member in members:
            if name == member or (member.endswith(".*") and (name + ".").startswith(member[:-1])):
                return level
    raise AssertionError(f"{name} is in no layer: add it to LAYERS")


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


GRAPH = _arrows()


def test_the_graph_is_read():
    """The reader sees the arrows it must (so the tests below can fail)."""
    assert "dpstats.accounting.gaussian" in GRAPH["dpstats.noise.calibration"]
    assert "dpstats._engine.dask_engine" in GRAPH["dpstats._engine"]  # imported inside a function
    assert "dpstats.accounting" in GRAPH["dpstats.descriptive._moments"]
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]


def test_no_import_circle():
    assert _circles(GRAPH) == []


def test_every_module_has_a_layer():
    for name in MODULES:
        _layer(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_arrows_point_down(name):
    upward = sorted(t for t in GRAPH[name] if _layer(t) > _layer(name))
    assert not upward, f"{name} (layer {_layer(name)}) imports from above: {upward}"


def test_the_library_never_imports_the_compendium():
    library = [n for n in MODULES if _layer(n) < _layer("dpstats.compendium.x")]
    offenders = {n: sorted(t for t in GRAPH[n] if t.startswith("dpstats.compendium")) for n in library}
    assert not {n: t for n, t in offenders.items() if t}


def test_no_private_name_crosses_a_module():
    """A module takes public names only from another module (a private *module* is fine: its names are public)."""
    offenders = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.ImportFrom) or not _targets(name, node):
                continue
            for alias, target in zip(node.names, _targets(name, node), strict=True):
                if alias.name.startswith("_") and target.rpartition(".")[2] != alias.name:
                    offenders.append(f"{name} imports {alias.name} from {target}")
    assert offenders == []


FAMILY_MODULES = [
    n for n in MODULES if n.split(".")[1:2] and n.split(".")[1] in FAMILIES or n == "dpstats.preprocessing"
]


def test_one_release_path():
    """Every family calibrates and charges through dpstats._release (the one release path): no family module
    imports the noise calibration (make_noise) or the accountant's charge itself."""
    offenders = []
    for name in FAMILY_MODULES:
        for node in ast.walk(ast.parse(MODULES[name].read_text(), str(MODULES[name]))):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.lstrip(".")
                in (
                    "accounting",
                    "accounting.accountant",
                    "noise.release",
                )
            ):
                offenders += [f"{name}: {a.name}" for a in node.names if a.name in ("charge", "make_noise")]
    assert FAMILY_MODULES and offenders == []


#: Questions about what kind of data a value is: the engine's (dpstats._engine.kinds), asked nowhere else.
_KIND_ATTRIBUTES = {"compute", "dask", "columns", "to_numpy", "iloc", "schema", "dtypes", "chunks", "npartitions"}
_DATA_LIBRARIES = {"pd", "pl", "da", "dd", "pandas", "polars", "dask"}


def _kind_questions(tree: ast.AST) -> list[str]:
    """``hasattr(x, <a data library's attribute>)`` and ``isinstance(x, <a data library's class>)`` in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and len(node.args) == 2):
            continue
        what = node.args[1]
        if node.func.id == "hasattr" and isinstance(what, ast.Constant) and what.value in _KIND_ATTRIBUTES:
            found.append(f"line {node.lineno}: hasattr(..., {what.value!r})")
        if node.func.id == "isinstance":
            for part in ast.walk(what):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name):
                    if part.value.id in _DATA_LIBRARIES:
                        found.append(f"line {node.lineno}: isinstance(..., {part.value.id}.{part.attr})")
    return found


def test_the_families_reach_data_only_through_the_engine():
    """Issue 34, item 5: a family never asks what kind of data it was given (pandas, polars, dask) itself; it reads
    the data through dpstats._engine (read_matrix, from_table, take_units, the kinds module), the one place that
    asks. The check can fail: it finds the question in a module that asks it."""
    example = ast.parse("def f(x):\n    return hasattr(x, 'compute') or isinstance(x, pd.DataFrame)\n")
    assert len(_kind_questions(example)) == 2
    offenders = {
        name: _kind_questions(ast.parse(MODULES[name].read_text(), str(MODULES[name])))
        for name in FAMILY_MODULES
        if not name.endswith("._cases")  # the test cases build dask and pandas data on purpose
    }
    assert {n: q for n, q in offenders.items() if q} == {}
