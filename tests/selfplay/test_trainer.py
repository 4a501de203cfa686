"""Self-play training: the candidate policy, the vector env runner's RLlib contract, GAE,
behaviour cloning, config, and the smoke run end to end (train, checkpoint, resume, Ctrl-C).

Runs that start Ray go through subprocesses with hard timeouts, so a Ray hang cannot stall CI.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from agents.candidate_agent import CandidateAgent
from agents.candidate_net import CandidateNet, check_model_config, segment_log_softmax
from agents.policy_file import load_policy_file, save_policy
from experiments.common.typed_config import to_dict
from experiments.selfplay.config import DEFAULTS, load_config, parse_overrides
from guandan_env import VectorGuandanEnv
from guandan_env.core.actions import NUM_ACTIONS

REPO = Path(__file__).resolve().parents[1]
SMOKE_TIMEOUT_S = 240
SMALL_MODEL = {"trunk": [32, 32], "cand": [16]}


def _decisions(n_steps: int = 40, tables: int = 64, seed: int = 0):
    env = VectorGuandanEnv(tables, random_levels=True, random_tribute=True)
    obs, mask, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_steps):
        out.append((obs.copy(), mask.copy()))
        obs, mask, *_ = env.step(env.sample_actions(rng))
    return out


def test_candidate_probabilities_are_zero_off_the_legal_set_and_sum_to_one():
    net = CandidateNet(SMALL_MODEL)
    for obs, mask in _decisions()[::7]:
        d = net.prepare(obs, mask)
        logits, values = net(d)
        logp = segment_log_softmax(logits, d.rows, d.n)
        dense = torch.zeros(d.n, NUM_ACTIONS, dtype=torch.float64)
        dense[d.rows, d.ids] = torch.exp(logp).double()
        assert torch.all(dense[~torch.from_numpy(mask)] == 0)  # no logit at all off the mask
        assert torch.allclose(dense.sum(1), torch.ones(d.n, dtype=torch.float64), atol=1e-5)
        assert values.shape == (d.n,)


def test_fast_forward_and_backward_equal_the_plain_network_math():
    """The network's two shortcuts change no value: the action block projected over the
    batch's distinct (level, id) rows, and the first layer's sparse backward (both against
    the plain math: ``cand_proj`` over full candidate rows, ``nn.EmbeddingBag``)."""
    from agents.candidate_net import bits_times_weight
    from guandan_env.encoding.candidate_features import (
        candidate_rows,
        candidates_packed,
        decision_features,
    )
    from guandan_env.encoding.packing import OBS_BITS, pack_masks

    torch.manual_seed(0)
    net = CandidateNet(SMALL_MODEL)
    obs, mask = _decisions()[20]
    d = net.prepare(obs, mask)
    assert d.akeys.shape[0] < d.ids.shape[0]  # distinct rows: fewer than candidates
    rows, ids = candidates_packed(pack_masks(mask))
    inputs = decision_features(obs[:, :OBS_BITS], rows, ids)
    full = torch.from_numpy(candidate_rows(inputs))
    x = net.obs_embed(d.obs_idx, d.obs_offsets) + net.dense_in(d.dense)
    h = net.trunk(torch.relu(x))
    z = net.state_proj(h)[d.rows] + net.cand_proj(full) + net.id_embedding(d.ids)
    plain = net.scorer(torch.relu(z)).squeeze(-1)
    logits, _ = net(d)
    assert torch.allclose(logits, plain, atol=1e-5)

    weight = torch.nn.Parameter(torch.randn(OBS_BITS, 8, dtype=torch.float64))
    grad = torch.randn(d.n, 8, dtype=torch.float64)
    bits_times_weight(weight, d.obs_idx, d.obs_offsets).backward(grad)
    fast = weight.grad.clone()
    weight.grad = None
    torch.nn.functional.embedding_bag(d.obs_idx, weight, d.obs_offsets, mode="sum").backward(grad)
    assert torch.allclose(fast, weight.grad, atol=1e-10)


def test_sampled_and_greedy_actions_are_legal_and_seeded():
    net = CandidateNet(SMALL_MODEL)
    obs, mask = _decisions()[20]
    d = net.prepare(obs, mask)
    a1, lp1, _ = net.act_batch(d, np.random.default_rng(5))
    a2, lp2, _ = net.act_batch(d, np.random.default_rng(5))
    assert np.array_equal(a1, a2) and np.array_equal(lp1, lp2)
    assert mask[np.arange(len(a1)), a1].all()
    g, _, _ = net.act_batch(d, greedy=True)
    assert mask[np.arange(len(g)), g].all()
    agent = CandidateAgent(net, seed=0)
    a = agent.act({"observation": obs[0], "action_mask": mask[0].astype(np.int8)}, {})
    assert mask[0, a]


def test_checkpoint_formats_and_errors(tmp_path):
    net = CandidateNet(SMALL_MODEL)
    path = save_policy(tmp_path, net, net.model_config, {"note": 1})
    loaded, meta = load_policy_file(path)
    assert meta == {"note": 1}
    for k, v in net.state_dict().items():
        assert torch.equal(v, loaded.state_dict()[k])
    old = tmp_path / "old.pt"
    torch.save({"format": "guandan-policy-v1", "state_dict": {}}, old)
    with pytest.raises(ValueError, match="old flat 2,243-logit"):
        load_policy_file(old)
    with pytest.raises(ValueError, match="depth"):
        check_model_config({"depth": 3})
    with pytest.raises(ValueError, match="unknown block"):
        check_model_config({"features": ["plan", "magic"]})


class _Payload:
    """What a hostile ``league.pt`` holds: unpickling it would run a shell command."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.marker}",))


