"""The initial document: snapshot (observed), manifest (built here), plan hash."""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping
from typing import Any

from evaluator import policy
from evaluator.canonical import digest, text_digest
from evaluator.models.initial import InitialManifest

_RUN_ID = re.compile(r"[0-9a-f]{32}")


def new_run_id() -> str:
    """32 lowercase hex from the operating system's CSPRNG: generated once per loop, at init."""
    return secrets.token_hex(16)


def initial_operations(snapshot: Mapping[str, Any]) -> list[str]:
    """The operation list the snapshot calls for, in the fixed order (manifest-schema.md)."""
    operations = ["fetch-base"]
    if snapshot["create_branch_required"]:
        operations.append("create-branch")
    if snapshot["commands"]:
        operations.append("run-validation")
    if snapshot["commit_required"]:
        operations += ["stage-files", "commit"]
    if snapshot["push_required"]:
        operations.append("push")
    operations.append("create-pr" if snapshot["existing_pr_number"] is None else "reuse-pr")
    return operations + ["request-codex-review", "bootstrap-automation"]


def initial_manifest(
    operations: list[str],
    snapshot_sha256: str,
    *,
    run_id: str,
    mode: str,
    pr_title: str,
    pr_body: str,
    review_template: str,
) -> InitialManifest:
    if not _RUN_ID.fullmatch(run_id):
        raise ValueError("run_id must be 32 lowercase hex digits")
    template = policy.AUTOMATION_PROMPT_TEMPLATE_V1
    return InitialManifest.model_validate(
        {
            "automation_prompt_template": template,
            "automation_prompt_template_sha256": text_digest(template),
            "kind": "initial",
            "mode": mode,
            "operations": operations,
            "pr_body_sha256": text_digest(pr_body),
            "pr_title_sha256": text_digest(pr_title),
            "review_request_body_template": review_template,
            "review_request_body_template_sha256": text_digest(review_template),
            "run_id": run_id,
            "snapshot_sha256": snapshot_sha256,
            "version": policy.MANIFEST_VERSION,
        }
    )


def initial_document(
    snapshot: Mapping[str, Any], *, run_id: str, mode: str, pr_title: str, pr_body: str, review_template: str
) -> dict[str, Any]:
    """The outer document: the plan hash is the digest of the manifest, never of the snapshot.

    The snapshot is the collector's, kept exactly as observed (the evaluator judges it in the document);
    the manifest is built here, so it is the evaluator's model of it.
    """
    manifest = initial_manifest(
        initial_operations(snapshot),
        digest(dict(snapshot)),
        run_id=run_id,
        mode=mode,
        pr_title=pr_title,
        pr_body=pr_body,
        review_template=review_template,
    ).as_dict()
    return {"initial_manifest": manifest, "initial_plan_hash": digest(manifest), "initial_snapshot": dict(snapshot)}
