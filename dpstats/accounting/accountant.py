"""The :class:`Accountant`: a total (ε, δ) budget, a ledger of releases, and a composition rule."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import numbers
import os
import threading
from fractions import Fraction
from pathlib import Path

from .._rounding import float_down
from .._trace import active, event
from .._validation import check_choice, check_delta, check_epsilon, check_flag
from ..exceptions import (
    AccountantSharingError,
    BudgetExceededError,
    LedgerError,
    NotPrivateError,
    ParameterError,
    UnprovenGuaranteeError,
)
from .compose import RULES, Composition
from .events import ApproxDP, Event, PureDP
from .ledger import (
    RELATIONS,
    WIDTH,
    LedgerEntry,
    NoiseStatement,
    ParallelRecord,
    Record,
    check_block_entry,
    entered_order,
    entries_frame,
    entries_from_json,
    entries_to_json,
    flat_entries,
    format_table,
)
from .log import LedgerLog

__all__ = [
    "DEFAULT_DELTA",
    "Accountant",
    "ParallelBlock",
    "PlanPreview",
    "charge",
    "check_accountant",
    "with_pending",
]

#: δ of an Accountant created without one: small against 1/n for data sets up to a million rows.
DEFAULT_DELTA = 1e-6

#: How many forks separate this process from the interpreter that started it: a fork copies every object, an
#: in-memory Accountant among them, and this number tells the copy from the original (a pid alone could be reused).
_FORKS = [0]


def _forked() -> None:
    _FORKS[0] += 1


def _process() -> tuple[int, int]:
    """This process, as an in-memory accountant's owner: (pid, forks since the interpreter started)."""
    return os.getpid(), _FORKS[0]


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


_RULE_WORDS = {
    "pld": "PLD (privacy-loss distributions)",
    "zcdp": "zCDP (zero-concentrated DP)",
    "advanced": "advanced composition",
    "basic": "basic composition (sums)",
}


