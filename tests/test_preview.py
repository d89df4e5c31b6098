"""dps.preview: the noise and 95 % error of a planned call from its public arguments only, as the release's ledger
entry will state them; Accountant.preview: a whole plan against a budget, spending nothing.

Every declared release has a preview (read from the registry), and every example of its test cases
(``dpstats.registry``: the golden calls, row and unit level, grouped, each method) is previewed from its public
arguments — the data's size and shape, the call's options — and held to the ledger entry of the real call: the
same events (type, ε, δ, noise parameters), relation, proof status, and the same noise statements (scale and 95 %
error; to the relative 2^-12 of the descriptive releases' fixed-point bounds, exactly elsewhere). What an
exponential mechanism's preview states instead of a noise (a rank or captured-variance gap, the Gamma-norm bound of
objective perturbation) is held to the real releases by simulation, each paired with a wrong variant that fails."""

import inspect
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.stats import binom

import dpstats as dps
from dpstats import hypothesis, registry
from dpstats.descriptive._previews import EXPONENTIAL
from dpstats.exceptions import NotPrivateError, ParameterError
from dpstats.linear_model._previews import GAMMA_NORM

#: Statements a ledger does not make: what an exponential mechanism's preview states, objective perturbation's.
DERIVED = (EXPONENTIAL, GAMMA_NORM)
#: Examples whose ledger statements depend on a released value (a private norm bound divides the rows), so only
#: their events are compared; their previews say so in their note.
RELEASED_SCALE = {("cca", "cca_private_bound"), ("cca", "cca private bound")}


def _frame(x) -> bool:
    return type(x).__name__ == "DataFrame"


def public_of(declaration, example):
    """(ε, δ, the preview's public arguments) of a registry example: its options, and the size and shape of its
    data (rows n, or the number of privacy units; columns d; ``by=True`` for keys)."""
    data = example.data()
    positional = data[: len(data) - len(example.keywords)]
    named = dict(zip(example.keywords, data[len(positional) :], strict=True))
    kwargs = dict(example.kwargs)
    epsilon, delta = kwargs.pop("epsilon"), kwargs.pop("delta", None)
    ids = named["privacy_unit"] if "privacy_unit" in named else kwargs.pop("privacy_unit", None)
    by = named["by"] if "by" in named else kwargs.pop("by", None)
    first = positional[0]
    if _frame(first):  # columns named by the call (the unit, the keys) are not values
        if isinstance(ids, str):
            ids = first[ids].to_numpy()
        first = first[[c for c in first.columns if c not in (example.kwargs.get("privacy_unit"), by)]]
    public = {} if ids is None else {"units": int(np.unique(np.asarray(ids)).size)}
    if by is not None:
        public["by"] = True
    if declaration.family == "hypothesis":
        return epsilon, delta, {**public, **(_tested(declaration, positional) if ids is None else {}), **kwargs}
    array = np.asarray(first)
    name, rows = declaration.name, array.shape[0]
    if declaration.family == "descriptive" and name != "private_norm_bound":
        axis = kwargs.pop("axis", None)
        rows = array.shape[0 if axis is None else axis]
        columns = array.size // rows
        key = "range" if name == "private_bounds" else "bounds"
        if columns > 1 and key in kwargs and not isinstance(kwargs[key], dict):
            if name == "private_bounds":
                public["columns"] = columns
            else:
                kwargs[key] = tuple(np.broadcast_to(np.asarray(side, float), (columns,)) for side in kwargs[key])
    elif name == "cca":
        public["dx"], public["dy"] = (np.asarray(v).shape[1] for v in positional)
    elif name != "private_norm_bound":
        public["d"] = array.shape[1]
    if ids is None and by is None and name != "histogram":
        public["n"] = rows
    return epsilon, delta, {**public, **kwargs}


def _tested(declaration, positional) -> dict:
    """The public size of a hypothesis test's data, as its neighbouring relation makes it public: n records (aligned
    columns of records: their rows), and for separate samples only their total n — the sizes of the samples are
    private (released with noise) — with k, the number of samples of a sequence of samples."""
    kinds = [constraint.kind for constraint in declaration.data.values()]
    if kinds == ["samples"]:
        return {"n": sum(len(s) for s in positional[0]), "k": len(positional[0])}
    if "records" in kinds:  # aligned columns (x, y of a contingency table): one record per row
        return {"n": len(positional[0])}
    return {"n": sum(len(sample) for sample in positional)}  # one sample, or separate samples: their total


