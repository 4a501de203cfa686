"""The layers (README, developer section): ``guandan_env`` (rules core, encoders, envs) ←
``agents`` ← ``experiments``. Every import statement of the three packages is read: none may
point to a later layer (a function-level import neither), and the imports run at module
load (``if TYPE_CHECKING`` blocks excepted) must have no cycle. Inside ``guandan_env`` the
same holds for its sub-packages: ``core`` ← ``encoding`` ← ``envs``."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers import REPO

LAYERS = ("guandan_env", "agents", "experiments")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in LAYERS:
        for f in (REPO / pkg).rglob("*.py"):
            parts = f.relative_to(REPO).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _targets(node: ast.stmt, name: str, is_pkg: bool, mods: dict) -> list[str]:
    """Modules of ours an import statement loads (``from . import x``: the submodule)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in mods]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = name.split(".") if is_pkg else name.split(".")[:-1]
        base = base[: len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
    out = subs if len(subs) == len(node.names) else [target, *subs]
    return [m for m in out if m in mods]


def _load_time_statements(body: list[ast.stmt]):
    """Statements run when the module loads: the body, into ``if``/``try`` blocks, but not
    ``if TYPE_CHECKING:`` nor function or class bodies' functions."""
    for node in body:
        if isinstance(node, ast.If):
            test = ast.unparse(node.test)
            if "TYPE_CHECKING" not in test:
                yield from _load_time_statements(node.body)
            yield from _load_time_statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _load_time_statements(block)
            for handler in node.handlers:
                yield from _load_time_statements(handler.body)
        elif isinstance(node, ast.ClassDef):
            yield from _load_time_statements(
                [n for n in node.body if not isinstance(n, ast.FunctionDef)]
            )
        else:
            yield node


def _graph() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    mods = _modules()
    every, at_load = {m: set() for m in mods}, {m: set() for m in mods}
    for name, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(tree):
            every[name].update(_targets(node, name, is_pkg, mods))
        for node in _load_time_statements(tree.body):
            at_load[name].update(_targets(node, name, is_pkg, mods))
        every[name].discard(name)
        at_load[name].discard(name)
    return every, at_load


def _layer(module: str) -> int:
    return LAYERS.index(module.split(".")[0])


def test_no_import_points_to_a_later_layer():
    every, _ = _graph()
    upward = sorted(f"{a} -> {b}" for a, bs in every.items() for b in bs if _layer(b) > _layer(a))
    assert upward == [], "imports against the layer order: " + ", ".join(upward)


def test_module_level_imports_have_no_cycle():
    _, graph = _graph()
    cycles = _cycles(graph)
    assert cycles == [], "import cycles: " + "; ".join(cycles)


def test_the_graph_is_read():
    every, at_load = _graph()
    assert "guandan_env.core.actions" in at_load["guandan_env.core.engine"]
    assert "guandan_env.core.engine" in every["guandan_env.envs.vector"]
    assert "agents.candidate_net" in every["experiments.selfplay.rllib.env_runner"]


# Inside guandan_env the sub-packages are layers too: core <- encoding <- envs. The top-level
# modules sit outside them: env_version below everything, guandan_v1 (the versioned entry
# module, PettingZoo's naming) over envs.
SUBLAYERS = (
    "guandan_env.env_version",
    "guandan_env.core",
    "guandan_env.encoding",
    "guandan_env.envs",
    "guandan_env.guandan_v1",
)


def _sublayer(module: str) -> int | None:
    for i, prefix in enumerate(SUBLAYERS):
        if module == prefix or module.startswith(prefix + "."):
            return i
    return None


def test_inside_guandan_env_core_encoding_envs_import_one_way():
    every, _ = _graph()
    upward = sorted(
        f"{a} -> {b}"
        for a, bs in every.items()
        for b in bs
        if _sublayer(a) is not None and _sublayer(b) is not None and _sublayer(b) > _sublayer(a)
    )
    assert upward == [], "imports against core <- encoding <- envs: " + ", ".join(upward)
    mods = set(every)
    top = {m for m in mods if m.startswith("guandan_env") and _sublayer(m) is None}
    assert top == {"guandan_env"}, f"modules outside the sub-packages: {sorted(top)}"
    assert {"guandan_env.core.engine", "guandan_env.encoding.observation"} <= mods
    assert "guandan_env.envs.aec" in mods


# Inside experiments the packages are layers too: common <- evaluation <- selfplay <- the
# hosts, benchmarks and examples (one level: none of them imports another). The package
# itself and the 0.2 names (``experiments._aliases`` and its two-line forwarders) sit outside.
EXPERIMENT_LAYERS = (
    ("experiments.common",),
    ("experiments.evaluation",),
    ("experiments.selfplay",),
    ("experiments.hosts", "experiments.bench", "experiments.examples", "experiments.dataset"),
)


def _experiment_layer(module: str) -> tuple[int, str] | None:
    for i, prefixes in enumerate(EXPERIMENT_LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                return i, prefix
    return None


def test_inside_experiments_packages_import_in_order():
    every, _ = _graph()
    wrong = []
    for a, bs in every.items():
        la = _experiment_layer(a)
        for b in bs:
            lb = _experiment_layer(b)
            if la is None or lb is None or la[1] == lb[1]:
                continue
            if lb[0] >= la[0]:
                wrong.append(f"{a} -> {b}")
    assert wrong == [], (
        "imports against common <- evaluation <- selfplay <- hosts/bench/examples: "
        + (", ".join(sorted(wrong)))
    )
    from experiments._aliases import MOVED

    outside = {m for m in every if m.startswith("experiments") and _experiment_layer(m) is None}
    # short entry names: ``python -m experiments.evaluate`` runs the suite
    entries = {"experiments.evaluate"}
    assert outside == {"experiments", "experiments._aliases", *MOVED, *entries}, sorted(outside)


def _cycles(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[str] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                cycles.append(" -> ".join([*path[path.index(n) :], n]))
            elif n not in state:
                visit(n, [*path, n])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    return cycles


def test_no_static_import_cycle_lazy_imports_included():
    """A function-level import that breaks a cycle at load time still ties two modules into
    one: none is allowed. A package's own ``__init__`` may re-export its submodules (the
    edge from a submodule to its parent package is not followed)."""
    every, _ = _graph()
    graph = {
        a: {b for b in bs if not (a.startswith(b + ".") and _modules_is_pkg(b))}
        for a, bs in every.items()
    }
    assert _cycles(graph) == []


def _modules_is_pkg(name: str) -> bool:
    return _modules()[name].name == "__init__.py"