class Accountant:
    """Track the privacy budget spent by a sequence of releases, composing them tightly.

    Every mechanism takes ``accountant=``. It validates its inputs, describes
    the release as privacy events (:mod:`dpstats.accounting.events`: Laplace
    with its scale, Gaussian with its noise multiplier, the exponential
    mechanism, ...), and calls :meth:`spend` *before* drawing any noise. If the
    composed total would exceed the budget, :class:`BudgetExceededError` is
    raised and nothing is released.

    The composed total is kept up to date release by release
    (:mod:`dpstats.accounting.compose`, "Running totals"), so a spend costs about
    the same at the ten-thousandth release as at the tenth, and so does reading
    :attr:`spent`. Each ledger entry says what its noise means in the units of
    the release: the noise's scale and the half-width of a 95 % interval of the
    release's error (``print(acc)``; :attr:`LedgerEntry.noise`).

    **What is spent and what is left.** :attr:`spent` is the whole ledger's (ε, δ) under the composition rule.
    Under ``"basic"`` and ``"advanced"`` both coordinates add up, and :attr:`remaining` is the budget minus
    :attr:`spent` in each (exactly, rounded down: a release of exactly what is left fits under ``"basic"``). Under
    ``"pld"`` and ``"zcdp"`` the ledger is a curve ε(δ), stated at the budget's δ: :attr:`spent` reports that δ,
    but δ is where ε is measured, not something the releases used up. :attr:`remaining` is then the ε left at the
    budget's δ and, as its δ, what a further release may still carry as its own δ: the budget's δ minus the δ
    spent outright (approximate-DP releases, the failure probabilities of Gaussian calibrations) — a pure or an
    analytic-Gaussian release leaves it unchanged. A further release is accepted when the composed ε at the
    budget's δ stays within the budget: one carrying more δ than :attr:`remaining` says never is; a pure release
    of at most the remaining ε is (basic composition of the ledger's statement with it); composition being
    sub-additive, Gaussian releases may fit beyond it (:meth:`composed_with` gives the exact total).
    ``print(acc)`` states the budget, the total and the rule ("ε = 0.98 at δ = 1e-06 under PLD"), what is left,
    then each release in lines of at most 100 characters; :meth:`to_frame` gives the ledger as a DataFrame.

    Parameters
    ----------
    epsilon : float
        Total ε budget, > 0.
    delta : float, default 1e-6
        Total δ budget, 0 <= δ < 1. With ``delta=0`` only pure releases (Laplace,
        exponential mechanism, ...) fit.
    composition : {"pld", "zcdp", "advanced", "basic"}, default "pld"
        How releases add up (:mod:`dpstats.accounting.compose`). The default,
        privacy-loss distributions, is the tightest known accounting: for Gaussian
        releases it is exact, and it is never below the true ε (pessimistic
        discretisation). For 100 Gaussian releases with σ/Δ = 10 at δ = 1e-6 it
        reports ε = 4.89 where zCDP gives 5.22, advanced composition 39.6 and
        basic composition 49.3. For "pld" and "zcdp", :attr:`spent` is the ε of
        the whole ledger at the budget's δ.
    slack : float, optional
        δ′ of advanced composition, 0 < δ′ <= delta (default delta / 2).
    allow_unproven : bool, default False
        Accept releases whose guarantee holds only for an exact sampler that
        was not used (for example PPCA's Gibbs sampler). They are refused by
        default with :class:`UnprovenGuaranteeError`; when allowed, the ledger
        marks them UNPROVEN.
    ledger_file : path, optional
        Keep the ledger in this file, shared by every process that opens it: an
        append-only log, one JSON record per line, each holding a hash of the
        one before (:mod:`dpstats.accounting.log`), with a ``.head`` file beside
        it. Each spend locks the file, reads what other processes appended,
        checks, and appends one line, flushed to disk. Opening it checks every
        record: an edited, deleted or cut record raises
        :class:`~dpstats.exceptions.LedgerTamperedError` naming the file and the
        record. A ledger in a read-only folder can be opened to read and audit
        it; a spend then raises :class:`~dpstats.exceptions.LedgerError`, as do
        a full disk and a missing folder, and the file stays as it was. An
        accountant with a ledger file can be pickled and sent to worker
        processes (``cross_val_score(..., n_jobs=2)``); one without refuses to be
        pickled or copied, because its copy's charges would be lost, and refuses a spend in a process forked from its
        creator (the copy a fork makes).

    Examples
    --------
    >>> import dpstats as dps
    >>> acc = dps.Accountant(1.0, 0.0, composition="basic")
    >>> m = dps.mean([0.2, 0.4, 0.9], 0.5, bounds=(0, 1), rng=0, accountant=acc)
    >>> acc.spent
    (0.5, 0.0)
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = DEFAULT_DELTA,
        *,
        composition: str = "pld",
        slack: float | None = None,
        allow_unproven: bool = False,
        ledger_file: str | os.PathLike | None = None,
    ) -> None:
        self.epsilon = check_epsilon(epsilon)
        self.delta = check_delta(delta)
        self.composition = check_choice(composition, "composition", RULES)
        self.slack = self._check_slack(slack)
        self.allow_unproven = check_flag(allow_unproven, "allow_unproven")
        self._records: list[Record] = []
        self._open: set[int] = set()  # indices of the parallel blocks not yet closed
        self._entered: list[int] = []  # indices of the records in the order they entered the running total
        self._running = Composition.of(self.composition, self.delta, self.slack)
        self._lock = threading.RLock()
        self._owner = _process()  # an in-memory ledger is charged by this process only (_check_owner)
        self.ledger_file = None if ledger_file is None else _ledger_path(ledger_file)
        self._log = None if self.ledger_file is None else LedgerLog(self.ledger_file)
        if self._log is not None:
            with self._lock:
                self._attach()

    def _check_slack(self, slack) -> float | None:
        if self.composition != "advanced":
            if slack is not None:
                raise ParameterError("slack applies only to composition='advanced'")
            return None
        if self.delta == 0:
            raise ParameterError("composition='advanced' needs delta > 0 (it spends a slack delta')")
        if slack is None:
            return self.delta / 2
        valid = isinstance(slack, numbers.Real) and not isinstance(slack, bool) and math.isfinite(slack)
        if not valid or not 0 < float(slack) <= self.delta:
            raise ParameterError(f"slack must be a number with 0 < slack <= delta = {self.delta:g}; got {slack!r}")
        return float(slack)

    # ------------------------------------------------------------------ reading the ledger

    @property
    def ledger(self) -> list[LedgerEntry]:
        """The releases recorded so far, oldest first (parallel ones labelled with their block and part)."""
        with self._synced():
            return flat_entries(self._records)

    @property
    def spent(self) -> tuple[float, float]:
        """Total (ε, δ) of the recorded releases under the composition rule (ε at the budget's δ for "pld" and
        "zcdp")."""
        with self._synced():
            return self._running.total(self._open_items())

    @property
    def remaining(self) -> tuple[float, float]:
        """(ε, δ) left of the budget (never below 0); the rule is in the class docstring, "What is left"."""
        with self._synced():
            items = self._open_items()
            eps, delta = self._running.total(items)
            if self.composition in ("pld", "zcdp"):  # δ is where ε is measured; only the additive δ is spent
                delta = self._running.additive_delta(items)
        return _left(self.epsilon, eps), _left(self.delta, delta)

    def preview(self, plan) -> PlanPreview:
        """What a plan of releases would cost against this budget — before any data, spending nothing.

        ``plan``: the previews of the planned calls (:func:`dpstats.preview`, each holding its privacy events and
        its noise). Returns a :class:`PlanPreview`: the total (ε, δ) of the ledger so far plus the whole plan under
        this accountant's composition (what :attr:`spent` would read after it), whether it fits the budget (what
        the accountant would accept, the releases in this order: never a release that is not private, nor an
        unproven one unless the accountant allows those), and each call's 95 % error.

        Examples
        --------
        >>> import dpstats as dps
        >>> acc = dps.Accountant(1.0, 1e-6)
        >>> plan = [dps.preview(dps.mean, 0.5, bounds=(0, 100), n=1000), dps.preview(dps.histogram, 0.5, bins=10)]
        >>> acc.preview(plan).fits
        True
        """
        previews = tuple(plan)
        if not all(hasattr(p, "events") and hasattr(p, "statements") for p in previews):
            raise ParameterError("plan must be a sequence of previews (dps.preview(release, epsilon, ...))")
        events = [e for p in previews for e in p.events]
        # a release that is not private, or unproven where this accountant refuses those, would be refused
        accepted = all(
            getattr(p, "private", True) and (getattr(p, "proven", True) or self.allow_unproven) for p in previews
        )
        with self._synced():
            items = [*self._open_items(), *events]
            total = self._running.total(items)
            fits = accepted and self._running.fits(self.epsilon, items)
        return PlanPreview(previews, total, fits, (self.epsilon, self.delta), self.composition)

    def to_frame(self):
        """The ledger as a pandas DataFrame, one row per release (for notebooks; pandas is imported when this is
        called): mechanism, relation, ε, δ, the noise and its 95 % error in the release's units, part, proven,
        note (:func:`~dpstats.accounting.ledger.entries_frame`)."""
        return entries_frame(self.ledger)

    @property
    def head(self) -> tuple[int, str] | None:
        """For a ledger file: (number of records, SHA-256 of the last record). Keep it elsewhere (a lab notebook,
        a commit) and :meth:`check_head` it later, to detect a rollback or a rewrite of the log with its head, which
        the files alone cannot show. None without a ledger file."""
        if self._log is None:
            return None
        with self._synced():
            return self._log.head

    def check_head(self, head) -> None:
        """Check that the ledger file still holds a head noted earlier (:attr:`head`, kept elsewhere: a lab
        notebook, a commit, an e-mail): at least its number of records, the last of them with its hash.

        The files alone cannot show a rollback by someone who can write both: the last records deleted together
        with their head entries, or the log cut to a consistent prefix with a head to match, or rewritten from some
        record on (:mod:`dpstats.accounting.log`, "What the files cannot show"). A head pinned outside them can:
        this raises :class:`~dpstats.exceptions.LedgerTamperedError` (naming the file and the record) if the
        ledger no longer extends it, and the accountant refuses every later use, as for any tampering.

        Parameters
        ----------
        head : (int, str)
            ``(number of records, SHA-256 of the last record)``, as :attr:`head` gave it.
        """
        valid = (
            isinstance(head, (tuple, list))
            and len(head) == 2
            and isinstance(head[0], numbers.Integral)
            and not isinstance(head[0], bool)
            and head[0] >= 0
            and isinstance(head[1], str)
            and len(head[1]) == 64
            and all(c in "0123456789abcdef" for c in head[1])
        )
        if not valid:
            raise ParameterError(
                f"head must be (number of records, SHA-256 hex digest of the last record) as Accountant.head gives "
                f"it; got {head!r}"
            )
        if self._log is None:
            raise ParameterError("check_head needs a ledger file: an in-memory ledger has no head")
        with self._synced() as fd:
            self._log.check_pinned(fd, int(head[0]), head[1])

    def composition_items(self) -> list:
        """The ledger as the composition rules take it: events and :class:`~dpstats.accounting.Parallel` blocks,
        in the order they entered the running total (a block when it closed), then the open blocks (re-read from
        the shared ledger file, if any). ``compose(acc.composition_items(), acc.composition, acc.delta)`` is
        :attr:`spent`, to the last bit (:mod:`dpstats.accounting.compose`, "Running totals")."""
        with self._synced():
            return [item for index in self._entered for item in _items(self._records[index])] + self._open_items()

    def composed_with(self, events) -> tuple[float, float]:
        """The total (ε, δ) if releases made of ``events`` (events or :class:`~dpstats.accounting.Parallel`
        blocks) were added; nothing is recorded. Costs what one spend costs, not a recomposition of the ledger."""
        with self._synced():
            return self._running.total([*self._open_items(), *events])

    def _open_items(self) -> list:
        return [item for b in sorted(self._open) for item in self._records[b].items()]

    # ------------------------------------------------------------------ spending

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` if a release of (ε, δ) (known by nothing else) would not fit."""
        self.check_events([_generic_event(epsilon, delta)])

    def check_events(self, events, *, proven: bool = True) -> None:
        """Raise if a release made of ``events`` would not fit (nothing is recorded)."""
        entry = LedgerEntry.of("check", events, proven=proven)
        with self._synced():
            self._admit(entry, None)

    def spend(
        self, epsilon: float, delta: float = 0.0, *, mechanism: str = "", note: str = "", relation: str | None = None
    ) -> None:
        """Record a release of (ε, δ) known by nothing else, after checking it fits (``relation``: as in
        :meth:`record`)."""
        self.record(mechanism, [_generic_event(epsilon, delta)], note=note, relation=relation)

    def record(
        self,
        mechanism: str,
        events,
        *,
        note: str = "",
        proven: bool = True,
        noise=(),
        relation: str | None = None,
        _slot: tuple[int, int] | None = None,
    ) -> LedgerEntry:
        """Check, then record, a release made of ``events``; returns its ledger entry.

        ``noise`` holds the release's :class:`~dpstats.accounting.ledger.NoiseStatement` (or several, one per
        noise added): its noise and error in the units of the release, shown in the ledger. ``relation`` is the
        neighbouring relation the release protects: ``"row"`` (replace one row) or ``"unit"`` (replace all rows
        of one privacy unit); a branch of a parallel block takes only releases of the block's relation
        (:meth:`parallel`). Each event's (ε, δ) must be a guarantee of its noise
        (:func:`~dpstats.accounting.events.check_label`; ParameterError). Raises :class:`BudgetExceededError` (or
        :class:`UnprovenGuaranteeError`) and records nothing if it does not fit.
        """
        events = tuple(events)
        if not events or not all(isinstance(e, Event) for e in events):
            raise ParameterError("a release needs at least one dpstats.accounting event")
        noise = (noise,) if isinstance(noise, NoiseStatement) else tuple(noise)
        if not all(isinstance(s, NoiseStatement) for s in noise):
            raise ParameterError("noise must be a NoiseStatement or a sequence of them")
        entry = LedgerEntry.of(mechanism, events, note=note, proven=proven, noise=noise, relation=relation)
        change = {"entry": entry.to_dict()}
        if _slot is not None:
            change.update(block=_slot[0], part=_slot[1])
        with self._synced(write=True) as fd:
            self._admit(entry, _slot)
            self._commit(fd, change, entry)
        return entry

    def _admit(self, entry: LedgerEntry, slot: tuple[int, int] | None) -> None:
        if not entry.proven and not self.allow_unproven:
            raise UnprovenGuaranteeError(
                f"{entry.mechanism}: its privacy guarantee is not proven for the sampler used ({entry.note}); "
                "the accountant refuses it. Use the mechanism's proven default, or create the accountant with "
                "allow_unproven=True to record it as UNPROVEN. Nothing was released."
            )
        if slot is not None:
            if slot[0] not in self._open:
                raise ParameterError("this parallel block is closed; open a new one with Accountant.parallel")
            _check_relation(entry, self._records[slot[0]])
        extra = self._candidate(entry, slot)
        if self._running.fits(self.epsilon, extra):
            return
        floor = self._running.floor(extra)
        if floor > self.epsilon:  # known without composing (the release alone is over the budget)
            total = f"at least epsilon={floor:.6g} (this release's own epsilon at the budget's delta)"
        else:
            eps, delta = self._running.total(extra)
            total = f"(epsilon={eps:.6g}, delta={delta:.3g})"
        before_eps, before_delta = self._running.total(self._open_items())
        raise BudgetExceededError(
            f"{entry.mechanism or 'this release'} (epsilon={entry.epsilon:g}, delta={entry.delta:g}) would bring "
            f"the total to {total} under {self.composition!r} composition, over "
            f"the budget (epsilon={self.epsilon:g}, delta={self.delta:g}); spent so far (epsilon="
            f"{before_eps:.6g}, delta={before_delta:.3g}). Nothing was released. (To divide a budget into "
            "equal shares that fit exactly, use Accountant.split or Accountant.calibrate.)"
        )

    def _candidate(self, entry: LedgerEntry, slot: tuple[int, int] | None) -> list:
        """The items beyond the running total if ``entry`` were recorded: the open blocks, and the entry."""
        if slot is None:
            return [*self._open_items(), *entry.events]
        block, part = slot
        items = []
        for b in sorted(self._open):
            record = self._records[b]
            items += (record.with_entry(part, entry) if b == block else record).items()
        return items

    def refuse(self, mechanism: str, reason: str) -> None:
        """Refuse a mechanism that is not differentially private; always raises :class:`NotPrivateError`."""
        raise NotPrivateError(f"{mechanism} is not differentially private ({reason}); the accountant refuses it")

    # ------------------------------------------------------------------ changes of the ledger

    def _commit(self, fd, change: dict, entry: LedgerEntry | None = None) -> None:
        """Write ``change`` to the ledger file (if any), then apply it here."""
        if self._log is not None:
            self._log.append(fd, change)
        self._running.add(self._apply(change, entry))

    def _apply(self, change: dict, entry: LedgerEntry | None = None) -> list:
        """Apply one change to the records; returns the items it adds to the running total. Changes read back
        from a file are checked first (ParameterError on a malformed one)."""
        if "entry" in change:
            entry = entry or LedgerEntry.from_dict(change["entry"])
            if "block" not in change:
                _expect_keys(change, {"entry"})
                self._records.append(entry)
                self._entered.append(len(self._records) - 1)
                return list(entry.events)
            _expect_keys(change, {"entry", "block", "part"})
            block, part = change["block"], change["part"]
            if block not in self._open or not _index(part, len(self._records[block].parts)):
                raise ParameterError(f"no open parallel block {block!r} with a part {part!r}")
            check_block_entry(self._records[block], entry)
            self._records[block].parts[part].append(entry)
            return []
        if "parallel" in change:
            _expect_keys(change, {"parallel", "by"} if "by" in change else {"parallel"})  # no "by": a row block
            parts, by = change["parallel"], change.get("by", "row")
            if not _index(parts, math.inf) or parts < 1:
                raise ParameterError(f"a parallel block needs an integer number of parts >= 1; got {parts!r}")
            if by not in RELATIONS:
                raise ParameterError(f"a parallel block is split by one of {RELATIONS}; got {by!r}")
            self._records.append(ParallelRecord([[] for _ in range(parts)], by=by))
            self._open.add(len(self._records) - 1)
            return []
        _expect_keys(change, {"close"})
        block = change["close"]
        if block not in self._open:
            raise ParameterError(f"no open parallel block {block!r} to close")
        record = self._records[block]
        record.closed, record.entered = True, len(self._entered)
        self._open.discard(block)
        self._entered.append(block)
        return record.items()

    def _load(self, records: list[Record]) -> None:
        """Take over ``records`` (a ledger read from JSON), composing them in one go, in the order they entered
        the total of the accountant that wrote them (so that the total is the same, to the last bit)."""
        self._records = list(records)
        self._entered = entered_order(self._records)
        self._open = {i for i, r in enumerate(self._records) if isinstance(r, ParallelRecord) and not r.closed}
        for position, index in enumerate(self._entered):
            if isinstance(self._records[index], ParallelRecord):
                self._records[index].entered = position
        self._running.add([item for index in self._entered for item in _items(self._records[index])])

    # ------------------------------------------------------------------ parallel composition

    def parallel(self, parts: int, *, by: str = "row") -> ParallelBlock:
        """A block of ``parts`` branches for releases on disjoint parts of the data.

        Parallel composition needs that replacing one neighbour changes one part only. The neighbour is what the
        releases protect, so a block is split by one of two relations, ``by``:

        ``"row"`` (releases without a privacy unit)
            Split the rows by a public rule on their positions (for example
            ``numpy.array_split(range(n), parts)``), so that every part's size is public and replacing one row
            changes one part only. Splitting by the rows' *contents* (a group-by) is not covered: a replaced row
            can move from one group to another and change both, and the groups' sizes are then not public.
        ``"unit"`` (releases with ``privacy_unit=``)
            The neighbour is a whole unit (a person): all of its rows may change. Split by a public function of
            the unit's identifier alone, so that all rows of each unit are in one part, for example a keyed hash
            of the identifier modulo ``parts``. A split by row positions is not covered: a person with rows in
            several parts changes every one of them, and the parts then compose in sequence.

        Pass ``block[i]`` as the ``accountant`` of every release computed on part i. The block costs what its most
        expensive part costs (:mod:`dpstats.accounting.compose`, "Parallel composition"). A branch takes only
        releases of the block's relation: a release with a privacy unit on a row block (or without one on a unit
        block) raises a :class:`~dpstats.exceptions.ParameterError` before anything is released, as does a spend
        by hand that does not state its ``relation``. For a group-by, pass ``by=`` to the statistic
        (``descriptive._grouped``): one release over the keys, whose sensitivity counts both keys a replaced unit moves.

        Examples
        --------
        >>> import numpy as np
        >>> import dpstats as dps
        >>> acc = dps.Accountant(1.0, 0.0, composition="basic")
        >>> x = np.linspace(0, 1, 90)
        >>> with acc.parallel(3) as block:
        ...     means = [dps.mean(x[rows], 1.0, bounds=(0, 1), rng=0, accountant=branch)
        ...              for branch, rows in zip(block, np.array_split(np.arange(90), 3))]
        >>> acc.spent
        (1.0, 0.0)

        By person: each person's rows all go to the part their identifier hashes to.

        >>> import hashlib
        >>> people = np.repeat(np.arange(30), 3)  # 30 people, 3 rows each
        >>> def part_of(person, key=b"chosen without looking at the data"):
        ...     return hashlib.blake2b(str(person).encode(), key=key).digest()[0] % 3
        >>> parts = np.array([part_of(p) for p in people])
        >>> acc = dps.Accountant(1.0, 0.0, composition="basic")
        >>> with acc.parallel(3, by="unit") as block:
        ...     means = [dps.mean(x[parts == i], 1.0, bounds=(0, 1), privacy_unit=people[parts == i], max_rows=3,
        ...                       rng=0, accountant=block[i]) for i in range(3)]
        >>> round(acc.spent[0], 6)  # the most expensive part (a unit-level mean charges a little under its ε)
        1.0
        """
        if not isinstance(parts, numbers.Integral) or isinstance(parts, bool) or parts < 1:
            raise ParameterError(f"parts must be an integer >= 1; got {parts!r}")
        by = check_choice(by, "by", RELATIONS)
        with self._synced(write=True) as fd:
            self._commit(fd, {"parallel": int(parts), "by": by})
            return ParallelBlock(self, len(self._records) - 1, int(parts))

    def _close_block(self, block: int) -> None:
        with self._synced(write=True) as fd:
            if block in self._open:
                self._commit(fd, {"close": block})

    # ------------------------------------------------------------------ dividing a budget

    def split(self, parts: int) -> float:
        """The largest ε such that ``parts`` pure releases of ε each fit in what remains, exactly.

        Under "basic" composition, ``parts * split(parts)`` never exceeds the
        remaining ε, however the float division rounds. For Gaussian releases
        and the other rules, see :meth:`calibrate`.
        """
        from .plan import equal_share

        return equal_share(self, parts)

    def calibrate(self, plan):
        """Per-release (ε, δ) that use what remains of the budget exactly; see :func:`dpstats.accounting.calibrate`."""
        from .plan import calibrate

        return calibrate(plan, self)

    # ------------------------------------------------------------------ export

    def to_json(self) -> str:
        """The budget and every recorded event, as JSON (format ``dpstats-ledger/1``, for interchange; the ledger
        file is a log of its own format, :mod:`dpstats.accounting.log`)."""
        with self._synced():
            return entries_to_json(self._header(), self._records)

    @classmethod
    def from_json(cls, text: str) -> Accountant:
        """An in-memory accountant holding the budget and ledger of :meth:`to_json` output. Every value is
        checked: a malformed budget or entry (a negative or NaN ε, δ >= 1, an unknown event type, an (ε, δ) that
        is not the total of its events, ...) raises a ParameterError naming it."""
        header, records = entries_from_json(text)
        acc = cls(**_budget_kwargs(header))
        acc._load(records)
        return acc

    def _header(self) -> dict:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "composition": self.composition,
            "slack": self.slack,
            "allow_unproven": self.allow_unproven,
        }

    # ------------------------------------------------------------------ sharing across processes

    @contextlib.contextmanager
    def _synced(self, write: bool = False):
        """Hold this accountant's lock and, with a ledger file, the file's lock (exclusive to ``write``), with
        what other processes appended read in; yields the file descriptor (None without a file)."""
        if write and self._log is None:
            self._check_owner()
        with self._lock:
            if self._log is None:
                yield None
                return
            with self._log.locked(write) as fd:
                self._read(self._log.read_new(fd))
                yield fd

    def _check_owner(self) -> None:
        """Refuse a change of an in-memory ledger in any process but the one that created it.

        A forked process (``multiprocessing`` and ``concurrent.futures.ProcessPoolExecutor`` on Linux, joblib with
        a fork backend) inherits a *copy* of every object: a spend on the copy would be checked against the copy's
        budget and recorded in the copy's ledger, which the creator never sees — n workers could each spend the
        whole budget. Pickling (spawn, forkserver) is refused by :meth:`__reduce__`; this refuses the copies a fork
        makes, before anything is recorded or released. Reading the copy (``spent``, ``ledger``) stays allowed. A
        ledger file is shared by every process instead: each spend appends to it under a lock."""
        if _process() != self._owner:
            raise AccountantSharingError(
                f"this Accountant keeps its ledger in memory and was created in another process (pid "
                f"{self._owner[0]}); this process (pid {os.getpid()}) holds a copy made by a fork (multiprocessing, "
                "ProcessPoolExecutor or joblib workers on Linux), and a charge on it would never reach the "
                "original. Nothing was released. Share the budget through a file, Accountant(epsilon, delta, "
                "ledger_file='budget.jsonl'), which every process appends to; or make the releases in the process "
                "that created the accountant."
            )

    def _attach(self) -> None:
        """Open (checking every record) or create the ledger file, and read it in."""
        _refuse_export(self.ledger_file)
        records = self._log.start({"budget": self._header()})
        (_, header), rest = records[0], records[1:]
        if header.get("budget") != self._header():
            raise ParameterError(
                f"ledger_file {self.ledger_file} holds a different budget or rule {header.get('budget')}; this "
                f"accountant has {self._header()}. Open it with the same parameters (or Accountant.open(path))"
            )
        self._read(rest)

    def _read(self, records: list[tuple[int, dict]]) -> None:
        """Apply records read from the ledger file (a malformed one is a LedgerTamperedError naming it)."""
        items = []
        for n, change in records:
            try:
                if not isinstance(change, dict) or not ({"entry", "parallel", "close"} & set(change)):
                    raise ParameterError(f"not a ledger change: {change!r}")
                items += self._apply(change)
            except ParameterError as err:
                self._log.fail(f"ledger file {self.ledger_file}: record {n}: {err}")
        self._running.add(items)

    @classmethod
    def open(cls, ledger_file: str | os.PathLike) -> Accountant:
        """Join the shared ledger in ``ledger_file`` with the budget stored there (every record is checked)."""
        path = Path(ledger_file).resolve()
        _refuse_export(path)
        return cls(**_budget_kwargs(LedgerLog(path).read_header()["budget"]), ledger_file=path)

    def __reduce__(self):
        if self.ledger_file is None:
            raise AccountantSharingError(
                "this Accountant keeps its ledger in memory and cannot be pickled or copied: charges made on a "
                "copy (for example in a worker process of cross_val_score or GridSearchCV with n_jobs > 1) would "
                "never reach it. Use n_jobs=1, or share the budget through a file: "
                "Accountant(epsilon, delta, ledger_file='budget.jsonl'). To pickle a fitted estimator, first "
                "set_params(accountant=None)."
            )
        return Accountant.open, (str(self.ledger_file),)

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        eps, delta = self.spent
        releases = len(self.ledger)
        return (
            f"Accountant(epsilon={self.epsilon:g}, delta={self.delta:g}, composition={self.composition!r}; "
            f"spent ε={eps:.4g} at δ={delta:.3g}, {releases} release{'' if releases == 1 else 's'})"
        )

    def __str__(self) -> str:
        """The budget, the total explained, what is left, then the ledger (every line <= 100 characters)."""
        import textwrap

        eps, delta = self.spent
        left_eps, left_delta = self.remaining
        entries = self.ledger
        together = "the release is" if len(entries) == 1 else f"all {len(entries)} releases together are"
        short = _RULE_WORDS[self.composition].split(" (")[0]
        head = [f"Budget: ε = {self.epsilon:g}, δ = {self.delta:g}, composition {_RULE_WORDS[self.composition]}"]
        if self.composition in ("pld", "zcdp"):
            head += [
                f"Spent:  ε = {eps:.6g} at δ = {delta:.3g} under {short}: {together} ({eps:.6g}, {delta:.3g})-DP",
                f"Left:   ε = {left_eps:.6g} at δ = {self.delta:.3g}; a further release may carry its own δ up to "
                f"{left_delta:.3g}",
            ]
        else:
            head += [
                f"Spent:  ε = {eps:.6g}, δ = {delta:.3g} under {short}: {together} ({eps:.6g}, {delta:.3g})-DP",
                f"Left:   ε = {left_eps:.6g}, δ = {left_delta:.3g}",
            ]
        lines = [line for text in head for line in textwrap.wrap(text, WIDTH, subsequent_indent=" " * 8)]
        return "\n".join([*lines, *format_table(entries)])


