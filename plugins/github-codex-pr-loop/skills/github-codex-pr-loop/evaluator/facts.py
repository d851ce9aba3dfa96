"""What a validated recurring state means: the named facts the action table reads.

Every fact is computed once, here, from the state and the evaluation instant
the caller gives (``--now`` or the state's ``observed_at``); nothing reads a
clock, a file or the network. Meanings: references/recurring-state.md
(#4-codex-signals, #the-claim-protocol) and references/actions.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from . import markers, policy
from .formats import parse_timestamp
from .models.recurring import Claim, RecurringState, Response, SummaryRow, UnrecognizedReply
from .rules.manifests import finalization_branch_drift

PlanKind = Literal["remediation", "finalization"]
# The earliest claim of a lock for this request: none, this wakeup's, another
# wakeup's, or one too old to be carried through (CLAIM_TIMEOUT).
ClaimStatus = Literal["none", "ours", "theirs", "abandoned"]

# What must hold before anything, even cleanup of a closed PR's loop: the
# evaluator is the pinned one, the user is ours, the automation is ours.
# (``bootstrap-automation-paused`` is the expected bootstrap state, not a
# breach of trust.)
TRUST_REASONS = frozenset(
    {
        "evaluator-digest-changed",
        "user-drift",
        "automation-missing",
        "automation-duplicate",
        "automation-id-mismatch",
        "automation-unreadable",
        "automation-name-mismatch",
        "automation-schedule-mismatch",
        "automation-active-before-prompt",
        "automation-not-active",
        "automation-prompt-mismatch",
    }
)


@dataclass(frozen=True)
class Facts:
    state: RecurringState
    inconsistencies: tuple[str, ...]
    trust_inconsistencies: tuple[str, ...]
    findings: bool
    clean: bool
    unavailable: bool
    unavailable_kinds: tuple[str, ...]  # each kind of the bound unavailable replies, sorted
    unrecognized: tuple[UnrecognizedReply, ...]  # unrecognised replies posted after the request
    # Codex never picked the request up: no 👀 and no answer of any kind,
    # REQUEST_ACKNOWLEDGEMENT_TIMEOUT after it was posted (observed by the collector).
    not_responding: bool
    review_settling: bool  # a Completed row for the head, younger than a heartbeat, and nothing else
    review_failed: bool
    review_running: bool
    timed_out: bool
    recurring_finding: bool
    plan_kind: PlanKind | None
    claim_kind: policy.ClaimKind  # the lock this situation uses
    plan_hash: str | None
    plan_approved: bool
    approval_mismatch: bool  # approval-gated: an approval was given, but it names another plan
    claim: ClaimStatus
    remediation_in_progress: bool
    finalization_settled: bool
    loop_finished: bool
    # A finalization plan invalidated by remote, base or PR branch drift: no
    # GitHub write and no automation cleanup, not even a closed PR's.
    cleanup_forbidden: bool


# --- the request window ---------------------------------------------------------


def bound_to_request(state: RecurringState, timestamp: str) -> bool:
    """A signal counts only if it came after the request and by its deadline (never without a request)."""
    if state.request_created_at is None or state.request_deadline is None:
        return False
    return (
        parse_timestamp(state.request_created_at)
        < parse_timestamp(timestamp)
        <= parse_timestamp(state.request_deadline)
    )


def posted_after_request(state: RecurringState, response: Response) -> bool:
    if state.request_created_at is None:
        return False
    return parse_timestamp(response.created_at) > parse_timestamp(state.request_created_at)


def answers_request(state: RecurringState, response: Response) -> bool:
    """It names the current request as its trigger, or was posted after it (whatever it names)."""
    return response.trigger_request_comment_id == state.request_comment_id or posted_after_request(state, response)


def edited_before_created(response: Response) -> bool:
    return parse_timestamp(response.content_version_at) < parse_timestamp(response.created_at)


def trigger_contradicts_time(state: RecurringState, response: Response) -> bool:
    """The trigger is the latest request created strictly before the response,
    so a response names the current request exactly when it came after it."""
    if state.request_comment_id is None:
        return False
    names_current = response.trigger_request_comment_id == state.request_comment_id
    return names_current != posted_after_request(state, response)


def timeline_impossible(state: RecurringState, response: Response) -> bool:
    return edited_before_created(response) or trigger_contradicts_time(state, response)


def unrecognized_keys(state: RecurringState) -> set[tuple[str, str]]:
    """(source, id) of every reply the collector could not read as a documented form."""
    return {(reply.source, reply.id) for reply in state.unrecognized_replies}


def recognized(state: RecurringState, response: Response) -> bool:
    return (response.source, response.id) not in unrecognized_keys(state)


def names_no_commit(response: Response) -> bool:
    """An issue comment that names no commit: the one-line clean, or findings with no reviewed commit or
    permalink. (A comment that names a commit no request asked about is listed as unrecognised.)"""
    return response.source == "issue-comment" and response.commit_sha is None


def clean_answer_bound(state: RecurringState, response: Response) -> bool:
    """Trigger, commit and time bound: created and last edited inside the request window.

    The one-line clean that names no commit binds to the requested head the
    way a +1 does: it answers this request, and the head has not moved since.
    """
    if not response.zero_findings_signal or not recognized(state, response):
        return False
    if response.trigger_request_comment_id != state.request_comment_id:
        return False
    on_head = response.commit_sha == state.request_head_sha or (
        names_no_commit(response) and state.current_head_sha == state.request_head_sha
    )
    if not on_head or timeline_impossible(state, response):
        return False
    return bound_to_request(state, response.created_at) and bound_to_request(state, response.content_version_at)


def answering_responses(state: RecurringState) -> list[Response]:
    """The answers to this request: responses that name it as their trigger or were posted after it."""
    if state.request_comment_id is None:
        return []
    return [response for response in state.responses if answers_request(state, response)]


def is_finding(state: RecurringState, response: Response) -> bool:
    """A non-clean answer on the requested head; a findings comment that names no commit is on it."""
    return (
        not response.zero_findings_signal
        and recognized(state, response)
        and (response.commit_sha == state.request_head_sha or names_no_commit(response))
    )


def has_findings(state: RecurringState, answering: list[Response]) -> bool:
    """An actionable Codex thread, or a non-clean answer on the requested head.

    A non-clean answer is never disqualified by timing: on the requested head
    it is a finding.
    """
    return bool(state.actionable_codex_threads) or any(is_finding(state, response) for response in answering)


def has_ambiguous_answer(state: RecurringState, answering: list[Response]) -> bool:
    """A non-clean answer that names another head (it may be a finding the loop cannot bind), an
    unrecognised answer, or an answer whose timeline is impossible."""
    other_head = any(not r.zero_findings_signal and not is_finding(state, r) for r in answering)
    unread = any(not recognized(state, r) for r in answering)
    return other_head or unread or any(timeline_impossible(state, response) for response in answering)


def bound_unrecognized(state: RecurringState) -> list[UnrecognizedReply]:
    """Unrecognised replies posted after the request: at any time, like a finding (they may be one)."""
    if state.request_created_at is None:
        return []
    requested = parse_timestamp(state.request_created_at)
    return [reply for reply in state.unrecognized_replies if parse_timestamp(reply.created_at) > requested]


def bound_summary_rows(state: RecurringState) -> list[SummaryRow]:
    """Summary rows for the requested head, last written inside the request window."""
    return [
        row
        for row in state.summary_rows
        if row.head_sha == state.request_head_sha and bound_to_request(state, row.content_version_at)
    ]


def row_settled(row: SummaryRow, now: datetime) -> bool:
    """A Completed row counts once it has stood a heartbeat: the review it stands for may be served later."""
    return now - parse_timestamp(row.content_version_at) >= policy.SUMMARY_COMPLETED_SETTLE


def is_clean(state: RecurringState, answering: list[Response], rows: list[SummaryRow], now: datetime) -> bool:
    """Any one head-bound clean form, with no finding, no ambiguous or unrecognised answer, no review running.

    The clean forms: a zero-findings answer bound to the request, its head and
    its window (created and last edited inside it: a later edit may have
    replaced what it said by the deadline), a +1 on the PR after the request
    (bound to the head by the head-drift check), or a Completed summary row for
    the requested head that has stood one heartbeat. A finding always wins;
    an ambiguous answer, an unrecognised reply or a review still running for
    the head blocks clean.
    """
    if has_findings(state, answering) or has_ambiguous_answer(state, answering) or bound_unrecognized(state):
        return False
    if any(row.status == "running" for row in rows):
        return False
    clean_answer = any(clean_answer_bound(state, r) for r in answering)
    plus_one = any(bound_to_request(state, reaction.created_at) for reaction in state.plus_one_reactions)
    completed = any(row.status == "completed" and row_settled(row, now) for row in rows)
    return clean_answer or plus_one or completed


def codex_spoke_after_request(state: RecurringState) -> bool:
    """Anything of Codex's after the request: a response, a "no review" reply, a summary row, a +1."""
    if state.request_created_at is None:
        return False
    requested = parse_timestamp(state.request_created_at)
    times = [
        *(moment for response in state.responses for moment in (response.created_at, response.content_version_at)),
        *(reply.created_at for reply in state.unavailable_replies if reply.kind != policy.UNACKNOWLEDGED),
        *(reply.created_at for reply in state.unrecognized_replies),
        *(row.content_version_at for row in state.summary_rows),
        *(reaction.created_at for reaction in state.plus_one_reactions),
    ]
    return any(parse_timestamp(moment) > requested for moment in times)


