"""The executor's GitHub writes, through the observer's fail-closed client (references/executor.md).

Each write first looks on GitHub for its own evidence (the PR for the head
branch, a comment carrying the exact marker, a reply carrying the reply
marker, a thread already resolved, a PR already ready) and writes only when
there is none. A write is sent once: when its outcome is uncertain
(``github-write-uncertain``) the evidence is looked for again, and only what
GitHub shows counts; a rerun does the same, so a crash never posts twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from act.errors import ActError
from observe.github.client import GitHubClient, path_segment
from observe.github.errors import GitHubObservationError

T = TypeVar("T")

MARK_READY = """mutation MarkReadyForReview($pullRequestId: ID!) {
  markPullRequestReadyForReview(input: {pullRequestId: $pullRequestId}) {
    pullRequest { id number isDraft }
  }
}"""
RESOLVE_THREAD = """mutation ResolveReviewThread($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) {
    thread { id isResolved }
  }
}"""
THREAD_STATE = """query($id: ID!) {
  rateLimit { cost remaining }
  node(id: $id) { ... on PullRequestReviewThread { id isResolved } }
}"""


def write_once(write: Callable[[], Any], evidence: Callable[[], T | None], what: str) -> tuple[str, T]:
    """Evidence first; else one write; after an uncertain outcome, only the evidence decides."""
    found = evidence()
    if found is not None:
        return "already-done", found
    try:
        write()
    except GitHubObservationError as error:
        if error.code != "github-write-uncertain":
            raise ActError(error.code, f"{what}: {error.message}") from None
        found = evidence()
        if found is None:
            raise ActError(
                "github-write-uncertain",
                f"{what}: {error.message}; GitHub shows no evidence of it yet: "
                "rerun the same command, which looks again before writing",
            ) from None
        return "written", found
    found = evidence()
    if found is None:
        raise ActError("write-not-verified", f"{what}: GitHub accepted the write but does not show it", path="")
    return "written", found


class GitHubWriter:
    def __init__(self, client: GitHubClient, repository: str):
        self.client = client
        self.owner, _, self.name = repository.partition("/")
        self.base = f"/repos/{self.owner}/{self.name}"

    def user_id(self) -> int:
        return int(self.client.get("/user").body["id"])

    # -- pull requests --------------------------------------------------------

    def pull(self, number: int) -> dict[str, Any]:
        body = self.client.get(f"{self.base}/pulls/{number}").body
        if not isinstance(body, dict):
            raise ActError("github-unexpected-shape", f"pull request #{number} is not an object")
        return body

    def open_pulls_for(self, head_branch: str) -> list[dict[str, Any]]:
        pulls = self.client.get_all(f"{self.base}/pulls", {"state": "open", "head": f"{self.owner}:{head_branch}"})
        return [p for p in pulls if isinstance(p, dict) and p.get("head", {}).get("ref") == head_branch]

    def create_pull(
        self, title: str, body: str, head_branch: str, base_branch: str, *, draft: bool
    ) -> tuple[str, dict[str, Any]]:
        def evidence() -> dict[str, Any] | None:
            found = self.open_pulls_for(head_branch)
            if len(found) > 1:
                raise ActError(
                    "github-ambiguous-pull-request", f"{len(found)} open pull requests have head branch {head_branch}"
                )
            return found[0] if found else None

        payload = {"title": title, "body": body, "head": head_branch, "base": base_branch, "draft": draft}
        return write_once(lambda: self.client.write("POST", f"{self.base}/pulls", payload), evidence, "create-pr")

    def mark_ready(self, number: int) -> str:
        def evidence() -> bool | None:
            return True if self.pull(number).get("draft") is False else None

        node_id = self.pull(number).get("node_id")
        outcome, _ = write_once(
            lambda: self.client.graphql_mutation(MARK_READY, {"pullRequestId": node_id}), evidence, "mark-draft-ready"
        )
        return outcome

    # -- comments -------------------------------------------------------------

    def issue_comments(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.client.get_all(f"{self.base}/issues/{number}/comments") if isinstance(c, dict)]

    def comments_by(self, number: int, user_id: int, needle: str) -> list[dict[str, Any]]:
        return [
            c
            for c in self.issue_comments(number)
            if (c.get("user") or {}).get("id") == user_id and needle in (c.get("body") or "")
        ]

    def post_comment_once(
        self, number: int, user_id: int, body: str, marker: str, what: str
    ) -> tuple[str, dict[str, Any]]:
        """Post ``body`` unless a comment by this user carries ``marker``; that comment must be ``body`` exactly."""

        def evidence() -> dict[str, Any] | None:
            found = self.comments_by(number, user_id, marker)
            if len(found) > 1:
                raise ActError(
                    "marker-repeated", f"{what}: {len(found)} comments carry the marker; nothing more is posted"
                )
            if found and found[0].get("body") != body:
                raise ActError(
                    "marker-body-mismatch",
                    f"{what}: the comment carrying the marker is not the exact body the plan binds; nothing is posted",
                )
            return found[0] if found else None

        return write_once(
            lambda: self.client.write("POST", f"{self.base}/issues/{number}/comments", {"body": body}), evidence, what
        )

    # -- review threads ---------------------------------------------------------

    def review_comments(self, number: int) -> list[dict[str, Any]]:
        return [c for c in self.client.get_all(f"{self.base}/pulls/{number}/comments") if isinstance(c, dict)]

    def reply_once(self, number: int, user_id: int, root_node_id: str, body: str, marker: str) -> str:
        """One reply in the thread whose root comment is ``root_node_id``, carrying ``marker``."""

        def root() -> dict[str, Any]:
            found = [c for c in self.review_comments(number) if c.get("node_id") == root_node_id]
            if len(found) != 1:
                raise ActError(
                    "thread-root-not-found", f"the root comment {root_node_id} of a planned thread is not on the PR"
                )
            return found[0]

        root_id = root()["id"]

        def evidence() -> dict[str, Any] | None:
            replies = [
                c
                for c in self.review_comments(number)
                if c.get("in_reply_to_id") == root_id
                and (c.get("user") or {}).get("id") == user_id
                and marker in (c.get("body") or "")
            ]
            return replies[0] if replies else None

        path = f"{self.base}/pulls/{number}/comments/{root_id}/replies"
        outcome, _ = write_once(
            lambda: self.client.write("POST", path, {"body": body}), evidence, "reply-to-codex-threads"
        )
        return outcome

    def resolve_thread(self, thread_id: str) -> str:
        def evidence() -> bool | None:
            node = self.client.graphql(THREAD_STATE, {"id": thread_id}).get("node")
            if not isinstance(node, dict) or node.get("id") != thread_id:
                raise ActError("thread-not-found", f"review thread {thread_id} is not on GitHub")
            return True if node.get("isResolved") is True else None

        outcome, _ = write_once(
            lambda: self.client.graphql_mutation(RESOLVE_THREAD, {"threadId": thread_id}),
            evidence,
            "resolve-codex-threads",
        )
        return outcome

    def branch_tip(self, branch: str) -> str | None:
        reply = self.client.get(f"{self.base}/git/ref/heads/{path_segment(branch)}", tolerated=(404,))
        return None if reply.body is None else reply.body.get("object", {}).get("sha")
