"""Differentially private linear classifiers by regularised empirical risk minimisation (ERM).

Follows Chaudhuri, Monteleoni & Sarwate, "Differentially private empirical risk
minimization", JMLR 12 (2011) 1069–1109 (below: CMS 2011). For data
``(x_i, y_i)``, ``i = 1..n``, with ‖x_i‖₂ <= 1 and y_i ∈ {−1, +1}, the
non-private classifier is the minimiser of::

    J(f) = (1/n) Σ_i ℓ(y_i fᵀx_i) + (λ/2) ‖f‖²

(CMS 2011, eq. (1) with N(f) = ½‖f‖², which is 1-strongly convex). Neighbouring
datasets differ in one example (replace one row (x_i, y_i); n is public), which
is the paper's definition.

Two mechanisms, both pure ε-DP (δ = 0):

* ``method="output"`` — CMS 2011, **Algorithm 1** (output perturbation),
  private by **Theorem 6** when ℓ is convex and differentiable with
  |ℓ′| <= 1: the minimiser moves by at most 2/(nλ) in L2 when one example is
  replaced (CMS 2011, Corollary 8), and the release is ``f* + b`` with b of
  density ∝ exp(−(nλε/2)‖b‖), so ‖b‖ ~ Gamma(d, 2/(nλε)).
* ``method="objective"`` — CMS 2011, **Algorithm 2** (objective perturbation),
  private by **Theorem 9** when ℓ is convex and twice differentiable with
  |ℓ′| <= 1 and |ℓ″| <= c::

      ε′ = ε − ln(1 + 2c/(nλ) + c²/(n²λ²))
      if ε′ > 0:  Δ = 0
      else:       Δ = c / (n (e^{ε/4} − 1)) − λ,  ε′ = ε/2
      b with density ∝ exp(−(ε′/2)‖b‖)
      f_priv = argmin_f J(f) + bᵀf/n + (Δ/2)‖f‖²

  The formulas of the dpstats issue were checked against Algorithm 2 and agree
  (the Δ branch makes ln(1 + c/(n(λ+Δ)))² = ε/2 exactly). An observation, not
  a discrepancy: for 0 < ε′ < ε/2 the paper's rule keeps Δ = 0 with the smaller
  ε′, although the Δ branch (positive there) would also be private with ε/2;
  dpstats follows the paper's rule.

Losses (CMS 2011, Section 3.4): logistic ℓ(z) = ln(1 + e^{−z}) with c = 1/4;
Huber SVM loss with parameter h::

    ℓ_h(z) = 0                      if z > 1 + h
             (1 + h − z)² / (4h)    if |1 − z| <= h
             1 − z                  if z < 1 − h

with |ℓ_h′| <= 1 and ℓ_h″ <= c = 1/(2h). ℓ_h″ does not exist at z = 1 ± h;
CMS 2011 (Section 3.4.2) show that Algorithm 2 remains ε-DP for this loss with
c = 1/(2h) (the two kinks form a set of measure zero in the change of variables).

Output perturbation by a fixed number of gradient steps. Algorithm 1's
sensitivity holds for the exact minimiser; a solver that stops when it is close
enough fails on some inputs (λ = 1e-8 on a separable set: never certified, while
its neighbour with one label flipped was released — success then depends on
one row). dpstats releases instead the point reached by K gradient steps
f ← f − h∇J(f) from f = 0, with K and h public, and bounds *that* map's
sensitivity directly, whatever K (no convergence is needed):

* J is λ-strongly convex and L-smooth with L = cR² + λ, so for h <= 2/(λ + L)
  the step map T(f) = f − h∇J(f) is a contraction by q = √(1 − 2hλL/(λ + L))
  (Nesterov 2004, Theorem 2.1.12, for any two points);
* neighbours' gradients differ by at most 2mR/n at every f (one unit's m
  examples, |ℓ′| <= 1, ‖x‖ <= R);
* so the iterates from the same start satisfy
  ‖f_{k+1} − f′_{k+1}‖ <= q‖f_k − f′_k‖ + 2hmR/n, hence
  ‖f_K − f′_K‖ <= 2hmR/(n(1 − q)) = 2mR/(nλ) at h = 2/(λ + L): CMS's own
  sensitivity, for any K;
* floating point: each computed step is within e = h·(the gradient's error
  bound :func:`_gradient_error`) + the update's rounding of the exact step from
  the same point, at iterates of norm at most M = 2R/λ + E (public), so the
  computed iterates stay within E = e/(1 − q) of the exact ones; 2E is added to
  the sensitivity (:class:`Descent`).

K is the public number of steps after which the exact iterate is within 2^-10
of the sensitivity of the minimiser (q^K·R/λ <= 2^-9·m/n), at most
``max_iter``; the release's centre is then within :attr:`Descent.distance` of
the exact minimiser (stated in the ledger note). The solver never fails and
its work is the same for every dataset. The noise is exact discrete Laplace on
a public grid with the L1 sensitivity √d·S₂ (‖v‖₁ <= √d‖v‖₂): pure ε-DP, each
coordinate's standard deviation about √2 times that of the paper's Gamma-norm
noise ‖b‖ ~ Gamma(d, S₂/ε) (per coordinate √(2d) against √(d + 1), in units
of S₂/ε). ``noise="gamma"`` keeps the paper's Gamma-norm noise (a uniform
direction times a Gamma radius, rounded to the grid): its sampler is floating
point, so the release is recorded as unproven and an
:class:`~dpstats.Accountant` refuses it unless created with
``allow_unproven=True``; ``noise="float"`` is the paper's release without the
grid (unproven, and warns).

Approximate minimisers are charged (objective perturbation). Theorem 9 is
about the *exact* minimiser of the perturbed objective. dpstats minimises the
smooth, λ-strongly convex objective with L-BFGS-B on analytic gradients (a
second run, restarted where the first stalled, if floating point stopped it
short; then, if needed, a few Newton steps with the analytic Hessian) and
certifies the result: ‖∇F(f)‖₂ <= ``tol`` with the gradient's own
floating-point error added (:func:`_gradient_error`, a bound from n, d and the
block sizes), which by strong convexity puts f within r = ``tol``/λ of the
exact minimiser. The analysis then covers that distance:

* ``method="objective"``: a pure-DP version of the approximate minima
  perturbation of Iyengar, Near, Song, Thakkar, Thakurta & Wang (IEEE S&P
  2019, Algorithm 1). ε is split: ε₁ = ε − ε₂ goes to Algorithm 2 (exact
  minimiser θ* of the perturbed objective), ε₂ = ε/128 to output noise of
  density ∝ exp(−ε₂‖b₂‖/(2r′)) added to the approximate minimiser θ̃, r′ = r
  for the perturbed objective's modulus λ + Δ. *Proof.* For fixed data the map
  b ↦ θ* is a bijection and the densities of θ* under neighbours differ by at
  most e^{ε₁} (CMS 2011, proof of Theorem 9). Given θ*, θ̃ lies within r′ of it
  under either dataset, so the two θ̃ differ by at most 2r′ and the output
  noise makes the conditional densities of the release differ by at most
  e^{ε₂}. Integrating over θ*: e^{ε₁+ε₂}. ∎

Release on a grid (objective perturbation, and ``noise="gamma"``). The
released weights are G·(round(f/G) + round(b/G)) on a public grid G (2^-20 of
the sensitivity per coordinate); rounding moves each coordinate by at most
G/2, so the sensitivity charged includes G√d. The data enter the release only
through the integer round(f/G), so no low-order bits of f leak (Mironov 2012).
The Gamma-norm noise b itself is drawn in floating point (a uniform direction
times a Gamma radius): no exact sampler of this distribution is known, and the
ledger note says so. ``noise="float"`` skips the grid (the paper's release;
warns).

If the objective-perturbation solver cannot certify the minimiser (which has
not been seen for λ >= 1e-8 on the benchmark and test problems), it raises
:class:`NotConvergedError` with a message that depends on nothing but public
parameters and releases nothing; the budget was already charged, and the fact
that it failed is the one output the guarantee does not cover. (The original
dp-stats used Nelder–Mead, which gives no certificate at all, and its logistic
output perturbation crashed.)

Privacy units. With ``privacy_unit=`` and ``max_rows=m`` neighbours differ in
all examples of one unit (at most m kept per unit, chosen at random; N units,
public; the number of examples is not). The objective becomes
``J(f) = (1/(N m)) Σ_{kept i} ℓ(y_i fᵀx_i) + (λ/2)‖f‖²`` — each unit's loss
L_u = (1/m) Σ_{i∈u} ℓ_i is 1-Lipschitz (R-Lipschitz for rows of norm R) and
c-smooth like one example's, and J = (1/N) Σ_u L_u + (λ/2)‖f‖² — so both
theorems hold with n replaced by N·m and one unit in the role of one example:
the minimiser moves by at most 2mR/(N m λ) = 2R/(Nλ) (output perturbation,
calibrated as 2mR/(nλ) with n = N·m), and objective perturbation has
‖b − b′‖ <= 2mR and the Jacobian bound of
:func:`objective_perturbation_parameters`. All floating-point error bounds use
the public N·m in place of the number of examples.

Intercept. The functions fit no intercept: an unpenalised bias term would break
the strong convexity the proofs need. The estimators in
:mod:`dpstats.estimators` offer ``fit_intercept`` by a fixed feature map (see
there), under the same norm bound and calibration in d + 1 dimensions.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from ._engine import as_array, bound_checked, check_row_norms, engine_of, reduce_rows, take_units
from ._kernels.blocks import block_rows
from ._kernels.gram import norm_bound_squared
from ._kernels.reduce import DyadicSum
from ._kernels.rows import RowNormViolations, row_norm_violations
from ._rounding import UNIT_ROUNDOFF, gamma
from ._trace import draw, observe
from ._validation import check_choice, check_columns, check_epsilon, check_flag, check_int, check_positive
from .accounting import Accountant, PureDP, charge, check_accountant
from .exceptions import DataValidationError, NotConvergedError, ParameterError
from .noise.continuous import sample_gamma_norm_vector
from .noise.random import check_rng, describe_source
from .noise.release import Statistic, grid_integers, integers_times_grid, make_noise, output_grid

__all__ = ["Descent", "NotConvergedError", "logistic_regression", "objective_perturbation_parameters", "svm"]

METHODS = ("objective", "output")
#: Noise of the release: exact discrete Laplace on a public grid (output perturbation; objective perturbation's
#: release on the grid), the paper's Gamma-norm noise on the grid (output perturbation, unproven), or the paper's
#: floating-point release (warns; unproven for output perturbation).
NOISE = ("exact", "gamma", "float")
DEFAULT_TOL = 1e-9
DEFAULT_MAX_ITER = 5000


@dataclass(frozen=True)
class _Loss:
    name: str
    c: float  # bound on ℓ″

    def value_and_derivative(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def curvature(self, z: np.ndarray) -> np.ndarray:
        """ℓ″(z) (for the Huber loss: one-sided at the two kinks)."""
        raise NotImplementedError


@dataclass(frozen=True)
class _Logistic(_Loss):
    def value_and_derivative(self, z):
        # One exponential for both: with e = exp(−|z|), ℓ(z) = log(1 + e^{−z}) = max(−z, 0) + log1p(e) and
        # ℓ′(z) = −1/(1 + e^{z}) = −e/(1 + e) for z >= 0 and −1/(1 + e) for z < 0 (no overflow either way).
        # log(1 + e) rather than log1p(e): e ∈ (0, 1], so the absolute error per term is below 2.3e-16, the
        # rounding level of the mean it feeds, and numpy vectorises log but not log1p.
        e = np.exp(-np.abs(z))
        one_plus_e = 1.0 + e
        value = np.maximum(-z, 0.0) + np.log(one_plus_e)
        derivative = np.where(z >= 0, e, 1.0) / -one_plus_e
        return value, derivative

    def curvature(self, z):
        p = expit(z)
        return p * (1.0 - p)


@dataclass(frozen=True)
class _Huber(_Loss):
    h: float = 0.5

    def value_and_derivative(self, z):
        h = self.h
        u = np.clip(1.0 + h - z, 0.0, None)  # 1 + h − z, floored at 0
        value = np.where(z < 1.0 - h, 1.0 - z, u * u / (4.0 * h))
        return value, -np.minimum(u / (2.0 * h), 1.0)

    def curvature(self, z):
        return np.where(np.abs(1.0 - z) < self.h, 1.0 / (2.0 * self.h), 0.0)


def objective_perturbation_parameters(
    n: int, lam: float, epsilon: float, c: float, *, norm_bound: float = 1.0, max_rows: int = 1
) -> tuple[float, float]:
    """ε′ and Δ of CMS 2011, Algorithm 2, steps 1–2.

    With rows of norm up to R = ``norm_bound`` instead of 1, the loss of one
    example has gradient norm <= R and curvature <= cR², so c becomes cR² and
    the noise b has density ∝ exp(−(ε′/(2R))‖b‖) (the proof of Theorem 9 with
    these two bounds).

    With a privacy unit (``max_rows`` = m > 1; n is then the public N·m, see
    the module docstring) the Jacobian ratio of the proof of Theorem 9 is
    det(B + H)/det(B + H′) <= det(B + H)/det(B) with H = Σ_{i∈u} ℓ″ x_i x_iᵀ
    (PSD, rank <= m, trace <= c·m·R²) and B >= n(λ + Δ)I: by the arithmetic-
    geometric mean inequality it is at most (1 + cR²/(n(λ + Δ)))^m, and
    dpstats charges (1 + r)^(2m), the paper's (1 + r)² at m = 1. So
    ε′ = ε − 2m·ln(1 + cR²/(nλ)), and in the Δ branch
    Δ = cR²/(n(e^{ε/(4m)} − 1)) − λ with ε′ = ε/2.

    Parameters
    ----------
    n : int
        Number of examples (public).
    lam : float
        Regularisation λ > 0.
    epsilon : float
        Privacy parameter ε > 0.
    c : float
        Bound on the second derivative of the loss (1/4 logistic, 1/(2h) Huber).

    Returns
    -------
    (float, float)
        ``(ε′, Δ)``: the noise parameter (b has density ∝ exp(−(ε′/2)‖b‖)) and the
        extra regularisation (0 unless ε′ would be <= 0).

    Examples
    --------
    >>> from dpstats.erm import objective_perturbation_parameters
    >>> eps_p, Delta = objective_perturbation_parameters(1000, 0.01, 1.0, 0.25)
    >>> Delta
    0.0
    """
    c = c * norm_bound * norm_bound
    ratio = c / (n * lam)
    eps_prime = epsilon - 2.0 * max_rows * math.log1p(ratio)  # ln(1 + 2r + r²) = 2 ln(1 + r)
    if eps_prime > 0:
        return eps_prime, 0.0
    return epsilon / 2.0, c / (n * math.expm1(epsilon / (4.0 * max_rows))) - lam


def _check_data(X, y, clip: bool) -> tuple:
    """X (rows rescaled to norm <= 1 with ``clip``) and y, shapes checked; the rows and labels themselves are
    checked by :meth:`_Rows.validated`, in the pass that also sums the preconditioner's column squares."""
    X = check_columns(as_array(X, "X", ndim=(2,)))
    if check_flag(clip, "clip"):
        X = check_row_norms(X, "X", clip=True)
    y = as_array(y, "y", ndim=(1,))
    if y.shape[0] != X.shape[0]:
        raise DataValidationError(f"X and y must have the same number of rows; got {X.shape[0]} and {y.shape[0]}")
    return X, y


