"""Behaviour-cloning data of the heuristic agent (experiments.selfplay.warm_start.data):
legality, exact observations against a replay of the AEC env, deal rewards, determinism
across worker counts (Ray), the cache and the CLI."""

from __future__ import annotations

import numpy as np
import pytest

import guandan_env
from agents.heuristic import HeuristicAgent
from experiments.selfplay.warm_start import data as bc_data
from guandan_env.encoding.packing import MASK_BYTES, OBS_BYTES, unpack_masks, unpack_obs
from guandan_env.envs.aec import AGENTS

N = 1300  # three chunks: the two-worker run has chunks in flight at once
SEED = 3


@pytest.fixture(scope="module")
def cached(tmp_path_factory):
    """``(data, meta, cache_dir)`` of one in-process run written to a fresh cache."""
    cache = tmp_path_factory.mktemp("bc_cache")
    data, meta = bc_data.generate_with_meta(N, SEED, 1, cache, progress=False)
    return data, meta, cache


def test_shapes_and_dtypes(cached):
    data, meta, _ = cached
    want = {
        "obs_bits": (np.uint8, (N, OBS_BYTES)),
        "obs_scalar": (np.float32, (N,)),
        "mask_bits": (np.uint8, (N, MASK_BYTES)),
        "action": (np.int16, (N,)),
        "n_legal": (np.int16, (N,)),
        "ret": (np.float32, (N,)),
        "deal": (np.int32, (N,)),
        "seat": (np.int8, (N,)),
    }
    assert set(data) == set(want)
    for k, (dt, shape) in want.items():
        assert data[k].dtype == dt and data[k].shape == shape, k
    assert not meta["from_cache"] and meta["decisions"] == N
    assert meta["seconds"] > 0 and meta["decisions_per_s"] > 0
    deals = np.unique(data["deal"])
    assert np.array_equal(deals, np.arange(deals.size))  # contiguous, in order
    assert np.all(np.diff(data["deal"]) >= 0)
    assert meta["deals"] == deals.size


def test_actions_legal_under_their_masks(cached):
    data, _, _ = cached
    masks = unpack_masks(data["mask_bits"])
    rows = np.arange(N)
    assert masks[rows, data["action"]].all()
    assert np.array_equal(masks.sum(1), data["n_legal"])
    assert (data["n_legal"] >= 1).all()


def test_ret_is_the_deal_reward_shared_by_partners(cached):
    data, _, _ = cached
    assert set(np.unique(data["ret"]).tolist()) <= {-3.0, -2.0, -1.0, 1.0, 2.0, 3.0}
    for d in np.unique(data["deal"]):
        sel = data["deal"] == d
        per_seat = {}
        for s, r in zip(data["seat"][sel], data["ret"][sel], strict=True):
            assert per_seat.setdefault(int(s), float(r)) == float(r)  # one value per seat
        for s, r in per_seat.items():
            for t, q in per_seat.items():
                assert q == (r if (s - t) % 2 == 0 else -r)


@pytest.mark.parametrize("which", ["first", "last"])
def test_replay_matches_the_aec_env(cached, which):
    """Replaying a deal by its seed through the public env gives the recorded observations,
    masks, seats, the heuristic's actions and the deal reward (the last deal may be cut)."""
    data, _, _ = cached
    d = 0 if which == "first" else int(data["deal"][-1])
    idx = np.flatnonzero(data["deal"] == d)
    obs = unpack_obs(data["obs_bits"][idx], data["obs_scalar"][idx])
    masks = unpack_masks(data["mask_bits"][idx])
    env = guandan_env.env(**bc_data.DEFAULT_GAME)
    env.reset(seed=bc_data.deal_seed(SEED, d))
    agent = HeuristicAgent()
    k = 0
    for name in env.agent_iter():
        ob, _, term, trunc, info = env.last()
        if term or trunc:
            break
        if k < idx.size:
            assert AGENTS.index(name) == data["seat"][idx[k]]
            assert np.array_equal(ob["observation"], obs[k])
            assert np.array_equal(ob["action_mask"].astype(bool), masks[k])
            a = agent.act(ob, info)
            assert a == data["action"][idx[k]]
        else:
            a = agent.act(ob, info)
        env.step(a)
        k += 1
    assert k >= idx.size and (which == "last" or k == idx.size)
    rewards = np.array([env.unwrapped.rewards[ag] for ag in AGENTS], dtype=np.float32)
    assert np.array_equal(data["ret"][idx], rewards[data["seat"][idx]])


