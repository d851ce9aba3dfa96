"""Run the installed evaluator on a document the hands built, as a separate process.

The evaluator is the only judge; the hands never import its checks to decide.
Each call starts ``scripts/evaluate_state.py`` exactly as that script would
re-execute itself: the skill's private interpreter (``.venv``, else this one)
with ``-I -B`` (no PYTHONPATH, no user site, no script directory on the path,
no bytecode written). The script sees it already runs so and goes straight to
its pinned source loader (scripts/isolation.py), so one judgement is one
interpreter, never two (references/automation-registry.md). The document goes
in on standard input as canonical JSON; the one JSON line that comes out is
the verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from act.errors import ActError
from evaluator.canonical import canonical_bytes

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EVALUATOR = PROJECT_ROOT / "scripts" / "evaluate_state.py"
# The interpreter the script re-executes into (the same rule as in the script itself).
_PRIVATE = PROJECT_ROOT / ".venv" / "bin" / "python"
TIMEOUT_SECONDS = 300


class Verdict(NamedTuple):
    status: int  # 0 accepted, 1 rejected, 2 usage or internal error
    result: dict[str, Any]  # the evaluator's one output object

    @property
    def accepted(self) -> bool:
        return self.status == 0 and self.result.get("ok") is True


def command(check: str, *, approved_hash: str | None = None, now: str | None = None) -> list[str]:
    """The evaluator's command line, already as isolated as the script makes itself (so it does not re-execute)."""
    python = str(_PRIVATE) if os.path.exists(_PRIVATE) else sys.executable
    argv = [python, "-I", "-B", os.path.realpath(EVALUATOR), f"--{check}", "-"]
    if approved_hash is not None:
        argv += ["--approved-hash", approved_hash]
    if now is not None:
        argv += ["--now", now]
    return argv


def evaluate(
    check: str, document: dict[str, Any], *, approved_hash: str | None = None, now: str | None = None
) -> Verdict:
    """``evaluate_state.py --<check> - [--approved-hash HEX] [--now TS]`` on ``document``."""
    if check not in ("initial", "prompt", "state"):
        raise ValueError(check)
    argv = command(check, approved_hash=approved_hash, now=now)
    try:
        completed = subprocess.run(
            argv, input=canonical_bytes(document), capture_output=True, timeout=TIMEOUT_SECONDS, cwd=PROJECT_ROOT
        )
    except subprocess.TimeoutExpired:
        raise ActError(
            "evaluator-failed", f"the evaluator did not answer within {TIMEOUT_SECONDS} s; no write is permitted"
        ) from None
    except OSError as error:
        message = f"cannot run the evaluator: {error.strerror}; no write is permitted"
        raise ActError("evaluator-failed", message) from None
    lines = completed.stdout.decode("utf-8", "replace").splitlines()
    try:
        result = json.loads(lines[0]) if len(lines) == 1 else None
    except ValueError:
        result = None
    if not isinstance(result, dict) or completed.returncode not in (0, 1, 2):
        raise ActError(
            "evaluator-failed",
            f"the evaluator exited {completed.returncode} without one JSON result; no write is permitted",
        )
    return Verdict(completed.returncode, result)


def require_accepted(verdict: Verdict, what: str) -> dict[str, Any]:
    """The result of an accepted evaluation, else an error carrying the evaluator's own errors."""
    if verdict.accepted:
        return verdict.result
    errors = verdict.result.get("errors", [])
    named = "; ".join(f"{e.get('code')} at {e.get('path') or '/'}" for e in errors[:5])
    raise ActError(
        "evaluator-rejected",
        f"the evaluator rejected {what} (exit {verdict.status}): {named}; no write is permitted",
        details={"evaluator": verdict.result},
    )
