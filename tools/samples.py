"""Deterministic sample documents: the source of every bundled fixture.

Fixtures are files, so outside checks and people can run the CLI on them; this
module is how they were made, and tests/test_fixture_drift.py proves the files
still equal what it builds.
"""

from __future__ import annotations

import copy
from typing import Any

from evaluator import markers, policy
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


def initial_manifest(
    snapshot: dict[str, Any],
    *,
    mode: str = "approval-gated",
    title: str = "Fix greeting",
    body: str = "Fixes the greeting.",
) -> dict[str, Any]:
    from evaluator.models.common import validate
    from evaluator.models.initial import InitialSnapshot
    from evaluator.rules.initial import expected_operations

    template = markers.default_review_template(RUN_ID, 0)
    return {
        "automation_prompt_template": policy.AUTOMATION_PROMPT_TEMPLATE_V1,
        "automation_prompt_template_sha256": text_digest(policy.AUTOMATION_PROMPT_TEMPLATE_V1),
        "kind": "initial",
        "mode": mode,
        "operations": expected_operations(validate(InitialSnapshot, snapshot)[0]),
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
        "execution_boundary": {
            key: copy.deepcopy(value) for key, value in boundary.items() if key != "risk_acceptance_sha256"
        },
        "kind": policy.EXPLICIT_RISK,
        "run_id": RUN_ID,
        "unavailable_guarantees": [
            "checkout-only-filesystem",
            "hooks-disabled",
            "minimal-environment",
            "network-isolation",
            "no-active-clean-filters",
        ],
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


# --- recurring states --------------------------------------------------------

BOT_ID = policy.TRUSTED_CODEX_BOT_ID
AUTOMATION_ID = "github-codex-pr-loop-42"
WAKEUP_ID = "9b8a7c6d5e4f30211203948576abcdef"
OTHER_WAKEUP_ID = "00112233445566778899aabbccddeeff"
REQUEST_ID = 1900000001
EVALUATOR_SHA256 = hexdigest("evaluator")
PROMPT_SHA256 = hexdigest("rendered-prompt")


def automation_record(**overrides: Any) -> dict[str, Any]:
    record = {
        "directory": AUTOMATION_ID,
        "id": AUTOMATION_ID,
        "name": markers.automation_key(policy.HOST, REPOSITORY, PR_NUMBER, RUN_ID),
        "problem": None,
        "prompt_sha256": PROMPT_SHA256,
        "readable": True,
        "rrule": policy.HEARTBEAT_RRULE,
        "status": "ACTIVE",
    }
    record.update(overrides)
    return record


def thread(label: str, body: str | None = None) -> dict[str, Any]:
    return {
        "body_sha256": text_digest(body or f"P1 finding {label}"),
        "content_version_at": "2026-11-29T10:04:00Z",
        "id": f"PRRT_kwDO{label}",
        "position_sha256": digest(
            {"diff_side": "RIGHT", "line": 10, "original_line": 10, "path": f"src/{label}.py", "start_line": None}
        ),
        "root_comment_id": f"PRRC_kwDO{label}",
    }


def response(
    source: str,
    identifier: int,
    *,
    clean: bool,
    created_at: str = "2026-11-29T10:05:00Z",
    commit: str | None = None,
    trigger: int | None = REQUEST_ID,
) -> dict[str, Any]:
    return {
        "body_sha256": text_digest(f"{source} {identifier}"),
        "bot_id": BOT_ID,
        "bot_type": "Bot",
        "commit_sha": commit or sha("head-1"),
        "content_version_at": created_at,
        "created_at": created_at,
        "id": str(identifier),
        "source": source,
        "trigger_request_comment_id": trigger,
        "zero_findings_signal": clean,
    }


def gates(**overrides: str) -> dict[str, str]:
    return {"approvals": "pass", "branch_protection": "pass", "checks": "pass", "mergeability": "pass", **overrides}


def recurring_state(mode: str = "autonomous", **overrides: Any) -> dict[str, Any]:
    """An active loop at round 0, waiting for Codex: the base every scenario edits."""
    head = sha("head-1")
    state = {
        "version": 1,
        "policy_schema_version": 1,
        "mode": mode,
        "run_id": RUN_ID,
        "host": policy.HOST,
        "repository": REPOSITORY,
        "pr_number": PR_NUMBER,
        "pr_url": f"https://github.com/{REPOSITORY}/pull/{PR_NUMBER}",
        "remote_name": "origin",
        "base_branch": "main",
        "head_branch": "codex/fix-greeting",
        "authenticated_user_id": USER_ID,
        "evaluator_sha256": EVALUATOR_SHA256,
        "expected_prompt_sha256": PROMPT_SHA256,
        "owned_automation_id": AUTOMATION_ID,
        "wakeup_id": WAKEUP_ID,
        "observed_at": "2026-11-29T10:02:00Z",
        "current_authenticated_user_id": USER_ID,
        "current_evaluator_sha256": EVALUATOR_SHA256,
        "current_remote_name": "origin",
        "pr_repository": REPOSITORY,
        "pr_state": "open",
        "pr_is_draft": True,
        "pr_same_repository": True,
        "current_base_branch": "main",
        "current_head_branch": "codex/fix-greeting",
        "current_base_sha": sha("base"),
        "current_head_sha": head,
        "remote_head_sha": head,
        "base_sha": sha("base"),
        "request_comment_id": REQUEST_ID,
        "request_head_sha": head,
        "request_created_at": "2026-11-29T10:00:00Z",
        "request_deadline": "2026-11-29T10:30:00Z",
        "request_key": f"{REQUEST_ID}:{head}",
        "fix_rounds": 0,
        "completed_request_keys": [],
        "marker_anomalies": [],
        "claims": [],
        "responses": [],
        "plus_one_reactions": [],
        "summary_rows": [],
        "unavailable_replies": [],
        "unrecognized_replies": [],
        "actionable_codex_threads": [],
        "eligible_codex_threads": [],
        "non_codex_rooted_threads": 0,
        "gates": gates(),
        "automations": [automation_record()],
        "execution_boundary": None,
        "remediation_manifest": None,
        "remediation_plan_hash": None,
        "finalization_manifest": None,
        "finalization_plan_hash": None,
        "approved_plan_hash": None,
    }
    state.update(copy.deepcopy(overrides))
    return state


def with_findings(state: dict[str, Any]) -> dict[str, Any]:
    state = copy.deepcopy(state)
    state["responses"] = [
        response(
            "review",
            2100000001,
            clean=False,
            commit=state["request_head_sha"],
            trigger=state["request_comment_id"],
            created_at=_after(state),
        )
    ]
    state["actionable_codex_threads"] = [thread("aaa1"), thread("bbb2")]
    return state


def with_clean(state: dict[str, Any]) -> dict[str, Any]:
    state = copy.deepcopy(state)
    state["responses"] = [
        response(
            "issue-comment",
            2000000003,
            clean=True,
            commit=state["request_head_sha"],
            trigger=state["request_comment_id"],
            created_at=_after(state),
        )
    ]
    return state


def _after(state: dict[str, Any]) -> str:
    from evaluator.formats import parse_timestamp

    instant = parse_timestamp(state["request_created_at"]) + policy.REQUEST_TIMEOUT / 6
    return instant.strftime("%Y-%m-%dT%H:%M:%SZ")


def remediation_manifest(state: dict[str, Any], *, commands: bool = True) -> dict[str, Any]:
    round_number = state["fix_rounds"] + 1
    template = markers.default_review_template(RUN_ID, round_number).replace("@codex review", "@codex review this fix")
    return {
        "actionable_threads": copy.deepcopy(state["actionable_codex_threads"]),
        "base_branch": state["base_branch"],
        "base_sha": state["base_sha"],
        "commands": copy.deepcopy(DEFAULT_COMMANDS) if commands else [],
        "current_head_sha": state["request_head_sha"],
        "execution": execution_boundary(),
        "head_branch": state["head_branch"],
        "kind": "remediation",
        "operations": ["edit-files"]
        + (["run-validation"] if commands else [])
        + ["commit", "push", "reply-to-codex-threads", "request-codex-review", "update-automation"],
        "path_records": [path_record(p) for p in DEFAULT_PATHS],
        "paths": list(DEFAULT_PATHS),
        "policy_schema_version": 1,
        "pr_number": state["pr_number"],
        "remote_name": state["remote_name"],
        "repository": state["repository"],
        "request_key": state["request_key"],
        "responses": copy.deepcopy(state["responses"]),
        "review_request_body_template": template,
        "review_request_body_template_sha256": text_digest(template),
        "run_id": RUN_ID,
        "version": 1,
    }


def finalization_manifest(state: dict[str, Any]) -> dict[str, Any]:
    operations = (
        (["mark-draft-ready"] if state["pr_is_draft"] else [])
        + (["resolve-codex-threads"] if state["eligible_codex_threads"] else [])
        + ["delete-owned-automation"]
    )
    return {
        "base_branch": state["base_branch"],
        "base_sha": state["base_sha"],
        "current_head_sha": state["request_head_sha"],
        "eligible_threads": copy.deepcopy(state["eligible_codex_threads"]),
        "gates": copy.deepcopy(state["gates"]),
        "head_branch": state["head_branch"],
        "kind": "finalization",
        "non_codex_rooted_threads": state["non_codex_rooted_threads"],
        "operations": operations,
        "policy_schema_version": 1,
        "pr_is_draft": state["pr_is_draft"],
        "pr_number": state["pr_number"],
        "remote_name": state["remote_name"],
        "repository": state["repository"],
        "request_key": state["request_key"],
        "responses": copy.deepcopy(state["responses"]),
        "run_id": RUN_ID,
        "version": 1,
    }


def with_plan(state: dict[str, Any], manifest: dict[str, Any]) -> dict[str, Any]:
    state = copy.deepcopy(state)
    kind = manifest["kind"]
    state[f"{kind}_manifest"] = manifest
    state[f"{kind}_plan_hash"] = digest(manifest)
    if kind == "remediation":
        state["execution_boundary"] = copy.deepcopy(manifest["execution"])
    return state


def claim(
    state: dict[str, Any],
    kind: str,
    plan_hash: str,
    *,
    comment_id: int = 2200000001,
    wakeup_id: str = WAKEUP_ID,
    created_at: str | None = None,
) -> dict[str, Any]:
    return {
        "comment_id": comment_id,
        "created_at": created_at or state["observed_at"],
        "kind": kind,
        "plan_hash": plan_hash,
        "request_key": state["request_key"],
        "wakeup_id": wakeup_id,
    }


# --- bootstrap prompt documents --------------------------------------------------


def bootstrap_state_for(initial: dict[str, Any], final_head: str) -> dict[str, Any]:
    snapshot, manifest = initial["initial_snapshot"], initial["initial_manifest"]
    pr_number = snapshot["existing_pr_number"] or PR_NUMBER
    return recurring_state(
        manifest["mode"],
        pr_number=pr_number,
        pr_url=f"https://github.com/{snapshot['repository']}/pull/{pr_number}",
        current_head_sha=final_head,
        remote_head_sha=final_head,
        request_head_sha=final_head,
        request_key=f"{REQUEST_ID}:{final_head}",
        expected_prompt_sha256=None,
        wakeup_id=None,
        automations=[
            automation_record(
                status="PAUSED",
                prompt_sha256=hexdigest("inert-stub"),
                name=markers.automation_key(policy.HOST, snapshot["repository"], pr_number, RUN_ID),
            )
        ],
    )


def prompt_document(initial: dict[str, Any] | None = None) -> dict[str, Any]:
    """A prompt document whose every digest and binding holds."""
    from evaluator.render import render_review_body

    initial = copy.deepcopy(initial or initial_document())
    snapshot, manifest = initial["initial_snapshot"], initial["initial_manifest"]
    final_head = sha("head-1") if snapshot["commit_required"] else snapshot["current_head_sha"]
    body = render_review_body(manifest["review_request_body_template"], final_head)
    state = bootstrap_state_for(initial, final_head)
    boot = {
        "initial_plan_hash": initial["initial_plan_hash"],
        "post_write_receipt": {
            "base_sha": snapshot["base_sha"],
            "final_head_sha": final_head,
            "head_descends_from_initial": True,
            "initial_head_sha": snapshot["current_head_sha"],
            "paths": list(snapshot["paths"]),
            "pr_head_sha": final_head,
            "pushed_diff_sha256": snapshot["diff_sha256"],
            "remote_head_sha": final_head,
            "review_request_body": body,
            "review_request_body_sha256": text_digest(body),
            "worktree_clean": True,
        },
        "pr_url": state["pr_url"],
        "request_deadline": state["request_deadline"],
        "state": state,
    }
    return seal_prompt(initial, boot)


def seal_prompt(initial: dict[str, Any], boot: dict[str, Any]) -> dict[str, Any]:
    from evaluator.render import render_prompt

    state = boot["state"]
    key = markers.automation_key(state["host"], state["repository"], state["pr_number"], state["run_id"])
    rendered = render_prompt(key, boot)
    return {
        "bootstrap_snapshot": boot,
        "bootstrap_snapshot_sha256": digest(boot),
        "initial_document": initial,
        "rendered_prompt": rendered,
        "rendered_prompt_sha256": text_digest(rendered),
    }
