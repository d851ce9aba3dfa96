"""The collector end to end: a real git checkout, the fake GitHub on 127.0.0.1,
a real registry folder, and the evaluator on every document it prints."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evaluator import cli as evaluator_cli
from evaluator import markers, policy
from evaluator.canonical import text_digest
from evaluator.checks import run_initial, run_prompt, run_state
from observe import cli
from observe.collect import STATE_KEYS, request_checkpoint, thread_classes
from simulator.fakegithub import PR_NUMBER, RUN_ID, TOKEN, USERS, at, codex_body
from tests import checkout_world
from tests.checkout_world import REPOSITORY, git
from tools import samples

AUTOMATION_ID = "loop-widgets-7"
WAKEUP = "ab" * 16


@pytest.fixture
def world(tmp_path, fake, monkeypatch):
    """A checkout on feature/loop with an uncommitted fix; PR #7 open on the fake (tests/checkout_world.py)."""
    return checkout_world.build(tmp_path, fake, monkeypatch)


def collect(capsys, world, *args: str) -> dict:
    status = cli.main(["--api-url", world["fake"].url, "--gh", str(world["gh"]), *args])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert TOKEN not in captured.out + captured.err
    return json.loads(captured.out)


def write(world, name: str, document: dict) -> str:
    path = world["tmp"] / name
    path.write_text(json.dumps(document))
    return str(path)


def write_automation(world, status: str, prompt: str) -> None:
    folder = world["registry"] / AUTOMATION_ID
    folder.mkdir(exist_ok=True)
    key = markers.automation_key(policy.HOST, REPOSITORY, PR_NUMBER, RUN_ID)
    (folder / "automation.toml").write_text(
        f'version = 1\nid = "{AUTOMATION_ID}"\nname = "{key}"\nprompt = {json.dumps(prompt)}\n'
        f'status = "{status}"\nrrule = "RRULE:{policy.HEARTBEAT_RRULE}"\n'
    )


def test_a_reuse_pr_loop_from_initial_snapshot_to_finalization(capsys, world):
    fake, repo = world["fake"], world["repo"]
    snapshot = collect(capsys, world, "initial", *checkout_world.change_args(world))
    assert snapshot["existing_pr_number"] == PR_NUMBER and snapshot["current_head_sha"] == world["head0"]
    assert snapshot["remote_name"] == "origin" and snapshot["authenticated_user_id"] == USERS["loop_owner"]["id"]
    manifest = samples.initial_manifest(snapshot)
    manifest.update(run_id=RUN_ID, review_request_body_template=markers.default_review_template(RUN_ID, 0))
    manifest["review_request_body_template_sha256"] = text_digest(manifest["review_request_body_template"])
    initial = samples.seal_initial(snapshot, manifest)
    verdict = run_initial(initial, approved_hash=None, risk_record=None)
    assert verdict["ok"] is True, verdict
    assert verdict["operations"] == [
        "fetch-base",
        "run-validation",
        "stage-files",
        "commit",
        "push",
        "reuse-pr",
        "request-codex-review",
        "bootstrap-automation",
    ]

    # Carry out the initial writes: commit, push, request, a PAUSED inert stub.
    git(repo, "commit", "-q", "-am", "fix greeting")
    head1 = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/remotes/origin/feature/loop", head1)
    fake.force_push(head1)
    fake.add_request(0, at(60), sha=head1)
    write_automation(world, "PAUSED", "inert")

    prompt = collect(
        capsys,
        world,
        "--observed-at",
        at(90),
        "prompt",
        "--initial",
        write(world, "initial.json", initial),
        "--pr",
        str(PR_NUMBER),
        "--automation-id",
        AUTOMATION_ID,
        "--checkout",
        str(repo),
        "--registry",
        str(world["registry"]),
    )
    ready = run_prompt(prompt)
    assert ready["ok"] is True, ready
    assert ready["automation_key"] == markers.automation_key(policy.HOST, REPOSITORY, PR_NUMBER, RUN_ID)

    # Update and activate the stub; the first wakeup verifies the activation.
    write_automation(world, "ACTIVE", ready["rendered_prompt"])
    checkpoint = write(world, "prompt.json", prompt)
    wake = [
        "state",
        "--checkpoint",
        checkpoint,
        "--checkout",
        str(repo),
        "--wakeup-id",
        WAKEUP,
        "--registry",
        str(world["registry"]),
    ]
    state = collect(capsys, world, "--observed-at", at(120), *wake)
    assert state["expected_prompt_sha256"] == ready["rendered_prompt_sha256"]
    assert run_state(state, approved_hash=None, now=None)["action"] == "wait"

    fake.add_issue_comment(USERS["codex_bot"], codex_body("clean_comment", head1), at(300))
    state = collect(capsys, world, "--observed-at", at(360), *wake)
    result = run_state(state, approved_hash=None, now=None)
    assert (result["action"], result["reasons"]) == ("plan-finalization", ["codex-clean"])

    boundary = collect(capsys, world, "boundary", "--checkout", str(repo), "--repository", REPOSITORY)
    assert boundary["isolation"] == policy.ISOLATED and boundary["git"]["profile"] == policy.ISOLATED_PROFILE
    assert boundary == collect(capsys, world, "boundary", "--checkout", str(repo), "--repository", REPOSITORY)
    assert (
        boundary["git"]["git_metadata_snapshot_sha256"]
        != snapshot["execution_boundary"]["git"]["git_metadata_snapshot_sha256"]
    )  # HEAD moved since

    report = collect(
        capsys,
        world,
        "--observed-at",
        at(360),
        "report",
        "--repository",
        REPOSITORY,
        "--pr",
        str(PR_NUMBER),
        "--run-id",
        RUN_ID,
    )
    assert run_state(report, approved_hash=None, now=None)["reasons"] == ["clean"]
    assert not Path(str(world["gh"]) + ".ran").exists(), "the credential helper must never run while observing"


