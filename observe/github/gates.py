"""Merge gates: GitHub's own verdicts first, the REST rules only where GitHub leaves a gap.

Every gate is "pass", "fail", "pending" or "unknown". When several facts feed
one gate the worst wins, in the order fail > unknown > pending > pass: a gate
never passes while anything it depends on is failing, unreadable or waiting.
Every enum value GitHub documents for an input is listed in a table below;
any other value maps to "unknown". references/github-observations.md has the
mapping as a table with each value's documented meaning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from observe.github.merge_state import MergeState, RollupContext

PASS, FAIL, PENDING, UNKNOWN = "pass", "fail", "pending", "unknown"
_SEVERITY = {PASS: 0, PENDING: 1, UNKNOWN: 2, FAIL: 3}

# CheckRun.status (CheckStatusState); COMPLETED defers to the conclusion.
CHECK_STATUS = {
    "COMPLETED": None,
    "IN_PROGRESS": PENDING,
    "PENDING": PENDING,
    "QUEUED": PENDING,
    "REQUESTED": PENDING,
    "WAITING": PENDING,
}
# CheckRun.conclusion (CheckConclusionState). Neutral and skipped satisfy a required check.
CHECK_CONCLUSION = {
    "SUCCESS": PASS,
    "NEUTRAL": PASS,
    "SKIPPED": PASS,
    "ACTION_REQUIRED": FAIL,
    "CANCELLED": FAIL,
    "FAILURE": FAIL,
    "STALE": FAIL,  # GitHub gave up on it; it will not turn green by waiting
    "STARTUP_FAILURE": FAIL,
    "TIMED_OUT": FAIL,
}
# StatusContext.state and StatusCheckRollup.state (StatusState).
STATUS_STATE = {"SUCCESS": PASS, "PENDING": PENDING, "EXPECTED": PENDING, "FAILURE": FAIL, "ERROR": FAIL}
# PullRequest.reviewDecision (PullRequestReviewDecision); null is handled in approvals_gate.
REVIEW_DECISION = {"APPROVED": PASS, "REVIEW_REQUIRED": PENDING, "CHANGES_REQUESTED": FAIL}
# PullRequest.mergeable (MergeableState): merge conflicts only.
MERGEABLE = {"MERGEABLE": PASS, "UNKNOWN": PENDING, "CONFLICTING": FAIL}

# PullRequest.mergeStateStatus (MergeStateStatus), read twice: what it says about the merge as
# a whole (mergeability) and whether GitHub has ruled on the branch's requirements.
ALLOWED, BLOCKED, BEHIND, UNDECIDED, COMPUTING = "allowed", "blocked", "behind", "undecided", "computing"
MERGE_STATE_STATUS = {
    # value: (mergeability, requirements verdict)
    "CLEAN": (PASS, ALLOWED),
    "HAS_HOOKS": (PASS, ALLOWED),
    "UNSTABLE": (PASS, ALLOWED),  # failing checks that are not required: the checks gate says so
    "BLOCKED": (PENDING, BLOCKED),  # a requirement is unmet; approvals and branch_protection say which
    "BEHIND": (FAIL, BEHIND),  # head must be brought up to date with the base first
    "DIRTY": (FAIL, UNDECIDED),  # conflicts hide whether the requirements are met
    "DRAFT": (PENDING, UNDECIDED),  # deprecated in favour of isDraft, which is read as well
    "UNKNOWN": (PENDING, COMPUTING),  # GitHub is still computing
}

# Ruleset rule types (GET /repos/{o}/{r}/rules/branches/{b}) by what they do to a PR merge.
RULES_WITHOUT_MERGE_EFFECT = frozenset(
    {"creation", "deletion", "non_fast_forward", "required_linear_history", "branch_name_pattern", "tag_name_pattern"}
)
RULES_READ_ELSEWHERE = frozenset({"pull_request", "required_status_checks", "merge_queue"})
# Checked on the push that the merge itself makes, which no merge state reports in advance.
RULES_ON_THE_MERGE_PUSH = frozenset(
    {
        "commit_message_pattern", "commit_author_email_pattern", "committer_email_pattern", "file_path_restriction",
        "max_file_path_length", "file_extension_restriction", "max_file_size",
    }
)
# Everything else ("update", "required_signatures", "required_deployments", "workflows",
# "code_scanning", new types) is a requirement this observer does not evaluate: unknown.


@dataclass(frozen=True)
class Protection:
    """What REST says protects the base branch: classic rules and active ruleset rules.

    ``classic`` is ("protected", rules) | ("unprotected", None) | ("unknown", None);
    ``rulesets`` is ("read", [rule, ...]) | ("unknown", None).
    """

    classic: tuple[str, Any]
    rulesets: tuple[str, Any]

    @property
    def classic_rules(self) -> dict[str, Any]:
        state, rules = self.classic
        return rules if state == "protected" and isinstance(rules, dict) else {}

    def ruleset_rules(self, rule_type: str) -> list[dict[str, Any]]:
        state, rules = self.rulesets
        if state != "read":
            return []
        return [rule for rule in rules if rule.get("type") == rule_type]


def worst(outcomes: Iterable[str]) -> str:
    return max(outcomes, key=_SEVERITY.__getitem__, default=PASS)


def context_outcome(context: RollupContext) -> str:
    if context.kind == "CheckRun":
        if context.status not in CHECK_STATUS:
            return UNKNOWN
        waiting = CHECK_STATUS[context.status]
        return waiting if waiting is not None else CHECK_CONCLUSION.get(context.conclusion or "", UNKNOWN)
    if context.kind == "StatusContext":
        return STATUS_STATE.get(context.state or "", UNKNOWN)
    return UNKNOWN


def checks_gate(merge: MergeState) -> str:
    """Every check run and commit status on the head commit, and GitHub's rollup of them.

    No rollup at all passes: there is nothing to wait for. Required checks
    that have not reported yet are branch_protection's business.
    """
    if merge.rollup_state is None:
        return PASS
    return worst([STATUS_STATE.get(merge.rollup_state, UNKNOWN), *(context_outcome(c) for c in merge.contexts)])


def approvals_gate(merge: MergeState, protection: Protection) -> str:
    """GitHub's reviewDecision; null means no rule asks for a review.

    GitHub alone knows who has write access, who pushed last and who owns
    the code, so the reviews themselves are not recounted here. A null
    decision while REST shows a rule that requires approvals is a
    contradiction between two answers, so unknown.
    """
    if merge.review_decision is not None:
        return REVIEW_DECISION.get(merge.review_decision, UNKNOWN)
    return UNKNOWN if _reviews_required(protection) else PASS


def _reviews_required(protection: Protection) -> bool:
    classic = protection.classic_rules.get("required_pull_request_reviews")
    if isinstance(classic, dict) and _asks_for_approval(classic, "require_code_owner_reviews"):
        return True
    for rule in protection.ruleset_rules("pull_request"):
        parameters = rule.get("parameters")
        if not isinstance(parameters, dict) or _asks_for_approval(parameters, "require_code_owner_review"):
            return True
    return False


def _asks_for_approval(rule: dict[str, Any], code_owner_key: str) -> bool:
    return rule.get("required_approving_review_count") != 0 or rule.get(code_owner_key) is True


def mergeability_gate(pr_state: str, rest_draft: bool, merge: MergeState) -> str:
    """Closed or merged cannot merge; a draft waits; then mergeable and mergeStateStatus."""
    if pr_state != "open":
        return FAIL
    draft = PENDING if merge.is_draft or rest_draft else PASS
    overall = MERGE_STATE_STATUS.get(merge.merge_state_status, (UNKNOWN, None))[0]
    return worst([draft, MERGEABLE.get(merge.mergeable, UNKNOWN), overall])


def branch_protection_gate(
    merge: MergeState, protection: Protection, approvals: str, unresolved_threads: int, authenticated_user_id: int
) -> str:
    """The base branch's requirements, with GitHub's mergeStateStatus as the verdict.

    When GitHub allows the merge (CLEAN, HAS_HOOKS, UNSTABLE) only what it
    does not rule on in advance can still hold the merge back. BEHIND fails.
    BLOCKED takes the worst requirement this observer can see, and unknown
    when none explains the block. When GitHub has not ruled (DIRTY, DRAFT,
    UNKNOWN, an undocumented value) the requirements are derived from REST.
    """
    verdict = MERGE_STATE_STATUS.get(merge.merge_state_status, (UNKNOWN, None))[1]
    always = _outside_the_merge_state(merge, protection, authenticated_user_id)
    if verdict == ALLOWED:
        return worst(always)
    if verdict == BEHIND:
        return FAIL
    seen = worst([*always, *_requirements(merge, protection, approvals, unresolved_threads)])
    if verdict == BLOCKED:
        return seen if seen != PASS else UNKNOWN
    if verdict == COMPUTING:
        return worst([seen, PENDING])
    if verdict == UNDECIDED:
        return seen
    return worst([seen, UNKNOWN])


def _outside_the_merge_state(merge: MergeState, protection: Protection, authenticated_user_id: int) -> list[str]:
    """What can stop the merge even when GitHub's merge state allows it."""
    parts = []
    if merge.merge_queue_enabled:
        parts.append(PENDING)  # the merge happens through the queue, after its own checks
    classic = protection.classic_rules
    if _enabled(classic.get("lock_branch")):
        parts.append(FAIL)
    restrictions = classic.get("restrictions")
    if restrictions is not None:
        # Only the listed users, teams and apps may push; team membership and apps are not read.
        users = restrictions.get("users") if isinstance(restrictions, dict) else None
        listed = isinstance(users, list) and any(
            isinstance(user, dict) and user.get("id") == authenticated_user_id for user in users
        )
        parts.append(PASS if listed else UNKNOWN)
    state, rules = protection.rulesets
    if state == "read":
        parts.extend(UNKNOWN for rule in rules if rule.get("type") in RULES_ON_THE_MERGE_PUSH)
    return parts


