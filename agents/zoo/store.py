"""The zoo's files: a model's weights (``NAME.npz``) and its card (``NAME.json``).

``NAME.npz`` holds the weights of a ``CandidateNet`` state dict (float16 unless saved
otherwise) under ``w/<key>`` and one JSON header (format, env version, observation size,
action count, model config). Plain numeric and string arrays: it loads with
``np.load(allow_pickle=False)``, so a file made by someone else cannot run code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.observation import OBS_DIM
from guandan_env.env_version import ENV_VERSION, check_env_version

ZOO_FORMAT = "guandan-zoo-v1"
DTYPES = ("float16", "float32")


def save_weights(
    path: str | Path, state: dict[str, np.ndarray], model_config: dict, dtype: str = "float16"
) -> Path:
    """Write ``state`` (a ``CandidateNet`` state dict as arrays) and its header to ``path``."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    header = {
        "format": ZOO_FORMAT,
        "env_version": ENV_VERSION,
        "obs_dim": OBS_DIM,
        "num_actions": NUM_ACTIONS,
        "model_config": dict(model_config),
        "dtype": dtype,
    }
    arrays = {f"w/{k}": np.asarray(v, dtype=dtype) for k, v in state.items()}
    bad = [k for k, v in arrays.items() if not np.isfinite(v).all()]
    if bad:
        raise ValueError(f"weights not finite in {dtype} (overflow?): {bad[:4]}")
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez_compressed(tmp, header=np.array(json.dumps(header, sort_keys=True)), **arrays)
    tmp.replace(path)
    return path


def load_weights(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(state dict as float32 arrays, header)`` of a zoo weights file; a clear error for
    anything else."""
    try:
        with np.load(path, allow_pickle=False) as f:
            header = json.loads(str(f["header"])) if "header" in f.files else {}
            state = {k[2:]: f[k].astype(np.float32) for k in f.files if k.startswith("w/")}
    except (OSError, ValueError, json.JSONDecodeError) as e:
        raise ValueError(f"{path} is not a {ZOO_FORMAT} weights file: {e}") from None
    if header.get("format") != ZOO_FORMAT:
        raise ValueError(f"{path} is not a {ZOO_FORMAT} weights file")
    check_env_version(header.get("env_version"), str(path))
    if header.get("obs_dim") != OBS_DIM or header.get("num_actions") != NUM_ACTIONS:
        raise ValueError(
            f"{path} was trained with obs_dim={header['obs_dim']}, num_actions="
            f"{header['num_actions']}; this env has {OBS_DIM}, {NUM_ACTIONS}"
        )
    return state, header


def load_card(path: str | Path) -> dict[str, Any]:
    """A model card (``NAME.json``)."""
    card = json.loads(Path(path).read_text(encoding="utf-8"))
    missing = [k for k in CARD_KEYS if k not in card]
    if missing:
        raise ValueError(f"model card {path} lacks {missing}")
    return card


def save_card(path: str | Path, card: dict[str, Any]) -> None:
    Path(path).write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# what every card says (docs/zoo.md explains each)
CARD_KEYS = (
    "name",  # the spec is pretrained:NAME
    "summary",  # one line
    "recipe",  # which training recipe made it (config file and what it changes)
    "command",  # the exact command that trained it
    "config",  # the repository config file it names (e.g. configs/default.yaml)
    "run_config",  # the run's whole resolved config (its config.yaml)
    "seed",
    "commit",  # code commit of the training run
    "env_version",
    "learner_samples",  # decisions with a choice the learner consumed
    "game_decisions",
    "wall_time_s",  # whole run, warm start included
    "machine",
    "weights",  # which weights are shipped (the moving average) and their dtype
    "strength",  # the frozen evaluation suite's table (filled by experiments.evaluate)
)
