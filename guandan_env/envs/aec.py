"""Guandan (掼蛋) as a PettingZoo AEC environment.

=====================  =============================================================
Import                 ``from guandan_env import env`` (wrapped), ``raw_env``; also
                       ``guandan_env.guandan_v1.env`` / ``.raw_env`` (PettingZoo naming)
Agents                 ``player_0`` … ``player_3`` (= seats 0–3; seats 0, 2 are team 0)
Parallel API           no (turn-based)
Action space           ``Discrete(NUM_ACTIONS)`` = 2,243 declared combinations, returns
Observation space      ``Dict(observation=Box(0, 1, (OBS_DIM,), float32),
                       action_mask=Box(0, 1, (NUM_ACTIONS,), int8))``
Reward                 per deal: winning team's seats +3/+2/+1 (partner 2nd/3rd/last,
                       R-6.3), the other team's seats the negative; zero-sum
=====================  =============================================================

Actions. One id per *declared combination* (``guandan_env.core.actions``): kind, compared key,
natural cards per rank, ♥N wildcards used, suit for straight flushes; id 0 is pass; the
last 54 ids return a face as tribute return (R-7.1). ``describe_action``/``declaration_text``
say what an id means; ``action_mask`` marks the legal ones for the agent to act (all zero for
the others). The engine picks suits (``guandan_env.core.choice``).

Observation (relative to the observing seat; relative seat k = absolute (seat + k) % 4):

{spec}

Modes and config (``env(**config)``; unknown keys raise ``ValueError``):

* ``mode="deal"`` (default): one deal per episode. ``random_levels=True`` draws both team
  levels and the leveling team; ``random_tribute=True`` draws a previous finishing order so
  tribute, returns and resistance occur.
* ``mode="match"``: deals from 2 until a team passes A (R-6.6); ``max_deals`` caps it (a
  capped match is a draw, reported as truncation); ``match_win_bonus`` is added to the
  winning team's seats (and subtracted from the others) when the match is won.
* ``illegal_action="raise"`` (default): an illegal action raises ``ValueError`` naming the
  action, the seat and the rule; the state is unchanged. ``"penalize"``: PettingZoo's
  convention — the offender gets ``illegal_penalty``, the episode terminates.
* ``render_mode`` ``"ansi"`` (``render()`` returns text) or ``"human"`` (prints it).
* ``info_view=False`` leaves ``view`` out of ``infos`` (below): more steps/s for learners
  that read only the observation (docs/benchmarks.md); the rule-based agents need the view.

Scenarios: ``reset(seed=..., options=...)`` with any of ``hands`` (4 card strings; partial
hands allowed), ``levels`` (team 0's and team 1's level, e.g. ``["5", "A"]``),
``leveling_team``, ``previous_order`` (last deal's finishing order; tribute is applied),
``leader``, ``a_failures`` (per team). Missing keys come from the seed; the same seed and
actions give the same trajectory. ``options={"game_seed": N}`` starts the episode the engine
seed ``N`` deals (``env.unwrapped.game.seed`` of a recorded game: how replays restart a game
whose env was reset without a seed); later resets continue from it.

Tribute is given automatically (R-7.1/7.6); each return is the receiving agent's decision
(``return`` actions), then play starts with the leader of R-7.4.

``infos[agent]`` holds ``last_play`` (text of the latest move at the table) for every agent;
the agent to act also gets ``seat``, ``level`` (text), ``table`` (play to beat, text or
None) and, unless ``info_view=False``, ``view`` (``SeatView``: what the seat may know, in
structured form, used by the rule-based agents; ``view.hand_text()`` and ``view.table_text()``
give readable text).

Version (``metadata["name"]``): ``{version}``; the history is in ``guandan_env/env_version.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from ..core import actions as T
from ..core import validate
from ..core.array_fields import fields_equal
from ..core.cards import RANK_TEXT, format_hand
from ..core.engine import Game, Tribute
from ..core.phase import Phase
from ..core.text import action_text
from ..encoding.events import DealEnded, Event, Played, Returned, deal_started
from ..encoding.obs_layout import spec_table
from ..encoding.observation import OBS_DIM, encode_game
from ..env_version import ENV_VERSION
from .scenario import (  # noqa: F401
    DEFAULT_CONFIG,
    SCENARIO_KEYS,
    build_game,
    check_config,
    check_options,
    start_scenario,
)

# enum members as module constants: ``Phase.X`` costs ~180 ns a lookup in Python 3.11
_PLAY, _RETURN = Phase.PLAY, Phase.RETURN

__doc__ = __doc__.replace("{spec}", spec_table()).replace("{version}", ENV_VERSION)

AGENTS = [f"player_{i}" for i in range(4)]
GAME_SEED = "game_seed"  # the reset option that names the engine seed itself


@dataclass(eq=False, slots=True)
class SeatView:
    """What one seat may know (R-8), in structured form for rule-based agents."""

    seat: int
    level: int
    hand: np.ndarray  # uint8[54] face counts (a copy)
    phase: Phase  # _PLAY or _RETURN
    table_action: int  # play to beat, -1 when leading
    table_seat: int  # absolute seat that made it, -1 when leading
    cards_left: list[int]  # per absolute seat
    finish_order: list[int]
    levels: list[int]
    leveling_team: int | None
    history: tuple[tuple[int, int, tuple[int, ...]], ...]  # (seat, action, faces) this deal
    tribute_faces: dict[int, int]  # giver seat -> face given (public)
    resist_jokers: list[int] = field(default_factory=list)  # seats that showed big jokers
    # the rest of the public record, for information sets (``envs.infoset``)
    to_act: int = -1
    leader: int = -1  # who leads (or led) the current trick
    deal_leader: int = -1  # who led the deal's first trick
    passes: int = 0  # passes since the play to beat
    move_in_trick: list[int] = field(default_factory=lambda: [0, 0, 0, 0])  # phase.TrickMove
    # (giver, receiver, tribute face, return face: the face if this seat exchanged it, else
    # -1 before the return and -2 after, R-8.2)
    tributes: tuple[tuple[int, int, int, int], ...] = ()
    pending_returns: list[int] = field(default_factory=list)  # indices into tributes
    resisted: bool = False
    a_failures: list[int] = field(default_factory=lambda: [0, 0])
    deal_number: int = 0
    max_deals: int | None = None
    deal_cards: int = 0  # cards in play this deal (108 for a full deal)

    def hand_text(self, mark_wild: bool = True) -> str:
        """The hand sorted in level order, ♥ wildcards marked ``*``."""
        return format_hand(self.hand, self.level, mark_wild=mark_wild)

    def table_text(self) -> str | None:
        """Declaration of the play to beat, None when leading."""
        return None if self.table_action < 0 else action_text(self.table_action, self.level)

    def __eq__(self, other: object) -> bool:
        return fields_equal(self, other) if isinstance(other, SeatView) else NotImplemented

    @property
    def partner(self) -> int:
        return (self.seat + 2) % 4

    @property
    def opponents(self) -> tuple[int, int]:
        return ((self.seat + 1) % 4, (self.seat + 3) % 4)


def seat_view(game: Game, seat: int) -> SeatView:
    following = game.phase == _PLAY and game.table_action >= 0
    return SeatView(
        seat=seat,
        level=game.level,
        hand=game.counts[seat].copy(),
        phase=game.phase,
        table_action=game.table_action if following else -1,
        table_seat=game.table_seat if following else -1,
        cards_left=game.cards_left(),
        finish_order=list(game.finish_order),
        levels=list(game.levels),
        leveling_team=game.leveling_team,
        history=tuple(game.history),  # plays are public; returns are not in it
        tribute_faces={t.giver: t.face for t in game.tributes},
        resist_jokers=list(game.resist_jokers),
        to_act=game.to_act,
        leader=game.leader,
        deal_leader=game.deal_leader,
        passes=game.passes if following else 0,
        move_in_trick=list(game.move_in_trick),
        tributes=tuple(_seen_tribute(t, seat) for t in game.tributes),
        pending_returns=list(game.pending_returns),
        resisted=game.resisted,
        a_failures=list(game.a_failures),
        deal_number=game.deal_number,
        max_deals=game.max_deals,
        deal_cards=game.deal_cards,
    )


def _seen_tribute(t: Tribute, seat: int) -> tuple[int, int, int, int]:
    """A tribute as ``seat`` knows it: the return face only if it exchanged it (R-8.2)."""
    if t.returned < 0 or seat in (t.giver, t.receiver):
        return (t.giver, t.receiver, t.face, t.returned)
    return (t.giver, t.receiver, t.face, -2)


class raw_env(AECEnv):
    metadata = {"render_modes": ["ansi", "human"], "name": ENV_VERSION, "is_parallelizable": False}

    def __init__(self, **config) -> None:
        super().__init__()
        self.config = check_config(config)
        self.render_mode = self.config["render_mode"]
        self._info_view = self.config["info_view"]
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (OBS_DIM,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (T.NUM_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(T.NUM_ACTIONS) for a in AGENTS}
        self._episode_rng = np.random.default_rng()
        self.game: Game | None = None
        self._mask: np.ndarray | None = None
        self.events: list[Event] = []  # what happened, typed (guandan_env.encoding.events)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset / observe
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        # everything is checked before the episode RNG is touched: a refused reset leaves
        # the next reset() dealing what it would have dealt
        seed = validate.seed(seed)
        if isinstance(options, dict) and GAME_SEED in options:
            options = dict(options)
            game_seed = validate.integer(options.pop(GAME_SEED), GAME_SEED, 0, 2**63 - 1)
            if seed is not None:
                raise ValueError(f"reset takes a seed or options['{GAME_SEED}'], not both")
            self._start(game_seed, check_options(options))
            self._episode_rng = np.random.default_rng(game_seed)
            return
        options = check_options(options)
        rng = np.random.default_rng(seed) if seed is not None else self._episode_rng
        state = rng.bit_generator.state
        try:
            self._start(int(rng.integers(2**63)), options)
        except ValueError:
            rng.bit_generator.state = state
            raise
        self._episode_rng = rng

    def _start(self, game_seed: int, options: dict) -> None:
        self.game = start_scenario(game_seed, self.config, options)
        self.agents = list(AGENTS)
        self.rewards = dict.fromkeys(AGENTS, 0.0)
        self._cumulative_rewards = dict.fromkeys(AGENTS, 0.0)
        self.terminations = dict.fromkeys(AGENTS, False)
        self.truncations = dict.fromkeys(AGENTS, False)
        self.infos = {a: {"last_play": None} for a in AGENTS}
        self.events = [deal_started(self.game)]
        self._select()

    def _select(self) -> None:
        g = self.game
        self.agent_selection = AGENTS[g.to_act]
        self._mask = g.legal_mask()
        info = self.infos[self.agent_selection]
        info.update(
            seat=g.to_act,
            level=RANK_TEXT[g.level],
            table=(
                action_text(g.table_action, g.level)
                if g.phase == _PLAY and g.table_action >= 0
                else None
            ),
        )
        if self._info_view:
            info["view"] = seat_view(g, g.to_act)

    def last(self, observe: bool = True):
        """PettingZoo's ``last()``, with a clear error before ``reset()`` and after every
        agent is done (instead of an ``AttributeError``/``KeyError``)."""
        self._require_reset("last")
        if not self.agents:
            raise ValueError("the episode is over (every agent is done): call reset() first")
        return super().last(observe)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._require_reset("observe")
        if agent not in AGENTS:
            raise ValueError(f"unknown agent {agent!r}; agents are {AGENTS}")
        obs = encode_game(self.game, AGENTS.index(agent))
        if agent == self.agent_selection and not self.terminations[agent]:
            mask = self._mask.view(np.int8).copy()
        else:
            mask = np.zeros(T.NUM_ACTIONS, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def action_mask(self) -> np.ndarray:
        """``bool[NUM_ACTIONS]`` of the agent to act (a copy)."""
        return self._mask.copy()

    # ------------------------------------------------------------------ step
    def _require_reset(self, what: str) -> None:
        if self.game is None:
            raise ValueError(f"call reset() before {what}()")

    def step(self, action) -> None:
        self._require_reset("step")
        if not self.agents:
            raise ValueError(
                "the episode is over (every agent is done): call reset() to play another"
            )
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        g = self.game
        seat = g.to_act
        # validate before anything changes: a refused action leaves rewards and state as
        # they were (a pending deal reward stays readable through last())
        try:
            a = validate.action_id(action)
        except ValueError as e:
            if self.config["illegal_action"] == "raise":
                raise ValueError(
                    f"illegal action {action!r} by {agent} (seat {seat}): {e}"
                ) from None
            a = -1
        illegal = a < 0 or not self._mask[a]
        if illegal and self.config["illegal_action"] == "raise":
            raise g.illegal_error(a)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = dict.fromkeys(self.agents, 0.0)
        if illegal:  # penalize mode
            self.rewards[agent] = float(self.config["illegal_penalty"])
            self.terminations = dict.fromkeys(self.agents, True)
            for ag in self.agents:
                self.infos[ag]["illegal_action"] = agent
            self._accumulate_rewards()
            return
        returning_to = g.tributes[g.pending_returns[0]].giver if g.phase == _RETURN else None
        level = g.level
        faces = g.step(a, self._mask)
        infos = self.infos
        event: Event
        if returning_to is None:
            event = Played(seat, a, tuple(faces), level)
            text = event.text()
            for ag in self.agents:
                infos[ag] = {"last_play": text}
        else:  # the card is seen only by the two seats that exchange it
            event = Returned(seat, returning_to, int(faces[0]))
            text = event.text()
            for i, ag in enumerate(AGENTS):
                infos[ag] = {"last_play": event.text(viewer=i)}
        self.events.append(event)
        if g.deal_over:
            self._end_of_deal()
        else:
            self._select()
        self._accumulate_rewards()
        if self.render_mode == "human":
            print(text)

    def _end_of_deal(self) -> None:
        g = self.game
        res = g.result
        r = res.rewards(float(self.config["match_win_bonus"]))
        for i, ag in enumerate(AGENTS):
            self.rewards[ag] = float(r[i])
            self.infos[ag]["deal_result"] = res.info()
        self.events.append(DealEnded(res))
        if self.config["mode"] == "deal":
            self.terminations = dict.fromkeys(AGENTS, True)
        elif g.match_over:
            if g.match_winner is None:
                self.truncations = dict.fromkeys(AGENTS, True)  # capped: a draw
            else:
                self.terminations = dict.fromkeys(AGENTS, True)
        else:
            g.next_deal()
            self.events.append(deal_started(g))
            self._select()

    # ------------------------------------------------------------------ render
    @property
    def log(self) -> list[str]:
        """The events as text lines, everything shown (``events`` has them typed)."""
        return [e.text() for e in self.events]

    def render(self) -> str | None:
        if self.render_mode is None:
            return None
        text = self.render_text()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def render_text(self) -> str:
        g = self.game
        lt = "-" if g.leveling_team is None else f"team {g.leveling_team}"
        out = [
            f"Deal {g.deal_number} at level {RANK_TEXT[g.level]} (leveling {lt}); "
            f"team levels {RANK_TEXT[g.levels[0]]} / {RANK_TEXT[g.levels[1]]}; "
            f"A-failures {g.a_failures[0]}/{g.a_failures[1]}; phase {g.phase}"
        ]
        for s in range(4):
            mark = ">" if (not g.deal_over and s == g.to_act) else " "
            n = int(g.hands[s].sum())
            place = f" (finished {g.finish_order.index(s) + 1})" if s in g.finish_order else ""
            hand = format_hand(g.hands[s], g.level, mark_wild=True)
            out.append(f"{mark} seat {s} [team {s % 2}] {n:2d} cards{place}: {hand}")
        if g.phase == _PLAY and g.table_action >= 0:
            out.append(f"table: seat {g.table_seat} {action_text(g.table_action, g.level)}")
        out.append("recent:")
        out += ["  " + line for line in self.log[-8:]]  # the omniscient view
        return "\n".join(out)

    def close(self) -> None:
        pass


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcing wrapper with direct ``last()`` and ``step()``: the inherited
    ones read attributes through ``__getattr__`` chains, on every step. A step after every
    agent is done is an error (``raw_env``), not the inherited warning."""

    def last(self, observe: bool = True):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.last(observe)

    def step(self, action) -> None:
        if self._has_reset:  # after the end raw_env raises a ValueError that says so
            self._has_updated = True
            self.env.step(action)
        else:  # the inherited check: error before reset
            super().step(action)


def env(**config) -> AECEnv:
    """The wrapped environment (PettingZoo's order enforcing wrapper)."""
    e = raw_env(**config)  # raw_env checks action bounds itself, with a ValueError
    return _OrderEnforcing(e)
