"""The licence, the citation and the changelog (issue 28, item 1): what pyproject declares,
what the README's BibTeX block says and what CITATION.cff says agree."""

from __future__ import annotations

import re
import tomllib

import yaml

from helpers import REPO


def _pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _bibtex() -> dict[str, str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bibtex\n(.*?)```", readme, re.S).group(1)
    fields = dict(re.findall(r"^\s*(\w+)\s*=\s*\{(.*)\},?\s*$", block, re.M))
    return {k: v.strip("{}") for k, v in fields.items()}


def test_licence_is_mit_as_declared():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert _pyproject()["license"] == {"text": "MIT"}
    assert text.startswith("MIT License")
    assert "Copyright (c) 2026 the guandan-env authors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_citation_cff_matches_the_readme_and_pyproject():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    bib = _bibtex()
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] == "software" and cff["message"]
    assert cff["version"] == _pyproject()["version"] == bib["version"]
    assert cff["title"] == bib["title"]
    assert [a["name"] for a in cff["authors"]] == [bib["author"]]
    assert str(cff["date-released"])[:4] == bib["year"]
    assert cff["url"] == bib["url"]
    assert cff["license"] == "MIT"


def test_changelog_keeps_a_changelog_from_0_1_0():
    text = (REPO / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert versions == ["Unreleased", "0.2.0", "0.1.0"]
    assert f"## [{_pyproject()['version']}] - " in text
    for v in versions:  # every heading has its link
        assert re.search(rf"^\[{re.escape(v)}\]: https://", text, re.M), v
    assert "keepachangelog.com" in text
    assert "guandan_env/env_version.py" in text  # the env's own version, and its history:
    history = (REPO / "guandan_env/env_version.py").read_text(encoding="utf-8")
    if "docs/environments.md" in history:  # or where its docstring points
        history = (REPO / "docs/environments.md").read_text(encoding="utf-8")
    assert "guandan_v0" in history and "guandan_v1" in history
