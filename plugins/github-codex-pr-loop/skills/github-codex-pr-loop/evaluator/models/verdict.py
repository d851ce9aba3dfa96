"""The evaluator's result, as typed models: what each check prints, and its rejection.

Each check has its accepted shape (``InitialVerdict``, ``PromptVerdict``, one
model per payload shape of ``--state``, chosen by the emitted ``action``) and
all three share the rejected shape (``Rejection``: exit 1, or exit 2 for a
usage or internal error). The command line validates every result through
these models before printing it (evaluator/cli.py), so what it prints always
fits them; the hands parse the same line through the same models
(act/core/verdicts.py). Every key is required, no other key is allowed, types
are strict.

The ``--state`` results are in evaluator/models/state_verdict.py, imported
only by a ``--state`` run (an ``--initial`` run loads no recurring model). The
vocabularies (``ActionName``, ``CheckName``, ``OperationName``) are the
evaluator's own (evaluator/vocabulary.py).
"""

from typing import Annotated, Literal

from .. import policy
from ..vocabulary import CheckName, OperationName
from .common import Check, Digest, Strict

# --- the shapes ----------------------------------------------------------------------

# ``ok`` is a boolean of one value per shape (a model's Literal takes strings and integers only).
Accepted = Annotated[bool, Check("invalid-value", lambda v: None if v is True else "ok is false; expected true")]
Refused = Annotated[bool, Check("invalid-value", lambda v: None if v is False else "ok is true; expected false")]


class Error(Strict):
    """One violation, as the evaluator words it (references/errors.md)."""

    code: str
    path: str
    message: str


class Rejection(Strict):
    """Any check, rejected: ``ok`` false and the sorted violations."""

    ok: Refused
    check: CheckName
    errors: list[Error]


class InitialVerdict(Strict):
    ok: Accepted
    check: Literal["initial"]
    initial_plan_hash: Digest
    snapshot_sha256: Digest
    mode: policy.Mode
    operations: list[OperationName]


class PromptVerdict(Strict):
    ok: Accepted
    check: Literal["prompt"]
    result: Literal["prompt-ready"]
    automation_key: str
    rendered_prompt: str
    rendered_prompt_sha256: Digest
    bootstrap_snapshot_sha256: Digest
