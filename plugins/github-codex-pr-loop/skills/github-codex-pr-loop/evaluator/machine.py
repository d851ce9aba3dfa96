"""The action table: facts in, exactly one action and its reasons out.

``ROWS`` holds one row per situation for the write modes, ``REPORT_ROWS`` the
report-only classification; the first matching row wins and names its
reasons. Rows that share a guard (findings, clean, settled) are written as a
section, so the guard is stated once. The rows, in order, are the numbered
table of references/actions.md (a test compares them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from . import policy
from .facts import Facts
from .vocabulary import ActionName

Condition = Callable[[Facts], bool]
# Where a row's reasons come from: its own reason code; every inconsistency
# found; its own reason followed by every inconsistency it does not stop for;
# or its own reason followed by the kind of each "no review" reply
# (``codex-unavailable-<kind>``), so the person reads why Codex gave none.
ReasonSource = Literal["row", "inconsistencies", "row-then-inconsistencies", "row-then-unavailable-kinds"]


@dataclass(frozen=True)
class Row:
    action: ActionName
    reason: str  # the row's own reason code ("" when the reasons are the inconsistencies)
    when: Condition
    reasons_from: ReasonSource = "row"


def _inconsistent(when: Condition) -> Row:
    return Row("state-inconsistency", "", when, "inconsistencies")


def _both(guard: Condition, own: Condition) -> Condition:
    def when(facts: Facts) -> bool:
        return guard(facts) and own(facts)

    return when


def _section(guard: Condition, *rows: Row) -> tuple[Row, ...]:
    """Rows that all require ``guard``: stated once, checked before each row's own condition."""
    return tuple(replace(row, when=_both(guard, row.when)) for row in rows)


def _findings(f: Facts) -> bool:
    return f.findings


def _clean(f: Facts) -> bool:
    return f.clean


def _settled(f: Facts) -> bool:
    return f.finalization_settled


def _always(f: Facts) -> bool:
    return True


def _plan_answers_signal(f: Facts) -> bool:
    return (f.findings and f.plan_kind == "remediation") or (f.clean and f.plan_kind == "finalization")


