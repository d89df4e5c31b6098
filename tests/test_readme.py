"""The Python examples of the README and of the site's pages run as written, in order, in one namespace per page
(as a reader would paste them)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SITE_PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if "generated" not in p.parts and "_build" not in p.parts)


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_readme_has_python_examples():
    blocks = _python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    assert "ages = " in blocks[0], "the first example must define the data it uses"


def test_readme_python_blocks_run(capsys):
    namespace = _run_blocks(README)
    printed = capsys.readouterr().out
    assert "Accountant(epsilon=1" in printed and "income" in printed and "Lyon" in printed
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
    assert "Accountant(epsilon=1" in capsys.readouterr().out
