"""Record the games of agents as a ``"games"`` decision dataset (see the package
docstring and ``docs/datasets.md``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from experiments.evaluation.duplicate import derive_seed, game_config, pair_seed, play_game
from experiments.evaluation.tournament import schedule
from guandan_env.encoding.packing import pack_masks, pack_obs
from guandan_env.envs import dataset as fmt
from guandan_env.envs.aec import AGENTS
from guandan_env.envs.scenario import check_options


class _Recorder:
    """A ``play_game`` observer: the acting seat's observation and mask before each
    decision, the step's rewards and boundaries after it."""

    def __init__(self) -> None:
        self.obs: list[np.ndarray] = []
        self.mask: list[np.ndarray] = []
        self.rows: list[tuple[int, int, tuple[float, ...], bool, bool, bool]] = []

    def before_act(self, env) -> None:
        ob = env.observe(env.agent_selection)
        self.obs.append(ob["observation"])
        self.mask.append(ob["action_mask"])

    def after_step(self, env, seat: int, action: int, hands_before) -> None:
        rewards = tuple(float(env.rewards[a]) for a in AGENTS)
        deal_end = env.infos[AGENTS[0]].get("deal_result") is not None
        self.rows.append(
            (
                seat,
                action,
                rewards,
                deal_end,
                all(env.terminations.values()),
                all(env.truncations.values()),
            )
        )


def games_of(agents: list[str], pairs: int, seed: int) -> list[dict[str, Any]]:
    """The games to record: the tournament's duplicate schedule for two or more specs; for
    one spec, one game per pair seed with the spec on every seat."""
    if len(agents) >= 2:
        return schedule(agents, pairs, seed)
    return [
        {"pair": p, "swap": 0, "seed": pair_seed(seed, p), "seats": [agents[0]] * 4}
        for p in range(pairs)
    ]


def record_games(
    agents: list[str],
    pairs: int = 10,
    seed: int = 0,
    mode: str = "deal",
    config: dict[str, Any] | None = None,
    options: dict[str, Any] | None = None,
    progress: bool = False,
) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """``(arrays, meta)`` of the recorded games (``GAME_FIELDS`` and ``EPISODE_FIELDS``).

    Game ``e`` is dealt by ``env.reset(seed=episode_seed[e], options=meta["options"])``
    under ``meta["config"]``; seat ``s``'s agent is ``meta["agents"][episode_seats[e, s]]``,
    reset with ``derive_seed(episode_agent_seed[e], s)`` (as in a tournament)."""
    from agents.registry import make_agent

    agents = [a.strip() for a in agents]
    if not agents or len(set(agents)) != len(agents):
        raise ValueError(f"give one or more distinct agent specs, got {agents}")
    if isinstance(pairs, bool) or not isinstance(pairs, int) or pairs < 1:
        raise ValueError(f"pairs must be an integer >= 1, got {pairs!r}")
    cfg = game_config(mode, **(config or {}))
    cfg["illegal_action"] = "raise"
    opts = dict(options or {})
    check_options(opts)
    built = {(spec, s): make_agent(spec, seed=s) for spec in agents for s in range(4)}
    games = games_of(agents, pairs, seed)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(games), unit="game", desc="dataset")
    rec = _Recorder()
    starts, lengths, seeds, agent_seeds, seats = [], [], [], [], []
    for g in games:
        start = len(rec.rows)
        agent_seed = derive_seed(g["seed"], g["swap"])
        by_seat = [built[(spec, s)] for s, spec in enumerate(g["seats"])]
        play_game(by_seat, g["seed"], cfg, opts or None, agent_seed=agent_seed, observer=rec)
        starts.append(start)
        lengths.append(len(rec.rows) - start)
        seeds.append(g["seed"])
        agent_seeds.append(agent_seed)
        seats.append([agents.index(spec) for spec in g["seats"]])
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    n = len(rec.rows)
    data = fmt.empty(fmt.GAME_FIELDS) if n == 0 else {}
    if n:
        bits, scalar = pack_obs(np.stack(rec.obs))
        seat_c, action_c, reward_c, end_c, term_c, trunc_c = zip(*rec.rows, strict=True)
        data = {
            "obs_bits": bits,
            "obs_scalar": scalar,
            "mask_bits": pack_masks(np.stack(rec.mask)),
            "action": np.asarray(action_c, dtype=np.int16),
            "seat": np.asarray(seat_c, dtype=np.int8),
            "reward": np.asarray(reward_c, dtype=np.float32).reshape(n, 4),
            "deal_end": np.asarray(end_c, dtype=np.bool_),
            "terminated": np.asarray(term_c, dtype=np.bool_),
            "truncated": np.asarray(trunc_c, dtype=np.bool_),
            "episode": np.repeat(
                np.arange(len(games), dtype=np.int32), np.asarray(lengths, dtype=np.int64)
            ),
        }
    data.update(
        episode_start=np.asarray(starts, dtype=np.int64),
        episode_length=np.asarray(lengths, dtype=np.int32),
        episode_seed=np.asarray(seeds, dtype=np.int64),
        episode_agent_seed=np.asarray(agent_seeds, dtype=np.int64),
        episode_seats=np.asarray(seats, dtype=np.int16).reshape(len(games), 4),
    )
    meta = {
        "kind": "games",
        "agents": agents,
        "pairs": pairs,
        "seed": seed,
        "mode": mode,
        "config": cfg,
        "options": opts,
        "decisions": n,
        "episodes": len(games),
        "deals": int(data["deal_end"].sum()),
    }
    return data, meta


def save(path: str | Path, data: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write a recorded dataset (reproducibly: equal games, equal bytes)."""
    fmt.write(path, data, meta, {**fmt.GAME_FIELDS, **fmt.EPISODE_FIELDS})
