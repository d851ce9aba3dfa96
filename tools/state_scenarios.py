"""Named recurring-state scenarios: one per action and per reason code.

Each scenario is (name, state, options, expected action, expected reasons);
options are the CLI flags (--now, --approved-hash) the scenario needs.
"""

from __future__ import annotations

import copy
from typing import Any

from evaluator import policy
from evaluator.formats import parse_timestamp
from tools import samples
from tools.samples import (
    OTHER_WAKEUP_ID,
    automation_record,
    claim,
    finalization_manifest,
    recurring_state,
    remediation_manifest,
    response,
    sha,
    thread,
    with_clean,
    with_findings,
    with_plan,
)

LATER = "2026-11-29T10:06:00Z"


# Ten minutes after the request: Codex's 👀 was due by then.
NOT_PICKED_UP = "2026-11-29T10:10:00Z"


def unacknowledged(observed_at: str = NOT_PICKED_UP) -> dict[str, Any]:
    """The collector's observation that the current request carries no 👀 by Codex at ``observed_at``."""
    return {"created_at": observed_at, "id": str(samples.REQUEST_ID), "kind": policy.UNACKNOWLEDGED}


def edit(state: dict[str, Any], **changes: Any) -> dict[str, Any]:
    state = copy.deepcopy(state)
    state.update(copy.deepcopy(changes))
    return state


def completed_row(content_version_at: str) -> dict[str, Any]:
    return {
        "comment_id": "2000000002",
        "content_version_at": content_version_at,
        "head_sha": sha("head-1"),
        "status": "completed",
    }


def commitless(source: str, identifier: int, *, clean: bool, created_at: str = "2026-11-29T10:05:00Z") -> dict:
    """A Codex issue comment that names no commit (the one-line clean, or findings with no reviewed commit)."""
    after_request = parse_timestamp(created_at) > parse_timestamp("2026-11-29T10:00:00Z")
    trigger = samples.REQUEST_ID if after_request else None
    return {**response(source, identifier, clean=clean, created_at=created_at, trigger=trigger), "commit_sha": None}


def unrecognized_state(state: dict[str, Any], created_at: str = "2026-11-29T10:05:00Z") -> dict[str, Any]:
    """A reply Codex posted that is no documented form: a response, and listed as unrecognised."""
    reply = {
        "created_at": created_at,
        "excerpt": "Codex is thinking about it.",
        "id": "2000000003",
        "source": "issue-comment",
    }
    return edit(
        state,
        observed_at=LATER,
        responses=[commitless("issue-comment", 2000000003, clean=False, created_at=created_at)],
        unrecognized_replies=[reply],
    )


def findings_state(mode: str = "autonomous", **changes: Any) -> dict[str, Any]:
    return edit(with_findings(recurring_state(mode, observed_at=LATER)), **changes)


def clean_state(mode: str = "autonomous", **changes: Any) -> dict[str, Any]:
    return edit(with_clean(recurring_state(mode, observed_at=LATER)), **changes)


def remediation_planned(mode: str = "autonomous", **changes: Any) -> dict[str, Any]:
    state = findings_state(mode, **changes)
    return with_plan(state, remediation_manifest(state))


def remediation_claimed(
    wakeup_id: str = samples.WAKEUP_ID, created_at: str = LATER, mode: str = "autonomous"
) -> dict[str, Any]:
    state = remediation_planned(mode)
    state["claims"] = [
        claim(state, "remediation", state["remediation_plan_hash"], wakeup_id=wakeup_id, created_at=created_at)
    ]
    return state


def finalization_planned(mode: str = "autonomous", **changes: Any) -> dict[str, Any]:
    state = clean_state(mode, **changes)
    return with_plan(state, finalization_manifest(state))


def finalization_claimed(wakeup_id: str = samples.WAKEUP_ID) -> dict[str, Any]:
    state = finalization_planned(eligible_codex_threads=[thread("ccc3")])
    state["claims"] = [claim(state, "finalization", state["finalization_plan_hash"], wakeup_id=wakeup_id)]
    return state


