"""The package's layers (docs/DESIGN.md, "Layers"): every import points down, none in a cycle.

Reads every module's source (imports inside functions count too) and checks each import of a
`t10` module against the layer table below.
"""

from __future__ import annotations

import ast
from pathlib import Path
from types import ModuleType

import t10
import t10.planning

PACKAGE = Path(t10.__file__).parent

# (layer, module prefixes); a module belongs to the layer of its longest matching prefix
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("core", ("t10.errors", "t10.common")),
    ("dialects", ("t10.t10_dialects",)),
    ("planning", ("t10.planning",)),
    ("transforms", ("t10.passes", "t10.lowering", "t10.frontend")),
    ("simulator", ("t10.sim",)),
    ("outputs", ("t10.outputs",)),
    ("driver", ("t10.driver", "t10.reference", "t10.pass_instrumentation", "t10.universe",
                "t10.targets")),
    ("tools", ("t10.tools", "t10.bench", "t10.examples")),
]

MAY_IMPORT: dict[str, set[str]] = {
    "core": {"core"},
    "dialects": {"core", "dialects"},
    "planning": {"core", "dialects", "planning"},
    "transforms": {"core", "dialects", "planning", "transforms"},
    "simulator": {"core", "dialects", "simulator"},
    "outputs": {"core", "dialects", "planning", "simulator", "outputs"},
    "driver": {"core", "dialects", "planning", "transforms", "simulator", "outputs", "driver"},
    "tools": {"core", "dialects", "planning", "transforms", "simulator", "outputs", "driver",
              "tools"},
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str:
    best = ("", "")
    for layer, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best[1]):
                best = (layer, prefix)
    assert best[0], f"module {module} is in no layer: add it to LAYERS"
    return best[0]


def imported_modules(path: Path, modules: set[str]) -> set[str]:
    """The `t10` modules `path` imports (`from t10.x import y` names module t10.x.y when that
    is a module, else t10.x)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                found.add(sub if sub in modules else node.module)
    return {m for m in found if m in modules and m != "t10"}


def import_graph() -> dict[str, set[str]]:
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {
        name: imported_modules(path, modules) for name, path in paths.items() if name != "t10"
    }


def test_every_import_points_down_the_layers() -> None:
    wrong = [
        f"{a} ({layer_of(a)}) imports {b} ({layer_of(b)})"
        for a, targets in sorted(import_graph().items())
        for b in sorted(targets)
        if layer_of(b) not in MAY_IMPORT[layer_of(a)]
    ]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles() -> None:
    graph = import_graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[str] = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for nxt in sorted(graph[module]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*path[path.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def test_the_layer_table_knows_every_module() -> None:
    for module in import_graph():
        layer_of(module)


def planning_imports(path: Path) -> list[str]:
    """What `path` imports from the planning layer, as "line: what" where it is not a name of
    the public API (`t10.planning.__all__`): a module of the package, or another name."""
    wrong = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("t10.planning")]
        elif isinstance(node, ast.ImportFrom) and node.module == "t10.planning":
            names = [a.name for a in node.names if a.name not in t10.planning.__all__]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("t10.planning."):
            names = [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        wrong += [f"{node.lineno}: {name}" for name in names]
    return wrong


def test_the_tools_plan_through_the_public_planning_api() -> None:
    """`t10`, `t10 explain` and `t10-opt` import from the planning layer only its public API;
    the benchmarks (t10/bench) measure its modules directly (docs/DESIGN.md, "What the tools
    import")."""
    wrong = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted((PACKAGE / "tools").glob("*.py"))
        for line in planning_imports(path)
    ]
    assert not wrong, "planning internals imported by tools:\n" + "\n".join(wrong)


def test_the_public_planning_api_is_what_it_names() -> None:
    """Every public name of `t10.planning` is the object its module defines, not a module of
    the package that shadows it once imported (as `t10.planning.planners` would shadow the
    registry's `planners()`)."""
    import t10.planning.planners  # noqa: F401 (the options import it first)

    shadowed = [n for n in t10.planning.__all__ if isinstance(getattr(t10.planning, n), ModuleType)]
    assert not shadowed
