"""Deterministic sample documents: the source of every bundled fixture.

Fixtures are files, so outside checks and people can run the CLI on them; this
module is how they were made, and tests/test_fixture_drift.py proves the files
still equal what it builds.
"""

from __future__ import annotations

import copy
from typing import Any

from evaluator import policy
from evaluator.canonical import digest, text_digest

RUN_ID = "3f2a9c1e5b7d4a6f8e0c2b4d6f8a0c1e"
USER_ID = 583231
REPOSITORY = "octo-org/hello-world"
PR_NUMBER = 42


def sha(label: str) -> str:
    """A stable 40-hex commit SHA named by a label."""
    return text_digest("commit:" + label)[:40]


def hexdigest(label: str) -> str:
    return text_digest("digest:" + label)


def git_boundary(**overrides: Any) -> dict[str, Any]:
    git = {
        "active_clean_filters": [],
        "attributes_snapshot_sha256": hexdigest("attributes"),
        "config_snapshot_sha256": hexdigest("config"),
        "credential_strategy": policy.CREDENTIAL_STRATEGY,
        "external_diff_disabled": True,
        "fsmonitor_disabled": True,
        "git_metadata_snapshot_sha256": hexdigest("git-metadata"),
        "hooks_disabled": True,
        "invocation_sha256": hexdigest("invocation"),
        "profile": policy.ISOLATED_PROFILE,
        "protect_hfs_enabled": True,
        "protect_ntfs_enabled": True,
        "protocol_restricted": True,
        "signing_disabled": True,
        "textconv_disabled": True,
        "transport_url_sha256": text_digest(f"https://github.com/{REPOSITORY}.git"),
    }
    git.update(overrides)
    return git


def execution_boundary() -> dict[str, Any]:
    return {
        "filesystem_read_scope_sha256": hexdigest("read-scope"),
        "filesystem_write_scope_sha256": hexdigest("write-scope"),
        "git": git_boundary(),
        "isolation": policy.ISOLATED,
        "risk_acceptance_sha256": None,
    }


def path_record(path: str) -> dict[str, Any]:
    return {
        "inside_worktree": True,
        "lstat_chain_sha256": hexdigest("lstat:" + path),
        "outside_git_metadata": True,
        "path": path,
        "resolved_target_sha256": hexdigest("target:" + path),
    }


def command(*argv: str) -> dict[str, Any]:
    return {"argv": list(argv), "definition_sha256": digest({"argv": list(argv), "definition": "sample"})}


DEFAULT_PATHS = ["src/app.py", "tests/test_app.py"]
DEFAULT_COMMANDS = [command("/usr/bin/python3", "-m", "pytest", "-q"), command("/usr/bin/git", "diff", "--check")]


def initial_snapshot(
    *,
    create_branch: bool = True,
    commands: bool = True,
    commit: bool = True,
    push: bool = True,
    reuse_pr: bool = False,
    paths: list[str] | None = None,
) -> dict[str, Any]:
    paths = list(DEFAULT_PATHS if paths is None else paths)
    head = sha("head")
    existing = {
        "existing_pr_base_branch": "main" if reuse_pr else None,
        "existing_pr_head_branch": "codex/fix-greeting" if reuse_pr else None,
        "existing_pr_head_sha": head if reuse_pr else None,
        "existing_pr_number": PR_NUMBER if reuse_pr else None,
        "existing_pr_same_repository": True if reuse_pr else None,
    }
    return {
        "authenticated_user_id": USER_ID,
        "base_branch": "main",
        "base_sha": sha("base"),
        "commands": copy.deepcopy(DEFAULT_COMMANDS) if commands else [],
        "commit_required": commit,
        "create_branch_required": create_branch,
        "current_head_sha": head,
        "diff_sha256": hexdigest("diff"),
        "execution_boundary": execution_boundary(),
        **existing,
        "head_branch": "codex/fix-greeting",
        "heartbeat_rrule": policy.HEARTBEAT_RRULE,
        "host": policy.HOST,
        "open_prs_sha256": hexdigest("open-prs"),
        "paths": paths,
        "path_records": [path_record(p) for p in paths],
        "policy_schema_version": policy.POLICY_SCHEMA_VERSION,
        "push_required": push,
        "remote_name": "origin",
        "remote_refs_sha256": hexdigest("remote-refs"),
        "repository": REPOSITORY,
        "worktree_status_sha256": hexdigest("worktree-status"),
    }


def initial_manifest(snapshot: dict[str, Any], *, mode: str = "approval-gated", title: str = "Fix greeting", body: str = "Fixes the greeting.") -> dict[str, Any]:
    from evaluator.models.initial import InitialSnapshot
    from evaluator.rules.initial import expected_operations

    template = policy.default_review_template(RUN_ID, 0)
    return {
        "automation_prompt_template": policy.AUTOMATION_PROMPT_TEMPLATE_V1,
        "automation_prompt_template_sha256": text_digest(policy.AUTOMATION_PROMPT_TEMPLATE_V1),
        "kind": "initial",
        "mode": mode,
        "operations": expected_operations(InitialSnapshot.model_validate(snapshot)),
        "pr_body_sha256": text_digest(body),
        "pr_title_sha256": text_digest(title),
        "review_request_body_template": template,
        "review_request_body_template_sha256": text_digest(template),
        "run_id": RUN_ID,
        "snapshot_sha256": digest(snapshot),
        "version": policy.MANIFEST_VERSION,
    }


def seal_initial(snapshot: dict[str, Any], manifest: dict[str, Any], *, rehash_snapshot: bool = True) -> dict[str, Any]:
    """Assemble the outer document with consistent digests (unless told otherwise)."""
    if rehash_snapshot:
        manifest = {**manifest, "snapshot_sha256": digest(snapshot)}
    return {"initial_manifest": manifest, "initial_plan_hash": digest(manifest), "initial_snapshot": snapshot}


def initial_document(mode: str = "approval-gated", **options: Any) -> dict[str, Any]:
    snapshot = initial_snapshot(**options)
    return seal_initial(snapshot, initial_manifest(snapshot, mode=mode))


def risk_acceptance_record(snapshot: dict[str, Any]) -> dict[str, Any]:
    boundary = snapshot["execution_boundary"]
    return {
        "accepted_at": "2026-11-29T09:15:00+01:00",
        "accepted_by_user_id": snapshot["authenticated_user_id"],
        "commands": copy.deepcopy(snapshot["commands"]),
        "execution_boundary": {key: copy.deepcopy(value) for key, value in boundary.items() if key != "risk_acceptance_sha256"},
        "kind": policy.EXPLICIT_RISK,
        "run_id": RUN_ID,
        "unavailable_guarantees": ["hooks-disabled", "network-isolation", "no-active-clean-filters"],
        "version": 1,
    }


def explicit_risk_initial() -> tuple[dict[str, Any], dict[str, Any]]:
    """An initial document in the explicit-risk form, and the record it binds."""
    snapshot = initial_snapshot()
    boundary = snapshot["execution_boundary"]
    boundary["isolation"] = policy.EXPLICIT_RISK
    boundary["git"].update(profile=policy.EXPLICIT_RISK_PROFILE, hooks_disabled=False, active_clean_filters=["lfs"])
    record = risk_acceptance_record(snapshot)
    boundary["risk_acceptance_sha256"] = digest(record)
    return seal_initial(snapshot, initial_manifest(snapshot)), record