@dataclasses.dataclass(frozen=True)
class PlanPreview:
    """A plan of releases against a budget (:meth:`Accountant.preview`): the previews, the total (ε, δ) the ledger
    would have after them, whether the accountant would accept them all, the budget and the composition rule."""

    previews: tuple
    total: tuple[float, float]
    fits: bool
    budget: tuple[float, float]
    composition: str

    def __str__(self) -> str:
        from .ledger import format_table

        eps, delta = self.total
        verdict = "fits the budget" if self.fits else "does NOT fit the budget"
        head = (
            f"Plan of {len(self.previews)} release{'' if len(self.previews) == 1 else 's'}: total ε = {eps:.6g} at "
            f"δ = {delta:.3g} under {_RULE_WORDS[self.composition].split(' (')[0]} with the ledger so far; "
            f"{verdict} (ε = {self.budget[0]:g}, δ = {self.budget[1]:g})"
        )
        entries = [
            LedgerEntry(
                p.release,
                p.epsilon,
                p.delta,
                p.note,
                tuple(p.events),
                proven=getattr(p, "proven", True),
                noise=tuple(p.statements),
                relation=p.relation,
            )
            for p in self.previews
        ]
        import textwrap

        return "\n".join([*textwrap.wrap(head, WIDTH, subsequent_indent="  "), *format_table(entries)])


