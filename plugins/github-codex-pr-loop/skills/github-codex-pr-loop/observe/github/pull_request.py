"""Observe one pull request completely: the GitHub half of every wakeup.

``observe_pull_request(client, repository, pr_number, run_id)`` fetches
everything first (``fetch_snapshot``), then normalizes it in one pure step
(``normalize_snapshot``), so a failure anywhere returns no observation at
all. The result is a ``PullRequestObservation`` (observe/github/observation.py
names every key and type; references/github-observations.md gives the
field-by-field normalization).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from evaluator.canonical import text_digest
from evaluator.formats import RUN_ID
from observe.github import gates as github_gates
from observe.github.acknowledgement import unacknowledged_request
from observe.github.client import PER_PAGE, GitHubClient, split_repository
from observe.github.fields import body_text, field, kind_of, objects, positive_id, sha40, shape_error
from observe.github.merge_state import MergeState, read_merge_state
from observe.github.observation import Gates, GateUnknown, PullRequestFacts, PullRequestObservation, ThreadObservation
from observe.github.responses import (
    RequestIndex,
    codex_issue_comments,
    codex_review_comments,
    codex_reviews,
    foreign_review_requests,
    loop_comments,
    plus_one_reactions,
)
from observe.github.threads import fetch_review_threads, normalize_thread


@dataclass(frozen=True)
class PullRequestSnapshot:
    """Raw GitHub answers for one PR, before normalization."""

    user: Any
    pull: Any
    base_ref: Any
    head_ref: Any  # None when the head branch is gone (404) or the head repository is
    issue_comments: list[Any]
    reviews: list[Any]
    review_comments: list[Any]
    reactions: list[Any]
    protection: tuple[str, Any]  # ("protected", body) | ("unprotected", None) | ("unknown", None)
    rulesets: tuple[str, Any]  # ("read", [rule, ...]) | ("refused", None) | ("truncated", None)
    threads: list[Any]
    merge_state: Any  # GraphQL pullRequest merge-state fields, every rollup context under "contexts"


# -- fetching -----------------------------------------------------------------


def _count(pull: dict[str, Any], key: str) -> int | None:
    """A count the pull request states, or None (then nothing is revalidated on its word)."""
    value = pull.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def fetch_snapshot(client: GitHubClient, repository: str, pr_number: int) -> PullRequestSnapshot:
    owner, name = split_repository(repository)
    if repository.lower() != client.repository.lower():
        raise ValueError(f"client is bound to {client.repository}, not {repository}")
    if not isinstance(pr_number, int) or isinstance(pr_number, bool) or pr_number < 1:
        raise ValueError(f"pr_number must be a positive integer, got {pr_number!r}")
    user = client.get("users.get_authenticated").body
    pull = client.get("pulls.get", pull_number=pr_number).body
    base_branch = field(field(pull, "base", dict, "pull request"), "ref", str, "pull request base")
    head = field(pull, "head", dict, "pull request")
    head_branch = field(head, "ref", str, "pull request head")
    sha40(head.get("sha"), "pull request head sha")
    base_ref = client.get("git.get_ref", ref=f"heads/{base_branch}").body
    head_ref = None
    head_repo = head.get("repo")
    if isinstance(head_repo, dict):
        # The head branch lives in the head repository (a fork's branch is not ours).
        head_owner, head_name = _repository_parts(field(head_repo, "full_name", str, "pull request head repo"))
        head_ref = client.get(
            "git.get_ref", owner=head_owner, repo=head_name, ref=f"heads/{head_branch}", tolerated=(404,)
        ).body
    protection = _fetch_protection(client, base_branch)
    rulesets = _fetch_rulesets(client, base_branch)
    # The first GraphQL page counts the reviews and reactions, so it is read
    # before those lists: a count read after a list proves nothing about it.
    threads, merge_state, counts = fetch_review_threads(client, owner, name, pr_number)
    # Each list's length as another answer states it (comments and review
    # comments by the pull request, reviews and reactions by GraphQL): a full
    # last page that adds up to that count is revalidated, not fetched again;
    # any other count fetches it again (references/github-observations.md).
    issue_comments = client.get_all(
        "issues.list_comments", issue_number=pr_number, known_count=_count(pull, "comments")
    )
    reviews = client.get_all("pulls.list_reviews", pull_number=pr_number, known_count=counts["reviews"])
    review_comments = client.get_all(
        "pulls.list_review_comments", pull_number=pr_number, known_count=_count(pull, "review_comments")
    )
    reactions = client.get_all("reactions.list_for_issue", issue_number=pr_number, known_count=counts["reactions"])
    return PullRequestSnapshot(
        user=user,
        pull=pull,
        base_ref=base_ref,
        head_ref=head_ref,
        issue_comments=issue_comments,
        reviews=reviews,
        review_comments=review_comments,
        reactions=reactions,
        protection=protection,
        rulesets=rulesets,
        threads=threads,
        merge_state=merge_state,
    )


def _repository_parts(full_name: str) -> tuple[str, str]:
    try:
        return split_repository(full_name)
    except ValueError:
        # Server text: described, not quoted.
        raise shape_error(f"pull request head repo: full_name is not owner/name ({kind_of(full_name)})") from None


def _fetch_protection(client: GitHubClient, branch: str) -> tuple[str, Any]:
    """("protected", rules), ("unprotected", None) or ("unknown", None).

    The branch's own ``protected`` flag is asked first: it is readable with
    plain read access and cacheable (200 + ETag), whereas the protection
    endpoint answers an unprotected branch with an uncacheable 404 that would
    cost a point on every wakeup, and answers missing admin rights with 403
    (or 404), which only means "cannot tell".
    """
    protected = field(client.get("repos.get_branch", branch=branch).body, "protected", bool, "base branch")
    if not protected:
        return ("unprotected", None)
    reply = client.get("repos.get_branch_protection", branch=branch, tolerated=(403, 404))
    return ("protected", reply.body) if reply.body is not None else ("unknown", None)


def _fetch_rulesets(client: GitHubClient, branch: str) -> tuple[str, Any]:
    """("read", active ruleset rules for the branch), ("refused", None) or ("truncated", None).

    Readable with read access; 403/404 (a token without that access) means
    "cannot tell". A full page may hide another, so it cannot tell either.
    """
    reply = client.get("repos.get_branch_rules", branch=branch, per_page=PER_PAGE, tolerated=(403, 404))
    if reply.body is None:
        return ("refused", None)
    if isinstance(reply.body, list) and len(reply.body) >= PER_PAGE:
        return ("truncated", None)
    return ("read", reply.body)


def observe_pull_request(
    client: GitHubClient, repository: str, pr_number: int, run_id: str, observed_at: datetime | None = None
) -> PullRequestObservation:
    """The complete observation document, or ``GitHubObservationError``.

    With ``observed_at`` (a wakeup's or a report's instant), a current request
    Codex has not picked up in time is reported too (observe/github/acknowledgement.py).
    """
    if not RUN_ID.matches(run_id):
        raise ValueError("run_id must be 32 lowercase hex digits")
    observation = normalize_snapshot(fetch_snapshot(client, repository, pr_number), repository, pr_number, run_id)
    if observed_at is not None:
        entry = unacknowledged_request(client, observation, observed_at)
        if entry is not None:
            replies = [*observation["unavailable_replies"], entry]
            observation["unavailable_replies"] = sorted(replies, key=lambda reply: int(reply["id"]))
    return observation


# -- normalization ---------------------------------------------------------


def _normalize_pull(pull: Any, repository: str, pr_number: int) -> PullRequestFacts:
    where = "pull request"
    number = field(pull, "number", int, where)
    if number != pr_number:
        raise shape_error(f"{where}: number {number} is not the requested {pr_number}")
    state, merged = field(pull, "state", str, where), field(pull, "merged", bool, where)
    normalized_state: Literal["open", "closed", "merged"]
    if state == "open" and not merged:
        normalized_state = "open"
    elif state == "closed":
        normalized_state = "merged" if merged else "closed"
    else:
        shown = state if state in ("open", "closed") else f"{kind_of(state)} other than open or closed"
        raise shape_error(f"{where}: state {shown} with merged={merged} is not a known combination")
    base, head = pull["base"], pull["head"]
    base_repo = field(base, "repo", dict, f"{where} base")
    base_full_name = field(base_repo, "full_name", str, f"{where} base repo")
    if base_full_name.lower() != repository.lower():
        raise shape_error(
            f"{where}: base repository is not {repository!r} (the answer names another, {kind_of(base_full_name)})"
        )
    head_repo = head.get("repo")
    if head_repo is not None and not isinstance(head_repo, dict):
        raise shape_error(f"{where}: head repo is neither an object nor null")
    same_repository = (
        head_repo is not None
        and field(head_repo, "full_name", str, f"{where} head repo").lower() == base_full_name.lower()
    )
    title = field(pull, "title", str, where)
    return {
        "number": number,
        "url": field(pull, "html_url", str, where),
        "state": normalized_state,
        "is_draft": field(pull, "draft", bool, where),
        "same_repository": same_repository,
        "repository": base_full_name.lower(),
        "base_branch": field(base, "ref", str, f"{where} base"),
        "head_branch": field(head, "ref", str, f"{where} head"),
        "head_sha": sha40(head.get("sha"), f"{where} head sha"),
        "title_sha256": text_digest(title),
        "body_sha256": text_digest(body_text(pull, where)),
    }


def _ref_sha(ref: Any, branch: str, where: str) -> str:
    # A branch name that is a prefix of others can come back as a list of refs.
    if field(ref, "ref", str, where) != f"refs/heads/{branch}":
        raise shape_error(f"{where}: the answer is for another ref than the branch asked for ({kind_of(ref['ref'])})")
    return sha40(field(ref, "object", dict, where).get("sha"), f"{where} object sha")


def _merge_state(snapshot: PullRequestSnapshot) -> MergeState:
    merge_state = snapshot.merge_state
    contexts = merge_state.get("contexts") if isinstance(merge_state, dict) else None
    if not isinstance(contexts, list):
        raise shape_error("pull request merge state: contexts were not collected")
    return read_merge_state(merge_state, contexts)


def _protection(snapshot: PullRequestSnapshot) -> github_gates.Protection:
    state, rules = snapshot.protection
    if state == "protected" and not isinstance(rules, dict):
        raise shape_error("branch protection: answer is not an object")
    ruleset_state, ruleset_rules = snapshot.rulesets
    if ruleset_state == "read":
        for rule in objects(ruleset_rules if isinstance(ruleset_rules, list) else [None], "branch rules"):
            field(rule, "type", str, "branch rule")
    return github_gates.Protection(snapshot.protection, snapshot.rulesets)


def _gates(
    snapshot: PullRequestSnapshot, pull_request: PullRequestFacts, threads: list[ThreadObservation], user_id: int
) -> tuple[Gates, list[GateUnknown]]:
    """The four gates, and for each rule that left one unknown: the gate, the rule and why."""
    merge = _merge_state(snapshot)
    protection = _protection(snapshot)
    if merge.head_sha != pull_request["head_sha"]:
        # A push landed between the REST and the GraphQL answers: GitHub's verdicts are
        # about another commit than the document's head.
        closed = pull_request["state"] != "open"
        unknown = github_gates.UNKNOWN
        gates: Gates = {
            "approvals": unknown,
            "branch_protection": unknown,
            "checks": unknown,
            "mergeability": github_gates.FAIL if closed else unknown,
        }
        return gates, []
    approvals = github_gates.approvals_gate(merge, protection)
    unresolved = sum(1 for thread in threads if not thread["is_resolved"])
    branch_protection = github_gates.branch_protection_gate(merge, protection, approvals.value, unresolved, user_id)
    gates = {
        "approvals": approvals.value,
        "branch_protection": branch_protection.value,
        "checks": github_gates.checks_gate(merge),
        "mergeability": github_gates.mergeability_gate(pull_request["state"], pull_request["is_draft"], merge),
    }
    unknowns: list[GateUnknown] = [
        {"gate": gate, "rule": rule, "reason": reason}
        for gate, found in (("approvals", approvals), ("branch_protection", branch_protection))
        for rule, reason in found.unknowns
    ]
    return gates, unknowns


def normalize_snapshot(
    snapshot: PullRequestSnapshot, repository: str, pr_number: int, run_id: str
) -> PullRequestObservation:
    """The observation document from raw answers: pure, and all-or-nothing."""
    authenticated_user_id = positive_id(snapshot.user, "GET /user")
    pull_request = _normalize_pull(snapshot.pull, repository, pr_number)
    base_tip_sha = _ref_sha(snapshot.base_ref, pull_request["base_branch"], "base branch ref")
    head_tip_sha = (
        None
        if snapshot.head_ref is None
        else _ref_sha(snapshot.head_ref, pull_request["head_branch"], "head branch ref")
    )
    for items, where in (
        (snapshot.issue_comments, "issue comments"),
        (snapshot.reviews, "reviews"),
        (snapshot.review_comments, "review comments"),
        (snapshot.reactions, "reactions"),
    ):
        objects(items, where)
    requests, claims, anomalies = loop_comments(snapshot.issue_comments, authenticated_user_id, run_id)
    request_index = RequestIndex(requests)
    comment_responses, unavailable, summary_rows, unrecognized = codex_issue_comments(
        snapshot.issue_comments, request_index, foreign_review_requests(snapshot.issue_comments, requests)
    )
    review_responses, unrecognized_reviews, clean_review_rows = codex_reviews(snapshot.reviews, request_index)
    summary_rows += clean_review_rows
    responses = comment_responses + review_responses + codex_review_comments(snapshot.review_comments, request_index)
    unrecognized += unrecognized_reviews
    unrecognized.sort(key=lambda reply: (reply["source"], int(reply["id"])))
    responses.sort(key=lambda response: (response["source"], int(response["id"])))
    summary_rows.sort(key=lambda row: int(row["comment_id"]))  # stable: table order within a comment
    threads = sorted(
        (normalize_thread(thread, authenticated_user_id, run_id) for thread in snapshot.threads),
        key=lambda thread: thread["thread"]["id"],
    )
    gates, gate_unknowns = _gates(snapshot, pull_request, threads, authenticated_user_id)
    return {
        "authenticated_user_id": authenticated_user_id,
        "pull_request": pull_request,
        "base_tip_sha": base_tip_sha,
        "head_tip_sha": head_tip_sha,
        "requests": requests,
        "marker_anomalies": anomalies,
        "claims": claims,
        "responses": responses,
        "unavailable_replies": unavailable,
        "unrecognized_replies": unrecognized,
        "summary_rows": summary_rows,
        "plus_one_reactions": plus_one_reactions(snapshot.reactions),
        "threads": threads,
        "gates": gates,
        "gate_unknowns": gate_unknowns,
    }
