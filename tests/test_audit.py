"""The audit bounds each correct mechanism below its ε and catches an under-noised one."""

import numpy as np
import pytest
from _registry import examples

import dpstats as dps
from dpstats.audit import audit, clopper_pearson
from dpstats.noise import sample_laplace

N_RUNS = 20_000


def test_clopper_pearson_known_values():
    lo, up = clopper_pearson(0, 100, 0.05)
    assert lo == 0.0 and up == pytest.approx(1 - 0.05 ** (1 / 100))
    lo, up = clopper_pearson(100, 100, 0.05)
    assert up == 1.0 and lo == pytest.approx(0.05 ** (1 / 100))


def test_mean_audit_is_not_vacuous():
    """The audit of the mean at ε = 0.5 on its near-optimal event comes close to ε (the declared audits, below, check
    every release at ε = 1 against an under-noised variant)."""
    eps = 0.5
    res = audit(
        lambda x, r: dps.mean(x, eps, bounds=(0, 1), rng=r), [0.0], [1.0], lambda out: out > 1.0, n_runs=N_RUNS, rng=1
    )
    assert res.epsilon_lower <= eps
    assert res.epsilon_lower > 0.6 * eps  # the event is near-optimal: the audit is not vacuous


def test_audit_flags_under_noised_mechanism():
    """Laplace noise at half the calibrated scale really is 2ε-DP; the audit must say > ε."""
    eps = 1.0

    def broken_mean(x, rng):
        return float(np.mean(x)) + sample_laplace(0.5 / eps, (), rng)

    res = audit(broken_mean, [0.0], [1.0], lambda out: out > 1.0, n_runs=N_RUNS, rng=5)
    assert res.epsilon_lower > eps


def test_disjoint_supports_give_infinite_point_estimate():
    res = audit(lambda x, r: x[0] + r.uniform(), [0.0], [5.0], lambda out: out > 2, n_runs=200, rng=0)
    assert res.epsilon_point == np.inf and res.epsilon_lower > 3


# ----------------------------------------------------------------------------- every declared audit
#
# Each release declares its audits (dpstats._registry.Audit, in its family's _cases.py): two neighbouring datasets,
# an event derived from the data (a threshold halfway between two noiseless outputs, the most revealing shape for
# these mechanisms), never tuned on the audit's outcome. The release must stay below its ε; its under-noised variant
# — the same code calibrated for a multiple of ε and claimed as ε, or, for a unit-level release, the same call
# without its unit (calibrated as if each row were a person, while the heavy unit's rows all move at once) — must be
# flagged above it, which shows that the event has the power to catch a calibration error. A release may instead
# declare a patch that halves its sensitivity where it computes it (the linear regressions'): the variant then runs
# under it.

AUDITS = examples("audit")


@pytest.mark.parametrize("label", AUDITS)
def test_every_declared_audit_stays_below_epsilon_and_flags_its_under_noised_variant(label):
    declaration, example = AUDITS[label]
    spec = example.audit
    data, neighbour = spec.pair()
    event, eps = spec.event(), example.kwargs["epsilon"]
    found = []
    variants = (({}, spec.seeds[0], None), (spec.broken_changes(example.kwargs), spec.seeds[1], spec.patch))
    for changes, seed, patch in variants:
        with pytest.MonkeyPatch.context() as monkeypatch:
            if patch is not None:  # a mis-declared sensitivity (halved where the release computes it)
                patch(monkeypatch)
            found.append(
                audit(
                    lambda ds, r, changes=changes: declaration.run(example, ds, r, **changes),
                    data,
                    neighbour,
                    event,
                    n_runs=spec.runs,
                    delta=spec.delta,
                    alpha=0.05,
                    rng=seed,
                ).epsilon_lower
            )
    clean, broken = found
    assert clean <= eps < broken, (label, clean, broken)
