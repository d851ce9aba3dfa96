"""The hands end to end: a real git checkout, the fake GitHub on 127.0.0.1, a real
registry folder, and the evaluator run as a subprocess on every document built."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from act import cli
from act.core import statedir
from act.text import summary as summaries
from evaluator import markers, policy
from evaluator.render import render_review_body
from simulator.fakegithub import BODIES, PR_NUMBER, TOKEN, USERS, at, codex_body
from tests import checkout_world
from tests.checkout_world import REPOSITORY, git

LOOP = Path(__file__).resolve().parent.parent / "scripts" / "loop.py"


@pytest.fixture
def world(tmp_path, fake, monkeypatch):
    """A checkout on feature/loop with an uncommitted fix; PR #7 open on the fake (tests/checkout_world.py)."""
    return checkout_world.build(tmp_path, fake, monkeypatch)


def loop(capsys, world, *args: str, status: int = 0) -> dict:
    code = cli.main(
        [*args, "--api-url", world["fake"].url, "--gh", str(world["gh"]), "--registry", str(world["registry"])]
    )
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == 1, captured.out
    assert TOKEN not in captured.out + captured.err
    result = json.loads(lines[0])
    assert code == status, (result, captured.err[-3000:])
    assert result["ok"] is (status == 0)
    return result


def init_args(world, *extra: str) -> list[str]:
    return ["init", *checkout_world.change_args(world), checkout_world.OFFLINE, *extra]


def write_automation(world, automation_id: str, name: str, prompt: str, status: str) -> None:
    folder = world["registry"] / automation_id
    folder.mkdir(exist_ok=True)
    (folder / "automation.toml").write_text(
        f'version = 1\nid = "{automation_id}"\nkind = "heartbeat"\nname = {json.dumps(name)}\n'
        f'prompt = {json.dumps(prompt)}\nstatus = "{status}"\n'
        f'rrule = "RRULE:{policy.HEARTBEAT_RRULE}"\nexecution_environment = "local"\ncwds = ["{world["repo"]}"]\n'
        "created_at = 1781099457929\nupdated_at = 1781099457929\n"
        'target_thread_id = "019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b"\n'
    )


def test_init_builds_validates_and_stores_a_reuse_plan_privately(capsys, world):
    result = loop(capsys, world, *init_args(world, "--mode", "approval-gated", "--reuse-pr", str(PR_NUMBER)))
    assert result["operations"] == [
        "fetch-base",
        "run-validation",
        "stage-files",
        "commit",
        "push",
        "reuse-pr",
        "request-codex-review",
        "bootstrap-automation",
    ]
    state_dir = Path(result["state_dir"])
    assert state_dir == world["tmp"] / "state" / "github-codex-pr-loop" / result["run_id"]
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in state_dir.rglob("*") if p.is_file())
    document = json.loads((state_dir / "initial.json").read_text())
    assert document["initial_plan_hash"] == result["initial_plan_hash"]
    manifest = document["initial_manifest"]
    assert (
        manifest["run_id"] == result["run_id"]
        and manifest["automation_prompt_template"] == policy.AUTOMATION_PROMPT_TEMPLATE_V1
    )
    summary = result["approval_summary"]
    assert (
        summary["plan_hash"] == result["initial_plan_hash"] and result["initial_plan_hash"] in summary["how_to_approve"]
    )
    assert summary["pr_title"] == "Loop: tighten retries" and summary["commands"] == [
        ["/usr/bin/git", "diff", "--check"]
    ]
    assert summary["head_sha"] == world["head0"] and summary["base_sha"] == world["base"]
    assert TOKEN not in "".join(p.read_text() for p in state_dir.rglob("*") if p.is_file())


