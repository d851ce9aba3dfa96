"""The world the collector and the hands are tested in end to end.

A real git checkout on ``feature/loop`` with an uncommitted fix, its remote
tracking refs matching PR #7 open on the fake GitHub (simulator/fakegithub.py),
a ``gh`` stand-in that fails and leaves a trace when run, an empty automation
registry folder, and the cache and state directories kept under the test's
temporary directory.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from simulator.fakegithub import TOKEN

REPOSITORY = "octo-org/widgets"


def git(repo: Path, *args: str) -> str:
    """Run git in ``repo`` with no user or system configuration and fixed dates."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_DATE": "2026-10-01T09:00:00Z",
        "GIT_COMMITTER_DATE": "2026-10-01T09:00:00Z",
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def build(tmp_path: Path, fake: Any, monkeypatch: Any) -> dict[str, Any]:
    """A checkout on feature/loop with an uncommitted fix; PR #7 open on the fake.

    ``gh`` exits 1 and touches ``<gh>.ran``, so a test can tell whether the
    credential helper was run.
    """
    repo = tmp_path / "checkout"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "loop@example.com")
    git(repo, "config", "user.name", "Loop")
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("print('helo')\n")
    git(repo, "add", "src/app.py")
    git(repo, "commit", "-q", "-m", "base")
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", "feature/loop")
    (repo / "README").write_text("widgets\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-m", "start")
    head0 = git(repo, "rev-parse", "HEAD")
    git(repo, "remote", "add", "origin", f"https://github.com/{REPOSITORY}.git")
    git(repo, "update-ref", "refs/remotes/origin/main", base)
    git(repo, "update-ref", "refs/remotes/origin/feature/loop", head0)
    (repo / "src" / "app.py").write_text("print('hello')\n")
    fake.refs[(REPOSITORY, "main")] = base
    fake.force_push(head0)
    gh = tmp_path / "gh"
    gh.write_text('#!/bin/sh\ntouch "$0.ran"\nexit 1\n')
    gh.chmod(0o755)
    registry = tmp_path / "codex" / "automations"
    registry.mkdir(parents=True)
    monkeypatch.setenv("GH_TOKEN", TOKEN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return {"repo": repo, "base": base, "head0": head0, "gh": gh, "registry": registry, "tmp": tmp_path, "fake": fake}


def change_args(world: dict[str, Any], *, path: str = "src/app.py", validate: bool = True) -> list[str]:
    """The options that name this world's change: ``collect_state.py initial`` and ``loop.py init`` take both.

    ``validate`` adds the one validation command; ``path`` names the planned path.
    """
    names = ["--checkout", str(world["repo"]), "--repository", REPOSITORY, "--base", "main", "--head", "feature/loop"]
    validation = ["--command", json.dumps(["/usr/bin/git", "diff", "--check"])] if validate else []
    return [*names, "--path", path, *validation, "--commit", "--push"]


# This world has no git server behind github.com: loop.py init plans offline here.
OFFLINE = "--no-network-preflight"
