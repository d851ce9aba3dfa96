"""The remediation and finalization manifests: their own rules, and their binding to the state.

``*_violations`` find a manifest that is malformed in itself (the state is then
rejected). ``*_drift`` compare a well-formed manifest with the snapshot it
claims to be built from; any difference means the plan is stale, which the
action machine reports as a ``state-inconsistency`` that permits no write.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from ..canonical import text_digest
from ..errors import Violation, pointer
from ..formats import parse_request_key
from ..models.recurring import FinalizationManifest, RecurringState, RemediationManifest
from ..render import review_template_violations
from ..vocabulary import OperationName
from .plan import boundary_violations, command_violations, fixed_value_violations, path_violations
from .recurring import response_order

REMEDIATION = ("remediation_manifest",)
FINALIZATION = ("finalization_manifest",)


def expected_remediation_operations(manifest: RemediationManifest) -> list[OperationName]:
    operations: list[OperationName] = ["edit-files"]
    if manifest.commands:
        operations.append("run-validation")
    return operations + ["commit", "push", "reply-to-codex-threads", "request-codex-review", "update-automation"]


def expected_finalization_operations(manifest: FinalizationManifest) -> list[OperationName]:
    operations: list[OperationName] = ["mark-draft-ready"] if manifest.pr_is_draft else []
    if manifest.eligible_threads:
        operations.append("resolve-codex-threads")
    return operations + ["delete-owned-automation"]


def _common_violations(manifest: Any, base: tuple[object, ...]) -> list[Violation]:
    at = partial(pointer, *base)
    found = fixed_value_violations(manifest, at)
    key = parse_request_key(manifest.request_key)
    if key is None:
        found.append(
            Violation(
                "request-key-invalid", at("request_key"), f"{manifest.request_key!r} is not <comment-id>:<40-hex-sha>"
            )
        )
    elif key[1] != manifest.current_head_sha:
        found.append(
            Violation(
                "request-key-head-mismatch",
                at("request_key"),
                "the request key must name the requested head, current_head_sha",
            )
        )
    responses = [response_order(r) for r in manifest.responses]
    if responses != sorted(responses) or len(set(responses)) != len(responses):
        found.append(
            Violation(
                "responses-not-sorted",
                at("responses"),
                "responses must be sorted by source, then integer id, and unique",
            )
        )
    threads = getattr(manifest, "actionable_threads", None) or getattr(manifest, "eligible_threads", None) or []
    field = "actionable_threads" if isinstance(manifest, RemediationManifest) else "eligible_threads"
    ids = [thread.id for thread in threads]
    if ids != sorted(ids) or len(set(ids)) != len(ids):
        found.append(Violation("threads-not-sorted", at(field), "threads must be sorted by id and unique"))
    return found


def remediation_violations(
    manifest: RemediationManifest, fix_rounds: int, base: tuple[object, ...] = REMEDIATION
) -> list[Violation]:
    at = partial(pointer, *base)
    found = _common_violations(manifest, base)
    expected = expected_remediation_operations(manifest)
    if manifest.operations != expected:
        found.append(
            Violation(
                "operations-mismatch", at("operations"), f"observed {manifest.operations}, the plan requires {expected}"
            )
        )
    if not manifest.paths:
        found.append(Violation("paths-empty", at("paths"), "a remediation edits at least one path"))
    found += path_violations(manifest.paths, manifest.path_records, base)
    found += command_violations(manifest.commands, base)
    found += boundary_violations(manifest.execution, base + ("execution",))
    found += review_template_violations(
        manifest.review_request_body_template, manifest.run_id, fix_rounds + 1, at("review_request_body_template")
    )
    if text_digest(manifest.review_request_body_template) != manifest.review_request_body_template_sha256:
        found.append(
            Violation(
                "review-template-sha256-mismatch",
                at("review_request_body_template_sha256"),
                "digest does not match the template's UTF-8 bytes",
            )
        )
    return found


def finalization_violations(manifest: FinalizationManifest, base: tuple[object, ...] = FINALIZATION) -> list[Violation]:
    found = _common_violations(manifest, base)
    expected = expected_finalization_operations(manifest)
    if manifest.operations != expected:
        found.append(
            Violation(
                "operations-mismatch",
                pointer(*base, "operations"),
                f"observed {manifest.operations}, the plan requires {expected}",
            )
        )
    return found


def _mismatch(base: tuple[object, ...], field: str, observed: Any, expected: Any, source: str) -> Violation:
    return Violation(
        "plan-snapshot-mismatch",
        pointer(*base, field),
        f"the plan has {observed!r:.120}, {source} has {expected!r:.120}",
    )


def _bindings(manifest: Any, state: RecurringState) -> list[tuple[str, Any, str]]:
    """(manifest field, the state's value, which observation) pairs every plan must match."""
    return [
        ("run_id", state.run_id, "the run"),
        ("repository", state.repository, "the checkpoint"),
        ("repository", state.pr_repository, "the fresh PR"),
        ("pr_number", state.pr_number, "the checkpoint"),
        ("remote_name", state.remote_name, "the checkpoint"),
        ("remote_name", state.current_remote_name, "the fresh checkout"),
        ("base_branch", state.base_branch, "the request checkpoint"),
        ("base_branch", state.current_base_branch, "the fresh PR"),
        ("head_branch", state.head_branch, "the request checkpoint"),
        ("head_branch", state.current_head_branch, "the fresh PR"),
        ("base_sha", state.base_sha, "the request checkpoint"),
        ("base_sha", state.current_base_sha, "the fresh base tip"),
        ("current_head_sha", state.request_head_sha, "the request checkpoint"),
        ("current_head_sha", state.current_head_sha, "the fresh PR head"),
        ("current_head_sha", state.remote_head_sha, "the fresh remote branch"),
        ("request_key", state.request_key, "the request checkpoint"),
    ]


# The bindings to the checkout's remote, the base branch and its tip, and the
# PR's head branch and tip. A finalization plan that differs from any of them
# is invalidated by drift that forbids every GitHub write and the automation's
# cleanup, even the deletion a closed or merged PR's stop permits without a plan.
BRANCH_BINDINGS = frozenset({"remote_name", "base_branch", "base_sha", "head_branch", "current_head_sha"})


def finalization_branch_drift(manifest: FinalizationManifest, state: RecurringState) -> bool:
    """The plan differs from the request checkpoint or the fresh observation in one of ``BRANCH_BINDINGS``."""
    return any(
        getattr(manifest, field) != expected
        for field, expected, _ in _bindings(manifest, state)
        if field in BRANCH_BINDINGS
    )


def _drift(
    manifest: Any,
    state: RecurringState,
    raw_state: dict[str, Any],
    base: tuple[object, ...],
    extra: list[tuple[str, Any, str]],
) -> list[Violation]:
    found = []
    for field, expected, source in _bindings(manifest, state) + extra:
        observed = getattr(manifest, field)
        if observed != expected:
            found.append(_mismatch(base, field, observed, expected, source))
    raw_manifest = raw_state[str(base[0])]  # the manifest's own key: REMEDIATION or FINALIZATION
    if raw_manifest["responses"] != raw_state["responses"]:
        found.append(
            _mismatch(
                base,
                "responses",
                len(raw_manifest["responses"]),
                len(raw_state["responses"]),
                "the snapshot's qualifying responses",
            )
        )
    return found


def remediation_drift(
    manifest: RemediationManifest, state: RecurringState, raw_state: dict[str, Any]
) -> list[Violation]:
    found = _drift(manifest, state, raw_state, REMEDIATION, [])
    raw_manifest = raw_state["remediation_manifest"]
    if raw_manifest["actionable_threads"] != raw_state["actionable_codex_threads"]:
        found.append(
            _mismatch(
                REMEDIATION,
                "actionable_threads",
                len(raw_manifest["actionable_threads"]),
                len(raw_state["actionable_codex_threads"]),
                "the snapshot's actionable Codex threads",
            )
        )
    if raw_manifest["execution"] != raw_state["execution_boundary"]:
        found.append(
            _mismatch(REMEDIATION, "execution", "its boundary", "another", "the snapshot's execution boundary")
        )
    return found


def finalization_drift(
    manifest: FinalizationManifest, state: RecurringState, raw_state: dict[str, Any]
) -> list[Violation]:
    extra = [
        ("pr_is_draft", state.pr_is_draft, "the fresh PR"),
        ("non_codex_rooted_threads", state.non_codex_rooted_threads, "the snapshot"),
        ("gates", state.gates, "the fresh gates"),
    ]
    found = _drift(manifest, state, raw_state, FINALIZATION, extra)
    raw_manifest = raw_state["finalization_manifest"]
    if raw_manifest["eligible_threads"] != raw_state["eligible_codex_threads"]:
        found.append(
            _mismatch(
                FINALIZATION,
                "eligible_threads",
                len(raw_manifest["eligible_threads"]),
                len(raw_state["eligible_codex_threads"]),
                "the snapshot's eligible Codex threads",
            )
        )
    return found
