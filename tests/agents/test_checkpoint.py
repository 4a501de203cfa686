"""Policy files (``agents.policy_file``) and league files (``agents.checkpoint``): formats,
errors, and loading without running code."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
import torch

from agents.candidate_net import CandidateNet, check_model_config
from agents.policy_file import load_policy_file, save_policy
from helpers.selfplay import SMALL_MODEL


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


def test_a_checkpoint_killed_while_marked_complete_is_skipped_on_resume(tmp_path):
    from agents.checkpoint import STATE_FILE, latest_checkpoint, mark_complete

    ckpts = tmp_path / "checkpoints"
    done, killed = ckpts / "iter_000050", ckpts / "iter_000100"
    done.mkdir(parents=True)
    killed.mkdir()
    mark_complete(done, {"iteration": 50})
    assert json.loads((done / STATE_FILE).read_text()) == {"iteration": 50}
    assert [p.name for p in done.iterdir()] == [STATE_FILE]  # no temporary file left
    # killed between writing the state and renaming it: only the temporary file is there
    (killed / f"{STATE_FILE}.tmp").write_text('{"itera')
    assert latest_checkpoint(tmp_path) == done
    mark_complete(killed, {"iteration": 100})
    assert latest_checkpoint(tmp_path) == killed
