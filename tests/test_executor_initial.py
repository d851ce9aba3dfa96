"""The executor's initial operations against the simulated GitHub (front, git over https, API) and a checkout.

Each operation performs exactly its write; a crash after any operation's
write (its ledger entry lost) followed by a rerun ends where an uninterrupted
run ends, with nothing posted or pushed twice; an operation whose
precondition drifted performs nothing. The longest scenarios are marked
slow: the default run leaves them out, .ci/run runs them (-m slow).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from act.core import statedir
from evaluator import markers, policy
from evaluator.canonical import text_digest
from tests.executor_stack import BODY, HEAD_BRANCH, NAME, OWNER, TITLE, git, init_args, start

INITIAL_OPERATIONS = [
    "fetch-base",
    "create-branch",
    "run-validation",
    "stage-files",
    "commit",
    "push",
    "create-pr",
    "request-codex-review",
    "bootstrap-automation",
]


@pytest.fixture
def stack(tmp_path, monkeypatch):
    made = start(tmp_path, monkeypatch)
    yield made
    made.stop()


def planned(stack, capsys) -> dict:
    made = stack.loop(capsys, *init_args(stack))
    assert made["operations"] == INITIAL_OPERATIONS
    return made


def trap_program(directory: Path, name: str, *, exit_status: int = 0) -> tuple[Path, Path]:
    """(program, sentinel): a shell program that only creates the sentinel file when it runs."""
    sentinel = directory / f"{name}-ran"
    program = directory / f"{name}-trap"
    program.write_text(f"#!/bin/sh\ntouch {sentinel}\nexit {exit_status}\n")
    program.chmod(0o755)
    return program, sentinel


def github_state(stack, run_id: str) -> dict:
    """What GitHub and the checkout hold, without the values a clock makes differ (commit ids, times)."""
    pulls = stack.pulls()
    tip = stack.remote_tip(HEAD_BRANCH)
    return {
        "pulls": [
            (p["number"], p["title"], p["body"], p["state"], p["draft"], p["head"]["ref"], p["base"]["ref"])
            for p in pulls
        ],
        "comments": [
            (c["user"]["login"], c["body"].replace(tip or "", "<head>").replace(run_id, "<run>"))
            for p in pulls
            for c in stack.comments(p["number"])
        ],
        "remote_tree": None if tip is None else git(stack.checkout, "rev-parse", f"{tip}^{{tree}}"),
        "local_branch": git(stack.checkout, "symbolic-ref", "HEAD"),
        "local_is_remote": git(stack.checkout, "rev-parse", "HEAD") == tip,
        "clean": git(stack.checkout, "status", "--porcelain") == "",
    }


def test_each_operation_performs_exactly_its_write(stack, capsys):
    made = planned(stack, capsys)
    where = ["--state-dir", made["state_dir"]]
    base = stack.remote_tip("main")
    head0 = git(stack.checkout, "rev-parse", "HEAD")

    def step(expected: str) -> dict:
        result = stack.loop(capsys, "execute", *where, "--one")
        assert [p["operation"] for p in result["performed"]] == [expected]
        return result

    step("fetch-base")
    assert (
        git(stack.checkout, "rev-parse", "refs/remotes/origin/main") == base and stack.remote_tip(HEAD_BRANCH) is None
    )
    step("create-branch")
    assert (
        git(stack.checkout, "symbolic-ref", "HEAD") == f"refs/heads/{HEAD_BRANCH}"
        and git(stack.checkout, "rev-parse", "HEAD") == head0
    )
    assert step("run-validation")["facts"]["validation"][0]["exit_status"] == 0
    assert git(stack.checkout, "diff", "--cached", "--name-only") == ""
    step("stage-files")
    assert git(stack.checkout, "diff", "--cached", "--name-only") == "src/app.py"
    step("commit")
    head = git(stack.checkout, "rev-parse", "HEAD")
    assert git(stack.checkout, "rev-parse", "HEAD^") == head0
    assert (
        git(stack.checkout, "log", "-1", "--format=%B").strip()
        == f"{TITLE}\n\ngithub-codex-pr-loop run {made['run_id']}"
    )
    assert stack.remote_tip(HEAD_BRANCH) is None
    step("push")
    assert stack.remote_tip(HEAD_BRANCH) == head and stack.pulls() == []
    step("create-pr")
    (pull,) = stack.pulls()
    assert (pull["title"], pull["body"], pull["head"]["sha"], pull["draft"]) == (TITLE, BODY, head, True)
    assert stack.comments(pull["number"]) == []
    step("request-codex-review")
    (comment,) = stack.comments(pull["number"])
    assert comment["body"] == markers.default_review_template(made["run_id"], 0).replace(
        policy.FINAL_HEAD_PLACEHOLDER, head
    )
    handed = step("bootstrap-automation")
    assert handed["performed"][0]["outcome"] == "handed-off" and handed["next_operation"] is None
    assert f"`loop.py automation-create --state-dir {made['state_dir']} --pr {pull['number']}`" in handed["next"]
    refused = stack.loop(capsys, "execute", *where, "--operation", "push", status=1)
    assert refused["errors"][0]["code"] == "operation-not-next"
    assert stack.files_holding_the_token() == []


@pytest.mark.slow
def test_a_checkout_config_cannot_start_an_alternate_refs_program(stack, capsys, tmp_path):
    other = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    (stack.checkout / ".git" / "objects" / "info" / "alternates").write_text(f"{other / 'objects'}\n")
    trap, sentinel = trap_program(tmp_path, "alternate-refs-program")
    git(stack.checkout, "config", "core.alternateRefsCommand", str(trap))
    stack.git_via_front("-C", str(stack.checkout), "fetch", "-q", "origin")
    assert sentinel.exists(), "sanity: a plain fetch runs the configured program"
    sentinel.unlink()

    made = planned(stack, capsys)
    where = ["--state-dir", made["state_dir"]]
    result = stack.loop(capsys, "execute", *where, "--one")
    assert [p["operation"] for p in result["performed"]] == ["fetch-base"]
    assert not sentinel.exists()


@pytest.mark.slow
def test_an_ssh_remote_is_fetched_and_pushed_over_https(stack, capsys, tmp_path):
    """fetch-base and push name the canonical https URL, never the remote: its ssh URL is never dialled."""
    trap, sentinel = trap_program(tmp_path, "ssh", exit_status=1)
    ssh_url = f"git@github.com:{OWNER}/{NAME}.git"
    git(stack.checkout, "remote", "set-url", "origin", ssh_url)
    git(stack.checkout, "config", "core.sshCommand", str(trap))
    stack.git_via_front("-C", str(stack.checkout), "ls-remote", "origin", "refs/heads/main", check=False)
    assert sentinel.exists(), "sanity: the remote's own URL goes through ssh"
    sentinel.unlink()

    made = planned(stack, capsys)
    where = ["--state-dir", made["state_dir"]]
    fetched = stack.loop(capsys, "execute", *where, "--one")
    assert [p["operation"] for p in fetched["performed"]] == ["fetch-base"]
    assert git(stack.checkout, "rev-parse", "refs/remotes/origin/main") == stack.remote_tip("main")
    assert stack.loop(capsys, "execute", *where)["next_operation"] is None
    assert stack.remote_tip(HEAD_BRANCH) == git(stack.checkout, "rev-parse", "HEAD")
    assert not sentinel.exists()
    assert git(stack.checkout, "remote", "get-url", "origin") == ssh_url  # the checkout's remote is untouched


@pytest.mark.slow
def test_a_crash_after_any_write_and_a_rerun_end_like_an_uninterrupted_run(tmp_path, monkeypatch, capsys):
    uninterrupted = start(tmp_path / "one", monkeypatch)
    try:
        made = planned(uninterrupted, capsys)
        assert uninterrupted.loop(capsys, "execute", "--state-dir", made["state_dir"])["next_operation"] is None
        expected = github_state(uninterrupted, made["run_id"])
    finally:
        uninterrupted.stop()

    crashing = start(tmp_path / "two", monkeypatch)
    try:
        made = planned(crashing, capsys)
        where = ["--state-dir", made["state_dir"]]
        directory = statedir.StateDir(made["state_dir"])
        for operation in INITIAL_OPERATIONS:
            before = directory.read_optional("execution.json")
            done = crashing.loop(capsys, "execute", *where, "--one")
            assert done["performed"][0]["operation"] == operation
            # The crash: the operation's write happened, its ledger entry did not.
            if before is None:
                directory.remove("execution.json")
            else:
                directory.write("execution.json", before)
            again = crashing.loop(capsys, "execute", *where, "--one")
            assert again["performed"][0]["operation"] == operation
            if operation in ("create-branch", "commit", "push", "create-pr", "request-codex-review"):
                assert again["performed"][0]["outcome"] == "already-done", again
        assert github_state(crashing, made["run_id"]) == expected
        (pull,) = crashing.pulls()
        assert len(crashing.comments(pull["number"])) == 1
    finally:
        crashing.stop()


def test_a_changed_checkout_before_fetch_base_performs_nothing(stack, capsys):
    made = planned(stack, capsys)
    (stack.checkout / "src" / "app.py").write_text("print('hello, world')\n")
    refused = stack.loop(capsys, "execute", "--state-dir", made["state_dir"], status=1)
    assert refused["errors"][0]["code"] == "plan-changed"
    assert git(stack.checkout, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert statedir.StateDir(made["state_dir"]).read_optional("execution.json") is None


def test_a_swapped_path_before_staging_performs_nothing(stack, capsys):
    made = planned(stack, capsys)
    where = ["--state-dir", made["state_dir"]]
    for _ in range(3):  # fetch-base, create-branch, run-validation
        stack.loop(capsys, "execute", *where, "--one")
    target = stack.checkout / "src" / "app.py"
    replacement = stack.checkout / "src" / "app.py.new"
    replacement.write_text(target.read_text())
    replacement.replace(target)  # same name and bytes, another file (both existed at once: another inode)
    refused = stack.loop(capsys, "execute", *where, "--one", status=1)
    assert refused["errors"][0]["code"] == "path-records-changed"
    assert git(stack.checkout, "diff", "--cached", "--name-only") == ""


@pytest.mark.slow
def test_a_moved_base_before_push_pushes_nothing(stack, capsys):
    made = planned(stack, capsys)
    where = ["--state-dir", made["state_dir"]]
    for _ in range(5):  # up to and including commit
        stack.loop(capsys, "execute", *where, "--one")
    moved = stack.world.commit(OWNER, NAME, "main", {"NEWS": "moved\n"}, "Someone else")
    refused = stack.loop(capsys, "execute", *where, "--one", status=1)
    assert refused["errors"][0]["code"] == "base-moved"
    assert stack.remote_tip(HEAD_BRANCH) is None and stack.remote_tip("main") == moved


@pytest.mark.slow
def test_a_moved_head_branch_on_github_is_never_overwritten(stack, capsys):
    made = planned(stack, capsys)
    where = ["--state-dir", made["state_dir"]]
    for _ in range(5):
        stack.loop(capsys, "execute", *where, "--one")
    theirs = stack.world.commit(OWNER, NAME, HEAD_BRANCH, {"OTHER": "x\n"}, "Someone else's branch")
    refused = stack.loop(capsys, "execute", *where, "--one", status=1)
    assert refused["errors"][0]["code"] == "remote-head-moved"
    assert stack.remote_tip(HEAD_BRANCH) == theirs


@pytest.mark.slow
def test_pr_texts_are_bound_by_their_digests(stack, capsys):
    made = planned(stack, capsys)
    directory = statedir.StateDir(made["state_dir"])
    manifest = directory.read(statedir.INITIAL)["initial_manifest"]
    assert manifest["pr_title_sha256"] == text_digest(TITLE) and manifest["pr_body_sha256"] == text_digest(BODY)
    where = ["--state-dir", made["state_dir"]]
    for _ in range(6):  # through push
        stack.loop(capsys, "execute", *where, "--one")
    directory.write(statedir.INITIAL_TEXTS, {"pr_title": "Another title", "pr_body": BODY})
    refused = stack.loop(capsys, "execute", *where, "--one", status=1)
    assert refused["errors"][0]["code"] == "pr-text-mismatch"
    assert stack.pulls() == []


def _through_create_pr(stack, capsys) -> list[str]:
    made = planned(stack, capsys)
    where = ["--state-dir", made["state_dir"]]
    for _ in range(7):  # fetch-base ... create-pr
        stack.loop(capsys, "execute", *where, "--one")
    return where


@pytest.mark.slow
def test_a_write_whose_answer_is_lost_is_found_by_its_evidence_and_never_resent(stack, capsys):
    where = _through_create_pr(stack, capsys)
    (pull,) = stack.pulls()
    stack.world.truncate("POST", rf"/issues/{pull['number']}/comments$")  # written, answer unreadable
    posted = stack.loop(capsys, "execute", *where, "--one")
    assert posted["performed"] == [{"operation": "request-codex-review", "outcome": "written"}]
    assert len(stack.comments(pull["number"])) == 1


@pytest.mark.slow
def test_a_failed_write_is_not_retried_blindly_and_the_rerun_writes_once(stack, capsys):
    where = _through_create_pr(stack, capsys)
    (pull,) = stack.pulls()
    stack.world.fail("POST", rf"/issues/{pull['number']}/comments$", 502)  # not written
    refused = stack.loop(capsys, "execute", *where, "--one", status=1)
    assert refused["errors"][0]["code"] == "github-write-uncertain"
    assert stack.comments(pull["number"]) == []
    again = stack.loop(capsys, "execute", *where, "--one")
    assert again["performed"] == [{"operation": "request-codex-review", "outcome": "written"}]
    assert len(stack.comments(pull["number"])) == 1


def test_a_reused_pr_is_read_through_the_configured_route(stack, capsys):
    """``init --reuse-pr`` reads the PR's title and body through --https-proxy/--ca-file like every other read.

    api.github.com is reachable only through the simulated front and its CA;
    a client built without the configured route would go elsewhere and fail.
    """
    stack.world.commit(OWNER, NAME, HEAD_BRANCH, {"NOTES.md": "notes\n"}, "Start the fix")
    pull = stack.world.open_pull_request(OWNER, NAME, head=HEAD_BRANCH, title="Reused title", body="Reused body\n")
    stack.git_via_front("-C", str(stack.checkout), "fetch", "-q", "origin")
    git(stack.checkout, "checkout", "-q", "-b", HEAD_BRANCH, f"origin/{HEAD_BRANCH}")  # keeps the uncommitted fix
    arguments = [argument for argument in init_args(stack) if argument != "--create-branch"]
    arguments = arguments[: arguments.index("--title")]
    made = stack.loop(capsys, *arguments, "--reuse-pr", str(pull["number"]))
    texts = statedir.StateDir(made["state_dir"]).read(statedir.INITIAL_TEXTS)
    assert texts == {"pr_title": "Reused title", "pr_body": "Reused body\n"}
    assert "reuse-pr" in made["operations"]
