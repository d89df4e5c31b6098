"""The ledger: what was released, with which events and which noise, exported to JSON and printed as a table.

Neighbouring relations
----------------------
Each entry records the neighbouring relation its release protects (``relation``): ``"row"`` (replace one row;
the release was made without a privacy unit) or ``"unit"`` (replace all rows of one privacy unit). Every mechanism
states it when it charges (:func:`dpstats.accounting.charge`); an entry without it (``None``: a spend recorded
by hand, or a ledger written before relations were recorded) is a release of unknown relation.

A parallel block (:meth:`dpstats.Accountant.parallel`) is opened for one relation (``by``): parts that are a
public function of the row positions (``"row"``), or of the privacy unit's identifier alone (``"unit"``), so that
replacing one neighbour changes one part. Parallel composition holds only for the releases of the block's own
relation: a block takes no release of another or of unknown relation, and when such a release is read back from an
older ledger it is composed in sequence with the block (:meth:`ParallelRecord.items`), never in parallel.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .._rounding import float_up
from ..exceptions import ParameterError
from .compose import Parallel
from .events import Event, check_label, event_from_dict
from .relation import Relation

__all__ = [
    "FORMAT",
    "RELATIONS",
    "check_block_entry",
    "entered_order",
    "LedgerEntry",
    "NoiseStatement",
    "ParallelRecord",
    "entries_from_json",
    "entries_to_json",
    "entries_frame",
    "format_table",
]

FORMAT = "dpstats-ledger/1"

#: The neighbouring relations a release can state (module docstring).
RELATIONS = tuple(r.value for r in Relation)


@dataclass(frozen=True)
class NoiseStatement:
    """What a release's noise means in the units of its result (built by :meth:`dpstats.noise.release.Noise.statement`).

    Attributes
    ----------
    distribution : str
        ``"discrete Laplace"``, ``"discrete Gaussian"``, ``"Laplace"`` or ``"Gaussian"``.
    scale : float
        The noise's scale b (Laplace) or standard deviation σ (Gaussian), in ``units``.
    half_width : float
        Each coordinate of the release lies within ± ``half_width`` of the exact statistic with probability at
        least ``confidence`` (the noise and the rounding to the public grid; for the exact integer noise the
        interval is computed from its exact distribution).
    units : str
        The units of the release: ``"data units"`` for a mean, ``"Gram units (entries of XᵀX)"`` for PCA, ...
    confidence : float, default 0.95
    """

    distribution: str
    scale: float
    half_width: float
    units: str
    confidence: float = 0.95

    def describe(self) -> str:
        """The noise, for the ledger table: ``"discrete Gaussian σ=0.0123 data units"``."""
        symbol = "σ" if self.distribution.endswith("Gaussian") else "b"
        return f"{self.distribution} {symbol}={self.scale:.4g} {self.units}"

    def interval(self) -> str:
        """The error interval, for the ledger table: ``"±0.0241 (95%)"``."""
        return f"±{self.half_width:.4g} ({self.confidence:.0%})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "distribution": self.distribution,
            "scale": self.scale,
            "half_width": self.half_width,
            "units": self.units,
            "confidence": self.confidence,
        }

    @classmethod
    def from_dict(cls, data) -> NoiseStatement:
        """Rebuild a statement, checking every value."""
        if not isinstance(data, dict) or set(data) != {"distribution", "scale", "half_width", "units", "confidence"}:
            raise ParameterError(
                f"a noise statement has the fields distribution, scale, half_width, units, confidence; got {data!r}"
            )
        for name in ("distribution", "units"):
            if not isinstance(data[name], str):
                raise ParameterError(f"noise statement: {name} must be a string; got {data[name]!r}")
        scale = _number(data["scale"], "noise statement: scale", low=0.0, low_open=True)
        half_width = _number(data["half_width"], "noise statement: half_width", low=0.0)
        confidence = _number(data["confidence"], "noise statement: confidence", low=0.0, low_open=True, high=1.0)
        return cls(data["distribution"], scale, half_width, data["units"], confidence)


def _number(value, name: str, *, low: float, low_open: bool = False, high: float = math.inf) -> float:
    """``value`` as a float if it is a finite real number in the range (low, or (low if ``low_open``), high)."""
    real = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    if not real or value < low or (low_open and value == low) or value >= high:
        bound = f"> {low:g}" if low_open else f">= {low:g}"
        upper = "" if math.isinf(high) else f" and < {high:g}"
        raise ParameterError(f"{name} must be a finite number {bound}{upper}; got {value!r}")
    return float(value)


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
    noise : tuple of NoiseStatement
        The noise in the units of the release and its 95 % error interval, one per noise added (empty for
        releases that add no noise to a statistic, such as the exponential mechanism).
    relation : {"row", "unit"} or None
        The neighbouring relation the release protects (module docstring): ``"unit"`` for a release with a
        privacy unit, ``"row"`` without one, None when not stated.
    """

    mechanism: str
    epsilon: float
    delta: float
    note: str = ""
    events: tuple[Event, ...] = ()
    proven: bool = True
    part: str = ""
    noise: tuple[NoiseStatement, ...] = ()
    relation: str | None = None

    @classmethod
    def of(
        cls, mechanism: str, events, *, note: str = "", proven: bool = True, noise=(), relation: str | None = None
    ) -> LedgerEntry:
        """An entry whose (ε, δ) is the exact sum over ``events``, rounded up; each event's label is checked
        against its noise (:func:`~dpstats.accounting.events.check_label`) and ``relation`` against
        :data:`RELATIONS` (ParameterError)."""
        events = tuple(check_label(e) for e in events)
        epsilon, delta = _sums(events)
        return cls(mechanism, epsilon, delta, note, events, proven, "", tuple(noise), _relation(relation))

    def to_dict(self) -> dict[str, Any]:
        """Plain-JSON form (``noise`` only when the entry has statements)."""
        data = {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "note": self.note,
            "proven": self.proven,
            "events": [e.to_dict() for e in self.events],
        }
        if self.noise:
            data["noise"] = [s.to_dict() for s in self.noise]
        if self.relation is not None:
            data["relation"] = self.relation
        return data

    @classmethod
    def from_dict(cls, data, where: str = "ledger entry") -> LedgerEntry:
        """Rebuild an entry, checking every value; errors name ``where`` (e.g. ``"ledger entry 3"``)."""
        try:
            return cls._checked(data)
        except ParameterError as err:
            name = data.get("mechanism") if isinstance(data, dict) else None
            raise ParameterError(f"{where}{f' ({name})' if isinstance(name, str) else ''}: {err}") from None

    @classmethod
    def _checked(cls, data) -> LedgerEntry:
        known = {"mechanism", "epsilon", "delta", "note", "proven", "events", "noise", "relation"}
        if not isinstance(data, dict) or not {"mechanism", "epsilon", "delta", "events"} <= set(data) <= known:
            raise ParameterError(
                f"an entry has the fields {sorted(known)} (note, proven, noise, relation optional); got {data!r}"
            )
        mechanism, note, proven = data["mechanism"], data.get("note", ""), data.get("proven", True)
        if not isinstance(mechanism, str) or not isinstance(note, str) or not isinstance(proven, bool):
            raise ParameterError("mechanism and note must be strings and proven true or false")
        epsilon = _number(data["epsilon"], "epsilon", low=0.0)
        delta = _number(data["delta"], "delta", low=0.0, high=1.0)
        if not isinstance(data["events"], list) or not data["events"]:
            raise ParameterError(f"events must be a non-empty list; got {data['events']!r}")
        events = tuple(event_from_dict(e) for e in data["events"])
        if (epsilon, delta) != _sums(events):
            raise ParameterError(
                f"its (epsilon={epsilon!r}, delta={delta!r}) is not the total of its events {_sums(events)}"
            )
        noise = data.get("noise", [])
        if not isinstance(noise, list):
            raise ParameterError(f"noise must be a list; got {noise!r}")
        statements = tuple(NoiseStatement.from_dict(s) for s in noise)
        relation = _relation(data.get("relation"))
        return cls(mechanism, epsilon, delta, note, events, proven, "", statements, relation)