def test_league_files_are_plain_tensors_and_load_without_running_code(tmp_path):
    """Issue 26: ``--resume`` (and ``bench_selfplay --trained``) unpickled ``league.pt``; a
    payload in it ran. Now it is tensors, read weights-only; the older numpy form still loads."""
    import json

    from agents.checkpoint import load_league, save_league
    from experiments.selfplay.trainer import SelfPlayTrainer

    members = [("bc", {"w": np.arange(3, dtype=np.float32)}), ("iter_1", {"b": np.ones(2)})]
    save_league(tmp_path / "league.pt", members)
    raw = torch.load(tmp_path / "league.pt", weights_only=True)
    assert all(isinstance(v, torch.Tensor) for s in raw.values() for v in s.values())
    back = load_league(tmp_path / "league.pt")
    assert list(back) == ["bc", "iter_1"] and np.array_equal(back["bc"]["w"], members[0][1]["w"])
    torch.save({n: s for n, s in members}, tmp_path / "old.pt")  # before: numpy arrays
    assert np.array_equal(load_league(tmp_path / "old.pt")["iter_1"]["b"], np.ones(2))
    # a run to --resume whose league.pt carries a payload
    ckpt = tmp_path / "run" / "checkpoints" / "iter_000001"
    ckpt.mkdir(parents=True)
    marker = tmp_path / "PWNED"
    torch.save({"bc": {"w": _Payload(marker)}}, ckpt / "league.pt")
    state = {"iteration": 1, "env_steps": 1, "game_steps": 1, "elapsed": 1.0, "league": []}
    (ckpt / "trainer_state.json").write_text(json.dumps(state))
    trainer = object.__new__(SelfPlayTrainer)
    trainer.run_dir = tmp_path / "run"
    with pytest.raises(pickle.UnpicklingError):
        trainer._restore_trainer_state()
    with pytest.raises(pickle.UnpicklingError):
        load_league(ckpt / "league.pt")
    assert not marker.exists(), "the payload ran"


def test_config_errors_name_unknown_keys(tmp_path):
    with pytest.raises(ValueError, match="ppo.lrr"):
        load_config(None, ["ppo.lrr=0.1"])
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo:\n  lr: 0.1\nleague:\n  sizes: 3\n")
    with pytest.raises(ValueError, match="league.sizes"):
        load_config(bad)
    with pytest.raises(ValueError, match="random_level"):
        load_config(None, ["game.random_level=true"])
    with pytest.raises(ValueError, match="self_share"):
        load_config(None, ["league.self_share=2"])
    assert parse_overrides(["a.b=1", "c=[1, 2]"]) == {"a": {"b": 1}, "c": [1, 2]}
    cfg = load_config(REPO / "configs" / "default.yaml", ["ppo.lr=1e-4"])
    assert cfg.ppo.lr.value_at(0) == 1e-4
    load_config(REPO / "configs" / "smoke.yaml")
    assert load_config(REPO / "configs" / "long.yaml").stop.time_s <= 3 * 3600


@pytest.mark.parametrize(
    "args, message",
    [
        (["ppo.lr=[1]"], "ppo.lr"),
        (["torch_threads=0"], "torch_threads"),
        (["eval.opponents=[nosuchagent]"], "nosuchagent"),
        (["runners.tables=2.5"], "runners.tables"),
        (["stop.iterations=abc"], "stop.iterations"),
        (["--config", "configs"], "not a config file"),
        (["--config", "{bad_yaml}"], "not valid YAML"),
        (["--resume", "{no_ckpt}"], "no checkpoint"),
    ],
)
def test_cli_errors_are_one_line_before_ray_starts(tmp_path, capsys, args, message):
    """Issue 12: bad values stop the command with one ``error:`` line and exit 2, before
    Ray starts, and a refused ``--resume`` leaves the run directory as it was."""
    import sys

    from experiments.selfplay import main

    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("a: [1,\n")
    no_ckpt = tmp_path / "run"
    no_ckpt.mkdir()
    (no_ckpt / "config.yaml").write_text("name: run\n")
    before = (no_ckpt / "config.yaml").read_text()
    args = [a.format(bad_yaml=bad_yaml, no_ckpt=no_ckpt) for a in args]
    rc = main([*args, f"runs_dir={tmp_path}"] if not args[0].startswith("--r") else args)
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error:") and message in err, err
    if "ray" in sys.modules:  # imported by other tests, perhaps; never started here
        assert not sys.modules["ray"].is_initialized()
    assert (no_ckpt / "config.yaml").read_text() == before


