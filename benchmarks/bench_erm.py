"""ERM fit time against diffprivlib (issue 40, item 4): ``DPLogisticRegression`` and ``DPLinearSVC``, both methods.

The same data and λ as the logistic-regression rows of :mod:`benchmarks.bench_peers` (two Gaussian classes, rows
mapped to norm <= 1 by a fixed map, λ = 10(d + 1)/(nε), ε = 1, an intercept column), at n = 10⁴ and 10⁵ and
d = 10 and 50. diffprivlib's ``LogisticRegression(epsilon=1, data_norm=1)`` runs with its default C = 1 (the row
the target compares with) and with C = 1/(nλ) (dpstats' objective); it stops its L-BFGS solver at ``tol=1e-4``
or 100 iterations, a data-dependent stop that its privacy analysis does not cover. dpstats takes fixed, public
numbers of solver steps that place the minimiser within a certified distance, whatever the data (the notes give
them: accelerated + Newton steps). Every fitter runs once per seed, interleaved, after an uncounted warm-up
round; medians over the seeds (at least 7 outside ``--tiny``). diffprivlib has no SVM: the ``DPLinearSVC``
rows compare with the same logistic-regression peer. Without diffprivlib only the dpstats rows run.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._harness import Results
from .bench_peers import LR_EPSILON, _has_diffprivlib, _lr_data, _lr_lambda

PEER = "diffprivlib C=1"


def _fitters(n: int, d: int, seed: int, peers: bool) -> dict:
    """name -> fit(X, y) returning a fitted classifier; the same seed for every fitter."""
    from dpstats.estimators import DPLinearSVC, DPLogisticRegression

    lam = _lr_lambda(n, d, LR_EPSILON)
    fitters = {}
    if peers:
        from diffprivlib.models import LogisticRegression

        def peer(C):
            def fit(X, y):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # its ConvergenceWarning / PrivacyLeakWarning chatter
                    return LogisticRegression(epsilon=LR_EPSILON, data_norm=1.0, C=C, random_state=seed).fit(X, y)

            return fit

        fitters[PEER] = peer(1.0)
        fitters["diffprivlib C=1/(n lam)"] = peer(1.0 / (n * lam))
    for label, estimator in (("DPLogisticRegression", DPLogisticRegression), ("DPLinearSVC", DPLinearSVC)):
        for method in ("objective", "output"):
            fitters[f"{label} {method}"] = (
                lambda e, m: (
                    lambda X, y: e(classes=[0, 1], epsilon=LR_EPSILON, lam=lam, method=m, random_state=seed).fit(X, y)
                )
            )(estimator, method)
    return fitters


def _steps(n: int, d: int, name: str) -> str:
    """The public solver steps of a dpstats fitter (d + 1 features with the intercept column), for the notes."""
    from dpstats.linear_model import AMP_SHARE, Accelerated, OutputPerturbation, objective_perturbation_parameters
    from dpstats.linear_model._erm import DEFAULT_TOL, LOGISTIC, huber, norm_bound

    loss = LOGISTIC if name.startswith("DPLogistic") else huber(0.5)
    lam = _lr_lambda(n, d, LR_EPSILON)
    if name.endswith("output"):
        plan = OutputPerturbation.of(n, d + 1, lam, loss, 1, 5000).solver
    else:
        eps = LR_EPSILON * (1 - AMP_SHARE)
        _, delta = objective_perturbation_parameters(n, lam, eps, loss.c, norm_bound=norm_bound(d + 1))
        plan = Accelerated.plan(n, d + 1, lam + delta, loss, DEFAULT_TOL / (lam + delta), 5000)
    return f"{plan.steps} accelerated + {getattr(plan, 'newton', 0)} Newton steps"


def run(results: Results, *, tiny: bool, repeats: int) -> None:
    sizes = [(2_000, 10)] if tiny else [(100_000, 50), (10_000, 50), (100_000, 10), (10_000, 10)]
    repeats = max(repeats, 1) if tiny else max(repeats, 7)
    peers = _has_diffprivlib()
    if not peers:
        results.add("erm", "diffprivlib", "skipped", "not installed", note="run `make bench`")
    for n, d in sizes:
        case = f"ERM n={n:.0e} d={d} eps={LR_EPSILON:g}"
        X, y, _, _ = _lr_data(n, d, seed=10_000)  # warm-up round (imports, first calls): not counted
        for fit in _fitters(n, d, 10_000, peers).values():
            fit(X, y)
        times: dict[str, list[float]] = {}
        accuracy: dict[str, list[float]] = {}
        for seed in range(repeats):
            X, y, X_test, y_test = _lr_data(n, d, seed)
            for name, fit in _fitters(n, d, seed, peers).items():  # interleaved: every fitter once per seed
                start = time.perf_counter()
                model = fit(X, y)
                times.setdefault(name, []).append(time.perf_counter() - start)
                accuracy.setdefault(name, []).append(100.0 * model.score(X_test, y_test))
        median = {name: float(np.median(t)) for name, t in times.items()}
        for name, seconds in median.items():
            acc = float(np.median(accuracy[name]))
            if name.startswith("diffprivlib"):
                results.add("erm", case, f"{name} fit s", seconds, note=f"acc {acc:.2f} %, {repeats} seeds")
                continue
            note = f"{_steps(n, d, name)}; acc {acc:.2f} %"
            if not peers:
                results.add("erm", case, f"{name} fit s", seconds, note=note)
                continue
            ratio = seconds / median[PEER]
            results.add(
                "erm",
                case,
                f"{name} fit s",
                seconds,
                f"<= {PEER}",
                "met" if ratio <= 1.0 else "MISSED",
                f"ratio {ratio:.2f}; {note}",
            )
