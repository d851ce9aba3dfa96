"""The evaluator's ``--state`` results, as typed models: one per payload shape, chosen by the emitted ``action``.

Every ``--state`` result opens with the same head (evaluator/checks.py,
``state_output``) and the request checkpoint (evaluator/actions.py,
``action_payload``); the action's own payload follows. The accepted shapes of
``--initial`` and ``--prompt``, and the rejection all three share, are in
evaluator/models/verdict.py.
"""

from typing import Any, Literal

from .. import policy
from ..vocabulary import CleanupStopName, OperationName
from .common import DecimalId, Digest, NodeId, NonNegativeInt, PositiveInt, Strict, Timestamp
from .recurring import Gates
from .verdict import Accepted, Error

# The kinds of plan a recurring verdict names.
PlanKind = Literal["remediation", "finalization"]


class UnavailableSeen(Strict):
    id: DecimalId
    kind: policy.UnavailableKind


class UnrecognizedSeen(Strict):
    excerpt: str
    id: DecimalId
    source: Literal["issue-comment", "review"]


# A model derives from Strict directly, so each one spells the head out.


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
    plan_kind: PlanKind
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
    plan_kind: PlanKind
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


def state_model(output: dict[str, Any]) -> type[Strict] | None:
    """The model of a ``--state`` result by its action; None for an action the registry does not name."""
    action = output.get("action")
    if not isinstance(action, str) or action not in STATE_VERDICTS:
        return None
    if action == "state-inconsistency" and "plan_violations" in output:
        return StalePlanInconsistency
    return STATE_VERDICTS[action]