def test_defaults_equal_the_default_config_file():
    """configs/default.yaml is generated from the config's declaration (its comments are
    the fields' help texts), and reads back as the defaults."""
    from experiments.selfplay.config import default_config_text

    text = (REPO / "configs" / "default.yaml").read_text()
    assert text == default_config_text(), (
        "configs/default.yaml is stale: python -m experiments.selfplay --write-default-config "
        "configs/default.yaml"
    )
    data = yaml.safe_load(text)
    assert load_config(None) == load_config(REPO / "configs" / "default.yaml")
    assert data == to_dict(DEFAULTS)  # every key, every value


def test_every_config_key_is_documented_in_help_config(capsys):
    from experiments.common.typed_config import describe
    from experiments.selfplay import main
    from experiments.selfplay.config import RunConfig

    rows = describe(RunConfig)
    assert main(["--help-config"]) == 0
    out = capsys.readouterr().out
    flat = {k for k, _, _ in rows}
    assert {"ppo.lr", "anchor.coeff", "warm_start.decisions", "eval.opponents"} <= flat
    for key, _, text in rows:
        assert text, f"{key} has no help text"
        assert key in out


def test_schedules_parse_interpolate_and_refuse_bad_forms():
    from experiments.common.typed_config import Schedule

    s = Schedule.parse("x", [[0, 1.0], [100, 0.0], [200, 0.5]])
    assert [s.value_at(t) for t in (0, 50, 100, 150, 200, 10**9)] == [1.0, 0.5, 0.0, 0.25, 0.5, 0.5]
    assert s.to_plain() == [[0, 1.0], [100, 0.0], [200, 0.5]]
    assert Schedule.parse("x", "3e-4").to_plain() == 3e-4
    for bad, message in (
        ([[5, 1.0]], "starts at 0"),
        ([[0, 1.0], [0, 2.0]], "increase"),
        ([[0, 1.0, 2.0]], "a schedule is"),
        ("fast", "needs a number"),
    ):
        with pytest.raises(ValueError, match=message):
            Schedule.parse("ppo.lr", bad)
    with pytest.raises(ValueError, match="ppo.entropy_coeff"):
        load_config(None, ["ppo.entropy_coeff=[[0, -1]]"])


def test_typed_config_reads_writes_and_refuses_bad_values(tmp_path):
    """Issue 13: one typed declaration of a run's config; YAML round trip, dotted errors."""
    from experiments.common.typed_config import from_mapping, merged
    from experiments.selfplay.config import RunConfig, save_config

    cfg = load_config(None, ["ppo.lambda=0.9", "stop.time_s=60", "model.trunk=[32]"])
    assert cfg.ppo.lambda_ == 0.9 and cfg.stop.time_s == 60.0 and cfg.model["trunk"] == [32]
    assert cfg.game == {**DEFAULTS.game, **cfg.game} and cfg.game["random_tribute"] is True
    save_config(cfg, tmp_path / "c.yaml")
    assert yaml.safe_load((tmp_path / "c.yaml").read_text())["ppo"]["lambda"] == 0.9
    assert load_config(tmp_path / "c.yaml") == cfg
    assert merged(DEFAULTS, {"runners": {"tables": 8.0}}).runners.tables == 8
    assert DEFAULTS.runners.tables == 1024  # merged() copies
    for data, message in [
        ({"runners": {"tables": 2.5}}, "runners.tables.*whole number"),
        ({"runners": {"tables": True}}, "runners.tables.*number"),
        ({"eval": {"opponents": "heuristic"}}, "eval.opponents.*list"),
        ({"eval": {"opponents": [1]}}, r"eval.opponents\[0\].*text"),
        ({"ppo": 3}, "ppo.*section"),
        ({"game": [1]}, "game.*mapping"),
        ({"stop": {"time": 5}}, "stop.time"),
        ({"name": 5}, "name.*text"),
    ]:
        with pytest.raises(ValueError, match=message):
            from_mapping(RunConfig, data)
    assert from_mapping(RunConfig, {"stop": {"time_s": None}}).stop.time_s is None


def test_run_dir_is_never_overwritten(tmp_path):
    from experiments.selfplay import choose_run_dir

    cfg = load_config(None, [f"runs_dir={tmp_path}"])
    assert choose_run_dir(cfg, named=False) == (tmp_path / "default", None)
    (tmp_path / "default").mkdir()
    (tmp_path / "default" / "config.yaml").write_text("{}")
    path, note = choose_run_dir(cfg, named=False)
    assert path == tmp_path / "default-2" and cfg.name == "default-2"
    assert "--resume" in note and "default-2" in note
    with pytest.raises(ValueError, match="--resume"):
        choose_run_dir(load_config(None, [f"runs_dir={tmp_path}"]), named=True)


