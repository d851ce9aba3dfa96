"""Risk acceptance: every rule about the record, in one verdict.

An execution boundary in the explicit-risk-acceptance form binds a record by
digest (references/git-execution-boundary.md). ``risk_verdict`` decides, for
one plan, whether a record is required, whether a supplied one is the record
the plan binds, and whether the plan was accepted without its record being
shown (``unverified``: accepted on shape and pairing only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import policy
from ..canonical import digest
from ..errors import Violation, pointer
from ..models.common import validate
from ..models.plan import Command, ExecutionBoundary


def required_guarantees(boundary: ExecutionBoundary) -> set[str]:
    """Guarantees the record must name as unavailable, read off the boundary itself."""
    # The explicit form gives up all three guarantees its isolation name stands for.
    required = {"network-isolation", "minimal-environment", "checkout-only-filesystem"}
    required |= {name.replace("_", "-") for name in policy.GIT_PROTECTIONS if not getattr(boundary.git, name)}
    if boundary.git.active_clean_filters:
        required.add("no-active-clean-filters")
    return required


@dataclass(frozen=True)
class PlanBoundary:
    """The execution boundary of the one plan a record may accept, and what the record must repeat."""

    boundary: ExecutionBoundary
    document: dict[str, Any]  # the boundary exactly as given
    commands: Sequence[Command]
    run_id: str
    user_id: int
    base: tuple[str, ...]  # where the boundary sits in the checked document


@dataclass(frozen=True)
class RiskVerdict:
    violations: list[Violation] = field(default_factory=list)
    unverified: bool = False  # the plan binds a record that was not shown


def _record_violations(record: dict[str, Any], plan: PlanBoundary) -> list[Violation]:
    """Whether a supplied record is exactly the one the plan's boundary binds."""
    boundary = plan.boundary
    where = pointer(*plan.base, "risk_acceptance_sha256")
    if boundary.isolation != policy.EXPLICIT_RISK:
        return [
            Violation(
                "risk-acceptance-unexpected",
                where,
                "a risk acceptance record was supplied but the boundary is the isolated form",
            )
        ]
    from ..models.risk import RiskAcceptance  # built only when a record is given: start-up (bench/README.md)

    model, shape = validate(RiskAcceptance, record)
    if model is None:
        return [
            Violation("risk-acceptance-invalid", where, f"record {v.code} at {v.path or '/'}: {v.message}")
            for v in shape
        ]
    found = []
    if digest(record) != boundary.risk_acceptance_sha256:
        found.append(
            Violation(
                "risk-acceptance-digest-mismatch",
                where,
                f"the record digests to {digest(record)}, the boundary binds {boundary.risk_acceptance_sha256}",
            )
        )
    accepted = {key: value for key, value in plan.document.items() if key != "risk_acceptance_sha256"}
    if record["execution_boundary"] != accepted:
        found.append(
            Violation(
                "risk-acceptance-boundary-mismatch",
                where,
                "the record accepts a different execution boundary than the plan's",
            )
        )
    if list(model.commands) != list(plan.commands):
        found.append(
            Violation(
                "risk-acceptance-commands-mismatch", where, "the record accepts different commands than the plan's"
            )
        )
    if model.run_id != plan.run_id:
        found.append(
            Violation("risk-acceptance-run-mismatch", where, f"record run {model.run_id}, plan run {plan.run_id}")
        )
    if model.accepted_by_user_id != plan.user_id:
        message = f"accepted by user {model.accepted_by_user_id}, the plan's user is {plan.user_id}"
        found.append(Violation("risk-acceptance-user-mismatch", where, message))
    guarantees = model.unavailable_guarantees
    if guarantees != sorted(set(guarantees)) or not set(guarantees) <= set(policy.RISK_GUARANTEES):
        found.append(
            Violation(
                "risk-guarantees-invalid",
                where,
                f"unavailable_guarantees must be sorted, unique and drawn from {sorted(policy.RISK_GUARANTEES)}",
            )
        )
    missing = sorted(required_guarantees(boundary) - set(guarantees))
    if missing:
        found.append(
            Violation(
                "risk-guarantees-incomplete",
                where,
                f"the boundary lacks guarantees the record does not name: {missing}",
            )
        )
    return found


def risk_verdict(
    record: dict[str, Any] | None, mode: str, plan: PlanBoundary | None, no_plan_at: str = ""
) -> RiskVerdict:
    """The risk acceptance verdict for one plan (``None``: the document carries no plan a record could accept)."""
    if plan is None:
        if record is None:
            return RiskVerdict()
        message = "a risk acceptance record applies to a remediation plan, and the state carries none"
        return RiskVerdict([Violation("risk-acceptance-unexpected", no_plan_at, message)])
    if record is None:
        if mode == "autonomous" and plan.boundary.isolation == policy.EXPLICIT_RISK:
            # Nobody approves an autonomous plan, so the record itself must be shown.
            message = (
                "an autonomous plan in the explicit-risk-acceptance form needs its acceptance record"
                " (--risk-acceptance PATH)"
            )
            where = pointer(*plan.base, "risk_acceptance_sha256")
            return RiskVerdict([Violation("risk-acceptance-record-missing", where, message)])
        return RiskVerdict(unverified=plan.boundary.risk_acceptance_sha256 is not None)
    return RiskVerdict(_record_violations(record, plan))
