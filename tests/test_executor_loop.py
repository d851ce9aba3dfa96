"""A whole loop, driven exactly by the commands SKILL.md names, against the simulated GitHub, Codex and automation host.

The agent's only free actions are editing the planned file and calling the
automation tool with the payloads the hands print; everything else is one
``loop.py`` command. Claims, replies and requests are posted once even when
a command is run again.
"""

from __future__ import annotations

import copy
import hashlib
from datetime import timedelta

import pytest

from act.core import statedir
from evaluator import markers, policy
from simulator.automations import AutomationHost
from simulator.codex import CodexReviewer
from tests.executor_stack import HEAD_BRANCH, init_args, start

# Whole loops against the simulator, each tens of seconds: run by .ci/run, left out by default.
pytestmark = pytest.mark.slow


@pytest.fixture
def stack(tmp_path, monkeypatch):
    made = start(tmp_path, monkeypatch)
    yield made
    made.stop()


def test_the_skill_procedure_command_by_command(stack, capsys):
    codex = CodexReviewer(
        stack.world,
        [{"kind": "findings", "findings": [{"path": "README.md", "line": 1}]}, "clean"],
        delay=timedelta(minutes=3),
    )
    host = AutomationHost(stack.tmp / "codex", stack.world.clock)

    def loop(*args: str, status: int = 0) -> dict:
        stack.world.clock.advance(timedelta(seconds=1))  # time passes between two commands
        return stack.loop(capsys, *args, "--observed-at", stack.world.clock.iso(), status=status)

    def tool(result: dict) -> dict:
        return host.automation_update(result["payload"])

    # Starting a loop.
    made = loop(*init_args(stack))
    where = ["--state-dir", made["state_dir"]]
    initial = loop("execute", *where)
    assert initial["next_operation"] is None and initial["performed"][-1]["outcome"] == "handed-off"
    pr_number = initial["facts"]["pr_number"]
    stack.world.clock.advance(timedelta(seconds=20))  # the bootstrap is observed after the request
    created = tool(loop("automation-create", *where, "--pr", str(pr_number)))
    verified = loop("verify-automation", *where, "--id", created["automationId"])
    if verified["outcome"] == "created-active":  # the known defect: paused before anything else
        tool(verified)
        verified = loop("verify-automation", *where)
    assert verified["outcome"] == "stub-paused"
    tool(loop("automation-prompt", *where))
    activate = loop("verify-automation", *where)
    assert activate["outcome"] == "prompt-verified"
    tool(activate)
    assert loop("verify-automation", *where)["outcome"] == "active"
    key = markers.automation_key(policy.HOST, "octo-org/gadgets", pr_number, made["run_id"])

    # Wakeup 1: Codex found something.
    stack.world.clock.advance(timedelta(minutes=4))
    woken = loop("wakeup", *where, "--automation-key", key)
    assert woken["action"] == "plan-remediation", woken
    planned = loop("plan-remediation", *where, "--path", "README.md")
    assert planned["action"] == "claim-plan", planned
    claimed = loop("claim", *where)
    assert loop("claim", *where)["outcome"] == "already-done"  # run again: no second claim
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "execute-remediation"
    before_edit = loop("execute", *where)
    assert before_edit["performed"] == [{"operation": "edit-files", "outcome": "awaiting-edit"}]
    readme = stack.checkout / "README.md"
    with open(readme, "r+", encoding="utf-8") as handle:  # in place: the same file
        content = handle.read()
        handle.seek(0)
        handle.truncate()
        handle.write(content + "\nThe greeting is fixed.\n")
    fixed = loop("execute", *where)
    assert [p["operation"] for p in fixed["performed"]] == [
        "edit-files",
        "run-validation",  # the loop's validation commands, carried over from init
        "commit",
        "push",
        "reply-to-codex-threads",
        "request-codex-review",
        "update-automation",
    ]
    assert loop("verify-automation", *where)["outcome"] == "active"
    rerun = loop("execute", *where)
    assert rerun["performed"] == [] and rerun["next_operation"] is None
    loop("record-executed", *where, "--plan-hash", planned["plan_hash"])
    loop("end-wakeup", *where)
    head = fixed["facts"]["final_head_sha"]
    assert stack.remote_tip(HEAD_BRANCH) == head
    bodies = [c["body"] for c in stack.comments(pr_number) if c["user"]["login"] == "loop-owner"]
    assert len(bodies) == 3  # round-0 request, the claim, the round-1 request
    assert bodies[1] == claimed_body(stack, pr_number, claimed["comment_id"])
    assert bodies[2].endswith(f"round=1 sha={head} -->")
    assert len(codex.requests) == 2 and codex.requests[1].head_sha == head

    # Wakeup 2: clean; finalization in two phases.
    stack.world.clock.advance(timedelta(minutes=4))
    assert loop("wakeup", *where, "--automation-key", key)["action"] == "plan-finalization"
    first = loop("plan-finalization", *where)
    assert first["action"] == "claim-plan"
    loop("claim", *where)
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "execute-finalization"
    mutated = loop("execute", *where)
    assert [p["operation"] for p in mutated["performed"]] == ["mark-draft-ready", "resolve-codex-threads"]
    assert stack.pulls()[0]["draft"] is False
    loop("record-executed", *where, "--plan-hash", first["plan_hash"])
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "plan-finalization"
    second = loop("plan-finalization", *where)
    assert second["action"] == "claim-plan"
    loop("claim", *where)
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "finish-finalization"
    finishing = loop("execute", *where)
    assert finishing["performed"] == [{"operation": "delete-owned-automation", "outcome": "handed-off"}]
    tool(loop("automation-delete", *where))
    assert loop("verify-automation", *where)["outcome"] == "deleted"
    loop("end-wakeup", *where)
    assert host.read(created["automationId"]) is None
    assert statedir.StateDir(made["state_dir"]).read_optional("execution.json")
    assert stack.files_holding_the_token() == []  # every output was checked line by line; the files are too