@dataclass(frozen=True)
class _Violations:
    """Rows over the norm bound (or not finite) and labels outside {−1, +1}, counted over chunks."""

    norms: RowNormViolations | None = None
    labels: int = 0

    def __add__(self, other: _Violations) -> _Violations:
        norms = self.norms if other.norms is None else (other.norms if self.norms is None else self.norms + other.norms)
        return _Violations(norms, self.labels + other.labels)

    def raise_error(self, name: str = "X") -> None:
        if self.norms is not None:
            self.norms.raise_error(name)
        raise DataValidationError(
            f"y must hold labels in {{-1, +1}}; got {self.labels} other value(s). Map two-class labels to -1/+1 "
            "first (dpstats.estimators does this for you)"
        )


def _check_rows(X: np.ndarray, y: np.ndarray) -> _Violations | None:
    """None if every row of X has norm <= 1 (1 + τ) and every label is ±1, else what is wrong."""
    norms = row_norm_violations(X)
    bad = ~((y == 1.0) | (y == -1.0))
    if norms is None and not bad.any():
        return None
    return _Violations(norms, int(bad.sum()))


class _Rows:
    """The examples (X, y) as the solver sees them: sums over blocks of public size
    (:mod:`dpstats._kernels.reduce`), computed by the data's engine (NumPy in memory, or Dask over persisted
    chunks). Block by block the arithmetic is the same, so every engine gives bitwise the same objective, gradient
    and minimiser."""

    def __init__(self, X, y, public_rows: int | None = None) -> None:
        n, d = public_rows or X.shape[0], X.shape[1]
        self.shape = (n, d)  # n: the public number of rows (or N·m after bounding), the objective's normaliser
        self.rows = min(block_rows(8 * d), n)
        self.engine = engine_of(X, y)
        self.X, self.y = self.engine.persist_rows(X, y, self.rows)
        self._squares = None

    def validated(self) -> _Rows:
        """Check every row and label in one pass (raising with the counts), summing the column squares too."""
        found = reduce_rows((self.X, self.y), self.rows, _column_squares, DyadicSum, check=_check_rows)
        if found.checks is not None:
            found.checks.raise_error()
        self._squares = found.body.total()
        return self

    def column_squares(self) -> np.ndarray:
        """Σ_i x_ij² per column (for the preconditioner)."""
        if self._squares is None:
            self._squares = self.reduce(_column_squares)
        return self._squares

    def reduce(self, leaf, *extra) -> np.ndarray:
        """Σ over blocks of ``leaf(X_b, y_b, *extra_b)``, by the fixed tree of
        :class:`dpstats._kernels.reduce.DyadicSum`."""
        return reduce_rows((self.X, self.y, *extra), self.rows, leaf, DyadicSum).body.total()

    def per_row(self, fn):
        """``fn(X_b, y_b)`` (one value per row) for every block, in row order (dask: persisted, chunk-aligned)."""
        return self.engine.map_rows(functools.partial(_per_block, fn, self.rows), self.X, self.y)


