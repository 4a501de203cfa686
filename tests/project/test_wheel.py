"""The built wheel holds every data file of the packages (``pip install .`` without the
repository: the zoo's models, the suite's reference results, the web table's files)."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from helpers import REPO

PACKAGES = ("guandan_env", "agents", "experiments")


def test_the_wheel_holds_every_packaged_data_file(tmp_path):
    tracked = subprocess.run(
        ["git", "ls-files", *PACKAGES], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    data = {f for f in tracked if not f.endswith(".py")}
    assert any(f.startswith("agents/zoo/models/") for f in data)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(REPO),
            "-w",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert sorted(data - names) == []
