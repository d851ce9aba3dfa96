"""The evaluator's one output line, as the evaluator's own typed models: parsed once, right after the process returns.

The models are the evaluator's (evaluator/models/verdict.py, evaluator/models/state_verdict.py): each check has
its accepted shape (``InitialVerdict``, ``PromptVerdict``, one model per
payload shape of ``--state``, chosen by the emitted ``action``) and all three
share the rejected shape (``Rejection``). The evaluator validates every result
through them before printing it, and the hands parse the line through them
again, with the same function as the state directory's files
(``evaluator.models.common.validate``): every key the evaluator emits is
required, no other key is allowed, types are strict. An output that fits none
of them (a missing or extra key, a wrong type, an action the registry does not
name, an exit status that contradicts ``ok``) is not a verdict: the judgement
fails closed with ``evaluator-failed`` and nothing is written.

The vocabularies (``ActionName``, ``OperationName``) are the evaluator's own,
as types (evaluator/vocabulary.py).

``last-result.json`` is the accepted ``--state`` verdict as the evaluator
printed it; the hands read it back through the same models (``read_last``).
"""

from act.core import statedir
from act.core.errors import ActError
from act.core.jsonedge import Document
from evaluator.errors import Violation
from evaluator.models.common import Strict, validate
from evaluator.models.state_verdict import (
    STATE_VERDICTS,
    AwaitApproval,
    ClaimPlan,
    CleanupStop,
    ExecuteFinalization,
    ExecuteRemediation,
    FinishFinalization,
    PlanFinalization,
    PlanRemediation,
    Report,
    ReviewerUnavailable,
    StalePlanInconsistency,
    StateInconsistency,
    StateVerdict,
    UnavailableSeen,
    UnrecognizedSeen,
    Waiting,
    state_model,
)
from evaluator.models.verdict import Error, InitialVerdict, PromptVerdict, Rejection
from evaluator.vocabulary import ActionName, CheckName, OperationName

__all__ = [
    "STATE_VERDICTS",
    "AcceptedVerdict",
    "ActionName",
    "AwaitApproval",
    "CheckName",
    "ClaimPlan",
    "CleanupStop",
    "Error",
    "ExecuteFinalization",
    "ExecuteRemediation",
    "ExecutingVerdict",
    "FinishFinalization",
    "InitialVerdict",
    "OperationName",
    "PlanFinalization",
    "PlanRemediation",
    "PromptVerdict",
    "Rejection",
    "Report",
    "ReviewerUnavailable",
    "StalePlanInconsistency",
    "StateInconsistency",
    "StateVerdict",
    "UnavailableSeen",
    "UnrecognizedSeen",
    "Waiting",
    "last_action",
    "parse",
    "plan_hash_of",
    "read_last",
    "state_verdict",
]

AcceptedVerdict = InitialVerdict | PromptVerdict | StateVerdict

# The verdicts that name the automation the hands may delete (finish-finalization and every cleanup stop).
DELETES_AUTOMATION = (FinishFinalization, CleanupStop, ReviewerUnavailable)
# The verdicts that execute a claimed plan (phase one of either kind, or phase two of a finalization).
EXECUTES_PLAN = (ExecuteRemediation, ExecuteFinalization, FinishFinalization)
ExecutingVerdict = ExecuteRemediation | ExecuteFinalization | FinishFinalization


# --- parsing -------------------------------------------------------------------------


def state_verdict(output: Document) -> tuple[StateVerdict | None, list[Violation]]:
    """An accepted ``--state`` output as its action's model, or the violations that make it none."""
    model = state_model(output)
    if model is None:
        action = output.get("action")
        return None, [Violation("invalid-value", "/action", f"{action!r} is not an action of the registry")]
    instance, found = validate(model, output)
    return instance, found


def _accepted(check: CheckName, output: Document) -> tuple[AcceptedVerdict | None, list[Violation]]:
    if check == "state":
        return state_verdict(output)
    model: type[Strict] = InitialVerdict if check == "initial" else PromptVerdict
    instance, found = validate(model, output)
    return instance, found


def parse(check: CheckName, status: int, output: Document) -> AcceptedVerdict | Rejection:
    """The one output object of ``check`` as its typed verdict; ``evaluator-failed`` if it is no verdict.

    Exit 0 is an accepted verdict of ``check``; exit 1 or 2 a rejection of it.
    """
    found: list[Violation]
    if output.get("check") != check:
        found = [Violation("invalid-value", "/check", f"the output is not the verdict of --{check}")]
    elif status == 0:
        accepted, found = _accepted(check, output)
        if accepted is not None:
            return accepted
    else:
        rejection, found = validate(Rejection, output)
        if rejection is not None:
            result: Rejection = rejection
            return result
    first = found[0]
    raise ActError(
        "evaluator-failed",
        f"the evaluator exited {status} with an output that is not its verdict ({first.code} at "
        f"{first.path or '/'}: {first.message}); no write is permitted",
    )


def read_last(directory: statedir.StateDir) -> StateVerdict | None:
    """``last-result.json`` (the last accepted ``--state`` verdict) through its model; None before any."""
    output = directory.read_optional(statedir.LAST_RESULT)
    if output is None:
        return None
    verdict, found = state_verdict(output)
    if verdict is None:
        raise directory.invalid(statedir.LAST_RESULT, [(v.code, v.path, v.message) for v in found])
    return verdict


def last_action(directory: statedir.StateDir) -> ActionName | None:
    """The action of the last accepted ``--state`` verdict; None before any."""
    last = read_last(directory)
    return None if last is None else last.action


# The verdicts that name a plan by its hash.
_NAMES_A_PLAN = (AwaitApproval, ClaimPlan, ExecuteRemediation, ExecuteFinalization, FinishFinalization)


def plan_hash_of(verdict: StateVerdict | None) -> str | None:
    """The plan hash a verdict names, if its action names one."""
    return verdict.plan_hash if isinstance(verdict, _NAMES_A_PLAN) else None
