"""The three checks of the CLI contract, each returning the one output object."""

from __future__ import annotations

from typing import Any

from . import markers, policy
from .errors import Violation, sorted_violations


def _record_missing(base: tuple) -> Violation:
    # Nobody approves an autonomous plan, so the record itself must be shown.
    from .errors import pointer

    return Violation("risk-acceptance-record-missing", pointer(*base, "risk_acceptance_sha256"), "an autonomous plan in the explicit-risk-acceptance form needs its acceptance record (--risk-acceptance PATH)")


def _rejected(check: str, violations: list[Violation]) -> dict[str, Any]:
    return {"ok": False, "check": check, "errors": [v.as_dict() for v in sorted_violations(violations)]}


def run_initial(document: dict[str, Any], *, approved_hash: str | None, risk_record: dict | None, **_: Any) -> dict[str, Any]:
    from .rules.initial import check_initial

    result, found = check_initial(document, approved_hash)
    if result is None:
        return _rejected("initial", found)
    snapshot, manifest = result.document.initial_snapshot, result.document.initial_manifest
    if risk_record is None and manifest.mode == "autonomous" and snapshot.execution_boundary.isolation == policy.EXPLICIT_RISK:
        return _rejected("initial", [_record_missing(("initial_snapshot", "execution_boundary"))])
    if risk_record is not None:
        from .rules.risk import risk_record_violations

        found = risk_record_violations(
            risk_record,
            snapshot.execution_boundary,
            document["initial_snapshot"]["execution_boundary"],
            snapshot.commands,
            manifest.run_id,
            snapshot.authenticated_user_id,
            ("initial_snapshot", "execution_boundary"),
        )
        if found:
            return _rejected("initial", found)

    return {
        "ok": True,
        "check": "initial",
        "initial_plan_hash": result.initial_plan_hash,
        "snapshot_sha256": result.snapshot_sha256,
        "mode": manifest.mode,
        "operations": list(manifest.operations),
    }


def evaluate_state(document: dict[str, Any], approved_hash: str | None, now: str | None) -> tuple[dict[str, Any] | None, list[Violation]]:
    """(result, []) for a well-formed state, else (None, violations)."""
    from . import machine
    from .models.common import parse_timestamp, validate
    from .models.recurring import RecurringState
    from .rules.manifests import finalization_drift, finalization_violations, remediation_drift, remediation_violations
    from .rules.recurring import approval_violations, state_violations

    state, found = validate(RecurringState, document)
    if state is None:
        return None, found
    found = state_violations(state, document) + approval_violations(state, approved_hash)
    if state.remediation_manifest is not None:
        found += remediation_violations(state.remediation_manifest, state.fix_rounds)
    if state.finalization_manifest is not None:
        found += finalization_violations(state.finalization_manifest)
    if found:
        return None, found
    plan_violations = []
    if state.remediation_manifest is not None:
        plan_violations = remediation_drift(state.remediation_manifest, state, document)
    elif state.finalization_manifest is not None:
        plan_violations = finalization_drift(state.finalization_manifest, state, document)
    kind = "remediation" if state.remediation_manifest is not None else "finalization"
    drift_reasons = [f"{kind}-plan-stale"] if plan_violations else []
    instant = parse_timestamp(now) if now is not None else parse_timestamp(state.observed_at)
    facts = machine.observe_facts(state, instant, approved_hash, drift_reasons)
    action, reasons = machine.decide(facts)
    result: dict[str, Any] = {"ok": True, "check": "state", "action": action, "reasons": reasons, "mode": state.mode}
    result.update(_action_details(action, state, facts, plan_violations))
    return result, []


