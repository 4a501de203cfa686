"""The worked-example notebooks run top to bottom (nbclient, kernel ``python3``), are stored
without outputs, and match their generator ``notebooks/make_notebooks.py``.

Each notebook runs in a temporary working folder (``GUANDAN_WORKDIR``) so ``results/`` and
``runs/`` are not written into the repository.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import REPO

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = REPO / "notebooks"


def execute(name: str, workdir: Path, monkeypatch, timeout: int = 600):
    monkeypatch.setenv("GUANDAN_WORKDIR", str(workdir))
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "0")
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    client = nbclient.NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(workdir)}},
    )
    client.execute()
    return nb


def _printed(nb) -> str:
    return "".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
    )


def test_quickstart_runs(tmp_path, monkeypatch):
    nb = execute("01_quickstart.ipynb", tmp_path, monkeypatch)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code)  # every cell ran
    printed = _printed(nb)
    assert "| phase:" in printed and "player_" in printed  # the first decision was shown


def test_tournament_analysis_runs(tmp_path, monkeypatch):
    execute("02_tournament_analysis.ipynb", tmp_path, monkeypatch)
    assert (tmp_path / "results" / "nb_tournament" / "summary.json").exists()


@pytest.mark.slow  # ~40 s; the same smoke run is tested in selfplay/test_trainer.py by default
def test_training_runs(tmp_path, monkeypatch):
    """A smoke-sized RLlib run (about 30 s on 2 cores)."""
    execute("03_training.ipynb", tmp_path, monkeypatch, timeout=900)
    assert (tmp_path / "runs" / "nb_smoke" / "eval.csv").exists()


def test_stored_without_outputs_and_in_sync_with_generator():
    sys.path.insert(0, str(NOTEBOOKS))
    try:
        import make_notebooks
    finally:
        sys.path.remove(str(NOTEBOOKS))
    built = make_notebooks.build()
    for name, nb in built.items():
        stored = nbformat.read(NOTEBOOKS / name, as_version=4)
        for cell in stored.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, name
        assert nbformat.writes(stored) == nbformat.writes(nb), (
            f"{name} differs from its generator: run python notebooks/make_notebooks.py"
        )
