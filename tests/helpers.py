"""Shared test helpers: fixture loading and running the CLI as a subprocess."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SCRIPT = ROOT / "scripts" / "evaluate_state.py"


def examples(factor: int) -> int:
    """A property's example budget: ``factor`` times the loaded hypothesis profile's (tests/conftest.py).

    The profile is loaded before any test module is imported, so the budget a
    decorator reads here is the fast one by default and the thorough one in CI.
    """
    from hypothesis import settings

    return factor * settings.default.max_examples


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def valid_fixtures(suite: str) -> list[Path]:
    return sorted((FIXTURES / suite / "valid").glob("*.json"))


def invalid_fixtures(suite: str) -> list[tuple[Path, list[str]]]:
    folder = FIXTURES / suite / "invalid"
    expected = load(folder / "expected.json")
    return [(folder / f"{name}.json", codes) for name, codes in sorted(expected.items())]


def run_cli(*args: str, stdin: bytes | None = None, timeout: float = 30) -> tuple[int, dict, str]:
    """Run scripts/evaluate_state.py; return (exit status, the one JSON object, stderr)."""
    completed = subprocess.run([sys.executable, str(SCRIPT), *args], input=stdin, capture_output=True, timeout=timeout)
    lines = completed.stdout.decode("utf-8").splitlines()
    assert len(lines) == 1, f"expected exactly one output line, got {completed.stdout!r}"
    assert "Traceback" not in completed.stderr.decode("utf-8", "replace")
    return completed.returncode, json.loads(lines[0]), completed.stderr.decode("utf-8", "replace")


def model_checker_accepts(annotation: object, value: object) -> bool:
    """Whether the evaluator's models accept ``value`` for a field of type ``annotation``."""
    from evaluator.models.common import validate

    _, found = validate(_probe_model(annotation), {"value": value})
    return not found


@functools.cache
def _probe_model(annotation: object) -> type:
    """A model with the one field ``value`` of type ``annotation`` (built once per type)."""
    from evaluator.models.common import Strict

    return type("Probe", (Strict,), {"__annotations__": {"value": annotation}})
