"""The :class:`Accountant`: a total (ε, δ) budget, a ledger of releases, and a composition rule."""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import threading
from pathlib import Path

from .._validation import check_choice, check_delta, check_epsilon
from ..exceptions import (
    AccountantSharingError,
    BudgetExceededError,
    NotPrivateError,
    ParameterError,
    UnprovenGuaranteeError,
)
from .compose import RULES, compose
from .events import ApproxDP, Event, PureDP
from .ledger import (
    LedgerEntry,
    ParallelRecord,
    Record,
    composition_items,
    entries_from_json,
    entries_to_json,
    flat_entries,
    format_table,
)

__all__ = ["DEFAULT_DELTA", "Accountant", "ParallelBlock", "charge", "check_accountant"]

#: δ of an Accountant created without one: small against 1/n for data sets up to a million rows.
DEFAULT_DELTA = 1e-6


class Accountant:
    """Track the privacy budget spent by a sequence of releases, composing them tightly.

    Every mechanism takes ``accountant=``. It validates its inputs, describes
    the release as privacy events (:mod:`dpstats.accounting.events`: Laplace
    with its scale, Gaussian with its noise multiplier, the exponential
    mechanism, ...), and calls :meth:`spend` *before* drawing any noise. If the
    composed total would exceed the budget, :class:`BudgetExceededError` is
    raised and nothing is released.

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
        reports ε = 4.89 where zCDP gives 5.76, advanced composition 39.6 and
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
        Keep the ledger in this JSON file, shared by every process that opens it
        (each spend locks the file, re-reads it, checks and appends). An
        accountant with a ledger file can be pickled and sent to worker
        processes (``cross_val_score(..., n_jobs=2)``); one without refuses to be
        pickled or copied, because its copy's charges would be lost.

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
        if not isinstance(allow_unproven, bool):
            raise ParameterError(f"allow_unproven must be True or False; got {allow_unproven!r}")
        self.allow_unproven = allow_unproven
        self._records: list[Record] = []
        self._lock = threading.RLock()
        self._file_depth = 0
        self.ledger_file = None if ledger_file is None else Path(ledger_file).resolve()
        if self.ledger_file is not None:
            with self._lock, self._file_lock():
                self._sync(create=True)

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
        with self._lock, self._file_lock():
            self._sync()
            return flat_entries(self._records)

    @property
    def spent(self) -> tuple[float, float]:
        """Total (ε, δ) of the recorded releases under the composition rule (ε at the budget's δ for "pld" and
        "zcdp")."""
        with self._lock, self._file_lock():
            self._sync()
            return self._total(self._records)

    @property
    def remaining(self) -> tuple[float, float]:
        """Budget minus :attr:`spent`, per coordinate (never below 0)."""
        eps, delta = self.spent
        return max(self.epsilon - eps, 0.0), max(self.delta - delta, 0.0)

    def composition_items(self) -> list:
        """The ledger as the composition rules take it: events and :class:`~dpstats.accounting.Parallel` blocks,
        oldest first (re-read from the shared ledger file, if any)."""
        with self._lock, self._file_lock():
            self._sync()
            return composition_items(self._records)

    def _total(self, records: list[Record]) -> tuple[float, float]:
        return compose(composition_items(records), self.composition, self.delta, slack=self.slack)

    # ------------------------------------------------------------------ spending

    def check(self, epsilon: float, delta: float = 0.0) -> None:
        """Raise :class:`BudgetExceededError` if a release of (ε, δ) (known by nothing else) would not fit."""
        self.check_events([_generic_event(epsilon, delta)])

    def check_events(self, events, *, proven: bool = True) -> None:
        """Raise if a release made of ``events`` would not fit (nothing is recorded)."""
        entry = LedgerEntry.of("check", events, proven=proven)
        with self._lock, self._file_lock():
            self._sync()
            self._admit(entry, None)

    def spend(self, epsilon: float, delta: float = 0.0, *, mechanism: str = "", note: str = "") -> None:
        """Record a release of (ε, δ) known by nothing else, after checking it fits."""
        self.record(mechanism, [_generic_event(epsilon, delta)], note=note)

    def record(
        self, mechanism: str, events, *, note: str = "", proven: bool = True, _slot: tuple[int, int] | None = None
    ) -> LedgerEntry:
        """Check, then record, a release made of ``events``; returns its ledger entry.

        Raises :class:`BudgetExceededError` (or :class:`UnprovenGuaranteeError`)
        and records nothing if it does not fit.
        """
        events = tuple(events)
        if not events or not all(isinstance(e, Event) for e in events):
            raise ParameterError("a release needs at least one dpstats.accounting event")
        entry = LedgerEntry.of(mechanism, events, note=note, proven=proven)
        with self._lock, self._file_lock():
            self._sync()
            self._admit(entry, _slot)
            self._append(entry, _slot)
            self._save()
        return entry

    def _admit(self, entry: LedgerEntry, slot: tuple[int, int] | None) -> None:
        if not entry.proven and not self.allow_unproven:
            raise UnprovenGuaranteeError(
                f"{entry.mechanism}: its privacy guarantee is not proven for the sampler used ({entry.note}); "
                "the accountant refuses it. Use the mechanism's proven default, or create the accountant with "
                "allow_unproven=True to record it as UNPROVEN. Nothing was released."
            )
        candidate = self._with(entry, slot)
        eps, delta = self._total(candidate)
        if not (eps <= self.epsilon and delta <= self.delta):
            before_eps, before_delta = self._total(self._records)
            raise BudgetExceededError(
                f"{entry.mechanism or 'this release'} (epsilon={entry.epsilon:g}, delta={entry.delta:g}) would bring "
                f"the total to (epsilon={eps:.6g}, delta={delta:.3g}) under {self.composition!r} composition, over "
                f"the budget (epsilon={self.epsilon:g}, delta={self.delta:g}); spent so far (epsilon="
                f"{before_eps:.6g}, delta={before_delta:.3g}). Nothing was released. (To divide a budget into "
                "equal shares that fit exactly, use Accountant.split or Accountant.calibrate.)"
            )

    def _with(self, entry: LedgerEntry, slot: tuple[int, int] | None) -> list[Record]:
        records = list(self._records)
        if slot is None:
            return records + [entry]
        block, part = slot
        parts = [list(p) for p in records[block].parts]
        parts[part].append(entry)
        records[block] = ParallelRecord(parts, records[block].closed)
        return records

    def _append(self, entry: LedgerEntry, slot: tuple[int, int] | None) -> None:
        if slot is None:
            self._records.append(entry)
        else:
            self._records[slot[0]].parts[slot[1]].append(entry)

    def refuse(self, mechanism: str, reason: str) -> None:
        """Refuse a mechanism that is not differentially private; always raises :class:`NotPrivateError`."""
        raise NotPrivateError(f"{mechanism} is not differentially private ({reason}); the accountant refuses it")

    # ------------------------------------------------------------------ parallel composition

    def parallel(self, parts: int) -> ParallelBlock:
        """A block of ``parts`` branches for releases on disjoint parts of the rows.

        Split the rows by a public rule on their positions (for example
        ``numpy.array_split(range(n), parts)``), so that every part's size is
        public and replacing one row changes one part only; then pass
        ``block[i]`` as the ``accountant`` of every release computed on part i.
        The block costs what its most expensive part costs
        (:mod:`dpstats.accounting.compose`, "Parallel composition"). Splitting by
        the rows' *contents* (a group-by) is not covered: a replaced row can
        move from one group to another and change both, and the groups' sizes
        are then not public.

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
        """
        if not isinstance(parts, numbers.Integral) or isinstance(parts, bool) or parts < 1:
            raise ParameterError(f"parts must be an integer >= 1; got {parts!r}")
        with self._lock, self._file_lock():
            self._sync()
            self._records.append(ParallelRecord([[] for _ in range(int(parts))]))
            self._save()
            return ParallelBlock(self, len(self._records) - 1, int(parts))

    def _close_block(self, block: int) -> None:
        with self._lock, self._file_lock():
            self._sync()
            self._records[block].closed = True
            self._save()

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
        """The budget and every recorded event, as JSON (format ``dpstats-ledger/1``)."""
        with self._lock, self._file_lock():
            self._sync()
            return entries_to_json(self._header(), self._records)

    @classmethod
    def from_json(cls, text: str) -> Accountant:
        """An in-memory accountant holding the budget and ledger of :meth:`to_json` output."""
        header, records = entries_from_json(text)
        acc = cls(**_budget_kwargs(header))
        acc._records = records
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
    def _file_lock(self):
        """Hold the shared ledger file's lock (re-entrant; callers hold ``self._lock`` first)."""
        if self.ledger_file is None or self._file_depth:
            self._file_depth += 1
            try:
                yield
            finally:
                self._file_depth -= 1
            return
        import fcntl

        with open(self.ledger_file.with_name(self.ledger_file.name + ".lock"), "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            self._file_depth += 1
            try:
                yield
            finally:
                self._file_depth -= 1
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _sync(self, create: bool = False) -> None:
        """Re-read the shared ledger file (under the file lock); create it if asked and missing."""
        if self.ledger_file is None:
            return
        if not self.ledger_file.exists():
            if create:
                self._save()
            return
        header, records = entries_from_json(self.ledger_file.read_text(encoding="utf-8"))
        if header != self._header():
            raise ParameterError(
                f"ledger_file {self.ledger_file} holds a different budget or rule {header}; this accountant has "
                f"{self._header()}. Open it with the same parameters (or Accountant.open(path))"
            )
        self._records = records

    def _save(self) -> None:
        if self.ledger_file is None:
            return
        temporary = self.ledger_file.with_name(f".{self.ledger_file.name}.{os.getpid()}.tmp")
        temporary.write_text(entries_to_json(self._header(), self._records), encoding="utf-8")
        os.replace(temporary, self.ledger_file)

    @classmethod
    def open(cls, ledger_file: str | os.PathLike) -> Accountant:
        """Join the shared ledger in ``ledger_file`` with the budget stored there."""
        path = Path(ledger_file).resolve()
        header, _ = entries_from_json(path.read_text(encoding="utf-8"))
        return cls(**_budget_kwargs(header), ledger_file=path)

    def __reduce__(self):
        if self.ledger_file is None:
            raise AccountantSharingError(
                "this Accountant keeps its ledger in memory and cannot be pickled or copied: charges made on a "
                "copy (for example in a worker process of cross_val_score or GridSearchCV with n_jobs > 1) would "
                "never reach it. Use n_jobs=1, or share the budget through a file: "
                "Accountant(epsilon, delta, ledger_file='budget.json'). To pickle a fitted estimator, first "
                "set_params(accountant=None)."
            )
        return Accountant.open, (str(self.ledger_file),)

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        eps, delta = self.spent
        return (
            f"Accountant(epsilon={self.epsilon:g}, delta={self.delta:g}, composition={self.composition!r}; "
            f"spent epsilon={eps:.6g}, delta={delta:.3g} in {len(self.ledger)} release(s))"
        )

    def __str__(self) -> str:
        return "\n".join([repr(self), *format_table(self.ledger)])


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


class _Branch:
    """One part of a parallel block: spends go to the parent's block (an accountant for one mechanism call)."""

    def __init__(self, accountant: Accountant, block: int, part: int) -> None:
        self._accountant, self._block, self._part = accountant, block, part

    def record(self, mechanism: str, events, *, note: str = "", proven: bool = True) -> LedgerEntry:
        acc = self._accountant
        with acc._lock, acc._file_lock():
            acc._sync()
            if acc._records[self._block].closed:
                raise ParameterError("this parallel block is closed; open a new one with Accountant.parallel")
        return acc.record(mechanism, events, note=note, proven=proven, _slot=(self._block, self._part))

    def spend(self, epsilon: float, delta: float = 0.0, *, mechanism: str = "", note: str = "") -> None:
        self.record(mechanism, [_generic_event(epsilon, delta)], note=note)

    def refuse(self, mechanism: str, reason: str) -> None:
        self._accountant.refuse(mechanism, reason)

    def __repr__(self) -> str:
        return f"<branch {self._part + 1} of parallel block {self._block + 1} of {self._accountant!r}>"


def _generic_event(epsilon: float, delta: float) -> Event:
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    return PureDP(epsilon) if delta == 0 else ApproxDP(epsilon, delta)


def _budget_kwargs(header: dict) -> dict:
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
    if accountant is not None and not isinstance(accountant, Accountant | _Branch):
        raise ParameterError(
            f"accountant must be a dpstats.Accountant (or a branch of Accountant.parallel) or None; "
            f"got {type(accountant).__name__}"
        )
    return accountant


def charge(accountant, mechanism: str, events, *, note: str = "", proven: bool = True) -> None:
    """Record a release on ``accountant`` (if any); mechanisms call this after validating, before drawing noise."""
    if check_accountant(accountant) is not None:
        accountant.record(mechanism, events, note=note, proven=proven)
