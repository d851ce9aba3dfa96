"""Merge gates: GitHub's own verdicts first, the REST rules only where GitHub leaves a gap.

Every gate is "pass", "fail", "pending" or "unknown". When several facts feed
one gate the worst wins, in the order fail > unknown > pending > pass: a gate
never passes while anything it depends on is failing, unreadable or waiting.
Every enum value GitHub documents for an input is listed in a table below;
any other value maps to "unknown". references/github-observations.md has the
mapping as a table with each value's documented meaning.

A rule that could block the merge but cannot be read (classic protection
without admin rights, a ruleset list refused or cut off at a full page) or
is not understood (an undocumented rule type or parameter) makes its gate
unknown, whatever the merge state says, unless a verdict of GitHub's covers
it; each such part names the rule and the reason, for the person to check.
"""

from __future__ import annotations

import re
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

# Classic protection (GET .../branches/{b}/protection): every key GitHub's description lists. A
# key outside it is a setting this observer has never seen, so it may block: unknown.
CLASSIC_KEYS = frozenset(
    {
        "url",
        "name",
        "enabled",
        "protection_url",
        "required_status_checks",
        "enforce_admins",
        "required_pull_request_reviews",
        "restrictions",
        "required_linear_history",
        "allow_force_pushes",
        "allow_deletions",
        "block_creations",
        "required_conversation_resolution",
        "lock_branch",
        "allow_fork_syncing",
        "required_signatures",
    }
)

# Ruleset rule types (GET .../rules/branches/{b}), each with every parameter GitHub's description
# lists for it. An undocumented type or parameter may block in a way nothing here reads: unknown.
RULE_PARAMETERS: dict[str, frozenset[str]] = {
    "creation": frozenset(),
    "update": frozenset({"update_allows_fetch_and_merge"}),
    "deletion": frozenset(),
    "required_linear_history": frozenset(),
    "merge_queue": frozenset(
        {
            "check_response_timeout_minutes",
            "grouping_strategy",
            "max_entries_to_build",
            "max_entries_to_merge",
            "merge_method",
            "min_entries_to_merge",
            "min_entries_to_merge_wait_minutes",
        }
    ),
    "required_deployments": frozenset({"required_deployment_environments"}),
    "required_signatures": frozenset(),
    "pull_request": frozenset(
        {
            "allowed_merge_methods",
            "dismiss_stale_reviews_on_push",
            "dismissal_restriction",
            "require_code_owner_review",
            "require_last_push_approval",
            "required_approving_review_count",
            "required_review_thread_resolution",
            "required_reviewers",
        }
    ),
    "required_status_checks": frozenset(
        {"do_not_enforce_on_create", "required_status_checks", "strict_required_status_checks_policy"}
    ),
    "non_fast_forward": frozenset(),
    "commit_message_pattern": frozenset({"name", "negate", "operator", "pattern"}),
    "commit_author_email_pattern": frozenset({"name", "negate", "operator", "pattern"}),
    "committer_email_pattern": frozenset({"name", "negate", "operator", "pattern"}),
    "branch_name_pattern": frozenset({"name", "negate", "operator", "pattern"}),
    "tag_name_pattern": frozenset({"name", "negate", "operator", "pattern"}),
    "workflows": frozenset({"do_not_enforce_on_create", "workflows"}),
    "code_scanning": frozenset({"code_scanning_tools"}),
    "copilot_code_review": frozenset({"review_draft_pull_requests", "review_on_push"}),
    "license_compliance_scanning": frozenset(),
    "file_path_restriction": frozenset({"restricted_file_paths"}),
    "max_file_path_length": frozenset({"max_file_path_length"}),
    "file_extension_restriction": frozenset({"restricted_file_extensions"}),
    "max_file_size": frozenset({"max_file_size"}),
}
# What each documented type does to a PR merge; a test keeps these sets covering RULE_PARAMETERS.
RULES_WITHOUT_MERGE_EFFECT = frozenset(
    {
        "creation",
        "deletion",
        "non_fast_forward",
        "required_linear_history",
        "branch_name_pattern",
        "tag_name_pattern",
        "copilot_code_review",  # asks Copilot for a review; its review is never required
    }
)
RULES_READ_ELSEWHERE = frozenset({"pull_request", "required_status_checks", "merge_queue"})
# Requirements GitHub rules on before the merge (its merge state says BLOCKED while one is unmet),
# not evaluated here: they count only where GitHub has not ruled.
RULES_BEFORE_THE_MERGE = frozenset(
    {"required_signatures", "required_deployments", "workflows", "code_scanning", "license_compliance_scanning"}
)
# Checked on the push that the merge itself makes, which no merge state reports in advance.
RULES_ON_THE_MERGE_PUSH = {
    "commit_message_pattern": "checked-on-merge-push",
    "commit_author_email_pattern": "checked-on-merge-push",
    "committer_email_pattern": "checked-on-merge-push",
    "file_path_restriction": "checked-on-merge-push",
    "max_file_path_length": "checked-on-merge-push",
    "file_extension_restriction": "checked-on-merge-push",
    "max_file_size": "checked-on-merge-push",
    "update": "push-restricted",  # only the ruleset's bypass actors may update the branch
}

