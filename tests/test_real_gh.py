"""A real person's machine: the real gh logged in through hosts.yml, the identity only in ~/.gitconfig.

The GitHub CLI is Debian's (``.ci/run`` installs it when missing); it answers
``gh auth token`` and ``gh auth git-credential`` from ``$GH_CONFIG_DIR/hosts.yml``
for github.com, which the simulator serves behind its HTTPS front, so the
same gh a user has runs here unchanged. It sits at a Homebrew-like path
(a symlink under ``opt/homebrew/bin``), no token variable is set, and the
checkout has no ``user.*`` of its own: each of these failed before.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from act import cli
from tests import executor_stack
from tests.executor_stack import TOKEN, git, init_args

REAL_GH = shutil.which("gh", path="/usr/bin:/bin:/usr/local/bin")
pytestmark = pytest.mark.skipif(
    REAL_GH is None or "simulated" in Path(REAL_GH).read_text(errors="replace")[:200],
    reason="the real GitHub CLI is not installed (apt-get install gh; .ci/run installs it)",
)


def _person(stack: executor_stack.Stack, monkeypatch, *, identity: bool = True, login: bool = True) -> Path:
    """HOME with gh's login and (optionally) a global identity; gh on a Homebrew-like PATH; no repository user.*."""
    home = stack.tmp / "home"
    (home / ".config" / "gh").mkdir(parents=True)
    if login:
        (home / ".config" / "gh" / "hosts.yml").write_text(
            f"github.com:\n    oauth_token: {TOKEN}\n    user: loop-owner\n    git_protocol: https\n"
        )
    if identity:
        (home / ".gitconfig").write_text("[user]\n\tname = Loop Owner\n\temail = loop-owner@example.invalid\n")
    brew = stack.tmp / "opt" / "homebrew" / "bin"
    brew.mkdir(parents=True)
    (brew / "gh").symlink_to(REAL_GH)
    git(stack.checkout, "config", "--unset", "user.name")
    git(stack.checkout, "config", "--unset", "user.email")
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GH_CONFIG_DIR", "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{brew}:/usr/bin:/bin")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")  # this machine's /etc/gitconfig is not the test's
    return brew / "gh"


def _loop(capsys, *args: str, status: int = 0) -> dict:
    code = cli.main(list(args))
    out = capsys.readouterr().out
    assert TOKEN not in out
    result = json.loads(out.splitlines()[0])
    assert code == status, result
    return result


@pytest.fixture
def stack(tmp_path, monkeypatch):
    started = executor_stack.start(tmp_path, monkeypatch)
    yield started
    started.stop()


def _route(stack: executor_stack.Stack) -> list[str]:
    """The route flags only: no --gh (found on PATH), as a person would run init."""
    return [
        "--https-proxy",
        stack.front.proxy_url,
        "--ca-file",
        str(stack.front.ca_file),
        "--registry",
        str(stack.registry),
    ]


def test_init_finds_gh_on_path_uses_its_hosts_yml_login_and_the_global_identity(stack, monkeypatch, capsys):
    _person(stack, monkeypatch)
    made = _loop(capsys, *init_args(stack), *_route(stack), "--format", "json")
    summary = made["approval_summary"]
    assert summary["commit_identity"].startswith("Loop Owner <loop-owner@example.invalid> (from ")
    assert ".gitconfig" in summary["commit_identity"]
    setup = json.loads((Path(made["state_dir"]) / "setup.json").read_text())
    assert setup["gh"].endswith("/opt/homebrew/bin/gh")
    assert setup["gh_config_dir"] == str(stack.tmp / "home" / ".config" / "gh")
    assert setup["https_proxy"] == stack.front.proxy_url

    # The wakeups' commands take no route flag: the state directory carries it.
    executed = _loop(capsys, "execute", "--state-dir", made["state_dir"])
    assert "commit" in executed.get("done", executed.get("operations", [])) or executed["ok"]
    head = stack.remote_tip(executor_stack.HEAD_BRANCH)
    assert head is not None
    author = git(stack.checkout, "log", "-1", "--format=%an <%ae>|%cn <%ce>", head)
    assert author == "Loop Owner <loop-owner@example.invalid>|Loop Owner <loop-owner@example.invalid>"


def test_a_later_flag_naming_another_route_is_refused(stack, monkeypatch, capsys):
    _person(stack, monkeypatch)
    made = _loop(capsys, *init_args(stack), *_route(stack))
    refused = _loop(capsys, "status", "--state-dir", made["state_dir"], "--gh", "/usr/bin/gh", status=1)
    assert refused["errors"][0]["code"] == "route-changed"
    assert refused["errors"][0]["path"] == "/gh"


