"""The neighbouring relation a release protects, as one type (after dp-accounting's ``NeighboringRelation`` and
Tumult Analytics' ``AddMaxRows``).

``Relation.ROW``: two datasets are neighbours when one row is replaced by another; the number of rows n is public.
``Relation.UNIT``: when all rows of one privacy unit are replaced (they may change, appear or disappear after
bounding to a public ``max_rows``); the number of units N is public, the number of rows is not.

It is a ``str`` enum: ``Relation.ROW == "row"``, and it is written to the ledger and its JSON as the plain string.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["Relation"]


class Relation(str, Enum):
    """The neighbouring relation of a release (see the module docstring)."""

    ROW = "row"
    UNIT = "unit"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, by_unit: bool) -> Relation:
        """``UNIT`` for a release with a privacy unit, ``ROW`` without."""
        return cls.UNIT if by_unit else cls.ROW
