"""Evaluate a recurring state: the one use case behind ``--state``.

A state is validated (shape, then its own rules and its plan's), its plan is
compared with the snapshot it claims to be built from, its facts are observed
at the evaluation instant, the action table decides, and the risk acceptance
verdict is taken. The result is one typed ``StateDecision``; the CLI only
shapes it into the output object (references/actions.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .actions import Situation, action_payload
from .errors import Violation
from .facts import observe_facts
from .formats import parse_timestamp
from .machine import decide
from .models.common import validate
from .models.recurring import RecurringState
from .rules.manifests import finalization_drift, finalization_violations, remediation_drift, remediation_violations
from .rules.recurring import approval_violations, state_violations
from .rules.risk import PlanBoundary, risk_verdict
from .vocabulary import ActionName


@dataclass(frozen=True)
class StateDecision:
    action: ActionName
    reasons: tuple[str, ...]
    mode: str
    payload: dict[str, Any]  # the action's output fields, in output order
    risk_unverified: bool  # the plan binds a risk acceptance record that was not shown


def well_formed_state(
    document: dict[str, Any], approved_hash: str | None
) -> tuple[RecurringState | None, list[Violation]]:
    """The validated state, or every violation that rejects it (an approval that cannot apply included)."""
    state, found = validate(RecurringState, document)
    if state is None:
        return None, found
    found = state_violations(state, document) + approval_violations(state, approved_hash)
    if state.remediation_manifest is not None:
        found += remediation_violations(state.remediation_manifest, state.fix_rounds)
    if state.finalization_manifest is not None:
        found += finalization_violations(state.finalization_manifest)
    return (None, found) if found else (state, [])


def plan_drift(state: RecurringState, document: dict[str, Any]) -> tuple[list[Violation], list[str]]:
    """How the state's plan differs from its snapshot, and the one reason that makes it stale."""
    if state.remediation_manifest is not None:
        found = remediation_drift(state.remediation_manifest, state, document)
        return found, ["remediation-plan-stale"] if found else []
    if state.finalization_manifest is not None:
        found = finalization_drift(state.finalization_manifest, state, document)
        return found, ["finalization-plan-stale"] if found else []
    return [], []


def _remediation_boundary(state: RecurringState, document: dict[str, Any]) -> PlanBoundary | None:
    manifest = state.remediation_manifest
    if manifest is None:
        return None
    raw = document["remediation_manifest"]["execution"]
    return PlanBoundary(
        manifest.execution,
        raw,
        manifest.commands,
        manifest.run_id,
        state.authenticated_user_id,
        ("remediation_manifest", "execution"),
    )


def evaluate_state(
    document: dict[str, Any], approved_hash: str | None, now: str | None, risk_record: dict[str, Any] | None = None
) -> tuple[StateDecision | None, list[Violation]]:
    """(decision, []) for a well-formed state, else (None, violations)."""
    state, found = well_formed_state(document, approved_hash)
    if state is None:
        return None, found
    risk = risk_verdict(risk_record, state.mode, _remediation_boundary(state, document), "/remediation_manifest")
    if risk.violations:
        return None, risk.violations
    plan_violations, drift_reasons = plan_drift(state, document)
    instant = parse_timestamp(now if now is not None else state.observed_at)
    facts = observe_facts(state, instant, approved_hash, drift_reasons)
    action, reasons = decide(facts)
    payload = action_payload(action, Situation(state, facts, plan_violations))
    return StateDecision(action, tuple(reasons), state.mode, payload, risk.unverified), []
