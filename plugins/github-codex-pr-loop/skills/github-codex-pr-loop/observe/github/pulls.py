"""The open pull requests of a repository, for the initial snapshot.

The initial snapshot binds the complete list of open PRs (``open_prs_sha256``)
and, when one of them already carries the head branch, the five
``existing_pr_*`` fields that make the plan reuse it instead of creating one.
"""

from __future__ import annotations

from typing import Any

from evaluator.canonical import digest
from observe.github.client import GitHubClient, split_repository
from observe.github.errors import GitHubObservationError
from observe.github.fields import field, positive_id, sha40


def existing_pull_request(client: GitHubClient, repository: str, head_branch: str) -> tuple[int, str, dict[str, Any]]:
    """(authenticated user id, open-PRs digest, the existing_pr_* fields)."""
    owner, name = split_repository(repository)
    user_id = positive_id(client.get("users.get_authenticated").body, "GET /user")
    pulls = client.get_all("pulls.list", owner=owner, repo=name, state="open")
    matching = [
        pull
        for pull in pulls
        if field(field(pull, "head", dict, "open pull request"), "ref", str, "open pull request head") == head_branch
    ]
    same_repo = [pull for pull in matching if _same_repository(pull)]
    if len(same_repo) > 1:
        raise GitHubObservationError(
            "github-ambiguous-pull-request", f"{len(same_repo)} open pull requests have head branch {head_branch!r}"
        )
    existing: dict[str, Any] = dict.fromkeys(
        (
            "existing_pr_base_branch",
            "existing_pr_head_branch",
            "existing_pr_head_sha",
            "existing_pr_number",
            "existing_pr_same_repository",
        )
    )
    # A fork's PR with the same branch name is not ours to reuse; the
    # evaluator rejects a cross-repository reuse, so report it as observed.
    chosen = same_repo[0] if same_repo else (matching[0] if len(matching) == 1 else None)
    if chosen is not None:
        existing.update(
            existing_pr_base_branch=field(chosen["base"], "ref", str, "pull request base"),
            existing_pr_head_branch=head_branch,
            existing_pr_head_sha=sha40(chosen["head"].get("sha"), "pull request head sha"),
            existing_pr_number=field(chosen, "number", int, "pull request"),
            existing_pr_same_repository=_same_repository(chosen),
        )
    return user_id, open_prs_digest(pulls), existing


def _same_repository(pull: dict[str, Any]) -> bool:
    head_repo, base_repo = pull["head"].get("repo"), field(pull["base"], "repo", dict, "pull request base")
    return (
        isinstance(head_repo, dict)
        and str(head_repo.get("full_name", "")).lower() == str(base_repo.get("full_name", "")).lower()
    )


def open_prs_digest(open_pulls: list[dict[str, Any]]) -> str:
    """``open_prs_sha256``: the canonical digest of every open PR's identity, by number."""
    entries = []
    for pull in open_pulls:
        where = "open pull request"
        base, head = field(pull, "base", dict, where), field(pull, "head", dict, where)
        base_repo, head_repo = field(base, "repo", dict, f"{where} base"), head.get("repo")
        base_name = field(base_repo, "full_name", str, where).lower()
        same = isinstance(head_repo, dict) and str(head_repo.get("full_name", "")).lower() == base_name
        entries.append(
            {
                "number": field(pull, "number", int, where),
                "head_branch": field(head, "ref", str, f"{where} head"),
                "head_sha": sha40(head.get("sha"), f"{where} head sha"),
                "base_branch": field(base, "ref", str, f"{where} base"),
                "same_repository": same,
            }
        )
    return digest(sorted(entries, key=lambda entry: entry["number"]))
