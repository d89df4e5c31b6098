"""dpstats.compendium.pca_benchmark: the cells, the time limit, the winners and the targets (issue 26)."""

import math
import time

import numpy as np
import pytest

from dpstats.compendium import pca_benchmark as pb

#: one worker runs this module (its module-scoped fixture is computed once; pytest-xdist's loadgroup)
pytestmark = pytest.mark.xdist_group("pca_benchmark")


@pytest.fixture(scope="module")
def spiked():
    """Rows of norm <= 1 with a dominant direction: a strong signal for n = 4000, d = 8."""
    rng = np.random.default_rng(7)
    X = rng.standard_normal((4000, 8)) * np.array([3.0, 1, 0.5, 0.5, 0.3, 0.3, 0.2, 0.2])
    X /= np.maximum(np.linalg.norm(X, axis=1), 4.0)[:, None]  # a fixed map into the unit ball
    return pb.BenchmarkData("spiked", X, "test")


def test_run_cell_is_seeded_and_scores_energy(spiked):
    first = pb.run_cell(spiked, "AG", 1, 3.0, seeds=(0, 1))
    again = pb.run_cell(spiked, "AG", 1, 3.0, seeds=(0, 1))
    assert [f.status for f in first] == ["ok", "ok"]
    assert [f.energy for f in first] == [f.energy for f in again]  # same seed, same release
    assert first[0].energy != first[1].energy  # different seeds, different noise
    assert all(97.0 < f.energy <= 100.0 for f in first)  # n·ε large: AG finds the dominant direction
    assert (first[0].n, first[0].d, first[0].k, first[0].guarantee) == (4000, 8, 1, "(ε, δ)-DP")
    weak = pb.run_cell(spiked, "AG", 1, 0.001, seeds=(0, 1, 2))
    assert np.mean([f.energy for f in weak]) < 90.0  # tiny ε: noise dominates


def test_sn_is_labelled_not_dp_and_never_counts_as_proven(spiked):
    (fit,) = pb.run_cell(spiked, "SN", 1, 1.0, seeds=(0,))
    assert fit.status == "ok" and fit.guarantee == "NOT DP"
    assert not pb.MECHANISMS["SN"].proven and not pb.MECHANISMS["PPCA Gibbs"].proven
    assert pb.MECHANISMS["PPCA"].proven and pb.MECHANISMS["Hardt-Roth"].proven


def _sleeper(X, k, epsilon, delta, seed):
    time.sleep(30)


def test_a_fit_over_the_time_limit_is_recorded_not_dropped(spiked, monkeypatch):
    monkeypatch.setitem(pb.MECHANISMS, "slow", pb.Mechanism("slow", "ε-DP", "dpstats", _sleeper))
    start = time.perf_counter()
    rows = pb.run_cell(spiked, "slow", 1, 1.0, seeds=(0, 1, 2), time_limit=0.5)
    assert time.perf_counter() - start < 10
    assert [r.status for r in rows] == [pb.TIMED_OUT] + ["not run (an earlier seed timed out)"] * 2
    assert all(math.isnan(r.energy) for r in rows)
    (cell,) = pb.summarise(rows)
    assert cell.status == pb.TIMED_OUT and cell.runs == 0 and not cell.ok


def test_a_failing_fit_is_recorded_with_its_error(spiked):
    (fit,) = pb.run_cell(spiked, "AG", 20, 1.0, seeds=(0,), time_limit=30)  # k > d
    assert fit.status.startswith("failed: ") and "k" in fit.status


def _fit(mechanism, energy, seconds, seed, guarantee=None, status="ok", data="toy", k=1, eps=1.0, n=20000, d=50):
    guarantee = guarantee or pb.MECHANISMS[mechanism].guarantee
    return pb.Fit(data, mechanism, guarantee, n, d, k, eps, 1e-6, seed, status, energy, seconds)


def _cell(mechanism, energies, seconds, **kw):
    return [_fit(mechanism, e, seconds, s, **kw) for s, e in enumerate(energies)]


