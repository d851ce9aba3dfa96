"""The evaluator's one output line, as typed models: parsed once, right after the process returns.

Each check has its accepted shape (``InitialVerdict``, ``PromptVerdict``, one
model per payload shape of ``--state``, chosen by the emitted ``action``) and
all three share the rejected shape (``Rejection``). The models are ``Strict``
models, validated by the same function as the state directory's files
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

from typing import Annotated, Literal

from act.core import statedir
from act.core.errors import ActError
from act.core.jsonedge import Document
from act.core.state_models import RecurringKind
from evaluator import policy
from evaluator.errors import Violation
from evaluator.models.common import (
    Check,
    DecimalId,
    Digest,
    NodeId,
    NonNegativeInt,
    PositiveInt,
    Strict,
    Timestamp,
    validate,
)
from evaluator.models.recurring import Gates
from evaluator.vocabulary import ActionName, CheckName, CleanupStopName, OperationName

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


class UnavailableSeen(Strict):
    id: DecimalId
    kind: policy.UnavailableKind


class UnrecognizedSeen(Strict):
    excerpt: str
    id: DecimalId
    source: Literal["issue-comment", "review"]


# Every --state verdict opens with the same head (evaluator/checks.py, state_output) and the request
# checkpoint (evaluator/actions.py, action_payload); the action's own payload follows. A model derives
# from Strict directly, so each one spells the head out.


class Waiting(Strict):
    """``wait`` and ``done``: no payload."""

    ok: Accepted
    check: Literal["state"]
    action: Literal["wait", "done"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None


class PlanRemediation(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["plan-remediation"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    next_round: PositiveInt
    review_request_body_template: str
    actionable_thread_ids: list[NodeId]


class PlanFinalization(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["plan-finalization"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    eligible_thread_ids: list[NodeId]
    gates: Gates


class AwaitApproval(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["await-approval"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    plan_kind: RecurringKind
    plan_hash: Digest
    operations: list[OperationName]


class ClaimPlan(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["claim-plan"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    plan_kind: RecurringKind
    plan_hash: Digest
    operations: list[OperationName]
    claim_comment_body: str


class ExecuteRemediation(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["execute-remediation"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    plan_hash: Digest
    operations: list[OperationName]
    review_request_body_template: str
    reply_marker: str
    thread_ids: list[NodeId]


class ExecuteFinalization(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["execute-finalization"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    plan_hash: Digest
    operations: list[OperationName]
    thread_ids: list[NodeId]


class FinishFinalization(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["finish-finalization"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    plan_hash: Digest
    operations: list[OperationName]
    delete_automation_id: str | None
    gates: Gates
    original_plan_hash: Digest
    original_request_key: str


class CleanupStop(Strict):
    ok: Accepted
    check: Literal["state"]
    action: CleanupStopName
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    delete_automation_id: str | None
    gates: Gates


class ReviewerUnavailable(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["stop-reviewer-unavailable"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    delete_automation_id: str | None
    gates: Gates
    unavailable_replies: list[UnavailableSeen]
    unrecognized_replies: list[UnrecognizedSeen]


class StateInconsistency(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["state-inconsistency"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    write_permitted: bool
    user_must_delete_automation: str | None


class StalePlanInconsistency(Strict):
    """``state-inconsistency`` on a plan that no longer matches its snapshot: the plan's violations follow."""

    ok: Accepted
    check: Literal["state"]
    action: Literal["state-inconsistency"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    write_permitted: bool
    user_must_delete_automation: str | None
    plan_violations: list[Error]


class Report(Strict):
    ok: Accepted
    check: Literal["state"]
    action: Literal["report"]
    reasons: list[str]
    mode: policy.Mode
    request_key: str | None
    fix_rounds: NonNegativeInt
    request_deadline: Timestamp | None
    gates: Gates
    actionable_threads: NonNegativeInt
    eligible_threads: NonNegativeInt
    non_codex_rooted_threads: NonNegativeInt
    unavailable_replies: list[UnavailableSeen]
    unrecognized_replies: list[UnrecognizedSeen]


StateVerdict = (
    Waiting
    | PlanRemediation
    | PlanFinalization
    | AwaitApproval
    | ClaimPlan
    | ExecuteRemediation
    | ExecuteFinalization
    | FinishFinalization
    | CleanupStop
    | ReviewerUnavailable
    | StateInconsistency
    | StalePlanInconsistency
    | Report
)
AcceptedVerdict = InitialVerdict | PromptVerdict | StateVerdict

# Each action of the registry, and the model of its output (a test holds the keys equal to the registry).
STATE_VERDICTS: dict[str, type[Strict]] = {
    "wait": Waiting,
    "plan-remediation": PlanRemediation,
    "plan-finalization": PlanFinalization,
    "await-approval": AwaitApproval,
    "claim-plan": ClaimPlan,
    "execute-remediation": ExecuteRemediation,
    "execute-finalization": ExecuteFinalization,
    "finish-finalization": FinishFinalization,
    "done": Waiting,
    "stop-pr-closed": CleanupStop,
    "request-timeout": CleanupStop,
    "stop-max-rounds": CleanupStop,
    "stop-recurring-finding": CleanupStop,
    "stop-reviewer-unavailable": ReviewerUnavailable,
    "state-inconsistency": StateInconsistency,
    "report": Report,
}
# The verdicts that name the automation the hands may delete (finish-finalization and every cleanup stop).
DELETES_AUTOMATION = (FinishFinalization, CleanupStop, ReviewerUnavailable)
# The verdicts that execute a claimed plan (phase one of either kind, or phase two of a finalization).
EXECUTES_PLAN = (ExecuteRemediation, ExecuteFinalization, FinishFinalization)
ExecutingVerdict = ExecuteRemediation | ExecuteFinalization | FinishFinalization


# --- parsing -------------------------------------------------------------------------


def _state_model(output: Document) -> type[Strict] | None:
    action = output.get("action")
    if not isinstance(action, str) or action not in STATE_VERDICTS:
        return None
    if action == "state-inconsistency" and "plan_violations" in output:
        return StalePlanInconsistency
    return STATE_VERDICTS[action]


def state_verdict(output: Document) -> tuple[StateVerdict | None, list[Violation]]:
    """An accepted ``--state`` output as its action's model, or the violations that make it none."""
    model = _state_model(output)
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
