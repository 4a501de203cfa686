"""The model zoo (``agents.zoo``): the numpy twin equals the torch network on real decisions
of every kind, every shipped model loads, plays and has a complete card, the pretrained
agents run without torch or Ray, and ``export`` round-trips a run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.candidate_inputs import observation_arrays
from agents.candidate_net import CandidateNet, Decisions, net_from_state, segment_log_softmax
from agents.registry import make_agent
from agents.zoo import MODELS_DIR, cards, load_net, model_names, resolve, strongest
from agents.zoo.numpy_net import NumpyCandidateNet
from agents.zoo.store import CARD_KEYS, load_weights
from guandan_env import VectorGuandanEnv
from guandan_env.core.actions import PASS_ACTION, RETURN_BASE, WILDS
from guandan_env.env_version import ENV_VERSION
from helpers import REPO
from helpers.extras import BLOCKER
from helpers.selfplay import SMALL_MODEL


def _real_decisions(policy_net: NumpyCandidateNet, tables: int = 48, steps: int = 160):
    """Decisions from deals the model plays itself (80% its greedy move, 20% random, random
    levels and tribute), grouped by kind."""
    from agents.playout import NetPolicy

    env = VectorGuandanEnv(tables, random_levels=True, random_tribute=True)
    obs, mask, _ = env.reset(seed=11)
    rng = np.random.default_rng(0)
    policy = NetPolicy(policy_net)
    batches = []
    for _ in range(steps):
        batches.append((obs.copy(), mask.copy()))
        explore = rng.random(tables) < 0.2
        obs, mask, *_ = env.step(np.where(explore, env.sample_actions(rng), policy.act(obs, mask)))
    return batches


def _kinds(mask: np.ndarray) -> dict[str, np.ndarray]:
    legal = [np.flatnonzero(m) for m in mask]
    return {
        "return": np.array([ids.min() >= RETURN_BASE for ids in legal]),
        "leading": np.array([ids.max() < RETURN_BASE for ids in legal]) & ~mask[:, PASS_ACTION],
        "following": mask[:, PASS_ACTION].astype(bool),
        "two wildcards": np.array([(WILDS[ids] == 2).any() for ids in legal]),
    }


@pytest.mark.parametrize("name", model_names())
def test_the_numpy_twin_equals_the_torch_network_on_real_decisions(name):
    """Probabilities within 1e-4 on ~7,000 decisions with a choice, every kind present; values
    too; greedy choices identical. The gap is float32 summation order: a logit moves by ~1e-6
    of its size, so a sharper policy's larger logits move a probability by up to ~3e-5
    (`long-v4`: 2.9e-5; the earlier models stayed under 1e-5)."""
    state, header = load_weights(MODELS_DIR / f"{name}.npz")
    twin, torch_net = load_net(name), net_from_state(state, header["model_config"])
    seen = dict.fromkeys(("return", "leading", "following", "two wildcards"), 0)
    worst = 0.0
    for obs, mask in _real_decisions(twin):
        choice = mask.sum(1) > 1
        obs, mask = obs[choice], mask[choice]
        if not len(obs):
            continue
        for kind, hit in _kinds(mask).items():
            seen[kind] += int(hit.sum())
        d = observation_arrays(obs, mask, twin.features)
        logits, values = twin.forward(d)
        p_twin = np.exp(twin.log_probs(d))
        with torch.no_grad():
            t_logits, t_values = torch_net(Decisions.from_arrays(d))
            p_torch = torch.exp(segment_log_softmax(t_logits, Decisions.from_arrays(d).rows, d.n))
        worst = max(worst, float(np.abs(p_twin - p_torch.numpy()).max()))
        np.testing.assert_allclose(values, t_values.numpy(), rtol=1e-4, atol=1e-4)
        a_twin = twin.act_batch(d, None, greedy=True)[0]
        a_torch = torch_net.act_batch(Decisions.from_arrays(d), None, greedy=True)[0]
        np.testing.assert_array_equal(a_twin, a_torch)
    assert worst <= 1e-4, worst
    assert sum(seen.values()) > 5000 and min(seen.values()) >= 20, seen


def test_seeded_sampling_draws_what_the_torch_agent_draws():
    """``greedy=False``: the same Gumbel draws from the same numpy RNG pick the same moves."""
    torch.manual_seed(0)
    net = CandidateNet(SMALL_MODEL)
    state = {k: v.detach().numpy() for k, v in net.state_dict().items()}
    twin = NumpyCandidateNet(state, net.model_config)
    obs, mask = _real_decisions(twin, tables=16, steps=30)[-1]
    d = observation_arrays(obs, mask, twin.features)
    a_twin = twin.act_batch(d, np.random.default_rng(5))[0]
    a_torch = net.act_batch(Decisions.from_arrays(d), np.random.default_rng(5))[0]
    np.testing.assert_array_equal(a_twin, a_torch)


@pytest.mark.parametrize("name", model_names())
def test_every_shipped_model_loads_plays_and_has_a_complete_card(name):
    from experiments.evaluation.duplicate import play_game

    card = json.loads((MODELS_DIR / f"{name}.json").read_text(encoding="utf-8"))
    assert [k for k in CARD_KEYS if k not in card] == []
    assert card["name"] == name and card["env_version"] == ENV_VERSION
    assert (REPO / card["config"]).is_file(), card["config"]
    assert card["command"].startswith("python -m experiments.selfplay")
    assert len(card["commit"]) == 40 and card["learner_samples"] > 1e6
    _, header = load_weights(MODELS_DIR / f"{name}.npz")
    assert header["dtype"] == card["weights"]["dtype"]
    assert (MODELS_DIR / f"{name}.npz").stat().st_size < 4e6  # compact: a few MB at most
    seats = [make_agent(f"pretrained:{name}", seed=s) for s in range(2)] + [
        make_agent("heuristic", seed=s) for s in (2, 3)
    ]
    rec = play_game([seats[0], seats[2], seats[1], seats[3]], 5, {"random_tribute": True})
    assert rec["deals"] and rec["steps"] > 20


def test_names_aliases_and_errors():
    assert resolve("default") == "default-v2" and resolve("long") == "long-v4"
    assert strongest() in model_names() and [c["name"] for c in cards()][0] == strongest()
    with pytest.raises(ValueError, match="no pretrained model 'nope'; shipped: .*default-v1"):
        make_agent("pretrained:nope")
    with pytest.raises(ValueError, match="needs an argument"):
        make_agent("pretrained")


def test_weights_files_refuse_other_files(tmp_path):
    bad = tmp_path / "x.npz"
    np.savez(bad, a=np.zeros(3))
    with pytest.raises(ValueError, match="not a guandan-zoo-v1 weights file"):
        load_weights(bad)
    pickled = tmp_path / "p.npz"
    np.savez(pickled, header=np.array([{"format": "guandan-zoo-v1"}], dtype=object))
    with pytest.raises(ValueError, match="not a guandan-zoo-v1"):  # object arrays: no unpickling
        load_weights(pickled)


def test_a_pretrained_agent_and_a_search_over_it_play_a_whole_deal_without_torch_or_ray():
    code = (
        BLOCKER
        + """
