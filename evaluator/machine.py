"""Recurring state in, exactly one action out.

``observe_facts`` reduces a validated state to named facts; ``ROWS`` is the
action table: one row per situation, first match wins, each row names its
reason code. Nothing here reads a clock, a file or the network: ``now`` is
given by the caller (``--now``) or taken from the state's ``observed_at``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Callable

from . import markers, policy
from .formats import parse_timestamp
from .models.recurring import Claim, RecurringState, Response

# Actions that change something outside the evaluator (GitHub, git, registry).
WRITE_ACTIONS = frozenset(
    {"claim-plan", "execute-remediation", "execute-finalization", "finish-finalization", "stop-pr-closed", "request-timeout", "stop-max-rounds", "stop-reviewer-unavailable", "stop-recurring-finding"}
)
# Terminal stops that end the loop by deleting the owned automation.
CLEANUP_STOPS = frozenset({"stop-pr-closed", "request-timeout", "stop-max-rounds", "stop-reviewer-unavailable", "stop-recurring-finding"})


@dataclass(frozen=True)
class Facts:
    state: RecurringState
    inconsistencies: tuple[str, ...]
    trust_inconsistencies: tuple[str, ...]
    findings: bool
    clean: bool
    unavailable: bool
    review_failed: bool
    review_running: bool
    timed_out: bool
    recurring_finding: bool
    plan_kind: str | None
    claim_kind: str  # the lock this situation uses: remediation, finalization (phase one) or cleanup (phase two)
    plan_hash: str | None
    plan_approved: bool
    approval_mismatch: bool  # approval-gated: an approval was given, but it names another plan
    claim: str  # none | ours | theirs | abandoned (the earliest claim of the plan's kind for this request)
    remediation_in_progress: bool
    finalization_settled: bool
    loop_finished: bool


@dataclass(frozen=True)
class Row:
    action: str
    reason: str
    when: Callable[[Facts], bool]
    with_inconsistencies: bool = False  # also report the inconsistencies this row does not stop for


def _instant(text: str | None) -> datetime | None:
    return None if text is None else parse_timestamp(text)


def _bound_to_request(state: RecurringState, created_at: str) -> bool:
    """A signal counts only if it came after the request and by its deadline."""
    created = parse_timestamp(created_at)
    return _instant(state.request_created_at) < created <= _instant(state.request_deadline)


def _answers_request(state: RecurringState, response: Response) -> bool:
    """It names the current request as its trigger, or was posted after it (whatever it names)."""
    return response.trigger_request_comment_id == state.request_comment_id or _posted_after_request(state, response)


def _posted_after_request(state: RecurringState, response: Response) -> bool:
    if state.request_created_at is None:
        return False
    return parse_timestamp(response.created_at) > parse_timestamp(state.request_created_at)


def _clean_answer_bound(state: RecurringState, response: Response) -> bool:
    """Trigger, commit and time bound: created and last edited inside the request window."""
    if response.trigger_request_comment_id != state.request_comment_id or response.commit_sha != state.request_head_sha:
        return False
    if _timeline_impossible(state, response):
        return False
    return _bound_to_request(state, response.created_at) and _bound_to_request(state, response.content_version_at)


def _edited_before_created(response: Response) -> bool:
    return parse_timestamp(response.content_version_at) < parse_timestamp(response.created_at)


def _trigger_contradicts_time(state: RecurringState, response: Response) -> bool:
    """The trigger is the latest request created strictly before the response,
    so a response names the current request exactly when it came after it."""
    if state.request_comment_id is None:
        return False
    names_current = response.trigger_request_comment_id == state.request_comment_id
    return names_current != _posted_after_request(state, response)


def _timeline_impossible(state: RecurringState, response: Response) -> bool:
    return _edited_before_created(response) or _trigger_contradicts_time(state, response)


def response_inconsistencies(state: RecurringState) -> list[str]:
    checks = (
        ("response-edited-before-created", any(_edited_before_created(r) for r in state.responses)),
        ("response-trigger-mismatch", any(_trigger_contradicts_time(state, r) for r in state.responses)),
    )
    return [reason for reason, failed in checks if failed]


def _claims_for(state: RecurringState, kind: str) -> list[Claim]:
    return [claim for claim in state.claims if claim.kind == kind and claim.request_key == state.request_key]


def _claim_status(state: RecurringState, claims: list[Claim], plan_hash: str | None, now: datetime) -> str:
    if not claims:
        return "none"
    first = claims[0]
    if now - parse_timestamp(first.created_at) > policy.CLAIM_TIMEOUT:
        return "abandoned"
    if first.wakeup_id == state.wakeup_id and (plan_hash is None or first.plan_hash == plan_hash):
        return "ours"
    return "theirs"


def automation_inconsistencies(state: RecurringState) -> list[str]:
    key = markers.automation_key(state.host, state.repository, state.pr_number, state.run_id)
    if not state.automations:
        return ["automation-missing"]
    if len(state.automations) > 1:
        return ["automation-duplicate"]
    record = state.automations[0]
    reasons = []
    if record.id != state.owned_automation_id or record.directory != state.owned_automation_id:
        reasons.append("automation-id-mismatch")
    if not record.readable or record.problem is not None:
        return reasons + ["automation-unreadable"]
    if record.name != key:
        reasons.append("automation-name-mismatch")
    if record.rrule != policy.HEARTBEAT_RRULE:
        reasons.append("automation-schedule-mismatch")
    if state.expected_prompt_sha256 is None:
        reasons.append("bootstrap-automation-paused" if record.status == "PAUSED" else "automation-active-before-prompt")
    else:
        if record.status != "ACTIVE":
            reasons.append("automation-not-active")
        if record.prompt_sha256 != state.expected_prompt_sha256:
            reasons.append("automation-prompt-mismatch")
    return reasons


def identity_inconsistencies(state: RecurringState, cli_approved: str | None) -> list[str]:
    checks = (
        ("user-drift", state.current_authenticated_user_id != state.authenticated_user_id),
        ("evaluator-digest-changed", state.current_evaluator_sha256 != state.evaluator_sha256),
        ("remote-drift", state.current_remote_name != state.remote_name),
        ("repository-drift", state.pr_repository != state.repository),
        ("pr-cross-repository", not state.pr_same_repository),
        ("base-branch-drift", state.current_base_branch != state.base_branch),
        ("head-branch-drift", state.current_head_branch != state.head_branch),
        ("base-tip-drift", state.current_base_sha != state.base_sha),
        ("remote-head-drift", state.remote_head_sha != state.current_head_sha),
        ("marker-anomaly", bool(state.marker_anomalies)),
        ("approval-conflict", cli_approved is not None and state.approved_plan_hash is not None and cli_approved != state.approved_plan_hash),
        # After bootstrap every wakeup names itself: claims are told apart by it.
        ("wakeup-id-missing", state.expected_prompt_sha256 is not None and state.wakeup_id is None),
    )
    return [reason for reason, failed in checks if failed]


def observe_facts(state: RecurringState, now: datetime, cli_approved: str | None, plan_drift: list[str]) -> Facts:
    """Every fact the table needs, computed once, in one place."""
    approved = cli_approved or state.approved_plan_hash
    has_request = state.request_comment_id is not None
    # A response answers this request when it names it as trigger and was both
    # created and last edited inside the request window. It is decisive only
    # when it also names the requested head; otherwise it is ambiguous.
    # An answer is a response that names this request as its trigger or was
    # posted after it. A non-clean answer is never disqualified by timing: on
    # the requested head it is a finding, otherwise it blocks clean (it may be
    # a finding the loop cannot bind). Only a clean answer must also be
    # created and last edited inside the request window: a later edit may have
    # replaced whatever it said by the deadline. An answer whose timeline is
    # impossible blocks clean too (and is an inconsistency in write modes).
    answering = [r for r in state.responses if has_request and _answers_request(state, r)]
    non_clean = [r for r in answering if not r.zero_findings_signal]
    clean_answers = [r for r in answering if r.zero_findings_signal and _clean_answer_bound(state, r)]
    ambiguous = any(r.commit_sha != state.request_head_sha for r in non_clean)
    ambiguous = ambiguous or any(_timeline_impossible(state, r) for r in answering)
    plus_one = [r for r in state.plus_one_reactions if has_request and _bound_to_request(state, r.created_at)]
    rows = [row for row in state.summary_rows if has_request and row.head_sha == state.request_head_sha and _bound_to_request(state, row.content_version_at)]
    unavailable = any(has_request and _bound_to_request(state, reply.created_at) for reply in state.unavailable_replies)
    findings = bool(state.actionable_codex_threads) or any(r.commit_sha == state.request_head_sha for r in non_clean)
    # Any one commit-bound clean form counts: a zero-findings answer, a +1 on
    # the PR after the request (bound to the head by the head-drift check), or a
    # Completed summary row for the requested head. A finding always wins, and a
    # non-clean answer that names no (or another) head blocks clean: the
    # request waits and times out instead.
    completed = any(row.status == "completed" for row in rows)
    clean = not findings and not ambiguous and (bool(clean_answers) or bool(plus_one) or completed)
    eligible_bodies = {thread.body_sha256 for thread in state.eligible_codex_threads}

    plan_kind = "remediation" if state.remediation_manifest else "finalization" if state.finalization_manifest else None
    plan_hash = state.remediation_plan_hash or state.finalization_plan_hash
    head_moved = has_request and state.current_head_sha != state.request_head_sha
    remediation_claims = _claims_for(state, "remediation")
    remediation_in_progress = head_moved and bool(remediation_claims) and _claim_status(state, remediation_claims, None, now) != "abandoned"
    final_claims = _claims_for(state, "finalization")
    # Settled: a snapshot taken after the phase-one claim shows its effects (not
    # draft, nothing left to resolve). A plan bound to that snapshot (the drift
    # rules ensure it) is the phase-two plan: only delete-owned-automation.
    finalization_settled = bool(final_claims) and not state.pr_is_draft and not state.eligible_codex_threads and _instant(state.observed_at) > parse_timestamp(final_claims[0].created_at)
    if finalization_settled and not findings:
        claim_kind = "cleanup"  # phase two has a lock of its own: its first claim wins
    else:
        claim_kind = plan_kind or ("remediation" if findings else "finalization")
    claims = _claims_for(state, claim_kind)
    claim = _claim_status(state, claims, plan_hash, now)

    inconsistencies: list[str] = []
    trust: list[str] = []
    loop_finished = False
    if state.mode != "report-only":
        loop_finished = finalization_settled and not state.automations
        inconsistencies += identity_inconsistencies(state, cli_approved)
        inconsistencies += response_inconsistencies(state)
        if head_moved and not remediation_in_progress:
            inconsistencies.append("claim-abandoned" if remediation_claims else "head-drift")
        if not loop_finished:
            inconsistencies += automation_inconsistencies(state)
        # What must hold before anything, even cleanup of a closed PR's loop:
        # the evaluator is the pinned one, the user is ours, the automation is ours.
        trust = [r for r in inconsistencies if r in ("evaluator-digest-changed", "user-drift") or r.startswith("automation-")]
        inconsistencies += plan_drift
        if claim == "abandoned":
            inconsistencies.append("claim-abandoned")
    return Facts(
        state=state,
        inconsistencies=tuple(sorted(set(inconsistencies))),
        trust_inconsistencies=tuple(sorted(set(trust))),
        findings=findings,
        clean=clean,
        unavailable=unavailable,
        review_failed=any(row.status == "failed" for row in rows),
        review_running=any(row.status == "running" for row in rows),
        timed_out=has_request and now > _instant(state.request_deadline),
        recurring_finding=any(thread.body_sha256 in eligible_bodies for thread in state.actionable_codex_threads),
        plan_kind=plan_kind,
        claim_kind=claim_kind,
        plan_hash=plan_hash,
        plan_approved=plan_hash is not None and (state.mode == "autonomous" or approved == plan_hash),
        approval_mismatch=state.mode == "approval-gated" and None not in (plan_hash, approved) and approved != plan_hash,
        claim=claim,
        remediation_in_progress=remediation_in_progress,
        finalization_settled=finalization_settled,
        loop_finished=loop_finished,
    )


def _plan_answers_signal(f: Facts) -> bool:
    return (f.findings and f.plan_kind == "remediation") or (f.clean and f.plan_kind == "finalization")


def _plan_is(kind: str) -> Callable[[Facts], bool]:
    return lambda f: f.plan_kind == kind


# The action table for autonomous and approval-gated modes. First match wins.
ROWS: tuple[Row, ...] = (
    Row("done", "loop-finished", lambda f: f.loop_finished and f.plan_kind is None),
    Row("state-inconsistency", "inconsistent", lambda f: bool(f.trust_inconsistencies)),
    Row("stop-pr-closed", "pr-merged", lambda f: f.state.pr_state == "merged", with_inconsistencies=True),
    Row("stop-pr-closed", "pr-closed", lambda f: f.state.pr_state == "closed", with_inconsistencies=True),
    Row("state-inconsistency", "inconsistent", lambda f: bool(f.inconsistencies)),
    Row("wait", "remediation-in-progress", lambda f: f.remediation_in_progress),
    Row("stop-reviewer-unavailable", "codex-unavailable", lambda f: f.unavailable),
    Row("stop-reviewer-unavailable", "codex-review-failed", lambda f: f.review_failed and not (f.findings or f.clean)),
    Row("stop-recurring-finding", "finding-recurred", lambda f: f.recurring_finding),
    Row("stop-max-rounds", "max-fix-rounds-reached", lambda f: f.findings and f.state.fix_rounds >= policy.MAX_FIX_ROUNDS),
    # Findings: plan, approve, claim, execute a remediation.
    Row("state-inconsistency", "plan-kind-mismatch", lambda f: f.findings and f.plan_kind == "finalization"),
    Row("plan-remediation", "codex-findings", lambda f: f.findings and f.plan_kind is None and f.claim in ("none", "ours")),
    Row("wait", "plan-claimed-by-other-wakeup", lambda f: f.findings and f.claim == "theirs"),
    # An approval that names another plan (stale, or mistyped) is said so, never silently re-asked.
    Row("await-approval", "approved-hash-mismatch", lambda f: f.approval_mismatch and f.claim != "theirs" and _plan_answers_signal(f)),
    Row("await-approval", "approval-required", lambda f: f.findings and not f.plan_approved),
    Row("claim-plan", "plan-unclaimed", lambda f: f.findings and f.claim == "none"),
    Row("execute-remediation", "plan-claimed", lambda f: f.findings and f.claim == "ours"),
    # Clean: two-phase finalization.
    Row("state-inconsistency", "plan-kind-mismatch", lambda f: f.clean and f.plan_kind == "remediation"),
    Row("plan-finalization", "finalization-phase-two", lambda f: f.clean and f.finalization_settled and f.plan_kind is None),
    Row("await-approval", "approval-required", lambda f: f.clean and f.finalization_settled and not f.plan_approved),
    Row("claim-plan", "plan-unclaimed", lambda f: f.clean and f.finalization_settled and f.claim == "none"),
    Row("finish-finalization", "finalization-settled", lambda f: f.clean and f.finalization_settled and f.claim == "ours"),
    Row("wait", "finalization-claimed-by-other-wakeup", lambda f: f.clean and f.finalization_settled),
    Row("plan-finalization", "codex-clean", lambda f: f.clean and f.plan_kind is None and f.claim in ("none", "ours")),
    Row("wait", "finalization-claimed-by-other-wakeup", lambda f: f.clean and f.claim == "theirs"),
    Row("await-approval", "approval-required", lambda f: f.clean and not f.plan_approved),
    Row("claim-plan", "plan-unclaimed", lambda f: f.clean and f.claim == "none"),
    Row("execute-finalization", "plan-claimed", lambda f: f.clean and f.claim == "ours"),
    # No answer yet.
    Row("state-inconsistency", "plan-without-signal", lambda f: f.plan_kind is not None),
    Row("request-timeout", "request-deadline-passed", lambda f: f.timed_out),
    Row("wait", "codex-review-running", lambda f: f.review_running),
    Row("wait", "awaiting-codex-response", lambda f: True),
)

# Report-only: a classification, never a write. First match wins.
REPORT_ROWS: tuple[Row, ...] = (
    Row("report", "pr-merged", lambda f: f.state.pr_state == "merged"),
    Row("report", "pr-closed", lambda f: f.state.pr_state == "closed"),
    Row("report", "no-request", lambda f: f.state.request_comment_id is None),
    Row("report", "reviewer-unavailable", lambda f: f.unavailable),
    Row("report", "findings", lambda f: f.findings),
    Row("report", "clean", lambda f: f.clean),
    Row("report", "review-failed", lambda f: f.review_failed),
    Row("report", "timed-out", lambda f: f.timed_out),
    Row("report", "review-running", lambda f: f.review_running),
    Row("report", "awaiting-response", lambda f: True),
)


def decide(facts: Facts) -> tuple[str, list[str]]:
    """The first matching row's action and its reason codes."""
    table = REPORT_ROWS if facts.state.mode == "report-only" else ROWS
    for row in table:
        if row.when(facts):
            if row.reason == "inconsistent":
                return row.action, list(facts.inconsistencies)
            if row.with_inconsistencies:
                return row.action, [row.reason] + list(facts.inconsistencies)
            return row.action, [row.reason]
    raise AssertionError("the action table ends with a catch-all row")