def test_init_shows_the_bound_diff_and_withholds_one_read_after_the_file_changed(capsys, world):
    """The summary's diff is the one whose SHA-256 the snapshot binds; once the file changes it is not shown."""
    from act import plans
    from act.command import Context
    from act.core.options import Options
    from act.edge import sources
    from act.text import summary_diff
    from tests.test_approval_summary import check

    made = loop(capsys, world, *init_args(world, "--mode", "approval-gated", "--reuse-pr", str(PR_NUMBER)))
    document = json.loads((Path(made["state_dir"]) / "initial.json").read_text())
    shown = made["approval_summary"]
    ((key, diff, bound),) = check(shown, document)
    base = document["initial_snapshot"]["base_sha"]
    read = sources.planned_diff(sources.World(gh=str(world["gh"])), str(world["repo"]), base)
    assert key == "diff" and hashlib.sha256(read).hexdigest() == bound == document["initial_snapshot"]["diff_sha256"]
    assert diff["shown"] is True and diff["unified"] == read.decode().rstrip("\n").split("\n")
    (world["repo"] / "src" / "app.py").write_text("print('changed after the plan')\n")
    ctx = Context(world=sources.World(gh=str(world["gh"])), options=Options(subcommand="init"))
    withheld, coverage = plans._planned_diff(ctx, str(world["repo"]), document)
    assert withheld["shown"] is False and "not the planned change" in withheld["why"] and "informational" in coverage
    assert summary_diff.shown_diff(read, bound, "/initial_snapshot/diff_sha256")[0]["shown"] is True


def test_execute_rebuilds_the_initial_plan_and_needs_the_exact_approval_and_names_every_change(capsys, world):
    made = loop(capsys, world, *init_args(world, "--mode", "approval-gated", "--reuse-pr", str(PR_NUMBER)))
    plan_hash, where = made["initial_plan_hash"], ["--state-dir", made["state_dir"]]
    assert "`loop.py execute --state-dir" in made["next"] and "loop.py rebuild" not in made["next"]
    assert loop(capsys, world, "execute", *where, status=1)["errors"][0]["code"] == "approval-missing"
    assert (
        loop(capsys, world, "approve", *where, "--hash", plan_hash[:12], status=1)["errors"][0]["code"]
        == "approval-hash-malformed"
    )
    assert (
        loop(capsys, world, "approve", *where, "--hash", plan_hash.upper(), status=1)["errors"][0]["code"]
        == "approval-hash-malformed"
    )
    assert (
        loop(capsys, world, "approve", *where, "--hash", "0" * 64, status=1)["errors"][0]["code"]
        == "approval-hash-mismatch"
    )
    # The approval is the person's: no refusal hands the agent the hash to copy.
    for named in (plan_hash[:12], plan_hash.upper(), "0" * 64, "1" * 64):
        refusal = loop(capsys, world, "approve", *where, "--hash", named, status=1)
        assert plan_hash not in json.dumps(refusal)
        assert named.startswith(plan_hash[:9]) or plan_hash[:9] not in refusal["errors"][0]["message"]
        assert "ask the person to reply with the full hash" in refusal["errors"][0]["message"]
    approved = loop(capsys, world, "approve", *where, "--hash", plan_hash)
    assert approved["approved"]["plan_hash"] == plan_hash and "`loop.py execute --state-dir" in approved["next"]

    (world["repo"] / "src" / "app.py").write_text("print('hello, world')\n")
    world["fake"].pull["title"] = "Loop: retries, bounded"
    changed = loop(capsys, world, "execute", *where, status=1)
    assert changed["errors"][0]["code"] == "plan-changed"
    # The pending plan's hash only as its first 8 digits (act/text/refusals.py); the rebuilt plan's is no plan's.
    assert changed["approved_hash"] == f"{plan_hash[:8]}..." and plan_hash not in json.dumps(changed)
    assert changed["rebuilt_hash"] != plan_hash and len(changed["rebuilt_hash"]) == 64
    paths = {change["path"]: change for change in changed["changes"]}
    assert "/initial_document/initial_snapshot/diff_sha256" in paths
    assert "/initial_document/initial_snapshot/worktree_status_sha256" not in paths  # still one modified file
    assert paths["/pr_title"] == {"path": "/pr_title", "old": "Loop: tighten retries", "new": "Loop: retries, bounded"}
    assert "/initial_document/initial_manifest/run_id" not in paths  # the run id is kept
    assert not (Path(made["state_dir"]) / "execution.json").exists()  # nothing was performed
    # Causes, not digests: what changed, in words the person can act on.
    causes = [cause["cause"] for cause in changed["causes"]]
    assert any("content changed" in cause for cause in causes) and "title changed" in " ".join(causes)
    assert all(cause in changed["errors"][0]["message"] for cause in causes)


