"""The exact Bingham sampler (dpstats._bingham_exact) and its exact normals (dpstats.noise.normal).

Distributional tests are χ² goodness-of-fit tests against probabilities from closed forms (scipy.special.ndtr,
Bessel-function marginals integrated with scipy.integrate.quad), each at a significance level fixed in advance
(ALPHA = 1e-3, as in tests/test_bingham.py); the seeds are fixed, so every outcome is deterministic. The slow paths
(exact rational decisions, taken when floating point cannot decide) are forced by shrinking FAST_BITS, the bits
of every lazy number tossed before the first floating-point decision, and counting wrappers that call through show
that they ran. The certified constants (the envelope's τ and log M′, the basis excess θ, the scale ε/(2Δq)) are
checked against exact rational arithmetic (fractions.Fraction) on the very floats the sampler uses.

The "exact" probabilities are doubles from closed forms with relative errors of order 1e-13 at worst, far below the
relative deviations of order 1/√count >= 1e-3 that the cells resolve.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
import scipy.linalg
from _chisquare import merged_chisquare
from scipy import integrate, optimize, special, stats
from test_bingham import ALPHA, LAM, _chisquare_pvalue, _sphere_first_coordinate_probs

import dpstats.decomposition._bingham_exact as bx
import dpstats.noise.normal as normal
from dpstats.decomposition._bingham import _basis_excess, bingham_scale, sample_vector_bingham

#: one worker runs this module (its module-scoped fixture is computed once; pytest-xdist's loadgroup)
pytestmark = pytest.mark.xdist_group("bingham_exact")

Z_ALPHA = stats.norm.isf(ALPHA / 2)  # two-sided z threshold of the moment tests (3.29)
NARROW = 2.0**-8  # half-width of the narrow central cell
THETA = math.fsum(math.exp(-j * j / 2) for j in range(40))  # Θ = Σ_{j>=0} e^(−j²/2): P(integer part 0) = 1/Θ
CONCENTRATED = np.array([0.0, -200.0, -5000.0])


# ----------------------------------------------------------------------------- helpers


def _normal_edges(narrow: bool = True) -> np.ndarray:
    """About 40 cells: the narrow central cell (−2^-8, 2^-8) (if ``narrow``), cells of probability about 1/30 out to
    ±1.9 with edges rounded to multiples of 1/8, the integer-part boundaries ±1, ±2, ±3 of the normals'
    construction, cells out to ±4 and the tails beyond ±4. Edges on multiples of 2^-FAST_BITS are never straddled
    by a lazy normal's box, so the box centre's cell is the exact number's cell: all of them for FAST_BITS >= 8,
    all but ±2^-8 for FAST_BITS = 3."""
    quantiles = {round(stats.norm.ppf(0.5 + j / 30) * 8) / 8 for j in range(1, 15)}
    positive = sorted(quantiles | {1.0, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 4.0} | ({NARROW} if narrow else set()))
    return np.array([-x for x in positive[::-1]] + positive)


def _normal_cell_probs(edges: np.ndarray) -> np.ndarray:
    """Exact N(0, 1) probabilities of (−∞, e_1), (e_1, e_2), …, (e_k, ∞): from Φ left of 0 and from the survival
    function Φ(−x) right of it, each accurate to a relative 1e-15 in its own tail."""
    a, b = np.r_[-np.inf, edges], np.r_[edges, np.inf]
    return np.where(b <= 0, special.ndtr(b) - special.ndtr(a), special.ndtr(-a) - special.ndtr(-b))


def _normal_pvalue(x: np.ndarray, edges: np.ndarray | None = None) -> float:
    edges = _normal_edges() if edges is None else edges
    counts = np.bincount(np.searchsorted(edges, x, side="right"), minlength=edges.size + 1)
    return merged_chisquare(counts, _normal_cell_probs(edges))


def _marginal_probs(lam: np.ndarray, i: int) -> np.ndarray:
    """Exact P(|x_i| in bin) on S² (test_bingham's helper with λ_i first). That helper is only right when its
    second λ is >= its third (it multiplies i0e(z) by e^z, which is I0(z) only for z >= 0), so the other two are
    passed in decreasing order; the marginal is symmetric in them."""
    others = np.sort(np.delete(lam, i))[::-1]
    return _sphere_first_coordinate_probs(np.r_[lam[i], others])


def _sphere_moments(lam: np.ndarray, i: int) -> tuple[float, float]:
    """E x_i² and E x_i⁴ on S² for density ∝ exp(Σ λ_j x_j²): with t = x_i (Archimedes) the marginal density is
    ∝ exp(λ_i t² + s·λ_hi)·i0e(s(λ_hi − λ_lo)/2), s = 1 − t², λ_hi >= λ_lo the other two (shifted by max λ so
    nothing overflows); integrated by quad with breakpoints where the concentrated densities bend."""
    others = np.delete(lam, i)
    hi, lo, top = others.max(), others.min(), lam.max()

    def density(t):
        s = 1.0 - t * t
        return np.exp(lam[i] * t * t + s * hi - top) * special.i0e(s * (hi - lo) / 2.0)

    options = {"epsabs": 0.0, "epsrel": 1e-12, "limit": 200, "points": [0.01, 0.05, 0.2, 0.9, 0.99, 0.999]}
    mass = integrate.quad(density, 0.0, 1.0, **options)[0]
    m2 = integrate.quad(lambda t: t**2 * density(t), 0.0, 1.0, **options)[0] / mass
    m4 = integrate.quad(lambda t: t**4 * density(t), 0.0, 1.0, **options)[0] / mass
    return m2, m4


def _assert_on_grid(x: np.ndarray) -> None:
    """Every coordinate a multiple of 2^-32, and each row within 2^-33·√q of the unit sphere: each coordinate is the
    exact unit vector's rounded to the nearest multiple (error <= 2^-33), plus the float norm's own rounding."""
    scaled = np.ldexp(x, bx.OUTPUT_BITS)
    assert np.array_equal(scaled, np.rint(scaled))
    q = x.shape[-1]
    bound = 2.0 ** -(bx.OUTPUT_BITS + 1) * math.sqrt(q) + 4 * q * 2.0**-53
    assert np.max(np.abs(np.linalg.norm(x, axis=-1) - 1.0)) <= bound


def _force_slow(monkeypatch, normal_bits: int = 3, bingham_bits: int = 3) -> None:
    """FAST_BITS of both modules (the Bingham module imports it by name)."""
    monkeypatch.setattr(normal, "FAST_BITS", normal_bits)
    monkeypatch.setattr(bx, "FAST_BITS", bingham_bits)


def _count_calls(monkeypatch, module, name: str) -> list[int]:
    """Replace ``module.name`` by a wrapper that counts its calls and calls the real function."""
    real, calls = getattr(module, name), [0]

    def counting(*args, **kwargs):
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return calls


def _subspace_basis() -> np.ndarray:
    """N: a 6 × 3 float matrix with orthonormal columns (to rounding), from the QR of a seeded Gaussian."""
    return np.linalg.qr(np.random.default_rng(30).standard_normal((6, 3)))[0]


def _subspace_target(lam: np.ndarray, beta: float = 1.0) -> bx.Subspace:
    """A = N diag(λ) Nᵀ + 0.3 (I − NNᵀ), so that NᵀAN = diag(λ) up to rounding; (μ, E) from eigh(NᵀAN)."""
    N = _subspace_basis()
    A = N @ np.diag(lam) @ N.T + 0.3 * (np.eye(6) - N @ N.T)
    mu, E = scipy.linalg.eigh(N.T @ A @ N)
    return bx.Subspace(N, A, beta, mu, E)


def _fractions(a) -> np.ndarray:
    return np.vectorize(Fraction, otypes=[object])(np.asarray(a, dtype=float))


# ----------------------------------------------------------------------------- 1, 2: exact normals


def test_lazy_normals_match_exact_normal_cells():
    """10^6 exact normals (box centres: exact cells, see _normal_edges) against Φ on 41 cells. The narrow central
    cell (−2^-8, 2^-8) expects about 3100 draws and the integer part 0, (−1, 1), about 683,000, so a sampler with
    the mass of either off by a factor 2 is far outside the test: checked below on the same draws with that cell
    thinned or doubled."""
    rng = np.random.default_rng(31)
    Z = normal.lazy_normals(10**6, rng)
    assert np.all(Z.exponent >= normal.FAST_BITS) and np.all((Z.exponent - normal.FAST_BITS) % 64 == 0)
    x = Z.approximate()[0]
    assert x.shape == (10**6,) and np.all(np.isfinite(x))
    edges = _normal_edges()
    assert _normal_pvalue(x, edges) > ALPHA
    central = np.flatnonzero(np.abs(x) < NARROW)
    expected = 10**6 * _normal_cell_probs(edges)[edges.size // 2]
    assert abs(central.size - expected) < Z_ALPHA * math.sqrt(expected)
    # power: a cell's mass halved (every second draw in it dropped) or doubled (each repeated)
    for cell in (central, np.flatnonzero(np.abs(x) < 1.0)):
        assert _normal_pvalue(np.delete(x, cell[::2]), edges) < ALPHA
        assert _normal_pvalue(np.concatenate([x, x[cell]]), edges) < ALPHA


@pytest.fixture(scope="module")
def slow_normals():
    """50,000 normals drawn with FAST_BITS = 3 (u, V and the integer part's uniform known to 3 bits before the first
    floating-point test), and how often the exact tests ran."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(normal, "FAST_BITS", 3)
        accepts = _count_calls(patch, normal, "_accept_exactly")
        integers = _count_calls(patch, normal, "_integer_part_exactly")
        Z = normal.lazy_normals(50_000, np.random.default_rng(32))
    return Z, accepts[0], integers[0]


def test_lazy_normals_forced_slow_path(slow_normals):
    """With FAST_BITS = 3 the exact tests run often: for the integer part 0 (probability 1/Θ = 0.57) and any 3 bits
    of u, V's 3 bits cannot settle V < exp(−u²/2) for at least one of its 8 boxes (the one holding the lowest value
    exp(−u²/2) takes on u's box, whose interval it meets), so each of the >= n proposals goes to _accept_exactly
    with probability >= 1/(8Θ): mean >= 3565, sd < 60, and 0.9 of it is 6 sd below. The draws, exact at the
    resolution of their 1/8-wide boxes, pass the χ² test on the cells whose edges are multiples of 1/8."""
    Z, accepts, integers = slow_normals
    n = Z.sign.size
    assert np.all((Z.exponent - 3) % 64 == 0) and np.any(Z.exponent > 3)  # decided exactly: kept their bits
    assert accepts >= 0.9 * n / (8 * THETA)
    assert integers > 0
    assert _normal_pvalue(Z.approximate()[0], _normal_edges(narrow=False)) > ALPHA


def test_lazy_normals_refinement_after_slow_path(slow_normals):
    """Refining every one of those numbers by 64 bits keeps it in its box and its 64 new bits are uniform; and the
    refined numbers must be exact normals at every resolution (the module's claim: untossed bits are uniform, so
    later refinement is exact): the χ² test with the narrow cell (−2^-8, 2^-8) and on cells of width 1/16 that
    split every 1/8-wide box in two."""
    Z = slow_normals[0].take(slice(None))
    rng = np.random.default_rng(132)
    lo, hi = Z.box()
    old_mag, old_exponent = Z.mag.astype(object), Z.exponent.copy()
    Z.refine(64, rng)
    assert np.all(Z.exponent == old_exponent + 64)
    new_lo, new_hi = Z.box()
    assert np.all(new_lo >= lo * 2**64) and np.all(new_hi <= hi * 2**64) and np.all(new_lo < new_hi)
    fresh = Z.mag.astype(object) - old_mag * 2**64
    assert all(0 <= f < 2**64 for f in fresh)
    top = np.array([int(f) >> 60 for f in fresh])  # the 4 leading new bits: 16 equally likely cells
    assert stats.chisquare(np.bincount(top, minlength=16)).pvalue > ALPHA
    x = Z.approximate()[0]
    assert _normal_pvalue(x) > ALPHA
    assert _normal_pvalue(x, np.arange(-48, 49) / 16.0) > ALPHA


def test_lazy_normals_are_exact_inside_their_boxes_when_every_acceptance_is_slow(monkeypatch):
    """The same claim where it is plain to see: FAST_BITS = 0, so every number's box is its whole cell [w, w + 1)
    and every acceptance V < exp(−u(2w + u)/2) is decided by _accept_exactly from u's later bits. Refined by 64
    bits, 2000 numbers must be N(0, 1) on cells of width 1/4; uniform inside their unit cells they are not (within
    [0, 1), P(t < 1/2) is 0.561 under N(0, 1), against 0.5; the χ² statistic's excess is about 20 per 1000 draws)."""
    monkeypatch.setattr(normal, "FAST_BITS", 0)
    calls = _count_calls(monkeypatch, normal, "_accept_exactly")
    rng = np.random.default_rng(33)
    Z = normal.lazy_normals(2000, rng)
    assert np.all(Z.exponent >= 64) and calls[0] >= 2000  # every proposal decided exactly, on its own bits
    assert _normal_pvalue(Z.approximate()[0], np.arange(-4, 5) * 1.0) > ALPHA  # the unit cells' masses are right
    Z.refine(64, rng)
    assert _normal_pvalue(Z.approximate()[0], np.arange(-16, 17) / 4.0) > ALPHA


# ----------------------------------------------------------------------------- 3, 4, 5: Bingham on S¹ and S²


def test_bingham_circle_matches_exact_angle_density():
    """q = 2, λ = (2.5, −1): x = (cos φ, sin φ) has density ∝ exp(λ1 cos²φ + λ2 sin²φ) in φ; φ mod π on 36 cells
    against quad. Rounding x to 2^-32 moves φ by about 2^-32, which crosses an edge for ~0.02 of 10^6 draws."""
    lam = np.array([2.5, -1.0])
    x = bx.draw(bx.Diagonal(lam), 10**6, np.random.default_rng(34))
    _assert_on_grid(x)
    phi = np.mod(np.arctan2(x[:, 1], x[:, 0]), np.pi)
    edges = np.linspace(0.0, np.pi, 37)
    p = np.array(
        [
            integrate.quad(lambda f: np.exp(lam[0] * np.cos(f) ** 2 + lam[1] * np.sin(f) ** 2), a, b, epsabs=1e-13)[0]
            for a, b in zip(edges[:-1], edges[1:], strict=True)
        ]
    )
    counts = np.histogram(phi, edges)[0]
    assert counts.sum() == 10**6
    assert stats.chisquare(counts, p / p.sum() * 10**6).pvalue > ALPHA


@pytest.mark.parametrize("order", [(0, 1, 2), (1, 2, 0)])
def test_bingham_sphere_matches_exact_marginals(order):
    """q = 3, λ = LAM and LAM permuted (so the largest λ sits on the last axis): 10^6 draws, the exact marginal of
    every |x_i| on 10 cells."""
    lam = LAM[list(order)]
    x = bx.draw(bx.Diagonal(lam), 10**6, np.random.default_rng([35, *order]))
    _assert_on_grid(x)
    for i in range(3):
        assert _chisquare_pvalue(np.abs(x[:, i]), _marginal_probs(lam, i)) > ALPHA


def test_bingham_forced_slow_paths(monkeypatch):
    """FAST_BITS = 3 in both modules: Z's coordinates are known to 1/8 and V to 3 bits, so many acceptances are left
    to _exact_decision, and an output coordinate (box width ~1e-2 against a grid of 2^-32) can be rounded from the
    floating-point box only if its normals were refined by their own exact acceptances: nearly every release goes
    through _grid_slow. 5,000 draws on S² (each rounded by exact rational
    arithmetic, most accepted by it: about 3 ms a draw) still match the exact marginals."""
    _force_slow(monkeypatch)
    decisions = _count_calls(monkeypatch, bx, "_exact_decision")
    grids = _count_calls(monkeypatch, bx, "_grid_slow")
    normals = _count_calls(monkeypatch, normal, "_accept_exactly")
    n = 5_000
    x = bx.draw(bx.Diagonal(LAM), n, np.random.default_rng(36))
    _assert_on_grid(x)
    assert grids[0] >= 0.9 * n  # all but draws whose normals were each refined by their own exact acceptance
    assert decisions[0] >= n / 2  # about 1.5 n seen; the point is that the exact decision ran thousands of times
    assert normals[0] >= n / 6  # each of >= 3n proposal normals is slow with probability >= 1/(8Θ) = 0.071
    for i in range(3):
        assert _chisquare_pvalue(np.abs(x[:, i]), _marginal_probs(LAM, i)) > ALPHA


def test_bingham_release_is_the_accepted_draw(monkeypatch):
    """The draw released is the one whose exact bits decided the acceptance. With the Bingham FAST_BITS = 0 (V has
    no leading bits, so floating point never decides) every proposal goes to _exact_decision, which tosses 64 or
    more further bits of Z; the kept draws are the first accepted ones of each batch (draw's docstring), so the
    i-th release must be the i-th kept proposal's direction y/‖y‖, computed from the box its decision ended with
    (2^-67 wide or less), rounded to the 2^-32 grid: within 2^-33 of it, plus float rounding. Spies (calling through) on
    lazy_normals mark the batches and record each decision with its refined Z."""
    _force_slow(monkeypatch, normal_bits=3, bingham_bits=0)
    events = []
    real_lazy, real_decision = bx.lazy_normals, bx._exact_decision

    def lazy_spy(n, rng):
        events.append(("batch", n))
        return real_lazy(n, rng)

    def decision_spy(target, Z, v, rng):
        accepted = real_decision(target, Z, v, rng)
        events.append(("decision", accepted, Z.take(slice(None))))  # Z as refined by the decision
        return accepted

    monkeypatch.setattr(bx, "lazy_normals", lazy_spy)
    monkeypatch.setattr(bx, "_exact_decision", decision_spy)
    size, target = 300, bx.Diagonal(LAM)
    x = bx.draw(target, size, np.random.default_rng(37))
    batches = []
    for event in events:
        if event[0] == "batch":
            batches.append((event[1], []))
        else:
            batches[-1][1].append(event)
    kept = []
    for n_normals, decided in batches:
        assert len(decided) == n_normals // target.m  # every proposal was decided exactly
        kept += [Z for _, accepted, Z in decided if accepted][: size - len(kept)]
    assert len(kept) == size
    y = np.array([target.sigma * Z.approximate()[0] for Z in kept])
    direction = y / np.linalg.norm(y, axis=1, keepdims=True)
    miss = np.max(np.abs(x - direction), axis=1)
    assert np.max(miss) <= 2.0**-33 + 1e-15, (
        f"{np.sum(miss > 2.0**-33 + 1e-15)} of {size} releases differ from their accepted draw, by up to "
        f"{np.max(miss):.2g}"
    )


# ----------------------------------------------------------------------------- 6: Subspace targets


def test_subspace_matches_exact_marginals():
    """Target ∝ exp((Nz)ᵀA(Nz)) with NᵀAN = diag(LAM) (up to rounding: a relative 1e-15 change of the density,
    invisible here): 200,000 draws, the exact marginal of every |z_i|."""
    target = _subspace_target(LAM)
    z = bx.draw(target, 200_000, np.random.default_rng(38))
    _assert_on_grid(z)
    for i in range(3):
        assert _chisquare_pvalue(np.abs(z[:, i]), _marginal_probs(LAM, i)) > ALPHA


def test_subspace_concentrated():
    """λ = (0, −200, −5000): the draws sit near ±e_1 with z_2, z_3 about N(0, 1/400) and N(0, 1/10000). The exact
    E z_i² (quad, _sphere_moments) agree with the Laplace expansion σ_i²(1 + σ_i² + O(σ⁴)), σ_i² = 1/(2|λ_i|) (the
    measure on the sphere is ds dt/z_1 in the tangent coordinates), to a relative 10·(1/400)²; the sample means of
    z_i² over 200,000 draws must lie within Z_ALPHA standard errors (from the exact fourth moments) of the exact
    values."""
    n = 200_000
    target = _subspace_target(CONCENTRATED)
    z = bx.draw(target, n, np.random.default_rng(39))
    _assert_on_grid(z)
    widest = 1.0 / (2.0 * 200.0)  # the O(σ⁴) term holds products of both axes' σ²: bounded by the wider's
    for i in (1, 2):
        m2, m4 = _sphere_moments(CONCENTRATED, i)
        s2 = 1.0 / (2.0 * abs(CONCENTRATED[i]))
        assert abs(m2 / (s2 * (1.0 + s2)) - 1.0) <= 10.0 * widest**2
        assert abs(np.mean(z[:, i] ** 2) - m2) <= Z_ALPHA * math.sqrt((m4 - m2 * m2) / n)
    # and the top coordinate: 1 − z_1² = z_2² + z_3² (to the grid's 2^-31), mean 1/400 + 1/10000 roughly
    m2, m4 = _sphere_moments(CONCENTRATED, 0)
    assert abs(np.mean(1.0 - z[:, 0] ** 2) - (1.0 - m2)) <= Z_ALPHA * math.sqrt((m4 - m2 * m2) / n) + 2.0**-30
    assert np.max(1.0 - np.abs(z[:, 0])) < 0.1  # needs z_2² + z_3² > 0.19: |z_2| > 8.7 sd, about 3e-18 per draw


# ----------------------------------------------------------------------------- 7, 8: the envelope


def _random_subspace(rng: np.random.Generator, beta: float, orthonormal: bool, shaky: float = 0.0) -> bx.Subspace:
    """d = 5, m = 3: N from QR (orthonormal to rounding) or that N with its columns scaled and perturbed by 1e-2
    (N is used as given, orthonormal or not), A a random symmetric float matrix, (μ, E) from eigh(NᵀAN), E then
    perturbed by ``shaky`` (E only shapes the proposal: a poor E makes F = GᵀΩG − I large, and τ must follow)."""
    N = np.linalg.qr(rng.standard_normal((5, 3)))[0]
    if not orthonormal:
        N = N * (1.0 + 0.01 * rng.standard_normal(3)) + 0.01 * rng.standard_normal((5, 3))
    B = rng.standard_normal((5, 5)) * 2.0
    A = (B + B.T) / 2.0
    mu, E = scipy.linalg.eigh(N.T @ A @ N)
    return bx.Subspace(N, A, beta, mu, E + shaky * rng.standard_normal(E.shape))


@pytest.mark.parametrize("beta", [1.0, 1e4, 1e8])
def test_envelope_certificate_is_exact_for_subspace(beta):
    """τ >= ‖F‖_F >= ‖F‖₂ for F = GᵀΩG − I, Ω = I + (2/b)(αI − β NᵀAN), computed exactly from the floats G, α,
    b, β, N, A the sampler uses (the envelope needs |zᵀFz| <= τ‖z‖²). With eigh's E, F is rounding noise and τ
    (mostly error bounds) exceeds ‖F‖_F up to some 300-fold at β = 1e8; with E perturbed by 1e-3/√β, ‖F‖_F is about
    1e-2 and τ must exceed it although only its relative 2^-20 slack and the error terms separate them."""
    rng = np.random.default_rng([40, int(math.log10(beta))])
    for case in range(24):
        shaky = 1e-3 / math.sqrt(beta) if case % 3 == 2 else 0.0
        target = _random_subspace(rng, beta, orthonormal=case % 2 == 0, shaky=shaky)
        G, N, A = (_fractions(a) for a in (target.G, target.N, target.A))
        alpha, b, beta_ = Fraction(target.alpha), Fraction(target.b), Fraction(target.beta)
        m = target.m
        eye = np.array([[Fraction(int(i == j)) for j in range(m)] for i in range(m)], dtype=object)
        omega = eye + (2 / b) * (alpha * eye - beta_ * N.T.dot(A).dot(N))
        F = G.T.dot(omega).dot(G) - eye
        frobenius2 = sum(f * f for f in F.ravel())
        assert Fraction(target.tau) ** 2 >= frobenius2
        assert 0.0 < target.tau < 0.5
        if shaky:
            assert frobenius2 > Fraction(1, 10**8)  # the sharp case did happen


@pytest.mark.parametrize("beta", [1.0, 1e4, 1e8])
def test_envelope_certificate_is_exact_for_diagonal(beta):
    """Diagonal: G = diag(σ) and F_ii = (1 + 2α/b)σ_i² − (2β/b)λ_iσ_i² − 1 exactly; τ >= max|F_ii| = ‖F‖₂."""
    rng = np.random.default_rng([41, int(math.log10(beta))])
    for _ in range(30):
        lam = rng.standard_normal(int(rng.integers(2, 7))) * 3.0
        target = bx.Diagonal(lam, beta)
        alpha, b, beta_ = Fraction(target.alpha), Fraction(target.b), Fraction(target.beta)
        F = [
            (1 + 2 * alpha / b) * s * s - (2 * beta_ / b) * li * s * s - 1
            for s, li in zip(_fractions(target.sigma), _fractions(lam), strict=True)
        ]
        assert Fraction(target.tau) >= max(abs(f) for f in F)


def _exact_log_acceptance(target, Z: normal.LazyReals) -> tuple[Fraction, Fraction]:
    """Exact bounds of L(Z) from Z's box, as _exact_decision computes them."""
    lo, hi = Z.box()
    y_box, shift = target.y_box(lo, hi)
    z2 = tuple(int(sum(s)) for s in bx._square_box(lo, hi))
    return target.exact_log_ratio(y_box, z2, shift, 160)


def _fixed_box(u: np.ndarray) -> normal.LazyReals:
    """The direction u held in a box of width 2^-60 (L depends on Z only through its direction)."""
    mag = np.array([int(round(abs(v) * 2.0**60)) for v in u], dtype=object)
    return normal.LazyReals(np.where(u < 0, -1, 1).astype(np.int8), mag, np.full(u.size, 60))


def _float_log_acceptance(target, u: np.ndarray) -> float:
    """L at Z = u in floating point: −zᵀΛz + (m/2)log r − log M′, z = Gu/‖Gu‖, r = ‖u‖²/‖Gu‖²."""
    G = target.G if isinstance(target, bx.Subspace) else np.diag(target.sigma)
    y = G @ u
    r, z = (u @ u) / (y @ y), y / np.linalg.norm(y)
    if isinstance(target, bx.Subspace):
        w = target.N @ z
        quadratic = w @ target.A @ w
    else:
        quadratic = np.sum(target.lam * z * z)
    return -(target.alpha - target.beta * quadratic) + target.m / 2.0 * math.log(r) - target.log_m


def _near_supremum(target, rng: np.random.Generator) -> list[np.ndarray]:
    """Directions where L peaks. Analytically: with ‖GZ‖² = Σσ_i²Z_i² (G = E diag σ, E orthonormal to rounding)
    L peaks where r = ‖Z‖²/‖GZ‖² = m/b, at L = −(m/2)ρ + (m/2)log(1 − τ) − slack <= 0 (|ρ| <= τ): Z mixing an axis
    with σ² = 1 and one with σ² <= b/m so that Σσ_i²Z_i² = b/m. Numerically: the maximiser of the float L from
    those and from random starts (Nelder–Mead), which also finds the peak when E is far from orthonormal."""
    s2, mean = target.sigma**2, target.b / target.m
    top = int(np.argmax(s2))
    out = []
    for j in np.flatnonzero(s2 <= mean):
        p = 1.0 if s2[top] == s2[j] else (mean - s2[j]) / (s2[top] - s2[j])
        for signs in ((1, 1), (1, -1), (-1, 1)):
            u = np.zeros(target.m)
            u[top], u[j] = signs[0] * math.sqrt(p), signs[1] * math.sqrt(max(1.0 - p, 0.0))
            out.append(u)
    starts = [*out[:2], *rng.standard_normal((3, target.m))]
    for start in starts:
        result = optimize.minimize(  # L is scale-free: (‖u‖ − 1)² pins the scale so the simplex can converge
            lambda u: -_float_log_acceptance(target, u / np.linalg.norm(u)) + (np.linalg.norm(u) - 1.0) ** 2,
            start / np.linalg.norm(start),
            method="Nelder-Mead",
            options={"xatol": 1e-10, "fatol": 1e-15, "maxiter": 5_000},
        )
        out.append(result.x / np.linalg.norm(result.x))
    return out


def _envelope_targets() -> list:
    rng = np.random.default_rng(42)
    return [
        bx.Diagonal(LAM),
        bx.Diagonal(CONCENTRATED),
        bx.Diagonal(rng.standard_normal(5), 1e4),
        _subspace_target(LAM),
        _subspace_target(CONCENTRATED),
        _random_subspace(rng, 1e4, orthonormal=False),
        _random_subspace(rng, 1.0, orthonormal=True, shaky=1e-3),  # τ about 1e-2
    ]


@pytest.mark.parametrize("index", range(7))
def test_envelope_bounds_the_target(index):
    """L(Z) = −zᵀΛz + (m/2)log r − log M′ <= 0 for every proposal (else log M′ is not an envelope constant and the
    rejection sampler is biased): exact bounds of L for 60 random proposals (exact normals refined by 64 bits, as
    _exact_decision refines them) and for proposals at the supremum (_near_supremum), whose L must come within
    (m + 1)τ plus log M′'s relative slack 2^-30 of 0 — so the check L <= 0 is sharp there: for τ ~ 1e-14 the peak
    is at about −3e-9, and an envelope constant too small by 1e-7 fails it."""
    target = _envelope_targets()[index]
    rng = np.random.default_rng([43, index])
    m = target.m
    Z = normal.lazy_normals(60 * m, rng)
    for i in range(60):
        proposal = Z.take(slice(i * m, (i + 1) * m))
        proposal.refine(64, rng)
        l_lo, l_hi = _exact_log_acceptance(target, proposal)
        assert l_hi - l_lo < Fraction(1, 10**9)  # tight, so the next line is not vacuous
        assert l_lo <= 0
    slack = 2.0**-29 * (abs(target.log_m) + m * abs(math.log(m / target.b)) + m + 2.0)
    peaks = [_exact_log_acceptance(target, _fixed_box(u)) for u in _near_supremum(target, rng)]
    assert all(l_lo <= 0 for l_lo, _ in peaks)
    assert max(l_hi for _, l_hi in peaks) >= -((m + 1) * target.tau + slack)


# ----------------------------------------------------------------------------- 9: the output grid, and constants


@pytest.mark.parametrize(
    "lam", [[5.0], [0.0, 0.0], [2.5, -1.0], [3.0, 1.0, -2.0], list(np.linspace(-4, 4, 7)), [1e7, 5e6, *[0.0] * 38]]
)
def test_public_sampler_output_grid(lam):
    """sample_vector_bingham: each coordinate an integer multiple of 2^-32, norms within 2^-33·√q of 1."""
    rng = np.random.default_rng(44)
    x = sample_vector_bingham(lam, rng, size=2000)
    assert x.shape == (2000, len(lam))
    _assert_on_grid(x)
    one = sample_vector_bingham(lam, rng)
    assert one.shape == (len(lam),)
    _assert_on_grid(one[None])


@pytest.mark.parametrize("perturbed", [False, True])
def test_basis_excess_bounds_exact_gram_error(perturbed):
    """θ >= ‖NᵀN − I‖_F (>= the 2-norm it certifies), NᵀN exact in Fractions, for N from the QR of a seeded 7 × 4
    Gaussian (orthonormal to rounding) and for that N perturbed by 1e-6."""
    rng = np.random.default_rng(45)
    for _ in range(20):
        N = np.linalg.qr(rng.standard_normal((7, 4)))[0]
        if perturbed:
            N = N + 1e-6 * rng.standard_normal(N.shape)
        theta = _basis_excess(N)
        exact = _fractions(N)
        gram = exact.T.dot(exact)
        excess2 = sum((gram[i, j] - (i == j)) ** 2 for i in range(4) for j in range(4))
        assert Fraction(theta) ** 2 >= excess2
        assert theta < 1e-3 if perturbed else theta < 1e-13


def test_bingham_scale_rounds_down_exactly():
    """bingham_scale(ε, Δ) is the largest float <= ε/(2Δ), compared as exact rationals."""
    rng = np.random.default_rng(46)
    eps = 10.0 ** rng.uniform(-3.0, 2.0, 300)
    sens = 10.0 ** rng.uniform(-6.0, 4.0, 300)
    pairs = [*zip(eps, sens, strict=True), (1.0, 0.5), (0.1, 0.1), (3.0, 1.0), (2.0**-10, 2.0**20)]
    for e, s in pairs:
        scale = bingham_scale(float(e), float(s))
        exact = Fraction(float(e)) / (2 * Fraction(float(s)))
        assert Fraction(scale) <= exact < Fraction(math.nextafter(scale, math.inf))


@pytest.mark.parametrize("mechanism", ["ppca", "amin"])
def test_concentration_beyond_double_precision_is_refused_before_the_charge(mechanism):
    """check_certifiable depends on public numbers only (ε, rows, d), so an ε whose parameter could not be certified
    is refused before anything is spent, for any data; an ε below the limit runs."""
    import dpstats as dps
    from dpstats.exceptions import ParameterError

    X = np.random.default_rng(0).uniform(-0.5, 0.5, (200, 4)) / 2

    def fit(epsilon, accountant):
        if mechanism == "ppca":
            return dps.pca_ppca(X, 1, epsilon, rng=0, accountant=accountant)
        return dps.covariance(X, epsilon, rng=0, accountant=accountant)

    accountant = dps.Accountant(1e15)
    with pytest.raises(ParameterError, match="epsilon is too large for the exact Bingham sampler"):
        fit(1e12, accountant)
    assert accountant.ledger == [] and accountant.spent == (0.0, 0.0)
    fit(1e3, accountant)
    assert len(accountant.ledger) == 1
