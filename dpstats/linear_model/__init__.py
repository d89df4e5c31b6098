"""Linear models: linear regression (sufficient statistics, AdaSSP, TukeyEM, DPTheilSen), support vector machines
and logistic regression (empirical risk minimisation with output or objective perturbation).

Every release here is declared in :mod:`dpstats.registry` (family ``"linear_model"``).
"""

from ._erm import (
    AMP_SHARE,
    DEFAULT_MAX_ITER,
    Accelerated,
    Descent,
    OutputPerturbation,
    logistic_regression,
    objective_perturbation_parameters,
    svm,
)
from ._linear_regression import LinearRegressionResult, linear_regression
from ._tukey import PTRFailedWarning

__all__ = [
    "AMP_SHARE",
    "DEFAULT_MAX_ITER",
    "Accelerated",
    "Descent",
    "LinearRegressionResult",
    "OutputPerturbation",
    "PTRFailedWarning",
    "linear_regression",
    "logistic_regression",
    "objective_perturbation_parameters",
    "svm",
]