def test_behaviour_cloning_loss_falls_and_agreement_rises(tmp_path):
    from experiments.selfplay.warm_start.bc import evaluate_bc, split_by_deal, train_bc
    from experiments.selfplay.warm_start.data import generate

    data = generate(4000, seed=3, workers=1, cache_dir=tmp_path, progress=False)
    net, record = train_bc(
        data,
        {"trunk": [64, 64], "cand": [32]},
        epochs=4,
        lr=2e-3,
        minibatch_size=256,
        holdout=0.2,
        seed=0,
        progress=False,
        log=lambda *_: None,
    )
    hist = record["history"]
    assert hist[0]["epoch"] == 0 and len(hist) == 5
    best = min(hist[1:], key=lambda h: h["policy_loss"])
    assert best["policy_loss"] < hist[0]["policy_loss"] - 0.1, hist
    assert best["agreement"] > hist[0]["agreement"] + 0.1, hist
    _, held = split_by_deal(data["deal"], 0.2, 0)
    assert evaluate_bc(net, data, held)["policy_loss"] == pytest.approx(best["policy_loss"])


# ---------------------------------------------------------------------- the env runner
RUNNER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from experiments.selfplay.rllib.algorithm import build_algo_config, init_ray
    from experiments.selfplay.config import load_config
    from ray.rllib.core import COMPONENT_RL_MODULE, DEFAULT_MODULE_ID

    num = int(sys.argv[1])
    cfg = load_config("configs/smoke.yaml", [f"runners.num={num}", "runners.tables=16",
                      "runners.steps_per_call=16", "ppo.minibatch_size=128"])
    init_ray(cfg.ray)
    algo = build_algo_config(cfg).build_algo()
    out = {}
    # a warm start's weights reach the runners before any update (no sequence-number skip)
    import tempfile
    from pathlib import Path
    from agents.candidate_net import CandidateNet, policy_state
    from experiments.selfplay import SelfPlayTrainer
    trainer = SelfPlayTrainer(cfg, Path(tempfile.mkdtemp()))
    trainer.algo = algo
    warm = policy_state(CandidateNet(cfg.model))
    trainer._set_main_weights(warm)
    states = algo.env_runner_group.foreach_env_runner(
        lambda r: r.get_state(), local_env_runner=(num == 0))
    rw = states[0][COMPONENT_RL_MODULE][DEFAULT_MODULE_ID]
    out["warm_weights"] = all(np.array_equal(rw["net." + k], v) for k, v in warm.items())
    for it in range(2):
        algo.train()
        info = algo.last_info
        out[f"steps{it}"] = info["env_steps"]
        out[f"metrics{it}"] = {k: v for k, v in info["runner_metrics"][0].items()
                               if isinstance(v, (int, float))}
    algo.stop_sampling()
    # set_state: the runners hold the learner's weights after a sync
    learner = algo.learner_group.get_state(components="learner/rl_module")
    lw = learner["learner"]["rl_module"][DEFAULT_MODULE_ID]
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group)
    states = algo.env_runner_group.foreach_env_runner(
        lambda r: r.get_state(), local_env_runner=(num == 0))
    rw = states[0][COMPONENT_RL_MODULE][DEFAULT_MODULE_ID]
    out["same_weights"] = all(np.array_equal(np.asarray(lw[k]), rw[k]) for k in rw)
    out["runners"] = algo.env_runner_group.num_remote_env_runners()
    batch = algo.env_runner_group.foreach_env_runner(
        lambda r: r.sample(), local_env_runner=(num == 0))[0]
    out["legal"] = bool(np.unpackbits(batch["mask_bits"], axis=1)[
        np.arange(len(batch["actions"])), batch["actions"]].all())
    algo.stop()
    print("RESULT " + json.dumps(out))
    """
)


def _run_python(script: str, args: list[str], timeout: int) -> str:
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # one process group: a hang is killed with its Ray workers
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"exceeded {timeout} s:\n{out[-3000:]}")
    assert proc.returncode == 0, out[-5000:]
    return out


@pytest.mark.parametrize("num_runners", [0, 1])
def test_runner_contract_sample_metrics_set_state(num_runners):
    out = _run_python(RUNNER_SCRIPT, [str(num_runners)], 180)
    res = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
    assert res["runners"] == num_runners
    for it in range(2):
        m = res[f"metrics{it}"]
        assert res[f"steps{it}"] >= 16 * 16 // 4  # a quarter of the steps' decisions
        assert m["num_env_steps_sampled"] == res[f"steps{it}"]  # what PPO's loop counts
        assert m["num_game_steps"] > 0
    assert res["warm_weights"] and res["same_weights"] and res["legal"]


def _local_runner(seed: int, **overrides):
    import gymnasium as gym
    from ray.rllib.algorithms.ppo import PPOConfig

    from experiments.selfplay.rllib.env_runner import VectorEnvRunner
    from guandan_env.encoding.observation import OBS_DIM

    env_config = {"tables": 16, "steps_per_call": 40, "seed": seed, "model": SMALL_MODEL}
    env_config.update(overrides)
    config = PPOConfig().environment(
        observation_space=gym.spaces.Box(0, 1, (OBS_DIM,), np.float32),
        action_space=gym.spaces.Discrete(NUM_ACTIONS),
        env_config=env_config,
    )
    torch.manual_seed(0)  # equal initial weights for the two runners compared
    return VectorEnvRunner(config=config, worker_index=0)


def test_equal_seeds_give_equal_samples():
    a, b, c = _local_runner(7), _local_runner(7), _local_runner(8)
    state = a.get_state()
    b.set_state(state)
    c.set_state(state)
    sa, sb, sc = a.sample(), b.sample(), c.sample()
    for k in sa:
        assert np.array_equal(sa[k], sb[k]), k
    assert not np.array_equal(sa["obs_bits"][:50], sc["obs_bits"][:50])


def test_gae_targets_are_the_deal_reward_with_lambda_one():
    """With γ = λ = 1 every decision's target is its seat's final reward (±1..3, R-6.3), and
    the advantage is that reward minus the value the acting pass predicted."""
    runner = _local_runner(3, **{"lambda": 1.0})
    s = runner.sample()
    targets = s["value_targets"]
    assert np.allclose(targets, np.round(targets), atol=1e-5)  # float32 sums of adv + value
    assert set(np.unique(np.round(targets))) <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}
    assert np.allclose(s["advantages"], s["value_targets"] - s["values"], atol=1e-5)
    m = runner.get_metrics()
    assert m["num_env_steps_sampled"] == len(s["actions"])


def test_the_weight_average_starts_at_the_weights_moves_towards_them_and_is_played(tmp_path):
    """``ema.half_life_samples``: the average starts equal to the learner's weights, moves
    halfway towards them per half-life of samples, is saved in policy.pt beside the raw
    weights and is what a checkpoint agent plays by default (``weights="raw"``: the raw)."""
    from agents.checkpoint import load_policy_net
    from agents.policy_file import load_ema_state
    from experiments.selfplay.trainer import SelfPlayTrainer

    trainer = SelfPlayTrainer.__new__(SelfPlayTrainer)
    trainer.cfg = load_config(None, ["ema.half_life_samples=1000"])
    net = CandidateNet(SMALL_MODEL)
    raw = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    trainer.main_state = lambda: raw
    trainer.ema = None
    trainer._average_weights(0)
    assert all(np.array_equal(trainer.ema[k], raw[k]) for k in raw)
    start = {k: v.copy() for k, v in raw.items()}
    raw = {k: v + 1.0 for k, v in raw.items()}  # the learner moved
    trainer._average_weights(1000)  # one half-life
    assert all(np.allclose(trainer.ema[k], start[k] + 0.5) for k in raw)
    trainer._average_weights(1000)
    assert all(np.allclose(trainer.ema[k], start[k] + 0.75) for k in raw)
    path = save_policy(tmp_path, raw, net.model_config, ema_state=trainer.ema)
    ema = load_ema_state(path)
    assert all(np.array_equal(ema[k], trainer.ema[k]) for k in raw)
    played, _ = load_policy_net(path)
    trained, _ = load_policy_net(path, weights="raw")
    for k in raw:
        assert np.allclose(played.state_dict()[k].numpy(), trainer.ema[k])
        assert np.allclose(trained.state_dict()[k].numpy(), raw[k])


def test_forced_decisions_skip_the_network_and_the_learner_batch():
    """A decision with one legal action carries no policy gradient: with ``skip_forced``
    (the default) it is played without the network, never stored, and counted apart; the
    GAE chain goes from choice to choice, so with γ = λ = 1 every target is still the
    seat's final reward (the same as with the forced decisions kept)."""
    from guandan_env.encoding.packing import unpack_masks

    runner = _local_runner(5, **{"lambda": 1.0})
    seen = []
    act_batch = runner.net.act_batch

    def watched(d, rng, greedy=False):
        seen.append(np.bincount(d.rows.numpy()))  # candidates per decision in the batch
        return act_batch(d, rng, greedy)

    runner.net.act_batch = watched
    s = runner.sample()
    m = runner.get_metrics()
    assert seen and min(int(c.min()) for c in seen) >= 2, "a forced decision reached the net"
    legal = unpack_masks(s["mask_bits"]).sum(axis=1)
    assert legal.min() >= 2 and m["num_env_steps_sampled"] == len(s["actions"])
    assert 0 < m["num_forced_steps"] < m["num_game_steps"]
    print(f"forced share of game decisions: {m['num_forced_steps'] / m['num_game_steps']:.1%}")
    assert set(np.unique(np.round(s["value_targets"]))) <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}

    kept = _local_runner(5, **{"lambda": 1.0, "skip_forced": False}).sample()
    legal_kept = unpack_masks(kept["mask_bits"]).sum(axis=1)
    assert (legal_kept == 1).any()  # without skipping, forced decisions are learner samples
    assert set(np.unique(np.round(kept["value_targets"]))) <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}


