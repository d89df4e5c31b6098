"""Preprocessing that keeps the guarantee: maps applied to each row on its own, with public parameters only.

:func:`clip_rows` scales down the rows whose L2 norm exceeds a public bound, so that data of unknown norms meet the
‖x_i‖₂ <= 1 that every PCA, CCA and ERM mechanism assumes. Replacing one person's row changes one output row, so
a release computed on the clipped data keeps its guarantee. (Dividing by the largest row norm, as the PCA papers
do, reads the data and is not private: :func:`dpstats.compendium.datasets.scale_by_max_norm` reproduces it.)
"""

from __future__ import annotations

from ._engine import as_array, check_row_norms
from ._validation import check_columns, check_positive

__all__ = ["clip_rows"]


def clip_rows(X, max_norm: float = 1.0):
    """Scale down the rows whose L2 norm exceeds ``max_norm``; the other rows are unchanged.

    Parameters
    ----------
    X : array_like or dask array, shape (n, d)
        The data, one person per row (finite: NaN and infinity raise, they are never clipped away).
    max_norm : float, default 1.0
        The public bound R > 0.

    Returns
    -------
    numpy.ndarray or dask array, shape (n, d)
        Rows of norm <= R(1 + 1e-10) (within the tolerance of the mechanisms' row-norm check); a dask ``X`` gives a
        lazy result (its values are checked by the statistic that reads it).

    Examples
    --------
    >>> import numpy as np
    >>> from dpstats.preprocessing import clip_rows
    >>> clip_rows(np.array([[3.0, 4.0], [0.3, 0.4]])).tolist()
    [[0.6000000000000001, 0.8], [0.3, 0.4]]
    """
    max_norm = check_positive(max_norm, "max_norm")
    return check_row_norms(check_columns(as_array(X, "X", ndim=(2,))), "X", max_norm=max_norm, clip=True)
