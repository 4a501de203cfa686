"""Game datasets (issue 28, item 4): ``python -m experiments.dataset`` records games as
bit-packed decisions; a dataset replays to the same games through the env, equal seeds give
byte-identical files, the loaders (numpy, torch) and the warm start read the format."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.registry import make_agent
from experiments.dataset import load, record_games, save
from experiments.dataset.__main__ import main
from experiments.evaluation.duplicate import derive_seed
from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.observation import OBS_DIM
from guandan_env.envs import dataset as fmt
from guandan_env.envs.aec import AGENTS, raw_env
from helpers import REPO

TRIBUTE = {"random_levels": True, "random_tribute": True}


@pytest.fixture(scope="module")
def deal_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ds") / "deals.npz"
    save(path, *record_games(["heuristic", "random"], pairs=2, seed=3, config=TRIBUTE))
    return path


@pytest.fixture(scope="module")
def match_file(tmp_path_factory) -> Path:
    """Matches of several deals: deal ends inside episodes, the cap (truncation) too."""
    path = tmp_path_factory.mktemp("ds") / "matches.npz"
    data, meta = record_games(["random"], pairs=3, seed=1, mode="match", config={"max_deals": 2})
    save(path, data, meta)
    return path


def _replay(data: dict, meta: dict) -> int:
    """Replay every game from its seeds through the env; return the decisions checked."""
    obs, masks = fmt.observations(data), fmt.masks(data)
    checked = 0
    for e in range(len(data["episode_seed"])):
        env = raw_env(**meta["config"])
        env.reset(seed=int(data["episode_seed"][e]), options=meta["options"] or None)
        agents = []
        for s in range(4):
            agent = make_agent(meta["agents"][data["episode_seats"][e, s]], seed=s)
            agent.reset(seed=derive_seed(int(data["episode_agent_seed"][e]), s))
            agents.append(agent)
        start, length = int(data["episode_start"][e]), int(data["episode_length"][e])
        assert (data["episode"][start : start + length] == e).all()
        for i in range(start, start + length):
            name = env.agent_selection
            seat = AGENTS.index(name)
            ob = env.observe(name)
            assert seat == data["seat"][i]
            assert np.array_equal(ob["observation"], obs[i])
            assert np.array_equal(ob["action_mask"].astype(bool), masks[i])
            # the recorded agents, reseeded, choose the recorded action
            assert agents[seat].act(ob, env.infos[name]) == data["action"][i]
            env.step(int(data["action"][i]))
            rewards = [env.rewards[a] for a in AGENTS]
            assert np.array_equal(np.float32(rewards), data["reward"][i])
            assert data["deal_end"][i] == ("deal_result" in env.infos[AGENTS[0]])
            assert data["terminated"][i] == all(env.terminations.values())
            assert data["truncated"][i] == all(env.truncations.values())
            checked += 1
        assert all(env.terminations.values()) or all(env.truncations.values())  # ended
    return checked


@pytest.mark.parametrize("which", ["deal_file", "match_file"])
def test_a_dataset_replays_to_the_same_games(which, request):
    data, meta = load(request.getfixturevalue(which))
    assert _replay(data, meta) == len(data["action"]) == meta["decisions"] > 0
    assert int(data["episode_length"].sum()) == len(data["action"])
    assert meta["deals"] == int(data["deal_end"].sum())
    if which == "match_file":
        assert meta["deals"] > meta["episodes"]  # several deals per episode
        assert data["truncated"].any()  # some match hit the max_deals cap


def test_fields_dtypes_and_sizes_are_the_documented_ones(deal_file):
    data, meta = load(deal_file)
    n, e = len(data["action"]), len(data["episode_seed"])
    for name, (dt, shape) in {**fmt.GAME_FIELDS, **fmt.EPISODE_FIELDS}.items():
        rows = e if name in fmt.EPISODE_FIELDS else n
        assert data[name].dtype == dt and data[name].shape == (rows, *shape), name
    assert meta["format"] == "guandan-decisions" and meta["kind"] == "games"
    assert meta["env"] == "guandan_v1" and meta["agents"] == ["heuristic", "random"]
    # 4 games: the duplicate pair seeds, each played with the teams swapped
    assert e == 4 and data["episode_seed"][0] == data["episode_seed"][1]
    assert data["episode_seats"][0].tolist() == [0, 1, 0, 1]
    assert data["episode_seats"][1].tolist() == [1, 0, 1, 0]
    per_decision = sum(
        data[k].nbytes // n for k in fmt.GAME_FIELDS
    )  # the size docs/datasets.md quotes
    assert per_decision == 207 + 4 + 281 + 2 + 1 + 16 + 3 + 4
    doc = (REPO / "docs" / "datasets.md").read_text(encoding="utf-8")
    for name in {**fmt.GAME_FIELDS, **fmt.EPISODE_FIELDS}:
        assert f"`{name}`" in doc, name
    assert f"{per_decision} bytes" in doc


def test_equal_seeds_give_byte_identical_files(tmp_path):
    args = ["random", "heuristic", "--pairs", "2", "--seed", "5", "--random-tribute"]
    a, b, c = tmp_path / "a.npz", tmp_path / "b.npz", tmp_path / "c.npz"
    assert main([*args, "--out", str(a), "--no-progress"]) == 0
    cli = [sys.executable, "-m", "experiments.dataset", *args, "--out", str(b), "--no-progress"]
    out = subprocess.run(cli, cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0 and "decisions" in out.stdout, out.stderr[-2000:]
    assert a.read_bytes() == b.read_bytes()
    assert main([*args[:-3], "--seed", "6", "--random-tribute", "--out", str(c)]) == 0
    assert a.read_bytes() != c.read_bytes()


def test_cli_refuses_bad_input(tmp_path, capsys):
    assert main(["nosuchagent", "--out", str(tmp_path / "x.npz"), "--no-progress"]) == 2
    assert "error:" in capsys.readouterr().err
    assert not (tmp_path / "x.npz").exists()


def test_the_warm_start_reads_a_recorded_dataset_and_its_own_cache(deal_file, tmp_path):
    from experiments.selfplay.warm_start import data as bc_data

    games, _ = load(deal_file)
    bc, meta = bc_data.load(deal_file)
    assert meta["kind"] == "games"
    fmt.check(bc, bc_data.FIELDS)
    for k in fmt.CORE_FIELDS:
        assert np.array_equal(bc[k], games[k])
    assert np.array_equal(bc["n_legal"], fmt.masks(games).sum(1))
    last = np.flatnonzero(games["deal_end"])  # deal mode: one deal per game
    assert np.array_equal(bc["deal"], games["episode"])
    assert np.array_equal(bc["ret"], games["reward"][last[bc["deal"]], games["seat"]])
    # the warm start's own files: written in the shared format, read back exactly
    own, _ = bc_data.generate_with_meta(40, seed=0, cache_dir=tmp_path, progress=False)
    (path,) = tmp_path.glob("bc-*.npz")
    again, stored = bc_data.load(path)
    assert stored["kind"] == "bc" and stored["format"] == "guandan-decisions"
    assert all(np.array_equal(own[k], again[k]) for k in bc_data.FIELDS)
    # and a cache written before the shared format (plain numpy.savez) still loads
    old = tmp_path / "old.npz"
    np.savez(old, **own, meta_json=np.array('{"workers": 1}'))
    back, _ = bc_data.load(old)
    assert all(np.array_equal(own[k], back[k]) for k in bc_data.FIELDS)


def test_torch_dataset_items_and_batches(deal_file):
    torch = pytest.importorskip("torch")
    from torch.utils.data import DataLoader

    data, _ = load(deal_file)
    ds = fmt.torch_dataset(data)
    assert len(ds) == len(data["action"])
    item = ds[7]
    assert item["observation"].shape == (OBS_DIM,) and item["observation"].dtype == torch.float32
    assert item["action_mask"].shape == (NUM_ACTIONS,) and item["action_mask"].dtype == torch.bool
    assert np.array_equal(item["observation"].numpy(), fmt.observations(data, [7])[0])
    assert bool(item["action_mask"][item["action"]])  # the action taken was legal
    batch = next(iter(DataLoader(ds, batch_size=16)))
    assert batch["observation"].shape == (16, OBS_DIM) and batch["reward"].shape == (16, 4)
    assert batch["action"].tolist() == data["action"][:16].tolist()


def test_reader_refuses_other_files(tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(bad, action=np.zeros(3, np.int16), meta_json=np.array('{"format": "other"}'))
    with pytest.raises(ValueError, match="not 'guandan-decisions'"):
        fmt.read(bad)
    with pytest.raises(ValueError, match="no field"):
        fmt.load_games(bad)
