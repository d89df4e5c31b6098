"""The declared releases' test cases (:mod:`dpstats.registry`), collected for the tests that read them.

Every list a test used to keep by hand — golden calls, sensitivity neighbours, Dask agreement calls, privacy-unit
calls, the battery's base calls, the mis-declared variants — is built here from the declarations, so a new release
reaches every test with its declaration and its test cases alone (``tests/test_registry.py`` shows it with a toy
release).
"""

from __future__ import annotations

from dpstats import registry

#: What each role takes from an example.
ROLES = {
    "golden": lambda e: e.seed is not None,
    "sensitivity": lambda e: e.neighbours is not None,
    "dask": lambda e: e.dask,
    "units": lambda e: "units" in e.tags,
    "audit": lambda e: e.audit is not None,
}


def declared_cases():
    """(declaration, its Cases) of every declared release, in declaration order."""
    return [(d, d.cases()) for d in registry.releases().values()]


def examples(role: str) -> dict:
    """label -> (declaration, example) of every example that ``role`` takes; a label used twice in a role raises."""
    found: dict = {}
    for declaration, cases in declared_cases():
        for example in cases.examples:
            if not ROLES[role](example):
                continue
            if example.label in found:
                raise ValueError(f"two {role} examples are labelled {example.label!r}")
            found[example.label] = (declaration, example)
    return found


def mechanism(declaration, example):
    """The example as ``mechanism(data, rng)`` (the sensitivity checker's form)."""
    return lambda data, rng: declaration.run(example, data, rng)


def misdeclared() -> dict:
    """label -> (declaration, example, patch) of every declared mis-declared variant (a patch halving the declared
    sensitivity where the release computes it: the checker must flag the example)."""
    found = {}
    by_label = examples("sensitivity")
    for declaration, cases in declared_cases():
        for label, patch in cases.misdeclared:
            found[f"{declaration.name}: {label}"] = (declaration, by_label[label][1], patch)
    return found


def battery_bases() -> list:
    """(declaration, data, kwargs) of every declared base call of the bad-input battery."""
    return [(d, data, kwargs) for d, cases in declared_cases() for data, kwargs in cases.battery]
