"""The model zoo: policies the project trained, shipped in the package, played in numpy.

``pretrained:NAME`` (``agents.registry``) plays the model ``NAME`` of ``models/`` (its
weights ``NAME.npz`` and card ``NAME.json``, ``agents.zoo.store``) through the numpy twin of
the candidate network (``agents.zoo.numpy_net``): no torch, no Ray. A card may list short
``aliases`` (``pretrained:default``). ``python -m agents.zoo list`` shows them;
``python -m agents.zoo export`` (needs torch) adds one from a self-play run. docs/zoo.md.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from agents.zoo.store import load_card, load_weights

MODELS_DIR = Path(__file__).parent / "models"


def model_names() -> list[str]:
    """The shipped models, by name."""
    return sorted(p.stem for p in MODELS_DIR.glob("*.json"))


def cards() -> list[dict[str, Any]]:
    """Every shipped model's card, strongest first (by its suite rating, else name)."""
    found = [load_card(MODELS_DIR / f"{n}.json") for n in model_names()]
    return sorted(found, key=lambda c: (-_rating(c), c["name"]))


def _rating(card: dict[str, Any]) -> float:
    rating = (card.get("strength") or {}).get("rating")
    return float(rating) if rating is not None else float("-inf")


def resolve(name: str) -> str:
    """The model a name or alias means; ``ValueError`` naming the shipped ones."""
    names = model_names()
    if name in names:
        return name
    for card in cards():
        if name in card.get("aliases", []):
            return card["name"]
    known = ", ".join(names + [a for c in cards() for a in c.get("aliases", [])])
    raise ValueError(f"no pretrained model {name!r}; shipped: {known or 'none'}")


def strongest() -> str | None:
    """The name of the strongest shipped model (what hosts offer first), or None."""
    found = cards()
    return found[0]["name"] if found else None


@lru_cache(maxsize=16)
def weights_sha256(name: str) -> str:
    """The SHA-256 of a shipped model's weights file (what a suite version pins)."""
    import hashlib

    return hashlib.sha256((MODELS_DIR / f"{resolve(name)}.npz").read_bytes()).hexdigest()


def pretrained_specs() -> list[str]:
    """``pretrained:NAME`` of every shipped model, strongest first."""
    return [f"pretrained:{c['name']}" for c in cards()]


def default_opponent() -> str:
    """What hosts seat when the user names no agent: the strongest shipped model, else the
    rule-based agent."""
    best = strongest()
    return f"pretrained:{best}" if best else "heuristic"


def load_model_weights(name: str) -> tuple[dict, dict]:
    """``(state dict as float32 arrays, header)`` of a shipped model (name or alias)."""
    return load_weights(MODELS_DIR / f"{resolve(name)}.npz")


@lru_cache(maxsize=8)
def _net(name: str):
    from agents.zoo.numpy_net import NumpyCandidateNet

    state, header = load_model_weights(name)
    return NumpyCandidateNet(state, header["model_config"])


def load_net(name: str):
    """The numpy network of a shipped model (cached: models are read-only)."""
    return _net(resolve(name))


def load_pretrained_agent(name: str, seed: int | None = None, greedy: bool = True):
    """An agent playing a shipped model (spec ``pretrained:NAME``)."""
    from agents.zoo.agent import PretrainedAgent

    return PretrainedAgent(load_net(name), seed=seed, greedy=greedy, name=f"pretrained:{name}")
