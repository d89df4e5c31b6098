"""Privacy accounting: what each release is, how releases compose, and the budget that bounds them.

* :mod:`~dpstats.accounting.gaussian` — the Gaussian mechanism's exact (ε, δ) curve, and the discrete Gaussian's
  place on it;
* :mod:`~dpstats.accounting.events` — privacy events (Laplace, Gaussian, the exponential mechanism, ...);
* :mod:`~dpstats.accounting.compose` — the composition rules ("pld", "zcdp", "advanced", "basic") as running
  totals, and parallel composition; :mod:`~dpstats.accounting.pld` (privacy-loss distributions composed
  incrementally) and :mod:`~dpstats.accounting.zcdp` (zCDP to (ε, δ)) beneath them;
* :mod:`~dpstats.accounting.ledger` — the ledger's entries and what each release's noise means in its units;
  :mod:`~dpstats.accounting.log` — the ledger file, an append-only hash-chained log;
* :class:`Accountant` — a budget and a ledger; mechanisms charge it before drawing noise;
* :func:`calibrate` — per-release parameters that use a budget exactly.

Nothing here imports the noise layer (:mod:`dpstats.noise`), which sits above it.
"""

from ..exceptions import AccountantSharingError, LedgerError, LedgerTamperedError, UnprovenGuaranteeError
from .accountant import (
    DEFAULT_DELTA,
    Accountant,
    ParallelBlock,
    charge,
    check_accountant,
    with_pending,
)
from .compose import RULES, Parallel, compose
from .events import ApproxDP, Event, Exponential, Gaussian, Laplace, PureDP, event_from_dict
from .gaussian import gaussian_epsilon
from .ledger import LedgerEntry, NoiseStatement
from .plan import Allocation, Planned, calibrate, split_epsilon, split_weighted
from .relation import Relation
from .zcdp import zcdp_delta, zcdp_epsilon

__all__ = [
    "Relation",
    "DEFAULT_DELTA",
    "RULES",
    "Accountant",
    "AccountantSharingError",
    "Allocation",
    "ApproxDP",
    "Event",
    "Exponential",
    "Gaussian",
    "Laplace",
    "LedgerEntry",
    "LedgerError",
    "LedgerTamperedError",
    "NoiseStatement",
    "Parallel",
    "ParallelBlock",
    "Planned",
    "PureDP",
    "UnprovenGuaranteeError",
    "calibrate",
    "charge",
    "check_accountant",
    "compose",
    "event_from_dict",
    "split_epsilon",
    "split_weighted",
    "gaussian_epsilon",
    "zcdp_delta",
    "zcdp_epsilon",
    "with_pending",
]
