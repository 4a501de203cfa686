"""TorchRL on the AEC env: ``python -m experiments.examples.interop_torchrl [--frames 400]``.

TorchRL's own ``PettingZooWrapper`` (``use_mask=True``) drives ``guandan_env.env()``; one
shared MLP plays all four seats through ``MaskedCategorical`` actors (illegal actions get
probability 0), a ``Collector`` collects whole deals, and one REINFORCE step on the
collected batch shows that gradients flow. ``guandan_env.envs.interop.array_infos`` empties the
env's text infos, which TorchRL would otherwise try to turn into tensors.
"""

from __future__ import annotations

import argparse

import torch
from tensordict.nn import TensorDictModule, TensorDictSequential
from torch import nn
from torchrl.collectors import Collector
from torchrl.envs.libs.pettingzoo import PettingZooWrapper
from torchrl.modules import MaskedCategorical, ProbabilisticActor

import guandan_env
from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.observation import OBS_DIM
from guandan_env.envs.aec import AGENTS
from guandan_env.envs.interop import array_infos


def make_env(seed: int = 0) -> PettingZooWrapper:
    return PettingZooWrapper(env=array_infos(guandan_env.env()), use_mask=True, seed=seed)


def make_policy(hidden: int = 128) -> tuple[TensorDictSequential, nn.Module]:
    """One MLP shared by the four seats; each seat's actor samples among its legal actions."""
    net = nn.Sequential(nn.Linear(OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, NUM_ACTIONS))
    actors = []
    for agent in AGENTS:
        logits = TensorDictModule(
            net, in_keys=[(agent, "observation", "observation")], out_keys=[(agent, "logits")]
        )
        actors.append(
            ProbabilisticActor(
                logits,
                in_keys={"logits": (agent, "logits"), "mask": (agent, "action_mask")},
                out_keys=[(agent, "action")],
                distribution_class=MaskedCategorical,
                return_log_prob=True,
                log_prob_key=(agent, "log_prob"),
            )
        )
    return TensorDictSequential(*actors), net


def collect_and_learn(frames: int = 400, seed: int = 0) -> dict:
    """Collect ``frames`` steps (whole deals), then one REINFORCE step; returns a summary."""
    torch.manual_seed(seed)
    env = make_env(seed)
    policy, net = make_policy()
    collector = Collector(
        env,
        policy,
        frames_per_batch=frames,
        total_frames=frames,
        split_trajs=False,
        auto_register_policy_transforms=False,  # a feed-forward policy needs none
    )
    batch = next(iter(collector))
    collector.shutdown()
    done = batch["next", "done"].reshape(-1).float()
    legal, decisions = True, 0
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    opt.zero_grad()
    loss = torch.zeros(())
    for agent in AGENTS:
        n = batch.batch_size[0]  # each seat is its own group, of one agent
        acting = batch[agent, "mask"].reshape(n)  # TorchRL's flag: this seat acted here
        action = batch[agent, "action"].reshape(n)[acting]
        mask = batch[agent, "action_mask"].reshape(n, NUM_ACTIONS)[acting]
        legal &= bool(mask.gather(-1, action.unsqueeze(-1)).all())
        decisions += int(acting.sum())
        # the seat's deal reward (paid when the deal ends) as the return of its decisions
        reward = batch["next", agent, "reward"].reshape(-1)
        ret = torch.zeros_like(reward)
        g = torch.zeros(())
        for t in range(reward.shape[0] - 1, -1, -1):
            g = reward[t] + g * (1.0 - done[t])
            ret[t] = g
        logits = net(batch[agent, "observation", "observation"].reshape(n, OBS_DIM)[acting])
        dist = MaskedCategorical(logits=logits, mask=mask)
        loss = loss - (dist.log_prob(action) * ret[acting]).mean()
    loss.backward()
    opt.step()
    deals = int(batch["next", "done"].sum())
    return {
        "frames": int(batch.batch_size[0]),
        "decisions": decisions,
        "deals": deals,
        "all_legal": legal,
        "grad_norm": float(sum(p.grad.norm() for p in net.parameters())),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.examples.interop_torchrl")
    p.add_argument("--frames", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(collect_and_learn(args.frames, args.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