EXAMPLES = [
    pytest.param(declaration, example, id=f"{name}: {example.label}")
    for name, declaration in registry.releases().items()
    if declaration.private
    for example in declaration.cases().examples
    if not example.label.startswith("dask_")  # the same calls on dask data (their size is lazy)
]


@pytest.mark.parametrize("declaration, example", EXAMPLES)
def test_the_preview_is_what_the_ledger_will_state(declaration, example):
    """Events, relation, proof status and the noise statements of the preview are the ledger's, computed without
    the data."""
    epsilon, delta, public = public_of(declaration, example)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # floating-point noise, mixed scales: the call warns as its preview does
        planned = dps.preview(declaration.function, epsilon, delta, **public)
        acc = dps.Accountant(1000.0, 0.5, allow_unproven=True)
        declaration.run(example, rng=0, accountant=acc)
    entries = acc.ledger
    tolerance = 2.0**-12 if declaration.family == "descriptive" else 1e-12
    events = [e for entry in entries for e in entry.events]
    assert [type(e) for e in events] == [type(e) for e in planned.events]
    for stated, previewed in zip(events, planned.events, strict=True):
        assert (previewed.epsilon, previewed.delta) == pytest.approx((stated.epsilon, stated.delta), rel=1e-12)
        for noise in ("sigma", "scale", "sensitivity"):
            if hasattr(stated, noise):
                assert getattr(previewed, noise) == pytest.approx(getattr(stated, noise), rel=tolerance)
    assert planned.epsilon == pytest.approx(sum(e.epsilon for e in entries), rel=1e-12)
    assert planned.delta == pytest.approx(sum(e.delta for e in entries), rel=1e-12)
    assert {e.relation for e in entries} == {planned.relation}
    assert all(e.proven for e in entries) == planned.proven
    stated = [s for entry in entries for s in entry.noise]
    mine = [s for s in planned.statements if s.distribution not in DERIVED]
    assert [(s.distribution, s.units) for s in stated] == [(s.distribution, s.units) for s in mine]
    if (declaration.name, example.label) in RELEASED_SCALE:
        return
    if example.kwargs.get("bounds_X") == "private":  # the scaled rows' slack follows the released bounds
        tolerance = 2.0**-12
    for ledger, previewed in zip(stated, mine, strict=True):
        assert previewed.scale == pytest.approx(ledger.scale, rel=tolerance)
        assert previewed.half_width == pytest.approx(ledger.half_width, rel=tolerance)


def test_every_declared_release_has_a_preview_and_every_preview_is_held_to_a_ledger():
    """A release declared without a preview fails here, and so does a private release no example above runs."""
    declared = registry.releases()
    for name, declaration in declared.items():
        assert declaration.preview is not None, f"{name} declares no preview"
        assert callable(declaration.previewer()), f"{name}: its preview {declaration.preview!r} does not resolve"
    tested = {p.values[0].name for p in EXAMPLES}
    assert tested == {n for n, d in declared.items() if d.private}


def _keywords(function) -> dict:
    return {
        n: p.default
        for n, p in inspect.signature(function).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is not inspect.Parameter.empty
    }


#: Defaults a preview leaves to its public arguments on purpose: a histogram's bins decide between bins and keys.
OWN_DEFAULTS = {("histogram", "bins")}


@pytest.mark.parametrize("name", sorted(registry.releases()))
def test_a_preview_takes_the_release_s_defaults(name):
    """A preview's option left out means what it means in the call (same default): otherwise the preview of the
    default call would not be the call's."""
    declaration = registry.get(name)
    release, preview = _keywords(declaration.function), _keywords(declaration.previewer())
    shared = sorted(set(release) & set(preview) - {n for r, n in OWN_DEFAULTS if r == name})
    assert shared or name == "pca_sn"
    assert {n: preview[n] for n in shared} == {n: release[n] for n in shared}


# ----------------------------------------------------------------------------- floating-point slack


SLACK_UNITS, SLACK_ROWS = 40, 10**6  # N·m = 4·10^7 public rows: the slack the releases charge for them shows


