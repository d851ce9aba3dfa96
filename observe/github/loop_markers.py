"""The loop's own HTML-comment markers, parsed exactly.

A comment by the authenticated user that mentions ``github-codex-pr-loop-``
and this run id is either exactly one well-formed marker (a request or a
claim) or a marker anomaly. Nothing in between is accepted: a second marker,
an upper-case sha or a stray space makes the whole comment an anomaly, which
the evaluator sees by id.

Formats (one line, single spaces, lowercase hex):

    <!-- github-codex-pr-loop-request run=<32 hex> round=<n> sha=<40 hex> -->
    <!-- github-codex-pr-loop-claim run=<32 hex> kind=<remediation|finalization|cleanup> plan=<64 hex> request=<comment id>:<40 hex> wakeup=<32 hex> -->
    <!-- github-codex-pr-loop-reply run=<32 hex> round=<n> -->

``<n>`` is a decimal without leading zeros, at most nine digits.
"""

from __future__ import annotations

import re
from typing import NamedTuple

MARKER_PREFIX = "github-codex-pr-loop-"
RUN_ID = re.compile(r"[0-9a-f]{32}")
_ROUND = r"(?P<round>0|[1-9][0-9]{0,8})"
REQUEST_MARKER = re.compile(rf"<!-- github-codex-pr-loop-request run=(?P<run>[0-9a-f]{{32}}) round={_ROUND} sha=(?P<sha>[0-9a-f]{{40}}) -->")
CLAIM_MARKER = re.compile(
    r"<!-- github-codex-pr-loop-claim run=(?P<run>[0-9a-f]{32}) kind=(?P<kind>remediation|finalization|cleanup)"
    r" plan=(?P<plan>[0-9a-f]{64}) request=(?P<request>[1-9][0-9]{0,15}:[0-9a-f]{40}) wakeup=(?P<wakeup>[0-9a-f]{32}) -->"
)
REPLY_MARKER = re.compile(rf"<!-- github-codex-pr-loop-reply run=(?P<run>[0-9a-f]{{32}}) round={_ROUND} -->")


class LoopMarker(NamedTuple):
    kind: str  # "request", "claim", "anomaly" or "none"
    match: re.Match[str] | None


def _single_marker(body: str, run_id: str, patterns: dict[str, re.Pattern[str]]) -> LoopMarker:
    if MARKER_PREFIX not in body or run_id not in body:
        return LoopMarker("none", None)  # not about this run
    matches = [(kind, m) for kind, pattern in patterns.items() for m in pattern.finditer(body) if m.group("run") == run_id]
    if body.count(MARKER_PREFIX) == 1 and len(matches) == 1:
        return LoopMarker(*matches[0])
    return LoopMarker("anomaly", None)


def classify_issue_comment(body: str, run_id: str) -> LoopMarker:
    """The one request or claim marker of this run in an issue comment, an anomaly, or none."""
    return _single_marker(body, run_id, {"request": REQUEST_MARKER, "claim": CLAIM_MARKER})


def reply_round(body: str, run_id: str) -> int | None:
    """The round of a thread reply's one well-formed reply marker for this run, else None."""
    marker = _single_marker(body, run_id, {"reply": REPLY_MARKER})
    return int(marker.match.group("round")) if marker.kind == "reply" and marker.match else None