def test_a_stale_evaluator_or_a_paused_automation_stops_the_wakeup(capsys, world):
    fake, repo = world["fake"], world["repo"]
    fake.add_request(0, at(60), sha=world["head0"])
    prompt = samples.prompt_document()  # any accepted checkpoint shape for this repository will do
    boot = prompt["bootstrap_snapshot"]
    boot["state"].update(
        repository=REPOSITORY,
        pr_number=PR_NUMBER,
        run_id=RUN_ID,
        pr_url=f"https://github.com/{REPOSITORY}/pull/{PR_NUMBER}",
        head_branch="feature/loop",
        base_sha=world["base"],
        authenticated_user_id=USERS["loop_owner"]["id"],
        owned_automation_id=AUTOMATION_ID,
        evaluator_sha256="0" * 64,
    )
    write_automation(world, "PAUSED", "inert")
    checkpoint = write(world, "prompt.json", prompt)
    state = collect(
        capsys,
        world,
        "--observed-at",
        at(120),
        "state",
        "--checkpoint",
        checkpoint,
        "--checkout",
        str(repo),
        "--wakeup-id",
        WAKEUP,
        "--registry",
        str(world["registry"]),
    )
    result = run_state(state, approved_hash=None, now=None)
    assert result["action"] == "state-inconsistency"
    assert {"evaluator-digest-changed", "automation-not-active", "automation-prompt-mismatch"} <= set(result["reasons"])


def test_prompt_collection_refuses_a_request_body_that_is_not_the_approved_one(capsys, world):
    fake, repo = world["fake"], world["repo"]
    snapshot = collect(
        capsys,
        world,
        "initial",
        *checkout_world.change_args(world, validate=False),
    )
    manifest = samples.initial_manifest(snapshot)
    manifest.update(run_id=RUN_ID, review_request_body_template=markers.default_review_template(RUN_ID, 0))
    manifest["review_request_body_template_sha256"] = text_digest(manifest["review_request_body_template"])
    initial = write(world, "initial.json", samples.seal_initial(snapshot, manifest))
    fake.add_issue_comment(
        USERS["loop_owner"],
        "@codex please fix everything\n"
        + markers.request_marker(RUN_ID, 0).replace("{{FINAL_HEAD_SHA}}", world["head0"]),
        at(60),
    )
    write_automation(world, "PAUSED", "inert")
    status = cli.main(
        [
            "--api-url",
            fake.url,
            "--gh",
            str(world["gh"]),
            "prompt",
            "--initial",
            initial,
            "--pr",
            str(PR_NUMBER),
            "--automation-id",
            AUTOMATION_ID,
            "--checkout",
            str(repo),
            "--registry",
            str(world["registry"]),
        ]
    )
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""
    assert json.loads(captured.err)["errors"][0]["code"] == "request-body-mismatch"


def test_collector_failures_print_nothing_on_standard_output(capsys, world):
    fake, sleeps = world["fake"], []
    fake.fail("GET", r"/pulls/7$", 502, times=10)
    status = cli.main(
        ["--api-url", fake.url, "report", "--repository", REPOSITORY, "--pr", str(PR_NUMBER), "--run-id", RUN_ID],
        sleep=sleeps.append,
    )
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""
    assert json.loads(captured.err)["errors"][0]["code"] == "github-server-error"
    assert sleeps == [1.0, 2.0, 4.0]  # the retry backoff, through the injected sleep
    assert cli.main(["report", "--repository", REPOSITORY, "--pr", "7", "--run-id", "nothex"]) == 2
    assert capsys.readouterr().out == ""


