"""Review threads and the merge state, which only GraphQL exposes: fetched completely, then normalized.

Threads come 100 per query (``reviewThreads(first: 100, after: $cursor)``,
about one point each); a thread with more than 100 comments has its remaining
comments fetched through ``node(id:)`` 100 at a time. ``totalCount`` and
``pageInfo`` must agree with what was collected, or the observation fails.
The first page also selects the pull request's merge state
(``observe/github/merge_state.py``); its up to 100 check contexts add no point,
and a rollup with more continues through ``node(id:)`` like a long thread.
It also selects how many reviews and reactions the pull request has
(``LIST_COUNT_FIELDS``), the counts that let the REST reads of those lists
revalidate a full last page instead of fetching it again.
"""

from __future__ import annotations

from typing import Any

from evaluator.canonical import digest, text_digest
from evaluator.markers import reply_round
from evaluator.policy import TRUSTED_CODEX_BOT_ID
from observe.github.client import GitHubClient
from observe.github.errors import GitHubObservationError
from observe.github.fields import timestamp
from observe.github.merge_state import MERGE_STATE_FIELDS, ROLLUP_CONTEXTS_QUERY
from observe.github.observation import ThreadObservation

_COMMENT_FIELDS = """
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          body
          createdAt
          lastEditedAt
          author { login ... on Bot { databaseId } ... on User { databaseId } }
        }"""

# The lengths of the REST lists the pull request object does not count itself
# (it counts ``comments`` and ``review_comments``): with them a full last page
# of reviews or reactions is revalidated, not fetched again (client.get_all).
LIST_COUNT_FIELDS = """
      ... @include(if: $firstPage) {
        reviews { totalCount }
        reactions { totalCount }
      }"""
LIST_COUNT_KEYS = ("reviews", "reactions")

THREADS_QUERY = (
    """
query($owner: String!, $name: String!, $number: Int!, $cursor: String, $firstPage: Boolean!) {
  rateLimit { cost remaining }
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {{merge_state_fields}{list_count_fields}
      reviewThreads(first: 100, after: $cursor) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          isOutdated
          path
          line
          originalLine
          startLine
          diffSide
          comments(first: 100) {{comment_fields}
          }
        }
      }
    }
  }
}
""".replace("{merge_state_fields}", MERGE_STATE_FIELDS)
    .replace("{list_count_fields}", LIST_COUNT_FIELDS)
    .replace("{comment_fields}", _COMMENT_FIELDS)
)

THREAD_COMMENTS_QUERY = """
query($id: ID!, $cursor: String) {
  rateLimit { cost remaining }
  node(id: $id) {
    ... on PullRequestReviewThread {
      comments(first: 100, after: $cursor) {{comment_fields}
      }
    }
  }
}
""".replace("{comment_fields}", _COMMENT_FIELDS)

MAX_GRAPHQL_PAGES = 200


def _shape_error(message: str) -> GitHubObservationError:
    return GitHubObservationError("github-unexpected-shape", f"GraphQL: {message}")


def _incomplete(message: str) -> GitHubObservationError:
    return GitHubObservationError("github-incomplete-pagination", f"GraphQL: {message}")


def _connection(value: Any, where: str) -> tuple[list[Any], bool, str | None, int]:
    if not isinstance(value, dict):
        raise _shape_error(f"{where} is not a connection")
    nodes, page_info, total = value.get("nodes"), value.get("pageInfo"), value.get("totalCount")
    if not isinstance(nodes, list) or not isinstance(page_info, dict) or not isinstance(total, int):
        raise _shape_error(f"{where} lacks nodes, pageInfo or totalCount")
    has_next, cursor = page_info.get("hasNextPage"), page_info.get("endCursor")
    if not isinstance(has_next, bool) or not (cursor is None or isinstance(cursor, str)):
        raise _shape_error(f"{where} has a malformed pageInfo")
    if has_next and not cursor:
        raise _incomplete(f"{where} has a next page but no end cursor")
    return nodes, has_next, cursor, total