def _requirements(merge: MergeState, protection: Protection, approvals: str, unresolved_threads: int) -> list[str]:
    """Each requirement the observer can read, as an outcome; unreadable ones are unknown."""
    parts = [approvals]
    classic_state, _ = protection.classic
    if classic_state == "unknown" or protection.rulesets[0] == "unknown":
        parts.append(UNKNOWN)
    classic = protection.classic_rules
    if _enabled(classic.get("required_signatures")):
        parts.append(UNKNOWN)  # signatures are not verified here
    state, rules = protection.rulesets
    if state == "read":
        understood = RULES_WITHOUT_MERGE_EFFECT | RULES_READ_ELSEWHERE | RULES_ON_THE_MERGE_PUSH
        parts.extend(UNKNOWN for rule in rules if rule.get("type") not in understood)
    parts.extend(_required_checks(merge, protection))
    if unresolved_threads and _conversation_resolution_required(protection):
        parts.append(PENDING)
    return parts


def _required_checks(merge: MergeState, protection: Protection) -> list[str]:
    """Each context GitHub marks required, by outcome; a required name nothing satisfies yet waits.

    Whether a context satisfies a requirement (the app it must come from
    included) is GitHub's isRequired; REST only names what must appear.
    """
    outcomes = [context_outcome(context) for context in merge.contexts if context.is_required]
    satisfied = {context.name for context in merge.contexts if context.is_required}
    named: list[Any] = []
    classic = protection.classic_rules.get("required_status_checks")
    if isinstance(classic, dict):
        named.extend(classic.get("contexts") or [])
        named.extend(check.get("context") if isinstance(check, dict) else None for check in classic.get("checks") or [])
    for rule in protection.ruleset_rules("required_status_checks"):
        parameters = rule.get("parameters")
        checks = parameters.get("required_status_checks") if isinstance(parameters, dict) else None
        if not isinstance(checks, list):
            checks = [None]
        named.extend(check.get("context") if isinstance(check, dict) else None for check in checks)
    for name in named:
        if not isinstance(name, str):
            outcomes.append(UNKNOWN)  # a requirement we cannot read
        elif name not in satisfied:
            outcomes.append(PENDING)  # GitHub shows it as expected, waiting to be reported
    return outcomes


def _conversation_resolution_required(protection: Protection) -> bool:
    if _enabled(protection.classic_rules.get("required_conversation_resolution")):
        return True
    return any(
        isinstance(rule.get("parameters"), dict) and rule["parameters"].get("required_review_thread_resolution") is True
        for rule in protection.ruleset_rules("pull_request")
    )


def _enabled(setting: Any) -> bool:
    return isinstance(setting, dict) and setting.get("enabled") is True
