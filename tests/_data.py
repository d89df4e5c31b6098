"""Synthetic data shared by several test modules."""

import math

import numpy as np


def separable(n, d=5, seed=0, margin=0.1):
    """Rows in the cube [-1/√d, 1/√d]^d (norm <= 1) labelled ±1 by a hyperplane, a margin around it removed."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (3 * n, d)) / math.sqrt(d)
    w = np.ones(d) / math.sqrt(d)
    keep = np.abs(X @ w) > margin / math.sqrt(d)
    X = X[keep][:n]
    return X, np.where(X @ w > 0, 1.0, -1.0)
