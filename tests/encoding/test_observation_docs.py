"""The observation's documentation follows its one declaration (``encoding.obs_layout``).

* ``docs/observation.md``'s table is the generated one, and the AEC env's docstring shows it;
* the observation's size is written nowhere in prose except where a test checks it: the
  README's ``float32[...]`` / ``(B, ...) float32`` (``test_readme.py``), the generated table,
  and ``env_version.py``'s history, whose entry for the current version must state ``OBS_DIM``
  (so a layout change without a new env version fails here).
"""

from __future__ import annotations

import re
from pathlib import Path

import guandan_env.envs.aec as aec
from guandan_env.core.actions import NUM_ACTIONS
from guandan_env.encoding.obs_layout import (
    OBS_DIM,
    TABLE_BEGIN,
    TABLE_END,
    spec_table,
    with_table,
)
from guandan_env.encoding.packing import OBS_BITS
from guandan_env.env_version import ENV_VERSION
from helpers import REPO as ROOT

DOC = ROOT / "docs" / "observation.md"
VERSION = ROOT / "docs" / "environments.md"  # the env versions' history
SHAPES = re.compile(
    r"float32\[(\d+)\]|\((?:B|\d+), (\d+)\)|float32 \(n, (\d+)\)"
)  # observation shapes in docs
SHAPE_DOCS = tuple(
    ROOT / p for p in ("README.md", "README.zh-CN.md", "docs/environments.md", "docs/datasets.md")
)
TEXT_SUFFIXES = {".md", ".py", ".ipynb", ".yaml", ".yml", ".toml", ".txt", ".html", ".js"}
SKIP_DIRS = {".git", "__pycache__", "golden", "node_modules", ".pytest_cache", "results"}


def test_the_docs_table_is_the_declaration_s():
    text = DOC.read_text(encoding="utf-8")
    assert text == with_table(text), (
        "docs/observation.md is out of date: python -m guandan_env.encoding.obs_layout "
        "docs/observation.md"
    )
    assert spec_table() in aec.__doc__


def test_the_current_version_s_history_entry_states_the_observation_size():
    text = VERSION.read_text(encoding="utf-8")
    entry = re.search(rf"\* `+{ENV_VERSION}`+.*?(?=\n\* |\n\n|\Z)", text, re.S)
    assert entry, f"no history entry for {ENV_VERSION} in docs/environments.md"
    sizes = {int(n.replace(",", "")) for n in re.findall(r"observation of ([\d,]+)", entry[0])}
    assert sizes == {OBS_DIM}, (
        f"{ENV_VERSION}'s entry states an observation of {sizes}, the layout has {OBS_DIM}: "
        "a new layout is a new env version (guandan_env/env_version.py, docs/environments.md)"
    )


def _size_pattern() -> re.Pattern[str]:
    forms = set()
    for n in (OBS_DIM, OBS_BITS):
        forms |= {str(n), f"{n:,}", f"{n:,}".replace(",", " "), f"{n:,}".replace(",", "\u202f")}
    return re.compile(r"(?<![\d.,])(" + "|".join(sorted(forms, key=len, reverse=True)) + r")(?!\d)")


def _checked_elsewhere(path: Path, text: str) -> str:
    """``text`` without the places where another test checks the size."""
    if path in SHAPE_DOCS:
        text = SHAPES.sub(
            "", text
        )  # checked by test_the_observation_shapes_in_the_docs_are_obs_dim
    if path == ROOT / "CHANGELOG.md":
        return ""  # history: what each past release had
    # a 95% interval ("1633 [1615, 1652]") is a statistic, never a size
    text = re.sub(r"\[\s*[-+−]?\d[\d.,]*\s*,\s*[-+−]?\d[\d.,]*\s*\]", "", text)
    if path == VERSION:
        # its history: sizes of past versions (the current one is checked above)
        return re.sub(r"\* `+guandan_v\d+`+.*?(?=\n\* |\n\n|\Z)", "", text, flags=re.S)
    if path == DOC:
        return re.sub(re.escape(TABLE_BEGIN) + ".*?" + re.escape(TABLE_END), "", text, flags=re.S)
    return text


def test_the_observation_shapes_in_the_docs_are_obs_dim():
    found = {
        f"{p.relative_to(ROOT)}: {m[0]}": int(m[1] or m[2] or m[3])
        for p in SHAPE_DOCS
        for m in SHAPES.finditer(p.read_text(encoding="utf-8"))
    }
    obs_shapes = {k: n for k, n in found.items() if n not in (NUM_ACTIONS, 4)}
    assert obs_shapes and set(obs_shapes.values()) == {OBS_DIM}, obs_shapes


def test_no_prose_states_the_observation_size_unchecked():
    size = _size_pattern()
    found = []
    for path in sorted(ROOT.rglob("*")):
        if path.suffix not in TEXT_SUFFIXES or SKIP_DIRS & set(path.relative_to(ROOT).parts):
            continue
        text = _checked_elsewhere(path, path.read_text(encoding="utf-8", errors="replace"))
        for m in size.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{path.relative_to(ROOT)}:{line}: {m[0]}")
    assert found == [], (
        "the observation's size written by hand (write OBS_DIM / OBS_BITS, or link "
        "docs/observation.md): " + ", ".join(found)
    )
