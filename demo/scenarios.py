"""The demo's scenarios: the happy path and the safe stops, each with what Codex and the other actors do.

Each scenario names the outcome it must reach (``expect``). The hooks model
only other actors: someone else pushing over the head branch, someone closing
the pull request, a crowd discussing it (more than a page of everything), a
second wakeup starting while the first is still running, the planned file
swapped for a symlink before it is staged.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from demo.stack import CHANGED_FILE, HEAD_BRANCH, NAME, OWNER

FINDING = {
    "kind": "findings",
    "findings": [
        {
            "priority": "P2",
            "path": CHANGED_FILE,
            "line": 1,
            "title": "Print the greeting once",
            "text": "The greeting should be printed exactly once.",
        }
    ],
}


@dataclass
class Scenario:
    name: str
    summary: str
    codex: list[Any]
    expect: str
    hooks: dict[str, Callable[[Any], None]] = field(default_factory=dict)
    codex_on_ready: list[Any] = field(default_factory=list)  # Codex's auto-review when the draft is marked ready


def _force_push(run: Any) -> None:
    """Someone else replaces the head branch with a commit of their own on the base (a force-push)."""
    world = run.stack.world
    repository = world.repository(OWNER, NAME)
    base = repository.tip("main")
    sha = repository.bare.commit(
        HEAD_BRANCH, {CHANGED_FILE: "print('hi')\n"}, "Someone else's change", world.clock.now, parents=[base]
    )
    world.notice_push(OWNER, NAME)
    run.note(f"someone else: force-pushed {HEAD_BRANCH} to {sha[:12]}")


def _close(run: Any) -> None:
    run.stack.world.update_pull_request(OWNER, NAME, run.pr_number, {"state": "closed"})
    run.note(f"someone else: closed pull request #{run.pr_number}")


def _once(name: str, action: Callable[[Any], None]) -> Callable[[Any], None]:
    """The action at the hook's first firing in each run (the mark lives on the run, so every run starts afresh)."""

    def hook(run: Any) -> None:
        if name not in run.fired:
            run.fired.add(name)
            action(run)

    return hook


def _overlap(run: Any) -> None:
    """A second wakeup starts while the first has claimed its plan and not finished."""
    run.note("a second wakeup starts while the first is still running")
    second = run.agent.loop("wakeup", "--automation-key", str(run.automation_key), expect_ok=False)
    run.step("wakeup (second)", second)
    run.note("the first wakeup stops part-way; it is ended, and the claim it left is another wakeup's from now on")
    run.agent.loop("end-wakeup", "--reason", "stopped-part-way")


def _overlap_after_claim(run: Any) -> None:
    _overlap(run)
    run.interrupted = True


def _symlink(run: Any) -> None:
    """After validation, the planned file becomes a symlink to a file with the same content.

    To stop at that moment, the agent records the person's reply and runs the
    initial plan one operation at a time (``approve --hash``, ``execute
    --one``) up to its validation; the ``next`` that follows resumes the plan.
    """
    run.record_reply()
    executed = []
    while True:
        result = run.agent.loop("execute", "--one")
        operations = [p["operation"] for p in result.get("performed", [])]
        executed += operations
        run.step("execute --one", result, action=",".join(operations) or "nothing")
        if "run-validation" in operations or not operations:
            break
    path = run.stack.checkout / CHANGED_FILE
    target = run.stack.scratch / "elsewhere.py"
    target.write_bytes(path.read_bytes())
    path.unlink()
    os.symlink(target, path)
    run.note(f"someone: replaced {CHANGED_FILE} with a symlink before staging")


def _status_after_done(run: Any) -> None:
    """Later, the person asks how the finished loop stands; Codex's auto-review has answered since."""
    run.stack.world.clock.advance(600)
    result = run.agent.loop("status")
    late = result.get("after_finalization") or {}
    run.after_finalization = late
    run.step("status (after done)", result, action=f"codex-said-{late.get('late_codex_says')}")
    run.note(f"status: {late.get('next')}")


