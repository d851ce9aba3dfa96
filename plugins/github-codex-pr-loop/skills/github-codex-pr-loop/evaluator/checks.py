"""The three checks of the CLI contract: each runs its use case and shapes the one output object.

``CHECKS`` maps a check name (``--initial``, ``--prompt``, ``--state``) to its
runner. A runner returns a ``CheckOutcome``: the output object, exactly as
references/errors.md and references/actions.md describe it, plus what the
CLI may tell a person on stderr.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import Violation, sorted_violations

if TYPE_CHECKING:
    from .decision import StateDecision

# Each runner imports the rules (and so builds the models) of its own check
# only: --initial never builds the recurring-state models, --state never the
# initial or prompt ones. Building models is most of the CLI's start-up.


@dataclass(frozen=True)
class CheckOutcome:
    output: dict[str, Any]  # the one JSON object the CLI prints
    risk_unverified: bool = False  # accepted without its risk acceptance record shown

    @property
    def ok(self) -> bool:
        return bool(self.output["ok"])


def rejected(check: str, violations: list[Violation]) -> dict[str, Any]:
    return {"ok": False, "check": check, "errors": [v.as_dict() for v in sorted_violations(violations)]}


def initial_check(
    document: dict[str, Any], approved_hash: str | None, risk_record: dict[str, Any] | None
) -> CheckOutcome:
    from .rules.initial import check_initial
    from .rules.risk import PlanBoundary, risk_verdict

    result, found = check_initial(document, approved_hash)
    if result is None:
        return CheckOutcome(rejected("initial", found))
    snapshot, manifest = result.document.initial_snapshot, result.document.initial_manifest
    base = ("initial_snapshot", "execution_boundary")
    plan = PlanBoundary(
        snapshot.execution_boundary,
        document[base[0]][base[1]],
        snapshot.commands,
        manifest.run_id,
        snapshot.authenticated_user_id,
        base,
    )
    risk = risk_verdict(risk_record, manifest.mode, plan)
    if risk.violations:
        return CheckOutcome(rejected("initial", risk.violations))
    output = {
        "ok": True,
        "check": "initial",
        "initial_plan_hash": result.initial_plan_hash,
        "snapshot_sha256": result.snapshot_sha256,
        "mode": manifest.mode,
        "operations": list(manifest.operations),
    }
    return CheckOutcome(output, risk.unverified)


def state_output(decision: StateDecision) -> dict[str, Any]:
    head = {
        "ok": True,
        "check": "state",
        "action": decision.action,
        "reasons": list(decision.reasons),
        "mode": decision.mode,
    }
    return {**head, **decision.payload}


def state_check(
    document: dict[str, Any], approved_hash: str | None, now: str | None, risk_record: dict[str, Any] | None
) -> CheckOutcome:
    from .decision import evaluate_state

    decision, found = evaluate_state(document, approved_hash, now, risk_record)
    if decision is None:
        return CheckOutcome(rejected("state", found))
    return CheckOutcome(state_output(decision), decision.risk_unverified)


def prompt_check(document: dict[str, Any]) -> CheckOutcome:
    from .decision import evaluate_state
    from .rules.prompt import STATE, bootstrap_state_violations, check_prompt, prefixed

    result, found = check_prompt(document)
    if result is None:
        return CheckOutcome(rejected("prompt", found))
    # The bootstrap state must be exactly the paused-bootstrap inconsistency.
    decision, state_found = evaluate_state(document["bootstrap_snapshot"]["state"], None, None)
    if decision is None:  # unreachable after check_prompt, kept so the guard never fails open
        return CheckOutcome(rejected("prompt", prefixed(state_found, *STATE)))
    found = bootstrap_state_violations(decision.action, list(decision.reasons))
    if found:
        return CheckOutcome(rejected("prompt", found))
    output = {
        "ok": True,
        "check": "prompt",
        "result": "prompt-ready",
        "automation_key": result.automation_key,
        "rendered_prompt": result.rendered_prompt,
        "rendered_prompt_sha256": result.rendered_prompt_sha256,
        "bootstrap_snapshot_sha256": result.bootstrap_snapshot_sha256,
    }
    return CheckOutcome(output)


Runner = Callable[..., CheckOutcome]

# Check name -> runner; every runner takes the parsed document and the flags.
CHECKS: dict[str, Runner] = {
    "initial": lambda document, *, approved_hash, now, risk_record: initial_check(document, approved_hash, risk_record),
    "prompt": lambda document, *, approved_hash, now, risk_record: prompt_check(document),
    "state": lambda document, *, approved_hash, now, risk_record: state_check(
        document, approved_hash, now, risk_record
    ),
}


def run_initial(
    document: dict[str, Any], *, approved_hash: str | None, risk_record: dict[str, Any] | None = None, **_: Any
) -> dict[str, Any]:
    """The output object of ``--initial``."""
    return initial_check(document, approved_hash, risk_record).output


def run_prompt(document: dict[str, Any], **_: Any) -> dict[str, Any]:
    """The output object of ``--prompt``."""
    return prompt_check(document).output


def run_state(
    document: dict[str, Any],
    *,
    approved_hash: str | None,
    now: str | None,
    risk_record: dict[str, Any] | None = None,
    **_: Any,
) -> dict[str, Any]:
    """The output object of ``--state``."""
    return state_check(document, approved_hash, now, risk_record).output
