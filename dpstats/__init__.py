"""dpstats: differentially private statistics and machine learning, reproducibly.

Neighbouring datasets differ by replacing one row (``n`` is public), or one privacy unit with ``privacy_unit=``.
Every release states its sensitivity, the paper it follows and its calibration, and is declared in
:mod:`dpstats.registry`; see the README for the conventions.

The families live in subpackages (:mod:`dpstats.descriptive`, :mod:`dpstats.decomposition`,
:mod:`dpstats.linear_model`, :mod:`dpstats.inference`); their public names are re-exported here and imported on
first use (PEP 562), so ``import dpstats`` stays fast. The compendium (:mod:`dpstats.compendium`: datasets,
experiments, reports) is never imported by the library; ``dps.datasets`` and ``dps.experiments`` still reach it for
one release, with a :class:`DeprecationWarning`.
"""

import warnings
from importlib import import_module

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

__version__ = "0.1.0"

# public name -> submodule that defines it (imported on first use, PEP 562); a name equal to its module is the module
_LAZY = {
    "Accountant": "accounting",
    "Estimate": "inference",
    "accounting": "accounting",
    "audit": "audit",
    "amin_eigen": "decomposition",
    "cca": "decomposition",
    "count": "descriptive",
    "covariance": "decomposition",
    "covariance_dong": "decomposition",
    "decomposition": "decomposition",
    "descriptive": "descriptive",
    "estimators": "estimators",
    "histogram": "descriptive",
    "hypothesis": "hypothesis",
    "inference": "inference",
    "linear_model": "linear_model",
    "linear_regression": "linear_model",
    "logistic_regression": "linear_model",
    "low_rank": "decomposition",
    "mean": "descriptive",
    "metrics": "metrics",
    "pca": "decomposition",
    "pca_ag": "decomposition",
    "pca_dong": "decomposition",
    "pca_ppca": "decomposition",
    "pca_ppm": "decomposition",
    "pca_sn": "decomposition",
    "preprocessing": "preprocessing",
    "preview": "_release",
    "private_bounds": "descriptive",
    "quantile": "descriptive",
    "registry": "registry",
    "sum": "descriptive",
    "svm": "linear_model",
    "top_components": "decomposition",
    "variance": "descriptive",
}

# old name -> where it lives now (the compendium); reached with a DeprecationWarning, for one release
_MOVED = {
    "datasets": "compendium.datasets",
    "experiments": "compendium.experiments",
}

__all__ = [
    "BudgetExceededError",
    "DataValidationError",
    "FloatingPointNoiseWarning",
    "MixedScalesWarning",
    "NotPrivateError",
    "NotPrivateWarning",
    "OutOfBoundsError",
    "ParameterError",
    "PrivacyError",
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
