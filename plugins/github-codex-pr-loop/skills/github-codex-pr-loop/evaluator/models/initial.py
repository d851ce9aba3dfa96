"""The initial document: snapshot, manifest and plan hash (references/manifest-schema.md)."""

from typing import Literal

from .common import BranchName, Digest, PositiveInt, RemoteName, RepoPath, Repository, RunId, Sha, Strict
from .plan import Command, ExecutionBoundary, PathRecord


class InitialSnapshot(Strict):
    authenticated_user_id: PositiveInt
    base_branch: BranchName
    base_sha: Sha
    commands: list[Command]
    commit_required: bool
    create_branch_required: bool
    current_head_sha: Sha
    diff_sha256: Digest
    execution_boundary: ExecutionBoundary
    existing_pr_base_branch: BranchName | None
    existing_pr_head_branch: BranchName | None
    existing_pr_head_sha: Sha | None
    existing_pr_number: PositiveInt | None
    existing_pr_same_repository: bool | None
    head_branch: BranchName
    heartbeat_rrule: str
    host: str
    open_prs_sha256: Digest
    paths: list[RepoPath]
    path_records: list[PathRecord]
    policy_schema_version: int
    push_required: bool
    remote_name: RemoteName
    remote_refs_sha256: Digest
    repository: Repository
    worktree_status_sha256: Digest


class InitialManifest(Strict):
    automation_prompt_template: str
    automation_prompt_template_sha256: Digest
    kind: Literal["initial"]
    mode: str
    operations: list[str]
    pr_body_sha256: Digest
    pr_title_sha256: Digest
    review_request_body_template: str
    review_request_body_template_sha256: Digest
    run_id: RunId
    snapshot_sha256: Digest
    version: int


class InitialDocument(Strict):
    initial_manifest: InitialManifest
    initial_plan_hash: Digest
    initial_snapshot: InitialSnapshot