def _paginate(fetch_page, where: str, collected: list[Any] | None = None, cursor: str | None = None) -> list[Any]:
    """Collect every node of a connection; ``fetch_page(cursor)`` returns the connection object.

    ``collected``/``cursor`` resume a connection whose first page is already held.
    """
    collected = list(collected or [])
    seen_cursors: set[str] = {cursor} if cursor else set()
    for _ in range(MAX_GRAPHQL_PAGES):
        nodes, has_next, next_cursor, total = _connection(fetch_page(cursor), where)
        collected.extend(nodes)
        if not has_next:
            break
        if next_cursor is None or next_cursor in seen_cursors:
            raise _incomplete(f"{where} repeats a cursor")
        seen_cursors.add(next_cursor)
        cursor = next_cursor
    else:
        raise _incomplete(f"{where} exceeds {MAX_GRAPHQL_PAGES} pages")
    if total != len(collected):
        raise _incomplete(f"{where} collected {len(collected)} of totalCount {total}")
    return collected


def fetch_review_threads(
    client: GitHubClient, owner: str, name: str, number: int
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, int]]:
    """Every review thread of the PR, each with every comment under ``comments``;
    the merge-state fields of the first page with every rollup context under ``contexts``;
    and the first page's list counts (``LIST_COUNT_KEYS``)."""
    first_page: dict[str, Any] = {}

    def thread_page(cursor: str | None) -> Any:
        variables = {"owner": owner, "name": name, "number": number, "cursor": cursor, "firstPage": cursor is None}
        data = client.graphql(THREADS_QUERY, variables)
        repository = data.get("repository")
        pull = repository.get("pullRequest") if isinstance(repository, dict) else None
        if not isinstance(pull, dict):
            raise _shape_error(f"pull request {owner}/{name}#{number} is missing from the answer")
        if cursor is None:
            first_page.update(pull)
        return pull.get("reviewThreads")

    threads = _paginate(thread_page, "reviewThreads")
    complete: list[dict[str, Any]] = []
    for thread in threads:
        if not isinstance(thread, dict) or not isinstance(thread.get("id"), str):
            raise _shape_error("a thread has no id")
        nodes, has_next, cursor, total = _connection(thread.get("comments"), f"thread {thread['id']} comments")
        comments = list(nodes)
        if has_next:
            thread_id = thread["id"]

            def comment_page(after: str | None, thread_id: str = thread_id) -> Any:
                data = client.graphql(THREAD_COMMENTS_QUERY, {"id": thread_id, "cursor": after})
                node = data.get("node")
                if not isinstance(node, dict):
                    raise _shape_error(f"thread {thread_id} is missing from the answer")
                return node.get("comments")

            comments = _paginate(comment_page, f"thread {thread_id} comments", collected=comments, cursor=cursor)
        if len(comments) != total:
            raise _incomplete(f"thread {thread['id']} has {len(comments)} of {total} comments")
        complete.append({**thread, "comments": comments})
    counts = list_counts(first_page)
    merge_state = {
        key: value for key, value in first_page.items() if key != "reviewThreads" and key not in LIST_COUNT_KEYS
    }
    contexts = _rollup_contexts(client, merge_state.get("statusCheckRollup"), number)
    return complete, {**merge_state, "contexts": contexts}, counts


def list_counts(pull: dict[str, Any]) -> dict[str, int]:
    """``{"reviews": n, "reactions": n}`` from the first page; a missing or malformed count is a shape error."""
    counts: dict[str, int] = {}
    for key in LIST_COUNT_KEYS:
        value = pull.get(key)
        total = value.get("totalCount") if isinstance(value, dict) else None
        if not isinstance(total, int) or isinstance(total, bool) or total < 0:
            raise _shape_error(f"pull request {key} has no totalCount")
        counts[key] = total
    return counts