def test_two_open_pull_requests_on_the_head_branch_are_a_clean_error(capsys, world):
    fake = world["fake"]
    fake.add_open_pull(8, "feature/loop", world["head0"])
    status = cli.main(
        [
            "--api-url",
            fake.url,
            "--gh",
            str(world["gh"]),
            "initial",
            *checkout_world.change_args(world, validate=False),
        ]
    )
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""
    assert json.loads(captured.err)["errors"][0]["code"] == "github-ambiguous-pull-request"


def test_a_document_that_would_carry_the_token_is_not_printed(capsys, world):
    repo = world["repo"]
    (repo / TOKEN).write_text("a file whose name is the token\n")
    status = cli.main(
        [
            "--api-url",
            world["fake"].url,
            "--gh",
            str(world["gh"]),
            "initial",
            *checkout_world.change_args(world, path=TOKEN, validate=False),
        ]
    )
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""
    assert json.loads(captured.err)["errors"][0]["code"] == "collector-credential-in-output"
    assert TOKEN not in captured.err


def test_recheck_paths_names_the_changed_path(capsys, world, tmp_path):
    repo = world["repo"]
    snapshot = collect(
        capsys,
        world,
        "initial",
        *checkout_world.change_args(world, validate=False),
    )
    plan = write(world, "snapshot.json", snapshot)
    assert collect(capsys, world, "recheck-paths", "--checkout", str(repo), "--document", plan) == {
        "ok": True,
        "paths": ["src/app.py"],
    }
    (repo / "src" / "app.py").unlink()
    os.symlink("/etc/passwd", repo / "src" / "app.py")
    status = cli.main(["recheck-paths", "--checkout", str(repo), "--document", plan])
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""
    error = json.loads(captured.err)["errors"][0]
    assert error["code"] == "path-records-changed" and "src/app.py" in error["message"]


def test_request_checkpoint_from_markers():
    requests = [
        {
            "comment_id": 10,
            "created_at": "2026-11-29T10:00:00Z",
            "round": 0,
            "head_sha": "a" * 40,
            "body_sha256": "0" * 64,
        },
        {
            "comment_id": 20,
            "created_at": "2026-11-29T11:00:00+01:00",
            "round": 1,
            "head_sha": "b" * 40,
            "body_sha256": "0" * 64,
        },
    ]
    checkpoint = request_checkpoint(requests, [])
    assert checkpoint["fix_rounds"] == 1 and checkpoint["completed_request_keys"] == ["10:" + "a" * 40]
    assert checkpoint["request_key"] == "20:" + "b" * 40 and checkpoint["request_deadline"] == "2026-11-29T10:30:00Z"
    assert checkpoint["marker_anomalies"] == []
    skipped = request_checkpoint([requests[1]], ["5"])
    assert skipped["marker_anomalies"] == ["5", "20"]
    assert request_checkpoint([], [])["request_key"] is None


def test_thread_classes():
    def entry(label, resolved=False, codex=True, addressed=None):
        return {
            "thread": samples.thread(label),
            "is_resolved": resolved,
            "is_outdated": False,
            "root_is_codex": codex,
            "addressed_round": addressed,
        }

    classes = thread_classes(
        [
            entry("a"),
            entry("b", addressed=1),
            entry("c", resolved=True),
            entry("d", codex=False),
            entry("e", codex=False, resolved=True),
        ]
    )
    assert [t["id"] for t in classes["actionable_codex_threads"]] == ["PRRT_kwDOa"]
    assert [t["id"] for t in classes["eligible_codex_threads"]] == ["PRRT_kwDOb"]
    assert classes["non_codex_rooted_threads"] == 1


def test_the_collector_writes_the_state_keys_in_the_models_order():
    from evaluator.models.recurring import RecurringState

    assert STATE_KEYS == RecurringState.field_names


def test_a_report_names_the_rules_this_token_cannot_read(capsys, world):
    """Collector to evaluator: a protected base branch, a token without admin rights, GitHub's CLEAN."""
    fake = world["fake"]
    fake.protection = {"url": "x", "lock_branch": {"enabled": True}}  # held by GitHub, not shown to this token
    fake.repository.admins.clear()
    fake.merge_state.update(mergeStateStatus="CLEAN", reviewDecision=None)
    state = collect(capsys, world, "report", "--repository", REPOSITORY, "--pr", str(PR_NUMBER), "--run-id", RUN_ID)

    assert state["gates"]["branch_protection"] == "unknown"
    assert "gate_unknowns" not in state  # the state's schema is unchanged: the reasons travel beside it
    assert evaluator_cli.main(["--state", write(world, "report.json", state)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["action"], result["gates"]["branch_protection"]) == ("report", "unknown")
