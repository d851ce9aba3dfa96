"""Loop markers and Codex answers, normalized from issue comments, reviews and reactions.

Who said it decides what it is: the authenticated user's comments carry the
loop's own markers (requests, claims, anomalies); the trusted Codex account's
comments, reviews and review comments are responses, unavailable replies or
summary rows (observe/github/codex_signals.py); everyone else is ignored.
"""

from __future__ import annotations

from typing import Any

from evaluator import codex_text, markers, policy
from evaluator.canonical import text_digest
from evaluator.formats import parse_timestamp as instant
from evaluator.policy import TRUSTED_CODEX_BOT_ID, TRUSTED_CODEX_BOT_TYPE
from observe.github import codex_signals
from observe.github.errors import GitHubObservationError
from observe.github.fields import author_id, body_text, positive_id, sha40, timestamp
from observe.github.observation import (
    Claim,
    PlusOneReaction,
    RequestMarker,
    Response,
    SummaryRow,
    UnavailableReply,
    UnrecognizedReply,
)


def loop_comments(
    comments: list[dict[str, Any]], user_id: int, run_id: str
) -> tuple[list[RequestMarker], list[Claim], list[str]]:
    requests: list[RequestMarker] = []
    claims: list[Claim] = []
    anomalies: list[int] = []
    for comment in comments:
        if author_id(comment) != user_id:
            continue
        comment_id = positive_id(comment, "issue comment")
        where = f"issue comment {comment_id}"
        classified = markers.classify_issue_comment(body_text(comment, where), run_id)
        marker = classified.marker
        if classified.kind == "anomaly":
            anomalies.append(comment_id)
        elif isinstance(marker, markers.RequestMarker):
            requests.append(
                {
                    "comment_id": comment_id,
                    "created_at": timestamp(comment.get("created_at"), f"{where} created_at"),
                    "round": marker.round,
                    "head_sha": marker.head_sha,
                    "body_sha256": text_digest(comment["body"]),
                }
            )
        elif isinstance(marker, markers.ClaimMarker):
            claims.append(
                {
                    "comment_id": comment_id,
                    "created_at": timestamp(comment.get("created_at"), f"{where} created_at"),
                    "kind": marker.kind,
                    "plan_hash": marker.plan_hash,
                    "request_key": marker.request_key,
                    "wakeup_id": marker.wakeup_id,
                }
            )
    return (
        sorted(requests, key=lambda r: r["comment_id"]),
        sorted(claims, key=lambda c: c["comment_id"]),
        [str(comment_id) for comment_id in sorted(anomalies)],
    )


class RequestIndex:
    """Answers "which request did this answer?" and "which head is this short sha?"."""

    def __init__(self, requests: list[RequestMarker]):
        self._by_time = sorted(requests, key=lambda r: (instant(r["created_at"]), r["comment_id"]))
        self._heads = {r["head_sha"] for r in requests}

    def trigger(self, created_at: str) -> int | None:
        moment = instant(created_at)
        earlier = [r for r in self._by_time if instant(r["created_at"]) < moment]
        return earlier[-1]["comment_id"] if earlier else None

    def expand(self, prefix: str | None, where: str) -> str | None:
        if prefix is None:
            return None
        matches = {sha for sha in self._heads if sha.startswith(prefix)}
        if len(matches) > 1:
            raise GitHubObservationError(
                "github-ambiguous-short-sha", f"{where}: {prefix} matches {len(matches)} requested heads"
            )
        return matches.pop() if matches else None


def _response(
    source: str,
    item_id: int,
    body: str,
    commit_sha: str | None,
    created_at: str,
    version_at: str,
    requests: RequestIndex,
    clean: bool,
) -> Response:
    return {
        "body_sha256": text_digest(body),
        "bot_id": TRUSTED_CODEX_BOT_ID,
        "bot_type": TRUSTED_CODEX_BOT_TYPE,
        "commit_sha": commit_sha,
        "content_version_at": version_at,
        "created_at": created_at,
        "id": str(item_id),
        "source": source,
        "trigger_request_comment_id": requests.trigger(created_at),
        "zero_findings_signal": clean,
    }