# Why a rule leaves a gate unknown (references/github-observations.md, "Unknown gates").
UNKNOWN_REASONS = (
    "block-unexplained",
    "checked-on-merge-push",
    "malformed-rule",
    "not-evaluated",
    "protection-unreadable",
    "push-restricted",
    "reviews-not-reported",
    "rulesets-truncated",
    "rulesets-unreadable",
    "undocumented-parameter",
    "undocumented-rule-type",
    "undocumented-value",
)
_NAME = re.compile(r"[a-z0-9_]{1,64}")


@dataclass(frozen=True)
class Protection:
    """What REST says protects the base branch: classic rules and active ruleset rules.

    ``classic`` is ("protected", rules) | ("unprotected", None) | ("unknown", None);
    ``rulesets`` is ("read", [rule, ...]) | ("refused", None) | ("truncated", None).
    """

    classic: tuple[str, Any]
    rulesets: tuple[str, Any]

    @property
    def classic_rules(self) -> dict[str, Any]:
        state, rules = self.classic
        return rules if state == "protected" and isinstance(rules, dict) else {}

    @property
    def all_ruleset_rules(self) -> list[dict[str, Any]]:
        state, rules = self.rulesets
        return rules if state == "read" and isinstance(rules, list) else []

    def ruleset_rules(self, rule_type: str) -> list[dict[str, Any]]:
        return [rule for rule in self.all_ruleset_rules if rule.get("type") == rule_type]


@dataclass(frozen=True)
class Part:
    """One fact's outcome for a gate; an unknown one that a rule causes names the rule and why."""

    outcome: str
    rule: str = ""
    reason: str = ""


@dataclass(frozen=True)
class Verdict:
    """A gate's value, and (rule, reason) for each rule that left a part of it unknown."""

    value: str
    unknowns: tuple[tuple[str, str], ...]


def unknown(rule: str, reason: str) -> Part:
    return Part(UNKNOWN, rule, reason)


def verdict(parts: Iterable[Part]) -> Verdict:
    parts = list(parts)
    unknowns = sorted({(part.rule, part.reason) for part in parts if part.outcome == UNKNOWN and part.rule})
    return Verdict(worst(part.outcome for part in parts), tuple(unknowns))


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


def approvals_gate(merge: MergeState, protection: Protection) -> Verdict:
    """GitHub's reviewDecision, and every review rule it does not report on.

    GitHub alone knows who has write access, who pushed last and who owns
    the code, so the reviews themselves are not recounted here. The decision
    answers for the classic review rule (null exactly when there is none that
    asks), so classic protection the token cannot read needs no more. It says
    nothing about ruleset review rules (null when only a ruleset asks): one
    that asks for approvals, or a ruleset list that cannot be read whole,
    leaves approvals unknown whatever the decision or the merge state says.
    """
    decision = merge.review_decision
    parts = [Part(PASS if decision is None else REVIEW_DECISION.get(decision, UNKNOWN))]
    classic = protection.classic_rules.get("required_pull_request_reviews")
    if decision is None and isinstance(classic, dict) and _asks_for_approval(classic, "require_code_owner_reviews"):
        # A null decision beside a classic rule that asks: the two answers contradict each other.
        parts.append(unknown("classic-protection.required_pull_request_reviews", "reviews-not-reported"))
    parts.extend(_rulesets_unreadable(protection))
    for rule in protection.ruleset_rules("pull_request"):
        problem = _rule_problem(rule)
        if problem is not None:
            parts.append(problem)
        elif _asks_for_approval(rule["parameters"], "require_code_owner_review"):
            parts.append(unknown("rulesets.pull_request", "reviews-not-reported"))
    return verdict(parts)


