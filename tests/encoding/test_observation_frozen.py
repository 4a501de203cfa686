"""Both encoders give back, bit for bit, the observations frozen in
``tests/encoding/golden/observations.npz`` (every seat at every decision of random matches: levels,
tribute, returns, resistance and bombs occur). Its ``guandan_v1`` file was written by the
encoders of commit 6552481, before the observation was declared field by field
(``encoding.obs_layout``). ``make_observations.py`` regenerates it when the layout changes on
purpose, which is a new env version.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from guandan_env.encoding.obs_layout import OBS_FIELDS
from guandan_env.env_version import ENV_VERSION

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))
import make_observations as frozen  # noqa: E402


@pytest.fixture(scope="module")
def stored() -> np.ndarray:
    with np.load(frozen.FILE) as data:
        assert str(data["env_version"]) == ENV_VERSION, (
            "the frozen observations are of another env version: regenerate them with "
            "python tests/encoding/golden/make_observations.py"
        )
        return frozen.unpack(data)


def _first_difference(got: np.ndarray, want: np.ndarray) -> str:
    n, seat, col = (int(i) for i in np.argwhere(got != want)[0])
    field = next(f for f in OBS_FIELDS if f.start <= col < f.stop)
    return f"decision {n}, seat {seat}, column {col} ({field.name}): {got[n, seat, col]}"


def test_both_encoders_give_the_frozen_observations_bit_for_bit(stored):
    scalar, batched = frozen.frozen_observations()
    assert scalar.shape == stored.shape
    for got in (scalar, batched):
        assert got.dtype == np.float32
        same = np.array_equal(got.view(np.uint32), stored.view(np.uint32))
        assert same, _first_difference(got, stored)
