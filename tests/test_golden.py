"""Every release is bitwise what it was when ``tests/golden/releases.json`` was written (see tests/golden/releases.py).

A refactoring must not change a single release for the same seed; a change that alters releases on purpose
regenerates the file (``python -m tests.golden.releases``) in the same commit and says why.
"""

import json
import warnings

import pytest
from golden.releases import GOLDEN, digest, releases

EXPECTED = json.loads(GOLDEN.read_text())
CASES = releases()


def test_every_case_has_a_recorded_release():
    assert sorted(CASES) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(CASES))
def test_release_is_bitwise_unchanged(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = CASES[name]()
    assert digest(value) == EXPECTED[name], f"release {name!r} changed"