def test_shipped_candidate_features_equal_recomputed_ones_in_every_minibatch():
    """The runner ships each decision's state and candidate blocks (computed when it acted);
    the learner's minibatches must carry exactly what ``decision_features`` gives for their
    rows, and the network must read the same inputs either way."""
    from agents.candidate_net import CandidateNet, prepare_packed
    from experiments.selfplay.rllib.env_runner import minibatches
    from guandan_env.encoding.candidate_features import candidates_packed, decision_features
    from guandan_env.encoding.packing import OBS_BITS

    runner = _local_runner(5)
    sample = runner.sample()
    net = CandidateNet()
    for mb in minibatches(sample, 97, np.random.default_rng(0)):
        binary = np.unpackbits(mb["obs_bits"], axis=1, count=OBS_BITS)
        rows, ids = candidates_packed(mb["mask_bits"])
        inputs = decision_features(binary, rows, ids)
        assert np.array_equal(inputs.state, mb["state_feats"])
        assert np.array_equal(inputs.rest, mb["cand_rest"])
        assert np.array_equal(np.bincount(rows, minlength=len(mb["actions"])), mb["cand_count"])
        args = (mb["obs_bits"], mb["obs_scalar"], mb["mask_bits"], net.features)
        shipped = prepare_packed(*args, (mb["state_feats"], mb["cand_rest"]))
        computed = prepare_packed(*args)
        for field in ("obs_idx", "obs_offsets", "dense", "rows", "ids", "akeys", "ainv", "rest"):
            assert torch.equal(getattr(shipped, field), getattr(computed, field)), field


