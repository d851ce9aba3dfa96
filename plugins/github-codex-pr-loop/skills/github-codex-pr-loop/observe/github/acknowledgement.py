"""Did Codex pick the loop's request up? Its 👀 on the request comment, observed.

Codex reacts 👀 ("eyes") on a review request when it picks it up, long
before it answers. A request with neither that reaction by the trusted
account nor any Codex answer, ``policy.REQUEST_ACKNOWLEDGEMENT_TIMEOUT`` after
it was posted, was never picked up. The collector reports that observation as
one entry of ``unavailable_replies``: ``{"id": <request comment id>,
"created_at": <observed_at>, "kind": "unacknowledged"}``; the evaluator
decides what it means (references/recurring-state.md, "Codex signals").

The request comment's reactions are read only when they can matter: the
current request is past the acknowledgement bound, still inside its
deadline, and nothing of Codex's came after it. So a loop whose request was
picked up in time never makes the extra request.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from evaluator import policy
from evaluator.formats import parse_timestamp as instant
from observe.github import codex_signals
from observe.github.client import GitHubClient
from observe.github.fields import objects
from observe.github.observation import PullRequestObservation, RequestMarker, UnavailableReply


def _current_request(observation: PullRequestObservation) -> RequestMarker | None:
    """The request the collector's checkpoint names: the last by comment id."""
    requests = observation["requests"]
    return requests[-1] if requests else None


def codex_spoke_after(observation: PullRequestObservation, requested_at: datetime) -> bool:
    """Anything of Codex's after the request: a response, a "no review" reply, a summary row, a +1."""
    times = [
        *(response["created_at"] for response in observation["responses"]),
        *(response["content_version_at"] for response in observation["responses"]),
        *(reply["created_at"] for reply in observation["unavailable_replies"]),
        *(reply["created_at"] for reply in observation["unrecognized_replies"]),
        *(row["content_version_at"] for row in observation["summary_rows"]),
        *(reaction["created_at"] for reaction in observation["plus_one_reactions"]),
    ]
    return any(instant(moment) > requested_at for moment in times)


def due_request(observation: PullRequestObservation, observed_at: datetime) -> RequestMarker | None:
    """The current request when its acknowledgement is overdue and Codex has said nothing since, else None."""
    request = _current_request(observation)
    if request is None:
        return None
    requested_at = instant(request["created_at"])
    overdue = observed_at - requested_at >= policy.REQUEST_ACKNOWLEDGEMENT_TIMEOUT
    if not overdue or observed_at - requested_at > policy.REQUEST_TIMEOUT:
        return None  # past the deadline the request times out; the reactions change nothing
    return None if codex_spoke_after(observation, requested_at) else request


def acknowledged(reactions: list[Any]) -> bool:
    """Codex's 👀 among the request comment's reactions (the trusted id alone decides, as for every reaction)."""
    return any(
        reaction.get("content") == policy.CODEX_ACKNOWLEDGEMENT_REACTION
        and codex_signals.is_trusted_codex_reactor(reaction.get("user"))
        for reaction in objects(reactions, "request comment reactions")
    )


def unacknowledged_request(
    client: GitHubClient, observation: PullRequestObservation, observed_at: datetime
) -> UnavailableReply | None:
    """The observation that Codex never picked the current request up, or None.

    Its ``created_at`` is ``observed_at`` written as the state's ``observed_at`` is (UTC, ``Z``).
    """
    request = due_request(observation, observed_at)
    if request is None:
        return None
    reactions = client.get_all("reactions.list_for_issue_comment", comment_id=request["comment_id"])
    if acknowledged(reactions):
        return None
    stamp = observed_at.astimezone(UTC).isoformat().replace("+00:00", "Z")
    return {"id": str(request["comment_id"]), "created_at": stamp, "kind": policy.UNACKNOWLEDGED}
