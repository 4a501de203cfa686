"""A pure-PyTorch REINFORCE loop on the batched engine, then an evaluation against random play.

    python -m experiments.examples.torch_loop                 # a few seconds on a CPU
    python -m experiments.examples.torch_loop --tables 512 --iters 50

Self-play: one masked MLP policy acts for every seat of every table. Each iteration collects
``--steps`` lockstep decisions on ``--tables`` tables (auto-reset), gives every decision the
final deal reward of the seat that made it (rewards come only at deal ends, ±1/±2/±3),
and takes one policy-gradient step with a mean baseline. Decisions whose deal has not ended
yet are carried over to the next iteration and trained on once their deal ends. The
evaluation seats the policy as team 0 (seats 0 and 2) against uniformly random legal play
and reports team 0's mean deal reward.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from torch import nn

from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.observation import OBS_DIM
from guandan_env.envs.vector import VectorGuandanEnv


class Policy(nn.Module):
    def __init__(self, hidden: int = 256) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(OBS_DIM, hidden), nn.ReLU(), nn.Linear(hidden, NUM_ACTIONS)
        )

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked logits: illegal actions get -inf (every mask has a legal action)."""
        return self.net(obs).masked_fill(~mask, float("-inf"))


def act(policy: Policy, obs: np.ndarray, mask: np.ndarray, greedy: bool = False) -> np.ndarray:
    """Sample (Gumbel-max: much faster than ``Categorical`` over 2,243 actions) or argmax."""
    with torch.no_grad():
        logits = policy(torch.from_numpy(obs), torch.from_numpy(mask))
        if not greedy:
            logits -= torch.log(-torch.log(torch.rand_like(logits).clamp_(1e-12, 1.0)))
        return logits.argmax(1).numpy()


def assign_returns(seats: np.ndarray, rewards: np.ndarray, deal_over: np.ndarray) -> np.ndarray:
    """Return of each decision ``(T, B)``: the reward its seat gets at the end of the deal it
    was made in; NaN when that deal has not ended within the window."""
    t_len, b = seats.shape
    out = np.full((t_len, b), np.nan, dtype=np.float32)
    pending = np.full((b, 4), np.nan, dtype=np.float32)  # rewards of the deal in progress
    for t in range(t_len - 1, -1, -1):
        ended = deal_over[t]
        pending[ended] = rewards[t][ended]
        out[t] = pending[np.arange(b), seats[t]]
    return out


def train(args) -> Policy:
    torch.manual_seed(args.seed)
    policy = Policy(args.hidden)
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    env = VectorGuandanEnv(args.tables, seed=args.seed)
    obs, mask, seat = env.reset()
    carry: list[tuple] = []  # steps holding decisions of deals still running
    for it in range(args.iters):
        t0 = time.perf_counter()
        window = list(carry)
        deals = 0
        for _ in range(args.steps):
            actions = act(policy, obs, mask)
            next_obs, next_mask, next_seat, rewards, done, info = env.step(actions)
            fresh = np.ones(args.tables, dtype=bool)  # decision not trained on yet
            window.append((obs, mask, seat, actions, rewards, info["deal_over"], fresh))
            deals += int(info["deal_over"].sum())
            obs, mask, seat = next_obs, next_mask, next_seat
        o, m, s, a, r, over, fresh = (np.stack(x) for x in zip(*window, strict=True))
        ret = assign_returns(s, r, over)
        valid = ~np.isnan(ret)
        use = valid & fresh
        # carry the steps that still hold decisions of running deals (the window's tail)
        open_tail = np.where(valid.any(0), valid[::-1].argmax(0), len(window))
        keep = int(open_tail.max())
        carry = []
        for k in range(len(window) - keep, len(window)):
            step = window[k]
            carry.append((*step[:6], step[6] & ~valid[k]))
        if not use.any():
            print(f"iter {it:3d}: no deal has ended yet", flush=True)
            continue
        sel = torch.from_numpy(use)
        logits = policy(torch.from_numpy(o)[sel], torch.from_numpy(m)[sel])
        logp = torch.log_softmax(logits, 1).gather(1, torch.from_numpy(a)[sel][:, None])[:, 0]
        g = torch.from_numpy(ret)[sel]
        loss = -(logp * (g - g.mean())).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        dt = time.perf_counter() - t0
        print(
            f"iter {it:3d}: {int(sel.sum()):6d} decisions with returns, {deals:4d} deals, "
            f"loss {loss.item():+.4f}, {args.tables * args.steps / dt:,.0f} decisions/s",
            flush=True,
        )
    return policy


def evaluate(policy: Policy, tables: int, deals: int, seed: int) -> float:
    """Team 0 (seats 0, 2) plays the policy greedily, team 1 random legal play."""
    env = VectorGuandanEnv(tables, seed=seed + 1)
    rng = np.random.default_rng(seed)
    obs, mask, seat = env.reset()
    total, n = 0.0, 0
    while n < deals:
        mine = act(policy, obs, mask, greedy=True)
        actions = np.where(seat % 2 == 0, mine, env.sample_actions(rng))
        obs, mask, seat, rewards, done, info = env.step(actions)
        over = info["deal_over"]
        total += float(rewards[over, 0].sum())
        n += int(over.sum())
    return total / n


def main(argv: list[str] | None = None) -> float:
    """Train, evaluate against random, print and return the mean deal reward of team 0."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tables", type=int, default=128)
    p.add_argument("--steps", type=int, default=100, help="lockstep decisions per iteration")
    p.add_argument("--iters", type=int, default=5)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--eval-deals", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--torch-threads", type=int, default=1)
    args = p.parse_args(argv)
    torch.set_num_threads(args.torch_threads)  # small matrices: threads only add overhead
    policy = train(args)
    score = evaluate(policy, args.tables, args.eval_deals, args.seed)
    print(f"team 0 (policy) vs random: mean deal reward {score:+.3f} over {args.eval_deals}+ deals")
    return score


if __name__ == "__main__":
    main()
