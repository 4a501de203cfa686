"""The game's declared bounds, and one random-play check that enforces them on every engine.

As OpenSpiel's generic random-simulation tests do for its games, ``BOUNDS`` declares what
every deal must satisfy whatever is played, and ``check_random_play`` plays uniformly random
legal actions through one of the three ways to run a deal — ``engine.Game``, the PettingZoo
AEC env (``guandan_env.env``), the batched ``VectorGuandanEnv`` — and raises
``AssertionError`` naming the first violation:

* exactly one seat may act, and it has at least one legal action (R-5);
* the two decks are conserved: every face is held or played, twice in all (R-1.1; ``Game``
  and the vector env, whose card arrays are public);
* a deal takes at most ``BOUNDS.max_decisions_per_deal`` decisions: every play removes at
  least one card and is followed by at most three passes, plus up to two tribute returns;
* observations have ``OBS_DIM`` finite values in ``[0, 1]`` (the observation space);
* a deal's rewards are ±1, ±2 or ±3, equal for partners, zero-sum (R-6.3).

``tests/envs/test_conformance.py`` runs it for all three with random levels and tribute.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core import actions as T
from ..encoding.observation import OBS_DIM


@dataclass(frozen=True)
class GameBounds:
    """What any deal satisfies (module docstring)."""

    players: int = 4
    num_actions: int = T.NUM_ACTIONS
    obs_dim: int = OBS_DIM
    obs_low: float = 0.0
    obs_high: float = 1.0
    copies_per_face: int = 2  # two decks
    cards_per_deal: int = 108
    max_returns_per_deal: int = 2  # two tributes at most, one return each
    deal_reward_values: tuple[int, ...] = (1, 2, 3)  # levels won or lost

    @property
    def max_decisions_per_deal(self) -> int:
        return 4 * self.cards_per_deal + self.max_returns_per_deal


BOUNDS = GameBounds()
ENGINES = ("game", "aec", "vector")


def check_random_play(engine: str, deals: int, seed: int = 0, tables: int = 16) -> dict:
    """Play ``deals`` deals of uniformly random legal actions through ``engine`` (one of
    ``ENGINES``; the vector env runs ``tables`` tables) with random levels and tribute, and
    check ``BOUNDS`` at every decision; returns counts of what was checked."""
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    run = {"game": _play_game, "aec": _play_aec, "vector": _play_vector}[engine]
    return run(deals, np.random.default_rng(seed), tables)


def check_observation(obs: np.ndarray, where: str) -> None:
    obs = np.asarray(obs)
    assert obs.shape[-1] == BOUNDS.obs_dim, f"{where}: observation of shape {obs.shape}"
    assert np.isfinite(obs).all(), f"{where}: a non-finite observation value"
    low, high = obs.min(), obs.max()
    assert BOUNDS.obs_low <= low and high <= BOUNDS.obs_high, (
        f"{where}: observation values in [{low}, {high}], outside "
        f"[{BOUNDS.obs_low}, {BOUNDS.obs_high}]"
    )


def check_deal_rewards(rewards, where: str) -> None:
    r = np.asarray(rewards, dtype=np.float64).reshape(BOUNDS.players)
    assert r.sum() == 0, f"{where}: deal rewards {r.tolist()} are not zero-sum (R-6.3)"
    assert r[0] == r[2] and r[1] == r[3], f"{where}: partners rewarded unequally {r.tolist()}"
    assert abs(r[0]) in BOUNDS.deal_reward_values, f"{where}: deal reward {r[0]} (R-6.3)"


def check_cards(hands: np.ndarray, played: np.ndarray, where: str) -> None:
    total = hands.sum(-2, dtype=np.int64) + played.sum(-2, dtype=np.int64)
    assert (total == BOUNDS.copies_per_face).all(), f"{where}: cards not conserved (R-1.1)"


def _check_decisions(n: int, where: str) -> None:
    assert n <= BOUNDS.max_decisions_per_deal, (
        f"{where}: {n} decisions in one deal, bound {BOUNDS.max_decisions_per_deal}"
    )


def _pick(mask: np.ndarray, rng: np.random.Generator, where: str) -> int:
    legal = np.flatnonzero(mask)
    assert legal.size > 0, f"{where}: the seat to act has no legal action"
    return int(legal[rng.integers(legal.size)])


def _play_game(deals: int, rng: np.random.Generator, tables: int) -> dict:
    from ..core.engine import Game
    from ..core.table_state import table_state
    from ..encoding.observation import encode

    decisions = 0
    for d in range(deals):
        g = Game.new(seed=int(rng.integers(2**31)))
        g.levels = [int(x) for x in rng.integers(0, 13, size=2)]
        g.leveling_team = int(rng.integers(2))
        g.start_deal(previous_order=[int(x) for x in rng.permutation(4)])
        n = 0
        while not g.deal_over:
            where = f"Game deal {d} decision {n}"
            check_observation(encode(table_state([g]), np.array([g.to_act])), where)
            g.step(_pick(g.legal_mask(), rng, where))
            check_cards(g.hands, g.played, where)
            n += 1
            _check_decisions(n, where)
        check_deal_rewards(g.result.rewards(), f"Game deal {d}")
        decisions += n
    return {"deals": deals, "decisions": decisions}


def _play_aec(deals: int, rng: np.random.Generator, tables: int) -> dict:
    from .aec import env as make_env

    env = make_env(mode="deal", random_levels=True, random_tribute=True)
    decisions = 0
    for d in range(deals):
        env.reset(seed=int(rng.integers(2**31)))
        game = env.unwrapped.game
        n = 0
        totals = dict.fromkeys(env.possible_agents, 0.0)
        for agent in env.agent_iter(max_iter=BOUNDS.max_decisions_per_deal + 8):
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            where = f"AEC deal {d} decision {n}"
            acting = [a for a in env.possible_agents if env.observe(a)["action_mask"].any()]
            assert acting == [agent], f"{where}: seats with legal actions {acting}, not {agent}"
            check_observation(obs["observation"], where)
            env.step(_pick(obs["action_mask"], rng, where))
            check_cards(game.hands, game.played, where)
            for a in env.possible_agents:
                totals[a] += env.unwrapped.rewards[a]
            n += 1
            _check_decisions(n, where)
        assert game.deal_over, f"AEC deal {d} did not end within the decision bound"
        check_deal_rewards([totals[a] for a in env.possible_agents], f"AEC deal {d}")
        decisions += n
    return {"deals": deals, "decisions": decisions}


def _play_vector(deals: int, rng: np.random.Generator, tables: int) -> dict:
    from .vector import VectorGuandanEnv

    env = VectorGuandanEnv(tables, random_levels=True, random_tribute=True)
    obs, mask, seat = env.reset(seed=int(rng.integers(2**31)))
    steps = np.zeros(tables, dtype=np.int64)
    done_deals = decisions = 0
    while done_deals < deals:
        where = f"vector step {decisions // tables}"
        check_observation(obs, where)
        assert mask.any(1).all(), f"{where}: a table whose seat to act has no legal action"
        actions = env.sample_actions(rng)
        assert env.is_legal(actions).all(), f"{where}: sample_actions drew an illegal action"
        obs, mask, seat, rewards, done, _ = env.step(actions)
        steps += 1
        decisions += tables
        _check_decisions(int(steps.max()), where)
        check_cards(
            env.state.hands, env.state.played, where
        )  # a done table already holds its next deal
        for t in np.flatnonzero(done):
            check_deal_rewards(rewards[t], f"{where}, table {t}")
            done_deals += 1
        assert not rewards[~done].any(), f"{where}: a reward before a deal ended"
        steps[done] = 0
    return {"deals": done_deals, "decisions": decisions}
