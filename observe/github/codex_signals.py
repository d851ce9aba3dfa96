"""What Codex says on a pull request, and how to read it exactly.

Every text pattern is policy data in ``CODEX_TEXT_POLICY`` below: formats
drift, so a reader should find all of them in one place, each with a fixture
under fixtures/github/codex/. Anything that looks like a Codex signal but does
not match exactly is an error, never a guess (references/github-observations.md,
"Codex comments").

Trust is by numeric account id only: ``user.id`` 199175422 with
``user.type == "Bot"`` on comments and reviews. The reactions endpoint reports
the same account as ``type: "User"``, so for reactions the id alone decides.
"""

from __future__ import annotations

import re
from typing import Any

from evaluator.policy import TRUSTED_CODEX_BOT_ID, TRUSTED_CODEX_BOT_TYPE
from observe.github.errors import GitHubObservationError

CODEX_TEXT_POLICY: dict[str, Any] = {
    # An issue comment from Codex that starts with this is the in-place summary table.
    "summary_marker": "<!-- codex-pull-request-review-summary -->",
    # Header cells the summary table must start with (a fourth, trigger column may follow).
    "summary_header": ("Review", "Status", "Commit"),
    # Status words in the table, bold, optionally after an emoji and before a time.
    "summary_statuses": {"Running": "running", "Completed": "completed", "Failed": "failed"},
    # Review kinds in the table: only a code review answers "@codex review";
    # a security review row is recognised and deliberately left out.
    "summary_review_kinds": {"Code Review": True, "Security Review": False},
    # The clean text of a Codex Review issue comment ("Codex Review: Didn't find any major issues. ...").
    "clean_review_text": "Didn't find any major issues",
    # "**Reviewed commit:** `<first 7-40 hex of the sha>`" in review bodies and clean comments.
    "reviewed_commit": re.compile(r"\*\*Reviewed commit:\*\* `([0-9a-f]{7,40})`"),
    # Replies that mean no review will come: neither findings nor a clean signal.
    "unavailable_replies": {
        "usage-limit": "You have reached your Codex usage limits",
        "no-environment": "To use Codex here, create an environment for this repo",
        "workspace-deactivated": "This workspace is deactivated",
    },
}

_SUMMARY_REVIEW_CELL = re.compile(r"(?:\S{1,4}\s+)?(?:\*\*(?P<bold>[A-Za-z ]{1,40})\*\*|(?P<bare>[A-Za-z ]{1,40}))")
_SUMMARY_STATUS_CELL = re.compile(
    r"(?:\S{1,4}\s+)?\*\*(?P<status>[A-Za-z ]{1,40})\*\*(?:\s+since)?"
    r'(?:\s+(?:<relative-time datetime="[0-9TZ:.+-]{1,40}">[^<>|]{0,60}</relative-time>|[0-9TZ:.+-]{10,40}))?'
)
_SUMMARY_COMMIT_CELL = re.compile(r"`(?P<sha>[0-9a-f]{7,40})`")
_TABLE_SEPARATOR_CELL = re.compile(r":?-{1,}:?")


def is_trusted_codex_author(user: Any) -> bool:
    """Comments and reviews: the numeric id and the Bot type, never the login."""
    return (
        isinstance(user, dict) and user.get("id") == TRUSTED_CODEX_BOT_ID and user.get("type") == TRUSTED_CODEX_BOT_TYPE
    )


def is_trusted_codex_reactor(user: Any) -> bool:
    """Reactions: GitHub reports the Codex account as "User" here, so the id alone decides."""
    return isinstance(user, dict) and user.get("id") == TRUSTED_CODEX_BOT_ID


def classify_codex_issue_comment(comment_id: int, body: str) -> tuple[str, str | None]:
    """("summary", None), ("unavailable", kind) or ("response", None) for a trusted Codex issue comment."""
    marker = CODEX_TEXT_POLICY["summary_marker"]
    if body.startswith(marker):
        return "summary", None
    if marker in body:
        raise GitHubObservationError(
            "github-unrecognised-codex-summary",
            f"Codex comment {comment_id} carries the summary marker but does not start with it",
        )
    kinds = [kind for kind, text in CODEX_TEXT_POLICY["unavailable_replies"].items() if text in body]
    if len(kinds) > 1 or (kinds and is_clean_review_text(body)):
        raise GitHubObservationError(
            "github-ambiguous-codex-comment",
            f"Codex comment {comment_id} matches more than one reply form ({', '.join(kinds)})",
        )
    if kinds:
        return "unavailable", kinds[0]
    return "response", None


def is_clean_review_text(body: str) -> bool:
    return CODEX_TEXT_POLICY["clean_review_text"] in body


def reviewed_commit_prefix(comment_id: int, body: str) -> str | None:
    """The short sha after "**Reviewed commit:**", None when absent."""
    prefixes = set(CODEX_TEXT_POLICY["reviewed_commit"].findall(body))
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
    expected_header = list(CODEX_TEXT_POLICY["summary_header"])
    if header[: len(expected_header)] != expected_header or len(header) > len(expected_header) + 1:
        raise unrecognised(
            f"the table header is not {expected_header!r} plus at most one column ({len(header)} cells seen)"
        )
    if rows and all(_TABLE_SEPARATOR_CELL.fullmatch(cell) for cell in rows[0]):
        rows = rows[1:]
    parsed: list[tuple[str, str]] = []
    for number, row in enumerate(rows, start=1):
        if len(row) != len(header):
            raise unrecognised(f"row {number} has {len(row)} cells, the header {len(header)}")
        review = _SUMMARY_REVIEW_CELL.fullmatch(row[0])
        kind = (review.group("bold") or review.group("bare")).strip() if review else None
        if kind not in CODEX_TEXT_POLICY["summary_review_kinds"]:
            raise unrecognised(f"row {number} has an unknown review kind")
        status_match = _SUMMARY_STATUS_CELL.fullmatch(row[1])
        status = CODEX_TEXT_POLICY["summary_statuses"].get(status_match.group("status")) if status_match else None
        if status is None:
            raise unrecognised(f"row {number} has an unknown status")
        commit = _SUMMARY_COMMIT_CELL.fullmatch(row[2])
        if commit is None:
            raise unrecognised(f"row {number} has no short sha")
        if CODEX_TEXT_POLICY["summary_review_kinds"][kind]:
            parsed.append((status, commit.group("sha")))
    return parsed
