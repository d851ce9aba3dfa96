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

from collections.abc import Iterable, Mapping
from typing import Any

from act.core import statedir, verdicts
from act.core.errors import ActError
from act.core.state_models import AutomationProgress
from act.core.verdicts import ActionName
from act.edge import sources
from evaluator.formats import parse_timestamp

# The evaluator's actions after which the loop writes nothing more on success.
FINISHING_ACTIONS: tuple[ActionName, ...] = ("finish-finalization", "done")


def finished_state(directory: statedir.StateDir) -> dict[str, Any] | None:
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
    return directory.read_optional(statedir.STATE)


def after_finalization(world: sources.World, directory: statedir.StateDir) -> dict[str, Any] | None:
    """``status``'s report of Codex answers after the loop finished (None while it runs): observes GitHub."""
    finished = finished_state(directory)
    if finished is None:
        return None
    try:
        now = sources.report_state(world, finished["repository"], finished["pr_number"], finished["run_id"])
    except ActError as error:
        return {"observed": False, "error": error.as_dict(), "next": "status could not read the pull request"}
    return {"observed": True, **late_answers(finished, now)}


def late_answers(finished: Mapping[str, Any], now: Mapping[str, Any]) -> dict[str, Any]:
    """Compare the state the loop finished on with a fresh report-only state of the same pull request."""
    head = finished["current_head_sha"]
    cleanup = [
        parse_timestamp(c["created_at"])
        for c in finished["claims"]
        if c["kind"] == "cleanup" and c["request_key"] == finished["request_key"]
    ]
    finalized_at = min(cleanup) if cleanup else None

    def late(item: Mapping[str, Any], seen: Iterable[Mapping[str, Any]]) -> bool:
        unseen = not any(old["id"] == item["id"] and old == item for old in seen)
        return unseen or (finalized_at is not None and parse_timestamp(item["created_at"]) > finalized_at)

    answers = [
        {
            "kind": "response",
            "source": r["source"],
            "id": r["id"],
            "created_at": r["created_at"],
            "commit_sha": r["commit_sha"],
            "says": "clean" if r["zero_findings_signal"] else "findings",
        }
        for r in now["responses"]
        if r["commit_sha"] in (head, None) and late(r, finished["responses"])
    ]
    if now["current_head_sha"] == head:
        answers += [
            {"kind": "plus-one", "id": p["id"], "created_at": p["created_at"], "commit_sha": None, "says": "clean"}
            for p in now["plus_one_reactions"]
            if late(p, finished["plus_one_reactions"])
        ]
    answers += [
        {"kind": "unavailable", "id": u["id"], "created_at": u["created_at"], "commit_sha": None, "says": u["kind"]}
        for u in now["unavailable_replies"]
        if late(u, finished["unavailable_replies"])
    ]
    answers.sort(key=lambda a: (parse_timestamp(a["created_at"]), a["kind"], int(a["id"])))
    says = [a["says"] for a in answers]
    verdict = "findings" if "findings" in says else "clean" if "clean" in says else says[0] if says else None
    return {
        "finished_head_sha": head,
        "finished_request_key": finished["request_key"],
        "current_head_sha": now["current_head_sha"],
        "pr_state": now["pr_state"],
        "late_codex_answers": answers,
        "late_codex_says": verdict,
        "open_codex_threads": len(now["actionable_codex_threads"]),
        "next": _next(verdict, finished),
    }


def _next(verdict: str | None, finished: Mapping[str, Any]) -> str:
    if verdict is None:
        return "nothing from Codex after the loop finished"
    reuse = f"`loop.py init ... --reuse-pr {finished['pr_number']}`"
    if verdict == "findings":
        return (
            "Codex reported findings after the loop finished; the finished loop never acts on them. "
            f"To address them, start a new loop on this pull request: {reuse}"
        )
    if verdict == "clean":
        return f"Codex found nothing after the loop finished; nothing to do (a new loop would be {reuse})"
    return f"Codex could not review after the loop finished ({verdict}); a new loop would be {reuse}"
