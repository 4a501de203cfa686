"""JSON replays (``guandan_env.envs.replay``) and the viewer ``python -m experiments.hosts.replay``.

The core property: a game recorded from the env, saved and loaded, replays to the same final
state (engine state, RNG, levels, every logged move), and a replay that does not reproduce is
refused with ``ValueError``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest

import guandan_env
from agents.random_agent import RandomAgent
from experiments.hosts import replay as replay_cli
from guandan_env.core import actions as T
from guandan_env.envs.replay import (
    FORMAT_VERSION,
    Replay,
    ReplayRecorder,
    load,
    record_game,
    replay_env,
    replay_game,
    replay_of_game,
    replay_steps,
    state_digest,
)


def run_recorded(config: dict, seed: int | None, options: dict | None = None, rec=None):
    """Play one game with seeded random agents through a ``ReplayRecorder``."""
    rec = rec or ReplayRecorder(guandan_env.env(**config))
    rec.reset(seed=seed, options=options)
    agents = [RandomAgent(seed=100 + i) for i in range(4)]
    for name in rec.agent_iter():
        obs, _, term, trunc, info = rec.last()
        if term or trunc:
            rec.step(None)
            continue
        rec.step(agents[int(name[-1])].act(obs, info))
    return rec


def same_state(a, b) -> None:
    assert np.array_equal(a.hands, b.hands)
    assert np.array_equal(a.played, b.played)
    assert a.levels == b.levels and a.leveling_team == b.leveling_team
    assert a.finish_order == b.finish_order and a.deal_number == b.deal_number
    assert a.match_winner == b.match_winner and a.a_failures == b.a_failures
    assert state_digest(a) == state_digest(b)


CASES = [
    ({}, 1, None),
    ({"random_tribute": True, "random_levels": True}, 5, None),
    ({"mode": "match", "max_deals": 3}, 9, None),
    ({}, 2, {"levels": ["5", "A"], "leveling_team": 1, "previous_order": [1, 3, 0, 2]}),
    (
        {},
        3,
        {"hands": ["S3 S4 S5 S6 H2", "D9 DT", "CK CA", "BJ RJ"], "leader": 0},
    ),
]


@pytest.mark.parametrize(("config", "seed", "options"), CASES)
def test_round_trip_reproduces_final_state(tmp_path, config, seed, options):
    rec = run_recorded(config, seed, options)
    original = rec.unwrapped
    path = rec.save(tmp_path / "game.json", meta={"note": "test"})
    data = json.loads(path.read_text())
    assert data["format"] == "guandan-replay" and data["version"] == FORMAT_VERSION
    assert data["seed"] == seed and data["options"] == (options or {})
    loaded = load(path)
    assert loaded.actions == rec.actions and loaded.meta["note"] == "test"
    same_state(replay_game(loaded), original.game)
    env = replay_env(loaded)
    same_state(env.unwrapped.game, original.game)
    assert env.unwrapped.log == original.log
    assert all(env.terminations.values()) or all(env.truncations.values())


def test_final_values_describe_the_game():
    rec = run_recorded({"mode": "match", "max_deals": 2}, 4)
    rep = rec.replay()
    g = rec.unwrapped.game
    assert len(rep.final["deals"]) == 2 == g.deal_number
    assert rep.final["levels"] == g.levels
    assert rep.final["deals"][-1]["order"] == g.result.order
    assert [s.deal_result for s in replay_steps(rep) if s.deal_result] == rep.final["deals"]


def test_env_reset_without_seed_is_replayable():
    rec = ReplayRecorder(guandan_env.env(mode="match", max_deals=2))
    rec.reset(seed=11)
    run_recorded({}, None, rec=rec)  # a second episode continuing the env's RNG
    rep = rec.replay()
    assert rep.seed is None
    same_state(replay_game(rep), rec.unwrapped.game)
    assert replay_env(rep).unwrapped.log == rec.unwrapped.log


def test_record_game_and_names():
    agents = [RandomAgent(seed=i) for i in range(4)]
    rep = record_game(agents, seed=7, config={"random_tribute": True})
    assert rep.meta["agents"] == ["random"] * 4
    assert rep.config["random_tribute"] is True
    replay_game(Replay.from_dict(json.loads(rep.to_json())))


def test_from_game_for_code_driving_the_engine():
    """Code that steps a ``Game`` itself records only the action ids."""
    from guandan_env.envs.aec import build_game, check_config

    cfg = {"mode": "match", "max_deals": 2}
    g = build_game(1234, check_config(cfg), None)
    rng = np.random.default_rng(0)
    actions = []
    while True:
        a = int(rng.choice(np.flatnonzero(g.legal_mask())))
        g.step(a)
        actions.append(a)
        if g.deal_over:
            if g.match_over:
                break
            g.next_deal()
    rep = replay_of_game(g, actions, config=cfg)
    assert len(rep.final["deals"]) == 2
    same_state(replay_game(rep), g)


def test_mismatches_are_refused(tmp_path):
    rep = run_recorded({}, 3).replay()
    wrong_levels = Replay.from_dict({**rep.to_dict(), "final": {**rep.final, "levels": [5, 5]}})
    with pytest.raises(ValueError, match="levels: recorded"):
        replay_game(wrong_levels)
    wrong_digest = Replay.from_dict({**rep.to_dict(), "final": {**rep.final, "digest": "0"}})
    with pytest.raises(ValueError, match="does not reproduce"):
        replay_env(wrong_digest)
    illegal = Replay.from_dict({**rep.to_dict(), "actions": [T.PASS_ACTION] + rep.actions[1:]})
    with pytest.raises(ValueError, match="action #0 does not reproduce"):
        replay_game(illegal)
    too_long = Replay.from_dict({**rep.to_dict(), "actions": rep.actions + [T.PASS_ACTION]})
    with pytest.raises(ValueError, match="after the game ended"):
        replay_game(too_long)
    other_seed = Replay.from_dict({**rep.to_dict(), "game_seed": rep.game_seed + 1, "seed": None})
    with pytest.raises(ValueError):
        replay_game(other_seed)
    # no check values: replays without verification
    replay_game(Replay.from_dict({**rep.to_dict(), "final": None}))


def test_bad_files(tmp_path):
    p = tmp_path / "x.json"
    p.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load(p)
    p.write_text('{"a": 1}')
    with pytest.raises(ValueError, match="not a Guandan replay"):
        load(p)
    p.write_text(json.dumps({"format": "guandan-replay", "version": 99}))
    with pytest.raises(ValueError, match="unsupported replay version 99"):
        load(p)


def test_illegal_action_in_penalize_mode_is_noted():
    rec = ReplayRecorder(guandan_env.env(illegal_action="penalize"))
    rec.reset(seed=1)
    mask = rec.unwrapped.action_mask()
    bad = int(np.flatnonzero(~mask)[1])
    rec.step(bad)
    rep = rec.replay()
    assert rep.actions == [] and rep.meta["illegal_action"]["action"] == bad
    replay_game(rep)


def test_replay_module_imports_only_numpy():
    code = (
        "import sys, guandan_env.envs.replay; "
        "bad = [m for m in ('gymnasium', 'pettingzoo', 'torch', 'ray') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# ---------------------------------------------------------------------- the viewer CLI
def test_viewer_shows_and_verifies(tmp_path):
    path = run_recorded({"mode": "match", "max_deals": 2}, 6).save(tmp_path / "m.json")
    out = io.StringIO()
    assert replay_cli.main([str(path)], stdout=out) == 0
    text = out.getvalue()
    assert "Deal 1 at level 2" in text and "Deal 2 at level" in text
    assert "   0  seat " in text and "replay verified: final state and inputs match" in text
    out = io.StringIO()
    assert replay_cli.main([str(path), "--summary"], stdout=out) == 0
    assert out.getvalue().count("deal at level") == 2
    out = io.StringIO()
    code = replay_cli.main(
        [str(path), "--step", "--board"], stdin=io.StringIO("\n\nq\n"), stdout=out
    )
    assert code == 0 and "stopped" in out.getvalue()


def test_viewer_reports_problems(tmp_path):
    out = io.StringIO()
    assert replay_cli.main([str(tmp_path / "missing.json")], stdout=out) == 2
    assert "cannot read replay" in out.getvalue()
    rep = run_recorded({}, 2).replay()
    bad = Replay.from_dict({**rep.to_dict(), "final": {**rep.final, "levels": [3, 3]}})
    path = bad.save(tmp_path / "bad.json")
    out = io.StringIO()
    assert replay_cli.main([str(path)], stdout=out) == 1
    assert "MISMATCH" in out.getvalue()


def test_viewer_as_module(tmp_path):
    path = run_recorded({}, 8).save(tmp_path / "d.json")
    r = subprocess.run(
        [sys.executable, "-m", "experiments.hosts.replay", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "replay verified" in r.stdout


def test_recorder_fits_the_tournament_game_loop():
    """``experiments.evaluation.duplicate.play_game`` drives a raw env directly
    (agent_selection, infos, ``LazyObservation`` reading ``_mask``/``observe``); wrapping that
    env in a recorder is the whole hook needed to save tournament replays."""
    from agents.heuristic import HeuristicAgent
    from experiments.evaluation.duplicate import AGENTS, LazyObservation
    from guandan_env.envs.aec import raw_env

    env = ReplayRecorder(raw_env(mode="match", max_deals=2))
    env.reset(seed=21, options=None)
    agents = [HeuristicAgent(seed=0), RandomAgent(seed=1), HeuristicAgent(seed=2), RandomAgent(3)]
    while True:
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            break
        action = agents[AGENTS.index(name)].act(LazyObservation(env, name), env.infos[name])
        env.step(int(action))
    rep = env.replay(meta={"agents": [a.name for a in agents]})
    assert len(rep.final["deals"]) == 2
    same_state(replay_game(rep), env.game)


def test_fault_verification_covers_every_input_and_complete_check_values():
    """Issue 12: the seed (changed or nulled), reward settings, options and actions are
    covered by the recorded input digest; check values that are present must be complete."""
    rep = run_recorded({"mode": "match", "max_deals": 2}, 4).replay()
    replay_game(rep)  # the untouched replay verifies
    d = rep.to_dict()
    for changed in (
        {"seed": None},
        {"seed": (rep.seed or 0) + 1},
        {"config": {**rep.config, "match_win_bonus": 5.0}},
        {"config": {**rep.config, "illegal_penalty": -1.0}},
    ):
        with pytest.raises(ValueError, match="inputs"):
            replay_game(Replay.from_dict({**d, **changed}))
    half = Replay.from_dict({**d, "final": {}, "actions": rep.actions[: len(rep.actions) // 2]})
    with pytest.raises(ValueError, match="lack"):
        replay_game(half)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"config": {"mode": "tournament"}}, "mode"),
        ({"config": {"match_win_bonus": "abc"}}, "match_win_bonus"),
        ({"options": {"levels": ["Z", "2"]}}, "R-2.1"),
        ({"options": "abc"}, "options"),
        ({"game_seed": -1}, "game_seed"),
        ({"game_seed": None}, "game_seed"),
        ({"actions": 5}, "actions"),
        ({"actions": [0, "x"]}, "action #1"),
        ({"seed": 1.5}, "seed"),
    ],
)
def test_malformed_replay_fields_are_one_clear_error(tmp_path, change, message):
    rep = run_recorded({}, 3).replay()
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**rep.to_dict(), **change}))
    with pytest.raises(ValueError, match=message):
        load(path)
    out = io.StringIO()
    assert replay_cli.main([str(path)], stdout=out) != 0
    assert "Traceback" not in out.getvalue()


def test_files_of_another_env_version_are_refused(tmp_path):
    """Replays and policy files record ``guandan_env.env_version.ENV_VERSION`` and are checked on
    load; a file without the field (older) still loads."""
    import torch

    from agents.candidate_net import CandidateNet
    from agents.policy_file import load_policy_file, save_policy
    from guandan_env.env_version import ENV_VERSION
    from guandan_env.envs.replay import Replay

    assert guandan_env.raw_env().metadata["name"] == ENV_VERSION
    data = Replay(game_seed=5, actions=[]).to_dict()
    assert data["env"] == ENV_VERSION
    Replay.from_dict({k: v for k, v in data.items() if k != "env"})  # older: loads
    with pytest.raises(ValueError, match=f"guandan_v0; this code is {ENV_VERSION}"):
        Replay.from_dict({**data, "env": "guandan_v0"})

    small = {"trunk": [8, 8], "cand": [4]}
    path = save_policy(tmp_path / "policy.pt", CandidateNet(small), small)
    assert torch.load(path, weights_only=True)["env_version"] == ENV_VERSION
    payload = torch.load(path, weights_only=True)
    payload["env_version"] = "guandan_v0"
    torch.save(payload, path)
    with pytest.raises(ValueError, match="made with guandan_v0"):
        load_policy_file(path)
    del payload["env_version"]
    torch.save(payload, path)
    load_policy_file(path)  # written before versions: accepted (dimensions still checked)


def test_game_seed_reset_option_restarts_a_recorded_game():
    """Issue 13: ``reset(options={"game_seed": N})`` (documented) deals what the engine seed N
    deals; replays restart unseeded games with it instead of patching the env."""
    env = guandan_env.env(random_tribute=True)
    env.reset()  # no seed: the env draws one
    first = env.unwrapped.game
    again = guandan_env.env(random_tribute=True)
    again.reset(options={"game_seed": first.seed})
    assert again.unwrapped.game.seed == first.seed
    np.testing.assert_array_equal(again.unwrapped.game.hands, first.hands)
    with pytest.raises(ValueError, match="not both"):
        again.reset(seed=1, options={"game_seed": 5})
    with pytest.raises(ValueError, match="game_seed"):
        again.reset(options={"game_seed": -1})
    rec = ReplayRecorder(guandan_env.env())
    rec.reset(options={"game_seed": 12345})
    assert rec.replay().options == {} and rec.replay().game_seed == 12345
