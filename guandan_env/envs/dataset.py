"""Decision datasets: one ``.npz`` of bit-packed decisions, written byte-for-byte
reproducibly, read with numpy alone (``docs/datasets.md`` is the reference).

Two kinds share the container and the core columns:

* ``"games"`` (``python -m experiments.dataset``): every decision of whole recorded games,
  with rewards, episode boundaries and the seeds that replay each game (``GAME_FIELDS``,
  ``EPISODE_FIELDS``);
* ``"bc"``: the warm start's heuristic decisions (``experiments.selfplay.warm_start.data``),
  which also reads ``"games"`` files through ``bc_columns``.

Per decision (``n`` rows), the core (``CORE_FIELDS``):

==============  ==========================  ==============================================
``obs_bits``    ``uint8 (n, OBS_BYTES)``    the acting seat's observation but its last
                                            entry, bits (``guandan_env.encoding.packing``)
``obs_scalar``  ``float32 (n,)``            its last entry (``table_bomb_power``)
``mask_bits``   ``uint8 (n, MASK_BYTES)``   its legal actions, bits
``action``      ``int16 (n,)``              the action taken (an id of the action table)
``seat``        ``int8 (n,)``               the acting seat (absolute, 0..3)
==============  ==========================  ==============================================

``observations(data)`` and ``masks(data)`` unpack them (``float32 (n, OBS_DIM)``, ``bool (n,
NUM_ACTIONS)``), exactly. The file: ``numpy.savez`` layout (each field one ``.npy`` member,
in declaration order, uncompressed, zip timestamps fixed at 1980-01-01) plus ``meta_json``,
a JSON string with ``format`` (``"guandan-decisions"``), ``version``, ``kind``, ``env``
(``guandan_v1``) and what produced the data. Equal inputs give equal bytes.

``torch_dataset(data)`` wraps the arrays as a ``torch.utils.data.Dataset`` (torch is
imported then, not before).
"""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..encoding.packing import MASK_BYTES, OBS_BYTES, unpack_masks, unpack_obs
from ..env_version import ENV_VERSION, check_env_version

FORMAT = "guandan-decisions"
VERSION = 1
Fields = dict[str, tuple[np.dtype, tuple[int, ...]]]  # name -> (dtype, shape of one row)

CORE_FIELDS: Fields = {
    "obs_bits": (np.dtype(np.uint8), (OBS_BYTES,)),
    "obs_scalar": (np.dtype(np.float32), ()),
    "mask_bits": (np.dtype(np.uint8), (MASK_BYTES,)),
    "action": (np.dtype(np.int16), ()),
    "seat": (np.dtype(np.int8), ()),
}
# a "games" file: per decision, the core and what the step did
GAME_FIELDS: Fields = {
    **CORE_FIELDS,
    "reward": (np.dtype(np.float32), (4,)),  # the step's reward to each absolute seat
    "deal_end": (np.dtype(np.bool_), ()),  # the step ended a deal
    "terminated": (np.dtype(np.bool_), ()),  # the step ended the episode (game over)
    "truncated": (np.dtype(np.bool_), ()),  # the step ended it by the max_deals cap
    "episode": (np.dtype(np.int32), ()),  # the row's episode (index into EPISODE_FIELDS)
}
# ... and per episode (``E`` rows): where it is and how to replay it
EPISODE_FIELDS: Fields = {
    "episode_start": (np.dtype(np.int64), ()),  # its first decision row
    "episode_length": (np.dtype(np.int32), ()),  # its number of decisions
    "episode_seed": (np.dtype(np.int64), ()),  # env.reset(seed=...) that deals it
    "episode_agent_seed": (np.dtype(np.int64), ()),  # agents reset with derive_seed(it, seat)
    "episode_seats": (np.dtype(np.int16), (4,)),  # index into meta["agents"] per seat
}
FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip member timestamps: the bytes depend on data only


def empty(fields: Fields) -> dict[str, np.ndarray]:
    """Zero-length arrays of ``fields``."""
    return {k: np.zeros((0, *shape), dtype=dt) for k, (dt, shape) in fields.items()}


def check(data: Mapping[str, np.ndarray], fields: Fields) -> None:
    """``ValueError`` unless ``data`` has every field with its dtype and row shape."""
    for name, (dt, shape) in fields.items():
        if name not in data:
            raise ValueError(f"decision data lacks the field {name!r}")
        a = data[name]
        if a.dtype != dt or a.shape[1:] != shape:
            raise ValueError(
                f"field {name!r} must be {dt} (n, {', '.join(map(str, shape))}), got "
                f"{a.dtype} {a.shape}"
            )


