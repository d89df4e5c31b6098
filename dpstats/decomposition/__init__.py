"""Private second moments and their decompositions: PCA (Analyze Gauss, SN, the noisy power method, the
exponential mechanism, Amin et al., Dong, Liang & Yi), covariance, CCA and Hardt–Roth low-rank approximation.

Every release here is declared in :mod:`dpstats.registry` (family ``"decomposition"``).
"""

from ._cca import CCAResult, canonical_correlations, cca
from ._covariance import amin_eigen, covariance
from ._dong import covariance_dong, pca_dong
from ._lowrank import low_rank
from ._pca import pca, pca_ag, pca_ppca, pca_ppm, pca_sn, second_moment, top_components

__all__ = [
    "CCAResult",
    "amin_eigen",
    "canonical_correlations",
    "cca",
    "covariance",
    "covariance_dong",
    "low_rank",
    "pca",
    "pca_ag",
    "pca_dong",
    "pca_ppca",
    "pca_ppm",
    "pca_sn",
    "second_moment",
    "top_components",
]