def _slack_cases():
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.3, 0.3, (SLACK_UNITS, 4))
    ids = np.arange(SLACK_UNITS)
    unit = {"privacy_unit": ids, "max_rows": SLACK_ROWS}
    bounds = {"bounds_X": (-1, 1), "bounds_y": (-1, 1)}
    return {
        "pca_ag": (lambda **k: dps.pca_ag(X, 1.0, 1e-6, **unit, **k), dps.pca_ag, {"d": 4}),
        "covariance_dong": (lambda **k: dps.covariance_dong(X, 1.0, 1e-6, **unit, **k), dps.covariance_dong, {"d": 4}),
        "adassp": (
            lambda **k: dps.linear_regression(X, X[:, 0], 1.0, **bounds, **unit, **k),
            dps.linear_regression,
            {"d": 4, **bounds},
        ),
    }


@pytest.mark.parametrize("case", ["pca_ag", "covariance_dong", "adassp"])
def test_the_preview_charges_the_floating_point_slack_of_the_public_rows(case):
    """At N·m = 4·10^7 public rows the preview matches the ledger to 10^-12. Where the release's floating-point slack
    grows with the public rows (ADASSP), a preview for fewer public rows (the same sensitivity, less slack) would
    not match: its noise moves by a relative 10^-5 or more. The exact Gram matrix of pca_ag and Dong et al. is an
    exact integer sum (issue 40): its slack is one grid step whatever the rows, so pca_ag's noise is the same for
    any number of public rows, and Dong et al.'s moves only by the float conversion of its eigenvalue step."""
    call, release, public = _slack_cases()[case]
    acc = dps.Accountant(100.0, 0.5)
    call(rng=0, accountant=acc)
    stated = acc.ledger[-1].noise
    right = dps.preview(release, 1.0, units=SLACK_UNITS, max_rows=SLACK_ROWS, **public).statements
    poor = dps.preview(release, 1.0, units=1, max_rows=SLACK_ROWS, **public).statements
    assert [s.scale for s in right] == pytest.approx([s.scale for s in stated], rel=1e-12)
    moved = max(abs(p.scale / s.scale - 1) for p, s in zip(poor, stated, strict=True))
    if case == "adassp":
        assert moved > 1e-5
    elif case == "pca_ag":
        assert moved == 0
    else:
        assert moved < 1e-8


# ----------------------------------------------------------------------------- what an exponential mechanism states

RUNS_ALPHA = 1e-3  # a correct statement fails once in a thousand seeds


def _too_many(runs: int) -> float:
    """More exceedances of a 95 % statement than this in ``runs`` runs: the statement is wrong (binomial)."""
    return binom.isf(RUNS_ALPHA, runs, 0.05)


def test_a_quantile_s_stated_rank_error_holds_for_its_releases():
    """Unit level (m = 16 rows per unit, all kept): the released median's rank error beyond the grid's best is
    within the stated ±r in at least 95 % of 300 runs; the wrong variant that forgets the unit (r for one row)
    is exceeded far more often."""
    N, m, G = 40, 16, 64
    x = np.random.default_rng(1).uniform(0, 1, N * m)
    ids = np.repeat(np.arange(N), m)
    cells = np.clip(np.floor(x * G), 0, G - 1)
    rank = np.array([np.count_nonzero(cells < j) for j in range(G + 1)])
    target = 0.5 * x.size
    best = np.min(np.abs(rank - target))
    right = dps.preview(dps.quantile, 1.0, q=0.5, bounds=(0, 1), grid_size=G, units=N, max_rows=m)
    wrong = dps.preview(dps.quantile, 1.0, q=0.5, bounds=(0, 1), grid_size=G, n=N * m)
    (stated,) = right.statements
    assert stated.distribution == EXPONENTIAL and stated.units == "ranks (records)"
    released = [
        dps.quantile(x, 0.5, 1.0, bounds=(0, 1), grid_size=G, privacy_unit=ids, max_rows=m, rng=s) for s in range(300)
    ]
    errors = np.array([abs(rank[round(v * G)] - target) - best for v in released])
    assert np.count_nonzero(errors > stated.half_width) <= _too_many(300)
    assert np.count_nonzero(errors > wrong.half_width) > _too_many(300)


