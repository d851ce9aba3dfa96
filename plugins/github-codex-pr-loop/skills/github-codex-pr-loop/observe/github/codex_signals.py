"""Who Codex is, and the parts of its replies that need the collector's context.

Every text pattern is policy data in ``evaluator/policy.py`` (``CODEX_*``),
and which documented form a reply is, is read by ``evaluator/codex_text.py``;
each form has a fixture under fixtures/github/codex/. Here: the trust checks,
the summary table (rows and short shas), and the errors a reply that cannot
be read safely raises (references/github-observations.md, "Codex replies").

Trust is by numeric account id only: ``user.id`` 199175422 with
``user.type == "Bot"`` on comments and reviews. The reactions endpoint reports
the same account as ``type: "User"``, so for reactions the id alone decides.
"""

from __future__ import annotations

from typing import Any

from evaluator import codex_text, policy
from evaluator.policy import TRUSTED_CODEX_BOT_ID, TRUSTED_CODEX_BOT_TYPE
from observe.github.errors import GitHubObservationError


def is_trusted_codex_author(user: Any) -> bool:
    """Comments and reviews: the numeric id and the Bot type, never the login."""
    return (
        isinstance(user, dict) and user.get("id") == TRUSTED_CODEX_BOT_ID and user.get("type") == TRUSTED_CODEX_BOT_TYPE
    )


def is_trusted_codex_reactor(user: Any) -> bool:
    """Reactions: GitHub reports the Codex account as "User" here, so the id alone decides."""
    return isinstance(user, dict) and user.get("id") == TRUSTED_CODEX_BOT_ID


def read_codex_issue_comment(comment_id: int, body: str) -> codex_text.Reading:
    """The form of a trusted Codex issue comment; a reply that cannot be read safely raises."""
    if not body.startswith(policy.CODEX_SUMMARY_MARKER) and policy.CODEX_SUMMARY_MARKER in body:
        raise GitHubObservationError(
            "github-unrecognised-codex-summary",
            f"Codex comment {comment_id} carries the summary marker but does not start with it",
        )
    try:
        return codex_text.read_issue_comment(body)
    except codex_text.AmbiguousReplyError as error:
        raise GitHubObservationError(
            "github-ambiguous-codex-comment", f"Codex comment {comment_id} matches more than one reply form"
        ) from error


def reviewed_commit_prefix(comment_id: int, body: str) -> str | None:
    """The short sha after "**Reviewed commit:**", None when absent."""
    prefixes = codex_text.reviewed_commit_prefixes(body)
    if len(prefixes) > 1:
        raise GitHubObservationError(
            "github-ambiguous-short-sha", f"Codex comment {comment_id} names {len(prefixes)} different reviewed commits"
        )
    return prefixes.pop() if prefixes else None


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:-1] if inner.endswith("|") and len(inner) > 1 else inner[1:]
    return [cell.strip() for cell in inner.split("|")]


def parse_summary_rows(comment_id: int, body: str) -> list[tuple[str, str]]:
    """(status, short sha) for every code-review row of a Codex summary table.

    The table must be one contiguous block whose header starts with
    Review | Status | Commit; every row must have a known review kind, one of
    the known status words and a short hex sha. Anything else raises
    ``github-unrecognised-codex-summary``.
    """

    def unrecognised(reason: str) -> GitHubObservationError:
        return GitHubObservationError(
            "github-unrecognised-codex-summary", f"Codex summary comment {comment_id}: {reason}"
        )

    lines = body.replace("\r\n", "\n").split("\n")
    table_indexes = [index for index, line in enumerate(lines) if line.strip().startswith("|")]
    if not table_indexes:
        raise unrecognised("no table")
    if table_indexes != list(range(table_indexes[0], table_indexes[-1] + 1)):
        raise unrecognised("more than one table block")
    table = [_cells(lines[index]) for index in table_indexes]
    header, rows = table[0], table[1:]
    expected_header = list(policy.CODEX_SUMMARY_HEADER)
    if header[: len(expected_header)] != expected_header or len(header) > len(expected_header) + 1:
        raise unrecognised(
            f"the table header is not {expected_header!r} plus at most one column ({len(header)} cells seen)"
        )
    if rows and all(policy.CODEX_TABLE_SEPARATOR_CELL.fullmatch(cell) for cell in rows[0]):
        rows = rows[1:]
    parsed: list[tuple[str, str]] = []
    for number, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise unrecognised(f"row {number} has {len(row)} cells, the header {len(header)}")
        review = policy.CODEX_SUMMARY_REVIEW_CELL.fullmatch(row[0])
        kind = (review.group("bold") or review.group("bare")).strip() if review else None
        if kind not in policy.CODEX_SUMMARY_REVIEW_KINDS:
            raise unrecognised(f"row {number} has an unknown review kind")
        status_match = policy.CODEX_SUMMARY_STATUS_CELL.fullmatch(row[1])
        status = policy.CODEX_SUMMARY_STATUSES.get(status_match.group("status")) if status_match else None
        if status is None:
            raise unrecognised(f"row {number} has an unknown status")
        commit = policy.CODEX_SUMMARY_COMMIT_CELL.fullmatch(row[2])
        if commit is None:
            raise unrecognised(f"row {number} has no short sha")
        if policy.CODEX_SUMMARY_REVIEW_KINDS[kind]:
            parsed.append((status, commit.group("sha")))
    return parsed
