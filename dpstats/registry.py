"""Every public release, declared once: its name, family, statistic, parameter constraints, neighbouring relations,
engines and test cases.

>>> from dpstats import registry
>>> sorted(registry.releases())[:3]
['amin_eigen', 'cca', 'count']
>>> registry.get("mean").family
'descriptive'

The declarations are made next to each release's code (:func:`dpstats._registry.declare`); this module imports
every family (:data:`FAMILIES`) and lists them. The tests, the API reference, the bad-input battery, the sensitivity
checker, the audits and the Dask agreement test read them; ``CONTRIBUTING.md`` says how to add one.
"""

from __future__ import annotations

from . import decomposition, descriptive, hypothesis, inference, linear_model  # noqa: F401 (each family declares its releases)
from ._registry import FAMILIES, Cases, Declaration, Example, declarations

__all__ = ["FAMILIES", "Cases", "Declaration", "Example", "get", "releases"]


def releases(family: str | None = None) -> dict[str, Declaration]:
    """The declared releases (name -> :class:`Declaration`), of one ``family`` or of all."""
    return {n: d for n, d in declarations().items() if family is None or d.family == family}


def get(name: str) -> Declaration:
    """The declaration of the release ``name`` (``dps.<name>``)."""
    found = declarations()
    if name not in found:
        raise KeyError(f"no release named {name!r}; declared: {', '.join(sorted(found))}")
    return found[name]
