"""Published vs reproduced: one table per paper, the same columns and verdict rule for all.

Each paper notebook lists what the paper published — a number from a table, or a claim read off a figure or a
theorem — as :class:`Claim` rows, and saves :func:`comparison_table` as a CSV whose name contains
``published_vs_reproduced``; the report index (:mod:`dpstats.compendium.reports`) and the documentation site gather
those tables in one section.

Columns: claim / quantity, setting (ε, δ, n, k, data), unit, published, reproduced, difference (reproduced −
published), tolerance, verdict, reason. The verdict follows one rule:

* **reproduced within tolerance** — |difference| ≤ tolerance, or a qualitative claim that holds in this run;
* **differs, explained** — outside the tolerance (or the claim fails), and the notebook states why (the reason);
* **not reproduced** — outside the tolerance with no explanation;
* **not run** — the run has no number for it (e.g. a dataset that is not installed; the reason says how to get it);
* **quick profile, not comparable** — every row of a quick-profile run: its n, repetitions (and sometimes data:
  the 8×8 digits stand in for MNIST) are far from the paper's, so no verdict is drawn.

Example
-------
>>> from dpstats.compendium.comparison import Claim, comparison_table
>>> rows = [Claim("SVM error, SVD", "n = 4000", "%", 5.65, 5.35, tolerance=1.0),
...         Claim("SVM error, AG", "n = 4000", "%", 16.8, None, reason="data absent")]
>>> [row[-2] for row in comparison_table(rows).rows]
['reproduced within tolerance', 'not run']
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from .._validation import check_choice
from .experiments import Table

__all__ = ["COLUMNS", "NOT_COMPARABLE", "VERDICTS", "Claim", "comparison_table", "data_absent", "verdict_counts"]

REPRODUCED, EXPLAINED, NOT_REPRODUCED, NOT_RUN = (
    "reproduced within tolerance",
    "differs, explained",
    "not reproduced",
    "not run",
)
NOT_COMPARABLE = "quick profile, not comparable"
VERDICTS = (REPRODUCED, EXPLAINED, NOT_REPRODUCED, NOT_RUN, NOT_COMPARABLE)
COLUMNS = (
    "claim / quantity",
    "setting",
    "unit",
    "published",
    "reproduced",
    "difference",
    "tolerance",
    "verdict",
    "reason",
)


@dataclass(frozen=True)
class Claim:
    """One published number or claim beside this run's value.

    Parameters
    ----------
    claim : str
        What is compared ("SVM error, AG", "SN's ε-DP claim (Theorem 1)").
    setting : str
        The setting of *this run* (ε, δ, n, k, data), and the paper's where it differs.
    unit : str
        Unit of ``published`` and ``reproduced`` ("%", "nats", "× optimal", "" for a claim).
    published : float or str
        The paper's number, or its claim in words.
    reproduced : float, str or None
        This run's number (or measured quantity); None when it did not run.
    tolerance : float or str, optional
        Largest |reproduced − published| counted as agreement (a number in ``unit``), or, for a qualitative
        claim, the criterion in words.
    holds : bool, optional
        For a qualitative claim: whether it holds in this run (decides the verdict instead of the tolerance).
    reason : str, default ""
        Why the numbers differ (a difference with a reason is "differs, explained"), or why it did not run.
    """

    claim: str
    setting: str
    unit: str
    published: float | str
    reproduced: float | str | None
    tolerance: float | str | None = None
    holds: bool | None = None
    reason: str = ""

    @property
    def difference(self) -> float | None:
        """reproduced − published when both are numbers, else None."""
        if _is_number(self.published) and _is_number(self.reproduced):
            return float(self.reproduced) - float(self.published)
        return None

    def verdict(self, profile: str = "full") -> str:
        """The verdict under the module's rule; every row that ran is :data:`NOT_COMPARABLE` for a quick run."""
        check_choice(profile, "profile", ("quick", "full"))
        if self.reproduced is None:
            return NOT_RUN
        if profile == "quick":
            return NOT_COMPARABLE
        agrees = self.holds
        if agrees is None:
            if self.difference is None or not _is_number(self.tolerance):
                raise ValueError(
                    f"claim {self.claim!r}: give holds=, or numbers for published, reproduced and tolerance"
                )
            agrees = abs(self.difference) <= float(self.tolerance)
        if agrees:
            return REPRODUCED
        return EXPLAINED if self.reason else NOT_REPRODUCED


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def comparison_table(claims: Iterable[Claim], *, profile: str = "full", fmt: str = "{:.3g}") -> Table:
    """The published-vs-reproduced table of ``claims`` (columns :data:`COLUMNS`).

    For a quick-profile run the difference is left blank and every verdict is :data:`NOT_COMPARABLE`.
    """
    rows = []
    for c in claims:
        verdict = c.verdict(profile)
        difference = c.difference if verdict != NOT_COMPARABLE else None
        rows.append(
            [
                c.claim,
                c.setting,
                c.unit,
                c.published,
                "—" if c.reproduced is None else c.reproduced,
                "—" if difference is None else difference,
                "—" if c.tolerance is None else c.tolerance,
                verdict,
                c.reason,
            ]
        )
    return Table(COLUMNS, rows, fmt=fmt)


def verdict_counts(verdicts: Iterable[str]) -> dict[str, int]:
    """How many times each verdict occurs (every verdict of :data:`VERDICTS` listed, zeros included): for the
    verdicts of a list of claims (``c.verdict(profile) for c in claims``) or of a saved table's column."""
    counts = Counter(verdicts)
    return {v: counts.get(v, 0) for v in VERDICTS}


def data_absent(name: str) -> str:
    """The reason for a row that needs dataset ``name`` when its file is not installed, and how to get it."""
    from . import datasets

    spec = datasets.DATASETS[name]
    return (
        f"{spec.filename} is not in the data folder (DPSTATS_DATA, default ~/.cache/dpstats; the project's shared "
        f"data folder does not hold it): run `dpstats data fetch {name}`, then rerun this notebook or "
        "`dpstats report` to fill this row"
    )
