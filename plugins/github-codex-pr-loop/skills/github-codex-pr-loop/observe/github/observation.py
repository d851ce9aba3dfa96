"""The shape of one pull request's GitHub observation, as types.

``observe_pull_request`` (observe/github/pull_request.py) returns a
``PullRequestObservation``; the collector (observe/collect.py) reads nothing
else from GitHub. Each item type has exactly the keys the evaluator's state
models expect (references/github-observations.md gives the field-by-field
normalization), so the items are placed into the state document unchanged.
They are ``TypedDict``s: plain dictionaries at run time, whose keys and value
types the type checker verifies where they are built and where they are read.
Timestamps are GitHub's ISO-8601 strings exactly as given (checked to carry a
time zone).
"""

from __future__ import annotations

from typing import Literal, TypedDict


class PullRequestFacts(TypedDict):
    number: int
    url: str
    state: Literal["open", "closed", "merged"]
    is_draft: bool
    same_repository: bool
    repository: str  # the base repository, lowercase owner/repo
    base_branch: str
    head_branch: str
    head_sha: str
    title_sha256: str
    body_sha256: str


class RequestMarker(TypedDict):
    """A review request the authenticated user posted for this run."""

    comment_id: int
    created_at: str
    round: int
    head_sha: str
    body_sha256: str


class Claim(TypedDict):
    comment_id: int
    created_at: str
    kind: str
    plan_hash: str
    request_key: str
    wakeup_id: str


class Response(TypedDict):
    """A trusted Codex answer: an issue comment, a review or a review comment."""

    body_sha256: str
    bot_id: int
    bot_type: str
    commit_sha: str | None
    content_version_at: str
    created_at: str
    id: str
    source: str  # "issue-comment" | "review" | "review-comment"
    trigger_request_comment_id: int | None
    zero_findings_signal: bool


class UnavailableReply(TypedDict):
    id: str
    created_at: str
    kind: str


class UnrecognizedReply(TypedDict):
    id: str
    created_at: str
    excerpt: str
    source: str


class SummaryRow(TypedDict):
    comment_id: str
    status: str
    head_sha: str | None
    content_version_at: str


class PlusOneReaction(TypedDict):
    id: str
    created_at: str


class ThreadSnapshot(TypedDict):
    """What a plan binds of a review thread."""

    body_sha256: str
    content_version_at: str
    id: str
    position_sha256: str
    root_comment_id: str


class ThreadText(TypedDict):
    """What the root comment says and where: shown to the agent, never judged (the snapshot's digests bind it)."""

    path: str | None
    start_line: int | None
    line: int | None
    body: str


class ThreadObservation(TypedDict):
    thread: ThreadSnapshot
    is_resolved: bool
    is_outdated: bool
    root_is_codex: bool
    addressed_round: int | None  # the latest round our reply marker names, if any
    text: ThreadText


class Gates(TypedDict):
    """Each gate is "pass", "fail", "pending" or "unknown" (observe/github/gates.py)."""

    approvals: str
    branch_protection: str
    checks: str
    mergeability: str


class GateUnknown(TypedDict):
    """A rule that leaves a gate unknown: ``rule`` names it, ``reason`` says why (observe/github/gates.py)."""

    gate: str  # "approvals" | "branch_protection"
    rule: str  # "classic-protection", "rulesets", "merge-state", each optionally ".name[.parameter]"
    reason: str  # one of observe.github.gates.UNKNOWN_REASONS


class PullRequestObservation(TypedDict):
    authenticated_user_id: int
    pull_request: PullRequestFacts
    base_tip_sha: str
    head_tip_sha: str | None  # None when the head branch is gone
    requests: list[RequestMarker]  # by comment id
    marker_anomalies: list[str]  # comment ids, numerically sorted
    claims: list[Claim]  # by comment id
    responses: list[Response]  # by source, then numeric id
    unavailable_replies: list[UnavailableReply]  # by numeric id
    unrecognized_replies: list[UnrecognizedReply]  # by source, then numeric id
    summary_rows: list[SummaryRow]  # by comment id, then table order
    plus_one_reactions: list[PlusOneReaction]  # by numeric id
    threads: list[ThreadObservation]  # by thread id
    gates: Gates
    gate_unknowns: list[GateUnknown]  # by gate, then rule, then reason
