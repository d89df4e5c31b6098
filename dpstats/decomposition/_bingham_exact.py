"""Exact vector-Bingham draws: rejection from an angular central Gaussian, every decision taken on exact intervals.

Target. z on the unit sphere S^{m−1} with density ∝ exp(β·(Nz)ᵀA(Nz)) for floats β >= 0, N (d × m) and A
(d × d), as given — the density is that of these exact numbers, not of a rounded copy (``_Diagonal``: N = I and
A = diag(λ)). Write f*(z) = exp(−zᵀΛz) with Λ = αI − βNᵀAN (α a float; only ratios matter).

Envelope (Kent, Ganeiber & Mardia 2018, Section 4.2, with floating point made rigorous). With Ω = I + 2Λ/b (b > 0)
and w = zᵀΩz, f*(z) = exp(−b(w − 1)/2) and exp(−b(w − 1)/2)·w^{m/2} <= M = exp(−(m − b)/2)(m/b)^{m/2} for every
w > 0. The proposal is z = y/‖y‖ with y = GZ, Z exact standard normals (:mod:`dpstats.noise.normal`) and G a
float matrix: z then has the angular central Gaussian density ∝ (zᵀΣ⁻¹z)^{−m/2}, Σ = GGᵀ, and at z = GZ/‖GZ‖,
zᵀΣ⁻¹z = ‖Z‖²/‖y‖² =: r (no inverse needed). G is built from floating-point eigenpairs (μ, E) of NᵀAN so that
GᵀΩG ≈ I; what is used is only a *certified* τ >= ‖GᵀΩG − I‖₂ (``_certify``, from Frobenius norms of float
products and their γ_n error bounds): zᵀΩz = (‖Z‖² + ZᵀFZ)/‖y‖² = r(1 + ρ) with |ρ| <= τ (F = GᵀΩG − I), hence
zᵀΣ⁻¹z <= zᵀΩz/(1 − τ) and f*(z)(zᵀΣ⁻¹z)^{m/2} <= M′ = M(1 − τ)^{−m/2}. A proposal is accepted when

    log V < L(Z) = −zᵀΛz + (m/2)·log r − log M′,   V uniform on (0, 1),

and the accepted z are exact draws of the target whatever G is (G changes only the acceptance rate, which for
τ → 0 is Kent et al.'s: 1 for a uniform target, about √(2/(e m)) at infinite concentration).

Exact decisions. Z and V are lazily refined reals (their leading bits drawn, the rest fair coins not yet tossed).
The fast path bounds L with floating point: zᵀΛz = (b/2)(r(1 + ρ) − 1) with ρ only known to lie in [−τ, τ], r
from Z's box with rigorous γ_n error terms, logarithms with a relative margin of 2^-30; it decides unless log V
falls inside the interval (probability about its width, O(b·τ + m·u)). Otherwise 64 more bits of every Z_i and
of V are tossed and L is bounded from exact rationals: y's box by integer arithmetic on the floats' mantissas,
zᵀΛz = α − β·(Ny)ᵀA(Ny)/‖y‖² from that box, logarithms by mpmath's interval arithmetic
(:func:`dpstats._rounding.enclose`) — repeated until decided. Every decision depends only on bits already
tossed, so the untossed bits stay uniform and later refinement is exact.

Output. The exact z rounded to the nearest multiple of 2^-OUTPUT_BITS, coordinate by coordinate — from the
floating-point box when it does not straddle a rounding boundary, else from exact rational bounds of y_i/‖y‖
after refinement. The release is a deterministic function of the exact draw.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._rounding import UNIT_ROUNDOFF, enclose, float_up, gamma
from ..noise.normal import FAST_BITS, LazyReals, lazy_normals, uniform_bits

__all__ = ["OUTPUT_BITS", "Diagonal", "Subspace", "acg_b", "draw"]

#: Output grid of the Bingham samplers: draws are rounded to multiples of 2^-OUTPUT_BITS.
OUTPUT_BITS = 32
_REFINE_BITS = 64
_SLACK = 2.0**-20  # relative slack on every float error bound (covers the rounding of the bound itself)
_LOG_MARGIN = 2.0**-30  # relative margin on NumPy's log (a few ulps at most)
_TAU_MAX = 0.5  # beyond it the certified envelope is too loose to be useful


def acg_b(a: np.ndarray) -> float:
    """The root b in [1, m] of Σ 1/(b + 2a_i) = 1 (a_i >= 0, min a = 0), which minimises M (Kent et al. 2018).

    Newton's method from b = 1, where the sum is >= 1: the sum is convex and decreasing in b, so the iterates
    increase to the root without overshooting. Any b > 0 gives a valid envelope; the root only makes it tight."""
    b = 1.0
    for _ in range(100):
        terms = 1.0 / (b + 2.0 * a)
        excess = float(terms.sum()) - 1.0
        if excess <= 1e-13:
            break
        b += excess / float((terms * terms).sum())
    return min(b, float(a.size))


def _unit(x: np.ndarray) -> float:
    """u, the unit roundoff of x's floating-point type (2^-53 for float64, 2^-64 for x86's long double)."""
    return float(np.finfo(x.dtype).eps) / 2.0


def _gamma(count: int, unit: float) -> float:
    """γ_n for the unit roundoff ``unit`` (:func:`dpstats._rounding.gamma` for float64)."""
    return count * unit / (1.0 - count * unit)


def _to_ints(values: np.ndarray) -> tuple[np.ndarray, int]:
    """Python ints I and an exponent e with ``values == I·2^e`` exactly (object array)."""
    mantissa, exponent = np.frexp(values)
    ints = (mantissa * 2.0**53).astype(np.int64)
    exponent = exponent.astype(np.int64) - 53
    base = int(exponent[ints != 0].min()) if np.any(ints != 0) else 0
    return ints.astype(object) << np.where(ints != 0, exponent - base, 0).astype(object), base


def _square_box(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise exact bounds of x² for x in [lo, hi] (object arrays of ints)."""
    lo2, hi2 = lo * lo, hi * hi
    straddles = (lo <= 0) & (hi >= 0)
    return np.where(straddles, 0, np.minimum(lo2, hi2)), np.maximum(lo2, hi2)