def test_winners_and_targets():
    fits = (
        _cell("AG", [91.0, 93.0, 92.0], 0.1)  # 92 ± 0.58
        + _cell("PPCA", [60.0, 61.0, 62.0], 0.05)
        + _cell("SN", [99.0, 99.0, 99.0], 0.01)  # best overall, but NOT DP
        + _cell("PPCA Gibbs", [95.0, 95.0, 95.0], 0.2)  # better than AG, but unproven
        + _cell("diffprivlib PCA", [93.0, 93.5, 92.5], 0.5)  # 93 ± 0.29: within one s.e. of the difference? no
        + _cell("OpenDP PCA", [50.0, 10.0, 30.0], 0.05)  # less energy but faster than AG
    )
    cells = pb.summarise(fits)
    (w,) = pb.winners(cells)
    assert w["best"].mechanism == "SN" and w["best"].guarantee == "NOT DP"
    assert w["best_proven"].mechanism == "AG" and w["best_peer"].mechanism == "diffprivlib PCA"
    targets = {t["target"]: t for t in pb.check_targets(cells)}
    # AG 92 ± 0.577 vs diffprivlib 93 ± 0.289: gap 1 > √(0.577² + 0.289²) = 0.645
    assert not targets["peers: diffprivlib PCA"]["met"] and "less energy" in targets["peers: diffprivlib PCA"]["note"]
    assert not targets["peers: OpenDP PCA"]["met"] and "slower" in targets["peers: OpenDP PCA"]["note"]
    assert targets["90 %"]["met"]  # ε = 1, n >= 1e4, d <= 100: AG's 92 %
    table = pb.winners_table(cells).to_markdown()
    assert "| SN | NOT DP |" in table and "| AG |" in table


def test_targets_within_one_standard_error_and_timed_out_peers():
    fits = _cell("Dong", [88.0, 89.0, 90.0], 0.1) + _cell("diffprivlib PCA", [89.0, 89.5, 90.0], 0.3)
    (t,) = [t for t in pb.check_targets(pb.summarise(fits)) if t["target"].startswith("peers")]
    assert t["met"]  # 89 vs 89.5: gap 0.5 < √(0.577² + 0.289²)
    assert [t["met"] for t in pb.check_targets(pb.summarise(fits)) if t["target"] == "90 %"] == [False]  # 89 < 90
    timed = _cell("AG", [80.0, 81.0, 82.0], 0.1, d=784) + _cell(
        "OpenDP PCA", [math.nan] * 3, math.nan, status=pb.TIMED_OUT, d=784
    )
    targets = pb.check_targets(pb.summarise(timed))
    assert len(targets) == 1  # d = 784: no 90 % target
    assert targets[0]["met"] and "no release within the limit" in targets[0]["note"]


def test_fits_round_trip(tmp_path):
    fits = _cell("AG", [91.0, math.nan], 0.1) + _cell("SN", [1.0 / 3.0, 2.0], 0.25)
    back = pb.read_fits(pb.write_fits(fits, tmp_path / "fits.csv"))
    assert [f.energy for f in back][2:] == [1.0 / 3.0, 2.0] and math.isnan(back[1].energy)  # exact floats
    assert [(f.mechanism, f.guarantee, f.seed, f.seconds, f.k, f.status) for f in back] == [
        (f.mechanism, f.guarantee, f.seed, f.seconds, f.k, f.status) for f in fits
    ]


def test_benchmark_data_are_scaled_by_public_maps():
    data = pb.load_benchmark_data(["wine", "breast_cancer", "digits", "spiked_0.3"], n_synthetic=500)
    assert [(b.n, b.d) for b in data.values()] == [(178, 13), (569, 30), (1797, 64), (500, 100)]
    for bench in data.values():
        assert np.linalg.norm(bench.X, axis=1).max() <= 1.0
    from sklearn.datasets import load_wine

    ranges = pb._published_ranges(load_wine().DESCR, 13)
    assert tuple(ranges[0]) == (11.0, 14.8) and tuple(ranges[-1]) == (278.0, 1680.0)
    with pytest.raises(ValueError, match="unknown data set"):
        pb.load_benchmark_data(["iris"])


def test_peers_are_optional():
    labels = pb.available_mechanisms()
    assert labels[:8] == ["AG", "PPM", "PPCA", "PPCA Gibbs", "Amin", "Dong", "Hardt-Roth", "SN"]
    with pytest.raises(ValueError, match="unknown mechanisms"):
        pb.run_grid({}, ["nope"])


def test_energy_is_captured_energy(spiked):
    from dpstats.metrics import captured_energy

    V = np.linalg.qr(np.random.default_rng(3).standard_normal((8, 3)))[0]
    assert spiked.energy(V) == pytest.approx(captured_energy(spiked.X, V, kind="X"), rel=1e-12)
    with pytest.raises(ValueError, match="orthonormal"):
        spiked.energy(2 * V)
