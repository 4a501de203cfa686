"""The ``alone`` marker (tests/helpers/alone.py): under two xdist workers, a test marked
``alone`` never overlaps another test, while unmarked tests do run side by side."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from helpers import REPO

# each test sleeps (no CPU, so the two workers overlap for sure unless held off) and records
# its span; the files split over both workers (--dist loadfile)
TEST_FILE = textwrap.dedent(
    """
    import json, os, time
    import pytest

    def _span(name):
        t0 = time.monotonic()
        time.sleep(0.4)
        with open(os.environ["SPANS"], "a") as f:
            f.write(json.dumps([name, t0, time.monotonic()]) + "\\n")

    @pytest.mark.parametrize("i", range(4))
    def test_plain_{n}(i):
        _span("plain_{n}_%d" % i)

    @pytest.mark.alone
    def test_alone_{n}():
        _span("alone_{n}")
    """
)


def test_an_alone_test_never_overlaps_another(tmp_path):
    for n in (1, 2):
        (tmp_path / f"test_f{n}.py").write_text(TEST_FILE.replace("{n}", str(n)))
    spans = tmp_path / "spans.jsonl"
    env = {**os.environ, "SPANS": str(spans), "PYTHONPATH": str(REPO / "tests")}
    args = "-q -p no:cacheprovider -p helpers.alone -n 2 --dist loadfile -o markers=alone"
    res = subprocess.run(
        [sys.executable, "-m", "pytest", *args.split(), str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    rows = [json.loads(line) for line in spans.read_text().splitlines()]
    assert len(rows) == 10

    def overlap(a, b):
        return a[1] < b[2] and b[1] < a[2]

    alone = [r for r in rows if r[0].startswith("alone")]
    assert len(alone) == 2
    for a in alone:
        assert not [r[0] for r in rows if r is not a and overlap(a, r)], (a, rows)
    plain = [r for r in rows if r[0].startswith("plain")]
    assert any(overlap(a, b) for a in plain for b in plain if a[0] < b[0]), rows
