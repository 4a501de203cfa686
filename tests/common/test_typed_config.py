"""Typed configs (``experiments.common.typed_config``): schedules, YAML round trip, dotted
errors."""

from __future__ import annotations

import pytest
import yaml

from experiments.selfplay.config import DEFAULTS, load_config


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
