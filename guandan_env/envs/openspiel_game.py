"""Guandan as an OpenSpiel game: ``import guandan_env.envs.openspiel_game`` registers
``python_guandan`` with ``pyspiel`` (``pip install open_spiel``, our ``interop`` extra).

    import pyspiel, guandan_env.envs.openspiel_game
    game = pyspiel.load_game("python_guandan", {"cards_per_seat": 27, "level": "2"})

One deal of the rules in RULES.md, played by our engine:

* **Chance.** The deal is dealt card by card: ``4 * cards_per_seat`` chance nodes, each
  outcome a face id 0..53 with probability proportional to its copies left (R-1.2), card
  ``i`` going to seat ``i % 4``; then one chance node draws the leader (R-7.5), outcomes 0..3.
* **Players** 0..3 are our seats (0 and 2 one team). **Actions** are our 2,243 declared
  combinations (``guandan_env.core.actions``; only pass and plays occur, no tribute in a first
  deal); ``action_to_string`` is our declaration text and the id (``pair 55 #23``).
* **Returns** at the end: the winners +3/+2/+1, the others the negative (R-6.3): zero-sum,
  utilities in [-3, 3].
* **Observation tensor**: our encoder's ``OBS_DIM`` floats for the seat (R-8: own hand,
  public plays, counts). **Information state**: a string (own hand and every move so far,
  perfect recall); no information-state tensor, because our encoder summarises the history
  rather than recalling it in full.
* **Parameters**: ``cards_per_seat`` (1..27, default 27: smaller deals make tree search
  cheap) and ``level`` (``"2"``…``"A"``, default ``"2"``: both teams at that level, team 0
  leveling).
* **Resampling**: ``state.resample_from_infostate(player, sampler)`` deals the cards the
  player has not seen anew, uniformly (``guandan_env.core.infoset``), so OpenSpiel's
  information-set MCTS (``open_spiel.python.algorithms.ismcts``) can play it.
* **Bounds**: ``max_game_length`` counts decisions: every play removes a card and is followed
  by at most three passes, so ``4 * 4 * cards_per_seat``.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from ..core import actions as T
from ..core.cards import NUM_FACES, RANK_TEXT, format_cards
from ..core.engine import Game
from ..core.infoset import Sampler
from ..core.text import action_text
from ..encoding.observation import OBS_DIM, encode_game
from .infoset import infoset

SEATS = 4
DEFAULT_PARAMS = {"cards_per_seat": 27, "level": "2"}

_GAME_TYPE = pyspiel.GameType(
    short_name="python_guandan",
    long_name="Guandan (guandan_env)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=SEATS,
    min_num_players=SEATS,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=DEFAULT_PARAMS,
)


def _params(params: dict | None) -> tuple[int, int]:
    p = {**DEFAULT_PARAMS, **(params or {})}
    unknown = sorted(set(p) - set(DEFAULT_PARAMS))
    if unknown:
        raise ValueError(
            f"unknown python_guandan parameter(s) {unknown}; known: {list(DEFAULT_PARAMS)}"
        )
    cards = p["cards_per_seat"]
    if isinstance(cards, bool) or not isinstance(cards, int) or not 1 <= cards <= 27:
        raise ValueError(f"cards_per_seat must be an integer in 1..27 (R-1.2), got {cards!r}")
    if p["level"] not in RANK_TEXT[:13]:
        raise ValueError(f"level must be a rank 2..A (R-2.1), got {p['level']!r}")
    return cards, RANK_TEXT.index(p["level"])


class GuandanGame(pyspiel.Game):
    def __init__(self, params: dict | None = None) -> None:
        self.cards_per_seat, self.level = _params(params)
        info = pyspiel.GameInfo(
            num_distinct_actions=T.NUM_ACTIONS,
            max_chance_outcomes=NUM_FACES,
            num_players=SEATS,
            min_utility=-3.0,
            max_utility=3.0,
            utility_sum=0.0,
            max_game_length=16 * self.cards_per_seat,
        )
        super().__init__(_GAME_TYPE, info, {**DEFAULT_PARAMS, **(params or {})})

    def new_initial_state(self) -> GuandanState:
        return GuandanState(self)

    def make_py_observer(self, iig_obs_type=None, params=None) -> GuandanObserver:
        return GuandanObserver(
            iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params
        )


class GuandanState(pyspiel.State):
    def __init__(self, game: GuandanGame) -> None:
        super().__init__(game)
        self.cards_per_seat = game.cards_per_seat
        self.level = game.level
        self.dealt: list[int] = []
        self.counts = np.zeros((SEATS, NUM_FACES), dtype=np.uint8)
        self.game: Game | None = None
        self.moves: list[tuple[int, int, tuple[int, ...]]] = []

    # ------------------------------------------------------------------ chance
    def _dealing(self) -> bool:
        return len(self.dealt) < SEATS * self.cards_per_seat

    def current_player(self) -> int:
        if self.game is None:
            return pyspiel.PlayerId.CHANCE
        if self.game.deal_over:
            return pyspiel.PlayerId.TERMINAL
        return int(self.game.to_act)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        if not self._dealing():
            return [(s, 1.0 / SEATS) for s in range(SEATS)]  # the first leader
        left = 2 - self.counts.sum(0)
        total = float(left.sum())
        return [(int(f), float(left[f]) / total) for f in np.flatnonzero(left)]

    # ------------------------------------------------------------------ moves
    def _legal_actions(self, player: int) -> list[int]:
        if self.game is None or player != self.game.to_act or self.game.deal_over:
            return []
        return np.flatnonzero(self.game.legal_mask()).tolist()

    def _apply_action(self, action: int) -> None:
        if self.game is None:
            if self._dealing():
                seat = len(self.dealt) % SEATS
                if self.counts[:, action].sum() >= 2:
                    raise ValueError(f"face {action} is dealt twice already (R-1.2)")
                self.dealt.append(int(action))
                self.counts[seat, action] += 1
                return
            if not 0 <= action < SEATS:
                raise ValueError(f"the leader must be a seat 0..3, got {action}")
            g = Game.new(seed=0)
            g.levels = [self.level, self.level]
            g.leveling_team = 0
            g.start_deal(hands=self.counts, leader=int(action))
            self.game = g
            return
        seat = self.game.to_act
        faces = self.game.step(int(action))
        self.moves.append((seat, int(action), tuple(faces)))

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self._dealing():
                return f"deal {format_cards([action])} to seat {len(self.dealt) % SEATS}"
            return f"seat {action} leads"
        # our declaration text, plus the id: OpenSpiel needs one string per legal action, and
        # e.g. a wildcard in a full house's triple or in its pair reads the same
        return f"{action_text(int(action), self.level)} #{int(action)}"

    def resample_from_infostate(self, player_id: int, probability_sampler) -> GuandanState:
        """A state ``player_id`` cannot tell from this one: the cards it has not seen dealt
        anew, uniformly (``core.infoset.Sampler`` over the player's ``SeatView``: the hidden
        hands are not read). ``probability_sampler()`` (a number in [0, 1)) seeds it."""
        if self.game is None or self.game.deal_over:
            return self.clone()
        seed = int(float(probability_sampler()) * 2.0**53)
        rng = np.random.default_rng(seed)
        sampler = Sampler(infoset(self.game, int(player_id)))
        world = sampler.game(sampler.hands(1, rng)[0], rng)
        out = GuandanState(self.get_game())
        out.counts = (world.hands + world.played).astype(np.uint8)  # as dealt (no tribute)
        per_seat = [np.repeat(np.arange(NUM_FACES), out.counts[s]).tolist() for s in range(SEATS)]
        out.dealt = [per_seat[i % SEATS][i // SEATS] for i in range(SEATS * self.cards_per_seat)]
        out.game, out.moves = world, list(self.moves)
        return out

    def is_terminal(self) -> bool:
        return self.game is not None and self.game.deal_over

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0] * SEATS
        return self.game.result.rewards().astype(float).tolist()

    def __str__(self) -> str:
        if self.game is None:
            return f"dealing: {len(self.dealt)} of {SEATS * self.cards_per_seat} cards"
        return self.game.describe()

    # ------------------------------------------------------------------ views
    def history_text(self, player: int) -> str:
        """Own hand as dealt and every move so far (public, R-8.1)."""
        dealt = format_cards(np.repeat(np.arange(NUM_FACES), self.counts[player]))
        lines = [f"seat {player} level {RANK_TEXT[self.level]} dealt {dealt}"]
        if self.game is not None:
            lines.append(f"leader {self.game.deal_leader}")
        for seat, a, faces in self.moves:
            lines.append(f"{seat}: {action_text(a, self.level)} [{format_cards(faces)}]")
        return "\n".join(lines)


class GuandanObserver:
    """``PyObserver``: our encoder's tensor (imperfect recall) and text views."""

    def __init__(self, iig_obs_type, params) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        size = 0 if self.perfect_recall else OBS_DIM
        self.tensor = np.zeros(size, np.float32)
        self.dict = {"observation": self.tensor}

    def set_from(self, state: GuandanState, player: int) -> None:
        if self.perfect_recall:
            return
        if state.game is None:
            self.tensor.fill(0)
        else:
            self.tensor[:] = encode_game(state.game, player)

    def string_from(self, state: GuandanState, player: int) -> str:
        if self.perfect_recall:
            return state.history_text(player)
        if state.game is None:
            return f"seat {player}: dealing"
        g = state.game
        table = action_text(g.table_action, g.level) if g.table_action >= 0 else "lead"
        hand = format_cards(np.repeat(np.arange(NUM_FACES), g.hands[player]), g.level)
        return f"seat {player} hand {hand} | table {table} | left {g.cards_left()}"


pyspiel.register_game(_GAME_TYPE, GuandanGame)
