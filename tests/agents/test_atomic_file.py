"""``write_json_atomic``: a reader sees the old file or the whole new one, never a part."""

from __future__ import annotations

import json

import pytest

from agents.atomic_file import write_json_atomic


def test_it_replaces_the_file_and_leaves_no_temporary_behind(tmp_path):
    path = tmp_path / "summary.json"
    write_json_atomic(path, {"iterations": 1})
    write_json_atomic(path, {"iterations": 2, "note": "中文"})
    assert json.loads(path.read_text(encoding="utf-8")) == {"iterations": 2, "note": "中文"}
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]


def test_an_object_that_is_not_json_leaves_the_old_file_untouched(tmp_path):
    path = tmp_path / "runners.json"
    write_json_atomic(path, {"runners": [1, 2]})
    before = path.read_bytes()
    with pytest.raises(TypeError):
        write_json_atomic(path, {"runners": object()})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["runners.json"]
