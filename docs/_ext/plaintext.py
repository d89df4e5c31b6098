"""Keep plain-text notation in docstrings from being read as reStructuredText markup.

dpstats' docstrings write absolute values and norms as ``|x|`` and name fitted attributes such as
``n_features_in_`` in running text. docutils reads ``|x|`` as a substitution reference and ``name_`` as a
hyperlink reference, and fails the ``-W`` build on both. This hook (run after numpydoc has turned the sections
into reStructuredText) escapes those two characters in prose, leaving literal blocks, inline literals, roles
and strong text untouched.
"""

from __future__ import annotations

import re

_PROTECTED = re.compile(r"(``.+?``|:[\w:.-]+:`.+?`|`[^`]+`_{0,2}|\*\*.+?\*\*)")
_TRAILING_UNDERSCORE = re.compile(r"(?<=\w)_(?=[\s,.;:)\]}]|$)")


def _escape(text: str) -> str:
    parts = _PROTECTED.split(text)
    for i in range(0, len(parts), 2):  # even parts lie outside protected spans
        parts[i] = _TRAILING_UNDERSCORE.sub(r"\\_", parts[i].replace("|", "\\|"))
    return "".join(parts)


def escape_lines(lines: list[str]) -> None:
    """Escape ``lines`` in place, skipping literal blocks (after ``::``) and table or line-block lines."""
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                continue
            literal_indent = None
        if stripped.startswith((".. ", "|", "+", ">>>", "...")):
            pass
        else:
            lines[i] = _escape(line)
        if stripped.endswith("::") or stripped.startswith((".. math::", ".. code")):
            literal_indent = indent


def _hook(app, what, name, obj, options, lines):
    escape_lines(lines)


def setup(app):
    app.connect("autodoc-process-docstring", _hook, priority=600)  # after numpydoc (500)
    return {"parallel_read_safe": True}
