"""The χ² test of the exactness tests: counts against exact cell probabilities, sparse cells merged."""

from __future__ import annotations

import numpy as np
from scipy import stats

MIN_EXPECTED = 5.0  # χ² cells are merged until every expected count is at least this


def merged_chisquare(counts: np.ndarray, probs: np.ndarray) -> float:
    """χ² p-value of ``counts`` against the cell probabilities ``probs``, adjacent cells merged (left to right)
    until each expects at least MIN_EXPECTED; the remainder joins the last full cell."""
    n = int(np.sum(counts))
    obs, exp, o, e = [], [], 0, 0.0
    for count, p in zip(counts, probs, strict=True):
        o, e = o + count, e + n * p
        if e >= MIN_EXPECTED:
            obs.append(o)
            exp.append(e)
            o, e = 0, 0.0
    obs[-1] += o
    exp[-1] += e
    assert len(obs) >= 2, "a test needs at least two cells"
    exp = np.array(exp) * (sum(obs) / sum(exp))  # removes the 1e-16 rounding of the probabilities' sum
    return stats.chisquare(obs, exp).pvalue