def _asks_for_approval(rule: dict[str, Any], code_owner_key: str) -> bool:
    """A review rule that needs at least one approval: a count, code owners, or a required reviewer team."""
    reviewers = rule.get("required_reviewers", [])
    reviewers_ask = not isinstance(reviewers, list) or any(
        # A team with minimum_approvals 0 is only asked to look; its approval is optional.
        not isinstance(reviewer, dict) or not _zero(reviewer.get("minimum_approvals"))
        for reviewer in reviewers
    )
    return not _zero(rule.get("required_approving_review_count")) or rule.get(code_owner_key) is True or reviewers_ask


def _zero(value: Any) -> bool:
    return type(value) is int and value == 0


def mergeability_gate(pr_state: str, rest_draft: bool, merge: MergeState) -> str:
    """Closed or merged cannot merge; a draft waits; then mergeable and mergeStateStatus."""
    if pr_state != "open":
        return FAIL
    draft = PENDING if merge.is_draft or rest_draft else PASS
    overall = MERGE_STATE_STATUS.get(merge.merge_state_status, (UNKNOWN, None))[0]
    return worst([draft, MERGEABLE.get(merge.mergeable, UNKNOWN), overall])


def branch_protection_gate(
    merge: MergeState, protection: Protection, approvals: str, unresolved_threads: int, authenticated_user_id: int
) -> Verdict:
    """The base branch's requirements, with GitHub's mergeStateStatus as the verdict.

    When GitHub allows the merge (CLEAN, HAS_HOOKS, UNSTABLE) only what it
    does not rule on in advance can still hold the merge back. BEHIND fails.
    BLOCKED takes the worst requirement this observer can see, and unknown
    when none explains the block. When GitHub has not ruled (DIRTY, DRAFT,
    UNKNOWN, an undocumented value) the requirements are derived from REST.
    """
    verdict_of_github = MERGE_STATE_STATUS.get(merge.merge_state_status, (UNKNOWN, None))[1]
    always = _outside_the_merge_state(merge, protection, authenticated_user_id)
    if verdict_of_github == ALLOWED:
        return verdict(always)
    if verdict_of_github == BEHIND:
        return verdict([Part(FAIL)])
    seen = [*always, *_requirements(merge, protection, approvals, unresolved_threads)]
    if verdict_of_github == BLOCKED:
        explained = worst(part.outcome for part in seen) != PASS
        return verdict(seen if explained else [*seen, unknown("merge-state", "block-unexplained")])
    if verdict_of_github == COMPUTING:
        return verdict([*seen, Part(PENDING)])
    if verdict_of_github == UNDECIDED:
        return verdict(seen)
    return verdict([*seen, unknown("merge-state", "undocumented-value")])


def _outside_the_merge_state(merge: MergeState, protection: Protection, authenticated_user_id: int) -> list[Part]:
    """What can stop the merge even when GitHub's merge state allows it.

    The merge state does not say whether this user may push the merge
    (branch lock, push restrictions, a ruleset's update rule) or whether the
    merge commit passes the rules checked on the push, so a rule of that
    kind that cannot be read, or is not understood, is unknown here, under
    any merge state.
    """
    parts = []
    if merge.merge_queue_enabled:
        parts.append(Part(PENDING))  # the merge happens through the queue, after its own checks
    if protection.classic[0] == "unknown":
        parts.append(unknown("classic-protection", "protection-unreadable"))
    classic = protection.classic_rules
    parts.extend(
        unknown(f"classic-protection.{_name(key)}", "undocumented-parameter")
        for key in sorted(set(classic) - CLASSIC_KEYS)
    )
    if _enabled(classic.get("lock_branch")):
        parts.append(Part(FAIL))
    restrictions = classic.get("restrictions")
    if restrictions is not None:
        # Only the listed users, teams and apps may push; team membership and apps are not read.
        users = restrictions.get("users") if isinstance(restrictions, dict) else None
        listed = isinstance(users, list) and any(
            isinstance(user, dict) and user.get("id") == authenticated_user_id for user in users
        )
        parts.append(Part(PASS) if listed else unknown("classic-protection.restrictions", "push-restricted"))
    parts.extend(_rulesets_unreadable(protection))
    for rule in protection.all_ruleset_rules:
        rule_type = rule.get("type")
        problem = _rule_problem(rule)
        if problem is not None:
            parts.append(problem)
        elif rule_type in RULES_ON_THE_MERGE_PUSH:
            parts.append(unknown(f"rulesets.{rule_type}", RULES_ON_THE_MERGE_PUSH[rule_type]))
    return parts