def test_a_principal_direction_s_stated_gap_holds_for_its_releases():
    """PPCA at unit level (m = 8): the drawn direction's captured variance vᵀXᵀXv is within the stated gap of
    λ₁(XᵀX) in at least 95 % of 200 runs, with a gap well below λ₁ − λ_d (not vacuous); the wrong variant that
    forgets the unit is exceeded far more often."""
    N, m, d = 600, 8, 3
    X = np.random.default_rng(2).normal(0, 1, (N * m, d)) * np.array([0.5, 0.3, 0.1])
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1))[:, None]
    ids = np.repeat(np.arange(N), m)
    A = X.T @ X
    lam = np.linalg.eigvalsh(A)[::-1]
    right = dps.preview(dps.pca_ppca, 1.0, k=1, d=d, units=N, max_rows=m)
    wrong = dps.preview(dps.pca_ppca, 1.0, k=1, d=d, n=N * m)
    (stated,) = right.statements
    assert stated.distribution == EXPONENTIAL and stated.half_width < (lam[0] - lam[-1]) / 4
    gaps = []
    for seed in range(200):
        v = np.asarray(dps.pca_ppca(X, 1, 1.0, privacy_unit=ids, max_rows=m, rng=seed))[:, 0]
        gaps.append(lam[0] - v @ A @ v)
    assert np.count_nonzero(np.array(gaps) > stated.half_width) <= _too_many(200)
    assert np.count_nonzero(np.array(gaps) > wrong.half_width) > _too_many(200)


def test_objective_perturbation_s_stated_distance_holds_for_its_releases():
    """SVM by objective perturbation: the released weights are within the stated L2 distance of the minimiser of
    the regularised objective (Δ = 0 here) in at least 95 % of 200 runs; the wrong variant that plans eight times
    less noise (ε × 8) is exceeded far more often."""
    n, d, lam, h = 400, 3, 0.05, 0.5
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, (n, d)) / np.sqrt(d)
    y = np.where(X @ [1.0, -0.5, 0.2] + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)

    def huber(z):
        return np.where(z > 1 + h, 0.0, np.where(z < 1 - h, 1 - z, (1 + h - z) ** 2 / (4 * h)))

    def slope(z):
        return np.where(z > 1 + h, 0.0, np.where(z < 1 - h, -1.0, -(1 + h - z) / (2 * h)))

    objective = lambda f: huber(y * (X @ f)).mean() + lam / 2 * f @ f  # noqa: E731
    gradient = lambda f: X.T @ (y * slope(y * (X @ f))) / n + lam * f  # noqa: E731
    f_star = minimize(objective, np.zeros(d), jac=gradient, method="BFGS", options={"gtol": 1e-13}).x
    right = dps.preview(dps.svm, 1.0, n=n, d=d, lam=lam)
    wrong = dps.preview(dps.svm, 8.0, n=n, d=d, lam=lam)
    (stated,) = right.statements
    assert stated.distribution == GAMMA_NORM and "Delta=0" in right.note
    distances = np.array([np.linalg.norm(dps.svm(X, y, 1.0, lam=lam, rng=s) - f_star) for s in range(200)])
    assert np.count_nonzero(distances > stated.half_width) <= _too_many(200)
    assert np.count_nonzero(distances > wrong.half_width) > _too_many(200)


# ----------------------------------------------------------------------------- refusals, plans, bad arguments


def test_a_public_count_previews_as_exact_and_free():
    planned = dps.preview(dps.count, 1.0, n=1000)
    assert planned.statements == () and planned.events == () and "nothing charged" in planned.note
    acc = dps.Accountant(1.0)
    assert acc.preview([planned]).total[0] == 0.0


