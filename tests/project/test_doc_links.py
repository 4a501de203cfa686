"""Every relative link in the project's Markdown leads somewhere: the file exists, and a
``#fragment`` names a heading of the target page as GitHub renders it (its slug), so the
cross-references between the docs (``selfplay.md#the-odds-block-2026-12-06``, …) do not rot
when a heading is reworded or a section moves."""

from __future__ import annotations

import re
import subprocess
import unicodedata
from functools import cache
from pathlib import Path

import pytest

from helpers import REPO

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)
HTML_ID = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"", re.I)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: markup stripped (links keep their text, code its
    content), lower case, every character but letters, digits, marks, ``_``, ``-`` and
    spaces dropped, spaces turned into ``-`` (the rule of github-slugger)."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # [text](url) -> text
    text = text.replace("`", "").lower()
    kept = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in " -_" or cat[0] in "LNM":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


def markdown_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "*.md"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return [REPO / line for line in out.stdout.split()]


@cache
def anchors(path: Path) -> frozenset[str]:
    """The fragments a page answers to: its headings' slugs (a repeated slug gets ``-1``,
    ``-2``, … as on GitHub) and explicit ``<a id=…>`` anchors."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set(HTML_ID.findall(text))
    for _, title in HEADING.findall(text):
        slug = github_slug(title)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return frozenset(out)


def links(path: Path) -> list[str]:
    """Relative link targets of a page (code blocks and inline code left out)."""
    text = INLINE_CODE.sub("", FENCE.sub("", path.read_text(encoding="utf-8")))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z][a-z0-9+.-]*:", t, re.I)]


def test_the_slug_rule_matches_github_on_our_headings():
    assert github_slug("GAE λ = 0.9, and a shorter anchor (2026-12-05 morning)") == (
        "gae-λ--09-and-a-shorter-anchor-2026-12-05-morning"
    )
    assert github_slug("Over `pretrained:long-v4` (2026-12-07): level, and a lesson") == (
        "over-pretrainedlong-v4-2026-12-07-level-and-a-lesson"
    )
    assert github_slug("What a run writes (`runs/<name>/`)") == "what-a-run-writes-runsname"
    assert github_slug("快速开始：两条命令") == "快速开始两条命令"


def test_the_checker_sees_a_broken_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## A section (2026)\n\n[ok](#a-section-2026) [bad](#gone)\n")
    assert links(page) == ["#a-section-2026", "#gone"]
    assert "a-section-2026" in anchors(page) and "gone" not in anchors(page)


@pytest.mark.parametrize("page", markdown_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page: Path):
    broken = []
    for target in links(page):
        file_part, _, fragment = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            broken.append(f"{target}: no file {dest.relative_to(REPO.resolve())}")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.name}")
    assert not broken, f"{page.relative_to(REPO)}:\n  " + "\n  ".join(broken)
