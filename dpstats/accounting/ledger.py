"""The ledger: what was released, with which events, in a form that is exported to JSON and printed as a table."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .._rounding import float_up
from ..exceptions import ParameterError
from .compose import Parallel
from .events import Event, event_from_dict

__all__ = ["FORMAT", "LedgerEntry", "ParallelRecord", "entries_from_json", "entries_to_json", "format_table"]

FORMAT = "dpstats-ledger/1"


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release.

    Attributes
    ----------
    mechanism : str
        What was released (``"mean"``, ``"pca_ag"``, ...).
    epsilon, delta : float
        Its standalone (ε, δ) guarantee (the sum over its events).
    note : str
        Public parameters worth keeping (iterations, calibration, the random source).
    events : tuple of Event
        What the release is made of, for tight composition.
    proven : bool
        False when the guarantee holds only for an exact sampler or solver that
        was not used (see :class:`dpstats.Accountant`, ``allow_unproven``).
    part : str
        For releases inside a parallel block, ``"block b, part p"``; else "".
    """

    mechanism: str
    epsilon: float
    delta: float
    note: str = ""
    events: tuple[Event, ...] = ()
    proven: bool = True
    part: str = ""

    @classmethod
    def of(cls, mechanism: str, events, *, note: str = "", proven: bool = True) -> LedgerEntry:
        """An entry whose (ε, δ) is the exact sum over ``events``, rounded up."""
        events = tuple(events)
        epsilon = float_up(sum((Fraction(e.epsilon) for e in events), Fraction(0)))
        delta = float_up(sum((Fraction(e.delta) for e in events), Fraction(0)))
        return cls(mechanism, epsilon, delta, note, events, proven)

    def to_dict(self) -> dict[str, Any]:
        return {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "note": self.note,
            "proven": self.proven,
            "events": [e.to_dict() for e in self.events],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LedgerEntry:
        try:
            events = tuple(event_from_dict(e) for e in data["events"])
            return cls(
                str(data["mechanism"]),
                float(data["epsilon"]),
                float(data["delta"]),
                str(data.get("note", "")),
                events,
                bool(data.get("proven", True)),
            )
        except (KeyError, TypeError) as err:
            raise ParameterError(f"malformed ledger entry {data!r}: {err}") from err


@dataclass
class ParallelRecord:
    """A parallel block: one list of entries per part of the rows."""

    parts: list[list[LedgerEntry]] = field(default_factory=list)
    closed: bool = False

    def item(self) -> Parallel:
        return Parallel(tuple(tuple(e for entry in part for e in entry.events) for part in self.parts))

    def to_dict(self) -> dict[str, Any]:
        return {"parallel": [[entry.to_dict() for entry in part] for part in self.parts], "closed": self.closed}


Record = LedgerEntry | ParallelRecord


def composition_items(records: list[Record]) -> list:
    """The events and parallel blocks that the composition rules take."""
    items: list = []
    for record in records:
        if isinstance(record, ParallelRecord):
            items.append(record.item())
        else:
            items.extend(record.events)
    return items


def entries_to_json(header: dict[str, Any], records: list[Record]) -> str:
    body = [record.to_dict() for record in records]
    return json.dumps({"format": FORMAT, **header, "entries": body}, indent=1)


def entries_from_json(text: str) -> tuple[dict[str, Any], list[Record]]:
    """Parse :func:`entries_to_json` output into (header, records)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParameterError(f"not a dpstats ledger (invalid JSON: {err})") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ParameterError(f"not a dpstats ledger: expected format {FORMAT!r}")
    records: list[Record] = []
    for raw in data.pop("entries", []):
        if "parallel" in raw:
            parts = [[LedgerEntry.from_dict(e) for e in part] for part in raw["parallel"]]
            records.append(ParallelRecord(parts, bool(raw.get("closed", False))))
        else:
            records.append(LedgerEntry.from_dict(raw))
    data.pop("format")
    return data, records


def flat_entries(records: list[Record]) -> list[LedgerEntry]:
    """Every entry, parallel ones labelled with their block and part."""
    out: list[LedgerEntry] = []
    block = 0
    for record in records:
        if isinstance(record, ParallelRecord):
            block += 1
            for p, part in enumerate(record.parts, start=1):
                out += [_labelled(entry, f"parallel {block}, part {p}") for entry in part]
        else:
            out.append(record)
    return out


def _labelled(entry: LedgerEntry, part: str) -> LedgerEntry:
    return LedgerEntry(entry.mechanism, entry.epsilon, entry.delta, entry.note, entry.events, entry.proven, part)


def format_table(entries: list[LedgerEntry]) -> list[str]:
    """Aligned text rows: mechanism, ε, δ, what the noise was, note (columns sized to their contents)."""
    rows = [("mechanism", "epsilon", "delta", "noise", "note")]
    for e in entries:
        mechanism = e.mechanism + ("" if e.proven else " (UNPROVEN)")
        label = f"{e.part}: " if e.part else ""
        rows.append(
            (
                mechanism,
                f"{e.epsilon:.6g}",
                f"{e.delta:.3g}",
                "; ".join(ev.describe() for ev in e.events),
                label + e.note,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = []
    for r in rows:
        lines.append(
            f"{r[0]:<{widths[0]}}  {r[1]:>{widths[1]}}  {r[2]:>{widths[2]}}  {r[3]:<{widths[3]}}  {r[4]}".rstrip()
        )
    return lines