def _action_details(action: str, state: Any, facts: Any, plan_violations: list[Violation]) -> dict[str, Any]:
    """What the agent needs to carry out exactly this action, and nothing more."""
    from .machine import CLEANUP_STOPS

    details: dict[str, Any] = {"request_key": state.request_key, "fix_rounds": state.fix_rounds, "request_deadline": state.request_deadline}
    automation_key = markers.automation_key(state.host, state.repository, state.pr_number, state.run_id)
    manifest = state.remediation_manifest or state.finalization_manifest
    if action == "plan-remediation":
        round_number = state.fix_rounds + 1
        details.update(next_round=round_number, review_request_body_template=markers.default_review_template(state.run_id, round_number), actionable_thread_ids=[t.id for t in state.actionable_codex_threads])
    elif action == "plan-finalization":
        details.update(eligible_thread_ids=[t.id for t in state.eligible_codex_threads], gates=state.gates.model_dump())
    elif action in ("await-approval", "claim-plan"):
        details.update(plan_kind=facts.plan_kind, plan_hash=facts.plan_hash, operations=list(manifest.operations))
        if action == "claim-plan":
            details["claim_comment_body"] = markers.claim_marker(state.run_id, facts.claim_kind, facts.plan_hash, state.request_key, state.wakeup_id)
    elif action == "execute-remediation":
        details.update(plan_hash=facts.plan_hash, operations=list(manifest.operations), review_request_body_template=manifest.review_request_body_template, reply_marker=markers.reply_marker(state.run_id, state.fix_rounds + 1), thread_ids=[t.id for t in manifest.actionable_threads])
    elif action == "execute-finalization":
        # Phase one: GitHub operations only; cleanup waits for a post-mutation snapshot.
        details.update(plan_hash=facts.plan_hash, operations=[op for op in manifest.operations if op != "delete-owned-automation"], thread_ids=[t.id for t in manifest.eligible_threads])
    elif action == "finish-finalization":
        first_claim = next(c for c in state.claims if c.kind == "finalization" and c.request_key == state.request_key)
        details.update(plan_hash=facts.plan_hash, operations=["delete-owned-automation"], delete_automation_id=state.owned_automation_id, gates=state.gates.model_dump(), original_plan_hash=first_claim.plan_hash, original_request_key=first_claim.request_key)
    elif action in CLEANUP_STOPS:
        details.update(delete_automation_id=state.owned_automation_id, gates=state.gates.model_dump())
    elif action == "state-inconsistency":
        details.update(write_permitted=False, user_must_delete_automation=None if state.mode == "report-only" else automation_key)
        if plan_violations:
            details["plan_violations"] = [v.as_dict() for v in sorted_violations(plan_violations)]
    elif action == "report":
        details.update(gates=state.gates.model_dump(), actionable_threads=len(state.actionable_codex_threads), eligible_threads=len(state.eligible_codex_threads), non_codex_rooted_threads=state.non_codex_rooted_threads)
    return details


def run_state(document: dict[str, Any], *, approved_hash: str | None, now: str | None, risk_record: dict | None = None, **_: Any) -> dict[str, Any]:
    result, found = evaluate_state(document, approved_hash, now)
    if result is None:
        return _rejected("state", found)
    manifest = document["remediation_manifest"]
    if risk_record is None and manifest is not None and document["mode"] == "autonomous" and manifest["execution"]["isolation"] == policy.EXPLICIT_RISK:
        return _rejected("state", [_record_missing(("remediation_manifest", "execution"))])
    if risk_record is not None:
        found = _state_risk_violations(document, risk_record)
        if found:
            return _rejected("state", found)
    return result


def _state_risk_violations(document: dict[str, Any], risk_record: dict) -> list[Violation]:
    """A record supplied with --state is checked against the remediation plan's execution boundary."""
    from .models.recurring import RemediationManifest
    from .rules.risk import risk_record_violations

    raw = document.get("remediation_manifest")
    if raw is None:
        return [Violation("risk-acceptance-unexpected", "/remediation_manifest", "a risk acceptance record applies to a remediation plan, and the state carries none")]
    manifest = RemediationManifest.model_validate(raw)
    return risk_record_violations(risk_record, manifest.execution, raw["execution"], manifest.commands, manifest.run_id, document["authenticated_user_id"], ("remediation_manifest", "execution"))


def run_prompt(document: dict[str, Any], **_: Any) -> dict[str, Any]:
    from .rules.prompt import check_prompt

    result, found = check_prompt(document)
    if result is None:
        return _rejected("prompt", found)
    return {
        "ok": True,
        "check": "prompt",
        "result": "prompt-ready",
        "automation_key": result.automation_key,
        "rendered_prompt": result.rendered_prompt,
        "rendered_prompt_sha256": result.rendered_prompt_sha256,
        "bootstrap_snapshot_sha256": result.bootstrap_snapshot_sha256,
    }
