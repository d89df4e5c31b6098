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

Solving to a certified distance (both mechanisms). Algorithm 1's sensitivity
and Theorem 9 are about the *exact* minimiser; a solver that stops when it is
close enough fails on some inputs and not on their neighbours (the certified
L-BFGS-B solver of earlier versions raised after the charge on a separable set
at λ = 1e-6, seeds 2 and 8, while the neighbour with one label flipped was
released; a gradient descent "until certified" never finished at λ = 1e-8).
dpstats runs instead fixed, public numbers of steps and bounds the distance of
the computed point to the exact minimiser from public values only, every
step's floating-point error included (:class:`Accelerated`). The objective is,
up to a constant, F(g) = (1/n) Σ ℓ(a_i + y_i gᵀx_i) + (μ/2)‖g‖²: output
perturbation has f = g, μ = λ and no offsets (a_i = 0); objective perturbation
has f = s + g with the noise centre s = −b/(n(λ + Δ)), μ = λ + Δ and offsets
a_i = y_i x_iᵀs. F is μ-strongly convex and L-smooth with L = cR² + μ,
‖∇F(0)‖ <= R (|ℓ′| <= 1), so ‖g*‖ <= R/μ.

*Accelerated steps* (both losses): K₁ steps of Nesterov's method for
μ-strongly convex, L-smooth functions (constant momentum α <= √(μ/L); Nesterov
2004, Section 2.2) from g = 0. Its Lyapunov potential
Φ_k = F(y_k) − F* + (μ/2)‖z_k − g*‖² falls by the factor 1 − α per step from
Φ_0 = F(0) − F* + (μ/2)‖g*‖² <= 2(F(0) − F*) (strong convexity at g*) <= R²/μ;
without offsets also Φ_0 <= ℓ(0): Φ_0 is the loss part (1/n) Σ ℓ(y_i gᵀx_i) at
0 minus its value at g*, and it is >= 0 and at most ℓ(0) at 0 (ln 2 for the
logistic loss, 1 for the Huber loss with h < 1), far below R²/μ for a small
μ. So F(y_K) − F* <= Φ_K and ‖y_K − g*‖ <= √(2Φ_K/μ).

* floating point: the offsets are computed by a plain dot product while the
  noise centre is small against the public cap below (an error of at most
  γ_d R‖s‖), else by an error-free transformation (exact products, compensated
  sums; correctly rounded sums when ‖s‖ is too large for them), each within
  2u·cap; each way is used only where the other ones are needed with a
  probability below 2^-64, decided from public values (the way shows in the
  time a call takes);
  they are clipped at that cap, beyond which ℓ′ is flat (the clip changes no
  gradient: by e^-40 at most for the logistic loss, counted); each step's
  rounding is bounded from n, d, the block size and a public bound on the
  iterates' norm, and the computed potential satisfies
  √Φ_{k+1} <= √(1 − α)·√Φ_k + E, so √Φ_K <= (1 − α)^{K/2}·R/√μ + 2E/α.

*Newton steps* (logistic loss; the Huber loss has no third derivative). The
logistic loss has |ℓ‴| = ℓ″·|1 − 2σ(z)| <= ℓ″; a displacement v moves every
margin by at most R‖v‖, so ∇²F(x + v) lies between e^{−R‖v‖} and e^{R‖v‖} times
∇²F(x) (Bach 2010, Proposition 1; the μI part only helps). In the units
t = R‖x − g*‖_*/√μ, with ‖w‖_* = ‖∇²F(g*)^{1/2}w‖ >= √μ‖w‖ (so
‖x − g*‖ <= t/R), and with Δ = x − g*, a = R‖Δ‖ <= t:

* entry: F(x) − F* = ∫₀¹ (1 − s) Δᵀ∇²F(g* + sΔ)Δ ds >= ‖Δ‖²_* ∫₀¹ (1 − s)e^{−st} ds
  = (μ/R²)·ω(t), with ω(t) = t − 1 + e^{−t} increasing; so after the
  accelerated steps t₀ <= ω⁻¹(R²Φ_{K₁}/μ);
* one step: the exact Newton step v = −∇²F(x)⁻¹∇F(x) leaves
  Δ + v = ∇²F(x)⁻¹ ∫₀¹ (∇²F(x) − ∇²F(g* + sΔ)) Δ ds, and the Hessian bound
  along the segment gives ‖Δ + v‖_x <= ψ(a)‖Δ‖_x with ψ(a) = (e^a − 1 − a)/a
  (‖·‖_x the norm of ∇²F(x)). The computed step solves (H̃ + δ)v̂ = −g̃ with the
  computed Hessian and gradient (:func:`_hessian_error_at`,
  :func:`_gradient_error_at`) and the Cholesky solve's backward error δ
  (Higham 2002, Theorems 10.3–10.4: |δ| <= γ_{3d+1}|Rᵀ||R|, whose norm is at
  most γ_{3d+1} tr H̃/(1 − γ_{d+1})); with ‖H̃ + δ − ∇²F(x)‖ <= ημ it is within
  η′(1 + ψ(a))‖Δ‖_x + ‖e_g‖/((1 − η)√μ) of v (η′ = η/(1 − η)), and the norms at
  x and g* differ by at most e^{a/2} each way. So
  t⁺ <= e^t [ψ(t) + η′(1 + ψ(t))] t + floor, the floor collecting the
  gradient's error and the rounding of the update: t⁺ ≈ t²/2 once t is below
  about 0.73 (where the recursion contracts; the plan drops any t > 1),
  whatever the data (the local analysis of Newton's method for self-concordant
  functions, Nesterov 2004, Section 4.1, in the form Bach 2010 gives it for the
  logistic loss). The same argument shows that the Cholesky factorisation of
  H̃ runs to completion when μ − ‖H̃ − ∇²F(x)‖ > γ_{d+1} tr H̃/(1 − γ_{d+1}); the
  plan checks twice that margin (the public condition with the |s| term of the
  argument), from public values.

*The plan*: of the splits (K₁ accelerated steps, then K₂ Newton steps) whose
public bound t_{K₂}/R is below the target, the one with the least work (a
Newton step is one pass that also forms the d×d Hessian, counted as
1 + d/10 gradient passes); without Newton steps K₁ is the fewest accelerated
steps with √(2/μ)·√Φ_{K₁} below the target. At n = 10⁵, d = 51, λ = 5.1e-3
(logistic, tol = 1e-9) that is 85 accelerated and 4 Newton steps, where the
accelerated steps alone would need 278. If double precision cannot reach the
target, or every such plan exceeds ``max_iter`` steps in all, objective perturbation refuses with
:class:`ParameterError` before anything is charged — a decision made from n,
d, λ, ε, the loss, ``tol`` and ``max_iter`` only, the same for every dataset.
The solver never fails after the charge, its work (K₁ + K₂ passes over the
data) is the same for every dataset, and the ledger note states K₁, K₂ and the
distance bound.

Output perturbation. Neighbours' exact minimisers are within 2mR/(nλ) of each
other (CMS 2011, Corollary 8, for one unit's m examples), and each computed
minimiser is within the plan's distance r of its own, so the computed
minimiser has the L2 sensitivity 2mR/(nλ) + 2r; the plan aims at
r <= 2^-10·2mR/(nλ) (:class:`OutputPerturbation`). When ``max_iter`` (or double
precision) does not allow that, dpstats falls back on K plain gradient steps
f ← f − h∇J(f) from f = 0, whose sensitivity follows from stability, whatever
K, with no convergence needed (:class:`Descent`):

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
  bound :func:`_gradient_error_at`) + the update's rounding of the exact step
  from the same point, at iterates of norm at most M = 2R/λ + E (public), so
  the computed iterates stay within E = e/(1 − q) of the exact ones; 2E is
  added to the sensitivity.

The noise is exact discrete Laplace on a public grid with the L1 sensitivity
√d·S₂ (‖v‖₁ <= √d‖v‖₂): pure ε-DP, each coordinate's standard deviation about
√2 times that of the paper's Gamma-norm noise ‖b‖ ~ Gamma(d, S₂/ε) (per
coordinate √(2d) against √(d + 1), in units of S₂/ε). ``noise="gamma"`` keeps
the paper's Gamma-norm noise (a uniform direction times a Gamma radius,
rounded to the grid): its sampler is floating point, so the release is
recorded as unproven and an :class:`~dpstats.Accountant` refuses it unless
created with ``allow_unproven=True``; ``noise="float"`` is the paper's release
without the grid (unproven, and warns).

