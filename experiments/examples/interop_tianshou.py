"""Tianshou on our AEC env: ``python -m experiments.examples.interop_tianshou [--episodes 8]``.

Tianshou's own PettingZoo path, nothing of ours in between but ``guandan_env.envs.interop``:

* ``tianshou.env.PettingZooEnv`` wraps ``array_infos(guandan_env.env(info_view=False))``
  (Tianshou would batch our text infos) and turns the ``action_mask`` into ``obs.mask``;
* a ``MultiAgentOffPolicyAlgorithm`` dispatches by ``agent_id``: team 0 (``player_0`` and
  ``player_2``) learns with one DQN (masked Q-values: an illegal id is never chosen), team 1
  plays Tianshou's masked random policy;
* a ``Collector`` over two vectorised envs gathers whole deals into a replay buffer, and the
  DQN takes gradient steps on it.

It prints the deals collected, the learners' share of the decisions, the loss, and the
legality of every action taken. With ``--seed`` the env deals are seeded (Tianshou's random
policy draws from NumPy's global RNG, which the script seeds too).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from torch import nn

TEAM0 = ("player_0", "player_2")


class QNet(nn.Module):
    """Observation -> one Q-value per action id (masking is Tianshou's, via ``obs.mask``)."""

    def __init__(self, obs_dim: int, num_actions: int, hidden: int = 128) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, num_actions)
        )

    def forward(self, obs, state=None, info=None):
        obs = torch.as_tensor(np.asarray(obs), dtype=torch.float32)
        return self.body(obs), state


def make_env():
    from tianshou.env import PettingZooEnv

    import guandan_env
    from guandan_env.envs.interop import array_infos

    return PettingZooEnv(array_infos(guandan_env.env(info_view=False)))


def build(seed: int):
    """``(algorithm, collector, buffer)``: DQN for team 0, masked random for team 1."""
    from tianshou.algorithm import DQN
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.algorithm.random import MARLRandomDiscreteMaskedOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv

    from guandan_env.core.actions import NUM_ACTIONS
    from guandan_env.encoding.observation import OBS_DIM

    torch.manual_seed(seed)
    np.random.seed(seed)  # Tianshou's random policy and epsilon draws use the global RNG
    env = make_env()
    net = QNet(OBS_DIM, NUM_ACTIONS)
    policy = DiscreteQLearningPolicy(
        model=net,
        action_space=env.action_space,
        observation_space=env.observation_space["observation"],
        eps_training=0.1,
    )
    dqn = DQN(policy=policy, optim=AdamOptimizerFactory(lr=1e-3), gamma=1.0, target_update_freq=50)
    random_team = MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space)
    per_agent = [dqn if a in TEAM0 else random_team for a in env.agents]
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=per_agent, env=env)
    envs = DummyVectorEnv([make_env for _ in range(2)])
    envs.seed(seed)
    buffer = VectorReplayBuffer(20_000, len(envs))
    collector = Collector(algorithm, envs, buffer, exploration_noise=True)
    return algorithm, collector, buffer


def run(episodes: int = 8, updates: int = 4, seed: int = 0) -> dict:
    """Collect ``episodes`` whole deals, then ``updates`` DQN steps; returns what happened."""
    from tianshou.algorithm.algorithm_base import policy_within_training_step

    from guandan_env.core.actions import NUM_ACTIONS

    algorithm, collector, buffer = build(seed)
    with policy_within_training_step(algorithm.policy):  # what Tianshou's Trainer does
        stats = collector.collect(n_episode=episodes, reset_before_collect=True)
    data = buffer.sample(0)[0]
    agent_ids = np.asarray(data.obs.agent_id)
    acts = np.asarray(data.act, dtype=np.int64)
    masks = np.asarray(data.obs.mask, dtype=bool)
    legal = bool(masks[np.arange(acts.size), acts].all()) and masks.shape[1] == NUM_ACTIONS
    losses = []
    with policy_within_training_step(algorithm.policy):
        for _ in range(updates):
            out = algorithm.update(buffer=buffer, sample_size=64)
            losses.append(float(out.get_loss_stats_dict()["player_0/loss"]))
    return {
        "episodes": int(stats.n_collected_episodes),
        "decisions": int(acts.size),
        "team0_share": float(np.isin(agent_ids, TEAM0).mean()),
        "all_actions_legal": legal,
        "losses": losses,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.examples.interop_tianshou")
    p.add_argument("--episodes", type=int, default=8, help="whole deals to collect")
    p.add_argument("--updates", type=int, default=4, help="DQN gradient steps after collecting")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.episodes < 1 or args.updates < 0:
        p.error("--episodes must be >= 1 and --updates >= 0")
    out = run(args.episodes, args.updates, args.seed)
    print(
        f"collected {out['episodes']} deals, {out['decisions']} decisions "
        f"({out['team0_share']:.0%} by the DQN team), every action legal: "
        f"{out['all_actions_legal']}; DQN losses {[round(x, 3) for x in out['losses']]}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
