"""Every error and warning class of the library, in one module (the compendium's are in
:mod:`dpstats.compendium.exceptions`).

Every invalid argument raises a :class:`ValueError` subclass whose message names
the parameter, the value received and what is allowed. Privacy-specific failures
(an exhausted budget, a mechanism that is not differentially private) have their
own classes so that callers can catch them separately. Nothing here imports
anything: every other module may import this one.
"""

__all__ = [
    "AccountantSharingError",
    "BudgetExceededError",
    "DataValidationError",
    "FloatingPointNoiseWarning",
    "LedgerError",
    "LedgerTamperedError",
    "MixedScalesWarning",
    "NotConvergedError",
    "NotPrivateError",
    "NotPrivateWarning",
    "OutOfBoundsError",
    "ParameterError",
    "PrivacyError",
    "UnprovenGuaranteeError",
]


class ParameterError(ValueError):
    """A parameter (epsilon, delta, k, bounds, ...) is outside its allowed range."""


class DataValidationError(ValueError):
    """The data are malformed: wrong shape, non-numeric, NaN or infinite values."""


class OutOfBoundsError(DataValidationError):
    """Data lie outside the bounds (or row norms) the caller declared.

    dpstats never clips silently: the message says how many values are outside
    and how to clip them on purpose.
    """


class PrivacyError(Exception):
    """Base class for refusals made to protect the privacy guarantee."""


class BudgetExceededError(PrivacyError):
    """A release would spend more than the accountant's remaining budget.

    Raised before any noise is drawn, so nothing is released.
    """


class NotPrivateError(PrivacyError):
    """An accountant was asked to record a mechanism that is not differentially private."""


class UnprovenGuaranteeError(PrivacyError):
    """A release whose guarantee is not proven (an approximate sampler) was refused by the accountant."""


class AccountantSharingError(PrivacyError):
    """An in-memory Accountant was pickled or copied: its copy's charges would never reach the original ledger."""


class LedgerError(PrivacyError):
    """The ledger file cannot be written (a full disk, a missing or read-only folder): the release was refused and
    the ledger file is as it was."""


class LedgerTamperedError(LedgerError):
    """The ledger file is not the log dpstats wrote: a record was edited, deleted, inserted or cut short. The
    message names the file and the first record that does not check."""


class NotConvergedError(PrivacyError):
    """The solver did not certify the exact minimiser the privacy proof needs; nothing was released."""


class NotPrivateWarning(UserWarning):
    """The release is not differentially private (for example the SN / Wishart mechanism)."""


class FloatingPointNoiseWarning(UserWarning):
    """The release used floating-point noise (``noise="float"``), which leaks through its low-order bits.

    Mironov (CCS 2012): the doubles that ``value + noise`` can produce depend on
    ``value``. dpstats' default noise is exact integer noise on a public grid;
    the float option exists to reproduce published numbers.
    """


class MixedScalesWarning(UserWarning):
    """One coordinate's range dominates the sensitivity of a vector release, so the others drown in its noise.

    A vector mean or variance is calibrated to the sensitivity of the whole
    vector (the sum, or the root of the sum of squares, of the per-column
    sensitivities), and every column gets that noise. With bounds
    ``([0, 0], [100, 200000])`` the age column gets noise scaled to incomes. The
    release is correct; pass ``weights=`` to give each column its own share of
    ε, so that each gets noise scaled to its own range. The warning's text holds
    public values only (bounds, n, column names).
    """


# The compendium's errors live in dpstats.compendium.exceptions; the old names are reached from here for one release.
_MOVED = {"DatasetNotFoundError", "DownloadError"}


def __getattr__(name: str):
    if name in _MOVED:
        import warnings
        from importlib import import_module

        warnings.warn(
            f"dpstats.exceptions.{name} has moved to dpstats.compendium.exceptions; the old name will be removed in "
            "the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(import_module("dpstats.compendium.exceptions"), name)
    raise AttributeError(f"module 'dpstats.exceptions' has no attribute {name!r}")
