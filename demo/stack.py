"""The simulated world the demo runs in, reached exactly as the real one is.

A World (GitHub's state, bare git repositories) behind the HTTPS front with its
own CA, git smart HTTP for pushes and clones, the ``gh`` stand-in as git's
credential helper, a Codex automation host on the World's clock, and a user
checkout cloned over https. Nothing is switched into a simulation mode: the
commands only get ``--https-proxy`` and ``--ca-file``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from simulator.app import GitHubApp, may_write
from simulator.automations import AutomationHost
from simulator.clock import SimClock
from simulator.front import API_HOST, GIT_HOST, Front, LoopbackServer
from simulator.gh import install_gh
from simulator.git_http import GitSmartHttp
from simulator.world import World

OWNER, NAME = "octo-org", "gadgets"
REPOSITORY = f"{OWNER}/{NAME}"
# A token of the simulated GitHub only; it never leaves the scratch directory.
TOKEN = "ghp_demoLoopOwnerToken0000000000000000000"
HEAD_BRANCH = "fix/greeting"
CHANGED_FILE = "src/app.py"
FILES = {"README.md": "# gadgets\n", CHANGED_FILE: "print('helo')\n"}


def git(cwd: Path, *args: str) -> str:
    """git with no user or system configuration, so the demo is the same on every machine."""
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    completed = subprocess.run(["git", *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=60)
    if completed.returncode != 0:
        raise RuntimeError(f"git {' '.join(args[:1])} failed: {completed.stderr.strip()}")
    return completed.stdout.strip()


@dataclass
class Stack:
    scratch: Path
    world: World
    front: Front
    servers: list[LoopbackServer]
    gh: Path
    host: AutomationHost
    checkout: Path
    woken: list[Any] = field(default_factory=list)
    repository: str = REPOSITORY  # the checkout's repository on the simulated GitHub
    # A person's machine instead of the rig's: the real gh at a Homebrew-like path, found on PATH and logged in
    # through hosts.yml, and the commit identity only in ~/.gitconfig (``as_a_person``).
    person_bin: Path | None = None

    @property
    def registry(self) -> Path:
        return self.host.root

    def network_flags(self) -> list[str]:
        gh = [] if self.person_bin else ["--gh", str(self.gh)]  # a person's gh is the one on PATH
        return ["--https-proxy", self.front.proxy_url, "--ca-file", str(self.front.ca_file), *gh] + [
            "--registry",
            str(self.registry),
        ]

    def environment(self) -> dict[str, str]:
        """What each command sees: no token in the environment, state and caches inside the scratch directory."""
        return {
            "PATH": os.pathsep.join(
                [*([str(self.person_bin)] if self.person_bin else []), os.environ.get("PATH", "/usr/bin:/bin")]
            ),
            "HOME": str(self.scratch / "home"),
            "XDG_STATE_HOME": str(self.scratch / "state"),
            "XDG_CACHE_HOME": str(self.scratch / "cache"),
            "CODEX_HOME": str(self.host.codex_home),
            "LANG": "C.UTF-8",
        }

    def remote_tip(self, branch: str) -> str | None:
        return self.world.repository(*self.repository.split("/")).tip(branch)

    def pulls(self) -> list[dict[str, Any]]:
        owner, name = self.repository.split("/")
        repository = self.world.repository(owner, name)
        return [self.world.pull_request(owner, name, number) for number in sorted(repository.pulls)]

    def comments(self, number: int) -> list[dict[str, Any]]:
        return list(self.world._issue(self.world.repository(*self.repository.split("/")), number))

    def clone(self, repository: str, checkout: Path) -> None:
        """The person's checkout of ``repository``, cloned over https through the front with ``gh`` as credentials."""
        url = f"https://github.com/{repository}.git"
        git(self.scratch, *self.front.git_route(self.gh), "clone", "-q", url, str(checkout))
        git(checkout, "config", "user.name", "Loop Owner")
        git(checkout, "config", "user.email", "loop-owner@example.invalid")

    def another_repository(self, name: str, checkout: Path) -> Stack:
        """One more repository (with the demo's files) and its checkout, on the same World, front, token and host."""
        self.world.create_repository(OWNER, name, files=dict(FILES))
        self.clone(f"{OWNER}/{name}", checkout)
        return replace(self, checkout=checkout, repository=f"{OWNER}/{name}")

    def stop(self) -> None:
        self.front.stop()
        for server in self.servers:
            server.stop()
        self.world.close()


def start(scratch: Path, clock: SimClock | None = None, *, as_a_person: bool = False) -> Stack:
    """Start the simulated GitHub and clone the user's checkout from it over https.

    ``as_a_person``: set up the machine as a person has it (``person_setup``); it needs the real ``gh``.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "home").mkdir(exist_ok=True)
    world = World(scratch / "world", clock=clock)
    world.add_token(TOKEN, "loop-owner")
    world.create_repository(OWNER, NAME, files=dict(FILES))
    git_app = GitSmartHttp(
        world.git_repository_path,
        TOKEN,
        on_push=world.notice_push,
        may_push=lambda: may_write(world, TOKEN, ("contents",)),
        on_write=world.writing,
    )
    servers = [LoopbackServer(git_app).start(), LoopbackServer(GitHubApp(world)).start()]
    front = Front({GIT_HOST: servers[0].address, API_HOST: servers[1].address}, scratch / "front").start()
    gh = install_gh(scratch / "bin", TOKEN)
    stack = Stack(scratch, world, front, servers, gh, None, scratch / "checkout")  # type: ignore[arg-type]
    stack.host = AutomationHost(
        scratch / "codex", world.clock, on_wakeup=lambda record, now: stack.woken.append((record["id"], now))
    )
    stack.clone(REPOSITORY, stack.checkout)
    if as_a_person:
        person_setup(stack)
    return stack


def person_setup(stack: Stack) -> None:
    """The real gh symlinked at ``opt/homebrew/bin`` and logged in through ``~/.config/gh/hosts.yml`` (no token
    variable), and the identity only in ``~/.gitconfig``: the checkout has no ``user.*`` of its own."""
    real = shutil.which("gh")
    if real is None:
        raise RuntimeError("the person's machine needs the real gh on PATH (Debian: apt-get install gh)")
    home = stack.scratch / "home"
    (home / ".config" / "gh").mkdir(parents=True, exist_ok=True)
    (home / ".config" / "gh" / "hosts.yml").write_text(
        f"github.com:\n    oauth_token: {TOKEN}\n    user: loop-owner\n    git_protocol: https\n", encoding="ascii"
    )
    (home / ".gitconfig").write_text("[user]\n\tname = Loop Owner\n\temail = loop-owner@example.invalid\n", "ascii")
    brew = stack.scratch / "opt" / "homebrew" / "bin"
    brew.mkdir(parents=True, exist_ok=True)
    (brew / "gh").symlink_to(os.path.realpath(real))
    git(stack.checkout, "config", "--unset", "user.name")
    git(stack.checkout, "config", "--unset", "user.email")
    stack.person_bin = brew
