"""Learning-curve plots of self-play runs (``experiments.selfplay.plot``): one run, and several
runs over each other (an ablation), drawn from the files a run writes."""

from __future__ import annotations

import pandas as pd
import pytest

from experiments.selfplay.plot import main

EVAL_COLUMNS = ["dup_win_rate", "dup_win_rate_lo", "dup_win_rate_hi"]


def _fake_run(path, rate: float):
    """A run directory with the two CSV files a run writes (``eval.csv``, ``progress.csv``)."""
    path.mkdir()
    rows = []
    for i, opp in enumerate(("random", "heuristic") * 3):
        win = 1.0 if opp == "random" else rate + 0.01 * i
        rows.append(
            {
                "iteration": 10 * i,
                "env_steps": 1e6 * (i + 1),
                "time_s": 60.0 * (i + 1),
                "opponent": opp,
                "pairs": 100,
                **dict(zip(EVAL_COLUMNS, (win, win - 0.05, win + 0.05), strict=True)),
                "mean_gain": win - 0.5,
                "mean_gain_lo": win - 0.6,
                "mean_gain_hi": win - 0.4,
            }
        )
    pd.DataFrame(rows).to_csv(path / "eval.csv", index=False)
    pd.DataFrame(
        {"env_steps": [1e5 * k for k in range(50)], "env_steps_per_s": [15000.0] * 50}
    ).to_csv(path / "progress.csv", index=False)
    return path


def test_several_runs_are_drawn_over_each_other(tmp_path, capsys):
    a, b = _fake_run(tmp_path / "a", 0.55), _fake_run(tmp_path / "b", 0.6)
    out = tmp_path / "docs" / "ablation.png"
    assert main([str(a), str(b), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 20_000
    assert capsys.readouterr().out.strip() == str(out)
    with pytest.raises(ValueError, match="no evaluation against 'long-v1'"):
        main([str(a), str(b), "--out", str(out), "--opponent", "long-v1"])
    with pytest.raises(SystemExit):  # several runs need a named output
        main([str(a), str(b)])
