"""The recurring state, the remediation and finalization manifests, and their parts.

The state is flat and complete: every field is present on every wakeup, and
``null`` is a value, never an omission. Field meanings, sources and their
report-only values are in references/recurring-state.md.
"""

from typing import Literal

from .. import policy
from .common import (
    BranchName,
    DecimalId,
    Digest,
    NodeId,
    NonNegativeInt,
    PositiveInt,
    RemoteName,
    RepoPath,
    Repository,
    RunId,
    Sha,
    Strict,
    Timestamp,
)
from .plan import Command, ExecutionBoundary, PathRecord

Gate = Literal["pass", "fail", "pending", "unknown"]


class Response(Strict):
    """One qualifying Codex response, normalized as references/recurring-state.md says."""

    body_sha256: Digest
    bot_id: PositiveInt
    bot_type: policy.TrustedBotType
    commit_sha: Sha | None
    content_version_at: Timestamp
    created_at: Timestamp
    id: DecimalId
    source: Literal["issue-comment", "review", "review-comment"]
    trigger_request_comment_id: PositiveInt | None
    zero_findings_signal: bool


class Thread(Strict):
    """One review thread snapshot (references/recurring-state.md#4-codex-signals)."""

    body_sha256: Digest
    content_version_at: Timestamp
    id: NodeId
    position_sha256: Digest
    root_comment_id: NodeId


class Gates(Strict):
    approvals: Gate
    branch_protection: Gate
    checks: Gate
    mergeability: Gate


class UnavailableReply(Strict):
    created_at: Timestamp
    id: DecimalId
    kind: policy.UnavailableKind


class UnrecognizedReply(Strict):
    """A trusted Codex reply that is no documented form; its excerpt is short and redacted (state rule)."""

    created_at: Timestamp
    excerpt: str
    id: DecimalId
    source: Literal["issue-comment", "review"]


class SummaryRow(Strict):
    comment_id: DecimalId
    content_version_at: Timestamp
    head_sha: Sha | None
    status: Literal["running", "completed", "failed"]


class Reaction(Strict):
    created_at: Timestamp
    id: DecimalId


class Claim(Strict):
    comment_id: PositiveInt
    created_at: Timestamp
    kind: policy.ClaimKind
    plan_hash: Digest
    request_key: str
    wakeup_id: RunId


class AutomationRecord(Strict):
    directory: str
    id: str
    name: str | None
    problem: str | None
    prompt_sha256: Digest | None
    readable: bool
    rrule: str | None
    status: str | None


class RemediationManifest(Strict):
    actionable_threads: list[Thread]
    base_branch: BranchName
    base_sha: Sha
    commands: list[Command]
    current_head_sha: Sha
    execution: ExecutionBoundary
    head_branch: BranchName
    kind: Literal["remediation"]
    operations: list[str]
    path_records: list[PathRecord]
    paths: list[RepoPath]
    policy_schema_version: int
    pr_number: PositiveInt
    remote_name: RemoteName
    repository: Repository
    request_key: str
    responses: list[Response]
    review_request_body_template: str
    review_request_body_template_sha256: Digest
    run_id: RunId
    version: int


class FinalizationManifest(Strict):
    base_branch: BranchName
    base_sha: Sha
    current_head_sha: Sha
    eligible_threads: list[Thread]
    gates: Gates
    head_branch: BranchName
    kind: Literal["finalization"]
    non_codex_rooted_threads: NonNegativeInt
    operations: list[str]
    policy_schema_version: int
    pr_is_draft: bool
    pr_number: PositiveInt
    remote_name: RemoteName
    repository: Repository
    request_key: str
    responses: list[Response]
    run_id: RunId
    version: int


class RecurringState(Strict):
    # Identity and checkpoint: fixed at bootstrap, carried by the automation prompt.
    version: int
    policy_schema_version: int
    mode: policy.Mode
    run_id: RunId
    host: str
    repository: Repository
    pr_number: PositiveInt
    pr_url: str
    remote_name: RemoteName | None
    base_branch: BranchName
    head_branch: BranchName
    authenticated_user_id: PositiveInt
    evaluator_sha256: Digest | None
    expected_prompt_sha256: Digest | None
    owned_automation_id: str | None
    wakeup_id: RunId | None
    # Fresh observations of this wakeup.
    observed_at: Timestamp
    current_authenticated_user_id: PositiveInt
    current_evaluator_sha256: Digest | None
    current_remote_name: RemoteName | None
    pr_repository: Repository
    pr_state: Literal["open", "closed", "merged"]
    pr_is_draft: bool
    pr_same_repository: bool
    current_base_branch: BranchName
    current_head_branch: BranchName
    current_base_sha: Sha
    current_head_sha: Sha
    remote_head_sha: Sha | None
    # The request checkpoint, rebuilt from the canonical markers on GitHub.
    base_sha: Sha
    request_comment_id: PositiveInt | None
    request_head_sha: Sha | None
    request_created_at: Timestamp | None
    request_deadline: Timestamp | None
    request_key: str | None
    fix_rounds: NonNegativeInt
    completed_request_keys: list[str]
    marker_anomalies: list[DecimalId]
    claims: list[Claim]
    # Codex signals.
    responses: list[Response]
    plus_one_reactions: list[Reaction]
    summary_rows: list[SummaryRow]
    unavailable_replies: list[UnavailableReply]
    unrecognized_replies: list[UnrecognizedReply]
    actionable_codex_threads: list[Thread]
    eligible_codex_threads: list[Thread]
    non_codex_rooted_threads: NonNegativeInt
    gates: Gates
    # The automation registry.
    automations: list[AutomationRecord]
    # Plans built from this very snapshot, and the user's approval.
    execution_boundary: ExecutionBoundary | None
    remediation_manifest: RemediationManifest | None
    remediation_plan_hash: Digest | None
    finalization_manifest: FinalizationManifest | None
    finalization_plan_hash: Digest | None
    approved_plan_hash: Digest | None
