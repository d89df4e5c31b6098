"""The Python examples of the README and of the site's pages run as written, in order, in one namespace per page
(as a reader would paste them). The README opens with a runnable example in its first screen, then the two
commands, then the contract; every release in an example says in words what it returns."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SITE_PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if "generated" not in p.parts and "_build" not in p.parts)


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


FIRST_SCREEN = 15  # lines: a reader sees the first example without scrolling


def test_readme_opens_with_a_short_runnable_example_then_the_commands_then_the_contract():
    text = README.read_text(encoding="utf-8")
    lines = text.splitlines()
    start = lines.index("```python")
    first = _python_blocks(text)[0]
    code = [line for line in first.splitlines() if line.strip()]
    assert start < FIRST_SCREEN and len(code) <= 4, "the first example: a few lines, in the first screen"
    assert "ages = " in first, "the first example must define the data it uses"
    namespace: dict = {}
    exec(compile(first, "README first block", "exec"), namespace)  # noqa: S102 (runs alone, as pasted)
    commands, contract = text.index("## The two commands"), text.index("## Privacy conventions")
    assert text.index("```python") < commands < contract
    assert "make reports" in text[commands:contract] and "make test" in text[commands:contract]


def _releases(block: str):
    """(source lines of the statement, its comment lines) for every statement of ``block`` that calls ``dps.*``
    or ``.fit`` (the comment: on the statement's lines or on the lines just above it)."""
    lines = block.splitlines()
    for node in ast.parse(block).body:
        value = getattr(node, "value", None)
        call = value.func if isinstance(value, ast.Call) else None
        if value is not None and isinstance(value, ast.BinOp):  # dps.x(...) / n
            call = value.left.func if isinstance(value.left, ast.Call) else None
        named = isinstance(call, ast.Attribute) and (
            (isinstance(call.value, ast.Name) and call.value.id == "dps") or call.attr == "fit"
        )
        if not named or call.attr in ("Accountant",):
            continue
        above, first = [], node.lineno - 2
        while first >= 0 and lines[first].lstrip().startswith("#"):
            above.insert(0, lines[first])
            first -= 1
        own = lines[node.lineno - 1 : node.end_lineno]
        yield "\n".join(own), [*above, *(line[line.index("#") :] for line in own if "#" in line)]


def test_every_release_in_the_readme_says_what_it_returns():
    said = {}
    for block in _python_blocks(README.read_text(encoding="utf-8")):
        for statement, comments in _releases(block):
            assert comments, f"say in words what this returns:\n{statement}"
            said[statement] = " ".join(comments)
    counts = {s: c for s, c in said.items() if "dps.count(" in s}
    assert counts and all("rows" in c.lower() or "people" in c.lower() for c in counts.values())
    assert any("not the number of people" in c for c in counts.values())  # rows kept, not people
    second_moments = [c for s, c in said.items() if "covariance" in s or "pca_ag" in s]
    assert second_moments and all("uncentred" in c.lower() or "UNCENTRED" in c for c in second_moments)


def test_readme_python_blocks_run(capsys):
    namespace = _run_blocks(README)
    printed = capsys.readouterr().out
    assert "Budget: ε = 1, δ = 1e-06" in printed and "income" in printed and "Lyon" in printed
    acc = namespace["acc"]
    assert acc.spent[0] <= acc.epsilon
    assert list(namespace["means"].index) == ["age", "income"]
    assert list(namespace["counts"].index) == ["Lyon", "Oslo", "Pune", "elsewhere"]


def _run_blocks(page: Path) -> dict:
    namespace: dict = {}
    for i, block in enumerate(_python_blocks(page.read_text(encoding="utf-8"))):
        exec(compile(block, f"{page.name} python block {i + 1}", "exec"), namespace)  # noqa: S102
    return namespace


@pytest.mark.parametrize(
    "page",
    [p for p in SITE_PAGES if _python_blocks(p.read_text(encoding="utf-8"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_site_python_blocks_run(page, capsys):
    namespace = _run_blocks(page)
    assert "acc" in namespace and namespace["acc"].spent[0] <= namespace["acc"].epsilon
    assert "Budget: ε = 1" in capsys.readouterr().out
