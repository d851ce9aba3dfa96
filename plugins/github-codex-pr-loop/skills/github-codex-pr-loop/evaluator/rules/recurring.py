"""Rules that make a recurring state well-formed (violations reject the state).

Drift between well-formed observations is not a violation here: the action
machine turns it into a ``state-inconsistency`` action. What is rejected is a
state that contradicts itself or its formats (references/recurring-state.md): unsorted lists, a plan
hash that is not its manifest's digest, report-only fields that are not null.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from .. import codex_text, policy
from ..canonical import digest
from ..errors import Violation, pointer
from ..formats import REQUEST_KEY, parse_timestamp, request_key
from ..models.recurring import RecurringState
from .plan import fixed_value_violations

# Fields that must be null in report-only mode: that mode never reads a
# checkout, a remote or the automation registry, and never plans a write.
REPORT_ONLY_NULL = (
    "remote_name",
    "current_remote_name",
    "owned_automation_id",
    "evaluator_sha256",
    "current_evaluator_sha256",
    "expected_prompt_sha256",
    "wakeup_id",
    "execution_boundary",
    "remediation_manifest",
    "remediation_plan_hash",
    "finalization_manifest",
    "finalization_plan_hash",
    "approved_plan_hash",
)
# Fields a write mode cannot run without.
WRITE_MODE_REQUIRED = (
    "remote_name",
    "owned_automation_id",
    "evaluator_sha256",
    "current_evaluator_sha256",
    "request_comment_id",
)
REQUEST_FIELDS = ("request_comment_id", "request_head_sha", "request_created_at", "request_deadline", "request_key")


def canonical_pr_url(repository: str, pr_number: int) -> str:
    return f"https://{policy.HOST}/{repository}/pull/{pr_number}"


def _sorted_unique(items: Sequence[Any], key: Callable[[Any], Any], code: str, path: str, what: str) -> list[Violation]:
    keys = [key(item) for item in items]
    if keys != sorted(keys) or len(set(keys)) != len(keys):
        return [Violation(code, path, f"{what} must be sorted and unique")]
    return []


def response_order(response: Any) -> tuple[str, int]:
    return (response.source, int(response.id))


def ordering_violations(state: RecurringState, base: tuple[object, ...] = ()) -> list[Violation]:
    at = partial(pointer, *base)
    found = []
    found += _sorted_unique(
        state.responses,
        response_order,
        "responses-not-sorted",
        at("responses"),
        "responses (by source, then integer id)",
    )
    found += _sorted_unique(
        state.actionable_codex_threads,
        lambda t: t.id,
        "threads-not-sorted",
        at("actionable_codex_threads"),
        "threads (by id)",
    )
    found += _sorted_unique(
        state.eligible_codex_threads,
        lambda t: t.id,
        "threads-not-sorted",
        at("eligible_codex_threads"),
        "threads (by id)",
    )
    overlap = {t.id for t in state.actionable_codex_threads} & {t.id for t in state.eligible_codex_threads}
    if overlap:
        found.append(
            Violation(
                "threads-overlap",
                at("eligible_codex_threads"),
                f"threads {sorted(overlap)} are both actionable and eligible",
            )
        )
    found += _sorted_unique(
        state.claims, lambda c: c.comment_id, "claims-not-sorted", at("claims"), "claims (by comment id)"
    )
    found += _sorted_unique(
        state.plus_one_reactions,
        lambda r: int(r.id),
        "reactions-not-sorted",
        at("plus_one_reactions"),
        "reactions (by integer id)",
    )
    found += _sorted_unique(
        state.unavailable_replies,
        lambda r: int(r.id),
        "unavailable-replies-not-sorted",
        at("unavailable_replies"),
        "unavailable replies (by integer id)",
    )
    found += [
        Violation(
            "unacknowledged-not-current-request",
            at("unavailable_replies", index, "id"),
            f"an unacknowledged request must be the current one ({state.request_comment_id}), not {reply.id}",
        )
        for index, reply in enumerate(state.unavailable_replies)
        if reply.kind == policy.UNACKNOWLEDGED and reply.id != str(state.request_comment_id)
    ]
    found += _sorted_unique(
        state.unrecognized_replies,
        response_order,
        "unrecognized-replies-not-sorted",
        at("unrecognized_replies"),
        "unrecognized replies (by source, then integer id)",
    )
    found += _sorted_unique(
        state.marker_anomalies,
        int,
        "marker-anomalies-not-sorted",
        at("marker_anomalies"),
        "marker anomalies (by integer id)",
    )
    found += _sorted_unique(
        state.automations, lambda a: a.id, "automations-not-sorted", at("automations"), "automations (by id)"
    )
    comment_ids = [int(row.comment_id) for row in state.summary_rows]
    if comment_ids != sorted(comment_ids):
        found.append(
            Violation(
                "summary-rows-not-sorted", at("summary_rows"), "summary rows must be grouped by ascending comment id"
            )
        )
    return found


def unrecognized_reply_violations(state: RecurringState, base: tuple[object, ...] = ()) -> list[Violation]:
    """An unrecognised reply is one of the responses, and its excerpt is one the collector could have made.

    The excerpt reaches a person through the stop's output: a state that
    carries a long, unredacted or unprintable one is refused, not shown.
    """
    found = []
    responses = {(r.source, r.id): r.created_at for r in state.responses}
    for index, reply in enumerate(state.unrecognized_replies):
        problem = codex_text.excerpt_problem(reply.excerpt)
        if problem is not None:
            found.append(
                Violation("excerpt-invalid", pointer(*base, "unrecognized_replies", index, "excerpt"), problem)
            )
        if responses.get((reply.source, reply.id)) != reply.created_at:
            found.append(
                Violation(
                    "unrecognized-reply-not-a-response",
                    pointer(*base, "unrecognized_replies", index),
                    f"no {reply.source} response {reply.id} created at {reply.created_at} in responses",
                )
            )
    return found


def request_violations(state: RecurringState, base: tuple[object, ...] = ()) -> list[Violation]:
    at = partial(pointer, *base)
    found = []
    keys = list(state.completed_request_keys)
    for index, key in enumerate(keys):
        if not REQUEST_KEY.matches(key):
            found.append(
                Violation(
                    "request-key-invalid",
                    pointer(*base, "completed_request_keys", index),
                    f"{key!r} is not <comment-id>:<40-hex-sha>",
                )
            )
    if not found:
        found += _sorted_unique(
            keys,
            lambda k: int(k.split(":")[0]),
            "completed-request-keys-not-sorted",
            at("completed_request_keys"),
            "completed request keys (by comment id)",
        )
    if len(keys) != state.fix_rounds:
        found.append(
            Violation(
                "fix-rounds-mismatch",
                at("fix_rounds"),
                f"fix_rounds is {state.fix_rounds} but {len(keys)} earlier requests are completed",
            )
        )
    present = [name for name in REQUEST_FIELDS if getattr(state, name) is not None]
    if present and len(present) != len(REQUEST_FIELDS):
        return found + [
            Violation(
                "request-checkpoint-partial", at(name), "the request checkpoint fields must be all null or all set"
            )
            for name in REQUEST_FIELDS
            if getattr(state, name) is None
        ]
    comment_id, head, created, deadline = (
        state.request_comment_id,
        state.request_head_sha,
        state.request_created_at,
        state.request_deadline,
    )
    if comment_id is None or head is None or created is None or deadline is None:
        return found  # no request yet: all five are null
    expected_key = request_key(comment_id, head)
    if state.request_key != expected_key:
        found.append(
            Violation(
                "request-key-mismatch", at("request_key"), f"observed {state.request_key!r}, expected {expected_key!r}"
            )
        )
    if state.request_key in keys:
        found.append(
            Violation(
                "request-key-mismatch", at("completed_request_keys"), "the current request cannot also be completed"
            )
        )
    if parse_timestamp(deadline) != parse_timestamp(created) + policy.REQUEST_TIMEOUT:
        message = f"the deadline must be exactly {policy.REQUEST_TIMEOUT} after request_created_at"
        found.append(Violation("request-deadline-not-policy", at("request_deadline"), message))
    return found


def mode_violations(state: RecurringState, base: tuple[object, ...] = ()) -> list[Violation]:
    found = []
    if state.mode == "report-only":
        found += [
            Violation(
                "report-only-field-not-null",
                pointer(*base, name),
                "report-only never reads a checkout, a remote or the registry, and never plans",
            )
            for name in REPORT_ONLY_NULL
            if getattr(state, name) is not None
        ]
        if state.automations:
            found.append(
                Violation(
                    "report-only-field-not-null",
                    pointer(*base, "automations"),
                    "report-only never reads the automation registry: automations must be empty",
                )
            )
    else:
        found += [
            Violation("write-mode-field-null", pointer(*base, name), f"mode {state.mode} requires {name}")
            for name in WRITE_MODE_REQUIRED
            if getattr(state, name) is None
        ]
    return found


def plan_hash_violations(state: RecurringState, raw: dict[str, Any], base: tuple[object, ...] = ()) -> list[Violation]:
    found = []
    for kind in ("remediation", "finalization"):
        manifest, plan_hash = raw[f"{kind}_manifest"], raw[f"{kind}_plan_hash"]
        if (manifest is None) != (plan_hash is None):
            found.append(
                Violation(
                    "plan-hash-missing",
                    pointer(*base, f"{kind}_plan_hash"),
                    f"{kind}_manifest and {kind}_plan_hash must be both null or both set",
                )
            )
        elif manifest is not None and digest(manifest) != plan_hash:
            found.append(
                Violation(
                    f"{kind}-plan-hash-mismatch",
                    pointer(*base, f"{kind}_plan_hash"),
                    f"observed {plan_hash}, the manifest digests to {digest(manifest)}",
                )
            )
    if raw["remediation_manifest"] is not None and raw["finalization_manifest"] is not None:
        found.append(
            Violation("plans-conflict", pointer(*base, "finalization_manifest"), "a state carries at most one plan")
        )
    if (raw["remediation_manifest"] is None) != (raw["execution_boundary"] is None):
        found.append(
            Violation(
                "execution-boundary-presence",
                pointer(*base, "execution_boundary"),
                "the execution boundary is observed exactly when a remediation plan is built",
            )
        )
    return found


def approval_violations(state: RecurringState, cli_approved: str | None) -> list[Violation]:
    """Outside approval-gated mode nobody approves a plan, so an ``--approved-hash``
    is only accepted when it is exactly the state's plan hash (as ``--initial``
    requires of its plan); anything else is rejected, never ignored."""
    if cli_approved is None or state.mode == "approval-gated":
        return []
    kind = "remediation" if state.remediation_plan_hash is not None else "finalization"
    plan_hash = getattr(state, f"{kind}_plan_hash")
    if plan_hash is None:
        message = f"--approved-hash {cli_approved} was given, but this {state.mode} state carries no plan to approve"
        return [Violation("approved-hash-without-plan", "", message)]
    if cli_approved != plan_hash:
        message = f"approved {cli_approved}, the plan hash is {plan_hash}"
        return [Violation("plan-hash-mismatch", pointer(f"{kind}_plan_hash"), message)]
    return []


def state_violations(state: RecurringState, raw: dict[str, Any], base: tuple[object, ...] = ()) -> list[Violation]:
    at = partial(pointer, *base)
    found = fixed_value_violations(state, at)
    if state.pr_url != canonical_pr_url(state.repository, state.pr_number):
        found.append(
            Violation(
                "pr-url-not-canonical",
                at("pr_url"),
                f"observed {state.pr_url!r}, expected {canonical_pr_url(state.repository, state.pr_number)!r}",
            )
        )
    for index, response in enumerate(state.responses):
        if response.zero_findings_signal and response.source != "issue-comment":
            found.append(
                Violation(
                    "response-signal-source-invalid",
                    pointer(*base, "responses", index, "zero_findings_signal"),
                    f"only an issue comment carries Codex's no-findings text; a {response.source} cannot",
                )
            )
        if response.bot_id != policy.TRUSTED_CODEX_BOT_ID:
            found.append(
                Violation(
                    "response-bot-untrusted",
                    pointer(*base, "responses", index, "bot_id"),
                    f"bot {response.bot_id} is not the trusted Codex account {policy.TRUSTED_CODEX_BOT_ID}",
                )
            )
    if state.head_branch == state.base_branch:
        found.append(
            Violation("head-branch-equals-base", at("head_branch"), f"head and base are both {state.base_branch!r}")
        )
    return (
        found
        + ordering_violations(state, base)
        + unrecognized_reply_violations(state, base)
        + request_violations(state, base)
        + mode_violations(state, base)
        + plan_hash_violations(state, raw, base)
    )
