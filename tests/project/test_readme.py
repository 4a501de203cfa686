"""The README's and docs' examples run exactly as printed.

Every fenced ``python`` block of ``README.md`` and ``docs/**/*.md`` runs verbatim, each in a
fresh namespace and an empty working directory: a block of ``>>>`` lines is a doctest (its
printed results must match), any other block is executed. The one way out is visible in the
document itself: a block fenced as ```` ```python no-run ```` (code to read, such as a
snippet to paste into a file, or a run too long for the tests) is skipped, and reported as
such. Shell blocks (```` ```bash ````) are commands, not run here.
"""

from __future__ import annotations

import doctest
import re
import textwrap
from pathlib import Path

import pytest

from helpers import REPO as ROOT

README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
NO_RUN = "no-run"  # the info-string word that marks a python block as not to be run

# a fence may be indented (a block inside a list item); the closing fence has the same indent
_BLOCK = re.compile(r"^( *)```python([^\n]*)\n(.*?)^\1```", re.M | re.S)


def _blocks(path: Path) -> list[tuple[int, str, str]]:
    """``(line, info string, code)`` of every python block of ``path``, code dedented."""
    text = path.read_text(encoding="utf-8")
    return [
        (text.count("\n", 0, m.start()) + 1, m.group(2).strip(), textwrap.dedent(m.group(3)))
        for m in _BLOCK.finditer(text)
    ]


CASES = [
    pytest.param(path, line, info, code, id=f"{path.relative_to(ROOT)}:{line}")
    for path in DOCUMENTS
    for line, info, code in _blocks(path)
]


def run_block(path: Path, line: int, code: str) -> dict:
    """Run one block as printed; returns its namespace (doctest: its globals)."""
    where = f"{path.relative_to(ROOT)}:{line}"
    names: dict = {"__name__": "__main__"}
    if code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(code, names, where, str(path), line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0, f"{where}: {runner.failures} doctest failure(s)"
        return test.globs
    exec(compile(code, where, "exec"), names)
    return names


@pytest.mark.parametrize("path, line, info, code", CASES)
def test_every_python_block_runs_as_printed(path, line, info, code, tmp_path, monkeypatch):
    if NO_RUN in info.split():
        pytest.skip(f"marked ```python {NO_RUN} in the document")
    assert not info, f"unknown info string {info!r} (only {NO_RUN!r} is known)"
    monkeypatch.chdir(tmp_path)  # files a block writes (game.json …) stay out of the repo
    run_block(path, line, code)


def test_the_documents_have_runnable_blocks():
    """The parametrised test above really sees the blocks (a changed fence would hide them)."""
    readme = [info for _, info, _ in _blocks(README)]
    assert len(readme) >= 3 and NO_RUN not in " ".join(readme)
    assert sum(1 for c in CASES if NO_RUN not in c.values[2]) >= 8


def test_ten_line_example_is_ten_lines():
    block = next(code for _, _, code in _blocks(README) if "agent_iter" in code)
    assert len(block.strip().splitlines()) <= 12


def test_vector_example_leaves_what_its_comment_says(tmp_path, monkeypatch):
    from guandan_env.core.actions import NUM_ACTIONS
    from guandan_env.encoding.observation import OBS_DIM

    line, _, code = next(b for b in _blocks(README) if "VectorGuandanEnv(" in b[2])
    monkeypatch.chdir(tmp_path)
    names = run_block(README, line, code)
    b = names["env"].num_tables
    assert names["obs"].shape == (b, OBS_DIM) and names["mask"].shape == (b, NUM_ACTIONS)
    assert names["mask"].any(1).all()  # every table has a seat to act
    assert names["rewards"].shape == (b, 4) and (names["rewards"].sum(1) == 0).all()


def test_sizes_quoted_in_the_docs_are_the_code_s():
    from guandan_env.core.actions import NUM_ACTIONS
    from guandan_env.encoding.observation import OBS_DIM

    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        found = re.findall(r"float32\[(\d+)\]|\(B, (\d+)\) float32", text)
        obs_sizes = {int(single or batched) for single, batched in found}
        mask_sizes = {int(n) for n in re.findall(r"int8\[(\d+)\]", text)}
        assert obs_sizes <= {OBS_DIM}, (path.name, obs_sizes)
        assert mask_sizes <= {NUM_ACTIONS}, (path.name, mask_sizes)
    text = README.read_text(encoding="utf-8")
    assert f"float32[{OBS_DIM}]" in text and f"int8[{NUM_ACTIONS}]" in text
