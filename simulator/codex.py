"""A scripted Codex reviewer on the simulated GitHub.

It behaves as Codex code review does on GitHub (see references/ and
fixtures/github/codex for the recorded texts): an issue comment whose line
reads ``@codex review`` on a pull request is a request; Codex reacts with 👀 on
it, and after a delay in simulated time answers for the head the pull request
had when the request was posted (the *requested head*). What it answers is
scripted, one entry per request, in order:

- ``"findings"``: a COMMENTED review "### 💡 Codex Review" naming the requested
  head (``**Reviewed commit:** `<sha10>```), with one inline P-badge comment per
  finding, each opening a review thread;
- ``"findings_comment"``: the same findings as one plain PR (issue) comment, no
  review and no thread (``"names_commit": False`` leaves out the reviewed
  commit line, so the answer names no head);
- ``"findings_plain"``: each finding as Codex posts it in a plain PR comment:
  the badge, the title, a blob permalink to the file and line at the requested
  head, the text; no review, no thread, no reviewed commit line;
- ``"clean"``: a +1 reaction on the pull request and the comment "Codex Review:
  Didn't find any major issues." naming the requested head;
- ``"clean_reaction"``: only the +1 reaction on the pull request, no comment;
- ``"clean_one_line"``: the 2025 one-line comment that names no commit,
  "Codex Review: Didn’t find any major issues. Swish!" (``"closer"`` changes
  the closing phrase), with no reaction;
- the replies that are no review at all, raw as GitHub serves them (links and
  typographic quotes included): ``"usage_limit"`` (``"unavailable"`` means the
  same) and ``"usage_limit_reached"`` (today's wording, "Codex usage limits
  have been reached for code reviews. ..."), ``"no_environment"`` (rendered
  text), ``"setup_environment"`` and ``"setup_account"`` (with their links),
  ``"workspace_deactivated"``, ``"error_went_wrong"`` and ``"error_not_completed"``;
- ``"says"``: the raw ``"body"`` the entry gives, as an issue comment (a reply
  in words the loop has never seen);
- ``"silence"``: nothing at all, not even the 👀: the request was never picked
  up (dropped, or the quota silently exhausted); the requester notices the
  missing acknowledgement;
- ``"stall"``: the 👀, and then nothing: Codex picked the request up and never
  answered (the requester's timeout is the only outcome).

With ``summary=True`` a ``"findings"`` entry may say ``"completed_first": N``:
the summary row turns Completed when the answer is due and the review itself
is posted N seconds later, the race GitHub shows. Every item appears only at
its own time on the simulated clock, so a collection in between sees the row
and not the review.

An entry may be a dict for details: ``{"kind": "findings", "after": 300,
"findings": [{"priority": "P2", "path": "src/app.py", "line": 3, "title": ...}]}``.
Requests past the end of the script are met with silence. With
``summary=True`` Codex also keeps its summary comment (Running, then Completed).

Auto-review: ``on_ready`` is a second script of the same entries, one per draft
marked ready for review (``markPullRequestReadyForReview``), answered for the
head the pull request had then, after the same delay, with no request comment
(Codex reacts 👀 on the pull request itself). These answers are recorded in
``auto_reviews``, never in ``requests``: the loop did not ask for them.

Identity: comments and reviews come from ``chatgpt-codex-connector[bot]``
(id 199175422, type Bot); reactions carry the same account with type User, as
the reactions endpoint reports it. A push that moves the head removes the +1.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from simulator.clock import iso
from simulator.world import USERS, Repository, World, fixture

BODIES = fixture("codex/bodies.json")
CODEX_BOT = USERS["codex_bot"]
CODEX_REACTOR = USERS["codex_as_reactor"]
DEFAULT_DELAY = timedelta(minutes=3)
_TRIGGER = re.compile(r"(?m)^@codex review\b")
_BADGE_COLOURS = {"P0": "red", "P1": "orange", "P2": "yellow", "P3": "green"}
REPLIES = {reply["name"]: reply for reply in fixture("codex/replies.json")["replies"]}
# Replies that are no review, by script kind: their raw bodies.
_UNAVAILABLE = {
    "unavailable": BODIES["usage_limit"],
    "usage_limit": BODIES["usage_limit"],
    "usage_limit_reached": REPLIES["usage-limit-limits-have-been-reached-credits"]["body"],
    "no_environment": BODIES["no_environment"],
    "setup_environment": REPLIES["setup-create-environment-link"]["body"],
    "setup_account": REPLIES["setup-create-account-link"]["body"],
    "workspace_deactivated": BODIES["workspace_deactivated"],
    "error_went_wrong": REPLIES["error-something-went-wrong"]["body"],
    "error_not_completed": REPLIES["error-could-not-complete"]["body"],
}
_KINDS = (
    "findings",
    "findings_comment",
    "findings_plain",
    "clean",
    "clean_reaction",
    "clean_one_line",
    "says",
    "silence",
    "stall",
    *_UNAVAILABLE,
)
_REVIEWED_COMMIT_LINE = re.compile(r"\*\*Reviewed commit:\*\* `[0-9a-f]+`\n")
_RELATIVE_TIME = re.compile(r'<relative-time datetime="[^"]*">[^<]*</relative-time>')


def finding_body(priority: str, title: str, text: str) -> str:
    """An inline finding as Codex writes it: badge, bold title, explanation, feedback line."""
    badge = f"![{priority} Badge](https://img.shields.io/badge/{priority}-{_BADGE_COLOURS[priority]}?style=flat)"
    return f"**<sub><sub>{badge}</sub></sub>  {title}**\n\n{text}\n\nUseful? React with 👍 / 👎."


def with_sha(body: str, sha: str) -> str:
    return body.replace("{sha7}", sha[:7]).replace("{sha10}", sha[:10]).replace("{sha40}", sha)


@dataclass
class Request:
    """One review request Codex saw, and what became of it."""

    repository: Repository
    number: int
    comment_id: int
    head_sha: str
    requested_at: datetime
    kind: str
    trigger: str = "request"  # or "ready_for_review" (an auto-review: comment_id is 0)
    answered_at: datetime | None = None
    answer_ids: list[int | str] = field(default_factory=list)


class CodexReviewer:
    """Answers ``@codex review`` comments on every repository of ``world`` (or only ``repository``) from ``script``."""

    def __init__(
        self,
        world: World,
        script: list[str | dict[str, Any]],
        *,
        delay: timedelta | float = DEFAULT_DELAY,
        summary: bool = False,
        repository: str | None = None,
        on_ready: list[str | dict[str, Any]] | None = None,
    ):
        self.world = world
        self.only = repository.lower() if repository else None  # answer this repository's requests only
        self.script = [self._entry_of(entry) for entry in script]
        self.on_ready = [self._entry_of(entry) for entry in on_ready or []]
        self.delay = delay if isinstance(delay, timedelta) else timedelta(seconds=delay)
        self.summary = summary
        self.requests: list[Request] = []
        self.auto_reviews: list[Request] = []
        self._summaries: dict[tuple[str, int], int] = {}
        world.add_user(CODEX_BOT)
        world.subscribe(self._on_event)

    # -- events ------------------------------------------------------------

    def _on_event(self, kind: str, event: dict[str, Any]) -> None:
        if self.only is not None and event["repository"].full_name.lower() != self.only:
            return
        if kind == "issue_comment.created":
            comment = event["comment"]
            if comment["user"]["id"] != CODEX_BOT["id"] and _TRIGGER.search(comment["body"] or ""):
                self._accept(event["repository"], event["number"], comment)
        elif kind == "pull_request.ready_for_review" and event.get("was_draft"):
            self._auto_review(event["repository"], event["number"])
        elif kind == "pull_request.synchronize":
            # A new push removes Codex's +1: it named the old head.
            repository, number = event["repository"], event["number"]
            self.world.remove_reactions(repository.owner, repository.name, number, CODEX_REACTOR["id"], "+1")

    @staticmethod
    def _entry_of(entry: str | dict[str, Any]) -> dict[str, Any]:
        entry = {"kind": entry} if isinstance(entry, str) else dict(entry)
        if entry.get("kind") not in _KINDS:
            raise ValueError(f"unknown Codex script entry {entry.get('kind')!r}")
        return entry

    def _entry(self, index: int) -> dict[str, Any]:
        return self.script[index] if index < len(self.script) else {"kind": "silence"}

    def _accept(self, repository: Repository, number: int, comment: dict[str, Any]) -> None:
        entry = self._entry(len(self.requests))
        pull = repository.pulls[number]
        self.world.refresh_pull(repository, pull)
        request = Request(repository, number, comment["id"], pull["head"]["sha"], self.world.clock.now, entry["kind"])
        self.requests.append(request)
        if entry["kind"] == "silence":
            return
        self.world.add_reaction(
            repository.owner, repository.name, number, CODEX_REACTOR, "eyes", comment_id=comment["id"]
        )
        if self.summary:
            self._summary(request, "summary_running")
        if entry["kind"] == "stall":
            return  # picked up, never answered
        self._schedule(request, entry)

    def _auto_review(self, repository: Repository, number: int) -> None:
        """A draft became ready: Codex reviews its head of its own accord, as its auto-review does."""
        if len(self.auto_reviews) >= len(self.on_ready):
            return
        entry = self.on_ready[len(self.auto_reviews)]
        pull = repository.pulls[number]
        self.world.refresh_pull(repository, pull)
        request = Request(
            repository, number, 0, pull["head"]["sha"], self.world.clock.now, entry["kind"], trigger="ready_for_review"
        )
        self.auto_reviews.append(request)
        if entry["kind"] == "silence":
            return
        self.world.add_reaction(repository.owner, repository.name, number, CODEX_REACTOR, "eyes")
        if self.summary:
            self._summary(request, "summary_running")
        if entry["kind"] == "stall":
            return
        self._schedule(request, entry)

    def _schedule(self, request: Request, entry: dict[str, Any]) -> None:
        delay = timedelta(seconds=entry["after"]) if "after" in entry else self.delay
        self.world.clock.schedule(request.requested_at + delay, lambda now: self._answer(request, entry))

    # -- answers -----------------------------------------------------------

    def _answer(self, request: Request, entry: dict[str, Any]) -> None:
        repository, number, sha = request.repository, request.number, request.head_sha
        owner, name = repository.owner, repository.name
        kind = entry["kind"]
        findings = entry.get("findings") or [{"priority": "P1"}]
        comments = [
            {
                "path": f.get("path", "README.md"),
                "line": f.get("line", 1),
                "body": finding_body(
                    f.get("priority", "P1"),
                    f.get("title", "Handle the failure path"),
                    f.get("text", "This path reports success before the operation finished."),
                ),
            }
            for f in findings
        ]
        if kind == "findings":
            lag = entry.get("completed_first")
            if self.summary and lag is not None:
                # GitHub's race: the row says Completed before the review is served.
                self._summary(request, "summary_completed")
                self.world.clock.schedule(
                    self.world.clock.now + timedelta(seconds=lag), lambda now: self._review(request, comments)
                )
                request.answered_at = self.world.clock.now
                return
            self._review(request, comments)
        elif kind == "findings_comment":
            body = with_sha(BODIES["findings_review"], sha)
            if entry.get("names_commit") is False:
                body = _REVIEWED_COMMIT_LINE.sub("", body)
            body += "".join(f"\n\n---\n\n`{c['path']}` line {c['line']}:\n\n{c['body']}" for c in comments)
            comment = self.world.add_issue_comment(owner, name, number, CODEX_BOT, body)
            request.answer_ids.append(comment["id"])
        elif kind == "findings_plain":
            for finding in comments:
                comment = self.world.add_issue_comment(
                    owner, name, number, CODEX_BOT, self._plain_finding(repository, sha, finding)
                )
                request.answer_ids.append(comment["id"])
        elif kind == "clean_reaction":
            reaction, _ = self.world.add_reaction(owner, name, number, CODEX_REACTOR, "+1")
            request.answer_ids.append(reaction["id"])
        elif kind == "clean":
            reaction, _ = self.world.add_reaction(owner, name, number, CODEX_REACTOR, "+1")
            comment = self.world.add_issue_comment(
                owner, name, number, CODEX_BOT, with_sha(BODIES["clean_comment"], sha)
            )
            request.answer_ids += [reaction["id"], comment["id"]]
        elif kind == "clean_one_line":
            body = "Codex Review: Didn\u2019t find any major issues. " + entry.get("closer", "Swish!")
            request.answer_ids.append(self.world.add_issue_comment(owner, name, number, CODEX_BOT, body)["id"])
        elif kind == "says":
            comment = self.world.add_issue_comment(owner, name, number, CODEX_BOT, entry["body"])
            request.answer_ids.append(comment["id"])
        else:
            comment = self.world.add_issue_comment(owner, name, number, CODEX_BOT, _UNAVAILABLE[kind])
            request.answer_ids.append(comment["id"])
        if self.summary and kind in (
            "findings",
            "findings_comment",
            "findings_plain",
            "clean",
            "clean_reaction",
            "clean_one_line",
        ):
            self._summary(request, "summary_completed")
        request.answered_at = self.world.clock.now

    def _review(self, request: Request, comments: list[dict[str, Any]]) -> None:
        repository, sha = request.repository, request.head_sha
        review = self.world.add_review(
            repository.owner,
            repository.name,
            request.number,
            CODEX_BOT,
            with_sha(BODIES["findings_review"], sha),
            "COMMENTED",
            commit_id=sha,
            comments=comments,
        )
        request.answer_ids.append(review["id"])

    @staticmethod
    def _plain_finding(repository: Repository, sha: str, comment: dict[str, Any]) -> str:
        """A finding as a plain comment: badge and title, the permalink to its line, the text."""
        title, _, rest = comment["body"].partition("\n\n")
        permalink = f"https://github.com/{repository.full_name}/blob/{sha}/{comment['path']}#L{comment['line']}"
        return f"{title}\n\n{permalink}\n\n{rest}"

    def _summary(self, request: Request, body_name: str) -> None:
        """Post, or edit in place, the one summary comment of the pull request."""
        repository, number = request.repository, request.number
        stamp = iso(self.world.clock.now)
        body = _RELATIVE_TIME.sub(
            f'<relative-time datetime="{stamp}">{stamp}</relative-time>', with_sha(BODIES[body_name], request.head_sha)
        )
        key = (repository.full_name.lower(), number)
        if key in self._summaries:
            self.world.edit_issue_comment(repository.owner, repository.name, self._summaries[key], body)
        else:
            comment = self.world.add_issue_comment(
                repository.owner, repository.name, number, copy.deepcopy(CODEX_BOT), body
            )
            self._summaries[key] = comment["id"]
