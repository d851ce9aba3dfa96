"""Helpers for the simulator tests: a World with one repository, and an in-process API caller."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from werkzeug.test import Client

from simulator.app import GitHubApp
from simulator.world import USERS, World

OWNER, NAME = "octo-org", "gadgets"
TOKEN = "ghp_simulatorOwnerToken000000000000000000"
OTHER_TOKEN = "ghp_simulatorReviewerToken0000000000000000"


class Api:
    """Calls the WSGI app in-process: (status, parsed JSON or None, headers)."""

    def __init__(self, world: World, token: str = TOKEN):
        self.world = world
        self.client = Client(GitHubApp(world))
        self.token = token

    def __call__(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any, dict[str, str]]:
        sent = {"Authorization": f"token {token or self.token}", **(headers or {})}
        data = None if body is None else json.dumps(body)
        response = self.client.open(path, method=method, data=data, headers=sent, content_type="application/json")
        raw = response.get_data()
        payload = json.loads(raw) if raw else None
        return response.status_code, payload, dict(response.headers)

    def graphql(
        self, query: str, variables: dict[str, Any] | None = None, *, token: str | None = None
    ) -> dict[str, Any]:
        status, payload, _ = self("POST", "/graphql", {"query": query, "variables": variables or {}}, token=token)
        assert status == 200
        return payload


def make_world(root: Path) -> World:
    world = World(root / "world")
    world.add_token(TOKEN, USERS["loop_owner"]["login"])
    world.add_token(OTHER_TOKEN, USERS["human_reviewer"]["login"])
    world.create_repository(OWNER, NAME, files={"README.md": "# gadgets\n", "src/app.py": "print('helo')\n"})
    return world


def git(cwd: Path, *args: str) -> str:
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Dev",
        "GIT_AUTHOR_EMAIL": "dev@example.invalid",
        "GIT_COMMITTER_NAME": "Dev",
        "GIT_COMMITTER_EMAIL": "dev@example.invalid",
        "GIT_AUTHOR_DATE": "2026-10-01T09:00:00Z",
        "GIT_COMMITTER_DATE": "2026-10-01T09:00:00Z",
    }
    completed = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=environment, check=True)
    return completed.stdout.strip()