def _left(budget: float, spent: float) -> float:
    """budget − spent, exactly, rounded down (never below 0): spending it fits where the sums are exact."""
    return max(float_down(Fraction(budget) - Fraction(spent)), 0.0)


def _items(record: Record) -> list:
    """The composition items of one record: an entry's events, or a block's (:meth:`ParallelRecord.items`)."""
    return record.items() if isinstance(record, ParallelRecord) else list(record.events)


def _check_relation(entry: LedgerEntry, block: ParallelRecord) -> None:
    """Refuse a release on a branch of ``block`` whose neighbouring relation is not the block's (ParameterError
    that says what to do; nothing has been recorded or released)."""
    name = entry.mechanism or "this release"
    if entry.relation == block.by:
        return
    if entry.relation is None:
        raise ParameterError(
            f"{name} does not state its neighbouring relation, and a parallel block (split by {block.by!r}) takes "
            f"only releases of its own relation: pass relation={block.by!r} to record or spend if the release "
            f"protects {'one row' if block.by == 'row' else 'a whole privacy unit'}, or make it outside the block. "
            "Nothing was released."
        )
    if entry.relation == "unit":
        raise ParameterError(
            f"{name} protects a privacy unit (all rows of one unit), but this parallel block was opened for parts of "
            "the rows (Accountant.parallel(k)): a unit with rows in several parts changes every one of them, so the "
            "parts would compose in sequence, not in parallel. Open the block with Accountant.parallel(k, "
            "by='unit') and split by a public function of the unit's identifier alone (for example a keyed hash of "
            "the identifier modulo k), so that all rows of each unit fall in one part; or make the releases outside "
            "a block. Nothing was released."
        )
    raise ParameterError(
        f"{name} protects one row (it has no privacy_unit), but this parallel block was opened for privacy units "
        "(by='unit'): a release that protects one row says nothing about a whole unit. Pass privacy_unit= (and "
        "max_rows=) to the release, or open a block by rows for row-level releases (Accountant.parallel(k)). "
        "Nothing was released."
    )


