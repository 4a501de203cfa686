"""Training-only heads beside the candidate network (issue 24 items 2 and 3).

* **A privileged critic.** The value used for GAE may also read the three other hands
  (perfect-information training, imperfect-information execution, as in PerfectDou):
  ``v(s) = value_head(h) + u · relu(A [hidden hands] + B h + c)``, ``u`` zero at start, so
  the warm start's value carries over. It lives here, never in ``CandidateNet``: the policy's
  logits do not read it, ``policy.pt`` does not hold it, and agents cannot use it.
* **A separate critic.** The value for GAE from a network of its own (``StateEncoder`` and a
  value head, the policy's trunk sizes), copied from the warm start's policy so that its value
  carries over; afterwards the value loss trains it alone and the policy's trunk learns from
  the policy's loss only (its ``value_head`` is frozen). With the privileged critic too, the
  hidden-hands branch reads the separate critic's encoding.
* **A belief head.** For each card kind the other three hands hold, which seat holds each
  copy: a softmax over the three seats per kind from the trunk's output ``h``, trained by the
  log loss of the true split (the labels are the same hidden hands). Its loss is reported
  beside a count-proportional guess (each seat's share of the cards left), the baseline a
  seat knows without thinking.
* **An outcome head.** The deal's result for the seat (−3…+3 levels, six classes).

The hidden hands of a decision are ``hidden_hands(hands, seat)``: the next seat's, the
partner's and the previous seat's card counts (``(N, 3 · 54)`` uint8, 0..2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from agents.candidate_net import CandidateNet, Decisions, StateEncoder
from guandan_env.core.cards import NUM_FACES

OTHERS = (1, 2, 3)  # seats after the actor: next, partner, previous
HIDDEN_DIM = len(OTHERS) * NUM_FACES
OUTCOMES = np.array([-3, -2, -1, 1, 2, 3], dtype=np.int64)  # a deal's reward for a seat


@dataclass(frozen=True)
class HeadsConfig:
    privileged: bool = False  # the critic also reads the three other hands
    separate: bool = False  # the critic is a network of its own, not the policy's value head
    width: int = 128  # hidden width of the privileged branch
    belief_coeff: float = 0.0  # weight of the belief head's log loss (0: no head)
    outcome_coeff: float = 0.0  # weight of the outcome head's log loss (0: no head)

    @property
    def any(self) -> bool:
        return self.separate or self.labels

    @property
    def labels(self) -> bool:
        """Whether samples must ship the hidden hands and the outcome (their labels)."""
        return self.privileged or self.belief_coeff > 0 or self.outcome_coeff > 0

    @classmethod
    def from_dict(cls, d: dict | None) -> HeadsConfig:
        d = dict(d or {})
        cfg = cls(
            privileged=bool(d.get("privileged", False)),
            separate=bool(d.get("separate", False)),
            width=int(d.get("width", 128)),
            belief_coeff=float(d.get("belief_coeff", 0.0)),
            outcome_coeff=float(d.get("outcome_coeff", 0.0)),
        )
        if cfg.width < 1 or cfg.belief_coeff < 0 or cfg.outcome_coeff < 0:
            raise ValueError("critic.width must be >= 1 and the head coefficients >= 0")
        return cfg


def hidden_hands(hands: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """The other three seats' hands of each decision, ``(N, 3 · 54)`` uint8, seen from the
    actor ``seats`` (``hands``: ``(N, 4, 54)`` card counts of the decisions' tables)."""
    rows = np.arange(len(seats))[:, None]
    others = (np.asarray(seats)[:, None] + np.array(OTHERS)[None, :]) % 4
    return hands[rows, others].reshape(len(seats), HIDDEN_DIM).astype(np.uint8)


def outcome_class(reward: torch.Tensor) -> torch.Tensor:
    """Class index of a deal's reward (−3…−1 → 0…2, 1…3 → 3…5)."""
    r = reward.long()
    return torch.where(r < 0, r + 3, r + 2)


CRITIC_PARTS = ("obs_embed.", "dense_in.", "trunk.", "value_head.")  # what it takes from a policy


def critic_state(policy: dict) -> dict:
    """The separate critic's weights (``TrainingHeads.critic``) from a policy's state dict:
    its encoder and value head, so that the critic starts with the policy's value."""
    return {k: v for k, v in policy.items() if k.startswith(CRITIC_PARTS)}


class SeparateCritic(StateEncoder):
    """A value network of its own: ``value_head(h(s))`` over an encoder of its own."""

    def __init__(self, trunk: list[int]) -> None:
        super().__init__(trunk)
        self.value_head = nn.Linear(trunk[-1], 1)

    def encode(self, d: Decisions) -> torch.Tensor:
        return self(d)


class TrainingHeads(nn.Module):
    """The heads of ``HeadsConfig`` over a policy trunk of sizes ``trunk`` (a list) or of
    output width ``trunk`` (an int; no separate critic)."""

    def __init__(self, trunk: int | list[int], cfg: HeadsConfig) -> None:
        super().__init__()
        self.cfg = cfg
        trunk_width = trunk if isinstance(trunk, int) else trunk[-1]
        if cfg.separate:
            if isinstance(trunk, int):
                raise ValueError("a separate critic needs the trunk's sizes, not its width")
            self.critic = SeparateCritic(list(trunk))
        if cfg.privileged:
            self.hidden_in = nn.Linear(HIDDEN_DIM, cfg.width)
            self.trunk_in = nn.Linear(trunk_width, cfg.width, bias=False)
            self.hidden_out = nn.Linear(cfg.width, 1)
            nn.init.zeros_(self.hidden_out.weight)  # zero at start: the warm start's value
            nn.init.zeros_(self.hidden_out.bias)
        if cfg.belief_coeff > 0:
            self.belief = nn.Linear(trunk_width, HIDDEN_DIM)
        if cfg.outcome_coeff > 0:
            self.outcome = nn.Linear(trunk_width, len(OUTCOMES))

    def value(
        self, net: CandidateNet, d: Decisions, h: torch.Tensor, hidden: torch.Tensor | None
    ) -> torch.Tensor:
        """The value GAE uses and the value loss fits, ``(N,)``: the policy's value head on its
        trunk output ``h``, or the separate critic's; plus the hidden hands' correction."""
        if self.cfg.separate:
            h = self.critic.encode(d)
            v = self.critic.value_head(h).squeeze(-1)
        else:
            v = net.value_head(h).squeeze(-1)
        if self.cfg.privileged:
            if hidden is None:
                raise ValueError("the privileged critic needs the hidden hands")
            v = v + self.value_correction(h, hidden)
        return v

    def value_correction(self, h: torch.Tensor, hidden: torch.Tensor) -> torch.Tensor:
        """What the hidden hands add to the value head's estimate, ``(N,)``."""
        z = torch.relu(self.hidden_in(hidden.float()) + self.trunk_in(h))
        return self.hidden_out(z).squeeze(-1)

    def belief_losses(
        self, h: torch.Tensor, hidden: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(log loss per unseen card copy, the count-proportional guess's)``."""
        counts = hidden.float().view(-1, len(OTHERS), NUM_FACES).transpose(1, 2)  # (N, 54, 3)
        logp = torch.log_softmax(self.belief(h).view(-1, NUM_FACES, len(OTHERS)), dim=-1)
        copies = counts.sum().clamp(min=1.0)
        loss = -(counts * logp).sum() / copies
        with torch.no_grad():
            left = counts.sum(1, keepdim=True)  # (N, 1, 3): cards left per seat
            guess = torch.log((left / left.sum(-1, keepdim=True).clamp(min=1.0)).clamp(min=1e-6))
            baseline = -(counts * guess).sum() / copies
        return loss, baseline

    def outcome_loss(self, h: torch.Tensor, reward: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(self.outcome(h), outcome_class(reward))
