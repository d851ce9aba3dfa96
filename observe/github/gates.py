"""Merge gates from raw GitHub answers: pure functions, one table each.

Every gate is "pass", "fail", "pending" or "unknown". When several facts feed
one gate the worst wins, in the order fail > unknown > pending > pass: a gate
never passes while anything it depends on is failing, unreadable or waiting.
The full mapping is documented in references/github-observations.md.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

PASS, FAIL, PENDING, UNKNOWN = "pass", "fail", "pending", "unknown"
_SEVERITY = {PASS: 0, PENDING: 1, UNKNOWN: 2, FAIL: 3}

# Check runs: status other than "completed" -> pending; conclusion below.
CHECK_RUN_WAITING_STATUSES = frozenset({"queued", "in_progress", "waiting", "requested", "pending"})
CHECK_RUN_CONCLUSIONS = {
    "success": PASS,
    "neutral": PASS,
    "skipped": PASS,
    "failure": FAIL,
    "cancelled": FAIL,
    "timed_out": FAIL,
    "action_required": FAIL,
    "startup_failure": FAIL,
    "stale": FAIL,  # GitHub gave up on it; it will not turn green by waiting
}
# Commit statuses (latest per context, as the combined endpoint reports them).
COMMIT_STATUS_STATES = {"success": PASS, "pending": PENDING, "failure": FAIL, "error": FAIL}
# pulls.get mergeable_state, used once `mergeable` is known and true.
MERGEABLE_STATES = {
    "clean": PASS,
    "has_hooks": PASS,
    "unstable": PASS,  # mergeable; failing checks are the checks gate's business
    "blocked": PENDING,  # protection requirements unmet; the other gates say which
    "draft": PENDING,
    "unknown": PENDING,  # GitHub is still computing
    "behind": FAIL,  # needs the base merged in before it can merge
    "dirty": FAIL,  # conflicts
}


def worst(outcomes: Iterable[str]) -> str:
    return max(outcomes, key=_SEVERITY.__getitem__, default=PASS)


def _instant(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def check_outcomes(check_runs: list[dict[str, Any]], statuses: list[dict[str, Any]]) -> dict[str, str]:
    """Outcome per check name / status context for the head commit (worst when a name repeats)."""
    outcomes: dict[str, list[str]] = {}
    for run in check_runs:
        status, conclusion = run.get("status"), run.get("conclusion")
        if status == "completed":
            outcome = CHECK_RUN_CONCLUSIONS.get(conclusion, UNKNOWN)
        elif status in CHECK_RUN_WAITING_STATUSES:
            outcome = PENDING
        else:
            outcome = UNKNOWN
        outcomes.setdefault(str(run.get("name")), []).append(outcome)
    for status in statuses:
        outcomes.setdefault(str(status.get("context")), []).append(COMMIT_STATUS_STATES.get(status.get("state"), UNKNOWN))
    return {name: worst(values) for name, values in outcomes.items()}


def checks_gate(check_runs: list[dict[str, Any]], statuses: list[dict[str, Any]]) -> str:
    """Worst outcome over every check run and commit status; none at all passes."""
    return worst(check_outcomes(check_runs, statuses).values())


def approvals_gate(reviews: list[dict[str, Any]], protection: tuple[str, dict[str, Any] | None], head_sha: str) -> str:
    """Latest decisive review per human reviewer against the required approving count.

    A reviewer's standing is their latest APPROVED, CHANGES_REQUESTED or
    DISMISSED review (COMMENTED and PENDING do not change it). Any standing
    CHANGES_REQUESTED fails. The required count comes from branch protection:
    0 when the branch is unprotected, unknown when protection is unreadable.
    With require_last_push_approval only approvals of the head commit count;
    with require_code_owner_reviews a sufficient count is still "unknown",
    because CODEOWNERS is not read.
    """
    standing: dict[Any, dict[str, Any]] = {}
    decisive = [
        r for r in reviews
        if isinstance(r.get("user"), dict) and r["user"].get("type") != "Bot" and r.get("submitted_at")
        and r.get("state") in ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")
    ]
    for review in sorted(decisive, key=lambda r: (_instant(r["submitted_at"]), r["id"])):
        standing[review["user"]["id"]] = review
    if any(r["state"] == "CHANGES_REQUESTED" for r in standing.values()):
        return FAIL
    state, rules = protection
    if state == "unknown":
        return UNKNOWN
    review_rules = (rules or {}).get("required_pull_request_reviews") if state == "protected" else None
    if not isinstance(review_rules, dict):
        return PASS  # no review requirement: nothing to wait for
    required = review_rules.get("required_approving_review_count", 1)
    if not isinstance(required, int) or isinstance(required, bool):
        return UNKNOWN
    last_push_only = review_rules.get("require_last_push_approval") is True
    approvals = sum(1 for r in standing.values() if r["state"] == "APPROVED" and (not last_push_only or r.get("commit_id") == head_sha))
    if approvals < required:
        return PENDING
    if review_rules.get("require_code_owner_reviews") is True:
        return UNKNOWN
    return PASS


def branch_protection_gate(
    protection: tuple[str, dict[str, Any] | None],
    approvals: str,
    outcomes: dict[str, str],
    unresolved_threads: int,
    mergeable_state: Any,
) -> str:
    """The PR against the base branch's classic protection rules.

    Unprotected (404) passes; unreadable (403) is unknown. Otherwise the worst
    of: a locked branch fails; required signatures are unknown (not read);
    each required status check by outcome (missing -> pending) and, when
    strict, a "behind" head fails; required reviews take the approvals gate;
    required conversation resolution waits for every thread to be resolved.
    """
    state, rules = protection
    if state == "unprotected":
        return PASS
    if state == "unknown" or not isinstance(rules, dict):
        return UNKNOWN
    parts: list[str] = []
    if _enabled(rules.get("lock_branch")):
        parts.append(FAIL)
    if _enabled(rules.get("required_signatures")):
        parts.append(UNKNOWN)
    required_checks = rules.get("required_status_checks")
    if isinstance(required_checks, dict):
        contexts = set(required_checks.get("contexts") or [])
        contexts |= {c.get("context") for c in required_checks.get("checks") or [] if isinstance(c, dict)}
        parts.extend(outcomes.get(context, PENDING) for context in contexts)
        if required_checks.get("strict") is True and mergeable_state == "behind":
            parts.append(FAIL)
    if isinstance(rules.get("required_pull_request_reviews"), dict):
        parts.append(approvals)
    if _enabled(rules.get("required_conversation_resolution")) and unresolved_threads:
        parts.append(PENDING)
    return worst(parts)


def mergeability_gate(pr_state: str, mergeable: Any, mergeable_state: Any) -> str:
    """Closed or merged cannot merge; null mergeable is still computing; then MERGEABLE_STATES."""
    if pr_state != "open":
        return FAIL
    if mergeable is None:
        return PENDING
    if mergeable is False:
        return FAIL
    if mergeable is True:
        return MERGEABLE_STATES.get(mergeable_state, UNKNOWN)
    return UNKNOWN


def _enabled(setting: Any) -> bool:
    return isinstance(setting, dict) and setting.get("enabled") is True
