"""Notebook helpers: reproducible sweeps, error bars, tables and figures."""

import csv

import numpy as np
import pytest

import dpstats as dps
from dpstats.compendium.experiments import (
    Table,
    mean_and_error,
    output_folder,
    plot_sweep,
    save_figure,
    save_table,
    sweep,
)


def _noisy_mean(eps, rng):
    return dps.mean([0.2, 0.4, 0.9], eps, bounds=(0, 1), rng=rng)


def test_sweep_is_reproducible_and_cells_are_independent():
    a = sweep(_noisy_mean, [0.5, 5.0], n_seeds=4, seed=3, progress=False)
    b = sweep(_noisy_mean, [0.5, 5.0, 50.0], n_seeds=6, seed=3, progress=False)
    assert a.shape == (2, 4)
    np.testing.assert_array_equal(a, b[:2, :4])  # growing the grid leaves existing cells unchanged
    assert len(np.unique(a)) == a.size


def test_sweep_with_vector_results_and_bad_arguments():
    out = sweep(lambda v, rng: [v, rng.random()], [1, 2], n_seeds=3, seed=0, progress=False)
    assert out.shape == (2, 3, 2)
    with pytest.raises(ValueError, match="n_seeds"):
        sweep(_noisy_mean, [1.0], n_seeds=0, seed=0)


def test_mean_and_error_is_the_standard_error():
    values = np.array([[1.0, 2.0, 3.0, 4.0]])
    mean, err = mean_and_error(values)
    assert mean[0] == 2.5
    assert err[0] == pytest.approx(np.std([1, 2, 3, 4], ddof=1) / 2)
    assert mean_and_error(np.ones((2, 1)))[1].tolist() == [0.0, 0.0]


def test_table_figure_and_folder(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder = output_folder(tmp_path / "nb")
    table = Table(["mechanism", "energy (%)"], [["AG", 91.234], ["PPM", 63.0]])
    assert "| AG | 91.2 |" in table.to_markdown()
    assert str(Table(["n"], [[1520], [np.int64(60000)]])) == "| n |\n|---|\n| 1520 |\n| 60000 |"
    path = save_table(table, folder, "energy")
    assert list(csv.reader(path.open())) == [["mechanism", "energy (%)"], ["AG", "91.2"], ["PPM", "63"]]
    with pytest.raises(ValueError, match="rows\\[0\\] has 1 cells"):
        Table(["a", "b"], [[1]])
    fig, ax = plt.subplots()
    plot_sweep(ax, [1, 2], np.array([[1.0, 2.0], [3.0, 5.0]]), label="x")
    assert save_figure(fig, folder, "fig").stat().st_size > 0
    assert output_folder(None) is None  # show, do not save
    assert save_table(table, None, "energy") is None and save_figure(fig, None, "fig") is None
    plt.close(fig)


def test_a_notebook_run_without_output_dir_leaves_no_folder(tmp_path, monkeypatch):
    """What nbval does in `make test`: run a notebook with output_dir = None in a real kernel, then kill it."""
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the kernel's temporary files go here
    params = nbformat.v4.new_code_cell("output_dir = None")
    body = nbformat.v4.new_code_cell(
        "import matplotlib.pyplot as plt\n"
        "from dpstats.compendium.experiments import Table, output_folder, save_figure, save_table\n"
        "output_dir = output_folder(output_dir)\n"
        "save_table(Table(['a'], [[1]]), output_dir, 't')\n"
        "save_figure(plt.figure(), output_dir, 'f')"
    )
    notebook = nbformat.v4.new_notebook(cells=[params, body])
    NotebookClient(notebook, kernel_name="python3", shutdown_kernel="immediate").execute()  # killed, as nbval does
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith("dpstats-")] == []


def test_comparison_verdicts_follow_the_rule():
    from dpstats.compendium.comparison import NOT_COMPARABLE, Claim, comparison_table, verdict_counts

    claims = [
        Claim("a number", "n = 10", "%", 5.0, 5.4, tolerance=0.5),  # within
        Claim("a number", "n = 10", "%", 5.0, 6.0, tolerance=0.5, reason="calibration"),  # explained
        Claim("a number", "n = 10", "%", 5.0, 6.0, tolerance=0.5),  # unexplained
        Claim("a claim", "n = 10", "", "holds", "fails", holds=False, reason=""),  # unexplained
        Claim("absent data", "—", "%", 5.0, None, reason="dpstats data fetch covtype"),
    ]
    assert [c.verdict() for c in claims] == [
        "reproduced within tolerance",
        "differs, explained",
        "not reproduced",
        "not reproduced",
        "not run",
    ]
    table = comparison_table(claims)
    assert table.header[-2:] == ["verdict", "reason"] and table.rows[0][5] == "0.4"
    quick = comparison_table(claims, profile="quick")
    assert [row[7] for row in quick.rows] == [NOT_COMPARABLE] * 4 + ["not run"]
    assert all(row[5] == "—" for row in quick.rows)  # no difference drawn for a quick run
    assert verdict_counts(c.verdict("full") for c in claims)["not reproduced"] == 2
    with pytest.raises(ValueError, match="give holds="):
        Claim("a claim", "", "", "holds", "text").verdict()