def _rulesets_unreadable(protection: Protection) -> list[Part]:
    state = protection.rulesets[0]
    if state == "read":
        return []
    return [unknown("rulesets", "rulesets-truncated" if state == "truncated" else "rulesets-unreadable")]


def _rule_problem(rule: dict[str, Any]) -> Part | None:
    """Unknown for a ruleset rule this observer does not understand: its type or a parameter."""
    rule_type = rule.get("type")
    if rule_type not in RULE_PARAMETERS:
        return unknown(f"rulesets.{_name(rule_type)}", "undocumented-rule-type")
    parameters = rule.get("parameters", {})
    if not isinstance(parameters, dict):
        return unknown(f"rulesets.{rule_type}", "malformed-rule")
    undocumented = sorted(set(parameters) - RULE_PARAMETERS[rule_type])
    if undocumented:
        return unknown(f"rulesets.{rule_type}.{_name(undocumented[0])}", "undocumented-parameter")
    return None


def _name(text: Any) -> str:
    """A rule or parameter name as the state may carry it: server text that is not a plain name is not quoted."""
    return text if isinstance(text, str) and _NAME.fullmatch(text) else "unnamed"


def _requirements(merge: MergeState, protection: Protection, approvals: str, unresolved_threads: int) -> list[Part]:
    """Each requirement GitHub rules on before the merge, as the observer can read it."""
    parts = [Part(approvals)]  # its own unknowns are reported under approvals
    if _enabled(protection.classic_rules.get("required_signatures")):
        parts.append(unknown("classic-protection.required_signatures", "not-evaluated"))
    parts.extend(
        unknown(f"rulesets.{rule['type']}", "not-evaluated")
        for rule in protection.all_ruleset_rules
        if rule.get("type") in RULES_BEFORE_THE_MERGE
    )
    parts.extend(_required_checks(merge, protection))
    if unresolved_threads and _conversation_resolution_required(protection):
        parts.append(Part(PENDING))
    return parts


def _required_checks(merge: MergeState, protection: Protection) -> list[Part]:
    """Each context GitHub marks required, by outcome; a required name nothing satisfies yet waits.

    Whether a context satisfies a requirement (the app it must come from
    included) is GitHub's isRequired; REST only names what must appear.
    """
    parts = [Part(context_outcome(context)) for context in merge.contexts if context.is_required]
    satisfied = {context.name for context in merge.contexts if context.is_required}
    named: list[tuple[str, Any]] = []
    classic = protection.classic_rules.get("required_status_checks")
    if isinstance(classic, dict):
        where = "classic-protection.required_status_checks"
        named.extend((where, name) for name in classic.get("contexts") or [])
        named.extend(
            (where, check.get("context") if isinstance(check, dict) else None) for check in classic.get("checks") or []
        )
    for rule in protection.ruleset_rules("required_status_checks"):
        parameters = rule.get("parameters")
        checks = parameters.get("required_status_checks") if isinstance(parameters, dict) else None
        if not isinstance(checks, list):
            checks = [None]
        named.extend(
            ("rulesets.required_status_checks", check.get("context") if isinstance(check, dict) else None)
            for check in checks
        )
    for where, name in named:
        if not isinstance(name, str):
            parts.append(unknown(where, "malformed-rule"))  # a requirement we cannot read
        elif name not in satisfied:
            parts.append(Part(PENDING))  # GitHub shows it as expected, waiting to be reported
    return parts


def _conversation_resolution_required(protection: Protection) -> bool:
    if _enabled(protection.classic_rules.get("required_conversation_resolution")):
        return True
    return any(
        isinstance(rule.get("parameters"), dict) and rule["parameters"].get("required_review_thread_resolution") is True
        for rule in protection.ruleset_rules("pull_request")
    )


def _enabled(setting: Any) -> bool:
    return isinstance(setting, dict) and setting.get("enabled") is True