def _expect_keys(change: dict, keys: set) -> None:
    if set(change) != keys:
        raise ParameterError(f"a change with {sorted(keys)} has the fields {sorted(change)}")


def _index(value, size) -> bool:
    """Whether ``value`` is an integer (not a bool) in [0, size)."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


def _refuse_export(path: Path) -> None:
    """A clear error for a to_json export given as a ledger file (it is not a log)."""
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        if handle.read(64).lstrip().startswith(b'{\n "format": "dpstats-ledger/1"'):
            raise LedgerError(
                f"{path} holds a dpstats-ledger/1 JSON export (Accountant.to_json), not a ledger log: read it "
                "with Accountant.from_json(text), or start a new ledger file"
            )


class ParallelBlock:
    """The branches of :meth:`Accountant.parallel`: ``block[i]`` is the accountant for part i's releases."""

    def __init__(self, accountant: Accountant, index: int, parts: int) -> None:
        self._branches = [_Branch(accountant, index, p) for p in range(parts)]
        self._accountant, self._index = accountant, index

    def __getitem__(self, part: int) -> _Branch:
        return self._branches[part]

    def __len__(self) -> int:
        return len(self._branches)

    def __iter__(self):
        return iter(self._branches)

    def close(self) -> None:
        """No more releases in this block (later spends on its branches raise)."""
        self._accountant._close_block(self._index)

    def __enter__(self) -> ParallelBlock:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Forwarding:
    """An accountant for one mechanism call that records through another (its ``record`` says how)."""

    _accountant: Accountant | _Forwarding

    def record(
        self, mechanism: str, events, *, note: str = "", proven: bool = True, noise=(), relation: str | None = None
    ) -> LedgerEntry:
        raise NotImplementedError  # pragma: no cover - interface

    def spend(
        self, epsilon: float, delta: float = 0.0, *, mechanism: str = "", note: str = "", relation: str | None = None
    ) -> None:
        self.record(mechanism, [_generic_event(epsilon, delta)], note=note, relation=relation)

    def refuse(self, mechanism: str, reason: str) -> None:
        self._accountant.refuse(mechanism, reason)


