"""Trained policies as agents: ``load_checkpoint_agent(path, seed)`` (spec ``checkpoint:PATH``).

A self-play checkpoint directory (``runs/<name>/checkpoints/iter_000120/``) holds RLlib's
algorithm state and, beside it, ``policy.pt``: the trained ``agents.candidate_net.CandidateNet``
weights and model config in plain torch form. Loading imports neither Ray nor RLlib: the
network is rebuilt from ``policy.pt`` and plays ``argmax`` over the legal candidates
(``greedy=False``: samples with the agent's seeded numpy RNG).

``PATH`` may be the ``policy.pt`` file, a checkpoint directory, a behaviour-cloning output
directory, or a run directory (``runs/<name>``: its newest checkpoint). A policy of the old
flat-head network (format ``guandan-policy-v1``) is refused with an error that says so.

Every file here is read with ``torch.load(weights_only=True)``: tensors and plain containers
only, so a file made by someone else cannot run code (``docs/security.md``). ``league.pt``
(the self-play league beside ``policy.pt``) holds ``{member name: {key: tensor}}``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from agents.atomic_file import write_json_atomic
from agents.candidate_agent import CandidateAgent
from agents.candidate_net import CandidateNet
from agents.policy_file import WEIGHTS as WEIGHTS  # the weights a spec may name (registry)
from agents.policy_file import load_policy_file

POLICY_FILE = "policy.pt"
LEAGUE_FILE = "league.pt"
STATE_FILE = "trainer_state.json"  # written last: its presence marks a complete checkpoint
# league files written before they held tensors stored numpy arrays: these rebuild an array
# and nothing else (an object array would need more globals and is refused)
_NUMPY_ARRAYS = [
    np._core.multiarray._reconstruct,
    np.ndarray,
    np.dtype,
    *(type(np.dtype(t)) for t in ("float32", "float64", "int64", "int32", "bool", "uint8")),
]


def save_league(path: str | Path, members: list[tuple[str, dict]]) -> None:
    """Write league members (name, state dict of arrays) as plain tensors."""
    plain = {n: {k: torch.as_tensor(np.asarray(v)) for k, v in s.items()} for n, s in members}
    torch.save(plain, path)


def load_league(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """League members of ``save_league`` (or the older numpy form), read weights-only."""
    with torch.serialization.safe_globals(_NUMPY_ARRAYS):
        saved = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(saved, dict) or not all(isinstance(s, dict) for s in saved.values()):
        raise ValueError(f"{path} is not a league file (name -> state dict)")
    return {n: {k: np.asarray(v) for k, v in s.items()} for n, s in saved.items()}


def mark_complete(ckpt: str | Path, state: dict) -> None:
    """Write a checkpoint's ``trainer_state.json`` last and atomically.

    A process killed mid-write (a session's end, the OOM killer) leaves at most a temporary
    file, never a truncated state beside a complete name, so ``latest_checkpoint`` skips it.
    """
    write_json_atomic(Path(ckpt, STATE_FILE), state)


def complete_checkpoints(run_dir: str | Path) -> list[Path]:
    """A run's complete ``checkpoints/iter_*`` directories, oldest first (by iteration)."""
    ckpts = sorted(Path(run_dir, "checkpoints").glob("iter_*"))
    return [c for c in ckpts if c.is_dir() and (c / STATE_FILE).exists()]


def latest_checkpoint(run_dir: str | Path) -> Path | None:
    """Newest complete ``checkpoints/iter_*`` directory of a run (by iteration), or None."""
    ckpts = complete_checkpoints(run_dir)
    return ckpts[-1] if ckpts else None


def resolve_policy(path: str | Path) -> Path:
    """The ``policy.pt`` a path names (file, checkpoint directory or run directory)."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.exists():
        raise FileNotFoundError(f"no checkpoint at {path}")
    if (path / POLICY_FILE).exists():
        return path / POLICY_FILE
    if (path / "checkpoints").is_dir():
        ckpt = latest_checkpoint(path)
        if ckpt is None:
            raise FileNotFoundError(f"run directory {path} has no finished checkpoint yet")
        return resolve_policy(ckpt)
    raise FileNotFoundError(
        f"{path} holds no {POLICY_FILE} and no checkpoints/ (not a self-play run or checkpoint)"
    )


def load_policy_net(path: str | Path, weights: str = "ema") -> tuple[CandidateNet, dict]:
    """The network and the ``meta`` dict stored at ``path`` (see module docstring);
    ``weights``: the moving average of the weights where the run kept one (``"ema"``, the
    default) or the raw trained weights (``"raw"``)."""
    return load_policy_file(resolve_policy(path), weights)


def load_checkpoint_agent(
    path: str | Path, seed: int | None = None, greedy: bool = True, weights: str = "ema"
) -> CandidateAgent:
    """An agent playing the policy saved at ``path`` (policy file, checkpoint or run dir):
    by default the moving average of its weights, where the run kept one."""
    torch.set_num_threads(1)  # batch-1 inference; more threads only contend
    net, _ = load_policy_net(path, weights)
    return CandidateAgent(net, seed=seed, greedy=greedy, name=f"checkpoint:{path}")
