"""Previews of the decomposition releases (:func:`dpstats.preview`; each declared as the release's ``preview=``)."""

from __future__ import annotations

import math

from .._kernels.gram import norm_bound_squared
from .._release import Preview, planned_preview, public_count
from ..accounting import Relation

__all__ = ["pca_ag_preview"]


def pca_ag_preview(epsilon, delta, *, d=None, max_rows=None) -> Preview:
    """dps.pca_ag: the d(d + 1)/2 entries of XᵀX, L2 sensitivity √2·m times the largest squared row norm the
    row check lets through (:func:`dpstats.pca_ag`); ``d`` the number of columns, ``max_rows`` m with a unit."""
    d = public_count(d, "d")
    m = 1 if max_rows is None else public_count(max_rows, "max_rows")
    entries = d * (d + 1) // 2
    sensitivity = math.sqrt(2.0) * m * norm_bound_squared(d)
    per = [sensitivity / math.sqrt(entries)] * entries  # L2 of the per-entry values: the release's sensitivity
    units, relation = "Gram units (entries of XᵀX)", Relation.ROW if max_rows is None else Relation.UNIT
    return planned_preview("pca_ag", epsilon, delta, per, units=units, changed=entries, relation=relation)
