"""guandan_env.encoding.packing: exact bit-packed storage of observations and masks."""

from __future__ import annotations

import numpy as np
import pytest

from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.observation import OBS_DIM
from guandan_env.encoding.packing import pack_masks, pack_obs, set_bits, unpack_masks, unpack_obs


@pytest.mark.parametrize("density", [0.0, 0.003, 0.1, 0.5, 1.0])
def test_set_bits_equals_nonzero_of_the_unpacked_rows(density):
    rng = np.random.default_rng(int(density * 1000))
    mask = rng.random((37, NUM_ACTIONS)) < density
    rows, pos = set_bits(pack_masks(mask))
    want_rows, want_pos = np.nonzero(mask)
    assert rows.dtype == np.int64 and pos.dtype == np.int64
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(pos, want_pos)


def test_pack_round_trips_exactly_and_rejects_non_binary_entries():
    rng = np.random.default_rng(0)
    obs = (rng.random((5, OBS_DIM)) < 0.2).astype(np.float32)
    obs[:, -1] = rng.random(5)
    bits, scalar = pack_obs(obs)
    np.testing.assert_array_equal(unpack_obs(bits, scalar), obs)
    mask = rng.random((5, NUM_ACTIONS)) < 0.01
    np.testing.assert_array_equal(unpack_masks(pack_masks(mask)), mask)
    obs[0, 3] = 0.5
    with pytest.raises(ValueError, match="0 or 1"):
        pack_obs(obs)
