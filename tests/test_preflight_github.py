"""The GitHub half of the preflight: what the token may write, and whether drafts exist, known before approval.

Against the executor's stack (the simulated GitHub behind its HTTPS front,
git over https, the gh stand-in): a token lacking a permission the loop
writes with is refused at ``init`` with the permission named, before any
plan, state directory or approval summary exists, and the checkout and
GitHub are exactly as before; ``execute`` checks again before fetch-base; a
private repository of a personal account gets a ready pull request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.executor_stack import HEAD_BRANCH, NAME, OWNER, TOKEN, Stack, git, init_args, start

WRITES = ("POST", "PATCH", "PUT", "DELETE")


@pytest.fixture
def stack(tmp_path, monkeypatch):
    made = start(tmp_path, monkeypatch)
    yield made
    made.stop()


def checkout_state(stack: Stack) -> dict[str, str]:
    """Everything of the checkout a side effect would change: refs, HEAD, index, work tree, config."""
    return {
        "refs": git(stack.checkout, "for-each-ref", "--format=%(refname) %(objectname)"),
        "head": git(stack.checkout, "symbolic-ref", "HEAD") + " " + git(stack.checkout, "rev-parse", "HEAD"),
        "status": git(stack.checkout, "status", "--porcelain=v2", "--untracked-files=all"),
        "index": git(stack.checkout, "ls-files", "--stage"),
        "config": (stack.checkout / ".git" / "config").read_text(),
    }


def github_state(stack: Stack) -> dict[str, Any]:
    repository = stack.world.repository(OWNER, NAME)
    return {
        "refs": repository.bare.git("for-each-ref", "--format=%(refname) %(objectname)"),
        "pulls": dict(repository.pulls),
        "comments": {number: list(items) for number, items in repository.issue_comments.items()},
        # Every write that got past GitHub's checks (a refused probe is answered 403, a permitted one 422).
        "writes": [entry for entry in stack.world.log if entry[0] in WRITES and entry[2] < 300],
    }


def test_a_token_without_pull_requests_write_is_refused_before_any_plan(stack, capsys, tmp_path: Path):
    stack.world.token_permissions[TOKEN] = {
        "contents": "write",
        "issues": "write",
        "metadata": "read",
        "pull_requests": "read",
    }
    checkout_before, github_before = checkout_state(stack), github_state(stack)
    state_dir = tmp_path / "state-of-this-loop"
    refused = stack.loop(capsys, *init_args(stack, "--state-dir", str(state_dir)), status=1)
    (error,) = refused["errors"]
    assert (error["code"], error["path"]) == ("github-permission-missing", "/repository")
    assert "pull_requests: write" in error["message"] and "Pull requests: Read and write" in error["message"]
    assert "contents" not in error["message"].split(";")[0]  # only what is missing is named
    assert "approval_summary" not in refused and "initial_plan_hash" not in refused
    assert not state_dir.exists()
    assert checkout_state(stack) == checkout_before
    assert github_state(stack) == github_before
    assert stack.files_holding_the_token() == []


def test_a_token_without_contents_write_is_refused_naming_contents(stack, capsys):
    stack.world.token_permissions[TOKEN] = {"metadata": "read", "pull_requests": "write", "contents": "read"}
    refused = stack.loop(capsys, *init_args(stack), status=1)
    assert refused["errors"][0]["code"] == "github-permission-missing"
    assert "contents: write" in refused["errors"][0]["message"]


def test_a_classic_token_without_repo_is_refused_on_a_private_repository(stack, capsys):
    stack.world.repository(OWNER, NAME).private = True
    stack.world.repository(OWNER, NAME).owner_plan = "team"
    stack.world.token_scopes[TOKEN] = ["public_repo"]
    refused = stack.loop(capsys, *init_args(stack), status=1)
    (error,) = refused["errors"]
    # A classic token without repo cannot even see a private repository: GitHub answers 404.
    assert error["code"] in ("github-not-found", "github-permission-missing")
    stack.world.repository(OWNER, NAME).private = False
    stack.world.token_scopes[TOKEN] = ["read:org"]
    refused = stack.loop(capsys, *init_args(stack), status=1)
    assert refused["errors"][0]["code"] == "github-permission-missing"
    assert "public_repo (or repo) scope" in refused["errors"][0]["message"]
    stack.world.token_scopes[TOKEN] = ["repo"]
    assert stack.loop(capsys, *init_args(stack))["operations"][0] == "fetch-base"


def test_an_account_without_write_role_is_refused(stack, capsys):
    stack.world.repository(OWNER, NAME).roles["loop-owner"] = "read"
    refused = stack.loop(capsys, *init_args(stack), status=1)
    assert refused["errors"][0]["code"] == "github-permission-missing"
    assert "Write role" in refused["errors"][0]["message"]


def test_execute_checks_again_before_fetch_base(stack, capsys):
    made = stack.loop(capsys, *init_args(stack))
    checkout_before = checkout_state(stack)
    stack.world.token_permissions[TOKEN] = {"contents": "write", "metadata": "read", "pull_requests": "read"}
    refused = stack.loop(capsys, "execute", "--state-dir", made["state_dir"], status=1)
    assert refused["errors"][0]["code"] == "github-permission-missing"
    assert checkout_state(stack) == checkout_before
    assert stack.remote_tip(HEAD_BRANCH) is None and stack.pulls() == []


def test_a_private_personal_repository_gets_a_ready_pull_request(stack, capsys):
    repository = stack.world.repository(OWNER, NAME)
    repository.private = True  # its owner is a personal account on the Free plan
    assert stack.world.users[OWNER]["type"] == "User"
    made = stack.loop(capsys, *init_args(stack))
    assert "ready for review" in made["approval_summary"]["pull_request"]
    result = stack.loop(capsys, "execute", "--state-dir", made["state_dir"])
    assert "create-pr" in [p["operation"] for p in result["performed"]]
    (pull,) = stack.pulls()
    assert pull["draft"] is False


def test_a_public_repository_still_gets_a_draft(stack, capsys):
    made = stack.loop(capsys, *init_args(stack))
    assert made["approval_summary"]["pull_request"] == "create a new pull request"
    stack.loop(capsys, "execute", "--state-dir", made["state_dir"])
    (pull,) = stack.pulls()
    assert pull["draft"] is True


def test_a_refused_write_names_the_permission_githubs_header_names(stack, capsys):
    made = stack.loop(capsys, *init_args(stack))
    where = ["--state-dir", made["state_dir"]]
    for _ in range(6):  # fetch-base ... push: past the preflight
        stack.loop(capsys, "execute", *where, "--one")
    stack.world.token_permissions[TOKEN] = {"contents": "write", "metadata": "read", "pull_requests": "read"}
    refused = stack.loop(capsys, "execute", *where, "--one", status=1)
    (error,) = refused["errors"]
    assert error["code"] == "github-write-refused"
    assert "HTTP 403" in error["message"] and "pull_requests=write" in error["message"]
    assert json.dumps(refused).count(TOKEN) == 0
