"""The README's examples run as written."""

from __future__ import annotations

import doctest
import re
import textwrap
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_ten_line_example_runs():
    block = next(b for b in _python_blocks() if "agent_iter" in b)
    assert len(block.strip().splitlines()) <= 12
    exec(compile(block, "README.md", "exec"), {})


def test_text_helpers_example():
    block = next(b for b in _python_blocks() if b.lstrip().startswith(">>>"))
    test = doctest.DocTestParser().get_doctest(block, {}, "README", "README.md", 0)
    runner = doctest.DocTestRunner()
    runner.run(test)
    assert runner.failures == 0


def test_vector_example_runs():
    block = next(b for b in _python_blocks() if "VectorGuandanEnv(" in b)
    block = textwrap.dedent(block)  # the block is indented inside a list item
    code = "import numpy as np\n" + block.replace("1024", "8").replace("range(1000)", "range(50)")
    names: dict = {}
    exec(compile(code, "README.md", "exec"), names)
    from guandan_env.encoding.observation import OBS_DIM

    assert names["obs"].shape == (8, OBS_DIM) and names["mask"].shape[0] == 8
    assert names["mask"].any(1).all()  # every table has a seat to act
    assert names["rewards"].shape == (8, 4) and (names["rewards"].sum(1) == 0).all()


def test_sizes_quoted_in_the_readme_are_the_code_s():
    from guandan_env.core.actions import NUM_ACTIONS
    from guandan_env.encoding.observation import OBS_DIM

    text = README.read_text(encoding="utf-8")
    found = re.findall(r"float32\[(\d+)\]|\(B, (\d+)\) float32", text)
    obs_sizes = {int(single or batched) for single, batched in found}
    mask_sizes = {int(n) for n in re.findall(r"int8\[(\d+)\]", text)}
    assert obs_sizes == {OBS_DIM}, obs_sizes
    assert mask_sizes == {NUM_ACTIONS}, mask_sizes
