"""What an agent would play: hints at a live table and the post-deal review of a replay.

Both ask the agent with the seat's own observation and info (``LazyObservation``: what the
seat may know, R-8), exactly as the agent is asked when it plays, so a hint is the agent's
own choice for that state. An agent with ``action_probabilities`` (a trained policy:
``agents.candidate_agent.CandidateAgent``) also gives its probability of each legal play;
a rule-based agent gives none (the page says "rule-based choice").
"""

from __future__ import annotations

from typing import Any

from experiments.evaluation.duplicate import LazyObservation
from guandan_env.core import actions as T
from guandan_env.core.cards import face_text
from guandan_env.core.phase import Phase
from guandan_env.encoding import protocol as P
from guandan_env.envs.aec import AGENTS

from .words import declaration

MAX_REVIEW_ACTIONS = 10_000  # as many as a replay shown on the page
MARKED = 3  # decisions marked in a review (where the agent's view differs most)


def ask(agent: Any, env: Any, seat: int) -> tuple[int, dict[int, float] | None]:
    """The agent's action for ``seat`` (to act in the raw ``env``) and its probabilities."""
    obs = LazyObservation(env, AGENTS[seat])
    action = int(agent.act(obs, env.infos[AGENTS[seat]]))
    probs = getattr(agent, "action_probabilities", None)
    return action, (probs(obs) if probs is not None else None)


def hint(agent: Any, env: Any, seat: int) -> dict[str, Any]:
    """A hint for ``seat``: the action id, the cards to select (the engine's first choice of
    suits, as the page's legal list) and the probability (None for a rule-based agent)."""
    action, probs = ask(agent, env, seat)
    g = env.game
    cards = [] if action == T.PASS_ACTION else P.variants(g.hands[seat], g.level, action, 1)[0]
    return {
        "action": action,
        "decl": declaration(action, g.level),
        "cards": [face_text(int(f)) for f in cards],
        "prob": None if probs is None else round(probs.get(action, 0.0), 4),
    }


def human_seat(data: dict) -> int | None:
    """The seat a replay's ``meta.agents`` names ``human`` (the web table's games)."""
    agents = (data.get("meta") or {}).get("agents") if isinstance(data, dict) else None
    if isinstance(agents, list) and "human" in agents:
        return agents.index("human")
    return None


def review(data: dict, agent: Any, seat: int, upto_deal: int | None = None) -> dict[str, Any]:
    """One row per decision of ``seat`` in the replay ``data``: the play made, the agent's
    preferred play, the probability the agent gave each (None without probabilities), and
    ``marked`` where they differ most. ``index`` is the action's place in the replay (its
    frame on the replay page is the state before it). ``upto_deal``: stop after that deal."""
    from guandan_env.envs.replay import Replay, make_replay_env

    actions = data.get("actions") if isinstance(data, dict) else None
    if isinstance(actions, list) and len(actions) > MAX_REVIEW_ACTIONS:
        raise ValueError(f"{len(actions)} actions: a review covers at most {MAX_REVIEW_ACTIONS}")
    if not (isinstance(seat, int) and 0 <= seat < 4):
        raise ValueError("the review needs a seat 0..3 (a replay of a human game names it)")
    r = Replay.from_dict(data)
    wrapped = make_replay_env(r)
    env = wrapped.unwrapped
    rows: list[dict[str, Any]] = []
    for i, a in enumerate(r.actions):
        g = env.game
        if upto_deal is not None and g.deal_number > upto_deal:
            break
        if g.to_act == seat:
            choice, probs = ask(agent, env, seat)
            following = g.phase == Phase.PLAY and g.table_action >= 0
            rows.append(
                {
                    "index": i,
                    "deal": int(g.deal_number),
                    "phase": str(g.phase),
                    "table": declaration(g.table_action, g.level) if following else None,
                    "played": declaration(int(a), g.level),
                    "agent": declaration(choice, g.level),
                    "same": choice == int(a),
                    "legal": int(env.action_mask().sum()),
                    "p_played": None if probs is None else round(probs.get(int(a), 0.0), 4),
                    "p_agent": None if probs is None else round(probs.get(choice, 0.0), 4),
                    "marked": False,
                }
            )
        wrapped.step(int(a))
    _mark(rows)
    return {
        "seat": seat,
        "rows": rows,
        "probabilities": any(x["p_agent"] is not None for x in rows),
    }


def _mark(rows: list[dict[str, Any]]) -> None:
    """Mark the decisions where the agent's view differs most: with probabilities the
    ``MARKED`` largest gaps p(agent's play) - p(the play made); without, every disagreement."""
    differ = [x for x in rows if not x["same"]]
    if differ and differ[0]["p_agent"] is not None:
        differ.sort(key=lambda x: x["p_played"] - x["p_agent"])
        differ = differ[:MARKED]
    for x in differ:
        x["marked"] = True
