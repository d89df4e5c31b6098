"""dpstats: differentially private statistics and machine learning, reproducibly.

Neighbouring datasets differ by replacing one row (``n`` is public). Every
mechanism states its sensitivity, the paper it follows and its calibration; see
the README for the conventions.

Heavy submodules are imported on first use, so ``import dpstats`` stays fast.
The compendium (:mod:`dpstats.compendium`: datasets, experiments, reports) is
never imported by the library; ``dps.datasets`` and ``dps.experiments`` still
reach it for one release, with a :class:`DeprecationWarning`.
"""

import warnings
from importlib import import_module

from .accounting import Accountant
from .cca import cca  # eager, like pca below: the function shares its name with its submodule
from .covariance import amin_eigen, covariance  # eager: the function shares its name with its submodule
from .descriptive import count, mean, sum, variance
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
from .histograms import histogram

# Imported eagerly (pca.py needs only numpy at import time): the function dpstats.pca shares its
# name with the submodule, and a lazy import would let the submodule shadow the function.
from .pca import pca, pca_ag, pca_ppca, pca_ppm, pca_sn, top_components

__version__ = "0.1.0"

# public name -> submodule that defines it (imported lazily, PEP 562)
_LAZY = {
    "audit": "audit",
    "covariance_dong": "covariance_trace",
    "estimators": "estimators",
    "accounting": "accounting",
    "logistic_regression": "erm",
    "svm": "erm",
    "low_rank": "lowrank",
    "metrics": "metrics",
    "pca_dong": "covariance_trace",
    "preprocessing": "preprocessing",
    "quantile": "quantiles",
    "private_bounds": "quantiles",
}

# old name -> where it lives now (the compendium); reached with a DeprecationWarning, for one release
_MOVED = {
    "datasets": "compendium.datasets",
    "experiments": "compendium.experiments",
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
    "amin_eigen",
    "cca",
    "count",
    "covariance",
    "histogram",
    "mean",
    "pca",
    "pca_ag",
    "pca_ppca",
    "pca_ppm",
    "pca_sn",
    "sum",
    "top_components",
    "variance",
    *_LAZY,
]


def __getattr__(name: str):
    if name in _MOVED:
        warnings.warn(
            f"dpstats.{name} has moved to dpstats.{_MOVED[name]}; the old name will be removed in the next release",
            DeprecationWarning,
            stacklevel=2,
        )
        return import_module(f".{_MOVED[name]}", __name__)
    if name in _LAZY:
        module = import_module(f".{_LAZY[name]}", __name__)
        value = module if _LAZY[name] == name else getattr(module, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dpstats' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