def test_league_members_play_inside_the_runner():
    runner = _local_runner(4, self_share=0.0)
    member = CandidateNet(SMALL_MODEL)
    runner.set_league([("bc", {k: v.numpy() for k, v in member.state_dict().items()})])
    runner.sample()
    m = runner.get_metrics()
    assert m["games_vs_bc"] > 0 and "bc" in m["league_win_rates"]


# ---------------------------------------------------------------------- the smoke run
SMOKE_SCRIPT = textwrap.dedent(
    """
    import sys
    from experiments.selfplay import main
    runs = sys.argv[1]
    rc = main(["--config", "configs/smoke.yaml", f"runs_dir={runs}", f"cache_dir={runs}/cache",
               *sys.argv[2:]])
    assert rc == 0, rc
    rc = main(["--resume", f"{runs}/smoke", "stop.iterations=4"])
    assert rc == 0, rc
    """
)


# schedules of the smoke run (about 600 samples per iteration): each must move what it
# schedules, and continue where it was after the resume (in the style of RLlib's LRChecker)
SMOKE_SCHEDULES = [
    "ppo.lr=[[0, 1.0e-3], [3000, 1.0e-4]]",
    "ppo.entropy_coeff=[[0, 0.02], [2000, 0.0]]",
    "anchor.coeff=[[0, 0.5], [1000, 0.2], [4000, 0.0]]",
]


def _check_schedules_moved(run: Path) -> None:
    """Every progress row's optimizer lr (read off the optimizer by RLlib), entropy and
    anchor coefficients (the values the loss used) equal their schedules at that row's
    learner samples, and they changed from row to row."""
    import csv

    from experiments.common.typed_config import Schedule

    rows = list(csv.DictReader((run / "progress.csv").open()))
    for override in SMOKE_SCHEDULES:
        key, raw = override.split("=", 1)
        column = {"anchor.coeff": "anchor_coeff"}.get(key, key.split(".")[-1])
        sched = Schedule.parse(key, yaml.safe_load(raw))
        got = [float(r[column]) for r in rows]
        want = [sched.value_at(int(r["env_steps"])) for r in rows]
        assert np.allclose(got, want, rtol=1e-5, atol=1e-9), (key, got, want)
        assert len(set(np.round(got, 9))) > 1, (key, got)


