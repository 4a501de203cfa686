"""Self-play training: masking module, training env, config, and the smoke run end to end.

The smoke run (configs/smoke.yaml: two iterations, a checkpoint, a restore and one more
iteration) runs in a subprocess under a hard timeout, so a Ray hang cannot stall CI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.rllib_module import MASK_VALUE, GuandanNet, check_model_config
from experiments.selfplay_config import load_config, parse_overrides
from experiments.selfplay_env import GuandanSelfPlayEnv, check_env_config
from guandan_env.actions import NUM_ACTIONS
from guandan_env.aec import AGENTS, raw_env
from guandan_env.observation import OBS_DIM

REPO = Path(__file__).resolve().parents[1]
SMOKE_TIMEOUT_S = 150


def _observations(n_states: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of states reached by random play (tribute returns included)."""
    env = raw_env(random_levels=True, random_tribute=True)
    rng = np.random.default_rng(seed)
    obs, masks = [], []
    env.reset(seed=seed)
    while len(obs) < n_states:
        agent = env.agent_selection
        if env.terminations[agent]:
            env.reset()
            continue
        o = env.observe(agent)
        obs.append(o["observation"])
        masks.append(o["action_mask"])
        legal = np.flatnonzero(o["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
    return np.stack(obs), np.stack(masks)


def _module():
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec

    from agents.rllib_module import MaskedPPOModule

    env = raw_env()
    spec = RLModuleSpec(
        module_class=MaskedPPOModule,
        observation_space=env.observation_space(AGENTS[0]),
        action_space=env.action_space(AGENTS[0]),
        model_config={"hidden": [32, 32]},
    )
    return spec.build()


def test_masked_module_never_samples_illegal_actions():
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.distribution.torch.torch_distribution import TorchCategorical

    torch.manual_seed(0)
    module = _module()
    # make the raw logits strongly prefer some actions, so masking has something to do
    with torch.no_grad():
        module.net.pi.bias.copy_(torch.randn(NUM_ACTIONS) * 20)
    obs, masks = _observations(300)
    assert (masks.sum(1) < NUM_ACTIONS).all()
    batch = {
        Columns.OBS: {
            "observation": torch.from_numpy(obs),
            "action_mask": torch.from_numpy(masks),
        }
    }
    illegal = torch.from_numpy(masks == 0)
    for _ in range(20):
        out = module.forward_exploration(batch)
        a = out[Columns.ACTIONS]
        assert masks[np.arange(len(a)), a.numpy()].all()
        # the logp it reports is the masked softmax's
        logp = torch.log_softmax(out[Columns.ACTION_DIST_INPUTS], -1)
        assert torch.allclose(out[Columns.ACTION_LOGP], logp.gather(-1, a[:, None])[:, 0])
    logits = module.forward_exploration(batch)[Columns.ACTION_DIST_INPUTS]
    probs = torch.softmax(logits, -1)
    assert (probs[illegal] == 0).all()
    # RLlib's own distribution over these logits (used by the PPO loss) agrees
    dist = TorchCategorical.from_logits(logits)
    for _ in range(20):
        a = dist.sample()
        assert masks[np.arange(len(a)), a.numpy()].all()
    assert torch.isfinite(dist.entropy()).all()
    assert torch.isfinite(dist.kl(TorchCategorical.from_logits(logits * 0.5))).all()
    greedy = module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS].argmax(-1)
    assert masks[np.arange(len(greedy)), greedy.numpy()].all()
    # training forward: masked logits and values for the loss
    train = module.forward_train(batch)
    assert (train[Columns.ACTION_DIST_INPUTS][illegal] == MASK_VALUE).all()
    values = module.compute_values(batch, train[Columns.EMBEDDINGS])
    assert values.shape == (len(obs),)


def test_guandan_net_act_is_legal_and_seeded():
    net = GuandanNet(OBS_DIM, NUM_ACTIONS, {"hidden": [16]})
    obs, masks = _observations(50, seed=3)
    for o, m in zip(obs, masks, strict=True):
        assert m[net.act(o, m)]
        a1 = net.act(o, m, np.random.default_rng(5), greedy=False)
        a2 = net.act(o, m, np.random.default_rng(5), greedy=False)
        assert a1 == a2 and m[a1]


@pytest.mark.parametrize("kind", ["self", "random", "heuristic", "snapshot"])
def test_training_env_rewards_reach_the_learner_seats(kind):
    probs = dict.fromkeys(("self", "snapshot", "random", "heuristic"), 0.0)
    probs[kind] = 1.0
    env = GuandanSelfPlayEnv({"opponents": probs, "seed": 1})
    if kind == "snapshot":
        env.set_league({"s0": GuandanNet(OBS_DIM, NUM_ACTIONS, {"hidden": [16]})})
    rng = np.random.default_rng(0)
    for episode in range(3):
        obs, _ = env.reset(seed=10 + episode) if episode == 0 else env.reset()
        exposed = set(env.exposed)
        assert len(exposed) == (4 if kind == "self" else 2)
        acted, returns = set(), dict.fromkeys(exposed, 0.0)
        while True:
            assert len(obs) == 1
            ((agent, o),) = obs.items()
            assert agent in exposed and o["action_mask"].any()
            acted.add(agent)
            legal = np.flatnonzero(o["action_mask"])
            obs, rew, term, trunc, infos = env.step({agent: int(legal[rng.integers(legal.size)])})
            assert set(rew) <= exposed
            for a, r in rew.items():
                returns[a] += r
            if term["__all__"] or trunc["__all__"]:
                break
        assert set(obs) == exposed == acted  # every exposed seat gets its last observation
        assert all(not o["action_mask"].any() for o in obs.values())
        gains = {abs(r) for r in returns.values()}
        assert len(gains) == 1 and gains.pop() in (1.0, 2.0, 3.0)
        team = {a: AGENTS.index(a) % 2 for a in exposed}
        for a in exposed:  # shared within a team, opposite between teams
            for b in exposed:
                same = team[a] == team[b]
                assert returns[a] == (returns[b] if same else -returns[b])
        info = next(iter(infos.values()))
        assert info["opponent"] == kind
        learner_seat = AGENTS[info["learner_team"]] if kind != "self" else None
        if learner_seat:
            assert returns[learner_seat] == info["team_reward"]


def test_config_errors_name_unknown_keys(tmp_path):
    with pytest.raises(ValueError, match="ppo.lrr"):
        load_config(None, ["ppo.lrr=0.1"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo:\n  lr: 0.1\nleague:\n  sizes: 3\n")
    with pytest.raises(ValueError, match="league.sizes"):
        load_config(bad)
    with pytest.raises(ValueError, match="bogus"):
        check_env_config({"opponents": {"bogus": 1.0}})
    with pytest.raises(ValueError, match="depth"):
        check_model_config({"depth": 3})
    with pytest.raises(ValueError, match="random_level"):
        load_config(None, ["env.game.random_level=true"])
    assert parse_overrides(["a.b=1", "c=[1, 2]"]) == {"a": {"b": 1}, "c": [1, 2]}
    cfg = load_config(REPO / "configs" / "default.yaml", ["ppo.lr=1e-4"])
    assert cfg["ppo"]["lr"] == 1e-4
    load_config(REPO / "configs" / "smoke.yaml")


def test_run_dir_is_never_overwritten(tmp_path):
    from experiments.selfplay import choose_run_dir

    cfg = {"runs_dir": str(tmp_path), "name": "default"}
    assert choose_run_dir(cfg, named=False) == tmp_path / "default"
    (tmp_path / "default" / "checkpoints").mkdir(parents=True)
    assert choose_run_dir(cfg, named=False) == tmp_path / "default-2"
    assert cfg["name"] == "default-2"
    with pytest.raises(ValueError, match="--resume"):
        choose_run_dir({"runs_dir": str(tmp_path), "name": "default"}, named=True)


def test_resume_drops_log_rows_after_the_checkpoint(tmp_path):
    from experiments.selfplay_log import _truncate_csv

    path = tmp_path / "progress.csv"
    path.write_text("iteration,env_steps\n1,10\n2,20\n3,30\n")
    _truncate_csv(path, 2)
    assert path.read_text().splitlines() == ["iteration,env_steps", "1,10", "2,20"]


SMOKE_SCRIPT = textwrap.dedent(
    """
    import sys
    from experiments.selfplay import main
    runs = sys.argv[1]
    rc = main(["--config", "configs/smoke.yaml", f"runs_dir={runs}"])
    assert rc == 0, rc
    rc = main(["--resume", f"{runs}/smoke", "stop.iterations=3"])
    assert rc == 0, rc
    """
)


def test_smoke_run_trains_checkpoints_resumes_and_plays(tmp_path):
    runs = tmp_path / "runs"
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-c", SMOKE_SCRIPT, str(runs)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # one process group: a hang is killed with its Ray workers
    )
    try:
        out, _ = proc.communicate(timeout=SMOKE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"smoke run exceeded {SMOKE_TIMEOUT_S} s:\n{out[-3000:]}")
    assert proc.returncode == 0, out[-5000:]
    run = runs / "smoke"
    assert "it    1" in out and "it    2" in out and "it    3" in out, out[-3000:]
    assert "resumed" in out
    assert list(run.glob("events.out.tfevents.*")), "no TensorBoard events"
    assert (run / "config.yaml").exists()
    ckpts = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert ckpts == ["iter_000002", "iter_000003"], ckpts
    state = json.loads((run / "checkpoints" / "iter_000003" / "trainer_state.json").read_text())
    assert state["iteration"] == 3 and state["env_steps"] > 0 and len(state["league"]) == 3
    evals = (run / "eval.csv").read_text().splitlines()
    assert len(evals) == 3  # header + random + heuristic at iteration 2
    progress = (run / "progress.csv").read_text().splitlines()[1:]
    assert [int(r.split(",")[0]) for r in progress] == [1, 2, 3]

    # the trained policy loads as an agent and plays a tournament game
    from experiments.tournament import run_tournament

    spec = f"checkpoint:{run}"
    summary = run_tournament(
        [spec, "random"],
        pairs=1,
        out=tmp_path / "tour",
        workers=1,
        plots=False,
        progress=False,
    )
    assert summary["matchups"][0]["games"] == 2
