"""Two copies at once, and a write whose ledger entry was lost: GitHub and git are written once.

Against the simulated GitHub, Codex and automation host (tests/executor_stack.py),
a loop is brought to a claimed finalization (or remediation) by the single
commands; then:

- two ``loop.py execute`` of the claimed finalization, and two ``loop.py next``
  at a wakeup, run as real processes at once, with the worst interleaving the
  simulator can force: the first copy's write is held back at GitHub until the
  second copy's same write arrives (or a few seconds pass), so without a lock
  both would have looked for their evidence before either wrote. The
  simulator's own record of applied writes is counted;
- each write the executor makes is applied and its ledger entry (or claim
  record) lost, as a kill between the two leaves it; the rerun converges with
  no second write.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from act.core import statedir
from evaluator import markers, policy
from simulator.app import GitHubApp
from simulator.automations import AutomationHost
from simulator.codex import CodexReviewer
from tests.executor_stack import git, init_args, start

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
LOOP = ROOT / "scripts" / "loop.py"
HOLD_SECONDS = 4.0  # how long the first copy's write waits at GitHub for the second copy's


@pytest.fixture
def stack(tmp_path, monkeypatch):
    made = start(tmp_path, monkeypatch)
    yield made
    made.stop()


class Writes:
    """The simulator's record of applied writes, by kind: what GitHub would show happened."""

    def __init__(self, world: Any):
        self.seen: Counter[str] = Counter()
        self.claims: Counter[str] = Counter()  # claim comments, by the plan they claim
        world.subscribe(self._on_event)

    def _on_event(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "pull_request.ready_for_review":
            self.seen["markPullRequestReadyForReview"] += 1
        elif kind == "review_thread.resolved":
            self.seen[f"resolveReviewThread {event['thread']['id']}"] += 1
        elif kind == "issue_comment.created" and "github-codex-pr-loop-claim " in (event["comment"]["body"] or ""):
            plan = event["comment"]["body"].split(" plan=")[1].split(" ")[0]
            self.claims[plan] += 1

    def resolved(self) -> list[int]:
        return [count for name, count in self.seen.items() if name.startswith("resolveReviewThread ")]


class HeldWrites:
    """The first request that carries ``needle`` waits at GitHub (before it is applied) for a second one.

    Waiting outside the World's lock, as a slow network would: the second copy
    of a command then does everything up to the same write meanwhile. Without a
    lock on the state directory both look for their evidence before either
    writes; with it the second copy never gets that far, and the wait ends
    after ``HOLD_SECONDS``.
    """

    def __init__(self, monkeypatch: Any, *needles: bytes):
        self.met = {needle: threading.Event() for needle in needles}
        self.arrived: Counter[bytes] = Counter()
        self.guard = threading.Lock()
        original = GitHubApp.handle

        def handle(app: GitHubApp, request: Any) -> Any:
            if request.method == "POST":
                body = request.get_data()
                for needle, met in self.met.items():
                    if needle in body:
                        with self.guard:
                            self.arrived[needle] += 1
                            first = self.arrived[needle] == 1
                        if first:
                            met.wait(HOLD_SECONDS)
                        else:
                            met.set()
            return original(app, request)

        monkeypatch.setattr(GitHubApp, "handle", handle)


def loop_process(stack: Any, *args: str) -> subprocess.Popen[str]:
    """``loop.py`` as an agent runs it: its own process, the environment the test set up (state, caches, no token)."""
    argv = [sys.executable, str(LOOP), *args, "--observed-at", stack.world.clock.iso(), *stack.network_flags()]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.Popen(argv, cwd=ROOT, env=dict(os.environ), text=True, **pipes)


def answer(process: subprocess.Popen[str]) -> tuple[int, dict[str, Any]]:
    out, err = process.communicate(timeout=300)
    lines = out.splitlines()
    assert len(lines) == 1, out + err[-2000:]
    return process.returncode, json.loads(lines[0])


def _bootstrapped(stack, capsys):
    """Initial plan executed, the automation live, Codex asked to review; the in-process `loop` and the key."""
    host = AutomationHost(stack.tmp / "codex", stack.world.clock)

    def loop(*args: str, status: int = 0) -> dict:
        stack.world.clock.advance(timedelta(seconds=1))
        return stack.loop(capsys, *args, "--observed-at", stack.world.clock.iso(), status=status)

    made = loop(*init_args(stack))
    where = ["--state-dir", made["state_dir"]]
    pr_number = loop("execute", *where)["facts"]["pr_number"]
    created = host.automation_update(loop("automation-create", *where, "--pr", str(pr_number))["payload"])
    verified = loop("verify-automation", *where, "--id", created["automationId"])
    if verified["outcome"] == "created-active":
        host.automation_update(verified["payload"])
        loop("verify-automation", *where)
    host.automation_update(loop("automation-prompt", *where)["payload"])
    host.automation_update(loop("verify-automation", *where)["payload"])
    assert loop("verify-automation", *where)["outcome"] == "active"
    key = markers.automation_key(policy.HOST, "octo-org/gadgets", pr_number, made["run_id"])
    return loop, where, key, pr_number


def _remediated(stack, capsys):
    """One round of remediation done (a Codex thread replied to), Codex clean after it: the finalization is next."""
    CodexReviewer(
        stack.world,
        [{"kind": "findings", "findings": [{"path": "README.md", "line": 1}]}, "clean"],
        delay=timedelta(minutes=3),
    )
    loop, where, key, pr_number = _bootstrapped(stack, capsys)
    stack.world.clock.advance(timedelta(minutes=4))
    assert loop("wakeup", *where, "--automation-key", key)["action"] == "plan-remediation"
    planned = loop("plan-remediation", *where, "--path", "README.md", "--no-commands")
    loop("claim", *where)
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "execute-remediation"
    loop("execute", *where)
    _edit(stack)
    loop("execute", *where)
    loop("verify-automation", *where)
    loop("record-executed", *where, "--plan-hash", planned["plan_hash"])
    loop("end-wakeup", *where)
    stack.world.clock.advance(timedelta(minutes=4))
    return loop, where, key, pr_number


def _claimed_finalization(stack, capsys):
    """The finalization's phase one planned and claimed by this wakeup: `execute` is next."""
    loop, where, key, pr_number = _remediated(stack, capsys)
    assert loop("wakeup", *where, "--automation-key", key)["action"] == "plan-finalization"
    first = loop("plan-finalization", *where)
    assert first["action"] == "claim-plan"
    loop("claim", *where)
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "execute-finalization"
    assert stack.pulls()[0]["draft"] is True
    return loop, where, key, first["plan_hash"]


def _edit(stack) -> None:
    with open(stack.checkout / "README.md", "r+", encoding="utf-8") as handle:
        content = handle.read()
        handle.seek(0)
        handle.truncate()
        handle.write(content + "\nFixed.\n")


def _the_loser_wrote_nothing(code: int, result: dict[str, Any]) -> None:
    """The second copy either waited out the lock (loop-busy) or came after the first and found it all done."""
    if code == 1:
        (error,) = result["errors"]
        assert error["code"] == "loop-busy", result
        assert result["holder"]["command"] in ("execute", "next") and "end-wakeup" not in json.dumps(result)
    else:
        assert code == 0, result


# --- two copies at once ---------------------------------------------------------------


def test_two_executes_of_the_claimed_finalization_mark_ready_and_resolve_once(stack, capsys, monkeypatch):
    loop, where, key, plan_hash = _claimed_finalization(stack, capsys)
    writes = Writes(stack.world)
    HeldWrites(monkeypatch, b"markPullRequestReadyForReview", b"resolveReviewThread")
    first, second = loop_process(stack, "execute", *where), loop_process(stack, "execute", *where)
    answers = [answer(first), answer(second)]
    assert writes.seen["markPullRequestReadyForReview"] == 1, writes.seen
    assert writes.resolved() == [1], writes.seen  # the one thread the remediation answered, resolved once
    winners = [result for code, result in answers if code == 0 and result["performed"]]
    assert len(winners) == 1, answers
    assert [p["operation"] for p in winners[0]["performed"]] == ["mark-draft-ready", "resolve-codex-threads"]
    for code, result in answers:
        if result is not winners[0]:
            _the_loser_wrote_nothing(code, result)
            assert code == 1 or result["performed"] == []
    assert stack.pulls()[0]["draft"] is False
    # The loop goes on from the winner's ledger: nothing is left to do.
    assert loop("execute", *where)["performed"] == []
    loop("record-executed", *where, "--plan-hash", plan_hash)


def test_two_nexts_at_a_wakeup_post_one_claim_and_keep_one_wakeup(stack, capsys, monkeypatch):
    loop, where, key, pr_number = _remediated(stack, capsys)
    writes = Writes(stack.world)
    HeldWrites(monkeypatch, b"github-codex-pr-loop-claim ", b"markPullRequestReadyForReview")
    first, second = loop_process(stack, "next", *where), loop_process(stack, "next", *where)
    answers = [answer(first), answer(second)]
    assert writes.claims and all(count == 1 for count in writes.claims.values()), (writes.claims, answers)
    assert writes.seen["markPullRequestReadyForReview"] <= 1, writes.seen
    assert all(count == 1 for count in writes.resolved()), writes.seen
    assert any(code == 0 for code, _ in answers), answers
    for code, result in answers:
        assert "end-wakeup" not in json.dumps(result.get("errors", [])), answers  # never told to end the other's wakeup
        if code != 0:
            _the_loser_wrote_nothing(code, result)
    # The wakeup that claimed is the one the state directory keeps.
    wakeup = statedir.StateDir(Path(where[1])).read("wakeup.json")
    posted = [c for c in stack.comments(pr_number) if "github-codex-pr-loop-claim " in (c["body"] or "")]
    assert any(f"wakeup={wakeup['wakeup_id']} " in c["body"] for c in posted)
    assert {claim["comment_id"] for claim in wakeup["claims"]} <= {c["id"] for c in posted}


# --- a write applied, its record lost ------------------------------------------------------


def test_a_finalization_whose_ledger_entry_was_lost_finds_its_own_writes(stack, capsys):
    loop, where, key, plan_hash = _claimed_finalization(stack, capsys)
    writes = Writes(stack.world)
    directory = statedir.StateDir(Path(where[1]))
    before = directory.read("execution.json")
    # Killed after markPullRequestReadyForReview was applied, before its ledger entry.
    assert loop("execute", *where, "--one")["performed"] == [{"operation": "mark-draft-ready", "outcome": "written"}]
    directory.write("execution.json", before)
    resumed = loop("execute", *where, "--one")
    assert resumed["performed"] == [{"operation": "mark-draft-ready", "outcome": "already-done"}]
    # Killed after resolveReviewThread too, the whole entry lost: both found on GitHub.
    assert loop("execute", *where)["performed"] == [{"operation": "resolve-codex-threads", "outcome": "written"}]
    directory.write("execution.json", before)
    again = loop("execute", *where)
    assert [(p["operation"], p["outcome"]) for p in again["performed"]] == [
        ("mark-draft-ready", "already-done"),
        ("resolve-codex-threads", "already-done"),
    ]
    assert writes.seen["markPullRequestReadyForReview"] == 1 and writes.resolved() == [1], writes.seen
    loop("record-executed", *where, "--plan-hash", plan_hash)
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "plan-finalization"


def test_a_claim_posted_but_not_recorded_is_found_by_the_next_wakeup(stack, capsys):
    loop, where, key, pr_number = _remediated(stack, capsys)
    writes = Writes(stack.world)
    directory = statedir.StateDir(Path(where[1]))
    woken = loop("wakeup", *where, "--automation-key", key)
    assert woken["action"] == "plan-finalization"
    planned = loop("plan-finalization", *where)
    before = directory.read("wakeup.json")
    assert loop("claim", *where)["outcome"] == "written"
    directory.write("wakeup.json", before)  # killed between the post and its record
    # What the next `next` (or the agent) runs: a wakeup, not `--continue`.
    resumed = loop("wakeup", *where, "--automation-key", key)
    assert resumed["continued"] is True and resumed["wakeup_id"] == woken["wakeup_id"]
    assert resumed["action"] == "execute-finalization", resumed
    (claim,) = directory.read("wakeup.json")["claims"]
    assert claim["plan_hash"] == planned["plan_hash"]
    assert loop("execute", *where)["performed"][0]["outcome"] == "written"
    assert writes.claims == {planned["plan_hash"]: 1}, writes.claims


def test_a_remediation_staged_before_a_kill_commits_once(stack, capsys):
    CodexReviewer(
        stack.world, [{"kind": "findings", "findings": [{"path": "README.md", "line": 1}]}], delay=timedelta(minutes=3)
    )
    loop, where, key, pr_number = _bootstrapped(stack, capsys)
    stack.world.clock.advance(timedelta(minutes=4))
    loop("wakeup", *where, "--automation-key", key)
    loop("plan-remediation", *where, "--path", "README.md", "--no-commands")
    loop("claim", *where)
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "execute-remediation"
    head = git(stack.checkout, "rev-parse", "HEAD")
    assert loop("execute", *where)["performed"] == [{"operation": "edit-files", "outcome": "awaiting-edit"}]
    _edit(stack)
    assert loop("execute", *where, "--one")["performed"] == [{"operation": "edit-files", "outcome": "done"}]
    # Staged by someone else (the ledger never said staging began): not this plan's own effect, so it is judged
    # afresh, and a staged index is not the plan the person approved.
    git(stack.checkout, "add", "--all", "--", "README.md")
    refused = loop("execute", *where, status=1)
    assert refused["ok"] is False and refused["errors"][0]["code"] == "plan-drifted", refused
    assert git(stack.checkout, "rev-parse", "HEAD") == head
    git(stack.checkout, "reset", "--quiet")
    # Killed after the commit's `git add` finished, before `git commit`: the ledger says its staging began
    # (saved before `git add`) and the index holds the planned path.
    directory = statedir.StateDir(Path(where[1]))
    ledger = directory.read("execution.json")
    ledger["plans"][-1]["facts"]["staging_begun"] = True
    directory.write("execution.json", ledger)
    git(stack.checkout, "add", "--all", "--", "README.md")
    assert git(stack.checkout, "diff", "--cached", "--name-only") == "README.md"
    finished = loop("execute", *where)
    assert [p["operation"] for p in finished["performed"]][:2] == ["commit", "push"], finished
    assert git(stack.checkout, "rev-parse", "HEAD^") == head  # one commit, on the planned head
    assert stack.remote_tip("fix/greeting") == finished["facts"]["final_head_sha"]