def test_same_seed_same_data_with_two_ray_workers(cached):
    pytest.importorskip("ray")
    data, _, _ = cached
    remote, meta = bc_data.generate_with_meta(N, SEED, 2, None, progress=False)
    assert meta["workers"] == 2 and not meta["from_cache"] and meta["chunks"] >= 3
    for k in data:
        assert np.array_equal(remote[k], data[k]), k


def test_cache_hit_loads_without_generating(cached, monkeypatch, capsys):
    data, meta, cache = cached
    files = sorted(p.name for p in cache.iterdir())
    assert files == [f"bc-{meta['key']}.npz"]  # no temporary file left behind

    def boom(*a, **k):
        raise AssertionError("generated although cached")

    monkeypatch.setattr(bc_data, "run_chunk", boom)
    again, meta2 = bc_data.generate_with_meta(N, SEED, 2, cache, progress=False)
    assert meta2["from_cache"] and meta2["path"] == meta["path"]
    assert meta2["generation_seconds"] == pytest.approx(meta["generation_seconds"])
    assert "from cache" in capsys.readouterr().out and meta["path"] in meta2["path"]
    for k in data:
        assert np.array_equal(again[k], data[k]) and again[k].dtype == data[k].dtype, k
    # another request is another file
    assert bc_data.cache_key(N, SEED + 1) != meta["key"]
    assert bc_data.cache_key(N + 1, SEED) != meta["key"]
    assert bc_data.cache_key(N, SEED, {"random_tribute": False}) != meta["key"]
    assert bc_data.cache_key(N, SEED, {"random_levels": True}) == meta["key"]


def test_different_seed_different_data_and_prefix_property(cached):
    data, _, _ = cached
    other = bc_data.generate(300, SEED + 1, 1, None, progress=False)
    assert not np.array_equal(other["obs_bits"], data["obs_bits"][:300])
    # a shorter request with the same seed is a prefix of the longer one
    short = bc_data.generate(300, SEED, 1, None, progress=False)
    for k in data:
        assert np.array_equal(short[k], data[k][:300]), k


def test_bad_arguments():
    with pytest.raises(ValueError, match="num_decisions"):
        bc_data.generate(0, 0, 1, None)
    with pytest.raises(ValueError, match="workers"):
        bc_data.generate(10, 0, 0, None)
    with pytest.raises(ValueError, match="seed"):
        bc_data.generate(10, -1, 1, None)
    with pytest.raises(ValueError, match="unknown"):
        bc_data.generate(10, 0, 1, None, game={"nope": 1})
    with pytest.raises(ValueError, match="deal"):
        bc_data.generate(10, 0, 1, None, game={"mode": "match"})
    with pytest.raises(ValueError, match="info_view"):
        bc_data.generate(10, 0, 1, None, game={"info_view": False})


def test_cli(tmp_path, capsys):
    meta = bc_data.main(["--decisions", "40", "--cache-dir", str(tmp_path), "--no-progress"])
    out = capsys.readouterr().out
    assert "40 decisions" in out and str(tmp_path) in out and meta["path"] in out
    for bad in (
        ["--decisions", "0"],
        ["--decisions", "x"],
        ["--decisions", "10", "--workers", "0"],
        ["--decisions", "10", "--seed", "-2"],
        ["--decisions", "10", "--game", "{bad json"],
        ["--decisions", "10", "--game", '{"nope": 1}'],
        [],
    ):
        with pytest.raises(SystemExit) as e:
            bc_data.main(bad)
        assert e.value.code == 2, bad
