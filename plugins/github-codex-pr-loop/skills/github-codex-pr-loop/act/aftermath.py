"""What Codex said on the pull request after the loop finished: part of ``loop.py status``.

The loop answers only its own request. Once it has finished (its automation
deleted after ``finish-finalization``), nothing wakes it again, yet Codex may
still answer: marking the draft ready for review at finalization starts
Codex's auto-review, and anyone may ask. Such an answer is not the answer to
the loop's request and never restarts it; ``status`` reports it, so that the
person can act on it with a new loop (references/actions.md, "After the loop
finished").

A *late answer* is a trusted Codex answer (response, +1 reaction or
unavailable reply, as the collector reads them) that the state the loop
finished on did not hold, or that was created after the loop's first cleanup
claim for that request. Only answers about the head the loop finished on
count: a response naming another commit is left out, a response naming none
is listed with ``commit_sha: null``, and a +1 (which names no commit) only
while the pull request's head is still the finished head.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from act.core import statedir, verdicts
from act.core.errors import ActError
from act.core.jsonedge import Document, Output
from act.core.state_models import AutomationProgress, build
from act.core.verdicts import ActionName
from act.edge import sources
from evaluator.formats import parse_timestamp
from evaluator.models.recurring import Reaction, RecurringState, Response, UnavailableReply

# The evaluator's actions after which the loop writes nothing more on success.
FINISHING_ACTIONS: tuple[ActionName, ...] = ("finish-finalization", "done")


@dataclass(frozen=True)
class LateAnswer:
    """One Codex answer after the loop finished; ``source`` only for a response (printed without it otherwise)."""

    kind: Literal["response", "plus-one", "unavailable"]
    source: str | None
    id: str
    created_at: str
    commit_sha: str | None
    says: str  # clean, findings, or the unavailable reply's kind

    def as_output(self) -> Output:
        answer: Output = {"kind": self.kind}
        if self.source is not None:
            answer["source"] = self.source
        answer.update(id=self.id, created_at=self.created_at, commit_sha=self.commit_sha, says=self.says)
        return answer


@dataclass(frozen=True)
class AfterFinalization:
    """What Codex said since the loop finished, next to the head and request it finished on."""

    finished_head_sha: str
    finished_request_key: str | None
    current_head_sha: str
    pr_state: str
    late_codex_answers: tuple[LateAnswer, ...]
    late_codex_says: str | None
    open_codex_threads: int
    next: str

    def as_output(self) -> Output:
        return {
            "finished_head_sha": self.finished_head_sha,
            "finished_request_key": self.finished_request_key,
            "current_head_sha": self.current_head_sha,
            "pr_state": self.pr_state,
            "late_codex_answers": [answer.as_output() for answer in self.late_codex_answers],
            "late_codex_says": self.late_codex_says,
            "open_codex_threads": self.open_codex_threads,
            "next": self.next,
        }


def finished_state(directory: statedir.StateDir) -> RecurringState | None:
    """The state the loop finished on, or None while it has not finished.

    Finished: the last evaluation said ``done``, or ``finish-finalization`` and
    the automation it names was verified deleted.
    """
    action = verdicts.last_action(directory)
    if action not in FINISHING_ACTIONS:
        return None
    if action == "finish-finalization":
        automation = directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
        if automation is None or automation.stage != "deleted":
            return None
    return directory.read_model_optional(statedir.STATE, RecurringState)


def after_finalization(world: sources.World, directory: statedir.StateDir) -> Output | None:
    """``status``'s report of Codex answers after the loop finished (None while it runs): observes GitHub."""
    finished = finished_state(directory)
    if finished is None:
        return None
    try:
        now = sources.report_state(world, finished.repository, finished.pr_number, finished.run_id)
    except ActError as error:
        return {"observed": False, "error": error.as_dict(), "next": "status could not read the pull request"}
    return {"observed": True, **compare(finished, build(RecurringState, now)).as_output()}


def late_answers(finished: Document, now: Document) -> Output:
    """``compare`` on two collected states as the collector gives them (each read as a recurring state)."""
    return compare(build(RecurringState, finished), build(RecurringState, now)).as_output()


def compare(finished: RecurringState, now: RecurringState) -> AfterFinalization:
    """Compare the state the loop finished on with a fresh report-only state of the same pull request."""
    head = finished.current_head_sha
    cleanup = [
        parse_timestamp(c.created_at)
        for c in finished.claims
        if c.kind == "cleanup" and c.request_key == finished.request_key
    ]
    finalized_at = min(cleanup) if cleanup else None

    Item = Response | Reaction | UnavailableReply

    def late(item: Item, seen: Sequence[Item]) -> bool:
        unseen = not any(old.id == item.id and old == item for old in seen)
        return unseen or (finalized_at is not None and parse_timestamp(item.created_at) > finalized_at)

    answers = [
        LateAnswer(
            "response",
            r.source,
            r.id,
            r.created_at,
            r.commit_sha,
            "clean" if r.zero_findings_signal else "findings",
        )
        for r in now.responses
        if r.commit_sha in (head, None) and late(r, finished.responses)
    ]
    if now.current_head_sha == head:
        answers += [
            LateAnswer("plus-one", None, p.id, p.created_at, None, "clean")
            for p in now.plus_one_reactions
            if late(p, finished.plus_one_reactions)
        ]
    answers += [
        LateAnswer("unavailable", None, u.id, u.created_at, None, u.kind)
        for u in now.unavailable_replies
        if late(u, finished.unavailable_replies)
    ]
    answers.sort(key=lambda a: (parse_timestamp(a.created_at), a.kind, int(a.id)))
    says = [a.says for a in answers]
    verdict = "findings" if "findings" in says else "clean" if "clean" in says else says[0] if says else None
    return AfterFinalization(
        finished_head_sha=head,
        finished_request_key=finished.request_key,
        current_head_sha=now.current_head_sha,
        pr_state=now.pr_state,
        late_codex_answers=tuple(answers),
        late_codex_says=verdict,
        open_codex_threads=len(now.actionable_codex_threads),
        next=_next(verdict, finished.pr_number),
    )


def _next(verdict: str | None, pr_number: int) -> str:
    if verdict is None:
        return "nothing from Codex after the loop finished"
    reuse = f"`loop.py init ... --reuse-pr {pr_number}`"
    if verdict == "findings":
        return (
            "Codex reported findings after the loop finished; the finished loop never acts on them. "
            f"To address them, start a new loop on this pull request: {reuse}"
        )
    if verdict == "clean":
        return f"Codex found nothing after the loop finished; nothing to do (a new loop would be {reuse})"
    return f"Codex could not review after the loop finished ({verdict}); a new loop would be {reuse}"
