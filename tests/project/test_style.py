"""The style the developers' guide asks for holds everywhere: ``ruff check`` and
``ruff format --check`` (the project's config in pyproject.toml) pass on the whole tree."""

from __future__ import annotations

import subprocess
import sys

from helpers import REPO


def test_ruff_lints_and_formats_the_tree_clean():
    for args in (["check", "."], ["format", "--check", "."]):
        out = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=REPO, capture_output=True, text=True
        )
        assert out.returncode == 0, f"ruff {' '.join(args)}:\n{out.stdout[-3000:]}{out.stderr}"