def write(
    path: str | Path, data: Mapping[str, np.ndarray], meta: Mapping[str, Any], fields: Fields
) -> None:
    """Write ``fields`` of ``data`` and ``meta`` (+ format, version, env) to ``path``:
    atomically (temporary file + rename) and reproducibly (equal inputs, equal bytes)."""
    check(data, fields)
    meta = {**meta, "format": FORMAT, "version": VERSION, "env": ENV_VERSION}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    members = {k: np.ascontiguousarray(data[k]) for k in fields}
    members["meta_json"] = np.array(json.dumps(meta, sort_keys=True, default=str))
    try:
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            for name, arr in members.items():
                info = zipfile.ZipInfo(f"{name}.npy", date_time=FIXED_TIME)
                info.external_attr = 0o644 << 16
                with z.open(info, "w", force_zip64=True) as f:
                    np.lib.format.write_array(f, arr, allow_pickle=False)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read(
    path: str | Path, fields: Fields | None = None
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(arrays, meta)`` of a file ``write`` (or ``numpy.savez``) wrote; with ``fields``,
    exactly those (checked), else every array. Never unpickles."""
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(str(z["meta_json"])) if "meta_json" in z.files else {}
        names = list(fields) if fields is not None else [f for f in z.files if f != "meta_json"]
        missing = [n for n in names if n not in z.files]
        if missing:
            raise ValueError(f"{path}: no field(s) {missing} (a {meta.get('kind')!r} file)")
        data = {k: z[k] for k in names}
    if meta.get("format", FORMAT) != FORMAT:
        raise ValueError(f"{path} is a {meta['format']!r} file, not {FORMAT!r}")
    check_env_version(meta.get("env"), str(path))
    if fields is not None:
        check(data, fields)
    return data, meta


def load_games(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A ``"games"`` file: ``GAME_FIELDS`` and ``EPISODE_FIELDS`` arrays, and its meta."""
    data, meta = read(path, {**GAME_FIELDS, **EPISODE_FIELDS})
    if meta.get("kind") != "games":
        raise ValueError(f"{path} holds {meta.get('kind')!r} data, not recorded games")
    return data, meta


# ---------------------------------------------------------------------------- columns
def observations(data: Mapping[str, np.ndarray], rows: Any = slice(None)) -> np.ndarray:
    """``float32 (k, OBS_DIM)`` observations of ``rows`` (an index, slice or mask)."""
    return unpack_obs(
        np.atleast_2d(data["obs_bits"][rows]), np.atleast_1d(data["obs_scalar"][rows])
    )


def masks(data: Mapping[str, np.ndarray], rows: Any = slice(None)) -> np.ndarray:
    """``bool (k, NUM_ACTIONS)`` legal-action masks of ``rows``."""
    return unpack_masks(np.atleast_2d(data["mask_bits"][rows]))


def deal_index(data: Mapping[str, np.ndarray]) -> np.ndarray:
    """``int32 (n,)``: the deal each row belongs to, counted over the file (a deal ends on a
    ``deal_end`` row)."""
    ends = np.asarray(data["deal_end"], dtype=bool)
    return (np.cumsum(ends, dtype=np.int64) - ends).astype(np.int32)


def deal_returns(data: Mapping[str, np.ndarray]) -> np.ndarray:
    """``float32 (n,)``: the acting seat's reward for the deal the row belongs to (R-6.3,
    with the match bonus on a match's last deal): the imitation and value target."""
    ends = np.flatnonzero(data["deal_end"])
    deal = deal_index(data)
    if len(ends) <= int(deal.max(initial=-1)):
        raise ValueError("the last deal has no deal_end row (an incomplete game)")
    return data["reward"][ends[deal], data["seat"].astype(np.int64)].astype(np.float32)


def bc_columns(data: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The warm start's per-decision columns from ``"games"`` data: the core plus
    ``n_legal`` (int16), ``ret`` (float32, ``deal_returns``) and ``deal`` (int32)."""
    n_legal = np.unpackbits(data["mask_bits"], axis=1).sum(axis=1, dtype=np.int64)
    return {
        **{k: data[k] for k in CORE_FIELDS},
        "n_legal": n_legal.astype(np.int16),
        "ret": deal_returns(data),
        "deal": deal_index(data),
    }


# ---------------------------------------------------------------------------- torch
_TORCH_CLASS: Any = None


def torch_dataset(data: Mapping[str, np.ndarray]):
    """A ``torch.utils.data.Dataset`` over ``data``'s decisions (torch imported here).

    Item ``i`` is a dict of tensors: ``observation`` float32 (OBS_DIM,), ``action_mask``
    bool (NUM_ACTIONS,), ``action`` and ``seat`` int64, and ``reward`` float32 (4,) when the
    data has it. Unpacking happens per item, so the dataset stays bit-packed in memory."""
    global _TORCH_CLASS
    if _TORCH_CLASS is None:
        import torch
        from torch.utils.data import Dataset

        class DecisionDataset(Dataset):
            """Bit-packed decisions, unpacked per item (``guandan_env.envs.dataset``)."""

            def __init__(self, arrays: Mapping[str, np.ndarray]) -> None:
                self.arrays = dict(arrays)

            def __len__(self) -> int:
                return len(self.arrays["action"])

            def __getitem__(self, i: int) -> dict[str, Any]:
                a = self.arrays
                item = {
                    "observation": torch.from_numpy(observations(a, [i])[0]),
                    "action_mask": torch.from_numpy(masks(a, [i])[0].copy()),
                    "action": torch.tensor(int(a["action"][i]), dtype=torch.int64),
                    "seat": torch.tensor(int(a["seat"][i]), dtype=torch.int64),
                }
                if "reward" in a:
                    item["reward"] = torch.from_numpy(a["reward"][i].copy())
                return item

        _TORCH_CLASS = DecisionDataset
    return _TORCH_CLASS(data)
