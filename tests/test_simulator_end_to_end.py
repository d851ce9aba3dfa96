"""The simulator's parts plugged together as the demo uses them: the World's API
and bare repositories behind the HTTPS front, real git pushing over it, and
Codex answering on the simulated clock."""

from __future__ import annotations

import os
import ssl
import subprocess
from datetime import timedelta
from pathlib import Path

import httpx2
import pytest

from simulator.app import GitHubApp
from simulator.codex import CodexReviewer
from simulator.front import API_HOST, GIT_HOST, Front, LoopbackServer
from simulator.gh import install_gh
from simulator.git_http import GitSmartHttp
from tests.simulation import NAME, OWNER, TOKEN, make_world


def git(*args: str, cwd: Path) -> str:
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(cwd),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
    }
    completed = subprocess.run(["git", *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.strip()


@pytest.fixture
def stack(tmp_path):
    world = make_world(tmp_path)
    git_app = GitSmartHttp(world.git_repository_path, TOKEN, on_push=world.notice_push)
    servers = {GIT_HOST: LoopbackServer(git_app).start(), API_HOST: LoopbackServer(GitHubApp(world)).start()}
    front = Front({name: server.address for name, server in servers.items()}, tmp_path / "front").start()
    gh = install_gh(tmp_path / "bin", TOKEN)
    yield world, front, gh, tmp_path
    front.stop()
    for server in servers.values():
        server.stop()
    world.close()


def test_a_push_over_https_moves_the_pull_request_and_codex_reviews_the_new_head(stack):
    world, front, gh, tmp_path = stack
    world.commit(OWNER, NAME, "feature/x", {"src/app.py": "print('hello')\n"}, "Fix")
    world.open_pull_request(OWNER, NAME, head="feature/x", title="Fix")
    CodexReviewer(world, ["clean"], delay=timedelta(minutes=2))
    network = [
        *front.git_route(gh),
        "-c",
        "user.name=Dev",
        "-c",
        "user.email=dev@example.invalid",
    ]
    checkout = tmp_path / "checkout"
    git(
        *network,
        "clone",
        "-q",
        "--branch",
        "feature/x",
        f"https://github.com/{OWNER}/{NAME}.git",
        str(checkout),
        cwd=tmp_path,
    )
    (checkout / "NEWS").write_text("greeting fixed\n")
    git("add", "NEWS", cwd=checkout)
    git(*network, "commit", "-qm", "News", cwd=checkout)
    pushed = git("rev-parse", "HEAD", cwd=checkout)

    git(*network, "push", "-q", "origin", "feature/x", cwd=checkout)

    api = httpx2.Client(
        proxy=front.proxy_url,
        verify=ssl.create_default_context(cafile=str(front.ca_file)),
        trust_env=False,
        headers={"Authorization": f"token {TOKEN}"},
        base_url=f"https://{API_HOST}",
    )
    with api:
        assert api.get(f"/repos/{OWNER}/{NAME}/pulls/1").json()["head"]["sha"] == pushed
        request = api.post(f"/repos/{OWNER}/{NAME}/issues/1/comments", json={"body": "@codex review"})
        assert request.status_code == 201
        world.clock.advance(timedelta(minutes=2))
        comments = api.get(f"/repos/{OWNER}/{NAME}/issues/1/comments").json()
    assert comments[-1]["user"]["login"] == "chatgpt-codex-connector[bot]"
    assert f"`{pushed[:10]}`" in comments[-1]["body"]