def _per_block(fn, rows: int, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``fn`` of each block of ``rows`` rows of a chunk that starts on a block boundary, concatenated."""
    return np.concatenate([fn(X[a : a + rows], y[a : a + rows]) for a in range(0, X.shape[0], rows)])


def _as_rows(X, y) -> _Rows:
    return X if isinstance(X, _Rows) else _Rows(X, y)


def _column_squares(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.einsum("ij,ij->j", X, X)


def _loss_values(X: np.ndarray, y: np.ndarray, loss: _Loss, f: np.ndarray) -> np.ndarray:
    return loss.value_and_derivative(y * (X @ f))[0]


def _value_and_gradient(X: np.ndarray, y: np.ndarray, at_anchor: np.ndarray, loss: _Loss, f: np.ndarray):
    """[Σ (ℓ(z_i) − ℓ at the anchor), Xᵀ(y ℓ′(z))] of one block, z = y ⊙ Xf."""
    value, deriv = loss.value_and_derivative(y * (X @ f))
    out = np.empty(X.shape[1] + 1)
    out[0] = (value - at_anchor).sum()
    out[1:] = X.T @ (y * deriv)
    return out


def _curvature_product(X: np.ndarray, y: np.ndarray, loss: _Loss, f: np.ndarray) -> np.ndarray:
    """BᵀB with B = diag(√ℓ″(y ⊙ Xf)) X: a block's share of the Hessian (a symmetric rank-k update)."""
    B = X * np.sqrt(loss.curvature(y * (X @ f)))[:, None]
    return B.T @ B


def _hessian(X, y, loss: _Loss, reg: float, f: np.ndarray) -> np.ndarray:
    """∇²F(f) = Xᵀ diag(ℓ″(y_i fᵀx_i)) X / n + reg·I, accumulated as B_bᵀB_b with B_b = diag(√ℓ″) X_b over blocks
    of rows (half the flops of a general product, and no n × d temporary)."""
    data = _as_rows(X, y)
    n, d = data.shape
    H = data.reduce(functools.partial(_curvature_product, loss=loss, f=f)) / n
    H[np.diag_indices(d)] += reg
    return H


def _objective(X, y, loss: _Loss, reg: float, lin: np.ndarray, anchor: np.ndarray):
    """f -> (F(f) − F(anchor), ∇F(f)) for F(f) = (1/n) Σ ℓ(y_i fᵀx_i) + (reg/2)‖f‖² + linᵀf.

    X is read once per call (one pass of the engine): each block of rows is
    used for X_b f and, while still in cache, for X_bᵀ(y_b ℓ′) (the solver is
    memory-bound; two passes over X cost a third more at n = 1e5, d = 50). The
    value is summed term by term as ℓ(z_i) − ℓ(z_i at the anchor): near the
    anchor these terms are small, so the difference keeps the precision that F
    itself (about 0.5, spacing 1e-16 in floating point) loses once the gradient
    is near 1e-8, where L-BFGS-B's line search would stall on F.
    """
    data = _as_rows(X, y)
    n, _ = data.shape
    at_anchor = data.per_row(functools.partial(_loss_values, loss=loss, f=anchor))

    def fun(f):
        total = data.reduce(functools.partial(_value_and_gradient, loss=loss, f=f), at_anchor)
        regulariser = 0.5 * reg * ((f - anchor) @ (f + anchor)) + lin @ (f - anchor)
        return total[0] / n + regulariser, total[1:] / n + reg * f + lin

    return fun


def _solve(X, y, loss: _Loss, reg: float, linear: np.ndarray | None, tol: float, max_iter: int) -> np.ndarray:
    """Certified minimiser of F(f) = (1/n) Σ ℓ(y_i fᵀx_i) + (reg/2)‖f‖² + linearᵀf/n: a point whose true gradient
    norm is at most ``tol`` (the computed norm plus :func:`_gradient_error`), or :class:`NotConvergedError`.

    ``X`` is an array (then ``y`` too) or a :class:`_Rows`; on Dask every evaluation of F and ∇F is one pass
    over the persisted chunks, and the path is the NumPy engine's, bit for bit.

    L-BFGS-B runs in the coordinates g = s ⊙ f, where s² is the diagonal of
    c·XᵀX/n + reg·I, the upper bound on F's Hessian that ℓ″ <= c gives (Jacobi
    preconditioning: it evens out the scales of the features; on the benchmark
    of ``benchmarks/bench_peers.py`` it halves the number of evaluations). The
    scaling changes the solver's path, not the minimiser the privacy proofs are
    about. If the first run stops short of the certificate (F no longer changes
    in floating point, and the line search fails: at most 4 evaluations are
    spent on a failing one, instead of scipy's 20), a second run starts there
    with F measured from that point (see :func:`_objective`); Newton steps are
    the last resort.
    """
    data = _as_rows(X, y)
    n, d = data.shape
    lin = np.zeros(d) if linear is None else linear / n
    scale = np.sqrt(loss.c * data.column_squares() / n + reg)
    f = np.zeros(d)

    def certified(point, grad) -> bool:
        return bool(np.linalg.norm(grad) + _gradient_error(data.shape, point, reg, lin, loss.c) <= tol)

    for _ in range(2):
        fun = _objective(data, None, loss, reg, lin, anchor=f)
        target = max(tol - _gradient_error(data.shape, f, reg, lin, loss.c), tol / 2.0)
        res = minimize(
            _in_scaled_coordinates(fun, scale),
            f * scale,
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": max_iter,
                "ftol": 0.0,
                "gtol": target / (math.sqrt(d) * scale.max()),
                "maxcor": 20,
                "maxls": 4,
            },
        )
        f, grad = res.x / scale, fun(res.x / scale)[1]
        if certified(f, grad):
            break
    f, grad = _newton_polish(data, loss, reg, f, grad, certified, fun)
    if not np.isfinite(f).all() or not certified(f, grad):
        raise NotConvergedError(
            f"the solver could not certify the minimiser the privacy proof needs (gradient norm <= tol={tol:g} "
            f"within max_iter={max_iter}); nothing was released. Increase max_iter or tol (the release is then "
            "within tol/lam of the exact minimiser), or increase lam"
        )
    return f


