"""The bootstrap prompt document checked by ``--prompt`` (references/bootstrap.md)."""

from .common import Digest, RepoPath, Sha, Strict, Timestamp
from .initial import InitialDocument
from .recurring import RecurringState


class PostWriteReceipt(Strict):
    base_sha: Sha
    final_head_sha: Sha
    head_descends_from_initial: bool
    initial_head_sha: Sha
    paths: list[RepoPath]
    pr_head_sha: Sha
    pushed_diff_sha256: Digest
    remote_head_sha: Sha
    review_request_body: str
    review_request_body_sha256: Digest
    worktree_clean: bool


class BootstrapSnapshot(Strict):
    initial_plan_hash: Digest
    post_write_receipt: PostWriteReceipt
    pr_url: str
    request_deadline: Timestamp
    state: RecurringState


class PromptDocument(Strict):
    bootstrap_snapshot: BootstrapSnapshot
    bootstrap_snapshot_sha256: Digest
    initial_document: InitialDocument
    rendered_prompt: str
    rendered_prompt_sha256: Digest