def claimed_body(stack, pr_number: int, comment_id: int) -> str:
    return next(c["body"] for c in stack.comments(pr_number) if c["id"] == comment_id)


def _to_execute_remediation(stack, capsys):
    """The loop up to this wakeup's claimed remediation, and the commands to go on."""
    CodexReviewer(
        stack.world, [{"kind": "findings", "findings": [{"path": "README.md", "line": 1}]}], delay=timedelta(minutes=3)
    )
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
    loop("verify-automation", *where)
    key = markers.automation_key(policy.HOST, "octo-org/gadgets", pr_number, made["run_id"])
    stack.world.clock.advance(timedelta(minutes=4))
    loop("wakeup", *where, "--automation-key", key)
    loop("plan-remediation", *where, "--path", "README.md", "--no-commands")
    loop("claim", *where)
    assert loop("wakeup", *where, "--automation-key", key, "--continue")["action"] == "execute-remediation"
    return loop, where, pr_number


def _edit(stack) -> None:
    with open(stack.checkout / "README.md", "r+", encoding="utf-8") as handle:
        content = handle.read()
        handle.seek(0)
        handle.truncate()
        handle.write(content + "\nFixed.\n")


def test_the_edit_is_seen_after_the_hand_off_or_before_it_and_never_assumed(stack, capsys):
    """The hand-off saves each planned path's content; the edit is seen by its change (or by git, made before)."""
    loop, where, _ = _to_execute_remediation(stack, capsys)
    directory = statedir.StateDir(where[1])
    assert loop("execute", *where, "--one")["performed"][0]["outcome"] == "awaiting-edit"
    (baseline,) = [e["facts"]["edit_baseline"] for e in directory.read("execution.json")["plans"] if e["done"] == []]
    readme = (stack.checkout / "README.md").read_bytes()
    assert baseline == [{"path": "README.md", "sha256": hashlib.sha256(readme).hexdigest()}]
    # Rerun before any edit (the hand-off lost to a kill, or never read): handed off again, nothing assumed.
    assert loop("execute", *where, "--one")["performed"][0]["outcome"] == "awaiting-edit"
    # An edit made before the hand-off: the contents equal the saved ones, and git shows the change.
    _edit(stack)
    ledger = directory.read("execution.json")
    for entry in ledger["plans"]:
        if entry["facts"]["edit_baseline"] is not None:
            entry["facts"]["edit_baseline"][0]["sha256"] = hashlib.sha256(
                (stack.checkout / "README.md").read_bytes()
            ).hexdigest()
    directory.write("execution.json", ledger)
    assert loop("execute", *where, "--one")["performed"] == [{"operation": "edit-files", "outcome": "done"}]


