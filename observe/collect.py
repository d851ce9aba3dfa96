"""Assemble complete evaluator documents from observations.

The observers (``github``, ``git``, ``automations``, ``skill_digest``) fetch;
this module only arranges what they return into the exact-key documents the
evaluator reads. It is pure: no I/O, so the same observations always give the
same document, and tests can feed it recorded observations directly.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from evaluator import policy
from evaluator.canonical import text_digest
from evaluator.models.common import parse_timestamp
from evaluator.render import render_prompt


def utc_text(instant: datetime) -> str:
    """An instant as ISO-8601 UTC with ``Z`` (the form GitHub uses)."""
    return instant.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def request_checkpoint(requests: Sequence[Mapping[str, Any]], anomalies: Sequence[str]) -> dict[str, Any]:
    """The request checkpoint rebuilt from the canonical markers on GitHub.

    Requests come sorted by comment id and must be rounds 0, 1, ..., n-1 in
    that order: one request per round. Anything else (a repeated or skipped
    round) makes every request of the run a marker anomaly, which the
    evaluator reports as a state-inconsistency instead of guessing.
    """
    anomalies = sorted(set(anomalies), key=int)
    rounds = [request["round"] for request in requests]
    if rounds != list(range(len(rounds))):
        anomalies = sorted(set(anomalies) | {str(request["comment_id"]) for request in requests}, key=int)
    if not requests:
        return {
            "request_comment_id": None,
            "request_head_sha": None,
            "request_created_at": None,
            "request_deadline": None,
            "request_key": None,
            "fix_rounds": 0,
            "completed_request_keys": [],
            "marker_anomalies": anomalies,
        }
    keys = [f"{request['comment_id']}:{request['head_sha']}" for request in requests]
    current = requests[-1]
    return {
        "request_comment_id": current["comment_id"],
        "request_head_sha": current["head_sha"],
        "request_created_at": current["created_at"],
        "request_deadline": utc_text(parse_timestamp(current["created_at"]) + policy.REQUEST_TIMEOUT),
        "request_key": keys[-1],
        "fix_rounds": len(requests) - 1,
        "completed_request_keys": keys[:-1],
        "marker_anomalies": anomalies,
    }


def thread_classes(threads: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Unresolved Codex threads split into not-yet-addressed and addressed; others counted."""
    open_threads = [thread for thread in threads if not thread["is_resolved"]]
    return {
        "actionable_codex_threads": [t["thread"] for t in open_threads if t["root_is_codex"] and t["addressed_round"] is None],
        "eligible_codex_threads": [t["thread"] for t in open_threads if t["root_is_codex"] and t["addressed_round"] is not None],
        "non_codex_rooted_threads": sum(1 for t in open_threads if not t["root_is_codex"]),
    }


def _observed(github: Mapping[str, Any], observed_at: datetime) -> dict[str, Any]:
    pull = github["pull_request"]
    return {
        "observed_at": utc_text(observed_at),
        "current_authenticated_user_id": github["authenticated_user_id"],
        "pr_repository": pull["repository"],
        "pr_state": pull["state"],
        "pr_is_draft": pull["is_draft"],
        "pr_same_repository": pull["same_repository"],
        "current_base_branch": pull["base_branch"],
        "current_head_branch": pull["head_branch"],
        "current_base_sha": github["base_tip_sha"],
        "current_head_sha": pull["head_sha"],
        "remote_head_sha": github["head_tip_sha"],
        **request_checkpoint(github["requests"], github["marker_anomalies"]),
        "claims": list(github["claims"]),
        "responses": list(github["responses"]),
        "plus_one_reactions": list(github["plus_one_reactions"]),
        "summary_rows": list(github["summary_rows"]),
        "unavailable_replies": list(github["unavailable_replies"]),
        **thread_classes(github["threads"]),
        "gates": dict(github["gates"]),
    }


_NO_PLAN = {
    "execution_boundary": None,
    "remediation_manifest": None,
    "remediation_plan_hash": None,
    "finalization_manifest": None,
    "finalization_plan_hash": None,
    "approved_plan_hash": None,
}


