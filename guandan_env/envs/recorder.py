"""Recording replays: ``ReplayRecorder`` wraps an AEC env, ``record_game`` plays one game.

The recording is a ``replay_format.Replay``: the env config, the seeds, the scenario options
and every action, with check values of the final state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .replay_format import Replay, _jsonable, final_summary, input_digest, save


class ReplayRecorder:
    """Wraps an AEC env (``guandan_env.env(...)``) and records what a replay needs.

    Use it exactly like the env (``reset``, ``step``, ``agent_iter``, ``last``… are passed
    through); each ``reset`` starts a new recording. Dead steps (``step(None)`` for finished
    agents) are not recorded. With ``illegal_action="penalize"`` an illegal action ends the
    recording (it is kept in ``meta["illegal_action"]``, not in ``actions``).
    """

    def __init__(self, env) -> None:
        self.env = env
        self.seed: int | None = None
        self.options: dict = {}
        self.actions: list[int] = []
        self.deals: list[dict] = []
        self.illegal: dict | None = None
        self._started = False

    def __getattr__(self, name: str):
        if name == "env":  # not set yet (copy/unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.env, name)

    @property
    def unwrapped(self):
        return self.env.unwrapped

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self.env.reset(seed=seed, options=options)
        self.start(seed, options)

    def start(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new recording of an env that was just reset with ``seed`` and ``options``
        (for envs reset before they were wrapped)."""
        self.seed = None if seed is None else int(seed)
        # the engine seed is recorded as the replay's game_seed, not as a scenario option
        self.options = _jsonable({k: v for k, v in (options or {}).items() if k != "game_seed"})
        self.actions, self.deals, self.illegal = [], [], None
        self._started = True

    def step(self, action) -> None:
        env = self.env
        agent = env.agent_selection
        if env.terminations[agent] or env.truncations[agent]:
            env.step(action)
            return
        raw = env.unwrapped
        game = raw.game
        mask = raw.action_mask()
        legal = action is not None and 0 <= int(action) < len(mask) and bool(mask[action])
        env.step(action)  # raises for an illegal action in "raise" mode: nothing recorded
        if not legal:
            self.illegal = {"seat": int(game.to_act), "action": _jsonable(action)}
            return
        self.actions.append(int(action))
        res = raw.infos[agent].get("deal_result")
        if res is not None:
            self.deals.append(dict(res))

    def replay(self, meta: dict | None = None) -> Replay:
        """The recording so far (a finished game or not) as a :class:`Replay`."""
        if not self._started:
            raise ValueError("nothing recorded: call reset() first")
        game = self.env.unwrapped.game
        m = dict(meta or {})
        if self.illegal is not None:
            m["illegal_action"] = self.illegal
        rep = Replay(
            game_seed=int(game.seed),
            actions=list(self.actions),
            config=dict(self.env.unwrapped.config),
            options=self.options,
            seed=self.seed,
            meta=m,
        )
        rep.final = {**final_summary(game, self.deals), "inputs": input_digest(rep)}
        return rep

    def save(self, path: str | Path, meta: dict | None = None) -> Path:
        return save(self.replay(meta), path)


def record_game(
    agents: Sequence[Any],
    seed: int | None = None,
    config: dict | None = None,
    options: dict | None = None,
    meta: dict | None = None,
) -> Replay:
    """Play one game (a deal or a match, per ``config``) with four agents (seat order; any
    object with ``act(observation, info) -> int``) and return its replay."""
    from . import aec

    if len(agents) != 4:
        raise ValueError(f"need 4 agents (one per seat), got {len(agents)}")
    rec = ReplayRecorder(aec.env(**dict(config or {})))
    rec.reset(seed=seed, options=options)
    for i, ag in enumerate(agents):
        if hasattr(ag, "reset"):
            ag.reset(None if seed is None else seed * 4 + i)
    for name in rec.agent_iter():
        obs, _, term, trunc, info = rec.last()
        if term or trunc:
            rec.step(None)
            continue
        rec.step(agents[aec.AGENTS.index(name)].act(obs, info))
    m = {"agents": [getattr(a, "name", type(a).__name__) for a in agents], **(meta or {})}
    return rec.replay(meta=m)