def request_not_picked_up(state: RecurringState) -> bool:
    """The collector saw no 👀 on the current request, at least the acknowledgement bound after it was posted
    and by its deadline, and Codex has said nothing since the request: the review will not come."""
    if state.request_comment_id is None or state.request_created_at is None:
        return False
    requested = parse_timestamp(state.request_created_at)
    observed = any(
        reply.kind == policy.UNACKNOWLEDGED
        and reply.id == str(state.request_comment_id)
        and parse_timestamp(reply.created_at) - requested >= policy.REQUEST_ACKNOWLEDGEMENT_TIMEOUT
        and bound_to_request(state, reply.created_at)
        for reply in state.unavailable_replies
    )
    return observed and not codex_spoke_after_request(state)


def has_recurring_finding(state: RecurringState) -> bool:
    """An actionable thread says again what an already eligible (addressed) thread said."""
    eligible_bodies = {thread.body_sha256 for thread in state.eligible_codex_threads}
    return any(thread.body_sha256 in eligible_bodies for thread in state.actionable_codex_threads)


# --- claims -------------------------------------------------------------------------


def claims_for(state: RecurringState, kind: policy.ClaimKind) -> list[Claim]:
    """The claims of one lock for the current request, earliest first."""
    return [claim for claim in state.claims if claim.kind == kind and claim.request_key == state.request_key]