# A busy pull request: more than one page of 100 in every list the loop reads.
CROWD = [f"reviewer-{index:02d}" for index in range(16)]
CROWD_COMMENTS = 120  # issue comments
CROWD_REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")  # each crowd member's
CROWD_REVIEWS = 105  # reviews, each with one inline comment (a review thread of its own)


def _crowd(run: Any) -> None:
    """Other people discuss the pull request: every list the loop reads now spans two pages."""
    world, number = run.stack.world, run.pr_number
    for index in range(CROWD_COMMENTS):
        world.add_issue_comment(OWNER, NAME, number, CROWD[index % len(CROWD)], f"Thoughts, part {index + 1}.")
    for login in CROWD:
        for content in CROWD_REACTIONS:
            world.add_reaction(OWNER, NAME, number, login, content)
    for index in range(CROWD_REVIEWS):
        world.add_review(
            OWNER,
            NAME,
            number,
            CROWD[index % len(CROWD)],
            f"Looked at it ({index + 1}).",
            "COMMENTED",
            comments=[{"path": "README.md", "line": 1, "body": f"A question about the title ({index + 1})."}],
        )
    run.note(
        f"other people: {CROWD_COMMENTS} comments, {len(CROWD) * len(CROWD_REACTIONS)} reactions and "
        f"{CROWD_REVIEWS} reviews with an inline comment each on #{number}"
    )


SCENARIOS = {
    "happy": Scenario(
        "happy", "a finding, a fix, a clean review, finalization; the automation deleted", [FINDING, "clean"], "done"
    ),
    "late-review": Scenario(
        "late-review",
        "a clean review, finalization; Codex's auto-review on ready-for-review finds something after done",
        ["clean"],
        "done",
        {"after-done": _status_after_done},
        codex_on_ready=[FINDING],
    ),
    "timeout": Scenario(
        "timeout",
        "Codex picks the request up (its eyes reaction) and never answers: the request times out",
        ["stall"],
        "request-timeout",
    ),
    "not-picked-up": Scenario(
        "not-picked-up",
        "Codex never picks the request up (no eyes reaction, no reply): the loop stops ten minutes after the request",
        ["silence"],
        "stop-reviewer-unavailable",
    ),
    "usage-limit": Scenario(
        "usage-limit", "Codex replies with its usage-limit message", ["usage_limit"], "stop-reviewer-unavailable"
    ),
    "usage-limit-today": Scenario(
        "usage-limit-today",
        'Codex replies "Codex usage limits have been reached for code reviews": the next wakeup stops',
        ["usage_limit_reached"],
        "stop-reviewer-unavailable",
    ),
    "force-push": Scenario(
        "force-push",
        "someone else force-pushes the head branch",
        [FINDING, "clean"],
        "state-inconsistency",
        {"wakeup": _once("force-push", _force_push)},
    ),
    "pr-closed": Scenario(
        "pr-closed",
        "someone closes the pull request",
        [FINDING, "clean"],
        "stop-pr-closed",
        {"wakeup": _once("close", _close)},
    ),
    "overlap": Scenario(
        "overlap",
        "two overlapping wakeups: the second is refused, the claim left is abandoned",
        [FINDING, "clean"],
        "state-inconsistency",
        {"after-claim": _once("overlap", _overlap_after_claim)},
    ),
    "busy": Scenario(
        "busy",
        "the happy path on a busy pull request: every list pages (100+ comments, reactions, reviews, threads)",
        [FINDING, "clean"],
        "done",
        {"after-initial": _crowd},
    ),
    "symlink": Scenario(
        "symlink",
        "the planned file is swapped for a symlink before staging",
        [FINDING, "clean"],
        "refused-execute",
        {"before-initial-execute": _symlink},
    ),
}
