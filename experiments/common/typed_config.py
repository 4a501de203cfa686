"""Typed configs: nested dataclasses read from YAML-like mappings, checked key by key.

An experiment declares its config once, as dataclasses whose field defaults are the
defaults and whose annotations are the types. ``from_mapping`` builds one from a (partial)
mapping: a key the dataclass does not declare, or a value of the wrong type, raises
``ValueError`` naming the dotted key. ``merged`` applies overrides to an existing config;
``to_dict`` gives plain data for YAML files and checkpoints.

Coercion follows YAML's quirks: ``1e-4`` (read by YAML as text) becomes a float where a
number belongs; a whole float becomes an int where an int belongs (``2.5`` is an error);
bools are never numbers. A field annotated ``dict`` is free-form here and checked by its
owner (the env config, the network config). A field whose key is a Python keyword declares
it in its metadata: ``lambda_: float = field(default=0.95, metadata={"key": "lambda"})``.
"""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from typing import Any, TypeVar

C = TypeVar("C")


def _key(f: dataclasses.Field) -> str:
    return f.metadata.get("key", f.name)


def to_dict(cfg: Any) -> dict[str, Any]:
    """Plain nested dicts and lists under the config's keys (a deep copy)."""
    return {
        _key(f): to_dict(v) if dataclasses.is_dataclass(v) else copy.deepcopy(v)
        for f in dataclasses.fields(cfg)
        for v in [getattr(cfg, f.name)]
    }


def from_mapping(cls: type[C], data: Any, where: str = "") -> C:
    """``cls`` (a dataclass) from ``data``; missing keys take their defaults."""
    if not isinstance(data, dict):
        raise ValueError(f"config key {where.rstrip('.') or '(top)'!r} is a section; got {data!r}")
    hints = typing.get_type_hints(cls)
    by_key = {_key(f): f.name for f in dataclasses.fields(cls) if f.init}
    unknown = [f"{where}{k}" for k in data if k not in by_key]
    if unknown:
        raise ValueError(f"unknown config key(s): {', '.join(unknown)}")
    kwargs = {by_key[k]: _value(f"{where}{k}", hints[by_key[k]], v) for k, v in data.items()}
    return cls(**kwargs)


def merged(cfg: C, overrides: dict[str, Any]) -> C:
    """``cfg`` with ``overrides`` (a partial nested mapping) applied, checked again."""
    return from_mapping(type(cfg), _deep_merge(to_dict(cfg), overrides))


def _deep_merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(out.get(k), dict) and isinstance(v, dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _value(key: str, tp: Any, v: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if v is None and type(None) in options:
            return None
        (inner,) = [t for t in options if t is not type(None)]
        return _value(key, inner, v)
    if dataclasses.is_dataclass(tp):
        return from_mapping(tp, v, key + ".")
    if tp is dict or origin is dict:
        if not isinstance(v, dict):
            raise ValueError(f"config key {key!r} must be a mapping; got {v!r}")
        return copy.deepcopy(v)
    if tp is list or origin is list:
        if not isinstance(v, list):
            raise ValueError(f"config key {key!r} needs a list, got {v!r}")
        (item,) = typing.get_args(tp) or (Any,)
        return [v_ if item is Any else _value(f"{key}[{i}]", item, v_) for i, v_ in enumerate(v)]
    if tp is bool:
        if not isinstance(v, bool):
            raise ValueError(f"config key {key!r} needs true or false, got {v!r}")
        return v
    if tp in (int, float):
        return _number(key, tp, v)
    if tp is str:
        if not isinstance(v, str):
            raise ValueError(f"config key {key!r} needs text, got {v!r}")
        return v
    raise TypeError(f"config key {key!r}: unsupported annotation {tp!r}")


def _number(key: str, tp: type, v: Any) -> int | float:
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            raise ValueError(f"config key {key!r} needs a number, got {v!r}") from None
    if isinstance(v, bool) or not isinstance(v, int | float) or v != v:
        raise ValueError(f"config key {key!r} needs a number, got {v!r}")
    if tp is int:
        if isinstance(v, float) and not v.is_integer():
            raise ValueError(f"config key {key!r} needs a whole number, got {v!r}")
        return int(v)
    return float(v)
