"""The arrows point at the core: no import cycle, and evaluator/ imports nothing else of the project."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

PACKAGES = ("evaluator", "observe")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, wherever the import statement stands."""
    files = {_module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in files}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(module, is_package, node)
                # "from . import policy" imports a module; "from .x import name" imports x.
                targets = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in files else source for alias in node.names
                ]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    graph[module].add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for child in sorted(graph[node]):
            if state.get(child) == 1:
                return stack[stack.index(child) :] + [child]
            if child not in state and (found := visit(child)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_graph_is_read_from_the_sources():
    graph = import_graph()
    assert "evaluator.policy" in graph["evaluator.markers"]
    assert "evaluator.formats" in graph["observe.github.fields"]


def test_no_module_imports_itself_back():
    graph = import_graph()
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_a_planted_cycle_is_found():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_the_core_imports_nothing_else_of_the_project():
    graph = import_graph()
    outside = {
        (module, target)
        for module, targets in graph.items()
        if module.startswith("evaluator")
        for target in targets
        if not target.startswith("evaluator")
    }
    assert outside == set()
    # Nor by name alone: no evaluator source mentions another package of the project in an import.
    for path in (ROOT / "evaluator").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                assert node.module.split(".")[0] not in ("observe", "simulator", "tools", "scripts", "tests"), path
            if isinstance(node, ast.Import):
                assert all(
                    alias.name.split(".")[0] not in ("observe", "simulator", "tools", "scripts", "tests")
                    for alias in node.names
                ), path


def test_each_core_layer_imports_only_what_its_package_docstring_allows():
    graph = import_graph()
    upper = (
        "evaluator.facts",
        "evaluator.machine",
        "evaluator.actions",
        "evaluator.decision",
        "evaluator.checks",
        "evaluator.cli",
    )
    allowed_for_models = (
        "evaluator.models",
        "evaluator.policy",
        "evaluator.formats",
        "evaluator.errors",
        "evaluator.vocabulary",
    )
    for module, targets in graph.items():
        if module.startswith("evaluator.models"):
            assert all(t.startswith(allowed_for_models) for t in targets), (module, targets)
        if module.startswith("evaluator.rules"):
            assert not any(t.startswith(upper) for t in targets), (module, targets)
    for foundation in ("evaluator.policy", "evaluator.formats", "evaluator.errors"):
        assert graph[foundation] <= {"evaluator.policy", "evaluator.errors"}, foundation
