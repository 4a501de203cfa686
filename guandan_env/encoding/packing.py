"""Compact storage of observations and masks: bit-packed, exact, numpy only.

Every observation entry is 0/1 except those of the scalar fields (``obs_layout``: kind
``SCALAR``; today one, ``table_bomb_power``), so an observation packs into ``OBS_BYTES`` bytes
of bits (the ``BINARY`` columns) plus one float32 (``SCALAR_INDEX``); a legal-action mask into
``MASK_BYTES`` bytes. Training samples, behaviour-cloning data and the runner-to-learner
transfer use these (≈ 0.5 KiB per decision instead of ≈ 8.8 KiB as float32 + int8).

``unpack_obs(pack_obs(x)) == x`` and ``unpack_masks(pack_masks(m)) == m`` exactly; bit order is
``numpy.packbits``' default (big-endian within a byte), which ``agents.candidate_net`` also
unpacks in torch.
"""

from __future__ import annotations

import numpy as np

from ..core.actions import NUM_ACTIONS
from .obs_layout import BINARY_COLUMNS, OBS_DIM, SCALAR_COLUMNS


def _as_slice(columns: np.ndarray) -> slice | np.ndarray:
    """A run of consecutive columns as a slice (a view, no copy), any other set as itself."""
    if columns.size and np.array_equal(columns, np.arange(columns[0], columns[-1] + 1)):
        return slice(int(columns[0]), int(columns[-1]) + 1)
    return columns


if SCALAR_COLUMNS.size != 1:
    # the stored formats (bc_data, vector_runner) and agents.candidate_net read one float
    raise ValueError(f"packing stores one scalar column, the layout has {SCALAR_COLUMNS.size}")
BINARY = _as_slice(BINARY_COLUMNS)  # ``obs[:, BINARY]``: the 0/1 part of observations
OBS_BITS = int(BINARY_COLUMNS.size)
SCALAR_INDEX = int(SCALAR_COLUMNS[0])  # ``obs[:, SCALAR_INDEX]``: the fraction
OBS_BYTES = (OBS_BITS + 7) // 8
MASK_BYTES = (NUM_ACTIONS + 7) // 8


def pack_obs(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(bits uint8 (N, OBS_BYTES), scalar float32 (N,))`` of ``float32 (N, OBS_DIM)``."""
    obs = np.asarray(obs)
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"observations must be (N, {OBS_DIM}), got {obs.shape}")
    binary = obs[:, BINARY]
    bits = np.packbits(binary != 0, axis=1)
    if not np.array_equal(np.unpackbits(bits, axis=1, count=OBS_BITS), binary):
        raise ValueError("observation entries of non-scalar fields must be 0 or 1 to pack exactly")
    return bits, np.ascontiguousarray(obs[:, SCALAR_INDEX], dtype=np.float32)


def unpack_obs(bits: np.ndarray, scalar: np.ndarray) -> np.ndarray:
    """The ``float32 (N, OBS_DIM)`` observations ``pack_obs`` stored."""
    out = np.empty((bits.shape[0], OBS_DIM), dtype=np.float32)
    out[:, BINARY] = np.unpackbits(bits, axis=1, count=OBS_BITS)
    out[:, SCALAR_INDEX] = scalar
    return out


def pack_masks(mask: np.ndarray) -> np.ndarray:
    """``uint8 (N, MASK_BYTES)`` bits of a ``(N, NUM_ACTIONS)`` 0/1 mask."""
    mask = np.asarray(mask)
    if mask.ndim != 2 or mask.shape[1] != NUM_ACTIONS:
        raise ValueError(f"masks must be (N, {NUM_ACTIONS}), got {mask.shape}")
    return np.packbits(mask != 0, axis=1)


def pack_candidates(rows: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    """``pack_masks`` bits of ``n`` masks whose set entries are ``(rows, ids)``, without
    building the 0/1 masks."""
    bits = np.zeros((n, MASK_BYTES), dtype=np.uint8)
    ids = np.asarray(ids, dtype=np.int64)
    bit = (0x80 >> (ids & 7)).astype(np.uint8)
    np.bitwise_or.at(bits, (np.asarray(rows, dtype=np.int64), ids >> 3), bit)
    return bits


def unpack_masks(bits: np.ndarray) -> np.ndarray:
    """``bool (N, NUM_ACTIONS)`` masks from ``pack_masks``."""
    return np.unpackbits(bits, axis=1, count=NUM_ACTIONS).view(bool)


_POPCOUNT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).sum(1, dtype=np.int64)
_BIT_POS = np.array(
    [
        np.flatnonzero(np.unpackbits(np.uint8(v))).tolist() + [0] * (8 - _POPCOUNT[v])
        for v in range(256)
    ],
    dtype=np.int64,
)  # (256, 8): positions of a byte's set bits (big-endian), padded
_BIT_SEL = np.arange(8)[None, :] < _POPCOUNT[:, None]  # (256, 8): which of them are real


def set_bits(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(rows, positions)`` int64 of every set bit of row-wise packed ``uint8 (N, nbytes)``,
    row-major and ascending within a row. Only the non-zero bytes are expanded, through
    per-byte lookup tables, faster than unpacking them or ``np.nonzero`` over the unpacked
    rows (masks have a handful of set bits in ~280 bytes; docs/benchmarks.md)."""
    bits = np.ascontiguousarray(bits, dtype=np.uint8)
    width = bits.shape[1]
    flat = np.flatnonzero(bits)
    v = bits.reshape(-1)[flat]
    at = np.repeat(flat, _POPCOUNT[v])
    rows = at // width
    return rows, (at - rows * width) * 8 + _BIT_POS[v][_BIT_SEL[v]]