def test_init_refuses_a_checkout_with_changes_outside_the_paths_and_leaves_nothing(capsys, world):
    repo = world["repo"]
    (repo / "notes.txt").write_text("scratch\n")
    (repo / "staged.txt").write_text("staged too\n")
    git(repo, "add", "staged.txt")
    before = (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"), git(repo, "status", "--porcelain"))
    refused = loop(capsys, world, *init_args(world, "--mode", "autonomous", "--reuse-pr", str(PR_NUMBER)), status=1)
    (error,) = refused["errors"]
    assert (error["code"], error["path"]) == ("worktree-outside-plan", "/paths")
    assert refused["outside"] == [
        {"path": "notes.txt", "change": "untracked"},
        {"path": "staged.txt", "change": "staged"},
    ]
    assert "staged.txt (staged)" in error["message"] and "notes.txt (untracked)" in error["message"]
    assert "--path" in error["message"]  # the way forward
    assert not (world["tmp"] / "state" / "github-codex-pr-loop").exists()  # no state directory was made
    after = (git(repo, "rev-parse", "HEAD"), git(repo, "symbolic-ref", "HEAD"), git(repo, "status", "--porcelain"))
    assert after == before
    # Named with --path, the same change is one plan.
    planned = loop(
        capsys,
        world,
        *init_args(
            world, "--mode", "autonomous", "--reuse-pr", str(PR_NUMBER), "--path", "staged.txt", "--path", "notes.txt"
        ),
    )
    assert planned["approval_summary"]["paths"] == ["notes.txt", "src/app.py", "staged.txt"]


def test_list_shows_each_loop_and_forget_keeps_a_loop_that_can_still_wake(capsys, world):
    made = loop(capsys, world, *init_args(world, "--mode", "autonomous", "--reuse-pr", str(PR_NUMBER)))
    where = ["--state-dir", made["state_dir"]]
    (listed,) = loop(capsys, world, "list")["loops"]
    assert listed["run_id"] == made["run_id"] and listed["state_dir"] == made["state_dir"]
    assert (listed["automation_stage"], listed["can_forget"]) == (None, True)
    loop(capsys, world, "automation-create", *where)
    refused = loop(capsys, world, "forget", *where, status=1)
    assert refused["errors"][0]["code"] == "loop-still-scheduled" and Path(made["state_dir"]).is_dir()
    assert loop(capsys, world, "list")["loops"][0]["can_forget"] is False
    (Path(made["state_dir"]) / "automation.json").unlink()  # as if it was never requested
    assert loop(capsys, world, "forget", *where)["forgotten"] == made["state_dir"]
    assert not Path(made["state_dir"]).exists() and loop(capsys, world, "list")["loops"] == []


def test_rebuild_is_no_command(capsys, world):
    """execute rebuilds the initial plan itself before fetch-base; there is no second way to do it."""
    assert loop(capsys, world, "rebuild", status=2)["errors"][0]["code"] == "usage-error"


def test_init_refuses_an_intent_that_does_not_match_github(capsys, world):
    refused = loop(capsys, world, *init_args(world, "--mode", "autonomous", "--title", "T", "--body", "B"), status=1)
    assert refused["errors"][0]["code"] == "intent-pr-mismatch" and "--reuse-pr 7" in refused["errors"][0]["message"]
    assert not (world["tmp"] / "state").exists()  # a refused init leaves nothing behind
    usage = loop(capsys, world, *init_args(world, "--mode", "autonomous", "--reuse-pr", "7", "--title", "T"), status=2)
    assert usage["errors"][0]["code"] == "usage-error"


def test_a_new_pr_plan_with_title_and_body_files(capsys, world, tmp_path):
    git(world["repo"], "checkout", "-q", "-b", "feature/new")
    (tmp_path / "body.md").write_text("Fixes the greeting.\n\nZürich ✓\n", encoding="utf-8")
    new_pr = [
        "init",
        "--checkout",
        str(world["repo"]),
        "--repository",
        REPOSITORY,
        "--base",
        "main",
        "--head",
        "feature/new",
        "--path",
        "src/app.py",
        "--commit",
        "--push",
        "--mode",
        "autonomous",
        "--title",
        "Fix greeting",
        "--body-file",
        str(tmp_path / "body.md"),
        checkout_world.OFFLINE,
    ]
    made = loop(capsys, world, *new_pr, "--state-dir", str(tmp_path / "loop-state"))
    assert made["operations"] == [
        "fetch-base",
        "stage-files",
        "commit",
        "push",
        "create-pr",
        "request-codex-review",
        "bootstrap-automation",
    ]
    assert made["approval_summary"]["pr_body"] == "Fixes the greeting.\n\nZürich ✓\n"
    assert (
        loop(capsys, world, "approve", "--state-dir", made["state_dir"], "--hash", made["initial_plan_hash"], status=1)[
            "errors"
        ][0]["code"]
        == "approval-not-needed"
    )
    assert (
        cli.main(
            [
                *new_pr,
                "--state-dir",
                str(tmp_path / "loop-state-text"),
                "--format",
                "text",
                "--api-url",
                world["fake"].url,
                "--gh",
                str(world["gh"]),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    text_hash = json.loads((tmp_path / "loop-state-text" / "initial.json").read_text())["initial_plan_hash"]
    assert text.startswith("Plan (initial), autonomous\n") and "autonomous mode: this plan needs no approval" in text
    assert text.count(text_hash) == 1 and f"\n{text_hash}\n" in text  # once, on its own line, easy to copy
    assert "  diff (covered by the plan hash): 2 files, +2 -1\n    README | +1 -0\n" in text
    assert "    | diff --git a/src/app.py b/src/app.py\n" in text and "    | +print('hello')\n" in text
    assert "    | Z\\xfcrich \\u2713" in text and "    - src/app.py" in text  # the body, line by line, ASCII-escaped
    assert (
        loop(
            capsys,
            world,
            "init",
            "--checkout",
            str(world["repo"]),
            "--repository",
            REPOSITORY,
            "--base",
            "main",
            "--head",
            "feature/new",
            "--path",
            "src/app.py",
            "--mode",
            "autonomous",
            "--title",
            "Fix",
            "--body",
            "B",
            checkout_world.OFFLINE,
            "--state-dir",
            str(world["repo"] / "state"),
            status=1,
        )["errors"][0]["code"]
        == "state-dir-inside-checkout"
    )


@pytest.mark.slow  # a whole loop: run by .ci/run, left out by default
def test_from_initial_plan_through_bootstrap_wakeups_and_finalization(capsys, world):
    fake, repo = world["fake"], world["repo"]
    made = loop(capsys, world, *init_args(world, "--mode", "approval-gated", "--reuse-pr", str(PR_NUMBER)))
    where = ["--state-dir", made["state_dir"]]
    directory = statedir.StateDir(Path(made["state_dir"]))
    loop(capsys, world, "approve", *where, "--hash", made["initial_plan_hash"])

    # The initial writes (the executor's part): commit, push, the round-0 request.
    git(repo, "commit", "-q", "-am", "fix greeting")
    head1 = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/remotes/origin/feature/loop", head1)
    fake.force_push(head1)
    template = json.loads((Path(made["state_dir"]) / "initial.json").read_text())["initial_manifest"][
        "review_request_body_template"
    ]
    fake.add_issue_comment(USERS["loop_owner"], render_review_body(template, head1), at(60))

    created = loop(capsys, world, "automation-create", *where)
    key = created["automation_key"]
    assert created["payload"] == {
        "mode": "create",
        "kind": "heartbeat",
        "destination": "thread",
        "name": key,
        "prompt": "Inert github-codex-pr-loop stub; do nothing.",
        "rrule": policy.HEARTBEAT_RRULE,
        "status": "PAUSED",
    }
    write_automation(world, "loop-stub", key, created["payload"]["prompt"], "ACTIVE")  # the known defect: saved ACTIVE
    paused = loop(capsys, world, "verify-automation", *where, "--id", "loop-stub")
    assert paused["outcome"] == "created-active" and paused["payload"] == {
        "mode": "update",
        "id": "loop-stub",
        "status": "PAUSED",
    }
    write_automation(world, "loop-stub", key, created["payload"]["prompt"], "PAUSED")
    assert loop(capsys, world, "verify-automation", *where)["outcome"] == "stub-paused"

    prompted = loop(capsys, world, "automation-prompt", "--observed-at", at(90), *where)
    rendered = prompted["payload"]["prompt"]
    assert (
        prompted["payload"] == {"mode": "update", "id": "loop-stub", "prompt": rendered} and rendered.count("\n") == 2
    )
    write_automation(world, "loop-stub", key, rendered + " ", "PAUSED")  # a changed prompt is never activated
    drift = loop(capsys, world, "verify-automation", *where, status=1)
    assert drift["errors"][0]["code"] == "automation-drift" and [d["field"] for d in drift["differences"]] == [
        "prompt_sha256"
    ]
    write_automation(world, "loop-stub", key, rendered, "PAUSED")
    verified = loop(capsys, world, "verify-automation", *where)
    assert verified["payload"] == {"mode": "update", "id": "loop-stub", "status": "ACTIVE"}
    write_automation(world, "loop-stub", key, rendered, "ACTIVE")
    assert loop(capsys, world, "verify-automation", *where)["outcome"] == "active"
    assert (
        loop(capsys, world, "automation-delete", *where, status=1)["errors"][0]["code"]
        == "automation-delete-not-permitted"
    )

    # First wakeup, from the automation's own prompt read from the registry.
    first = loop(capsys, world, "wakeup", "--observed-at", at(120), "--automation-key", key)
    assert first["action"] == "wait" and first["reasons"] == ["awaiting-codex-response"]
    assert directory.read(statedir.WAKEUP)["ended_at"] is not None

    # Codex is clean: plan phase one, await approval, approve between wakeups.
    fake.add_issue_comment(USERS["codex_bot"], codex_body("clean_comment", head1), at(300))
    prompt_file = world["tmp"] / "prompt.txt"
    prompt_file.write_text(rendered, encoding="utf-8")
    second = loop(capsys, world, "wakeup", "--observed-at", at(360), "--prompt-file", str(prompt_file))
    assert (second["action"], second["reasons"]) == ("plan-finalization", ["codex-clean"])
    planned = loop(capsys, world, "plan-finalization", *where)
    assert planned["action"] == "await-approval" and planned["approval_summary"]["operations"] == [
        "delete-owned-automation"
    ]
    plan_hash = planned["plan_hash"]
    assert (
        loop(capsys, world, "approve", *where, "--hash", made["initial_plan_hash"], status=1)["errors"][0]["code"]
        == "approval-hash-stale"
    )
    loop(capsys, world, "approve", *where, "--hash", plan_hash)

    third = loop(capsys, world, "wakeup", "--observed-at", at(420), "--prompt-file", str(prompt_file))
    assert third["action"] == "plan-finalization" and third["evaluation"]["request_key"]
    state = directory.read(statedir.STATE)
    assert state["approved_plan_hash"] == plan_hash  # the approval reached the next wakeup's state
    again = loop(capsys, world, "plan-finalization", *where)
    assert (again["plan_hash"], again["action"]) == (plan_hash, "claim-plan")
    claim_body = again["evaluation"]["claim_comment_body"]
    assert third["wakeup_id"] in claim_body

    # The claim is posted (the executor's part); the same wakeup continues under its id.
    fake.add_issue_comment(USERS["loop_owner"], claim_body, at(430))
    assert (
        loop(capsys, world, "record-claim", *where, "--plan-hash", "0" * 64, "--kind", "finalization", status=1)[
            "errors"
        ][0]["code"]
        == "claim-plan-not-pending"
    )
    loop(capsys, world, "record-claim", *where, "--plan-hash", plan_hash, "--kind", "finalization")
    refused = loop(capsys, world, "wakeup", "--observed-at", at(440), "--prompt-file", str(prompt_file), status=1)
    assert refused["errors"][0]["code"] == "wakeup-claim-open"
    continued = loop(capsys, world, "wakeup", "--observed-at", at(440), "--continue", "--prompt-file", str(prompt_file))
    assert continued["wakeup_id"] == third["wakeup_id"] and continued["embedded_plan_hash"] == plan_hash
    # Nothing to do on GitHub, so phase one is settled at once; phase two is claimed on its own.
    assert (continued["action"], continued["reasons"]) == ("claim-plan", ["plan-unclaimed"])
    cleanup_claim = continued["evaluation"]["claim_comment_body"]
    assert "kind=cleanup" in cleanup_claim and third["wakeup_id"] in cleanup_claim
    fake.add_issue_comment(USERS["loop_owner"], cleanup_claim, at(450))
    assert (
        loop(capsys, world, "record-claim", *where, "--plan-hash", plan_hash, "--kind", "cleanup", "--comment-id", "9")[
            "wakeup"
        ]["wakeup_id"]
        == third["wakeup_id"]
    )
    finishing = loop(capsys, world, "wakeup", "--observed-at", at(460), "--continue", "--prompt-file", str(prompt_file))
    assert (finishing["action"], finishing["reasons"]) == ("finish-finalization", ["finalization-settled"])
    assert finishing["evaluation"]["delete_automation_id"] == "loop-stub"
    deleted = loop(capsys, world, "automation-delete", *where)
    assert deleted["payload"] == {"mode": "delete", "id": "loop-stub"}
    (world["registry"] / "loop-stub" / "automation.toml").unlink()
    (world["registry"] / "loop-stub").rmdir()
    assert loop(capsys, world, "verify-automation", *where)["outcome"] == "deleted"
    # Once done, status says how the loop ended: the last verdict's reasons and the merge gates.
    ended = loop(capsys, world, "status", *where)
    assert (ended["last_action"], ended["reasons"]) == ("finish-finalization", ["finalization-settled"])
    assert ended["gates"] == finishing["evaluation"]["gates"] and set(ended["gates"]) == {
        "approvals",
        "branch_protection",
        "checks",
        "mergeability",
    }


def test_wakeup_refuses_a_prompt_that_is_not_its_own_rendering(capsys, world, tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(
        "Continue $github-codex-pr-loop from the exact checkpoint below.\nLoop key: x\nBootstrap checkpoint JSON: {}",
        encoding="utf-8",
    )
    refused = loop(capsys, world, "wakeup", "--prompt-file", str(prompt), status=1)
    assert refused["errors"][0]["code"] == "prompt-not-rendered"


def run_script(*args: str, stdin: bytes = b"") -> tuple[int, str]:
    completed = subprocess.run(
        [sys.executable, str(LOOP), *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env={**os.environ, "XDG_STATE_HOME": "/nonexistent-state-root"},
    )
    assert b"Traceback" not in completed.stderr
    return completed.returncode, completed.stdout.decode("utf-8")


def test_cli_help_unknown_flag_and_bad_input_as_a_subprocess():
    code, out = run_script("--help")
    assert code == 0 and "verify-automation" in out and "plan-remediation" in out
    code, out = run_script("init", "--help")
    assert code == 0 and "--reuse-pr" in out
    code, out = run_script("status", "--run-id", "0" * 32, "--no-such-flag")
    assert code == 2 and json.loads(out) == {
        "ok": False,
        "command": "status",
        "errors": [{"code": "usage-error", "path": "", "message": "unrecognized arguments: --no-such-flag"}],
    }
    code, out = run_script("status", "--run-id", "0" * 32)
    result = json.loads(out)
    assert (
        code == 1 and result["errors"][0]["code"] == "state-dir-missing" and result["errors"][0]["path"] == "/state_dir"
    )
    code, out = run_script("wakeup", "--run-id", "0" * 32, "--prompt-file", "-", stdin=b"not a prompt")
    assert code == 1 and json.loads(out)["errors"][0]["code"] == "prompt-not-rendered"
    code, out = run_script("status", "--run-id", "XYZ", "--format", "text")
    assert code == 2 and "usage-error" in out and out.count("\n") >= 1


def test_each_row_names_its_function_and_only_the_running_command_is_imported():
    for row in cli.TABLE:
        module, _, function = row.run.partition(":")
        assert module.startswith("act.") and row.runner().__name__ == function, row
    # A fresh interpreter: the parser and `status` load neither the executor nor the GitHub client.
    probe = (
        "import contextlib, io, sys\n"
        "from act import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    cli.main(['--help'] if sys.argv[1] == 'help' else ['status', '--run-id', '0' * 32])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    for case, expected in (("help", set()), ("status", {"act.plans"})):
        completed = subprocess.run(
            [sys.executable, "-c", probe, case],
            cwd=LOOP.parent.parent,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        loaded = set(completed.stdout.split())
        assert "act.cli" in loaded, completed.stderr
        never = {"act.execute", "act.execute_cli", "act.automation", "act.wakeup", "observe.collect"}
        assert loaded & ({"act.plans"} | never) == expected, (case, loaded & never)
        assert not {name for name in loaded if name.startswith(("observe.github", "httpx", "ghapi"))}, case


def bootstrap(capsys, world, mode: str, *extra: str) -> dict:
    """init (with ``extra`` flags), approve, the initial writes (by hand here), the automation up to ACTIVE."""
    fake, repo = world["fake"], world["repo"]
    made = loop(capsys, world, *init_args(world, "--mode", mode, "--reuse-pr", str(PR_NUMBER), *extra))
    where = ["--state-dir", made["state_dir"]]
    if mode == "approval-gated":
        loop(capsys, world, "approve", *where, "--hash", made["initial_plan_hash"])
    git(repo, "commit", "-q", "-am", "fix greeting")
    head1 = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", "refs/remotes/origin/feature/loop", head1)
    fake.force_push(head1)
    template = json.loads((Path(made["state_dir"]) / "initial.json").read_text())["initial_manifest"][
        "review_request_body_template"
    ]
    fake.add_issue_comment(USERS["loop_owner"], render_review_body(template, head1), at(60))
    key = loop(capsys, world, "automation-create", *where)["automation_key"]
    write_automation(world, "loop-stub", key, "Inert github-codex-pr-loop stub; do nothing.", "PAUSED")
    assert loop(capsys, world, "verify-automation", *where, "--id", "loop-stub")["outcome"] == "stub-paused"
    rendered = loop(capsys, world, "automation-prompt", "--observed-at", at(90), *where)["payload"]["prompt"]
    write_automation(world, "loop-stub", key, rendered, "PAUSED")
    loop(capsys, world, "verify-automation", *where)
    write_automation(world, "loop-stub", key, rendered, "ACTIVE")
    assert loop(capsys, world, "verify-automation", *where)["outcome"] == "active"
    directory = statedir.StateDir(Path(made["state_dir"]))
    return {"where": where, "key": key, "head1": head1, "directory": directory, "init": made}


@pytest.mark.slow  # a whole loop: run by .ci/run, left out by default
def test_a_remediation_plan_from_real_observations_approved_between_wakeups(capsys, world):
    fake = world["fake"]
    live = bootstrap(capsys, world, "approval-gated")
    where, key, head1 = live["where"], live["key"], live["head1"]
    codex = USERS["codex_bot"]
    fake.add_review(codex, codex_body("findings_review", head1), "COMMENTED", head1, at(300))
    fake.add_thread(codex, BODIES["finding_comment_p1"], at(301), path="src/app.py", line=1)
    woken = loop(capsys, world, "wakeup", "--observed-at", at(360), "--automation-key", key)
    assert (woken["action"], woken["reasons"]) == ("plan-remediation", ["codex-findings"])
    # The agent reads what Codex found from the wakeup itself, bound to the state by its digests.
    (finding,) = woken["findings"]
    (thread,) = live["directory"].read(statedir.STATE)["actionable_codex_threads"]
    assert (finding["thread_id"], finding["path"], finding["line"], finding["priority"]) == (
        thread["id"],
        "src/app.py",
        1,
        "P1",
    )
    assert finding["text"] == BODIES["finding_comment_p1"] and finding["body_sha256"] == thread["body_sha256"]
    assert loop(capsys, world, "status", *where)["findings"] == [finding]
    assert loop(capsys, world, "plan-remediation", *where, status=2)["errors"][0]["code"] == "usage-error"
    carried = loop(capsys, world, "plan-remediation", *where, "--path", "src/app.py")
    assert (
        carried["approval_summary"]["commands"]
        == [list(argv) for argv in live["directory"].read("intent.json")["commands"]]
        != []
    )  # the loop's validation commands carry over
    assert carried["findings"] == [finding]
    shown = carried["approval_summary"]["threads"][0]
    assert shown["where"] == "src/app.py:1" and shown["priority"] == "P1"
    assert shown["finding"].startswith(summaries.finding_excerpt(BODIES["finding_comment_p1"])[:100])
    assert "P1 Badge</sub></sub> Wait for merge-queue" in shown["finding"] and "https://" not in shown["finding"]
    assert carried["action"] == "await-approval" and live["directory"].read("wakeup.json")["ended_at"]
    loop(capsys, world, "wakeup", "--observed-at", at(361), "--automation-key", key)  # not wakeup-claim-open
    command = json.dumps(["/usr/bin/git", "diff", "--check"])
    planned = loop(capsys, world, "plan-remediation", *where, "--path", "src/app.py", "--command", command)
    assert planned["action"] == "await-approval"
    summary = planned["approval_summary"]
    assert (
        summary["paths"] == ["src/app.py"]
        and summary["commands"] == [["/usr/bin/git", "diff", "--check"]]
        and summary["round"] == 1
    )
    assert [t["do"] for t in summary["threads"]] == ["reply"] and summary["threads"][0][
        "reply_ends_with"
    ] == markers.reply_marker(live["directory"].read(statedir.INTENT)["run_id"], 1)
    manifest = live["directory"].read(statedir.STATE)["remediation_manifest"]
    assert (
        manifest["execution"] == live["directory"].read(statedir.STATE)["execution_boundary"]
        and manifest["path_records"][0]["path"] == "src/app.py"
    )
    loop(capsys, world, "approve", *where, "--hash", planned["plan_hash"])

    # The next wakeup: the evaluator asks for the plan again; rebuilt unchanged it is approved.
    again = loop(capsys, world, "wakeup", "--observed-at", at(420), "--automation-key", key)
    assert again["action"] == "plan-remediation" and "--reuse-pending" in again["next"]
    rebuilt = loop(capsys, world, "plan-remediation", *where, "--reuse-pending")
    assert (rebuilt["plan_hash"], rebuilt["action"]) == (planned["plan_hash"], "claim-plan")

    # A second finding before the claim: the rebuilt plan differs and needs its own approval.
    fake.add_thread(codex, BODIES["finding_comment_p2"], at(430), path="src/app.py", line=1)
    loop(capsys, world, "end-wakeup", *where)
    third = loop(capsys, world, "wakeup", "--observed-at", at(480), "--automation-key", key)
    assert third["action"] == "plan-remediation"
    changed = loop(capsys, world, "plan-remediation", *where, "--reuse-pending")
    assert changed["plan_hash"] != planned["plan_hash"]
    assert (changed["action"], changed["reasons"]) == ("await-approval", ["approved-hash-mismatch"])
    assert any(change["path"].startswith("/actionable_threads/1") for change in changed["changes_since_pending"])
    assert (
        loop(capsys, world, "approve", *where, "--hash", planned["plan_hash"], status=1)["errors"][0]["code"]
        == "approval-hash-stale"
    )


def test_a_wakeup_says_which_rules_left_a_gate_unknown_beside_the_state(capsys, world):
    """A protected base branch this token cannot read: the gate is unknown, and the wakeup says why."""
    fake = world["fake"]
    live = bootstrap(capsys, world, "autonomous")
    fake.protection = {"url": "x", "lock_branch": {"enabled": True}}  # held by GitHub, not shown to this token
    fake.repository.admins.clear()
    woken = loop(capsys, world, "wakeup", "--observed-at", at(360), "--automation-key", live["key"])
    assert live["directory"].read(statedir.STATE)["gates"]["branch_protection"] == "unknown"
    unreadable = {"gate": "branch_protection", "rule": "classic-protection", "reason": "protection-unreadable"}
    assert woken["gate_unknowns"] == [unreadable]
    assert loop(capsys, world, "status", *live["where"])["gate_unknowns"] == [unreadable]


def test_next_records_the_persons_hash_first_and_refuses_it_as_approve_does(capsys, world):
    """`next --approve HASH` is `approve --hash HASH` then `next`: a hash `approve` refuses runs nothing else."""
    made = loop(capsys, world, *init_args(world, "--mode", "approval-gated", "--reuse-pr", str(PR_NUMBER)))
    plan_hash, where = made["initial_plan_hash"], ["--state-dir", made["state_dir"]]
    assert f"`loop.py next --state-dir {made['state_dir']} --approve HASH`" in made["next"]
    for named, code in ((plan_hash[:12], "approval-hash-malformed"), ("0" * 64, "approval-hash-mismatch")):
        refusal = loop(capsys, world, "next", *where, "--approve", named, status=1)
        assert refusal["errors"][0]["code"] == code and plan_hash not in json.dumps(refusal)
        assert refusal["refused_in"] == f"loop.py approve --hash {named}" and refusal["did"] == []  # nothing else ran
        assert not (Path(made["state_dir"]) / statedir.APPROVAL).exists()
        assert loop(capsys, world, "status", *where)["automation"] is None
    # Recorded, then on to the plan's execution (which this offline world refuses at its preflight).
    told = loop(capsys, world, "next", *where, "--approve", plan_hash, status=1)
    assert [done["command"] for done in told["did"]] == [f"loop.py approve --hash {plan_hash[:8]}..."]
    assert plan_hash not in json.dumps(told)  # a refusal: not even the person's own reply is echoed whole
    assert told["refused_in"] == "loop.py execute"
    approval = json.loads((Path(made["state_dir"]) / statedir.APPROVAL).read_text(encoding="utf-8"))
    assert approval["plan_hash"] == plan_hash and approval["kind"] == "initial"
