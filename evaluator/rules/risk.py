"""Verify a supplied risk acceptance record against the plan that binds it."""

from __future__ import annotations

from typing import Any, Sequence

from .. import policy
from ..canonical import digest
from ..errors import Violation, pointer
from ..models.common import validate
from ..models.plan import Command, ExecutionBoundary
from ..models.risk import RiskAcceptance


def required_guarantees(boundary: ExecutionBoundary) -> set[str]:
    """Guarantees the record must name as unavailable, read off the boundary itself."""
    # The explicit form gives up all three guarantees its isolation name stands for.
    required = {"network-isolation", "minimal-environment", "checkout-only-filesystem"}
    required |= {name.replace("_", "-") for name in policy.GIT_PROTECTIONS if not getattr(boundary.git, name)}
    if boundary.git.active_clean_filters:
        required.add("no-active-clean-filters")
    return required


def risk_record_violations(
    record: dict[str, Any] | None,
    boundary: ExecutionBoundary,
    boundary_document: dict[str, Any],
    commands: Sequence[Command],
    run_id: str,
    user_id: int,
    base: tuple,
) -> list[Violation]:
    """Violations of a record supplied with --risk-acceptance; none when no record was given."""
    if record is None:
        return []
    where = pointer(*base, "risk_acceptance_sha256")
    if boundary.isolation != policy.EXPLICIT_RISK:
        return [Violation("risk-acceptance-unexpected", where, "a risk acceptance record was supplied but the boundary is the isolated form")]
    model, shape = validate(RiskAcceptance, record)
    if model is None:
        return [Violation("risk-acceptance-invalid", where, f"record {v.code} at {v.path or '/'}: {v.message}") for v in shape]
    found = []
    if digest(record) != boundary.risk_acceptance_sha256:
        found.append(Violation("risk-acceptance-digest-mismatch", where, f"the record digests to {digest(record)}, the boundary binds {boundary.risk_acceptance_sha256}"))
    accepted = {key: value for key, value in boundary_document.items() if key != "risk_acceptance_sha256"}
    if record["execution_boundary"] != accepted:
        found.append(Violation("risk-acceptance-boundary-mismatch", where, "the record accepts a different execution boundary than the plan's"))
    if list(model.commands) != list(commands):
        found.append(Violation("risk-acceptance-commands-mismatch", where, "the record accepts different commands than the plan's"))
    if model.run_id != run_id:
        found.append(Violation("risk-acceptance-run-mismatch", where, f"record run {model.run_id}, plan run {run_id}"))
    if model.accepted_by_user_id != user_id:
        found.append(Violation("risk-acceptance-user-mismatch", where, f"accepted by user {model.accepted_by_user_id}, the plan's user is {user_id}"))
    guarantees = model.unavailable_guarantees
    if guarantees != sorted(set(guarantees)) or not set(guarantees) <= set(policy.RISK_GUARANTEES):
        found.append(Violation("risk-guarantees-invalid", where, f"unavailable_guarantees must be sorted, unique and drawn from {sorted(policy.RISK_GUARANTEES)}"))
    missing = sorted(required_guarantees(boundary) - set(guarantees))
    if missing:
        found.append(Violation("risk-guarantees-incomplete", where, f"the boundary lacks guarantees the record does not name: {missing}"))
    return found
