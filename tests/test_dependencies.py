"""Every package pyproject.toml names is used by the code its section serves.

Runtime dependencies are imported by evaluator/, observe/ or scripts/; the
test extra by tests/, tools/ or simulator/ (or, for a pytest plugin, named
by pytest's options in pyproject.toml); the simulator extra by simulator/;
the lint extra is run by .ci/run. Imports are read from the
source with ``ast``; a distribution is matched to its import names through
the installed metadata (``importlib.metadata.packages_distributions``).
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from importlib.metadata import packages_distributions

from tests.helpers import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
SERVED_BY = {
    "runtime": ("evaluator", "observe", "scripts"),
    "test": ("tests", "tools", "simulator"),
    "simulator": ("simulator",),
}
# Test pins that pytest loads as plugins, never imported: each with the option
# of pyproject.toml's addopts that puts it to work (pytest-xdist: run in parallel).
PYTEST_PLUGINS = {"pytest-xdist": "-n"}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def declared(section: str) -> set[str]:
    project = PYPROJECT["project"]
    requirements = project["dependencies"] if section == "runtime" else project["optional-dependencies"][section]
    return {normalized(re.split(r"[=<>!~\[; ]", requirement, maxsplit=1)[0]) for requirement in requirements}


@functools.cache
def _owners() -> dict[str, list[str]]:
    """Import name -> distributions (a scan of every installed package's metadata: done once)."""
    return dict(packages_distributions())


def imported_distributions(rooms: tuple[str, ...]) -> set[str]:
    modules = set()
    for room in rooms:
        for path in (ROOT / room).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    modules.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules.add(node.module.split(".")[0])
    owners = _owners()
    return {normalized(distribution) for module in modules for distribution in owners.get(module, [])}


def test_every_declared_package_is_imported_where_it_serves():
    unused = {
        section: sorted(declared(section) - imported_distributions(rooms) - set(PYTEST_PLUGINS))
        for section, rooms in SERVED_BY.items()
    }
    assert not any(unused.values()), f"declared but not imported by the code the section serves: {unused}"


def test_every_pytest_plugin_is_put_to_work_by_the_test_options():
    addopts = PYPROJECT["tool"]["pytest"]["ini_options"]["addopts"]
    assert set(PYTEST_PLUGINS) <= declared("test")
    assert all(option in addopts for option in PYTEST_PLUGINS.values()), addopts


def test_every_lint_tool_is_run_by_ci():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert declared("lint") == {"ruff", "mypy"}
    assert "python -m ruff check" in ci and "python -m mypy" in ci


def test_the_packages_are_found_at_all():
    # The scan itself must see the obvious ones, or the checks above prove nothing.
    assert {"fasttransport", "httpx2", "python-dateutil"} <= imported_distributions(SERVED_BY["runtime"])
    assert {"pytest", "hypothesis"} <= imported_distributions(SERVED_BY["test"])
