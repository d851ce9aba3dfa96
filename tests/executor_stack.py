"""The simulated GitHub the executor tests and the SKILL.md walk run against, reached like the real one.

A World (stateful GitHub) behind the HTTPS front (its own CA), git smart HTTP
over the World's bare repositories, the gh stand-in as the credential
helper, and a user checkout cloned over https. ``loop.py`` is driven through
its ``main`` with ``--https-proxy`` and ``--ca-file``: nothing is switched
into a simulation mode.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from act import cli
from simulator.app import GitHubApp, may_write
from simulator.front import API_HOST, GIT_HOST, Front, LoopbackServer
from simulator.gh import install_gh
from simulator.git_http import GitSmartHttp
from simulator.world import World

OWNER, NAME = "octo-org", "gadgets"
REPOSITORY = f"{OWNER}/{NAME}"
TOKEN = "ghp_executorLoopOwnerToken00000000000000"
TITLE = "Fix the greeting"
BODY = "The greeting said helo.\n"
HEAD_BRANCH = "fix/greeting"


def git(cwd: Path, *args: str, check: bool = True) -> str:
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    completed = subprocess.run(["git", *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0 or not check, completed.stderr
    return completed.stdout.strip()


@dataclass
class Stack:
    world: World
    front: Front
    gh: Path
    checkout: Path
    tmp: Path
    servers: list[LoopbackServer]
    registry: Path

    def network_flags(self) -> list[str]:
        return [
            "--https-proxy",
            self.front.proxy_url,
            "--ca-file",
            str(self.front.ca_file),
            "--gh",
            str(self.gh),
            "--registry",
            str(self.registry),
        ]

    def loop(self, capsys: Any, *args: str, status: int = 0) -> dict[str, Any]:
        code = cli.main([*args, *self.network_flags()])
        captured = capsys.readouterr()
        lines = captured.out.splitlines()
        assert len(lines) == 1, captured.out + captured.err
        assert TOKEN not in captured.out + captured.err
        result = json.loads(lines[0])
        assert code == status, result
        return result

    def git_via_front(self, *args: str, check: bool = True) -> str:
        return git(self.tmp, *self.front.git_route(self.gh), *args, check=check)

    def files_holding_the_token(self) -> list[str]:
        """Every file the loop could have written (state, caches, registry, checkout) that holds the token's bytes.

        The gh stand-in (``bin/``) and the simulator's own world are the only
        places the token may live: they are GitHub's side, not the loop's.
        """
        places = [self.tmp / "state", self.tmp / "cache", self.registry, self.checkout]
        return sorted(
            str(path)
            for place in places
            for path in place.rglob("*")
            if path.is_file() and not path.is_symlink() and TOKEN.encode() in path.read_bytes()
        )

    def remote_tip(self, branch: str) -> str | None:
        return self.world.repository(OWNER, NAME).tip(branch)

    def pulls(self) -> list[dict[str, Any]]:
        repository = self.world.repository(OWNER, NAME)
        return [self.world.pull_request(OWNER, NAME, number) for number in sorted(repository.pulls)]

    def comments(self, number: int) -> list[dict[str, Any]]:
        return list(self.world._issue(self.world.repository(OWNER, NAME), number))

    def stop(self) -> None:
        self.front.stop()
        for server in self.servers:
            server.stop()
        self.world.close()


def start(tmp_path: Path, monkeypatch: Any) -> Stack:
    world = World(tmp_path / "world")
    world.add_token(TOKEN, "loop-owner")
    world.create_repository(OWNER, NAME, files={"README.md": "# gadgets\n", "src/app.py": "print('helo')\n"})
    git_app = GitSmartHttp(
        world.git_repository_path,
        TOKEN,
        on_push=world.notice_push,
        may_push=lambda: may_write(world, TOKEN, ("contents",)),
    )
    servers = [LoopbackServer(git_app).start(), LoopbackServer(GitHubApp(world)).start()]
    front = Front({GIT_HOST: servers[0].address, API_HOST: servers[1].address}, tmp_path / "front").start()
    gh = install_gh(tmp_path / "bin", TOKEN)
    registry = tmp_path / "codex" / "automations"
    registry.mkdir(parents=True)
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    stack = Stack(world, front, gh, tmp_path / "checkout", tmp_path, servers, registry)
    stack.git_via_front("clone", "-q", f"https://github.com/{REPOSITORY}.git", str(stack.checkout))
    git(stack.checkout, "config", "user.name", "Loop Owner")
    git(stack.checkout, "config", "user.email", "loop-owner@example.invalid")
    (stack.checkout / "src" / "app.py").write_text("print('hello')\n")
    return stack


def init_args(stack: Stack, *extra: str) -> list[str]:
    return [
        "init",
        "--checkout",
        str(stack.checkout),
        "--repository",
        REPOSITORY,
        "--base",
        "main",
        "--head",
        HEAD_BRANCH,
        "--path",
        "src/app.py",
        "--command",
        json.dumps(["/usr/bin/test", "-f", "src/app.py"]),
        "--create-branch",
        "--commit",
        "--push",
        "--mode",
        "autonomous",
        "--title",
        TITLE,
        "--body",
        BODY,
        *extra,
    ]