def claim_status(state: RecurringState, claims: list[Claim], plan_hash: str | None, now: datetime) -> ClaimStatus:
    """What the earliest claim of a lock means for this wakeup: the first claim wins."""
    if not claims:
        return "none"
    first = claims[0]
    if now - parse_timestamp(first.created_at) > policy.CLAIM_TIMEOUT:
        return "abandoned"
    if first.wakeup_id == state.wakeup_id and (plan_hash is None or first.plan_hash == plan_hash):
        return "ours"
    return "theirs"


def finalization_settled(state: RecurringState, final_claims: list[Claim]) -> bool:
    """Phase one's effects are observed: a snapshot taken after its claim shows
    the PR out of draft and nothing left to resolve. A plan bound to that
    snapshot (the drift rules ensure it) is the phase-two plan."""
    return (
        bool(final_claims)
        and not state.pr_is_draft
        and not state.eligible_codex_threads
        and parse_timestamp(state.observed_at) > parse_timestamp(final_claims[0].created_at)
    )


def lock_kind(settled: bool, findings: bool, plan_kind: PlanKind | None) -> policy.ClaimKind:
    """The lock this situation claims: phase two has a lock of its own, whose first claim wins."""
    if settled and not findings:
        return "cleanup"
    return plan_kind or ("remediation" if findings else "finalization")


# --- inconsistencies ----------------------------------------------------------------


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
        reasons.append(
            "bootstrap-automation-paused" if record.status == "PAUSED" else "automation-active-before-prompt"
        )
    else:
        if record.status != "ACTIVE":
            reasons.append("automation-not-active")
        if record.prompt_sha256 != state.expected_prompt_sha256:
            reasons.append("automation-prompt-mismatch")
    return reasons