def phase_one_done(**changes: Any) -> dict[str, Any]:
    """After mark-ready and resolve: a fresh snapshot with the phase-one claim on GitHub."""
    first = finalization_claimed()
    state = edit(
        first,
        observed_at="2026-11-29T10:08:00Z",
        pr_is_draft=False,
        eligible_codex_threads=[],
        finalization_manifest=None,
        finalization_plan_hash=None,
    )
    state["claims"][0]["created_at"] = "2026-11-29T10:07:00Z"
    return edit(state, **changes)


def phase_two_planned(mode: str = "autonomous") -> dict[str, Any]:
    state = phase_one_done(mode=mode)
    return with_plan(state, finalization_manifest(state))


def phase_two_claimed(mode: str = "autonomous", wakeup_id: str = samples.WAKEUP_ID) -> dict[str, Any]:
    state = phase_two_planned(mode)
    state["claims"].append(
        claim(state, "cleanup", state["finalization_plan_hash"], comment_id=2200000002, wakeup_id=wakeup_id)
    )
    return state


def other_cleanup_claim() -> dict[str, Any]:
    """Another wakeup claimed phase two for a plan built from a slightly different snapshot."""
    state = phase_two_claimed(wakeup_id=OTHER_WAKEUP_ID)
    state["gates"]["checks"] = "pending"
    state["finalization_manifest"] = finalization_manifest(state)
    return with_plan(state, state["finalization_manifest"])


def bootstrap_state() -> dict[str, Any]:
    return recurring_state(
        pr_is_draft=True,
        expected_prompt_sha256=None,
        automations=[automation_record(status="PAUSED", prompt_sha256=samples.hexdigest("inert-stub"))],
    )


def report_state(**changes: Any) -> dict[str, Any]:
    state = recurring_state("report-only", observed_at=LATER)
    for name in (
        "remote_name",
        "current_remote_name",
        "owned_automation_id",
        "evaluator_sha256",
        "current_evaluator_sha256",
        "expected_prompt_sha256",
        "wakeup_id",
    ):
        state[name] = None
    state["automations"] = []
    return edit(state, **changes)


def stale_remediation() -> dict[str, Any]:
    state = remediation_planned()
    state["actionable_codex_threads"] = state["actionable_codex_threads"][:1]
    return state


def stale_finalization() -> dict[str, Any]:
    state = finalization_planned()
    state["gates"]["checks"] = "pending"
    return state


