"""The approval summary: everything a person needs to decide on one plan, and how to approve it.

Printed with every plan the hands build, as the ``approval_summary`` field of
the JSON result and as a block of text with ``--format text``. It is drawn
from the very document that was hashed (plus the PR title and body whose
digests it carries), so what the person reads is what the hash binds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evaluator import markers, policy


def how_to_approve(mode: str, plan_hash: str) -> str:
    if mode == "autonomous":
        return "autonomous mode: this plan needs no approval; it runs once the evaluator accepts it."
    return (
        f"To approve, reply with exactly this hash: {plan_hash} "
        "(all 64 characters, as printed). A shortened, re-cased or older hash, or any other reply, is no approval."
    )


def _execution(boundary: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "isolation": boundary["isolation"],
        "git_profile": boundary["git"]["profile"],
        "risk_acceptance_sha256": boundary["risk_acceptance_sha256"],
    }


def initial_summary(
    document: Mapping[str, Any], pr_title: str, pr_body: str, *, draft_pr: bool = True
) -> dict[str, Any]:
    """``draft_pr`` false: the repository has no drafts, so the new PR is ready for review from the start."""
    snapshot, manifest = document["initial_snapshot"], document["initial_manifest"]
    reuse = snapshot["existing_pr_number"]
    created = (
        "create a new pull request"
        if draft_pr
        else "create a new pull request, ready for review (this repository cannot have drafts, so finalization "
        "has none to mark ready)"
    )
    return {
        "plan_kind": "initial",
        "plan_hash": document["initial_plan_hash"],
        "mode": manifest["mode"],
        "operations": list(manifest["operations"]),
        "repository": snapshot["repository"],
        "remote_name": snapshot["remote_name"],
        "base_branch": snapshot["base_branch"],
        "base_sha": snapshot["base_sha"],
        "head_branch": snapshot["head_branch"],
        "head_sha": snapshot["current_head_sha"],
        "pull_request": f"reuse #{reuse} (title and body unchanged)" if reuse is not None else created,
        "pr_title": pr_title,
        "pr_body": pr_body,
        "paths": list(snapshot["paths"]),
        "commands": [list(c["argv"]) for c in snapshot["commands"]],
        "review_request_text": manifest["review_request_body_template"],
        "review_request_note": f"{policy.FINAL_HEAD_PLACEHOLDER} is replaced by the pushed head commit",
        "threads": [],
        "gates": None,
        "execution": _execution(snapshot["execution_boundary"]),
        "automation": (
            f"a heartbeat in this thread, {policy.HEARTBEAT_RRULE}, created PAUSED and activated only after the "
            "evaluator renders its prompt"
        ),
        "how_to_approve": how_to_approve(manifest["mode"], document["initial_plan_hash"]),
    }


def remediation_summary(
    state: Mapping[str, Any],
    manifest: Mapping[str, Any],
    plan_hash: str,
    findings: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """``findings``: what Codex wrote on each thread; shown only where its digest is the one the plan binds."""
    round_number = state["fix_rounds"] + 1
    said = {(finding["thread_id"], finding["body_sha256"], finding["position_sha256"]): finding for finding in findings}
    return {
        "plan_kind": "remediation",
        "plan_hash": plan_hash,
        "mode": state["mode"],
        "operations": list(manifest["operations"]),
        "repository": manifest["repository"],
        "pull_request": state["pr_url"],
        "remote_name": manifest["remote_name"],
        "base_branch": manifest["base_branch"],
        "base_sha": manifest["base_sha"],
        "head_branch": manifest["head_branch"],
        "head_sha": manifest["current_head_sha"],
        "request_key": manifest["request_key"],
        "round": round_number,
        "paths": list(manifest["paths"]),
        "commands": [list(c["argv"]) for c in manifest["commands"]],
        "review_request_text": manifest["review_request_body_template"],
        "review_request_note": f"{policy.FINAL_HEAD_PLACEHOLDER} is replaced by the pushed fix commit",
        "threads": [
            {
                "id": t["id"],
                "do": "reply",
                "reply_ends_with": markers.reply_marker(state["run_id"], round_number),
                **_finding(said.get((t["id"], t["body_sha256"], t["position_sha256"]))),
            }
            for t in manifest["actionable_threads"]
        ],
        "gates": None,
        "execution": _execution(manifest["execution"]),
        "how_to_approve": how_to_approve(state["mode"], plan_hash),
    }


def _finding(finding: Mapping[str, Any] | None) -> dict[str, Any]:
    """Where and what Codex found: its text's SHA-256 and its position's are the plan's own."""
    if finding is None:
        return {"finding": "(text not observed in this wakeup)"}
    lines = finding["line"] if finding["start_line"] is None else f"{finding['start_line']}-{finding['line']}"
    text = " ".join(finding["text"].split())
    return {
        "where": f"{finding['path']}:{lines}",
        "priority": finding["priority"],
        "finding": text[:FINDING_SHOWN] + ("..." if finding["truncated"] or len(text) > FINDING_SHOWN else ""),
    }


