"""Every rule of the initial document: snapshot, manifest and plan hash (references/manifest-schema.md)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from .. import policy
from ..canonical import digest, text_digest
from ..errors import Violation, pointer
from ..models.common import validate
from ..models.initial import InitialDocument, InitialManifest, InitialSnapshot
from ..render import review_template_violations
from ..vocabulary import OperationName
from .plan import boundary_violations, command_violations, fixed_value_violations, path_violations

SNAPSHOT = ("initial_snapshot",)
MANIFEST = ("initial_manifest",)
_EXISTING_PR = (
    "existing_pr_number",
    "existing_pr_base_branch",
    "existing_pr_head_branch",
    "existing_pr_head_sha",
    "existing_pr_same_repository",
)


@dataclass(frozen=True)
class InitialResult:
    document: InitialDocument
    initial_plan_hash: str
    snapshot_sha256: str


def expected_operations(snapshot: InitialSnapshot) -> list[OperationName]:
    """The one operation list a snapshot allows, in its fixed order (references/manifest-schema.md)."""
    operations: list[OperationName] = ["fetch-base"]
    if snapshot.create_branch_required:
        operations.append("create-branch")
    if snapshot.commands:
        operations.append("run-validation")
    if snapshot.commit_required:
        operations += ["stage-files", "commit"]
    if snapshot.push_required:
        operations.append("push")
    operations.append("reuse-pr" if snapshot.existing_pr_number is not None else "create-pr")
    return operations + ["request-codex-review", "bootstrap-automation"]


def snapshot_violations(snapshot: InitialSnapshot) -> list[Violation]:
    found: list[Violation] = []
    at = partial(pointer, *SNAPSHOT)
    found += fixed_value_violations(snapshot, at)
    if snapshot.heartbeat_rrule != policy.HEARTBEAT_RRULE:
        found.append(
            Violation(
                "heartbeat-rrule-not-policy",
                at("heartbeat_rrule"),
                f"observed {snapshot.heartbeat_rrule!r}, policy {policy.HEARTBEAT_RRULE!r}",
            )
        )
    if snapshot.head_branch == snapshot.base_branch:
        found.append(
            Violation("head-branch-equals-base", at("head_branch"), f"head and base are both {snapshot.base_branch!r}")
        )
    if snapshot.commit_required and not snapshot.paths:
        found.append(Violation("paths-empty", at("paths"), "commit_required is true but no path is listed to stage"))
    found += _existing_pr_violations(snapshot)
    found += path_violations(snapshot.paths, snapshot.path_records, SNAPSHOT)
    found += command_violations(snapshot.commands, SNAPSHOT)
    found += boundary_violations(snapshot.execution_boundary, SNAPSHOT + ("execution_boundary",))
    return found


def _existing_pr_violations(snapshot: InitialSnapshot) -> list[Violation]:
    values = {name: getattr(snapshot, name) for name in _EXISTING_PR}
    nulls = [name for name, value in values.items() if value is None]
    if len(nulls) == len(values):
        return []
    if nulls:
        return [
            Violation(
                "existing-pr-partial", pointer(*SNAPSHOT, name), "the existing_pr_* fields must be all null or all set"
            )
            for name in nulls
        ]
    found = []
    checks = (
        ("existing_pr_same_repository", True, "existing-pr-cross-repository"),
        ("existing_pr_base_branch", snapshot.base_branch, "existing-pr-base-branch-mismatch"),
        ("existing_pr_head_branch", snapshot.head_branch, "existing-pr-head-branch-mismatch"),
        ("existing_pr_head_sha", snapshot.current_head_sha, "existing-pr-head-sha-mismatch"),
    )
    for name, expected, code in checks:
        if values[name] != expected:
            found.append(Violation(code, pointer(*SNAPSHOT, name), f"observed {values[name]!r}, expected {expected!r}"))
    return found


def manifest_violations(manifest: InitialManifest, snapshot: InitialSnapshot) -> list[Violation]:
    found: list[Violation] = []
    at = partial(pointer, *MANIFEST)
    found += fixed_value_violations(manifest, at)
    if manifest.mode not in policy.WRITE_MODES:
        code = "mode-report-only-has-no-plan" if manifest.mode == "report-only" else "mode-invalid"
        found.append(
            Violation(code, at("mode"), f"observed {manifest.mode!r}, expected one of {list(policy.WRITE_MODES)}")
        )
    expected = expected_operations(snapshot)
    if manifest.operations != expected:
        found.append(
            Violation(
                "operations-mismatch",
                at("operations"),
                f"observed {manifest.operations}, the snapshot requires {expected}",
            )
        )
    found += review_template_violations(
        manifest.review_request_body_template, manifest.run_id, 0, at("review_request_body_template")
    )
    if text_digest(manifest.review_request_body_template) != manifest.review_request_body_template_sha256:
        found.append(
            Violation(
                "review-template-sha256-mismatch",
                at("review_request_body_template_sha256"),
                "digest does not match the template's UTF-8 bytes",
            )
        )
    if manifest.automation_prompt_template != policy.AUTOMATION_PROMPT_TEMPLATE_V1:
        found.append(
            Violation(
                "prompt-template-not-v1",
                at("automation_prompt_template"),
                "template is not byte-for-byte the evaluator-owned v1 template",
            )
        )
    if text_digest(manifest.automation_prompt_template) != manifest.automation_prompt_template_sha256:
        found.append(
            Violation(
                "prompt-template-sha256-mismatch",
                at("automation_prompt_template_sha256"),
                "digest does not match the template's UTF-8 bytes",
            )
        )
    return found


def check_initial(
    document: dict[str, Any], approved_hash: str | None = None
) -> tuple[InitialResult | None, list[Violation]]:
    """Validate a complete initial document; a result only when nothing is wrong."""
    model, found = validate(InitialDocument, document)
    if model is None:
        return None, found
    found = snapshot_violations(model.initial_snapshot) + manifest_violations(
        model.initial_manifest, model.initial_snapshot
    )
    snapshot_sha256 = digest(document["initial_snapshot"])
    plan_hash = digest(document["initial_manifest"])
    if model.initial_manifest.snapshot_sha256 != snapshot_sha256:
        found.append(
            Violation(
                "snapshot-sha256-mismatch",
                pointer(*MANIFEST, "snapshot_sha256"),
                f"observed {model.initial_manifest.snapshot_sha256}, the snapshot digests to {snapshot_sha256}",
            )
        )
    if model.initial_plan_hash != plan_hash:
        found.append(
            Violation(
                "initial-plan-hash-mismatch",
                "/initial_plan_hash",
                f"observed {model.initial_plan_hash}, the manifest digests to {plan_hash}",
            )
        )
    if approved_hash is not None and approved_hash != plan_hash:
        found.append(
            Violation("plan-hash-mismatch", "/initial_plan_hash", f"approved {approved_hash}, computed {plan_hash}")
        )
    if found:
        return None, found
    return InitialResult(model, plan_hash, snapshot_sha256), []
