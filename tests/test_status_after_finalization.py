"""``loop.py status`` after the loop finished: Codex answers that arrived later, on the head the loop finished on.

The comparison (``act.aftermath.late_answers``) runs on the state the loop
finished on (the phase-two state that said ``finish-finalization``) and a
fresh report-only state of the same pull request. The command itself is run
against the fake GitHub: before the loop finished it reads nothing from
GitHub; after, it reports what Codex said and how to act on it. The whole
loop, with Codex's auto-review landing after ``done``, is the demo's
``late-review`` scenario (tests/test_demo.py).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from act import aftermath, cli
from act.core import statedir
from evaluator.checks import run_state
from simulator.fakegithub import PR_NUMBER, TOKEN, USERS, at, codex_body
from tools import state_scenarios
from tools.samples import response, sha

FINISHED = state_scenarios.phase_two_claimed()
HEAD = FINISHED["current_head_sha"]
LATER = "2026-11-29T10:30:00Z"


def now_with(**changes):
    """A report-only view of the pull request later: what the finished state held, plus ``changes``."""
    now = copy.deepcopy(FINISHED)
    now.update(copy.deepcopy(changes))
    return now


def late_review():
    return response("review", 2300000001, clean=False, commit=HEAD, created_at=LATER)


def test_nothing_after_finalization():
    report = aftermath.late_answers(FINISHED, now_with())
    assert report["late_codex_answers"] == [] and report["late_codex_says"] is None
    assert report["next"] == "nothing from Codex after the loop finished"


def test_a_review_with_findings_after_finalization_is_reported_with_how_to_act_on_it():
    inline = response("review-comment", 2300000002, clean=False, commit=HEAD, created_at=LATER)
    now = now_with(responses=[*FINISHED["responses"], late_review(), inline])
    report = aftermath.late_answers(FINISHED, now)
    assert [(a["source"], a["id"], a["says"]) for a in report["late_codex_answers"]] == [
        ("review", "2300000001", "findings"),
        ("review-comment", "2300000002", "findings"),
    ]
    assert report["late_codex_says"] == "findings" and report["finished_head_sha"] == HEAD
    assert f"--reuse-pr {FINISHED['pr_number']}" in report["next"] and "never acts on them" in report["next"]


def test_a_bare_plus_one_after_finalization_is_clean_only_while_the_head_is_the_finished_one():
    now = now_with(plus_one_reactions=[{"id": "2300000003", "created_at": LATER}])
    report = aftermath.late_answers(FINISHED, now)
    assert [(a["kind"], a["says"]) for a in report["late_codex_answers"]] == [("plus-one", "clean")]
    assert report["late_codex_says"] == "clean" and "nothing to do" in report["next"]

    moved = aftermath.late_answers(FINISHED, {**now, "current_head_sha": sha("someone-else")})
    assert moved["late_codex_answers"] == [] and moved["current_head_sha"] == sha("someone-else")


def test_an_answer_about_another_head_is_not_the_finished_loops():
    other = response("review", 2300000004, clean=False, commit=sha("head-2"), created_at=LATER)
    unnamed = {**response("issue-comment", 2300000005, clean=False, created_at=LATER), "commit_sha": None}
    report = aftermath.late_answers(FINISHED, now_with(responses=[*FINISHED["responses"], other, unnamed]))
    assert [(a["id"], a["commit_sha"]) for a in report["late_codex_answers"]] == [("2300000005", None)]


def test_an_answer_the_finished_state_held_is_late_only_when_edited_since_or_newer_than_the_cleanup_claim():
    assert aftermath.late_answers(FINISHED, now_with())["late_codex_answers"] == []
    edited = copy.deepcopy(FINISHED["responses"])
    edited[0]["content_version_at"] = LATER
    report = aftermath.late_answers(FINISHED, now_with(responses=edited))
    assert [a["id"] for a in report["late_codex_answers"]] == [edited[0]["id"]]

    # A `done` state observed after a late review still holds it: the cleanup claim dates the finish.
    done = copy.deepcopy(FINISHED)
    done["responses"].append(late_review())
    assert [a["id"] for a in aftermath.late_answers(done, done)["late_codex_answers"]] == ["2300000001"]


def test_an_unavailable_reply_after_finalization():
    now = now_with(unavailable_replies=[{"id": "2300000006", "created_at": LATER, "kind": "usage-limit"}])
    report = aftermath.late_answers(FINISHED, now)
    assert report["late_codex_says"] == "usage-limit" and "could not review" in report["next"]


# -- the command ----------------------------------------------------------------------------


def status(capsys, fake, directory: Path) -> dict:
    assert cli.main(["status", "--state-dir", str(directory), "--api-url", fake.url, "--gh", "/nonexistent"]) == 0
    out = capsys.readouterr().out
    assert TOKEN not in out
    return json.loads(out)


@pytest.fixture
def finished_loop(fake, tmp_path, monkeypatch):
    """A state directory whose loop finished on PR #7's head, as the hands leave it."""
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    directory = statedir.StateDir.create(tmp_path / "state")
    state = copy.deepcopy(FINISHED)
    state.update(
        repository="octo-org/widgets",
        pr_number=PR_NUMBER,
        current_head_sha=fake.head_sha,
        request_head_sha=fake.head_sha,
        responses=[],
        plus_one_reactions=[],
        claims=[],
    )
    directory.write(statedir.INTENT, intent(state, tmp_path))
    directory.write(statedir.STATE, state)
    # The verdict the evaluator printed on that state (the hands read last-result.json through its model).
    directory.write(statedir.LAST_RESULT, run_state(FINISHED, approved_hash=None, now=None))
    directory.write(statedir.AUTOMATION, automation(state, "active"))
    return directory, state


