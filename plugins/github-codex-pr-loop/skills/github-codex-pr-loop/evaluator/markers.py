"""The loop's own markers and the automation key: formatted and parsed here only.

A comment by the authenticated user that mentions ``github-codex-pr-loop-``
and this run id is either exactly one well-formed marker (a request or a
claim) or a marker anomaly. Nothing in between is accepted: a second marker,
an upper-case sha or a stray space makes the whole comment an anomaly, which
the evaluator sees by id (references/github-observations.md#loop-markers-evaluatormarkerspy).

Formats (one line, single spaces, lowercase hex):

    <!-- github-codex-pr-loop-request run=<32 hex> round=<n> sha=<40 hex> -->
    <!-- github-codex-pr-loop-claim run=<32 hex> kind=<remediation|finalization|cleanup> plan=<64 hex>
         request=<comment id>:<40 hex> wakeup=<32 hex> -->      (one line, wrapped here)
    <!-- github-codex-pr-loop-reply run=<32 hex> round=<n> -->
    github-codex-pr-loop:<host>/<owner>/<repo>#<pr number>@<32 hex>      (the automation key)

``<n>`` is a decimal without leading zeros, at most nine digits. In a review
request template the sha is the placeholder ``{{FINAL_HEAD_SHA}}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, cast, get_args

from . import policy
from .formats import DECIMAL_ID, DIGEST, REPOSITORY, RUN_ID, SHA, Grammar

MARKER_PREFIX = "github-codex-pr-loop-"
KEY_PREFIX = "github-codex-pr-loop:"
ROUND = Grammar(r"0|[1-9][0-9]{0,8}", "a round number")
HOST = Grammar(r"[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?", "a lowercase host name")

_CLAIM_KINDS = "|".join(get_args(policy.ClaimKind))
_REQUEST = re.compile(
    rf"<!-- {MARKER_PREFIX}request run=(?P<run>{RUN_ID.regex}) round=(?P<round>{ROUND.regex})"
    rf" sha=(?P<sha>{SHA.regex}) -->"
)
_CLAIM = re.compile(
    rf"<!-- {MARKER_PREFIX}claim run=(?P<run>{RUN_ID.regex}) kind=(?P<kind>{_CLAIM_KINDS})"
    rf" plan=(?P<plan>{DIGEST.regex}) request=(?P<request>{DECIMAL_ID.regex}:{SHA.regex})"
    rf" wakeup=(?P<wakeup>{RUN_ID.regex}) -->"
)
_REPLY = re.compile(rf"<!-- {MARKER_PREFIX}reply run=(?P<run>{RUN_ID.regex}) round=(?P<round>{ROUND.regex}) -->")
# Any comment that looks like one of the loop's markers, well-formed or not.
ANY_MARKER = re.compile(rf"<!--\s*{MARKER_PREFIX}.*?-->", re.DOTALL)
# The repository is matched loosely here and checked whole by its own grammar:
# its lookaheads speak of the end of the text, which is not the end of the key.
_KEY = re.compile(
    rf"{KEY_PREFIX}(?P<host>[^/]+)/(?P<repository>[^/#@]+/[^/#@]+)#(?P<pr>{DECIMAL_ID.regex})@(?P<run>{RUN_ID.regex})"
)


class RequestMarker(NamedTuple):
    run_id: str
    round: int
    head_sha: str


class ClaimMarker(NamedTuple):
    run_id: str
    kind: policy.ClaimKind
    plan_hash: str
    request_key: str
    wakeup_id: str


class ReplyMarker(NamedTuple):
    run_id: str
    round: int


class AutomationKey(NamedTuple):
    host: str
    repository: str
    pr_number: int
    run_id: str


# --- formatting --------------------------------------------------------------


def request_marker(run_id: str, round_number: int, head_sha: str = policy.FINAL_HEAD_PLACEHOLDER) -> str:
    """The canonical review-request marker (the sha stays a placeholder in templates)."""
    return f"<!-- {MARKER_PREFIX}request run={run_id} round={round_number} sha={head_sha} -->"


def default_review_template(run_id: str, round_number: int, addressed_comment_ids: Sequence[str] = ()) -> str:
    # `@codex review` is Codex's documented review trigger; other @codex text may
    # start a code-changing task instead. Findings Codex posted as plain PR
    # comments have no thread to reply to, so the request itself says which
    # of them this round addressed.
    addressed = ""
    if addressed_comment_ids:
        named = ", ".join(addressed_comment_ids)
        addressed = f"This round addresses the findings Codex posted as PR comments {named}.\n"
    return f"@codex review\n{addressed}{request_marker(run_id, round_number)}"


def addressed_comment_ids(state: Mapping[str, Any]) -> list[str]:
    """The Codex issue comments with findings that answer the current request (a JSON state, by integer id).

    The same comments the evaluator counts as findings (evaluator/facts.py,
    ``is_finding``): not clean, not unrecognised, answering this request, on
    the requested head or naming no commit.
    """
    unrecognized = {reply["id"] for reply in state["unrecognized_replies"] if reply["source"] == "issue-comment"}
    ids = [
        response["id"]
        for response in state["responses"]
        if response["source"] == "issue-comment"
        and not response["zero_findings_signal"]
        and response["id"] not in unrecognized
        and response["trigger_request_comment_id"] == state["request_comment_id"]
        and response["commit_sha"] in (state["request_head_sha"], None)
    ]
    return sorted(ids, key=int)


def claim_marker(run_id: str, kind: str, plan_hash: str, request_key: str, wakeup_id: str) -> str:
    """Posted as an issue comment before a plan executes: the externally observable claim."""
    return (
        f"<!-- {MARKER_PREFIX}claim run={run_id} kind={kind} plan={plan_hash}"
        f" request={request_key} wakeup={wakeup_id} -->"
    )


def reply_marker(run_id: str, round_number: int) -> str:
    """Ends every reply to a Codex thread, so a later wakeup knows the thread was addressed."""
    return f"<!-- {MARKER_PREFIX}reply run={run_id} round={round_number} -->"


def automation_key(host: str, repository: str, pr_number: int, run_id: str) -> str:
    """The canonical loop key: names the one automation this run owns."""
    return f"{KEY_PREFIX}{host}/{repository}#{pr_number}@{run_id}"


# --- parsing (exact: the whole text is the marker) --------------------------------


def parse_request_marker(text: str) -> RequestMarker | None:
    match = _REQUEST.fullmatch(text)
    return None if match is None else RequestMarker(match["run"], int(match["round"]), match["sha"])


def parse_claim_marker(text: str) -> ClaimMarker | None:
    match = _CLAIM.fullmatch(text)
    if match is None:
        return None
    kind = cast(policy.ClaimKind, match["kind"])  # the regex admits only the ClaimKind values
    return ClaimMarker(match["run"], kind, match["plan"], match["request"], match["wakeup"])


def parse_reply_marker(text: str) -> ReplyMarker | None:
    match = _REPLY.fullmatch(text)
    return None if match is None else ReplyMarker(match["run"], int(match["round"]))


def parse_automation_key(text: str) -> AutomationKey | None:
    match = _KEY.fullmatch(text)
    if match is None or not HOST.matches(match["host"]) or not REPOSITORY.matches(match["repository"]):
        return None
    return AutomationKey(match["host"], match["repository"], int(match["pr"]), match["run"])


# --- classifying a comment -------------------------------------------------------


class LoopMarker(NamedTuple):
    kind: str  # "request", "claim", "reply", "anomaly" or "none"
    marker: RequestMarker | ClaimMarker | ReplyMarker | None


_PARSERS = {
    "request": (_REQUEST, parse_request_marker),
    "claim": (_CLAIM, parse_claim_marker),
    "reply": (_REPLY, parse_reply_marker),
}


def _single_marker(body: str, run_id: str, kinds: tuple[str, ...]) -> LoopMarker:
    if MARKER_PREFIX not in body or run_id not in body:
        return LoopMarker("none", None)  # not about this run
    found: list[tuple[str, RequestMarker | ClaimMarker | ReplyMarker | None]] = []
    for kind in kinds:
        pattern, parse = _PARSERS[kind]
        found += [(kind, parse(match.group(0))) for match in pattern.finditer(body) if match["run"] == run_id]
    if body.count(MARKER_PREFIX) == 1 and len(found) == 1:
        return LoopMarker(*found[0])
    return LoopMarker("anomaly", None)


def classify_issue_comment(body: str, run_id: str) -> LoopMarker:
    """The one request or claim marker of this run in an issue comment, an anomaly, or none."""
    return _single_marker(body, run_id, ("request", "claim"))


def reply_round(body: str, run_id: str) -> int | None:
    """The round of a thread reply's one well-formed reply marker for this run, else None."""
    marker = _single_marker(body, run_id, ("reply",)).marker
    return marker.round if isinstance(marker, ReplyMarker) else None


def template_markers(text: str) -> list[str]:
    """Every marker-like comment in a template, well-formed or not, in order."""
    return ANY_MARKER.findall(text)
