"""The Chinese front page (README.zh-CN.md) is kept in step with the English one: the same
commands and code blocks in the same order (the English ones run in test_readme.py), the
same links, and the Guandan terms as players use them."""

from __future__ import annotations

import re

from helpers import REPO

FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.M | re.S)
LINK = re.compile(r"\]\(([^)]+)\)")


def _read(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def test_the_chinese_readme_has_the_same_code_blocks_in_the_same_order():
    en, zh = FENCE.findall(_read("README.md")), FENCE.findall(_read("README.zh-CN.md"))
    assert en and zh == en, "README.zh-CN.md's code blocks differ from README.md's"


def test_the_chinese_readme_links_what_the_english_one_links():
    en = set(LINK.findall(_read("README.md"))) - {"README.zh-CN.md"}
    zh = set(LINK.findall(_read("README.zh-CN.md"))) - {"README.md"}
    assert zh == en
    for target in en:
        path = target.split("#")[0]
        if path and "://" not in path:
            assert (REPO / path).exists(), target
    assert "README.zh-CN.md" in _read("README.md").split("\n\n")[1]  # linked from the top


def test_the_chinese_readme_uses_the_players_terms():
    zh = _read("README.zh-CN.md")
    for term in (
        "掼蛋",
        "级牌",
        "逢人配",
        "进贡",
        "还贡",
        "抗贡",
        "头游",
        "末游",
        "接风",
        "单张",
        "对子",
        "三同张",
        "三带二",
        "顺子",
        "三连对",
        "钢板",
        "炸弹",
        "同花顺",
        "天王炸",
    ):
        assert term in zh, term
