"""The executor's GitHub writes, sent once through ghapi's write operations (references/executor.md).

Each write first looks on GitHub for its own evidence (the PR for the head
branch, a comment carrying the exact marker, a reply carrying the reply
marker, a thread already resolved, a PR already ready) and writes only when
there is none. A write is sent once: when its outcome is uncertain
(``github-write-uncertain``) the evidence is looked for again, and only what
GitHub shows counts; a rerun does the same, so a crash never posts twice.

The evidence is read through the observer's client (its GET operations,
retried, fail-closed); the writes are ghapi's POST operations
(``WRITE_OPERATIONS``) and GraphQL mutations on the same channel: the same
route, token, deadline, size cap and echo check, but never a retry. The
observer itself holds no write operation: only this module writes to GitHub.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, NamedTuple, TypeVar

import httpx2

from act.core.errors import ActError
from act.core.jsonedge import Document
from observe.github.channel import Channel, graphql_error_types, graphql_summary
from observe.github.client import GitHubClient, is_rate_limited
from observe.github.errors import GitHubObservationError
from observe.github.permissions import accepted_permissions

# The write operations of ghapi's table the hands use, and no other.
WRITE_OPERATIONS = ("pulls.create", "issues.create_comment", "pulls.create_reply_for_review_comment")

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


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _object(value: object) -> Document:
    return value if isinstance(value, dict) else {}


def _positive_id(value: object, what: str) -> int:
    if type(value) is not int or value < 1:
        raise ActError("github-unexpected-shape", f"{what} is not a positive integer")
    return value


class Pull(NamedTuple):
    """What the executor reads of a pull request (GitHub's ``pulls.get`` answer); absent or mistyped: None."""

    number: int
    title: str | None
    body: str | None
    state: str | None
    base_ref: str | None
    head_ref: str | None
    head_sha: str | None
    draft: bool | None
    node_id: str | None

    @classmethod
    def from_wire(cls, answer: Document) -> Pull:
        base, head = _object(answer.get("base")), _object(answer.get("head"))
        draft = answer.get("draft")
        return cls(
            number=_positive_id(answer.get("number"), "a pull request's number"),
            title=_text(answer.get("title")),
            body=_text(answer.get("body")),
            state=_text(answer.get("state")),
            base_ref=_text(base.get("ref")),
            head_ref=_text(head.get("ref")),
            head_sha=_text(head.get("sha")),
            draft=draft if isinstance(draft, bool) else None,
            node_id=_text(answer.get("node_id")),
        )


class Comment(NamedTuple):
    """What the executor reads of an issue comment it posted or found: its id and body."""

    id: int
    body: str | None

    @classmethod
    def from_wire(cls, answer: Document) -> Comment:
        return cls(id=_positive_id(answer.get("id"), "a comment's id"), body=_text(answer.get("body")))


def write_once(write: Callable[[], object], evidence: Callable[[], T | None], what: str) -> tuple[str, T]:
    """Evidence first; else one write; after an uncertain outcome, only the evidence decides."""
    found = evidence()
    if found is not None:
        return "already-done", found
    try:
        write()
    except GitHubObservationError as error:  # the answer repeated the credential: nothing of it is used
        raise ActError(error.code, f"{what}: {error.message}") from None
    except ActError as error:
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


def send_once(channel: Channel, send: Callable[[], Any], where: str) -> httpx2.Response:
    """One write, within the channel's deadline and size cap; never retried.

    A write is not idempotent, so none of the reads' retries apply: a write
    whose connection never opened is ``github-write-failed``; a definite 4xx
    answer (not a rate limit) ``github-write-refused``; anything else (a
    timeout or dropped connection after sending, a 5xx, a rate limit, an
    unreadable answer) ``github-write-uncertain``. After an uncertain outcome
    the caller looks for the write's evidence on GitHub before it may write
    again (references/github-observations.md).
    """
    try:
        response = channel.exchange(send, where)
    except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.ProxyError) as error:
        message = f"{where}: {type(error).__name__}; nothing was sent"
        raise ActError("github-write-failed", message) from error
    except httpx2.TransportError as error:
        message = f"{where}: {type(error).__name__} after sending began; the write may or may not have happened"
        raise ActError("github-write-uncertain", message) from error
    except GitHubObservationError as error:
        if error.code == "github-credential-echoed":
            raise
        message = f"{where}: {error.code} after sending began; the write may or may not have happened"
        raise ActError("github-write-uncertain", message) from error
    status = response.status_code
    if is_rate_limited(response) or status >= 500:
        raise ActError("github-write-uncertain", f"{where}: HTTP {status}; the write may or may not have happened")
    if not 200 <= status < 300:
        raise ActError("github-write-refused", f"{where}: HTTP {status}{_refusal_reason(response)}")
    return response


