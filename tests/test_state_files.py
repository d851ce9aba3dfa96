"""The state directory's own files, each read through its typed model by the loop.py commands.

For every file the hands keep (act/core/state_models.py): the file as the hands
wrote it is accepted, and the same file with a key added, a key removed, a
value of the wrong type or an unknown kind or stage is the structured error
``state-file-invalid`` naming the file and the JSON Pointer (exit 1), never a
guess, a KeyError or a traceback. The world: tests/checkout_world.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.canonical import text_digest
from simulator.fakegithub import PR_NUMBER
from tests.test_hands_loop import bootstrap, init_args, loop, write_automation
from tests.test_hands_loop import world as world  # the fixture

HASH = "ab" * 32
WAKEUP_ID = "cd" * 16
WHEN = "2026-10-01T09:00:00Z"


def started(capsys, world) -> dict[str, Any]:
    """An approval-gated loop on the reused PR, just after init."""
    made = loop(capsys, world, *init_args(world, "--mode", "approval-gated", "--reuse-pr", str(PR_NUMBER)))
    return {**made, "where": ["--state-dir", made["state_dir"]], "dir": Path(made["state_dir"])}


def edit(path: Path, change) -> None:
    value = json.loads(path.read_text())
    change(value)
    path.write_text(json.dumps(value))


def refused(capsys, world, command: list[str], state_file: str, pointer: str, code: str) -> None:
    result = loop(capsys, world, *command, status=1)
    (error,) = result["errors"]
    assert error["code"] == "state-file-invalid" and error["path"] == pointer, result
    assert state_file in error["message"] and result["state_file"] == state_file
    assert {"code": code, "path": pointer} == {k: result["violations"][0][k] for k in ("code", "path")}


def good_wakeup() -> dict[str, Any]:
    claim = {"plan_hash": HASH, "kind": "remediation", "comment_id": 41, "posted_at": WHEN}
    return {
        "wakeup_id": WAKEUP_ID,
        "started_at": WHEN,
        "ended_at": None,
        "end_reason": None,
        "claims": [claim],
        "executed": [],
    }


def good_automation() -> dict[str, Any]:
    return {
        "key": "github-codex-pr-loop:github.com/octo-org/widgets#7@" + "0" * 32,
        "pr_number": PR_NUMBER,
        "id": "loop-stub",
        "stage": "stub-paused",
        "inert_prompt_sha256": text_digest("Inert github-codex-pr-loop stub; do nothing."),
        "rendered_prompt_sha256": None,
        "history": [{"stage": "create-requested", "at": WHEN}, {"stage": "stub-paused", "at": WHEN}],
        "payload": None,  # none pending at stub-paused
    }


# (file, how the bad copy differs, pointer, code): each read by `loop.py status`.
STATUS_CASES = [
    ("intent.json", lambda v: v.update(surprise=1), "/surprise", "unknown-key"),
    ("intent.json", lambda v: v.pop("mode"), "/mode", "missing-key"),
    ("intent.json", lambda v: v.update(push="yes"), "/push", "wrong-type"),
    ("intent.json", lambda v: v.update(mode="eager"), "/mode", "invalid-value"),
    ("pending.json", lambda v: v.update(note="edited"), "/note", "unknown-key"),
    ("pending.json", lambda v: v.pop("plan_hash"), "/plan_hash", "missing-key"),
    ("pending.json", lambda v: v.update(built_at=5), "/built_at", "wrong-type"),
    ("pending.json", lambda v: v.update(kind="cleanup"), "/kind", "invalid-value"),
    ("pending.json", lambda v: v.update(manifest={}), "/manifest", "unknown-key"),
    ("approval.json", lambda v: v.update(by="me"), "/by", "unknown-key"),
    ("approval.json", lambda v: v.pop("approved_at"), "/approved_at", "missing-key"),
    ("approval.json", lambda v: v.update(plan_hash=7), "/plan_hash", "wrong-type"),
    ("approval.json", lambda v: v.update(kind="cleanup"), "/kind", "invalid-value"),
    ("wakeup.json", lambda v: v.update(extra=None), "/extra", "unknown-key"),
    ("wakeup.json", lambda v: v.pop("executed"), "/executed", "missing-key"),
    ("wakeup.json", lambda v: v.update(claims={}), "/claims", "wrong-type"),
    ("wakeup.json", lambda v: v["claims"][0].update(kind="merge"), "/claims/0/kind", "invalid-value"),
    ("automation.json", lambda v: v.update(status="ACTIVE"), "/status", "unknown-key"),
    ("automation.json", lambda v: v.pop("history"), "/history", "missing-key"),
    ("automation.json", lambda v: v.update(pr_number="7"), "/pr_number", "wrong-type"),
    ("automation.json", lambda v: v.update(stage="stub-frozen"), "/stage", "invalid-value"),
    ("automation.json", lambda v: v["history"][0].update(stage="paused"), "/history/0/stage", "invalid-value"),
]


@pytest.mark.parametrize(
    ("name", "change", "pointer", "code"),
    STATUS_CASES,
    ids=[f"{name}:{pointer}:{code}" for name, _, pointer, code in STATUS_CASES],
)
def test_status_reads_each_file_through_its_model(capsys, world, name, change, pointer, code):
    made = started(capsys, world)
    loop(capsys, world, "approve", *made["where"], "--hash", made["initial_plan_hash"])
    (made["dir"] / "wakeup.json").write_text(json.dumps(good_wakeup()))
    (made["dir"] / "automation.json").write_text(json.dumps(good_automation()))
    for path in made["dir"].glob("*.json"):
        path.chmod(0o600)
    status = loop(capsys, world, "status", *made["where"])  # every file as good
    assert status["wakeup"] == good_wakeup() and status["automation"] == good_automation()
    assert status["pending_plan"]["plan_hash"] == made["initial_plan_hash"] == status["approval"]["plan_hash"]
    edit(made["dir"] / name, change)
    refused(capsys, world, ["status", *made["where"]], name, pointer, code)


def test_approve_reads_the_plan_list_through_its_model(capsys, world):
    made = started(capsys, world)
    older = made["dir"] / "plans" / f"{HASH}.json"
    older.write_text(json.dumps({"kind": "initial", "plan_hash": HASH, "built_at": WHEN}))
    older.chmod(0o600)
    stale = loop(capsys, world, "approve", *made["where"], "--hash", HASH, status=1)
    assert stale["errors"][0]["code"] == "approval-hash-stale" and WHEN in stale["errors"][0]["message"]
    for change, pointer, code in (
        (lambda v: v.update(note=1), "/note", "unknown-key"),
        (lambda v: v.pop("built_at"), "/built_at", "missing-key"),
        (lambda v: v.update(plan_hash=None), "/plan_hash", "wrong-type"),
        (lambda v: v.update(kind="cleanup"), "/kind", "invalid-value"),
    ):
        older.write_text(json.dumps({"kind": "initial", "plan_hash": HASH, "built_at": WHEN}))
        edit(older, change)
        refused(capsys, world, ["approve", *made["where"], "--hash", HASH], f"plans/{HASH}.json", pointer, code)


def test_execute_reads_the_initial_texts_through_their_model(capsys, world):
    made = started(capsys, world)
    texts = made["dir"] / "initial-texts.json"
    # Read before anything is observed: a good file reaches the approval check.
    assert loop(capsys, world, "execute", *made["where"], status=1)["errors"][0]["code"] == "approval-missing"
    original = texts.read_text()
    for change, pointer, code in (
        (lambda v: v.update(extra=""), "/extra", "unknown-key"),
        (lambda v: v.pop("pr_body"), "/pr_body", "missing-key"),
        (lambda v: v.update(pr_title=None), "/pr_title", "wrong-type"),
    ):
        texts.write_text(original)
        edit(texts, change)
        refused(capsys, world, ["execute", *made["where"]], "initial-texts.json", pointer, code)
    assert not (made["dir"] / "execution.json").exists()


def test_end_wakeup_and_verify_refuse_an_edited_file_before_writing(capsys, world):
    made = started(capsys, world)
    wakeup = made["dir"] / "wakeup.json"
    wakeup.write_text(json.dumps({**good_wakeup(), "claims": [{"plan_hash": HASH}]}))
    wakeup.chmod(0o600)
    refused(capsys, world, ["end-wakeup", *made["where"]], "wakeup.json", "/claims/0/kind", "missing-key")
    assert json.loads(wakeup.read_text())["ended_at"] is None  # nothing was written
    loop(capsys, world, "automation-create", *made["where"])
    automation = made["dir"] / "automation.json"
    edit(automation, lambda v: v.update(stage="verified"))
    refused(
        capsys, world, ["verify-automation", *made["where"], "--id", "x"], "automation.json", "/stage", "invalid-value"
    )


def test_verify_saves_what_it_saw_before_what_it_asks_for(capsys, world):
    """stub-active and prompt-verified (references/hands.md) are saved in the history, in order."""
    made = started(capsys, world)
    key = loop(capsys, world, "automation-create", *made["where"])["automation_key"]
    write_automation(world, "loop-stub", key, "Inert github-codex-pr-loop stub; do nothing.", "ACTIVE")
    assert loop(capsys, world, "verify-automation", *made["where"], "--id", "loop-stub")["outcome"] == "created-active"
    record = json.loads((made["dir"] / "automation.json").read_text())
    assert record["stage"] == "pause-requested"
    assert [entry["stage"] for entry in record["history"]] == ["create-requested", "stub-active", "pause-requested"]


def test_a_whole_bootstrap_records_every_stage(capsys, world):
    live = bootstrap(capsys, world, "autonomous")
    record = json.loads((live["directory"].path / "automation.json").read_text())
    assert [entry["stage"] for entry in record["history"]] == [
        "create-requested",
        "stub-paused",
        "prompt-requested",
        "prompt-verified",
        "activate-requested",
        "active",
    ]
    status = loop(capsys, world, "status", *live["where"])
    assert status["automation"] == record and status["wakeup"] is None


def good_ledger() -> dict[str, Any]:
    facts = {
        "operations": None,
        "edit_rechecked": False,
        "validation": [
            {"exit_status": 0, "timed_out": False, "index": 0, "argv": ["/bin/true"], "network_namespace": True}
        ],
        "final_head_sha": "e" * 40,
        "pr_number": PR_NUMBER,
        "request_comment_id": None,
        "reply_marker": None,
        "next_round": None,
        "handed_off": [],
    }
    return {"plans": [{"plan_hash": HASH, "kind": "initial", "done": ["fetch-base"], "facts": facts}]}


def test_execute_reads_its_ledger_through_its_model(capsys, world):
    made = started(capsys, world)
    ledger = made["dir"] / "execution.json"
    ledger.write_text(json.dumps(good_ledger()))  # another plan's entry: this plan starts from the beginning
    ledger.chmod(0o600)
    assert loop(capsys, world, "execute", *made["where"], status=1)["errors"][0]["code"] == "approval-missing"
    for change, pointer, code in (
        (lambda v: v["plans"][0].update(started_at=WHEN), "/plans/0/started_at", "unknown-key"),
        (lambda v: v["plans"][0]["facts"].pop("handed_off"), "/plans/0/facts/handed_off", "missing-key"),
        (lambda v: v["plans"][0]["facts"].update(pr_number="7"), "/plans/0/facts/pr_number", "wrong-type"),
        (lambda v: v["plans"][0].update(kind="cleanup"), "/plans/0/kind", "invalid-value"),
        (lambda v: v.update({HASH: v.pop("plans")[0]}), "/plans", "missing-key"),  # the ledger's old layout
        # Two entries for one plan: which one says where to start is ambiguous (the old
        # layout, an object keyed by plan hash, could not say it twice).
        (lambda v: v["plans"].append({**v["plans"][0], "done": []}), "/plans/1/plan_hash", "invalid-value"),
    ):
        ledger.write_text(json.dumps(good_ledger()))
        edit(ledger, change)
        refused(capsys, world, ["execute", *made["where"]], "execution.json", pointer, code)


def test_record_claim_takes_only_a_comment_id_the_wakeup_model_accepts(capsys, world):
    made = started(capsys, world)
    for bad in ("0", "-3"):
        refusal = loop(
            capsys,
            world,
            "record-claim",
            *made["where"],
            "--plan-hash",
            made["initial_plan_hash"],
            "--kind",
            "remediation",
            "--comment-id",
            bad,
            status=2,
        )
        assert refusal["errors"][0]["code"] == "usage-error" and "--comment-id" in refusal["errors"][0]["message"]
    assert not (made["dir"] / "wakeup.json").exists()


@pytest.mark.parametrize(
    ("facts", "pointer"),
    [
        ({"staging_begun": "yes"}, "/plans/0/facts/staging_begun"),
        ({"edit_baseline": {"a": None}}, "/plans/0/facts/edit_baseline"),
        ({"edit_baseline": [{"path": "a", "sha256": "zz"}]}, "/plans/0/facts/edit_baseline/0/sha256"),
        ({"edit_baseline": [{"path": "../x", "sha256": None}]}, "/plans/0/facts/edit_baseline/0/path"),
        ({"edit_baseline": [{"path": "a"}]}, "/plans/0/facts/edit_baseline/0/sha256"),
    ],
)
def test_the_ledgers_write_ahead_facts_are_checked_like_every_other(tmp_path, facts, pointer):
    """``staging_begun`` and ``edit_baseline`` may be absent (older ledgers); present, they are strict."""
    from act.core import statedir
    from act.core.errors import ActError
    from act.core.state_models import ExecutionLedger

    directory = statedir.StateDir.create(str(tmp_path / "run"))
    ledger = good_ledger()
    directory.write("execution.json", ledger)
    assert directory.read_model("execution.json", ExecutionLedger).plans[0].facts.staging_begun is False
    ledger["plans"][0]["facts"].update(facts)
    directory.write("execution.json", ledger)
    with pytest.raises(ActError) as refused:
        directory.read_model("execution.json", ExecutionLedger)
    assert (refused.value.code, refused.value.path) == ("state-file-invalid", pointer)
