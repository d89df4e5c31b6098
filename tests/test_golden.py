"""Every release is bitwise what it was when ``tests/golden/releases.json`` was written (see tests/golden/releases.py).

A refactoring must not change a single release for the same seed; a change that alters releases on purpose
regenerates the file (``python tests/golden/releases.py``) in the same commit and says why.

The releases are computed in a subprocess on one pinned floating-point platform (see ``PINNED`` there), so that a
machine with other vector instructions computes the same bits.
"""

import json

import pytest
from golden.releases import GOLDEN, pinned_digests, releases

#: one worker runs this module (its module-scoped fixture is computed once; pytest-xdist's loadgroup)
pytestmark = pytest.mark.xdist_group("golden")

EXPECTED = json.loads(GOLDEN.read_text())
NAMES = sorted(releases())


@pytest.fixture(scope="module")
def computed() -> dict[str, str]:
    return pinned_digests()


def test_every_case_has_a_recorded_release():
    assert NAMES == sorted(EXPECTED)


@pytest.mark.parametrize("name", NAMES)
def test_release_is_bitwise_unchanged(name, computed):
    assert computed[name] == EXPECTED[name], f"release {name!r} changed"