def scenarios() -> list[tuple[str, dict[str, Any], dict[str, str], str, list[str]]]:
    base = recurring_state()
    head2 = sha("head-2")
    found = findings_state()
    gated_plan = remediation_planned("approval-gated")
    gated_final = finalization_planned("approval-gated")
    gated_phase_two = phase_two_claimed("approval-gated")
    rows = [
        ("wait--awaiting-codex-response", base, {}, "wait", ["awaiting-codex-response"]),
        (
            "wait--codex-review-running",
            edit(
                base,
                summary_rows=[
                    {
                        "comment_id": "2000000002",
                        "content_version_at": "2026-11-29T10:01:00Z",
                        "head_sha": sha("head-1"),
                        "status": "running",
                    }
                ],
            ),
            {},
            "wait",
            ["codex-review-running"],
        ),
        (
            "wait--plan-claimed-by-other-wakeup",
            remediation_claimed(OTHER_WAKEUP_ID),
            {},
            "wait",
            ["plan-claimed-by-other-wakeup"],
        ),
        (
            "wait--finalization-claimed-by-other-wakeup",
            finalization_claimed(OTHER_WAKEUP_ID),
            {},
            "wait",
            ["finalization-claimed-by-other-wakeup"],
        ),
        (
            "wait--remediation-in-progress",
            edit(
                remediation_claimed(),
                current_head_sha=head2,
                remote_head_sha=head2,
                remediation_manifest=None,
                remediation_plan_hash=None,
                execution_boundary=None,
            ),
            {},
            "wait",
            ["remediation-in-progress"],
        ),
        ("plan-remediation--codex-findings", found, {}, "plan-remediation", ["codex-findings"]),
        (
            "plan-remediation--findings-in-response-only",
            edit(found, actionable_codex_threads=[]),
            {},
            "plan-remediation",
            ["codex-findings"],
        ),
        ("await-approval--remediation", gated_plan, {}, "await-approval", ["approval-required"]),
        (
            "await-approval--wrong-hash",
            gated_plan,
            {"approved_hash": samples.hexdigest("other-plan")},
            "await-approval",
            ["approved-hash-mismatch"],
        ),
        (
            "await-approval--stale-hash-in-state",
            edit(gated_final, approved_plan_hash=samples.hexdigest("earlier-plan")),
            {},
            "await-approval",
            ["approved-hash-mismatch"],
        ),
        (
            "await-approval--phase-one-hash-for-phase-two",
            gated_phase_two,
            {"approved_hash": gated_phase_two["claims"][0]["plan_hash"]},
            "await-approval",
            ["approved-hash-mismatch"],
        ),
        ("await-approval--finalization", gated_final, {}, "await-approval", ["approval-required"]),
        ("await-approval--finalization-phase-two", gated_phase_two, {}, "await-approval", ["approval-required"]),
        (
            "claim-plan--remediation-approved-by-flag",
            gated_plan,
            {"approved_hash": gated_plan["remediation_plan_hash"]},
            "claim-plan",
            ["plan-unclaimed"],
        ),
        (
            "claim-plan--remediation-approved-in-state",
            edit(gated_plan, approved_plan_hash=gated_plan["remediation_plan_hash"]),
            {},
            "claim-plan",
            ["plan-unclaimed"],
        ),
        ("claim-plan--remediation-autonomous", remediation_planned(), {}, "claim-plan", ["plan-unclaimed"]),
        ("claim-plan--finalization", finalization_planned(), {}, "claim-plan", ["plan-unclaimed"]),
        ("execute-remediation--plan-claimed", remediation_claimed(), {}, "execute-remediation", ["plan-claimed"]),
        ("plan-finalization--codex-clean", clean_state(), {}, "plan-finalization", ["codex-clean"]),
        (
            "plan-finalization--plus-one-reaction",
            edit(
                base, observed_at=LATER, plus_one_reactions=[{"created_at": "2026-11-29T10:04:00Z", "id": "3000000001"}]
            ),
            {},
            "plan-finalization",
            ["codex-clean"],
        ),
        (
            "wait--summary-completed-before-request",
            edit(
                base,
                observed_at=LATER,
                summary_rows=[
                    {
                        "comment_id": "2000000002",
                        "content_version_at": "2026-11-29T09:59:00Z",
                        "head_sha": sha("head-1"),
                        "status": "completed",
                    }
                ],
            ),
            {},
            "wait",
            ["awaiting-codex-response"],
        ),
        (
            "wait--unbound-answer-blocks-clean",
            edit(
                base,
                observed_at=LATER,
                responses=[{**response("issue-comment", 2000000005, clean=False), "commit_sha": sha("head-0")}],
                plus_one_reactions=[{"created_at": "2026-11-29T10:06:00Z", "id": "3000000001"}],
            ),
            {},
            "wait",
            ["awaiting-codex-response"],
        ),
        (
            "request-timeout--answer-edited-after-deadline",
            edit(
                base,
                observed_at="2026-11-29T11:10:00Z",
                responses=[
                    {**response("issue-comment", 2000000003, clean=True), "content_version_at": "2026-11-29T11:00:00Z"}
                ],
            ),
            {},
            "request-timeout",
            ["request-deadline-passed"],
        ),
        (
            "plan-remediation--finding-edited-after-deadline",
            late_finding(content_version_at="2026-11-29T10:35:00Z"),
            {},
            "plan-remediation",
            ["codex-findings"],
        ),
        (
            "plan-remediation--finding-posted-after-deadline",
            late_finding(created_at="2026-11-29T10:31:00Z", content_version_at="2026-11-29T10:31:00Z"),
            {},
            "plan-remediation",
            ["codex-findings"],
        ),
        (
            "request-timeout--unbound-answer-edited-after-deadline",
            late_finding(content_version_at="2026-11-29T10:35:00Z", commit_sha=sha("head-0")),
            {},
            "request-timeout",
            ["request-deadline-passed"],
        ),
        (
            "report--finding-edited-after-deadline",
            late_finding(report_state(), content_version_at="2026-11-29T10:35:00Z"),
            {},
            "report",
            ["findings"],
        ),
        (
            "plan-remediation--findings-after-phase-one",
            with_findings(phase_one_done()),
            {},
            "plan-remediation",
            ["codex-findings"],
        ),
        (
            "wait--cleanup-claimed-by-other-wakeup-with-another-plan",
            other_cleanup_claim(),
            {},
            "wait",
            ["finalization-claimed-by-other-wakeup"],
        ),
        (
            "plan-finalization--summary-completed",
            edit(base, observed_at="2026-11-29T10:07:00Z", summary_rows=[completed_row("2026-11-29T10:05:00Z")]),
            {},
            "plan-finalization",
            ["codex-clean"],
        ),
        (
            "wait--codex-review-settling",
            edit(base, observed_at=LATER, summary_rows=[completed_row("2026-11-29T10:05:00Z")]),
            {},
            "wait",
            ["codex-review-settling"],
        ),
        (
            "wait--summary-running-blocks-plus-one",
            edit(
                base,
                observed_at=LATER,
                summary_rows=[{**completed_row("2026-11-29T10:01:00Z"), "status": "running"}],
                plus_one_reactions=[{"created_at": "2026-11-29T10:04:00Z", "id": "3000000001"}],
            ),
            {},
            "wait",
            ["codex-review-running"],
        ),
        (
            "plan-finalization--clean-comment-naming-no-commit",
            edit(base, observed_at=LATER, responses=[commitless("issue-comment", 2000000003, clean=True)]),
            {},
            "plan-finalization",
            ["codex-clean"],
        ),
        (
            "plan-remediation--findings-comment-naming-no-commit",
            edit(base, observed_at=LATER, responses=[commitless("issue-comment", 2000000003, clean=False)]),
            {},
            "plan-remediation",
            ["codex-findings"],
        ),
        (
            "stop-reviewer-unavailable--reviewer-reply-unrecognized",
            unrecognized_state(base),
            {},
            "stop-reviewer-unavailable",
            ["reviewer-reply-unrecognized"],
        ),
        (
            "stop-reviewer-unavailable--unrecognized-beside-clean",
            edit(
                unrecognized_state(base),
                plus_one_reactions=[{"created_at": "2026-11-29T10:04:00Z", "id": "3000000001"}],
            ),
            {},
            "stop-reviewer-unavailable",
            ["reviewer-reply-unrecognized"],
        ),
        (
            "wait--unrecognized-reply-of-an-earlier-request",
            edit(
                unrecognized_state(base, created_at="2026-11-29T09:58:00Z"),
                responses=[commitless("issue-comment", 2000000003, clean=False, created_at="2026-11-29T09:58:00Z")],
            ),
            {},
            "wait",
            ["awaiting-codex-response"],
        ),
        (
            "stop-reviewer-unavailable--codex-unavailable-kinds",
            edit(
                base,
                observed_at=LATER,
                unavailable_replies=[
                    {"created_at": "2026-11-29T10:03:00Z", "id": "2000000004", "kind": "setup"},
                    {"created_at": "2026-11-29T10:04:00Z", "id": "2000000006", "kind": "error"},
                ],
            ),
            {},
            "stop-reviewer-unavailable",
            ["codex-unavailable", "codex-unavailable-error", "codex-unavailable-setup"],
        ),
        (
            "plan-finalization--finalization-phase-two",
            phase_one_done(),
            {},
            "plan-finalization",
            ["finalization-phase-two"],
        ),
        ("execute-finalization--plan-claimed", finalization_claimed(), {}, "execute-finalization", ["plan-claimed"]),
        ("claim-plan--finalization-phase-two", phase_two_planned(), {}, "claim-plan", ["plan-unclaimed"]),
        (
            "wait--phase-two-claimed-by-other-wakeup",
            phase_two_claimed(wakeup_id=OTHER_WAKEUP_ID),
            {},
            "wait",
            ["finalization-claimed-by-other-wakeup"],
        ),
        (
            "finish-finalization--finalization-settled",
            phase_two_claimed(),
            {},
            "finish-finalization",
            ["finalization-settled"],
        ),
        (
            "finish-finalization--approved",
            gated_phase_two,
            {"approved_hash": gated_phase_two["finalization_plan_hash"]},
            "finish-finalization",
            ["finalization-settled"],
        ),
        (
            "done--loop-finished",
            phase_one_done(automations=[], observed_at="2026-11-29T10:10:00Z"),
            {},
            "done",
            ["loop-finished"],
        ),
        (
            "request-timeout--request-deadline-passed",
            base,
            {"now": "2026-11-29T10:30:01Z"},
            "request-timeout",
            ["request-deadline-passed"],
        ),
        (
            "request-timeout--answer-after-deadline",
            edit(
                base,
                observed_at="2026-11-29T10:40:00Z",
                responses=[response("issue-comment", 2000000003, clean=True, created_at="2026-11-29T10:31:00Z")],
            ),
            {},
            "request-timeout",
            ["request-deadline-passed"],
        ),
        (
            "stop-max-rounds--max-fix-rounds-reached",
            max_rounds_state(),
            {},
            "stop-max-rounds",
            ["max-fix-rounds-reached"],
        ),
        ("stop-pr-closed--pr-closed", edit(base, pr_state="closed"), {}, "stop-pr-closed", ["pr-closed"]),
        ("stop-pr-closed--pr-merged", edit(base, pr_state="merged"), {}, "stop-pr-closed", ["pr-merged"]),
        (
            "stop-pr-closed--branch-deleted-after-merge",
            edit(base, pr_state="merged", remote_head_sha=None),
            {},
            "stop-pr-closed",
            ["pr-merged", "remote-head-drift"],
        ),
        (
            "stop-pr-closed--pr-closed-with-plan",
            edit(finalization_planned(), pr_state="closed"),
            {},
            "stop-pr-closed",
            ["pr-closed"],
        ),
        (
            # Stale by its gates only: no remote, base or branch drift, so the stop may still clean up.
            "stop-pr-closed--pr-closed-with-plan-on-other-gates",
            edit(stale_finalization(), pr_state="closed"),
            {},
            "stop-pr-closed",
            ["pr-closed", "finalization-plan-stale"],
        ),
        (
            "state-inconsistency--closed-pr-with-plan-after-base-moved",
            edit(finalization_planned(), pr_state="closed", current_base_sha=sha("base-2")),
            {},
            "state-inconsistency",
            ["base-tip-drift", "finalization-plan-stale"],
        ),
        (
            "state-inconsistency--merged-pr-with-plan-and-branch-deleted",
            edit(finalization_planned(), pr_state="merged", current_base_sha=sha("merge-commit"), remote_head_sha=None),
            {},
            "state-inconsistency",
            ["base-tip-drift", "finalization-plan-stale", "remote-head-drift"],
        ),
        (
            "state-inconsistency--closed-pr-with-edited-evaluator",
            edit(base, pr_state="closed", current_evaluator_sha256=samples.hexdigest("edited")),
            {},
            "state-inconsistency",
            ["evaluator-digest-changed"],
        ),
        (
            "stop-reviewer-unavailable--codex-unavailable",
            edit(
                base,
                observed_at=LATER,
                unavailable_replies=[{"created_at": "2026-11-29T10:03:00Z", "id": "2000000004", "kind": "usage-limit"}],
            ),
            {},
            "stop-reviewer-unavailable",
            ["codex-unavailable", "codex-unavailable-usage-limit"],
        ),
        (
            "stop-reviewer-unavailable--reviewer-not-responding",
            edit(base, observed_at=NOT_PICKED_UP, unavailable_replies=[unacknowledged()]),
            {},
            "stop-reviewer-unavailable",
            ["reviewer-not-responding"],
        ),
        (
            # Observed before the acknowledgement was due: no evidence yet, the loop waits.
            "wait--unacknowledged-too-early",
            edit(base, observed_at=LATER, unavailable_replies=[unacknowledged(LATER)]),
            {},
            "wait",
            ["awaiting-codex-response"],
        ),
        (
            # An answer without the 👀 is an answer: the unacknowledged observation counts for nothing.
            "wait--unacknowledged-but-codex-running",
            edit(
                base,
                observed_at=NOT_PICKED_UP,
                unavailable_replies=[unacknowledged()],
                summary_rows=[
                    {
                        "comment_id": "2000000002",
                        "content_version_at": "2026-11-29T10:01:00Z",
                        "head_sha": sha("head-1"),
                        "status": "running",
                    }
                ],
            ),
            {},
            "wait",
            ["codex-review-running"],
        ),
        (
            "stop-reviewer-unavailable--codex-review-failed",
            edit(
                base,
                summary_rows=[
                    {
                        "comment_id": "2000000002",
                        "content_version_at": "2026-11-29T10:01:00Z",
                        "head_sha": sha("head-1"),
                        "status": "failed",
                    }
                ],
            ),
            {},
            "stop-reviewer-unavailable",
            ["codex-review-failed"],
        ),
        (
            "stop-recurring-finding--finding-recurred",
            edit(found, eligible_codex_threads=[thread("old9", body="P1 finding aaa1")]),
            {},
            "stop-recurring-finding",
            ["finding-recurred"],
        ),
        ("report--awaiting-response", report_state(), {}, "report", ["awaiting-response"]),
        ("report--findings", with_findings(report_state()), {}, "report", ["findings"]),
        ("report--clean", with_clean(report_state()), {}, "report", ["clean"]),
        (
            "report--no-request",
            report_state(
                request_comment_id=None,
                request_head_sha=None,
                request_created_at=None,
                request_deadline=None,
                request_key=None,
            ),
            {},
            "report",
            ["no-request"],
        ),
        ("report--pr-merged", report_state(pr_state="merged"), {}, "report", ["pr-merged"]),
        ("report--pr-closed", report_state(pr_state="closed"), {}, "report", ["pr-closed"]),
        (
            "report--reviewer-unavailable",
            report_state(
                unavailable_replies=[{"created_at": "2026-11-29T10:03:00Z", "id": "2000000004", "kind": "setup"}]
            ),
            {},
            "report",
            ["reviewer-unavailable", "reviewer-unavailable-setup"],
        ),
        (
            "report--reviewer-reply-unrecognized",
            unrecognized_state(report_state()),
            {},
            "report",
            ["reviewer-reply-unrecognized"],
        ),
        (
            "report--reviewer-not-responding",
            report_state(observed_at=NOT_PICKED_UP, unavailable_replies=[unacknowledged()]),
            {},
            "report",
            ["reviewer-not-responding"],
        ),
        (
            "report--review-settling",
            report_state(observed_at=LATER, summary_rows=[completed_row("2026-11-29T10:05:00Z")]),
            {},
            "report",
            ["review-settling"],
        ),
        (
            "report--review-failed",
            report_state(
                summary_rows=[
                    {
                        "comment_id": "2000000002",
                        "content_version_at": "2026-11-29T10:01:00Z",
                        "head_sha": sha("head-1"),
                        "status": "failed",
                    }
                ]
            ),
            {},
            "report",
            ["review-failed"],
        ),
        (
            "report--review-running",
            report_state(
                summary_rows=[
                    {
                        "comment_id": "2000000002",
                        "content_version_at": "2026-11-29T10:01:00Z",
                        "head_sha": sha("head-1"),
                        "status": "running",
                    }
                ]
            ),
            {},
            "report",
            ["review-running"],
        ),
        ("report--timed-out", report_state(), {"now": "2026-11-29T11:00:00Z"}, "report", ["timed-out"]),
    ]
    inconsistent = [
        ("user-drift", edit(base, current_authenticated_user_id=999)),
        ("evaluator-digest-changed", edit(base, current_evaluator_sha256=samples.hexdigest("edited-evaluator"))),
        ("remote-drift", edit(base, current_remote_name="upstream")),
        ("repository-drift", edit(base, pr_repository="octo-org/other")),
        ("pr-cross-repository", edit(base, pr_same_repository=False)),
        ("base-branch-drift", edit(base, current_base_branch="develop")),
        ("head-branch-drift", edit(base, current_head_branch="codex/other")),
        ("base-tip-drift", edit(base, current_base_sha=sha("base-2"))),
        ("remote-head-drift", edit(base, remote_head_sha=head2)),
        ("marker-anomaly", edit(base, marker_anomalies=["2000000009"])),
        ("head-drift", edit(base, current_head_sha=head2, remote_head_sha=head2)),
        (
            "claim-abandoned",
            edit(
                remediation_claimed(created_at="2026-11-29T09:40:00Z"),
                current_head_sha=head2,
                remote_head_sha=head2,
                remediation_manifest=None,
                remediation_plan_hash=None,
                execution_boundary=None,
            ),
        ),
        ("automation-missing", edit(base, automations=[])),
        ("wakeup-id-missing", edit(base, wakeup_id=None)),
        (
            "automation-duplicate",
            edit(base, automations=[automation_record(), automation_record(id="zz-copy", directory="zz-copy")]),
        ),
        ("automation-id-mismatch", edit(base, automations=[automation_record(id="other", directory="other")])),
        (
            "automation-unreadable",
            edit(
                base,
                automations=[
                    automation_record(
                        readable=False,
                        problem="automation-toml-malformed",
                        name=None,
                        status=None,
                        rrule=None,
                        prompt_sha256=None,
                    )
                ],
            ),
        ),
        ("automation-name-mismatch", edit(base, automations=[automation_record(name="my loop")])),
        ("automation-schedule-mismatch", edit(base, automations=[automation_record(rrule="FREQ=MINUTELY;INTERVAL=1")])),
        ("bootstrap-automation-paused", bootstrap_state()),
        (
            "automation-active-before-prompt",
            edit(bootstrap_state(), automations=[automation_record(prompt_sha256=samples.hexdigest("inert-stub"))]),
        ),
        ("automation-not-active", edit(base, automations=[automation_record(status="PAUSED")])),
        (
            "automation-prompt-mismatch",
            edit(base, automations=[automation_record(prompt_sha256=samples.hexdigest("edited-prompt"))]),
        ),
        ("remediation-plan-stale", stale_remediation()),
        ("finalization-plan-stale", stale_finalization()),
        ("plan-kind-mismatch", with_plan(found, finalization_manifest(found))),
        (
            "response-edited-before-created",
            late_finding(created_at="2026-11-29T10:31:00Z", content_version_at="2026-11-29T10:20:00Z"),
        ),
        ("response-trigger-mismatch", late_finding(trigger_request_comment_id=None)),
        ("plan-without-signal", with_plan(base, finalization_manifest(base))),
    ]
    rows += [
        (f"state-inconsistency--{reason}", state, {}, "state-inconsistency", [reason]) for reason, state in inconsistent
    ]
    conflict = edit(gated_plan, approved_plan_hash=gated_plan["remediation_plan_hash"])
    rows.append(
        (
            "state-inconsistency--approval-conflict",
            conflict,
            {"approved_hash": samples.hexdigest("other-plan")},
            "state-inconsistency",
            ["approval-conflict"],
        )
    )
    return rows


def late_finding(
    base: dict[str, Any] | None = None, observed_at: str = "2026-11-29T10:40:00Z", **response_changes: Any
) -> dict[str, Any]:
    """A Codex finding (a response only, no thread) next to a +1 bound in time.

    The +1 alone would make the state clean; the finding must win however
    late it was posted or edited.
    """
    finding = {
        **response("issue-comment", 2000000005, clean=False, created_at="2026-11-29T10:05:00Z"),
        **response_changes,
    }
    return edit(
        base or recurring_state(),
        observed_at=observed_at,
        responses=[finding],
        plus_one_reactions=[{"created_at": "2026-11-29T10:06:00Z", "id": "3000000001"}],
    )


def max_rounds_state() -> dict[str, Any]:
    keys = [f"{1900000001 + n}:{sha(f'round-{n}')}" for n in range(policy.MAX_FIX_ROUNDS)]
    request_id = 1900000001 + policy.MAX_FIX_ROUNDS
    head = sha("head-1")
    state = recurring_state(
        observed_at=LATER,
        fix_rounds=policy.MAX_FIX_ROUNDS,
        completed_request_keys=keys,
        request_comment_id=request_id,
        request_key=f"{request_id}:{head}",
    )
    return with_findings(state)