Objective perturbation. The solver places the computed minimiser within
r = ``tol``/μ of the exact minimiser of the perturbed objective, and the
analysis covers that distance:

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

Neither solver raises after the charge. (The original dp-stats used
Nelder–Mead, which gives no certificate at all, and its logistic output
perturbation crashed.)

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

References
----------
Chaudhuri, Monteleoni & Sarwate, "Differentially private empirical risk
minimization", JMLR 12:1069–1109, 2011. Iyengar, Near, Song, Thakkar, Thakurta
& Wang, "Towards practical differentially private convex optimization", IEEE
S&P 2019. Nesterov, *Introductory Lectures on Convex Optimization*, Kluwer,
2004 (Theorem 2.1.12; Section 2.2, constant-step schemes for strongly convex
functions; Section 4.1, Newton's method on self-concordant functions). Bach,
"Self-concordant analysis for logistic regression", Electronic Journal of
Statistics 4:384–414, 2010 (Proposition 1). Higham, *Accuracy and Stability
of Numerical Algorithms*, 2nd ed., SIAM, 2002 (Lemma 8.4, Theorems 8.5, 10.3,
10.4). Mironov, "On significance of the least significant bits for
differential privacy", CCS 2012.
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import gammaincc

from .._constraints import UNITS, Data, Flag, Integer, Options, Real, privacy
from .._engine import as_array, bound_checked, check_row_norms, engine_of, reduce_rows, take_units, validate_rows
from .._kernels.blocks import block_rows, single_threaded_blas
from .._kernels.gram import norm_bound
from .._kernels.reduce import DyadicSum
from .._kernels.rows import RowNormViolations, row_norm_violations
from .._registry import declare
from .._release import calibrate, charge
from .._rounding import UNIT_ROUNDOFF, enclose, float_down, float_up, gamma
from .._trace import draw, observe
from .._validation import check_choice, check_columns, check_epsilon, check_flag, check_int, check_positive
from ..accounting import Accountant, PureDP, check_accountant
from ..exceptions import DataValidationError, ParameterError
from ..noise.continuous import sample_gamma_norm_vector
from ..noise.random import check_rng
from ..noise.release import Statistic, grid_integers, integers_times_grid, output_grid

__all__ = [
    "Accelerated",
    "Descent",
    "OutputPerturbation",
    "logistic_regression",
    "objective_perturbation_parameters",
    "svm",
]

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
    #: A bound on |ℓ‴| for a loss with |ℓ‴| <= ℓ″ everywhere (the logistic loss), whose Newton steps are certified
    #: (module docstring, "Newton steps"); None: no Newton steps (the Huber loss has no third derivative).
    third = None

    def derivative(self, z: np.ndarray) -> np.ndarray:
        """ℓ′(z)."""
        raise NotImplementedError

    def curvature(self, z: np.ndarray) -> np.ndarray:
        """ℓ″(z) (losses with a ``third``)."""
        raise NotImplementedError

    def at_zero(self) -> float:
        """An upper bound on ℓ(0) (every loss here is >= 0)."""
        raise NotImplementedError

    def flat(self) -> tuple[float, float]:
        """(Z, τ): ℓ′(z) and ℓ′(z′) differ by at most τ when z and z′ are both >= Z or both <= −Z."""
        raise NotImplementedError


@dataclass(frozen=True)
class _Logistic(_Loss):
    def derivative(self, z):
        # ℓ(z) = log(1 + e^{−z}): ℓ′(z) = −1/(1 + e^z), within 4u (exp within 2u, the sum and the quotient within u
        # each). z is capped at 700 first (e^z stays finite): beyond it both the exact and the computed values lie in
        # (−e^{−700}, 0), far inside that bound.
        e = np.exp(np.minimum(z, 700.0))
        e += 1.0
        return np.divide(-1.0, e, out=e)

    def flat(self):
        # ℓ′ lies in (−e^{−Z}, 0) beyond Z and in (−1, −1 + e^{−Z}) below −Z; ℓ″ lies in (0, e^{−Z}) beyond ±Z
        return 40.0, math.exp(-40.0)

    #: max |ℓ‴| = 1/(6√3) = 0.0962..., rounded up; and |ℓ‴| = ℓ″·|1 − 2σ(z)| <= ℓ″
    third = 0.0963

    def at_zero(self):
        return math.nextafter(math.log(2.0), math.inf)  # ℓ(0) = ln 2

    def curvature(self, z):
        # ℓ″(z) = σ(z)σ(−z) = e/(1 + e)² with e = exp(−|z|) (even in z; no overflow)
        e = np.exp(-np.abs(z))
        s = 1.0 + e
        return e / (s * s)


@dataclass(frozen=True)
class _Huber(_Loss):
    h: float = 0.5

    def derivative(self, z):
        u = np.clip(1.0 + self.h - z, 0.0, None)  # 1 + h − z, floored at 0
        return -np.minimum(u / (2.0 * self.h), 1.0)

    def flat(self):
        # ℓ′ = 0 beyond 1 + h and −1 below 1 − h (so below −(1 + h))
        return 1.0 + self.h, 0.0

    def at_zero(self):
        # ℓ_h(0) = 1 for h < 1 (0 < 1 − h), (1 + h)²/(4h) for h >= 1, rounded up
        return 1.0 if self.h < 1.0 else float_up(Fraction(1 + Fraction(self.h)) ** 2 / (4 * Fraction(self.h)))


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

    Rounding: ε′ is rounded down and λ + Δ (as the float sum the solver uses)
    up, from rigorous interval bounds on the logarithm and the exponential
    (:func:`dpstats._rounding.enclose`), never from ``math.log1p``, which may
    round either way.

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
    >>> from dpstats.linear_model import objective_perturbation_parameters
    >>> eps_p, Delta = objective_perturbation_parameters(1000, 0.01, 1.0, 0.25)
    >>> Delta
    0.0
    """
    c = Fraction(c) * Fraction(norm_bound) ** 2
    _, log_term = enclose("log1p", c / (n * Fraction(lam)))  # ln(1 + 2r + r²) = 2 ln(1 + r), bounded above
    eps_prime = float_down(Fraction(epsilon) - 2 * max_rows * log_term)  # rounded down: never less noise
    if eps_prime > 0:  # (a positive ε′ below the smallest float takes the Δ branch, valid for any λ)
        return eps_prime, 0.0
    growth, _ = enclose("expm1", Fraction(epsilon) / (4 * max_rows))  # bounded below, so the required λ + Δ above
    half = float_down(Fraction(epsilon) / 2)
    required = c / (n * growth) if growth > 0 else None
    if not (half > 0.0 and required is not None and required <= Fraction(sys.float_info.max) / 2):
        raise ParameterError(
            f"epsilon = {epsilon!r} is too small for objective perturbation at n = {n}: epsilon/2 or the extra "
            "regularisation Delta leaves double precision"
        )
    Delta = float_up(required - Fraction(lam))
    while Fraction(lam + Delta) < required:  # the regulariser actually used, λ + Δ in floating point, is >= it
        Delta = math.nextafter(Delta, math.inf)
    return half, Delta


def _check_data(X, y, clip: bool) -> tuple:
    """X (rows rescaled to norm <= 1 with ``clip``) and y, shapes checked; the rows and labels themselves are
    checked by :meth:`_Rows.validated`, in one pass."""
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

    def validated(self) -> _Rows:
        """Check every row and label in one pass (raising with the counts)."""
        found = validate_rows((self.X, self.y), _check_rows)
        if found is not None:
            found.raise_error()
        return self

    def reduce(self, leaf, *extra, parallel: bool = False) -> np.ndarray:
        """Σ over blocks of ``leaf(X_b, y_b, *extra_b)``, by the fixed tree of
        :class:`dpstats._kernels.reduce.DyadicSum` (with ``parallel``, one run of blocks per core: the same sum)."""
        return reduce_rows((self.X, self.y, *extra), self.rows, leaf, DyadicSum, parallel=parallel).body.total()

    def per_row(self, fn):
        """``fn(X_b, y_b)`` (one value per row) for every block, in row order (dask: persisted, chunk-aligned)."""
        return self.engine.map_rows(functools.partial(_per_block, fn, self.rows), self.X, self.y)


def _per_block(fn, rows: int, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``fn`` of each block of ``rows`` rows of a chunk that starts on a block boundary, concatenated."""
    return np.concatenate([fn(X[a : a + rows], y[a : a + rows]) for a in range(0, X.shape[0], rows)])


def _gradient_error_at(shape: tuple[int, int], norm_f: float, reg: float, c: float, offset: float = 0.0) -> float:
    """A bound on ‖∇̃F(f) − ∇F(f)‖₂ for the gradient computed by :func:`_gradient` at a point of norm at most
    ``norm_f``, on either engine, for F(f) = (1/n) Σ ℓ(a_i + y_i fᵀx_i) + (reg/2)‖f‖² with offsets |a_i| <= ``offset``
    (none: 0) computed within 2u·``offset`` + (d + 1)·2^-440 (:func:`_offsets`).

    Per coordinate: each block of r rows gives X_bᵀ(y ℓ′) within
    γ_r Σ_i |x_ij||ℓ′_i| <= γ_r r R (|ℓ′| <= 1, |x_ij| <= R), ℓ′ itself within
    (c + 4)u: the logistic ℓ′ = −e/(1 + e) or −1/(1 + e) within 4u; the Huber
    ℓ′ = −min(fl(fl(1 + h) − z)/(2h), 1) within u(1 + h)/(2h) + 3u = u(c + 3.5)
    (fl(1 + h) within u(1 + h), the subtraction within u·2h where the clip is
    not active, the division within u, the clips 1-Lipschitz), which grows
    with c = 1/(2h) as h shrinks; the n_b block results are added by the fixed tree of
    :class:`dpstats._kernels.reduce.DyadicSum` (the same for NumPy and for any cut into
    Dask chunks), each through fewer than n_b additions: within γ_{n_b} n R;
    dividing by n and adding reg·f_j costs 3u|reg f_j|.
    Over d coordinates: √d times the first part, plus 3u·reg‖f‖. The
    margins x_iᵀf are themselves within γ_d Σ_j |x_ij f_j| <= γ_d R ‖f‖
    of their exact values, and ℓ′ is c-Lipschitz, so ℓ′ moves by at most
    c γ_d R ‖f‖ per example and the gradient by at most c γ_d R² ‖f‖ (in L2:
    (1/n) Σ_i ‖x_i‖ times that). With offsets the margin is fl(ã_i + y_i x_iᵀf): the offset's error, and the
    addition's rounding u(|ã_i| + R‖f‖), move it by at most u(3·offset + R‖f‖) more (with a 1 % margin for the
    products of small roundings), the gradient by c·R times that. Public: n, d and the block size r (from d)
    only, plus the bounds on the point and the offsets.
    """
    n, d = shape
    rows = min(block_rows(8 * d), n)
    blocks = -(-n // rows)
    bound = norm_bound(d)  # R, rounded up
    per_coordinate = (rows + blocks + 2 + (c + 4.0)) * UNIT_ROUNDOFF * bound * 1.01  # (c + 4)u: ℓ′'s own rounding
    margins = UNIT_ROUNDOFF * (3.0 * offset + bound * norm_f) * 1.01 + (d + 1) * 2.0**-440  # the offsets' share
    return (
        math.sqrt(d) * per_coordinate
        + c * gamma(d + 1) * bound * bound * norm_f * 1.01
        + 3 * UNIT_ROUNDOFF * reg * norm_f
        + (c * bound * margins if offset else 0.0)
    )


def _hessian_error_at(shape: tuple[int, int], norm_f: float, reg: float, loss: _Loss, offset: float = 0.0) -> float:
    """A bound on ‖H̃(f) − ∇²F(f)‖₂ for the Hessian computed by :func:`_gradient_and_hessian` at a point of norm
    at most ``norm_f`` (a loss with a ``third``; offsets as in :func:`_gradient_error_at`).

    Entry (j, k) of a block is Σ_i v_ij v_ik with v_ij = fl(fl(√w_i)·x_ij) and w_i = ℓ″(z̃_i) computed: each
    product v_ij v_ik is w_i x_ij x_ik within 4u (the square root and the scaling, each within u, twice), the dot
    product of r terms within γ_r, the fixed tree of n_b block results and the division by n within γ_{n_b + 3}
    more: in all within (r + n_b + 7)u·Σ_i w_i |x_ij||x_ik| (w_i <= c; 1 % margin for the products of small
    roundings). The computed w_i is within 8.1u·ℓ″ of ℓ″ at the computed margin (exp within 2u, then 1 + e, its
    square and the quotient), and the computed margin within δ of the exact one (as in
    :func:`_gradient_error_at`: γ_{d+1} R‖f‖, plus u(3·offset + R‖f‖) and (d + 1)·2^-440 with offsets), so w_i
    moves by at most 8.1u·c + max|ℓ‴|·δ; the clip of the offsets moves ℓ″ by at most the loss's tail (both margins
    beyond the flat point Z). So every entry's error is at most M_jk = (1/n) Σ_i κ_i |x_ij||x_ik| for per-row
    bounds κ_i; M is positive semidefinite and ‖E‖₂ <= ‖M‖₂ <= tr M <= R² max κ_i. Adding reg to the diagonal
    costs u(cR² + reg) more. Public: n, d, the block size, the bounds on the point and the offsets."""
    n, d = shape
    rows = min(block_rows(8 * d), n)
    blocks = -(-n // rows)
    bound = norm_bound(d)  # R, rounded up
    margin = gamma(d + 1) * bound * norm_f * 1.01
    if offset:
        margin += UNIT_ROUNDOFF * (3.0 * offset + bound * norm_f) * 1.01 + (d + 1) * 2.0**-440
    weight = 8.1 * UNIT_ROUNDOFF * loss.c + loss.third * margin + (loss.flat()[1] if offset else 0.0)
    products = (rows + blocks + 7) * UNIT_ROUNDOFF * loss.c * 1.01
    return ((products + weight) * bound * bound + UNIT_ROUNDOFF * (loss.c * bound * bound + reg)) * 1.01


def _smoothness(c: float, bound: float, reg: float) -> float:
    """L >= c R² + reg, rounded up: the smoothness of F (ℓ″ <= c, rows of norm <= R, ridge reg)."""
    return math.nextafter(c * bound * bound + reg, math.inf)


#: Share of ε that objective perturbation spends on the approximate minimiser's output noise (module docstring).
AMP_SHARE = 1.0 / 128

#: The most Newton steps a plan considers (their distance bound falls doubly exponentially: a few always suffice).
_MAX_NEWTON = 12


def _newton_cost(d: int) -> float:
    """The cost of one Newton step (one pass forming the gradient and the d×d Hessian, and a d×d Cholesky
    factorisation) in gradient passes, as measured at n = 10⁵ (about 1.6, 2.8, 6 and 5 at d = 11, 26, 51, 101 on a
    loaded 2-core machine): only the choice between plans of equal guarantee uses it."""
    return 1.0 + d / 10.0


@dataclass(frozen=True)
class Descent:
    """Output perturbation's fallback solver when ``max_iter`` is too small for :class:`OutputPerturbation`'s
    target, planned from public values only (module docstring, "Output perturbation"): at most ``max_iter``
    gradient steps, ``steps`` steps of size ``step`` from f = 0, each a contraction by
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
        bound = norm_bound(d)  # R, rounded up
        smooth = _smoothness(c, bound, lam)
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
        alpha = step * _gradient_error_at((n, d), 0.0, lam, c) + 2.0 * UNIT_ROUNDOFF * step * bound
        slope = step * (_gradient_error_at((n, d), 1.0, lam, c) - _gradient_error_at((n, d), 0.0, lam, c))
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


@dataclass(frozen=True)
class _Momentum:
    """The accelerated phase of :class:`Accelerated`, from public values: Nesterov's method with constant momentum
    α <= √(μ/L) and the gradient step 1/L̃ (L̃ = μ/α² >= L) on F(g) from g = 0, which has √Φ_0 <= ``start`` = R/√μ
    (and <= √ℓ(0) without offsets).
    While every iterate has norm at most ``size``, each computed step satisfies
    √Φ_{k+1} <= √(1 − α)·√Φ_k + E, so √Φ_K <= (1 − α)^{K/2}·start + ``drift`` (module docstring)."""

    momentum: float
    step: float
    sigma: float  # ‖v − g*‖ <= σ√Φ for the computed y and z
    start: float
    size: float
    drift: float  # E/(1 − √(1 − α)), in units of √Φ
    cap: float  # the margins' offsets are clipped at cap = R·size + Z

    @classmethod
    def of(cls, n: int, d: int, reg: float, loss: _Loss, offsets: bool) -> _Momentum | None:
        """The constants, or None when the rounding of a step could grow without bound (tiny μ)."""
        bound = norm_bound(d)  # R, rounded up
        tiny = 4.0 * UNIT_ROUNDOFF
        momentum = math.sqrt(reg / _smoothness(loss.c, bound, reg)) * (1.0 - tiny)  # α <= √(μ/L)
        curvature = reg / (momentum * momentum) * (1.0 + tiny)  # L̃ = μ/α² >= L, rounded up
        sigma = math.sqrt(2.0 / reg) * (1.0 + tiny)  # ‖v − g*‖ <= σ√Φ
        # √Φ_0 <= R/√μ (‖∇F(0)‖ <= R); without offsets also <= √ℓ(0): Φ_0 = F(0) − F* + (μ/2)‖g*‖² is the loss part
        # at 0 minus the loss part at g*, and the loss part is >= 0 and at most ℓ(0) at 0
        start = bound / math.sqrt(reg)
        if not offsets:
            start = min(start, math.sqrt(loss.at_zero()) * (1.0 + tiny))
        flat, tail = loss.flat() if offsets else (0.0, 0.0)
        g4 = gamma(4)

        def step_error(size: float) -> float:
            """E: √Φ_{k+1} <= √(1 − α)·√Φ_k + E while every iterate has norm <= ``size`` (affine in ``size``)."""
            cap = bound * size + flat if offsets else 0.0
            error = _gradient_error_at((n, d), size, reg, loss.c, offset=cap) + bound * tail  # ‖e_k‖
            largest = bound + reg * size + error  # ‖G_k‖
            y_step = error * (1.0 + g4) + curvature * UNIT_ROUNDOFF * size + g4 * largest  # ‖e_y‖
            coupling = (2.0 - momentum) * (1.0 + momentum) * g4 * size / momentum  # ‖ζ_{k+1} − (1 − α)ζ_k‖
            z_step = error + g4 * (reg * size / momentum + largest) + reg / momentum * coupling  # ‖e_z‖
            return (momentum * sigma * z_step + y_step / math.sqrt(2.0 * curvature)) * (1.0 + tiny)

        gap = momentum / 2.0  # 1 − √(1 − α) >= α/2
        fixed = step_error(0.0)
        slope = (step_error(1.0) - fixed) * 1.01
        spread = (1.0 + momentum) * g4 / momentum  # ‖ζ_k‖ <= spread·M
        shrink = 1.0 - sigma * slope / gap - spread
        if not shrink > 0.5:
            return None
        size = (bound / reg + sigma * start + sigma * fixed / gap) / shrink * 1.01  # M >= every iterate's norm
        drift = (fixed + slope * size) / gap * 1.01
        cap = bound * size + flat if offsets else 0.0
        return cls(momentum, momentum * momentum / reg, sigma, start, size, drift, cap)

    def potential(self, steps: int) -> float:
        """The bound on √Φ_K after K = ``steps`` computed steps."""
        return self.start * (1.0 - self.momentum) ** (steps / 2.0) * (1.0 + 1e-12) + self.drift

    def steps_to(self, target: float) -> int | None:
        """The fewest steps whose distance bound σ√Φ_K is <= ``target`` (None if the drift alone exceeds half)."""
        drift = self.sigma * self.drift
        if not drift <= target / 2.0:
            return None
        wanted = 2.0 * math.log(self.sigma * self.start / (target - drift)) / -math.log1p(-self.momentum)
        return max(1, math.ceil(wanted) + 1)


@dataclass(frozen=True)
class _NewtonBounds:
    """The public recursion of the Newton phase of :class:`Accelerated` (module docstring, "Newton steps"), in
    units of t = R‖g − g*‖_{H*}/√μ: t_{k+1} <= e^t [ψ(t) + η′(1 + ψ(t))] t + ``floor`` with ψ(t) = (e^t − 1 − t)/t,
    η′ = η/(1 − η) from the Hessian's and the Cholesky solve's error, and the floor from the gradient's error and
    the rounding of the update; ‖g − g*‖ <= t/R."""

    relative: float  # η′
    floor: float
    bound: float  # R

    @classmethod
    def of(cls, n: int, d: int, reg: float, loss: _Loss, momentum: _Momentum, offsets: bool) -> _NewtonBounds | None:
        """The bounds for iterates of norm <= ``momentum.size``, or None when the Cholesky factorisation of the
        computed Hessian is not certain to run to completion in double precision (public values only)."""
        bound = norm_bound(d)
        size = momentum.size
        if loss.third is None or not bound / reg * 1.01 + 1.0 / bound <= size:  # iterates within t <= 1 of g*
            return None
        offset = momentum.cap if offsets else 0.0
        hessian = _hessian_error_at((n, d), size, reg, loss, offset)
        trace = loss.c * bound * bound + d * reg + hessian  # >= tr H̃ (tr ∇²F <= cR² + d·reg)
        factor = gamma(d + 1) * trace / (1.0 - gamma(d + 1))  # the factorisation's backward error (Higham 10.3)
        solve = gamma(3 * d + 1) * trace / (1.0 - gamma(d + 1))  # and the solve's (Higham 10.4)
        if not (reg - hessian > 2.0 * factor and (hessian + solve) / reg < 0.25):
            return None
        eta = (hessian + solve) / reg * 1.01
        gradient = _gradient_error_at((n, d), size, reg, loss.c, offset=offset)
        if offsets:
            gradient += bound * loss.flat()[1]  # the clip of the offsets (module docstring)
        smooth = _smoothness(loss.c, bound, reg)
        rounding = bound * math.sqrt(smooth / reg) * UNIT_ROUNDOFF * size  # R√(L/μ)·u‖x + v‖
        floor = (math.exp(0.5) * bound * gradient / ((1.0 - eta) * reg) + rounding) * 1.01  # for t <= 1
        return cls(eta / (1.0 - eta) * 1.01, floor, bound)

    def next(self, t: float) -> float:
        """The bound on t after one more Newton step (for 0 < t <= 1)."""
        psi = (math.expm1(t) - t) / t if t > 1e-8 else t / 2.0 * (1.0 + t)  # ψ(t), and its series below 1e-8
        return (math.exp(t) * (psi + self.relative * (1.0 + psi)) * t * (1.0 + 1e-12) + self.floor) * (1.0 + 1e-12)

    def splits(self, phase: _Momentum, reg: float, target: float, cost: float, alone: int | None) -> list[tuple]:
        """The plans (cost, accelerated steps K, Newton steps, distance) that reach ``target``: Newton steps apply
        from t <= 1 (ω(1) = 1/e > 0.36: once √Φ_K <= √(0.36 μ)/R) and their bound contracts below t ≈ 0.7
        (e^t ψ(t) < 1), so every K from the first with t <= 1 to the first with t <= 0.6 (ω(0.6) = 0.1488...)
        plus the accelerated steps that cost as much as the most Newton steps considered, and no more than the
        accelerated steps alone would take."""

        def first_with(value: float) -> int | None:  # the fewest K with √Φ_K <= √(value·μ)/R
            limit = math.sqrt(value * reg) / self.bound - phase.drift
            if not limit > 0.0:
                return None
            return max(1, math.ceil(2.0 * math.log(phase.start / limit) / -math.log1p(-phase.momentum)))

        first, settled = first_with(0.36), first_with(0.148)
        if first is None or settled is None:
            return []
        last = settled + math.ceil(cost * _MAX_NEWTON)
        plans = []
        for steps in range(first, (last if alone is None else min(last, alone)) + 1):
            t = _entry(self.bound**2 * phase.potential(steps) ** 2 / reg)
            found = self.steps_to(t, target) if t <= 1.0 else None
            if found is not None:
                plans.append((steps + cost * found[0], steps, *found))
        return plans

    def steps_to(self, t: float, target: float) -> tuple[int, float] | None:
        """The fewest Newton steps from t (<= 1) to a distance <= ``target``, and that distance (t_K/R)."""
        for steps in range(1, _MAX_NEWTON + 1):
            t = self.next(t)
            if not t <= 1.0:
                return None
            if t / self.bound <= target:
                return steps, t / self.bound * (1.0 + 1e-12)
        return None


def _entry(value: float) -> float:
    """The t below which every point with R²(F − F*)/μ <= ``value`` lies: ω(t) = t − 1 + e^{−t} is increasing and
    R²(F − F*)/μ >= ω(t) (module docstring), so t <= ω⁻¹(value), found by bisection and rounded up."""
    low, high = 0.0, 2.0
    if high + math.expm1(-high) <= value:
        return math.inf
    for _ in range(60):
        middle = (low + high) / 2.0
        if middle + math.expm1(-middle) < value * (1.0 + 1e-9):
            low = middle
        else:
            high = middle
    return high * (1.0 + 1e-12)


@dataclass(frozen=True)
class Accelerated:
    """The solver of both mechanisms, planned from public values only (module docstring, "Solving to a certified
    distance"): ``steps`` steps of Nesterov's accelerated gradient method for μ-strongly convex, L-smooth functions
    (coupling ``momentum`` α <= √(μ/L), gradient step ``step`` ≈ α²/μ) on F(g) from g = 0, then ``newton`` Newton
    steps (the logistic loss; 0 for the Huber loss, or when they would not save work). The margins' offsets are
    clipped at ``cap`` (which changes no gradient: module docstring). ``distance`` bounds ‖ĝ − g*‖₂ for the computed
    point, whatever the data and the noise, floating-point error included; ``drift`` is the accelerated phase's
    share of that error (in distance units)."""

    momentum: float
    step: float
    steps: int
    drift: float
    distance: float
    cap: float
    newton: int = 0

    @classmethod
    def plan(
        cls, n: int, d: int, reg: float, loss: _Loss, target: float, max_iter: int, *, offsets: bool = True
    ) -> Accelerated:
        """The plan for n (public) rows bound, d features, the strong convexity μ = ``reg``, the loss, and the
        distance ``target`` the computed point must be within: of the plans that reach it (accelerated steps
        alone, or fewer of them followed by Newton steps) in at most ``max_iter`` steps in all, the one with the
        least work, or :class:`ParameterError` (before anything is charged) if double precision cannot reach it, or
        if every plan takes more than ``max_iter`` steps. ``offsets``: the objective has margins' offsets (objective
        perturbation) or none (output perturbation)."""
        if not math.isfinite(target):
            raise ParameterError(
                f"tol must keep tol/(lam + Delta) finite in double precision; tol/(lam + Delta) = {target:g}"
            )
        phase = _Momentum.of(n, d, reg, loss, offsets)
        plans = []  # (cost in gradient passes, accelerated steps, Newton steps, distance)
        if phase is not None:
            alone = phase.steps_to(target)
            if alone is not None:
                plans.append((alone, alone, 0, phase.sigma * phase.potential(alone)))
            newton = _NewtonBounds.of(n, d, reg, loss, phase, offsets)
            if newton is not None:
                plans += newton.splits(phase, reg, target, _newton_cost(d), alone)
        if not plans:
            drift = math.inf if phase is None else phase.sigma * phase.drift
            raise ParameterError(
                f"cannot place the minimiser within {target:.3g} in double precision at lam + Delta = {reg:g} with "
                f"d = {d} features (the rounding of the gradient steps alone could move it by {drift:.3g}); "
                "increase tol (the output noise grows with it) or lam"
            )
        within = [plan for plan in plans if plan[1] + plan[2] <= max_iter]
        if not within:
            _, steps, newton_steps, _ = min(plans, key=lambda plan: plan[1] + plan[2])
            raise ParameterError(
                f"the solver needs {steps} accelerated gradient steps and {newton_steps} Newton steps to place the "
                f"minimiser within {target:.3g} (numbers fixed by n, d, lam, the loss and tol, whatever the data); "
                f"max_iter={max_iter} allows fewer. Increase max_iter, tol or lam"
            )
        _, steps, newton_steps, distance = min(within)
        return cls(phase.momentum, phase.step, steps, phase.sigma * phase.drift, distance, phase.cap, newton_steps)


@dataclass(frozen=True)
class OutputPerturbation:
    """Output perturbation's plan, from public values only (module docstring, "Output perturbation"): the
    ``solver`` (:class:`Accelerated`, without offsets) puts the computed minimiser within ``distance`` of the exact
    one, aiming at 2^-10 of CMS's sensitivity 2mR/(nλ); ``sensitivity`` = 2mR/(nλ) + 2·distance bounds the
    distance between neighbours' computed minimisers."""

    solver: Accelerated | Descent
    distance: float
    sensitivity: float

    @property
    def steps(self) -> int:
        """The passes over the data: accelerated (or plain) gradient steps plus Newton steps."""
        return self.solver.steps + getattr(self.solver, "newton", 0)

    @classmethod
    def plan(
        cls,
        n: int,
        d: int,
        lam: float,
        loss: str = "logistic",
        *,
        h: float = 0.5,
        max_rows: int = 1,
        max_iter: int = DEFAULT_MAX_ITER,
    ) -> OutputPerturbation:
        """The plan for n (public) rows bound, d features, λ, the loss (``"logistic"``, or ``"svm"`` with Huber
        parameter ``h``), m = ``max_rows`` rows per privacy unit and at most ``max_iter`` solver steps (fewer
        steps than the target needs: a larger distance, charged, never a refusal)."""
        check_choice(loss, "loss", ("logistic", "svm"))
        return cls.of(n, d, lam, LOGISTIC if loss == "logistic" else huber(h), max_rows, max_iter)

    @classmethod
    def of(cls, n: int, d: int, lam: float, loss: _Loss, max_rows: int, max_iter: int) -> OutputPerturbation:
        """:meth:`plan` for a loss object."""
        stability = 2.0 * max_rows * norm_bound(d) / (n * lam) * (1.0 + 1e-9)  # CMS 2011, Corollary 8, rounded up
        try:
            solver = Accelerated.plan(n, d, lam, loss, stability * 2.0**-10, max_iter, offsets=False)
        except ParameterError:  # max_iter or double precision too tight for the target: gradient steps, by stability
            descent = Descent.plan(n, d, lam, loss.c, max_rows, max_iter)
            return cls(descent, descent.distance, descent.sensitivity)
        return cls(solver, solver.distance, (stability + 2.0 * solver.distance) * (1.0 + 1e-12))


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
    mechanism = f"{loss.name} ({method} perturbation)"
    if method == "output":
        return _output_perturbation(data, loss, lam, epsilon, max_iter, noise, rng, accountant, mechanism, rows)
    if noise == "gamma":
        raise ParameterError(
            "noise='gamma' applies to method='output' (the paper's Gamma-norm output noise); objective perturbation "
            "takes noise='exact' (its release on the public grid) or 'float'"
        )
    return _objective_perturbation(data, loss, lam, epsilon, tol, max_iter, noise, rng, accountant, mechanism, rows)


def _objective_perturbation(data: _Rows, loss, lam, epsilon, tol, max_iter, noise, rng, accountant, mechanism, rows):
    """CMS 2011 Algorithm 2 at ε(1 − 1/128), its minimiser approached by a fixed, public number of accelerated
    gradient steps to within tol/(λ + Δ), then output noise at ε/128 covering that distance (module docstring,
    "Objective perturbation ..."): the release on a public grid by default; ``noise="float"`` (the paper's
    floating-point release) is recorded as unproven."""
    n, d = data.shape
    m = rows.max_rows
    bound = norm_bound(d)  # R, rounded up
    eps_output = epsilon * AMP_SHARE
    eps_objective = epsilon - eps_output
    while Fraction(eps_objective) + Fraction(eps_output) > Fraction(epsilon):  # never charge more than epsilon
        eps_objective = math.nextafter(eps_objective, 0.0)
    eps_prime, Delta = objective_perturbation_parameters(n, lam, eps_objective, loss.c, norm_bound=bound, max_rows=m)
    reg = lam + Delta
    target = tol / reg  # the release's centre is within this of the exact minimiser; neighbours' within twice it
    plan = Accelerated.plan(n, d, reg, loss, target, max_iter)
    # the noise centre s = −b/(n(λ + Δ)): ‖s‖ ~ Gamma(d, spread), the scale rounded up
    exact_spread = 2 * m * Fraction(bound) / (Fraction(eps_prime) * n * Fraction(reg))
    if not exact_spread <= 2**900:
        raise ParameterError(
            f"objective perturbation's noise would overflow double precision at n(lam + Delta) = {n * reg:g} and "
            f"eps' = {eps_prime:g} (its scale exceeds 2^900); increase lam or epsilon"
        )
    spread = float_up(exact_spread)
    grid = output_grid(2.0 * target, d, noise)
    if not (spread >= 2.0**-900 and (grid is None or grid > 0.0)):  # public values only, decided before the charge
        raise ParameterError(
            f"objective perturbation's noise scale ({spread:g}) or output grid underflows double precision at "
            f"n(lam + Delta) = {n * reg:g} and tol = {tol:g}; decrease lam or increase tol"
        )
    charge(
        mechanism,
        [PureDP(eps_objective), PureDP(eps_output)],
        rng=rng,
        accountant=accountant,
        relation=rows.relation,
        proven=noise != "float",
        note=f"CMS 2011 Algorithm 2 at eps={eps_objective:.6g} (eps'={eps_prime:.4g}, Delta={Delta:.4g}) on "
        f"{plan.steps} accelerated gradient steps and {plan.newton} Newton steps from the noise centre (fixed, "
        f"public numbers), within "
        f"{plan.distance:.3g} of the exact minimiser (floating-point drift included); approximate-minimiser output "
        f"noise at eps={eps_output:.4g} for twice tol/(lam + Delta) = {target:.3g}; {rows.note()}Gamma-norm noise "
        "drawn in floating point (no exact sampler known)"
        + ("; the paper's floating-point release: unproven" if noise == "float" else ""),
    )
    rate = float_down(1 / Fraction(spread))  # the sampler's scale 1/rate, rounded to nearest, is then >= spread
    centre = draw("objective perturbation's noise centre", rng, lambda: -sample_gamma_norm_vector(d, rate, rng))
    methods = _compensated_up_to(d, plan.cap, spread), _plain_up_to(d, plan.cap, spread)
    offsets = data.per_row(_offsets_of(centre, plan.cap, *methods))
    g = _solve(data, loss, reg, plan, offsets)
    # for b fixed, the perturbed objective is (λ + Δ)-strongly convex and neighbours' gradients differ by at most
    # 2mR/n: its minimiser moves by at most 2mR/(n(λ + Δ)), the computed one by 2 tol/(λ + Δ) more
    observe(
        "objective perturbation's minimiser, b fixed",
        centre + g,
        sensitivity=2.0 * m * bound / (n * reg) + 2.0 * target,
        norm="l2",
        exact=False,
    )
    covered = _covered(2.0 * target, grid, d)
    return draw(
        "approximate-minimiser output noise", rng, lambda: _gridded_release((centre, g), covered, eps_output, grid, rng)
    )


def _output_perturbation(data: _Rows, loss, lam, epsilon, max_iter, noise, rng, accountant, mechanism, rows):
    """CMS 2011 Algorithm 1 on the minimiser placed within a public distance by a fixed, public number of solver
    steps (module docstring, "Output perturbation"): exact discrete Laplace noise on a public grid by default,
    calibrated to the L1 sensitivity √d·S₂; the paper's Gamma-norm noise (``noise="gamma"`` on the grid,
    ``"float"`` without it) is recorded as unproven."""
    n, d = data.shape
    plan = OutputPerturbation.of(n, d, lam, loss, rows.max_rows, max_iter)
    if isinstance(plan.solver, Descent):
        how = (
            f"CMS 2011 Algorithm 1 on {plan.steps} gradient steps of size {plan.solver.step:.4g} from 0 (a fixed, "
            f"public number; max_iter allows no more): L2 sensitivity {plan.sensitivity:.4g} (2mR/(n lam) by "
            f"stability, plus floating-point drift), within {plan.distance:.3g} of the exact minimiser; {rows.note()}"
        )
    else:
        how = (
            f"CMS 2011 Algorithm 1 on {plan.solver.steps} accelerated gradient steps and {plan.solver.newton} Newton "
            f"steps from 0 (fixed, public numbers), within {plan.distance:.3g} of the exact minimiser: L2 "
            f"sensitivity {plan.sensitivity:.4g} (2mR/(n lam), plus twice that distance); {rows.note()}"
        )
    if noise == "exact":
        l1 = math.nextafter(math.sqrt(d) * plan.sensitivity, math.inf)  # ‖v‖₁ <= √d‖v‖₂
        calibrated = calibrate(epsilon=epsilon, delta=0.0, sensitivity=l1, changed=d)
        f = _solve(data, loss, lam, plan.solver)
        observe("output perturbation's computed minimiser", f, sensitivity=plan.sensitivity, norm="l2", exact=False)
        charge(
            mechanism,
            [calibrated.event],
            rng=rng,
            accountant=accountant,
            relation=rows.relation,
            note=f"{how}exact discrete Laplace noise on a public grid, L1 sensitivity sqrt(d) times the L2 one",
            noise=calibrated.statement("weights"),
        )
        return calibrated.apply(Statistic(f), rng)
    grid = output_grid(plan.sensitivity, d, "float" if noise == "float" else "exact")
    f = _solve(data, loss, lam, plan.solver)
    observe("output perturbation's computed minimiser", f, sensitivity=plan.sensitivity, norm="l2", exact=False)
    charge(
        mechanism,
        [PureDP(epsilon)],
        rng=rng,
        accountant=accountant,
        relation=rows.relation,
        proven=False,
        note=f"{how}the paper's Gamma-norm noise, drawn in floating point (no exact sampler known): unproven",
    )
    covered = _covered(plan.sensitivity, grid, d)
    return draw("Gamma-norm noise", rng, lambda: _gridded_release((f,), covered, epsilon, grid, rng))


def _solve(data: _Rows, loss, reg: float, plan: Accelerated | Descent, *offsets) -> np.ndarray:
    """The plan's accelerated steps from 0, then its Newton steps, on F(g) = (1/n) Σ ℓ(a_i + y_i gᵀx_i) +
    (reg/2)‖g‖² (a_i the ``offsets``, none: 0); or a :class:`Descent` plan's gradient steps. Fixed, public numbers
    of passes over the blocks, whatever the data and the noise (the same on every engine)."""
    with single_threaded_blas():  # many mid-sized products: one BLAS thread is faster, and fair on a shared machine
        if isinstance(plan, Descent):
            return _descend(data, loss, reg, plan)
        g = _accelerate(data, loss, reg, plan, *offsets)
        for _ in range(plan.newton):
            gradient, hessian = _gradient_and_hessian(data, loss, reg, g, *offsets)
            g = g - _cholesky_solve(hessian, gradient)
    return g


def _descend(data: _Rows, loss, lam: float, plan: Descent) -> np.ndarray:
    """``plan.steps`` gradient steps f ← f − h·∇F(f) from f = 0 on F(f) = (1/n) Σ ℓ(y_i fᵀx_i) + (λ/2)‖f‖²: a fixed
    number, whatever the data, each one pass over the blocks (the same on every engine)."""
    f = np.zeros(data.shape[1])
    for _ in range(plan.steps):
        f = f - plan.step * _gradient(data, loss, lam, f)
    return f


def _accelerate(data: _Rows, loss, reg: float, plan: Accelerated, *offsets) -> np.ndarray:
    """``plan.steps`` steps of Nesterov's method (constant momentum, for strongly convex functions) from g = 0 on
    F(g) = (1/n) Σ ℓ(a_i + y_i gᵀx_i) + (reg/2)‖g‖², a_i the ``offsets``: a fixed number, whatever the data and the
    noise, each one pass over the blocks (the same on every engine). With α the momentum and x_k the coupling:

        x_k = (y_k + α z_k)/(1 + α),   y_{k+1} = x_k − ∇F(x_k)/L̃,   z_{k+1} = (1 − α) z_k + α x_k − (α/μ) ∇F(x_k)

    (L̃ = μ/α², y_0 = z_0 = 0); returns y_K."""
    alpha = plan.momentum
    inverse, keep, dual = 1.0 / (1.0 + alpha), 1.0 - alpha, alpha / reg
    y = z = np.zeros(data.shape[1])
    for _ in range(plan.steps):
        x = (y + alpha * z) * inverse
        gradient = _gradient(data, loss, reg, x, *offsets)
        y, z = x - plan.step * gradient, keep * z + alpha * x - dual * gradient
    return y


def _gradient_and_hessian(data: _Rows, loss, reg: float, f: np.ndarray, *offsets) -> tuple[np.ndarray, np.ndarray]:
    """The computed ∇F(f) (as :func:`_gradient`) and ∇²F(f) = (1/n) Σ ℓ″(a_i + y_i fᵀx_i) x_i x_iᵀ + reg·I in one
    pass over the blocks (the block sums of both by the same fixed tree); :func:`_hessian_error_at` bounds the
    Hessian's error. Only its upper triangle is read (:func:`_cholesky_solve`)."""
    d = data.shape[1]
    both = data.reduce(functools.partial(_gradient_hessian_block, loss=loss, f=f), *offsets)
    both = both / data.shape[0]
    gradient = both[d] + reg * f
    hessian = both[:d]
    hessian[np.diag_indices(d)] += reg
    return gradient, hessian


def _gradient_hessian_block(X: np.ndarray, y: np.ndarray, *offsets: np.ndarray, loss: _Loss, f: np.ndarray):
    """[VᵀV; (Xᵀ(y ℓ′(z)))ᵀ] of one block, V = √ℓ″(z) ⊙ X, z = y ⊙ Xf plus the block's offsets if given: d + 1
    rows. (VᵀV is symmetric and takes half the products of Xᵀ(ℓ″ ⊙ X): NumPy hands it to BLAS's syrk.)"""
    margins = X @ f
    margins *= y
    for offset in offsets:
        margins += offset
    weights = loss.derivative(margins)
    weights *= y
    scaled = np.sqrt(loss.curvature(margins))[:, None] * X
    return np.vstack([scaled.T @ scaled, X.T @ weights])


def _cholesky_solve(H: np.ndarray, b: np.ndarray) -> np.ndarray:
    """H⁻¹b by the Cholesky factorisation RᵀR of the symmetric matrix with H's upper triangle (the inner-product
    form, Higham 2002, Algorithm 10.2) and two triangular solves (Algorithm 8.1): the computed x satisfies
    (H + ΔH)x = b with |ΔH| <= γ_{3d+1}|Rᵀ||R| whatever the order of the inner products (Higham 2002,
    Theorem 10.4). The plan makes sure that H is positive definite enough for every pivot to be positive
    (:class:`_NewtonBounds`); written out so that the analysis does not depend on a LAPACK build."""
    d = b.shape[0]
    R = np.zeros((d, d))
    for j in range(d):
        column = R[:j, j]
        R[j, j] = math.sqrt(H[j, j] - column @ column)
        R[j, j + 1 :] = (H[j, j + 1 :] - column @ R[:j, j + 1 :]) / R[j, j]
    w = np.empty(d)
    for j in range(d):  # Rᵀw = b
        w[j] = (b[j] - R[:j, j] @ w[:j]) / R[j, j]
    x = np.empty(d)
    for j in reversed(range(d)):  # Rx = w
        x[j] = (w[j] - R[j, j + 1 :] @ x[j + 1 :]) / R[j, j]
    return x


def _gradient(data: _Rows, loss, reg: float, f: np.ndarray, *offsets) -> np.ndarray:
    """The computed ∇F(f) = (1/n) Σ ℓ′(a_i + y_i fᵀx_i) y_i x_i + reg·f (no offsets: a_i = 0), one pass over the
    blocks; :func:`_gradient_error_at` bounds its error."""
    return data.reduce(functools.partial(_gradient_block, loss=loss, f=f), *offsets) / data.shape[0] + reg * f


def _gradient_block(X: np.ndarray, y: np.ndarray, *offsets: np.ndarray, loss: _Loss, f: np.ndarray) -> np.ndarray:
    """Xᵀ(y ℓ′(z)) of one block, z = y ⊙ Xf, plus the block's offsets if given (in place: fewer temporaries)."""
    margins = X @ f
    margins *= y
    for offset in offsets:
        margins += offset
    weights = loss.derivative(margins)
    weights *= y
    return X.T @ weights


#: Where the noise centre is scaled to before the exact products of :func:`_offsets` (far from both ends of the
#: float range, so that the products neither overflow nor, in the digits that matter, underflow).
_OFFSET_SCALE = 500

#: The compensated dot product serves the offsets unless the noise is so large that it would not be accurate
#: enough, an event of at most this probability (else the correctly rounded sums always do: module docstring).
_RARE = 2.0**-64


def _compensated_up_to(d: int, cap: float, spread: float) -> float:
    """The norm of the noise centre up to which the compensated dot product (Dot2) gives every offset within
    u·``cap`` (Ogita, Rump & Oishi 2005: within u|xᵀs| + γ_d²·Σ_j |x_j s_j| <= u|xᵀs| + γ_d²·R‖s‖), or 0 when a
    larger norm is not rare (probability above :data:`_RARE` for ‖s‖ ~ Gamma(d, ``spread``)): public values only."""
    threshold = UNIT_ROUNDOFF * cap / (gamma(d) ** 2 * norm_bound(d) * 1.01)
    return threshold if gammaincc(d, threshold / spread) <= _RARE else 0.0


def _plain_up_to(d: int, cap: float, spread: float) -> float:
    """The norm of the noise centre up to which a plain dot product gives every offset within 2u·``cap`` (it is
    within γ_d Σ_j |x_j s_j| <= γ_d R‖s‖, Higham 2002, Lemma 3.1), or 0 when a larger norm is not rare (probability
    above :data:`_RARE` for ‖s‖ ~ Gamma(d, ``spread``)): public values only. (Which way the offsets are computed
    shows in the time a call takes and depends on the noise; a rare threshold keeps that event below 2^-64: to an
    observer of the running time the release is (ε, about 2^-64·e^ε)-DP rather than pure ε-DP.)"""
    threshold = 2.0 * UNIT_ROUNDOFF * cap / (gamma(d) * norm_bound(d) * 1.01)
    return threshold if gammaincc(d, threshold / spread) <= _RARE else 0.0


def _offsets_of(centre: np.ndarray, cap: float, compensated_up_to: float, plain_up_to: float = 0.0):
    """The per-block function of :func:`_offsets` for the noise centre s (scaled exactly by a power of two): a
    plain dot product while ‖s‖ <= ``plain_up_to``, the compensated one while ‖s‖ <= ``compensated_up_to``, else
    correctly rounded sums. Which one runs depends on the noise only, and each meets the same bound."""
    exponent = math.frexp(float(np.abs(centre).max(initial=0.0)))[1] - _OFFSET_SCALE
    norm = math.hypot(*centre)  # (hypot: no overflow)
    method = "plain" if norm <= plain_up_to else "compensated" if norm <= compensated_up_to else "exact"
    return functools.partial(_offsets, scaled=np.ldexp(centre, -exponent), exponent=exponent, cap=cap, method=method)


def _offsets(X: np.ndarray, y: np.ndarray, scaled: np.ndarray, exponent: int, cap: float, method: str) -> np.ndarray:
    """The margins' offsets a_i = y_i x_iᵀs (s = ``scaled``·2^``exponent``), clipped to [−cap, cap], each within
    2u·cap + (d + 1)·2^-440 of clip(a_i).

    ``method="plain"``: one dot product per row (within γ_d R‖s‖ <= 2u·cap below :func:`_plain_up_to`; products
    that underflow at the scale of s′ are below 2^-969 there). Otherwise the products x_ij·s′_j are split exactly
    into pairs hi + lo (:func:`_two_products`) and summed by the compensated cascade of :func:`_compensated_sums`
    (within u|a_i| + u·cap while ‖s‖ is below :func:`_compensated_up_to`) or, with ``"exact"``, rounded once
    (``math.fsum``: within 2u|a_i| whatever s). The sums are scaled back by 2^exponent (exact, or below 2^-1074, or
    overflowing to ±inf, which the clip turns into ±cap). Each way the error after the clip is at most 2u·cap,
    where a plain dot product would be off by d·u·R‖s‖ for a large s."""
    if method == "plain":
        sums = X @ scaled
    else:
        hi, lo = _two_products(X, scaled)
        if method == "exact":
            sums = np.array([math.fsum(row) for row in np.hstack([hi, lo]).tolist()], dtype=np.float64)
        else:
            sums = _compensated_sums(hi, lo)
    with np.errstate(over="ignore"):
        return np.clip(y * np.ldexp(sums, exponent), -cap, cap)


def _two_products(X: np.ndarray, scaled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """hi + lo = x_ij·s′_j exactly (Dekker's TwoProduct, Veltkamp's split), for every entry. Exact without overflow
    or underflow: s′ has its largest entry in [2^499, 2^500), so products that underflow are below 2^-969 there,
    and below 2^-442 once scaled back, for any finite s (the (d + 1)·2^-440 of :func:`_gradient_error_at`)."""
    hi = X * scaled
    x_hi, x_lo = _split(X)
    s_hi, s_lo = _split(scaled)
    return hi, ((x_hi * s_hi - hi) + x_hi * s_lo + x_lo * s_hi) + x_lo * s_lo


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Veltkamp's split a = hi + lo into halves of at most 26 significant bits each (exact for |a| < 2^996)."""
    c = 134217729.0 * a  # 2^27 + 1
    hi = c - (c - a)
    return hi, a - hi


def _compensated_sums(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """Σ_j (hi_ij + lo_ij) per row by Ogita, Rump & Oishi's Dot2 (their Sum2 cascade of Knuth's TwoSum over the
    exact products), vectorised over the rows."""
    hi, lo = np.ascontiguousarray(hi.T), np.ascontiguousarray(lo.T)
    total, error = hi[0], lo[0]
    for h, low in zip(hi[1:], lo[1:], strict=True):
        new = total + h
        back = new - total
        error = error + (((total - (new - back)) + (h - back)) + low)
        total = new
    return total + error


def _covered(sensitivity: float, grid: float | None, d: int) -> float:
    """The distance the output noise must cover: the sensitivity plus the rounding to the grid (G/2 per coordinate
    for each of two neighbours)."""
    return sensitivity if grid is None else math.nextafter(sensitivity + grid * math.sqrt(d), math.inf)


def _gridded_release(parts: tuple, sensitivity: float, epsilon: float, grid: float | None, rng) -> np.ndarray:
    """f + b, f the sum of the ``parts``, b of density ∝ exp(−ε‖b‖/Δ); on the grid round(f/G) (computed exactly
    from the parts, one rounding) and round(b/G) are added as integers, so the data enter only through the integer
    round(f/G)."""
    # the rate rounded down (and at most the largest float: more noise, never an error after the charge), so that
    # the sampler's scale 1/rate (rounded to nearest) is >= sensitivity/ε
    rate = float_down(min(Fraction(epsilon) / Fraction(sensitivity), Fraction(sys.float_info.max)))
    b = sample_gamma_norm_vector(parts[0].shape[0], rate, rng)
    if grid is None:
        return functools.reduce(np.add, parts) + b
    return integers_times_grid(_sum_on_grid(parts, grid) + grid_integers(b, grid), grid)


def _sum_on_grid(parts: tuple, grid: float) -> np.ndarray:
    """round((Σ parts)/G) per coordinate, exactly (rational arithmetic: no overflow, one rounding), as Python
    integers."""
    unit = Fraction(grid)
    return np.array([round(sum(map(Fraction, column)) / unit) for column in zip(*parts, strict=True)], dtype=object)


def huber(h: float) -> _Huber:
    """The Huber SVM loss with parameter h > 0 (c = 1/(2h))."""
    h = check_positive(h, "h")
    c = Fraction(1, 2) / Fraction(h)
    if not (math.isfinite(2.0 * h) and c <= Fraction(sys.float_info.max)):
        raise ParameterError(f"h must be a positive float with 2h and 1/(2h) finite in double precision; got {h!r}")
    return _Huber("svm", float_up(c), h)  # c rounded up


LOGISTIC = _Logistic("logistic_regression", 0.25)

#: The parameters svm and logistic_regression share.
_ERM = {
    **privacy("pure"),
    "lam": Real(0, None),
    "method": Options(*METHODS),
    "clip": Flag(),
    **UNITS,
    "tol": Real(0, None),
    "max_iter": Integer(1),
    "noise": Options(*NOISE),
}
_LABELLED = {
    "X": Data("matrix", "an n × d matrix of rows with L2 norm <= 1"),
    "y": Data("labels", "n labels in {-1, +1}"),
}


@declare(
    family="linear_model",
    statistic="the weights of a linear SVM (Huber loss), by output or objective perturbation",
    data=_LABELLED,
    parameters={**_ERM, "h": Real(0, None)},
    engines=("numpy", "dask"),
    cases="dpstats.linear_model._cases:svm",
    preview="dpstats.linear_model._previews:svm_preview",
)
def svm(
    X,
    y,
    epsilon: float,
    delta: float = 0.0,
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
    ``method="output"``: Algorithm 1 (Theorem 6) on a minimiser computed to
    within a public distance r by fixed, public numbers of solver steps, whose
    L2 sensitivity is 2/(nλ) (CMS 2011, Corollary 8) plus 2r, r about 2^-10 of
    it (module docstring); exact discrete Laplace noise for the L1 sensitivity
    √d times that.
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
    delta : float, default 0.0
        Must be 0: both methods are pure ε-DP.
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
        Objective perturbation: the released centre is within tol/(λ + Δ) of
        the exact minimiser of the perturbed objective (a public bound; that
        distance is charged). Not used by output perturbation.
    max_iter : int, default 5000
        Objective perturbation: the most solver steps (accelerated gradient
        and Newton steps together) it may take; it takes a public number that
        reaches ``tol`` (:class:`dpstats.linear_model.Accelerated`). Output
        perturbation: the same solver aiming at 2^-10 of the sensitivity
        (:class:`dpstats.linear_model.OutputPerturbation`); when ``max_iter``
        allows fewer steps, at most ``max_iter`` plain gradient steps, whose
        sensitivity follows from stability (:class:`dpstats.linear_model.Descent`).
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
    ParameterError
        Before anything is charged, if the public plan cannot reach ``tol``
        within ``max_iter`` steps or in double precision (module docstring).
        Neither method fails after the charge.

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


@declare(
    family="linear_model",
    statistic="the weights of a logistic regression, by output or objective perturbation",
    data=_LABELLED,
    parameters=_ERM,
    engines=("numpy", "dask"),
    cases="dpstats.linear_model._cases:logistic_regression",
    preview="dpstats.linear_model._previews:logistic_regression_preview",
)
def logistic_regression(
    X,
    y,
    epsilon: float,
    delta: float = 0.0,
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
    ``method="output"``: Algorithm 1 (Theorem 6) on a minimiser computed to
    within a public distance r by fixed, public numbers of solver steps, whose
    L2 sensitivity is 2/(nλ) (CMS 2011, Corollary 8) plus 2r, r about 2^-10 of
    it (module docstring); exact discrete Laplace noise for the L1 sensitivity
    √d times that.
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
    delta : float, default 0.0
        Must be 0: both methods are pure ε-DP.
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
    ParameterError
        Before anything is charged, if the public plan cannot reach ``tol``
        within ``max_iter`` steps or in double precision (module docstring).
        Neither method fails after the charge.

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