def test_smoke_run_trains_checkpoints_resumes_and_plays(tmp_path):
    runs = tmp_path / "runs"
    t0 = time.perf_counter()
    out = _run_python(SMOKE_SCRIPT, [str(runs), *SMOKE_SCHEDULES], SMOKE_TIMEOUT_S)
    run = runs / "smoke"
    assert "warm start done" in out and "resumed" in out, out[-3000:]
    for it in (1, 2, 3, 4):
        assert f"it    {it}" in out, out[-3000:]
    assert list(run.glob("events.out.tfevents.*")), "no TensorBoard events"
    assert (run / "bc" / "policy.pt").exists()
    ckpts = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert ckpts == ["iter_000003", "iter_000004"], ckpts
    state = json.loads((run / "checkpoints" / "iter_000004" / "trainer_state.json").read_text())
    assert state["iteration"] == 4 and state["env_steps"] > 0 and state["bc"]
    summary = json.loads((run / "summary.json").read_text())
    assert summary["env_steps"] == state["env_steps"] and summary["train_seconds"] > 0
    assert set(summary["final_eval"]) == {"random", "heuristic"}
    progress = (run / "progress.csv").read_text().splitlines()[1:]
    assert [int(r.split(",")[0]) for r in progress] == [1, 2, 3, 4]
    assert len((run / "eval.csv").read_text().splitlines()) >= 3  # header + final rows
    _check_schedules_moved(run)
    from agents.policy_file import load_ema_state

    ema = load_ema_state(run / "checkpoints" / "iter_000004" / "policy.pt")
    assert ema is not None, "policy.pt keeps the weight average (ema.half_life_samples > 0)"
    print(f"smoke run took {time.perf_counter() - t0:.0f} s")

    # loading the trained policy as an agent imports no Ray
    code = (
        "import sys; from agents.registry import make_agent; "
        f"a = make_agent('checkpoint:{run}', seed=0); print('ray' in sys.modules)"
    )
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout.strip() == "False", res.stderr

    from experiments.evaluation.tournament import run_tournament

    tour = run_tournament(
        [f"checkpoint:{run}", "random"],
        pairs=1,
        out=tmp_path / "tour",
        workers=1,
        plots=False,
        progress=False,
    )
    assert tour["matchups"][0]["games"] == 2