def test_remediation_operations_survive_a_crash_after_each_write(stack, capsys):
    loop, where, pr_number = _to_execute_remediation(stack, capsys)
    directory = statedir.StateDir(where[1])
    assert loop("execute", *where, "--one")["performed"][0]["outcome"] == "awaiting-edit"
    _edit(stack)
    for operation in ["edit-files", "commit", "push", "reply-to-codex-threads", "request-codex-review"]:
        before = directory.read("execution.json")
        assert loop("execute", *where, "--one")["performed"][0]["operation"] == operation
        directory.write("execution.json", before)  # the crash: the write happened, the ledger did not
        again = loop("execute", *where, "--one")["performed"][0]
        assert again["operation"] == operation
        if operation in ("commit", "push", "reply-to-codex-threads", "request-codex-review"):
            assert again["outcome"] == "already-done", again
    mine = [c for c in stack.comments(pr_number) if c["user"]["login"] == "loop-owner"]
    assert len(mine) == 3  # round 0, the claim, round 1: nothing twice
    replies = [
        c
        for c in stack.world.repository("octo-org", "gadgets").review_comments.get(pr_number, [])
        if c["user"]["login"] == "loop-owner"
    ]
    assert len(replies) == 1


def test_a_head_branch_moved_before_the_push_pushes_nothing(stack, capsys):
    loop, where, pr_number = _to_execute_remediation(stack, capsys)
    loop("execute", *where)
    _edit(stack)
    assert loop("execute", *where, "--one")["performed"][0]["operation"] == "edit-files"
    assert loop("execute", *where, "--one")["performed"][0]["operation"] == "commit"
    theirs = stack.world.commit("octo-org", "gadgets", HEAD_BRANCH, {"OTHER": "x\n"}, "Someone else")
    refused = loop("execute", *where, "--one", status=1)
    assert refused["errors"][0]["code"] == "plan-drifted"
    assert stack.remote_tip(HEAD_BRANCH) == theirs
    assert len([c for c in stack.comments(pr_number) if c["user"]["login"] == "loop-owner"]) == 2


def test_an_edited_last_result_cannot_add_reorder_or_retarget_work(stack, capsys):
    # last-result.json is the hands' record of what the evaluator emitted: a subset of
    # the approved plan's operations and threads, in the plan's order. Edited to push
    # before validating, to repeat a write or to name another thread, it permits nothing.
    loop, where, pr_number = _to_execute_remediation(stack, capsys)
    directory = statedir.StateDir(where[1])
    emitted = directory.read("last-result.json")
    planned = emitted["operations"]
    tip = stack.remote_tip(HEAD_BRANCH)
    for edit, pointer in (
        (lambda v: v.update(operations=["push", *planned]), "/operations"),
        (lambda v: v.update(operations=[*planned, planned[-1]]), "/operations"),
        (lambda v: v.update(operations=list(reversed(planned))), "/operations"),
        (lambda v: v.update(operations="push"), "/operations"),
        (lambda v: v.update(thread_ids=["PRRT_kwDOsomebodyElse"]), "/thread_ids"),
    ):
        changed = copy.deepcopy(emitted)
        edit(changed)
        directory.write("last-result.json", changed)
        refused = loop("execute", *where, status=1)["errors"][0]
        assert (refused["code"], refused["path"]) == ("state-file-invalid", pointer), refused
    assert stack.remote_tip(HEAD_BRANCH) == tip
    assert not directory.exists("execution.json") or not any(
        entry["done"] for entry in directory.read("execution.json")["plans"] if entry["kind"] == "remediation"
    )
    directory.write("last-result.json", emitted)  # as the evaluator wrote it: the plan runs
    assert loop("execute", *where, "--one")["performed"][0]["outcome"] == "awaiting-edit"
