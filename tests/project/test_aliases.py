"""The flat module names of 0.2 keep working for one version (``experiments._aliases``)."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from experiments._aliases import MOVED
from helpers import REPO


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_name_imports_the_moved_module(old):
    assert (REPO / (old.replace(".", "/") + ".py")).is_file()
    assert importlib.import_module(old) is importlib.import_module(MOVED[old])


@pytest.mark.parametrize("old", ["experiments.play", "experiments.tournament"])
def test_an_old_command_runs_the_moved_one(old):
    out = subprocess.run(
        [sys.executable, "-m", old, "--help"], capture_output=True, text=True, cwd=REPO
    )
    assert out.returncode == 0, out.stderr
    assert f"python -m {old} is now python -m {MOVED[old]}" in out.stderr
    assert "usage:" in out.stdout