def test_init_without_an_identity_refuses_before_anything_and_names_the_fix(stack, monkeypatch, capsys):
    _person(stack, monkeypatch, identity=False)
    state = stack.tmp / "loop-state"
    before = git(stack.checkout, "for-each-ref")
    refused = _loop(capsys, *init_args(stack), *_route(stack), "--state-dir", str(state), status=1)
    (error,) = [e for e in refused["errors"] if e["code"] == "commit-identity-missing"]
    assert "git config --global user.email you@example.com" in error["message"]
    assert error["path"] == "/author"
    assert "approval_summary" not in refused
    assert not state.exists() and git(stack.checkout, "for-each-ref") == before


def test_init_with_author_flags_needs_no_git_identity(stack, monkeypatch, capsys):
    _person(stack, monkeypatch, identity=False)
    made = _loop(capsys, *init_args(stack), *_route(stack), "--author-name", "A B", "--author-email", "a@b.invalid")
    assert made["approval_summary"]["commit_identity"] == "A B <a@b.invalid> (from --author-name and --author-email)"


def test_init_without_a_gh_login_refuses_before_anything(stack, monkeypatch, capsys):
    _person(stack, monkeypatch, login=False)
    state = stack.tmp / "loop-state"
    refused = _loop(capsys, *init_args(stack), *_route(stack), "--state-dir", str(state), status=1)
    assert [e["code"] for e in refused["errors"]] == ["gh-login-missing"]
    assert "gh auth login" in refused["errors"][0]["message"]
    assert not state.exists()


def test_the_proxy_and_ca_from_the_environment_reach_git_too(stack, monkeypatch, capsys):
    _person(stack, monkeypatch)
    monkeypatch.setenv("HTTPS_PROXY", stack.front.proxy_url)
    monkeypatch.setenv("SSL_CERT_FILE", str(stack.front.ca_file))
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    made = _loop(capsys, *init_args(stack), "--registry", str(stack.registry))
    setup = json.loads((Path(made["state_dir"]) / "setup.json").read_text())
    assert (setup["https_proxy"], setup["ca_file"]) == (stack.front.proxy_url, str(stack.front.ca_file))


def test_a_gh_writable_by_others_is_refused(stack, monkeypatch, capsys, tmp_path):
    gh = _person(stack, monkeypatch)
    unsafe = tmp_path / "unsafe"
    unsafe.mkdir()
    shutil.copy(REAL_GH, unsafe / "gh")
    os.chmod(unsafe / "gh", 0o777)
    refused = _loop(capsys, *init_args(stack), *_route(stack), "--gh", str(unsafe / "gh"), status=1)
    assert refused["errors"][0]["code"] == "git-credential-helper-unsafe"
    assert gh.exists()


def test_a_gh_the_commands_path_does_not_reach_is_refused_naming_gh_and_works_once_passed_with_it(
    stack, monkeypatch, capsys, tmp_path
):
    """Codex runs each command in a login shell whose PATH may not hold the directory where the person's
    terminal finds gh (references/prerequisites.md): init refuses, naming `--gh PATH`; given `--gh`, it works,
    and the later commands find that gh in the state directory, with the same PATH."""
    _person(stack, monkeypatch)
    installed = tmp_path / "apps" / "gh" / "bin"  # a gh installed outside /usr/bin, as a person may have it
    installed.mkdir(parents=True)
    shutil.copy(REAL_GH, installed / "gh")
    os.chmod(installed / "gh", 0o755)
    login_shell = tmp_path / "login-shell-bin"  # a PATH with git and no gh (/usr/bin holds Debian's gh)
    login_shell.mkdir()
    (login_shell / "git").symlink_to(shutil.which("git", path="/usr/bin:/bin") or "/usr/bin/git")
    monkeypatch.setenv("PATH", str(login_shell))
    state = stack.tmp / "loop-state"
    refused = _loop(capsys, *init_args(stack), *_route(stack), "--state-dir", str(state), status=1)
    [error] = refused["errors"]
    assert (error["code"], error["path"]) == ("gh-not-found", "/gh") and "--gh PATH" in error["message"]
    assert "approval_summary" not in refused and not state.exists()

    made = _loop(capsys, *init_args(stack), *_route(stack), "--gh", str(installed / "gh"), "--format", "json")
    setup = json.loads((Path(made["state_dir"]) / "setup.json").read_text())
    assert setup["gh"] == str(installed / "gh")
    executed = _loop(capsys, "execute", "--state-dir", made["state_dir"])  # no --gh, the same PATH
    assert executed["ok"] and stack.remote_tip(executor_stack.HEAD_BRANCH) is not None  # pushed with that gh