def _rollup_contexts(client: GitHubClient, rollup: Any, number: int) -> list[Any]:
    """Every context of the head commit's status-check rollup (none when there is no rollup)."""
    if rollup is None:
        return []
    if not isinstance(rollup, dict):
        raise _shape_error("statusCheckRollup is not an object")
    nodes, has_next, cursor, total = _connection(rollup.get("contexts"), "statusCheckRollup contexts")
    if not has_next:
        if total != len(nodes):
            raise _incomplete(f"statusCheckRollup contexts has {len(nodes)} of totalCount {total}")
        return list(nodes)
    rollup_id = rollup.get("id")
    if not isinstance(rollup_id, str):
        raise _shape_error("statusCheckRollup has more contexts but no id")

    def context_page(after: str | None) -> Any:
        data = client.graphql(ROLLUP_CONTEXTS_QUERY, {"id": rollup_id, "cursor": after, "number": number})
        node = data.get("node")
        if not isinstance(node, dict):
            raise _shape_error("statusCheckRollup is missing from the answer")
        return node.get("contexts")

    return _paginate(context_page, "statusCheckRollup contexts", collected=nodes, cursor=cursor)


def _author_database_id(comment: dict[str, Any]) -> int | None:
    author = comment.get("author")
    value = author.get("databaseId") if isinstance(author, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _optional(value: Any, kind: type, where: str) -> Any:
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise _shape_error(f"{where} is a {type(value).__name__}, not {kind.__name__} or null")
    return value


def position_digest(thread: dict[str, Any]) -> str:
    """SHA-256 of the canonical position object; every member may be null.

    {"diff_side": diffSide, "line": line, "original_line": originalLine,
     "path": path, "start_line": startLine}
    """
    where = f"thread {thread['id']}"
    return digest(
        {
            "diff_side": _optional(thread.get("diffSide"), str, f"{where} diffSide"),
            "line": _optional(thread.get("line"), int, f"{where} line"),
            "original_line": _optional(thread.get("originalLine"), int, f"{where} originalLine"),
            "path": _optional(thread.get("path"), str, f"{where} path"),
            "start_line": _optional(thread.get("startLine"), int, f"{where} startLine"),
        }
    )


def normalize_thread(thread: dict[str, Any], authenticated_user_id: int, run_id: str) -> ThreadObservation:
    where = f"thread {thread['id']}"
    comments = thread["comments"]
    if not comments:
        raise _shape_error(f"{where} has no comments")
    for flag in ("isResolved", "isOutdated"):
        if not isinstance(thread.get(flag), bool):
            raise _shape_error(f"{where} {flag} is not a boolean")
    root = comments[0]
    if not isinstance(root, dict) or not isinstance(root.get("id"), str) or not isinstance(root.get("body"), str):
        raise _shape_error(f"{where} root comment lacks id or body")
    created_at = timestamp(root.get("createdAt"), f"{where} root createdAt")
    edited_at = root.get("lastEditedAt")
    version_at = timestamp(edited_at, f"{where} root lastEditedAt") if edited_at is not None else created_at
    rounds = []
    for reply in comments[1:]:
        if not isinstance(reply, dict) or not isinstance(reply.get("body"), str):
            raise _shape_error(f"{where} has a comment without a body")
        if _author_database_id(reply) == authenticated_user_id:
            round_number = reply_round(reply["body"], run_id)
            if round_number is not None:
                rounds.append(round_number)
    return {
        "thread": {
            "body_sha256": text_digest(root["body"]),
            "content_version_at": version_at,
            "id": thread["id"],
            "position_sha256": position_digest(thread),
            "root_comment_id": root["id"],
        },
        "is_resolved": thread["isResolved"],
        "is_outdated": thread["isOutdated"],
        "root_is_codex": _author_database_id(root) == TRUSTED_CODEX_BOT_ID,
        "addressed_round": max(rounds) if rounds else None,
        "text": {
            "path": thread.get("path"),
            "start_line": thread.get("startLine"),
            "line": thread.get("line") if thread.get("line") is not None else thread.get("originalLine"),
            "body": root["body"],
        },
    }