class _Branch(_Forwarding):
    """One part of a parallel block: spends go to the parent's block (an accountant for one mechanism call)."""

    def __init__(self, accountant: Accountant, block: int, part: int) -> None:
        self._accountant, self._block, self._part = accountant, block, part

    def record(
        self, mechanism: str, events, *, note: str = "", proven: bool = True, noise=(), relation: str | None = None
    ) -> LedgerEntry:
        return self._accountant.record(
            mechanism, events, note=note, proven=proven, noise=noise, relation=relation, _slot=(self._block, self._part)
        )

    def __repr__(self) -> str:
        return f"<branch {self._part + 1} of parallel block {self._block + 1} of {self._accountant!r}>"


class _Pending(_Forwarding):
    """An accountant for one mechanism call that owes a release made before it (:func:`with_pending`)."""

    def __init__(self, accountant, events: tuple, note: str) -> None:
        self._accountant, self._events, self._note = accountant, events, note

    def record(
        self, mechanism: str, events, *, note: str = "", proven: bool = True, noise=(), relation: str | None = None
    ) -> LedgerEntry:
        owed, self._events = self._events, ()
        note = "; ".join(n for n in (self._note if owed else "", note) if n)
        return self._accountant.record(
            mechanism, [*owed, *events], note=note, proven=proven, noise=noise, relation=relation
        )

    def __repr__(self) -> str:
        return f"<{self._accountant!r}, owing {len(self._events)} event(s)>"


