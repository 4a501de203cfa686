"""One rule for every config dict in the project: merge over defaults, unknown keys are errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge_known(defaults: Mapping[str, Any], given: Mapping[str, Any] | None, what: str) -> dict:
    """``{**defaults, **given}``; a key of ``given`` that ``defaults`` lacks raises a
    ``ValueError`` naming it and listing the valid keys (``what`` names the config)."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ValueError(f"unknown {what} key(s) {unknown}; valid keys: {sorted(defaults)}")
    return {**defaults, **given}
