"""Typed configs: nested dataclasses read from YAML-like mappings, checked key by key.

An experiment declares its config once, as dataclasses whose field defaults are the
defaults and whose annotations are the types. ``from_mapping`` builds one from a (partial)
mapping: a key the dataclass does not declare, or a value of the wrong type, raises
``ValueError`` naming the dotted key. ``merged`` applies overrides to an existing config;
``to_dict`` gives plain data for YAML files and checkpoints.

Coercion follows YAML's quirks: ``1e-4`` (read by YAML as text) becomes a float where a
number belongs; a whole float becomes an int where an int belongs (``2.5`` is an error);
bools are never numbers. A field annotated ``dict`` is free-form here and checked by its
owner (the env config, the network config). A field annotated ``Schedule`` takes a number or
a piecewise-linear schedule ``[[samples, value], …]``.

Fields document themselves: ``option(default, "what it means")`` puts the text in the
field's metadata, where ``describe`` (``--help-config``) and ``to_yaml`` (the comments of
``configs/default.yaml``) read it. A field whose key is a Python keyword names it:
``lambda_: float = option(0.95, "GAE lambda", key="lambda")``.
"""

from __future__ import annotations

import copy
import dataclasses
import textwrap
import types
import typing
from typing import Any, TypeVar

import yaml

C = TypeVar("C")


@dataclasses.dataclass(frozen=True)
class Schedule:
    """A value that may change with the learner samples seen: a number, or RLlib's
    piecewise-linear form ``[[samples, value], …]`` (first at 0 samples, samples
    increasing; constant after the last point)."""

    points: tuple[tuple[int, float], ...]

    @classmethod
    def constant(cls, value: float) -> Schedule:
        return cls(((0, float(value)),))

    @classmethod
    def parse(cls, key: str, v: Any) -> Schedule:
        if isinstance(v, Schedule):
            return v
        if not isinstance(v, list):
            return cls.constant(_number(key, float, v))
        pts = []
        for i, p in enumerate(v):
            if not isinstance(p, list) or len(p) != 2:
                raise ValueError(
                    f"config key {key!r}: a schedule is a number or [[samples, value], …]; "
                    f"item {i} is {p!r}"
                )
            pts.append(
                (_number(f"{key}[{i}][0]", int, p[0]), _number(f"{key}[{i}][1]", float, p[1]))
            )
        if not pts or pts[0][0] != 0:
            raise ValueError(
                f"config key {key!r}: a schedule starts at 0 samples ([[0, value], …])"
            )
        if any(b[0] <= a[0] for a, b in zip(pts, pts[1:], strict=False)):
            raise ValueError(f"config key {key!r}: schedule samples must increase")
        return cls(tuple(pts))

    def value_at(self, samples: float) -> float:
        """The value after ``samples`` learner samples (linear between points)."""
        pts = self.points
        for (t0, v0), (t1, v1) in zip(pts, pts[1:], strict=False):
            if samples < t1:
                return v0 + (v1 - v0) * max(samples - t0, 0) / (t1 - t0)
        return pts[-1][1]

    def values(self) -> list[float]:
        return [v for _, v in self.points]

    def to_plain(self) -> float | list[list[float]]:
        """A number when constant, else ``[[samples, value], …]`` (RLlib's form)."""
        if len(self.points) == 1:
            return self.points[0][1]
        return [[t, v] for t, v in self.points]


def option(
    default: Any = dataclasses.MISSING,
    help: str = "",
    *,
    key: str | None = None,
    factory: Any = dataclasses.MISSING,
) -> Any:
    """A config field with its documentation (and YAML key, if not the field's name)."""
    meta = {"help": help, **({"key": key} if key else {})}
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _key(f: dataclasses.Field) -> str:
    return f.metadata.get("key", f.name)


def to_dict(cfg: Any) -> dict[str, Any]:
    """Plain nested dicts and lists under the config's keys (a deep copy)."""
    return {_key(f): _plain(getattr(cfg, f.name)) for f in dataclasses.fields(cfg)}


def _plain(v: Any) -> Any:
    if dataclasses.is_dataclass(v) and not isinstance(v, Schedule):
        return to_dict(v)
    if isinstance(v, Schedule):
        return v.to_plain()
    return copy.deepcopy(v)


def describe(cls: type, where: str = "") -> list[tuple[str, str, str]]:
    """``(dotted key, default, help)`` of every field of ``cls``, sections expanded."""
    rows = []
    default = cls()
    for f in dataclasses.fields(cls):
        key, value = where + _key(f), getattr(default, f.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, Schedule):
            rows += describe(type(value), key + ".")
        else:
            rows.append(
                (
                    key,
                    yaml.safe_dump(_plain(value), default_flow_style=True)
                    .strip()
                    .removesuffix("...")
                    .strip(),
                    f.metadata.get("help", ""),
                )
            )
    return rows


def to_yaml(cfg: Any, width: int = 96) -> str:
    """``cfg`` as YAML, each key with its help as a comment above it (sections: the
    section's class docstring)."""
    lines: list[str] = []
    _yaml_lines(cfg, "", lines, width)
    return "\n".join(lines) + "\n"


def _comment(text: str, indent: str, width: int) -> list[str]:
    return (
        textwrap.wrap(
            " ".join(text.split()),  # a docstring's line breaks and indentation: one space
            width - len(indent) - 2,
            initial_indent=f"{indent}# ",
            subsequent_indent=f"{indent}# ",
        )
        if text
        else []
    )


def _yaml_lines(cfg: Any, indent: str, lines: list[str], width: int) -> None:
    for f in dataclasses.fields(cfg):
        v = getattr(cfg, f.name)
        lines += _comment(f.metadata.get("help", ""), indent, width)
        if dataclasses.is_dataclass(v) and not isinstance(v, Schedule):
            lines.append(f"{indent}{_key(f)}:")
            _yaml_lines(v, indent + "  ", lines, width)
            continue
        flow = yaml.safe_dump(
            {_key(f): _plain(v)}, default_flow_style=True, sort_keys=False, width=10_000
        ).strip()
        lines.append(indent + flow[1:-1])


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
    if tp is Schedule:
        return Schedule.parse(key, v)
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