def with_pending(accountant, events, *, note: str = ""):
    """``accountant`` (None stays None) for a mechanism call that must also pay for ``events``: a release computed
    just before it, inside the same call, that is used by the mechanism and never returned on its own (a private
    norm bound that rescales the rows, :func:`dpstats.preprocessing.to_unit_rows`).

    The mechanism's first charge records its events and ``events`` as one ledger entry (``note`` first), so both
    are checked against the budget together, before the mechanism draws any noise: if they do not fit, or if the
    mechanism raises before it charges (invalid input), nothing is recorded and nothing is released — the earlier
    release was only an input of the call. Later charges of the same call record their own events only.
    """
    check_accountant(accountant)
    if accountant is None:
        return None
    events = tuple(events)
    if not all(isinstance(e, Event) for e in events):
        raise ParameterError("with_pending needs dpstats.accounting events")
    return _Pending(accountant, events, note)


def _generic_event(epsilon: float, delta: float) -> Event:
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    return PureDP(epsilon) if delta == 0 else ApproxDP(epsilon, delta)


def _budget_kwargs(header: dict) -> dict:
    """The Accountant arguments stored in a ledger's header (each is checked by the constructor)."""
    if not isinstance(header, dict):
        raise ParameterError(f"a ledger's budget must be a JSON object; got {header!r}")
    try:
        return {
            "epsilon": header["epsilon"],
            "delta": header["delta"],
            "composition": header["composition"],
            "slack": header.get("slack"),
            "allow_unproven": header.get("allow_unproven", False),
        }
    except KeyError as err:
        raise ParameterError(f"ledger header lacks {err}") from err


