"""The action registry: every action the machine can emit, what it may write, and its payload.

One entry per action: whether it writes outside the evaluator (GitHub, git,
the automation registry), whether it is a cleanup stop (a terminal stop whose
one write deletes the owned automation), and the fields the agent needs to
carry out exactly that action and nothing more. references/actions.md and
SKILL.md list the same actions (a test compares them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

from . import markers
from .errors import Violation, sorted_violations
from .facts import Facts, bound_to_request
from .models.recurring import FinalizationManifest, RecurringState, RemediationManifest
from .vocabulary import ActionName, CleanupStopName


@dataclass(frozen=True)
class Situation:
    """What a payload is built from: the state, its facts, and why its plan is stale (if it is)."""

    state: RecurringState
    facts: Facts
    plan_violations: list[Violation]


Payload = Callable[[Situation], dict[str, Any]]


@dataclass(frozen=True)
class Action:
    name: ActionName
    writes: bool  # changes something outside the evaluator
    cleanup: bool  # a terminal stop whose one write deletes the owned automation
    payload: Payload


def _plan(s: Situation) -> RemediationManifest | FinalizationManifest:
    manifest = s.state.remediation_manifest or s.state.finalization_manifest
    if manifest is None:  # the table emits plan actions only with a plan
        raise LookupError("a plan action without a plan")
    return manifest


def _remediation(s: Situation) -> RemediationManifest:
    if s.state.remediation_manifest is None:
        raise LookupError("a remediation action without a remediation plan")
    return s.state.remediation_manifest


def _finalization(s: Situation) -> FinalizationManifest:
    if s.state.finalization_manifest is None:
        raise LookupError("a finalization action without a finalization plan")
    return s.state.finalization_manifest


def _nothing(s: Situation) -> dict[str, Any]:
    return {}


def _plan_remediation(s: Situation) -> dict[str, Any]:
    round_number = s.state.fix_rounds + 1
    return {
        "next_round": round_number,
        "review_request_body_template": markers.default_review_template(
            s.state.run_id, round_number, markers.addressed_comment_ids(s.state.as_dict())
        ),
        "actionable_thread_ids": [thread.id for thread in s.state.actionable_codex_threads],
    }


def _plan_finalization(s: Situation) -> dict[str, Any]:
    return {
        "eligible_thread_ids": [thread.id for thread in s.state.eligible_codex_threads],
        "gates": s.state.gates.as_dict(),
    }


def _await_approval(s: Situation) -> dict[str, Any]:
    return {"plan_kind": s.facts.plan_kind, "plan_hash": s.facts.plan_hash, "operations": list(_plan(s).operations)}


def _claim_plan(s: Situation) -> dict[str, Any]:
    state, facts = s.state, s.facts
    # A wakeup that did not name itself is an inconsistency once bootstrap is
    # over; before it, "None" makes the posted claim a marker anomaly.
    wakeup_id = str(state.wakeup_id)
    body = markers.claim_marker(state.run_id, facts.claim_kind, str(facts.plan_hash), str(state.request_key), wakeup_id)
    return {**_await_approval(s), "claim_comment_body": body}


def _execute_remediation(s: Situation) -> dict[str, Any]:
    manifest = _remediation(s)
    return {
        "plan_hash": s.facts.plan_hash,
        "operations": list(manifest.operations),
        "review_request_body_template": manifest.review_request_body_template,
        "reply_marker": markers.reply_marker(s.state.run_id, s.state.fix_rounds + 1),
        "thread_ids": [thread.id for thread in manifest.actionable_threads],
    }


def _execute_finalization(s: Situation) -> dict[str, Any]:
    # Phase one: GitHub operations only; cleanup waits for a post-mutation snapshot.
    manifest = _finalization(s)
    return {
        "plan_hash": s.facts.plan_hash,
        "operations": [operation for operation in manifest.operations if operation != "delete-owned-automation"],
        "thread_ids": [thread.id for thread in manifest.eligible_threads],
    }


def _finish_finalization(s: Situation) -> dict[str, Any]:
    state = s.state
    first_claim = next(c for c in state.claims if c.kind == "finalization" and c.request_key == state.request_key)
    return {
        "plan_hash": s.facts.plan_hash,
        "operations": ["delete-owned-automation"],
        "delete_automation_id": state.owned_automation_id,
        "gates": state.gates.as_dict(),
        "original_plan_hash": first_claim.plan_hash,
        "original_request_key": first_claim.request_key,
    }


def _cleanup(s: Situation) -> dict[str, Any]:
    return {"delete_automation_id": s.state.owned_automation_id, "gates": s.state.gates.as_dict()}


def _replies_stopped_on(s: Situation) -> dict[str, Any]:
    """What Codex said instead of a review: each "no review" reply's kind, each unrecognised reply's excerpt."""
    state = s.state
    return {
        "unavailable_replies": [
            {"id": reply.id, "kind": reply.kind}
            for reply in state.unavailable_replies
            if bound_to_request(state, reply.created_at)
        ],
        "unrecognized_replies": [
            {"excerpt": reply.excerpt, "id": reply.id, "source": reply.source} for reply in s.facts.unrecognized
        ],
    }


def _reviewer_unavailable(s: Situation) -> dict[str, Any]:
    return {**_cleanup(s), **_replies_stopped_on(s)}


def _state_inconsistency(s: Situation) -> dict[str, Any]:
    state = s.state
    key = markers.automation_key(state.host, state.repository, state.pr_number, state.run_id)
    payload: dict[str, Any] = {
        "write_permitted": False,
        "user_must_delete_automation": None if state.mode == "report-only" else key,
    }
    if s.plan_violations:
        payload["plan_violations"] = [v.as_dict() for v in sorted_violations(s.plan_violations)]
    return payload


def _report(s: Situation) -> dict[str, Any]:
    state = s.state
    return {
        "gates": state.gates.as_dict(),
        "actionable_threads": len(state.actionable_codex_threads),
        "eligible_threads": len(state.eligible_codex_threads),
        "non_codex_rooted_threads": state.non_codex_rooted_threads,
        **_replies_stopped_on(s),
    }


_CLEANUP_STOPS: tuple[CleanupStopName, ...] = get_args(CleanupStopName)

ACTIONS: dict[ActionName, Action] = {
    action.name: action
    for action in (
        Action("wait", writes=False, cleanup=False, payload=_nothing),
        Action("plan-remediation", writes=False, cleanup=False, payload=_plan_remediation),
        Action("plan-finalization", writes=False, cleanup=False, payload=_plan_finalization),
        Action("await-approval", writes=False, cleanup=False, payload=_await_approval),
        Action("claim-plan", writes=True, cleanup=False, payload=_claim_plan),
        Action("execute-remediation", writes=True, cleanup=False, payload=_execute_remediation),
        Action("execute-finalization", writes=True, cleanup=False, payload=_execute_finalization),
        Action("finish-finalization", writes=True, cleanup=False, payload=_finish_finalization),
        Action("done", writes=False, cleanup=False, payload=_nothing),
        *(Action(name, writes=True, cleanup=True, payload=_cleanup) for name in _CLEANUP_STOPS),
        Action("stop-reviewer-unavailable", writes=True, cleanup=True, payload=_reviewer_unavailable),
        Action("state-inconsistency", writes=False, cleanup=False, payload=_state_inconsistency),
        Action("report", writes=False, cleanup=False, payload=_report),
    )
}
# Read off the registry, never kept by hand.
WRITE_ACTIONS = frozenset(name for name, action in ACTIONS.items() if action.writes)
CLEANUP_STOPS = frozenset(name for name, action in ACTIONS.items() if action.cleanup)


def action_payload(name: ActionName, situation: Situation) -> dict[str, Any]:
    """The output fields of an action: the request checkpoint, then the action's own payload."""
    state = situation.state
    common = {
        "request_key": state.request_key,
        "fix_rounds": state.fix_rounds,
        "request_deadline": state.request_deadline,
    }
    return {**common, **ACTIONS[name].payload(situation)}
