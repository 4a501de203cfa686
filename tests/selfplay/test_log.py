"""The progress log (``experiments.selfplay.log``)."""

from __future__ import annotations


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