def check_accountant(accountant):
    """Return ``accountant`` after checking it is None, an :class:`Accountant` or a branch of a parallel block.

    Mechanisms call this first, with their other argument checks, so a wrong
    type fails before any work is done.
    """
    if accountant is not None and not isinstance(accountant, Accountant | _Forwarding):
        raise ParameterError(
            f"accountant must be a dpstats.Accountant (or a branch of Accountant.parallel) or None; "
            f"got {type(accountant).__name__}"
        )
    return accountant


def _ledger_path(ledger_file) -> Path:
    """The ledger file's absolute path: a path (str or os.PathLike) to a file, not to a folder."""
    if not isinstance(ledger_file, (str, os.PathLike)):
        raise ParameterError(f"ledger_file must be a path to a file (a str or os.PathLike); got {ledger_file!r}")
    path = Path(ledger_file).resolve()
    if path.is_dir():
        raise ParameterError(f"ledger_file must be a path to a file; {path} is a folder")
    return path


def charge(
    accountant,
    mechanism: str,
    events,
    *,
    relation: str | None = None,
    note: str = "",
    proven: bool = True,
    noise=(),
) -> None:
    """Record a release on ``accountant`` (if any); mechanisms call this after validating, before drawing noise.

    ``relation``: the neighbouring relation the release protects, ``"row"`` without a privacy unit and ``"unit"``
    with one (:class:`~dpstats.accounting.Relation`; ``Bounded.relation`` of :mod:`dpstats._engine`). Every
    mechanism states it: a release that does not (None) is refused on a branch of a parallel block, which needs it
    (:meth:`Accountant.parallel`). ``noise``: the release's noise in its own units (a
    :class:`~dpstats.accounting.ledger.NoiseStatement`, from :meth:`dpstats.noise.release.Noise.statement`, or
    several), shown in the ledger. Every charge, with or without an accountant, is an event of
    :mod:`dpstats._trace` (the privacy events, the relation and ``proven``: public values)."""
    if active() is not None:  # the sensitivity checker is recording (off by default: nothing is computed)
        statements = noise if isinstance(noise, (list, tuple)) else [noise]
        event(
            "charge",
            mechanism,
            events=[e.to_dict() if hasattr(e, "to_dict") else repr(e) for e in events],
            relation=relation,
            proven=proven,
            noise=[n.to_dict() for n in statements if n is not None],
        )
    if check_accountant(accountant) is not None:
        accountant.record(mechanism, events, note=note, proven=proven, noise=noise, relation=relation)
