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
    exec(compile(code, "README.md", "exec"), {})