def response_inconsistencies(state: RecurringState) -> list[str]:
    checks = (
        ("response-edited-before-created", any(edited_before_created(r) for r in state.responses)),
        ("response-trigger-mismatch", any(trigger_contradicts_time(state, r) for r in state.responses)),
    )
    return [reason for reason, failed in checks if failed]


def identity_inconsistencies(state: RecurringState, cli_approved: str | None) -> list[str]:
    approvals_differ = (
        cli_approved is not None and state.approved_plan_hash is not None and cli_approved != state.approved_plan_hash
    )
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
        ("approval-conflict", approvals_differ),
        # After bootstrap every wakeup names itself: claims are told apart by it.
        ("wakeup-id-missing", state.expected_prompt_sha256 is not None and state.wakeup_id is None),
    )
    return [reason for reason, failed in checks if failed]


# --- all facts ------------------------------------------------------------------------


def observe_facts(state: RecurringState, now: datetime, cli_approved: str | None, plan_drift: list[str]) -> Facts:
    """Every fact the table needs, computed once, in one place."""
    has_request = state.request_comment_id is not None
    answering = answering_responses(state)
    rows = bound_summary_rows(state)
    findings = has_findings(state, answering)
    clean = is_clean(state, answering, rows, now)
    unavailable = [
        reply
        for reply in state.unavailable_replies
        if reply.kind != policy.UNACKNOWLEDGED and bound_to_request(state, reply.created_at)
    ]

    plan_kind: PlanKind | None = None
    if state.remediation_manifest is not None:
        plan_kind = "remediation"
    elif state.finalization_manifest is not None:
        plan_kind = "finalization"
    plan_hash = state.remediation_plan_hash or state.finalization_plan_hash
    approved = cli_approved or state.approved_plan_hash
    head_moved = has_request and state.current_head_sha != state.request_head_sha
    remediation_claims = claims_for(state, "remediation")
    remediation_in_progress = (
        head_moved and bool(remediation_claims) and claim_status(state, remediation_claims, None, now) != "abandoned"
    )
    settled = finalization_settled(state, claims_for(state, "finalization"))
    claim_kind = lock_kind(settled, findings, plan_kind)
    claim = claim_status(state, claims_for(state, claim_kind), plan_hash, now)

    inconsistencies: list[str] = []
    loop_finished = False
    if state.mode != "report-only":
        loop_finished = settled and not state.automations
        inconsistencies += identity_inconsistencies(state, cli_approved)
        inconsistencies += response_inconsistencies(state)
        if head_moved and not remediation_in_progress:
            inconsistencies.append("claim-abandoned" if remediation_claims else "head-drift")
        if not loop_finished:
            inconsistencies += automation_inconsistencies(state)
        inconsistencies += plan_drift
        if claim == "abandoned":
            inconsistencies.append("claim-abandoned")
    found = sorted(set(inconsistencies))
    deadline = state.request_deadline
    return Facts(
        state=state,
        inconsistencies=tuple(found),
        trust_inconsistencies=tuple(reason for reason in found if reason in TRUST_REASONS),
        findings=findings,
        clean=clean,
        unavailable=bool(unavailable),
        unavailable_kinds=tuple(sorted({reply.kind for reply in unavailable})),
        unrecognized=tuple(bound_unrecognized(state)),
        not_responding=request_not_picked_up(state),
        review_settling=any(row.status == "completed" and not row_settled(row, now) for row in rows),
        review_failed=any(row.status == "failed" for row in rows),
        review_running=any(row.status == "running" for row in rows),
        timed_out=deadline is not None and now > parse_timestamp(deadline),
        recurring_finding=has_recurring_finding(state),
        plan_kind=plan_kind,
        claim_kind=claim_kind,
        plan_hash=plan_hash,
        plan_approved=plan_hash is not None and (state.mode == "autonomous" or approved == plan_hash),
        approval_mismatch=state.mode == "approval-gated"
        and None not in (plan_hash, approved)
        and approved != plan_hash,
        claim=claim,
        remediation_in_progress=remediation_in_progress,
        finalization_settled=settled,
        loop_finished=loop_finished,
        cleanup_forbidden=state.mode != "report-only"
        and state.finalization_manifest is not None
        and finalization_branch_drift(state.finalization_manifest, state),
    )
