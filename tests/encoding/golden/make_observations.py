"""Regenerate the frozen observations: ``python tests/encoding/golden/make_observations.py``.

``observations.npz`` holds, bit-packed (``encoding.packing``), the observation of every seat
at every decision of a few random matches (random levels, tribute, returns, resistance,
bombs): ``tests/encoding/test_observation_frozen.py`` requires both encoders to give them back
bit for bit. A layout change shows up there; it is also a new env version
(``guandan_env/env_version.py``): bump ``ENV_VERSION``, then regenerate this file.
``states`` below builds the decisions.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # an installed or PYTHONPATH guandan_env comes first

from guandan_env.core.table_state import FIELD_NAMES, TableState, table_state  # noqa: E402
from guandan_env.encoding.observation import encode, encode_game  # noqa: E402
from guandan_env.env_version import ENV_VERSION  # noqa: E402
from guandan_env.envs.aec import raw_env  # noqa: E402

FILE = HERE / "observations.npz"
EPISODES = 3
MAX_DECISIONS = 120  # per episode: 360 decisions, 1,440 observations


def states() -> list[tuple[TableState, np.ndarray]]:
    """The decisions of random matches, in play order: each as a one-table ``TableState`` and
    the ``float32 (4, OBS_DIM)`` observations ``encode_game`` gives seats 0..3 (taken at once:
    the env's game changes on the next step)."""
    rng = np.random.default_rng(23)
    out = []
    for episode in range(EPISODES):
        env = raw_env(mode="match", random_levels=True, random_tribute=True, info_view=False)
        env.reset(seed=100 + episode)
        for _ in range(MAX_DECISIONS):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                break
            g = env.game
            out.append((table_state([g]), np.stack([encode_game(g, s) for s in range(4)])))
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
    return out


def frozen_observations() -> tuple[np.ndarray, np.ndarray]:
    """``(encode_game, encode)`` observations ``float32 (N, 4, OBS_DIM)`` of ``states()``,
    seats 0..3 (absolute); ``encode`` runs once per seat over all ``N`` decisions."""
    snaps = states()
    scalar = np.stack([obs for _, obs in snaps])
    parts = [ts for ts, _ in snaps]
    batch = TableState(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in FIELD_NAMES})
    n = len(parts)
    batched = np.stack([encode(batch, np.full(n, s)) for s in range(4)], axis=1)
    return scalar, batched


def pack(obs: np.ndarray) -> dict[str, np.ndarray]:
    """``obs (N, 4, D)`` stored independently of ``encoding.packing``: every entry's "non-zero"
    bit, and the (flat index, value) of the entries other than 0 and 1."""
    flat = obs.reshape(-1)
    odd = np.flatnonzero((flat != 0) & (flat != 1))
    return {
        "shape": np.array(obs.shape),
        "nonzero": np.packbits(flat != 0),
        "odd_index": odd,
        "odd_value": flat[odd],
    }


def unpack(data) -> np.ndarray:
    """The ``float32 (N, 4, D)`` observations ``pack`` stored."""
    shape = tuple(int(n) for n in data["shape"])
    flat = np.unpackbits(data["nonzero"], count=int(np.prod(shape))).astype(np.float32)
    flat[data["odd_index"]] = data["odd_value"]
    return flat.reshape(shape)


def main() -> None:
    scalar, batched = frozen_observations()
    if not np.array_equal(scalar, batched):
        raise SystemExit("encode and encode_game disagree: fix them before freezing")
    np.savez_compressed(FILE, env_version=np.array(ENV_VERSION), **pack(scalar))
    n, seats, dim = scalar.shape
    print(f"{FILE.name}: {n} decisions x {seats} seats, {dim} floats ({ENV_VERSION})")


if __name__ == "__main__":
    main()
