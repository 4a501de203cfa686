"""The command ``python -m experiments.selfplay`` (``experiments.selfplay.cli``): one-line
errors before Ray starts, run directories never overwritten."""

from __future__ import annotations

import pytest

from experiments.selfplay.config import load_config


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