def _relation(relation) -> str | None:
    """``relation`` if it is None or one of :data:`RELATIONS`; else a ParameterError."""
    if relation is not None and relation not in RELATIONS:
        raise ParameterError(f"relation must be one of {', '.join(map(repr, RELATIONS))} or None; got {relation!r}")
    return relation


@functools.lru_cache(maxsize=4096)
def _sums(events: tuple) -> tuple[float, float]:
    """(Σε, Σδ) of ``events``, exactly, rounded up (kept per tuple of events: a ledger repeats its entries)."""
    epsilon = float_up(sum((Fraction(e.epsilon) for e in events), Fraction(0)))
    return epsilon, float_up(sum((Fraction(e.delta) for e in events), Fraction(0)))


@dataclass
class ParallelRecord:
    """A parallel block: one list of entries per part, the relation its parts are split by (``by``: ``"row"`` or
    ``"unit"``), and, once closed, its position in the order in which records entered the running total
    (``entered``; None while open, or for a block read from an older export)."""

    parts: list[list[LedgerEntry]] = field(default_factory=list)
    closed: bool = False
    by: str = "row"
    entered: int | None = None

    def items(self) -> list:
        """The block as composition items: one :class:`~dpstats.accounting.Parallel` of the releases of the
        block's relation, then every release of another relation, on its own (module docstring)."""
        covered = tuple(
            tuple(e for entry in part if entry.relation == self.by for e in entry.events) for part in self.parts
        )
        others = [e for part in self.parts for entry in part if entry.relation != self.by for e in entry.events]
        return ([Parallel(covered)] if any(covered) else []) + others

    def with_entry(self, part: int, entry: LedgerEntry) -> ParallelRecord:
        """A copy with ``entry`` added to ``part`` (the block as it would be if the entry were recorded)."""
        parts = [list(p) for p in self.parts]
        parts[part].append(entry)
        return ParallelRecord(parts, self.closed, self.by, self.entered)

    def to_dict(self) -> dict[str, Any]:
        parts = [[entry.to_dict() for entry in part] for part in self.parts]
        data = {"parallel": parts, "closed": self.closed, "by": self.by}
        if self.entered is not None:
            data["entered"] = self.entered
        return data