def test_sn_previews_as_not_private_and_no_plan_with_it_fits():
    planned = dps.preview(dps.pca_sn, 1.0, d=6, n=200)
    assert not planned.private and planned.statements == () and planned.events == ()
    assert "NOT differentially private" in planned.note
    acc = dps.Accountant(10.0, 1e-6, allow_unproven=True)
    assert not acc.preview([planned]).fits
    with pytest.raises(NotPrivateError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dps.pca_sn(np.zeros((5, 6)), 1.0, rng=0, accountant=acc)
    assert acc.ledger == []


def test_an_unproven_call_fits_only_an_accountant_that_takes_unproven_releases():
    planned = dps.preview(dps.quantile, 1.0, q=[0.25, 0.75], bounds=(0, 1), n=1000)
    assert not planned.proven and "UNPROVEN" in str(planned)
    assert not dps.Accountant(10.0).preview([planned]).fits
    assert dps.Accountant(10.0, allow_unproven=True).preview([planned]).fits


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dps.preview(dps.mean, 0.0, bounds=(0, 1), n=10), "epsilon"),
        (lambda: dps.preview(dps.mean, 1.0, -0.1, bounds=(0, 1), n=10), "delta"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(1, 0), n=10), "bounds"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1)), r"n \(rows\)"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1), n=0), "n must be a whole number"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1), units=10), "max_rows"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1), n=10, max_groups=2), "grouped releases"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1), by=True), "delta > 0"),
        (lambda: dps.preview(dps.histogram, 1.0), "bins"),
        (lambda: dps.preview(dps.quantile, 1.0, bounds=(0, 1), n=10), "q is needed"),
        (lambda: dps.preview(dps.pca_ppca, 1.0, k=2, d=5), r"n \(rows\)"),
        (lambda: dps.preview(dps.pca_ppca, 1.0, k=6, d=5, n=100), "k must be"),
        (lambda: dps.preview(dps.pca_ppm, 1.0, k=2, n=100), "d is needed"),
        (lambda: dps.preview(dps.pca, 1.0, k=2, d=5, n=100, mechanism="nope"), "mechanism"),
        (lambda: dps.preview(dps.covariance, 1.0, 1e-6, d=5, n=100), "delta must be 0"),
        (lambda: dps.preview(dps.linear_regression, 1.0, n=100, d=2, method="theil_sen", bounds_X=(0, 1)), "d=2"),
        (lambda: dps.preview(dps.linear_regression, 1.0, n=100, d=2, method="tukey"), "subsets"),
        (lambda: dps.preview(dps.svm, 1.0, n=100, d=2), "lam is needed"),
        (lambda: dps.preview(dps.svm, 1.0, n=100, d=2, lam=1e-12, max_iter=3), "max_iter"),
        (lambda: dps.preview(dps.low_rank, 1.0, 1e-6, k=1, n=50, d=10), "bounds"),
        (lambda: dps.preview(dps.pca, 1.0, k=2, d=5, n=100, n_iter=3), "n_iter is an option of mechanism='ppm'"),
        (lambda: dps.preview(dps.covariance, 1.0, method="dong", d=5, n=100, rank=2), "rank is an option of"),
        (lambda: dps.preview(dps.mean, 1.0, bounds=(0, 1), n=10, foo=1), "mean's preview takes bounds, n, .*got foo"),
        (lambda: dps.preview(dps.low_rank, 1.0, 1e-6, k=1, n=10, d=5, units=3, max_rows=2), "got max_rows, units"),
        (lambda: dps.preview(len, 1.0), "dpstats release"),
        (lambda: dps.preview(hypothesis.binomtest, 1.0, units=10, max_rows=2), "max_rows=1"),
        (lambda: dps.preview(hypothesis.chisquare, 1.0, n=10), "categories is needed"),
        (lambda: dps.preview(hypothesis.ttest_1samp, 1.0, n=10, bounds=(0, 1), popmean=2.0), "popmean"),
        (lambda: dps.preview(hypothesis.ttest_1samp, 1.0, n=1, bounds=(0, 1)), "n must be >= 2"),
        (lambda: dps.preview(hypothesis.ttest_ind, 1.0, n=100, bounds=(0, 1), sizes=(50, 50)), "got sizes"),
        (lambda: dps.preview(hypothesis.mannwhitneyu, 1.0), "n is needed"),
        (lambda: dps.preview(hypothesis.kruskal, 1.0, n=30), "k is needed"),
    ],
)
def test_bad_public_arguments_are_errors_naming_them(call, message):
    with pytest.raises(ParameterError, match=message), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        call()


@pytest.mark.parametrize("test", ["ttest_ind", "f_oneway", "mannwhitneyu", "kruskal"])
def test_a_several_sample_test_s_preview_needs_no_sizes(test):
    """The sizes of the samples are private (released with noise): one preview from the public total n (and k) is
    the ledger's for samples of any sizes, balanced or not."""
    function = getattr(hypothesis, test)
    x = np.random.default_rng(5).uniform(0, 1, 60)
    several = test in ("f_oneway", "kruskal")  # k samples in one sequence (k = 3 here), else x and y
    options = {"bounds": (0, 1)} if test in ("ttest_ind", "f_oneway") else {}
    planned = dps.preview(function, 1.0, n=x.size, **({"k": 3} if several else {}), **options)
    for cuts in ([1, 3], [20, 50]) if several else ([1], [30]):
        samples = np.split(x, cuts)
        acc = dps.Accountant(10.0)
        function(*([samples] if several else samples), 1.0, **options, n_resamples=20, rng=0, accountant=acc)
        (entry,) = acc.ledger
        assert entry.events == planned.events
        assert [(s.scale, s.half_width) for s in entry.noise] == [(s.scale, s.half_width) for s in planned.statements]