import sys
import guandan_env
from agents.registry import make_agent
env = guandan_env.env(mode="deal", random_tribute=True, random_levels=True)
env.reset(seed=3)
agents = [make_agent("pretrained:default", seed=s) for s in range(3)]
# the search agent over a shipped model: numpy playouts, no torch either
agents.append(make_agent("search:worlds=2,candidates=2,unsure=1.0,close=27:pretrained:default"))
moves = 0
for name in env.agent_iter():
    obs, _, term, trunc, info = env.last()
    env.step(None if term or trunc else agents[int(name[-1])].act(obs, info))
    moves += 1
assert moves > 40 and agents[3].stats.searched > 0
assert not {"torch", "ray"} & set(sys.modules)
print("ok")
"""
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


def test_list_shows_every_model_with_its_headline():
    out = subprocess.run(
        [sys.executable, "-m", "agents.zoo", "list"], capture_output=True, text=True, cwd=REPO
    )
    assert out.returncode == 0, out.stderr
    for name in model_names():
        assert f"pretrained:{name}" in out.stdout
    assert "M learner samples" in out.stdout


def test_export_round_trips_a_run(tmp_path):
    """A run folder (policy with a weight average, config, summary) into the zoo format: the
    exported model plays what the checkpoint agent plays (float32 here: exactly)."""
    import yaml

    from agents.policy_file import save_policy

    torch.manual_seed(1)
    net = CandidateNet(SMALL_MODEL)
    ema = {k: v.detach().numpy() * 0.5 for k, v in net.state_dict().items()}
    run = tmp_path / "run"
    (run / "checkpoints" / "iter_000001").mkdir(parents=True)
    ckpt = run / "checkpoints" / "iter_000001"
    save_policy(ckpt, net, net.model_config, {"iteration": 1}, ema_state=ema)
    (ckpt / "trainer_state.json").write_text("{}")
    (run / "config.yaml").write_text(yaml.safe_dump({"seed": 7, "model": SMALL_MODEL}))
    summary = {"env_steps": 2_000_000, "game_steps": 2_600_000, "train_seconds": 60.0}
    (run / "summary.json").write_text(json.dumps(summary))
    out = tmp_path / "zoo"
    out.mkdir()
    from agents.zoo.__main__ import main

    args = ["export", str(run), "--name", "tiny", "--summary", "s", "--recipe", "r"]
    args += ["--command", "python -m experiments.selfplay", "--config", "configs/smoke.yaml"]
    assert main([*args, "--dtype", "float32", "--out", str(out), "--commit", "0" * 40]) == 0
    card = json.loads((out / "tiny.json").read_text())
    assert card["seed"] == 7 and card["weights"]["which"].startswith("moving average")
    state, header = load_weights(out / "tiny.npz")
    for k, v in ema.items():
        np.testing.assert_array_equal(state[k], v)  # the weight average is what ships
    twin = NumpyCandidateNet(state, header["model_config"])
    obs, mask = _real_decisions(twin, tables=8, steps=20)[-1]
    ref = make_agent(f"checkpoint:{run}", seed=0)
    for o, m in zip(obs, mask, strict=True):
        if m.sum() > 1:
            ob = {"observation": o, "action_mask": m}
            from agents.zoo.agent import PretrainedAgent

            assert PretrainedAgent(twin).act(ob, {}) == ref.act(ob, {})


def test_pretrained_models_are_package_data():
    text = (REPO / "pyproject.toml").read_text()
    assert '"agents.zoo" = ["models/*.npz", "models/*.json"]' in text
    assert Path(MODELS_DIR).is_dir()


def test_the_search_agent_plays_out_a_pretrained_model_in_numpy():
    """``search:…:pretrained:NAME``: the playouts use the numpy twin (``batch_policy``)."""
    from agents.search_agent import SearchAgent
    from experiments.evaluation.duplicate import play_game

    spec = "search:worlds=2,candidates=2,unsure=1.0,close=27:pretrained:default"
    seats = [make_agent(spec, seed=0), make_agent("heuristic", seed=1)] * 2
    assert isinstance(seats[0], SearchAgent) and isinstance(seats[0].policy.net, NumpyCandidateNet)
    rec = play_game(seats, 8, {"random_tribute": True})
    assert rec["deals"] and seats[0].stats.searched > 0