def _matvec_box(M: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact bounds of M·x for x in the box [lo, hi] (M and the ends: object arrays of ints)."""
    positive, negative = np.where(M > 0, M, 0), np.where(M < 0, M, 0)
    return positive.dot(lo) + negative.dot(hi), positive.dot(hi) + negative.dot(lo)


def _ratio_box(num: tuple, den: tuple) -> tuple[Fraction, Fraction]:
    """Bounds of a/c for a in [num], c in [den] with den > 0."""
    lo = num[0] / (den[1] if num[0] >= 0 else den[0])
    hi = num[1] / (den[0] if num[1] >= 0 else den[1])
    return lo, hi


class _Target:
    """Shared by both targets: the envelope from eigenpairs (μ, E) of the parameter, and the acceptance bounds."""

    def __init__(self, beta: float, mu: np.ndarray, m: int):
        if not beta >= 0.0:
            raise ValueError(f"beta must be >= 0; got {beta!r}")
        self.beta, self.m = float(beta), m
        self.alpha = self.beta * float(mu.max()) if self.beta else 0.0
        a = np.maximum(self.alpha - self.beta * mu, 0.0)
        self.b = acg_b(a)
        self.sigma = 1.0 / np.sqrt(1.0 + 2.0 * a / self.b)

    def finish(self, tau: float) -> None:
        """Store τ and log M′ (rounded up: any constant above the supremum is a valid envelope)."""
        tau *= 1.0 + _SLACK
        if not tau < _TAU_MAX:
            raise FloatingPointError(
                "the Bingham envelope cannot be certified in double precision: the parameter is too concentrated "
                "(its eigenvalue spread times the dimension is beyond about 1e12)"
            )
        m, b = self.m, self.b
        terms = (-(m - b) / 2.0, (m / 2.0) * math.log(m / b), -(m / 2.0) * math.log1p(-tau))
        self.tau = tau
        self.log_m = math.fsum(terms) + 2.0**-30 * (sum(abs(t) for t in terms) + 1.0)

    def exact_log_ratio(self, y_box, z2: tuple, shift: int, bits: int) -> tuple[Fraction, Fraction] | None:
        """Rigorous bounds of L from exact integer boxes of Z's squared norm and of y = GZ (y's unit 2^shift times
        Z's)."""
        y2 = tuple(Fraction(int(sum(s))) for s in _square_box(*y_box))
        if y2[0] == 0:
            return None  # y's box holds 0: no bound at this precision, refine
        q_lo, q_hi = _ratio_box(self.quadratic_box(*y_box), y2)  # (Ny)ᵀA(Ny)/‖y‖², scale-free
        r_lo, r_hi = (r * Fraction(2) ** (-2 * shift) for r in _ratio_box(tuple(Fraction(s) for s in z2), y2))
        half_m, alpha, beta = Fraction(self.m, 2), Fraction(self.alpha), Fraction(self.beta)
        log_lo = enclose("log1p", r_lo - 1, bits)[0]
        log_hi = enclose("log1p", r_hi - 1, bits)[1]
        log_m = Fraction(self.log_m)
        return (-alpha + beta * q_lo + half_m * log_lo - log_m, -alpha + beta * q_hi + half_m * log_hi - log_m)


class Diagonal(_Target):
    """Target ∝ exp(β Σ λ_i z_i²); proposal y = σ∘Z (G = diag(σ), exactly diagonal)."""

    def __init__(self, lam: np.ndarray, beta: float = 1.0):
        super().__init__(beta, lam, lam.size)
        self.lam = lam
        self.finish(self._certify())
        self._exact = None

    def _certify(self) -> float:
        """τ = max_i |F_ii| exactly, F_ii = (1 + 2(α − βλ_i)/b)σ_i² − 1 (F = GᵀΩG − I is diagonal), rounded up."""
        alpha, beta, b = Fraction(self.alpha), Fraction(self.beta), Fraction(self.b)
        worst = max(
            abs((1 + 2 * (alpha - beta * Fraction(lam)) / b) * Fraction(sigma) ** 2 - 1)
            for lam, sigma in zip(self.lam.tolist(), self.sigma.tolist(), strict=True)
        )
        return float_up(worst)

    def propose(self, z: np.ndarray, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """y = σ∘Z in z's precision and a bound of its error from Z's box and the rounding."""
        y = z * self.sigma.astype(z.dtype)
        return y, (self.sigma * radius + np.abs(y) * _unit(z)) * (1.0 + _SLACK)

    def y_box(self, lo: np.ndarray, hi: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], int]:
        sigma, shift = _to_ints(self.sigma)
        return (sigma * lo, sigma * hi), shift

    def quadratic_box(self, lo: np.ndarray, hi: np.ndarray) -> tuple[Fraction, Fraction]:
        if self._exact is None:
            self._exact = _to_ints(self.lam)
        lam, shift = self._exact
        sq_lo, sq_hi = _square_box(lo, hi)
        ends = (np.where(lam >= 0, lam * sq_lo, lam * sq_hi), np.where(lam >= 0, lam * sq_hi, lam * sq_lo))
        return tuple(Fraction(int(sum(e))) * Fraction(2) ** shift for e in ends)


class Subspace(_Target):
    """Target ∝ exp(β (Nz)ᵀA(Nz)); proposal y = GZ with G = E·diag(σ) from float eigenpairs (μ, E) of NᵀAN."""

    def __init__(self, N: np.ndarray, A: np.ndarray, beta: float, mu: np.ndarray, E: np.ndarray):
        super().__init__(beta, mu, N.shape[1])
        self.N, self.A = N, A
        self.G = E * self.sigma
        self.finish(self._certify() if self.m > 1 else 0.0)  # m = 1: draw() needs no envelope
        self._exact = {}
        self._cast = {}  # dtype -> (G, |G|ᵀ) in that precision, for propose()

    def _certify(self) -> float:
        """τ >= ‖GᵀΩG − I‖₂ with Ω = I + (2/b)(αI − β NᵀAN), from float products and their error bounds.

        ‖fl(XY) − XY‖_F <= γ_k ‖X‖_F ‖Y‖_F (k the inner dimension). With P = fl(NG), T = fl(AP), S = fl(PᵀT),
        D = P − NG: ‖D‖_F <= γ_m‖N‖‖G‖, ‖S − PᵀAP‖_F <= γ_d‖P‖(‖T‖ + ‖A‖‖P‖) and
        ‖PᵀAP − (NG)ᵀA(NG)‖_F <= ‖A‖(2‖D‖‖P‖ + ‖D‖²). F is formed as c₁·fl(GᵀG) − c₂·S − I with c₁ = 1 + 2α/b,
        c₂ = 2β/b; the scalars' and the combination's roundings add at most 8u(|c₁|‖GᵀG‖ + c₂‖S‖ + √m).
        """
        N, A, G, m = self.N, self.A, self.G, self.m
        d = N.shape[0]
        fro = np.linalg.norm
        P = N @ G
        T = A @ P
        S = P.T @ T
        H = G.T @ G
        c1, c2 = 1.0 + 2.0 * self.alpha / self.b, 2.0 * self.beta / self.b
        F = c1 * (H + H.T) / 2.0 - c2 * (S + S.T) / 2.0 - np.eye(m)  # zᵀFz only sees F's symmetric part
        n_n, n_g, n_a, n_p, n_t, n_h, n_s = (fro(x) for x in (N, G, A, P, T, H, S))
        e_d = gamma(m) * n_n * n_g
        e_s = gamma(d) * n_p * (n_t + n_a * n_p) + n_a * (2.0 * e_d * n_p + e_d * e_d)
        e_h = gamma(m) * n_g * n_g
        rounding = 12.0 * UNIT_ROUNDOFF * (abs(c1) * (n_h + e_h) + c2 * (n_s + e_s) + math.sqrt(m))
        return float(fro(F)) + abs(c1) * e_h + c2 * e_s + rounding

    def propose(self, z: np.ndarray, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """y = GZ (rows) in z's precision and a bound of its error, γ_m|G||Ẑ| + |G|·radius."""
        cast = self._cast.get(z.dtype)
        if cast is None:
            G = self.G.astype(z.dtype)
            cast = self._cast[z.dtype] = (G, np.abs(G).T)
        G, abs_gt = cast
        error = (_gamma(self.m, _unit(z)) * np.abs(z) + radius) @ abs_gt
        return z @ G.T, error * (1.0 + _SLACK)

    def _integers(self, name: str) -> tuple[np.ndarray, int]:
        if name not in self._exact:
            self._exact[name] = _to_ints(getattr(self, name))
        return self._exact[name]

    def y_box(self, lo: np.ndarray, hi: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray], int]:
        G, shift = self._integers("G")
        return _matvec_box(G, lo, hi), shift

    def quadratic_box(self, lo: np.ndarray, hi: np.ndarray) -> tuple[Fraction, Fraction]:
        """Bounds of (Ny)ᵀA(Ny) for y in [lo, hi]: with w = Ny in [w_lo, w_hi], c = w_lo + w_hi, r = w_hi − w_lo,
        4·wᵀAw = cᵀAc + δᵀ(A + Aᵀ)c + δᵀAδ for some |δ| <= r."""
        (N, n_shift), (A, a_shift) = self._integers("N"), self._integers("A")
        w_lo, w_hi = _matvec_box(N, lo, hi)
        c, r = w_lo + w_hi, w_hi - w_lo
        Ac = A.dot(c)
        centre = int(c.dot(Ac))
        spread = int(r.dot(np.abs(Ac + A.T.dot(c)))) + int(r.dot(np.abs(A).dot(r)))
        scale = Fraction(2) ** (a_shift + 2 * n_shift) / 4
        return Fraction(centre - spread) * scale, Fraction(centre + spread) * scale


def draw(target: _Target, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` independent exact draws of ``target``, rounded to the 2^-OUTPUT_BITS grid, shape (size, m).

    Proposals are drawn in batches and decided in order; the accepted ones of an i.i.d. sequence are i.i.d. draws
    of the target, so keeping the first ``size`` is exact."""
    m, out, kept = target.m, [], 0
    if m == 1:  # S^0 = {−1, 1}: the density is the same at both points
        return (2.0 * rng.integers(0, 2, size=(size, 1)) - 1.0).astype(float)
    while kept < size:
        batch = max(8, 2 * (size - kept))
        Z = lazy_normals(batch * m, rng)
        v = rng.integers(0, 1 << FAST_BITS, size=batch, dtype=np.int64)
        z, radius = (x.reshape(batch, m) for x in Z.approximate())
        y, error = target.propose(z, radius)
        accept = _fast_decision(target, z, radius, y, error, v)
        refined = {}  # proposals decided on more bits: their refined Z is the draw (and is what gets rounded)
        for i in np.flatnonzero(accept < 0):
            refined[i] = Z.take(slice(i * m, (i + 1) * m))
            accept[i] = _exact_decision(target, refined[i], int(v[i]), rng)
        chosen = np.flatnonzero(accept == 1)[: size - kept]
        grid, decided = _grid_fast(y[chosen], error[chosen])
        for row in np.flatnonzero(~decided | np.isin(chosen, list(refined))):
            i = chosen[row]
            grid[row] = _grid_slow(target, refined.get(i) or Z.take(slice(i * m, (i + 1) * m)), rng)
        out.append(grid)
        kept += len(grid)
    return np.concatenate(out)[:size]


def _norm2_box(x: np.ndarray, radius: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ‖x′‖² over |x′ − x| <= radius (rows), floating point rounded outwards."""
    rounding = _gamma(x.shape[-1] + 3, _unit(x))
    hi = np.sum((np.abs(x) + radius) ** 2, axis=-1) * (1.0 + rounding)
    lo = np.sum(np.maximum(np.abs(x) - radius, 0.0) ** 2, axis=-1) * (1.0 - rounding)
    return lo, hi


def _fast_decision(target, z, radius, y, error, v) -> np.ndarray:
    """1/0 where floating point decides log V < L (accept/reject), −1 where it cannot (module docstring)."""
    z2_lo, z2_hi = _norm2_box(z, radius)
    y2_lo, y2_hi = _norm2_box(y, error)
    with np.errstate(divide="ignore"):
        r_lo, r_hi = z2_lo / y2_hi * (1.0 - 4 * UNIT_ROUNDOFF), z2_hi / y2_lo * (1.0 + 4 * UNIT_ROUNDOFF)
        half_b, half_m, tau = target.b / 2.0, target.m / 2.0, target.tau
        quad_hi, quad_lo = half_b * (r_hi * (1.0 + tau) - 1.0), half_b * (r_lo * (1.0 - tau) - 1.0)
        log_lo, log_hi = np.log(r_lo), np.log(r_hi)
        margin = _LOG_MARGIN * (half_b * r_hi + half_b + half_m * np.abs(log_hi) + half_m * np.abs(log_lo))
        margin += _LOG_MARGIN * abs(target.log_m) + 2.0**-60
        l_lo = -quad_hi + half_m * log_lo - target.log_m - margin
        l_hi = -quad_lo + half_m * log_hi - target.log_m + margin
        unit = 2.0**-FAST_BITS
        v_hi = np.log((v + 1) * unit) * (1.0 - _LOG_MARGIN) + 2.0**-60
        v_lo = np.log(v * unit) * (1.0 + _LOG_MARGIN) - 2.0**-60
    sure = np.isfinite(l_lo) & np.isfinite(l_hi) & (y2_lo > 0)
    accept, reject = sure & (v_hi < l_lo), sure & (v_lo >= l_hi)
    return np.where(accept, 1, np.where(reject, 0, -1))


def _exact_decision(target, Z: LazyReals, v: int, rng) -> bool:
    """Refine Z and V until exact bounds of L(Z) separate log V from it (module docstring)."""
    bits = FAST_BITS
    while True:
        Z.refine(_REFINE_BITS, rng)
        v = (v << _REFINE_BITS) | int(uniform_bits(_REFINE_BITS, 1, rng)[0])
        bits += _REFINE_BITS
        lo, hi = Z.box()
        y_box, shift = target.y_box(lo, hi)
        z2 = tuple(int(sum(s)) for s in _square_box(lo, hi))  # ‖Z‖²·4^exponent
        bounds = target.exact_log_ratio(y_box, z2, shift, bits + 32)
        if bounds is None:
            continue
        l_lo, l_hi = bounds
        unit = Fraction(1, 1 << bits)
        if enclose("log1p", (v + 1) * unit - 1, bits + 32)[1] < l_lo:
            return True
        if v and enclose("log1p", v * unit - 1, bits + 32)[0] >= l_hi:
            return False


def _grid_fast(y: np.ndarray, error: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows z = y/‖y‖ rounded to the nearest multiple of 2^-OUTPUT_BITS from the floating-point boxes of y, and
    which rows that decides (no coordinate's box straddles a rounding boundary)."""
    scale, rounding = 2.0**OUTPUT_BITS, 8.0 * _unit(y)
    y2_lo, y2_hi = _norm2_box(y, error)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_lo, n_hi = (np.sqrt(x)[:, None] * f for x, f in ((y2_lo, 1.0 - rounding), (y2_hi, 1.0 + rounding)))
        low, high = y - error, y + error
        z_lo = np.where(low >= 0, low / n_hi, low / n_lo)
        z_hi = np.where(high >= 0, high / n_lo, high / n_hi)
        k_lo = np.floor((z_lo - np.abs(z_lo) * rounding) * scale + 0.5)
        k_hi = np.floor((z_hi + np.abs(z_hi) * rounding) * scale + 0.5)
    return (k_lo / scale).astype(float), np.all(k_lo == k_hi, axis=1)


def _grid_slow(target: _Target, Z: LazyReals, rng) -> np.ndarray:
    """The accepted z = y/‖y‖ on the grid when double precision leaves a coordinate undecided: first from y in
    long double (2^-64 on x86, where its boxes are about 2000 times narrower), else from exact rational bounds of
    every y_i/‖y‖, refining Z until each coordinate's bounds round alike."""
    y, error = target.propose(*(x[None] for x in Z.approximate(np.longdouble)))
    grid, decided = _grid_fast(y, error)
    if decided[0]:
        return grid[0]
    while True:
        Z.refine(_REFINE_BITS, rng)
        (y_lo, y_hi), _ = target.y_box(*Z.box())
        y2 = [int(sum(s)) for s in _square_box(y_lo, y_hi)]
        extra = 2 * OUTPUT_BITS + _REFINE_BITS
        norm = (math.isqrt(y2[0] << (2 * extra)), math.isqrt(y2[1] << (2 * extra)) + 1)  # ‖y‖·2^extra bounds
        if norm[0] == 0:
            continue
        k = [
            tuple(_nearest(end << extra, norm, end < 0 if i else end >= 0) for i, end in enumerate(pair))
            for pair in zip(y_lo, y_hi, strict=True)
        ]
        if all(lo == hi for lo, hi in k):
            return np.array([lo for lo, _ in k], dtype=float) / 2.0**OUTPUT_BITS


def _nearest(numerator: int, norm: tuple[int, int], larger_norm: bool) -> int:
    """round(numerator/n·2^OUTPUT_BITS) (halves up) for the end of norm that makes the ratio extreme in the
    direction wanted: the larger norm shrinks a positive end (used for a lower end >= 0 or an upper end < 0)."""
    den = norm[1] if larger_norm else norm[0]
    return (2 * numerator * (1 << OUTPUT_BITS) + den) // (2 * den)