def _gradient_error(shape: tuple[int, int], f: np.ndarray, reg: float, lin: np.ndarray, c: float) -> float:
    """A bound on ‖∇̃F(f) − ∇F(f)‖₂ for the gradient computed by :func:`_objective`, on either engine.

    Per coordinate: each block of r rows gives X_bᵀ(y ℓ′) within
    γ_r Σ_i |x_ij||ℓ′_i| <= γ_r r R (|ℓ′| <= 1, |x_ij| <= R), ℓ′ itself within
    4u; the n_b block results are added by the fixed tree of
    :class:`dpstats._kernels.reduce.DyadicSum` (the same for NumPy and for any cut into
    Dask chunks), each through fewer than n_b additions: within γ_{n_b} n R;
    dividing by n and adding reg·f_j + lin_j costs 3u(|reg f_j| + |lin_j|).
    Over d coordinates: √d times the first part, plus 3u(reg‖f‖ + ‖lin‖). The
    margins z_i = x_iᵀf are themselves within γ_d Σ_j |x_ij f_j| <= γ_d R ‖f‖
    of their exact values, and ℓ′ is c-Lipschitz, so ℓ′ moves by at most
    c γ_d R ‖f‖ per example and the gradient by at most c γ_d R² ‖f‖ (in L2:
    (1/n) Σ_i ‖x_i‖ times that). Public: n, d and the block size r (from d)
    only, plus the current point.
    """
    return _gradient_error_at(shape, float(np.linalg.norm(f)), reg, float(np.linalg.norm(lin)), c)