def _refusal_reason(response: httpx2.Response) -> str:
    """What GitHub's refusal names that the person can act on: the permission the token lacks."""
    accepted = accepted_permissions(response.headers.get("x-accepted-github-permissions"))
    if response.status_code == 403 and accepted:
        return (
            f": the token lacks the permission GitHub names ({' or '.join(accepted)}); give the fine-grained token "
            'that permission (references/prerequisites.md, "Token permissions")'
        )
    return ""


class GitHubWriter:
    def __init__(self, client: GitHubClient, repository: str):
        self.client = client
        self.owner, _, self.name = repository.partition("/")
        self.channel = client.channel
        self.writes = self.channel.api(WRITE_OPERATIONS, self.owner, self.name)

    # -- the two kinds of write ---------------------------------------------------

    def write(self, operation: str, **params: Any) -> object:
        """The POST operation ``operation`` of ghapi's table, sent once; returns the parsed answer."""
        op = self.writes.operation(operation)
        where = f"{op.verb} {op.path}"
        response = send_once(self.channel, partial(op, **params, raw_=True), where)
        try:
            return self.channel.parse(response, where)
        except GitHubObservationError as error:
            message = f"{where}: HTTP {response.status_code} with an unreadable answer ({error.code})"
            raise ActError("github-write-uncertain", message) from error

    def graphql_mutation(self, mutation: str, variables: Mapping[str, str | None]) -> Document:
        """One GraphQL mutation, sent once; returns ``data``.

        Outcomes as for ``write``; an answer whose every error is of type
        ``FORBIDDEN`` (the token may not make it: GitHub changed nothing) is
        ``github-write-refused``; any other answer carrying ``errors`` is
        uncertain (GitHub may apply part of a mutation), so the caller looks
        for evidence.
        """
        where = "POST /graphql (mutation)"
        payload = {"query": mutation, "variables": dict(variables)}
        send = self.channel.request("POST", self.channel.graphql_url(), json=payload)
        response = send_once(self.channel, send, where)
        try:
            body = self.channel.parse(response, where)
        except GitHubObservationError as error:
            message = f"{where}: an unreadable answer ({error.code})"
            raise ActError("github-write-uncertain", message) from error
        if not isinstance(body, dict) or "errors" in body or not isinstance(body.get("data"), dict):
            has_errors = isinstance(body, dict) and "errors" in body
            summary = graphql_summary(body["errors"]) if has_errors else "no data"
            if has_errors and graphql_error_types(body["errors"], every=True) == {"FORBIDDEN"}:
                # Every error is a refusal of the token's permissions: GitHub changed nothing.
                raise ActError("github-write-refused", f"{where}: the answer carries {summary}")
            raise ActError("github-write-uncertain", f"{where}: the answer carries {summary}")
        data: Document = body["data"]
        return data

    def user_id(self) -> int:
        return int(self.client.get("users.get_authenticated").body["id"])

    # -- pull requests --------------------------------------------------------

    def pull(self, number: int) -> Pull:
        body = self.client.get("pulls.get", pull_number=number).body
        if not isinstance(body, dict):
            raise ActError("github-unexpected-shape", f"pull request #{number} is not an object")
        return Pull.from_wire(body)

    def open_pulls_for(self, head_branch: str) -> list[Pull]:
        pulls = self.client.get_all("pulls.list", state="open", head=f"{self.owner}:{head_branch}")
        return [Pull.from_wire(p) for p in pulls if isinstance(p, dict) and p.get("head", {}).get("ref") == head_branch]

    def create_pull(
        self, title: str, body: str, head_branch: str, base_branch: str, *, draft: bool
    ) -> tuple[str, Pull]:
        def evidence() -> Pull | None:
            found = self.open_pulls_for(head_branch)
            if len(found) > 1:
                raise ActError(
                    "github-ambiguous-pull-request", f"{len(found)} open pull requests have head branch {head_branch}"
                )
            return found[0] if found else None

        payload = {"title": title, "body": body, "head": head_branch, "base": base_branch, "draft": draft}
        return write_once(lambda: self.write("pulls.create", **payload), evidence, "create-pr")

    def mark_ready(self, number: int) -> str:
        def evidence() -> bool | None:
            return True if self.pull(number).draft is False else None

        node_id = self.pull(number).node_id
        outcome, _ = write_once(
            lambda: self.graphql_mutation(MARK_READY, {"pullRequestId": node_id}), evidence, "mark-draft-ready"
        )
        return outcome

    # -- comments -------------------------------------------------------------

    def issue_comments(self, number: int) -> list[Document]:
        return [c for c in self.client.get_all("issues.list_comments", issue_number=number) if isinstance(c, dict)]

    def comments_by(self, number: int, user_id: int, needle: str) -> list[Document]:
        return [
            c
            for c in self.issue_comments(number)
            if (c.get("user") or {}).get("id") == user_id and needle in (c.get("body") or "")
        ]

    def post_comment_once(self, number: int, user_id: int, body: str, marker: str, what: str) -> tuple[str, Comment]:
        """Post ``body`` unless a comment by this user carries ``marker``; that comment must be ``body`` exactly."""

        def evidence() -> Comment | None:
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
            return Comment.from_wire(found[0]) if found else None

        return write_once(lambda: self.write("issues.create_comment", issue_number=number, body=body), evidence, what)

    # -- review threads ---------------------------------------------------------

    def review_comments(self, number: int) -> list[Document]:
        comments = self.client.get_all("pulls.list_review_comments", pull_number=number)
        return [c for c in comments if isinstance(c, dict)]

    def reply_once(self, number: int, user_id: int, root_node_id: str, body: str, marker: str) -> str:
        """One reply in the thread whose root comment is ``root_node_id``, carrying ``marker``."""

        def root() -> Document:
            found = [c for c in self.review_comments(number) if c.get("node_id") == root_node_id]
            if len(found) != 1:
                raise ActError(
                    "thread-root-not-found", f"the root comment {root_node_id} of a planned thread is not on the PR"
                )
            return found[0]

        root_id = root().get("id")
        # The id becomes part of the reply's URL: only a positive integer may (a string
        # such as "1/../../other" would address another resource on the same host).
        if type(root_id) is not int or root_id < 1:
            raise ActError(
                "thread-root-not-found", f"the root comment {root_node_id} of a planned thread has no integer id"
            )

        def evidence() -> Document | None:
            replies = [
                c
                for c in self.review_comments(number)
                if c.get("in_reply_to_id") == root_id
                and (c.get("user") or {}).get("id") == user_id
                and marker in (c.get("body") or "")
            ]
            return replies[0] if replies else None

        def reply() -> object:
            operation = "pulls.create_reply_for_review_comment"
            return self.write(operation, pull_number=number, comment_id=root_id, body=body)

        outcome, _ = write_once(reply, evidence, "reply-to-codex-threads")
        return outcome

    def resolve_thread(self, thread_id: str) -> str:
        def evidence() -> bool | None:
            node = self.client.graphql(THREAD_STATE, {"id": thread_id}).get("node")
            if not isinstance(node, dict) or node.get("id") != thread_id:
                raise ActError("thread-not-found", f"review thread {thread_id} is not on GitHub")
            return True if node.get("isResolved") is True else None

        outcome, _ = write_once(
            lambda: self.graphql_mutation(RESOLVE_THREAD, {"threadId": thread_id}),
            evidence,
            "resolve-codex-threads",
        )
        return outcome

    def branch_tip(self, branch: str) -> str | None:
        reply = self.client.get("git.get_ref", ref=f"heads/{branch}", tolerated=(404,))
        return None if reply.body is None else reply.body.get("object", {}).get("sha")
