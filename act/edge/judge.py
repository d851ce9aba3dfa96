"""Run the installed evaluator on a document the hands built, as a separate process.

The evaluator is the only judge; the hands never import its checks to decide.
Each call starts ``scripts/evaluate_state.py`` exactly as that script would
re-execute itself: this interpreter, which is already the skill's private
environment whenever it has one (the hands re-executed into it), with
``-I -B`` (no PYTHONPATH, no user site, no script directory on the path, no
bytecode written). The script sees it already runs so and goes straight to
its pinned source loader (scripts/isolation.py), so one judgement is one
interpreter, never two (references/automation-registry.md). The document goes
in on standard input as canonical JSON; the one JSON line that comes out is
the verdict, parsed once into its typed model (act/core/verdicts.py): an output
that is not one is ``evaluator-failed``, and nothing is written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, overload

from act.core import verdicts
from act.core.errors import ActError
from act.core.jsonedge import Document
from act.core.verdicts import CheckName, InitialVerdict, PromptVerdict, Rejection, StateVerdict
from evaluator.canonical import canonical_bytes

PROJECT_ROOT = Path(__file__).resolve().parents[2]  # act/edge/judge.py -> the skill root
EVALUATOR = PROJECT_ROOT / "scripts" / "evaluate_state.py"
TIMEOUT_SECONDS = 300


Accepted = TypeVar("Accepted", InitialVerdict, PromptVerdict, StateVerdict)


@dataclass(frozen=True)
class Verdict(Generic[Accepted]):
    """One judgement: the exit status, the output object verbatim, and the same output as its typed verdict."""

    status: int  # 0 accepted, 1 rejected, 2 usage or internal error
    output: Document  # the evaluator's one output object, exactly as printed (for showing it, never reading it)
    parsed: Accepted | Rejection

    @property
    def accepted(self) -> bool:
        return not isinstance(self.parsed, Rejection)


def command(
    check: str, *, approved_hash: str | None = None, now: str | None = None, risk_acceptance: str | None = None
) -> list[str]:
    """The evaluator's command line, already as isolated as the script makes itself (so it does not re-execute)."""
    argv = [sys.executable, "-I", "-B", os.path.realpath(EVALUATOR), f"--{check}", "-"]
    if approved_hash is not None:
        argv += ["--approved-hash", approved_hash]
    if now is not None:
        argv += ["--now", now]
    if risk_acceptance is not None:
        argv += ["--risk-acceptance", risk_acceptance]
    return argv


@overload
def evaluate(
    check: Literal["initial"],
    document: Document,
    *,
    approved_hash: str | None = None,
    now: str | None = None,
    risk_record: Document | None = None,
) -> Verdict[InitialVerdict]: ...
@overload
def evaluate(
    check: Literal["prompt"],
    document: Document,
    *,
    approved_hash: str | None = None,
    now: str | None = None,
    risk_record: Document | None = None,
) -> Verdict[PromptVerdict]: ...
@overload
def evaluate(
    check: Literal["state"],
    document: Document,
    *,
    approved_hash: str | None = None,
    now: str | None = None,
    risk_record: Document | None = None,
) -> Verdict[StateVerdict]: ...
def evaluate(
    check: CheckName,
    document: Document,
    *,
    approved_hash: str | None = None,
    now: str | None = None,
    risk_record: Document | None = None,
) -> Verdict[Any]:
    """``evaluate_state.py --<check> - [--approved-hash HEX] [--now TS] [--risk-acceptance PATH]`` on ``document``.

    ``risk_record``: the risk acceptance record the document binds (act/risk.py), handed over as a private
    temporary file, so the evaluator verifies it rather than accept the plan on its shape.
    """
    if check not in ("initial", "prompt", "state"):
        raise ValueError(check)
    held = tempfile.TemporaryDirectory(prefix="codex-pr-loop-risk-") if risk_record is not None else nullcontext()
    with held as folder:  # private (mode 0700), removed with the judgement
        record_path = None
        if folder is not None:
            record_path = os.path.join(folder, "risk-acceptance.json")
            Path(record_path).write_bytes(canonical_bytes(risk_record))
        argv = command(check, approved_hash=approved_hash, now=now, risk_acceptance=record_path)
        completed = _run(argv, canonical_bytes(document))
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
    return Verdict(completed.returncode, result, verdicts.parse(check, completed.returncode, result))


def _run(argv: list[str], document: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(argv, input=document, capture_output=True, timeout=TIMEOUT_SECONDS, cwd=PROJECT_ROOT)
    except subprocess.TimeoutExpired:
        raise ActError(
            "evaluator-failed", f"the evaluator did not answer within {TIMEOUT_SECONDS} s; no write is permitted"
        ) from None
    except OSError as error:
        message = f"cannot run the evaluator: {error.strerror}; no write is permitted"
        raise ActError("evaluator-failed", message) from None


def require_accepted(verdict: Verdict[Accepted], what: str) -> Accepted:
    """The typed verdict of an accepted evaluation, else an error carrying the evaluator's own errors."""
    if not isinstance(verdict.parsed, Rejection):
        return verdict.parsed
    named = "; ".join(f"{e.code} at {e.path or '/'}" for e in verdict.parsed.errors[:5])
    raise ActError(
        "evaluator-rejected",
        f"the evaluator rejected {what} (exit {verdict.status}): {named}; no write is permitted",
        details={"evaluator": verdict.output},
    )
