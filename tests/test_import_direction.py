"""Arrows point at the core: which room of the project may import which.

Read from the source with ``ast`` (every ``import`` and ``from ... import``,
at any depth, so a lazy import inside a function counts too). A room not
named in a rule may import nothing of the project beyond itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

PROJECT = ("evaluator", "observe", "act", "simulator", "tools", "bench", "scripts", "tests")

# module prefix -> project modules it may import (besides its own prefix)
ALLOWED = {
    "evaluator": (),
    "observe.errors": (),
    "observe.network": ("observe.errors",),
    "observe.gh": (),  # finding and trusting the GitHub CLI: git and the GitHub client share it
    "observe.github": ("evaluator", "observe.errors", "observe.network", "observe.gh"),
    "observe.git": ("evaluator", "observe.errors", "observe.network", "observe.gh"),
    "observe.registry": ("evaluator", "observe.errors"),
    "observe.evaluator_digest": ("observe.errors",),
    "observe.collect": ("evaluator", "observe"),
    "observe.cli": ("evaluator", "observe.collect", "observe.errors", "observe.network", "observe.gh"),
    "observe": ("evaluator", "observe"),
    "simulator": (),
    "tools": ("evaluator", "tools"),
    # Extracts GitHub's contract for what the simulator serves and the observer sends.
    "tools.extract_github_contract": ("tools", "simulator", "observe"),
    "bench": ("evaluator", "observe", "simulator", "tools"),
    # The hands; nothing imports them. Within them the arrows point at their core too: the
    # core (state, journal, steps table) imports nothing of the hands, the edges and the
    # texts only the core, the builders nothing of the hands at all.
    "act": ("evaluator", "observe"),
    "act.core": ("evaluator",),
    "act.edge": ("evaluator", "observe", "act.core"),
    "act.text": ("evaluator", "act.core"),
    "act.build": ("evaluator",),
    "scripts": ("evaluator", "observe", "act"),
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # "from observe import collect" imports observe.collect: judge the full name.
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found.update(name for name in names if name.split(".")[0] in PROJECT)
    return found


def rule_for(module: str) -> tuple[str, tuple[str, ...]]:
    prefix = max((p for p in ALLOWED if module == p or module.startswith(p + ".")), key=len)
    return prefix, ALLOWED[prefix]


def within(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def test_every_room_imports_only_what_it_may():
    offences = []
    for room in ("evaluator", "observe", "act", "simulator", "tools", "bench", "scripts"):
        for path in sorted((ROOT / room).rglob("*.py")):
            module = module_name(path)
            prefix, allowed = rule_for(module)
            for name in sorted(project_imports(path)):
                if not any(within(name, target) for target in (prefix, *allowed)):
                    offences.append(f"{module} imports {name}")
    assert not offences, offences


def test_the_rules_catch_a_forbidden_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tests.helpers import ROOT\n    import observe.cli\n")
    assert project_imports(probe) == {"tests.helpers.ROOT", "observe.cli"}
    prefix, allowed = rule_for("bench.github_requests")
    assert prefix == "bench" and not any(within("tests.helpers", target) for target in allowed)
    assert rule_for("observe.github.client") == (
        "observe.github",
        ("evaluator", "observe.errors", "observe.network", "observe.gh"),
    )