Record = LedgerEntry | ParallelRecord


def check_block_entry(block: ParallelRecord, entry: LedgerEntry) -> None:
    """A ParameterError if ``entry``, read back from a ledger, cannot be a release of ``block``: one of another
    stated relation is never recorded in a block (an entry of unknown relation, from an older ledger, is
    composed in sequence, :meth:`ParallelRecord.items`)."""
    if entry.relation is not None and entry.relation != block.by:
        raise ParameterError(
            f"a release with relation {entry.relation!r} in a parallel block split by {block.by!r} (a block takes "
            "only releases of its own relation)"
        )


def entries_to_json(header: dict[str, Any], records: list[Record]) -> str:
    body = [record.to_dict() for record in records]
    return json.dumps({"format": FORMAT, **header, "entries": body}, indent=1)


def entries_from_json(text: str) -> tuple[dict[str, Any], list[Record]]:
    """Parse :func:`entries_to_json` output into (header, records), checking every value (errors name the entry:
    ``entry 3``, or ``entry 3, part 2, release 1`` inside a parallel block)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ParameterError(f"not a dpstats ledger (invalid JSON: {err})") from err
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ParameterError(f"not a dpstats ledger: expected format {FORMAT!r}")
    raw_entries = data.pop("entries", [])
    if not isinstance(raw_entries, list):
        raise ParameterError("not a dpstats ledger: entries must be a list")
    records: list[Record] = []
    for i, raw in enumerate(raw_entries, start=1):
        if isinstance(raw, dict) and "parallel" in raw:
            records.append(_parallel_from_dict(raw, f"entry {i}"))
        else:
            records.append(LedgerEntry.from_dict(raw, f"entry {i}"))
    data.pop("format")
    return data, records


def entered_order(records: list[Record]) -> list[int]:
    """The indices of ``records`` (read from JSON) in the order they entered the running total: entries where they
    stand, a closed block at its ``entered`` position (where it stands if it has none), open blocks not at all.
    ParameterError if two blocks claim one position or a position is out of range."""
    order = [i for i, r in enumerate(records) if not isinstance(r, ParallelRecord) or (r.closed and r.entered is None)]
    placed = sorted(
        (r.entered, i) for i, r in enumerate(records) if isinstance(r, ParallelRecord) and r.entered is not None
    )
    total = len(order) + len(placed)
    positions = [p for p, _ in placed]
    if len(set(positions)) != len(positions) or any(p >= total for p in positions):
        raise ParameterError(
            f"the closed parallel blocks' positions {positions} are not distinct positions among the {total} records "
            "that entered the total"
        )
    for position, index in placed:  # ascending: each position is free when its block is placed
        order.insert(position, index)
    return order


def _parallel_from_dict(raw: dict, where: str) -> ParallelRecord:
    parts, closed = raw["parallel"], raw.get("closed", False)
    by, entered = raw.get("by", "row"), raw.get("entered")
    malformed = set(raw) - {"parallel", "closed", "by", "entered"} or not isinstance(closed, bool)
    if malformed or not isinstance(parts, list) or not parts:
        raise ParameterError(
            f"{where}: a parallel block has a non-empty list of parts, closed (true or false), and optionally by "
            "and entered"
        )
    if by not in RELATIONS:
        raise ParameterError(
            f"{where}: a parallel block is split by one of {', '.join(map(repr, RELATIONS))}; got {by!r}"
        )
    if entered is not None and (not closed or not isinstance(entered, int) or isinstance(entered, bool) or entered < 0):
        raise ParameterError(f"{where}: entered is the position of a closed block, an integer >= 0; got {entered!r}")
    block = ParallelRecord([], closed, by, entered)
    for p, part in enumerate(parts, start=1):
        if not isinstance(part, list):
            raise ParameterError(f"{where}, part {p}: a part is a list of entries; got {part!r}")
        entries = []
        for r, e in enumerate(part, 1):
            entry = LedgerEntry.from_dict(e, f"{where}, part {p}, release {r}")
            try:
                check_block_entry(block, entry)
            except ParameterError as err:
                raise ParameterError(f"{where}, part {p}, release {r}: {err}") from None
            entries.append(entry)
        block.parts.append(entries)
    return block


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
    return dataclasses.replace(entry, part=part)


#: The width of every line of ``print(accountant)`` (an entry takes as many lines as it needs).
WIDTH = 100

_RELATION_WORDS = {"row": "protects one row", "unit": "protects one privacy unit", None: "relation not stated"}


def format_table(entries: list[LedgerEntry], width: int = WIDTH) -> list[str]:
    """The ledger as lines of at most ``width`` characters, an entry a few lines each::

         1. mean: ε = 0.5, δ = 0, protects one row
            noise  discrete Laplace, b = 0.2 data units; error ±0.5992 data units (95 %)
            note   random source: AESCounter (cryptographic)

    The noise and the error are in the units of the value the release returned (one line per noise added; the
    events instead, for releases that add no noise to a statistic, such as the exponential mechanism)."""
    import textwrap

    lines = []
    number = len(str(len(entries)))
    for i, e in enumerate(entries, start=1):
        head = f"{i:>{number}}. {e.mechanism}{'' if e.proven else ' (UNPROVEN)'}: ε = {e.epsilon:.6g}, "
        head += f"δ = {e.delta:.3g}, {_RELATION_WORDS.get(e.relation, e.relation)}"
        if e.part:
            head += f" ({e.part})"
        indent = " " * (number + 2)
        if e.noise:
            rows = [(head, indent)] + [(f"{indent}noise  {_noise_line(n)}", indent + " " * 7) for n in e.noise]
        else:  # no noise added to a statistic (the exponential mechanism): its events
            described = "; ".join(ev.describe() for ev in e.events)
            rows = [(head, indent)] + ([(f"{indent}events {described}", indent + " " * 7)] if described else [])
        if e.note:
            rows.append((f"{indent}note   {e.note}", indent + " " * 7))
        for text, follow in rows:
            lines += textwrap.wrap(text, width, subsequent_indent=follow, break_on_hyphens=False) or [""]
    return lines


def _noise_line(statement: NoiseStatement) -> str:
    """``discrete Laplace, b = 0.2 data units; error ±0.5992 data units (95 %)``."""
    symbol = "σ" if statement.distribution.endswith("Gaussian") else "b"
    return (
        f"{statement.distribution}, {symbol} = {statement.scale:.4g} {statement.units}; "
        f"error ±{statement.half_width:.4g} {statement.units} ({statement.confidence:.0%})"
    )


def entries_frame(entries: list[LedgerEntry]):
    """The ledger as a pandas DataFrame (pandas imported here, when asked): one row per release, numbered from
    1, with its mechanism, relation, ε, δ, the noise and the 95 % error in the release's units (the first noise
    statement's numbers in ``scale`` and ``error``; all of them, as text, in ``noise``), the part of a parallel
    block, whether it is proven, and the note."""
    import pandas as pd

    rows = []
    for e in entries:
        first = e.noise[0] if e.noise else None
        rows.append(
            {
                "mechanism": e.mechanism,
                "relation": e.relation,
                "epsilon": e.epsilon,
                "delta": e.delta,
                "noise": "; ".join(_noise_line(s) for s in e.noise) or "; ".join(ev.describe() for ev in e.events),
                "scale": first.scale if first else math.nan,
                "error": first.half_width if first else math.nan,
                "units": first.units if first else "",
                "part": e.part,
                "proven": e.proven,
                "note": e.note,
            }
        )
    columns = ["mechanism", "relation", "epsilon", "delta", "noise", "scale", "error", "units", "part", "proven"]
    frame = pd.DataFrame(rows, columns=[*columns, "note"])
    frame.index = pd.RangeIndex(1, len(rows) + 1, name="release")
    return frame