def _unrecognized(source: str, item_id: int, created_at: str, body: str) -> UnrecognizedReply:
    return {"id": str(item_id), "created_at": created_at, "excerpt": codex_text.excerpt(body), "source": source}


def _named_commit(comment_id: int, body: str, requests: RequestIndex, where: str) -> tuple[bool, str | None]:
    """(names a commit, the requested head it names): the Reviewed commit line, else a blob permalink.

    A comment that names no commit at all is bound by the evaluator to the
    request it answers, the way a +1 is (references/recurring-state.md).
    """
    prefix = codex_signals.reviewed_commit_prefix(comment_id, body)
    if prefix is not None:
        return True, requests.expand(prefix, where)
    linked = codex_text.permalink_shas(body)
    requested = sorted(sha for sha in linked if requests.expand(sha, where) is not None)
    if len(requested) > 1:
        raise GitHubObservationError(
            "github-ambiguous-short-sha", f"{where} links to {len(requested)} different requested heads"
        )
    return bool(linked), requested[0] if requested else None


def foreign_review_requests(comments: list[dict[str, Any]], requests: list[RequestMarker]) -> list[str]:
    """When someone other than this run asked Codex for a review: the ``created_at`` of every issue
    comment with a line that begins "@codex review", except this run's own requests and Codex's comments."""
    ours = {request["comment_id"] for request in requests}
    found: list[str] = []
    for comment in comments:
        if codex_signals.is_trusted_codex_author(comment.get("user")):
            continue
        comment_id = positive_id(comment, "issue comment")
        where = f"issue comment {comment_id}"
        if comment_id not in ours and policy.CODEX_REVIEW_TRIGGER.search(body_text(comment, where)):
            found.append(timestamp(comment.get("created_at"), f"{where} created_at"))
    return found


def _answers_someone_else(created_at: str, foreign_requests: list[str]) -> bool:
    moment = instant(created_at)
    return any(instant(requested) < moment for requested in foreign_requests)


def codex_issue_comments(
    comments: list[dict[str, Any]], requests: RequestIndex, foreign_requests: list[str] | None = None
) -> tuple[list[Response], list[UnavailableReply], list[SummaryRow], list[UnrecognizedReply]]:
    """``foreign_requests``: when others asked for a review (``foreign_review_requests``)."""
    responses: list[Response] = []
    unavailable: list[UnavailableReply] = []
    summary_rows: list[SummaryRow] = []
    unrecognized: list[UnrecognizedReply] = []
    for comment in comments:
        if not codex_signals.is_trusted_codex_author(comment.get("user")):
            continue
        comment_id = positive_id(comment, "Codex issue comment")
        where = f"Codex issue comment {comment_id}"
        body = body_text(comment, where)
        created_at = timestamp(comment.get("created_at"), f"{where} created_at")
        updated_at = timestamp(comment.get("updated_at"), f"{where} updated_at")
        reading = codex_signals.read_codex_issue_comment(comment_id, body)
        if reading.form == "summary":
            for status, short_sha in codex_signals.parse_summary_rows(comment_id, body):
                summary_rows.append(
                    {
                        "comment_id": str(comment_id),
                        "status": status,
                        "head_sha": requests.expand(short_sha, where),
                        "content_version_at": updated_at,
                    }
                )
            continue
        if reading.form == "unavailable" and reading.kind is not None:
            unavailable.append({"id": str(comment_id), "created_at": created_at, "kind": reading.kind})
            continue
        names_commit, commit_sha = _named_commit(comment_id, body, requests, where)
        clean = reading.form in ("clean", "clean-commitless")
        unrequested = clean and names_commit and commit_sha is None
        if unrequested and _answers_someone_else(created_at, foreign_requests or []):
            # A clean answer about a commit the loop never asked about, posted after
            # someone else asked for a review: it answers that request, not this
            # loop's. Left unbound: no response of the loop, and no stop.
            continue
        # A clean text about a commit nobody asked about is no documented
        # form: it must not pass for the one-line clean that names no commit.
        if reading.form == "unrecognized" or unrequested:
            unrecognized.append(_unrecognized("issue-comment", comment_id, created_at, body))
        responses.append(
            _response("issue-comment", comment_id, body, commit_sha, created_at, updated_at, requests, clean)
        )
    unavailable.sort(key=lambda reply: int(reply["id"]))
    return responses, unavailable, summary_rows, unrecognized