FINDING_SHOWN = 300  # characters of a finding in the summary; `findings` in the output holds up to 2,000


def finalization_summary(
    state: Mapping[str, Any],
    manifest: Mapping[str, Any],
    plan_hash: str,
    phase: str,
    gate_unknowns: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """``phase`` is "one" (the evaluator said codex-clean) or "two" (finalization-phase-two).

    ``gate_unknowns`` is informational: the plan binds the gates, not why one is unknown.
    """
    operations = list(manifest["operations"])
    return {
        "plan_kind": "finalization",
        "plan_hash": plan_hash,
        "phase": "two: delete the automation"
        if phase == "two"
        else "one: the GitHub operations; the deletion needs a second plan",
        "mode": state["mode"],
        "operations": operations,
        "repository": manifest["repository"],
        "pull_request": state["pr_url"],
        "base_branch": manifest["base_branch"],
        "base_sha": manifest["base_sha"],
        "head_branch": manifest["head_branch"],
        "head_sha": manifest["current_head_sha"],
        "request_key": manifest["request_key"],
        "mark_ready_for_review": manifest["pr_is_draft"],
        "threads": [{"id": t["id"], "do": "resolve"} for t in manifest["eligible_threads"]],
        "non_codex_rooted_threads": manifest["non_codex_rooted_threads"],
        "gates": dict(manifest["gates"]),
        "gates_unknown_because": [
            f"{u['gate']}: {u['rule']} ({u['reason']}; informational, not bound by the hash)" for u in gate_unknowns
        ],
        "automation_to_delete": state["owned_automation_id"],
        "merge": "never: merging stays yours",
        "how_to_approve": how_to_approve(state["mode"], plan_hash),
    }


def text(summary: Mapping[str, Any]) -> str:
    """The summary as lines for people, the hash first and last."""
    lines = [f"Plan ({summary['plan_kind']}): {summary['plan_hash']}"]
    for key, value in summary.items():
        if key in ("plan_kind", "plan_hash", "how_to_approve") or value is None or value == []:
            continue
        label = key.replace("_", " ")
        if isinstance(value, list):
            lines.append(f"  {label}:")
            lines += [f"    - {_item(item)}" for item in value]
        elif isinstance(value, dict):
            lines.append(f"  {label}: " + ", ".join(f"{k}={v}" for k, v in value.items()))
        elif isinstance(value, str) and "\n" in value:
            lines.append(f"  {label}:")
            lines += [f"    | {line}" for line in value.split("\n")]
        else:
            lines.append(f"  {label}: {value}")
    lines.append(summary["how_to_approve"])
    return "\n".join(lines) + "\n"


def _item(item: Any) -> str:
    if isinstance(item, list):
        return " ".join(item)
    if isinstance(item, dict):
        return ", ".join(f"{k}={v}" for k, v in item.items())
    return str(item)
