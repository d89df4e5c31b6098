"""The README's Python examples run as written, in order, in one namespace (as a reader would paste them)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def test_readme_has_python_examples():
    blocks = _python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    assert "ages = " in blocks[0], "the first example must define the data it uses"


def test_readme_python_blocks_run(capsys):
    namespace: dict = {}
    for i, block in enumerate(_python_blocks(README.read_text(encoding="utf-8"))):
        exec(compile(block, f"README.md python block {i + 1}", "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    assert "Accountant(epsilon=1" in printed and "income" in printed and "Lyon" in printed
    acc = namespace["acc"]
    assert acc.spent[0] <= acc.epsilon
    assert list(namespace["means"].index) == ["age", "income"]
    assert list(namespace["counts"].index) == ["Lyon", "Oslo", "Pune", "elsewhere"]