def codex_reviews(
    reviews: list[dict[str, Any]], requests: RequestIndex
) -> tuple[list[Response], list[UnrecognizedReply], list[SummaryRow]]:
    """Responses, unrecognised replies, and the clean verdicts posted as reviews.

    A review's response cannot say "no findings" (only an issue comment's can,
    a state rule), so the clean verdict posted as a review is carried as what it
    states: a Completed code review of its ``commit_id``, a summary row whose
    ``comment_id`` is the review's id. Like any Completed row it counts once it
    has stood a heartbeat, and only for the requested head.
    """
    responses: list[Response] = []
    unrecognized: list[UnrecognizedReply] = []
    clean_rows: list[SummaryRow] = []
    for review in reviews:
        if not codex_signals.is_trusted_codex_author(review.get("user")):
            continue
        review_id = positive_id(review, "Codex review")
        where = f"Codex review {review_id}"
        submitted_at = timestamp(review.get("submitted_at"), f"{where} submitted_at")
        commit_id = review.get("commit_id")
        commit_sha = None if commit_id is None else sha40(commit_id, f"{where} commit_id")
        body = body_text(review, where)
        form = codex_text.read_review(body, commit_sha)
        if form == "clean":
            clean_rows.append(
                {
                    "comment_id": str(review_id),
                    "status": "completed",
                    "head_sha": requests.expand(commit_sha, where),
                    "content_version_at": submitted_at,
                }
            )
            continue
        if form == "unrecognized":
            unrecognized.append(_unrecognized("review", review_id, submitted_at, body))
        responses.append(_response("review", review_id, body, commit_sha, submitted_at, submitted_at, requests, False))
    return responses, unrecognized, clean_rows


def codex_review_comments(comments: list[dict[str, Any]], requests: RequestIndex) -> list[Response]:
    responses: list[Response] = []
    for comment in comments:
        if not codex_signals.is_trusted_codex_author(comment.get("user")):
            continue
        comment_id = positive_id(comment, "Codex review comment")
        where = f"Codex review comment {comment_id}"
        # original_commit_id is the commit the finding was written against; commit_id moves with the head.
        commit_sha = sha40(comment.get("original_commit_id"), f"{where} original_commit_id")
        created_at = timestamp(comment.get("created_at"), f"{where} created_at")
        updated_at = timestamp(comment.get("updated_at"), f"{where} updated_at")
        responses.append(
            _response(
                "review-comment",
                comment_id,
                body_text(comment, where),
                commit_sha,
                created_at,
                updated_at,
                requests,
                False,
            )
        )
    return responses


def plus_one_reactions(reactions: list[dict[str, Any]]) -> list[PlusOneReaction]:
    found: list[PlusOneReaction] = []
    for reaction in reactions:
        if reaction.get("content") == "+1" and codex_signals.is_trusted_codex_reactor(reaction.get("user")):
            reaction_id = positive_id(reaction, "reaction")
            found.append(
                {
                    "id": str(reaction_id),
                    "created_at": timestamp(reaction.get("created_at"), f"reaction {reaction_id} created_at"),
                }
            )
    return sorted(found, key=lambda reaction: int(reaction["id"]))
