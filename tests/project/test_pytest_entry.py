"""A bare ``pytest`` finds the real packages, not the same-named test folders.

The console script's sys.path has no working directory; with only ``tests/`` on it,
``tests/agents/`` (no package) was found as a namespace package before the editable install's
finder, and every ``from agents import …`` failed to collect (pyproject, ``pythonpath``).
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_pytest_without_the_working_directory_on_sys_path_collects():
    # -I leaves the working directory off sys.path, as the console script does
    cmd = [sys.executable, "-I", "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    targets = ["tests/agents", "tests/evaluation/test_tournament.py"]
    out = subprocess.run([*cmd, *targets], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]
    assert " collected" in out.stdout.splitlines()[-1]
