"""Batched numpy engine: ``num_tables`` Guandan tables advancing in lockstep.

Interface (plain arrays, ``B = num_tables``, ``D = OBS_DIM``, ``A = NUM_ACTIONS``)::

    env = VectorGuandanEnv(1024, mode="deal", seed=0)        # any AEC config key
    obs, mask, seat = env.reset()                            # (B, D) f32, (B, A) bool, (B,)
    obs, mask, seat, rewards, done, info = env.step(actions)  # actions: (B,) ints

* Every call takes one action per table, for the seat to act there (``seat``), and returns
  that table's next decision: the observation of the seat to act (the AEC env's encoder,
  ``observation.encode``), its legal-action mask and the seat.
* ``rewards`` ``float32 (B, 4)`` per absolute seat: non-zero only on the step that ends a deal
  (±3/±2/±1, zero-sum, R-6.3; plus ``match_win_bonus`` when a match is won), or the
  ``illegal_penalty`` of an offender when ``illegal_action="penalize"``.
* ``done`` ``bool (B,)``: the table's episode ended at this step (deal mode: every deal; match
  mode: the match, won or capped). Unless ``autoreset=False`` (then a table stays at the end
  of its deal, ``done``, and must be dropped with ``keep`` or replaced with ``load``), the
  table is reset automatically: the returned
  observation, mask and seat of a done table are already the *first decision of its next
  episode*, and ``rewards`` carries the final rewards of the one that ended.
* ``info`` dict of ``(B,)`` arrays: ``deal_over`` (a deal ended; in match mode this is not
  ``done`` unless the match ended), ``truncated`` (a capped match ended as a draw, R-6.8),
  ``winner_team`` / ``gain`` / ``match_winner`` (-1 when none), ``order`` ``(B, 4)`` (the
  finishing order of the deal that ended, -1 otherwise), ``illegal`` (penalized tables).

Seeds and equivalence. ``reset(seed=s)`` gives table ``i`` the seed ``env.table_seeds[i]``
(``int`` ``s``: derived with ``numpy.random.SeedSequence(s)``; or pass one seed per table).
Table ``i`` then follows exactly what ``guandan_env.env(**config)`` does after
``reset(seed=env.table_seeds[i], options=options)`` and, for each later episode,
``reset(options=options)``: same deals, tribute, card choices, tricks, rewards and
observations under the same actions. ``options`` (the AEC scenario keys) is one dict for
all tables or one per table, and applies to every episode until the next ``reset``.

How it works. Per-deal state is numpy arrays over the batch; masks come from the bit-packed
batched generator (``vector_mask``), card choice from ``vector_choice``, passes, plays,
tricks, wind and finishing are array operations, the observation is one ``encode`` call.
The rare per-deal events — dealing, tribute giving, deal-end settlement, levels and match
logic — run the single-table ``engine.Game`` of the finished tables only (once per deal,
about 150 decisions), so they are the same code as the AEC env.

Other members. ``copy=False`` (constructor) writes every observation into one reused
buffer (the arrays a step returns are overwritten by the next step; default: a new array
per step). ``masks_packed`` is the current mask as ``uint64 (B, 36)`` bits (``np.packbits``
order) and ``sample_actions(rng)`` draws a uniformly random legal action per table from it
(fast random play). ``load(games)`` continues given ``engine.Game`` states (search playouts
of sampled deals, ``guandan_env.core.infoset``); ``keep(idx)`` drops the other tables.
``is_legal(actions)`` checks actions against the masks. ``game(i)`` is
table ``i``'s ``Game`` (match state and RNG as of its deal's start). Gymnasium-style
``num_envs``, ``single_observation_space``, ``single_action_space``, ``observation_space``,
``action_space``. ``timers`` accumulates seconds spent per part (``step``: applying actions;
``reset``: per-deal events; ``mask``; ``obs``) by ``clock`` (``time.perf_counter``; set
``env.clock = time.process_time`` for CPU time); ``reset_timers()`` zeroes them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..core import actions as T
from ..core import validate
from ..core.engine import Game
from ..core.illegal import IllegalActionError, illegal_action_error
from ..core.phase import Phase, TrickMove
from ..core.table_state import FIELD_NAMES, TableState, write_games
from ..core.vector_choice import batch_choose_cards
from ..core.vector_mask import (
    MASK_BYTES,
    pack_masks,
    play_masks_packed,
    return_masks,
    sample_packed,
)
from ..core.vector_mask import unpack_masks as _unpack
from ..encoding.observation import OBS_DIM, encode
from .scenario import check_config, check_options, start_scenario

MAX_TABLES = 1 << 18  # ~10 KiB of buffers per table: a larger batch is almost surely a typo

_SIZE = T.SIZE.astype(np.int64)
_RETURN_FACE = T.RETURN_FACE.astype(np.int64)
_SEAT_BITS = np.array([1, 2, 4, 8], dtype=np.int64)


def _next_active_table() -> np.ndarray:
    """``int64 (4, 16)``: the next seat after ``seat`` holding cards, for an active-seat bitmask
    (R-5.5); the seat itself when none is active."""
    t = np.zeros((4, 16), dtype=np.int64)
    for s in range(4):
        for bits in range(16):
            t[s, bits] = s
            for k in range(1, 5):
                if bits >> ((s + k) % 4) & 1:
                    t[s, bits] = (s + k) % 4
                    break
    return t


_NEXT_ACTIVE = _next_active_table()


class VectorGuandanEnv:
    """``num_tables`` tables in lockstep with automatic reset (see the module docstring)."""

    def __init__(
        self,
        num_tables: int,
        seed: int | Sequence[int] | None = None,
        copy: bool = True,
        autoreset: bool = True,
        **config,
    ) -> None:
        num_tables = validate.integer(num_tables, "num_tables", 1, MAX_TABLES)
        self.config = check_config(config)
        if self.config["render_mode"] is not None:
            raise ValueError("the vector env does not render; use the AEC env for that")
        self.num_tables = self.num_envs = b = num_tables
        self.copy = validate.flag(copy, "copy")
        self.autoreset = validate.flag(autoreset, "autoreset")
        self._init_seed = seed
        self.table_seeds: list[int] = []
        self._episode_rngs: list[np.random.Generator] = []
        self._options: list[dict] = [{}] * b
        self._games: list[Game | None] = [None] * b
        self._obs_buf = None if self.copy else np.empty((b, OBS_DIM), dtype=np.float32)
        self.timers = dict.fromkeys(("step", "reset", "mask", "obs"), 0.0)
        self.clock = time.perf_counter  # the timers' clock; time.process_time for CPU time
        self._alloc()
        self._ready = False

    # ------------------------------------------------------------------ spaces
    @property
    def single_observation_space(self):
        from gymnasium import spaces

        return spaces.Box(0.0, 1.0, (OBS_DIM,), dtype=np.float32)

    @property
    def single_action_space(self):
        from gymnasium import spaces

        return spaces.Discrete(T.NUM_ACTIONS)

    @property
    def observation_space(self):
        from gymnasium import spaces

        return spaces.Box(0.0, 1.0, (self.num_tables, OBS_DIM), dtype=np.float32)

    @property
    def action_space(self):
        from gymnasium import spaces

        return spaces.MultiDiscrete(np.full(self.num_tables, T.NUM_ACTIONS))

    def close(self) -> None:
        """Nothing to release (Gymnasium ``VectorEnv`` naming)."""

    # ------------------------------------------------------------------ state
    def _alloc(self) -> None:
        self.state = TableState.zeros(self.num_tables)  # every table's deal (core.table_state)
        self.masks_packed = np.zeros((self.num_tables, MASK_BYTES // 8), dtype=np.uint64)

    def game(self, table: int) -> Game:
        """The table's ``Game`` as of its current deal's start (match state, levels, RNG).
        Its per-deal fields (hands, tricks) are not updated during play; the arrays are."""
        return self._games[table]

    # ------------------------------------------------------------------ reset
    def reset(
        self,
        seed: int | Sequence[int] | None = None,
        options: dict | Sequence[dict | None] | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Start a new episode on every table → ``(obs, mask, seat)``.

        ``seed``: an ``int`` (per-table seeds derived from it), one seed per table, or None
        (first reset: the constructor's seed, else each table's episode RNG continues, as
        the AEC env's ``reset()`` without seed). ``options``: scenario keys of the AEC env.
        """
        b = self.num_tables
        # check everything before any RNG or table changes
        if options is None or isinstance(options, dict):
            opts = [options] * b
        else:
            opts = validate.sequence(options, "options (a dict or one per table)", b)
        checked = []
        for i, o in enumerate(opts):
            try:
                checked.append(check_options(o))
            except ValueError as e:
                raise ValueError(f"options of table {i}: {e}") from None
        if seed is None and not self._episode_rngs:
            seed = self._init_seed
        if seed is not None or not self._episode_rngs:
            if seed is None or not isinstance(seed, list | tuple | np.ndarray):
                seed = validate.seed(seed)
                state = np.random.SeedSequence(seed).generate_state(b, dtype=np.uint64)
                seeds = [int(s) for s in state]
            else:
                given = validate.sequence(seed, "seed (an int or one of the seeds per table)", b)
                seeds = [validate.seed(s, f"seed[{i}]") for i, s in enumerate(given)]
            self.table_seeds = seeds
            self._episode_rngs = [np.random.default_rng(s) for s in seeds]
        self._options = checked
        t0 = self.clock()
        self._load(np.arange(b), [self._new_episode(i) for i in range(b)])
        self.timers["reset"] += self.clock() - t0
        self._ready = True
        mask = self._masks()
        return self._observe(), mask, self.state.to_act.copy()

    def load(
        self, games: Sequence[Game], seed: int | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Continue ``games`` (``engine.Game`` at any point of a deal; distinct objects, one
        per table; this env keeps and advances them at the end of their deal) → ``(obs,
        mask, seat)``. Tables whose episode ends later start new ones from one RNG seeded
        ``seed``, with no scenario options. Search playouts load sampled deals this way."""
        b = self.num_tables
        if len(games) != b:
            raise ValueError(f"load needs one game per table ({b}), got {len(games)}")
        self._games = list(games)
        self._options = [{}] * b
        shared = np.random.default_rng(validate.seed(seed))
        self._episode_rngs = [shared] * b
        t0 = self.clock()
        self._load(np.arange(b), self._games)
        self.timers["reset"] += self.clock() - t0
        self._ready = True
        mask = self._masks()
        return self._observe(), mask, self.state.to_act.copy()

    def keep(self, idx: np.ndarray) -> None:
        """Keep only the tables ``idx`` (in that order), dropping the others: a batch whose
        finished tables are no longer needed shrinks. The current masks are kept."""
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size == 0:
            raise ValueError("keep needs at least one table")
        st = self.state
        self.state = TableState(**{f: getattr(st, f)[idx] for f in FIELD_NAMES})
        self.masks_packed = self.masks_packed[idx]
        ids = idx.tolist()
        self._games = [self._games[i] for i in ids]
        self._options = [self._options[i] for i in ids]
        self._episode_rngs = [self._episode_rngs[i] for i in ids]
        if self.table_seeds:
            self.table_seeds = [self.table_seeds[i] for i in ids]
        self.num_tables = self.num_envs = int(idx.size)
        if self._obs_buf is not None:
            self._obs_buf = np.empty((self.num_tables, OBS_DIM), dtype=np.float32)

    def _new_episode(self, i: int) -> Game:
        game_seed = int(self._episode_rngs[i].integers(2**63))
        g = start_scenario(game_seed, self.config, self._options[i])
        self._games[i] = g
        return g

    def _load(self, idx: np.ndarray, games: list[Game]) -> None:
        """Copy the freshly started deals of ``games`` into the tables at ``idx``."""
        if len(games) == 0:
            return
        write_games(self.state, idx, games)

    # ------------------------------------------------------------------ step
    def step(self, actions: np.ndarray):
        """Apply one action per table → ``(obs, mask, seat, rewards, done, info)``."""
        st = self.state
        if not self._ready:
            raise ValueError("call reset() before step()")
        b = self.num_tables
        t0 = self.clock()
        a = validate.action_array(actions, b, f"actions ({b} actions, one per table)")
        illegal = ~self.is_legal(a)
        rewards = np.zeros((b, 4), dtype=np.float32)
        done = np.zeros(b, dtype=bool)
        info = {
            "deal_over": np.zeros(b, dtype=bool),
            "truncated": np.zeros(b, dtype=bool),
            "winner_team": np.full(b, -1, dtype=np.int64),
            "gain": np.zeros(b, dtype=np.int64),
            "match_winner": np.full(b, -1, dtype=np.int64),
            "order": np.full((b, 4), -1, dtype=np.int64),
            "illegal": illegal,
        }
        if illegal.any():
            if self.config["illegal_action"] == "raise":
                raise self._illegal_error(int(np.flatnonzero(illegal)[0]), a)
            bad = np.flatnonzero(illegal)
            rewards[bad, st.to_act[bad]] = float(self.config["illegal_penalty"])
            done[bad] = True
        ok = ~illegal
        ret = np.flatnonzero(st.returning & ok)
        play = ~st.returning & ok
        is_pass = a == T.PASS_ACTION
        if ret.size:
            self._apply_returns(ret, a[ret])
        plays = np.flatnonzero(play & ~is_pass)
        ended = self._apply_plays(plays, a[plays]) if plays.size else plays
        passes = np.flatnonzero(play & is_pass)
        if passes.size:
            self._apply_passes(passes)
        t1 = self.clock()
        reload_idx: list[int] = []
        reload_games: list[Game] = []
        for i in ended.tolist():
            g = self._end_deal(i, rewards, done, info)
            if g is not None:
                reload_idx.append(i)
                reload_games.append(g)
        for i in np.flatnonzero(illegal).tolist():
            reload_idx.append(i)
            reload_games.append(self._new_episode(i))
        self._load(np.array(reload_idx, dtype=np.int64), reload_games)
        t2 = self.clock()
        self.timers["step"] += t1 - t0
        self.timers["reset"] += t2 - t1
        mask = self._masks()
        return self._observe(), mask, st.to_act.copy(), rewards, done, info

    def is_legal(self, actions: np.ndarray) -> np.ndarray:
        """``bool (B,)``: is each table's action in its current mask."""
        a = np.asarray(actions, dtype=np.int64)
        inside = (a >= 0) & (a < T.NUM_ACTIONS)
        ac = np.where(inside, a, 0)
        byte = self.masks_packed.view(np.uint8)[np.arange(self.num_tables), ac >> 3]
        return inside & ((byte >> (7 - (ac & 7))) & 1).astype(bool)

    def _illegal_error(self, i: int, a: np.ndarray) -> IllegalActionError:
        st = self.state
        seat = int(st.to_act[i])
        phase = Phase.RETURN if st.returning[i] else Phase.PLAY
        hand, level, last = (
            st.hands[i],
            int(st.level[i]),
            int(st.table_action[i]),
        )
        return illegal_action_error(int(a[i]), seat, phase, hand, level, last, table=i)

    def _apply_returns(self, idx: np.ndarray, acts: np.ndarray) -> None:
        """Tribute returns (R-7.1/R-7.2): the receiver hands the face back to its giver."""
        st = self.state
        seat = st.to_act[idx]
        face = _RETURN_FACE[acts]
        k = st.returns_done[idx]
        giver = st.pending_giver[idx, k]
        st.hands[idx, seat, face] -= 1
        st.hands[idx, giver, face] += 1
        st.cards_left[idx, seat] -= 1
        st.cards_left[idx, giver] += 1
        st.return_face[idx, seat] = face
        st.return_to[idx, seat] = giver
        k = k + 1
        st.returns_done[idx] = k
        more = k < st.num_pending[idx]
        nxt = st.pending_receiver[idx, np.minimum(k, 1)]
        st.to_act[idx] = np.where(more, nxt, st.deal_leader[idx])  # leader after returns
        st.returning[idx] = more

    def _active_bits(self, idx: np.ndarray) -> np.ndarray:
        return (self.state.finish_place[idx] == 0).astype(np.int64) @ _SEAT_BITS

    def _apply_plays(self, idx: np.ndarray, acts: np.ndarray) -> np.ndarray:
        """Plays (R-5): cards leave the hand, the trick state moves, seats finish (R-6.1).
        Returns the tables whose deal ended (R-6.2)."""
        st = self.state
        seat = st.to_act[idx]
        hand = st.hands[idx, seat]
        cards = batch_choose_cards(hand, st.level[idx], acts)
        st.hands[idx, seat] = hand - cards
        st.played[idx, seat] += cards
        st.last_cards[idx, seat] = cards
        st.move_in_trick[idx, seat] = TrickMove.PLAYED
        st.table_action[idx] = acts
        st.table_seat[idx] = seat
        st.passes[idx] = 0
        left = st.cards_left[idx, seat] - _SIZE[acts]
        st.cards_left[idx, seat] = left
        ended = idx[:0]
        out = np.flatnonzero(left == 0)
        if out.size:
            ob, os = idx[out], seat[out]
            k = st.num_finished[ob]
            st.finish_order[ob, k] = os
            st.finish_place[ob, os] = k + 1
            k = k + 1
            st.num_finished[ob] = k
            fo = st.finish_order[ob]
            double = (k >= 2) & (fo[:, 0] % 2 == fo[:, 1] % 2)
            ended = ob[double | (k >= 3)]
        st.to_act[idx] = _NEXT_ACTIVE[seat, self._active_bits(idx)]
        return ended

    def _apply_passes(self, idx: np.ndarray) -> None:
        """Passes (R-5.2); a trick ends when every other active seat passed (R-5.3), with
        wind to the partner if the last player is out (R-5.4)."""
        st = self.state
        seat = st.to_act[idx]
        st.move_in_trick[idx, seat] = TrickMove.PASSED
        p = st.passes[idx] + 1
        st.passes[idx] = p
        active = st.finish_place[idx] == 0
        ls = st.table_seat[idx]
        rows = np.arange(idx.size)
        others = active.sum(1) - active[rows, ls]
        over = p >= others
        if over.any():
            ob, w = idx[over], ls[over]
            lead = np.where(active[rows[over], w], w, (w + 2) % 4)
            st.table_action[ob] = -1
            st.table_seat[ob] = -1
            st.passes[ob] = 0
            st.move_in_trick[ob] = TrickMove.NONE
            st.to_act[ob] = lead
        go = ~over
        if go.any():
            nb = idx[go]
            bits = active[go].astype(np.int64) @ _SEAT_BITS
            st.to_act[nb] = _NEXT_ACTIVE[seat[go], bits]

    def _end_deal(self, i: int, rewards: np.ndarray, done: np.ndarray, info: dict) -> Game | None:
        """Settle table ``i``'s deal with the engine (R-6), fill its outputs, and start what
        follows: the match's next deal, or a new episode. Returns the game to load (None
        without ``autoreset``: the table stays at its deal's end)."""
        g = self._games[i]
        g.finish_order = [int(s) for s in self.state.finish_order[i, : self.state.num_finished[i]]]
        if not g.finish_deal():  # pragma: no cover - the arrays decided it ended
            raise RuntimeError(f"table {i}: deal end mismatch with the engine")
        res = g.result
        r = res.rewards(float(self.config["match_win_bonus"]))
        rewards[i] = r
        info["deal_over"][i] = True
        info["winner_team"][i] = res.winner_team
        info["gain"][i] = res.gain
        info["order"][i] = res.order
        if res.match_winner is not None:
            info["match_winner"][i] = res.match_winner
        if not self.autoreset:
            done[i] = True
            return None
        if self.config["mode"] == "deal" or g.match_over:
            done[i] = True
            info["truncated"][i] = self.config["mode"] == "match" and g.match_winner is None
            return self._new_episode(i)
        g.next_deal()
        return g

    # ------------------------------------------------------------------ outputs
    def _masks(self) -> np.ndarray:
        st = self.state
        t0 = self.clock()
        b = self.num_tables
        rows = np.arange(b)
        counts = st.hands[rows, st.to_act]
        packed = play_masks_packed(counts, st.level, st.table_action)
        ret = np.flatnonzero(st.returning)
        if ret.size:
            packed[ret] = pack_masks(return_masks(counts[ret], st.level[ret]))
        self.masks_packed = packed
        mask = _unpack(packed)
        self.timers["mask"] += self.clock() - t0
        return mask

    def _observe(self) -> np.ndarray:
        t0 = self.clock()
        obs = encode(self.state, self.state.to_act, out=self._obs_buf)
        self.timers["obs"] += self.clock() - t0
        return obs

    def sample_actions(self, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random legal action per table (``int64 (B,)``), from the packed masks."""
        return sample_packed(self.masks_packed, rng)

    def reset_timers(self) -> None:
        for k in self.timers:
            self.timers[k] = 0.0