LEARNERS_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import numpy as np
    from experiments.selfplay import SelfPlayTrainer
    from experiments.selfplay.config import load_config

    run = Path(sys.argv[1])
    over = ["learners.num=2", "runners.num=1", "ray.num_cpus=3", "warm_start.decisions=0",
            "runners.tables=16", "runners.steps_per_call=16", "ppo.minibatch_size=128",
            "eval.every_s=0", "league.self_share=1.0", "league.snapshot_every=0"]
    cfg = load_config("configs/smoke.yaml", over)
    trainer = SelfPlayTrainer(cfg, run)
    trainer.setup()
    def weights(learner):
        from ray.rllib.core import DEFAULT_MODULE_ID
        m = learner.module[DEFAULT_MODULE_ID]
        return {"ddp": type(m).__name__, "w": {k: v.detach().numpy().copy()
                for k, v in m.unwrapped().state_dict().items()}}
    before = trainer._on_learners(weights)
    rows = [trainer.train_once() for _ in range(2)]
    after = trainer._on_learners(weights)
    out = {"learners": len(after), "ddp": [a["ddp"] for a in after]}
    w0, w1 = after[0]["w"], after[1]["w"]
    out["same"] = all(np.array_equal(w0[k], w1[k]) for k in w0)
    out["moved"] = any(not np.array_equal(w0[k], before[0]["w"][k]) for k in w0)
    out["start_same"] = all(np.array_equal(before[0]["w"][k], before[1]["w"][k]) for k in w0)
    out["finite"] = all(np.isfinite(r["policy_loss"]) for r in rows)
    out["steps"] = trainer.env_steps
    trainer.save_checkpoint()
    saved = trainer.main_state()
    trainer.close()
    import ray; ray.shutdown()
    # resume: both learners get the checkpoint's weights back
    cfg = load_config(run / "config.yaml") if (run / "config.yaml").exists() else cfg
    again = SelfPlayTrainer(cfg, run, resume=True)
    again.setup()
    back = again._on_learners(weights)
    out["resumed"] = all(np.array_equal(b["w"][k], saved[k.removeprefix("net.")])
                         for b in back for k in b["w"])
    again.train_once()
    out["resumed_steps"] = again.env_steps
    again.close()
    print("RESULT " + json.dumps(out))
    """
)


def test_two_learners_train_in_step_and_resume(tmp_path):
    """learners.num=2: two Learner actors (DDP) get one shard of each minibatch, stay equal,
    move, checkpoint and resume."""
    out = _run_python(LEARNERS_SCRIPT, [str(tmp_path / "run")], 300)
    res = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
    assert res["learners"] == 2 and res["start_same"], res
    assert all("DDP" in name for name in res["ddp"]), res
    assert res["same"] and res["moved"] and res["finite"], res
    assert res["steps"] > 0 and res["resumed"] and res["resumed_steps"] > res["steps"], res


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_run_joins_an_existing_ray_cluster_with_two_runners(tmp_path):
    """--address: a separately started Ray cluster (``ray start --head``) takes the run's
    runners; the run trains, checkpoints and leaves the cluster running."""
    port = _free_port()
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    log = tmp_path / "head.log"
    ray_tmp = tempfile.mkdtemp(prefix="rt", dir="/tmp")  # Ray's socket paths are <= 107 bytes
    head = subprocess.Popen(
        [
            "ray",
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=3",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={ray_tmp}",
        ],
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        script = textwrap.dedent(
            """
            import sys
            from experiments.selfplay import main
            runs, address = sys.argv[1], sys.argv[2]
            over = [f"runs_dir={runs}", f"cache_dir={runs}/cache", "runners.num=2",
                    "runners.tables=16", "stop.iterations=2", "warm_start.decisions=0",
                    "eval.every_s=0", "eval.final_pairs=0"]
            assert main(["--config", "configs/smoke.yaml", "--address", address, *over]) == 0
            import ray
            print("CLUSTER_CPUS", ray.cluster_resources().get("CPU") if ray.is_initialized()
                  else None)
            """
        )
        deadline = time.monotonic() + 90
        while "Ray runtime started" not in log.read_text():
            if time.monotonic() > deadline or head.poll() is not None:
                pytest.fail(f"ray head did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        out = _run_python(script, [str(tmp_path / "runs"), f"127.0.0.1:{port}"], 240)
        run = tmp_path / "runs" / "smoke"
        assert "2 runner(s)" in out, out[-3000:]
        state = json.loads((run / "checkpoints" / "iter_000002" / "trainer_state.json").read_text())
        assert state["iteration"] == 2 and state["env_steps"] > 0
        assert head.poll() is None, "the run stopped the cluster it joined"
    finally:  # the whole cluster is the head's process group (a graceful stop drains 30 s)
        try:
            os.killpg(head.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        head.wait(timeout=30)
        shutil.rmtree(ray_tmp, ignore_errors=True)


def test_ctrl_c_saves_a_checkpoint_and_exits_cleanly(tmp_path):
    runs = tmp_path / "runs"
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    cmd = [
        sys.executable,
        "-m",
        "experiments.selfplay",
        "--config",
        "configs/smoke.yaml",
        f"runs_dir={runs}",
        f"cache_dir={runs}/cache",
        "stop.iterations=100000",
        "checkpoint.every=0",
        "eval.every_s=0",
    ]
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines = []
    deadline = time.time() + 150
    while time.time() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if line.startswith("it    2"):
            break
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("no second iteration:\n" + "".join(lines[-50:]))
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the whole group
    try:
        rest, _ = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("Ctrl-C did not stop the run")
    out = "".join(lines) + rest
    assert proc.returncode == 0, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    assert "--resume" in out
    summary = json.loads((runs / "smoke" / "summary.json").read_text())
    assert summary["stopped_by"] == "interrupted"
    assert (Path(summary["checkpoint"]) / "trainer_state.json").exists()


def test_a_non_finite_update_is_skipped_and_counted():
    """The learner checks all gradients with one fused norm: a NaN anywhere skips the
    optimizer step (weights unchanged, counted); finite gradients step."""
    from ray.rllib.core import DEFAULT_MODULE_ID

    from experiments.selfplay.rllib.algorithm import build_algo_config

    c = build_algo_config(load_config(REPO / "configs" / "smoke.yaml"))
    spaces = {"__env__": (c.observation_space, c.action_space)}
    spaces[DEFAULT_MODULE_ID] = spaces["__env__"]
    learner = c.build_learner(env=None, spaces=spaces)
    learner.build()
    params = dict(learner._params)
    before = {k: v.detach().clone() for k, v in params.items()}
    bad = {k: torch.ones_like(v) for k, v in params.items()}
    bad[next(iter(bad))].view(-1)[0] = float("nan")
    learner.apply_gradients(bad)
    assert learner.skipped_updates == 1
    assert all(torch.equal(before[k], v) for k, v in params.items())
    learner.apply_gradients({k: torch.ones_like(v) for k, v in params.items()})
    assert learner.skipped_updates == 1
    assert any(not torch.equal(before[k], v) for k, v in params.items())


def test_progress_log_of_an_older_version_is_rewritten_by_column_name(tmp_path):
    import csv

    from experiments.selfplay.log import PROGRESS_COLUMNS, CsvLog

    path = tmp_path / "progress.csv"
    path.write_text("iteration,env_steps,load1\n1,100,0.5\n")
    log = CsvLog(path, PROGRESS_COLUMNS)
    log.write({"iteration": 2, "env_steps": 200, "runner_sample_s": 1.5})
    rows = list(csv.DictReader(path.open()))
    assert list(rows[0]) == PROGRESS_COLUMNS
    assert (rows[0]["iteration"], rows[0]["env_steps"], rows[0]["load1"]) == ("1", "100", "0.5")
    assert rows[0]["runner_sample_s"] == "" and rows[1]["runner_sample_s"] == "1.5"
