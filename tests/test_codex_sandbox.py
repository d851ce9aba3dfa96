"""The hands under Codex's real sandbox (``codex sandbox``), with each policy a user is likely to have.

The Codex CLI is the real one (tests/codex_cli.py); the simulator plays GitHub
on 127.0.0.1 behind its HTTPS front. Every ``loop.py`` runs as Codex's shell
tool runs it: ``codex sandbox -c sandbox_mode=... -- python scripts/loop.py``
in the checkout (the workspace), with a temporary ``HOME`` and ``CODEX_HOME``.
``/tmp`` is taken out of the writable roots (``exclude_slash_tmp``) so the
state root and the checkout's ``.git``, which live under the test's temporary
directory, are as writable as they are under a real home: not at all, unless
named. Each policy ends in success or in the one structured error that names
the setting that fixes it (references/prerequisites.md, "Codex's sandbox").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import executor_stack
from tests.codex_cli import codex_binary

ROOT = Path(__file__).resolve().parent.parent
LOOP = str(ROOT / "scripts" / "loop.py")


@pytest.fixture
def stack(tmp_path, monkeypatch):
    started = executor_stack.start(tmp_path, monkeypatch)
    yield started
    started.stop()


def _environment(stack: executor_stack.Stack) -> dict[str, str]:
    home, codex_home, scratch = stack.tmp / "home", stack.tmp / "codex-home", stack.tmp / "scratch"
    for directory in (home, codex_home, scratch):
        directory.mkdir(exist_ok=True)
    return {
        "PATH": os.environ["PATH"],
        "HOME": str(home),
        "CODEX_HOME": str(codex_home),
        # Codex's workspace-write keeps $TMPDIR writable; and with CODEX_HOME outside it, Codex makes its helper
        # aliases there (it refuses under the temporary directory, and a system bubblewrap needs them).
        "TMPDIR": str(scratch),
        "XDG_STATE_HOME": str(stack.tmp / "state"),
        "XDG_CACHE_HOME": str(stack.tmp / "cache"),
    }


def _policy(mode: str, *, network: bool = False, roots: tuple[Path, ...] = ()) -> list[str]:
    settings = [f'sandbox_mode="{mode}"']
    if mode == "workspace-write":
        settings.append("sandbox_workspace_write.exclude_slash_tmp=true")
        if network:
            settings.append("sandbox_workspace_write.network_access=true")
        if roots:
            settings.append("sandbox_workspace_write.writable_roots=" + json.dumps([str(root) for root in roots]))
    return [part for setting in settings for part in ("-c", setting)]


def _documented(stack: executor_stack.Stack, which: int) -> list[str]:
    """The ``which``-th config.toml of prerequisites.md's "Codex's sandbox", with this test's paths, as the config.

    Written to ``$CODEX_HOME/config.toml``, where a Codex session (``codex exec``, ``codex exec resume``)
    reads all of it. ``codex sandbox`` reads its ``[sandbox_workspace_write]`` table but not its
    ``sandbox_mode`` (it defaults to read-only), so that one key is repeated as ``-c``. The example paths
    become this test's state root and ``.git``; ``exclude_slash_tmp`` keeps /tmp, where the test lives,
    from granting what a home directory would not.
    """
    text = (ROOT / "references" / "prerequisites.md").read_text(encoding="utf-8")
    section = text[text.index("## Codex's sandbox") : text.index("## Validation inside Codex")]
    config = re.findall(r"```toml\n(.*?)```", section, re.S)[which]
    config = config.replace("/home/you/.local/state/github-codex-pr-loop", str(_state_root(stack)))
    config = config.replace("/home/you/src/widgets/.git", str(_git_dir(stack)))
    if "[sandbox_workspace_write]" in config:
        config = config.replace("[sandbox_workspace_write]\n", "[sandbox_workspace_write]\nexclude_slash_tmp = true\n")
    assert "/home/you" not in config
    _environment(stack)
    (stack.tmp / "codex-home" / "config.toml").write_text(config, encoding="utf-8")
    mode = re.search(r'^sandbox_mode = "([a-z-]+)"$', config, re.M)
    assert mode is not None
    return ["-c", f'sandbox_mode="{mode.group(1)}"']


def _session_sees(stack: executor_stack.Stack) -> str:
    """What a Codex session started in the checkout is told of its sandbox (no model call): config.toml's."""
    completed = subprocess.run(
        [codex_binary(), "debug", "prompt-input", "hello"],
        env=_environment(stack),
        cwd=stack.checkout,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return completed.stdout


def _state_root(stack: executor_stack.Stack) -> Path:
    return stack.tmp / "state" / "github-codex-pr-loop"


def _loop(
    stack: executor_stack.Stack, policy: list[str], *args: str, status: int, stderr: list[str] | None = None
) -> dict[str, Any]:
    """One loop.py command under ``codex sandbox``; its one JSON line, the exit status checked."""
    command = [codex_binary(), "sandbox", *policy, "--", sys.executable, LOOP, *args]
    completed = subprocess.run(
        command, env=_environment(stack), cwd=stack.checkout, capture_output=True, text=True, timeout=240, check=False
    )
    lines = completed.stdout.splitlines()
    assert len(lines) == 1, completed.stdout + completed.stderr
    result: dict[str, Any] = json.loads(lines[0])
    if stderr is not None:
        stderr.append(completed.stderr)
    assert completed.returncode == status, (result, completed.stderr)
    return result


def _init(stack: executor_stack.Stack, *extra: str) -> list[str]:
    args = executor_stack.init_args(stack, *extra)
    at = args.index("--command")
    del args[at : at + 2]  # validation commands need a network namespace: tested on their own below
    return [*args, *stack.network_flags()]


def _refusal(result: dict[str, Any]) -> dict[str, Any]:
    assert result["ok"] is False
    (error,) = result["errors"]
    assert error["code"] == "codex-sandbox-refused", error
    assert error["path"] == "/sandbox"
    return error


def _git_dir(stack: executor_stack.Stack) -> Path:
    return stack.checkout / ".git"


def test_read_only_init_refuses_at_once_naming_sandbox_mode_every_root_and_the_network(stack):
    codex_binary()
    result = _loop(stack, _policy("read-only"), *_init(stack), status=1)
    error = _refusal(result)
    needs = {refused["need"] for refused in result["refused"]}
    assert needs == {"temporary directory", "state directory", "git directory", "network"}
    assert "The session runs read-only (sandbox_mode)" in error["message"]
    assert 'sandbox_mode = "workspace-write"' in result["config_toml"]
    assert "network_access = true" in result["config_toml"]
    state_root = stack.tmp / "state" / "github-codex-pr-loop"
    assert f'writable_roots = ["{state_root}", "{_git_dir(stack)}"]' in result["config_toml"]
    assert result["mkdir_first"] == f"mkdir -p {state_root}"  # it does not exist, so Codex would leave it read-only
    assert "codex exec resume" in error["message"] and "config.toml" in error["message"]
    assert not state_root.exists()


def test_workspace_write_defaults_refuse_the_missing_state_root_the_git_dir_and_the_network(stack):
    codex_binary()
    result = _loop(stack, _policy("workspace-write"), *_init(stack), status=1)
    _refusal(result)
    refused = {item["need"]: item for item in result["refused"]}
    assert set(refused) == {"state directory", "git directory", "network"}
    assert refused["git directory"]["path"] == str(_git_dir(stack))
    assert refused["network"]["reason"] == "CODEX_SANDBOX_NETWORK_DISABLED=1"
    assert result["mkdir_first"].startswith("mkdir -p ")
    assert "--add-dir " + str(_git_dir(stack)) in result["codex_flags"]


def test_report_under_workspace_write_defaults_is_refused_naming_the_network_only(stack):
    """report-only reads GitHub and nothing else: the network is its one need, named with its setting."""
    codex_binary()
    result = _loop(stack, _policy("workspace-write"), "report", "--repository", "o/r", "--pr", "1", status=1)
    _refusal(result)
    assert [item["need"] for item in result["refused"]] == ["network"]
    assert "network_access = true" in result["config_toml"]


def _documented_init(stack: executor_stack.Stack) -> tuple[list[str], dict[str, Any]]:
    """prerequisites.md's workspace-write recipe, its `mkdir -p` first, and init under it."""
    _state_root(stack).mkdir(parents=True)
    policy = _documented(stack, 0)
    made = _loop(stack, policy, *_init(stack), status=0)
    assert made["ok"] is True and Path(made["state_dir"]).parent == _state_root(stack)
    return policy, made


def test_workspace_write_with_network_and_the_documented_roots_builds_the_plan(stack):
    codex_binary()
    state_root = _state_root(stack)
    policy, made = _documented_init(stack)
    assert (Path(made["state_dir"]) / "setup.json").is_file()
    seen = _session_sees(stack)  # a session (codex exec, resume, the heartbeat's thread) takes the file whole
    assert "`sandbox_mode` is `workspace-write`" in seen and "Network access is enabled" in seen
    assert f'<entry access=\\"write\\"><path>{state_root}</path>' in seen
    assert f'<entry access=\\"write\\"><path>{_git_dir(stack)}</path>' in seen

    # A resumed session without those settings (`codex exec resume` takes no -s/--add-dir) is read-only:
    # its next command names the same roots, never an internal error.
    resumed = _loop(stack, _policy("read-only"), "next", "--state-dir", made["state_dir"], status=1)
    _refusal(resumed)
    assert str(state_root) in resumed["config_toml"] and str(_git_dir(stack)) in resumed["config_toml"]
    assert resumed["mkdir_first"] is None  # the root exists now
    # Reading needs no write: status answers in the read-only sandbox.
    assert _loop(stack, _policy("read-only"), "status", "--state-dir", made["state_dir"], status=0)["ok"] is True


@pytest.mark.slow
def test_the_documented_roots_carry_the_plan_out_with_progress_on_standard_error(stack):
    codex_binary()
    policy, made = _documented_init(stack)
    # fetch, branch, commit and push write the checkout's .git; the PR and the review request go to GitHub.
    progress: list[str] = []
    went = _loop(stack, policy, "next", "--state-dir", made["state_dir"], status=0, stderr=progress)
    assert went["did"][0]["performed"][:5] == ["fetch-base", "create-branch", "stage-files", "commit", "push"]
    assert stack.remote_tip(executor_stack.HEAD_BRANCH) is not None
    # Long steps say what they do on standard error while standard output stays the one JSON line.
    said = [line for line in progress[0].splitlines() if line.startswith("loop.py: ")]
    assert "loop.py: next: running loop.py execute" in said
    assert any(line.startswith("loop.py: push (") for line in said), said


def test_validation_commands_under_workspace_write_are_refused_naming_danger_full_access(stack):
    codex_binary()
    state_root = stack.tmp / "state" / "github-codex-pr-loop"
    state_root.mkdir(parents=True)
    policy = _policy("workspace-write", network=True, roots=(state_root, _git_dir(stack)))
    args = [*executor_stack.init_args(stack), *stack.network_flags()]
    result = _loop(stack, policy, *args, status=1)
    error = next(error for error in result["errors"] if error["code"] == "isolation-unavailable")
    assert 'sandbox_mode = "danger-full-access"' in error["message"]


def test_danger_full_access_builds_the_plan_with_its_validation_command(stack):
    codex_binary()
    args = [*executor_stack.init_args(stack), *stack.network_flags()]
    made = _loop(stack, _documented(stack, 1), *args, status=0)
    assert made["ok"] is True
    assert "run-validation" in json.dumps(made["operations"])


@pytest.mark.slow
def test_danger_full_access_runs_the_validation_isolated_with_progress_on_standard_error(stack):
    codex_binary()
    args = [*executor_stack.init_args(stack), *stack.network_flags()]
    made = _loop(stack, _documented(stack, 1), *args, status=0)
    progress: list[str] = []
    went = _loop(
        stack, _policy("danger-full-access"), "next", "--state-dir", made["state_dir"], status=0, stderr=progress
    )
    assert "run-validation" in went["did"][0]["performed"]
    assert "loop.py: run-validation: command 1 of 1 (test)" in progress[0].splitlines()


def test_outside_codex_an_unwritable_state_root_is_its_own_error_with_no_codex_advice(stack, capsys, monkeypatch):
    for name in ("CODEX_SANDBOX_NETWORK_DISABLED", "CODEX_SANDBOX", "CODEX_THREAD_ID", "CODEX_MANAGED_BY_NPM"):
        monkeypatch.delenv(name, raising=False)
    blocked = stack.tmp / "blocked"
    blocked.write_text("a file where the state root's parent should be\n")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocked))
    from act import cli

    code = cli.main(_init(stack))
    result = json.loads(capsys.readouterr().out)
    assert code == 1
    (error,) = result["errors"]
    assert error["code"] == "state-dir-unusable" and error["path"] == "/state_dir"
    assert "Codex" not in error["message"] and "writable_roots" not in error["message"]