# The action table for autonomous and approval-gated modes. First match wins.
ROWS: tuple[Row, ...] = (
    Row("done", "loop-finished", lambda f: f.loop_finished and f.plan_kind is None),
    _inconsistent(lambda f: bool(f.trust_inconsistencies)),
    # A closed PR's loop may delete its own automation despite drift, unless a
    # finalization plan is invalidated by it: then row 5 permits no write at all.
    Row(
        "stop-pr-closed",
        "pr-merged",
        lambda f: f.state.pr_state == "merged" and not f.cleanup_forbidden,
        "row-then-inconsistencies",
    ),
    Row(
        "stop-pr-closed",
        "pr-closed",
        lambda f: f.state.pr_state == "closed" and not f.cleanup_forbidden,
        "row-then-inconsistencies",
    ),
    _inconsistent(lambda f: bool(f.inconsistencies)),
    Row("wait", "remediation-in-progress", lambda f: f.remediation_in_progress),
    Row("stop-reviewer-unavailable", "codex-unavailable", lambda f: f.unavailable, "row-then-unavailable-kinds"),
    # A reply Codex posted that is no documented form may be a finding, an
    # error or a clean answer in new words: never clean, never a silent wait.
    Row("stop-reviewer-unavailable", "reviewer-reply-unrecognized", lambda f: bool(f.unrecognized)),
    Row("stop-reviewer-unavailable", "codex-review-failed", lambda f: f.review_failed and not (f.findings or f.clean)),
    Row("stop-recurring-finding", "finding-recurred", lambda f: f.recurring_finding),
    # Findings: plan, approve, claim, execute a remediation.
    *_section(
        _findings,
        Row("stop-max-rounds", "max-fix-rounds-reached", lambda f: f.state.fix_rounds >= policy.MAX_FIX_ROUNDS),
        Row("state-inconsistency", "plan-kind-mismatch", lambda f: f.plan_kind == "finalization"),
        Row("plan-remediation", "codex-findings", lambda f: f.plan_kind is None and f.claim in ("none", "ours")),
        Row("wait", "plan-claimed-by-other-wakeup", lambda f: f.claim == "theirs"),
    ),
    # An approval that names another plan (stale, or mistyped) is said so, never
    # silently re-asked: for a remediation plan on findings or a finalization
    # plan on clean, so this row stands outside the findings section.
    Row(
        "await-approval",
        "approved-hash-mismatch",
        lambda f: f.approval_mismatch and f.claim != "theirs" and _plan_answers_signal(f),
    ),
    *_section(
        _findings,
        Row("await-approval", "approval-required", lambda f: not f.plan_approved),
        Row("claim-plan", "plan-unclaimed", lambda f: f.claim == "none"),
        Row("execute-remediation", "plan-claimed", lambda f: f.claim == "ours"),
    ),
    # Clean: two-phase finalization; phase two once phase one has settled.
    *_section(
        _clean,
        Row("state-inconsistency", "plan-kind-mismatch", lambda f: f.plan_kind == "remediation"),
        *_section(
            _settled,
            Row("plan-finalization", "finalization-phase-two", lambda f: f.plan_kind is None),
            Row("await-approval", "approval-required", lambda f: not f.plan_approved),
            Row("claim-plan", "plan-unclaimed", lambda f: f.claim == "none"),
            Row("finish-finalization", "finalization-settled", lambda f: f.claim == "ours"),
            Row("wait", "finalization-claimed-by-other-wakeup", _always),
        ),
        Row("plan-finalization", "codex-clean", lambda f: f.plan_kind is None and f.claim in ("none", "ours")),
        Row("wait", "finalization-claimed-by-other-wakeup", lambda f: f.claim == "theirs"),
        Row("await-approval", "approval-required", lambda f: not f.plan_approved),
        Row("claim-plan", "plan-unclaimed", lambda f: f.claim == "none"),
        Row("execute-finalization", "plan-claimed", lambda f: f.claim == "ours"),
    ),
    # No answer yet.
    Row("state-inconsistency", "plan-without-signal", lambda f: f.plan_kind is not None),
    # A Completed row younger than a heartbeat: its review may not be served yet.
    Row("wait", "codex-review-settling", lambda f: f.review_settling),
    Row("request-timeout", "request-deadline-passed", lambda f: f.timed_out),
    # No 👀 and no answer long after the request: Codex never picked it up.
    # Never re-requested: the person decides (references/actions.md).
    Row("stop-reviewer-unavailable", "reviewer-not-responding", lambda f: f.not_responding),
    Row("wait", "codex-review-running", lambda f: f.review_running),
    Row("wait", "awaiting-codex-response", _always),
)

# Report-only: a classification, never a write. First match wins.
REPORT_ROWS: tuple[Row, ...] = (
    Row("report", "pr-merged", lambda f: f.state.pr_state == "merged"),
    Row("report", "pr-closed", lambda f: f.state.pr_state == "closed"),
    Row("report", "no-request", lambda f: f.state.request_comment_id is None),
    Row("report", "reviewer-unavailable", lambda f: f.unavailable, "row-then-unavailable-kinds"),
    Row("report", "reviewer-reply-unrecognized", lambda f: bool(f.unrecognized)),
    Row("report", "findings", _findings),
    Row("report", "clean", _clean),
    Row("report", "review-failed", lambda f: f.review_failed),
    Row("report", "review-settling", lambda f: f.review_settling),
    Row("report", "timed-out", lambda f: f.timed_out),
    Row("report", "reviewer-not-responding", lambda f: f.not_responding),
    Row("report", "review-running", lambda f: f.review_running),
    Row("report", "awaiting-response", _always),
)


def reasons(row: Row, facts: Facts) -> list[str]:
    if row.reasons_from == "inconsistencies":
        return list(facts.inconsistencies)
    if row.reasons_from == "row-then-inconsistencies":
        return [row.reason, *facts.inconsistencies]
    if row.reasons_from == "row-then-unavailable-kinds":
        return [row.reason, *(f"{row.reason}-{kind}" for kind in facts.unavailable_kinds)]
    return [row.reason]


def decide(facts: Facts) -> tuple[ActionName, list[str]]:
    """The first matching row's action and its reason codes."""
    table = REPORT_ROWS if facts.state.mode == "report-only" else ROWS
    for row in table:
        if row.when(facts):
            return row.action, reasons(row, facts)
    raise LookupError("the action table ends with a catch-all row")
