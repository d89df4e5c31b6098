"""dpstats: differentially private statistics and machine learning, reproducibly.

Neighbouring datasets differ by replacing one row (``n`` is public). Every
mechanism states its sensitivity, the paper it follows and its calibration; see
the README for the conventions.

Heavy submodules are imported on first use, so ``import dpstats`` stays fast.
"""

from importlib import import_module

from .accounting import Accountant
from .cca import cca  # eager, like pca below: the function shares its name with its submodule
from .descriptive import histogram, mean, variance
from .exceptions import (
    BudgetExceededError,
    DataValidationError,
    FloatingPointNoiseWarning,
    MixedScalesWarning,
    NotPrivateError,
    NotPrivateWarning,
    OutOfBoundsError,
    ParameterError,
    PrivacyError,
)

# Imported eagerly (pca.py needs only numpy at import time): the function dpstats.pca shares its
# name with the submodule, and a lazy import would let the submodule shadow the function.
from .pca import pca, pca_ag, pca_ppca, pca_ppm, pca_sn, top_components

__version__ = "0.1.0"

# public name -> submodule that defines it (imported lazily, PEP 562)
_LAZY = {
    "audit": "audit",
    "datasets": "datasets",
    "estimators": "estimators",
    "experiments": "experiments",
    "accounting": "accounting",
    "logistic_regression": "erm",
    "svm": "erm",
    "low_rank": "lowrank",
    "metrics": "metrics",
    "quantile": "quantiles",
    "private_bounds": "quantiles",
}

__all__ = [
    "Accountant",
    "BudgetExceededError",
    "DataValidationError",
    "FloatingPointNoiseWarning",
    "MixedScalesWarning",
    "NotPrivateError",
    "NotPrivateWarning",
    "OutOfBoundsError",
    "ParameterError",
    "PrivacyError",
    "cca",
    "histogram",
    "mean",
    "pca",
    "pca_ag",
    "pca_ppca",
    "pca_ppm",
    "pca_sn",
    "top_components",
    "variance",
    *_LAZY,
]


def __getattr__(name: str):
    if name in _LAZY:
        module = import_module(f".{_LAZY[name]}", __name__)
        value = module if _LAZY[name] == name else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpstats' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