def intent(state: dict, tmp_path: Path) -> dict:
    """intent.json as init writes it (status reads it through its model, act/core/state_models.py)."""
    return {
        "version": 1,
        "checkout": str(tmp_path / "checkout"),
        "repository": state["repository"],
        "base_branch": "main",
        "head_branch": "feature/loop",
        "paths": ["src/app.py"],
        "commands": [],
        "create_branch": False,
        "commit": True,
        "push": True,
        "mode": state["mode"],
        "pr_title": None,
        "pr_body": None,
        "reuse_pr_number": state["pr_number"],
        "run_id": state["run_id"],
        "review_request_body_template": "@codex review",
        "created_at": LATER,
    }


def automation(state: dict, stage: str) -> dict:
    """automation.json at ``stage`` (its model: act/core/state_models.py)."""
    return {
        "key": "github-codex-pr-loop:github.com/octo-org/widgets#7@" + state["run_id"],
        "pr_number": state["pr_number"],
        "id": "loop-automation",
        "stage": stage,
        "inert_prompt_sha256": "0" * 64,
        "rendered_prompt_sha256": "1" * 64,
        "history": [{"stage": stage, "at": LATER}],
    }


def test_status_reads_github_only_once_the_loop_has_finished(capsys, fake, finished_loop):
    directory, _ = finished_loop
    head = fake.head_sha
    fake.add_review(USERS["codex_bot"], codex_body("findings_review", head), "COMMENTED", head, at(60))
    before = len(fake.world.log)
    assert status(capsys, fake, directory.path)["after_finalization"] is None  # automation not deleted yet
    assert len(fake.world.log) == before

    directory.write(statedir.AUTOMATION, automation(finished_loop[1], "deleted"))
    report = status(capsys, fake, directory.path)["after_finalization"]
    assert report["observed"] is True and report["late_codex_says"] == "findings"
    assert [(a["source"], a["commit_sha"]) for a in report["late_codex_answers"]] == [("review", fake.head_sha)]
    assert f"--reuse-pr {PR_NUMBER}" in report["next"]


@pytest.mark.parametrize(
    ("change", "pointer"),
    [
        (lambda state: state.update(repository=5), "/repository"),  # once an internal-error in the GitHub client
        (lambda state: state.pop("pr_number"), "/pr_number"),
        (lambda state: state.update(surprise=True), "/surprise"),
    ],
)
def test_a_finished_state_edited_out_of_shape_is_named_never_read(capsys, fake, finished_loop, change, pointer):
    """After the loop finished, status reads state.json to ask GitHub what Codex said since: through the
    evaluator's own model, so an edited file is state-file-invalid at its pointer, exit 1, and nothing is read."""
    directory, state = finished_loop
    directory.write(statedir.AUTOMATION, automation(state, "deleted"))
    edited = copy.deepcopy(state)
    change(edited)
    directory.write(statedir.STATE, edited)
    before = len(fake.world.log)
    assert cli.main(["status", "--state-dir", str(directory.path), "--api-url", fake.url, "--gh", "/nonexistent"]) == 1
    refused = json.loads(capsys.readouterr().out)
    assert [(e["code"], e["path"]) for e in refused["errors"]][:1] == [("state-file-invalid", pointer)]
    assert len(fake.world.log) == before