def test_a_state_file_that_cannot_be_written_is_state_dir_unusable_not_an_os_error(tmp_path):
    from act.core import statedir
    from act.core.errors import ActError

    directory = statedir.StateDir.create(tmp_path / "loop")
    (directory.path / "plans").write_text("a file where the plans directory goes\n")
    with pytest.raises(ActError) as refused:
        directory.write("plans/next.json", {"kind": "x"})
    assert refused.value.code == "state-dir-unusable" and refused.value.path == "/state_dir"
    assert "plans/next.json" in refused.value.message


def test_git_observer_without_a_temporary_directory_is_its_own_code(tmp_path, monkeypatch):
    import tempfile

    from observe.git.observer import GitObserver
    from observe.git.runner import GitObservationError

    repo = tmp_path / "checkout"
    repo.mkdir()
    executor_stack.git(repo, "init", "-q")
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "no-such-directory"))
    with pytest.raises(GitObservationError) as refused:
        GitObserver(str(repo), gh_path="/bin/true")
    assert refused.value.code == "git-temp-dir-unusable"


def test_an_escaped_os_error_names_the_file_and_inside_codex_the_setting():
    import errno

    from act.edge import sandbox

    error = OSError(errno.EROFS, "Read-only file system", "/home/u/.local/state/x")
    outside = sandbox.os_error(error, environ={})
    inside = sandbox.os_error(error, environ={"CODEX_SANDBOX_NETWORK_DISABLED": "1"})
    assert outside.code == inside.code == "filesystem-refused"
    assert "/home/u/.local/state/x" in outside.message and "writable_roots" not in outside.message
    assert "writable_roots" in inside.message and "danger-full-access" in inside.message


def _mount_namespace_available() -> bool:
    try:
        completed = subprocess.run(["unshare", "-rm", "true"], capture_output=True, timeout=30, check=False)
    except OSError:
        return False
    return completed.returncode == 0


@pytest.mark.skipif(not _mount_namespace_available(), reason="no user and mount namespaces here (unshare -rm)")
def test_outside_codex_a_read_only_git_dir_is_refused_before_anything_with_no_codex_advice(stack):
    """The checkout's .git mounted read-only (as a sandbox would leave it): init names it, not git's failure."""
    environment = _environment(stack)  # none of the variables Codex sets
    git_dir = str(_git_dir(stack))
    script = 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"'
    command = ["unshare", "-rm", "sh", "-c", script, "sh", git_dir, sys.executable, LOOP, *_init(stack)]
    completed = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=240, check=False)
    (line,) = completed.stdout.splitlines()
    result = json.loads(line)
    assert completed.returncode == 1, result
    (error,) = result["errors"]
    assert error["code"] == "git-dir-unwritable" and error["path"] == "/checkout"
    assert git_dir in error["message"] and "Read-only file system" in error["message"]
    assert "Codex" not in error["message"]
    assert not _state_root(stack).exists()
