"""The run config (``experiments.selfplay.config``): errors name the key, the default config
file is generated from the declaration, every key is documented."""

from __future__ import annotations

import pytest
import yaml

from experiments.common.typed_config import to_dict
from experiments.selfplay.config import DEFAULTS, load_config, parse_overrides
from helpers import REPO


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
    with pytest.raises(ValueError, match="num_epochs"):
        load_config(None, ["ppo.num_epochs=0"])
    assert load_config(None, ["ppo.num_epochs=1.3"]).ppo.num_epochs == 1.3
    assert load_config(None, ["ppo.num_epochs=2"]).ppo.num_epochs == 2.0
    with pytest.raises(ValueError, match="randm"):  # eval.final_only's specs are agents too
        load_config(None, ["eval.final_only=[randm]"])
    assert parse_overrides(["a.b=1", "c=[1, 2]"]) == {"a": {"b": 1}, "c": [1, 2]}
    cfg = load_config(REPO / "configs" / "default.yaml", ["ppo.lr=1e-4"])
    assert cfg.ppo.lr.value_at(0) == 1e-4
    load_config(REPO / "configs" / "smoke.yaml")
    assert load_config(REPO / "configs" / "long.yaml").stop.time_s <= 3 * 3600


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