def _gradient_error_at(shape: tuple[int, int], norm_f: float, reg: float, norm_lin: float, c: float) -> float:
    """:func:`_gradient_error` at a point of norm ``norm_f`` (a public bound on it gives a public bound)."""
    n, d = shape
    rows = min(block_rows(8 * d), n)
    blocks = -(-n // rows)
    bound = math.sqrt(norm_bound_squared(d))
    per_coordinate = (rows + blocks + 6) * UNIT_ROUNDOFF * bound * 1.01
    return (
        math.sqrt(d) * per_coordinate
        + c * gamma(d + 1) * bound * bound * norm_f * 1.01
        + 3 * UNIT_ROUNDOFF * (reg * norm_f + norm_lin)
    )


def _in_scaled_coordinates(fun, scale: np.ndarray):
    """g -> (F, ∇_g F) at f = g / s, for f -> (F, ∇F)."""

    def scaled(g):
        value, grad = fun(g / scale)
        return value, grad / scale

    return scaled


def _newton_polish(data: _Rows, loss, reg, f, grad, certified, fun, max_steps: int = 8):
    """Newton steps from the L-BFGS-B point until ``certified`` (L-BFGS-B stalls once F stops decreasing in
    floating point, which can happen before the gradient is small when ‖f‖ is large). A step is kept only if it
    lowers the gradient norm. Returns the point and its gradient."""
    for _ in range(max_steps):
        if certified(f, grad):
            break
        candidate = f - np.linalg.solve(_hessian(data, None, loss, reg, f), grad)
        candidate_grad = fun(candidate)[1]
        if not np.linalg.norm(candidate_grad) < np.linalg.norm(grad):
            break
        f, grad = candidate, candidate_grad
    return f, grad


#: Share of ε that objective perturbation spends on the approximate minimiser's output noise (module docstring).
AMP_SHARE = 1.0 / 128


@dataclass(frozen=True)
class Descent:
    """Output perturbation's solver, planned from public values only (module docstring, "Output perturbation by a
    fixed number of gradient steps"): ``steps`` steps of size ``step`` from f = 0, each a contraction by
    ``contraction``; ``sensitivity`` bounds ‖f̂_K(D) − f̂_K(D′)‖₂ for the computed iterates (the stability bound
    plus twice the accumulated floating-point error ``drift``); ``distance`` bounds ‖f̂_K − f*‖₂ (for the
    analyst: how far the release's centre can be from the exact minimiser)."""

    step: float
    contraction: float
    steps: int
    sensitivity: float
    drift: float
    distance: float

    @classmethod
    def plan(cls, n: int, d: int, lam: float, c: float, max_rows: int, max_iter: int) -> Descent:
        """The plan for n (public) rows bound, d features, λ, loss curvature bound c, m rows per unit, and at most
        ``max_iter`` steps (fewer when the optimisation error bound is already below 2^-10 of the sensitivity)."""
        bound = math.sqrt(norm_bound_squared(d))  # R
        smooth = math.nextafter(c * bound * bound + lam, math.inf)  # L >= c R² + λ
        step = math.nextafter(2.0 / (smooth + lam), 0.0)  # h <= 2/(λ + L)
        # q = sqrt(1 − 2hλL/(λ + L)) (Nesterov 2004, Theorem 2.1.12), rounded up
        contraction = math.nextafter(math.sqrt(1.0 - 2.0 * step * lam * smooth / (lam + smooth) * (1 - 1e-12)), 1.0)
        if not contraction < 1.0:
            raise ParameterError(
                f"lam={lam:g} is too small against the curvature bound {smooth:g} for a certified gradient descent in "
                "double precision; increase lam"
            )
        gap = 1.0 - contraction
        stability = step * 2.0 * max_rows * bound / n / gap * (1 + 1e-9)
        # floating-point drift: e_step = α + β·M per step, M a bound on the iterates' norm, E = e_step/(1 − q)
        alpha = step * _gradient_error_at((n, d), 0.0, lam, 0.0, c) + 2.0 * UNIT_ROUNDOFF * step * bound
        slope = step * (_gradient_error_at((n, d), 1.0, lam, 0.0, c) - _gradient_error_at((n, d), 0.0, lam, 0.0, c))
        beta = (slope + UNIT_ROUNDOFF * (1.0 + 2.0 * step * lam)) * 1.01
        if not beta < gap / 2:
            raise ParameterError(
                f"lam={lam:g} is too small for double precision with d={d} features: the rounding error of each "
                "gradient step would not be contracted away; increase lam"
            )
        iterates = (2.0 * bound / lam + alpha / gap) / (1.0 - beta / gap)  # M >= ‖f̂_k‖ for every k
        drift = (alpha + beta * iterates) / gap * 1.01
        wanted = math.log(2.0**9 * n / max_rows) / -math.log(contraction)  # q^K <= 2^-9·m/n
        steps = max(1, min(max_iter, math.ceil(wanted)))
        distance = contraction**steps * bound / lam + drift
        return cls(step, contraction, steps, stability + 2.0 * drift, drift, distance)


def fit_weights(
    X, y, epsilon, lam, loss: _Loss, method, rng, accountant, tol, max_iter, noise: str = "exact", units=None
) -> np.ndarray:
    """Algorithm 1 or 2: the released weights. Every row (‖x_i‖₂² <= 1 + τ) and label (±1) of the NumPy or dask
    arrays X, y is checked in one pass before anything is charged; with privacy ``units`` (from
    :func:`dpstats._engine.take_units`) every row is checked, then at most m rows of each unit are kept."""
    epsilon, lam = check_epsilon(epsilon), check_positive(lam, "lam")
    check_choice(method, "method", METHODS)
    check_choice(noise, "noise", NOISE)
    tol, max_iter = check_positive(tol, "tol"), check_int(max_iter, "max_iter")
    rng = check_rng(rng)
    check_accountant(accountant)
    rows = bound_checked((X, y), units, rng, check=_check_rows)
    data = _Rows(*rows.arrays, public_rows=rows.rows_bound).validated()
    n, d = data.shape
    m = rows.max_rows
    bound = math.sqrt(norm_bound_squared(d))
    mechanism = f"{loss.name} ({method} perturbation)"
    floating = f"{rows.note()}Gamma-norm noise drawn in floating point (no exact sampler known); {describe_source(rng)}"
    if method == "output":
        return _output_perturbation(data, loss, lam, epsilon, m, max_iter, noise, rng, accountant, mechanism, rows)
    if noise == "gamma":
        raise ParameterError(
            "noise='gamma' applies to method='output' (the paper's Gamma-norm output noise); objective perturbation "
            "takes noise='exact' (its release on the public grid) or 'float'"
        )
    eps_output = epsilon * AMP_SHARE
    eps_objective = epsilon - eps_output
    while Fraction(eps_objective) + Fraction(eps_output) > Fraction(epsilon):  # never charge more than epsilon
        eps_objective = math.nextafter(eps_objective, 0.0)
    eps_prime, Delta = objective_perturbation_parameters(n, lam, eps_objective, loss.c, norm_bound=bound, max_rows=m)
    distance = 2.0 * tol / (lam + Delta)
    grid = output_grid(distance, d, noise)
    charge(
        accountant,
        mechanism,
        [PureDP(eps_objective), PureDP(eps_output)],
        relation=rows.relation,
        note=f"CMS 2011 Algorithm 2 at eps={eps_objective:.6g} (eps'={eps_prime:.4g}, Delta={Delta:.4g}); "
        f"approximate-minimiser output noise at eps={eps_output:.4g}; {floating}",
    )
    b = draw(
        "objective perturbation's noise b", rng, lambda: sample_gamma_norm_vector(d, eps_prime / (2 * m * bound), rng)
    )
    f = _solve(data, None, loss, lam + Delta, b, tol, max_iter)
    # for b fixed, the perturbed objective is (λ + Δ)-strongly convex and neighbours' gradients differ by at most
    # 2mR/n: its minimiser moves by at most 2mR/(n(λ + Δ)), the certified one by 2 tol/(λ + Δ) more
    observe(
        "objective perturbation's minimiser, b fixed",
        f,
        sensitivity=2.0 * m * bound / (n * (lam + Delta)) + distance,
        norm="l2",
        exact=False,
    )
    covered = _covered(distance, grid, d)
    return draw("approximate-minimiser output noise", rng, lambda: _gridded_release(f, covered, eps_output, grid, rng))


def _output_perturbation(data: _Rows, loss, lam, epsilon, m, max_iter, noise, rng, accountant, mechanism, rows):
    """CMS 2011 Algorithm 1 on the minimiser found by a fixed, public number of gradient steps (module docstring,
    "Output perturbation ..."): exact discrete Laplace noise on a public grid by default, calibrated to the L1
    sensitivity √d·S₂; the paper's Gamma-norm noise (``noise="gamma"`` on the grid, ``"float"`` without it) is
    recorded as unproven."""
    n, d = data.shape
    plan = Descent.plan(n, d, lam, loss.c, m, max_iter)
    how = (
        f"CMS 2011 Algorithm 1 on {plan.steps} gradient steps of size {plan.step:.4g} from 0 (a fixed, public "
        f"number): L2 sensitivity {plan.sensitivity:.4g} (2mR/(n lam) by stability, plus floating-point drift), "
        f"within {plan.distance:.3g} of the exact minimiser; {rows.note()}"
    )
    if noise == "exact":
        l1 = math.nextafter(math.sqrt(d) * plan.sensitivity, math.inf)  # ‖v‖₁ <= √d‖v‖₂
        calibrated = make_noise(epsilon=epsilon, delta=0.0, sensitivity=l1, changed=d)
        f = _descend(data, loss, lam, plan)
        observe("output perturbation's K-step point", f, sensitivity=plan.sensitivity, norm="l2", exact=False)
        charge(
            accountant,
            mechanism,
            [calibrated.event],
            relation=rows.relation,
            note=f"{how}exact discrete Laplace noise on a public grid, L1 sensitivity sqrt(d) times the L2 one; "
            f"{describe_source(rng)}",
            noise=calibrated.statement("weights"),
        )
        return calibrated.apply(Statistic(f), rng)
    grid = output_grid(plan.sensitivity, d, "float" if noise == "float" else "exact")
    f = _descend(data, loss, lam, plan)
    observe("output perturbation's K-step point", f, sensitivity=plan.sensitivity, norm="l2", exact=False)
    charge(
        accountant,
        mechanism,
        [PureDP(epsilon)],
        relation=rows.relation,
        proven=False,
        note=f"{how}the paper's Gamma-norm noise, drawn in floating point (no exact sampler known): unproven; "
        f"{describe_source(rng)}",
    )
    covered = _covered(plan.sensitivity, grid, d)
    return draw("Gamma-norm noise", rng, lambda: _gridded_release(f, covered, epsilon, grid, rng))


def _descend(data: _Rows, loss, lam: float, plan: Descent) -> np.ndarray:
    """``plan.steps`` gradient steps f ← f − h·∇F(f) from f = 0 on F(f) = (1/n) Σ ℓ(y_i fᵀx_i) + (λ/2)‖f‖²: a fixed
    number, whatever the data, each one pass over the blocks (the same on every engine)."""
    n, d = data.shape
    f = np.zeros(d)
    leaf = functools.partial(_gradient_block, loss=loss)
    for _ in range(plan.steps):
        gradient = data.reduce(functools.partial(leaf, f=f)) / n + lam * f
        f = f - plan.step * gradient
    return f


def _gradient_block(X: np.ndarray, y: np.ndarray, loss: _Loss, f: np.ndarray) -> np.ndarray:
    """Xᵀ(y ℓ′(z)) of one block, z = y ⊙ Xf (the gradient part of :func:`_value_and_gradient`)."""
    return X.T @ (y * loss.value_and_derivative(y * (X @ f))[1])


def _covered(sensitivity: float, grid: float | None, d: int) -> float:
    """The distance the output noise must cover: the sensitivity plus the rounding to the grid (G/2 per coordinate
    for each of two neighbours)."""
    return sensitivity if grid is None else math.nextafter(sensitivity + grid * math.sqrt(d), math.inf)


def _gridded_release(f: np.ndarray, sensitivity: float, epsilon: float, grid: float | None, rng) -> np.ndarray:
    """f + b with b of density ∝ exp(−ε‖b‖/Δ); on the grid both are rounded and added as integers, so the data
    enter only through the integer round(f/G)."""
    b = sample_gamma_norm_vector(f.shape[0], epsilon / sensitivity, rng)
    if grid is None:
        return f + b
    return integers_times_grid(grid_integers(f, grid) + grid_integers(b, grid), grid)


def huber(h: float) -> _Huber:
    """The Huber SVM loss with parameter h > 0 (c = 1/(2h))."""
    h = check_positive(h, "h")
    return _Huber("svm", 1.0 / (2.0 * h), h)


LOGISTIC = _Logistic("logistic_regression", 0.25)


def svm(
    X,
    y,
    epsilon: float,
    *,
    lam: float,
    h: float = 0.5,
    method: str = "objective",
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    noise: str = "exact",
) -> np.ndarray:
    """Differentially private linear SVM with the Huber loss (CMS 2011, Algorithms 1 and 2).

    Minimises ``(1/n) Σ ℓ_h(y_i fᵀx_i) + (λ/2)‖f‖²`` with the Huber loss ℓ_h of
    the module docstring (|ℓ_h′| <= 1, ℓ_h″ <= c = 1/(2h)), privately.

    Privacy (replace one example, n public, ‖x_i‖₂ <= 1, y_i ∈ {−1, +1}):
    ``method="output"``: Algorithm 1 (Theorem 6) on a fixed, public number of
    gradient steps, whose L2 sensitivity is 2/(nλ) (CMS 2011, Corollary 8's
    bound, by stability: module docstring) plus a floating-point term; exact
    discrete Laplace noise for the L1 sensitivity √d times that.
    ``method="objective"``: Algorithm 2 with c = 1/(2h) (Theorem 9 and its
    Huber-loss case, Section 3.4.2); see :func:`objective_perturbation_parameters`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Features, one example per row, every row with ‖x_i‖₂ <= 1.
    y : array_like, shape (n,)
        Labels in {−1, +1}.
    epsilon : float
        ε > 0 (pure ε-DP).
    lam : float
        Regularisation λ > 0 (public; choosing it on the same data spends budget).
    h : float, default 0.5
        Huber parameter h > 0 (smaller h is closer to the hinge loss but raises c).
    method : {"objective", "output"}, default "objective"
        Objective perturbation (Algorithm 2) or output perturbation (Algorithm 1).
    clip : bool, default False
        Rescale rows of X with norm > 1 to norm 1 instead of raising.
    privacy_unit : array_like, Series or str, optional
        One identifier per example (or a column name of the DataFrame ``X``):
        neighbours then differ in all examples of one unit, at most
        ``max_rows`` of which are kept (module docstring, "Privacy units").
    max_rows : int, optional
        With ``privacy_unit``: the public number of examples kept per unit.
    rng : None, int or numpy.random.Generator
        Source of noise; ``None`` uses fresh OS entropy.
    accountant : Accountant, optional
        Charged (ε, 0) before any noise is drawn.
    tol : float, default 1e-9
        Objective perturbation: certified ‖∇‖₂ of the objective at the
        minimiser found (it is then within tol/λ of the exact one; that
        distance is charged). Not used by output perturbation.
    max_iter : int, default 5000
        Objective perturbation: iteration limit of each L-BFGS-B run (at most
        two, see the module docstring); :class:`NotConvergedError` if the
        certificate is not reached. Output perturbation: the most gradient
        steps it takes (fewer when the public bound on its distance to the
        minimiser is already small; :class:`dpstats.erm.Descent`).
    noise : {"exact", "gamma", "float"}, default "exact"
        ``"exact"``: exact discrete noise on a public grid (output
        perturbation: discrete Laplace; objective perturbation: its release on
        the grid, module docstring). ``"gamma"`` (output perturbation): the
        paper's Gamma-norm noise, on the grid, recorded as unproven (its
        sampler is floating point). ``"float"``: the paper's floating-point
        release (warns; unproven for output perturbation).

    Returns
    -------
    numpy.ndarray, shape (d,)
        The private weight vector f; predict with ``sign(X @ f)``.

    Raises
    ------
    NotConvergedError
        Objective perturbation only: if the minimiser cannot be certified
        (nothing is released, but the budget has already been charged; see the
        module docstring). Output perturbation never fails to converge.

    References
    ----------
    Chaudhuri, Monteleoni & Sarwate, "Differentially private empirical risk
    minimization", JMLR 12:1069–1109, 2011, Algorithms 1–2, Theorems 6 and 9,
    Section 3.4.2.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, (2000, 3))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> f = dps.svm(X, y, 1.0, lam=0.01, rng=0)
    >>> f.shape
    (3,)
    """
    loss = huber(h)
    X, units = take_units(X, privacy_unit, max_rows, "X")
    return fit_weights(
        *_check_data(X, y, clip), epsilon, lam, loss, method, rng, accountant, tol, max_iter, noise, units
    )


def logistic_regression(
    X,
    y,
    epsilon: float,
    *,
    lam: float,
    method: str = "objective",
    clip: bool = False,
    privacy_unit=None,
    max_rows: int | None = None,
    rng=None,
    accountant: Accountant | None = None,
    tol: float = DEFAULT_TOL,
    max_iter: int = DEFAULT_MAX_ITER,
    noise: str = "exact",
) -> np.ndarray:
    """Differentially private L2-regularised logistic regression (CMS 2011, Algorithms 1 and 2).

    Minimises ``(1/n) Σ ln(1 + exp(−y_i fᵀx_i)) + (λ/2)‖f‖²`` privately. The
    logistic loss has |ℓ′| <= 1 and ℓ″ <= c = 1/4.

    Privacy (replace one example, n public, ‖x_i‖₂ <= 1, y_i ∈ {−1, +1}):
    ``method="output"``: Algorithm 1 (Theorem 6) on a fixed, public number of
    gradient steps, whose L2 sensitivity is 2/(nλ) (CMS 2011, Corollary 8's
    bound, by stability: module docstring) plus a floating-point term; exact
    discrete Laplace noise for the L1 sensitivity √d times that.
    ``method="objective"``: Algorithm 2 with c = 1/4 (Theorem 9); see
    :func:`objective_perturbation_parameters`.

    Parameters
    ----------
    X : array_like, shape (n, d)
        Features, one example per row, every row with ‖x_i‖₂ <= 1.
    y : array_like, shape (n,)
        Labels in {−1, +1}.
    epsilon : float
        ε > 0 (pure ε-DP).
    lam : float
        Regularisation λ > 0 (public; choosing it on the same data spends budget).
    method : {"objective", "output"}, default "objective"
        Objective perturbation (Algorithm 2) or output perturbation (Algorithm 1).
    clip : bool, default False
        Rescale rows of X with norm > 1 to norm 1 instead of raising.
    privacy_unit : array_like, Series or str, optional
        One identifier per example (or a column name of the DataFrame ``X``):
        neighbours then differ in all examples of one unit, at most
        ``max_rows`` of which are kept (module docstring, "Privacy units").
    max_rows : int, optional
        With ``privacy_unit``: the public number of examples kept per unit.
    rng : None, int or numpy.random.Generator
        Source of noise; ``None`` uses fresh OS entropy.
    accountant : Accountant, optional
        Charged (ε, 0) before any noise is drawn.
    tol, max_iter, noise
        As in :func:`svm`.

    Returns
    -------
    numpy.ndarray, shape (d,)
        The private weight vector f; P(y = +1 | x) is modelled as expit(fᵀx).

    Raises
    ------
    NotConvergedError
        Objective perturbation only: if the minimiser cannot be certified
        (nothing is released, but the budget has already been charged; see the
        module docstring). Output perturbation never fails to converge.

    References
    ----------
    Chaudhuri, Monteleoni & Sarwate, "Differentially private empirical risk
    minimization", JMLR 12:1069–1109, 2011, Algorithms 1–2, Theorems 6 and 9,
    Section 3.4.1.

    Examples
    --------
    >>> import numpy as np
    >>> import dpstats as dps
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-0.5, 0.5, (2000, 3))
    >>> y = np.where(X[:, 0] > 0, 1.0, -1.0)
    >>> f = dps.logistic_regression(X, y, 1.0, lam=0.01, method="output", rng=0)
    """
    X, units = take_units(X, privacy_unit, max_rows, "X")
    return fit_weights(
        *_check_data(X, y, clip), epsilon, lam, LOGISTIC, method, rng, accountant, tol, max_iter, noise, units
    )