def test_a_grouped_release_s_default_delta_is_its_method_s():
    """δ left out is the release's default, the method's where it depends on one (as the call resolves it)."""
    assert dps.preview(dps.covariance, 1.0, method="dong", d=3, n=100).delta == pytest.approx(1e-6)
    assert dps.preview(dps.covariance, 1.0, d=3, n=100).delta == 0.0
    assert dps.preview(dps.linear_regression, 1.0, n=100, d=1, bounds_X=(0, 1), bounds_y=(0, 1)).delta > 0
    theil_sen = dps.preview(
        dps.linear_regression, 1.0, n=100, d=1, method="theil_sen", bounds_X=(0, 1), bounds_y=(0, 1)
    )
    assert theil_sen.delta == 0.0


def test_accountant_preview_composes_a_plan_against_the_budget_and_spends_nothing():
    x = np.random.default_rng(0).uniform(0, 100, 1000)
    acc = dps.Accountant(1.0, 1e-6)
    dps.mean(x, 0.25, bounds=(0, 100), rng=0, accountant=acc)
    before = (acc.spent, len(acc.ledger))
    plan = [
        dps.preview(dps.mean, 0.25, bounds=(0, 100), n=x.size),
        dps.preview(dps.variance, 0.25, 1e-7, bounds=(0, 100), n=x.size),
    ]
    result = acc.preview(plan)
    assert (acc.spent, len(acc.ledger)) == before  # nothing recorded
    assert result.total == acc.composed_with([e for p in plan for e in p.events])
    assert result.fits
    # the plan is what the accountant then accepts: running it spends what the preview said
    dps.mean(x, 0.25, bounds=(0, 100), rng=1, accountant=acc)
    dps.variance(x, 0.25, 1e-7, bounds=(0, 100), rng=2, accountant=acc)
    assert acc.spent == pytest.approx(result.total, rel=1e-9)
    over = acc.preview([dps.preview(dps.histogram, 0.5, bins=10)])
    assert not over.fits and "does NOT fit" in str(over)
    with pytest.raises(dps.BudgetExceededError):
        dps.histogram(x, 0.5, bins=10, range=(0, 100), rng=3, accountant=acc)
    assert all(len(line) <= 100 for line in str(result).splitlines())


def test_a_plan_of_every_family_composes_as_its_releases_do():
    """A quantile, a PCA and a regression planned together: Accountant.preview's total is what the accountant
    spends when the three calls are made."""
    rng = np.random.default_rng(4)
    X = rng.uniform(-0.5, 0.5, (2000, 3)) / 2
    y = X @ [1.0, -1.0, 0.5]
    plan = [
        dps.preview(dps.quantile, 0.3, q=0.5, bounds=(-1, 1), n=2000),
        dps.preview(dps.pca, 0.5, k=2, d=3, n=2000),
        dps.preview(dps.linear_regression, 1.0, n=2000, d=3, bounds_X=(-0.25, 0.25), bounds_y=(-1, 1)),
    ]
    acc = dps.Accountant(3.0, 1e-5)
    expected = acc.preview(plan)
    assert expected.fits
    dps.quantile(X[:, 0], 0.5, 0.3, bounds=(-1, 1), rng=0, accountant=acc)
    dps.pca(X, 2, 0.5, rng=0, accountant=acc)
    dps.linear_regression(X, y, 1.0, bounds_X=(-0.25, 0.25), bounds_y=(-1, 1), rng=0, accountant=acc)
    assert acc.spent == pytest.approx(expected.total, rel=1e-12)


def test_every_line_of_a_preview_reads_on_a_page():
    """As the ledger (issue 38): a preview prints in lines of at most 100 characters."""
    for planned in (
        dps.preview(dps.quantile, 1.0, 1e-6, q=0.5, bounds=(0, 120), by=True),
        dps.preview(dps.pca_ppca, 1.0, k=2, d=6, n=2000),
        dps.preview(dps.linear_regression, 1.0, n=100_000, d=2, method="tukey"),
    ):
        assert all(len(line) <= 100 for line in str(planned).splitlines())