def wakeup_state(
    bootstrap_snapshot: Mapping[str, Any],
    github: Mapping[str, Any],
    automations: Sequence[Mapping[str, Any]],
    *,
    evaluator_sha256: str,
    current_remote_name: str | None,
    observed_at: datetime,
    wakeup_id: str,
) -> dict[str, Any]:
    """The recurring state of one wakeup: the checkpoint's identity, fresh observations."""
    checkpoint = bootstrap_snapshot["state"]
    key = policy.automation_key(checkpoint["host"], checkpoint["repository"], checkpoint["pr_number"], checkpoint["run_id"])
    identity = {name: checkpoint[name] for name in ("version", "policy_schema_version", "mode", "run_id", "host", "repository", "pr_number", "pr_url", "remote_name", "base_branch", "head_branch", "authenticated_user_id", "evaluator_sha256", "owned_automation_id", "base_sha")}
    state = {
        **identity,
        "expected_prompt_sha256": text_digest(render_prompt(key, dict(bootstrap_snapshot))),
        "wakeup_id": wakeup_id,
        "current_evaluator_sha256": evaluator_sha256,
        "current_remote_name": current_remote_name,
        **_observed(github, observed_at),
        "automations": sorted(automations, key=lambda record: record["id"]),
        **_NO_PLAN,
    }
    return _ordered(state)


def bootstrap_state(
    initial_document: Mapping[str, Any],
    github: Mapping[str, Any],
    automations: Sequence[Mapping[str, Any]],
    *,
    owned_automation_id: str,
    evaluator_sha256: str,
    current_remote_name: str | None,
    observed_at: datetime,
) -> dict[str, Any]:
    """The state inside a bootstrap snapshot: identity from the approved initial plan."""
    snapshot, manifest = initial_document["initial_snapshot"], initial_document["initial_manifest"]
    pull = github["pull_request"]
    state = {
        "version": policy.MANIFEST_VERSION,
        "policy_schema_version": snapshot["policy_schema_version"],
        "mode": manifest["mode"],
        "run_id": manifest["run_id"],
        "host": snapshot["host"],
        "repository": snapshot["repository"],
        "pr_number": pull["number"],
        "pr_url": f"https://{policy.HOST}/{snapshot['repository']}/pull/{pull['number']}",
        "remote_name": snapshot["remote_name"],
        "base_branch": snapshot["base_branch"],
        "head_branch": snapshot["head_branch"],
        "authenticated_user_id": snapshot["authenticated_user_id"],
        "evaluator_sha256": evaluator_sha256,
        "owned_automation_id": owned_automation_id,
        "base_sha": snapshot["base_sha"],
        "expected_prompt_sha256": None,
        "wakeup_id": None,
        "current_evaluator_sha256": evaluator_sha256,
        "current_remote_name": current_remote_name,
        **_observed(github, observed_at),
        "automations": sorted(automations, key=lambda record: record["id"]),
        **_NO_PLAN,
    }
    return _ordered(state)


def report_state(github: Mapping[str, Any], *, run_id: str, observed_at: datetime) -> dict[str, Any]:
    """A report-only state: GitHub alone; no checkout, remote or registry."""
    pull = github["pull_request"]
    state = {
        "version": policy.MANIFEST_VERSION,
        "policy_schema_version": policy.POLICY_SCHEMA_VERSION,
        "mode": "report-only",
        "run_id": run_id,
        "host": policy.HOST,
        "repository": pull["repository"],
        "pr_number": pull["number"],
        "pr_url": f"https://{policy.HOST}/{pull['repository']}/pull/{pull['number']}",
        "remote_name": None,
        "base_branch": pull["base_branch"],
        "head_branch": pull["head_branch"],
        "authenticated_user_id": github["authenticated_user_id"],
        "evaluator_sha256": None,
        "owned_automation_id": None,
        "base_sha": github["base_tip_sha"],
        "expected_prompt_sha256": None,
        "wakeup_id": None,
        "current_evaluator_sha256": None,
        "current_remote_name": None,
        **_observed(github, observed_at),
        "automations": [],
        **_NO_PLAN,
    }
    return _ordered(state)


def _ordered(state: dict[str, Any]) -> dict[str, Any]:
    """Keys in the model's declaration order, so documents read the same way every time."""
    from evaluator.models.recurring import RecurringState

    missing = set(RecurringState.model_fields) ^ set(state)
    if missing:
        raise AssertionError(f"collector and state model disagree on {sorted(missing)}")
    return {name: state[name] for name in RecurringState.model_fields}
