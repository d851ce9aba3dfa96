"""Every rule of the bootstrap prompt document (references/bootstrap.md): the bootstrap checkpoint."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from .. import markers, policy
from ..canonical import digest, text_digest
from ..errors import Violation, pointer
from ..formats import parse_timestamp
from ..models.common import validate
from ..models.initial import InitialManifest, InitialSnapshot
from ..models.prompt import BootstrapSnapshot, PromptDocument
from ..render import render_prompt, render_review_body
from .initial import check_initial
from .recurring import canonical_pr_url, state_violations

BOOT = ("bootstrap_snapshot",)
RECEIPT = BOOT + ("post_write_receipt",)
STATE = BOOT + ("state",)
BOOTSTRAP_REASONS = ["bootstrap-automation-paused"]


@dataclass(frozen=True)
class PromptResult:
    automation_key: str
    rendered_prompt: str
    rendered_prompt_sha256: str
    bootstrap_snapshot_sha256: str


def prefixed(violations: list[Violation], *prefix: str) -> list[Violation]:
    return [Violation(v.code, pointer(*prefix) + v.path, v.message) for v in violations]


def receipt_violations(
    boot: BootstrapSnapshot, snapshot: InitialSnapshot, manifest: InitialManifest
) -> list[Violation]:
    receipt, state = boot.post_write_receipt, boot.state
    at = partial(pointer, *RECEIPT)
    found = []
    approved = (
        ("base_sha", snapshot.base_sha, "receipt-base-sha-mismatch"),
        ("pushed_diff_sha256", snapshot.diff_sha256, "receipt-diff-mismatch"),
        ("paths", snapshot.paths, "receipt-paths-mismatch"),
        ("initial_head_sha", snapshot.current_head_sha, "receipt-initial-head-mismatch"),
    )
    for field, expected, code in approved:
        if getattr(receipt, field) != expected:
            found.append(
                Violation(
                    code,
                    at(field),
                    f"observed {getattr(receipt, field)!r:.100}, the approved snapshot has {expected!r:.100}",
                )
            )
    final = receipt.final_head_sha
    if snapshot.commit_required and final == receipt.initial_head_sha:
        found.append(
            Violation(
                "receipt-final-head-not-new",
                at("final_head_sha"),
                "commit_required is true but the final head equals the initial head",
            )
        )
    if not snapshot.commit_required and final != receipt.initial_head_sha:
        found.append(
            Violation(
                "receipt-final-head-changed",
                at("final_head_sha"),
                "commit_required is false but the final head differs from the initial head",
            )
        )
    if not receipt.head_descends_from_initial:
        found.append(
            Violation(
                "receipt-head-not-descendant",
                at("head_descends_from_initial"),
                "the final head must descend from the approved initial head",
            )
        )
    heads = (
        (at("remote_head_sha"), receipt.remote_head_sha),
        (at("pr_head_sha"), receipt.pr_head_sha),
        (pointer(*STATE, "request_head_sha"), state.request_head_sha),
        (pointer(*STATE, "current_head_sha"), state.current_head_sha),
        (pointer(*STATE, "remote_head_sha"), state.remote_head_sha),
    )
    for where, head in heads:
        if head != final:
            found.append(
                Violation("receipt-head-mismatch", where, f"observed {head}, the verified final head is {final}")
            )
    if not receipt.worktree_clean:
        found.append(
            Violation(
                "receipt-worktree-dirty", at("worktree_clean"), "the worktree must be clean after the initial writes"
            )
        )
    expected_body = render_review_body(manifest.review_request_body_template, final)
    if receipt.review_request_body != expected_body:
        found.append(
            Violation(
                "receipt-review-body-mismatch",
                at("review_request_body"),
                "the body is not the approved template with only the final head substituted",
            )
        )
    if text_digest(receipt.review_request_body) != receipt.review_request_body_sha256:
        found.append(
            Violation(
                "receipt-review-body-sha256-mismatch",
                at("review_request_body_sha256"),
                "digest does not match the body's UTF-8 bytes",
            )
        )
    return found


def binding_violations(
    boot: BootstrapSnapshot, snapshot: InitialSnapshot, manifest: InitialManifest, plan_hash: str
) -> list[Violation]:
    """Every initial identity and policy value, bound to the fresh bootstrap state."""
    state = boot.state
    found = []
    if boot.initial_plan_hash != plan_hash:
        found.append(
            Violation(
                "bootstrap-plan-hash-mismatch",
                pointer(*BOOT, "initial_plan_hash"),
                f"observed {boot.initial_plan_hash}, the initial document has {plan_hash}",
            )
        )
    url = canonical_pr_url(snapshot.repository, state.pr_number)
    if boot.pr_url != url or state.pr_url != url:
        found.append(
            Violation("pr-url-not-canonical", pointer(*BOOT, "pr_url"), f"observed {boot.pr_url!r}, expected {url!r}")
        )
    expected_deadline = (
        parse_timestamp(state.request_created_at) + policy.REQUEST_TIMEOUT if state.request_created_at else None
    )
    if expected_deadline is None or parse_timestamp(boot.request_deadline) != expected_deadline:
        found.append(
            Violation(
                "request-deadline-not-policy",
                pointer(*BOOT, "request_deadline"),
                f"the deadline must be exactly {policy.REQUEST_TIMEOUT} after state.request_created_at",
            )
        )
    created, deadline = state.request_created_at, state.request_deadline
    not_pending = (
        created is not None
        and deadline is not None
        and not (parse_timestamp(created) < parse_timestamp(state.observed_at) <= parse_timestamp(deadline))
    )
    if not_pending:
        found.append(
            Violation(
                "bootstrap-request-not-pending",
                pointer(*STATE, "observed_at"),
                "the bootstrap state must be observed after the round-0 request and by its deadline",
            )
        )
    bindings: list[tuple[str, object]] = [
        ("run_id", manifest.run_id),
        ("mode", manifest.mode),
        ("host", snapshot.host),
        ("repository", snapshot.repository),
        ("pr_repository", snapshot.repository),
        ("remote_name", snapshot.remote_name),
        ("current_remote_name", snapshot.remote_name),
        ("base_branch", snapshot.base_branch),
        ("current_base_branch", snapshot.base_branch),
        ("head_branch", snapshot.head_branch),
        ("current_head_branch", snapshot.head_branch),
        ("base_sha", snapshot.base_sha),
        ("current_base_sha", snapshot.base_sha),
        ("authenticated_user_id", snapshot.authenticated_user_id),
        ("current_authenticated_user_id", snapshot.authenticated_user_id),
        ("policy_schema_version", snapshot.policy_schema_version),
        ("request_deadline", boot.request_deadline),
    ]
    if snapshot.existing_pr_number is not None:
        bindings.append(("pr_number", snapshot.existing_pr_number))
    for field, expected in bindings:
        if getattr(state, field) != expected:
            found.append(
                Violation(
                    "bootstrap-identity-mismatch",
                    pointer(*STATE, field),
                    f"observed {getattr(state, field)!r}, the approved plan has {expected!r}",
                )
            )
    required: tuple[tuple[str, object], ...] = (
        ("pr_state", "open"),
        ("pr_same_repository", True),
        ("fix_rounds", 0),
        ("completed_request_keys", []),
        ("claims", []),
        ("approved_plan_hash", None),
        ("execution_boundary", None),
        ("remediation_manifest", None),
        ("remediation_plan_hash", None),
        ("finalization_manifest", None),
        ("finalization_plan_hash", None),
        ("expected_prompt_sha256", None),
        ("wakeup_id", None),
    )
    for field, expected in required:
        if getattr(state, field) != expected:
            found.append(
                Violation(
                    "bootstrap-state-not-fresh",
                    pointer(*STATE, field),
                    f"a bootstrap state requires {expected!r}, observed {getattr(state, field)!r:.80}",
                )
            )
    return found


def check_prompt(document: dict[str, Any]) -> tuple[PromptResult | None, list[Violation]]:
    """Every rule of the prompt document; the machine's verdict on its state is ``bootstrap_state_violations``."""
    model, found = validate(PromptDocument, document)
    if model is None:
        return None, found
    initial, found = check_initial(document["initial_document"])
    if initial is None:
        return None, prefixed(found, "initial_document")
    snapshot, manifest = initial.document.initial_snapshot, initial.document.initial_manifest
    boot, raw_boot = model.bootstrap_snapshot, document["bootstrap_snapshot"]
    found = state_violations(boot.state, raw_boot["state"], STATE)
    found += receipt_violations(boot, snapshot, manifest)
    found += binding_violations(boot, snapshot, manifest, initial.initial_plan_hash)
    boot_sha256 = digest(raw_boot)
    if model.bootstrap_snapshot_sha256 != boot_sha256:
        found.append(
            Violation(
                "bootstrap-snapshot-sha256-mismatch",
                "/bootstrap_snapshot_sha256",
                f"observed {model.bootstrap_snapshot_sha256}, the snapshot digests to {boot_sha256}",
            )
        )
    state = boot.state
    key = markers.automation_key(state.host, state.repository, state.pr_number, state.run_id)
    rendered = render_prompt(key, raw_boot)
    if model.rendered_prompt != rendered:
        found.append(
            Violation(
                "rendered-prompt-mismatch",
                "/rendered_prompt",
                "the prompt is not the evaluator's rendering of the v1 template",
            )
        )
    if model.rendered_prompt_sha256 != text_digest(model.rendered_prompt):
        found.append(
            Violation(
                "rendered-prompt-sha256-mismatch",
                "/rendered_prompt_sha256",
                "digest does not match the prompt's UTF-8 bytes",
            )
        )
    if found:
        return None, found
    return PromptResult(key, rendered, text_digest(rendered), boot_sha256), []


def bootstrap_state_violations(action: str, reasons: list[str]) -> list[Violation]:
    """The machine's verdict on the bootstrap state must be exactly the paused-bootstrap inconsistency."""
    if (action, reasons) == ("state-inconsistency", BOOTSTRAP_REASONS):
        return []
    message = f"the recurring evaluator says {action} {reasons}; only the paused-bootstrap inconsistency is accepted"
    return [Violation("prompt-state-not-bootstrap", pointer(*STATE), message)]
